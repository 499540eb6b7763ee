#!/usr/bin/env bash
# tests/gpu/smoke.sh OUTDIR - a quick look on the GPU machine (after tests/gpu/prepare.sh here): the types on one and two
# ranks with -mat_view ::ascii_info and -log_view (the ELLRMult event proves the products ran on the storage), and
# PETSc's ex45 160^3 CG + Jacobi with aijcusparse, ellrt and pellr in the same run (KSPSolve, MatMult, iterations).
set -uo pipefail
OUT=${1:?}
cd "$(dirname "$0")/../.."
B=$PWD/build/cuda
P=$(cat $B/PETSC_PREFIX)
[ -f "$P/lib/libpetsc.so" ] || config/unpack-petsc-cuda.sh "$(cat $B/PETSC_TARBALL)" "$P" > "$OUT/unpack.log" 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$B/lib:$P/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PETSC_OPTIONS="-use_gpu_aware_mpi 0"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/device.txt"
for np in 1 2; do
  for t in ellrt pellr; do
    mpiexec -n $np $B/tutorials/ex1 -mat_type $t -n 64 -stencil 27 -ksp_type cg -pc_type jacobi -mat_view ::ascii_info -log_view > "$OUT/ex1_${t}_np$np.log" 2>&1
    echo "ex1 $t np$np: exit $? $(grep -E '^ELLRMult ' "$OUT/ex1_${t}_np$np.log" | awk '{print "ELLRMult count", $2}') $(grep 'KSP iterations' "$OUT/ex1_${t}_np$np.log")"
  done
done
E=$B/petsc-tutorials/ex45
for r in 1 2 3; do
  for t in aijcusparse ellrt pellr; do
    $E -dll_append $B/lib/libpetscellr.so -da_grid_x 160 -da_grid_y 160 -da_grid_z 160 -dm_mat_type $t -dm_vec_type cuda -ksp_type cg -pc_type jacobi -ksp_rtol 1e-6 -ksp_converged_reason -log_view > "$OUT/ex45_160_${t}_r$r.log" 2>&1
    echo "ex45 160^3 $t run $r: $(grep -E '^KSPSolve ' "$OUT/ex45_160_${t}_r$r.log" | awk '{print "KSPSolve", $4, "s"}') $(grep -E '^MatMult ' "$OUT/ex45_160_${t}_r$r.log" | awk '{print "MatMult", $2, "calls", $4, "s"}') $(grep -o 'iterations [0-9]*' "$OUT/ex45_160_${t}_r$r.log")"
  done
done
