#!/usr/bin/env bash
# End-to-end: sd_pocket-tts, the speech-dispatcher output module, on the tiny fixture model.
# 1. The module alone (tests/speechd/module_protocol.py): the protocol lines the daemon sends on
#    its stdin, every reply and event checked (INIT, AUDIO, SET, SPEAK/CHAR/KEY/SOUND_ICON,
#    705 AUDIO, index marks, STOP/PAUSE within a frame, rate/pitch/volume, voices, bad input).
# 2. speech-dispatcher's own daemon (Debian speech-dispatcher, python3-speechd) with the module
#    added by AddModule, a private config dir and socket, its audio into a file through ALSA
#    (tests/speechd/daemon.py): speaks, stops, changes rate and voice, with the Python client
#    and spd-say. Skipped, saying so, where the daemon or its client is not installed.
# Usage: e2e_speechd.sh POCKET_TTS FIXTURES_DIR (sd_pocket-tts is built next to POCKET_TTS)
set -u
export PYTHONDONTWRITEBYTECODE=1 # nothing written into the source tree
bin=$1
fx=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")/speechd" && pwd)
module="$(cd "$(dirname "$bin")" && pwd)/sd_pocket-tts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$module" ] || { echo "FAIL: no module at $module (build the sd_pocket-tts target)"; exit 1; }
fail=0
mkdir -p "$tmp/module" "$tmp/daemon"
(cd "$here" && timeout 300 python3 module_protocol.py "$module" "$fx" "$tmp/module") || fail=1

py=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import speechd' 2>/dev/null; then py=$p; break; fi
done
if ! command -v speech-dispatcher >/dev/null || ! command -v spd-say >/dev/null || [ -z "$py" ]; then
  echo "skip: the daemon part (needs speech-dispatcher, spd-say and python3-speechd: scripts/install-deps.sh)"
else
  (cd "$here" && timeout 300 "$py" daemon.py "$module" "$fx" "$tmp/daemon") || fail=1
fi
[ $fail -eq 0 ] && echo "e2e_speechd: passed" || echo "e2e_speechd: FAILED"
exit $fail
