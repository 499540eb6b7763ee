/*
  far_band.h - for the tests of the NCCL exchange (nccl_connect_fail.c, nccl_park.c): a matrix of the library with
  ghost values from every rank, the same global values whatever the ranks and their order.
*/
#include <petscellr.h>

/* A periodic band of N rows with an entry N/2 away, of type MATELLR (options may change it), assembled on comm. */
static PetscErrorCode MakeFarBand(MPI_Comm comm, PetscInt N, Mat *A)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, MATELLR));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscCall(MatSetValue(*A, i, i, 4.0 + 0.01 * i, INSERT_VALUES));
    PetscCall(MatSetValue(*A, i, (i + 1) % N, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(*A, i, (i + N - 1) % N, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(*A, i, (i + N / 2) % N, 0.5, INSERT_VALUES)); /* ghosts from the far rank too */
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}
