/*
  cgdevice.c - KSPCGDEVICE: PETSc's KSPCG with its iterations run by the passes of cgloop.h.

  The solver is a genuine KSPCG (made by KSPCreate_CG, so KSPCGSetType() and the rest work) whose solve, view,
  set-from-options and destroy slots are wrapped; its own data hangs on the KSP as one composed container, removed at
  destroy.  The start of a solve (residual, first norm, convergence test at iteration 0, first z'r) is KSPCG's, made of
  PETSc's own vector operations; the iterations then run as passes on the GPU (or the host) and the host replays the
  recorded norms through KSPLogResidualHistory(), KSPMonitor() and the convergence test in order.
*/
#include <petscellr.h>
#include <petsc/private/kspimpl.h>
#include "../../../mat/impls/ellr/ellrimpl.h"
#include "cgloop.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscdevice_cuda.h>
  #define KSP_CGDEVICE_CUDA 1
#endif

PETSC_EXTERN PetscErrorCode KSPCreate_CG(KSP);

#define KSP_CGDEVICE_KEY "KSPCGDevice"
static PetscLogEvent KSP_CGDeviceSetUp; /* the GPU loop's one-time work in a solve: context, first iterations, capture */
#define KSP_CGDEVICE_MAX_BATCH 64

typedef enum {
  CGDEVICE_PATH_KSPCG, /* KSPCG's own loop */
  CGDEVICE_PATH_HOST,  /* the passes on host arrays */
  CGDEVICE_PATH_EAGER, /* the passes on the GPU, on PETSc's stream, with PETSc's product and preconditioner */
  CGDEVICE_PATH_GRAPH  /* the passes and the product on the GPU, replayed as a CUDA graph */
} KSPCGDevicePath;
static const char *const KSPCGDevicePaths[] = {"KSPCG's loop", "host passes", "GPU passes", "GPU passes in a CUDA graph"};

typedef struct {
  PetscErrorCode (*cg_solve)(KSP);
  PetscErrorCode (*cg_destroy)(KSP);
  PetscErrorCode (*cg_view)(KSP, PetscViewer);
  PetscErrorCode (*cg_setfromoptions)(KSP, MatELLROptionItems);
  PetscErrorCode (*cg_setradius)(KSP, PetscReal);
  PetscErrorCode (*cg_setobjective)(KSP, PetscReal);
  PetscErrorCode (*cg_singlereduction)(KSP, PetscBool);
  PetscErrorCode (*cg_reset)(KSP);
  PetscBool       single; /* KSPCGUseSingleReduction(): KSPCG's single-reduction loop */
  PetscBool       radius, objective; /* a trust-region radius (nonzero) or an objective target (negative) is on: KSPCG's loop */
  PetscInt        check_every, batch;
  KSPCGDevicePath path;
  Vec             d; /* the diagonal preconditioner's scaling, B applied to ones */
#if defined(KSP_CGDEVICE_CUDA)
  cgloop_cuda     *cu;
  PetscInt         cu_n;
  const void      *key[6]; /* what the graph was captured with: x, r, p, w, d, the product's storage */
  PetscObjectState key_state;
  PetscInt         key_batch;
#endif
} KSP_CGDevice;

/* the container's destroy: given the pointer (PETSc < 3.23) or its address */
static PetscErrorCode KSPCGDeviceDataDestroy(void *ptr)
{
#if PETSC_VERSION_LT(3, 23, 0)
  KSP_CGDevice *c = (KSP_CGDevice *)ptr;
#else
  KSP_CGDevice *c = *(KSP_CGDevice **)ptr;
#endif

  PetscFunctionBegin;
  PetscCall(VecDestroy(&c->d));
#if defined(KSP_CGDEVICE_CUDA)
  if (c->cu) PetscCheck(!cgloop_cuda_destroy(c->cu), PETSC_COMM_SELF, PETSC_ERR_GPU, "Releasing the CG loop's GPU resources failed");
#endif
  PetscCall(PetscFree(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGDeviceGetData(KSP ksp, KSP_CGDevice **c)
{
  PetscContainer container;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)ksp, KSP_CGDEVICE_KEY, (PetscObject *)&container));
  PetscCheck(container, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "A KSPCGDEVICE without its data");
  PetscCall(PetscContainerGetPointer(container, (void **)c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- which loop runs */

static PetscErrorCode KSPCGDeviceVecOnGPU(Vec v, PetscBool *gpu)
{
  PetscFunctionBegin;
  *gpu = PETSC_FALSE;
#if defined(KSP_CGDEVICE_CUDA)
  {
    PetscBool bound = PETSC_FALSE;
    PetscCall(PetscObjectTypeCompare((PetscObject)v, VECSEQCUDA, gpu));
    if (*gpu) PetscCall(VecBoundToCPU(v, &bound));
    if (bound) *gpu = PETSC_FALSE;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the preconditioner as the passes see it: none, a diagonal, or the caller's */
static PetscErrorCode KSPCGDevicePCKind(KSP ksp, Mat A, cgloop_pc *kind)
{
  MatNullSpace nsp = NULL;
  PetscBool    none, jacobi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &jacobi));
  PetscCall(MatGetNullSpace(A, &nsp)); /* KSP_PCApply() removes it from z */
  *kind = nsp ? CGLOOP_PC_GENERAL : (none ? CGLOOP_PC_NONE : (jacobi ? CGLOOP_PC_DIAGONAL : CGLOOP_PC_GENERAL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGDeviceChoosePath(KSP ksp, KSP_CGDevice *c, Mat A, cgloop_pc pc, const char **why)
{
  PetscMPIInt size;
  PetscBool   gpu;

  PetscFunctionBegin;
  *why    = NULL;
  c->path = CGDEVICE_PATH_KSPCG;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  if (size > 1) *why = "several processes (the reductions are MPI's)";
  else if (c->radius || c->objective) *why = "a trust-region radius or an objective target is set";
  else if (c->single) *why = "the single-reduction variant is asked for (KSPCGUseSingleReduction())";
  else if (ksp->calc_sings) *why = "extreme singular values are estimated";
  else if (ksp->transpose_solve) *why = "a transpose solve";
  else if (ksp->chknorm >= 0) *why = "norms checked only after a number of iterations";
  else if (ksp->pc_side != PC_LEFT) *why = "preconditioning is not on the left";
  if (*why) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPCGDeviceVecOnGPU(ksp->vec_sol, &gpu));
  c->path = gpu ? CGDEVICE_PATH_EAGER : CGDEVICE_PATH_HOST;
#if defined(KSP_CGDEVICE_CUDA)
  if (gpu && pc != CGLOOP_PC_GENERAL) {
    Mat_ELLR *e = NULL;
    PetscBool cusparse;

    PetscCall(MatELLRGetData(A, &e));
    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &cusparse));
    /* the product the graph holds: the storage's kernel, or cuSPARSE on aijcusparse's own device CSR */
    if (e && !e->mpi) {
      PetscCall(MatELLRSeqPrepare(A, e, PETSC_FALSE));
      if (e->backend == MAT_ELLR_BACKEND_CUDA && !MatELLRBoundToCPU(A) && e->dev) c->path = CGDEVICE_PATH_GRAPH;
    } else if (!e && cusparse && !MatELLRBoundToCPU(A) && sizeof(PetscInt) == sizeof(int)) c->path = CGDEVICE_PATH_GRAPH;
  }
#else
  (void)pc;
  (void)A;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the host's reading of the recorded norms */

/* Replays iterations done+1 .. st->it through the history, the monitors and the convergence test, then turns a stop
   of the passes into KSPCG's reason.  *finished when the solve is over. */
static PetscErrorCode KSPCGDeviceDigest(KSP ksp, const cgloop_state *st, PetscInt *done, PetscBool *finished)
{
  PetscFunctionBegin;
  *finished = PETSC_FALSE;
  for (PetscInt j = *done + 1; j <= (PetscInt)st->it; j++) {
    const PetscReal dp = (PetscReal)st->hist[(j - 1) % CGLOOP_RING];

    *done    = j;
    ksp->its = j;
    if (PetscIsInfOrNanReal(dp)) { /* as KSPCheckNorm() */
      PCFailedReason pcreason;

      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve has not converged due to Nan or Inf norm");
      PetscCall(PCGetFailedReason(ksp->pc, &pcreason));
      ksp->reason = pcreason ? KSP_DIVERGED_PC_FAILED : KSP_DIVERGED_NANORINF;
      *finished   = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    ksp->rnorm = dp;
    PetscCall(KSPLogResidualHistory(ksp, dp));
    PetscCall(KSPMonitor(ksp, j, dp));
    PetscCall((*ksp->converged)(ksp, j, dp, &ksp->reason, ksp->cnvP));
    if (ksp->reason) {
      *finished = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  switch ((cgloop_stop)st->stop) {
  case CGLOOP_RUNNING:
    PetscFunctionReturn(PETSC_SUCCESS);
  case CGLOOP_STOP_MAXIT: /* the iterations done: KSPCG's do-while loop runs one even with max_it 0 */
    ksp->its    = (PetscInt)st->it;
    ksp->reason = KSP_DIVERGED_ITS;
    break;
  case CGLOOP_INDEF_MAT:
    ksp->its = (PetscInt)st->stop_it + 1;
#if PETSC_VERSION_GE(3, 21, 0)
    if (ksp->converged_neg_curve) {
      PetscCall(PetscInfo(ksp, "converged due to negative curvature\n"));
      ksp->reason = KSP_CONVERGED_NEG_CURVE;
    } else
#endif
    {
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Diverged due to indefinite matrix");
      PetscCall(PetscInfo(ksp, "diverging due to indefinite matrix\n"));
      ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
    }
    break;
  case CGLOOP_INDEF_PC:
    ksp->its = (PetscInt)st->stop_it + 1;
    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Diverged due to indefinite preconditioner, beta %g, betaold %g", st->beta, st->betaold);
    PetscCall(PetscInfo(ksp, "diverging due to indefinite preconditioner\n"));
    ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
    break;
  case CGLOOP_BETA_ZERO:
    ksp->its = (PetscInt)st->stop_it + 1;
    PetscCall(PetscInfo(ksp, "converged due to beta = 0\n"));
    ksp->reason = KSP_CONVERGED_ATOL;
    break;
  case CGLOOP_NAN_CURVATURE: /* KSPCG counts the iteration whose p'Ap is not finite */
    ksp->its = (PetscInt)st->stop_it + 1;
    /* fall through */
  case CGLOOP_NAN_DOT: {
    PCFailedReason pcreason;

    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve has not converged due to Nan or Inf inner product");
    PetscCall(PCGetFailedReason(ksp->pc, &pcreason));
    ksp->reason = pcreason ? KSP_DIVERGED_PC_FAILED : KSP_DIVERGED_NANORINF;
  } break;
  case CGLOOP_STOP_TEST: /* the GPU's copy of the test stopped where the host's did not: never expected */
    SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "The GPU's convergence test stopped at iteration %lld, the host's did not", st->stop_it);
  }
  *finished = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the passes on host arrays */

typedef struct {
  Vec X, R, P, W, Z, D;
} KSPCGDeviceVecs;

static PetscErrorCode KSPCGDeviceHostLoop(KSP ksp, Mat A, const cgloop_shape *shape, cgloop_state *st, const KSPCGDeviceVecs *v)
{
  PetscInt  done = 0;
  PetscBool finished = PETSC_FALSE;

  PetscFunctionBegin;
  while (!finished) {
    const PetscScalar *r, *d = NULL, *z = NULL, *p, *w;
    PetscScalar       *pw, *x, *rw;

    PetscCall(VecGetArrayRead(v->R, &r));
    if (v->D) PetscCall(VecGetArrayRead(v->D, &d));
    if (shape->pc == CGLOOP_PC_GENERAL) PetscCall(VecGetArrayRead(v->Z, &z));
    PetscCall(VecGetArray(v->P, &pw));
    cgloop_host_direction(shape, st, r, d, z, pw);
    PetscCall(VecRestoreArray(v->P, &pw));
    if (shape->pc == CGLOOP_PC_GENERAL) PetscCall(VecRestoreArrayRead(v->Z, &z));
    PetscCall(VecRestoreArrayRead(v->R, &r));
    if (!st->stop) PetscCall(KSP_MatMult(ksp, A, v->P, v->W));
    PetscCall(VecGetArrayRead(v->P, &p));
    PetscCall(VecGetArrayRead(v->W, &w));
    cgloop_host_curvature(shape, st, p, w);
    PetscCall(VecGetArray(v->X, &x));
    PetscCall(VecGetArray(v->R, &rw));
    cgloop_host_step(shape, st, x, rw, p, w, d);
    PetscCall(VecRestoreArray(v->R, &rw));
    PetscCall(VecRestoreArray(v->X, &x));
    PetscCall(VecRestoreArrayRead(v->W, &w));
    PetscCall(VecRestoreArrayRead(v->P, &p));
    if (v->D) PetscCall(VecRestoreArrayRead(v->D, &d));
    if (shape->pc == CGLOOP_PC_GENERAL && !st->stop) {
      PetscCall(KSP_PCApply(ksp, v->R, v->Z));
      PetscCall(VecGetArrayRead(v->R, &r));
      PetscCall(VecGetArrayRead(v->Z, &z));
      cgloop_host_close(shape, st, r, z);
      PetscCall(VecRestoreArrayRead(v->Z, &z));
      PetscCall(VecRestoreArrayRead(v->R, &r));
    }
    PetscCall(KSPCGDeviceDigest(ksp, st, &done, &finished));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the passes on the GPU */
#if defined(KSP_CGDEVICE_CUDA)
  #define KSPCGDeviceCheckCUDA(ksp, call, what) \
    do { \
      int rc_ = (call); \
      PetscCheck(!rc_, PetscObjectComm((PetscObject)(ksp)), PETSC_ERR_GPU, "%s: %s", what, cgloop_cuda_error(rc_)); \
    } while (0)

typedef struct {
  PetscScalar       *x, *r, *p, *w, *z;
  const PetscScalar *d;
  Mat_ELLR          *e;                 /* the product on the ELLPACK-R storage, or */
  const int         *rowptr, *colidx;   /* aijcusparse's CSR (32-bit indices) */
  const PetscScalar *vals;
  PetscInt           nrows, ncols, nnz;
} KSPCGDeviceArrays;

static PetscErrorCode KSPCGDeviceGPUArrays(KSP, Mat, KSP_CGDevice *, const KSPCGDeviceVecs *, PetscBool, KSPCGDeviceArrays *);

/* One iteration's passes on the context's stream (GRAPH: the product too) or PETSc's (EAGER: PETSc's product and
   preconditioner, which may work on the host: the vectors are handed back to PETSc around them, so that each sees
   and leaves current values; the device arrays keep their addresses). */
static PetscErrorCode KSPCGDeviceEnqueue(KSP ksp, KSP_CGDevice *c, Mat A, const cgloop_shape *shape, KSPCGDeviceArrays *a, const KSPCGDeviceVecs *v)
{
  PetscFunctionBegin;
  KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_direction(c->cu, a->r, a->d, a->z, a->p), "The CG direction pass");
  if (c->path == CGDEVICE_PATH_GRAPH) {
    if (a->e) PetscCall(MatELLRCheckStatus(ellr_cuda_mult(a->e->dev, a->p, NULL, a->w, 0, cgloop_cuda_stream(c->cu)), "The ELLPACK-R product of the CG loop"));
    else KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_csr_product(c->cu, (int)a->nrows, (int)a->ncols, (int)a->nnz, a->rowptr, a->colidx, a->vals, a->p, a->w), "The cuSPARSE product");
  } else {
    PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_FALSE, a));
    PetscCall(KSP_MatMult(ksp, A, v->P, v->W));
    PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_TRUE, a));
  }
  KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_curvature(c->cu, a->p, a->w), "The CG curvature pass");
  KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_step(c->cu, a->x, a->r, a->p, a->w, a->d), "The CG step pass");
  if (shape->pc == CGLOOP_PC_GENERAL) {
    PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_FALSE, a));
    PetscCall(KSP_PCApply(ksp, v->R, v->Z));
    PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_TRUE, a));
    KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_close(c->cu, a->r, a->z), "The CG closing pass");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGDeviceGPUArrays(KSP ksp, Mat A, KSP_CGDevice *c, const KSPCGDeviceVecs *v, PetscBool get, KSPCGDeviceArrays *a)
{
  PetscFunctionBegin;
  (void)ksp;
  if (get) {
    PetscCall(PetscMemzero(a, sizeof(*a)));
    PetscCall(VecCUDAGetArray(v->X, &a->x));
    PetscCall(VecCUDAGetArray(v->R, &a->r));
    PetscCall(VecCUDAGetArray(v->P, &a->p));
    PetscCall(VecCUDAGetArray(v->Z, &a->z));
    a->w = a->z;
    if (v->D) PetscCall(VecCUDAGetArrayRead(v->D, &a->d));
    if (c->path == CGDEVICE_PATH_GRAPH) {
      PetscCall(MatELLRGetData(A, &a->e));
      if (!a->e) {
        const PetscInt *i, *j;
        MatInfo         info;

        PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &i, &j));
        PetscCall(MatSeqAIJCUSPARSEGetArrayRead(A, &a->vals));
        PetscCall(MatGetSize(A, &a->nrows, &a->ncols));
        PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
        a->nnz    = (PetscInt)info.nz_used;
        a->rowptr = (const int *)i;
        a->colidx = (const int *)j;
      }
    }
  } else {
    if (c->path == CGDEVICE_PATH_GRAPH && !a->e) {
      const PetscInt *i = (const PetscInt *)a->rowptr, *j = (const PetscInt *)a->colidx;
      PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &a->vals));
      PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &i, &j));
    }
    if (v->D) PetscCall(VecCUDARestoreArrayRead(v->D, &a->d));
    PetscCall(VecCUDARestoreArray(v->Z, &a->z));
    PetscCall(VecCUDARestoreArray(v->P, &a->p));
    PetscCall(VecCUDARestoreArray(v->R, &a->r));
    PetscCall(VecCUDARestoreArray(v->X, &a->x));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

#if defined(KSP_CGDEVICE_CUDA)
/* The iterations on the GPU: the first one enqueued directly (it sizes cuSPARSE's buffer and times an iteration), the
   rest in batches of c->batch, as a replayed graph (GRAPH) or enqueued again (EAGER).  With PETSc's own convergence
   test mirrored on the GPU, the next batch is enqueued before the host reads the norms of the current one: a batch
   past the stopping iteration does nothing. */
static PetscErrorCode KSPCGDeviceGPULoop(KSP ksp, KSP_CGDevice *c, Mat A, const cgloop_shape *shape, const cgloop_state *st0, const KSPCGDeviceVecs *v)
{
  KSPCGDeviceArrays   a;
  const cgloop_state *st;
  void               *petsc_stream = (void *)PetscDefaultCudaStream;
  PetscInt            done = 0, inflight = 0, slot = 0, depth;
  PetscBool           finished = PETSC_FALSE, graph = (PetscBool)(c->path == CGDEVICE_PATH_GRAPH);
  double              t_iter = 0.0;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(KSP_CGDeviceSetUp, ksp, 0, 0, 0));
  if (c->cu && c->cu_n != shape->n) {
    KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_destroy(c->cu), "Releasing the CG loop's GPU resources");
    c->cu = NULL;
  }
  if (!c->cu) {
    KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_create(shape, &c->cu), "Creating the CG loop's GPU resources");
    c->cu_n = shape->n;
  }
  KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_set_shape(c->cu, shape, graph ? NULL : petsc_stream, !graph), "Setting the CG loop's stream");
  PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_TRUE, &a));
  if (graph) KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_wait_for(c->cu, petsc_stream), "Ordering the CG loop after PETSc's stream");
  KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_set_state(c->cu, st0), "Copying the CG state to the GPU");
  /* two iterations one at a time: the first warms up (cuSPARSE's buffer, lazily loaded kernels), the second is timed */
  for (PetscInt k = 0; k < 2 && !finished; k++) {
    if (k) KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_mark(c->cu, 0), "Timing an iteration");
    PetscCall(KSPCGDeviceEnqueue(ksp, c, A, shape, &a, v));
    if (k) KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_mark(c->cu, 1), "Timing an iteration");
    KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_state_fetch(c->cu, 0), "Fetching the CG state");
    KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_state_wait(c->cu, 0, &st), "Fetching the CG state");
    if (k) KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_elapsed(c->cu, &t_iter), "Timing an iteration");
    if (ksp->numbermonitors) PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_FALSE, &a)); /* monitors see x and r */
    PetscCall(KSPCGDeviceDigest(ksp, st, &done, &finished));
    if (ksp->numbermonitors) PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_TRUE, &a));
  }
  /* the batch: iterations worth about 0.25 ms of GPU time, so that the host's look and the graph launch stay a small
     part of the batch; one when a monitor looks at every iteration */
  c->batch = c->check_every > 0 ? c->check_every : (PetscInt)PetscCeilReal(2.5e-4 / PetscMax(t_iter, 1e-6));
  /* one when the host must see each iterate: a monitor (it may read x and r), or a convergence test the GPU cannot
     mirror (x must be the iterate the test accepted) */
  if ((ksp->numbermonitors || !st0->test_tol) && c->check_every <= 0) c->batch = 1;
  c->batch = PetscMax(1, PetscMin(c->batch, KSP_CGDEVICE_MAX_BATCH));
  /* a batch enqueued ahead only where nothing on the host reads the vectors between batches */
  depth    = st0->test_tol && !ksp->numbermonitors ? 2 : 1;
  if (!finished && graph) {
    const void      *key[6] = {a.x, a.r, a.p, a.w, a.d, a.e ? (const void *)a.e->dev : (const void *)a.vals};
    PetscObjectState state;
    PetscBool        same = PETSC_TRUE;

    PetscCall(PetscObjectStateGet((PetscObject)A, &state));
    for (PetscInt k = 0; k < 6; k++) same = (PetscBool)(same && key[k] == c->key[k]);
    /* a graph holds pointers and the storage it was captured with: captured again when any changed */
    if (!cgloop_cuda_has_graph(c->cu) || !same || state != c->key_state || c->batch != c->key_batch) {
      int rc = cgloop_cuda_capture_begin(c->cu);
      for (PetscInt k = 0; !rc && k < c->batch; k++) {
        PetscErrorCode ierr = KSPCGDeviceEnqueue(ksp, c, A, shape, &a, v);

        if (ierr) { /* never leave the stream capturing */
          (void)cgloop_cuda_capture_end(c->cu);
          (void)cgloop_cuda_drop_graph(c->cu);
          PetscCall(ierr);
        }
      }
      if (!rc) rc = cgloop_cuda_capture_end(c->cu);
      if (rc) {
        PetscCall(PetscInfo(ksp, "The CG iterations could not be captured as a CUDA graph (%s): they are enqueued one by one\n", cgloop_cuda_error(rc)));
        graph = PETSC_FALSE;
      } else {
        PetscCall(PetscArraycpy(c->key, key, 6));
        c->key_state = state;
        c->key_batch = c->batch;
      }
    }
  }
  PetscCall(PetscLogEventEnd(KSP_CGDeviceSetUp, ksp, 0, 0, 0));
  PetscCall(PetscInfo(ksp, "%s, %" PetscInt_FMT " iterations between two looks of the host (one iteration: %g ms on the GPU)\n", graph ? "CUDA graph" : "passes enqueued one by one", c->batch, 1e3 * t_iter));
  while (!finished || inflight) {
    if (!finished && inflight < depth) {
      if (graph) KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_launch(c->cu), "Launching the CG graph");
      else
        for (PetscInt k = 0; k < c->batch; k++) PetscCall(KSPCGDeviceEnqueue(ksp, c, A, shape, &a, v));
      KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_state_fetch(c->cu, (int)((slot + inflight) % 2)), "Fetching the CG state");
      inflight++;
      continue;
    }
    KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_state_wait(c->cu, (int)slot, &st), "Fetching the CG state");
    slot = (slot + 1) % 2;
    inflight--;
    if (finished) continue; /* a batch enqueued ahead: done nothing past the stop */
    if (ksp->numbermonitors) PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_FALSE, &a));
    PetscCall(KSPCGDeviceDigest(ksp, st, &done, &finished));
    if (ksp->numbermonitors) PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_TRUE, &a));
  }
  if (graph || c->path == CGDEVICE_PATH_GRAPH) KSPCGDeviceCheckCUDA(ksp, cgloop_cuda_release_to(c->cu, petsc_stream), "Ordering PETSc's stream after the CG loop");
  if (a.e) a.e->nproducts += done;
  PetscCall(PetscLogGpuFlops((PetscLogDouble)done * (10.0 * shape->n)));
  PetscCall(KSPCGDeviceGPUArrays(ksp, A, c, v, PETSC_FALSE, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* ---------------------------------------------------------------- the solve */

static PetscErrorCode KSPSolve_CGDevice(KSP ksp)
{
  KSP_CGDevice   *c;
  Mat             A, P;
  cgloop_pc       pc = CGLOOP_PC_GENERAL;
  cgloop_shape    shape;
  cgloop_state    st;
  KSPCGDeviceVecs v;
  PetscReal       dp = 0.0;
  PetscScalar     beta = 0.0;
  PetscInt        n;
  const char     *why;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  PetscCall(PCGetOperators(ksp->pc, &A, &P));
  PetscCall(KSPCGDevicePCKind(ksp, A, &pc));
  PetscCall(KSPCGDeviceChoosePath(ksp, c, A, pc, &why));
  if (why) {
    PetscCall(PetscInfo(ksp, "KSPCG's own loop runs: %s\n", why));
    PetscCall((*c->cg_solve)(ksp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  v.X = ksp->vec_sol;
  v.R = ksp->work[0];
  v.Z = ksp->work[1];
  v.P = ksp->work[2];
  v.W = v.Z; /* as in KSPCG: z is consumed by the direction pass before w = A p, and made again after the step */
  v.D = NULL;

  /* the start, as KSPCG's: r = b - A x, the first norm and test, beta = z'r */
  ksp->its = 0;
  if (!ksp->guess_zero) {
    PetscCall(KSP_MatMult(ksp, A, v.X, v.R));
    PetscCall(VecAYPX(v.R, -1.0, ksp->vec_rhs));
  } else PetscCall(VecCopy(ksp->vec_rhs, v.R));
#if PETSC_VERSION_GE(3, 21, 0)
  PetscCall(VecFlag(v.R, ksp->reason == KSP_DIVERGED_PC_FAILED));
#endif
  /* z = B r before the first test only where the norm needs it, as KSPCG (a PC failure then shows in the same place) */
  if (ksp->normtype == KSP_NORM_PRECONDITIONED || ksp->normtype == KSP_NORM_NATURAL) PetscCall(KSP_PCApply(ksp, v.R, v.Z));
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
    PetscCall(VecNorm(v.Z, NORM_2, &dp));
    KSPCheckNorm(ksp, dp);
    break;
  case KSP_NORM_UNPRECONDITIONED:
    PetscCall(VecNorm(v.R, NORM_2, &dp));
    KSPCheckNorm(ksp, dp);
    break;
  case KSP_NORM_NATURAL:
    PetscCall(VecDot(v.Z, v.R, &beta));
    KSPCheckDot(ksp, beta);
    dp = PetscSqrtReal(PetscAbsScalar(beta));
    break;
  default:
    dp = 0.0;
  }
  PetscCall(KSPLogResidualHistory(ksp, dp));
  PetscCall(KSPMonitor(ksp, 0, dp));
  ksp->rnorm = dp;
  PetscCall((*ksp->converged)(ksp, 0, dp, &ksp->reason, ksp->cnvP));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (ksp->normtype != KSP_NORM_PRECONDITIONED && ksp->normtype != KSP_NORM_NATURAL) PetscCall(KSP_PCApply(ksp, v.R, v.Z));
  if (ksp->normtype != KSP_NORM_NATURAL) {
    PetscCall(VecDot(v.Z, v.R, &beta));
    KSPCheckDot(ksp, beta);
  }
  if (beta == 0.0) {
    ksp->its    = 1;
    ksp->reason = KSP_CONVERGED_ATOL;
    PetscCall(PetscInfo(ksp, "converged due to beta = 0\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* the iterations */
  if (pc == CGLOOP_PC_DIAGONAL) { /* a diagonal preconditioner is its action on ones: z = d .* r, bit for bit */
    if (c->d) { /* made for other vectors (a KSPReset() and a new size, or another vector type): made again */
      PetscInt  nd, nr;
      PetscBool same;

      PetscCall(VecGetLocalSize(c->d, &nd));
      PetscCall(VecGetLocalSize(v.R, &nr));
      PetscCall(PetscObjectTypeCompare((PetscObject)c->d, ((PetscObject)v.R)->type_name, &same));
      if (nd != nr || !same) PetscCall(VecDestroy(&c->d));
    }
    if (!c->d) PetscCall(VecDuplicate(v.R, &c->d));
    PetscCall(VecSet(v.W, 1.0));
    PetscCall(KSP_PCApply(ksp, v.W, c->d));
    v.D = c->d;
  }
  PetscCall(VecGetLocalSize(v.R, &n));
  shape.n    = n;
  shape.pc   = pc;
  shape.norm = ksp->normtype == KSP_NORM_PRECONDITIONED ? CGLOOP_NORM_PRECONDITIONED : (ksp->normtype == KSP_NORM_UNPRECONDITIONED ? CGLOOP_NORM_UNPRECONDITIONED : (ksp->normtype == KSP_NORM_NATURAL ? CGLOOP_NORM_NATURAL : CGLOOP_NORM_NONE));
  PetscCall(PetscMemzero(&st, sizeof(st)));
  st.beta     = PetscRealPart(beta);
  st.betaold  = 1.0;
  st.max_it   = ksp->max_it;
  st.test_tol = (PetscBool)(ksp->converged == KSPConvergedDefault && ksp->normtype != KSP_NORM_NONE);
  st.ttol     = ksp->ttol;
  st.dtol     = ksp->divtol * ksp->rnorm0;
#if PETSC_VERSION_GE(3, 21, 0)
  st.first_test = ksp->min_it;
#endif
  PetscCall(PetscInfo(ksp, "%s, preconditioner %s\n", KSPCGDevicePaths[c->path], pc == CGLOOP_PC_GENERAL ? "applied by PETSc" : (pc == CGLOOP_PC_DIAGONAL ? "diagonal, in the passes" : "none")));
  if (c->path == CGDEVICE_PATH_HOST) PetscCall(KSPCGDeviceHostLoop(ksp, A, &shape, &st, &v));
#if defined(KSP_CGDEVICE_CUDA)
  else PetscCall(KSPCGDeviceGPULoop(ksp, c, A, &shape, &st, &v));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the wrapped slots of KSPCG */

static PetscErrorCode KSPCGSetRadius_CGDevice(KSP ksp, PetscReal radius)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  c->radius = (PetscBool)(radius != 0.0); /* KSPCG's trust region is on for any nonzero radius */
  PetscCall((*c->cg_setradius)(ksp, radius));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGSetObjectiveTarget_CGDevice(KSP ksp, PetscReal obj)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  c->objective = (PetscBool)(obj < 0.0); /* KSPCG tests the objective only for a negative target */
  PetscCall((*c->cg_setobjective)(ksp, obj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPCG's KSPCGUseSingleReduction() puts its loop in the solve slot: kept in ours, run when asked for */
static PetscErrorCode KSPCGUseSingleReduction_CGDevice(KSP ksp, PetscBool flg)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  PetscCall((*c->cg_singlereduction)(ksp, flg));
  if (ksp->ops->solve != KSPSolve_CGDevice) c->cg_solve = ksp->ops->solve;
  ksp->ops->solve = KSPSolve_CGDevice;
  c->single       = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPReset_CGDevice(KSP ksp)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  PetscCall(VecDestroy(&c->d));
  if (c->cg_reset) PetscCall((*c->cg_reset)(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_CGDevice(KSP ksp, MatELLROptionItems PetscOptionsObject)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  PetscCall((*c->cg_setfromoptions)(ksp, PetscOptionsObject)); /* -ksp_cg_single_reduction: KSPCGUseSingleReduction_CGDevice() */
  PetscOptionsHeadBegin(PetscOptionsObject, "KSPCGDEVICE options");
  PetscCall(PetscOptionsInt("-ksp_cgdevice_check_every", "Iterations between two looks of the host at the residual norms (0: chosen from the time of an iteration)", "KSPCGDEVICE", c->check_every, &c->check_every, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_CGDevice(KSP ksp, PetscViewer viewer)
{
  KSP_CGDevice *c;
  PetscBool     ascii, string;
  const char   *fmt = "  iterations run by: %s; host looks every %" PetscInt_FMT " iterations\n";
  PetscInt      every;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  PetscCall((*c->cg_view)(ksp, viewer));
  every = c->path >= CGDEVICE_PATH_EAGER ? c->batch : 1;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERSTRING, &string));
  if (ascii) PetscCall(PetscViewerASCIIPrintf(viewer, fmt, KSPCGDevicePaths[c->path], every));
  if (string) PetscCall(PetscViewerStringSPrintf(viewer, fmt, KSPCGDevicePaths[c->path], every));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_CGDevice(KSP ksp)
{
  KSP_CGDevice *c;
  PetscErrorCode (*cg_destroy)(KSP);

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  cg_destroy = c->cg_destroy;
  PetscCall(PetscObjectCompose((PetscObject)ksp, KSP_CGDEVICE_KEY, NULL));
  PetscCall((*cg_destroy)(ksp)); /* removes KSPCG's composed functions, ours among them */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPCreate_CGDevice(KSP ksp)
{
  KSP_CGDevice  *c;
  PetscContainer container;

  PetscFunctionBegin;
  if (!KSP_CGDeviceSetUp) PetscCall(PetscLogEventRegister("KSPCGDevSetUp", KSP_CLASSID, &KSP_CGDeviceSetUp));
  PetscCall(KSPCreate_CG(ksp));
  PetscCall(PetscNew(&c));
  c->cg_solve          = ksp->ops->solve;
  c->cg_destroy        = ksp->ops->destroy;
  c->cg_view           = ksp->ops->view;
  c->cg_setfromoptions = (PetscErrorCode (*)(KSP, MatELLROptionItems))ksp->ops->setfromoptions;
  c->cg_reset          = ksp->ops->reset;
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGSetRadius_C", &c->cg_setradius));
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGSetObjectiveTarget_C", &c->cg_setobjective));
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGUseSingleReduction_C", &c->cg_singlereduction));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &container));
  PetscCall(PetscContainerSetPointer(container, c));
#if PETSC_VERSION_LT(3, 23, 0)
  PetscCall(PetscContainerSetUserDestroy(container, KSPCGDeviceDataDestroy));
#else
  PetscCall(PetscContainerSetCtxDestroy(container, KSPCGDeviceDataDestroy));
#endif
  PetscCall(PetscObjectCompose((PetscObject)ksp, KSP_CGDEVICE_KEY, (PetscObject)container));
  PetscCall(PetscContainerDestroy(&container));
  if (c->cg_setradius) PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGSetRadius_C", KSPCGSetRadius_CGDevice));
  if (c->cg_setobjective) PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGSetObjectiveTarget_C", KSPCGSetObjectiveTarget_CGDevice));
  if (c->cg_singlereduction) PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGUseSingleReduction_C", KSPCGUseSingleReduction_CGDevice));
  ksp->ops->solve          = KSPSolve_CGDevice;
  ksp->ops->destroy        = KSPDestroy_CGDevice;
  ksp->ops->reset          = KSPReset_CGDevice;
  ksp->ops->view           = KSPView_CGDevice;
  ksp->ops->setfromoptions = (PetscErrorCode (*)(KSP, MatELLROptionItems))KSPSetFromOptions_CGDevice;
  PetscFunctionReturn(PETSC_SUCCESS);
}
