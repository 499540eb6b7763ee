/*
  bcgsloop_cuda.cu - the BiCGStab passes of bcgsloop.h on CUDA arrays, in the context of cgloop_cuda.cu (its stream,
  state, partials and graph capture); the reductions as cgloop_cuda_impl.h describes, one counter (arrived[0]) for the
  iteration's three reductions, which run one after the other on the stream; on several ranks each reduction's totals are
  summed over the ranks before its rule runs (cgloop_cuda_reduced()).
*/
#include "cgloop_cuda_impl.h"
#include "bcgsloop_rules.h"

#define BCGSLOOP_FOR(i, n) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)

/* the k block sums of v[] written as partials; true in every thread of the last block, which then holds the totals */
__device__ static bool bcgsloop_reduce(cgloop_state *st, double *partial, int k, double *v, double *sh)
{
  for (int j = 0; j < k; j++) {
    if (j) __syncthreads();
    v[j] = cgloop_block_sum(v[j], sh);
  }
  if (!cgloop_arrive(st, 0, partial, k, v)) return false;
  for (int j = 0; j < k; j++) {
    __syncthreads();
    v[j] = cgloop_total(partial + j * CGLOOP_MAX_BLOCKS, sh);
  }
  return true;
}

__global__ static void bcgsloop_direction_kernel(cgloop_shape s, cgloop_state *st, const double *r, const double *v, double *p)
{
  double beta, c;

  if (st->stop) return;
  bcgsloop_direction_coefficients(st, &beta, &c);
  BCGSLOOP_FOR(i, s.n) p[i] = r[i] + c * v[i] + beta * p[i];
}

__global__ static void bcgsloop_alpha_kernel(cgloop_shape s, cgloop_state *st, double *v, const double *d, const double *rp, double *partial, double *sums)
{
  __shared__ double sh[CGLOOP_THREADS];
  double            sum[1] = {0.0};

  if (st->stop) return;
  BCGSLOOP_FOR(i, s.n)
  {
    const double vi = s.pc == CGLOOP_PC_DIAGONAL ? d[i] * v[i] : v[i];
    if (s.pc == CGLOOP_PC_DIAGONAL) v[i] = vi;
    sum[0] += vi * rp[i];
  }
  if (!bcgsloop_reduce(st, partial, 1, sum, sh)) return;
  if (threadIdx.x == 0) cgloop_totals(CGLOOP_RULE_BCGS_ALPHA, &s, st, 0, sum, 1, sums);
}

__global__ static void bcgsloop_residual_kernel(cgloop_shape s, cgloop_state *st, const double *r, const double *v, double *sv)
{
  if (st->stop) return;
  const double a = st->alpha;
  BCGSLOOP_FOR(i, s.n) sv[i] = r[i] - a * v[i];
}

__global__ static void bcgsloop_omega_kernel(cgloop_shape s, cgloop_state *st, const double *sv, double *t, const double *d, double *partial, double *sums)
{
  __shared__ double sh[CGLOOP_THREADS];
  double            sum[3] = {0.0, 0.0, 0.0};

  if (st->stop) return;
  BCGSLOOP_FOR(i, s.n)
  {
    const double ti = s.pc == CGLOOP_PC_DIAGONAL ? d[i] * t[i] : t[i];
    const double si = sv[i];
    if (s.pc == CGLOOP_PC_DIAGONAL) t[i] = ti;
    sum[0] += si * ti;
    sum[1] += ti * ti;
    sum[2] += si * si;
  }
  if (!bcgsloop_reduce(st, partial, 3, sum, sh)) return;
  if (threadIdx.x == 0) cgloop_totals(CGLOOP_RULE_BCGS_OMEGA, &s, st, 0, sum, 3, sums);
}

__global__ static void bcgsloop_step_kernel(cgloop_shape s, cgloop_state *st, double *x, double *r, const double *p, const double *sv, const double *t, const double *rp, double *partial, double *sums)
{
  __shared__ double sh[CGLOOP_THREADS];
  double            sum[2] = {0.0, 0.0};

  if (st->stop) return;
  const double a = st->alpha, w = st->omega;
  BCGSLOOP_FOR(i, s.n)
  {
    const double si = sv[i], ri = si - w * t[i];
    x[i] = a * p[i] + w * si + x[i];
    r[i] = ri;
    sum[0] += ri * ri;
    sum[1] += ri * rp[i];
  }
  if (!bcgsloop_reduce(st, partial, 2, sum, sh)) return;
  if (threadIdx.x == 0) cgloop_totals(CGLOOP_RULE_BCGS_STEP, &s, st, 0, sum, 2, sums);
}

extern "C" {

int bcgsloop_cuda_direction(cgloop_cuda *c, const double *r, const double *v, double *p)
{
  bcgsloop_direction_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, r, v, p);
  return (int)cudaPeekAtLastError();
}

int bcgsloop_cuda_alpha(cgloop_cuda *c, double *v, const double *d, const double *rp)
{
  bcgsloop_alpha_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, v, d, rp, c->partial, c->reduce ? c->sums : NULL);
  return cgloop_cuda_reduced(c, CGLOOP_RULE_BCGS_ALPHA, 1);
}

int bcgsloop_cuda_residual(cgloop_cuda *c, const double *r, const double *v, double *s)
{
  bcgsloop_residual_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, r, v, s);
  return (int)cudaPeekAtLastError();
}

int bcgsloop_cuda_omega(cgloop_cuda *c, const double *s, double *t, const double *d)
{
  bcgsloop_omega_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, s, t, d, c->partial, c->reduce ? c->sums : NULL);
  return cgloop_cuda_reduced(c, CGLOOP_RULE_BCGS_OMEGA, 3);
}

int bcgsloop_cuda_step(cgloop_cuda *c, double *x, double *r, const double *p, const double *s, const double *t, const double *rp)
{
  bcgsloop_step_kernel<<<c->nblocks, CGLOOP_THREADS, 0, c->run>>>(c->shape, c->dstate, x, r, p, s, t, rp, c->partial, c->reduce ? c->sums : NULL);
  return cgloop_cuda_reduced(c, CGLOOP_RULE_BCGS_STEP, 2);
}
}
