#!/usr/bin/env bash
# tests/gpu/solvers.sh OUTDIR - KSP solves on the GPU with aijcusparse, sellcuda, ellrt and pellr: same PETSc
# build, same run, fixed iteration count, -log_view; writes OUTDIR/solvers.md (a markdown table) and the logs.
#   (a) PETSc's unmodified ex45: 3D Laplacian on a 160^3 DMDA, CG + Jacobi, 300 iterations
#   (b) our ex1: 27-point stencil, N = 100, CG + Jacobi, 300 iterations
#   (c) memplus (irregular rows) through our ex2: Richardson + Jacobi, 300 products, no norms
# Each solve runs twice, with 300 and with 0 iterations; tests/gpu/logview.py takes the difference.
set -uo pipefail
OUT=${1:?}
cd "$(dirname "$0")/../.."
B=$PWD/build/cuda
L=$B/lib/libpetscellr.so
LV="python3 tests/gpu/logview.py"
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 -dll_append $L"
LOGS="-ksp_rtol 1e-30 -ksp_atol 0 -ksp_converged_reason -log_view -log_view_gpu_time"
TYPES="aijcusparse sellcuda ellrt pellr"
{
  echo "| problem | type | MatMult calls | MatMult ms/call | GB/s-eff | KSPSolve ms/iteration | setup ms | setup / product | matrix MB (device) | iterations |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$OUT/solvers.md"

# solve NAME TYPE N NNZ NCOLS COMMAND...: the 300- and 0-iteration runs, the info run for our types, one table row
solve() {
  local name=$1 t=$2 n=$3 nnz=$4 ncols=$5
  shift 5
  local tag
  tag=$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_')_$t
  "$@" $LOGS -ksp_max_it 300 > "$OUT/$tag.log" 2>&1
  "$@" $LOGS -ksp_max_it 0 > "$OUT/${tag}_0.log" 2>&1
  case $t in ellrt | pellr) "$@" -ksp_max_it 1 -mat_view ::ascii_info > "$OUT/${tag}_info.log" 2>&1 ;; esac
  $LV "$name" "$t" "$n" "$nnz" "$ncols" "$OUT/$tag.log" "$OUT/${tag}_0.log" "$OUT/${tag}_info.log" >> "$OUT/solvers.md"
}

for t in $TYPES; do
  solve "ex45 160^3 7-pt" $t 4096000 28518400 4096000 $B/petsc-tutorials/ex45 -da_grid_x 160 -da_grid_y 160 -da_grid_z 160 -dm_mat_type $t -dm_vec_type cuda -ksp_type cg -pc_type jacobi
done
for t in $TYPES; do
  solve "ex1 100^3 27-pt" $t 1000000 26463592 1000000 $B/tutorials/ex1 -stencil 27 -n 100 -mat_type $t -ksp_type cg -pc_type jacobi
done
PETSC_DIR=$(cat $B/PETSC_PREFIX) python3 tutorials/mtx2petsc.py $B/matrices/memplus.mtx.gz "$OUT/memplus.petsc" > /dev/null 2>&1
for t in $TYPES; do
  solve "memplus ex2" $t 17758 126150 17758 $B/tutorials/ex2 -f "$OUT/memplus.petsc" -load_as_aij -mat_type $t -ksp_type richardson -pc_type jacobi -ksp_norm_type none
done
rm -f "$OUT"/memplus.petsc*
cat "$OUT/solvers.md"
