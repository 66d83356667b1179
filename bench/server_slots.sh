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
start() { # slots port
  $B serve --config $fx/tiny/manifest.json --weights $fx/tiny/model.safetensors --voices-dir $vd --voice tiny \
    --threads 1 --backend cpu --host 127.0.0.1 --port $2 --max-concurrent $1 --eos-threshold 1e9 > $tmp/s$1.log 2>&1 &
  echo $!
}
p1=$(start 1 18101); p2=$(start 256 18102)
for i in $(seq 50); do curl -sf 127.0.0.1:18101/ready >/dev/null && curl -sf 127.0.0.1:18102/ready >/dev/null && break; sleep 0.2; done
T="The quick brown fox jumps over the lazy dog, then it runs far away into the forest. The quick brown fox jumps over the lazy dog, then it runs far away into the forest."
for r in 1 2 3 4 5 6; do
  for port in 18101 18102; do echo -n "slots $([ $port = 18101 ] && echo 1 || echo 256) r$r: "; python3 $here/server_load.py http://127.0.0.1:$port 1 --text "$T" | tail -1; done
done
kill $p1 $p2
rm -rf "$tmp"
