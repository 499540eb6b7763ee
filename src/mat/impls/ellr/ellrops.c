/*
  ellrops.c - the ops a type of this plugin puts over its base class's, and how they come off again.

  Each type (seq and mpi) lists the ops it installs in one table.  Converting away restores every slot that holds
  one of the table's functions, wherever it was installed, so that no op of the type survives on a plain AIJ
  matrix; and a base op captured at conversion is checked never to be one of the type's own (it would call itself).
  struct _MatOps holds function pointers only, so it is walked as an array of them.
*/
#include "ellrimpl.h"

#define MAT_ELLR_NSLOTS (sizeof(struct _MatOps) / sizeof(MatELLROpFn))

static MatELLROpFn *MatELLRSlots(struct _MatOps *ops)
{
  return (MatELLROpFn *)(void *)ops;
}

static PetscBool MatELLROpIsOwn(MatELLROpFn f, const MatELLROp own[], PetscInt n)
{
  for (PetscInt k = 0; k < n; k++)
    if (f && f == own[k].fn) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Every op of the table into B's ops. */
PetscErrorCode MatELLRInstallOps(Mat B, const MatELLROp own[], PetscInt n)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < n; k++) *(MatELLROpFn *)(void *)((char *)B->ops + own[k].offset) = own[k].fn;
  PetscFunctionReturn(0);
}

/* Converting back to the base class: every slot of B's ops holding one of the type's functions takes base's. */
PetscErrorCode MatELLRRestoreBaseOps(Mat B, const struct _MatOps *base, const MatELLROp own[], PetscInt n)
{
  MatELLROpFn       *slot = MatELLRSlots(B->ops);
  const MatELLROpFn *from = (const MatELLROpFn *)(const void *)base;

  PetscFunctionBegin;
  for (size_t k = 0; k < MAT_ELLR_NSLOTS; k++)
    if (MatELLROpIsOwn(slot[k], own, n)) slot[k] = from[k];
  PetscFunctionReturn(0);
}

/* The base ops captured from B (at conversion) hold none of the type's functions: a base op that is the type's own
   would call itself.  It means an op the type installed was not restored when B left the type. */
PetscErrorCode MatELLRCheckBaseOps(Mat B, const struct _MatOps *base, const MatELLROp own[], PetscInt n)
{
  const MatELLROpFn *from = (const MatELLROpFn *)(const void *)base;

  PetscFunctionBegin;
  for (size_t k = 0; k < MAT_ELLR_NSLOTS; k++)
    PetscCheck(!MatELLROpIsOwn(from[k], own, n), PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "Matrix of type %s still holds an op of petsc-ellr (slot %d of MatOps) from an earlier conversion: please report this; convert a copy (MAT_INITIAL_MATRIX) instead", ((PetscObject)B)->type_name, (int)k);
  PetscFunctionReturn(0);
}

/* The base of a composed method the type wraps (name): B's own, unless B already carries the type's wrapper -- a
   copy made by MatDuplicate_SeqAIJ/_MPIAIJ, which copy the composed methods, and then converted by aijcusparse's
   duplicate -- where the base is that of a plain basetype matrix (the wrapper as its own base would call itself). */
PetscErrorCode MatELLRQueryBaseComposed(Mat B, MatType basetype, const char name[], MatELLROpFn wrapper, MatELLROpFn *base)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)B, name, base));
  if (*base && *base == wrapper) {
    Mat T;
    PetscCall(MatCreate(PETSC_COMM_SELF, &T));
    PetscCall(MatSetType(T, basetype));
    PetscCall(PetscObjectQueryFunction((PetscObject)T, name, base));
    PetscCall(MatDestroy(&T));
  }
  PetscFunctionReturn(0);
}
