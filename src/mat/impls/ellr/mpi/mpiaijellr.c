/*
  mpiaijellr.c - MATMPIAIJELLRT and MATMPIAIJPELLR: MPIAIJ matrices whose diagonal and off-diagonal blocks
  are the sequential ELLPACK-R types.

  As MPIAIJSELL and MPIAIJPERM do, the parallel type adds nothing to MPIAIJ's product: MatMult_MPIAIJ
  starts the ghost exchange on MPIAIJ's own scatter (Mvctx) into its ghost vector (lvec), multiplies the
  diagonal block meanwhile and adds the off-diagonal block's product of the ghosts.  PETSc keeps Mvctx and
  lvec current through every re-preallocation, COO assembly and new pattern; this type only makes sure
  that the blocks PETSc creates are ELLPACK-R blocks with this matrix's settings, before any product.

  The diagonal block takes the matrix's format; the off-diagonal block is always sorted and sliced (PELLR
  settings), since most of its rows are empty and full-width ELLPACK-R would pad every one of them.
*/
#include "../ellrimpl.h"

#define MAT_MPIAIJELLR_MAGIC 0x454c4c524d504931LL /* "ELLRMPI1" */
typedef struct {
  PetscInt64      magic; /* tells this type's spptr from another matrix's after a header merge */
  MatELLRSettings settings;
  MatELLRFormat   typeformat;
  Mat             owner; /* the matrix whose options the settings came from (a header merge moves the data) */
  struct _MatOps  baseops;
  PetscErrorCode (*baseprealloc)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[]);
  PetscErrorCode (*basecoo)(Mat, PetscCount, PetscInt[], PetscInt[]);
  PetscBool cusparse; /* the base is MATMPIAIJCUSPARSE (a CUDA PETSc, the CUDA backend), its blocks aijcusparse-based */
} Mat_MPIAIJELLR;

static struct _MatOps MatMPIAIJELLR_AIJOps;
static PetscBool      MatMPIAIJELLR_AIJOpsCaptured = PETSC_FALSE;

/* Products of both blocks on their ELLPACK-R storage: the smaller count, so that one that fell back to AIJ
   shows.  (With the AIJ backend neither counts.) */
static PetscErrorCode MatELLRGetProductCount_MPIAIJELLR(Mat A, PetscInt *count)
{
  Mat      Ad, Ao;
  PetscInt cd = 0, co = 0;

  PetscFunctionBegin;
  *count = 0;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (!Ad || !Ao) PetscFunctionReturn(0);
  if (MatSeqAIJELLRGetData(Ad)) PetscCall(MatELLRGetProductCount_SeqAIJELLR(Ad, &cd));
  if (MatSeqAIJELLRGetData(Ao)) PetscCall(MatELLRGetProductCount_SeqAIJELLR(Ao, &co));
  *count = PetscMin(cd, co);
  PetscFunctionReturn(0);
}

/* This type's data of A, or NULL when A's header holds another matrix's (see aijellrstorage.c). */
static Mat_MPIAIJELLR *MatMPIAIJELLRGetData(Mat A)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;
  return m && m->magic == MAT_MPIAIJELLR_MAGIC ? m : NULL;
}

/* A header merge (MatAXPY with another pattern, MatTranspose in place) gives A the data of a matrix made
   without A's settings: A takes back the settings kept on it (MatELLRSettingsRecord()), once. */
static PetscErrorCode MatMPIAIJELLRAdopt(Mat A, Mat_MPIAIJELLR *m)
{
  PetscBool kept;

  PetscFunctionBegin;
  if (m->owner == A) PetscFunctionReturn(0);
  m->owner = A;
  PetscCall(MatELLRSettingsRecall(A, &m->settings, &kept));
  if (!kept) {
    PetscCall(MatELLRSettingsDefault(m->typeformat, &m->settings));
    PetscCall(MatELLRSettingsFromOptionsDatabase(A, &m->settings));
    PetscCall(MatELLRSettingsRecord(A, &m->settings));
  }
  PetscFunctionReturn(0);
}

/* The off-diagonal block's settings: the parent's backend, its non-empty rows only (most rows of a block hold
   no ghost entry: neither the set-up nor the product touches them), sorted 32-row slices, and no tuning: its
   rows hold a few ghost entries each, so one thread per row and 256-thread blocks; timing products to choose
   otherwise cost more than half its set-up (measured: 24 of 42 ms on a 128^3 Laplacian over two H200s). */
static PetscErrorCode MatMPIAIJELLROffDiagSettings(const MatELLRSettings *parent, MatELLRSettings *s)
{
  PetscFunctionBegin;
  PetscCall(MatELLRSettingsDefault(MAT_ELLR_FORMAT_PELLR, s));
  s->backend             = parent->backend;
  s->verify              = parent->verify;
  s->eng.threads_per_row = 1;
  s->eng.block_size      = parent->eng.block_size ? parent->eng.block_size : 256;
  s->eng.max_fill        = 0; /* its fill is bounded by the slicing; empty rows cost nothing */
  s->eng.index_bits      = parent->eng.index_bits;
  s->eng.long_row_min    = parent->eng.long_row_min;
  s->eng.long_join       = parent->eng.long_join;
  s->eng.pin_host        = parent->eng.pin_host; /* -mat_ellr_pin_host false holds for both blocks */
  s->transpose           = parent->transpose;
  s->nonempty_rows       = PETSC_TRUE;
  s->eng.family          = ELLR_FAMILY_SLICED; /* a few entries per row: nothing for the CSR kernels to win */
  s->cusparse_base       = parent->cusparse_base;
  s->spgemm_warmup       = parent->spgemm_warmup;
  PetscFunctionReturn(0);
}

/* A block PETSc made: either of the ELLR types (PETSc's COO path makes both blocks of the root type) takes
   the settings; a plain SEQAIJ is converted in place. */
static PetscErrorCode MatMPIAIJELLRSetUpBlock(Mat A, Mat blk, const MatELLRSettings *s)
{
  PetscBool aij;

  PetscFunctionBegin;
  if (!blk) PetscFunctionReturn(0);
  if (MatSeqAIJELLRGetData(blk)) PetscCall(MatSeqAIJELLRSetSettings(blk, s));
  else {
    PetscCall(PetscObjectTypeCompareAny((PetscObject)blk, &aij, MATSEQAIJ, MATSEQAIJCUSPARSE, ""));
    PetscCheck(aij, PETSC_COMM_SELF, PETSC_ERR_SUP, "A %s matrix got a block of type %s from PETSc; petsc-ellr takes blocks of type seqaij, seqaijcusparse, seqaijellrt or seqaijpellr: convert the matrix to MATMPIAIJ first (an option -mat_seqaij_type gives every block such a type: leave it out with the petsc-ellr types)", ((PetscObject)A)->type_name, ((PetscObject)blk)->type_name);
    PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(blk, s->format, s, MAT_INPLACE_MATRIX, &blk));
    /* a block PETSc made anew (MatDisAssemble_MPIAIJ) after the matrix was bound to the CPU stays bound */
    MatELLRSetBoundToCPU(blk, MatELLRBoundToCPUFlag(A));
  }
  MatSeqAIJELLRGetData(blk)->block = PETSC_TRUE; /* a block's symmetry flag (forwarded by MPIAIJ) says nothing of it */
  PetscFunctionReturn(0);
}

/* Both blocks are ELLR blocks with the current settings.  Cheap when nothing changed: called at assembly,
   after every preallocation PETSc does, and before every product (MPIAIJ replaces its off-diagonal block
   when a new off-process nonzero arrives after assembly). */
static PetscErrorCode MatMPIAIJELLRSetUpBlocks(Mat A, Mat_MPIAIJELLR *m)
{
  Mat             Ad, Ao;
  MatELLRSettings so;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJELLRAdopt(A, m));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  PetscCall(MatMPIAIJELLRSetUpBlock(A, Ad, &m->settings));
  PetscCall(MatMPIAIJELLROffDiagSettings(&m->settings, &so));
  PetscCall(MatMPIAIJELLRSetUpBlock(A, Ao, &so));
  PetscFunctionReturn(0);
}

/* Both blocks' storage made current before MPIAIJ's product starts its ghost exchange (MatSeqAIJELLRPrepare()). */
static PetscErrorCode MatMPIAIJELLRPrepareBlocks(Mat A, Mat_MPIAIJELLR *m, PetscBool transpose)
{
  Mat Ad, Ao;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJELLRSetUpBlocks(A, m));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (Ad) PetscCall(MatSeqAIJELLRPrepare(Ad, transpose));
  if (Ao) PetscCall(MatSeqAIJELLRPrepare(Ao, transpose));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMult_MPIAIJELLR(Mat A, Vec x, Vec y)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  if (m) PetscCall(MatMPIAIJELLRPrepareBlocks(A, m, PETSC_FALSE));
  PetscCall((*(m ? &m->baseops : &MatMPIAIJELLR_AIJOps)->mult)(A, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultAdd_MPIAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  if (m) PetscCall(MatMPIAIJELLRPrepareBlocks(A, m, PETSC_FALSE));
  PetscCall((*(m ? &m->baseops : &MatMPIAIJELLR_AIJOps)->multadd)(A, x, z, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTranspose_MPIAIJELLR(Mat A, Vec x, Vec y)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  if (m) PetscCall(MatMPIAIJELLRPrepareBlocks(A, m, PETSC_TRUE));
  PetscCall((*(m ? &m->baseops : &MatMPIAIJELLR_AIJOps)->multtranspose)(A, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTransposeAdd_MPIAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  if (m) PetscCall(MatMPIAIJELLRPrepareBlocks(A, m, PETSC_TRUE));
  PetscCall((*(m ? &m->baseops : &MatMPIAIJELLR_AIJOps)->multtransposeadd)(A, x, z, y));
  PetscFunctionReturn(0);
}

/* MatBindToCPU(): the blocks are bound too (their products then run AIJ's host code, as GAMG wants on coarse
   levels), after MPIAIJ's own binding where it has one. */
static PetscErrorCode MatBindToCPU_MPIAIJELLR(Mat A, PetscBool flg)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);
  Mat             Ad, Ao;
  PetscErrorCode (*base)(Mat, PetscBool) = (m ? &m->baseops : &MatMPIAIJELLR_AIJOps)->bindtocpu;

  PetscFunctionBegin;
  if (base) PetscCall((*base)(A, flg));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (Ad) PetscCall(MatBindToCPU(Ad, flg));
  if (Ao) PetscCall(MatBindToCPU(Ao, flg));
  PetscFunctionReturn(0);
}

/* MPIAIJ inserts into its blocks' arrays itself (MatSetValues_MPIAIJ, and at assembly for the values other
   processes sent), reallocating them where new nonzeros are allowed: the blocks' page-locking goes first. */
static PetscErrorCode MatMPIAIJELLRUnpinBlocks(Mat A)
{
  Mat Ad, Ao;

  PetscFunctionBegin;
  if (!MatSeqAIJELLRAnyPinned()) PetscFunctionReturn(0); /* MatSetValues() is a hot path */
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (Ad) PetscCall(MatSeqAIJELLRUnpinIfReallocatable(Ad));
  if (Ao) PetscCall(MatSeqAIJELLRUnpinIfReallocatable(Ao));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetValues_MPIAIJELLR(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode is)
{
  Mat_MPIAIJELLR *e = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatMPIAIJELLRUnpinBlocks(A));
  PetscCall((*(e ? &e->baseops : &MatMPIAIJELLR_AIJOps)->setvalues)(A, m, im, n, in, v, is));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatAssemblyEnd_MPIAIJELLR(Mat A, MatAssemblyType mode)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall(MatMPIAIJELLRUnpinBlocks(A));
  PetscCall((*(m ? &m->baseops : &MatMPIAIJELLR_AIJOps)->assemblyend)(A, mode));
  if (m && mode == MAT_FINAL_ASSEMBLY) PetscCall(MatMPIAIJELLRSetUpBlocks(A, m));
  PetscFunctionReturn(0);
}

/* MPIAIJ's preallocation makes a new SEQAIJ off-diagonal block (and a diagonal one the first time): they
   become ELLR blocks before assembly, so MPIAIJ makes its ghost vector of their vector type. */
static PetscErrorCode MatMPIAIJSetPreallocation_MPIAIJELLR(Mat A, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[])
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCheck(m, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "This %s matrix holds another matrix's data after a header replacement and cannot be preallocated again: create a new matrix (MatCopy() the values into a new MATMPIAIJ one where they are needed)", ((PetscObject)A)->type_name);
  PetscCall((*m->baseprealloc)(A, d_nz, d_nnz, o_nz, o_nnz));
  PetscCall(MatMPIAIJELLRSetUpBlocks(A, m));
  PetscFunctionReturn(0);
}

/* MPIAIJ's COO preallocation makes new blocks of the root type and assembles without MatAssemblyEnd(). */
static PetscErrorCode MatSetPreallocationCOO_MPIAIJELLR(Mat A, PetscCount n, PetscInt i[], PetscInt j[])
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCheck(m, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "This %s matrix holds another matrix's data after a header replacement and cannot be preallocated again: create a new matrix (MatCopy() the values into a new MATMPIAIJ one where they are needed)", ((PetscObject)A)->type_name);
  if (m->cusparse) {
    /* under aijcusparse's name: PETSc makes the new blocks of the root type of the matrix's name, here seqaijcusparse,
       which become this type's blocks below */
    PetscErrorCode ierr;
    PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJCUSPARSE));
    ierr = (*m->basecoo)(A, n, i, j);
    PetscCall(PetscObjectChangeTypeName((PetscObject)A, MatELLRTypeName(m->typeformat, PETSC_TRUE)));
    PetscCall(ierr);
  } else PetscCall((*m->basecoo)(A, n, i, j));
  PetscCall(MatMPIAIJELLRSetUpBlocks(A, m));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetFromOptions_MPIAIJELLR(Mat A, MatELLROptionItems PetscOptionsObject)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!m) {
    if (MatMPIAIJELLR_AIJOps.setfromoptions) PetscCall((*MatMPIAIJELLR_AIJOps.setfromoptions)(A, PetscOptionsObject));
    PetscFunctionReturn(0);
  }
  PetscCall(MatMPIAIJELLRAdopt(A, m)); /* the options apply to A's own settings, also right after a header merge */
  if (m->baseops.setfromoptions) PetscCall((*m->baseops.setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatELLRSettingsFromOptions(A, PetscOptionsObject, &m->settings));
  PetscCall(MatELLRSettingsRecord(A, &m->settings));
  PetscCall(MatELLRSetDefaultVecType(A, &m->settings.backend));
  PetscCall(MatMPIAIJELLRSetUpBlocks(A, m));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_MPIAIJELLR(Mat A, PetscViewer viewer)
{
  Mat_MPIAIJELLR   *m = MatMPIAIJELLRGetData(A);
  PetscBool         isascii;
  PetscViewerFormat format;
  Mat               Ad, Ao;

  PetscFunctionBegin;
  PetscCall((*(m ? &m->baseops : &MatMPIAIJELLR_AIJOps)->view)(A, viewer));
  if (!m) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(0);
  PetscCall(MatMPIAIJELLRSetUpBlocks(A, m));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (!Ad || !Ao) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "process 0, diagonal block:\n"));
  PetscCall(MatSeqAIJELLRView_Info(Ad, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "process 0, off-diagonal block (%" PetscInt_FMT " ghost columns):\n", Ao->cmap->n));
  PetscCall(MatSeqAIJELLRView_Info(Ao, viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRGetBackend_MPIAIJELLR(Mat A, MatELLRBackend *backend)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  *backend = MAT_ELLR_BACKEND_AUTO;
  if (!m) PetscFunctionReturn(0);
  PetscCall(MatMPIAIJELLRAdopt(A, m));
  PetscCall(MatELLRResolveBackend(m->settings.backend, backend));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMPIAIJELLRCompose(Mat A, MatELLRFormat format, PetscBool on);

static PetscErrorCode MatMPIAIJELLRFree(Mat A)
{
  Mat_MPIAIJELLR *m = (Mat_MPIAIJELLR *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJELLRCompose(A, m->typeformat, PETSC_FALSE));
  m->magic = 0;
  PetscCall(PetscFree(A->spptr));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDestroy_MPIAIJELLR(Mat A)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!m) {
    PetscCall((*MatMPIAIJELLR_AIJOps.destroy)(A));
    PetscFunctionReturn(0);
  }
  A->ops->destroy = m->baseops.destroy;
  PetscCall(MatMPIAIJELLRFree(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDuplicate_MPIAIJELLR(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A), *mb;

  PetscFunctionBegin;
  if (!m) {
    PetscCall((*MatMPIAIJELLR_AIJOps.duplicate)(A, op, B));
    PetscFunctionReturn(0);
  }
  PetscCall(MatMPIAIJELLRAdopt(A, m)); /* after a header merge: A's own settings, not the other matrix's */
  /* MPIAIJ's duplicate makes a matrix of A's type name with duplicates of A's (ELLR) blocks */
  PetscCall((*m->baseops.duplicate)(A, op, B));
  mb = MatMPIAIJELLRGetData(*B);
  PetscCheck(mb, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "MatDuplicate() of a %s matrix gave a %s matrix", ((PetscObject)A)->type_name, ((PetscObject)*B)->type_name);
  mb->settings = m->settings;
  PetscCall(MatELLRSettingsRecord(*B, &mb->settings));
  PetscCall(MatMPIAIJELLRSetUpBlocks(*B, mb));
  PetscFunctionReturn(0);
}

/* Every op this type installs over MPIAIJ's: restored from the base ops when the matrix leaves the type. */
static const MatELLROp MatMPIAIJELLR_Ops[] = {
  MAT_ELLR_OP(mult, MatMult_MPIAIJELLR),
  MAT_ELLR_OP(multadd, MatMultAdd_MPIAIJELLR),
  MAT_ELLR_OP(multtranspose, MatMultTranspose_MPIAIJELLR),
  MAT_ELLR_OP(multtransposeadd, MatMultTransposeAdd_MPIAIJELLR),
  MAT_ELLR_OP(assemblyend, MatAssemblyEnd_MPIAIJELLR),
  MAT_ELLR_OP(setvalues, MatSetValues_MPIAIJELLR),
  MAT_ELLR_OP(bindtocpu, MatBindToCPU_MPIAIJELLR),
  MAT_ELLR_OP(destroy, MatDestroy_MPIAIJELLR),
  MAT_ELLR_OP(duplicate, MatDuplicate_MPIAIJELLR),
  MAT_ELLR_OP(setfromoptions, MatSetFromOptions_MPIAIJELLR),
  MAT_ELLR_OP(view, MatView_MPIAIJELLR),
};

/* Back to MPIAIJ, blocks included. */
static PetscErrorCode MatConvert_MPIAIJELLR_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat             B, Ad, Ao;
  Mat_MPIAIJELLR *m;
  PetscBool       cusparse;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  m = MatMPIAIJELLRGetData(B);
  PetscCheck(m, PetscObjectComm((PetscObject)B), PETSC_ERR_ARG_WRONGSTATE, "This %s matrix holds another matrix's data after a header replacement: MatConvert() it to MATMPIAIJ through MatCopy() into a new MATMPIAIJ matrix instead", ((PetscObject)B)->type_name);
  cusparse = m->cusparse;
  PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, NULL));
  if (Ad && MatSeqAIJELLRGetData(Ad)) PetscCall(MatConvert_SeqAIJELLR_SeqAIJ(Ad, cusparse ? MATSEQAIJCUSPARSE : MATSEQAIJ, MAT_INPLACE_MATRIX, &Ad));
  if (Ao && MatSeqAIJELLRGetData(Ao)) PetscCall(MatConvert_SeqAIJELLR_SeqAIJ(Ao, cusparse ? MATSEQAIJCUSPARSE : MATSEQAIJ, MAT_INPLACE_MATRIX, &Ao));
  PetscCall(MatELLRRestoreBaseOps(B, &m->baseops, MatMPIAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatMPIAIJELLR_Ops)));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", m->baseprealloc));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSetPreallocationCOO_C", m->basecoo));
  PetscCall(MatMPIAIJELLRFree(B));
  if (cusparse) { /* an aijcusparse matrix, which becomes a MATMPIAIJ as any does unless aijcusparse was asked for */
    PetscBool tocusparse;
    PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATMPIAIJCUSPARSE));
    PetscCall(PetscStrbeginswith(type ? type : "", "mpiaijcusparse", &tocusparse));
    if (!tocusparse) PetscCall(PetscStrcmp(type, MATAIJCUSPARSE, &tocusparse));
    if (!tocusparse) PetscCall(MatConvert(B, MATMPIAIJ, MAT_INPLACE_MATRIX, &B));
    *newmat = B;
    PetscFunctionReturn(0);
  }
  PetscCall(MatELLRSetDefaultVecType(B, NULL));
  MatELLRSetBoundToCPU(B, PETSC_TRUE);
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

#if defined(PETSCELLR_CUSPARSE_BASE)
/* On the aijcusparse base, products run on the GPU with aijcusparse matrices or this type (MPIAIJCUSPARSE's device
   products, the blocks' through aijellrcusparse.c); with a host MPIAIJ matrix PETSc has no product: say what to do. */
static PetscErrorCode MatProductSetFromOptions_MPIAIJELLR_Host(Mat C)
{
  Mat_Product *p = C->product;

  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)C), PETSC_ERR_SUP, "No GPU product of a %s matrix with a %s matrix: convert the %s matrix to MATAIJCUSPARSE (MatConvert()), or build this one with -mat_ellr_cusparse_base false", ((PetscObject)p->A)->type_name, ((PetscObject)p->B)->type_name, MATMPIAIJ);
}
#endif

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
#if defined(PETSCELLR_CUSPARSE_BASE)
  {
    Mat_MPIAIJELLR *m = MatMPIAIJELLRGetData(A);
    if (!on || (m && m->cusparse)) {
      PetscErrorCode (*f)(Mat) = on ? MatProductSetFromOptions_MPIAIJELLR_Host : NULL;
      PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatProductSetFromOptions_mpiaijpellr_mpiaij_C" : "MatProductSetFromOptions_mpiaijellrt_mpiaij_C", f));
      PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatProductSetFromOptions_mpiaij_mpiaijpellr_C" : "MatProductSetFromOptions_mpiaij_mpiaijellrt_C", f));
    }
  }
#endif
  if (on) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", MatMPIAIJSetPreallocation_MPIAIJELLR));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_MPIAIJELLR));
  }
  PetscFunctionReturn(0);
}

/* A plain MPIAIJ's ops (for matrices whose header lost this type's data), from a matrix of its own: the one converted
   may already be an aijcusparse matrix. */
static PetscErrorCode MatMPIAIJELLRCaptureAIJOps(void)
{
  Mat T;

  PetscFunctionBegin;
  if (MatMPIAIJELLR_AIJOpsCaptured) PetscFunctionReturn(0);
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscCall(MatSetType(T, MATMPIAIJ));
  PetscCall(MatELLRCaptureBaseOps(T, &MatMPIAIJELLR_AIJOps, &MatMPIAIJELLR_AIJOpsCaptured));
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIAIJELLR_Format(Mat A, MatELLRFormat format, MatReuse reuse, Mat *newmat)
{
  Mat             B;
  Mat_MPIAIJELLR *m;
  MatELLRSettings s;
  PetscBool       cusparse = PETSC_FALSE;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  PetscCall(MatELLRSettingsDefault(format, &s));
  PetscCall(MatELLRSettingsFromOptionsDatabase(B, &s));
  PetscCall(MatMPIAIJELLRCaptureAIJOps());
#if defined(PETSCELLR_CUSPARSE_BASE)
  {
    /* with the CUDA backend the base is MATMPIAIJCUSPARSE, as for the blocks (aijellrcusparse.c) */
    MatELLRBackend backend;
    PetscBool      isaij;
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJCUSPARSE, &cusparse));
    PetscCall(MatELLRResolveBackend(s.backend, &backend));
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJ, &isaij));
    if (!cusparse && isaij && backend == MAT_ELLR_BACKEND_CUDA && s.cusparse_base) {
      PetscErrorCode (*conv)(Mat, MatType, MatReuse, Mat *) = NULL;
      /* aijcusparse's own converter: MatConvert() refuses a matrix not assembled */
      PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatConvert_mpiaij_mpiaijcusparse_C", &conv));
      PetscCheck(conv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "This PETSc's MATMPIAIJ has no converter to MATMPIAIJCUSPARSE");
      PetscCall((*conv)(B, MATMPIAIJCUSPARSE, MAT_INPLACE_MATRIX, &B));
      cusparse = PETSC_TRUE;
    }
  }
#endif
  PetscCall(MatELLRCheckBaseOps(B, &MatMPIAIJELLR_AIJOps, MatMPIAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatMPIAIJELLR_Ops)));
  PetscCheck(!B->spptr, PetscObjectComm((PetscObject)B), PETSC_ERR_ARG_WRONG, "Cannot convert a matrix that already carries GPU or other extra data (type %s) to %s: convert it to MATMPIAIJ first", ((PetscObject)B)->type_name, MatELLRTypeName(format, PETSC_TRUE));
  PetscCall(MatELLRCheckBaseOps(B, B->ops, MatMPIAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatMPIAIJELLR_Ops))); /* before anything is allocated */
  PetscCall(PetscNew(&m));
  m->magic      = MAT_MPIAIJELLR_MAGIC;
  m->owner      = B;
  B->spptr      = m;
  m->baseops    = *B->ops;
  m->typeformat = format;
  m->cusparse   = cusparse;
  /* a matrix duplicated from one of this type carries the type's wrappers (MatDuplicate_MPIAIJ copies the composed
     methods): never their own base */
  PetscCall(MatELLRQueryBaseComposed(B, MATMPIAIJ, "MatMPIAIJSetPreallocation_C", (MatELLROpFn)MatMPIAIJSetPreallocation_MPIAIJELLR, (MatELLROpFn *)(void *)&m->baseprealloc));
  PetscCall(MatELLRQueryBaseComposed(B, MATMPIAIJ, "MatSetPreallocationCOO_C", (MatELLROpFn)MatSetPreallocationCOO_MPIAIJELLR, (MatELLROpFn *)(void *)&m->basecoo));
  PetscCheck(m->baseprealloc && m->basecoo, PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "This PETSc's MATMPIAIJ lacks a composed method petsc-ellr wraps");
  m->settings = s;
  PetscCall(MatELLRSettingsRecord(B, &s));
  PetscCall(MatELLRInstallOps(B, MatMPIAIJELLR_Ops, PETSC_STATIC_ARRAY_LENGTH(MatMPIAIJELLR_Ops)));
  PetscCall(MatMPIAIJELLRCompose(B, format, PETSC_TRUE));
  PetscCall(MatELLRSetDefaultVecType(B, &m->settings.backend));
  MatELLRSetBoundToCPU(B, PETSC_FALSE);
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MatELLRTypeName(format, PETSC_TRUE)));
  PetscCall(MatMPIAIJELLRSetUpBlocks(B, m));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_MPIAIJELLRT(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatELLRCheckSeqAIJType(A, PETSC_TRUE));
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPIAIJELLR_Format(A, MAT_ELLR_FORMAT_ELLRT, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_MPIAIJPELLR(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatELLRCheckSeqAIJType(A, PETSC_TRUE));
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPIAIJELLR_Format(A, MAT_ELLR_FORMAT_PELLR, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}
