/* tests/pkgconfig/prog.c - a program built against an installed petsc-ellr with nothing but
     $(pkg-config --variable=ccompiler petscellr) prog.c $(pkg-config --cflags --libs petscellr)
   (test install_pkgconfig in tests/run.sh).  It links -lpetscellr, registers the types itself, makes the
   1D Laplacian tridiag(-1, 2, -1) of size n as MATELLR and multiplies it with x_i = i + 1: A x is zero
   but for its last entry, n + 1. */
#include <petscellr.h>

int main(int argc, char **argv)
{
  Mat         A;
  Vec         x, y;
  PetscInt    n = 10, i, rstart, rend, products = 0;
  PetscScalar sum;
  MatType     type, format;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(A, MATELLR));
  PetscCall(MatSeqAIJSetPreallocation(A, 3, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 3, NULL, 1, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; i++) {
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &y));
  for (i = rstart; i < rend; i++) PetscCall(VecSetValue(x, i, (PetscScalar)(i + 1), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(MatMult(A, x, y));
  PetscCall(VecSum(y, &sum));
  PetscCall(MatGetType(A, &type));
  PetscCall(MatELLRGetFormat(A, &format));
  PetscCall(MatELLRGetProductCount(A, &products));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pkgconfig prog: type %s, format %s, n %" PetscInt_FMT ", sum(A*x) = %g, ELLR products %" PetscInt_FMT ", index size %d bytes\n", type, format ? format : "none", n, (double)PetscRealPart(sum), products, (int)sizeof(PetscInt)));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
