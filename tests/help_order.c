static char help[] = "Regression: -help after MatSetType() then MatSetFromOptions() (the usual order). -type T -prefix P\n";
#include <petscellr.h>

int main(int argc, char **argv)
{
  Mat       A;
  char      type[64] = "ellrt", prefix[64] = "";
  PetscBool hasp;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-prefix", prefix, sizeof(prefix), &hasp));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  if (hasp) PetscCall(MatSetOptionsPrefix(A, prefix));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 10, 10));
  PetscCall(MatSetType(A, type));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
