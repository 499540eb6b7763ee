/*
  ellrstorage.c - the ELLPACK-R storage of one sequential AIJ matrix (a matrix of its own or a block of an MPI one):
  a cache of its CSR, made at the first product and kept current.

  The CSR stays the source of truth: assembly, MatSetValues, factorizations, MatZeroRows ... are the base type's.
  Before every product the storage is compared with PETSc's object state (values changed: refilled in place), its
  nonzero state, its column count and its data pointer (pattern or header changed: rebuilt).  With the aijcusparse
  base the storage is filled on the GPU from aijcusparse's own device CSR: aijcusparse's upload is the only one.
*/
#include "../ellrimpl.h"
#if defined(PETSCELLR_HAVE_CUDA)
  #include "ellr_cuda_internal.cuh"
#endif

/* Everything built from the CSR goes, whatever fails on the way: the handles are cleared before the engine frees
   them, and the first error is raised at the end, with the storage rebuilt at the next product. */
PetscErrorCode MatELLRFreeStorage(Mat_ELLR *e)
{
  ellr_status st = ELLR_OK;
  char        msg[512];

  PetscFunctionBegin;
  msg[0] = 0;
  ellr_matrix_destroy(&e->host);
#if defined(PETSCELLR_HAVE_CUDA)
  {
    ellr_cuda_matrix *d = e->dev, *t = e->devT;
    ellr_status       s2;

    e->dev  = NULL;
    e->devT = NULL;
    if (d && (s2 = ellr_cuda_destroy(d)) && !st) {
      st = s2;
      PetscCall(PetscStrncpy(msg, ellr_last_error(), sizeof(msg)));
    }
    if (t && (s2 = ellr_cuda_destroy(t)) && !st) {
      st = s2;
      PetscCall(PetscStrncpy(msg, ellr_last_error(), sizeof(msg)));
    }
    ellr_transpose_destroy(&e->tr);
  }
#endif
  e->built = PETSC_FALSE;
  PetscCall(PetscFree2(e->crowptr, e->crows));
  e->ncrows = 0;
  e->cvalid = PETSC_FALSE;
  PetscCheck(!st, PETSC_COMM_SELF, PETSC_ERR_GPU, "Freeing the GPU storage: %s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRDataDestroy(Mat_ELLR *e)
{
  PetscFunctionBegin;
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRFreeStorage(e));
  PetscCall(PetscFree2(e->rowptr32, e->colidx32));
  PetscCall(PetscFree(e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An engine call's failure: the storage goes (nothing half-built stays), then the error is raised with the engine's
   text; the next product rebuilds. */
static PetscErrorCode MatELLREngineCheck(Mat_ELLR *e, ellr_status st, const char *what)
{
  char msg[512];

  PetscFunctionBegin;
  if (st == ELLR_OK) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrncpy(msg, ellr_last_error(), sizeof(msg)));
  (void)MatELLRFreeStorage(e); /* its own failure is secondary: the first error is the one to report */
  (void)ellr_error(st, "%s", msg);
  PetscCall(MatELLRCheckStatus(st, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An MPI off-diagonal block by its non-empty rows only (ellr_csr.rows): made once per pattern; the column indices
   and values stay AIJ's. */
static PetscErrorCode MatELLRCompressRows(Mat_ELLR *e, PetscBool pattern_changed, ellr_csr *csr)
{
  const int32_t *rp = csr->rowptr;
  const int32_t  n  = csr->nrows;

  PetscFunctionBegin;
  if (pattern_changed || !e->cvalid) {
    int32_t nc = 0;

    PetscCall(PetscFree2(e->crowptr, e->crows));
    for (int32_t i = 0; i < n; i++) nc += rp[i + 1] > rp[i];
    if (nc < n) { /* a block with no empty row is given as it is */
      PetscCall(PetscMalloc2(nc + 1, &e->crowptr, nc ? nc : 1, &e->crows));
      e->crowptr[0] = 0;
      nc            = 0;
      for (int32_t i = 0; i < n; i++)
        if (rp[i + 1] > rp[i]) {
          e->crows[nc]       = i;
          e->crowptr[nc + 1] = rp[i + 1];
          nc++;
        }
    }
    e->ncrows = nc;
    e->cvalid = PETSC_TRUE;
  }
  if (e->crows) {
    csr->rowptr    = e->crowptr;
    csr->rows      = e->crows;
    csr->nrows     = (int32_t)e->ncrows;
    csr->nrows_out = n;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host CSR of A as the engine takes it: 32-bit indices.  With 64-bit PetscInt the row offsets are copied on every
   call (they tell a changed pattern), the column indices only when the pattern changed. */
PetscErrorCode MatELLRGetCSR(Mat A, Mat_ELLR *e, PetscBool pattern_changed, ellr_csr *csr)
{
  PetscInt           n;
  const PetscInt    *ia, *ja;
  const PetscScalar *aa;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(csr, sizeof(*csr)));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on a sequential AIJ matrix");
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  PetscCheck(ia[n] < 2147483647 && n < 2147483647 && A->cmap->n < 2147483647, PETSC_COMM_SELF, PETSC_ERR_SUP, "A block with %" PetscInt_FMT " rows, %" PetscInt_FMT " nonzeros and %" PetscInt_FMT " columns does not fit the 32-bit indices of the ELLPACK-R storage: use more MPI processes", n, ia[n], A->cmap->n);
  csr->nrows = (int32_t)n;
  csr->ncols = (int32_t)A->cmap->n;
  csr->val   = (const double *)aa;
#if defined(PETSC_USE_64BIT_INDICES)
  {
    const PetscBool sized = (PetscBool)(e->rowptr32 && e->rowptr32n == n && e->colidx32n == ia[n]);

    if (!sized) {
      PetscCall(PetscFree2(e->rowptr32, e->colidx32));
      PetscCall(PetscMalloc2(n + 1, &e->rowptr32, ia[n] ? ia[n] : 1, &e->colidx32));
      e->rowptr32n = n;
      e->colidx32n = ia[n];
    }
    for (PetscInt i = 0; i <= n; i++) e->rowptr32[i] = (int32_t)ia[i];
    if (pattern_changed || !sized)
      for (PetscInt k = 0; k < ia[n]; k++) e->colidx32[k] = (int32_t)ja[k];
  }
  csr->rowptr = e->rowptr32;
  csr->colidx = e->colidx32;
#else
  csr->rowptr = (const int32_t *)ia;
  csr->colidx = (const int32_t *)ja;
#endif
  csr->nrows_out   = (int32_t)n;
  csr->cols_sorted = 1; /* AIJ keeps each row's columns increasing; checked in debug builds */
  if (PetscDefined(USE_DEBUG) && pattern_changed) {
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt k = ia[i] + 1; k < ia[i + 1]; k++) PetscCheck(ja[k] > ja[k - 1], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Row %" PetscInt_FMT " of the AIJ matrix has unsorted or repeated columns (%" PetscInt_FMT " after %" PetscInt_FMT "): AIJ requires each row's columns increasing (column indices given by MatSeqAIJSetColumnIndices(), MatCreateSeqAIJWithArrays() or rows inserted under MAT_SORTED_FULL must be sorted)", i, ja[k], ja[k - 1]);
  }
  if (e->settings.offdiag) PetscCall(MatELLRCompressRows(e, pattern_changed, csr));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GPU bytes of the storage (and of the stored transpose). */
PetscLogDouble MatELLRStorageDeviceBytes(Mat_ELLR *e)
{
  PetscLogDouble b = 0;

#if defined(PETSCELLR_HAVE_CUDA)
  ellr_cuda_info info;

  if (e->dev) {
    ellr_cuda_get_info(e->dev, &info);
    b += (PetscLogDouble)info.device_bytes;
  }
  if (e->devT) {
    ellr_cuda_get_info(e->devT, &info);
    b += (PetscLogDouble)info.device_bytes;
  }
#else
  (void)e;
#endif
  return b;
}

/*
  One copy of the matrix on the GPU: ours.  An aijcusparse matrix keeps its device CSR only where one of its own
  operations needs it (a factorization, MatProduct, MatScale ...): PETSc makes it at the first such call and keeps
  it current from then on.  Until then (offload mask CPU or unallocated: the host holds the only current values)
  the storage is built and refilled from the host CSR, and nothing of ours asks aijcusparse for its device arrays
  (which would make them).  With the values current only on the GPU (offload mask GPU: COO assembly from device
  arrays, aijcusparse's kernels) they come from aijcusparse's device CSR, which exists then.
*/
PetscBool MatELLRHostOnly(Mat A, Mat_ELLR *e)
{
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscBool cusparse = PETSC_FALSE;

  if (!e || e->backend != MAT_ELLR_BACKEND_CUDA || A->boundtocpu) return PETSC_FALSE;
  if (PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &cusparse) || !cusparse) return PETSC_FALSE;
  return (PetscBool)(A->offloadmask == PETSC_OFFLOAD_CPU || A->offloadmask == PETSC_OFFLOAD_UNALLOCATED);
#else
  (void)A;
  (void)e;
  return PETSC_FALSE;
#endif
}

/* Whether the storage is to be made on aijcusparse's device CSR (ellr_cuda_create_on): where that copy exists for the
   current pattern (its offload mask says current on the GPU, or -- host values changed since -- it was seen for this
   nonzero state), the storage multiplies with it instead of holding a second copy.  Not an off-diagonal block (its
   compressed rows are aijcusparse's own arrangement), not 64-bit indices (aijcusparse's are 32-bit there). */
PetscBool MatELLRUsesCUSPARSECSR(Mat A, Mat_ELLR *e)
{
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA) && !defined(PETSC_USE_64BIT_INDICES)
  PetscBool cusparse = PETSC_FALSE;

  if (!e || e->backend != MAT_ELLR_BACKEND_CUDA || e->settings.offdiag || A->boundtocpu) return PETSC_FALSE;
  if (PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &cusparse) || !cusparse) return PETSC_FALSE;
  return (PetscBool)(A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH || (A->offloadmask == PETSC_OFFLOAD_CPU && e->cusparsenoted == A->nonzerostate + 1));
#else
  (void)A;
  (void)e;
  return PETSC_FALSE;
#endif
}

/* The plan the storage was made from. */
const ellr_plan *MatELLRGetPlan(Mat_ELLR *e)
{
#if defined(PETSCELLR_HAVE_CUDA)
  if (e->backend == MAT_ELLR_BACKEND_CUDA && e->dev) return ellr_cuda_plan(e->dev);
#endif
  return &e->host.plan;
}

PetscErrorCode MatELLRResolve(Mat_ELLR *e)
{
  PetscFunctionBegin;
  PetscCall(MatELLRResolveBackend(e->settings.backend, &e->backend));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSCELLR_HAVE_CUDA)
static PetscErrorCode MatELLRBuildGPU(Mat A, Mat_ELLR *e, const ellr_csr *csr)
{
  void *stream;

  PetscFunctionBegin;
  PetscCall(MatELLRSelectDevice());
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(PetscLogEventBegin(MAT_ELLRCopyToGPU, A, 0, 0, 0));
  PetscCall(MatELLREngineCheck(e, ellr_cuda_create(csr, &e->settings.eng, stream, &e->dev), "Building the ELLPACK-R storage on the GPU"));
  PetscCall(PetscLogEventEnd(MAT_ELLRCopyToGPU, A, 0, 0, 0));
  /* a streamed build keeps no CSR: its timed products wait for the first product's own vectors (ellrmult.c), so
     that no two vectors of the matrix's size are allocated for them */
  if (ellr_cuda_streamed(e->dev)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_ELLRTune, A, 0, 0, 0));
  PetscCall(MatELLREngineCheck(e, ellr_cuda_tune(e->dev, csr, stream), "Tuning the GPU kernel"));
  PetscCall(PetscLogEventEnd(MAT_ELLRTune, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The stored transpose, made at the first transpose product and kept current: the transpose of the CSR on the host
  (ellr_transpose.c), a storage of its own whose product sums each row of A^T in a fixed order -- the same bits every
  time, where A's storage would scatter into y with atomic additions.  Values: a gather from A's and a refresh.
*/
PetscErrorCode MatELLRUpdateTranspose(Mat A, Mat_ELLR *e)
{
  ellr_csr csr;
  void    *stream;

  PetscFunctionBegin;
  if (e->devT && e->stateT == e->state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRGetCSR(A, e, PETSC_FALSE, &csr));
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(PetscLogEventBegin(MAT_ELLRBuild, A, 0, 0, 0));
  if (!e->devT) {
    /* a layout of its own: a column of A coupled to most rows is a long row of A^T, which sorted slices of 32 (or the
       CSR kernels) store near CSR's size where A's own layout could pad it past any fill limit */
    ellr_params p     = e->settings.eng;
    p.sort_rows       = 1;
    p.sort_window     = ELLR_SORT_WINDOW_AUTO;
    p.slice_height    = 32;
    p.max_fill        = 0;
    p.threads_per_row = 0;
    p.block_size      = 0;
    p.family          = ELLR_FAMILY_AUTO;
    ellr_transpose_destroy(&e->tr);
    PetscCall(MatELLREngineCheck(e, ellr_transpose_create(&csr, &e->tr), "Building the stored transpose"));
    PetscCall(MatELLREngineCheck(e, ellr_cuda_create(&e->tr.csr, &p, stream, &e->devT), "Building the stored transpose on the GPU"));
    PetscCall(MatELLREngineCheck(e, ellr_cuda_tune(e->devT, &e->tr.csr, stream), "Tuning the stored transpose's GPU kernel"));
  } else {
    ellr_transpose_values(&csr, &e->tr);
    PetscCall(MatELLREngineCheck(e, ellr_cuda_update_values(e->devT, &e->tr.csr, stream), "Copying new values of the stored transpose to the GPU"));
  }
  PetscCall(PetscLogEventEnd(MAT_ELLRBuild, A, 0, 0, 0));
  e->stateT = e->state;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA) && !defined(PETSC_USE_64BIT_INDICES)
/* aijcusparse's device CSR exists (MatELLRUsesCUSPARSECSR): the storage is made on it (ellr_cuda_create_on: a CSR kernel
   family multiplies with aijcusparse's arrays), so the GPU still holds the matrix once.  Asking aijcusparse for its
   arrays makes them current (its own upload of new host values, where the host changed them).  Host pattern for the
   plan of small blocks.  aijcusparse's copies and the engine may run on different streams: the device is
   synchronized around them. */
static PetscErrorCode MatELLRUpdateFromDevice(Mat A, Mat_ELLR *e, PetscBool rebuild)
{
  const PetscInt    *ia, *ja, *di = NULL, *dj = NULL;
  const PetscScalar *dv = NULL;
  PetscInt           n;
  PetscBool          done;
  ellr_csr           csr;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&csr, sizeof(csr)));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on a sequential AIJ matrix");
  csr.nrows       = (int32_t)n;
  csr.ncols       = (int32_t)A->cmap->n;
  csr.rowptr      = (const int32_t *)ia;
  csr.colidx      = (const int32_t *)ja;
  csr.nrows_out   = (int32_t)n;
  csr.cols_sorted = 1;
  if (n > 0 && ia[n] > 0) {
    PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &di, &dj));
    PetscCall(MatSeqAIJCUSPARSEGetArrayRead(A, &dv));
    csr.d_rowptr = (const int32_t *)di;
    csr.d_colidx = (const int32_t *)dj;
    csr.d_val    = (const double *)dv;
  }
  PetscCall(MatELLRCheckStatus(ellr_cuda_device_synchronize(), "Waiting for aijcusparse's copy to the GPU"));
  if (!rebuild && (!e->dev || !ellr_cuda_borrows(e->dev, &csr))) { /* another storage, or aijcusparse's arrays moved */
    rebuild = PETSC_TRUE;
    PetscCall(MatELLRFreeStorage(e));
  }
  if (rebuild) {
    PetscCall(MatELLRSelectDevice());
    PetscCall(MatELLRGetStream(&stream));
    PetscCall(MatELLREngineCheck(e, ellr_cuda_create_on(&csr, &e->settings.eng, stream, &e->dev), "Making the storage on aijcusparse's device CSR"));
    PetscCall(MatELLREngineCheck(e, ellr_cuda_tune(e->dev, &csr, stream), "Tuning the GPU kernel"));
    PetscCall(PetscInfo(A, "the storage multiplies with aijcusparse's device CSR, which a PETSc operation made: the GPU holds this block once\n"));
  }
  if (dv) {
    PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &dv));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &di, &dj));
  }
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* From the host CSR (the AIJ base; the CPU backend; the off-diagonal block by its non-empty rows). */
static PetscErrorCode MatELLRUpdateFromHost(Mat A, Mat_ELLR *e, PetscBool rebuild)
{
  ellr_csr csr;

  PetscFunctionBegin;
  PetscCall(MatELLRGetCSR(A, e, rebuild, &csr));
  if (!rebuild && (int64_t)csr.rowptr[csr.nrows] != MatELLRGetPlan(e)->stats.nnz) { /* a pattern replaced behind the nonzero state */
    rebuild = PETSC_TRUE;
    PetscCall(MatELLRFreeStorage(e));
    PetscCall(MatELLRGetCSR(A, e, rebuild, &csr));
  }
  if (e->backend == MAT_ELLR_BACKEND_CPU) {
    if (rebuild) PetscCall(MatELLREngineCheck(e, ellr_matrix_create(&csr, &e->settings.eng, &e->host), "Building the ELLPACK-R storage"));
    else PetscCall(MatELLREngineCheck(e, ellr_fill_values(&e->host, &csr), "Refilling the ELLPACK-R storage"));
  }
#if defined(PETSCELLR_HAVE_CUDA)
  else if (rebuild) PetscCall(MatELLRBuildGPU(A, e, &csr));
  else {
    void *stream;

    PetscCall(MatELLRGetStream(&stream));
    PetscCall(PetscLogEventBegin(MAT_ELLRCopyToGPU, A, 0, 0, 0));
    PetscCall(MatELLREngineCheck(e, ellr_cuda_update_values(e->dev, &csr, stream), "Copying new values to the GPU"));
    PetscCall(PetscLogEventEnd(MAT_ELLRCopyToGPU, A, 0, 0, 0));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Makes the storage agree with the matrix: nothing when neither values nor pattern changed, a value refill when only
  values changed (what SNES and TS do every step), a rebuild when the pattern, the column count or the header's data
  changed.  Called before every product on the storage (and by -mat_view), so no product sees a stale copy, whatever
  PETSc routine changed the matrix.
*/
PetscErrorCode MatELLRUpdate(Mat A, Mat_ELLR *e)
{
  PetscObjectState state;
  PetscBool        rebuild;

  PetscFunctionBegin;
  PetscCall(MatELLRResolve(e));
  if (e->backend == MAT_ELLR_BACKEND_AIJ) {
    if (e->built) PetscCall(MatELLRFreeStorage(e));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  if (e->backend == MAT_ELLR_BACKEND_CUDA && !A->boundtocpu && (A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) && e->cusparsenoted != A->nonzerostate + 1) {
    PetscBool cusparse;

    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &cusparse));
    if (cusparse) {
      PetscCall(PetscInfo(A, "aijcusparse's device CSR of this %" PetscInt_FMT " x %" PetscInt_FMT " block exists now: a PETSc operation that needs it ran (a factorization, MatProduct, MatTranspose, or aijcusparse's kernels of MatScale, MatShift, MatAXPY, MatDiagonalScale, COO assembly); PETSc keeps it current from now on%s\n", A->rmap->n, A->cmap->n, e->settings.offdiag ? ", beside this storage (an off-diagonal block keeps its own)" : ", and the storage multiplies with it"));
      e->cusparsenoted = A->nonzerostate + 1;
    }
  }
#endif
  /* MatHeaderReplace() moves the container of another matrix onto A (owner), a merge gives A another's data: their
     state stamps may equal the ones kept here; aijcusparse's device CSR made since (a factorization) takes the
     storage's place */
  rebuild = (PetscBool)(!e->built || A->nonzerostate != e->nzstate || A->cmap->n != e->ncols || A->data != e->data || A != e->owner);
#if defined(PETSCELLR_HAVE_CUDA)
  if (MatELLRUsesCUSPARSECSR(A, e) != e->fromdevice) rebuild = PETSC_TRUE;
#endif
  if (!rebuild && state == e->state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_ELLRBuild, A, 0, 0, 0));
  if (rebuild) PetscCall(MatELLRFreeStorage(e));
#if defined(PETSCELLR_HAVE_CUDA)
  e->fromdevice = MatELLRUsesCUSPARSECSR(A, e);
  if (e->fromdevice) {
  #if defined(PETSCELLR_PETSC_HAS_CUDA) && !defined(PETSC_USE_64BIT_INDICES)
    PetscCall(MatELLRUpdateFromDevice(A, e, rebuild));
  #endif
  } else
#endif
    PetscCall(MatELLRUpdateFromHost(A, e, rebuild));
  PetscCall(PetscLogEventEnd(MAT_ELLRBuild, A, 0, 0, 0));
  if (rebuild) {
    int family = -1;
#if defined(PETSCELLR_HAVE_CUDA)
    if (e->backend == MAT_ELLR_BACKEND_CUDA && e->dev) {
      ellr_cuda_info info;

      ellr_cuda_get_info(e->dev, &info);
      family = info.family;
      PetscCall(PetscInfo(A, "ELLPACK-R storage (%s) built on the GPU: %.3f MB of device memory\n", e->settings.format, info.device_bytes / 1e6));
    }
#endif
    PetscCall(MatELLRRegisterCitations(e->settings.format, family));
  }
  e->built   = PETSC_TRUE;
  e->state   = state;
  e->nzstate = A->nonzerostate;
  e->ncols   = A->cmap->n;
  e->data    = A->data;
  e->owner   = A;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_view ::ascii_info: where products run, what was chosen and what it costs (MatGetType() names the base type:
   this says the format). */
PetscErrorCode MatELLRViewStorage(Mat A, Mat_ELLR *e, PetscViewer viewer)
{
  const ellr_plan  *pl;
  const ellr_stats *st;
  const char       *fmt = MatELLRIsPELLR(&e->settings) ? "pellr (PELLR: rows sorted by length" : "ellrt (ELLPACK-R, ELLR-T kernel";

  PetscFunctionBegin;
  if (e->settings.offdiag) fmt = "off-diagonal block (sorted 32-row slices of its non-empty rows";
  PetscCall(MatELLRResolve(e));
  if (MatELLRBoundToCPU(A) && e->backend != MAT_ELLR_BACKEND_AIJ) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s), backend %s: bound to the CPU (MatBindToCPU()), products are the base type's host products; no storage now\n", fmt, MatELLRBackends[e->backend]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatELLRUpdate(A, e));
  if (e->backend == MAT_ELLR_BACKEND_AIJ) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s), backend aij: the base type's own products (no GPU%s); no second copy of the matrix\n", fmt,
#if defined(PETSCELLR_HAVE_CUDA)
                                     e->settings.backend == MAT_ELLR_BACKEND_AIJ ? " asked for" : " visible"
#else
                                     " backend in this build"
#endif
                                     ));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s), backend %s%s\n", fmt, MatELLRBackends[e->backend], e->backend == MAT_ELLR_BACKEND_CPU ? " (the ELLPACK-R storage on the CPU)" : ""));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  pl = MatELLRGetPlan(e);
  st = &pl->stats;
  {
    char order[256], window[64] = "", why[160] = "";
    if (pl->sorted && pl->window) PetscCall(PetscSNPrintf(window, sizeof(window), " inside windows of %d rows", (int)pl->window));
    if (e->settings.eng.sort_rows && e->settings.eng.sort_window == ELLR_SORT_WINDOW_AUTO) PetscCall(PetscSNPrintf(why, sizeof(why), " (window picked from the matrix: %s)", pl->sorted ? (pl->window ? "the smallest window storing within 2% of a full sort" : "no window stores within 2% of a full sort") : "a sort would remove under 2% of the stored entries"));
#if defined(PETSCELLR_HAVE_CUDA)
    if (e->backend == MAT_ELLR_BACKEND_CUDA) {
      ellr_cuda_info ci;
      ellr_cuda_get_info(e->dev, &ci);
      if (ci.order_skipped) PetscCall(PetscSNPrintf(why, sizeof(why), " (not sorted: the automatic kernel family, IPCSR, followed from the row lengths alone and stores no padded layout)"));
    }
#endif
    PetscCall(PetscSNPrintf(order, sizeof(order), "%s%s%s", pl->sorted ? "sorted by decreasing length" : "in their own order", window, why));
    if (pl->per_slice_T) {
      char    counts[160] = "";
      size_t  len         = 0;
      PetscInt nT[6]      = {0, 0, 0, 0, 0, 0};
      for (PetscInt s = 0; s < pl->nslices; s++) {
        int k = 0;
        while ((1 << k) < ellr_plan_slice_T(pl, (int32_t)s)) k++;
        nT[k]++;
      }
      for (PetscInt k = 0; k < 6; k++) {
        if (!nT[k]) continue;
        PetscCall(PetscSNPrintf(counts + len, sizeof(counts) - len, "%s%" PetscInt_FMT " x T=%d", len ? ", " : "", nT[k], 1 << k));
        PetscCall(PetscStrlen(counts, &len));
      }
      char why[96] = "-mat_ellr_threads_per_row -1";
      if (!e->settings.eng.threads_per_row) PetscCall(PetscSNPrintf(why, sizeof(why), "automatic: a slice's T %dx the mean row's or more, or tuned", ELLR_SLICE_T_AUTO_SPREAD));
      PetscCall(PetscViewerASCIIPrintf(viewer, "threads per row per slice (%s; the smallest power of two with %d T >= the slice's longest row): %s slices; slice height %d (%d slice%s), rows %s\n", why, ELLR_SLICE_T_ENTRIES, counts, (int)pl->C, (int)pl->nslices, pl->nslices == 1 ? "" : "s", order));
    } else {
      char how[160] = "";
      if (!e->settings.eng.threads_per_row) { /* ellr.h's ellr_auto_threads */
        if (pl->nrows < ELLR_SMALL_ROWS) PetscCall(PetscSNPrintf(how, sizeof(how), " (automatic: under %d rows, the smallest power of two with %d T >= the widest slice, halved while it pads past -mat_ellr_max_fill, or tuned)", ELLR_SMALL_ROWS, ELLR_SMALL_T_ENTRIES));
        else PetscCall(PetscSNPrintf(how, sizeof(how), " (automatic: the smallest power of two with 16 T >= the mean row, or tuned)"));
      }
      PetscCall(PetscViewerASCIIPrintf(viewer, "threads per row %d%s, slice height %d (%d slice%s), rows %s\n", (int)pl->T, how, (int)pl->C, (int)pl->nslices, pl->nslices == 1 ? "" : "s", order));
    }
  }
  if (pl->nrows_out > pl->nrows) PetscCall(PetscViewerASCIIPrintf(viewer, "rows stored: the %d non-empty of %d (neither set-up nor product touches the empty ones)\n", (int)pl->nrows, (int)pl->nrows_out));
  PetscCall(PetscViewerASCIIPrintf(viewer, "fill ratio %.3f (%lld stored entries for %lld nonzeros), storage %.3f MB (CSR %.3f MB)\n", st->fill, (long long)(st->nstored + st->long_entries), (long long)st->nnz, ellr_stored_bytes(st) / 1e6, (12.0 * st->nnz + 4.0 * (pl->nrows + 1)) / 1e6));
  if (st->index_bytes) PetscCall(PetscViewerASCIIPrintf(viewer, "column indices: 16-bit offsets in %d of %d slices; %.2f bytes per nonzero (CSR %.2f)\n", (int)st->packed_slices, (int)pl->nslices, st->nnz ? (double)ellr_stored_bytes(st) / (double)st->nnz : 0.0, st->nnz ? (12.0 * st->nnz + 4.0 * (pl->nrows + 1)) / (double)st->nnz : 0.0));
  if (pl->nlong) PetscCall(PetscViewerASCIIPrintf(viewer, "long rows: %d of at least %d entries (%lld entries) left the slices (-mat_ellr_long_rows %d%s): chunks of %d entries shared by many warps, joined in a fixed order\n", (int)pl->nlong, (int)pl->long_min, (long long)st->long_entries, e->settings.eng.long_row_min, e->settings.eng.long_row_min ? "" : ": automatic, rows in their own order: max(512, 16 x the mean row length)", ELLR_LONG_CHUNK));
  PetscCall(PetscViewerASCIIPrintf(viewer, "warp iterations per product %lld (%lld in the original row order%s), longest row %d, mean %.2f\n", (long long)st->niter, (long long)st->niter_unsorted, pl->per_slice_T ? " at the mean row's T" : "", (int)st->maxrowlen, st->meanrowlen));
#if defined(PETSCELLR_HAVE_CUDA)
  if (e->backend == MAT_ELLR_BACKEND_CUDA) {
    ellr_cuda_info info;
    ellr_cuda_get_info(e->dev, &info);
    static const char *how[] = {"model", "exhaustive search", "none", "pattern cache"};
    ellr_cuda_kopts    ko;
    ellr_cuda_get_kopts(e->dev, &ko);
    if (info.family != ELLR_FAMILY_SLICED) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPU kernel family %s (-mat_ellr_kernel %s) on the CSR arrays: %d lanes per row%s; the padded layout above is not stored\n", MatELLRKernels[info.family], MatELLRKernels[e->settings.eng.family], info.csr_T, info.family == ELLR_FAMILY_IPCSR ? ", row blocks through shared memory" : ""));
    } else if (e->settings.eng.family == ELLR_FAMILY_AUTO) PetscCall(PetscViewerASCIIPrintf(viewer, "GPU kernel family sliced (-mat_ellr_kernel auto)\n"));
    if (info.family_ms[0] > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "kernel families timed (one product each): sliced %.4f ms, csr_vector %.4f ms, ipcsr %.4f ms\n", (double)info.family_ms[0], (double)info.family_ms[1], (double)info.family_ms[2]));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPU: block size %d, kernel %s, %s, %s loads; picked by %s (-mat_ellr_tune %s); %.3f MB on the device\n", info.block_size, ko.kernel == 2 ? "chunks" : "rows", ko.uselen ? "rows stop at their length" : "rows stop at the slice width", ko.loads ? "streaming" : "read-only", how[info.tune_how], MatELLRTuneModes[e->settings.eng.tune], info.device_bytes / 1e6));
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPU setup %.3f ms (wall): plan on the %s %.3f ms, upload %.3f ms (%.1f MB at %.1f GB/s), fill %.3f ms, tune %.3f ms (%d products)\n", info.create_ms + info.tune_ms, info.plan_on_host ? "host" : "GPU", info.plan_ms, info.upload_ms, info.upload_bytes / 1e6, info.upload_ms > 0 ? info.upload_bytes / info.upload_ms / 1e6 : 0.0, info.fill_ms, info.tune_ms, info.tune_products));
    if (info.streamed) PetscCall(PetscViewerASCIIPrintf(viewer, "built from the host CSR streamed through %.3f MB of staging on the GPU, a chunk of rows at a time (the 'upload' is inside the fill): the whole CSR was never on the GPU\n", info.stage_bytes / 1e6));
    if (e->fromdevice) PetscCall(PetscViewerASCIIPrintf(viewer, "made on aijcusparse's device CSR, which a PETSc operation made (a factorization, MatProduct, aijcusparse's kernels): the kernel family above multiplies with its arrays, no copy of ours beside it\n"));
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
    {
      /* what aijcusparse's device CSR of this block takes (compressed rows for an off-diagonal block: offsets, row
         indices and a work vector per non-empty row) */
      const PetscLogDouble rows = e->settings.offdiag ? pl->nrows : pl->nrows_out, csr = 12.0 * st->nnz + 4.0 * (rows + 1) + (e->settings.offdiag ? 12.0 * rows : 0.0);
      const PetscLogDouble ours = MatELLRStorageDeviceBytes(e);
      PetscBool            cusparse;

      PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &cusparse));
      if (cusparse) {
        if (e->fromdevice) PetscCall(PetscViewerASCIIPrintf(viewer, "device memory of the matrix: aijcusparse's device CSR (%.3f MB), shared, and %.3f MB of the kernel's own\n", csr / 1e6, ours / 1e6));
        else if (PetscAbsReal(ours - csr) < 0.0005 * csr) PetscCall(PetscViewerASCIIPrintf(viewer, "device memory of the matrix: %.3f MB, the same as aijcusparse's device CSR of it\n", ours / 1e6));
        else PetscCall(PetscViewerASCIIPrintf(viewer, "device memory of the matrix: %.3f MB, %.1f%% %s aijcusparse's device CSR of it (%.3f MB)\n", ours / 1e6, csr > 0 ? 100.0 * PetscAbsReal(ours - csr) / csr : 0.0, ours <= csr ? "less than" : "more than", csr / 1e6));
        if (A->offloadmask == PETSC_OFFLOAD_BOTH || A->offloadmask == PETSC_OFFLOAD_GPU) PetscCall(PetscViewerASCIIPrintf(viewer, "aijcusparse's device CSR exists too: a PETSc operation that needs it ran (a factorization, MatProduct, aijcusparse's own kernels; -info says when)\n"));
        else PetscCall(PetscViewerASCIIPrintf(viewer, "aijcusparse's device CSR: %s\n", A->offloadmask == PETSC_OFFLOAD_CPU && e->cusparsenoted ? "stale since the host's values changed (made earlier by an operation that needed it)" : "not made (this storage is the matrix's only copy on the GPU)"));
      }
    }
  #endif
    if (e->devT) {
      ellr_cuda_info ti;
      ellr_cuda_get_info(e->devT, &ti);
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPU setup of the stored transpose (made at the first MatMultTranspose): %.3f ms, %.3f MB on the device\n", ti.create_ms + ti.tune_ms, ti.device_bytes / 1e6));
    }
    if (info.refreshes) PetscCall(PetscViewerASCIIPrintf(viewer, "values refreshed %d times; the last: copy %.3f ms (%.1f GB/s), refill %.3f ms on the GPU\n", info.refreshes, info.refresh_copy_ms, info.refresh_copy_ms > 0 ? 8.0 * st->nnz / info.refresh_copy_ms / 1e6 : 0.0, info.refresh_fill_ms));
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
    PetscCall(PetscViewerASCIIPrintf(viewer, "vectors: device arrays of VECCUDA vectors are used directly; other vectors are staged through pinned host buffers\n"));
  #else
    PetscCall(PetscViewerASCIIPrintf(viewer, "vectors: this PETSc has no CUDA, so x and y are staged through pinned host buffers on every product\n"));
  #endif
  }
#endif
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}
