/*
  ellrncclpark.c - NCCL communicators kept for later PETSc communicators of the same ranks.

  PETSc frees its inner communicator once the last object on it is destroyed, and with it the NCCL communicator the
  ghost exchange made for it (ellrhalo.c).  A program that destroys its solver and makes another (a petsc4py loop, a
  time stepper that rebuilds, a test suite) would pay NCCL's set-up again, about a second each time (more where a rank
  is bound to one core, doc/performance.md).  Instead the communicator's NCCL is parked here when its record is deleted
  and taken again by the next record of the same ranks in the same order.

  Rules: a parked NCCL communicator has no work outstanding (its exchanges' streams are synchronized when their plans
  go, no connection of ellrhalo.c is in flight); it is taken only where every rank of the new communicator finds the
  very one rank 0 names (NCCL's unique id, the same rank and size), so ranks that freed their communicators in another
  order never pair different NCCL communicators; what is still parked at MPI_Finalize() is aborted there (an attribute
  of MPI_COMM_SELF, deleted first by MPI_Finalize()), which waits for no peer.
*/
#include "ellrncclpark.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)

typedef struct MatELLRParked {
  ellr_nccl_id          id;
  PetscMPIInt           size, rank;
  ellr_nccl_comm       *nccl;
  struct MatELLRParked *next;
} MatELLRParked;

static MatELLRParked *MatELLRParkedList = NULL; /* the most recently parked first */
static PetscMPIInt    MatELLRParkKeyval = MPI_KEYVAL_INVALID;
static int            MatELLRParkClosed = 0; /* MPI_Finalize() has aborted the parked: nothing is parked after */

static PetscMPIInt MPIAPI MatELLRNCCLParkDelete(MPI_Comm comm, PetscMPIInt keyval, void *attr, void *extra)
{
  (void)comm, (void)keyval, (void)attr, (void)extra;
  while (MatELLRParkedList) {
    MatELLRParked *p = MatELLRParkedList;

    MatELLRParkedList = p->next;
    ellr_nccl_comm_destroy(p->nccl, 0);
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

/* Keeps nccl (rank of size, made from id) for a later communicator of the same ranks: 1 where kept, 0 where the caller
   destroys it (before MatELLRNCCLParkInit(), after MPI_Finalize() began, out of memory).  Local; called from an
   attribute's delete function, so plain C. */
int MatELLRNCCLPark(ellr_nccl_comm *nccl, const ellr_nccl_id *id, PetscMPIInt size, PetscMPIInt rank)
{
  MatELLRParked *p;

  if (MatELLRParkKeyval == MPI_KEYVAL_INVALID || MatELLRParkClosed) return 0;
  if (!(p = (MatELLRParked *)calloc(1, sizeof(*p)))) return 0;
  p->id             = *id;
  p->size           = size;
  p->rank           = rank;
  p->nccl           = nccl;
  p->next           = MatELLRParkedList;
  MatELLRParkedList = p;
  return 1;
}

/* A parked NCCL communicator for comm, taken out of the park, with its id; *nccl NULL where none fits on every rank.
   Collective. */
PetscErrorCode MatELLRNCCLUnpark(MPI_Comm comm, ellr_nccl_comm **nccl, ellr_nccl_id *id)
{
  PetscMPIInt     size, rank, found = 0, all = 0;
  MatELLRParked **at = NULL;
  struct {
    ellr_nccl_id id;
    int          has;
  } named = {{{0}}, 0};

  PetscFunctionBegin;
  *nccl = NULL;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    for (MatELLRParked *p = MatELLRParkedList; p && !named.has; p = p->next)
      if (p->size == size && p->rank == 0) named.id = p->id, named.has = 1;
  }
  PetscCallMPI(MPI_Bcast(&named, (PetscMPIInt)sizeof(named), MPI_BYTE, 0, comm));
  if (!named.has) PetscFunctionReturn(PETSC_SUCCESS);
  for (MatELLRParked **pp = &MatELLRParkedList; *pp && !at; pp = &(*pp)->next)
    if ((*pp)->size == size && (*pp)->rank == rank && !memcmp((*pp)->id.bytes, named.id.bytes, sizeof(named.id.bytes))) at = pp;
  found = at ? 1 : 0;
  PetscCallMPI(MPIU_Allreduce(&found, &all, 1, MPI_INT, MPI_MIN, comm));
  if (all) {
    MatELLRParked *p = *at;

    *at   = p->next;
    *nccl = p->nccl;
    *id   = p->id;
    free(p);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
