/*
  ellrtype.c - MatSetType() and MatConvert() to ellrt / pellr: a genuine AIJ matrix with the library attached.

  The type names are entries of PETSc's MatList whose create function makes the base type -- MATSEQAIJCUSPARSE /
  MATMPIAIJCUSPARSE where PETSc has CUDA and a GPU is visible, else MATSEQAIJ / MATMPIAIJ -- with PETSc's own create
  function, then attaches the library.  MatGetType() therefore names the base type; MatELLRGetFormat() and
  -mat_view ::ascii_info name the format.  MatConvert(B, "ellrt", ...) finds MatConvertFrom_ELLR as the convertfrom
  operation of a matrix of the target type (the third place MatConvert() looks): a conversion to the base type, then
  the library attached.
*/
#include "ellrimpl.h"

/* The base type for a matrix on comm of the given kind. */
static PetscErrorCode MatELLRBaseType(PetscBool mpi, MatType *base)
{
  PetscBool cuda = PETSC_FALSE;

  PetscFunctionBegin;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  cuda = (PetscBool)(ellr_cuda_device_count() > 0);
#endif
  if (cuda) *base = mpi ? MATMPIAIJCUSPARSE : MATSEQAIJCUSPARSE;
  else *base = mpi ? MATMPIAIJ : MATSEQAIJ;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRAttachFormat(Mat A, MatType format)
{
  MatELLRSettings s;
  PetscBool       mpi;

  PetscFunctionBegin;
  PetscCall(MatELLRSettingsDefault(format, &s));
  PetscCall(MatELLRSettingsFromOptionsDatabase(A, &s));
  PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, "mpi", &mpi));
  if (mpi) PetscCall(MatELLRAttachMPI(A, &s, NULL));
  else PetscCall(MatELLRAttachSeq(A, &s, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert(A, "ellrt" | "pellr" | "seqaijellrt" ..., reuse, &M): to the base type, then attached. */
static PetscErrorCode MatConvertFrom_ELLR(Mat A, MatType newtype, MatReuse reuse, Mat *M)
{
  MatType     base;
  PetscBool   pellr, seq, mpi;
  PetscMPIInt size;
  Mat         B = A;

  PetscFunctionBegin;
  PetscCall(PetscStrendswith(newtype, MATPELLR, &pellr));
  /* the kind the name asks for (seqaijellrt, mpiaijellrt), else the source's, as MatConvert() to aijcusparse does */
  PetscCall(PetscStrbeginswith(newtype, "seq", &seq));
  PetscCall(PetscStrbeginswith(newtype, "mpi", &mpi));
  if (!seq && !mpi) {
    PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, "mpi", &mpi));
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    mpi = (PetscBool)(mpi || size > 1);
  }
  PetscCall(MatELLRBaseType(mpi, &base));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatConvert(A, base, MAT_INPLACE_MATRIX, &B));
  else {
    PetscCall(MatConvert(A, base, reuse, M));
    B = *M;
  }
  PetscCall(MatELLRAttachFormat(B, pellr ? MATPELLR : MATELLR));
  B->ops->convertfrom = MatConvertFrom_ELLR;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRCreate(Mat A, MatType format, PetscInt kind /* 0: by the communicator, 1: seq, 2: mpi */)
{
  PetscMPIInt size;
  MatType     base;
  PetscBool   setup;
  PetscErrorCode (*create)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscELLRInitializePackage());
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatELLRBaseType((PetscBool)(kind == 2 || (kind == 0 && size > 1)), &base));
  PetscCall(PetscFunctionListFind(MatList, base, &create));
  PetscCheck(create, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "This PETSc has no matrix type %s", base);
  /* MatSetType() after MatSetUp() (then MatSetFromOptions() with -mat_type): PETSc drops the old type's storage and
     an optimized PETSc's MatSetValues() then reads storage never allocated (a crash with PETSc's own types too).  A
     matrix whose layout was set up had been preallocated: it gets MatSetUp()'s default preallocation again. */
  setup = (PetscBool)(A->rmap->setupcalled && A->cmap->setupcalled);
  PetscCall((*create)(A));
  PetscCall(MatELLRAttachFormat(A, format));
  A->ops->convertfrom = MatConvertFrom_ELLR;
  if (setup) PetscCall(MatSetUp(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The registered names: by the communicator (ellrt, pellr), or the kind the name says (seqaijellrt, mpiaijpellr, ...) */
#define MAT_ELLR_CREATE(name, format, kind) \
  PetscErrorCode name(Mat A) \
  { \
    return MatELLRCreate(A, format, kind); \
  }
MAT_ELLR_CREATE(MatCreate_ELLRT, MATELLR, 0)
MAT_ELLR_CREATE(MatCreate_PELLR, MATPELLR, 0)
MAT_ELLR_CREATE(MatCreate_SeqELLRT, MATELLR, 1)
MAT_ELLR_CREATE(MatCreate_SeqPELLR, MATPELLR, 1)
MAT_ELLR_CREATE(MatCreate_MPIELLRT, MATELLR, 2)
MAT_ELLR_CREATE(MatCreate_MPIPELLR, MATPELLR, 2)
