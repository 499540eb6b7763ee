/*
  aijellrwarmup.c - cuSPARSE's SpGEMM run once on a small matrix before a process's first MatProduct
  with MATELLR/MATPELLR on the aijcusparse base (-mat_ellr_spgemm_warmup, default true).

  Why: GAMG set-ups with these types (ex1, 27-point Poisson 100^3, smoothed aggregation) stopped now and then inside
  cuSPARSE's own kernel at the first Galerkin product P^T A P: one block of cusparse::reduce_by_key still running,
  the host waiting in cusparseSpGEMM_compute.  It needed lazy module loading (none with CUDA_MODULE_LOADING=EAGER,
  which only the environment can set: CUDA reads it before -dll_append opens this library) and the first run of that
  code in the process.  With these products run once on a 1000-row matrix first, no set-up stopped in 204 runs, 138 of
  them beside control runs without it that stopped 7 times in 17 (doc/performance.md, Solves, "Preconditioners").
  The cause inside cuSPARSE is not established.

  What it costs: two products of 1000 rows, once per process (the ELLRWarmUp event of -log_view: 1% of a GAMG run of
  ex1 100^3, about 0.05-0.1 s); the cuSPARSE code it loads would be loaded by the first real product anyway.
*/
#include "../ellrimpl.h"

#if defined(PETSCELLR_CUSPARSE_BASE)

/* The 27-point Laplacian on an n^3 grid as a MATSEQAIJCUSPARSE matrix (every row length from 8 to 27). */
static PetscErrorCode MatSeqAIJELLRWarmUpMatrix(PetscInt n, Mat *W)
{
  const PetscInt N = n * n * n;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqAIJCUSPARSE(PETSC_COMM_SELF, N, N, 27, NULL, W));
  for (PetscInt row = 0; row < N; row++) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n);
    PetscInt       cols[27], nc = 0;
    PetscScalar    vals[27];
    for (PetscInt dk = -1; dk <= 1; dk++)
      for (PetscInt dj = -1; dj <= 1; dj++)
        for (PetscInt di = -1; di <= 1; di++) {
          if (i + di < 0 || i + di >= n || j + dj < 0 || j + dj >= n || k + dk < 0 || k + dk >= n) continue;
          cols[nc]   = (i + di) + n * ((j + dj) + n * (k + dk));
          vals[nc++] = (di || dj || dk) ? -1.0 : 26.0;
        }
    PetscCall(MatSetValues(*W, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*W, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*W, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/*
  Called by the symbolic phase of a product C of a matrix of these types (any but C = A B with B dense on the
  ELLPACK-R storage; most are sparse x sparse, and a few others pay the warm-up without needing it): the first time in the
  process, unless that matrix's settings say -mat_ellr_spgemm_warmup false, W2 = W W and W2^T W W2 with W the
  27-point Laplacian on a 10^3 grid (rows of up to 27, 125, 343 and 1000 entries along the way; the last
  product is half full, 512000 nonzeros), all plain aijcusparse
  matrices: the SpGEMM calls of aijcusparse's AB and PtAP.
*/
PetscErrorCode MatSeqAIJELLRWarmUpSpGEMM(Mat C)
{
  static PetscBool done = PETSC_FALSE;
  Mat_Product     *p    = C->product;
  Mat_SeqAIJELLR  *e    = NULL;
  Mat              W, W2, W2tWW2;

  PetscFunctionBegin;
  if (done || !p) PetscFunctionReturn(0);
  if (p->A) e = MatSeqAIJELLRGetData(p->A);
  if (!e && p->B) e = MatSeqAIJELLRGetData(p->B);
  if (!e && p->C) e = MatSeqAIJELLRGetData(p->C);
  if (!e || !e->cusparse || !e->settings.spgemm_warmup) PetscFunctionReturn(0);
  done = PETSC_TRUE;
  PetscCall(PetscLogEventBegin(MAT_ELLRWarmUp, C, 0, 0, 0));
  PetscCall(MatSeqAIJELLRWarmUpMatrix(10, &W));
  PetscCall(MatMatMult(W, W, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &W2));
  PetscCall(MatPtAP(W, W2, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &W2tWW2));
  PetscCall(MatDestroy(&W2tWW2));
  PetscCall(MatDestroy(&W2));
  PetscCall(MatDestroy(&W));
  PetscCall(PetscLogEventEnd(MAT_ELLRWarmUp, C, 0, 0, 0));
  PetscCall(PetscInfo(C, "cuSPARSE's SpGEMM run once on a 1000-row matrix before the first sparse product of a petsc-ellr matrix (-mat_ellr_spgemm_warmup false: not)\n"));
  PetscFunctionReturn(0);
}

#endif
