#!/usr/bin/env bash
# End-to-end: the Python package. `pip install` of python/ with no network (its build backend is
# in the tree), then python/tests with `python3 -m unittest` against the built shared library,
# comparing with this CLI's samples. The interpreter is the first of python3 and /usr/bin/python3
# that has numpy (scripts/install-deps.sh installs Debian's python3-numpy).
# Usage: e2e_python.sh POCKET_TTS FIXTURES_DIR
set -u
bin=$(readlink -f "$1")
fx=$(readlink -f "$2")
build=$(dirname "$bin")
root=$(cd "$(dirname "$0")/.." && pwd)
py=
for c in python3 /usr/bin/python3; do
  if "$c" -c "import numpy, tomllib" 2>/dev/null; then py=$c; break; fi
done
[ -n "$py" ] || { echo "FAIL: no python3 (3.11+) with numpy"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# pip builds in a copy of python/ (no build folder left in the tree)
cp -r "$root/python" "$tmp/src"
"$py" -m pip install --no-index --no-deps --no-cache-dir --target "$tmp/site" "$tmp/src" \
  >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; echo "FAIL: pip install ./python offline"; exit 1; }
echo "ok: pip install ./python (offline)"
printf '{"cli": "%s", "library": "%s", "fixtures": "%s"}\n' "$bin" \
  "$(readlink -f "$build/libpocket-tts.so.0")" "$fx" >"$tmp/paths.json"
cd "$tmp" && PYTHONPATH="$tmp/site" "$py" -m unittest discover -s "$root/python/tests" -t "$root/python/tests" -v
