/* ellr_cuda_mult_t0.cu - the sliced product's kernels for each slice's own T (the chunks kernel): a module of their own (ellr_cuda_mult.cuh) */
#include "ellr_cuda_mult_launch.cuh"

ELLR_CUDA_LAUNCH_SLICES(0)
