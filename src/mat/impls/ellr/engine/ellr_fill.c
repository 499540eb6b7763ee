/* ellr_fill.c - the host storage: values scattered into the planned layout (O(nnz)), column indices by ellr_cols.c; the long rows' entries. */
#include "ellr.h"

#include <stdlib.h>
#include <string.h>

static inline int32_t ellr_orig_row(const ellr_plan *pl, int32_t i) { return pl->perm ? pl->perm[i] : i; }

static void fill_values(ellr_matrix *m, const ellr_csr *a)
{
  const ellr_plan *pl   = &m->plan;
  for (int32_t i = 0; i < pl->nrows; i++) {
    const double *aj   = a->val + a->rowptr[ellr_orig_row(pl, i)];
    const int64_t base = ellr_pos(pl, i, 0);
    const int32_t T    = ellr_plan_slice_T(pl, i / pl->C);
    const int64_t step = (int64_t)pl->C * T;
    for (int32_t k = 0; k < pl->rowlen[i]; k++) m->val[base + (k / T) * step + k % T] = aj[k];
  }
  for (int32_t k = 0; k < pl->nlong; k++) memcpy(m->long_val + pl->long_start[k], a->val + a->rowptr[pl->long_rows[k]], (size_t)(pl->long_start[k + 1] - pl->long_start[k]) * sizeof(double));
}

ellr_status ellr_fill_values(ellr_matrix *m, const ellr_csr *a)
{
  if (ellr_test_fail_now(ELLR_STAGE_UPDATE)) return ellr_error(ELLR_ERR_MEM, "a refill failed (injected by the test hook)");
  fill_values(m, a);
  return ELLR_OK;
}

/* The long rows' column indices (their values come with ellr_fill_values). */
static ellr_status ellr_long_create(ellr_matrix *m, const ellr_csr *a)
{
  const ellr_plan *pl = &m->plan;
  const size_t     ne = (size_t)pl->stats.long_entries;
  if (!pl->nlong) return ELLR_OK;
  m->long_col = (int32_t *)ellr_malloc((ne ? ne : 1) * sizeof(int32_t));
  m->long_val = (double *)ellr_malloc((ne ? ne : 1) * sizeof(double));
  if (!m->long_col || !m->long_val) return ellr_error(ELLR_ERR_MEM, "cannot allocate %zu bytes for the long rows", ne * 12);
  for (int32_t k = 0; k < pl->nlong; k++) memcpy(m->long_col + pl->long_start[k], a->colidx + a->rowptr[pl->long_rows[k]], (size_t)(pl->long_start[k + 1] - pl->long_start[k]) * sizeof(int32_t));
  return ELLR_OK;
}

ellr_status ellr_matrix_create(const ellr_csr *a, const ellr_params *p, ellr_matrix *m)
{
  ellr_status st;
  memset(m, 0, sizeof(*m));
  if ((st = ellr_plan_create(a, p, &m->plan))) return st;
  const size_t n = (size_t)m->plan.stats.nstored;
  /* calloc: padding must read as value 0.0 */
  m->val = (double *)ellr_calloc(n ? n : 1, sizeof(double));
  if (!m->val) {
    ellr_matrix_destroy(m);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate %zu bytes for the padded storage", n * sizeof(double));
  }
  if ((st = ellr_cols_create(&m->plan, a, p->index_bits, &m->cols)) || (st = ellr_long_create(m, a))) {
    ellr_matrix_destroy(m);
    return st;
  }
  if (ellr_test_fail_now(ELLR_STAGE_CREATE)) {
    ellr_matrix_destroy(m);
    return ellr_error(ELLR_ERR_MEM, "the storage could not be allocated (injected by the test hook)");
  }
  if (m->plan.perm || m->plan.nlong) {
    m->csr_order = (int32_t *)ellr_malloc((size_t)(m->plan.nrows ? m->plan.nrows : 1) * sizeof(int32_t));
    if (!m->csr_order) {
      ellr_matrix_destroy(m);
      return ellr_error(ELLR_ERR_MEM, "cannot allocate the row order of %d rows", (int)m->plan.nrows);
    }
    for (int32_t i = 0; i < m->plan.nrows; i++) m->csr_order[ellr_orig_row(&m->plan, i)] = i;
    for (int32_t k = 0; k < m->plan.nlong; k++) m->csr_order[m->plan.long_rows[k]] = -(k + 1);
  }
  fill_values(m, a);
  return ELLR_OK;
}

void ellr_matrix_destroy(ellr_matrix *m)
{
  ellr_plan_destroy(&m->plan);
  ellr_cols_destroy(&m->cols);
  ellr_free(m->val);
  ellr_free(m->long_col);
  ellr_free(m->long_val);
  ellr_free(m->csr_order);
  m->csr_order = NULL;
  m->val      = NULL;
  m->long_col = NULL;
  m->long_val = NULL;
}
