/*
  cgloop_rules.h - the scalar part of a CG iteration (and the norm record every recurrence shares), shared verbatim
  by the host passes and the CUDA passes (where the last block of a reduction runs it), so that both stop at the same
  iteration for the same reason.
  The tests mirror PETSc's KSPSolve_CG: beta = 0 (exact solution) and a sign change of beta (indefinite preconditioner)
  are checked after the iteration's norm, as KSPCG checks them at the top of the next iteration; a zero or
  sign-changing p'Ap stops before x and r move (indefinite matrix).
*/
#ifndef CGLOOP_RULES_H
#define CGLOOP_RULES_H
#include "cgloop.h"
#include <math.h>

#if defined(__CUDACC__)
  #define CGLOOP_HD __host__ __device__
#else
  #define CGLOOP_HD
#endif

CGLOOP_HD static inline int cgloop_finite(double v)
{
  return v == v && v - v == 0.0;
}

CGLOOP_HD static inline double cgloop_sign(double v)
{
  return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0);
}

CGLOOP_HD static inline void cgloop_set_stop(cgloop_state *st, int why)
{
  st->stop    = why;
  st->stop_it = st->it;
}

/* the coefficient of the direction update: 0 at the first iteration */
CGLOOP_HD static inline double cgloop_direction_coefficient(const cgloop_state *st)
{
  return st->it == 0 ? 0.0 : st->beta / st->betaold;
}

/* after p'Ap: the step length, or a stop */
CGLOOP_HD static inline void cgloop_after_curvature(cgloop_state *st, double dpi)
{
  if (!cgloop_finite(dpi)) {
    cgloop_set_stop(st, CGLOOP_NAN_CURVATURE);
    return;
  }
  if (dpi == 0.0 || (st->it > 0 && cgloop_sign(dpi) * cgloop_sign(st->dpi) < 0.0)) {
    cgloop_set_stop(st, CGLOOP_INDEF_MAT);
    return;
  }
  st->dpi   = dpi;
  st->alpha = st->beta / dpi;
}

/* records the norm of the iteration just done, counts the iteration and mirrors the host's tolerance test (a norm that
   is not finite stops too: the host decides what it means); 1 when the loop stops there */
CGLOOP_HD static inline int cgloop_record_norm(cgloop_state *st, double dp)
{
  st->hist[st->it % CGLOOP_RING] = dp;
  st->it++;
  if (!cgloop_finite(dp) || (st->test_tol && st->it >= st->first_test && (dp <= st->ttol || dp >= st->dtol))) {
    cgloop_set_stop(st, CGLOOP_STOP_TEST);
    return 1;
  }
  return 0;
}

/* after the step: zr = z'r, nrm2 = the squared norm (z'z or r'r, by the norm type); records the iteration's norm */
CGLOOP_HD static inline void cgloop_after_step(cgloop_state *st, cgloop_norm norm, double zr, double nrm2)
{
  double dp;

  switch (norm) {
  case CGLOOP_NORM_NATURAL:
    dp = sqrt(fabs(zr));
    break;
  case CGLOOP_NORM_NONE:
    dp = 0.0;
    break;
  default:
    dp = sqrt(nrm2);
  }
  st->betaold = st->beta;
  st->beta    = zr;
  if (cgloop_record_norm(st, dp)) return;
  if (st->it >= st->max_it) cgloop_set_stop(st, CGLOOP_STOP_MAXIT);
  else if (!cgloop_finite(zr)) cgloop_set_stop(st, CGLOOP_NAN_DOT);
  else if (zr == 0.0) cgloop_set_stop(st, CGLOOP_BETA_ZERO);
  else if (zr * st->betaold < 0.0) cgloop_set_stop(st, CGLOOP_INDEF_PC);
}
#endif
