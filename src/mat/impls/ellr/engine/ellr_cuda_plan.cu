/*
  ellr_cuda_plan.cu - the layout planned on the GPU (ellr_cuda_plan.cuh).

  order:    one pass over the row offsets gives the lengths, the longest row, the count of non-empty rows
            and the pattern's signature; then, for PELLR, CUB's radix sort of (length, row) pairs by
            decreasing length: stable, so equal lengths keep their row order as in the host plan, and only
            the bits up to the longest row's are sorted (a few passes for short rows).
  geometry: slice widths by a max-reduction over each slice's rows, offsets by a scan, warp iterations
            (PELLR's N_iter) by a reduction; only the slice offsets and a few counters come back.
*/
#include "ellr_cuda_plan.cuh"
#include "ellr_cuda_util.cuh"
#include "ellr_cuda_scan.cuh"

#include <cub/cub.cuh>
#include <cstdlib>
#include <cstring>

/* Counters reduced on the device and read back once per step. */
struct ellr_plan_counters {
  unsigned long long signature, niter, niter_unsorted;
  int                maxlen, nonempty, bad, wmax;
};

__host__ __device__ __forceinline__ unsigned long long ellr_mix64(unsigned long long z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finalizer */
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ unsigned long long ellr_warp_sum(unsigned long long v)
{
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ int ellr_warp_max(int v)
{
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

/* len[i] = rowptr[i+1] - rowptr[i]; rows[i] = i (the sort's values) when rows is given. */
__global__ void ellr_kernel_lengths(int32_t n, const int32_t *__restrict__ rowptr, int32_t *len, int32_t *rows, ellr_plan_counters *c)
{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int           l = 0;
  if (i < n) {
    l      = rowptr[i + 1] - rowptr[i];
    len[i] = l;
    if (rows) rows[i] = (int32_t)i;
  }
  /* the sum of a hash of (row, length) pairs: independent of the order the threads add in */
  unsigned long long h  = i < n ? ellr_mix64(((unsigned long long)i << 32) ^ (unsigned)l ^ 0x9e3779b97f4a7c15ull) : 0;
  unsigned long long ne = (i < n && l > 0) ? 1 : 0;
  int                mx = l, bad = (i < n && l < 0) ? 1 : 0;
  h                     = ellr_warp_sum(h);
  ne                    = ellr_warp_sum(ne);
  mx                    = ellr_warp_max(mx);
  bad                   = __any_sync(0xffffffffu, bad);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&c->signature, h);
    atomicAdd((unsigned *)&c->nonempty, (unsigned)ne);
    atomicMax(&c->maxlen, mx);
    if (bad) atomicOr(&c->bad, 1);
  }
}

__global__ void ellr_kernel_window_offsets(int32_t nseg, int32_t W, int32_t n, int32_t *off)
{
  const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k <= nseg) off[k] = (int32_t)min((int64_t)n, k * W);
}

/* width[s] = the longest row of slice s: a warp's rows usually share a slice (one atomic per warp). */
__global__ void ellr_kernel_slice_width(int64_t nrows, int32_t C, const int32_t *__restrict__ rowlen, int32_t *width)
{
  const int64_t i    = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t last = min((int64_t)(blockIdx.x * blockDim.x + (threadIdx.x | 31)), nrows - 1);
  const int     l    = i < nrows ? rowlen[i] : 0;
  const int64_t s    = (i < nrows ? i : last) / C;
  const int64_t s0   = __shfl_sync(0xffffffffu, s, 0);
  if (__all_sync(0xffffffffu, s == s0)) {
    const int m = ellr_warp_max(l);
    if ((threadIdx.x & 31) == 0 && m > 0) atomicMax(width + s0, m);
  } else if (l > 0) atomicMax(width + s, l);
}

/* Slice sizes in entries: width rounded up to T (T = 0: each slice's own, ellr_slice_threads). */
__global__ void ellr_kernel_slice_sizes(int32_t nslices, int32_t C, int32_t T, const int32_t *__restrict__ width, int64_t *size)
{
  const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (s < nslices) {
    const int32_t Ts = T ? T : ellr_slice_threads(width[s]);
    size[s]          = (int64_t)((width[s] + Ts - 1) / Ts * Ts) * C;
  }
}

/* The widest slice: the automatic T's rule reads it (ellr.h), and each slice's own T is largest there. */
__global__ void ellr_kernel_slice_width_max(int32_t nslices, const int32_t *__restrict__ width, ellr_plan_counters *c)
{
  const int64_t s  = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int     hi = ellr_warp_max(s < nslices ? width[s] : 0);
  if ((threadIdx.x & 31) == 0) atomicMax(&c->wmax, hi);
}

/* PELLR's N_iter: groups of 32/T consecutive rows share a warp and take ceil(longest / T) steps, for the stored
   order (rowlen; with per_slice, each slice's own T and groups inside each slice, read back from slice_start) and,
   with rowptr, for the original order at Tu.  A thread per row; the first row of a group adds the group's steps. */
__global__ void ellr_kernel_niter(int32_t nrows, int32_t C, int32_t T, int per_slice, int32_t Tu, const int64_t *__restrict__ slice_start, const int32_t *__restrict__ rowlen, const int32_t *__restrict__ rowptr, int32_t long_min, ellr_plan_counters *c)
{
  const int64_t      i  = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long it = 0, itu = 0;
  if (i < nrows) {
    int64_t first = 0, end = nrows;
    int     Ti    = T;
    if (per_slice) {
      const int64_t s = i / C;
      Ti              = ellr_slice_threads((slice_start[s + 1] - slice_start[s]) / C);
      first           = s * C;
      end             = min(end, first + C);
    }
    const int rpw = 32 / Ti;
    if ((i - first) % rpw == 0) {
      int a = 0;
      for (int64_t r = i; r < i + rpw && r < end; r++) a = max(a, rowlen[r]);
      it = (unsigned long long)((a + Ti - 1) / Ti);
    }
    if (rowptr && i % (32 / Tu) == 0) {
      int b = 0;
      for (int64_t r = i; r < i + 32 / Tu && r < nrows; r++) {
        const int l = rowptr[r + 1] - rowptr[r];
        b           = max(b, l >= long_min ? 0 : l); /* long rows are empty rows of the slices */
      }
      itu = (unsigned long long)((b + Tu - 1) / Tu);
    }
  }
  it  = ellr_warp_sum(it);
  itu = ellr_warp_sum(itu);
  if ((threadIdx.x & 31) == 0 && (it || itu)) {
    atomicAdd(&c->niter, it);
    atomicAdd(&c->niter_unsorted, itu);
  }
}

static unsigned grid_of(int64_t n, int bs) { return (unsigned)((n + bs - 1) / bs > 0 ? (n + bs - 1) / bs : 1); }

static int bits_for(int v)
{
  int b = 1;
  while (b < 31 && (1 << b) <= v) b++;
  return b;
}

/* Everything the order step allocates besides dp's arrays, freed on every path. */
struct order_scratch {
  cudaStream_t        s;
  ellr_plan_counters *c;
  int32_t            *keys, *rows, *offsets, *width, *ckeys, *crows;
  int64_t            *sum;
  char               *temp;
  explicit order_scratch(cudaStream_t st) : s(st), c(NULL), keys(NULL), rows(NULL), offsets(NULL), width(NULL), ckeys(NULL), crows(NULL), sum(NULL), temp(NULL) { }
  ~order_scratch()
  {
    sfree(&c, s);
    sfree(&keys, s);
    sfree(&rows, s);
    sfree(&offsets, s);
    sfree(&width, s);
    sfree(&ckeys, s);
    sfree(&crows, s);
    sfree(&sum, s);
    sfree(&temp, s);
  }
};

/* Rows sorted by decreasing length (stable) inside windows of W rows (W <= 0 or >= n: all rows), from the lengths
   in w->keys and the rows in w->rows into kout / vout. */
static ellr_status sort_rows(int32_t W, int32_t n, int maxlen, cudaStream_t s, order_scratch *w, int32_t *kout, int32_t *vout)
{
  const unsigned *kin    = (const unsigned *)w->keys;
  const int       endbit = bits_for(maxlen);
  size_t          bytes  = 0;
  sfree(&w->temp, s);
  if (W <= 0 || W >= n) {
    CU(cub::DeviceRadixSort::SortPairsDescending(NULL, bytes, kin, (unsigned *)kout, w->rows, vout, n, 0, endbit, s));
    TRY(salloc(&w->temp, bytes, s, "the sort's scratch"));
    CU(cub::DeviceRadixSort::SortPairsDescending(w->temp, bytes, kin, (unsigned *)kout, w->rows, vout, n, 0, endbit, s));
    return ELLR_OK;
  }
  const int32_t nseg = (int32_t)(((int64_t)n + W - 1) / W);
  sfree(&w->offsets, s);
  TRY(salloc(&w->offsets, (size_t)nseg + 1, s, "the sort windows"));
  ellr_kernel_window_offsets<<<grid_of((int64_t)nseg + 1, 256), 256, 0, s>>>(nseg, W, n, w->offsets);
  CU(cudaPeekAtLastError());
  CU(cub::DeviceSegmentedRadixSort::SortPairsDescending(NULL, bytes, kin, (unsigned *)kout, w->rows, vout, n, nseg, w->offsets, w->offsets + 1, 0, endbit, s));
  TRY(salloc(&w->temp, bytes, s, "the sort's scratch"));
  CU(cub::DeviceSegmentedRadixSort::SortPairsDescending(w->temp, bytes, kin, (unsigned *)kout, w->rows, vout, n, nseg, w->offsets, w->offsets + 1, 0, endbit, s));
  return ELLR_OK;
}

/* Entries stored at T = 1 by slices of C rows of lengths len (stored order), as the host's ellr_stored_entries. */
static ellr_status stored_entries(const int32_t *len, int32_t n, int32_t C, cudaStream_t s, order_scratch *w, int64_t *out)
{
  const int32_t ns    = (int32_t)(((int64_t)n + C - 1) / C);
  size_t        bytes = 0;
  sfree(&w->width, s);
  sfree(&w->temp, s);
  TRY(salloc(&w->width, (size_t)ns, s, "the slice widths"));
  CU(cudaMemsetAsync(w->width, 0, (size_t)ns * sizeof(int32_t), s));
  ellr_kernel_slice_width<<<grid_of(n, 256), 256, 0, s>>>(n, C, len, w->width);
  CU(cudaPeekAtLastError());
  CU(cub::DeviceReduce::Sum(NULL, bytes, w->width, w->sum, ns, s));
  TRY(salloc(&w->temp, bytes, s, "the reduction's scratch"));
  CU(cub::DeviceReduce::Sum(w->temp, bytes, w->width, w->sum, ns, s));
  CU(cudaMemcpyAsync(out, w->sum, sizeof(int64_t), cudaMemcpyDeviceToHost, s));
  CU(cudaStreamSynchronize(s));
  *out *= C;
  return ELLR_OK;
}

/* ELLR_SORT_WINDOW_AUTO (ellr.h), the host plan's choice: the full sort into dp; rows back in their order when it
   saves too little, else the first window that stores as little (its order copied into dp). */
static ellr_status choose_order(int32_t n, int maxlen, int32_t C, cudaStream_t s, order_scratch *w, ellr_dplan *dp, ellr_plan *pl)
{
  int64_t all, none, cand;
  TRY(sort_rows(0, n, maxlen, s, w, dp->rowlen, dp->perm));
  TRY(stored_entries(dp->rowlen, n, C, s, w, &all));
  TRY(stored_entries(w->keys, n, C, s, w, &none));
  pl->window = 0;
  pl->sorted = !ELLR_SORT_CLOSE(none, all);
  if (!pl->sorted) {
    CU(cudaMemcpyAsync(dp->rowlen, w->keys, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToDevice, s));
    CU(cudaStreamSynchronize(s));
    dp->unused = dp->perm; /* not freed here: cudaFree waits for the whole device, the upload on create's other stream too */
    dp->perm   = NULL;
    return ELLR_OK;
  }
  static const int64_t mult[2] = {32, 1024};
  for (int k = 0; k < 2; k++) {
    const int64_t W = mult[k] * C;
    if (W >= n) break;
    if (!w->ckeys) TRY(salloc(&w->ckeys, (size_t)n, s, "the candidate order"));
    if (!w->crows) TRY(salloc(&w->crows, (size_t)n, s, "the candidate order"));
    TRY(sort_rows((int32_t)W, n, maxlen, s, w, w->ckeys, w->crows));
    TRY(stored_entries(w->ckeys, n, C, s, w, &cand));
    if (ELLR_SORT_CLOSE(cand, all)) {
      CU(cudaMemcpyAsync(dp->rowlen, w->ckeys, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToDevice, s));
      CU(cudaMemcpyAsync(dp->perm, w->crows, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToDevice, s));
      CU(cudaStreamSynchronize(s));
      pl->window = (int32_t)W;
      break;
    }
  }
  return ELLR_OK;
}

static uint64_t signature_of(unsigned long long rows_hash, int32_t n, int32_t ncols, int64_t nnz) { return rows_hash ^ ((unsigned long long)n * 0x9e3779b97f4a7c15ull) ^ ((unsigned long long)ncols << 17) ^ (unsigned long long)nnz; }

uint64_t ellr_cuda_plan_signature(const int32_t *rowptr, int32_t n, int32_t ncols, int32_t *maxlen)
{
  unsigned long long h = 0;
  int32_t            mx = 0;
  for (int32_t i = 0; i < n; i++) { /* the sum ellr_kernel_lengths forms */
    const int32_t l = rowptr[i + 1] - rowptr[i];
    h += ellr_mix64(((unsigned long long)i << 32) ^ (unsigned)l ^ 0x9e3779b97f4a7c15ull);
    if (l > mx) mx = l;
  }
  *maxlen = mx;
  return signature_of(h, n, ncols, n > 0 ? rowptr[n] : 0);
}

ellr_status ellr_cuda_plan_order(const int32_t *d_rowptr, int32_t n, int32_t ncols, int64_t nnz, const ellr_params *p, cudaStream_t s, ellr_plan *pl, ellr_dplan *dp)
{
  order_scratch      w(s);
  ellr_plan_counters hc;
  memset(pl, 0, sizeof(*pl));
  memset(dp, 0, sizeof(*dp));
  TRY(ellr_params_check(p));
  if (n < 0 || ncols < 0) return ellr_error(ELLR_ERR_ARG, "matrix size %d x %d is negative", n, ncols);
  pl->nrows   = n;
  pl->ncols   = ncols;
  pl->C       = ellr_slice_height(p, n);
  pl->nslices = (int32_t)(((int64_t)n + pl->C - 1) / pl->C);
  const int     sort        = p->sort_rows && n > 1;
  const int64_t nstoredrows = (int64_t)pl->nslices * pl->C;

  TRY(salloc(&w.c, 1, s, "the plan counters"));
  TRY(dalloc(&dp->rowlen, (size_t)nstoredrows, "the row lengths"));
  if (sort) {
    TRY(dalloc(&dp->perm, (size_t)n, "the row permutation"));
    TRY(salloc(&w.keys, (size_t)n, s, "the sort keys"));
    TRY(salloc(&w.rows, (size_t)n, s, "the sort values"));
  }
  CU(cudaMemsetAsync(w.c, 0, sizeof(ellr_plan_counters), s));
  if (nstoredrows > n) CU(cudaMemsetAsync(dp->rowlen + n, 0, (size_t)(nstoredrows - n) * sizeof(int32_t), s));
  if (n > 0) {
    ellr_kernel_lengths<<<grid_of(n, 256), 256, 0, s>>>(n, d_rowptr, sort ? w.keys : dp->rowlen, sort ? w.rows : NULL, w.c);
    CU(cudaPeekAtLastError());
  }
  CU(cudaMemcpyAsync(&hc, w.c, sizeof(hc), cudaMemcpyDeviceToHost, s));
  CU(cudaStreamSynchronize(s));
  if (hc.bad) return ellr_error(ELLR_ERR_ARG, "CSR row offsets decrease");
  /* the long rows leave the slices: empty rows from here on (ellr.h) */
  pl->long_min = ellr_long_row_min(p, nnz, n);
  if (n > 0 && hc.maxlen >= pl->long_min) TRY(ellr_cuda_long_plan(d_rowptr, n, pl->long_min, sort ? w.keys : dp->rowlen, s, &dp->lr));
  pl->nlong              = dp->lr.nlong;
  pl->stats.long_entries = dp->lr.nentries;
  if (sort && p->sort_window == ELLR_SORT_WINDOW_AUTO) {
    TRY(salloc(&w.sum, 1, s, "the stored-entry count"));
    TRY(choose_order(n, hc.maxlen, pl->C, s, &w, dp, pl));
  } else if (sort) {
    TRY(sort_rows(p->sort_window, n, hc.maxlen, s, &w, dp->rowlen, dp->perm));
    CU(cudaStreamSynchronize(s));
    pl->sorted = 1;
    pl->window = p->sort_window < n ? p->sort_window : 0;
  }
  dp->signature          = signature_of(hc.signature, n, ncols, nnz);
  pl->stats.nnz           = nnz;
  pl->stats.maxrowlen     = hc.maxlen;
  pl->stats.nonempty_rows = hc.nonempty;
  pl->stats.meanrowlen    = n ? (double)nnz / n : 0.0;
  return ELLR_OK;
}

/* The layout's bytes besides its stored entries' (12 each), as the host plan counts them. */
static size_t plan_fixed_bytes(const ellr_plan *pl, const ellr_dplan *dp)
{
  const int32_t n     = pl->nrows;
  size_t        bytes = (size_t)pl->nslices * (size_t)pl->C * sizeof(int32_t) + (dp->perm ? (size_t)n * sizeof(int32_t) : 0) + (dp->outrow ? (size_t)n * sizeof(int32_t) : 0) + ((size_t)pl->nslices + 1) * sizeof(int64_t);
  if (pl->nlong) bytes += (size_t)pl->stats.long_entries * (sizeof(double) + sizeof(int32_t)) + (size_t)pl->nlong * sizeof(int32_t) * (dp->lr.out ? 2 : 1) + ((size_t)pl->nlong + 1) * sizeof(int64_t);
  return bytes;
}

ellr_status ellr_cuda_plan_geometry(const int32_t *d_rowptr, int T, const ellr_params *p, cudaStream_t s, ellr_plan *pl, ellr_dplan *dp)
{
  const int32_t n = pl->nrows, ns = pl->nslices;
  const int64_t nstoredrows = (int64_t)ns * pl->C;
  const int32_t Tmean = ellr_default_threads_per_row(pl->stats.meanrowlen);
  pl->per_slice_T     = T == ELLR_THREADS_PER_SLICE;
  if (!dp->slice_start) TRY(dalloc(&dp->slice_start, (size_t)ns + 1, "the slice offsets"));
  if (!pl->slice_start) {
    pl->slice_start = (int64_t *)ellr_malloc(((size_t)ns + 1) * sizeof(int64_t));
    if (!pl->slice_start) return ellr_error(ELLR_ERR_MEM, "cannot allocate the offsets of %d slices", ns);
  }
  int32_t            *width = NULL;
  ellr_plan_counters *c     = NULL;
  ellr_plan_counters  hc;
  ellr_status         st = salloc(&width, (size_t)ns, s, "the slice widths");
  if (!st) st = salloc(&c, 1, s, "the plan counters");
  cudaError_t e = cudaSuccess;
#define CUE(call) \
  if (!st && (e = (call)) != cudaSuccess) st = cu_err(e, #call, __LINE__)
  CUE(cudaMemsetAsync(width, 0, (size_t)ns * sizeof(int32_t), s));
  CUE(cudaMemsetAsync(c, 0, sizeof(*c), s));
  CUE(cudaMemsetAsync(dp->slice_start, 0, sizeof(int64_t), s));
  if (!st && n > 0) {
    ellr_kernel_slice_width<<<grid_of(nstoredrows, 256), 256, 0, s>>>(nstoredrows, pl->C, dp->rowlen, width);
    if (T <= 0) ellr_kernel_slice_width_max<<<grid_of(ns, 256), 256, 0, s>>>(ns, width, c);
    CUE(cudaPeekAtLastError());
    if (!T) { /* automatic: from the widest slice, as the host plan (ellr.h's ellr_auto_threads) */
      CUE(cudaMemcpyAsync(&hc, c, sizeof(hc), cudaMemcpyDeviceToHost, s));
      int32_t *hw = NULL; /* small matrices: the widths on the host, for the fill limit (ns <= ELLR_SMALL_ROWS) */
      if (!st && n < ELLR_SMALL_ROWS && !(hw = (int32_t *)ellr_malloc((size_t)ns * sizeof(int32_t)))) st = ellr_error(ELLR_ERR_MEM, "cannot allocate the widths of %d slices", ns);
      if (hw) CUE(cudaMemcpyAsync(hw, width, (size_t)ns * sizeof(int32_t), cudaMemcpyDeviceToHost, s));
      CUE(cudaStreamSynchronize(s));
      if (!st) T = ellr_auto_threads(n, pl->stats.nnz, ns, pl->C, hc.wmax, hw, plan_fixed_bytes(pl, dp), p->max_fill);
      ellr_free(hw);
      pl->per_slice_T = T == ELLR_THREADS_PER_SLICE;
    }
  }
  pl->T = T > 0 ? T : (pl->per_slice_T ? 1 : Tmean); /* per slice: the widest slice's, below */
  if (!st && n > 0) {
    ellr_kernel_slice_sizes<<<grid_of(ns, 256), 256, 0, s>>>(ns, pl->C, pl->per_slice_T ? 0 : pl->T, width, dp->slice_start + 1);
    CUE(cudaPeekAtLastError());
    if (!st) st = ellr_cuda_inclusive_sum(dp->slice_start + 1, ns, s);
    if (!st) ellr_kernel_niter<<<grid_of(n, 256), 256, 0, s>>>(n, pl->C, pl->T, pl->per_slice_T, pl->per_slice_T ? Tmean : pl->T, dp->slice_start, dp->rowlen, d_rowptr, pl->long_min, c);
    CUE(cudaPeekAtLastError());
  }
  CUE(cudaMemcpyAsync(pl->slice_start, dp->slice_start, ((size_t)ns + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost, s));
  CUE(cudaMemcpyAsync(&hc, c, sizeof(hc), cudaMemcpyDeviceToHost, s));
  CUE(cudaStreamSynchronize(s));
#undef CUE
  sfree(&width, s);
  sfree(&c, s);
  if (st) return st;

  if (pl->per_slice_T) pl->T = ellr_slice_threads(hc.wmax);
  ellr_stats *sx = &pl->stats;
  sx->nstored    = pl->slice_start[ns];
  sx->fill       = sx->nnz ? (double)(sx->nstored + sx->long_entries) / (double)sx->nnz : 1.0;
  sx->bytes      = (size_t)sx->nstored * (sizeof(double) + sizeof(int32_t)) + plan_fixed_bytes(pl, dp);
  sx->niter      = (int64_t)hc.niter;
  if (d_rowptr) sx->niter_unsorted = (int64_t)hc.niter_unsorted;
  const double csr_bytes = 12.0 * (double)sx->nnz + 4.0 * ((double)n + 1);
  if (p->max_fill > 0 && (double)sx->bytes > p->max_fill * csr_bytes && sx->bytes > ELLR_FILL_FLOOR_BYTES)
    return ellr_error(ELLR_ERR_FILL, "the padded storage would take %.1f MB, %.1f times the %.1f MB of CSR (more than max fill %g): %lld stored entries for %lld nonzeros, longest row %d, mean %.1f", sx->bytes / 1e6, sx->bytes / csr_bytes, csr_bytes / 1e6, p->max_fill, (long long)sx->nstored, (long long)sx->nnz, sx->maxrowlen, sx->meanrowlen);
  return ELLR_OK;
}

/* outrow[i] = rows[perm[i]] (rows[i] when rows keep their order). */
__global__ void ellr_kernel_outrow(int32_t n, const int32_t *__restrict__ perm, const int32_t *__restrict__ rows, int32_t *outrow)
{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) outrow[i] = rows[perm ? perm[i] : i];
}

ellr_status ellr_cuda_plan_outrow(const int32_t *d_rows, int32_t nrows_out, cudaStream_t s, ellr_plan *pl, ellr_dplan *dp)
{
  const int32_t n = pl->nrows;
  pl->nrows_out   = nrows_out;
  if (!d_rows || n == 0) return ELLR_OK;
  TRY(ellr_cuda_long_outrow(d_rows, s, &dp->lr));
  TRY(dalloc(&dp->outrow, (size_t)n, "the row map"));
  ellr_kernel_outrow<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(n, dp->perm, d_rows, dp->outrow);
  CU(cudaPeekAtLastError());
  CU(cudaStreamSynchronize(s));
  return ELLR_OK;
}

ellr_status ellr_cuda_plan_free(ellr_dplan *dp)
{
  if (dp->block) dp->rowlen = dp->perm = dp->outrow = NULL, dp->slice_start = NULL; /* inside the block */
  ellr_status st = dfree(&dp->block), s2;
  if ((s2 = dfree(&dp->rowlen)) && !st) st = s2;
  if ((s2 = dfree(&dp->perm)) && !st) st = s2;
  if ((s2 = dfree(&dp->outrow)) && !st) st = s2;
  if ((s2 = dfree(&dp->slice_start)) && !st) st = s2;
  if ((s2 = dfree(&dp->unused)) && !st) st = s2;
  if ((s2 = ellr_cuda_long_free(&dp->lr)) && !st) st = s2;
  return st;
}
