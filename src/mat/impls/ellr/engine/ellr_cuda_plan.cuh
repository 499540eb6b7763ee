/*
  ellr_cuda_plan.cuh - the plan of ellr.h made on the GPU (ellr_cuda_plan.cu), for ellr_cuda.cu only.

  The host plan (ellr_plan_create) is an O(n) pass that must finish before anything reaches the GPU; this
  one starts from the row offsets once they are on the device and leaves on the host only what the host
  needs: the scalars and statistics of ellr_plan and a copy of the slice offsets (O(nslices)).  The order
  and geometry are the host plan's: rows sorted by decreasing length with ties in row order (a stable
  radix sort), slices as wide as their longest row rounded up to T.
*/
#ifndef ELLR_CUDA_PLAN_CUH
#define ELLR_CUDA_PLAN_CUH

#include "ellr.h"
#include "ellr_cuda_long.cuh"

#include <cuda_runtime.h>

/* Blocks of fewer rows are planned on the host instead (ellr_plan_create, then its arrays uploaded; not with long
   rows, whose list the GPU plan makes): an O(n) pass of microseconds there against the GPU plan's dozen dependent
   launches, read-backs and scratch allocations, 0.3-0.5 ms on small matrices (H100, doc/performance.md), and
   none of the plan's kernels to load in a process's first matrix. */
#define ELLR_HOST_PLAN_ROWS ELLR_SMALL_ROWS
/* ... and of fewer entries than this: the host's column pass is O(nnz) on one core (~3.5 ns per entry on the H100's
   host, 3d7 24^3), so a short block of long rows would pay milliseconds there; 2^17 covers the matrices measured
   planned on the host (memplus, 126k entries, the largest), the GPU plan takes the rest. */
#define ELLR_HOST_PLAN_NNZ ((int64_t)1 << 17)

/* The device arrays of a plan made on the GPU. */
typedef struct {
  int32_t *rowlen;      /* [nslices * C], stored order, 0 past the last row */
  int32_t *perm;        /* [nrows], stored row -> original row; NULL when rows keep their order */
  int32_t *outrow;      /* [nrows], stored row -> row of y, with compressed rows (ellr_csr.rows); else NULL */
  int64_t *slice_start; /* [nslices + 1] */
  uint64_t signature;   /* hash of the row lengths (and sizes): equal patterns' lengths give equal signatures */
  ellr_dlong lr;        /* the long rows (ellr.h's long-row path): their list and chunks; their entries once filled */
  char    *block;       /* the host plan's upload, one allocation: rowlen, perm, outrow and slice_start above point into
                           it (and the column bases and offsets, ellr_dcols.borrowed); NULL for a GPU plan */
  int32_t *unused;      /* a permutation the order step made and did not keep: freed with the plan, or by create once
                           its upload is in (a cudaFree in between would wait for that upload) */
} ellr_dplan;

/* Row lengths and order from the device row offsets d_rowptr (nnz = d_rowptr[nrows]) on stream s:
   allocates dp->rowlen and dp->perm, sets pl's sizes, C, nslices, sorted and the statistics that do not
   depend on T (nnz, maxrowlen, nonempty_rows, meanrowlen).  Returns with s synchronized. */
ellr_status ellr_cuda_plan_order(const int32_t *d_rowptr, int32_t nrows, int32_t ncols, int64_t nnz, const ellr_params *p, cudaStream_t s, ellr_plan *pl, ellr_dplan *dp);

/* Slice widths and offsets for threads per row T (0: automatic, ellr_default_threads_per_row or each slice's own by
   ellr.h's rule; ELLR_THREADS_PER_SLICE: each slice's own) on stream s: fills
   dp->slice_start (allocated at the first call), pl->slice_start (host copy), pl->T and the remaining
   statistics (nstored, fill, bytes, niter; niter_unsorted when d_rowptr is given).  ELLR_ERR_FILL when the
   storage would exceed p->max_fill (as the host plan).  Returns with s synchronized. */
ellr_status ellr_cuda_plan_geometry(const int32_t *d_rowptr, int T, const ellr_params *p, cudaStream_t s, ellr_plan *pl, ellr_dplan *dp);

/* Compressed rows (device array d_rows[nrows], checked by the caller on the host): maps the stored rows to the
   rows of y (dp->outrow); sets pl->nrows_out (nrows without compressed rows, when d_rows is NULL).  After
   ellr_cuda_plan_order.  Returns with s synchronized. */
ellr_status ellr_cuda_plan_outrow(const int32_t *d_rows, int32_t nrows_out, cudaStream_t s, ellr_plan *pl, ellr_dplan *dp);

/* The signature ellr_cuda_plan_order gives the pattern of these host row offsets (the pattern cache's key, whichever
   plan is made), and the longest row. */
uint64_t ellr_cuda_plan_signature(const int32_t *rowptr, int32_t nrows, int32_t ncols, int32_t *maxlen);

/* Frees dp's device arrays (not pl: ellr_plan_destroy frees the host copy). */
ellr_status ellr_cuda_plan_free(ellr_dplan *dp);

#endif
