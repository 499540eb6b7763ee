/*
  ellr_testlib.h - PETSc-free helpers shared by the engine tests and the spmv benchmark:
  an owning CSR, deterministic generators (random odd shapes, power-law rows, stencils),
  a Matrix Market (.mtx / .mtx.gz) reader, and the reference CSR products.
*/
#ifndef ELLR_TESTLIB_H
#define ELLR_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include "ellr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An owning CSR matrix (32-bit indices, double values). */
typedef struct {
  int32_t  nrows, ncols;
  int32_t *rowptr; /* [nrows + 1] */
  int32_t *colidx; /* [nnz] */
  double  *val;    /* [nnz] */
} tcsr;

static inline int64_t tcsr_nnz(const tcsr *a) { return a->rowptr ? a->rowptr[a->nrows] : 0; }
ellr_csr tcsr_view(const tcsr *a);
void     tcsr_free(tcsr *a);
/* Allocates rowptr (zeroed) and room for nnz entries; returns 0 on success. */
int tcsr_alloc(tcsr *a, int32_t nrows, int32_t ncols, int64_t nnz);

/* The non-empty rows of a as a CSR of their own (c owns copies) and the map rows[] (malloc'd): what an MPI
   off-diagonal block gives the engine (ellr_csr.rows).  Returns 0 on success. */
int tcsr_compress_rows(const tcsr *a, tcsr *c, int32_t **rows);
/* The engine's view of c as the compressed rows of a matrix of nrows_out rows. */
ellr_csr tcsr_view_compressed(const tcsr *c, const int32_t *rows, int32_t nrows_out);

/* A counting host allocator for the engine (ellr_set_host_allocator): every block carries a header, so a block freed
   by plain free() or twice, or one never returned, shows.  tcount_live() is the number of blocks not returned. */
void tcount_allocator_install(void);
long tcount_live(void);
long tcount_total(void); /* blocks given out since the install */
long tcount_bad(void);   /* blocks released that the allocator did not give out (or released twice) */
void tcount_fail_at(long k); /* the k-th allocation from now (1 = the next) returns NULL; 0: none fails */

/* Deterministic random numbers (splitmix64). */
uint64_t trng_next(uint64_t *state);
double   trng_unif(uint64_t *state);                  /* [0, 1) */
int64_t  trng_below(uint64_t *state, int64_t bound);  /* [0, bound) */
double   trng_value(uint64_t *state);                 /* [-1, -0.1] u [0.1, 1]: never zero */

/* Random matrix: row lengths uniform in [0, 2 * meanlen] (clamped to ncols), a fraction
   pempty of rows left empty, optionally one dense row (index dense_row, all ncols columns),
   distinct columns in random order inside each row.  Returns 0 on success. */
int tcsr_random(tcsr *a, int32_t nrows, int32_t ncols, double meanlen, double pempty, int32_t dense_row, uint64_t seed);
/* Power-law row lengths: Pareto(xmin, alpha) clamped to [1, maxlen] (and ncols), columns uniform
   random and distinct inside each row, sorted.  Returns 0 on success. */
int tcsr_powerlaw(tcsr *a, int32_t nrows, int32_t ncols, double xmin, double alpha, int32_t maxlen, uint64_t seed);
/* Stencils on N^d grids (natural ordering), values: diagonal 2d+1-ish, off-diagonal -1 +- small. */
int tcsr_stencil_3d7(tcsr *a, int32_t N);
int tcsr_stencil_3d27(tcsr *a, int32_t N);
int tcsr_stencil_2d5(tcsr *a, int32_t N);
/* Column spans at the 16-bit offsets' limit: row i holds {c0, c0 + span} with span cycling through 0, 65533,
   65534 (the limit), 65535, 100000, and every 6th row empty; c0 random.  300000 columns. */
int tcsr_spans(tcsr *a, int32_t nrows, uint64_t seed);
/* Row i of length 1 + i % 8, distinct random columns: sorting pays, and a window of a few cycles stores as little
   as the full sort (the automatic sort window's middle outcome). */
int tcsr_cyclic_lengths(tcsr *a, int32_t n, uint64_t seed);
/* Replaces all values by new random ones (same pattern). */
void tcsr_randomize_values(tcsr *a, uint64_t seed);

/* Matrix Market reader (coordinate real/integer/pattern, general/symmetric/skew-symmetric;
   symmetric files are expanded; duplicates summed; pattern values 1.0).  Reads .gz through
   zlib, loaded at run time (libz.so.1); plain files always.  Returns 0 or sets err. */
int tcsr_read_mtx(tcsr *a, const char *path, char *err, size_t errlen);

/* Reference products in CSR order.  z may be NULL or alias y. */
void tcsr_spmv(const tcsr *a, const double *x, const double *z, double *y);
void tcsr_spmv_transpose(const tcsr *a, const double *x, const double *z, double *y);

/* max |y - ref| / max |ref| (absolute when ref is 0); NaN or Inf anywhere gives INFINITY. */
double trel_err(const double *y, const double *ref, int64_t n);
void   tfill_nan(double *y, int64_t n);
void   tfill_random(double *y, int64_t n, uint64_t seed);

double twall_ms(void);

#ifdef __cplusplus
}
#endif
#endif
