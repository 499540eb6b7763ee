/*
  spmv - stand-alone GPU SpMV benchmark of petsc-ellr's engine against cuSPARSE (PETSc-free).

  For each matrix: cuSPARSE CSR (ALG1, ALG2), cuSPARSE sliced ELL (slice 32), and the engine's
  formats of g_engine_formats (ELLR-T: plain ELLPACK-R, tuned T and BS; PELLR: rows sorted by length,
  slices of 32, tuned); every result checked against a host CSR reference before timing; time =
  median of >= 30 products timed with CUDA events after warm-up.  Set-up is what a user pays from a host CSR:
  the engine's create + tune; cuSPARSE CSR's allocations, pageable copies, descriptor, buffer and preprocess
  (aijcusparse's path).  The engine's values refresh and products with host vectors (ellr_cuda_mult_mixed) are timed
  and checked too.  GB/s-eff = (12 nnz + 4 (n+1) + 8 ncols + 8 n) / time for every format; bytes/nnz =
  the bytes of the matrix storage the format reads (cuSPARSE CSR: 12 nnz + 4 (n+1); cuSPARSE SELL: its
  arrays; the engine: its plan's padded values, columns, row lengths, permutation and slice offsets) / nnz.
  x best cuSPARSE = best cuSPARSE time of the matrix / this time; x CSR ALG1 = CSR ALG1's time / this time.
  A device-to-device copy gives the bandwidth ceiling.

  Generated matrices: 3d7 N=160, 3d27 N=100, 2d5 N=2048, powerlaw 2M (Pareto xmin 13.5, alpha 2,
  longest row 10048), power laws of other skews (--powerlaw), short rows with scattered columns
  (--shortrow-*, circuit-like), 3d7 N=48 (fits in L2), 3d7 N=32 (values of 1-4 MB); then the Matrix Market files of --matrices.

  usage: spmv [--matrices DIR] [--only a,b,...] [--quick] [--sweep] [--geometry] [--gpu-plan] [--cols-every-entry] [--reps N] [--csv FILE] [--list]
              [--powerlaw LIST] [--powerlaw-rows N] [--powerlaw-xmin X] [--shortrow-rows N] [--shortrow-len MIN,MAX]
    --matrices DIR        also every *.mtx / *.mtx.gz in DIR
    --only LIST           matrix names to run (substring match), e.g. --only 3d7,powerlaw
    --gpu-plan            plan every matrix on the GPU (small ones are planned on the host otherwise)
    --cols-every-entry    the host plan's column packing reads every entry (as if columns were not sorted in rows)
    --quick               smaller generated matrices (1/10 of the rows of the power laws and short rows),
                          fewer repetitions
    --sweep               also time ELLR-T / PELLR variants (T, BS, kernel options): tuning notes
    --geometry            also time ellrt's and pellr's layouts (own order / sorted, slices of 32) at every
                          one T of 1..32, and at other slice heights with automatic T, each tuned by the model,
                          every matrix: the data the automatic T and slice height are read from ("sweep" rows)
    --reps N              timed products per median (at least 30; default 50, 30 with --quick)
    --csv FILE            CSV output (default spmv.csv)
    --list                only generate / read the matrices and print their sizes (no GPU needed)
    --powerlaw LIST       skews alpha[:maxlen] of the extra power-law matrices, "powerlaw a=ALPHA 2M"
                          (default "1.6,3.0"; maxlen, the longest row, default 50000; "" or none: no extra ones)
    --powerlaw-rows N     their rows (default 2000000)
    --powerlaw-xmin X     their Pareto xmin, the shortest row (default 13.5)
    --shortrow-rows N     rows of "shortrow-scattered 2M" (default 2000000; 0: left out)
    --shortrow-len A,B    its off-diagonal entries per row, uniform in [A, B] besides the diagonal (default 2,6)
  CSV columns: device, copy_gbs, matrix, format, params, time_ms, gflops, gbs_eff, pct_copy, storage_bytes
  (GPU memory held, tuning scratch and cuSPARSE's buffer included), ratio_best_cusparse, setup_ms, rel_err,
  bytes_per_nnz, vs_csr.
*/
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <dirent.h>
#include <functional>
#include <string>
#include <vector>

#include "bench_median.h"
#include "ellr_cuda.h"
#include "ellr_cuda_internal.cuh"
#include "ellr_testlib.h"
#include "spmv_matrices.h"

#define CK(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(3); \
    } \
  } while (0)
#define CS(call) \
  do { \
    cusparseStatus_t s_ = (call); \
    if (s_ != CUSPARSE_STATUS_SUCCESS) { \
      fprintf(stderr, "cuSPARSE error %s at %s:%d: %s\n", #call, __FILE__, __LINE__, cusparseGetErrorString(s_)); \
      exit(3); \
    } \
  } while (0)

static int    g_reps = 50;
static FILE  *g_csv;
static double g_copy_gbs;
static int    g_paths_bad; /* refresh / host-vector products with a wrong result */

struct result {
  std::string matrix, format, params;
  double      ms, gflops, gbs, setup_ms, err;
  size_t      bytes;
  double      ratio;
  double      bpn;    /* bytes of the matrix storage the format reads, per nonzero */
  double      vs_csr; /* cuSPARSE CSR ALG1's time / this time */
};
static std::vector<result> g_results;

struct bench_matrix {
  std::string name;
  tcsr        a;
};

/* Median time of one product over g_reps runs (bench_median.h). */
template <class F>
static double time_median(F &&launch)
{
  return bench_median_ms(g_reps, 5, launch);
}

static double eff_bytes(const tcsr *a) { return 12.0 * tcsr_nnz(a) + 4.0 * (a->nrows + 1) + 8.0 * a->ncols + 8.0 * a->nrows; }

static double check_y(const double *dy, const double *ref, int32_t n)
{
  std::vector<double> h(n + 1);
  CK(cudaMemcpy(h.data(), dy, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
  return trel_err(h.data(), ref, n);
}

static void poison(double *dy, int32_t n) { CK(cudaMemset(dy, 0xff, (size_t)(n ? n : 1) * sizeof(double))); } /* 0xff.. is a NaN */

/* bytes: GPU memory held; read_bytes: of which the matrix storage a product reads (bytes/nnz) */
static void record(const bench_matrix &m, const char *fmt, const std::string &params, double ms, size_t bytes, size_t read_bytes, double setup_ms, double err)
{
  result r;
  r.matrix   = m.name;
  r.format   = fmt;
  r.params   = params;
  r.ms       = ms;
  r.gflops   = ms > 0 ? 2.0 * tcsr_nnz(&m.a) / (ms * 1e6) : 0;
  r.gbs      = ms > 0 ? eff_bytes(&m.a) / (ms * 1e6) : 0;
  r.bytes    = bytes;
  r.setup_ms = setup_ms;
  r.err      = err;
  r.ratio    = 0;
  r.bpn      = tcsr_nnz(&m.a) ? (double)read_bytes / tcsr_nnz(&m.a) : 0;
  r.vs_csr   = 0;
  g_results.push_back(r);
  printf("  %-22s %-44s %9.4f ms %8.1f GF/s %8.1f GB/s-eff %9.1f MB %6.1f B/nnz setup %8.3f ms err %.1e\n", fmt, params.c_str(), ms, r.gflops, r.gbs, bytes / 1e6, r.bpn, setup_ms, err);
  fflush(stdout);
}

/* ---- cuSPARSE baselines ---------------------------------------------------------------------- */
static void bench_cusparse(cusparseHandle_t h, const bench_matrix &m, const double *dx, double *dy, const double *ref)
{
  const tcsr   *a   = &m.a;
  const int64_t nnz = tcsr_nnz(a);
  int32_t      *drp, *dci;
  double       *dv;
  /* set-up as aijcusparse pays it: allocations, pageable copies from the host CSR, descriptor, buffer, preprocess */
  const double  t_up = twall_ms();
  CK(cudaMalloc(&drp, ((size_t)a->nrows + 1) * 4));
  CK(cudaMalloc(&dci, (size_t)(nnz ? nnz : 1) * 4));
  CK(cudaMalloc(&dv, (size_t)(nnz ? nnz : 1) * 8));
  CK(cudaMemcpy(drp, a->rowptr, ((size_t)a->nrows + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dci, a->colidx, (size_t)nnz * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, a->val, (size_t)nnz * 8, cudaMemcpyHostToDevice));
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y;
  CS(cusparseCreateCsr(&A, a->nrows, a->ncols, nnz, drp, dci, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  const double upload_ms = twall_ms() - t_up;
  CS(cusparseCreateDnVec(&X, a->ncols, (void *)dx, CUDA_R_64F));
  CS(cusparseCreateDnVec(&Y, a->nrows, dy, CUDA_R_64F));
  const double      one = 1.0, zero = 0.0;
  const size_t      csr_bytes = (size_t)nnz * 12 + ((size_t)a->nrows + 1) * 4;
  cusparseSpMVAlg_t algs[2]   = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};
  const char       *names[2]  = {"cuSPARSE CSR ALG1", "cuSPARSE CSR ALG2"};
  for (int k = 0; k < 2; k++) {
    size_t bsz = 0;
    void  *buf = NULL;
    double t0  = twall_ms();
    CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_64F, algs[k], &bsz));
    CK(cudaMalloc(&buf, bsz ? bsz : 1));
    CS(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_64F, algs[k], buf));
    CK(cudaDeviceSynchronize());
    double setup = upload_ms + twall_ms() - t0;
    poison(dy, a->nrows);
    CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_64F, algs[k], buf));
    double err = check_y(dy, ref, a->nrows);
    double ms  = time_median([&] { cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_64F, algs[k], buf); });
    record(m, names[k], "", ms, csr_bytes + bsz, csr_bytes, setup, err);
    CK(cudaFree(buf));
  }
  CS(cusparseDestroySpMat(A));
  CK(cudaFree(drp));
  CK(cudaFree(dci));
  CK(cudaFree(dv));

  /* sliced ELL, slices of 32 rows, natural order: the engine's host layout with T = 1, padding -1 */
  ellr_params p = {1, 0, 32, 0, 0, 0.0, 0, 0, ELLR_FAMILY_SLICED, 32, ELLR_LONG_ROWS_NONE, 0}; /* every row in the slices */
  ellr_matrix em;
  ellr_csr    av = tcsr_view(a);
  if (ellr_plan_create(&av, &p, &em.plan) == ELLR_OK) {
    const int64_t ns = em.plan.stats.nstored;
    ellr_plan_destroy(&em.plan);
    size_t freeb, tot;
    CK(cudaMemGetInfo(&freeb, &tot));
    if (ns >= INT32_MAX || (size_t)ns * 12 + (1u << 28) > freeb) {
      printf("  %-22s skipped: %lld stored entries (%.1f GB)\n", "cuSPARSE SELL C=32", (long long)ns, ns * 12e-9);
      CS(cusparseDestroyDnVec(X));
      CS(cusparseDestroyDnVec(Y));
      return;
    }
    if (ellr_matrix_create(&av, &p, &em) == ELLR_OK) {
      const int32_t        nsl = em.plan.nslices;
      std::vector<int32_t> off(nsl + 1);
      for (int32_t s = 0; s <= nsl; s++) off[s] = (int32_t)em.plan.slice_start[s];
      /* 32-bit column indices in the layout's order, padding -1 as cuSPARSE wants it */
      std::vector<int32_t> col((size_t)ns + 1, -1);
      for (int32_t sl = 0; sl < nsl; sl++) {
        const int32_t width = (int32_t)((em.plan.slice_start[sl + 1] - em.plan.slice_start[sl]) / 32);
        for (int32_t i = sl * 32; i < (sl + 1) * 32; i++)
          for (int32_t k = 0; k < width; k++) col[ellr_pos(&em.plan, i, k)] = ellr_matrix_col(&em, i, ellr_pos(&em.plan, i, k));
      }
      int32_t *doff, *dcol;
      double  *dval;
      CK(cudaMalloc(&doff, ((size_t)nsl + 1) * 4));
      CK(cudaMalloc(&dcol, (size_t)(ns ? ns : 1) * 4));
      CK(cudaMalloc(&dval, (size_t)(ns ? ns : 1) * 8));
      CK(cudaMemcpy(doff, off.data(), ((size_t)nsl + 1) * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dcol, col.data(), (size_t)ns * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dval, em.val, (size_t)ns * 8, cudaMemcpyHostToDevice));
      cusparseSpMatDescr_t S;
      CS(cusparseCreateSlicedEll(&S, a->nrows, a->ncols, nnz, ns, 32, doff, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      size_t bsz = 0;
      void  *buf = NULL;
      CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, S, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_SELL_ALG1, &bsz));
      CK(cudaMalloc(&buf, bsz ? bsz : 1));
      poison(dy, a->nrows);
      CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, S, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_SELL_ALG1, buf));
      double err = check_y(dy, ref, a->nrows);
      double ms  = time_median([&] { cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, S, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_SELL_ALG1, buf); });
      char   prm[64];
      snprintf(prm, sizeof(prm), "fill %.2f", em.plan.stats.fill);
      const size_t sell_bytes = (size_t)ns * 12 + ((size_t)nsl + 1) * 4; /* columns and values, padding included; slice offsets */
      record(m, "cuSPARSE SELL C=32", prm, ms, sell_bytes + bsz, sell_bytes, 0, err);
      CS(cusparseDestroySpMat(S));
      CK(cudaFree(buf));
      CK(cudaFree(doff));
      CK(cudaFree(dcol));
      CK(cudaFree(dval));
      ellr_matrix_destroy(&em);
    }
  }
  CS(cusparseDestroyDnVec(X));
  CS(cusparseDestroyDnVec(Y));
}

/* ---- the engine ----------------------------------------------------------------------------- */
static std::string describe(ellr_cuda_matrix *d)
{
  ellr_cuda_info  info;
  ellr_cuda_kopts ko;
  ellr_cuda_get_info(d, &info);
  ellr_cuda_get_kopts(d, &ko);
  char b[320];
  if (info.family != ELLR_FAMILY_SLICED) {
    snprintf(b, sizeof(b), "%s T=%d%s%s", info.family == ELLR_FAMILY_IPCSR ? "ipcsr" : "csr-vector", info.csr_T, info.family == ELLR_FAMILY_IPCSR ? (" blocks=" + std::to_string(info.csr_blocks)).c_str() : "", info.family_ms[0] > 0 ? " (auto)" : "");
    return b;
  }
  snprintf(b, sizeof(b), "T=%s%d BS=%d C=%d %s %s%s%s fill %.2f idx16 %d/%d long %d rows %lld entries", info.plan->per_slice_T ? "per slice, max " : "", info.threads_per_row, info.block_size, info.plan->C, ko.kernel == 2 ? "chunks" : "rows", ko.uselen ? "len" : "width", ko.loads ? " ldcs" : "",
           ko.kernel == 2 ? (ko.chunk == 2147483647 ? " J=inf" : (" J=" + std::to_string(ko.chunk)).c_str()) : "", info.plan->stats.fill, info.plan->stats.packed_slices, info.plan->nslices, info.plan->nlong, (long long)info.plan->stats.long_entries);
  return b;
}

/* Times the current settings of d; returns ms (negative on a wrong result). */
static double time_engine(ellr_cuda_matrix *d, const tcsr *a, const double *dx, double *dy, const double *ref, double *err)
{
  poison(dy, a->nrows);
  if (ellr_cuda_mult(d, dx, NULL, dy, 0, NULL)) {
    fprintf(stderr, "ellr_cuda_mult: %s\n", ellr_last_error());
    exit(3);
  }
  CK(cudaDeviceSynchronize());
  *err = check_y(dy, ref, a->nrows);
  return time_median([&] { ellr_cuda_mult(d, dx, NULL, dy, 0, NULL); });
}

/* Median wall time of f() followed by a synchronize of s (n runs after one warm-up). */
template <class F>
static double wall_median(cudaStream_t s, int n, F &&f)
{
  std::vector<double> t(n);
  f();
  CK(cudaStreamSynchronize(s));
  for (int r = 0; r < n; r++) {
    const double t0 = twall_ms();
    f();
    CK(cudaStreamSynchronize(s));
    t[r] = twall_ms() - t0;
  }
  std::sort(t.begin(), t.end());
  return t[n / 2];
}

/* The binding's other paths, on a non-blocking stream as PETSc's: a values refresh (same values, so
   the product stays checkable) and products with host vectors (x on the host / y on the device, as
   an MPI off-diagonal block with its ghost values; x on the device / y on the host; both on the
   host).  Wall time including the synchronize; each result checked. */
static void bench_paths(ellr_cuda_matrix *d, const tcsr *a, const double *hx, const double *dx, double *dy, const double *ref)
{
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ellr_csr            av = tcsr_view(a);
  std::vector<double> hy((size_t)a->nrows + 1);
  const int           n  = 9;
  double              err[4], upd0[2];
  auto                refresh = [&] {
    if (ellr_cuda_update_values(d, &av, s)) {
      fprintf(stderr, "ellr_cuda_update_values: %s\n", ellr_last_error());
      exit(3);
    }
  };
  for (int r = 0; r < 2; r++) { /* the first allocates the refresh scratch; the second may page-lock the values */
    const double t0 = twall_ms();
    refresh();
    CK(cudaStreamSynchronize(s));
    upd0[r] = twall_ms() - t0;
  }
  const double   upd = wall_median(s, n, refresh);
  ellr_cuda_info info;
  ellr_cuda_get_info(d, &info);
  auto mixed = [&](int xh, int yh) {
    if (ellr_cuda_mult_mixed(d, xh ? hx : dx, xh, NULL, 0, yh ? hy.data() : dy, yh, 0, s)) {
      fprintf(stderr, "ellr_cuda_mult_mixed: %s\n", ellr_last_error());
      exit(3);
    }
  };
  double ms[3];
  for (int k = 0; k < 3; k++) {
    const int xh = k != 1, yh = k != 0;
    poison(dy, a->nrows);
    std::fill(hy.begin(), hy.end(), NAN);
    CK(cudaDeviceSynchronize()); /* the poison (default stream) lands before s's products */
    ms[k] = wall_median(s, n, [&] { mixed(xh, yh); });
    if (yh) err[k + 1] = trel_err(hy.data(), ref, a->nrows);
    else {
      CK(cudaStreamSynchronize(s));
      err[k + 1] = check_y(dy, ref, a->nrows);
    }
  }
  poison(dy, a->nrows);
  CK(cudaDeviceSynchronize());
  ellr_cuda_mult(d, dx, NULL, dy, 0, s);
  CK(cudaStreamSynchronize(s));
  err[0]         = check_y(dy, ref, a->nrows);
  const double e = std::max(std::max(err[0], err[1]), std::max(err[2], err[3]));
  printf("  %-22s  | refresh %.3f ms (first %.3f, second %.3f%s); host vectors: x host/y device %.3f, x device/y host %.3f, both host %.3f ms (wall, median of %d); err %.1e%s\n", "", upd, upd0[0], upd0[1], info.refresh_pin_ms > 0 ? " with the values page-locked" : "", ms[0], ms[1], ms[2], n, e, e > 1e-12 ? " FAILED" : "");
  if (e > 1e-12) g_paths_bad++;
  CK(cudaStreamDestroy(s));
}

/* The model's pick against the exhaustive search's, per matrix and format (how often it comes within 3%). */
struct tune_cmp {
  std::string matrix, format, model, exhaustive;
  double      model_ms, exhaustive_ms, model_setup, exhaustive_setup;
};
static std::vector<tune_cmp> g_tune;

/* The engine's formats, one column each of the table: adding a format is one line here.
   p: the parameters (tune is set per run: the model, and the exhaustive search where asked);
   kopts: kernel options forced on create and tuning (ellr_cuda_set_default_kopts), NULL = automatic;
   exhaustive: also tuned by the exhaustive search, for the model-against-exhaustive table. */
struct engine_format {
  const char            *name;
  ellr_params            p;
  const ellr_cuda_kopts *kopts;
  int                    exhaustive;
};
static const engine_format g_engine_formats[] = {
  /* name     T  BS  C   sort window max_fill tune pin_host (page-locked, as the PETSc binding by default)
     max_fill 20: refuse storage of more than 20x CSR's bytes (plain ELLPACK-R of skewed rows) */
  {"ELLR-T", {0, 0, 0, 0, 0, 20.0, 0, 1}, NULL, 1}, /* plain ELLPACK-R (one slice: 16-bit column offsets only under 65535 columns) */
  {"ELLR-T C=32", {0, 0, 32, 0, 0, 20.0, 0, 1}, NULL, 0},                         /* slices of 32 rows in their own order, 16-bit offsets where they fit */
  {"ELLR-T C=32 idx32", {0, 0, 32, 0, 0, 20.0, 0, 1, ELLR_FAMILY_SLICED, 32}, NULL, 0}, /* the same with 32-bit indices everywhere */
  {"PELLR", {0, 0, 32, 1, 0, 20.0, 0, 1}, NULL, 1}, /* rows sorted by length, slices of 32 */
  {"CSR-vector", {0, 0, 32, 1, 0, 0.0, 0, 1, ELLR_FAMILY_CSR_VECTOR}, NULL, 0}, /* adaptive CSR-vector on the CSR arrays */
  {"IPCSR", {0, 0, 32, 1, 0, 0.0, 0, 1, ELLR_FAMILY_IPCSR}, NULL, 0},           /* IPCSR on the CSR arrays */
  {"PELLR sigma auto", {0, 0, 32, 1, ELLR_SORT_WINDOW_AUTO, 20.0, 0, 1}, NULL, 0}, /* the sort window picked from the matrix */
  {"pellr auto", {0, 0, 32, 1, ELLR_SORT_WINDOW_AUTO, 8.0, 0, 1, ELLR_FAMILY_AUTO}, NULL, 0}, /* what -mat_type pellr picks */
  /* the long-row path (on by default above, automatic threshold, segmented join) against none, and the atomic join */
  {"ELLR-T C=32 no long", {0, 0, 32, 0, 0, 20.0, 0, 1, ELLR_FAMILY_SLICED, 0, ELLR_LONG_ROWS_NONE, 0}, NULL, 0},
  {"PELLR no long", {0, 0, 32, 1, 0, 20.0, 0, 1, ELLR_FAMILY_SLICED, 0, ELLR_LONG_ROWS_NONE, 0}, NULL, 0},
  {"PELLR long atomic", {0, 0, 32, 1, 0, 20.0, 0, 1, ELLR_FAMILY_SLICED, 0, 0, ELLR_LONG_JOIN_ATOMIC}, NULL, 0},
  /* each slice's own T, from its longest row (-mat_ellr_threads_per_row -1), where asked: the formats above take it where the
     automatic rule does (ellr.h) */
  {"ELLR-T C=32 T/slice", {ELLR_THREADS_PER_SLICE, 0, 32, 0, 0, 20.0, 0, 1}, NULL, 0},
  {"PELLR T/slice", {ELLR_THREADS_PER_SLICE, 0, 32, 1, 0, 20.0, 0, 1}, NULL, 0},
};

/* The bytes of storage a product reads: the padded layout, or the CSR arrays for the CSR families. */
static size_t engine_bytes(const ellr_cuda_info &info, const tcsr *a)
{
  if (info.family == ELLR_FAMILY_SLICED) return ellr_stored_bytes(&info.plan->stats);
  return (size_t)tcsr_nnz(a) * 12 + ((size_t)a->nrows + 1) * 4 + (info.family == ELLR_FAMILY_IPCSR ? ((size_t)info.csr_blocks + 1) * 4 : 0);
}

static int g_cols_every_entry; /* --cols-every-entry */
static double bench_engine(const char *fmt, const bench_matrix &m, ellr_params p, const ellr_cuda_kopts *kopts, const double *hx, const double *dx, double *dy, const double *ref, int sweep, int paths = 1, std::string *chose = NULL,
                           double *setup_ms = NULL)
{
  const tcsr       *a  = &m.a;
  ellr_csr          av = tcsr_view(a);
  ellr_cuda_matrix *d  = NULL;
  if (g_cols_every_entry) av.cols_sorted = 0; /* the host plan's column pass over every entry, as before the shortcut */
  ellr_cuda_set_default_kopts(kopts); /* create and tune pick the kernel within these; NULL: all automatic */
  double            t0 = twall_ms();
  ellr_status       st = ellr_cuda_create(&av, &p, NULL, &d);
  const double      create_ms = twall_ms() - t0;
  if (!st) st = ellr_cuda_tune(d, &av, NULL);
  double            setup = twall_ms() - t0;
  ellr_cuda_set_default_kopts(NULL); /* the next format starts from automatic options */
  if (st && d) {
    ellr_cuda_destroy(d);
    d = NULL;
  }
  if (st) {
    printf("  %-22s refused: %s\n", fmt, ellr_last_error());
    result r = {m.name, fmt, std::string("refused: ") + ellr_last_error(), 0, 0, 0, 0, 0, 0, 0};
    g_results.push_back(r);
    return 0;
  }
  ellr_cuda_info info;
  ellr_cuda_get_info(d, &info);
  double err, ms = time_engine(d, a, dx, dy, ref, &err);
  char   extra[400];
  snprintf(extra, sizeof(extra), " | create %.3f ms (page-lock %.3f, upload %.3f at %.1f GB/s, plan on the %s %.3f = order %.3f + geometry %.3f + allocation %.3f, upload wait %.3f, fill %.3f), tune %.3f ms (%d products)", create_ms, info.pin_ms, info.upload_ms, info.upload_ms > 0 ? info.upload_bytes / info.upload_ms / 1e6 : 0.0, info.plan_on_host ? "host" : "GPU", info.plan_ms, info.plan_parts_ms[0], info.plan_parts_ms[1], info.plan_parts_ms[2], info.upload_wait_ms, info.fill_ms, info.tune_ms, info.tune_products);
  record(m, fmt, describe(d), ms, info.device_bytes, engine_bytes(info, a), setup, err);
  printf("  %-22s %s\n", "", extra);
  if (chose) *chose = describe(d);
  if (setup_ms) *setup_ms = setup;
  if (paths) bench_paths(d, a, hx, dx, dy, ref);
  ellr_cuda_destroy(d);
  if (!sweep) return ms;

  /* variants for the tuning notes: T x kernel options at BS 128 (T = 1, 2, 4) */
  static const int Ts[] = {1, 2, 4};
  for (int it = 0; it < 3; it++) {
    ellr_params q     = p;
    q.threads_per_row = Ts[it];
    q.block_size      = 128;
    if (ellr_cuda_create(&av, &q, NULL, &d)) continue;
    std::vector<ellr_cuda_kopts> kv = {{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 0, 1}, {1, 1, 0, 1}};
    if (p.slice_height == 32 && m.name.find("powerlaw") != std::string::npos) {
      kv.clear();
      for (int J : {64, 128, 256, 512, 1024}) {
        kv.push_back({2, 0, J, 1});
        kv.push_back({2, 1, J, 1});
      }
      kv.push_back({2, 0, 256, 0});
    }
    for (size_t k = 0; k < kv.size(); k++) {
      if (ellr_cuda_set_kopts(d, &kv[k])) continue;
      double ms2 = time_engine(d, a, dx, dy, ref, &err);
      ellr_cuda_get_info(d, &info);
      record(m, (std::string(fmt) + " sweep").c_str(), describe(d), ms2, info.device_bytes, ellr_stored_bytes(&info.plan->stats), 0, err);
    }
    ellr_cuda_destroy(d);
  }
  return ms;
}

/* f with the model (the default) and, where f asks, with the exhaustive search, for the comparison table */
static void bench_engine_tuned(const engine_format &f, const bench_matrix &m, const double *hx, const double *dx, double *dy, const double *ref, int sweep)
{
  tune_cmp    c;
  ellr_params p = f.p;
  c.matrix      = m.name;
  c.format      = f.name;
  p.tune        = ELLR_TUNE_MODEL;
  c.model_ms    = bench_engine(f.name, m, p, f.kopts, hx, dx, dy, ref, sweep, 1, &c.model, &c.model_setup);
  if (!f.exhaustive) return;
  p.tune          = ELLR_TUNE_EXHAUSTIVE;
  c.exhaustive_ms = bench_engine((std::string(f.name) + " exhaustive").c_str(), m, p, f.kopts, hx, dx, dy, ref, 0, 0, &c.exhaustive, &c.exhaustive_setup);
  if (c.model_ms > 0 && c.exhaustive_ms > 0) g_tune.push_back(c);
}

static double bench_copy(size_t bytes)
{
  char *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  double ms = time_median([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); });
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 2.0 * bytes / (ms * 1e6);
}

static void print_matrix(const bench_matrix &m)
{
  const tcsr *a = &m.a;
  int32_t     maxlen = 0;
  for (int32_t r = 0; r < a->nrows; r++) maxlen = std::max(maxlen, a->rowptr[r + 1] - a->rowptr[r]);
  printf("\n%s: %d x %d, nnz %lld, mean %.1f, longest row %d, CSR %.1f MB, x %.1f MB\n", m.name.c_str(), a->nrows, a->ncols, (long long)tcsr_nnz(a), a->nrows ? (double)tcsr_nnz(a) / a->nrows : 0.0, maxlen, (12.0 * tcsr_nnz(a) + 4.0 * (a->nrows + 1)) / 1e6, 8e-6 * a->ncols);
}

/* "dir/web-NotreDame.mtx.gz" -> "web-NotreDame" */
static std::string matrix_name(const std::string &path)
{
  std::string n = path.substr(path.rfind('/') + 1);
  return n.substr(0, n.find(".mtx"));
}

/* --geometry: the sliced layouts in their own order (ellrt) and sorted (pellr) at each one T, and at other slice
   heights with the automatic T; model tuning, as a user gets it ("sweep" rows: out of the table and the plot). */
static int g_geometry;
static void bench_geometry(const bench_matrix &m, const double *hx, const double *dx, double *dy, const double *ref)
{
  for (int sort = 0; sort <= 1; sort++) {
    const char *lay = sort ? "PELLR" : "ELLR-T";
    for (int T = 1; T <= ELLR_MAX_THREADS_PER_ROW; T *= 2) {
      ellr_params p = {T, 0, 32, sort, 0, 20.0, ELLR_TUNE_MODEL, 1};
      char        name[64];
      snprintf(name, sizeof(name), "%s C=32 T=%d sweep", lay, T);
      bench_engine(name, m, p, NULL, hx, dx, dy, ref, 0, 0);
    }
    for (int C : {8, 16, 64, 128, 256}) {
      ellr_params p = {0, 0, C, sort, 0, 20.0, ELLR_TUNE_MODEL, 1};
      char        name[64];
      snprintf(name, sizeof(name), "%s C=%d sweep", lay, C);
      bench_engine(name, m, p, NULL, hx, dx, dy, ref, 0, 0);
    }
  }
}

static void run_matrix(cusparseHandle_t h, bench_matrix &m, int sweep)
{
  const tcsr *a = &m.a;
  print_matrix(m);
  std::vector<double> x(a->ncols + 1), ref(a->nrows + 1);
  tfill_random(x.data(), a->ncols, 4242);
  tcsr_spmv(a, x.data(), NULL, ref.data());
  double *dx, *dy;
  CK(cudaMalloc(&dx, ((size_t)a->ncols + 1) * 8));
  CK(cudaMalloc(&dy, ((size_t)a->nrows + 1) * 8));
  CK(cudaMemcpy(dx, x.data(), (size_t)a->ncols * 8, cudaMemcpyHostToDevice));
  const size_t first = g_results.size();
  bench_cusparse(h, m, dx, dy, ref.data());
  for (const engine_format &f : g_engine_formats) bench_engine_tuned(f, m, x.data(), dx, dy, ref.data(), sweep);
  if (g_geometry) bench_geometry(m, x.data(), dx, dy, ref.data());
  double best = 1e30, csr = 0;
  for (size_t k = first; k < g_results.size(); k++) {
    if (g_results[k].format.rfind("cuSPARSE", 0) == 0 && g_results[k].ms > 0) best = std::min(best, g_results[k].ms);
    if (g_results[k].format == "cuSPARSE CSR ALG1" && g_results[k].ms > 0) csr = g_results[k].ms;
  }
  for (size_t k = first; k < g_results.size(); k++)
    if (g_results[k].ms > 0) {
      g_results[k].ratio  = best < 1e30 ? best / g_results[k].ms : 0;
      g_results[k].vs_csr = csr / g_results[k].ms;
    }
  CK(cudaFree(dx));
  CK(cudaFree(dy));
}

static int wanted(const std::string &name, const char *only)
{
  if (!only) return 1;
  std::string list = only;
  size_t      pos  = 0;
  while (pos <= list.size()) {
    size_t      e   = list.find(',', pos);
    std::string tok = list.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    if (!tok.empty() && name.find(tok) != std::string::npos) return 1;
    if (e == std::string::npos) break;
    pos = e + 1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  const char *dir = NULL, *only = NULL, *csv = "spmv.csv", *plist = "1.6,3.0";
  int         quick = 0, sweep = 0, list = 0, bad_arg = 0;
  long        prows = 2000000, srows = 2000000, smin = 2, smax = 6;
  double      pxmin = SPMV_POWERLAW_XMIN;
  /* a row count: 1 .. INT32_MAX - 1 (0 too where allowed: that matrix left out) */
  auto rows_arg = [&](const char *v, long lo, long *out) {
    char *e;
    long  n = strtol(v, &e, 10);
    if (e == v || *e || n < lo || n >= INT32_MAX) bad_arg = 1;
    else *out = n;
  };
  for (int i = 1; i < argc && !bad_arg; i++) {
    if (!strcmp(argv[i], "--matrices") && i + 1 < argc) dir = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::max(30, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--sweep")) sweep = 1;
    else if (!strcmp(argv[i], "--geometry")) g_geometry = 1;
    else if (!strcmp(argv[i], "--cols-every-entry")) g_cols_every_entry = 1; /* the host plan ignores that AIJ's columns are sorted */
    else if (!strcmp(argv[i], "--list")) list = 1;
    else if (!strcmp(argv[i], "--gpu-plan")) ellr_cuda_set_host_plan_rows(0); /* every plan on the GPU, small blocks too */
    else if (!strcmp(argv[i], "--powerlaw") && i + 1 < argc) plist = argv[++i];
    else if (!strcmp(argv[i], "--powerlaw-rows") && i + 1 < argc) rows_arg(argv[++i], 1, &prows);
    else if (!strcmp(argv[i], "--shortrow-rows") && i + 1 < argc) rows_arg(argv[++i], 0, &srows);
    else if (!strcmp(argv[i], "--powerlaw-xmin") && i + 1 < argc) {
      char *e;
      pxmin = strtod(argv[++i], &e);
      if (e == argv[i] || *e || !(pxmin >= 1.0 && pxmin <= 1e6)) bad_arg = 1;
    } else if (!strcmp(argv[i], "--shortrow-len") && i + 1 < argc) {
      /* at most 63 off-diagonal entries: these are short rows (the generator's row buffer) */
      if (sscanf(argv[++i], "%ld,%ld", &smin, &smax) != 2 || smin < 0 || smax < smin || smax > 63) bad_arg = 1;
    } else bad_arg = 1;
  }
  spmv_powerlaw_spec pls[16];
  char               perr[200] = "";
  const int          npl       = bad_arg || !strcmp(plist, "none") ? 0 : spmv_parse_powerlaw(plist, pxmin, pls, 16, perr, sizeof(perr));
  if (bad_arg || npl < 0) {
    if (npl < 0) printf("%s\n", perr);
    printf("usage: %s [--matrices DIR] [--only a,b] [--quick] [--sweep] [--geometry] [--gpu-plan] [--cols-every-entry] [--reps N] [--csv FILE] [--list]\n"
           "          [--powerlaw \"ALPHA[:MAXLEN],...\"] [--powerlaw-rows N] [--powerlaw-xmin X] [--shortrow-rows N] [--shortrow-len MIN,MAX]\n",
           argv[0]);
    return 1;
  }
  if (quick) g_reps = 30;

  /* generated matrices, in this order: each a name and its generator */
  struct gen {
    std::string                 name;
    std::function<int(tcsr *)> make;
  };
  std::vector<gen> gens;
  auto             stencil = [&](const char *name, int kind, int N, int Nq) {
    const int n = quick ? Nq : N;
    gens.push_back({name, [=](tcsr *a) { return kind == 0 ? tcsr_stencil_3d7(a, n) : kind == 1 ? tcsr_stencil_3d27(a, n) : tcsr_stencil_2d5(a, n); }});
  };
  stencil("3d7 N=160", 0, 160, 64);
  stencil("3d27 N=100", 1, 100, 40);
  stencil("2d5 N=2048", 2, 2048, 512);
  {
    const int32_t n = quick ? 200000 : 2000000;
    gens.push_back({"powerlaw 2M", [=](tcsr *a) { return tcsr_powerlaw(a, n, n, 13.5, 2.0, 10048, 2026); }});
  }
  char rl[32];
  for (int k = 0; k < npl; k++) {
    /* the name says the skew and the rows asked for (--quick: a tenth of them, and " (quick)" added) */
    const spmv_powerlaw_spec sp = pls[k];
    const int32_t            n  = (int32_t)std::max(1L, quick ? prows / 10 : prows);
    char                     name[128];
    spmv_rows_label(prows, rl, sizeof(rl));
    snprintf(name, sizeof(name), "powerlaw a=%g %s", sp.alpha, rl);
    if (sp.xmin != SPMV_POWERLAW_XMIN) snprintf(name + strlen(name), sizeof(name) - strlen(name), " xmin=%g", sp.xmin);
    if (sp.maxlen != SPMV_POWERLAW_MAXLEN) snprintf(name + strlen(name), sizeof(name) - strlen(name), " max=%d", sp.maxlen);
    /* the seed follows the skew, not its place in the list: the same alpha gives the same matrix */
    const uint64_t seed = 2027 + (uint64_t)llround(sp.alpha * 1000);
    gens.push_back({name, [=](tcsr *a) { return spmv_gen_powerlaw(a, n, &sp, seed); }});
  }
  if (srows > 0) {
    const int32_t n = (int32_t)std::max(1L, quick ? srows / 10 : srows);
    char          name[128];
    spmv_rows_label(srows, rl, sizeof(rl));
    snprintf(name, sizeof(name), "shortrow-scattered %s", rl);
    if (smin != 2 || smax != 6) snprintf(name + strlen(name), sizeof(name) - strlen(name), " len=%ld-%ld", smin, smax);
    const int lo = (int)smin, hi = (int)smax;
    gens.push_back({name, [=](tcsr *a) { return spmv_gen_shortrow_scattered(a, n, lo, hi, 31337); }});
  }
  stencil("3d7 N=48 (L2)", 0, 48, 48);
  stencil("3d7 N=32", 0, 32, 32); /* 32768 rows, 1.8 MB of values: planned on the GPU, values page-locked at the second refresh */

  std::vector<std::string> files;
  if (dir) {
    DIR *dd = opendir(dir);
    if (!dd) printf("cannot open %s\n", dir);
    else {
      struct dirent *e;
      while ((e = readdir(dd))) {
        std::string f = e->d_name;
        if (f.size() > 4 && (f.find(".mtx") != std::string::npos)) files.push_back(std::string(dir) + "/" + f);
      }
      closedir(dd);
      std::sort(files.begin(), files.end());
    }
    printf("%zu matrix files in %s\n", files.size(), dir);
  }
  if (list) { /* the matrices only, no GPU: what a run would time */
    for (auto &g : gens) {
      if (!wanted(g.name, only)) continue;
      bench_matrix m;
      m.name = g.name + (quick ? " (quick)" : "");
      double t0 = twall_ms();
      if (g.make(&m.a)) {
        printf("generator failed: %s\n", m.name.c_str());
        continue;
      }
      printf("[generated %s in %.0f ms]", m.name.c_str(), twall_ms() - t0);
      print_matrix(m);
      tcsr_free(&m.a);
    }
    for (auto &f : files) {
      bench_matrix m;
      m.name = matrix_name(f);
      if (!wanted(m.name, only)) continue;
      char err[512];
      if (tcsr_read_mtx(&m.a, f.c_str(), err, sizeof(err))) {
        printf("%s\n", err);
        continue;
      }
      print_matrix(m);
      tcsr_free(&m.a);
    }
    return 0;
  }

  if (ellr_cuda_device_count() < 1) {
    printf("spmv: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, L2 %.0f MB, %.1f GB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6, prop.totalGlobalMem / 1e9);
  g_copy_gbs = bench_copy(quick ? (256u << 20) : (1u << 30));
  printf("device-to-device copy: %.0f GB/s (read + write)\n", g_copy_gbs);
  cusparseHandle_t h;
  CS(cusparseCreate(&h));

  /* matrices: generated, then files */
  for (auto &g : gens) {
    bench_matrix m;
    m.name = g.name;
    if (!wanted(m.name, only)) continue;
    double t0 = twall_ms();
    if (g.make(&m.a)) {
      printf("generator failed: %s\n", g.name.c_str());
      continue;
    }
    if (quick) m.name += " (quick)";
    printf("[generated %s in %.0f ms]", m.name.c_str(), twall_ms() - t0);
    run_matrix(h, m, sweep);
    tcsr_free(&m.a);
  }
  for (auto &f : files) {
    bench_matrix m;
    m.name = matrix_name(f);
    if (!wanted(m.name, only)) continue;
    char err[512];
    if (tcsr_read_mtx(&m.a, f.c_str(), err, sizeof(err))) {
      printf("%s\n", err);
      continue;
    }
    run_matrix(h, m, 0);
    tcsr_free(&m.a);
  }
  CS(cusparseDestroy(h));

  g_csv = fopen(csv, "w");
  if (g_csv) {
    /* new columns go last: readers by position keep working */
    fprintf(g_csv, "device,copy_gbs,matrix,format,params,time_ms,gflops,gbs_eff,pct_copy,storage_bytes,ratio_best_cusparse,setup_ms,rel_err,bytes_per_nnz,vs_csr\n");
    for (auto &r : g_results)
      fprintf(g_csv, "\"%s\",%.1f,\"%s\",\"%s\",\"%s\",%.6f,%.2f,%.1f,%.1f,%zu,%.3f,%.2f,%.2e,%.3f,%.3f\n", prop.name, g_copy_gbs, r.matrix.c_str(), r.format.c_str(), r.params.c_str(), r.ms, r.gflops, r.gbs, 100 * r.gbs / g_copy_gbs, r.bytes, r.ratio, r.setup_ms, r.err,
              r.bpn, r.vs_csr);
    fclose(g_csv);
    printf("\nCSV written to %s\n", csv);
  }
  /* the table, last (sweep rows left out) */
  printf("\n%s, device-to-device copy %.0f GB/s; time = median of %d, GB/s-eff = (12 nnz + 4(n+1) + 8 ncols + 8 n)/time, B/nnz = matrix storage read / nnz\n", prop.name, g_copy_gbs, g_reps);
  printf("| matrix | format | settings | time ms | GFLOP/s | GB/s-eff | %% copy | storage MB | B/nnz | x best cuSPARSE | x CSR ALG1 | setup ms | rel err |\n");
  printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int bad = 0;
  for (auto &r : g_results) {
    if (r.format.find("sweep") != std::string::npos) {
      if (r.err > 1e-12) bad++;
      continue;
    }
    if (r.ms <= 0) {
      printf("| %s | %s | %s | | | | | | | | | | |\n", r.matrix.c_str(), r.format.c_str(), r.params.substr(0, 60).c_str());
      continue;
    }
    if (r.err > 1e-12) bad++;
    printf("| %s | %s | %s | %.4f | %.1f | %.0f | %.1f | %.1f | %.1f | %.2f | %.2f | %s | %.0e |\n", r.matrix.c_str(), r.format.c_str(), r.params.c_str(), r.ms, r.gflops, r.gbs, 100 * r.gbs / g_copy_gbs, r.bytes / 1e6, r.bpn, r.ratio,
           r.vs_csr, r.setup_ms > 0 ? std::to_string(r.setup_ms).substr(0, 6).c_str() : "", r.err);
  }
  /* what a solve pays: set-up from the host CSR + K products, against cuSPARSE CSR ALG1's (aijcusparse's path) */
  printf("\nset-up + K products (what a solve of K products pays) against cuSPARSE CSR ALG1's; above 1 = faster; break-even = products after which the format has paid back its longer set-up (\"ahead until N\": a cheaper set-up, a slower product)\n");
  printf("| matrix | format | set-up ms | CSR ALG1 set-up ms | product ms | CSR ALG1 product ms | K=10 | K=100 | K=1000 | break-even products |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (auto &r : g_results) {
    if (r.ms <= 0 || (r.format != "ELLR-T C=32" && r.format != "pellr auto")) continue;
    const result *c = NULL;
    for (auto &q : g_results)
      if (q.matrix == r.matrix && q.format == "cuSPARSE CSR ALG1" && q.ms > 0) c = &q;
    if (!c) continue;
    char be[48] = "";
    if (r.setup_ms <= c->setup_ms && r.ms <= c->ms) snprintf(be, sizeof(be), "0");
    else if (r.setup_ms <= c->setup_ms) snprintf(be, sizeof(be), "ahead until %.0f", (c->setup_ms - r.setup_ms) / (r.ms - c->ms));
    else if (r.ms < c->ms) snprintf(be, sizeof(be), "%.0f", (r.setup_ms - c->setup_ms) / (c->ms - r.ms));
    else snprintf(be, sizeof(be), "never");
    printf("| %s | %s | %.3f | %.3f | %.4f | %.4f | %.2f | %.2f | %.2f | %s |\n", r.matrix.c_str(), r.format.c_str(), r.setup_ms, c->setup_ms, r.ms, c->ms, (c->setup_ms + 10 * c->ms) / (r.setup_ms + 10 * r.ms), (c->setup_ms + 100 * c->ms) / (r.setup_ms + 100 * r.ms),
           (c->setup_ms + 1000 * c->ms) / (r.setup_ms + 1000 * r.ms), be);
  }
  /* the model's pick against the exhaustive search's */
  int within = 0;
  printf("\ntuning by the model (at most 3 timed products, none under 2x L2) against the exhaustive search; time = median of %d\n", g_reps);
  printf("| matrix | format | model's pick | ms | setup ms | exhaustive pick | ms | setup ms | model / exhaustive |\n|---|---|---|---:|---:|---|---:|---:|---:|\n");
  for (auto &c : g_tune) {
    const double r = c.model_ms / c.exhaustive_ms;
    within += r <= 1.03;
    printf("| %s | %s | %s | %.4f | %.1f | %s | %.4f | %.1f | %.3f |\n", c.matrix.c_str(), c.format.c_str(), c.model.c_str(), c.model_ms, c.model_setup, c.exhaustive.c_str(), c.exhaustive_ms, c.exhaustive_setup, r);
  }
  printf("model within 3%% of the exhaustive search: %d of %zu\n", within, g_tune.size());
  bad += g_paths_bad;
  if (bad) printf("spmv: %d results FAILED the 1e-12 check\n", bad);
  return bad ? 1 : 0;
}
