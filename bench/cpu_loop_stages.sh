#!/usr/bin/env bash
# cpu_loop_stages.sh - the CPU loop on 2 threads against the sum of its stages, for each kernel
# table (PTTS_ISA=amx, avx512), weight mode (int8, bf16) and placement (the process pinned to two
# physical cores with taskset, and free to run on any core), with the overlap on and off, two
# interleaved rounds each (bench_pipeline --overlap on,off,on,off). Needs a build (its
# bench_pipeline) and nothing from the network: the tokenizer is the repository's test fixture.
#
# Usage: bench/cpu_loop_stages.sh BUILD_DIR [frames (default 40)] [reps (default 3)]
#
# Prints the machine and its load, every command, and one row per configuration, ms per step or
# frame: the stages timed alone (backbone, flow, codec, their sum), the loop with the overlap on
# and off (two rounds each), and where the first round's frame went inside the loop
# (bench_pipeline's "in it" line): flow head, overlap region or backbone + codec, and the worker
# wake-ups (sleeps) a frame. `kernels` is the table that ran (an ISA the CPU lacks gives the best
# one below it). The raw output of every run is kept in BUILD_DIR/cpu_loop_stages.log.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || [ ! -x "$1/bench_pipeline" ]; then
  echo "usage: $0 BUILD_DIR [frames] [reps]  (BUILD_DIR/bench_pipeline must exist)" >&2
  exit 2
fi
b=$(cd "$1" && pwd)
frames=${2:-40}
reps=${3:-3}
tok="$root/tests/fixtures/tokenizer/sp_unigram.model"
log="$b/cpu_loop_stages.log"
: >"$log"

# Two CPUs on different physical cores (SMT siblings share a core's caches and ports).
pair=
if command -v taskset >/dev/null; then
  pair=$(lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | awk -F, '
    NR == 1 { c0 = $1; k0 = $2; next }
    $2 != k0 { print c0 "," $1; exit }')
fi
grep -m1 "model name" /proc/cpuinfo
echo "online CPUs: $(nproc); pinned runs use CPUs ${pair:-none (taskset or lscpu missing)}"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"

row() { # isa prec placement: one bench_pipeline run, one table row
  local isa=$1 prec=$2 place=$3 pin=()
  [ "$place" = pinned ] && pin=(taskset -c "$pair")
  local cmd=(${pin[@]+"${pin[@]}"} "$b/bench_pipeline" --precision "$prec" --threads 2
    --only backbone,flow,codec,loop --overlap on,off,on,off --frames "$frames" --reps "$reps"
    --tokenizer "$tok")
  echo "## PTTS_ISA=$isa ${cmd[*]}" >>"$log"
  PTTS_ISA=$isa "${cmd[@]}" >>"$log.one" 2>&1
  cat "$log.one" >>"$log"
  awk -v isa="$isa" -v prec="$prec" -v place="$place" '
    /^== / { k = $0; sub(/.*kernels /, "", k); sub(/,.*/, "", k) }
    /^backbone / { bb = $2 } /^flow / { fl = $2 } /^codec / { cd = $2 }
    /^-- overlap/ { mode = $3 }
    /^loop / { n[mode]++; l[mode, n[mode]] = $2 }
    /^  in it/ && !(mode in part) { # "backbone X, flow X, codec X[, overlap region X (its
      s = $0; gsub(/[,;()]/, "", s)  #  backbone X, codec X)], rest X ms/frame; ..."
      nt = split(s, t, " "); delete v; nc = 0
      for (i = 1; i < nt; i++) {
        if (t[i] == "codec") v[(++nc == 1) ? "codec" : "rcodec"] = t[i + 1]
        else if (t[i] == "backbone") v[(t[i - 1] == "its") ? "rbb" : "bb"] = t[i + 1]
        else if (t[i] == "flow" || t[i] == "region") v[t[i]] = t[i + 1]
        else if (t[i] == "worker") v["sleeps"] = t[i - 1]
      }
      if (mode == "on")
        part[mode] = sprintf("flow %s region %s (bb %s codec %s) sleeps %s", v["flow"],
          v["region"], v["rbb"], v["rcodec"], v["sleeps"])
      else
        part[mode] = sprintf("bb %s flow %s codec %s sleeps %s", v["bb"], v["flow"], v["codec"],
          v["sleeps"]) }
    END {
      printf "%-7s %-7s %-5s %-7s %6s %5s %5s %6s | %5s %5s | %5s %5s | on: %s | off: %s\n", isa,
        k, prec, place, bb, fl, cd, sprintf("%.2f", bb + fl + cd), l["on", 1], l["on", 2],
        l["off", 1], l["off", 2], part["on"], part["off"] }' "$log.one"
  rm -f "$log.one"
}

printf "%-7s %-7s %-5s %-7s %6s %5s %5s %6s | %11s | %11s | %s\n" PTTS_ISA kernels mode cores \
  backbone flow codec sum "loop on" "loop off" "in the loop, ms/frame (first on / off round)"
for isa in amx avx512; do
  for prec in int8 bf16; do
    for place in pinned free; do
      [ "$place" = pinned ] && [ -z "$pair" ] && continue
      row "$isa" "$prec" "$place"
    done
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw output: $log"
