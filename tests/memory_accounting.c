static char help[] = "The ELLPACK-R storage's host memory is counted by PETSc's malloc accounting (PetscMallocGetCurrentUsage, -malloc_dump).\n"
                     "Run with -malloc_debug and -mat_ellr_backend cpu (the storage then lives on the host).\n"
                     "  -n <N>      grid points per side of the 3D 7-point Laplacian (default 20)\n"
                     "  -type <t>   ellrt or pellr (default ellrt)\n";
#include <petscellr.h>

/* 7-point Laplacian on an N^3 grid, rows distributed by PETSc */
static PetscErrorCode Build(MatType type, PetscInt N, Mat *A)
{
  PetscInt lo, hi, n = N * N * N;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 7, NULL, 6, NULL));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt r = lo; r < hi; r++) {
    const PetscInt i = r % N, j = (r / N) % N, k = r / (N * N);
    const PetscInt nb[6] = {i > 0 ? r - 1 : -1, i < N - 1 ? r + 1 : -1, j > 0 ? r - N : -1, j < N - 1 ? r + N : -1, k > 0 ? r - N * N : -1, k < N - 1 ? r + N * N : -1};
    PetscCall(MatSetValue(*A, r, r, 6.0, INSERT_VALUES));
    for (int q = 0; q < 6; q++)
      if (nb[q] >= 0) PetscCall(MatSetValue(*A, r, nb[q], -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat            A;
  Vec            x, y;
  PetscInt       N = 20;
  char           type[64] = "ellrt";
  PetscBool      tracing;
  MatELLRBackend backend;
  MatInfo        info;
  PetscLogDouble with, without, bound;
  PetscMPIInt    rank;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &N, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscMallocGetDebug(&tracing, NULL, NULL));
  PetscCheck(tracing, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "PetscMallocGetCurrentUsage() counts only with malloc tracing: run with -malloc_debug");

  PetscCall(Build(type, N, &A));
  PetscCall(MatELLRGetBackend(A, &backend));
  PetscCheck(backend == MAT_ELLR_BACKEND_CPU, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "The storage is on the host only with -mat_ellr_backend cpu: run with it");
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  /* the storage is made at the first product: the memory it adds is the storage's */
  PetscCall(PetscMallocGetCurrentUsage(&without));
  PetscCall(MatMult(A, x, y));
  PetscCall(PetscMallocGetCurrentUsage(&with));
  /* at least 8 bytes of value and 2 of column offset per stored nonzero (16-bit offsets are the smallest index the
     storage holds; padding only adds): a storage from malloc leaves this difference near 0 */
  bound = 10.0 * info.nz_used;
  {
    PetscLogDouble dev;

    /* a storage on the host holds nothing on a GPU (MatELLRGetDeviceBytes() counts the GPU storage only) */
    PetscCall(MatELLRGetDeviceBytes(A, &dev));
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "%s: [%d] %s storage of %.0f nonzeros counted by PETSc's malloc: %.0f bytes (at least %.0f); on a GPU: %.0f bytes\n", with - without >= bound && dev == 0 ? "ok" : "FAIL", rank, type, info.nz_used, with - without, bound, dev));
  }
  PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
