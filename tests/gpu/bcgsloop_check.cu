/*
  tests/gpu/bcgsloop_check.cu - the BiCGStab passes of bcgsloop.h on the GPU against the same passes on the host,
  PETSc-free (make BUILD=build/cuda spmv builds it as $(BUILD)/tests/gpu/bcgsloop_check; run it on the GPU machine).

  For each system (a convection-diffusion operator of several sizes, one past the block count's cap; the operator with
  a Jacobi diagonal; a skew-symmetric operator with b = ones, where (v, rp) = 0 at once; a diagonal with b an
  eigenvector of eigenvalue 2, where s = 0 at the first iteration; blocks [2 2; 0 0] with b = ones, where t = 0 with
  s != 0), the loop runs on the host (index-order sums, a CSR
  product) and on the GPU (cuSPARSE's product, the passes on the context's stream, batches of iterations captured as
  one CUDA graph and replayed) and checks:
  - the same stop and the same iteration count (at most 400 iterations: the larger ones stop there);
  - residual norms recorded within 100 times what a rounding-size change of b does to the host's history (and at
    least 1e-9 relative), over the iterations where that change stays under 1e-6 and the norm above 1e-3 of the
    first (the sums' orders differ; BiCGStab amplifies rounding late in a solve);
  - the graph's replay and a second run give the same bits of x (repeatable sums, no floating-point atomics);
  - the several-ranks path on one rank (each reduction's totals through a reducer, here the identity, then the rule in
    its own kernel) gives the same bits, and the reducer saw the iteration's three reductions;
  - the constructed stops: breakdown at iteration 0, and the exact branch with x = b / 2 bit for bit.
  Prints "ok ..." / "FAIL ..." lines and the number of failures; exit status 1 on a failure.
*/
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include "cgloop.h"
#include "loop_check.h"
#include "bcgsloop.h"


enum Op { CONVECTION, SKEW, EIGEN, SINGULAR };

struct System {
  int                 n;
  std::vector<int>    rowptr, col;
  std::vector<double> val, b, diag;
};

static System build(Op op, int side)
{
  System s;
  s.n = op == CONVECTION ? side * side : side;
  s.rowptr.push_back(0);
  for (int row = 0; row < s.n; row++) {
    if (op == CONVECTION) {
      const int    i = row / side, j = row % side;
      const double h = 1.0 / (side + 1), ax = 20.0 * h / 2, ay = -10.0 * h / 2;
      const int    nb[5][2] = {{i - 1, j}, {i, j - 1}, {i, j}, {i, j + 1}, {i + 1, j}};
      const double w[5]     = {-1.0 - ax, -1.0 - ay, 4.0, -1.0 + ay, -1.0 + ax};
      for (int q = 0; q < 5; q++)
        if (nb[q][0] >= 0 && nb[q][0] < side && nb[q][1] >= 0 && nb[q][1] < side) {
          s.col.push_back(nb[q][0] * side + nb[q][1]);
          s.val.push_back(w[q]);
        }
      s.b.push_back(1.0 + 0.1 * (row % 7));
      s.diag.push_back(4.0);
    } else if (op == SKEW) {
      if (row > 0) s.col.push_back(row - 1), s.val.push_back(-1.0);
      if (row < s.n - 1) s.col.push_back(row + 1), s.val.push_back(1.0);
      s.b.push_back(1.0);
      s.diag.push_back(1.0);
    } else if (op == SINGULAR) { /* blocks [2 2; 0 0], b = ones: t = A s = 0 with s = (-1, 1) per block */
      s.col.push_back(row), s.val.push_back(row % 2 ? 0.0 : 2.0);
      if (row % 2 == 0) s.col.push_back(row + 1), s.val.push_back(2.0);
      s.b.push_back(1.0);
      s.diag.push_back(2.0);
    } else {
      const double d = row < s.n / 2 ? 2.0 : (row % 2 ? -3.0 : 5.0);
      s.col.push_back(row);
      s.val.push_back(d);
      s.b.push_back(row < s.n / 2 ? 1.0 : 0.0);
      s.diag.push_back(d);
    }
    s.rowptr.push_back((int)s.col.size());
  }
  return s;
}

static void host_mult(const System &s, const double *x, double *y)
{
  for (int i = 0; i < s.n; i++) {
    double v = 0.0;
    for (int k = s.rowptr[i]; k < s.rowptr[i + 1]; k++) v += s.val[k] * x[s.col[k]];
    y[i] = v;
  }
}

static cgloop_state start(const System &s, double *r0norm)
{
  cgloop_state st;
  double       rr = 0.0;
  memset(&st, 0, sizeof(st));
  for (int i = 0; i < s.n; i++) rr += s.b[i] * s.b[i]; /* r = b (no preconditioner) or d .* b below */
  *r0norm     = sqrt(rr);
  st.rho      = rr;
  st.rhoold   = 1.0;
  st.alpha    = 1.0;
  st.omegaold = 1.0;
  st.max_it   = 400; /* below the ring's 512: every norm is still recorded at the end */
  st.test_tol = 1;
  st.ttol     = 1e-10 * *r0norm;
  st.dtol     = 1e300;
  return st;
}

struct Run {
  cgloop_state        st;
  std::vector<double> hist, x;
};

/* r0 = B b with x0 = 0 (B = d for the diagonal), rp = r0, p = v = 0 */
static void initial(const System &s, bool jacobi, std::vector<double> &r, std::vector<double> &d)
{
  d.assign(s.n, 1.0);
  r = s.b;
  if (jacobi)
    for (int i = 0; i < s.n; i++) d[i] = 1.0 / s.diag[i], r[i] = d[i] * s.b[i];
}

static Run run_host(const System &s, bool jacobi)
{
  std::vector<double> r, d, x(s.n, 0.0), p(s.n, 0.0), v(s.n, 0.0), t(s.n), sv(s.n);
  cgloop_shape        sh = {s.n, CGLOOP_NORM_PRECONDITIONED, jacobi ? CGLOOP_PC_DIAGONAL : CGLOOP_PC_NONE};
  double              r0;
  Run                 out;

  initial(s, jacobi, r, d);
  std::vector<double> rp = r;
  System              sb = s;
  sb.b                   = r;
  out.st                 = start(sb, &r0);
  while (!out.st.stop) {
    bcgsloop_host_direction(&sh, &out.st, r.data(), v.data(), p.data());
    host_mult(s, p.data(), v.data());
    bcgsloop_host_alpha(&sh, &out.st, v.data(), d.data(), rp.data());
    bcgsloop_host_residual(&sh, &out.st, r.data(), v.data(), sv.data());
    host_mult(s, sv.data(), t.data());
    bcgsloop_host_omega(&sh, &out.st, sv.data(), t.data(), d.data());
    bcgsloop_host_step(&sh, &out.st, x.data(), r.data(), p.data(), sv.data(), t.data(), rp.data());
  }
  for (long long j = 0; j < out.st.it; j++) out.hist.push_back(out.st.hist[j % CGLOOP_RING]);
  out.x = x;
  return out;
}

/* the reducer of one rank (the sums over one rank are its own): counts the reductions and the values it was given */
static long g_reduced, g_reduced_values;
static int  identity_reducer(void *ctx, double *sums, int count, void *stream)
{
  (void)ctx, (void)sums, (void)stream;
  g_reduced++;
  g_reduced_values += count;
  return 0;
}

/* the GPU: two iterations enqueued, then batches of `batch` replayed as one graph until the state says stop; with
   reduce, the totals of every reduction go through identity_reducer() and every iteration is enqueued (no graph) */
static Run run_gpu(const System &s, bool jacobi, int batch, bool reduce = false)
{
  std::vector<double> r, d;
  cgloop_shape        sh = {s.n, CGLOOP_NORM_PRECONDITIONED, jacobi ? CGLOOP_PC_DIAGONAL : CGLOOP_PC_NONE};
  cgloop_cuda        *c;
  double              r0, *dr, *drp, *dx, *dp, *dv, *dt, *ds, *dd, *dval;
  int                *drow, *dcol;
  const cgloop_state *st;
  Run                 out;
  const size_t        bytes = sizeof(double) * s.n;

  initial(s, jacobi, r, d);
  System sb = s;
  sb.b      = r;
  cgloop_state st0 = start(sb, &r0);
  CU(cgloop_cuda_create(&sh, &c));
  CU(cgloop_cuda_set_shape(c, &sh, NULL, 0));
  if (reduce) CU(cgloop_cuda_set_reducer(c, identity_reducer, NULL));
  double **vecs[] = {&dr, &drp, &dx, &dp, &dv, &dt, &ds, &dd};
  for (double **v : vecs) CU(cudaMalloc((void **)v, bytes));
  CU(cudaMalloc((void **)&dval, sizeof(double) * s.val.size()));
  CU(cudaMalloc((void **)&drow, sizeof(int) * s.rowptr.size()));
  CU(cudaMalloc((void **)&dcol, sizeof(int) * s.col.size()));
  CU(cudaMemcpy(dval, s.val.data(), sizeof(double) * s.val.size(), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(drow, s.rowptr.data(), sizeof(int) * s.rowptr.size(), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dcol, s.col.data(), sizeof(int) * s.col.size(), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dr, r.data(), bytes, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(drp, r.data(), bytes, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dd, d.data(), bytes, cudaMemcpyHostToDevice));
  for (double *v : {dx, dp, dv}) CU(cudaMemset(v, 0, bytes));
  CU(cudaDeviceSynchronize());
  CU(cgloop_cuda_set_state(c, &st0));
  const double *dd_or_null = jacobi ? dd : NULL;
  auto          iterate    = [&]() {
    CU(bcgsloop_cuda_direction(c, dr, dv, dp));
    CU(cgloop_cuda_csr_product(c, s.n, s.n, (int)s.val.size(), drow, dcol, dval, dp, dv));
    CU(bcgsloop_cuda_alpha(c, dv, dd_or_null, drp));
    CU(bcgsloop_cuda_residual(c, dr, dv, ds));
    CU(cgloop_cuda_csr_product(c, s.n, s.n, (int)s.val.size(), drow, dcol, dval, ds, dt));
    CU(bcgsloop_cuda_omega(c, ds, dt, dd_or_null));
    CU(bcgsloop_cuda_step(c, dx, dr, dp, ds, dt, drp));
  };
  int stop = 0;
  for (int k = 0; k < 2 && !stop; k++) {
    iterate();
    CU(cgloop_cuda_state_fetch(c, 0));
    CU(cgloop_cuda_state_wait(c, 0, &st));
    stop = st->stop;
  }
  if (!stop && !reduce) { /* with the reducer each iteration is enqueued, as on several ranks */
    CU(cgloop_cuda_capture_begin(c));
    for (int k = 0; k < batch; k++) iterate();
    CU(cgloop_cuda_capture_end(c));
  }
  while (!stop) {
    if (reduce)
      for (int k = 0; k < batch; k++) iterate();
    else CU(cgloop_cuda_launch(c));
    CU(cgloop_cuda_state_fetch(c, 1));
    CU(cgloop_cuda_state_wait(c, 1, &st));
    stop = st->stop;
  }
  out.st = *st;
  for (long long j = 0; j < out.st.it; j++) out.hist.push_back(out.st.hist[j % CGLOOP_RING]);
  out.x.resize(s.n);
  CU(cudaMemcpy(out.x.data(), dx, bytes, cudaMemcpyDeviceToHost));
  for (double **v : vecs) CU(cudaFree(*v));
  CU(cudaFree(dval));
  CU(cudaFree(drow));
  CU(cudaFree(dcol));
  CU(cgloop_cuda_destroy(c));
  return out;
}

int main(void)
{
  struct {
    const char *name;
    Op          op;
    int         side;
    bool        jacobi;
  } cases[] = {
    {"convection_23x23_none",     CONVECTION, 23,   false},
    {"convection_23x23_jacobi",   CONVECTION, 23,   true },
    {"convection_300x300_jacobi", CONVECTION, 300,  true },
    {"convection_700x700_none",   CONVECTION, 700,  false}, /* 490000 rows: past the cap of 1024 blocks */
    {"skew_529_breakdown",        SKEW,       529,  false},
    {"eigen_529_exact",           EIGEN,      529,  false},
    {"singular_528_breakdown",    SINGULAR,   528,  false},
  };
  char what[512];

  for (auto &cs : cases) {
    System s  = build(cs.op, cs.side);
    Run    h  = run_host(s, cs.jacobi);
    Run    g  = run_gpu(s, cs.jacobi, 7);
    Run    g2 = run_gpu(s, cs.jacobi, 7);
    Run    g3 = run_gpu(s, cs.jacobi, 1);
    g_reduced = g_reduced_values = 0;
    Run    g4 = run_gpu(s, cs.jacobi, 1, true);
    double worst = 0.0;

    snprintf(what, sizeof(what), "%s: stop %d / %d at iteration %lld / %lld (host / GPU)", cs.name, h.st.stop, g.st.stop, h.st.it, g.st.it);
    check(h.st.stop == g.st.stop && h.st.it == g.st.it && h.st.stop_it == g.st.stop_it, what);
    /* the window: the norms above 1e-3 of the first that b moved by rounding (entry by entry) moves by at most 1e-6 on
       the host; past it rounding alone decides the digits (these operators' histories turn erratic late) */
    System sp = s;
    for (int i = 0; i < s.n; i++) sp.b[i] *= 1.0 + 1e-14 * (i % 3 - 1);
    Run    hp     = run_host(sp, cs.jacobi);
    size_t window = 0;
    double moved  = 0.0;
    while (window < h.hist.size() && window < hp.hist.size() && window < g.hist.size() && h.hist[window] >= 1e-3 * h.hist[0] && fabs(h.hist[window] - hp.hist[window]) <= 1e-6 * h.hist[window]) {
      moved = fmax(moved, fabs(h.hist[window] - hp.hist[window]) / h.hist[window]);
      worst = fmax(worst, fabs(h.hist[window] - g.hist[window]) / h.hist[window]);
      window++;
    }
    const double allowed = fmax(1e-9, 100.0 * moved);
    snprintf(what, sizeof(what), "%s: norms agree to %.2e relative (<= %.2e, 100 times what b moved by rounding does) over the first %zu of %zu", cs.name, worst, allowed, window, h.hist.size());
    check(worst <= allowed, what);
    snprintf(what, sizeof(what), "%s: the same bits again, and with batches of 1", cs.name);
    check(!memcmp(g.x.data(), g2.x.data(), sizeof(double) * s.n) && !memcmp(g.x.data(), g3.x.data(), sizeof(double) * s.n) && g.st.it == g3.st.it, what);
    snprintf(what, sizeof(what), "%s: the totals through a reducer (the several-ranks path): the same bits, %ld reductions of %ld values for %lld iterations", cs.name, g_reduced, g_reduced_values, g4.st.it);
    check(!memcmp(g.x.data(), g4.x.data(), sizeof(double) * s.n) && g.st.it == g4.st.it && g.st.stop == g4.st.stop && g_reduced >= 3 * g4.st.it && g_reduced_values == 2 * g_reduced, what);
    if (cs.op == SKEW) {
      snprintf(what, sizeof(what), "%s: (A b, b) = 0 stops at once as a breakdown", cs.name);
      check(g.st.stop == CGLOOP_BCGS_BREAKDOWN && g.st.stop_it == 0, what);
    }
    if (cs.op == SINGULAR) {
      snprintf(what, sizeof(what), "%s: t = 0 with s != 0 stops at once as a singular operator", cs.name);
      check(g.st.stop == CGLOOP_BCGS_SINGULAR && g.st.stop_it == 0, what);
    }
    if (cs.op == EIGEN) {
      bool half = true;
      for (int i = 0; i < s.n; i++) half = half && g.x[i] == 0.5 * s.b[i];
      snprintf(what, sizeof(what), "%s: s = 0 at the first iteration, x = b / 2 exactly", cs.name);
      check(g.st.stop == CGLOOP_BCGS_EXACT && g.st.stop_it == 0 && half, what);
    }
    if (cs.op == CONVECTION && cs.side < 100) {
      snprintf(what, sizeof(what), "%s: converged by the mirrored test", cs.name);
      check(g.st.stop == CGLOOP_STOP_TEST && g.hist.back() <= g.st.ttol, what);
    }
  }
  printf("%d checks failed\n", g_fail);
  return g_fail ? 1 : 0;
}
