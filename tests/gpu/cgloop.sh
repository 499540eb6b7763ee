#!/usr/bin/env bash
# tests/gpu/cgloop.sh OUTDIR [PROBLEMS] - the CG loop benchmark: PETSc's KSPCG against the library's KSPCGDEVICE with
# aijcusparse, sellcuda, ellrt and pellr, CG + Jacobi, in one run; writes OUTDIR/cgloop.md (tests/gpu/cgloop.py).
#   problems: ex45_96 ex45_128 ex45_160 ex45_192 (PETSc's unmodified ex45, CUDA vectors), ex1_27pt_100 (our ex1)
#   time per iteration: (KSPSolve at 500 iterations - at 100) / 400, iterations forced by -ksp_rtol 0 -ksp_atol 0, medians of
#   REPEATS runs (default 3), the types and solvers interleaved in each repetition; -log_view without GPU timing
#   time to solution: ex45_160 to rtol 1e-6, KSPSolve as PETSc logs it (the one-time work of the solve included)
#   bound: the bytes an iteration must move (product + vectors, counted in cgloop.py) over the device's copy rate
# CGLOOP_METHOD=bcgs: PETSc's KSPBCGS against KSPBCGSDEVICE instead, BiCGStab + Jacobi, on the nonsymmetric
#   convection-diffusion of our ex1 (ex1_conv_N: -convection 0.5, N^3 rows) and on ex45; iterations 50 and 250 (two
#   products each), time to solution on ex1_conv_160 to rtol 1e-6.  e.g. CGLOOP_METHOD=bcgs tests/gpu/cgloop.sh OUT
set -uo pipefail
OUT=${1:?}
METHOD=${CGLOOP_METHOD:-cg}
case $METHOD in
  cg) DEFAULT_PROBLEMS="ex45_96 ex45_128 ex45_160 ex45_192 ex1_27pt_100" ITS="100 500" TTS=ex45_160 ;;
  bcgs) DEFAULT_PROBLEMS="ex1_conv_100 ex1_conv_160 ex1_conv_200 ex45_128" ITS="50 250" TTS=ex1_conv_160 ;;
  *) echo "CGLOOP_METHOD is cg or bcgs, not $METHOD" >&2; exit 2 ;;
esac
PROBLEMS=${2:-$DEFAULT_PROBLEMS}
REPEATS=${REPEATS:-3}
cd "$(dirname "$0")/../.."
B=$PWD/${ELLR_GPU_BUILD:-build/cuda}
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 -dll_append $B/lib/libpetscellr.so"
TYPES=${CGLOOP_TYPES:-aijcusparse sellcuda ellrt pellr}
mkdir -p "$OUT"
[ -s "$OUT/device.txt" ] || nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/device.txt" 2>/dev/null
problem() { # NAME TYPE
  case $1 in
    ex45_*) local n=${1#ex45_}; echo "$B/petsc-tutorials/ex45 -da_grid_x $n -da_grid_y $n -da_grid_z $n -dm_mat_type $2 -dm_vec_type cuda" ;;
    ex1_27pt_*) echo "$B/tutorials/ex1 -stencil 27 -n ${1#ex1_27pt_} -mat_type $2" ;;
    ex1_conv_*) echo "$B/tutorials/ex1 -convection 0.5 -n ${1#ex1_conv_} -mat_type $2" ;;
  esac
}
for r in $(seq 1 $REPEATS); do
  for p in $PROBLEMS; do
    for t in $TYPES; do
      for k in $METHOD ${METHOD}device; do
        for its in $ITS; do
          timeout 120 $(problem $p $t) -ksp_type $k -pc_type jacobi -ksp_rtol 0 -ksp_atol 0 -ksp_max_it $its -ksp_converged_reason -ksp_view -log_view > "$OUT/iter_${p}_${t}_${k}_${its}_$r.log" 2>&1
        done
      done
    done
  done
  for t in $TYPES; do
    for k in $METHOD ${METHOD}device; do
      timeout 120 $(problem $TTS $t) -ksp_type $k -pc_type jacobi -ksp_rtol 1e-6 -ksp_converged_reason -log_view > "$OUT/tts_${TTS}_${t}_${k}_$r.log" 2>&1
    done
  done
done
python3 tests/gpu/cgloop.py "$OUT" $METHOD > "$OUT/${METHOD}loop.md"
cat "$OUT/${METHOD}loop.md"
