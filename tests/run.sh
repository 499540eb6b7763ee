#!/usr/bin/env bash
# tests/run.sh - the petsc-ellr test suite (`make check` runs it after `make all`). See tests/README.md.
#
#   tests/run.sh [REGEX]        run the tests whose name matches REGEX (grep -E); all when omitted
#   ELLR_QUICK=1 tests/run.sh   the quick subset (~1 minute)
#   ELLR_EXCLUDE=REGEX tests/run.sh [REGEX]   leave out the tests whose name matches (the GPU run runs the suite in parts)
#   ELLR_UPDATE=1 tests/run.sh REGEX   (re)write the expected outputs in tests/output/ of the tests run
#
# Environment: BUILD (build), PETSC_DIR (/usr/lib/petsc), PETSC_ARCH, MPIEXEC (else PETSc's petscvariables;
# --allow-run-as-root and --oversubscribe are added for Open MPI), ELLR_MATRICES (tests/matrices),
# PYTHON (a python3 with numpy and scipy; /usr/bin/python3 is tried first), ELLR_TIMEOUT (seconds per
# command, 300), ELLR_VALGRIND=0 leaves the valgrind tests out (the GPU run; a line says so), ELLR_KEEP=1 keeps
# the scratch directory, ELLR_PETSC64 (the 64-bit-index PETSc; 0 = those tests left out), PYTHON4PETSC (the
# python of the petsc4py tests, /usr/bin/python3).
# A missing prerequisite (a Debian package, a build) never makes a test disappear: the tests that need it
# FAIL with "not run: <what to install>"; tests are left out only on an explicit setting, with a "# ... not run" line.
# GPU runs (tests/gpu/run.sh) also set: ELLR_PETSC_OPTIONS (options every program gets), ELLR_BACKEND (the
# backend -mat_view must report: cpu or cuda), ELLR_PETSC_TUTORIALS (PETSc's tutorials, already built),
# ELLR_SOLVE_RTOL (relative tolerance on the residual and error digits of the CPU solves compared with MATAIJ).
#
# One line per test: "ok NAME" or "FAIL NAME: reason" (and a short diff); the last line is
# "N passed, N failed"; the exit status is nonzero when a test failed.

set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}
PETSC_ARCH=${PETSC_ARCH:-}
MATRICES=${ELLR_MATRICES:-tests/matrices}
case $MATRICES in /*) ;; *) MATRICES=$ROOT/$MATRICES ;; esac
QUICK=${ELLR_QUICK:-0}
UPDATE=${ELLR_UPDATE:-0}
TIMEOUT=${ELLR_TIMEOUT:-300}
FILTER=${1:-}
EXCLUDE=${ELLR_EXCLUDE:-}
LIB=$BUILD/lib/libpetscellr.so
EXPECTED=$ROOT/tests/output
NUMDIFF="python3 $ROOT/tests/lib/numdiff.py"
command -v python3 >/dev/null 2>&1 || NUMDIFF="/usr/bin/python3 $ROOT/tests/lib/numdiff.py"
# Tests set their own options: nothing from the caller's PETSC_OPTIONS leaks in, but for ELLR_PETSC_OPTIONS,
# which a machine may need everywhere (the GPU run: -use_gpu_aware_mpi 0 with an MPI that is not GPU-aware).
unset PETSC_OPTIONS PETSC_OPTIONS_YAML
EXTRA_OPTS=${ELLR_PETSC_OPTIONS:-}
[ -n "$EXTRA_OPTS" ] && export PETSC_OPTIONS="$EXTRA_OPTS"
# ELLR_BACKEND: where the products are expected to run (cpu here; cuda in the GPU run)
BACKEND=${ELLR_BACKEND:-cpu}
# real-matrix solves: final residuals of ELLR and MATAIJ agree to this relative tolerance (a GPU sums rows
# in another order, which moves the last digits of an ill-conditioned solve)
SOLVE_RTOL=${ELLR_SOLVE_RTOL:-5e-2}
# Without a GPU the automatic backend runs AIJ's own products (what a user gets); the tests of the format itself
# ask for the ELLPACK-R storage on the CPU with ENGINE.  On the GPU machine auto is cuda: ENGINE stays empty.
ENGINE=
[ "$BACKEND" = cpu ] && ENGINE="-mat_ellr_backend cpu"

# ------------------------------------------------------------------ MPI launcher
if [ -z "${MPIEXEC:-}" ]; then
  for f in "$PETSC_DIR/$PETSC_ARCH/lib/petsc/conf/petscvariables" "$PETSC_DIR/lib/petsc/conf/petscvariables"; do
    [ -f "$f" ] && MPIEXEC=$(sed -n 's/^MPIEXEC *= *//p' "$f" | head -1) && [ -n "$MPIEXEC" ] && break
  done
  MPIEXEC=${MPIEXEC:-mpiexec}
fi
if $MPIEXEC --version 2>&1 | grep -q -e "Open MPI" -e "OpenRTE"; then
  [ "$(id -u)" = 0 ] && case " $MPIEXEC " in *" --allow-run-as-root "*) ;; *) MPIEXEC="$MPIEXEC --allow-run-as-root" ;; esac
  case " $MPIEXEC " in *" --oversubscribe "*) ;; *) MPIEXEC="$MPIEXEC --oversubscribe" ;; esac
fi

# ------------------------------------------------------------------ scratch space
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/petsc-ellr-tests.XXXXXX")
cleanup() { [ "${ELLR_KEEP:-0}" = 1 ] && echo "scratch kept in $SCRATCH" || rm -rf "$SCRATCH"; }
trap cleanup EXIT

NPASS=0
NFAIL=0
FAILED=()
START=$(date +%s)

# want NAME: is the test selected (filter, quick subset)? The caller marks quick tests with Q=1.
want() {
  if [ -n "$FILTER" ] && ! echo "$1" | grep -qE -- "$FILTER"; then return 1; fi
  if [ -n "$EXCLUDE" ] && echo "$1" | grep -qE -- "$EXCLUDE"; then return 1; fi
  if [ "$QUICK" = 1 ] && [ "${Q:-0}" != 1 ]; then return 1; fi
  return 0
}
pass() { NPASS=$((NPASS + 1)); echo "ok $1"; }
# MISSING: while set, every selected test fails with "not run: $MISSING" instead of running, so that a missing
# prerequisite (a package, a build) never makes tests disappear.  missing NAME: reports it; true when set.
MISSING=
missing() { [ -n "$MISSING" ] || return 1; fail "$1" "not run: $MISSING"; }
fail() {
  NFAIL=$((NFAIL + 1)); FAILED+=("$1")
  echo "FAIL $1: $2"
  [ -n "${3:-}" ] && [ -s "$3" ] && head -n "${4:-15}" "$3" | sed 's/^/    | /'
  # a PETSc error further down the output: its message and first frames too (the head may be all "ok" lines)
  if [ -n "${3:-}" ] && [ -s "$3" ] && [ "$(wc -l <"$3")" -gt "${4:-15}" ] && grep -q "PETSC ERROR: ---" "$3"; then
    echo "    | ..."
    grep -m1 -A10 "PETSC ERROR: ---" "$3" | sed 's/^/    | /'
  fi
  return 0
}

# run OUT CMD...: runs CMD with a time limit, stdout and stderr into OUT; returns CMD's status.
run() {
  local out=$1; shift
  timeout -k 10 "$TIMEOUT" "$@" >"$out" 2>&1
}

# The output filters.  std: drops what varies from run to run (timings).  types: also makes the
# output of an ELLR run comparable with the same run under MATAIJ (the base type's name on the GPU, the format
# the tutorials print after the type, the format lines of -mat_view ::ascii_info and -ksp_view).
filter_std() { sed -e '/^Solve time:/d' -e '/^scratch kept/d' "$1"; }
filter_types() {
  filter_std "$1" | sed -E -e 's/(seq|mpi)aij(ellrt|pellr|cusparse)/\1aij/g' -e 's/type: (ellrt|pellr)$/type: aij/' \
    -e 's/^(Matrix type: [a-z]+) \(petsc-ellr format (ellrt|pellr)\)$/\1/' \
    -e '/petsc-ellr format /d' -e '/threads per row [0-9]+/d' -e '/fill ratio [0-9.]+ \(/d' \
    -e '/warp iterations per product/d' -e '/^ *GPU: block size/d' -e '/^ *vectors: /d' \
    -e '/^ *GPU setup /d' -e '/^ *the plan \(during the upload\)/d' -e '/^ *host CSR /d' -e '/^ *values refreshed /d' \
    -e '/^ *rows stored: /d' -e '/^ *GPU kernel family /d' -e '/^ *kernel families timed /d' -e '/^ *column indices: /d' -e '/^ *base class aijcusparse /d' \
    -e '/^ *filled on the GPU from /d' -e '/process 0, (diagonal|off-diagonal) block/d'
}
# no_ellrmult CMD...: succeeds and -log_view shows no ELLRMult event with a nonzero count (AIJ's products ran)
no_ellrmult() {
  local out=$SCRATCH/noellr.$$.$RANDOM
  run "$out" "$@" || { echo "exit status $? ($*)"; tail -20 "$out"; return 1; }
  grep -q "^MatMult " "$out" || { echo "no MatMult in -log_view ($*)"; return 1; }
  if grep -qE "^ELLRMult +[1-9]" "$out"; then echo "ELLRMult ran with the AIJ backend ($*)"; grep "^ELLRMult" "$out"; return 1; fi
}
# ok_lines N CMD...: succeeds, prints at least N lines starting "ok" and none starting "FAIL"
ok_lines() {
  local want=$1 out=$SCRATCH/oklines.$$.$RANDOM; shift
  run "$out" "$@" || { echo "exit status $? ($*)"; tail -20 "$out"; return 1; }
  if grep -q "^FAIL" "$out"; then echo "a check failed ($*)"; grep "^FAIL" "$out"; return 1; fi
  [ "$(grep -c "^ok" "$out")" -ge "$want" ] || { echo "fewer than $want checks ran ($*)"; cat "$out"; return 1; }
}
# park_order CMD...: tests/nccl_park.c's three passes took, in order, a new NCCL communicator, a new one (the ranks
# reversed) and the first pass's parked one (-info :sys, rank 0's lines), and their products were right
park_order() {
  local out=$SCRATCH/park.$$.$RANDOM seq
  run "$out" "$@" || { echo "exit status $? ($*)"; tail -20 "$out"; return 1; }
  if grep -q "^FAIL" "$out"; then echo "a check failed ($*)"; grep "^FAIL" "$out"; return 1; fi
  [ "$(grep -c "^ok pass" "$out")" = 3 ] || { echo "not all three passes checked ($*)"; grep -v '^\[' "$out"; return 1; }
  seq=$(grep -E '^pass [0-9]|^\[0\] .*ghost values (GPU to GPU through NCCL|staged through the host)' "$out" |
    sed -E -e 's/^(pass [0-9]).*/\1/' -e 's/.*once its set-up is done.*/new/' -e 's/.*earlier objects.*/reused/' -e 's/.*staged through the host.*/none/' | tr '\n' ' ')
  [ "$seq" = "pass 0 new pass 1 new pass 2 reused " ] || { echo "NCCL communicators taken: $seq(expected: pass 0 new pass 1 new pass 2 reused)"; return 1; }
}
# signs of a crash rather than a clean PETSc error
crashed() { grep -qE "Caught signal|Segmentation|SEGV|double free|Aborted \(core|free\(\): invalid|corrupted" "$1"; }

# t_out NAME EXPECTED_BASENAME FILTER RTOL -- CMD...
#   CMD must succeed; its filtered output must equal tests/output/EXPECTED_BASENAME.out (numbers
#   within RTOL; integers exactly).
t_out() {
  local name=$1 exp=$2 filt=$3 rtol=$4; shift 5
  want "$name" || return 0
  missing "$name" && return 0
  local out=$SCRATCH/$name.out rc
  run "$out" "$@"; rc=$?
  "$filt" "$out" >"$out.f"
  if [ "$UPDATE" = 1 ] && [ $rc = 0 ]; then cp "$out.f" "$EXPECTED/$exp.out"; fi
  if [ $rc != 0 ]; then
    # show what differs from the expected output when there is one, else the end of the output
    if [ -f "$EXPECTED/$exp.out" ] && ! crashed "$out" && ! $NUMDIFF --rtol "$rtol" "$EXPECTED/$exp.out" "$out.f" >"$out.diff" 2>&1; then
      grep -E "FAIL|ERROR: [A-Z-]" "$out" | head -8 >"$out.why"; cat "$out.diff" >>"$out.why"
      fail "$name" "exit status $rc ($*)" "$out.why" 30
    else fail "$name" "exit status $rc ($*)" "$out" 25; fi
    return 0
  fi
  if [ ! -f "$EXPECTED/$exp.out" ]; then fail "$name" "no expected output tests/output/$exp.out (ELLR_UPDATE=1 writes it)"; return 0; fi
  if $NUMDIFF --rtol "$rtol" "$EXPECTED/$exp.out" "$out.f" >"$out.diff" 2>&1; then pass "$name"; else fail "$name" "output differs from tests/output/$exp.out ($*)" "$out.diff"; fi
}

# t_same NAME FILTER RTOL "CMD_REF" "CMD"  - both succeed with equal filtered outputs.
t_same() {
  local name=$1 filt=$2 rtol=$3 ref=$4 cmd=$5
  want "$name" || return 0
  missing "$name" && return 0
  local o1=$SCRATCH/$name.ref o2=$SCRATCH/$name.out rc1 rc2
  [ -n "${SAME_GPU_REF:-}" ] && ref=$(gpu_reference "$ref")
  run "$o1" bash -c "$ref"; rc1=$?
  run "$o2" bash -c "$cmd"; rc2=$?
  if [ $rc1 != 0 ]; then fail "$name" "reference run failed, status $rc1 ($ref)" "$o1" 25; return 0; fi
  if [ $rc2 != 0 ]; then fail "$name" "exit status $rc2 ($cmd)" "$o2" 25; return 0; fi
  "$filt" "$o1" >"$o1.f"; "$filt" "$o2" >"$o2.f"
  if [ ! -s "$o1.f" ]; then fail "$name" "reference output is empty ($ref)"; return 0; fi
  [ -n "${SAME_MIN_RTOL:-}" ] && rtol=$(awk "BEGIN { print ($rtol > $SAME_MIN_RTOL) ? $rtol : $SAME_MIN_RTOL }")
  if ELLR_ITS_RTOL=${SAME_ITS_RTOL:-${ELLR_ITS_RTOL:-0}} $NUMDIFF --rtol "$rtol" ${SAME_ATOL:+--atol $SAME_ATOL} "$o1.f" "$o2.f" >"$o2.diff" 2>&1; then pass "$name"; else fail "$name" "output differs from the reference run ($ref)" "$o2.diff"; fi
}

# SAME_GPU_REF=1 (PETSc's examples on the GPU): the reference run is aijcusparse with CUDA vectors, the like-for-like
# base; -options_left 0 since every run gets both vector-type options and an example reads one of them
gpu_reference() {
  local r
  r=$(printf '%s' "$1" | sed -E 's/(-(dm_|A_)?mat_type) aij( |$)/\1 aijcusparse\3/g')
  case "$r" in *mat_type*) ;; *) r="$r -mat_type aijcusparse" ;; esac
  printf '%s -vec_type cuda -dm_vec_type cuda -options_left 0' "$r"
}

# t_err NAME ERE -- CMD...  - CMD must fail (no crash, no time-out) with output matching ERE.
t_err() {
  local name=$1 ere=$2; shift 3
  want "$name" || return 0
  missing "$name" && return 0
  local out=$SCRATCH/$name.out rc
  run "$out" "$@"; rc=$?
  if [ $rc = 0 ]; then fail "$name" "succeeded, expected an error matching /$ere/ ($*)" "$out"
  elif [ $rc = 124 ] || [ $rc = 137 ]; then fail "$name" "timed out after ${TIMEOUT}s ($*)" "$out"
  elif crashed "$out"; then fail "$name" "crashed instead of a PETSc error ($*)" "$out" 25
  elif ! grep -qE -- "$ere" "$out"; then fail "$name" "error text does not match /$ere/ ($*)" "$out" 25
  else pass "$name"; fi
}

# t_grep NAME ERE -- CMD...  - CMD succeeds and every ERE (separated by ' && ') matches its output.
t_grep() {
  local name=$1 eres=$2; shift 3
  want "$name" || return 0
  missing "$name" && return 0
  local out=$SCRATCH/$name.out rc ere
  run "$out" "$@"; rc=$?
  if [ $rc != 0 ]; then fail "$name" "exit status $rc ($*)" "$out" 25; return 0; fi
  local rest=$eres
  while [ -n "$rest" ]; do
    ere=${rest%% && *}; [ "$ere" = "$rest" ] && rest= || rest=${rest#* && }
    if ! grep -qE -- "$ere" "$out"; then fail "$name" "output does not match /$ere/ ($*)" "$out" 25; return 0; fi
  done
  pass "$name"
}

# t_fn NAME FUNCTION ARGS...  - a custom check: FUNCTION prints a reason and returns nonzero on failure.
# (t_fn NAME say_fail "REASON": a test that cannot run, failed with REASON.)
say_fail() { echo "$*"; return 1; }
t_fn() {
  local name=$1; shift
  want "$name" || return 0
  missing "$name" && return 0
  local why=$SCRATCH/$name.why
  if "$@" >"$why" 2>&1; then pass "$name"; else
    tail -n +2 "$why" >"$why.rest"
    fail "$name" "$(head -1 "$why")" "$why.rest" 20
  fi
}

# ------------------------------------------------------------------ prerequisites
EX1=$BUILD/tutorials/ex1
EX2=$BUILD/tutorials/ex2
DIFF=$BUILD/tests/diff_aij
KSPT=$BUILD/tests/ksp_iters
for f in "$LIB" "$EX1" "$EX2" "$DIFF" "$KSPT" "$BUILD/tests/engine/test_engine"; do
  if [ ! -e "$f" ]; then
    echo "FAIL build: $f is missing (run make all)"
    echo "0 passed, 1 failed"; exit 1
  fi
done
# Debian package names carry PETSc's major.minor (libpetsc3.18-dev-examples, libpetsc64-real3.18-dev): that of
# Debian's PETSc (/usr/lib/petsc) when there is one, else of petsc-dev's candidate (as config/setup.sh does).
DEBIAN_PETSC=/usr/lib/petsc
DEBIAN_PETSC_V=$(awk '/define PETSC_VERSION_(MAJOR|MINOR) /{v[$2]=$3} END{if (v["PETSC_VERSION_MAJOR"] != "") print v["PETSC_VERSION_MAJOR"]"."v["PETSC_VERSION_MINOR"]}' "$DEBIAN_PETSC/include/petscversion.h" 2>/dev/null)
[ -n "$DEBIAN_PETSC_V" ] || DEBIAN_PETSC_V=$(apt-cache policy petsc-dev 2>/dev/null | sed -n 's/^ *Candidate: *\([0-9]*\.[0-9]*\).*/\1/p' | head -1)
DEBIAN_PETSC_V=${DEBIAN_PETSC_V:-3.18}
# is PETSC_DIR Debian's PETSc? (the packages below are built against it: the 64-bit build and python3-petsc4py)
PETSC_IS_DEBIAN=0
[ -z "$PETSC_ARCH" ] && [ "$(readlink -f "$PETSC_DIR")" = "$(readlink -f "$DEBIAN_PETSC")" ] && PETSC_IS_DEBIAN=1
# wanted NAME...: is any of these tests selected?
wanted() { local n; for n in "$@"; do Q=1 want "$n" && return 0; done; return 1; }
# tools every section uses: a missing one is a failure of its own (the tests then fail with status 127)
command -v "${MPIEXEC%% *}" >/dev/null 2>&1 ||
  fail mpiexec "$MPIEXEC not found: install the Debian package openmpi-bin (or set MPIEXEC)"
command -v python3 >/dev/null 2>&1 || [ -x /usr/bin/python3 ] ||
  fail python3 "no python3 (tests/lib/numdiff.py compares outputs): install the Debian package python3"

echo "# petsc-ellr tests: PETSC_DIR=$PETSC_DIR MPIEXEC='$MPIEXEC' matrices=$MATRICES${FILTER:+ filter=/$FILTER/}$([ "$QUICK" = 1 ] && echo ' (quick)')"

# ================================================================== 0. the PETSc-free engine (plan, fill, CPU products)
ENG=$BUILD/tests/engine/test_engine
Q=1 t_grep engine_cpu "^test_engine: [0-9]+ checks passed" -- "$ENG"

# ================================================================== 0b. GPU code for every architecture the build claims
# (cuobjdump lists the cubins of the library: tests/gpu/check_arch.sh; PyPI's cuobjdump in .tools/venv, which
# config/setup.sh installs when nvcc is present). A library built without nvcc has no GPU code to check.
if [ "${ELLR_CUBINS:-1}" = 0 ]; then
  want cuda_cubins && echo "# cuda_cubins not run: ELLR_CUBINS=0 (the GPU run: checked where the library is built)"
elif [ -z "$(nm -D --defined-only "$LIB" 2>/dev/null | grep -w ellr_cuda_create)" ]; then
  want cuda_cubins && echo "# cuda_cubins not run: $LIB was built without the CUDA backend (no nvcc)"
else
  cubins() {
    local c
    for c in "$ROOT"/.tools/venv/lib/python3*/site-packages/nvidia/*/bin/cuobjdump; do [ -x "$c" ] && export CUOBJDUMP=$c; done
    (cd "$ROOT" && BUILD=$(dirname "$(dirname "$LIB")") tests/gpu/check_arch.sh "$LIB"); local rc=$?
    [ $rc = 2 ] && echo "cannot check: install cuobjdump (config/setup.sh puts PyPI's nvidia-cuda-cuobjdump into .tools/venv; Debian: python3-venv)"
    return $rc
  }
  Q=1 t_fn cuda_cubins cubins
fi

# ================================================================== 1. differential tests vs MATAIJ
# Every case on 1, 2 and 4 ranks; the output (one line per type x option set) is the same on all.
for c in band inode_blocks empty_rows one_by_one zero_rows_rank rect_wide rect_tall dense_row zero power_law; do
  for n in 1 2 4; do
    q=0; [ $n = 1 ] && q=1; [ $n = 2 ] && [ $c = zero_rows_rank ] && q=1
    Q=$q t_out "diff_aij_${c}_np$n" "diff_aij_$c" filter_std 0 -- $MPIEXEC -n $n "$DIFF" -cases $c -group core $ENGINE
  done
done
# states where PETSc changes values or pattern without MatSetValues/assembly (MatRetrieveValues,
# MatResetPreallocation with nothing re-inserted): every case, one test per rank count
for n in 1 2 4; do
  q=0; [ $n = 1 ] && q=1
  Q=$q t_out "diff_aij_stale_np$n" "diff_aij_stale" filter_std 0 -- $MPIEXEC -n $n "$DIFF" -group stale $ENGINE
done
# COO assembly (a second COO preallocation with new off-process columns), preallocation again with a new
# pattern and Mat{Seq,MPI}AIJSetPreallocationCSR after use, in-place LU/ILU + MatSolve + MatDestroy (1 rank),
# MatHeaderReplace both ways and MatConvert in place: every case, one test per group and rank count
for g in coo prealloc lifecycle; do
  for n in 1 2 4; do
    q=0; [ $n = 2 ] && q=1
    Q=$q t_out "diff_aij_${g}_np$n" "diff_aij_$g" filter_std 0 -- $MPIEXEC -n $n "$DIFF" -group $g $ENGINE
  done
done

# a sweep of PETSc operations (MatZeroRowsColumns, MatDiagonalSet, MatChop, MatPtAP, MatCreateRedundantMatrix,
# conversions to other types, MatLoad, DMCreateMatrix, flop counts, ...) against MATAIJ, the format kept and the products
# on the storage wherever the op leaves A's own matrix; the format and settings under an options prefix reaching the
# matrix and kept through header merges (MatAXPY with another pattern, MatTranspose in place), MatDuplicate and MatHeaderReplace
for n in 1 2; do
  Q=$([ $n = 1 ] && echo 1 || echo 0) t_grep "ops_sweep_np$n" "^0 failed" -- $MPIEXEC -n $n "$BUILD/tests/ops_sweep" $ENGINE -binfile "$SCRATCH/ops_sweep_np$n.bin"
  t_grep "prefix_settings_np$n" "^0 failed" -- $MPIEXEC -n $n "$BUILD/tests/prefix_settings" -a_mat_ellr_backend cpu
done
t_grep prefix_settings_pellr_np2 "^0 failed" -- $MPIEXEC -n 2 "$BUILD/tests/prefix_settings" -type pellr -a_mat_ellr_backend cpu
# in-place round trips: aij, sell, dense and baij matrices -> the type -> aij -> the type -> the other type -> the type,
# with MatSetOption, new values and both products checked against MATAIJ after every step (an op left behind by a
# conversion made the next one recurse until it crashed); on the engine's backend and on the default one
for n in 1 2 4; do
  Q=$([ $n = 2 ] && echo 1 || echo 0) t_fn "convert_roundtrip_np$n" ok_lines 8 $MPIEXEC -n $n "$BUILD/tests/convert_roundtrip" $ENGINE
done
[ -n "$ENGINE" ] && t_fn convert_roundtrip_aij_backend_np2 ok_lines 8 $MPIEXEC -n 2 "$BUILD/tests/convert_roundtrip"
# failures of the storage's set-up, tuning, refresh and release, injected by the engine's test hook: each must be a
# PETSc error, after which the matrix takes new values and a new pattern, multiplies as MATAIJ does and is destroyed
Q=1 t_fn fail_inject_np1 ok_lines 4 "$BUILD/tests/fail_inject" -type ellrt $ENGINE
t_fn fail_inject_np2 ok_lines 4 $MPIEXEC -n 2 "$BUILD/tests/fail_inject" -type pellr $ENGINE
t_fn fail_inject_np4 ok_lines 4 $MPIEXEC -n 4 "$BUILD/tests/fail_inject" -type ellrt $ENGINE
# repeatable products: the same x multiplied 20 times gives the same bits (MatMult, MatMultAdd and the transposes),
# on a power-law matrix: wide slices split across work items, each slice its own T with long rows, sorted slices, the
# CSR kernels (on the GPU these are the paths that once joined partial sums with atomics)
RPN=(); [ "$BACKEND" = cpu ] && RPN=(-n 6000)
i=0
for o in "-type ellrt -mat_ellr_max_fill 0" "-type pellr" "-type ellrt -mat_ellr_threads_per_row -1 -mat_ellr_long_rows 256" "-type pellr -mat_ellr_kernel sliced" "-type pellr -mat_ellr_kernel csr_vector"; do
  i=$((i + 1))
  Q=$([ $i = 1 ] && echo 1 || echo 0) t_fn "repeat_products_$i" ok_lines 5 "$BUILD/tests/repeat_products" "${RPN[@]}" $o $ENGINE
  [ $i -le 2 ] && t_fn "repeat_products_${i}_np2" ok_lines 5 $MPIEXEC -n 2 "$BUILD/tests/repeat_products" "${RPN[@]}" $o $ENGINE
done
t_fn pattern_misc ok_lines 5 "$BUILD/tests/pattern_misc" $ENGINE
# the binding's regressions (tests/binding_regress.c): the type name from MatGetType() kept across MatMatMult and
# MatTranspose, then given to MatConvert (the format kept); MatPermute on 3 processes; PCFIELDSPLIT over a matrix of
# the type set up with MatSetUp() (no preallocation); each against MATAIJ, the products on the storage
Q=1 t_fn convert_type_name_after_product ok_lines 2 "$BUILD/tests/binding_regress" -test convert_after_product $ENGINE
t_fn convert_type_name_after_product_np2 ok_lines 2 $MPIEXEC -n 2 "$BUILD/tests/binding_regress" -test convert_after_product -type pellr $ENGINE
t_fn permute_np3 ok_lines 2 $MPIEXEC -n 3 "$BUILD/tests/binding_regress" -test permute $ENGINE
t_fn fieldsplit_after_setup ok_lines 1 "$BUILD/tests/binding_regress" -test fieldsplit $ENGINE
t_fn fieldsplit_after_setup_np2 ok_lines 1 $MPIEXEC -n 2 "$BUILD/tests/binding_regress" -test fieldsplit -type pellr $ENGINE
t_fn convert_to_aijperm_then_retrieve ok_lines 1 "$BUILD/tests/binding_regress" -test convert_away $ENGINE
t_fn user_mult_over_the_library ok_lines 1 "$BUILD/tests/binding_regress" -test user_operation $ENGINE
# KSPCGDEVICE against KSPCG (tests/cg_device.c): the same reasons, iterations, residual histories and solutions, the
# same bits again, breakdowns, and the loop it reports: host passes for host vectors; on the GPU the CUDA graph for
# PCNONE / PCJACOBI and GPU passes around the preconditioners PETSc applies; KSPCG's own loop on several processes
# without NCCL (with it: the nccl_* tests), and regressions: KSPReset then another size, -ksp_max_it 0, a non-finite p'Ap,
# Jacobi's scaling as PETSc makes it (a zero diagonal entry with the fix on and off, -pc_jacobi_abs, row sums, a reused
# preconditioner after the diagonal changed), KSPCGUseSingleReduction() after KSPSetFromOptions()
CGPATH=host; [ "$BACKEND" = cuda ] && CGPATH=graph
t_fn cg_device_aij ok_lines 50 "$BUILD/tests/cg_device" -path host
t_fn cg_device_ellrt ok_lines 50 "$BUILD/tests/cg_device" -mat_type ellrt -path $CGPATH $ENGINE
t_fn cg_device_pellr ok_lines 50 "$BUILD/tests/cg_device" -mat_type pellr -path $CGPATH $ENGINE
# point-block Jacobi: over blocks of one the diagonal in the passes (-info says so), over blocks of two applied by PETSc
t_grep cgdevice_pbjacobi_in_the_passes "preconditioner diagonal, in the passes && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" -- "$EX1" -mat_type ellrt -n 12 -ksp_type cgdevice -pc_type pbjacobi -info :ksp $ENGINE
t_fn cg_device_pbjacobi_blocks_of_two ok_lines 35 "$BUILD/tests/cg_device" -mat_type ellrt -path $CGPATH -mat_block_size 2 -regress 0 $ENGINE
# (-ellr_nccl 0: on ranks with a GPU each the loop would sum its reductions through NCCL, the nccl_* tests below)
t_fn cg_device_np2_runs_kspcg ok_lines 35 $MPIEXEC -n 2 "$BUILD/tests/cg_device" -mat_type ellrt -path kspcg -ellr_nccl 0 $ENGINE
[ "$BACKEND" = cuda ] && t_fn cg_device_aijcusparse ok_lines 35 "$BUILD/tests/cg_device" -mat_type aijcusparse -path graph
# KSPBCGSDEVICE against KSPBCGS (tests/bcgs_device.c): nonsymmetric convection-diffusion on an odd grid, diagonals of
# mixed signs, Jacobi, none and ILU (applied by PETSc between the passes), a monitor, the norm none, max_it reached, a
# constructed breakdown ((A b, b) = 0) and the exact-solution branch (s = 0); the same reasons, iterations, histories
# within what rounding does to KSPBCGS itself, solutions, the same bits again, and the loop it reports; right
# preconditioning and several processes without NCCL run KSPBCGS's own loop, and -info says why
bcgs_fallback_says_why() {
  local out=$SCRATCH/bcgsinfo.$$.$RANDOM
  run "$out" "$@" || { echo "exit status $? ($*)"; tail -20 "$out"; return 1; }
  if grep -q "^FAIL" "$out"; then echo "a check failed ($*)"; grep "^FAIL" "$out"; return 1; fi
  grep -q "KSPBCGS's own loop runs: preconditioning is not on the left" "$out" || { echo "no -info line says why KSPBCGS's loop ran ($*)"; return 1; }
}
t_fn bcgs_device_aij ok_lines 60 "$BUILD/tests/bcgs_device" -path host
t_fn bcgs_device_ellrt ok_lines 60 "$BUILD/tests/bcgs_device" -mat_type ellrt -path $CGPATH $ENGINE
t_fn bcgs_device_pellr ok_lines 60 "$BUILD/tests/bcgs_device" -mat_type pellr -path $CGPATH $ENGINE
t_fn bcgs_device_check_every_3 ok_lines 60 "$BUILD/tests/bcgs_device" -mat_type ellrt -path $CGPATH -ksp_bcgsdevice_check_every 3 $ENGINE
t_fn bcgs_device_np2_runs_kspbcgs ok_lines 60 $MPIEXEC -n 2 "$BUILD/tests/bcgs_device" -mat_type ellrt -path kspbcgs -ellr_nccl 0 $ENGINE
t_fn bcgs_device_fallback_says_why bcgs_fallback_says_why "$BUILD/tests/bcgs_device" -path host -info :ksp
# -help lists the loop's option, and ex1's nonsymmetric operator (-convection) converges with it as with KSPBCGS
t_grep bcgs_device_help_lists_option "-ksp_bcgsdevice_check_every && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" \
  -- "$EX1" -n 12 -convection 0.5 -ksp_type bcgsdevice -pc_type jacobi -help
[ "$BACKEND" = cuda ] && t_fn bcgs_device_aijcusparse ok_lines 60 "$BUILD/tests/bcgs_device" -mat_type aijcusparse -path graph
# MatMatMult(MPIDENSE, the type) and MatMatMult(the type, MPIDENSE) on 2 processes (as PETSc's mat tests ex70): MATAIJ's
# results, initial and reused after new values; the format kept and A's own products on the storage afterwards
t_fn dense_matmatmult_both_sides_np2 ok_lines 4 $MPIEXEC -n 2 "$BUILD/tests/binding_regress" -test dense_products $ENGINE
t_fn dense_matmatmult_both_sides_pellr_np2 ok_lines 4 $MPIEXEC -n 2 "$BUILD/tests/binding_regress" -test dense_products -type pellr -n 41 $ENGINE
# C = A B with B dense (MatMatMult: KSPMatSolve, block Krylov methods, SLEPc) is the base type's product: the format leaves
# it intact.  Against MATAIJ's within the rounding bound, 1, 4, 16 and 37 columns, a stencil, a rectangle with empty rows,
# 0 x 5 and 5 x 0, new values of A seen by the reused product, repeated products bitwise equal
Q=1 t_fn dense_product_ellrt ok_lines 32 "$BUILD/tests/dense_product" -type ellrt $ENGINE
t_fn dense_product_pellr ok_lines 32 "$BUILD/tests/dense_product" -type pellr $ENGINE
t_fn dense_product_np2 ok_lines 32 $MPIEXEC -n 2 "$BUILD/tests/dense_product" -type ellrt $ENGINE
t_fn dense_product_np4 ok_lines 32 $MPIEXEC -n 4 "$BUILD/tests/dense_product" -type pellr -n 9 $ENGINE
# the storage made current and refreshed, then every route by which AIJ reallocates or frees its arrays (a new nonzero,
# also into another process's diagonal block; MatResetPreallocation; a second MatSetPreallocationCOO; preallocation again;
# MatShift and MatZeroRows/MatZeroRowsColumns inserting diagonal entries; MatDestroy; a new nonzero through AIJ's own
# insertion put in the matrix's ops): products against MATAIJ after each, each on the storage (the product count)
RP_N=(); [ "$BACKEND" = cpu ] && RP_N=(-n 40)
t_fn refresh_routes_np1 ok_lines 50 "$BUILD/tests/refresh_routes" -type ellrt "${RP_N[@]}" $ENGINE
t_fn refresh_routes_np2 ok_lines 29 $MPIEXEC -n 2 "$BUILD/tests/refresh_routes" -type pellr "${RP_N[@]}" $ENGINE
# -help in the MatCreate / MatSetType / MatSetFromOptions order lists the options (2 ranks; on 1 PETSc itself
# prints no MatSetFromOptions block in that order, for MATAIJ as well)
t_grep help_order_np2 "-a_mat_type:? <now && -a_mat_ellr_backend:? <now" -- $MPIEXEC -n 2 "$BUILD/tests/help_order" -type ellrt -prefix a_ -help
# README, doc/, headers, sources, scripts and test names speak of the product, not of how the work was organised
# (tests/internal_words.sh holds the words; real uses go in its allow-list)
t_fn internal_words bash "$ROOT/tests/internal_words.sh" "$ROOT"
# the preconditioner table of doc/precond-h100.md is made by tests/gpu/precond.py from the GPU machine's logs: real
# logs of one H100 call (ex1 27-point 100^3, bjacobi+ILU on 2 ranks, 3 runs per type; cut to the lines precond.py
# reads) must give the table that call printed, byte for byte
same_precond_table() {
  local fx=$ROOT/tests/gpu/fixtures/precond out=$SCRATCH/precond.$$.md
  python3 "$ROOT/tests/gpu/precond.py" "$fx" >"$out" || { echo "precond.py failed"; return 1; }
  diff -u "$fx/expected.md" "$out" || { echo "precond.py's table differs from the one made on the GPU machine"; return 1; }
}
t_fn precond_table same_precond_table
# tests/gpu/precond_plot.py draws that table: what it reads from it (tests/lib/precond_plot_check.py says what is checked)
t_fn precond_plot python3 "$ROOT/tests/lib/precond_plot_check.py" "$ROOT/tests/gpu/fixtures/precond_plot.md" "$SCRATCH/precond_plot.png"
# -citations prints the papers of the methods the storage uses (PetscCitationsRegister): ELLR-T for ellrt's sliced
# layout; PELLR and pJDS for pellr's sorted slices
t_grep citations_ellrt "vazquez2012ellrt && Parallel Computing" -- "$EX1" -n 8 -mat_type ellrt $ENGINE -citations
t_grep citations_pellr "wang2020pellr && kreutzer2012pjds" -- $MPIEXEC -n 2 "$EX1" -n 8 -mat_type pellr $ENGINE -citations

# ================================================================== 2. ex1: 3D Poisson, same answers as MATAIJ
EX1OPTS="-n 16 -ksp_type cg -pc_type jacobi"
for n in 1 2 4; do
  for t in aij ellrt pellr; do
    q=0; [ $t != aij ] && [ $n != 4 ] && q=1
    Q=$q t_out "ex1_${t}_np$n" "ex1_np$n" filter_types 1e-3 -- $MPIEXEC -n $n "$EX1" $EX1OPTS -mat_type $t
  done
done
for t in ellrt pellr; do
  for n in 1 2; do
    t_out "ex1_27pt_${t}_np$n" "ex1_27pt_np$n" filter_types 1e-3 -- $MPIEXEC -n $n "$EX1" -n 12 -stencil 27 -ksp_type gmres -pc_type bjacobi -mat_type $t
  done
done
t_out "ex1_27pt_aij_np1" "ex1_27pt_np1" filter_types 1e-3 -- $MPIEXEC -n 1 "$EX1" -n 12 -stencil 27 -ksp_type gmres -pc_type bjacobi -mat_type aij
# storage variants of ellrt give MATAIJ's answers
i=0
for o in "-mat_ellr_threads_per_row 4" "-mat_ellr_threads_per_row 32 -mat_ellr_max_fill 0" "-mat_ellr_slice_height 32 -mat_ellr_sort" \
         "-mat_ellr_slice_height 7 -mat_ellr_threads_per_row 2" "-mat_ellr_sort -mat_ellr_kernel csr_vector" "-mat_ellr_backend cpu" \
         "-mat_ellr_long_rows 7" "-mat_ellr_long_rows 1 -mat_ellr_sort" "-mat_ellr_long_rows 6 -mat_ellr_backend cpu" \
         "-mat_ellr_threads_per_row -1 -mat_ellr_sort" "-mat_ellr_threads_per_row -1 -mat_ellr_slice_height 7 -mat_ellr_backend cpu"; do
  i=$((i + 1))
  t_out "ex1_ellrt_opts${i}_np2" "ex1_np2" filter_types 1e-3 -- $MPIEXEC -n 2 "$EX1" $EX1OPTS -mat_type ellrt $ENGINE $o
done
# BiCG multiplies by A^T every iteration: with the matrix flagged MAT_SYMMETRIC (ex1 -symmetric) the GPU uses A's own
# product for it instead of a stored transpose; MATAIJ's residuals either way
for t in ellrt pellr; do
  t_same "ex1_bicg_symmetric_$t" filter_types 1e-6 "$EX1 -n 12 -mat_type aij -ksp_type bicg -pc_type jacobi -ksp_monitor_short" "$EX1 -n 12 -mat_type $t -symmetric -ksp_type bicg -pc_type jacobi -ksp_monitor_short $ENGINE"
  t_same "ex1_bicg_${t}_np2" filter_types 1e-6 "$MPIEXEC -n 2 $EX1 -n 12 -mat_type aij -ksp_type bicg -pc_type jacobi -ksp_monitor_short" "$MPIEXEC -n 2 $EX1 -n 12 -mat_type $t -ksp_type bicg -pc_type jacobi -ksp_monitor_short $ENGINE"
done
# the format report of -mat_view ::ascii_info
Q=1 t_grep ex1_view_ellrt "petsc-ellr format ellrt && backend $BACKEND && threads per row 2 \(automatic: under 32768 rows, the smallest power of two with 4 T >= the widest slice, halved while it pads past -mat_ellr_max_fill, or tuned\), slice height 32 \(128 slices\), rows in their own order && fill ratio 1\.[0-9]+ \([0-9]+ stored entries for 27136 nonzeros\) && column indices: 16-bit offsets in 128 of 128 slices && warp iterations per product" \
  -- "$EX1" -n 16 -mat_type ellrt -mat_view ::ascii_info $ENGINE -ksp_type cg -pc_type jacobi
t_grep ex1_view_pellr "petsc-ellr format pellr && slice height 32 \(128 slices?\), rows sorted by decreasing length && fill ratio && warp iterations per product" \
  -- "$EX1" -n 16 -mat_type pellr -mat_view ::ascii_info $ENGINE -ksp_type cg -pc_type jacobi
t_grep ex1_view_ellrt_np2 "type: mpiaij(cusparse)?$ && petsc-ellr format ellrt on each process's diagonal block, sorted slices of its non-empty rows on the off-diagonal block && petsc-ellr format ellrt \(ELLPACK-R" \
  -- $MPIEXEC -n 2 "$EX1" -n 16 -mat_type ellrt -mat_view ::ascii_info $ENGINE -ksp_type cg -pc_type jacobi
t_grep ex1_view_options "threads per row 4, slice height 64 \(64 slices?\), rows sorted by decreasing length && column indices: 16-bit offsets in 64 of 64 slices; 1[0-9]\.[0-9]+ bytes per nonzero" \
  -- "$EX1" -n 16 -mat_type ellrt -mat_ellr_threads_per_row 4 -mat_ellr_slice_height 64 -mat_ellr_sort -mat_view ::ascii_info $ENGINE -ksp_type cg -pc_type jacobi
# the long-row path reported: interior rows of the 7-point stencil (7 entries) leave the slices
t_grep ex1_view_long_rows "long rows: 2744 of at least 7 entries \(19208 entries\) left the slices \(-mat_ellr_long_rows 7\): chunks of 256 entries shared by many warps, joined in a fixed order$ && fill ratio" \
  -- "$EX1" -n 16 -mat_type ellrt -mat_ellr_long_rows 7 -mat_view ::ascii_info $ENGINE -ksp_type cg -pc_type jacobi
# threads per row per slice: the 7-point stencil's rows (4-7 entries) give T = 1 in every slice
t_grep ex1_view_slice_threads "threads per row per slice \(-mat_ellr_threads_per_row -1; the smallest power of two with 16 T >= the slice's longest row\): 128 x T=1 slices; slice height 32 \(128 slices\)" \
  -- "$EX1" -n 16 -mat_type ellrt -mat_ellr_threads_per_row -1 -mat_view ::ascii_info $ENGINE -ksp_type cg -pc_type jacobi
# without a GPU the automatic backend is AIJ's own products: -mat_view says so, nothing is built, ELLRMult never runs
[ "$BACKEND" = cpu ] && Q=1 t_grep ex1_view_default_aij "^  type: seqaij$ && petsc-ellr format ellrt .*backend aij: the base type's own products \([^)]*\); no second copy of the matrix && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" \
  -- "$EX1" -n 16 -mat_type ellrt -mat_view ::ascii_info -ksp_type cg -pc_type jacobi
[ "$BACKEND" = cpu ] && t_fn ex1_default_no_ellr_products no_ellrmult $MPIEXEC -n 2 "$EX1" -n 16 -mat_type pellr -ksp_type cg -pc_type jacobi -log_view
# -help lists the options under the matrix's prefix (PETSc's ex2 and ex1 call MatSetFromOptions)
Q=1 t_grep help_lists_options "-mat_ellr_backend:? <now auto && -mat_ellr_threads_per_row && -mat_ellr_slice_height && -mat_ellr_sort:? <[^>]*> Store rows && -mat_ellr_kernel && -mat_ellr_long_rows && -mat_ellr_tune && -mat_ellr_max_fill" \
  -- "$EX1" -n 4 -mat_type ellrt -help
# and no other -mat_ellr_ option
help_eight_options() {
  local out=$SCRATCH/help8.$$ n
  run "$out" "$EX1" -n 4 -mat_type ellrt -help || { echo "exit status $?"; tail -20 "$out"; return 1; }
  n=$(grep -oE "^ *-mat_ellr_[a-z0-9_]+" "$out" | sort -u | wc -l)
  [ "$n" = 8 ] || { echo "-help lists $n -mat_ellr_ options, not 8"; grep -oE "^ *-mat_ellr_[a-z0-9_]+" "$out" | sort -u; return 1; }
}
t_fn help_lists_eight_options help_eight_options
# the README's main job (make run-main)
Q=1 t_grep ex1_main_job "^Matrix type: seqaij(cusparse)? \(petsc-ellr format ellrt\)$ && KSP iterations: [0-9]+ \(CONVERGED_RTOL\) && petsc-ellr format ellrt" \
  -- "$EX1" -mat_type ellrt -n 40 -ksp_type cg -pc_type jacobi -mat_view ::ascii_info
# the ELLRMult event proves the plugin's product ran
Q=1 t_grep ex1_log_view "^ELLRMult +[1-9][0-9]* " -- "$EX1" -n 16 -mat_type ellrt -ksp_type cg -pc_type jacobi -log_view $ENGINE
t_grep ex1_log_view_np2 "^ELLRMult +[1-9][0-9]* " -- $MPIEXEC -n 2 "$EX1" -n 16 -mat_type pellr -ksp_type cg -pc_type jacobi -log_view $ENGINE

# ================================================================== 3. KSP x PC: iteration counts of MATAIJ
# (the counts themselves change between PETSc versions; what must hold is equality with MATAIJ's)
Q=1 t_grep ksp_iters_np1 "^ksp_iters: 44 solves, 0 differ from MATAIJ" -- $MPIEXEC -n 1 "$KSPT" $ENGINE
t_grep ksp_iters_np2 "^ksp_iters: 33 solves, 0 differ from MATAIJ" -- $MPIEXEC -n 2 "$KSPT" $ENGINE

# ================================================================== 4. PETSc's own KSP tutorials, unmodified
PT=$BUILD/petsc-tutorials
PTSRC=$PETSC_DIR/share/petsc/examples/src
# PETSc's examples used below, as NAME=SOURCE (under $PTSRC): the KSP tutorials keep their names; examples from other
# folders are named after the folder (their numbers clash: mat/tests/ex70, ksp's ex70)
PT_EXAMPLES="ex2=ksp/ksp/tutorials/ex2.c ex23=ksp/ksp/tutorials/ex23.c ex50=ksp/ksp/tutorials/ex50.c ex4=ksp/ksp/tutorials/ex4.c
  ex18=ksp/ksp/tutorials/ex18.c ex54=ksp/ksp/tutorials/ex54.c ex56=ksp/ksp/tutorials/ex56.c mat_ex70=mat/tests/ex70.c
  snes_ex19=snes/tutorials/ex19.c"
build_petsc_tutorials() {
  local e names=
  mkdir -p "$PT" || return 1
  for e in $PT_EXAMPLES; do
    [ -f "$PTSRC/${e#*=}" ] || { echo "$PTSRC/${e#*=} not found: $PT_HINT"; return 1; }
    cmp -s "$PTSRC/${e#*=}" "$PT/${e%%=*}.c" || cp "$PTSRC/${e#*=}" "$PT/${e%%=*}.c"
    names="$names ${e%%=*}"
  done
  printf 'include $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf/variables\ninclude $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf/rules\ninclude $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf/test\n' |
    sed 's#/\$(PETSC_ARCH)/lib/petsc/conf/\(variables\|rules\|test\)#/lib/petsc/conf/\1#' >"$PT/makefile.new"
  [ -n "$PETSC_ARCH" ] && [ -f "$PETSC_DIR/$PETSC_ARCH/lib/petsc/conf/variables" ] &&
    printf 'include $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf/variables\ninclude $(PETSC_DIR)/lib/petsc/conf/rules\ninclude $(PETSC_DIR)/lib/petsc/conf/test\n' >"$PT/makefile.new"
  mv "$PT/makefile.new" "$PT/makefile"
  make -s -C "$PT" PETSC_DIR="$PETSC_DIR" PETSC_ARCH="$PETSC_ARCH" $names >"$SCRATCH/petsc-tutorials.log" 2>&1 ||
    { echo "make failed (log below)"; tail -20 "$SCRATCH/petsc-tutorials.log"; return 1; }
}
# built whenever the suite runs (a few seconds; make skips it when up to date), reported as a test;
# ELLR_PETSC_TUTORIALS names a folder where they are already built (a PETSc installed without examples)
# (Debian ships the sources in libpetsc<V>-dev-examples, a Recommends of petsc-dev). When they are not built,
# every selected petsc_ex* test fails with the reason.
if [ $PETSC_IS_DEBIAN = 1 ]; then PT_HINT="install the Debian package libpetsc$DEBIAN_PETSC_V-dev-examples (PETSc's example sources)"
else PT_HINT="this PETSc has no example sources: set ELLR_PETSC_TUTORIALS to a folder where ex2, ex23, ex50 are built (Debian's PETSc: libpetsc$DEBIAN_PETSC_V-dev-examples)"; fi
PTLOG=$SCRATCH/petsc-tutorials.why
PT_OK=1
if [ -n "${ELLR_PETSC_TUTORIALS:-}" ]; then PT=$ELLR_PETSC_TUTORIALS
  { [ -x "$PT/ex2" ] && [ -x "$PT/ex23" ] && [ -x "$PT/ex50" ]; } || {
    PT_OK=0; echo "ELLR_PETSC_TUTORIALS=$PT has no executable ex2, ex23 and ex50" >"$PTLOG"; Q=1 fail petsc_tutorials_build "$(cat "$PTLOG")"; }
elif build_petsc_tutorials >"$PTLOG" 2>&1; then Q=1 want petsc_tutorials_build && pass petsc_tutorials_build
else PT_OK=0; tail -n +2 "$PTLOG" >"$PTLOG.rest"; Q=1 fail petsc_tutorials_build "$(head -1 "$PTLOG")" "$PTLOG.rest" 20; fi
[ $PT_OK = 1 ] || MISSING="PETSc's tutorials ex2, ex23, ex50 are not built (petsc_tutorials_build: $(head -1 "$PTLOG"))"
{
  # on the GPU the types are aijcusparse matrices: aijcusparse's own operations (its factors' solves) take CUDA vectors
  # only, as with -mat_type aijcusparse, so the types' runs there ask for them
  DLL="-dll_append $LIB"
  if [ "$BACKEND" = cuda ]; then
    # on the GPU: against aijcusparse with CUDA vectors (gpu_reference); the GPU sums rows in another order than
    # cuSPARSE, so residuals agree to 1e-4 relative above 1e-10 (round-off of these O(1) problems below that) and
    # iteration counts within 5%
    DLL="$DLL -vec_type cuda -dm_vec_type cuda -options_left 0"
    SAME_GPU_REF=1 SAME_ATOL=1e-10 SAME_MIN_RTOL=1e-4 SAME_ITS_RTOL=0.05
  fi
  for t in ellrt pellr; do
    q=0; [ $t = ellrt ] && q=1
    # ex2: 2D Laplacian, default solver (GMRES + ILU on 1 rank, block Jacobi + ILU in parallel)
    Q=$q t_same "petsc_ex2_${t}_np1" filter_types 1e-6 "$PT/ex2 -m 20 -n 20 -mat_type aij -ksp_monitor_short" "$PT/ex2 $DLL -m 20 -n 20 -mat_type $t -ksp_monitor_short"
    t_same "petsc_ex2_${t}_np4" filter_types 1e-6 "$MPIEXEC -n 4 $PT/ex2 -m 20 -n 20 -mat_type aij -ksp_monitor_short" "$MPIEXEC -n 4 $PT/ex2 $DLL -m 20 -n 20 -mat_type $t -ksp_monitor_short"
    # -pc_type ilu gives MATAIJ's iteration count (1 rank; in parallel ILU is per block)
    Q=$q t_same "petsc_ex2_ilu_${t}_np1" filter_types 1e-6 "$PT/ex2 -m 30 -n 30 -mat_type aij -pc_type ilu -ksp_converged_reason" "$PT/ex2 $DLL -m 30 -n 30 -mat_type $t -pc_type ilu -ksp_converged_reason"
    t_same "petsc_ex2_bjacobi_ilu_${t}_np4" filter_types 1e-6 "$MPIEXEC -n 4 $PT/ex2 -m 30 -n 30 -mat_type aij -pc_type bjacobi -sub_pc_type ilu -ksp_converged_reason" "$MPIEXEC -n 4 $PT/ex2 $DLL -m 30 -n 30 -mat_type $t -pc_type bjacobi -sub_pc_type ilu -ksp_converged_reason"
    # -pc_type ilu on 4 ranks: PETSc's ILU is sequential; the ELLR types must fail exactly as MATAIJ does
    t_err "petsc_ex2_ilu_${t}_np4" "Could not locate a solver type for factorization type ILU and matrix type mpiaij(cusparse)?\\.?$" -- $MPIEXEC -n 4 "$PT/ex2" $DLL -mat_type $t -pc_type ilu
    # ex23: 1D Laplacian (tridiagonal)
    Q=$q t_same "petsc_ex23_${t}_np1" filter_types 1e-6 "$PT/ex23 -n 40 -mat_type aij -ksp_monitor_short" "$PT/ex23 $DLL -n 40 -mat_type $t -ksp_monitor_short"
    t_same "petsc_ex23_${t}_np2" filter_types 1e-6 "$MPIEXEC -n 2 $PT/ex23 -n 40 -mat_type aij -ksp_monitor_short" "$MPIEXEC -n 2 $PT/ex23 $DLL -n 40 -mat_type $t -ksp_monitor_short"
    # ex50: DMDA Poisson, the matrix comes from DMCreateMatrix (-dm_mat_type)
    Q=$q t_same "petsc_ex50_${t}_np1" filter_types 1e-6 "$PT/ex50 -da_grid_x 33 -da_grid_y 33 -dm_mat_type aij -ksp_monitor_short -ksp_converged_reason" "$PT/ex50 $DLL -da_grid_x 33 -da_grid_y 33 -dm_mat_type $t -ksp_monitor_short -ksp_converged_reason"
    t_same "petsc_ex50_${t}_np2" filter_types 1e-6 "$MPIEXEC -n 2 $PT/ex50 -da_grid_x 33 -da_grid_y 33 -dm_mat_type aij -ksp_monitor_short -ksp_converged_reason" "$MPIEXEC -n 2 $PT/ex50 $DLL -da_grid_x 33 -da_grid_y 33 -dm_mat_type $t -ksp_monitor_short -ksp_converged_reason"
    # -log_view shows the plugin's products
    Q=$q t_grep "petsc_ex2_log_view_$t" "^ELLRMult +[1-9][0-9]* " -- "$PT/ex2" $DLL -mat_type $t -log_view $ENGINE
    t_grep "petsc_ex23_log_view_${t}_np2" "^ELLRMult +[1-9][0-9]* " -- $MPIEXEC -n 2 "$PT/ex23" $DLL -mat_type $t -log_view $ENGINE
    t_grep "petsc_ex50_log_view_$t" "^ELLRMult +[1-9][0-9]* && type: seqaij(cusparse)?$ && petsc-ellr format $t " -- "$PT/ex50" $DLL -dm_mat_type $t -log_view -ksp_view $ENGINE
    # PETSc's own cases that a subclass of AIJ fails (PETSc's aijperm too): Galerkin multigrid with a MAIJ interpolation
    # (P^T A P with P of type MAIJ) and MatPermute after a nested-dissection ordering on 3 ranks
    t_same "petsc_ex4_maij_ptap_${t}_np2" filter_types 1e-6 "$MPIEXEC -n 2 $PT/ex4 -ksp_monitor_short -pc_type hmg -ksp_rtol 1e-6 -hmg_inner_pc_type gamg -bs 4 -pc_hmg_use_subspace_coarsening 1" "$MPIEXEC -n 2 $PT/ex4 $DLL -mat_type $t -ksp_monitor_short -pc_type hmg -ksp_rtol 1e-6 -hmg_inner_pc_type gamg -bs 4 -pc_hmg_use_subspace_coarsening 1"
    t_same "petsc_ex18_permute_${t}_np3" filter_types 1e-6 "$MPIEXEC -n 3 $PT/ex18 -m 39 -n 18 -ksp_monitor_short -permute nd" "$MPIEXEC -n 3 $PT/ex18 $DLL -mat_type $t -m 39 -n 18 -ksp_monitor_short -permute nd"
    # GAMG (smoothed aggregation) with heavy-edge matching coarsening: ex54 (2D Laplacian, Q1) with the arguments of
    # PETSc's ex54f_hem test; the coarsening reads the graph of A, the smoothers and the Krylov method multiply by it on
    # the storage ($ENGINE): the residuals and the hierarchy of -ksp_view are MATAIJ's, on 1 and 2 processes
    # (PETSc 3.18 reads -mat_coarsen_type, 3.26 the prefixed -pc_gamg_mat_coarsen_type: both are given, -options_left 0)
    HEM="-ne 39 -alpha 1.e-3 -ksp_type cg -pc_type gamg -pc_gamg_type agg -mat_coarsen_type hem -pc_gamg_mat_coarsen_type hem -options_left 0 -ksp_rtol 1e-4 -pc_gamg_square_graph 0 -ksp_monitor_short -ksp_norm_type unpreconditioned -ksp_view"
    for n in 1 2; do
      Q=$([ $n = 2 ] && echo $q || echo 0) t_same "petsc_ex54_gamg_hem_coarsening_${t}_np$n" filter_types 1e-6 "$MPIEXEC -n $n $PT/ex54 -mat_type aij $HEM" "$MPIEXEC -n $n $PT/ex54 $DLL -mat_type $t $HEM $ENGINE"
    done
    # GDSW coarse space of PCMG (-pc_mg_adapt_interp_coarse_space gdsw, Galerkin coarse operator): ex56 (3D elasticity,
    # near null space) with the arguments of PETSc's ex56 nns_gdsw test (8 processes, bjacobi smoothers, -ksp_view), on 1
    # process, and on 2 with ASM smoothers (ex56 then puts every row on the first process: the second owns none)
    GDSW="-use_mat_nearnullspace -ksp_monitor_short -pc_type mg -pc_mg_levels 2 -pc_mg_adapt_interp_coarse_space gdsw -pc_mg_galerkin -ne 3 -ksp_view"
    t_same "petsc_ex56_gdsw_coarse_space_${t}_np8" filter_types 1e-6 "$MPIEXEC -n 8 $PT/ex56 -mat_type aij $GDSW -mg_levels_pc_type bjacobi" "$MPIEXEC -n 8 $PT/ex56 $DLL -mat_type $t $GDSW -mg_levels_pc_type bjacobi $ENGINE"
    Q=$q t_same "petsc_ex56_gdsw_coarse_space_${t}_np1" filter_types 1e-6 "$PT/ex56 -mat_type aij $GDSW -mg_levels_pc_type bjacobi" "$PT/ex56 $DLL -mat_type $t $GDSW -mg_levels_pc_type bjacobi $ENGINE"
    t_same "petsc_ex56_gdsw_coarse_space_asm_${t}_np2" filter_types 1e-6 "$MPIEXEC -n 2 $PT/ex56 -mat_type aij $GDSW -mg_levels_pc_type asm" "$MPIEXEC -n 2 $PT/ex56 $DLL -mat_type $t $GDSW -mg_levels_pc_type asm $ENGINE"
    # products of the matrix (converted in place to the type: -A_mat_type) with MPIDENSE matrices on 2 processes: PETSc's
    # mat tests ex70 with the arguments of its 1_par, 2_par and 5 tests (MatMatMult, MatTransposeMatMult, MatPtAP and
    # MatRARt with a dense P or R, reuse, circular products) checks each against MatMult/MatMultTranspose of the matrix
    # and prints "Error with ..." on a difference; its -A_view (the matrix after the conversion) equals MATAIJ's
    EX70=""
    for a in "-local 0 -testmatmatt 0" "-local 1 -testmatmatt 0" "-M 11 -N 9 -K 3 -local 1 -testcircular -testmatmatt 0" "-M 7 -N 12 -K 1 -local 0 -testcircular -testmatmatt 0" "-M 3 -N 3 -K 3 -local 1 -testcircular -testmatmatt 0"; do
      EX70="$EX70${EX70:+ && }$MPIEXEC -n 2 $PT/mat_ex70 $a -A_view ::ascii_info"
    done
    # (not on the GPU: there ex70's host dense matrices meet aijcusparse's blocks, and plain -A_mat_type aijcusparse stops
    # in MatProductNumeric as well, "Unspecified numeric phase"; tests/binding_regress.c -test dense_products covers it)
    [ "$BACKEND" = cuda ] && continue
    Q=$q t_same "petsc_mat_ex70_dense_products_${t}_np2" filter_types 0 "${EX70//-A_view/-A_mat_type aij -A_view}" "${EX70//-A_view/$DLL -A_mat_type $t $ENGINE -A_view}"
    t_grep "petsc_mat_ex70_log_view_${t}_np2" "^ELLRMult +[1-9][0-9]* " -- $MPIEXEC -n 2 "$PT/mat_ex70" -M 11 -N 9 -K 3 -testcircular -testmatmatt 0 $DLL -A_mat_type $t -log_view $ENGINE
  done
  # HEM itself ran (-info of MatCoarsenApply_HEM_private, or -ksp_view's coarsening type) on a matrix of the type, whose
  # products ran on the storage
  t_grep petsc_ex54_gamg_hem_coarsening_log_view_np2 "(MatCoarsenApply_HEM_private|iterations of HEM|type: hem) && ^ELLRMult +[1-9][0-9]* " -- $MPIEXEC -n 2 "$PT/ex54" $DLL -mat_type ellrt $HEM -log_view -info $ENGINE
  # GPU only (aijcusparse base, CUDA vectors): PETSc's SNES ex19 (driven cavity, DMDA) with -dm_mat_type, as its cuda_1 and
  # cuda_dm_bind_below tests: GAMG (its MatPtAP on the GPU) and PCMG with the coarse levels bound to the CPU below 10000
  # rows (-dm_bind_below), against the same run with aijcusparse: the same linear iterations, the nonlinear residuals within
  # 1e-4 (the GPU sums rows in its own order)
  if [ "$BACKEND" = cuda ]; then
    X19="-snes_monitor_short -snes_converged_reason -ksp_converged_reason"
    t_same petsc_snes_ex19_gamg_ellrt "filter_types" 1e-4 "$PT/snes_ex19 -dm_mat_type aijcusparse -dm_vec_type cuda -pc_type gamg -pc_gamg_esteig_ksp_max_it 10 -mg_levels_ksp_max_it 3 $X19" "$PT/snes_ex19 $DLL -dm_mat_type ellrt -dm_vec_type cuda -pc_type gamg -pc_gamg_esteig_ksp_max_it 10 -mg_levels_ksp_max_it 3 $X19"
    t_same petsc_snes_ex19_mg_bind_below_ellrt_np2 "filter_types" 1e-4 "$MPIEXEC -n 2 $PT/snes_ex19 -dm_mat_type aijcusparse -dm_vec_type cuda -da_refine 3 -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -dm_bind_below 10000 $X19" "$MPIEXEC -n 2 $PT/snes_ex19 $DLL -dm_mat_type ellrt -dm_vec_type cuda -da_refine 3 -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -dm_bind_below 10000 $X19"
    # the MPI product's ghost exchange: GPU to GPU through NCCL where every rank has a GPU of its own (the exchange's
    # event counted, the residual history aijcusparse's), else staged through the host by MPIAIJ with the reason in -info
    NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    if [ "$NG" -ge 2 ]; then
      t_same nccl_halo_ex45_ellrt_np2 filter_types 1e-6 "$MPIEXEC -n 2 $PT/ex45 -dm_mat_type aijcusparse -dm_vec_type cuda -ksp_monitor_short" "$MPIEXEC -n 2 $PT/ex45 $DLL -dm_mat_type ellrt -dm_vec_type cuda -ksp_monitor_short"
      np=$([ "$NG" -ge 4 ] && echo 4 || echo 2)
      # (-ellr_nccl_wait: the first product waits for NCCL's set-up instead of using MPI's exchange meanwhile)
      # (a slab's faces are runs of the vector: sent without a pack)
      t_grep "nccl_halo_ran_pellr_np$np" "GPU to GPU through NCCL && NCCL ready after 0 products && NCCL exchange: sends [0-9]+ values to [0-9]+ ranks \(each a run of the vector, sent in place\) && ^ELLRHaloNCCL +[1-9] && ^ELLRMult +[1-9]" -- $MPIEXEC -n $np "$EX1" -mat_type pellr -n 40 -ksp_type cg -pc_type jacobi -ellr_nccl_wait -log_view -info :mat,sys
      # scattered ghosts: the sends packed by a kernel first, the same products as AIJ's
      t_grep "nccl_halo_packed_power_law_np$np" "NCCL exchange: sends [0-9]+ values to [0-9]+ ranks \(packed\) && ^diff_aij: [0-9]+ checks, 0 failed" -- $MPIEXEC -n $np "$DIFF" -group core -cases power_law -ellr_nccl_wait -info :mat $ENGINE
      t_same "nccl_halo_vs_host_staged_ellrt_np$np" filter_types 1e-10 "$MPIEXEC -n $np $EX1 -mat_type ellrt -n 33 -ksp_type cg -pc_type jacobi -ellr_nccl 0" "$MPIEXEC -n $np $EX1 -mat_type ellrt -n 33 -ksp_type cg -pc_type jacobi -ellr_nccl_wait"
      # the differential tests with NCCL's exchange from the first product: every product, new patterns (COO,
      # preallocation again), ranks without rows or ghosts, rectangular matrices
      for c in band zero_rows_rank rect_tall; do
        t_out "nccl_diff_aij_${c}_np$np" "diff_aij_$c" filter_std 0 -- $MPIEXEC -n $np "$DIFF" -cases $c -group core -ellr_nccl_wait $ENGINE
      done
      # (three cases: every case and option set of these groups takes minutes with a plan per new pattern)
      for g in coo prealloc; do
        t_grep "nccl_diff_aij_${g}_np$np" "checks, 0 failed" -- $MPIEXEC -n $np "$DIFF" -group $g -cases band,zero_rows_rank,rect_tall -ellr_nccl_wait $ENGINE
      done
      # a matrix assembled after NCCL's set-up is done has NCCL connect the exchange's pairs in its background (the first
      # product does not wait for it); the products after it still right
      t_grep "nccl_connect_at_assembly_np$np" "NCCL connects this rank to [0-9]+ ranks it sends to && checks, 0 failed" -- $MPIEXEC -n $np "$DIFF" -group prealloc -cases band -ellr_nccl_wait -info :mat $ENGINE
      # the objects of one case all destroyed before the next: PETSc frees its communicator, the next one of the same
      # ranks takes the NCCL communicator parked then instead of a new set-up; the products on it still right
      t_grep "nccl_reuses_communicator_np$np" "with the NCCL communicator of earlier objects on these ranks && ^ok rect_tall pellr && ^diff_aij: [0-9]+ checks, 0 failed" -- $MPIEXEC -n $np "$DIFF" -group core -cases band,rect_tall -ellr_nccl_wait -info :sys $ENGINE
      # the same ranks in reverse order make their own NCCL communicator; the same order again takes the parked one
      t_fn "nccl_park_order_np$np" park_order $MPIEXEC -n $np "$BUILD/tests/nccl_park" -ellr_nccl_wait -info :sys
      # the early connection failing on one rank (the engine's test hook): every rank leaves NCCL together, no hang, the
      # products right on MPI's exchange
      t_grep "nccl_connect_failure_falls_back_np$np" "^ok connection failure && connection of the exchange's ranks failed .*MPI's exchange from now on" -- $MPIEXEC -n $np "$BUILD/tests/nccl_connect_fail" -ellr_nccl_wait -info :mat,sys
      # the exchange's timeline (CUDA events at its phases): printed once, after the products it times
      t_grep "nccl_halo_timeline_np$np" "NCCL ghost exchange of .* mean of 20 products after the first, .* product [0-9]+[.][0-9]+ && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" -- $MPIEXEC -n $np "$EX1" -mat_type ellrt -n 40 -ksp_type cg -pc_type jacobi -ellr_nccl_wait -ellr_halo_timeline 20
      # the Krylov loops with one GPU per rank: every reduction summed over the ranks by NCCL on the GPU, the host
      # looking once per batch, with our types the MPI product and its NCCL exchange in the loop's CUDA graph (with
      # aijcusparse PETSc's product between the passes); against KSPCG / KSPBCGS as on one rank, the same bits again
      # (-ellr_nccl_wait: from the first solve; else PETSc's loop runs until NCCL's set-up is done, and -info says so)
      t_fn "nccl_cg_device_ellrt_np$np" ok_lines 35 $MPIEXEC -n $np "$BUILD/tests/cg_device" -mat_type ellrt -path graph -ellr_nccl_wait $ENGINE
      t_fn nccl_cg_device_aijcusparse_np2 ok_lines 35 $MPIEXEC -n 2 "$BUILD/tests/cg_device" -mat_type aijcusparse -path gpu -ellr_nccl_wait
      t_fn "nccl_bcgs_device_pellr_np$np" ok_lines 60 $MPIEXEC -n $np "$BUILD/tests/bcgs_device" -mat_type pellr -path graph -ellr_nccl_wait $ENGINE
      t_grep "nccl_cgdevice_ex1_view_np$np" "inner products summed over the ranks on the GPU by NCCL && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" -- $MPIEXEC -n $np "$EX1" -mat_type ellrt -n 40 -ksp_type cgdevice -pc_type jacobi -ksp_view -ellr_nccl_wait
      # the graph was captured and replayed (not its fallback, passes enqueued one by one)
      t_grep "nccl_cgdevice_graph_captured_np$np" "^\[0\] .*CUDA graph, [0-9]+ iterations between two looks && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" -- $MPIEXEC -n $np "$EX1" -mat_type pellr -n 40 -ksp_type cgdevice -pc_type jacobi -ellr_nccl_wait -info :ksp
      # with an aijcusparse operator (nothing of ours starts NCCL at assembly) the loop starts NCCL's set-up at
      # KSPSetFromOptions(); ex1 solves right after it, before NCCL can be ready (it takes about a second), so the first
      # solve runs KSPCG's loop, saying why
      t_grep "nccl_cgdevice_starts_nccl_at_setfromoptions_np$np" "KSPDeviceLoopStartNCCL\(\): NCCL's set-up for the loop's reductions on $np processes \(CUDA vectors\) started && KSPCG's own loop runs: several processes, NCCL's set-up not done yet && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" -- $MPIEXEC -n $np "$EX1" -mat_type aijcusparse -n 12 -ksp_type cgdevice -pc_type jacobi -info :ksp
      # ... also where nothing of CUDA exists yet at KSPSetFromOptions() (ex45: the DM makes the operator and the vectors
      # in the solve): PETSc's choice of each rank's GPU made first, so that NCCL does not find the ranks on one GPU; with
      # -ellr_nccl_wait the first solve waits for it and runs the loop with NCCL's reductions
      t_grep nccl_cgdevice_ex45_starts_nccl_np2 "KSPDeviceLoopStartNCCL\(\): NCCL's set-up for the loop's reductions on 2 processes \(CUDA vectors\) started && ghost values GPU to GPU through NCCL [0-9]+ on 2 ranks, one GPU each && inner products summed over the ranks on the GPU by NCCL && Linear solve converged due to CONVERGED_RTOL" -- $MPIEXEC -n 2 "$PT/ex45" $DLL -dm_mat_type aijcusparse -dm_vec_type cuda -ksp_type cgdevice -pc_type jacobi -ellr_nccl_wait -ksp_view -ksp_converged_reason -info :ksp,sys
      # without waiting: the products switch from MPI's exchange to NCCL's at the same product on every rank (damped
      # Jacobi runs the 40000 products, seconds, with no breakdown that would end the run before NCCL is ready)
      t_grep "nccl_halo_switch_ellrt_np2" "NCCL ready after [1-9][0-9]* products && ^ELLRHaloNCCL +[1-9]" -- $MPIEXEC -n 2 "$EX1" -mat_type ellrt -n 64 -ksp_type richardson -ksp_richardson_scale 0.9 -pc_type jacobi -ksp_rtol 0 -ksp_atol 0 -ksp_max_it 40000 -log_view -info :mat,sys
    else
      t_grep nccl_halo_fallback_np2 "ghost values staged through the host by MPI .*(share a GPU|NCCL not found) && ^ELLRMult +[1-9]" -- $MPIEXEC -n 2 "$EX1" -mat_type ellrt -n 20 -log_view -info :sys
      # ... and the Krylov loop runs PETSc's (its reductions need NCCL), saying why
      t_grep nccl_cgdevice_fallback_np2 "KSPCG's own loop runs: several processes without NCCL && KSP iterations: [0-9]+ \(CONVERGED_RTOL\)" -- $MPIEXEC -n 2 "$EX1" -mat_type ellrt -n 20 -ksp_type cgdevice -pc_type jacobi -info :ksp
    fi
  elif wanted petsc_snes_ex19_gamg_ellrt petsc_snes_ex19_mg_bind_below_ellrt_np2; then
    echo "# petsc_snes_ex19_gamg_ellrt, petsc_snes_ex19_mg_bind_below_ellrt_np2 not run: ELLR_BACKEND=$BACKEND (CUDA vectors and aijcusparse: the GPU machine, tests/gpu/run.sh)"
  fi
  # no composed function left on any object at its destruction (-checkfunctionlist prints those) and nothing leaked:
  # the output is MATAIJ's
  for t in ellrt pellr; do
    t_same "petsc_ex2_checkfunctionlist_$t" filter_std 0 "$PT/ex2 -mat_type aij -checkfunctionlist -malloc_dump" "$PT/ex2 $DLL -mat_type $t -checkfunctionlist -malloc_dump $ENGINE"
  done
  t_same petsc_ex2_checkfunctionlist_np2 filter_std 0 "$MPIEXEC -n 2 $PT/ex2 -mat_type aij -checkfunctionlist -malloc_dump" "$MPIEXEC -n 2 $PT/ex2 $DLL -mat_type ellrt -checkfunctionlist -malloc_dump $ENGINE"
  # the library through PETSC_OPTIONS (what petsc4py users do)
  Q=1 t_same petsc_ex2_petsc_options filter_types 1e-6 "$PT/ex2 -mat_type aij -ksp_monitor_short" "PETSC_OPTIONS='$EXTRA_OPTS $DLL' $PT/ex2 -mat_type ellrt -ksp_monitor_short"
  t_grep petsc_ex2_petsc_options_log "^ELLRMult +[1-9][0-9]* " -- env PETSC_OPTIONS="$EXTRA_OPTS $DLL -mat_type pellr -log_view $ENGINE" "$PT/ex2"
}
MISSING=

# ================================================================== 5. real matrices (tests/matrices)
SAME_GPU_REF= SAME_ATOL= SAME_MIN_RTOL= SAME_ITS_RTOL=
PY=${PYTHON:-}
if [ -n "$PY" ]; then
  "$PY" -c "import scipy.io, numpy" >/dev/null 2>&1 || PY=
else
  for p in /usr/bin/python3 python3; do "$p" -c "import scipy.io, numpy" >/dev/null 2>&1 && PY=$p && break; done
fi
PY_MISSING="no python3 with numpy and scipy${PYTHON:+ (PYTHON=$PYTHON cannot import scipy.io and numpy)}: install the Debian packages python3-numpy python3-scipy"
MM=$SCRATCH/matrices
# mtx NAME [dd]: the PETSc binary of a matrix (converted once); prints its path
mtx() {
  local f=$MM/$1${2:+_$2}.petsc
  if [ ! -f "$f" ]; then
    mkdir -p "$MM"
    "$PY" "$ROOT/tutorials/mtx2petsc.py" ${2:+--diag-dominant} "$MATRICES/$1.mtx.gz" "$f" >"$f.log" 2>&1 || { cat "$f.log" >&2; return 1; }
  fi
  echo "$f"
}
MTXS="memplus add32 bcsstk13 bcsstk14 bcsstk27 nos3 mcfe fidapm05 EPA"
# without python3-scipy or the matrices, every selected matrix_* and solve_* test fails with the reason
MAT_MISSING=
[ -n "$PY" ] || MAT_MISSING="$PY_MISSING"
[ -n "$MAT_MISSING" ] || [ -d "$MATRICES" ] || MAT_MISSING="$MATRICES does not exist (set ELLR_MATRICES)"
MISSING=$MAT_MISSING
{
  for m in $MTXS; do
    for t in ellrt pellr; do
      # convert only when one of this matrix's tests is selected
      Q=1 want "matrix_${m}_${t}_refused" || Q=1 want "matrix_${m}_${t}_max_fill" || Q=1 want "matrix_${m}_${t}_max_fill_np2" ||
        Q=1 want "matrix_${m}_$t" || Q=1 want "matrix_${m}_${t}_np2" || continue
      # a failed conversion fails each of this matrix's selected tests
      f=; MISSING=$MAT_MISSING
      [ -n "$MISSING" ] || f=$(mtx $m) || MISSING="conversion of $MATRICES/$m.mtx.gz failed (tutorials/mtx2petsc.py)"
      if [ $t = ellrt ] && { [ $m = memplus ] || [ $m = EPA ]; }; then
        # full-width ELLPACK-R (one slice of all rows) of these is refused by the default max fill, with a hint at
        # pellr; ellrt's own slices of 32 take them (below)
        Q=1 t_err "matrix_${m}_ellrt_refused" "max fill 8.*-mat_type pellr" -- "$EX2" -f "$f" -mat_type ellrt -mat_ellr_slice_height 0 -compare_aij -solve false $ENGINE
        Q=1 t_grep "matrix_${m}_ellrt_max_fill" "Products vs MATAIJ: agree" -- "$EX2" -f "$f" -mat_type ellrt -mat_ellr_slice_height 0 -mat_ellr_max_fill 100 -compare_aij -solve false $ENGINE
        t_grep "matrix_${m}_ellrt_max_fill_np2" "Products vs MATAIJ: agree" -- $MPIEXEC -n 2 "$EX2" -f "$f" -mat_type ellrt -mat_ellr_slice_height 0 -mat_ellr_max_fill 100 -compare_aij -solve false $ENGINE
      fi
      Q=1 t_grep "matrix_${m}_$t" "Products vs MATAIJ: agree" -- "$EX2" -f "$f" -mat_type $t -compare_aij -solve false $ENGINE
      t_grep "matrix_${m}_${t}_np2" "Products vs MATAIJ: agree" -- $MPIEXEC -n 2 "$EX2" -f "$f" -mat_type $t -compare_aij -solve false $ENGINE -load_as_aij
    done
  done
  MISSING=$MAT_MISSING
  # solves with MATAIJ's iteration counts (SPD ones with CG, the others made diagonally dominant)
  # Debian's PETSc calls libblas.so.3 and liblapack.so.3, which the alternatives system points at the reference BLAS
  # (libblas3, liblapack3) or at OpenBLAS (libopenblas0), whichever is installed and preferred: the CPU solves run
  # under each, picked by LD_LIBRARY_PATH (tests blas_reference, blas_openblas check that the switch takes)
  declare -A BLAS_MISSING=()
  BLAS_VARIANTS=()
  if [ "$BACKEND" = cpu ] && [ $PETSC_IS_DEBIAN = 1 ]; then
    MA=$(gcc -print-multiarch 2>/dev/null); MA=${MA:-$(uname -m)-linux-gnu}
    BLAS_VARIANTS=("reference=/usr/lib/$MA/blas:/usr/lib/$MA/lapack" "openblas=/usr/lib/$MA/openblas-pthread")
    blas_switch() { # NAME DIRS PACKAGES: ex2 loads libblas.so.3 and liblapack.so.3 from DIRS under LD_LIBRARY_PATH=DIRS
      local libs; libs=$(LD_LIBRARY_PATH=$2 ldd "$EX2" 2>&1)
      echo "$libs" | grep -qE "libblas\.so\.3 => ${2%%:*}/" && echo "$libs" | grep -qE "liblapack\.so\.3 => (${2%%:*}|${2##*:})/" ||
        { echo "$1 BLAS not found in $2: install the Debian packages $3"; echo "$libs" | grep -E "blas|lapack"; return 1; }
    }
    for b in "${BLAS_VARIANTS[@]}"; do
      bn=${b%%=*}; pk="libblas3 liblapack3"; [ $bn = openblas ] && pk=libopenblas0-pthread
      Q=1 want "blas_$bn" && t_fn "blas_$bn" blas_switch $bn "${b#*=}" "$pk"
      blas_switch $bn "${b#*=}" "$pk" >/dev/null 2>&1 || BLAS_MISSING[$bn]="$(blas_switch $bn "${b#*=}" "$pk" 2>&1 | head -1)"
    done
  fi
  solve_same() { # NAME NP MATRIX [dd] -- KSP options
    local name=$1 np=$2 m=$3 dd=$4; shift 5
    for t in ellrt pellr; do
      local f= MISSING=$MAT_MISSING b
      local extra=; [ $t = ellrt ] && { [ $m = memplus ] || [ $m = EPA ]; } && extra="-mat_ellr_max_fill 100"
      if [ "$BACKEND" = cpu ] && [ ${#BLAS_VARIANTS[@]} -gt 0 ]; then
        # the CPU engine sums every row as AIJ does without I-nodes (from z, entry by entry; the I-node product
        # sums pairs of entries first): with -mat_no_inode in both runs every residual of -ksp_monitor (13 digits)
        # is MATAIJ's.  Under each BLAS (both runs call the same one on the same numbers).
        for b in "${BLAS_VARIANTS[@]}"; do
          local bn=${b%%=*} env="env LD_LIBRARY_PATH=${b#*=}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" tn="${name}_$t"
          [ "$bn" = reference ] || tn="${name}_${t}_$bn"
          want "$tn" || continue
          MISSING=$MAT_MISSING; [ -n "$MISSING" ] || MISSING=${BLAS_MISSING[$bn]:-}
          [ -n "$MISSING" ] || f=$(mtx $m $dd) || MISSING="conversion of $MATRICES/$m.mtx.gz failed (tutorials/mtx2petsc.py)"
          t_same "$tn" filter_types 0 "$env $MPIEXEC -n $np $EX2 -f $f -mat_type aij -mat_no_inode -ksp_monitor $*" "$env $MPIEXEC -n $np $EX2 -f $f -mat_type $t -mat_no_inode -ksp_monitor $extra $ENGINE $*"
        done
        continue
      fi
      want "${name}_$t" || continue
      [ -n "$MISSING" ] || f=$(mtx $m $dd) || MISSING="conversion of $MATRICES/$m.mtx.gz failed (tutorials/mtx2petsc.py)"
      if [ "$BACKEND" = cpu ]; then
        # a PETSc other than Debian's: with whatever BLAS it links
        t_same "${name}_$t" filter_types 0 "$MPIEXEC -n $np $EX2 -f $f -mat_type aij -mat_no_inode -ksp_monitor $*" "$MPIEXEC -n $np $EX2 -f $f -mat_type $t -mat_no_inode -ksp_monitor $extra $ENGINE $*"
      elif [ $m = memplus ]; then
        # (memplus, 17758 rows, is too large for the dense inverse below: final residuals within SOLVE_RTOL)
        t_same "${name}_$t" filter_types $SOLVE_RTOL "$MPIEXEC -n $np $EX2 -f $f -mat_type aij $*" "$MPIEXEC -n $np $EX2 -f $f -mat_type $t $extra $ENGINE $*"
      else
        # a GPU sums rows in another order, which changes the iterates (and the iteration count) of an
        # ill-conditioned solve; the checks of ex2 -check_solution_aij hold regardless: both converge, the
        # products agree at the solution to the rounding bound 2 gamma_k |A||x|, and the solutions to the
        # bound of the conditioning ||A^-1|| (||r|| + ||r_aij||)
        t_grep "${name}_$t" "^KSP iterations: [0-9]+ \(CONVERGED_ && ^MATAIJ solve: [0-9]+ iterations \(CONVERGED_ && ^Check against MATAIJ: passed" \
          -- $MPIEXEC -n $np $EX2 -f $f -mat_type $t $extra $ENGINE -check_solution_aij $*
      fi
    done
  }
  # the check of the GPU's solves itself, on every backend (1 and 2 ranks)
  for t in ellrt pellr; do
    want "solve_check_bcsstk14_$t" || want "solve_check_bcsstk27_np2_$t" || continue
    if [ -n "$MAT_MISSING" ]; then t_fn "solve_check_bcsstk14_$t" say_fail "not run: $MAT_MISSING"; continue; fi
    Q=1 t_grep "solve_check_bcsstk14_$t" "^KSP iterations: [0-9]+ \(CONVERGED_ && Products at the solution: .*within && Solution vs MATAIJ: .*within && ^Check against MATAIJ: passed" \
      -- "$EX2" -f "$(mtx bcsstk14)" -mat_type $t $ENGINE -check_solution_aij -ksp_type cg -pc_type icc -ksp_rtol 1e-8
    t_grep "solve_check_bcsstk27_np2_$t" "^KSP iterations: [0-9]+ \(CONVERGED_ && ^Check against MATAIJ: passed" \
      -- $MPIEXEC -n 2 "$EX2" -f "$(mtx bcsstk27)" -mat_type $t $ENGINE -check_solution_aij -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8 -ksp_max_it 2000
  done
  # T per slice: memplus in its own order has slices of T up to 32 against the mean row's 1; automatic, a small
  # matrix (17758 rows) takes one T from its widest slice (574 entries: 32)
  if want matrix_memplus_ellrt_slice_threads || want matrix_memplus_ellrt_small_T; then
    if [ -n "$MAT_MISSING" ]; then for t in matrix_memplus_ellrt_slice_threads matrix_memplus_ellrt_small_T; do t_fn $t say_fail "not run: $MAT_MISSING"; done
    elif ! f=$(mtx memplus); then for t in matrix_memplus_ellrt_slice_threads matrix_memplus_ellrt_small_T; do t_fn $t say_fail "conversion of $MATRICES/memplus.mtx.gz failed (tutorials/mtx2petsc.py)"; done
    else
      t_grep matrix_memplus_ellrt_slice_threads "threads per row per slice \(-mat_ellr_threads_per_row -1; the smallest power of two with 16 T >= the slice's longest row\): 529 x T=1, 3 x T=4, 2 x T=8, 13 x T=16, 8 x T=32 slices; slice height 32 \(555 slices\), rows in their own order && Products vs MATAIJ: agree" \
        -- "$EX2" -f "$f" -mat_type ellrt -mat_ellr_threads_per_row -1 -mat_view ::ascii_info -compare_aij -solve false $ENGINE
      t_grep matrix_memplus_ellrt_small_T "threads per row 32 \(automatic: under 32768 rows, the smallest power of two with 4 T >= the widest slice, halved while it pads past -mat_ellr_max_fill, or tuned\), slice height 32 \(555 slices\), rows in their own order && Products vs MATAIJ: agree" \
        -- "$EX2" -f "$f" -mat_type ellrt -mat_view ::ascii_info -compare_aij -solve false $ENGINE
    fi
  fi
  Q=1 solve_same solve_bcsstk14_cg_icc 1 bcsstk14 "" -- -ksp_type cg -pc_type icc -ksp_rtol 1e-8
  solve_same solve_bcsstk27_cg_jacobi_np2 2 bcsstk27 "" -- -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8 -ksp_max_it 2000
  solve_same solve_nos3_cg_bjacobi_np2 2 nos3 "" -- -ksp_type cg -pc_type bjacobi -sub_pc_type icc -ksp_rtol 1e-8
  solve_same solve_add32_gmres_jacobi 1 add32 dd -- -ksp_type gmres -pc_type jacobi -ksp_rtol 1e-8
  solve_same solve_memplus_bcgs_np2 2 memplus dd -- -ksp_type bcgs -pc_type bjacobi -ksp_rtol 1e-8
  solve_same solve_mcfe_gmres_ilu 1 mcfe dd -- -ksp_type gmres -pc_type ilu -ksp_rtol 1e-8
  solve_same solve_EPA_gmres_jacobi 1 EPA dd -- -ksp_type gmres -pc_type jacobi -ksp_rtol 1e-8
  solve_same solve_fidapm05_bicg 1 fidapm05 dd -- -ksp_type bicg -pc_type jacobi -ksp_rtol 1e-8
}
MISSING=

# ================================================================== 6. bad input: clean PETSc errors
BAD="-n 6 -ksp_type cg -pc_type jacobi"
Q=1 t_err bad_threads_per_row_3 "-mat_ellr_threads_per_row 3 is invalid" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_threads_per_row 3
t_err bad_threads_per_row_64 "-mat_ellr_threads_per_row 64 is invalid" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_threads_per_row 64
t_err bad_threads_per_row_neg "-mat_ellr_threads_per_row -2 is invalid: use 1, 2, 4, 8, 16 or 32 \(or 0 to tune it, -1 for each slice its own\)" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_threads_per_row -2
t_err bad_threads_per_row_np2 "-mat_ellr_threads_per_row 3 is invalid" -- $MPIEXEC -n 2 "$EX1" $BAD -mat_type pellr -mat_ellr_threads_per_row 3
Q=1 t_err bad_slice_height "-mat_ellr_slice_height -1 is invalid" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_slice_height -1
t_err bad_long_rows "-mat_ellr_long_rows -2 is invalid: use a number of entries" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_long_rows -2
t_err bad_max_fill "-mat_ellr_max_fill -1\\.? is invalid" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_max_fill -1
Q=1 t_err bad_backend_foo "Unknown option \"?foo\"? for -mat_ellr_backend" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_backend foo
# no GPU here: a clear error, whether the library has the CUDA backend compiled in or not
[ "$BACKEND" = cpu ] && Q=1 t_err bad_backend_cuda "-mat_ellr_backend cuda: (this libpetscellr was built without CUDA|no CUDA device is visible)" -- "$EX1" $BAD -mat_type ellrt -mat_ellr_backend cuda
[ "$BACKEND" = cpu ] && t_err bad_backend_cuda_np2 "-mat_ellr_backend cuda: (this libpetscellr was built without CUDA|no CUDA device is visible)" -- $MPIEXEC -n 2 "$EX1" $BAD -mat_type pellr -mat_ellr_backend cuda
[ "$BACKEND" = cpu ] || ! wanted bad_backend_cuda bad_backend_cuda_np2 || echo "# bad_backend_cuda, bad_backend_cuda_np2 not run: ELLR_BACKEND=$BACKEND (they need a machine without a GPU)"
# The whole solve on the GPU (CUDA-enabled PETSc, aijcusparse base): for each preconditioner the solve with ellrt and
# pellr takes aijcusparse's iterations and no more host<->device copies inside KSPSolve than aijcusparse's (the
# CpuToGpu + GpuToCpu counts of -log_view -log_view_gpu_time), and the type's own product ran (ELLRMult).  ILU/ICC
# solves sent to the host would copy the vector down and up every iteration.
# pc_copies PC NP TYPE: compares TYPE with aijcusparse on ex1 (27-point 24^3, SPD)
pc_copies() {
  local pc=$1 np=$2 t=$3 o1=$SCRATCH/pcc.$$.$RANDOM o2 mpi="" opts="-pc_type $1" c1 c2 i1 i2
  o2=$o1.b
  [ "$np" = 1 ] || mpi="$MPIEXEC -n $np"
  [ "$pc" = bjacobi ] && opts="-pc_type bjacobi -sub_pc_type ilu"
  run "$o1" $mpi "$EX1" -stencil 27 -n 24 -mat_type aijcusparse -ksp_type cg -ksp_rtol 1e-8 $opts -log_view -log_view_gpu_time || { echo "aijcusparse run failed"; tail -20 "$o1"; return 1; }
  run "$o2" $mpi "$EX1" -stencil 27 -n 24 -mat_type "$t" -ksp_type cg -ksp_rtol 1e-8 $opts -log_view -log_view_gpu_time || { echo "$t run failed"; tail -20 "$o2"; return 1; }
  c1=$(awk '$1 == "KSPSolve" { print $(NF-4) + $(NF-2) }' "$o1"); c2=$(awk '$1 == "KSPSolve" { print $(NF-4) + $(NF-2) }' "$o2")
  i1=$(sed -n 's/^KSP iterations: \([0-9]*\).*/\1/p' "$o1"); i2=$(sed -n 's/^KSP iterations: \([0-9]*\).*/\1/p' "$o2")
  [ -n "$c1" ] && [ -n "$c2" ] || { echo "no KSPSolve event in -log_view"; return 1; }
  grep -qE "^ELLRMult +[1-9]" "$o2" || { echo "the type's product did not run (no ELLRMult)"; return 1; }
  [ "$i1" = "$i2" ] || { echo "iterations $i2, aijcusparse $i1"; return 1; }
  [ "${c2%.*}" -le "${c1%.*}" ] || { echo "$c2 host<->device copies inside KSPSolve, aijcusparse $c1"; return 1; }
}
if [ "$BACKEND" = cuda ]; then
  for pc in jacobi ilu icc gamg bjacobi; do
    np=1; [ $pc = bjacobi ] && np=2
    for t in ellrt pellr; do t_fn "pc_copies_${pc}_$t" pc_copies $pc $np $t; done
  done
elif wanted pc_copies_ilu_ellrt; then
  echo "# pc_copies_* not run: ELLR_BACKEND=$BACKEND (they run aijcusparse-based solves on the GPU machine: tests/gpu/run.sh)"
fi
# One copy of the matrix on the GPU: a solve with a diagonal preconditioner or none never makes aijcusparse's device CSR
# (PETSc logs its upload as MatCUSPARSCopyTo), the type's product ran, and -mat_view says the storage is the only copy.
# ex1 -n 40 (64000 rows: the storage is built by streaming the host CSR); ILU on the same matrix makes it (the control),
# and the storage is then made on it.
# one_copy NP TYPE KSP PC
one_copy() {
  local np=$1 t=$2 ksp=$3 pc=$4 o=$SCRATCH/onecopy.$$.$RANDOM mpi=""
  [ "$np" = 1 ] || mpi="$MPIEXEC -n $np"
  run "$o" $mpi "$EX1" -n 40 -mat_type "$t" -ksp_type "$ksp" -pc_type "$pc" -ksp_rtol 1e-8 -log_view -mat_view ::ascii_info -info :mat || { echo "run failed"; tail -20 "$o"; return 1; }
  grep -qE "^ELLRMult +[1-9]" "$o" || { echo "the type's product did not run (no ELLRMult)"; return 1; }
  if [ "$pc" = ilu ]; then
    grep -qE "^MatCUSPARSCopyTo +[1-9]" "$o" || { echo "ILU ran without aijcusparse's device CSR (no MatCUSPARSCopyTo): the control does not see the copy"; return 1; }
    grep -q "aijcusparse's device CSR of this .* block exists now" "$o" || { echo "-info did not say that aijcusparse's device CSR appeared"; return 1; }
    grep -q "the storage multiplies with aijcusparse's device CSR" "$o" || { echo "the storage was not made on aijcusparse's device CSR once ILU had made it (two copies)"; return 1; }
  else
    ! grep -qE "^MatCUSPARSCopyTo +[1-9]" "$o" || { echo "aijcusparse's device CSR was made: $(grep -E '^MatCUSPARSCopyTo' "$o")"; return 1; }
    grep -q "aijcusparse's device CSR: not made (this storage is the matrix's only copy on the GPU)" "$o" || { echo "-mat_view does not say that the storage is the only copy"; return 1; }
    grep -qE "device memory of the matrix: .* (less than|the same as) aijcusparse's device CSR of it" "$o" || { echo "-mat_view does not compare the device memory with aijcusparse's (or the storage is larger)"; return 1; }
  fi
  # one rank (64000 rows): the layout streamed from the host CSR, or (pellr's automatic family at this size) a CSR
  # kernel family whose CSR arrays are the storage itself
  [ "$np" != 1 ] || grep -qE "built from the host CSR streamed through|GPU kernel family [a-z_]+ .* on the CSR arrays" "$o" || { echo "the storage was neither streamed from the host CSR nor the CSR arrays themselves"; return 1; }
}
if [ "$BACKEND" = cuda ]; then
  for t in ellrt pellr; do
    for np in 1 2 4; do
      for kp in cg:jacobi cgdevice:jacobi bcgsdevice:jacobi gmres:none bcgs:jacobi; do
        t_fn "one_copy_${kp%%:*}_${kp##*:}_${t}_np$np" one_copy $np $t ${kp%%:*} ${kp##*:}
      done
    done
    t_fn "one_copy_control_ilu_$t" one_copy 1 $t gmres ilu
  done
elif wanted one_copy_cg_jacobi_ellrt_np1; then
  echo "# one_copy_* not run: ELLR_BACKEND=$BACKEND (they need aijcusparse on a GPU: tests/gpu/run.sh)"
fi
# (storage under 1 MB is never refused: the case needs a matrix of some size)
t_err bad_max_fill_exceeded "max fill 2.*-mat_type pellr" -- "$EX1" -n 30 -mat_type ellrt -mat_ellr_threads_per_row 32 -mat_ellr_max_fill 2 $ENGINE
if want bad_threads_per_row_convert; then
  if [ -n "$MAT_MISSING" ]; then t_fn bad_threads_per_row_convert say_fail "not run: $MAT_MISSING"
  elif ! f=$(mtx nos3); then t_fn bad_threads_per_row_convert say_fail "conversion of nos3 failed"
  else t_err bad_threads_per_row_convert "-mat_ellr_threads_per_row 3 is invalid" -- "$EX2" -f "$f" -mat_type ellrt -load_as_aij -mat_ellr_threads_per_row 3 $ENGINE; fi
fi

# ================================================================== 7. memory: -malloc_debug -malloc_dump and valgrind
# -malloc_dump prints every block still allocated at PetscFinalize: none may be left.
no_leaks() { # CMD...: succeeds and -malloc_dump reports nothing
  local out=$SCRATCH/leaks.$$.$RANDOM
  run "$out" "$@" -malloc_debug -malloc_dump || { echo "exit status $? ($*)"; tail -20 "$out"; return 1; }
  if grep -qE "^\[ *[0-9]+\] *[0-9]+ bytes" "$out"; then echo "-malloc_dump reports leaks ($*)"; grep -E "bytes" "$out" | head -20; return 1; fi
}
# no_leftovers CMD...: as no_leaks, and no composed function left on any object at its destruction (-checkfunctionlist)
no_leftovers() {
  local out=$SCRATCH/left.$$.$RANDOM
  run "$out" "$@" -malloc_debug -malloc_dump -checkfunctionlist || { echo "exit status $? ($*)"; tail -20 "$out"; return 1; }
  if grep -qE "^\[ *[0-9]+\] *[0-9]+ bytes" "$out"; then echo "-malloc_dump reports leaks ($*)"; grep -E "bytes" "$out" | head -20; return 1; fi
  if grep -q "function name:" "$out"; then echo "functions left composed at destruction ($*)"; grep "function name:" "$out" | sort | uniq -c | head; return 1; fi
}
Q=1 t_fn malloc_dump_ex1_ellrt no_leaks "$EX1" -n 8 -mat_type ellrt -ksp_type cg -pc_type jacobi $ENGINE
t_fn malloc_dump_ex1_pellr_np2 no_leaks $MPIEXEC -n 2 "$EX1" -n 8 -mat_type pellr -ksp_type gmres -pc_type bjacobi -mat_view ::ascii_info $ENGINE
# (on the GPU without in-place factorizations: PETSc 3.26.1's aijcusparse fails MatDestroy of a matrix factored in place
# under -malloc_debug, cudaErrorInvalidValue in MatSeqAIJCUSPARSETriFactors_Reset, with -types aijcusparse alike)
INPLACE=; [ "$BACKEND" = cuda ] && INPLACE="-inplace_factor 0"
t_fn malloc_dump_diff_aij no_leaks "$DIFF" -fail_exit 0 -cases band,empty_rows,rect_wide,power_law -optsets 0,5,8,10 $INPLACE $ENGINE
t_fn malloc_dump_fail_inject no_leaks $MPIEXEC -n 2 "$BUILD/tests/fail_inject" -type ellrt $ENGINE
t_fn malloc_dump_refresh_routes no_leaks "$BUILD/tests/refresh_routes" "${RP_N[@]}" $ENGINE
# the loops' mark on a PC whose Jacobi scaling they made comes off with the loop
t_fn cg_device_leaves_nothing no_leftovers "$BUILD/tests/cg_device" -mat_type ellrt $ENGINE
t_fn bcgs_device_leaves_nothing no_leftovers "$BUILD/tests/bcgs_device" -mat_type ellrt $ENGINE
# the format and settings move between matrices in header merges and replacements (composed containers)
t_fn malloc_dump_prefix_settings no_leaks $MPIEXEC -n 2 "$BUILD/tests/prefix_settings" -a_mat_ellr_backend cpu
# GAMG's set-up with the types and repeated P^T A P (the base type's products), as the GPU diagnostic
# tests/gpu/ptap_loop runs them: A's format kept, every product done, nothing leaked
ptap_loop_runs() { # TYPE
  local out=$SCRATCH/ptap.$$.$RANDOM
  run "$out" "$BUILD/tests/gpu/ptap_loop" -n 10 -loops 3 -report 3 -warmup 3 -mat_type "$1" -malloc_debug -malloc_dump $ENGINE || { echo "exit status $?"; tail -20 "$out"; return 1; }
  # A: the base type with the format; P: GAMG's, an AIJ (aijcusparse) matrix with or without the format
  grep -qE "^A seqaij(cusparse)? format $1 1000 rows, P seqaij(cusparse)? format (none|$1) with [0-9]+ columns" "$out" || { echo "A does not carry the format $1, or P is not an AIJ matrix"; cat "$out"; return 1; }
  grep -q "^3 products" "$out" || { echo "the 3 products did not run"; cat "$out"; return 1; }
  if grep -qE "^\[ *[0-9]+\] *[0-9]+ bytes" "$out"; then echo "-malloc_dump reports leaks"; grep -E "bytes" "$out" | head; return 1; fi
}
t_fn ptap_loop_gamg_ellrt ptap_loop_runs ellrt
t_fn ptap_loop_gamg_pellr ptap_loop_runs pellr
t_fn malloc_dump_diff_aij_np2 no_leaks $MPIEXEC -n 2 "$DIFF" -fail_exit 0 -cases zero_rows_rank,rect_tall -optsets 0,7 -group all $ENGINE
# the storage's host memory goes through PetscMalloc: PETSc's accounting counts it (a storage from malloc fails this)
t_fn memory_accounting_ellrt ok_lines 1 "$BUILD/tests/memory_accounting" -malloc_debug -malloc_dump -mat_ellr_backend cpu
t_fn memory_accounting_pellr_np2 ok_lines 2 $MPIEXEC -n 2 "$BUILD/tests/memory_accounting" -type pellr -n 17 -malloc_debug -malloc_dump -mat_ellr_backend cpu

VG_SUPP=
for s in /usr/share/openmpi/openmpi-valgrind.supp "$ROOT/tests/lib/valgrind.supp"; do [ -f "$s" ] && VG_SUPP="$VG_SUPP --suppressions=$s"; done
valgrind_clean() { # CMD...: no valgrind error, no definite leak
  local out=$SCRATCH/vg.$$.$RANDOM
  OMPI_MCA_btl=self OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none \
    run "$out" valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    $VG_SUPP "$@" || { echo "valgrind reports errors or exit status $? ($*)"; grep -E "==[0-9]+==|ERROR" "$out" | head -30; return 1; }
}
# ELLR_VALGRIND=0 (the GPU run: valgrind does not know CUDA) leaves them out, with a line that says so;
# without valgrind they fail, naming the package.
if [ "${ELLR_VALGRIND:-1}" = 0 ]; then
  wanted valgrind_engine_cpu valgrind_ex1_ellrt valgrind_ex1_pellr valgrind_diff_aij valgrind_refresh_routes valgrind_fail_inject valgrind_bcgs_device && echo "# valgrind tests not run: ELLR_VALGRIND=0"
else
  command -v valgrind >/dev/null 2>&1 || MISSING="valgrind not found: install the Debian package valgrind"
  # the whole engine test under valgrind: ~290 s of CPU on the 2-core CI machine, so three times the usual limit
  Q=1 TIMEOUT=$((TIMEOUT * 3)) t_fn valgrind_engine_cpu valgrind_clean "$ENG"
  Q=1 t_fn valgrind_ex1_ellrt valgrind_clean "$EX1" -n 6 -mat_type ellrt -ksp_type cg -pc_type jacobi -mat_view ::ascii_info $ENGINE
  t_fn valgrind_ex1_pellr valgrind_clean "$EX1" -n 6 -mat_type pellr -ksp_type gmres -pc_type ilu $ENGINE
  t_fn valgrind_diff_aij valgrind_clean "$DIFF" -fail_exit 0 -cases band,empty_rows,rect_wide,dense_row,zero -optsets 0,2,5,8 -group all $ENGINE
  t_fn valgrind_refresh_routes valgrind_clean "$BUILD/tests/refresh_routes" -n 12 $ENGINE
  Q=1 t_fn valgrind_fail_inject valgrind_clean "$BUILD/tests/fail_inject" -type pellr -n 60 $ENGINE
  # KSPBCGSDEVICE's host passes and the shared loop driver (arrays taken and handed back around PETSc's operations)
  t_fn valgrind_bcgs_device valgrind_clean "$BUILD/tests/bcgs_device" -n 9 -mat_type ellrt -path host $ENGINE
  MISSING=
fi

# ================================================================== 8. make install and pkg-config
# make install into a scratch prefix, then build tests/pkgconfig/prog.c with nothing but what petscellr.pc
# says (the compiler from its ccompiler variable, PKG_CONFIG_PATH pointed at the installation), and run it.
# PETSC_PC=auto: petscellr.pc "Requires: PETSc" where pkg-config finds this very PETSc; none: PETSc's flags written in.
install_pkgconfig() { # PETSC_PC [PETSC_DIR BUILD INDEX_BYTES]
  local pc=$1 pdir=${2:-$PETSC_DIR} build=${3:-$BUILD} ib=${4:-}
  local inst=$SCRATCH/install-$1${4:+-$4} log=$SCRATCH/install-$1${4:+-$4}.log cc
  local prog=$inst/prog
  command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config not found: install the Debian package pkg-config (apt-get install pkg-config)"; return 1; }
  local arch=$PETSC_ARCH; [ "$pdir" = "$PETSC_DIR" ] || arch=
  make -s --no-print-directory -C "$ROOT" BUILD="$build" PETSC_DIR="$pdir" PETSC_ARCH="$arch" PETSC_PC="$pc" PREFIX="$inst" install >"$log" 2>&1 ||
    { echo "make install PREFIX=$inst failed"; tail -20 "$log"; return 1; }
  for f in lib/libpetscellr.so include/petscellr.h lib/pkgconfig/petscellr.pc; do
    [ -f "$inst/$f" ] || { echo "make install did not install $f"; return 1; }
  done
  local PKGC="env PKG_CONFIG_PATH=$inst/lib/pkgconfig pkg-config"
  $PKGC --exists --print-errors petscellr >"$log" 2>&1 || { echo "pkg-config cannot use petscellr.pc"; cat "$log" "$inst/lib/pkgconfig/petscellr.pc"; return 1; }
  cc=$($PKGC --variable=ccompiler petscellr)
  [ -n "$cc" ] || { echo "petscellr.pc has no ccompiler"; cat "$inst/lib/pkgconfig/petscellr.pc"; return 1; }
  (cd "$SCRATCH" && run "$log" $cc -o "$prog" "$ROOT/tests/pkgconfig/prog.c" $($PKGC --cflags --libs petscellr)) ||
    { echo "cannot build a program from pkg-config --cflags --libs petscellr: $cc ... $($PKGC --cflags --libs petscellr)"; tail -20 "$log"; return 1; }
  ldd "$prog" 2>&1 | grep -q "libpetscellr.so => $inst/lib/libpetscellr.so" ||
    { echo "the program does not load the installed libpetscellr.so"; ldd "$prog"; return 1; }
  local exp="pkgconfig prog: type seqaij(cusparse)?, format ellrt, n 10, sum\(A\*x\) = 11\.?, ELLR products 1, index size ${ib:-[48]} bytes"
  run "$log" "$prog" $ENGINE && grep -qE "$exp" "$log" || { echo "the program failed or printed something else (expected /$exp/)"; cat "$log"; return 1; }
  exp="pkgconfig prog: type mpiaij(cusparse)?, format ellrt, n 11, sum\(A\*x\) = 12\.?, ELLR products [1-9]"
  run "$log" $MPIEXEC -n 2 "$prog" -n 11 $ENGINE && grep -qE "$exp" "$log" || { echo "the program on 2 ranks failed or printed something else (expected /$exp/)"; cat "$log"; return 1; }
}
# ELLR_INSTALL=0: not run (the GPU run, whose machine has no compiler set-up for it); a line says so
if [ "${ELLR_INSTALL:-1}" = 0 ]; then
  echo "# install_pkgconfig, install_pkgconfig_flags not run: ELLR_INSTALL=0"
else
  Q=1 t_fn install_pkgconfig install_pkgconfig auto
  t_fn install_pkgconfig_flags install_pkgconfig none
fi

# ================================================================== 9. 64-bit indices (PetscInt = int64_t)
# The library and diff_aij built against a PETSc with 64-bit indices (Debian's /usr/lib/petsc64, package
# libpetsc64-real<V>-dev) into $BUILD/64 (make all64), run on a few cases and the stale group with 1 and 2
# ranks: the outputs are the 32-bit runs' (tests/output/diff_aij_*.out do not depend on the index width).
# ELLR_PETSC64: that PETSc (default /usr/lib/petsc64 when PETSC_DIR is Debian's /usr/lib/petsc); 0 = not run.
P64=${ELLR_PETSC64:-}
[ -z "$P64" ] && [ $PETSC_IS_DEBIAN = 1 ] && P64=/usr/lib/petsc64
DIFF64=$BUILD/64/tests/diff_aij
T64=(diff_aij64_build)
T64+=(install_pkgconfig64)
for c in band rect_tall power_law zero_rows_rank zero stale coo prealloc lifecycle; do T64+=("diff_aij64_${c}_np1" "diff_aij64_${c}_np2"); done
build64() {
  local log=$SCRATCH/build64.log pkg="libpetsc64-real$DEBIAN_PETSC_V-dev"
  if [ ! -f "$P64/lib/petsc/conf/variables" ] || [ ! -f "$P64/include/petscconf.h" ]; then
    echo "no PETSc at $P64: install the Debian package $pkg (PETSc with 64-bit indices), or set ELLR_PETSC64"; return 1
  fi
  grep -q "define PETSC_USE_64BIT_INDICES 1" "$P64/include/petscconf.h" || { echo "the PETSc at $P64 does not use 64-bit indices ($pkg installs one)"; return 1; }
  # a second build of the whole library, CUDA objects for every architecture included: near 300 s on 2 busy cores
  TIMEOUT=$((TIMEOUT * 3)) run "$log" make -s -j2 --no-print-directory -C "$ROOT" PETSC64_DIR="$P64" BUILD="$BUILD" all64 ||
    { echo "make all64 PETSC64_DIR=$P64 failed (log below)"; tail -20 "$log"; return 1; }
}
if [ "$P64" = 0 ]; then
  echo "# 64-bit index tests not run: ELLR_PETSC64=0"
elif [ -z "$P64" ]; then
  wanted "${T64[@]}" && echo "# 64-bit index tests not run: PETSC_DIR=$PETSC_DIR is not Debian's $DEBIAN_PETSC (ELLR_PETSC64=/path/to/a/PETSc/with/64-bit/indices runs them)"
elif wanted "${T64[@]}"; then
  # built whenever one of these tests is selected (make skips it when up to date); a failed build is reported
  # (as petsc_tutorials_build is) and every selected test fails with its reason
  if build64 >"$SCRATCH/build64.why" 2>&1; then Q=1 want diff_aij64_build && pass diff_aij64_build
  else
    tail -n +2 "$SCRATCH/build64.why" >"$SCRATCH/build64.rest"
    fail diff_aij64_build "$(head -1 "$SCRATCH/build64.why")" "$SCRATCH/build64.rest" 20
    MISSING="$(head -1 "$SCRATCH/build64.why")"
  fi
  # make install from build/64 and a program built from its petscellr.pc (which requires PETSc64 on Debian)
  t_fn install_pkgconfig64 install_pkgconfig auto "$P64" "$BUILD/64" 8
  for c in band rect_tall power_law zero_rows_rank zero; do
    for n in 1 2; do
      q=0; [ $n = 1 ] && [ $c = band ] && q=1
      Q=$q t_out "diff_aij64_${c}_np$n" "diff_aij_$c" filter_std 0 -- $MPIEXEC -n $n "$DIFF64" -cases $c -group core $ENGINE
    done
  done
  for n in 1 2; do
    q=0; [ $n = 1 ] && q=1
    Q=$q t_out "diff_aij64_stale_np$n" "diff_aij_stale" filter_std 0 -- $MPIEXEC -n $n "$DIFF64" -group stale $ENGINE
    for g in coo prealloc lifecycle; do
      t_out "diff_aij64_${g}_np$n" "diff_aij_$g" filter_std 0 -- $MPIEXEC -n $n "$DIFF64" -group $g $ENGINE
    done
  done
  MISSING=
fi

# ================================================================== 10. petsc4py: tutorials/ex3.py
# A 2D Poisson solve (CG + Jacobi) from petsc4py with ellrt and pellr, the plugin loaded by -dll_append on the
# command line or in PETSC_OPTIONS; ex3.py itself checks the solutions against aij's (exit status).
# PYTHON4PETSC: the python to use (default /usr/bin/python3, whose petsc4py (python3-petsc4py) is built
# against Debian's PETSc: the plugin must be built against the same PETSc, so with another PETSC_DIR these
# tests run only when PYTHON4PETSC names a python whose petsc4py uses it).
PY4=${PYTHON4PETSC:-}
[ -z "$PY4" ] && [ $PETSC_IS_DEBIAN = 1 ] && PY4=/usr/bin/python3
TP4=(petsc4py_ex3 petsc4py_ex3_np2 petsc4py_ex3_petsc_options)
EX3=$ROOT/tutorials/ex3.py
if [ -z "$PY4" ]; then
  wanted "${TP4[@]}" && echo "# petsc4py tests not run: PETSC_DIR=$PETSC_DIR is not Debian's $DEBIAN_PETSC, which python3-petsc4py uses (PYTHON4PETSC=a python whose petsc4py uses PETSC_DIR runs them)"
elif wanted "${TP4[@]}"; then
  if ! p4dir=$("$PY4" -c "import petsc4py, numpy; print(petsc4py.get_config()['PETSC_DIR'])" 2>"$SCRATCH/petsc4py.err"); then
    MISSING="$PY4 cannot import petsc4py: install the Debian package python3-petsc4py ($(tail -1 "$SCRATCH/petsc4py.err"))"
  elif [ "$(readlink -f "$p4dir")" != "$(readlink -f "$PETSC_DIR")" ]; then
    MISSING="the petsc4py of $PY4 uses the PETSc at $p4dir, but the plugin is built against PETSC_DIR=$PETSC_DIR (set PYTHON4PETSC)"
  fi
  Q=1 t_grep petsc4py_ex3 "^ellrt : matrix type seqaij(cusparse)? \(petsc-ellr format ellrt\), [0-9]+ iterations, CONVERGED_RTOL, .*ELLRMult products [1-9] && ^pellr : matrix type seqaij(cusparse)? \(petsc-ellr format pellr\), [0-9]+ iterations, CONVERGED_RTOL && ^ex3: ellrt, pellr agree with aij" \
    -- "$PY4" "$EX3" -dll_append "$LIB" $ENGINE
  t_grep petsc4py_ex3_np2 "^ellrt : matrix type mpiaij(cusparse)? \(petsc-ellr format ellrt\), [0-9]+ iterations, CONVERGED_RTOL && ^pellr : matrix type mpiaij(cusparse)? \(petsc-ellr format pellr\) && ^ex3: ellrt, pellr agree with aij" \
    -- $MPIEXEC -n 2 "$PY4" "$EX3" -n 40 -dll_append "$LIB" $ENGINE
  t_grep petsc4py_ex3_petsc_options "^pellr : matrix type seqaij(cusparse)? \(petsc-ellr format pellr\), [0-9]+ iterations, CONVERGED_RTOL && ^ex3: pellr agree with aij" \
    -- env PETSC_OPTIONS="$EXTRA_OPTS -dll_append $LIB" "$PY4" "$EX3" -types pellr -n 24
  MISSING=
fi

# ------------------------------------------------------------------ summary
echo "# $(( $(date +%s) - START )) s"
if [ $NFAIL -gt 0 ]; then echo "# failed: ${FAILED[*]}"; fi
echo "$NPASS passed, $NFAIL failed"
[ $NFAIL = 0 ]
