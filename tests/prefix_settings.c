static char help[] = "Regression: the format and settings given under the matrix's options prefix reach the matrix and survive PETSc operations that replace its data.\n\
  Run with -a_mat_ellr_backend cpu (the prefix is a_).\n";
#include <petscellr.h>

static PetscInt g_fail = 0;

static PetscErrorCode Build(MatType type, const char *prefix, PetscInt N, Mat *A)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  if (prefix) PetscCall(MatSetOptionsPrefix(*A, prefix));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscCall(MatSetValue(*A, i, i, 4.0 + i, INSERT_VALUES));
    if (i + 1 < N) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
    if (i > 2) PetscCall(MatSetValue(*A, i, i - 3, -0.5, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* the format (MatELLRGetFormat), where products run, and whether a MatMult runs on the ELLPACK-R storage (the
   product count grows) */
static PetscErrorCode Report(const char *what, Mat A, const char *format, MatELLRBackend want)
{
  MatELLRBackend be = MAT_ELLR_BACKEND_AIJ;
  MatType        f;
  PetscInt       c0, c1;
  PetscBool      same;
  Vec            x, y;

  PetscFunctionBeginUser;
  PetscCall(MatELLRGetFormat(A, &f));
  PetscCall(PetscStrcmp(f, format, &same));
  if (!same) {
    g_fail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %-40s format %s, expected %s\n", what, f ? f : "none", format));
    PetscFunctionReturn(0);
  }
  PetscCall(MatELLRGetBackend(A, &be));
  PetscCall(MatELLRGetProductCount(A, &c0));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatELLRGetProductCount(A, &c1));
  /* AIJ's own products leave the count alone */
  const PetscBool bad = (PetscBool)(be != want || (want != MAT_ELLR_BACKEND_AIJ) != (c1 > c0));
  if (bad) g_fail++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s %-40s format %s, backend %s (expected %s), MatMult on the storage: %s\n", bad ? "FAIL" : "ok", what, f, MatELLRBackends[be], MatELLRBackends[want], c1 > c0 ? "yes" : "no"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat      A, D, X;
  MatType  format;
  char     type[64] = "ellrt";
  PetscInt N        = 20, lo, hi;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));

  /* the matrix takes the format and -a_mat_ellr_backend under its prefix */
  PetscCall(Build(type, "a_", N, &A));
  PetscCall(MatELLRGetFormat(A, &format));
  PetscCheck(format, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatSetType(A, %s) gave a matrix without the format", type);
  PetscCall(Report("assembled", A, format, MAT_ELLR_BACKEND_CPU));

  /* MatAXPY with another pattern: AIJ builds a new matrix of A's type and merges it into A's header */
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 1, NULL, 1, NULL, &X));
  PetscCall(MatGetOwnershipRange(X, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(MatSetValue(X, i, (i * 7 + 5) % N, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAXPY(A, 1.0, X, DIFFERENT_NONZERO_PATTERN));
  PetscCall(Report("MatAXPY(DIFFERENT_NONZERO_PATTERN)", A, format, MAT_ELLR_BACKEND_CPU));
  PetscCall(MatDestroy(&A));

  PetscCall(Build(type, "a_", N, &A));
  PetscCall(MatTranspose(A, MAT_INPLACE_MATRIX, &A));
  PetscCall(Report("MatTranspose(MAT_INPLACE_MATRIX)", A, format, MAT_ELLR_BACKEND_CPU));

  /* a duplicate (no prefix of its own) keeps its parent's settings */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(Report("MatDuplicate", D, format, MAT_ELLR_BACKEND_CPU));
  PetscCall(MatDestroy(&D));

  /* MatHeaderReplace() makes A the other matrix, its options prefix included: an unprefixed one's settings */
  {
    MatELLRBackend plain = MAT_ELLR_BACKEND_AIJ;
    Mat            P;
    PetscCall(Build(type, NULL, N, &P));
    PetscCall(MatELLRGetBackend(P, &plain));
    PetscCall(MatHeaderReplace(A, &P));
    PetscCall(Report("MatHeaderReplace by an unprefixed matrix", A, format, plain));
  }
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&A));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " failed\n", g_fail));
  PetscCall(PetscFinalize());
  return 0;
}
