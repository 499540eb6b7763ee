static char help[] = "Solves a 3D Poisson problem (7- or 27-point stencil) with a matrix type chosen at run time.\n\
Options:\n\
  -n <32>          grid points per direction (the matrix has n^3 rows)\n\
  -stencil <7>     7 or 27\n\
  -mat_type <aij>  aij, ellrt, pellr, ...\n\
  -timing          print the time a user waits: MatAssemblyEnd, the first MatMult (with the format's\n\
                   set-up), KSPSolve; with -solves 2 a second KSPSolve from zero (nothing one-time in it)\n\
  -symmetric       tell PETSc the matrix is symmetric for good (MAT_SYMMETRIC, MAT_SYMMETRY_ETERNAL): the GPU's\n\
                   MatMultTranspose is then A's own product on one process, with no stored transpose\n\
  -convection <0>  c: adds a centered convection term, neighbour (di, dj, dk) gets -1 + c (di + dj + dk) / 2 (a\n\
                   nonsymmetric operator for nonsymmetric solvers such as -ksp_type bcgs or bcgsdevice; |c| < 2)\n\n";

/*
   ex1 - 3D Poisson with the petsc-ellr matrix types

   What it shows:
     - assembling a distributed sparse matrix with MatSetValues after exact preallocation
       (MatXAIJSetPreallocation), with the type taken from the options database
       (MatSetFromOptions), so the same code runs with -mat_type aij, ellrt or pellr;
     - a right-hand side made from a known solution, so that the error can be measured;
     - that the petsc-ellr types are used by KSP and every PC exactly as MATAIJ is.

   The operator is the (unscaled) finite-difference Laplacian on the interior points of an
   n x n x n grid with homogeneous Dirichlet boundary: diagonal 6 and -1 for the 6 face
   neighbours (7-point), or diagonal 26 and -1 for all 26 neighbours (27-point).
   The exact solution is u(x,y,z) = sin(pi x) sin(2 pi y) sin(pi z) + x y z at the grid points,
   b = A u, and the program prints the relative error ||x - u|| / ||u|| of the computed x.

   Printed: matrix type (and the petsc-ellr format), size, nonzeros, KSP iterations and converged reason, the true relative
   residual ||b - A x|| / ||b||, the error, and the solve time. With -mat_view ::ascii_info the
   petsc-ellr types print their storage format (threads per row, slice height, fill ratio, bytes,
   warp iterations, backend).

   Example command lines (from the repository root, after `make`):
     build/tutorials/ex1 -mat_type ellrt -n 40 -ksp_type cg -pc_type jacobi -mat_view ::ascii_info
     build/tutorials/ex1 -mat_type pellr -stencil 27 -ksp_type gmres -pc_type ilu
     mpiexec -n 4 build/tutorials/ex1 -mat_type ellrt -ksp_type cg -pc_type bjacobi -log_view
     build/tutorials/ex1 -mat_type ellrt -mat_ellr_threads_per_row 4 -mat_ellr_slice_height 32 -mat_view ::ascii_info
     build/tutorials/ex1 -mat_type aij     (the reference: same iterations, same answers)
*/
#include <petscksp.h>
#include <petscellr.h>

static PetscScalar ExactSolution(PetscInt i, PetscInt j, PetscInt k, PetscInt n)
{
  const PetscReal h = 1.0 / (n + 1), x = (i + 1) * h, y = (j + 1) * h, z = (k + 1) * h;
  return PetscSinReal(PETSC_PI * x) * PetscSinReal(2 * PETSC_PI * y) * PetscSinReal(PETSC_PI * z) + x * y * z;
}

int main(int argc, char **argv)
{
  Mat            A;
  Vec            x, b, u, r;
  KSP            ksp;
  PetscInt       n = 32, stencil = 7, N, rstart, rend, row, its, *dnz, *onz, cstart, cend, solves = 1;
  PetscBool      timing = PETSC_FALSE, symmetric = PETSC_FALSE;
  PetscLogDouble tasm, tmult;
  PetscReal      rnorm, bnorm, enorm, unorm;
  PetscLogDouble t0, t1;
  MatInfo        info;
  MatType        type;
  KSPConvergedReason reason;
  PetscReal          convection = 0.0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "3D Poisson options", "ex1");
  PetscCall(PetscOptionsInt("-n", "grid points per direction", "ex1.c", n, &n, NULL));
  PetscCall(PetscOptionsInt("-stencil", "7 or 27", "ex1.c", stencil, &stencil, NULL));
  PetscCall(PetscOptionsBool("-timing", "print MatAssemblyEnd, first MatMult and KSPSolve times", "ex1.c", timing, &timing, NULL));
  PetscCall(PetscOptionsBool("-symmetric", "tell PETSc the matrix is symmetric for good (MAT_SYMMETRIC, MAT_SYMMETRY_ETERNAL)", "ex1.c", symmetric, &symmetric, NULL));
  PetscCall(PetscOptionsReal("-convection", "centered convection coefficient (0: the symmetric Laplacian)", "ex1.c", convection, &convection, NULL));
  PetscCall(PetscOptionsInt("-solves", "number of KSPSolve calls (from a zero initial guess each)", "ex1.c", solves, &solves, NULL));
  PetscOptionsEnd();
  PetscCheck(n >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT " must be at least 1", n);
  PetscCheck(!symmetric || convection == 0.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-symmetric with -convection %g: the operator is not symmetric", (double)convection);
  PetscCheck(stencil == 7 || stencil == 27, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-stencil %" PetscInt_FMT " must be 7 or 27", stencil);
  N = n * n * n;

  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetFromOptions(A)); /* -mat_type (default aij) and, with -help, the type's options */
  PetscCall(MatSetUp(A)); /* fixes the layout; the preallocation below replaces MatSetUp's default one */
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(A, &cstart, &cend));

  /* Exact preallocation: count the neighbours of each local row inside / outside the diagonal block. */
  PetscCall(PetscCalloc2(rend - rstart, &dnz, rend - rstart, &onz));
  for (row = rstart; row < rend; row++) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n);
    for (PetscInt dk = -1; dk <= 1; dk++)
      for (PetscInt dj = -1; dj <= 1; dj++)
        for (PetscInt di = -1; di <= 1; di++) {
          const PetscInt nb = PetscAbsInt(di) + PetscAbsInt(dj) + PetscAbsInt(dk);
          if (stencil == 7 && nb > 1) continue;
          if (i + di < 0 || i + di >= n || j + dj < 0 || j + dj >= n || k + dk < 0 || k + dk >= n) continue;
          const PetscInt col = (i + di) + n * ((j + dj) + n * (k + dk));
          if (col >= cstart && col < cend) dnz[row - rstart]++;
          else onz[row - rstart]++;
        }
  }
  PetscCall(MatXAIJSetPreallocation(A, 1, dnz, onz, NULL, NULL));
  /* MatXAIJSetPreallocation() does not reach SELL (-mat_type sell, sellcuda, used for comparisons) */
  PetscCall(MatSeqSELLSetPreallocation(A, 0, dnz));
  PetscCall(MatMPISELLSetPreallocation(A, 0, dnz, 0, onz));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));

  for (row = rstart; row < rend; row++) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n);
    PetscInt       cols[27], nc = 0;
    PetscScalar    vals[27];
    for (PetscInt dk = -1; dk <= 1; dk++)
      for (PetscInt dj = -1; dj <= 1; dj++)
        for (PetscInt di = -1; di <= 1; di++) {
          const PetscInt nb = PetscAbsInt(di) + PetscAbsInt(dj) + PetscAbsInt(dk);
          if (stencil == 7 && nb > 1) continue;
          if (i + di < 0 || i + di >= n || j + dj < 0 || j + dj >= n || k + dk < 0 || k + dk >= n) continue;
          cols[nc]   = (i + di) + n * ((j + dj) + n * (k + dk));
          vals[nc++] = nb == 0 ? (stencil == 7 ? 6.0 : 26.0) : -1.0 + 0.5 * convection * (di + dj + dk);
        }
    PetscCall(MatSetValues(A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscBarrier((PetscObject)A));
  PetscCall(PetscTime(&t0));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscBarrier((PetscObject)A));
  PetscCall(PetscTime(&t1));
  tasm = t1 - t0;
  if (symmetric) {
    PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));
    PetscCall(MatSetOption(A, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
  }

  /* Known solution u, right-hand side b = A u. */
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &u));
  PetscCall(VecDuplicate(b, &r));
  for (row = rstart; row < rend; row++) {
    const PetscScalar v = ExactSolution(row % n, (row / n) % n, row / (n * n), n);
    PetscCall(VecSetValue(u, row, v, INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(u));
  PetscCall(VecAssemblyEnd(u));
  PetscCall(PetscBarrier((PetscObject)A));
  PetscCall(PetscTime(&t0));
  PetscCall(MatMult(A, u, b));
  PetscCall(VecNorm(b, NORM_2, &bnorm)); /* waits for the product */
  PetscCall(PetscTime(&t1));
  tmult = t1 - t0;

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PetscBarrier((PetscObject)A));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t1));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  if (timing) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Timing: MatAssemblyEnd %.6f s, first MatMult %.6f s, KSPSolve %.6f s (%" PetscInt_FMT " iterations), time to solution %.6f s\n", (double)tasm, (double)tmult, (double)(t1 - t0), its, (double)(tasm + tmult + t1 - t0)));
  for (PetscInt k = 1; k < solves; k++) {
    PetscInt itsk;
    PetscCall(VecSet(x, 0.0));
    PetscCall(PetscBarrier((PetscObject)A));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(PetscTime(&t1));
    PetscCall(KSPGetIterationNumber(ksp, &itsk));
    if (timing) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Timing: KSPSolve %" PetscInt_FMT " %.6f s (%" PetscInt_FMT " iterations), %.4f ms per iteration\n", k + 1, (double)(t1 - t0), itsk, itsk ? 1e3 * (double)(t1 - t0) / itsk : 0.0));
  }

  /* True residual and error. */
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(VecAXPY(x, -1.0, u));
  PetscCall(VecNorm(x, NORM_2, &enorm));
  PetscCall(VecNorm(u, NORM_2, &unorm));

  PetscCall(MatGetType(A, &type));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "3D Poisson, %" PetscInt_FMT "-point stencil, n = %" PetscInt_FMT "\n", stencil, n));
  { /* MatGetType names the base type (seqaij, mpiaij, or their aijcusparse variants); the format is the library's */
    MatType format;
    PetscCall(MatELLRGetFormat(A, &format));
    if (format) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Matrix type: %s (petsc-ellr format %s)\n", type, format));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Matrix type: %s\n", type));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Matrix size: %" PetscInt_FMT " x %" PetscInt_FMT ", nonzeros: %.0f\n", N, N, (double)info.nz_used));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP iterations: %" PetscInt_FMT " (%s)\n", its, KSPConvergedReasons[reason]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Relative residual ||b-Ax||/||b||: %.3e\n", (double)(bnorm > 0 ? rnorm / bnorm : rnorm)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Relative error ||x-u||/||u||: %.3e\n", (double)(unorm > 0 ? enorm / unorm : enorm)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Solve time: %.4f s\n", (double)(t1 - t0)));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
