/*
  ellr_cuda_long.cuh - the long-row path of the CUDA backend (ellr.h): for ellr_cuda_plan.cu and ellr_cuda.cu only.

  The long rows keep their entries in CSR order in arrays of their own, cut into chunks of ELLR_LONG_CHUNK
  entries; one warp multiplies one chunk, so a row of 50000 entries keeps 196 warps busy instead of one.  The
  product runs after the slices' (where these rows are empty, so y already holds z or 0 there) and adds each
  row's sum into y: by atomics, or -- the segmented join -- through per-chunk partial sums that the row's last
  warp to finish adds up in a fixed order (deterministic: no atomic on y, only a per-row arrival counter).
*/
#ifndef ELLR_CUDA_LONG_CUH
#define ELLR_CUDA_LONG_CUH

#include "ellr.h"

#include <cuda_runtime.h>

typedef struct {
  int32_t   nlong;       /* long rows */
  int32_t   nchunks;     /* chunks of all of them */
  int64_t   nentries;    /* their entries */
  int32_t  *rows;        /* [nlong] CSR rows, increasing */
  int32_t  *out;         /* [nlong] rows of y with compressed rows; NULL: rows */
  int64_t  *start;       /* [nlong + 1] offsets of their entries in col / val */
  int32_t  *first_chunk; /* [nlong + 1] */
  int32_t  *chunk_row;   /* [nchunks] the long row of each chunk */
  int32_t  *col;         /* [nentries] */
  double   *val;         /* [nentries] */
  double   *partial;     /* [nchunks] the segmented join's partial sums */
  unsigned *arrived;     /* [nlong] the segmented join's arrival counters: 0 between products */
} ellr_dlong;

/* Finds the rows of at least min_len entries (the plan's long_min), sets their length in d_len (the
   lengths in row order, as the plan's first pass wrote them) to 0 and plans their chunks: allocates rows, start,
   first_chunk, chunk_row; sets nlong, nentries, nchunks.  Returns with s synchronized. */
ellr_status ellr_cuda_long_plan(const int32_t *d_rowptr, int32_t n, int32_t min_len, int32_t *d_len, cudaStream_t s, ellr_dlong *lr);
/* Compressed rows (d_rows: CSR row -> row of y): the long rows' rows of y.  Returns with s synchronized. */
ellr_status ellr_cuda_long_outrow(const int32_t *d_rows, cudaStream_t s, ellr_dlong *lr);
/* Copies the long rows' entries out of the device CSR (d_col NULL: values only, after a first full fill);
   the first call allocates the entries and the join's scratch.  Queued on s. */
ellr_status ellr_cuda_long_fill(ellr_dlong *lr, const int32_t *d_rowptr, const int32_t *d_col, const double *d_val, cudaStream_t s);
/* y += (long rows of A) x, or with transpose y += (long rows of A)^T x; join: ELLR_LONG_JOIN_*.  Queued on s,
   after the product of the slices. */
ellr_status ellr_cuda_long_mult(const ellr_dlong *lr, int join, const double *x, double *y, int transpose, cudaStream_t s);
/* Loads the kernel a product will launch (a timed first launch would time the module load). */
void ellr_cuda_long_probe(int join);
/* GPU memory held. */
size_t      ellr_cuda_long_bytes(const ellr_dlong *lr);
ellr_status ellr_cuda_long_free(ellr_dlong *lr);

#endif
