/*
  mpiaijellr.c - MATMPIAIJELLRT and MATMPIAIJPELLR: MPIAIJ matrices whose diagonal and off-diagonal
  blocks are the sequential ELLPACK-R types.

  The diagonal block takes the matrix's format; the off-diagonal block is always sorted and sliced
  (PELLR), since most of its rows are empty and full-width ELLPACK-R would pad every one of them.
  A product overlaps the ghost exchange with the diagonal block's product, as MatMult_MPIAIJ and
  pJDS (seed 002) do.  The ghost vector has the type of the vectors the products run on (VECSEQCUDA
  with a CUDA-enabled PETSc), so on the GPU only the ghost values cross PCIe.
*/
#include "../ellrimpl.h"

typedef struct {
  MatELLRSettings  settings;
  struct _MatOps   baseops;
  VecScatter       ghostscatter; /* x (global) -> ghosts, from the off-diagonal block's column map */
  Vec              ghosts;
  PetscObjectState scatter_nzstate;
} Mat_MPIAIJELLR;

/* The off-diagonal block's settings: the parent's backend and block size, sorted 32-row slices. */
static PetscErrorCode MatMPIAIJELLROffDiagSettings(const MatELLRSettings *parent, MatELLRSettings *s)
{
  PetscFunctionBegin;
  PetscCall(MatELLRSettingsDefault(MAT_ELLR_FORMAT_PELLR, s));
  s->backend        = parent->backend;
  s->eng.block_size = parent->eng.block_size;
  s->eng.max_fill   = 0; /* its fill is bounded by the slicing; empty rows cost nothing */
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMPIAIJELLRSetUpBlock(Mat blk, const MatELLRSettings *s)
{
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)blk, MatELLRTypeName(s->format, PETSC_FALSE), &same));
  if (same) PetscCall(MatSeqAIJELLRSetSettings(blk, s));
  else {
    PetscCall(PetscObjectTypeCompare((PetscObject)blk, MATSEQAIJ, &same));
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unexpected block type %s in a %s matrix", ((PetscObject)blk)->type_name, MatELLRTypeName(s->format, PETSC_TRUE));
    PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(blk, s->format, s, MAT_INPLACE_MATRIX, &blk));
  }
  PetscFunctionReturn(0);
}

/* Blocks of this type with the current settings, and a ghost scatter for the current pattern.
   Cheap when nothing changed; MPIAIJ replaces its off-diagonal block when a new off-process
   nonzero arrives after assembly, so this runs before every product too. */
static PetscErrorCode MatMPIAIJELLRSetUp(Mat A, Mat *Ad, Mat *Ao)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;
  MatELLRSettings so;
  const PetscInt *garray;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, &garray));
  PetscCall(MatMPIAIJELLRSetUpBlock(*Ad, &m->settings));
  PetscCall(MatMPIAIJELLROffDiagSettings(&m->settings, &so));
  PetscCall(MatMPIAIJELLRSetUpBlock(*Ao, &so));
  if (!m->ghostscatter || m->scatter_nzstate != A->nonzerostate) {
    const PetscInt nghost = (*Ao)->cmap->n;
    Vec            xt;
    IS             is;
    MatELLRBackend backend;
    VecType        gtype = VECSEQ;

    PetscCall(VecScatterDestroy(&m->ghostscatter));
    PetscCall(VecDestroy(&m->ghosts));
    PetscCall(MatELLRResolveBackend(m->settings.backend, &backend));
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
    if (backend == MAT_ELLR_BACKEND_CUDA) gtype = VECSEQCUDA;
#endif
    PetscCall(VecCreate(PETSC_COMM_SELF, &m->ghosts));
    PetscCall(VecSetSizes(m->ghosts, nghost, nghost));
    PetscCall(VecSetType(m->ghosts, gtype));
    PetscCall(MatCreateVecs(A, &xt, NULL));
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, garray, PETSC_COPY_VALUES, &is));
    PetscCall(VecScatterCreate(xt, is, m->ghosts, NULL, &m->ghostscatter));
    PetscCall(ISDestroy(&is));
    PetscCall(VecDestroy(&xt));
    m->scatter_nzstate = A->nonzerostate;
  }
  PetscFunctionReturn(0);
}

/* y = A x + z: ghosts travel while the diagonal block multiplies. */
static PetscErrorCode MatMultKernel_MPIAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;
  Mat             Ad, Ao;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJELLRSetUp(A, &Ad, &Ao));
  PetscCall(VecScatterBegin(m->ghostscatter, x, m->ghosts, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(MatMultKernel_SeqAIJELLR(Ad, x, z, y, PETSC_FALSE));
  PetscCall(VecScatterEnd(m->ghostscatter, x, m->ghosts, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(MatMultKernel_SeqAIJELLR(Ao, m->ghosts, y, y, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* y = A^T x + z.  The diagonal block's product comes before the reverse scatter into y begins: a device
   product takes y for writing, which PETSc refuses while a scatter holds it. */
static PetscErrorCode MatMultTransposeKernel_MPIAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;
  Mat             Ad, Ao;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJELLRSetUp(A, &Ad, &Ao));
  PetscCall(MatMultKernel_SeqAIJELLR(Ao, x, NULL, m->ghosts, PETSC_TRUE));
  PetscCall(MatMultKernel_SeqAIJELLR(Ad, x, z, y, PETSC_TRUE));
  PetscCall(VecScatterBegin(m->ghostscatter, m->ghosts, y, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(m->ghostscatter, m->ghosts, y, ADD_VALUES, SCATTER_REVERSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMult_MPIAIJELLR(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_MPIAIJELLR(A, x, NULL, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultAdd_MPIAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_MPIAIJELLR(A, x, z, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTranspose_MPIAIJELLR(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeKernel_MPIAIJELLR(A, x, NULL, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTransposeAdd_MPIAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeKernel_MPIAIJELLR(A, x, z, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatAssemblyEnd_MPIAIJELLR(Mat A, MatAssemblyType mode)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;
  Mat             Ad, Ao;

  PetscFunctionBegin;
  PetscCall((*m->baseops.assemblyend)(A, mode));
  if (mode == MAT_FINAL_ASSEMBLY) PetscCall(MatMPIAIJELLRSetUp(A, &Ad, &Ao));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetFromOptions_MPIAIJELLR(Mat A, MatELLROptionItems PetscOptionsObject)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;

  PetscFunctionBegin;
  if (m->baseops.setfromoptions) PetscCall((*m->baseops.setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatELLRSettingsSetFromOptions(A, &m->settings)); /* the blocks take them at the next set-up */
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_MPIAIJELLR(Mat A, PetscViewer viewer)
{
  Mat_MPIAIJELLR   *m = (Mat_MPIAIJELLR *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat format;
  Mat               Ad, Ao;

  PetscFunctionBegin;
  PetscCall((*m->baseops.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(0);
  PetscCall(MatMPIAIJELLRSetUp(A, &Ad, &Ao));
  PetscCall(PetscViewerASCIIPrintf(viewer, "process 0, diagonal block:\n"));
  PetscCall(MatSeqAIJELLRView_Info(Ad, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "process 0, off-diagonal block (%" PetscInt_FMT " ghost columns):\n", Ao->cmap->n));
  PetscCall(MatSeqAIJELLRView_Info(Ao, viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRGetProductCount_MPIAIJELLR(Mat A, PetscInt *count)
{
  Mat Ad, Ao;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  *count = 0;
  if (Ad->spptr) PetscCall(MatELLRGetProductCount(Ad, count));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRGetBackend_MPIAIJELLR(Mat A, MatELLRBackend *backend)
{
  Mat Ad, Ao;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  *backend = MAT_ELLR_BACKEND_AUTO;
  if (Ad->spptr) PetscCall(MatELLRGetBackend(Ad, backend));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMPIAIJELLRCompose(Mat A, MatELLRFormat format, PetscBool on);

static PetscErrorCode MatMPIAIJELLRFree(Mat A)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;

  PetscFunctionBegin;
  PetscCall(VecScatterDestroy(&m->ghostscatter));
  PetscCall(VecDestroy(&m->ghosts));
  PetscCall(MatMPIAIJELLRCompose(A, m->settings.format, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDestroy_MPIAIJELLR(Mat A)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;

  PetscFunctionBegin;
  A->ops->destroy = m->baseops.destroy;
  PetscCall(MatMPIAIJELLRFree(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDuplicate_MPIAIJELLR(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;

  PetscFunctionBegin;
  /* MPIAIJ's duplicate makes a matrix of A's type name with duplicates of A's (ELLR) blocks */
  PetscCall((*m->baseops.duplicate)(A, op, B));
  ((Mat_MPIAIJELLR *)(*B)->spptr)->settings = m->settings;
  PetscFunctionReturn(0);
}

/* Back to MPIAIJ, blocks included. */
static PetscErrorCode MatConvert_MPIAIJELLR_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat             B, Ad, Ao;
  Mat_MPIAIJELLR *m;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  m = (Mat_MPIAIJELLR *)B->spptr;
  PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, NULL));
  if (Ad->spptr) PetscCall(MatConvert_SeqAIJELLR_SeqAIJ(Ad, MATSEQAIJ, MAT_INPLACE_MATRIX, &Ad));
  if (Ao->spptr) PetscCall(MatConvert_SeqAIJELLR_SeqAIJ(Ao, MATSEQAIJ, MAT_INPLACE_MATRIX, &Ao));
  PetscCall(MatELLRRestoreBaseOps(B, &m->baseops));
  PetscCall(MatMPIAIJELLRFree(B));
  PetscCall(MatELLRSetDefaultVecType(B, NULL));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATMPIAIJ));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIAIJELLR_Format(Mat, MatELLRFormat, MatReuse, Mat *);

static PetscErrorCode MatConvert_MPIAIJ_MPIAIJELLRT(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_MPIAIJ_MPIAIJELLR_Format(A, MAT_ELLR_FORMAT_ELLRT, reuse, newmat));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIAIJPELLR(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_MPIAIJ_MPIAIJELLR_Format(A, MAT_ELLR_FORMAT_PELLR, reuse, newmat));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMPIAIJELLRCompose(Mat A, MatELLRFormat format, PetscBool on)
{
  const PetscBool pellr = (PetscBool)(format == MAT_ELLR_FORMAT_PELLR);
  PetscErrorCode (*from_aij)(Mat, MatType, MatReuse, Mat *) = !on ? NULL : pellr ? MatConvert_MPIAIJ_MPIAIJPELLR : MatConvert_MPIAIJ_MPIAIJELLRT;

  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_mpiaij_pellr_C" : "MatConvert_mpiaij_ellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_mpiaij_mpipellr_C" : "MatConvert_mpiaij_mpiellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_mpiaij_mpiaijpellr_C" : "MatConvert_mpiaij_mpiaijellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_mpiaijpellr_mpiaij_C" : "MatConvert_mpiaijellrt_mpiaij_C", on ? MatConvert_MPIAIJELLR_MPIAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRGetProductCount_C", on ? MatELLRGetProductCount_MPIAIJELLR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRGetBackend_C", on ? MatELLRGetBackend_MPIAIJELLR : NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIAIJELLR_Format(Mat A, MatELLRFormat format, MatReuse reuse, Mat *newmat)
{
  Mat             B;
  Mat_MPIAIJELLR *m;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  PetscCheck(!B->spptr, PetscObjectComm((PetscObject)B), PETSC_ERR_ARG_WRONG, "Cannot convert a matrix that already carries GPU or other extra data (type %s) to %s: convert it to MATMPIAIJ first", ((PetscObject)B)->type_name, MatELLRTypeName(format, PETSC_TRUE));
  PetscCall(PetscNew(&m));
  B->spptr   = m;
  m->baseops = *B->ops;
  PetscCall(MatELLRSettingsDefault(format, &m->settings));
  PetscCall(MatELLRSettingsSetFromOptions(B, &m->settings));
  B->ops->mult             = MatMult_MPIAIJELLR;
  B->ops->multadd          = MatMultAdd_MPIAIJELLR;
  B->ops->multtranspose    = MatMultTranspose_MPIAIJELLR;
  B->ops->multtransposeadd = MatMultTransposeAdd_MPIAIJELLR;
  B->ops->assemblyend      = MatAssemblyEnd_MPIAIJELLR;
  B->ops->destroy          = MatDestroy_MPIAIJELLR;
  B->ops->duplicate        = MatDuplicate_MPIAIJELLR;
  B->ops->setfromoptions   = MatSetFromOptions_MPIAIJELLR;
  B->ops->view             = MatView_MPIAIJELLR;
  PetscCall(MatMPIAIJELLRCompose(B, format, PETSC_TRUE));
  PetscCall(MatELLRSetDefaultVecType(B, &m->settings.backend));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MatELLRTypeName(format, PETSC_TRUE)));
  if (B->assembled) {
    Mat Ad, Ao;
    PetscCall(MatMPIAIJELLRSetUp(B, &Ad, &Ao));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_MPIAIJELLRT(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPIAIJELLR_Format(A, MAT_ELLR_FORMAT_ELLRT, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_MPIAIJPELLR(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPIAIJELLR_Format(A, MAT_ELLR_FORMAT_PELLR, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}
