static char help[] = "Loads a matrix from a PETSc binary file, solves A x = b for a known x, and optionally\n\
compares the products of the chosen matrix type with MATAIJ's.\n\
Options:\n\
  -f <file>             PETSc binary matrix (make one from Matrix Market with tutorials/mtx2petsc.py)\n\
  -mat_type <aij>       aij, ellrt, pellr, ...\n\
  -load_as_aij          load as MATAIJ and MatConvert to -mat_type (default: MatSetFromOptions before MatLoad)\n\
  -compare_aij          check MatMult/MatMultAdd/MatMultTranspose(Add) against a MATAIJ copy (rel. err <= -tol)\n\
  -tol <1e-12>          tolerance of -compare_aij\n\
  -solve <true>         solve (false: products only)\n\
  -check_solution_aij   solve with MATAIJ too: both converge, the products agree at the solution to rounding, and\n\
                        ||x - x_aij||_inf <= ||A^-1||_inf (||r||_inf + ||r_aij||_inf) (a dense inverse: small matrices)\n\n";

/*
   ex2 - load a matrix (PETSc binary), solve with a known solution, compare with MATAIJ

   What it shows:
     - that MatLoad works for the petsc-ellr types: the type comes from the options database
       (MatSetFromOptions before MatLoad), or with -load_as_aij the matrix is loaded as MATAIJ and
       converted with MatConvert(A, type, MAT_INPLACE_MATRIX, &A);
     - a solve with a known solution x = (1 + i mod 7) / 7 (b = A x): iterations, true relative
       residual and error;
     - with -compare_aij, the four products of the matrix against a MATAIJ copy (MatConvert to
       MATAIJ), as a max-norm relative error.

   Matrix Market files (.mtx, .mtx.gz) are converted first with tutorials/mtx2petsc.py
   (scipy.io.mmread + PETSc's PetscBinaryIO; expands symmetric storage, gives pattern matrices 1.0,
   --diag-dominant makes a matrix safe for simple solvers):

     /usr/bin/python3 tutorials/mtx2petsc.py --diag-dominant tests/matrices/add32.mtx.gz /tmp/add32.petsc
     build/tutorials/ex2 -f /tmp/add32.petsc -mat_type ellrt -ksp_type gmres -pc_type jacobi -mat_view ::ascii_info
     mpiexec -n 2 build/tutorials/ex2 -f /tmp/add32.petsc -mat_type pellr -compare_aij
     /usr/bin/python3 tutorials/mtx2petsc.py tests/matrices/bcsstk14.mtx.gz /tmp/bcsstk14.petsc
     build/tutorials/ex2 -f /tmp/bcsstk14.petsc -mat_type ellrt -ksp_type cg -pc_type icc
*/
#include <petscksp.h>
#include <petscellr.h>

/* max |y1 - y2| / max |y2| (or max |y1 - y2| when y2 = 0) */
static PetscErrorCode RelErr(Vec y1, Vec y2, PetscReal *err)
{
  Vec       d;
  PetscReal nd, n2;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(y1, &d));
  PetscCall(VecWAXPY(d, -1.0, y2, y1));
  PetscCall(VecNorm(d, NORM_INFINITY, &nd));
  PetscCall(VecNorm(y2, NORM_INFINITY, &n2));
  *err = n2 > 0 ? nd / n2 : nd;
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

static PetscErrorCode CompareWithAIJ(Mat A, PetscReal tol, PetscBool *ok)
{
  Mat         B;
  Vec         x, y, z, xt, yt, zt, y1, yt1;
  PetscReal   err[4];
  PetscRandom rnd;
  const char *names[4] = {"MatMult", "MatMultAdd", "MatMultTranspose", "MatMultTransposeAdd"};

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(MatCreateVecs(A, &yt, &xt));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &y1));
  PetscCall(VecDuplicate(yt, &zt));
  PetscCall(VecDuplicate(yt, &yt1));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 12345));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(VecSetRandom(xt, rnd));
  PetscCall(VecSetRandom(zt, rnd));

  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, y1));
  PetscCall(RelErr(y, y1, &err[0]));
  PetscCall(MatMultAdd(A, x, z, y));
  PetscCall(MatMultAdd(B, x, z, y1));
  PetscCall(RelErr(y, y1, &err[1]));
  PetscCall(MatMultTranspose(A, xt, yt));
  PetscCall(MatMultTranspose(B, xt, yt1));
  PetscCall(RelErr(yt, yt1, &err[2]));
  PetscCall(MatMultTransposeAdd(A, xt, zt, yt));
  PetscCall(MatMultTransposeAdd(B, xt, zt, yt1));
  PetscCall(RelErr(yt, yt1, &err[3]));
  *ok = PETSC_TRUE;
  for (int k = 0; k < 4; k++) {
    if (!(err[k] <= tol)) {
      *ok = PETSC_FALSE;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s differs from MATAIJ: relative error %g > %g\n", names[k], (double)err[k], (double)tol));
    }
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&y1));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&zt));
  PetscCall(VecDestroy(&yt1));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* ||A^{-1}||_inf of a (small) matrix: the whole matrix on rank 0, dense LU, then A^{-1} from LU X = I. */
static PetscErrorCode InverseNormInf(Mat B, PetscReal *nrm)
{
  Mat        *sub, D, Id, X;
  IS          all;
  PetscInt    N;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MatGetSize(B, &N, NULL));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, rank == 0 ? N : 0, 0, 1, &all));
  PetscCall(MatCreateSubMatrices(B, 1, &all, &all, MAT_INITIAL_MATRIX, &sub));
  *nrm = 0;
  if (rank == 0) {
    PetscCall(MatConvert(sub[0], MATSEQDENSE, MAT_INITIAL_MATRIX, &D));
    PetscCall(MatLUFactor(D, NULL, NULL, NULL));
    PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, N, N, NULL, &Id));
    for (PetscInt i = 0; i < N; i++) PetscCall(MatSetValue(Id, i, i, 1.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(Id, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Id, MAT_FINAL_ASSEMBLY));
    PetscCall(MatDuplicate(Id, MAT_DO_NOT_COPY_VALUES, &X));
    PetscCall(MatMatSolve(D, Id, X));
    PetscCall(MatNorm(X, NORM_INFINITY, nrm));
    PetscCall(MatDestroy(&D));
    PetscCall(MatDestroy(&Id));
    PetscCall(MatDestroy(&X));
  }
  PetscCall(MatDestroySubMatrices(1, &sub));
  PetscCall(ISDestroy(&all));
  PetscCallMPI(MPI_Bcast(nrm, 1, MPIU_REAL, 0, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* |B| |x| (entrywise absolute values) and the longest row of B: what the rounding of a product is bounded by. */
static PetscErrorCode AbsProduct(Mat B, Vec x, Vec ax, PetscInt *maxrow)
{
  Mat      C;
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &C));
  PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
  *maxrow = 0;
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *v;
    PetscScalar        a[4096];
    PetscInt           c[4096];
    PetscCall(MatGetRow(B, i, &nc, &cols, &v));
    PetscCheck(nc <= 4096, PETSC_COMM_SELF, PETSC_ERR_SUP, "row too long for -check_solution_aij");
    for (PetscInt k = 0; k < nc; k++) {
      a[k] = PetscAbsScalar(v[k]);
      c[k] = cols[k];
    }
    *maxrow = PetscMax(*maxrow, nc);
    PetscCall(MatRestoreRow(B, i, &nc, &cols, &v));
    PetscCall(MatSetValues(C, 1, &i, nc, c, a, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, maxrow, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(VecCopy(x, ax));
  PetscCall(VecAbs(ax));
  {
    Vec t;
    PetscCall(VecDuplicate(ax, &t));
    PetscCall(VecCopy(ax, t));
    PetscCall(MatMult(C, t, ax));
    PetscCall(VecDestroy(&t));
  }
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(0);
}

/* The same solve with MATAIJ (same b, same KSP options), and three checks whose tolerances come from the
   problem, not from tuning; they hold whatever the two iteration counts are (rounding in the products changes
   the iterates of an ill-conditioned solve, and so its iteration count):
   1. both solves converged;
   2. the products agree at the solution to rounding: ||A x - A_aij x||_inf <= 2 gamma_k || |A| |x| ||_inf,
      gamma_k = k u / (1 - k u), k the longest row, u the unit roundoff (each product sums k terms);
   3. the solutions agree as far as the conditioning lets them: x - x_aij = A^{-1} (r_aij - r), so
      ||x - x_aij||_inf <= ||A^{-1}||_inf (||r||_inf + ||r_aij||_inf), residuals computed with MATAIJ. */
static PetscErrorCode CheckSolutionWithAIJ(Mat A, Vec b, Vec x, KSPConvergedReason reason_a, PetscBool *ok)
{
  Mat                B;
  KSP                ksp;
  Vec                xa, r, ra, re, ax;
  PetscReal          ninv, rn, ran, dn, xan, gap, axn, gamma;
  PetscInt           its, k;
  KSPConvergedReason reason;
  const PetscReal    u = PETSC_MACHINE_EPSILON / 2;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(VecDuplicate(x, &xa));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecDuplicate(b, &ra));
  PetscCall(VecDuplicate(b, &re));
  PetscCall(VecDuplicate(b, &ax));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, xa));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(MatMult(B, x, r)); /* r = b - A_aij x */
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(MatMult(A, x, re)); /* re = b - A x, with this matrix type's product */
  PetscCall(VecAYPX(re, -1.0, b));
  PetscCall(MatMult(B, xa, ra));
  PetscCall(VecAYPX(ra, -1.0, b));
  PetscCall(VecAXPY(re, -1.0, r));
  PetscCall(VecNorm(re, NORM_INFINITY, &gap));
  PetscCall(AbsProduct(B, x, ax, &k));
  PetscCall(VecNorm(ax, NORM_INFINITY, &axn));
  gamma = k * u / (1 - k * u);
  PetscCall(VecNorm(r, NORM_INFINITY, &rn));
  PetscCall(VecNorm(ra, NORM_INFINITY, &ran));
  PetscCall(VecNorm(xa, NORM_INFINITY, &xan));
  PetscCall(VecAXPY(xa, -1.0, x));
  PetscCall(VecNorm(xa, NORM_INFINITY, &dn));
  PetscCall(InverseNormInf(B, &ninv));
  *ok = (PetscBool)(reason > 0 && reason_a > 0 && gap <= 2 * gamma * axn && dn <= ninv * (rn + ran));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MATAIJ solve: %" PetscInt_FMT " iterations (%s)\n", its, KSPConvergedReasons[reason]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Products at the solution: ||A x - A_aij x|| = %.3e, rounding bound 2 gamma_%" PetscInt_FMT " || |A| |x| || = %.3e: %s\n", (double)gap, k, (double)(2 * gamma * axn), gap <= 2 * gamma * axn ? "within" : "ABOVE THE BOUND"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Solution vs MATAIJ: ||x - x_aij||/||x_aij|| = %.3e, bound ||A^-1|| (||r|| + ||r_aij||)/||x_aij|| = %.3e (||A^-1|| = %.3e): %s\n", (double)(dn / xan), (double)(ninv * (rn + ran) / xan), (double)ninv, dn <= ninv * (rn + ran) ? "within" : "ABOVE THE BOUND"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Check against MATAIJ: %s\n", *ok ? "passed" : "FAILED"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&ra));
  PetscCall(VecDestroy(&re));
  PetscCall(VecDestroy(&ax));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat                A;
  Vec                x, b, u, r;
  KSP                ksp;
  PetscViewer        viewer;
  char               file[PETSC_MAX_PATH_LEN] = "", type[256] = MATAIJ;
  PetscBool          flg, load_as_aij = PETSC_FALSE, compare = PETSC_FALSE, solve = PETSC_TRUE, ok = PETSC_TRUE, checksol = PETSC_FALSE;
  PetscReal          tol = 1e-12, rnorm, bnorm, enorm, unorm;
  PetscInt           M, N, its, rstart, rend;
  MatInfo            info;
  MatType            mtype;
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "ex2 options", "ex2");
  PetscCall(PetscOptionsString("-f", "PETSc binary matrix file", "ex2.c", file, file, sizeof(file), &flg));
  PetscCall(PetscOptionsBool("-load_as_aij", "load as MATAIJ, then MatConvert to -mat_type", "ex2.c", load_as_aij, &load_as_aij, NULL));
  PetscCall(PetscOptionsBool("-compare_aij", "compare the products with MATAIJ's", "ex2.c", compare, &compare, NULL));
  PetscCall(PetscOptionsReal("-tol", "tolerance of -compare_aij", "ex2.c", tol, &tol, NULL));
  PetscCall(PetscOptionsBool("-solve", "solve A x = b", "ex2.c", solve, &solve, NULL));
  PetscCall(PetscOptionsBool("-check_solution_aij", "check the solution against MATAIJ's with the bound of the conditioning", "ex2.c", checksol, &checksol, NULL));
  PetscOptionsEnd();
  PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Give a PETSc binary matrix with -f <file> (convert Matrix Market files with tutorials/mtx2petsc.py)");
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", type, sizeof(type), NULL));

  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  if (load_as_aij) {
    PetscCall(MatSetType(A, MATAIJ));
    PetscCall(MatLoad(A, viewer));
    PetscCall(MatConvert(A, type, MAT_INPLACE_MATRIX, &A));
  } else {
    PetscCall(MatSetType(A, MATAIJ));
    PetscCall(MatSetFromOptions(A));
    PetscCall(MatLoad(A, viewer));
  }
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetType(A, &mtype));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  { /* MatGetType names the base type (seqaij, mpiaij, or their aijcusparse variants); the format is the library's */
    MatType format;
    PetscCall(MatELLRGetFormat(A, &format));
    if (format) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Matrix type: %s (petsc-ellr format %s)\n", mtype, format));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Matrix type: %s\n", mtype));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Matrix size: %" PetscInt_FMT " x %" PetscInt_FMT ", nonzeros: %.0f\n", M, N, (double)info.nz_used));

  if (compare) {
    PetscCall(CompareWithAIJ(A, tol, &ok));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Products vs MATAIJ: %s\n", ok ? "agree" : "DIFFER"));
  }

  if (solve) {
    PetscCheck(M == N, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "Cannot solve with a %" PetscInt_FMT " x %" PetscInt_FMT " matrix; use -solve false", M, N);
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(x, &u));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecGetOwnershipRange(u, &rstart, &rend));
    for (PetscInt i = rstart; i < rend; i++) PetscCall(VecSetValue(u, i, (PetscScalar)(1 + i % 7) / 7.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(u));
    PetscCall(VecAssemblyEnd(u));
    PetscCall(MatMult(A, u, b));

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));

    if (checksol) PetscCall(CheckSolutionWithAIJ(A, b, x, reason, &ok));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    PetscCall(VecNorm(b, NORM_2, &bnorm));
    PetscCall(VecAXPY(x, -1.0, u));
    PetscCall(VecNorm(x, NORM_2, &enorm));
    PetscCall(VecNorm(u, NORM_2, &unorm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP iterations: %" PetscInt_FMT " (%s)\n", its, KSPConvergedReasons[reason]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Relative residual ||b-Ax||/||b||: %.3e\n", (double)(bnorm > 0 ? rnorm / bnorm : rnorm)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Relative error ||x-u||/||u||: %.3e\n", (double)(unorm > 0 ? enorm / unorm : enorm)));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&u));
    PetscCall(VecDestroy(&r));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
