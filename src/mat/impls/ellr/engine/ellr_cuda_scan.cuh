/*
  ellr_cuda_scan.cuh - the CUB steps the backend's set-up shares: the in-place inclusive sum that turns per-slice or
  per-row sizes into offsets (plan, column indices, long rows), and the selection of flagged indices into an array
  of exactly their count (IPCSR's row blocks, the long rows).  Scratch by salloc (ellr_cuda_util.cuh).
*/
#ifndef ELLR_CUDA_SCAN_CUH
#define ELLR_CUDA_SCAN_CUH

#include "ellr_cuda_util.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

/* d[i] = d[0] + ... + d[i] for i < n, on s. */
template <class X>
static inline ellr_status ellr_cuda_inclusive_sum(X *d, int32_t n, cudaStream_t s)
{
  if (n <= 0) return ELLR_OK;
  size_t bytes = 0;
  char  *temp  = NULL;
  CU(cub::DeviceScan::InclusiveSum(NULL, bytes, d, d, n, s));
  TRY(salloc(&temp, bytes, s, "the scan's scratch"));
  const cudaError_t e = cub::DeviceScan::InclusiveSum(temp, bytes, d, d, n, s);
  sfree(&temp, s); /* pooled: released once the scan has run; else cudaFree waits for it */
  if (e != cudaSuccess) return cu_err(e, "cub::DeviceScan::InclusiveSum", __LINE__);
  return ELLR_OK;
}

/* The indices i < n with flag[i] != 0, increasing, into a new device array *out of exactly *count entries (at
   least one allocated); s synchronized on return.  On failure nothing is left allocated. */
static inline ellr_status ellr_cuda_select_flagged(const char *flag, int32_t n, cudaStream_t s, int32_t **out, int32_t *count, const char *what)
{
  int32_t                           *sel = NULL, *cnt = NULL;
  char                              *temp = NULL;
  size_t                             bytes = 0;
  int32_t                            nsel  = 0;
  ellr_status                        st    = ELLR_OK;
  cudaError_t                        e     = cudaSuccess;
  thrust::counting_iterator<int32_t> iota(0);
  *out   = NULL;
  *count = 0;
  if (!(st = salloc(&sel, (size_t)n, s, what)) && !(st = salloc(&cnt, 1, s, "a counter"))) {
    e = cub::DeviceSelect::Flagged(NULL, bytes, iota, flag, sel, cnt, n, s);
    if (e == cudaSuccess && !(st = salloc(&temp, bytes, s, "CUB scratch"))) {
      e = cub::DeviceSelect::Flagged(temp, bytes, iota, flag, sel, cnt, n, s);
      if (e == cudaSuccess) e = cudaMemcpyAsync(&nsel, cnt, sizeof(int32_t), cudaMemcpyDeviceToHost, s);
      if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    }
    if (e != cudaSuccess && !st) st = cu_err(e, "cub::DeviceSelect::Flagged", __LINE__);
  }
  if (!st) st = dalloc(out, (size_t)nsel, what);
  if (!st && nsel && (e = cudaMemcpyAsync(*out, sel, (size_t)nsel * sizeof(int32_t), cudaMemcpyDeviceToDevice, s)) != cudaSuccess) st = cu_err(e, "cudaMemcpyAsync", __LINE__);
  if (!st && (e = cudaStreamSynchronize(s)) != cudaSuccess) st = cu_err(e, "cudaStreamSynchronize", __LINE__);
  sfree(&temp, s);
  sfree(&sel, s);
  sfree(&cnt, s);
  if (st) {
    (void)dfree(out);
    return st;
  }
  *count = nsel;
  return ELLR_OK;
}

#endif
