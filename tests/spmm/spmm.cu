/*
  spmm - stand-alone GPU benchmark of the engine's product with a dense block, C = A B (ellr_cuda_mult_dense), against
  cuSPARSE's SpMM on the same CSR (PETSc-free).

  What MatMatMult(A, B dense) runs: aijcusparse calls cusparseSpMM with CUSPARSE_SPMM_CSR_ALG1 (PETSc's default,
  column-major B and C); the engine's one-pass kernel reads each stored entry once for every 4 columns
  (ellr_cuda_dense.cuh).  For each matrix and each block width k (1, 4, 16, 64 by default): cuSPARSE CSR ALG1,
  cuSPARSE ALG_DEFAULT, and the engine as -mat_type ellrt and -mat_type pellr build it, with the one-pass kernel at
  2, 4 (the default), 8, 16 and 32 sums per thread and as k one-vector products (the choice below ELLR_DENSE_MIN_COLS columns).  Every
  result is checked on its first and last column against the host CSR product before timing; time = median of
  >= 20 products between CUDA events after warm-up.
  GB/s-eff = (12 nnz + 4 (n + 1) + 8 ncols k + 8 n k) / time: the same count for every format (A read once, B and C
  once).  x ALG1 = cuSPARSE CSR ALG1's time / this time.

  usage: spmm [--only a,b] [--cols 1,4,16,64] [--reps N] [--csv FILE] [--quick]
    --quick  smaller stencils (3d7 N=64, 3d27 N=48, 2d5 N=512)
  CSV columns: device, matrix, rows, nnz, k, format, time_ms, gbs_eff, x_alg1, rel_err
*/
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <string>
#include <vector>

#include "bench_median.h"
#include "ellr_cuda.h"
#include "ellr_cuda_internal.cuh"
#include "ellr_testlib.h"

#define CK(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(2); \
    } \
  } while (0)
#define CS(call) \
  do { \
    cusparseStatus_t s_ = (call); \
    if (s_ != CUSPARSE_STATUS_SUCCESS) { \
      fprintf(stderr, "%s:%d %s: cuSPARSE status %d\n", __FILE__, __LINE__, #call, (int)s_); \
      exit(2); \
    } \
  } while (0)

static int   g_reps = 30;
static FILE *g_csv;
static char  g_device[256];
static int   g_bad;

/* Median time of one product over g_reps runs (bench_median.h). */
template <class F>
static double time_median(F &&launch)
{
  return bench_median_ms(g_reps, 3, launch);
}

struct row {
  std::string matrix, format;
  int         k;
  int32_t     rows;
  int64_t     nnz;
  double      ms, gbs, err;
};
static std::vector<row> g_rows;

/* Worst relative error of C's first and last columns against the host CSR product. */
static double check_block(const tcsr *a, const double *hB, int k, const double *dC)
{
  std::vector<double> c((size_t)a->nrows + 1), ref((size_t)a->nrows + 1);
  double              worst = 0;
  const int           cols[2] = {0, k - 1};
  for (int q = 0; q < (k > 1 ? 2 : 1); q++) {
    const int j = cols[q];
    tcsr_spmv(a, hB + (size_t)j * a->ncols, NULL, ref.data());
    CK(cudaMemcpy(c.data(), dC + (size_t)j * a->nrows, (size_t)a->nrows * 8, cudaMemcpyDeviceToHost));
    worst = std::max(worst, trel_err(c.data(), ref.data(), a->nrows));
  }
  return worst;
}

static void record(const std::string &matrix, const tcsr *a, int k, const std::string &format, double ms, double err)
{
  const double bytes = 12.0 * tcsr_nnz(a) + 4.0 * (a->nrows + 1) + 8.0 * a->ncols * k + 8.0 * a->nrows * k;
  row          r     = {matrix, format, k, a->nrows, tcsr_nnz(a), ms, bytes / (ms * 1e-3) / 1e9, err};
  if (!(err <= 1e-12)) {
    printf("WRONG RESULT: %s k=%d %s relative error %g\n", matrix.c_str(), k, format.c_str(), err);
    g_bad++;
  }
  g_rows.push_back(r);
}

static void run_matrix(cusparseHandle_t h, const std::string &name, const tcsr *a, const std::vector<int> &ks)
{
  const int64_t nnz  = tcsr_nnz(a);
  const int     kmax = *std::max_element(ks.begin(), ks.end());
  printf("\n%s: %d rows, %lld nonzeros\n", name.c_str(), a->nrows, (long long)nnz);
  std::vector<double> hB((size_t)a->ncols * kmax);
  tfill_random(hB.data(), (int64_t)hB.size(), 77);
  double *dB, *dC;
  CK(cudaMalloc(&dB, hB.size() * 8));
  CK(cudaMalloc(&dC, (size_t)a->nrows * kmax * 8));
  CK(cudaMemcpy(dB, hB.data(), hB.size() * 8, cudaMemcpyHostToDevice));

  /* cuSPARSE on the CSR, as aijcusparse holds it */
  int32_t *drp, *dci;
  double  *dv;
  CK(cudaMalloc(&drp, ((size_t)a->nrows + 1) * 4));
  CK(cudaMalloc(&dci, (size_t)nnz * 4));
  CK(cudaMalloc(&dv, (size_t)nnz * 8));
  CK(cudaMemcpy(drp, a->rowptr, ((size_t)a->nrows + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dci, a->colidx, (size_t)nnz * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, a->val, (size_t)nnz * 8, cudaMemcpyHostToDevice));
  cusparseSpMatDescr_t A;
  CS(cusparseCreateCsr(&A, a->nrows, a->ncols, nnz, drp, dci, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  const double one = 1.0, zero = 0.0;
  for (int k : ks) {
    cusparseDnMatDescr_t Bd, Cd;
    CS(cusparseCreateDnMat(&Bd, a->ncols, k, a->ncols, dB, CUDA_R_64F, CUSPARSE_ORDER_COL));
    CS(cusparseCreateDnMat(&Cd, a->nrows, k, a->nrows, dC, CUDA_R_64F, CUSPARSE_ORDER_COL));
    const cusparseSpMMAlg_t algs[2]  = {CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_ALG_DEFAULT};
    const char             *names[2] = {"cuSPARSE CSR ALG1", "cuSPARSE ALG_DEFAULT"};
    for (int q = 0; q < 2; q++) {
      size_t bsz = 0;
      void  *buf = NULL;
      CS(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, Bd, &zero, Cd, CUDA_R_64F, algs[q], &bsz));
      CK(cudaMalloc(&buf, bsz ? bsz : 1));
      auto run = [&] { CS(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, Bd, &zero, Cd, CUDA_R_64F, algs[q], buf)); };
      CK(cudaMemset(dC, 0xff, (size_t)a->nrows * k * 8));
      run();
      CK(cudaDeviceSynchronize());
      const double err = check_block(a, hB.data(), k, dC);
      record(name, a, k, names[q], time_median(run), err);
      CK(cudaFree(buf));
    }
    CS(cusparseDestroyDnMat(Bd));
    CS(cusparseDestroyDnMat(Cd));
  }
  CS(cusparseDestroySpMat(A));
  CK(cudaFree(drp));
  CK(cudaFree(dci));
  CK(cudaFree(dv));

  /* the engine as the two matrix types build it (ellrsettings.c's defaults) */
  struct fmt {
    const char *name;
    ellr_params p;
  };
  const fmt fmts[2] = {{"ellrt", {0, 0, 32, 0, ELLR_SORT_WINDOW_AUTO, 8.0, ELLR_TUNE_MODEL, 1, ELLR_FAMILY_SLICED}}, {"pellr", {0, 0, 32, 1, ELLR_SORT_WINDOW_AUTO, 8.0, ELLR_TUNE_MODEL, 1, ELLR_FAMILY_AUTO}}};
  for (const fmt &f : fmts) {
    ellr_cuda_matrix *d   = NULL;
    ellr_csr          csr = tcsr_view(a);
    if (ellr_cuda_create(&csr, &f.p, NULL, &d) || ellr_cuda_tune(d, &csr, NULL)) {
      printf("%s: %s\n", f.name, ellr_last_error());
      g_bad++;
      continue;
    }
    ellr_cuda_info info;
    ellr_cuda_get_info(d, &info);
    printf("%s: family %d, T %d, one pass %d\n", f.name, info.family, info.threads_per_row, ellr_cuda_dense_one_pass(d));
    for (int k : ks) {
      /* sums per thread, fewest columns of the one-pass kernel: the default, other block widths, one product per column */
      const int variants[6][2] = {{0, 0}, {2, 0}, {8, 0}, {16, 0}, {32, 0}, {ELLR_DENSE_NB, 1 << 30}};
      for (int v = 0; v < 6; v++) {
        const int nb = variants[v][0] ? variants[v][0] : ELLR_DENSE_NB;
        if (v && k == 1) continue; /* one column: the one-vector product in every case */
        if (v > 0 && v < 5 && (k <= nb / 2 || nb == ELLR_DENSE_NB || !ellr_cuda_dense_one_pass(d))) continue; /* the same kernel as the default's */
        ellr_cuda_set_dense_opts(variants[v][0], variants[v][1]);
        char label[96];
        if (v == 5) snprintf(label, sizeof(label), "%s, %d one-vector products", f.name, k);
        else if (k == 1 || !ellr_cuda_dense_one_pass(d) || k < ELLR_DENSE_MIN_COLS) snprintf(label, sizeof(label), "%s (default: one-vector products)", f.name);
        else snprintf(label, sizeof(label), "%s one-pass, %d sums/thread%s", f.name, std::min(nb, 1 << (int)std::ceil(std::log2((double)k))), v == 0 ? " (default)" : "");
        auto run = [&] {
          if (ellr_cuda_mult_dense(d, k, dB, a->ncols, dC, a->nrows, NULL)) {
            printf("%s: %s\n", label, ellr_last_error());
            exit(2);
          }
        };
        CK(cudaMemset(dC, 0xff, (size_t)a->nrows * k * 8));
        run();
        CK(cudaDeviceSynchronize());
        const double err = check_block(a, hB.data(), k, dC);
        record(name, a, k, label, time_median(run), err);
      }
    }
    ellr_cuda_set_dense_opts(0, 0);
    ellr_cuda_destroy(d);
  }
  CK(cudaFree(dB));
  CK(cudaFree(dC));
}

int main(int argc, char **argv)
{
  const char      *only = NULL, *csv = "spmm.csv";
  std::vector<int> ks   = {1, 4, 16, 64};
  int              quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::max(20, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--cols") && i + 1 < argc) {
      ks.clear();
      for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ",")) ks.push_back(std::max(1, atoi(t)));
    } else {
      fprintf(stderr, "usage: %s [--only a,b] [--cols 1,4,16,64] [--reps N] [--csv FILE] [--quick]\n", argv[0]);
      return 1;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  snprintf(g_device, sizeof(g_device), "%s", prop.name);
  printf("device %s, %d timed products per median\n", g_device, g_reps);
  cusparseHandle_t h;
  CS(cusparseCreate(&h));
  struct st {
    const char *name;
    int         kind, N;
  };
  const st stencils[3] = {{quick ? "3d7 N=64" : "3d7 N=160", 0, quick ? 64 : 160}, {quick ? "3d27 N=48" : "3d27 N=100", 1, quick ? 48 : 100}, {quick ? "2d5 N=512" : "2d5 N=2048", 2, quick ? 512 : 2048}};
  for (const st &s : stencils) {
    if (only && !strstr(only, s.name) && !strstr(s.name, only)) continue;
    tcsr a;
    int  rc = s.kind == 0 ? tcsr_stencil_3d7(&a, s.N) : s.kind == 1 ? tcsr_stencil_3d27(&a, s.N) : tcsr_stencil_2d5(&a, s.N);
    if (rc) {
      printf("cannot generate %s\n", s.name);
      return 2;
    }
    tcsr_randomize_values(&a, 5);
    run_matrix(h, s.name, &a, ks);
    tcsr_free(&a);
  }
  CS(cusparseDestroy(h));

  g_csv = fopen(csv, "w");
  if (g_csv) fprintf(g_csv, "device,matrix,rows,nnz,k,format,time_ms,gbs_eff,x_alg1,rel_err\n");
  printf("\n| matrix | k | format | ms | GB/s-eff | x ALG1 |\n|---|---|---|---|---|---|\n");
  for (const row &r : g_rows) {
    double alg1 = 0;
    for (const row &q : g_rows)
      if (q.matrix == r.matrix && q.k == r.k && q.format == "cuSPARSE CSR ALG1") alg1 = q.ms;
    printf("| %s | %d | %s | %.4f | %.0f | %.2f |\n", r.matrix.c_str(), r.k, r.format.c_str(), r.ms, r.gbs, alg1 / r.ms);
    if (g_csv) fprintf(g_csv, "%s,%s,%d,%lld,%d,\"%s\",%.6f,%.1f,%.4f,%.3g\n", g_device, r.matrix.c_str(), (int)r.rows, (long long)r.nnz, r.k, r.format.c_str(), r.ms, r.gbs, alg1 / r.ms, r.err);
  }
  if (g_csv) fclose(g_csv);
  printf("\n%s\n", g_bad ? "SOME RESULTS WRONG" : "all results checked");
  return g_bad ? 3 : 0;
}
