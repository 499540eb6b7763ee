/*
  test_engine_cuda.cu - the CUDA backend against the CPU engine (PETSc-free).

  Odd shapes x (T, C, sort, BS, kernel variants), each configuration through the whole life cycle:
  ellr_cuda_create (default T and block size, no tuning; info checked) -> products -> [update_values
  before tuning] -> ellr_cuda_tune (info checked; a second call changes nothing) -> products ->
  kernel variants -> update_values x 3 on two streams (no allocation after the first) -> products ->
  destroy.  Products: ellr_cuda_mult (y = A x, y = A x + z, z aliasing y, A^T x (+ z)) and
  ellr_cuda_mult_mixed with every placement of x, y (host / device) and z (none, host, device,
  aliasing y), both directions, alternating a non-blocking stream and the default stream.  The
  reference is the CPU engine (ellr_cpu_mult / ellr_cpu_mult_transpose on the host, itself checked
  against CSR); each output poisoned (NaN) first, host inputs poisoned as soon as a call returns;
  relative error <= 1e-12.  Also the error paths (bad parameters, max fill, GPU out of memory, bad
  shapes and placements), life cycles without tune (no GPU memory leaked).  Without a GPU only the
  host parts run.

  usage: test_engine_cuda [--quick]     (--quick: a small subset, for compute-sanitizer)
*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "ellr_cuda.h"
#include "ellr_cuda_internal.cuh"
#include "ellr_testlib.h"

static long g_pass, g_fail;
#define CHECK(cond, ...) \
  do { \
    if (cond) g_pass++; \
    else { \
      g_fail++; \
      if (g_fail <= 40) { \
        printf("FAIL %s:%d: ", __FILE__, __LINE__); \
        printf(__VA_ARGS__); \
        printf("\n"); \
      } \
    } \
  } while (0)
#define CUDA_OK(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      printf("FATAL CUDA error %s at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(3); \
    } \
  } while (0)

static const double TOL = 1e-12;

struct shape {
  const char *name;
  tcsr        a;
  int         auto_T_only; /* a large shape: automatic T only (the large matrices' rule), to keep the test quick */
};
static long g_auto_per_slice_same; /* automatic plans that came out per slice, GPU plan = host plan */
static long g_pinned;              /* matrices whose host values were page-locked (ELLR_PIN_MIN and more) */
static long g_order_skipped;       /* pellr's automatic family took IPCSR from the row lengths, rows left unsorted */
static long g_refresh_pinned;      /* refreshes after which the values were page-locked (ELLR_PIN_REFRESH_MIN) */

/* ---- device products ------------------------------------------------------------------------ */
/* All device traffic of the test goes through up()/down(), which wait for the whole device: the
   products run on a non-blocking stream (as PETSc's), which legacy-stream copies do not order with. */
struct vecs {
  size_t  n;
  double *hx, *hz, *hz2, *hy, *ref, *hnan;
  double *dx, *dz, *dy;
};

static void vecs_init(vecs *v, size_t n)
{
  v->n    = n + 1;
  v->hx   = (double *)malloc(v->n * sizeof(double));
  v->hz   = (double *)malloc(v->n * sizeof(double));
  v->hz2  = (double *)malloc(v->n * sizeof(double));
  v->hy   = (double *)malloc(v->n * sizeof(double));
  v->ref  = (double *)malloc(v->n * sizeof(double));
  v->hnan = (double *)malloc(v->n * sizeof(double));
  tfill_nan(v->hnan, (int64_t)v->n);
  CUDA_OK(cudaMalloc(&v->dx, v->n * sizeof(double)));
  CUDA_OK(cudaMalloc(&v->dz, v->n * sizeof(double)));
  CUDA_OK(cudaMalloc(&v->dy, v->n * sizeof(double)));
}

static void vecs_free(vecs *v)
{
  free(v->hx);
  free(v->hz);
  free(v->hz2);
  free(v->hy);
  free(v->ref);
  free(v->hnan);
  CUDA_OK(cudaFree(v->dx));
  CUDA_OK(cudaFree(v->dz));
  CUDA_OK(cudaFree(v->dy));
}

static void up(double *d, const double *h, size_t n)
{
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(d, h, (n ? n : 1) * sizeof(double), cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
}
static void down(double *h, const double *d, size_t n)
{
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, d, (n ? n : 1) * sizeof(double), cudaMemcpyDeviceToHost));
}

/* The CPU engine's product (the reference): y = op(A) x (+ z). */
static void cpu_ref(const ellr_matrix *ref, int transpose, const double *x, const double *z, double *y)
{
  if (transpose) ellr_cpu_mult_transpose(ref, x, z, y);
  else ellr_cpu_mult(ref, x, z, y);
}

/* One product through ellr_cuda_mult: mode 0 y = op(A) x, 1 + z, 2 + y (aliased). */
static void check_mult(const char *name, const tcsr *a, const ellr_matrix *ref, ellr_cuda_matrix *d, vecs *v, int transpose, int mode, cudaStream_t stream, uint64_t seed)
{
  const size_t nin = transpose ? a->nrows : a->ncols, nout = transpose ? a->ncols : a->nrows;
  tfill_random(v->hx, (int64_t)nin, seed);
  tfill_random(v->hz, (int64_t)nout, seed + 1);
  up(v->dx, v->hx, nin);
  if (mode == 1) up(v->dz, v->hz, nout);
  if (mode == 2) up(v->dy, v->hz, nout);
  else up(v->dy, v->hnan, nout);
  const double *z = mode == 0 ? NULL : mode == 1 ? v->dz : v->dy;
  cpu_ref(ref, transpose, v->hx, mode ? v->hz : NULL, v->ref);
  ellr_status st = ellr_cuda_mult(d, v->dx, z, v->dy, transpose, stream);
  cudaError_t e  = cudaStreamSynchronize(stream);
  CHECK(st == ELLR_OK && e == cudaSuccess, "%s: ellr_cuda_mult(transpose %d, mode %d) failed: %d %s / %s", name, transpose, mode, st, ellr_last_error(), cudaGetErrorString(e));
  tfill_nan(v->hy, (int64_t)nout);
  down(v->hy, v->dy, nout);
  const double err = trel_err(v->hy, v->ref, (int64_t)nout);
  CHECK(err <= TOL, "%s: %s mode %d: relative error %g", name, transpose ? "A^T x" : "A x", mode, err);
}

static void check_all_products(const char *name, const tcsr *a, const ellr_matrix *ref, ellr_cuda_matrix *d, vecs *v, cudaStream_t stream, uint64_t seed)
{
  for (int tr = 0; tr < 2; tr++)
    for (int mode = 0; mode < 3; mode++) check_mult(name, a, ref, d, v, tr, mode, (mode == 1) ? stream : NULL, seed + 10 * tr + mode);
}

/* C = A B through ellr_cuda_mult_dense, for blocks of 1, 3, 16 and 37 columns (leading dimensions past the sizes,
   C's spare rows and columns poisoned), with the one-pass kernel's default and 32 sums per thread: every column equals
   the CSR reference product, and a repeated product gives the same bits (unless the long rows' atomic join was asked
   for: their one-vector products add in any order). */
static void check_dense(const char *name, const tcsr *a, ellr_cuda_matrix *d, int join, cudaStream_t stream, uint64_t seed)
{
  static const int ks[] = {1, 3, 16, 37};
  const int64_t    ldb = (int64_t)a->ncols + 3, ldc = (int64_t)a->nrows + 5;
  const int        kmax = 37;
  double          *hB = (double *)malloc((size_t)(ldb * kmax) * sizeof(double)), *hC = (double *)malloc((size_t)(ldc * kmax) * sizeof(double));
  double          *hC2 = (double *)malloc((size_t)(ldc * kmax) * sizeof(double)), *ref = (double *)malloc(((size_t)a->nrows + 1) * sizeof(double));
  double          *dB, *dC;
  tfill_random(hB, ldb * kmax, seed);
  CUDA_OK(cudaMalloc(&dB, (size_t)(ldb * kmax) * sizeof(double)));
  CUDA_OK(cudaMalloc(&dC, (size_t)(ldc * kmax) * sizeof(double)));
  up(dB, hB, (size_t)(ldb * kmax));
  for (int nbset = 0; nbset < 2; nbset++) {
    ellr_cuda_set_dense_opts(nbset ? 32 : 0, 0);
    for (size_t ik = 0; ik < sizeof(ks) / sizeof(ks[0]); ik++) {
      const int k = ks[ik];
      for (int rep = 0; rep < 2; rep++) {
        tfill_nan(hC2, ldc * kmax); /* hC keeps the first product's result */
        up(dC, hC2, (size_t)(ldc * kmax));
        ellr_status st = ellr_cuda_mult_dense(d, k, dB, ldb, dC, ldc, stream);
        cudaError_t e  = cudaStreamSynchronize(stream);
        CHECK(st == ELLR_OK && e == cudaSuccess, "%s: ellr_cuda_mult_dense(%d columns, %d sums) failed: %d %s / %s", name, k, nbset ? 32 : ELLR_DENSE_NB, st, ellr_last_error(), cudaGetErrorString(e));
        down(rep ? hC2 : hC, dC, (size_t)(ldc * kmax));
      }
      CHECK(join == ELLR_LONG_JOIN_ATOMIC || !memcmp(hC, hC2, (size_t)(ldc * k) * sizeof(double)), "%s: two products with %d columns differ in their bits", name, k);
      double worst = 0;
      int    spare = 1;
      for (int j = 0; j < k; j++) {
        tcsr_spmv(a, hB + j * ldb, NULL, ref);
        const double err = trel_err(hC + j * ldc, ref, a->nrows);
        worst            = err > worst ? err : worst;
        for (int64_t r = a->nrows; r < ldc; r++) spare &= hC[j * ldc + r] != hC[j * ldc + r]; /* still the NaN */
      }
      for (int64_t q = k * ldc; q < kmax * ldc; q++) spare &= hC[q] != hC[q];
      CHECK(worst <= TOL && spare, "%s: C = A B with %d columns (%d sums): relative error %g, spare entries %s", name, k, nbset ? 32 : ELLR_DENSE_NB, worst, spare ? "untouched" : "written");
    }
  }
  ellr_cuda_set_dense_opts(0, 0);
  CUDA_OK(cudaFree(dB));
  CUDA_OK(cudaFree(dC));
  free(hB);
  free(hC);
  free(hC2);
  free(ref);
}

/* One product through ellr_cuda_mult_mixed: x and y each on the host (1) or the device (0); zmode 0
   no z, 1 z distinct on the host, 2 z distinct on the device, 3 z aliasing y.  Host inputs are
   poisoned as soon as the call returns (the engine must have copied them out), a host y is read
   without any synchronization (the call must have written it), a device y after a stream sync. */
static void check_mixed(const char *name, const tcsr *a, const ellr_matrix *ref, ellr_cuda_matrix *d, vecs *v, int transpose, int xh, int yh, int zmode, cudaStream_t stream, uint64_t seed)
{
  const size_t nin = transpose ? a->nrows : a->ncols, nout = transpose ? a->ncols : a->nrows;
  tfill_random(v->hx, (int64_t)nin, seed);
  tfill_random(v->hz, (int64_t)nout, seed + 1);
  cpu_ref(ref, transpose, v->hx, zmode ? v->hz : NULL, v->ref);
  const double *x = v->hx;
  if (!xh) {
    up(v->dx, v->hx, nin);
    x = v->dx;
  }
  double *y = yh ? v->hy : v->dy;
  if (yh) {
    if (zmode == 3) memcpy(v->hy, v->hz, nout * sizeof(double));
    else tfill_nan(v->hy, (int64_t)nout);
  } else up(v->dy, zmode == 3 ? v->hz : v->hnan, nout);
  const double *z  = NULL;
  int           zh = 0;
  if (zmode == 1) {
    memcpy(v->hz2, v->hz, nout * sizeof(double));
    z  = v->hz2;
    zh = 1;
  } else if (zmode == 2) {
    up(v->dz, v->hz, nout);
    z = v->dz;
  } else if (zmode == 3) {
    z  = y;
    zh = yh;
  }
  ellr_status st = ellr_cuda_mult_mixed(d, x, xh, z, zh, y, yh, transpose, stream);
  if (xh) tfill_nan(v->hx, (int64_t)nin); /* the caller's host inputs may change right after return */
  if (zmode == 1) tfill_nan(v->hz2, (int64_t)nout);
  double err;
  if (yh) err = trel_err(v->hy, v->ref, (int64_t)nout); /* before any synchronization */
  else {
    CUDA_OK(cudaStreamSynchronize(stream));
    tfill_nan(v->hy, (int64_t)nout);
    down(v->hy, v->dy, nout);
    err = trel_err(v->hy, v->ref, (int64_t)nout);
  }
  static const char *zname[] = {"no z", "z host", "z device", "z = y"};
  CHECK(st == ELLR_OK && err <= TOL, "%s: mult_mixed %s x %s y %s %s on %s stream: %s, relative error %g", name, transpose ? "A^T x" : "A x", xh ? "host" : "device", yh ? "host" : "device", zname[zmode], stream ? "its" : "the default", st ? ellr_last_error() : "ok", err);
}

/* Every placement of x, y and z, both directions, alternating two streams (the staging buffers are
   reused across them). */
static void check_all_mixed(const char *name, const tcsr *a, const ellr_matrix *ref, ellr_cuda_matrix *d, vecs *v, cudaStream_t stream, uint64_t seed)
{
  int q = 0;
  for (int tr = 0; tr < 2; tr++)
    for (int xh = 0; xh < 2; xh++)
      for (int yh = 0; yh < 2; yh++)
        for (int zm = 0; zm < 4; zm++, q++) check_mixed(name, a, ref, d, v, tr, xh, yh, zm, (q % 2) ? stream : NULL, seed + 3 * q);
}

/* Refill the CPU reference with the values of b (same pattern). */
static void ref_values(ellr_matrix *ref, const tcsr *b)
{
  ellr_csr bv = tcsr_view(b);
  ellr_fill_values(ref, &bv);
}

/* update_values with b's values; b->val is overwritten with NaN right after the call returns (the
   engine must be done reading it) and then restored from keep. */
static ellr_status update_and_clobber(ellr_cuda_matrix *d, tcsr *b, const double *keep, int64_t nnz, cudaStream_t stream)
{
  ellr_csr    bv = tcsr_view(b);
  ellr_status st = ellr_cuda_update_values(d, &bv, stream);
  tfill_nan(b->val, nnz);
  memcpy(b->val, keep, (size_t)nnz * sizeof(double));
  return st;
}

static void run_shape(shape *sh, int quick, cudaStream_t stream, long *ncreated)
{
  static const int Ts[] = {0, 1, 2, 4, 8, 16, 32, ELLR_THREADS_PER_SLICE}, Cs[] = {0, 1, 7, 32}, BSs[] = {0, 128, 256, 512, 64, 1024, 96};
  static const int sorts[][2] = {{0, 0}, {1, 0}, {1, ELLR_SORT_WINDOW_AUTO}};
  /* kernel variants: {kernel, uselen, chunk, loads} */
  static const ellr_cuda_kopts kv[] = {{1, 1, 0, 0}, {1, 0, 0, 1}, {2, 0, 1, 0}, {2, 1, 2, 1}, {2, -1, -1, 0}, {2, 0, 3, 1}};
  const tcsr   *a   = &sh->a;
  const int64_t nnz = tcsr_nnz(a);
  vecs          v;
  char          name[200];
  int           k = 0, maxlen = 0;
  for (int32_t r = 0; r < a->nrows; r++)
    if (a->rowptr[r + 1] - a->rowptr[r] > maxlen) maxlen = a->rowptr[r + 1] - a->rowptr[r];
  vecs_init(&v, (size_t)(a->nrows > a->ncols ? a->nrows : a->ncols));
  for (int it = 0; it < 8; it++)
    for (int ic = 0; ic < 4; ic++)
      for (int is = 0; is < 3; is++, k++) {
        if (quick && (k % 7)) continue;
        if (sh->auto_T_only && Ts[it] != 0) continue;
        ellr_params p = {Ts[it], BSs[k % 7], Cs[ic], sorts[is][0], sorts[is][1], 0.0, 0, 0};
        p.tune        = k % 3;     /* model, exhaustive, none */
        p.pin_host    = (k / 3) % 2; /* page-locked CSR or not */
        p.index_bits  = (k / 6) % 2 ? 32 : 0; /* 16-bit column offsets where a slice's span allows, or 32-bit everywhere */
        /* the long-row threshold (automatic, none, every non-empty row, half the longest row) and join */
        const int lmodes[4] = {0, ELLR_LONG_ROWS_NONE, 1, maxlen / 2 > 1 ? maxlen / 2 : 2};
        p.long_row_min      = lmodes[(it + is) % 4];
        p.long_join         = (k / 4) % 2;
        const int gpu_plan = k % 2; /* the plan on the GPU, or (small blocks) on the host: both against the host plan */
        ellr_cuda_set_host_plan_rows(gpu_plan ? 0 : -1);
        snprintf(name, sizeof(name), "%s T=%d BS=%d C=%d sort=%d/%d tune=%d pin=%d bits=%d long=%d/%s plan=%s", sh->name, p.threads_per_row, p.block_size, p.slice_height, p.sort_rows, p.sort_window, p.tune, p.pin_host, p.index_bits ? 32 : 16, p.long_row_min, p.long_join ? "atomic" : "segmented", gpu_plan ? "gpu" : "auto");
        ellr_csr    av = tcsr_view(a);
        ellr_matrix ref;
        ellr_status st = ellr_matrix_create(&av, &p, &ref);
        CHECK(st == ELLR_OK, "%s: CPU reference: %s", name, ellr_last_error());
        if (st) continue;
        /* the CPU engine against CSR, once per configuration */
        tfill_random(v.hx, a->ncols, 50 + k);
        tcsr_spmv(a, v.hx, NULL, v.hy);
        ellr_cpu_mult(&ref, v.hx, NULL, v.ref);
        CHECK(trel_err(v.ref, v.hy, a->nrows) <= TOL, "%s: the CPU reference differs from CSR", name);

        /* create: default T (or the one asked for), block size 256 (or the one asked for), no tuning */
        ellr_cuda_matrix *d = NULL;
        st                  = ellr_cuda_create(&av, &p, stream, &d);
        CHECK(st == ELLR_OK && d, "%s: create failed: %d %s", name, st, ellr_last_error());
        if (st) {
          ellr_matrix_destroy(&ref);
          continue;
        }
        (*ncreated)++;
        const int      pending = (!p.threads_per_row || !p.block_size) && a->nrows > 0;
        const int      T0      = p.threads_per_row > 0 ? p.threads_per_row : p.threads_per_row ? ref.plan.T : ellr_default_threads_per_row(a->nrows ? (double)nnz / a->nrows : 0.0); /* per slice: the largest slice's */
        ellr_cuda_info info;
        ellr_cuda_get_info(d, &info);
        CHECK((info.threads_per_row == T0 || !p.threads_per_row) && (p.threads_per_row != ELLR_THREADS_PER_SLICE || (info.plan && info.plan->per_slice_T)) && info.block_size == (p.block_size ? p.block_size : 256) && info.tuned == !pending && info.tune_products == 0 && info.tune_ms == 0 && (pending ? info.scratch_bytes >= (size_t)nnz * 12 : info.scratch_bytes == 0) && info.plan && info.plan->T == info.threads_per_row && info.device_bytes > 0,
              "%s: info after create: T=%d (want %d) BS=%d tuned=%d products=%d scratch=%zu", name, info.threads_per_row, T0, info.block_size, info.tuned, info.tune_products, info.scratch_bytes);
        check_all_products(name, a, &ref, d, &v, stream, 100 + k);
        /* the plan made on the GPU is the host plan: sizes, T, slice offsets, statistics (unless the pattern
           cache gave another T) */
        if (info.plan && ellr_plan_threads_param(info.plan) == ellr_plan_threads_param(&ref.plan)) {
          const ellr_plan *g = info.plan, *h = &ref.plan;
          int              same = g->T == h->T && g->per_slice_T == h->per_slice_T && g->nrows == h->nrows && g->ncols == h->ncols && g->C == h->C && g->nslices == h->nslices && g->sorted == h->sorted && g->stats.nnz == h->stats.nnz && g->stats.nstored == h->stats.nstored && g->stats.bytes == h->stats.bytes && g->stats.maxrowlen == h->stats.maxrowlen && g->stats.nonempty_rows == h->stats.nonempty_rows && g->stats.niter == h->stats.niter && g->stats.niter_unsorted == h->stats.niter_unsorted && g->stats.packed_slices == h->stats.packed_slices && g->stats.index_bytes == h->stats.index_bytes && g->long_min == h->long_min && g->nlong == h->nlong && g->stats.long_entries == h->stats.long_entries && g->slice_start && !memcmp(g->slice_start, h->slice_start, ((size_t)h->nslices + 1) * sizeof(int64_t));
          g_auto_per_slice_same += same && !p.threads_per_row && g->per_slice_T;
          CHECK(same, "%s: the GPU plan differs from the host plan: long rows %d/%d (%lld/%lld entries) packed slices %d/%d index bytes %zu/%zu nstored %lld/%lld niter %lld/%lld unsorted %lld/%lld max %d/%d nonempty %d/%d bytes %zu/%zu", name, g->nlong, h->nlong, (long long)g->stats.long_entries, (long long)h->stats.long_entries, g->stats.packed_slices, h->stats.packed_slices, g->stats.index_bytes, h->stats.index_bytes, (long long)g->stats.nstored, (long long)h->stats.nstored, (long long)g->stats.niter, (long long)h->stats.niter, (long long)g->stats.niter_unsorted, (long long)h->stats.niter_unsorted, g->stats.maxrowlen, h->stats.maxrowlen, g->stats.nonempty_rows, h->stats.nonempty_rows, g->stats.bytes, h->stats.bytes);
        }
        CHECK(p.pin_host || info.pinned_bytes == 0, "%s: page-locked without pin_host", name);
        CHECK(info.pinned_bytes == 0 || (size_t)nnz * sizeof(double) >= ELLR_PIN_MIN, "%s: %zu bytes page-locked, values of %zu bytes under ELLR_PIN_MIN", name, info.pinned_bytes, (size_t)nnz * sizeof(double));

        /* values changed before tuning (a third of the configurations): tuning must refill with them */
        tcsr b = *a, c = *a;
        b.val  = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
        c.val  = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
        double *keep = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
        memcpy(b.val, a->val, (size_t)nnz * sizeof(double));
        memcpy(c.val, a->val, (size_t)nnz * sizeof(double));
        tcsr_randomize_values(&b, 900 + k);
        tcsr_randomize_values(&c, 1900 + k);
        const tcsr *cur      = a;
        const int   pre_tune = k % 3 == 1;
        if (pre_tune) {
          memcpy(keep, b.val, (size_t)nnz * sizeof(double));
          st = update_and_clobber(d, &b, keep, nnz, stream);
          CHECK(st == ELLR_OK, "%s: update_values before tune: %s", name, ellr_last_error());
          ref_values(&ref, &b);
          cur = &b;
        }
        ellr_csr curv = tcsr_view(cur);
        st            = ellr_cuda_tune(d, &curv, stream);
        CHECK(st == ELLR_OK, "%s: tune: %s", name, ellr_last_error());
        ellr_cuda_get_info(d, &info);
        /* a refresh before tuning keeps scratch, but where the build streamed the CSR (the refresh streams too) */
        const size_t refresh_bytes = pre_tune && nnz > 0 && a->nrows > 0 && !info.streamed ? ((size_t)a->nrows + 1) * 4 + (size_t)nnz * 8 : 0;
        CHECK((p.threads_per_row > 0 ? info.threads_per_row == p.threads_per_row : p.threads_per_row ? info.plan && info.plan->per_slice_T : 1) && (p.block_size ? info.block_size == p.block_size : (info.block_size == 128 || info.block_size == 256 || info.block_size == 512)) && info.tuned == 1 && info.tune_products <= 19 && (!pending || info.tune_how == ELLR_TUNED_BY_CACHE ? info.tune_products == 0 : p.tune == ELLR_TUNE_EXHAUSTIVE ? info.tune_products > 0 : p.tune == ELLR_TUNE_MODEL ? info.tune_products <= 3 : info.tune_products == 0) && info.scratch_bytes == refresh_bytes && info.plan && info.plan->T == info.threads_per_row,
              "%s: info after tune: T=%d BS=%d tuned=%d products=%d (by %d) scratch=%zu (want %zu)", name, info.threads_per_row, info.block_size, info.tuned, info.tune_products, info.tune_how, info.scratch_bytes, refresh_bytes);
        /* a second tune is harmless: nothing changes */
        ellr_cuda_info again;
        st = ellr_cuda_tune(d, NULL, NULL);
        ellr_cuda_get_info(d, &again);
        CHECK(st == ELLR_OK && again.threads_per_row == info.threads_per_row && again.block_size == info.block_size && again.tune_products == info.tune_products && again.tune_ms == info.tune_ms && again.device_bytes == info.device_bytes, "%s: second tune changed something (%s)", name, ellr_last_error());
        check_all_products(name, cur, &ref, d, &v, stream, 200 + k);
        check_all_mixed(name, cur, &ref, d, &v, stream, 250 + k);
        if (!quick || k % 2 == 0) check_dense(name, cur, d, p.long_join, stream, 270 + k);

        /* kernel variants on the same storage */
        const int nkv = quick ? 3 : 6;
        for (int q = 0; q < nkv; q++) {
          st = ellr_cuda_set_kopts(d, &kv[q]);
          CHECK(st == ELLR_OK, "%s: set_kopts %d: %s", name, q, ellr_last_error());
          ellr_cuda_kopts got;
          ellr_cuda_get_kopts(d, &got);
          char vname[260];
          snprintf(vname, sizeof(vname), "%s [kernel %d len %d chunk %d loads %d]", name, got.kernel, got.uselen, got.chunk, got.loads);
          check_all_products(vname, cur, &ref, d, &v, stream, 300 + k * 7 + q);
          if (q == 2 || q == 3) check_all_mixed(vname, cur, &ref, d, &v, stream, 400 + k * 7 + q);
        }
        ellr_cuda_set_kopts(d, NULL);

        /* values-only updates on the stream: c, then b (again), then c; the scratch is allocated once */
        const tcsr *seq[3] = {&c, &b, &c};
        size_t      dev_bytes = 0, free0 = 0, free1 = 0, tot;
        for (int u = 0; u < 3; u++) {
          tcsr *w = (tcsr *)seq[u];
          memcpy(keep, w->val, (size_t)nnz * sizeof(double));
          if (u == 2) CUDA_OK(cudaMemGetInfo(&free0, &tot));
          st = update_and_clobber(d, w, keep, nnz, u == 1 ? (cudaStream_t)0 : stream);
          if (u == 2) CUDA_OK(cudaMemGetInfo(&free1, &tot));
          CHECK(st == ELLR_OK, "%s: update_values %d: %s", name, u, ellr_last_error());
          ref_values(&ref, w);
          ellr_cuda_get_info(d, &info);
          if (u == 1) dev_bytes = info.device_bytes;
          if (u == 2) CHECK(info.device_bytes == dev_bytes && free1 == free0, "%s: update_values allocated again: device bytes %zu -> %zu, free %zu -> %zu", name, dev_bytes, info.device_bytes, free0, free1);
          char uname[260];
          snprintf(uname, sizeof(uname), "%s (update %d)", name, u);
          if (u != 1 || !quick) check_all_products(uname, w, &ref, d, &v, stream, 500 + k + 17 * u);
          if (u != 1) check_all_mixed(uname, w, &ref, d, &v, stream, 700 + k + 17 * u);
        }
        free(b.val);
        free(c.val);
        free(keep);
        ellr_matrix_destroy(&ref);
        CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
      }
  ellr_cuda_set_host_plan_rows(-1);
  vecs_free(&v);
}

/* New random values (same pattern) through ellr_cuda_update_values -- from a's CSR, or from its compressed rows c
   (comp) -- whose host values are poisoned as soon as the call returns; then every product against ref, refilled. */
static void check_update(const char *name, const tcsr *a, const tcsr *c, const int32_t *rows, int comp, ellr_matrix *ref, ellr_cuda_matrix *d, vecs *v, cudaStream_t stream, uint64_t seed)
{
  const int64_t nnz = tcsr_nnz(a);
  tcsr          b = *a, bc = *c;
  char          uname[260];
  b.val = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  memcpy(b.val, a->val, (size_t)nnz * sizeof(double));
  tcsr_randomize_values(&b, seed);
  bc.val         = b.val; /* the same nonzeros in the same order, whole and compressed */
  ellr_csr    bv = comp ? tcsr_view_compressed(&bc, rows, a->nrows) : tcsr_view(&b);
  ellr_status st = ellr_cuda_update_values(d, &bv, stream);
  tfill_nan(b.val, nnz); /* the engine must be done reading the values */
  memcpy(b.val, a->val, (size_t)nnz * sizeof(double));
  tcsr_randomize_values(&b, seed);
  CHECK(st == ELLR_OK, "%s: update_values: %s", name, ellr_last_error());
  ref_values(ref, &b);
  snprintf(uname, sizeof(uname), "%s (updated)", name);
  check_all_products(uname, &b, ref, d, v, stream, seed + 1);
  free(b.val);
}

/* Compressed rows (an MPI off-diagonal block's non-empty rows): the device products (every vector mode, chunk
   kernels too) equal the CPU engine's of the whole matrix; a values update goes through the compressed CSR. */
static void check_compressed(const shape *sh, cudaStream_t stream)
{
  static const int cfg[][8] = {{0, 0, 0, 0, 0, 1, 0, 0}, {1, 32, 1, 0, 2, 0, 1, 0}, {4, 7, 1, 5, 1, 1, 3, 1}, {2, 0, 1, 0, 0, 0, -1, 0}, {1, 32, 1, 0, 2, 1, 2, 1}, {2, 32, 0, 0, 2, 0, 5, 0}}; /* T C sort window tune pin long-row threshold, join */
  const tcsr *a = &sh->a;
  tcsr        c;
  int32_t    *rows = NULL;
  vecs        v;
  char        name[220];
  if (tcsr_compress_rows(a, &c, &rows)) {
    CHECK(0, "%s: cannot compress rows", sh->name);
    return;
  }
  vecs_init(&v, (size_t)(a->nrows > a->ncols ? a->nrows : a->ncols));
  for (size_t k = 0; k < sizeof(cfg) / sizeof(cfg[0]); k++) {
    ellr_params p = {cfg[k][0], 0, cfg[k][1], cfg[k][2], cfg[k][3], 0.0, cfg[k][4], cfg[k][5]};
    p.long_row_min = cfg[k][6];
    p.long_join    = cfg[k][7];
    snprintf(name, sizeof(name), "%s compressed (%d of %d rows) T=%d C=%d sort=%d/%d tune=%d pin=%d long=%d/%d", sh->name, c.nrows, a->nrows, p.threads_per_row, p.slice_height, p.sort_rows, p.sort_window, p.tune, p.pin_host, p.long_row_min, p.long_join);
    ellr_csr          av = tcsr_view(a), cv = tcsr_view_compressed(&c, rows, a->nrows);
    ellr_matrix       ref;
    ellr_cuda_matrix *d  = NULL;
    ellr_status       st = ellr_matrix_create(&av, &p, &ref);
    CHECK(st == ELLR_OK, "%s: CPU reference: %s", name, ellr_last_error());
    if (st) continue;
    st = ellr_cuda_create(&cv, &p, stream, &d);
    if (!st) st = ellr_cuda_tune(d, &cv, stream);
    CHECK(st == ELLR_OK, "%s: create/tune: %s", name, ellr_last_error());
    if (!st) {
      ellr_cuda_info info;
      ellr_cuda_get_info(d, &info);
      CHECK(info.plan && info.plan->nrows == c.nrows && info.plan->nrows_out == a->nrows, "%s: plan rows %d, out %d", name, info.plan ? info.plan->nrows : -1, info.plan ? info.plan->nrows_out : -1);
      check_all_products(name, a, &ref, d, &v, stream, 5000 + 10 * k);
      check_all_mixed(name, a, &ref, d, &v, stream, 5100 + 10 * k);
      check_dense(name, a, d, p.long_join, stream, 5150 + 10 * k);
      const ellr_cuda_kopts chunks = {2, 0, 1, 0};
      if (ellr_cuda_set_kopts(d, &chunks) == ELLR_OK) {
        strncat(name, " [chunks]", sizeof(name) - strlen(name) - 1);
        check_all_products(name, a, &ref, d, &v, stream, 5200 + 10 * k);
        ellr_cuda_set_kopts(d, NULL);
      }
      check_update(name, a, &c, rows, 1, &ref, d, &v, stream, 5300 + 10 * k);
      CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
    }
    ellr_matrix_destroy(&ref);
  }
  vecs_free(&v);
  free(rows);
  tcsr_free(&c);
}

/* The kernel families: CSR-vector and IPCSR (forced), and the automatic choice, plain and with compressed
   rows, every vector mode, a values update; the info says which family runs. */
static void check_families(const shape *sh, cudaStream_t stream)
{
  static const int fams[] = {ELLR_FAMILY_CSR_VECTOR, ELLR_FAMILY_IPCSR, ELLR_FAMILY_AUTO};
  const tcsr      *a      = &sh->a;
  tcsr             c;
  int32_t         *rows = NULL;
  vecs             v;
  char             name[220];
  if (tcsr_compress_rows(a, &c, &rows)) {
    CHECK(0, "%s: cannot compress rows", sh->name);
    return;
  }
  vecs_init(&v, (size_t)(a->nrows > a->ncols ? a->nrows : a->ncols));
  int           q   = 0;
  for (int f = 0; f < 3; f++)
    for (int comp = 0; comp < 2; comp++)
      for (int tune = 0; tune < 3; tune++, q++) {
        ellr_params p = {0, 0, 32, 1, 0, 0.0, tune, q % 2, fams[f]};
        if (f == 2 && q % 4 == 0) p.max_fill = 1.01; /* AUTO with the sliced layout refused */
        snprintf(name, sizeof(name), "%s family %d%s tune=%d pin=%d max_fill=%g", sh->name, p.family, comp ? " compressed" : "", p.tune, p.pin_host, p.max_fill);
        ellr_params       rp = p;
        ellr_csr          av = tcsr_view(a), cv = comp ? tcsr_view_compressed(&c, rows, a->nrows) : av;
        ellr_matrix       ref;
        ellr_cuda_matrix *d = NULL;
        rp.max_fill         = 0;
        ellr_status st      = ellr_matrix_create(&av, &rp, &ref);
        CHECK(st == ELLR_OK, "%s: CPU reference: %s", name, ellr_last_error());
        if (st) continue;
        st = ellr_cuda_create(&cv, &p, stream, &d);
        if (!st) st = ellr_cuda_tune(d, &cv, stream);
        CHECK(st == ELLR_OK, "%s: create/tune: %s", name, ellr_last_error());
        if (!st) {
          ellr_cuda_info info;
          ellr_cuda_get_info(d, &info);
          CHECK(info.tuned && (p.family == ELLR_FAMILY_AUTO ? info.family != ELLR_FAMILY_AUTO : info.family == p.family) && (info.family != ELLR_FAMILY_IPCSR || info.csr_blocks > 0 || cv.nrows == 0), "%s: info: family %d, blocks %d", name, info.family, info.csr_blocks);
          if (info.order_skipped) {
            g_order_skipped++;
            CHECK(p.family == ELLR_FAMILY_AUTO && p.sort_rows && info.family == ELLR_FAMILY_IPCSR && !info.plan->sorted && p.tune != ELLR_TUNE_EXHAUSTIVE, "%s: rows left unsorted with family %d (asked %d), plan sorted %d, tune %d", name, info.family, p.family, info.plan->sorted, p.tune);
          }
          check_all_products(name, a, &ref, d, &v, stream, 6000 + 10 * q);
          check_all_mixed(name, a, &ref, d, &v, stream, 6100 + 10 * q);
          check_dense(name, a, d, p.long_join, stream, 6150 + 10 * q);
          check_update(name, a, &c, rows, comp, &ref, d, &v, stream, 6200 + 10 * q);
          CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
        }
        ellr_matrix_destroy(&ref);
      }
  vecs_free(&v);
  free(rows);
  tcsr_free(&c);
}

/* The long-row path's two joins on a shape with long rows of several chunks: both agree with the CPU engine; the
   segmented join gives the same bits in every product (no atomics on y), the atomic one within rounding. */
static void check_long_joins(const shape *sh, cudaStream_t stream)
{
  const tcsr *a = &sh->a;
  vecs        v;
  char        name[220];
  vecs_init(&v, (size_t)(a->nrows > a->ncols ? a->nrows : a->ncols));
  for (int join = 0; join < 2; join++)
    for (int sort = 0; sort < 2; sort++) {
      ellr_params p  = {0, 0, 32, sort, ELLR_SORT_WINDOW_AUTO, 0.0, ELLR_TUNE_MODEL, 0};
      p.long_join    = join;
      p.long_row_min = ELLR_LONG_ROW_FLOOR; /* the automatic threshold's floor (this matrix is too small for it to apply) */
      snprintf(name, sizeof(name), "%s long rows (>= %d) join %s sort %d", sh->name, p.long_row_min, join ? "atomic" : "segmented", sort);
      ellr_csr          av = tcsr_view(a);
      ellr_matrix       ref;
      ellr_cuda_matrix *d  = NULL;
      ellr_status       st = ellr_matrix_create(&av, &p, &ref);
      CHECK(st == ELLR_OK && ref.plan.nlong > 0, "%s: CPU reference: %s (%d long rows)", name, ellr_last_error(), ref.plan.nlong);
      if (st) continue;
      st = ellr_cuda_create(&av, &p, stream, &d);
      if (!st) st = ellr_cuda_tune(d, &av, stream);
      CHECK(st == ELLR_OK, "%s: create/tune: %s", name, ellr_last_error());
      if (!st) {
        ellr_cuda_info info;
        ellr_cuda_get_info(d, &info);
        CHECK(info.plan && info.plan->nlong == ref.plan.nlong && info.plan->stats.long_entries == ref.plan.stats.long_entries && info.plan->stats.maxrowlen > 2 * ELLR_LONG_CHUNK, "%s: long rows on the GPU %d, on the host %d", name, info.plan ? info.plan->nlong : -1, ref.plan.nlong);
        check_all_products(name, a, &ref, d, &v, stream, 7000 + 10 * join + sort);
        check_dense(name, a, d, join, stream, 7050 + 10 * join + sort);
        /* repeated products: the segmented join's bits never change (the slices' rows kernel, which has no
           atomics: the chunks kernel joins the parts of a split slice by atomics) */
        const ellr_cuda_kopts rows_kernel = {1, 1, 0, 0};
        CHECK(ellr_cuda_set_kopts(d, &rows_kernel) == ELLR_OK, "%s: set_kopts: %s", name, ellr_last_error());
        tfill_random(v.hx, a->ncols, 7100);
        up(v.dx, v.hx, (size_t)a->ncols);
        double *first = (double *)malloc(((size_t)a->nrows + 1) * sizeof(double));
        int     same  = 1;
        for (int r = 0; r < 20; r++) {
          up(v.dy, v.hnan, (size_t)a->nrows);
          CHECK(ellr_cuda_mult(d, v.dx, NULL, v.dy, 0, stream) == ELLR_OK, "%s: product %d", name, r);
          CUDA_OK(cudaStreamSynchronize(stream));
          down(r ? v.hy : first, v.dy, (size_t)a->nrows);
          if (r) same &= !memcmp(first, v.hy, (size_t)a->nrows * sizeof(double));
        }
        if (!join) CHECK(same, "%s: the segmented join gave different bits in repeated products", name);
        printf("%s: %d long rows, %lld entries; repeated products bitwise equal: %s\n", name, info.plan ? info.plan->nlong : 0, info.plan ? (long long)info.plan->stats.long_entries : 0LL, same ? "yes" : "no");
        free(first);
        ellr_cuda_set_kopts(d, NULL);
        check_update(name, a, a, NULL, 0, &ref, d, &v, stream, 7200 + 10 * join + sort);
        CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
      }
      ellr_matrix_destroy(&ref);
    }
  vecs_free(&v);
}

/* Repeatable products: the same x multiplied 20 times gives the same bits, for y = A x, y = A x + z and -- through a
   stored transpose (ellr_transpose.c), the binding's default -- y = A^T x, on every layout and kernel family: rows
   kernel, chunks kernel with split slices (partial sums joined in item order), each slice's own T, long rows
   (segmented join), CSR-vector, IPCSR.  Each also agrees with the CPU engine.  A^T through A's storage (atomicAdd)
   is reported, not required. */
static int repeat_same(ellr_cuda_matrix *d, int transpose, int addz, size_t nin, size_t nout, vecs *v, cudaStream_t stream, const double *ref, const char *name)
{
  double *first = (double *)malloc((nout + 1) * sizeof(double));
  int     same  = 1;
  up(v->dx, v->hx, nin);
  up(v->dz, v->hz, nout);
  for (int r = 0; r < 20; r++) {
    up(v->dy, v->hnan, nout);
    CHECK(ellr_cuda_mult(d, v->dx, addz ? v->dz : NULL, v->dy, transpose, stream) == ELLR_OK, "%s: product %d: %s", name, r, ellr_last_error());
    CUDA_OK(cudaStreamSynchronize(stream));
    down(r ? v->hy : first, v->dy, nout);
    if (r) same &= !memcmp(first, v->hy, nout * sizeof(double));
  }
  if (ref) CHECK(trel_err(first, ref, (int64_t)nout) <= TOL, "%s: relative error %g", name, trel_err(first, ref, (int64_t)nout));
  free(first);
  return same;
}

static void check_repeatable(const shape *sh, cudaStream_t stream)
{
  const tcsr *a = &sh->a;
  vecs        v;
  char        name[260];
  ellr_csr    av = tcsr_view(a);
  struct cfg {
    const char     *what;
    int             T, sort, family, long_min;
    ellr_cuda_kopts k;
  } cfgs[] = {
    {"rows kernel", 0, 0, ELLR_FAMILY_SLICED, -1, {1, 1, 0, 0}},
    {"chunks, split slices", 0, 1, ELLR_FAMILY_SLICED, -1, {2, 1, 2, 0}},
    {"each slice its own T, split", ELLR_THREADS_PER_SLICE, 0, ELLR_FAMILY_SLICED, -1, {2, 1, 2, 0}},
    {"long rows, segmented join", 0, 0, ELLR_FAMILY_SLICED, ELLR_LONG_ROW_FLOOR, {0, -1, 0, -1}},
    {"csr_vector", 0, 1, ELLR_FAMILY_CSR_VECTOR, -1, {0, -1, 0, -1}},
    {"ipcsr", 0, 1, ELLR_FAMILY_IPCSR, -1, {0, -1, 0, -1}},
  };
  vecs_init(&v, (size_t)(a->nrows > a->ncols ? a->nrows : a->ncols));
  for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++)
    for (int trans = 0; trans < 2; trans++) {
      ellr_params    p = {cfgs[c].T, 0, 32, cfgs[c].sort, ELLR_SORT_WINDOW_AUTO, 0.0, ELLR_TUNE_NONE, 0, cfgs[c].family};
      ellr_transpose tr;
      ellr_matrix    ref;
      p.long_row_min          = cfgs[c].long_min;
      const ellr_csr *src     = &av;
      if (trans) {
        CHECK(ellr_transpose_create(&av, &tr) == ELLR_OK, "%s: transpose: %s", sh->name, ellr_last_error());
        src = &tr.csr;
      }
      snprintf(name, sizeof(name), "%s, %s%s", sh->name, cfgs[c].what, trans ? ", stored transpose" : "");
      ellr_cuda_matrix *d  = NULL;
      ellr_status       st = ellr_matrix_create(&av, &p, &ref);
      if (!st) st = ellr_cuda_create(src, &p, stream, &d);
      if (!st) st = ellr_cuda_tune(d, src, stream);
      if (!st && cfgs[c].family == ELLR_FAMILY_SLICED && cfgs[c].k.kernel) st = ellr_cuda_set_kopts(d, &cfgs[c].k);
      CHECK(st == ELLR_OK, "%s: create: %s", name, ellr_last_error());
      if (!st) {
        ellr_cuda_kopts got;
        ellr_cuda_info  info;
        ellr_cuda_get_info(d, &info);
        ellr_cuda_get_kopts(d, &got);
        const size_t nin = trans ? a->nrows : a->ncols, nout = trans ? a->ncols : a->nrows;
        tfill_random(v.hx, (int64_t)nin, 9100 + c);
        tfill_random(v.hz, (int64_t)nout, 9200 + c);
        cpu_ref(&ref, trans, v.hx, NULL, v.ref);
        const int same = repeat_same(d, 0, 0, nin, nout, &v, stream, v.ref, name);
        cpu_ref(&ref, trans, v.hx, v.hz, v.ref);
        const int samez = repeat_same(d, 0, 1, nin, nout, &v, stream, v.ref, name);
        CHECK(same && samez, "%s: repeated products differ (y = op(A) x: %s, + z: %s)", name, same ? "same" : "differ", samez ? "same" : "differ");
        if (!trans && cfgs[c].k.chunk == 2) CHECK(got.kernel == 2, "%s: the chunks kernel was not used", name);
        if (!trans && cfgs[c].long_min > 0) CHECK(info.plan && info.plan->nlong > 0, "%s: no long rows", name);
        if (!trans && c == 0) { /* A^T through A's storage: atomics, reported only */
          tfill_random(v.hx, a->nrows, 9300);
          cpu_ref(&ref, 1, v.hx, NULL, v.ref);
          const int sa = repeat_same(d, 1, 0, a->nrows, a->ncols, &v, stream, v.ref, name);
          printf("%s: A^T x through A's storage (atomic additions) repeated bitwise: %s\n", sh->name, sa ? "yes" : "no");
        }
        printf("%s: kernel %s%s, 20 repeated products bitwise equal: %s\n", name, info.family != ELLR_FAMILY_SLICED ? "csr family" : got.kernel == 2 ? "chunks" : "rows", info.plan && info.plan->nlong ? " + long rows" : "", same && samez ? "yes" : "NO");
        CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
      }
      ellr_matrix_destroy(&ref);
      if (trans) ellr_transpose_destroy(&tr);
    }
  vecs_free(&v);
}

/* Life cycles without a GPU leak: create without tune (the kept CSR freed by destroy), create ->
   update -> destroy, create -> tune -> tune -> destroy, with staging buffers; GPU memory free before
   and after must agree.  The matrix is large enough (several MB of CSR) for cudaMemGetInfo to see it. */
static void check_lifecycles(cudaStream_t stream)
{
  tcsr a;
  if (tcsr_stencil_3d7(&a, 40)) return;
  const int64_t nnz = tcsr_nnz(&a);
  ellr_csr      av  = tcsr_view(&a);
  ellr_matrix   ref;
  ellr_params   p0 = {0, 0, 32, 1, 0, 0.0, 0, 0};
  if (ellr_matrix_create(&av, &p0, &ref)) return;
  vecs v;
  vecs_init(&v, (size_t)a.nrows);
  /* two rounds, the second measured: the first lets the driver (and compute-sanitizer) set up what
     it allocates lazily at the first pinned allocation or event */
  size_t f0 = 0, f1, tot;
  for (int it = 0; it < 8; it++) {
    const int round = it / 4, life = it % 4;
    if (it == 4) {
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaMemGetInfo(&f0, &tot));
    }
    ellr_cuda_matrix *d  = NULL;
    ellr_status       st = ellr_cuda_create(&av, &p0, stream, &d);
    CHECK(st == ELLR_OK, "lifecycle %d: create: %s", life, ellr_last_error());
    if (st) continue;
    ellr_cuda_info info;
    ellr_cuda_get_info(d, &info);
    /* streamed (a large block from a host CSR with its columns sorted): nothing kept; otherwise the CSR, for tuning */
    CHECK(!info.tuned && (info.streamed ? info.scratch_bytes == 0 : info.scratch_bytes >= (size_t)nnz * 12), "lifecycle %d: %s (scratch %zu)", life, info.streamed ? "a streamed build kept scratch" : "the CSR is not kept for tuning", info.scratch_bytes);
    if (life == 1 || life == 3) {
      st = ellr_cuda_update_values(d, &av, stream);
      CHECK(st == ELLR_OK, "lifecycle %d: update: %s", life, ellr_last_error());
    }
    if (life >= 2) {
      st = ellr_cuda_tune(d, &av, stream);
      CHECK(st == ELLR_OK, "lifecycle %d: tune: %s", life, ellr_last_error());
      st = ellr_cuda_tune(d, &av, stream);
      CHECK(st == ELLR_OK, "lifecycle %d: second tune: %s", life, ellr_last_error());
    }
    char name[64];
    snprintf(name, sizeof(name), "3d7 N=40 lifecycle %d/%d", round, life);
    check_all_mixed(name, &a, &ref, d, &v, stream, 9000 + 100 * life);
    CHECK(ellr_cuda_destroy(d) == ELLR_OK, "lifecycle %d: destroy: %s", life, ellr_last_error());
  }
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemGetInfo(&f1, &tot));
  CHECK(f1 == f0, "GPU memory leaked over the life cycles: %zu bytes free before, %zu after", f0, f1);
  /* bad placements */
  ellr_cuda_matrix *d = NULL;
  if (ellr_cuda_create(&av, &p0, stream, &d) == ELLR_OK) {
    ellr_status st = ellr_cuda_mult_mixed(d, v.hx, 1, v.dy, 1, v.dy, 0, 0, stream);
    CHECK(st == ELLR_ERR_ARG, "mult_mixed accepted z aliasing y with different placements");
    ellr_csr bad = av;
    bad.nrows    = av.nrows - 1;
    st           = ellr_cuda_update_values(d, &bad, stream);
    CHECK(st == ELLR_ERR_ARG, "update_values accepted another shape");
    st = ellr_cuda_tune(d, &bad, stream);
    CHECK(st == ELLR_ERR_ARG, "tune accepted another shape");
    CHECK(ellr_cuda_destroy(d) == ELLR_OK, "destroy: %s", ellr_last_error());
  }
  vecs_free(&v);
  ellr_matrix_destroy(&ref);
  tcsr_free(&a);
}

/* The page-locking checks' frame: 3d7 N^3 with slices of 32, for pin_host 0 and 1, a CPU reference and a device
   matrix handed to body (which may change a's values in place, as AIJ does), both destroyed after; the values'
   bytes checked inside [min_bytes, max_bytes). */
typedef void (*pinning_body)(const char *name, tcsr *a, ellr_matrix *ref, ellr_cuda_matrix *d, int pin, vecs *v, cudaStream_t stream);
static void pinning_cases(int N, const char *label, size_t min_bytes, size_t max_bytes, pinning_body body, cudaStream_t stream)
{
  tcsr a;
  if (tcsr_stencil_3d7(&a, N)) return;
  const size_t vbytes = (size_t)tcsr_nnz(&a) * sizeof(double);
  CHECK(vbytes >= min_bytes && vbytes < max_bytes, "%s: values of %zu bytes, not in [%zu, %zu)", label, vbytes, min_bytes, max_bytes);
  ellr_csr    av = tcsr_view(&a);
  ellr_params p  = {0, 0, 32, 0, 0, 0.0, 0, 0};
  vecs        v;
  vecs_init(&v, (size_t)a.nrows);
  for (int pin = 0; pin < 2; pin++) {
    char name[96];
    snprintf(name, sizeof(name), "%s pin_host=%d", label, pin);
    p.pin_host = pin;
    ellr_matrix ref;
    if (ellr_matrix_create(&av, &p, &ref)) {
      CHECK(0, "%s: CPU reference: %s", name, ellr_last_error());
      continue;
    }
    ellr_cuda_matrix *d  = NULL;
    ellr_status       st = ellr_cuda_create(&av, &p, stream, &d);
    CHECK(st == ELLR_OK, "%s: create: %s", name, ellr_last_error());
    if (!st) {
      body(name, &a, &ref, d, pin, &v, stream);
      CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
    }
    ellr_matrix_destroy(&ref);
  }
  vecs_free(&v);
  tcsr_free(&a);
}

/* Page-locking (pin_host): values of ELLR_PIN_MIN bytes and more are page-locked and uploaded by the second host
   thread; refreshes from the same host arrays, changed in place as AIJ changes them, copy from the registered
   pages; after ellr_cuda_unpin_host they copy as pageable memory.  Without pin_host nothing is page-locked. */
static void pinned_at_create(const char *name, tcsr *a, ellr_matrix *ref, ellr_cuda_matrix *d, int pin, vecs *v, cudaStream_t stream)
{
  const ellr_csr av = tcsr_view(a);
  ellr_cuda_info info;
  ellr_cuda_get_info(d, &info);
  CHECK(pin ? info.pinned_bytes > 0 || info.pin_note[0] : info.pinned_bytes == 0, "%s: %zu bytes page-locked (%s)", name, info.pinned_bytes, info.pin_note);
  g_pinned += info.pinned_bytes > 0;
  if (info.pinned_bytes > 0) CHECK(ellr_cuda_pinned_array(d, 2) == av.val, "%s: the page-locked values are not the array given to create", name);
  CHECK(ellr_cuda_pinned_array(d, 3) == NULL && ellr_cuda_pinned_array(d, -1) == NULL, "%s: an array k outside 0-2 reported page-locked", name);
  check_all_products(name, a, ref, d, v, stream, 9500 + pin);
  for (int round = 0; round < 2; round++) { /* refreshes from the arrays as registered, then after unpinning */
    tcsr_randomize_values(a, 9600 + 10 * pin + round);
    ellr_status st = ellr_cuda_update_values(d, &av, stream);
    CHECK(st == ELLR_OK, "%s: update %d: %s", name, round, ellr_last_error());
    ref_values(ref, a);
    check_all_products(name, a, ref, d, v, stream, 9700 + 10 * pin + round);
    CHECK(ellr_cuda_unpin_host(d) == ELLR_OK, "%s: unpin: %s", name, ellr_last_error());
    ellr_cuda_get_info(d, &info);
    CHECK(info.pinned_bytes == 0, "%s: %zu bytes still page-locked after ellr_cuda_unpin_host", name, info.pinned_bytes);
    for (int k = 0; k < 3; k++) CHECK(ellr_cuda_pinned_array(d, k) == NULL, "%s: array %d still reported page-locked after ellr_cuda_unpin_host", name, k);
  }
}

/* Values left pageable at create (1-4 MB) are page-locked at the second refresh with pin_host, refreshed from the
   registered pages after that, and never page-locked again once unpinned; without pin_host never. */
static void pinned_at_refresh(const char *name, tcsr *a, ellr_matrix *ref, ellr_cuda_matrix *d, int pin, vecs *v, cudaStream_t stream)
{
  const ellr_csr av  = tcsr_view(a);
  const size_t   vb  = (size_t)tcsr_nnz(a) * sizeof(double);
  ellr_cuda_info info;
  ellr_cuda_get_info(d, &info);
  CHECK(info.pinned_bytes == 0, "%s: %zu bytes page-locked at create, under ELLR_PIN_MIN", name, info.pinned_bytes);
  for (int r = 0; r < 5; r++) { /* in place, as AIJ changes its values; unpinned after the third */
    tcsr_randomize_values(a, 9800 + 10 * pin + r);
    ellr_status st = ellr_cuda_update_values(d, &av, stream);
    CHECK(st == ELLR_OK, "%s: update %d: %s", name, r, ellr_last_error());
    ref_values(ref, a);
    check_all_products(name, a, ref, d, v, stream, 9900 + 10 * pin + r);
    ellr_cuda_get_info(d, &info);
    const int want = pin && (r == 1 || r == 2); /* page-locked at the second refresh, released after the third */
    if (want && info.pin_note[0]) printf("%s: page-locking refused: %s\n", name, info.pin_note);
    else CHECK(want ? info.pinned_bytes >= vb - 8192 && info.refresh_pin_ms > 0 : info.pinned_bytes == 0, "%s: refresh %d: %zu bytes page-locked (want %s)", name, r, info.pinned_bytes, want ? "the values" : "none");
    g_refresh_pinned += want && info.pinned_bytes > 0;
    if (!info.pin_note[0]) CHECK(ellr_cuda_pinned_array(d, 2) == (want ? (const void *)av.val : NULL) && ellr_cuda_pinned_array(d, 0) == NULL, "%s: refresh %d: page-locked arrays reported %p (values) and %p (row offsets), want %p and none", name, r, ellr_cuda_pinned_array(d, 2), ellr_cuda_pinned_array(d, 0), want ? (const void *)av.val : NULL);
    if (r == 2) CHECK(ellr_cuda_unpin_host(d) == ELLR_OK, "%s: unpin: %s", name, ellr_last_error());
  }
}

static void check_pinning(cudaStream_t stream)
{
  pinning_cases(48, "3d7 N=48", ELLR_PIN_MIN + 8192, SIZE_MAX, pinned_at_create, stream);           /* 110592 rows, 6 MB of values */
  pinning_cases(32, "3d7 N=32 refreshes", ELLR_PIN_REFRESH_MIN + 8192, ELLR_PIN_MIN, pinned_at_refresh, stream); /* 32768 rows, 1.8 MB */
}

/* At least ELLR_POOLED_MIN of values: the upload on create's second thread, the set-up scratch from the
   stream-ordered pool (whose frees do not wait for that upload), with and without page-locking, rows sorted or
   not; pellr's automatic window keeps a stencil's order (its unused permutation freed after the upload). */
static void check_pooled(cudaStream_t stream)
{
  tcsr a;
  if (tcsr_stencil_3d7(&a, 110)) return; /* 1331000 rows, 74 MB of values */
  const int64_t nnz = tcsr_nnz(&a);
  CHECK((size_t)nnz * sizeof(double) >= ELLR_POOLED_MIN, "the pooled shape's values (%zu bytes) are under ELLR_POOLED_MIN", (size_t)nnz * sizeof(double));
  vecs v;
  vecs_init(&v, (size_t)a.nrows);
  ellr_csr av = tcsr_view(&a);
  for (int k = 0; k < 3; k++) {
    ellr_params p = {0, 0, 32, 0, 0, 0.0, 0, 0};
    p.pin_host    = k != 1;
    p.sort_rows   = k == 2;
    p.sort_window = k == 2 ? ELLR_SORT_WINDOW_AUTO : 0;
    char name[80];
    snprintf(name, sizeof(name), "3d7 N=110 pooled, pin_host=%d sort=%d", p.pin_host, p.sort_rows);
    ellr_matrix ref;
    if (ellr_matrix_create(&av, &p, &ref)) break;
    ellr_cuda_matrix *d  = NULL;
    ellr_status       st = ellr_cuda_create(&av, &p, stream, &d);
    CHECK(st == ELLR_OK, "%s: create: %s", name, ellr_last_error());
    if (!st) st = ellr_cuda_tune(d, &av, stream);
    CHECK(st == ELLR_OK, "%s: tune: %s", name, ellr_last_error());
    if (!st) {
      ellr_cuda_info info;
      ellr_cuda_get_info(d, &info);
      CHECK(info.plan && info.plan->sorted == ref.plan.sorted && info.plan->stats.nstored == ref.plan.stats.nstored, "%s: the GPU plan differs from the host plan (sorted %d/%d)", name, info.plan ? info.plan->sorted : -1, ref.plan.sorted);
      check_all_products(name, &a, &ref, d, &v, stream, 9950 + k);
      tcsr_randomize_values(&a, 9960 + k);
      st = ellr_cuda_update_values(d, &av, stream);
      CHECK(st == ELLR_OK, "%s: update: %s", name, ellr_last_error());
      ref_values(&ref, &a);
      check_all_products(name, &a, &ref, d, &v, stream, 9970 + k);
    }
    if (d) CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
    ellr_matrix_destroy(&ref);
  }
  vecs_free(&v);
  tcsr_free(&a);
}

static void check_errors(void)
{
  tcsr a;
  tcsr_random(&a, 40, 30, 3.0, 0.2, 5, 9);
  ellr_csr          v = tcsr_view(&a);
  ellr_cuda_matrix *d = (ellr_cuda_matrix *)0x1;
  ellr_params       bad = {3, 0, 0, 0, 0, 0.0, 0, 0};
  ellr_status       st  = ellr_cuda_create(&v, &bad, NULL, &d);
  CHECK(st == ELLR_ERR_ARG && d == NULL && strstr(ellr_last_error(), "threads per row 3"), "bad T: %d '%s'", st, ellr_last_error());
  ellr_params badbs = {1, 100, 0, 0, 0, 0.0, 0, 0};
  st                = ellr_cuda_create(&v, &badbs, NULL, &d);
  CHECK(st == ELLR_ERR_ARG && d == NULL && strstr(ellr_last_error(), "block size 100"), "bad BS: %d '%s'", st, ellr_last_error());
  /* max fill: refused by the plan before the padded storage is allocated (4.8 GB against 0.6 MB of CSR) */
  tcsr pad;
  tcsr_random(&pad, 20000, 20000, 1.0, 0.0, 7, 21);
  ellr_csr    pv = tcsr_view(&pad);
  ellr_params pf = {0, 0, 0, 0, 0, 2.0, 0, 0};
  size_t      f0 = 0, f1 = 0, tot;
  pf.long_row_min = ELLR_LONG_ROWS_NONE; /* the dense row stays in the slices */
  if (ellr_cuda_device_count() > 0) {
    /* a first matrix through the same paths loads the kernels (and CUB's) and sets up the stream-ordered pool,
       which hold device memory from then on: not a leak */
    ellr_params pw = pf;
    pw.max_fill    = 0;
    if (ellr_cuda_create(&v, &pw, NULL, &d) == ELLR_OK) ellr_cuda_destroy(d);
    d = NULL;
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemGetInfo(&f0, &tot));
  }
  for (int gpu_plan = 0; gpu_plan < 2; gpu_plan++) { /* refused by the host plan (20000 rows) and by the GPU plan */
    ellr_cuda_set_host_plan_rows(gpu_plan ? 0 : -1);
    st = ellr_cuda_create(&pv, &pf, NULL, &d);
    ellr_cuda_set_host_plan_rows(-1);
    if (ellr_cuda_device_count() > 0) CHECK(st == ELLR_ERR_FILL && d == NULL && strstr(ellr_last_error(), "max fill 2"), "max fill (%s plan): %d '%s'", gpu_plan ? "GPU" : "host", st, ellr_last_error());
    else CHECK(st == ELLR_ERR_CUDA && d == NULL, "max fill without a GPU: %d '%s'", st, ellr_last_error()); /* no device: refused before any plan */
  }
  if (ellr_cuda_device_count() > 0) { /* a small matrix's automatic T halved under max fill: as the host plan's */
    tcsr sm;
    tcsr_random(&sm, 30000, 100, 2.0, 0.0, 7, 25);
    ellr_csr    sv = tcsr_view(&sm);
    ellr_params ps = {0, 0, 32, 0, 0, 8.0, ELLR_TUNE_NONE, 0};
    ps.long_row_min = ELLR_LONG_ROWS_NONE;
    ellr_plan hp;
    st = ellr_plan_create(&sv, &ps, &hp);
    CHECK(st == ELLR_OK && hp.T < 32, "small matrix under max fill, host plan: %d '%s'", st, ellr_last_error());
    ellr_cuda_set_host_plan_rows(0); /* the GPU plan's rule, not the host plan again */
    ellr_status gst = ellr_cuda_create(&sv, &ps, NULL, &d);
    ellr_cuda_set_host_plan_rows(-1);
    ellr_cuda_info info;
    if (!gst) ellr_cuda_get_info(d, &info);
    CHECK(!st && gst == ELLR_OK && info.plan->T == hp.T && !info.plan->per_slice_T && info.plan->stats.bytes == hp.stats.bytes, "small matrix under max fill, GPU plan: %d '%s', T %d (host %d)", gst, ellr_last_error(), gst ? -1 : info.plan->T, st ? -1 : hp.T);
    if (!gst) ellr_cuda_destroy(d);
    d = NULL;
    if (!st) ellr_plan_destroy(&hp);
    tcsr_free(&sm);
  }
  if (ellr_cuda_device_count() > 0) { /* ... and accepted once the dense row takes the long-row path */
    ellr_params pl = pf;
    pl.long_row_min = 512;
    st              = ellr_cuda_create(&pv, &pl, NULL, &d);
    ellr_cuda_info info;
    if (!st) ellr_cuda_get_info(d, &info);
    CHECK(st == ELLR_OK && info.plan->nlong == 1 && info.plan->stats.fill < 2.0, "max fill with the long-row path: %d '%s'", st, ellr_last_error());
    if (!st) ellr_cuda_destroy(d);
    d = NULL;
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemGetInfo(&f0, &tot)); /* the long-row kernels are loaded now */
  }
  tcsr_free(&pad);
  tcsr_free(&a);

  /* GPU out of memory: 1M rows, one with 100k entries, full-width ELLPACK: 1e11 entries (1.2 TB) */
  tcsr big;
  const int32_t n = 1000000, L = 100000;
  if (tcsr_alloc(&big, n, n, L)) return;
  for (int32_t r = 0; r < n; r++) big.rowptr[r + 1] = r == 0 ? L : L;
  for (int32_t k = 0; k < L; k++) {
    big.colidx[k] = k;
    big.val[k]    = 1.0;
  }
  ellr_csr    bv = tcsr_view(&big);
  ellr_params pb = {1, 256, 0, 0, 0, 0.0, 0, 0};
  pb.long_row_min = ELLR_LONG_ROWS_NONE; /* the long row stays in the slices */
  st             = ellr_cuda_create(&bv, &pb, NULL, &d);
  if (ellr_cuda_device_count() > 0) {
    CHECK(st == ELLR_ERR_CUDA && d == NULL && strstr(ellr_last_error(), "out of memory") && strstr(ellr_last_error(), "bytes"), "OOM: %d '%s'", st, ellr_last_error());
    printf("out-of-memory refusal: %s\n", ellr_last_error());
    CUDA_OK(cudaMemGetInfo(&f1, &tot));
    CHECK(f1 == f0, "GPU memory leaked on the failure paths: %zu bytes free before, %zu after", f0, f1);
  } else {
    CHECK(st == ELLR_ERR_CUDA && d == NULL && strstr(ellr_last_error(), "no CUDA device"), "no device: %d '%s'", st, ellr_last_error());
    printf("without a GPU: %s\n", ellr_last_error());
  }
  tcsr_free(&big);
}

/* The streamed build and refresh (no CSR kept on the device) against the build that uploads the whole CSR (the
   same matrix told that its columns are not sorted): the same layout, so the same bits in every product, after a
   refresh too; the streamed one keeps no scratch. */
static void check_streamed(cudaStream_t stream)
{
  tcsr a;
  if (tcsr_stencil_3d7(&a, 40)) {
    CHECK(0, "generator failed");
    return;
  }
  const int32_t n = a.nrows;
  vecs          v;
  vecs_init(&v, (size_t)n);
  for (int32_t i = 0; i < n; i++) v.hx[i] = 1.0 + 0.001 * (i % 97);
  up(v.dx, v.hx, (size_t)n);
  double *y[2];
  for (int variant = 0; variant < 2; variant++) y[variant] = (double *)malloc((size_t)n * sizeof(double));
  for (int pass = 0; pass < 2; pass++) { /* pass 1: new values through update_values */
    ellr_cuda_matrix *d[2] = {NULL, NULL};
    for (int variant = 0; variant < 2; variant++) {
      ellr_csr    c = tcsr_view(&a);
      ellr_params p = {0, 0, 32, 0, 0, 0.0, ELLR_TUNE_MODEL, 0, ELLR_FAMILY_SLICED};
      c.cols_sorted = variant == 0; /* variant 1: the whole CSR uploaded and kept until tuned */
      CHECK(ellr_cuda_create(&c, &p, stream, &d[variant]) == ELLR_OK, "streamed check: create (%s)", ellr_last_error());
      if (!d[variant]) continue;
      ellr_cuda_info info;
      ellr_cuda_get_info(d[variant], &info);
      CHECK(info.streamed == (variant == 0), "streamed check: variant %d built %s", variant, info.streamed ? "streamed" : "from the whole CSR");
      if (variant == 0) CHECK(info.scratch_bytes == 0, "streamed check: %zu bytes of scratch kept after a streamed build", info.scratch_bytes);
      CHECK(ellr_cuda_tune(d[variant], &c, stream) == ELLR_OK, "streamed check: tune (%s)", ellr_last_error());
      if (pass == 1) { /* new values, refreshed; the old ones back for the next variant's build */
        double *old = (double *)malloc((size_t)tcsr_nnz(&a) * sizeof(double));
        memcpy(old, a.val, (size_t)tcsr_nnz(&a) * sizeof(double));
        for (int64_t k = 0; k < tcsr_nnz(&a); k++) a.val[k] = -0.5 * a.val[k] + 0.25 * (double)(k % 5);
        CHECK(ellr_cuda_update_values(d[variant], &c, stream) == ELLR_OK, "streamed check: update_values (%s)", ellr_last_error());
        CUDA_OK(cudaStreamSynchronize(stream));
        ellr_cuda_get_info(d[variant], &info);
        if (variant == 0) CHECK(info.scratch_bytes == 0, "streamed check: %zu bytes of scratch kept after a streamed refresh", info.scratch_bytes);
        memcpy(a.val, old, (size_t)tcsr_nnz(&a) * sizeof(double));
        free(old);
      }
      CUDA_OK(cudaMemsetAsync(v.dy, 0xFF, (size_t)n * sizeof(double), stream));
      CHECK(ellr_cuda_mult(d[variant], v.dx, NULL, v.dy, 0, stream) == ELLR_OK, "streamed check: mult (%s)", ellr_last_error());
      CUDA_OK(cudaStreamSynchronize(stream));
      down(y[variant], v.dy, (size_t)n);
    }
    CHECK(d[0] && d[1] && !memcmp(y[0], y[1], (size_t)n * sizeof(double)), "streamed check (pass %d): the streamed build's product differs from the whole CSR's", pass);
    for (int variant = 0; variant < 2; variant++)
      if (d[variant]) CHECK(ellr_cuda_destroy(d[variant]) == ELLR_OK, "streamed check: destroy");
  }
  for (int variant = 0; variant < 2; variant++) free(y[variant]);
  vecs_free(&v);
  tcsr_free(&a);
}

int main(int argc, char **argv)
{
  int quick = argc > 1 && !strcmp(argv[1], "--quick");
  shape sh[20];
  int   ns = 0;
  memset(sh, 0, sizeof(sh));
  tcount_allocator_install();
#define ADD(nm, call) \
  do { \
    sh[ns].name = nm; \
    if (call) { \
      printf("generator failed: %s\n", nm); \
      return 2; \
    } \
    ns++; \
  } while (0)
  ADD("0x0", tcsr_random(&sh[ns].a, 0, 0, 0, 0, -1, 1));
  ADD("0x5", tcsr_random(&sh[ns].a, 0, 5, 0, 0, -1, 2));
  ADD("5x0", tcsr_random(&sh[ns].a, 5, 0, 3, 0, -1, 3));
  ADD("1x1", tcsr_random(&sh[ns].a, 1, 1, 1, 0, 0, 4));
  ADD("zero 20x30", tcsr_random(&sh[ns].a, 20, 30, 0, 1.0, -1, 6));
  ADD("empty rows 97x97", tcsr_random(&sh[ns].a, 97, 97, 4, 0.4, -1, 7));
  ADD("wide 33x300", tcsr_random(&sh[ns].a, 33, 300, 9, 0.1, -1, 8));
  ADD("tall 300x13", tcsr_random(&sh[ns].a, 300, 13, 3, 0.1, -1, 9));
  ADD("dense row 70x150", tcsr_random(&sh[ns].a, 70, 150, 3, 0.1, 41, 10));
  ADD("power-law 3000", tcsr_powerlaw(&sh[ns].a, 3000, 3000, 2.0, 1.6, 2500, 11));
  ADD("random 129x129", tcsr_random(&sh[ns].a, 129, 129, 40, 0.0, -1, 12));
  ADD("3d7 N=12", tcsr_stencil_3d7(&sh[ns].a, 12));
  ADD("3d27 N=7", tcsr_stencil_3d27(&sh[ns].a, 7));
  ADD("long rows 40x9000", tcsr_random(&sh[ns].a, 40, 9000, 3000, 0.2, 3, 13)); /* every row past IPCSR's long-row limit, some empty, one dense */
  ADD("short and long 5000", tcsr_powerlaw(&sh[ns].a, 5000, 20000, 1.0, 1.2, 16000, 14));
  ADD("16-bit spans 3001", tcsr_spans(&sh[ns].a, 3001, 15)); /* packed and 32-bit slices side by side, spans at the limit */
  ADD("cyclic lengths 9000", tcsr_cyclic_lengths(&sh[ns].a, 9000, 16)); /* the automatic sort window picks a window */
  ADD("power-law 33000", tcsr_powerlaw(&sh[ns].a, 33000, 33000, 2.0, 1.6, 2000, 18)); /* past ELLR_SMALL_ROWS: the large matrices' automatic T */
  sh[ns - 1].auto_T_only = 1;

  const int ndev = ellr_cuda_device_count();
  printf("CUDA devices: %d%s\n", ndev, quick ? " (quick)" : "");
  check_errors();
  if (ndev > 0) {
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t stream; /* non-blocking, as PETSc's: nothing orders it with the default stream */
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    check_lifecycles(stream);
    check_pinning(stream);
    check_streamed(stream);
    if (!quick) check_pooled(stream);
    long   created = 0;
    double t0      = twall_ms();
    for (int s = 0; s < ns; s++) {
      if (quick && s % 2) continue;
      const long p0 = g_pass, f0 = g_fail;
      run_shape(&sh[s], quick, stream, &created);
      check_compressed(&sh[s], stream);
      check_families(&sh[s], stream);
      if (!strcmp(sh[s].name, "short and long 5000")) check_long_joins(&sh[s], stream);
      if (!strcmp(sh[s].name, "short and long 5000") || !strcmp(sh[s].name, "power-law 33000") || !strcmp(sh[s].name, "long rows 40x9000")) check_repeatable(&sh[s], stream);
      printf("%-20s %5d x %-5d nnz %7lld: %6ld passed, %ld failed\n", sh[s].name, sh[s].a.nrows, sh[s].a.ncols, (long long)tcsr_nnz(&sh[s].a), g_pass - p0, g_fail - f0);
    }
    CUDA_OK(cudaStreamDestroy(stream));
    printf("device matrices created: %ld in %.1f s; automatic T per slice with the GPU plan equal to the host plan: %ld; host values page-locked: %ld, at a refresh: %ld\n", created, (twall_ms() - t0) / 1e3, g_auto_per_slice_same, g_pinned, g_refresh_pinned);
    CHECK(quick || g_auto_per_slice_same > 0, "no automatic plan came out per slice on the GPU");
    CHECK(g_pinned > 0, "no matrix had its host values page-locked (check_pinning: the registration was refused, or the threaded upload did not page-lock)");
    CHECK(g_refresh_pinned > 0, "no matrix had its host values page-locked at a refresh (check_pinning, 3d7 N=32: refused, or not done)");
    CHECK(quick || g_order_skipped > 0, "pellr's automatic family never took IPCSR without sorting the rows (check_families, dense row 70x150)");
  } else printf("no CUDA device: device products skipped\n");
  /* every host block the engine took went back through its allocator (ellr_set_host_allocator) */
  printf("engine host blocks: %ld allocated, %ld not returned, %ld released that it did not give\n", tcount_total(), tcount_live(), tcount_bad());
  CHECK(tcount_total() > 0 && tcount_live() == 0 && tcount_bad() == 0, "the engine's host memory did not all go through its allocator and back");
  for (int s = 0; s < ns; s++) tcsr_free(&sh[s].a);
  printf("test_engine_cuda: %ld passed, %ld failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
