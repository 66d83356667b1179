#!/usr/bin/env bash
# compare_reference.sh - the whole `generate` process of this engine against the official Python
# package's (kyutai-labs/pocket-tts, `pip install pocket-tts`), same text and voice, runs
# interleaved (ours, reference, ours, ...), and the ratio: reference wall time / ours, pair by
# pair, median. Both WAVs' durations are printed: the reference stops at its own EOS, so the
# frames can differ (same model, other noise); the per-audio-second ratio covers that.
#
# Usage: bench/compare_reference.sh [options]
#   --bin PATH        this engine's pocket-tts (default: build/pocket-tts)
#   --text TEXT       the text (default: two sentences, about 6 s of speech)
#   --voice V         a voice both accept (default: alba, a preset of both)
#   --precision P     ours: f32 (default), bf16 or int8; int8 passes --quantize to the reference
#                     where it has that flag (the official package's int8 mode)
#   --threads N       ours: --threads N (default 2); both run under `taskset` on N CPUs when
#                     taskset exists, so the reference gets as many cores
#   --weights FILE    ours: --weights FILE (e.g. a file from `pocket-tts convert`)
#   --runs N          timed pairs (default 5), after one untimed run of each
#   -- ARGS...        more options for ours only (--tokenizer FILE, --config FILE, ...)
# The reference runs through the `pocket-tts` console script of the Python package, found with
# importlib.metadata (so this engine's binary of the same name on PATH is never taken for it).
# Exit status 77 when the package is not installed (as tests/test.h's skip), 1 when a run fails.
set -u
BIN=build/pocket-tts
TEXT="The quick brown fox jumps over the lazy dog. It was a bright cold day in April, and the clocks were striking thirteen."
VOICE=alba
PREC=f32
THREADS=2
WEIGHTS=
RUNS=5
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
  --bin) BIN=$2; shift 2 ;;
  --text) TEXT=$2; shift 2 ;;
  --voice) VOICE=$2; shift 2 ;;
  --precision) PREC=$2; shift 2 ;;
  --threads) THREADS=$2; shift 2 ;;
  --weights) WEIGHTS=$2; shift 2 ;;
  --runs) RUNS=$2; shift 2 ;;
  --) shift; EXTRA=("$@"); break ;;
  -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "compare_reference.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

PY=$(command -v python3 || true)
# shellcheck disable=SC2016
DRIVER='import sys
from importlib.metadata import entry_points
eps = [e for e in entry_points(group="console_scripts") if e.name == "pocket-tts"]
if not eps:
    sys.exit(77)
main = eps[0].load()
sys.argv = ["pocket-tts"] + sys.argv[1:]
sys.exit(main())'
if [ -z "$PY" ] || ! "$PY" -c 'import pocket_tts' >/dev/null 2>&1; then
  echo "compare_reference.sh: the official package (python3 -c 'import pocket_tts') is not installed; pip install pocket-tts to compare" >&2
  exit 77
fi
[ -x "$BIN" ] || { echo "compare_reference.sh: $BIN is not built" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PIN=()
if command -v taskset >/dev/null 2>&1; then
  PIN=(taskset -c "0-$((THREADS - 1))")
fi
OURS=("${PIN[@]}" "$BIN" generate --text "$TEXT" --voice "$VOICE" --precision "$PREC" --threads "$THREADS" --quiet --output-path "$TMP/ours.wav")
[ -n "$WEIGHTS" ] && OURS+=(--weights "$WEIGHTS")
OURS+=("${EXTRA[@]}")
REF=("${PIN[@]}" "$PY" -c "$DRIVER" generate --text "$TEXT" --voice "$VOICE" --output-path "$TMP/ref.wav")
if [ "$PREC" = int8 ]; then
  if "$PY" -c "$DRIVER" generate --help 2>/dev/null | grep -q -- --quantize; then
    REF+=(--quantize)
  else
    echo "compare_reference.sh: this reference has no --quantize: it runs in float32" >&2
  fi
fi

# seconds of a run (wall clock); the command's output goes to $TMP/log
run() { local t0 t1; t0=$(date +%s.%N); "$@" >>"$TMP/log" 2>&1 || return 1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }
# seconds of audio in a 16-bit mono 24 kHz WAV (its data chunk)
dur() { "$PY" -c 'import sys, wave; w = wave.open(sys.argv[1]); print(w.getnframes() / w.getframerate())' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "ours:      ${OURS[*]}"
echo "reference: ${REF[*]:0:${#PIN[@]}} python3 -c <pocket-tts console script> ${REF[*]:$((${#PIN[@]} + 3))}"
run "${OURS[@]}" >/dev/null || { echo "our run failed:"; tail -5 "$TMP/log"; exit 1; }
run "${REF[@]}" >/dev/null || { echo "the reference's run failed:"; tail -5 "$TMP/log"; exit 1; }
: >"$TMP/ratios"
: >"$TMP/a"
: >"$TMP/b"
for i in $(seq "$RUNS"); do
  a=$(run "${OURS[@]}") || { echo "our run failed"; exit 1; }
  b=$(run "${REF[@]}") || { echo "the reference's run failed"; exit 1; }
  echo "$a" >>"$TMP/a"
  echo "$b" >>"$TMP/b"
  awk -v a="$a" -v b="$b" 'BEGIN { print b / a }' >>"$TMP/ratios"
  printf 'pair %d: ours %.3f s, reference %.3f s\n' "$i" "$a" "$b"
done
da=$(dur "$TMP/ours.wav")
db=$(dur "$TMP/ref.wav")
ma=$(median <"$TMP/a")
mb=$(median <"$TMP/b")
mr=$(median <"$TMP/ratios")
printf 'audio: ours %.2f s, reference %.2f s\n' "$da" "$db"
printf 'median wall: ours %.3f s, reference %.3f s\n' "$ma" "$mb"
printf 'ratio (reference / ours, whole process): %.2fx\n' "$mr"
printf 'ratio per second of audio: %.2fx\n' "$(awk -v a="$ma" -v b="$mb" -v da="$da" -v db="$db" 'BEGIN { print (b / db) / (a / da) }')"
