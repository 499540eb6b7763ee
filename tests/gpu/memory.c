/* nanosleep() of the sampler thread is POSIX: declared under a strict C standard (-std=c99) only with this */
#if !defined(_POSIX_C_SOURCE)
  #define _POSIX_C_SOURCE 200809L
#endif
static const char help[] = "Device memory of a solve of PETSc's KSP tutorial ex45 problem, measured inside the process.\n\
  The 3D 7-point Laplacian on a DMDA of n^3 points (-n, default 64; -da_grid_x/y/z override), the matrix entries and\n\
  right-hand side of ex45, the matrix of -dm_mat_type, the vectors of -dm_vec_type (cuda), the solver from the\n\
  options (-ksp_type, -pc_type, -ksp_rtol, -ksp_max_it, ...).  Readings of the GPU's used memory above the baseline\n\
  (the CUDA context and PETSc's device set-up) after the vectors, the assembly, KSPSetUp and two KSPSolve, and the\n\
  peak seen by a thread that reads cudaMemGetInfo every -sample_us microseconds (default 100; 0: no thread).\n\
  -ballast_free_mb B: before PETSc starts, allocate all the GPU's free memory but B MB (a fixed budget).\n\
  -label S: the solver's name in the output (default KSP type + PC type).  Last line: MEMORY key=value ...\n\n";

#include <petscksp.h>
#include <petscdmda.h>

#if !defined(PETSC_HAVE_CUDA)
/* The readings are CUDA's (cudaMemGetInfo): without a CUDA PETSc there is nothing to measure */
int main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  printf("tests/gpu/memory: this PETSc has no CUDA; nothing to measure\n");
  return 0;
}
#else
  #include <petscdevice_cuda.h>
  #include <pthread.h>
  #include <stdatomic.h>
  #include <stdlib.h>
  #include <string.h>
  #include <time.h>

  #define MB 1.0e6 /* all sizes in the output are in 10^6 bytes */

/* The phases of the program; the sampler records the one in which it saw the lowest free memory */
typedef enum {
  PHASE_INIT,
  PHASE_VECTORS,
  PHASE_ASSEMBLY,
  PHASE_SETUP,
  PHASE_SOLVE1,
  PHASE_SOLVE2,
  PHASE_END
} Phase;
static const char *const PhaseNames[] = {"init", "vectors", "assembly", "setup", "solve1", "solve2", "end"};

/* What the sampler thread shares with the main thread. The thread alone writes min_free, min_phase, readings and err;
   the main thread reads them after pthread_join(), which orders the accesses. The main thread's own readings keep a
   minimum of their own (main_min_free), merged after the join. stop and phase are atomics: written by one thread,
   read by the other while both run. */
typedef struct {
  int         device;    /* the CUDA device of this process, made current in the thread too */
  long        period_us; /* time between two readings */
  atomic_int  stop;
  atomic_int  phase;
  size_t      min_free; /* the lowest free memory the thread saw: the high-water mark of use */
  Phase       min_phase;
  long        readings;
  cudaError_t err; /* the first failed CUDA call of the thread, cudaSuccess when none */
  size_t      main_min_free; /* the lowest free memory of the explicit readings */
  Phase       main_min_phase;
} Sampler;

static void *SamplerMain(void *arg)
{
  Sampler        *s  = (Sampler *)arg;
  struct timespec ts = {0, 1000 * s->period_us};

  /* a thread starts on device 0: make the process's device current, so that the readings are of that GPU */
  s->err = cudaSetDevice(s->device);
  while (s->err == cudaSuccess && !atomic_load(&s->stop)) {
    size_t      fr, total;
    cudaError_t e = cudaMemGetInfo(&fr, &total);

    if (e != cudaSuccess) {
      s->err = e;
      break;
    }
    s->readings++;
    if (fr < s->min_free) {
      s->min_free  = fr;
      s->min_phase = (Phase)atomic_load(&s->phase);
    }
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* The memory in use on the device now, above the baseline (free memory at the baseline minus free memory now, so the
   ballast and everything allocated before the baseline cancel out), in MB, after the device's work is done; also
   kept in the main thread's minimum, so that the peak is never below an explicit reading, with or without the thread */
static PetscErrorCode Reading(Sampler *s, size_t free_base, PetscLogDouble *mb)
{
  size_t fr, total;

  PetscFunctionBeginUser;
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallCUDA(cudaMemGetInfo(&fr, &total));
  if (fr < s->main_min_free) {
    s->main_min_free  = fr;
    s->main_min_phase = (Phase)atomic_load(&s->phase);
  }
  *mb = ((PetscLogDouble)free_base - (PetscLogDouble)fr) / MB;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The number of times the log event NAME ran, summed over the stages; 0 for an event nobody registered (ELLRBuild when
   the plugin is not loaded: PetscLogEventGetId() gives -1 for an unknown name). Needs the default log handler,
   started with PetscLogDefaultBegin() right after PetscInitialize(). */
static PetscErrorCode EventCount(const char name[], PetscInt *count)
{
  PetscLogEvent event;
  PetscLogState state;
  PetscInt      nstages = 0;

  PetscFunctionBeginUser;
  *count = 0;
  PetscCall(PetscLogEventGetId(name, &event));
  PetscCall(PetscLogGetState(&state));
  if (event < 0 || !state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogStateGetNumStages(state, &nstages));
  for (PetscLogStage stage = 0; stage < (PetscLogStage)nstages; stage++) {
    PetscEventPerfInfo info;

    PetscCall(PetscLogEventGetPerfInfo(stage, event, &info));
    *count += info.count;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ex45's right-hand side: 2 (HxHy/Hz + HxHz/Hy + HyHz/Hx) on the boundary (where the matrix row is that diagonal
   alone, so u = 1 there), Hx Hy Hz inside */
static PetscErrorCode ComputeRHS(DM da, Vec b)
{
  PetscInt       mx, my, mz, xs, ys, zs, xm, ym, zm;
  PetscReal      Hx, Hy, Hz;
  PetscScalar    diag, ***barray;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, &mz, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  Hx   = 1.0 / (PetscReal)(mx - 1);
  Hy   = 1.0 / (PetscReal)(my - 1);
  Hz   = 1.0 / (PetscReal)(mz - 1);
  diag = 2.0 * (Hx * Hy / Hz + Hx * Hz / Hy + Hy * Hz / Hx);
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(DMDAVecGetArray(da, b, &barray));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) {
        const PetscBool boundary = (PetscBool)(i == 0 || j == 0 || k == 0 || i == mx - 1 || j == my - 1 || k == mz - 1);
        barray[k][j][i]          = boundary ? diag : Hx * Hy * Hz;
      }
  PetscCall(DMDAVecRestoreArray(da, b, &barray));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ex45's matrix: the 7-point Laplacian scaled by the cell volume (off-diagonals -HxHy/Hz, -HxHz/Hy, -HyHz/Hx, the
   diagonal their negated sum twice over), and on the boundary the diagonal entry alone (Dirichlet rows). Ends with the
   assembly, whose reading the caller takes. */
static PetscErrorCode ComputeMatrix(DM da, Mat A)
{
  PetscInt    mx, my, mz, xs, ys, zs, xm, ym, zm;
  PetscReal   Hx, Hy, Hz, HxHydHz, HxHzdHy, HyHzdHx;
  PetscScalar v[7];
  MatStencil  row, col[7];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, &mz, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  Hx      = 1.0 / (PetscReal)(mx - 1);
  Hy      = 1.0 / (PetscReal)(my - 1);
  Hz      = 1.0 / (PetscReal)(mz - 1);
  HxHydHz = Hx * Hy / Hz;
  HxHzdHy = Hx * Hz / Hy;
  HyHzdHx = Hy * Hz / Hx;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) {
        row.i = i;
        row.j = j;
        row.k = k;
        if (i == 0 || j == 0 || k == 0 || i == mx - 1 || j == my - 1 || k == mz - 1) {
          v[0] = 2.0 * (HxHydHz + HxHzdHy + HyHzdHx);
          PetscCall(MatSetValuesStencil(A, 1, &row, 1, &row, v, INSERT_VALUES));
        } else {
          /* ex45's column order: k - 1, j - 1, i - 1, the diagonal, i + 1, j + 1, k + 1 */
          const PetscInt    di[7] = {0, 0, -1, 0, 1, 0, 0}, dj[7] = {0, -1, 0, 0, 0, 1, 0}, dk[7] = {-1, 0, 0, 0, 0, 0, 1};
          const PetscScalar w[7]  = {-HxHydHz, -HxHzdHy, -HyHzdHx, 2.0 * (HxHydHz + HxHzdHy + HyHzdHx), -HyHzdHx, -HxHzdHy, -HxHydHz};

          for (PetscInt c = 0; c < 7; c++) {
            col[c].i = i + di[c];
            col[c].j = j + dj[c];
            col[c].k = k + dk[c];
            col[c].c = 0;
            v[c]     = w[c];
          }
          PetscCall(MatSetValuesStencil(A, 1, &row, 7, col, v, INSERT_VALUES));
        }
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -ballast_free_mb B, read from argv before PetscInitialize(): the ballast must be in place before PETSc or CUDA
   allocate anything of the run, so that the whole run lives within B MB. Negative when absent. */
static double BallastOption(int argc, char **argv)
{
  for (int k = 1; k + 1 < argc; k++)
    if (!strcmp(argv[k], "-ballast_free_mb")) return atof(argv[k + 1]);
  return -1.0;
}

/* The public query of the plugin, looked up at run time: this program does not link the plugin (it is loaded, or
   not, with -dll_append), so the symbol exists only when the plugin is loaded */
typedef PetscErrorCode (*DeviceBytesFn)(Mat, PetscLogDouble *);

int main(int argc, char **argv)
{
  DM                 da;
  Mat                A;
  Vec                x, b;
  KSP                ksp;
  PC                 pc;
  Sampler            s;
  pthread_t          thread;
  PetscBool          threaded = PETSC_FALSE;
  void              *ballast  = NULL;
  size_t             ballast_bytes = 0, fr, total, free_base;
  PetscReal          ballast_free_mb = (PetscReal)BallastOption(argc, argv);
  PetscInt           n = 64, mx, my, mz, rows, its = 0, sample_us = 100, copies = 0, builds = 0;
  char               label[128] = "", type[64] = "";
  KSPType            ksptype;
  PCType             pctype;
  MatInfo            info;
  KSPConvergedReason reason;
  PetscLogDouble     base_mb, vectors_mb, assembled_mb, setup_mb, solve1_mb, solve2_mb, peak_mb, ellr_mb = -1, t0, t1, ts0, ts1;
  PetscReal          bnorm;
  DeviceBytesFn      devicebytes = NULL;
  void              *sym         = NULL;

  PetscFunctionBeginUser;
  /* The ballast: everything free but B MB, taken before PetscInitialize() (which may start using the GPU). This first
     CUDA call creates the device's primary context, which PETSc then shares, so the context is outside the B MB. */
  if (ballast_free_mb >= 0) {
    cudaError_t e = cudaMemGetInfo(&fr, &total);

    if (e == cudaSuccess && (double)fr > ballast_free_mb * MB) {
      ballast_bytes = (size_t)((double)fr - ballast_free_mb * MB);
      ballast_bytes -= ballast_bytes % (2 << 20); /* whole 2 MiB pages: a partial page would round up past the budget */
      if (ballast_bytes) e = cudaMalloc(&ballast, ballast_bytes);
    }
    if (e != cudaSuccess) {
      fprintf(stderr, "tests/gpu/memory: ballast of %.1f MB (leaving %g MB free): %s\n", (double)ballast_bytes / MB, ballast_free_mb, cudaGetErrorString(e));
      return 1;
    }
  }

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  /* the event counts below (MatCUSPARSCopyTo, ELLRBuild) need the default log handler; a no-op under -log_view */
  PetscCall(PetscLogDefaultBegin());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Device memory benchmark options", "memory");
  PetscCall(PetscOptionsInt("-n", "grid points per direction", "memory.c", n, &n, NULL));
  PetscCall(PetscOptionsInt("-sample_us", "microseconds between two readings of the sampler thread (0: no thread)", "memory.c", sample_us, &sample_us, NULL));
  PetscCall(PetscOptionsString("-label", "the solver's name in the output", "memory.c", label, label, sizeof(label), NULL));
  PetscCall(PetscOptionsReal("-ballast_free_mb", "GPU memory (MB) left free by the ballast, read before PetscInitialize()", "memory.c", ballast_free_mb, &ballast_free_mb, NULL));
  PetscOptionsEnd();

  /* The baseline: the CUDA context and PETSc's device set-up, made now rather than inside the first reading */
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCallCUDA(cudaFree(0));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallCUDA(cudaMemGetInfo(&free_base, &total));
  base_mb = ((PetscLogDouble)total - (PetscLogDouble)free_base - (PetscLogDouble)ballast_bytes) / MB;

  PetscCall(PetscMemzero(&s, sizeof(s)));
  PetscCallCUDA(cudaGetDevice(&s.device));
  s.period_us      = (long)sample_us;
  s.min_free       = free_base;
  s.min_phase      = PHASE_INIT;
  s.main_min_free  = free_base;
  s.main_min_phase = PHASE_INIT;
  s.err            = cudaSuccess;
  atomic_init(&s.stop, 0);
  atomic_init(&s.phase, PHASE_INIT);
  if (sample_us > 0) {
    PetscCheck(!pthread_create(&thread, NULL, SamplerMain, &s), PETSC_COMM_SELF, PETSC_ERR_SYS, "pthread_create failed");
    threaded = PETSC_TRUE;
  }

  /* ex45's grid; its KSP gets the operators from the DM's callbacks, here they are made before, so that each step has a
     reading of its own (the solvers measured do not use the DM) */
  atomic_store(&s.phase, PHASE_VECTORS);
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, &mz, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(DMCreateGlobalVector(da, &b));
  PetscCall(ComputeRHS(da, b));
  /* both vectors on the GPU now (a CUDA vector may allocate its device array at its first use there) */
  PetscCall(VecSet(x, 0.0));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(Reading(&s, free_base, &vectors_mb));

  atomic_store(&s.phase, PHASE_ASSEMBLY);
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(ComputeMatrix(da, A));
  PetscCall(Reading(&s, free_base, &assembled_mb));
  PetscCall(MatGetSize(A, &rows, NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));

  atomic_store(&s.phase, PHASE_SETUP);
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&ts0)); /* set-up and the first solve: what a user's single solve pays */
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(Reading(&s, free_base, &setup_mb));

  atomic_store(&s.phase, PHASE_SOLVE1);
  PetscCall(KSPSolve(ksp, b, x));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&ts1));
  PetscCall(Reading(&s, free_base, &solve1_mb));

  /* the second solve from the same zero initial guess: what a solve costs once everything is set up; its time
     between two device synchronizations */
  atomic_store(&s.phase, PHASE_SOLVE2);
  PetscCall(VecSet(x, 0.0));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t1));
  PetscCall(Reading(&s, free_base, &solve2_mb));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));

  atomic_store(&s.phase, PHASE_END);
  if (threaded) {
    atomic_store(&s.stop, 1);
    PetscCheck(!pthread_join(thread, NULL), PETSC_COMM_SELF, PETSC_ERR_SYS, "pthread_join failed");
    PetscCheck(s.err == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "the sampler's cudaMemGetInfo failed: %s", cudaGetErrorString(s.err));
  }
  if (s.main_min_free < s.min_free) {
    s.min_free  = s.main_min_free;
    s.min_phase = s.main_min_phase;
  }
  peak_mb = ((PetscLogDouble)free_base - (PetscLogDouble)s.min_free) / MB;

  /* the plugin's GPU storage of A, while A lives; -1: the plugin is not loaded */
  PetscCall(PetscDLSym(NULL, "MatELLRGetDeviceBytes", &sym));
  if (sym) {
    *(void **)&devicebytes = sym;
    PetscCall((*devicebytes)(A, &ellr_mb));
    ellr_mb /= MB;
  }
  PetscCall(EventCount("MatCUSPARSCopyTo", &copies));
  PetscCall(EventCount("ELLRBuild", &builds));

  /* the type as the user named it: MatGetType() reports the base type (seqaijcusparse) for ellrt and pellr */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_mat_type", type, sizeof(type), NULL));
  if (!type[0]) {
    MatType mtype;

    PetscCall(MatGetType(A, &mtype));
    PetscCall(PetscStrncpy(type, mtype, sizeof(type)));
  }
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPGetType(ksp, &ksptype));
  PetscCall(PCGetType(pc, &pctype));
  if (!label[0]) PetscCall(PetscSNPrintf(label, sizeof(label), "%s+%s", ksptype, pctype));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "memory: %s with %s (%s + %s) on %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT ", %" PetscInt_FMT " rows, %.0f nonzeros: above a baseline of %.1f MB, %.1f MB after the vectors, %.1f after the assembly, %.1f after KSPSetUp, %.1f and %.1f after two solves, peak %.1f MB (in %s, %ld readings); ELLR storage %.1f MB, %" PetscInt_FMT " copies to aijcusparse's CSR, %" PetscInt_FMT " ELLR builds; %" PetscInt_FMT " iterations, %s, second solve %.4f s\n",
                        type, label, ksptype, pctype, mx, my, mz, rows, (double)info.nz_used, base_mb, vectors_mb, assembled_mb, setup_mb, solve1_mb, solve2_mb, peak_mb, PhaseNames[s.min_phase], s.readings, ellr_mb, copies, builds, its, KSPConvergedReasons[reason], t1 - t0));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "MEMORY type=%s solver=%s n=%" PetscInt_FMT " rows=%" PetscInt_FMT " nnz=%.0f baseline_mb=%.1f vectors_mb=%.1f assembled_mb=%.1f setup_mb=%.1f solve1_mb=%.1f solve2_mb=%.1f peak_mb=%.1f peak_at=%s ellr_mb=%.1f cusparse_copies=%" PetscInt_FMT " ellr_builds=%" PetscInt_FMT " its=%" PetscInt_FMT " reason=%s solve2_s=%.6f first_s=%.6f ballast_free_mb=%.0f total_mb=%.0f\n",
                        type, label, mx, rows, (double)info.nz_used, base_mb, vectors_mb, assembled_mb, setup_mb, solve1_mb, solve2_mb, peak_mb, PhaseNames[s.min_phase], ellr_mb, copies, builds, its, KSPConvergedReasons[reason], t1 - t0, ts1 - ts0,
                        ballast_free_mb, (double)total / MB));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  /* the ballast is never freed: it holds the budget until the process ends, PETSc's finalization included */
  (void)ballast;
  return 0;
}
#endif
