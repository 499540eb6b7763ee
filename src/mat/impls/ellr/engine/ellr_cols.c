/* ellr_cols.c - column indices of the sliced layout, 16-bit per-slice offsets where they fit (host side). */
#include "ellr.h"

#include <stdlib.h>
#include <string.h>

static inline int32_t ellr_orig_row(const ellr_plan *pl, int32_t i) { return pl->perm ? pl->perm[i] : i; }

void ellr_cols_destroy(ellr_cols *c)
{
  ellr_free(c->base);
  ellr_free(c->start);
  ellr_free(c->words);
  memset(c, 0, sizeof(*c));
}

ellr_status ellr_cols_plan(ellr_plan *pl, const ellr_csr *a, int index_bits, int32_t *base, int64_t *start)
{
  if (index_bits != 0 && index_bits != 32) return ellr_error(ELLR_ERR_ARG, "index bits %d is not 0 (automatic) or 32", index_bits);
  /* a slice is packed when its columns' span fits 16 bits: one pass over its rows' CSR columns, or, with the columns
     sorted in each row, over its rows' first and last columns (O(rows): ~60% of a small matrix's host plan otherwise) */
  int32_t packed = 0;
  start[0]       = 0;
  for (int32_t s = 0; s < pl->nslices; s++) {
    int32_t lo = INT32_MAX, hi = -1;
    for (int32_t i = s * pl->C; i < (s + 1) * pl->C && i < pl->nrows; i++) {
      const int32_t *cj = a->colidx + a->rowptr[ellr_orig_row(pl, i)], len = pl->rowlen[i];
      if (a->cols_sorted) {
        if (len > 0 && cj[0] < lo) lo = cj[0];
        if (len > 0 && cj[len - 1] > hi) hi = cj[len - 1];
        continue;
      }
      for (int32_t k = 0; k < len; k++) {
        if (cj[k] < lo) lo = cj[k];
        if (cj[k] > hi) hi = cj[k];
      }
    }
    const int pack = index_bits == 0 && (hi < 0 || (int64_t)hi - lo <= ELLR_COL16_SPAN);
    base[s]        = pack ? (hi < 0 ? 0 : lo) : -1;
    packed += pack;
    start[s + 1] = start[s] + ELLR_COLS_SLICE_WORDS(pl->slice_start[s + 1] - pl->slice_start[s], pack);
  }
  pl->stats.packed_slices = packed;
  pl->stats.index_bytes   = (size_t)start[pl->nslices] * sizeof(uint16_t);
  return ELLR_OK;
}

ellr_status ellr_cols_create(ellr_plan *pl, const ellr_csr *a, int index_bits, ellr_cols *c)
{
  ellr_status st;
  memset(c, 0, sizeof(*c));
  c->base  = (int32_t *)ellr_malloc(((size_t)pl->nslices + 1) * sizeof(int32_t));
  c->start = (int64_t *)ellr_malloc(((size_t)pl->nslices + 1) * sizeof(int64_t));
  if (!c->base || !c->start) {
    ellr_cols_destroy(c);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate the column bases of %d slices", pl->nslices);
  }
  if ((st = ellr_cols_plan(pl, a, index_bits, c->base, c->start))) {
    ellr_cols_destroy(c);
    return st;
  }
  const int64_t nwords = c->start[pl->nslices];
  c->words             = (uint16_t *)ellr_malloc((size_t)(nwords ? nwords : 1) * sizeof(uint16_t));
  if (!c->words) {
    ellr_cols_destroy(c);
    return ellr_error(ELLR_ERR_MEM, "cannot allocate %zu bytes for the column indices", (size_t)nwords * 2);
  }
  /* padding everywhere (0xFFFF, or -1 in both halves of a 32-bit word), then the entries */
  memset(c->words, 0xFF, (size_t)nwords * sizeof(uint16_t));
  for (int32_t i = 0; i < pl->nrows; i++) {
    const int32_t  s  = i / pl->C;
    const int64_t  s0 = pl->slice_start[s];
    uint16_t      *w  = c->words + c->start[s];
    const int32_t *cj = a->colidx + a->rowptr[ellr_orig_row(pl, i)];
    const int64_t  p0 = ellr_pos(pl, i, 0) - s0;
    const int32_t  T  = ellr_plan_slice_T(pl, s);
    const int64_t  step = (int64_t)pl->C * T;
    for (int32_t k = 0; k < pl->rowlen[i]; k++) {
      const int64_t q = p0 + (k / T) * step + k % T;
      if (c->base[s] >= 0) w[q] = (uint16_t)(cj[k] - c->base[s]);
      else memcpy(w + 2 * q, cj + k, sizeof(int32_t));
    }
  }
  return ELLR_OK;
}
