#!/usr/bin/env bash
# tests/gpu/scaling.sh OUTDIR [NPS] - strong and weak scaling of CG + Jacobi over the GPUs of one host, one rank per GPU,
# aijcusparse, sellcuda, ellrt and pellr in the same run; ours also with the ghost exchange staged through the host
# (-ellr_nccl 0, MPIAIJ's own exchange) beside NCCL's.  Writes OUTDIR/scaling.md and scaling.png (tests/gpu/scaling.py).
#   NPS (default: 1 2 4 up to the GPUs present)
#   strong: our ex1 7-point 256^3 (16.8M rows), and PETSc's ex45 256^3 for KSPSolve as a user runs it, with PETSc's CG
#           (ex45) and with the library's loop (ex45loop: -ksp_type cgdevice, its reductions through NCCL on 2+ GPUs);
#           strongloop: ex1 256^3 with the library's loop, its time per iteration; ex45late (not by default): ex45loop
#           with NCCL connecting every peer at its first call (-ellr_nccl_connect_at_setup 0), what the early connection saves
#   weak:   our ex1 7-point with about 8.4M rows per GPU (n = 203, 256, 322 for 1, 2, 4 GPUs)
#   floor:  ex1 7-point 32^3 on one GPU (the time an iteration costs when nothing is bandwidth-bound: the model's floor)
#   model inputs: tests/gpu/nccl_pingpong.py (NCCL's latency and bandwidth between two GPUs, same run); beside them
#           tests/gpu/allreduce_graph (a reduction of the loop with NCCL's all-reduce inside a CUDA graph, for the doc)
# ex1 runs -solves 2 -timing: the second solve's time per iteration has no one-time work in it; with NCCL on 2+ GPUs
# the first solve times 100 exchanges' phases (-ellr_halo_timeline: the overlap measured, beside the model's parts).
set -uo pipefail
OUT=${1:?usage: tests/gpu/scaling.sh OUTDIR [NPS]}
cd "$(dirname "$0")/../.."
B=$PWD/${ELLR_GPU_BUILD:-build/cuda}
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
NPS=${2:-$(for n in 1 2 4 8; do [ $n -le "$NGPU" ] && echo $n; done)}
TYPES=${SCALING_TYPES:-aijcusparse sellcuda ellrt pellr}
RUNS=${SCALING_RUNS:-strong strongloop weak ex45 ex45loop} # which series (all by default)
mkdir -p "$OUT"
# NVLink multicast stays off (the machine's rule); NCCL's library from the Python package where no system one is found
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$nccl_lib" ] && export LD_LIBRARY_PATH=$nccl_lib:${LD_LIBRARY_PATH:-}
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 -dll_append $B/lib/libpetscellr.so"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1 > "$OUT/device.txt"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
SOLVE="-ksp_type cg -pc_type jacobi -ksp_rtol 1e-6 -ksp_converged_reason -log_view"

# run NAME NP TYPE HALO ARGS...: one process per GPU; HALO nccl or host (ours), - for the peers
run() {
  local name=$1 np=$2 t=$3 halo=$4
  shift 4
  local extra=""
  local series=$name
  [ "$name" = parts ] && series=strong # the model's inputs go with the strong series
  case " $RUNS " in *" $series "*) ;; *) return 0 ;; esac
  [ "$halo" = host ] && extra="-ellr_nccl 0"
  case $name in ex45loop | strongloop) extra="$extra -ksp_type cgdevice -ksp_view" ;; ex45late) extra="$extra -ksp_type cgdevice -ksp_view -ellr_nccl_connect_at_setup 0" ;; esac
  # ex1's time per iteration is NCCL's exchange from the first product on (-ellr_nccl_wait); ex45 runs as a user runs
  # it: MPI's exchange until NCCL's set-up is done in the background
  [ "${name#ex45}" = "$name" ] && extra="$extra -ellr_nccl_wait"
  # where NCCL's exchange spends a product: 100 products of the first solve timed by events (the second solve untouched)
  [ "$halo" = nccl ] && [ "$np" -gt 1 ] && case $name in strong | weak) extra="$extra -ellr_halo_timeline 100" ;; esac
  timeout ${SCALING_TIMEOUT:-300} mpiexec --allow-run-as-root --bind-to none -n "$np" "$@" $SOLVE $extra -info :mat,sys > "$OUT/${name}_${t}_${halo}_np$np.log" 2>&1
}
variants() { # TYPE NP: the exchange variants of a type
  case $1 in ellrt | pellr) [ "$2" = 1 ] && echo nccl || echo "nccl host" ;; *) echo - ;; esac
}

[ "$NGPU" -ge 2 ] && timeout 120 mpiexec --allow-run-as-root -n 2 python3 tests/gpu/nccl_pingpong.py > "$OUT/pingpong.txt" 2> "$OUT/pingpong.err"
# the loop's reduction in a CUDA graph: the pass, NCCL's all-reduce of its totals, the rule's kernel (us per iteration)
[ "$NGPU" -ge 2 ] && [ -x $B/tests/gpu/allreduce_graph ] && timeout 90 mpiexec --allow-run-as-root --bind-to none -n 2 $B/tests/gpu/allreduce_graph > "$OUT/allreduce.txt" 2>&1
timeout 120 $B/tutorials/ex1 -stencil 7 -n 32 -mat_type ellrt -solves 2 -timing $SOLVE > "$OUT/floor_ellrt_nccl_np1.log" 2>&1
for np in $NPS; do
  case $np in 1) nw=203 ;; 2) nw=256 ;; 4) nw=322 ;; 8) nw=406 ;; esac
  for t in $TYPES; do
    for h in $(variants $t $np); do
      run strong $np $t $h $B/tutorials/ex1 -stencil 7 -n 256 -mat_type $t -solves 2 -timing
      [ $h = host ] || run strongloop $np $t $h $B/tutorials/ex1 -stencil 7 -n 256 -mat_type $t -solves 2 -timing
      [ $np = 1 ] || run weak $np $t $h $B/tutorials/ex1 -stencil 7 -n $nw -mat_type $t -solves 2 -timing
      run ex45 $np $t $h $B/petsc-tutorials/ex45 -da_grid_x 256 -da_grid_y 256 -da_grid_z 256 -dm_mat_type $t -dm_vec_type cuda
      # the loop's reductions need NCCL: no host-staged variant
      [ $h = host ] || run ex45loop $np $t $h $B/petsc-tutorials/ex45 -da_grid_x 256 -da_grid_y 256 -da_grid_z 256 -dm_mat_type $t -dm_vec_type cuda
      [ $h = host ] || run ex45late $np $t $h $B/petsc-tutorials/ex45 -da_grid_x 256 -da_grid_y 256 -da_grid_z 256 -dm_mat_type $t -dm_vec_type cuda
    done
  done
  # one-GPU row of the weak series is its own problem size
  [ $np = 1 ] && for t in $TYPES; do run weak 1 $t $(variants $t 1) $B/tutorials/ex1 -stencil 7 -n $nw -mat_type $t -solves 2 -timing; done
  # the split of one iteration, GPU-timed (events synchronize: not a timing run), for the model
  [ $np = 1 ] && run parts 1 ellrt nccl $B/tutorials/ex1 -stencil 7 -n 256 -mat_type ellrt -log_view_gpu_time
done
python3 tests/gpu/scaling.py "$OUT" > "$OUT/scaling.md"
cat "$OUT/scaling.md"
