/*
  test_engine.c - differential test of the storage engine on the CPU (PETSc-free).

  Random CSR matrices of odd shapes x layout parameters -> ellr_cpu_mult / ellr_cpu_mult_transpose
  (with and without z, z aliasing y), compared with a CSR reference; outputs are poisoned (NaN)
  before each product.  Also: the values-only refill, the plan's statistics against brute-force
  counts, the layout itself (every entry where ellr_pos says, padding column -1 / value 0, 16-bit column offsets exactly where a slice's span allows), and
  the error paths.  Prints a few summary lines and "test_engine: N checks passed".
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ellr.h"
#include "ellr_testlib.h"

static long g_checks, g_failed;
static int  g_auto_order[3]; /* ELLR_SORT_WINDOW_AUTO's outcomes seen: rows kept in order, a window, all rows */
static int  g_long_seen[2];  /* plans with some long rows, with every non-empty row long */

#define CHECK(cond, ...) \
  do { \
    g_checks++; \
    if (!(cond)) { \
      g_failed++; \
      if (g_failed <= 30) { \
        printf("FAIL %s:%d: ", __FILE__, __LINE__); \
        printf(__VA_ARGS__); \
        printf("\n"); \
      } \
    } \
  } while (0)

#define TOL 1e-12

typedef struct {
  const char *name;
  tcsr        a;
  int         auto_T_only; /* a large shape: automatic T only (the large matrices' rule), to keep the test quick */
} shape;

/* ---- brute-force reference of the plan ------------------------------------------------- */
/* Stable order of decreasing length inside windows, by selection (O(n^2) per window, small n). */
static void brute_perm(const int32_t *len, int32_t n, int32_t window, int32_t *perm)
{
  char *used = (char *)calloc((size_t)n + 1, 1);
  if (window <= 0) window = n;
  for (int32_t w = 0; w < n; w += window) {
    const int32_t end = w + window < n ? w + window : n;
    for (int32_t i = w; i < end; i++) {
      int32_t best = -1;
      for (int32_t r = w; r < end; r++)
        if (!used[r] && (best < 0 || len[r] > len[best])) best = r;
      used[best] = 1;
      perm[i]    = best;
    }
  }
  free(used);
}

/* Entries stored at T = 1 by slices of C rows, stored row i of length len[perm[i]] (perm NULL: identity). */
static int64_t brute_stored(const int32_t *len, const int32_t *perm, int32_t n, int32_t C)
{
  int64_t total = 0;
  for (int32_t s = 0; s * (int64_t)C < n; s++) {
    int32_t w = 0;
    for (int32_t i = s * C; i < n && i < (s + 1) * C; i++) w = len[perm ? perm[i] : i] > w ? len[perm ? perm[i] : i] : w;
    total += (int64_t)w * C;
  }
  return total;
}

/* Warp iterations by simulation: a warp of 32/T rows loops while any row has entries left. */
static int64_t brute_niter(const int32_t *len, int32_t n, int32_t T)
{
  int64_t it = 0;
  for (int32_t w = 0; w < n; w += 32 / T) {
    int32_t left[32];
    int     m = 0;
    for (int32_t i = w; i < n && i < w + 32 / T; i++) left[m++] = len[i];
    for (;;) {
      int any = 0;
      for (int q = 0; q < m; q++)
        if (left[q] > 0) any = 1;
      if (!any) break;
      it++;
      for (int q = 0; q < m; q++) left[q] -= T;
    }
  }
  return it;
}

/* Per-slice T (ELLR_THREADS_PER_SLICE), written out apart from the engine's: the smallest of 1, 2, 4, .., 32 whose
   16 entries per thread cover the slice's longest row. */
static int32_t brute_slice_T(int64_t width)
{
  static const int32_t Ts[] = {1, 2, 4, 8, 16, 32};
  for (int k = 0; k < 5; k++)
    if (16 * (int64_t)Ts[k] >= width) return Ts[k];
  return 32;
}

/* Warp iterations with each slice's own T: warps of 32/T rows inside each slice of C rows. */
static int64_t brute_niter_per_slice(const int32_t *slen, int32_t n, int32_t C, const int32_t *sT)
{
  int64_t it = 0;
  for (int32_t s0 = 0; s0 < n; s0 += C) it += brute_niter(slen + s0, n - s0 < C ? n - s0 : C, sT[s0 / C]);
  return it;
}

static int g_sliceT_changes; /* adjacent slices of different T seen with per-slice T (the test asks for some) */
static int g_auto_per_slice; /* automatic T that came out per slice */
static int g_auto_small[2];   /* automatic T of small matrices: [0] equal to the mean row's, [1] another */

static void check_plan(const char *name, const tcsr *a, const ellr_params *p, const ellr_matrix *m)
{
  const ellr_plan *pl = &m->plan;
  const int32_t    n  = a->nrows;
  const int64_t    nnz = tcsr_nnz(a);
  int32_t         *len = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
  int32_t         *perm = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
  int32_t         *slen = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
  int32_t          maxlen = 0, nonempty = 0;
  for (int32_t r = 0; r < n; r++) {
    len[r] = a->rowptr[r + 1] - a->rowptr[r];
    if (len[r] > maxlen) maxlen = len[r];
    nonempty += len[r] > 0;
  }
  /* the long rows: at least the threshold's entries (automatic: unsorted rows of a matrix of 2^20 entries or more,
     max(512, 16 x the mean rounded up)); they are
     listed in row order with their entries in CSR order, and count as empty rows from here on */
  const int64_t lmin = p->long_row_min == ELLR_LONG_ROWS_NONE ? INT32_MAX : p->long_row_min > 0 ? p->long_row_min : (p->sort_rows || nnz < (1 << 20)) ? INT32_MAX : (n && 16 * ((nnz + n - 1) / n) > 512 ? 16 * ((nnz + n - 1) / n) : 512);
  int32_t       nlong = 0;
  int64_t       lent  = 0;
  int           lg_ok = pl->long_min == (int32_t)lmin;
  for (int32_t r = 0; r < n; r++)
    if (len[r] >= lmin) {
      lg_ok &= nlong < pl->nlong && pl->long_rows[nlong] == r && pl->long_start[nlong] == lent && pl->long_start[nlong + 1] == lent + len[r];
      lg_ok &= !pl->long_out; /* no compressed rows here */
      for (int32_t k = 0; lg_ok && k < len[r]; k++) lg_ok &= m->long_col[lent + k] == a->colidx[a->rowptr[r] + k] && m->long_val[lent + k] == a->val[a->rowptr[r] + k];
      nlong++;
      lent += len[r];
      len[r] = 0;
    }
  CHECK(lg_ok && pl->nlong == nlong && pl->stats.long_entries == lent, "%s: long rows: %d rows / %lld entries (want %d / %lld), threshold %d (want %lld)", name, pl->nlong, (long long)pl->stats.long_entries, nlong, (long long)lent, pl->long_min, (long long)lmin);
  if (nlong) g_long_seen[nlong == nonempty ? 1 : 0]++;
  int           per_slice = p->threads_per_row == ELLR_THREADS_PER_SLICE;
  const int32_t Tmean     = ellr_default_threads_per_row(n ? (double)nnz / n : 0.0);
  const int32_t C = (p->slice_height > 0 && p->slice_height < n) ? p->slice_height : (n ? n : 1); /* a slice taller than the matrix is the whole matrix */
  CHECK(pl->C == C && pl->nrows == n && pl->ncols == a->ncols, "%s: geometry C %d/%d per-slice %d", name, pl->C, C, pl->per_slice_T);
  int     sorted = p->sort_rows && n > 1;
  int32_t window = sorted && p->sort_window > 0 && p->sort_window < n ? p->sort_window : 0;
  if (sorted && p->sort_window == ELLR_SORT_WINDOW_AUTO) {
    /* the window picked from the matrix: none when a full sort stores >= 98% of the rows' own order, else the
       first of 32 C and 1024 C (under n) within 2% of the full sort, else all rows */
    int32_t *cand = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
    brute_perm(len, n, 0, perm);
    const int64_t all = brute_stored(len, perm, n, C);
    sorted            = 100 * brute_stored(len, NULL, n, C) > 102 * all;
    for (int k = 0; sorted && k < 2; k++) {
      const int64_t W = (k ? 1024 : 32) * (int64_t)C;
      if (W >= n) break;
      brute_perm(len, n, (int32_t)W, cand);
      if (100 * brute_stored(len, cand, n, C) <= 102 * all) {
        window = (int32_t)W;
        break;
      }
    }
    free(cand);
    g_auto_order[!sorted ? 0 : window ? 1 : 2]++;
  }
  CHECK(sorted ? pl->perm != NULL : pl->perm == NULL, "%s: perm presence", name);
  CHECK(pl->sorted == sorted && pl->window == window, "%s: sorted flag %d (want %d), window %d (want %d)", name, pl->sorted, sorted, pl->window, window);
  if (sorted) {
    brute_perm(len, n, window, perm);
    int same = 1;
    for (int32_t i = 0; i < n; i++) same &= perm[i] == pl->perm[i];
    CHECK(same, "%s: permutation differs from a stable sort by decreasing length", name);
  } else
    for (int32_t i = 0; i < n; i++) perm[i] = i;
  for (int32_t i = 0; i < n; i++) slen[i] = len[perm[i]];
  /* automatic T: under 32768 rows one T, the smallest power of two with 4 T >= the widest slice (at most 32);
     else per slice where some slice's T is 4 times the mean row's or more */
  int32_t Tauto = Tmean;
  if (!p->threads_per_row && n < 32768) {
    int32_t w = 0;
    for (int32_t i = 0; i < n; i++) w = slen[i] > w ? slen[i] : w;
    for (Tauto = 1; Tauto < 32 && 4 * Tauto < w; Tauto *= 2) {}
    g_auto_small[Tauto != Tmean]++;
  } else if (!p->threads_per_row && n > C) { /* several slices */
    int32_t thi = 1;
    for (int32_t s0 = 0; s0 < n; s0 += C) {
      int32_t w = 0;
      for (int32_t i = s0; i < n && i < s0 + C; i++) w = slen[i] > w ? slen[i] : w;
      thi = brute_slice_T(w) > thi ? brute_slice_T(w) : thi;
    }
    per_slice = thi >= 4 * Tmean;
    if (per_slice) g_auto_per_slice++;
  }
  int32_t T = p->threads_per_row > 0 ? p->threads_per_row : per_slice ? 1 : Tauto; /* per slice: the largest, below */
  /* brute nstored: per slice the widest row rounded up to T (per slice: the slice's own), times C */
  const int32_t nslices = (n + C - 1) / C;
  int64_t       nstored = 0, rl_ok = 1;
  int32_t      *sT      = (int32_t *)malloc(((size_t)nslices + 1) * sizeof(int32_t));
  for (int32_t s = 0; s < nslices; s++) {
    int32_t w = 0;
    for (int32_t i = s * C; i < n && i < (s + 1) * C; i++) w = slen[i] > w ? slen[i] : w;
    sT[s] = per_slice ? brute_slice_T(w) : T;
    if (sT[s] > T) T = sT[s];
    if (per_slice && s > 0 && sT[s] != sT[s - 1]) g_sliceT_changes++;
    CHECK(ellr_plan_slice_T(pl, s) == sT[s], "%s: slice %d has T %d, want %d", name, s, ellr_plan_slice_T(pl, s), sT[s]);
    w = (w + sT[s] - 1) / sT[s] * sT[s];
    CHECK(pl->slice_start[s] == nstored, "%s: slice_start[%d]", name, s);
    nstored += (int64_t)w * C;
  }
  CHECK(pl->T == T && pl->per_slice_T == per_slice, "%s: T %d, want %d (per slice %d, want %d)", name, pl->T, T, pl->per_slice_T, per_slice);
  for (int64_t i = 0; i < (int64_t)nslices * C; i++) rl_ok &= pl->rowlen[i] == (i < n ? slen[i] : 0);
  CHECK(rl_ok, "%s: rowlen in stored order", name);
  CHECK(pl->nslices == nslices && pl->slice_start[nslices] == nstored && pl->stats.nstored == nstored, "%s: nstored %lld vs %lld", name, (long long)pl->stats.nstored, (long long)nstored);
  CHECK(pl->stats.nnz == nnz && pl->stats.maxrowlen == maxlen && pl->stats.nonempty_rows == nonempty, "%s: nnz/maxrowlen/nonempty rows", name);
  CHECK(fabs(pl->stats.fill - (nnz ? (double)(nstored + lent) / nnz : 1.0)) < 1e-12, "%s: fill %g", name, pl->stats.fill);
  CHECK(fabs(pl->stats.meanrowlen - (n ? (double)nnz / n : 0.0)) < 1e-12, "%s: meanrowlen", name);
  const size_t bytes = (size_t)nstored * 12 + (size_t)nslices * C * 4 + (sorted ? (size_t)n * 4 : 0) + ((size_t)nslices + 1) * 8 + (nlong ? (size_t)lent * 12 + (size_t)nlong * 4 + ((size_t)nlong + 1) * 8 : 0);
  CHECK(pl->stats.bytes == bytes, "%s: bytes %zu vs %zu", name, pl->stats.bytes, bytes);
  const int64_t niter = per_slice ? brute_niter_per_slice(slen, n, C, sT) : brute_niter(slen, n, T);
  CHECK(pl->stats.niter == niter, "%s: niter %lld vs %lld", name, (long long)pl->stats.niter, (long long)niter);
  CHECK(pl->stats.niter_unsorted == brute_niter(len, n, per_slice ? Tmean : T), "%s: niter_unsorted", name);

  /* the column indices: a slice is packed (16-bit offsets from its smallest column) exactly when index_bits
     is automatic and its span fits; its words as ELLR_COLS_SLICE_WORDS says */
  int     pk_ok = 1, npacked = 0;
  int64_t words = 0;
  for (int32_t s = 0; s < nslices; s++) {
    int32_t lo = INT32_MAX, hi = -1;
    for (int32_t i = s * C; i < n && i < (s + 1) * C; i++)
      for (int32_t k = 0; k < slen[i]; k++) {
        const int32_t c = a->colidx[a->rowptr[perm[i]] + k];
        lo              = c < lo ? c : lo;
        hi              = c > hi ? c : hi;
      }
    const int packed = p->index_bits == 0 && (hi < 0 || hi - lo <= 65534);
    pk_ok &= m->cols.base[s] == (packed ? (hi < 0 ? 0 : lo) : -1) && m->cols.start[s] == words;
    npacked += packed;
    words += ((packed ? 1 : 2) * (pl->slice_start[s + 1] - pl->slice_start[s]) + 31) / 32 * 32;
  }
  CHECK(pk_ok && m->cols.start[nslices] == words && pl->stats.packed_slices == npacked && pl->stats.index_bytes == (size_t)words * 2, "%s: column packing (%d packed slices, want %d; %zu index bytes, want %lld)", name, pl->stats.packed_slices, npacked, pl->stats.index_bytes, (long long)words * 2);

  /* the layout: each entry at ellr_pos, padding column -1 and value 0.0 */
  char *hit = (char *)calloc((size_t)nstored + 1, 1);
  int   lay_ok = 1;
  for (int32_t i = 0; i < n; i++) {
    const int32_t r = perm[i];
    for (int32_t k = 0; k < slen[i]; k++) {
      const int64_t s  = i / C, Ts = sT[s];
      const int64_t ps = pl->slice_start[s] + (int64_t)(k / Ts) * C * Ts + (int64_t)(i % C) * Ts + k % Ts;
      lay_ok &= ps == ellr_pos(pl, i, k) && ps < nstored && !hit[ps];
      if (ps < nstored) {
        hit[ps] = 1;
        lay_ok &= ellr_matrix_col(m, i, ps) == a->colidx[a->rowptr[r] + k] && m->val[ps] == a->val[a->rowptr[r] + k];
      }
    }
  }
  for (int32_t s = 0; s < nslices; s++) {
    const int32_t width = (int32_t)((pl->slice_start[s + 1] - pl->slice_start[s]) / C);
    for (int32_t i = s * C; i < (s + 1) * C; i++)
      for (int32_t k = 0; k < width; k++) {
        const int64_t ps = ellr_pos(pl, i, k);
        if (!hit[ps]) lay_ok &= ellr_matrix_col(m, i, ps) == -1 && m->val[ps] == 0.0;
      }
  }
  CHECK(lay_ok, "%s: layout positions/padding", name);
  free(hit);
  free(sT);
  free(len);
  free(perm);
  free(slen);
}

/* ---- products -------------------------------------------------------------------------- */
static void check_products(const char *name, const tcsr *a, const ellr_matrix *m, uint64_t seed)
{
  const int32_t n = a->nrows, nc = a->ncols;
  const size_t  big = (size_t)(n > nc ? n : nc) + 1;
  double *x = (double *)malloc(big * sizeof(double)), *z = (double *)malloc(big * sizeof(double));
  double *y = (double *)malloc(big * sizeof(double)), *ref = (double *)malloc(big * sizeof(double));
  double  e;

  /* y = A x */
  tfill_random(x, nc, seed);
  tfill_random(z, n, seed + 1);
  tcsr_spmv(a, x, NULL, ref);
  tfill_nan(y, n);
  ellr_cpu_mult(m, x, NULL, y);
  e = trel_err(y, ref, n);
  CHECK(e <= TOL, "%s: mult err %g", name, e);
  /* y = A x + z */
  tcsr_spmv(a, x, z, ref);
  tfill_nan(y, n);
  ellr_cpu_mult(m, x, z, y);
  e = trel_err(y, ref, n);
  CHECK(e <= TOL, "%s: multadd err %g", name, e);
  /* y = A x + y (z aliases y) */
  memcpy(y, z, (size_t)n * sizeof(double));
  ellr_cpu_mult(m, x, y, y);
  e = trel_err(y, ref, n);
  CHECK(e <= TOL, "%s: multadd aliased err %g", name, e);

  /* y = A^T x (+ z) */
  tfill_random(x, n, seed + 2);
  tfill_random(z, nc, seed + 3);
  tcsr_spmv_transpose(a, x, NULL, ref);
  tfill_nan(y, nc);
  ellr_cpu_mult_transpose(m, x, NULL, y);
  e = trel_err(y, ref, nc);
  CHECK(e <= TOL, "%s: transpose err %g", name, e);
  tcsr_spmv_transpose(a, x, z, ref);
  tfill_nan(y, nc);
  ellr_cpu_mult_transpose(m, x, z, y);
  e = trel_err(y, ref, nc);
  CHECK(e <= TOL, "%s: transpose add err %g", name, e);
  memcpy(y, z, (size_t)nc * sizeof(double));
  ellr_cpu_mult_transpose(m, x, y, y);
  e = trel_err(y, ref, nc);
  CHECK(e <= TOL, "%s: transpose add aliased err %g", name, e);
  free(x);
  free(z);
  free(y);
  free(ref);
}

/* Retiling a plan to another T (what GPU tuning does) gives the plan made from scratch with that T. */
static void check_retile(const char *name, const tcsr *a, const ellr_params *p, const ellr_plan *src)
{
  static const int Ts[] = {1, 4, 32, ELLR_THREADS_PER_SLICE};
  for (size_t k = 0; k < sizeof(Ts) / sizeof(Ts[0]); k++) {
    ellr_params q = *p;
    ellr_plan   r, f;
    ellr_csr    v = tcsr_view(a);
    q.threads_per_row = Ts[k];
    ellr_status s1 = ellr_plan_retile(src, Ts[k], p, &r), s2 = ellr_plan_create(&v, &q, &f);
    CHECK(s1 == s2, "%s: retile to T=%d status %d vs create %d", name, Ts[k], s1, s2);
    if (s1 || s2) {
      if (!s1) ellr_plan_destroy(&r);
      if (!s2) ellr_plan_destroy(&f);
      continue;
    }
    const size_t rows = (size_t)f.nslices * f.C;
    int same = r.T == f.T && r.per_slice_T == f.per_slice_T && r.C == f.C && r.nslices == f.nslices && !memcmp(r.slice_start, f.slice_start, ((size_t)f.nslices + 1) * sizeof(int64_t)) && !memcmp(r.rowlen, f.rowlen, rows * sizeof(int32_t));
    same = same && (r.perm == NULL) == (f.perm == NULL) && (!f.perm || !memcmp(r.perm, f.perm, (size_t)f.nrows * sizeof(int32_t)));
    same = same && r.stats.nstored == f.stats.nstored && r.stats.bytes == f.stats.bytes && r.stats.niter == f.stats.niter && r.stats.niter_unsorted == f.stats.niter_unsorted && r.stats.nnz == f.stats.nnz && r.stats.maxrowlen == f.stats.maxrowlen;
    CHECK(same, "%s: retile to T=%d differs from a fresh plan", name, Ts[k]);
    ellr_plan_destroy(&r);
    ellr_plan_destroy(&f);
  }
}

static void run_shape(shape *sh, int *nconfigs)
{
  static const int Ts[] = {0, 1, 2, 4, 8, 16, 32, ELLR_THREADS_PER_SLICE};
  static const int Cs[] = {0, 1, 7, 32};
  static const int sorts[][2] = {{0, 0}, {1, 0}, {1, 5}, {1, 64}, {1, ELLR_SORT_WINDOW_AUTO}};
  char             name[200];
  int32_t          maxlen = 0;
  for (int32_t r = 0; r < sh->a.nrows; r++)
    if (sh->a.rowptr[r + 1] - sh->a.rowptr[r] > maxlen) maxlen = sh->a.rowptr[r + 1] - sh->a.rowptr[r];
  for (size_t it = 0; it < sizeof(Ts) / sizeof(Ts[0]); it++)
    for (size_t ic = 0; ic < sizeof(Cs) / sizeof(Cs[0]); ic++)
      for (size_t is = 0; is < sizeof(sorts) / sizeof(sorts[0]); is++) {
        if (sh->auto_T_only && Ts[it] != 0) continue;
        ellr_params p = {Ts[it], 0, Cs[ic], sorts[is][0], sorts[is][1], 0.0, 0, 0, 0, 0, 0, 0};
        p.index_bits  = (it + ic + is) % 2 ? 32 : 0; /* 16-bit offsets where they fit, or 32-bit indices everywhere */
        /* the long-row threshold: automatic, none, every non-empty row, half the longest row (some rows) */
        const int lmodes[4] = {0, ELLR_LONG_ROWS_NONE, 1, maxlen / 2 > 1 ? maxlen / 2 : 2};
        p.long_row_min      = lmodes[(it + is) % 4];
        ellr_matrix m;
        snprintf(name, sizeof(name), "%s T=%d C=%d sort=%d window=%d bits=%d long=%d", sh->name, p.threads_per_row, p.slice_height, p.sort_rows, p.sort_window, p.index_bits ? 32 : 16, p.long_row_min);
        ellr_csr v = tcsr_view(&sh->a);
        if ((it + is) % 3 == 1) v.cols_sorted = 0; /* the column packing's every-entry pass too, where the shortcut would do */
        ellr_status st = ellr_matrix_create(&v, &p, &m);
        CHECK(st == ELLR_OK, "%s: create failed (%d: %s)", name, st, ellr_last_error());
        if (st) continue;
        (*nconfigs)++;
        check_plan(name, &sh->a, &p, &m);
        check_retile(name, &sh->a, &p, &m.plan);
        check_products(name, &sh->a, &m, 1000 + it * 100 + ic * 10 + is);
        /* values-only refill: new values, same pattern */
        tcsr b = sh->a;
        const int64_t nnz = tcsr_nnz(&b);
        b.val = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
        memcpy(b.val, sh->a.val, (size_t)nnz * sizeof(double));
        tcsr_randomize_values(&b, 77 + it + ic + is);
        ellr_csr vb = tcsr_view(&b);
        ellr_fill_values(&m, &vb);
        snprintf(name, sizeof(name), "%s T=%d C=%d sort=%d window=%d (refilled)", sh->name, p.threads_per_row, p.slice_height, p.sort_rows, p.sort_window);
        check_products(name, &b, &m, 555 + it);
        free(b.val);
        ellr_matrix_destroy(&m);
      }
}

/* Compressed rows (an MPI off-diagonal block's non-empty rows only): the products are those of the whole
   matrix, every row of y written (z or 0 where the matrix has no row), and a values refill goes through. */
static void check_compressed(const shape *sh)
{
  static const int cfg[][5] = {{0, 0, 0, 0, 0}, {1, 32, 1, 0, 0}, {4, 7, 1, 5, 1}, {2, 0, 1, 0, 3}, {2, 32, 0, 0, 2}}; /* T, C, sort, window, long-row threshold */
  tcsr     c;
  int32_t *rows = NULL;
  char     name[200];
  if (tcsr_compress_rows(&sh->a, &c, &rows)) {
    CHECK(0, "%s: cannot compress rows", sh->name);
    return;
  }
  for (size_t k = 0; k < sizeof(cfg) / sizeof(cfg[0]); k++) {
    ellr_params p = {cfg[k][0], 0, cfg[k][1], cfg[k][2], cfg[k][3], 0.0, 0, 0, 0, 0, cfg[k][4], 0};
    ellr_matrix m;
    ellr_csr    v = tcsr_view_compressed(&c, rows, sh->a.nrows);
    snprintf(name, sizeof(name), "%s compressed (%d of %d rows) T=%d C=%d sort=%d/%d long=%d", sh->name, c.nrows, sh->a.nrows, p.threads_per_row, p.slice_height, p.sort_rows, p.sort_window, p.long_row_min);
    ellr_status st = ellr_matrix_create(&v, &p, &m);
    CHECK(st == ELLR_OK, "%s: create failed: %s", name, ellr_last_error());
    if (st) continue;
    CHECK(m.plan.nrows == c.nrows && m.plan.nrows_out == sh->a.nrows && (c.nrows == 0 || m.plan.outrow) && (!m.plan.nlong || m.plan.long_out), "%s: plan rows %d / out %d", name, m.plan.nrows, m.plan.nrows_out);
    check_products(name, &sh->a, &m, 4000 + k);
    tcsr b = sh->a, bc = c;
    b.val  = (double *)malloc((size_t)(tcsr_nnz(&c) ? tcsr_nnz(&c) : 1) * sizeof(double));
    memcpy(b.val, c.val, (size_t)tcsr_nnz(&c) * sizeof(double));
    tcsr_randomize_values(&b, 4100 + k); /* the same nonzeros in the same order, whole and compressed */
    bc.val      = b.val;
    ellr_csr vb = tcsr_view_compressed(&bc, rows, sh->a.nrows);
    ellr_fill_values(&m, &vb);
    strncat(name, " (refilled)", sizeof(name) - strlen(name) - 1);
    check_products(name, &b, &m, 4200 + k);
    free(b.val);
    ellr_matrix_destroy(&m);
  }
  /* rows out of order or outside the matrix: refused, naming the row */
  if (c.nrows >= 2) {
    ellr_matrix m;
    int32_t     t = rows[0];
    rows[0]       = rows[1];
    ellr_csr    v = tcsr_view_compressed(&c, rows, sh->a.nrows);
    ellr_params p = {1, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0};
    ellr_status st = ellr_matrix_create(&v, &p, &m);
    CHECK(st == ELLR_ERR_ARG && strstr(ellr_last_error(), "increase strictly"), "%s: unordered compressed rows: %d '%s'", sh->name, st, ellr_last_error());
    rows[0] = t;
    v.nrows_out = rows[c.nrows - 1];
    st          = ellr_matrix_create(&v, &p, &m);
    CHECK(st == ELLR_ERR_ARG, "%s: a compressed row past nrows_out: %d", sh->name, st);
  }
  free(rows);
  tcsr_free(&c);
}

static int contains(const char *s, const char *t) { return strstr(s, t) != NULL; }

/* Every host allocation of a set-up can fail: the k-th one is made to return NULL for k = 1, 2, ... until a set-up
   succeeds; each must give ELLR_ERR_MEM and leave nothing allocated (the matrix destroyable as it is). */
static void check_alloc_failures(const char *name, const tcsr *a, const ellr_params *p)
{
  const ellr_csr v    = tcsr_view(a);
  const long     live = tcount_live();
  int            k;
  for (k = 1; k < 1000; k++) {
    ellr_matrix m;
    tcount_fail_at(k);
    const ellr_status st = ellr_matrix_create(&v, p, &m);
    tcount_fail_at(0);
    if (st == ELLR_OK) {
      ellr_matrix_destroy(&m);
      CHECK(tcount_live() == live, "%s: %ld host blocks left after destroy", name, tcount_live() - live);
      break;
    }
    CHECK(st == ELLR_ERR_MEM, "%s: allocation %d failed, status %d (want ELLR_ERR_MEM): %s", name, k, st, ellr_last_error());
    ellr_matrix_destroy(&m); /* a failed create leaves m destroyable */
    CHECK(tcount_live() == live, "%s: allocation %d failed, %ld host blocks left", name, k, tcount_live() - live);
  }
  CHECK(k > 1 && k < 1000, "%s: set-up never succeeded or never allocated (%d tries)", name, k);
  printf("%-20s host allocation failures: each of the %d allocations of a set-up failed once, cleanly\n", name, k - 1);
}

static void check_errors(void)
{
  tcsr        a;
  ellr_plan   pl;
  ellr_matrix m;
  ellr_status st;
  tcsr_random(&a, 40, 30, 3.0, 0.2, 5, 9); /* one dense row: full-width ELLPACK pads 30x */
  ellr_csr v = tcsr_view(&a);

  ellr_params bad[] = {
    {3, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0},  {64, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0}, {-2, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0}, {1, 33, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0},
    {1, 2048, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0}, {1, 0, -1, 0, 0, 0.0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 1, -4, 0.0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0.0, 3, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0.0, 0, 0, 7, 0, 0, 0},
    {1, 0, 0, 0, 0, 0.0, 0, 0, 0, 16, 0, 0}, {1, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, -2, 0}, {1, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 2},
  };
  const char *what[] = {"threads per row 3", "threads per row 64", "threads per row -2", "block size 33", "block size 2048", "slice height -1", "sort window -4", "tune mode 3", "kernel family 7", "index bits 16", "long-row threshold -2", "long-row join 2"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    st = ellr_plan_create(&v, &bad[i], &pl);
    CHECK(st == ELLR_ERR_ARG && contains(ellr_last_error(), what[i]), "bad param %zu: status %d, message '%s'", i, st, ellr_last_error());
    CHECK(pl.slice_start == NULL && pl.rowlen == NULL && pl.perm == NULL, "bad param %zu: plan not cleared", i);
    st = ellr_matrix_create(&v, &bad[i], &m);
    CHECK(st == ELLR_ERR_ARG && m.cols.words == NULL && m.val == NULL, "bad param %zu through matrix_create: %d", i, st);
  }
  /* max_fill exceeded: refused in the plan (storage bytes against CSR's, above a 1 MB floor), with
     the ratio and the limit in the message; a 20000-row matrix with one dense row would pad to 4.8 GB */
  tcsr big;
  tcsr_random(&big, 20000, 20000, 1.0, 0.0, 7, 21);
  ellr_csr    vbig = tcsr_view(&big);
  ellr_params pf   = {1, 0, 0, 0, 0, 2.0, 0, 0, 0, 0, ELLR_LONG_ROWS_NONE, 0};
  st               = ellr_plan_create(&vbig, &pf, &pl);
  CHECK(st == ELLR_ERR_FILL && contains(ellr_last_error(), "times the") && contains(ellr_last_error(), "max fill 2"), "max_fill: status %d, message '%s'", st, ellr_last_error());
  CHECK(pl.slice_start == NULL && pl.rowlen == NULL, "max_fill: plan not cleared");
  printf("max_fill refusal: %s\n", ellr_last_error());
  st = ellr_matrix_create(&vbig, &pf, &m);
  CHECK(st == ELLR_ERR_FILL && m.cols.words == NULL, "max_fill via matrix_create: %d", st);
  /* ... accepted with the long-row path (the dense row leaves the slices: no padding for it) */
  ellr_params pfl = pf;
  pfl.long_row_min = 512;
  st               = ellr_plan_create(&vbig, &pfl, &pl);
  CHECK(st == ELLR_OK && pl.nlong == 1 && pl.long_rows[0] == 7 && pl.stats.fill < 2.0, "max_fill with the long-row path: %d '%s'", st, ellr_last_error());
  if (!st) ellr_plan_destroy(&pl);
  /* the automatic threshold: only rows in their own order, in a matrix of at least 2^20 entries; then rows of
     max(512, 16 x the mean rounded up) entries leave the slices -- here the one dense row */
  {
    tcsr mid;
    tcsr_random(&mid, 70000, 70000, 15.0, 0.0, 7, 23);
    ellr_csr      vm   = tcsr_view(&mid);
    const int64_t mnnz = tcsr_nnz(&mid), mean = (mnnz + 69999) / 70000;
    ellr_params   pa   = {0, 0, 32, 0, 0, 0.0, 0, 0, 0, 0, 0, 0}, ps2 = pa;
    ps2.sort_rows      = 1;
    st                 = ellr_plan_create(&vm, &pa, &pl);
    CHECK(mnnz >= (1 << 20) && st == ELLR_OK && pl.long_min == (16 * mean > 512 ? 16 * mean : 512) && pl.nlong == 1 && pl.long_rows[0] == 7 && pl.stats.long_entries == 70000, "automatic long rows, own order: %d '%s', threshold %d, %d long rows", st, ellr_last_error(), pl.long_min, pl.nlong);
    if (!st) ellr_plan_destroy(&pl);
    st = ellr_plan_create(&vm, &ps2, &pl);
    CHECK(st == ELLR_OK && pl.nlong == 0 && pl.long_min == INT32_MAX, "automatic long rows, sorted: none expected, %d", pl.nlong);
    if (!st) ellr_plan_destroy(&pl);
    tcsr_free(&mid);
  }
  /* the small matrices' automatic T under max_fill: 30000 rows of ~2 entries and one of 100 would take T = 32 from
     the widest slice, padding every slice to 32 entries a row (16x); halved until the layout fits 8x CSR's bytes */
  {
    tcsr sm;
    tcsr_random(&sm, 30000, 100, 2.0, 0.0, 7, 25);
    ellr_csr      vs   = tcsr_view(&sm);
    ellr_params   pa   = {0, 0, 32, 0, 0, 8.0, 0, 0, 0, 0, ELLR_LONG_ROWS_NONE, 0};
    const int32_t C    = 32, ns = (30000 + C - 1) / C;
    const double  csrb = 12.0 * (double)tcsr_nnz(&sm) + 4.0 * 30001;
    int32_t       wmax = 0, T = 1;
    for (int32_t r = 0; r < 30000; r++) wmax = sm.rowptr[r + 1] - sm.rowptr[r] > wmax ? sm.rowptr[r + 1] - sm.rowptr[r] : wmax;
    while (T < 32 && 4 * T < wmax) T *= 2;
    const int32_t T0 = T;
    for (; T > 1; T /= 2) {
      double stored = 0;
      for (int32_t s0 = 0; s0 < 30000; s0 += C) {
        int32_t w = 0;
        for (int32_t r = s0; r < s0 + C && r < 30000; r++) w = sm.rowptr[r + 1] - sm.rowptr[r] > w ? sm.rowptr[r + 1] - sm.rowptr[r] : w;
        stored += (double)((w + T - 1) / T * T) * C;
      }
      const double bytes = 12.0 * stored + 4.0 * ns * C + 8.0 * (ns + 1);
      if (bytes <= 8.0 * csrb || bytes <= ELLR_FILL_FLOOR_BYTES) break;
    }
    st = ellr_plan_create(&vs, &pa, &pl);
    CHECK(st == ELLR_OK && T0 == 32 && T < T0 && pl.T == T && !pl.per_slice_T && pl.stats.bytes <= 8.0 * csrb, "small matrix, automatic T under max fill 8: %d '%s', T %d (want %d, from %d)", st, ellr_last_error(), st ? -1 : pl.T, T, T0);
    printf("small matrix under max fill 8: automatic T %d (the widest slice's %d would pad past it)\n", st ? -1 : pl.T, T0);
    if (!st) ellr_plan_destroy(&pl);
    tcsr_free(&sm);
  }
  /* ... and in slices of one row (no padding) */
  ellr_params pf32 = {1, 0, 1, 1, 0, 2.0, 0, 0, 0, 0, 0, 0};
  st               = ellr_plan_create(&vbig, &pf32, &pl);
  CHECK(st == ELLR_OK, "max_fill with sorted slices: %d '%s'", st, ellr_last_error());
  if (!st) ellr_plan_destroy(&pl);
  /* small storage (under the floor) is never refused */
  st = ellr_plan_create(&v, &pf, &pl);
  CHECK(st == ELLR_OK, "max_fill under the floor: %d '%s'", st, ellr_last_error());
  if (!st) ellr_plan_destroy(&pl);
  tcsr_free(&big);
  /* the same matrix fits once sorted into slices of 1 (no padding at all) */
  ellr_params ps = {1, 0, 1, 1, 0, 1.0, 0, 0, 0, 0, 0, 0};
  st = ellr_plan_create(&v, &ps, &pl);
  CHECK(st == ELLR_OK && pl.stats.nstored == pl.stats.nnz, "slice height 1 has no padding: %d", st);
  if (!st) ellr_plan_destroy(&pl);
  /* bad CSR input */
  int32_t rp_bad0[] = {1, 2, 3}, rp_dec[] = {0, 2, 1}, ci[] = {0, 1, 0};
  double  vv[]      = {1, 2, 3};
  ellr_csr    c1 = {2, 2, rp_bad0, ci, vv, NULL, 0, 0, NULL, NULL, NULL}, c2 = {2, 2, rp_dec, ci, vv, NULL, 0, 0, NULL, NULL, NULL}, c3 = {-1, 2, rp_dec, ci, vv, NULL, 0, 0, NULL, NULL, NULL}, c4 = {2, 2, NULL, ci, vv, NULL, 0, 0, NULL, NULL, NULL};
  ellr_params p0 = {1, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0};
  CHECK(ellr_plan_create(&c1, &p0, &pl) == ELLR_ERR_ARG && contains(ellr_last_error(), "start at 0"), "rowptr[0] != 0: '%s'", ellr_last_error());
  CHECK(ellr_plan_create(&c2, &p0, &pl) == ELLR_ERR_ARG && contains(ellr_last_error(), "decrease at row 1"), "decreasing rowptr: '%s'", ellr_last_error());
  CHECK(ellr_plan_create(&c3, &p0, &pl) == ELLR_ERR_ARG && contains(ellr_last_error(), "negative"), "negative size: '%s'", ellr_last_error());
  CHECK(ellr_plan_create(&c4, &p0, &pl) == ELLR_ERR_ARG && contains(ellr_last_error(), "missing"), "missing rowptr: '%s'", ellr_last_error());
  /* defaults: T from the mean row length */
  CHECK(ellr_default_threads_per_row(0.0) == 1 && ellr_default_threads_per_row(7) == 1 && ellr_default_threads_per_row(27) == 2 && ellr_default_threads_per_row(1e6) == 32, "default T");
  tcsr_free(&a);
}

int main(void)
{
  shape sh[18];
  int   ns = 0, nconfigs = 0;
  memset(sh, 0, sizeof(sh));
  tcount_allocator_install();
#define ADD(nm, call) \
  do { \
    sh[ns].name = nm; \
    if (call) { \
      printf("generator failed: %s\n", nm); \
      return 2; \
    } \
    ns++; \
  } while (0)
  ADD("0x0", tcsr_random(&sh[ns].a, 0, 0, 0, 0, -1, 1));
  ADD("0x5", tcsr_random(&sh[ns].a, 0, 5, 0, 0, -1, 2));
  ADD("5x0", tcsr_random(&sh[ns].a, 5, 0, 3, 0, -1, 3));
  ADD("1x1", tcsr_random(&sh[ns].a, 1, 1, 1, 0, 0, 4));
  ADD("1x1 empty", tcsr_random(&sh[ns].a, 1, 1, 0, 1.0, -1, 5));
  ADD("zero 20x30", tcsr_random(&sh[ns].a, 20, 30, 0, 1.0, -1, 6));
  ADD("empty rows 97x97", tcsr_random(&sh[ns].a, 97, 97, 4, 0.4, -1, 7));
  ADD("wide 33x300", tcsr_random(&sh[ns].a, 33, 300, 9, 0.1, -1, 8));
  ADD("tall 300x13", tcsr_random(&sh[ns].a, 300, 13, 3, 0.1, -1, 9));
  ADD("dense row 70x150", tcsr_random(&sh[ns].a, 70, 150, 3, 0.1, 41, 10));
  ADD("power-law 400x400", tcsr_powerlaw(&sh[ns].a, 400, 400, 2.0, 1.6, 300, 11));
  ADD("random 129x129", tcsr_random(&sh[ns].a, 129, 129, 40, 0.0, -1, 12));
  ADD("3d7 N=5", tcsr_stencil_3d7(&sh[ns].a, 5));
  ADD("2d5 N=9", tcsr_stencil_2d5(&sh[ns].a, 9));
  ADD("16-bit spans 61", tcsr_spans(&sh[ns].a, 61, 15));
  ADD("cyclic lengths 900", tcsr_cyclic_lengths(&sh[ns].a, 900, 16));
  ADD("long rows 1500x1500", tcsr_powerlaw(&sh[ns].a, 1500, 1500, 2.0, 1.2, 1400, 17)); /* rows over the automatic threshold */
  ADD("power-law 33000", tcsr_powerlaw(&sh[ns].a, 33000, 33000, 2.0, 1.6, 2000, 18)); /* past ELLR_SMALL_ROWS: the large matrices' automatic T */
  sh[ns - 1].auto_T_only = 1;

  for (int s = 0; s < ns; s++) {
    const long before = g_checks, fb = g_failed;
    run_shape(&sh[s], &nconfigs);
    check_compressed(&sh[s]);
    printf("%-20s %5d x %-5d nnz %6lld: %5ld checks, %ld failed\n", sh[s].name, sh[s].a.nrows, sh[s].a.ncols, (long long)tcsr_nnz(&sh[s].a), g_checks - before, g_failed - fb);
  }
  check_errors();
  {
    ellr_params pd = {0}, ps = {0};
    pd.threads_per_row = ELLR_THREADS_PER_SLICE;
    pd.slice_height    = 32;
    ps.threads_per_row = 1;
    ps.slice_height    = 32;
    ps.sort_rows       = 1;
    int swept = 0;
    for (int s = 0; s < ns; s++) {
      if (!strcmp(sh[s].name, "long rows 1500x1500")) check_alloc_failures("long rows, per slice", &sh[s].a, &pd), swept++;
      if (!strcmp(sh[s].name, "power-law 400x400")) check_alloc_failures("power-law, sorted", &sh[s].a, &ps), swept++;
    }
    CHECK(swept == 2, "the allocation-failure sweep found %d of its 2 shapes", swept);
  }
  printf("configurations: %d (shapes %d x T {auto,1..32,per slice} x C {0,1,7,32} x sort {off,all,window 5,window 64,window auto}; the large shape automatic T only)\n", nconfigs, ns);
  printf("automatic sort window: rows kept in order %d times, a window %d, all rows %d\n", g_auto_order[0], g_auto_order[1], g_auto_order[2]);
  CHECK(g_auto_order[0] > 0 && g_auto_order[1] > 0 && g_auto_order[2] > 0, "the automatic sort window's three outcomes are not all covered");
  printf("long-row path: plans with some long rows %d, with every non-empty row long %d\n", g_long_seen[0], g_long_seen[1]);
  CHECK(g_long_seen[0] > 0 && g_long_seen[1] > 0, "the long-row path is not covered both ways");
  printf("per-slice T: adjacent slices of different T %d\n", g_sliceT_changes);
  CHECK(g_sliceT_changes > 0, "per-slice T never changes between adjacent slices");
  printf("automatic T per slice: %d plans; small matrices' T from the widest slice: %d plans (%d of them other than the mean row's)\n", g_auto_per_slice, g_auto_small[0] + g_auto_small[1], g_auto_small[1]);
  CHECK(g_auto_small[1] > 0, "the small matrices' automatic T never differed from the mean row's");
  CHECK(g_auto_per_slice > 0, "the automatic T never came out per slice");
  /* every host block the engine took went back through its allocator (ellr_set_host_allocator) */
  printf("engine host blocks: %ld allocated, %ld not returned, %ld released that it did not give\n", tcount_total(), tcount_live(), tcount_bad());
  CHECK(tcount_total() > 0 && tcount_live() == 0 && tcount_bad() == 0, "the engine's host memory did not all go through its allocator and back");
  for (int s = 0; s < ns; s++) tcsr_free(&sh[s].a);
  if (g_failed) {
    printf("test_engine: %ld of %ld checks FAILED\n", g_failed, g_checks);
    return 1;
  }
  printf("test_engine: %ld checks passed\n", g_checks);
  return 0;
}
