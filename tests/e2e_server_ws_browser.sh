#!/usr/bin/env bash
# End-to-end: a browser's WebSocket (headless Chromium driven by playwright-core,
# tests/server/ws_browser_test.js) speaks a sentence through `pocket-tts serve`'s
# /v1/tts/stream-input and gets `pocket-tts generate`'s samples. Chromium comes from Debian
# (scripts/install-deps.sh), playwright-core from npm into the build folder, as in
# e2e_server_web.sh. Skips, saying why, only when Chromium, Node.js or playwright-core cannot be
# installed.
# Usage: e2e_server_ws_browser.sh POCKET_TTS FIXTURES_DIR
set -u
bin=$1
fx=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/server/sanitizer_log.sh"
skip() { # exit 77: skipped (ctest); a failure when PTTS_NO_SKIP is set (CI installs everything)
  if [ -n "${PTTS_NO_SKIP:-}" ]; then echo "FAIL (PTTS_NO_SKIP is set): $1"; exit 1; fi
  echo "SKIP: $1"; exit 77
}
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || skip "Chromium is not installed (scripts/install-deps.sh installs it)"
command -v node >/dev/null && command -v npm >/dev/null || skip "Node.js and npm are not installed"
# a folder of its own: e2e_server_web.sh may be installing into its own at the same time (ctest -j)
cache="$PWD/node_cache_ws"
if [ ! -d "$cache/node_modules/playwright-core" ]; then
  mkdir -p "$cache"
  npm install --no-save --no-audit --no-fund --prefix "$cache" playwright-core@1 >"$cache/npm.log" 2>&1 ||
    skip "npm could not install playwright-core: $(tail -2 "$cache/npm.log")"
fi
tmp=$(mktemp -d)
model=(--config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors" --temperature 0
       --eos-threshold 1e9)
"$bin" generate "${model[@]}" --voice "$fx/tiny/voice.safetensors" --text "Hello from the browser." \
  -q -o "$tmp/ref.wav" || { echo "FAIL: generate"; exit 1; }
"$bin" serve "${model[@]}" --voice "$fx/tiny/voice.safetensors" --host 127.0.0.1 --port 0 \
  >"$tmp/log" 2>&1 &
pid=$!
# at the end: a sanitizer report in the server's log (one found at its exit too) fails the test
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; sanitizer_log "$tmp/log"; san=$?; rm -rf "$tmp"
      [ $san -eq 0 ] || exit 1' EXIT
port=""
for _ in $(seq 100); do
  port=$(grep -o 'serving on http://[^:]*:[0-9]*' "$tmp/log" | sed 's/.*://')
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: server did not start"; cat "$tmp/log"; exit 1; }
NODE_PATH="$cache/node_modules" CHROMIUM="$chromium" node "$here/server/ws_browser_test.js" \
  "http://127.0.0.1:$port/" "$tmp/ref.wav"
