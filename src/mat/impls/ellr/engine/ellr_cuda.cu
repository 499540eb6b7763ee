/*
  ellr_cuda.cu - the CUDA backend of the engine (ellr_cuda.h), PETSc-free.

  create:  host plan (ellr_plan_create: the fill check happens there, before any GPU allocation)
           -> GPU memory check (cudaMemGetInfo) -> CSR uploaded -> layout filled on the GPU with the
           default T and block size.  With tuning pending the uploaded CSR is kept for ellr_cuda_tune,
           otherwise freed.
  tune:    (T, BS, kernel options) tuned when asked for 0: each T candidate is a host re-plan (O(n))
           plus a device refill from the CSR kept by create, each timed with CUDA events -> CSR freed.
           Keeping the CSR costs no time and no more peak memory than create already had (the CSR
           sat next to the storage for the fill); re-uploading it from the host would cost a PCIe
           transfer of 12 nnz bytes.  The price is that GPU memory stays held between create and tune
           when tune is called late or never (destroy frees it).
  update:  values uploaded into a scratch buffer kept from the first refresh on (row offsets
           uploaded once, at that first refresh), values scattered on the GPU.
  mult:    one kernel launch (two when a chunked layout splits slices), any stream.
  Every copy and kernel goes to the caller's stream.  Host arrays that are the source of a copy stay
  untouched until the copy has completed (a stream synchronize in create/tune/update; pinned staging
  for the products), since cudaMemcpyAsync from pageable memory is documented only as "might be
  synchronous".  Every CUDA call is checked; errors come back as ELLR_ERR_CUDA with ellr_last_error()
  text, and a failed create frees everything it allocated.
*/
#include "ellr_cuda.h"
#include "ellr_cuda_internal.cuh"
#include "ellr_cuda_kernels.cuh"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

struct ellr_cuda_matrix {
  ellr_plan       plan;
  ellr_params     params;
  int64_t         nnz;
  int             bs;
  ellr_cuda_kopts req; /* requested kernel options */
  int             kernel, uselen, loads, J; /* resolved: kernel 1 rows / 2 chunks */
  /* device storage */
  int64_t *d_slice_start;
  int32_t *d_rowlen, *d_perm, *d_col;
  double  *d_val;
  int2    *d_items;
  int32_t *d_split;
  int64_t  nitems, nsplit, cap_items, cap_split, cap_stored;
  /* the CSR on the device: all three arrays from create until tune (tune_pending); row offsets and
     values then stay as the refresh scratch once update_values has run (refresh_ready) */
  int32_t    *d_csr_rowptr, *d_csr_col;
  double     *d_csr_val;
  int         tune_pending, refresh_ready;
  cudaEvent_t refresh_done; /* after the last refill: the scratch values have been read */
  /* staging for host vectors in ellr_cuda_mult_mixed */
  double     *h_x, *h_y, *d_x, *d_y;
  size_t      stage_n;
  cudaEvent_t stage_h2d;  /* after the last copies out of the pinned buffers */
  cudaEvent_t stage_used; /* after the last staged product: d_x / d_y free again */
  ellr_cuda_info info;
};

static ellr_cuda_kopts g_default_kopts = {0, -1, 0, -1};

static double wall_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static ellr_status cu_err(cudaError_t e, const char *what, int line)
{
  (void)cudaGetLastError(); /* a non-sticky error must not resurface at the next launch check */
  return ellr_error(ELLR_ERR_CUDA, "CUDA error %s (%s) in %s (ellr_cuda.cu:%d)", cudaGetErrorName(e), cudaGetErrorString(e), what, line);
}
#define CU(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) return cu_err(e_, #call, __LINE__); \
  } while (0)
#define TRY(call) \
  do { \
    ellr_status s_ = (call); \
    if (s_ != ELLR_OK) return s_; \
  } while (0)

static ellr_status mem_check(size_t need, const char *what)
{
  size_t freeb = 0, total = 0;
  CU(cudaMemGetInfo(&freeb, &total));
  if (need > freeb) return ellr_error(ELLR_ERR_CUDA, "GPU out of memory: %s needs %zu bytes (%.1f MB) but only %zu bytes (%.1f MB) of %zu are free", what, need, need / 1e6, freeb, freeb / 1e6, total);
  return ELLR_OK;
}

template <class X>
static ellr_status dalloc(X **p, size_t n, const char *what)
{
  cudaError_t e = cudaMalloc((void **)p, (n ? n : 1) * sizeof(X));
  if (e != cudaSuccess) {
    *p = NULL;
    (void)cudaGetLastError();
    return ellr_error(ELLR_ERR_CUDA, "GPU out of memory: cudaMalloc of %zu bytes for %s failed: %s", (n ? n : 1) * sizeof(X), what, cudaGetErrorString(e));
  }
  return ELLR_OK;
}

/* cudaFree waits for the device's outstanding work first, so nothing queued still reads the buffer. */
template <class X>
static ellr_status dfree(X **p)
{
  cudaError_t e = *p ? cudaFree((void *)*p) : cudaSuccess;
  *p            = NULL;
  if (e != cudaSuccess) return cu_err(e, "cudaFree", __LINE__);
  return ELLR_OK;
}

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
static size_t plan_device_bytes(const ellr_plan *pl)
{
  return pl->stats.bytes; /* values + columns + rowlen + perm + slice offsets, as on the host */
}

static inline int64_t slice_blocks(const ellr_plan *pl, int32_t s) { return (pl->slice_start[s + 1] - pl->slice_start[s]) / ((int64_t)pl->C * pl->T); }

int64_t ellr_cuda_count_items(const ellr_plan *pl, int J, int64_t *nsplit)
{
  int64_t items = 0, split = 0;
  for (int32_t s = 0; s < pl->nslices; s++) {
    const int64_t Js = slice_blocks(pl, s);
    if (J > 0 && Js > J) {
      items += (Js + J - 1) / J;
      split++;
    } else items++;
  }
  if (nsplit) *nsplit = split;
  return items;
}

/* ---- kernel options and work items ------------------------------------------------------------ */
static void resolve_kopts(ellr_cuda_matrix *d)
{
  const ellr_plan *pl       = &d->plan;
  const int64_t    CT       = (int64_t)pl->C * pl->T;
  const int        chunk_ok = CT % 32 == 0;
  if (d->req.chunk > 0) d->J = d->req.chunk;
  else if (d->req.chunk < 0) d->J = INT_MAX;
  else {
    /* measured (H200): power-law 2M equal within 2% for 64..256 column blocks per item, 2x slower
       at 1024; memplus wants small items (one launch too few to hide a 287-block slice) */
    const double avg = pl->nslices ? (double)pl->stats.nstored / ((double)CT * pl->nslices) : 0.0;
    d->J             = avg * 4 > 64 ? (int)(avg * 4) : 64;
  }
  int64_t nsplit = 0;
  if (chunk_ok) ellr_cuda_count_items(pl, d->J, &nsplit);
  if (d->req.kernel == 1) d->kernel = 1;
  else if (d->req.kernel == 2) d->kernel = chunk_ok ? 2 : 1;
  else d->kernel = (chunk_ok && nsplit > 0) ? 2 : 1; /* chunks only where a slice is long enough to cut */
  if (d->req.uselen == 0 || d->req.uselen == 1) d->uselen = d->req.uselen;
  else d->uselen = 12.0 * (double)(pl->stats.nstored - pl->stats.nnz) > 4.0 * (double)pl->nrows; /* padding read vs rowlen read */
  d->loads = d->req.loads == 1 ? 1 : 0;
}

/* Work items of the chunks kernel, uploaded on s (synchronized: the host arrays are freed here). */
static ellr_status build_items(ellr_cuda_matrix *d, cudaStream_t s)
{
  d->nitems = 0;
  d->nsplit = 0;
  if (d->kernel != 2) return ELLR_OK;
  const ellr_plan *pl = &d->plan;
  int64_t          nsplit;
  const int64_t    nitems = ellr_cuda_count_items(pl, d->J, &nsplit);
  if (nitems > INT_MAX / 64) return ellr_error(ELLR_ERR_SIZE, "%lld work items are too many", (long long)nitems);
  int2    *items = (int2 *)malloc((size_t)nitems * sizeof(int2));
  int32_t *split = (int32_t *)malloc((size_t)(nsplit ? nsplit : 1) * sizeof(int32_t));
  if (!items || !split) {
    free(items);
    free(split);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate %lld work items", (long long)nitems);
  }
  int64_t q = 0, ns = 0;
  for (int32_t sl = 0; sl < pl->nslices; sl++) {
    const int64_t Js = slice_blocks(pl, sl);
    if (Js > d->J) {
      for (int64_t j = 0; j < Js; j += d->J) items[q++] = make_int2(sl, (int)j);
      split[ns++] = sl;
    } else items[q++] = make_int2(sl, 0);
  }
  ellr_status st = ELLR_OK;
  if (nitems > d->cap_items) {
    if (!(st = dfree(&d->d_items)) && !(st = mem_check((size_t)nitems * sizeof(int2), "the work items")) && !(st = dalloc(&d->d_items, (size_t)nitems, "the work items"))) d->cap_items = nitems;
    else d->cap_items = 0;
  }
  if (!st && nsplit > d->cap_split) {
    if (!(st = dfree(&d->d_split)) && !(st = dalloc(&d->d_split, (size_t)nsplit, "the split slices"))) d->cap_split = nsplit;
    else d->cap_split = 0;
  }
  if (!st) st = upload(d->d_items, items, (size_t)nitems * sizeof(int2), s, "cudaMemcpyAsync (work items)");
  if (!st) st = upload(d->d_split, split, (size_t)nsplit * sizeof(int32_t), s, "cudaMemcpyAsync (split slices)");
  free(items);
  free(split);
  if (st) return st;
  d->nitems = nitems;
  d->nsplit = nsplit;
  return ELLR_OK;
}

/* Device layout of d->plan from the CSR on the device: plan arrays, storage, fill, work items, all on
   s.  Returns with s synchronized (the host plan arrays copied; nothing of the old layout in use). */
static ellr_status build_layout(ellr_cuda_matrix *d, int first, cudaStream_t s)
{
  const ellr_plan *pl          = &d->plan;
  const size_t     nstoredrows = (size_t)pl->nslices * pl->C;
  if (first) {
    TRY(dalloc(&d->d_rowlen, nstoredrows, "the row lengths"));
    TRY(upload(d->d_rowlen, pl->rowlen, nstoredrows * sizeof(int32_t), s, "cudaMemcpyAsync (row lengths)"));
    if (pl->perm) {
      TRY(dalloc(&d->d_perm, (size_t)pl->nrows, "the row permutation"));
      TRY(upload(d->d_perm, pl->perm, (size_t)pl->nrows * sizeof(int32_t), s, "cudaMemcpyAsync (row permutation)"));
    }
    TRY(dalloc(&d->d_slice_start, (size_t)pl->nslices + 1, "the slice offsets"));
  }
  CU(cudaStreamSynchronize(s)); /* products of the old layout (tuning) done before its storage goes */
  TRY(upload(d->d_slice_start, pl->slice_start, ((size_t)pl->nslices + 1) * sizeof(int64_t), s, "cudaMemcpyAsync (slice offsets)"));
  const int64_t nstored = pl->stats.nstored;
  if (nstored != d->cap_stored || !d->d_col) {
    TRY(dfree(&d->d_col));
    TRY(dfree(&d->d_val));
    d->cap_stored = 0;
    TRY(mem_check((size_t)nstored * 12, "the padded storage"));
    TRY(dalloc(&d->d_col, (size_t)nstored, "the column indices"));
    TRY(dalloc(&d->d_val, (size_t)nstored, "the values"));
    d->cap_stored = nstored;
  }
  const int64_t threads = (int64_t)nstoredrows * pl->T;
  if (threads > 0 && nstored > 0) {
    const int64_t blocks = (threads + 255) / 256;
    ellr_kernel_fill<<<(unsigned)blocks, 256, 0, s>>>((int64_t)nstoredrows, pl->nrows, pl->C, pl->T, d->d_slice_start, d->d_rowlen, d->d_perm, d->d_csr_rowptr, d->d_csr_col, d->d_csr_val, d->d_col, d->d_val, 0);
    CU(cudaGetLastError());
  }
  resolve_kopts(d);
  TRY(build_items(d, s));
  CU(cudaStreamSynchronize(s));
  return ELLR_OK;
}

/* ---- products --------------------------------------------------------------------------------- */
template <int T, bool ADDZ, bool TRANS, bool LEN, int LD>
static void launch(int chunks, unsigned grid, unsigned block, cudaStream_t s, const ellr_kargs &a)
{
  if (chunks) ellr_kernel_chunks<T, ADDZ, TRANS, LEN, LD><<<grid, block, 0, s>>>(a);
  else ellr_kernel_rows<T, ADDZ, TRANS, LEN, LD><<<grid, block, 0, s>>>(a);
}

template <int T, bool ADDZ, bool LEN>
static void launch_ld(int chunks, int ld, unsigned grid, unsigned block, cudaStream_t s, const ellr_kargs &a)
{
  if (ld) launch<T, ADDZ, false, LEN, 1>(chunks, grid, block, s, a);
  else launch<T, ADDZ, false, LEN, 0>(chunks, grid, block, s, a);
}

template <int T>
static void launch_T(int chunks, bool addz, bool trans, bool len, int ld, unsigned grid, unsigned block, cudaStream_t s, const ellr_kargs &a)
{
  if (trans) launch<T, false, true, true, 0>(chunks, grid, block, s, a);
  else if (addz) {
    if (len) launch_ld<T, true, true>(chunks, ld, grid, block, s, a);
    else launch_ld<T, true, false>(chunks, ld, grid, block, s, a);
  } else {
    if (len) launch_ld<T, false, true>(chunks, ld, grid, block, s, a);
    else launch_ld<T, false, false>(chunks, ld, grid, block, s, a);
  }
}

ellr_status ellr_cuda_mult(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, void *stream)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult: no matrix");
  const ellr_plan *pl = &d->plan;
  cudaStream_t     s  = (cudaStream_t)stream;
  const int32_t    n = pl->nrows, m = pl->ncols;
  const int32_t    nout = transpose ? m : n;
  if (nout == 0) return ELLR_OK;
  if (!y || (!x && (transpose ? n : m) > 0)) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult: missing vector");
  if (transpose) {
    if (!z) CU(cudaMemsetAsync(y, 0, (size_t)m * sizeof(double), s));
    else if (z != y) CU(cudaMemcpyAsync(y, z, (size_t)m * sizeof(double), cudaMemcpyDeviceToDevice, s));
    if (n == 0 || pl->stats.nstored == 0) return ELLR_OK;
  }
  ellr_kargs a;
  a.nrows       = n;
  a.C           = pl->C;
  a.CT          = (int64_t)pl->C * pl->T;
  a.G           = (int32_t)(a.CT / 32);
  a.J           = d->J;
  a.nitems      = d->nitems;
  a.slice_start = d->d_slice_start;
  a.rowlen      = d->d_rowlen;
  a.perm        = d->d_perm;
  a.col         = d->d_col;
  a.val         = d->d_val;
  a.items       = d->d_items;
  a.x           = x;
  a.z           = transpose ? NULL : z;
  a.y           = y;
  const int chunks = d->kernel == 2;
  int64_t   blocks;
  if (chunks) {
    if (!transpose && d->nsplit > 0 && z != y) {
      const int64_t tb = (d->nsplit * pl->C + 255) / 256;
      ellr_kernel_init_split<<<(unsigned)tb, 256, 0, s>>>((int32_t)d->nsplit, d->d_split, pl->C, n, d->d_perm, z, y);
      CU(cudaGetLastError());
    }
    blocks = (d->nitems * a.G + d->bs / 32 - 1) / (d->bs / 32);
  } else blocks = ((int64_t)n * pl->T + d->bs - 1) / d->bs;
  if (blocks <= 0) return ELLR_OK;
  if (blocks > INT_MAX) return ellr_error(ELLR_ERR_SIZE, "ellr_cuda_mult: %lld blocks are too many", (long long)blocks);
  const bool len = transpose ? true : d->uselen != 0;
  switch (pl->T) {
  case 1:
    launch_T<1>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a);
    break;
  case 2:
    launch_T<2>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a);
    break;
  case 4:
    launch_T<4>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a);
    break;
  case 8:
    launch_T<8>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a);
    break;
  case 16:
    launch_T<16>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a);
    break;
  case 32:
    launch_T<32>(chunks, z != NULL, transpose != 0, len, d->loads, (unsigned)blocks, (unsigned)d->bs, s, a);
    break;
  default:
    return ellr_error(ELLR_ERR_ARG, "ellr_cuda_mult: threads per row %d", pl->T);
  }
  CU(cudaGetLastError());
  return ELLR_OK;
}

/* ---- tuning ------------------------------------------------------------------------------------ */
/* Another T: re-plan on the host (O(n): same order, no re-sort) and refill on the GPU from the CSR
   kept by create. */
static ellr_status retile(ellr_cuda_matrix *d, int T, cudaStream_t s)
{
  ellr_plan   np;
  ellr_params p     = d->params;
  p.threads_per_row = T;
  TRY(ellr_plan_retile(&d->plan, T, &p, &np)); /* same order: no re-sort */
  ellr_plan_destroy(&d->plan); /* its arrays were last copied in a build_layout that synchronized */
  d->plan = np;
  return build_layout(d, 0, s);
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

static ellr_status tune_products(ellr_cuda_matrix *d, const tune_ctx *c)
{
  const ellr_params *p   = &d->params;
  const int          T0  = d->plan.T;
  const int          bs0 = p->block_size ? p->block_size : 256;
  int                Ts[4], nT = 0;
  if (p->threads_per_row) Ts[nT++] = p->threads_per_row;
  else {
    if (T0 > 1) Ts[nT++] = T0 / 2;
    Ts[nT++] = T0;
    if (T0 * 2 <= ELLR_MAX_THREADS_PER_ROW) Ts[nT++] = T0 * 2;
    if (T0 * 4 <= ELLR_MAX_THREADS_PER_ROW) Ts[nT++] = T0 * 4;
  }
  if (d->plan.ncols > 0) {
    ellr_kernel_init_x<<<(unsigned)((d->plan.ncols + 255) / 256), 256, 0, c->s>>>(d->plan.ncols, c->tx);
    CU(cudaGetLastError());
  }
  int   bestT = T0;
  float best  = 1e30f, ms;
  d->bs       = bs0;
  TRY(time_product(d, c, &ms)); /* warm-up: module load, first touch */
  for (int k = 0; k < nT; k++) {
    if (Ts[k] != d->plan.T) {
      ellr_status st = retile(d, Ts[k], c->s);
      if (st == ELLR_ERR_FILL) continue; /* this T pads past max_fill: not a candidate */
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
  if (d->plan.T != bestT) TRY(retile(d, bestT, c->s));
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

/* The CSR kept by create for tuning: column indices always; row offsets and values unless they
   have become the refresh scratch. */
static ellr_status free_tuning_csr(ellr_cuda_matrix *d)
{
  ellr_status st = dfree(&d->d_csr_col), s2;
  if (!d->refresh_ready) {
    if ((s2 = dfree(&d->d_csr_rowptr)) && !st) st = s2;
    if ((s2 = dfree(&d->d_csr_val)) && !st) st = s2;
  }
  d->tune_pending = 0;
  return st;
}

ellr_status ellr_cuda_tune(ellr_cuda_matrix *d, const ellr_csr *a, void *stream)
{
  if (!d) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_tune: no matrix");
  if (!d->tune_pending) return ELLR_OK; /* tuned already, nothing to tune, or no rows */
  const ellr_plan *pl = &d->plan;
  if (a && (a->nrows != pl->nrows || a->ncols != pl->ncols || !a->rowptr || a->rowptr[a->nrows] != d->nnz))
    return ellr_error(ELLR_ERR_ARG, "ellr_cuda_tune: the matrix is %d x %d with %lld entries, not the %d x %d with %lld planned", a->nrows, a->ncols, a->rowptr ? (long long)a->rowptr[a->nrows] : -1LL, pl->nrows, pl->ncols, (long long)d->nnz);
  const double t0 = wall_ms();
  tune_ctx     c;
  memset(&c, 0, sizeof(c));
  c.s                   = (cudaStream_t)stream;
  d->info.tune_products = 0;
  ellr_status st        = mem_check((size_t)(pl->nrows + pl->ncols) * 8, "the tuning vectors");
  if (!st) st = dalloc(&c.tx, (size_t)(pl->ncols > 0 ? pl->ncols : 1), "the tuning vector x");
  if (!st) st = dalloc(&c.ty, (size_t)pl->nrows, "the tuning vector y");
  cudaError_t e = cudaSuccess;
  if (!st && (e = cudaEventCreate(&c.e0)) != cudaSuccess) st = cu_err(e, "cudaEventCreate", __LINE__);
  if (!st && (e = cudaEventCreate(&c.e1)) != cudaSuccess) st = cu_err(e, "cudaEventCreate", __LINE__);
  /* a refill queued by ellr_cuda_update_values (perhaps on another stream) lands before the retiling */
  if (!st && d->refresh_done && (e = cudaStreamWaitEvent(c.s, d->refresh_done, 0)) != cudaSuccess) st = cu_err(e, "cudaStreamWaitEvent", __LINE__);
  if (!st) st = tune_products(d, &c);
  e = cudaStreamSynchronize(c.s);
  if (!st && e != cudaSuccess) st = cu_err(e, "cudaStreamSynchronize", __LINE__);
  if (c.e0 && (e = cudaEventDestroy(c.e0)) != cudaSuccess && !st) st = cu_err(e, "cudaEventDestroy", __LINE__);
  if (c.e1 && (e = cudaEventDestroy(c.e1)) != cudaSuccess && !st) st = cu_err(e, "cudaEventDestroy", __LINE__);
  ellr_status s2 = dfree(&c.tx);
  if (!st) st = s2;
  s2 = dfree(&c.ty);
  if (!st) st = s2;
  if (st) return st; /* the CSR stays: a second call may try again, destroy frees it */
  TRY(free_tuning_csr(d));
  d->info.tuned   = 1;
  d->info.tune_ms = wall_ms() - t0;
  return ELLR_OK;
}

/* ---- create / update / destroy ------------------------------------------------------------------ */
static ellr_status create_device(ellr_cuda_matrix *d, const ellr_csr *a, cudaStream_t s)
{
  const ellr_plan *pl  = &d->plan;
  const int64_t    nnz = d->nnz;
  if (ellr_cuda_device_count() <= 0) return ellr_error(ELLR_ERR_CUDA, "no CUDA device is available (no GPU, or no driver)");
  const size_t need = (size_t)(pl->nrows + 1) * 4 + (size_t)nnz * 12 + plan_device_bytes(pl) + (size_t)ellr_cuda_count_items(pl, 64, NULL) * 8;
  TRY(mem_check(need, "the matrix (padded storage plus the CSR upload)"));

  double t0 = wall_ms();
  TRY(dalloc(&d->d_csr_rowptr, (size_t)pl->nrows + 1, "the CSR row offsets"));
  TRY(dalloc(&d->d_csr_col, (size_t)nnz, "the CSR column indices"));
  TRY(dalloc(&d->d_csr_val, (size_t)nnz, "the CSR values"));
  d->tune_pending = 1; /* the CSR is on the device: destroy frees it whatever happens next */
  TRY(upload(d->d_csr_rowptr, a->rowptr, ((size_t)pl->nrows + 1) * sizeof(int32_t), s, "cudaMemcpyAsync (CSR row offsets)"));
  TRY(upload(d->d_csr_col, a->colidx, (size_t)nnz * sizeof(int32_t), s, "cudaMemcpyAsync (CSR column indices)"));
  TRY(upload(d->d_csr_val, a->val, (size_t)nnz * sizeof(double), s, "cudaMemcpyAsync (CSR values)"));
  d->info.upload_ms = wall_ms() - t0;

  t0 = wall_ms();
  d->bs = d->params.block_size ? d->params.block_size : 256;
  TRY(build_layout(d, 1, s)); /* returns with s synchronized */
  d->info.fill_ms = wall_ms() - t0;

  if ((!d->params.threads_per_row || !d->params.block_size) && pl->nrows > 0) return ELLR_OK; /* tuning pending: keep the CSR */
  TRY(free_tuning_csr(d));
  d->info.tuned = 1; /* nothing to tune */
  return ELLR_OK;
}

static size_t scratch_bytes(const ellr_cuda_matrix *d)
{
  const ellr_plan *pl = &d->plan;
  size_t           b  = 0;
  if (d->d_csr_rowptr) b += ((size_t)pl->nrows + 1) * 4;
  if (d->d_csr_col) b += (size_t)d->nnz * 4;
  if (d->d_csr_val) b += (size_t)d->nnz * 8;
  if (d->d_x) b += 2 * d->stage_n * sizeof(double);
  return b;
}

static size_t device_bytes(const ellr_cuda_matrix *d)
{
  const ellr_plan *pl = &d->plan;
  size_t           b  = (size_t)d->cap_stored * 12 + (size_t)pl->nslices * pl->C * 4 + (pl->perm ? (size_t)pl->nrows * 4 : 0) + ((size_t)pl->nslices + 1) * 8;
  b += (size_t)d->cap_items * sizeof(int2) + (size_t)d->cap_split * 4;
  return b + scratch_bytes(d);
}

ellr_status ellr_cuda_create(const ellr_csr *a, const ellr_params *p, void *stream, ellr_cuda_matrix **out)
{
  if (!out) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_create: no output pointer");
  *out = NULL;
  if (!a || !p) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_create: missing matrix or parameters");
  ellr_cuda_matrix *d = (ellr_cuda_matrix *)calloc(1, sizeof(*d));
  if (!d) return ellr_error(ELLR_ERR_MEM, "cannot allocate the matrix descriptor");
  d->params = *p;
  d->req    = g_default_kopts;
  double      t0 = wall_ms();
  ellr_status st = ellr_plan_create(a, p, &d->plan); /* ELLR_ERR_FILL here, before any GPU allocation */
  if (st) {
    free(d);
    return st;
  }
  d->info.plan_ms = wall_ms() - t0;
  d->nnz          = d->plan.stats.nnz;
  if (a->nrows > 0 && d->nnz > 0 && (!a->colidx || !a->val)) st = ellr_error(ELLR_ERR_ARG, "CSR column indices or values are missing");
  if (!st) st = create_device(d, a, (cudaStream_t)stream);
  if (st) {
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", ellr_last_error());
    (void)cudaStreamSynchronize((cudaStream_t)stream); /* nothing queued may still read a or the plan */
    (void)cudaGetLastError();
    ellr_cuda_destroy(d); /* frees what was allocated; keep the first error's text */
    ellr_error(st, "%s", msg);
    return st;
  }
  *out = d;
  return ELLR_OK;
}

ellr_status ellr_cuda_update_values(ellr_cuda_matrix *d, const ellr_csr *a, void *stream)
{
  if (!d || !a) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: missing argument");
  const ellr_plan *pl = &d->plan;
  if (a->nrows != pl->nrows || a->ncols != pl->ncols || !a->rowptr || a->rowptr[a->nrows] != d->nnz)
    return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: the matrix is %d x %d with %lld entries, not the %d x %d with %lld planned", a->nrows, a->ncols, a->rowptr ? (long long)a->rowptr[a->nrows] : -1LL, pl->nrows, pl->ncols, (long long)d->nnz);
  if (d->nnz == 0 || pl->nrows == 0) return ELLR_OK;
  if (!a->val) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_update_values: no values");
  cudaStream_t s = (cudaStream_t)stream;
  if (!d->refresh_ready) {
    /* first refresh: scratch for the values and row offsets, kept until destroy.  While tuning is
       pending they are the CSR kept by create (so that tuning refills with these new values), row
       offsets included; otherwise the row offsets go up now, once: same pattern, same offsets. */
    if (!d->d_csr_val) TRY(dalloc(&d->d_csr_val, (size_t)d->nnz, "the values update"));
    if (!d->d_csr_rowptr) TRY(dalloc(&d->d_csr_rowptr, (size_t)pl->nrows + 1, "the row offsets of the values update"));
    if (!d->tune_pending) TRY(upload(d->d_csr_rowptr, a->rowptr, ((size_t)pl->nrows + 1) * sizeof(int32_t), s, "cudaMemcpyAsync (CSR row offsets)"));
    if (!d->refresh_done) CU(cudaEventCreateWithFlags(&d->refresh_done, cudaEventDisableTiming));
    d->refresh_ready = 1;
  }
  /* The previous refill (perhaps queued on another stream) must have read the scratch before it is
     overwritten. */
  CU(cudaStreamWaitEvent(s, d->refresh_done, 0));
  /* The caller may change a->val as soon as we return, and cudaMemcpyAsync from pageable memory is
     only documented as "might be synchronous".  Either a pinned copy of the values or a wait for the
     copy: the wait is chosen.  A pinned buffer would hold another nnz doubles of page-locked host
     memory per matrix (GBs for large matrices, memory the OS cannot page and that competes with
     PETSc's and MPI's own pinned pools), its host memcpy is itself a synchronous pass over the same
     bytes at memcpy speed (the driver's own pageable path already stages through pinned memory at
     about that speed), and reusing it across calls needs an event wait anyway.  The wait also covers
     work already queued on s: in PETSc the stream is normally idle when values change (assembly is
     host work).  The refill kernel is queued after the wait and not waited for. */
  CU(cudaMemcpyAsync(d->d_csr_val, a->val, (size_t)d->nnz * sizeof(double), cudaMemcpyHostToDevice, s));
  CU(cudaStreamSynchronize(s));
  const int64_t threads = (int64_t)pl->nslices * pl->C * pl->T;
  ellr_kernel_fill<<<(unsigned)((threads + 255) / 256), 256, 0, s>>>((int64_t)pl->nslices * pl->C, pl->nrows, pl->C, pl->T, d->d_slice_start, d->d_rowlen, d->d_perm, d->d_csr_rowptr, NULL, d->d_csr_val, d->d_col, d->d_val, 1);
  CU(cudaGetLastError());
  CU(cudaEventRecord(d->refresh_done, s));
  return ELLR_OK;
}

/* Pinned and device buffers for host vectors, large enough for either direction; allocated once. */
static ellr_status ensure_staging(ellr_cuda_matrix *d)
{
  if (d->h_x) return ELLR_OK;
  const size_t n = (size_t)(d->plan.nrows > d->plan.ncols ? d->plan.nrows : d->plan.ncols) + 1;
  TRY(mem_check(2 * n * sizeof(double), "the staging vectors"));
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
  const size_t nin = (size_t)(transpose ? d->plan.nrows : d->plan.ncols), nout = (size_t)(transpose ? d->plan.ncols : d->plan.nrows);
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
  info->plan            = &d->plan;
}

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
  FREE1(d_csr_rowptr);
  FREE1(d_csr_col);
  FREE1(d_csr_val);
  FREE1(d_slice_start);
  FREE1(d_rowlen);
  FREE1(d_perm);
  FREE1(d_col);
  FREE1(d_val);
  FREE1(d_items);
  FREE1(d_split);
  FREE1(d_x);
  FREE1(d_y);
#undef FREE1
  if (d->h_x) CUDA1(cudaFreeHost(d->h_x));
  if (d->h_y) CUDA1(cudaFreeHost(d->h_y));
  if (d->stage_h2d) CUDA1(cudaEventDestroy(d->stage_h2d));
  if (d->stage_used) CUDA1(cudaEventDestroy(d->stage_used));
  if (d->refresh_done) CUDA1(cudaEventDestroy(d->refresh_done));
#undef CUDA1
  ellr_plan_destroy(&d->plan);
  free(d);
  return st;
}

/* ---- internal knobs (ellr_cuda_internal.cuh) ---------------------------------------------------- */
/* Test and benchmark knobs: not stream-aware; they wait for the whole device, then work on the legacy
   default stream. */
ellr_status ellr_cuda_set_kopts(ellr_cuda_matrix *d, const ellr_cuda_kopts *o)
{
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

void ellr_cuda_set_default_kopts(const ellr_cuda_kopts *o)
{
  static const ellr_cuda_kopts automatic = {0, -1, 0, -1};
  g_default_kopts                        = o ? *o : automatic;
}
