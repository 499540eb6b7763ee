static char help[] = "Differential test of the petsc-ellr matrix types against MATAIJ.\n\
Options:\n\
  -cases a,b,...     run only these cases (default: all; see the list printed with -list)\n\
  -types t1,t2       matrix types to test (default: ellrt,pellr; aij tests the harness itself)\n\
  -optsets i,j,...   indices of the built-in option sets (default: all; -list prints them)\n\
  -tol <1e-12>       relative error allowed (max-norm, against MATAIJ)\n\
  -list              print the cases and option sets and exit\n\
  -group <all>       core (the usual states), stale (MatRetrieveValues, MatResetPreallocation), coo (COO assembly),\n\
                     prealloc (preallocation again), lifecycle (in-place factorizations, MatHeaderReplace) or all\n\
  -fail_exit <true>  exit with status 1 when a check failed (false: for memory checkers)\n\
  -verbose           print every check\n\n";

/*
   diff_aij - products of MATELLR / MATPELLR against MATAIJ on the same entries.

   Every case is a matrix generated on rank 0 with a seeded PetscRandom and broadcast, so it is the
   same on any number of ranks; vectors are functions of the global index. For every case x type x
   option set, the matrix A (tested type) and B (MATAIJ) are built with identical MatSetValues calls
   and put through a sequence of states; in every state the four products

     MatMult, MatMultAdd (z != y and z == y), MatMultTranspose, MatMultTransposeAdd (z != y, z == y)

   are compared with B's: max|yA - yB| / max|yB| <= tol. Each product must also raise the plugin's
   product counter (MatELLRGetProductCount) on every rank, so a silent fallback to AIJ's own kernels
   fails. The states: assembled; MatScale; MatShift (square); MatZeroRows; new values on the same
   pattern; MatDiagonalScale; MatAXPY; values written directly through MatSeqAIJGetArray (of the diagonal
   block in parallel); a new nonzero after assembly; MatDuplicate (copy / no copy) + MatCopy; MatConvert from
   AIJ (initial, reuse, in place, by root and by full type name) and back to AIJ (initial, in place);
   MatResetPreallocation + a fresh assembly (one rank); MatStoreValues/MatRetrieveValues; new storage
   settings (MatSetFromOptions) after assembly.

   Output (rank 0 only) is one line per case x type x option set and a summary line, identical on
   1, 2 and 4 ranks. The exit code is nonzero when a check failed.
*/
#include <petscmat.h>
#include <petscellr.h>
#include <petsc/private/petscimpl.h> /* PetscObjectStateGet/Set: a state collision forced in the lifecycle group */

typedef enum { K_INODE, K_BAND, K_EMPTY_ROWS, K_ONE, K_ZERO_ROWS_RANK, K_RECT_WIDE, K_RECT_TALL, K_DENSE_ROW, K_ZERO, K_POWER_LAW } Kind;

typedef struct {
  const char *name;
  Kind        kind;
  PetscInt    M, N;
  PetscBool   irregular; /* full-width ELLPACK-R exceeds the default max fill */
} Case;

static const Case cases[] = {
  {"band",          K_BAND,           300,  300 },
  {"inode_blocks",  K_INODE,          240,  240 },
  {"empty_rows",    K_EMPTY_ROWS,     157,  157 },
  {"one_by_one",    K_ONE,            1,    1   },
  {"zero_rows_rank", K_ZERO_ROWS_RANK, 64,   64  },
  {"rect_wide",     K_RECT_WIDE,      37,   211 },
  {"rect_tall",     K_RECT_TALL,      211,  37  },
  {"dense_row",     K_DENSE_ROW,      250,  250,  PETSC_TRUE},
  {"zero",          K_ZERO,           50,   50  },
  {"power_law",     K_POWER_LAW,      1500, 1500, PETSC_TRUE},
};
#define NCASES ((PetscInt)(sizeof(cases) / sizeof(cases[0])))

static const char *optsets[] = {
  "",
  "-mat_ellr_threads_per_row 1",
  "-mat_ellr_threads_per_row 4",
  "-mat_ellr_threads_per_row 32 -mat_ellr_max_fill 0",
  "-mat_ellr_slice_height 0",
  "-mat_ellr_slice_height 1",
  "-mat_ellr_slice_height 7 -mat_ellr_threads_per_row 2 -mat_ellr_max_fill 0",
  "-mat_ellr_slice_height 32 -mat_ellr_sort -mat_ellr_max_fill 0",
  "-mat_ellr_sort -mat_ellr_slice_height 7 -mat_ellr_threads_per_row 8 -mat_ellr_max_fill 0",
  "-mat_ellr_sort 0 -mat_ellr_slice_height 32 -mat_ellr_threads_per_row 16 -mat_ellr_backend cpu -mat_ellr_max_fill 0",
  "-mat_ellr_backend aij",
  "-mat_ellr_sort -mat_ellr_threads_per_row -1 -mat_ellr_max_fill 0",
  "-mat_ellr_slice_height 7 -mat_ellr_threads_per_row -1 -mat_ellr_max_fill 0",
};
#define NOPTSETS ((PetscInt)(sizeof(optsets) / sizeof(optsets[0])))

typedef struct {
  PetscInt     M, N;
  PetscInt    *rowptr, *col;
  PetscScalar *val;
} CSR;

typedef struct {
  PetscReal   tol;
  PetscBool   verbose;
  const char *label; /* case/type/optset */
  PetscInt    nchecks, nfail;
  PetscBool   uncounted; /* checks not counted in nchecks (failures still are) */
  PetscBool   inplace;   /* in-place factorizations (-inplace_factor) */
} Ctx;

/* ---------------------------------------------------------------- matrix generation (rank 0) */

static PetscErrorCode RandInt(PetscRandom r, PetscInt lo, PetscInt hi, PetscInt *v) /* uniform in [lo, hi] */
{
  PetscReal u;
  PetscFunctionBeginUser;
  PetscCall(PetscRandomGetValueReal(r, &u));
  *v = lo + (PetscInt)(u * (hi - lo + 1));
  if (*v > hi) *v = hi;
  PetscFunctionReturn(0);
}

/* Chooses len distinct columns of [0, N) (sorted), forcing column `force` in when force >= 0. */
static PetscErrorCode RandomRow(PetscRandom r, PetscInt N, PetscInt len, PetscInt force, PetscBool *mark, PetscInt *cols)
{
  PetscInt k = 0, c = 0;
  PetscFunctionBeginUser;
  if (len > N) len = N;
  if (force >= 0 && len > 0) {
    mark[force] = PETSC_TRUE;
    cols[k++]   = force;
  }
  while (k < len) {
    PetscCall(RandInt(r, 0, N - 1, &c));
    if (!mark[c]) {
      mark[c]   = PETSC_TRUE;
      cols[k++] = c;
    }
  }
  for (PetscInt i = 0; i < k; i++) mark[cols[i]] = PETSC_FALSE;
  PetscCall(PetscSortInt(k, cols));
  PetscFunctionReturn(0);
}

static PetscErrorCode GenerateCSR(const Case *cs, PetscInt seed, CSR *a)
{
  PetscRandom r;
  PetscBool  *mark;
  PetscInt    M = cs->M, N = cs->N, cap, nz = 0, len, diag;
  PetscReal   u;

  PetscFunctionBeginUser;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetType(r, PETSCRAND48));
  PetscCall(PetscRandomSetSeed(r, (unsigned long)(1000 + seed)));
  PetscCall(PetscRandomSeed(r));
  a->M = M;
  a->N = N;
  cap  = M * (N < 40 ? N : 40) + 2 * N + 16;
  if (cs->kind == K_POWER_LAW) cap = M * N; /* bounded below */
  PetscCall(PetscMalloc1(M + 1, &a->rowptr));
  PetscCall(PetscMalloc1(cap, &a->col));
  PetscCall(PetscMalloc1(cap, &a->val));
  PetscCall(PetscCalloc1(N, &mark));
  a->rowptr[0] = 0;
  for (PetscInt i = 0; i < M; i++) {
    diag = i < N ? i : -1;
    switch (cs->kind) {
    case K_BAND:
      len = 0;
      for (PetscInt j = i - 2; j <= i + 2; j++)
        if (j >= 0 && j < N) a->col[nz + len++] = j;
      break;
    case K_INODE: /* block tridiagonal with dense 3x3 blocks: AIJ assembles it with I-node routines */
      len = 0;
      for (PetscInt j = (i / 3 - 1) * 3; j < (i / 3 + 2) * 3; j++)
        if (j >= 0 && j < N) a->col[nz + len++] = j;
      break;
    case K_EMPTY_ROWS:
      PetscCall(PetscRandomGetValueReal(r, &u));
      if (u < 0.35) len = 0;
      else PetscCall(RandInt(r, 1, 12, &len));
      PetscCall(RandomRow(r, N, len, u < 0.7 ? diag : -1, mark, a->col + nz));
      break;
    case K_ONE:
      len            = 1;
      a->col[nz]     = 0;
      break;
    case K_ZERO_ROWS_RANK:
      PetscCall(RandInt(r, 1, 8, &len));
      PetscCall(RandomRow(r, N, len, diag, mark, a->col + nz));
      break;
    case K_RECT_WIDE:
    case K_RECT_TALL:
      PetscCall(RandInt(r, 0, 9, &len));
      PetscCall(RandomRow(r, N, len, -1, mark, a->col + nz));
      break;
    case K_DENSE_ROW:
      if (i == 3) len = N;
      else PetscCall(RandInt(r, 2, 5, &len));
      PetscCall(RandomRow(r, N, len, diag, mark, a->col + nz));
      break;
    case K_ZERO:
      len = 0;
      break;
    case K_POWER_LAW: /* Pareto, x_min 2, alpha 1.3: mean ~9, longest row ~ hundreds */
      PetscCall(PetscRandomGetValueReal(r, &u));
      len = (PetscInt)(2.0 / PetscPowReal(1.0 - u, 1.0 / 1.3));
      if (len > N) len = N;
      PetscCall(RandomRow(r, N, len, diag, mark, a->col + nz));
      break;
    }
    for (PetscInt k = 0; k < len; k++) {
      PetscCall(PetscRandomGetValueReal(r, &u));
      a->val[nz + k] = 2.0 * u - 1.0 + (a->col[nz + k] == i ? 4.0 : 0.0);
    }
    if (cs->kind == K_ONE) a->val[nz] = 3.0;
    nz += len;
    a->rowptr[i + 1] = nz;
  }
  PetscCall(PetscFree(mark));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* Generates on rank 0 and broadcasts, so every rank holds the whole (small) matrix. */
static PetscErrorCode GetCSR(const Case *cs, PetscInt seed, CSR *a)
{
  PetscMPIInt rank;
  PetscInt    nz;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0) PetscCall(GenerateCSR(cs, seed, a));
  else {
    a->M = cs->M;
    a->N = cs->N;
    PetscCall(PetscMalloc1(cs->M + 1, &a->rowptr));
  }
  PetscCallMPI(MPI_Bcast(a->rowptr, (PetscMPIInt)(cs->M + 1), MPIU_INT, 0, PETSC_COMM_WORLD));
  nz = a->rowptr[cs->M];
  if (rank != 0) PetscCall(PetscMalloc2(nz + 1, &a->col, nz + 1, &a->val));
  PetscCallMPI(MPI_Bcast(a->col, (PetscMPIInt)nz, MPIU_INT, 0, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Bcast(a->val, (PetscMPIInt)nz, MPIU_SCALAR, 0, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

static PetscErrorCode FreeCSR(CSR *a)
{
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscFree(a->rowptr));
  if (rank == 0) {
    PetscCall(PetscFree(a->col));
    PetscCall(PetscFree(a->val));
  } else PetscCall(PetscFree2(a->col, a->val));
  PetscFunctionReturn(0);
}

/* Local sizes: PETSC_DECIDE, except for the case that leaves rank 0 (of several) without rows. */
static PetscErrorCode LocalSizes(const Case *cs, PetscInt *m, PetscInt *n)
{
  PetscMPIInt size, rank;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  *m = *n = PETSC_DECIDE;
  if (cs->kind == K_ZERO_ROWS_RANK && size > 1) {
    PetscInt share = cs->M / (size - 1);
    if (rank == 0) *m = 0;
    else *m = share + (rank == size - 1 ? cs->M - share * (size - 1) : 0);
    *n = *m;
  }
  PetscFunctionReturn(0);
}

/* Preallocates A (again, if it was) for the rows of a owned here and sets them: MatXAIJSetPreallocation,
   MatSetValues, assembly. */
static PetscErrorCode FillFromCSR(Mat A, const CSR *a)
{
  PetscInt    rstart, rend, cstart, cend, *dnz, *onz;
  PetscLayout rmap, cmap;

  PetscFunctionBeginUser;
  PetscCall(MatGetLayouts(A, &rmap, &cmap));
  PetscCall(PetscLayoutSetUp(rmap));
  PetscCall(PetscLayoutSetUp(cmap));
  PetscCall(PetscLayoutGetRange(rmap, &rstart, &rend));
  PetscCall(PetscLayoutGetRange(cmap, &cstart, &cend));
  PetscCall(PetscCalloc2(rend - rstart + 1, &dnz, rend - rstart + 1, &onz));
  for (PetscInt i = rstart; i < rend; i++)
    for (PetscInt k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
      if (a->col[k] >= cstart && a->col[k] < cend) dnz[i - rstart]++;
      else onz[i - rstart]++;
    }
  PetscCall(MatXAIJSetPreallocation(A, 1, dnz, onz, NULL, NULL));
  PetscCall(PetscFree2(dnz, onz));
  for (PetscInt i = rstart; i < rend; i++) PetscCall(MatSetValues(A, 1, &i, a->rowptr[i + 1] - a->rowptr[i], a->col + a->rowptr[i], a->val + a->rowptr[i], INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode BuildMat(const Case *cs, const CSR *a, MatType type, PetscBool fromoptions, Mat *A)
{
  PetscInt m, n;

  PetscFunctionBeginUser;
  PetscCall(LocalSizes(cs, &m, &n));
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, m, n, a->M, a->N));
  PetscCall(MatSetType(*A, type));
  if (fromoptions) PetscCall(MatSetFromOptions(*A));
  PetscCall(FillFromCSR(*A, a));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- checks */

/* Does A carry the ELLPACK-R format (ellrt or pellr)? MatGetType() names the base type (seqaij, mpiaij, ...). */
static PetscBool IsELLR(Mat A)
{
  MatType f = NULL;
  if (MatELLRGetFormat(A, &f)) return PETSC_FALSE;
  return (PetscBool)(f != NULL);
}

/* The format a type name asks for: MATELLR for ellrt/seqaijellrt/mpiaijellrt, MATPELLR for the pellr names, else NULL. */
static const char *FormatOf(const char *type)
{
  if (strstr(type, "pellr")) return MATPELLR;
  if (strstr(type, "ellrt")) return MATELLR;
  return NULL;
}

/* Fills v with a function of the global index (the same on any number of ranks). */
static PetscErrorCode FillVec(Vec v, PetscReal salt)
{
  PetscInt     lo, hi;
  PetscScalar *a;
  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = lo; i < hi; i++) a[i - lo] = PetscSinReal(1.37 * i + salt) + 0.25 * PetscCosReal(0.11 * i * salt + 1.0);
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode Count(Mat A, PetscInt *c)
{
  PetscFunctionBeginUser;
  *c = 0;
  if (IsELLR(A)) PetscCall(MatELLRGetProductCount(A, c));
  PetscFunctionReturn(0);
}

/* With the AIJ backend (-mat_ellr_backend aij, or auto without a GPU) products are AIJ's and must not touch
   the ELLPACK-R storage; with cpu or cuda every product must run on it. */
static PetscErrorCode UsesStorage(Mat A, PetscBool *uses)
{
  MatELLRBackend b;
  PetscFunctionBeginUser;
  PetscCall(MatELLRGetBackend(A, &b));
  *uses = (PetscBool)(b != MAT_ELLR_BACKEND_AIJ);
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(Ctx *ctx, const char *state, const char *op, PetscReal err, PetscInt mindelta, PetscBool needcount)
{
  PetscBool bad = (PetscBool)(!(err <= ctx->tol) || (needcount && mindelta < 1));
  PetscFunctionBeginUser;
  if (!ctx->uncounted) ctx->nchecks++;
  if (bad) ctx->nfail++;
  if (bad || ctx->verbose)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s %s / %s / %s: relative error %.3g%s%s\n", bad ? "FAIL" : "ok", ctx->label, state, op, (double)err,
                          err >= PETSC_INFINITY ? " (MATAIJ's result is 0, this one is not)" : "", needcount && mindelta < 1 ? " (plugin product did not run: MatELLRGetProductCount unchanged)" : ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode RelErr(Vec y1, Vec y2, PetscReal *err)
{
  Vec       d;
  PetscReal nd, n2;
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(y1, &d));
  PetscCall(VecWAXPY(d, -1.0, y2, y1));
  PetscCall(VecNorm(d, NORM_INFINITY, &nd));
  PetscCall(VecNorm(y2, NORM_INFINITY, &n2));
  *err = n2 > 0 ? nd / n2 : (nd > 0 ? PETSC_INFINITY : 0.0);
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

/* dst's local values := src's (vectors of different types: A's are CUDA vectors on an aijcusparse base, B's host) */
static PetscErrorCode CopyValues(Vec src, Vec dst)
{
  const PetscScalar *a;
  PetscScalar       *b;
  PetscInt           n;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(src, &n));
  PetscCall(VecGetArrayRead(src, &a));
  PetscCall(VecGetArrayWrite(dst, &b));
  PetscCall(PetscArraycpy(b, a, n));
  PetscCall(VecRestoreArrayWrite(dst, &b));
  PetscCall(VecRestoreArrayRead(src, &a));
  PetscFunctionReturn(0);
}

/* Compares the four products (six calls) of A with B's. needcount: A must be an ELLR type whose counter moves.
   A multiplies vectors of its own type (MatCreateVecs(A): CUDA vectors on the aijcusparse base, which its base
   products require, as aijcusparse's do), holding the same values as B's. */
static PetscErrorCode CheckProducts(Ctx *ctx, Mat A, Mat B, const char *state, PetscBool needcount)
{
  Vec       x, xt, z, zt, yA, yB, ytA, ytB, xa, ya, za, xta, yta, zta;
  PetscInt  c0, c1, delta;
  PetscReal err = 0;
  PetscBool aijbackend = PETSC_FALSE;
  const char *ops[6] = {"MatMult", "MatMultAdd", "MatMultAdd(y==z)", "MatMultTranspose", "MatMultTransposeAdd", "MatMultTransposeAdd(y==z)"};

  PetscFunctionBeginUser;
  if (needcount && !IsELLR(A)) {
    MatType t;
    PetscCall(MatGetType(A, &t));
    ctx->nchecks++;
    ctx->nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  FAIL %s / %s: matrix of type %s without the ELLR format\n", ctx->label, state, t));
    needcount = PETSC_FALSE;
  }
  PetscCall(MatCreateVecs(B, &x, &yB));
  PetscCall(MatCreateVecs(B, &ytB, &xt));
  PetscCall(VecDuplicate(yB, &z));
  PetscCall(VecDuplicate(yB, &yA));
  PetscCall(VecDuplicate(ytB, &zt));
  PetscCall(VecDuplicate(ytB, &ytA));
  PetscCall(FillVec(x, 0.3));
  PetscCall(FillVec(z, 1.7));
  PetscCall(FillVec(xt, 2.9));
  PetscCall(FillVec(zt, 4.1));
  PetscCall(MatCreateVecs(A, &xa, &ya));
  PetscCall(MatCreateVecs(A, &yta, &xta));
  PetscCall(VecDuplicate(ya, &za));
  PetscCall(VecDuplicate(yta, &zta));
  PetscCall(CopyValues(x, xa));
  PetscCall(CopyValues(z, za));
  PetscCall(CopyValues(xt, xta));
  PetscCall(CopyValues(zt, zta));
  if (needcount) {
    PetscBool uses = PETSC_TRUE;
    PetscCall(UsesStorage(A, &uses));
    if (!uses) {
      needcount  = PETSC_FALSE;
      aijbackend = PETSC_TRUE;
    }
  }
  for (int op = 0; op < 6; op++) {
    const PetscBool tr = (PetscBool)(op >= 3);
    Vec             X = tr ? xt : x, Z = tr ? zt : z, YA = tr ? ytA : yA, YB = tr ? ytB : yB;
    Vec             XA = tr ? xta : xa, ZA = tr ? zta : za, YAa = tr ? yta : ya;
    PetscCall(VecSet(YAa, -99.0));
    if (op == 4 && !IsELLR(A)) {
      /* PETSc 3.26's aijcusparse computes MatMultTransposeAdd(A, x, z, y) with y != z as y = A^T x + (old y) + z (its
         kernel takes beta = 1 on the write-only y): a matrix PETSc derived (MatTranspose, MatCreateSubMatrix: plain
         aijcusparse) is compared from a zero y; the library's types replace the product and keep the poisoned y */
      PetscBool cusp;
      PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &cusp, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
      if (cusp) PetscCall(VecSet(YAa, 0.0));
    }
    PetscCall(Count(A, &c0));
    switch (op) {
    case 0: PetscCall(MatMult(A, XA, YAa)); PetscCall(MatMult(B, X, YB)); break;
    case 1: PetscCall(MatMultAdd(A, XA, ZA, YAa)); PetscCall(MatMultAdd(B, X, Z, YB)); break;
    case 2:
      PetscCall(VecCopy(ZA, YAa));
      PetscCall(VecCopy(Z, YB));
      PetscCall(MatMultAdd(A, XA, YAa, YAa));
      PetscCall(MatMultAdd(B, X, YB, YB));
      break;
    case 3: PetscCall(MatMultTranspose(A, XA, YAa)); PetscCall(MatMultTranspose(B, X, YB)); break;
    case 4: PetscCall(MatMultTransposeAdd(A, XA, ZA, YAa)); PetscCall(MatMultTransposeAdd(B, X, Z, YB)); break;
    case 5:
      PetscCall(VecCopy(ZA, YAa));
      PetscCall(VecCopy(Z, YB));
      PetscCall(MatMultTransposeAdd(A, XA, YAa, YAa));
      PetscCall(MatMultTransposeAdd(B, X, YB, YB));
      break;
    }
    PetscCall(CopyValues(YAa, YA));
    PetscCall(Count(A, &c1));
    delta = c1 - c0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &delta, 1, MPIU_INT, MPI_MIN, PETSC_COMM_WORLD));
    PetscCall(RelErr(YA, YB, &err));
    PetscCall(Report(ctx, state, ops[op], err, delta, needcount));
    if (aijbackend && c1 != 0) { /* the AIJ backend must keep no second copy of the matrix */
      ctx->nfail++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  FAIL %s / %s / %s: backend aij, yet %" PetscInt_FMT " products ran on ELLPACK-R storage\n", ctx->label, state, ops[op], c1));
    }
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&zt));
  PetscCall(VecDestroy(&yA));
  PetscCall(VecDestroy(&yB));
  PetscCall(VecDestroy(&ytA));
  PetscCall(VecDestroy(&ytB));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&za));
  PetscCall(VecDestroy(&xta));
  PetscCall(VecDestroy(&yta));
  PetscCall(VecDestroy(&zta));
  PetscFunctionReturn(0);
}

/* A's type (MatGetType) must be want and its format (MatELLRGetFormat) wantformat: NULL = no format, "*" = either
   (a conversion whose result PETSc's base type decides, on the GPU). One check. */
static PetscErrorCode CheckType(Ctx *ctx, Mat A, const char *state, const char *want, const char *wantformat)
{
  MatType   t, f;
  PetscBool same, fsame, any;
  PetscFunctionBeginUser;
  PetscCall(MatGetType(A, &t));
  PetscCall(MatELLRGetFormat(A, &f));
  PetscCall(PetscStrcmp(t, want, &same));
  PetscCall(PetscStrcmp(wantformat, "*", &any));
  fsame = (PetscBool)(any || (!f && !wantformat));
  if (!fsame && f && wantformat) PetscCall(PetscStrcmp(f, wantformat, &fsame));
  ctx->nchecks++;
  if (!same || !fsame) {
    ctx->nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  FAIL %s / %s: type %s format %s, expected type %s format %s\n", ctx->label, state, t, f ? f : "none", want, wantformat ? wantformat : "none"));
  } else if (ctx->verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  ok %s / %s: type %s format %s\n", ctx->label, state, t, f ? f : "none"));
  PetscFunctionReturn(0);
}

/* New values on the unchanged pattern of B, set in A and B. */
static PetscErrorCode NewValues(Mat A, Mat B)
{
  PetscInt rstart, rend;
  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *v;
    PetscScalar        nv[4096];
    PetscInt           cc[4096];
    PetscCall(MatGetRow(B, i, &nc, &cols, &v));
    PetscCheck(nc <= 4096, PETSC_COMM_SELF, PETSC_ERR_SUP, "row too long for this test");
    for (PetscInt k = 0; k < nc; k++) {
      cc[k] = cols[k];
      nv[k] = 0.5 + PetscSinReal(0.7 * i + 0.3 * cols[k]);
    }
    PetscCall(MatRestoreRow(B, i, &nc, &cols, &v));
    PetscCall(MatSetValues(A, 1, &i, nc, cc, nv, INSERT_VALUES));
    PetscCall(MatSetValues(B, 1, &i, nc, cc, nv, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode Assemble(Mat A)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Changes the values of the (diagonal block's) CSR directly, through MatSeqAIJGetArray: no MatSetValues,
   no assembly; only the object state of the block tells the plugin that its copy is stale. */
static PetscErrorCode ClearOptionSet(const char *);

/* -group core|stale|all: the stale group holds the states where PETSc changes values or pattern behind
   the usual signals (MatRetrieveValues, MatResetPreallocation); run.sh runs it as separate tests. */
static PetscBool g_core = PETSC_TRUE, g_stale = PETSC_TRUE, g_coo = PETSC_TRUE, g_prealloc = PETSC_TRUE, g_life = PETSC_TRUE;

static PetscErrorCode ScaleArrayDirectly(Mat A)
{
  Mat             Ad = A;
  PetscMPIInt     size;
  PetscScalar    *a;
  const PetscInt *ia, *ja;
  PetscInt        n;
  PetscBool       done;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(MatSeqAIJGetArray(Ad, &a));
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) a[k] *= 1.0 + 0.01 * ((i + ja[k]) % 5);
  PetscCall(MatSeqAIJRestoreArray(Ad, &a));
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- groups coo, prealloc, lifecycle */

/* The entries of a as COO triples given by this rank: the rows i with i % size == rank, so that in parallel most
   entries belong to another rank (PETSc's COO path sends them to their owner). */
static PetscErrorCode COOEntries(const CSR *a, PetscCount *n, PetscInt **ci, PetscInt **cj, PetscScalar **cv)
{
  PetscMPIInt size, rank;
  PetscCount  k = 0;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  for (PetscInt i = rank; i < a->M; i += size) k += a->rowptr[i + 1] - a->rowptr[i];
  PetscCall(PetscMalloc3(k + 1, ci, k + 1, cj, k + 1, cv));
  k = 0;
  for (PetscInt i = rank; i < a->M; i += size)
    for (PetscInt p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
      (*ci)[k] = i;
      (*cj)[k] = a->col[p];
      (*cv)[k] = a->val[p];
      k++;
    }
  *n = k;
  PetscFunctionReturn(0);
}

static PetscErrorCode SetCOO(Mat A, const CSR *a)
{
  PetscCount   n;
  PetscInt    *ci, *cj;
  PetscScalar *cv;
  PetscFunctionBeginUser;
  PetscCall(COOEntries(a, &n, &ci, &cj, &cv));
  PetscCall(MatSetPreallocationCOO(A, n, ci, cj));
  PetscCall(MatSetValuesCOO(A, cv, INSERT_VALUES));
  PetscCall(PetscFree3(ci, cj, cv));
  PetscFunctionReturn(0);
}

/* MatSetPreallocationCOO + MatSetValuesCOO; new values (INSERT and ADD) on the same pattern, refreshed without a
   rebuild; a second COO preallocation with another pattern (new off-process columns). */
static PetscErrorCode RunCOO(Ctx *ctx, const Case *cs, PetscInt icase, const CSR *a, MatType type, PetscBool need)
{
  Mat          A, B, B2;
  CSR          a2;
  PetscInt     m, n;
  PetscCount   nc;
  PetscInt    *ci, *cj;
  PetscScalar *cv;
  PetscFunctionBeginUser;
  PetscCall(LocalSizes(cs, &m, &n));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, m, n, a->M, a->N));
  PetscCall(MatSetType(A, type));
  PetscCall(MatSetFromOptions(A));
  PetscCall(SetCOO(A, a));
  PetscCall(BuildMat(cs, a, MATAIJ, PETSC_FALSE, &B));
  PetscCall(CheckProducts(ctx, A, B, "MatSetValuesCOO", need));
  PetscCall(COOEntries(a, &nc, &ci, &cj, &cv));
  for (PetscCount k = 0; k < nc; k++) cv[k] *= 2.0;
  PetscCall(MatSetValuesCOO(A, cv, INSERT_VALUES));
  PetscCall(MatScale(B, 2.0));
  PetscCall(CheckProducts(ctx, A, B, "MatSetValuesCOO new values", need));
  PetscCall(MatSetValuesCOO(A, cv, ADD_VALUES));
  PetscCall(MatScale(B, 2.0));
  PetscCall(CheckProducts(ctx, A, B, "MatSetValuesCOO ADD_VALUES", need));
  PetscCall(PetscFree3(ci, cj, cv));
  /* another pattern through a second COO preallocation of the same matrix */
  PetscCall(GetCSR(cs, icase + 100, &a2));
  PetscCall(SetCOO(A, &a2));
  PetscCall(BuildMat(cs, &a2, MATAIJ, PETSC_FALSE, &B2));
  PetscCall(CheckProducts(ctx, A, B2, "second MatSetPreallocationCOO, new pattern", need));
  PetscCall(FreeCSR(&a2));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&B2));
  PetscFunctionReturn(0);
}

/* Preallocation again with a new pattern after use (MatXAIJSetPreallocation), then the CSR route
   (MatMPIAIJSetPreallocationCSR / MatSeqAIJSetPreallocationCSR) back to the first pattern. */
static PetscErrorCode RunPrealloc(Ctx *ctx, const Case *cs, PetscInt icase, const CSR *a, MatType type, PetscBool need)
{
  Mat         A, B, B2;
  CSR         a2;
  PetscMPIInt size;
  PetscInt    rstart, rend, *li;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(BuildMat(cs, a, type, PETSC_TRUE, &A));
  PetscCall(BuildMat(cs, a, MATAIJ, PETSC_FALSE, &B));
  PetscCall(CheckProducts(ctx, A, B, "assembled", need));
  PetscCall(GetCSR(cs, icase + 200, &a2));
  PetscCall(FillFromCSR(A, &a2));
  PetscCall(BuildMat(cs, &a2, MATAIJ, PETSC_FALSE, &B2));
  PetscCall(CheckProducts(ctx, A, B2, "MatXAIJSetPreallocation again, new pattern", need));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(PetscMalloc1(rend - rstart + 1, &li));
  for (PetscInt i = rstart; i <= rend; i++) li[i - rstart] = a->rowptr[i] - a->rowptr[rstart];
  if (size > 1) PetscCall(MatMPIAIJSetPreallocationCSR(A, li, a->col + a->rowptr[rstart], a->val + a->rowptr[rstart]));
  else PetscCall(MatSeqAIJSetPreallocationCSR(A, li, a->col, a->val));
  PetscCall(PetscFree(li));
  PetscCall(CheckProducts(ctx, A, B, size > 1 ? "MatMPIAIJSetPreallocationCSR after use" : "MatSeqAIJSetPreallocationCSR after use", need));
  PetscCall(FreeCSR(&a2));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&B2));
  PetscFunctionReturn(0);
}

/* x = F^{-1} b for two factored matrices: the ELLR one factored in place and MATAIJ's. */
static PetscErrorCode CheckSolve(Ctx *ctx, Mat FA, Mat FB, const char *state)
{
  Vec       b, xA, xB;
  PetscReal err;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(FB, &xB, &b));
  PetscCall(VecDuplicate(xB, &xA));
  PetscCall(FillVec(b, 0.7));
  PetscCall(MatSolve(FA, b, xA));
  PetscCall(MatSolve(FB, b, xB));
  PetscCall(RelErr(xA, xB, &err));
  PetscCall(Report(ctx, state, "MatSolve", err, 0, PETSC_FALSE));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xA));
  PetscCall(VecDestroy(&xB));
  PetscFunctionReturn(0);
}

/* A diagonally dominant (and, with symm, symmetric) copy of X: M = X (+ X^T) + s I, s = 2 max row sum + 1.
   MatAXPY with another pattern replaces the header of an ELLR matrix by MatHeaderMerge(). */
static PetscErrorCode Dominant(Mat X, PetscBool symm, Mat *M)
{
  PetscReal nrm;
  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(X, MAT_COPY_VALUES, M));
  if (symm) {
    Mat T;
    PetscCall(MatTranspose(X, MAT_INITIAL_MATRIX, &T));
    PetscCall(MatAXPY(*M, 1.0, T, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatDestroy(&T));
  }
  PetscCall(MatNorm(*M, NORM_INFINITY, &nrm));
  PetscCall(MatSetOption(*M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatShift(*M, 2.0 * nrm + 1.0));
  PetscFunctionReturn(0);
}

/* Base operations that replace the header: in-place LU and ILU then MatSolve and MatDestroy (one
   rank, square); MatHeaderReplace both ways; MatConvert to another type in place. */
static PetscErrorCode RunLifecycle(Ctx *ctx, const Case *cs, const CSR *a, MatType type, PetscBool need, const char *basetype)
{
  Mat         A, B, D, E;
  PetscMPIInt size;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(BuildMat(cs, a, type, PETSC_TRUE, &A));
  PetscCall(BuildMat(cs, a, MATAIJ, PETSC_FALSE, &B));
  if (size == 1 && cs->M == cs->N && ctx->inplace) {
    /* (SEQAIJ has no in-place Cholesky or ICC: MatCholeskyFactor() and MatICCFactor() fail for MATAIJ too) */
    const MatFactorType kinds[2] = {MAT_FACTOR_LU, MAT_FACTOR_ILU};
    const char         *names[2] = {"MatLUFactor in place", "MatILUFactor in place"};
    ctx->uncounted = PETSC_TRUE; /* one rank only: the summary line stays the same on every number of ranks */
    for (int k = 0; k < 2; k++) {
      const PetscBool symm = (PetscBool)(k == 1); /* the ILU one on X + X^T: MatAXPY with another pattern */
      Mat             FA, FB;
      IS              rp, cp;
      MatFactorInfo   info;
      PetscCall(Dominant(A, symm, &FA));
      PetscCall(Dominant(B, symm, &FB));
      PetscCall(CheckProducts(ctx, FA, FB, symm ? "X + X^T + sI (MatAXPY, another pattern)" : "X + sI", need));
      PetscCall(MatGetOrdering(FB, MATORDERINGNATURAL, &rp, &cp));
      PetscCall(MatFactorInfoInitialize(&info));
      for (int t = 0; t < 2; t++) {
        Mat F = t ? FB : FA;
        if (kinds[k] == MAT_FACTOR_LU) PetscCall(MatLUFactor(F, rp, cp, &info));
        else PetscCall(MatILUFactor(F, rp, cp, &info));
      }
      PetscCall(CheckSolve(ctx, FA, FB, names[k]));
      PetscCall(ISDestroy(&rp));
      PetscCall(ISDestroy(&cp));
      PetscCall(MatDestroy(&FA));
      PetscCall(MatDestroy(&FB));
    }
    ctx->uncounted = PETSC_FALSE;
  }
  /* MatHeaderReplace: an ELLR matrix becomes an AIJ one, and an AIJ one an ELLR one */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &E));
  PetscCall(MatScale(E, 1.5));
  PetscCall(MatHeaderReplace(D, &E));
  PetscCall(CheckType(ctx, D, "MatHeaderReplace(ELLR, AIJ)", size > 1 ? MATMPIAIJ : MATSEQAIJ, NULL));
  PetscCall(MatScale(B, 1.5));
  PetscCall(CheckProducts(ctx, D, B, "MatHeaderReplace(ELLR, AIJ)", PETSC_FALSE));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &D));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &E));
  PetscCall(MatScale(E, 1.5));
  PetscCall(MatHeaderReplace(D, &E));
  PetscCall(CheckType(ctx, D, "MatHeaderReplace(AIJ, ELLR)", basetype, FormatOf(type)));
  PetscCall(CheckProducts(ctx, D, B, "MatHeaderReplace(AIJ, ELLR)", need));
  PetscCall(MatDestroy(&D));
  /* MatHeaderReplace by a matrix of the type changed since its last product, the state stamps colliding: D's state
     after the replace (its own plus one) is the one E's storage was made at, so only the replace itself can tell
     that the storage's values are not E's */
  {
    Vec              x, y;
    PetscObjectState sE;
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &E));
    PetscCall(MatCreateVecs(E, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(E, x, y)); /* E's storage made at E's state sE */
    PetscCall(PetscObjectStateGet((PetscObject)E, &sE));
    PetscCall(MatScale(E, 1.5));
    PetscCall(PetscObjectStateSet((PetscObject)D, sE - 1));
    PetscCall(MatHeaderReplace(D, &E));
    PetscCall(CheckProducts(ctx, D, B, "MatHeaderReplace(ELLR, ELLR changed since its last product)", need));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&D));
  }
  /* to another type in place (MatConvert_Basic: MatHeaderReplace) */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatScale(D, 1.5));
  PetscCall(MatConvert(D, MATDENSE, MAT_INPLACE_MATRIX, &D));
  PetscCall(CheckType(ctx, D, "MatConvert(to dense, MAT_INPLACE_MATRIX)", size > 1 ? MATMPIDENSE : MATSEQDENSE, NULL));
  PetscCall(CheckProducts(ctx, D, B, "MatConvert(to dense, MAT_INPLACE_MATRIX)", PETSC_FALSE));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCombo(Ctx *ctx, const Case *cs, PetscInt icase, const char *type)
{
  CSR         a;
  Mat         A, B, D = NULL, E = NULL, C, F;
  PetscMPIInt size, rank;
  PetscBool   square = (PetscBool)(cs->M == cs->N);
  char        fullname[64], basetype[64];
  MatType     atype;
  const char *aijname, *format = FormatOf(type), *toaijformat;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(GetCSR(cs, icase, &a));
  PetscCall(BuildMat(cs, &a, type, PETSC_TRUE, &A));
  PetscCall(BuildMat(cs, &a, MATAIJ, PETSC_FALSE, &B));
  /* A is a genuine AIJ matrix (aijcusparse on a GPU): MatGetType names that base type; the format is MatELLRGetFormat's.
     The full registered name (seqaijellrt, mpiaijpellr, ...) converts too. */
  PetscCall(MatGetType(A, &atype));
  PetscCall(PetscStrncpy(basetype, atype, sizeof(basetype)));
  aijname = size > 1 ? MATMPIAIJ : MATSEQAIJ;
  PetscCall(PetscSNPrintf(fullname, sizeof(fullname), "%s%s", aijname, format ? format : ""));
  /* MatConvert(A, MATAIJ) of a matrix whose base type is AIJ already is a copy that keeps the format; from the
     aijcusparse base PETSc's own conversion decides */
  {
    PetscBool same;
    PetscCall(PetscStrcmp(basetype, aijname, &same));
    toaijformat = same ? format : "*";
  }
  {
    PetscBool isaij;
    PetscCall(PetscStrcmp(type, MATAIJ, &isaij));
    const PetscBool need = (PetscBool)!isaij;

    PetscCall(CheckProducts(ctx, A, B, "assembled", need));
    if (g_core) {
    PetscCall(MatScale(A, -2.5));
    PetscCall(MatScale(B, -2.5));
    PetscCall(CheckProducts(ctx, A, B, "MatScale", need));
    if (square) {
      PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      PetscCall(MatShift(A, 0.75));
      PetscCall(MatShift(B, 0.75));
      PetscCall(CheckProducts(ctx, A, B, "MatShift", need));
    }
    {
      PetscInt rows[3] = {0, cs->M / 2, cs->M - 1}, nr = rank == 0 ? (cs->M >= 3 ? 3 : 1) : 0;
      PetscCall(MatZeroRows(A, nr, rows, square ? 4.0 : 0.0, NULL, NULL));
      PetscCall(MatZeroRows(B, nr, rows, square ? 4.0 : 0.0, NULL, NULL));
      PetscCall(CheckProducts(ctx, A, B, "MatZeroRows", need));
    }
    PetscCall(NewValues(A, B));
    PetscCall(CheckProducts(ctx, A, B, "MatSetValues same pattern", need));
    {
      Vec l, r, la, ra; /* A's scaling vectors of its own type (aijcusparse scales with CUDA vectors only) */
      PetscCall(MatCreateVecs(B, &r, &l));
      PetscCall(MatCreateVecs(A, &ra, &la));
      PetscCall(FillVec(l, 0.9));
      PetscCall(FillVec(r, 2.2));
      PetscCall(CopyValues(l, la));
      PetscCall(CopyValues(r, ra));
      PetscCall(MatDiagonalScale(A, la, ra));
      PetscCall(MatDiagonalScale(B, l, r));
      PetscCall(VecDestroy(&l));
      PetscCall(VecDestroy(&r));
      PetscCall(VecDestroy(&la));
      PetscCall(VecDestroy(&ra));
      PetscCall(CheckProducts(ctx, A, B, "MatDiagonalScale", need));
    }
    {
      Mat X;
      PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &X));
      PetscCall(MatAXPY(A, 0.5, X, SAME_NONZERO_PATTERN));
      PetscCall(MatAXPY(B, 0.5, X, SAME_NONZERO_PATTERN));
      PetscCall(MatDestroy(&X));
      PetscCall(CheckProducts(ctx, A, B, "MatAXPY(SAME_NONZERO_PATTERN)", need));
    }
    PetscCall(ScaleArrayDirectly(A));
    PetscCall(ScaleArrayDirectly(B));
    PetscCall(CheckProducts(ctx, A, B, "MatSeqAIJGetArray write", need));
    {
      PetscInt    r[3] = {0, cs->M - 1, cs->M / 2}, c[3] = {cs->N - 1, 0, cs->N / 3};
      PetscScalar v    = 1.25;
      PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      if (rank == 0)
        for (int k = 0; k < 3; k++) {
          PetscCall(MatSetValue(A, r[k], c[k], v * (k + 1), ADD_VALUES));
          PetscCall(MatSetValue(B, r[k], c[k], v * (k + 1), ADD_VALUES));
        }
      PetscCall(Assemble(A));
      PetscCall(Assemble(B));
      PetscCall(CheckProducts(ctx, A, B, "new nonzero after assembly", need));
    }
    /* matrices derived from A: compared with the same derived from B (their type is PETSc's choice) */
    {
      Mat      At, Bt, As, Bs, AB, BB;
      IS       rows, cols;
      PetscInt rlo, rhi, clo, chi;
      PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
      PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &Bt));
      PetscCall(CheckProducts(ctx, At, Bt, "MatTranspose", PETSC_FALSE));
      PetscCall(MatGetOwnershipRange(B, &rlo, &rhi));
      PetscCall(MatGetOwnershipRangeColumn(B, &clo, &chi));
      PetscCall(ISCreateStride(PETSC_COMM_WORLD, (rhi - rlo + 1) / 2, rlo, 2, &rows));
      PetscCall(ISCreateStride(PETSC_COMM_WORLD, chi - clo, clo, 1, &cols));
      PetscCall(MatCreateSubMatrix(A, rows, cols, MAT_INITIAL_MATRIX, &As));
      PetscCall(MatCreateSubMatrix(B, rows, cols, MAT_INITIAL_MATRIX, &Bs));
      PetscCall(CheckProducts(ctx, As, Bs, "MatCreateSubMatrix", PETSC_FALSE));
      PetscCall(MatMatMult(A, At, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &AB));
      PetscCall(MatMatMult(B, Bt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &BB));
      {
        /* on the aijcusparse base the product is aijcusparse's (SpGEMM on the GPU), which multiplies CUDA vectors only:
           its values are checked through a MATAIJ copy with the host vectors used here */
        PetscBool cusp;
        PetscCall(PetscObjectTypeCompareAny((PetscObject)AB, &cusp, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
        if (cusp) PetscCall(MatConvert(AB, MATAIJ, MAT_INPLACE_MATRIX, &AB));
      }
      PetscCall(CheckProducts(ctx, AB, BB, "MatMatMult(A, A^T)", PETSC_FALSE));
      PetscCall(ISDestroy(&rows));
      PetscCall(ISDestroy(&cols));
      PetscCall(MatDestroy(&At));
      PetscCall(MatDestroy(&Bt));
      PetscCall(MatDestroy(&As));
      PetscCall(MatDestroy(&Bs));
      PetscCall(MatDestroy(&AB));
      PetscCall(MatDestroy(&BB));
    }
    /* MatZeroEntries, then the old values back on the same pattern */
    {
      Mat Z;
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Z));
      PetscCall(MatZeroEntries(Z));
      PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &F));
      PetscCall(CheckProducts(ctx, Z, F, "MatZeroEntries", need));
      PetscCall(MatCopy(A, Z, SAME_NONZERO_PATTERN));
      PetscCall(CheckProducts(ctx, Z, B, "MatZeroEntries + MatCopy", need));
      PetscCall(MatDestroy(&Z));
      PetscCall(MatDestroy(&F));
    }
    /* MatDuplicate and MatCopy */
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
    PetscCall(CheckType(ctx, D, "MatDuplicate(MAT_COPY_VALUES)", basetype, format));
    PetscCall(CheckProducts(ctx, D, B, "MatDuplicate(MAT_COPY_VALUES)", need));
    PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, &E));
    PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &F));
    PetscCall(CheckType(ctx, E, "MatDuplicate(MAT_DO_NOT_COPY_VALUES)", basetype, format));
    PetscCall(CheckProducts(ctx, E, F, "MatDuplicate(MAT_DO_NOT_COPY_VALUES)", need));
    PetscCall(MatCopy(A, E, SAME_NONZERO_PATTERN));
    PetscCall(CheckProducts(ctx, E, B, "MatCopy(SAME_NONZERO_PATTERN)", need));
    PetscCall(MatScale(B, 3.0));
    PetscCall(MatCopy(B, D, DIFFERENT_NONZERO_PATTERN)); /* AIJ -> ELLR */
    PetscCall(CheckProducts(ctx, D, B, "MatCopy(AIJ to type, DIFFERENT_NONZERO_PATTERN)", need));
    PetscCall(MatScale(A, 3.0));
    PetscCall(MatDestroy(&D));
    PetscCall(MatDestroy(&E));
    PetscCall(MatDestroy(&F));

    /* MatConvert AIJ -> type: initial, reuse, in place; by root name and by full name */
    PetscCall(MatConvert(B, type, MAT_INITIAL_MATRIX, &C));
    PetscCall(CheckType(ctx, C, "MatConvert(MAT_INITIAL_MATRIX)", basetype, format));
    PetscCall(CheckProducts(ctx, C, B, "MatConvert(MAT_INITIAL_MATRIX)", need));
    PetscCall(MatScale(B, 0.5));
    PetscCall(MatScale(A, 0.5));
    PetscCall(MatConvert(B, type, MAT_REUSE_MATRIX, &C));
    PetscCall(CheckProducts(ctx, C, B, "MatConvert(MAT_REUSE_MATRIX)", need));
    PetscCall(CheckProducts(ctx, A, B, "MatScale again", need));
    PetscCall(MatDestroy(&C));
    PetscCall(MatConvert(B, fullname, MAT_INITIAL_MATRIX, &C));
    PetscCall(CheckType(ctx, C, "MatConvert(full type name)", basetype, format));
    PetscCall(CheckProducts(ctx, C, B, "MatConvert(full type name)", need));
    PetscCall(MatDestroy(&C));
    PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &D));
    PetscCall(MatConvert(D, type, MAT_INPLACE_MATRIX, &D));
    PetscCall(CheckType(ctx, D, "MatConvert(MAT_INPLACE_MATRIX)", basetype, format));
    PetscCall(CheckProducts(ctx, D, B, "MatConvert(MAT_INPLACE_MATRIX)", need));
    /* and back to AIJ */
    PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &E));
    PetscCall(CheckType(ctx, E, "MatConvert(to aij, MAT_INITIAL_MATRIX)", aijname, toaijformat));
    PetscCall(CheckProducts(ctx, E, B, "MatConvert(to aij, MAT_INITIAL_MATRIX)", PETSC_FALSE));
    PetscCall(MatConvert(D, MATAIJ, MAT_INPLACE_MATRIX, &D));
    PetscCall(CheckType(ctx, D, "MatConvert(to aij, MAT_INPLACE_MATRIX)", aijname, toaijformat));
    PetscCall(CheckProducts(ctx, D, B, "MatConvert(to aij, MAT_INPLACE_MATRIX)", PETSC_FALSE));
    /* the original is untouched by all of that */
    PetscCall(CheckProducts(ctx, A, B, "after conversions", need));
    } /* g_core */
    if (g_stale) {
    /* MatResetPreallocation and a fresh assembly of the original entries. One rank only: PETSc's own MPIAIJ
       cannot reset the preallocation of a block with no rows ("Memory info is incomplete"). Its checks are not
       counted in the summary line (which stays the same on every number of ranks); failures are reported. */
    if (size == 1) {
      PetscInt rstart, rend;
      ctx->uncounted = PETSC_TRUE;
      if (square) { /* a full diagonal first, so that the reset removes entries (and a zero matrix has a preallocation to reset) */
        PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        PetscCall(MatShift(A, 1.0));
        PetscCall(MatShift(B, 1.0));
        PetscCall(CheckProducts(ctx, A, B, "MatShift before MatResetPreallocation", need));
      }
      PetscCall(MatResetPreallocation(A));
      PetscCall(MatResetPreallocation(B));
      PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
      for (PetscInt i = rstart; i < rend; i++) {
        PetscCall(MatSetValues(A, 1, &i, a.rowptr[i + 1] - a.rowptr[i], a.col + a.rowptr[i], a.val + a.rowptr[i], INSERT_VALUES));
        PetscCall(MatSetValues(B, 1, &i, a.rowptr[i + 1] - a.rowptr[i], a.col + a.rowptr[i], a.val + a.rowptr[i], INSERT_VALUES));
      }
      PetscCall(Assemble(A));
      PetscCall(Assemble(B));
      PetscCall(CheckProducts(ctx, A, B, "MatResetPreallocation + reassembly", need));
      ctx->uncounted = PETSC_FALSE;
    }
    /* MatStoreValues / MatRetrieveValues (what SNES's Jacobian reuse does): the values go back without MatSetValues */
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
    PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
    PetscCall(MatStoreValues(A));
    PetscCall(MatStoreValues(B));
    PetscCall(MatScale(A, 2.0));
    PetscCall(MatScale(B, 2.0));
    PetscCall(CheckProducts(ctx, A, B, "MatStoreValues + MatScale", need));
    PetscCall(MatRetrieveValues(A));
    PetscCall(MatRetrieveValues(B));
    PetscCall(CheckProducts(ctx, A, B, "MatRetrieveValues", need));
    } /* g_stale */
    /* new storage settings after assembly (MatSetFromOptions again, under a prefix): rebuilt at the next product */
    if (need && g_core) {
      PetscCall(MatSetOptionsPrefix(A, "re_"));
      PetscCall(PetscOptionsInsertString(NULL, "-re_mat_ellr_threads_per_row 2 -re_mat_ellr_slice_height 3 -re_mat_ellr_sort true -re_mat_ellr_max_fill 0"));
      PetscCall(MatSetFromOptions(A));
      PetscCall(ClearOptionSet("-re_mat_ellr_threads_per_row 2 -re_mat_ellr_slice_height 3 -re_mat_ellr_sort true -re_mat_ellr_max_fill 0"));
      PetscCall(CheckProducts(ctx, A, B, "new settings after assembly", need));
    }
    PetscCall(MatDestroy(&D));
    PetscCall(MatDestroy(&E));
    if (g_coo) PetscCall(RunCOO(ctx, cs, icase, &a, type, need));
    if (g_prealloc) PetscCall(RunPrealloc(ctx, cs, icase, &a, type, need));
    if (g_life) PetscCall(RunLifecycle(ctx, cs, &a, type, need, basetype));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(FreeCSR(&a));
  PetscFunctionReturn(0);
}

/* Inserts an option set into the global database; ClearOptionSet removes its keys again. */
static PetscErrorCode ClearOptionSet(const char *set)
{
  char  *copy, *tok, *save = NULL;
  PetscFunctionBeginUser;
  PetscCall(PetscStrallocpy(set, &copy));
  for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
    if (tok[0] == '-' && (tok[1] < '0' || tok[1] > '9')) PetscCall(PetscOptionsClearValue(NULL, tok));
  PetscCall(PetscFree(copy));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char     *casesel[32], *typesel[8];
  PetscInt  ncasesel = 32, ntypesel = 8, optsel[64], noptsel = 64, totalchecks = 0, totalfail = 0;
  PetscBool hascases, hastypes, hasopts, list = PETSC_FALSE, hasmaxfill, hascmdbackend;
  char      cmdbackend[16];
  Ctx       ctx = {1e-12, PETSC_FALSE, NULL, 0, 0, PETSC_FALSE, PETSC_TRUE};
  char      group[16] = "all";
  PetscBool fail_exit = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "diff_aij options", "diff_aij");
  PetscCall(PetscOptionsStringArray("-cases", "cases to run", "diff_aij.c", casesel, &ncasesel, &hascases));
  PetscCall(PetscOptionsStringArray("-types", "matrix types", "diff_aij.c", typesel, &ntypesel, &hastypes));
  PetscCall(PetscOptionsIntArray("-optsets", "option sets (indices)", "diff_aij.c", optsel, &noptsel, &hasopts));
  PetscCall(PetscOptionsReal("-tol", "relative tolerance", "diff_aij.c", ctx.tol, &ctx.tol, NULL));
  PetscCall(PetscOptionsBool("-verbose", "print every check", "diff_aij.c", ctx.verbose, &ctx.verbose, NULL));
  PetscCall(PetscOptionsBool("-list", "list cases and option sets", "diff_aij.c", list, &list, NULL));
  PetscCall(PetscOptionsString("-group", "states to run: core, stale or all", "diff_aij.c", group, group, sizeof(group), NULL));
  PetscCall(PetscOptionsBool("-fail_exit", "exit with status 1 when a check fails", "diff_aij.c", fail_exit, &fail_exit, NULL));
  PetscCall(PetscOptionsBool("-inplace_factor", "factor in place (MatLUFactor, MatILUFactor) in the lifecycle group", "diff_aij.c", ctx.inplace, &ctx.inplace, NULL));
  PetscOptionsEnd();
  {
    const char *groups[] = {"core", "stale", "coo", "prealloc", "lifecycle"};
    PetscBool   on[5], isall, any = PETSC_FALSE;
    PetscCall(PetscStrcmp(group, "all", &isall));
    for (int k = 0; k < 5; k++) {
      PetscCall(PetscStrcmp(group, groups[k], &on[k]));
      if (isall) on[k] = PETSC_TRUE;
      any = (PetscBool)(any || on[k]);
    }
    PetscCheck(any, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-group %s: use core, stale, coo, prealloc, lifecycle or all", group);
    g_core     = on[0];
    g_stale    = on[1];
    g_coo      = on[2];
    g_prealloc = on[3];
    g_life     = on[4];
  }
  if (!hascases) ncasesel = 0;
  if (!hastypes) {
    ntypesel = 2;
    PetscCall(PetscStrallocpy(MATELLR, &typesel[0]));
    PetscCall(PetscStrallocpy(MATPELLR, &typesel[1]));
  }
  if (!hasopts) {
    noptsel = NOPTSETS;
    for (PetscInt k = 0; k < NOPTSETS; k++) optsel[k] = k;
  }
  if (list) {
    for (PetscInt c = 0; c < NCASES; c++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "case %s %" PetscInt_FMT "x%" PetscInt_FMT "\n", cases[c].name, cases[c].M, cases[c].N));
    for (PetscInt k = 0; k < NOPTSETS; k++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "optset %" PetscInt_FMT ": %s\n", k, optsets[k][0] ? optsets[k] : "(defaults)"));
    PetscCall(PetscFinalize());
    return 0;
  }
  /* Full-width ELLPACK-R of the power-law and dense-row cases exceeds the default max fill on purpose
     (run.sh tests that refusal separately): those cases run with -mat_ellr_max_fill 0 (no limit), unless
     the command line gives -mat_ellr_max_fill. Option sets that pad on purpose (large T or slices on tiny
     matrices) carry -mat_ellr_max_fill 0 themselves; the others run with the default limit. */
  PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_ellr_max_fill", &hasmaxfill));
  /* -mat_ellr_backend of the command line (run.sh's ENGINE): an option set that names the backend itself clears the
     key afterwards, so the command line's value is put back after each set */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_ellr_backend", cmdbackend, sizeof(cmdbackend), &hascmdbackend));

  for (PetscInt c = 0; c < NCASES; c++) {
    PetscBool run = (PetscBool)(ncasesel == 0);
    for (PetscInt s = 0; s < ncasesel; s++) {
      PetscBool eq;
      PetscCall(PetscStrcmp(casesel[s], cases[c].name, &eq));
      if (eq) run = PETSC_TRUE;
    }
    if (!run) continue;
    for (PetscInt t = 0; t < ntypesel; t++) {
      for (PetscInt o = 0; o < noptsel; o++) {
        char        label[512];
        const char *set;
        PetscCheck(optsel[o] >= 0 && optsel[o] < NOPTSETS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-optsets: no option set %" PetscInt_FMT, optsel[o]);
        set = optsets[optsel[o]];
        PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s [%s]", cases[c].name, typesel[t], set[0] ? set : "defaults"));
        ctx.label   = label;
        ctx.nchecks = ctx.nfail = 0;
        if (cases[c].irregular && !hasmaxfill) PetscCall(PetscOptionsSetValue(NULL, "-mat_ellr_max_fill", "0"));
        PetscCall(PetscOptionsInsertString(NULL, set));
        PetscCall(RunCombo(&ctx, &cases[c], c, typesel[t]));
        PetscCall(ClearOptionSet(set));
        if (hascmdbackend) PetscCall(PetscOptionsSetValue(NULL, "-mat_ellr_backend", cmdbackend));
        if (cases[c].irregular && !hasmaxfill) PetscCall(PetscOptionsClearValue(NULL, "-mat_ellr_max_fill"));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s: %" PetscInt_FMT " checks, %" PetscInt_FMT " failed\n", ctx.nfail ? "FAIL" : "ok", label, ctx.nchecks, ctx.nfail));
        totalchecks += ctx.nchecks;
        totalfail += ctx.nfail;
      }
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "diff_aij: %" PetscInt_FMT " checks, %" PetscInt_FMT " failed\n", totalchecks, totalfail));
  for (PetscInt s = 0; s < ncasesel; s++) PetscCall(PetscFree(casesel[s]));
  for (PetscInt t = 0; t < ntypesel; t++) PetscCall(PetscFree(typesel[t]));
  PetscCall(PetscFinalize());
  return totalfail && fail_exit ? 1 : 0;
}
