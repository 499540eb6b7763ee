static char help[] = "In-place round trips between the ELLPACK-R types and other PETSc types, then options, new values and products.\n\
  -types ellrt,pellr   the plugin's types to go through\n\
  -sources aij,sell,dense,baij   the types the matrix starts as\n\n";
/*
  For each source type S and plugin type T, one matrix goes in place S -> T -> aij -> T -> aij -> T (-> the other
  plugin type -> T); after a step to T the matrix must carry T's format (MatELLRGetFormat; MatGetType names the base
  AIJ type), after a step to aij be of an AIJ type (the conversion of an AIJ-based matrix to aij keeps its format); and
  after each step: MatSetOption() with several options (an op the type wraps; once a type
  left an op behind, the next conversion captured it as its own base op and the call recursed until it crashed),
  new values through MatSetValues() and assembly, then MatMult and MatMultTranspose against a MATAIJ reference
  holding the same entries.  The products agree entry by entry within the rounding bound of a sum of k terms,
  |y - y_ref| <= 2 k u |A| |x| (u the unit roundoff, k the number of columns), since the formats may sum a row in
  another order.  On a matrix of a plugin type whose backend is the engine (cpu, cuda), the product count must grow:
  a silent fallback to AIJ's products fails.  One line per (source, type) on rank 0: "ok ..." or "FAIL ...".
*/
#include <petscellr.h>

#define NROWS 37 /* odd: blocks of uneven size on 2 and 4 ranks */

/* Entry (i, j) of the test matrix, or 0 where it stores none: a band, a far column and a dense-ish first row. */
static PetscScalar Entry(PetscInt i, PetscInt j, PetscInt round)
{
  if (i == j) return 4.0 + 0.1 * i + round;
  if (j == i + 1 || j == i - 2) return -1.0 - 0.01 * (i + j);
  if (j == (i * 7 + 3) % NROWS) return 0.25 + 0.001 * j;
  if (i == 0 && j % 3 == 0) return 0.5;
  return 0.0;
}

static PetscErrorCode Fill(Mat A, PetscInt round, PetscBool assemble)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++)
    for (PetscInt j = 0; j < NROWS; j++) {
      const PetscScalar v = Entry(i, j, round);
      if (v != 0.0) PetscCall(MatSetValue(A, i, j, v, INSERT_VALUES));
    }
  if (assemble) {
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(0);
}

/* Made as the type itself, preallocated exactly (PETSc 3.18's SELL mishandles both a conversion from MPIAIJ and an
   insertion past its preallocation). */
static PetscErrorCode Create(MatType type, PetscInt round, Mat *A)
{
  PetscInt lo, hi, *dnz, *onz;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, NROWS, NROWS));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  PetscCall(PetscCalloc2(hi - lo + 1, &dnz, hi - lo + 1, &onz));
  for (PetscInt i = lo; i < hi; i++)
    for (PetscInt j = 0; j < NROWS; j++)
      if (Entry(i, j, round) != 0.0) {
        if (j >= lo && j < hi) dnz[i - lo]++;
        else onz[i - lo]++;
      }
  PetscCall(MatXAIJSetPreallocation(*A, 1, dnz, onz, NULL, NULL));
  PetscCall(MatSeqSELLSetPreallocation(*A, 0, dnz)); /* MatXAIJSetPreallocation() does not reach SELL in 3.18 */
  PetscCall(MatMPISELLSetPreallocation(*A, 0, dnz, 0, onz));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(Fill(*A, round, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* y = op(A) x against op(R) x within 2 k u |R| |x| entry by entry. */
static PetscErrorCode CheckProduct(Mat A, Mat R, PetscBool transpose, PetscBool *ok)
{
  Mat                Rabs;
  Vec                x, xabs, y, yr, bound;
  const PetscScalar *ya, *yra, *ba;
  PetscInt           n;
  const PetscReal    k = NROWS;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(R, &x, &y));
  PetscCall(VecDuplicate(y, &yr));
  PetscCall(VecDuplicate(y, &bound));
  PetscCall(VecDuplicate(x, &xabs));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecShift(x, -0.5));
  PetscCall(VecCopy(x, xabs));
  PetscCall(VecAbs(xabs));
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &Rabs));
  {
    PetscInt           lo, hi, nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetOwnershipRange(R, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      PetscCall(MatGetRow(R, i, &nc, &cols, &vals));
      for (PetscInt c = 0; c < nc; c++) PetscCall(MatSetValue(Rabs, i, cols[c], PetscAbsScalar(vals[c]), INSERT_VALUES));
      PetscCall(MatRestoreRow(R, i, &nc, &cols, &vals));
    }
    PetscCall(MatAssemblyBegin(Rabs, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Rabs, MAT_FINAL_ASSEMBLY));
  }
  if (transpose) {
    PetscCall(MatMultTranspose(A, x, y));
    PetscCall(MatMultTranspose(R, x, yr));
    PetscCall(MatMultTranspose(Rabs, xabs, bound));
  } else {
    PetscCall(MatMult(A, x, y));
    PetscCall(MatMult(R, x, yr));
    PetscCall(MatMult(Rabs, xabs, bound));
  }
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(yr, &yra));
  PetscCall(VecGetArrayRead(bound, &ba));
  {
    PetscBool mine = PETSC_TRUE;
    for (PetscInt i = 0; i < n; i++)
      if (!(PetscAbsScalar(ya[i] - yra[i]) <= 2 * k * PETSC_MACHINE_EPSILON * PetscRealPart(ba[i]))) mine = PETSC_FALSE;
    {
      int m_ = mine, a_;
      PetscCallMPI(MPI_Allreduce(&m_, &a_, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
      *ok = a_ ? PETSC_TRUE : PETSC_FALSE;
    }
  }
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecRestoreArrayRead(yr, &yra));
  PetscCall(VecRestoreArrayRead(bound, &ba));
  PetscCall(MatDestroy(&Rabs));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xabs));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&bound));
  PetscFunctionReturn(0);
}

/* One step of the trip: A is of type want now; options set, values of round `round` inserted into A and R, then
   both products checked (and, for a plugin type on the engine, counted). */
static PetscErrorCode Step(Mat A, Mat R, const char *want, PetscBool plugin, PetscInt round, char *why, size_t len)
{
  PetscBool      same, ok;
  MatType        type;
  MatELLRBackend backend = MAT_ELLR_BACKEND_AIJ;
  PetscInt       before = 0, after = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetType(A, &type));
  if (plugin) { /* a genuine AIJ matrix (MatGetType names the base type) carrying the format converted to */
    MatType format;
    PetscCall(MatELLRGetFormat(A, &format));
    PetscCall(PetscStrcmp(format, want, &same));
    if (!same) {
      PetscCall(PetscSNPrintf(why, len, "type %s, format %s after converting to %s", type, format ? format : "none", want));
      PetscFunctionReturn(0);
    }
  } else {
    PetscCall(PetscStrendswith(type, want, &same));
    if (!same) {
      PetscCall(PetscSNPrintf(why, len, "type %s after converting to %s", type, want));
      PetscFunctionReturn(0);
    }
  }
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(A, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  PetscCall(MatSetOption(A, MAT_NO_OFF_PROC_ENTRIES, PETSC_FALSE));
  PetscCall(MatSetOption(A, MAT_SORTED_FULL, PETSC_FALSE));
  PetscCall(Fill(A, round, PETSC_TRUE));
  PetscCall(Fill(R, round, PETSC_TRUE));
  if (plugin) {
    PetscCall(MatELLRGetBackend(A, &backend));
    PetscCall(MatELLRGetProductCount(A, &before));
  }
  PetscCall(CheckProduct(A, R, PETSC_FALSE, &ok));
  if (!ok) {
    PetscCall(PetscSNPrintf(why, len, "MatMult as %s differs from MATAIJ's beyond the rounding bound", type));
    PetscFunctionReturn(0);
  }
  PetscCall(CheckProduct(A, R, PETSC_TRUE, &ok));
  if (!ok) {
    PetscCall(PetscSNPrintf(why, len, "MatMultTranspose as %s differs from MATAIJ's beyond the rounding bound", type));
    PetscFunctionReturn(0);
  }
  if (plugin && backend != MAT_ELLR_BACKEND_AIJ) {
    PetscCall(MatELLRGetProductCount(A, &after));
    if (after < before + 2) PetscCall(PetscSNPrintf(why, len, "as %s (backend %s) the plugin's product count went from %" PetscInt_FMT " to %" PetscInt_FMT ": AIJ's products ran", type, MatELLRBackends[backend], before, after));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Trip(const char *source, const char *type, const char *other)
{
  Mat       R, A;
  char      why[256] = "";
  PetscInt  round   = 0;
  PetscBool isother = PETSC_FALSE;
  /* the trip: each entry the type converted to in place, then checked */
  const char *steps[] = {type, MATAIJ, type, MATAIJ, type, other, type};

  PetscFunctionBeginUser;
  PetscCall(Create(MATAIJ, round, &R));
  PetscCall(Create(source, round, &A));
  for (size_t s = 0; s < PETSC_STATIC_ARRAY_LENGTH(steps) && !why[0]; s++) {
    if (!steps[s]) continue;
    PetscCall(MatConvert(A, steps[s], MAT_INPLACE_MATRIX, &A));
    isother = (PetscBool)(steps[s] == other);
    PetscCall(Step(A, R, steps[s], (PetscBool)(steps[s] == type || isother), ++round, why, sizeof(why)));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s -> %s -> aij -> %s -> aij -> %s -> %s -> %s%s%s\n", why[0] ? "FAIL" : "ok  ", source, type, type, type, other, type, why[0] ? ": " : "", why));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char     *types[2], *sources[8];
  PetscInt  ntypes = 2, nsources = 8;
  PetscBool set;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &set));
  if (!set) {
    ntypes = 2;
    PetscCall(PetscStrallocpy("ellrt", &types[0]));
    PetscCall(PetscStrallocpy("pellr", &types[1]));
  }
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-sources", sources, &nsources, &set));
  if (!set) {
    const char *d[] = {MATAIJ, MATSELL, MATDENSE, MATBAIJ};
    nsources        = 4;
    for (PetscInt k = 0; k < nsources; k++) PetscCall(PetscStrallocpy(d[k], &sources[k]));
  }
  for (PetscInt s = 0; s < nsources; s++)
    for (PetscInt t = 0; t < ntypes; t++) {
      PetscBool pellr;
      PetscCall(PetscStrcmp(types[t], "pellr", &pellr));
      PetscCall(Trip(sources[s], types[t], pellr ? "ellrt" : "pellr"));
    }
  for (PetscInt k = 0; k < ntypes; k++) PetscCall(PetscFree(types[k]));
  for (PetscInt k = 0; k < nsources; k++) PetscCall(PetscFree(sources[k]));
  PetscCall(PetscFinalize());
  return 0;
}
