/*
  cgloop_cuda_impl.h - the CUDA context of cgloop.h and the device helpers of its reductions, shared by the passes of
  every recurrence (cgloop_cuda.cu: CG and the context's API; bcgsloop_cuda.cu: BiCGStab).  CUDA sources only.

  Reductions: each block sums a grid-stride share of the indices in index order, reduces in shared memory by a fixed
  tree and writes one partial per block; the last block to arrive (a counter in the state, reset by that block) sums the
  partials in the same fixed way and runs the scalar rules.  The block count depends on n only, so the sums, and every
  iterate, have the same bits on every run.  On several ranks (a reducer set) that block writes the rank's totals to
  sums instead; the reducer (an all-reduce on the stream, whose result is taken to have the same bits on every rank)
  sums them over the ranks, and a one-thread kernel runs the rules on it (CG's two rules with a diagonal or no
  preconditioner: the next pass, cgloop.h), so that every rank stops at the same iteration.  The passes of one stream run in order, so successive reductions may share
  the partials and the counters.
*/
#ifndef CGLOOP_CUDA_IMPL_H
#define CGLOOP_CUDA_IMPL_H
#include <cuda_runtime.h>
#if defined(CGLOOP_WITH_CUSPARSE)
  #include <cusparse.h>
#endif
#include <stdlib.h>
#include "cgloop_rules.h"
#include "bcgsloop_rules.h"

#define CGLOOP_THREADS 256
#define CGLOOP_MAX_BLOCKS 1024

/* the rows the curvature pass folds a product's off-diagonal part into, grouped by the block that reads them: block b
   takes rows[off[b] .. off[b + 1]) (yoff NULL: none) */
typedef struct {
  const int *off, *rows;
  double    *yoff;
} cgloop_apart;

struct cgloop_cuda {
  cgloop_shape         shape;
  int                  nblocks;
  cudaStream_t         stream; /* the context's own */
  cudaStream_t         run;    /* where the passes go: the own stream, or the caller's */
  cgloop_state        *dstate;     /* device */
  cgloop_state        *hstate;     /* pinned: [0], [1] fetch slots, [2] staging for set_state */
  double              *partial;    /* 3 * CGLOOP_MAX_BLOCKS: up to 3 values per block of a reduction */
  double              *sums;       /* dstate->sums: a reduction's totals on this rank, then over the ranks */
  cgloop_reducer       reduce;     /* NULL on one rank */
  void                *reduce_ctx;
  cudaEvent_t          fetched[2], fence, mark[2];
  cudaGraph_t          graph;
  cudaGraphExec_t      exec;
#if defined(CGLOOP_WITH_CUSPARSE)
  cusparseHandle_t     sparse;
#endif
  void                *spbuf;
  size_t               spbuf_size;
  cgloop_apart         apart; /* the product's off-diagonal part to fold in (cgloop_cuda_set_apart), or none */
  long long            apart_n;
};

/* sum of one value per thread of the block, by a fixed tree; the result in thread 0 */
__device__ static double cgloop_block_sum(double v, double *sh)
{
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = CGLOOP_THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
}

/* Writes this block's partials (k values), and returns in every thread of the last block to arrive whether it is the
   last; that block then finds the totals with cgloop_total(). */
__device__ static bool cgloop_arrive(cgloop_state *st, int which, double *partial, int k, const double *vals)
{
  __shared__ bool last;
  if (threadIdx.x == 0) {
    for (int j = 0; j < k; j++) partial[j * CGLOOP_MAX_BLOCKS + blockIdx.x] = vals[j];
    __threadfence();
    last = atomicAdd(&st->arrived[which], 1u) == gridDim.x - 1;
    if (last) __threadfence(); /* the other blocks' writes (and reads of the state) before the last block's */
  }
  __syncthreads();
  return last;
}

__device__ static double cgloop_total(const double *partial, double *sh)
{
  double v = 0.0;
  for (int b = threadIdx.x; b < (int)gridDim.x; b += CGLOOP_THREADS) v += ((volatile const double *)partial)[b];
  return cgloop_block_sum(v, sh);
}


/* the reductions of one iteration, each with its scalar rule */
typedef enum {
  CGLOOP_RULE_CG_CURVATURE,
  CGLOOP_RULE_CG_STEP,
  CGLOOP_RULE_CG_CLOSE,
  CGLOOP_RULE_BCGS_ALPHA,
  CGLOOP_RULE_BCGS_OMEGA,
  CGLOOP_RULE_BCGS_STEP
} cgloop_rule;

/* the scalar rule of a reduction on its totals t[] */
__device__ static void cgloop_conclude(cgloop_rule rule, const cgloop_shape *s, cgloop_state *st, const double *t)
{
  switch (rule) {
  case CGLOOP_RULE_CG_CURVATURE:
    cgloop_after_curvature(st, t[0]);
    break;
  case CGLOOP_RULE_CG_STEP:
    if (s->pc == CGLOOP_PC_GENERAL) st->rr = t[0];
    else cgloop_after_step(st, s->norm, t[0], t[1]);
    break;
  case CGLOOP_RULE_CG_CLOSE:
    cgloop_after_step(st, s->norm, t[0], s->norm == CGLOOP_NORM_UNPRECONDITIONED ? st->rr : t[1]);
    break;
  case CGLOOP_RULE_BCGS_ALPHA:
    bcgsloop_after_alpha(st, t[0]);
    break;
  case CGLOOP_RULE_BCGS_OMEGA:
    bcgsloop_after_omega(st, t[0], t[1], t[2]);
    break;
  case CGLOOP_RULE_BCGS_STEP:
    bcgsloop_after_step(st, s->norm, t[0], t[1]);
    break;
  }
}

/* in thread 0 of the last block, with the totals t[k]: the rule (one rank) or the totals to sums (several) */
__device__ static void cgloop_totals(cgloop_rule rule, const cgloop_shape *s, cgloop_state *st, int which, const double *t, int k, double *sums)
{
  if (sums)
    for (int j = 0; j < k; j++) sums[j] = t[j];
  else cgloop_conclude(rule, s, st, t);
  st->arrived[which] = 0;
}

/* on several ranks: sums[0..k) over the ranks, then the rule on them (called after every reduction pass) */
int cgloop_cuda_reduced(cgloop_cuda *c, cgloop_rule rule, int k);
#endif
