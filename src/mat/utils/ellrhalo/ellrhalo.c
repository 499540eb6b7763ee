/*
  ellrhalo.c - the MPI product of the petsc-ellr types with its ghost values moved GPU to GPU by NCCL, while the
  diagonal block multiplies (the overlap of pJDS's multi-GPU product, Kreutzer et al. 2012).

  PETSc's own product (MPIAIJCUSPARSE's, through MPIAIJ's scatter Mvctx) stages the ghost values through the host
  unless MPI is CUDA-aware; this path replaces that exchange, not the matrix: the blocks are MPIAIJ's, their products
  the library's, the pattern of the exchange PETSc's (a PetscSF over the off-diagonal block's global columns, as Mvctx).
  It runs where, on every rank, NCCL loads, each rank has a GPU of its own (NCCL refuses two ranks on one GPU), the
  vectors are CUDA vectors on the GPU, and -ellr_nccl is not false; otherwise MPIAIJ's product runs and -info says why.

  Rule: every choice between NCCL and MPIAIJ's exchange is made collectively (an all-reduce when the communicator or
  the plan is made), since a rank in NCCL's exchange waits for its peers there forever.  One NCCL communicator per
  PETSc communicator (an MPI attribute; when PETSc frees the communicator it is parked for the next one of the same
  ranks, ellrncclpark.c); one plan per matrix and nonzero pattern (a composed container).
*/
#include "ellrhalo.h"
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  #include <petscsf.h>
  #include "ellrncclpark.h"

static PetscMPIInt   MatELLRNCCLKeyval = MPI_KEYVAL_INVALID;
static PetscLogEvent MAT_ELLRHalo      = -1;

/* The event is registered at the first exchange: a PetscFinalize() forgets it (PetscInitialize() may follow). */
static PetscErrorCode MatELLRHaloForgetEvent(void)
{
  MAT_ELLRHalo = -1;
  return PETSC_SUCCESS;
}

/* What a communicator has: an NCCL communicator, or none (the same on every rank). */
typedef struct {
  ellr_nccl_comm *nccl;
  PetscBool       ready;    /* its non-blocking set-up is done on every rank */
  PetscBool       wait;     /* -ellr_nccl_wait: the first product waits for the set-up */
  PetscInt        nwaiting; /* products that used MPI's exchange meanwhile */
  PetscBool       early;    /* -ellr_nccl_connect_at_setup: peers connected ahead of their first call */
  PetscInt        timeline; /* -ellr_halo_timeline: the exchanges each plan times after its first */
  PetscBool       linked;   /* a matrix's exchange peers connected ahead of its first product (MatELLRHaloConnect) */
  PetscBool       connecting; /* ... and that connection not yet agreed done (MatELLRNCCLSettle) */
  ellr_nccl_comm *dropped;    /* dropped after an agreed failure of the connection, freed with the record */
  ellr_nccl_id    id;         /* nccl's, to park it when the record goes (ellrncclpark.c) */
  PetscMPIInt     size, rank;
  char            uuid[16]; /* the GPU it was made on */
} MatELLRNCCL;

static PetscMPIInt MPIAPI MatELLRNCCLDelete(MPI_Comm comm, PetscMPIInt keyval, void *attr, void *extra)
{
  MatELLRNCCL *c = (MatELLRNCCL *)attr;

  (void)comm, (void)keyval, (void)extra;
  /* kept for the next communicator of these ranks, or aborted (a connection not yet agreed, a communicator that cannot
     serve again): whether to park is each rank's own decision, so nothing here may wait for the peers */
  if (c->connecting) ellr_nccl_comm_destroy(c->nccl);
  else MatELLRNCCLPark(c->nccl, &c->id, c->size, c->rank, c->uuid);
  ellr_nccl_comm_destroy(c->dropped);
  free(c);
  return MPI_SUCCESS;
}

/* Whether NCCL's set-up is done on every rank (the same answer everywhere), waiting for it where wait is set; count:
   a product that uses MPI's exchange meanwhile (-info counts them).  A set-up that failed anywhere leaves every rank on
   MPI's exchange. */
static PetscErrorCode MatELLRNCCLPoll(MPI_Comm comm, MatELLRNCCL *c, PetscBool wait, PetscBool count)
{
  PetscMPIInt st, all = 0;

  PetscFunctionBegin;
  while (c->nccl && !c->ready) {
    st = (PetscMPIInt)ellr_nccl_comm_ready(c->nccl);
    PetscCallMPI(MPIU_Allreduce(&st, &all, 1, MPI_INT, MPI_MIN, comm));
    if (all < 0) {
      PetscCall(PetscInfo(NULL, "petsc-ellr: NCCL's set-up failed (%s): MPI's exchange from now on\n", st < 0 ? ellr_last_error() : "on another rank"));
      ellr_nccl_comm_destroy(c->nccl);
      c->nccl = NULL;
    } else if (all == 1) {
      c->ready = PETSC_TRUE;
      PetscCall(PetscInfo(NULL, "petsc-ellr: NCCL ready after %" PetscInt_FMT " products with MPI's exchange\n", c->nwaiting));
    } else if (!wait) {
      if (count) c->nwaiting++;
      break;
    } else PetscCall(PetscSleep(1e-3)); /* a rank bound to one core leaves it to NCCL's set-up thread meanwhile */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Agrees on the connection MatELLRHaloConnect() left in NCCL's background, once, where every rank is about to use
   NCCL: a failure (or no end) anywhere drops NCCL on every rank, and MPI's exchange runs from then on. */
static PetscErrorCode MatELLRNCCLSettle(MPI_Comm comm, MatELLRNCCL *c)
{
  PetscMPIInt st, allst;

  PetscFunctionBegin;
  if (!c->connecting || !c->nccl) PetscFunctionReturn(PETSC_SUCCESS);
  c->connecting = PETSC_FALSE;
  st            = (PetscMPIInt)ellr_nccl_settle(c->nccl);
  PetscCallMPI(MPIU_Allreduce(&st, &allst, 1, MPI_INT, MPI_MAX, comm));
  if (allst) {
    PetscCall(PetscInfo(NULL, "petsc-ellr: NCCL's connection of the exchange's ranks failed (%s): MPI's exchange from now on\n", st ? ellr_last_error() : "on another rank"));
    ellr_nccl_comm_drop(c->nccl); /* a Krylov loop may hold it mid-solve: kept until the record goes */
    c->dropped = c->nccl;
    c->nccl    = NULL;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Why this communicator gets no NCCL ("" where it does, with this rank's GPU in uuid); the same answer on every rank. */
static PetscErrorCode MatELLRNCCLWhyNot(MPI_Comm comm, PetscBool enabled, char uuid[16], char *why, size_t len)
{
  PetscMPIInt size, ok, allok;
  char       *all;

  PetscFunctionBegin;
  why[0] = 0;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size == 1) PetscCall(PetscSNPrintf(why, len, "one rank, no ghost values"));
  else if (!enabled) PetscCall(PetscSNPrintf(why, len, "-ellr_nccl false"));
  if (why[0]) PetscFunctionReturn(PETSC_SUCCESS);
  ok = (PetscMPIInt)ellr_nccl_available(NULL, why, len);
  if (ok && ellr_cuda_device_uuid(uuid) != ELLR_OK) {
    ok = 0;
    PetscCall(PetscSNPrintf(why, len, "%s", ellr_last_error()));
  }
  PetscCallMPI(MPIU_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm));
  if (!allok) {
    if (ok) PetscCall(PetscSNPrintf(why, len, "NCCL or the GPU is missing on another rank"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(16 * (size_t)size, &all)); /* each rank a GPU of its own: device UUIDs differ across nodes too */
  PetscCallMPI(MPI_Allgather(uuid, 16, MPI_CHAR, all, 16, MPI_CHAR, comm));
  for (PetscMPIInt r = 0; r < size && !why[0]; r++)
    for (PetscMPIInt s = r + 1; s < size && !why[0]; s++)
      if (!memcmp(all + 16 * r, all + 16 * s, 16)) PetscCall(PetscSNPrintf(why, len, "ranks %d and %d share a GPU (NCCL needs one GPU per rank)", r, s));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The communicator's NCCL once it is ready on every rank, else NULL (the product uses MPI's exchange); with nccl NULL
   only the set-up is started.  Collective.  NCCL's set-up takes about a second (doc/performance.md): it runs in NCCL's
   background from the creation of the first matrix that will use it (MatELLRHaloStart()), each product asks whether
   every rank is done (one host all-reduce of an int) until all are, and all switch at the same product. */
static PetscErrorCode MatELLRGetNCCL(MPI_Comm comm, ellr_nccl_comm **nccl)
{
  MatELLRNCCL *c;
  PetscMPIInt  found, size, rank, st, lst = 0, allst;
  PetscBool    enabled = PETSC_TRUE, wait = PETSC_FALSE, early = PETSC_TRUE, reused;
  PetscInt     timeline = 0;
  int          version = 0;
  char         why[256], uuid[16] = {0};
  ellr_nccl_id id;

  PetscFunctionBegin;
  if (nccl) *nccl = NULL;
  if (MatELLRNCCLKeyval == MPI_KEYVAL_INVALID) PetscCallMPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MatELLRNCCLDelete, &MatELLRNCCLKeyval, NULL));
  PetscCallMPI(MPI_Comm_get_attr(comm, MatELLRNCCLKeyval, &c, &found));
  if (found && !nccl) PetscFunctionReturn(PETSC_SUCCESS);
  if (found) {
    PetscCall(MatELLRNCCLPoll(comm, c, c->wait, PETSC_TRUE));
    if (c->ready) PetscCall(MatELLRNCCLSettle(comm, c));
    *nccl = c->ready ? c->nccl : NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscOptionsBegin(comm, NULL, "petsc-ellr: the MPI product's ghost exchange", "Mat");
  PetscCall(PetscOptionsBool("-ellr_nccl", "Ghost values GPU to GPU through NCCL where each rank has a GPU of its own (false: MPIAIJ's exchange)", "MatMult", enabled, &enabled, NULL));
  PetscCall(PetscOptionsBool("-ellr_nccl_wait", "The first product (and KSPCGDEVICE's first solve) waits for NCCL's set-up (else MPI's exchange, PETSc's Krylov loop, until it is done)", "MatMult", wait, &wait, NULL));
  PetscCall(PetscOptionsBool("-ellr_nccl_connect_at_setup", "NCCL connects its peers ahead of their first call: the collectives' in its background set-up (sets NCCL_RUNTIME_CONNECT=0 for the process unless set), the ghost exchange's at the first final assembly after it", "MatMult", early, &early, NULL));
  PetscCall(PetscOptionsBoundedInt("-ellr_halo_timeline", "Time the phases of this many NCCL exchanges of each matrix after its first with CUDA events, and print their means (pack, transfer, the diagonal block's product, the exchange it leaves exposed, ...)", "MatMult", timeline, &timeline, NULL, 0));
  PetscOptionsEnd();
  PetscCall(MatELLRNCCLWhyNot(comm, enabled, uuid, why, sizeof(why)));
  c = (MatELLRNCCL *)calloc(1, sizeof(*c)); /* freed by the attribute's delete function, maybe after PetscFinalize() */
  PetscCheck(c, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of host memory");
  memcpy(c->uuid, uuid, sizeof(uuid));
  c->wait     = wait;
  c->early    = early;
  c->timeline = timeline;
  PetscCallMPI(MPI_Comm_set_attr(comm, MatELLRNCCLKeyval, c));
  if (!why[0] && early) ellr_nccl_connect_at_setup(); /* before NCCL's first communicator reads it */
  c->size = size;
  c->rank = rank;
  if (!why[0]) PetscCall(MatELLRNCCLParkInit());
  if (!why[0]) PetscCall(MatELLRNCCLUnpark(comm, c->uuid, &c->nccl, &c->id)); /* an earlier communicator's, of these ranks */
  reused = (PetscBool)(c->nccl != NULL);
  if (!why[0] && !reused) {
    /* the id from rank 0, with its status: every rank knows whether to go on */
    st = lst = rank ? 0 : (PetscMPIInt)ellr_nccl_get_id(&id);
    PetscCallMPI(MPI_Bcast(&st, 1, MPI_INT, 0, comm));
    if (!st) PetscCallMPI(MPI_Bcast(id.bytes, (PetscMPIInt)sizeof(id.bytes), MPI_BYTE, 0, comm));
    if (!st) c->id = id;
    if (!st) lst = (PetscMPIInt)ellr_nccl_comm_create(size, rank, &id, &c->nccl);
    PetscCallMPI(MPIU_Allreduce(&lst, &allst, 1, MPI_INT, MPI_MAX, comm));
    if (allst || st) {
      PetscCall(PetscSNPrintf(why, sizeof(why), "NCCL's communicator could not be made (%s)", lst ? ellr_last_error() : "on another rank"));
      ellr_nccl_comm_destroy(c->nccl);
      c->nccl = NULL;
    }
  }
  if (!why[0]) (void)ellr_nccl_available(&version, NULL, 0); /* loaded already: the version */
  if (!why[0] && reused) PetscCall(PetscInfo(NULL, "petsc-ellr: ghost values GPU to GPU through NCCL %d on %d ranks, one GPU each, with the NCCL communicator of earlier objects on these ranks\n", version, size));
  else if (!why[0]) PetscCall(PetscInfo(NULL, "petsc-ellr: ghost values GPU to GPU through NCCL %d on %d ranks, one GPU each, once its set-up is done (MPI's exchange meanwhile)\n", version, size));
  else PetscCall(PetscInfo(NULL, "petsc-ellr: ghost values staged through the host by MPI (MPIAIJ's exchange): %s\n", why));
  if (!nccl) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRNCCLPoll(comm, c, c->wait, PETSC_TRUE));
  *nccl = c->ready ? c->nccl : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -ellr_halo_timeline of the communicator's record (made by then). */
static PetscErrorCode MatELLRHaloTimelineAsked(MPI_Comm comm, PetscInt *n)
{
  MatELLRNCCL *c;
  PetscMPIInt  found;

  PetscFunctionBegin;
  *n = 0;
  PetscCallMPI(MPI_Comm_get_attr(comm, MatELLRNCCLKeyval, &c, &found));
  if (found) *n = c->timeline;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One matrix's exchange for one nonzero pattern: the plan and the ghost vector, or none (halo NULL: MPIAIJ's). */
typedef struct {
  ellr_halo       *halo;
  Vec              ghosts;
  PetscObjectState nzstate, offdiagnzstate;
  PetscInt64       offdiagid;  /* object ids are never reused, unlike addresses */
  PetscInt         nexchanges; /* run with this plan (the same count on every rank: each is collective) */
  PetscInt         timeline;   /* exchanges to time after the first (-ellr_halo_timeline), 0 once reported */
  int             *offrows;    /* the off-diagonal block's rows with entries (a Krylov loop's, made at its first ask) */
  PetscInt         noffrows;
  PetscInt64       offrows_nnz; /* the block's entries when they were made */
  PetscBool        offrows_made;
} MatELLRHaloPlan;

/* The timeline's means, each phase's slowest rank, printed once (or why there are none). Collective. */
static PetscErrorCode MatELLRHaloTimelineReport(Mat A, MatELLRHaloPlan *p)
{
  ellr_halo_times t;
  double          v[8] = {0}, mx[8];
  int             st;
  const char     *name = ((PetscObject)A)->name ? ((PetscObject)A)->name : "a matrix";
  MPI_Comm        comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  st   = ellr_halo_timeline_read(p->halo, &t);
  v[0] = st == 1 ? 0.0 : 1.0;
  if (st == 1) {
    const double m[7] = {t.pack, t.transfer, t.unpack, t.diag, t.exposed, t.offdiag, t.total};
    for (int k = 0; k < 7; k++) v[k + 1] = m[k] / t.count;
  }
  PetscCallMPI(MPIU_Allreduce(v, mx, 8, MPI_DOUBLE, MPI_MAX, comm));
  if (mx[0] != 0) PetscCall(PetscPrintf(comm, "petsc-ellr: the NCCL ghost exchange's timeline of %s could not be recorded on every rank (%s)\n", name, st < 0 ? ellr_last_error() : "its CUDA events"));
  else PetscCall(PetscPrintf(comm, "petsc-ellr: NCCL ghost exchange of %s, mean of %" PetscInt_FMT " products after the first, ms, each the slowest rank's: pack %.4f, transfer %.4f, unpack %.4f; diagonal block %.4f, exchange left exposed after it %.4f, off-diagonal block %.4f; product %.4f (pack includes the wait for x, transfer the wait for the peers)\n", name, p->timeline, mx[1], mx[2], mx[3], mx[4], mx[5], mx[6], mx[7]));
  p->timeline = 0;
  (void)ellr_halo_timeline_start(p->halo, 0); /* frees the events; cannot fail */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRHaloPlanDestroy(void *ctx) /* ctx: the address of the plan's pointer */
{
  MatELLRHaloPlan *p = *(MatELLRHaloPlan **)ctx;

  PetscFunctionBegin;
  ellr_halo_destroy(p->halo);
  PetscCall(VecDestroy(&p->ghosts));
  PetscCall(PetscFree(p->offrows));
  PetscCall(PetscFree(p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* From each of the nghosts ghost values (the off-diagonal block's global columns garray) to its owner's entry.
   Collective. */
static PetscErrorCode MatELLRHaloSF(Mat A, PetscInt nghosts, const PetscInt *garray, PetscSF *sf)
{
  PetscLayout map;

  PetscFunctionBegin;
  PetscCall(PetscSFCreate(PetscObjectComm((PetscObject)A), sf));
  PetscCall(PetscSFSetType(*sf, PETSCSFBASIC)); /* the order argued below is the basic type's */
  PetscCall(MatGetLayouts(A, NULL, &map));
  PetscCall(PetscSFSetGraphLayout(*sf, map, nghosts, NULL, PETSC_COPY_VALUES, garray));
  PetscCall(PetscSFSetUp(*sf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan from the off-diagonal block's global columns (garray): a PetscSF from each ghost (leaf) to its owner's
   entry (root), as MPIAIJ's Mvctx.  Its root ranks say what each rank receives (rmine) and in which order, its leaf
   ranks what it sends (irootloc).  PETSc's basic star forest sets irootloc up by receiving each leaf rank's rremote
   list as it is (PetscSFSetUp_Basic), so a rank sends exactly the entries, in the order, that its peer receives.
   Collective: a plan that cannot be made anywhere leaves every rank on MPIAIJ's exchange for this pattern. */
static PetscErrorCode MatELLRHaloPlanCreate(Mat A, Mat offdiag, const PetscInt *garray, PetscBool applies, MatELLRHaloPlan *p)
{
  PetscSF            sf;
  PetscInt           nghosts = offdiag->cmap->n;
  PetscMPIInt        nr, ns, st = applies ? 0 : 1, allst;
  const PetscMPIInt *rranks, *sranks;
  const PetscInt    *roff, *rmine, *rremote, *soff, *sidx;
  int64_t           *ro, *so;
  int32_t           *ri, *si;
  PetscBool          inplace = PETSC_TRUE, basic;
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  PetscCall(MatELLRHaloSF(A, nghosts, garray, &sf));
  PetscCall(PetscObjectTypeCompare((PetscObject)sf, PETSCSFBASIC, &basic));
  PetscCall(PetscSFGetRootRanks(sf, &nr, &rranks, &roff, &rmine, &rremote));
  PetscCall(PetscSFGetLeafRanks(sf, &ns, &sranks, &soff, &sidx));
  if (!basic || roff[nr] > INT32_MAX || A->cmap->n > INT32_MAX) st = 1;
  if (!st) {
    PetscCall(PetscMalloc4(nr + 1, &ro, ns + 1, &so, roff[nr], &ri, soff[ns], &si));
    for (PetscMPIInt j = 0; j <= nr; j++) ro[j] = roff[j];
    for (PetscMPIInt i = 0; i <= ns; i++) so[i] = soff[i];
    for (PetscInt k = 0; k < roff[nr]; k++) {
      ri[k] = (int32_t)rmine[k];
      if (rmine[k] != k) inplace = PETSC_FALSE;
    }
    for (PetscInt k = 0; k < soff[ns]; k++) si[k] = (int32_t)sidx[k];
    if (ellr_halo_create(ns, sranks, so, si, nr, rranks, ro, inplace ? NULL : ri, &p->halo) != ELLR_OK) st = 2;
    PetscCall(PetscFree4(ro, so, ri, si));
  }
  PetscCallMPI(MPIU_Allreduce(&st, &allst, 1, MPI_INT, MPI_MAX, comm));
  if (allst) {
    if (allst == 2) PetscCall(PetscInfo(A, "petsc-ellr: NCCL's exchange could not be set up (%s): MPIAIJ's exchange for this pattern\n", st == 2 ? ellr_last_error() : "on another rank"));
    ellr_halo_destroy(p->halo);
    p->halo = NULL;
  } else {
    PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, nghosts, &p->ghosts));
    PetscCall(PetscInfo(A, "petsc-ellr: NCCL exchange: sends %" PetscInt_FMT " values to %d ranks (%s), receives %" PetscInt_FMT " from %d (%s)\n", soff[ns], ns, !soff[ns] ? "none" : (ellr_halo_packs(p->halo) ? "packed" : "each a run of the vector, sent in place"), roff[nr], nr, inplace ? "in place" : "unpacked"));
  }
  PetscCall(PetscSFDestroy(&sf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether this rank can take the path: CUDA vectors on the GPU, the matrix, its blocks and the vectors not bound to
   the CPU, both blocks' products on the GPU storage.  Local: the plan agrees it across ranks once per pattern. */
static PetscErrorCode MatELLRHaloApplies(Mat A, Mat blk[2], Mat_ELLR *be[2], Vec x, Vec z, Vec y, PetscBool *applies)
{
  Vec       v[3] = {x, y, z};
  PetscBool dev;

  PetscFunctionBegin;
  *applies = PETSC_FALSE;
  if (MatELLRBoundToCPU(A)) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; k < 3; k++) {
    if (!v[k]) continue;
    PetscCall(MatELLRVecOnDevice(v[k], &dev));
    if (!dev) PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(MatELLRGetData(blk[k], &be[k]));
    if (!be[k] || be[k]->backend != MAT_ELLR_BACKEND_CUDA || MatELLRBoundToCPU(blk[k])) PetscFunctionReturn(PETSC_SUCCESS);
  }
  *applies = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/*
  MatELLRHaloStart - starts the communicator's NCCL set-up for a matrix whose products will run on GPUs (an MPI
  aijcusparse base not bound to the CPU), so that it overlaps the program's assembly.  Collective.
*/
PetscErrorCode MatELLRHaloStart(Mat A)
{
  PetscFunctionBegin;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscBool cuda;

  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJCUSPARSE, &cuda));
  if (cuda && !MatELLRBoundToCPU(A)) PetscCall(MatELLRGetNCCL(PetscObjectComm((PetscObject)A), NULL));
#else
  (void)A;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatELLRHaloConnect - at a final assembly of an MPI matrix whose products will use NCCL's exchange: where NCCL's
  set-up is done already, has NCCL connect each rank to the ranks it will exchange ghost values with, in NCCL's
  background while the program goes on (its set-up, the first product's upload), since NCCL makes a pair's
  connection at their first exchange otherwise and the first product waits for it (doc/performance.md).  Once per
  communicator: the first matrix assembled after NCCL is ready names the pairs (a later pattern's new pairs connect at
  their first exchange); until then each final assembly asks every rank whether NCCL is ready (an all-reduce of an
  int).  The connection's end is agreed where NCCL is next used (MatELLRNCCLSettle()); a failure anywhere leaves every
  rank on MPI's exchange.  Collective.
*/
PetscErrorCode MatELLRHaloConnect(Mat A)
{
  PetscFunctionBegin;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  MatELLRNCCL       *c;
  Mat_ELLR          *e;
  PetscMPIInt        found, nr, ns, st, allst;
  PetscBool          cuda;
  Mat                offdiag;
  const PetscInt    *garray;
  const PetscMPIInt *rranks, *sranks;
  PetscSF            sf;
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);

  /* the same answers on every rank: the type, the binding, the settings and the record are collective */
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJCUSPARSE, &cuda));
  PetscCall(MatELLRGetData(A, &e));
  if (!cuda || !e || MatELLRBoundToCPU(A) || MatELLRNCCLKeyval == MPI_KEYVAL_INVALID) PetscFunctionReturn(PETSC_SUCCESS);
  if (e->settings.backend == MAT_ELLR_BACKEND_CPU || e->settings.backend == MAT_ELLR_BACKEND_AIJ) PetscFunctionReturn(PETSC_SUCCESS); /* no NCCL products */
  PetscCallMPI(MPI_Comm_get_attr(comm, MatELLRNCCLKeyval, &c, &found));
  if (!found || !c->nccl || c->linked || !c->early) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRNCCLPoll(comm, c, PETSC_FALSE, PETSC_FALSE)); /* a query: never a wait at assembly */
  if (!c->ready || !c->nccl) {
    if (c->nccl) PetscCall(PetscInfo(A, "petsc-ellr: NCCL's set-up not done at this assembly: the exchange's ranks connect at the first exchange\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &offdiag, &garray));
  PetscCall(MatELLRHaloSF(A, offdiag->cmap->n, garray, &sf));
  PetscCall(PetscSFGetRootRanks(sf, &nr, &rranks, NULL, NULL, NULL)); /* receives from */
  PetscCall(PetscSFGetLeafRanks(sf, &ns, &sranks, NULL, NULL));       /* sends to */
  st = (PetscMPIInt)ellr_nccl_connect(c->nccl, ns, sranks, nr, rranks);
  PetscCall(PetscSFDestroy(&sf));
  PetscCallMPI(MPIU_Allreduce(&st, &allst, 1, MPI_INT, MPI_MAX, comm));
  c->linked = PETSC_TRUE;
  if (allst) { /* a peer may wait in NCCL's background for this rank: the abort ends that on every rank */
    PetscCall(PetscInfo(A, "petsc-ellr: NCCL's connection of the exchange's ranks failed (%s): MPI's exchange from now on\n", st ? ellr_last_error() : "on another rank"));
    ellr_nccl_comm_drop(c->nccl); /* a Krylov loop may hold it mid-solve: kept until the record goes */
    c->dropped = c->nccl;
    c->nccl    = NULL;
  } else {
    c->connecting = PETSC_TRUE;
    PetscCall(PetscInfo(A, "petsc-ellr: NCCL connects this rank to %d ranks it sends to and %d it receives from, in its background\n", ns, nr));
  }
#else
  (void)A;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatELLRCommNCCL - the NCCL communicator of comm once its set-up is done on every rank, for reductions on the GPU (the
  Krylov loops on several ranks); NULL with *pending while the set-up goes on (it is started here where no matrix has
  started it; -ellr_nccl_wait waits for it), NULL without *pending where products on comm get none: one rank,
  -ellr_nccl false, NCCL or a GPU of its own missing on a rank, a set-up that failed.  The same answer on every rank.
  Collective.
*/
PetscErrorCode MatELLRCommNCCL(MPI_Comm comm, ellr_nccl_comm **nccl, PetscBool *pending)
{
  PetscFunctionBegin;
  *nccl    = NULL;
  *pending = PETSC_FALSE;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  MatELLRNCCL *c;
  PetscMPIInt  found;

  PetscCall(MatELLRGetNCCL(comm, NULL)); /* made, and its set-up started, where no matrix has yet */
  PetscCallMPI(MPI_Comm_get_attr(comm, MatELLRNCCLKeyval, &c, &found));
  PetscCheck(found, comm, PETSC_ERR_PLIB, "The communicator's NCCL record is missing");
  PetscCall(MatELLRNCCLPoll(comm, c, c->wait, PETSC_FALSE)); /* a query, not a product with MPI's exchange */
  if (c->ready) PetscCall(MatELLRNCCLSettle(comm, c));
  *nccl = c->ready ? c->nccl : NULL;
  *pending = (PetscBool)(c->nccl && !c->ready);
#else
  (void)comm;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatELLRCommNCCLStart - starts NCCL's set-up for comm where nothing has yet, for solves whose reductions will use it
  (a Krylov loop on CUDA vectors whose operator is not of our types, which start it when made): nothing is polled,
  waited for or settled.  Every rank must have a GPU (agreed first, before any call that could fail on one rank
  only); PETSc then picks each rank's GPU (its device initialization: rank modulo the devices) where no CUDA object has
  made it do so yet, since every rank would otherwise still be on GPU 0, where NCCL refuses ranks sharing a GPU.
  *started: the set-up began in this call.  Collective; the same answer on every rank.
*/
PetscErrorCode MatELLRCommNCCLStart(MPI_Comm comm, PetscBool *started)
{
  PetscFunctionBegin;
  *started = PETSC_FALSE;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  {
    MatELLRNCCL *c;
    PetscMPIInt  found, gpu, all;

    if (MatELLRNCCLKeyval != MPI_KEYVAL_INVALID) {
      PetscCallMPI(MPI_Comm_get_attr(comm, MatELLRNCCLKeyval, &c, &found));
      if (found) PetscFunctionReturn(PETSC_SUCCESS); /* the same on every rank: records are made collectively */
    }
    gpu = (PetscMPIInt)(ellr_cuda_device_count() > 0);
    PetscCallMPI(MPIU_Allreduce(&gpu, &all, 1, MPI_INT, MPI_MIN, comm));
    if (!all) PetscFunctionReturn(PETSC_SUCCESS); /* the solve's own checks say why */
    PetscCall(MatELLRSelectDevice());
    PetscCall(MatELLRGetNCCL(comm, NULL));
    PetscCallMPI(MPI_Comm_get_attr(comm, MatELLRNCCLKeyval, &c, &found));
    PetscCheck(found, comm, PETSC_ERR_PLIB, "The communicator's NCCL record is missing");
    *started = (PetscBool)(c->nccl && !c->ready);
  }
#else
  (void)comm;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
/* The matrix's NCCL exchange for the current pattern: *p NULL (nothing collective done past the type checks) where
   the vectors are not CUDA's, the matrix is bound to the CPU, or NCCL is not ready; else the plan, whose halo is
   NULL where the exchange cannot run for this pattern (MPIAIJ's then).  *applies: this rank's vectors and blocks can
   take it.  Collective. */
static PetscErrorCode MatELLRHaloGetPlan(Mat A, Vec x, Vec z, Vec y, ellr_nccl_comm **nccl, Mat blk[2], Mat_ELLR *be[2], PetscBool *applies, MatELLRHaloPlan **plan)
{
  const PetscInt  *garray;
  MatELLRHaloPlan *p = NULL;
  PetscContainer   c;
  PetscBool        cuda;

  PetscFunctionBegin;
  *plan    = NULL;
  *applies = PETSC_FALSE;
  /* the vectors' type and the matrix's are the same on every rank (collective objects): nothing collective before */
  PetscCall(PetscObjectTypeCompare((PetscObject)x, VECMPICUDA, &cuda));
  if (!cuda || MatELLRBoundToCPU(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRGetNCCL(PetscObjectComm((PetscObject)A), nccl));
  if (!*nccl) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], &garray));
  PetscCall(MatELLRHaloApplies(A, blk, be, x, z, y, applies));
  if (MAT_ELLRHalo < 0) {
    PetscCall(PetscLogEventRegister("ELLRHaloNCCL", MAT_CLASSID, &MAT_ELLRHalo));
    PetscCall(PetscRegisterFinalize(MatELLRHaloForgetEvent));
  }
  /* the plan follows the pattern (A's nonzero state is agreed across ranks by MPIAIJ's assembly) */
  PetscCall(PetscObjectQuery((PetscObject)A, "MatELLRHaloPlan", (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)&p));
  if (!p || p->nzstate != A->nonzerostate || p->offdiagid != ((PetscObject)blk[1])->id || p->offdiagnzstate != blk[1]->nonzerostate) {
    PetscCall(PetscNew(&p));
    PetscCall(PetscObjectContainerCompose((PetscObject)A, "MatELLRHaloPlan", p, MatELLRHaloPlanDestroy)); /* owns p from here */
    p->nzstate        = A->nonzerostate;
    p->offdiagid      = ((PetscObject)blk[1])->id;
    p->offdiagnzstate = blk[1]->nonzerostate;
    PetscCall(MatELLRHaloPlanCreate(A, blk[1], garray, *applies, p));
    PetscCall(MatELLRHaloTimelineAsked(PetscObjectComm((PetscObject)A), &p->timeline));
  }
  *plan = p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The flops AIJ logs for y = A x (+ z) over both blocks. */
static PetscLogDouble MatELLRHaloFlops(Mat_ELLR *be[2], PetscBool add, PetscBool offdiag)
{
  const ellr_plan *d = MatELLRGetPlan(be[0]), *o = offdiag ? MatELLRGetPlan(be[1]) : NULL;
  PetscLogDouble   f = 2.0 * (PetscLogDouble)d->stats.nnz - (add ? 0.0 : (PetscLogDouble)d->stats.nonempty_rows);

  return o ? f + 2.0 * (PetscLogDouble)o->stats.nnz : f;
}
#endif

/*
  MatELLRHaloMult - y = A x (+ z) with the ghost exchange through NCCL, overlapped with the diagonal block's product;
  *done is PETSC_FALSE (and nothing is done) where this path does not apply.  The caller has made both blocks'
  storage current.  Collective.
*/
PetscErrorCode MatELLRHaloMult(Mat A, Vec x, Vec z, Vec y, PetscBool *done)
{
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  Mat                blk[2];
  Mat_ELLR          *be[2] = {NULL, NULL};
  ellr_nccl_comm    *nccl  = NULL;
  MatELLRHaloPlan   *p;
  PetscBool          applies, offdiag;
  const PetscScalar *ax, *az = NULL;
  PetscScalar       *ag, *ay;
  void              *stream;
#endif

  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscCall(MatELLRHaloGetPlan(A, x, z, y, &nccl, blk, be, &applies, &p));
  if (!p || !p->halo) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(applies, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The NCCL exchange was set up for this matrix with the vectors on the GPU; multiply with the matrix's own vectors (MatCreateVecs()) or run with -ellr_nccl 0");
  offdiag = (PetscBool)(blk[1]->cmap->n > 0);
  PetscCall(PetscLogEventBegin(MAT_ELLRHalo, A, x, y, 0));
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(VecCUDAGetArrayRead(x, &ax));
  if (z && z != y) PetscCall(VecCUDAGetArrayRead(z, &az));
  if (z == y) PetscCall(VecCUDAGetArray(y, &ay));
  else PetscCall(VecCUDAGetArrayWrite(y, &ay));
  PetscCall(VecCUDAGetArrayWrite(p->ghosts, &ag));
  PetscCall(PetscLogEventBegin(MAT_ELLRMult, A, x, y, 0)); /* one product on the storage, as MatMult() logs it */
  PetscCall(PetscLogGpuTimeBegin());
  PetscCall(MatELLRCheckStatus(ellr_halo_mult(p->halo, nccl, be[0]->dev, offdiag ? be[1]->dev : NULL, ax, z == y ? ay : az, ag, ay, stream), "The NCCL ghost exchange's product (-ellr_nccl 0: MPIAIJ's exchange; NCCL_DEBUG=WARN says more)"));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(MatELLRHaloFlops(be, (PetscBool)(z != NULL), offdiag)));
  PetscCall(PetscLogEventEnd(MAT_ELLRMult, A, x, y, 0));
  PetscCall(VecCUDARestoreArrayWrite(p->ghosts, &ag));
  if (z == y) PetscCall(VecCUDARestoreArray(y, &ay));
  else PetscCall(VecCUDARestoreArrayWrite(y, &ay));
  if (z && z != y) PetscCall(VecCUDARestoreArrayRead(z, &az));
  PetscCall(VecCUDARestoreArrayRead(x, &ax));
  PetscCall(PetscLogEventEnd(MAT_ELLRHalo, A, x, y, 0));
  be[0]->nproducts++;
  be[1]->nproducts++;
  /* a timeline that cannot be made on a rank leaves its exchanges untimed there (the report says so): no error here,
     where the other ranks would go on to the next exchange */
  if (++p->nexchanges == 1 && p->timeline) (void)ellr_halo_timeline_start(p->halo, (int)PetscMin(p->timeline, 1 << 20));
  else if (p->timeline && p->nexchanges == p->timeline + 1) PetscCall(MatELLRHaloTimelineReport(A, p));
  *done = PETSC_TRUE;
#else
  (void)A, (void)x, (void)z, (void)y;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatELLRHaloLoopGet - the engine's pieces of A's product with NCCL's exchange (ellr_halo_mult()), for a Krylov loop that
  enqueues its products itself and captures them in a CUDA graph with its passes; *ok false where A's products do not
  take that path (then MatMult() runs them).  The caller has made both blocks' storage current (MatELLRMPIPrepare());
  the pieces stay valid until A's pattern or values change (A's state says when).  The ghost buffer is the plan's own
  vector's device array, kept past its restore: nothing but the plan's products touch it, and it lives as long as the
  plan.  The same answer on every rank.  Collective.
*/
PetscErrorCode MatELLRHaloLoopGet(Mat A, Vec x, PetscBool rows, MatELLRHaloDevice *d, PetscBool *ok)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(d, sizeof(*d)));
  *ok = PETSC_FALSE;
#if defined(PETSCELLR_HAVE_CUDA) && defined(PETSCELLR_PETSC_HAS_CUDA)
  Mat              blk[2];
  Mat_ELLR        *e;
  MatELLRHaloPlan *p;
  PetscBool        applies;
  PetscMPIInt      mine, all;
  PetscScalar     *ag;

  PetscCall(MatELLRGetData(A, &e));
  if (!e || !e->mpi) PetscFunctionReturn(PETSC_SUCCESS); /* the same on every rank: the type is collective */
  PetscCall(MatELLRHaloGetPlan(A, x, NULL, x, &d->nccl, blk, d->be, &applies, &p));
  if (!p) PetscFunctionReturn(PETSC_SUCCESS);
  /* an exchange being timed (-ellr_halo_timeline) keeps its products in MatMult(), where its events are read */
  mine = (PetscMPIInt)(p->halo && applies && !p->timeline);
  PetscCallMPI(MPIU_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
  if (!all) PetscFunctionReturn(PETSC_SUCCESS);
  /* the plan's own ghost vector: nothing but its products reads it, and its device array lives as long as the plan */
  PetscCall(VecCUDAGetArrayWrite(p->ghosts, &ag));
  d->ghosts = ag; /* the restore below clears ag */
  PetscCall(VecCUDARestoreArrayWrite(p->ghosts, &ag));
  if (rows && blk[1]->cmap->n) { /* the rows the off-diagonal block's product adds to, from its pattern */
    const PetscInt *ia, *ja;
    PetscInt        m;
    PetscBool       done;

    /* made again where the pattern was replaced behind the nonzero state, by the storage's own test (its count) */
    PetscCall(MatGetRowIJ(blk[1], 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    if (done && (!p->offrows_made || (PetscInt64)ia[m] != p->offrows_nnz)) {
      PetscInt k = 0;

      PetscCall(PetscFree(p->offrows));
      for (PetscInt i = 0; i < m; i++) k += ia[i + 1] > ia[i];
      PetscCall(PetscMalloc1(k, &p->offrows));
      k = 0;
      for (PetscInt i = 0; i < m; i++)
        if (ia[i + 1] > ia[i]) p->offrows[k++] = (int)i;
      p->noffrows     = k;
      p->offrows_nnz  = (PetscInt64)ia[m];
      p->offrows_made = PETSC_TRUE;
    }
    if (done) PetscCall(MatRestoreRowIJ(blk[1], 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    else p->offrows_made = PETSC_FALSE; /* not readable here: this rank adds the off-diagonal block itself (local) */
  }
  d->halo          = p->halo;
  d->diag          = d->be[0]->dev;
  d->offdiag       = blk[1]->cmap->n ? d->be[1]->dev : NULL;
  d->flops         = MatELLRHaloFlops(d->be, PETSC_FALSE, (PetscBool)(d->offdiag != NULL));
  d->offrows       = rows && d->offdiag && p->offrows_made ? p->offrows : NULL;
  d->noffrows      = rows && d->offdiag && p->offrows_made ? p->noffrows : 0;
  d->pattern_id    = p->offdiagid;
  d->pattern_state = p->offdiagnzstate;
  *ok              = PETSC_TRUE;
#else
  (void)A, (void)x, (void)rows;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
