/* ellrncclpark.h - NCCL communicators kept for later PETSc communicators of the same ranks (ellrncclpark.c). */
#ifndef PETSCELLR_NCCLPARK_H
#define PETSCELLR_NCCLPARK_H
#include <petscsys.h>
#include "../../impls/ellr/ellrcompat.h"
#include "ellr_halo.h"

PETSC_INTERN PetscErrorCode MatELLRNCCLParkInit(void);                                                   /* before the first park */
PETSC_INTERN void           MatELLRNCCLPark(ellr_nccl_comm *, const ellr_nccl_id *, PetscMPIInt, PetscMPIInt, const char[16]); /* or aborted */
PETSC_INTERN PetscErrorCode MatELLRNCCLUnpark(MPI_Comm, const char[16], ellr_nccl_comm **, ellr_nccl_id *);                 /* collective */
#endif
