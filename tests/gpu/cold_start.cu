/*
  cold_start - what the first matrix of a process pays on the GPU, against the next ones (PETSc-free).

  usage: cold_start [ellrt|pellr] [N] [probe]     (3d 7-point N^3, default 24: 13824 rows, a small problem)
  probe: before the rounds, the first use of each kind of CUDA call the set-up makes, timed one by one, then what
  some of them cost once warm.  ELLR_GPU_PLAN=1 in the environment plans every matrix on the GPU (small ones are
  planned on the host otherwise).

  Times, host wall clock: the CUDA context (cudaFree(0)), then three rounds of create + tune + one product
  (y = A x, synchronized) of the same matrix with the parameters of -mat_type ellrt or pellr, each with the
  engine's parts (ellr_cuda_info).  The first round carries what CUDA does once per process for the kernels it
  launches (module and function loading; CUDA_MODULE_LOADING=EAGER moves it into the context), the later ones
  only the set-up itself.  tests/gpu/prepare.sh builds it; run it in a fresh process per measurement.
*/
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include "ellr.h"
#include "ellr_cuda.h"
#include "ellr_cuda_internal.cuh"
#include "ellr_testlib.h"

int main(int argc, char **argv)
{
  const int pellr = argc > 1 && !strcmp(argv[1], "pellr");
  const int N     = argc > 2 ? atoi(argv[2]) : 24;
  double    t0    = twall_ms();
  if (cudaFree(0) != cudaSuccess) {
    printf("no CUDA device\n");
    return 1;
  }
  const double ctx = twall_ms() - t0;
  const char  *ml  = getenv("CUDA_MODULE_LOADING");
  printf("cold_start %s 3d7 N=%d, CUDA_MODULE_LOADING=%s: context %.3f ms\n", pellr ? "pellr" : "ellrt", N, ml ? ml : "(default)", ctx);
  if (argc > 3 && !strcmp(argv[3], "probe")) { /* each first use, in the order the set-up makes them */
    cudaStream_t ps;
    cudaEvent_t  pe;
    void        *m1, *m2, *m3;
    static char  h[1 << 16];
    double       t = twall_ms(), u;
#define PROBE(what, call) \
  do { \
    call; \
    cudaDeviceSynchronize(); \
    u = twall_ms(); \
    printf("  first %-40s %8.3f ms\n", what, u - t); \
    t = u; \
  } while (0)
    PROBE("cudaMalloc (64 KB)", cudaMalloc(&m1, sizeof(h)));
    PROBE("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking));
    PROBE("cudaEventCreate", cudaEventCreate(&pe));
    PROBE("pageable cudaMemcpyAsync H2D (64 KB)", cudaMemcpyAsync(m1, h, sizeof(h), cudaMemcpyHostToDevice, ps));
    PROBE("cudaMallocAsync (64 KB)", cudaMallocAsync(&m2, sizeof(h), ps));
    PROBE("cudaMemsetAsync", cudaMemsetAsync(m2, 0, sizeof(h), ps));
    PROBE("pageable cudaMemcpyAsync D2H (64 KB)", cudaMemcpyAsync(h, m2, sizeof(h), cudaMemcpyDeviceToHost, ps));
    PROBE("cudaFreeAsync", cudaFreeAsync(m2, ps));
    PROBE("cudaMallocAsync again", cudaMallocAsync(&m3, sizeof(h), ps));
    PROBE("cudaFreeAsync + cudaFree", (cudaFreeAsync(m3, ps), cudaFree(m1)));
    PROBE("cudaStreamDestroy + cudaEventDestroy", (cudaStreamDestroy(ps), cudaEventDestroy(pe)));
#undef PROBE
    /* then what each costs once warm: median of 21 */
    cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking);
    cudaMalloc(&m1, sizeof(h));
    auto warm = [&](const char *what, auto &&call) {
      double ts[21];
      for (int r = 0; r < 21; r++) {
        const double w = twall_ms();
        call();
        ts[r] = twall_ms() - w;
      }
      std::sort(ts, ts + 21);
      printf("  warm  %-40s %8.4f ms\n", what, ts[10]);
    };
    size_t fb, tb;
    warm("cudaMemGetInfo", [&] { cudaMemGetInfo(&fb, &tb); });
    warm("cudaMalloc + cudaFree (64 KB)", [&] { cudaMalloc(&m2, sizeof(h)); cudaFree(m2); });
    warm("pageable cudaMemcpyAsync H2D (4 KB) + sync", [&] { cudaMemcpyAsync(m1, h, 4096, cudaMemcpyHostToDevice, ps); cudaStreamSynchronize(ps); });
    warm("pageable cudaMemcpyAsync H2D (64 KB) + sync", [&] { cudaMemcpyAsync(m1, h, sizeof(h), cudaMemcpyHostToDevice, ps); cudaStreamSynchronize(ps); });
    warm("cudaMemsetAsync + D2H (8 B) + sync", [&] { cudaMemsetAsync(m1, 0, 8, ps); cudaMemcpyAsync(h, m1, 8, cudaMemcpyDeviceToHost, ps); cudaStreamSynchronize(ps); });
    cudaFree(m1);
    cudaStreamDestroy(ps);
  }
  if (getenv("ELLR_GPU_PLAN")) ellr_cuda_set_host_plan_rows(0); /* every plan on the GPU, as before the host plan */
  tcsr a;
  if (tcsr_stencil_3d7(&a, N)) return 1;
  ellr_csr    av = tcsr_view(&a);
  /* the binding's defaults (aijellrstorage.c): slices of 32, own order (ellrt) or sorted in an automatic window
     with the automatic family (pellr), 16-bit offsets, page-locking */
  ellr_params p = {0, 0, 32, pellr, pellr ? ELLR_SORT_WINDOW_AUTO : 0, 8.0, ELLR_TUNE_MODEL, 1, pellr ? ELLR_FAMILY_AUTO : ELLR_FAMILY_SLICED, 0, 0, ELLR_LONG_JOIN_SEGMENTED};
  double     *dx, *dy;
  if (cudaMalloc(&dx, (size_t)a.ncols * sizeof(double)) != cudaSuccess || cudaMalloc(&dy, (size_t)a.nrows * sizeof(double)) != cudaSuccess) return 1;
  cudaMemset(dx, 0, (size_t)a.ncols * sizeof(double));
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int r = 0; r < 3; r++) {
    ellr_cuda_matrix *d = NULL;
    t0                  = twall_ms();
    ellr_status st      = ellr_cuda_create(&av, &p, s, &d);
    if (!st) st = ellr_cuda_tune(d, &av, s);
    const double t1 = twall_ms();
    if (!st) st = ellr_cuda_mult(d, dx, NULL, dy, 0, s);
    if (!st && cudaStreamSynchronize(s) != cudaSuccess) st = ELLR_ERR_CUDA;
    const double t2 = twall_ms();
    if (st) {
      printf("failed: %s\n", ellr_last_error());
      return 1;
    }
    ellr_cuda_info info;
    ellr_cuda_get_info(d, &info);
    printf("round %d: set-up %.3f ms (create %.3f: plan %.3f = order %.3f + geometry %.3f + allocation %.3f, upload %.3f, fill %.3f; tune %.3f), first product %.3f ms; family %d, T %d\n", r, t1 - t0, info.create_ms, info.plan_ms, info.plan_parts_ms[0], info.plan_parts_ms[1], info.plan_parts_ms[2], info.upload_ms, info.fill_ms, info.tune_ms, t2 - t1, info.family, info.threads_per_row);
    ellr_cuda_destroy(d);
  }
  cudaFree(dx);
  cudaFree(dy);
  cudaStreamDestroy(s);
  tcsr_free(&a);
  return 0;
}
