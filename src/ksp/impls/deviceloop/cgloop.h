/*
  cgloop.h - Krylov recurrences (conjugate gradients, and BiCGStab in bcgsloop.h) as a few fused passes over the
  vectors, with every scalar of the recurrence in one state record that the passes read and write themselves (no host
  round trip per iteration).  Both recurrences share the state record, the CUDA context (stream, reduction buffers,
  pinned state fetch, graph capture, timing marks) and the rules below.
  PETSc-free: plain arrays and a state record; the same passes exist for host arrays (cgloop_host.c, the reference and
  the CPU path) and for CUDA arrays on a stream (cgloop_cuda.cu, which also captures them as a CUDA graph).

  One iteration (preconditioned CG as PETSc's KSPCG runs it, left preconditioning, real scalars):
    direction  p = z + (beta / betaold) p   (p = z at the first iteration)
    product    w = A p                      (the caller's)
    curvature  dpi = p'w, alpha = beta / dpi; a zero or sign-changing dpi stops: indefinite matrix
    step       x += alpha p, r -= alpha w, then z = B r, beta = z'r and the norm of the iteration; a sign change of
               beta stops (indefinite preconditioner), beta = 0 stops (exact solution)
  B is a diagonal (z = d .* r, never stored), the identity, or the caller's (then the step pass is split around the
  caller's z = B r and a final dot pass closes the iteration).

  Rules that keep the results repeatable and the loop safe to run ahead of the host:
  - reductions are two-stage with a fixed number of blocks per length and a fixed summation order (no floating-point
    atomics): the same bits on every run;
  - once stop is set, every pass returns at once, so passes enqueued past the stopping iteration change nothing (a pass
    whose pending rule stops still has every block arrive, so that its last block applies the rule);
  - on several ranks every reduction's totals are summed over the ranks on the GPU (the caller's reducer) before its
    rule runs, so all ranks hold the same scalars and stop at the same iteration; CG's two rules (with a diagonal or no
    preconditioner) then run in the next pass, not in a kernel of their own: each of its blocks derives what it needs
    (the step length, the direction's coefficient, whether to stop) from the summed totals by the same rule without
    changing the state, and its last block, which every block has reached after reading the state, applies the rule to
    the state; a rule still pending when the host looks (after a step) is applied by the host to its copy;
  - the residual norm of every iteration goes to hist[it % CGLOOP_RING]: the host reads them in order afterwards,
    at most CGLOOP_RING iterations behind.
*/
#ifndef CGLOOP_H
#define CGLOOP_H

#ifdef __cplusplus
extern "C" {
#endif

#define CGLOOP_RING 512

typedef enum {
  CGLOOP_RUNNING = 0,
  CGLOOP_STOP_TEST,     /* the norm met the tolerance test the host mirrors (or is not finite): the host decides */
  CGLOOP_STOP_MAXIT,    /* max_it iterations done */
  CGLOOP_INDEF_MAT,     /* p'Ap zero or of changing sign: the iteration stop_it + 1 has no norm */
  CGLOOP_INDEF_PC,      /* z'r changed sign after iteration stop_it */
  CGLOOP_BETA_ZERO,     /* z'r = 0 after iteration stop_it */
  CGLOOP_NAN_DOT,       /* z'r not finite after iteration stop_it */
  CGLOOP_NAN_CURVATURE, /* p'Ap not finite: the iteration stop_it + 1 has no norm */
  /* BiCGStab (bcgsloop.h); in each the iteration stop_it + 1 has no norm */
  CGLOOP_BCGS_BREAKDOWN, /* (v, rp) = 0 */
  CGLOOP_BCGS_SINGULAR,  /* (t, t) = 0 with s != 0: singular preconditioned operator */
  CGLOOP_BCGS_EXACT,     /* (t, t) = 0 with s = 0: x += alpha p is the solution, iteration stop_it + 1 is counted */
  CGLOOP_BCGS_RHO_ZERO   /* (r, rp) = 0 at the start of iteration stop_it, which has its norm */
} cgloop_stop;

typedef enum {
  CGLOOP_PENDING_NONE = 0,
  CGLOOP_PENDING_CURVATURE, /* sums[0] = p'Ap over the ranks: the step pass applies the curvature's rule */
  CGLOOP_PENDING_STEP       /* sums[0..1] = z'r and the squared norm over the ranks: the direction pass applies the step's */
} cgloop_pending;

typedef enum {
  CGLOOP_NORM_PRECONDITIONED = 0, /* ||z|| */
  CGLOOP_NORM_UNPRECONDITIONED,   /* ||r|| */
  CGLOOP_NORM_NATURAL,            /* sqrt|z'r| */
  CGLOOP_NORM_NONE
} cgloop_norm;

typedef enum {
  CGLOOP_PC_NONE = 0, /* z = r */
  CGLOOP_PC_DIAGONAL, /* z = d .* r */
  CGLOOP_PC_GENERAL   /* z = B r by the caller between cgloop_step and cgloop_close */
} cgloop_pc;

typedef struct {
  double    beta, betaold, dpi, dpiold, alpha, rr; /* CG (alpha also BiCGStab's) */
  double    rho, rhoold, omega, omegaold;          /* BiCGStab: (r, rp) of this iteration and the last; the step's omega */
  int       exact;                                 /* BiCGStab: (t, t) = (s, s) = 0, the step is x += alpha p only */
  double    ttol, dtol;  /* stop (CGLOOP_STOP_TEST) when the norm is <= ttol or >= dtol ... */
  long long first_test;  /* ... from this iteration on (test_tol != 0 only) */
  long long it, max_it;  /* iterations done; the limit */
  long long stop_it;     /* iterations completed when stop was set */
  int       test_tol;    /* mirror the tolerance test */
  int       stop;        /* cgloop_stop */
  unsigned  arrived[3];  /* blocks done in each reduction of an iteration, reset by the last (CG: curvature, step, close or the direction applying a pending rule; BiCGStab: 0) */
  int       pending;     /* cgloop_pending: a CG rule whose totals are in sums, summed over the ranks, not yet applied */
  double    sums[3];     /* on several ranks: a reduction's totals on this rank, then over the ranks (the reducer's buffer) */
  double    hist[CGLOOP_RING];
} cgloop_state;

typedef struct {
  long long   n;
  cgloop_norm norm;
  cgloop_pc   pc;
} cgloop_shape;

/* host passes (arrays of length n; d only for CGLOOP_PC_DIAGONAL, z only for CGLOOP_PC_GENERAL) */
void cgloop_host_direction(const cgloop_shape *, cgloop_state *, const double *r, const double *d, const double *z, double *p);
void cgloop_host_curvature(const cgloop_shape *, cgloop_state *, const double *p, const double *w);
void cgloop_host_step(const cgloop_shape *, cgloop_state *, double *x, double *r, const double *p, const double *w, const double *d);
void cgloop_host_close(const cgloop_shape *, cgloop_state *, const double *r, const double *z);
/* PCJACOBI's fix of a zero in its scaling d (length n): made one, as PETSc's Jacobi makes it */
void cgloop_host_jacobi_fix(long long n, double *d);

/* CUDA: a context per solver (stream, reduction buffers, device and pinned host state, graph); 0 on success, else a
   cudaError_t / cusparseStatus_t value, with a message in cgloop_cuda_error() */
typedef struct cgloop_cuda cgloop_cuda;
int         cgloop_cuda_create(const cgloop_shape *, cgloop_cuda **);
int         cgloop_cuda_destroy(cgloop_cuda *);
const char *cgloop_cuda_error(int);
void       *cgloop_cuda_stream(cgloop_cuda *); /* where the passes go */
/* the shape of this solve (same n as at create) and where its passes go: the context's own stream (use_stream 0,
   needed for a capture) or the given one (PETSc's, to order with PETSc's product and preconditioner) */
int cgloop_cuda_set_shape(cgloop_cuda *, const cgloop_shape *, void *stream, int use_stream);
/* work of another stream (PETSc's) ordered before (wait_for) and after (release_to) the context's own */
int cgloop_cuda_wait_for(cgloop_cuda *, void *stream);
int cgloop_cuda_release_to(cgloop_cuda *, void *stream);
int cgloop_cuda_set_state(cgloop_cuda *, const cgloop_state *);
/* On several ranks (each with its share of the rows): sums[0..count) summed over the ranks in place on stream, the same
   bits on every rank (an all-reduce, stream-ordered); 0 or CGLOOP_REDUCE_FAILED.  NULL: one rank. */
typedef int (*cgloop_reducer)(void *ctx, double *sums, int count, void *stream);
#define CGLOOP_REDUCE_FAILED 2000
int cgloop_cuda_set_reducer(cgloop_cuda *, cgloop_reducer, void *ctx);
/* On several ranks, the product's off-diagonal part kept apart (ellr_halo_mult_apart() adds it into a vector of its
   own beside the diagonal block's product): rows[0..nrows) the rows it adds to (host, each once), *yoff that vector
   (device, length n, zero).  The curvature pass then folds it in: for each such row w[r] += yoff[r], p'w summed with
   it, yoff[r] = 0 again (each row by the block that reads w[r], after its threads have read it: no race, the same bits
   on every run).  nrows 0 sets none.  cgloop_cuda_apart_clear() zeroes those rows on the passes' stream: at a solve's
   start, after a stop left a product's part untaken. */
int cgloop_cuda_set_apart(cgloop_cuda *, long long nrows, const int *rows, double **yoff);
int cgloop_cuda_apart_clear(cgloop_cuda *);
int cgloop_cuda_direction(cgloop_cuda *, const double *r, const double *d, const double *z, double *p);
int cgloop_cuda_curvature(cgloop_cuda *, const double *p, double *w);
int cgloop_cuda_step(cgloop_cuda *, double *x, double *r, const double *p, const double *w, const double *d);
int cgloop_cuda_close(cgloop_cuda *, const double *r, const double *z);
/* the same on the GPU, on stream (no context needed) */
int cgloop_cuda_jacobi_fix(void *stream, long long n, double *d);
/* w = A p by cuSPARSE on the context's stream for a CSR with 32-bit indices on the device */
int cgloop_cuda_csr_product(cgloop_cuda *, int nrows, int ncols, int nnz, const int *rowptr, const int *colidx, const double *vals, const double *p, double *w);
/* the state's copy: enqueued now, ready after cgloop_cuda_state_wait() (the pinned record it returns) */
int cgloop_cuda_state_fetch(cgloop_cuda *, int slot);
int cgloop_cuda_state_wait(cgloop_cuda *, int slot, const cgloop_state **);
/* capture of the work enqueued on the context's stream between begin and end as a graph, replayed by launch */
int cgloop_cuda_capture_begin(cgloop_cuda *);
int cgloop_cuda_capture_end(cgloop_cuda *);
int cgloop_cuda_launch(cgloop_cuda *);
int cgloop_cuda_has_graph(cgloop_cuda *);
int cgloop_cuda_drop_graph(cgloop_cuda *);
/* seconds the work between two marks took on the GPU (to choose how often the host looks) */
int cgloop_cuda_mark(cgloop_cuda *, int which);
int cgloop_cuda_elapsed(cgloop_cuda *, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
