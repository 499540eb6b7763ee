/* ellrreg.c - registration of the petsc-ellr types with PETSc, log events, public queries. */
#include "ellrimpl.h"

PetscLogEvent     MAT_ELLRMult, MAT_ELLRMatMult, MAT_ELLRBuild, MAT_ELLRTune, MAT_ELLRCopyToGPU, MAT_ELLRWarmUp;
const char *const MatELLRBackends[] = {"auto", "cuda", "cpu", "aij", "MatELLRBackend", "MAT_ELLR_BACKEND_", NULL};
/* in the order of ELLR_TUNE_MODEL, ELLR_TUNE_EXHAUSTIVE, ELLR_TUNE_NONE */
const char *const MatELLRTuneModes[] = {"model", "exhaustive", "none", "MatELLRTune", "MAT_ELLR_TUNE_", NULL};
const char *const MatELLRKernels[]   = {"sliced", "auto", "csr_vector", "ipcsr", "MatELLRKernel", "MAT_ELLR_KERNEL_", NULL};
const char *const MatELLRLongJoins[] = {"segmented", "atomic", "MatELLRLongJoin", "MAT_ELLR_LONG_JOIN_", NULL};
const char *const MatELLRTransposes[] = {"stored", "atomic", "MatELLRTranspose", "MAT_ELLR_TRANSPOSE_", NULL};

static PetscBool PetscELLRPackageInitialized = PETSC_FALSE;

/* The engine's host memory (plans, the CPU storage, set-up scratch) through PetscMalloc: -malloc_dump, -malloc_view
   and PetscMallocGetCurrentUsage() see it as they see PETSc's own.  The engine reports a failure as out of memory. */
static void *PetscELLREngineAlloc(size_t bytes, int zero, void *ctx)
{
  void *ptr = NULL;

  (void)ctx;
  if (PetscMallocA(1, zero ? PETSC_TRUE : PETSC_FALSE, __LINE__, "petsc-ellr engine", __FILE__, bytes, &ptr)) return NULL;
  return ptr;
}

static void PetscELLREngineFree(void *ptr, void *ctx)
{
  (void)ctx;
  (void)PetscFreeA(1, __LINE__, "petsc-ellr engine", __FILE__, &ptr); /* takes the pointer's address, as PetscFree() */
}

/* After PetscObjectRegisterDestroyAll(): no storage is left to go back through PetscFree. */
static PetscErrorCode PetscELLRFinalizePackage(void)
{
  PetscFunctionBegin;
  ellr_set_host_allocator(NULL);
  PetscELLRPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
  PetscELLRInitializePackage - Registers the matrix types `MATELLR` ("ellrt") and `MATPELLR` ("pellr")
  with their sequential and parallel variants, and the log events of petsc-ellr.

  Not Collective

  Notes:
  Programs that load the library with -dll_append (or PETSC_OPTIONS) need not call this: PETSc calls
  `PetscDLLibraryRegister_petscellr()` when it opens the library. Programs linked with -lpetscellr call it
  once after `PetscInitialize()`. Calling it again does nothing.

  Level: beginner

.seealso: `MATELLR`, `MATPELLR`, `MatSetType()`
@*/
PetscErrorCode PetscELLRInitializePackage(void)
{
  PetscFunctionBegin;
  if (PetscELLRPackageInitialized) PetscFunctionReturn(0);
#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "petsc-ellr needs a PETSc configured with real double-precision scalars (--with-scalar-type=real --with-precision=double); this PETSc has another scalar type: point PETSC_DIR at a real double build");
#else
  PetscCall(MatInitializePackage());
  {
    const ellr_host_allocator alloc = {PetscELLREngineAlloc, PetscELLREngineFree, NULL};

    ellr_set_host_allocator(&alloc); /* before the first matrix: every engine block goes back through PetscFree */
  }
  PetscCall(PetscLogEventRegister("ELLRMult", MAT_CLASSID, &MAT_ELLRMult));
  PetscCall(PetscLogEventRegister("ELLRMatMult", MAT_CLASSID, &MAT_ELLRMatMult));
  PetscCall(PetscLogEventRegister("ELLRBuild", MAT_CLASSID, &MAT_ELLRBuild));
  PetscCall(PetscLogEventRegister("ELLRTune", MAT_CLASSID, &MAT_ELLRTune));
  PetscCall(PetscLogEventRegister("ELLRCopyToGPU", MAT_CLASSID, &MAT_ELLRCopyToGPU));
  PetscCall(PetscLogEventRegister("ELLRWarmUp", MAT_CLASSID, &MAT_ELLRWarmUp));
  PetscCall(MatRegister(MATSEQAIJELLRT, MatCreate_SeqAIJELLRT));
  PetscCall(MatRegister(MATMPIAIJELLRT, MatCreate_MPIAIJELLRT));
  PetscCall(MatRegister(MATSEQAIJPELLR, MatCreate_SeqAIJPELLR));
  PetscCall(MatRegister(MATMPIAIJPELLR, MatCreate_MPIAIJPELLR));
  PetscCall(MatRegisterRootName(MATELLR, MATSEQAIJELLRT, MATMPIAIJELLRT));
  PetscCall(MatRegisterRootName(MATPELLR, MATSEQAIJPELLR, MATMPIAIJPELLR));
#if defined(PETSCELLR_CUSPARSE_BASE)
  PetscCall(MatSeqAIJELLRRegisterCUSPARSEFactors());
#endif
  PetscCall(PetscRegisterFinalize(PetscELLRFinalizePackage));
  PetscELLRPackageInitialized = PETSC_TRUE; /* only once everything is registered */
#endif
  PetscFunctionReturn(0);
}

/* Called by PETSc when it opens libpetscellr.so (-dll_append): the name must be the file name
   without "lib" and ".so", or PETSc silently skips it. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscellr(void)
{
  PetscFunctionBegin;
  PetscCall(PetscELLRInitializePackage());
  PetscFunctionReturn(0);
}

/*@
  MatELLRGetProductCount - Number of products (MatMult, MatMultAdd, MatMultTranspose, MatMultTransposeAdd)
  that ran on the ELLPACK-R storage of this matrix; for a parallel matrix the smaller of the counts of this
  process's diagonal and off-diagonal blocks, so that a block whose products did not run on the storage shows.

  Not Collective

  Input Parameter:
. A - a `MATELLR` or `MATPELLR` matrix

  Output Parameter:
. count - the number of products

  Notes:
  Tests use it to prove that the plugin's kernels ran rather than a base-class (AIJ) product.  With the
  backend `MAT_ELLR_BACKEND_AIJ` (the automatic choice without a GPU) products are AIJ's and are not counted.

  Level: developer

.seealso: `MATELLR`, `MATPELLR`
@*/
PetscErrorCode MatELLRGetProductCount(Mat A, PetscInt *count)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(count, 2);
  PetscUseMethod(A, "MatELLRGetProductCount_C", (Mat, PetscInt *), (A, count));
  PetscFunctionReturn(0);
}

/*@
  MatELLRGetBackend - Where the products of this matrix run: `MAT_ELLR_BACKEND_CUDA` (ELLPACK-R on the GPU),
  `MAT_ELLR_BACKEND_CPU` (ELLPACK-R on the CPU) or `MAT_ELLR_BACKEND_AIJ` (AIJ's own products), as resolved from
  -mat_ellr_backend.

  Not Collective

  Input Parameter:
. A - a `MATELLR` or `MATPELLR` matrix

  Output Parameter:
. backend - the backend

  Level: intermediate

.seealso: `MATELLR`, `MATPELLR`
@*/
PetscErrorCode MatELLRGetBackend(Mat A, MatELLRBackend *backend)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(backend, 2);
  PetscUseMethod(A, "MatELLRGetBackend_C", (Mat, MatELLRBackend *), (A, backend));
  PetscFunctionReturn(0);
}
