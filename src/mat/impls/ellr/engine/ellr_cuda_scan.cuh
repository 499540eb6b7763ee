/*
  ellr_cuda_scan.cuh - the in-place inclusive sum that turns per-slice or per-row sizes into offsets (CUB), shared by
  the backend's plan, column-index and long-row steps.  Queued on the stream; its scratch is stream-ordered.
*/
#ifndef ELLR_CUDA_SCAN_CUH
#define ELLR_CUDA_SCAN_CUH

#include "ellr_cuda_util.cuh"

#include <cub/device/device_scan.cuh>

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
  sfree(&temp, s); /* stream-ordered: released once the scan has run */
  if (e != cudaSuccess) return cu_err(e, "cub::DeviceScan::InclusiveSum", __LINE__);
  return ELLR_OK;
}

#endif
