/*
  kspdevicetype.c - what turns one of PETSc's Krylov types into one whose iterations run as passes (KSPCGDEVICE over
  KSPCG, KSPBCGSDEVICE over KSPBCGS): the base type's solve, view, set-from-options, reset and destroy slots wrapped,
  and the loop's record (the method's own record, the loop its first member) in one composed container, removed at
  destroy.  The solver stays a genuine instance of the base type, so the base type's functions keep working on it.
*/
#include "kspdeviceloop.h"

#define KSP_DEVICELOOP_KEY "KSPDeviceLoop"

/* the container's destroy: given the pointer (PETSc < 3.23) or its address */
static PetscErrorCode KSPDeviceLoopRecordDestroy(void *ptr)
{
#if PETSC_VERSION_LT(3, 23, 0)
  KSPDeviceLoop *L = (KSPDeviceLoop *)ptr;
#else
  KSPDeviceLoop *L = *(KSPDeviceLoop **)ptr;
#endif

  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopDestroy(L));
  PetscCall(PetscFree(L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopGet(KSP ksp, KSPDeviceLoop **L)
{
  PetscContainer container;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)ksp, KSP_DEVICELOOP_KEY, (PetscObject *)&container));
  PetscCheck(container, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "A Krylov solver of petsc-ellr without its data");
  PetscCall(PetscContainerGetPointer(container, (void **)L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPReset_DeviceLoop(KSP ksp)
{
  KSPDeviceLoop *L;

  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopGet(ksp, &L));
  PetscCall(VecDestroy(&L->d)); /* made for the vectors of the operators being reset */
  if (L->base_reset) PetscCall((*L->base_reset)(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_DeviceLoop(KSP ksp, MatELLROptionItems PetscOptionsObject)
{
  KSPDeviceLoop *L;

  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopGet(ksp, &L));
  PetscCall((*L->base_setfromoptions)(ksp, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, L->title);
  PetscCall(PetscOptionsInt(L->option, "Iterations between two looks of the host at the residual norms (0: chosen from the time of an iteration)", L->manual, L->check_every, &L->check_every, NULL));
  PetscOptionsHeadEnd();
  PetscCall(KSPDeviceLoopStartNCCL(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_DeviceLoop(KSP ksp, PetscViewer viewer)
{
  KSPDeviceLoop *L;

  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopGet(ksp, &L));
  if (L->base_view) PetscCall((*L->base_view)(ksp, viewer));
  PetscCall(KSPDeviceLoopView(L, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_DeviceLoop(KSP ksp)
{
  KSPDeviceLoop *L;
  PetscErrorCode (*base_destroy)(KSP);

  PetscFunctionBegin;
  PetscCall(KSPDeviceLoopGet(ksp, &L));
  base_destroy = L->base_destroy;
  PetscCall(PetscObjectCompose((PetscObject)ksp, KSP_DEVICELOOP_KEY, NULL)); /* frees the record */
  PetscCall((*base_destroy)(ksp)); /* removes the base type's composed functions, those the method put over them too */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopWrap(KSP ksp, size_t size, PetscErrorCode (*solve)(KSP), KSPDeviceLoop **L)
{
  KSPDeviceLoop *l;
  PetscContainer container;

  PetscFunctionBegin;
  PetscCheck(size >= sizeof(KSPDeviceLoop), PETSC_COMM_SELF, PETSC_ERR_PLIB, "The method's record holds the loop first");
  PetscCall(PetscCalloc(size, &l));
  l->base_solve          = ksp->ops->solve;
  l->base_destroy        = ksp->ops->destroy;
  l->base_view           = ksp->ops->view;
  l->base_setfromoptions = (PetscErrorCode (*)(KSP, MatELLROptionItems))ksp->ops->setfromoptions;
  l->base_reset          = ksp->ops->reset;
  l->paths[KSP_DEVICELOOP_HOST]  = "host passes";
  l->paths[KSP_DEVICELOOP_EAGER] = "GPU passes";
  l->paths[KSP_DEVICELOOP_GRAPH] = "GPU passes in a CUDA graph";
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &container));
  PetscCall(PetscContainerSetPointer(container, l));
#if PETSC_VERSION_LT(3, 23, 0)
  PetscCall(PetscContainerSetUserDestroy(container, KSPDeviceLoopRecordDestroy));
#else
  PetscCall(PetscContainerSetCtxDestroy(container, KSPDeviceLoopRecordDestroy));
#endif
  PetscCall(PetscObjectCompose((PetscObject)ksp, KSP_DEVICELOOP_KEY, (PetscObject)container));
  PetscCall(PetscContainerDestroy(&container));
  ksp->ops->solve          = solve;
  ksp->ops->destroy        = KSPDestroy_DeviceLoop;
  ksp->ops->reset          = KSPReset_DeviceLoop;
  ksp->ops->view           = KSPView_DeviceLoop;
  ksp->ops->setfromoptions = (PetscErrorCode (*)(KSP, MatELLROptionItems))KSPSetFromOptions_DeviceLoop;
  *L                       = l;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDeviceLoopStateInit(KSP ksp, cgloop_state *st)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(st, sizeof(*st)));
  st->max_it   = ksp->max_it;
  st->test_tol = (PetscBool)(ksp->converged == KSPConvergedDefault && ksp->normtype != KSP_NORM_NONE); /* mirrored on the GPU */
  st->ttol     = ksp->ttol;
  st->dtol     = ksp->divtol * ksp->rnorm0;
#if PETSC_VERSION_GE(3, 21, 0)
  st->first_test = ksp->min_it;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
