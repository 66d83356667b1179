#!/usr/bin/env bash
# End-to-end: three `pocket-tts serve` replicas on the tiny fixture model behind haproxy with
# docs/haproxy.cfg, on loopback (tests/server/test_haproxy.py): 32 clients during a rolling
# restart (SIGTERM one replica at a time), then a SIGKILL mid-stream. Skipped without haproxy.
# Usage: e2e_haproxy.sh POCKET_TTS FIXTURES_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
skip() { # exit 77: skipped (ctest); a failure when PTTS_NO_SKIP is set (CI installs everything)
  if [ -n "${PTTS_NO_SKIP:-}" ]; then echo "FAIL (PTTS_NO_SKIP is set): $1"; exit 1; fi
  echo "SKIP: $1"; exit 77
}
# Debian installs it in /usr/sbin, which a user's PATH may lack
haproxy=$(PATH="$PATH:/usr/sbin:/usr/local/sbin" command -v haproxy) ||
  skip "haproxy is not installed (scripts/install-deps.sh)"
exec python3 -B "$here/server/test_haproxy.py" "$1" "$2" "$here/../docs" "$haproxy"
