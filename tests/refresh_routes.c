static char help[] = "Regression: every route by which AIJ may reallocate or free its arrays after the storage was made and\n\
refreshed; products against MATAIJ after each.\n\
Options:\n\
  -type <ellrt>      matrix type tested (aij: the harness against itself)\n\
  -n <300>           grid points per side of the 2D 5-point stencil (n^2 rows)\n\
  -pinned <false>    true: also require -mat_view ::ascii_info to report the host CSR page-locked (no storage does now)\n";
/*
   Each step below makes the storage current (two value refreshes by MatSetValues on the preallocated pattern, a
   product after each), then takes one route by which AIJ may reallocate or free its arrays:
     a new nonzero by MatSetValues with MAT_NEW_NONZERO_ALLOCATION_ERR false (on two ranks: into the diagonal block,
     the off-diagonal block and, at assembly, another process's diagonal block); MatResetPreallocation (one rank, as
     in diff_aij); MatShift with missing diagonal entries (one rank); MatZeroRows and MatZeroRowsColumns with a
     diagonal, into empty rows;
     a second MatSetPreallocationCOO (on a matrix assembled by COO and refreshed by MatSetValuesCOO); the XAIJ preallocation again;
     MatResetHash (one rank, PETSc 3.26); the new nonzero on one rank after MatSetOption(MAT_SORTED_FULL) true and false
     (AIJ installs its own insertion then, as under DMCreateMatrix());
   and compares MatMult and MatMultTranspose with MATAIJ's (the same calls; for COO, the same entries by
   MatSetValues).  Each product must raise the plugin's product counter.  One line per check, "ok" or "FAIL".
   The last route: a new nonzero through AIJ's own insertion put in the matrix's ops (as a PETSc routine calling
   MatSetValues_SeqAIJ directly would), after which the next products must be right (the storage rebuilt from AIJ's
   new arrays).
*/
#include <petscellr.h>
#include <petsc/private/matimpl.h> /* the negative control swaps A->ops->setvalues */
#include <unistd.h>                /* getpid */

static PetscInt g_fail = 0;

typedef struct {
  Mat      A, B; /* the tested type, MATAIJ */
  PetscInt n;    /* grid side */
  PetscInt pass; /* changes each refresh's values */
  PetscBool coo; /* assembled by COO */
  int      pinned_check; /* 1: the page-locking must be seen, 0: not checked */
  PetscBool harness;     /* -type aij: the harness against itself, no product counter */
  PetscMPIInt rank, size;
} Ctx;

/* entry (i, j) of the stencil at a given refresh: pattern fixed, values new each pass */
static PetscScalar Value(PetscInt i, PetscInt j, PetscInt pass)
{
  return i == j ? 4.0 + 0.001 * (PetscScalar)(i % 97) + 0.1 * (PetscScalar)pass : -1.0 - 0.0001 * (PetscScalar)((i + j + pass) % 89);
}

/* The pattern of the current route: the full stencil, no diagonal entry in rows r % 7 == 3 (MatShift inserts them),
   or rows r % 11 == 5 empty (MatZeroRows/MatZeroRowsColumns with a diagonal insert into them). */
typedef enum { GAP_NONE, GAP_DIAGONAL, GAP_ROWS } Gap;
static Gap g_gap = GAP_NONE;

static PetscBool Stored(PetscInt r, PetscInt col)
{
  if (g_gap == GAP_ROWS) return (PetscBool)(r % 11 != 5);
  if (g_gap == GAP_DIAGONAL) return (PetscBool)(r != col || r % 7 != 3);
  return PETSC_TRUE;
}

static PetscErrorCode SetStencil(Mat M, PetscInt n, PetscInt pass)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(M, &lo, &hi));
  for (PetscInt r = lo; r < hi; r++) {
    PetscInt    gi = r / n, gj = r % n, c[5], k = 0;
    PetscScalar v[5];
    if (gi > 0) c[k++] = r - n;
    if (gj > 0) c[k++] = r - 1;
    c[k++] = r;
    if (gj < n - 1) c[k++] = r + 1;
    if (gi < n - 1) c[k++] = r + n;
    for (PetscInt q = 0; q < k; q++) v[q] = Value(r, c[q], pass);
    for (PetscInt q = 0; q < k; q++)
      if (Stored(r, c[q])) PetscCall(MatSetValues(M, 1, &r, 1, &c[q], &v[q], INSERT_VALUES));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Assemble(Mat M)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode Preallocate(Mat M)
{
  PetscFunctionBeginUser;
  PetscCall(MatSeqAIJSetPreallocation(M, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(M, 5, NULL, 2, NULL));
  PetscFunctionReturn(0);
}

/* The stencil's rows lo..hi-1 as COO entries at a given pass; extra: one more entry per row, (r, r + 2n + 3 mod N). */
static PetscErrorCode StencilCOO(PetscInt n, PetscInt lo, PetscInt hi, PetscInt pass, PetscBool extra, PetscInt *k, PetscInt **ci, PetscInt **cj, PetscScalar **cv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(6 * (hi - lo), ci, 6 * (hi - lo), cj, 6 * (hi - lo), cv));
  *k = 0;
  for (PetscInt r = lo; r < hi; r++) {
    PetscInt gi = r / n, gj = r % n, nb[6], m = 0;
    if (gi > 0) nb[m++] = r - n;
    if (gj > 0) nb[m++] = r - 1;
    nb[m++] = r;
    if (gj < n - 1) nb[m++] = r + 1;
    if (gi < n - 1) nb[m++] = r + n;
    if (extra && r + 2 * n + 3 < n * n) nb[m++] = r + 2 * n + 3;
    for (PetscInt q = 0; q < m; q++) {
      if (!Stored(r, nb[q])) continue;
      (*ci)[*k] = r;
      (*cj)[*k] = nb[q];
      (*cv)[*k] = Value(r, nb[q], pass);
      (*k)++;
    }
  }
  PetscFunctionReturn(0);
}

/* coo: assembled by MatSetPreallocationCOO + MatSetValuesCOO (its value refreshes then by MatSetValuesCOO) */
static PetscErrorCode Create(MatType type, PetscInt n, PetscBool coo, Mat *M)
{
  PetscInt lo, hi, m = PETSC_DECIDE, N = n * n;

  PetscFunctionBeginUser;
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &m, &N));
  PetscCallMPI(MPI_Scan(&m, &hi, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  lo = hi - m;
  PetscCall(MatCreate(PETSC_COMM_WORLD, M));
  PetscCall(MatSetSizes(*M, m, m, N, N));
  PetscCall(MatSetType(*M, type));
  PetscCall(MatSetFromOptions(*M));
  if (coo) {
    PetscInt     k, *ci, *cj;
    PetscScalar *cv;
    PetscCall(StencilCOO(n, lo, hi, 0, PETSC_FALSE, &k, &ci, &cj, &cv));
    PetscCall(MatSetPreallocationCOO(*M, k, ci, cj));
    PetscCall(MatSetValuesCOO(*M, cv, INSERT_VALUES));
    PetscCall(PetscFree3(ci, cj, cv));
  } else {
    PetscCall(Preallocate(*M));
    PetscCall(SetStencil(*M, n, 0));
    PetscCall(Assemble(*M));
  }
  PetscFunctionReturn(0);
}

/* MatMult and MatMultTranspose of A against B's; A's product counter must grow on every rank. The tolerance: each
   entry of y sums at most 7 terms of magnitude <= 5.2 |x|max in another order than AIJ's, and |y| is of order |x|
   (x varies from one row to the next, so the stencil does not cancel): 1e-12 leaves a wide margin over 7 eps. */
static PetscErrorCode Check(Ctx *c, const char *what)
{
  Vec       x, y1, y2;
  PetscReal e[2] = {0, 0}, nrm;
  PetscInt  c0, c1, lo, hi;
  int       ran, ran_all;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(c->B, &x, &y1));
  PetscCall(VecDuplicate(y1, &y2));
  PetscCall(VecGetOwnershipRange(x, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(x, i, PetscSinReal(0.37 * (PetscReal)i) + 0.5 * PetscCosReal(1.3 * (PetscReal)i), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  if (!c->harness) PetscCall(MatELLRGetProductCount(c->A, &c0));
  for (int t = 0; t < 2; t++) {
    if (t) {
      PetscCall(MatMultTranspose(c->A, x, y1));
      PetscCall(MatMultTranspose(c->B, x, y2));
    } else {
      PetscCall(MatMult(c->A, x, y1));
      PetscCall(MatMult(c->B, x, y2));
    }
    PetscCall(VecAXPY(y1, -1.0, y2));
    PetscCall(VecNorm(y1, NORM_INFINITY, &e[t]));
    PetscCall(VecNorm(y2, NORM_INFINITY, &nrm));
    e[t] /= nrm;
  }
  if (!c->harness) PetscCall(MatELLRGetProductCount(c->A, &c1));
  ran = c->harness || c1 >= c0 + 2;
  PetscCallMPI(MPIU_Allreduce(&ran, &ran_all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  {
    PetscBool bad = (PetscBool)(e[0] > 1e-12 || e[1] > 1e-12 || !ran_all);
    g_fail += bad;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s %-58s mult %.1e multT %.1e%s\n", bad ? "FAIL" : "ok", what, (double)e[0], (double)e[1], ran_all ? "" : " (not on the plugin's storage on every rank)"));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y1));
  PetscCall(VecDestroy(&y2));
  PetscFunctionReturn(0);
}

/* Whether -mat_view ::ascii_info reports the host CSR page-locked (process 0's diagonal block in parallel). */
static PetscErrorCode ReportsPinned(Ctx *c, PetscBool *pinned)
{
  PetscViewer v;
  char        name[PETSC_MAX_PATH_LEN], line[1024];
  int         found = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscGetTmp(PETSC_COMM_WORLD, name, sizeof(name)));
  PetscCall(PetscStrlcat(name, "/refresh_routes.info.", sizeof(name)));
  {
    char pid[32];
    PetscCall(PetscSNPrintf(pid, sizeof(pid), "%d", (int)getpid()));
    PetscCall(PetscStrlcat(name, pid, sizeof(name)));
  }
  PetscCallMPI(MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, name, &v));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(c->A, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerDestroy(&v));
  if (!c->rank) {
    FILE *f;
    PetscCall(PetscFOpen(PETSC_COMM_SELF, name, "r", &f));
    while (fgets(line, sizeof(line), f))
      if (strstr(line, "host CSR") && strstr(line, "page-locked") && !strstr(line, "not page-locked")) found = 1;
    PetscCall(PetscFClose(PETSC_COMM_SELF, f));
    (void)remove(name);
  }
  PetscCallMPI(MPI_Bcast(&found, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  *pinned = (PetscBool)found;
  PetscFunctionReturn(0);
}

/* A product (the storage built), then two value refreshes on the same pattern, a product after each: page-locks AIJ's
   values on the GPU. */
static PetscErrorCode PinByRefresh(Ctx *c, const char *before)
{
  char what[128];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: assembled", before));
  PetscCall(Check(c, what));
  for (int r = 0; r < 2; r++) {
    c->pass++;
    if (c->coo) {
      PetscInt     lo, hi, k, *ci, *cj;
      PetscScalar *cv;
      PetscCall(MatGetOwnershipRange(c->A, &lo, &hi));
      PetscCall(StencilCOO(c->n, lo, hi, c->pass, PETSC_FALSE, &k, &ci, &cj, &cv));
      PetscCall(MatSetValuesCOO(c->A, cv, INSERT_VALUES));
      PetscCall(PetscFree3(ci, cj, cv));
    } else {
      PetscCall(SetStencil(c->A, c->n, c->pass));
      PetscCall(Assemble(c->A));
    }
    PetscCall(SetStencil(c->B, c->n, c->pass));
    PetscCall(Assemble(c->B));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: value refresh %d", before, r + 1));
    PetscCall(Check(c, what));
  }
  if (c->pinned_check) {
    PetscBool pinned = PETSC_FALSE;
    PetscCall(ReportsPinned(c, &pinned));
    g_fail += !pinned;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s %s: host CSR page-locked before the route\n", pinned ? "ok" : "FAIL", before));
  } else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   %s: page-locking not checked (products not on the GPU)\n", before));
  PetscFunctionReturn(0);
}

/* The stencil's entries with new values into both matrices, assembled, then the products compared. */
static PetscErrorCode Refill(Ctx *c, const char *what)
{
  PetscFunctionBeginUser;
  c->pass++;
  PetscCall(SetStencil(c->A, c->n, c->pass));
  PetscCall(SetStencil(c->B, c->n, c->pass));
  PetscCall(Assemble(c->A));
  PetscCall(Assemble(c->B));
  PetscCall(Check(c, what));
  PetscFunctionReturn(0);
}

/* Both matrices through the same calls. */
#define BOTH(call_A, call_B) \
  do { \
    PetscCall(call_A); \
    PetscCall(call_B); \
  } while (0)

int main(int argc, char **argv)
{
  Ctx            c;
  char           type[64] = "ellrt";
  PetscBool      flg;
  MatELLRBackend be;
  PetscInt       N, lo, hi;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscELLRInitializePackage());
  PetscCall(PetscMemzero(&c, sizeof(c)));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &c.rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &c.size));
  c.n = 300;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &c.n, NULL));
  PetscCheck(c.n >= 4, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT ": give at least 4", c.n);
  N = c.n * c.n;
  {
    char want[16] = "false";
    PetscCall(PetscOptionsGetString(NULL, NULL, "-pinned", want, sizeof(want), &flg));
    PetscCheck(!strcmp(want, "auto") || !strcmp(want, "true") || !strcmp(want, "false"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-pinned %s: give true, false or auto", want);
    /* each route on a fresh pair, B always assembled by MatSetValues: PETSc's own AIJ does not take every sequence of
       routes (3.18.5 with -type aij: MatResetPreallocation after a reallocating insertion aborted in free()), and
       MatSetPreallocationCOO may reorder the index arrays it is given, so they serve one matrix only */
    for (int route = 0; route < 10; route++) {
      static const char *names[] = {"new nonzero", "MatResetPreallocation", "COO", "preallocation again", "MatShift", "MatZeroRows", "MatZeroRowsColumns", "destroy", "MatResetHash", "negative control"};
      if (route == 1 && c.size > 1) continue; /* one process: PETSc's MPIAIJ keeps the old off-diagonal pattern */
      if (route == 4 && c.size > 1) continue; /* one process: MPIAIJ shifts through MatSetValues (route 0's path) */
      if (route == 8 && c.size > 1) continue;                                                               /* one process: MPIAIJ's reset destroys its blocks */
      if (route == 9 && (c.size > 1 || !strcmp(type, MATAIJ) || !strcmp(type, MATSEQAIJ))) continue; /* one process, the plugin's types */
      c.coo = (PetscBool)(route == 2);
      g_gap = route == 4 ? GAP_DIAGONAL : (route == 5 || route == 6) ? GAP_ROWS : GAP_NONE;
      PetscCall(Create(type, c.n, c.coo, &c.A));
      PetscCall(Create(MATAIJ, c.n, PETSC_FALSE, &c.B)); /* MATAIJ by MatSetValues, the reference */
      { /* a matrix without the format (-type aij): the harness against itself */
        MatType f;
        PetscCall(MatELLRGetFormat(c.A, &f));
        c.harness = (PetscBool)(f == NULL);
      }
      if (!c.harness) PetscCall(MatELLRGetBackend(c.A, &be));
      c.pinned_check = !strcmp(want, "true");
      c.pass = 0;
      PetscCall(PinByRefresh(&c, names[route]));
      PetscCall(MatGetOwnershipRange(c.A, &lo, &hi));
      switch (route) {
      case 0: { /* a new nonzero by MatSetValues: AIJ reallocates the row's arrays */
        PetscInt    r = lo, cd = PetscMin(lo + 2 * c.n + 3, hi - 1), co = (hi + 7) % N; /* diagonal block; off-diagonal in parallel */
        PetscScalar v = 0.25;
        BOTH(MatSetOption(c.A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE), MatSetOption(c.B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        if (c.size == 1) { /* as DMCreateMatrix() does: AIJ's MatSetOption installs its own insertion both times */
          BOTH(MatSetOption(c.A, MAT_SORTED_FULL, PETSC_TRUE), MatSetOption(c.B, MAT_SORTED_FULL, PETSC_TRUE));
          BOTH(MatSetOption(c.A, MAT_SORTED_FULL, PETSC_FALSE), MatSetOption(c.B, MAT_SORTED_FULL, PETSC_FALSE));
        }
        BOTH(MatSetValues(c.A, 1, &r, 1, &cd, &v, ADD_VALUES), MatSetValues(c.B, 1, &r, 1, &cd, &v, ADD_VALUES));
        if (c.size > 1) BOTH(MatSetValues(c.A, 1, &r, 1, &co, &v, ADD_VALUES), MatSetValues(c.B, 1, &r, 1, &co, &v, ADD_VALUES));
        if (c.size > 1 && !c.rank) { /* a row another process owns: MPIAIJ inserts it there at assembly */
          PetscInt ro = N - 1, cc = N - 1 - (2 * c.n + 3); /* a column that process owns: into its diagonal block, at assembly */
          BOTH(MatSetValues(c.A, 1, &ro, 1, &cc, &v, ADD_VALUES), MatSetValues(c.B, 1, &ro, 1, &cc, &v, ADD_VALUES));
        }
        BOTH(Assemble(c.A), Assemble(c.B));
        PetscCall(Check(&c, c.size > 1 ? "new nonzeros (diagonal, off-diagonal, other process's row)" : "new nonzero in the diagonal block"));
      } break;
      case 1: /* MatResetPreallocation and the entries again */
        BOTH(MatResetPreallocation(c.A), MatResetPreallocation(c.B));
        PetscCall(Refill(&c, "MatResetPreallocation + assembly"));
        break;
      case 2: { /* COO: a second MatSetPreallocationCOO, one more entry per row, replaces AIJ's arrays */
        PetscInt     k, *ci, *cj;
        PetscScalar *cv;
        PetscCall(StencilCOO(c.n, lo, hi, ++c.pass, PETSC_TRUE, &k, &ci, &cj, &cv));
        PetscCall(MatSetPreallocationCOO(c.A, k, ci, cj));
        PetscCall(MatSetValuesCOO(c.A, cv, INSERT_VALUES));
        PetscCall(PetscFree3(ci, cj, cv));
        PetscCall(StencilCOO(c.n, lo, hi, c.pass, PETSC_TRUE, &k, &ci, &cj, &cv)); /* MatSetPreallocationCOO may reorder them */
        PetscCall(MatDestroy(&c.B)); /* a fresh MATAIJ for the new pattern, preallocated (insertions would reallocate per row) */
        PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, hi - lo, hi - lo, N, N, 6, NULL, 3, NULL, &c.B));
        for (PetscInt q = 0; q < k; q++) PetscCall(MatSetValue(c.B, ci[q], cj[q], cv[q], INSERT_VALUES));
        PetscCall(Assemble(c.B));
        PetscCall(Check(&c, "MatSetPreallocationCOO again, new pattern"));
        PetscCall(PetscFree3(ci, cj, cv));
      } break;
      case 3: /* the XAIJ preallocation again: new arrays, then the entries */
        BOTH(Preallocate(c.A), Preallocate(c.B));
        PetscCall(Refill(&c, "preallocation again + assembly"));
        break;
      case 4: /* MatShift with diagonal entries missing: AIJ preallocates anew and inserts them */
        BOTH(MatShift(c.A, 2.5), MatShift(c.B, 2.5));
        PetscCall(Check(&c, "MatShift inserting missing diagonal entries"));
        break;
      case 5:
      case 6: { /* MatZeroRows / MatZeroRowsColumns with a diagonal: AIJ inserts it into the empty rows */
        PetscInt *rows, nr = 0;
        PetscCall(PetscMalloc1(hi - lo, &rows));
        for (PetscInt r = lo; r < hi; r++)
          if (r % 11 == 5) rows[nr++] = r; /* the empty rows only: PETSc 3.18.5's MatZeroRows_SeqAIJ, having reallocated
                                              for one, writes later full rows through its old pointer (valgrind) */
        BOTH(MatSetOption(c.A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE), MatSetOption(c.B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        if (route == 5) BOTH(MatZeroRows(c.A, nr, rows, 1.5, NULL, NULL), MatZeroRows(c.B, nr, rows, 1.5, NULL, NULL));
        else BOTH(MatZeroRowsColumns(c.A, nr, rows, 1.5, NULL, NULL), MatZeroRowsColumns(c.B, nr, rows, 1.5, NULL, NULL));
        PetscCall(Check(&c, route == 5 ? "MatZeroRows into empty rows" : "MatZeroRowsColumns into empty rows"));
        PetscCall(PetscFree(rows));
      } break;
      case 8: /* MatResetHash (newer PETSc): AIJ frees its arrays, the next assembly allocates new ones */
#if PETSC_VERSION_GE(3, 26, 0)
        BOTH(MatResetHash(c.A), MatResetHash(c.B));
        PetscCall(Refill(&c, "MatResetHash + assembly"));
#else
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok   MatResetHash: not in this PETSc (%d.%d)\n", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR));
#endif
        break;
      case 9: { /* negative control: a new nonzero through AIJ's own insertion, past the type's release */
        Mat            P; /* a plain MATSEQAIJ, for AIJ's MatSetValues */
        Vec            x, y;
        PetscErrorCode ierr;
        PetscInt       r = lo, cd = PetscMin(lo + 2 * c.n + 3, hi - 1);
        PetscScalar    v = 0.25;
        PetscErrorCode (*own)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[], const PetscScalar[], InsertMode) = c.A->ops->setvalues;
        PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 1, 1, 1, NULL, &P));
        BOTH(MatSetOption(c.A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE), MatSetOption(c.B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        c.A->ops->setvalues = P->ops->setvalues;
        ierr                = MatSetValues(c.A, 1, &r, 1, &cd, &v, ADD_VALUES);
        c.A->ops->setvalues = own;
        PetscCall(ierr);
        PetscCall(MatDestroy(&P));
        PetscCall(MatSetValues(c.B, 1, &r, 1, &cd, &v, ADD_VALUES));
        BOTH(Assemble(c.A), Assemble(c.B));
        PetscCall(MatCreateVecs(c.A, &x, &y));
        PetscCall(VecSet(x, 1.0));
        PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
        ierr = MatMult(c.A, x, y);
        PetscCall(PetscPopErrorHandler());
        PetscCall(VecDestroy(&x));
        PetscCall(VecDestroy(&y));
        if (c.pinned_check) {
          g_fail += ierr != PETSC_ERR_PLIB;
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s negative control: arrays moved while page-locked: the next product failed with error %d (want PETSC_ERR_PLIB, %d)\n", ierr == PETSC_ERR_PLIB ? "ok" : "FAIL", (int)ierr, (int)PETSC_ERR_PLIB));
        } else {
          g_fail += ierr != 0;
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-4s negative control: nothing page-locked, nothing to catch: the next product returned %d (want 0)\n", ierr ? "FAIL" : "ok", (int)ierr));
        }
        PetscCall(Check(&c, "negative control: the product after it"));
      } break;
      default: /* destroyed while page-locked */
        break;
      }
      PetscCall(MatDestroy(&c.A));
      PetscCall(MatDestroy(&c.B));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " failed\n", g_fail));
  PetscCall(PetscFinalize());
  return g_fail ? 1 : 0;
}
