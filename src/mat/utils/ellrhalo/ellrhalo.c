/*
  ellrhalo.c - the MPI product of the petsc-ellr types with its ghost values moved GPU to GPU by NCCL, while the
  diagonal block multiplies (the overlap of pJDS's multi-GPU product, Kreutzer et al. 2012).

  PETSc's own product (MPIAIJCUSPARSE's, through MPIAIJ's scatter Mvctx) stages the ghost values through the host
  unless MPI is CUDA-aware; this path replaces that exchange, not the matrix: the blocks are MPIAIJ's, their products
  the library's, the pattern of the exchange PETSc's (a PetscSF over the off-diagonal block's global columns, as Mvctx).
  It runs when, on every rank, NCCL loads, each rank has a GPU of its own (NCCL refuses two ranks on one GPU), the
  vectors are CUDA vectors on the GPU, and -ellr_nccl is not false; otherwise MPIAIJ's product runs and -info says why.
  One NCCL communicator per PETSc communicator (an MPI attribute, freed with the communicator); one exchange plan per
  matrix (a composed container, remade when the nonzero pattern changes).
*/
#include "../../impls/ellr/ellrimpl.h"
#if defined(PETSCELLR_PETSC_HAS_CUDA)
  #include "ellr_halo.h"
  #include <petscsf.h>

static PetscMPIInt   MatELLRNCCLKeyval = MPI_KEYVAL_INVALID;
static PetscLogEvent MAT_ELLRHalo      = -1;

/* What a communicator has: an NCCL communicator, or the reason it has none (the same on every rank). */
typedef struct {
  ellr_nccl_comm *nccl;
  PetscBool       ready;     /* its non-blocking set-up is done on every rank */
  PetscInt        nwaiting;  /* products that used MPI's exchange meanwhile */
  char            why[256];
} MatELLRNCCL;

static PetscMPIInt MPIAPI MatELLRNCCLDelete(MPI_Comm comm, PetscMPIInt keyval, void *attr, void *extra)
{
  MatELLRNCCL *c = (MatELLRNCCL *)attr;

  (void)comm, (void)keyval, (void)extra;
  ellr_nccl_comm_destroy(c->nccl);
  free(c);
  return MPI_SUCCESS;
}

/* Whether NCCL's set-up is done on every rank (the same answer everywhere); with ELLR_NCCL_WAIT=1 in the environment
   (benchmarks and tests of the exchange itself) it waits for it. */
static PetscErrorCode MatELLRNCCLPoll(MPI_Comm comm, MatELLRNCCL *c)
{
  const char *w    = getenv("ELLR_NCCL_WAIT");
  PetscBool   wait = (PetscBool)(w && w[0] == '1');
  PetscMPIInt st, all = 0;

  PetscFunctionBegin;
  while (c->nccl && !c->ready) {
    st = (PetscMPIInt)ellr_nccl_comm_ready(c->nccl);
    PetscCallMPI(MPIU_Allreduce(&st, &all, 1, MPI_INT, MPI_MIN, comm));
    PetscCheck(all >= 0, comm, PETSC_ERR_LIB, "NCCL's communicator failed to set up (%s); run with -ellr_nccl 0 for MPI's exchange", st < 0 ? ellr_last_error() : "on another rank");
    if (all == 1) {
      c->ready = PETSC_TRUE;
      PetscCall(PetscInfo(NULL, "petsc-ellr: NCCL ready after %" PetscInt_FMT " products with MPI's exchange\n", c->nwaiting));
    } else if (!wait) {
      c->nwaiting++;
      break;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The communicator's NCCL once it is ready on every rank, else NULL (the product uses MPI's exchange).  Collective.
   NCCL's set-up takes about a second (doc/performance.md): it runs in NCCL's background from the first product on,
   each product asks whether every rank is done (one host all-reduce of an int), and all switch at the same product. */
static PetscErrorCode MatELLRGetNCCL(MPI_Comm comm, ellr_nccl_comm **nccl)
{
  MatELLRNCCL *c;
  PetscMPIInt  found, size, rank, ok, allok;
  int          version;
  char         why[256], pci[32] = {0}, *all;

  PetscFunctionBegin;
  *nccl = NULL;
  if (MatELLRNCCLKeyval == MPI_KEYVAL_INVALID) PetscCallMPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MatELLRNCCLDelete, &MatELLRNCCLKeyval, NULL));
  PetscCallMPI(MPI_Comm_get_attr(comm, MatELLRNCCLKeyval, &c, &found));
  if (found) {
    PetscCall(MatELLRNCCLPoll(comm, c));
    *nccl = c->ready ? c->nccl : NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  { /* -help lists the option (read at every product by MatELLRHaloApplies(); this asks nothing new) */
    PetscBool flg = PETSC_TRUE;
    PetscOptionsBegin(comm, NULL, "petsc-ellr: the MPI product's ghost exchange", "Mat");
    PetscCall(PetscOptionsBool("-ellr_nccl", "Ghost values GPU to GPU through NCCL where each rank has a GPU of its own (false: MPIAIJ's exchange)", "MatMult", flg, &flg, NULL));
    PetscOptionsEnd();
  }
  c = (MatELLRNCCL *)calloc(1, sizeof(*c));
  PetscCheck(c, PETSC_COMM_SELF, PETSC_ERR_MEM, "Out of host memory");
  ok = (PetscMPIInt)ellr_nccl_available(&version, why, sizeof(why));
  if (ok && ellr_cuda_device_pci_id(pci, (int)sizeof(pci)) != ELLR_OK) {
    ok = 0;
    PetscCall(PetscSNPrintf(why, sizeof(why), "%s", ellr_last_error()));
  }
  PetscCallMPI(MPIU_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm));
  if (allok) { /* each rank a GPU of its own */
    PetscCall(PetscMalloc1(32 * (size_t)size, &all));
    PetscCallMPI(MPI_Allgather(pci, 32, MPI_CHAR, all, 32, MPI_CHAR, comm));
    for (PetscMPIInt r = 0; r < size && allok; r++)
      for (PetscMPIInt s = r + 1; s < size && allok; s++)
        if (!strncmp(all + 32 * r, all + 32 * s, 32)) {
          allok = 0;
          PetscCall(PetscSNPrintf(why, sizeof(why), "ranks %d and %d share the GPU %s (NCCL needs one GPU per rank)", r, s, all + 32 * r));
        }
    PetscCall(PetscFree(all));
  } else if (ok) PetscCall(PetscSNPrintf(why, sizeof(why), "NCCL is missing on another rank"));
  if (allok) {
    ellr_nccl_id id;
    if (!rank) PetscCall(MatELLRCheckStatus(ellr_nccl_get_id(&id), "ncclGetUniqueId"));
    PetscCallMPI(MPI_Bcast(id.bytes, (PetscMPIInt)sizeof(id.bytes), MPI_BYTE, 0, comm));
    PetscCall(MatELLRCheckStatus(ellr_nccl_comm_create(size, rank, &id, &c->nccl), "ncclCommInitRank"));
    PetscCall(PetscInfo(NULL, "petsc-ellr: ghost values GPU to GPU through NCCL %d on %d ranks, one GPU each, once its set-up is done (MPI's exchange meanwhile)\n", version, size));
  } else {
    PetscCall(PetscSNPrintf(c->why, sizeof(c->why), "%s", why));
    PetscCall(PetscInfo(NULL, "petsc-ellr: ghost values staged through the host by MPI (MPIAIJ's exchange): %s\n", why));
  }
  PetscCallMPI(MPI_Comm_set_attr(comm, MatELLRNCCLKeyval, c));
  PetscCall(MatELLRNCCLPoll(comm, c));
  *nccl = c->ready ? c->nccl : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One matrix's exchange: the plan and the ghost vector, for the nonzero pattern of nzstate. */
typedef struct {
  ellr_halo       *halo;
  Vec              ghosts;
  PetscObjectState nzstate;
  Mat              offdiag;
} MatELLRHaloPlan;

static PetscErrorCode MatELLRHaloPlanDestroy(void *ctx) /* ctx: the address of the plan's pointer */
{
  MatELLRHaloPlan *p = *(MatELLRHaloPlan **)ctx;

  PetscFunctionBegin;
  ellr_halo_destroy(p->halo);
  PetscCall(VecDestroy(&p->ghosts));
  PetscCall(PetscFree(p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan from the off-diagonal block's global columns (garray): a PetscSF from each ghost (leaf) to its owner's
   entry (root), as MPIAIJ's Mvctx; its root ranks say what each rank receives and in which order, its leaf ranks what
   it sends (PETSc's basic star forest lists a rank's roots in the order that rank's leaves reference them). */
static PetscErrorCode MatELLRHaloPlanCreate(Mat A, Mat offdiag, const PetscInt *garray, MatELLRHaloPlan *p)
{
  PetscSF            sf;
  PetscInt           nghosts = offdiag->cmap->n;
  PetscMPIInt        nr, ns;
  const PetscMPIInt *rranks, *sranks;
  const PetscInt    *roff, *rmine, *rremote, *soff, *sidx;
  int64_t           *ro, *so;
  int32_t           *ri, *si;
  PetscBool          inplace = PETSC_TRUE;
  PetscLayout        map;

  PetscFunctionBegin;
  PetscCall(PetscSFCreate(PetscObjectComm((PetscObject)A), &sf));
  PetscCall(MatGetLayouts(A, NULL, &map));
  PetscCall(PetscSFSetGraphLayout(sf, map, nghosts, NULL, PETSC_COPY_VALUES, garray));
  PetscCall(PetscSFSetUp(sf));
  PetscCall(PetscSFGetRootRanks(sf, &nr, &rranks, &roff, &rmine, &rremote));
  PetscCall(PetscSFGetLeafRanks(sf, &ns, &sranks, &soff, &sidx));
  PetscCall(PetscMalloc4(nr + 1, &ro, ns + 1, &so, roff[nr], &ri, soff[ns], &si));
  for (PetscMPIInt j = 0; j <= nr; j++) ro[j] = roff[j];
  for (PetscMPIInt i = 0; i <= ns; i++) so[i] = soff[i];
  for (PetscInt k = 0; k < roff[nr]; k++) {
    ri[k] = (int32_t)rmine[k];
    if (rmine[k] != k) inplace = PETSC_FALSE;
  }
  for (PetscInt k = 0; k < soff[ns]; k++) si[k] = (int32_t)sidx[k];
  PetscCall(MatELLRCheckStatus(ellr_halo_create(ns, sranks, so, si, nr, rranks, ro, inplace ? NULL : ri, &p->halo), "The NCCL exchange's set-up"));
  PetscCall(PetscInfo(A, "petsc-ellr: NCCL exchange: sends %" PetscInt_FMT " values to %d ranks, receives %" PetscInt_FMT " from %d\n", soff[ns], ns, roff[nr], nr));
  PetscCall(PetscFree4(ro, so, ri, si));
  PetscCall(PetscSFDestroy(&sf));
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, nghosts, &p->ghosts));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the product can take this path: CUDA vectors on the GPU, neither the matrix nor they bound to the CPU. */
static PetscErrorCode MatELLRHaloApplies(Mat A, Vec x, Vec z, Vec y, PetscBool *applies)
{
  Vec       v[3] = {x, y, z};
  PetscBool flg  = PETSC_TRUE, cuda, bound;

  PetscFunctionBegin;
  *applies = PETSC_FALSE;
  PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, NULL, "-ellr_nccl", &flg, NULL));
  if (!flg || MatELLRBoundToCPU(A)) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; k < 3; k++) {
    if (!v[k]) continue;
    PetscCall(PetscObjectTypeCompare((PetscObject)v[k], VECMPICUDA, &cuda));
    if (!cuda) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(VecBoundToCPU(v[k], &bound));
    if (bound) PetscFunctionReturn(PETSC_SUCCESS);
  }
  *applies = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/*
  MatELLRHaloMult - y = A x (+ z) with the ghost exchange through NCCL, overlapped with the diagonal block's product;
  *done is PETSC_FALSE (and nothing is done) where this path does not apply.  The caller has made both blocks'
  storage current.  Collective.
*/
PetscErrorCode MatELLRHaloMult(Mat A, Vec x, Vec z, Vec y, PetscBool *done)
{
#if defined(PETSCELLR_PETSC_HAS_CUDA)
  Mat              blk[2];
  Mat_ELLR        *be[2];
  const PetscInt  *garray;
  ellr_nccl_comm  *nccl;
  MatELLRHaloPlan *p = NULL;
  PetscContainer   c;
  PetscBool        applies;
  const PetscScalar *ax;
  PetscScalar       *ag;
  void              *stream;
#endif

  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if defined(PETSCELLR_PETSC_HAS_CUDA)
  PetscCall(MatELLRHaloApplies(A, x, z, y, &applies));
  if (!applies) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], &garray));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(MatELLRGetData(blk[k], &be[k]));
    if (!be[k] || be[k]->backend != MAT_ELLR_BACKEND_CUDA || MatELLRBoundToCPU(blk[k])) PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatELLRGetNCCL(PetscObjectComm((PetscObject)A), &nccl));
  if (!nccl) PetscFunctionReturn(PETSC_SUCCESS);
  if (MAT_ELLRHalo < 0) PetscCall(PetscLogEventRegister("ELLRHaloNCCL", MAT_CLASSID, &MAT_ELLRHalo));
  /* the plan follows the pattern: MPIAIJ's assembly agrees A's nonzero state across ranks, so all remake it together */
  PetscCall(PetscObjectQuery((PetscObject)A, "MatELLRHaloPlan", (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)&p));
  if (!p || p->nzstate != A->nonzerostate || p->offdiag != blk[1]) {
    PetscCall(PetscNew(&p));
    PetscCall(MatELLRHaloPlanCreate(A, blk[1], garray, p));
    p->nzstate = A->nonzerostate;
    p->offdiag = blk[1];
    PetscCall(PetscObjectContainerCompose((PetscObject)A, "MatELLRHaloPlan", p, MatELLRHaloPlanDestroy));
  }
  PetscCall(PetscLogEventBegin(MAT_ELLRHalo, A, x, y, 0));
  PetscCall(MatELLRGetStream(&stream));
  PetscCall(VecCUDAGetArrayRead(x, &ax));
  PetscCall(VecCUDAGetArrayWrite(p->ghosts, &ag));
  PetscCall(MatELLRCheckStatus(ellr_halo_begin(p->halo, nccl, ax, ag, stream), "The NCCL ghost exchange"));
  PetscCall(VecCUDARestoreArrayWrite(p->ghosts, &ag));
  PetscCall(VecCUDARestoreArrayRead(x, &ax));
  PetscCall(PetscLogEventEnd(MAT_ELLRHalo, A, x, y, 0));
  PetscCall(MatELLRSeqProduct(blk[0], be[0], x, z, y, PETSC_FALSE)); /* while the ghosts move */
  PetscCall(MatELLRCheckStatus(ellr_halo_end(p->halo, stream), "The NCCL ghost exchange"));
  if (blk[1]->cmap->n) PetscCall(MatELLRSeqProduct(blk[1], be[1], p->ghosts, y, y, PETSC_FALSE));
  *done = PETSC_TRUE;
#else
  (void)A, (void)x, (void)z, (void)y;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
