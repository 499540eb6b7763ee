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

/* Each rule in two parts: its outcome (a stop, or 0, and the scalars it sets), which changes nothing and so may be
   derived by every block of the pass that needs it, and the rule proper, which applies that outcome to the state. */

/* the curvature's outcome for p'Ap = dpi: a stop, or 0 with the step length in *alpha */
CGLOOP_HD static inline int cgloop_curvature_outcome(const cgloop_state *st, double dpi, double *alpha)
{
  if (!cgloop_finite(dpi)) return CGLOOP_NAN_CURVATURE;
  if (dpi == 0.0 || (st->it > 0 && cgloop_sign(dpi) * cgloop_sign(st->dpi) < 0.0)) return CGLOOP_INDEF_MAT;
  *alpha = st->beta / dpi;
  return 0;
}

/* after p'Ap: the step length, or a stop */
CGLOOP_HD static inline void cgloop_after_curvature(cgloop_state *st, double dpi)
{
  double    alpha = 0.0;
  const int why   = cgloop_curvature_outcome(st, dpi, &alpha);

  if (why) {
    cgloop_set_stop(st, why);
    return;
  }
  st->dpi   = dpi;
  st->alpha = alpha;
}

/* the host's tolerance test, mirrored, for the norm dp of iteration it (counted from 1); a norm that is not finite
   stops too (the host decides what it means) */
CGLOOP_HD static inline int cgloop_norm_stops(const cgloop_state *st, long long it, double dp)
{
  return !cgloop_finite(dp) || (st->test_tol && it >= st->first_test && (dp <= st->ttol || dp >= st->dtol));
}

/* records the norm of the iteration just done, counts the iteration and mirrors the host's tolerance test; 1 when the
   loop stops there */
CGLOOP_HD static inline int cgloop_record_norm(cgloop_state *st, double dp)
{
  st->hist[st->it % CGLOOP_RING] = dp;
  st->it++;
  if (cgloop_norm_stops(st, st->it, dp)) {
    cgloop_set_stop(st, CGLOOP_STOP_TEST);
    return 1;
  }
  return 0;
}

/* the norm of a CG iteration from zr = z'r and nrm2 = the squared norm (z'z or r'r, by the norm type) */
CGLOOP_HD static inline double cgloop_step_norm(cgloop_norm norm, double zr, double nrm2)
{
  switch (norm) {
  case CGLOOP_NORM_NATURAL:
    return sqrt(fabs(zr));
  case CGLOOP_NORM_NONE:
    return 0.0;
  default:
    return sqrt(nrm2);
  }
}

/* the step's outcome: a stop after this iteration, or 0; the next direction's coefficient is then zr / st->beta */
CGLOOP_HD static inline int cgloop_step_outcome(const cgloop_state *st, cgloop_norm norm, double zr, double nrm2)
{
  const long long it = st->it + 1;

  if (cgloop_norm_stops(st, it, cgloop_step_norm(norm, zr, nrm2))) return CGLOOP_STOP_TEST;
  if (it >= st->max_it) return CGLOOP_STOP_MAXIT;
  if (!cgloop_finite(zr)) return CGLOOP_NAN_DOT;
  if (zr == 0.0) return CGLOOP_BETA_ZERO;
  if (zr * st->beta < 0.0) return CGLOOP_INDEF_PC;
  return 0;
}

/* after the step: records the iteration's norm, beta = zr, and the stop of the outcome */
CGLOOP_HD static inline void cgloop_after_step(cgloop_state *st, cgloop_norm norm, double zr, double nrm2)
{
  const int why = cgloop_step_outcome(st, norm, zr, nrm2);

  st->betaold                     = st->beta;
  st->beta                        = zr;
  st->hist[st->it % CGLOOP_RING] = cgloop_step_norm(norm, zr, nrm2);
  st->it++;
  if (why) cgloop_set_stop(st, why);
}
#endif
