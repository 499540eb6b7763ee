/*
  tests/gpu/cgloop_check.cu - the CG passes of cgloop.h on the GPU along the several-ranks path on one rank (each
  reduction's totals through a reducer, here the identity, and CG's rules then run in the next pass) against the
  one-rank path (the rules in each reduction's last block), PETSc-free (make BUILD=build/cuda spmv builds it as
  $(BUILD)/tests/gpu/cgloop_check; run it on the GPU machine).

  For each system (tridiagonal operators: SPD with no, Jacobi-diagonal preconditioning and each norm type, one large
  enough for many blocks; an indefinite operator; an indefinite preconditioner; A = 2I, where z'r = 0 after one step;
  an infinite diagonal entry, where p'Ap is not finite; max_it 1 and a first tested iteration), the loop runs as the
  library runs it (the first iterations enqueued one at a time with a look after each, then batches enqueued or
  replayed as a CUDA graph, one or two in flight) in six ways, twice each (a second solve), and checks:
  - every way gives the bits of the first (one rank, graph): the recorded norms, the final iteration count, stop, stop
    iteration, beta, beta's predecessor, alpha and p'Ap, and x and r (the sums do not depend on the way);
  - a look applies what the GPU has left pending: one more iteration enqueued past the stop leaves the state the last
    look saw (its count, stop and recorded norms);
  - the reducer saw the reductions (several-ranks ways only).
  Then the curvature pass with a product's off-diagonal part kept apart (check_apart).
  Prints "ok ..." / "FAIL ..." lines and the number of failures; exit status 1 on a failure.
*/
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <string>
#include "cgloop.h"
#include "loop_check.h"


struct Sys {
  int                 n;
  std::vector<int>    rp, ci;
  std::vector<double> v, b, d;
  cgloop_pc           pc;
  cgloop_norm         norm;
  int                 test_tol;
  double              rtol;
  long long           max_it, first_test;
};

__global__ static void spmv(int n, const int *rp, const int *ci, const double *v, const double *x, double *y)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double s = 0;
    for (int k = rp[i]; k < rp[i + 1]; k++) s += v[k] * x[ci[k]];
    y[i] = s;
  }
}

static long g_reduced;
static int  identity_reducer(void *ctx, double *sums, int count, void *stream)
{
  (void)ctx, (void)sums, (void)count, (void)stream;
  g_reduced++;
  return 0;
}

static unsigned long long fnv(const void *p, size_t n)
{
  const unsigned char *c = (const unsigned char *)p;
  unsigned long long   h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}


/* the norms recorded since the last look, in hex, appended to out: over the looks of a solve, its whole history */
static void dump(std::string &out, const cgloop_state *st, long long *shown)
{
  char      line[64];
  long long from = *shown;
  if (st->it - from > CGLOOP_RING) from = st->it - CGLOOP_RING;
  for (long long j = from; j < st->it; j++) {
    snprintf(line, sizeof(line), "h%lld=%a\n", j, st->hist[j % CGLOOP_RING]);
    out += line;
  }
  if (st->it > *shown) *shown = st->it;
}

struct Mode {
  const char *name;
  int         reduce, graph, depth, batch, nfirst;
};

/* the loop's record of one way: every look, and x and r after each of two solves */
static std::string run(const char *cname, const Sys &s, const Mode &m)
{
  std::string out;
  char        what[256];
  cgloop_shape sh = {s.n, s.norm, s.pc};
  cgloop_cuda *c;
  double      *dx, *dr, *dp, *dw, *dd, *dv;
  int         *drp, *dci;
  size_t       bytes = sizeof(double) * s.n;

  CU(cgloop_cuda_create(&sh, &c));
  CU(cgloop_cuda_set_shape(c, &sh, NULL, 0));
  CU(cgloop_cuda_set_reducer(c, m.reduce ? identity_reducer : NULL, NULL));
  CU(cudaMalloc(&dx, bytes));
  CU(cudaMalloc(&dr, bytes));
  CU(cudaMalloc(&dp, bytes));
  CU(cudaMalloc(&dw, bytes));
  CU(cudaMalloc(&dd, bytes));
  CU(cudaMalloc(&dv, sizeof(double) * s.v.size()));
  CU(cudaMalloc(&drp, sizeof(int) * s.rp.size()));
  CU(cudaMalloc(&dci, sizeof(int) * s.ci.size()));
  CU(cudaMemcpy(dv, s.v.data(), sizeof(double) * s.v.size(), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(drp, s.rp.data(), sizeof(int) * s.rp.size(), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dci, s.ci.data(), sizeof(int) * s.ci.size(), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dd, s.d.data(), bytes, cudaMemcpyHostToDevice));
  const double *darg = s.pc == CGLOOP_PC_DIAGONAL ? dd : NULL;
  auto          iterate = [&]() {
    CU(cgloop_cuda_direction(c, dr, darg, NULL, dp));
    spmv<<<(s.n + 255) / 256, 256, 0, (cudaStream_t)cgloop_cuda_stream(c)>>>(s.n, drp, dci, dv, dp, dw);
    CU(cudaPeekAtLastError());
    CU(cgloop_cuda_curvature(c, dp, dw));
    CU(cgloop_cuda_step(c, dx, dr, dp, dw, darg));
  };
  for (int solve = 0; solve < 2; solve++) {
    const cgloop_state *st;
    long long           shown = 0;
    cgloop_state        st0;
    double              beta = 0, r0 = 0;

    CU(cudaDeviceSynchronize());
    CU(cudaMemset(dx, 0, bytes));
    CU(cudaMemset(dp, 0, bytes));
    CU(cudaMemset(dw, 0, bytes));
    CU(cudaMemcpy(dr, s.b.data(), bytes, cudaMemcpyHostToDevice));
    for (int i = 0; i < s.n; i++) {
      double z = s.pc == CGLOOP_PC_DIAGONAL ? s.d[i] * s.b[i] : s.b[i];
      beta += z * s.b[i];
      r0 += (s.norm == CGLOOP_NORM_UNPRECONDITIONED ? s.b[i] * s.b[i] : z * z);
    }
    r0 = s.norm == CGLOOP_NORM_NATURAL ? sqrt(fabs(beta)) : sqrt(r0);
    memset(&st0, 0, sizeof st0);
    st0.max_it     = s.max_it;
    st0.test_tol   = s.test_tol;
    st0.ttol       = s.rtol * r0;
    st0.dtol       = 1e5 * r0;
    st0.first_test = s.first_test;
    st0.beta       = beta;
    st0.betaold    = 1.0;
    CU(cgloop_cuda_set_state(c, &st0));
    int finished = 0;
    for (int k = 0; k < m.nfirst && !finished; k++) {
      iterate();
      CU(cgloop_cuda_state_fetch(c, 0));
      CU(cgloop_cuda_state_wait(c, 0, &st));
      dump(out, st, &shown);
      finished = st->stop != 0;
    }
    int graph = m.graph;
    if (!finished && graph && !cgloop_cuda_has_graph(c)) {
      CU(cgloop_cuda_capture_begin(c));
      for (int k = 0; k < m.batch; k++) iterate();
      CU(cgloop_cuda_capture_end(c));
    }
    int inflight = 0, slot = 0;
    while (!finished || inflight) {
      if (!finished && inflight < m.depth) {
        if (graph) CU(cgloop_cuda_launch(c));
        else
          for (int k = 0; k < m.batch; k++) iterate();
        CU(cgloop_cuda_state_fetch(c, (slot + inflight) % 2));
        inflight++;
        continue;
      }
      CU(cgloop_cuda_state_wait(c, slot, &st));
      slot = (slot + 1) % 2;
      inflight--;
      if (finished) continue;
      dump(out, st, &shown);
      finished = st->stop != 0;
    }
    /* one more iteration past the stop: the GPU applies what it still had pending, and must then hold what the last
       look saw */
    {
      const cgloop_state last = *st;
      snprintf(what, sizeof(what), "end it=%lld stop=%d stop_it=%lld beta=%a betaold=%a alpha=%a dpi=%a\n", last.it, last.stop, last.stop_it, last.beta, last.betaold, last.alpha, last.dpi);
      out += what;
      iterate();
      CU(cgloop_cuda_state_fetch(c, 0));
      CU(cgloop_cuda_state_wait(c, 0, &st));
      snprintf(what, sizeof(what), "%s %s solve %d: the GPU's state past the stop is the last look's (%lld iterations, stop %d)", cname, m.name, solve, last.it, last.stop);
      check(st->it == last.it && st->stop == last.stop && st->stop_it == last.stop_it && st->beta == last.beta && !memcmp(st->hist, last.hist, sizeof(last.hist)), what);
    }
    CU(cudaDeviceSynchronize());
    std::vector<double> x(s.n), r(s.n);
    CU(cudaMemcpy(x.data(), dx, bytes, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(r.data(), dr, bytes, cudaMemcpyDeviceToHost));
    snprintf(what, sizeof(what), "solve %d x=%016llx r=%016llx\n", solve, fnv(x.data(), bytes), fnv(r.data(), bytes));
    out += what;
  }
  CU(cudaFree(dx));
  CU(cudaFree(dr));
  CU(cudaFree(dp));
  CU(cudaFree(dw));
  CU(cudaFree(dd));
  CU(cudaFree(dv));
  CU(cudaFree(drp));
  CU(cudaFree(dci));
  CU(cgloop_cuda_destroy(c));
  return out;
}

/* tridiagonal: diag[i], off-diagonal off */
static Sys tri(int n, double (*diag)(int), double off)
{
  Sys s;
  s.n = n;
  s.rp.push_back(0);
  for (int i = 0; i < n; i++) {
    if (i > 0 && off != 0) {
      s.ci.push_back(i - 1);
      s.v.push_back(off);
    }
    s.ci.push_back(i);
    s.v.push_back(diag(i));
    if (i < n - 1 && off != 0) {
      s.ci.push_back(i + 1);
      s.v.push_back(off);
    }
    s.rp.push_back((int)s.ci.size());
  }
  s.b.resize(n);
  s.d.resize(n);
  for (int i = 0; i < n; i++) {
    s.b[i] = 1.0 + 0.5 * sin(0.37 * i) + 1e-3 * (i % 17);
    s.d[i] = 1.0 / diag(i);
  }
  s.pc         = CGLOOP_PC_NONE;
  s.norm       = CGLOOP_NORM_PRECONDITIONED;
  s.test_tol   = 1;
  s.rtol       = 1e-10;
  s.max_it     = 400;
  s.first_test = 0;
  return s;
}

static double d22(int i) { return 2.2 + 0.8 * sin(0.01 * i); }
static double d2(int) { return 2.0; }
static double dindef(int i) { return (i % 3 == 0) ? -(1.0 + (i % 5)) : 1.0 + (i % 7); }
static double dinf(int i) { return i == 5 ? INFINITY : 2.5; }

/* The product's off-diagonal part kept apart (cgloop_cuda_set_apart): the curvature pass folds yoff into w on its rows
   and sums p'w with it.  Against w + yoff made first and the plain pass: w's bits the same (the same addition), yoff
   zero again, p'Ap within rounding of the other order and the same bits on a second run; with rows past the grid's
   first stride (each block reading several strides), a stopped state leaving w and yoff alone, and the clear. */
static double apart_curvature(cgloop_cuda *c, const cgloop_state *st0, const double *dp, double *dw)
{
  const cgloop_state *st;

  CU(cgloop_cuda_set_state(c, st0));
  CU(cgloop_cuda_curvature(c, dp, dw));
  CU(cgloop_cuda_state_fetch(c, 0));
  CU(cgloop_cuda_state_wait(c, 0, &st));
  return st->dpi;
}

static void check_apart(void)
{
  const int           n = 700001; /* 1024 blocks of 256 threads: each block reads rows of three strides */
  cgloop_shape        sh = {n, CGLOOP_NORM_PRECONDITIONED, CGLOOP_PC_NONE};
  cgloop_cuda        *c;
  cgloop_state        st0;
  std::vector<int>    rows;
  std::vector<double> p(n), w(n), y(n, 0.0), wsum, wa(n), ya(n);
  double             *dp, *dw, *dy = NULL, mag = 0.0;
  const size_t        bytes = sizeof(double) * n;
  char                what[256];

  for (int i = 0; i < n; i++) {
    p[i] = sin(0.001 * i) + 1.5;
    w[i] = cos(0.003 * i) * (1.0 + (i % 13));
    if (i % 7 == 3 || i >= n - 300) {
      rows.push_back(i);
      y[i] = 0.25 * sin(0.1 * i) + 1e-3 * (i % 17);
    }
  }
  wsum = w;
  for (int r : rows) wsum[r] += y[r];
  for (int i = 0; i < n; i++) mag += fabs(p[i] * wsum[i]);
  memset(&st0, 0, sizeof st0);
  st0.beta   = 1.0;
  st0.max_it = 100;
  CU(cgloop_cuda_create(&sh, &c));
  CU(cgloop_cuda_set_shape(c, &sh, NULL, 0));
  CU(cudaMalloc(&dp, bytes));
  CU(cudaMalloc(&dw, bytes));
  CU(cudaMemcpy(dp, p.data(), bytes, cudaMemcpyHostToDevice));
  /* the plain pass on w + yoff */
  CU(cudaMemcpy(dw, wsum.data(), bytes, cudaMemcpyHostToDevice));
  const double plain = apart_curvature(c, &st0, dp, dw);
  /* folded, twice */
  CU(cgloop_cuda_set_apart(c, (long long)rows.size(), rows.data(), &dy));
  check(dy != NULL, "apart: the rows set, their vector given");
  double folded[2];
  bool   wsame = true, yzero = true;
  for (int k = 0; k < 2; k++) {
    CU(cudaMemcpy(dw, w.data(), bytes, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dy, y.data(), bytes, cudaMemcpyHostToDevice));
    folded[k] = apart_curvature(c, &st0, dp, dw);
    CU(cudaMemcpy(wa.data(), dw, bytes, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(ya.data(), dy, bytes, cudaMemcpyDeviceToHost));
    wsame = wsame && !memcmp(wa.data(), wsum.data(), bytes);
    for (int i = 0; i < n; i++) yzero = yzero && ya[i] == 0.0;
  }
  check(wsame, "apart: w folded on its rows has the bits of w + yoff");
  check(yzero, "apart: yoff zero again after the pass");
  snprintf(what, sizeof(what), "apart: p'Ap %.17g within rounding of the plain pass's %.17g", folded[0], plain);
  check(fabs(folded[0] - plain) <= 1e-13 * mag, what);
  check(!memcmp(&folded[0], &folded[1], sizeof(double)), "apart: p'Ap the same bits on a second run");
  /* stopped: nothing touched; then the clear zeroes the rows */
  st0.stop = CGLOOP_STOP_MAXIT;
  CU(cudaMemcpy(dw, w.data(), bytes, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dy, y.data(), bytes, cudaMemcpyHostToDevice));
  (void)apart_curvature(c, &st0, dp, dw);
  CU(cudaMemcpy(wa.data(), dw, bytes, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(ya.data(), dy, bytes, cudaMemcpyDeviceToHost));
  check(!memcmp(wa.data(), w.data(), bytes) && !memcmp(ya.data(), y.data(), bytes), "apart: a stopped pass leaves w and yoff alone");
  CU(cgloop_cuda_apart_clear(c));
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(ya.data(), dy, bytes, cudaMemcpyDeviceToHost));
  yzero = true;
  for (int i = 0; i < n; i++) yzero = yzero && ya[i] == 0.0;
  check(yzero, "apart: the clear zeroes yoff's rows");
  /* none again: the plain pass */
  CU(cgloop_cuda_set_apart(c, 0, NULL, &dy));
  st0.stop = CGLOOP_RUNNING;
  CU(cudaMemcpy(dw, wsum.data(), bytes, cudaMemcpyHostToDevice));
  const double again = apart_curvature(c, &st0, dp, dw);
  check(dy == NULL && !memcmp(&again, &plain, sizeof(double)), "apart: no rows set, the plain pass's bits");
  CU(cudaFree(dp));
  CU(cudaFree(dw));
  CU(cgloop_cuda_destroy(c));
}

int main(int argc, char **argv)
{
  const char *only = argc > 1 ? argv[1] : NULL;
  std::vector<std::pair<std::string, Sys>> cases;
  {
    Sys s = tri(1000, d22, -1.0);
    cases.push_back({"spd_none_test", s});
  }
  {
    Sys s = tri(600000, d22, -1.0);
    s.pc   = CGLOOP_PC_DIAGONAL;
    s.norm = CGLOOP_NORM_UNPRECONDITIONED;
    cases.push_back({"spd_jacobi_big_unprec", s});
  }
  {
    Sys s = tri(50000, d22, -1.0);
    s.pc   = CGLOOP_PC_DIAGONAL;
    s.norm = CGLOOP_NORM_NATURAL;
    cases.push_back({"spd_jacobi_natural", s});
  }
  {
    Sys s = tri(100000, d2, -1.0);
    s.max_it = 150;
    cases.push_back({"lap_maxit", s});
  }
  {
    Sys s = tri(100000, d2, -1.0);
    s.max_it   = 100;
    s.test_tol = 0;
    s.norm     = CGLOOP_NORM_NONE;
    cases.push_back({"lap_notest_normnone", s});
  }
  {
    Sys s = tri(20000, dindef, -0.3);
    cases.push_back({"indef_mat", s});
  }
  {
    Sys s = tri(20000, d22, -1.0);
    s.pc = CGLOOP_PC_DIAGONAL;
    for (int i = 0; i < s.n; i++)
      if (i % 4 == 1) s.d[i] = -s.d[i];
    cases.push_back({"indef_pc", s});
  }
  {
    Sys s = tri(70000, d2, 0.0);
    s.test_tol = 0;
    s.max_it   = 10;
    cases.push_back({"beta_zero", s});
  }
  {
    Sys s = tri(3000, dinf, -1.0);
    s.test_tol = 0;
    cases.push_back({"nan_curvature", s});
  }
  {
    Sys s = tri(3000, d22, -1.0);
    s.max_it = 1;
    cases.push_back({"maxit1", s});
  }
  {
    Sys s = tri(5000, d22, -1.0);
    s.rtol       = 1e-1;
    s.first_test = 9;
    s.max_it     = 30;
    cases.push_back({"first_test", s});
  }
  Mode modes[] = {
    {"one_rank_graph_d2", 0, 1, 2, 7, 2},
    {"one_rank_eager_d1", 0, 0, 1, 1, 2},
    {"reduce_eager_d2",   1, 0, 2, 7, 3},
    {"reduce_graph_d2",   1, 1, 2, 7, 3},
    {"reduce_eager_d1_b1", 1, 0, 1, 1, 3},
    {"reduce_graph_d2_b64", 1, 1, 2, 64, 3},
  };
  for (auto &cs : cases) {
    std::string first;
    char        what[256];
    if (only && cs.first != only) continue;
    for (const Mode &m : modes) {
      const long  before = g_reduced;
      std::string rec    = run(cs.first.c_str(), cs.second, m);
      if (&m == &modes[0]) {
        first = rec;
        continue;
      }
      snprintf(what, sizeof(what), "%s %s: the same bits as %s (norms, final scalars, x and r)", cs.first.c_str(), m.name, modes[0].name);
      check(rec == first, what);
      if (rec != first) printf("--- %s\n%s--- %s\n%s", modes[0].name, first.c_str(), m.name, rec.c_str());
      if (m.reduce) {
        snprintf(what, sizeof(what), "%s %s: the totals went through the reducer (%ld reductions)", cs.first.c_str(), m.name, g_reduced - before);
        check(g_reduced > before, what);
      }
    }
  }
  if (!only || !strcmp(only, "apart")) check_apart();
  printf("cgloop_check: %d failed\n", g_fail);
  return g_fail ? 1 : 0;
}
