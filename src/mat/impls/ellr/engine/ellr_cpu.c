/* ellr_cpu.c - products on the padded storage, host side (the CPU backend). */
#include "ellr.h"

#include <string.h>

void ellr_cpu_mult(const ellr_matrix *m, const double *x, const double *z, double *y)
{
  const ellr_plan *pl   = &m->plan;
  const int32_t   *out  = ellr_plan_outrow(pl);
  if (pl->outrow && z != y) { /* compressed rows: the rows the matrix lacks get z (or 0); then add in place */
    if (z) memcpy(y, z, (size_t)pl->nrows_out * sizeof(double));
    else memset(y, 0, (size_t)pl->nrows_out * sizeof(double));
    z = y;
  }
  for (int32_t i = 0; i < pl->nrows; i++) {
    const int32_t r    = out ? out[i] : i;
    const int64_t base = ellr_pos(pl, i, 0);
    const int32_t T    = ellr_plan_slice_T(pl, i / pl->C);
    const int64_t step = (int64_t)pl->C * T;
    double        sum  = z ? z[r] : 0.0; /* from z, entry by entry: AIJ's order (MatMultAdd_SeqAIJ without I-nodes) */
    for (int32_t k = 0; k < pl->rowlen[i]; k++) {
      const int64_t p = base + (k / T) * step + k % T;
      sum += m->val[p] * x[ellr_matrix_col(m, i, p)];
    }
    y[r] = sum;
  }
  /* the long rows: empty in the slices, so y holds z (or 0) there */
  for (int32_t k = 0; k < pl->nlong; k++) {
    const int32_t r   = pl->long_out ? pl->long_out[k] : pl->long_rows[k];
    double        sum = y[r];
    for (int64_t e = pl->long_start[k]; e < pl->long_start[k + 1]; e++) sum += m->long_val[e] * x[m->long_col[e]];
    y[r] = sum;
  }
}

void ellr_cpu_mult_transpose(const ellr_matrix *m, const double *x, const double *z, double *y)
{
  const ellr_plan *pl  = &m->plan;
  const int32_t   *out = ellr_plan_outrow(pl);
  if (!z) memset(y, 0, (size_t)pl->ncols * sizeof(double));
  else if (z != y) memcpy(y, z, (size_t)pl->ncols * sizeof(double));
  /* rows in CSR order, each adding into y entry by entry: AIJ's order (MatMultTransposeAdd_SeqAIJ) */
  for (int32_t r = 0; r < pl->nrows; r++) {
    const int32_t i = m->csr_order ? m->csr_order[r] : r;
    if (i < 0) { /* long row k */
      const int32_t k  = -i - 1;
      const double  xr = x[pl->long_out ? pl->long_out[k] : pl->long_rows[k]];
      for (int64_t e = pl->long_start[k]; e < pl->long_start[k + 1]; e++) y[m->long_col[e]] += m->long_val[e] * xr;
      continue;
    }
    const double  xr   = x[out ? out[i] : i];
    const int64_t base = ellr_pos(pl, i, 0);
    const int32_t T    = ellr_plan_slice_T(pl, i / pl->C);
    const int64_t step = (int64_t)pl->C * T;
    for (int32_t k = 0; k < pl->rowlen[i]; k++) {
      const int64_t p = base + (k / T) * step + k % T;
      y[ellr_matrix_col(m, i, p)] += m->val[p] * xr;
    }
  }
}
