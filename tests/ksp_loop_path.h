/*
  ksp_loop_path.h - for the tests of the library's Krylov loops (cg_device.c, bcgs_device.c): which loop a solve ran,
  read from the "iterations run by: ..." line the loop's KSPView prints (through an ASCII file: a string viewer is
  sequential only).
*/
#include <petscksp.h>
#include <unistd.h>

static PetscErrorCode KSPLoopPath(KSP ksp, char path[256])
{
  PetscViewer v;
  char        fname[PETSC_MAX_PATH_LEN], line[1024];
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  path[0] = 0;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscSNPrintf(fname, sizeof(fname), "ksp_loop_view_%d.txt", (int)getpid()));
  PetscCallMPI(MPI_Bcast(fname, (int)sizeof(fname), MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, fname, &v));
  PetscCall(KSPView(ksp, v));
  PetscCall(PetscViewerDestroy(&v));
  if (!rank) {
    FILE *f = fopen(fname, "r");
    while (f && fgets(line, sizeof(line), f)) {
      char *at = strstr(line, "iterations run by: ");
      if (at) {
        PetscCall(PetscStrncpy(path, at + 19, 256));
        if ((at = strchr(path, ';'))) *at = 0;
      }
    }
    if (f) fclose(f);
    remove(fname);
  }
  PetscCallMPI(MPI_Bcast(path, 256, MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscFunctionReturn(0); /* 0: PETSc 3.18 has no PETSC_SUCCESS */
}
