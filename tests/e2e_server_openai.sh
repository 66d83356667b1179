#!/usr/bin/env bash
# End-to-end: the OpenAI side of `pocket-tts serve` on the tiny fixture model
# (tests/server/test_openai.py: Ogg/Opus page by page while generating, the voice map and
# --voice-map, per-request generation options, SSE and instructions refusals).
# Usage: e2e_server_openai.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
exec python3 -B "$here/server/test_openai.py" "$1" "$2"
