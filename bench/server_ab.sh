#!/usr/bin/env bash
# Two builds of `pocket-tts serve` side by side on one machine: for each round, build A then
# build B serve the full-size synthetic model (EOS off: every request the same 12.6 s of
# audio) with S slots, and bench/server_load.py sends C clients at once to each; prints
# server_load's line (aggregate real time, first audio median and max) per build and round,
# and from the server's request log (where it has queued_ms) the median and max of the time
# requests waited for a slot and of the first audio as the server saw it.
# Usage: bench/server_ab.sh POCKET_TTS_A POCKET_TTS_B SLOTS CLIENTS [ROUNDS] [serve options,
#        e.g. --backend vulkan --precision bf16]
# Writes the synthetic checkpoint to $TMPDIR (pocket-tts fill) when it is not there yet. With
# LOGDIR set, each server's log is kept there (A_r1.log, ...; add --log-level debug to the serve
# options for a line per generation step). LOAD_ARGS: more arguments for server_load.py, split at
# spaces (e.g. "--texts FILE": requests of the lengths of its lines, client i the i-th mod n).
# WARMUP_ARGS: the three warm-up clients' arguments instead of LOAD_ARGS' (e.g. a file of the
# shortest text only: the wave's longer chunks then start after the warm-up).
set -u
a=$1 b=$2 slots=$3 clients=$4
rounds=${5:-2}
shift $(($# < 5 ? $# : 5))
here=$(cd "$(dirname "$0")" && pwd)
fx="$here/../tests/fixtures"
tmp=${TMPDIR:-/tmp}
w="$tmp/ptts_full_synthetic.safetensors"
[ -s "$w" ] || "$a" fill --arch full "$w" || exit 1
vdir=$(mktemp -d)
cp "$fx/full/voice.safetensors" "$vdir/full.safetensors"
# one client process per 8 clients, at most 128: with 16 processes of 64 threads the 1,024-client
# wave's first audio read 141-208 ms at the clients against 106-126 ms in the server's log; with
# 128, 122-127 against 111-119 (bench/RESULTS.md, 2026-12-02)
procs=$(((clients + 7) / 8 > 128 ? 128 : (clients + 7) / 8))
serve() { # binary, label
  "$1" serve --config "$fx/full/manifest.json" --weights "$w" --voices-dir "$vdir" \
    --voice full --host 127.0.0.1 --port 0 --eos-threshold 1e9 --max-concurrent "$slots" \
    --queue "$clients" --max-connections $((clients + 64)) --log-level info "${args[@]}" \
    2>"$vdir/log" &
  local pid=$! port=""
  for _ in $(seq 900); do
    port=$(sed -n 's/.*serving on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$vdir/log")
    [ -n "$port" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "$2: the server did not start: $(tail -2 "$vdir/log")"
  else
    # three clients first, not timed: the GPU's clock up and every pipeline used once (before
    # the server sized its caches at start, they also grew them for the longest text: a chunk
    # longer than any before grew every slot's KV cache while the batch waited, 110-130 ms at
    # 256 slots on the H200)
    python3 "$here/server_load.py" "http://127.0.0.1:$port" 3 ${WARMUP_ARGS:-${LOAD_ARGS:-}} \
      >/dev/null 2>&1
    python3 "$here/server_load.py" "http://127.0.0.1:$port" "$clients" --procs $procs ${LOAD_ARGS:-} 2>&1 |
      grep -E "^ *[0-9]" | sed "s/^/$2 /"
    grep "POST /v1/audio/speech" "$vdir/log" | tail -n "$clients" | python3 -c '
import re, statistics, sys
q, f = [], []
for line in sys.stdin:
    m = re.search(r"queued_ms=(\d+) first_audio_ms=(\d+)", line)
    if m: q.append(int(m.group(1))); f.append(int(m.group(2)))
if q: print("   server side: queued median %d max %d ms, first audio median %d max %d ms" %
            (statistics.median(q), max(q), statistics.median(f), max(f)))'
  fi
  kill -TERM $pid 2>/dev/null
  wait $pid 2>/dev/null
  [ -n "${LOGDIR:-}" ] && cp "$vdir/log" "$LOGDIR/$(echo "$2" | tr ' ' _).log"
}
args=("$@")
for r in $(seq "$rounds"); do
  serve "$a" "A r$r"
  serve "$b" "B r$r"
done
rm -rf "$vdir"
