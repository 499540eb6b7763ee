/*
  ellr.h - the PETSc-free storage engine of petsc-ellr.

  One format covers ELLPACK-R (ELLR-T), PELLR and pJDS: a sliced, T-interleaved,
  optionally row-permuted ELLPACK-R.  Its parameters:

    C  slice height (rows per slice).  C = all rows is plain ELLPACK-R (ELLR-T);
       C = 32 with sorted rows is pJDS-like slicing, which keeps the
       storage near CSR on irregular matrices.
    T  threads per row: the entries of a row are dealt to T threads round-robin; one T for all slices, or
       (ELLR_THREADS_PER_SLICE) each slice's own T, picked from its rows' lengths (below).
    order  identity, or rows sorted by decreasing length (PELLR),
       optionally only inside windows of W rows.

  Entry k of stored row i (slice s = i / C) sits at

      slice_start[s] + (k / T) * C * T + (i % C) * T + k % T      (T: the slice's)

  so the 32 threads of a warp (32/T rows, T threads each) read 32 consecutive words, whatever T is.
  A slice is as wide as its longest row rounded up to T; ELLPACK-R's per-row length
  array (rowlen) lets every row stop at its own end.

  Rows of at least long_row_min entries (ellr_params; automatic for rows in their own order) leave the slices for
  the long-row path: they are empty rows there, and keep their entries in CSR order, multiplied in chunks shared
  by many warps (below, at ELLR_LONG_CHUNK).

  The build is split in two so that a pattern is planned once and values can be
  refilled in O(nnz) with no allocation:
    plan (O(n)):   row order, per-slice widths, offsets, statistics, fill check;
    fill (O(nnz)): column indices and values scattered into the layout.
  The CUDA backend (ellr_cuda.h) uses the same plan and does the fill on the GPU.

  Index types: 32-bit rows, columns and CSR offsets (nnz < 2^31 per matrix block);
  64-bit offsets inside the padded storage.  Values are double.
*/
#ifndef ELLR_ENGINE_H
#define ELLR_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ELLR_OK = 0,
  ELLR_ERR_ARG,  /* an invalid parameter or input (see ellr_last_error()) */
  ELLR_ERR_MEM,  /* host allocation failed */
  ELLR_ERR_FILL, /* padding would exceed max_fill */
  ELLR_ERR_SIZE, /* more entries than 32-bit/64-bit indices can address */
  ELLR_ERR_CUDA  /* a CUDA call failed (CUDA backend only) */
} ellr_status;

/* Test hook: the next call of a stage in this thread fails as a real failure there would (ELLR_ERR_MEM on the host,
   ELLR_ERR_CUDA on the GPU), after the work a real failure could follow (allocations, page-locking), so that tests
   see every error path leave the caller's objects destroyable.  Stages the backend lacks never fire. */
enum { ELLR_STAGE_NONE = 0, ELLR_STAGE_CREATE, ELLR_STAGE_TUNE, ELLR_STAGE_UPDATE, ELLR_STAGE_DESTROY, ELLR_STAGE_CONNECT /* NCCL's early connection (ellr_halo.h) */ };
void ellr_test_fail_next(int stage);
int  ellr_test_failures(void);      /* how many injected failures fired in this thread */
int  ellr_test_fail_now(int stage); /* for the backends: 1 (once) where the injected stage is this one */

/* Text of the last error raised in this thread, for the binding's error message. */
const char *ellr_last_error(void);
/* Records the text of an error (for backends); returns st. */
ellr_status ellr_error(ellr_status st, const char *fmt, ...);

/* Host memory of the engine (plans, host storage, set-up scratch) comes from ellr_malloc/ellr_calloc/ellr_free, which
   call malloc and free unless a host program installs its own allocator, so that its memory accounting sees the
   engine's memory too (the PETSc binding installs PetscMalloc/PetscFree: -malloc_dump and -memory_view then count it).
   Install before the first matrix and restore (NULL) after the last one is destroyed: memory goes back through the
   allocator that gave it.  The functions are called from the thread that creates, updates and destroys matrices only. */
typedef struct {
  void *(*alloc)(size_t bytes, int zero, void *ctx); /* NULL when out of memory; zero: the bytes read as 0 */
  void (*release)(void *ptr, void *ctx);
  void *ctx;
} ellr_host_allocator;
void  ellr_set_host_allocator(const ellr_host_allocator *a); /* NULL: malloc and free again */
void *ellr_malloc(size_t bytes);
void *ellr_calloc(size_t count, size_t size);
void  ellr_free(void *ptr);

#define ELLR_MAX_THREADS_PER_ROW 32
/* Per-slice threads per row (threads_per_row = ELLR_THREADS_PER_SLICE): slice s takes the smallest power of two T with
   ELLR_SLICE_T_ENTRIES * T >= its longest row (the adaptive CSR-vector's rule -- each thread does ~16 products at most -- per slice
   instead of per matrix), at most 32.  Sorted rows give slices of one to thousands of entries per row: one T for all
   of them either pads the short slices up to T (and reads a 32-byte sector for each 8-byte value) or leaves a long
   slice's rows to few threads.  A slice's width rounded up to its T gives the same T again, so the T is read back
   from the slice offsets and the layout stores nothing for it (the GPU product's per-warp work items carry it).
   The GPU deals warps, not rows, each warp inside one slice (one launch for all slices; with C*T not a multiple of
   32, the last warp of a slice leaves lanes idle). */
#define ELLR_THREADS_PER_SLICE (-1)
#ifndef ELLR_SLICE_T_ENTRIES /* a build may set it to measure another rule: in the C and the CUDA flags alike (the benchmark's
                                 build compiles both with nvcc, so NVCCFLAGS reaches both; the library's does not) */
  #define ELLR_SLICE_T_ENTRIES 16
#endif
/* threads_per_row 0 (automatic) takes each slice's own T where, of several slices, one has a T of at least
   ELLR_SLICE_T_AUTO_SPREAD times the T of the mean row (ellr_default_threads_per_row): one T from the mean would
   leave that slice's rows to a quarter or less of the threads their length asks for.  Measured on the H100
   (tests/spmv, doc/performance.md), per-slice T against the mean's one T: rows in their own order in slices of 32, 1.21-1.47x on the power laws,
   1.43x web-NotreDame, 1.64x EPA, 1.71x memplus, 1.83x mcfe (all of them with a slice at 4-32x the mean's T);
   sorted rows (pellr) 1.03-1.05x on the power laws, 1.69-1.77x on EPA, memplus and mcfe, 0.79x on web-NotreDame
   (pellr's automatic family takes IPCSR there); on the matrices whose slices stay within 2x of the mean's T it
   was 0.80-1.09x, hence one T there. */
#define ELLR_SLICE_T_AUTO_SPREAD 4
#ifdef __CUDACC__
  #define ELLR_HD __host__ __device__
#else
  #define ELLR_HD
#endif
/* The smallest power of two T with entries * T >= width, at most 32. */
static inline ELLR_HD int32_t ellr_threads_for(int64_t width, int entries)
{
  int32_t T = 1;
  while (T < ELLR_MAX_THREADS_PER_ROW && (int64_t)entries * T < width) T *= 2;
  return T;
}
static inline ELLR_HD int32_t ellr_slice_threads(int64_t width) { return ellr_threads_for(width, ELLR_SLICE_T_ENTRIES); }
/* Small matrices (fewer than ELLR_SMALL_ROWS rows): automatic T is one T for all slices, the smallest with
   ELLR_SMALL_T_ENTRIES T >= the widest slice, so that the longest row takes each of its lanes one group of loads.
   A product of such a matrix moves a few MB (under a microsecond at the H100's 3 TB/s) and lasts as long as its
   longest lane's chain of dependent loads (index, then x) -- latency, not bandwidth.  Measured on the H100
   (tests/spmv --geometry, doc/performance.md), ellrt in slices of 32: on the nine SuiteSparse matrices of
   42-17758 rows this T came within 7% of the best one T of 1..32 every time, 1.10-1.84x the speed of the mean
   row's T (or of each slice's own T); on 3d7 N=48 (110592 rows, all rows 7 long) T=1 stays best, on web-NotreDame
   (325729 rows) each slice's own.  ELLR_SMALL_ROWS is 4 resident warps' rows per SM slot of an H100 (132 SMs x
   64 warps x 4), so a warp per row still gives the GPU a few waves. */
#define ELLR_SMALL_ROWS      32768
#define ELLR_SMALL_T_ENTRIES 4
#define ELLR_FILL_FLOOR_BYTES    (1 << 20) /* max_fill never refuses storage smaller than this */

typedef struct {
  int    threads_per_row; /* T in {1,2,4,8,16,32}; ELLR_THREADS_PER_SLICE = each slice's own (above); 0 = automatic:
                             the plan's rule (each slice's own, or one from nnz/row), tuned on the GPU */
  int    block_size;      /* GPU threads per block, a multiple of 32 up to 1024; 0 = tuned */
  int    slice_height;    /* C >= 1; 0 (or more than the rows) = all rows in one slice (plain ELLPACK-R) */
  int    sort_rows;       /* 0 = keep row order; 1 = sort rows by decreasing length */
  int    sort_window;     /* with sort_rows: sort inside windows of this many rows; 0 = all; ELLR_SORT_WINDOW_AUTO:
                             picked from the matrix (below) */
  double max_fill;        /* refuse storage of more than max_fill times CSR's bytes; <= 0: no limit */
  int    tune;            /* GPU: what is left at 0 is picked by ELLR_TUNE_MODEL (row statistics, <= 3 timed
                             products on large blocks), ELLR_TUNE_EXHAUSTIVE (timed search over T, block size,
                             kernel options) or ELLR_TUNE_NONE (the model's pick, no timed product) */
  int    pin_host;        /* GPU: keep the CSR arrays page-locked (cudaHostRegister) from create until
                             ellr_cuda_unpin_host or destroy: copies run at the link's speed; the caller
                             promises not to free them meanwhile */
  int    family;          /* GPU: ELLR_FAMILY_* (below); the CPU backend always uses the sliced layout */
  int    index_bits;      /* column indices of the sliced layout: 0 = automatic, 16-bit offsets from a per-slice
                             base in every slice whose columns span at most ELLR_COL16_SPAN (10 bytes per entry
                             instead of 12), 32-bit indices in the others; 32 = 32-bit indices everywhere */
  int    long_row_min;    /* rows of at least this many entries leave the slices for the long-row path (below);
                             0 = automatic (ellr_long_row_min), ELLR_LONG_ROWS_NONE = every row stays in the slices */
  int    long_join;       /* GPU: how the chunks of a long row meet: ELLR_LONG_JOIN_SEGMENTED or _ATOMIC (below) */
} ellr_params;

/* The long-row path.  A row much longer than the others sets its slice's width (every other row of the slice pads
   up to it, unless rows are sorted) and keeps one warp walking it after the rest of the GPU is done.  Rows of at
   least long_row_min entries therefore leave the slices -- they are empty rows there and pad nothing -- and keep
   their entries in CSR order in a storage of their own, cut into chunks of ELLR_LONG_CHUNK entries that separate
   warps multiply.  The chunks of a row meet by
     SEGMENTED  each chunk's sum written apart; the row's last chunk to finish adds them in chunk order: the same
                answer in every product (deterministic), one extra read and write per chunk;
     ATOMIC     each chunk's sum added into y with atomicAdd: no partial sums, but the order of the additions,
                hence the rounding of the row's result, can change from one product to the next.
   Automatic (measured on the H100, tests/spmv, doc/performance.md): only where rows keep their own order (no sort)
   and the matrix has at least ELLR_LONG_MIN_NNZ entries, rows of at least max(ELLR_LONG_ROW_FLOOR, 16 x the mean
   row length rounded up).  In their own order a long row pads its whole slice (power laws in slices of 32:
   1.04-1.08x faster with the path); sorted rows already share slices with rows of similar length, whose wide
   slices the chunks kernel cuts among warps (the path measured 2-4% slower there, a second launch for the same
   work); and on small matrices the second launch costs more than it balances (memplus: 0.68x -> 0.53x CSR). */
#define ELLR_LONG_ROWS_NONE  (-1)
#define ELLR_LONG_ROW_FLOOR  512
#define ELLR_LONG_CHUNK      256
#define ELLR_LONG_MIN_NNZ    (1 << 20)
enum { ELLR_LONG_JOIN_SEGMENTED = 0, ELLR_LONG_JOIN_ATOMIC = 1 };
/* The threshold p asks for, for a matrix of nrows rows and nnz entries: rows with at least this many entries
   are long; INT32_MAX when no row may be. */
static inline int32_t ellr_long_row_min(const ellr_params *p, int64_t nnz, int32_t nrows)
{
  if (p->long_row_min == ELLR_LONG_ROWS_NONE) return INT32_MAX;
  if (p->long_row_min > 0) return p->long_row_min;
  if (p->sort_rows || nnz < ELLR_LONG_MIN_NNZ) return INT32_MAX;
  const int64_t mean = nrows > 0 ? (nnz + nrows - 1) / nrows : 0, t = 16 * mean;
  return t > ELLR_LONG_ROW_FLOOR ? (t < INT32_MAX ? (int32_t)t : INT32_MAX) : ELLR_LONG_ROW_FLOOR;
}

/* The sort window picked from the matrix (SELL-C-sigma's sigma): rows keep their order when a full sort would
   store no fewer than 98% of the entries that order stores (a stencil: sorting moves its boundary rows apart from
   their neighbours and scatters x's gathers for nothing); else the smallest window of 32 C or 1024 C rows whose
   sort stores at most 2% more than the full sort's (rows stay near their neighbours); else all rows. */
#define ELLR_SORT_WINDOW_AUTO (-1)
/* a candidate order storing cand entries is as good as the best one's best (2%) */
#define ELLR_SORT_CLOSE(cand, best) (100 * (int64_t)(cand) <= 102 * (int64_t)(best))

enum { ELLR_TUNE_MODEL = 0, ELLR_TUNE_EXHAUSTIVE = 1, ELLR_TUNE_NONE = 2 };
/* Kernel families of the CUDA backend (the CPU backend always uses the sliced layout):
   SLICED      the padded, sliced ELLPACK-R layout of this header (ELLR-T, PELLR, pJDS);
   AUTO        chosen per matrix from row statistics, with a timed product of each candidate on large blocks;
   CSR_VECTOR  the adaptive CSR-vector on the uploaded CSR arrays (no padded layout);
   IPCSR       IPCSR's row blocks through shared memory, long rows shared by a whole thread block. */
enum { ELLR_FAMILY_SLICED = 0, ELLR_FAMILY_AUTO = 1, ELLR_FAMILY_CSR_VECTOR = 2, ELLR_FAMILY_IPCSR = 3 };

/* The input: a CSR matrix with 32-bit indices (any column order inside a row).
   Compressed rows (rows != NULL): the CSR holds only some rows of a matrix of nrows_out rows, the others
   being empty -- an MPI off-diagonal block, whose rows mostly have no ghost entry, is given by its non-empty
   rows only, so that neither the set-up nor the product touches the empty ones.  Products then write
   all nrows_out rows of y (y = z, or 0, where the matrix has no row). */
typedef struct {
  int32_t        nrows, ncols;
  const int32_t *rowptr;    /* [nrows + 1] */
  const int32_t *colidx;    /* [rowptr[nrows]] */
  const double  *val;       /* [rowptr[nrows]] */
  const int32_t *rows;      /* NULL, or [nrows] strictly increasing: CSR row i is row rows[i] of the matrix */
  int32_t        nrows_out; /* with rows: the matrix's rows (>= nrows); ignored without */
  int            cols_sorted; /* 1: the column indices increase within each row (PETSc's AIJ keeps them so): the host
                                 plan reads a row's span from its first and last entries instead of every entry;
                                 0: not known */
  /* CUDA backend only: the same CSR already on the GPU (device pointers; all three or none, no compressed rows).
     create and update_values then read the device arrays and copy nothing from the host (val may be NULL: the
     host values are never read); rowptr and colidx stay the host pattern, read by the plan of small blocks. */
  const int32_t *d_rowptr, *d_colidx;
  const double  *d_val;
} ellr_csr;

/* The rows of the matrix a describes (nrows_out with compressed rows, else nrows). */
static inline int32_t ellr_csr_rows_out(const ellr_csr *a) { return a->rows ? a->nrows_out : a->nrows; }
/* The slice height C of a plan of nrows rows: a slice taller than the matrix would only pad it. */
static inline int32_t ellr_slice_height(const ellr_params *p, int32_t nrows) { return p->slice_height > 0 && p->slice_height < nrows ? p->slice_height : (nrows > 0 ? nrows : 1); }
/* Checks a's compressed rows (strictly increasing, inside nrows_out); ELLR_OK when there are none. */
ellr_status ellr_csr_check_rows(const ellr_csr *a);

/* The transpose of a CSR (ellr_transpose.c): a matrix of a->ncols rows and ellr_csr_rows_out(a) columns, each row's
   columns increasing, with the map from its entries to a's, so that new values of the same pattern are a gather. */
typedef struct {
  ellr_csr csr;    /* the transpose, pointing into the arrays below */
  int32_t *rowptr; /* [ncols + 1] */
  int32_t *colidx; /* [nnz] */
  double  *val;    /* [nnz] */
  int32_t *map;    /* [nnz]: val[q] = a->val[map[q]] */
} ellr_transpose;
ellr_status ellr_transpose_create(const ellr_csr *a, ellr_transpose *t);
/* New values of a (same pattern) into t. */
void        ellr_transpose_values(const ellr_csr *a, ellr_transpose *t);
void        ellr_transpose_destroy(ellr_transpose *t);

/* What the pattern costs: computed by the plan, printed by -mat_view ::ascii_info. */
typedef struct {
  int64_t nnz;            /* entries of the CSR input */
  int64_t nstored;        /* entries in the padded layout (the slices) */
  double  fill;           /* (nstored + long_entries) / nnz (1 for an empty matrix) */
  size_t  bytes;          /* values + column indices + rowlen + perm + slice offsets, and the long rows' entries,
                             rows and offsets */
  int32_t maxrowlen;      /* longest row */
  int32_t nonempty_rows;  /* rows with at least one entry (AIJ counts 2 nnz - nonempty_rows flops for y = A x) */
  double  meanrowlen;     /* nnz / nrows */
  int64_t niter;          /* warp iterations of one product, this order (PELLR's warp-iteration count, Eq. 1 of its paper) */
  int64_t niter_unsorted; /* the same for the original row order */
  /* set when the column indices are stored (ellr_matrix_create, ellr_cuda_create); 0 before */
  int32_t packed_slices;  /* slices with 16-bit column offsets */
  size_t  index_bytes;    /* column indices as stored (bytes above counts 4 per stored entry) */
  int64_t long_entries;   /* entries of the long rows (stored apart, in CSR order; not in nstored) */
} ellr_stats;

/* Bytes of the storage as built: bytes with the column indices as stored. */
static inline size_t ellr_stored_bytes(const ellr_stats *st) { return st->index_bytes ? st->bytes - (size_t)st->nstored * 4 + st->index_bytes : st->bytes; }

/* The O(n) part: row order and layout geometry. */
typedef struct {
  int32_t  nrows, ncols;
  int32_t  T, C;       /* resolved threads per row (with per_slice_T: the largest slice's) and slice height (C >= 1) */
  int32_t  per_slice_T; /* each slice has its own T (ELLR_THREADS_PER_SLICE): ellr_plan_slice_T */
  int32_t  nslices;    /* ceil(nrows / C) */
  int64_t *slice_start; /* [nslices + 1], offsets in entries; slice_start[nslices] = nstored */
  int32_t *rowlen;      /* [nslices * C], stored order; rows past nrows have length 0 */
  int32_t *perm;        /* [nrows], stored row -> original row; NULL for identity */
  int32_t  sorted;      /* rows sorted by length (perm describes the order) */
  int32_t  window;      /* with sorted: rows per sort window (0: all rows) -- the one picked with ELLR_SORT_WINDOW_AUTO */
  int32_t  nrows_out;   /* rows of the products' y (compressed rows: more than nrows) */
  int32_t *outrow;      /* [nrows], stored row -> row of y, with compressed rows; NULL otherwise (then perm) */
  /* the long-row path: rows of at least long_min entries, empty in the slices (rowlen 0) */
  int32_t  long_min;    /* the threshold in use (INT32_MAX: none) */
  int32_t  nlong;       /* long rows */
  int32_t *long_rows;   /* [nlong], their CSR rows, increasing (host plan; NULL in the GPU plan's host copy) */
  int32_t *long_out;    /* [nlong], their rows of y, with compressed rows; NULL otherwise (then long_rows) */
  int64_t *long_start;  /* [nlong + 1], their entries' offsets in the long storage (host plan only, as long_rows) */
  ellr_stats stats;
} ellr_plan;

/* Threads per row of slice s. */
static inline int32_t ellr_plan_slice_T(const ellr_plan *pl, int32_t s)
{
  return pl->per_slice_T ? ellr_slice_threads((pl->slice_start[s + 1] - pl->slice_start[s]) / pl->C) : pl->T;
}
/* The threads_per_row that gives this plan's tiling again (ellr_plan_retile). */
static inline int ellr_plan_threads_param(const ellr_plan *pl) { return pl->per_slice_T ? ELLR_THREADS_PER_SLICE : pl->T; }

/* Stored row -> row of y (NULL: the identity). */
static inline const int32_t *ellr_plan_outrow(const ellr_plan *pl) { return pl->outrow ? pl->outrow : pl->perm; }

/* Column indices of the layout, slice by slice.  A slice whose columns span at most ELLR_COL16_SPAN stores
   16-bit offsets from its smallest column (padding ELLR_COL16_PAD); the others store 32-bit indices (padding
   -1).  Stencils and banded matrices have every slice packed: 10 bytes per entry instead of 12 in fp64.
   Slice s's indices start at words + start[s], in slice layout order (entry position minus slice_start[s]);
   each slice takes ELLR_COLS_SLICE_WORDS words, so 32-bit slices stay aligned. */
typedef struct {
  int32_t  *base;  /* [nslices]: the first column of a packed slice; -1 for a slice of 32-bit indices */
  int64_t  *start; /* [nslices + 1], in 16-bit words */
  uint16_t *words; /* [start[nslices]] */
} ellr_cols;

#define ELLR_COL16_SPAN 65534  /* largest column span of a packed slice (0xFFFF marks padding) */
#define ELLR_COL16_PAD  0xFFFFu
/* 16-bit words of a slice of e entries, packed or not, rounded up to 64 bytes (coalesced starts). */
#define ELLR_COLS_SLICE_WORDS(e, packed) ((((packed) ? (int64_t)(e) : 2 * (int64_t)(e)) + 31) / 32 * 32)

/* The padded storage on the host: a plan plus the O(nnz) arrays. */
typedef struct {
  ellr_plan plan;
  ellr_cols cols; /* column indices */
  double   *val;  /* [nstored]; padding holds 0.0 */
  int32_t  *long_col; /* [stats.long_entries]: the long rows' entries in CSR order */
  double   *long_val;
  int32_t  *csr_order; /* [nrows], CSR row -> stored row, or -(k + 1) for long row k; NULL when rows keep their order
                          and none is long.  The transpose visits rows in CSR order, adding into y as AIJ does. */
} ellr_matrix;

/* The column of the entry at position p of the layout, stored row i (-1 for padding). */
static inline int32_t ellr_matrix_col(const ellr_matrix *m, int32_t i, int64_t p)
{
  const int32_t   s = i / m->plan.C;
  const int64_t   q = p - m->plan.slice_start[s];
  const uint16_t *w = m->cols.words + m->cols.start[s];
  if (m->cols.base[s] >= 0) return w[q] == ELLR_COL16_PAD ? -1 : m->cols.base[s] + (int32_t)w[q];
  int32_t c;
  memcpy(&c, w + 2 * q, sizeof(c));
  return c;
}

/* The threads per row of the mean row length (the adaptive CSR-vector's rule): each thread does at least ~16 products, never more than
   a warp per row.  With threads_per_row 0 this is the plan's T on large matrices unless each slice takes its own. */
int ellr_default_threads_per_row(double meanrowlen);
/* Automatic T (threads_per_row 0) of a plan of nrows rows and nnz entries in nslices slices of C rows, the widest
   wmax entries: one T (returned) or ELLR_THREADS_PER_SLICE.  Small matrices (under ELLR_SMALL_ROWS rows): one T
   from the widest slice (above), halved while the layout would take more than max_fill times CSR's bytes (and more
   than ELLR_FILL_FLOOR_BYTES) -- width: the slices' widths, fixed: the layout's bytes besides its stored entries'
   (12 each); EPA's 1.9-entry rows at T = 32 would pad 17x.  Else each slice's own T where one slice's T is at least
   ELLR_SLICE_T_AUTO_SPREAD times the mean row's; else the mean row's (width may be NULL then). */
int32_t ellr_auto_threads(int32_t nrows, int64_t nnz, int32_t nslices, int32_t C, int32_t wmax, const int32_t *width, size_t fixed, double max_fill);

/* Validates parameters; on error ellr_last_error() says which and why. */
ellr_status ellr_params_check(const ellr_params *p);

/* Plans the layout of the pattern of a.  Allocates only O(nrows) memory; returns
   ELLR_ERR_FILL, before any O(nnz) allocation, when the storage would take more than
   max_fill times the bytes of CSR (12 per nonzero + 4 per row) and more than
   ELLR_FILL_FLOOR_BYTES. */
ellr_status ellr_plan_create(const ellr_csr *a, const ellr_params *p, ellr_plan *plan);
void        ellr_plan_destroy(ellr_plan *plan);
/* The plan of the same rows and order with another threads per row (ELLR_THREADS_PER_SLICE included): no re-sort
   (tuning T). */
ellr_status ellr_plan_retile(const ellr_plan *src, int threads_per_row, const ellr_params *p, ellr_plan *plan);

/* Position of entry k of stored row i in the layout. */
static inline int64_t ellr_pos(const ellr_plan *pl, int32_t i, int32_t k)
{
  const int32_t s = i / pl->C, T = ellr_plan_slice_T(pl, s);
  return pl->slice_start[s] + (int64_t)(k / T) * pl->C * T + (int64_t)(i % pl->C) * T + k % T;
}

/* Column indices of a (same pattern as planned) in the layout: per slice 16-bit offsets where the span allows
   and index_bits is 0, else 32-bit.  Sets pl->stats.packed_slices and index_bytes.  Free with ellr_cols_destroy. */
ellr_status ellr_cols_create(ellr_plan *pl, const ellr_csr *a, int index_bits, ellr_cols *c);
/* Only which slices are packed: base[nslices] and start[nslices + 1] as ellr_cols_create sets them, and the
   statistics (the CUDA backend's host plan for small matrices). */
ellr_status ellr_cols_plan(ellr_plan *pl, const ellr_csr *a, int index_bits, int32_t *base, int64_t *start);
void        ellr_cols_destroy(ellr_cols *c);
/* Values only, into the slices and the long rows' storage: the pattern is unchanged since the last fill. */
ellr_status ellr_fill_values(ellr_matrix *m, const ellr_csr *a);

/* Plan + allocate + fill on the host. */
ellr_status ellr_matrix_create(const ellr_csr *a, const ellr_params *p, ellr_matrix *m);
void        ellr_matrix_destroy(ellr_matrix *m);

/* Host products on the padded storage.  z may be NULL (y = A x) or alias y.
   y = A x (+ z)                                                               */
void ellr_cpu_mult(const ellr_matrix *m, const double *x, const double *z, double *y);
/* y = A^T x (+ z); y has ncols entries, x has nrows entries */
void ellr_cpu_mult_transpose(const ellr_matrix *m, const double *x, const double *z, double *y);

/* The number of warp iterations (PELLR's warp-iteration count, Eq. 1 of its paper) that one product over this row order
   takes when 32/T consecutive stored rows share a warp. */
int64_t ellr_warp_iterations(const int32_t *rowlen, int32_t nrows, int32_t T);
/* The same for the plan's stored order, each slice at its own T. */
int64_t ellr_plan_warp_iterations(const ellr_plan *pl);

#ifdef __cplusplus
}
#endif
#endif
