/*
  ellrmpi.c - the operations an MPI matrix of the petsc-ellr types puts over MPIAIJ's (MPIAIJCUSPARSE's).

  The product is MPIAIJ's (its scatter Mvctx into lvec, the diagonal block multiplied meanwhile, then the off-diagonal
  block: the overlap of pJDS's MPI product, Kreutzer et al. 2012), or with CUDA vectors on one GPU per rank NCCL's
  exchange (src/mat/utils/ellrhalo).  Before each product this file makes sure that the blocks PETSc made carry the
  library with the matrix's settings and that their storage is current before any communication starts (a set-up that
  fails returns with no message outstanding).  The off-diagonal block stores its non-empty rows only, sorted and sliced.
*/
#include "../ellrimpl.h"
#include "../../../utils/ellrhalo/ellrhalo.h"

static PetscErrorCode MatELLRMPIOperation(Mat, Vec, Vec, Vec, PetscBool);

static PetscErrorCode MatMult_MPIELLR(Mat A, Vec x, Vec y)
{
  return MatELLRMPIOperation(A, x, NULL, y, PETSC_FALSE);
}

static PetscErrorCode MatMultAdd_MPIELLR(Mat A, Vec x, Vec z, Vec y)
{
  return MatELLRMPIOperation(A, x, z, y, PETSC_FALSE);
}

static PetscErrorCode MatMultTranspose_MPIELLR(Mat A, Vec x, Vec y)
{
  return MatELLRMPIOperation(A, x, NULL, y, PETSC_TRUE);
}

static PetscErrorCode MatMultTransposeAdd_MPIELLR(Mat A, Vec x, Vec z, Vec y)
{
  return MatELLRMPIOperation(A, x, z, y, PETSC_TRUE);
}

static PetscErrorCode MatView_MPIELLR(Mat, PetscViewer);
static PetscErrorCode MatGetDiagonal_MPIELLR(Mat, Vec);

#define MAT_ELLR_MPI_OPS(asmfn) \
  { \
    MAT_ELLR_OP(mult, MatMult_MPIELLR), MAT_ELLR_OP(multadd, MatMultAdd_MPIELLR), MAT_ELLR_OP(multtranspose, MatMultTranspose_MPIELLR), MAT_ELLR_OP(multtransposeadd, MatMultTransposeAdd_MPIELLR), MAT_ELLR_OP(duplicate, MatDuplicate_ELLR), MAT_ELLR_OP(bindtocpu, MatBindToCPU_ELLR), MAT_ELLR_OP(assemblyend, asmfn), MAT_ELLR_OP(setfromoptions, MatSetFromOptions_ELLR), MAT_ELLR_OP(view, MatView_MPIELLR), MAT_ELLR_OP(getdiagonal, MatGetDiagonal_MPIELLR) \
  }
static const MatELLROp MatELLRMPIOpsELLRT[] = MAT_ELLR_MPI_OPS(MatAssemblyEnd_ELLRT);
static const MatELLROp MatELLRMPIOpsPELLR[] = MAT_ELLR_MPI_OPS(MatAssemblyEnd_PELLR);
#define MAT_ELLR_MPI_NOPS ((PetscInt)(sizeof(MatELLRMPIOpsELLRT) / sizeof(MatELLROp)))

/* Both blocks carry the library with the settings derived from the matrix's; with prepare, their storage is
   current. */
static PetscErrorCode MatELLRMPIAttachBlocks(Mat A, Mat_ELLR *e, PetscBool prepare, PetscBool transpose)
{
  Mat             blk[2];
  MatELLRSettings s[2];
  Mat_ELLR       *be;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], NULL));
  s[0]         = e->settings;
  s[0].offdiag = PETSC_FALSE;
  MatELLRSettingsOffDiag(&e->settings, &s[1]);
  s[0].block = s[1].block = PETSC_TRUE;
  for (PetscInt k = 0; k < 2; k++) {
    if (!blk[k]) continue;
    PetscCall(MatELLRGetData(blk[k], &be));
    if (!be || !MatELLRSettingsEqual(&be->settings, &s[k])) PetscCall(MatELLRAttachSeq(blk[k], &s[k], NULL));
    PetscCall(MatELLRGetData(blk[k], &be));
    if (prepare) PetscCall(MatELLRSeqPrepare(blk[k], be, transpose));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRMPIPrepareBlocks(Mat A, Mat_ELLR *e, PetscBool transpose)
{
  PetscFunctionBegin;
  PetscCall(MatELLRMPIAttachBlocks(A, e, PETSC_TRUE, transpose));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPIAIJ's (the diagonal block's diagonal), with the diagonal block carrying the library first: its MatGetDiagonal()
   does not make aijcusparse's device CSR (ellrseq.c). */
static PetscErrorCode MatGetDiagonal_MPIELLR(Mat A, Vec v)
{
  Mat_ELLR *e;
  PetscErrorCode (*base)(Mat, Vec);

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  if (e && A->assembled && !MatELLRBoundToCPU(A)) PetscCall(MatELLRMPIAttachBlocks(A, e, PETSC_FALSE, PETSC_FALSE));
  PetscCall(MatELLRBaseOp(A, e, offsetof(struct _MatOps, getdiagonal), (MatELLROpFn *)&base));
  PetscCheck(base, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The base type has no MatGetDiagonal()");
  PetscCall((*base)(A, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes an assembled MPI matrix's blocks' storage current ahead of its first product, as that product would.  The
   Krylov loop on several ranks does so before it agrees on NCCL's connection of the exchange's pairs, which it may wait
   for: the build then overlaps a connection still under way, as in PETSc's own loop, where the first product builds
   before its exchange waits.  Not collective, as the product's build is not: a rank that fails here stops its solve
   with an error as the product would. */
PetscErrorCode MatELLRMPIPrepare(Mat A)
{
  Mat_ELLR *e;

  PetscFunctionBegin;
  if (!A->assembled || MatELLRBoundToCPU(A)) PetscFunctionReturn(PETSC_SUCCESS); /* the product says what is wrong, or runs the base type's */
  PetscCall(MatELLRGetData(A, &e));
  if (e && e->mpi) PetscCall(MatELLRMPIPrepareBlocks(A, e, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRMPIOperation(Mat A, Vec x, Vec z, Vec y, PetscBool transpose)
{
  Mat_ELLR *e;
  PetscErrorCode (*mult)(Mat, Vec, Vec), (*multadd)(Mat, Vec, Vec, Vec);
  PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData(A, &e));
  if (e) PetscCall(MatELLRMPIPrepareBlocks(A, e, transpose));
  if (e && !transpose) PetscCall(MatELLRHaloMult(A, x, z, y, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRBaseOp(A, e, transpose ? offsetof(struct _MatOps, multtranspose) : offsetof(struct _MatOps, mult), (MatELLROpFn *)&mult));
  PetscCall(MatELLRBaseOp(A, e, transpose ? offsetof(struct _MatOps, multtransposeadd) : offsetof(struct _MatOps, multadd), (MatELLROpFn *)&multadd));
  if (z) PetscCall((*multadd)(A, x, z, y));
  else PetscCall((*mult)(A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_view ::ascii_info: the base type's view, then the format and the first process's blocks. */
static PetscErrorCode MatView_MPIELLR(Mat A, PetscViewer viewer)
{
  Mat_ELLR   *e, *be;
  PetscViewer sv;
  PetscMPIInt rank;
  Mat         blk[2];

  PetscFunctionBegin;
  PetscCall(MatELLRViewBase(A, viewer, &e));
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRMPIPrepareBlocks(A, e, PETSC_FALSE));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], NULL));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
  PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s on each process's diagonal block, sorted slices of its non-empty rows on the off-diagonal block; the first process's blocks:\n", e->settings.format));
  PetscCall(PetscViewerGetSubViewer(viewer, PETSC_COMM_SELF, &sv));
  for (PetscInt k = 0; k < 2 && !rank; k++) {
    PetscCall(MatELLRGetData(blk[k], &be));
    if (be) PetscCall(MatELLRViewStorage(blk[k], be, sv));
  }
  PetscCall(PetscViewerRestoreSubViewer(viewer, PETSC_COMM_SELF, &sv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Attaches the library to an MPIAIJ (MPIAIJCUSPARSE) matrix; its blocks follow at the first product. */
PetscErrorCode MatELLRAttachMPI(Mat A, const MatELLRSettings *s, Mat_ELLR *src)
{
  PetscFunctionBegin;
  /* after a final assembly the exchange's pairs connect, ahead of the first product */
  PetscCall(MatELLRSetOpsTable(PETSC_TRUE, PETSC_FALSE, MatELLRMPIOpsELLRT, MAT_ELLR_MPI_NOPS, MatELLRHaloConnect));
  PetscCall(MatELLRSetOpsTable(PETSC_TRUE, PETSC_TRUE, MatELLRMPIOpsPELLR, MAT_ELLR_MPI_NOPS, MatELLRHaloConnect));
  PetscCall(MatELLRAttachOps(A, s, MatELLRIsPELLR(s) ? MatELLRMPIOpsPELLR : MatELLRMPIOpsELLRT, MAT_ELLR_MPI_NOPS, src, NULL));
  PetscCall(MatELLRHaloStart(A)); /* NCCL's set-up, where it will run, overlaps the assembly instead of the products */
  PetscFunctionReturn(PETSC_SUCCESS);
}
