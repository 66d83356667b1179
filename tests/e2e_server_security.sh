#!/usr/bin/env bash
# End-to-end: what `pocket-tts serve` refuses (tests/server/test_security.py, docs/security.md):
# voice URLs to loopback and private addresses (a listener checks that no connection is made),
# invalid text, connections past the limit, a 20 MB body, and the SIGTERM drain. Loopback only.
# Usage: e2e_server_security.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
exec python3 -B "$here/server/test_security.py" "$1" "$2"
