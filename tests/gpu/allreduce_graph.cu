/*
  allreduce_graph.cu - what one reduction of the Krylov loop costs per iteration inside a CUDA graph on several GPUs:
  the loop's reduction pass (a grid of blocks summing into partials, the last block writing the totals), NCCL's
  all-reduce of those totals, the one-thread kernel that runs the scalar rule on them.  Each row captures ITERS such
  iterations as one graph; the rows' graphs are launched in turn, ROUNDS times REPS launches each, and each row prints
  the median over its launches of the slowest rank's time per iteration (CUDA events, the graph enqueued behind a
  short spin kernel so that the host's launch is not timed):

    pass                       the reduction pass alone (what one GPU pays)
    pass + rule                ... and the rule's kernel
    pass + allreduce + rule    what the loop runs on several ranks
    pass + allreduce           without the rule's kernel (the rule folded into the next pass)
    ... symmetric              the same with the totals in NCCL's symmetric memory (ncclMemAlloc +
                               ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC), NCCL >= 2.27; NCCL_DEBUG=INFO says
                               whether its symmetric kernels ran)

  Usage: mpiexec -n 2 allreduce_graph [N]   (N: the vector length the pass sums, default 8.4M)
  NCCL is loaded at run time (libnccl.so.2 from LD_LIBRARY_PATH), as the library loads it.
*/
#include "cgloop_cuda_impl.h" /* the loop's block sums and constants */
#include <mpi.h>
#include <nccl.h>
#include <dlfcn.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) \
  do { \
    cudaError_t e_ = (x); \
    if (e_ != cudaSuccess) { \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1); \
    } \
  } while (0)
#define NK(x) \
  do { \
    ncclResult_t r_ = (x); \
    if (r_ != ncclSuccess) { \
      fprintf(stderr, "%s:%d %s: NCCL error %d\n", __FILE__, __LINE__, #x, (int)r_); \
      MPI_Abort(MPI_COMM_WORLD, 1); \
    } \
  } while (0)

static struct {
  decltype(&ncclGetUniqueId)          get_unique_id;
  decltype(&ncclCommInitRank)         init_rank;
  decltype(&ncclAllReduce)            all_reduce;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  decltype(&ncclMemAlloc)             mem_alloc;
  decltype(&ncclMemFree)              mem_free;
  decltype(&ncclCommWindowRegister)   win_register;
  decltype(&ncclCommWindowDeregister) win_deregister;
#endif
  decltype(&ncclCommDestroy)          destroy;
  decltype(&ncclGetVersion)           version;
} nccl;

#define THREADS CGLOOP_THREADS
#define MAX_BLOCKS CGLOOP_MAX_BLOCKS

__global__ static void pass_kernel(long long n, const double *p, const double *w, double *partial, unsigned *arrived, double *sums)
{
  __shared__ double sh[THREADS];
  __shared__ bool   last;
  double            v = 0.0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) v += p[i] * w[i];
  v = cgloop_block_sum(v, sh);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(arrived, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __syncthreads();
  v = cgloop_total(partial, sh);
  if (threadIdx.x == 0) {
    sums[0] = v;
    sums[1] = 1.0;
    *arrived = 0;
  }
}

/* keeps the GPU busy while the host enqueues the timed graph */
__global__ static void spin_kernel(long long cycles)
{
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) { }
}

__global__ static void rule_kernel(const double *sums, double *state)
{
  state[0] = sums[0] / (sums[1] + 1.0);
  state[1] += 1.0;
}

enum { PASS, PASS_RULE, PASS_AR_RULE, PASS_AR, PASS_SAR_RULE, PASS_SAR, NROWS };
static const char *row_name[NROWS] = {"pass", "pass + rule", "pass + allreduce + rule", "pass + allreduce", "pass + allreduce + rule, symmetric", "pass + allreduce, symmetric"};

int main(int argc, char **argv)
{
  int       rank, size, ndev;
  long long n     = argc > 1 ? atoll(argv[1]) : 8388608LL;
  const int ITERS = 400, REPS = 7, ROUNDS = 3;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CK(cudaGetDeviceCount(&ndev));
  CK(cudaSetDevice(rank % ndev));
  void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "NCCL not found: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#define SYM(f, s) *(void **)&nccl.f = dlsym(lib, #s)
  SYM(get_unique_id, ncclGetUniqueId);
  SYM(init_rank, ncclCommInitRank);
  SYM(all_reduce, ncclAllReduce);
  SYM(destroy, ncclCommDestroy);
  SYM(version, ncclGetVersion);
  if (!nccl.get_unique_id || !nccl.init_rank || !nccl.all_reduce || !nccl.destroy || !nccl.version) {
    fprintf(stderr, "the NCCL loaded lacks a function this benchmark needs\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int ver = 0;
  NK(nccl.version(&ver));
  ncclUniqueId id;
  if (rank == 0) NK(nccl.get_unique_id(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  NK(nccl.init_rank(&comm, size, id, rank));

  double   *p, *w, *partial, *sums, *state, *ssums = NULL;
  unsigned *arrived;
  CK(cudaMalloc(&p, n * sizeof(double)));
  CK(cudaMalloc(&w, n * sizeof(double)));
  CK(cudaMemset(p, 0, n * sizeof(double)));
  CK(cudaMemset(w, 0, n * sizeof(double)));
  CK(cudaMalloc(&partial, MAX_BLOCKS * sizeof(double)));
  CK(cudaMalloc(&sums, 4 * sizeof(double)));
  CK(cudaMalloc(&state, 4 * sizeof(double)));
  CK(cudaMalloc(&arrived, sizeof(unsigned)));
  CK(cudaMemset(arrived, 0, sizeof(unsigned)));
  /* NCCL's symmetric memory where every rank's NCCL has it (its registration is collective) */
  int have_sym = 0, all_sym = 0;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  ncclWindow_t win = NULL;
  SYM(mem_alloc, ncclMemAlloc);
  SYM(mem_free, ncclMemFree);
  SYM(win_register, ncclCommWindowRegister);
  SYM(win_deregister, ncclCommWindowDeregister);
  have_sym = nccl.mem_alloc && nccl.mem_free && nccl.win_register && nccl.win_deregister;
#endif
  MPI_Allreduce(&have_sym, &all_sym, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  if (all_sym) {
    NK(nccl.mem_alloc((void **)&ssums, 4096));
    NK(nccl.win_register(comm, ssums, 4096, &win, NCCL_WIN_COLL_SYMMETRIC));
  }
#endif
  int nblocks = (int)std::min<long long>((n + THREADS - 1) / THREADS, MAX_BLOCKS);

  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  if (rank == 0) printf("# NCCL %d, %d ranks, n = %lld per rank, %d blocks, %d iterations per graph, median of %d rounds x %d launches of the slowest rank's time\n", ver, size, n, nblocks, ITERS, ROUNDS, REPS);
  if (rank == 0) printf("%-40s %12s\n", "per iteration", "us");
  cudaGraphExec_t                  exec[NROWS] = {NULL};
  std::vector<std::vector<double>> t(NROWS);
  for (int row = 0; row < NROWS; row++) {
    const bool    sym  = row >= PASS_SAR_RULE;
    const bool    ar   = row >= PASS_AR_RULE;
    const bool    rule = row == PASS_RULE || row == PASS_AR_RULE || row == PASS_SAR_RULE;
    double *const buf  = sym ? ssums : sums;
    cudaGraph_t   g;
    if (sym && !all_sym) continue;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int it = 0; it < ITERS; it++) {
      pass_kernel<<<nblocks, THREADS, 0, s>>>(n, p, w, partial, arrived, buf);
      if (ar) NK(nccl.all_reduce(buf, buf, 2, ncclDouble, ncclSum, comm, s));
      if (rule) rule_kernel<<<1, 1, 0, s>>>(buf, state);
    }
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec[row], g, 0));
    CK(cudaGraphDestroy(g));
    CK(cudaGraphUpload(exec[row], s));
    CK(cudaGraphLaunch(exec[row], s)); /* warm-up */
  }
  CK(cudaStreamSynchronize(s));
  for (int round = 0; round < ROUNDS; round++)
    for (int row = 0; row < NROWS; row++)
      for (int r = 0; r < REPS && exec[row]; r++) {
        float  ms;
        double mine, slowest;
        MPI_Barrier(MPI_COMM_WORLD);
        spin_kernel<<<1, 1, 0, s>>>(200000);
        CK(cudaEventRecord(e0, s));
        CK(cudaGraphLaunch(exec[row], s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        mine = 1e3 * ms / ITERS;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[row].push_back(slowest);
      }
  for (int row = 0; row < NROWS; row++) {
    if (!exec[row]) {
      if (rank == 0) printf("%-40s %12s\n", row_name[row], "n/a");
      continue;
    }
    std::sort(t[row].begin(), t[row].end());
    if (rank == 0) printf("%-40s %12.2f\n", row_name[row], t[row][t[row].size() / 2]);
    CK(cudaGraphExecDestroy(exec[row]));
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  if (win) NK(nccl.win_deregister(comm, win));
  if (ssums) NK(nccl.mem_free(ssums));
#endif
  NK(nccl.destroy(comm));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(p));
  CK(cudaFree(w));
  CK(cudaFree(partial));
  CK(cudaFree(sums));
  CK(cudaFree(state));
  CK(cudaFree(arrived));
  MPI_Finalize();
  return 0;
}
