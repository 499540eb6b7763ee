/*
  ellr_cuda_csr.cuh - the CSR kernel families of the CUDA backend (the adaptive CSR-vector and IPCSR), for ellr_cuda.cu only.

  They multiply with the CSR arrays that ellr_cuda_create uploads: choosing one of them keeps those arrays as
  the storage and frees the padded layout.  PETSc-free plain struct + functions, as the rest of the engine.
*/
#ifndef ELLR_CUDA_CSR_CUH
#define ELLR_CUDA_CSR_CUH

#include "ellr.h"

#include <cuda_runtime.h>

#define ELLR_IPCSR_CAP 1024 /* nonzeros: IPCSR row blocks hold fewer than 2 CAP; a longer row is a block of its own */

typedef struct {
  int            family;        /* ELLR_FAMILY_CSR_VECTOR or ELLR_FAMILY_IPCSR */
  int            T;             /* CSR-vector: lanes per row (both families' transposes use it too) */
  int32_t        nrows, ncols;  /* CSR rows (compressed rows: the stored ones) and columns */
  int32_t        nrows_out;     /* rows of y */
  const int32_t *rowptr, *col;  /* device CSR (owned by the caller) */
  const double  *val;
  const int32_t *rows;          /* device compressed rows (CSR row -> row of y) or NULL (owned by the caller) */
  int32_t       *blocks;        /* IPCSR row blocks [nblocks + 1] (owned) */
  int32_t        nblocks;
  int32_t        nlong;         /* IPCSR: rows longer than ELLR_IPCSR_CAP (one block each) */
} ellr_csr_dev;

/* Lanes per row of the adaptive CSR-vector from the mean row length: the power of two nearest to it, 1 to 32. */
int ellr_csr_vector_threads(double meanrowlen);

/* What a family needs before its first product (IPCSR: the row blocks, built on the GPU from the row
   offsets); returns with s synchronized. */
ellr_status ellr_cuda_csr_prepare(ellr_csr_dev *c, cudaStream_t s);

/* y = A x (+ z) or y = A^T x (+ z), device vectors, queued on s.  block_size: CSR-vector's threads per block. */
ellr_status ellr_cuda_csr_mult(const ellr_csr_dev *c, const double *x, const double *z, double *y, int transpose, int block_size, cudaStream_t s);

/* Loads the kernels a product will launch (CUDA loads modules at the first launch: a timed first product
   would time the load). */
void ellr_cuda_csr_probe(const ellr_csr_dev *c);

/* Frees what prepare allocated. */
ellr_status ellr_cuda_csr_free(ellr_csr_dev *c);

#endif
