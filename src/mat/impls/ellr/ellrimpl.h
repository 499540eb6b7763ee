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
} MatELLRSettings;

/* The sequential matrix: an AIJ matrix whose products run on an ELLPACK-R copy of its CSR. */
typedef struct {
  MatELLRSettings  settings;
  struct _MatOps   baseops; /* AIJ's ops in place of the ones overridden, for chaining and converting back */
  PetscErrorCode (*baseretrievevalues)(Mat);
  MatELLRBackend   backend; /* CPU or CUDA, resolved when the storage was built */
  PetscBool        built;
  PetscObjectState state;   /* object state the storage was made from */
  PetscObjectState nzstate; /* nonzero state the storage was made from */
  PetscInt         ncols;   /* columns when built (MPIAIJ compacts the off-diagonal block's columns) */
  ellr_matrix      host;    /* CPU backend storage */
#if defined(PETSCELLR_HAVE_CUDA)
  ellr_cuda_matrix *dev;    /* CUDA backend storage */
#endif
  int32_t         *rowptr32, *colidx32; /* 32-bit copies of the CSR indices when PetscInt is 64-bit */
  PetscInt         nproducts;             /* products run on this storage: proves the plugin's kernels ran */
} Mat_SeqAIJELLR;

PETSC_INTERN const char *MatELLRTypeName(MatELLRFormat, PetscBool mpi);
PETSC_INTERN PetscErrorCode MatELLRSettingsDefault(MatELLRFormat, MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRSettingsSetFromOptions(Mat, MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatELLRCheckStatus(ellr_status, const char *what);
PETSC_INTERN PetscErrorCode MatELLRResolveBackend(MatELLRBackend, MatELLRBackend *);
PETSC_INTERN PetscErrorCode MatELLRRestoreBaseOps(Mat, const struct _MatOps *);
PETSC_INTERN PetscErrorCode MatELLRSetDefaultVecType(Mat, const MatELLRBackend *);

PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJELLR_Format(Mat, MatELLRFormat, const MatELLRSettings *, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJELLR_SeqAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRSetSettings(Mat, const MatELLRSettings *);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRUpdate(Mat);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRView_Info(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatMultKernel_SeqAIJELLR(Mat, Vec x, Vec z, Vec y, PetscBool transpose);
PETSC_INTERN PetscErrorCode MatSeqAIJELLRGetCSR(Mat, PetscBool, ellr_csr *);

PETSC_INTERN PetscErrorCode MatCreate_SeqAIJELLRT(Mat);
PETSC_INTERN PetscErrorCode MatCreate_SeqAIJPELLR(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJELLRT(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJPELLR(Mat);

#endif
