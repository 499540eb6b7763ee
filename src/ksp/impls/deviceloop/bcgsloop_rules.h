/*
  bcgsloop_rules.h - the scalar part of a BiCGStab iteration, shared verbatim by the host passes and the CUDA passes
  (where the last block of a reduction runs it), so that both stop at the same iteration for the same reason.
  The tests mirror PETSc's KSPSolve_BCGS: a non-finite (v, rp) stops as KSPCheckDot(), a zero one as a breakdown,
  before s moves; (t, t) = 0 is a breakdown unless (s, s) = 0 too (then x += alpha p, counted, converged); after the
  step's norm comes the tolerance test, then rho = 0 (the rho this iteration used: a breakdown), then max_it.
*/
#ifndef BCGSLOOP_RULES_H
#define BCGSLOOP_RULES_H
#include "bcgsloop.h"
#include "cgloop_rules.h"

/* p = r + c v + beta p: the coefficients */
CGLOOP_HD static inline void bcgsloop_direction_coefficients(const cgloop_state *st, double *beta, double *c)
{
  *beta = (st->rho / st->rhoold) * (st->alpha / st->omegaold);
  *c    = -st->omegaold * *beta;
}

/* after d1 = (v, rp): the step length, or a stop */
CGLOOP_HD static inline void bcgsloop_after_alpha(cgloop_state *st, double d1)
{
  if (!cgloop_finite(d1)) cgloop_set_stop(st, CGLOOP_NAN_DOT);
  else if (d1 == 0.0) cgloop_set_stop(st, CGLOOP_BCGS_BREAKDOWN);
  else st->alpha = st->rho / d1;
}

/* after (s, t), (t, t), (s, s): omega, or a stop; s = 0 makes the step x += alpha p (omega = 0 leaves x + alpha p) */
CGLOOP_HD static inline void bcgsloop_after_omega(cgloop_state *st, double st_, double tt, double ss)
{
  st->exact = 0;
  if (tt == 0.0) {
    if (ss != 0.0) {
      cgloop_set_stop(st, CGLOOP_BCGS_SINGULAR);
      return;
    }
    st->exact = 1;
    st->omega = 0.0;
    return;
  }
  st->omega = st_ / tt;
}

/* after the step: rr = (r, r), rn = (r, rp), the next rho; records the iteration's norm */
CGLOOP_HD static inline void bcgsloop_after_step(cgloop_state *st, cgloop_norm norm, double rr, double rn)
{
  const double rho = st->rho;

  if (st->exact) { /* the iteration is counted by the host, with no norm recorded (KSPBCGS logs the previous one) */
    cgloop_set_stop(st, CGLOOP_BCGS_EXACT);
    return;
  }
  st->rhoold   = rho;
  st->omegaold = st->omega;
  st->rho      = rn;
  if (cgloop_record_norm(st, norm == CGLOOP_NORM_NONE ? 0.0 : sqrt(rr))) return;
  if (rho == 0.0) cgloop_set_stop(st, CGLOOP_BCGS_RHO_ZERO);
  else if (st->it >= st->max_it) cgloop_set_stop(st, CGLOOP_STOP_MAXIT);
}
#endif
