#!/usr/bin/env bash
# tests/gpu/memory.sh OUTDIR - the GPU memory of ex45's problem (3D 7-point Laplacian, n^3 rows) with aijcusparse,
# sellcuda, ellrt and pellr under four solvers, read inside each process by tests/gpu/memory (memory.c: readings of
# cudaMemGetInfo after each step and a sampler thread for the peak).  On the GPU machine after tests/gpu/prepare.sh;
# tests/gpu/run.sh OUTDIR memory runs it.  One process per run and one GPU per process, the runs spread over the
# machine's GPUs side by side (CUDA_VISIBLE_DEVICES); the readings are device-wide, so two runs never share a GPU.
#
#   table   every grid of ELLR_MEM_GRIDS (default "128 256") x type x solver, -ksp_rtol 1e-6 -ksp_max_it 200 (the memory
#           does not depend on the iteration count): OUTDIR/memory.csv, one row per run
#             cg+jacobi        -ksp_type cg -pc_type jacobi
#             cgdevice+jacobi  -ksp_type cgdevice -pc_type jacobi (the plugin's KSP: the plugin is loaded for every type)
#             gmres+ilu        -ksp_type gmres -pc_type ilu
#             cg+gamg          -ksp_type cg -pc_type gamg
#           The plugin (-dll_append) is loaded for ellrt, pellr and cgdevice only, so that the other aijcusparse and
#           sellcuda runs are PETSc alone.  A run that fails (sellcuda has no ILU and no GAMG; out of memory) or passes
#           ELLR_MEM_RUN_LIMIT seconds (default 300) is a row marked failed, with its error line.
#   search  the largest grid n that solves within a device-memory budget: a ballast (-ballast_free_mb) leaves
#           ELLR_MEM_BUDGET_MB (default 4000) of the GPU free before PETSc starts; bisection on n from [64, 400]
#           (ELLR_MEM_LO, ELLR_MEM_HI) until hi - lo <= 4, each probe a fresh process with -ksp_max_it 20, a success
#           being exit status 0 with a MEMORY line; the combinations of ELLR_MEM_SEARCH (TYPE:SOLVER, default
#           aijcusparse:cg+jacobi ellrt:cgdevice+jacobi pellr:cgdevice+jacobi aijcusparse:cgdevice+jacobi) each on a
#           GPU of its own, in parallel: OUTDIR/memory_search.csv, one row per probe
# ELLR_MEM_TYPES, ELLR_MEM_SOLVERS: the table's types and solvers (default all four of each); ELLR_MEM_PARTS (default "table search"): which parts; ELLR_MEM_GPUS: how many GPUs (default: all nvidia-smi lists), from ELLR_MEM_GPU0 (default 0) on.
# Then tests/gpu/memory_plot.py writes OUTDIR/memory.md (the tables) and OUTDIR/memory.png.
set -uo pipefail
OUT=${1:?usage: tests/gpu/memory.sh OUTDIR}
T0=$(date +%s)
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=$ROOT/${ELLR_GPU_BUILD:-build/cuda}
P=$(cat "$B/PETSC_PREFIX")
PROG=$B/tests/gpu/memory
LIB=$B/lib/libpetscellr.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$B/lib:$P/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# this machine's Open MPI is not GPU-aware; no -dll_append here: each run says whether it loads the plugin
export PETSC_OPTIONS="${ELLR_PETSC_OPTIONS:--use_gpu_aware_mpi 0}"
GRIDS=${ELLR_MEM_GRIDS:-128 256}
TYPES=${ELLR_MEM_TYPES:-aijcusparse sellcuda ellrt pellr}
SOLVERS=${ELLR_MEM_SOLVERS:-cg+jacobi cgdevice+jacobi gmres+ilu cg+gamg}
BUDGET=${ELLR_MEM_BUDGET_MB:-4000}
LIMIT=${ELLR_MEM_RUN_LIMIT:-300}
PARTS=${ELLR_MEM_PARTS:-table search}
NGPU=${ELLR_MEM_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
GPU0=${ELLR_MEM_GPU0:-0}   # the first GPU used (the others follow): another job may hold the ones before it
[ "${NGPU:-0}" -ge 1 ] 2>/dev/null || NGPU=1
mkdir -p "$OUT"
[ -x "$PROG" ] || { echo "memory.sh: $PROG missing (tests/gpu/prepare.sh builds it)"; exit 1; }
[ -s "$OUT/device.txt" ] || nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/device.txt" 2>/dev/null

solver_opts() { # SOLVER -> its options
  case $1 in
    cg+jacobi) echo "-ksp_type cg -pc_type jacobi" ;;
    cgdevice+jacobi) echo "-ksp_type cgdevice -pc_type jacobi" ;;
    gmres+ilu) echo "-ksp_type gmres -pc_type ilu" ;;
    cg+gamg) echo "-ksp_type cg -pc_type gamg" ;;
    *) return 1 ;;
  esac
}

# run LOG GPU N TYPE SOLVER OPTIONS...: one process on GPU number GPU; the exit status, and a last line
# "EXIT rc WALL ms" in LOG.  The plugin is loaded where the type or the solver is the plugin's.
run() {
  local log=$1 gpu=$2 n=$3 t=$4 solver=$5 dll=() t0 t1 rc
  shift 5
  case "$t $solver" in ellrt* | pellr* | *cgdevice*) dll=(-dll_append "$LIB") ;; esac
  t0=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=$((gpu + GPU0)) timeout -k 10 "$LIMIT" "$PROG" -n "$n" -dm_mat_type "$t" -dm_vec_type cuda $(solver_opts "$solver") \
    -label "$solver" ${dll[@]+"${dll[@]}"} "$@" > "$log" 2>&1
  rc=$?
  t1=$(date +%s%N)
  echo "EXIT $rc WALL $(( (t1 - t0) / 1000000 )) ms" >> "$log"
  return $rc
}

# fields LOG KEY...: the values of the keys in LOG's MEMORY line, comma-separated (empty where absent)
fields() {
  local log=$1
  shift
  awk -v keys="$*" '/^MEMORY / { line = $0 } END {
      n = split(line, kv, " "); for (i = 2; i <= n; i++) { p = index(kv[i], "="); if (p) v[substr(kv[i], 1, p - 1)] = substr(kv[i], p + 1) }
      m = split(keys, k, " "); s = ""; for (i = 1; i <= m; i++) s = s (i > 1 ? "," : "") v[k[i]]; print s }' "$log"
}

# error_line LOG RC: why a run failed, in one CSV-safe line: a time-out, or the first two lines of PETSc's error
# message (its links to the documentation left out), or the last line of the output
error_line() {
  local log=$1 rc=$2 l
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    l="timed out after $LIMIT s"
  else
    l=$(awk '/PETSC ERROR: -+ Error Message/ { k = 2; next } k > 0 && /PETSC ERROR: / && !/PETSC ERROR: (See http|#[0-9])/ { sub(/^.*PETSC ERROR: /, ""); s = s (s == "" ? "" : " / ") $0; if (--k == 0) exit }
             END { print s }' "$log")
    [ -n "$l" ] || l=$(grep -v '^EXIT ' "$log" | grep -v '^[[:space:]]*$' | tail -n 1)
    [ -n "$l" ] || l="exit status $rc, no output"
  fi
  printf '%s' "$l" | tr ',"\n\r' ';   ' | cut -c1-240
}

wall_s() { sed -n 's/^EXIT [0-9]* WALL \([0-9]*\) ms$/\1/p' "$1" | awk '{ printf "%.1f", $1 / 1000 }'; }

# a queue of jobs shared by one worker per GPU: the next job's index under a lock (mkdir is atomic)
take() { # QUEUE -> the next index, or a failure when none is left
  local q=$1 k
  until mkdir "$q.lock" 2>/dev/null; do sleep 0.05; done
  k=$(cat "$q.next")
  echo $((k + 1)) > "$q.next"
  rmdir "$q.lock"
  [ "$k" -lt "$(wc -l < "$q")" ] && echo "$k"
}

KEYS="rows nnz baseline_mb vectors_mb assembled_mb setup_mb solve1_mb solve2_mb peak_mb peak_at ellr_mb cusparse_copies ellr_builds its reason solve2_s first_s"

table_worker() { # GPU QUEUE
  local gpu=$1 q=$2 k n t solver log rc status err
  while k=$(take "$q"); do
    read -r n t solver < <(sed -n "$((k + 1))p" "$q")
    log="$OUT/mem_${n}_${t}_${solver/+/-}.log"
    run "$log" "$gpu" "$n" "$t" "$solver" -ksp_rtol 1e-6 -ksp_max_it 200
    rc=$?
    status=ok err=
    grep -q '^MEMORY ' "$log" || status=failed
    [ "$rc" = 0 ] || status=failed
    [ $status = ok ] || err=$(error_line "$log" "$rc")
    echo "$n,$t,$solver,$status,$(fields "$log" $KEYS),$(wall_s "$log"),$rc,$err" > "$log.csv"
  done
}

# probe GPU TYPE SOLVER N: one run under the budget; the exit status 0 when it solved (exit 0 and a MEMORY line)
probe() {
  local gpu=$1 t=$2 solver=$3 n=$4 log rc status=ok err=
  log="$OUT/memsearch_${t}_${solver/+/-}_${n}.log"
  run "$log" "$gpu" "$n" "$t" "$solver" -ksp_rtol 1e-6 -ksp_max_it 20 -ballast_free_mb "$BUDGET"
  rc=$?
  { [ "$rc" = 0 ] && grep -q '^MEMORY ' "$log"; } || status=failed
  [ $status = ok ] || err=$(error_line "$log" "$rc")
  echo "$t,$solver,$BUDGET,$n,$status,$(fields "$log" peak_mb setup_mb ellr_mb cusparse_copies its),$(wall_s "$log"),$rc,$err" >> "$OUT/memsearch_${t}_${solver/+/-}.csv"
  [ $status = ok ]
}

# bisect GPU TYPE SOLVER: the largest n in [lo, hi) that solves, to within 4; the ends are probed first (lo failing:
# nothing fits; hi solving: the bracket was too small, said by the table)
bisect() {
  local gpu=$1 t=$2 solver=$3 lo=${ELLR_MEM_LO:-64} hi=${ELLR_MEM_HI:-400} mid
  : > "$OUT/memsearch_${t}_${solver/+/-}.csv"
  probe "$gpu" "$t" "$solver" "$lo" || return 0
  probe "$gpu" "$t" "$solver" "$hi" && return 0
  while [ $((hi - lo)) -gt 4 ]; do
    mid=$(((lo + hi) / 2))
    if probe "$gpu" "$t" "$solver" "$mid"; then lo=$mid; else hi=$mid; fi
  done
}

for part in $PARTS; do
  t0=$(date +%s)
  case $part in
  table)
    q="$OUT/mem_queue.txt"
    # the largest grid first, so that the long runs do not come last on one GPU
    for n in $(printf '%s\n' $GRIDS | sort -rn); do for t in $TYPES; do for s in $SOLVERS; do echo "$n $t $s"; done; done; done > "$q"
    echo 0 > "$q.next"
    rm -rf "$q.lock" "$OUT"/mem_*.log.csv
    for ((g = 0; g < NGPU; g++)); do table_worker $g "$q" & done
    wait
    {
      echo "grid,type,solver,status,${KEYS// /,},wall_s,rc,error"
      for n in $GRIDS; do for t in $TYPES; do for s in $SOLVERS; do
        f="$OUT/mem_${n}_${t}_${s/+/-}.log.csv"
        [ -f "$f" ] && cat "$f"
      done; done; done
    } > "$OUT/memory.csv"
    rm -f "$q" "$q.next" "$OUT"/mem_*.log.csv
    echo "memory.sh table: $(($(wc -l < "$OUT/memory.csv") - 1)) runs on $NGPU GPUs in $(($(date +%s) - t0)) s"
    ;;
  search)
    combos=(${ELLR_MEM_SEARCH:-aijcusparse:cg+jacobi ellrt:cgdevice+jacobi pellr:cgdevice+jacobi aijcusparse:cgdevice+jacobi})
    # one worker per GPU, each taking the combinations of its index modulo the GPU count, one after the other
    for ((g = 0; g < NGPU && g < ${#combos[@]}; g++)); do
      (for ((i = g; i < ${#combos[@]}; i += NGPU)); do c=${combos[$i]}; bisect $g "${c%%:*}" "${c#*:}"; done) &
    done
    wait
    {
      echo "type,solver,budget_mb,n,status,peak_mb,setup_mb,ellr_mb,cusparse_copies,its,wall_s,rc,error"
      for c in "${combos[@]}"; do t=${c%%:*} s=${c#*:}; cat "$OUT/memsearch_${t}_${s/+/-}.csv"; done
    } > "$OUT/memory_search.csv"
    echo "memory.sh search: budget $BUDGET MB, ${#combos[@]} combinations in $(($(date +%s) - t0)) s"
    ;;
  *) echo "memory.sh: unknown part $part (table, search)" ;;
  esac
done
csvs=()
for f in memory.csv memory_search.csv; do [ -s "$OUT/$f" ] && csvs+=("$OUT/$f"); done
[ ${#csvs[@]} -gt 0 ] && python3 tests/gpu/memory_plot.py "${csvs[@]}" --png "$OUT/memory.png" --device "$(head -n 1 "$OUT/device.txt" 2>/dev/null)" > "$OUT/memory.md"
[ -f "$OUT/memory.md" ] && cat "$OUT/memory.md"
echo "memory.sh: $PARTS in $(($(date +%s) - T0)) s"
