#!/usr/bin/env bash
# tests/gpu/precond.sh OUTDIR [PROBLEMS] - time to solution per preconditioner with aijcusparse, sellcuda, ellrt and
# pellr: same PETSc build, same run, CG to rtol 1e-8.  Writes OUTDIR/precond.md (tests/gpu/precond.py) and the logs.
#   problems: ex45_128, ex45_160 (PETSc's unmodified ex45, -dm_vec_type cuda), ex1_27pt_100 (our ex1, 27-point, SPD)
#   preconditioners: jacobi, ilu, icc (ex1_27pt_* only), gamg, and bjacobi + ilu on 2 MPI ranks
#
# Usage (on the GPU machine; tests/gpu/run.sh OUTDIR precond runs it with ELLR_PRECOND_PROBLEMS as PROBLEMS):
#   tests/gpu/precond.sh OUT                            all three problems (about 13 minutes on one H100)
#   tests/gpu/precond.sh OUT "ex45_128 ex1_27pt_100"    the problems can be split across calls, each call with
#   tests/gpu/precond.sh OUT2 "ex45_160"                a table of its own (about 7 and 6 minutes)
#   REPEATS=5 tests/gpu/precond.sh OUT ...              timing runs per type (default 3)
#   PRECOND_PCS="gamg" tests/gpu/precond.sh OUT ...     only these preconditioners
# tests/gpu/precond.py DIR makes one table of the logs of several calls copied into one DIR.
#
# Each run is one process as a user runs it. Per problem and preconditioner: REPEATS timing runs per type with
# -log_view and no -log_view_gpu_time (that option synchronizes the GPU at the end of every event, which slows every
# type down and is not what a user runs), the types interleaved in each repetition so that a drift of the machine
# hits all of them alike. Without -log_view_gpu_time PETSc's table prints n/a for the times of most events, so the
# same runs also write -log_view's CSV (ascii_csv: each event's time on the CPU clock, per rank). Then one profile
# run per type with -log_view_gpu_time for the GPU times of single events (our set-up, MatMult per call). For ours
# one more short run with -mat_view ::ascii_info gives the storage's device memory. A type whose first timing run
# fails (sellcuda has no ILU, ICC or GAMG) is not run again for that problem and preconditioner.
set -uo pipefail
OUT=${1:?}
PROBLEMS=${2:-ex45_128 ex45_160 ex1_27pt_100}
REPEATS=${REPEATS:-3}
T0=$(date +%s)
cd "$(dirname "$0")/../.."
B=$PWD/build/cuda
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 -dll_append $B/lib/libpetscellr.so"
TYPES="aijcusparse sellcuda ellrt pellr"
PCS=${PRECOND_PCS:-jacobi ilu icc gamg bjacobi}   # PRECOND_PCS: a subset
mkdir -p "$OUT"
# for the table's header line (tests/gpu/precond.py): the device (tests/gpu/run.sh writes it too), the CUDA toolkit
[ -s "$OUT/device.txt" ] || nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/device.txt" 2>/dev/null
{ nvcc --version || /usr/local/cuda/bin/nvcc --version; } 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p' > "$OUT/cuda.txt"

problem() { # NAME TYPE -> the command line
  case $1 in
    ex45_*) local n=${1#ex45_}; echo "$B/petsc-tutorials/ex45 -da_grid_x $n -da_grid_y $n -da_grid_z $n -dm_mat_type $2 -dm_vec_type cuda" ;;
    ex1_27pt_*) echo "$B/tutorials/ex1 -stencil 27 -n ${1#ex1_27pt_} -mat_type $2" ;;
  esac
}

solve() { # LOG TYPE OPTIONS...: one process of problem $p with preconditioner options $opts; its exit status
  local log=$1 t=$2 t0 t1 rc
  shift 2
  t0=$(date +%s%N)
  # a run that stops making progress is ended (exit status 124) and counts as failed: the table goes on
  timeout "${PRECOND_RUN_LIMIT:-120}" $mpi $(problem $p $t) -ksp_type cg -ksp_rtol 1e-8 $opts -ksp_converged_reason "$@" > "$log" 2>&1
  rc=$?
  t1=$(date +%s%N)
  echo "WALL $(( (t1 - t0) / 1000000 )) ms rc $rc np $np" >> "$log"
  return $rc
}

for p in $PROBLEMS; do
  for pc in $PCS; do
    # ex45's operator is not SPD: CG with ICC runs to its 10000-iteration limit there (20-30 s a run) and tells
    # nothing about the matrix types
    [ "$pc" = icc ] && case $p in ex1_27pt_*) ;; *) continue ;; esac
    np=1
    opts="-pc_type $pc"
    [ "$pc" = bjacobi ] && { np=2; opts="-pc_type bjacobi -sub_pc_type ilu"; }
    mpi=""
    [ $np = 1 ] || mpi="mpiexec --allow-run-as-root --oversubscribe -n $np"
    failed=" "
    for k in $(seq 1 "$REPEATS"); do
      for t in $TYPES; do
        case $failed in *" $t "*) continue ;; esac
        base="$OUT/pc_${p}_${pc}_${t}_r$k"
        # two viewers: the usual table on stdout (copies, iterations), the CSV with the event times into a file
        solve "$base.log" $t -log_view "ascii,:$base.csv:ascii_csv" || { [ $k = 1 ] && failed="$failed$t "; }
      done
    done
    for t in $TYPES; do
      case $failed in *" $t "*) continue ;; esac
      solve "$OUT/pc_${p}_${pc}_${t}_gpu.log" $t -log_view -log_view_gpu_time
      # ours: the storage's size from -mat_view in a run of its own (the view builds the storage inside MatAssemblyEnd)
      case $t in ellrt | pellr) [ "$pc" = jacobi ] && $mpi $(problem $p $t) -ksp_type cg -ksp_max_it 1 -pc_type jacobi -mat_view ::ascii_info > "$OUT/pc_${p}_${pc}_${t}.info" 2>&1 ;; esac
    done
  done
done
python3 tests/gpu/precond.py "$OUT" > "$OUT/precond.md"
python3 tests/gpu/precond_plot.py "$OUT/precond.md" "$OUT/precond.png"
cat "$OUT/precond.md"
echo "precond.sh: $PROBLEMS, REPEATS=$REPEATS: $(( $(date +%s) - T0 )) s"
