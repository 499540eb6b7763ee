/* ellr_cuda_mult_t8.cu - the sliced product's kernels for T = 8: a module of their own (ellr_cuda_mult.cuh) */
#include "ellr_cuda_mult_launch.cuh"

ELLR_CUDA_LAUNCH_SLICES(8)
