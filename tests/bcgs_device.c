static char help[] = "KSPBCGSDEVICE against KSPBCGS on the same systems: iterations, residual histories, monitors, solutions, reasons.\n\
  -n N          grid points per side of the 2D problem (default 23: an odd size)\n\
  -mat_type T   the operator's type (default aij)\n\
  -path NAME    the path every solve of the library's loop must report (host, gpu, graph, kspbcgs; default: not checked)\n\n";
/*
  Each case solves one system twice, with KSPBCGS and with KSPBCGSDEVICE, from the same options, and checks:
  - the same convergence reason and iteration count (PETSc's default test is mirrored exactly), the count only where
    rounding does not decide it (below);
  - residual histories equal within a tolerance the problem gives: the passes sum their inner products in another
    order than PETSc's VecDot and VecNorm, a perturbation of the size of rounding.  The case measures what such a
    perturbation does to KSPBCGS itself (b moved by 1e-14 relative, the history compared with the unperturbed one)
    and allows 100 times that, and at least 1e-9 relative, over the window where that perturbation stays below 1e-6
    and the residual above 1e-3 of the first (past it, rounding alone decides the history's digits);
  - solutions equal to 1e-7 relative when converged (rtol 1e-10; the operators' condition numbers are ~1e2 .. 1e3);
  - a second solve with the library's loop gives the same bits (repeatable);
  - the library's loop reports the path it ran (KSPView) and, with -path, the expected one.
  Operators: convection-diffusion on an n x n grid (nonsymmetric), a diagonal of mixed signs, and the breakdowns
  constructed deliberately: a skew-symmetric operator with b = ones ((v, rp) = (A b, b) = 0 exactly at the first
  iteration), 2 x 2 blocks [2 2; 0 0] with b = ones (alpha = 1/2, s = (-1, 1) per block in the null space: t = 0 with
  s != 0, a singular preconditioned operator), and b an eigenvector of a diagonal with eigenvalue 2 (s = 0 exactly: the
  exact-solution branch).  Last, a preconditioner that puts a NaN into its output (the stop on a non-finite residual
  norm: the reason, the count, the norm and the solution as KSPBCGS leaves them, with and without a PC failure).
*/
#include <petscksp.h>
#include <petscellr.h>
#include "ksp_loop_path.h"
#include <math.h>
#include <unistd.h>

static PetscInt g_fail = 0;

static PetscErrorCode Check(PetscBool ok, const char *what)
{
  PetscMPIInt mine = (PetscMPIInt)ok, all;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD)); /* a check fails where it fails on any process */
  ok = (PetscBool)all;
  if (!ok) g_fail++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s\n", ok ? "ok" : "FAIL", what));
  PetscFunctionReturn(0);
}

typedef enum {
  OP_CONVECTION, /* -lap u + (a, b) . grad u, centered: nonsymmetric, cell Peclet number < 1 */
  OP_DIAGONAL,   /* mixed signs, spread: -(1 + i / N) for every third row, 2 + sin(i) elsewhere */
  OP_SKEW,       /* tridiagonal (-1, 0, 1): (A x, x) = 0 for every x */
  OP_EIGEN,      /* diagonal 2 on the first half, mixed signs elsewhere; b = ones on the first half */
  OP_SINGULAR    /* 2 x 2 blocks [2 2; 0 0], b = ones: s = (-1, 1) per block and t = A s = 0 at the first iteration */
} Operator;

static PetscErrorCode Build(PetscInt n, Operator op, Mat *A, Vec *b)
{
  PetscInt lo, hi, N = op == OP_SINGULAR ? 2 * (n * n / 2) : n * n;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 5, NULL, 2, NULL));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt row = lo; row < hi; row++) {
    switch (op) {
    case OP_CONVECTION: {
      const PetscInt  i = row / n, j = row % n;
      const PetscReal h = 1.0 / (n + 1), ax = 20.0 * h / 2, ay = -10.0 * h / 2; /* velocity (20, -10), times h / 2 */
      const PetscInt  nb[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
      const PetscReal w[4]     = {-1.0 - ax, -1.0 + ax, -1.0 - ay, -1.0 + ay};

      for (PetscInt q = 0; q < 4; q++)
        if (nb[q][0] >= 0 && nb[q][0] < n && nb[q][1] >= 0 && nb[q][1] < n) PetscCall(MatSetValue(*A, row, nb[q][0] * n + nb[q][1], w[q], INSERT_VALUES));
      PetscCall(MatSetValue(*A, row, row, 4.0, INSERT_VALUES));
    } break;
    case OP_DIAGONAL:
      PetscCall(MatSetValue(*A, row, row, row % 3 ? 2.0 + PetscSinReal((PetscReal)row) : -(1.0 + (PetscReal)row / N), INSERT_VALUES));
      break;
    case OP_SKEW:
      if (row > 0) PetscCall(MatSetValue(*A, row, row - 1, -1.0, INSERT_VALUES));
      if (row < N - 1) PetscCall(MatSetValue(*A, row, row + 1, 1.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, row, row, 0.0, INSERT_VALUES));
      break;
    case OP_EIGEN:
      PetscCall(MatSetValue(*A, row, row, row < N / 2 ? 2.0 : (row % 2 ? -3.0 : 5.0), INSERT_VALUES));
      break;
    case OP_SINGULAR:
      PetscCall(MatSetValue(*A, row, row, row % 2 ? 0.0 : 2.0, INSERT_VALUES));
      if (row % 2 == 0) PetscCall(MatSetValue(*A, row, row + 1, 2.0, INSERT_VALUES));
      break;
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(*A, NULL, b));
  for (PetscInt i = lo; i < hi; i++) {
    PetscScalar v = 1.0 + 0.1 * (i % 7);
    if (op == OP_SKEW || op == OP_SINGULAR) v = 1.0;
    if (op == OP_EIGEN) v = i < N / 2 ? 1.0 : 0.0;
    PetscCall(VecSetValue(*b, i, v, INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(*b));
  PetscCall(VecAssemblyEnd(*b));
  PetscFunctionReturn(0);
}

typedef struct {
  const char *name, *pc;
  Operator    op;
  KSPNormType norm;
  PetscBool   guess, monitor, right;
  PetscInt    max_it;
} Case;

#define MAXH 2000
typedef struct {
  KSPConvergedReason reason;
  PetscInt           its, nhist, nmon;
  PetscReal          hist[MAXH], mon[MAXH];
  PetscInt           monit[MAXH];
  Vec                x;
  char               path[256];
} Result;

static PetscErrorCode Record(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  Result *res = (Result *)ctx;

  PetscFunctionBeginUser;
  (void)ksp;
  if (res->nmon < MAXH) {
    res->monit[res->nmon] = it;
    res->mon[res->nmon++] = rnorm;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Solve(Mat A, Vec b, const Case *cs, KSPType type, Result *res)
{
  KSP              ksp;
  PC               pc;
  const PetscReal *h;
  PetscMPIInt      size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, cs->max_it));
  PetscCall(KSPSetNormType(ksp, cs->norm));
  if (cs->right) PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, size > 1 && !strcmp(cs->pc, PCILU) ? PCBJACOBI : cs->pc)); /* ILU is sequential */
  PetscCall(KSPSetResidualHistory(ksp, res->hist, MAXH, PETSC_TRUE));
  if (cs->monitor) PetscCall(KSPMonitorSet(ksp, Record, res, NULL));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(VecDuplicate(b, &res->x));
  if (cs->guess) {
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
    PetscCall(VecSet(res->x, 0.3));
  }
  PetscCall(KSPSolve(ksp, b, res->x));
  PetscCall(KSPGetConvergedReason(ksp, &res->reason));
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetResidualHistory(ksp, &h, &res->nhist));
  PetscCall(KSPLoopPath(ksp, res->path));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

/* the worst relative difference of two histories over their first n entries */
static PetscReal HistoryGap(const PetscReal *a, const PetscReal *b, PetscInt n)
{
  PetscReal worst = 0.0;

  for (PetscInt i = 0; i < n; i++) worst = PetscMax(worst, PetscAbsReal(a[i] - b[i]) / PetscMax(a[i], 1e-300));
  return worst;
}

/* how far rounding leaves KSPBCGS's history alone: the entries before the first that is below 1e-3 of the start or
   where KSPBCGS on a b moved by rounding differs by more than 1e-6 relative (an erratic history, as on indefinite
   operators, shortens it) */
static PetscInt HistoryWindow(const PetscReal *a, const PetscReal *moved, PetscInt n)
{
  PetscInt i = 0;

  while (i < n && a[i] >= 1e-3 * a[0] && PetscAbsReal(a[i] - moved[i]) <= 1e-6 * a[i]) i++;
  return i;
}

/* a preconditioner that puts a NaN in its output from its k-th application on, and says it failed where asked: on the
   last process only (KSPBCGS reduces the failure over the processes; so must the loop) */
typedef struct {
  PetscInt  k, applied;
  PetscBool fail;
} NaNPC;

static PetscErrorCode NaNPCApply(PC pc, Vec x, Vec y)
{
  NaNPC *ctx;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(VecCopy(x, y));
  if (++ctx->applied >= ctx->k) {
    PetscScalar *a;
    PetscInt     n;
    PetscMPIInt  rank, size;

    PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)pc), &rank));
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
    if (ctx->fail && rank == size - 1) PetscCall(PCSetFailedReason(pc, PC_SUBPC_ERROR));
    PetscCall(VecGetLocalSize(y, &n));
    PetscCall(VecGetArray(y, &a));
    if (n) a[0] = NAN;
    PetscCall(VecRestoreArray(y, &a));
  }
  PetscFunctionReturn(0);
}

/* a NaN reaching the residual norm: the reason, the count, the norm KSPGetResidualNorm() gives (the NaN, as
   KSPCheckNorm() leaves it) and the solution (flagged where the preconditioner failed) as KSPBCGS's */
static PetscErrorCode NaNNorm(Mat A, Vec b, PetscInt k, PetscBool fail)
{
  KSPConvergedReason reason[2];
  PetscInt           its[2];
  PetscReal          rnorm[2], xnorm[2];
  char               what[512];

  PetscFunctionBeginUser;
  for (PetscInt t = 0; t < 2; t++) {
    KSP   ksp;
    PC    pc;
    Vec   x;
    NaNPC ctx = {k, 0, fail};

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, t ? KSPBCGSDEVICE : KSPBCGS));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCSHELL));
    PetscCall(PCShellSetContext(pc, &ctx));
    PetscCall(PCShellSetApply(pc, NaNPCApply));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(VecDuplicate(b, &x));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason[t]));
    PetscCall(KSPGetIterationNumber(ksp, &its[t]));
    PetscCall(KSPGetResidualNorm(ksp, &rnorm[t]));
    PetscCall(VecNorm(x, NORM_INFINITY, &xnorm[t]));
    PetscCall(VecDestroy(&x));
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(PetscSNPrintf(what, sizeof(what), "nan_norm_at_apply_%" PetscInt_FMT "%s: reason %s / %s, iterations %" PetscInt_FMT " / %" PetscInt_FMT ", residual norm %g / %g, |x| %g / %g (KSPBCGS / bcgsdevice)", k, fail ? "_pc_failed" : "", KSPConvergedReasons[reason[0]], KSPConvergedReasons[reason[1]], its[0], its[1], (double)rnorm[0], (double)rnorm[1], (double)xnorm[0], (double)xnorm[1]));
  PetscCall(Check((PetscBool)(reason[0] == reason[1] && its[0] == its[1] && PetscIsNanReal(rnorm[0]) && PetscIsNanReal(rnorm[1]) && PetscIsInfOrNanReal(xnorm[0]) == PetscIsInfOrNanReal(xnorm[1]) && (!fail || (PetscIsInfReal(xnorm[0]) && PetscIsInfReal(xnorm[1])))), what));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt    n = 23;
  char        want[64] = "";
  PetscBool   havewant;
  PetscMPIInt size;
  /* names say what runs: operator, pc, norm, start, what else */
  const Case cases[] = {
    {"convection_jacobi",                PCJACOBI, OP_CONVECTION, KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 1000},
    {"convection_none_guess",            PCNONE,   OP_CONVECTION, KSP_NORM_PRECONDITIONED, PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 1000},
    {"convection_jacobi_guess",          PCJACOBI, OP_CONVECTION, KSP_NORM_PRECONDITIONED, PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 1000},
    {"convection_jacobi_monitor",        PCJACOBI, OP_CONVECTION, KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_TRUE,  PETSC_FALSE, 1000},
    {"convection_ilu_petsc_applies",     PCILU,    OP_CONVECTION, KSP_NORM_PRECONDITIONED, PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 1000},
    {"convection_jacobi_max_it_7",       PCJACOBI, OP_CONVECTION, KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 7   },
    {"convection_none_norm_none_monitor", PCNONE,  OP_CONVECTION, KSP_NORM_NONE,           PETSC_FALSE, PETSC_TRUE,  PETSC_FALSE, 30  },
    {"convection_right_runs_kspbcgs",    PCJACOBI, OP_CONVECTION, KSP_NORM_UNPRECONDITIONED, PETSC_TRUE, PETSC_FALSE, PETSC_TRUE, 1000},
    {"diagonal_mixed_signs_none",        PCNONE,   OP_DIAGONAL,   KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 1000},
    {"diagonal_mixed_signs_jacobi",      PCJACOBI, OP_DIAGONAL,   KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 1000},
    {"breakdown_skew_zero_v_rp",         PCNONE,   OP_SKEW,       KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_TRUE,  PETSC_FALSE, 1000},
    {"exact_solution_s_zero",            PCNONE,   OP_EIGEN,      KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_TRUE,  PETSC_FALSE, 1000},
    {"singular_t_zero_s_nonzero",        PCNONE,   OP_SINGULAR,   KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 1000},
  };

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-path", want, sizeof(want), &havewant));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    const Case *cs = &cases[k];
    Result     *bc, *dev, *again, *moved;
    char        what[512];
    PetscReal   gap, allowed, xnorm, dnorm;
    PetscInt    window;
    PetscBool   same_bits, robust;
    Mat         A;
    Vec         b, b2;

    PetscCall(PetscCalloc4(1, &bc, 1, &dev, 1, &again, 1, &moved));
    PetscCall(Build(n, cs->op, &A, &b));
    PetscCall(Solve(A, b, cs, KSPBCGS, bc));
    PetscCall(Solve(A, b, cs, KSPBCGSDEVICE, dev));
    PetscCall(Solve(A, b, cs, KSPBCGSDEVICE, again));
    /* KSPBCGS on b moved by rounding: what rounding does to this problem's history */
    PetscCall(VecDuplicate(b, &b2));
    PetscCall(VecCopy(b, b2));
    { /* entry by entry (a uniform scaling would leave BiCGStab's scale-invariant history alone) */
      PetscScalar *a;
      PetscInt     lo, hi;

      PetscCall(VecGetOwnershipRange(b2, &lo, &hi));
      PetscCall(VecGetArray(b2, &a));
      for (PetscInt i = lo; i < hi; i++) a[i - lo] *= 1.0 + 1e-14 * (PetscReal)(i % 3 - 1);
      PetscCall(VecRestoreArray(b2, &a));
    }
    PetscCall(Solve(A, b2, cs, KSPBCGS, moved));
    window  = HistoryWindow(bc->hist, moved->hist, PetscMin(PetscMin(bc->nhist, moved->nhist), dev->nhist));
    allowed = PetscMax(1e-9, 100.0 * HistoryGap(bc->hist, moved->hist, window));
    /* the iteration count is the problem's only where rounding leaves KSPBCGS's whole history alone (the window ends
       at 1e-3 of the start, and b moved by rounding keeps the count); on an erratic history (an indefinite operator
       without a preconditioner) rounding decides it: the reason is compared, the counts are printed */
    robust = (PetscBool)(moved->its == bc->its && (window == PetscMin(PetscMin(bc->nhist, moved->nhist), dev->nhist) || bc->hist[window] < 1e-3 * bc->hist[0]));

    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: reason %s / %s, iterations %" PetscInt_FMT " / %" PetscInt_FMT " (KSPBCGS / bcgsdevice), history lengths %" PetscInt_FMT " / %" PetscInt_FMT ", ran %s", cs->name, KSPConvergedReasons[bc->reason], KSPConvergedReasons[dev->reason], bc->its, dev->its, bc->nhist, dev->nhist, dev->path));
    if (!robust) PetscCall(PetscStrlcat(what, " (b moved by rounding moves KSPBCGS's count or history here: counts not compared)", sizeof(what)));
    PetscCall(Check((PetscBool)(bc->reason == dev->reason && (!robust || (bc->its == dev->its && bc->nhist == dev->nhist))), what));
    gap = HistoryGap(bc->hist, dev->hist, window);
    if (getenv("BCGS_DEVICE_DEBUG"))
      for (PetscInt i = 0; i < PetscMin(bc->nhist, dev->nhist); i++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%3d %.17e %.17e %.17e\n", (int)i, (double)bc->hist[i], (double)dev->hist[i], (double)moved->hist[i]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: residual histories agree to %.2e relative (<= %.2e, from b moved by 1e-14) over the first %" PetscInt_FMT " of %" PetscInt_FMT, cs->name, (double)gap, (double)allowed, window, bc->nhist));
    PetscCall(Check((PetscBool)(gap <= allowed), what));
    if (cs->monitor) {
      PetscBool same_its = (PetscBool)(bc->nmon == dev->nmon);
      for (PetscInt i = 0; same_its && i < bc->nmon; i++) same_its = (PetscBool)(bc->monit[i] == dev->monit[i]);
      gap = HistoryGap(bc->mon, dev->mon, PetscMin(window, PetscMin(bc->nmon, dev->nmon)));
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: the monitor saw %" PetscInt_FMT " / %" PetscInt_FMT " calls with the same iteration numbers, norms within %.2e (<= %.2e)", cs->name, bc->nmon, dev->nmon, (double)gap, (double)allowed));
      PetscCall(Check((PetscBool)(same_its && gap <= allowed), what));
    }
    PetscCall(VecNorm(bc->x, NORM_2, &xnorm));
    PetscCall(VecAXPY(bc->x, -1.0, dev->x));
    PetscCall(VecNorm(bc->x, NORM_2, &dnorm));
    if (bc->reason > 0 || cs->max_it < 1000) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: solutions agree to %.2e relative (<= 1e-7)", cs->name, (double)(dnorm / PetscMax(xnorm, 1e-300))));
      PetscCall(Check((PetscBool)(dnorm <= 1e-7 * xnorm), what));
    }
    PetscCall(VecEqual(dev->x, again->x, &same_bits));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: a second solve gives the same bits", cs->name));
    PetscCall(Check((PetscBool)(same_bits && dev->its == again->its), what));
    {
      const char *expect = NULL;

      if (cs->right) expect = "KSPBCGS's loop";
      else if (havewant) {
        expect = !strcmp(want, "host") ? "host passes" : (!strcmp(want, "graph") ? "GPU passes in a CUDA graph" : (!strcmp(want, "kspbcgs") ? "KSPBCGS's loop" : "GPU passes"));
        if (!strcmp(want, "graph") && !strcmp(cs->pc, PCILU)) expect = "GPU passes"; /* PETSc applies ILU outside the graph */
      }
      if (expect) {
        PetscCall(PetscSNPrintf(what, sizeof(what), "%s: ran \"%s\", expected \"%s\"", cs->name, dev->path, expect));
        PetscCall(Check((PetscBool)!strcmp(dev->path, expect), what));
      }
    }
    /* the constructed cases end as constructed */
    if (cs->op == OP_SKEW) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: (A b, b) = 0 is a breakdown before any iteration (%s, %" PetscInt_FMT ")", cs->name, KSPConvergedReasons[dev->reason], dev->its));
      PetscCall(Check((PetscBool)(dev->reason == KSP_DIVERGED_BREAKDOWN && dev->its == 0), what));
    }
    if (cs->op == OP_SINGULAR) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: (t, t) = 0 with s != 0 is a breakdown before any iteration (%s, %" PetscInt_FMT ")", cs->name, KSPConvergedReasons[dev->reason], dev->its));
      PetscCall(Check((PetscBool)(dev->reason == KSP_DIVERGED_BREAKDOWN && dev->its == 0), what));
    }
    if (cs->op == OP_EIGEN) {
      PetscCall(VecScale(b, 0.5)); /* x = b / 2 */
      PetscCall(VecEqual(b, dev->x, &same_bits));
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: s = 0 converges in one iteration to x = b / 2 exactly (%s, %" PetscInt_FMT ")", cs->name, KSPConvergedReasons[dev->reason], dev->its));
      PetscCall(Check((PetscBool)(dev->reason == KSP_CONVERGED_RTOL && dev->its == 1 && same_bits), what));
    }
    if (cs->max_it < 1000 && cs->norm != KSP_NORM_NONE) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: max_it %" PetscInt_FMT " reached (%s, %" PetscInt_FMT ")", cs->name, cs->max_it, KSPConvergedReasons[dev->reason], dev->its));
      PetscCall(Check((PetscBool)(dev->reason == KSP_DIVERGED_ITS && dev->its == cs->max_it), what));
    }
    PetscCall(VecDestroy(&bc->x));
    PetscCall(VecDestroy(&dev->x));
    PetscCall(VecDestroy(&again->x));
    PetscCall(VecDestroy(&moved->x));
    PetscCall(PetscFree4(bc, dev, again, moved));
    PetscCall(VecDestroy(&b2));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  }
  { /* the third application (after the initial residual's and v = B A p) is iteration 1's t = B A s: a NaN there
       reaches omega, r and the norm of iteration 1 */
    Mat A;
    Vec b;

    PetscCall(Build(n, OP_CONVECTION, &A, &b));
    PetscCall(NaNNorm(A, b, 3, PETSC_FALSE));
    PetscCall(NaNNorm(A, b, 5, PETSC_TRUE));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " checks failed\n", g_fail));
  PetscCall(PetscFinalize());
  return 0; /* the FAIL lines report the failures (tests/run.sh shows them all) */
}
