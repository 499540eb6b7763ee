#!/usr/bin/env bash
# tests/gpu/transpose.sh OUTDIR - what a repeatable MatMultTranspose costs on the GPU: BiCG (one MatMult and one
# MatMultTranspose per iteration) on tutorials/ex1's 3D 7-point Poisson, 100^3, 200 iterations, with aijcusparse and
# with ellrt and pellr, each with -mat_ellr_transpose stored (the default: a transposed copy made at the first
# transpose product), atomic (A's storage, atomicAdd into y) and with the matrix flagged symmetric for good (ex1
# -symmetric: MAT_SYMMETRIC and MAT_SYMMETRY_ETERNAL, A^T x is A's own product).  Prints MatMult and MatMultTranspose
# per call (wall time from -log_view, -log_view_gpu_time on; one-time costs included), the plugin's build events and
# KSPSolve; run after tests/gpu/prepare.sh, on the GPU machine (run.sh's environment).
set -uo pipefail
OUT=${1:?usage: tests/gpu/transpose.sh OUTDIR}
cd "$(dirname "$0")/../.."
B=$PWD/build/cuda
mkdir -p "$OUT"
opts="-n 100 -ksp_type bicg -pc_type jacobi -ksp_max_it 200 -ksp_rtol 1e-30 -log_view -log_view_gpu_time -use_gpu_aware_mpi 0"
printf '| type | transpose | MatMult ms/call | MatMultTranspose ms/call | ELLRBuild s (count) | KSPSolve s |\n|---|---|---|---|---|---|\n'
for run in "aijcusparse -" "ellrt stored" "ellrt atomic" "ellrt symmetric" "pellr stored" "pellr atomic" "pellr symmetric"; do
  set -- $run
  extra=; [ "$2" != - ] && extra="-mat_ellr_transpose $2"
  [ "$2" = symmetric ] && extra="-symmetric" # MAT_SYMMETRIC: A^T x on A's own storage
  log=$OUT/transpose-$1-$2.log
  $B/tutorials/ex1 -mat_type $1 $extra $opts > "$log" 2>&1
  ev() { awk -v e="$1" '$1 == e { printf "%.4f", 1000 * $4 / $2; exit }' "$log"; }
  build=$(awk '$1 == "ELLRBuild" { printf "%s (%s)", $4, $2; exit }' "$log")
  solve=$(awk '$1 == "KSPSolve" { print $4; exit }' "$log")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$(ev MatMult)" "$(ev MatMultTranspose)" "${build:--}" "$solve"
done
