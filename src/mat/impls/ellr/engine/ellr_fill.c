/* ellr_fill.c - scatter CSR entries into the planned layout (O(nnz)), host side. */
#include "ellr.h"

#include <stdlib.h>
#include <string.h>

static inline int32_t ellr_orig_row(const ellr_plan *pl, int32_t i) { return pl->perm ? pl->perm[i] : i; }

void ellr_fill(const ellr_plan *pl, const ellr_csr *a, int32_t *col, double *val)
{
  const int64_t step = (int64_t)pl->C * pl->T;
  for (int32_t i = 0; i < pl->nrows; i++) {
    const int32_t r    = ellr_orig_row(pl, i);
    const int32_t *cj  = a->colidx + a->rowptr[r];
    const double  *aj  = a->val + a->rowptr[r];
    const int64_t base = ellr_pos(pl, i, 0);
    for (int32_t k = 0; k < pl->rowlen[i]; k++) {
      const int64_t p = base + (k / pl->T) * step + k % pl->T;
      col[p]          = cj[k];
      val[p]          = aj[k];
    }
  }
}

void ellr_fill_values(const ellr_plan *pl, const ellr_csr *a, double *val)
{
  const int64_t step = (int64_t)pl->C * pl->T;
  for (int32_t i = 0; i < pl->nrows; i++) {
    const double *aj   = a->val + a->rowptr[ellr_orig_row(pl, i)];
    const int64_t base = ellr_pos(pl, i, 0);
    for (int32_t k = 0; k < pl->rowlen[i]; k++) val[base + (k / pl->T) * step + k % pl->T] = aj[k];
  }
}

ellr_status ellr_matrix_create(const ellr_csr *a, const ellr_params *p, ellr_matrix *m)
{
  ellr_status st;
  memset(m, 0, sizeof(*m));
  if ((st = ellr_plan_create(a, p, &m->plan))) return st;
  const size_t n = (size_t)m->plan.stats.nstored;
  /* calloc: padding must read as column 0 and value 0.0 */
  m->col = (int32_t *)calloc(n ? n : 1, sizeof(int32_t));
  m->val = (double *)calloc(n ? n : 1, sizeof(double));
  if (!m->col || !m->val) {
    ellr_matrix_destroy(m);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate %zu bytes for the padded storage", n * (sizeof(int32_t) + sizeof(double)));
  }
  ellr_fill(&m->plan, a, m->col, m->val);
  return ELLR_OK;
}

void ellr_matrix_destroy(ellr_matrix *m)
{
  ellr_plan_destroy(&m->plan);
  free(m->col);
  free(m->val);
  m->col = NULL;
  m->val = NULL;
}
