/*
  cgloop_host.c - the passes of cgloop.h on host arrays: the reference for the CUDA passes and the loop of CPU-only
  runs.  Sums run in index order.
*/
#include "cgloop_rules.h"

void cgloop_host_direction(const cgloop_shape *s, cgloop_state *st, const double *r, const double *d, const double *z, double *p)
{
  double b;

  if (st->stop) return;
  b = cgloop_direction_coefficient(st);
  for (long long i = 0; i < s->n; i++) {
    const double zi = s->pc == CGLOOP_PC_GENERAL ? z[i] : (s->pc == CGLOOP_PC_DIAGONAL ? d[i] * r[i] : r[i]);
    p[i]            = zi + b * p[i];
  }
}

void cgloop_host_curvature(const cgloop_shape *s, cgloop_state *st, const double *p, const double *w)
{
  double dpi = 0.0;

  if (st->stop) return;
  for (long long i = 0; i < s->n; i++) dpi += p[i] * w[i];
  cgloop_after_curvature(st, dpi);
}

void cgloop_host_step(const cgloop_shape *s, cgloop_state *st, double *x, double *r, const double *p, const double *w, const double *d)
{
  const double a  = st->alpha;
  double       zr = 0.0, nrm2 = 0.0, rr = 0.0;

  if (st->stop) return;
  for (long long i = 0; i < s->n; i++) {
    double ri, zi;
    x[i] += a * p[i];
    ri   = r[i] - a * w[i];
    r[i] = ri;
    rr += ri * ri;
    if (s->pc == CGLOOP_PC_GENERAL) continue;
    zi = s->pc == CGLOOP_PC_DIAGONAL ? d[i] * ri : ri;
    zr += zi * ri;
    nrm2 += s->norm == CGLOOP_NORM_UNPRECONDITIONED ? ri * ri : zi * zi;
  }
  if (s->pc == CGLOOP_PC_GENERAL) st->rr = rr;
  else cgloop_after_step(st, s->norm, zr, nrm2);
}

void cgloop_host_close(const cgloop_shape *s, cgloop_state *st, const double *r, const double *z)
{
  double zr = 0.0, zz = 0.0;

  if (st->stop) return;
  for (long long i = 0; i < s->n; i++) {
    zr += z[i] * r[i];
    zz += z[i] * z[i];
  }
  cgloop_after_step(st, s->norm, zr, s->norm == CGLOOP_NORM_UNPRECONDITIONED ? st->rr : zz);
}

void cgloop_host_jacobi_fix(long long n, double *d)
{
  for (long long i = 0; i < n; i++)
    if (d[i] == 0.0) d[i] = 1.0;
}
