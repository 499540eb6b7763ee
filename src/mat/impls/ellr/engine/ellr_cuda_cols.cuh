/*
  ellr_cuda_cols.cuh - the column indices' geometry of the sliced layout on the GPU (ellr_cuda_cols.cu), for
  ellr_cuda.cu only: which slices take 16-bit offsets (ellr.h's ellr_cols) and where each slice's indices begin.
*/
#ifndef ELLR_CUDA_COLS_CUH
#define ELLR_CUDA_COLS_CUH

#include "ellr_cuda_plan.cuh"

typedef struct {
  int32_t  *base;   /* [nslices]: base column of a 16-bit slice, -1 for 32-bit indices */
  int64_t  *start;  /* [nslices + 1], in 16-bit words */
  uint16_t *words;  /* [nwords], allocated by the caller */
  int64_t   nwords; /* start[nslices] */
  int32_t   nslices_cap;
  int       borrowed; /* base and start live in the host plan's upload (ellr_dplan.block), freed with the plan */
} ellr_dcols;

/* Spans of each slice's columns (the CSR on the device, in the plan's order) -> base and start of every slice
   (allocated, or reused when the slice count is unchanged); nwords and pl->stats.packed_slices / index_bytes
   set.  index_bits: 0 automatic, 32 never packed.  Returns with s synchronized. */
ellr_status ellr_cuda_cols_plan(const ellr_plan *pl, const ellr_dplan *dp, const int32_t *d_rowptr, const int32_t *d_col, int index_bits, cudaStream_t s, ellr_dcols *c, ellr_stats *st);

/* The same from the host CSR a (its rows' columns increasing: a->cols_sorted), without its column indices on the
   device: each row's first and last column, found on the host, go up in chunks of rows (8 bytes a row, through a
   staging buffer of at most stage_rows rows) and are reduced per slice on the GPU.  For a build that streams the
   CSR through the device chunk by chunk (ellr_cuda.cu). */
ellr_status ellr_cuda_cols_plan_host(const ellr_plan *pl, const ellr_dplan *dp, const ellr_csr *a, int index_bits, int32_t stage_rows, cudaStream_t s, ellr_dcols *c, ellr_stats *st);

ellr_status ellr_cuda_cols_free(ellr_dcols *c);

#endif
