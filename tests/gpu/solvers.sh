#!/usr/bin/env bash
# tests/gpu/solvers.sh OUTDIR [NPS] - time to solution with aijcusparse, sellcuda, ellrt and pellr: same PETSc build,
# same run, solves to rtol 1e-6 (CG + Jacobi).  Writes OUTDIR/tts.md (tests/gpu/tts.py) and the logs.
#   NPS (default "1"): the MPI sizes, one GPU per rank ("1 2" on a machine with two GPUs).
#   on 1 GPU:  PETSc's unmodified ex45 160^3; our ex1 7-point 160^3 and 27-point 100^3 (-timing -solves 2), and
#              the small ex1 7-point 24^3 and 27-point 16^3
#   on NP > 1: ex45 192^3 and ex1 7-point 192^3 (the same problems on 1 GPU are run too, for the speed-up)
set -uo pipefail
OUT=${1:?}
NPS=${2:-1}
cd "$(dirname "$0")/../.."
B=$PWD/build/cuda
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 -dll_append $B/lib/libpetscellr.so"
TYPES="aijcusparse sellcuda ellrt pellr"
SOLVE="-ksp_type cg -pc_type jacobi -ksp_rtol 1e-6 -ksp_converged_reason -log_view"

# run NAME NP TYPE COMMAND...: three runs, logs named for tts.py
#   timed:  the solve as a user runs it (-log_view without GPU timing, which would add synchronizations)
#   events: one iteration with -log_view_gpu_time: MatAssemblyEnd and the one-time copy events, timed properly
#   info:   one iteration with -mat_view ::ascii_info (ours only): the set-up's parts (the view builds the storage
#           inside MatAssemblyEnd, so this run is not timed)
run() {
  local name=$1 np=$2 t=$3
  shift 3
  local mpi="" log="$OUT/tts_${name}_${t}_np$np"
  [ "$np" = 1 ] || mpi="mpiexec --allow-run-as-root -n $np"
  $mpi "$@" $SOLVE > "$log.log" 2>&1
  $mpi "$@" $SOLVE -ksp_max_it 1 -log_view_gpu_time > "$log.events" 2>&1
  case $t in ellrt | pellr) $mpi "$@" $SOLVE -ksp_max_it 1 -mat_view ::ascii_info > "$log.info" 2>&1 ;; esac
}

for np in $NPS; do
  if [ "$NPS" = 1 ]; then
    for t in $TYPES; do
      run ex45_160 1 $t $B/petsc-tutorials/ex45 -da_grid_x 160 -da_grid_y 160 -da_grid_z 160 -dm_mat_type $t -dm_vec_type cuda
      run ex1_7pt_160 1 $t $B/tutorials/ex1 -stencil 7 -n 160 -mat_type $t -timing -solves 2
      run ex1_27pt_100 1 $t $B/tutorials/ex1 -stencil 27 -n 100 -mat_type $t -timing -solves 2
      # small problems, where the set-up is most of what a solve pays
      run ex1_7pt_24 1 $t $B/tutorials/ex1 -stencil 7 -n 24 -mat_type $t -timing -solves 2
      run ex1_27pt_16 1 $t $B/tutorials/ex1 -stencil 27 -n 16 -mat_type $t -timing -solves 2
    done
  else
    for t in $TYPES; do
      run ex45_192 $np $t $B/petsc-tutorials/ex45 -da_grid_x 192 -da_grid_y 192 -da_grid_z 192 -dm_mat_type $t -dm_vec_type cuda
      run ex1_7pt_192 $np $t $B/tutorials/ex1 -stencil 7 -n 192 -mat_type $t -timing -solves 2
    done
  fi
done
python3 tests/gpu/tts.py "$OUT" > "$OUT/tts.md"
cat "$OUT/tts.md"
