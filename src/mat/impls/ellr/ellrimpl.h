/* ellrimpl.h - private declarations shared by the seq and mpi types of petsc-ellr. */
#ifndef PETSCELLR_IMPL_H
#define PETSCELLR_IMPL_H

#include <petscellr.h>
#include <petsc/private/matimpl.h>
#include "ellrcompat.h"
#include "ellr.h"
#if defined(PETSCELLR_HAVE_CUDA)
  #include "ellr_cuda.h"
#endif

/* ELLR and PELLR are one engine: the format only picks names and default parameters. */
typedef enum {
  MAT_ELLR_FORMAT_ELLRT,
  MAT_ELLR_FORMAT_PELLR
} MatELLRFormat;

typedef struct {
  MatELLRFormat  format;
  ellr_params    eng;     /* engine parameters as asked (0 = automatic) */
  MatELLRBackend backend; /* as asked; resolved per product */
  PetscBool      verify;  /* check every GPU product against the CPU engine */
  PetscBool      nonempty_rows; /* store only the non-empty rows (MPI off-diagonal blocks: most rows have no ghost entry) */
  PetscInt       transpose; /* GPU MatMultTranspose: MAT_ELLR_TRANSPOSE_* */
  PetscBool      cusparse_base; /* a CUDA PETSc with the CUDA backend: MATAIJCUSPARSE as the base class (read when the type is set) */
  PetscBool      spgemm_warmup; /* aijcusparse base: cuSPARSE's SpGEMM run once on a small matrix before the process's first sparse product */
} MatELLRSettings;
/* -mat_ellr_transpose: how the GPU multiplies by A^T */
enum {
  MAT_ELLR_TRANSPOSE_STORED, /* a stored transpose, made at the first transpose product: the same bits every time */
  MAT_ELLR_TRANSPOSE_ATOMIC  /* A's storage with atomic additions into y: no second copy, rounding may change */
};

/* The sequential matrix: an AIJ matrix whose products run on an ELLPACK-R copy of its CSR. */
#define MAT_SEQAIJELLR_MAGIC 0x454c4c5253455131LL /* "ELLRSEQ1" */
typedef struct {
  PetscInt64       magic; /* MAT_SEQAIJELLR_MAGIC: tells this type's spptr from another matrix's after a header merge */
  MatELLRSettings  settings;
  MatELLRFormat    typeformat; /* the format named by the type (a block's settings may name another) */
  Mat              owner;      /* the matrix whose options the settings came from (a header merge moves the data) */
  struct _MatOps   baseops; /* AIJ's ops in place of the ones overridden, for chaining and converting back */
  /* AIJ's composed methods that change the pattern: called, then the storage is dropped */
  PetscErrorCode (*baseretrievevalues)(Mat);
  PetscErrorCode (*baseprealloc)(Mat, PetscInt, const PetscInt[]);
  PetscErrorCode (*baseprealloccsr)(Mat, const PetscInt[], const PetscInt[], const PetscScalar[]);
  PetscErrorCode (*baseresetprealloc)(Mat);
  PetscErrorCode (*basecoo)(Mat, PetscCount, PetscInt[], PetscInt[]);
  PetscErrorCode (*baseresethash)(Mat); /* MatResetHash_C of newer PETSc (3.26 has it, 3.18 not): NULL without */
  PetscErrorCode (*basecolumnindices)(Mat, PetscInt *);
  MatELLRBackend   backend;  /* resolved: AIJ, CPU or CUDA */
  PetscBool        resolved; /* backend resolved for the current settings */
  PetscBool        built;
  PetscObjectState state;   /* object state the storage was made from */
  PetscObjectState nzstate; /* nonzero state the storage was made from */
  PetscInt         ncols;   /* columns when built (MPIAIJ compacts the off-diagonal block's columns) */
  ellr_matrix      host;    /* CPU backend storage */
#if defined(PETSCELLR_HAVE_CUDA)
  ellr_cuda_matrix *dev;    /* CUDA backend storage */
  ellr_cuda_matrix *devT;   /* the stored transpose (-mat_ellr_transpose stored), made at the first transpose product */
  ellr_transpose    tr;     /* its host CSR, a gather of A's values away from a refresh */
  PetscObjectState  stateT; /* object state its values came from */
#endif
  int32_t         *rowptr32, *colidx32; /* 32-bit copies of the CSR indices when PetscInt is 64-bit */
  PetscInt         rowptr32n, colidx32n; /* rows and nonzeros they were allocated for */
  int32_t         *crowptr, *crows;      /* settings.nonempty_rows: the non-empty rows' offsets and indices (ellr_csr.rows) */
  PetscInt         ncrows;               /* their number */
  PetscBool        cvalid;               /* crowptr/crows describe the current pattern (crows NULL: no empty row) */
  PetscInt         nproducts;             /* products run on this storage: proves the plugin's kernels ran */
  PetscBool        pinned;                /* the GPU storage keeps the host CSR arrays page-locked */
  PetscBool        inodes_off;            /* AIJ's I-node search was turned off with the GPU backend (back on at conversion to AIJ) */
  PetscBool        block;                 /* a block of an MPI matrix of this plugin */
  /* With a CUDA PETSc and the CUDA backend the base class is MATSEQAIJCUSPARSE (aijellrcusparse.c): A->spptr is
     aijcusparse's, this struct is composed on A, and the storage is filled from aijcusparse's device CSR. */
  PetscBool        cusparse;
  void            *basedata; /* A->data when composed: a header merge gives A another matrix's data */
  PetscInt         renamed;  /* depth of aijcusparse calls running with A named seqaijcusparse */
} Mat_SeqAIJELLR;

PETSC_INTERN const char *const MatELLRTuneModes[];
PETSC_INTERN const char *const MatELLRKernels[]; /* indexed by ELLR_FAMILY_* */
PETSC_INTERN const char *const MatELLRLongJoins[]; /* indexed by ELLR_LONG_JOIN_* */
PETSC_INTERN const char *const MatELLRTransposes[]; /* indexed by MAT_ELLR_TRANSPOSE_* */
PETSC_INTERN const char *MatELLRTypeName(MatELLRFormat, PetscBool mpi);
PETSC_INTERN PetscErrorCode MatELLRSettingsDefault(MatELLRFormat, MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRSettingsFromOptions(Mat, MatELLROptionItems, MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRSettingsFromOptionsDatabase(Mat, MatELLRSettings *);
PETSC_INTERN PetscBool      MatELLRSettingsEqual(const MatELLRSettings *, const MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRSettingsRecord(Mat, const MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRSettingsRecall(Mat, MatELLRSettings *, PetscBool *);
PETSC_INTERN PetscErrorCode MatELLRCheckStatus(ellr_status, const char *what);
PETSC_INTERN PetscErrorCode MatELLRCheckSeqAIJType(Mat, PetscBool blocks);
PETSC_INTERN PetscErrorCode MatELLRRegisterCitations(MatELLRFormat, int family);
PETSC_INTERN PetscErrorCode MatELLRResolveBackend(MatELLRBackend, MatELLRBackend *);
/* The ops a type installs over its base class's (ellrops.c): one table per type. */
typedef void (*MatELLROpFn)(void);
typedef struct {
  size_t      offset; /* in struct _MatOps */
  MatELLROpFn fn;
} MatELLROp;
#define MAT_ELLR_OP(name, f) {offsetof(struct _MatOps, name), (MatELLROpFn)(f)}
PETSC_INTERN PetscErrorCode MatELLRInstallOps(Mat, const MatELLROp[], PetscInt);
PETSC_INTERN PetscErrorCode MatELLRQueryBaseComposed(Mat, MatType, const char[], MatELLROpFn, MatELLROpFn *);
PETSC_INTERN PetscErrorCode MatELLRRestoreBaseOps(Mat, const struct _MatOps *, const MatELLROp[], PetscInt);
PETSC_INTERN PetscErrorCode MatELLRCheckBaseOps(Mat, const struct _MatOps *, const MatELLROp[], PetscInt);
PETSC_INTERN PetscErrorCode MatELLRCaptureBaseOps(Mat, struct _MatOps *, PetscBool *);
PETSC_INTERN PetscErrorCode MatELLRSetDefaultVecType(Mat, const MatELLRBackend *);
PETSC_INTERN PetscErrorCode MatELLRSelectDevice(void);

/* A PETSc with a device backend creates every matrix bound to the CPU (MatCreate()); a GPU type unbinds itself, as
   aijcusparse does, so that MatBindToCPU(A, PETSC_TRUE) reaches the type and A->boundtocpu says where products run.
   Set directly, not through MatBindToCPU(): nothing is to be moved. */
/* MatBindToCPU(A, PETSC_TRUE) (GAMG's coarse levels): products are AIJ's host products, nothing staged. */
static inline PetscBool MatELLRBoundToCPUFlag(Mat B)
{
#if defined(PETSC_HAVE_DEVICE)
  return B->boundtocpu;
#else
  (void)B;
  return PETSC_FALSE;
#endif
}
static inline void MatELLRSetBoundToCPU(Mat B, PetscBool flg)
{
#if defined(PETSC_HAVE_DEVICE)
  B->boundtocpu = flg;
#else
  (void)B;
  (void)flg;
#endif
}
PETSC_INTERN PetscErrorCode MatELLRGetStream(void **);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRWarmUpSpGEMM(Mat);

PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJELLR_Format(Mat, MatELLRFormat, const MatELLRSettings *, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJELLR_SeqAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN struct _MatOps MatSeqAIJELLR_AIJOps;
PETSC_INTERN PetscErrorCode MatSeqAIJELLRCaptureAIJOps(Mat);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRAdopt(Mat, Mat_SeqAIJELLR *);
PETSC_INTERN Mat_SeqAIJELLR *MatSeqAIJELLRGetData(Mat);
PETSC_INTERN PetscErrorCode MatELLRGetProductCount_SeqAIJELLR(Mat, PetscInt *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRFreeStorage(Mat_SeqAIJELLR *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRUnpinIfReallocatable(Mat);
PETSC_INTERN PetscBool      MatSeqAIJELLRAnyPinned(void);
PETSC_INTERN const ellr_plan *MatSeqAIJELLRGetPlan(Mat_SeqAIJELLR *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRResolve(Mat, Mat_SeqAIJELLR *);
PETSC_INTERN PetscErrorCode MatSetPreallocationCOO_SeqAIJELLR(Mat, PetscCount, PetscInt[], PetscInt[]);
PETSC_INTERN PetscErrorCode MatMult_SeqAIJELLR(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultAdd_SeqAIJELLR(Mat, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultTranspose_SeqAIJELLR(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultTransposeAdd_SeqAIJELLR(Mat, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRSetSettings(Mat, const MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRUpdate(Mat);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRUpdateTranspose(Mat);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRPrepare(Mat, PetscBool);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRView_Info(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRGetCSR(Mat, PetscBool, ellr_csr *);

/* The MATSEQAIJCUSPARSE base (aijellrcusparse.c; a PETSc with CUDA, the library with the CUDA backend). */
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA) && !defined(PETSC_USE_64BIT_INDICES)
  #define PETSCELLR_CUSPARSE_BASE 1
PETSC_INTERN PetscErrorCode MatSeqAIJELLRToCUSPARSEBase(Mat, const MatELLRSettings *, PetscBool *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRAttach(Mat, Mat_SeqAIJELLR *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRDetach(Mat);
PETSC_INTERN Mat_SeqAIJELLR *MatSeqAIJELLRGetAttached(Mat);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRInstallCUSPARSE(Mat, Mat_SeqAIJELLR *, PetscBool);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRRename(Mat, PetscBool);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRGetDeviceCSR(Mat, ellr_csr *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRRestoreDeviceCSR(Mat, ellr_csr *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRRegisterCUSPARSEFactors(void);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRHostChanged(Mat, PetscBool);
PETSC_INTERN PetscErrorCode MatProductDenseApplies_SeqAIJELLR(Mat, PetscBool *);
PETSC_INTERN PetscErrorCode MatMatMultDense_SeqAIJELLR(Mat, Mat, Mat, PetscBool *);
#endif

PETSC_INTERN PetscErrorCode MatCreate_SeqAIJELLRT(Mat);
PETSC_INTERN PetscErrorCode MatCreate_SeqAIJPELLR(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJELLRT(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJPELLR(Mat);

#endif
