/*
  ellr_transpose.c - the transpose of a CSR, for a stored transpose: y = A^T x then runs as the product of a matrix
  of its own (every row summed by one group of threads in a fixed order), instead of scattering A's entries into y
  with atomic additions, whose order -- hence rounding -- changes from one product to the next.
*/
#include "ellr.h"

#include <stdlib.h>
#include <string.h>

void ellr_transpose_destroy(ellr_transpose *t)
{
  ellr_free(t->rowptr);
  ellr_free(t->colidx);
  ellr_free(t->val);
  ellr_free(t->map);
  memset(t, 0, sizeof(*t));
}

ellr_status ellr_transpose_create(const ellr_csr *a, ellr_transpose *t)
{
  const int32_t n = a->nrows, m = a->ncols;
  const int64_t nnz = n > 0 ? a->rowptr[n] : 0;
  ellr_status   st;
  memset(t, 0, sizeof(*t));
  if (n < 0 || m < 0) return ellr_error(ELLR_ERR_ARG, "ellr_transpose_create: %d x %d matrix", (int)n, (int)m);
  if ((st = ellr_csr_check_rows(a))) return st;
  t->rowptr = (int32_t *)ellr_calloc((size_t)m + 1, sizeof(int32_t));
  t->colidx = (int32_t *)ellr_malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
  t->val    = (double *)ellr_malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  t->map    = (int32_t *)ellr_malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
  if (!t->rowptr || !t->colidx || !t->val || !t->map) {
    ellr_transpose_destroy(t);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate the transpose of %lld entries", (long long)nnz);
  }
  for (int64_t k = 0; k < nnz; k++) {
    const int32_t c = a->colidx[k];
    if (c < 0 || c >= m) {
      ellr_transpose_destroy(t);
      return ellr_error(ELLR_ERR_ARG, "ellr_transpose_create: column %d outside 0..%d", (int)c, (int)m - 1);
    }
    t->rowptr[c + 1]++;
  }
  for (int32_t c = 0; c < m; c++) t->rowptr[c + 1] += t->rowptr[c];
  /* rows of A in order: each row of the transpose gets its columns increasing */
  int32_t *next = (int32_t *)ellr_malloc((size_t)(m ? m : 1) * sizeof(int32_t));
  if (!next) {
    ellr_transpose_destroy(t);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate the transpose's row counters");
  }
  memcpy(next, t->rowptr, (size_t)m * sizeof(int32_t));
  for (int32_t i = 0; i < n; i++) {
    const int32_t row = a->rows ? a->rows[i] : i;
    for (int32_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
      const int32_t q = next[a->colidx[k]]++;
      t->colidx[q]    = row;
      t->map[q]       = k;
    }
  }
  ellr_free(next);
  memset(&t->csr, 0, sizeof(t->csr)); /* no device copy, no compressed rows */
  t->csr.nrows       = m;
  t->csr.ncols       = ellr_csr_rows_out(a);
  t->csr.rowptr      = t->rowptr;
  t->csr.colidx      = t->colidx;
  t->csr.val         = t->val;
  t->csr.rows        = NULL;
  t->csr.nrows_out   = m;
  t->csr.cols_sorted = 1;
  ellr_transpose_values(a, t);
  return ELLR_OK;
}

void ellr_transpose_values(const ellr_csr *a, ellr_transpose *t)
{
  const int64_t nnz = t->csr.nrows > 0 ? t->rowptr[t->csr.nrows] : 0;
  for (int64_t q = 0; q < nnz; q++) t->val[q] = a->val[t->map[q]];
}
