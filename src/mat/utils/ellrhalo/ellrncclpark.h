/* ellrncclpark.h - NCCL communicators kept for later PETSc communicators of the same ranks (ellrncclpark.c). */
#ifndef PETSCELLR_NCCLPARK_H
#define PETSCELLR_NCCLPARK_H
#include "../../impls/ellr/ellrimpl.h"
#include "ellr_halo.h"

PETSC_INTERN PetscErrorCode MatELLRNCCLParkInit(void);                                                   /* before the first park */
PETSC_INTERN int            MatELLRNCCLPark(ellr_nccl_comm *, const ellr_nccl_id *, PetscMPIInt, PetscMPIInt); /* 1: kept */
PETSC_INTERN PetscErrorCode MatELLRNCCLUnpark(MPI_Comm, ellr_nccl_comm **, ellr_nccl_id *);              /* collective */
#endif
