/*
  ellr_cuda_mult_launch.cuh - the definition of ellr_cuda_launch_slices<T> (ellr_cuda_mult.cuh), included by the
  ellr_cuda_mult_t*.cu files only: each instantiates it for its one T with ELLR_CUDA_LAUNCH_SLICES(T).
*/
#ifndef ELLR_CUDA_MULT_LAUNCH_CUH
#define ELLR_CUDA_MULT_LAUNCH_CUH

#include "ellr_cuda_mult.cuh"
#include "ellr_cuda_kernels.cuh"

template <int T, bool ADDZ, bool TRANS, bool LEN, int LD>
static void ellr_launch(int chunks, unsigned grid, unsigned block, cudaStream_t s, const ellr_kargs &a, bool probe)
{
  cudaFuncAttributes fa;
  if constexpr (T == 0) { /* each slice's own T: the chunks kernel only */
    if (probe) (void)cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_chunks<0, ADDZ, TRANS, LEN, LD>);
    else ellr_kernel_chunks<0, ADDZ, TRANS, LEN, LD><<<grid, block, 0, s>>>(a);
  } else {
    if (probe) (void)cudaFuncGetAttributes(&fa, chunks ? (const void *)ellr_kernel_chunks<T, ADDZ, TRANS, LEN, LD> : (const void *)ellr_kernel_rows<T, ADDZ, TRANS, LEN, LD>);
    else if (chunks) ellr_kernel_chunks<T, ADDZ, TRANS, LEN, LD><<<grid, block, 0, s>>>(a);
    else ellr_kernel_rows<T, ADDZ, TRANS, LEN, LD><<<grid, block, 0, s>>>(a);
  }
}

template <int T, bool ADDZ, bool LEN>
static void ellr_launch_ld(int chunks, int ld, unsigned grid, unsigned block, cudaStream_t s, const ellr_kargs &a, bool probe)
{
  if (ld) ellr_launch<T, ADDZ, false, LEN, 1>(chunks, grid, block, s, a, probe);
  else ellr_launch<T, ADDZ, false, LEN, 0>(chunks, grid, block, s, a, probe);
}

template <int T>
void ellr_cuda_launch_slices(int chunks, bool addz, bool trans, bool len, int ld, unsigned grid, unsigned block, cudaStream_t s, const ellr_kargs &a, bool probe)
{
  if (trans) ellr_launch<T, false, true, true, 0>(chunks, grid, block, s, a, probe);
  else if (addz) {
    if (len) ellr_launch_ld<T, true, true>(chunks, ld, grid, block, s, a, probe);
    else ellr_launch_ld<T, true, false>(chunks, ld, grid, block, s, a, probe);
  } else {
    if (len) ellr_launch_ld<T, false, true>(chunks, ld, grid, block, s, a, probe);
    else ellr_launch_ld<T, false, false>(chunks, ld, grid, block, s, a, probe);
  }
}

#define ELLR_CUDA_LAUNCH_SLICES(T) template void ellr_cuda_launch_slices<T>(int, bool, bool, bool, int, unsigned, unsigned, cudaStream_t, const ellr_kargs &, bool);

#endif
