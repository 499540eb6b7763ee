#!/usr/bin/env bash
# tests/gpu/hang_probe.sh N LIMIT CMD... - runs CMD N times; a run past LIMIT seconds gets printed before it is killed:
# with cuda-gdb the kernels running on the GPU, their blocks still running and the main thread's stack (else gdb's or
# /proc's view of every thread).  For a solve that stops making progress now and then (README, Troubleshooting).
# HANG_STOP=1: stop at the first such run; HANG_TAIL: how many of its last output lines to show (5); HANG_STACKS=0:
# no debugger, only count such runs (several probes may run at once: each has its own output file).
n=$1 lim=$2; shift 2
out=$(mktemp /tmp/hang_probe.XXXXXX)
trap 'rm -f "$out"' EXIT
# PETSc's signal handler turns the debugger's attach into an error exit (PETSC_ERR_SIG, exit status 59) before a stack
# is printed: PETSc programs run without it here
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -no_signal_handler"
for k in $(seq 1 "$n"); do
  t0=$(date +%s%N)
  "$@" > "$out" 2>&1 &
  pid=$!
  for s in $(seq 1 $((lim * 10))); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then
    echo "run $k: still running after $lim s"
    cg=$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
    if [ "${HANG_STACKS:-1}" = 0 ]; then :
    elif [ -x "$cg" ]; then timeout 120 "$cg" -p $pid -batch -ex "info cuda kernels" -ex "info cuda blocks" -ex "thread 1" -ex "bt 40" 2>&1 | grep -vE "^\[New (Thread|LWP)|^warning" | head -120
    elif command -v gdb >/dev/null; then gdb -p $pid -batch -ex "thread apply all bt 25" 2>&1 | grep -E "^#|^Thread" | head -120
    else for t in /proc/$pid/task/*; do echo "task $t: $(cat $t/wchan 2>/dev/null) $(cat $t/stat | cut -d' ' -f3)"; done; cat /proc/$pid/stack 2>/dev/null; fi
    [ "${HANG_STACKS:-1}" = 0 ] || nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
    kill -9 $pid; wait $pid 2>/dev/null
    tail -${HANG_TAIL:-5} "$out"
    [ "${HANG_STOP:-0}" = 1 ] && break
  else
    wait $pid; rc=$?
    echo "run $k: rc $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(grep -m1 -E 'converged|diverged|ERROR' "$out")"
  fi
done
