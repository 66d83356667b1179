#!/usr/bin/env bash
# End-to-end: the web page of `pocket-tts serve` in headless Chromium driven by playwright-core
# (tests/server/web_test.js). Chromium comes from Debian (scripts/install-deps.sh installs it;
# installed here when missing and possible), playwright-core from npm into the build folder.
# Skips, saying why, only when Chromium, Node.js or playwright-core cannot be installed.
# Screenshots of the page land in ./web_test_out (ctest's working folder: build/tests); the test
# prints their paths.
# Usage: e2e_server_web.sh POCKET_TTS FIXTURES_DIR
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
if [ ! -x "$chromium" ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo -n"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1
  [ -x "$chromium" ] || skip "Chromium is not installed and apt-get could not install it"
fi
command -v node >/dev/null && command -v npm >/dev/null || skip "Node.js and npm are not installed"
cache="$PWD/node_cache"
if [ ! -d "$cache/node_modules/playwright-core" ]; then
  mkdir -p "$cache"
  npm install --no-save --no-audit --no-fund --prefix "$cache" playwright-core@1 >"$cache/npm.log" 2>&1 ||
    skip "npm could not install playwright-core: $(tail -2 "$cache/npm.log")"
fi
tmp=$(mktemp -d)
mkdir "$tmp/voices"
cp "$fx/tiny/voice.safetensors" "$tmp/voices/tiny.safetensors"
"$bin" serve --config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors" \
  --voices-dir "$tmp/voices" --voice tiny --host 127.0.0.1 --port 0 --max-text-chars 5000 \
  --eos-threshold 1e9 --max-tokens 12 >"$tmp/log" 2>&1 &
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
NODE_PATH="$cache/node_modules" CHROMIUM="$chromium" node "$here/server/web_test.js" \
  "http://127.0.0.1:$port/" "$fx/audio/voice_24k.wav"
