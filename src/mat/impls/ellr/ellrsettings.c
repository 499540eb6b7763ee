/* ellrsettings.c - defaults, options, backend choice and engine errors, shared by the seq and mpi types. */
#include "ellrimpl.h"
#include <stdlib.h>
#include <string.h>
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscdevice.h>
#endif

/* ellrt: rows in their own order in slices of 32 (ELLPACK-R, ELLR-T kernel); pellr: rows sorted by length where that
   removes padding, slices of 32 (PELLR, sliced as in pJDS), the GPU kernel family chosen per matrix.  What is no
   option is automatic: block size, sort window, 16-bit offsets, the fixed-order long-row join and stored transpose. */
PetscErrorCode MatELLRSettingsDefault(MatType format, MatELLRSettings *s)
{
  PetscBool pellr;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  PetscCall(PetscStrcmp(format, MATPELLR, &pellr));
  s->format           = pellr ? MATPELLR : MATELLR;
  s->backend          = MAT_ELLR_BACKEND_AUTO;
  s->eng.max_fill     = 8.0;
  s->eng.sort_rows    = pellr;
  s->eng.slice_height = 32;
  s->eng.sort_window  = ELLR_SORT_WINDOW_AUTO;
  s->eng.tune         = ELLR_TUNE_MODEL;
  s->eng.family       = pellr ? ELLR_FAMILY_AUTO : ELLR_FAMILY_SLICED;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The off-diagonal block of an MPI matrix: the parent's backend, its non-empty rows only (most rows hold no ghost
   entry), sorted 32-row slices, one thread per row and no timed tuning (a few entries per row: timing products cost
   more than half its set-up, doc/performance.md). */
void MatELLRSettingsOffDiag(const MatELLRSettings *parent, MatELLRSettings *s)
{
  (void)MatELLRSettingsDefault(MATPELLR, s);
  s->format              = parent->format;
  s->backend             = parent->backend;
  s->offdiag             = PETSC_TRUE;
  s->eng.threads_per_row = 1;
  s->eng.block_size      = 256;
  s->eng.max_fill        = 0; /* bounded by the slicing; empty rows cost nothing */
  s->eng.long_row_min    = parent->eng.long_row_min;
  s->eng.family          = ELLR_FAMILY_SLICED;
}

/* Reads -mat_ellr_* (under the matrix's prefix) through an options block that is already open: the one
   MatSetFromOptions() hands over, so that -help lists them.  Values the engine cannot use are errors that say what
   to use instead. */
PetscErrorCode MatELLRSettingsFromOptions(Mat A, MatELLROptionItems PetscOptionsObject, MatELLRSettings *s)
{
  PetscInt    T = s->eng.threads_per_row, C = s->eng.slice_height, longmin = s->eng.long_row_min;
  PetscBool   sort = s->eng.sort_rows ? PETSC_TRUE : PETSC_FALSE;
  PetscEnum   tune = (PetscEnum)s->eng.tune, kernel = (PetscEnum)s->eng.family, backend = (PetscEnum)s->backend;
  PetscReal   max_fill = s->eng.max_fill;
  const char *pre      = ((PetscObject)A)->prefix ? ((PetscObject)A)->prefix : "";
  MPI_Comm    comm     = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "petsc-ellr: ELLPACK-R products of MATELLR (ellrt) and MATPELLR (pellr); -citations lists the papers a run used");
  PetscCall(PetscOptionsEnum("-mat_ellr_backend", "Where products run: auto (cuda with a GPU, else aij), cuda, cpu (the ELLPACK-R storage on the CPU) or aij (the base type's own products)", "MATELLR", MatELLRBackends, backend, &backend, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_threads_per_row", "Threads per row T: 1, 2, 4, 8, 16 or 32; -1 = each slice its own; 0 = automatic", "MATELLR", T, &T, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_slice_height", "Rows per slice; 0 = one slice of all rows (full-width ELLPACK-R)", "MATELLR", C, &C, NULL));
  PetscCall(PetscOptionsBool("-mat_ellr_sort", "Store rows sorted by decreasing length (PELLR), where sorting removes padding", "MATELLR", sort, &sort, NULL));
  PetscCall(PetscOptionsEnum("-mat_ellr_kernel", "GPU kernel family: sliced, auto (sliced or a CSR kernel, timed per matrix), csr_vector (adaptive CSR-vector) or ipcsr (IPCSR)", "MATELLR", MatELLRKernels, kernel, &kernel, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_long_rows", "Rows of at least this many entries leave the slices for chunks shared by many warps; 0 = automatic, -1 = none", "MATELLR", longmin, &longmin, NULL));
  PetscCall(PetscOptionsEnum("-mat_ellr_tune", "How GPU parameters left automatic are picked: model (at most 3 timed products, large blocks only), exhaustive (timed search) or none", "MATELLR", MatELLRTuneModes, tune, &tune, NULL));
  PetscCall(PetscOptionsReal("-mat_ellr_max_fill", "Refuse storage of more than this many times CSR's bytes; 0 = no limit", "MATELLR", max_fill, &max_fill, NULL));
  PetscOptionsHeadEnd();
  PetscCheck(T == ELLR_THREADS_PER_SLICE || (T >= 0 && T <= ELLR_MAX_THREADS_PER_ROW && !(T & (T - 1))), comm, PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_threads_per_row %" PetscInt_FMT " is invalid: use 1, 2, 4, 8, 16 or 32 (or 0 to tune it, -1 for each slice its own)", pre, T);
  PetscCheck(C >= 0 && C <= 2147483647, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_slice_height %" PetscInt_FMT " is invalid: use a positive number of rows per slice such as 32, or 0 for one slice of all rows", pre, C);
  PetscCheck(longmin >= ELLR_LONG_ROWS_NONE && longmin <= 2147483647, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_long_rows %" PetscInt_FMT " is invalid: use a number of entries (1 sends every non-empty row to the long-row path), 0 for automatic or -1 for none", pre, longmin);
  PetscCheck(max_fill >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_max_fill %g is invalid: use a ratio to CSR's memory such as 8, or 0 for no limit", pre, (double)max_fill);
  if (s->offdiag) PetscFunctionReturn(PETSC_SUCCESS); /* the off-diagonal block keeps its own layout */
  s->eng.threads_per_row = (int)T;
  s->eng.slice_height    = (int)C;
  s->eng.sort_rows       = sort ? 1 : 0;
  s->eng.max_fill        = (double)max_fill;
  s->eng.tune            = (int)tune;
  s->eng.family          = (int)kernel;
  s->eng.long_row_min    = (int)longmin;
  s->backend             = (MatELLRBackend)backend;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same options for a matrix that may never see MatSetFromOptions() (MatSetType() alone, DMCreateMatrix(),
   MatConvert()): read silently when the type is set; MatSetFromOptions() lists them under -help. */
PetscErrorCode MatELLRSettingsFromOptionsDatabase(Mat A, MatELLRSettings *s)
{
  PetscFunctionBegin;
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, "petsc-ellr options, read when the type is set", "Mat");
  PetscOptionsObject->alreadyprinted = PETSC_TRUE;
  PetscCall(MatELLRSettingsFromOptions(A, PetscOptionsObject, s));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool MatELLRSettingsEqual(const MatELLRSettings *a, const MatELLRSettings *b)
{
  return (PetscBool)(a->format == b->format && a->backend == b->backend && a->offdiag == b->offdiag && !memcmp(&a->eng, &b->eng, sizeof(a->eng)));
}

#if defined(PETSCELLR_HAVE_CUDA) && !defined(PETSCELLR_PETSC_HAS_CUDA)
/* This process's rank among the processes of its node, without a collective call (lazy set-ups inside a
   product must never call one): the launchers' environment, else the rank in PETSC_COMM_WORLD. */
static PetscErrorCode MatELLRNodeLocalRank(PetscMPIInt *local)
{
  static const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK", "SLURM_LOCALID"};

  PetscFunctionBegin;
  for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++) {
    const char *v = getenv(vars[k]);
    if (v && *v) {
      *local = (PetscMPIInt)atoi(v);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, local));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* The GPU of this process, chosen once, before its first allocation.  A CUDA-enabled PETSc chooses it through
   its device context (-device_select_cuda); otherwise each process of a node takes its own GPU (node-local
   rank mod the number of GPUs). */
PetscErrorCode MatELLRSelectDevice(void)
{
  static PetscBool selected = PETSC_FALSE;

  PetscFunctionBegin;
  if (selected) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PETSCELLR_HAVE_CUDA)
  #if defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  {
    PetscDeviceContext dctx;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx)); /* makes PETSc's device the current one */
  }
  #else
  {
    PetscMPIInt local;
    PetscCall(MatELLRNodeLocalRank(&local));
    PetscCall(MatELLRCheckStatus(ellr_cuda_select_device((int)local), "Selecting this process's GPU"));
  }
  #endif
#endif
  selected = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's current CUDA stream (a cudaStream_t, as void *): every GPU operation of a matrix orders with PETSc's
   vector kernels.  NULL (the legacy default stream) when PETSc has no CUDA or predates stream handles. */
PetscErrorCode MatELLRGetStream(void **stream)
{
  PetscFunctionBegin;
  *stream = NULL;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA) && PETSC_VERSION_GE(3, 20, 0)
  {
    PetscDeviceContext dctx;
    void              *handle = NULL;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
    if (handle) *stream = *(void **)handle;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AUTO becomes CUDA when the library has the CUDA backend and a device is visible, else AIJ (AIJ's own CPU
   products: the ELLPACK-R CPU engine is never faster than AIJ).  No collective call, no GPU allocation. */
PetscErrorCode MatELLRResolveBackend(MatELLRBackend asked, MatELLRBackend *resolved)
{
  PetscFunctionBegin;
  if (asked == MAT_ELLR_BACKEND_CPU || asked == MAT_ELLR_BACKEND_AIJ) {
    *resolved = asked;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(PETSCELLR_HAVE_CUDA)
  {
    const int ndev = ellr_cuda_device_count();
    if (asked == MAT_ELLR_BACKEND_CUDA) PetscCheck(ndev > 0, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "-mat_ellr_backend cuda: no CUDA device is visible to this process (check the driver and CUDA_VISIBLE_DEVICES), use -mat_ellr_backend auto, aij or cpu");
    *resolved = ndev > 0 ? MAT_ELLR_BACKEND_CUDA : MAT_ELLR_BACKEND_AIJ;
  }
#else
  PetscCheck(asked != MAT_ELLR_BACKEND_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP, "-mat_ellr_backend cuda: this libpetscellr was built without CUDA; rebuild it with nvcc on PATH (make WITH_CUDA=1), or use -mat_ellr_backend auto, aij or cpu");
  *resolved = MAT_ELLR_BACKEND_AIJ;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Turns an engine failure into a PETSc error whose text says what to change. */
PetscErrorCode MatELLRCheckStatus(ellr_status st, const char *what)
{
  PetscFunctionBegin;
  switch (st) {
  case ELLR_OK:
    break;
  case ELLR_ERR_FILL:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %s. Where the longest row is far above the mean: -mat_ellr_long_rows N, N a few times the mean (rows that long leave the slices and pad nothing); else -mat_type pellr (rows sorted by length into slices of 32), fewer -mat_ellr_threads_per_row, or a larger -mat_ellr_max_fill (0: no limit)", what, ellr_last_error());
  case ELLR_ERR_MEM:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "%s: %s. Use more MPI processes (each holds a smaller block), or with -mat_type ellrt try -mat_type pellr, whose storage is smaller", what, ellr_last_error());
  case ELLR_ERR_SIZE:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %s. Use more MPI processes so that each block has fewer than 2^31 nonzeros", what, ellr_last_error());
  case ELLR_ERR_CUDA:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: %s. If the GPU is out of memory use more GPUs (MPI processes) or -mat_ellr_backend aij (the base type's own products, no second copy of the matrix)", what, ellr_last_error());
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s", what, ellr_last_error());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

