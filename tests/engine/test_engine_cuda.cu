/*
  test_engine_cuda.cu - the CUDA backend against the CPU CSR reference (PETSc-free).

  Odd shapes x (T, C, sort, BS, kernel variants) -> ellr_cuda_create / ellr_cuda_mult (y = A x,
  y = A x + z, z aliasing y, A^T x (+ z), on a stream too), ellr_cuda_update_values and
  ellr_cuda_mult_host, each output poisoned (NaN) first, relative error <= 1e-12.  Also the error
  paths (bad parameters, max fill, GPU out of memory, no leak), the info record, Without a GPU only the host parts run.

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
};

/* ---- device products ------------------------------------------------------------------------ */
struct vecs {
  size_t  n;
  double *hx, *hz, *hy, *ref, *hnan;
  double *dx, *dz, *dy;
};

static void vecs_init(vecs *v, size_t n)
{
  v->n    = n + 1;
  v->hx   = (double *)malloc(v->n * sizeof(double));
  v->hz   = (double *)malloc(v->n * sizeof(double));
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
  free(v->hy);
  free(v->ref);
  free(v->hnan);
  CUDA_OK(cudaFree(v->dx));
  CUDA_OK(cudaFree(v->dz));
  CUDA_OK(cudaFree(v->dy));
}

static void up(double *d, const double *h, size_t n) { CUDA_OK(cudaMemcpy(d, h, (n ? n : 1) * sizeof(double), cudaMemcpyHostToDevice)); }
static void down(double *h, const double *d, size_t n) { CUDA_OK(cudaMemcpy(h, d, (n ? n : 1) * sizeof(double), cudaMemcpyDeviceToHost)); }

/* One product through ellr_cuda_mult: mode 0 y = op(A) x, 1 + z, 2 + y (aliased). */
static void check_mult(const char *name, const tcsr *a, ellr_cuda_matrix *d, vecs *v, int transpose, int mode, cudaStream_t stream, uint64_t seed)
{
  const size_t nin = transpose ? a->nrows : a->ncols, nout = transpose ? a->ncols : a->nrows;
  tfill_random(v->hx, (int64_t)nin, seed);
  tfill_random(v->hz, (int64_t)nout, seed + 1);
  up(v->dx, v->hx, nin);
  if (mode == 1) up(v->dz, v->hz, nout);
  if (mode == 2) up(v->dy, v->hz, nout);
  else up(v->dy, v->hnan, nout);
  const double *z = mode == 0 ? NULL : mode == 1 ? v->dz : v->dy;
  if (transpose) tcsr_spmv_transpose(a, v->hx, mode ? v->hz : NULL, v->ref);
  else tcsr_spmv(a, v->hx, mode ? v->hz : NULL, v->ref);
  ellr_status st = ellr_cuda_mult(d, v->dx, z, v->dy, transpose, stream);
  cudaError_t e  = stream ? cudaStreamSynchronize(stream) : cudaDeviceSynchronize();
  CHECK(st == ELLR_OK && e == cudaSuccess, "%s: ellr_cuda_mult(transpose %d, mode %d) failed: %d %s / %s", name, transpose, mode, st, ellr_last_error(), cudaGetErrorString(e));
  tfill_nan(v->hy, (int64_t)nout);
  down(v->hy, v->dy, nout);
  const double err = trel_err(v->hy, v->ref, (int64_t)nout);
  CHECK(err <= TOL, "%s: %s mode %d: relative error %g", name, transpose ? "A^T x" : "A x", mode, err);
}

static void check_mult_host(const char *name, const tcsr *a, ellr_cuda_matrix *d, vecs *v, int transpose, int withz, uint64_t seed)
{
  const size_t nin = transpose ? a->nrows : a->ncols, nout = transpose ? a->ncols : a->nrows;
  tfill_random(v->hx, (int64_t)nin, seed);
  tfill_random(v->hz, (int64_t)nout, seed + 1);
  if (transpose) tcsr_spmv_transpose(a, v->hx, withz ? v->hz : NULL, v->ref);
  else tcsr_spmv(a, v->hx, withz ? v->hz : NULL, v->ref);
  tfill_nan(v->hy, (int64_t)nout);
  ellr_status st = ellr_cuda_mult_mixed(d, v->hx, 1, withz ? v->hz : NULL, 1, v->hy, 1, transpose, NULL);
  CHECK(st == ELLR_OK, "%s: mult_host failed: %s", name, ellr_last_error());
  double err = trel_err(v->hy, v->ref, (int64_t)nout);
  CHECK(err <= TOL, "%s: mult_host transpose %d z %d: relative error %g", name, transpose, withz, err);
  if (withz) { /* z aliasing y on the host */
    memcpy(v->hy, v->hz, nout * sizeof(double));
    st  = ellr_cuda_mult_mixed(d, v->hx, 1, v->hy, 1, v->hy, 1, transpose, NULL);
    err = trel_err(v->hy, v->ref, (int64_t)nout);
    CHECK(st == ELLR_OK && err <= TOL, "%s: mult_host aliased transpose %d: %g", name, transpose, err);
  }
}

static void check_all_products(const char *name, const tcsr *a, ellr_cuda_matrix *d, vecs *v, cudaStream_t stream, uint64_t seed)
{
  for (int tr = 0; tr < 2; tr++)
    for (int mode = 0; mode < 3; mode++) check_mult(name, a, d, v, tr, mode, (mode == 1) ? stream : NULL, seed + 10 * tr + mode);
}

static void run_shape(shape *sh, int quick, cudaStream_t stream, long *ncreated)
{
  static const int Ts[] = {0, 1, 2, 4, 8, 16, 32}, Cs[] = {0, 1, 7, 32}, BSs[] = {0, 128, 256, 512, 64, 1024, 96};
  static const int sorts[][2] = {{0, 0}, {1, 0}, {1, 5}};
  /* kernel variants: {kernel, uselen, chunk, loads} */
  static const ellr_cuda_kopts kv[] = {{1, 1, 0, 0}, {1, 0, 0, 1}, {2, 0, 1, 0}, {2, 1, 2, 1}, {2, -1, -1, 0}, {2, 0, 3, 1}};
  const tcsr *a   = &sh->a;
  vecs        v;
  char        name[200];
  int         k = 0;
  vecs_init(&v, (size_t)(a->nrows > a->ncols ? a->nrows : a->ncols));
  for (int it = 0; it < 7; it++)
    for (int ic = 0; ic < 4; ic++)
      for (int is = 0; is < 3; is++, k++) {
        if (quick && (k % 7)) continue;
        ellr_params p = {Ts[it], BSs[k % 7], Cs[ic], sorts[is][0], sorts[is][1], 0.0};
        snprintf(name, sizeof(name), "%s T=%d BS=%d C=%d sort=%d/%d", sh->name, p.threads_per_row, p.block_size, p.slice_height, p.sort_rows, p.sort_window);
        ellr_cuda_matrix *d  = NULL;
        ellr_csr          av = tcsr_view(a);
        ellr_status       st = ellr_cuda_create(&av, &p, stream, &d);
        if (!st) st = ellr_cuda_tune(d, &av, stream);
        CHECK(st == ELLR_OK && d, "%s: create failed: %d %s", name, st, ellr_last_error());
        if (st) continue;
        (*ncreated)++;
        ellr_cuda_info info;
        ellr_cuda_get_info(d, &info);
        const int tunedT = !p.threads_per_row, tunedB = !p.block_size;
        CHECK((tunedT || info.threads_per_row == p.threads_per_row) && (tunedB ? (info.block_size == 128 || info.block_size == 256 || info.block_size == 512) : info.block_size == p.block_size) && info.tune_products <= 18 && info.plan && info.plan->T == info.threads_per_row && info.device_bytes > 0,
              "%s: info T=%d BS=%d products=%d", name, info.threads_per_row, info.block_size, info.tune_products);
        check_all_products(name, a, d, &v, stream, 100 + k);
        /* kernel variants on the same storage */
        const int nkv = quick ? 3 : 6;
        for (int q = 0; q < nkv; q++) {
          st = ellr_cuda_set_kopts(d, &kv[q]);
          CHECK(st == ELLR_OK, "%s: set_kopts %d: %s", name, q, ellr_last_error());
          ellr_cuda_kopts got;
          ellr_cuda_get_kopts(d, &got);
          char vname[260];
          snprintf(vname, sizeof(vname), "%s [kernel %d len %d chunk %d loads %d]", name, got.kernel, got.uselen, got.chunk, got.loads);
          check_all_products(vname, a, d, &v, stream, 300 + k * 7 + q);
        }
        ellr_cuda_set_kopts(d, NULL);
        /* values-only update */
        tcsr b = *a;
        const int64_t nnz = tcsr_nnz(a);
        b.val = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
        memcpy(b.val, a->val, (size_t)nnz * sizeof(double));
        tcsr_randomize_values(&b, 900 + k);
        ellr_csr bv = tcsr_view(&b);
        st          = ellr_cuda_update_values(d, &bv, stream);
        CHECK(st == ELLR_OK, "%s: update_values: %s", name, ellr_last_error());
        snprintf(name + strlen(name), sizeof(name) - strlen(name), " (updated)");
        check_all_products(name, &b, d, &v, stream, 500 + k);
        for (int tr = 0; tr < 2; tr++)
          for (int wz = 0; wz < 2; wz++) check_mult_host(name, &b, d, &v, tr, wz, 700 + k + tr + wz);
        free(b.val);
        CHECK(ellr_cuda_destroy(d) == ELLR_OK, "%s: destroy: %s", name, ellr_last_error());
      }
  vecs_free(&v);
}

static void check_errors(void)
{
  tcsr a;
  tcsr_random(&a, 40, 30, 3.0, 0.2, 5, 9);
  ellr_csr          v = tcsr_view(&a);
  ellr_cuda_matrix *d = (ellr_cuda_matrix *)0x1;
  ellr_params       bad = {3, 0, 0, 0, 0, 0.0};
  ellr_status       st  = ellr_cuda_create(&v, &bad, NULL, &d);
  CHECK(st == ELLR_ERR_ARG && d == NULL && strstr(ellr_last_error(), "threads per row 3"), "bad T: %d '%s'", st, ellr_last_error());
  ellr_params badbs = {1, 100, 0, 0, 0, 0.0};
  st                = ellr_cuda_create(&v, &badbs, NULL, &d);
  CHECK(st == ELLR_ERR_ARG && d == NULL && strstr(ellr_last_error(), "block size 100"), "bad BS: %d '%s'", st, ellr_last_error());
  /* max fill: refused by the plan before any GPU allocation (storage 4.8 GB against 0.6 MB of CSR) */
  tcsr pad;
  tcsr_random(&pad, 20000, 20000, 1.0, 0.0, 7, 21);
  ellr_csr    pv = tcsr_view(&pad);
  ellr_params pf = {0, 0, 0, 0, 0, 2.0};
  size_t      f0 = 0, f1 = 0, tot;
  if (ellr_cuda_device_count() > 0) CUDA_OK(cudaMemGetInfo(&f0, &tot));
  st = ellr_cuda_create(&pv, &pf, NULL, &d);
  CHECK(st == ELLR_ERR_FILL && d == NULL && strstr(ellr_last_error(), "max fill 2"), "max fill: %d '%s'", st, ellr_last_error());
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
  ellr_params pb = {1, 256, 0, 0, 0, 0.0};
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

int main(int argc, char **argv)
{
  int quick = argc > 1 && !strcmp(argv[1], "--quick");
  shape sh[20];
  int   ns = 0;
  memset(sh, 0, sizeof(sh));
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

  const int ndev = ellr_cuda_device_count();
  printf("CUDA devices: %d%s\n", ndev, quick ? " (quick)" : "");
  check_errors();
  if (ndev > 0) {
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    long   created = 0;
    double t0      = twall_ms();
    for (int s = 0; s < ns; s++) {
      if (quick && s % 2) continue;
      const long p0 = g_pass, f0 = g_fail;
      run_shape(&sh[s], quick, stream, &created);
      printf("%-20s %5d x %-5d nnz %7lld: %6ld passed, %ld failed\n", sh[s].name, sh[s].a.nrows, sh[s].a.ncols, (long long)tcsr_nnz(&sh[s].a), g_pass - p0, g_fail - f0);
    }
    CUDA_OK(cudaStreamDestroy(stream));
    printf("device matrices created: %ld in %.1f s\n", created, (twall_ms() - t0) / 1e3);
  } else printf("no CUDA device: device products skipped\n");
  for (int s = 0; s < ns; s++) tcsr_free(&sh[s].a);
  printf("test_engine_cuda: %ld passed, %ld failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
