static const char help[] = "Repeats GAMG's first Galerkin product C = P^T A P in one process.\n\
  A: the 27-point Poisson matrix on an n^3 grid (-n, default 100) of -mat_type; P: GAMG's finest interpolation,\n\
  made once by PCSetUp().  -loops N products (default 100), each from scratch (symbolic and numeric phase), a line\n\
  every -report products.  As in tutorials/ex1.c, one product y = A x comes before the set-up (-mult_first).\n\
  -warmup m: before GAMG's set-up, C = W W and P^T A P with P = A = W, W the same matrix on an m^3 grid (m > 0), so\n\
  that the GPU code of the sparse products is loaded before GAMG's first one.  -loops 0: the set-up only.  Made to\n\
  reproduce GAMG set-ups that stop now and then inside cuSPARSE's SpGEMM (README, Troubleshooting); on an H100 it\n\
  never stopped (400 products in each of two processes; 206 set-up-only runs, with and without -warmup), where\n\
  tutorials/ex1 with -pc_type gamg does: run that one under tests/gpu/hang_probe.sh to see the stop.\n\n";

#include <petscksp.h>
#include <petscellr.h>

/* The 27-point Laplacian on an n^3 grid, one process's rows (the matrix of tutorials/ex1.c with -stencil 27). */
static PetscErrorCode Poisson27(PetscInt n, Mat A)
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n * n * n, n * n * n));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatSeqAIJSetPreallocation(A, 27, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 27, NULL, 26, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n);
    PetscInt       cols[27], nc = 0;
    PetscScalar    vals[27];
    for (PetscInt dk = -1; dk <= 1; dk++)
      for (PetscInt dj = -1; dj <= 1; dj++)
        for (PetscInt di = -1; di <= 1; di++) {
          if (i + di < 0 || i + di >= n || j + dj < 0 || j + dj >= n || k + dk < 0 || k + dk >= n) continue;
          cols[nc]   = (i + di) + n * ((j + dj) + n * (k + dk));
          vals[nc++] = (di || dj || dk) ? -1.0 : 26.0;
        }
    PetscCall(MatSetValues(A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A, P, C;
  KSP         ksp;
  PC          pc;
  PetscInt    n = 100, loops = 100, report = 10, warmup = 0, levels, pcols, done = 0;
  PetscBool   mult_first = PETSC_TRUE;
  PetscLogDouble t0, t1;
  MatType     atype, ptype, aformat, pformat;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "P^T A P loop options", "ptap_loop");
  PetscCall(PetscOptionsInt("-n", "grid points per direction", "ptap_loop.c", n, &n, NULL));
  PetscCall(PetscOptionsInt("-loops", "products", "ptap_loop.c", loops, &loops, NULL));
  PetscCall(PetscOptionsInt("-report", "a line every this many products", "ptap_loop.c", report, &report, NULL));
  PetscCall(PetscOptionsInt("-warmup", "grid of the small products before the set-up (0: none)", "ptap_loop.c", warmup, &warmup, NULL));
  PetscCall(PetscOptionsBool("-mult_first", "one product y = A x before the set-up", "ptap_loop.c", mult_first, &mult_first, NULL));
  PetscOptionsEnd();
  PetscCheck(report > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-report %" PetscInt_FMT " must be positive", report);
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(Poisson27(n, A));
  if (mult_first) {
    Vec x, y;
    PetscCall(MatCreateVecs(A, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(A, x, y));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
  }
  if (warmup > 0) {
    Mat W, WW, WtWW;
    PetscCall(MatCreate(PETSC_COMM_WORLD, &W));
    PetscCall(Poisson27(warmup, W));
    PetscCall(MatMatMult(W, W, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &WW));
    PetscCall(MatPtAP(W, W, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &WtWW));
    PetscCall(MatDestroy(&WtWW));
    PetscCall(MatDestroy(&WW));
    PetscCall(MatDestroy(&W));
  }

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCGAMG));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PCMGGetLevels(pc, &levels));
  PetscCheck(levels > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "GAMG made %" PetscInt_FMT " level: use a larger -n", levels);
  PetscCall(PCMGGetInterpolation(pc, levels - 1, &P));
  PetscCall(MatGetType(A, &atype));
  PetscCall(MatGetType(P, &ptype));
  PetscCall(MatELLRGetFormat(A, &aformat));
  PetscCall(MatELLRGetFormat(P, &pformat));
  PetscCall(MatGetSize(P, NULL, &pcols));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "A %s format %s %" PetscInt_FMT " rows, P %s format %s with %" PetscInt_FMT " columns, %" PetscInt_FMT " levels\n", atype, aformat ? aformat : "none", n * n * n, ptype, pformat ? pformat : "none", pcols, levels));

  PetscCall(PetscTime(&t0));
  for (PetscInt k = 1; k <= loops; k++) {
    PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
    PetscCall(MatDestroy(&C));
    if (k % report == 0 || k == loops) {
      PetscCall(PetscTime(&t1));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " products, %.1f ms each\n", k, 1e3 * (t1 - t0) / (k - done)));
      t0   = t1;
      done = k;
    }
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
