static char help[] = "Regression: flops logged per product against MATAIJ; MatSeqAIJSetColumnIndices; MatCreateSubMatrices reuse.\n";
#include <petscellr.h>

static PetscErrorCode Build(MatType type, PetscInt N, Mat *A)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 3, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 3, NULL, 3, NULL));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscCall(MatSetValue(*A, i, i, 4.0 + i, INSERT_VALUES));
    PetscCall(MatSetValue(*A, i, (i + 1) % N, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(*A, i, (i + N / 2) % N, -0.5 - 0.01 * i, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Relative error of A x against B x.  A multiplies vectors of its own type (CUDA vectors for an aijcusparse matrix, as
   aijcusparse's own products need) holding the same values. */
static PetscErrorCode Err(Mat A, Mat B, PetscReal *e)
{
  Vec                x, y1, y2, xa, ya;
  PetscReal          n;
  const PetscScalar *src;
  PetscScalar       *dst;
  PetscInt           m;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x, &y1));
  PetscCall(MatCreateVecs(A, &xa, &ya));
  PetscCall(VecDuplicate(y1, &y2));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecGetLocalSize(x, &m));
  PetscCall(VecGetArrayRead(x, &src));
  PetscCall(VecGetArrayWrite(xa, &dst));
  PetscCall(PetscArraycpy(dst, src, m));
  PetscCall(VecRestoreArrayWrite(xa, &dst));
  PetscCall(VecRestoreArrayRead(x, &src));
  PetscCall(MatMult(A, xa, ya));
  PetscCall(VecGetLocalSize(ya, &m));
  PetscCall(VecGetArrayRead(ya, &src));
  PetscCall(VecGetArrayWrite(y1, &dst));
  PetscCall(PetscArraycpy(dst, src, m));
  PetscCall(VecRestoreArrayWrite(y1, &dst));
  PetscCall(VecRestoreArrayRead(ya, &src));
  PetscCall(MatMult(B, x, y2));
  PetscCall(VecAXPY(y1, -1, y2));
  PetscCall(VecNorm(y1, NORM_2, e));
  PetscCall(VecNorm(y2, NORM_2, &n));
  *e /= n;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y1));
  PetscCall(VecDestroy(&y2));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ya));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A, B;
  PetscInt    N = 16;
  PetscMPIInt size;
  char        type[64] = "ellrt";

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(Build(type, N, &A));
  PetscCall(Build(MATAIJ, N, &B));

  { /* flops of each product on this rank */
    Vec            x, y, z;
    PetscLogDouble f0, f1, fa[4], fb[4];
    PetscCall(MatCreateVecs(B, &x, &y));
    PetscCall(VecDuplicate(y, &z));
    PetscCall(VecSet(x, 1.0));
    PetscCall(VecSet(z, 1.0));
    for (int t = 0; t < 2; t++) {
      Mat M = t ? B : A;
      PetscLogDouble *f = t ? fb : fa;
      PetscCall(MatMult(M, x, y)); /* storage built outside the count */
      PetscCall(PetscGetFlops(&f0)); PetscCall(MatMult(M, x, y)); PetscCall(PetscGetFlops(&f1)); f[0] = f1 - f0;
      PetscCall(PetscGetFlops(&f0)); PetscCall(MatMultAdd(M, x, z, y)); PetscCall(PetscGetFlops(&f1)); f[1] = f1 - f0;
      PetscCall(PetscGetFlops(&f0)); PetscCall(MatMultTranspose(M, x, y)); PetscCall(PetscGetFlops(&f1)); f[2] = f1 - f0;
      PetscCall(PetscGetFlops(&f0)); PetscCall(MatMultTransposeAdd(M, x, z, y)); PetscCall(PetscGetFlops(&f1)); f[3] = f1 - f0;
    }
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "%s flops mult/multadd/multT/multTadd: %s %g %g %g %g, aij %g %g %g %g\n", (fa[0] == fb[0] && fa[1] == fb[1] && fa[2] == fb[2] && fa[3] == fb[3]) ? "ok  " : "FAIL", type, fa[0], fa[1], fa[2], fa[3], fb[0], fb[1], fb[2], fb[3]));
    PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
    { /* the 5 products of A above ran on the storage (unless its backend is the base type's own) */
      MatELLRBackend be;
      PetscInt       count;
      PetscCall(MatELLRGetBackend(A, &be));
      PetscCall(MatELLRGetProductCount(A, &count));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %" PetscInt_FMT " products on the storage, backend %s\n", (be == MAT_ELLR_BACKEND_AIJ) == (count == 0) && (be == MAT_ELLR_BACKEND_AIJ || count >= 5) ? "ok  " : "FAIL", count, MatELLRBackends[be]));
    }
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&z));
  }

  { /* MatCreateSubMatrices, then reuse after new values (PCASM does this when the operator changes) */
    IS        is;
    Mat      *sa, *sb;
    PetscInt  lo, hi;
    PetscReal e;
    PetscCall(MatGetOwnershipRange(B, &lo, &hi));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, PetscMin(hi - lo + 2, N - lo), lo, 1, &is));
    PetscCall(MatCreateSubMatrices(A, 1, &is, &is, MAT_INITIAL_MATRIX, &sa));
    PetscCall(MatCreateSubMatrices(B, 1, &is, &is, MAT_INITIAL_MATRIX, &sb));
    PetscCall(Err(sa[0], sb[0], &e));
    {
      MatType st;
      PetscCall(MatGetType(sa[0], &st));
      PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "%s MatCreateSubMatrices(INITIAL) %s error %.1e\n", e > 1e-12 ? "FAIL" : "ok  ", st, (double)e));
    }
    PetscCall(MatScale(A, 3.0));
    PetscCall(MatScale(B, 3.0));
    PetscCall(MatCreateSubMatrices(A, 1, &is, &is, MAT_REUSE_MATRIX, &sa));
    PetscCall(MatCreateSubMatrices(B, 1, &is, &is, MAT_REUSE_MATRIX, &sb));
    PetscCall(Err(sa[0], sb[0], &e));
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "%s MatCreateSubMatrices(REUSE) error %.1e\n", e > 1e-12 ? "FAIL" : "ok  ", (double)e));
    PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
    PetscCall(MatDestroySubMatrices(1, &sa));
    PetscCall(MatDestroySubMatrices(1, &sb));
    PetscCall(ISDestroy(&is));
  }

  if (size == 1) { /* MatSeqAIJSetColumnIndices: a new pattern with as many nonzeros per row, no new nonzero state */
    PetscInt  *cols;
    PetscReal  e;
    PetscCall(PetscMalloc1(3 * N, &cols));
    for (int t = 0; t < 2; t++) {
      Mat M = t ? B : A;
      for (PetscInt i = 0; i < N; i++) {
        PetscInt c[3] = {i, (i + 2) % N, (i + 5) % N};
        PetscCall(PetscSortInt(3, c));
        for (int k = 0; k < 3; k++) cols[3 * i + k] = c[k];
      }
      PetscCall(MatSeqAIJSetColumnIndices(M, cols));
      for (PetscInt i = 0; i < N; i++)
        for (int k = 0; k < 3; k++) PetscCall(MatSetValue(M, i, cols[3 * i + k], 1.0 + k + 0.1 * i, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
    }
    PetscCall(PetscFree(cols));
    PetscCall(Err(A, B, &e));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s MatSeqAIJSetColumnIndices error %.1e\n", e > 1e-12 ? "FAIL" : "ok  ", (double)e));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscFinalize());
  return 0;
}
