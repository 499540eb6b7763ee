static char help[] = "The same x multiplied 20 times gives the same bits: MatMult, MatMultAdd, MatMultTranspose, MatMultTransposeAdd.\n\
  -type ellrt|pellr   the plugin's type (other -mat_ellr_* options pass through)\n\
  -n N                rows (a power-law matrix: most rows short, some thousands of entries long)\n\n";
/*
  Users debug by comparing runs, and Krylov methods that use the transpose (BiCG, QMR, LSQR, CGNE) would follow
  another path whenever a product's rounding changed: every product is repeatable by default, on the GPU too (split
  slices joined in a fixed order, long rows by the segmented join, the transpose on a stored transpose).  The matrix
  has rows of 1 to ~3000 entries, so that long rows, wide slices and uneven columns all occur; one line per product
  on rank 0, "ok ..." or "FAIL ...", and a last line with the plugin's product count (the engine ran, not AIJ).
*/
#include <petscellr.h>

static PetscErrorCode Build(MatType type, PetscInt n, Mat *A)
{
  PetscInt    lo, hi;
  PetscRandom r;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSetUp(*A));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 17));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    /* row length ~ 2 / u^1.2: a power law, capped at n / 4; every 97th row long */
    PetscReal u;
    PetscInt  len;
    PetscCall(PetscRandomGetValueReal(r, &u));
    len = (PetscInt)PetscMin((PetscReal)(n / 4), 2.0 / PetscPowReal(u + 1e-6, 1.2));
    if (i % 97 == 0) len = PetscMin(n / 2, 3000);
    PetscCall(MatSetValue(*A, i, i, 10.0 + (PetscReal)(i % 7), ADD_VALUES));
    for (PetscInt k = 0; k < len; k++) {
      PetscReal c, v;
      PetscCall(PetscRandomGetValueReal(r, &c));
      PetscCall(PetscRandomGetValueReal(r, &v));
      PetscCall(MatSetValue(*A, i, (PetscInt)(c * n) % n, v - 0.5, ADD_VALUES));
    }
  }
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Whether y holds the bits of first (on every rank). */
static PetscErrorCode SameBits(Vec y, Vec first, PetscBool *same)
{
  const PetscScalar *a, *b;
  PetscInt           n;
  PetscBool          mine;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &a));
  PetscCall(VecGetArrayRead(first, &b));
  mine = (PetscBool)(!n || !memcmp(a, b, (size_t)n * sizeof(PetscScalar)));
  PetscCall(VecRestoreArrayRead(y, &a));
  PetscCall(VecRestoreArrayRead(first, &b));
  {
      int m_ = mine, a_;
      PetscCallMPI(MPI_Allreduce(&m_, &a_, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
      *same = a_ ? PETSC_TRUE : PETSC_FALSE;
    }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A;
  Vec         x, y, z, first, xt, yt, zt;
  PetscInt    n = 20000, count = 0;
  char        type[64] = "ellrt";
  const char *names[]  = {"MatMult", "MatMultAdd", "MatMultTranspose", "MatMultTransposeAdd"};

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(Build(type, n, &A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(MatCreateVecs(A, &yt, &xt));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(xt, &zt));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecSetRandom(z, NULL));
  PetscCall(VecSetRandom(xt, NULL));
  PetscCall(VecSetRandom(zt, NULL));
  for (int op = 0; op < 4; op++) {
    const PetscBool tr = (PetscBool)(op >= 2);
    Vec             out = tr ? yt : y;
    PetscBool       all = PETSC_TRUE, same;
    PetscInt        differ = 0;
    PetscCall(VecDuplicate(out, &first));
    for (int r = 0; r < 20; r++) {
      PetscCall(VecSet(out, -1.0));
      switch (op) {
      case 0: PetscCall(MatMult(A, x, y)); break;
      case 1: PetscCall(MatMultAdd(A, x, z, y)); break;
      case 2: PetscCall(MatMultTranspose(A, xt, yt)); break;
      default: PetscCall(MatMultTransposeAdd(A, xt, zt, yt)); break;
      }
      if (!r) PetscCall(VecCopy(out, first));
      else {
        PetscCall(SameBits(out, first, &same));
        if (!same) {
          all = PETSC_FALSE;
          differ++;
        }
      }
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: 20 products of the same x, %s\n", all ? "ok  " : "FAIL", names[op], all ? "the same bits every time" : "bits differ"));
    if (!all) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "     %" PetscInt_FMT " of 19 repeats differ from the first\n", differ));
    PetscCall(VecDestroy(&first));
  }
  PetscCall(MatELLRGetProductCount(A, &count));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s products on the plugin's storage: %s\n", count >= 80 ? "ok  " : "FAIL", count >= 80 ? "all 80" : "fewer than 80 (AIJ's products ran: use -mat_ellr_backend cpu or cuda)"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&zt));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
