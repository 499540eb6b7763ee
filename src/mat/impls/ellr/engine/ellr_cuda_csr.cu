/* ellr_cuda_csr.cu - set-up and launches of the CSR kernel families (adaptive CSR-vector, IPCSR). */
#include "ellr_cuda_csr.cuh"
#include "ellr_cuda_csr_kernels.cuh"
#include "ellr_cuda_util.cuh"
#include "ellr_cuda_scan.cuh"

#include <climits>

int ellr_csr_vector_threads(double meanrowlen)
{
  int T = 1;
  while (T < 32 && 1.5 * T < meanrowlen) T *= 2;
  return T;
}

ellr_status ellr_cuda_csr_prepare(ellr_csr_dev *c, cudaStream_t s)
{
  if (c->family != ELLR_FAMILY_IPCSR || c->blocks || c->nrows == 0) return ELLR_OK;
  const int32_t n     = c->nrows;
  char         *flag  = NULL;
  int32_t       nsel  = 0;
  ellr_status   st    = salloc(&flag, (size_t)n + 1, s, "the IPCSR row-block flags");
  if (st) return st;
  ellr_kernel_ipcsr_flags<<<(unsigned)(((int64_t)n + 256) / 256), 256, 0, s>>>(n, c->rowptr, flag);
  const cudaError_t e = cudaPeekAtLastError();
  if (e != cudaSuccess) st = cu_err(e, "ellr_kernel_ipcsr_flags", __LINE__);
  if (!st) st = ellr_cuda_select_flagged(flag, n + 1, s, &c->blocks, &nsel, "the IPCSR row blocks");
  sfree(&flag, s);
  if (st) return st;
  c->nblocks = nsel - 1; /* the list ends with nrows */
  return ELLR_OK;
}

template <int T>
static void launch_vector(bool addz, unsigned grid, unsigned block, cudaStream_t s, const ellr_csr_kargs &a)
{
  if (addz) ellr_kernel_csr_vector<T, true><<<grid, block, 0, s>>>(a);
  else ellr_kernel_csr_vector<T, false><<<grid, block, 0, s>>>(a);
}

template <int T>
static void launch_transpose(unsigned grid, unsigned block, cudaStream_t s, const ellr_csr_kargs &a)
{
  ellr_kernel_csr_transpose<T><<<grid, block, 0, s>>>(a);
}

ellr_status ellr_cuda_csr_mult(const ellr_csr_dev *c, const double *x, const double *z, double *y, int transpose, int block_size, cudaStream_t s)
{
  const int32_t nout = transpose ? c->ncols : c->nrows_out;
  if (nout == 0) return ELLR_OK;
  if (transpose || ((c->rows || c->nrows_out > c->nrows) && z != y)) {
    /* y = z (or 0) first: the transpose adds into y; compressed rows write only their rows */
    if (!z) CU(cudaMemsetAsync(y, 0, (size_t)nout * sizeof(double), s));
    else if (z != y) CU(cudaMemcpyAsync(y, z, (size_t)nout * sizeof(double), cudaMemcpyDeviceToDevice, s));
    z = y;
  }
  if (c->nrows == 0) return ELLR_OK;
  ellr_csr_kargs a;
  a.nrows  = c->nrows;
  a.rowptr = c->rowptr;
  a.col    = c->col;
  a.val    = c->val;
  a.rows   = c->rows;
  a.blocks = c->blocks;
  a.x      = x;
  a.z      = z;
  a.y      = y;
  const bool addz = z != NULL;
  const int  bs   = block_size > 0 ? block_size : 256;
  if (!transpose && c->family == ELLR_FAMILY_IPCSR) {
    if (!c->blocks) return ellr_error(ELLR_ERR_ARG, "ellr_cuda_csr_mult: IPCSR without row blocks (ellr_cuda_csr_prepare)");
    if (addz) ellr_kernel_ipcsr<true><<<(unsigned)c->nblocks, ELLR_IPCSR_THREADS, 0, s>>>(a);
    else ellr_kernel_ipcsr<false><<<(unsigned)c->nblocks, ELLR_IPCSR_THREADS, 0, s>>>(a);
    CU(cudaPeekAtLastError());
    return ELLR_OK;
  }
  const int     T      = c->T; /* CSR-vector's lanes per row; IPCSR's transpose takes the same mapping */
  const int64_t blocks = ((int64_t)c->nrows * T + bs - 1) / bs;
  if (blocks > INT_MAX) return ellr_error(ELLR_ERR_SIZE, "ellr_cuda_csr_mult: %lld blocks are too many", (long long)blocks);
  switch (T) {
#define ELLR_CSR_CASE(TT) \
  case TT: \
    if (transpose) launch_transpose<TT>((unsigned)blocks, (unsigned)bs, s, a); \
    else launch_vector<TT>(addz, (unsigned)blocks, (unsigned)bs, s, a); \
    break;
    ELLR_CSR_CASE(1)
    ELLR_CSR_CASE(2)
    ELLR_CSR_CASE(4)
    ELLR_CSR_CASE(8)
    ELLR_CSR_CASE(16)
    ELLR_CSR_CASE(32)
#undef ELLR_CSR_CASE
  default:
    return ellr_error(ELLR_ERR_ARG, "ellr_cuda_csr_mult: %d lanes per row", T);
  }
  CU(cudaPeekAtLastError());
  return ELLR_OK;
}

void ellr_cuda_csr_probe(const ellr_csr_dev *c)
{
  cudaFuncAttributes fa;
  cudaError_t        e;
  if (c->family == ELLR_FAMILY_IPCSR) e = cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_ipcsr<false>);
  else switch (c->T) {
    case 1: e = cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_csr_vector<1, false>); break;
    case 2: e = cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_csr_vector<2, false>); break;
    case 4: e = cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_csr_vector<4, false>); break;
    case 8: e = cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_csr_vector<8, false>); break;
    case 16: e = cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_csr_vector<16, false>); break;
    default: e = cudaFuncGetAttributes(&fa, (const void *)ellr_kernel_csr_vector<32, false>); break;
    }
  if (e != cudaSuccess) (void)cudaGetLastError(); /* only the probe's own error: one pending from others' work stays */
}

ellr_status ellr_cuda_csr_free(ellr_csr_dev *c)
{
  ellr_status st = dfree(&c->blocks);
  c->nblocks     = 0;
  return st;
}
