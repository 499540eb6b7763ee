/* ellrimpl.h - private declarations of the petsc-ellr binding. */
#ifndef PETSCELLR_IMPL_H
#define PETSCELLR_IMPL_H

#include <petscellr.h>
#include <petsc/private/matimpl.h>
#include "ellrcompat.h"
#include "ellr.h"
#if defined(PETSCELLR_HAVE_CUDA)
  #include "ellr_cuda.h"
#endif

/*
  The accelerator (doc/design.md).  A matrix of type ellrt or pellr is a genuine MATSEQAIJ / MATMPIAIJ (aijcusparse with a
  CUDA PETSc and a GPU) made by PETSc's own create function, so every PETSc path keyed on those type names works.  The
  library hangs on it as one composed PetscContainer (MAT_ELLR_KEY) holding a Mat_ELLR: settings, ELLPACK-R storage and
  the base functions of the MatOps slots it replaces (ellrpatch.c).  The CSR stays the source of truth: the storage is a
  cache checked against the object state, nonzero state, data pointer and owner before every product.  Nothing else is
  composed but wrappers under two names AIJ composes and removes itself (-checkfunctionlist stays clean).  Where PETSc
  replaces the operations (MatSetType() to another type, MatHeaderReplace(), MatSetOperation()) the products are the
  base type's and MatELLRGetProductCount() stops moving; a container left behind goes at the next query or destroy.
*/
#define MAT_ELLR_KEY "MatELLR"

typedef struct {
  MatType        format;  /* MATELLR or MATPELLR (compare with MatELLRIsPELLR(), not by address) */
  ellr_params    eng;     /* engine parameters as asked (0 = automatic) */
  MatELLRBackend backend; /* as asked; resolved per matrix */
  PetscBool      offdiag; /* the off-diagonal block of an MPI matrix: only its non-empty rows are stored */
  PetscBool      block;   /* a block of an MPI matrix (its symmetry flags, forwarded by MPIAIJ, say nothing of it) */
} MatELLRSettings;

/* An operation this library puts in a slot of struct _MatOps. */
typedef void (*MatELLROpFn)(void);
typedef struct {
  size_t      offset; /* in struct _MatOps */
  MatELLROpFn fn;
} MatELLROp;
#define MAT_ELLR_OP(name, f) {offsetof(struct _MatOps, name), (MatELLROpFn)(f)}

typedef struct {
  MatELLRSettings  settings;
  const MatELLROp *own;      /* the operations replaced (one table for sequential matrices, one for MPI ones) */
  PetscInt         nown;
  struct _MatOps   base;     /* the base type's operations in the slots of own */
  PetscBool        mpi;      /* an MPI matrix: the storage lives on its blocks */
  /* AIJ's composed methods that change values or pattern behind the states the storage compares (seq only) */
  PetscErrorCode (*baseretrieve)(Mat);
  PetscErrorCode (*basecolumnindices)(Mat, PetscInt *);
  Mat              owner;    /* the matrix the storage was made for: MatHeaderReplace() moves the container */
  MatELLRBackend   backend;  /* resolved */
  PetscBool        built;
  PetscObjectState state;   /* object state the storage was made from */
  PetscObjectState nzstate; /* nonzero state the storage was made from */
  void            *data;    /* A->data then: a header merge gives A another matrix's data (and maybe equal stamps) */
  PetscInt         ncols;   /* columns then (MPIAIJ compacts the off-diagonal block's columns) */
  ellr_matrix      host;    /* CPU backend storage */
#if defined(PETSCELLR_HAVE_CUDA)
  ellr_cuda_matrix *dev;    /* CUDA backend storage */
  ellr_cuda_matrix *devT;   /* the stored transpose, made at the first transpose product */
  ellr_transpose    tr;     /* its host CSR: a gather of A's values at a refresh */
  PetscObjectState  stateT; /* object state its values came from */
  PetscBool         fromdevice; /* the storage multiplies with aijcusparse's device CSR (MatELLRUsesCUSPARSECSR) */
  PetscObjectState  cusparsenoted; /* nonzero state at which -info last said that aijcusparse's device CSR exists */
#endif
  int32_t *rowptr32, *colidx32; /* 32-bit copies of the CSR indices when PetscInt is 64-bit */
  PetscInt rowptr32n, colidx32n;
  int32_t *crowptr, *crows; /* offdiag: the non-empty rows' offsets and indices */
  PetscInt ncrows;
  PetscBool cvalid;
  PetscInt  nproducts; /* products run on the storage: proves the library's kernels ran */
} Mat_ELLR;

PETSC_INTERN PetscLogEvent MAT_ELLRMult, MAT_ELLRBuild, MAT_ELLRTune, MAT_ELLRCopyToGPU;
PETSC_INTERN const char *const MatELLRTuneModes[];
PETSC_INTERN const char *const MatELLRKernels[];

/* ellrsettings.c */
PETSC_INTERN PetscErrorCode MatELLRSettingsDefault(MatType, MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRSettingsFromOptions(Mat, MatELLROptionItems, MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRSettingsFromOptionsDatabase(Mat, MatELLRSettings *);
PETSC_INTERN void           MatELLRSettingsOffDiag(const MatELLRSettings *, MatELLRSettings *);
PETSC_INTERN PetscBool      MatELLRSettingsEqual(const MatELLRSettings *, const MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRResolveBackend(MatELLRBackend, MatELLRBackend *);
PETSC_INTERN PetscErrorCode MatELLRCheckStatus(ellr_status, const char *);
PETSC_INTERN PetscErrorCode MatELLRSelectDevice(void);
PETSC_INTERN PetscErrorCode MatELLRGetStream(void **);
PETSC_INTERN PetscErrorCode MatELLRRegisterCitations(MatType, int family);

/* MatBindToCPU(A, PETSC_TRUE) (GAMG's coarse levels): products are the base type's host products. */
static inline PetscBool MatELLRBoundToCPU(Mat A)
{
#if defined(PETSC_HAVE_DEVICE)
  return A->boundtocpu;
#else
  (void)A;
  return PETSC_FALSE;
#endif
}

static inline PetscBool MatELLRIsPELLR(const MatELLRSettings *s)
{
  return (PetscBool)(s->format && s->format[0] == 'p');
}

/* ellrpatch.c: the container, the replaced operations and those common to sequential and MPI matrices */
PETSC_INTERN PetscErrorCode MatELLRGetData(Mat, Mat_ELLR **);
PETSC_INTERN PetscErrorCode MatELLRSetOpsTable(PetscBool, PetscBool, const MatELLROp[], PetscInt, PetscErrorCode (*)(Mat));
PETSC_INTERN PetscErrorCode MatELLRAttachOps(Mat, const MatELLRSettings *, const MatELLROp[], PetscInt, Mat_ELLR *, Mat_ELLR **);
PETSC_INTERN PetscErrorCode MatELLRBaseOp(Mat, Mat_ELLR *, size_t, MatELLROpFn *);
PETSC_INTERN PetscErrorCode MatDuplicate_ELLR(Mat, MatDuplicateOption, Mat *);
PETSC_INTERN PetscErrorCode MatBindToCPU_ELLR(Mat, PetscBool);
PETSC_INTERN PetscErrorCode MatAssemblyEnd_ELLRT(Mat, MatAssemblyType);
PETSC_INTERN PetscErrorCode MatAssemblyEnd_PELLR(Mat, MatAssemblyType);
PETSC_INTERN PetscErrorCode MatSetFromOptions_ELLR(Mat, MatELLROptionItems);
PETSC_INTERN PetscErrorCode MatELLRViewBase(Mat, PetscViewer, Mat_ELLR **);

/* seq/ellrseq.c and mpi/ellrmpi.c: the products of each kind of matrix */
PETSC_INTERN PetscErrorCode MatELLRAttachSeq(Mat, const MatELLRSettings *, Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRAttachMPI(Mat, const MatELLRSettings *, Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRMPIPrepare(Mat); /* the blocks' storage current, ahead of the first product */

/* ellrtype.c */
PETSC_INTERN PetscErrorCode MatCreate_ELLRT(Mat);
PETSC_INTERN PetscErrorCode MatCreate_PELLR(Mat);
PETSC_INTERN PetscErrorCode MatCreate_SeqELLRT(Mat);
PETSC_INTERN PetscErrorCode MatCreate_SeqPELLR(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIELLRT(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIPELLR(Mat);

/* seq/ellrstorage.c */
PETSC_INTERN PetscErrorCode MatELLRFreeStorage(Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRDataDestroy(Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRResolve(Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRUpdate(Mat, Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRUpdateTranspose(Mat, Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRGetCSR(Mat, Mat_ELLR *, PetscBool, ellr_csr *);
PETSC_INTERN const ellr_plan *MatELLRGetPlan(Mat_ELLR *);
PETSC_INTERN PetscErrorCode MatELLRViewStorage(Mat, Mat_ELLR *, PetscViewer);
PETSC_INTERN PetscLogDouble MatELLRStorageDeviceBytes(Mat_ELLR *);
PETSC_INTERN PetscBool      MatELLRHostOnly(Mat, Mat_ELLR *);
PETSC_INTERN PetscBool      MatELLRUsesCUSPARSECSR(Mat, Mat_ELLR *);

/* seq/ellrmult.c */
PETSC_INTERN PetscErrorCode MatELLRSeqProduct(Mat, Mat_ELLR *, Vec, Vec, Vec, PetscBool);
PETSC_INTERN PetscErrorCode MatELLRSeqPrepare(Mat, Mat_ELLR *, PetscBool);
PETSC_INTERN PetscErrorCode MatELLRSeqDiagonal(Mat, Mat_ELLR *, Vec, PetscBool *);
PETSC_INTERN PetscErrorCode MatELLRSeqTune(Mat, Mat_ELLR *, Vec, Vec);
PETSC_INTERN PetscErrorCode MatELLRVecOnDevice(Vec, PetscBool *); /* CUDA backend: a CUDA vector not bound to the CPU */
#endif
