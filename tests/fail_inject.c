static char help[] = "Failures of the storage's set-up, tuning, refresh and release (injected by the engine's test hook), then new values, a new pattern, products and MatDestroy.\n\
  -type ellrt|pellr   the plugin's type\n\
  -n N                the matrix has N rows\n\n";
/*
  For each stage (create, tune, update, destroy) the engine is told to fail its next call of that stage, the product
  that reaches it must return a PETSc error (not crash, not hang, not multiply with a half-built storage), and the
  matrix must then take new values and a new pattern, multiply as MATAIJ does (within the rounding bound of the
  formats' other summation order), count its products (the plugin's storage ran, not AIJ's fallback) and be
  destroyed; -malloc_dump and valgrind (the CPU backend) see nothing left.  A stage the backend never runs (tune and
  destroy on the CPU) cannot fire: the line says so.  One line per stage on rank 0: "ok ..." or "FAIL ...".
*/
#include <petscellr.h>
#include "ellr.h" /* the engine's test hook */

static PetscInt N = 200;

static PetscErrorCode Fill(Mat A, PetscScalar shift, PetscBool extra)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscCall(MatSetValue(A, i, i, 4.0 + shift + 0.01 * i, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (i + 3 < N) PetscCall(MatSetValue(A, i, i + 3, -0.5 - 0.001 * i, INSERT_VALUES));
    if (extra) PetscCall(MatSetValue(A, i, lo + (i * 13 + 7) % (hi - lo), 0.125, INSERT_VALUES)); /* a new pattern, in the diagonal block */
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode Create(MatType type, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 4, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 4, NULL, 4, NULL));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(Fill(*A, 0.0, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* op(A) x against op(R) x entry by entry within 2 k u ||R|| ||x||_inf (k = 5 bounds the entries of a row; a column
   gets at most a few more from the new pattern's entries, hence 8 below;
   the norm's infinity or 1 for the transpose), a bound of the rounding of a sum of k terms in any order. */
static PetscErrorCode Agree(Mat A, Mat R, PetscBool transpose, PetscBool *ok)
{
  Vec                x, y, yr;
  const PetscScalar *ya, *ra;
  PetscInt           n;
  PetscReal          rn, xn, bound;
  PetscBool          mine = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(R, &x, &y));
  PetscCall(VecDuplicate(y, &yr));
  PetscCall(VecSetRandom(x, NULL));
  if (transpose) {
    PetscCall(MatMultTranspose(A, x, y));
    PetscCall(MatMultTranspose(R, x, yr));
  } else {
    PetscCall(MatMult(A, x, y));
    PetscCall(MatMult(R, x, yr));
  }
  PetscCall(MatNorm(R, transpose ? NORM_1 : NORM_INFINITY, &rn));
  PetscCall(VecNorm(x, NORM_INFINITY, &xn));
  bound = 2 * 8 * PETSC_MACHINE_EPSILON * rn * xn;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(yr, &ra));
  for (PetscInt i = 0; i < n; i++)
    if (!(PetscAbsScalar(ya[i] - ra[i]) <= bound)) mine = PETSC_FALSE;
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecRestoreArrayRead(yr, &ra));
  {
      int m_ = mine, a_;
      PetscCallMPI(MPI_Allreduce(&m_, &a_, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
      *ok = a_ ? PETSC_TRUE : PETSC_FALSE;
    }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yr));
  PetscFunctionReturn(0);
}

/* The product that reaches the injected stage, under PETSc's return-only error handler: its error code. */
static PetscErrorCode TryMult(Mat A, PetscErrorCode *ierr)
{
  Vec x, y;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *ierr = MatMult(A, x, y);
  PetscCall(PetscPopErrorHandler());
  /* fresh vectors from here on: a failed MatMult() leaves x's read lock taken */
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

static const char *const stages[] = {"", "create", "tune", "update", "destroy"};

static PetscErrorCode Stage(const char *type, int stage)
{
  Mat            A, R;
  PetscErrorCode ierr   = 0;
  int            before = ellr_test_failures(), fired;
  int            fired_all;
  PetscInt       c0 = 0, c1 = 0;
  PetscBool      ok = PETSC_TRUE, agree;
  char           why[256] = "";
  MatELLRBackend backend;

  PetscFunctionBeginUser;
  PetscCall(Create(type, &A));
  PetscCall(Create(MATAIJ, &R));
  if (stage == ELLR_STAGE_UPDATE || stage == ELLR_STAGE_DESTROY) PetscCall(Agree(A, R, PETSC_FALSE, &agree)); /* the storage exists */
  ellr_test_fail_next(stage);
  if (stage == ELLR_STAGE_UPDATE) { /* new values: a refresh */
    PetscCall(Fill(A, 1.0, PETSC_FALSE));
    PetscCall(Fill(R, 1.0, PETSC_FALSE));
  } else if (stage == ELLR_STAGE_DESTROY) { /* a new pattern: the old storage is released, then rebuilt */
    PetscCall(Fill(A, 1.0, PETSC_TRUE));
    PetscCall(Fill(R, 1.0, PETSC_TRUE));
  }
  PetscCall(TryMult(A, &ierr));
  ellr_test_fail_next(ELLR_STAGE_NONE);
  fired = ellr_test_failures() - before;
  PetscCall(MPIU_Allreduce(&fired, &fired_all, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  if (fired && !ierr) PetscCall(PetscSNPrintf(why, sizeof(why), "the injected failure fired but MatMult() returned no error"));
  /* then: new values, a new pattern, both products, the count */
  PetscCall(Fill(A, 2.0, PETSC_TRUE));
  PetscCall(Fill(R, 2.0, PETSC_TRUE));
  PetscCall(MatELLRGetProductCount(A, &c0));
  PetscCall(Agree(A, R, PETSC_FALSE, &agree));
  if (!agree && !why[0]) PetscCall(PetscSNPrintf(why, sizeof(why), "MatMult after the failure differs from MATAIJ's"));
  PetscCall(Agree(A, R, PETSC_TRUE, &agree));
  if (!agree && !why[0]) PetscCall(PetscSNPrintf(why, sizeof(why), "MatMultTranspose after the failure differs from MATAIJ's"));
  PetscCall(Fill(A, 3.0, PETSC_TRUE));
  PetscCall(Fill(R, 3.0, PETSC_TRUE));
  PetscCall(Agree(A, R, PETSC_FALSE, &agree));
  if (!agree && !why[0]) PetscCall(PetscSNPrintf(why, sizeof(why), "MatMult after new values differs from MATAIJ's"));
  PetscCall(MatELLRGetProductCount(A, &c1));
  PetscCall(MatELLRGetBackend(A, &backend));
  if (backend != MAT_ELLR_BACKEND_AIJ && c1 < c0 + 3 && !why[0]) PetscCall(PetscSNPrintf(why, sizeof(why), "the plugin's product count went from %" PetscInt_FMT " to %" PetscInt_FMT ": AIJ's products ran", c0, c1));
  if (backend == MAT_ELLR_BACKEND_AIJ && !why[0]) PetscCall(PetscSNPrintf(why, sizeof(why), "backend aij: run with -mat_ellr_backend cpu or cuda"));
  ok = (PetscBool)!why[0];
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: failure of %s %s%s%s\n", ok ? "ok  " : "FAIL", type, stages[stage], fired_all ? "injected, PETSc error returned, then values, pattern, products and destroy as MATAIJ" : "never reached on this backend (it has no such stage)", why[0] ? ": " : "", why));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char type[64] = "ellrt";

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &N, NULL));
  for (int s = ELLR_STAGE_CREATE; s <= ELLR_STAGE_DESTROY; s++) PetscCall(Stage(type, s));
  PetscCall(PetscFinalize());
  return 0;
}
