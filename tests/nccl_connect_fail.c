static char help[] = "NCCL's early connection of the ghost exchange failing on one rank: every rank drops NCCL, no hang, the products right.\n\
  -n N   the matrix has N rows\n\n";
/*
  Run on ranks with a GPU each and NCCL (tests/run.sh's NCCL block).  The engine is told to fail the first early
  connection on the last rank only, before that rank issues its half, so the other ranks' halves wait for it in
  NCCL's background.  A first matrix's product waits for NCCL's set-up (-ellr_nccl_wait); the connection is attempted
  at the first final assembly after it (the second matrix's, or the first's where the set-up was that quick): every
  rank must leave NCCL together (-info: "MPI's exchange from now on"), and the second matrix's products must equal the
  first's (same values; the exchanges move values exactly) with the library's storage counting them.  One line on
  rank 0: "ok ..." or "FAIL ...".
*/
#include "far_band.h"
#include "ellr.h" /* the engine's test hook */

static PetscInt N = 2000;

int main(int argc, char **argv)
{
  Mat         A, B;
  Vec         x, y, z;
  PetscMPIInt rank, size, fired, allfired;
  PetscReal   diff, ny;
  PetscInt    before, after;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &N, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (rank == size - 1) ellr_test_fail_next(ELLR_STAGE_CONNECT); /* the first connection attempted: A's or B's */
  PetscCall(MakeFarBand(PETSC_COMM_WORLD, N, &A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(A, x, y)); /* NCCL ready from here (-ellr_nccl_wait) */
  PetscCall(MakeFarBand(PETSC_COMM_WORLD, N, &B)); /* an assembly after it: the connection, where A's did not attempt it */
  PetscCall(MatELLRGetProductCount(B, &before));
  PetscCall(MatMult(B, x, z));
  PetscCall(MatMult(B, x, z));
  PetscCall(MatELLRGetProductCount(B, &after));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &diff));
  PetscCall(VecNorm(y, NORM_INFINITY, &ny));
  fired = (PetscMPIInt)ellr_test_failures();
  PetscCallMPI(MPIU_Allreduce(&fired, &allfired, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s connection failure on rank %d of %d (fired %d times): products after it differ by %g (of %g), %" PetscInt_FMT " counted by the storage\n", allfired == 1 && diff <= 1e-14 * ny && after > before ? "ok" : "FAIL", size - 1, size, allfired, (double)diff, (double)ny, after - before));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscFinalize());
  return 0;
}
