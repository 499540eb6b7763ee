/*
  ellr_cuda_kernels.cuh - the one kernel family of the CUDA backend's sliced product (included by
  ellr_cuda_mult_launch.cuh only, for the ellr_cuda_mult_t*.cu modules; the layout's fill is in
  ellr_cuda_fill_kernels.cuh).

  Layout (ellr.h): entry k of stored row i, slice s = i / C, sits at
      slice_start[s] + (k / T) * C * T + (i % C) * T + k % T.
  Write j = k / T (the "column block") and p = (i % C) * T + k % T (the position inside a block of
  C*T consecutive words): thread (row i, lane t) reads p + j * C*T for j = 0, 1, ...

  Two ways of dealing that work to threads, same inner loop, templated on
     T      threads per row (1..32, warp-shuffle reduction over the T lanes of a row),
     ADDZ   y = A x + z (z may alias y),
     TRANS  y += A^T x (atomicAdd into y, y set to z or 0 before: the order of the additions, hence the
            rounding, may change between products -- the binding's default keeps a stored transpose instead),
     LEN    stop each row at its own length (ELLPACK-R's rowlen) rather than at the slice width
            (the device pads with column -1, skipped, so width mode reads no rowlen and is exact
            for any x, including Inf/NaN entries),
     LD     0: matrix words through the read-only path (__ldg); 1: streaming loads (__ldcs).
  - rows:   thread group of T lanes per row, all column blocks of the row (ELLR-T);
            any C.
  - chunks: work items (slice, first column block); a warp takes 32 consecutive words of each
            column block of its item, G = C*T/32 warps per item; slices wider than J column
            blocks are cut into several items, each writing its rows' partial sums apart, which a second
            kernel adds in item order (ellr_kernel_join_split: the same bits in every product, no atomics).
            Needs C*T % 32 == 0.  Balances matrices
            with a few very long rows (power-law) without changing the layout.
  Column indices (ellr.h's ellr_cols): per slice either 16-bit offsets from the slice's base column (padding
  0xFFFF) or 32-bit indices (padding -1), at cw + cstart[s] in the slice's own layout order; the choice is
  warp-uniform whenever a warp's rows share a slice, and each kernel holds the loop for both index widths.
  x is read through the read-only cache (__ldg).  Matrix words are read once.
*/
#ifndef ELLR_CUDA_KERNELS_CUH
#define ELLR_CUDA_KERNELS_CUH

#include <cstdint>
#include <cuda_runtime.h>

#include "ellr_cuda_kargs.cuh"

template <int LD>
__device__ __forceinline__ int32_t ellr_ldi(const int32_t *p)
{
  if (LD == 1) return __ldcs(p);
  return __ldg(p);
}
template <int LD>
__device__ __forceinline__ uint16_t ellr_ldi(const uint16_t *p)
{
  if (LD == 1) return __ldcs(p);
  return __ldg(p);
}

/* The column of a stored index: 32-bit as it is; 16-bit offset from base (with CHECKCOL, padding -> -1). */
template <bool CHECKCOL>
__device__ __forceinline__ int32_t ellr_colof(int32_t raw, int32_t) { return raw; }
template <bool CHECKCOL>
__device__ __forceinline__ int32_t ellr_colof(uint16_t raw, int32_t base)
{
  if (CHECKCOL && raw == 0xFFFFu) return -1;
  return base + (int32_t)raw;
}
template <int LD>
__device__ __forceinline__ double ellr_ldd(const double *p)
{
  if (LD == 1) return __ldcs(p);
  return __ldg(p);
}

/* Column blocks of a slice: (s1 - s0) / CT with 32-bit division when it fits. */
__device__ __forceinline__ int32_t ellr_slice_blocks(int64_t s0, int64_t s1, int64_t CT)
{
  const uint64_t d = (uint64_t)(s1 - s0);
  if (((d | (uint64_t)CT) >> 32) == 0) return (int32_t)((uint32_t)d / (uint32_t)CT);
  return (int32_t)(d / (uint64_t)CT);
}

/* x[c]; with CHECKCOL, padding (c = -1) gives 0.0: the load of x[0] is unconditional and the
   select comes after it (a predicated load doubled the registers), so Inf/NaN in x stay out. */
template <bool CHECKCOL>
__device__ __forceinline__ double ellr_ldx(const double *__restrict__ x, int32_t c)
{
  if (!CHECKCOL) return __ldg(x + c);
  const double v = __ldg(x + max(c, 0));
  return c >= 0 ? v : 0.0;
}

/* sum over j < nit of val[j*CT] * x[col[j*CT]], four column blocks of loads in flight, then the last 1-3 column
   blocks with every load issued before the first is used (a 7-point stencil's row is 4 + 3: one more round trip
   to memory per column block otherwise).  The sum runs in column-block order.  Measured on the H100 and not kept
   (doc/performance.md, "Automatic T for small matrices"): issuing up to 7 column blocks at once, as a last group or
   for whole short lanes, took 2d5 1.07-1.10x and short scattered rows 1.13x faster but slowed 3d27 by 4-6%, the
   small matrices by 5-18% and the per-slice power laws by up to 15% (the chunks kernel's code grew with it). */
template <bool CHECKCOL, int LD, class I>
__device__ __forceinline__ double ellr_dot(const I *__restrict__ cp, int32_t base, const double *__restrict__ vp, int64_t CT, int nit, const double *__restrict__ x)
{
  double sum = 0.0;
  int    j   = 0;
  for (; nit - j > 3; j += 4) {
    const int32_t c0 = ellr_colof<CHECKCOL>(ellr_ldi<LD>(cp), base), c1 = ellr_colof<CHECKCOL>(ellr_ldi<LD>(cp + CT), base);
    const int32_t c2 = ellr_colof<CHECKCOL>(ellr_ldi<LD>(cp + 2 * CT), base), c3 = ellr_colof<CHECKCOL>(ellr_ldi<LD>(cp + 3 * CT), base);
    const double  v0 = ellr_ldd<LD>(vp), v1 = ellr_ldd<LD>(vp + CT), v2 = ellr_ldd<LD>(vp + 2 * CT), v3 = ellr_ldd<LD>(vp + 3 * CT);
    const double  x0 = ellr_ldx<CHECKCOL>(x, c0);
    const double  x1 = ellr_ldx<CHECKCOL>(x, c1);
    const double  x2 = ellr_ldx<CHECKCOL>(x, c2);
    const double  x3 = ellr_ldx<CHECKCOL>(x, c3);
    sum = fma(v0, x0, sum);
    sum = fma(v1, x1, sum);
    sum = fma(v2, x2, sum);
    sum = fma(v3, x3, sum);
    cp += 4 * CT;
    vp += 4 * CT;
  }
  const int m = nit - j; /* 0..3 */
  if (m > 0) {
    int32_t c[3];
    double  v[3];
#pragma unroll
    for (int k = 0; k < 3; k++) {
      c[k] = 0;
      v[k] = 0.0;
      if (k < m) {
        c[k] = ellr_colof<CHECKCOL>(ellr_ldi<LD>(cp + k * CT), base);
        v[k] = ellr_ldd<LD>(vp + k * CT);
      }
    }
#pragma unroll
    for (int k = 0; k < 3; k++)
      if (k < m) sum = fma(v[k], ellr_ldx<CHECKCOL>(x, c[k]), sum);
  }
  return sum;
}

/* The product of one thread's entries of slice s, from offset q inside the slice (values at vp), with the
   slice's index width. */
template <bool CHECKCOL, int LD>
__device__ __forceinline__ double ellr_dot_slice(const ellr_kargs &a, int32_t s, int64_t q, const double *__restrict__ vp, int64_t CT, int nit)
{
  const int32_t   base = a.cbase[s];
  const uint16_t *cw   = a.cw + a.cstart[s];
  if (base >= 0) return ellr_dot<CHECKCOL, LD>(cw + q, base, vp, CT, nit, a.x);
  return ellr_dot<CHECKCOL, LD>(reinterpret_cast<const int32_t *>(cw) + q, 0, vp, CT, nit, a.x);
}

/* y[c] += val * xr over the row's entries (transpose). */
template <bool CHECKCOL, class I>
__device__ __forceinline__ void ellr_scatter(const I *__restrict__ cp, int32_t base, const double *__restrict__ vp, int64_t CT, int nit, double xr, double *y)
{
  for (int j = 0; j < nit; j++) {
    const int32_t c = ellr_colof<CHECKCOL>(__ldg(cp), base);
    const double  v = __ldg(vp);
    if (!CHECKCOL || c >= 0) atomicAdd(y + c, v * xr);
    cp += CT;
    vp += CT;
  }
}

template <bool CHECKCOL>
__device__ __forceinline__ void ellr_scatter_slice(const ellr_kargs &a, int32_t s, int64_t q, const double *__restrict__ vp, int64_t CT, int nit, double xr)
{
  const int32_t   base = a.cbase[s];
  const uint16_t *cw   = a.cw + a.cstart[s];
  if (base >= 0) ellr_scatter<CHECKCOL>(cw + q, base, vp, CT, nit, xr, a.y);
  else ellr_scatter<CHECKCOL>(reinterpret_cast<const int32_t *>(cw) + q, 0, vp, CT, nit, xr, a.y);
}

/* The sum over the T lanes of each row (T = 0: the warp-uniform tr, each slice's own). */
template <int T>
__device__ __forceinline__ double ellr_reduce(double sum, int tr = T)
{
  if constexpr (T == 0) {
    for (int o = tr / 2; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o, tr);
  } else {
#pragma unroll
    for (int o = T / 2; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o, T);
  }
  return sum;
}

/* Entries of lane t in a row of length len, T lanes per row. */
__device__ __forceinline__ int ellr_lane_blocks(int len, int t, int T)
{
  return len > t ? (len - t + T - 1) / T : 0;
}

/* ---- rows: T lanes per row, whole rows ---------------------------------------------------- */
template <int T, bool ADDZ, bool TRANS, bool LEN, int LD>
__global__ void __launch_bounds__(1024) ellr_kernel_rows(const ellr_kargs a)
{
  const int     rpb = blockDim.x / T;
  const int32_t i   = blockIdx.x * rpb + threadIdx.x / T;
  const int     t   = threadIdx.x % T;
  if (TRANS) {
    if (i >= a.nrows) return;
  } else if ((int32_t)(blockIdx.x * rpb + (threadIdx.x & ~31u) / T) >= a.nrows) return; /* whole warp past the end */
  const bool    active = i < a.nrows;
  const int32_t s      = active ? i / a.C : 0;
  const int32_t r      = i - s * a.C;
  const int64_t s0     = a.slice_start[s];
  int           nit;
  if (LEN) nit = ellr_lane_blocks(active ? a.rowlen[i] : 0, t, T);
  else nit = active ? ellr_slice_blocks(s0, a.slice_start[s + 1], a.CT) : 0;
  const int64_t q   = (int64_t)r * T + t;
  if (TRANS) {
    const double xr = __ldg(a.x + (a.perm ? a.perm[i] : i));
    ellr_scatter_slice<!LEN>(a, s, q, a.val + s0 + q, a.CT, nit, xr);
    return;
  }
  double sum = ellr_dot_slice<!LEN, LD>(a, s, q, a.val + s0 + q, a.CT, nit);
  sum        = ellr_reduce<T>(sum);
  if (t == 0 && active) {
    const int32_t orow = a.perm ? a.perm[i] : i;
    a.y[orow]          = ADDZ ? a.z[orow] + sum : sum;
  }
}

/* ---- chunks: warps over (slice, column-block range) work items ------------------------------ */
/* T = 0: each slice's own T (ellr.h's ELLR_THREADS_PER_SLICE), one work item per warp (a.witems) carrying it;
   the warp's 32 lanes are 32/T rows of one slice, so the column block's words stay consecutive for every T and the
   reduction's width is warp-uniform.  Lanes past the slice's C*T words (C not a multiple of 32/T) idle. */
template <int T, bool ADDZ, bool TRANS, bool LEN, int LD>
__global__ void __launch_bounds__(1024) ellr_kernel_chunks(const ellr_kargs a)
{
  const int     lane = threadIdx.x & 31;
  const int64_t gw   = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  int32_t       s, j0, q, tr;
  if (T == 0) {
    if (gw >= a.nitems) return; /* warp-uniform */
    const int4 it = a.witems[gw];
    s             = it.x;
    j0            = it.y;
    q             = it.z;
    tr            = it.w;
  } else {
    const int64_t item = gw / a.G;
    if (item >= a.nitems) return; /* warp-uniform */
    const int2 it = a.items[item];
    s             = it.x;
    j0            = it.y;
    q             = (int)(gw - item * a.G);
    tr            = T;
  }
  const int64_t CT     = T ? a.CT : (int64_t)a.C * tr;
  const int64_t s0     = a.slice_start[s];
  const int32_t Js     = ellr_slice_blocks(s0, a.slice_start[s + 1], CT);
  const int32_t j1     = min(j0 + a.J, Js);
  const bool    split  = Js > a.J;
  const int     p      = q * 32 + lane;
  const int     r      = p / tr, t = p & (tr - 1);
  const int64_t i64    = (int64_t)s * a.C + r;
  const bool    active = i64 < a.nrows && (T != 0 || r < a.C);
  const int32_t i      = (int32_t)i64;
  int           jend;
  if (LEN) jend = min(j1, ellr_lane_blocks(active ? a.rowlen[i] : 0, t, tr));
  else jend = active ? j1 : j0;
  const int     nit = max(jend - j0, 0);
  const int64_t qs  = (int64_t)j0 * CT + p;
  if (TRANS) {
    if (!active || nit == 0) return;
    const double xr = __ldg(a.x + (a.perm ? a.perm[i] : i));
    ellr_scatter_slice<!LEN>(a, s, qs, a.val + s0 + qs, CT, nit, xr);
    return;
  }
  double sum = ellr_dot_slice<!LEN, LD>(a, s, qs, a.val + s0 + qs, CT, nit);
  sum        = ellr_reduce<T>(sum, tr);
  if (t == 0 && active) {
    const int32_t orow = a.perm ? a.perm[i] : i;
    if (split) a.part[a.part_off[s] + (int64_t)(j0 / a.J) * a.C + r] = sum; /* joined in order by ellr_kernel_join_split */
    else a.y[orow] = ADDZ ? a.z[orow] + sum : sum;
  }
}

#endif
