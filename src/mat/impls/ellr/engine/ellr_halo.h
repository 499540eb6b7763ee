/*
  ellr_halo.h - ghost values GPU to GPU for the MPI product, through NCCL (Kreutzer et al. 2012, pJDS on GPU clusters:
  the local product runs while the halo moves).  PETSc-free; the binding supplies the pattern and the ranks.

  NCCL is loaded at run time (dlopen of libnccl.so.2, or of ELLR_NCCL_LIBRARY): a machine without it keeps the
  host-staged exchange of MPI, and the library never needs NCCL to load.  A communicator needs one GPU per rank
  (NCCL refuses two ranks on one GPU): the binding checks that before it creates one.

  One exchange:  ellr_halo_begin(h, comm, x, ghosts, stream)   after the work on stream that wrote x
                 ... the diagonal block's product on stream ...
                 ellr_halo_end(h, stream)                       stream waits for the ghosts
                 ... the off-diagonal block's product ...
                 ellr_halo_release(h, stream)                   the ghosts may be overwritten after this
  Begin packs x's sent entries (unless each send is a run of x: then sent from x itself) and runs NCCL's grouped sends
  and receives on the halo's own non-blocking stream, ordered after stream by an event; end orders stream after them by
  another.  Neither waits on the host.
*/
#ifndef ELLR_HALO_H
#define ELLR_HALO_H

#include "ellr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ellr_nccl_comm ellr_nccl_comm;
typedef struct ellr_halo      ellr_halo;
typedef struct {
  char bytes[128]; /* NCCL_UNIQUE_ID_BYTES */
} ellr_nccl_id;

/* 1 when NCCL loaded (its version in *version, e.g. 23102), 0 with the reason in msg otherwise; loads once. */
int ellr_nccl_available(int *version, char *msg, size_t len);
/* The UUID of the current device: ranks compare them to see that each has a GPU of its own (across nodes too). */
ellr_status ellr_cuda_device_uuid(char uuid[16]);

ellr_status ellr_nccl_get_id(ellr_nccl_id *id); /* on one rank, then broadcast */
ellr_status ellr_nccl_comm_create(int nranks, int rank, const ellr_nccl_id *id, ellr_nccl_comm **comm);
/* The communicator is made non-blocking: 1 once its set-up is done, 0 while it goes on, -1 if it failed. */
int         ellr_nccl_comm_ready(ellr_nccl_comm *comm);
/* aborts and frees comm: waits for no peer, so a rank may decide it alone (a finalize would wait for peers that may
   have kept their half); the caller has no work of its own outstanding on it */
void        ellr_nccl_comm_destroy(ellr_nccl_comm *comm);
/* aborts NCCL's communicator (every rank at the same point, after a failure they agreed on) but keeps comm, whose calls
   then fail with a message, until ellr_nccl_comm_destroy(): a holder of the pointer (a Krylov loop mid-solve) gets an
   error, not freed memory */
void        ellr_nccl_comm_drop(ellr_nccl_comm *comm);
/* 1 where comm may serve another communicator of the same ranks: not dropped, no connection of ellr_nccl_connect() in
   flight or failed or overdue (a set-up still under way is allowed: its next holder polls it).  Local. */
int         ellr_nccl_comm_reusable(const ellr_nccl_comm *comm);
/* NCCL connects the peers of its collectives in a communicator's set-up instead of at their first call (it sets
   NCCL_RUNTIME_CONNECT=0 in the process's environment unless it is set there; NCCL reads it once, before its first
   communicator).  Called before any communicator is made. */
void ellr_nccl_connect_at_setup(void);
/* Connects this rank to the ranks it will send to and receive from (one value each way), in NCCL's background: NCCL
   makes a pair's point-to-point connection at their first exchange otherwise, and the first product would wait for it
   (doc/performance.md, Multiple GPUs).  The host does not wait; the next NCCL call on any communicator waits for it,
   and its outcome stays with comm: ellr_nccl_settle() reports it, and comm's own calls fail after a failed one.  Every
   rank calls it at the same point with the matching pairs (r in my send_ranks iff I am in r's recv_ranks).  Ready
   communicator only. */
ellr_status ellr_nccl_connect(ellr_nccl_comm *comm, int nsend, const int *send_ranks, int nrecv, const int *recv_ranks);
/* Waits for comm's connection still in NCCL's background, if any (every other call does so by itself): its failure,
   or no end within two minutes, comes back here, where the caller can agree on it with the other ranks. */
ellr_status ellr_nccl_settle(ellr_nccl_comm *comm);
/* buf[0..count) summed over the ranks, in place, on stream (stream-ordered, capturable).  Assumed, as PETSc assumes
   of MPI_Allreduce: every rank gets the same bits (NCCL's algorithms reduce each element once and hand the result to
   all); a ready communicator only */
ellr_status ellr_nccl_allreduce_sum(ellr_nccl_comm *comm, double *buf, size_t count, void *stream);

/* The pattern of one exchange (host arrays, copied):
     sends to nsend ranks send_ranks[i], the entries x[send_idx[k]] for k in [send_off[i], send_off[i+1]);
     receives from nrecv ranks recv_ranks[j], in that order, ghosts[recv_slot[k]] for k in [recv_off[j], recv_off[j+1])
     (recv_slot NULL: k itself).
   Every rank's sends to r must list, in order, the entries r receives from it. */
ellr_status ellr_halo_create(int nsend, const int *send_ranks, const int64_t *send_off, const int32_t *send_idx, int nrecv, const int *recv_ranks, const int64_t *recv_off, const int32_t *recv_slot, ellr_halo **h);
/* 1 where some send is not a run of consecutive entries of x: every send is then packed by a kernel first */
int         ellr_halo_packs(const ellr_halo *h);
ellr_status ellr_halo_begin(ellr_halo *h, ellr_nccl_comm *comm, const double *x, double *ghosts, void *stream);
ellr_status ellr_halo_end(ellr_halo *h, void *stream);
/* after the work on stream that reads the ghosts: the next exchange waits for it before it overwrites them */
ellr_status ellr_halo_release(ellr_halo *h, void *stream);
void        ellr_halo_destroy(ellr_halo *h);
/* stream takes over the wait for the last exchange's ghosts to be read (work ordered after stream is ordered after
   them): the next exchange begun on such work does not wait for that record.  Before a CUDA graph's capture, whose
   streams may not wait for an event recorded outside it or in an earlier capture. */
ellr_status ellr_halo_join(ellr_halo *h, void *stream);
/* The whole MPI product on stream, y = A x (+ z) with A = [diag offdiag] (offdiag NULL: no ghosts to multiply; z may
   be NULL or y): the exchange begun, the diagonal block multiplied while the ghosts move, the off-diagonal block added
   once they are in, the ghosts released.  Nothing waits on the host but NCCL's enqueueing, so a CUDA graph may capture
   it (with the Krylov loop's passes and all-reduces around it). */
struct ellr_cuda_matrix; /* ellr_cuda.h */
ellr_status ellr_halo_mult(ellr_halo *h, ellr_nccl_comm *comm, struct ellr_cuda_matrix *diag, struct ellr_cuda_matrix *offdiag, const double *x, const double *z, double *ghosts, double *y, void *stream);

/* The same product with the off-diagonal block's part kept apart, for a caller that adds it itself in its next pass
   (the Krylov loop's curvature pass): y = diag x on stream while the ghosts move, and, on the exchange's stream once
   they are in (beside the diagonal block), yoff[r] += (offdiag ghosts)[r] on the rows offdiag stores; stream then
   waits for both.  yoff has y's length; the caller keeps it zero except where it has not yet taken a product's part. */
ellr_status ellr_halo_mult_apart(ellr_halo *h, ellr_nccl_comm *comm, struct ellr_cuda_matrix *diag, struct ellr_cuda_matrix *offdiag, const double *x, double *ghosts, double *y, double *yoff, void *stream);

/* The timeline of the next n exchanges (0: none), from CUDA events on the streams that run them (ellr_timeline.h):
   the caller marks the end of its diagonal block's product (after ellr_halo_begin, on its stream) and of its
   off-diagonal one (before ellr_halo_release).  ellr_halo_timeline_read() gives, summed over the exchanges timed so
   far (ms): pack (with the wait for x and for the last product's ghosts), the NCCL transfer (with the wait for the
   peers' sends), unpack (the exchange's stream); the diagonal block; how long the ghosts came after
   it (the exchange not hidden by it); the off-diagonal block from the later of the two; the whole product.  It waits
   for the timed work; it returns 1 with *t set, 0 with none timed yet, -1 where a mark could not be recorded or read
   (ellr_last_error()).  The marks never fail an exchange: a rank's peers would wait for it. */
typedef enum { ELLR_HALO_DIAG_DONE, ELLR_HALO_OFFDIAG_DONE } ellr_halo_point;
typedef struct {
  int    count;
  double pack, transfer, unpack, diag, exposed, offdiag, total;
} ellr_halo_times;
ellr_status ellr_halo_timeline_start(ellr_halo *h, int n);
void        ellr_halo_mark(ellr_halo *h, ellr_halo_point point, void *stream); /* never fails the exchange */
int         ellr_halo_timeline_read(ellr_halo *h, ellr_halo_times *t);

#ifdef __cplusplus
}
#endif
#endif
