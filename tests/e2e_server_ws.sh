#!/usr/bin/env bash
# End-to-end: the WebSocket input-streaming endpoint of `pocket-tts serve` on the tiny fixture
# model (tests/server/test_ws.py, with Debian's python3-websockets as the client).
# Usage: e2e_server_ws.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=python3
# Debian's interpreter has python3-websockets when another python3 comes first on PATH
python3 -c "import websockets" 2>/dev/null || py=/usr/bin/python3
if ! "$py" -c "import websockets" 2>/dev/null; then
  if [ -n "${PTTS_NO_SKIP:-}" ]; then echo "FAIL (PTTS_NO_SKIP is set): no python3-websockets"; exit 1; fi
  echo "SKIP: python3-websockets is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
exec "$py" -B "$here/server/test_ws.py" "$1" "$2"
