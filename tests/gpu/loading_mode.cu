/*
  tests/gpu/loading_mode [none|first|count|ctx] - when does CUDA read CUDA_MODULE_LOADING?

  Sets CUDA_MODULE_LOADING=EAGER at one point of a process's start (first: before any CUDA call; count: after
  cudaGetDeviceCount, which starts CUDA's driver as PETSc's PetscInitialize does before it opens the libraries of
  -dll_append; ctx: after the context exists; none: never), launches a kernel and prints the loading mode the driver
  reports (cuModuleGetLoadingMode).  It tells whether a library loaded with -dll_append could still turn eager
  loading on for the process (the workaround for the GAMG stop in README's Troubleshooting): it cannot when "count"
  prints LAZY.  Run it also with CUDA_MODULE_LOADING=EAGER in the environment and "none" as a control.
*/
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void touch(int *p)
{
  if (p) *p = 1;
}

int main(int argc, char **argv)
{
  const char *when = argc > 1 ? argv[1] : "none";
  int         n;
  if (!strcmp(when, "first")) setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  cudaGetDeviceCount(&n);
  if (!strcmp(when, "count")) setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  cudaFree(0);
  if (!strcmp(when, "ctx")) setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  touch<<<1, 1>>>(NULL);
  cudaDeviceSynchronize();
  /* the driver's entry point through the runtime: no link against libcuda */
  CUresult (*get)(CUmoduleLoadingMode *) = NULL;
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPoint("cuModuleGetLoadingMode", (void **)&get, cudaEnableDefault, &q);
  CUmoduleLoadingMode m = (CUmoduleLoadingMode)0;
  CUresult            r = get ? get(&m) : CUDA_ERROR_NOT_FOUND;
  printf("setenv at %s: loading mode %s (r=%d)\n", when, m == CU_MODULE_EAGER_LOADING ? "EAGER" : m == CU_MODULE_LAZY_LOADING ? "LAZY" : "?", (int)r);
  return r == CUDA_SUCCESS ? 0 : 1;
}
