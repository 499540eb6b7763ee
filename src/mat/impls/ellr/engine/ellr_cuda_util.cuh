/*
  ellr_cuda_util.cuh - error handling and device allocation shared by the CUDA backend's files: every CUDA
  call is checked and a failure comes back as ELLR_ERR_CUDA with ellr_last_error() naming the call and line.
*/
#ifndef ELLR_CUDA_UTIL_CUH
#define ELLR_CUDA_UTIL_CUH

#include "ellr.h"

#include <cuda_runtime.h>
#include <time.h>

static inline ellr_status ellr_cu_err(cudaError_t e, const char *what, const char *file, int line)
{
  (void)cudaGetLastError(); /* a non-sticky error must not resurface at the next launch check */
  return ellr_error(ELLR_ERR_CUDA, "CUDA error %s (%s) in %s (%s:%d)", cudaGetErrorName(e), cudaGetErrorString(e), what, file, line);
}
#define cu_err(e, what, line) ellr_cu_err((e), (what), __FILE__, (line))
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

static inline double ellr_wall_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Requests of at least ELLR_MEM_CHECK_MIN bytes are checked against the free memory first, for an error that says
   how much is free; smaller ones go straight to cudaMalloc, whose refusal dalloc reports with the size (one
   cudaMemGetInfo per allocation was a measurable part of a small matrix's set-up). */
#define ELLR_MEM_CHECK_MIN ((size_t)16 << 20)
static inline ellr_status ellr_mem_check(size_t need, const char *what)
{
  if (need < ELLR_MEM_CHECK_MIN) return ELLR_OK;
  size_t freeb = 0, total = 0;
  CU(cudaMemGetInfo(&freeb, &total));
  if (need > freeb) return ellr_error(ELLR_ERR_CUDA, "GPU out of memory: %s needs %zu bytes (%.1f MB) but only %zu bytes (%.1f MB) of %zu are free", what, need, need / 1e6, freeb, freeb / 1e6, total);
  return ELLR_OK;
}

template <class X>
static inline ellr_status dalloc(X **p, size_t n, const char *what)
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
static inline ellr_status dfree(X **p)
{
  cudaError_t e = *p ? cudaFree((void *)*p) : cudaSuccess;
  *p            = NULL;
  if (e != cudaSuccess) return cu_err(e, "cudaFree", __LINE__);
  return ELLR_OK;
}

/* Set-up scratch (salloc/sfree) comes from the stream-ordered pool (cudaMallocAsync) only while a create asks for
   it (ellr_pooled_scratch): its frees do not synchronize the device, so a large matrix's plan keeps overlapping
   the upload on the second stream.  Otherwise it is plain cudaMalloc/cudaFree: the first cudaMallocAsync of a
   process creates the device's memory pool, 7.5-11.2 ms on the H100 machine (tests/gpu/cold_start), several
   times a small matrix's whole set-up.  Scratch never outlives the function that allocates it, so the mode is
   the same at its free. */
extern thread_local int ellr_scratch_pooled;
/* create pools it from ELLR_POOLED_MIN bytes of values up (ellr_cuda_internal.cuh) */
struct ellr_pooled_scratch {
  int old;
  explicit ellr_pooled_scratch(int on) : old(ellr_scratch_pooled) { ellr_scratch_pooled = on; }
  ~ellr_pooled_scratch() { ellr_scratch_pooled = old; }
};

template <class X>
static inline ellr_status salloc(X **p, size_t n, cudaStream_t s, const char *what)
{
  const size_t bytes = (n ? n : 1) * sizeof(X);
  cudaError_t  e     = ellr_scratch_pooled ? cudaMallocAsync((void **)p, bytes, s) : cudaMalloc((void **)p, bytes);
  if (e != cudaSuccess) {
    *p = NULL;
    (void)cudaGetLastError();
    return ellr_error(ELLR_ERR_CUDA, "GPU out of memory: %s of %zu bytes for %s failed: %s", ellr_scratch_pooled ? "cudaMallocAsync" : "cudaMalloc", bytes, what, cudaGetErrorString(e));
  }
  return ELLR_OK;
}

template <class X>
static inline void sfree(X **p, cudaStream_t s)
{
  if (*p && (ellr_scratch_pooled ? cudaFreeAsync((void *)*p, s) : cudaFree((void *)*p)) != cudaSuccess) (void)cudaGetLastError();
  *p = NULL;
}

#endif
