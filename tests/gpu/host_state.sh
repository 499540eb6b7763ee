#!/usr/bin/env bash
# tests/gpu/host_state.sh OUTDIR - how much PETSc's host set-up varies from process to process, per matrix type:
# ex45 160^3 (PETSc's, -dm_vec_type cuda, one Jacobi-CG iteration), aijcusparse and ellrt, back to back, with 8 s
# pauses, under numactl (where present) and taskset.  One line per process: SFSetGraph (DMSetUp, before the matrix
# type is read), DMCreateMat (DMDA's preallocation, zero fill and assembly) and ex45's MatSetValuesStencil loop.
# Read with the preconditioner table (tests/gpu/precond.sh): its whole-program walls carry this spread.
D=${1:?usage: tests/gpu/host_state.sh OUTDIR}
mkdir -p "$D" && D=$(cd "$D" && pwd)
cd "$(dirname "$0")/../.."
B=$PWD/build/cuda
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 -dll_append $B/lib/libpetscellr.so"
lscpu | grep -iE "numa|model name|^CPU\(s\)|socket"
command -v numactl > /dev/null && numactl -H | head -2
one() { # TAG PREFIX TYPE
  local tag=$1 pre=$2 t=$3
  $pre $B/petsc-tutorials/ex45 -da_grid_x 160 -da_grid_y 160 -da_grid_z 160 -dm_mat_type $t -dm_vec_type cuda -ksp_type cg -pc_type jacobi -ksp_max_it 1 -log_view ascii,:$D/l.csv:ascii_csv > /dev/null 2>&1
  python3 - "$D/l.csv" "$tag $t" << 'P'
import csv, sys
r = {x['Event Name']: float(x['Time']) for x in csv.DictReader(open(sys.argv[1])) if x.get('Time')}
print(f"{sys.argv[2]:28s} total {r['summary']:.2f} SFSetGraph {r.get('SFSetGraph', 0):.3f} DMCreateMat {r.get('DMCreateMat', 0):.2f} setvalues {r.get('Set values', 0):.2f}")
P
}
for t in aijcusparse ellrt; do for k in 1 2 3 4; do one back-to-back "" $t; done; done
for k in 1 2 3; do for t in aijcusparse ellrt; do sleep 8; one pause8 "" $t; done; done
if command -v numactl > /dev/null; then for k in 1 2 3; do for t in aijcusparse ellrt; do one numa0 "numactl -N 0 -m 0" $t; done; done; fi
for k in 1 2 3; do for t in aijcusparse ellrt; do one taskset "taskset -c 1-7" $t; done; done
rm -f "$D/l.csv"
