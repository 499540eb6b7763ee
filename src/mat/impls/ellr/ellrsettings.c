/* ellrsettings.c - defaults, options, backend choice and engine errors, shared by the seq and mpi types. */
#include "ellrimpl.h"

const char *MatELLRTypeName(MatELLRFormat format, PetscBool mpi)
{
  if (format == MAT_ELLR_FORMAT_PELLR) return mpi ? MATMPIAIJPELLR : MATSEQAIJPELLR;
  return mpi ? MATMPIAIJELLRT : MATSEQAIJELLRT;
}

/* ELLRT: one slice of all rows in their own order (plain ELLPACK-R, seed 000).
   PELLR: rows sorted by length into slices of 32 (seeds 001 and 002). */
PetscErrorCode MatELLRSettingsDefault(MatELLRFormat format, MatELLRSettings *s)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  s->format           = format;
  s->backend          = MAT_ELLR_BACKEND_AUTO;
  s->eng.max_fill     = 8.0;
  s->eng.sort_rows    = format == MAT_ELLR_FORMAT_PELLR;
  s->eng.slice_height = format == MAT_ELLR_FORMAT_PELLR ? 32 : 0;
  PetscFunctionReturn(0);
}

/* Reads -mat_ellr_* for this matrix (its options prefix) and rejects values the engine cannot use. */
PetscErrorCode MatELLRSettingsSetFromOptions(Mat A, MatELLRSettings *s)
{
  PetscInt  T = s->eng.threads_per_row, bs = s->eng.block_size, C = s->eng.slice_height, window = s->eng.sort_window;
  PetscBool sort     = s->eng.sort_rows ? PETSC_TRUE : PETSC_FALSE;
  PetscReal   max_fill = s->eng.max_fill;
  PetscEnum   backend  = (PetscEnum)s->backend;
  const char *pre      = NULL;

  PetscFunctionBegin;
  PetscObjectOptionsBegin((PetscObject)A);
  PetscCall(PetscOptionsInt("-mat_ellr_threads_per_row", "Threads per row T: 1, 2, 4, 8, 16 or 32; 0 = automatic", "MATELLR", T, &T, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_block_size", "GPU threads per block, a multiple of 32 up to 1024; 0 = tuned", "MATELLR", bs, &bs, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_slice_height", "Rows per slice; 0 = one slice of all rows", "MATELLR", C, &C, NULL));
  PetscCall(PetscOptionsBool("-mat_ellr_sort", "Store rows sorted by decreasing length (PELLR)", "MATELLR", sort, &sort, NULL));
  PetscCall(PetscOptionsInt("-mat_ellr_sort_window", "Sort rows only inside windows of this many rows; 0 = all rows", "MATELLR", window, &window, NULL));
  PetscCall(PetscOptionsReal("-mat_ellr_max_fill", "Refuse storage of more than this many stored entries per nonzero; 0 = no limit", "MATELLR", max_fill, &max_fill, NULL));
  PetscCall(PetscOptionsEnum("-mat_ellr_backend", "Where products run", "MATELLR", MatELLRBackends, backend, &backend, NULL));
  PetscCall(PetscOptionsBool("-mat_ellr_verify", "Check every GPU product against the CPU engine (slow; for debugging)", "MATELLR", s->verify, &s->verify, NULL));
  PetscOptionsEnd();
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)A, &pre));
  if (!pre) pre = "";

  PetscCheck(T >= 0 && T <= ELLR_MAX_THREADS_PER_ROW && !(T & (T - 1)), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_threads_per_row %" PetscInt_FMT " is invalid: use 1, 2, 4, 8, 16 or 32 (or 0 to tune it)", pre, T);
  PetscCheck(bs >= 0 && bs <= 1024 && bs % 32 == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_block_size %" PetscInt_FMT " is invalid: use a multiple of 32 up to 1024, e.g. 128, 256 or 512 (or 0 to tune it)", pre, bs);
  PetscCheck(C >= 0 && C <= 2147483647, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_slice_height %" PetscInt_FMT " is invalid: use a positive number of rows per slice such as 32, or 0 for one slice of all rows", pre, C);
  PetscCheck(window >= 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_sort_window %" PetscInt_FMT " is invalid: use a positive number of rows, or 0 to sort all rows", pre, window);
  PetscCheck(max_fill >= 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-%smat_ellr_max_fill %g is invalid: use a ratio of stored entries to nonzeros such as 8, or 0 for no limit", pre, (double)max_fill);
  s->eng.threads_per_row = (int)T;
  s->eng.block_size      = (int)bs;
  s->eng.slice_height    = (int)C;
  s->eng.sort_rows       = sort ? 1 : 0;
  s->eng.sort_window     = (int)window;
  s->eng.max_fill        = (double)max_fill;
  s->backend             = (MatELLRBackend)backend;
  PetscFunctionReturn(0);
}

#if defined(PETSCELLR_HAVE_CUDA) && !defined(PETSCELLR_PETSC_HAS_CUDA)
/* A PETSc without CUDA picks no GPU: give each MPI rank of a node its own, once. */
static PetscErrorCode MatELLRSelectDevice(void)
{
  static PetscBool selected = PETSC_FALSE;
  MPI_Comm         node;
  PetscMPIInt      rank;

  PetscFunctionBegin;
  if (selected) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_split_type(PETSC_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_rank(node, &rank));
  PetscCallMPI(MPI_Comm_free(&node));
  PetscCall(MatELLRCheckStatus(ellr_cuda_select_device((int)rank), "Selecting this process's GPU"));
  selected = PETSC_TRUE;
  PetscFunctionReturn(0);
}
#endif

/* AUTO becomes CUDA when the library has the CUDA backend and a device is visible, else CPU. */
PetscErrorCode MatELLRResolveBackend(MatELLRBackend asked, MatELLRBackend *resolved)
{
  PetscFunctionBegin;
#if defined(PETSCELLR_HAVE_CUDA)
  const int ndev = ellr_cuda_device_count();
  if (asked == MAT_ELLR_BACKEND_CUDA) PetscCheck(ndev > 0, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "-mat_ellr_backend cuda: no CUDA device is visible to this process (check the driver and CUDA_VISIBLE_DEVICES), use -mat_ellr_backend cpu or auto");
  *resolved = asked == MAT_ELLR_BACKEND_CPU || ndev == 0 ? MAT_ELLR_BACKEND_CPU : MAT_ELLR_BACKEND_CUDA;
  #if !defined(PETSCELLR_PETSC_HAS_CUDA)
  if (*resolved == MAT_ELLR_BACKEND_CUDA) PetscCall(MatELLRSelectDevice());
  #endif
#else
  PetscCheck(asked != MAT_ELLR_BACKEND_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP, "-mat_ellr_backend cuda: this libpetscellr was built without CUDA; rebuild it with nvcc on PATH (make WITH_CUDA=1), or use -mat_ellr_backend cpu or auto");
  *resolved = MAT_ELLR_BACKEND_CPU;
#endif
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
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %s. Use -mat_type pellr (rows sorted by length into slices of 32), or -mat_ellr_slice_height 32 -mat_ellr_sort, or raise -mat_ellr_max_fill", what, ellr_last_error());
  case ELLR_ERR_MEM:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "%s: %s. Use more MPI processes or -mat_type pellr, whose storage is smaller", what, ellr_last_error());
  case ELLR_ERR_SIZE:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %s. Use more MPI processes so that each block has fewer than 2^31 nonzeros", what, ellr_last_error());
  case ELLR_ERR_CUDA:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: %s. If the GPU is out of memory use more GPUs (MPI processes) or -mat_ellr_backend cpu", what, ellr_last_error());
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s", what, ellr_last_error());
  }
  PetscFunctionReturn(0);
}

/* Converting back to AIJ: the ops this plugin overrides return to the base class's. */
PetscErrorCode MatELLRRestoreBaseOps(Mat B, const struct _MatOps *base)
{
  PetscFunctionBegin;
  B->ops->mult             = base->mult;
  B->ops->multadd          = base->multadd;
  B->ops->multtranspose    = base->multtranspose;
  B->ops->multtransposeadd = base->multtransposeadd;
  B->ops->assemblyend      = base->assemblyend;
  B->ops->destroy          = base->destroy;
  B->ops->duplicate        = base->duplicate;
  B->ops->setfromoptions   = base->setfromoptions;
  B->ops->view             = base->view;
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
