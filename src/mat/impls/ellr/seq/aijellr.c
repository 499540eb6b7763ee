/*
  aijellr.c - MATSEQAIJELLRT and MATSEQAIJPELLR: sequential AIJ matrices whose products run on an
  ELLPACK-R copy of the CSR (aijellrstorage.c) with the kernels of aijellrmult.c.

  The life cycle follows PETSc's own AIJ subclasses (aijsell, aijperm): the type is SEQAIJ plus ops and
  composed methods.  In-place LU and ILU first return the matrix to plain SEQAIJ (a factored matrix is a solver).
  Every op this type installs also works when the header no longer holds this type's data: MatHeaderMerge() from
  any other route keeps the ops but brings another matrix's data, so the ops check whose data they see
  (MatSeqAIJELLRGetData()) and act as plain SEQAIJ otherwise.
*/
#include "../ellrimpl.h"

/* Puts this type's products (back) in place.  Base-class calls such as AIJ's assembly with inodes
   install AIJ products; those are kept in baseops (AIJ's products and converting back) and replaced again. */
static PetscErrorCode MatSeqAIJELLRInstallOps(Mat A, Mat_SeqAIJELLR *e)
{
  PetscFunctionBegin;
  if (A->ops->mult != MatMult_SeqAIJELLR) e->baseops.mult = A->ops->mult;
  if (A->ops->multadd != MatMultAdd_SeqAIJELLR) e->baseops.multadd = A->ops->multadd;
  if (A->ops->multtranspose != MatMultTranspose_SeqAIJELLR) e->baseops.multtranspose = A->ops->multtranspose;
  if (A->ops->multtransposeadd != MatMultTransposeAdd_SeqAIJELLR) e->baseops.multtransposeadd = A->ops->multtransposeadd;
  A->ops->mult             = MatMult_SeqAIJELLR;
  A->ops->multadd          = MatMultAdd_SeqAIJELLR;
  A->ops->multtranspose    = MatMultTranspose_SeqAIJELLR;
  A->ops->multtransposeadd = MatMultTransposeAdd_SeqAIJELLR;
  PetscFunctionReturn(0);
}

/* AIJ's insertion, after releasing the page-locked arrays it may reallocate (MatSeqAIJELLRUnpinIfReallocatable()). */
static PetscErrorCode MatSetValues_SeqAIJELLR(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode is)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) {
    PetscCall((*MatSeqAIJELLR_AIJOps.setvalues)(A, m, im, n, in, v, is));
    PetscFunctionReturn(0);
  }
  if (e->pinned) PetscCall(MatSeqAIJELLRUnpinIfReallocatable(A));
  PetscCall((*e->baseops.setvalues)(A, m, im, n, in, v, is));
  PetscFunctionReturn(0);
}

/* Whether a diagonal entry (i, i), i < min(rows, columns), is not stored: by a search in each row's sorted columns
   (MatMissingDiagonal() left PETSc's public API in 3.2x). */
static PetscErrorCode MatSeqAIJELLRMissingDiagonal(Mat A, PetscBool *missing)
{
  const PetscInt *ia, *ja;
  PetscInt        n;
  PetscBool       done;

  PetscFunctionBegin;
  *missing = PETSC_FALSE;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on a sequential AIJ matrix");
  for (PetscInt i = 0; i < PetscMin(n, A->cmap->n) && !*missing; i++) {
    PetscInt loc;
    PetscCall(PetscFindInt(i, ia[i + 1] - ia[i], ja + ia[i], &loc));
    *missing = (PetscBool)(loc < 0);
  }
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* AIJ's shift inserts missing diagonal entries after a preallocation of its own (MatShift_SeqAIJ calls
   MatSeqAIJSetPreallocation_SeqAIJ directly, past the composed method, and then inserts with new nonzeros
   refused, past ops->setvalues' release): the storage goes first when it holds AIJ's arrays page-locked. */
static PetscErrorCode MatShift_SeqAIJELLR(Mat A, PetscScalar a)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) {
    PetscCall((*MatSeqAIJELLR_AIJOps.shift)(A, a));
    PetscFunctionReturn(0);
  }
  if (e->pinned) {
    PetscBool missing = PETSC_TRUE; /* unassembled or rectangular: taken as missing, the storage goes */
    if (A->assembled && A->rmap->n == A->cmap->n) PetscCall(MatSeqAIJELLRMissingDiagonal(A, &missing));
    if (missing) PetscCall(MatSeqAIJELLRFreeStorage(e));
  }
  PetscCall((*e->baseops.shift)(A, a));
  PetscFunctionReturn(0);
}

/* AIJ's MatZeroRows and MatZeroRowsColumns insert a missing diagonal entry through MatSetValues_SeqAIJ itself,
   past ops->setvalues: the page-locking is released first where that may reallocate.  One body for both. */
static PetscErrorCode MatSeqAIJELLRZeroRows(Mat A, PetscBool columns, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  Mat_SeqAIJELLR       *e    = MatSeqAIJELLRGetData(A);
  const struct _MatOps *base = e ? &e->baseops : &MatSeqAIJELLR_AIJOps; /* no data of this type: plain AIJ */
  PetscErrorCode (*zero)(Mat, PetscInt, const PetscInt[], PetscScalar, Vec, Vec) = columns ? base->zerorowscolumns : base->zerorows;

  PetscFunctionBegin;
  if (e && e->pinned && diag != 0.0) PetscCall(MatSeqAIJELLRUnpinIfReallocatable(A));
  PetscCall((*zero)(A, n, rows, diag, x, b));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatZeroRows_SeqAIJELLR(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRZeroRows(A, PETSC_FALSE, n, rows, diag, x, b));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatZeroRowsColumns_SeqAIJELLR(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRZeroRows(A, PETSC_TRUE, n, rows, diag, x, b));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatAssemblyEnd_SeqAIJELLR(Mat A, MatAssemblyType mode)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) {
    PetscCall((*MatSeqAIJELLR_AIJOps.assemblyend)(A, mode));
    PetscFunctionReturn(0);
  }
  PetscCall((*e->baseops.assemblyend)(A, mode));
  /* the storage is made at the first product, as AIJCUSPARSE does: matrices that PETSc assembles
     internally from this type (transposes, Galerkin products) cost nothing until multiplied */
  PetscCall(MatSeqAIJELLRInstallOps(A, e));
  PetscFunctionReturn(0);
}

/* New settings take effect at the next product: the storage is dropped when they differ. */
PetscErrorCode MatSeqAIJELLRSetSettings(Mat A, const MatELLRSettings *s)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCheck(e, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "This %s matrix was factored in place: a factored matrix has no products and takes no settings; factor a copy (MatDuplicate()) to keep the matrix", ((PetscObject)A)->type_name);
  if (!MatELLRSettingsEqual(&e->settings, s)) {
    PetscCall(MatSeqAIJELLRFreeStorage(e));
    e->settings = *s;
    e->resolved = PETSC_FALSE;
    PetscCall(MatELLRSetDefaultVecType(A, &e->settings.backend));
    PetscCall(MatELLRSettingsRecord(A, s)); /* only on a change: the blocks of an MPI matrix get theirs before every product */
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetFromOptions_SeqAIJELLR(Mat A, MatELLROptionItems PetscOptionsObject)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);
  MatELLRSettings s;

  PetscFunctionBegin;
  if (!e) {
    if (MatSeqAIJELLR_AIJOps.setfromoptions) PetscCall((*MatSeqAIJELLR_AIJOps.setfromoptions)(A, PetscOptionsObject));
    PetscFunctionReturn(0);
  }
  PetscCall(MatSeqAIJELLRAdopt(A, e)); /* the options apply to A's own settings, also right after a header merge */
  s = e->settings;
  if (e->baseops.setfromoptions) PetscCall((*e->baseops.setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatELLRSettingsFromOptions(A, PetscOptionsObject, &s));
  PetscCall(MatSeqAIJELLRSetSettings(A, &s));
  PetscFunctionReturn(0);
}

/* AIJ's composed methods that replace the pattern without raising the nonzero state: the storage goes, before AIJ
   frees or reallocates its arrays (cudaHostUnregister of freed memory could hit the new arrays). */
static PetscErrorCode MatSeqAIJELLRDrop(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (e) PetscCall(MatSeqAIJELLRFreeStorage(e));
  PetscFunctionReturn(0);
}

/* A composed method of this type called on a header that holds another matrix's data (PETSc 3.25's header
   merge keeps the old composed methods): a factored matrix, whose pattern cannot change. */
static PetscErrorCode MatSeqAIJELLRCheckData(Mat A, Mat_SeqAIJELLR *e)
{
  PetscFunctionBegin;
  PetscCheck(e, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "This %s matrix was factored in place: a factored matrix takes MatSolve() but no new pattern or values; factor a copy (MatDuplicate()) to keep the matrix", ((PetscObject)A)->type_name);
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSeqAIJSetPreallocation_SeqAIJELLR(Mat A, PetscInt nz, const PetscInt nnz[])
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRCheckData(A, e));
  PetscCall(MatSeqAIJELLRDrop(A)); /* first: AIJ frees its arrays, which the storage may hold page-locked */
  PetscCall((*e->baseprealloc)(A, nz, nnz));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSeqAIJSetPreallocationCSR_SeqAIJELLR(Mat A, const PetscInt i[], const PetscInt j[], const PetscScalar v[])
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRCheckData(A, e));
  PetscCall(MatSeqAIJELLRDrop(A)); /* first: AIJ frees its arrays, which the storage may hold page-locked */
  PetscCall((*e->baseprealloccsr)(A, i, j, v));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatResetPreallocation_SeqAIJELLR(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRCheckData(A, e));
  PetscCall(MatSeqAIJELLRDrop(A)); /* first: AIJ frees its arrays, which the storage may hold page-locked */
  PetscCall((*e->baseresetprealloc)(A));
  PetscFunctionReturn(0);
}

/* MatResetHash() frees AIJ's arrays (MatReset_SeqAIJ) before the next hash assembly allocates new ones. */
static PetscErrorCode MatResetHash_SeqAIJELLR(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRCheckData(A, e));
  PetscCall(MatSeqAIJELLRDrop(A)); /* first: the storage may hold them page-locked */
  PetscCall((*e->baseresethash)(A));
  PetscFunctionReturn(0);
}

/* AIJ's MatSetOption() installs its own insertion for MAT_SORTED_FULL (true or false: DMCreateMatrix() sets both),
   past the release in MatSetValues_SeqAIJELLR(): it becomes the base insertion and this type's goes back.  Only for
   that option: between MatSetUp() without preallocation and the first assembly, PETSc 3.2x inserts through a hash
   table whose ops stand in A's ops, and restores this type's at assembly; its insertion must never become the base. */
static PetscErrorCode MatSetOption_SeqAIJELLR(Mat A, MatOption op, PetscBool flg)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) {
    PetscCall((*MatSeqAIJELLR_AIJOps.setoption)(A, op, flg));
    PetscFunctionReturn(0);
  }
  PetscCall((*e->baseops.setoption)(A, op, flg));
  if (op == MAT_SORTED_FULL && A->ops->setvalues != MatSetValues_SeqAIJELLR) {
    e->baseops.setvalues = A->ops->setvalues;
    A->ops->setvalues    = MatSetValues_SeqAIJELLR;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MatSetPreallocationCOO_SeqAIJELLR(Mat A, PetscCount n, PetscInt i[], PetscInt j[])
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRCheckData(A, e));
  PetscCall(MatSeqAIJELLRDrop(A)); /* first: AIJ frees its arrays, which the storage may hold page-locked */
  PetscCall((*e->basecoo)(A, n, i, j));
  /* AIJ's COO preallocation assembles the matrix without MatAssemblyEnd(): put the products back */
  PetscCall(MatSeqAIJELLRInstallOps(A, e));
  PetscFunctionReturn(0);
}

/* After MatSeqAIJSetColumnIndices() (same count, new columns) the storage goes too. */
static PetscErrorCode MatSeqAIJSetColumnIndices_SeqAIJELLR(Mat A, PetscInt *indices)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRCheckData(A, e));
  PetscCall((*e->basecolumnindices)(A, indices));
  PetscCall(MatSeqAIJELLRDrop(A));
#if defined(PETSCELLR_CUSPARSE_BASE)
  PetscCall(MatSeqAIJELLRHostChanged(A, PETSC_TRUE)); /* aijcusparse's device pattern is stale too */
#endif
  PetscFunctionReturn(0);
}

/* AIJ's MatRetrieveValues copies the stored values back without raising the object state (SNES does this
   when it reuses a Jacobian): raise it, so the next product refills the values. */
static PetscErrorCode MatRetrieveValues_SeqAIJELLR(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRCheckData(A, e));
  PetscCall((*e->baseretrievevalues)(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
#if defined(PETSCELLR_CUSPARSE_BASE)
  PetscCall(MatSeqAIJELLRHostChanged(A, PETSC_FALSE));
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRGetBackend_SeqAIJELLR(Mat A, MatELLRBackend *backend)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  *backend = MAT_ELLR_BACKEND_AUTO;
  if (!e) PetscFunctionReturn(0);
  PetscCall(MatSeqAIJELLRResolve(A, e));
  *backend = e->backend;
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_SeqAIJELLR(Mat A, PetscViewer viewer)
{
  Mat_SeqAIJELLR   *e = MatSeqAIJELLRGetData(A);
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall((*(e ? &e->baseops : &MatSeqAIJELLR_AIJOps)->view)(A, viewer));
  if (!e) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL) PetscCall(MatSeqAIJELLRView_Info(A, viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSeqAIJELLRCompose(Mat A, MatELLRFormat format, PetscBool on);

/* Everything this type added to an AIJ matrix, gone; the ops are the caller's business.  On the way out (MatDestroy(),
   conversion to AIJ) a failure the GPU reports while freeing is logged, not raised: the storage is freed anyway, and
   an error out of a destroy would leave the matrix half gone (MPIAIJ replaces its off-diagonal block inside an
   assembly). */
static PetscErrorCode MatSeqAIJELLRFree(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatSeqAIJELLRFreeStorage(e);
  PetscCall(PetscPopErrorHandler());
  if (ierr) PetscCall(PetscInfo(A, "The GPU reported an error while its storage was freed (freed anyway): %s\n", ellr_last_error()));
  PetscCall(PetscFree2(e->rowptr32, e->colidx32));
  PetscCall(MatSeqAIJELLRCompose(A, e->typeformat, PETSC_FALSE));
#if defined(PETSCELLR_CUSPARSE_BASE)
  if (e->cusparse) {
    PetscCall(MatSeqAIJELLRInstallCUSPARSE(A, e, PETSC_FALSE));
    PetscCall(MatSeqAIJELLRDetach(A)); /* frees e */
    PetscFunctionReturn(0);
  }
#endif
  e->magic = 0;
  PetscCall(PetscFree(A->spptr));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDestroy_SeqAIJELLR(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) { /* after MatHeaderMerge() from another type: the data is plain SEQAIJ's */
    PetscCall((*MatSeqAIJELLR_AIJOps.destroy)(A));
    PetscFunctionReturn(0);
  }
  A->ops->destroy = e->baseops.destroy;
  PetscCall(MatSeqAIJELLRFree(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDuplicate_SeqAIJELLR(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) {
    PetscCall((*MatSeqAIJELLR_AIJOps.duplicate)(A, op, B));
    PetscFunctionReturn(0);
  }
  PetscCall(MatSeqAIJELLRAdopt(A, e)); /* after a header merge: A's own settings, not the other matrix's */
  /* AIJ's duplicate creates a matrix of A's type name, hence of this type; give it A's settings.  aijcusparse's makes
     a seqaijcusparse (called under that name, so that it does not make one of this type first), converted here. */
  {
    PetscErrorCode ierr;
#if defined(PETSCELLR_CUSPARSE_BASE)
    PetscCall(MatSeqAIJELLRRename(A, PETSC_TRUE));
#endif
    ierr = (*e->baseops.duplicate)(A, op, B);
#if defined(PETSCELLR_CUSPARSE_BASE)
    PetscCall(MatSeqAIJELLRRename(A, PETSC_FALSE));
#endif
    PetscCall(ierr);
  }
  if (!MatSeqAIJELLRGetData(*B)) PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(*B, e->settings.format, &e->settings, MAT_INPLACE_MATRIX, B));
  else PetscCall(MatSeqAIJELLRSetSettings(*B, &e->settings));
  PetscCall(MatSeqAIJELLRInstallOps(*B, MatSeqAIJELLRGetData(*B)));
  PetscFunctionReturn(0);
}

/*
  In-place factorization (MatLUFactor(), MatILUFactor()): the factored matrix is a solver, no longer an operator, so it
  first returns to plain MATSEQAIJ in place (the ELLPACK-R storage freed, and aijcusparse's device copy with it) and
  AIJ factors it, as for -mat_type aij.  AIJ's in-place LU merges a MATSEQAIJ factor into the header (MatHeaderMerge()
  requires the same type name: a PETSc debug build refuses any other, aijcusparse included), and its in-place ILU(0)
  writes the factor into the host arrays behind a device copy.
*/
static PetscErrorCode MatSeqAIJELLRFactorInPlace(Mat A, PetscBool ilu, IS row, IS col, const MatFactorInfo *info)
{
  const struct _MatOps *aij = &MatSeqAIJELLR_AIJOps; /* the header already holds plain SEQAIJ data (MatHeaderMerge()) */

  PetscFunctionBegin;
  if (MatSeqAIJELLRGetData(A)) {
    PetscCall(MatConvert(A, MATSEQAIJ, MAT_INPLACE_MATRIX, &A));
    aij = A->ops;
  }
  PetscCall((*(ilu ? aij->ilufactor : aij->lufactor))(A, row, col, info));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatLUFactor_SeqAIJELLR(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRFactorInPlace(A, PETSC_FALSE, row, col, info));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatILUFactor_SeqAIJELLR(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRFactorInPlace(A, PETSC_TRUE, row, col, info));
  PetscFunctionReturn(0);
}

/* Every op this type installs over AIJ's: restored from the base ops when the matrix leaves the type. */
static const MatELLROp MatSeqAIJELLR_Ops[] = {
  MAT_ELLR_OP(mult, MatMult_SeqAIJELLR),
  MAT_ELLR_OP(multadd, MatMultAdd_SeqAIJELLR),
  MAT_ELLR_OP(multtranspose, MatMultTranspose_SeqAIJELLR),
  MAT_ELLR_OP(multtransposeadd, MatMultTransposeAdd_SeqAIJELLR),
  MAT_ELLR_OP(assemblyend, MatAssemblyEnd_SeqAIJELLR),
  MAT_ELLR_OP(setvalues, MatSetValues_SeqAIJELLR),
  MAT_ELLR_OP(setoption, MatSetOption_SeqAIJELLR),
  MAT_ELLR_OP(shift, MatShift_SeqAIJELLR),
  MAT_ELLR_OP(zerorows, MatZeroRows_SeqAIJELLR),
  MAT_ELLR_OP(zerorowscolumns, MatZeroRowsColumns_SeqAIJELLR),
  MAT_ELLR_OP(destroy, MatDestroy_SeqAIJELLR),
  MAT_ELLR_OP(duplicate, MatDuplicate_SeqAIJELLR),
  MAT_ELLR_OP(setfromoptions, MatSetFromOptions_SeqAIJELLR),
  MAT_ELLR_OP(view, MatView_SeqAIJELLR),
  MAT_ELLR_OP(lufactor, MatLUFactor_SeqAIJELLR),
  MAT_ELLR_OP(ilufactor, MatILUFactor_SeqAIJELLR),
};

/* Back to plain AIJ: AIJ's own products and composed methods return; the ELLPACK-R storage is freed. */
PetscErrorCode MatConvert_SeqAIJELLR_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat             B;
  Mat_SeqAIJELLR *e;
  PetscBool       cusparse;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  e = MatSeqAIJELLRGetData(B);
  PetscCheck(e, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "This %s matrix was factored in place: a factored matrix cannot be converted; factor a copy (MatDuplicate()) to keep the matrix", ((PetscObject)B)->type_name);
  cusparse = e->cusparse;
  PetscCall(MatELLRRestoreBaseOps(B, &e->baseops, MatSeqAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatSeqAIJELLR_Ops)));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatRetrieveValues_C", e->baseretrievevalues));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSeqAIJSetPreallocation_C", e->baseprealloc));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSeqAIJSetPreallocationCSR_C", e->baseprealloccsr));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatResetPreallocation_C", e->baseresetprealloc));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSetPreallocationCOO_C", e->basecoo));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSeqAIJSetColumnIndices_C", e->basecolumnindices));
  if (e->baseresethash) PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatResetHash_C", e->baseresethash));
  if (e->inodes_off) PetscCall(MatSetOption(B, MAT_USE_INODES, PETSC_TRUE));
  PetscCall(MatSeqAIJELLRFree(B));
  if (cusparse) {
    /* the base is an aijcusparse matrix: it stays one when asked for (the blocks of an MPI matrix), else it becomes
       a MATSEQAIJ as any aijcusparse matrix does */
    PetscBool tocusparse;
    PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJCUSPARSE));
    PetscCall(PetscStrbeginswith(type ? type : "", "seqaijcusparse", &tocusparse));
    if (!tocusparse) PetscCall(PetscStrcmp(type, MATAIJCUSPARSE, &tocusparse));
    if (!tocusparse) PetscCall(MatConvert(B, MATSEQAIJ, MAT_INPLACE_MATRIX, &B));
    *newmat = B;
    PetscFunctionReturn(0);
  }
  PetscCall(MatELLRSetDefaultVecType(B, NULL));
  MatELLRSetBoundToCPU(B, PETSC_TRUE);
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_SeqAIJ_SeqAIJELLRT(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(A, MAT_ELLR_FORMAT_ELLRT, NULL, reuse, newmat));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_SeqAIJ_SeqAIJPELLR(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(A, MAT_ELLR_FORMAT_PELLR, NULL, reuse, newmat));
  PetscFunctionReturn(0);
}

/* MatConvert() asks a matrix of the target type for MatConvert_<source>_<name>_C, where <name> is what
   the caller wrote (or it with a seq/mpi prefix): register the converters under every such name.  The
   pattern-changing AIJ methods are wrapped (on) or given back (off, by the converter to AIJ). */
static PetscErrorCode MatSeqAIJELLRCompose(Mat A, MatELLRFormat format, PetscBool on)
{
  const PetscBool pellr = (PetscBool)(format == MAT_ELLR_FORMAT_PELLR);
  PetscErrorCode (*from_aij)(Mat, MatType, MatReuse, Mat *) = !on ? NULL : pellr ? MatConvert_SeqAIJ_SeqAIJPELLR : MatConvert_SeqAIJ_SeqAIJELLRT;

  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaij_pellr_C" : "MatConvert_seqaij_ellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaij_seqpellr_C" : "MatConvert_seqaij_seqellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaij_seqaijpellr_C" : "MatConvert_seqaij_seqaijellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaijpellr_seqaij_C" : "MatConvert_seqaijellrt_seqaij_C", on ? MatConvert_SeqAIJELLR_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRGetProductCount_C", on ? MatELLRGetProductCount_SeqAIJELLR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRGetBackend_C", on ? MatELLRGetBackend_SeqAIJELLR : NULL));
  if (on) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", MatRetrieveValues_SeqAIJELLR));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSeqAIJSetPreallocation_C", MatSeqAIJSetPreallocation_SeqAIJELLR));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSeqAIJSetPreallocationCSR_C", MatSeqAIJSetPreallocationCSR_SeqAIJELLR));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatResetPreallocation_C", MatResetPreallocation_SeqAIJELLR));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_SeqAIJELLR));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSeqAIJSetColumnIndices_C", MatSeqAIJSetColumnIndices_SeqAIJELLR));
    if (MatSeqAIJELLRGetData(A) && MatSeqAIJELLRGetData(A)->baseresethash) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatResetHash_C", MatResetHash_SeqAIJELLR));
  }
  PetscFunctionReturn(0);
}

/* AIJ -> ELLR/PELLR.  In place, A keeps its CSR and gains this type's products, names and settings:
   the given ones (blocks of a parallel matrix take their parent's), else the format's defaults and options. */
PetscErrorCode MatConvert_SeqAIJ_SeqAIJELLR_Format(Mat A, MatELLRFormat format, const MatELLRSettings *settings, MatReuse reuse, Mat *newmat)
{
  Mat             B;
  Mat_SeqAIJELLR *e;
  MatELLRSettings s;
  PetscBool       cusparse = PETSC_FALSE;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  PetscCall(MatSeqAIJELLRCaptureAIJOps(B));
  PetscCall(MatELLRCheckBaseOps(B, &MatSeqAIJELLR_AIJOps, MatSeqAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatSeqAIJELLR_Ops)));
  if (settings) s = *settings;
  else {
    PetscCall(MatELLRSettingsDefault(format, &s));
    /* options also reach matrices that never see MatSetFromOptions() (DMCreateMatrix, MatConvert) */
    PetscCall(MatELLRSettingsFromOptionsDatabase(B, &s));
  }
#if defined(PETSCELLR_CUSPARSE_BASE)
  /* with the CUDA backend a CUDA PETSc's aijcusparse is the base: its factorizations, products, COO assembly and
     vector operations run on the GPU as they do for aijcusparse */
  PetscCall(MatSeqAIJELLRToCUSPARSEBase(B, &s, &cusparse));
#endif
  PetscCheck(!B->spptr || cusparse, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Cannot convert a matrix that already carries GPU or other extra data (type %s) to %s: convert it to MATSEQAIJ first (an option -mat_seqaij_type makes every SEQAIJ matrix such a type: leave it out with the petsc-ellr types)", ((PetscObject)B)->type_name, MatELLRTypeName(format, PETSC_FALSE));
  PetscCall(MatELLRCheckBaseOps(B, B->ops, MatSeqAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatSeqAIJELLR_Ops))); /* before anything is allocated */
  PetscCall(PetscNew(&e));
  e->magic    = MAT_SEQAIJELLR_MAGIC;
  e->owner    = B;
  e->cusparse = cusparse;
#if defined(PETSCELLR_CUSPARSE_BASE)
  if (cusparse) PetscCall(MatSeqAIJELLRAttach(B, e));
  else
#endif
    B->spptr = e;
  e->baseops = *B->ops;
  /* a matrix aijcusparse duplicated from one of this type carries the type's wrappers: never their own base */
#define MAT_ELLR_BASE_COMPOSED(name, field, wrapper) PetscCall(MatELLRQueryBaseComposed(B, MATSEQAIJ, name, (MatELLROpFn)(wrapper), (MatELLROpFn *)(void *)&e->field))
  MAT_ELLR_BASE_COMPOSED("MatRetrieveValues_C", baseretrievevalues, MatRetrieveValues_SeqAIJELLR);
  MAT_ELLR_BASE_COMPOSED("MatSeqAIJSetPreallocation_C", baseprealloc, MatSeqAIJSetPreallocation_SeqAIJELLR);
  MAT_ELLR_BASE_COMPOSED("MatSeqAIJSetPreallocationCSR_C", baseprealloccsr, MatSeqAIJSetPreallocationCSR_SeqAIJELLR);
  MAT_ELLR_BASE_COMPOSED("MatResetPreallocation_C", baseresetprealloc, MatResetPreallocation_SeqAIJELLR);
  MAT_ELLR_BASE_COMPOSED("MatSetPreallocationCOO_C", basecoo, MatSetPreallocationCOO_SeqAIJELLR);
  MAT_ELLR_BASE_COMPOSED("MatSeqAIJSetColumnIndices_C", basecolumnindices, MatSeqAIJSetColumnIndices_SeqAIJELLR);
  MAT_ELLR_BASE_COMPOSED("MatResetHash_C", baseresethash, MatResetHash_SeqAIJELLR);
#undef MAT_ELLR_BASE_COMPOSED
  PetscCheck(e->baseretrievevalues && e->baseprealloc && e->baseprealloccsr && e->baseresetprealloc && e->basecoo && e->basecolumnindices, PETSC_COMM_SELF, PETSC_ERR_PLIB, "This PETSc's MATSEQAIJ lacks a composed method petsc-ellr wraps");
  e->typeformat = format;
  e->settings   = s;
  PetscCall(MatELLRSettingsRecord(B, &s));

  PetscCheck(e->baseops.zerorows && e->baseops.zerorowscolumns && e->baseops.setoption && e->baseops.shift, PETSC_COMM_SELF, PETSC_ERR_PLIB, "This PETSc's MATSEQAIJ lacks an op petsc-ellr wraps");
  PetscCall(MatELLRInstallOps(B, MatSeqAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatSeqAIJELLR_Ops)));
  PetscCall(MatSeqAIJELLRCompose(B, format, PETSC_TRUE));
#if defined(PETSCELLR_CUSPARSE_BASE)
  if (cusparse) PetscCall(MatSeqAIJELLRInstallCUSPARSE(B, e, PETSC_TRUE));
#endif
  PetscCall(MatELLRSetDefaultVecType(B, &e->settings.backend));
#if defined(PETSCELLR_HAVE_CUDA)
  {
    /* the GPU is set up with the type, as MATSEQAIJCUSPARSE does: not inside the first assembly or product
       (creating the CUDA context takes 0.1-0.4 s) */
    MatELLRBackend backend;
    PetscCall(MatELLRResolveBackend(e->settings.backend, &backend));
    if (backend == MAT_ELLR_BACKEND_CUDA && !cusparse) { /* aijcusparse has its own device and no I-nodes */
      PetscCall(MatELLRSelectDevice());
      /* AIJ's I-node search (an O(nnz) pass in every MatAssemblyEnd(): 30-50 ms on a 4M-row stencil) serves
         only its own CPU kernels, which GPU products never run: off, as MATSEQAIJCUSPARSE does.  Converting
         back to MATSEQAIJ turns it on again. */
      PetscCall(MatSetOption(B, MAT_USE_INODES, PETSC_FALSE));
      e->inodes_off = PETSC_TRUE;
    }
  }
#endif
  MatELLRSetBoundToCPU(B, PETSC_FALSE);
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MatELLRTypeName(format, PETSC_FALSE)));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_SeqAIJELLRT(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatELLRCheckSeqAIJType(A, PETSC_FALSE));
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(A, MAT_ELLR_FORMAT_ELLRT, NULL, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_SeqAIJPELLR(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatELLRCheckSeqAIJType(A, PETSC_FALSE));
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(A, MAT_ELLR_FORMAT_PELLR, NULL, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}
