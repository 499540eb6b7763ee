/* ellr_testlib.c - generators, Matrix Market reader and reference products (PETSc-free). */
#include "ellr_testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <dlfcn.h>

/* zlib is loaded at run time (libz.so.1), so no program needs -lz to link and every program can
   read .mtx.gz where zlib is installed. */
typedef void *gzFile;
static gzFile (*gzopen)(const char *, const char *);
static char *(*gzgets)(gzFile, char *, int);
static int (*gzclose)(gzFile);
static int zlib_load(void)
{
  static int tried = 0;
  if (!tried) {
    tried   = 1;
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libz.so", RTLD_NOW | RTLD_LOCAL);
    if (h) {
      *(void **)&gzopen  = dlsym(h, "gzopen");
      *(void **)&gzgets  = dlsym(h, "gzgets");
      *(void **)&gzclose = dlsym(h, "gzclose");
      if (!gzopen || !gzgets || !gzclose) gzopen = NULL;
    }
  }
  return gzopen != NULL;
}

ellr_csr tcsr_view(const tcsr *a)
{
  ellr_csr v;
  memset(&v, 0, sizeof(v)); /* a host CSR: no device copy */
  v.nrows  = a->nrows;
  v.ncols  = a->ncols;
  v.rowptr = a->rowptr;
  v.colidx = a->colidx;
  v.val    = a->val;
  v.rows      = NULL;
  v.nrows_out = 0;
  v.cols_sorted = 1; /* what the test matrix holds: the host plan's shortcut taken exactly where it is valid */
  for (int32_t i = 0; i < a->nrows && v.cols_sorted; i++)
    for (int64_t k = a->rowptr[i] + 1; k < a->rowptr[i + 1]; k++)
      if (a->colidx[k] <= a->colidx[k - 1]) {
        v.cols_sorted = 0;
        break;
      }
  return v;
}

int tcsr_compress_rows(const tcsr *a, tcsr *c, int32_t **rows)
{
  int32_t nc = 0;
  for (int32_t i = 0; i < a->nrows; i++) nc += a->rowptr[i + 1] > a->rowptr[i];
  if (tcsr_alloc(c, nc, a->ncols, tcsr_nnz(a))) return 1;
  *rows = (int32_t *)malloc((size_t)(nc ? nc : 1) * sizeof(int32_t));
  if (!*rows) return 1;
  nc = 0;
  for (int32_t i = 0; i < a->nrows; i++)
    if (a->rowptr[i + 1] > a->rowptr[i]) {
      (*rows)[nc]       = i;
      c->rowptr[nc + 1] = a->rowptr[i + 1];
      nc++;
    }
  memcpy(c->colidx, a->colidx, (size_t)tcsr_nnz(a) * sizeof(int32_t));
  memcpy(c->val, a->val, (size_t)tcsr_nnz(a) * sizeof(double));
  return 0;
}

ellr_csr tcsr_view_compressed(const tcsr *c, const int32_t *rows, int32_t nrows_out)
{
  ellr_csr v  = tcsr_view(c);
  v.rows      = rows;
  v.nrows_out = nrows_out;
  return v;
}

void tcsr_free(tcsr *a)
{
  free(a->rowptr);
  free(a->colidx);
  free(a->val);
  memset(a, 0, sizeof(*a));
}

int tcsr_alloc(tcsr *a, int32_t nrows, int32_t ncols, int64_t nnz)
{
  memset(a, 0, sizeof(*a));
  a->nrows  = nrows;
  a->ncols  = ncols;
  a->rowptr = (int32_t *)calloc((size_t)nrows + 1, sizeof(int32_t));
  a->colidx = (int32_t *)malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
  a->val    = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  if (!a->rowptr || !a->colidx || !a->val) {
    tcsr_free(a);
    return 1;
  }
  return 0;
}

uint64_t trng_next(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double  trng_unif(uint64_t *s) { return (double)(trng_next(s) >> 11) * (1.0 / 9007199254740992.0); }
int64_t trng_below(uint64_t *s, int64_t bound) { return bound > 0 ? (int64_t)(trng_next(s) % (uint64_t)bound) : 0; }
double  trng_value(uint64_t *s)
{
  const double u = 0.1 + 0.9 * trng_unif(s);
  return (trng_next(s) & 1) ? u : -u;
}

static void isort_i32(int32_t *v, int32_t n)
{
  for (int32_t i = 1; i < n; i++) {
    const int32_t t = v[i];
    int32_t       j = i - 1;
    while (j >= 0 && v[j] > t) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = t;
  }
}

static int cmp_i32(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static void sort_i32(int32_t *v, int32_t n)
{
  if (n <= 32) isort_i32(v, n);
  else qsort(v, (size_t)n, sizeof(int32_t), cmp_i32);
}

/* Sorts and removes duplicates; returns the new length. */
static int32_t sort_unique(int32_t *v, int32_t n)
{
  if (n <= 1) return n;
  sort_i32(v, n);
  int32_t m = 1;
  for (int32_t i = 1; i < n; i++)
    if (v[i] != v[m - 1]) v[m++] = v[i];
  return m;
}

/* Distinct random columns: a partial Fisher-Yates shuffle when the row is dense, draws with
   rejection (sorted check) otherwise; the result is in random order. */
static void random_columns(uint64_t *rng, int32_t ncols, int32_t len, int32_t *out, int32_t *scratch)
{
  if ((int64_t)len * 4 >= ncols) {
    for (int32_t j = 0; j < ncols; j++) scratch[j] = j;
    for (int32_t k = 0; k < len; k++) {
      const int32_t j = k + (int32_t)trng_below(rng, ncols - k), t = scratch[k];
      scratch[k] = scratch[j];
      scratch[j] = t;
      out[k]     = scratch[k];
    }
    return;
  }
  int32_t have = 0;
  while (have < len) {
    for (int32_t k = have; k < len; k++) out[k] = (int32_t)trng_below(rng, ncols);
    memcpy(scratch, out, (size_t)len * sizeof(int32_t));
    have = sort_unique(scratch, len);
    memcpy(out, scratch, (size_t)have * sizeof(int32_t));
  }
  for (int32_t k = len - 1; k > 0; k--) { /* shuffle: any column order inside a row */
    const int32_t j = (int32_t)trng_below(rng, k + 1), t = out[k];
    out[k] = out[j];
    out[j] = t;
  }
}

int tcsr_random(tcsr *a, int32_t nrows, int32_t ncols, double meanlen, double pempty, int32_t dense_row, uint64_t seed)
{
  uint64_t rng = seed * 2654435761ull + 12345;
  int32_t *len = (int32_t *)malloc(((size_t)nrows + 1) * sizeof(int32_t));
  int64_t  nnz = 0;
  if (!len) return 1;
  for (int32_t r = 0; r < nrows; r++) {
    int32_t l = (int32_t)trng_below(&rng, (int64_t)(2 * meanlen) + 1);
    if (trng_unif(&rng) < pempty) l = 0;
    if (r == dense_row) l = ncols;
    if (l > ncols) l = ncols;
    len[r] = l;
    nnz += l;
  }
  int32_t *scratch = (int32_t *)malloc(((size_t)ncols + 1) * sizeof(int32_t));
  if (!scratch || tcsr_alloc(a, nrows, ncols, nnz)) {
    free(len);
    free(scratch);
    return 1;
  }
  for (int32_t r = 0; r < nrows; r++) {
    a->rowptr[r + 1] = a->rowptr[r] + len[r];
    random_columns(&rng, ncols, len[r], a->colidx + a->rowptr[r], scratch);
    for (int32_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) a->val[k] = trng_value(&rng);
  }
  free(len);
  free(scratch);
  return 0;
}

int tcsr_powerlaw(tcsr *a, int32_t nrows, int32_t ncols, double xmin, double alpha, int32_t maxlen, uint64_t seed)
{
  uint64_t rng = seed * 0x2545F4914F6CDD1Dull + 777;
  int32_t *len = (int32_t *)malloc(((size_t)nrows + 1) * sizeof(int32_t));
  int64_t  cap = 0;
  if (!len) return 1;
  if (maxlen > ncols) maxlen = ncols;
  for (int32_t r = 0; r < nrows; r++) {
    const double u = 1.0 - trng_unif(&rng); /* (0, 1] */
    double       l = floor(xmin * pow(u, -1.0 / alpha));
    if (l > maxlen) l = maxlen;
    if (l < 1) l = 1;
    if (l > ncols) l = ncols;
    len[r] = (int32_t)l;
    cap += len[r];
  }
  int32_t *scratch = (int32_t *)malloc(((size_t)ncols + 1) * sizeof(int32_t));
  if (!scratch || tcsr_alloc(a, nrows, ncols, cap)) {
    free(len);
    free(scratch);
    return 1;
  }
  for (int32_t r = 0; r < nrows; r++) {
    int32_t *c = a->colidx + a->rowptr[r];
    random_columns(&rng, ncols, len[r], c, scratch);
    sort_i32(c, len[r]);
    a->rowptr[r + 1] = a->rowptr[r] + len[r];
    for (int32_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) a->val[k] = trng_value(&rng);
  }
  free(len);
  free(scratch);
  return 0;
}

/* Stencil on an N^3 (or N^2 with nz = 1) grid with offsets in [-w, w]^d filtered by 'kind'. */
static int stencil(tcsr *a, int32_t N, int dim, int full)
{
  const int64_t n64 = dim == 3 ? (int64_t)N * N * N : (int64_t)N * N;
  if (n64 >= INT32_MAX) return 1;
  const int32_t n      = (int32_t)n64;
  const int     maxnnz = full ? 27 : (dim == 3 ? 7 : 5);
  if (tcsr_alloc(a, n, n, n64 * maxnnz)) return 1;
  const int32_t nz = dim == 3 ? N : 1;
  int64_t       p  = 0;
  uint64_t      h  = 42;
  for (int32_t k = 0; k < nz; k++)
    for (int32_t j = 0; j < N; j++)
      for (int32_t i = 0; i < N; i++) {
        const int32_t row = (k * N + j) * N + i;
        for (int dk = (dim == 3 ? -1 : 0); dk <= (dim == 3 ? 1 : 0); dk++)
          for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++) {
              const int nzoff = (dk != 0) + (dj != 0) + (di != 0);
              if (!full && nzoff > 1) continue;
              const int32_t kk = k + dk, jj = j + dj, ii = i + di;
              if (kk < 0 || kk >= nz || jj < 0 || jj >= N || ii < 0 || ii >= N) continue;
              a->colidx[p] = (kk * N + jj) * N + ii;
              a->val[p]    = nzoff ? -1.0 - 0.01 * trng_unif(&h) : (double)maxnnz + 0.01 * trng_unif(&h);
              p++;
            }
        a->rowptr[row + 1] = (int32_t)p;
      }
  return 0;
}

int tcsr_stencil_3d7(tcsr *a, int32_t N) { return stencil(a, N, 3, 0); }
int tcsr_stencil_3d27(tcsr *a, int32_t N) { return stencil(a, N, 3, 1); }
int tcsr_stencil_2d5(tcsr *a, int32_t N) { return stencil(a, N, 2, 0); }

int tcsr_spans(tcsr *a, int32_t nrows, uint64_t seed)
{
  static const int32_t spans[5] = {0, 65533, 65534, 65535, 100000};
  const int32_t        ncols    = 300000;
  uint64_t             rng      = seed ^ 0x5A5A5A5A1234ull;
  if (tcsr_alloc(a, nrows, ncols, 2 * (int64_t)nrows)) return 1;
  int64_t nz = 0;
  for (int32_t i = 0; i < nrows; i++) {
    if (i % 6 != 5) {
      const int32_t span = spans[i % 5], c0 = (int32_t)trng_below(&rng, ncols - 100001);
      a->colidx[nz]   = c0;
      a->val[nz++]    = trng_value(&rng);
      if (span) {
        a->colidx[nz] = c0 + span;
        a->val[nz++]  = trng_value(&rng);
      }
    }
    a->rowptr[i + 1] = (int32_t)nz;
  }
  return 0;
}

/* Row i of length 1 + i % 8 (distinct random columns): sorting pays, and a window of a few cycles stores as little
   as the full sort -- the automatic sort window's middle outcome. */
int tcsr_cyclic_lengths(tcsr *a, int32_t n, uint64_t seed)
{
  uint64_t rng = seed;
  if (tcsr_alloc(a, n, n, (int64_t)n * 8)) return 1;
  int64_t nz = 0;
  for (int32_t i = 0; i < n; i++) {
    const int32_t len = 1 + i % 8, c0 = (int32_t)trng_below(&rng, n - 8);
    for (int32_t k = 0; k < len; k++) {
      a->colidx[nz] = c0 + k;
      a->val[nz++]  = trng_value(&rng);
    }
    a->rowptr[i + 1] = (int32_t)nz;
  }
  return 0;
}

void tcsr_randomize_values(tcsr *a, uint64_t seed)
{
  uint64_t      rng = seed ^ 0xABCDEF12345ull;
  const int64_t nnz = tcsr_nnz(a);
  for (int64_t k = 0; k < nnz; k++) a->val[k] = trng_value(&rng);
}

/* ---- Matrix Market ---------------------------------------------------------------------- */
typedef struct {
  gzFile gz;
  FILE  *f;
} tsrc;

static char *src_gets(tsrc *s, char *buf, int len)
{
  if (s->gz) return gzgets(s->gz, buf, len);
  return fgets(buf, len, s->f);
}

typedef struct {
  int32_t r, c;
  double  v;
} tcoo;

static int cmp_coo(const void *a, const void *b)
{
  const tcoo *x = (const tcoo *)a, *y = (const tcoo *)b;
  if (x->r != y->r) return x->r < y->r ? -1 : 1;
  return (x->c > y->c) - (x->c < y->c);
}

int tcsr_read_mtx(tcsr *a, const char *path, char *err, size_t errlen)
{
  tsrc   s = {0, 0};
  char   line[1024];
  tcoo  *e = NULL;
  int    ret = 1;
  size_t plen = strlen(path);
  memset(a, 0, sizeof(*a));
  if (zlib_load()) s.gz = gzopen(path, "rb");
  else if (plen > 3 && !strcmp(path + plen - 3, ".gz")) {
    snprintf(err, errlen, "%s: zlib (libz.so.1) could not be loaded", path);
    return 1;
  } else s.f = fopen(path, "r");
  if (!s.gz && !s.f) {
    snprintf(err, errlen, "%s: cannot open", path);
    return 1;
  }
  if (!src_gets(&s, line, sizeof(line)) || strncasecmp(line, "%%MatrixMarket", 14)) {
    snprintf(err, errlen, "%s: not a Matrix Market file", path);
    goto done;
  }
  char obj[64] = "", fmt[64] = "", field[64] = "", sym[64] = "";
  if (sscanf(line + 14, "%63s %63s %63s %63s", obj, fmt, field, sym) != 4 || strcasecmp(obj, "matrix") || strcasecmp(fmt, "coordinate")) {
    snprintf(err, errlen, "%s: only 'matrix coordinate' files are supported", path);
    goto done;
  }
  const int pattern = !strcasecmp(field, "pattern");
  if (!pattern && strcasecmp(field, "real") && strcasecmp(field, "integer") && strcasecmp(field, "double")) {
    snprintf(err, errlen, "%s: field '%s' is not supported", path, field);
    goto done;
  }
  const int symm = !strcasecmp(sym, "symmetric"), skew = !strcasecmp(sym, "skew-symmetric");
  if (!symm && !skew && strcasecmp(sym, "general")) {
    snprintf(err, errlen, "%s: symmetry '%s' is not supported", path, sym);
    goto done;
  }
  long long m = 0, n = 0, nz = 0;
  do {
    if (!src_gets(&s, line, sizeof(line))) {
      snprintf(err, errlen, "%s: no size line", path);
      goto done;
    }
  } while (line[0] == '%' || line[0] == '\n');
  if (sscanf(line, "%lld %lld %lld", &m, &n, &nz) != 3 || m < 0 || n < 0 || nz < 0 || m >= INT32_MAX || n >= INT32_MAX || 2 * nz >= INT32_MAX) {
    snprintf(err, errlen, "%s: bad size line", path);
    goto done;
  }
  e = (tcoo *)malloc((size_t)(2 * nz + 1) * sizeof(tcoo));
  if (!e) {
    snprintf(err, errlen, "%s: out of memory", path);
    goto done;
  }
  long long ne = 0;
  for (long long k = 0; k < nz; k++) {
    long long r, c;
    double    v = 1.0;
    do {
      if (!src_gets(&s, line, sizeof(line))) {
        snprintf(err, errlen, "%s: file ends after %lld of %lld entries", path, k, nz);
        goto done;
      }
    } while (line[0] == '%');
    if ((pattern ? sscanf(line, "%lld %lld", &r, &c) != 2 : sscanf(line, "%lld %lld %lf", &r, &c, &v) != 3) || r < 1 || r > m || c < 1 || c > n) {
      snprintf(err, errlen, "%s: bad entry line %lld", path, k + 1);
      goto done;
    }
    e[ne].r = (int32_t)(r - 1);
    e[ne].c = (int32_t)(c - 1);
    e[ne].v = v;
    ne++;
    if ((symm || skew) && r != c) {
      e[ne].r = (int32_t)(c - 1);
      e[ne].c = (int32_t)(r - 1);
      e[ne].v = skew ? -v : v;
      ne++;
    }
  }
  qsort(e, (size_t)ne, sizeof(tcoo), cmp_coo);
  long long nu = 0; /* duplicates summed */
  for (long long k = 0; k < ne; k++) {
    if (nu && e[nu - 1].r == e[k].r && e[nu - 1].c == e[k].c) e[nu - 1].v += e[k].v;
    else e[nu++] = e[k];
  }
  if (tcsr_alloc(a, (int32_t)m, (int32_t)n, nu)) {
    snprintf(err, errlen, "%s: out of memory", path);
    goto done;
  }
  for (long long k = 0; k < nu; k++) {
    a->rowptr[e[k].r + 1]++;
    a->colidx[k] = e[k].c;
    a->val[k]    = e[k].v;
  }
  for (int32_t r = 0; r < a->nrows; r++) a->rowptr[r + 1] += a->rowptr[r];
  ret = 0;
done:
  free(e);
  if (s.gz) gzclose(s.gz);
  if (s.f) fclose(s.f);
  if (ret) tcsr_free(a);
  return ret;
}

/* ---- reference products ---------------------------------------------------------------- */
void tcsr_spmv(const tcsr *a, const double *x, const double *z, double *y)
{
  for (int32_t r = 0; r < a->nrows; r++) {
    double sum = 0.0;
    for (int32_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) sum += a->val[k] * x[a->colidx[k]];
    y[r] = z ? z[r] + sum : sum;
  }
}

void tcsr_spmv_transpose(const tcsr *a, const double *x, const double *z, double *y)
{
  if (!z) memset(y, 0, (size_t)a->ncols * sizeof(double));
  else if (z != y) memcpy(y, z, (size_t)a->ncols * sizeof(double));
  for (int32_t r = 0; r < a->nrows; r++)
    for (int32_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) y[a->colidx[k]] += a->val[k] * x[r];
}

double trel_err(const double *y, const double *ref, int64_t n)
{
  double dmax = 0.0, rmax = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(y[i]) || !isfinite(ref[i])) return INFINITY;
    const double d = fabs(y[i] - ref[i]);
    if (d > dmax) dmax = d;
    if (fabs(ref[i]) > rmax) rmax = fabs(ref[i]);
  }
  return rmax > 0.0 ? dmax / rmax : dmax;
}

void tfill_nan(double *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++) y[i] = NAN;
}

void tfill_random(double *y, int64_t n, uint64_t seed)
{
  uint64_t rng = seed * 31 + 7;
  for (int64_t i = 0; i < n; i++) y[i] = trng_value(&rng);
}

double twall_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* ---- counting host allocator ---- */
#define TCOUNT_MAGIC 0x656c6c72616c6c6fULL
typedef union {
  struct {
    uint64_t magic;
    size_t   bytes;
  } h;
  max_align_t align; /* the block after the header keeps malloc's alignment */
} tcount_header;
static long tcount_nlive, tcount_ntotal, tcount_nbad, tcount_failk;

static void *tcount_alloc(size_t bytes, int zero, void *ctx)
{
  tcount_header *h = (tcount_header *)(zero ? calloc(1, sizeof(*h) + bytes) : malloc(sizeof(*h) + bytes));
  (void)ctx;
  if (tcount_failk > 0 && --tcount_failk == 0) {
    free(h); /* the injected failure: out of memory */
    return NULL;
  }
  if (!h) return NULL;
  h->h.magic = TCOUNT_MAGIC;
  h->h.bytes = bytes;
  tcount_nlive++;
  tcount_ntotal++;
  return h + 1;
}

static void tcount_release(void *ptr, void *ctx)
{
  tcount_header *h = (tcount_header *)ptr - 1;
  (void)ctx;
  if (h->h.magic != TCOUNT_MAGIC) {
    tcount_nbad++; /* not ours: leak it rather than corrupt the heap */
    return;
  }
  h->h.magic = 0;
  tcount_nlive--;
  free(h);
}

void tcount_allocator_install(void)
{
  ellr_host_allocator a = {tcount_alloc, tcount_release, NULL};
  ellr_set_host_allocator(&a);
}
long tcount_live(void) { return tcount_nlive; }
long tcount_total(void) { return tcount_ntotal; }
long tcount_bad(void) { return tcount_nbad; }
void tcount_fail_at(long k) { tcount_failk = k; }
