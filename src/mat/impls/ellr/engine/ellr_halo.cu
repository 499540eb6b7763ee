/* ellr_halo.cu - the ghost exchange through NCCL (ellr_halo.h): NCCL loaded at run time, pack, grouped send/receive. */
#include "ellr_halo.h"
#include "ellr_timeline.h"
#include "ellr_cuda.h"
#include "ellr_cuda_util.cuh"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mutex>
#include <sched.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(ELLR_HAVE_NCCL_H)
  #include <nccl.h>

/* The NCCL entry points the library uses, resolved from the loaded library (its header gives their types). */
static struct {
  int         loaded, version;
  char        why[256];
  const char *(*error_string)(ncclResult_t);
  ncclResult_t (*get_version)(int *);
  ncclResult_t (*get_unique_id)(ncclUniqueId *);
  ncclResult_t (*comm_init_rank_config)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
  ncclResult_t (*get_async_error)(ncclComm_t, ncclResult_t *);
  ncclResult_t (*comm_abort)(ncclComm_t);
  ncclResult_t (*group_start)(void);
  ncclResult_t (*group_end)(void);
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
} nccl;
static std::once_flag nccl_once;

static void nccl_load(void)
{
  const char *name = getenv("ELLR_NCCL_LIBRARY");
  void       *lib  = dlopen(name && name[0] ? name : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);

  if (!lib) {
    snprintf(nccl.why, sizeof(nccl.why), "NCCL not found (%s); put its lib folder in LD_LIBRARY_PATH or name the library in ELLR_NCCL_LIBRARY", dlerror());
    return;
  }
  #define NCCL_SYM(field, sym) \
    if (!(*(void **)&nccl.field = dlsym(lib, #sym))) { \
      snprintf(nccl.why, sizeof(nccl.why), "the NCCL loaded lacks %s", #sym); \
      return; \
    }
  NCCL_SYM(error_string, ncclGetErrorString)
  NCCL_SYM(get_version, ncclGetVersion)
  NCCL_SYM(get_unique_id, ncclGetUniqueId)
  NCCL_SYM(comm_init_rank_config, ncclCommInitRankConfig)
  NCCL_SYM(get_async_error, ncclCommGetAsyncError)
  NCCL_SYM(comm_abort, ncclCommAbort)
  NCCL_SYM(group_start, ncclGroupStart)
  NCCL_SYM(group_end, ncclGroupEnd)
  NCCL_SYM(send, ncclSend)
  NCCL_SYM(recv, ncclRecv)
  NCCL_SYM(all_reduce, ncclAllReduce)
  #undef NCCL_SYM
  if (nccl.get_version(&nccl.version) != ncclSuccess) {
    snprintf(nccl.why, sizeof(nccl.why), "ncclGetVersion failed");
    return;
  }
  if (nccl.version < 21800) { /* non-blocking communicators with grouped send/receive */
    snprintf(nccl.why, sizeof(nccl.why), "NCCL %d is older than 2.18", nccl.version);
    return;
  }
  nccl.loaded = 1;
}

  #define NCCL_TRY(call) \
    do { \
      ncclResult_t r_ = (call); \
      if (r_ != ncclSuccess) return ellr_error(ELLR_ERR_CUDA, "NCCL error in %s: %s", #call, nccl.error_string(r_)); \
    } while (0)

int ellr_nccl_available(int *version, char *msg, size_t len)
{
  std::call_once(nccl_once, nccl_load);
  if (version) *version = nccl.version;
  if (msg && len) snprintf(msg, len, "%s", nccl.loaded ? "" : nccl.why);
  return nccl.loaded;
}

struct ellr_nccl_comm {
  ncclComm_t   comm;
  cudaStream_t stream; /* ellr_nccl_connect()'s, made at its first call */
  double      *probe;  /* its one-value messages */
  size_t       nprobe;
  ncclResult_t linked;   /* how the connection ended in NCCL's background (ncclSuccess before one) */
  int          overdue;  /* ... or that it did not end within NCCL_SETTLE_SECONDS */
  int          dropped;  /* aborted by ellr_nccl_comm_drop(): every call fails until the destroy */
};

/* The communicator whose ellr_nccl_connect() may still run in NCCL's background, or NULL.  Process-wide: NCCL's rule is
   that a non-blocking communicator's next call waits for it, and releases before 2.28 keep a background group's state
   per thread, so no group on any communicator starts before it is settled (nccl_idle()). */
static ellr_nccl_comm *nccl_busy;
static void            nccl_idle(void);

ellr_status ellr_nccl_get_id(ellr_nccl_id *id)
{
  ncclUniqueId u;
  if (!ellr_nccl_available(NULL, NULL, 0)) return ellr_error(ELLR_ERR_ARG, "%s", nccl.why);
  static_assert(sizeof(u) == sizeof(id->bytes), "NCCL's unique id size");
  NCCL_TRY(nccl.get_unique_id(&u));
  memcpy(id->bytes, &u, sizeof(u));
  return ELLR_OK;
}

ellr_status ellr_nccl_comm_create(int nranks, int rank, const ellr_nccl_id *id, ellr_nccl_comm **comm)
{
  ncclUniqueId    u;
  ellr_nccl_comm *c;

  *comm = NULL;
  if (!ellr_nccl_available(NULL, NULL, 0)) return ellr_error(ELLR_ERR_ARG, "%s", nccl.why);
  memcpy(&u, id->bytes, sizeof(u));
  nccl_idle();
  if (!(c = (ellr_nccl_comm *)calloc(1, sizeof(*c)))) return ellr_error(ELLR_ERR_MEM, "out of host memory");
  /* non-blocking: the set-up goes on in NCCL's background while the products use MPI's exchange;
     ellr_nccl_comm_ready() says when it is done */
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking     = 0;
  ncclResult_t r = nccl.comm_init_rank_config(&c->comm, nranks, u, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    free(c);
    return ellr_error(ELLR_ERR_CUDA, "ncclCommInitRank failed: %s", nccl.error_string(r));
  }
  *comm = c;
  return ELLR_OK;
}

int ellr_nccl_comm_ready(ellr_nccl_comm *comm)
{
  if (comm->dropped) return -1;
  ncclResult_t st = ncclSuccess;
  if (nccl.get_async_error(comm->comm, &st) != ncclSuccess) st = ncclInternalError;
  if (st == ncclInProgress) return 0;
  if (st != ncclSuccess) {
    (void)ellr_error(ELLR_ERR_CUDA, "NCCL's communicator failed to set up: %s", nccl.error_string(st));
    return -1;
  }
  return 1;
}

/* A non-blocking communicator's call may return while NCCL still works in the background: wait for it, yielding the
   processor (a rank bound to one core shares it with NCCL's threads) for the first NCCL_YIELD_MS, then sleeping a little,
   at most NCCL_SETTLE_SECONDS where *overdue is given (a peer that never comes would hang the rank: *overdue set
   instead).  The yield comes first because every product and every reduction of the Krylov loop waits here for NCCL
   to enqueue its kernels, tens of microseconds: a sleep there (its granularity is about as long) is paid at every
   call. */
#define NCCL_YIELD_MS       10.0
#define NCCL_SETTLE_SECONDS 120
static ncclResult_t nccl_settle_within(ellr_nccl_comm *comm, ncclResult_t r, int *overdue)
{
  double t0 = r == ncclInProgress ? ellr_wall_ms() : 0.0;

  while (r == ncclInProgress) {
    double waited = ellr_wall_ms() - t0;

    if (waited < NCCL_YIELD_MS) sched_yield();
    else {
      struct timespec ns = {0, 50000};
      nanosleep(&ns, NULL);
      if (overdue && waited > 1e3 * NCCL_SETTLE_SECONDS) {
        *overdue = 1;
        return ncclInProgress;
      }
    }
    if (nccl.get_async_error(comm->comm, &r) != ncclSuccess) return ncclInternalError;
  }
  return r;
}

static ncclResult_t nccl_settle(ellr_nccl_comm *comm, ncclResult_t r)
{
  return nccl_settle_within(comm, r, NULL);
}

/* Waits for nccl_busy's connection before any other NCCL call (the rule above) and keeps its outcome in that
   communicator (ellr_nccl_settle() reports it): a call on another communicator never fails for it. */
static void nccl_idle(void)
{
  ellr_nccl_comm *c = nccl_busy;

  if (!c) return;
  nccl_busy = NULL;
  c->linked = nccl_settle_within(c, ncclInProgress, &c->overdue);
}

/* The outcome of comm's connection, once settled: an error where it failed or did not end, or comm was dropped. */
static ellr_status nccl_linked(ellr_nccl_comm *comm)
{
  if (comm->dropped) return ellr_error(ELLR_ERR_CUDA, "NCCL's communicator was dropped after a failure on some rank (-ellr_nccl 0: MPI's exchange and reductions)");
  if (comm->overdue) return ellr_error(ELLR_ERR_CUDA, "NCCL's background connection of the ghost exchange's ranks did not end within %d s (a rank missing?)", NCCL_SETTLE_SECONDS);
  if (comm->linked != ncclSuccess) return ellr_error(ELLR_ERR_CUDA, "NCCL's background connection of the ghost exchange's ranks failed: %s", nccl.error_string(comm->linked));
  return ELLR_OK;
}

/* A group whose enqueueing failed is closed; its rest may still run in NCCL's background. */
static void nccl_group_abandon(ellr_nccl_comm *comm)
{
  if (nccl.group_end() == ncclInProgress) nccl_busy = comm;
}

ellr_status ellr_nccl_settle(ellr_nccl_comm *comm)
{
  if (nccl_busy == comm) nccl_idle();
  return nccl_linked(comm);
}

ellr_status ellr_nccl_connect(ellr_nccl_comm *comm, int nsend, const int *send_ranks, int nrecv, const int *recv_ranks)
{
  size_t       need = (size_t)nsend + (size_t)nrecv;
  ncclResult_t r;

  nccl_idle();
  TRY(nccl_linked(comm));
  if (!need) return ELLR_OK;
  if (!comm->stream) CU(cudaStreamCreateWithFlags(&comm->stream, cudaStreamNonBlocking));
  if (need > comm->nprobe) {
    CU(cudaFree(comm->probe));
    comm->probe  = NULL;
    comm->nprobe = 0;
    CU(cudaMalloc((void **)&comm->probe, sizeof(double) * need));
    comm->nprobe = need;
  }
  CU(cudaMemsetAsync(comm->probe, 0, sizeof(double) * need, comm->stream));
  /* the test hook fails here, where a real failure would (no half of this rank's issued: its peers' wait for it) */
  if (ellr_test_fail_now(ELLR_STAGE_CONNECT)) return ellr_error(ELLR_ERR_CUDA, "the connection failed (injected by the test hook, before this rank's half was issued)");
  NCCL_TRY(nccl.group_start());
  for (int i = 0; i < nsend; i++) {
    r = nccl.send(comm->probe + i, 1, ncclDouble, send_ranks[i], comm->comm, comm->stream);
    if (r != ncclSuccess && r != ncclInProgress) {
      nccl_group_abandon(comm);
      return ellr_error(ELLR_ERR_CUDA, "ncclSend to rank %d failed: %s", send_ranks[i], nccl.error_string(r));
    }
  }
  for (int j = 0; j < nrecv; j++) {
    r = nccl.recv(comm->probe + nsend + j, 1, ncclDouble, recv_ranks[j], comm->comm, comm->stream);
    if (r != ncclSuccess && r != ncclInProgress) {
      nccl_group_abandon(comm);
      return ellr_error(ELLR_ERR_CUDA, "ncclRecv from rank %d failed: %s", recv_ranks[j], nccl.error_string(r));
    }
  }
  r = nccl.group_end(); /* a non-blocking communicator connects in NCCL's background: the host goes on */
  if (r == ncclInProgress) nccl_busy = comm;
  else NCCL_TRY(r);
  return ELLR_OK;
}

void ellr_nccl_connect_at_setup(void)
{
  setenv("NCCL_RUNTIME_CONNECT", "0", 0); /* a value in the environment stays */
}

ellr_status ellr_nccl_allreduce_sum(ellr_nccl_comm *comm, double *buf, size_t count, void *stream)
{
  nccl_idle();
  TRY(nccl_linked(comm));
  NCCL_TRY(nccl_settle(comm, nccl.all_reduce(buf, buf, count, ncclDouble, ncclSum, comm->comm, (cudaStream_t)stream)));
  return ELLR_OK;
}

void ellr_nccl_comm_drop(ellr_nccl_comm *comm)
{
  if (!comm || comm->dropped) return;
  if (nccl_busy == comm) nccl_busy = NULL; /* the abort ends its background work */
  (void)nccl.comm_abort(comm->comm);
  comm->dropped = 1;
}

int ellr_nccl_comm_reusable(const ellr_nccl_comm *comm)
{
  return comm && !comm->dropped && nccl_busy != comm && comm->linked == ncclSuccess && !comm->overdue;
}

void ellr_nccl_comm_destroy(ellr_nccl_comm *comm)
{
  if (!comm) return;
  if (!comm->dropped) {
    if (nccl_busy == comm) nccl_busy = NULL; /* the abort below ends its background work */
    (void)nccl.comm_abort(comm->comm);
  }
  if (comm->stream) (void)cudaStreamDestroy(comm->stream);
  (void)cudaFree(comm->probe);
  (void)cudaGetLastError();
  free(comm);
}

#else
int ellr_nccl_available(int *version, char *msg, size_t len)
{
  if (version) *version = 0;
  if (msg && len) snprintf(msg, len, "the library was built without NCCL's header (nccl.h)");
  return 0;
}
ellr_status ellr_nccl_get_id(ellr_nccl_id *id)
{
  (void)id;
  return ellr_error(ELLR_ERR_ARG, "the library was built without NCCL's header (nccl.h)");
}
ellr_status ellr_nccl_comm_create(int nranks, int rank, const ellr_nccl_id *id, ellr_nccl_comm **comm)
{
  (void)nranks, (void)rank, (void)id;
  *comm = NULL;
  return ellr_error(ELLR_ERR_ARG, "the library was built without NCCL's header (nccl.h)");
}
void        ellr_nccl_comm_destroy(ellr_nccl_comm *comm) { (void)comm; }
void        ellr_nccl_comm_drop(ellr_nccl_comm *comm) { (void)comm; }
int         ellr_nccl_comm_reusable(const ellr_nccl_comm *comm)
{
  (void)comm;
  return 0;
}
void        ellr_nccl_connect_at_setup(void) { }
ellr_status ellr_nccl_settle(ellr_nccl_comm *comm)
{
  (void)comm;
  return ELLR_OK;
}
ellr_status ellr_nccl_connect(ellr_nccl_comm *comm, int nsend, const int *send_ranks, int nrecv, const int *recv_ranks)
{
  (void)comm, (void)nsend, (void)send_ranks, (void)nrecv, (void)recv_ranks;
  return ellr_error(ELLR_ERR_ARG, "the library was built without NCCL's header (nccl.h)");
}
ellr_status ellr_nccl_allreduce_sum(ellr_nccl_comm *comm, double *buf, size_t count, void *stream)
{
  (void)comm, (void)buf, (void)count, (void)stream;
  return ellr_error(ELLR_ERR_ARG, "the library was built without NCCL's header (nccl.h)");
}
int         ellr_nccl_comm_ready(ellr_nccl_comm *comm)
{
  (void)comm;
  return -1;
}
#endif

ellr_status ellr_cuda_device_uuid(char uuid[16])
{
  int            dev;
  cudaDeviceProp prop;
  CU(cudaGetDevice(&dev));
  CU(cudaGetDeviceProperties(&prop, dev));
  memcpy(uuid, prop.uuid.bytes, 16);
  return ELLR_OK;
}

struct ellr_halo {
  int          nsend, nrecv;
  int         *send_ranks, *recv_ranks; /* host */
  int64_t     *send_off, *recv_off;     /* host */
  int64_t     *send_from;               /* host; sends to rank i are x[send_from[i] + k] (no pack) unless -1 */
  int32_t     *d_send_idx, *d_recv_slot; /* device; d_recv_slot NULL: received in place */
  double      *d_sendbuf, *d_recvbuf;    /* device; d_sendbuf NULL when every send is a run of x, d_recvbuf NULL when received in place */
  cudaStream_t stream;                   /* the exchange's own, non-blocking: PETSc's may be the legacy stream */
  cudaEvent_t  ready, done, consumed; /* x written; ghosts arrived; ghosts read by the last off-diagonal product */
  int          pending;              /* consumed recorded and not yet waited for */
  int          packs;                /* some send is not a run of x: every send goes through d_sendbuf */
  ellr_timeline *tl;                 /* the phases' events (ellr_halo_timeline_start), or NULL */
};

/* The timeline's marks of one exchange: the first on the caller's stream once x is written, three on the exchange's
   stream, the last two the caller's (ellr_halo_mark). */
enum { HALO_START, HALO_PACKED, HALO_ARRIVED, HALO_UNPACKED, HALO_DIAG, HALO_OFFDIAG, HALO_NMARKS };

#if defined(ELLR_HAVE_NCCL_H) /* used by the exchange only */
__global__ static void ellr_halo_pack(int64_t n, const int32_t *__restrict__ idx, const double *__restrict__ x, double *__restrict__ buf)
{
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x) buf[k] = x[idx[k]];
}

__global__ static void ellr_halo_unpack(int64_t n, const int32_t *__restrict__ slot, const double *__restrict__ buf, double *__restrict__ g)
{
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x) g[slot[k]] = buf[k];
}

static unsigned ellr_halo_blocks(int64_t n)
{
  int64_t b = (n + 255) / 256;
  return (unsigned)(b < 1 ? 1 : (b > 4096 ? 4096 : b));
}
#endif

ellr_status ellr_halo_create(int nsend, const int *send_ranks, const int64_t *send_off, const int32_t *send_idx, int nrecv, const int *recv_ranks, const int64_t *recv_off, const int32_t *recv_slot, ellr_halo **out)
{
  ellr_halo *h;
  int64_t    ns = send_off[nsend], nr = recv_off[nrecv];

  *out = NULL;
  if (!(h = (ellr_halo *)calloc(1, sizeof(*h)))) return ellr_error(ELLR_ERR_MEM, "out of host memory");
  *out     = h; /* destroyable from here on, also after a failure below */
  h->nsend = nsend;
  h->nrecv = nrecv;
  h->send_ranks = (int *)malloc(sizeof(int) * (nsend + 1));
  h->recv_ranks = (int *)malloc(sizeof(int) * (nrecv + 1));
  h->send_off   = (int64_t *)malloc(sizeof(int64_t) * (nsend + 1));
  h->recv_off   = (int64_t *)malloc(sizeof(int64_t) * (nrecv + 1));
  h->send_from  = (int64_t *)malloc(sizeof(int64_t) * (nsend + 1));
  if (!h->send_ranks || !h->recv_ranks || !h->send_off || !h->recv_off || !h->send_from) return ellr_error(ELLR_ERR_MEM, "out of host memory");
  memcpy(h->send_ranks, send_ranks, sizeof(int) * nsend);
  memcpy(h->recv_ranks, recv_ranks, sizeof(int) * nrecv);
  memcpy(h->send_off, send_off, sizeof(int64_t) * (nsend + 1));
  memcpy(h->recv_off, recv_off, sizeof(int64_t) * (nrecv + 1));
  /* A send of consecutive entries (a slab's face, a band's edge) goes from x itself: no pack kernel ahead of NCCL's
     send.  NCCL reads x until the exchange is done; x's next writer is ordered after ellr_halo_end(). */
  for (int i = 0; i < nsend; i++) {
    h->send_from[i] = send_off[i + 1] > send_off[i] ? send_idx[send_off[i]] : 0;
    for (int64_t k = send_off[i]; k < send_off[i + 1]; k++)
      if (send_idx[k] != h->send_from[i] + (k - send_off[i])) {
        h->send_from[i] = -1;
        h->packs        = 1;
        break;
      }
  }
  { /* the highest priority: NCCL's blocks are scheduled ahead of the diagonal block's product they overlap */
    int lo, hi;
    CU(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CU(cudaStreamCreateWithPriority(&h->stream, cudaStreamNonBlocking, hi));
  }
  CU(cudaEventCreateWithFlags(&h->ready, cudaEventDisableTiming));
  CU(cudaEventCreateWithFlags(&h->done, cudaEventDisableTiming));
  CU(cudaEventCreateWithFlags(&h->consumed, cudaEventDisableTiming));
  if (h->packs) {
    CU(cudaMalloc((void **)&h->d_send_idx, sizeof(int32_t) * ns));
    CU(cudaMalloc((void **)&h->d_sendbuf, sizeof(double) * ns));
    CU(cudaMemcpy(h->d_send_idx, send_idx, sizeof(int32_t) * ns, cudaMemcpyHostToDevice));
  }
  if (nr && recv_slot) {
    CU(cudaMalloc((void **)&h->d_recv_slot, sizeof(int32_t) * nr));
    CU(cudaMalloc((void **)&h->d_recvbuf, sizeof(double) * nr));
    CU(cudaMemcpy(h->d_recv_slot, recv_slot, sizeof(int32_t) * nr, cudaMemcpyHostToDevice));
  }
  CU(cudaStreamSynchronize(0)); /* the copies went to the default stream, which the exchange's stream does not follow */
  return ELLR_OK;
}

int ellr_halo_packs(const ellr_halo *h)
{
  return h->packs;
}

/* Whether stream is being captured into a CUDA graph: an event recorded there cannot be waited for outside that
   capture, and one recorded outside cannot be waited for inside it.  In a capture the exchanges are ordered by the
   capturing stream alone (each begins on work that follows the last one's off-diagonal product there), the first
   after ellr_halo_join(), and the work that replays the graph orders whatever exchange follows it. */
static int ellr_halo_capturing(void *stream)
{
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;

  if (cudaStreamIsCapturing((cudaStream_t)stream, &cs) != cudaSuccess) (void)cudaGetLastError();
  return cs != cudaStreamCaptureStatusNone;
}

ellr_status ellr_halo_begin(ellr_halo *h, ellr_nccl_comm *comm, const double *x, double *ghosts, void *stream)
{
#if defined(ELLR_HAVE_NCCL_H)
  int64_t   ns = h->send_off[h->nsend], nr = h->recv_off[h->nrecv];
  double   *rbuf      = h->d_recvbuf ? h->d_recvbuf : ghosts;
  const int capturing = ellr_halo_capturing(stream);

  /* a capture cannot wait for the last exchange's record made outside it: the caller orders it first */
  if (capturing && h->pending) return ellr_error(ELLR_ERR_ARG, "an exchange captured in a CUDA graph after one outside it: ellr_halo_join() on the capturing stream first");
  nccl_idle();
  TRY(nccl_linked(comm));
  if (h->tl) ellr_timeline_mark(h->tl, HALO_START, stream);
  CU(cudaEventRecord(h->ready, (cudaStream_t)stream));
  CU(cudaStreamWaitEvent(h->stream, h->ready, 0));
  if (h->pending) CU(cudaStreamWaitEvent(h->stream, h->consumed, 0)); /* the stream of the last product may differ */
  h->pending = 0;
  if (h->packs) {
    ellr_halo_pack<<<ellr_halo_blocks(ns), 256, 0, h->stream>>>(ns, h->d_send_idx, x, h->d_sendbuf);
    CU(cudaGetLastError());
  }
  if (h->tl) ellr_timeline_mark(h->tl, HALO_PACKED, h->stream);
  NCCL_TRY(nccl.group_start());
  for (int i = 0; i < h->nsend; i++) {
    const double *sbuf = h->packs ? h->d_sendbuf + h->send_off[i] : x + h->send_from[i];
    ncclResult_t  r    = nccl.send(sbuf, (size_t)(h->send_off[i + 1] - h->send_off[i]), ncclDouble, h->send_ranks[i], comm->comm, h->stream);
    if (r != ncclSuccess && r != ncclInProgress) { /* inside a group the calls only queue */
      nccl_group_abandon(comm);
      return ellr_error(ELLR_ERR_CUDA, "ncclSend to rank %d failed: %s", h->send_ranks[i], nccl.error_string(r));
    }
  }
  for (int j = 0; j < h->nrecv; j++) {
    ncclResult_t r = nccl.recv(rbuf + h->recv_off[j], (size_t)(h->recv_off[j + 1] - h->recv_off[j]), ncclDouble, h->recv_ranks[j], comm->comm, h->stream);
    if (r != ncclSuccess && r != ncclInProgress) {
      nccl_group_abandon(comm);
      return ellr_error(ELLR_ERR_CUDA, "ncclRecv from rank %d failed: %s", h->recv_ranks[j], nccl.error_string(r));
    }
  }
  NCCL_TRY(nccl_settle(comm, nccl.group_end()));
  if (h->tl) ellr_timeline_mark(h->tl, HALO_ARRIVED, h->stream);
  if (nr && h->d_recvbuf) {
    ellr_halo_unpack<<<ellr_halo_blocks(nr), 256, 0, h->stream>>>(nr, h->d_recv_slot, h->d_recvbuf, ghosts);
    CU(cudaGetLastError());
  }
  if (h->tl) ellr_timeline_mark(h->tl, HALO_UNPACKED, h->stream);
  CU(cudaEventRecord(h->done, h->stream));
  return ELLR_OK;
#else
  (void)h, (void)comm, (void)x, (void)ghosts, (void)stream;
  return ellr_error(ELLR_ERR_ARG, "the library was built without NCCL's header (nccl.h)");
#endif
}

ellr_status ellr_halo_end(ellr_halo *h, void *stream)
{
  CU(cudaStreamWaitEvent((cudaStream_t)stream, h->done, 0));
  return ELLR_OK;
}

ellr_status ellr_halo_release(ellr_halo *h, void *stream)
{
  const int capturing = ellr_halo_capturing(stream);

  if (!capturing) CU(cudaEventRecord(h->consumed, (cudaStream_t)stream)); /* none in a capture: ellr_halo_capturing() */
  h->pending = !capturing;
  if (h->tl) (void)ellr_timeline_next(h->tl);
  return ELLR_OK;
}

ellr_status ellr_halo_join(ellr_halo *h, void *stream)
{
  if (h->pending) CU(cudaStreamWaitEvent((cudaStream_t)stream, h->consumed, 0));
  h->pending = 0;
  return ELLR_OK;
}

ellr_status ellr_halo_mult(ellr_halo *h, ellr_nccl_comm *comm, ellr_cuda_matrix *diag, ellr_cuda_matrix *offdiag, const double *x, const double *z, double *ghosts, double *y, void *stream)
{
  ellr_status st, st_end;

  TRY(ellr_halo_begin(h, comm, x, ghosts, stream));
  st = ellr_cuda_mult(diag, x, z, y, 0, stream); /* while the ghosts move */
  if (st == ELLR_OK) ellr_halo_mark(h, ELLR_HALO_DIAG_DONE, stream);
  st_end = ellr_halo_end(h, stream); /* also after a failed product: x stays read until the exchange is done */
  if (st == ELLR_OK) st = st_end;
  if (st == ELLR_OK && offdiag) st = ellr_cuda_mult(offdiag, ghosts, y, y, 0, stream);
  if (st == ELLR_OK) ellr_halo_mark(h, ELLR_HALO_OFFDIAG_DONE, stream);
  st_end = ellr_halo_release(h, stream);
  return st == ELLR_OK ? st_end : st;
}

ellr_status ellr_halo_mult_apart(ellr_halo *h, ellr_nccl_comm *comm, ellr_cuda_matrix *diag, ellr_cuda_matrix *offdiag, const double *x, double *ghosts, double *y, double *yoff, void *stream)
{
  ellr_status st, st_end;

  TRY(ellr_halo_begin(h, comm, x, ghosts, stream));
  /* the ghosts' only reader is on the exchange's stream, which the next exchange's receive follows in order */
  st = offdiag ? ellr_cuda_mult(offdiag, ghosts, yoff, yoff, 0, h->stream) : ELLR_OK;
  if (st == ELLR_OK && offdiag) {
    cudaError_t e = cudaEventRecord(h->done, h->stream); /* done: the ghosts in and their part added */
    if (e != cudaSuccess) st = ellr_error(ELLR_ERR_CUDA, "cudaEventRecord failed: %s", cudaGetErrorString(e));
  }
  if (st == ELLR_OK) st = ellr_cuda_mult(diag, x, NULL, y, 0, stream); /* while the ghosts move */
  if (st == ELLR_OK) ellr_halo_mark(h, ELLR_HALO_DIAG_DONE, stream);
  st_end = ellr_halo_end(h, stream); /* also after a failure: x stays read until the exchange is done */
  if (st == ELLR_OK) st = st_end;
  if (st == ELLR_OK) ellr_halo_mark(h, ELLR_HALO_OFFDIAG_DONE, stream); /* the off-diagonal part added by then */
  st_end = ellr_halo_release(h, stream);
  return st == ELLR_OK ? st_end : st;
}

ellr_status ellr_halo_timeline_start(ellr_halo *h, int n)
{
  ellr_status st;

  ellr_timeline_destroy(h->tl);
  h->tl = NULL;
  if (n <= 0) return ELLR_OK;
  st = ellr_timeline_create(HALO_NMARKS, n, &h->tl);
  if (st) {
    ellr_timeline_destroy(h->tl); /* no half-made timeline: the exchanges run untimed */
    h->tl = NULL;
  }
  return st;
}

void ellr_halo_mark(ellr_halo *h, ellr_halo_point point, void *stream)
{
  if (h->tl) ellr_timeline_mark(h->tl, point == ELLR_HALO_DIAG_DONE ? HALO_DIAG : HALO_OFFDIAG, stream);
}

int ellr_halo_timeline_read(ellr_halo *h, ellr_halo_times *t)
{
  double late;

  if (!h->tl || ellr_timeline_count(h->tl) == 0) return 0;
  t->count = ellr_timeline_count(h->tl);
  if (ellr_timeline_between(h->tl, HALO_START, HALO_PACKED, 0, &t->pack) || ellr_timeline_between(h->tl, HALO_PACKED, HALO_ARRIVED, 0, &t->transfer) || ellr_timeline_between(h->tl, HALO_ARRIVED, HALO_UNPACKED, 0, &t->unpack) || ellr_timeline_between(h->tl, HALO_START, HALO_DIAG, 0, &t->diag) || ellr_timeline_between(h->tl, HALO_DIAG, HALO_UNPACKED, 1, &t->exposed) || ellr_timeline_between(h->tl, HALO_DIAG, HALO_OFFDIAG, 0, &late) || ellr_timeline_between(h->tl, HALO_START, HALO_OFFDIAG, 0, &t->total)) return -1;
  t->offdiag = late - t->exposed; /* from the later of the ghosts and the diagonal block's end */
  return 1;
}

void ellr_halo_destroy(ellr_halo *h)
{
  if (!h) return;
  ellr_timeline_destroy(h->tl);
  if (h->stream) {
    (void)cudaStreamSynchronize(h->stream);
    (void)cudaStreamDestroy(h->stream);
  }
  if (h->ready) (void)cudaEventDestroy(h->ready);
  if (h->done) (void)cudaEventDestroy(h->done);
  if (h->consumed) (void)cudaEventDestroy(h->consumed);
  (void)cudaFree(h->d_send_idx);
  (void)cudaFree(h->d_sendbuf);
  (void)cudaFree(h->d_recv_slot);
  (void)cudaFree(h->d_recvbuf);
  (void)cudaGetLastError();
  free(h->send_ranks);
  free(h->recv_ranks);
  free(h->send_off);
  free(h->recv_off);
  free(h->send_from);
  free(h);
}
