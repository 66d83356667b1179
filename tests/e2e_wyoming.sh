#!/usr/bin/env bash
# End-to-end: the Wyoming server (`pocket-tts serve --wyoming-port`) on the tiny fixture model over
# loopback (tests/server/test_wyoming.py: describe, synthesize and streaming synthesis against
# `pocket-tts generate`, concurrency, bad input, disconnects).
# Usage: e2e_wyoming.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
exec python3 -B "$here/server/test_wyoming.py" "$1" "$2"
