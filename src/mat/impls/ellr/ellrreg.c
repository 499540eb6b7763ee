/* ellrreg.c - registration of the petsc-ellr types with PETSc, log events, public queries. */
#include "ellrimpl.h"
PETSC_INTERN PetscErrorCode KSPCreate_CGDevice(KSP);
PETSC_INTERN PetscErrorCode KSPCreate_BCGSDevice(KSP);

PetscLogEvent     MAT_ELLRMult, MAT_ELLRBuild, MAT_ELLRTune, MAT_ELLRCopyToGPU;
const char *const MatELLRBackends[] = {"auto", "cuda", "cpu", "aij", "MatELLRBackend", "MAT_ELLR_BACKEND_", NULL};
/* in the order of ELLR_TUNE_MODEL, ELLR_TUNE_EXHAUSTIVE, ELLR_TUNE_NONE */
const char *const MatELLRTuneModes[] = {"model", "exhaustive", "none", "MatELLRTune", "MAT_ELLR_TUNE_", NULL};
const char *const MatELLRKernels[]   = {"sliced", "auto", "csr_vector", "ipcsr", "MatELLRKernel", "MAT_ELLR_KERNEL_", NULL};

static PetscBool PetscELLRPackageInitialized = PETSC_FALSE;

/* The engine's host memory through PetscMalloc (-malloc_dump, -malloc_view see it); a failure is out of memory. */
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
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscELLRInitializePackage - Registers the matrix types `MATELLR` ("ellrt") and `MATPELLR` ("pellr") with their
  sequential and parallel variants, the solvers `KSPCGDEVICE` and `KSPBCGSDEVICE`, and petsc-ellr's log events.

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
  if (PetscELLRPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "petsc-ellr needs a PETSc configured with real double-precision scalars (--with-scalar-type=real --with-precision=double); this PETSc has another scalar type: point PETSC_DIR at a real double build");
#else
  PetscCall(MatInitializePackage());
  {
    const ellr_host_allocator alloc = {PetscELLREngineAlloc, PetscELLREngineFree, NULL};

    ellr_set_host_allocator(&alloc); /* before the first matrix: every engine block goes back through PetscFree */
  }
  PetscCall(PetscLogEventRegister("ELLRMult", MAT_CLASSID, &MAT_ELLRMult));
  PetscCall(PetscLogEventRegister("ELLRBuild", MAT_CLASSID, &MAT_ELLRBuild));
  PetscCall(PetscLogEventRegister("ELLRTune", MAT_CLASSID, &MAT_ELLRTune));
  PetscCall(PetscLogEventRegister("ELLRCopyToGPU", MAT_CLASSID, &MAT_ELLRCopyToGPU));
  /* The names create genuine AIJ (aijcusparse) matrices with the library attached (ellrtype.c).  As root names,
     "ellrt" and "pellr" resolve to the seq or mpi name by the communicator, as PETSc's own types do; then an assembled
     seqaij / mpiaij matrix set to the type is converted in place (its values kept), being a prefix of the name. */
  PetscCall(MatRegister(MATELLR, MatCreate_ELLRT));
  PetscCall(MatRegister(MATPELLR, MatCreate_PELLR));
  PetscCall(MatRegister(MATSEQAIJELLRT, MatCreate_SeqELLRT));
  PetscCall(MatRegister(MATMPIAIJELLRT, MatCreate_MPIELLRT));
  PetscCall(MatRegister(MATSEQAIJPELLR, MatCreate_SeqPELLR));
  PetscCall(MatRegister(MATMPIAIJPELLR, MatCreate_MPIPELLR));
  PetscCall(MatRegisterRootName(MATELLR, MATSEQAIJELLRT, MATMPIAIJELLRT));
  PetscCall(MatRegisterRootName(MATPELLR, MATSEQAIJPELLR, MATMPIAIJPELLR));
  PetscCall(KSPRegister(KSPCGDEVICE, KSPCreate_CGDevice));     /* src/ksp/impls/deviceloop */
  PetscCall(KSPRegister(KSPBCGSDEVICE, KSPCreate_BCGSDevice)); /* src/ksp/impls/deviceloop */
  PetscCall(PetscRegisterFinalize(PetscELLRFinalizePackage));
  PetscELLRPackageInitialized = PETSC_TRUE; /* only once everything is registered */
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called by PETSc when it opens libpetscellr.so (-dll_append): the name must be the file name
   without "lib" and ".so", or PETSc silently skips it. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscellr(void)
{
  PetscFunctionBegin;
  PetscCall(PetscELLRInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRGetFormat - The ELLPACK-R format whose products a matrix runs: `MATELLR` ("ellrt"), `MATPELLR` ("pellr"), or
  `NULL` for a matrix without them

  Not Collective

  Input Parameter:
. A - any matrix

  Output Parameter:
. format - `MATELLR`, `MATPELLR` or `NULL`

  Notes:
  A matrix made with `MatSetType()` or `MatConvert()` to `MATELLR` or `MATPELLR` is a genuine `MATAIJ` (`MATAIJCUSPARSE`
  with a PETSc built with CUDA and a GPU): `MatGetType()` names that base type, so that every PETSc routine that works
  with it works unchanged; only its products `MatMult()`, `MatMultAdd()`, `MatMultTranspose()` and
  `MatMultTransposeAdd()` run on the ELLPACK-R storage.  This function, -mat_view ::ascii_info and the ELLRMult event
  of -log_view say the format.  `MatSetType()` to the base type, `MatHeaderReplace()` and `MatConvert()` to another type
  leave a matrix without the format.

  Level: beginner

.seealso: `MATELLR`, `MATPELLR`, `MatELLRGetProductCount()`
@*/
PetscErrorCode MatELLRGetFormat(Mat A, MatType *format)
{
  Mat_ELLR *e;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(format, 2);
  PetscCall(MatELLRGetData(A, &e));
  *format = e ? (MatELLRIsPELLR(&e->settings) ? MATPELLR : MATELLR) : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRGetProductCount - Number of products (`MatMult()`, `MatMultAdd()`, `MatMultTranspose()`,
  `MatMultTransposeAdd()`) that ran on the ELLPACK-R storage of this matrix; parallel: the smaller of this process's
  two blocks' counts (the diagonal block's without ghost values), so that a block whose products did not run shows

  Not Collective

  Input Parameter:
. A - any matrix (0 for one without the ELLPACK-R products)

  Output Parameter:
. count - the number of products

  Notes:
  Tests use it to prove that the library's kernels ran rather than the base type's product.  With the backend
  `MAT_ELLR_BACKEND_AIJ` (the automatic choice without a GPU) or a matrix bound to the CPU the products are the base
  type's and are not counted.

  Level: developer

.seealso: `MATELLR`, `MATPELLR`, `MatELLRGetFormat()`
@*/
PetscErrorCode MatELLRGetProductCount(Mat A, PetscInt *count)
{
  Mat_ELLR *e, *be[2] = {NULL, NULL};
  Mat       blk[2]   = {NULL, NULL};

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(count, 2);
  PetscCall(MatELLRGetData(A, &e));
  if (e && e->mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], NULL));
  for (PetscInt k = 0; k < 2; k++)
    if (blk[k]) PetscCall(MatELLRGetData(blk[k], &be[k]));
  if (!e) *count = 0;
  else if (!e->mpi) *count = e->nproducts;
  else if (blk[1] && !blk[1]->cmap->n) *count = be[0] ? be[0]->nproducts : 0; /* no ghosts: the off-diagonal block has nothing to multiply */
  else *count = PetscMin(be[0] ? be[0]->nproducts : 0, be[1] ? be[1]->nproducts : 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRGetDeviceBytes - GPU memory held by the ELLPACK-R storage of this matrix on this process (both blocks of a
  parallel matrix; the stored transpose included), in bytes: 0 where none is held (no GPU, bound to the CPU, not
  built yet)

  Not Collective

  Input Parameter:
. A - any matrix

  Output Parameter:
. bytes - the bytes

  Notes:
  With a CUDA PETSc the matrix is an aijcusparse matrix that keeps no device CSR of its own unless a PETSc operation
  that needs one runs (a factorization, `MatProduct`, aijcusparse's own kernels); `-mat_view ::ascii_info` says
  whether it exists.  The storage is made at the first product (or `MatGetDiagonal()`): call this after it.

  Level: intermediate

.seealso: `MATELLR`, `MATPELLR`, `MatELLRGetFormat()`, `MatELLRGetProductCount()`
@*/
PetscErrorCode MatELLRGetDeviceBytes(Mat A, PetscLogDouble *bytes)
{
  Mat_ELLR *e;
  Mat       blk[2] = {NULL, NULL};

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(bytes, 2);
  *bytes = 0;
  PetscCall(MatELLRGetData(A, &e));
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  if (e->mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], NULL));
  else blk[0] = A;
  for (PetscInt k = 0; k < 2; k++) {
    Mat_ELLR *be = NULL;

    if (blk[k]) PetscCall(MatELLRGetData(blk[k], &be));
    if (be) *bytes += MatELLRStorageDeviceBytes(be);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRGetBackend - Where the products of this matrix run: `MAT_ELLR_BACKEND_CUDA` (ELLPACK-R on the GPU),
  `MAT_ELLR_BACKEND_CPU` (ELLPACK-R on the CPU) or `MAT_ELLR_BACKEND_AIJ` (the base type's own products), as resolved
  from -mat_ellr_backend

  Not Collective

  Input Parameter:
. A - a matrix of type `MATELLR` or `MATPELLR`

  Output Parameter:
. backend - the backend

  Level: intermediate

.seealso: `MATELLR`, `MATPELLR`, `MatELLRGetFormat()`
@*/
PetscErrorCode MatELLRGetBackend(Mat A, MatELLRBackend *backend)
{
  Mat_ELLR *e;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(backend, 2);
  PetscCall(MatELLRGetData(A, &e));
  PetscCheck(e, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "The matrix (type %s) has no ELLPACK-R products: set its type with -mat_type ellrt or pellr (MatSetType(), MatConvert())", ((PetscObject)A)->type_name);
  PetscCall(MatELLRResolve(e));
  *backend = e->backend;
  PetscFunctionReturn(PETSC_SUCCESS);
}
