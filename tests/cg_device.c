static char help[] = "KSPCGDEVICE against KSPCG on the same systems: iterations, residual histories, solutions, reasons.\n\
  -n N          grid points per side of the 2D problem (default 24)\n\
  -mat_type T   the operator's type (default aij)\n\
  -path NAME    the path every solve of the library's loop must report (host, gpu, graph, kspcg; default: not checked)\n\
  -regress 0    skip the regressions after the cases (their grid of n+3 points a side: odd when n is even)\n\n";
/*
  Each case solves one system twice, with KSPCG and with KSPCGDEVICE, from the same options, and checks:
  - the same convergence reason and iteration count (PETSc's default test is mirrored exactly);
  - residual histories equal up to rounding while the residual is above 1e-3 of the first: the passes sum their inner
    products in another order than PETSc's VecDot and VecNorm, and CG amplifies such differences once it has converged
    part of the spectrum (KSPCG itself, with one entry of b moved by 1e-15, differs by 7% late in the unpreconditioned
    history of this problem, and by less than 1e-9 before that point); 1e-6 relative is far above rounding there and
    far below any change of the method;
  - solutions equal to 1e-8 relative (both converge to rtol 1e-10 on a problem with condition number ~ 1e3);
  - a second solve with the library's loop gives the same bits (repeatable);
  - the library's loop reports the path it ran (KSPView) and, with -path, the expected one.
  Breakdowns: an indefinite operator (a negative shift inside the spectrum) stops both with the same reason at the same
  iteration; an indefinite preconditioner (a shell flipping the sign of part of z) too.  A trust-region radius makes
  the library run KSPCG's own loop, which it says.
*/
#include <petscksp.h>
#include <petscellr.h>
#include "ksp_loop_path.h"
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

static PetscReal Coefficient(PetscInt i, PetscInt j)
{
  return 1.0 + 0.5 * PetscSinReal(0.3 * i) * PetscCosReal(0.2 * j);
}

/* -div(k grad u) + shift u on an n x n grid (Dirichlet), k varying smoothly: symmetric positive definite for shift >= 0 */
static PetscErrorCode Build(PetscInt n, PetscReal shift, Mat *A)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n * n, n * n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 5, NULL, 2, NULL));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt row = lo; row < hi; row++) {
    const PetscInt i = row / n, j = row % n;
    const PetscInt nb[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
    PetscScalar    diag = shift;

    for (PetscInt q = 0; q < 4; q++) { /* the edge's coefficient: the mean of its ends' (symmetric) */
      const PetscReal k = 0.5 * (Coefficient(i, j) + Coefficient(nb[q][0], nb[q][1]));
      diag += k;
      if (nb[q][0] >= 0 && nb[q][0] < n && nb[q][1] >= 0 && nb[q][1] < n) PetscCall(MatSetValue(*A, row, nb[q][0] * n + nb[q][1], -k, INSERT_VALUES));
    }
    PetscCall(MatSetValue(*A, row, row, diag, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* z = r with the sign of its first half flipped: an indefinite preconditioner */
static PetscErrorCode FlipApply(PC pc, Vec r, Vec z)
{
  PetscInt     lo, hi, N;
  PetscScalar *a;

  PetscFunctionBeginUser;
  (void)pc;
  PetscCall(VecCopy(r, z));
  PetscCall(VecGetSize(z, &N));
  PetscCall(VecGetOwnershipRange(z, &lo, &hi));
  PetscCall(VecGetArray(z, &a));
  for (PetscInt i = lo; i < hi; i++)
    if (i < N / 2) a[i - lo] = -a[i - lo];
  PetscCall(VecRestoreArray(z, &a));
  PetscFunctionReturn(0);
}

typedef struct {
  const char *name, *pc;
  KSPNormType norm;
  PetscBool   guess, flip, radius;
  PetscReal   shift;
} Case;

typedef struct {
  KSPConvergedReason reason;
  PetscInt           its, nhist;
  PetscReal          hist[2000];
  Vec                x;
  char               path[256];
} Result;

static PetscErrorCode Solve(Mat A, Vec b, const Case *cs, KSPType type, Result *res)
{
  KSP             ksp;
  PC              pc;
  const PetscReal *h;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
  PetscCall(KSPSetNormType(ksp, cs->norm));
  PetscCall(KSPGetPC(ksp, &pc));
  if (cs->flip) {
    PetscCall(PCSetType(pc, PCSHELL));
    PetscCall(PCShellSetApply(pc, FlipApply));
  } else {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(PCSetType(pc, size > 1 && !strcmp(cs->pc, PCICC) ? PCBJACOBI : cs->pc)); /* ICC is sequential */
  }
  PetscCall(KSPSetResidualHistory(ksp, res->hist, 2000, PETSC_TRUE));
  PetscCall(KSPSetFromOptions(ksp));
  if (cs->radius) PetscCall(KSPCGSetRadius(ksp, 1e-2)); /* a PETSc whose KSPCG has trust regions stops on it */
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

/* Regressions, each against KSPCG with the same options (PCJACOBI unless said):
   - KSPReset() then a system of another size (the diagonal's vector made again);
   - Jacobi's scaling as PETSc's Jacobi makes it: a zero diagonal entry (made one; left zero with the fix off or the
     matrix flagged SPD: a singular preconditioner), a diagonal of both signs with and without -pc_jacobi_abs, the
     row sums (PETSc's own preconditioner applied on ones); and as PETSc keeps or remakes it: the matrix changed in
     place or another one given, with and without reuse, a reused preconditioner after the diagonal changed (the
     first solve's scaling; also where PETSc's own loop ran the first solve, or another solver shared the PC and
     went, or KSPCG set up the PC given), a set-up or a reset before the reuse (set up afresh), options changed on an
     unchanged matrix (no new set-up), a PC type changed and back (a new Jacobi: under reuse, or with other options);
   - -ksp_max_it 0 (KSPCG's loop runs one iteration and counts it);
   - a diagonal entry Inf: p'Ap not finite at the third iteration, counted as KSPCG counts it;
   - KSPCGUseSingleReduction() after KSPSetFromOptions() keeps KSPCGDEVICE's solve: PETSC_FALSE runs the library's
     loop (one process), PETSC_TRUE KSPCG's single-reduction loop, as asked. */
static PetscErrorCode Regress(PetscInt n, const char *test, KSPType type, KSPConvergedReason *reason, PetscInt *its, PetscReal *rnorm, char path[256])
{
  KSP ksp;
  PC  pc;
  Mat A, A2 = NULL;
  Vec b, x;

  PetscFunctionBeginUser;
  PetscCall(Build(n, 0.0, &A));
  if (!strcmp(test, "inf_entry")) {
    PetscInt lo, hi;
    PetscCall(MatGetOwnershipRange(A, &lo, &hi));
    if (n * n / 2 >= lo && n * n / 2 < hi) PetscCall(MatSetValue(A, n * n / 2, n * n / 2, PETSC_INFINITY, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  if (!strncmp(test, "zero_diagonal", 13)) {
    PetscInt lo, hi;
    PetscCall(MatGetOwnershipRange(A, &lo, &hi));
    if (n * n / 3 >= lo && n * n / 3 < hi) PetscCall(MatSetValue(A, n * n / 3, n * n / 3, 0.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  if (!strncmp(test, "mixed_sign", 10)) PetscCall(MatShift(A, -4.0)); /* diagonal entries of both signs */
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, !strcmp(test, "inf_entry") ? PCNONE : PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, !strcmp(test, "max_it_0") ? 0 : 1000));
  PetscCall(KSPSetFromOptions(ksp));
  if (!strcmp(test, "zero_diagonal_unfixed")) PetscCall(PCJacobiSetFixDiagonal(pc, PETSC_FALSE));
  if (!strcmp(test, "mixed_sign_abs")) PetscCall(PCJacobiSetUseAbs(pc, PETSC_TRUE));
  if (!strcmp(test, "rowsum")) PetscCall(PCJacobiSetType(pc, PC_JACOBI_ROWSUM));
  if (!strcmp(test, "zero_diagonal_spd")) PetscCall(MatSetOption(A, MAT_SPD, PETSC_TRUE)); /* no fix of zeros then */
  if (!strcmp(test, "reuse_after_kspcg_loop")) PetscCall(KSPCGUseSingleReduction(ksp, PETSC_TRUE)); /* PETSc's own loop first */
  if (!strcmp(test, "reuse_after_shift") || !strcmp(test, "pc_type_round_trip") || !strcmp(test, "zero_diagonal_fix_toggled") || !strcmp(test, "mixed_sign_abs_toggled") || !strcmp(test, "shift") ||
      !strcmp(test, "new_matrix") || !strcmp(test, "new_matrix_reuse") || !strcmp(test, "reuse_after_kspcg_loop") || !strcmp(test, "zero_diagonal_new_jacobi_unfixed")) {
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(VecSet(x, 0.0));
  }
  if (!strcmp(test, "shift")) PetscCall(MatShift(A, 3.0)); /* a new set-up, no reuse */
  if (!strcmp(test, "new_matrix") || !strcmp(test, "new_matrix_reuse")) { /* another operator, assembled apart */
    PetscCall(Build(n, 3.0, &A2));
    PetscCall(KSPSetOperators(ksp, A2, A2));
    if (!strcmp(test, "new_matrix_reuse")) PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
  }
  if (!strcmp(test, "reuse_after_kspcg_loop")) { /* PETSc's Jacobi holds the first matrix's scaling */
    PetscCall(MatShift(A, 3.0));
    PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
    PetscCall(KSPCGUseSingleReduction(ksp, PETSC_FALSE));
  }
  if (!strcmp(test, "set_up_then_reuse") || !strcmp(test, "pc_reset_then_reuse") || !strcmp(test, "shared_pc_reuse") || !strcmp(test, "pc_from_kspcg_reuse")) {
    KSP other;
    PC  pc2;

    if (!strcmp(test, "shared_pc_reuse")) { /* another solver of the same type on the same PC, solved first */
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &other));
      PetscCall(KSPSetOperators(other, A, A));
      PetscCall(KSPSetType(other, type));
      PetscCall(KSPSetPC(other, pc));
      PetscCall(KSPSolve(other, b, x));
      PetscCall(VecSet(x, 0.0));
    }
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(VecSet(x, 0.0));
    PetscCall(MatShift(A, 3.0));
    if (!strcmp(test, "set_up_then_reuse")) PetscCall(PCSetUp(pc)); /* set up on the new matrix, then reused */
    if (!strcmp(test, "pc_reset_then_reuse")) {                    /* a reset PC is set up afresh, reuse or not */
      PetscCall(PCReset(pc));
      PetscCall(KSPSetOperators(ksp, A, A));
    }
    if (!strcmp(test, "shared_pc_reuse")) PetscCall(KSPDestroy(&other)); /* the other solver goes: the first scaling stays */
    if (!strcmp(test, "pc_from_kspcg_reuse")) { /* a PC that KSPCG set up on the first matrix, given to this solver */
      PetscCall(MatShift(A, -3.0));
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &other));
      PetscCall(KSPSetOperators(other, A, A));
      PetscCall(KSPSetType(other, KSPCG));
      PetscCall(KSPGetPC(other, &pc2));
      PetscCall(PCSetType(pc2, PCJACOBI));
      PetscCall(KSPSolve(other, b, x));
      PetscCall(VecSet(x, 0.0));
      PetscCall(MatShift(A, 5.0));
      PetscCall(PCSetReusePreconditioner(pc2, PETSC_TRUE));
      PetscCall(KSPSetPC(ksp, pc2));
      PetscCall(KSPDestroy(&other));
    }
    PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
  }
  if (!strcmp(test, "zero_diagonal_new_jacobi_unfixed")) { /* a new Jacobi on the same matrix, its own options */
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(PCJacobiSetFixDiagonal(pc, PETSC_FALSE));
  }
  if (!strcmp(test, "reuse_after_shift")) { /* the first solve's scaling kept */
    PetscCall(MatShift(A, 3.0));
    PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
  }
  if (!strcmp(test, "pc_type_round_trip")) { /* a new Jacobi, set up afresh despite the reuse */
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(MatShift(A, 3.0));
    PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
  }
  /* the matrix unchanged: PETSc's Jacobi keeps the scaling of its set-up, whatever its options now say */
  if (!strcmp(test, "zero_diagonal_fix_toggled")) PetscCall(PCJacobiSetFixDiagonal(pc, PETSC_FALSE));
  if (!strcmp(test, "mixed_sign_abs_toggled")) PetscCall(PCJacobiSetUseAbs(pc, PETSC_TRUE));
  if (!strcmp(test, "single_reduction_off")) PetscCall(KSPCGUseSingleReduction(ksp, PETSC_FALSE));
  if (!strcmp(test, "single_reduction_on")) PetscCall(KSPCGUseSingleReduction(ksp, PETSC_TRUE));
  if (!strcmp(test, "reset_new_size")) {
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPReset(ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(Build(n + 3, 0.0, &A2));
    PetscCall(MatCreateVecs(A2, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(KSPSetOperators(ksp, A2, A2));
  }
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetResidualNorm(ksp, rnorm));
  PetscCall(KSPLoopPath(ksp, path));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&A2));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt  n = 24;
  char      want[64] = "";
  PetscBool havewant, regress = PETSC_TRUE;
  Mat       A;
  Vec       b;
  /* names say what runs: pc, norm, start */
  const Case cases[] = {
    {"jacobi_preconditioned_norm",      PCJACOBI, KSP_NORM_PRECONDITIONED,   PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 0.0 },
    {"none_unpreconditioned_norm",      PCNONE,   KSP_NORM_UNPRECONDITIONED, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 0.0 },
    {"jacobi_natural_norm_guess",       PCJACOBI, KSP_NORM_NATURAL,          PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 0.0 },
    {"pbjacobi_preconditioned_norm",    PCPBJACOBI, KSP_NORM_PRECONDITIONED, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 0.0 },
    {"sor_preconditioned_norm",         PCSOR,    KSP_NORM_PRECONDITIONED,   PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 0.0 },
    {"icc_unpreconditioned_norm_guess", PCICC,    KSP_NORM_UNPRECONDITIONED, PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 0.0 },
    {"indefinite_operator",             PCNONE,   KSP_NORM_PRECONDITIONED,   PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, -2.0},
    {"indefinite_preconditioner",       PCSHELL,  KSP_NORM_UNPRECONDITIONED, PETSC_FALSE, PETSC_TRUE,  PETSC_FALSE, 0.0 },
    {"trust_region_runs_kspcg",         PCJACOBI, KSP_NORM_PRECONDITIONED,   PETSC_FALSE, PETSC_FALSE, PETSC_TRUE,  0.0 },
  };

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-path", want, sizeof(want), &havewant));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-regress", &regress, NULL));
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    const Case *cs = &cases[k];
    Result     *cg, *dev, *again;
    char        what[512];
    PetscReal   worst = 0.0, xnorm, dnorm;
    PetscBool   same_bits;

    PetscCall(PetscCalloc3(1, &cg, 1, &dev, 1, &again));
    PetscCall(Build(n, cs->shift, &A));
    PetscCall(MatCreateVecs(A, NULL, &b));
    {
      PetscInt lo, hi;
      PetscCall(VecGetOwnershipRange(b, &lo, &hi));
      for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(b, i, 1.0 + 0.1 * (i % 7), INSERT_VALUES));
      PetscCall(VecAssemblyBegin(b));
      PetscCall(VecAssemblyEnd(b));
    }
    PetscCall(Solve(A, b, cs, KSPCG, cg));
    PetscCall(Solve(A, b, cs, KSPCGDEVICE, dev));
    PetscCall(Solve(A, b, cs, KSPCGDEVICE, again));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: reason %s / %s, iterations %" PetscInt_FMT " / %" PetscInt_FMT " (KSPCG / cgdevice), ran %s", cs->name, KSPConvergedReasons[cg->reason], KSPConvergedReasons[dev->reason], cg->its, dev->its, dev->path));
    PetscCall(Check((PetscBool)(cg->reason == dev->reason && cg->its == dev->its && cg->nhist == dev->nhist), what));
    for (PetscInt i = 0; i < PetscMin(cg->nhist, dev->nhist) && cg->hist[i] >= 1e-3 * cg->hist[0]; i++) {
      worst = PetscMax(worst, PetscAbsReal(cg->hist[i] - dev->hist[i]) / PetscMax(cg->hist[i], 1e-300));
      if (getenv("CG_DEVICE_DEBUG")) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%3d %.17e %.17e\n", (int)i, (double)cg->hist[i], (double)dev->hist[i]));
    }
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: residual histories agree to %.2e relative (<= 1e-6) down to 1e-3 of the first", cs->name, (double)worst));
    PetscCall(Check((PetscBool)(worst <= 1e-6), what));
    PetscCall(VecNorm(cg->x, NORM_2, &xnorm));
    PetscCall(VecAXPY(cg->x, -1.0, dev->x));
    PetscCall(VecNorm(cg->x, NORM_2, &dnorm));
    if (cg->reason > 0) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: solutions agree to %.2e relative (<= 1e-8)", cs->name, (double)(dnorm / xnorm)));
      PetscCall(Check((PetscBool)(dnorm <= 1e-8 * xnorm), what));
    }
    PetscCall(VecEqual(dev->x, again->x, &same_bits));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: a second solve gives the same bits", cs->name));
    PetscCall(Check((PetscBool)(same_bits && dev->its == again->its), what));
    if (cs->radius && cg->reason == KSP_CONVERGED_STEP_LENGTH) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: with a radius the library runs KSPCG's loop (reports \"%s\")", cs->name, dev->path));
      PetscCall(Check((PetscBool)!strcmp(dev->path, "KSPCG's loop"), what));
    } else if (havewant) {
      const char *expect = !strcmp(want, "host") ? "host passes" : (!strcmp(want, "graph") ? "GPU passes in a CUDA graph" : (!strcmp(want, "kspcg") ? "KSPCG's loop" : "GPU passes"));
      PetscInt    bs;

      PetscCall(MatGetBlockSize(A, &bs)); /* -mat_block_size: point-block Jacobi over blocks of more than one */
      /* preconditioners PETSc applies run outside the graph */
      if (!strcmp(want, "graph") && (cs->flip || !strcmp(cs->pc, PCSOR) || !strcmp(cs->pc, PCICC) || (!strcmp(cs->pc, PCPBJACOBI) && bs > 1))) expect = "GPU passes";
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: ran \"%s\", expected \"%s\"", cs->name, dev->path, expect));
      PetscCall(Check((PetscBool)!strcmp(dev->path, expect), what));
    }
    PetscCall(VecDestroy(&cg->x));
    PetscCall(VecDestroy(&dev->x));
    PetscCall(VecDestroy(&again->x));
    PetscCall(PetscFree3(cg, dev, again));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  }
  if (regress) {
    const char *tests[] = {"reset_new_size", "max_it_0", "inf_entry", "zero_diagonal", "zero_diagonal_unfixed", "zero_diagonal_spd", "zero_diagonal_fix_toggled", "mixed_sign", "mixed_sign_abs", "mixed_sign_abs_toggled", "rowsum", "shift", "new_matrix", "new_matrix_reuse", "reuse_after_shift", "reuse_after_kspcg_loop", "set_up_then_reuse", "pc_reset_then_reuse", "shared_pc_reuse", "pc_from_kspcg_reuse", "pc_type_round_trip", "zero_diagonal_new_jacobi_unfixed", "single_reduction_off", "single_reduction_on"};
    PetscMPIInt size;

    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    for (size_t k = 0; k < sizeof(tests) / sizeof(tests[0]); k++) {
      KSPConvergedReason rcg, rdev;
      PetscInt           icg, idev;
      PetscReal          ncg, ndev;
      char               pcg[256], pdev[256], what[512];
      PetscBool          ok;

      PetscCall(Regress(n, tests[k], KSPCG, &rcg, &icg, &ncg, pcg));
      PetscCall(Regress(n, tests[k], KSPCGDEVICE, &rdev, &idev, &ndev, pdev));
      /* the last norms as the histories: equal to rounding (1e-6 relative) where the solve converged */
      ok = (PetscBool)(rcg == rdev && icg == idev && (rcg <= 0 || PetscAbsReal(ncg - ndev) <= 1e-6 * PetscMax(ncg, ndev) + 1e-300));
      if (size == 1 && !strcmp(tests[k], "single_reduction_off")) ok = (PetscBool)(ok && strcmp(pdev, "KSPCG's loop"));
      if (!strcmp(tests[k], "single_reduction_on")) ok = (PetscBool)(ok && !strcmp(pdev, "KSPCG's loop"));
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: reason %s / %s, iterations %" PetscInt_FMT " / %" PetscInt_FMT ", last norm %g / %g (KSPCG / cgdevice), ran %s", tests[k], KSPConvergedReasons[rcg], KSPConvergedReasons[rdev], icg, idev, (double)ncg, (double)ndev, pdev));
      PetscCall(Check(ok, what));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " checks failed\n", g_fail));
  PetscCall(PetscFinalize());
  return 0; /* the FAIL lines report the failures (tests/run.sh shows them all) */
}
