/* ellrcompat.h - the only place that knows PETSc versions apart (3.18 through 3.26). */
#ifndef PETSCELLR_COMPAT_H
#define PETSCELLR_COMPAT_H

#include <petscversion.h>

/* PETSc 3.23 made PetscOptionItems a pointer type: the MatOps setfromoptions argument changed with it. */
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscOptionItems *MatELLROptionItems;
#else
typedef PetscOptionItems MatELLROptionItems;
#endif

/* PETSc 3.19 named the success code. */
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* PETSc 3.20 renamed the pointer checks. */
#if PETSC_VERSION_LT(3, 20, 0)
  #define PetscAssertPointer(p, n) PetscValidPointer(p, n)
#endif

/* GPU timing/flop logging exists when PETSc was built with a device backend. */
#if defined(PETSC_HAVE_CUDA)
  #define PETSCELLR_PETSC_HAS_CUDA 1
#endif

#endif
