static char help[] = "Loads a matrix from a PETSc binary file, solves A x = b for a known x, and optionally\n\
compares the products of the chosen matrix type with MATAIJ's.\n\
Options:\n\
  -f <file>             PETSc binary matrix (make one from Matrix Market with tutorials/mtx2petsc.py)\n\
  -mat_type <aij>       aij, ellrt, pellr, ...\n\
  -load_as_aij          load as MATAIJ and MatConvert to -mat_type (default: MatSetFromOptions before MatLoad)\n\
  -compare_aij          check MatMult/MatMultAdd/MatMultTranspose(Add) against a MATAIJ copy (rel. err <= -tol)\n\
  -tol <1e-12>          tolerance of -compare_aij\n\
  -solve <true>         solve (false: products only)\n\n";

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

     /usr/bin/python3 tutorials/mtx2petsc.py --diag-dominant ../shared/matrices/add32.mtx.gz /tmp/add32.petsc
     build/tutorials/ex2 -f /tmp/add32.petsc -mat_type ellrt -ksp_type gmres -pc_type jacobi -mat_view ::ascii_info
     mpiexec -n 2 build/tutorials/ex2 -f /tmp/add32.petsc -mat_type pellr -compare_aij
     /usr/bin/python3 tutorials/mtx2petsc.py ../shared/matrices/bcsstk14.mtx.gz /tmp/bcsstk14.petsc
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

int main(int argc, char **argv)
{
  Mat                A;
  Vec                x, b, u, r;
  KSP                ksp;
  PetscViewer        viewer;
  char               file[PETSC_MAX_PATH_LEN] = "", type[256] = MATAIJ;
  PetscBool          flg, load_as_aij = PETSC_FALSE, compare = PETSC_FALSE, solve = PETSC_TRUE, ok = PETSC_TRUE;
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
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Matrix type: %s\n", mtype));
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
