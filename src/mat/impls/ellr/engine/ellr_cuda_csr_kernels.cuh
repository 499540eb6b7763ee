/*
  ellr_cuda_csr_kernels.cuh - the CSR kernels (adaptive CSR-vector, IPCSR) (included by ellr_cuda_csr.cu only).

  They run on the CSR arrays the backend uploads anyway (no padded layout, no fill):
  - adaptive CSR-vector: T lanes per row, T picked from the mean row length, shuffle reduction.
  - IPCSR: a thread block takes a row block -- consecutive rows whose nonzeros fit its shared
    memory -- streams their products val * x[col] into shared memory with every thread (coalesced whatever
    the row lengths), then sums each row there with a group of threads sized to the block's row count.
    Rows longer than ELLR_IPCSR_CAP (the long-row path) get a block each, whose 8 warps share the row and
    meet in a block reduction: no warp walks a whole long row and no atomics (the answer is deterministic).
*/
#ifndef ELLR_CUDA_CSR_KERNELS_CUH
#define ELLR_CUDA_CSR_KERNELS_CUH

#include <cstdint>
#include <cuda_runtime.h>

#include "ellr_cuda_csr.cuh" /* ELLR_IPCSR_CAP: a row block starts wherever a multiple of CAP is crossed */
#define ELLR_IPCSR_ROWS    1024 /* and every ELLR_IPCSR_ROWS rows (runs of empty rows stay short) */
#define ELLR_IPCSR_THREADS 256

struct ellr_csr_kargs {
  int32_t        nrows;  /* CSR rows */
  const int32_t *rowptr; /* [nrows + 1] */
  const int32_t *col;
  const double  *val;
  const int32_t *rows;   /* compressed rows: CSR row -> row of y; NULL = identity */
  const int32_t *blocks; /* IPCSR: [nblocks + 1] first row of each row block, then nrows */
  const double  *x;
  const double  *z; /* may alias y */
  double        *y;
};

template <int G>
__device__ __forceinline__ double ellr_csr_reduce(double sum)
{
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o, G);
  return sum;
}

__device__ __forceinline__ void ellr_csr_store(const ellr_csr_kargs &a, int32_t i, double sum, bool addz)
{
  const int32_t o = a.rows ? a.rows[i] : i;
  a.y[o]          = addz ? a.z[o] + sum : sum;
}

/* ---- CSR-vector: T lanes per row ------------------------------------------------------------------ */
template <int T, bool ADDZ>
__global__ void __launch_bounds__(1024) ellr_kernel_csr_vector(const ellr_csr_kargs a)
{
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if ((g & ~(int64_t)31) / T >= a.nrows) return; /* whole warp past the end (the shuffles need whole warps) */
  const int64_t i      = g / T;
  const int     t      = (int)(g % T);
  const bool    active = i < a.nrows;
  const int32_t k1     = active ? __ldg(a.rowptr + i + 1) : 0;
  double        sum    = 0.0;
  /* the compiler's unrolled loop.  Grouping a lane's last loads (as IPCSR below; for every row, or only for rows of
     up to 4 entries per lane) measured 1.1-1.8x slower on the matrices with long rows (web-NotreDame, the power
     laws, EPA; H100, two runs; same registers and unrolling in the PTX, cause not found) for gains inside the
     run-to-run spread on the small ones: left out */
  for (int32_t k = (active ? __ldg(a.rowptr + i) : 0) + t; k < k1; k += T) sum = fma(__ldg(a.val + k), __ldg(a.x + __ldg(a.col + k)), sum);
  sum = ellr_csr_reduce<T>(sum);
  if (t == 0 && active) ellr_csr_store(a, (int32_t)i, sum, ADDZ);
}

/* y += A^T x by rows (T lanes per row, atomics into y, which holds z or 0). */
template <int T>
__global__ void __launch_bounds__(1024) ellr_kernel_csr_transpose(const ellr_csr_kargs a)
{
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t i = g / T;
  if (i >= a.nrows) return;
  const double  xr = __ldg(a.x + (a.rows ? a.rows[i] : i));
  const int32_t k1 = __ldg(a.rowptr + i + 1);
  for (int32_t k = __ldg(a.rowptr + i) + (int)(g % T); k < k1; k += T) atomicAdd(a.y + __ldg(a.col + k), __ldg(a.val + k) * xr);
}

/* ---- IPCSR: row blocks through shared memory -------------------------------------------------------- */
/* Sum over the rows of the block [r0, r1) of the products in prod (offset k0), G threads per row. */
template <int G, bool ADDZ>
__device__ __forceinline__ void ellr_ipcsr_rows(const ellr_csr_kargs &a, const double *prod, int32_t r0, int32_t r1, int32_t k0)
{
  const int32_t R    = r1 - r0;
  const int     lane = threadIdx.x % G;
  for (int32_t base = 0; base < R; base += ELLR_IPCSR_THREADS / G) { /* the same trip count in every thread */
    const int32_t rr     = base + (int32_t)threadIdx.x / G;
    const bool    active = rr < R;
    double        sum    = 0.0;
    if (active) {
      const int32_t e = a.rowptr[r0 + rr + 1] - k0;
      for (int32_t k = a.rowptr[r0 + rr] - k0 + lane; k < e; k += G) sum += prod[k];
    }
    sum = ellr_csr_reduce<G>(sum);
    if (lane == 0 && active) ellr_csr_store(a, r0 + rr, sum, ADDZ);
  }
}

template <bool ADDZ>
__global__ void __launch_bounds__(ELLR_IPCSR_THREADS) ellr_kernel_ipcsr(const ellr_csr_kargs a)
{
  __shared__ double prod[2 * ELLR_IPCSR_CAP];
  const int32_t r0 = a.blocks[blockIdx.x], r1 = a.blocks[blockIdx.x + 1];
  const int32_t k0 = a.rowptr[r0], k1 = a.rowptr[r1];
  if (k1 - k0 > 2 * ELLR_IPCSR_CAP) {
    /* the long-row path: one row (the block builder gives every row over CAP its own block) */
    double sum = 0.0;
    for (int32_t k = k0 + (int32_t)threadIdx.x; k < k1; k += ELLR_IPCSR_THREADS) sum = fma(__ldg(a.val + k), __ldg(a.x + __ldg(a.col + k)), sum);
    sum = ellr_csr_reduce<32>(sum);
    if ((threadIdx.x & 31) == 0) prod[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
      sum = threadIdx.x < ELLR_IPCSR_THREADS / 32 ? prod[threadIdx.x] : 0.0;
      sum = ellr_csr_reduce<32>(sum);
      if (threadIdx.x == 0) ellr_csr_store(a, r0, sum, ADDZ);
    }
    return;
  }
  /* four entries per thread in flight, the last group too (predicated): a block of ~CAP entries is one round trip
     to memory per thread, not one per leftover entry (the x gathers are latency-bound) */
  for (int32_t k = k0 + (int32_t)threadIdx.x; k < k1; k += 4 * ELLR_IPCSR_THREADS) {
    int32_t c[4];
    double  v[4];
#pragma unroll
    for (int q = 0; q < 4; q++) {
      const bool in = k + q * ELLR_IPCSR_THREADS < k1;
      c[q]          = in ? __ldg(a.col + k + q * ELLR_IPCSR_THREADS) : 0;
      v[q]          = in ? __ldg(a.val + k + q * ELLR_IPCSR_THREADS) : 0.0;
    }
#pragma unroll
    for (int q = 0; q < 4; q++)
      if (k + q * ELLR_IPCSR_THREADS < k1) prod[k - k0 + q * ELLR_IPCSR_THREADS] = v[q] * __ldg(a.x + c[q]);
  }
  __syncthreads();
  /* threads per row: as many as the rows leave, up to a warp (block-uniform, so the shuffles see whole warps) */
  const int32_t R = r1 - r0;
  if (R * 32 <= ELLR_IPCSR_THREADS) ellr_ipcsr_rows<32, ADDZ>(a, prod, r0, r1, k0);
  else if (R * 8 <= ELLR_IPCSR_THREADS) ellr_ipcsr_rows<8, ADDZ>(a, prod, r0, r1, k0);
  else if (R * 2 <= ELLR_IPCSR_THREADS) ellr_ipcsr_rows<2, ADDZ>(a, prod, r0, r1, k0);
  else ellr_ipcsr_rows<1, ADDZ>(a, prod, r0, r1, k0);
}

/* Row block starts: row i starts a block when it is the first, when its first nonzero lies in another
   CAP-chunk than the previous row's, when it or the previous row is longer than CAP, or every
   ELLR_IPCSR_ROWS rows; flag[nrows] = 1 closes the list.  A block that is not a single long row then holds
   fewer than 2 CAP nonzeros (rows starting in one chunk, the last no longer than CAP). */
__global__ void ellr_kernel_ipcsr_flags(int32_t n, const int32_t *__restrict__ rowptr, char *flag)
{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  if (i == 0 || i == n || i % ELLR_IPCSR_ROWS == 0) {
    flag[i] = 1;
    return;
  }
  const int32_t p = rowptr[i - 1], c = rowptr[i], nx = rowptr[i + 1];
  flag[i] = (p / ELLR_IPCSR_CAP != c / ELLR_IPCSR_CAP) || (c - p > ELLR_IPCSR_CAP) || (nx - c > ELLR_IPCSR_CAP);
}

#endif
