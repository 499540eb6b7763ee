/*
  ellrpatch.c - how the ELLPACK-R products hang on a genuine AIJ / aijcusparse matrix: the composed container, the
  operations replaced in struct _MatOps, and the replaced operations common to sequential and MPI matrices.

  Invariants:
  - A matrix carries the library's data exactly when the container MAT_ELLR_KEY is composed on it and its mult slot
    (the first of each table) holds the library's function.  MatSetType() to another type zeroes the slots, a
    conversion to another AIJ type (aijperm, aijsell) or MatSetOperation() replaces the products: a container left
    behind is then dropped at the next query, and the slots still ours call a fresh matrix's functions of the new
    type.  DMDA replaces the view slot: ours goes back at the next assembly.  The assembly slot, MatAssemblyEnd_ELLRT
    or MatAssemblyEnd_PELLR, names the format.
  - Each replaced slot keeps the base type's function in Mat_ELLR.base; a base operation that changes the slots
    (MatBindToCPU(), MatAssemblyEnd() of AIJ's I-node code) is followed by MatELLRPatch(), which takes the new base
    functions and puts the library's back.
  - A header merge keeps A's operations but not, in PETSc 3.18, its composed objects: the products then re-attach with
    the format the assembly slot names, A's options and the base functions of a fresh matrix of A's type.
*/
#include "ellrimpl.h"

#if PETSC_VERSION_LT(3, 23, 0)
static PetscErrorCode MatELLRContainerDestroy(void *ctx) /* the pointer itself */
{
  return MatELLRDataDestroy((Mat_ELLR *)ctx);
}
#else
static PetscErrorCode MatELLRContainerDestroy(void *ctx) /* the address of the pointer */
{
  Mat_ELLR **e = (Mat_ELLR **)ctx;

  PetscFunctionBegin;
  PetscCall(MatELLRDataDestroy(*e));
  *e = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

static MatELLROpFn *MatELLRSlot(struct _MatOps *ops, size_t offset)
{
  return (MatELLROpFn *)(void *)((char *)ops + offset);
}

static PetscBool MatELLRHoldsOurs(Mat A, const Mat_ELLR *e)
{
  return (PetscBool)(e->nown > 0 && *MatELLRSlot(A->ops, e->own[0].offset) == e->own[0].fn);
}

/* The two formats' functions of one slot are the same operation: neither is ever the other's base. */
static PetscBool MatELLRSameOp(MatELLROpFn f, MatELLROpFn g)
{
  const MatELLROpFn asmT = (MatELLROpFn)MatAssemblyEnd_ELLRT, asmP = (MatELLROpFn)MatAssemblyEnd_PELLR;

  return (PetscBool)(f == g || ((f == asmT || f == asmP) && (g == asmT || g == asmP)));
}

/* The tables of the operations each kind of matrix puts over its base's (seq/ellrseq.c, mpi/ellrmpi.c): the recovery
   after a header merge needs them.  With each, the kind's work after a final assembly (or NULL): collective, run on
   every rank at every final assembly of such a matrix, whatever made it (a duplicate, a recovery). */
static struct {
  const MatELLROp *ops;
  PetscInt         n;
  PetscErrorCode (*assembled)(Mat);
} MatELLRTables[2][2];

PetscErrorCode MatELLRSetOpsTable(PetscBool mpi, PetscBool pellr, const MatELLROp own[], PetscInt nown, PetscErrorCode (*assembled)(Mat))
{
  PetscFunctionBegin;
  MatELLRTables[mpi ? 1 : 0][pellr ? 1 : 0].ops       = own;
  MatELLRTables[mpi ? 1 : 0][pellr ? 1 : 0].n         = nown;
  MatELLRTables[mpi ? 1 : 0][pellr ? 1 : 0].assembled = assembled;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The work of e's kind after a final assembly, found by e's table. */
static PetscErrorCode MatELLRAssembled(Mat A, Mat_ELLR *e)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < 2; i++)
    for (PetscInt j = 0; j < 2; j++)
      if (MatELLRTables[i][j].ops == e->own && MatELLRTables[i][j].assembled) PetscCall((*MatELLRTables[i][j].assembled)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The library's data on A as composed, or NULL. */
static PetscErrorCode MatELLRQueryData(Mat A, Mat_ELLR **e)
{
  PetscContainer c = NULL;

  PetscFunctionBegin;
  *e = NULL;
  PetscCall(PetscObjectQuery((PetscObject)A, MAT_ELLR_KEY, (PetscObject *)&c));
  if (!c) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscContainerGetPointer(c, (void **)e));
  if (!MatELLRHoldsOurs(A, *e)) { /* left behind by MatSetType() to another type */
    PetscCall(PetscInfo(A, "The ELLPACK-R products were replaced (type %s): the storage is dropped\n", ((PetscObject)A)->type_name));
    *e = NULL;
    PetscCall(PetscObjectCompose((PetscObject)A, MAT_ELLR_KEY, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}


/* The library's data on A, or NULL where A carries none.  Where a header merge (PETSc 3.18) dropped the container but
   A still has our operations, the library is attached again: the format its assembly slot names, A's options. */
PetscErrorCode MatELLRGetData(Mat A, Mat_ELLR **e)
{
  MatELLRSettings s;
  PetscBool       mpi, pellr = (PetscBool)(A->ops->assemblyend == MatAssemblyEnd_PELLR);

  PetscFunctionBegin;
  PetscCall(MatELLRQueryData(A, e));
  if (*e || !(pellr || A->ops->assemblyend == MatAssemblyEnd_ELLRT)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, "mpi", &mpi));
  if (!MatELLRTables[mpi][pellr].ops || (MatELLROpFn)A->ops->mult != MatELLRTables[mpi][pellr].ops[0].fn) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRSettingsDefault(pellr ? MATPELLR : MATELLR, &s));
  PetscCall(MatELLRSettingsFromOptionsDatabase(A, &s));
  PetscCall(PetscInfo(A, "The matrix's header holds another matrix's data: the %s storage is attached again with its options\n", s.format));
  PetscCall(MatELLRAttachOps(A, &s, MatELLRTables[mpi][pellr].ops, MatELLRTables[mpi][pellr].n, NULL, e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operations of a fresh matrix of the given type, kept once per type (at most a few: seqaij, mpiaij and their
   aijcusparse variants): the base of a slot whose own base was lost with the container. */
static PetscErrorCode MatELLRPristineOps(Mat A, const struct _MatOps **ops)
{
  static struct {
    char           type[64];
    struct _MatOps ops;
  } known[8];
  static PetscInt nknown = 0;
  const char     *type   = ((PetscObject)A)->type_name;
  Mat             T;
  PetscBool       same;

  PetscFunctionBegin;
  PetscCheck(type, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A matrix of the petsc-ellr types lost its data and its type name together");
  for (PetscInt k = 0; k < nknown; k++) {
    PetscCall(PetscStrcmp(known[k].type, type, &same));
    if (same) {
      *ops = &known[k].ops;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCheck(nknown < 8, PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-ellr: too many base types");
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscCall(MatSetType(T, type));
  known[nknown].ops = *T->ops;
  PetscCall(MatDestroy(&T));
  PetscCall(PetscStrncpy(known[nknown].type, type, sizeof(known[nknown].type)));
  *ops = &known[nknown++].ops;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Puts the library's operations into A's slots; a slot that holds another function gives it to e->base first.  A slot
   already holding ours keeps e->base, or (a new container) takes src's base, or a fresh matrix's. */
static PetscErrorCode MatELLRPatch(Mat A, Mat_ELLR *e, PetscBool fresh, Mat_ELLR *src, const struct _MatOps *before)
{
  const struct _MatOps *pristine = NULL;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < e->nown; k++) {
    MatELLROpFn *slot = MatELLRSlot(A->ops, e->own[k].offset), *base = MatELLRSlot(&e->base, e->own[k].offset);

    /* after a base call (before: the slots then), only the slots it changed: one a user replaced (MatSetOperation())
       stays the user's, and never becomes our base (which could call back into ours) */
    if (before && *slot == *MatELLRSlot((struct _MatOps *)before, e->own[k].offset)) continue;
    if (!MatELLRSameOp(*slot, e->own[k].fn)) *base = *slot;
    else if (fresh && src) *base = *MatELLRSlot(&src->base, e->own[k].offset);
    else if (fresh) {
      if (!pristine) PetscCall(MatELLRPristineOps(A, &pristine));
      *base = *MatELLRSlot((struct _MatOps *)pristine, e->own[k].offset);
    }
    PetscCheck(!MatELLRSameOp(*base, e->own[k].fn), PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-ellr: an operation of %s would call itself", ((PetscObject)A)->type_name);
    *slot = e->own[k].fn;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Attaches (or re-attaches) the library to A: the container with the settings, and the operations of own[] (whose
  view slot names the format).  src: the matrix A was copied from, whose base operations A shares.  A change of
  settings drops the storage (rebuilt at the next product).
*/
PetscErrorCode MatELLRAttachOps(Mat A, const MatELLRSettings *s, const MatELLROp own[], PetscInt nown, Mat_ELLR *src, Mat_ELLR **out)
{
  Mat_ELLR *e;
  PetscBool fresh = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatELLRQueryData(A, &e));
  if (!e) {
    PetscContainer c;

    PetscCall(PetscNew(&e));
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, e));
#if PETSC_VERSION_LT(3, 23, 0)
    PetscCall(PetscContainerSetUserDestroy(c, MatELLRContainerDestroy));
#else
    PetscCall(PetscContainerSetCtxDestroy(c, MatELLRContainerDestroy));
#endif
    PetscCall(PetscObjectCompose((PetscObject)A, MAT_ELLR_KEY, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
    e->settings = *s;
    fresh       = PETSC_TRUE;
  } else if (!MatELLRSettingsEqual(&e->settings, s)) {
    PetscCall(MatELLRFreeStorage(e));
    e->settings = *s;
  }
  e->own  = own;
  e->nown = nown;
  PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, "mpi", &e->mpi));
  PetscCall(MatELLRPatch(A, e, fresh, src, NULL));
  if (out) *out = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}


/* The base function of a replaced slot: e's, or a fresh matrix's when A lost e. */
PetscErrorCode MatELLRBaseOp(Mat A, Mat_ELLR *e, size_t offset, MatELLROpFn *fn)
{
  const struct _MatOps *pristine;

  PetscFunctionBegin;
  if (e) *fn = *MatELLRSlot(&e->base, offset);
  else {
    PetscCall(MatELLRPristineOps(A, &pristine));
    *fn = *MatELLRSlot((struct _MatOps *)pristine, offset);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define MatELLRBase(A, e, name, fn) MatELLRBaseOp(A, e, offsetof(struct _MatOps, name), (MatELLROpFn *)(fn))

/* A copy keeps the format and settings (MatConvert() to the base type goes through here too: the format stays). */
PetscErrorCode MatDuplicate_ELLR(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_ELLR *e;
  PetscErrorCode (*base)(Mat, MatDuplicateOption, Mat *);

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  PetscCall(MatELLRBase(A, e, duplicate, &base));
  PetscCall((*base)(A, op, B));
  if (e) PetscCall(MatELLRAttachOps(*B, &e->settings, e->own, e->nown, e, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* aijcusparse's MatBindToCPU() installs its host or device products: ours go back over them. */
PetscErrorCode MatBindToCPU_ELLR(Mat A, PetscBool flg)
{
  Mat_ELLR *e;
  PetscErrorCode (*base)(Mat, PetscBool);
  struct _MatOps before = *A->ops;

  PetscFunctionBegin;

  PetscCall(MatELLRGetData(A, &e));
  PetscCall(MatELLRBase(A, e, bindtocpu, &base));
  if (base) PetscCall((*base)(A, flg));
  if (e) PetscCall(MatELLRPatch(A, e, PETSC_FALSE, NULL, &before));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's assembly may install its I-node products (PETSc 3.18): ours go back over them. */
static PetscErrorCode MatAssemblyEnd_ELLR(Mat A, MatAssemblyType type)
{
  Mat_ELLR *e;
  PetscErrorCode (*base)(Mat, MatAssemblyType);
  struct _MatOps before = *A->ops;

  PetscFunctionBegin;

  PetscCall(MatELLRGetData(A, &e));
  PetscCall(MatELLRBase(A, e, assemblyend, &base));
  if (base) PetscCall((*base)(A, type));
  if (e) PetscCall(MatELLRPatch(A, e, PETSC_FALSE, NULL, &before));
  if (e && type == MAT_FINAL_ASSEMBLY) PetscCall(MatELLRAssembled(A, e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The base type's options, then ours in the same block (so -help lists them under the matrix's prefix). */
PetscErrorCode MatSetFromOptions_ELLR(Mat A, MatELLROptionItems PetscOptionsObject)
{
  Mat_ELLR       *e;
  MatELLRSettings s;
  PetscErrorCode (*base)(Mat, MatELLROptionItems);

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  PetscCall(MatELLRBase(A, e, setfromoptions, &base));
  if (base) PetscCall((*base)(A, PetscOptionsObject));
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  s = e->settings;
  PetscCall(MatELLRSettingsFromOptions(A, PetscOptionsObject, &s));
  if (!MatELLRSettingsEqual(&s, &e->settings)) {
    PetscCall(MatELLRFreeStorage(e));
    e->settings = s;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The base type's view; *e is set where -mat_view ::ascii_info is to say the format as well (MatGetType() names the
   base type): the sequential and MPI views then print the storage. */
PetscErrorCode MatELLRViewBase(Mat A, PetscViewer viewer, Mat_ELLR **e)
{
  PetscViewerFormat format;
  PetscBool         ascii;
  PetscErrorCode (*base)(Mat, PetscViewer);

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, e));
  PetscCall(MatELLRBase(A, *e, view, &base));
  if (base) PetscCall((*base)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) *e = NULL;
  if (!*e) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) *e = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Two names for one assembly: the slot tells the format of a matrix whose container a header merge lost. */
PetscErrorCode MatAssemblyEnd_ELLRT(Mat A, MatAssemblyType type)
{
  return MatAssemblyEnd_ELLR(A, type);
}

PetscErrorCode MatAssemblyEnd_PELLR(Mat A, MatAssemblyType type)
{
  return MatAssemblyEnd_ELLR(A, type);
}
