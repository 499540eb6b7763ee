#!/usr/bin/env bash
# tests/gpu/precond.sh OUTDIR [PROBLEMS] - time to solution per preconditioner with aijcusparse, sellcuda, ellrt and
# pellr: same PETSc build, same run, CG to rtol 1e-8.  Writes OUTDIR/precond.md (tests/gpu/precond.py) and the logs.
#   problems: ex45_128, ex45_160 (PETSc's unmodified ex45, -dm_vec_type cuda), ex1_27pt_100 (our ex1, 27-point, SPD)
#   preconditioners: jacobi, ilu, icc, gamg, and bjacobi + ilu on 2 MPI ranks
# Each run is one process as a user runs it, with -log_view -log_view_gpu_time (events timed with the GPU synchronized;
# without it PETSc prints n/a for GPU times); for ours one more short run with -mat_view ::ascii_info gives the storage's
# device memory.
set -uo pipefail
OUT=${1:?}
PROBLEMS=${2:-ex45_128 ex45_160 ex1_27pt_100}
cd "$(dirname "$0")/../.."
B=$PWD/build/cuda
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 -dll_append $B/lib/libpetscellr.so"
TYPES="aijcusparse sellcuda ellrt pellr"
PCS="jacobi ilu icc gamg bjacobi"
mkdir -p "$OUT"

problem() { # NAME TYPE -> the command line
  case $1 in
    ex45_*) local n=${1#ex45_}; echo "$B/petsc-tutorials/ex45 -da_grid_x $n -da_grid_y $n -da_grid_z $n -dm_mat_type $2 -dm_vec_type cuda" ;;
    ex1_27pt_*) echo "$B/tutorials/ex1 -stencil 27 -n ${1#ex1_27pt_} -mat_type $2" ;;
  esac
}

for p in $PROBLEMS; do
  for pc in $PCS; do
    for t in $TYPES; do
      np=1
      opts="-pc_type $pc"
      [ "$pc" = bjacobi ] && { np=2; opts="-pc_type bjacobi -sub_pc_type ilu"; }
      mpi=""
      [ $np = 1 ] || mpi="mpiexec --allow-run-as-root --oversubscribe -n $np"
      log="$OUT/pc_${p}_${pc}_${t}.log"
      t0=$(date +%s%N)
      $mpi $(problem $p $t) -ksp_type cg -ksp_rtol 1e-8 $opts -ksp_converged_reason -log_view -log_view_gpu_time > "$log" 2>&1
      rc=$?
      t1=$(date +%s%N)
      echo "WALL $(( (t1 - t0) / 1000000 )) ms rc $rc np $np" >> "$log"
      # ours: the storage's size from -mat_view in a run of its own (the view builds the storage inside MatAssemblyEnd)
      case $t in ellrt | pellr) [ "$pc" = jacobi ] && $mpi $(problem $p $t) -ksp_type cg -ksp_max_it 1 -pc_type jacobi -mat_view ::ascii_info > "${log%.log}.info" 2>&1 ;; esac
    done
  done
done
python3 tests/gpu/precond.py "$OUT" > "$OUT/precond.md"
python3 tests/gpu/precond_plot.py "$OUT/precond.md" "$OUT/precond.png"
cat "$OUT/precond.md"
