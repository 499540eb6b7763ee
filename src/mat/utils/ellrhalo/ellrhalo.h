/* ellrhalo.h - the MPI product's ghost exchange through NCCL (ellrhalo.c), for the binding and the Krylov loops. */
#ifndef PETSCELLR_HALO_H
#define PETSCELLR_HALO_H
#include "../../impls/ellr/ellrimpl.h"
#include "ellr_halo.h"

PETSC_INTERN PetscErrorCode MatELLRHaloMult(Mat, Vec, Vec, Vec, PetscBool *);            /* y = A x (+ z), the exchange overlapped */
PETSC_INTERN PetscErrorCode MatELLRHaloStart(Mat);                                       /* its set-up, started at creation */
PETSC_INTERN PetscErrorCode MatELLRHaloConnect(Mat);                                     /* its peers connected, at assembly */
/* the engine's pieces of an MPI matrix's product with NCCL's exchange, for the Krylov loops' CUDA graphs */
typedef struct {
  ellr_halo               *halo;
  ellr_nccl_comm          *nccl;
  struct ellr_cuda_matrix *diag, *offdiag; /* offdiag NULL: no ghosts */
  double                  *ghosts;
  Mat_ELLR                *be[2];          /* the blocks' records (their product counts) */
  PetscLogDouble           flops;          /* of one product, as AIJ logs it */
  const int               *offrows;        /* the off-diagonal block's rows with entries, increasing (host, the plan's; asked for) */
  PetscInt                 noffrows;
  PetscInt64               pattern_id;     /* with pattern_state: this pattern of the off-diagonal block, never reused */
  PetscObjectState         pattern_state;
} MatELLRHaloDevice;
PETSC_INTERN PetscErrorCode MatELLRHaloLoopGet(Mat, Vec, PetscBool, MatELLRHaloDevice *, PetscBool *);
PETSC_INTERN PetscErrorCode MatELLRCommNCCL(MPI_Comm, ellr_nccl_comm **, PetscBool *); /* its communicator, for reductions */
PETSC_INTERN PetscErrorCode MatELLRCommNCCLStart(MPI_Comm, PetscBool *);                /* its set-up started, ahead of them */
#endif
