/*
  ellr_cuda_dense.cuh - the product of the sliced layout with a dense block of columns, C = A B (ellr_cuda_dense.cu, a
  module of its own, loaded at the first such product only), for ellr_cuda.cu.

  One thread per stored row walks the row once (ELLPACK-R's rowlen, whatever the slice's T: entry e of the row sits
  at (e / T) C T + (row % C) T + e % T, ellr.h) and keeps NB sums, one per column of B, so that each stored index and
  value is read once for NB columns: a block of k columns reads A ceil(k / NB) times, from L1/L2 after the first pass
  of a row, instead of k times as k products would.  B and C are column-major (PETSc's dense layout); the threads of
  a warp are neighbouring rows, so each column's reads of B at a stencil's neighbours fall on few cache lines, as x's
  do in the product.  A row's sum runs in entry order: the same bits in every product (no atomics), rounded
  differently from the one-vector product's T-lane sums.
*/
#ifndef ELLR_CUDA_DENSE_CUH
#define ELLR_CUDA_DENSE_CUH

#include <cstdint>
#include <cuda_runtime.h>

struct ellr_dense_args {
  int32_t         nrows;       /* stored rows */
  int32_t         C;           /* slice height */
  int32_t         T;           /* threads per row of every slice; 0: each slice's own (ellr_slice_threads of its width) */
  const int64_t  *slice_start; /* [nslices + 1] */
  const int32_t  *rowlen;      /* [nslices * C] */
  const int32_t  *outrow;      /* [nrows] stored row -> row of C, or NULL */
  const uint16_t *cw;          /* column indices (ellr_kargs.cw) */
  const int32_t  *cbase;       /* [nslices] */
  const int64_t  *cstart;      /* [nslices + 1] */
  const double   *val;
  int32_t         k;           /* columns of B and C */
  int64_t         ldb, ldc;
  const double   *B;
  double         *Cm;
};

/* Sums per thread at most (a block of 16 columns: measured in doc/performance.md, "Sparse x dense"). */
#define ELLR_DENSE_MAX_NB 32

/* Launches C = A B with nb sums per thread (1, 2, 4, 8, 16 or 32); probe: load the module instead. */
cudaError_t ellr_cuda_launch_dense(int nb, int block, cudaStream_t s, const ellr_dense_args &a, bool probe);

#endif
