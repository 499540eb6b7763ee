static char help[] = "NCCL communicators kept across PETSc communicators: the same ranks in another order make their own, the same ranks in the same order take the parked one; the products right in each.\n\
  -n N   the matrix has N rows\n\n";
/*
  Run on ranks with a GPU each and NCCL (tests/run.sh's NCCL block), with -ellr_nccl_wait -info :sys.  Three passes,
  each making a matrix of the library on a communicator, multiplying with it and destroying every object (PETSc then
  frees its communicator, and the library parks the NCCL communicator it made):
    pass 0  PETSC_COMM_WORLD: a new NCCL communicator;
    pass 1  the same ranks in reverse order (MPI_Comm_split): a new one, since NCCL's ranks would not match;
    pass 2  PETSC_COMM_WORLD again: the one of pass 0, parked.
  Rank 0 prints "pass K" before each pass, then "ok pass K ..." or "FAIL pass K ..." (the product against MATAIJ's on
  the host); tests/run.sh reads which NCCL communicator each pass took from -info.
*/
#include "far_band.h"

static PetscInt N = 3000;

/* x_i from its global index only */
static PetscErrorCode Fill(Vec x)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(x, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(x, i, 1.0 + (PetscScalar)(i % 17) / 16.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscFunctionReturn(0);
}

/* One pass on comm: y = A x with the library against MATAIJ's product on the host. */
static PetscErrorCode Pass(MPI_Comm comm, PetscInt k)
{
  Mat       A, H;
  Vec       x, y, hx, hy;
  PetscReal diff, ny;
  PetscInt  before, after;

  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pass %" PetscInt_FMT "\n", k));
  PetscCall(MakeFarBand(comm, N, &A));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &H));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(MatCreateVecs(H, &hx, &hy));
  PetscCall(Fill(x));
  PetscCall(Fill(hx));
  PetscCall(MatELLRGetProductCount(A, &before));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatELLRGetProductCount(A, &after));
  PetscCall(MatMult(H, hx, hy));
  {
    const PetscScalar *a;
    PetscScalar       *b;
    PetscInt           n;

    PetscCall(VecGetLocalSize(y, &n));
    PetscCall(VecGetArrayRead(y, &a));
    PetscCall(VecGetArray(hx, &b)); /* hx is free now: y's values into it, to compare on the host */
    for (PetscInt i = 0; i < n; i++) b[i] = a[i];
    PetscCall(VecRestoreArray(hx, &b));
    PetscCall(VecRestoreArrayRead(y, &a));
  }
  PetscCall(VecAXPY(hx, -1.0, hy));
  PetscCall(VecNorm(hx, NORM_INFINITY, &diff));
  PetscCall(VecNorm(hy, NORM_INFINITY, &ny));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s pass %" PetscInt_FMT ": the product differs from MATAIJ's by %g (of %g), %" PetscInt_FMT " counted by the storage\n", diff <= 1e-13 * ny && after > before ? "ok" : "FAIL", k, (double)diff, (double)ny, after - before));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&hx));
  PetscCall(VecDestroy(&hy));
  PetscCall(MatDestroy(&H));
  PetscCall(MatDestroy(&A)); /* the last object on comm: PETSc frees its communicator */
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank, size;
  MPI_Comm    reversed;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &N, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(Pass(PETSC_COMM_WORLD, 0));
  PetscCallMPI(MPI_Comm_split(PETSC_COMM_WORLD, 0, size - 1 - rank, &reversed));
  PetscCall(Pass(reversed, 1));
  PetscCallMPI(MPI_Comm_free(&reversed));
  PetscCall(Pass(PETSC_COMM_WORLD, 2));
  PetscCall(PetscFinalize());
  return 0;
}
