/*
  ellr_cuda_internal.cuh - knobs of the CUDA backend for its tests and the spmv benchmark.
  Not part of the binding's API (ellr_cuda.h); everything here has a sensible automatic default.
*/
#ifndef ELLR_CUDA_INTERNAL_CUH
#define ELLR_CUDA_INTERNAL_CUH

#include "ellr_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* create takes its set-up scratch from the stream-ordered pool from this many bytes of values up (ellr_cuda_util.cuh):
   a shorter upload ends before the plan's frees would have to wait long for it (3d7 N=48, 6 MB of values: the
   first matrix of a process took 20.8 ms with the pool, 7.1 ms without; later matrices 2.0-2.8 ms either way) */
#define ELLR_POOLED_MIN ((size_t)64 << 20)

typedef struct {
  int kernel; /* 0 automatic, 1 rows (T lanes per row), 2 chunks (needs C*T % 32 == 0); slices of different T
                 (per-slice T) always take the chunks kernel, whatever is asked */
  int uselen; /* -1 automatic (tuned with T), 0 stop at the slice width (padding skipped by column -1), 1 at the row length */
  int chunk;  /* chunks: column blocks per work item; 0 automatic, < 0 never split a slice */
  int loads;  /* -1 automatic (tuned with T), 0 read-only path (__ldg), 1 streaming (__ldcs) for the matrix words */
} ellr_cuda_kopts;

/* Sets the kernel options (rebuilds the work items when needed); get returns the resolved ones. */
ellr_status ellr_cuda_set_kopts(ellr_cuda_matrix *d, const ellr_cuda_kopts *o);
void        ellr_cuda_get_kopts(const ellr_cuda_matrix *d, ellr_cuda_kopts *o);
/* Kernel options used by ellr_cuda_create (autotuning included) from now on; NULL = automatic. */
void ellr_cuda_set_default_kopts(const ellr_cuda_kopts *o);

/* ellr_cuda_mult_dense's sums per thread at most (1..32, powers of two) and its fewest columns for the one-pass
   kernel; 0 restores ELLR_DENSE_NB / ELLR_DENSE_MIN_COLS.  For the benchmark's variants. */
void ellr_cuda_set_dense_opts(int nb, int min_cols);

/* Blocks of fewer rows than this are planned on the host (ELLR_HOST_PLAN_ROWS; a negative value restores it):
   0 makes every plan on the GPU, as the tests do to cover both. */
void ellr_cuda_set_host_plan_rows(int32_t rows);

/* Work items of the chunks kernel for a plan (host): returns the number of items and of split
   slices for column-block budget J (J <= 0: no splitting). */
int64_t ellr_cuda_count_items(const ellr_plan *pl, int J, int64_t *nsplit);

#ifdef __cplusplus
}
#endif
#endif
