#!/usr/bin/env bash
# One client against two CPU servers of the tiny model, one with 1 slot and one with 256
# (--threads 1, EOS off: 37 s of audio a request), six rounds interleaved: does a request
# run slower in a server of many idle slots? Prints server_load.py's line per round.
# Usage: bench/server_slots.sh [POCKET_TTS] (default build/pocket-tts)
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$here/../build/pocket-tts}
fx=$here/../tests/fixtures
tmp=$(mktemp -d)
vd=$tmp/voices
mkdir -p $vd
cp $fx/tiny/voice.safetensors $vd/tiny.safetensors
start() { # slots: a server on a free port (--port 0), its port read from its log
  "$B" serve --config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors" \
    --voices-dir "$vd" --voice tiny --threads 1 --backend cpu --host 127.0.0.1 --port 0 \
    --max-concurrent "$1" --eos-threshold 1e9 2>"$tmp/s$1.log" &
  pid[$1]=$!
  for _ in $(seq 100); do
    port[$1]=$(sed -n 's/.*serving on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$tmp/s$1.log")
    [ -n "${port[$1]}" ] && return 0
    sleep 0.1
  done
  echo "the $1-slot server did not start: $(tail -2 "$tmp/s$1.log")"
  exit 1
}
declare -A pid port
start 1
start 256
T="The quick brown fox jumps over the lazy dog, then it runs far away into the forest."
T="$T $T"
for r in 1 2 3 4 5 6; do
  for n in 1 256; do
    echo -n "slots $n r$r: "
    python3 "$here/server_load.py" "http://127.0.0.1:${port[$n]}" 1 --text "$T" | tail -1
  done
done
kill ${pid[1]} ${pid[256]}
rm -rf "$tmp"
