/*
  aijellrmult.c - the products of MATSEQAIJELLRT/MATSEQAIJPELLR: y = A x (+ z) and y = A^T x (+ z), on the
  backend the matrix resolved: AIJ's own products, the engine's CPU storage or its CUDA storage.
*/
#include "../ellrimpl.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscdevice.h>
#endif

/* AIJ's product on this matrix: the base ops it had when converted (I-node variants included), or a plain
   SEQAIJ's when its header no longer holds this type's data. */
static PetscErrorCode MatMultAIJ_SeqAIJELLR(Mat A, const struct _MatOps *ops, Vec x, Vec z, Vec y, PetscBool transpose)
{
  PetscFunctionBegin;
  if (!transpose) {
    if (z) PetscCall((*ops->multadd)(A, x, z, y));
    else PetscCall((*ops->mult)(A, x, y));
  } else {
    if (z) PetscCall((*ops->multtransposeadd)(A, x, z, y));
    else PetscCall((*ops->multtranspose)(A, x, y));
  }
  PetscFunctionReturn(0);
}

/* The flops AIJ logs for the same product, so that -log_view's rates compare. */
static PetscLogDouble MatELLRFlops(const ellr_plan *pl, Vec z, PetscBool transpose)
{
  const PetscLogDouble nnz = (PetscLogDouble)pl->stats.nnz;
  return (!transpose && !z) ? 2.0 * nnz - (PetscLogDouble)pl->stats.nonempty_rows : 2.0 * nnz;
}

/* Host arrays of x, z and y; z == y is allowed (MatMultAdd(A, x, y, y)). */
typedef struct {
  const PetscScalar *x, *z;
  PetscScalar       *y;
} MatELLRHostArrays;

static PetscErrorCode MatELLRGetHostArrays(Vec x, Vec z, Vec y, MatELLRHostArrays *h)
{
  PetscFunctionBegin;
  h->z = NULL;
  PetscCall(VecGetArrayRead(x, &h->x));
  if (z == y) {
    PetscCall(VecGetArray(y, &h->y));
    h->z = h->y;
  } else {
    if (z) PetscCall(VecGetArrayRead(z, &h->z));
    PetscCall(VecGetArrayWrite(y, &h->y));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRRestoreHostArrays(Vec x, Vec z, Vec y, MatELLRHostArrays *h)
{
  PetscFunctionBegin;
  PetscCall(VecRestoreArrayRead(x, &h->x));
  if (z == y) PetscCall(VecRestoreArray(y, &h->y));
  else {
    if (z) PetscCall(VecRestoreArrayRead(z, &h->z));
    PetscCall(VecRestoreArrayWrite(y, &h->y));
  }
  PetscFunctionReturn(0);
}

#if defined(PETSCELLR_HAVE_CUDA)
/* Whether v's current values are on the GPU: only for CUDA vectors not bound to the CPU (a bound vector's host
   array is the current one and its device array may be stale, as on GAMG's coarse levels). */
static PetscErrorCode MatELLRVecOnDevice(Vec v, PetscBool *dev)
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
  PetscFunctionReturn(0);
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
    PetscFunctionReturn(0);
  }
  #endif
  if (mode == MAT_ELLR_READ) PetscCall(VecGetArrayRead(v, (const PetscScalar **)a));
  else if (mode == MAT_ELLR_WRITE) PetscCall(VecGetArrayWrite(v, a));
  else PetscCall(VecGetArray(v, a));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRVecRestore(Vec v, PetscBool dev, MatELLRAccess mode, PetscScalar **a)
{
  PetscFunctionBegin;
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  if (dev) {
    if (mode == MAT_ELLR_READ) PetscCall(VecCUDARestoreArrayRead(v, (const PetscScalar **)a));
    else if (mode == MAT_ELLR_WRITE) PetscCall(VecCUDARestoreArrayWrite(v, a));
    else PetscCall(VecCUDARestoreArray(v, a));
    PetscFunctionReturn(0);
  }
  #endif
  if (mode == MAT_ELLR_READ) PetscCall(VecRestoreArrayRead(v, (const PetscScalar **)a));
  else if (mode == MAT_ELLR_WRITE) PetscCall(VecRestoreArrayWrite(v, a));
  else PetscCall(VecRestoreArray(v, a));
  PetscFunctionReturn(0);
}

/* -mat_ellr_verify: the GPU's y against the CPU engine's product of the same CSR, x and z. */
static PetscErrorCode MatSeqAIJELLRVerify(Mat A, Vec x, Vec z0, Vec y, PetscBool transpose)
{
  Mat_SeqAIJELLR    *e = MatSeqAIJELLRGetData(A);
  ellr_params        p = e->settings.eng;
  ellr_csr           csr;
  ellr_matrix        ref;
  const PetscScalar *xa, *za = NULL, *ya;
  PetscScalar       *r;
  PetscInt           n;
  PetscReal          dn = 0, rn = 0;

  PetscFunctionBegin;
  p.max_fill = 0;
  PetscCall(MatSeqAIJELLRGetCSR(A, PETSC_FALSE, &csr));
  PetscCall(MatELLRCheckStatus(ellr_matrix_create(&csr, &p, &ref), "-mat_ellr_verify: the CPU reference"));
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(PetscMalloc1(n ? n : 1, &r));
  PetscCall(VecGetArrayRead(x, &xa));
  if (z0) PetscCall(VecGetArrayRead(z0, &za));
  PetscCall(VecGetArrayRead(y, &ya));
  if (transpose) ellr_cpu_mult_transpose(&ref, xa, za, r);
  else ellr_cpu_mult(&ref, xa, za, r);
  for (PetscInt i = 0; i < n; i++) {
    dn += PetscSqr(PetscRealPart(ya[i] - r[i]));
    rn += PetscSqr(PetscRealPart(r[i]));
  }
  PetscCall(VecRestoreArrayRead(y, &ya));
  if (z0) PetscCall(VecRestoreArrayRead(z0, &za));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscFree(r));
  ellr_matrix_destroy(&ref);
  PetscCheck(dn <= 1e-24 * rn || (rn == 0 && dn == 0), PETSC_COMM_SELF, PETSC_ERR_PLIB, "-mat_ellr_verify: the GPU product %s of this %" PetscInt_FMT " x %" PetscInt_FMT " matrix (%lld nonzeros, object state %" PetscInt64_FMT ") differs from the CPU engine's: relative error %g", transpose ? (z0 ? "y = A^T x + z" : "y = A^T x") : (z0 ? "y = A x + z" : "y = A x"), A->rmap->n, A->cmap->n, (long long)csr.rowptr[csr.nrows], (PetscInt64)e->state, (double)PetscSqrtReal(dn / (rn > 0 ? rn : 1)));
  PetscFunctionReturn(0);
}

/* Whether the GPU's A^T x is a stored transpose's product: by default (-mat_ellr_transpose stored), except for a
   sequential matrix known symmetric for good (MAT_SYMMETRIC with MAT_SYMMETRY_ETERNAL: PETSc keeps MAT_SYMMETRIC
   alone through MatZeroRows, which breaks it), whose A^T x is A x on A's own storage, repeatable and with no second
   copy.  Never for a block of an MPI matrix: MPIAIJ forwards the flag to its diagonal block, symmetric or not. */
static PetscErrorCode MatSeqAIJELLRUsesStoredTranspose(Mat A, Mat_SeqAIJELLR *e, PetscBool *stored)
{
  PetscBool set = PETSC_FALSE, sym = PETSC_FALSE;

  PetscFunctionBegin;
  *stored = PETSC_FALSE;
  if (e->settings.transpose != MAT_ELLR_TRANSPOSE_STORED) PetscFunctionReturn(0);
  if (A->rmap->n == A->cmap->n && !e->block && A->symmetry_eternal) PetscCall(MatIsSymmetricKnown(A, &set, &sym));
  *stored = (PetscBool)!(set && sym);
  PetscFunctionReturn(0);
}

/* The GPU product.  Each vector is used where its values are: CUDA vectors in place on the device, others
   (host vectors, CPU-bound ones, MPIAIJ's host ghost vector) staged by the engine through pinned buffers. */
static PetscErrorCode MatMultCUDA_SeqAIJELLR(Mat A, Vec x, Vec z, Vec y, PetscBool transpose)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);
  PetscBool       dx, dz, dy;
  PetscScalar    *ax, *az = NULL, *ay;
  void           *stream;
  Vec             z0 = NULL;
  const PetscLogDouble flops = MatELLRFlops(MatSeqAIJELLRGetPlan(e), z, transpose);
  PetscBool            stored = PETSC_FALSE, symmetric;

  PetscFunctionBegin;
  if (transpose) PetscCall(MatSeqAIJELLRUsesStoredTranspose(A, e, &stored));
  symmetric = (PetscBool)(transpose && !stored && e->settings.transpose == MAT_ELLR_TRANSPOSE_STORED);
  if (stored) PetscCall(MatSeqAIJELLRUpdateTranspose(A));
  if (e->settings.verify && z) {
    PetscCall(VecDuplicate(z, &z0));
    PetscCall(VecCopy(z, z0));
  }
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
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscCall(PetscLogGpuTimeBegin());
  #endif
  /* y = A^T x (+ z): by default the stored transpose's own product (fixed order of summation), A's for a matrix
     known symmetric, atomics into y with -mat_ellr_transpose atomic */
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
  if (e->settings.verify) PetscCall(MatSeqAIJELLRVerify(A, x, z0, y, transpose));
  PetscCall(VecDestroy(&z0));
  PetscFunctionReturn(0);
}
#endif

/* The storage a product of A (transpose: of A^T) will use, made current now: the MPI product calls it for both
   blocks before MPIAIJ starts its ghost exchange, so that a failed set-up returns before any communication is
   outstanding (a product that failed between MPIAIJ's scatter begin and end would leave the scatter in use). */
PetscErrorCode MatSeqAIJELLRPrepare(Mat A, PetscBool transpose)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) PetscFunctionReturn(0);
  PetscCall(MatSeqAIJELLRResolve(A, e));
  if (e->backend == MAT_ELLR_BACKEND_AIJ || MatELLRBoundToCPUFlag(A)) PetscFunctionReturn(0);
  PetscCall(MatSeqAIJELLRUpdate(A));
#if defined(PETSCELLR_HAVE_CUDA)
  if (transpose && e->backend == MAT_ELLR_BACKEND_CUDA) {
    PetscBool stored;
    PetscCall(MatSeqAIJELLRUsesStoredTranspose(A, e, &stored));
    if (stored) PetscCall(MatSeqAIJELLRUpdateTranspose(A));
  }
#endif
  PetscFunctionReturn(0);
}

/* y = A x + z or y = A^T x + z (z may be NULL or y), on the backend this matrix resolved. */
static PetscErrorCode MatMultKernel_SeqAIJELLR(Mat A, Vec x, Vec z, Vec y, PetscBool transpose)
{
  Mat_SeqAIJELLR   *e = MatSeqAIJELLRGetData(A);
  MatELLRHostArrays h;

  PetscFunctionBegin;
  if (!e) { /* the header holds another matrix's data (MatHeaderMerge()): it is a plain SEQAIJ now */
    PetscCall(MatMultAIJ_SeqAIJELLR(A, &MatSeqAIJELLR_AIJOps, x, z, y, transpose));
    PetscFunctionReturn(0);
  }
  PetscCall(MatSeqAIJELLRResolve(A, e));
  if (e->backend == MAT_ELLR_BACKEND_AIJ || MatELLRBoundToCPUFlag(A)) {
    PetscCall(MatMultAIJ_SeqAIJELLR(A, &e->baseops, x, z, y, transpose));
    PetscFunctionReturn(0);
  }
  PetscCall(MatSeqAIJELLRUpdate(A));
  PetscCall(PetscLogEventBegin(MAT_ELLRMult, A, x, y, 0));
  e->nproducts++;
  if (e->backend == MAT_ELLR_BACKEND_CPU) {
    PetscCall(MatELLRGetHostArrays(x, z, y, &h));
    if (transpose) ellr_cpu_mult_transpose(&e->host, h.x, h.z, h.y);
    else ellr_cpu_mult(&e->host, h.x, h.z, h.y);
    PetscCall(MatELLRRestoreHostArrays(x, z, y, &h));
    PetscCall(PetscLogFlops(MatELLRFlops(&e->host.plan, z, transpose)));
  }
#if defined(PETSCELLR_HAVE_CUDA)
  else PetscCall(MatMultCUDA_SeqAIJELLR(A, x, z, y, transpose));
#endif
  PetscCall(PetscLogEventEnd(MAT_ELLRMult, A, x, y, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode MatMult_SeqAIJELLR(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, NULL, y, PETSC_FALSE));
  PetscFunctionReturn(0);
}

PetscErrorCode MatMultAdd_SeqAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, z, y, PETSC_FALSE));
  PetscFunctionReturn(0);
}

PetscErrorCode MatMultTranspose_SeqAIJELLR(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, NULL, y, PETSC_TRUE));
  PetscFunctionReturn(0);
}

PetscErrorCode MatMultTransposeAdd_SeqAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, z, y, PETSC_TRUE));
  PetscFunctionReturn(0);
}
