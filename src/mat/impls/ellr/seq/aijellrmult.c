/*
  aijellrmult.c - the products of MATSEQAIJELLRT/MATSEQAIJPELLR: y = A x (+ z) and y = A^T x (+ z),
  dispatched to the engine's CPU or CUDA backend.
*/
#include "../ellrimpl.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscdevice.h>
#endif

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

#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
/* Device arrays are used only for CUDA vectors not bound to the CPU: a bound vector's host array is the
   current one and its device array may be stale (seen with GAMG's coarse levels). */
static PetscErrorCode MatELLRIsCUDAVec(Vec v, PetscBool *iscuda)
{
  PetscBool bound = PETSC_FALSE;

  PetscFunctionBegin;
  *iscuda = PETSC_TRUE;
  if (!v) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, iscuda, VECSEQCUDA, VECMPICUDA, ""));
  if (*iscuda) PetscCall(VecBoundToCPU(v, &bound));
  if (bound) *iscuda = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* PETSc's current CUDA stream (a cudaStream_t, as void *): products must order with PETSc's vector kernels. */
static PetscErrorCode MatELLRGetPETScStream(void **stream)
{
  PetscFunctionBegin;
  *stream = NULL; /* the legacy default stream, which PETSc before 3.20 used */
  #if PETSC_VERSION_GE(3, 20, 0)
  {
    PetscDeviceContext dctx;
    void              *handle = NULL;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
    if (handle) *stream = *(void **)handle;
  }
  #endif
  PetscFunctionReturn(0);
}

/* The product on device arrays. */
static PetscErrorCode MatMultKernel_SeqAIJELLR_Device(Mat A, Vec x, Vec z, Vec y, PetscBool transpose, PetscLogDouble flops)
{
  Mat_SeqAIJELLR    *e = (Mat_SeqAIJELLR *)A->spptr;
  const PetscScalar *dx, *dz = NULL;
  PetscScalar       *dy;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(MatELLRGetPETScStream(&stream));
  PetscCall(VecCUDAGetArrayRead(x, &dx));
  if (z == y) {
    PetscCall(VecCUDAGetArray(y, &dy));
    dz = dy;
  } else {
    if (z) PetscCall(VecCUDAGetArrayRead(z, &dz));
    PetscCall(VecCUDAGetArrayWrite(y, &dy));
  }
  PetscCall(PetscLogGpuTimeBegin());
  PetscCall(MatELLRCheckStatus(ellr_cuda_mult(e->dev, dx, dz, dy, transpose, stream), "The GPU product"));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(flops));
  PetscCall(VecCUDARestoreArrayRead(x, &dx));
  if (z == y) PetscCall(VecCUDARestoreArray(y, &dy));
  else {
    if (z) PetscCall(VecCUDARestoreArrayRead(z, &dz));
    PetscCall(VecCUDARestoreArrayWrite(y, &dy));
  }
  PetscFunctionReturn(0);
}
#endif

#if defined(PETSCELLR_HAVE_CUDA)
/* -mat_ellr_verify: the GPU's y against the CPU engine's product of the same CSR, x and z. */
static PetscErrorCode MatSeqAIJELLRVerify(Mat A, Vec x, Vec z0, Vec y, PetscBool transpose)
{
  Mat_SeqAIJELLR    *e = (Mat_SeqAIJELLR *)A->spptr;
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
#endif

/* y = A x + z or y = A^T x + z (z may be NULL or y), on the backend the storage was built for. */
PetscErrorCode MatMultKernel_SeqAIJELLR(Mat A, Vec x, Vec z, Vec y, PetscBool transpose)
{
  Mat_SeqAIJELLR   *e = (Mat_SeqAIJELLR *)A->spptr;
  MatELLRHostArrays h;
  PetscLogDouble    flops;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRUpdate(A));
  PetscCall(PetscLogEventBegin(MAT_ELLRMult, A, x, y, 0));
  e->nproducts++;
  if (e->backend == MAT_ELLR_BACKEND_CPU) {
    flops = 2.0 * (PetscLogDouble)e->host.plan.stats.nnz;
    PetscCall(MatELLRGetHostArrays(x, z, y, &h));
    if (transpose) ellr_cpu_mult_transpose(&e->host, h.x, h.z, h.y);
    else ellr_cpu_mult(&e->host, h.x, h.z, h.y);
    PetscCall(MatELLRRestoreHostArrays(x, z, y, &h));
    PetscCall(PetscLogFlops(flops));
  }
#if defined(PETSCELLR_HAVE_CUDA)
  else {
    ellr_cuda_info info;
    PetscBool      device = PETSC_FALSE;
    Vec            z0     = NULL;
    if (e->settings.verify && z) {
      PetscCall(VecDuplicate(z, &z0));
      PetscCall(VecCopy(z, z0));
    }
    ellr_cuda_get_info(e->dev, &info);
    flops = 2.0 * (PetscLogDouble)info.plan->stats.nnz;
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
    {
      PetscBool cx, cz, cy;
      PetscCall(MatELLRIsCUDAVec(x, &cx));
      PetscCall(MatELLRIsCUDAVec(z, &cz));
      PetscCall(MatELLRIsCUDAVec(y, &cy));
      device = (PetscBool)(cx && cz && cy);
    }
    if (device) PetscCall(MatMultKernel_SeqAIJELLR_Device(A, x, z, y, transpose, flops));
  #endif
    if (!device) {
      /* host vectors with a GPU matrix: x and y cross PCIe through the matrix's pinned buffers */
      PetscCall(MatELLRGetHostArrays(x, z, y, &h));
      PetscCall(MatELLRCheckStatus(ellr_cuda_mult_host(e->dev, h.x, h.z, h.y, transpose), "The GPU product on host vectors"));
      PetscCall(MatELLRRestoreHostArrays(x, z, y, &h));
      PetscCall(PetscLogFlops(flops));
    }
    if (e->settings.verify) PetscCall(MatSeqAIJELLRVerify(A, x, z0, y, transpose));
    PetscCall(VecDestroy(&z0));
  }
#endif
  PetscCall(PetscLogEventEnd(MAT_ELLRMult, A, x, y, 0));
  PetscFunctionReturn(0);
}
