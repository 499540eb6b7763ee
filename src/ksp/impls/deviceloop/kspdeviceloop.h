/*
  kspdeviceloop.h - the PETSc side that every Krylov type running its iterations as the passes of cgloop.h shares
  (KSPCGDEVICE in cgdevice.c, KSPBCGSDEVICE in bcgsdevice.c): which loop runs, the diagonal preconditioner, the
  vectors' arrays, the product and PETSc's operations between passes, the host's reading of the recorded norms, the
  host loop and the GPU loop (batches of iterations, replayed as a CUDA graph where the product and preconditioner
  allow).  On several processes the reductions are summed over the ranks by NCCL on the GPU (the communicator the MPI
  product's ghost exchange uses); the graph there holds the MPI product with its NCCL exchange where the operator is
  one of ours, else the passes run around PETSc's product, enqueued one by one.

  kspdevicetype.c wraps the base type's slots around the loop's record.  A method gives an iteration function that
  enqueues one iteration's passes on L->arr (through KSPDeviceLoopPass(), KSPDeviceLoopMult() and
  KSPDeviceLoopReleaseArrays()/KSPDeviceLoopTakeArrays() around PETSc's own operations), and a function turning its
  own stops of the passes into KSP reasons.  Nothing here knows a recurrence.
*/
#ifndef KSPDEVICELOOP_H
#define KSPDEVICELOOP_H
#include <petscellr.h>
#include <petsc/private/kspimpl.h>
#include <petsc/private/pcimpl.h> /* PC matstate: where PETSc records a set-up of the preconditioner */
#include "../../../mat/utils/ellrhalo/ellrhalo.h" /* the binding's private header, and NCCL's communicator */
#include "cgloop.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscdevice_cuda.h>
  #define KSP_DEVICELOOP_CUDA 1
#endif

#define KSP_DEVICELOOP_MAX_VECS  8
#define KSP_DEVICELOOP_MAX_BATCH 64
#define KSP_DEVICELOOP_KEYS      (KSP_DEVICELOOP_MAX_VECS + 6)

typedef enum {
  KSP_DEVICELOOP_PETSC, /* PETSc's own loop of the method */
  KSP_DEVICELOOP_HOST,  /* the passes on host arrays */
  KSP_DEVICELOOP_EAGER, /* the passes on the GPU, on PETSc's stream, with PETSc's product and preconditioner */
  KSP_DEVICELOOP_GRAPH  /* the passes and the product (on several ranks with its exchange) on the GPU, replayed as a CUDA graph */
} KSPDeviceLoopPath;

typedef struct KSPDeviceLoop_ KSPDeviceLoop;
struct KSPDeviceLoop_ {
  /* the base type's slots, wrapped (kspdevicetype.c) */
  PetscErrorCode (*base_solve)(KSP);
  PetscErrorCode (*base_destroy)(KSP);
  PetscErrorCode (*base_view)(KSP, PetscViewer);
  PetscErrorCode (*base_setfromoptions)(KSP, MatELLROptionItems);
  PetscErrorCode (*base_reset)(KSP);

  /* the method's, for the life of the solver */
  const char *name;                                      /* the recurrence in messages: "CG", "BiCGStab" */
  const char *manual, *title, *option;                   /* "KSPCGDEVICE", its options' header, -ksp_..._check_every */
  const char *paths[4];                                  /* what each KSPDeviceLoopPath is called (KSPView) */
  PetscErrorCode (*iterate)(KSPDeviceLoop *);            /* one iteration's passes */
  PetscErrorCode (*stopped)(KSP, const cgloop_state *);  /* the reason for a stop of the method's own kind */
  PetscBool      nan_norm_counts;                        /* a non-finite norm: that iteration counted (KSPCG) or not */
  PetscInt       products;                               /* matrix products per iteration */
  PetscBool      fold_offdiag;                           /* each product is followed by cgloop_cuda_curvature() on its result */
  PetscLogDouble flops_per_row;                          /* the passes' flops per iteration and row (logged by the GPU loop) */
  PetscLogEvent  setup_event;                            /* the GPU loop's one-time work in a solve */
  PetscInt       check_every, batch;
  KSPDeviceLoopPath path;
  Vec               d;          /* the diagonal preconditioner's scaling */
  PetscBool         d_jacobi;   /* d is PCJACOBI's scaling, made by the loop (PETSc's Jacobi may hold none) ... */
  PC                d_pc;       /* ... for this PC (referenced; marked while its Jacobi is the one d was made for) ... */
  PetscObjectId     d_pmat;     /* ... from this preconditioning matrix ... */
  char              d_mark[64]; /* ... (this loop's own mark: several loops may share a PC) ... */
  __typeof__(((PC)0)->matstate) d_matstate; /* ... at the PC's set-up that recorded this state of it */

  /* one solve's */
  KSP                ksp;
  Mat                A;
  cgloop_shape       shape;
  cgloop_state      *st; /* the host passes' state (NULL on the GPU, whose state lives there) */
  PetscInt           nvec;
  Vec                vec[KSP_DEVICELOOP_MAX_VECS];
  PetscScalar       *arr[KSP_DEVICELOOP_MAX_VECS]; /* host or device arrays of vec[], valid while held */
  const PetscScalar *darr;                         /* d's, or NULL */
  PetscBool          held;
  Mat_ELLR          *e;               /* the graph's product on the ELLPACK-R storage, or */
  const int         *rowptr, *colidx; /* aijcusparse's device CSR (32-bit indices) */
  const PetscScalar *vals;
  PetscInt           nrows, ncols, nnz;
#if defined(KSP_DEVICELOOP_CUDA)
  cgloop_cuda     *cu;
  PetscInt         cu_n;
  ellr_nccl_comm  *nccl; /* on several processes: the reductions' all-reduce (the communicator's, not owned) */
  MatELLRHaloDevice halo; /* on several processes, the graph's product: the blocks' storage and NCCL's exchange */
  double          *yoff;         /* ... kept apart there (cgloop_cuda_set_apart()), or NULL */
  PetscInt64       yoff_id;      /* the off-diagonal pattern yoff's rows are (MatELLRHaloDevice's pattern_id, _state) */
  PetscObjectState yoff_state;
  const void      *key[KSP_DEVICELOOP_KEYS]; /* what the graph was captured with: the arrays, d, the product's storage */
  PetscObjectId    key_id; /* ... and the operator it was captured for (its storage's address may come again) */
  PetscObjectState key_state;
  PetscInt         key_batch;
#endif
};

/* kspdevicetype.c: the base type (just made by its create function) wrapped, with a zeroed record of size bytes
   whose first member is the loop; the method then fills in its part of the loop */
PETSC_INTERN PetscErrorCode KSPDeviceLoopWrap(KSP, size_t size, PetscErrorCode (*solve)(KSP), KSPDeviceLoop **);
PETSC_INTERN PetscErrorCode KSPDeviceLoopGet(KSP, KSPDeviceLoop **);
/* the state's fields every method sets alike: the limits and PETSc's default convergence test */
PETSC_INTERN PetscErrorCode KSPDeviceLoopStateInit(KSP, cgloop_state *);

PETSC_INTERN PetscErrorCode KSPDeviceLoopDestroy(KSPDeviceLoop *);
/* at KSPSetFromOptions(): NCCL's set-up started where solves on several processes will use it (CUDA vectors) */
PETSC_INTERN PetscErrorCode KSPDeviceLoopStartNCCL(KSP);
PETSC_INTERN PetscErrorCode KSPDeviceLoopPCKind(KSP, Mat, cgloop_pc *);
/* the checks every method shares, then the method's own reason for PETSc's loop (own: NULL where it has none), then,
   on several processes, NCCL (whose set-up this may start); *why is the reason PETSc's loop runs, or NULL (then L->path
   is set) */
PETSC_INTERN PetscErrorCode KSPDeviceLoopChoosePath(KSPDeviceLoop *, KSP, Mat, cgloop_pc, const char *own, const char **why);
/* L->d for CGLOOP_PC_DIAGONAL, so that z = d .* r is PCApply()'s z (R gives the layout, W is a work vector) */
PETSC_INTERN PetscErrorCode KSPDeviceLoopDiagonal(KSPDeviceLoop *, KSP, Vec R, Vec W);
/* runs the iterations from *st0 (L->ksp, A, shape, vec, nvec set) until the solve is over */
PETSC_INTERN PetscErrorCode KSPDeviceLoopRun(KSPDeviceLoop *, cgloop_state *st0);
PETSC_INTERN PetscErrorCode KSPDeviceLoopView(KSPDeviceLoop *, PetscViewer);
/* the preconditioner's failure as every process sees it (one may flag it alone), as KSPCheckNorm(); collective */
PETSC_INTERN PetscErrorCode KSPDeviceLoopPCFailedReason(KSP, PCFailedReason *);

/* inside an iteration: PETSc's operations on L->vec need the arrays handed back, then taken again (same addresses) */
PETSC_INTERN PetscErrorCode KSPDeviceLoopReleaseArrays(KSPDeviceLoop *);
PETSC_INTERN PetscErrorCode KSPDeviceLoopTakeArrays(KSPDeviceLoop *);
/* vec[out] = A vec[in]: the graph's product, or PETSc's (skipped on the host once the passes stopped) */
PETSC_INTERN PetscErrorCode KSPDeviceLoopMult(KSPDeviceLoop *, PetscInt in, PetscInt out);
/* whether PETSc's operations between passes are to run (not once the host passes stopped) */
PETSC_INTERN PetscBool KSPDeviceLoopLive(KSPDeviceLoop *);

#if defined(KSP_DEVICELOOP_CUDA)
  /* a GPU error is this process's own (PETSC_COMM_SELF); on several ranks the others may then wait in NCCL until the
     launcher ends them, as with any error between collectives */
  #define KSPDeviceLoopCheckCUDA(ksp, call, what) \
    do { \
      int rc_ = (call); \
      PetscCheck(!rc_, PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: %s%s%s", what, cgloop_cuda_error(rc_), rc_ == CGLOOP_REDUCE_FAILED ? ": " : "", rc_ == CGLOOP_REDUCE_FAILED ? ellr_last_error() : ""); \
    } while (0)
  /* a pass on the host's arrays and state, or on the GPU's */
  #define KSPDeviceLoopPass(L, host_call, cuda_call, what) \
    do { \
      if ((L)->path == KSP_DEVICELOOP_HOST) host_call; \
      else KSPDeviceLoopCheckCUDA((L)->ksp, cuda_call, what); \
    } while (0)
#else
  #define KSPDeviceLoopPass(L, host_call, cuda_call, what) \
    do { \
      host_call; \
    } while (0)
#endif
#endif
