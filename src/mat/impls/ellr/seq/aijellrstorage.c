/*
  aijellrstorage.c - the ELLPACK-R storage of MATSEQAIJELLRT / MATSEQAIJPELLR: a cache of the AIJ CSR, made at
  the first product and kept current.

  The host CSR stays the source of truth: assembly, MatSetValues, factorizations, MatZeroRows ... are AIJ's.
  Before every product the storage is compared with PETSc's object state (values changed: refilled in place)
  and nonzero state (pattern changed: rebuilt); the AIJ methods that replace the pattern without touching the
  nonzero state (preallocation again, COO, MatResetPreallocation) drop the storage themselves (aijellr.c).
*/
#include "../ellrimpl.h"
#if defined(PETSCELLR_HAVE_CUDA)
  #include "ellr_cuda_internal.cuh"
#endif

struct _MatOps MatSeqAIJELLR_AIJOps;
static PetscBool MatSeqAIJELLR_AIJOpsCaptured = PETSC_FALSE;

/* A plain SEQAIJ's ops, for matrices whose header lost this type's data (see MatSeqAIJELLRGetData()). */
PetscErrorCode MatSeqAIJELLRCaptureAIJOps(Mat B)
{
  Mat T;

  PetscFunctionBegin;
  (void)B;
  if (MatSeqAIJELLR_AIJOpsCaptured) PetscFunctionReturn(0);
  /* from a matrix of its own: the one converted may already be an aijcusparse matrix (an MPI block) */
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscCall(MatSetType(T, MATSEQAIJ));
  PetscCall(MatELLRCaptureBaseOps(T, &MatSeqAIJELLR_AIJOps, &MatSeqAIJELLR_AIJOpsCaptured));
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(0);
}

/* A header merge (MatAXPY with another pattern, MatTranspose in place) or MatHeaderReplace() gives A the data of a
   matrix made without A's settings: A takes back the settings kept on it (MatELLRSettingsRecord(); after a
   MatHeaderReplace(), and a merge in PETSc 3.18, its options are read again), once.  The storage's state stamps are
   the other matrix's, while A's state is its own old one plus one: they can be equal with the other matrix changed
   since its last product, so the values are refilled before the next one whatever the stamps say. */
PetscErrorCode MatSeqAIJELLRAdopt(Mat A, Mat_SeqAIJELLR *e)
{
  MatELLRSettings s;
  PetscBool       kept;

  PetscFunctionBegin;
  if (e->owner == A) PetscFunctionReturn(0);
  e->owner = A;
  e->state = -1;
#if defined(PETSCELLR_HAVE_CUDA)
  e->stateT = -1;
#endif
  PetscCall(MatELLRSettingsRecall(A, &s, &kept));
  if (!kept) {
    PetscCall(MatELLRSettingsDefault(e->typeformat, &s));
    PetscCall(MatELLRSettingsFromOptionsDatabase(A, &s));
    PetscCall(MatELLRSettingsRecord(A, &s));
  }
  if (!MatELLRSettingsEqual(&e->settings, &s)) {
    PetscCall(MatSeqAIJELLRFreeStorage(e));
    e->settings = s;
    e->resolved = PETSC_FALSE;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MatELLRGetProductCount_SeqAIJELLR(Mat A, PetscInt *count)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  *count = e ? e->nproducts : 0;
  PetscFunctionReturn(0);
}

/*
  This type's data of A, or NULL when A's header no longer holds it.  A header merge (in-place LU or ILU in
  PETSc 3.18) keeps A's ops but gives A another matrix's data and spptr; the tag tells.  (The composed
  functions cannot: PETSc 3.25 removes them before the destroy that a merge calls.)
*/
Mat_SeqAIJELLR *MatSeqAIJELLRGetData(Mat A)
{
  Mat_SeqAIJELLR *e = (Mat_SeqAIJELLR *)A->spptr;
  if (e && e->magic == MAT_SEQAIJELLR_MAGIC) return e;
#if defined(PETSCELLR_CUSPARSE_BASE)
  return MatSeqAIJELLRGetAttached(A); /* on the aijcusparse base, spptr is aijcusparse's */
#else
  return NULL;
#endif
}

/* Storages of this process holding page-locked host arrays: MPIAIJ's insertion (mpiaijellr.c) looks at its
   blocks only while some do, so that MatSetValues() costs nothing extra during a first assembly. */
static PetscInt MatSeqAIJELLRPinnedCount = 0;

PetscBool MatSeqAIJELLRAnyPinned(void)
{
  return (PetscBool)(MatSeqAIJELLRPinnedCount > 0);
}

static void MatSeqAIJELLRSetPinned(Mat_SeqAIJELLR *e, PetscBool pinned)
{
  if (e->pinned == pinned) return;
  MatSeqAIJELLRPinnedCount += pinned ? 1 : -1;
  e->pinned = pinned;
}

/* Everything built from the CSR goes, whatever fails on the way: the handles are cleared before the engine frees
   them (a failed destroy has freed what it could; a second one would free it twice), the page-locking is released
   with them, and the first error is raised at the end, with the matrix destroyable and rebuilt at the next product. */
PetscErrorCode MatSeqAIJELLRFreeStorage(Mat_SeqAIJELLR *e)
{
  ellr_status st = ELLR_OK;
  char        msg[512];

  PetscFunctionBegin;
  ellr_matrix_destroy(&e->host);
#if defined(PETSCELLR_HAVE_CUDA)
  {
    ellr_cuda_matrix *d = e->dev, *t = e->devT;
    ellr_status       s2;
    e->dev  = NULL;
    e->devT = NULL;
    if (d && (s2 = ellr_cuda_destroy(d)) && !st) st = s2;
    if (st) PetscCall(PetscStrncpy(msg, ellr_last_error(), sizeof(msg)));
    if (t && (s2 = ellr_cuda_destroy(t)) && !st) {
      st = s2;
      PetscCall(PetscStrncpy(msg, ellr_last_error(), sizeof(msg)));
    }
    ellr_transpose_destroy(&e->tr);
  }
#endif
  e->built = PETSC_FALSE;
  MatSeqAIJELLRSetPinned(e, PETSC_FALSE);
  /* after the storage: the GPU storage may have page-locked them */
  PetscCall(PetscFree2(e->crowptr, e->crows));
  e->ncrows = 0;
  e->cvalid = PETSC_FALSE;
  PetscCheck(!st, PETSC_COMM_SELF, PETSC_ERR_GPU, "Freeing the GPU storage: %s", msg);
  PetscFunctionReturn(0);
}

/* An engine call's failure: the storage goes (nothing half-built or half-refreshed stays, no array stays page-locked
   unknown to the binding), then the error is raised with the engine's text; the next product rebuilds. */
static PetscErrorCode MatSeqAIJELLREngineCheck(Mat_SeqAIJELLR *e, ellr_status st, const char *what)
{
  char           msg[512];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (st == ELLR_OK) PetscFunctionReturn(0);
  PetscCall(PetscStrncpy(msg, ellr_last_error(), sizeof(msg)));
  ierr = MatSeqAIJELLRFreeStorage(e); /* its own failure is secondary: the first error is the one to report */
  (void)ierr;
  (void)ellr_error(st, "%s", msg);
  PetscCall(MatELLRCheckStatus(st, what));
  PetscFunctionReturn(0);
}

/*
  The GPU storage keeps AIJ's CSR arrays page-locked (-mat_ellr_pin_host); memory freed while page-locked would
  leave the driver with stale pages.  AIJ reallocates its arrays only to insert a new nonzero while new
  nonzeros are allowed (nonew == 0: MAT_NEW_NONZERO_ALLOCATION_ERR not set), and MatShift to insert missing
  diagonal entries (after a preallocation of its own); every other change of the arrays goes through
  preallocation, COO or destroy, which drop the storage.  So before values are set into such a matrix
  (MatSetValues() here, MPIAIJ's own insertions into its blocks, MatZeroRows/MatZeroRowsColumns with a diagonal)
  the page-locking is released; the storage stays and later refreshes copy through the driver's pageable path.
  MatShift with a missing diagonal entry drops the storage first (aijellr.c).
*/
/* The first two fields of PETSc's Mat_SeqAIJ (SEQAIJHEADER, the same from 3.18 to 3.26), whose header PETSc
   does not install: nonew is 1 (new nonzeros ignored), -1 (an error), -2 (an error if allocation is needed)
   or 0 (allocated as needed).  Anything else is taken as 0. */
typedef struct {
  PetscBool roworiented;
  PetscInt  nonew;
} MatSeqAIJHeadPrefix;

PetscErrorCode MatSeqAIJELLRUnpinIfReallocatable(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
#if defined(PETSCELLR_HAVE_CUDA)
  const PetscInt nonew = e && e->pinned ? ((MatSeqAIJHeadPrefix *)A->data)->nonew : 0;
  if (e && e->pinned && !(nonew == 1 || (nonew < 0 && nonew >= -2))) { /* only nonew 0 (or unknown) reallocates */
    PetscCall(MatELLRCheckStatus(ellr_cuda_unpin_host(e->dev), "Releasing the page-locked CSR arrays"));
    MatSeqAIJELLRSetPinned(e, PETSC_FALSE);
  }
#else
  (void)e;
#endif
  PetscFunctionReturn(0);
}

#if defined(PETSCELLR_HAVE_CUDA)
/*
  The arrays the GPU storage holds page-locked must still be the ones it was given: AIJ's values and, with 32-bit
  PetscInt and every row stored, AIJ's row offsets and column indices; otherwise this type's own copies, which are
  freed only after the storage.  A route that moved AIJ's arrays past the releases above -- a bug of this binding,
  the freed pages still registered with the driver -- is caught here, before a refresh or a product reads them:
  the page-locking is released, the storage dropped (the next product rebuilds it from the new arrays) and the
  error raised.  Called only when A changed since the last product, and only with arrays page-locked.
*/
static PetscErrorCode MatSeqAIJELLRCheckPinnedArrays(Mat A, Mat_SeqAIJELLR *e)
{
  const PetscScalar *aa;
  const PetscInt    *ia, *ja;
  const void        *mine[3];
  PetscInt           n;
  PetscBool          done, moved = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on a sequential AIJ matrix");
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  #if defined(PETSC_USE_64BIT_INDICES)
  mine[0] = e->rowptr32;
  mine[1] = e->colidx32;
  #else
  mine[0] = ia;
  mine[1] = ja;
  #endif
  if (e->crows) mine[0] = e->crowptr; /* an off-diagonal block by its non-empty rows */
  mine[2] = aa;
  for (int k = 0; k < 3; k++) {
    const void *p = ellr_cuda_pinned_array(e->dev, k);
    if (p && p != mine[k]) moved = PETSC_TRUE;
  }
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (moved) {
    (void)ellr_cuda_unpin_host(e->dev); /* the pages may be gone: what the driver says of them changes nothing now */
    MatSeqAIJELLRSetPinned(e, PETSC_FALSE);
    PetscCall(MatSeqAIJELLRFreeStorage(e));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "AIJ's CSR arrays were reallocated while the GPU storage held them page-locked, by a route petsc-ellr does not intercept (please report the calls that led here); -mat_ellr_pin_host false avoids the page-locking");
  }
  PetscFunctionReturn(0);
}
#endif

/* An MPI off-diagonal block by its non-empty rows only (ellr_csr.rows): made once per pattern; the column
   indices and values stay AIJ's (the empty rows hold none of them). */
static PetscErrorCode MatSeqAIJELLRCompressRows(Mat_SeqAIJELLR *e, PetscBool pattern_changed, ellr_csr *csr)
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
          e->crows[nc]        = i;
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
  PetscFunctionReturn(0);
}

/* The CSR of A as the engine takes it: 32-bit indices.  With 64-bit PetscInt the row offsets are copied on
   every call (they are what tells a changed pattern), the column indices only when the pattern changed. */
PetscErrorCode MatSeqAIJELLRGetCSR(Mat A, PetscBool pattern_changed, ellr_csr *csr)
{
  Mat_SeqAIJELLR    *e = MatSeqAIJELLRGetData(A);
  PetscInt           n;
  const PetscInt    *ia, *ja;
  const PetscScalar *aa;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(csr, sizeof(*csr))); /* the host CSR: no device copy */
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
      /* the storage may hold these copies page-locked: it goes first (their sizes changed, so it is stale anyway) */
      if (e->pinned) PetscCall(MatSeqAIJELLRFreeStorage(e));
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
  (void)e;
  (void)pattern_changed;
  csr->rowptr = (const int32_t *)ia;
  csr->colidx = (const int32_t *)ja;
#endif
  csr->rows        = NULL;
  csr->nrows_out   = (int32_t)n;
  csr->cols_sorted = 1; /* AIJ keeps each row's columns increasing (its insertion searches them); checked in debug builds */
  if (PetscDefined(USE_DEBUG) && pattern_changed) {
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt k = ia[i] + 1; k < ia[i + 1]; k++) PetscCheck(ja[k] > ja[k - 1], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Row %" PetscInt_FMT " of the AIJ matrix has unsorted or repeated columns (%" PetscInt_FMT " after %" PetscInt_FMT "): AIJ requires each row's columns increasing (column indices given by MatSeqAIJSetColumnIndices(), MatCreateSeqAIJWithArrays() or rows inserted under MAT_SORTED_FULL must be sorted)", i, ja[k], ja[k - 1]);
  }
  if (e->settings.nonempty_rows) PetscCall(MatSeqAIJELLRCompressRows(e, pattern_changed, csr));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* The plan the storage was made from. */
const ellr_plan *MatSeqAIJELLRGetPlan(Mat_SeqAIJELLR *e)
{
#if defined(PETSCELLR_HAVE_CUDA)
  if (e->backend == MAT_ELLR_BACKEND_CUDA && e->dev) return ellr_cuda_plan(e->dev); /* no CUDA call: read per product */
#endif
  return &e->host.plan;
}

/* Where products of A run, for the current settings (cheap after the first call). */
PetscErrorCode MatSeqAIJELLRResolve(Mat A, Mat_SeqAIJELLR *e)
{
  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRAdopt(A, e));
  if (e->resolved) PetscFunctionReturn(0);
  PetscCall(MatELLRResolveBackend(e->settings.backend, &e->backend));
  e->resolved = PETSC_TRUE;
  PetscFunctionReturn(0);
}

#if defined(PETSCELLR_HAVE_CUDA)
static PetscErrorCode MatSeqAIJELLRBuildGPU(Mat A, Mat_SeqAIJELLR *e, const ellr_csr *csr)
{
  void *stream;

  PetscFunctionBegin;
  PetscCall(MatELLRSelectDevice());
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(PetscLogEventBegin(MAT_ELLRCopyToGPU, A, 0, 0, 0));
  PetscCall(MatSeqAIJELLREngineCheck(e, ellr_cuda_create(csr, &e->settings.eng, stream, &e->dev), "Building the ELLPACK-R storage on the GPU"));
  PetscCall(PetscLogEventEnd(MAT_ELLRCopyToGPU, A, 0, 0, 0));
  /* at once: a failure below releases the page-locking with the storage */
  MatSeqAIJELLRSetPinned(e, (PetscBool)(ellr_cuda_pinned_bytes(e->dev) > 0));
  PetscCall(PetscLogEventBegin(MAT_ELLRTune, A, 0, 0, 0));
  PetscCall(MatSeqAIJELLREngineCheck(e, ellr_cuda_tune(e->dev, csr, stream), "Tuning the GPU kernel"));
  PetscCall(PetscLogEventEnd(MAT_ELLRTune, A, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
  The stored transpose (-mat_ellr_transpose stored), made at the first transpose product and kept current: the
  transpose of the CSR on the host (ellr_transpose.c), a matrix of its own with this matrix's settings, whose
  product sums each row of A^T in a fixed order -- the same bits every time, where A's storage would scatter into
  y with atomic additions.  Its arrays are this type's: not page-locked (AIJ never moves them).  Values: a gather
  from A's and a refresh.  A new pattern drops it with the storage (MatSeqAIJELLRFreeStorage()).
*/
PetscErrorCode MatSeqAIJELLRUpdateTranspose(Mat A)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);
  ellr_csr        csr;
  void           *stream;

  PetscFunctionBegin;
  if (e->devT && e->stateT == e->state) PetscFunctionReturn(0);
  PetscCall(MatSeqAIJELLRGetCSR(A, PETSC_FALSE, &csr));
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(PetscLogEventBegin(MAT_ELLRBuild, A, 0, 0, 0));
  if (!e->devT) {
    /* a layout of its own, whatever A's: a column of A coupled to most rows is a long row of A^T, which sorted slices
       of 32 (or the CSR kernels) store near CSR's size where A's own layout could pad it past any fill limit */
    ellr_params p     = e->settings.eng;
    p.pin_host        = 0;
    p.sort_rows       = 1;
    p.sort_window     = ELLR_SORT_WINDOW_AUTO;
    p.slice_height    = 32;
    p.max_fill        = 0;
    p.threads_per_row = 0;
    p.block_size      = 0;
    p.family          = ELLR_FAMILY_AUTO;
    ellr_transpose_destroy(&e->tr);
    PetscCall(MatSeqAIJELLREngineCheck(e, ellr_transpose_create(&csr, &e->tr), "Building the stored transpose"));
    PetscCall(MatSeqAIJELLREngineCheck(e, ellr_cuda_create(&e->tr.csr, &p, stream, &e->devT), "Building the stored transpose on the GPU (-mat_ellr_transpose atomic needs no second copy)"));
    PetscCall(MatSeqAIJELLREngineCheck(e, ellr_cuda_tune(e->devT, &e->tr.csr, stream), "Tuning the stored transpose's GPU kernel"));
  } else {
    ellr_transpose_values(&csr, &e->tr);
    PetscCall(MatSeqAIJELLREngineCheck(e, ellr_cuda_update_values(e->devT, &e->tr.csr, stream), "Copying new values of the stored transpose to the GPU"));
  }
  PetscCall(PetscLogEventEnd(MAT_ELLRBuild, A, 0, 0, 0));
  e->stateT = e->state;
  PetscFunctionReturn(0);
}
#endif

#if defined(PETSCELLR_CUSPARSE_BASE)
/* On the aijcusparse base: built, or refilled, from aijcusparse's device CSR (its upload, done by it and logged by
   PETSc, is the only one; nothing is page-locked, no host pass over the values).  A value change is a refill on the
   GPU from aijcusparse's device values. */
static PetscErrorCode MatSeqAIJELLRUpdateFromDevice(Mat A, Mat_SeqAIJELLR *e, PetscBool rebuild)
{
  ellr_csr csr;
  void    *stream;

  PetscFunctionBegin;
  /* aijcusparse's copies and this storage's fills run on streams that need not be ordered with each other: a refill
     still reading aijcusparse's values completes before they change, and aijcusparse's upload before the fill reads it */
  PetscCall(MatELLRCheckStatus(ellr_cuda_device_synchronize(), "Waiting for the GPU"));
  PetscCall(MatSeqAIJELLRGetDeviceCSR(A, &csr));
  PetscCall(MatELLRCheckStatus(ellr_cuda_device_synchronize(), "Waiting for aijcusparse's copy to the GPU"));
  if (!rebuild && (int64_t)csr.rowptr[csr.nrows] != MatSeqAIJELLRGetPlan(e)->stats.nnz) { /* a pattern replaced behind the nonzero state */
    rebuild = PETSC_TRUE;
    PetscCall(MatSeqAIJELLRFreeStorage(e));
  }
  if (rebuild) PetscCall(MatSeqAIJELLRBuildGPU(A, e, &csr));
  else {
    PetscCall(MatELLRGetStream(&stream));
    PetscCall(MatSeqAIJELLREngineCheck(e, ellr_cuda_update_values(e->dev, &csr, stream), "Refilling the ELLPACK-R storage from aijcusparse's device values"));
  }
  PetscCall(MatSeqAIJELLRRestoreDeviceCSR(A, &csr));
  PetscFunctionReturn(0);
}
#endif

/* The same from the host CSR (the AIJ base; the CPU backend): a refill or a build, on the CPU or uploaded to the GPU. */
static PetscErrorCode MatSeqAIJELLRUpdateFromHost(Mat A, Mat_SeqAIJELLR *e, PetscBool rebuild)
{
  ellr_csr csr;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRGetCSR(A, rebuild, &csr));
  /* a pattern replaced behind the nonzero state: the count of nonzeros tells */
  if (!rebuild && (int64_t)csr.rowptr[csr.nrows] != MatSeqAIJELLRGetPlan(e)->stats.nnz) {
    rebuild = PETSC_TRUE;
    PetscCall(MatSeqAIJELLRFreeStorage(e));
    PetscCall(MatSeqAIJELLRGetCSR(A, rebuild, &csr));
  }
  if (e->backend == MAT_ELLR_BACKEND_CPU) {
    if (rebuild) PetscCall(MatSeqAIJELLREngineCheck(e, ellr_matrix_create(&csr, &e->settings.eng, &e->host), "Building the ELLPACK-R storage"));
    else PetscCall(MatSeqAIJELLREngineCheck(e, ellr_fill_values(&e->host, &csr), "Refilling the ELLPACK-R storage"));
  }
#if defined(PETSCELLR_HAVE_CUDA)
  else if (rebuild) PetscCall(MatSeqAIJELLRBuildGPU(A, e, &csr));
  else {
    void *stream;
    PetscCall(MatELLRGetStream(&stream));
    PetscCall(PetscLogEventBegin(MAT_ELLRCopyToGPU, A, 0, 0, 0));
    PetscCall(MatSeqAIJELLREngineCheck(e, ellr_cuda_update_values(e->dev, &csr, stream), "Copying new values to the GPU"));
    PetscCall(PetscLogEventEnd(MAT_ELLRCopyToGPU, A, 0, 0, 0));
    /* the second refresh may page-lock AIJ's values (ELLR_PIN_REFRESH_MIN) */
    if (!e->pinned && e->settings.eng.pin_host) MatSeqAIJELLRSetPinned(e, (PetscBool)(ellr_cuda_pinned_bytes(e->dev) > 0));
  }
#endif
  PetscFunctionReturn(0);
}

/*
  Makes the ELLPACK-R storage agree with the AIJ matrix: nothing when neither values nor pattern changed, a
  value refill when only values changed (what SNES and TS do every step), a rebuild when the pattern or the
  column count changed.  Called before every product on the storage (and by -mat_view), so no product ever
  sees a stale copy, whatever base-class routine changed the matrix.  Nothing to do with AIJ's products.
*/
PetscErrorCode MatSeqAIJELLRUpdate(Mat A)
{
  Mat_SeqAIJELLR  *e = MatSeqAIJELLRGetData(A);
  PetscObjectState state;
  PetscBool        rebuild;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJELLRResolve(A, e));
  if (e->backend == MAT_ELLR_BACKEND_AIJ) {
    if (e->built) PetscCall(MatSeqAIJELLRFreeStorage(e));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  rebuild = (PetscBool)(!e->built || A->nonzerostate != e->nzstate || A->cmap->n != e->ncols);
  if (!rebuild && state == e->state) PetscFunctionReturn(0);

#if defined(PETSCELLR_HAVE_CUDA)
  if (e->pinned) PetscCall(MatSeqAIJELLRCheckPinnedArrays(A, e)); /* before the storage goes: it names the old arrays */
#endif
  PetscCall(PetscLogEventBegin(MAT_ELLRBuild, A, 0, 0, 0));
  if (rebuild) PetscCall(MatSeqAIJELLRFreeStorage(e));
#if defined(PETSCELLR_CUSPARSE_BASE)
  if (e->cusparse && e->backend == MAT_ELLR_BACKEND_CUDA) PetscCall(MatSeqAIJELLRUpdateFromDevice(A, e, rebuild));
  else
#endif
    PetscCall(MatSeqAIJELLRUpdateFromHost(A, e, rebuild));
  PetscCall(PetscLogEventEnd(MAT_ELLRBuild, A, 0, 0, 0));
  if (rebuild) {
    int family = -1;
#if defined(PETSCELLR_HAVE_CUDA)
    if (e->backend == MAT_ELLR_BACKEND_CUDA && e->dev) {
      ellr_cuda_info info;
      ellr_cuda_get_info(e->dev, &info);
      family = info.family;
      /* PETSc keeps no count of device memory: -info is where its size is logged (and -mat_view ::ascii_info) */
      PetscCall(PetscInfo(A, "ELLPACK-R storage built on the GPU: it holds %.3f MB of device memory\n", info.device_bytes / 1e6));
    }
#endif
    PetscCall(MatELLRRegisterCitations(e->settings.format, family));
  }
  e->built   = PETSC_TRUE;
  e->state   = state;
  e->nzstate = A->nonzerostate;
  e->ncols   = A->cmap->n;
  PetscFunctionReturn(0);
}

/* -mat_view ::ascii_info: where products run, what was chosen and what it costs. */
PetscErrorCode MatSeqAIJELLRView_Info(Mat A, PetscViewer viewer)
{
  Mat_SeqAIJELLR   *e = MatSeqAIJELLRGetData(A);
  const ellr_plan  *pl;
  const ellr_stats *st;
  const char       *fmt;

  PetscFunctionBegin;
  if (!e) PetscFunctionReturn(0);
  fmt = e->settings.format == MAT_ELLR_FORMAT_PELLR ? "pellr (PELLR: rows sorted by length" : "ellrt (ELLPACK-R, ELLR-T kernel";
  PetscCall(MatSeqAIJELLRResolve(A, e));
  if (MatELLRBoundToCPUFlag(A) && e->backend != MAT_ELLR_BACKEND_AIJ) { /* DMDA binds its matrices while it preallocates them */
    PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s), backend %s: bound to the CPU (MatBindToCPU()), products run AIJ's host code; no storage now\n", fmt, MatELLRBackends[e->backend]));
    PetscFunctionReturn(0);
  }
  PetscCall(MatSeqAIJELLRUpdate(A));
  if (e->backend == MAT_ELLR_BACKEND_AIJ) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s), backend aij: AIJ's own CPU products on the CSR (no GPU%s); no second copy of the matrix\n", fmt,
#if defined(PETSCELLR_HAVE_CUDA)
                                     e->settings.backend == MAT_ELLR_BACKEND_AIJ ? " asked for" : " visible"
#else
                                     " backend in this build"
#endif
                                     ));
    PetscFunctionReturn(0);
  }
  pl = MatSeqAIJELLRGetPlan(e);
  st = &pl->stats;
  PetscCall(PetscViewerASCIIPrintf(viewer, "petsc-ellr format %s), backend %s%s\n", fmt, MatELLRBackends[e->backend], e->backend == MAT_ELLR_BACKEND_CPU ? " (the ELLPACK-R storage on the CPU)" : ""));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  {
    char order[256], window[64] = "", why[160] = "";
    if (pl->sorted && pl->window) PetscCall(PetscSNPrintf(window, sizeof(window), " inside windows of %d rows", (int)pl->window));
    if (e->settings.eng.sort_rows && e->settings.eng.sort_window == ELLR_SORT_WINDOW_AUTO) PetscCall(PetscSNPrintf(why, sizeof(why), " (-mat_ellr_sort_window -1: %s)", pl->sorted ? (pl->window ? "the smallest window storing within 2% of a full sort" : "no window stores within 2% of a full sort") : "a sort would remove under 2% of the stored entries"));
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
  if (st->index_bytes) PetscCall(PetscViewerASCIIPrintf(viewer, "column indices: 16-bit offsets in %d of %d slices (-mat_ellr_index16 %s); %.2f bytes per nonzero (CSR %.2f)\n", (int)st->packed_slices, (int)pl->nslices, e->settings.eng.index_bits == 32 ? "false" : "true", st->nnz ? (double)ellr_stored_bytes(st) / (double)st->nnz : 0.0, st->nnz ? (12.0 * st->nnz + 4.0 * (pl->nrows + 1)) / (double)st->nnz : 0.0));
  if (pl->nlong) PetscCall(PetscViewerASCIIPrintf(viewer, "long rows: %d of at least %d entries (%lld entries) left the slices (-mat_ellr_long_rows %d%s): chunks of %d entries shared by many warps, joined %s (-mat_ellr_long_join %s)\n", (int)pl->nlong, (int)pl->long_min, (long long)st->long_entries, e->settings.eng.long_row_min, e->settings.eng.long_row_min ? "" : ": automatic, rows in their own order: max(512, 16 x the mean row length)", ELLR_LONG_CHUNK, e->settings.eng.long_join == ELLR_LONG_JOIN_ATOMIC ? "by atomic additions" : "in a fixed order", MatELLRLongJoins[e->settings.eng.long_join]));
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
    PetscCall(PetscViewerASCIIPrintf(viewer, "GPU setup %.3f ms (wall): plan on the %s %.3f ms, upload %.3f ms (%.1f MB at %.1f GB/s, page-locking %.3f ms of it on the host), fill %.3f ms, tune %.3f ms (%d products)\n", info.create_ms + info.tune_ms, info.plan_on_host ? "host" : "GPU", info.plan_ms, info.upload_ms, info.upload_bytes / 1e6, info.upload_ms > 0 ? info.upload_bytes / info.upload_ms / 1e6 : 0.0, info.pin_ms, info.fill_ms, info.tune_ms, info.tune_products));
    PetscCall(PetscViewerASCIIPrintf(viewer, "the plan (during the upload): row order %.3f ms, slice geometry %.3f ms, storage allocation %.3f ms; then waited %.3f ms for the upload\n", info.plan_parts_ms[0], info.plan_parts_ms[1], info.plan_parts_ms[2], info.upload_wait_ms));
    if (e->cusparse) PetscCall(PetscViewerASCIIPrintf(viewer, "base class aijcusparse (-mat_ellr_cusparse_base): the storage is filled on the GPU from aijcusparse's device CSR (its upload is the only one; the 'upload' above is a copy on the device), value changes refill it there; factorizations, MatProduct, COO assembly and vector operations are aijcusparse's, on the GPU\n"));
    else if (info.pinned_bytes && info.refresh_pin_ms > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "host CSR values page-locked at the second refresh (%.3f ms): %.1f MB, kept while the pattern lives\n", info.refresh_pin_ms, info.pinned_bytes / 1e6));
    else if (info.pinned_bytes) PetscCall(PetscViewerASCIIPrintf(viewer, "host CSR page-locked: %.1f MB, kept while the pattern lives\n", info.pinned_bytes / 1e6));
    else if (info.pin_note[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "host CSR not page-locked: %s\n", info.pin_note));
    else if (e->settings.eng.pin_host) PetscCall(PetscViewerASCIIPrintf(viewer, "host CSR not page-locked (arrays under %g MB are copied as they are, values from %g MB up are page-locked at the second refresh; the page-locking is released when AIJ may reallocate them for new nonzeros)\n", (double)ELLR_PIN_MIN / 1048576.0, (double)ELLR_PIN_REFRESH_MIN / 1048576.0));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "host CSR not page-locked (-mat_ellr_pin_host false)\n"));
    if (e->devT) {
      ellr_cuda_info ti;
      ellr_cuda_get_info(e->devT, &ti);
      PetscCall(PetscViewerASCIIPrintf(viewer, "GPU setup of the stored transpose (-mat_ellr_transpose stored, made at the first MatMultTranspose): %.3f ms, %.3f MB on the device\n", ti.create_ms + ti.tune_ms, ti.device_bytes / 1e6));
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
  PetscFunctionReturn(0);
}
