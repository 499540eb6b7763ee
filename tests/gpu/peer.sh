#!/usr/bin/env bash
# tests/gpu/peer.sh build | run OUTDIR - PETSc's own GPU test cases with the library's types, through the peer tool
# (PEER: its peer.py; default ../shared/peer/peer.py).  The cases are those of the PETSc 3.26.1 sdist
# (config/build-petsc-cuda.sh unpacks it) whose arguments name aijcusparse, in src/ksp/ksp/{tutorials,tests},
# src/snes/tutorials, src/mat/tests and src/ksp/pc/tests; the variants rewrite aijcusparse to ellrt (cusp_ellrt) and
# pellr (cusp_pellr) beside the case as written (base), with PETSc's harness options -checkfunctionlist -malloc_dump.
#   build (on this machine, after tests/gpu/prepare.sh): compiles those examples against the CUDA PETSc into .peer/B
#          and packs what the GPU machine needs into .peer/ (peer.py, the examples' sources and expected outputs)
#   run OUTDIR (on the GPU machine, carry .peer, build/cuda and .petsc-cuda/petsc-cuda.tar.xz): runs the three variants
#          with 16 jobs (NCCL's exchange where each rank has a GPU and NCCL loads); OUTDIR/peer.tgz holds results.jsonl,
#          report.md and every case's output
# The examples link to their sources by absolute path: run puts the repository at the path it was built at.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
P=$(cat build/cuda/PETSC_PREFIX)
S=$ROOT/.petsc-cuda/src/arch-cuda/petsc-3.26.1
DIRS=src/ksp/ksp/tutorials,src/ksp/ksp/tests,src/snes/tutorials,src/mat/tests,src/ksp/pc/tests
LIB=$ROOT/build/cuda/lib/libpetscellr.so
case ${1:?usage: tests/gpu/peer.sh build | run OUTDIR} in
build)
  PEER=${PEER:-$ROOT/../shared/peer/peer.py}
  mkdir -p .peer
  cp "$PEER" .peer/peer.py
  names=$(grep -l aijcusparse $(for d in ${DIRS//,/ }; do ls $S/$d/*.c $S/$d/*.cu 2>/dev/null; done) | xargs -n1 basename | sed 's/\./\\./g' | paste -sd'|')
  echo "($names)\$" > .peer/only
  python3 .peer/peer.py --petsc-dir "$P" --examples-root $S/src --petsc-config-dir $S/config --dirs $DIRS \
    --variants base --only "($names)\$" --lib "$LIB" --build-dir "$ROOT/.peer/B" --out /tmp/peer-build --jobs 2 --timeout 3 > .peer/build.log 2>&1 || true
  echo "$ROOT" > .peer/ROOT
  tar czf .peer/sdist.tar.gz -C / $(for d in ${DIRS//,/ }; do echo ${S#/}/$d; done) ${S#/}/config ${S#/}/share ${S#/}/lib/petsc/bin
  ls .peer/B | grep -v '\.' | wc -l | sed 's/$/ examples built/'
  du -sh .peer
  ;;
run)
  OUT=${2:?}
  BUILT=$(cat .peer/ROOT)
  if [ "$BUILT" != "$ROOT" ]; then mkdir -p "$(dirname "$BUILT")"; rm -rf "$BUILT"; ln -s "$ROOT" "$BUILT"; fi
  cd "$BUILT"
  [ -f "$P/lib/libpetsc.so" ] || config/unpack-petsc-cuda.sh .petsc-cuda/petsc-cuda.tar.xz "$P" > "$OUT/unpack.log" 2>&1
  tar xzf .peer/sdist.tar.gz -C /
  # an earlier call's records (.peer/results.jsonl): only the cases not in them run
  mkdir -p /tmp/peer-out
  [ -f .peer/results.jsonl ] && cp .peer/results.jsonl /tmp/peer-out/ && PEER_RESUME=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export LD_LIBRARY_PATH=$P/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # NCCL from the machine's Python package where present: cases on several ranks then move their ghosts GPU to GPU on
  # a machine with a GPU per rank; NVLink multicast stays off (the machine's rule)
  nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
  [ -n "$nccl_lib" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$nccl_lib
  export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
  PEER_NO_BUILD=1 PEER_PETSC_OPTIONS="-use_gpu_aware_mpi 0" timeout ${PEER_LIMIT:-500} python3 .peer/peer.py --petsc-dir "$P" --examples-root $S/src \
    --petsc-config-dir $S/config --dirs $DIRS --only "$(cat .peer/only)" --variants ${PEER_VARIANTS:-base,cusp_ellrt,cusp_pellr} \
    --lib "$LIB" --build-dir "$BUILT/.peer/B" --out /tmp/peer-out ${PEER_RESUME:+--resume} --jobs ${PEER_JOBS:-16} --timeout ${PEER_TIMEOUT:-90} > "$OUT/peer.log" 2>&1 || true
  tail -30 "$OUT/peer.log"
  tar czf "$OUT/peer.tgz" -C /tmp peer-out
  ;;
esac
