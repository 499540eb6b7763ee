/* ellr_plan.c - row order, slice geometry, statistics and the fill check (O(nrows)). */
#include "ellr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char ellr_errbuf[512];

const char *ellr_last_error(void) { return ellr_errbuf; }

/* Records why the last call failed; the binding turns it into a PETSc error. */
ellr_status ellr_error(ellr_status st, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ellr_errbuf, sizeof(ellr_errbuf), fmt, ap);
  va_end(ap);
  return st;
}

static _Thread_local int ellr_fail_stage, ellr_fail_fired;

void ellr_test_fail_next(int stage) { ellr_fail_stage = stage; }
int  ellr_test_failures(void) { return ellr_fail_fired; }
int  ellr_test_fail_now(int stage)
{
  if (stage == ELLR_STAGE_NONE || stage != ellr_fail_stage) return 0;
  ellr_fail_stage = ELLR_STAGE_NONE;
  ellr_fail_fired++;
  return 1;
}

ellr_status ellr_params_check(const ellr_params *p)
{
  const int T = p->threads_per_row, bs = p->block_size;
  if (T != ELLR_THREADS_PER_SLICE && (T < 0 || T > ELLR_MAX_THREADS_PER_ROW || (T & (T - 1)))) return ellr_error(ELLR_ERR_ARG, "threads per row %d is not one of 1, 2, 4, 8, 16, 32 (or 0 for automatic, %d for each slice's own)", T, ELLR_THREADS_PER_SLICE);
  if (bs < 0 || bs > 1024 || bs % 32) return ellr_error(ELLR_ERR_ARG, "block size %d is not a multiple of 32 between 32 and 1024 (or 0 for automatic)", bs);
  if (p->slice_height < 0) return ellr_error(ELLR_ERR_ARG, "slice height %d is negative (0 means one slice of all rows)", p->slice_height);
  if (p->sort_window < 0 && p->sort_window != ELLR_SORT_WINDOW_AUTO) return ellr_error(ELLR_ERR_ARG, "sort window %d is negative (0 means all rows, %d picks it from the matrix)", p->sort_window, ELLR_SORT_WINDOW_AUTO);
  if (p->tune < ELLR_TUNE_MODEL || p->tune > ELLR_TUNE_NONE) return ellr_error(ELLR_ERR_ARG, "tune mode %d is not model (0), exhaustive (1) or none (2)", p->tune);
  if (p->index_bits != 0 && p->index_bits != 32) return ellr_error(ELLR_ERR_ARG, "index bits %d is not 0 (16-bit column offsets where a slice's span allows) or 32 (32-bit indices everywhere)", p->index_bits);
  if (p->family < ELLR_FAMILY_SLICED || p->family > ELLR_FAMILY_IPCSR) return ellr_error(ELLR_ERR_ARG, "kernel family %d is not sliced (0), auto (1), csr-vector (2) or ipcsr (3)", p->family);
  if (p->long_row_min < ELLR_LONG_ROWS_NONE) return ellr_error(ELLR_ERR_ARG, "long-row threshold %d is invalid: use a number of entries (1 sends every non-empty row to the long-row path), 0 for automatic or %d for none", p->long_row_min, ELLR_LONG_ROWS_NONE);
  if (p->long_join != ELLR_LONG_JOIN_SEGMENTED && p->long_join != ELLR_LONG_JOIN_ATOMIC) return ellr_error(ELLR_ERR_ARG, "long-row join %d is not segmented (0) or atomic (1)", p->long_join);
  return ELLR_OK;
}

int ellr_default_threads_per_row(double meanrowlen)
{
  int T = 1;
  while (T < ELLR_MAX_THREADS_PER_ROW && 16.0 * T < meanrowlen) T *= 2;
  return T;
}

int32_t ellr_auto_threads(int32_t nrows, int64_t nnz, int32_t nslices, int32_t C, int32_t wmax, const int32_t *width, size_t fixed, double max_fill)
{
  const int32_t Tmean = ellr_default_threads_per_row(nrows ? (double)nnz / nrows : 0.0);
  if (nrows >= ELLR_SMALL_ROWS) return nslices > 1 && ellr_slice_threads(wmax) >= ELLR_SLICE_T_AUTO_SPREAD * Tmean ? ELLR_THREADS_PER_SLICE : Tmean;
  const double csr_bytes = 12.0 * (double)nnz + 4.0 * ((double)nrows + 1);
  int32_t      T         = ellr_threads_for(wmax, ELLR_SMALL_T_ENTRIES);
  for (; T > 1 && max_fill > 0; T /= 2) { /* the fill limit, as the plan checks it */
    int64_t stored = 0;
    for (int32_t s = 0; s < nslices; s++) stored += (int64_t)((width[s] + T - 1) / T * T) * C;
    const double bytes = 12.0 * (double)stored + (double)fixed;
    if (bytes <= max_fill * csr_bytes || bytes <= ELLR_FILL_FLOOR_BYTES) break;
  }
  return T;
}

int64_t ellr_warp_iterations(const int32_t *rowlen, int32_t nrows, int32_t T)
{
  const int32_t rows_per_warp = ELLR_MAX_THREADS_PER_ROW / T;
  int64_t       iters         = 0;
  for (int32_t w = 0; w < nrows; w += rows_per_warp) {
    int32_t longest = 0;
    for (int32_t i = w; i < nrows && i < w + rows_per_warp; i++)
      if (rowlen[i] > longest) longest = rowlen[i];
    iters += (longest + T - 1) / T;
  }
  return iters;
}

int64_t ellr_plan_warp_iterations(const ellr_plan *pl)
{
  if (!pl->per_slice_T) return ellr_warp_iterations(pl->rowlen, pl->nrows, pl->T);
  int64_t iters = 0;
  for (int32_t s = 0; s < pl->nslices; s++) {
    const int32_t T = ellr_plan_slice_T(pl, s), end = (int32_t)((int64_t)(s + 1) * pl->C < pl->nrows ? (int64_t)(s + 1) * pl->C : pl->nrows);
    for (int32_t w = s * pl->C; w < end; w += ELLR_MAX_THREADS_PER_ROW / T) {
      int32_t longest = 0;
      for (int32_t i = w; i < end && i < w + ELLR_MAX_THREADS_PER_ROW / T; i++)
        if (pl->rowlen[i] > longest) longest = pl->rowlen[i];
      iters += (longest + T - 1) / T;
    }
  }
  return iters;
}

typedef struct {
  int32_t len, row;
} ellr_keyed_row;

/* Longest first; ties keep the original order so the permutation is deterministic. */
static int ellr_cmp_longest_first(const void *a, const void *b)
{
  const ellr_keyed_row *ra = (const ellr_keyed_row *)a, *rb = (const ellr_keyed_row *)b;
  if (ra->len != rb->len) return ra->len > rb->len ? -1 : 1;
  return (ra->row > rb->row) - (ra->row < rb->row);
}

/* All rows at once: a stable counting sort, O(nrows + longest row), no comparisons. */
static ellr_status ellr_sort_all_rows(const int32_t *len, int32_t nrows, int32_t maxlen, int32_t *perm)
{
  int64_t *start = (int64_t *)ellr_calloc((size_t)maxlen + 2, sizeof(int64_t));
  if (!start) return ellr_error(ELLR_ERR_MEM, "cannot allocate the row-length histogram (%d lengths)", maxlen + 1);
  for (int32_t r = 0; r < nrows; r++) start[maxlen - len[r] + 1]++; /* bucket 0 holds the longest rows */
  for (int32_t b = 0; b <= maxlen; b++) start[b + 1] += start[b];
  for (int32_t r = 0; r < nrows; r++) perm[start[maxlen - len[r]]++] = r;
  ellr_free(start);
  return ELLR_OK;
}

static ellr_status ellr_sort_rows(const int32_t *len, int32_t nrows, int32_t maxlen, int32_t window, int32_t *perm)
{
  if (window <= 0 || window >= nrows) return ellr_sort_all_rows(len, nrows, maxlen, perm);
  if (maxlen <= 4 * (int64_t)window) { /* each window by the counting sort, O(window + maxlen): the same stable order as qsort's */
    for (int32_t w = 0; w < nrows; w += window) {
      const int32_t cnt = (nrows - w < window) ? nrows - w : window;
      ellr_status   st  = ellr_sort_all_rows(len + w, cnt, maxlen, perm + w);
      if (st) return st;
      for (int32_t i = w; i < w + cnt; i++) perm[i] += w;
    }
    return ELLR_OK;
  }
  ellr_keyed_row *keys = (ellr_keyed_row *)ellr_malloc((size_t)nrows * sizeof(*keys));
  if (!keys) return ellr_error(ELLR_ERR_MEM, "cannot allocate %zu bytes for the row sort", (size_t)nrows * sizeof(*keys));
  for (int32_t r = 0; r < nrows; r++) {
    keys[r].len = len[r];
    keys[r].row = r;
  }
  for (int32_t w = 0; w < nrows; w += window) {
    const int32_t cnt = (nrows - w < window) ? nrows - w : window;
    qsort(keys + w, (size_t)cnt, sizeof(*keys), ellr_cmp_longest_first);
  }
  for (int32_t i = 0; i < nrows; i++) perm[i] = keys[i].row;
  ellr_free(keys);
  return ELLR_OK;
}

/* Entries stored at T = 1 by slices of C rows, stored row i having length len[perm[i]] (perm NULL: identity). */
static int64_t ellr_stored_entries(const int32_t *len, const int32_t *perm, int32_t n, int32_t C)
{
  int64_t total = 0;
  for (int32_t s0 = 0; s0 < n; s0 += C) {
    int32_t w = 0;
    for (int32_t i = s0; i < n && i - s0 < C; i++) {
      const int32_t l = len[perm ? perm[i] : i];
      if (l > w) w = l;
    }
    total += (int64_t)w * C;
  }
  return total;
}

/* The row order of ELLR_SORT_WINDOW_AUTO (ellr.h): perm and *window set, *sorted 0 when rows keep their order. */
static ellr_status ellr_choose_order(const int32_t *len, int32_t n, int32_t maxlen, int32_t C, int32_t *perm, int32_t *window, int32_t *sorted)
{
  ellr_status st;
  if ((st = ellr_sort_rows(len, n, maxlen, 0, perm))) return st;
  const int64_t all = ellr_stored_entries(len, perm, n, C);
  *window           = 0;
  *sorted           = !ELLR_SORT_CLOSE(ellr_stored_entries(len, NULL, n, C), all);
  if (!*sorted) return ELLR_OK;
  int32_t *cand = (int32_t *)ellr_malloc((size_t)n * sizeof(int32_t));
  if (!cand) return ellr_error(ELLR_ERR_MEM, "cannot allocate the row order of %d rows", n);
  static const int64_t mult[2] = {32, 1024};
  for (int k = 0; k < 2; k++) {
    const int64_t W = mult[k] * C;
    if (W >= n) break;
    if ((st = ellr_sort_rows(len, n, maxlen, (int32_t)W, cand))) break;
    if (ELLR_SORT_CLOSE(ellr_stored_entries(len, cand, n, C), all)) {
      memcpy(perm, cand, (size_t)n * sizeof(int32_t));
      *window = (int32_t)W;
      break;
    }
  }
  ellr_free(cand);
  return st;
}

void ellr_plan_destroy(ellr_plan *pl)
{
  ellr_free(pl->slice_start);
  ellr_free(pl->rowlen);
  ellr_free(pl->perm);
  ellr_free(pl->outrow);
  ellr_free(pl->long_rows);
  ellr_free(pl->long_out);
  ellr_free(pl->long_start);
  memset(pl, 0, sizeof(*pl));
}

/* The long rows' storage: their entries (12 bytes each), rows and offsets. */
static size_t ellr_long_bytes(const ellr_plan *pl)
{
  if (!pl->nlong) return 0;
  return (size_t)pl->stats.long_entries * (sizeof(double) + sizeof(int32_t)) + (size_t)pl->nlong * sizeof(int32_t) * (pl->long_out ? 2 : 1) + ((size_t)pl->nlong + 1) * sizeof(int64_t);
}

/* Slice widths, offsets, statistics and the fill check of a plan whose order (rowlen, perm) is set;
   len holds the row lengths in the original order, long rows counted empty.  T is resolved here; the
   statistics of the long rows and of the whole pattern (long_entries, nonempty_rows) are the caller's. */
static ellr_status ellr_plan_geometry(ellr_plan *pl, const ellr_params *p, const int32_t *len, int64_t nnz, int32_t maxlen)
{
  const int32_t n           = pl->nrows;
  const size_t  nstoredrows = (size_t)pl->nslices * (size_t)pl->C;

  const int32_t Tmean = ellr_default_threads_per_row(n ? (double)nnz / n : 0.0);
  pl->slice_start     = (int64_t *)ellr_malloc(((size_t)pl->nslices + 1) * sizeof(int64_t));
  if (!pl->slice_start) return ellr_error(ELLR_ERR_MEM, "cannot allocate the offsets of %d slices", pl->nslices);
  /* each slice's longest row, kept in slice_start[s + 1] until the offsets replace it; the widest slice */
  int32_t *widths = NULL, wmax = 0;
  if (!p->threads_per_row && n < ELLR_SMALL_ROWS && !(widths = (int32_t *)ellr_malloc(((size_t)pl->nslices + 1) * sizeof(int32_t)))) return ellr_error(ELLR_ERR_MEM, "cannot allocate the widths of %d slices", pl->nslices);
  for (int32_t s = 0; s < pl->nslices; s++) {
    int32_t width = 0;
    for (int32_t i = s * pl->C; i < (s + 1) * pl->C && i < n; i++)
      if (pl->rowlen[i] > width) width = pl->rowlen[i];
    pl->slice_start[s + 1] = width;
    if (widths) widths[s] = width;
    if (width > wmax) wmax = width;
  }
  /* automatic (ellr.h); the bytes besides the stored entries' as the statistics below count them */
  const size_t  fixed = nstoredrows * sizeof(int32_t) + (pl->perm ? (size_t)n * sizeof(int32_t) : 0) + (pl->outrow ? (size_t)n * sizeof(int32_t) : 0) + ((size_t)pl->nslices + 1) * sizeof(int64_t) + ellr_long_bytes(pl);
  const int32_t Ta    = p->threads_per_row ? p->threads_per_row : ellr_auto_threads(n, nnz, pl->nslices, pl->C, wmax, widths, fixed, p->max_fill);
  ellr_free(widths);
  pl->per_slice_T = Ta == ELLR_THREADS_PER_SLICE;
  pl->T           = pl->per_slice_T ? ellr_slice_threads(wmax) : Ta; /* per slice: the largest slice's */
  /* Slice s is as wide as its longest row, rounded up to a whole number of T-groups (its own T, per slice). */
  pl->slice_start[0] = 0;
  for (int32_t s = 0; s < pl->nslices; s++) {
    const int64_t width = pl->slice_start[s + 1];
    const int32_t T     = pl->per_slice_T ? ellr_slice_threads(width) : pl->T;
    pl->slice_start[s + 1] = pl->slice_start[s] + (width + T - 1) / T * T * pl->C;
  }

  ellr_stats *sx     = &pl->stats;
  sx->nnz            = nnz;
  sx->nstored        = pl->slice_start[pl->nslices];
  sx->fill           = sx->nnz ? (double)(sx->nstored + sx->long_entries) / (double)sx->nnz : 1.0;
  sx->maxrowlen      = maxlen;
  sx->meanrowlen     = n ? (double)sx->nnz / n : 0.0;
  sx->bytes          = (size_t)sx->nstored * (sizeof(double) + sizeof(int32_t)) + fixed;
  sx->niter          = ellr_plan_warp_iterations(pl);
  sx->niter_unsorted = ellr_warp_iterations(len, n, pl->per_slice_T ? Tmean : pl->T); /* per slice: at the one T of the mean row */

  /* The limit is on memory against CSR's (12 bytes a nonzero + 4 a row), so rows with no
     nonzeros, whose padding is bounded by the slicing, do not trip it on their own; storage
     under ELLR_FILL_FLOOR_BYTES is never refused, whatever its ratio. */
  const double csr_bytes = 12.0 * (double)sx->nnz + 4.0 * ((double)n + 1);
  if (p->max_fill > 0 && (double)sx->bytes > p->max_fill * csr_bytes && sx->bytes > ELLR_FILL_FLOOR_BYTES)
    return ellr_error(ELLR_ERR_FILL, "the padded storage would take %.1f MB, %.1f times the %.1f MB of CSR (more than max fill %g): %lld stored entries for %lld nonzeros, longest row %d, mean %.1f", sx->bytes / 1e6, sx->bytes / csr_bytes, csr_bytes / 1e6, p->max_fill, (long long)sx->nstored, (long long)sx->nnz, maxlen, sx->meanrowlen);
  return ELLR_OK;
}

ellr_status ellr_csr_check_rows(const ellr_csr *a)
{
  if (!a->rows) return ELLR_OK;
  if (a->nrows_out < a->nrows) return ellr_error(ELLR_ERR_ARG, "compressed rows: %d of them in a matrix of %d rows", a->nrows, a->nrows_out);
  for (int32_t i = 0; i < a->nrows; i++)
    if (a->rows[i] < 0 || a->rows[i] >= a->nrows_out || (i > 0 && a->rows[i] <= a->rows[i - 1]))
      return ellr_error(ELLR_ERR_ARG, "compressed row %d is row %d: the rows must increase strictly inside [0, %d)", i, a->rows[i], a->nrows_out);
  return ELLR_OK;
}

/* The long-row path (ellr.h): rows of at least the threshold's entries are listed with their entries' offsets,
   and their length in len becomes 0, so that the order and the slices treat them as empty rows.  Also counts the
   non-empty rows (long ones included). */
static ellr_status ellr_plan_long_rows(const ellr_csr *a, const ellr_params *p, int32_t *len, ellr_plan *pl)
{
  const int32_t n = a->nrows;
  pl->long_min    = ellr_long_row_min(p, a->rowptr[n], n);
  pl->stats.nonempty_rows = 0;
  for (int32_t r = 0; r < n; r++) {
    pl->stats.nonempty_rows += len[r] > 0;
    pl->nlong += len[r] >= pl->long_min;
  }
  if (!pl->nlong) return ELLR_OK;
  pl->long_rows  = (int32_t *)ellr_malloc((size_t)pl->nlong * sizeof(int32_t));
  pl->long_start = (int64_t *)ellr_malloc(((size_t)pl->nlong + 1) * sizeof(int64_t));
  pl->long_out   = a->rows ? (int32_t *)ellr_malloc((size_t)pl->nlong * sizeof(int32_t)) : NULL;
  if (!pl->long_rows || !pl->long_start || (a->rows && !pl->long_out)) return ellr_error(ELLR_ERR_MEM, "cannot allocate the list of %d long rows", pl->nlong);
  int32_t k         = 0;
  pl->long_start[0] = 0;
  for (int32_t r = 0; r < n; r++)
    if (len[r] >= pl->long_min) {
      pl->long_rows[k] = r;
      if (a->rows) pl->long_out[k] = a->rows[r];
      pl->long_start[k + 1] = pl->long_start[k] + len[r];
      len[r]                = 0;
      k++;
    }
  pl->stats.long_entries = pl->long_start[pl->nlong];
  return ELLR_OK;
}

/* Stored row -> row of y for compressed rows (the plan's order is set). */
static ellr_status ellr_plan_outrows(const ellr_csr *a, ellr_plan *pl)
{
  pl->nrows_out = ellr_csr_rows_out(a);
  if (!a->rows) return ELLR_OK;
  pl->outrow = (int32_t *)ellr_malloc((size_t)(pl->nrows ? pl->nrows : 1) * sizeof(int32_t));
  if (!pl->outrow) return ellr_error(ELLR_ERR_MEM, "cannot allocate the row map of %d rows", pl->nrows);
  for (int32_t i = 0; i < pl->nrows; i++) pl->outrow[i] = a->rows[pl->perm ? pl->perm[i] : i];
  return ELLR_OK;
}

ellr_status ellr_plan_create(const ellr_csr *a, const ellr_params *p, ellr_plan *pl)
{
  ellr_status st;
  int32_t    *len = NULL;
  const int32_t n = a->nrows;

  memset(pl, 0, sizeof(*pl));
  if ((st = ellr_params_check(p))) return st;
  if (n < 0 || a->ncols < 0) return ellr_error(ELLR_ERR_ARG, "matrix size %d x %d is negative", n, a->ncols);
  if (!a->rowptr) return ellr_error(ELLR_ERR_ARG, "CSR row offsets are missing");
  if (a->rowptr[0] != 0) return ellr_error(ELLR_ERR_ARG, "CSR row offsets must start at 0, not %d", a->rowptr[0]);
  if ((st = ellr_csr_check_rows(a))) return st;

  pl->nrows   = n;
  pl->ncols   = a->ncols;
  pl->C       = ellr_slice_height(p, n);
  pl->nslices = (int32_t)(((int64_t)n + pl->C - 1) / pl->C);

  const size_t nstoredrows = (size_t)pl->nslices * (size_t)pl->C;
  len        = (int32_t *)ellr_malloc((size_t)(n ? n : 1) * sizeof(int32_t));
  pl->rowlen = (int32_t *)ellr_calloc(nstoredrows ? nstoredrows : 1, sizeof(int32_t));
  if (!len || !pl->rowlen) {
    st = ellr_error(ELLR_ERR_MEM, "cannot allocate the row lengths of %d rows", n);
    goto fail;
  }
  int32_t maxlen = 0;
  for (int32_t r = 0; r < n; r++) {
    len[r] = a->rowptr[r + 1] - a->rowptr[r];
    if (len[r] < 0) {
      st = ellr_error(ELLR_ERR_ARG, "CSR row offsets decrease at row %d", r);
      goto fail;
    }
    if (len[r] > maxlen) maxlen = len[r];
  }
  if ((st = ellr_plan_long_rows(a, p, len, pl))) goto fail;
  if (p->sort_rows && n > 1) {
    pl->perm = (int32_t *)ellr_malloc((size_t)n * sizeof(int32_t));
    if (!pl->perm) {
      st = ellr_error(ELLR_ERR_MEM, "cannot allocate the row permutation of %d rows", n);
      goto fail;
    }
    if (p->sort_window == ELLR_SORT_WINDOW_AUTO) {
      if ((st = ellr_choose_order(len, n, maxlen, pl->C, pl->perm, &pl->window, &pl->sorted))) goto fail;
    } else {
      if ((st = ellr_sort_rows(len, n, maxlen, p->sort_window, pl->perm))) goto fail;
      pl->sorted = 1;
      pl->window = p->sort_window < n ? p->sort_window : 0;
    }
  }
  if (pl->sorted) {
    for (int32_t i = 0; i < n; i++) pl->rowlen[i] = len[pl->perm[i]];
  } else {
    ellr_free(pl->perm);
    pl->perm = NULL;
    memcpy(pl->rowlen, len, (size_t)n * sizeof(int32_t));
  }
  if ((st = ellr_plan_outrows(a, pl))) goto fail;
  if ((st = ellr_plan_geometry(pl, p, len, a->rowptr[n], maxlen))) goto fail;
  ellr_free(len);
  return ELLR_OK;

fail:
  ellr_free(len);
  ellr_plan_destroy(pl);
  return st;
}

ellr_status ellr_plan_retile(const ellr_plan *src, int threads_per_row, const ellr_params *p, ellr_plan *pl)
{
  ellr_status   st;
  ellr_params   q = *p;
  const int32_t n = src->nrows;
  const size_t  nstoredrows = (size_t)src->nslices * (size_t)src->C;
  int32_t      *len;

  memset(pl, 0, sizeof(*pl));
  q.threads_per_row = threads_per_row;
  if ((st = ellr_params_check(&q))) return st;
  pl->nrows   = n;
  pl->ncols   = src->ncols;
  pl->C       = src->C;
  pl->nslices = src->nslices;
  len         = (int32_t *)ellr_malloc((size_t)(n ? n : 1) * sizeof(int32_t));
  pl->rowlen  = (int32_t *)ellr_malloc((nstoredrows ? nstoredrows : 1) * sizeof(int32_t));
  pl->perm    = src->perm ? (int32_t *)ellr_malloc((size_t)n * sizeof(int32_t)) : NULL;
  pl->outrow  = src->outrow ? (int32_t *)ellr_malloc((size_t)n * sizeof(int32_t)) : NULL;
  pl->nrows_out = src->nrows_out;
  if (!len || !pl->rowlen || (src->perm && !pl->perm) || (src->outrow && !pl->outrow)) {
    st = ellr_error(ELLR_ERR_MEM, "cannot allocate the row order of %d rows", n);
    goto fail;
  }
  memcpy(pl->rowlen, src->rowlen, nstoredrows * sizeof(int32_t));
  if (src->perm) memcpy(pl->perm, src->perm, (size_t)n * sizeof(int32_t));
  if (src->outrow) memcpy(pl->outrow, src->outrow, (size_t)n * sizeof(int32_t));
  pl->sorted = src->sorted;
  pl->window = src->window;
  pl->long_min = src->long_min;
  pl->nlong    = src->nlong;
  pl->stats.long_entries  = src->stats.long_entries;
  pl->stats.nonempty_rows = src->stats.nonempty_rows;
  if (src->nlong && src->long_rows) {
    pl->long_rows  = (int32_t *)ellr_malloc((size_t)src->nlong * sizeof(int32_t));
    pl->long_start = (int64_t *)ellr_malloc(((size_t)src->nlong + 1) * sizeof(int64_t));
    pl->long_out   = src->long_out ? (int32_t *)ellr_malloc((size_t)src->nlong * sizeof(int32_t)) : NULL;
    if (!pl->long_rows || !pl->long_start || (src->long_out && !pl->long_out)) {
      st = ellr_error(ELLR_ERR_MEM, "cannot allocate the list of %d long rows", src->nlong);
      goto fail;
    }
    memcpy(pl->long_rows, src->long_rows, (size_t)src->nlong * sizeof(int32_t));
    memcpy(pl->long_start, src->long_start, ((size_t)src->nlong + 1) * sizeof(int64_t));
    if (src->long_out) memcpy(pl->long_out, src->long_out, (size_t)src->nlong * sizeof(int32_t));
  }
  for (int32_t i = 0; i < n; i++) len[src->perm ? src->perm[i] : i] = src->rowlen[i];
  if ((st = ellr_plan_geometry(pl, &q, len, src->stats.nnz, src->stats.maxrowlen))) goto fail;
  ellr_free(len);
  return ELLR_OK;

fail:
  ellr_free(len);
  ellr_plan_destroy(pl);
  return st;
}
