/*
  bcgsloop_host.c - the BiCGStab passes of bcgsloop.h on host arrays: the reference for the CUDA passes and the loop
  of CPU-only runs.  Sums run in index order.
*/
#include "bcgsloop_rules.h"

void bcgsloop_host_direction(const cgloop_shape *s, cgloop_state *st, const double *r, const double *v, double *p)
{
  double beta, c;

  if (st->stop) return;
  bcgsloop_direction_coefficients(st, &beta, &c);
  for (long long i = 0; i < s->n; i++) p[i] = r[i] + c * v[i] + beta * p[i];
}

void bcgsloop_host_alpha(const cgloop_shape *s, cgloop_state *st, double *v, const double *d, const double *rp)
{
  double d1 = 0.0;

  if (st->stop) return;
  for (long long i = 0; i < s->n; i++) {
    if (s->pc == CGLOOP_PC_DIAGONAL) v[i] = d[i] * v[i];
    d1 += v[i] * rp[i];
  }
  bcgsloop_after_alpha(st, d1);
}

void bcgsloop_host_residual(const cgloop_shape *s, cgloop_state *st, const double *r, const double *v, double *sv)
{
  const double a = st->alpha;

  if (st->stop) return;
  for (long long i = 0; i < s->n; i++) sv[i] = r[i] - a * v[i];
}

void bcgsloop_host_omega(const cgloop_shape *s, cgloop_state *st, const double *sv, double *t, const double *d)
{
  double st_ = 0.0, tt = 0.0, ss = 0.0;

  if (st->stop) return;
  for (long long i = 0; i < s->n; i++) {
    if (s->pc == CGLOOP_PC_DIAGONAL) t[i] = d[i] * t[i];
    st_ += sv[i] * t[i];
    tt += t[i] * t[i];
    ss += sv[i] * sv[i];
  }
  bcgsloop_after_omega(st, st_, tt, ss);
}

void bcgsloop_host_step(const cgloop_shape *s, cgloop_state *st, double *x, double *r, const double *p, const double *sv, const double *t, const double *rp)
{
  const double a = st->alpha, w = st->omega;
  double       rr = 0.0, rn = 0.0;

  if (st->stop) return;
  for (long long i = 0; i < s->n; i++) {
    const double ri = sv[i] - w * t[i];
    x[i]            = a * p[i] + w * sv[i] + x[i];
    r[i]            = ri;
    rr += ri * ri;
    rn += ri * rp[i];
  }
  bcgsloop_after_step(st, s->norm, rr, rn);
}
