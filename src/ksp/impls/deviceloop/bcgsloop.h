/*
  bcgsloop.h - the BiCGStab recurrence (PETSc's KSPBCGS, left preconditioning, real scalars) as fused passes over the
  vectors, sharing the state record, the rules and the CUDA context of cgloop.h.

  One iteration, with rho = (r, rp) already in the state (the previous step's reduction, or the host's first dot):
    direction  p = r + c v + beta p,  beta = (rho / rhoold) (alpha / omegaold), c = -omegaold beta
    product    v = A p                               (the caller's; then B applied by the caller for a general B)
    alpha      v = d .* v for a diagonal B, d1 = (v, rp): alpha = rho / d1; d1 = 0 stops (breakdown)
    residual   s = r - alpha v
    product    t = A s                               (the caller's, as above)
    omega      t = d .* t for a diagonal B, (s, t), (t, t), (s, s): omega = (s, t) / (t, t); (t, t) = 0 stops
               (breakdown) unless s = 0, where the step is x += alpha p and the solve has converged
    step       x += alpha p + omega s, r = s - omega t, with ||r|| (the iteration's norm) and (r, rp) (the next rho)
  The vectors p and v are zero before the first iteration (as KSPBCGS sets them), with rhoold = alpha = omegaold = 1.
*/
#ifndef BCGSLOOP_H
#define BCGSLOOP_H
#include "cgloop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* host passes (arrays of length n; d only for CGLOOP_PC_DIAGONAL) */
void bcgsloop_host_direction(const cgloop_shape *, cgloop_state *, const double *r, const double *v, double *p);
void bcgsloop_host_alpha(const cgloop_shape *, cgloop_state *, double *v, const double *d, const double *rp);
void bcgsloop_host_residual(const cgloop_shape *, cgloop_state *, const double *r, const double *v, double *s);
void bcgsloop_host_omega(const cgloop_shape *, cgloop_state *, const double *s, double *t, const double *d);
void bcgsloop_host_step(const cgloop_shape *, cgloop_state *, double *x, double *r, const double *p, const double *s, const double *t, const double *rp);

/* the same passes on CUDA arrays, on the context's stream (cgloop_cuda_set_shape()); 0 or a cudaError_t */
int bcgsloop_cuda_direction(cgloop_cuda *, const double *r, const double *v, double *p);
int bcgsloop_cuda_alpha(cgloop_cuda *, double *v, const double *d, const double *rp);
int bcgsloop_cuda_residual(cgloop_cuda *, const double *r, const double *v, double *s);
int bcgsloop_cuda_omega(cgloop_cuda *, const double *s, double *t, const double *d);
int bcgsloop_cuda_step(cgloop_cuda *, double *x, double *r, const double *p, const double *s, const double *t, const double *rp);

#ifdef __cplusplus
}
#endif
#endif
