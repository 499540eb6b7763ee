/*
  cgloop_cuda.cu - the passes of cgloop.h on CUDA arrays, on the context's own (non-blocking) stream, so that a run of
  iterations can be captured as a CUDA graph (PETSc's default stream may be the legacy one, which cannot be captured).

  The context and the reductions: cgloop_cuda_impl.h.
*/
#include "cgloop_cuda_impl.h"
#include <stddef.h>
#include <string.h>

/* With a step's rule pending (several ranks), every block derives the coefficient and the stop from the summed totals,
   and the last block to arrive (all have read the state by then) applies the rule. */
__global__ static void cgloop_direction_kernel(cgloop_shape s, cgloop_state *st, const double *r, const double *d, const double *z, double *p)
{
  __shared__ double b;
  __shared__ int    stop, pending;

  if (threadIdx.x == 0) {
    pending = st->pending == CGLOOP_PENDING_STEP;
    stop    = st->stop;
    if (pending && !stop) {
      stop = cgloop_step_outcome(st, s.norm, st->sums[0], st->sums[1]);
      b    = st->sums[0] / st->beta; /* beta / betaold once the rule has run */
    } else b = cgloop_direction_coefficient(st);
  }
  __syncthreads();
  if (stop && !pending) return;
  if (!stop)
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < s.n; i += (long long)gridDim.x * blockDim.x) {
      const double zi = s.pc == CGLOOP_PC_GENERAL ? z[i] : (s.pc == CGLOOP_PC_DIAGONAL ? d[i] * r[i] : r[i]);
      p[i]            = zi + b * p[i];
    }
  if (!pending || !cgloop_arrive(st, 2, NULL, 0, NULL)) return;
  if (threadIdx.x == 0) {
    if (!st->stop) cgloop_after_step(st, s.norm, st->sums[0], st->sums[1]);
    st->pending    = CGLOOP_PENDING_NONE;
    st->arrived[2] = 0;
  }
}

/* With a product's off-diagonal part apart, each block folds it into the rows it reads once all its threads have read
   them: w[r] += yoff[r] and p[r] yoff[r] added to the sum (p'w with w's part after it), yoff[r] zero again. */
__global__ static void cgloop_curvature_kernel(cgloop_shape s, cgloop_state *st, const double *p, double *w, double *partial, double *sums, cgloop_apart ap)
{
  __shared__ double sh[CGLOOP_THREADS];
  double            v = 0.0;

  if (st->stop) return;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < s.n; i += (long long)gridDim.x * blockDim.x) v += p[i] * w[i];
  if (ap.yoff) {
    __syncthreads();
    for (int e = ap.off[blockIdx.x] + (int)threadIdx.x; e < ap.off[blockIdx.x + 1]; e += blockDim.x) {
      const int    r = ap.rows[e];
      const double t = ap.yoff[r];
      v += p[r] * t;
      w[r] += t;
      ap.yoff[r] = 0.0;
    }
  }
  v = cgloop_block_sum(v, sh);
  if (!cgloop_arrive(st, 0, partial, 1, &v)) return;
  __syncthreads();
  const double dpi = cgloop_total(partial, sh);
  if (threadIdx.x == 0) {
    cgloop_totals(CGLOOP_RULE_CG_CURVATURE, &s, st, 0, &dpi, 1, sums);
    if (sums && s.pc != CGLOOP_PC_GENERAL) st->pending = CGLOOP_PENDING_CURVATURE; /* the step pass applies it */
  }
}

/* With the curvature's rule pending (several ranks), every block derives the step length and the stop from the summed
   p'Ap, and the last block applies the rule before it writes the step's totals in its place. */
__global__ static void cgloop_step_kernel(cgloop_shape s, cgloop_state *st, double *x, double *r, const double *p, const double *w, const double *d, double *partial, double *sums)
{
  __shared__ double sh[CGLOOP_THREADS];
  __shared__ double a;
  __shared__ int    stop, pending;
  double            zr = 0.0, nrm2 = 0.0, rr = 0.0, v[2];

  if (threadIdx.x == 0) {
    pending = st->pending == CGLOOP_PENDING_CURVATURE;
    stop    = st->stop;
    a       = st->alpha;
    if (pending && !stop) stop = cgloop_curvature_outcome(st, st->sums[0], &a);
  }
  __syncthreads();
  if (stop && !pending) return;
  if (!stop)
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < s.n; i += (long long)gridDim.x * blockDim.x) {
      x[i] += a * p[i];
      const double ri = r[i] - a * w[i];
      r[i]            = ri;
      rr += ri * ri;
      if (s.pc == CGLOOP_PC_GENERAL) continue;
      const double zi = s.pc == CGLOOP_PC_DIAGONAL ? d[i] * ri : ri;
      zr += zi * ri;
      nrm2 += s.norm == CGLOOP_NORM_UNPRECONDITIONED ? ri * ri : zi * zi;
    }
  if (s.pc == CGLOOP_PC_GENERAL) {
    v[0] = cgloop_block_sum(rr, sh);
    v[1] = 0.0;
  } else {
    v[0] = cgloop_block_sum(zr, sh);
    __syncthreads();
    v[1] = cgloop_block_sum(nrm2, sh);
  }
  if (!cgloop_arrive(st, 1, partial, 2, v)) return;
  __syncthreads();
  v[0] = cgloop_total(partial, sh);
  __syncthreads();
  v[1] = cgloop_total(partial + CGLOOP_MAX_BLOCKS, sh);
  if (threadIdx.x == 0) {
    if (pending) {
      if (!st->stop) cgloop_after_curvature(st, st->sums[0]); /* read before the step's totals take its place */
      st->pending = CGLOOP_PENDING_NONE;
    }
    if (st->stop) st->arrived[1] = 0; /* the curvature's rule stopped: no step, nothing pending */
    else {
      cgloop_totals(CGLOOP_RULE_CG_STEP, &s, st, 1, v, 2, sums);
      if (pending) st->pending = CGLOOP_PENDING_STEP; /* the next direction pass applies it */
    }
  }
}

__global__ static void cgloop_close_kernel(cgloop_shape s, cgloop_state *st, const double *r, const double *z, double *partial, double *sums)
{
  __shared__ double sh[CGLOOP_THREADS];
  double            zr = 0.0, zz = 0.0, v[2];

  if (st->stop) return;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < s.n; i += (long long)gridDim.x * blockDim.x) {
    zr += z[i] * r[i];
    zz += z[i] * z[i];
  }
  v[0] = cgloop_block_sum(zr, sh);
  __syncthreads();
  v[1] = cgloop_block_sum(zz, sh);
  if (!cgloop_arrive(st, 2, partial, 2, v)) return;
  __syncthreads();
  v[0] = cgloop_total(partial, sh);
  __syncthreads();
  v[1] = cgloop_total(partial + CGLOOP_MAX_BLOCKS, sh);
  if (threadIdx.x == 0) cgloop_totals(CGLOOP_RULE_CG_CLOSE, &s, st, 2, v, 2, sums);
}

/* a reduction's rule on its totals summed over the ranks */
__global__ static void cgloop_conclude_kernel(cgloop_rule rule, cgloop_shape s, cgloop_state *st, const double *sums)
{
  double t[3];

  if (st->stop) return; /* the reduction pass returned at once: sums are stale (summed over the ranks anyway, never read) */
  for (int j = 0; j < 3; j++) t[j] = sums[j];
  cgloop_conclude(rule, &s, st, t);
}

__global__ static void cgloop_apart_clear_kernel(long long m, const int *rows, double *yoff)
{
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m; e += (long long)gridDim.x * blockDim.x) yoff[rows[e]] = 0.0;
}

int cgloop_cuda_reduced(cgloop_cuda *c, cgloop_rule rule, int k)
{
  int rc = (int)cudaPeekAtLastError();

  if (rc || !c->reduce) return rc;
  if (c->reduce(c->reduce_ctx, c->sums, k, (void *)c->run)) return CGLOOP_REDUCE_FAILED;
  /* CG's rules with a diagonal or no preconditioner run in the next pass (cgloop.h) */
  if ((rule == CGLOOP_RULE_CG_CURVATURE || rule == CGLOOP_RULE_CG_STEP) && c->shape.pc != CGLOOP_PC_GENERAL) return 0;
  cgloop_conclude_kernel<<<1, 1, 0, c->run>>>(rule, c->shape, c->dstate, c->sums);
  return (int)cudaPeekAtLastError();
}

extern "C" {

const char *cgloop_cuda_error(int e)
{
  if (e == CGLOOP_REDUCE_FAILED) return "the all-reduce over the ranks failed (NCCL_DEBUG=WARN says more)";
  return e >= 0 && e < 1000 ? cudaGetErrorString((cudaError_t)e) : "a cuSPARSE call failed";
}

/* cuSPARSE statuses are reported shifted past CUDA's error codes */
#define CGLOOP_CU(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) return (int)e_; \
  } while (0)
#define CGLOOP_SP(call) \
  do { \
    cusparseStatus_t s_ = (call); \
    if (s_ != CUSPARSE_STATUS_SUCCESS) return 1000 + (int)s_; \
  } while (0)

int cgloop_cuda_create(const cgloop_shape *s, cgloop_cuda **out)
{
  cgloop_cuda *c = (cgloop_cuda *)calloc(1, sizeof(*c));

  *out = NULL;
  if (!c) return (int)cudaErrorMemoryAllocation;
  c->shape   = *s;
  c->nblocks = (int)((s->n + CGLOOP_THREADS - 1) / CGLOOP_THREADS);
  if (c->nblocks > CGLOOP_MAX_BLOCKS) c->nblocks = CGLOOP_MAX_BLOCKS;
  if (c->nblocks < 1) c->nblocks = 1;
  *out = c;
  CGLOOP_CU(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  c->run = c->stream;
  CGLOOP_CU(cudaMalloc((void **)&c->dstate, sizeof(cgloop_state)));
  CGLOOP_CU(cudaMemset(c->dstate, 0, sizeof(cgloop_state)));
  CGLOOP_CU(cudaMallocHost((void **)&c->hstate, 3 * sizeof(cgloop_state)));
  CGLOOP_CU(cudaMalloc((void **)&c->partial, 3 * CGLOOP_MAX_BLOCKS * sizeof(double)));
  c->sums = (double *)((char *)c->dstate + offsetof(cgloop_state, sums)); /* in the state: a look fetches a pending rule's totals with it */
  for (int i = 0; i < 2; i++) CGLOOP_CU(cudaEventCreateWithFlags(&c->fetched[i], cudaEventDisableTiming));
  CGLOOP_CU(cudaEventCreateWithFlags(&c->fence, cudaEventDisableTiming));
  for (int i = 0; i < 2; i++) CGLOOP_CU(cudaEventCreate(&c->mark[i]));
  return 0;
}

static int cgloop_apart_free(cgloop_cuda *c)
{
  /* cudaFree waits for the work that may still read them; the fields are cleared whatever it returns */
  const cudaError_t e[3] = {cudaFree((void *)c->apart.off), cudaFree((void *)c->apart.rows), cudaFree(c->apart.yoff)};

  memset(&c->apart, 0, sizeof(c->apart));
  c->apart_n = 0;
  for (int k = 0; k < 3; k++) CGLOOP_CU(e[k]);
  return 0;
}

int cgloop_cuda_drop_graph(cgloop_cuda *c)
{
  if (c->exec) CGLOOP_CU(cudaGraphExecDestroy(c->exec));
  if (c->graph) CGLOOP_CU(cudaGraphDestroy(c->graph));
  c->exec  = NULL;
  c->graph = NULL;
  return 0;
}

int cgloop_cuda_destroy(cgloop_cuda *c)
{
  if (!c) return 0;
  if (c->stream) CGLOOP_CU(cudaStreamSynchronize(c->stream));
  CGLOOP_CU((cudaError_t)cgloop_cuda_drop_graph(c));
#if defined(CGLOOP_WITH_CUSPARSE)
  if (c->sparse) CGLOOP_SP(cusparseDestroy(c->sparse));
#endif
  if (c->spbuf) CGLOOP_CU(cudaFree(c->spbuf));
  CGLOOP_CU((cudaError_t)cgloop_apart_free(c));
  for (int i = 0; i < 2; i++) {
    if (c->fetched[i]) CGLOOP_CU(cudaEventDestroy(c->fetched[i]));
    if (c->mark[i]) CGLOOP_CU(cudaEventDestroy(c->mark[i]));
  }
  if (c->fence) CGLOOP_CU(cudaEventDestroy(c->fence));
  if (c->partial) CGLOOP_CU(cudaFree(c->partial));
  if (c->hstate) CGLOOP_CU(cudaFreeHost(c->hstate));
  if (c->dstate) CGLOOP_CU(cudaFree(c->dstate));
  if (c->stream) CGLOOP_CU(cudaStreamDestroy(c->stream));
  free(c);
  return 0;
}

void *cgloop_cuda_stream(cgloop_cuda *c)
{
  return (void *)c->run;
}

int cgloop_cuda_set_shape(cgloop_cuda *c, const cgloop_shape *s, void *stream, int use_stream)
{
  if (s->n != c->shape.n) return (int)cudaErrorInvalidValue; /* the block count, hence the sums, depend on n */
  /* a graph holds the shape its kernels were launched with (norm type, preconditioner kind): another shape, a new one */
  if ((s->norm != c->shape.norm || s->pc != c->shape.pc) && c->exec) {
    int e = cgloop_cuda_drop_graph(c);
    if (e) return e;
  }
  c->shape = *s;
  c->run   = use_stream ? (cudaStream_t)stream : c->stream;
  return 0;
}

int cgloop_cuda_wait_for(cgloop_cuda *c, void *stream)
{
  CGLOOP_CU(cudaEventRecord(c->fence, (cudaStream_t)stream));
  CGLOOP_CU(cudaStreamWaitEvent(c->stream, c->fence, 0));
  return 0;
}

int cgloop_cuda_release_to(cgloop_cuda *c, void *stream)
{
  CGLOOP_CU(cudaEventRecord(c->fence, c->stream));
  CGLOOP_CU(cudaStreamWaitEvent((cudaStream_t)stream, c->fence, 0));
  return 0;
}

int cgloop_cuda_set_state(cgloop_cuda *c, const cgloop_state *st)
{
  CGLOOP_CU(cudaStreamSynchronize(c->run)); /* the staging record may still be read by an earlier copy */
  c->hstate[2] = *st;
  CGLOOP_CU(cudaMemcpyAsync(c->dstate, &c->hstate[2], sizeof(cgloop_state), cudaMemcpyHostToDevice, c->run));
  return 0;
}

int cgloop_cuda_set_reducer(cgloop_cuda *c, cgloop_reducer reduce, void *ctx)
{
  /* a graph holds the passes with or without the all-reduce: another choice, a new one */
  if (!reduce != !c->reduce && c->exec) {
    int e = cgloop_cuda_drop_graph(c);
    if (e) return e;
  }
  c->reduce     = reduce;
  c->reduce_ctx = ctx;
  return 0;
}

int cgloop_cuda_direction(cgloop_cuda *c, const double *r, const double *d, const double *z, double *p)
{
  cgloop_direction_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, r, d, z, p);
  return (int)cudaPeekAtLastError();
}

int cgloop_cuda_set_apart(cgloop_cuda *c, long long m, const int *rows, double **yoff)
{
  const long long per = (long long)c->nblocks * CGLOOP_THREADS;
  const size_t    nb  = (size_t)c->nblocks;
  int            *off, *next, *grouped, *doff = NULL, *drows = NULL;
  double         *dy = NULL;
  cudaError_t     e  = cudaSuccess;

  *yoff = NULL;
  CGLOOP_CU((cudaError_t)cgloop_cuda_drop_graph(c)); /* its curvature passes hold the last rows */
  CGLOOP_CU((cudaError_t)cgloop_apart_free(c));
  if (m <= 0) return 0;
  for (long long k = 0; k < m; k++)
    if (rows[k] < 0 || rows[k] >= c->shape.n) return (int)cudaErrorInvalidValue;
  off     = (int *)calloc(nb + 1, sizeof(int));
  next    = (int *)malloc(nb * sizeof(int));
  grouped = (int *)malloc((size_t)m * sizeof(int));
  if (!off || !next || !grouped) e = cudaErrorMemoryAllocation;
  else {
    /* row r is read by block (r mod per) / CGLOOP_THREADS of the grid-stride loop: each block's rows, in their order */
    for (long long k = 0; k < m; k++) off[(rows[k] % per) / CGLOOP_THREADS + 1]++;
    for (size_t b = 0; b < nb; b++) off[b + 1] += off[b];
    memcpy(next, off, nb * sizeof(int));
    for (long long k = 0; k < m; k++) grouped[next[(rows[k] % per) / CGLOOP_THREADS]++] = rows[k];
    e = cudaMalloc((void **)&doff, (nb + 1) * sizeof(int));
    if (e == cudaSuccess) e = cudaMalloc((void **)&drows, (size_t)m * sizeof(int));
    if (e == cudaSuccess) e = cudaMalloc((void **)&dy, (size_t)c->shape.n * sizeof(double));
    if (e == cudaSuccess) e = cudaMemcpy(doff, off, (nb + 1) * sizeof(int), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(drows, grouped, (size_t)m * sizeof(int), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemset(dy, 0, (size_t)c->shape.n * sizeof(double));
    /* the copies and the memset go to the default stream, which the passes' non-blocking streams do not follow */
    if (e == cudaSuccess) e = cudaStreamSynchronize(0);
  }
  free(off);
  free(next);
  free(grouped);
  c->apart.off  = doff; /* freed by the next call or the context's destroy, also after a failure here */
  c->apart.rows = drows;
  c->apart.yoff = dy;
  if (e != cudaSuccess) {
    (void)cgloop_apart_free(c);
    return (int)e;
  }
  c->apart_n = m;
  *yoff      = dy;
  return 0;
}

int cgloop_cuda_apart_clear(cgloop_cuda *c)
{
  const long long nb = (c->apart_n + CGLOOP_THREADS - 1) / CGLOOP_THREADS;

  if (!c->apart.yoff) return 0;
  cgloop_apart_clear_kernel<<<(unsigned)(nb < CGLOOP_MAX_BLOCKS ? nb : CGLOOP_MAX_BLOCKS), CGLOOP_THREADS, 0, c->run>>>(c->apart_n, c->apart.rows, c->apart.yoff);
  return (int)cudaPeekAtLastError();
}

int cgloop_cuda_curvature(cgloop_cuda *c, const double *p, double *w)
{
  cgloop_curvature_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, p, w, c->partial, c->reduce ? c->sums : NULL, c->apart);
  return cgloop_cuda_reduced(c, CGLOOP_RULE_CG_CURVATURE, 1);
}

int cgloop_cuda_step(cgloop_cuda *c, double *x, double *r, const double *p, const double *w, const double *d)
{
  cgloop_step_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, x, r, p, w, d, c->partial + CGLOOP_MAX_BLOCKS, c->reduce ? c->sums : NULL);
  return cgloop_cuda_reduced(c, CGLOOP_RULE_CG_STEP, 2);
}

int cgloop_cuda_close(cgloop_cuda *c, const double *r, const double *z)
{
  /* the step pass's partials: that pass has summed them (stream order) before this one runs */
  cgloop_close_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, r, z, c->partial + CGLOOP_MAX_BLOCKS, c->reduce ? c->sums : NULL);
  return cgloop_cuda_reduced(c, CGLOOP_RULE_CG_CLOSE, 2);
}

__global__ static void cgloop_jacobi_fix_kernel(long long n, double *d)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    if (d[i] == 0.0) d[i] = 1.0;
}

int cgloop_cuda_jacobi_fix(void *stream, long long n, double *d)
{
  long long blocks = (n + CGLOOP_THREADS - 1) / CGLOOP_THREADS;

  if (n <= 0) return 0;
  if (blocks > CGLOOP_MAX_BLOCKS) blocks = CGLOOP_MAX_BLOCKS;
  cgloop_jacobi_fix_kernel<<<(unsigned)blocks, CGLOOP_THREADS, 0, (cudaStream_t)stream>>>(n, d);
  return (int)cudaGetLastError();
}

int cgloop_cuda_csr_product(cgloop_cuda *c, int nrows, int ncols, int nnz, const int *rowptr, const int *colidx, const double *vals, const double *p, double *w)
{
#if !defined(CGLOOP_WITH_CUSPARSE)
  (void)c; (void)nrows; (void)ncols; (void)nnz; (void)rowptr; (void)colidx; (void)vals; (void)p; (void)w;
  return (int)cudaErrorNotSupported; /* built without cuSPARSE (no CUDA PETSc): never asked for */
#else
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y;
  const double         one = 1.0, zero = 0.0;
  size_t               need = 0;
  int                  rc   = 0;

  if (!c->sparse) {
    CGLOOP_SP(cusparseCreate(&c->sparse));
    CGLOOP_SP(cusparseSetStream(c->sparse, c->stream));
  }
  CGLOOP_SP(cusparseCreateCsr(&A, nrows, ncols, nnz, (void *)rowptr, (void *)colidx, (void *)vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CGLOOP_SP(cusparseCreateDnVec(&X, ncols, (void *)p, CUDA_R_64F));
  CGLOOP_SP(cusparseCreateDnVec(&Y, nrows, (void *)w, CUDA_R_64F));
  if (cusparseSpMV_bufferSize(c->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &need) != CUSPARSE_STATUS_SUCCESS) rc = 1000 + (int)CUSPARSE_STATUS_INTERNAL_ERROR;
  if (!rc && need > c->spbuf_size) {
    /* never inside a capture: the first product of a solve runs before the capture */
    if (c->spbuf) cudaFree(c->spbuf);
    c->spbuf      = NULL;
    c->spbuf_size = 0;
    rc            = (int)cudaMalloc(&c->spbuf, need);
    if (!rc) c->spbuf_size = need;
  }
  if (!rc) {
    cusparseStatus_t s = cusparseSpMV(c->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, c->spbuf);
    if (s != CUSPARSE_STATUS_SUCCESS) rc = 1000 + (int)s;
  }
  cusparseDestroySpMat(A);
  cusparseDestroyDnVec(X);
  cusparseDestroyDnVec(Y);
  return rc;
#endif
}

int cgloop_cuda_state_fetch(cgloop_cuda *c, int slot)
{
  CGLOOP_CU(cudaMemcpyAsync(&c->hstate[slot], c->dstate, sizeof(cgloop_state), cudaMemcpyDeviceToHost, c->run));
  CGLOOP_CU(cudaEventRecord(c->fetched[slot], c->run));
  return 0;
}

int cgloop_cuda_state_wait(cgloop_cuda *c, int slot, const cgloop_state **st)
{
  cgloop_state *h = &c->hstate[slot];

  CGLOOP_CU(cudaEventSynchronize(c->fetched[slot]));
  /* a step's rule the next direction pass will apply on the GPU: applied here to the host's copy, by the same rule on
     the same totals (the same bits).  Looks come after a step (a whole iteration), so no curvature's rule is pending. */
  if (h->pending == CGLOOP_PENDING_STEP) {
    if (!h->stop) cgloop_after_step(h, c->shape.norm, h->sums[0], h->sums[1]);
    h->pending = CGLOOP_PENDING_NONE;
  }
  *st = h;
  return 0;
}

int cgloop_cuda_capture_begin(cgloop_cuda *c)
{
  CGLOOP_CU((cudaError_t)cgloop_cuda_drop_graph(c));
  CGLOOP_CU(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
  return 0;
}

int cgloop_cuda_capture_end(cgloop_cuda *c)
{
  cudaError_t e = cudaStreamEndCapture(c->stream, &c->graph);
  if (e != cudaSuccess) {
    c->graph = NULL;
    (void)cudaGetLastError();
    return (int)e;
  }
  /* each kernel keeps the priority of the stream it was captured on (a graph otherwise runs every node at its launch
     stream's): the ghost exchange's high-priority stream then still gets SMs ahead of the diagonal block's product
     that it overlaps, as outside a graph */
  e = cudaGraphInstantiate(&c->exec, c->graph, cudaGraphInstantiateFlagUseNodePriority);
  if (e == cudaErrorInvalidValue) { /* a driver without the flag: the launch stream's priority for every node */
    (void)cudaGetLastError();
    e = cudaGraphInstantiate(&c->exec, c->graph, 0);
  }
  if (e != cudaSuccess) {
    c->exec = NULL;
    (void)cudaGetLastError();
  }
  return (int)e;
}

int cgloop_cuda_launch(cgloop_cuda *c)
{
  CGLOOP_CU(cudaGraphLaunch(c->exec, c->stream));
  return 0;
}

int cgloop_cuda_has_graph(cgloop_cuda *c)
{
  return c->exec != NULL;
}

int cgloop_cuda_mark(cgloop_cuda *c, int which)
{
  CGLOOP_CU(cudaEventRecord(c->mark[which], c->run));
  return 0;
}

int cgloop_cuda_elapsed(cgloop_cuda *c, double *seconds)
{
  float ms = 0.0f;
  CGLOOP_CU(cudaEventSynchronize(c->mark[1]));
  CGLOOP_CU(cudaEventElapsedTime(&ms, c->mark[0], c->mark[1]));
  *seconds = 1e-3 * ms;
  return 0;
}
}
