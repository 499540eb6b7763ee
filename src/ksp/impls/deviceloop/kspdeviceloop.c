/*
  kspdeviceloop.c - the shared PETSc-side driver of kspdeviceloop.h.
*/
#include "kspdeviceloop.h"

/* The mark a loop puts on a PC whose Jacobi its scaling was made for (named after the loop's KSP: a PC may serve
   several): PCSetType() drops a PC's composed functions, so a missing mark is a new Jacobi (set up afresh, whatever
   the matrix).  Taken off when the loop goes (-checkfunctionlist). */
static PetscErrorCode KSPDeviceLoopJacobiMarkFunction(PC pc)
{
  (void)pc;
  return PETSC_SUCCESS;
}

static PetscErrorCode KSPDeviceLoopJacobiForget(KSPDeviceLoop *L)
{
  PetscFunctionBegin;
  L->d_jacobi = PETSC_FALSE;
  if (L->d_pc) PetscCall(PetscObjectComposeFunction((PetscObject)L->d_pc, L->d_mark, NULL));
  PetscCall(PCDestroy(&L->d_pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopDestroy(KSPDeviceLoop *L)
{
  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopJacobiForget(L));
  PetscCall(VecDestroy(&L->d));
#if defined(KSP_DEVICELOOP_CUDA)
  if (L->cu) PetscCheck(!cgloop_cuda_destroy(L->cu), PETSC_COMM_SELF, PETSC_ERR_GPU, "Releasing the %s loop's GPU resources failed", L->name);
  L->cu   = NULL;
  L->yoff = NULL; /* the context's */
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- which loop runs */

static PetscErrorCode KSPDeviceLoopVecOnGPU(Vec v, PetscBool *gpu)
{
  PetscFunctionBegin;
  *gpu = PETSC_FALSE;
#if defined(KSP_DEVICELOOP_CUDA)
  {
    PetscBool bound = PETSC_FALSE;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)v, gpu, VECSEQCUDA, VECMPICUDA, ""));
    if (*gpu) PetscCall(VecBoundToCPU(v, &bound));
    if (bound) *gpu = PETSC_FALSE;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* NCCL's set-up started at KSPSetFromOptions() where the solves on several processes will sum their reductions
   through it: the DM's vectors, the operator's or the solution are CUDA's.  It takes about a second in NCCL's
   background; started here it overlaps what the program does before its first solve (a DM's or a SNES's assembly of
   the operator, which comes after KSPSetFromOptions()), instead of that solve running PETSc's loop beside it.  A
   matrix of our types starts it when made; then this finds it started.  Nothing waits here.  Collective: the types
   asked are the same on every rank. */
PetscErrorCode KSPDeviceLoopStartNCCL(KSP ksp)
{
  PetscFunctionBegin;
#if defined(KSP_DEVICELOOP_CUDA)
  {
    MPI_Comm    comm = PetscObjectComm((PetscObject)ksp);
    PetscMPIInt size;
    PetscBool   cuda = PETSC_FALSE, started;
    VecType     vtype = NULL;

    PetscCallMPI(MPI_Comm_size(comm, &size));
    if (size == 1) PetscFunctionReturn(PETSC_SUCCESS);
    if (ksp->dm) PetscCall(DMGetVecType(ksp->dm, &vtype));
    if (vtype) PetscCall(PetscStrInList(vtype, VECCUDA "," VECSEQCUDA "," VECMPICUDA, ',', &cuda));
    if (!cuda && ksp->pc && ksp->pc->mat) {
      PetscBool bound = PETSC_FALSE;

      PetscCall(MatGetVecType(ksp->pc->mat, &vtype));
      PetscCall(PetscStrInList(vtype, VECCUDA "," VECSEQCUDA "," VECMPICUDA, ',', &cuda));
      if (cuda) PetscCall(MatBoundToCPU(ksp->pc->mat, &bound));
      if (bound) cuda = PETSC_FALSE;
    }
    if (!cuda && ksp->vec_sol) PetscCall(KSPDeviceLoopVecOnGPU(ksp->vec_sol, &cuda));
    if (!cuda) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatELLRCommNCCLStart(comm, &started));
    if (started) PetscCall(PetscInfo(ksp, "NCCL's set-up for the loop's reductions on %d processes (CUDA vectors) started\n", size));
  }
#else
  (void)ksp;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the preconditioner as the passes see it: none, a diagonal, or the caller's */
PetscErrorCode KSPDeviceLoopPCKind(KSP ksp, Mat A, cgloop_pc *kind)
{
  MatNullSpace nsp = NULL;
  PetscBool    none, jacobi, pbjacobi;
  PetscInt     bs = 0;
  Mat          P;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &jacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCPBJACOBI, &pbjacobi));
  if (pbjacobi) {
    PetscCall(PCGetOperators(ksp->pc, NULL, &P));
    PetscCall(MatGetBlockSize(P, &bs));
  }
  /* point-block Jacobi over blocks of one is a diagonal too (z_i = d_i r_i, the same product); larger blocks PETSc applies */
  if (pbjacobi && bs == 1) jacobi = PETSC_TRUE;
  PetscCall(MatGetNullSpace(A, &nsp)); /* KSP_PCApply() and KSP_PCApplyBAorAB() remove it */
  *kind = nsp ? CGLOOP_PC_GENERAL : (none ? CGLOOP_PC_NONE : (jacobi ? CGLOOP_PC_DIAGONAL : CGLOOP_PC_GENERAL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopChoosePath(KSPDeviceLoop *L, KSP ksp, Mat A, cgloop_pc pc, const char *own, const char **why)
{
  PetscMPIInt size;
  PetscBool   gpu;

  PetscFunctionBegin;
  *why    = NULL;
  L->path = KSP_DEVICELOOP_PETSC;
#if defined(KSP_DEVICELOOP_CUDA)
  L->nccl = NULL;
  PetscCall(PetscMemzero(&L->halo, sizeof(L->halo)));
#endif
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  if (ksp->calc_sings) *why = "extreme singular values are estimated";
  else if (ksp->transpose_solve) *why = "a transpose solve";
  else if (ksp->chknorm >= 0) *why = "norms checked only after a number of iterations";
  else if (ksp->pc_side != PC_LEFT) *why = "preconditioning is not on the left";
  else *why = own;
  if (*why) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPDeviceLoopVecOnGPU(ksp->vec_sol, &gpu));
  if (size > 1) { /* the vectors' type is the same on every rank: so is every answer below */
    if (!gpu) *why = "several processes with vectors on the host (the reductions are MPI's)";
#if defined(KSP_DEVICELOOP_CUDA)
    else {
      PetscBool pending;

      PetscCall(MatELLRMPIPrepare(A)); /* the first product's build, while NCCL's connection may still run */
      if (ksp->nwork > 0 && ksp->vec_rhs) { /* a streamed diagonal block tunes with the solve's vectors (as below) */
        Mat_ELLR *e = NULL;

        PetscCall(MatELLRGetData(A, &e));
        if (e) PetscCall(MatELLRSeqTune(A, e, ksp->vec_rhs, ksp->work[0]));
      }
      PetscCall(MatELLRCommNCCL(PetscObjectComm((PetscObject)ksp), &L->nccl, &pending));
      if (pending) *why = "several processes, NCCL's set-up not done yet (its all-reduce serves the solves after it; -ellr_nccl_wait waits)";
      else if (!L->nccl) *why = "several processes without NCCL (-info says why; the reductions are MPI's)";
      else {
        PetscBool graph = PETSC_FALSE;

        /* the graph holds the MPI product where it is ours with NCCL's exchange, else PETSc's product runs between
           the passes (the same answer on every rank) */
        if (pc != CGLOOP_PC_GENERAL) PetscCall(MatELLRHaloLoopGet(A, ksp->vec_sol, L->fold_offdiag, &L->halo, &graph));
        L->path = graph ? KSP_DEVICELOOP_GRAPH : KSP_DEVICELOOP_EAGER;
      }
    }
#endif
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  L->path = gpu ? KSP_DEVICELOOP_EAGER : KSP_DEVICELOOP_HOST;
#if defined(KSP_DEVICELOOP_CUDA)
  if (gpu && pc != CGLOOP_PC_GENERAL) {
    Mat_ELLR *e = NULL;
    PetscBool cusparse;

    PetscCall(MatELLRGetData(A, &e));
    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &cusparse));
    /* the product the graph holds: the storage's kernel, or cuSPARSE on aijcusparse's own device CSR */
    if (e && !e->mpi) {
      PetscCall(MatELLRSeqPrepare(A, e, PETSC_FALSE));
      /* a streamed storage tunes with vectors of the solve (b read, a work vector written before the iteration
         does), not with two of its own: the graph's products call the engine directly */
      if (ksp->nwork > 0 && ksp->vec_rhs) PetscCall(MatELLRSeqTune(A, e, ksp->vec_rhs, ksp->work[0]));
      if (e->backend == MAT_ELLR_BACKEND_CUDA && !MatELLRBoundToCPU(A) && e->dev) L->path = KSP_DEVICELOOP_GRAPH;
    } else if (!e && cusparse && !MatELLRBoundToCPU(A) && sizeof(PetscInt) == sizeof(int)) {
      const PetscScalar *v;

      /* aijcusparse's upload now, as the first product would make it: the diagonal is then read on the GPU */
      PetscCall(MatSeqAIJCUSPARSEGetArrayRead(A, &v));
      PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &v));
      L->path = KSP_DEVICELOOP_GRAPH;
    }
  }
#else
  (void)pc;
  (void)A;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCJACOBI over the diagonal, made by the loop as PETSc's Jacobi makes it (MatGetDiagonal(), VecReciprocal(), VecAbs()
   with -pc_jacobi_abs, zeros made one unless the fix is off or the matrix known SPD), on the GPU where the loop runs
   there: PETSc's own set-up, at the first PCApply() and at each PCSetUp() after it, reads the scaling back to the host
   for its zero check and sends it up again (tens of milliseconds at a few million rows, doc/performance.md).
   The scaling is the one PETSc's Jacobi would hold had it been applied wherever the loop applies its own: made at the
   loop's first use after a set-up of the PC ran (PCSetUp() is called first, as PCApply() calls it): another state or
   another matrix recorded (PCReset() included), or a new Jacobi (PCSetType()); kept otherwise, under
   KSPSetReusePreconditioner() in particular, whatever the matrix and the Jacobi options say now.  PETSc's own is
   read, by applying it to ones, under reuse where the loop holds no scaling for this PC (PETSc's may hold an earlier
   one), with a diagonal scaling of the system and for the other Jacobi types.  Not seen: a Jacobi type changed and
   changed back between two solves under reuse, and a loop's solve followed by PETSc's own loop under reuse on a
   changed matrix (PETSc's Jacobi then makes its scaling from that matrix).  *done says whether L->d is set. */
static PetscErrorCode KSPDeviceLoopJacobi(KSPDeviceLoop *L, KSP ksp, PetscBool *done)
{
  PC                 pc = ksp->pc;
  PetscBool          jacobi, reuse, absolute, fix_zeros, isset, isspd, petsc_own = PETSC_FALSE, same, recorded, invalid;
  PetscErrorCode   (*mark)(PC) = NULL;
  PCJacobiType       type;
  PetscInt           n;
  PetscScalar       *a;
  Mat                P;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCJACOBI, &jacobi));
  if (!jacobi) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCGetReusePreconditioner(pc, &reuse));
  PetscCall(PCJacobiGetType(pc, &type));
#if PETSC_VERSION_LT(3, 26, 0)
  petsc_own = ksp->dscale; /* the system scaled around the solve */
#endif
  if (petsc_own || type != PC_JACOBI_DIAGONAL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCSetUp(pc)); /* as PCApply() first: nothing where nothing changed or under reuse */
  PetscCall(PCGetOperators(pc, NULL, &P));
  if (!L->d_mark[0]) PetscCall(PetscSNPrintf(L->d_mark, sizeof(L->d_mark), "KSPDeviceLoopJacobiScaling_%" PetscInt64_FMT "_C", (PetscInt64)((PetscObject)ksp)->id));
  PetscCall(PetscObjectQueryFunction((PetscObject)pc, L->d_mark, &mark));
  same = (PetscBool)(L->d_jacobi && L->d_pc == pc && mark); /* the Jacobi d was made for */
  /* pc->matstate moves only at a set-up that ran (under reuse too: after PCReset(), a PCSetUp() without reuse), and
     PCSetOperators() with another matrix invalidates it (then PETSc keeps its scaling under reuse) */
  recorded = (PetscBool)(L->d_pmat == ((PetscObject)P)->id && !memcmp(&L->d_matstate, &pc->matstate, sizeof(pc->matstate)));
#if defined(MatStateInvalidate)
  invalid = (PetscBool)(pc->matstate.state == -1);
#else
  invalid = (PetscBool)(pc->matstate == -1);
#endif
  if (same && (recorded || (reuse && invalid))) {
    *done = PETSC_TRUE; /* no set-up since */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse && (!L->d_jacobi || L->d_pc != pc)) PetscFunctionReturn(PETSC_SUCCESS); /* PETSc's, whatever it holds */
  PetscCall(PCJacobiGetUseAbs(pc, &absolute));
  PetscCall(PCJacobiGetFixDiagonal(pc, &fix_zeros));
  PetscCall(MatIsSPDKnown(P, &isset, &isspd));
  if (isset && isspd) fix_zeros = PETSC_FALSE; /* PETSc's rule: no fix where the matrix is known SPD */
  PetscCall(MatGetDiagonal(P, L->d));
  PetscCall(VecReciprocal(L->d)); /* PETSc's own, with its handling of zeros on host and GPU */
  if (absolute) PetscCall(VecAbs(L->d));
  if (fix_zeros) {
    PetscCall(VecGetLocalSize(L->d, &n));
#if defined(KSP_DEVICELOOP_CUDA)
    if (L->path != KSP_DEVICELOOP_HOST) {
      void *stream;

      PetscCall(MatELLRGetStream(&stream)); /* where PETSc's vector kernels go */
      PetscCall(VecCUDAGetArray(L->d, &a));
      KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_jacobi_fix(stream, n, a), "Fixing zeros of Jacobi's scaling");
      PetscCall(VecCUDARestoreArray(L->d, &a));
    } else
#endif
    {
      PetscCall(VecGetArray(L->d, &a));
      cgloop_host_jacobi_fix(n, a);
      PetscCall(VecRestoreArray(L->d, &a));
    }
  }
  if (L->d_pc != pc) {
    PetscCall(KSPDeviceLoopJacobiForget(L));
    PetscCall(PetscObjectReference((PetscObject)pc));
    L->d_pc = pc;
  }
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, L->d_mark, KSPDeviceLoopJacobiMarkFunction));
  L->d_jacobi   = PETSC_TRUE;
  L->d_pmat     = ((PetscObject)P)->id;
  L->d_matstate = pc->matstate;
  *done         = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a diagonal preconditioner's scaling d, so that z = d .* r has PCApply()'s bits: PCJACOBI's made by the loop (above),
   any other the preconditioner's action on ones (W: a work vector) */
PetscErrorCode KSPDeviceLoopDiagonal(KSPDeviceLoop *L, KSP ksp, Vec R, Vec W)
{
  PetscBool done;

  PetscFunctionBegin;
  if (L->d) { /* made for other vectors (a KSPReset() and a new size, or another vector type): made again */
    PetscInt  nd, nr;
    PetscBool same;

    PetscCall(VecGetLocalSize(L->d, &nd));
    PetscCall(VecGetLocalSize(R, &nr));
    PetscCall(PetscObjectTypeCompare((PetscObject)L->d, ((PetscObject)R)->type_name, &same));
    if (nd != nr || !same) PetscCall(VecDestroy(&L->d));
  }
  if (!L->d) {
    PetscCall(VecDuplicate(R, &L->d));
    L->d_jacobi = PETSC_FALSE;
  }
  PetscCall(KSPDeviceLoopJacobi(L, ksp, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecSet(W, 1.0));
  PetscCall(KSP_PCApply(ksp, W, L->d));
  L->d_jacobi = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopPCFailedReason(KSP ksp, PCFailedReason *reason)
{
  PCFailedReason local;
  PetscMPIInt    mine, all;

  PetscFunctionBegin;
  PetscCall(PCGetFailedReason(ksp->pc, &local));
  mine = (PetscMPIInt)local;
  PetscCallMPI(MPIU_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)ksp)));
  *reason = (PCFailedReason)all;
  PetscCall(PCSetFailedReason(ksp->pc, *reason)); /* as PETSc's reduction leaves it on every process */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the host's reading of the recorded norms */

/* Replays iterations done+1 .. st->it through the history, the monitors and the convergence test, then turns a stop
   of the passes into the method's reason.  *finished when the solve is over. */
static PetscErrorCode KSPDeviceLoopDigest(KSPDeviceLoop *L, const cgloop_state *st, PetscInt *done, PetscBool *finished)
{
  KSP ksp = L->ksp;

  PetscFunctionBegin;
  *finished = PETSC_FALSE;
  for (PetscInt j = *done + 1; j <= (PetscInt)st->it; j++) {
    const PetscReal dp = (PetscReal)st->hist[(j - 1) % CGLOOP_RING];

    *done    = j;
    ksp->its = j;
    if (PetscIsInfOrNanReal(dp)) { /* as KSPCheckNorm(), which KSPBCGS calls before counting the iteration */
      PCFailedReason pcreason;

      if (!L->nan_norm_counts) ksp->its = j - 1;
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve has not converged due to Nan or Inf norm");
      PetscCall(KSPDeviceLoopPCFailedReason(ksp, &pcreason));
      ksp->reason = pcreason ? KSP_DIVERGED_PC_FAILED : KSP_DIVERGED_NANORINF;
      ksp->rnorm  = dp;
      *finished   = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    ksp->rnorm = dp;
    PetscCall(KSPLogResidualHistory(ksp, dp));
    PetscCall(KSPMonitor(ksp, j, dp));
    PetscCall((*ksp->converged)(ksp, j, dp, &ksp->reason, ksp->cnvP));
    if (ksp->reason) {
      *finished = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  switch ((cgloop_stop)st->stop) {
  case CGLOOP_RUNNING:
    PetscFunctionReturn(PETSC_SUCCESS);
  case CGLOOP_STOP_MAXIT: /* the iterations done: the methods' do-while loops run one even with max_it 0 */
    ksp->its    = (PetscInt)st->it;
    ksp->reason = KSP_DIVERGED_ITS;
    break;
  case CGLOOP_STOP_TEST: /* the GPU's copy of the test stopped where the host's did not: never expected */
    SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "The GPU's convergence test stopped at iteration %lld, the host's did not", st->stop_it);
  default:
    PetscCall((*L->stopped)(ksp, st));
  }
  *finished = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the arrays */

PetscBool KSPDeviceLoopLive(KSPDeviceLoop *L)
{
  return (PetscBool)!(L->st && L->st->stop);
}

PetscErrorCode KSPDeviceLoopTakeArrays(KSPDeviceLoop *L)
{
  PetscFunctionBegin;
  PetscCheck(!L->held, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The %s loop's arrays are held already", L->name);
  if (L->path == KSP_DEVICELOOP_HOST) {
    for (PetscInt k = 0; k < L->nvec; k++) PetscCall(VecGetArray(L->vec[k], &L->arr[k]));
    if (L->shape.pc == CGLOOP_PC_DIAGONAL) PetscCall(VecGetArrayRead(L->d, &L->darr));
  }
#if defined(KSP_DEVICELOOP_CUDA)
  else {
    for (PetscInt k = 0; k < L->nvec; k++) PetscCall(VecCUDAGetArray(L->vec[k], &L->arr[k]));
    if (L->shape.pc == CGLOOP_PC_DIAGONAL) PetscCall(VecCUDAGetArrayRead(L->d, &L->darr));
  }
#endif
  L->held = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopReleaseArrays(KSPDeviceLoop *L)
{
  PetscFunctionBegin;
  PetscCheck(L->held, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The %s loop's arrays are not held", L->name);
  if (L->path == KSP_DEVICELOOP_HOST) {
    if (L->shape.pc == CGLOOP_PC_DIAGONAL) PetscCall(VecRestoreArrayRead(L->d, &L->darr));
    for (PetscInt k = L->nvec - 1; k >= 0; k--) PetscCall(VecRestoreArray(L->vec[k], &L->arr[k]));
  }
#if defined(KSP_DEVICELOOP_CUDA)
  else {
    if (L->shape.pc == CGLOOP_PC_DIAGONAL) PetscCall(VecCUDARestoreArrayRead(L->d, &L->darr));
    for (PetscInt k = L->nvec - 1; k >= 0; k--) PetscCall(VecCUDARestoreArray(L->vec[k], &L->arr[k]));
  }
#endif
  L->held = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopMult(KSPDeviceLoop *L, PetscInt in, PetscInt out)
{
  PetscFunctionBegin;
#if defined(KSP_DEVICELOOP_CUDA)
  if (L->path == KSP_DEVICELOOP_GRAPH) {
    if (L->halo.halo && L->yoff) PetscCall(MatELLRCheckStatus(ellr_halo_mult_apart(L->halo.halo, L->halo.nccl, L->halo.diag, L->halo.offdiag, L->arr[in], L->halo.ghosts, L->arr[out], L->yoff, cgloop_cuda_stream(L->cu)), "The MPI product of the loop with NCCL's exchange (NCCL_DEBUG=WARN says more)"));
    else if (L->halo.halo) PetscCall(MatELLRCheckStatus(ellr_halo_mult(L->halo.halo, L->halo.nccl, L->halo.diag, L->halo.offdiag, L->arr[in], NULL, L->halo.ghosts, L->arr[out], cgloop_cuda_stream(L->cu)), "The MPI product of the loop with NCCL's exchange (NCCL_DEBUG=WARN says more)"));
    else if (L->e) PetscCall(MatELLRCheckStatus(ellr_cuda_mult(L->e->dev, L->arr[in], NULL, L->arr[out], 0, cgloop_cuda_stream(L->cu)), "The ELLPACK-R product of the loop"));
    else KSPDeviceLoopCheckCUDA(L->ksp, cgloop_cuda_csr_product(L->cu, (int)L->nrows, (int)L->ncols, (int)L->nnz, L->rowptr, L->colidx, L->vals, L->arr[in], L->arr[out]), "The cuSPARSE product");
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  if (!KSPDeviceLoopLive(L)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPDeviceLoopReleaseArrays(L));
  PetscCall(KSP_MatMult(L->ksp, L->A, L->vec[in], L->vec[out]));
  PetscCall(KSPDeviceLoopTakeArrays(L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the passes on host arrays */

static PetscErrorCode KSPDeviceLoopHost(KSPDeviceLoop *L, cgloop_state *st)
{
  PetscInt  done     = 0;
  PetscBool finished = PETSC_FALSE;

  PetscFunctionBegin;
  L->st = st;
  while (!finished) {
    PetscCall(KSPDeviceLoopTakeArrays(L));
    PetscCall((*L->iterate)(L));
    PetscCall(KSPDeviceLoopReleaseArrays(L));
    PetscCall(KSPDeviceLoopDigest(L, st, &done, &finished));
  }
  L->st = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the passes on the GPU */
#if defined(KSP_DEVICELOOP_CUDA)
/* the graph's product: the storage's, or aijcusparse's device CSR, held with the arrays for the whole loop */
static PetscErrorCode KSPDeviceLoopProduct(KSPDeviceLoop *L, PetscBool get)
{
  PetscFunctionBegin;
  if (L->path != KSP_DEVICELOOP_GRAPH || L->halo.halo) PetscFunctionReturn(PETSC_SUCCESS); /* the MPI product's: got by the choice */
  if (get) {
    L->e = NULL;
    PetscCall(MatELLRGetData(L->A, &L->e));
    if (!L->e) {
      const PetscInt *i, *j;
      MatInfo         info;

      PetscCall(MatSeqAIJCUSPARSEGetIJ(L->A, PETSC_FALSE, &i, &j));
      PetscCall(MatSeqAIJCUSPARSEGetArrayRead(L->A, &L->vals));
      PetscCall(MatGetSize(L->A, &L->nrows, &L->ncols));
      PetscCall(MatGetInfo(L->A, MAT_LOCAL, &info));
      L->nnz    = (PetscInt)info.nz_used;
      L->rowptr = (const int *)i;
      L->colidx = (const int *)j;
    }
  } else if (!L->e) {
    const PetscInt *i = (const PetscInt *)L->rowptr, *j = (const PetscInt *)L->colidx;
    PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(L->A, &L->vals));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(L->A, PETSC_FALSE, &i, &j));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* On several ranks, CG's product keeps the off-diagonal block's part apart, added beside the diagonal block's product
   as soon as the ghosts are in, and its curvature pass folds it in (cgloop.h): no kernel of the off-diagonal block
   between the two.  The rows are set again where the off-diagonal pattern changed (which drops the graph). */
static PetscErrorCode KSPDeviceLoopApart(KSPDeviceLoop *L)
{
  const PetscBool apart = (PetscBool)(L->fold_offdiag && L->path == KSP_DEVICELOOP_GRAPH && L->halo.halo && L->halo.offdiag && L->halo.noffrows > 0);

  PetscFunctionBegin;
  if (apart && L->yoff && L->yoff_id == L->halo.pattern_id && L->yoff_state == L->halo.pattern_state) PetscFunctionReturn(PETSC_SUCCESS);
  if (!apart && !L->yoff) PetscFunctionReturn(PETSC_SUCCESS);
  L->yoff = NULL;
  KSPDeviceLoopCheckCUDA(L->ksp, cgloop_cuda_set_apart(L->cu, apart ? (long long)L->halo.noffrows : 0, L->halo.offrows, &L->yoff), "Setting the rows of the product's off-diagonal part");
  L->yoff_id    = L->halo.pattern_id;
  L->yoff_state = L->halo.pattern_state;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the reductions over the ranks: NCCL's all-reduce on the passes' stream */
static int KSPDeviceLoopAllreduce(void *nccl, double *sums, int count, void *stream)
{
  return ellr_nccl_allreduce_sum((ellr_nccl_comm *)nccl, sums, (size_t)count, stream) == ELLR_OK ? 0 : CGLOOP_REDUCE_FAILED;
}

/* the host reads the state (and the monitors x and r) with the arrays handed back to PETSc */
static PetscErrorCode KSPDeviceLoopLook(KSPDeviceLoop *L, const cgloop_state *st, PetscInt *done, PetscBool *finished)
{
  PetscFunctionBegin;
  if (L->ksp->numbermonitors) PetscCall(KSPDeviceLoopReleaseArrays(L));
  PetscCall(KSPDeviceLoopDigest(L, st, done, finished));
  if (L->ksp->numbermonitors) PetscCall(KSPDeviceLoopTakeArrays(L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The iterations on the GPU: the first two (three on several ranks) enqueued directly, the last of them timed, the rest
   in batches of L->batch, as a replayed graph (GRAPH) or enqueued again (EAGER).  With PETSc's own
   convergence test mirrored on the GPU, the next batch is enqueued before the host reads the norms of the current one:
   a batch past the stopping iteration does nothing. */
static PetscErrorCode KSPDeviceLoopGPU(KSPDeviceLoop *L, const cgloop_state *st0)
{
  KSP                 ksp = L->ksp;
  const cgloop_state *st;
  void               *petsc_stream = (void *)PetscDefaultCudaStream;
  PetscInt            done = 0, inflight = 0, slot = 0, depth;
  /* iterations enqueued one at a time first, the last of them timed: the first sizes cuSPARSE's buffer, and on several
     ranks the first all-reduces connect NCCL's peers (milliseconds): the third is timed there */
  const PetscInt      nfirst = L->nccl ? 3 : 2;
  PetscBool           finished = PETSC_FALSE, graph = (PetscBool)(L->path == KSP_DEVICELOOP_GRAPH);
  double              t_iter = 0.0;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(L->setup_event, ksp, 0, 0, 0));
  /* on several ranks the passes, their all-reduces and the product's NCCL exchange share one stream (one NCCL
     communicator's work must be ordered): the current device context's, where the exchange goes */
  if (L->nccl) PetscCall(MatELLRGetStream(&petsc_stream));
  if (L->cu && L->cu_n != L->shape.n) {
    KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_destroy(L->cu), "Releasing the loop's GPU resources");
    L->cu   = NULL;
    L->yoff = NULL; /* the context's */
  }
  if (!L->cu) {
    KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_create(&L->shape, &L->cu), "Creating the loop's GPU resources");
    L->cu_n = L->shape.n;
  }
  KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_set_shape(L->cu, &L->shape, graph ? NULL : petsc_stream, !graph), "Setting the loop's stream");
  KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_set_reducer(L->cu, L->nccl ? KSPDeviceLoopAllreduce : NULL, L->nccl), "Setting the loop's reductions");
  PetscCall(KSPDeviceLoopApart(L));
  PetscCall(KSPDeviceLoopTakeArrays(L));
  PetscCall(KSPDeviceLoopProduct(L, PETSC_TRUE));
  if (graph) KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_wait_for(L->cu, petsc_stream), "Ordering the loop after PETSc's stream");
  KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_set_state(L->cu, st0), "Copying the loop's state to the GPU");
  /* an earlier solve's stop may have left a product's off-diagonal part untaken */
  KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_apart_clear(L->cu), "Clearing the product's off-diagonal part");
  for (PetscInt k = 0; k < nfirst && !finished; k++) {
    const PetscBool timed = (PetscBool)(k == nfirst - 1);

    if (timed) KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_mark(L->cu, 0), "Timing an iteration");
    PetscCall((*L->iterate)(L));
    if (timed) KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_mark(L->cu, 1), "Timing an iteration");
    KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_state_fetch(L->cu, 0), "Fetching the loop's state");
    KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_state_wait(L->cu, 0, &st), "Fetching the loop's state");
    if (timed) KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_elapsed(L->cu, &t_iter), "Timing an iteration");
    PetscCall(KSPDeviceLoopLook(L, st, &done, &finished));
  }
  /* the batch: iterations worth about 0.25 ms of GPU time, so that the host's look and the graph launch stay a small
     part of the batch */
  L->batch = L->check_every > 0 ? L->check_every : (PetscInt)PetscCeilReal(2.5e-4 / PetscMax(t_iter, 1e-6));
  /* one when the host must see each iterate: a monitor (it may read x and r), or a convergence test the GPU cannot
     mirror (x must be the iterate the test accepted); or when PETSc's preconditioner runs between passes (past the
     stop it would be applied to stale vectors, and it may keep state of its own) */
  if ((ksp->numbermonitors || !st0->test_tol || L->shape.pc == CGLOOP_PC_GENERAL) && L->check_every <= 0) L->batch = 1;
  L->batch = PetscMax(1, PetscMin(L->batch, KSP_DEVICELOOP_MAX_BATCH));
  /* every rank enqueues the same iterations (each holds collectives: the all-reduces, the product's exchange) */
  if (L->nccl) PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &L->batch, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)ksp)));
  /* a batch enqueued ahead only where nothing on the host reads the vectors between batches, nor runs between passes */
  depth = st0->test_tol && !ksp->numbermonitors && L->shape.pc != CGLOOP_PC_GENERAL ? 2 : 1;
  if (!finished && graph) {
    const void      *key[KSP_DEVICELOOP_KEYS] = {NULL};
    PetscObjectState state;
    PetscObjectId    id;
    PetscBool        same = PETSC_TRUE;
    PetscMPIInt      recapture;

    for (PetscInt k = 0; k < L->nvec; k++) key[k] = L->arr[k];
    key[KSP_DEVICELOOP_MAX_VECS]     = L->darr;
    key[KSP_DEVICELOOP_MAX_VECS + 1] = L->halo.halo ? (const void *)L->halo.diag : (L->e ? (const void *)L->e->dev : (const void *)L->vals);
    key[KSP_DEVICELOOP_MAX_VECS + 2] = L->halo.offdiag;
    key[KSP_DEVICELOOP_MAX_VECS + 3] = L->halo.halo;
    key[KSP_DEVICELOOP_MAX_VECS + 4] = L->halo.ghosts;
    key[KSP_DEVICELOOP_MAX_VECS + 5] = L->halo.nccl;
    PetscCall(PetscObjectStateGet((PetscObject)L->A, &state));
    PetscCall(PetscObjectGetId((PetscObject)L->A, &id));
    for (PetscInt k = 0; k < KSP_DEVICELOOP_KEYS; k++) same = (PetscBool)(same && key[k] == L->key[k]);
    /* a graph holds pointers and the storage it was captured with: captured again when any changed, on several ranks
       by all of them (each graph holds NCCL's calls, which pair across the ranks) */
    recapture = (PetscMPIInt)(!cgloop_cuda_has_graph(L->cu) || !same || id != L->key_id || state != L->key_state || L->batch != L->key_batch);
    if (L->nccl) PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &recapture, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)ksp)));
    if (recapture) {
      PetscErrorCode ierr = PETSC_SUCCESS;
      int            rc;

      if (L->halo.halo) PetscCall(MatELLRCheckStatus(ellr_halo_join(L->halo.halo, cgloop_cuda_stream(L->cu)), "Ordering the loop after the last exchange"));
      rc = cgloop_cuda_capture_begin(L->cu);
      for (PetscInt k = 0; !rc && !ierr && k < L->batch; k++) ierr = (*L->iterate)(L);
      if (!rc) { /* never leave the stream capturing */
        const int rc_end = cgloop_cuda_capture_end(L->cu);

        if (!ierr) rc = rc_end;
      }
      if (ierr) (void)cgloop_cuda_drop_graph(L->cu);
      if (L->nccl) { /* NCCL's calls were captured on the ranks that succeeded: none may go on alone, nor wait for one that stopped */
        PetscMPIInt failed = (PetscMPIInt)(rc != 0 || ierr), any;

        PetscCallMPI(MPIU_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)ksp)));
        PetscCall(ierr);
        PetscCheck(!any, PetscObjectComm((PetscObject)ksp), PETSC_ERR_GPU, "The %s iterations with NCCL's exchange could not be captured as a CUDA graph on every rank (%s here); -ellr_nccl 0 runs PETSc's loop with MPI's exchange", L->name, rc ? cgloop_cuda_error(rc) : "captured");
      }
      PetscCall(ierr);
      if (rc) {
        PetscCall(PetscInfo(ksp, "The %s iterations could not be captured as a CUDA graph (%s): they are enqueued one by one\n", L->name, cgloop_cuda_error(rc)));
        graph = PETSC_FALSE;
      } else {
        PetscCall(PetscArraycpy(L->key, key, KSP_DEVICELOOP_KEYS));
        L->key_id    = id;
        L->key_state = state;
        L->key_batch = L->batch;
      }
    }
  }
  PetscCall(PetscLogEventEnd(L->setup_event, ksp, 0, 0, 0));
  PetscCall(PetscInfo(ksp, "%s, %" PetscInt_FMT " iterations between two looks of the host (one iteration: %g ms on the GPU)\n", graph ? "CUDA graph" : "passes enqueued one by one", L->batch, 1e3 * t_iter));
  while (!finished || inflight) {
    if (!finished && inflight < depth) {
      if (graph) {
        /* after an exchange outside the graph (a monitor's product between batches): the graph's first one waits for
           its ghosts to have been read, as an exchange outside a graph does by itself */
        if (L->halo.halo) PetscCall(MatELLRCheckStatus(ellr_halo_join(L->halo.halo, cgloop_cuda_stream(L->cu)), "Ordering the loop after the last exchange"));
        KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_launch(L->cu), "Launching the loop's graph");
      } else
        for (PetscInt k = 0; k < L->batch; k++) PetscCall((*L->iterate)(L));
      KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_state_fetch(L->cu, (int)((slot + inflight) % 2)), "Fetching the loop's state");
      inflight++;
      continue;
    }
    KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_state_wait(L->cu, (int)slot, &st), "Fetching the loop's state");
    slot = (slot + 1) % 2;
    inflight--;
    if (finished) continue; /* a batch enqueued ahead: done nothing past the stop */
    PetscCall(KSPDeviceLoopLook(L, st, &done, &finished));
  }
  if (graph || L->path == KSP_DEVICELOOP_GRAPH) KSPDeviceLoopCheckCUDA(ksp, cgloop_cuda_release_to(L->cu, petsc_stream), "Ordering PETSc's stream after the loop");
  if (L->e && L->path == KSP_DEVICELOOP_GRAPH) L->e->nproducts += L->products * done;
  if (L->halo.halo) {
    for (PetscInt k = 0; k < 2; k++) L->halo.be[k]->nproducts += L->products * done;
    PetscCall(PetscLogGpuFlops((PetscLogDouble)(L->products * done) * L->halo.flops));
  }
  PetscCall(PetscLogGpuFlops((PetscLogDouble)done * L->flops_per_row * L->shape.n));
  PetscCall(KSPDeviceLoopProduct(L, PETSC_FALSE));
  PetscCall(KSPDeviceLoopReleaseArrays(L));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode KSPDeviceLoopRun(KSPDeviceLoop *L, cgloop_state *st0)
{
  PetscFunctionBegin;
  L->held = PETSC_FALSE;
  L->e    = NULL;
  L->vals = NULL;
  if (L->path == KSP_DEVICELOOP_HOST) PetscCall(KSPDeviceLoopHost(L, st0));
#if defined(KSP_DEVICELOOP_CUDA)
  else PetscCall(KSPDeviceLoopGPU(L, st0));
#else
  else SETERRQ(PetscObjectComm((PetscObject)L->ksp), PETSC_ERR_PLIB, "The %s loop on the GPU in a build without CUDA", L->name);
#endif
  /* KSPCheckNorm() and KSPCheckDot() flag the solution when the preconditioner failed (the arrays are PETSc's again) */
#if PETSC_VERSION_LT(3, 22, 0)
  if (L->ksp->reason == KSP_DIVERGED_PC_FAILED) PetscCall(VecSetInf(L->ksp->vec_sol));
#else
  if (L->ksp->reason == KSP_DIVERGED_PC_FAILED) PetscCall(VecFlag(L->ksp->vec_sol, 1));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopView(KSPDeviceLoop *L, PetscViewer viewer)
{
  PetscBool   ascii, string;
  const char *fmt   = "  iterations run by: %s; host looks every %" PetscInt_FMT " iterations\n";
  PetscInt    every = L->path >= KSP_DEVICELOOP_EAGER ? L->batch : 1;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERSTRING, &string));
  if (ascii) PetscCall(PetscViewerASCIIPrintf(viewer, fmt, L->paths[L->path], every));
  if (string) PetscCall(PetscViewerStringSPrintf(viewer, fmt, L->paths[L->path], every));
#if defined(KSP_DEVICELOOP_CUDA)
  if (ascii && L->path >= KSP_DEVICELOOP_EAGER && L->nccl) PetscCall(PetscViewerASCIIPrintf(viewer, "  inner products summed over the ranks on the GPU by NCCL\n"));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
