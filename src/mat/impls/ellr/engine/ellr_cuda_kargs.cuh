/* ellr_cuda_kargs.cuh - the sliced product kernels' arguments (ellr_cuda_kernels.cuh), for the launch
   (ellr_cuda_mult.cuh) and for ellr_cuda.cu, which fills them in without the kernels. */
#ifndef ELLR_CUDA_KARGS_CUH
#define ELLR_CUDA_KARGS_CUH

#include <cstdint>
#include <cuda_runtime.h>

struct ellr_kargs {
  int32_t        nrows;       /* rows */
  int32_t        C;           /* slice height */
  int64_t        CT;          /* C * T: words per column block */
  int32_t        G;           /* chunks: warps per item (C*T/32) */
  int32_t        J;           /* chunks: column blocks per item at most */
  int64_t        nitems;      /* chunks: work items */
  const int64_t *slice_start; /* [nslices + 1] */
  const int32_t *rowlen;      /* [nslices * C] */
  const int32_t *perm;        /* [nrows] or NULL */
  const uint16_t *cw;         /* column indices, slice s from cw + cstart[s] */
  const int32_t  *cbase;      /* [nslices]: base column of a 16-bit slice, -1 for 32-bit indices */
  const int64_t  *cstart;     /* [nslices + 1], in 16-bit words */
  const double  *val;         /* [nstored], padding 0 */
  const int2    *items;       /* chunks: {slice, first column block} */
  double         *part;       /* chunks, split slices: each item's row sums, piece p of slice s at part_off[s] + p C */
  const int64_t  *part_off;   /* [nslices]: a split slice's first partial sum (others unused) */
  const int4    *witems;      /* chunks with each slice's own T: one per warp, {slice, first column block, warp of
                                 the slice, the slice's T} */
  const double  *x;
  const double  *z; /* may alias y */
  double        *y;
};

#endif
