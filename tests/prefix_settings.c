static char help[] = "Regression: settings given under the matrix's options prefix survive PETSc operations that replace its data.\n\
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

/* where products run, and whether a MatMult runs on the ELLPACK-R storage (the product count grows) */
static PetscErrorCode Report(const char *what, Mat A, MatELLRBackend want)
{
  MatELLRBackend be;
  PetscInt       c0, c1;
  Vec            x, y;

  PetscFunctionBeginUser;
  PetscCall(MatELLRGetBackend(A, &be));
  PetscCall(MatELLRGetProductCount(A, &c0));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatELLRGetProductCount(A, &c1));
  /* AIJ's own products leave the count alone */
  const PetscBool bad = (PetscBool)(be != want || (want != MAT_ELLR_BACKEND_AIJ) != (c1 > c0));
  if (bad) g_fail++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s %-40s backend %s (expected %s), MatMult on the storage: %s\n", bad ? "FAIL" : "ok", what, MatELLRBackends[be], MatELLRBackends[want], c1 > c0 ? "yes" : "no"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* Whether this PETSc keeps a matrix's composed objects through a header merge (3.26 does; 3.18 drops them) */
static PetscErrorCode MergeKeepsComposed(Mat X, PetscBool *keeps)
{
  Mat            Y;
  PetscContainer c;
  PetscObject    o = NULL;
  PetscInt       lo, hi, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(X, &N, NULL));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 1, NULL, 0, NULL, &Y));
  PetscCall(MatGetOwnershipRange(Y, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(MatSetValue(Y, i, i, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(Y, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Y, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscObjectCompose((PetscObject)Y, "probe", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscCall(MatAXPY(Y, 1.0, X, DIFFERENT_NONZERO_PATTERN)); /* the diagonal and (i*7+5) % N: another pattern */
  PetscCall(PetscObjectQuery((PetscObject)Y, "probe", &o));
  *keeps = (PetscBool)(o != NULL);
  PetscCall(MatDestroy(&Y));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat      A, D, X;
  char     type[64] = "ellrt";
  PetscInt N        = 20, lo, hi;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));

  PetscCall(Build(type, "a_", N, &A));
  PetscCall(Report("assembled", A, MAT_ELLR_BACKEND_CPU));

  /* MatAXPY with another pattern: AIJ builds a new matrix of A's type and merges it into A's header */
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 1, NULL, 1, NULL, &X));
  PetscCall(MatGetOwnershipRange(X, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(MatSetValue(X, i, (i * 7 + 5) % N, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAXPY(A, 1.0, X, DIFFERENT_NONZERO_PATTERN));
  PetscCall(Report("MatAXPY(DIFFERENT_NONZERO_PATTERN)", A, MAT_ELLR_BACKEND_CPU));
  PetscCall(MatDestroy(&A));

  PetscCall(Build(type, "a_", N, &A));
  PetscCall(MatTranspose(A, MAT_INPLACE_MATRIX, &A));
  PetscCall(Report("MatTranspose(MAT_INPLACE_MATRIX)", A, MAT_ELLR_BACKEND_CPU));

  /* A duplicate has no prefix of its own: it keeps the settings it was given by its parent through the same merges
     where PETSc keeps its composed objects; where PETSc drops them (3.18) it takes the settings of an unprefixed
     matrix, as a matrix of the type made without options does */
  {
    PetscBool      keeps = PETSC_FALSE;
    MatELLRBackend plain = MAT_ELLR_BACKEND_AIJ;
    Mat            P;
    PetscCall(MergeKeepsComposed(X, &keeps));
    PetscCall(Build(type, NULL, N, &P));
    PetscCall(MatELLRGetBackend(P, &plain));
    PetscCall(MatDestroy(&P));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "This PETSc %s a matrix's composed objects through a header merge\n", keeps ? "keeps" : "drops"));
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
    PetscCall(Report("MatDuplicate", D, MAT_ELLR_BACKEND_CPU));
    PetscCall(MatAXPY(D, 1.0, X, DIFFERENT_NONZERO_PATTERN));
    PetscCall(Report("MatDuplicate, MatAXPY(DIFFERENT_NONZERO_PATTERN)", D, keeps ? MAT_ELLR_BACKEND_CPU : plain));
    PetscCall(MatTranspose(D, MAT_INPLACE_MATRIX, &D));
    PetscCall(Report("MatDuplicate, MatTranspose(MAT_INPLACE_MATRIX)", D, keeps ? MAT_ELLR_BACKEND_CPU : plain));
    PetscCall(MatDestroy(&D));

    /* right after a merge, with no product between: a duplicate and MatSetFromOptions() start from the matrix's own
       settings, not from those of the matrix PETSc built for the merge */
    PetscCall(MatAXPY(A, 1.0, X, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
    PetscCall(Report("MatAXPY(DIFFERENT_NONZERO_PATTERN), MatDuplicate", D, MAT_ELLR_BACKEND_CPU));
    PetscCall(MatAXPY(D, 1.0, X, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatSetFromOptions(D));
    PetscCall(Report("MatDuplicate, MatAXPY(DIFFERENT_NONZERO_PATTERN), MatSetFromOptions", D, keeps ? MAT_ELLR_BACKEND_CPU : plain));
    PetscCall(MatDestroy(&D));

    /* MatHeaderReplace() makes A the other matrix, its options prefix included: an unprefixed one's settings */
    PetscCall(Build(type, NULL, N, &P));
    PetscCall(MatHeaderReplace(A, &P));
    PetscCall(Report("MatHeaderReplace by an unprefixed matrix", A, plain));
  }
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&A));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " failed\n", g_fail));
  PetscCall(PetscFinalize());
  return 0;
}
