/*
  ellr_cuda_fill_kernels.cuh - the sliced layout's own kernels besides the product (included by ellr_cuda.cu only):
  the fill from the CSR on the device, the split slices' rows set before the chunks add into them, and the test
  vector of the timed tuning.  Apart from the product kernels (ellr_cuda_kernels.cuh) so that ellr_cuda.cu's module
  stays small: the first launch from a module costs more the larger the module (ellr_cuda_mult.cuh).
*/
#ifndef ELLR_CUDA_FILL_KERNELS_CUH
#define ELLR_CUDA_FILL_KERNELS_CUH

#include <cstdint>
#include <cuda_runtime.h>

/* The rows of split slices (chunks kernel): y = z + the items' partial sums, added in item order, so every product
   gives the same bits.  One thread per row of a split slice; split[k] = {slice, pieces}. */
static __global__ void ellr_kernel_join_split(int32_t nsplit, const int2 *__restrict__ split, const int64_t *__restrict__ part_off, const double *__restrict__ part, int32_t C, int32_t nrows, const int32_t *__restrict__ perm, const double *z, double *y)
{
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t k = g / C;
  if (k >= nsplit) return;
  const int2    sp = split[k];
  const int64_t r  = g - k * C;
  const int64_t i  = (int64_t)sp.x * C + r;
  if (i >= nrows) return;
  const double *p   = part + part_off[sp.x] + r;
  double        sum = p[0];
  for (int q = 1; q < sp.y; q++) sum += p[(int64_t)q * C];
  const int32_t orow = perm ? perm[i] : (int32_t)i;
  y[orow]            = z ? z[orow] + sum : sum;
}

/* Scatter the CSR into the layout in the product's own mapping, so the writes are coalesced: T lanes per stored row
   (one T), or with slices of different T the product's per-warp work items (witems: each warp 32/T rows of one
   slice; the items of a slice's first column block fill it).  Every word of the slice is written (padding: column
   -1 or 0xFFFF, value 0); column indices as the slice's cbase says (ellr_cuda_cols.cu).  values_only: the entries'
   values only (the padding is already 0).
   The window [r0, r1) of CSR rows: only stored rows whose CSR row p lies in it are written, from rowptr[p - r0]
   - nz0 on in csrcol and csrval (a chunk of the CSR staged on the device, so that the whole CSR never sits
   beside the layout); the stored rows past the last row (padding) go with the window that starts at row 0.  The
   whole CSR is the window [0, INT32_MAX) with nz0 = 0. */
static __global__ void ellr_kernel_fill(int64_t nstoredrows, int32_t nrows, int32_t C, int32_t T1, const int4 *__restrict__ witems, int64_t nwitems, const int64_t *__restrict__ slice_start, const int32_t *__restrict__ rowlen, const int32_t *__restrict__ perm, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ csrcol, const double *__restrict__ csrval, uint16_t *cw, const int32_t *__restrict__ cbase, const int64_t *__restrict__ cstart, double *val, int values_only, int32_t r0, int32_t r1, int64_t nz0)
{
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t       i, s, r;
  int           t, T;
  if (witems) {
    if ((g >> 5) >= nwitems) return;
    const int4 it = witems[g >> 5];
    const int  p  = it.z * 32 + (int)(g & 31);
    if (it.y != 0 || p / it.w >= C) return; /* a later column block's item, or a lane past the slice */
    T = it.w;
    s = it.x;
    r = p / T;
    t = p - (int)r * T;
    i = s * C + r;
  } else {
    T = T1;
    i = g / T;
    t = (int)(g - i * T);
    if (i >= nstoredrows) return;
    s = i / C;
    r = i - s * C;
  }
  const int32_t p     = i < nrows ? (perm ? perm[i] : (int32_t)i) : -1;
  if (p >= 0 ? (p < r0 || p >= r1) : r0 != 0) return; /* another window's row */
  const int64_t s0    = slice_start[s];
  const int64_t width = (slice_start[s + 1] - s0) / C; /* entries per row in this slice */
  const int64_t CT    = (int64_t)C * T;
  const int32_t len   = i < nrows ? rowlen[i] : 0;
  const int64_t rp    = i < nrows ? rowptr[p - r0] - nz0 : 0;
  const int32_t base  = values_only ? 0 : cbase[s];
  uint16_t     *c16   = values_only ? NULL : cw + cstart[s];
  int32_t      *c32   = reinterpret_cast<int32_t *>(c16);
  int64_t       q     = r * T + t; /* position inside the slice */
  for (int64_t k = t; k < (values_only ? len : width); k += T, q += CT) {
    if (k < len) {
      if (!values_only) {
        if (base >= 0) c16[q] = (uint16_t)(csrcol[rp + k] - base);
        else c32[q] = csrcol[rp + k];
      }
      val[s0 + q] = csrval[rp + k];
    } else {
      if (base >= 0) c16[q] = (uint16_t)0xFFFFu;
      else c32[q] = -1;
      val[s0 + q] = 0.0;
    }
  }
}

static __global__ void ellr_kernel_init_x(int64_t n, double *x)
{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 1.0 + 0.01 * (double)((i * 7) % 13);
}

#endif
