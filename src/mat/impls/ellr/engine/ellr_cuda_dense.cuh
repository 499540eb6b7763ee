/*
  ellr_cuda_dense.cuh - the product of the sliced layout with a dense block of columns, C = A B (ellr_cuda_dense.cu, a
  module of its own, loaded at the first such product only), for ellr_cuda.cu.

  One thread per stored row walks the row once (ELLPACK-R's rowlen, whatever the slice's T: entry e of the row sits
  at (e / T) C T + (row % C) T + e % T, ellr.h) and keeps NB sums, one per column of B, so that each stored index and
  value is read once for NB columns: a block of k columns reads A ceil(k / NB) times, from L1/L2 after the first pass
  of a row, instead of k times as k products would.  NB = 4 (ELLR_DENSE_NB): measured on the H100 on the three
  stencils (doc/performance.md, "Sparse x dense"), 16 and 64 columns, against 8 sums per thread: 1.26-1.39x faster
  on 3d7 and 2d5 (rows of 5-7 entries), 0.93x on 3d27 (27); 16 and 32 sums were slower still (fewer rows in flight
  to hide the gathers of B, more registers per thread).  B and C are column-major (PETSc's dense layout); the threads of
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

/* The most sums per thread the kernel is built for (ELLR_DENSE_NB, ellr_cuda.h, is the one used). */
#define ELLR_DENSE_MAX_NB 32

/* Launches C = A B with nb sums per thread (1, 2, 4, 8, 16 or 32; another nb: cudaErrorInvalidValue); probe: load the
   module instead. */
cudaError_t ellr_cuda_launch_dense(int nb, int block, cudaStream_t s, const ellr_dense_args &a, bool probe);

/* The diagonal (Jacobi's) from the storage, into diag (zeroed by the caller): with the layout's arrays of a (k, B, ldb,
   ldc unused; Cm = diag), one thread per stored row writes the entry whose column is its row of y; the long rows
   (lr: their entries left the slices) and the CSR families' arrays (c) likewise, one thread per row. */
struct ellr_csr_diag_args {
  int32_t        nrows;
  const int32_t *rowptr, *col, *rows; /* rows: CSR row -> row of y, or NULL */
  const double  *val;
};
struct ellr_long_diag_args {
  int32_t        nlong;
  const int32_t *rows, *out, *col;
  const int64_t *start;
  const double  *val;
};
cudaError_t ellr_cuda_launch_diagonal(cudaStream_t s, const ellr_dense_args *sliced, const ellr_long_diag_args *lr, const ellr_csr_diag_args *csr, double *diag);

#endif
