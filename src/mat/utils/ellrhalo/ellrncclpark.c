/*
  ellrncclpark.c - NCCL communicators kept for later PETSc communicators of the same ranks.

  PETSc frees its inner communicator once the last object on it is destroyed, and with it the NCCL communicator the
  ghost exchange made for it (ellrhalo.c).  A program that destroys its solver and makes another (a petsc4py loop, a
  time stepper that rebuilds, a test suite) would pay NCCL's set-up again, about a second each time (more where a rank
  is bound to one core, doc/performance.md).  Instead the communicator's NCCL is parked here when its record is deleted
  and taken again by the next record of the same ranks in the same order, on the same GPU.

  Rules:
  - Parked is only what may serve again (ellr_nccl_comm_reusable(): not dropped, no connection in flight, failed or
    overdue); a set-up still under way may be parked, its next holder polls it as a new one.  Work queued on streams
    (reductions, the connection's probe) is NCCL's own between the same ranks and stays ordered before the next
    holder's.
  - Taken only where every rank of the new communicator holds the very one rank 0 names (NCCL's unique id, the same
    rank, size and GPU): ranks that freed their communicators in another order never pair different NCCL
    communicators.
  - Every decision that is one rank's alone (parking, the cap, the end) aborts, which waits for no peer; a finalize
    would wait for peers that may have parked their half.  At most MAT_ELLR_PARK_MAX are kept per process (the
    oldest aborted first), so communicators that never come again (sub-communicators of a preconditioner, say) do
    not pile up; what is still parked at MPI_Finalize() is aborted there (an attribute of MPI_COMM_SELF, which
    MPI_Finalize() deletes first).
  - The list is the process's: one thread makes and frees PETSc's communicators (PETSc's own rule).
*/
#include "ellrncclpark.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)

  #define MAT_ELLR_PARK_MAX 4

typedef struct MatELLRParked {
  ellr_nccl_id          id;
  PetscMPIInt           size, rank;
  char                  uuid[16]; /* the GPU it was made on */
  ellr_nccl_comm       *nccl;
  struct MatELLRParked *next;
} MatELLRParked;

static MatELLRParked *MatELLRParkedList = NULL; /* the most recently parked first */
static PetscMPIInt    MatELLRParkKeyval = MPI_KEYVAL_INVALID; /* kept for the process, as MPI keeps the attribute */
static int            MatELLRParkClosed = 0;                  /* MPI_Finalize() has aborted the parked: nothing is parked after */

static PetscMPIInt MPIAPI MatELLRNCCLParkDelete(MPI_Comm comm, PetscMPIInt keyval, void *attr, void *extra)
{
  (void)comm, (void)keyval, (void)attr, (void)extra;
  while (MatELLRParkedList) {
    MatELLRParked *p = MatELLRParkedList;

    MatELLRParkedList = p->next;
    ellr_nccl_comm_destroy(p->nccl);
    free(p);
  }
  MatELLRParkClosed = 1;
  return MPI_SUCCESS;
}

/* The attribute of MPI_COMM_SELF that aborts what is still parked at MPI_Finalize(); set once, outside any attribute
   callback (where MPI_Finalize() may be under way). */
PetscErrorCode MatELLRNCCLParkInit(void)
{
  PetscFunctionBegin;
  if (MatELLRParkKeyval != MPI_KEYVAL_INVALID || MatELLRParkClosed) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MatELLRNCCLParkDelete, &MatELLRParkKeyval, NULL));
  PetscCallMPI(MPI_Comm_set_attr(MPI_COMM_SELF, MatELLRParkKeyval, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Keeps nccl (rank of size, made from id on the GPU uuid) for a later communicator of the same ranks, or aborts it
   where it may not serve again or cannot be kept.  Local; called from an attribute's delete function, so plain C. */
void MatELLRNCCLPark(ellr_nccl_comm *nccl, const ellr_nccl_id *id, PetscMPIInt size, PetscMPIInt rank, const char uuid[16])
{
  MatELLRParked *p, **last;
  int            n = 0;

  if (!nccl) return;
  if (MatELLRParkKeyval == MPI_KEYVAL_INVALID || MatELLRParkClosed || !ellr_nccl_comm_reusable(nccl) || !(p = (MatELLRParked *)calloc(1, sizeof(*p)))) {
    ellr_nccl_comm_destroy(nccl);
    return;
  }
  p->id   = *id;
  p->size = size;
  p->rank = rank;
  p->nccl = nccl;
  memcpy(p->uuid, uuid, 16);
  p->next           = MatELLRParkedList;
  MatELLRParkedList = p;
  for (last = &MatELLRParkedList; *last && ++n <= MAT_ELLR_PARK_MAX; last = &(*last)->next) { }
  while (*last) { /* beyond the cap: the oldest go */
    MatELLRParked *q = *last;

    *last = q->next;
    ellr_nccl_comm_destroy(q->nccl);
    free(q);
  }
}

/* A parked NCCL communicator for comm on the current GPU (uuid), taken out of the park, with its id; *nccl NULL where
   none fits on every rank.  Rank 0 names its candidates (those where it is rank 0 of as many ranks), every rank says
   which of them it holds on this GPU, and the first that all hold is taken.  Collective. */
PetscErrorCode MatELLRNCCLUnpark(MPI_Comm comm, const char uuid[16], ellr_nccl_comm **nccl, ellr_nccl_id *id)
{
  PetscMPIInt     size, rank, ncand = 0;
  int             held = 0, all = 0;
  ellr_nccl_id    cand[MAT_ELLR_PARK_MAX];
  MatELLRParked **at[MAT_ELLR_PARK_MAX] = {NULL};

  PetscFunctionBegin;
  *nccl = NULL;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    for (MatELLRParked *p = MatELLRParkedList; p && ncand < MAT_ELLR_PARK_MAX; p = p->next)
      if (p->size == size && p->rank == 0) cand[ncand++] = p->id;
  }
  PetscCallMPI(MPI_Bcast(&ncand, 1, MPI_INT, 0, comm));
  if (!ncand) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Bcast(cand, ncand * (PetscMPIInt)sizeof(ellr_nccl_id), MPI_BYTE, 0, comm));
  for (PetscMPIInt k = 0; k < ncand; k++) {
    for (MatELLRParked **pp = &MatELLRParkedList; *pp && !at[k]; pp = &(*pp)->next)
      if ((*pp)->size == size && (*pp)->rank == rank && !memcmp((*pp)->uuid, uuid, 16) && !memcmp((*pp)->id.bytes, cand[k].bytes, sizeof(cand[k].bytes))) at[k] = pp;
    if (at[k]) held |= 1 << k;
  }
  PetscCallMPI(MPIU_Allreduce(&held, &all, 1, MPI_INT, MPI_BAND, comm));
  for (PetscMPIInt k = 0; k < ncand; k++) {
    if (all & (1 << k)) {
      MatELLRParked *p = *at[k];

      *at[k] = p->next;
      *nccl  = p->nccl;
      *id    = p->id;
      free(p);
      break;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
