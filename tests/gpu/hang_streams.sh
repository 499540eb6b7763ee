#!/usr/bin/env bash
# tests/gpu/hang_streams.sh OUTDIR NAME:COMMAND... - several tests/gpu/hang_probe.sh streams at once on one GPU, each
# running its COMMAND again and again until DUR seconds (470) have passed; a run past LIM seconds (40) counts as
# stopped (HANG_STACKS=0: counted, not debugged).  Prints per stream: stopped runs of all runs, the finished runs'
# times.  Streams of a variant and of its control side by side meet the same conditions (e.g. CUDA_MODULE_LOADING
# set for one of two calls running at once).
D=${1:?usage: tests/gpu/hang_streams.sh OUTDIR NAME:COMMAND...}
shift
mkdir -p "$D"
end=$((SECONDS + ${DUR:-470}))
for spec in "$@"; do
  name=${spec%%:*} cmd=${spec#*:}
  (while [ $SECONDS -lt $end ]; do HANG_STACKS=0 "$(dirname "$0")/hang_probe.sh" 1 "${LIM:-40}" $cmd; done > "$D/$name.log" 2>&1) &
done
wait
for spec in "$@"; do
  name=${spec%%:*}
  echo "$name: $(grep -c 'still running' "$D/$name.log") stopped of $(grep -c '^run' "$D/$name.log"); ms: $(grep -o 'rc 0, [0-9]* ms' "$D/$name.log" | awk '{print $3}' | sort -n | tr '\n' ' ' | cut -c1-200)"
done
