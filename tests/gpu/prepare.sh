#!/usr/bin/env bash
# tests/gpu/prepare.sh - builds, on this (CPU) machine, everything tests/gpu/run.sh runs on the GPU machine, so that
# the GPU machine only runs.  Copy build/cuda and .petsc-cuda/petsc-cuda.tar.xz there and run
#     tests/gpu/run.sh OUTDIR [PART]
#
# The plugin, tutorials and tests are built against the CUDA-enabled PETSc of config/build-petsc-cuda.sh
# (BUILD=build/cuda), plus PETSc's own examples from its source, unmodified: the KSP tutorials ex2, ex23, ex45, ex50, ex4,
# ex18, ex54, ex56, the mat test ex70 (as mat_ex70) and the SNES tutorial ex19 (as snes_ex19).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
# ELLR_PETSC_DEBUG=1: against a debugging CUDA PETSc instead (PETSc's argument and type checks, stack traces on
# errors), into build/cuda-debug with .petsc-cuda/petsc-cuda-debug.tar.xz; the suite only (no benchmarks); run it there
# with ELLR_GPU_BUILD=build/cuda-debug tests/gpu/run.sh OUTDIR tests
# NCCL's header, for the MPI product's GPU-to-GPU ghost exchange (the library loads NCCL itself at run time, where it
# is installed): from PyPI's nvidia-nccl-cu13 wheel, whose library the GPU machine's Python has
if [ ! -f /usr/local/cuda/include/nccl.h ] && [ ! -f /usr/include/nccl.h ] && [ ! -f .petsc-cuda/nccl/include/nccl.h ]; then
  d=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_18_x86_64 -d "$d" nvidia-nccl-cu13
  mkdir -p .petsc-cuda/nccl/include
  python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("nvidia/nccl/include/nccl.h"))' "$d"/nvidia_nccl_cu13-*.whl .petsc-cuda/nccl/include/nccl.h
  rm -rf "$d"
fi
if [ "${ELLR_PETSC_DEBUG:-0}" = 1 ]; then
  P=${PETSC_CUDA_PREFIX:-$ROOT/.petsc-cuda/install-debug} TARBALL=.petsc-cuda/petsc-cuda-debug.tar.xz B=build/cuda-debug
  PETSC_CUDA_DEBUG=1 PETSC_CUDA_PREFIX="$P" config/build-petsc-cuda.sh
  [ -f $TARBALL ] || PETSC_CUDA_PREFIX="$P" PETSC_CUDA_TARBALL=$TARBALL config/pack-petsc-cuda.sh
  make --no-print-directory -s PETSC_DIR="$P" BUILD=$B all
else
  P=${PETSC_CUDA_PREFIX:-$ROOT/.petsc-cuda/install} TARBALL=.petsc-cuda/petsc-cuda.tar.xz B=build/cuda
  PETSC_CUDA_PREFIX="$P" config/build-petsc-cuda.sh
  [ -f $TARBALL ] || PETSC_CUDA_PREFIX="$P" config/pack-petsc-cuda.sh
  # (all: the tests, tests/gpu/ptap_loop and tests/gpu/memory, the device-memory benchmark of tests/gpu/memory.sh, included)
  make --no-print-directory -s PETSC_DIR="$P" BUILD=$B all spmv
  mkdir -p $B/tests/gpu
  nvcc -O2 -std=c++17 -arch=sm_90 tests/gpu/upload_bench.cu -o $B/tests/gpu/upload_bench -lpthread
  # what a reduction of the Krylov loop costs in a CUDA graph on several GPUs (NCCL loaded at run time, as the library
  # does; nccl.h where the makefile looks, in its order); a benchmark only: the build goes on without it
  nccl_inc=
  for h in /usr/local/cuda/include/nccl.h /usr/include/nccl.h .petsc-cuda/nccl/include/nccl.h; do [ -z "$nccl_inc" ] && [ -f $h ] && nccl_inc=$(dirname $h); done
  [ -n "$nccl_inc" ] && { nvcc -O2 -std=c++17 -arch=sm_90 -I"$nccl_inc" -Isrc/ksp/impls/deviceloop $(mpicc --showme:compile) tests/gpu/allreduce_graph.cu -o $B/tests/gpu/allreduce_graph $(mpicc --showme:link | sed 's/-pthread/-Xcompiler -pthread/g') -ldl || echo "tests/gpu/allreduce_graph not built (a benchmark of scaling.sh)"; }

fi

T=$B/petsc-tutorials
mkdir -p $T
sdist=$(ls .petsc-cuda/downloads/petsc-*.tar.gz | head -1)
top=$(basename "$sdist" .tar.gz)
for ex in ex2 ex23 ex45 ex50 ex4 ex18 ex54 ex56; do tar xzf "$sdist" -C $T --strip-components=5 "$top/src/ksp/ksp/tutorials/$ex.c"; done
# examples of other folders, named after the folder as tests/run.sh names them (their numbers clash with ksp's)
tar xzf "$sdist" -O "$top/src/mat/tests/ex70.c" > $T/mat_ex70.c
tar xzf "$sdist" -O "$top/src/snes/tutorials/ex19.c" > $T/snes_ex19.c
printf 'include ${PETSC_DIR}/lib/petsc/conf/variables\ninclude ${PETSC_DIR}/lib/petsc/conf/rules\ninclude ${PETSC_DIR}/lib/petsc/conf/test\n' > $T/makefile
make --no-print-directory -s -C $T PETSC_DIR="$P" ex2 ex23 ex45 ex50 ex4 ex18 ex54 ex56 mat_ex70 snes_ex19 >/dev/null

mkdir -p $B/matrices
cp tests/matrices/*.mtx.gz $B/matrices/
# larger matrices for the benchmark, from a directory the user gives (ELLR_LARGE_MATRICES); without it their rows are missing
[ -n "${ELLR_LARGE_MATRICES:-}" ] && cp "$ELLR_LARGE_MATRICES"/*.mtx.gz $B/matrices/
echo "$P" > $B/PETSC_PREFIX
echo "$TARBALL" > $B/PETSC_TARBALL
du -sh $B $TARBALL
