/* ellr_device.cu - which GPU this process uses: one GPU per MPI rank on a node; how many there are. */
#include "ellr_cuda.h"

#include <atomic>
#include <cuda_runtime.h>

/* The binding asks before every product: the driver is asked once, the answer kept (the devices a
   process sees do not change while it runs).  -1: not asked yet.  Two threads asking at once both
   ask the driver and store the same answer. */
static std::atomic<int> g_device_count(-1);

int ellr_cuda_device_count(void)
{
  int n = g_device_count.load(std::memory_order_relaxed);
  if (n >= 0) return n;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); /* no driver / no device: not an error here */
    n = 0;
  }
  g_device_count.store(n, std::memory_order_relaxed);
  return n;
}

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

ellr_status ellr_cuda_device_synchronize(void)
{
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return ellr_error(ELLR_ERR_CUDA, "cudaDeviceSynchronize failed: %s", cudaGetErrorString(err));
  return ELLR_OK;
}
