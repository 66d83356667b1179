#!/usr/bin/env bash
# The server against the engine on one machine (bench/RESULTS.md, "Server vs engine"): the
# engine's one-stream and N-stream figures (bench_pipeline), then `pocket-tts serve` on the same
# full-size synthetic model (EOS off: every request the same length) measured by
# bench/server_load.py with one client, then N; one client again with a small batch (8 slots),
# which shows what the many idle slots of a big batch cost a lone request.
# Usage: bench/server_vs_engine.sh BUILD_DIR [N] [serve/model options, e.g. --backend vulkan
#        --precision bf16]
# Writes the synthetic checkpoint to $TMPDIR (pocket-tts fill) when it is not there yet.
set -u
b=$1
n=${2:-256}
shift $(($# < 2 ? $# : 2))
here=$(cd "$(dirname "$0")" && pwd)
fx="$here/../tests/fixtures"
tmp=${TMPDIR:-/tmp}
w="$tmp/ptts_full_synthetic.safetensors"
[ -s "$w" ] || "$b/pocket-tts" fill --arch full "$w" || exit 1
echo "== engine: bench_pipeline --only loop,batch --streams 1,$n $*"
"$b/bench_pipeline" --only loop,batch --streams "1,$n" --frames 40 --reps 3 \
  --tokenizer "$fx/tokenizer/sp_unigram.model" "$@" 2>&1 | grep -E "^(==|loop|batch)"
vdir=$(mktemp -d)
cp "$fx/full/voice.safetensors" "$vdir/full.safetensors"
serve() { # slots, then server_load's clients
  local slots=$1
  shift
  "$b/pocket-tts" serve --config "$fx/full/manifest.json" --weights "$w" --voices-dir "$vdir" \
    --voice full --host 127.0.0.1 --port 0 --eos-threshold 1e9 --max-concurrent "$slots" \
    --queue "$n" --max-connections $((n + 64)) --log-level warn "${args[@]}" 2>"$vdir/log" &
  local pid=$!
  local port=""
  for _ in $(seq 600); do
    port=$(sed -n 's/.*serving on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$vdir/log")
    [ -n "$port" ] && break
    sleep 0.1
  done
  echo "== server, --max-concurrent $slots: server_load.py $*"
  [ -n "$port" ] && python3 "$here/server_load.py" "http://127.0.0.1:$port" "$@"
  kill -TERM $pid
  wait $pid
}
args=("$@")
serve "$n" 1 1 1 "$n"
serve 8 1 1 1
rm -rf "$vdir"
