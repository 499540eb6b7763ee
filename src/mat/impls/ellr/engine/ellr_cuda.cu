/*
  ellr_cuda.cu - the CUDA backend of the engine (ellr_cuda.h), PETSc-free.

  create:  row offsets uploaded -> the plan made on the GPU (ellr_cuda_plan.cu; on the host for blocks under
           ELLR_HOST_PLAN_ROWS rows) while the column indices and values are copied on a second stream (from
           aijcusparse's device CSR a device copy; from a host CSR a plain copy, page-locked first with pin_host)
           -> the fill check (before the padded storage is allocated) -> layout filled on the GPU.  One host
           thread throughout.  T is the model's (or the pattern cache's) from the start, so tuning never has to
           rebuild the layout.
  tune:    what the parameters left at 0.  ELLR_TUNE_MODEL: T from the row statistics (the plan's), then on
           large blocks at most 3 timed products over the options that need no new layout (row-length or
           slice-width stopping, load path); ELLR_TUNE_EXHAUSTIVE: timed search over T (a refill from the
           CSR kept on the device per T), block size and options.  The decision is cached per process by
           the pattern's signature (row lengths and sizes), so another matrix with the same pattern
           (GAMG rebuilds, MatDuplicate, other MPI blocks of the same shape) skips the trials.
  update:  values uploaded into a scratch buffer kept from the first refresh on (row offsets
           uploaded once, at that first refresh), values scattered on the GPU; from page-locked values
           at the link's speed.
  mult:    one kernel launch (two when a chunked layout splits slices), any stream; the kernels of each T live in a
           module of their own (ellr_cuda_mult.cuh), loaded at the first product with that T.
  Every copy and kernel goes to the caller's stream.  Host arrays that are the source of a copy stay
  untouched until the copy has completed (a stream synchronize in create/tune/update; pinned staging
  for the products), since cudaMemcpyAsync from pageable memory is documented only as "might be
  synchronous".  Every CUDA call is checked; errors come back as ELLR_ERR_CUDA with ellr_last_error()
  text, and a failed create frees everything it allocated.
*/
#include <atomic>
#include "ellr_cuda.h"
#include "ellr_cuda_internal.cuh"
#include "ellr_cuda_fill_kernels.cuh"
#include "ellr_cuda_mult.cuh"
#include "ellr_cuda_util.cuh"
#include "ellr_cuda_plan.cuh"
#include "ellr_cuda_csr.cuh"
#include "ellr_cuda_cols.cuh"
#include "ellr_cuda_long.cuh"
#include "ellr_cuda_dense.cuh"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <mutex>

struct ellr_cuda_matrix {
  ellr_plan       plan;
  ellr_params     params;
  int64_t         nnz;
  int             bs;
  ellr_cuda_kopts req; /* requested kernel options */
  int             kernel, uselen, loads, J; /* resolved: kernel 1 rows / 2 chunks */
  int             mixed_T;                  /* slices of different T (per-slice T): the per-warp items of the chunks kernel */
  /* device storage */
  ellr_dplan dp;   /* plan arrays on the device: row lengths, permutation, slice offsets */
  ellr_dcols cols; /* column indices, 16-bit per slice where they fit */
  double    *d_val;
  int2    *d_items;
  int2    *d_split;    /* split slices: {slice, pieces} */
  int64_t *d_part_off; /* [nslices]: a split slice's first partial sum in d_part */
  double  *d_part;     /* the split slices' partial sums, one per row and piece */
  int64_t  nitems, nsplit, npart, cap_items, cap_split, cap_part, cap_stored;
  /* the CSR on the device: all three arrays from create until tune (tune_pending); row offsets and
     values then stay as the refresh scratch once update_values has run (refresh_ready) */
  int32_t    *d_csr_rowptr, *d_csr_col;
  double     *d_csr_val;
  int         tune_pending, refresh_ready;
  int         streamed;       /* built by streaming the host CSR through the device in chunks (stream_csr): no CSR kept */
  int         family_untimed; /* ELLR_FAMILY_AUTO settled on the sliced layout by its bytes, with no family timed */
  int         borrow;         /* ellr_cuda_create_on: d_csr_* are the caller's arrays, never copied, never freed */
  const double *tune_x;       /* ellr_cuda_tune_with: the caller's vectors for the timed products, during the call */
  double       *tune_y;
  cudaEvent_t refresh_start, refresh_done; /* around the last refill: the scratch values have been read after done */
  /* page-locked parts of the host CSR arrays (pin_host): row offsets, column indices, values; array k has
     pin_len[k] bytes from pin_base[k] registered, in chunks of ELLR_PIN_CHUNK bytes */
  char       *pin_base[3];
  size_t      pin_len[3];
  const void *pin_src[3]; /* the arrays they belong to */
  int    cols_planned;    /* the host plan set the column indices' packing (cols.base, start): build_layout skips it */
  int    unpinned;        /* ellr_cuda_unpin_host released page-locking: the caller's arrays may move, no refresh page-locks again */
  int    cached;          /* the tuning decision came from the pattern cache */
  /* staging for host vectors in ellr_cuda_mult_mixed */
  double     *h_x, *h_y, *d_x, *d_y;
  size_t      stage_n;
  cudaEvent_t stage_h2d;  /* after the last copies out of the pinned buffers */
  cudaEvent_t stage_used; /* after the last staged product: d_x / d_y free again */
  /* kernel family (params.family; AUTO resolved at tune): the CSR families multiply with the CSR arrays above,
     kept as the storage, and the padded layout is freed */
  int          family;
  ellr_csr_dev csr;
  int32_t     *d_rows; /* compressed rows in CSR order (ellr_csr.rows) */
  ellr_cuda_info info;
};

static ellr_cuda_kopts g_default_kopts = {0, -1, 0, -1};
static std::atomic<int32_t> g_host_plan_rows{ELLR_HOST_PLAN_ROWS}; /* a test hook; atomic: plans may be made from several threads */
thread_local int       ellr_scratch_pooled = 0; /* ellr_cuda_util.cuh */

/* A host array to the device on stream s, complete on return (s synchronized): the host array may be
   freed or changed right after.  For create / tune / first refresh only. */
static ellr_status upload(void *dst, const void *src, size_t bytes, cudaStream_t s, const char *what)
{
  if (!bytes) return ELLR_OK;
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) {
    (void)cudaStreamSynchronize(s); /* an enqueued copy must not outlive its source */
    return cu_err(e, what, __LINE__);
  }
  return ELLR_OK;
}

/* ---- plan helpers --------------------------------------------------------------------------- */
static inline int64_t slice_blocks(const ellr_plan *pl, int32_t s) { return (pl->slice_start[s + 1] - pl->slice_start[s]) / ((int64_t)pl->C * ellr_plan_slice_T(pl, s)); }
/* Warps of one work item of slice s: C*T words a column block, 32 a warp (per slice: rounded up, lanes idle). */
static inline int64_t slice_warps(const ellr_plan *pl, int32_t s) { return ((int64_t)pl->C * ellr_plan_slice_T(pl, s) + 31) / 32; }
/* Slices of different T: the per-slice kernel (an item per warp).  Per-slice T that came out the same in every
   slice is the layout of that one T, for the kernels of one T (the rows kernel too). */
static int mixed_T(const ellr_plan *pl)
{
  if (!pl->per_slice_T) return 0;
  for (int32_t s = 0; s < pl->nslices; s++)
    if (ellr_plan_slice_T(pl, s) != pl->T) return 1;
  return 0;
}

int64_t ellr_cuda_count_items(const ellr_plan *pl, int J, int64_t *nsplit)
{
  const int wide  = mixed_T(pl);
  int64_t   items = 0, split = 0;
  for (int32_t s = 0; s < pl->nslices; s++) {
    const int64_t Js = slice_blocks(pl, s), n = J > 0 && Js > J ? (Js + J - 1) / J : 1;
    items += wide ? n * slice_warps(pl, s) : n; /* slices of different T: an item per warp */
    split += n > 1;
  }
  if (nsplit) *nsplit = split;
  return items;
}

/* ---- kernel options and work items ------------------------------------------------------------ */
static void resolve_kopts(ellr_cuda_matrix *d)
{
  const ellr_plan *pl       = &d->plan;
  const int64_t    CT       = (int64_t)pl->C * pl->T;
  const int        mixed    = mixed_T(pl);
  const int        chunk_ok = CT % 32 == 0 || mixed;
  if (d->req.chunk > 0) d->J = d->req.chunk;
  else if (d->req.chunk < 0) d->J = INT_MAX;
  else {
    /* measured (H200): power-law 2M equal within 2% for 64..256 column blocks per item, 2x slower
       at 1024; memplus wants small items (one launch too few to hide a 287-block slice) */
    double blocks = 0.0;
    if (!mixed) blocks = (double)pl->stats.nstored / (double)CT;
    else
      for (int32_t s = 0; s < pl->nslices; s++) blocks += (double)slice_blocks(pl, s);
    const double avg = pl->nslices ? blocks / pl->nslices : 0.0;
    d->J             = avg * 4 > 64 ? (int)(avg * 4) : 64;
  }
  int64_t nsplit = 0;
  if (chunk_ok) ellr_cuda_count_items(pl, d->J, &nsplit);
  d->mixed_T = mixed;
  if (mixed) d->kernel = 2; /* one launch for slices of different T: warps are dealt, not rows */
  else if (d->req.kernel == 1) d->kernel = 1;
  else if (d->req.kernel == 2) d->kernel = chunk_ok ? 2 : 1;
  else d->kernel = (chunk_ok && nsplit > 0) ? 2 : 1; /* chunks only where a slice is long enough to cut */
  if (d->req.uselen == 0 || d->req.uselen == 1) d->uselen = d->req.uselen;
  else d->uselen = 12.0 * (double)(pl->stats.nstored - (pl->stats.nnz - pl->stats.long_entries)) > 4.0 * (double)pl->nrows; /* padding read vs rowlen read */
  d->loads = d->req.loads == 1 ? 1 : 0;
}

/* Work items of the chunks kernel, uploaded on s (synchronized: the host arrays are freed here). */
static ellr_status build_items(ellr_cuda_matrix *d, cudaStream_t s)
{
  d->nitems = 0;
  d->nsplit = 0;
  if (d->kernel != 2) return ELLR_OK;
  const ellr_plan *pl = &d->plan;
  /* a lane's position in a column block, C*T words, is an int in the chunks kernel */
  if ((int64_t)pl->C * pl->T > INT_MAX) return ellr_error(ELLR_ERR_SIZE, "slices of %d rows at %d threads per row are too tall for the chunks kernel: use a slice height of at most %d", pl->C, pl->T, INT_MAX / pl->T);
  int64_t          nsplit;
  const int64_t    nitems = ellr_cuda_count_items(pl, d->J, &nsplit);
  if (nitems > INT_MAX / 64) return ellr_error(ELLR_ERR_SIZE, "%lld work items are too many", (long long)nitems);
  /* an item is an int2 {slice, first column block}; per slice an int4 per warp, {.., warp of the slice, T}: the
     device array holds int2 pairs, two per int4 */
  const int    wide  = d->mixed_T;
  const size_t isz   = wide ? sizeof(int4) : sizeof(int2);
  void        *items = ellr_malloc((size_t)nitems * isz);
  int2        *split = (int2 *)ellr_malloc((size_t)(nsplit ? nsplit : 1) * sizeof(int2));
  int64_t     *off   = (int64_t *)ellr_malloc((size_t)(nsplit ? pl->nslices : 1) * sizeof(int64_t));
  if (!items || !split || !off) {
    ellr_free(items);
    ellr_free(split);
    ellr_free(off);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate %lld work items", (long long)nitems);
  }
  int64_t q = 0, ns = 0, npart = 0;
  for (int32_t sl = 0; sl < pl->nslices; sl++) {
    const int64_t Js = slice_blocks(pl, sl), step = Js > d->J ? d->J : (Js > 0 ? Js : 1);
    const int     T  = ellr_plan_slice_T(pl, sl);
    for (int64_t j = 0; j < (Js > 0 ? Js : 1); j += step) {
      if (!wide) ((int2 *)items)[q++] = make_int2(sl, (int)j);
      else
        for (int64_t w = 0; w < slice_warps(pl, sl); w++) ((int4 *)items)[q++] = make_int4(sl, (int)j, (int)w, T);
    }
    if (nsplit) off[sl] = -1;
    if (Js > d->J) { /* its pieces' row sums apart, joined in order after the product */
      const int64_t pieces = (Js + d->J - 1) / d->J;
      split[ns++]          = make_int2(sl, (int)pieces);
      off[sl]              = npart;
      npart += pieces * pl->C;
    }
  }
  ellr_status  st     = ELLR_OK;
  const size_t npairs = (size_t)nitems * (wide ? 2 : 1);
  if ((int64_t)npairs > d->cap_items) {
    if (!(st = dfree(&d->d_items)) && !(st = ellr_mem_check(npairs * sizeof(int2), "the work items")) && !(st = dalloc(&d->d_items, npairs, "the work items"))) d->cap_items = (int64_t)npairs;
    else d->cap_items = 0;
  }
  if (!st && nsplit > d->cap_split) {
    if (!(st = dfree(&d->d_split)) && !(st = dfree(&d->d_part_off)) && !(st = dalloc(&d->d_split, (size_t)nsplit, "the split slices")) && !(st = dalloc(&d->d_part_off, (size_t)pl->nslices, "the split slices"))) d->cap_split = nsplit;
    else d->cap_split = 0;
  }
  if (!st && npart > d->cap_part) {
    if (!(st = dfree(&d->d_part)) && !(st = ellr_mem_check((size_t)npart * sizeof(double), "the split slices' partial sums")) && !(st = dalloc(&d->d_part, (size_t)npart, "the split slices' partial sums"))) d->cap_part = npart;
    else d->cap_part = 0;
  }
  if (!st) st = upload(d->d_items, items, npairs * sizeof(int2), s, "cudaMemcpyAsync (work items)");
  if (!st) st = upload(d->d_split, split, (size_t)nsplit * sizeof(int2), s, "cudaMemcpyAsync (split slices)");
  if (!st && nsplit) st = upload(d->d_part_off, off, (size_t)pl->nslices * sizeof(int64_t), s, "cudaMemcpyAsync (split slices)");
  ellr_free(items);
  ellr_free(split);
  ellr_free(off);
  if (st) return st;
  d->nitems = nitems;
  d->nsplit = nsplit;
  d->npart  = npart;
  return ELLR_OK;
}

static ellr_status ensure_storage(ellr_cuda_matrix *d);

/* A window of CSR rows [r0, r1) whose row offsets (rowptr[p - r0], minus nz0) index col and val: the whole CSR
   on the device, or a chunk of it staged there (ellr_kernel_fill). */
typedef struct {
  const int32_t *rowptr, *col;
  const double  *val;
  int32_t        r0, r1;
  int64_t        nz0;
} csr_window;

/* The slices from window w of the CSR on the device (values_only: the values, the pattern unchanged), on s, in the
   product's mapping (ellr_kernel_fill); after build_items. */
static ellr_status fill_window(ellr_cuda_matrix *d, const csr_window *w, int values_only, cudaStream_t s)
{
  const ellr_plan *pl      = &d->plan;
  const int64_t    nrows   = (int64_t)pl->nslices * pl->C;
  const int64_t    threads = d->mixed_T ? d->nitems * 32 : nrows * pl->T;
  if (threads <= 0 || pl->stats.nstored <= 0) return ELLR_OK;
  ellr_kernel_fill<<<(unsigned)((threads + 255) / 256), 256, 0, s>>>(nrows, pl->nrows, pl->C, pl->T, d->mixed_T ? reinterpret_cast<const int4 *>(d->d_items) : NULL, d->nitems, d->dp.slice_start, d->dp.rowlen, d->dp.perm, w->rowptr, values_only ? NULL : w->col, w->val, values_only ? NULL : d->cols.words, values_only ? NULL : d->cols.base, values_only ? NULL : d->cols.start, d->d_val, values_only, w->r0, w->r1, w->nz0);
  CU(cudaPeekAtLastError());
  return ELLR_OK;
}

/* The slices from the whole CSR kept on the device (d_csr_*). */
static ellr_status fill(ellr_cuda_matrix *d, int values_only, cudaStream_t s)
{
  const csr_window w = {d->d_csr_rowptr, d->d_csr_col, d->d_csr_val, 0, INT32_MAX, 0};
  return fill_window(d, &w, values_only, s);
}

/* The streamed build and refresh move the host CSR through a staging buffer of about 1/ELLR_STREAM_PARTS of its
   entries (at least ELLR_STREAM_MIN, at least the longest row), a chunk of rows at a time: the device never holds
   the whole CSR beside the layout, so the peak of a build is the layout plus the staging (the plain build holds
   the CSR and the layout together, twice the matrix). */
#define ELLR_STREAM_PARTS 64
#define ELLR_STREAM_MIN   ((int64_t)1 << 20)

static int64_t stream_entries(const ellr_cuda_matrix *d)
{
  int64_t e = d->nnz / ELLR_STREAM_PARTS;
  if (e < ELLR_STREAM_MIN) e = ELLR_STREAM_MIN;
  if (e < d->plan.stats.maxrowlen) e = d->plan.stats.maxrowlen;
  return e < d->nnz ? e : d->nnz;
}

/* The slices from the host CSR a, chunk by chunk through the staging buffer (values_only: the values; the
   column indices otherwise too), on s; returns with s synchronized (the host arrays are read).  Rows of a chunk:
   consecutive CSR rows holding at most stream_entries() entries (and at most that many rows). */
static ellr_status stream_csr(ellr_cuda_matrix *d, const ellr_csr *a, int values_only, cudaStream_t s)
{
  const int32_t n   = a->nrows;
  const int64_t cap = stream_entries(d);
  const int32_t rc  = (int32_t)(cap < n ? cap : n);
  int32_t      *rp  = NULL, *col = NULL;
  double       *val = NULL;
  ellr_status   st  = ELLR_OK;
  cudaError_t   e   = cudaSuccess;
  if (n <= 0 || d->nnz <= 0) return ELLR_OK;
  st = dalloc(&rp, (size_t)rc + 1, "the staged row offsets");
  if (!st && !values_only) st = dalloc(&col, (size_t)cap, "the staged column indices");
  if (!st) st = dalloc(&val, (size_t)cap, "the staged values");
  for (int32_t r0 = 0; !st && r0 < n;) {
    /* the largest r1 <= r0 + rc with rowptr[r1] - rowptr[r0] <= cap, at least one row */
    int32_t lo = r0 + 1, hi = n - r0 < rc ? n : r0 + rc;
    while (lo < hi) {
      const int32_t mid = lo + (hi - lo + 1) / 2;
      if ((int64_t)a->rowptr[mid] - a->rowptr[r0] <= cap) lo = mid;
      else hi = mid - 1;
    }
    const int32_t  r1  = lo;
    const int64_t  nz0 = a->rowptr[r0], nz = (int64_t)a->rowptr[r1] - nz0;
    const csr_window w = {rp, col, val, r0, r1, nz0};
    if ((e = cudaMemcpyAsync(rp, a->rowptr + r0, ((size_t)(r1 - r0) + 1) * sizeof(int32_t), cudaMemcpyHostToDevice, s)) != cudaSuccess) st = cu_err(e, "cudaMemcpyAsync (staged row offsets)", __LINE__);
    if (!st && !values_only && nz && (e = cudaMemcpyAsync(col, a->colidx + nz0, (size_t)nz * sizeof(int32_t), cudaMemcpyHostToDevice, s)) != cudaSuccess) st = cu_err(e, "cudaMemcpyAsync (staged column indices)", __LINE__);
    if (!st && nz && (e = cudaMemcpyAsync(val, a->val + nz0, (size_t)nz * sizeof(double), cudaMemcpyHostToDevice, s)) != cudaSuccess) st = cu_err(e, "cudaMemcpyAsync (staged values)", __LINE__);
    if (!st) st = fill_window(d, &w, values_only, s); /* stream order: the next chunk's copies wait for this fill */
    r0 = r1;
  }
  e = cudaStreamSynchronize(s); /* on every path: no copy may outlive its source, no fill its staging */
  if (!st && e != cudaSuccess) st = cu_err(e, "cudaStreamSynchronize", __LINE__);
  ellr_status s2 = dfree(&rp);
  if (!st) st = s2;
  if ((s2 = dfree(&col)) && !st) st = s2;
  if ((s2 = dfree(&val)) && !st) st = s2;
  return st;
}

/* Device layout of d->plan (its device arrays in d->dp) from the CSR on the device: storage, fill, work
   items, all on s.  Returns with s synchronized (nothing of an old layout still in use). */
static ellr_status build_layout(ellr_cuda_matrix *d, cudaStream_t s)
{
  const ellr_plan *pl = &d->plan;
  CU(cudaStreamSynchronize(s)); /* products of the old layout (tuning) done before its storage goes */
  TRY(ensure_storage(d));
  /* the column indices' width per slice, then their storage (kept when its size does not change) */
  const int64_t words = d->cols.nwords;
  if (d->cols_planned) d->cols_planned = 0; /* by the host plan, for this geometry */
  else TRY(ellr_cuda_cols_plan(pl, &d->dp, d->d_csr_rowptr, d->d_csr_col, d->params.index_bits, s, &d->cols, &d->plan.stats));
  if (!d->cols.words || d->cols.nwords != words) {
    TRY(dfree(&d->cols.words));
    TRY(ellr_mem_check((size_t)d->cols.nwords * 2, "the column indices"));
    TRY(dalloc(&d->cols.words, (size_t)d->cols.nwords, "the column indices"));
  }
  resolve_kopts(d);
  TRY(build_items(d, s)); /* before the fill: with slices of different T it takes the product's work items */
  TRY(fill(d, 0, s));
  TRY(ellr_cuda_long_fill(&d->dp.lr, d->d_csr_rowptr, d->d_csr_col, d->d_csr_val, s));
  CU(cudaStreamSynchronize(s));
  return ELLR_OK;
}

/* build_layout from the host CSR a, streamed (stream_csr): the column spans from the rows' first and last columns,
   then the fill chunk by chunk.  Returns with s synchronized. */
static ellr_status build_layout_streamed(ellr_cuda_matrix *d, const ellr_csr *a, cudaStream_t s)
{
  const ellr_plan *pl = &d->plan;
  CU(cudaStreamSynchronize(s));
  TRY(ensure_storage(d));
  const int64_t words = d->cols.nwords;
  if (d->cols_planned) d->cols_planned = 0;
  else TRY(ellr_cuda_cols_plan_host(pl, &d->dp, a, d->params.index_bits, (int32_t)(stream_entries(d) < pl->nrows ? stream_entries(d) : pl->nrows), s, &d->cols, &d->plan.stats));
  if (!d->cols.words || d->cols.nwords != words) {
    TRY(dfree(&d->cols.words));
    TRY(ellr_mem_check((size_t)d->cols.nwords * 2, "the column indices"));
    TRY(dalloc(&d->cols.words, (size_t)d->cols.nwords, "the column indices"));
  }
  resolve_kopts(d);
  TRY(build_items(d, s));
  return stream_csr(d, a, 0, s);
}

/* ---- products --------------------------------------------------------------------------------- */
static ellr_status mult(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, void *stream, bool probe);

ellr_status ellr_cuda_mult(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, void *stream)
{
  return mult(d, x, z, y, transpose, stream, false);
}

static ellr_status mult_slices(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, cudaStream_t s, bool probe);

/* The product: the slices', then the long rows' (empty rows in the slices: y holds z or 0 there by then). */
static ellr_status mult(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, void *stream, bool probe)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult: no matrix");
  const ellr_plan *pl = &d->plan;
  cudaStream_t     s  = (cudaStream_t)stream;
  const int32_t    m = pl->ncols;
  const int32_t    nout = transpose ? m : pl->nrows_out;
  if (nout == 0) return ELLR_OK;
  if (!y || (!x && (transpose ? pl->nrows_out : m) > 0)) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult: missing vector");
  if (d->family != ELLR_FAMILY_SLICED) return probe ? ELLR_OK : ellr_cuda_csr_mult(&d->csr, x, z, y, transpose, d->bs, s);
  TRY(mult_slices(d, x, z, y, transpose, s, probe));
  if (probe) ellr_cuda_long_probe(d->params.long_join);
  else TRY(ellr_cuda_long_mult(&d->dp.lr, d->params.long_join, x, y, transpose, s));
  return ELLR_OK;
}

/* y = (the slices) x + z, or y = (the slices)^T x + z. */
static ellr_status mult_slices(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, cudaStream_t s, bool probe)
{
  const ellr_plan *pl = &d->plan;
  const int32_t    n = pl->nrows, m = pl->ncols;
  const int32_t    nout = transpose ? m : pl->nrows_out;
  if (!transpose && (d->dp.outrow || pl->nrows_out > n) && z != y && !probe) {
    /* compressed rows: y = z (or 0) on every row, then the stored rows add in place */
    if (!z) CU(cudaMemsetAsync(y, 0, (size_t)nout * sizeof(double), s));
    else CU(cudaMemcpyAsync(y, z, (size_t)nout * sizeof(double), cudaMemcpyDeviceToDevice, s));
    z = y;
  }
  if (!transpose && n == 0) return ELLR_OK;
  if (transpose && !probe) {
    if (!z) CU(cudaMemsetAsync(y, 0, (size_t)m * sizeof(double), s));
    else if (z != y) CU(cudaMemcpyAsync(y, z, (size_t)m * sizeof(double), cudaMemcpyDeviceToDevice, s));
    if (n == 0 || pl->stats.nstored == 0) return ELLR_OK;
  }
  ellr_kargs a;
  a.nrows       = n;
  a.C           = pl->C;
  a.CT          = (int64_t)pl->C * pl->T;
  a.G           = d->mixed_T ? 1 : (int32_t)(a.CT / 32); /* slices of different T: an item per warp */
  a.J           = d->J;
  a.nitems      = d->nitems;
  a.slice_start = d->dp.slice_start;
  a.rowlen      = d->dp.rowlen;
  a.perm        = d->dp.outrow ? d->dp.outrow : d->dp.perm; /* the kernels map stored rows to y's rows */
  a.cw          = d->cols.words;
  a.cbase       = d->cols.base;
  a.cstart      = d->cols.start;
  a.val         = d->d_val;
  a.items       = d->d_items;
  a.part        = d->d_part;
  a.part_off    = d->d_part_off;
  a.witems      = reinterpret_cast<const int4 *>(d->d_items);
  a.x           = x;
  a.z           = transpose ? NULL : z;
  a.y           = y;
  const int chunks = d->kernel == 2;
  int64_t   blocks;
  if (chunks) {
    blocks = (d->nitems * a.G + d->bs / 32 - 1) / (d->bs / 32);
  } else blocks = ((int64_t)n * pl->T + d->bs - 1) / d->bs;
  if (blocks <= 0) return ELLR_OK;
  if (blocks > INT_MAX) return ellr_error(ELLR_ERR_SIZE, "ellr_cuda_mult: %lld blocks are too many", (long long)blocks);
  const bool len = transpose ? true : d->uselen != 0;
  switch (d->mixed_T ? 0 : pl->T) {
  case 0:
    ellr_cuda_launch_slices<0>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a, probe);
    break;
  case 1:
    ellr_cuda_launch_slices<1>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a, probe);
    break;
  case 2:
    ellr_cuda_launch_slices<2>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a, probe);
    break;
  case 4:
    ellr_cuda_launch_slices<4>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a, probe);
    break;
  case 8:
    ellr_cuda_launch_slices<8>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a, probe);
    break;
  case 16:
    ellr_cuda_launch_slices<16>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a, probe);
    break;
  case 32:
    ellr_cuda_launch_slices<32>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a, probe);
    break;
  default:
    return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult: threads per row %d", pl->T);
  }
  CU(cudaPeekAtLastError());
  if (chunks && !transpose && d->nsplit > 0 && !probe) {
    const int64_t tb = (d->nsplit * pl->C + 255) / 256;
    ellr_kernel_join_split<<<(unsigned)tb, 256, 0, s>>>((int32_t)d->nsplit, d->d_split, d->d_part_off, d->d_part, pl->C, n, a.perm, a.z, y);
    CU(cudaPeekAtLastError());
  }
  return ELLR_OK;
}

/* ---- products with a dense block of columns --------------------------------------------------- */
static std::atomic<int> g_dense_nb{ELLR_DENSE_NB};             /* sums per thread at most (a test and benchmark knob) */
static std::atomic<int> g_dense_min_cols{ELLR_DENSE_MIN_COLS}; /* fewer columns: one product per column */

void ellr_cuda_set_dense_opts(int nb, int min_cols)
{
  g_dense_nb       = nb > 0 ? nb : ELLR_DENSE_NB;
  g_dense_min_cols = min_cols > 0 ? min_cols : ELLR_DENSE_MIN_COLS;
}

int ellr_cuda_dense_one_pass(const ellr_cuda_matrix *d)
{
  return d && d->family == ELLR_FAMILY_SLICED && d->plan.stats.long_entries == 0;
}

/* The layout's arrays as the row-walking kernels take them (ellr_cuda_dense.cuh); the rest of a zeroed. */
static void dense_layout(const ellr_cuda_matrix *d, ellr_dense_args *a)
{
  const ellr_plan *pl = &d->plan;
  memset(a, 0, sizeof(*a));
  a->nrows       = pl->nrows;
  a->C           = pl->C;
  a->T           = pl->per_slice_T ? 0 : pl->T;
  a->slice_start = d->dp.slice_start;
  a->rowlen      = d->dp.rowlen;
  a->outrow      = d->dp.outrow ? d->dp.outrow : d->dp.perm;
  a->cw          = d->cols.words;
  a->cbase       = d->cols.base;
  a->cstart      = d->cols.start;
  a->val         = d->d_val;
}

ellr_status ellr_cuda_mult_dense(ellr_cuda_matrix *d, int32_t k, const double *B, int64_t ldb, double *Cm, int64_t ldc, void *stream)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult_dense: no matrix");
  const ellr_plan *pl = &d->plan;
  cudaStream_t     s  = (cudaStream_t)stream;
  if (k < 0) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult_dense: %d columns", (int)k);
  if (k == 0 || pl->nrows_out == 0) return ELLR_OK; /* PETSc gives an empty block leading dimension 0 */
  if (ldb < pl->ncols || ldc < pl->nrows_out) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult_dense: %d columns with leading dimensions %lld and %lld for a %d x %d matrix", (int)k, (long long)ldb, (long long)ldc, (int)pl->nrows_out, (int)pl->ncols);
  if (!Cm || (!B && pl->ncols > 0)) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult_dense: missing block");
  if (!ellr_cuda_dense_one_pass(d) || k < g_dense_min_cols) {
    for (int32_t j = 0; j < k; j++) TRY(mult(d, B + (int64_t)j * ldb, NULL, Cm + (int64_t)j * ldc, 0, stream, false));
    return ELLR_OK;
  }
  if (d->dp.outrow || pl->nrows_out > pl->nrows) CU(cudaMemset2DAsync(Cm, (size_t)ldc * sizeof(double), 0, (size_t)pl->nrows_out * sizeof(double), (size_t)k, s)); /* rows the storage does not hold */
  if (pl->nrows == 0) return ELLR_OK;
  ellr_dense_args a;
  dense_layout(d, &a);
  a.k           = k;
  a.ldb         = ldb;
  a.ldc         = ldc;
  a.B           = B;
  a.Cm          = Cm;
  int cap = 1, nb = 1; /* sums per thread: the smallest power of two >= k, at most the largest one <= the knob */
  while (cap * 2 <= g_dense_nb && cap * 2 <= ELLR_DENSE_MAX_NB) cap *= 2;
  while (nb < k && nb < cap) nb *= 2;
  CU(ellr_cuda_launch_dense(nb, 256, s, a, false));
  return ELLR_OK;
}

ellr_status ellr_cuda_diagonal(ellr_cuda_matrix *d, double *diag, void *stream)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_diagonal: no matrix");
  const ellr_plan *pl = &d->plan;
  cudaStream_t     s  = (cudaStream_t)stream;
  if (pl->nrows_out == 0) return ELLR_OK;
  if (!diag) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_diagonal: no output");
  CU(cudaMemsetAsync(diag, 0, (size_t)pl->nrows_out * sizeof(double), s));
  if (pl->nrows == 0 || d->nnz == 0) return ELLR_OK;
  if (d->family != ELLR_FAMILY_SLICED) {
    const ellr_csr_diag_args c = {d->csr.nrows, d->csr.rowptr, d->csr.col, d->csr.rows, d->csr.val};
    CU(ellr_cuda_launch_diagonal(s, NULL, NULL, &c, diag));
    return ELLR_OK;
  }
  ellr_dense_args a;
  dense_layout(d, &a);
  const ellr_dlong         *lr = &d->dp.lr;
  const ellr_long_diag_args l  = {lr->nlong, lr->rows, lr->out, lr->col, lr->start, lr->val};
  CU(ellr_cuda_launch_diagonal(s, pl->stats.nstored > 0 ? &a : NULL, lr->nlong && lr->val ? &l : NULL, NULL, diag));
  return ELLR_OK;
}

/* ---- tuning ------------------------------------------------------------------------------------ */
/* Another T (exhaustive tuning): new slice offsets on the GPU (same order, no re-sort) and a refill from the
   CSR kept by create.  On ELLR_ERR_FILL the plan is left half-changed: retile to a T that fitted. */
static ellr_status retile(ellr_cuda_matrix *d, int T, cudaStream_t s)
{
  TRY(ellr_cuda_plan_geometry(d->d_csr_rowptr, T, &d->params, s, &d->plan, &d->dp));
  return build_layout(d, s);
}

/* ---- the pattern cache: tuning decisions by pattern signature, per process --------------------- */
typedef struct {
  uint64_t        signature;
  int64_t         nnz;
  int32_t         nrows, ncols, C, sort, window, T, bs, tune, device, family, index_bits, long_row_min, long_join;
  ellr_cuda_kopts req;
} tune_key;
typedef struct {
  int T, bs, uselen, loads, family;
} tune_choice;
#define ELLR_TUNE_CACHE 64
static struct {
  tune_key    key;
  tune_choice choice;
  int         used;
} g_cache[ELLR_TUNE_CACHE];
static int        g_cache_next;
static std::mutex g_cache_mutex;

static void cache_key(const ellr_cuda_matrix *d, tune_key *k)
{
  memset(k, 0, sizeof(*k)); /* padding too: keys are compared with memcmp */
  k->signature = d->dp.signature;
  k->nnz       = d->nnz;
  k->nrows     = d->plan.nrows;
  k->ncols     = d->plan.ncols;
  k->C         = d->plan.C;
  k->sort      = d->params.sort_rows;
  k->window    = d->params.sort_window;
  k->T         = d->params.threads_per_row;
  k->bs        = d->params.block_size;
  k->tune      = d->params.tune;
  k->req       = d->req;
  k->family    = d->params.family;
  k->index_bits = d->params.index_bits;
  k->long_row_min = d->params.long_row_min;
  k->long_join    = d->params.long_join;
  (void)cudaGetDevice(&k->device);
}

static int cache_find(const tune_key *k, tune_choice *c)
{
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  for (int i = 0; i < ELLR_TUNE_CACHE; i++)
    if (g_cache[i].used && !memcmp(&g_cache[i].key, k, sizeof(*k))) {
      *c = g_cache[i].choice;
      return 1;
    }
  return 0;
}

static void cache_store(const tune_key *k, const tune_choice *c)
{
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  for (int i = 0; i < ELLR_TUNE_CACHE; i++)
    if (g_cache[i].used && !memcmp(&g_cache[i].key, k, sizeof(*k))) {
      g_cache[i].choice = *c;
      return;
    }
  g_cache[g_cache_next].key    = *k;
  g_cache[g_cache_next].choice = *c;
  g_cache[g_cache_next].used   = 1;
  g_cache_next                 = (g_cache_next + 1) % ELLR_TUNE_CACHE;
}

struct tune_ctx {
  cudaStream_t s;
  cudaEvent_t  e0, e1;
  double      *tx, *ty;
};

static ellr_status time_product(ellr_cuda_matrix *d, const tune_ctx *c, float *ms)
{
  CU(cudaEventRecord(c->e0, c->s));
  TRY(ellr_cuda_mult(d, c->tx, NULL, c->ty, 0, (void *)c->s));
  CU(cudaEventRecord(c->e1, c->s));
  CU(cudaEventSynchronize(c->e1));
  CU(cudaEventElapsedTime(ms, c->e0, c->e1));
  d->info.tune_products++;
  return ELLR_OK;
}

/* The faster of two timed products. */
static ellr_status time_best2(ellr_cuda_matrix *d, const tune_ctx *c, float *ms)
{
  float t1, t2;
  TRY(time_product(d, c, &t1));
  TRY(time_product(d, c, &t2));
  *ms = t1 < t2 ? t1 : t2;
  return ELLR_OK;
}

/* ELLR_TUNE_EXHAUSTIVE: T around the model's, the other stopping rule and load path, block sizes. */
static ellr_status tune_exhaustive(ellr_cuda_matrix *d, const tune_ctx *c)
{
  const ellr_params *p   = &d->params;
  const int          T0  = p->threads_per_row ? p->threads_per_row : d->plan.per_slice_T ? ellr_default_threads_per_row(d->plan.stats.meanrowlen) : d->plan.T; /* the automatic one T (ellr.h) */
  const int          bs0 = p->block_size ? p->block_size : 256;
  int                Ts[5], nT = 0;
  if (p->threads_per_row) Ts[nT++] = T0;
  else { /* around the mean row's T, and per slice */
    if (T0 > 1) Ts[nT++] = T0 / 2;
    Ts[nT++] = T0;
    if (T0 * 2 <= ELLR_MAX_THREADS_PER_ROW) Ts[nT++] = T0 * 2;
    if (T0 * 4 <= ELLR_MAX_THREADS_PER_ROW) Ts[nT++] = T0 * 4;
    Ts[nT++] = ELLR_THREADS_PER_SLICE;
  }
  int   bestT = ellr_plan_threads_param(&d->plan);
  float best  = 1e30f, ms;
  d->bs       = bs0;
  TRY(time_product(d, c, &ms)); /* warm-up: the model T's module, first touch (another T's module loads in the
                                   first of its two timed products, which time_best2 discards) */
  for (int k = 0; k < nT; k++) {
    if (Ts[k] != ellr_plan_threads_param(&d->plan)) {
      ellr_status st = retile(d, Ts[k], c->s);
      if (st == ELLR_ERR_FILL) { /* this T pads past max_fill: not a candidate */
        TRY(retile(d, bestT, c->s));
        continue;
      }
      if (st == ELLR_ERR_CUDA && strstr(ellr_last_error(), "out of memory")) {
        (void)cudaGetLastError();
        TRY(retile(d, bestT, c->s)); /* back to a layout that fits */
        continue;
      }
      if (st) return st;
    }
    TRY(time_best2(d, c, &ms));
    if (ms < best) {
      best  = ms;
      bestT = Ts[k];
    }
  }
  if (ellr_plan_threads_param(&d->plan) != bestT) TRY(retile(d, bestT, c->s));
  /* kernel options left automatic: the other stopping rule (row length / slice width), the other load path */
  if (d->req.uselen != 0 && d->req.uselen != 1) {
    const int was = d->uselen;
    d->uselen     = !was;
    TRY(time_best2(d, c, &ms));
    if (ms < best) best = ms;
    else d->uselen = was;
    d->req.uselen = d->uselen;
  }
  if (d->req.loads != 0 && d->req.loads != 1) {
    const int was = d->loads;
    d->loads      = !was;
    TRY(time_best2(d, c, &ms));
    if (ms < best) best = ms;
    else d->loads = was;
    d->req.loads = d->loads;
  }
  if (!p->block_size) {
    static const int bss[] = {128, 256, 512};
    int              bestbs = bs0;
    for (int k = 0; k < 3; k++) {
      if (bss[k] == bs0) continue;
      d->bs = bss[k];
      TRY(time_best2(d, c, &ms));
      if (ms < best) {
        best   = ms;
        bestbs = bss[k];
      }
    }
    d->bs = bestbs;
  }
  return ELLR_OK;
}

/* Blocks whose storage is under twice the L2 cache: a product's time depends more on what the cache
   holds than on the options, and the trials would cost more than they can win. */
/* An attribute of the current device, or fallback when the driver cannot say. */
static int device_attr(cudaDeviceAttr attr, int fallback)
{
  int dev = 0, v = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return fallback;
  }
  return v;
}

static int large_enough_to_time(const ellr_cuda_matrix *d)
{
  return (double)d->plan.stats.bytes > 2.0 * (double)device_attr(cudaDevAttrL2CacheSize, 50 << 20);
}

/* ELLR_TUNE_MODEL: T and block size are the model's (the plan's T: from the mean row length, the adaptive CSR-vector's rule, or each
   slice's own where a slice needs far more (ellr.h); 256
   threads per block); the options that need no new layout -- stopping at the row length or the slice width,
   the load path -- are the model's too unless the block is large, then each candidate is timed once (at
   most 3 products, every kernel loaded before the first is timed). */
static ellr_status tune_model(ellr_cuda_matrix *d, const tune_ctx *c)
{
  if (!large_enough_to_time(d)) return ELLR_OK;
  int cand[3][2], nc = 0;
  cand[nc][0] = d->uselen;
  cand[nc][1] = d->loads;
  nc++;
  if (d->req.uselen != 0 && d->req.uselen != 1) {
    cand[nc][0] = !d->uselen;
    cand[nc][1] = d->loads;
    nc++;
  }
  if (d->req.loads != 0 && d->req.loads != 1) {
    cand[nc][0] = d->uselen;
    cand[nc][1] = !d->loads;
    nc++;
  }
  if (nc < 2) return ELLR_OK;
  for (int k = 0; k < nc; k++) {
    d->uselen = cand[k][0];
    d->loads  = cand[k][1];
    TRY(mult(d, c->tx, NULL, c->ty, 0, (void *)c->s, true));
  }
  float best = 1e30f, ms;
  int   bk   = 0;
  for (int k = 0; k < nc; k++) {
    d->uselen = cand[k][0];
    d->loads  = cand[k][1];
    TRY(time_product(d, c, &ms));
    if (ms < best) {
      best = ms;
      bk   = k;
    }
  }
  d->uselen = cand[bk][0];
  d->loads  = cand[bk][1];
  return ELLR_OK;
}

static ellr_status tune_products(ellr_cuda_matrix *d, const tune_ctx *c)
{
  if (d->plan.ncols > 0 && !d->tune_x) { /* the caller's x is read as it is */
    ellr_kernel_init_x<<<(unsigned)((d->plan.ncols + 255) / 256), 256, 0, c->s>>>(d->plan.ncols, c->tx);
    CU(cudaPeekAtLastError());
  }
  if (d->params.tune == ELLR_TUNE_EXHAUSTIVE) return tune_exhaustive(d, c);
  if (d->params.tune == ELLR_TUNE_MODEL) return tune_model(d, c);
  return ELLR_OK;
}

/* The CSR kept by create for tuning: column indices always; row offsets and values unless they
   have become the refresh scratch. */
static ellr_status free_tuning_csr(ellr_cuda_matrix *d)
{
  if (d->family != ELLR_FAMILY_SLICED) { /* the CSR is the storage */
    d->tune_pending = 0;
    return ELLR_OK;
  }
  ellr_status st = dfree(&d->d_csr_col), s2;
  if (!d->refresh_ready) {
    if ((s2 = dfree(&d->d_csr_rowptr)) && !st) st = s2;
    if ((s2 = dfree(&d->d_csr_val)) && !st) st = s2;
  }
  d->tune_pending = 0;
  return st;
}

/* ---- kernel families ------------------------------------------------------------------------------ */
/* The CSR family fam on the CSR arrays kept since create (IPCSR: its row blocks built on s). */
static ellr_status csr_setup(ellr_cuda_matrix *d, int fam, cudaStream_t s)
{
  ellr_csr_dev *c = &d->csr;
  if (c->family != fam) TRY(ellr_cuda_csr_free(c));
  c->family    = fam;
  c->T         = ellr_csr_vector_threads(d->plan.stats.meanrowlen);
  c->nrows     = d->plan.nrows;
  c->ncols     = d->plan.ncols;
  c->nrows_out = d->plan.nrows_out;
  c->rowptr    = d->d_csr_rowptr;
  c->col       = d->d_csr_col;
  c->val       = d->d_csr_val;
  c->rows      = d->d_rows;
  return ellr_cuda_csr_prepare(c, s);
}

/* A CSR family becomes the storage: the padded layout and the plan's device arrays go (the host plan stays,
   for its statistics). */
static ellr_status use_csr_family(ellr_cuda_matrix *d, int fam, cudaStream_t s)
{
  TRY(csr_setup(d, fam, s));
  CU(cudaStreamSynchronize(s));
  TRY(ellr_cuda_cols_free(&d->cols));
  TRY(dfree(&d->d_val));
  TRY(dfree(&d->d_items));
  TRY(dfree(&d->d_split));
  TRY(dfree(&d->d_part_off));
  TRY(dfree(&d->d_part));
  d->cap_stored = d->cap_items = d->cap_split = d->cap_part = d->nitems = d->nsplit = d->npart = 0;
  TRY(ellr_cuda_plan_free(&d->dp));
  d->family           = fam;
  d->info.family      = fam;
  d->info.csr_T       = d->csr.T;
  d->info.csr_blocks  = d->csr.nblocks;
  return ELLR_OK;
}

/* Rows so uneven that IPCSR's row blocks win whatever else the layout says (model_family's first rule). */
static int uneven_rows(int32_t maxrowlen, double meanrowlen) { return maxrowlen > 64 && maxrowlen > 8.0 * meanrowlen; }

/* ELLR_FAMILY_AUTO without timing (measured on the benchmark's matrices, H100): IPCSR where rows are very
   uneven (memplus, EPA, web-NotreDame: its row blocks balance them); the sliced layout where its padding is
   small and its rows x T threads fill a quarter of the GPU's resident threads (3d7 N=48: 110k rows); CSR-vector
   otherwise -- small matrices, where its T ~ mean row length lanes per row keep more of the GPU busy (the
   bcsstk matrices, nos3, mcfe, add32: 1.3-1.9x the sliced layout's product). */
static int model_family(const ellr_cuda_matrix *d, int sliced_ok)
{
  const ellr_stats *st       = &d->plan.stats;
  const double      resident = (double)device_attr(cudaDevAttrMultiProcessorCount, 100) * device_attr(cudaDevAttrMaxThreadsPerMultiProcessor, 2048);
  if (uneven_rows(st->maxrowlen, st->meanrowlen)) return ELLR_FAMILY_IPCSR; /* from the row lengths alone */
  double            threads  = (double)d->plan.nrows * d->plan.T; /* rows x T: with each slice's own T, their sum */
  if (d->plan.per_slice_T) {
    threads = 0.0;
    for (int32_t s = 0; s < d->plan.nslices; s++) threads += (double)d->plan.C * ellr_plan_slice_T(&d->plan, s);
  }
  if (sliced_ok && st->fill <= 1.15 && 4.0 * threads >= resident) return ELLR_FAMILY_SLICED;
  return ELLR_FAMILY_CSR_VECTOR;
}

/* ELLR_FAMILY_AUTO: the family that ellr_cuda_tune will keep when no product is to be timed (tune none, or a block
   too small to time): the model's, known once the geometry is planned, so that create skips the padded layout's
   fill for a CSR family (small matrices: ~0.3 ms of set-up).  ELLR_FAMILY_SLICED when the families are timed. */
static int timed_tuning(const ellr_cuda_matrix *d) { return d->params.tune == ELLR_TUNE_EXHAUSTIVE || (d->params.tune == ELLR_TUNE_MODEL && large_enough_to_time(d)); }
static int family_before_timing(const ellr_cuda_matrix *d) { return timed_tuning(d) ? ELLR_FAMILY_SLICED : model_family(d, 1); }

static ellr_status time_product(ellr_cuda_matrix *d, const tune_ctx *c, float *ms);

/* ELLR_FAMILY_AUTO on a large block: one timed product of each family (the sliced one as tuned), the fastest
   kept. */
static ellr_status time_families(ellr_cuda_matrix *d, const tune_ctx *c)
{
  static const int fams[3] = {ELLR_FAMILY_SLICED, ELLR_FAMILY_CSR_VECTOR, ELLR_FAMILY_IPCSR};
  float            ms[3];
  TRY(mult(d, c->tx, NULL, c->ty, 0, (void *)c->s, true)); /* the sliced kernels' module loaded before the timing
                                                             (tune_model may have timed nothing before) */
  TRY(time_product(d, c, &ms[0]));
  for (int k = 1; k < 3; k++) {
    TRY(csr_setup(d, fams[k], c->s));
    ellr_cuda_csr_probe(&d->csr);
    d->family = fams[k];
    ellr_status st = time_product(d, c, &ms[k]);
    d->family      = ELLR_FAMILY_SLICED;
    TRY(st);
  }
  int best = 0;
  for (int k = 1; k < 3; k++)
    if (ms[k] < ms[best]) best = k;
  for (int k = 0; k < 3; k++) d->info.family_ms[k] = ms[k];
  if (best) return use_csr_family(d, fams[best], c->s);
  TRY(ellr_cuda_csr_free(&d->csr));
  d->csr.family = 0;
  return ELLR_OK;
}

static ellr_status tune_timed(ellr_cuda_matrix *d, void *stream);

ellr_status ellr_cuda_tune_with(ellr_cuda_matrix *d, const ellr_csr *a, const double *x, double *y, void *stream)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_tune_with: no matrix");
  if ((d->plan.ncols > 0 && !x) || (d->plan.nrows_out > 0 && !y) || (x && (const double *)y == x)) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_tune_with: an input x and a distinct output y on the device are needed");
  d->tune_x         = x;
  d->tune_y         = y;
  const ellr_status st = ellr_cuda_tune(d, a, stream);
  d->tune_x         = NULL;
  d->tune_y         = NULL;
  return st;
}

int ellr_cuda_tune_pending(const ellr_cuda_matrix *d) { return d && d->tune_pending; }

int ellr_cuda_streamed(const ellr_cuda_matrix *d) { return d && d->streamed; }

ellr_status ellr_cuda_tune(ellr_cuda_matrix *d, const ellr_csr *a, void *stream)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_tune: no matrix");
  if (!d->tune_pending) return ELLR_OK; /* tuned already, nothing to tune, or no rows */
  if (ellr_test_fail_now(ELLR_STAGE_TUNE)) return ellr_error(ELLR_ERR_CUDA, "tuning failed (injected by the test hook)");
  const ellr_plan *pl = &d->plan;
  if (a && (a->nrows != pl->nrows || a->ncols != pl->ncols || !a->rowptr || a->rowptr[a->nrows] != d->nnz))
    return ellr_error(ELLR_ERR_ARG, "ellr_cuda_tune: the matrix is %d x %d with %lld entries, not the %d x %d with %lld planned", a->nrows, a->ncols, a->rowptr ? (long long)a->rowptr[a->nrows] : -1LL, pl->nrows, pl->ncols, (long long)d->nnz);
  const double t0 = ellr_wall_ms();
  tune_key     key;
  cache_key(d, &key); /* before tuning: the request, not its outcome */
  d->info.tune_products = 0;
  const int auto_family = d->params.family == ELLR_FAMILY_AUTO;
  if (d->cached) { /* T was applied at create */
    tune_choice ch;
    if (cache_find(&key, &ch)) {
      if (!d->params.block_size) d->bs = ch.bs;
      d->uselen = ch.uselen;
      d->loads  = ch.loads;
      if (auto_family && ch.family != ELLR_FAMILY_SLICED) TRY(use_csr_family(d, ch.family, (cudaStream_t)stream));
    }
    d->info.tune_how = ELLR_TUNED_BY_CACHE;
  } else if (!timed_tuning(d)) {
    d->info.tune_how = d->params.tune == ELLR_TUNE_NONE ? ELLR_TUNED_BY_NONE : ELLR_TUNED_BY_MODEL;
    if (auto_family) {
      const int fam = model_family(d, 1);
      if (fam != ELLR_FAMILY_SLICED) TRY(use_csr_family(d, fam, (cudaStream_t)stream));
    }
  } else {
    TRY(tune_timed(d, stream));
    d->info.tune_how = d->params.tune == ELLR_TUNE_EXHAUSTIVE ? ELLR_TUNED_BY_EXHAUSTIVE : ELLR_TUNED_BY_MODEL;
  }
  if (!d->cached) {
    tune_choice ch = {ellr_plan_threads_param(&d->plan), d->bs, d->uselen, d->loads, d->family};
    cache_store(&key, &ch);
  }
  TRY(free_tuning_csr(d));
  d->info.tuned   = 1;
  d->info.tune_ms = ellr_wall_ms() - t0;
  return ELLR_OK;
}

/* Timed tuning: vectors and events, the products, then everything freed. */
static ellr_status tune_timed(ellr_cuda_matrix *d, void *stream)
{
  const ellr_plan *pl = &d->plan;
  tune_ctx         c;
  memset(&c, 0, sizeof(c));
  c.s            = (cudaStream_t)stream;
  ellr_status st = ELLR_OK;
  if (d->tune_x) { /* the caller's: no vectors of the matrix's size allocated beside it */
    c.tx = const_cast<double *>(d->tune_x);
    c.ty = d->tune_y;
  } else {
    st = ellr_mem_check((size_t)(pl->nrows_out + pl->ncols) * 8, "the tuning vectors");
    if (!st) st = dalloc(&c.tx, (size_t)(pl->ncols > 0 ? pl->ncols : 1), "the tuning vector x");
    if (!st) st = dalloc(&c.ty, (size_t)pl->nrows_out, "the tuning vector y");
  }
  cudaError_t e = cudaSuccess;
  if (!st && (e = cudaEventCreate(&c.e0)) != cudaSuccess) st = cu_err(e, "cudaEventCreate", __LINE__);
  if (!st && (e = cudaEventCreate(&c.e1)) != cudaSuccess) st = cu_err(e, "cudaEventCreate", __LINE__);
  /* a refill queued by ellr_cuda_update_values (perhaps on another stream) lands before the retiling */
  if (!st && d->refresh_done && (e = cudaStreamWaitEvent(c.s, d->refresh_done, 0)) != cudaSuccess) st = cu_err(e, "cudaStreamWaitEvent", __LINE__);
  if (!st) st = tune_products(d, &c);
  if (!st && d->params.family == ELLR_FAMILY_AUTO && !d->family_untimed) st = time_families(d, &c);
  e = cudaStreamSynchronize(c.s);
  if (!st && e != cudaSuccess) st = cu_err(e, "cudaStreamSynchronize", __LINE__);
  if (c.e0 && (e = cudaEventDestroy(c.e0)) != cudaSuccess && !st) st = cu_err(e, "cudaEventDestroy", __LINE__);
  if (c.e1 && (e = cudaEventDestroy(c.e1)) != cudaSuccess && !st) st = cu_err(e, "cudaEventDestroy", __LINE__);
  if (d->tune_x) return st; /* the caller's vectors */
  ellr_status s2 = dfree(&c.tx);
  if (!st) st = s2;
  s2 = dfree(&c.ty);
  if (!st) st = s2;
  return st; /* on failure the CSR stays: a second call may try again, destroy frees it */
}

/* ---- page-locked host arrays ------------------------------------------------------------------ */
/* Each array is registered, then its copy queued: the column indices' copy runs while the values are
   registered (host work at ~20-30 GB/s on the H100 machine).  Arrays over ELLR_PIN_CHUNK go in chunks. */
#define ELLR_PIN_CHUNK ((size_t)1 << 30) /* one registration per array up to 1 GB: each call costs ~1 ms of its own (32 MB chunks: 21-31 ms for 358 MB against 12-17 ms in one call, H100) */

/* Copies [src, src + bytes) of host memory to dst on s, the part from array k's registered chunks at the link's
   speed, the rest (partial pages at its ends, or all of it) through the driver's pageable path.  Queued; the
   caller synchronizes s before src may change. */
static ellr_status copy_in(ellr_cuda_matrix *d, int k, void *dst, const void *src, size_t bytes, cudaStream_t s)
{
  if (!bytes) return ELLR_OK;
  if (d->pin_src[k] != src || !d->pin_len[k]) {
    CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return ELLR_OK;
  }
  const size_t head = (size_t)(d->pin_base[k] - (const char *)src), tail = bytes - head - d->pin_len[k];
  if (head) CU(cudaMemcpyAsync(dst, src, head, cudaMemcpyHostToDevice, s));
  for (size_t o = 0; o < d->pin_len[k]; o += ELLR_PIN_CHUNK) {
    const size_t l = d->pin_len[k] - o < ELLR_PIN_CHUNK ? d->pin_len[k] - o : ELLR_PIN_CHUNK;
    CU(cudaMemcpyAsync((char *)dst + head + o, d->pin_base[k] + o, l, cudaMemcpyHostToDevice, s));
  }
  if (tail) CU(cudaMemcpyAsync((char *)dst + head + d->pin_len[k], d->pin_base[k] + d->pin_len[k], tail, cudaMemcpyHostToDevice, s));
  return ELLR_OK;
}

/* Page-locks array k (only the whole pages inside it: a page it shares with a neighbour may be another
   array's to register) chunk by chunk, queueing each chunk's copy to dst on s; copies the rest through the
   pageable path.  A refusal (memory registered by someone else, limits) is not an error: what is left is
   copied from pageable memory and info.pin_note says why. */
static ellr_status pin_and_copy(ellr_cuda_matrix *d, int k, void *dst, const void *src, size_t bytes, size_t min_bytes, cudaStream_t s)
{
  const size_t    page = 4096;
  const uintptr_t b0 = ((uintptr_t)src + page - 1) / page * page, b1 = ((uintptr_t)src + bytes) / page * page;
  if (!d->params.pin_host || !src || bytes < min_bytes || b1 <= b0) return copy_in(d, k, dst, src, bytes, s);
  const size_t head = (size_t)(b0 - (uintptr_t)src);
  double       t0   = ellr_wall_ms();
  d->pin_src[k]     = src;
  d->pin_base[k]    = (char *)b0;
  d->pin_len[k]     = 0;
  if (head) CU(cudaMemcpyAsync(dst, src, head, cudaMemcpyHostToDevice, s));
  for (size_t o = 0; o < b1 - b0; o += ELLR_PIN_CHUNK) {
    const size_t l = b1 - b0 - o < ELLR_PIN_CHUNK ? b1 - b0 - o : ELLR_PIN_CHUNK;
    cudaError_t  e = cudaHostRegister((void *)(b0 + o), l, cudaHostRegisterDefault);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      if (!d->info.pin_note[0]) snprintf(d->info.pin_note, sizeof(d->info.pin_note), "cudaHostRegister refused %zu bytes: %s", l, cudaGetErrorString(e));
      break;
    }
    d->pin_len[k] += l;
    d->info.pinned_bytes += l;
    CU(cudaMemcpyAsync((char *)dst + head + o, (const void *)(b0 + o), l, cudaMemcpyHostToDevice, s));
  }
  const size_t done = head + d->pin_len[k];
  if (done < bytes) CU(cudaMemcpyAsync((char *)dst + done, (const char *)src + done, bytes - done, cudaMemcpyHostToDevice, s));
  d->info.pin_ms += ellr_wall_ms() - t0;
  return ELLR_OK;
}

ellr_status ellr_cuda_unpin_host(ellr_cuda_matrix *d)
{
  if (!d) return ELLR_OK;
  ellr_status  st  = ELLR_OK;
  const double t0  = ellr_wall_ms();
  int          any = 0;
  for (int k = 0; k < 3; k++) {
    for (size_t o = 0; o < d->pin_len[k]; o += ELLR_PIN_CHUNK) {
      cudaError_t e = cudaHostUnregister(d->pin_base[k] + o);
      if (e != cudaSuccess && !st) st = cu_err(e, "cudaHostUnregister", __LINE__);
      any = 1;
    }
    d->pin_base[k] = NULL;
    d->pin_src[k]  = NULL;
    d->pin_len[k]  = 0;
  }
  if (any) {
    d->info.unpin_ms = ellr_wall_ms() - t0;
    d->unpinned      = 1;
  }
  d->info.pinned_bytes = 0;
  return st;
}

/* ---- create / update / destroy ------------------------------------------------------------------ */
/* A second stream and timing events for create, released on every path. */
struct create_ctx {
  cudaStream_t aux;
  cudaEvent_t  up0, up1, fill0, fill1;
  create_ctx() : aux(NULL), up0(NULL), up1(NULL), fill0(NULL), fill1(NULL) { }
  ~create_ctx()
  {
    if (aux) (void)cudaStreamSynchronize(aux); /* no copy may outlive its source */
    if (aux) (void)cudaStreamDestroy(aux);
    cudaEvent_t *ev[] = {&up0, &up1, &fill0, &fill1};
    for (cudaEvent_t *e : ev)
      if (*e) (void)cudaEventDestroy(*e);
  }
};

/* The padded storage's values for d->plan (kept when its size does not change); the column indices are
   allocated by build_layout, once their width per slice is known. */
static ellr_status ensure_storage(ellr_cuda_matrix *d)
{
  const int64_t nstored = d->plan.stats.nstored;
  if (nstored == d->cap_stored && d->d_val) return ELLR_OK;
  TRY(dfree(&d->d_val));
  d->cap_stored = 0;
  TRY(ellr_mem_check((size_t)nstored * 12, "the padded storage")); /* the column indices (up to 4 bytes an entry) follow */
  TRY(dalloc(&d->d_val, (size_t)nstored, "the values"));
  d->cap_stored = nstored;
  return ELLR_OK;
}

/* ---- the plan on the host (blocks under ELLR_HOST_PLAN_ROWS rows, ellr_cuda_plan.cuh) ------------------- */
/* The host plan of a with threads per row T (0: automatic) as d->plan, its order arrays still on the host.  As
   ellr_cuda_plan_geometry, ELLR_ERR_FILL past max fill. */
static ellr_status plan_on_host(ellr_cuda_matrix *d, const ellr_csr *a, int T, const ellr_params *gp)
{
  ellr_params q     = *gp;
  ellr_plan   hp;
  q.threads_per_row = T;
  TRY(ellr_plan_create(a, &q, &hp));
  ellr_plan_destroy(&d->plan);
  d->plan = hp;
  return ELLR_OK;
}

/* The host plan's arrays to the device when the sliced layout is kept (sliced), with the column indices' packing
   decided on the host from a's columns: packed into one host buffer, one allocation (dp->block) and one copy
   (each array apart cost a cudaMalloc and a pageable copy of their own); then the host copies of the order go, as
   a GPU plan keeps none.  Returns with s synchronized. */
static ellr_status host_plan_to_device(ellr_cuda_matrix *d, const ellr_csr *a, int sliced, cudaStream_t s)
{
  ellr_plan    *pl = &d->plan;
  ellr_dplan   *dp = &d->dp;
  const int32_t n = pl->nrows, ns = pl->nslices;
  /* parts of the block, each from a 256-byte boundary: rowlen, perm, outrow, slice_start, column bases, offsets */
  const size_t  bytes[6] = {(size_t)ns * pl->C * sizeof(int32_t), pl->perm ? (size_t)n * sizeof(int32_t) : 0, pl->outrow ? (size_t)n * sizeof(int32_t) : 0, ((size_t)ns + 1) * sizeof(int64_t), (size_t)ns * sizeof(int32_t), ((size_t)ns + 1) * sizeof(int64_t)};
  size_t        off[7]   = {0};
  for (int k = 0; k < 6; k++) off[k + 1] = off[k] + (bytes[k] + 255) / 256 * 256;
  char       *h  = sliced ? (char *)ellr_malloc(off[6]) : NULL;
  ellr_status st = ELLR_OK;
  cudaError_t e  = cudaSuccess;
  if (sliced && !h) st = ellr_error(ELLR_ERR_MEM, "cannot allocate %zu bytes for the plan's upload", off[6]);
  if (sliced && !st) st = ellr_cols_plan(pl, a, d->params.index_bits, (int32_t *)(h + off[4]), (int64_t *)(h + off[5]));
  if (sliced && !st) st = dalloc(&dp->block, off[6], "the plan's arrays");
  if (sliced && !st) {
    memcpy(h + off[0], pl->rowlen, bytes[0]);
    if (pl->perm) memcpy(h + off[1], pl->perm, bytes[1]);
    if (pl->outrow) memcpy(h + off[2], pl->outrow, bytes[2]);
    memcpy(h + off[3], pl->slice_start, bytes[3]);
    if ((e = cudaMemcpyAsync(dp->block, h, off[6], cudaMemcpyHostToDevice, s)) != cudaSuccess) st = cu_err(e, "cudaMemcpyAsync (the plan's arrays)", __LINE__);
  }
  e = cudaStreamSynchronize(s); /* on every path: no copy may outlive its host buffer */
  if (!st && e != cudaSuccess) st = cu_err(e, "cudaStreamSynchronize", __LINE__);
  if (sliced && !st) {
    dp->rowlen          = (int32_t *)(dp->block + off[0]);
    dp->perm            = pl->perm ? (int32_t *)(dp->block + off[1]) : NULL;
    dp->outrow          = pl->outrow ? (int32_t *)(dp->block + off[2]) : NULL;
    dp->slice_start     = (int64_t *)(dp->block + off[3]);
    d->cols.base        = (int32_t *)(dp->block + off[4]);
    d->cols.start       = (int64_t *)(dp->block + off[5]);
    d->cols.borrowed    = 1;
    d->cols.nslices_cap = ns;
    d->cols.nwords      = ((const int64_t *)(h + off[5]))[ns];
    d->cols_planned     = 1;
  }
  ellr_free(h);
  ellr_free(pl->rowlen);
  ellr_free(pl->perm);
  ellr_free(pl->outrow);
  pl->rowlen = pl->perm = pl->outrow = NULL;
  return st;
}

/* Array k of the CSR (0 row offsets, 1 column indices, 2 values) to dst on s: from the caller's device copy when
   a has one (a device-to-device copy, nothing page-locked), else from the host array (pin_and_copy). */
static ellr_status copy_csr_array(ellr_cuda_matrix *d, const ellr_csr *a, int k, void *dst, size_t bytes, cudaStream_t s)
{
  const void *dsrc = k == 0 ? (const void *)a->d_rowptr : k == 1 ? (const void *)a->d_colidx : (const void *)a->d_val;
  const void *hsrc = k == 0 ? (const void *)a->rowptr : k == 1 ? (const void *)a->colidx : (const void *)a->val;
  if (dsrc) {
    if (bytes) CU(cudaMemcpyAsync(dst, dsrc, bytes, cudaMemcpyDeviceToDevice, s));
    return ELLR_OK;
  }
  return pin_and_copy(d, k, dst, hsrc, bytes, ELLR_PIN_MIN, s);
}

/*
  Row offsets up (page-locked when large) -> the plan on the GPU (salloc's scratch; small blocks: on the host,
  then uploaded) and the padded
  storage allocated -> column indices and values page-locked and copied chunk by chunk on a second stream
  -> the fill once they are in.  The GPU does the plan while the host page-locks; the host's registration and
  the copies overlap chunk by chunk.
*/
static ellr_status create_device(ellr_cuda_matrix *d, const ellr_csr *a, cudaStream_t s)
{
  ellr_plan    *pl  = &d->plan;
  const int32_t n   = a->nrows;
  const int64_t nnz = d->nnz;
  const size_t  rpb = ((size_t)n + 1) * sizeof(int32_t);
  create_ctx    c;
  float         ms;
  if (ellr_cuda_device_count() <= 0) return ellr_error(ELLR_ERR_CUDA, "no CUDA device is available (no GPU, or no driver)");
  /* small blocks are planned on the host (below); streamed: only the row offsets go up whole, for the plan, and
     only while it is made; the rest is settled once the plan is known (the CSR is then uploaded after all) */
  const int small = n > 0 && n < g_host_plan_rows.load(std::memory_order_relaxed) && nnz < ELLR_HOST_PLAN_NNZ;
  int       lean  = !small && nnz > 0 && !a->d_rowptr && a->cols_sorted && !d->params.pin_host && d->params.tune != ELLR_TUNE_EXHAUSTIVE && (d->params.family == ELLR_FAMILY_SLICED || d->params.family == ELLR_FAMILY_AUTO);
  if (d->borrow) { /* the caller's device CSR is the storage's: nothing allocated or copied for it */
    d->d_csr_rowptr = const_cast<int32_t *>(a->d_rowptr);
    d->d_csr_col    = const_cast<int32_t *>(a->d_colidx);
    d->d_csr_val    = const_cast<double *>(a->d_val);
  } else TRY(ellr_mem_check(rpb + (lean ? 0 : (size_t)nnz * 12), "the CSR upload"));
  if (!d->borrow) TRY(dalloc(&d->d_csr_rowptr, (size_t)n + 1, "the CSR row offsets"));
  if (!lean && !d->borrow) {
    TRY(dalloc(&d->d_csr_col, (size_t)nnz, "the CSR column indices"));
    TRY(dalloc(&d->d_csr_val, (size_t)nnz, "the CSR values"));
  }
  d->tune_pending = 1; /* the CSR is on the device: destroy frees it whatever happens next */
  CU(cudaStreamCreateWithFlags(&c.aux, cudaStreamNonBlocking));
  CU(cudaEventCreate(&c.up0));
  CU(cudaEventCreate(&c.up1));
  CU(cudaEventCreate(&c.fill0));
  CU(cudaEventCreate(&c.fill1));

  const double t0 = ellr_wall_ms();
  if (!d->borrow) TRY(copy_csr_array(d, a, 0, d->d_csr_rowptr, rpb, c.aux));
  CU(cudaStreamSynchronize(c.aux));

  /* Column indices and values are copied on the second stream while this thread plans on the first: a device
     copy (from aijcusparse's device CSR) or a host copy queue at once, so the plan overlaps them. */
  int dev = 0;
  CU(cudaGetDevice(&dev));
  (void)dev;
  CU(cudaEventRecord(c.up0, c.aux));
  if (!lean && !d->borrow) {
    TRY(copy_csr_array(d, a, 1, d->d_csr_col, (size_t)nnz * sizeof(int32_t), c.aux));
    TRY(copy_csr_array(d, a, 2, d->d_csr_val, (size_t)nnz * sizeof(double), c.aux));
  }
  CU(cudaEventRecord(c.up1, c.aux));

  double  t1     = ellr_wall_ms();
  int32_t maxlen = 0;
  /* small blocks without long rows: planned on the host (ELLR_HOST_PLAN_ROWS), here only what the pattern cache's
     key needs; the GPU plan otherwise */
  const uint64_t sig   = small ? ellr_cuda_plan_signature(a->rowptr, n, a->ncols, &maxlen) : 0;
  const int      host  = small && maxlen < ellr_long_row_min(&d->params, nnz, n);
  if (host) {
    pl->nrows        = n;
    pl->ncols        = a->ncols;
    pl->C            = ellr_slice_height(&d->params, n);
    d->dp.signature  = sig;
  } else TRY(ellr_cuda_plan_order(d->d_csr_rowptr, n, a->ncols, nnz, &d->params, s, pl, &d->dp));
  if (a->rows && n > 0) { /* uploaded once: the sliced layout's row map is made from it, the CSR families use it as is */
    TRY(dalloc(&d->d_rows, (size_t)n, "the compressed rows"));
    TRY(upload(d->d_rows, a->rows, (size_t)n * sizeof(int32_t), s, "cudaMemcpyAsync (compressed rows)"));
  }
  if (!host) TRY(ellr_cuda_plan_outrow(d->d_rows, ellr_csr_rows_out(a), s, pl, &d->dp));
  const int family = d->params.family;
  d->info.plan_parts_ms[0] = ellr_wall_ms() - t1;
  tune_key    key;
  tune_choice ch;
  int         T = d->params.threads_per_row;
  cache_key(d, &key);
  if ((!d->params.threads_per_row || !d->params.block_size) && n > 0 && cache_find(&key, &ch)) {
    d->cached = 1;
    if (!T) T = ch.T;
  }
  t1 = ellr_wall_ms();
  /* the CSR families take no padded layout (its geometry is still planned, for the statistics): no fill limit */
  int         csr_now = family == ELLR_FAMILY_CSR_VECTOR || family == ELLR_FAMILY_IPCSR || d->borrow;
  ellr_params gp      = d->params;
  if (csr_now) gp.max_fill = 0;
  /* pellr's automatic family on a block planned on the host with very uneven rows: IPCSR whatever the row order
     (model_family's first rule reads the longest and the mean row only), so the layout -- planned for its
     statistics, never stored -- keeps the rows' own order, without the sort and the window search (memplus,
     EPA); the same for a pattern whose cached family is IPCSR.  Not where products are to be timed: those time the
     sorted layout (checked once the plan is made). */
  int         skip_sort = host && family == ELLR_FAMILY_AUTO && d->params.sort_rows && d->params.tune != ELLR_TUNE_EXHAUSTIVE && (d->cached ? ch.family == ELLR_FAMILY_IPCSR : uneven_rows(maxlen, n > 0 ? (double)nnz / n : 0.0));
  ellr_status gst       = ELLR_OK;
  if (skip_sort) {
    ellr_params q = gp;
    q.sort_rows   = 0;
    q.max_fill    = 0;
    gst           = plan_on_host(d, a, T, &q);
    skip_sort     = !gst && (d->cached || !timed_tuning(d)); /* a cached family is kept as it is */
  }
  if (!skip_sort) gst = host ? plan_on_host(d, a, T, &gp) : ellr_cuda_plan_geometry(d->d_csr_rowptr, T, &gp, s, pl, &d->dp); /* ELLR_ERR_FILL before the storage is allocated */
  if (gst == ELLR_ERR_FILL && family == ELLR_FAMILY_AUTO) { /* too much padding: a CSR family */
    gp.max_fill = 0;
    csr_now     = 1;
    gst         = host ? plan_on_host(d, a, T, &gp) : ellr_cuda_plan_geometry(d->d_csr_rowptr, T, &gp, s, pl, &d->dp);
  }
  TRY(gst);
  int csr_family = family, tune_how = ELLR_TUNED_BY_NONE;
  if (skip_sort) {
    csr_now                = 1;
    csr_family             = ELLR_FAMILY_IPCSR;
    tune_how               = d->cached ? ELLR_TUNED_BY_CACHE : d->params.tune == ELLR_TUNE_NONE ? ELLR_TUNED_BY_NONE : ELLR_TUNED_BY_MODEL;
    d->info.order_skipped  = 1;
  } else if ((family == ELLR_FAMILY_AUTO || family == ELLR_FAMILY_SLICED) && csr_now) csr_family = model_family(d, 0); /* the padding refused the layout, or the caller's CSR is the storage */
  else if (family == ELLR_FAMILY_AUTO && n > 0) { /* a CSR family known now is never filled as a layout first */
    const int known = d->cached ? ch.family : family_before_timing(d);
    if (known != ELLR_FAMILY_SLICED) {
      csr_now    = 1;
      csr_family = known;
      tune_how   = d->cached ? ELLR_TUNED_BY_CACHE : d->params.tune == ELLR_TUNE_NONE ? ELLR_TUNED_BY_NONE : ELLR_TUNED_BY_MODEL;
    }
  }
  /* the streamed build needs a layout that keeps no CSR: no CSR family, no long rows (their chunks are filled
     from the whole CSR), no family left to time unless the layout's bytes settle it (ELLR_UNTIMED_FILL) */
  if (lean && d->cached && ch.family != ELLR_FAMILY_SLICED) lean = 0;
  if (lean && (csr_now || d->dp.lr.nlong > 0)) lean = 0;
  if (lean && family == ELLR_FAMILY_AUTO && !d->cached && timed_tuning(d)) {
    if (pl->stats.fill <= ELLR_UNTIMED_FILL) d->family_untimed = 1;
    else lean = 0;
  }
  if (!lean && !d->d_csr_col && nnz > 0) { /* the CSR after all: uploaded now, while the storage is allocated */
    TRY(ellr_mem_check((size_t)nnz * 12, "the CSR upload"));
    TRY(dalloc(&d->d_csr_col, (size_t)nnz, "the CSR column indices"));
    TRY(dalloc(&d->d_csr_val, (size_t)nnz, "the CSR values"));
    CU(cudaEventRecord(c.up0, c.aux));
    TRY(copy_csr_array(d, a, 1, d->d_csr_col, (size_t)nnz * sizeof(int32_t), c.aux));
    TRY(copy_csr_array(d, a, 2, d->d_csr_val, (size_t)nnz * sizeof(double), c.aux));
    CU(cudaEventRecord(c.up1, c.aux));
  }
  if (lean) { /* the plan is made: the row offsets go before the storage is allocated (the chunks carry theirs) */
    CU(cudaStreamSynchronize(s));
    TRY(dfree(&d->d_csr_rowptr));
    d->streamed          = 1;
    d->info.streamed     = 1;
    d->info.stage_bytes  = (size_t)stream_entries(d) * 12 + ((size_t)(stream_entries(d) < n ? stream_entries(d) : n) + 1) * 4;
  }
  if (host) TRY(host_plan_to_device(d, a, !csr_now, s));
  d->info.plan_on_host = host;
  d->info.plan_parts_ms[1] = ellr_wall_ms() - t1;
  t1                       = ellr_wall_ms();
  if (!csr_now) TRY(ensure_storage(d));
  d->info.plan_parts_ms[2] = ellr_wall_ms() - t1;
  d->info.plan_ms          = ellr_wall_ms() - t0;

  t1 = ellr_wall_ms();
  CU(cudaEventSynchronize(c.up1));
  d->info.upload_wait_ms = ellr_wall_ms() - t1;

  d->bs = d->params.block_size ? d->params.block_size : (d->cached ? ch.bs : 256); /* ellr_cuda_tune applies the rest of a cached choice */
  CU(cudaStreamWaitEvent(s, c.up1, 0));
  CU(cudaEventRecord(c.fill0, s));
  if (csr_now) TRY(use_csr_family(d, csr_family, s)); /* IPCSR's row blocks */
  else if (lean) TRY(build_layout_streamed(d, a, s)); /* the upload is the chunks': timed with the fill */
  else TRY(build_layout(d, s)); /* returns with s synchronized, so the uploads are complete too */
  CU(cudaEventRecord(c.fill1, s));
  CU(cudaEventSynchronize(c.fill1));
  CU(cudaEventElapsedTime(&ms, c.up0, c.up1));
  d->info.upload_ms    = ms; /* GPU time from the first copy to the last: the registration it waited for included */
  d->info.upload_bytes = (size_t)nnz * 12;
  CU(cudaEventElapsedTime(&ms, c.fill0, c.fill1));
  d->info.fill_ms = ms;
  TRY(dfree(&d->dp.unused)); /* the upload is in: no wait */

  if (!csr_now && (!d->params.threads_per_row || !d->params.block_size || family == ELLR_FAMILY_AUTO) && n > 0) return ELLR_OK; /* tuning pending: keep the CSR */
  if (family == ELLR_FAMILY_AUTO && csr_now && !d->cached && n > 0) { /* the family decided before the fill, cached as tune caches its choice */
    ch = {ellr_plan_threads_param(pl), d->bs, 0, 0, csr_family};
    cache_store(&key, &ch);
  }
  TRY(free_tuning_csr(d));
  d->info.tuned    = 1; /* nothing (more) to tune */
  d->info.tune_how = tune_how;
  return ELLR_OK;
}

static size_t scratch_bytes(const ellr_cuda_matrix *d)
{
  const ellr_plan *pl = &d->plan;
  size_t           b  = 0;
  if (d->family == ELLR_FAMILY_SLICED) { /* otherwise the CSR is the storage */
    if (d->d_csr_rowptr) b += ((size_t)pl->nrows + 1) * 4;
    if (d->d_csr_col) b += (size_t)d->nnz * 4;
    if (d->d_csr_val) b += (size_t)d->nnz * 8;
  }
  if (d->d_x) b += 2 * d->stage_n * sizeof(double);
  return b;
}

static size_t device_bytes(const ellr_cuda_matrix *d)
{
  const ellr_plan *pl = &d->plan;
  /* what is allocated now (a CSR family frees the layout's arrays) */
  size_t           b  = (size_t)d->cap_stored * 8 + (d->cols.words ? (size_t)d->cols.nwords * 2 : 0) + (d->cols.base ? (size_t)pl->nslices * 12 + 8 : 0) + (d->dp.rowlen ? (size_t)pl->nslices * pl->C * 4 : 0) + (d->dp.perm ? (size_t)pl->nrows * 4 : 0) + (d->dp.outrow ? (size_t)pl->nrows * 4 : 0) + (d->d_rows ? (size_t)pl->nrows * 4 : 0) + (d->dp.slice_start ? ((size_t)pl->nslices + 1) * 8 : 0);
  b += (size_t)d->cap_items * sizeof(int2) + (size_t)d->cap_split * 8 + (d->d_part_off ? (size_t)pl->nslices * 8 : 0) + (size_t)d->cap_part * 8 + ellr_cuda_long_bytes(&d->dp.lr);
  if (d->family != ELLR_FAMILY_SLICED) b += (d->borrow ? 0 : ((size_t)pl->nrows + 1) * 4 + (size_t)d->nnz * 12) + (d->csr.blocks ? ((size_t)d->csr.nblocks + 1) * 4 : 0);
  return b + scratch_bytes(d);
}

static ellr_status create(const ellr_csr *a, const ellr_params *p, void *stream, int borrow, ellr_cuda_matrix **out);

ellr_status ellr_cuda_create(const ellr_csr *a, const ellr_params *p, void *stream, ellr_cuda_matrix **out)
{
  return create(a, p, stream, 0, out);
}

ellr_status ellr_cuda_create_on(const ellr_csr *a, const ellr_params *p, void *stream, ellr_cuda_matrix **out)
{
  if (out) *out = NULL;
  if (a && a->nrows > 0 && a->rowptr && a->rowptr[a->nrows] > 0 && (!a->d_rowptr || !a->d_colidx || !a->d_val)) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_create_on: the caller's CSR must be on the device (row offsets, column indices and values)");
  return create(a, p, stream, 1, out);
}

int ellr_cuda_borrows(const ellr_cuda_matrix *d, const ellr_csr *a)
{
  return d && a && d->borrow && d->d_csr_rowptr == a->d_rowptr && d->d_csr_col == a->d_colidx && d->d_csr_val == a->d_val;
}

static ellr_status create(const ellr_csr *a, const ellr_params *p, void *stream, int borrow, ellr_cuda_matrix **out)
{
  if (!out) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_create: no output pointer");
  *out = NULL;
  if (!a || !p) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_create: missing matrix or parameters");
  TRY(ellr_params_check(p));
  if (a->nrows < 0 || a->ncols < 0) return ellr_error(ELLR_ERR_ARG, "matrix size %d x %d is negative", a->nrows, a->ncols);
  if (!a->rowptr) return ellr_error(ELLR_ERR_ARG, "CSR row offsets are missing");
  if (a->rowptr[0] != 0) return ellr_error(ELLR_ERR_ARG, "CSR row offsets must start at 0, not %d", a->rowptr[0]);
  if (a->rowptr[a->nrows] < 0) return ellr_error(ELLR_ERR_ARG, "CSR row offsets end at %d", a->rowptr[a->nrows]);
  if (a->nrows > 0 && a->rowptr[a->nrows] > 0 && (!a->colidx || (!a->val && !a->d_val))) return ellr_error(ELLR_ERR_ARG, "CSR column indices or values are missing");
  if ((a->d_rowptr || a->d_colidx || a->d_val) && (!a->d_rowptr || !a->d_colidx || !a->d_val || a->rows)) return ellr_error(ELLR_ERR_ARG, "a CSR on the device needs its row offsets, column indices and values there, and no compressed rows");
  TRY(ellr_csr_check_rows(a));
  ellr_cuda_matrix *d = (ellr_cuda_matrix *)ellr_calloc(1, sizeof(*d));
  if (!d) return ellr_error(ELLR_ERR_MEM, "cannot allocate the matrix descriptor");
  d->params       = *p;
  d->req          = g_default_kopts;
  d->borrow       = borrow && a->d_rowptr != NULL; /* an empty matrix borrows nothing */
  d->nnz          = a->rowptr[a->nrows];
  const double t0 = ellr_wall_ms();
  ellr_status  st = create_device(d, a, (cudaStream_t)stream);
  if (!st && ellr_test_fail_now(ELLR_STAGE_CREATE)) st = ellr_error(ELLR_ERR_CUDA, "the GPU storage could not be made (injected by the test hook, after the upload, page-locking and fill)");
  if (st) {
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", ellr_last_error());
    (void)cudaStreamSynchronize((cudaStream_t)stream); /* nothing queued may still read a or the plan */
    (void)cudaGetLastError();
    ellr_cuda_destroy(d); /* frees what was allocated (page-locking included); keep the first error's text */
    ellr_error(st, "%s", msg);
    return st;
  }
  d->info.create_ms = ellr_wall_ms() - t0;
  *out              = d;
  return ELLR_OK;
}

/* New values from the caller's device copy of the CSR: the padded layout is refilled straight from it (no copy, no
   scratch); the CSR families and a layout still to be tuned keep a CSR of their own, refreshed by a device copy.
   All on s, nothing waited for: the caller's device arrays are ordered by the same stream. */
static ellr_status update_from_device(ellr_cuda_matrix *d, const ellr_csr *a, cudaStream_t s)
{
  const size_t vbytes = (size_t)d->nnz * sizeof(double);
  if (!a->d_rowptr) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: device values without device row offsets");
  if (!d->refresh_start) CU(cudaEventCreate(&d->refresh_start));
  if (!d->refresh_done) CU(cudaEventCreate(&d->refresh_done));
  if (ellr_test_fail_now(ELLR_STAGE_UPDATE)) return ellr_error(ELLR_ERR_CUDA, "the refresh failed (injected by the test hook)");
  d->info.refreshes++;
  d->info.refresh_copy_ms = 0;
  if (d->family != ELLR_FAMILY_SLICED || d->tune_pending) {
    if (!d->d_csr_val) TRY(dalloc(&d->d_csr_val, (size_t)d->nnz, "the values update"));
    CU(cudaMemcpyAsync(d->d_csr_val, a->d_val, vbytes, cudaMemcpyDeviceToDevice, s));
    if (d->family != ELLR_FAMILY_SLICED) return ELLR_OK;
  }
  int32_t    *own_rowptr = d->d_csr_rowptr;
  double     *own_val    = d->d_csr_val;
  ellr_status st         = ELLR_OK;
  if (!d->tune_pending) { /* read the caller's arrays for this refill only */
    d->d_csr_rowptr = const_cast<int32_t *>(a->d_rowptr);
    d->d_csr_val    = const_cast<double *>(a->d_val);
  }
  cudaError_t e = cudaEventRecord(d->refresh_start, s);
  if (e != cudaSuccess) st = cu_err(e, "cudaEventRecord", __LINE__);
  if (!st) st = fill(d, 1, s);
  if (!st && (e = cudaPeekAtLastError()) != cudaSuccess) st = cu_err(e, "the refill kernel", __LINE__);
  if (!st) st = ellr_cuda_long_fill(&d->dp.lr, d->d_csr_rowptr, NULL, d->d_csr_val, s);
  if (!st && (e = cudaEventRecord(d->refresh_done, s)) != cudaSuccess) st = cu_err(e, "cudaEventRecord", __LINE__);
  d->d_csr_rowptr = own_rowptr;
  d->d_csr_val    = own_val;
  return st;
}

ellr_status ellr_cuda_update_values(ellr_cuda_matrix *d, const ellr_csr *a, void *stream)
{
  if (!d || !a) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: missing argument");
  const ellr_plan *pl = &d->plan;
  if (a->nrows != pl->nrows || a->ncols != pl->ncols || !a->rowptr || a->rowptr[a->nrows] != d->nnz)
    return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: the matrix is %d x %d with %lld entries, not the %d x %d with %lld planned", a->nrows, a->ncols, a->rowptr ? (long long)a->rowptr[a->nrows] : -1LL, pl->nrows, pl->ncols, (long long)d->nnz);
  if (d->nnz == 0 || pl->nrows == 0) return ELLR_OK;
  if (!a->val && !a->d_val) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: no values");
  cudaStream_t s = (cudaStream_t)stream;
  if (d->borrow) { /* the products read the caller's arrays, which hold the new values already */
    if (!ellr_cuda_borrows(d, a)) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: a storage on the caller's device CSR takes its values from those same arrays (they moved: make the storage again)");
    d->info.refreshes++;
    return ELLR_OK;
  }
  if (a->d_val) return update_from_device(d, a, s);
  if (d->family == ELLR_FAMILY_SLICED && !d->dp.lr.nlong && !d->d_csr_col && !d->params.pin_host) {
    /* no CSR kept (streamed, or tuned): the values streamed through a staging buffer, none kept after */
    if (d->refresh_done) CU(cudaStreamWaitEvent(s, d->refresh_done, 0)); /* a refill from aijcusparse's values */
    if (d->refresh_ready) { /* scratch of an earlier refresh goes: the layout holds the values */
      CU(cudaStreamSynchronize(s));
      TRY(dfree(&d->d_csr_val));
      TRY(dfree(&d->d_csr_rowptr));
      d->refresh_ready = 0;
    }
    const double t0 = ellr_wall_ms();
    d->info.stage_bytes = (size_t)stream_entries(d) * 8 + ((size_t)(stream_entries(d) < pl->nrows ? stream_entries(d) : pl->nrows) + 1) * 4;
    TRY(stream_csr(d, a, 1, s));
    if (ellr_test_fail_now(ELLR_STAGE_UPDATE)) return ellr_error(ELLR_ERR_CUDA, "the refresh failed (injected by the test hook, after the copy and any page-locking of the values)");
    d->info.refresh_copy_ms = ellr_wall_ms() - t0;
    d->info.refresh_fill_ms = 0; /* inside the copy's time: each chunk is filled as it lands */
    d->info.refreshes++;
    return ELLR_OK;
  }
  if (!d->refresh_ready) {
    /* first refresh: scratch for the values and row offsets, kept until destroy.  While tuning is
       pending they are the CSR kept by create (so that tuning refills with these new values), row
       offsets included; otherwise the row offsets go up now, once: same pattern, same offsets. */
    if (!d->d_csr_val) TRY(dalloc(&d->d_csr_val, (size_t)d->nnz, "the values update"));
    if (!d->d_csr_rowptr) TRY(dalloc(&d->d_csr_rowptr, (size_t)pl->nrows + 1, "the row offsets of the values update"));
    if (!d->tune_pending && d->family == ELLR_FAMILY_SLICED) {
      /* by copy_in: row offsets page-locked at create (ELLR_PIN_MIN) are registered only in their whole pages, and
         one copy across the registered part's edge was refused (cudaErrorInvalidValue, 2M-row power law, H100) */
      TRY(copy_in(d, 0, d->d_csr_rowptr, a->rowptr, ((size_t)pl->nrows + 1) * sizeof(int32_t), s));
      CU(cudaStreamSynchronize(s));
    }
    if (!d->refresh_start) CU(cudaEventCreate(&d->refresh_start));
    if (!d->refresh_done) CU(cudaEventCreate(&d->refresh_done));
    d->refresh_ready = 1;
  }
  /* The previous refill (perhaps queued on another stream) must have read the scratch before it is
     overwritten. */
  CU(cudaStreamWaitEvent(s, d->refresh_done, 0));
  /* The caller may change a->val as soon as we return: the copy is waited for (no second pinned copy of
     the values: it would cost a host memcpy at ~9 GB/s).  With the values page-locked since create
     (pin_host) the copy runs at the link's speed, otherwise through the driver's pageable path.  The wait
     also covers work already queued on s: in PETSc the stream is normally idle when values change
     (assembly is host work).  The refill kernel is queued after the wait and not waited for. */
  const double t0     = ellr_wall_ms();
  const size_t vbytes = (size_t)d->nnz * sizeof(double);
  /* values left pageable at create (under ELLR_PIN_MIN) are page-locked at the second refresh: a code that
     refreshes twice (SNES, TS) refreshes many times, and from ELLR_PIN_REFRESH_MIN up the registration is paid
     back within a few refreshes.  Never again once the caller has released page-locking (its arrays may move). */
  if (d->info.refreshes >= 1 && !d->pin_len[2] && !d->unpinned && !d->info.pin_note[0]) {
    const double pin0 = d->info.pin_ms;
    TRY(pin_and_copy(d, 2, d->d_csr_val, a->val, vbytes, ELLR_PIN_REFRESH_MIN, s));
    d->info.refresh_pin_ms = d->info.pin_ms - pin0; /* not create's */
    d->info.pin_ms         = pin0;
  } else TRY(copy_in(d, 2, d->d_csr_val, a->val, vbytes, s));
  CU(cudaStreamSynchronize(s));
  if (ellr_test_fail_now(ELLR_STAGE_UPDATE)) return ellr_error(ELLR_ERR_CUDA, "the refresh failed (injected by the test hook, after the copy and any page-locking of the values)");
  d->info.refresh_copy_ms = ellr_wall_ms() - t0;
  d->info.refreshes++;
  if (d->family != ELLR_FAMILY_SLICED) return ELLR_OK; /* the CSR families multiply with the values just copied */
  CU(cudaEventRecord(d->refresh_start, s));
  TRY(fill(d, 1, s));
  CU(cudaPeekAtLastError());
  TRY(ellr_cuda_long_fill(&d->dp.lr, d->d_csr_rowptr, NULL, d->d_csr_val, s));
  CU(cudaEventRecord(d->refresh_done, s));
  return ELLR_OK;
}

/* Pinned and device buffers for host vectors, large enough for either direction; allocated once. */
static ellr_status ensure_staging(ellr_cuda_matrix *d)
{
  if (d->h_x) return ELLR_OK;
  const size_t n = (size_t)(d->plan.nrows_out > d->plan.ncols ? d->plan.nrows_out : d->plan.ncols) + 1;
  TRY(ellr_mem_check(2 * n * sizeof(double), "the staging vectors"));
  double     *hx = NULL, *hy = NULL, *dx = NULL, *dy = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  cudaError_t e  = cudaMallocHost((void **)&hx, n * sizeof(double));
  if (e == cudaSuccess) e = cudaMallocHost((void **)&hy, n * sizeof(double));
  if (e == cudaSuccess) e = cudaMalloc((void **)&dx, n * sizeof(double));
  if (e == cudaSuccess) e = cudaMalloc((void **)&dy, n * sizeof(double));
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&e0, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&e1, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    if (hx) cudaFreeHost(hx);
    if (hy) cudaFreeHost(hy);
    if (dx) cudaFree(dx);
    if (dy) cudaFree(dy);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return cu_err(e, "allocating the staging vectors", __LINE__);
  }
  d->h_x        = hx;
  d->h_y        = hy;
  d->d_x        = dx;
  d->d_y        = dy;
  d->stage_h2d  = e0;
  d->stage_used = e1;
  d->stage_n    = n;
  return ELLR_OK;
}

ellr_status ellr_cuda_mult_mixed(ellr_cuda_matrix *d, const double *x, int x_host, const double *z, int z_host, double *y, int y_host, int transpose, void *stream)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult_mixed: no matrix");
  x_host = x_host != 0;
  z_host = z_host != 0;
  y_host = y_host != 0;
  if (z && z == y && z_host != y_host) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult_mixed: z aliases y but one is said to be on the host and the other on the device");
  const size_t nin = (size_t)(transpose ? d->plan.nrows_out : d->plan.ncols), nout = (size_t)(transpose ? d->plan.ncols : d->plan.nrows_out);
  if (nout == 0) return ELLR_OK;
  if (!y || (!x && nin > 0)) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult_mixed: missing vector");
  if (!x_host && !y_host && !(z && z_host)) return ellr_cuda_mult(d, x, z, y, transpose, stream); /* all on the device */
  TRY(ensure_staging(d));
  cudaStream_t s = (cudaStream_t)stream;
  /* The previous staged product: its copies out of the pinned buffers must be done before the host
     overwrites them, and (were it on another stream) its use of d_x / d_y before this stream's copies
     overwrite those.  Both normally finished long ago. */
  CU(cudaEventSynchronize(d->stage_h2d));
  CU(cudaStreamWaitEvent(s, d->stage_used, 0));
  const double *dx = x, *dz = z;
  double       *dy  = y_host ? d->d_y : y;
  int           h2d = 0;
  if (x_host) {
    dx = d->d_x;
    if (nin) {
      memcpy(d->h_x, x, nin * sizeof(double));
      CU(cudaMemcpyAsync(d->d_x, d->h_x, nin * sizeof(double), cudaMemcpyHostToDevice, s));
      h2d = 1;
    }
  }
  if (z) {
    if (z_host) {
      /* z's values go straight into the device output, and the product adds in place (z aliasing y);
         with z == y on the host that is y's own values */
      memcpy(d->h_y, z, nout * sizeof(double));
      CU(cudaMemcpyAsync(dy, d->h_y, nout * sizeof(double), cudaMemcpyHostToDevice, s));
      h2d = 1;
      dz  = dy;
    } else if (z == y) dz = dy; /* both on the device */
    /* else: z on the device, distinct from y */
  }
  if (h2d) CU(cudaEventRecord(d->stage_h2d, s));
  TRY(ellr_cuda_mult(d, dx, dz, dy, transpose, stream));
  if (y_host) CU(cudaMemcpyAsync(d->h_y, d->d_y, nout * sizeof(double), cudaMemcpyDeviceToHost, s));
  CU(cudaEventRecord(d->stage_used, s));
  if (y_host) {
    CU(cudaStreamSynchronize(s));
    memcpy(y, d->h_y, nout * sizeof(double));
  }
  return ELLR_OK;
}

void ellr_cuda_get_info(const ellr_cuda_matrix *d, ellr_cuda_info *info)
{
  *info                 = d->info;
  info->threads_per_row = d->plan.T;
  info->block_size      = d->bs;
  info->device_bytes    = device_bytes(d);
  info->scratch_bytes   = scratch_bytes(d);
  info->borrowed        = d->borrow;
  info->plan            = &d->plan;
  info->refresh_fill_ms = -1;
  float       ms;
  cudaError_t q = d->refresh_done ? cudaEventQuery(d->refresh_done) : cudaSuccess;
  if (d->refresh_done && q == cudaSuccess && (q = cudaEventElapsedTime(&ms, d->refresh_start, d->refresh_done)) == cudaSuccess) info->refresh_fill_ms = ms;
  /* clears only what the query itself recorded: an error pending from work not the engine's (PETSc's kernels) stays */
  if (q != cudaSuccess && cudaPeekAtLastError() == q) (void)cudaGetLastError();
}

size_t ellr_cuda_pinned_bytes(const ellr_cuda_matrix *d) { return d ? d->info.pinned_bytes : 0; }

const void *ellr_cuda_pinned_array(const ellr_cuda_matrix *d, int k) { return d && k >= 0 && k < 3 && d->pin_len[k] ? d->pin_src[k] : NULL; }

const ellr_plan *ellr_cuda_plan(const ellr_cuda_matrix *d) { return &d->plan; }

ellr_status ellr_cuda_destroy(ellr_cuda_matrix *d)
{
  if (!d) return ELLR_OK;
  ellr_status st = ELLR_OK, s2;
  cudaError_t e;
#define CUDA1(call) \
  if ((e = (call)) != cudaSuccess && !st) st = cu_err(e, #call, __LINE__)
  /* pending staged copies and refills first (cudaFree below waits for the rest of the device's work) */
  if (d->stage_h2d) CUDA1(cudaEventSynchronize(d->stage_h2d));
  if (d->stage_used) CUDA1(cudaEventSynchronize(d->stage_used));
  if (d->refresh_done) CUDA1(cudaEventSynchronize(d->refresh_done));
#define FREE1(p) \
  if ((s2 = dfree(&d->p)) && !st) st = s2
  if (d->borrow) d->d_csr_rowptr = d->d_csr_col = NULL, d->d_csr_val = NULL; /* the caller's */
  FREE1(d_csr_rowptr);
  FREE1(d_csr_col);
  FREE1(d_csr_val);
  if ((s2 = ellr_cuda_plan_free(&d->dp)) && !st) st = s2;
  if ((s2 = ellr_cuda_cols_free(&d->cols)) && !st) st = s2;
  FREE1(d_val);
  FREE1(d_items);
  FREE1(d_split);
  FREE1(d_part_off);
  FREE1(d_part);
  FREE1(d_x);
  FREE1(d_y);
  FREE1(d_rows);
#undef FREE1
  if ((s2 = ellr_cuda_csr_free(&d->csr)) && !st) st = s2;
  if (d->h_x) CUDA1(cudaFreeHost(d->h_x));
  if (d->h_y) CUDA1(cudaFreeHost(d->h_y));
  if (d->stage_h2d) CUDA1(cudaEventDestroy(d->stage_h2d));
  if (d->stage_used) CUDA1(cudaEventDestroy(d->stage_used));
  if (d->refresh_done) CUDA1(cudaEventDestroy(d->refresh_done));
  if (d->refresh_start) CUDA1(cudaEventDestroy(d->refresh_start));
  if ((s2 = ellr_cuda_unpin_host(d)) && !st) st = s2;
#undef CUDA1
  if (ellr_test_fail_now(ELLR_STAGE_DESTROY) && !st) st = ellr_error(ELLR_ERR_CUDA, "freeing failed (injected by the test hook, after everything was freed)");
  ellr_plan_destroy(&d->plan);
  ellr_free(d);
  return st;
}

/* ---- internal knobs (ellr_cuda_internal.cuh) ---------------------------------------------------- */
/* Test and benchmark knobs: not stream-aware; they wait for the whole device, then work on the legacy
   default stream. */
ellr_status ellr_cuda_set_kopts(ellr_cuda_matrix *d, const ellr_cuda_kopts *o)
{
  if (d->family != ELLR_FAMILY_SLICED) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_set_kopts: kernel options are for the sliced family, not a CSR one");
  CU(cudaDeviceSynchronize()); /* no product may be reading the work items about to be replaced */
  d->req = o ? *o : g_default_kopts;
  resolve_kopts(d);
  return build_items(d, (cudaStream_t)0);
}

void ellr_cuda_get_kopts(const ellr_cuda_matrix *d, ellr_cuda_kopts *o)
{
  o->kernel = d->kernel;
  o->uselen = d->uselen;
  o->chunk  = d->J;
  o->loads  = d->loads;
}

void ellr_cuda_set_host_plan_rows(int32_t rows) { g_host_plan_rows.store(rows < 0 ? ELLR_HOST_PLAN_ROWS : rows, std::memory_order_relaxed); }

void ellr_cuda_set_default_kopts(const ellr_cuda_kopts *o)
{
  static const ellr_cuda_kopts automatic = {0, -1, 0, -1};
  g_default_kopts                        = o ? *o : automatic;
}
