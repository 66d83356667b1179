#!/usr/bin/env bash
# End-to-end: OpenAI's official Node SDK (npm "openai", pinned below) against `pocket-tts serve` on
# the tiny fixture model (tests/server/openai_sdk.mjs: every response_format, SSE through the
# SDK's stream helper, voice "alloy", speed, per-request options). The SDK is installed from npm
# into the build folder on first run. Skips, saying why, only when Node.js or the SDK cannot be
# installed (a failure under PTTS_NO_SKIP, as CI sets).
# Usage: e2e_server_openai_sdk.sh POCKET_TTS FIXTURES_DIR
set -u
bin=$1
fx=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/server/sanitizer_log.sh"
sdk_version=7.59.0 # pinned: CI installs exactly this one
skip() {
  if [ -n "${PTTS_NO_SKIP:-}" ]; then echo "FAIL (PTTS_NO_SKIP is set): $1"; exit 1; fi
  echo "SKIP: $1"; exit 77
}
command -v node >/dev/null && command -v npm >/dev/null || skip "Node.js and npm are not installed"
cache="$PWD/node_cache_openai"
sdk="$cache/node_modules/openai"
if ! grep -q "\"version\": \"$sdk_version\"" "$sdk/package.json" 2>/dev/null; then
  mkdir -p "$cache"
  npm install --no-save --no-audit --no-fund --prefix "$cache" "openai@$sdk_version" >"$cache/npm.log" 2>&1 ||
    skip "npm could not install openai@$sdk_version: $(tail -2 "$cache/npm.log")"
fi
tmp=$(mktemp -d)
mkdir "$tmp/voices"
cp "$fx/tiny/voice.safetensors" "$tmp/voices/tiny.safetensors"
echo '{"alloy": "tiny"}' >"$tmp/voice_map.json"
"$bin" serve --config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors" \
  --voices-dir "$tmp/voices" --voice tiny --voice-map "$tmp/voice_map.json" --host 127.0.0.1 \
  --port 0 --temperature 0 >"$tmp/log" 2>&1 &
pid=$!
# at the end: a sanitizer report in the server's log (one found at its exit too) fails the test
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; sanitizer_log "$tmp/log"; san=$?; rm -rf "$tmp"
      [ $san -eq 0 ] || exit 1' EXIT
port=""
for _ in $(seq 150); do
  port=$(grep -o 'serving on http://[^:]*:[0-9]*' "$tmp/log" | sed 's/.*://')
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: server did not start"; cat "$tmp/log"; exit 1; }
node "$here/server/openai_sdk.mjs" "http://127.0.0.1:$port" "$sdk"
rc=$?
[ $rc -eq 0 ] || cat "$tmp/log"
exit $rc
