/* bench_median.h - the GPU benchmarks' timing (tests/spmv/spmv.cu, tests/spmm/spmm.cu; CUDA C++, PETSc-free): the
   median of reps launches, each between two CUDA events on the legacy default stream, after warmup launches. */
#ifndef BENCH_MEDIAN_H
#define BENCH_MEDIAN_H

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

static inline void bench_cuda_check(cudaError_t e, const char *what)
{
  if (e == cudaSuccess) return;
  fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  exit(2);
}

template <class F>
static double bench_median_ms(int reps, int warmup, F &&launch)
{
  cudaEvent_t e0, e1;
  bench_cuda_check(cudaEventCreate(&e0), "cudaEventCreate");
  bench_cuda_check(cudaEventCreate(&e1), "cudaEventCreate");
  for (int w = 0; w < warmup; w++) launch();
  bench_cuda_check(cudaDeviceSynchronize(), "warm-up");
  std::vector<float> t(reps);
  for (int r = 0; r < reps; r++) {
    bench_cuda_check(cudaEventRecord(e0), "cudaEventRecord");
    launch();
    bench_cuda_check(cudaEventRecord(e1), "cudaEventRecord");
    bench_cuda_check(cudaEventSynchronize(e1), "a timed launch");
    bench_cuda_check(cudaEventElapsedTime(&t[r], e0, e1), "cudaEventElapsedTime");
  }
  bench_cuda_check(cudaEventDestroy(e0), "cudaEventDestroy");
  bench_cuda_check(cudaEventDestroy(e1), "cudaEventDestroy");
  std::sort(t.begin(), t.end());
  return reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
}

#endif
