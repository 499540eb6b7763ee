#!/bin/bash
# The engine on the GPU: run on the GPU machine from the repository root, with build/ built
# here by `make spmv` and the test matrices copied into build/matrices:
#     mkdir -p build/matrices && cp tests/matrices/*.mtx.gz build/matrices/ (and larger ones of your own)
#     tests/spmv/run_gpu.sh OUTDIR [spmv options...]
# Writes nvidia-smi.txt, test_engine_cuda.log, sanitizer.log, spmv.log, spmv.csv, spmv.png,
# spmv-relative.png to OUTDIR.  spmv options, e.g. --sweep, --quick, --only powerlaw,shortrow,
# --powerlaw "1.6,2.5,3.0", --powerlaw-rows N, --shortrow-rows N: see the header of tests/spmv/spmv.cu.
# Every file of build/matrices is run (the SuiteSparse set: web-NotreDame, memplus, add32, EPA, ...).
set -u
OUTDIR=${1:-out}
shift || true
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi > "$OUTDIR/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
SECONDS=0
timeout 120 build/tests/engine/test_engine_cuda > "$OUTDIR/test_engine_cuda.log" 2>&1
echo "test_engine_cuda rc=$? (${SECONDS}s)"; tail -n 3 "$OUTDIR/test_engine_cuda.log"
SECONDS=0
timeout 150 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 build/tests/engine/test_engine_cuda --quick > "$OUTDIR/sanitizer.log" 2>&1
echo "compute-sanitizer memcheck rc=$? (${SECONDS}s)"; tail -n 4 "$OUTDIR/sanitizer.log"
SECONDS=0
# 420 s: the three 2M-row generated matrices beside "powerlaw 2M" (two more skews, short rows) add
# generation, checks and two tunings each
timeout 420 build/tests/spmv/spmv --matrices build/matrices --csv "$OUTDIR/spmv.csv" "$@" > "$OUTDIR/spmv.log" 2>&1
echo "spmv rc=$? (${SECONDS}s)"
python3 tests/spmv/plot.py "$OUTDIR/spmv.csv" "$OUTDIR/spmv.png"
sed -n '/^| matrix/,$p' "$OUTDIR/spmv.log"
