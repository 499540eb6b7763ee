/*
  aijellrcusparse.c - MATSEQAIJELLRT and MATSEQAIJPELLR on the MATSEQAIJCUSPARSE base (a PETSc built with CUDA, this
  library with its CUDA backend, 32-bit PetscInt).

  The matrix is an aijcusparse matrix under this type's name: aijcusparse's device CSR, its upload (the only one,
  logged by PETSc), its factorizations (cuSPARSE ILU(0)/ICC(0) and triangular solves), its sparse products
  (SpGEMM for PtAP, AB, AtB; SpMM for sparse x dense), its COO assembly from device arrays and its vector
  operations (MatScale, MatShift, MatAXPY, MatDiagonalScale, MatGetDiagonal, MatZeroEntries) all stay on the
  GPU; only the four products y = A x (+ z), y = A^T x (+ z) run on the ELLPACK-R storage, filled on the GPU from
  aijcusparse's device arrays (aijellrstorage.c).

  aijcusparse's own routines check that their matrices are named exactly "seqaijcusparse" (its products in every
  build, its factor registration, its duplicate; more in a PETSc debug build).  Those reached through this type
  are called with the matrix renamed seqaijcusparse for the call (MatSeqAIJELLRRename(), nested calls counted):
  the product phases, the factor creation, the duplicate and the device CSR access.  Its data is registered by the
  matrix's data (below), as aijcusparse's own fills spptr.
*/
#include "../ellrimpl.h"

#if defined(PETSCELLR_CUSPARSE_BASE)

/*
  Where this type's data is found: aijcusparse holds spptr, so the data is registered by the address of A's
  Mat_SeqAIJ (A->data).  It travels with the data as spptr does on the AIJ base: a header merge (MatAXPY with another
  pattern, MatCopy, in-place LU) that brings A another matrix's data brings that matrix's registration with it, or
  none (A then acts as the plain aijcusparse or AIJ matrix its data is); and it is found while PETSc destroys A's old
  data inside the merge, when A's composed objects are set aside.  A handful of matrices at a time: a linear search.
*/
static Mat_SeqAIJELLR **MatSeqAIJELLRRegistry = NULL;
static size_t           MatSeqAIJELLRRegistryN = 0, MatSeqAIJELLRRegistryCap = 0;

Mat_SeqAIJELLR *MatSeqAIJELLRGetAttached(Mat A)
{
  for (size_t k = 0; k < MatSeqAIJELLRRegistryN; k++)
    if (MatSeqAIJELLRRegistry[k]->basedata == A->data) return MatSeqAIJELLRRegistry[k];
  return NULL;
}

PetscErrorCode MatSeqAIJELLRAttach(Mat A, Mat_SeqAIJELLR *e)
{
  PetscFunctionBegin;
  PetscCheck(A->data, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A matrix without data cannot take petsc-ellr's");
  if (MatSeqAIJELLRRegistryN == MatSeqAIJELLRRegistryCap) { /* plain realloc: it outlives PETSc's malloc checks */
    size_t           cap = MatSeqAIJELLRRegistryCap ? 2 * MatSeqAIJELLRRegistryCap : 64;
    Mat_SeqAIJELLR **r   = (Mat_SeqAIJELLR **)realloc(MatSeqAIJELLRRegistry, cap * sizeof(*r));
    PetscCheck(r, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of memory registering a petsc-ellr matrix");
    MatSeqAIJELLRRegistry    = r;
    MatSeqAIJELLRRegistryCap = cap;
  }
  e->basedata                                       = A->data;
  MatSeqAIJELLRRegistry[MatSeqAIJELLRRegistryN++] = e;
  PetscFunctionReturn(0);
}

/* Frees this type's data of A and its registration. */
PetscErrorCode MatSeqAIJELLRDetach(Mat A)
{
  Mat_SeqAIJELLR *e = NULL;

  PetscFunctionBegin;
  for (size_t k = 0; k < MatSeqAIJELLRRegistryN; k++)
    if (MatSeqAIJELLRRegistry[k]->basedata == A->data) {
      e                        = MatSeqAIJELLRRegistry[k];
      MatSeqAIJELLRRegistry[k] = MatSeqAIJELLRRegistry[--MatSeqAIJELLRRegistryN];
      break;
    }
  if (!MatSeqAIJELLRRegistryN) {
    free(MatSeqAIJELLRRegistry);
    MatSeqAIJELLRRegistry    = NULL;
    MatSeqAIJELLRRegistryCap = 0;
  }
  if (e) e->magic = 0;
  PetscCall(PetscFree(e));
  PetscFunctionReturn(0);
}

/* A plain SEQAIJ becomes a SEQAIJCUSPARSE in place when the products are to run on the GPU; *cusparse says whether
   B is (now) an aijcusparse matrix.  No GPU visible, the CPU or AIJ backend or -mat_ellr_cusparse_base false asked
   for: B stays as it is. */
PetscErrorCode MatSeqAIJELLRToCUSPARSEBase(Mat B, const MatELLRSettings *s, PetscBool *cusparse)
{
  MatELLRBackend backend;
  PetscBool      isaij;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJCUSPARSE, cusparse));
  if (*cusparse || B->factortype != MAT_FACTOR_NONE || !s->cusparse_base) PetscFunctionReturn(0);
  PetscCall(MatELLRResolveBackend(s->backend, &backend));
  if (backend != MAT_ELLR_BACKEND_CUDA) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJ, &isaij));
  if (!isaij) PetscFunctionReturn(0);
  {
    /* aijcusparse's own converter, as MatCreate_SeqAIJCUSPARSE() uses it: MatConvert() refuses a matrix not assembled */
    PetscErrorCode (*conv)(Mat, MatType, MatReuse, Mat *) = NULL;
    PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatConvert_seqaij_seqaijcusparse_C", &conv));
    PetscCheck(conv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "This PETSc's MATSEQAIJ has no converter to MATSEQAIJCUSPARSE");
    PetscCall((*conv)(B, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, &B));
  }
  *cusparse = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* M (if of this type on the aijcusparse base) named seqaijcusparse (on) or its own name again (off, when the
   outermost renaming ends). */
PetscErrorCode MatSeqAIJELLRRename(Mat M, PetscBool on)
{
  Mat_SeqAIJELLR *e = M ? MatSeqAIJELLRGetData(M) : NULL;

  PetscFunctionBegin;
  if (!e || !e->cusparse) PetscFunctionReturn(0);
  if (on) {
    if (e->renamed++ == 0) PetscCall(PetscObjectChangeTypeName((PetscObject)M, MATSEQAIJCUSPARSE));
  } else if (e->renamed > 0 && --e->renamed == 0) PetscCall(PetscObjectChangeTypeName((PetscObject)M, MatELLRTypeName(e->typeformat, PETSC_FALSE)));
  PetscFunctionReturn(0);
}

/* The matrices of C's product renamed (on) or named back (off). */
static PetscErrorCode MatProductRename_SeqAIJELLR(Mat C, PetscBool on)
{
  Mat_Product *p = C->product;

  PetscFunctionBegin;
  if (!p) PetscFunctionReturn(0);
  PetscCall(MatSeqAIJELLRRename(p->A, on));
  PetscCall(MatSeqAIJELLRRename(p->B, on));
  PetscCall(MatSeqAIJELLRRename(p->C, on));
  PetscFunctionReturn(0);
}

/* Calls f(C) with the product's matrices under aijcusparse's name. */
static PetscErrorCode MatProductCallRenamed_SeqAIJELLR(Mat C, PetscErrorCode (*f)(Mat))
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MatProductRename_SeqAIJELLR(C, PETSC_TRUE));
  ierr = (*f)(C);
  PetscCall(MatProductRename_SeqAIJELLR(C, PETSC_FALSE));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode MatProductNumeric_SeqAIJELLR(Mat C)
{
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)C, "MatELLRProductNumericBase_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A product of a petsc-ellr matrix lost its numeric phase");
  PetscCall(MatProductCallRenamed_SeqAIJELLR(C, f));
  PetscFunctionReturn(0);
}

/* C = A B with B dense: on the ELLPACK-R storage where it applies (aijellrdense.c), else aijcusparse's SpMM. */
static PetscErrorCode MatProductNumericDense_SeqAIJELLR(Mat C)
{
  PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  MatCheckProduct(C, 1);
  PetscCall(MatMatMultDense_SeqAIJELLR(C->product->A, C->product->B, C, &done));
  if (!done) PetscCall(MatProductNumeric_SeqAIJELLR(C));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatProductSymbolic_SeqAIJELLR(Mat C)
{
  PetscErrorCode (*f)(Mat) = NULL;
  PetscBool dense;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)C, "MatELLRProductSymbolicBase_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A product of a petsc-ellr matrix lost its symbolic phase");
  PetscCall(MatProductDenseApplies_SeqAIJELLR(C, &dense)); /* C's type before aijcusparse's phase sets it */
  if (!dense) PetscCall(MatSeqAIJELLRWarmUpSpGEMM(C));
  PetscCall(MatProductCallRenamed_SeqAIJELLR(C, f));
  if (C->ops->productnumeric && C->ops->productnumeric != MatProductNumeric_SeqAIJELLR && C->ops->productnumeric != MatProductNumericDense_SeqAIJELLR) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, "MatELLRProductNumericBase_C", C->ops->productnumeric));
    C->ops->productnumeric = dense ? MatProductNumericDense_SeqAIJELLR : MatProductNumeric_SeqAIJELLR;
  }
  PetscFunctionReturn(0);
}

/* MatProduct with a matrix of this type: aijcusparse's choice of algorithm (SpGEMM with an aijcusparse or a matrix of
   this type, SpMM with a dense CUDA matrix, host routines with host matrices), made and run under its name. */
static PetscErrorCode MatProductSetFromOptions_SeqAIJELLR(Mat C)
{
  Mat_Product    *p = C->product;
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(p->A);
  PetscErrorCode (*base)(Mat) = e ? e->baseops.productsetfromoptions : p->A->ops->productsetfromoptions;

  PetscFunctionBegin;
  if (base == MatProductSetFromOptions_SeqAIJELLR) { /* A is not of this type but B is: aijcusparse's own for A */
    PetscCall(PetscObjectQueryFunction((PetscObject)p->A, "MatProductSetFromOptions_seqaijcusparse_seqaijcusparse_C", &base));
  }
  PetscCheck(base && base != MatProductSetFromOptions_SeqAIJELLR, PETSC_COMM_SELF, PETSC_ERR_SUP, "No product of a %s matrix with a %s matrix: convert one of them to MATAIJCUSPARSE", ((PetscObject)p->A)->type_name, ((PetscObject)p->B)->type_name);
  PetscCall(MatProductCallRenamed_SeqAIJELLR(C, base));
  if (C->ops->productsymbolic && C->ops->productsymbolic != MatProductSymbolic_SeqAIJELLR) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, "MatELLRProductSymbolicBase_C", C->ops->productsymbolic));
    C->ops->productsymbolic = MatProductSymbolic_SeqAIJELLR;
  }
  PetscFunctionReturn(0);
}

/* MatBindToCPU(): aijcusparse's, which puts its own (or AIJ's) products, product selection and COO methods in A's
   ops; this type's products go back over them (they run AIJ's host products while A is bound). */
static PetscErrorCode MatBindToCPU_SeqAIJELLR(Mat A, PetscBool flg)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e) {
    A->boundtocpu = flg;
    PetscFunctionReturn(0);
  }
  PetscCall((*e->baseops.bindtocpu)(A, flg));
  PetscCall(MatSeqAIJELLRInstallCUSPARSE(A, e, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* AIJ's routines that write A's host arrays directly, past aijcusparse's accessors: the device copy is marked stale
   (pattern: rebuilt, as after a new nonzero structure; else values only), so that the next use uploads it. */
PetscErrorCode MatSeqAIJELLRHostChanged(Mat A, PetscBool pattern)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  if (!e || !e->cusparse) PetscFunctionReturn(0);
  if (pattern) A->nonzerostate++;
  if (A->offloadmask != PETSC_OFFLOAD_UNALLOCATED) A->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(0);
}

/* AIJ's MatTranspose() into an existing matrix (MAT_REUSE_MATRIX) writes its host values directly. */
static PetscErrorCode MatTranspose_SeqAIJELLR(Mat A, MatReuse reuse, Mat *B)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);

  PetscFunctionBegin;
  PetscCall((*(e ? &e->baseops : &MatSeqAIJELLR_AIJOps)->transpose)(A, reuse, B));
  if (reuse == MAT_REUSE_MATRIX && (*B)->offloadmask != PETSC_OFFLOAD_UNALLOCATED) (*B)->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(0);
}

/* aijcusparse's MatDiagonalScale() and MatGetDiagonal() read and write their vectors on the GPU: with a vector of the
   host (VECSEQ, as AIJ's matrices make), AIJ's host routine, which reaches A's values through MatSeqAIJGetArray()
   (so that aijcusparse copies them as needed). */
static PetscBool MatSeqAIJELLRHostVec(Vec v)
{
  PetscBool cuda = PETSC_TRUE;
  if (v && PetscObjectTypeCompareAny((PetscObject)v, &cuda, VECSEQCUDA, VECMPICUDA, VECCUDA, "")) cuda = PETSC_TRUE;
  return (PetscBool)!cuda;
}

static PetscErrorCode MatDiagonalScale_SeqAIJELLR(Mat A, Vec l, Vec r)
{
  Mat_SeqAIJELLR *e    = MatSeqAIJELLRGetData(A);
  PetscBool       host = (PetscBool)(!e || MatSeqAIJELLRHostVec(l) || MatSeqAIJELLRHostVec(r));

  PetscFunctionBegin;
  PetscCall((*(host ? &MatSeqAIJELLR_AIJOps : &e->baseops)->diagonalscale)(A, l, r));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatGetDiagonal_SeqAIJELLR(Mat A, Vec v)
{
  Mat_SeqAIJELLR *e    = MatSeqAIJELLRGetData(A);
  PetscBool       host = (PetscBool)(!e || MatSeqAIJELLRHostVec(v));

  PetscFunctionBegin;
  PetscCall((*(host ? &MatSeqAIJELLR_AIJOps : &e->baseops)->getdiagonal)(A, v));
  PetscFunctionReturn(0);
}

/* The ops this type installs over aijcusparse's, and the composed product selections (every name a product of this
   type with another type is looked up by). */
static const MatELLROp MatSeqAIJELLR_CUSPARSEOps[] = {
  MAT_ELLR_OP(mult, MatMult_SeqAIJELLR),
  MAT_ELLR_OP(multadd, MatMultAdd_SeqAIJELLR),
  MAT_ELLR_OP(multtranspose, MatMultTranspose_SeqAIJELLR),
  MAT_ELLR_OP(multtransposeadd, MatMultTransposeAdd_SeqAIJELLR),
  MAT_ELLR_OP(productsetfromoptions, MatProductSetFromOptions_SeqAIJELLR),
  MAT_ELLR_OP(bindtocpu, MatBindToCPU_SeqAIJELLR),
  MAT_ELLR_OP(transpose, MatTranspose_SeqAIJELLR),
  MAT_ELLR_OP(diagonalscale, MatDiagonalScale_SeqAIJELLR),
  MAT_ELLR_OP(getdiagonal, MatGetDiagonal_SeqAIJELLR),
};

static PetscErrorCode MatSeqAIJELLRComposeProducts(Mat A, const char *name, PetscBool on)
{
  static const char *const others[] = {MATSEQAIJCUSPARSE, MATSEQDENSECUDA, MATSEQDENSE, MATSEQAIJ, MATSEQAIJELLRT, MATSEQAIJPELLR};
  char                     fname[256];
  PetscErrorCode (*f)(Mat) = on ? MatProductSetFromOptions_SeqAIJELLR : NULL;

  PetscFunctionBegin;
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(others); k++) {
    PetscCall(PetscSNPrintf(fname, sizeof(fname), "MatProductSetFromOptions_%s_%s_C", name, others[k]));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, fname, f));
    if (k == 0 || k >= 3) { /* the sparse ones also with this type second */
      PetscCall(PetscSNPrintf(fname, sizeof(fname), "MatProductSetFromOptions_%s_%s_C", others[k], name));
      PetscCall(PetscObjectComposeFunction((PetscObject)A, fname, f));
    }
  }
  PetscFunctionReturn(0);
}

/* on: this type's ops over aijcusparse's (what aijcusparse put there since is kept as the base) and its composed
   methods; off: aijcusparse's back.  Called at conversion, after aijcusparse's MatBindToCPU(), and at conversion
   back. */
PetscErrorCode MatSeqAIJELLRInstallCUSPARSE(Mat A, Mat_SeqAIJELLR *e, PetscBool on)
{
  const char *name = MatELLRTypeName(e->typeformat, PETSC_FALSE);
  PetscErrorCode (*coo)(Mat, PetscCount, PetscInt[], PetscInt[]) = NULL;

  PetscFunctionBegin;
  if (!on) {
    PetscCall(MatELLRRestoreBaseOps(A, &e->baseops, MatSeqAIJELLR_CUSPARSEOps, PETSC_STATIC_ARRAY_LENGTH(MatSeqAIJELLR_CUSPARSEOps)));
    PetscCall(MatSeqAIJELLRComposeProducts(A, name, PETSC_FALSE));
    PetscFunctionReturn(0);
  }
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(MatSeqAIJELLR_CUSPARSEOps); k++) {
    MatELLROpFn *slot = (MatELLROpFn *)(void *)((char *)A->ops + MatSeqAIJELLR_CUSPARSEOps[k].offset);
    MatELLROpFn *base = (MatELLROpFn *)(void *)((char *)&e->baseops + MatSeqAIJELLR_CUSPARSEOps[k].offset);
    if (*slot != MatSeqAIJELLR_CUSPARSEOps[k].fn) *base = *slot;
    *slot = MatSeqAIJELLR_CUSPARSEOps[k].fn;
  }
  /* aijcusparse's MatBindToCPU() composes its own COO preallocation (or none): this type's wrapper goes back */
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetPreallocationCOO_C", &coo));
  if (coo && coo != MatSetPreallocationCOO_SeqAIJELLR) {
    e->basecoo = coo;
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_SeqAIJELLR));
  }
  PetscCall(MatSeqAIJELLRComposeProducts(A, name, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* The CSR as the engine takes it from aijcusparse: the host pattern (for the plans of small blocks) and the device
   arrays, which aijcusparse makes current first (its upload, when the host changed). */
PetscErrorCode MatSeqAIJELLRGetDeviceCSR(Mat A, ellr_csr *csr)
{
  const PetscInt    *ia, *ja, *di = NULL, *dj = NULL;
  const PetscScalar *dv = NULL;
  PetscInt           n;
  PetscBool          done;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(csr, sizeof(*csr)));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ() failed on a sequential AIJ matrix");
  PetscCheck(ia[n] < 2147483647 && A->cmap->n < 2147483647, PETSC_COMM_SELF, PETSC_ERR_SUP, "A block with %" PetscInt_FMT " nonzeros and %" PetscInt_FMT " columns does not fit the 32-bit indices of the ELLPACK-R storage: use more MPI processes", ia[n], A->cmap->n);
  csr->nrows       = (int32_t)n;
  csr->ncols       = (int32_t)A->cmap->n;
  csr->rowptr      = (const int32_t *)ia;
  csr->colidx      = (const int32_t *)ja;
  csr->nrows_out   = (int32_t)n;
  csr->cols_sorted = 1;
  if (n > 0 && ia[n] > 0) {
    PetscCall(MatSeqAIJELLRRename(A, PETSC_TRUE));
    ierr = MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &di, &dj);
    if (!ierr) ierr = MatSeqAIJCUSPARSEGetArrayRead(A, &dv);
    PetscCall(MatSeqAIJELLRRename(A, PETSC_FALSE));
    PetscCall(ierr);
    csr->d_rowptr = (const int32_t *)di;
    csr->d_colidx = (const int32_t *)dj;
    csr->d_val    = (const double *)dv;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MatSeqAIJELLRRestoreDeviceCSR(Mat A, ellr_csr *csr)
{
  const PetscInt    *ia = (const PetscInt *)csr->rowptr, *ja = (const PetscInt *)csr->colidx, *di = (const PetscInt *)csr->d_rowptr, *dj = (const PetscInt *)csr->d_colidx;
  const PetscScalar *dv = (const PetscScalar *)csr->d_val;
  PetscInt           n  = csr->nrows;
  PetscBool          done;
  PetscErrorCode     ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  if (dv) {
    PetscCall(MatSeqAIJELLRRename(A, PETSC_TRUE));
    ierr = MatSeqAIJCUSPARSERestoreArrayRead(A, &dv);
    if (!ierr) ierr = MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &di, &dj);
    PetscCall(MatSeqAIJELLRRename(A, PETSC_FALSE));
    PetscCall(ierr);
  }
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/*
  aijcusparse's factors solve on the GPU, reading and writing CUDA vectors only; this type's matrices take host vectors
  too (the products stage them).  The factors made for this type therefore get MatSolve() and MatSolveTranspose()
  that stage host vectors through CUDA vectors of their own.  aijcusparse installs the solves at the numeric
  factorization, which it installs at the symbolic one: each phase is wrapped as it appears, the base kept composed
  on the factor.
*/
static PetscErrorCode MatSolveStaged_SeqAIJELLR(Mat F, Vec b, Vec x, PetscBool transpose)
{
  PetscErrorCode (*base)(Mat, Vec, Vec) = NULL;
  Vec                db, dx;
  const PetscScalar *ba;
  PetscScalar       *p, *xa;
  PetscInt           n, m;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)F, transpose ? "MatELLRSolveTransposeBase_C" : "MatELLRSolveBase_C", &base));
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A factor made for a petsc-ellr matrix lost its solve");
  if (!MatSeqAIJELLRHostVec(b) && !MatSeqAIJELLRHostVec(x)) {
    PetscCall((*base)(F, b, x));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetLocalSize(b, &n));
  PetscCall(VecGetLocalSize(x, &m));
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, n, &db));
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, m, &dx));
  PetscCall(VecGetArrayRead(b, &ba));
  PetscCall(VecGetArrayWrite(db, &p));
  PetscCall(PetscArraycpy(p, ba, n));
  PetscCall(VecRestoreArrayWrite(db, &p));
  PetscCall(VecRestoreArrayRead(b, &ba));
  PetscCall((*base)(F, db, dx));
  PetscCall(VecGetArrayRead(dx, (const PetscScalar **)&p));
  PetscCall(VecGetArrayWrite(x, &xa));
  PetscCall(PetscArraycpy(xa, p, m));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscCall(VecRestoreArrayRead(dx, (const PetscScalar **)&p));
  PetscCall(VecDestroy(&db));
  PetscCall(VecDestroy(&dx));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSolve_SeqAIJELLRFactor(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatSolveStaged_SeqAIJELLR(F, b, x, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatSolveTranspose_SeqAIJELLRFactor(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatSolveStaged_SeqAIJELLR(F, b, x, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* Puts the staging solves over the ones the numeric factorization installed. */
static PetscErrorCode MatFactorWrapSolves_SeqAIJELLR(Mat F)
{
  PetscFunctionBegin;
  if (F->ops->solve && F->ops->solve != MatSolve_SeqAIJELLRFactor) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRSolveBase_C", F->ops->solve));
    F->ops->solve = MatSolve_SeqAIJELLRFactor;
  }
  if (F->ops->solvetranspose && F->ops->solvetranspose != MatSolveTranspose_SeqAIJELLRFactor) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRSolveTransposeBase_C", F->ops->solvetranspose));
    F->ops->solvetranspose = MatSolveTranspose_SeqAIJELLRFactor;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MatFactorNumeric_SeqAIJELLR(Mat F, Mat A, const MatFactorInfo *info, const char *name)
{
  PetscErrorCode (*base)(Mat, Mat, const MatFactorInfo *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)F, name, &base));
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A factor made for a petsc-ellr matrix lost its numeric factorization");
  PetscCall((*base)(F, A, info));
  PetscCall(MatFactorWrapSolves_SeqAIJELLR(F));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatLUFactorNumeric_SeqAIJELLRFactor(Mat F, Mat A, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatFactorNumeric_SeqAIJELLR(F, A, info, "MatELLRLUNumericBase_C"));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatCholeskyFactorNumeric_SeqAIJELLRFactor(Mat F, Mat A, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatFactorNumeric_SeqAIJELLR(F, A, info, "MatELLRCholeskyNumericBase_C"));
  PetscFunctionReturn(0);
}

/* After a symbolic phase: its numeric phases wrapped (and the solves, where it installed them already). */
static PetscErrorCode MatFactorWrapNumeric_SeqAIJELLR(Mat F)
{
  PetscFunctionBegin;
  if (F->ops->lufactornumeric && F->ops->lufactornumeric != MatLUFactorNumeric_SeqAIJELLRFactor) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRLUNumericBase_C", F->ops->lufactornumeric));
    F->ops->lufactornumeric = MatLUFactorNumeric_SeqAIJELLRFactor;
  }
  if (F->ops->choleskyfactornumeric && F->ops->choleskyfactornumeric != MatCholeskyFactorNumeric_SeqAIJELLRFactor) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRCholeskyNumericBase_C", F->ops->choleskyfactornumeric));
    F->ops->choleskyfactornumeric = MatCholeskyFactorNumeric_SeqAIJELLRFactor;
  }
  PetscCall(MatFactorWrapSolves_SeqAIJELLR(F));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatLUFactorSymbolic_SeqAIJELLRFactor(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscErrorCode (*base)(Mat, Mat, IS, IS, const MatFactorInfo *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)F, "MatELLRLUSymbolicBase_C", &base));
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A factor made for a petsc-ellr matrix lost its symbolic factorization");
  PetscCall((*base)(F, A, r, c, info));
  PetscCall(MatFactorWrapNumeric_SeqAIJELLR(F));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatILUFactorSymbolic_SeqAIJELLRFactor(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscErrorCode (*base)(Mat, Mat, IS, IS, const MatFactorInfo *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)F, "MatELLRILUSymbolicBase_C", &base));
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A factor made for a petsc-ellr matrix lost its symbolic factorization");
  PetscCall((*base)(F, A, r, c, info));
  PetscCall(MatFactorWrapNumeric_SeqAIJELLR(F));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatCholeskyFactorSymbolic_SeqAIJELLRFactor(Mat F, Mat A, IS p, const MatFactorInfo *info)
{
  PetscErrorCode (*base)(Mat, Mat, IS, const MatFactorInfo *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)F, "MatELLRCholeskySymbolicBase_C", &base));
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A factor made for a petsc-ellr matrix lost its symbolic factorization");
  PetscCall((*base)(F, A, p, info));
  PetscCall(MatFactorWrapNumeric_SeqAIJELLR(F));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatICCFactorSymbolic_SeqAIJELLRFactor(Mat F, Mat A, IS p, const MatFactorInfo *info)
{
  PetscErrorCode (*base)(Mat, Mat, IS, const MatFactorInfo *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)F, "MatELLRICCSymbolicBase_C", &base));
  PetscCheck(base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A factor made for a petsc-ellr matrix lost its symbolic factorization");
  PetscCall((*base)(F, A, p, info));
  PetscCall(MatFactorWrapNumeric_SeqAIJELLR(F));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatFactorWrapSymbolic_SeqAIJELLR(Mat F)
{
  PetscFunctionBegin;
  if (F->ops->lufactorsymbolic) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRLUSymbolicBase_C", F->ops->lufactorsymbolic));
    F->ops->lufactorsymbolic = MatLUFactorSymbolic_SeqAIJELLRFactor;
  }
  if (F->ops->ilufactorsymbolic) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRILUSymbolicBase_C", F->ops->ilufactorsymbolic));
    F->ops->ilufactorsymbolic = MatILUFactorSymbolic_SeqAIJELLRFactor;
  }
  if (F->ops->choleskyfactorsymbolic) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRCholeskySymbolicBase_C", F->ops->choleskyfactorsymbolic));
    F->ops->choleskyfactorsymbolic = MatCholeskyFactorSymbolic_SeqAIJELLRFactor;
  }
  if (F->ops->iccfactorsymbolic) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatELLRICCSymbolicBase_C", F->ops->iccfactorsymbolic));
    F->ops->iccfactorsymbolic = MatICCFactorSymbolic_SeqAIJELLRFactor;
  }
  PetscFunctionReturn(0);
}

/* -pc_factor_mat_solver_type cusparse (the default for these types, as for aijcusparse): aijcusparse's factor of A
   (ILU(0)/ICC(0) numeric on the GPU from A's device values, triangular solves with cuSPARSE), made under its name.
   A matrix of this type kept on the AIJ base (no GPU visible, or the CPU backend) gets PETSc's own factor. */
static PetscErrorCode MatGetFactor_SeqAIJELLR_CUSPARSE(Mat A, MatFactorType ftype, Mat *F)
{
  Mat_SeqAIJELLR *e = MatSeqAIJELLRGetData(A);
  MatSolverFn    *f = NULL;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  if (e && e->cusparse) PetscCall(MatSolverTypeGet(MATSOLVERCUSPARSE, MATSEQAIJCUSPARSE, ftype, NULL, NULL, &f));
  else PetscCall(MatSolverTypeGet(MATSOLVERPETSC, MATSEQAIJ, ftype, NULL, NULL, &f));
  if (!f) { /* no such factorization: MatGetFactor() says so */
    *F = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(MatSeqAIJELLRRename(A, PETSC_TRUE));
  ierr = (*f)(A, ftype, F);
  PetscCall(MatSeqAIJELLRRename(A, PETSC_FALSE));
  PetscCall(ierr);
  if (*F && e && e->cusparse) PetscCall(MatFactorWrapSymbolic_SeqAIJELLR(*F)); /* host vectors staged (above) */
  PetscFunctionReturn(0);
}

PetscErrorCode MatSeqAIJELLRRegisterCUSPARSEFactors(void)
{
  static const MatFactorType ftypes[] = {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC};

  PetscFunctionBegin;
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(ftypes); k++) {
    PetscCall(MatSolverTypeRegister(MATSOLVERCUSPARSE, MATSEQAIJELLRT, ftypes[k], MatGetFactor_SeqAIJELLR_CUSPARSE));
    PetscCall(MatSolverTypeRegister(MATSOLVERCUSPARSE, MATSEQAIJPELLR, ftypes[k], MatGetFactor_SeqAIJELLR_CUSPARSE));
  }
  PetscFunctionReturn(0);
}

#endif
