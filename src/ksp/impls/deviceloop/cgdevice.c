/*
  cgdevice.c - KSPCGDEVICE: PETSc's KSPCG with its iterations run by the passes of cgloop.h.

  The solver is a genuine KSPCG (made by KSPCreate_CG, so KSPCGSetType() and the rest work) whose slots are wrapped
  (kspdevicetype.c).  The start of a solve (residual, first norm, convergence test at iteration 0, first z'r) is KSPCG's, made of
  PETSc's own vector operations; the iterations then run as passes on the GPU (or the host) through the driver shared
  with KSPBCGSDEVICE (kspdeviceloop.c), and the host replays the recorded norms through KSPLogResidualHistory(),
  KSPMonitor() and the convergence test in order.
*/
#include "kspdeviceloop.h"

PETSC_EXTERN PetscErrorCode KSPCreate_CG(KSP);

static PetscLogEvent KSP_CGDeviceSetUp; /* the GPU loop's one-time work in a solve: context, first iterations, capture */

/* the vectors of the passes, in the loop's arrays */
enum {
  CG_X,
  CG_R,
  CG_P,
  CG_Z, /* also w = A p: z is consumed by the direction pass before w = A p, and made again after the step */
  CG_NVEC
};

typedef struct {
  KSPDeviceLoop loop; /* first: the record kspdevicetype.c keeps */
  PetscErrorCode (*cg_setradius)(KSP, PetscReal);
  PetscErrorCode (*cg_setobjective)(KSP, PetscReal);
  PetscErrorCode (*cg_singlereduction)(KSP, PetscBool);
  PetscBool single;            /* KSPCGUseSingleReduction(): KSPCG's single-reduction loop */
  PetscBool radius, objective; /* a trust-region radius (nonzero) or an objective target (negative) is on: KSPCG's loop */
} KSP_CGDevice;

static PetscErrorCode KSPCGDeviceGetData(KSP ksp, KSP_CGDevice **c)
{
  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopGet(ksp, (KSPDeviceLoop **)c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- one iteration and its stops */

static PetscErrorCode KSPCGDeviceIterate(KSPDeviceLoop *L)
{
  PetscScalar *const *a = L->arr;
  const cgloop_shape *s = &L->shape;

  PetscFunctionBegin;
  KSPDeviceLoopPass(L, cgloop_host_direction(s, L->st, a[CG_R], L->darr, a[CG_Z], a[CG_P]), cgloop_cuda_direction(L->cu, a[CG_R], L->darr, a[CG_Z], a[CG_P]), "The CG direction pass");
  PetscCall(KSPDeviceLoopMult(L, CG_P, CG_Z));
  KSPDeviceLoopPass(L, cgloop_host_curvature(s, L->st, a[CG_P], a[CG_Z]), cgloop_cuda_curvature(L->cu, a[CG_P], a[CG_Z]), "The CG curvature pass");
  KSPDeviceLoopPass(L, cgloop_host_step(s, L->st, a[CG_X], a[CG_R], a[CG_P], a[CG_Z], L->darr), cgloop_cuda_step(L->cu, a[CG_X], a[CG_R], a[CG_P], a[CG_Z], L->darr), "The CG step pass");
  if (s->pc == CGLOOP_PC_GENERAL && KSPDeviceLoopLive(L)) {
    PetscCall(KSPDeviceLoopReleaseArrays(L));
    PetscCall(KSP_PCApply(L->ksp, L->vec[CG_R], L->vec[CG_Z]));
    PetscCall(KSPDeviceLoopTakeArrays(L));
    KSPDeviceLoopPass(L, cgloop_host_close(s, L->st, a[CG_R], a[CG_Z]), cgloop_cuda_close(L->cu, a[CG_R], a[CG_Z]), "The CG closing pass");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the stops of CG's own kinds as KSPCG's reasons */
static PetscErrorCode KSPCGDeviceStopped(KSP ksp, const cgloop_state *st)
{
  PetscFunctionBegin;
  switch ((cgloop_stop)st->stop) {
  case CGLOOP_INDEF_MAT:
    ksp->its = (PetscInt)st->stop_it + 1;
#if PETSC_VERSION_GE(3, 21, 0)
    if (ksp->converged_neg_curve) {
      PetscCall(PetscInfo(ksp, "converged due to negative curvature\n"));
      ksp->reason = KSP_CONVERGED_NEG_CURVE;
    } else
#endif
    {
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Diverged due to indefinite matrix");
      PetscCall(PetscInfo(ksp, "diverging due to indefinite matrix\n"));
      ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
    }
    break;
  case CGLOOP_INDEF_PC:
    ksp->its = (PetscInt)st->stop_it + 1;
    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Diverged due to indefinite preconditioner, beta %g, betaold %g", st->beta, st->betaold);
    PetscCall(PetscInfo(ksp, "diverging due to indefinite preconditioner\n"));
    ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
    break;
  case CGLOOP_BETA_ZERO:
    ksp->its = (PetscInt)st->stop_it + 1;
    PetscCall(PetscInfo(ksp, "converged due to beta = 0\n"));
    ksp->reason = KSP_CONVERGED_ATOL;
    break;
  case CGLOOP_NAN_CURVATURE: /* KSPCG counts the iteration whose p'Ap is not finite */
    ksp->its = (PetscInt)st->stop_it + 1;
    /* fall through */
  case CGLOOP_NAN_DOT: {
    PCFailedReason pcreason;

    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve has not converged due to Nan or Inf inner product");
    PetscCall(KSPDeviceLoopPCFailedReason(ksp, &pcreason));
    ksp->reason = pcreason ? KSP_DIVERGED_PC_FAILED : KSP_DIVERGED_NANORINF;
  } break;
  default:
    SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "A stop of the CG loop of unknown kind %d", st->stop);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the solve */

/* z = B r at the start: with a diagonal preconditioner z = r .* d (PCApply()'s bits for Jacobi and point-block Jacobi
   over blocks of one), d made at this first use as PETSc's Jacobi makes its scaling at its first PCApply()
   (KSPDeviceLoopDiagonal()); else PETSc's */
static PetscErrorCode KSPCGDeviceApplyPC(KSPDeviceLoop *L, KSP ksp, cgloop_pc pc, Vec r, Vec z, PetscBool *have_d)
{
  PetscFunctionBegin;
  if (pc == CGLOOP_PC_DIAGONAL) {
    if (!*have_d) PetscCall(KSPDeviceLoopDiagonal(L, ksp, r, z));
    *have_d = PETSC_TRUE;
    PetscCall(VecPointwiseMult(z, r, L->d));
  } else PetscCall(KSP_PCApply(ksp, r, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_CGDevice(KSP ksp)
{
  KSP_CGDevice  *c;
  KSPDeviceLoop *L;
  Mat            A, P;
  cgloop_pc      pc = CGLOOP_PC_GENERAL;
  cgloop_state   st;
  struct {
    Vec X, R, Z, P;
  } v;
  PetscReal   dp   = 0.0;
  PetscScalar beta = 0.0;
  PetscInt    n;
  const char *why    = NULL;
  PetscBool   have_d = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  L = &c->loop;
  PetscCall(PCGetOperators(ksp->pc, &A, &P));
  PetscCall(KSPDeviceLoopPCKind(ksp, A, &pc));
  L->path = KSP_DEVICELOOP_PETSC;
#if defined(KSP_DEVICELOOP_CUDA)
  L->nccl = NULL; /* set by KSPDeviceLoopChoosePath() where it runs */
#endif
  if (c->radius || c->objective) why = "a trust-region radius or an objective target is set";
  else if (c->single) why = "the single-reduction variant is asked for (KSPCGUseSingleReduction())";
  else PetscCall(KSPDeviceLoopChoosePath(L, ksp, A, pc, NULL, &why));
  if (why) {
    PetscCall(PetscInfo(ksp, "KSPCG's own loop runs: %s\n", why));
    L->d_jacobi = PETSC_FALSE; /* PETSc's loop sets up its own Jacobi */
    PetscCall((*L->base_solve)(ksp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  v.X = ksp->vec_sol;
  v.R = ksp->work[0];
  v.Z = ksp->work[1];
  v.P = ksp->work[2];

  /* the start, as KSPCG's: r = b - A x, the first norm and test, beta = z'r */
  ksp->its = 0;
  if (!ksp->guess_zero) {
    PetscCall(KSP_MatMult(ksp, A, v.X, v.R));
    PetscCall(VecAYPX(v.R, -1.0, ksp->vec_rhs));
  } else PetscCall(VecCopy(ksp->vec_rhs, v.R));
#if PETSC_VERSION_GE(3, 21, 0)
  PetscCall(VecFlag(v.R, ksp->reason == KSP_DIVERGED_PC_FAILED));
#endif
  /* z = B r before the first test only where the norm needs it, as KSPCG (a PC failure then shows in the same place) */
  if (ksp->normtype == KSP_NORM_PRECONDITIONED || ksp->normtype == KSP_NORM_NATURAL) PetscCall(KSPCGDeviceApplyPC(L, ksp, pc, v.R, v.Z, &have_d));
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
    PetscCall(VecNorm(v.Z, NORM_2, &dp));
    KSPCheckNorm(ksp, dp);
    break;
  case KSP_NORM_UNPRECONDITIONED:
    PetscCall(VecNorm(v.R, NORM_2, &dp));
    KSPCheckNorm(ksp, dp);
    break;
  case KSP_NORM_NATURAL:
    PetscCall(VecDot(v.Z, v.R, &beta));
    KSPCheckDot(ksp, beta);
    dp = PetscSqrtReal(PetscAbsScalar(beta));
    break;
  default:
    dp = 0.0;
  }
  PetscCall(KSPLogResidualHistory(ksp, dp));
  PetscCall(KSPMonitor(ksp, 0, dp));
  ksp->rnorm = dp;
  PetscCall((*ksp->converged)(ksp, 0, dp, &ksp->reason, ksp->cnvP));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (ksp->normtype != KSP_NORM_PRECONDITIONED && ksp->normtype != KSP_NORM_NATURAL) PetscCall(KSPCGDeviceApplyPC(L, ksp, pc, v.R, v.Z, &have_d));
  if (ksp->normtype != KSP_NORM_NATURAL) {
    PetscCall(VecDot(v.Z, v.R, &beta));
    KSPCheckDot(ksp, beta);
  }
  if (beta == 0.0) {
    ksp->its    = 1;
    ksp->reason = KSP_CONVERGED_ATOL;
    PetscCall(PetscInfo(ksp, "converged due to beta = 0\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* the iterations */
  PetscCall(VecGetLocalSize(v.R, &n));
  L->ksp           = ksp;
  L->A             = A;
  L->nvec          = CG_NVEC;
  L->vec[CG_X]     = v.X;
  L->vec[CG_R]     = v.R;
  L->vec[CG_P]     = v.P;
  L->vec[CG_Z]     = v.Z;
  L->shape.n       = n;
  L->shape.pc      = pc;
  L->shape.norm    = ksp->normtype == KSP_NORM_PRECONDITIONED ? CGLOOP_NORM_PRECONDITIONED : (ksp->normtype == KSP_NORM_UNPRECONDITIONED ? CGLOOP_NORM_UNPRECONDITIONED : (ksp->normtype == KSP_NORM_NATURAL ? CGLOOP_NORM_NATURAL : CGLOOP_NORM_NONE));
  PetscCall(KSPDeviceLoopStateInit(ksp, &st));
  st.beta    = PetscRealPart(beta);
  st.betaold = 1.0;
  PetscCall(PetscInfo(ksp, "%s, preconditioner %s\n", L->paths[L->path], pc == CGLOOP_PC_GENERAL ? "applied by PETSc" : (pc == CGLOOP_PC_DIAGONAL ? "diagonal, in the passes" : "none")));
  PetscCall(KSPDeviceLoopRun(L, &st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the wrapped slots of KSPCG */

static PetscErrorCode KSPCGSetRadius_CGDevice(KSP ksp, PetscReal radius)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  c->radius = (PetscBool)(radius != 0.0); /* KSPCG's trust region is on for any nonzero radius */
  PetscCall((*c->cg_setradius)(ksp, radius));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGSetObjectiveTarget_CGDevice(KSP ksp, PetscReal obj)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  c->objective = (PetscBool)(obj < 0.0); /* KSPCG tests the objective only for a negative target */
  PetscCall((*c->cg_setobjective)(ksp, obj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPCG's KSPCGUseSingleReduction() puts its loop in the solve slot: kept in ours, run when asked for */
static PetscErrorCode KSPCGUseSingleReduction_CGDevice(KSP ksp, PetscBool flg)
{
  KSP_CGDevice *c;

  PetscFunctionBegin;
  PetscCall(KSPCGDeviceGetData(ksp, &c));
  PetscCall((*c->cg_singlereduction)(ksp, flg));
  if (ksp->ops->solve != KSPSolve_CGDevice) c->loop.base_solve = ksp->ops->solve;
  ksp->ops->solve = KSPSolve_CGDevice;
  c->single       = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode KSPCreate_CGDevice(KSP ksp)
{
  KSP_CGDevice  *c;
  KSPDeviceLoop *L;

  PetscFunctionBegin;
  if (!KSP_CGDeviceSetUp) PetscCall(PetscLogEventRegister("KSPCGDevSetUp", KSP_CLASSID, &KSP_CGDeviceSetUp));
  PetscCall(KSPCreate_CG(ksp));
  PetscCall(KSPDeviceLoopWrap(ksp, sizeof(KSP_CGDevice), KSPSolve_CGDevice, &L));
  c                  = (KSP_CGDevice *)L;
  L->name            = "CG";
  L->manual          = "KSPCGDEVICE";
  L->title           = "KSPCGDEVICE options";
  L->option          = "-ksp_cgdevice_check_every";
  L->paths[0]        = "KSPCG's loop";
  L->iterate         = KSPCGDeviceIterate;
  L->stopped         = KSPCGDeviceStopped;
  L->nan_norm_counts = PETSC_TRUE; /* KSPCG counts an iteration before its norm */
  L->products        = 1;
  L->fold_offdiag    = PETSC_TRUE; /* on several GPUs the curvature pass adds the product's off-diagonal part */
  L->flops_per_row   = 10.0;
  L->setup_event     = KSP_CGDeviceSetUp;
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGSetRadius_C", &c->cg_setradius));
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGSetObjectiveTarget_C", &c->cg_setobjective));
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGUseSingleReduction_C", &c->cg_singlereduction));
  if (c->cg_setradius) PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGSetRadius_C", KSPCGSetRadius_CGDevice));
  if (c->cg_setobjective) PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGSetObjectiveTarget_C", KSPCGSetObjectiveTarget_CGDevice));
  if (c->cg_singlereduction) PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGUseSingleReduction_C", KSPCGUseSingleReduction_CGDevice));
  PetscFunctionReturn(PETSC_SUCCESS);
}
