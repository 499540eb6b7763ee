/* ellr_cuda_dense.cu - C = A B for a dense block B on the sliced layout: the kernel and its launch (ellr_cuda_dense.cuh) */
#include "ellr.h"
#include "ellr_cuda_dense.cuh"

template <int NB>
__global__ void __launch_bounds__(256) ellr_kernel_dense(const ellr_dense_args a)
{
  const int32_t i = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= a.nrows) return;
  const int32_t s     = i / a.C;
  const int32_t r     = i - s * a.C;
  const int64_t s0    = a.slice_start[s];
  const int32_t T     = a.T ? a.T : ellr_slice_threads((a.slice_start[s + 1] - s0) / a.C);
  const int     shift = __ffs(T) - 1; /* T is a power of two */
  const int64_t CT    = (int64_t)a.C * T;
  const int32_t len   = a.rowlen[i];
  const int32_t base  = a.cbase[s];
  const uint16_t *cw  = a.cw + a.cstart[s];
  const int32_t  *cw32 = reinterpret_cast<const int32_t *>(cw);
  const double   *vp   = a.val + s0;
  const int64_t   q    = (int64_t)r * T;
  const int32_t   orow = a.outrow ? a.outrow[i] : i;

  for (int32_t c0 = 0; c0 < a.k; c0 += NB) {
    const int     nb = min(NB, a.k - c0);
    const double *B  = a.B + (int64_t)c0 * a.ldb;
    double        acc[NB];
#pragma unroll
    for (int b = 0; b < NB; b++) acc[b] = 0.0;
    for (int32_t e = 0; e < len; e++) {
      const int64_t off = (int64_t)(e >> shift) * CT + q + (e & (T - 1));
      const int32_t col = base >= 0 ? base + (int32_t)__ldg(cw + off) : __ldg(cw32 + off);
      const double  v   = __ldg(vp + off);
      const double *bp  = B + col;
#pragma unroll
      for (int b = 0; b < NB; b++)
        if (b < nb) acc[b] = fma(v, __ldg(bp + (int64_t)b * a.ldb), acc[b]);
    }
    double *cp = a.Cm + orow + (int64_t)c0 * a.ldc;
#pragma unroll
    for (int b = 0; b < NB; b++)
      if (b < nb) cp[(int64_t)b * a.ldc] = acc[b];
  }
}

template <int NB>
static cudaError_t launch(int block, cudaStream_t s, const ellr_dense_args &a, bool probe)
{
  if (probe) {
    cudaFuncAttributes fa;
    return cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_dense<NB>);
  }
  const int64_t grid = ((int64_t)a.nrows + block - 1) / block;
  if (grid <= 0) return cudaSuccess;
  ellr_kernel_dense<NB><<<(unsigned)grid, (unsigned)block, 0, s>>>(a);
  return cudaPeekAtLastError();
}

cudaError_t ellr_cuda_launch_dense(int nb, int block, cudaStream_t s, const ellr_dense_args &a, bool probe)
{
  switch (nb) {
  case 1:
    return launch<1>(block, s, a, probe);
  case 2:
    return launch<2>(block, s, a, probe);
  case 4:
    return launch<4>(block, s, a, probe);
  case 8:
    return launch<8>(block, s, a, probe);
  case 16:
    return launch<16>(block, s, a, probe);
  case 32:
    return launch<32>(block, s, a, probe);
  default:
    return cudaErrorInvalidValue; /* not a width the kernel is built for */
  }
}

/* ---- the diagonal: one thread per row, the entry whose column is the row's row of y ----------------------------- */
__global__ void ellr_kernel_diag_sliced(const ellr_dense_args a)
{
  const int32_t i = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= a.nrows) return;
  const int32_t   s     = i / a.C;
  const int32_t   r     = i - s * a.C;
  const int64_t   s0    = a.slice_start[s];
  const int32_t   T     = a.T ? a.T : ellr_slice_threads((a.slice_start[s + 1] - s0) / a.C);
  const int       shift = __ffs(T) - 1;
  const int64_t   CT    = (int64_t)a.C * T;
  const int32_t   len   = a.rowlen[i];
  const int32_t   base  = a.cbase[s];
  const uint16_t *cw    = a.cw + a.cstart[s];
  const int32_t  *cw32  = reinterpret_cast<const int32_t *>(cw);
  const int64_t   q     = (int64_t)r * T;
  const int32_t   orow  = a.outrow ? a.outrow[i] : i;
  for (int32_t e = 0; e < len; e++) {
    const int64_t off = (int64_t)(e >> shift) * CT + q + (e & (T - 1));
    const int32_t col = base >= 0 ? base + (int32_t)cw[off] : cw32[off];
    if (col == orow) {
      a.Cm[orow] = a.val[s0 + off];
      return;
    }
  }
}

__global__ void ellr_kernel_diag_long(const ellr_long_diag_args a, double *diag)
{
  const int32_t j = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= a.nlong) return;
  const int32_t orow = a.out ? a.out[j] : a.rows[j];
  for (int64_t k = a.start[j]; k < a.start[j + 1]; k++)
    if (a.col[k] == orow) {
      diag[orow] = a.val[k];
      return;
    }
}

__global__ void ellr_kernel_diag_csr(const ellr_csr_diag_args a, double *diag)
{
  const int32_t i = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= a.nrows) return;
  const int32_t orow = a.rows ? a.rows[i] : i;
  for (int32_t k = a.rowptr[i]; k < a.rowptr[i + 1]; k++)
    if (a.col[k] == orow) {
      diag[orow] = a.val[k];
      return;
    }
}

cudaError_t ellr_cuda_launch_diagonal(cudaStream_t s, const ellr_dense_args *sliced, const ellr_long_diag_args *lr, const ellr_csr_diag_args *csr, double *diag)
{
  if (sliced && sliced->nrows > 0) {
    ellr_dense_args a = *sliced;
    a.Cm              = diag;
    ellr_kernel_diag_sliced<<<(unsigned)(((int64_t)a.nrows + 255) / 256), 256, 0, s>>>(a);
  }
  if (lr && lr->nlong > 0) ellr_kernel_diag_long<<<(unsigned)(((int64_t)lr->nlong + 255) / 256), 256, 0, s>>>(*lr, diag);
  if (csr && csr->nrows > 0) ellr_kernel_diag_csr<<<(unsigned)(((int64_t)csr->nrows + 255) / 256), 256, 0, s>>>(*csr, diag);
  return cudaPeekAtLastError();
}
