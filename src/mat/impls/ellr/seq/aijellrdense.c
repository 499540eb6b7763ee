/*
  aijellrdense.c - C = A B with B dense (MatMatMult, MatProductNumeric with MATPRODUCT_AB: KSPMatSolve, block Krylov
  methods, SLEPc) on the ELLPACK-R storage, for MATSEQAIJELLRT / MATSEQAIJPELLR on the aijcusparse base.

  aijcusparse answers such a product with cuSPARSE's SpMM on its CSR.  The engine's one-pass kernel
  (ellr_cuda_mult_dense) reads each stored entry once for every 4 columns; it is used where it applies -- a product AB with
  B and C dense CUDA matrices, the storage on the GPU in the sliced layout with no long rows -- and aijcusparse's
  SpMM everywhere else (the CSR kernel families hold the same CSR cuSPARSE multiplies; other product types, host
  matrices).  Measured on the H100 against cuSPARSE's SpMM: doc/performance.md, "Sparse x dense".
*/
#include "../ellrimpl.h"

#if defined(PETSCELLR_CUSPARSE_BASE)
  #include "ellr_cuda.h"

/* Whether the numeric phase of C's product may run on the storage: set at the symbolic phase, from the product's type
   and C's type before aijcusparse's symbolic phase made it a MATSEQDENSECUDA (a host C goes back to the host at the end
   of aijcusparse's numeric phase, which is left to do that). */
PetscErrorCode MatProductDenseApplies_SeqAIJELLR(Mat C, PetscBool *applies)
{
  Mat_Product *p = C->product;
  PetscBool    bdense, chost;

  PetscFunctionBegin;
  *applies = PETSC_FALSE;
  if (!p || p->type != MATPRODUCT_AB || !MatSeqAIJELLRGetData(p->A)) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)p->B, &bdense, MATSEQDENSE, MATSEQDENSECUDA, ""));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSE, &chost));
  *applies = (PetscBool)(bdense && !chost);
  PetscFunctionReturn(0);
}

/* C = A B on A's storage when it can (*done), else nothing is done and aijcusparse's SpMM is to run. */
PetscErrorCode MatMatMultDense_SeqAIJELLR(Mat A, Mat B, Mat C, PetscBool *done)
{
  Mat_SeqAIJELLR    *e = MatSeqAIJELLRGetData(A);
  PetscBool          bcuda, ccuda;
  const PetscScalar *b;
  PetscScalar       *c;
  PetscMemType       bmt, cmt;
  PetscInt           ldb, ldc, k;
  void              *stream;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (!e || !e->cusparse) PetscFunctionReturn(0);
  PetscCall(MatSeqAIJELLRResolve(A, e));
  if (e->backend != MAT_ELLR_BACKEND_CUDA || MatELLRBoundToCPUFlag(A)) {
    PetscCall(PetscInfo(A, "C = A B by the base class: the matrix is bound to the CPU or its products are not on the GPU\n"));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQDENSECUDA, &bcuda));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSECUDA, &ccuda));
  if (!bcuda || !ccuda || B->boundtocpu || C->boundtocpu) {
    PetscCall(PetscInfo(A, "C = A B by cuSPARSE's SpMM: B or C is not a dense CUDA matrix on the GPU\n"));
    PetscFunctionReturn(0);
  }
  PetscCheck(B->rmap->n == A->cmap->n && C->rmap->n == A->rmap->n && C->cmap->n == B->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "C = A B with A %" PetscInt_FMT " x %" PetscInt_FMT ", B %" PetscInt_FMT " x %" PetscInt_FMT ", C %" PetscInt_FMT " x %" PetscInt_FMT ": recreate C with MatMatMult(A, B, MAT_INITIAL_MATRIX, ...)", A->rmap->n, A->cmap->n, B->rmap->n, B->cmap->n, C->rmap->n, C->cmap->n);
  PetscCall(MatSeqAIJELLRUpdate(A));
  if (!e->dev || !ellr_cuda_dense_one_pass(e->dev)) {
    PetscCall(PetscInfo(A, "C = A B by cuSPARSE's SpMM: the storage is a CSR kernel family or has long rows\n"));
    PetscFunctionReturn(0);
  }
  k = B->cmap->n;
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(C, &ldc));
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(MatDenseGetArrayReadAndMemType(B, &b, &bmt));
  PetscCall(MatDenseGetArrayWriteAndMemType(C, &c, &cmt));
  if (PetscMemTypeDevice(bmt) && PetscMemTypeDevice(cmt)) {
    const ellr_plan *pl = ellr_cuda_plan(e->dev);
    PetscCall(PetscLogEventBegin(MAT_ELLRMatMult, A, B, C, 0));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCall(MatELLRCheckStatus(ellr_cuda_mult_dense(e->dev, (int32_t)k, b, (int64_t)ldb, c, (int64_t)ldc, stream), "C = A B on the GPU"));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)(pl ? pl->stats.nnz : 0) * (PetscLogDouble)k));
    PetscCall(PetscLogEventEnd(MAT_ELLRMatMult, A, B, C, 0));
    e->nproducts++;
    *done = PETSC_TRUE;
  }
  PetscCall(MatDenseRestoreArrayWriteAndMemType(C, &c));
  PetscCall(MatDenseRestoreArrayReadAndMemType(B, &b));
  PetscFunctionReturn(0);
}
#endif
