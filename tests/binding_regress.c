static char help[] = "Regressions of the binding (a genuine AIJ matrix with the ELLPACK-R products attached), against MATAIJ.\n\
  -test convert_after_product|permute|fieldsplit|convert_away|user_operation|dense_products   which one (default: all)\n\
  -type ellrt|pellr   the format (default ellrt)\n\
  -n N                rows (default 40)\n\n";
/*
  convert_after_product: the type name MatGetType() returned, kept across MatMatMult and MatTranspose of the matrix, then
    given to MatConvert() (MAT_INITIAL_MATRIX, then MAT_INPLACE_MATRIX), as PETSc's own mat tests do: the conversion
    works, the result keeps the format and its products equal MATAIJ's, on the storage.
  permute: MatPermute() (run on 3 processes by run.sh): the permuted matrix's products equal MATAIJ's permuted one, and
    the original's still run on its storage.
  fieldsplit: a matrix of the type set up with MatSetUp() (no preallocation), then PCFIELDSPLIT over two interleaved
    fields: MATAIJ's iteration count and solution, the operator's products on the storage.
  dense_products: MatMatMult(D, A) and MatMatMult(A, B) with D, B dense (MPIDENSE x the type's MPI base on 2 processes,
    as PETSc's mat tests ex70 multiplies): each equal to the same product with MATAIJ, initial and reused after new
    values of A; A keeps the format and its own products still run on the storage afterwards.
  One "ok" or "FAIL" line per check on rank 0.
*/
#include <petscksp.h>
#include <petscellr.h>

#if PETSC_VERSION_LT(3, 19, 0) /* PETSc 3.19 named the success code */
  #define PETSC_SUCCESS 0
#endif

static PetscInt g_fail = 0;

/* tridiagonal plus a far coupling, values varying per row */
static PetscErrorCode Build(MatType type, PetscInt n, PetscBool setup, Mat *A)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  if (setup) PetscCall(MatSetUp(*A));
  else {
    PetscCall(MatSeqAIJSetPreallocation(*A, 4, NULL));
    PetscCall(MatMPIAIJSetPreallocation(*A, 4, NULL, 4, NULL));
  }
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscCall(MatSetValue(*A, i, i, 4.0 + 0.01 * i, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0 - 0.001 * i, INSERT_VALUES));
    if (i + 1 < n) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
    if (i + n / 2 < n) PetscCall(MatSetValue(*A, i, i + n / 2, -0.25, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* relative difference of A x and B x, and of A^T x and B^T x; ran: A's products ran on the storage (or its backend is
   the base type's own products) */
static PetscErrorCode Compare(Mat A, Mat B, PetscReal *err, PetscBool *ran)
{
  Vec            x, ya, yb, xt, yta, ytb;
  PetscReal      d, nb;
  PetscInt       c0, c1;
  MatType        f;
  MatELLRBackend be = MAT_ELLR_BACKEND_AIJ;

  PetscFunctionBeginUser;
  /* A's vectors (CUDA ones on an aijcusparse base: its own products take no host vectors); B's AIJ products take any */
  PetscCall(MatCreateVecs(A, &x, &yb));
  PetscCall(MatCreateVecs(A, &ytb, &xt));
  PetscCall(VecDuplicate(yb, &ya));
  PetscCall(VecDuplicate(ytb, &yta));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecSetRandom(xt, NULL));
  PetscCall(MatELLRGetFormat(A, &f));
  if (f) PetscCall(MatELLRGetBackend(A, &be));
  PetscCall(MatELLRGetProductCount(A, &c0));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMultTranspose(A, xt, yta));
  PetscCall(MatELLRGetProductCount(A, &c1));
  PetscCall(MatMult(B, x, yb));
  PetscCall(MatMultTranspose(B, xt, ytb));
  PetscCall(VecAXPY(ya, -1.0, yb));
  PetscCall(VecAXPY(yta, -1.0, ytb));
  PetscCall(VecNorm(ya, NORM_INFINITY, &d));
  PetscCall(VecNorm(yb, NORM_INFINITY, &nb));
  *err = d / nb;
  PetscCall(VecNorm(yta, NORM_INFINITY, &d));
  PetscCall(VecNorm(ytb, NORM_INFINITY, &nb));
  *err = PetscMax(*err, d / nb);
  *ran = (PetscBool)(f && (be == MAT_ELLR_BACKEND_AIJ ? c1 == c0 : c1 >= c0 + 2));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscCall(VecDestroy(&yta));
  PetscCall(VecDestroy(&ytb));
  PetscFunctionReturn(0);
}

static PetscErrorCode Say(PetscBool ok, const char *what)
{
  PetscFunctionBeginUser;
  if (!ok) g_fail++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s\n", ok ? "ok  " : "FAIL", what));
  PetscFunctionReturn(0);
}

static PetscErrorCode ConvertAfterProduct(const char *type, PetscInt n)
{
  Mat       A, R, C, At, B;
  MatType   t, f, fb;
  PetscReal err;
  PetscBool ran, same;
  char      msg[256];

  PetscFunctionBeginUser;
  PetscCall(Build(type, n, PETSC_FALSE, &A));
  PetscCall(Build(MATAIJ, n, PETSC_FALSE, &R));
  PetscCall(MatGetType(A, &t)); /* kept, as PETSc's mat tests keep it, across the products below */
  PetscCall(MatELLRGetFormat(A, &f));
  PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
  PetscCall(MatConvert(A, t, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatELLRGetFormat(B, &fb));
  PetscCall(PetscStrcmp(f, fb, &same));
  PetscCall(Compare(B, R, &err, &ran));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatConvert(A, \"%s\" from MatGetType before MatMatMult and MatTranspose, MAT_INITIAL_MATRIX): format %s (A's %s), error %.1e, products on the storage %s", t, fb ? fb : "none", f ? f : "none", (double)err, ran ? "yes" : "NO"));
  PetscCall(Say((PetscBool)(f && same && err < 1e-13 && ran), msg));
  PetscCall(MatDestroy(&B));
  PetscCall(MatConvert(A, t, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatELLRGetFormat(A, &fb));
  PetscCall(PetscStrcmp(f, fb, &same));
  PetscCall(Compare(A, R, &err, &ran));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatConvert(A, \"%s\", MAT_INPLACE_MATRIX): format %s, error %.1e, products on the storage %s", t, fb ? fb : "none", (double)err, ran ? "yes" : "NO"));
  PetscCall(Say((PetscBool)(f && same && err < 1e-13 && ran), msg));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&At));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(0);
}

static PetscErrorCode Permute(const char *type, PetscInt n)
{
  Mat       A, R, Ap, Rp;
  IS        rp, cp;
  PetscInt  lo, hi, *ri, *ci;
  PetscReal err;
  PetscBool ran;
  char      msg[256];

  PetscFunctionBeginUser;
  PetscCall(Build(type, n, PETSC_FALSE, &A));
  PetscCall(Build(MATAIJ, n, PETSC_FALSE, &R));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  PetscCall(PetscMalloc2(hi - lo, &ri, hi - lo, &ci));
  for (PetscInt i = lo; i < hi; i++) {
    ri[i - lo] = n - 1 - i;       /* reversed rows */
    ci[i - lo] = (i * 7 + 3) % n; /* n and 7 coprime (run.sh: n = 40) */
  }
  PetscCall(ISCreateGeneral(PETSC_COMM_WORLD, hi - lo, ri, PETSC_COPY_VALUES, &rp));
  PetscCall(ISCreateGeneral(PETSC_COMM_WORLD, hi - lo, ci, PETSC_COPY_VALUES, &cp));
  PetscCall(ISSetPermutation(rp));
  PetscCall(ISSetPermutation(cp));
  PetscCall(MatPermute(A, rp, cp, &Ap));
  PetscCall(MatPermute(R, rp, cp, &Rp));
  PetscCall(Compare(Ap, Rp, &err, &ran));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatPermute: the permuted matrix's products against MATAIJ's permuted one, error %.1e", (double)err));
  PetscCall(Say((PetscBool)(err < 1e-13), msg));
  PetscCall(Compare(A, R, &err, &ran));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatPermute: the original afterwards, error %.1e, products on the storage %s", (double)err, ran ? "yes" : "NO"));
  PetscCall(Say((PetscBool)(err < 1e-13 && ran), msg));
  PetscCall(PetscFree2(ri, ci));
  PetscCall(ISDestroy(&rp));
  PetscCall(ISDestroy(&cp));
  PetscCall(MatDestroy(&Ap));
  PetscCall(MatDestroy(&Rp));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(0);
}

static PetscErrorCode FieldSplitSolve(Mat A, PetscInt *its, Vec *x)
{
  KSP      ksp;
  PC       pc;
  Vec      b;
  IS       is[2];
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  /* two interleaved fields: even and odd rows (run.sh's n and rank counts give even-sized blocks) */
  PetscCall(ISCreateStride(PETSC_COMM_WORLD, (hi - lo + 1 - lo % 2) / 2, lo + lo % 2, 2, &is[0]));
  PetscCall(ISCreateStride(PETSC_COMM_WORLD, (hi - lo + lo % 2) / 2, lo + 1 - lo % 2, 2, &is[1]));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCFIELDSPLIT));
  PetscCall(PCFieldSplitSetIS(pc, "0", is[0]));
  PetscCall(PCFieldSplitSetIS(pc, "1", is[1]));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPSolve(ksp, b, *x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(ISDestroy(&is[0]));
  PetscCall(ISDestroy(&is[1]));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

static PetscErrorCode FieldSplit(const char *type, PetscInt n)
{
  Mat            A, R;
  Vec            xa, xr;
  PetscInt       ia, ir, c0 = 0, c1 = 0;
  PetscReal      d, nr;
  MatType        f;
  MatELLRBackend be = MAT_ELLR_BACKEND_AIJ;
  PetscBool      ran;
  char           msg[256];

  PetscFunctionBeginUser;
  PetscCall(Build(type, n, PETSC_TRUE, &A)); /* MatSetUp, no preallocation */
  PetscCall(Build(MATAIJ, n, PETSC_TRUE, &R));
  PetscCall(MatELLRGetFormat(A, &f));
  if (f) PetscCall(MatELLRGetBackend(A, &be));
  PetscCall(MatELLRGetProductCount(A, &c0));
  PetscCall(FieldSplitSolve(A, &ia, &xa));
  PetscCall(MatELLRGetProductCount(A, &c1));
  PetscCall(FieldSplitSolve(R, &ir, &xr));
  PetscCall(VecAXPY(xa, -1.0, xr));
  PetscCall(VecNorm(xa, NORM_INFINITY, &d));
  PetscCall(VecNorm(xr, NORM_INFINITY, &nr));
  ran = (PetscBool)(f && (be == MAT_ELLR_BACKEND_AIJ ? c1 == c0 : c1 > c0));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "PCFIELDSPLIT after MatSetUp: %" PetscInt_FMT " iterations (MATAIJ %" PetscInt_FMT "), solution difference %.1e, format %s, products on the storage %s", ia, ir, (double)(d / nr), f ? f : "none", ran ? "yes" : "NO"));
  PetscCall(Say((PetscBool)(ia == ir && d / nr < 1e-8 && ran), msg));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xr));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(0);
}

/* A conversion to another AIJ type (aijperm) drops the format and keeps AIJ's composed methods working on the result
   (MatStoreValues / MatRetrieveValues, which the library wraps on its matrices) */
static PetscErrorCode ConvertAway(const char *type, PetscInt n)
{
  Mat       A, P, R;
  MatType   f;
  PetscReal err;
  PetscBool ran;
  char      msg[256];

  PetscFunctionBeginUser;
  PetscCall(Build(type, n, PETSC_FALSE, &A));
  PetscCall(Build(MATAIJ, n, PETSC_FALSE, &R));
  PetscCall(MatConvert(A, MATAIJPERM, MAT_INITIAL_MATRIX, &P));
  PetscCall(MatELLRGetFormat(P, &f));
  PetscCall(MatSetOption(P, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatStoreValues(P));
  PetscCall(MatScale(P, 5.0));
  PetscCall(MatRetrieveValues(P));
  PetscCall(Compare(P, R, &err, &ran));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatConvert(A, aijperm), MatStoreValues, MatScale, MatRetrieveValues: format %s, error %.1e", f ? f : "none", (double)err));
  PetscCall(Say((PetscBool)(!f && err < 1e-13), msg));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(0);
}

/* A user's MatSetOperation() over the library's product, calling the library's (the usual wrapping): it stays the
   user's through a new assembly, and the chain ends (no recursion through the library) */
static PetscErrorCode (*g_orig)(Mat, Vec, Vec);
static PetscInt g_calls;

static PetscErrorCode UserMult(Mat A, Vec x, Vec y)
{
  PetscFunctionBeginUser;
  g_calls++;
  PetscCall((*g_orig)(A, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode UserOperation(const char *type, PetscInt n)
{
  Mat       A, R;
  PetscReal err;
  PetscBool ran;
  char      msg[256];

  PetscFunctionBeginUser;
  PetscCall(Build(type, n, PETSC_FALSE, &A));
  PetscCall(Build(MATAIJ, n, PETSC_FALSE, &R));
  PetscCall(MatGetOperation(A, MATOP_MULT, (void (**)(void))&g_orig));
  PetscCall(MatSetOperation(A, MATOP_MULT, (void (*)(void))UserMult));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  g_calls = 0;
  PetscCall(Compare(A, R, &err, &ran));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatSetOperation(MATOP_MULT) over the library's, then an assembly: the user's mult called %" PetscInt_FMT " times, error %.1e", g_calls, (double)err));
  PetscCall(Say((PetscBool)(g_calls > 0 && err < 1e-13), msg));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(0);
}

/* D (rows x A's rows, dense) and B (A's columns x cols, dense), filled from their global indices so that every run and
   every rank count holds the same values */
static PetscErrorCode DenseFactor(Mat A, PetscBool left, PetscInt k, Mat *D)
{
  PetscInt lo, hi, m, n, M, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetSize(A, &M, &N));
  if (left) PetscCall(MatCreateDense(PETSC_COMM_WORLD, PETSC_DECIDE, m, k, M, NULL, D));
  else PetscCall(MatCreateDense(PETSC_COMM_WORLD, n, PETSC_DECIDE, N, k, NULL, D));
  PetscCall(MatGetOwnershipRange(*D, &lo, &hi));
  PetscCall(MatGetSize(*D, NULL, &N));
  for (PetscInt i = lo; i < hi; i++)
    for (PetscInt j = 0; j < N; j++) PetscCall(MatSetValue(*D, i, j, 1.0 + 0.5 * ((i * 13 + j * 7) % 11) - 0.01 * j, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*D, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||C - Cr||_F / ||Cr||_F */
static PetscErrorCode DenseDiff(Mat C, Mat Cr, PetscReal *err)
{
  Mat       E;
  PetscReal d, nr;

  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(C, MAT_COPY_VALUES, &E));
  PetscCall(MatAXPY(E, -1.0, Cr, SAME_NONZERO_PATTERN));
  PetscCall(MatNorm(E, NORM_FROBENIUS, &d));
  PetscCall(MatNorm(Cr, NORM_FROBENIUS, &nr));
  *err = d / nr;
  PetscCall(MatDestroy(&E));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatMatMult with a dense factor on either side of a matrix of the type (2 processes in run.sh: MPIDENSE x the MPI base
   type): the product PETSc picks for the base type must give MATAIJ's result (both products sum in PETSc's own order:
   bitwise equal is expected, 1e-13 allowed), initial and reused after new values; afterwards A still has the format and
   its products run on the storage (MatELLRGetProductCount rises), so the products above did not leave it without it */
static PetscErrorCode DenseProducts(const char *type, PetscInt n)
{
  Mat       A, R, D, B, DA, DR, AB, RB;
  MatType   f, fa;
  PetscReal e1, e2, err;
  PetscBool ran;
  char      msg[320];

  PetscFunctionBeginUser;
  PetscCall(Build(type, n, PETSC_FALSE, &A));
  PetscCall(Build(MATAIJ, n, PETSC_FALSE, &R));
  PetscCall(MatELLRGetFormat(A, &f));
  PetscCall(DenseFactor(A, PETSC_TRUE, 5, &D));
  PetscCall(DenseFactor(A, PETSC_FALSE, 3, &B));
  PetscCall(MatMatMult(D, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &DA));
  PetscCall(MatMatMult(D, R, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &DR));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &AB));
  PetscCall(MatMatMult(R, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &RB));
  PetscCall(DenseDiff(DA, DR, &e1));
  PetscCall(DenseDiff(AB, RB, &e2));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatMatMult(dense 5 x %" PetscInt_FMT ", A) against MATAIJ's, error %.1e", n, (double)e1));
  PetscCall(Say((PetscBool)(e1 < 1e-13), msg));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatMatMult(A, dense %" PetscInt_FMT " x 3) against MATAIJ's, error %.1e", n, (double)e2));
  PetscCall(Say((PetscBool)(e2 < 1e-13), msg));
  /* new values, same pattern: the reused products must see them */
  PetscCall(MatScale(A, -2.5));
  PetscCall(MatScale(R, -2.5));
  PetscCall(MatShift(A, 1.0));
  PetscCall(MatShift(R, 1.0));
  PetscCall(MatMatMult(D, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &DA));
  PetscCall(MatMatMult(D, R, MAT_REUSE_MATRIX, PETSC_DEFAULT, &DR));
  PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &AB));
  PetscCall(MatMatMult(R, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &RB));
  PetscCall(DenseDiff(DA, DR, &e1));
  PetscCall(DenseDiff(AB, RB, &e2));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatMatMult(dense, A) and MatMatMult(A, dense), MAT_REUSE_MATRIX after new values of A: errors %.1e, %.1e", (double)e1, (double)e2));
  PetscCall(Say((PetscBool)(e1 < 1e-13 && e2 < 1e-13), msg));
  PetscCall(MatELLRGetFormat(A, &fa));
  PetscCall(Compare(A, R, &err, &ran));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "after the dense products: format %s (before %s), error %.1e, products on the storage %s", fa ? fa : "none", f ? f : "none", (double)err, ran ? "yes" : "NO"));
  PetscCall(Say((PetscBool)(f && fa && err < 1e-13 && ran), msg));
  PetscCall(MatDestroy(&DA));
  PetscCall(MatDestroy(&DR));
  PetscCall(MatDestroy(&AB));
  PetscCall(MatDestroy(&RB));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char      type[64] = "ellrt", test[64] = "all";
  PetscInt  n        = 40;
  PetscBool all, t;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-test", test, sizeof(test), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscStrcmp(test, "all", &all));
  PetscCall(PetscStrcmp(test, "convert_after_product", &t));
  if (all || t) PetscCall(ConvertAfterProduct(type, n));
  PetscCall(PetscStrcmp(test, "permute", &t));
  if (all || t) PetscCall(Permute(type, n));
  PetscCall(PetscStrcmp(test, "fieldsplit", &t));
  if (all || t) PetscCall(FieldSplit(type, n));
  PetscCall(PetscStrcmp(test, "convert_away", &t));
  if (all || t) PetscCall(ConvertAway(type, n));
  PetscCall(PetscStrcmp(test, "user_operation", &t));
  if (all || t) PetscCall(UserOperation(type, n));
  PetscCall(PetscStrcmp(test, "dense_products", &t));
  if (all || t) PetscCall(DenseProducts(type, n));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " failed\n", g_fail));
  PetscCall(PetscFinalize());
  return g_fail ? 1 : 0;
}
