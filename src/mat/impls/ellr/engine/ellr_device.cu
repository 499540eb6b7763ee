/* ellr_device.cu - which GPU this process uses: one GPU per MPI rank on a node. */
#include "ellr_cuda.h"

#include <cuda_runtime.h>

ellr_status ellr_cuda_select_device(int local_rank)
{
  int         ndev = 0;
  cudaError_t err  = cudaGetDeviceCount(&ndev);
  if (err != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    return ellr_error(ELLR_ERR_CUDA, "no CUDA device to select (%s)", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
  }
  err = cudaSetDevice(local_rank % ndev);
  if (err != cudaSuccess) return ellr_error(ELLR_ERR_CUDA, "cudaSetDevice(%d) failed: %s", local_rank % ndev, cudaGetErrorString(err));
  return ELLR_OK;
}
