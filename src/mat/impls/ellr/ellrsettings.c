/* ellrsettings.c - defaults, options, backend choice and engine errors, shared by the seq and mpi types. */
#include "ellrimpl.h"
#include <stdlib.h>
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscdevice.h>
#endif

const char *MatELLRTypeName(MatELLRFormat format, PetscBool mpi)
{
  if (format == MAT_ELLR_FORMAT_PELLR) return mpi ? MATMPIAIJPELLR : MATSEQAIJPELLR;
  return mpi ? MATMPIAIJELLRT : MATSEQAIJELLRT;
}

/* ELLRT: rows in their own order (ELLPACK-R, ELLR-T kernel) in slices of 32: each slice as wide as its own longest row,
   and its column indices 16-bit offsets where its span allows (measured, H100: 1.09-1.16x the same layout with
   32-bit indices on the stencils of tests/spmv; one slice of all rows, -mat_ellr_slice_height 0, can pack only
   matrices of under 65535 columns).
   PELLR: rows sorted by length into slices of 32 (PELLR, sliced as in pJDS), and on the GPU the kernel family chosen per
   matrix (auto): that sliced layout, or the CSR kernels (adaptive CSR-vector, IPCSR) where they are faster. */
PetscErrorCode MatELLRSettingsDefault(MatELLRFormat format, MatELLRSettings *s)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  s->format           = format;
  s->backend          = MAT_ELLR_BACKEND_AUTO;
  s->eng.max_fill     = 8.0;
  s->eng.sort_rows    = format == MAT_ELLR_FORMAT_PELLR;
  s->eng.slice_height = 32;
  s->eng.sort_window  = ELLR_SORT_WINDOW_AUTO; /* with -mat_ellr_sort (pellr): sigma picked from the matrix */
  s->eng.tune         = ELLR_TUNE_MODEL;
  s->eng.pin_host     = 1;
  s->eng.family       = format == MAT_ELLR_FORMAT_PELLR ? ELLR_FAMILY_AUTO : ELLR_FAMILY_SLICED;
#if defined(PETSC_USE_DEBUG)
  /* a PETSc built --with-debugging checks aijcusparse's exact type name inside its operations (every copy to the
     GPU, MatAXPY, MatMatMult ...): the types build on MATAIJ there (products on the GPU, the rest on the host) */
  s->cusparse_base = PETSC_FALSE;
#else
  s->cusparse_base = PETSC_TRUE;
#endif
  s->spgemm_warmup = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Reads -mat_ellr_* (under the matrix's prefix) through an options block that is already open: the one
   MatSetFromOptions() hands over, so that -help lists them.  Values the engine cannot use are errors that
   say what to use instead. */
PetscErrorCode MatELLRSettingsFromOptions(Mat A, MatELLROptionItems PetscOptionsObject, MatELLRSettings *s)
{
  PetscInt    T = s->eng.threads_per_row, bs = s->eng.block_size, C = s->eng.slice_height, window = s->eng.sort_window;
  PetscBool   sort = s->eng.sort_rows ? PETSC_TRUE : PETSC_FALSE, verify = s->verify, warmup = s->spgemm_warmup, pin = s->eng.pin_host ? PETSC_TRUE : PETSC_FALSE, idx16 = s->eng.index_bits == 32 ? PETSC_FALSE : PETSC_TRUE;
  PetscEnum   tune = (PetscEnum)s->eng.tune, kernel = (PetscEnum)s->eng.family, join = (PetscEnum)s->eng.long_join, transpose = (PetscEnum)s->transpose;
  PetscInt    longmin = s->eng.long_row_min;
  PetscReal   max_fill = s->eng.max_fill;
  PetscEnum   backend  = (PetscEnum)s->backend;
  const char *pre      = NULL;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "petsc-ellr: ELLPACK-R storage of MATELLR (ellrt: ELLR-T, Vazquez, Fernandez and Garzon 2012) and MATPELLR (pellr: PELLR, Wang and Gu 2020, sliced as pJDS, Kreutzer et al. 2012); -citations lists the papers a run used");
  PetscCall(PetscOptionsEnum("-mat_ellr_backend", "Where products run: auto (cuda with a GPU, else aij), cuda, cpu (the ELLPACK-R storage on the CPU) or aij (AIJ's own products)", "MATELLR", MatELLRBackends, backend, &backend, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_threads_per_row", "Threads per row T: 1, 2, 4, 8, 16 or 32; -1 = each slice its own, from its longest row; 0 = automatic (under 32768 rows one T from the widest slice, 4 T >= it; else one T from the mean row, or each slice its own where a slice needs 4x that)", "MATELLR", T, &T, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_block_size", "GPU threads per block, a multiple of 32 up to 1024; 0 = automatic", "MATELLR", bs, &bs, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_slice_height", "Rows per slice; 0 = one slice of all rows", "MATELLR", C, &C, NULL));
  PetscCall(PetscOptionsBool("-mat_ellr_sort", "Store rows sorted by decreasing length (PELLR)", "MATELLR", sort, &sort, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_sort_window", "Sort rows only inside windows of this many rows; 0 = all rows; -1 = picked from the matrix (no sort where it would store under 2% fewer entries)", "MATELLR", window, &window, NULL));
  PetscCall(PetscOptionsReal("-mat_ellr_max_fill", "Refuse storage of more than this many times CSR's bytes; 0 = no limit", "MATELLR", max_fill, &max_fill, NULL));
  PetscCall(PetscOptionsEnum("-mat_ellr_tune", "How the GPU kernel's parameters left at 0 are picked: model (row statistics; at most 3 timed products, on large blocks only), exhaustive (timed search) or none (the model, untimed)", "MATELLR", MatELLRTuneModes, tune, &tune, NULL));
  PetscCall(PetscOptionsEnum("-mat_ellr_kernel", "GPU kernel family: sliced (the ELLPACK-R layout), auto (chosen per matrix: sliced, or a CSR kernel where faster), csr_vector (adaptive CSR-vector) or ipcsr (IPCSR) on the CSR arrays", "MATELLR", MatELLRKernels, kernel, &kernel, NULL));
  PetscCall(PetscOptionsBool("-mat_ellr_index16", "Store 16-bit column offsets from a per-slice base in every slice whose columns span under 65535 (10 bytes per entry instead of 12); false: 32-bit indices everywhere", "MATELLR", idx16, &idx16, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_long_rows", "Rows of at least this many entries leave the slices for the long-row path (chunks of 256 entries shared by many warps; they pad nothing); 0 = automatic (rows in their own order, 2^20 entries or more: max(512, 16 x the mean row length)); -1 = none", "MATELLR", longmin, &longmin, NULL));
  PetscCall(PetscOptionsEnum("-mat_ellr_long_join", "How the chunks of a long row meet on the GPU: segmented (partial sums added in a fixed order: the same bits every product) or atomic (atomicAdd into y: rounding may change between products)", "MATELLR", MatELLRLongJoins, join, &join, NULL));
  PetscCall(PetscOptionsEnum("-mat_ellr_transpose", "How the GPU multiplies by the transpose: stored (a transposed copy made at the first MatMultTranspose: the same bits every product) or atomic (A's storage, atomicAdd into y: no second copy, rounding may change between products)", "MATELLR", MatELLRTransposes, transpose, &transpose, NULL));
  PetscCall(PetscOptionsBool("-mat_ellr_pin_host", "Page-lock the CSR arrays while the pattern lives, so that uploads and value refreshes run at the link's speed", "MATELLR", pin, &pin, NULL));
  {
    PetscBool cb = s->cusparse_base, set = PETSC_FALSE;
    PetscCall(PetscOptionsBool("-mat_ellr_cusparse_base", "With a PETSc built with CUDA and the CUDA backend, build on MATAIJCUSPARSE (its factorizations, products, COO assembly and vector operations on the GPU; the storage filled from its device CSR); false: on MATAIJ, the storage uploaded from the host CSR (read when the type is set; default false with a debugging PETSc)", "MATELLR", cb, &cb, &set));
#if defined(PETSC_USE_DEBUG) && defined(PETSCELLR_CUSPARSE_BASE)
    PetscCheck(!(set && cb), PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "-mat_ellr_cusparse_base true needs a PETSc configured --with-debugging=0: a debugging PETSc checks aijcusparse's exact type name inside its operations (copies to the GPU, MatAXPY, MatMatMult), which %s is not; here use -mat_ellr_cusparse_base false (the default: products on the GPU, factorizations and MatProduct on the host)", ((PetscObject)A)->type_name);
#endif
    s->cusparse_base = cb;
  }
  PetscCall(PetscOptionsBool("-mat_ellr_spgemm_warmup", "aijcusparse base: run cuSPARSE's SpGEMM once on a small matrix before this process's first MatProduct with these types (GAMG set-ups stopped inside cuSPARSE's SpGEMM now and then without it)", "MATELLR", warmup, &warmup, NULL));
  PetscCall(PetscOptionsBool("-mat_ellr_verify", "Check every GPU matrix-vector product against the CPU engine (slow; for debugging; not C = A B with B dense)", "MATELLR", verify, &verify, NULL));
  PetscOptionsHeadEnd();
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)A, &pre));
  if (!pre) pre = "";

  PetscCheck(T == ELLR_THREADS_PER_SLICE || (T >= 0 && T <= ELLR_MAX_THREADS_PER_ROW && !(T & (T - 1))), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_threads_per_row %" PetscInt_FMT " is invalid: use 1, 2, 4, 8, 16 or 32 (or 0 to tune it, -1 for each slice its own)", pre, T);
  PetscCheck(bs >= 0 && bs <= 1024 && bs % 32 == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_block_size %" PetscInt_FMT " is invalid: use a multiple of 32 up to 1024, e.g. 128, 256 or 512 (or 0 to tune it)", pre, bs);
  PetscCheck(C >= 0 && C <= 2147483647, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_slice_height %" PetscInt_FMT " is invalid: use a positive number of rows per slice such as 32, or 0 for one slice of all rows", pre, C);
  PetscCheck(window >= ELLR_SORT_WINDOW_AUTO, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_sort_window %" PetscInt_FMT " is invalid: use a positive number of rows, 0 to sort all rows, or -1 to let the matrix decide", pre, window);
  PetscCheck(longmin >= ELLR_LONG_ROWS_NONE && longmin <= 2147483647, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_long_rows %" PetscInt_FMT " is invalid: use a number of entries (1 sends every non-empty row to the long-row path), 0 for automatic or -1 for none", pre, longmin);
  PetscCheck(max_fill >= 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_max_fill %g is invalid: use a ratio to CSR's memory such as 8, or 0 for no limit", pre, (double)max_fill);
  s->eng.threads_per_row = (int)T;
  s->eng.block_size      = (int)bs;
  s->eng.slice_height    = (int)C;
  s->eng.sort_rows       = sort ? 1 : 0;
  s->eng.sort_window     = (int)window;
  s->eng.max_fill        = (double)max_fill;
  s->backend             = (MatELLRBackend)backend;
  s->verify              = verify;
  s->spgemm_warmup       = warmup;
  s->eng.tune            = (int)tune;
  s->eng.pin_host        = pin ? 1 : 0;
  s->eng.family          = (int)kernel;
  s->eng.index_bits      = idx16 ? 0 : 32;
  s->eng.long_row_min    = (int)longmin;
  s->eng.long_join       = (int)join;
  s->transpose           = (PetscInt)transpose;
  PetscFunctionReturn(0);
}

/* The same options for a matrix that may never see MatSetFromOptions() (MatSetType() alone, DMCreateMatrix(),
   MatConvert()): read silently when the type is set.  -help lists them from MatSetFromOptions(); this block has
   a title of its own, so PETSc (which prints a (prefix, title) block once) still prints that one. */
PetscErrorCode MatELLRSettingsFromOptionsDatabase(Mat A, MatELLRSettings *s)
{
  const char *pre = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)A, &pre));
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), pre, "petsc-ellr options, read when the type is set", "Mat");
  PetscOptionsObject->alreadyprinted = PETSC_TRUE;
  PetscCall(MatELLRSettingsFromOptions(A, PetscOptionsObject, s));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

PetscBool MatELLRSettingsEqual(const MatELLRSettings *a, const MatELLRSettings *b)
{
  return (PetscBool)(a->format == b->format && a->backend == b->backend && a->eng.threads_per_row == b->eng.threads_per_row && a->eng.block_size == b->eng.block_size && a->eng.slice_height == b->eng.slice_height && a->eng.sort_rows == b->eng.sort_rows && a->eng.sort_window == b->eng.sort_window && a->eng.max_fill == b->eng.max_fill && a->eng.tune == b->eng.tune && a->eng.pin_host == b->eng.pin_host && a->eng.family == b->eng.family && a->eng.index_bits == b->eng.index_bits && a->eng.long_row_min == b->eng.long_row_min && a->eng.long_join == b->eng.long_join && a->verify == b->verify && a->spgemm_warmup == b->spgemm_warmup && a->nonempty_rows == b->nonempty_rows && a->transpose == b->transpose);
}

/* A matrix's settings are also kept composed on it.  A header merge (MatAXPY with another pattern, MatTranspose in
   place) hands A the data of a matrix made without A's settings; PETSc 3.26 keeps A's composed objects through it,
   so A takes its settings back from there, including those it was given rather than read under its own prefix (a
   duplicate's, copied from its parent).  MatHeaderReplace(), and a merge in PETSc 3.18, hand A the other matrix's
   composed objects instead: the owner recorded with the settings tells them apart, and A's options are read again. */
#define MAT_ELLR_SETTINGS_KEY "MatELLRSettings"

typedef struct {
  Mat             owner; /* the matrix the settings are for (compared, never dereferenced; the object id would not do:
                            a merge copies the other matrix's id into A) */
  MatELLRSettings settings;
} MatELLRKeptSettings;

PetscErrorCode MatELLRSettingsRecord(Mat A, const MatELLRSettings *s)
{
  PetscContainer       c;
  MatELLRKeptSettings *kept = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, MAT_ELLR_SETTINGS_KEY, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)&kept));
  if (!kept || kept->owner != A) {
    PetscCall(PetscNew(&kept));
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, kept));
    PetscCall(MatELLRContainerFreesPointer(c));
    PetscCall(PetscObjectCompose((PetscObject)A, MAT_ELLR_SETTINGS_KEY, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
  }
  kept->owner    = A;
  kept->settings = *s;
  PetscFunctionReturn(0);
}

/* The settings kept for A; *found is false where there are none (then A's options are read). */
PetscErrorCode MatELLRSettingsRecall(Mat A, MatELLRSettings *s, PetscBool *found)
{
  PetscContainer       c;
  MatELLRKeptSettings *kept = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, MAT_ELLR_SETTINGS_KEY, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)&kept));
  *found = (PetscBool)(kept && kept->owner == A);
  if (*found) *s = kept->settings;
  PetscFunctionReturn(0);
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
      PetscFunctionReturn(0);
    }
  }
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, local));
  PetscFunctionReturn(0);
}
#endif

/* The GPU of this process, chosen once, before its first allocation.  A CUDA-enabled PETSc chooses it through
   its device context (-device_select_cuda); otherwise each process of a node takes its own GPU (node-local
   rank mod the number of GPUs). */
PetscErrorCode MatELLRSelectDevice(void)
{
  static PetscBool selected = PETSC_FALSE;

  PetscFunctionBegin;
  if (selected) PetscFunctionReturn(0);
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
  PetscFunctionReturn(0);
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
  PetscFunctionReturn(0);
}

/* AUTO becomes CUDA when the library has the CUDA backend and a device is visible, else AIJ (AIJ's own CPU
   products: the ELLPACK-R CPU engine is never faster than AIJ).  No collective call, no GPU allocation. */
PetscErrorCode MatELLRResolveBackend(MatELLRBackend asked, MatELLRBackend *resolved)
{
  PetscFunctionBegin;
  if (asked == MAT_ELLR_BACKEND_CPU || asked == MAT_ELLR_BACKEND_AIJ) {
    *resolved = asked;
    PetscFunctionReturn(0);
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
  PetscFunctionReturn(0);
}

/* The ops of a plain base-class matrix, once (for a header that lost this plugin's data): taken from a matrix
   about to be converted, whose mult ops may be AIJ's I-node variants (harmless: a header that lost our data
   is a factored matrix, which has no products). */
PetscErrorCode MatELLRCaptureBaseOps(Mat B, struct _MatOps *ops, PetscBool *captured)
{
  PetscFunctionBegin;
  if (*captured) PetscFunctionReturn(0);
  *ops      = *B->ops;
  *captured = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* -mat_seqaij_type T (seqaijperm, seqaijsell, ...) makes MatCreate_SeqAIJ() convert every new SEQAIJ matrix to T,
   which carries data of its own that these types cannot take (with a CUDA PETSc, aijcusparse's blocks would be
   converted from it too).  Refused before anything is made, with the option named.  blocks: the option as the
   blocks of an MPI matrix read it (they have no prefix); else with A's prefix, as A itself reads it. */
PetscErrorCode MatELLRCheckSeqAIJType(Mat A, PetscBool blocks)
{
  char       type[256];
  const char *pre = blocks ? NULL : ((PetscObject)A)->prefix;
  PetscBool  set, plain;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(((PetscObject)A)->options, pre, "-mat_seqaij_type", type, sizeof(type), &set));
  if (!set) PetscFunctionReturn(0);
  PetscCall(PetscStrcmp(type, MATSEQAIJ, &plain));
  PetscCheck(plain, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "-%smat_seqaij_type %s makes every SEQAIJ matrix%s of type %s, which carries data of its own that the petsc-ellr types cannot take: leave the option out with them", pre ? pre : "", type, blocks ? " (the blocks of an MPIAIJ one too)" : "", type);
  PetscFunctionReturn(0);
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
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: %s. If the GPU is out of memory use more GPUs (MPI processes) or -mat_ellr_backend aij (AIJ's own products on the host, no second copy of the matrix)", what, ellr_last_error());
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s", what, ellr_last_error());
  }
  PetscFunctionReturn(0);
}

/* With a CUDA-enabled PETSc and products on the GPU, MatCreateVecs() gives VECCUDA: no PCIe traffic per
   product.  Converting back (backend NULL) restores the standard type. */
PetscErrorCode MatELLRSetDefaultVecType(Mat B, const MatELLRBackend *backend)
{
  PetscBool cuda = PETSC_FALSE;

  PetscFunctionBegin;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  if (backend) {
    MatELLRBackend resolved = MAT_ELLR_BACKEND_CPU;
    PetscCall(MatELLRResolveBackend(*backend, &resolved));
    cuda = (PetscBool)(resolved == MAT_ELLR_BACKEND_CUDA);
  }
#endif
  if (backend && !cuda) PetscFunctionReturn(0); /* leave what the user or the DM set */
  if (!backend && !B->defaultvectype) PetscFunctionReturn(0);
  PetscCall(PetscFree(B->defaultvectype));
  PetscCall(PetscStrallocpy(cuda ? VECCUDA : VECSTANDARD, &B->defaultvectype));
  PetscFunctionReturn(0);
}
