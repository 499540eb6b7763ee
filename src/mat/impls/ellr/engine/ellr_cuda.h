/*
  ellr_cuda.h - the CUDA backend of the engine (PETSc-free).

  Device storage has the host layout of ellr.h.  The O(n) plan is made on the host;
  the CSR is uploaded once and the O(nnz) fill runs on the GPU, so that tuning the
  threads per row (which changes the layout) costs a device fill, not a host rebuild.
  All pointers passed to the products are device pointers unless the name says host.
*/
#ifndef ELLR_CUDA_H
#define ELLR_CUDA_H

#include "ellr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ellr_cuda_matrix ellr_cuda_matrix;

/* Number of usable CUDA devices; 0 when there is no device or no driver (never an error). */
int ellr_cuda_device_count(void);

/* Makes device (local_rank mod device count) current for this host thread: one GPU per MPI rank
   of a node.  Used when PETSc itself has no CUDA and so chooses no device. */
ellr_status ellr_cuda_select_device(int local_rank);

/* What the device copy chose and cost. */
typedef struct {
  int          threads_per_row; /* T in use (tuned when params asked for 0) */
  int          block_size;      /* threads per block in use (tuned when params asked for 0) */
  size_t       device_bytes;    /* GPU memory held by the matrix */
  double       plan_ms;         /* host plan */
  double       upload_ms;       /* CSR to the GPU */
  double       fill_ms;         /* layout filled on the GPU */
  double       tune_ms;         /* autotuning products */
  int          tune_products;   /* products spent tuning */
  const ellr_plan *plan;        /* the plan in use (host copy, for statistics) */
} ellr_cuda_info;

/* Builds the device storage of a with parameters p (threads_per_row or block_size 0:
   tuned in a pre-process of a few products).  Fails with ELLR_ERR_FILL before any GPU
   allocation when max_fill is exceeded, and with ELLR_ERR_CUDA naming the bytes asked
   for when the GPU lacks memory.  Nothing is leaked on failure. */
ellr_status ellr_cuda_create(const ellr_csr *a, const ellr_params *p, ellr_cuda_matrix **d);

/* New values, same pattern: uploads the values and refills the layout on the GPU. */
ellr_status ellr_cuda_update_values(ellr_cuda_matrix *d, const ellr_csr *a);

/* y = A x (+ z) or, with transpose, y = A^T x (+ z); z may be NULL or alias y.
   Device pointers; runs on the given stream (NULL = the default stream). */
ellr_status ellr_cuda_mult(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, void *stream);

/* The same product on host arrays, staged through pinned buffers owned by d. */
ellr_status ellr_cuda_mult_host(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose);

void        ellr_cuda_get_info(const ellr_cuda_matrix *d, ellr_cuda_info *info);
ellr_status ellr_cuda_destroy(ellr_cuda_matrix *d);

#ifdef __cplusplus
}
#endif
#endif
