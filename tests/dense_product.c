static char help[] = "C = A B with B dense (MatMatMult, MAT_INITIAL_MATRIX then MAT_REUSE_MATRIX after new values of A) against MATAIJ.\n\
  -type ellrt|pellr   the plugin's type (other -mat_ellr_* options pass through)\n\
  -n N                the 3D Laplacian's grid (N^3 rows; a rectangular matrix with empty rows and 0 x 5 and 5 x 0 matrices\n\
                      are multiplied too)\n\n";
/*
  KSPMatSolve, block Krylov methods and SLEPc multiply a matrix by blocks of vectors: MatMatMult(A, B dense).  A matrix
  with the format (MatELLRGetFormat) answers it with its base type's product (AIJ's, or aijcusparse's); this test
  checks that the format leaves that product intact: against MATAIJ's product for 1, 4, 16 and 37 columns, on a stencil and on a
  rectangular matrix with empty rows, after new values of A (the reused product must see them), and that two products
  give the same bits.  The two results sum each entry in different orders, so they are compared entrywise against the
  rounding bound of a dot product of len terms computed twice: |C - C_aij| <= 2 gamma_len (|A| |B|), gamma_len =
  len u / (1 - len u) (Higham, Accuracy and Stability of Numerical Algorithms, 3.1), len the longest row.
  One "ok" or "FAIL" line per check on rank 0.
*/
#include <petscellr.h>

/* The matrix: kind 0 the 7-point Laplacian of an n^3 grid with values varied per row, kind 1 an m x (m + 7)
   rectangle whose rows m/3 .. m/3 + m/10 are empty, kind 2 no rows (0 x 5), kind 3 no columns (5 x 0); absval: the
   absolute values of the same matrix. */
static const char *const KindNames[] = {"3D Laplacian", "rectangle with empty rows", "0 x 5 matrix", "5 x 0 matrix"};
static PetscErrorCode Build(MatType type, PetscInt kind, PetscInt n, PetscReal scale, PetscBool absval, Mat *A, PetscInt *maxlen)
{
  PetscInt M = kind == 0 ? n * n * n : kind == 1 ? 2 * n * n * n / 3 + 5 : kind == 2 ? 0 : 5, N = kind == 0 ? M : kind == 1 ? M + 7 : kind == 2 ? 5 : 0, lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, M, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 9, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 9, NULL, 9, NULL));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  *maxlen = 0;
  for (PetscInt i = lo; i < hi; i++) {
    PetscInt    cols[9], len = 0;
    PetscScalar v[9];
    if (kind == 0) {
      const PetscInt x = i % n, y = (i / n) % n, z = i / (n * n);
      const PetscInt d[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
      for (PetscInt k = 0; k < 7; k++) {
        const PetscInt xx = x + d[k][0], yy = y + d[k][1], zz = z + d[k][2];
        if (xx < 0 || yy < 0 || zz < 0 || xx >= n || yy >= n || zz >= n) continue;
        cols[len] = xx + n * (yy + n * zz);
        v[len++] = k == 0 ? 6.0 + 0.01 * (PetscReal)(i % 13) : -1.0 - 0.001 * (PetscReal)((i + k) % 7);
      }
    } else if (kind == 1 && !(i >= M / 3 && i < M / 3 + M / 10)) {
      const PetscInt l = 1 + (i * 7) % 9;
      for (PetscInt k = 0; k < l; k++) {
        cols[len] = (i * 31 + k * (N / 9 + 1)) % N;
        v[len++]  = PetscSinReal((PetscReal)(i + 3 * k)) + (k == 0 ? 2.0 : 0.0);
      }
    }
    for (PetscInt k = 0; k < len; k++) v[k] = absval ? PetscAbsScalar(v[k] * scale) : v[k] * scale;
    PetscCall(MatSetValues(*A, 1, &i, len, cols, v, INSERT_VALUES));
    *maxlen = PetscMax(*maxlen, len);
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, maxlen, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* A dense block of k columns for A's columns, values in [-1, 1] (absval: their absolute values), in the dense type of
   A's vectors (MATDENSECUDA with CUDA vectors). */
static PetscErrorCode Block(Mat A, PetscInt k, PetscBool absval, PetscBool device, Mat *B)
{
  PetscInt     n, N, lo, hi, lda;
  PetscScalar *b;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, NULL, &n));
  PetscCall(MatGetSize(A, NULL, &N));
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, n, PETSC_DECIDE, N, k, NULL, B));
  PetscCall(MatGetOwnershipRange(*B, &lo, &hi));
  PetscCall(MatDenseGetLDA(*B, &lda));
  PetscCall(MatDenseGetArray(*B, &b));
  for (PetscInt j = 0; j < k; j++)
    for (PetscInt i = lo; i < hi; i++) {
      const PetscReal v = PetscSinReal(0.37 * (PetscReal)i + 1.3 * (PetscReal)j);
      b[(i - lo) + j * lda] = absval ? PetscAbsReal(v) : v;
    }
  PetscCall(MatDenseRestoreArray(*B, &b));
#if defined(PETSC_HAVE_CUDA)
  if (device) PetscCall(MatConvert(*B, MATDENSECUDA, MAT_INPLACE_MATRIX, B));
#else
  (void)device;
#endif
  PetscFunctionReturn(0);
}

/* max over entries of |C - R| / bound (0/0 = 0; a difference where the bound is 0 is infinite), on host copies. */
static PetscErrorCode BoundRatio(Mat C, Mat R, Mat Bd, PetscReal *ratio)
{
  Mat                Ch, Rh, Bh;
  const PetscScalar *c, *r, *bd;
  PetscInt           m, k, lc, lr, lb;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(C, MATDENSE, MAT_INITIAL_MATRIX, &Ch));
  PetscCall(MatConvert(R, MATDENSE, MAT_INITIAL_MATRIX, &Rh));
  PetscCall(MatConvert(Bd, MATDENSE, MAT_INITIAL_MATRIX, &Bh));
  PetscCall(MatGetLocalSize(Ch, &m, NULL));
  PetscCall(MatGetSize(Ch, NULL, &k));
  PetscCall(MatDenseGetLDA(Ch, &lc));
  PetscCall(MatDenseGetLDA(Rh, &lr));
  PetscCall(MatDenseGetLDA(Bh, &lb));
  PetscCall(MatDenseGetArrayRead(Ch, &c));
  PetscCall(MatDenseGetArrayRead(Rh, &r));
  PetscCall(MatDenseGetArrayRead(Bh, &bd));
  *ratio = 0;
  for (PetscInt j = 0; j < k; j++)
    for (PetscInt i = 0; i < m; i++) {
      const PetscReal d = PetscAbsScalar(c[i + j * lc] - r[i + j * lr]), b = PetscRealPart(bd[i + j * lb]);
      if (d > 0 || d != d) *ratio = PetscMax(*ratio, b > 0 && d == d ? d / b : PETSC_INFINITY);
    }
  PetscCall(MatDenseRestoreArrayRead(Ch, &c));
  PetscCall(MatDenseRestoreArrayRead(Rh, &r));
  PetscCall(MatDenseRestoreArrayRead(Bh, &bd));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, ratio, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&Rh));
  PetscCall(MatDestroy(&Bh));
  PetscFunctionReturn(0);
}

/* Whether C holds D's bits on every rank. */
static PetscErrorCode SameBits(Mat C, Mat D, PetscBool *same)
{
  Mat                Ch, Dh;
  const PetscScalar *c, *d;
  PetscInt           m, k, lc, ld;
  int                mine = 1, all;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(C, MATDENSE, MAT_INITIAL_MATRIX, &Ch));
  PetscCall(MatConvert(D, MATDENSE, MAT_INITIAL_MATRIX, &Dh));
  PetscCall(MatGetLocalSize(Ch, &m, NULL));
  PetscCall(MatGetSize(Ch, NULL, &k));
  PetscCall(MatDenseGetLDA(Ch, &lc));
  PetscCall(MatDenseGetLDA(Dh, &ld));
  PetscCall(MatDenseGetArrayRead(Ch, &c));
  PetscCall(MatDenseGetArrayRead(Dh, &d));
  for (PetscInt j = 0; j < k; j++)
    if (m && memcmp(c + j * lc, d + j * ld, (size_t)m * sizeof(PetscScalar))) mine = 0;
  PetscCall(MatDenseRestoreArrayRead(Ch, &c));
  PetscCall(MatDenseRestoreArrayRead(Dh, &d));
  PetscCallMPI(MPIU_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  *same = all ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&Dh));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char      type[64] = "ellrt";
  PetscInt  n = 12, nfail = 0, nok = 0;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (PetscInt kind = 0; kind < 4; kind++) {
    const PetscInt ks[] = {1, 4, 16, 37};
    for (size_t q = 0; q < sizeof(ks) / sizeof(ks[0]); q++) {
      const PetscInt k = ks[q];
      Mat            A, Aaij, Aabs, B, Bh, Babs, C, C2, R, Bound;
      PetscInt       maxlen;
      MatType        format;
      VecType        vt;
      PetscBool      device = PETSC_FALSE, same = PETSC_FALSE;
      PetscReal      ratio, gamma;

      PetscCall(Build(type, kind, n, 1.0, PETSC_FALSE, &A, &maxlen));
      PetscCall(MatELLRGetFormat(A, &format));
      PetscCheck(format, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-type %s gave a matrix without the format", type);
      PetscCall(MatGetVecType(A, &vt));
      PetscCall(PetscStrbeginswith(vt, VECCUDA, &device));
      if (!device) PetscCall(PetscStrbeginswith(vt, VECSEQCUDA, &device));
      if (!device) PetscCall(PetscStrbeginswith(vt, VECMPICUDA, &device));
      PetscCall(Block(A, k, PETSC_FALSE, device, &B));
      PetscCall(Block(A, k, PETSC_FALSE, PETSC_FALSE, &Bh));
      PetscCall(Block(A, k, PETSC_TRUE, PETSC_FALSE, &Babs));
      gamma = (PetscReal)maxlen * PETSC_MACHINE_EPSILON / (1 - (PetscReal)maxlen * PETSC_MACHINE_EPSILON);
      for (PetscInt pass = 0; pass < 2; pass++) {
        /* pass 1: new values of A (MatCopy of the matrix scaled by -1.75), the product reused */
        const PetscReal scale = pass ? -1.75 : 1.0;
        PetscCall(Build(MATAIJ, kind, n, scale, PETSC_FALSE, &Aaij, &maxlen));
        PetscCall(Build(MATAIJ, kind, n, scale, PETSC_TRUE, &Aabs, &maxlen));
        if (pass) {
          Mat Anew;
          PetscCall(Build(MATAIJ, kind, n, scale, PETSC_FALSE, &Anew, &maxlen));
          PetscCall(MatCopy(Anew, A, SAME_NONZERO_PATTERN));
          PetscCall(MatDestroy(&Anew));
        }
        if (!pass) PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
        else PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
        PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C2));
        PetscCall(MatMatMult(Aaij, Bh, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R));
        PetscCall(MatMatMult(Aabs, Babs, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Bound));
        PetscCall(MatScale(Bound, 2 * gamma));
        PetscCall(BoundRatio(C, R, Bound, &ratio));
        PetscCall(SameBits(C, C2, &same));
        {
          const PetscBool bad = (PetscBool)(!(ratio <= 1) || !same);
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s %s, %" PetscInt_FMT " columns, %s: |C - C_aij| / (2 gamma_%" PetscInt_FMT " |A||B|) <= %.3g, repeated product %s\n", bad ? "FAIL" : "ok", format, KindNames[kind], k,
                                pass ? "new values of A, MAT_REUSE_MATRIX" : "MAT_INITIAL_MATRIX", maxlen, (double)ratio, same ? "bitwise equal" : "DIFFERS"));
          if (bad) nfail++;
          else nok++;
        }
        PetscCall(MatDestroy(&C2));
        PetscCall(MatDestroy(&R));
        PetscCall(MatDestroy(&Bound));
        PetscCall(MatDestroy(&Aaij));
        PetscCall(MatDestroy(&Aabs));
      }
      PetscCall(MatDestroy(&C));
      PetscCall(MatDestroy(&A));
      PetscCall(MatDestroy(&B));
      PetscCall(MatDestroy(&Bh));
      PetscCall(MatDestroy(&Babs));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " checks passed, %" PetscInt_FMT " failed (%d ranks)\n", nok, nfail, (int)size));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
