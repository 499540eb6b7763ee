/* ellrseq.c - the operations a sequential matrix (or a block of an MPI one) of the petsc-ellr types puts over its base
   type's: the four products on the ELLPACK-R storage, or, bound to the CPU or with backend aij, the base type's own. */
#include "../ellrimpl.h"

static PetscErrorCode MatELLRSeqOperation(Mat, Vec, Vec, Vec, PetscBool);

static PetscErrorCode MatMult_SeqELLR(Mat A, Vec x, Vec y)
{
  return MatELLRSeqOperation(A, x, NULL, y, PETSC_FALSE);
}

static PetscErrorCode MatMultAdd_SeqELLR(Mat A, Vec x, Vec z, Vec y)
{
  return MatELLRSeqOperation(A, x, z, y, PETSC_FALSE);
}

static PetscErrorCode MatMultTranspose_SeqELLR(Mat A, Vec x, Vec y)
{
  return MatELLRSeqOperation(A, x, NULL, y, PETSC_TRUE);
}

static PetscErrorCode MatMultTransposeAdd_SeqELLR(Mat A, Vec x, Vec z, Vec y)
{
  return MatELLRSeqOperation(A, x, z, y, PETSC_TRUE);
}

/* -mat_view ::ascii_info: the base type's view, then the format and the storage. */
static PetscErrorCode MatView_SeqELLR(Mat A, PetscViewer viewer)
{
  Mat_ELLR *e;

  PetscFunctionBegin;
  PetscCall(MatELLRViewBase(A, viewer, &e));
  if (e) PetscCall(MatELLRViewStorage(A, e, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal (PCJACOBI's set-up) without making aijcusparse's device CSR: where the host holds the only current
   values (MatELLRHostOnly), from the GPU storage into a CUDA vector (made now if it was not: the first product would
   make it), or, for a host vector, from the host CSR, a binary search in each row (AIJ keeps a row's columns
   increasing); otherwise the base type's (aijcusparse's kernel on its existing device CSR, AIJ's on the host). */
static PetscErrorCode MatGetDiagonal_SeqELLR(Mat A, Vec v)
{
  Mat_ELLR *e;
  PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  if (e) PetscCall(MatELLRResolve(e));
  if (MatELLRHostOnly(A, e)) PetscCall(MatELLRSeqDiagonal(A, e, v, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  if (MatELLRHostOnly(A, e)) {
    const PetscInt    *ia, *ja;
    const PetscScalar *aa;
    PetscScalar       *d;
    PetscInt           n;
    PetscBool          done;

    PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on a sequential AIJ matrix");
    PetscCall(MatSeqAIJGetArrayRead(A, &aa));
    PetscCall(VecGetArrayWrite(v, &d));
    for (PetscInt i = 0; i < n; i++) {
      PetscInt lo = ia[i], hi = ia[i + 1];

      while (lo < hi) {
        const PetscInt mid = lo + (hi - lo) / 2;

        if (ja[mid] < i) lo = mid + 1;
        else hi = mid;
      }
      d[i] = lo < ia[i + 1] && ja[lo] == i ? aa[lo] : 0.0;
    }
    PetscCall(VecRestoreArrayWrite(v, &d));
    PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
    PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  } else {
    PetscErrorCode (*base)(Mat, Vec);

    PetscCall(MatELLRBaseOp(A, e, offsetof(struct _MatOps, getdiagonal), (MatELLROpFn *)&base));
    PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_SUP, "The base type has no MatGetDiagonal()");
    PetscCall((*base)(A, v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The assembly slot differs between the two formats (ellrpatch.c). */
#define MAT_ELLR_SEQ_OPS(asmfn) \
  { \
    MAT_ELLR_OP(mult, MatMult_SeqELLR), MAT_ELLR_OP(multadd, MatMultAdd_SeqELLR), MAT_ELLR_OP(multtranspose, MatMultTranspose_SeqELLR), MAT_ELLR_OP(multtransposeadd, MatMultTransposeAdd_SeqELLR), MAT_ELLR_OP(duplicate, MatDuplicate_ELLR), MAT_ELLR_OP(bindtocpu, MatBindToCPU_ELLR), MAT_ELLR_OP(assemblyend, asmfn), MAT_ELLR_OP(setfromoptions, MatSetFromOptions_ELLR), MAT_ELLR_OP(view, MatView_SeqELLR), MAT_ELLR_OP(getdiagonal, MatGetDiagonal_SeqELLR) \
  }
static const MatELLROp MatELLRSeqOpsELLRT[] = MAT_ELLR_SEQ_OPS(MatAssemblyEnd_ELLRT);
static const MatELLROp MatELLRSeqOpsPELLR[] = MAT_ELLR_SEQ_OPS(MatAssemblyEnd_PELLR);
#define MAT_ELLR_SEQ_NOPS ((PetscInt)(sizeof(MatELLRSeqOpsELLRT) / sizeof(MatELLROp)))

static PetscErrorCode MatELLRSeqOperation(Mat A, Vec x, Vec z, Vec y, PetscBool transpose)
{
  Mat_ELLR *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  if (e) PetscCall(MatELLRResolve(e));
  if (!e || e->backend == MAT_ELLR_BACKEND_AIJ || MatELLRBoundToCPU(A)) {
    PetscErrorCode (*mult)(Mat, Vec, Vec), (*multadd)(Mat, Vec, Vec, Vec);
    /* aijcusparse (PETSc 3.26) forms y = A^T x + z with y != z as A^T x + (old y) + z: the sum is made in y */
    const PetscBool iny = (PetscBool)(PetscDefined(HAVE_CUDA) && transpose && z && z != y && !MatELLRBoundToCPU(A));

    PetscCall(MatELLRBaseOp(A, e, transpose ? offsetof(struct _MatOps, multtranspose) : offsetof(struct _MatOps, mult), (MatELLROpFn *)&mult));
    PetscCall(MatELLRBaseOp(A, e, transpose ? offsetof(struct _MatOps, multtransposeadd) : offsetof(struct _MatOps, multadd), (MatELLROpFn *)&multadd));
    if (iny) PetscCall(VecCopy(z, y));
    if (z) PetscCall((*multadd)(A, x, iny ? y : z, y));
    else PetscCall((*mult)(A, x, y));
  } else PetscCall(MatELLRSeqProduct(A, e, x, z, y, transpose));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's MatRetrieveValues() puts stored values back on the host; PETSc 3.18 leaves the object state as it was, which
   the storage compares, and aijcusparse's device copy is not marked stale (PETSc 3.26): both are done here. */
/* AIJ's own methods, kept from the first matrix wrapped: the base of a matrix that has since lost the format (a
   conversion to aijperm keeps AIJ's composed methods, ours among them) */
static PetscErrorCode (*MatELLRAIJRetrieve)(Mat);
static PetscErrorCode (*MatELLRAIJColumnIndices)(Mat, PetscInt *);

static PetscErrorCode MatRetrieveValues_SeqELLR(Mat A)
{
  Mat_ELLR *e;
  PetscErrorCode (*base)(Mat);

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  base = e && e->baseretrieve ? e->baseretrieve : MatELLRAIJRetrieve;
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-ellr: MatRetrieveValues() without AIJ's");
  PetscCall((*base)(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
#if defined(PETSC_HAVE_DEVICE)
  if (A->offloadmask != PETSC_OFFLOAD_UNALLOCATED) A->offloadmask = PETSC_OFFLOAD_CPU; /* the host values are the new ones */
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSeqAIJSetColumnIndices() replaces the column indices without a new nonzero state: the storage is rebuilt, and the
   state raised so that aijcusparse uploads the new pattern too. */
static PetscErrorCode MatSeqAIJSetColumnIndices_SeqELLR(Mat A, PetscInt *indices)
{
  Mat_ELLR *e;
  PetscErrorCode (*base)(Mat, PetscInt *);

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  base = e && e->basecolumnindices ? e->basecolumnindices : MatELLRAIJColumnIndices;
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-ellr: MatSeqAIJSetColumnIndices() without AIJ's");
  PetscCall((*base)(A, indices));
  if (e) PetscCall(MatELLRFreeStorage(e));
  /* a new pattern on the host: aijcusparse uploads it again only for a new nonzero state and the host marked current */
  A->nonzerostate++;
#if defined(PETSC_HAVE_DEVICE)
  if (A->offloadmask != PETSC_OFFLOAD_UNALLOCATED) A->offloadmask = PETSC_OFFLOAD_CPU;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Puts our wrapper over AIJ's composed method name (the name AIJ composes and removes itself, so nothing is left
   behind); the base is A's own, or src's where A already carries the wrapper (a copy). */
static PetscErrorCode MatELLRWrapComposed(Mat A, const char name[], MatELLROpFn wrapper, MatELLROpFn *base, MatELLROpFn srcbase)
{
  MatELLROpFn f = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, name, &f));
  if (!f) PetscFunctionReturn(PETSC_SUCCESS);
  if (f != wrapper) *base = f;
  else if (!*base) *base = srcbase;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, wrapper));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Attaches the library to a sequential AIJ (aijcusparse) matrix with settings s; src: the matrix it was copied from.
   Besides the operations, two of AIJ's composed methods are wrapped (MatRetrieveValues, MatSeqAIJSetColumnIndices). */
PetscErrorCode MatELLRAttachSeq(Mat A, const MatELLRSettings *s, Mat_ELLR *src)
{
  Mat_ELLR *e;

  PetscFunctionBegin;
  PetscCall(MatELLRSetOpsTable(PETSC_FALSE, PETSC_FALSE, MatELLRSeqOpsELLRT, MAT_ELLR_SEQ_NOPS, NULL));
  PetscCall(MatELLRSetOpsTable(PETSC_FALSE, PETSC_TRUE, MatELLRSeqOpsPELLR, MAT_ELLR_SEQ_NOPS, NULL));
  PetscCall(MatELLRAttachOps(A, s, MatELLRIsPELLR(s) ? MatELLRSeqOpsPELLR : MatELLRSeqOpsELLRT, MAT_ELLR_SEQ_NOPS, src, &e));
  PetscCall(MatELLRWrapComposed(A, "MatRetrieveValues_C", (MatELLROpFn)MatRetrieveValues_SeqELLR, (MatELLROpFn *)&e->baseretrieve, src ? (MatELLROpFn)src->baseretrieve : NULL));
  PetscCall(MatELLRWrapComposed(A, "MatSeqAIJSetColumnIndices_C", (MatELLROpFn)MatSeqAIJSetColumnIndices_SeqELLR, (MatELLROpFn *)&e->basecolumnindices, src ? (MatELLROpFn)src->basecolumnindices : NULL));
  if (!MatELLRAIJRetrieve) MatELLRAIJRetrieve = e->baseretrieve;
  if (!MatELLRAIJColumnIndices) MatELLRAIJColumnIndices = e->basecolumnindices;
  PetscFunctionReturn(PETSC_SUCCESS);
}
