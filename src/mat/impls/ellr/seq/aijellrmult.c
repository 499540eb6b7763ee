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
static PetscErrorCode MatELLRIsCUDAVec(Vec v, PetscBool *iscuda)
{
  PetscFunctionBegin;
  *iscuda = PETSC_TRUE;
  if (v) PetscCall(PetscObjectTypeCompareAny((PetscObject)v, iscuda, VECSEQCUDA, VECMPICUDA, ""));
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
  }
#endif
  PetscCall(PetscLogEventEnd(MAT_ELLRMult, A, x, y, 0));
  PetscFunctionReturn(0);
}
