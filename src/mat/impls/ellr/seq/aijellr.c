/*
  aijellr.c - MATSEQAIJELLRT and MATSEQAIJPELLR: sequential AIJ matrices whose products run on an
  ELLPACK-R copy of the CSR.

  The host CSR stays the source of truth: assembly, MatSetValues, factorizations, MatZeroRows ... are
  AIJ's.  The ELLPACK-R storage is a cache, made at final assembly and refreshed before every product
  when PETSc's object state says the values changed (values refilled in place) or its nonzero state
  says the pattern changed (storage rebuilt).
*/
#include "../ellrimpl.h"

static PetscErrorCode MatMult_SeqAIJELLR(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, NULL, y, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultAdd_SeqAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, z, y, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTranspose_SeqAIJELLR(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, NULL, y, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTransposeAdd_SeqAIJELLR(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultKernel_SeqAIJELLR(A, x, z, y, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSeqAIJELLRFreeStorage(Mat_SeqAIJELLR *e)
{
  PetscFunctionBegin;
  ellr_matrix_destroy(&e->host);
#if defined(PETSCELLR_HAVE_CUDA)
  if (e->dev) PetscCall(MatELLRCheckStatus(ellr_cuda_destroy(e->dev), "freeing the GPU storage"));
  e->dev = NULL;
#endif
  e->built = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The CSR of A as the engine takes it: 32-bit indices (copied only when PetscInt is 64-bit). */
PetscErrorCode MatSeqAIJELLRGetCSR(Mat A, PetscBool pattern_changed, ellr_csr *csr)
{
  Mat_SeqAIJELLR    *e = (Mat_SeqAIJELLR *)A->spptr;
  PetscInt           n;
  const PetscInt    *ia, *ja;
  const PetscScalar *aa;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on a sequential AIJ matrix");
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  PetscCheck(ia[n] < 2147483647 && A->cmap->n < 2147483647, PETSC_COMM_SELF, PETSC_ERR_SUP, "A block with %" PetscInt_FMT " nonzeros and %" PetscInt_FMT " columns does not fit 32-bit indices: use more MPI processes", ia[n], A->cmap->n);
  csr->nrows = (int32_t)n;
  csr->ncols = (int32_t)A->cmap->n;
  csr->val   = (const double *)aa;
#if defined(PETSC_USE_64BIT_INDICES)
  if (pattern_changed || !e->rowptr32) {
    PetscCall(PetscFree2(e->rowptr32, e->colidx32));
    PetscCall(PetscMalloc2(n + 1, &e->rowptr32, ia[n] ? ia[n] : 1, &e->colidx32));
    for (PetscInt i = 0; i <= n; i++) e->rowptr32[i] = (int32_t)ia[i];
    for (PetscInt k = 0; k < ia[n]; k++) e->colidx32[k] = (int32_t)ja[k];
  }
  csr->rowptr = e->rowptr32;
  csr->colidx = e->colidx32;
#else
  (void)e;
  (void)pattern_changed;
  csr->rowptr = (const int32_t *)ia;
  csr->colidx = (const int32_t *)ja;
#endif
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* The number of nonzeros the storage was made from. */
static int64_t MatSeqAIJELLRStoredNonzeros(Mat_SeqAIJELLR *e)
{
#if defined(PETSCELLR_HAVE_CUDA)
  if (e->backend == MAT_ELLR_BACKEND_CUDA) {
    ellr_cuda_info info;
    ellr_cuda_get_info(e->dev, &info);
    return info.plan->stats.nnz;
  }
#endif
  return e->host.plan.stats.nnz;
}

/*
  Makes the ELLPACK-R storage agree with the AIJ matrix: nothing when neither values nor pattern
  changed, a value refill when only values changed (what SNES and TS do every step), a rebuild when
  the pattern or the column count changed.  Called before every product (and by -mat_view), so no product
  ever sees a stale copy, whatever base-class routine changed the matrix.
*/
PetscErrorCode MatSeqAIJELLRUpdate(Mat A)
{
  Mat_SeqAIJELLR  *e = (Mat_SeqAIJELLR *)A->spptr;
  PetscObjectState state;
  PetscBool        rebuild;
  ellr_csr         csr;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  rebuild = (PetscBool)(!e->built || A->nonzerostate != e->nzstate || A->cmap->n != e->ncols);
  if (!rebuild && state == e->state) PetscFunctionReturn(0);

  PetscCall(PetscLogEventBegin(MAT_ELLRBuild, A, 0, 0, 0));
  if (rebuild) PetscCall(MatSeqAIJELLRFreeStorage(e));
  PetscCall(MatSeqAIJELLRGetCSR(A, rebuild, &csr));
  /* MatResetPreallocation followed by an assembly that inserts nothing leaves the nonzero state
     alone: the count of nonzeros tells */
  if (!rebuild && (int64_t)csr.rowptr[csr.nrows] != MatSeqAIJELLRStoredNonzeros(e)) {
    rebuild = PETSC_TRUE;
    PetscCall(MatSeqAIJELLRFreeStorage(e));
    PetscCall(MatSeqAIJELLRGetCSR(A, rebuild, &csr));
  }
  if (rebuild) PetscCall(MatELLRResolveBackend(e->settings.backend, &e->backend));
  if (e->backend == MAT_ELLR_BACKEND_CPU) {
    if (rebuild) PetscCall(MatELLRCheckStatus(ellr_matrix_create(&csr, &e->settings.eng, &e->host), "Building the ELLPACK-R storage"));
    else ellr_fill_values(&e->host.plan, &csr, e->host.val);
  }
#if defined(PETSCELLR_HAVE_CUDA)
  else {
    PetscCall(PetscLogEventBegin(MAT_ELLRCopyToGPU, A, 0, 0, 0));
    if (rebuild) PetscCall(MatELLRCheckStatus(ellr_cuda_create(&csr, &e->settings.eng, &e->dev), "Building the ELLPACK-R storage on the GPU"));
    else PetscCall(MatELLRCheckStatus(ellr_cuda_update_values(e->dev, &csr), "Copying new values to the GPU"));
    PetscCall(PetscLogEventEnd(MAT_ELLRCopyToGPU, A, 0, 0, 0));
  }
#endif
  PetscCall(PetscLogEventEnd(MAT_ELLRBuild, A, 0, 0, 0));
  e->built      = PETSC_TRUE;
  e->state      = state;
  e->nzstate    = A->nonzerostate;
  e->ncols      = A->cmap->n;
  PetscFunctionReturn(0);
}

/* Puts this type's products (back) in place.  Base-class calls such as AIJ's assembly with inodes
   install AIJ products; those are kept in baseops (for converting back) and replaced again. */
static PetscErrorCode MatSeqAIJELLRInstallOps(Mat A)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

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

static PetscErrorCode MatAssemblyEnd_SeqAIJELLR(Mat A, MatAssemblyType mode)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*e->baseops.assemblyend)(A, mode));
  /* the storage is made at the first product, as AIJCUSPARSE does: matrices that PETSc assembles
     internally from this type (transposes, Galerkin products) cost nothing until multiplied */
  PetscCall(MatSeqAIJELLRInstallOps(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSetFromOptions_SeqAIJELLR(Mat A, MatELLROptionItems PetscOptionsObject)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;
  MatELLRSettings s = e->settings;

  PetscFunctionBegin;
  if (e->baseops.setfromoptions) PetscCall((*e->baseops.setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatELLRSettingsSetFromOptions(A, &s));
  PetscCall(MatSeqAIJELLRSetSettings(A, &s));
  PetscFunctionReturn(0);
}

static PetscBool MatELLRSettingsEqual(const MatELLRSettings *a, const MatELLRSettings *b)
{
  return (PetscBool)(a->format == b->format && a->backend == b->backend && a->eng.threads_per_row == b->eng.threads_per_row && a->eng.block_size == b->eng.block_size && a->eng.slice_height == b->eng.slice_height && a->eng.sort_rows == b->eng.sort_rows && a->eng.sort_window == b->eng.sort_window && a->eng.max_fill == b->eng.max_fill && a->verify == b->verify);
}

/* New settings take effect at the next product: the storage is rebuilt when they differ. */
PetscErrorCode MatSeqAIJELLRSetSettings(Mat A, const MatELLRSettings *s)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

  PetscFunctionBegin;
  if (!MatELLRSettingsEqual(&e->settings, s)) {
    PetscCall(MatSeqAIJELLRFreeStorage(e));
    e->settings = *s;
  }
  PetscFunctionReturn(0);
}

/* AIJ's MatRetrieveValues copies the stored values back without raising the object state (SNES does this
   when it reuses a Jacobian): raise it, so the next product refills the values. */
static PetscErrorCode MatRetrieveValues_SeqAIJELLR(Mat A)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*e->baseretrievevalues)(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRGetProductCount_SeqAIJELLR(Mat A, PetscInt *count)
{
  PetscFunctionBegin;
  *count = ((Mat_SeqAIJELLR *)A->spptr)->nproducts;
  PetscFunctionReturn(0);
}

static PetscErrorCode MatELLRGetBackend_SeqAIJELLR(Mat A, MatELLRBackend *backend)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

  PetscFunctionBegin;
  *backend = e->built ? e->backend : MAT_ELLR_BACKEND_AUTO;
  PetscFunctionReturn(0);
}

/* -mat_view ::ascii_info: what was chosen and what it costs. */
PetscErrorCode MatSeqAIJELLRView_Info(Mat A, PetscViewer viewer)
{
  Mat_SeqAIJELLR   *e = (Mat_SeqAIJELLR *)A->spptr;
  const ellr_plan  *pl;
  const ellr_stats *st;
  const char       *fmt = e->settings.format == MAT_ELLR_FORMAT_PELLR ? "pellr (PELLR: rows sorted by length" : "ellrt (ELLPACK-R, ELLR-T kernel";

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRUpdate(A));
  pl = &e->host.plan;
#if defined(PETSCELLR_HAVE_CUDA)
  if (e->backend == MAT_ELLR_BACKEND_CUDA) {
    ellr_cuda_info info;
    ellr_cuda_get_info(e->dev, &info);
    pl = info.plan;
  }
#endif
  st = &pl->stats;
  PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s), backend %s\n", fmt, MatELLRBackends[e->backend]));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "threads per row %d%s, slice height %d (%d slice%s), rows %s\n", (int)pl->T, e->settings.eng.threads_per_row ? "" : " (automatic)", (int)pl->C, (int)pl->nslices, pl->nslices == 1 ? "" : "s", pl->perm ? "sorted by decreasing length" : "in their own order"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "fill ratio %.3f (%lld stored entries for %lld nonzeros), storage %.3f MB (CSR %.3f MB)\n", st->fill, (long long)st->nstored, (long long)st->nnz, st->bytes / 1e6, (12.0 * st->nnz + 4.0 * (pl->nrows + 1)) / 1e6));
  PetscCall(PetscViewerASCIIPrintf(viewer, "warp iterations per product %lld (%lld in the original row order), longest row %d, mean %.2f\n", (long long)st->niter, (long long)st->niter_unsorted, (int)st->maxrowlen, st->meanrowlen));
#if defined(PETSCELLR_HAVE_CUDA)
  if (e->backend == MAT_ELLR_BACKEND_CUDA) {
    ellr_cuda_info info;
    ellr_cuda_get_info(e->dev, &info);
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPU: block size %d%s, %.3f MB on the device; setup %.3f ms (plan %.3f, upload %.3f, fill %.3f, tune %.3f ms over %d products)\n", info.block_size, e->settings.eng.block_size ? "" : " (tuned)", info.device_bytes / 1e6, info.plan_ms + info.upload_ms + info.fill_ms + info.tune_ms, info.plan_ms, info.upload_ms, info.fill_ms, info.tune_ms, info.tune_products));
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
    PetscCall(PetscViewerASCIIPrintf(viewer, "vectors: device arrays of VECCUDA vectors are used directly; other vectors are staged through pinned host buffers\n"));
  #else
    PetscCall(PetscViewerASCIIPrintf(viewer, "vectors: this PETSc has no CUDA, so x and y are staged through pinned host buffers on every product\n"));
  #endif
  }
#endif
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_SeqAIJELLR(Mat A, PetscViewer viewer)
{
  Mat_SeqAIJELLR   *e = (Mat_SeqAIJELLR *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall((*e->baseops.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL) PetscCall(MatSeqAIJELLRView_Info(A, viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSeqAIJELLRCompose(Mat A, PetscBool on);

/* Everything this type added to an AIJ matrix, gone; the ops are the caller's business. */
static PetscErrorCode MatSeqAIJELLRFree(Mat A)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRFreeStorage(e));
  PetscCall(PetscFree2(e->rowptr32, e->colidx32));
  PetscCall(MatSeqAIJELLRCompose(A, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDestroy_SeqAIJELLR(Mat A)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

  PetscFunctionBegin;
  A->ops->destroy = e->baseops.destroy;
  PetscCall(MatSeqAIJELLRFree(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDuplicate_SeqAIJELLR(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;

  PetscFunctionBegin;
  /* AIJ's duplicate creates a matrix of A's type name, hence of this type; give it A's settings */
  PetscCall((*e->baseops.duplicate)(A, op, B));
  if (!(*B)->spptr) PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(*B, e->settings.format, &e->settings, MAT_INPLACE_MATRIX, B));
  else PetscCall(MatSeqAIJELLRSetSettings(*B, &e->settings));
  PetscCall(MatSeqAIJELLRInstallOps(*B));
  PetscFunctionReturn(0);
}

/* Back to plain AIJ: AIJ's own products return; the ELLPACK-R storage is freed. */
PetscErrorCode MatConvert_SeqAIJELLR_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat             B;
  Mat_SeqAIJELLR *e;
  PetscErrorCode (*retrieve)(Mat);

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  e = (Mat_SeqAIJELLR *)B->spptr;
  retrieve = e->baseretrievevalues;
  PetscCall(MatELLRRestoreBaseOps(B, &e->baseops));
  PetscCall(MatSeqAIJELLRFree(B));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatRetrieveValues_C", retrieve));
  PetscCall(MatELLRSetDefaultVecType(B, NULL));
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
   the caller wrote (or it with a seq/mpi prefix): register the converters under every such name. */
static PetscErrorCode MatSeqAIJELLRCompose(Mat A, PetscBool on)
{
  Mat_SeqAIJELLR *e     = (Mat_SeqAIJELLR *)A->spptr;
  const PetscBool pellr = (PetscBool)(e->settings.format == MAT_ELLR_FORMAT_PELLR);
  PetscErrorCode (*from_aij)(Mat, MatType, MatReuse, Mat *) = !on ? NULL : pellr ? MatConvert_SeqAIJ_SeqAIJPELLR : MatConvert_SeqAIJ_SeqAIJELLRT;

  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaij_pellr_C" : "MatConvert_seqaij_ellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaij_seqpellr_C" : "MatConvert_seqaij_seqellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaij_seqaijpellr_C" : "MatConvert_seqaij_seqaijellrt_C", from_aij));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, pellr ? "MatConvert_seqaijpellr_seqaij_C" : "MatConvert_seqaijellrt_seqaij_C", on ? MatConvert_SeqAIJELLR_SeqAIJ : NULL));
  /* only NULLs when turning off: a destroy inside MatHeaderMerge() must not create a function list */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", on ? MatRetrieveValues_SeqAIJELLR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRGetProductCount_C", on ? MatELLRGetProductCount_SeqAIJELLR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRGetBackend_C", on ? MatELLRGetBackend_SeqAIJELLR : NULL));
  PetscFunctionReturn(0);
}

/* AIJ -> ELLR/PELLR.  In place, A keeps its CSR and gains this type's products, names and settings:
   the given ones (blocks of a parallel matrix take their parent's), else the format's defaults and options. */
PetscErrorCode MatConvert_SeqAIJ_SeqAIJELLR_Format(Mat A, MatELLRFormat format, const MatELLRSettings *settings, MatReuse reuse, Mat *newmat)
{
  Mat             B;
  Mat_SeqAIJELLR *e;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  PetscCheck(!B->spptr, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Cannot convert a matrix that already carries GPU or other extra data (type %s) to %s: convert it to MATSEQAIJ first", ((PetscObject)B)->type_name, MatELLRTypeName(format, PETSC_FALSE));
  PetscCall(PetscNew(&e));
  B->spptr   = e;
  e->baseops = *B->ops;
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatRetrieveValues_C", &e->baseretrievevalues));
  if (settings) e->settings = *settings;
  else {
    PetscCall(MatELLRSettingsDefault(format, &e->settings));
    /* options also reach matrices that never see MatSetFromOptions() (DMCreateMatrix, MatConvert) */
    PetscCall(MatELLRSettingsSetFromOptions(B, &e->settings));
  }

  B->ops->assemblyend    = MatAssemblyEnd_SeqAIJELLR;
  B->ops->destroy        = MatDestroy_SeqAIJELLR;
  B->ops->duplicate      = MatDuplicate_SeqAIJELLR;
  B->ops->setfromoptions = MatSetFromOptions_SeqAIJELLR;
  B->ops->view           = MatView_SeqAIJELLR;
  PetscCall(MatSeqAIJELLRInstallOps(B));
  PetscCall(MatSeqAIJELLRCompose(B, PETSC_TRUE));
  PetscCall(MatELLRSetDefaultVecType(B, &e->settings.backend));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MatELLRTypeName(format, PETSC_FALSE)));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_SeqAIJELLRT(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(A, MAT_ELLR_FORMAT_ELLRT, NULL, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_SeqAIJPELLR(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAIJELLR_Format(A, MAT_ELLR_FORMAT_PELLR, NULL, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(0);
}
