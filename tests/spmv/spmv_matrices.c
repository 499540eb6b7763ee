/* spmv_matrices.c - the spmv benchmark's extra generated matrices (see spmv_matrices.h). */
#include "spmv_matrices.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int spmv_parse_powerlaw(const char *list, double xmin, spmv_powerlaw_spec *out, int maxn, char *err, size_t errlen)
{
  int         n = 0;
  const char *p = list ? list : "";
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    char  *e;
    double alpha  = strtod(p, &e);
    long   maxlen = SPMV_POWERLAW_MAXLEN;
    /* alpha <= 1 has no finite mean: the rows would all hit maxlen, which is no power law any more */
    if (e == p || !(alpha > 1.0) || alpha > 100.0) {
      snprintf(err, errlen, "--powerlaw: bad alpha at \"%s\" (want numbers > 1, e.g. \"1.6,3.0\")", p);
      return -1;
    }
    p = e;
    if (*p == ':') {
      errno  = 0;
      maxlen = strtol(p + 1, &e, 10);
      if (e == p + 1 || errno || maxlen < 1 || maxlen > INT32_MAX) {
        snprintf(err, errlen, "--powerlaw: bad maxlen at \"%s\" (alpha:maxlen, maxlen >= 1)", p);
        return -1;
      }
      p = e;
    }
    if (*p && *p != ',' && *p != ' ') {
      snprintf(err, errlen, "--powerlaw: unexpected \"%s\"", p);
      return -1;
    }
    if (n == maxn) {
      snprintf(err, errlen, "--powerlaw: more than %d skews", maxn);
      return -1;
    }
    out[n].alpha  = alpha;
    out[n].xmin   = xmin;
    out[n].maxlen = (int32_t)maxlen;
    n++;
  }
  return n;
}

int spmv_gen_powerlaw(tcsr *a, int32_t nrows, const spmv_powerlaw_spec *s, uint64_t seed)
{
  return tcsr_powerlaw(a, nrows, nrows, s->xmin, s->alpha, s->maxlen, seed);
}

/* Length of one row's off-diagonal part, from the lengths' own stream (drawn twice: to size, then to fill). */
static int32_t short_len(uint64_t *rng, int minlen, int maxlen) { return minlen + (int32_t)trng_below(rng, (int64_t)maxlen - minlen + 1); }

int spmv_gen_shortrow_scattered(tcsr *a, int32_t nrows, int minlen, int maxlen, uint64_t seed)
{
  if (nrows < 1 || minlen < 0 || maxlen < minlen) return 1;
  if (maxlen > nrows - 1) maxlen = nrows - 1; /* distinct off-diagonal columns */
  if (maxlen > 63) maxlen = 63;               /* short rows: the row buffers below bound them */
  if (minlen > maxlen) minlen = maxlen;
  const uint64_t lseed = seed * 0x9E3779B97F4A7C15ull + 11;
  uint64_t       lrng  = lseed;
  int64_t        nnz   = 0;
  for (int32_t r = 0; r < nrows; r++) nnz += 1 + short_len(&lrng, minlen, maxlen);
  if (nnz >= INT32_MAX || tcsr_alloc(a, nrows, nrows, nnz)) return 1;
  uint64_t rng = seed * 0x2545F4914F6CDD1Dull + 99;
  lrng         = lseed;
  int32_t c[64];
  double  v[64];
  for (int32_t r = 0; r < nrows; r++) {
    const int32_t k = short_len(&lrng, minlen, maxlen);
    int32_t       m = 0;
    c[m++]          = r;
    while (m < k + 1) { /* rejection: with a handful of entries among millions of columns it almost never repeats */
      const int32_t j   = (int32_t)trng_below(&rng, nrows);
      int           dup = 0;
      for (int32_t q = 0; q < m && !dup; q++) dup = c[q] == j;
      if (!dup) c[m++] = j;
    }
    for (int32_t i = 1; i < m; i++) { /* insertion sort: at most 64 entries */
      const int32_t t = c[i];
      int32_t       q = i - 1;
      while (q >= 0 && c[q] > t) {
        c[q + 1] = c[q];
        q--;
      }
      c[q + 1] = t;
    }
    double off = 0;
    for (int32_t i = 0; i < m; i++) {
      v[i] = c[i] == r ? 0.0 : trng_value(&rng);
      off += fabs(v[i]);
    }
    const int32_t base = a->rowptr[r];
    for (int32_t i = 0; i < m; i++) {
      a->colidx[base + i] = c[i];
      a->val[base + i]    = c[i] == r ? 1.0 + off : v[i];
    }
    a->rowptr[r + 1] = base + m;
  }
  return 0;
}

void spmv_rows_label(int64_t n, char *buf, size_t len)
{
  if (n >= 1000000 && n % 1000000 == 0) snprintf(buf, len, "%lldM", (long long)(n / 1000000));
  else if (n >= 1000 && n % 1000 == 0) snprintf(buf, len, "%lldk", (long long)(n / 1000));
  else snprintf(buf, len, "%lld", (long long)n);
}
