/*
  bcgsdevice.c - KSPBCGSDEVICE: PETSc's KSPBCGS with its iterations run by the passes of bcgsloop.h.

  The solver is a genuine KSPBCGS (made by KSPCreate_BCGS) whose slots are wrapped (kspdevicetype.c).  The start of a solve
  (preconditioned residual, first norm, convergence test at iteration 0, rp = r, p = v = 0, the first rho) is
  KSPBCGS's, made of PETSc's own operations; the iterations then run as passes on the GPU (or the host) through the
  driver shared with KSPCGDEVICE (kspdeviceloop.c), and the host replays the recorded norms through
  KSPLogResidualHistory(), KSPMonitor() and the convergence test in order.  What the passes cannot mirror runs
  KSPBCGS's own loop, with a PetscInfo() line saying why.
*/
#include "kspdeviceloop.h"
#include <petsc/private/pcimpl.h>
#include "bcgsloop.h"

PETSC_EXTERN PetscErrorCode KSPCreate_BCGS(KSP);

static PetscLogEvent KSP_BCGSDeviceSetUp; /* the GPU loop's one-time work in a solve: context, first iterations, capture */

/* the vectors of the passes, in the loop's arrays */
enum {
  BCGS_X,
  BCGS_R,
  BCGS_RP,
  BCGS_P,
  BCGS_V,
  BCGS_T,
  BCGS_S,
  BCGS_NVEC
};

/* ---------------------------------------------------------------- one iteration and its stops */

/* vec[out] = B A vec[in]: the product, B applied by the next pass (none, diagonal), or PETSc's KSP_PCApplyBAorAB()
   (a general B, and a null space removed as KSPBCGS does), with vec[work] as its work vector */
static PetscErrorCode KSPBCGSDeviceOperator(KSPDeviceLoop *L, PetscInt in, PetscInt out, PetscInt work)
{
  PetscFunctionBegin;
  if (L->shape.pc != CGLOOP_PC_GENERAL) {
    PetscCall(KSPDeviceLoopMult(L, in, out));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!KSPDeviceLoopLive(L)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPDeviceLoopReleaseArrays(L));
  PetscCall(KSP_PCApplyBAorAB(L->ksp, L->vec[in], L->vec[out], L->vec[work]));
  PetscCall(KSPDeviceLoopTakeArrays(L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPBCGSDeviceIterate(KSPDeviceLoop *L)
{
  PetscScalar *const *a = L->arr;
  const cgloop_shape *s = &L->shape;

  PetscFunctionBegin;
  KSPDeviceLoopPass(L, bcgsloop_host_direction(s, L->st, a[BCGS_R], a[BCGS_V], a[BCGS_P]), bcgsloop_cuda_direction(L->cu, a[BCGS_R], a[BCGS_V], a[BCGS_P]), "The BiCGStab direction pass");
  PetscCall(KSPBCGSDeviceOperator(L, BCGS_P, BCGS_V, BCGS_T)); /* t is free until t = B A s */
  KSPDeviceLoopPass(L, bcgsloop_host_alpha(s, L->st, a[BCGS_V], L->darr, a[BCGS_RP]), bcgsloop_cuda_alpha(L->cu, a[BCGS_V], L->darr, a[BCGS_RP]), "The BiCGStab alpha pass");
  KSPDeviceLoopPass(L, bcgsloop_host_residual(s, L->st, a[BCGS_R], a[BCGS_V], a[BCGS_S]), bcgsloop_cuda_residual(L->cu, a[BCGS_R], a[BCGS_V], a[BCGS_S]), "The BiCGStab residual pass");
  PetscCall(KSPBCGSDeviceOperator(L, BCGS_S, BCGS_T, BCGS_R)); /* r is free until the step writes it */
  KSPDeviceLoopPass(L, bcgsloop_host_omega(s, L->st, a[BCGS_S], a[BCGS_T], L->darr), bcgsloop_cuda_omega(L->cu, a[BCGS_S], a[BCGS_T], L->darr), "The BiCGStab omega pass");
  KSPDeviceLoopPass(L, bcgsloop_host_step(s, L->st, a[BCGS_X], a[BCGS_R], a[BCGS_P], a[BCGS_S], a[BCGS_T], a[BCGS_RP]), bcgsloop_cuda_step(L->cu, a[BCGS_X], a[BCGS_R], a[BCGS_P], a[BCGS_S], a[BCGS_T], a[BCGS_RP]), "The BiCGStab step pass");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the stops of BiCGStab's own kinds as KSPBCGS's reasons, its counts and its messages */
static PetscErrorCode KSPBCGSDeviceStopped(KSP ksp, const cgloop_state *st)
{
  PetscFunctionBegin;
  switch ((cgloop_stop)st->stop) {
  case CGLOOP_NAN_DOT: { /* (v, rp) not finite: KSPCheckDot(), iteration stop_it + 1 not counted */
    PCFailedReason pcreason;

    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve has not converged due to Nan or Inf inner product");
    PetscCall(KSPDeviceLoopPCFailedReason(ksp, &pcreason));
    ksp->reason = pcreason ? KSP_DIVERGED_PC_FAILED : KSP_DIVERGED_NANORINF;
  } break;
  case CGLOOP_BCGS_BREAKDOWN:
    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve breakdown due to zero inner product");
    ksp->reason = KSP_DIVERGED_BREAKDOWN;
    PetscCall(PetscInfo(ksp, "Breakdown due to zero inner product\n"));
    break;
  case CGLOOP_BCGS_SINGULAR:
    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve has failed due to singular preconditioned operator");
    ksp->reason = KSP_DIVERGED_BREAKDOWN;
    PetscCall(PetscInfo(ksp, "Failed due to singular preconditioned operator\n"));
    break;
  case CGLOOP_BCGS_EXACT: { /* s = 0: x + alpha p is the solution; KSPBCGS logs the last norm and monitors 0 */
    const PetscReal last = ksp->rnorm;

    ksp->its    = (PetscInt)st->stop_it + 1;
    ksp->rnorm  = 0.0;
    ksp->reason = KSP_CONVERGED_RTOL;
    PetscCall(KSPLogResidualHistory(ksp, last));
    PetscCall(KSPMonitor(ksp, ksp->its, 0.0));
  } break;
  case CGLOOP_BCGS_RHO_ZERO:
    PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPSolve breakdown due to zero inner product");
    ksp->reason = KSP_DIVERGED_BREAKDOWN;
    PetscCall(PetscInfo(ksp, "Breakdown due to zero rho inner product\n"));
    break;
  default:
    SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "A stop of the BiCGStab loop of unknown kind %d", st->stop);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the solve */

/* why KSPBCGS's own loop runs, beyond the checks every loop shares; NULL when the passes can */
static PetscErrorCode KSPBCGSDeviceWhyNot(KSP ksp, const char **why)
{
  PetscBool scale = PETSC_FALSE;

  PetscFunctionBegin;
  *why = NULL;
#if PETSC_VERSION_LT(3, 26, 0) /* PCSetDiagonalScale(): PCApplyBAorAB() scales around the product (gone in 3.26) */
  scale = ksp->pc->diagonalscale;
#endif
  /* KSPBCGS's loop breaks with max_it 0 at its first iteration with another reason than the passes' */
  if (ksp->max_it == 0) *why = "max_it is 0";
  else if (scale) *why = "the preconditioner scales the system (PCSetDiagonalScale())";
  else if (ksp->normtype != KSP_NORM_PRECONDITIONED && ksp->normtype != KSP_NORM_NONE) *why = "a norm other than the preconditioned one or none";
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_BCGSDevice(KSP ksp)
{
  KSPDeviceLoop *L;
  Mat            A, P;
  cgloop_pc       pc = CGLOOP_PC_GENERAL;
  cgloop_state    st;
  Vec             X, B, R, RP, V, T, S, Pv;
  PetscReal       dp = 0.0;
  PetscScalar     rho;
  PetscInt        n;
  const char     *why = NULL, *own = NULL;

  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopGet(ksp, &L));
  PetscCall(PCGetOperators(ksp->pc, &A, &P));
  PetscCall(KSPDeviceLoopPCKind(ksp, A, &pc));
  PetscCall(KSPBCGSDeviceWhyNot(ksp, &own)); /* before NCCL is asked (its set-up may start) */
  PetscCall(KSPDeviceLoopChoosePath(L, ksp, A, pc, own, &why));
  if (why) {
    L->path = KSP_DEVICELOOP_PETSC;
    PetscCall(PetscInfo(ksp, "KSPBCGS's own loop runs: %s\n", why));
    L->d_jacobi = PETSC_FALSE; /* PETSc's loop sets up its own Jacobi */
    PetscCall((*L->base_solve)(ksp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  X  = ksp->vec_sol;
  B  = ksp->vec_rhs;
  R  = ksp->work[0];
  RP = ksp->work[1];
  V  = ksp->work[2];
  T  = ksp->work[3];
  S  = ksp->work[4];
  Pv = ksp->work[5];

  /* the start, as KSPBCGS's: r = B (b - A x) (KSPInitialResidual(); with a diagonal B, r = (b - A x) .* d, its bits,
     so that PETSc's Jacobi need not set itself up: KSPDeviceLoopDiagonal()), the first norm and test, rp = r, p = v = 0,
     rho = (r, rp) */
  if (pc == CGLOOP_PC_DIAGONAL) {
    PetscCall(KSPDeviceLoopDiagonal(L, ksp, R, T));
    if (!ksp->guess_zero) {
      PetscCall(KSP_MatMult(ksp, A, X, V));
      PetscCall(VecWAXPY(T, -1.0, V, B));
    } else PetscCall(VecCopy(B, T));
    PetscCall(VecPointwiseMult(R, T, L->d));
#if PETSC_VERSION_GE(3, 21, 0)
    PetscCall(VecFlag(R, ksp->reason == KSP_DIVERGED_PC_FAILED));
#endif
  } else PetscCall(KSPInitialResidual(ksp, X, V, T, R, B));
  if (ksp->normtype != KSP_NORM_NONE) {
    PetscCall(VecNorm(R, NORM_2, &dp));
    KSPCheckNorm(ksp, dp);
  }
  ksp->its   = 0;
  ksp->rnorm = dp;
  PetscCall(KSPLogResidualHistory(ksp, dp));
  PetscCall(KSPMonitor(ksp, 0, dp));
  PetscCall((*ksp->converged)(ksp, 0, dp, &ksp->reason, ksp->cnvP));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecCopy(R, RP));
  PetscCall(VecSet(Pv, 0.0));
  PetscCall(VecSet(V, 0.0));
  PetscCall(VecDot(R, RP, &rho));

  /* the iterations */
  PetscCall(VecGetLocalSize(R, &n));
  L->ksp          = ksp;
  L->A            = A;
  L->nvec         = BCGS_NVEC;
  L->vec[BCGS_X]  = X;
  L->vec[BCGS_R]  = R;
  L->vec[BCGS_RP] = RP;
  L->vec[BCGS_P]  = Pv;
  L->vec[BCGS_V]  = V;
  L->vec[BCGS_T]  = T;
  L->vec[BCGS_S]  = S;
  L->shape.n      = n;
  L->shape.pc     = pc;
  L->shape.norm   = ksp->normtype == KSP_NORM_NONE ? CGLOOP_NORM_NONE : CGLOOP_NORM_PRECONDITIONED;
  PetscCall(KSPDeviceLoopStateInit(ksp, &st));
  st.rho      = PetscRealPart(rho);
  st.rhoold   = 1.0;
  st.alpha    = 1.0;
  st.omegaold = 1.0;
  PetscCall(PetscInfo(ksp, "%s, preconditioner %s\n", L->paths[L->path], pc == CGLOOP_PC_GENERAL ? "applied by PETSc" : (pc == CGLOOP_PC_DIAGONAL ? "diagonal, in the passes" : "none")));
  PetscCall(KSPDeviceLoopRun(L, &st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the type */

PETSC_INTERN PetscErrorCode KSPCreate_BCGSDevice(KSP ksp)
{
  KSPDeviceLoop *L;

  PetscFunctionBegin;
  if (!KSP_BCGSDeviceSetUp) PetscCall(PetscLogEventRegister("KSPBCGSDevSetUp", KSP_CLASSID, &KSP_BCGSDeviceSetUp));
  PetscCall(KSPCreate_BCGS(ksp));
  PetscCall(KSPDeviceLoopWrap(ksp, sizeof(KSPDeviceLoop), KSPSolve_BCGSDevice, &L));
  L->name            = "BiCGStab";
  L->manual          = "KSPBCGSDEVICE";
  L->title           = "KSPBCGSDEVICE options";
  L->option          = "-ksp_bcgsdevice_check_every";
  L->paths[0]        = "KSPBCGS's loop";
  L->iterate         = KSPBCGSDeviceIterate;
  L->stopped         = KSPBCGSDeviceStopped;
  L->nan_norm_counts = PETSC_FALSE; /* KSPBCGS checks the norm before counting the iteration */
  L->products        = 2;
  L->flops_per_row   = 24.0; /* the five passes, the diagonal's products included */
  L->setup_event     = KSP_BCGSDeviceSetUp;
  PetscFunctionReturn(PETSC_SUCCESS);
}
