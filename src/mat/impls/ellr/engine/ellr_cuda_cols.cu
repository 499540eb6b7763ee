/*
  ellr_cuda_cols.cu - which slices store 16-bit column offsets (ellr_cuda_cols.cuh), decided on the GPU.

  One pass over the CSR column indices in the fill's own mapping (T lanes per stored row): each lane's smallest
  and largest column, reduced over the warp when its rows share a slice, then by atomics per slice; a slice is
  packed when its span fits ELLR_COL16_SPAN.  Slice sizes in words, a scan, and the total comes back.
*/
#include "ellr_cuda_cols.cuh"
#include "ellr_cuda_util.cuh"

#include "ellr_cuda_scan.cuh"
#include <climits>

/* T lanes per stored row (any T: a row's smallest and largest column do not depend on the layout). */
__global__ void ellr_kernel_col_span(int64_t nstoredrows, int32_t nrows, int32_t C, int32_t T, const int32_t *__restrict__ rowlen, const int32_t *__restrict__ perm, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ col, int32_t *lo, int32_t *hi)
{
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t i = g / T;
  const int     t = (int)(g - i * T);
  int32_t       a = INT_MAX, b = -1;
  if (i < nrows) {
    const int32_t  len = rowlen[i];
    const int32_t *cj  = col + rowptr[perm ? perm[i] : i];
    for (int32_t k = t; k < len; k += T) {
      const int32_t c = cj[k];
      a               = min(a, c);
      b               = max(b, c);
    }
  }
  const int64_t last = ((int64_t)blockIdx.x * blockDim.x + (threadIdx.x | 31)) / T;
  const int64_t sl   = (i < nstoredrows ? i : min(last, nstoredrows - 1)) / C;
  const int64_t s0   = __shfl_sync(0xffffffffu, sl, 0);
  if (__all_sync(0xffffffffu, sl == s0)) {
    for (int o = 16; o > 0; o >>= 1) {
      a = min(a, __shfl_down_sync(0xffffffffu, a, o));
      b = max(b, __shfl_down_sync(0xffffffffu, b, o));
    }
    if ((threadIdx.x & 31) == 0 && b >= 0) {
      atomicMin(lo + s0, a);
      atomicMax(hi + s0, b);
    }
  } else if (b >= 0) {
    atomicMin(lo + sl, a);
    atomicMax(hi + sl, b);
  }
}

/* One thread per stored row: its CSR row's first and last column (span[p - r0], from the host) into its slice's
   span, for the rows of the window [r0, r1) only. */
__global__ void ellr_kernel_col_span_rows(int64_t nstoredrows, int32_t nrows, int32_t C, const int32_t *__restrict__ perm, int32_t r0, int32_t r1, const int2 *__restrict__ span, int32_t *lo, int32_t *hi)
{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows || i >= nstoredrows) return;
  const int32_t p = perm ? perm[i] : (int32_t)i;
  if (p < r0 || p >= r1) return;
  const int2 sp = span[p - r0];
  if (sp.y < 0) return; /* an empty row */
  atomicMin(lo + i / C, sp.x);
  atomicMax(hi + i / C, sp.y);
}

__global__ void ellr_kernel_col_slices(int32_t nslices, int index_bits, const int64_t *__restrict__ slice_start, const int32_t *__restrict__ lo, const int32_t *__restrict__ hi, int32_t *base, int64_t *words, int *npacked)
{
  const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int           p = 0;
  if (s < nslices) {
    p           = index_bits == 0 && (hi[s] < 0 || (int64_t)hi[s] - lo[s] <= ELLR_COL16_SPAN);
    base[s]     = p ? (hi[s] < 0 ? 0 : lo[s]) : -1;
    words[s + 1] = ELLR_COLS_SLICE_WORDS(slice_start[s + 1] - slice_start[s], p);
  }
  p = __syncthreads_count(p);
  if (threadIdx.x == 0 && p) atomicAdd(npacked, p);
}

/* What fills lo and hi (the slices' spans), on s. */
typedef struct {
  const int32_t *d_rowptr, *d_col; /* the CSR on the device, or */
  const ellr_csr *a;               /* the host CSR, staged a chunk of rows at a time */
  int32_t         stage_rows;
} span_source;

static ellr_status spans(const ellr_plan *pl, const ellr_dplan *dp, const span_source *src, cudaStream_t s, int32_t *lo, int32_t *hi)
{
  const int32_t ns = pl->nslices;
  if (src->d_col) {
    const int32_t T           = pl->per_slice_T ? ellr_default_threads_per_row(pl->stats.meanrowlen) : pl->T; /* the fill's lanes */
    const int64_t nstoredrows = (int64_t)ns * pl->C, threads = nstoredrows * T;
    if (threads > 0 && pl->stats.nnz > 0) ellr_kernel_col_span<<<(unsigned)((threads + 255) / 256), 256, 0, s>>>(nstoredrows, pl->nrows, pl->C, T, dp->rowlen, dp->perm, src->d_rowptr, src->d_col, lo, hi);
    CU(cudaPeekAtLastError());
    return ELLR_OK;
  }
  const ellr_csr *a    = src->a;
  const int32_t   n    = a->nrows;
  const int32_t   rows = src->stage_rows > 0 && src->stage_rows < n ? src->stage_rows : n;
  if (n <= 0 || pl->stats.nnz <= 0) return ELLR_OK;
  int2       *h = (int2 *)ellr_malloc((size_t)rows * sizeof(int2)), *dspan = NULL;
  ellr_status st = h ? salloc(&dspan, (size_t)rows, s, "the rows' column spans") : ellr_error(ELLR_ERR_MEM, "cannot allocate %d rows' column spans", rows);
  for (int32_t r0 = 0; !st && r0 < n; r0 += rows) {
    const int32_t r1 = n - r0 < rows ? n : r0 + rows;
    cudaError_t   e  = cudaStreamSynchronize(s); /* the previous chunk's kernel has read h's upload */
    if (e != cudaSuccess) {
      st = cu_err(e, "cudaStreamSynchronize", __LINE__);
      break;
    }
    for (int32_t p = r0; p < r1; p++) {
      const int32_t b = a->rowptr[p], l = a->rowptr[p + 1] - b;
      h[p - r0]       = l > 0 ? make_int2(a->colidx[b], a->colidx[b + l - 1]) : make_int2(INT_MAX, -1);
    }
    if ((e = cudaMemcpyAsync(dspan, h, (size_t)(r1 - r0) * sizeof(int2), cudaMemcpyHostToDevice, s)) != cudaSuccess) st = cu_err(e, "cudaMemcpyAsync (the rows' column spans)", __LINE__);
    if (!st) ellr_kernel_col_span_rows<<<(unsigned)(((int64_t)pl->nrows + 255) / 256), 256, 0, s>>>((int64_t)ns * pl->C, pl->nrows, pl->C, dp->perm, r0, r1, dspan, lo, hi);
    if (!st && (e = cudaPeekAtLastError()) != cudaSuccess) st = cu_err(e, "ellr_kernel_col_span_rows", __LINE__);
  }
  const cudaError_t e = cudaStreamSynchronize(s); /* on every path: no copy may outlive h */
  if (!st && e != cudaSuccess) st = cu_err(e, "cudaStreamSynchronize", __LINE__);
  sfree(&dspan, s);
  ellr_free(h);
  return st;
}

static ellr_status cols_plan(const ellr_plan *pl, const ellr_dplan *dp, const span_source *src, int index_bits, cudaStream_t s, ellr_dcols *c, ellr_stats *st);

ellr_status ellr_cuda_cols_plan(const ellr_plan *pl, const ellr_dplan *dp, const int32_t *d_rowptr, const int32_t *d_col, int index_bits, cudaStream_t s, ellr_dcols *c, ellr_stats *st)
{
  const span_source src = {d_rowptr, d_col, NULL, 0};
  return cols_plan(pl, dp, &src, index_bits, s, c, st);
}

ellr_status ellr_cuda_cols_plan_host(const ellr_plan *pl, const ellr_dplan *dp, const ellr_csr *a, int index_bits, int32_t stage_rows, cudaStream_t s, ellr_dcols *c, ellr_stats *st)
{
  if (!a || !a->cols_sorted || a->nrows != pl->nrows) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_cols_plan_host: a host CSR of the plan's %d rows, columns increasing within each row, is needed", pl->nrows);
  const span_source src = {NULL, NULL, a, stage_rows};
  return cols_plan(pl, dp, &src, index_bits, s, c, st);
}

static ellr_status cols_plan(const ellr_plan *pl, const ellr_dplan *dp, const span_source *src, int index_bits, cudaStream_t s, ellr_dcols *c, ellr_stats *st)
{
  const int32_t ns = pl->nslices;
  if (index_bits != 0 && index_bits != 32) return ellr_error(ELLR_ERR_ARG, "index bits %d is not 0 (automatic) or 32", index_bits);
  if (c->nslices_cap != ns || !c->base) {
    if (c->borrowed) c->base = NULL, c->start = NULL, c->borrowed = 0;
    TRY(dfree(&c->base));
    TRY(dfree(&c->start));
    c->nslices_cap = 0;
    TRY(dalloc(&c->base, (size_t)ns, "the column bases"));
    TRY(dalloc(&c->start, (size_t)ns + 1, "the column offsets"));
    c->nslices_cap = ns;
  }
  int32_t *lo = NULL, *hi = NULL;
  int     *cnt = NULL;
  int      packed = 0;
  ellr_status   err = ELLR_OK;
  cudaError_t   e   = cudaSuccess;
#define CUE(call) \
  if (!err && (e = (call)) != cudaSuccess) err = cu_err(e, #call, __LINE__)
  err = salloc(&lo, (size_t)ns, s, "the column spans");
  if (!err) err = salloc(&hi, (size_t)ns, s, "the column spans");
  if (!err) err = salloc(&cnt, 1, s, "the packed-slice count");
  /* 0x7F7F7F7F: above the columns of any matrix under 2^31 - 2^24 columns; past that a slice's base may sit below
     its smallest column, which keeps every offset inside the span checked, so still exact */
  CUE(cudaMemsetAsync(lo, 0x7F, (size_t)ns * sizeof(int32_t), s));
  CUE(cudaMemsetAsync(hi, 0xFF, (size_t)ns * sizeof(int32_t), s)); /* -1 */
  CUE(cudaMemsetAsync(cnt, 0, sizeof(int), s));
  CUE(cudaMemsetAsync(c->start, 0, sizeof(int64_t), s));
  if (!err && ns > 0) {
    err = spans(pl, dp, src, s, lo, hi);
    if (!err) ellr_kernel_col_slices<<<(unsigned)((ns + 255) / 256), 256, 0, s>>>(ns, index_bits, dp->slice_start, lo, hi, c->base, c->start, cnt);
    CUE(cudaPeekAtLastError());
    if (!err) err = ellr_cuda_inclusive_sum(c->start + 1, ns, s);
  }
  CUE(cudaMemcpyAsync(&c->nwords, c->start + ns, sizeof(int64_t), cudaMemcpyDeviceToHost, s));
  CUE(cudaMemcpyAsync(&packed, cnt, sizeof(int), cudaMemcpyDeviceToHost, s));
  CUE(cudaStreamSynchronize(s));
#undef CUE
  sfree(&lo, s);
  sfree(&hi, s);
  sfree(&cnt, s);
  if (err) return err;
  st->packed_slices = packed;
  st->index_bytes   = (size_t)c->nwords * sizeof(uint16_t);
  return ELLR_OK;
}

ellr_status ellr_cuda_cols_free(ellr_dcols *c)
{
  if (c->borrowed) c->base = NULL, c->start = NULL, c->borrowed = 0; /* the plan's to free */
  ellr_status st = dfree(&c->base), s2;
  if ((s2 = dfree(&c->start)) && !st) st = s2;
  if ((s2 = dfree(&c->words)) && !st) st = s2;
  c->nwords      = 0;
  c->nslices_cap = 0;
  return st;
}
