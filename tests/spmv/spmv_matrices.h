/*
  spmv_matrices.h - the spmv benchmark's extra generated matrices (plain C, PETSc-free):
  power-law row lengths of several skews, and short rows with scattered columns (circuit-like).
  Each generator is deterministic for its seed; the benchmark checks every product against the
  host CSR reference, so the values only need to be nonzero.
*/
#ifndef SPMV_MATRICES_H
#define SPMV_MATRICES_H

#include <stddef.h>
#include <stdint.h>

#include "ellr_testlib.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One power-law matrix: row lengths Pareto(xmin, alpha) clamped to [1, maxlen]. */
typedef struct {
  double  alpha, xmin;
  int32_t maxlen;
} spmv_powerlaw_spec;

#define SPMV_POWERLAW_XMIN   13.5  /* as the original "powerlaw 2M": mean length ~27 at alpha 2 */
#define SPMV_POWERLAW_MAXLEN 50000 /* alpha 1.6 reaches it on 2M rows (its expected longest row is ~1e5) */

/* Parses "alpha[:maxlen],alpha[:maxlen],..." (e.g. "1.6,3.0" or "1.6:20000") into at most maxn specs
   with xmin; maxlen defaults to SPMV_POWERLAW_MAXLEN.  Returns the number of specs, or -1 with err set. */
int spmv_parse_powerlaw(const char *list, double xmin, spmv_powerlaw_spec *out, int maxn, char *err, size_t errlen);

/* Square power-law matrix of nrows rows (tcsr_powerlaw: columns uniform, distinct, sorted).  Returns 0 on success. */
int spmv_gen_powerlaw(tcsr *a, int32_t nrows, const spmv_powerlaw_spec *s, uint64_t seed);

/* Square matrix whose rows hold the diagonal plus minlen..maxlen (uniform) off-diagonal entries with
   columns uniform over all columns, distinct, sorted: short rows whose x reads hit a new cache line almost
   every entry, as in circuit matrices.  Diagonal 1 + the row's sum of |off-diagonal|.  Returns 0 on success. */
int spmv_gen_shortrow_scattered(tcsr *a, int32_t nrows, int minlen, int maxlen, uint64_t seed);

/* "2M", "500k" or "1234": the row count in a matrix name. */
void spmv_rows_label(int64_t n, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
