static char help[] = "Regression: products of an ELLR matrix against MATAIJ after PETSc operations that change it.\n\
  -type ellrt|pellr  -n grid side  -ops a,b,...\n";
/* Run by run.sh (ops_sweep_npN): each op is applied to A (-type, here with -mat_ellr_backend cpu)
   and to B (MATAIJ); then y = A x, A^T x, A x + z, A^T x + z are compared.  Prints one line per op. */
#include <petscellr.h>
#include <petscdmda.h>

static PetscInt g_fail = 0;

static PetscErrorCode Fill(Vec v, PetscReal salt)
{
  PetscInt     lo, hi;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = lo; i < hi; i++) a[i - lo] = PetscSinReal(salt * (i + 1)) + 0.1 * (i % 7);
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode Count(Mat A, PetscInt *c)
{
  PetscFunctionBeginUser;
  PetscCall(MatELLRGetProductCount(A, c)); /* 0 on a matrix without the format */
  PetscFunctionReturn(0);
}

/* Does the matrix an op leaves keep the format? Yes for every op on A itself (and its duplicates, a conversion back
   to the type, MatLoad and DMCreateMatrix with the type); the derived matrices of PETSc's choice (transposes,
   submatrices, P^T A P, conversions to other types) are the base type's. */
static PetscBool KeepsFormat(const char *op)
{
  const char *derived[] = {"MatTranspose(MAT_INITIAL", "MatTranspose(MAT_REUSE", "MatCreateSubMatrix", "MatPtAP", "MatConvert("};
  PetscBool   pre;
  if (strncmp(op, "MatConvert(sell -> type", 23) == 0) return PETSC_TRUE;
  for (size_t k = 0; k < sizeof(derived) / sizeof(derived[0]); k++) {
    pre = (PetscBool)(strncmp(op, derived[k], strlen(derived[k])) == 0);
    if (pre) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

static PetscErrorCode Compare(const char *op, Mat A0, Mat B)
{
  Vec       x, y1, y2, xt, yt1, yt2, z, zt;
  PetscReal e[4], n;
  PetscInt  c0, c1;
  MatType   ta, fa;
  Mat       A = A0, Ah = NULL;
  PetscBool cusp;

  PetscFunctionBeginUser;
  /* an aijcusparse matrix without the format (MatPtAP's result) multiplies with aijcusparse's own products, which take
     CUDA vectors only: its values are checked through a MATAIJ copy with the host vectors used here (the library's
     products take host vectors too) */
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A0, &cusp, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  PetscCall(MatELLRGetFormat(A0, &fa));
  if (cusp && !fa) PetscCall(MatConvert(A0, MATAIJ, MAT_INITIAL_MATRIX, &Ah));
  if (Ah) A = Ah;
  PetscCall(Count(A, &c0));
  PetscCall(MatCreateVecs(B, &x, &y1));
  PetscCall(VecDuplicate(y1, &y2));
  PetscCall(VecDuplicate(y1, &z));
  PetscCall(VecDuplicate(x, &xt));
  PetscCall(VecDuplicate(x, &yt1));
  PetscCall(VecDuplicate(x, &yt2));
  PetscCall(VecDuplicate(x, &zt));
  PetscCall(Fill(x, 0.37));
  PetscCall(Fill(xt, 0.91));
  PetscCall(Fill(z, 1.3));
  PetscCall(Fill(zt, 0.7));
  PetscCall(Fill(xt, 0.91));
  PetscCall(VecCopy(z, xt)); /* xt must live in the row space: rebuild below */
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDuplicate(y1, &xt));
  PetscCall(Fill(xt, 0.91));
  PetscCall(MatMult(A, x, y1));
  PetscCall(MatMult(B, x, y2));
  PetscCall(VecAXPY(y1, -1, y2));
  PetscCall(VecNorm(y1, NORM_2, &e[0]));
  PetscCall(VecNorm(y2, NORM_2, &n));
  e[0] /= (n > 0 ? n : 1);
  PetscCall(MatMultTranspose(A, xt, yt1));
  PetscCall(MatMultTranspose(B, xt, yt2));
  PetscCall(VecAXPY(yt1, -1, yt2));
  PetscCall(VecNorm(yt1, NORM_2, &e[1]));
  PetscCall(VecNorm(yt2, NORM_2, &n));
  e[1] /= (n > 0 ? n : 1);
  PetscCall(MatMultAdd(A, x, z, y1));
  PetscCall(MatMultAdd(B, x, z, y2));
  PetscCall(VecAXPY(y1, -1, y2));
  PetscCall(VecNorm(y1, NORM_2, &e[2]));
  PetscCall(VecNorm(y2, NORM_2, &n));
  e[2] /= (n > 0 ? n : 1);
  PetscCall(MatMultTransposeAdd(A, xt, zt, yt1));
  PetscCall(MatMultTransposeAdd(B, xt, zt, yt2));
  PetscCall(VecAXPY(yt1, -1, yt2));
  PetscCall(VecNorm(yt1, NORM_2, &e[3]));
  PetscCall(VecNorm(yt2, NORM_2, &n));
  e[3] /= (n > 0 ? n : 1);
  PetscCall(Count(A, &c1));
  PetscCall(MatGetType(A0, &ta));
  PetscCall(MatELLRGetFormat(A, &fa));
  {
    /* where the format must be kept: A carries it and, unless its backend is the base type's own, the four products
       ran on the storage */
    const PetscBool keep = KeepsFormat(op);
    MatELLRBackend  be   = MAT_ELLR_BACKEND_AIJ;
    PetscBool       bad  = (PetscBool)(e[0] > 1e-12 || e[1] > 1e-12 || e[2] > 1e-12 || e[3] > 1e-12);
    if (fa) PetscCall(MatELLRGetBackend(A, &be));
    if (keep && !fa) bad = PETSC_TRUE;
    if (fa && be != MAT_ELLR_BACKEND_AIJ && c1 < c0 + 4) bad = PETSC_TRUE;
    if (bad) g_fail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s %-44s type %-12s format %-5s errors %.1e %.1e %.1e %.1e  storage products %s\n", bad ? "FAIL" : "ok", op, ta, fa ? fa : "none", (double)e[0], (double)e[1], (double)e[2], (double)e[3], !fa || be == MAT_ELLR_BACKEND_AIJ ? "n/a" : (c1 >= c0 + 4 ? "yes" : "NO")));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y1));
  PetscCall(VecDestroy(&y2));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt1));
  PetscCall(VecDestroy(&yt2));
  PetscCall(VecDestroy(&zt));
  PetscCall(MatDestroy(&Ah));
  PetscFunctionReturn(0);
}

/* n x n grid, 5-point stencil, plus a nonsymmetric entry per row (col i+n+1) */
static PetscErrorCode Build(MatType type, const char *prefix, PetscInt n, Mat *A)
{
  PetscInt N = n * n, lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  if (prefix) PetscCall(MatSetOptionsPrefix(*A, prefix));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 6, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 6, NULL, 6, NULL));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscInt    r = i / n, c = i % n, cols[6], k = 0;
    PetscScalar v[6];
    cols[k] = i;
    v[k++]  = 4.0 + 0.01 * i;
    if (c > 0) { cols[k] = i - 1; v[k++] = -1.0 - 0.001 * i; }
    if (c < n - 1) { cols[k] = i + 1; v[k++] = -1.0 + 0.002 * i; }
    if (r > 0) { cols[k] = i - n; v[k++] = -1.1; }
    if (r < n - 1) { cols[k] = i + n; v[k++] = -0.9; }
    if (i + n + 1 < N) { cols[k] = i + n + 1; v[k++] = 0.05 * (i % 5 + 1); }
    PetscCall(MatSetValues(*A, 1, &i, k, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscBool Want(const char *name, char **ops, PetscInt nops)
{
  PetscBool eq;
  if (!nops) return PETSC_TRUE;
  for (PetscInt k = 0; k < nops; k++) {
    PetscStrcmp(name, ops[k], &eq);
    if (eq) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

int main(int argc, char **argv)
{
  char        type[64] = "ellrt", *ops[64];
  PetscInt    n = 8, nops = 64;
  PetscBool   has;
  PetscMPIInt size, rank;
  Mat         A, B;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-ops", ops, &nops, &has));
  if (!has) nops = 0;

#define START(name) \
  if (Want(name, ops, nops)) { \
    const char *opname = name; \
    PetscCall(Build(type, NULL, n, &A)); \
    PetscCall(Build(MATAIJ, NULL, n, &B)); \
    PetscCall(Compare("(assembled)", A, B));
#define END \
    (void)opname; \
    PetscCall(MatDestroy(&A)); \
    PetscCall(MatDestroy(&B)); \
  }

  START("zerorowscolumns")
  {
    PetscInt rows[3] = {1, n * n / 2, n * n - 2}, nr = rank == 0 ? 3 : 0;
    PetscCall(MatZeroRowsColumns(A, nr, rows, 2.0, NULL, NULL));
    PetscCall(MatZeroRowsColumns(B, nr, rows, 2.0, NULL, NULL));
    PetscCall(Compare(opname, A, B));
  }
  END

  START("diagonalset")
  {
    Vec d;
    PetscCall(MatCreateVecs(B, &d, NULL));
    PetscCall(Fill(d, 0.3));
    PetscCall(MatDiagonalSet(A, d, INSERT_VALUES));
    PetscCall(MatDiagonalSet(B, d, INSERT_VALUES));
    PetscCall(Compare("MatDiagonalSet INSERT", A, B));
    PetscCall(MatDiagonalSet(A, d, ADD_VALUES));
    PetscCall(MatDiagonalSet(B, d, ADD_VALUES));
    PetscCall(Compare("MatDiagonalSet ADD", A, B));
    PetscCall(VecDestroy(&d));
  }
  END

  START("chop")
  {
#if PETSC_VERSION_LT(3, 20, 0)
    PetscCall(MatChop(A, 0.2));
    PetscCall(MatChop(B, 0.2));
#else
    PetscCall(MatFilter(A, 0.2, PETSC_FALSE, PETSC_FALSE));
    PetscCall(MatFilter(B, 0.2, PETSC_FALSE, PETSC_FALSE));
#endif
    PetscCall(Compare(opname, A, B));
  }
  END

  START("newnonzerolocations")
  {
    PetscInt    lo, hi;
    PetscScalar v = 3.0;
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
    PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
    PetscCall(MatGetOwnershipRange(B, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      PetscInt j = (i + 3 * n) % (n * n); /* mostly new locations: ignored */
      PetscCall(MatSetValues(A, 1, &i, 1, &j, &v, ADD_VALUES));
      PetscCall(MatSetValues(B, 1, &i, 1, &j, &v, ADD_VALUES));
      PetscCall(MatSetValues(A, 1, &i, 1, &i, &v, ADD_VALUES));
      PetscCall(MatSetValues(B, 1, &i, 1, &i, &v, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(Compare(opname, A, B));
  }
  END

  START("invertblockdiag")
  {
    const PetscScalar *v;
    PetscCall(MatSetBlockSize(A, 1));
    PetscCall(MatInvertBlockDiagonal(A, &v));
    PetscCall(Compare("MatInvertBlockDiagonal", A, B));
#if PETSC_VERSION_LT(3, 25, 0) /* (no longer public in 3.26) */
    if (size == 1) {
      PetscBool missing;
      PetscCall(MatMissingDiagonal(A, &missing, NULL));
      PetscCall(Compare("MatMissingDiagonal", A, B));
    }
#endif
  }
  END

  START("axpydiff")
  {
    Mat X;
    PetscInt lo, hi;
    PetscCall(MatCreate(PETSC_COMM_WORLD, &X));
    PetscCall(MatSetSizes(X, PETSC_DECIDE, PETSC_DECIDE, n * n, n * n));
    PetscCall(MatSetType(X, MATAIJ));
    PetscCall(MatSetUp(X));
    PetscCall(MatGetOwnershipRange(X, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      PetscInt j = (i * 7 + 3) % (n * n);
      PetscCall(MatSetValue(X, i, j, 1.5, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAXPY(A, 2.0, X, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatAXPY(B, 2.0, X, DIFFERENT_NONZERO_PATTERN));
    PetscCall(Compare("MatAXPY(DIFFERENT_NONZERO_PATTERN)", A, B));
    PetscCall(MatScale(A, 0.5));
    PetscCall(MatScale(B, 0.5));
    PetscCall(Compare("... then MatScale", A, B));
    {
      Mat D, E;
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
      PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &E));
      PetscCall(Compare("... then MatDuplicate", D, E));
      PetscCall(MatDestroy(&D));
      PetscCall(MatDestroy(&E));
    }
    PetscCall(MatDestroy(&X));
  }
  END

  START("transposeinplace")
  {
    PetscCall(MatTranspose(A, MAT_INPLACE_MATRIX, &A));
    PetscCall(MatTranspose(B, MAT_INPLACE_MATRIX, &B));
    PetscCall(Compare("MatTranspose(MAT_INPLACE_MATRIX)", A, B));
    PetscCall(MatScale(A, 0.5));
    PetscCall(MatScale(B, 0.5));
    PetscCall(Compare("... then MatScale", A, B));
  }
  END

  START("transposereuse")
  {
    Mat At, Bt;
    PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
    PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &Bt));
    PetscCall(Compare("MatTranspose(MAT_INITIAL_MATRIX)", At, Bt));
    PetscCall(MatScale(A, 3.0));
    PetscCall(MatScale(B, 3.0));
    PetscCall(MatTranspose(A, MAT_REUSE_MATRIX, &At));
    PetscCall(MatTranspose(B, MAT_REUSE_MATRIX, &Bt));
    PetscCall(Compare("MatTranspose(MAT_REUSE_MATRIX)", At, Bt));
    PetscCall(MatDestroy(&At));
    PetscCall(MatDestroy(&Bt));
  }
  END

  START("submatreuse")
  {
    Mat      As, Bs;
    IS       is;
    PetscInt lo, hi;
    PetscCall(MatGetOwnershipRange(B, &lo, &hi));
    PetscCall(ISCreateStride(PETSC_COMM_WORLD, hi - lo - 1, lo, 1, &is));
    PetscCall(MatCreateSubMatrix(A, is, is, MAT_INITIAL_MATRIX, &As));
    PetscCall(MatCreateSubMatrix(B, is, is, MAT_INITIAL_MATRIX, &Bs));
    PetscCall(Compare("MatCreateSubMatrix(MAT_INITIAL_MATRIX)", As, Bs));
    PetscCall(MatScale(A, 3.0));
    PetscCall(MatScale(B, 3.0));
    PetscCall(MatCreateSubMatrix(A, is, is, MAT_REUSE_MATRIX, &As));
    PetscCall(MatCreateSubMatrix(B, is, is, MAT_REUSE_MATRIX, &Bs));
    PetscCall(Compare("MatCreateSubMatrix(MAT_REUSE_MATRIX)", As, Bs));
    PetscCall(ISDestroy(&is));
    PetscCall(MatDestroy(&As));
    PetscCall(MatDestroy(&Bs));
  }
  END

  START("ptap")
  {
    Mat      P, PA, CA, CB;
    PetscInt lo, hi, nc = n * n / 2;
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n * n, nc, 2, NULL, 2, NULL, &P));
    PetscCall(MatGetOwnershipRange(P, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      PetscCall(MatSetValue(P, i, (i / 2) % nc, 1.0, INSERT_VALUES));
      PetscCall(MatSetValue(P, i, (i / 2 + 1) % nc, 0.5, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
    {
      /* on the aijcusparse base an MPI matrix multiplies with aijcusparse matrices on the GPU (a host MPIAIJ P is an
         error that says so): P goes to the GPU there */
      VecType   vt;
      PetscBool cuda, mpi;
      PetscCall(MatGetVecType(A, &vt));
      PetscCall(PetscStrbeginswith(vt, "cuda", &cuda));
      if (!cuda) PetscCall(PetscStrcmp(vt, VECSEQCUDA, &cuda));
      PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJCUSPARSE, &mpi));
      PA = P;
      PetscCall(PetscObjectReference((PetscObject)P));
      if (cuda && mpi) {
        PetscCall(MatDestroy(&PA));
        PetscCall(MatConvert(P, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &PA));
      }
    }
    PetscCall(MatPtAP(A, PA, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &CA));
    PetscCall(MatPtAP(B, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &CB));
    PetscCall(Compare("MatPtAP(MAT_INITIAL_MATRIX)", CA, CB));
    PetscCall(MatScale(A, 3.0));
    PetscCall(MatScale(B, 3.0));
    PetscCall(MatPtAP(A, PA, MAT_REUSE_MATRIX, PETSC_DEFAULT, &CA));
    PetscCall(MatPtAP(B, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &CB));
    PetscCall(Compare("MatPtAP(MAT_REUSE_MATRIX)", CA, CB));
    PetscCall(MatDestroy(&CA));
    PetscCall(MatDestroy(&CB));
    PetscCall(MatDestroy(&PA));
    PetscCall(MatDestroy(&P));
  }
  END

  START("convert")
  {
    const char *tt[] = {MATSELL, MATDENSE, MATAIJPERM, MATAIJSELL, MATBAIJ};
    for (int k = 0; k < 5; k++) {
      Mat  CA, CB;
      char name[80];
      PetscCall(MatConvert(A, tt[k], MAT_INITIAL_MATRIX, &CA));
      PetscCall(MatConvert(B, tt[k], MAT_INITIAL_MATRIX, &CB));
      PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert(%s, INITIAL)", tt[k]));
      PetscCall(Compare(name, CA, CB));
      PetscCall(MatDestroy(&CA));
      PetscCall(MatDestroy(&CB));
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &CA));
      PetscCall(MatConvert(CA, tt[k], MAT_INPLACE_MATRIX, &CA));
      PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert(%s, INPLACE)", tt[k]));
      PetscCall(Compare(name, CA, B));
      PetscCall(MatDestroy(&CA));
    }
    if (size == 1) { /* PETSc 3.18's MatConvert_Basic from MPISELL in place crashes for any target (aijperm too) */
      Mat CA;
      PetscCall(MatConvert(B, MATSELL, MAT_INITIAL_MATRIX, &CA));
      PetscCall(MatConvert(CA, type, MAT_INPLACE_MATRIX, &CA));
      PetscCall(Compare("MatConvert(sell -> type, INPLACE)", CA, B));
      PetscCall(MatDestroy(&CA));
    }
  }
  END

  START("load")
  {
    PetscViewer v;
    Mat         L;
    char        bin[PETSC_MAX_PATH_LEN] = "ops_sweep.bin"; /* -binfile: where the MatLoad test writes */
    PetscCall(PetscOptionsGetString(NULL, NULL, "-binfile", bin, sizeof(bin), NULL));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, bin, FILE_MODE_WRITE, &v));
    PetscCall(MatView(B, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &L));
    PetscCall(MatSetType(L, type));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, bin, FILE_MODE_READ, &v));
    PetscCall(MatLoad(L, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(Compare("MatLoad", L, B));
    PetscCall(MatScale(L, 2.0));
    PetscCall(MatScale(B, 2.0));
    PetscCall(Compare("MatLoad then MatScale", L, B));
    PetscCall(MatDestroy(&L));
  }
  END

  START("localmat")
  {
    if (size > 1) {
      Mat LA, LB;
      PetscCall(MatMPIAIJGetLocalMat(A, MAT_INITIAL_MATRIX, &LA));
      PetscCall(MatMPIAIJGetLocalMat(B, MAT_INITIAL_MATRIX, &LB));
      PetscCall(MatDestroy(&LA));
      PetscCall(MatDestroy(&LB));
    }
    {
      Mat RA, RB;
      PetscCall(MatCreateRedundantMatrix(A, size, MPI_COMM_NULL, MAT_INITIAL_MATRIX, &RA));
      PetscCall(MatCreateRedundantMatrix(B, size, MPI_COMM_NULL, MAT_INITIAL_MATRIX, &RB));
      {
        /* on several processes PETSc gives each one a plain aijcusparse copy (no format), whose own products take CUDA
           vectors only: it is checked through a MATAIJ copy with the host vectors used here, as Compare does */
        PetscBool cusp;
        MatType   fa;
        PetscCall(PetscObjectTypeCompareAny((PetscObject)RA, &cusp, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
        PetscCall(MatELLRGetFormat(RA, &fa));
        if (cusp && !fa) PetscCall(MatConvert(RA, MATAIJ, MAT_INPLACE_MATRIX, &RA));
      }
      {
        Vec       x, y1, y2;
        PetscReal e;
        PetscCall(MatCreateVecs(RB, &x, &y1));
        PetscCall(VecDuplicate(y1, &y2));
        PetscCall(Fill(x, 0.4));
        PetscCall(MatMult(RA, x, y1));
        PetscCall(MatMult(RB, x, y2));
        PetscCall(VecAXPY(y1, -1, y2));
        PetscCall(VecNorm(y1, NORM_2, &e));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s MatCreateRedundantMatrix error %.1e\n", e > 1e-12 ? "FAIL" : "ok", (double)e));
        PetscCall(VecDestroy(&x));
        PetscCall(VecDestroy(&y1));
        PetscCall(VecDestroy(&y2));
      }
      PetscCall(MatDestroy(&RA));
      PetscCall(MatDestroy(&RB));
    }
  }
  END

  if (Want("dm", ops, nops)) {
    DM          da;
    Mat         DA, DB;
    MatStencil  row, col[5];
    PetscScalar v[5];
    PetscInt    xs, ys, xm, ym;
    PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
    PetscCall(PetscOptionsSetValue(NULL, "-dm_mat_type", type)); /* as a user's -dm_mat_type would */
    PetscCall(DMSetFromOptions(da));
    PetscCall(PetscOptionsClearValue(NULL, "-dm_mat_type"));
    PetscCall(DMSetUp(da));
    PetscCall(DMCreateMatrix(da, &DA));
    PetscCall(DMSetMatType(da, MATAIJ));
    PetscCall(DMCreateMatrix(da, &DB));
    PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) {
        PetscInt k = 0;
        row.i = i; row.j = j;
        col[k].i = i; col[k].j = j; v[k++] = 4.0 + 0.1 * i;
        if (i > 0) { col[k].i = i - 1; col[k].j = j; v[k++] = -1.0 - 0.01 * j; }
        if (i < n - 1) { col[k].i = i + 1; col[k].j = j; v[k++] = -1.0; }
        if (j > 0) { col[k].i = i; col[k].j = j - 1; v[k++] = -1.2; }
        if (j < n - 1) { col[k].i = i; col[k].j = j + 1; v[k++] = -0.8; }
        PetscCall(MatSetValuesStencil(DA, 1, &row, k, col, v, INSERT_VALUES));
        PetscCall(MatSetValuesStencil(DB, 1, &row, k, col, v, INSERT_VALUES));
      }
    PetscCall(MatAssemblyBegin(DA, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(DA, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(DB, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(DB, MAT_FINAL_ASSEMBLY));
    PetscCall(Compare("DMCreateMatrix(-dm_mat_type)", DA, DB));
    PetscCall(MatDestroy(&DA));
    PetscCall(MatDestroy(&DB));
    PetscCall(DMDestroy(&da));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " failed\n", g_fail));
  PetscCall(PetscFinalize());
  return 0;
}
