/* ellr_cuda_long.cu - the long-row path of the CUDA backend (ellr_cuda_long.cuh). */
#include "ellr_cuda_long.cuh"
#include "ellr_cuda_util.cuh"
#include "ellr_cuda_scan.cuh"

#include <climits>

#define ELLR_LONG_THREADS 256

__global__ void ellr_kernel_long_flags(int32_t n, int32_t min_len, int32_t *len, char *flag)
{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const bool is_long = len[i] >= min_len;
  flag[i]            = is_long;
  if (is_long) len[i] = 0; /* an empty row in the slices */
}

/* start[k + 1] = the long row's length, first_chunk[k + 1] = its chunks (scanned afterwards). */
__global__ void ellr_kernel_long_sizes(int32_t nlong, const int32_t *__restrict__ rows, const int32_t *__restrict__ rowptr, int64_t *start, int32_t *first_chunk)
{
  const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= nlong) return;
  const int32_t l    = rowptr[rows[k] + 1] - rowptr[rows[k]];
  start[k + 1]       = l;
  first_chunk[k + 1] = (l + ELLR_LONG_CHUNK - 1) / ELLR_LONG_CHUNK;
}

__global__ void ellr_kernel_long_chunk_rows(int32_t nlong, const int32_t *__restrict__ first_chunk, int32_t *chunk_row)
{
  const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= nlong) return;
  for (int32_t c = first_chunk[k]; c < first_chunk[k + 1]; c++) chunk_row[c] = (int32_t)k;
}

__global__ void ellr_kernel_long_outrow(int32_t nlong, const int32_t *__restrict__ rows, const int32_t *__restrict__ crows, int32_t *out)
{
  const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k < nlong) out[k] = crows[rows[k]];
}

struct ellr_long_kargs {
  int32_t         nchunks;
  const int32_t  *rows, *out, *first_chunk, *chunk_row, *col;
  const int64_t  *start;
  const double   *val;
  double         *partial;
  unsigned       *arrived;
  const double   *x;
  double         *y;
};

/* The chunk of this thread's warp gw: its long row k and entries [e0, e1); false past the last chunk (warp-uniform). */
__device__ __forceinline__ bool ellr_long_chunk(const ellr_long_kargs &a, int32_t *gw, int32_t *k, int64_t *e0, int64_t *e1)
{
  *gw = (int32_t)(((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
  if (*gw >= a.nchunks) return false;
  *k  = a.chunk_row[*gw];
  *e0 = a.start[*k] + (int64_t)(*gw - a.first_chunk[*k]) * ELLR_LONG_CHUNK;
  *e1 = min(*e0 + ELLR_LONG_CHUNK, a.start[*k + 1]);
  return true;
}

/* Copies the chunk of each warp out of the CSR: coalesced on both sides. */
__global__ void __launch_bounds__(ELLR_LONG_THREADS) ellr_kernel_long_fill(ellr_long_kargs a, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ csrcol, const double *__restrict__ csrval, int32_t *col, double *val)
{
  const int lane = threadIdx.x & 31;
  int32_t   gw, k;
  int64_t   e0, e1;
  if (!ellr_long_chunk(a, &gw, &k, &e0, &e1)) return;
  const int64_t src = (int64_t)rowptr[a.rows[k]] - a.start[k];
  for (int64_t e = e0 + lane; e < e1; e += 32) {
    if (col) col[e] = csrcol[src + e];
    val[e] = csrval[src + e];
  }
}

__device__ __forceinline__ double ellr_long_warp_sum(double v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* One warp per chunk; JOIN: ELLR_LONG_JOIN_SEGMENTED or _ATOMIC (ellr.h). */
template <int JOIN>
__global__ void __launch_bounds__(ELLR_LONG_THREADS) ellr_kernel_long(const ellr_long_kargs a)
{
  const int lane = threadIdx.x & 31;
  int32_t   gw, k;
  int64_t   e0, e1;
  if (!ellr_long_chunk(a, &gw, &k, &e0, &e1)) return;
  /* four loads per lane in flight: the gathers of x are latency-bound */
  double sum = 0.0;
  for (int64_t e = e0 + lane; e < e1; e += 128) {
    double  v[4] = {0.0, 0.0, 0.0, 0.0};
    int32_t c[4] = {0, 0, 0, 0};
#pragma unroll
    for (int q = 0; q < 4; q++)
      if (e + 32 * q < e1) {
        c[q] = __ldg(a.col + e + 32 * q);
        v[q] = __ldg(a.val + e + 32 * q);
      }
#pragma unroll
    for (int q = 0; q < 4; q++) sum = fma(v[q], e + 32 * q < e1 ? __ldg(a.x + c[q]) : 0.0, sum); /* past the end: 0 * 0, whatever x holds */
  }
  sum              = ellr_long_warp_sum(sum);
  const int32_t r  = a.out ? a.out[k] : a.rows[k];
  const int32_t c0 = a.first_chunk[k], nc = a.first_chunk[k + 1] - c0;
  if (nc == 1) { /* the whole row: no join */
    if (lane == 0) a.y[r] += sum;
    return;
  }
  if (JOIN == ELLR_LONG_JOIN_ATOMIC) {
    if (lane == 0) atomicAdd(a.y + r, sum);
    return;
  }
  /* segmented: publish this chunk's sum; the row's last warp to arrive adds all of them, in chunk order by lane
     and then a fixed shuffle tree, whatever the order the warps arrived in */
  unsigned last = 0;
  if (lane == 0) {
    a.partial[gw] = sum;
    __threadfence();
    last = atomicAdd(a.arrived + k, 1u) == (unsigned)(nc - 1);
  }
  if (!__shfl_sync(0xffffffffu, last, 0)) return;
  __threadfence();
  double tot = 0.0;
  for (int32_t c = c0 + lane; c < c0 + nc; c += 32) tot += __ldcg(a.partial + c);
  tot = ellr_long_warp_sum(tot);
  if (lane == 0) {
    a.y[r]        += tot;
    a.arrived[k] = 0; /* ready for the next product (kernel boundaries order it) */
  }
}

/* y += (long rows)^T x: atomics into y, as the slices' transpose. */
__global__ void __launch_bounds__(ELLR_LONG_THREADS) ellr_kernel_long_transpose(const ellr_long_kargs a)
{
  const int lane = threadIdx.x & 31;
  int32_t   gw, k;
  int64_t   e0, e1;
  if (!ellr_long_chunk(a, &gw, &k, &e0, &e1)) return;
  const double xr = __ldg(a.x + (a.out ? a.out[k] : a.rows[k]));
  for (int64_t e = e0 + lane; e < e1; e += 32) atomicAdd(a.y + __ldg(a.col + e), __ldg(a.val + e) * xr);
}

static unsigned long_grid(int64_t warps) { return (unsigned)((warps * 32 + ELLR_LONG_THREADS - 1) / ELLR_LONG_THREADS); }

static ellr_long_kargs long_args(const ellr_dlong *lr)
{
  ellr_long_kargs a;
  a.nchunks     = lr->nchunks;
  a.rows        = lr->rows;
  a.out         = lr->out;
  a.first_chunk = lr->first_chunk;
  a.chunk_row   = lr->chunk_row;
  a.col         = lr->col;
  a.start       = lr->start;
  a.val         = lr->val;
  a.partial     = lr->partial;
  a.arrived     = lr->arrived;
  a.x           = NULL;
  a.y           = NULL;
  return a;
}

/* In-place inclusive sum of d[0..n) on s, its last element read back into *last (s synchronized). */
template <class X>
static ellr_status scan_and_read_last(X *d, int32_t n, cudaStream_t s, X *last)
{
  TRY(ellr_cuda_inclusive_sum(d, n, s));
  CU(cudaMemcpyAsync(last, d + n - 1, sizeof(X), cudaMemcpyDeviceToHost, s));
  CU(cudaStreamSynchronize(s));
  return ELLR_OK;
}

ellr_status ellr_cuda_long_plan(const int32_t *d_rowptr, int32_t n, int32_t min_len, int32_t *d_len, cudaStream_t s, ellr_dlong *lr)
{
  memset(lr, 0, sizeof(*lr));
  if (n <= 0) return ELLR_OK;
  char       *flag = NULL;
  int32_t     nsel = 0;
  ellr_status st   = salloc(&flag, (size_t)n, s, "the long-row flags");
  if (st) return st;
  ellr_kernel_long_flags<<<(unsigned)(((int64_t)n + 255) / 256), 256, 0, s>>>(n, min_len, d_len, flag);
  const cudaError_t e = cudaPeekAtLastError();
  if (e != cudaSuccess) st = cu_err(e, "ellr_kernel_long_flags", __LINE__);
  if (!st) st = ellr_cuda_select_flagged(flag, n, s, &lr->rows, &nsel, "the long rows");
  sfree(&flag, s);
  if (st) return st;
  lr->nlong = nsel;
  if (!nsel) return dfree(&lr->rows);
  TRY(dalloc(&lr->start, (size_t)nsel + 1, "the long rows' offsets"));
  TRY(dalloc(&lr->first_chunk, (size_t)nsel + 1, "the long rows' chunks"));
  CU(cudaMemsetAsync(lr->start, 0, sizeof(int64_t), s));
  CU(cudaMemsetAsync(lr->first_chunk, 0, sizeof(int32_t), s));
  ellr_kernel_long_sizes<<<(unsigned)((nsel + 255) / 256), 256, 0, s>>>(nsel, lr->rows, d_rowptr, lr->start, lr->first_chunk);
  CU(cudaPeekAtLastError());
  TRY(scan_and_read_last(lr->start + 1, nsel, s, &lr->nentries));
  TRY(scan_and_read_last(lr->first_chunk + 1, nsel, s, &lr->nchunks));
  TRY(dalloc(&lr->chunk_row, (size_t)lr->nchunks, "the long rows' chunk map"));
  ellr_kernel_long_chunk_rows<<<(unsigned)((nsel + 255) / 256), 256, 0, s>>>(nsel, lr->first_chunk, lr->chunk_row);
  CU(cudaPeekAtLastError());
  CU(cudaStreamSynchronize(s));
  return ELLR_OK;
}

ellr_status ellr_cuda_long_outrow(const int32_t *d_rows, cudaStream_t s, ellr_dlong *lr)
{
  if (!d_rows || !lr->nlong) return ELLR_OK;
  TRY(dalloc(&lr->out, (size_t)lr->nlong, "the long rows' rows of y"));
  ellr_kernel_long_outrow<<<(unsigned)((lr->nlong + 255) / 256), 256, 0, s>>>(lr->nlong, lr->rows, d_rows, lr->out);
  CU(cudaPeekAtLastError());
  CU(cudaStreamSynchronize(s));
  return ELLR_OK;
}

ellr_status ellr_cuda_long_fill(ellr_dlong *lr, const int32_t *d_rowptr, const int32_t *d_col, const double *d_val, cudaStream_t s)
{
  if (!lr->nlong) return ELLR_OK;
  if (!lr->val) {
    if (!d_col) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_long_fill: a values-only fill before the first full one");
    TRY(ellr_mem_check((size_t)lr->nentries * 12 + (size_t)lr->nchunks * 8, "the long rows' entries"));
    TRY(dalloc(&lr->col, (size_t)lr->nentries, "the long rows' column indices"));
    TRY(dalloc(&lr->val, (size_t)lr->nentries, "the long rows' values"));
    TRY(dalloc(&lr->partial, (size_t)lr->nchunks, "the long rows' partial sums"));
    TRY(dalloc(&lr->arrived, (size_t)lr->nlong, "the long rows' arrival counters"));
    CU(cudaMemsetAsync(lr->arrived, 0, (size_t)lr->nlong * sizeof(unsigned), s));
  }
  ellr_kernel_long_fill<<<long_grid(lr->nchunks), ELLR_LONG_THREADS, 0, s>>>(long_args(lr), d_rowptr, d_col, d_val, d_col ? lr->col : NULL, lr->val);
  CU(cudaPeekAtLastError());
  return ELLR_OK;
}

ellr_status ellr_cuda_long_mult(const ellr_dlong *lr, int join, const double *x, double *y, int transpose, cudaStream_t s)
{
  if (!lr->nlong || !lr->nchunks) return ELLR_OK;
  ellr_long_kargs a = long_args(lr);
  a.x               = x;
  a.y               = y;
  if (transpose) ellr_kernel_long_transpose<<<long_grid(lr->nchunks), ELLR_LONG_THREADS, 0, s>>>(a);
  else if (join == ELLR_LONG_JOIN_ATOMIC) ellr_kernel_long<ELLR_LONG_JOIN_ATOMIC><<<long_grid(lr->nchunks), ELLR_LONG_THREADS, 0, s>>>(a);
  else ellr_kernel_long<ELLR_LONG_JOIN_SEGMENTED><<<long_grid(lr->nchunks), ELLR_LONG_THREADS, 0, s>>>(a);
  CU(cudaPeekAtLastError());
  return ELLR_OK;
}

void ellr_cuda_long_probe(int join)
{
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, join == ELLR_LONG_JOIN_ATOMIC ? (const void *)ellr_kernel_long<ELLR_LONG_JOIN_ATOMIC> : (const void *)ellr_kernel_long<ELLR_LONG_JOIN_SEGMENTED>) != cudaSuccess) (void)cudaGetLastError(); /* only the probe's own error */
}

size_t ellr_cuda_long_bytes(const ellr_dlong *lr)
{
  if (!lr->nlong) return 0;
  return (size_t)lr->nlong * (lr->out ? 12 : 8) + ((size_t)lr->nlong + 1) * 12 + (size_t)lr->nchunks * 4 + (lr->val ? (size_t)lr->nentries * 12 + (size_t)lr->nchunks * 8 : 0);
}

ellr_status ellr_cuda_long_free(ellr_dlong *lr)
{
  ellr_status st = ELLR_OK, s2;
#define FREE1(p) \
  if ((s2 = dfree(&lr->p)) && !st) st = s2
  FREE1(rows);
  FREE1(out);
  FREE1(start);
  FREE1(first_chunk);
  FREE1(chunk_row);
  FREE1(col);
  FREE1(val);
  FREE1(partial);
  FREE1(arrived);
#undef FREE1
  lr->nlong = lr->nchunks = 0;
  lr->nentries = 0;
  return st;
}
