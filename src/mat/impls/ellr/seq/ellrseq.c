/*
  ellrseq.c - the operations a sequential matrix (or a block of an MPI one) of the petsc-ellr types puts over its
  base type's: the four products run on the ELLPACK-R storage, unless the matrix is bound to the CPU or its backend
  is aij, where they are the base type's own.
*/
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

/* The assembly slot differs between the two formats (ellrpatch.c). */
#define MAT_ELLR_SEQ_OPS(asmfn) \
  { \
    MAT_ELLR_OP(mult, MatMult_SeqELLR), MAT_ELLR_OP(multadd, MatMultAdd_SeqELLR), MAT_ELLR_OP(multtranspose, MatMultTranspose_SeqELLR), MAT_ELLR_OP(multtransposeadd, MatMultTransposeAdd_SeqELLR), MAT_ELLR_OP(duplicate, MatDuplicate_ELLR), MAT_ELLR_OP(bindtocpu, MatBindToCPU_ELLR), MAT_ELLR_OP(assemblyend, asmfn), MAT_ELLR_OP(setfromoptions, MatSetFromOptions_ELLR), MAT_ELLR_OP(view, MatView_SeqELLR) \
  }
static const MatELLROp MatELLRSeqOpsELLRT[] = MAT_ELLR_SEQ_OPS(MatAssemblyEnd_ELLRT);
static const MatELLROp MatELLRSeqOpsPELLR[] = MAT_ELLR_SEQ_OPS(MatAssemblyEnd_PELLR);
#define MAT_ELLR_SEQ_NOPS ((PetscInt)(sizeof(MatELLRSeqOpsELLRT) / sizeof(MatELLROp)))

static PetscErrorCode MatELLRSeqOperation(Mat A, Vec x, Vec z, Vec y, PetscBool transpose)
{
  Mat_ELLR *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetDataOrRecover(A, A->ops->assemblyend == MatAssemblyEnd_PELLR ? MatELLRSeqOpsPELLR : MatELLRSeqOpsELLRT, MAT_ELLR_SEQ_NOPS, &e));
  PetscCall(MatELLRResolve(e));
  if (e->backend == MAT_ELLR_BACKEND_AIJ || MatELLRBoundToCPU(A)) {
    if (!transpose) {
      if (z) PetscCall((*e->base.multadd)(A, x, z, y));
      else PetscCall((*e->base.mult)(A, x, y));
    } else {
      if (z) PetscCall((*e->base.multtransposeadd)(A, x, z, y));
      else PetscCall((*e->base.multtranspose)(A, x, y));
    }
  } else PetscCall(MatELLRSeqProduct(A, e, x, z, y, transpose));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Attaches the library to a sequential AIJ (aijcusparse) matrix with settings s; src: the matrix it was copied from. */
PetscErrorCode MatELLRAttachSeq(Mat A, const MatELLRSettings *s, Mat_ELLR *src)
{
  PetscFunctionBegin;
  PetscCall(MatELLRAttachOps(A, s, MatELLRIsPELLR(s) ? MatELLRSeqOpsPELLR : MatELLRSeqOpsELLRT, MAT_ELLR_SEQ_NOPS, src, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}
