/*
  ellrmult.c - the products of a sequential matrix (or block) on its ELLPACK-R storage: y = A x (+ z) and
  y = A^T x (+ z), on the engine's CPU storage or its CUDA storage.
*/
#include "../ellrimpl.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscdevice.h>
#endif

/* The flops AIJ logs for the same product, so that -log_view's rates compare. */
static PetscLogDouble MatELLRFlops(const ellr_plan *pl, Vec z, PetscBool transpose)
{
  const PetscLogDouble nnz = (PetscLogDouble)pl->stats.nnz;
  return (!transpose && !z) ? 2.0 * nnz - (PetscLogDouble)pl->stats.nonempty_rows : 2.0 * nnz;
}

/* Read (write) access to v's array where it is current: device arrays of CUDA vectors, host arrays otherwise. */
typedef enum {
  MAT_ELLR_READ,
  MAT_ELLR_WRITE,
  MAT_ELLR_READWRITE
} MatELLRAccess;

static PetscErrorCode MatELLRVecGet(Vec v, PetscBool dev, MatELLRAccess mode, PetscScalar **a)
{
  PetscFunctionBegin;
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  if (dev) {
    if (mode == MAT_ELLR_READ) PetscCall(VecCUDAGetArrayRead(v, (const PetscScalar **)a));
    else if (mode == MAT_ELLR_WRITE) PetscCall(VecCUDAGetArrayWrite(v, a));
    else PetscCall(VecCUDAGetArray(v, a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  #endif
  if (mode == MAT_ELLR_READ) PetscCall(VecGetArrayRead(v, (const PetscScalar **)a));
  else if (mode == MAT_ELLR_WRITE) PetscCall(VecGetArrayWrite(v, a));
  else PetscCall(VecGetArray(v, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRVecRestore(Vec v, PetscBool dev, MatELLRAccess mode, PetscScalar **a)
{
  PetscFunctionBegin;
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  if (dev) {
    if (mode == MAT_ELLR_READ) PetscCall(VecCUDARestoreArrayRead(v, (const PetscScalar **)a));
    else if (mode == MAT_ELLR_WRITE) PetscCall(VecCUDARestoreArrayWrite(v, a));
    else PetscCall(VecCUDARestoreArray(v, a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  #endif
  if (mode == MAT_ELLR_READ) PetscCall(VecRestoreArrayRead(v, (const PetscScalar **)a));
  else if (mode == MAT_ELLR_WRITE) PetscCall(VecRestoreArrayWrite(v, a));
  else PetscCall(VecRestoreArray(v, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSCELLR_HAVE_CUDA)
/* Whether v's current values are on the GPU: only for CUDA vectors not bound to the CPU (a bound vector's host
   array is the current one and its device array may be stale, as on GAMG's coarse levels). */
PetscErrorCode MatELLRVecOnDevice(Vec v, PetscBool *dev)
{
  PetscFunctionBegin;
  *dev = PETSC_FALSE;
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  if (v) {
    PetscBool bound = PETSC_FALSE;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)v, dev, VECSEQCUDA, VECMPICUDA, ""));
    if (*dev) PetscCall(VecBoundToCPU(v, &bound));
    if (bound) *dev = PETSC_FALSE;
  }
  #endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the GPU's A^T x is a stored transpose's product (rows summed in a fixed order: the same bits every product),
   except for a sequential matrix known symmetric for good (MAT_SYMMETRIC with MAT_SYMMETRY_ETERNAL: MatZeroRows keeps
   MAT_SYMMETRIC alone), whose A^T x is A x on A's own storage.  Never for a block of an MPI matrix (MPIAIJ forwards the
   flag to its diagonal block, symmetric or not). */
static PetscErrorCode MatELLRUsesStoredTranspose(Mat A, Mat_ELLR *e, PetscBool *stored)
{
  PetscBool set = PETSC_FALSE, sym = PETSC_FALSE;

  PetscFunctionBegin;
  if (A->rmap->n == A->cmap->n && !e->settings.block && A->symmetry_eternal) PetscCall(MatIsSymmetricKnown(A, &set, &sym));
  *stored = (PetscBool)!(set && sym);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The GPU product: CUDA vectors in place on the device, others (host, CPU-bound, MPIAIJ's host ghost vector) staged by
   the engine through pinned buffers. */
static PetscErrorCode MatELLRProductCUDA(Mat A, Mat_ELLR *e, Vec x, Vec z, Vec y, PetscBool transpose)
{
  PetscBool       dx, dz, dy;
  PetscScalar    *ax, *az = NULL, *ay;
  void           *stream;
  const PetscLogDouble flops = MatELLRFlops(MatELLRGetPlan(e), z, transpose);
  PetscBool            stored = PETSC_FALSE, symmetric;

  PetscFunctionBegin;
  if (transpose) PetscCall(MatELLRUsesStoredTranspose(A, e, &stored));
  symmetric = (PetscBool)(transpose && !stored);
  if (stored) PetscCall(MatELLRUpdateTranspose(A, e));
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(MatELLRVecOnDevice(x, &dx));
  PetscCall(MatELLRVecOnDevice(y, &dy));
  PetscCall(MatELLRVecOnDevice(z, &dz));
  if (z == y) dz = dy;
  PetscCall(MatELLRVecGet(x, dx, MAT_ELLR_READ, &ax));
  if (z == y) {
    PetscCall(MatELLRVecGet(y, dy, MAT_ELLR_READWRITE, &ay));
    az = ay;
  } else {
    if (z) PetscCall(MatELLRVecGet(z, dz, MAT_ELLR_READ, &az));
    PetscCall(MatELLRVecGet(y, dy, MAT_ELLR_WRITE, &ay));
  }
  /* a streamed storage's tuning, waiting for a product's own vectors (the device x, and y before it is written) */
  if (!transpose && dx && dy && !z && x != y && ellr_cuda_tune_pending(e->dev)) {
    PetscCall(PetscLogEventBegin(MAT_ELLRTune, A, 0, 0, 0));
    PetscCall(MatELLRCheckStatus(ellr_cuda_tune_with(e->dev, NULL, (const double *)ax, (double *)ay, stream), "Tuning the GPU kernel"));
    PetscCall(PetscLogEventEnd(MAT_ELLRTune, A, 0, 0, 0));
  }
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscCall(PetscLogGpuTimeBegin());
  #endif
  /* y = A^T x (+ z): the stored transpose's own product, or A's for a matrix known symmetric */
  PetscCall(MatELLRCheckStatus(ellr_cuda_mult_mixed(stored ? e->devT : e->dev, ax, !dx, az, !dz, ay, !dy, (stored || symmetric) ? 0 : transpose, stream), "The GPU product"));
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(flops));
  #else
  PetscCall(PetscLogFlops(flops));
  #endif
  PetscCall(MatELLRVecRestore(x, dx, MAT_ELLR_READ, &ax));
  if (z == y) PetscCall(MatELLRVecRestore(y, dy, MAT_ELLR_READWRITE, &ay));
  else {
    if (z) PetscCall(MatELLRVecRestore(z, dz, MAT_ELLR_READ, &az));
    PetscCall(MatELLRVecRestore(y, dy, MAT_ELLR_WRITE, &ay));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* The storage a product of A (transpose: of A^T) will use, made current now: the MPI product calls it for both blocks
   before the ghost exchange starts, so that a failed set-up returns before any communication is outstanding. */
PetscErrorCode MatELLRSeqPrepare(Mat A, Mat_ELLR *e, PetscBool transpose)
{
  PetscFunctionBegin;
  PetscCall(MatELLRResolve(e));
  if (e->backend == MAT_ELLR_BACKEND_AIJ || MatELLRBoundToCPU(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRUpdate(A, e));
#if defined(PETSCELLR_HAVE_CUDA)
  if (transpose && e->backend == MAT_ELLR_BACKEND_CUDA) {
    PetscBool stored;

    PetscCall(MatELLRUsesStoredTranspose(A, e, &stored));
    if (stored) PetscCall(MatELLRUpdateTranspose(A, e));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x + z or y = A^T x + z (z may be NULL or y) on the storage; the caller has checked that the products run
   there (not bound to the CPU, backend not aij). */
PetscErrorCode MatELLRSeqProduct(Mat A, Mat_ELLR *e, Vec x, Vec z, Vec y, PetscBool transpose)
{
  PetscFunctionBegin;
  PetscCall(MatELLRUpdate(A, e));
  PetscCall(PetscLogEventBegin(MAT_ELLRMult, A, x, y, 0));
  e->nproducts++;
  if (e->backend == MAT_ELLR_BACKEND_CPU) { /* z == y is allowed (MatMultAdd(A, x, y, y)) */
    PetscScalar *ax, *az = NULL, *ay;

    PetscCall(MatELLRVecGet(x, PETSC_FALSE, MAT_ELLR_READ, &ax));
    PetscCall(MatELLRVecGet(y, PETSC_FALSE, z == y ? MAT_ELLR_READWRITE : MAT_ELLR_WRITE, &ay));
    if (z && z != y) PetscCall(MatELLRVecGet(z, PETSC_FALSE, MAT_ELLR_READ, &az));
    if (z == y) az = ay;
    if (transpose) ellr_cpu_mult_transpose(&e->host, ax, az, ay);
    else ellr_cpu_mult(&e->host, ax, az, ay);
    if (z && z != y) PetscCall(MatELLRVecRestore(z, PETSC_FALSE, MAT_ELLR_READ, &az));
    PetscCall(MatELLRVecRestore(y, PETSC_FALSE, z == y ? MAT_ELLR_READWRITE : MAT_ELLR_WRITE, &ay));
    PetscCall(MatELLRVecRestore(x, PETSC_FALSE, MAT_ELLR_READ, &ax));
    PetscCall(PetscLogFlops(MatELLRFlops(&e->host.plan, z, transpose)));
  }
#if defined(PETSCELLR_HAVE_CUDA)
  else PetscCall(MatELLRProductCUDA(A, e, x, z, y, transpose));
#endif
  PetscCall(PetscLogEventEnd(MAT_ELLRMult, A, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal from the CUDA storage into a CUDA vector (PCJACOBI's set-up), on the GPU: no copy of the matrix made
   elsewhere and no host round trip of the vector.  *done: PETSC_FALSE where it does not apply (host vector, another
   backend, bound to the CPU): the caller reads it another way. */
PetscErrorCode MatELLRSeqDiagonal(Mat A, Mat_ELLR *e, Vec v, PetscBool *done)
{
  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  {
    PetscBool    dev;
    PetscScalar *d;
    void        *stream;

    PetscCall(MatELLRResolve(e));
    if (e->backend != MAT_ELLR_BACKEND_CUDA || MatELLRBoundToCPU(A)) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatELLRVecOnDevice(v, &dev));
    if (!dev) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatELLRUpdate(A, e));
    if (!e->dev) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatELLRGetStream(&stream));
    PetscCall(VecCUDAGetArrayWrite(v, &d));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCall(MatELLRCheckStatus(ellr_cuda_diagonal(e->dev, (double *)d, stream), "Reading the diagonal from the GPU storage"));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(VecCUDARestoreArrayWrite(v, &d));
    *done = PETSC_TRUE;
  }
#else
  (void)A;
  (void)e;
  (void)v;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Tunes a streamed storage still waiting for vectors (ellr_cuda_tune_with) with x (read as it is) and y (scratch): of
   a sequential matrix, or of an MPI matrix's diagonal block with x's and y's local parts.  The Krylov loops call it
   before they capture their products, whose graph calls the engine directly. */
PetscErrorCode MatELLRSeqTune(Mat A, Mat_ELLR *e, Vec x, Vec y)
{
  PetscFunctionBegin;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  {
    PetscBool          dx, dy;
    const PetscScalar *ax;
    PetscScalar       *ay;
    void              *stream;

    if (e && e->mpi) {
      Mat Ad;

      PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
      PetscCall(MatELLRGetData(Ad, &e));
      A = Ad;
    }
    if (!e || e->backend != MAT_ELLR_BACKEND_CUDA || !e->dev || !ellr_cuda_tune_pending(e->dev) || x == y) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatELLRVecOnDevice(x, &dx));
    PetscCall(MatELLRVecOnDevice(y, &dy));
    if (!dx || !dy) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatELLRGetStream(&stream));
    PetscCall(VecCUDAGetArrayRead(x, &ax));
    PetscCall(VecCUDAGetArrayWrite(y, &ay));
    PetscCall(PetscLogEventBegin(MAT_ELLRTune, A, 0, 0, 0));
    PetscCall(MatELLRCheckStatus(ellr_cuda_tune_with(e->dev, NULL, (const double *)ax, (double *)ay, stream), "Tuning the GPU kernel"));
    PetscCall(PetscLogEventEnd(MAT_ELLRTune, A, 0, 0, 0));
    PetscCall(VecCUDARestoreArrayWrite(y, &ay));
    PetscCall(VecCUDARestoreArrayRead(x, &ax));
  }
#else
  (void)A;
  (void)e;
  (void)x;
  (void)y;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
