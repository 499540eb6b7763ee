#!/usr/bin/env bash
# tests/gpu/prepare.sh - builds, on this (CPU) machine, everything tests/gpu/run.sh runs on the GPU machine, so that
# the GPU machine only runs.  Copy build/cuda and .petsc-cuda/petsc-cuda.tar.xz there and run
#     tests/gpu/run.sh OUTDIR [PART]
#
# The plugin, tutorials and tests are built against the CUDA-enabled PETSc of config/build-petsc-cuda.sh
# (BUILD=build/cuda), plus PETSc's own KSP tutorials ex2, ex23, ex45, ex50 from its source, unmodified.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
P=${PETSC_CUDA_PREFIX:-$ROOT/.petsc-cuda/install}
config/build-petsc-cuda.sh
[ -f .petsc-cuda/petsc-cuda.tar.xz ] || config/pack-petsc-cuda.sh
B=build/cuda
make --no-print-directory -s PETSC_DIR="$P" BUILD=$B all spmv
mkdir -p $B/tests/gpu
nvcc -O2 -std=c++17 -arch=sm_90 tests/gpu/upload_bench.cu -o $B/tests/gpu/upload_bench -lpthread

T=$B/petsc-tutorials
mkdir -p $T
sdist=$(ls .petsc-cuda/downloads/petsc-*.tar.gz | head -1)
top=$(basename "$sdist" .tar.gz)
for ex in ex2 ex23 ex45 ex50; do tar xzf "$sdist" -C $T --strip-components=5 "$top/src/ksp/ksp/tutorials/$ex.c"; done
printf 'include ${PETSC_DIR}/lib/petsc/conf/variables\ninclude ${PETSC_DIR}/lib/petsc/conf/rules\ninclude ${PETSC_DIR}/lib/petsc/conf/test\n' > $T/makefile
make --no-print-directory -s -C $T PETSC_DIR="$P" ex2 ex23 ex45 ex50 >/dev/null

mkdir -p $B/matrices
cp tests/matrices/*.mtx.gz $B/matrices/
# larger matrices for the benchmark, from a directory the user gives (ELLR_LARGE_MATRICES); without it their rows are missing
[ -n "${ELLR_LARGE_MATRICES:-}" ] && cp "$ELLR_LARGE_MATRICES"/*.mtx.gz $B/matrices/
echo "$P" > $B/PETSC_PREFIX
du -sh $B .petsc-cuda/petsc-cuda.tar.xz
