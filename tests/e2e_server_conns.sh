#!/usr/bin/env bash
# End-to-end: `pocket-tts serve` holding many idle keep-alive connections with no thread each and
# bounded memory, streams and /health next to them, a queued request whose client hangs up
# (tests/server/test_conns.py). Linux only (/proc).
# Usage: e2e_server_conns.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -r /proc/self/status ] || { echo "SKIP: no /proc"; exit 77; }
exec python3 -B "$here/server/test_conns.py" "$1" "$2"
