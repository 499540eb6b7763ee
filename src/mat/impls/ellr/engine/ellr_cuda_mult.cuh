/*
  ellr_cuda_mult.cuh - the sliced product's launch, compiled once per threads-per-row value.

  Under CUDA's lazy loading the first launch from a module costs more the larger the module (measured; the
  documentation speaks of loading kernels one by one).  With the product kernels of every T, every
  operation and both load paths (204 instantiations, 1.6 MB of sm_90 code) in ellr_cuda.cu's module, a process's
  first sliced matrix paid 3.4-4.1 ms at its first fill to load kernels it never ran (tests/gpu/cold_start, H100;
  the plan's 0.9 MB module 1.1 ms, the CSR families' 0.5 MB 0.7-0.9 ms).  So each ellr_cuda_mult_tN.cu is its own
  module holding one T's kernels, and a matrix loads those of the T it runs with (T = 0: each slice's own T).
*/
#ifndef ELLR_CUDA_MULT_CUH
#define ELLR_CUDA_MULT_CUH

#include "ellr_cuda_kargs.cuh"

/* y = A x + z (addz), y = A x, or y += A^T x (trans) over the slices, with the rows kernel or the chunks kernel
   (chunks), rows stopped at their length (len) or at the slice width, matrix words through __ldcs (ld = 1) or
   __ldg; probe: load the kernels' module instead of launching (a timed first launch would time the load).
   Defined for T = 0, 1, 2, 4, 8, 16, 32 by ellr_cuda_mult_t<T>.cu. */
template <int T>
void ellr_cuda_launch_slices(int chunks, bool addz, bool trans, bool len, int ld, unsigned grid, unsigned block, cudaStream_t s, const ellr_kargs &a, bool probe);

#endif
