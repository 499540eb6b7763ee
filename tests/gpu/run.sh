#!/usr/bin/env bash
# tests/gpu/run.sh OUTDIR [PARTS] - one round on the GPU machine, after tests/gpu/prepare.sh here.
#
# PARTS (default "engine memcheck spmv tests solvers"), each writing full logs into OUTDIR:
#   engine   the PETSc-free engine test on the GPU; the BiCGStab passes against the host's (tests/gpu/bcgsloop_check); the
#            CG passes along the several-ranks path against the one-rank path (tests/gpu/cgloop_check)
#   memcheck a compute-sanitizer memcheck run of the engine test (about 6 minutes on an H100)
#   spmv     the stand-alone benchmark against cuSPARSE, every matrix of build/cuda/matrices included
#            (CSV; PNGs: GB/s-eff, and speed relative to the best cuSPARSE format); ELLR_SPMV_ARGS: more
#            options (e.g. --geometry, --only 3d27), ELLR_SPMV: another build of it in build/cuda/tests/spmv
#   tests    the PETSc-level test suite with the CUDA backend (VECCUDA vectors, 1, 2 and 4 ranks on one GPU), in
#            four parts, each well inside one device call: tests1 .. tests4 (tests = all four)
#   solvers  time to solution with aijcusparse, sellcuda, ellrt, pellr (tests/gpu/solvers.sh; ELLR_NPS="1 2"
#            on two GPUs)
#   precond  the preconditioner table (tests/gpu/precond.sh; ELLR_PRECOND_PROBLEMS: which problems)
#   cmd      a command of the caller's (ELLR_CMD), output in cmd.log: quick checks
#   spmm     C = A B with B dense against cuSPARSE's SpMM, 1/4/16/64 columns (tests/spmm/spmm.cu; CSV, PNG);
#            ELLR_SPMM_ARGS: more options (e.g. --cols 1,2,4,8,16,32,64)
#   upload   ways to move a pageable host CSR to the GPU (tests/gpu/upload_bench.cu)
#   cold     what the first matrix of a process pays (tests/gpu/cold_start.cu), ellrt and pellr, fresh processes
#            (N=24 once more with every plan on the GPU: ELLR_GPU_PLAN=1)
#   memory   the GPU memory of ex45's problem per type and solver, read inside each process (tests/gpu/memory.sh:
#            the table for ELLR_MEM_GRIDS, then the largest grid within ELLR_MEM_BUDGET_MB; one run per GPU, all GPUs
#            side by side; ELLR_MEM_PARTS="table" or "search" for one part per call); memory.md, memory.png, memory.csv
# The last lines printed are a short summary.
set -uo pipefail
FINAL=${1:?usage: tests/gpu/run.sh OUTDIR [PARTS]}
PARTS=${2:-engine memcheck spmv tests solvers}
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=$ROOT/${ELLR_GPU_BUILD:-build/cuda}   # build/cuda-debug: the build against a debugging PETSc (tests/gpu/prepare.sh)
# every log goes to OUTDIR/logs, packed at the end into logs.tar.gz beside the few files worth reading first
OUT=$FINAL/logs
mkdir -p "$OUT"
P=$(cat $B/PETSC_PREFIX)
if [ ! -f "$P/lib/libpetsc.so" ]; then
  mkdir -p "$(dirname "$P")"
  config/unpack-petsc-cuda.sh "$(cat $B/PETSC_TARBALL 2>/dev/null || echo .petsc-cuda/petsc-cuda.tar.xz)" "$P" > "$OUT/unpack.log" 2>&1 || { tail "$OUT/unpack.log"; exit 1; }
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$B/lib:$P/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ELLR_PETSC_OPTIONS="-use_gpu_aware_mpi 0"   # this machine's Open MPI is not GPU-aware
# NCCL (the MPI product's GPU-to-GPU exchange) from the machine's Python package; NVLink multicast stays off
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$nccl_lib" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$nccl_lib
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/device.txt" 2>&1
summary=("device: $(cat "$OUT/device.txt"), $(date -u +%F)")

for part in $PARTS; do
  t0=$(date +%s)
  case $part in
  engine)
    $B/tests/engine/test_engine_cuda > "$OUT/engine.log" 2>&1; rc=$?
    summary+=("engine GPU test: rc=$rc, $(tail -n 1 "$OUT/engine.log")")
    # the BiCGStab passes on the GPU (graph replay) against the host's, PETSc-free
    $B/tests/gpu/bcgsloop_check > "$OUT/bcgsloop.log" 2>&1; rc=$?
    summary+=("BiCGStab passes GPU vs host: rc=$rc, $(tail -n 1 "$OUT/bcgsloop.log")")
    # the CG passes along the several-ranks path (a reducer, the rules in the next pass) against the one-rank path
    $B/tests/gpu/cgloop_check > "$OUT/cgloop.log" 2>&1; rc=$?
    summary+=("CG passes, several-ranks path vs one-rank path: rc=$rc, $(tail -n 1 "$OUT/cgloop.log")")
    ;;
  memcheck)
    compute-sanitizer --tool memcheck --leak-check full --error-exitcode 3 $B/tests/engine/test_engine_cuda --quick > "$OUT/sanitizer.log" 2>&1; rc=$?
    summary+=("compute-sanitizer memcheck: rc=$rc, $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -n 1)")
    ;;
  spmv)
    $B/tests/spmv/${ELLR_SPMV:-spmv} --matrices $B/matrices ${ELLR_SPMV_ARGS:-} --csv "$OUT/spmv.csv" > "$OUT/spmv.log" 2>&1; rc=$?
    python3 tests/spmv/plot.py "$OUT/spmv.csv" "$OUT/spmv.png" >> "$OUT/spmv.log" 2>&1
    summary+=("spmv benchmark: rc=$rc (table in spmv.log)")
    ;;
  spmm)
    $B/tests/spmm/spmm ${ELLR_SPMM_ARGS:-} --csv "$OUT/spmm.csv" > "$OUT/spmm.log" 2>&1; rc=$?
    python3 tests/spmm/plot.py "$OUT/spmm.csv" "$OUT/spmm.png" >> "$OUT/spmm.log" 2>&1
    summary+=("sparse x dense benchmark: rc=$rc (table in spmm.log)")
    ;;
  tests | tests[1-4])
    # the parts partition the suite by test name: the last takes whatever the first three do not
    P1='^(engine|diff_aij_)' P2='^(ops_sweep|prefix|pattern|convert|fail_|repeat|refresh|help|ex1_)' P3='^(ksp_iters|petsc_|matrix_)'
    for k in 1 2 3 4; do
      [ $part = tests ] || [ $part = tests$k ] || continue
      case $k in 1) f=$P1 x= ;; 2) f=$P2 x= ;; 3) f=$P3 x= ;; 4) f= x="$P1|$P2|$P3" ;; esac
      PETSC_DIR=$P BUILD=$B ELLR_VALGRIND=0 ELLR_INSTALL=0 ELLR_CUBINS=0 ELLR_BACKEND=cuda ELLR_MATRICES=$B/matrices ELLR_PETSC_TUTORIALS=$B/petsc-tutorials ELLR_EXCLUDE="$x" \
        tests/run.sh "${ELLR_TEST_FILTER:-$f}" > "$OUT/tests$k.log" 2>&1
      summary+=("PETSc-level tests part $k, CUDA backend: $(tail -n 1 "$OUT/tests$k.log") in $(sed -n 's/^# \([0-9]*\) s$/\1/p' "$OUT/tests$k.log") s")
    done
    ;;
  solvers)
    tests/gpu/solvers.sh "$OUT" "${ELLR_NPS:-1}" > "$OUT/solvers.log" 2>&1
    summary+=("time to solution: table in tts.md")
    ;;
  precond)
    tests/gpu/precond.sh "$OUT" "${ELLR_PRECOND_PROBLEMS:-ex45_128 ex45_160 ex1_27pt_100}" > "$OUT/precond.log" 2>&1
    summary+=("preconditioner table: precond.md")
    ;;
  cmd)
    # ELLR_CMD: a command of the caller's (quick checks), its output into cmd.log
    (export PETSC_OPTIONS="$ELLR_PETSC_OPTIONS -dll_append $B/lib/libpetscellr.so"; bash -c "${ELLR_CMD:-true}") > "$OUT/cmd.log" 2>&1
    summary+=("command: rc=$?, cmd.log")
    ;;
  cold)
    for t in ellrt pellr; do for n in 24 48; do $B/tests/gpu/cold_start $t $n; done; $B/tests/gpu/cold_start $t 24 probe; ELLR_GPU_PLAN=1 $B/tests/gpu/cold_start $t 24; done > "$OUT/cold.log" 2>&1
    summary+=("first-matrix set-up: cold.log")
    ;;
  memory)
    ELLR_GPU_BUILD=${ELLR_GPU_BUILD:-build/cuda} tests/gpu/memory.sh "$OUT" > "$OUT/memory.log" 2>&1; rc=$?
    summary+=("device memory: rc=$rc, $(grep -c '^[0-9]' "$OUT/memory.csv" 2>/dev/null || echo 0) runs, $(grep -c ',ok,' "$OUT/memory_search.csv" 2>/dev/null || echo 0) search probes solved (memory.md)")
    ;;
  upload)
    $B/tests/gpu/upload_bench 322 > "$OUT/upload.log" 2>&1
    summary+=("upload ways: $(grep -c '^|' "$OUT/upload.log") rows in upload.log")
    ;;
  esac
  summary+=("  ($part took $(( $(date +%s) - t0 )) s)")
done
{
  echo "==== summary"
  [ -f "$OUT/spmv.log" ] && grep -E "^\|" "$OUT/spmv.log" | head -n 40
  [ -f "$OUT/tts.md" ] && cat "$OUT/tts.md"
  [ -f "$OUT/precond.md" ] && cat "$OUT/precond.md"
  [ -f "$OUT/spmm.log" ] && grep -E "^\||WRONG|family" "$OUT/spmm.log"
  [ -f "$OUT/cmd.log" ] && tail -n 150 "$OUT/cmd.log"
  [ -f "$OUT/spmv.log" ] && sed -n '/^tuning by the model/,$p' "$OUT/spmv.log"
  [ -f "$OUT/upload.log" ] && cat "$OUT/upload.log"
  [ -f "$OUT/cold.log" ] && cat "$OUT/cold.log"
  [ -f "$OUT/memory.md" ] && cat "$OUT/memory.md"
  cat "$OUT"/tests*.log 2>/dev/null | grep -E "^FAIL" | head -n 30
  printf '%s\n' "${summary[@]}"
} > "$FINAL/summary.txt"
for f in tts.md precond.md cmd.log spmv.csv spmv.png spmv-relative.png spmm.csv spmm.png upload.log memory.md memory.png memory.csv memory_search.csv; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"; done
tar czf "$FINAL/logs.tar.gz" -C "$FINAL" logs && rm -rf "$OUT"
cat "$FINAL/summary.txt"
