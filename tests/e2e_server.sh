#!/usr/bin/env bash
# End-to-end: `pocket-tts serve` on the tiny fixture model over loopback (tests/server/test_server.py:
# every endpoint and format, parity with `pocket-tts generate`, concurrency, disconnects, a full
# queue, hostile requests, shutdown).
# Usage: e2e_server.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
exec python3 -B "$here/server/test_server.py" "$1" "$2"
