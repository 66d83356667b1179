#!/usr/bin/env bash
# The whole test suite: a warnings-as-errors build and every ctest (unit, parity tiny and full,
# end-to-end), then the unit and parity tests and the server's end-to-end tests again under
# AddressSanitizer + UBSan, then each libFuzzer target for a bounded time. Ends with "N passed,
# N failed"; skipped tests (a missing Vulkan device or browser) are listed above it, or fail
# with PTTS_NO_SKIP=1 (as .ci/run sets).
# The C sources must match .clang-format (checked first, as one test).
# Usage: tests/run_all.sh [--quick]   (--quick: skip the sanitizer build and the fuzzers)
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
quick=0
[ "${1:-}" = "--quick" ] && quick=1
passed=0
failed=0
failures=()
skipped=()

count() { # name status
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$1"); fi
}

ctest_counts() { # build-dir label-args... : adds ctest's own pass/fail counts
  local dir=$1; shift
  local log
  log=$(mktemp)
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" "$@" 2>&1 | tee "$log"
  local line
  line=$(grep -E "tests passed, [0-9]+ tests failed out of" "$log" | tail -1)
  if [ -z "$line" ]; then
    failed=$((failed + 1)); failures+=("ctest in $dir ran no test")
  else
    local total nfail
    nfail=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
    total=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/')
    # ctest counts a skipped test (exit 77: no Vulkan device, no browser) as not failed
    local nskip
    nskip=$(grep -cE '^[[:space:]]*[0-9]+ - .*\(Skipped\)' "$log")
    passed=$((passed + total - nfail - nskip)); failed=$((failed + nfail))
    [ "$nfail" -gt 0 ] && failures+=("$nfail ctest(s) in $dir")
    [ "$nskip" -gt 0 ] && skipped+=("$nskip ctest(s) in $dir: $(grep -E '\(Skipped\)' "$log" |
      sed -E 's/^[[:space:]]*[0-9]+ - ([^ ]+).*/\1/' | tr '\n' ' ')")
  fi
  rm -f "$log"
}

echo "== format (clang-format, the checked-in .clang-format)"
if command -v clang-format >/dev/null; then
  if git ls-files '*.c' '*.h' | grep -v '^tests/fixtures/' | xargs clang-format --dry-run -Werror; then
    count clang-format 0
  else
    count clang-format 1
  fi
else
  count "clang-format (not installed)" 1
fi

echo "== build (warnings are errors)"
if cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPTTS_WERROR=ON >/dev/null &&
   cmake --build build -j "$JOBS"; then
  count build 0
  echo "== tests"
  ctest_counts build
else
  count build 1
fi

if [ $quick -eq 0 ]; then
  echo "== sanitizers (ASan + UBSan): unit and parity tests, the server's end-to-end tests"
  if cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTTS_WERROR=ON -DPTTS_SANITIZE=ON >/dev/null &&
     cmake --build build-asan -j "$JOBS"; then
    count build-asan 0
    # A report stops the process (abort_on_error; UBSan is built with -fno-sanitize-recover) and
    # LeakSanitizer checks every exit (libvorbis's own leak suppressed: tests/fuzz/lsan.supp). The
    # server's end-to-end tests (the sanitized pocket-tts) fail on a report in the server's log
    # too (tests/server/e2e_util.py finish(), tests/server/sanitizer_log.sh): one found at exit.
    asan=detect_leaks=1:abort_on_error=1
    ubsan=print_stacktrace=1:halt_on_error=1
    lsan=suppressions="$PWD/tests/fuzz/lsan.supp"
    ASAN_OPTIONS=$asan UBSAN_OPTIONS=$ubsan LSAN_OPTIONS=$lsan ctest_counts build-asan -L "unit|parity"
    # one at a time: two sanitized servers side by side on 2 cores miss the tests' time bounds
    JOBS=1 ASAN_OPTIONS=$asan UBSAN_OPTIONS=$ubsan LSAN_OPTIONS=$lsan \
      ctest_counts build-asan -L e2e -R "server|wyoming"
  else
    count build-asan 1
  fi

  echo "== fuzzers (${FUZZ_SECONDS}s each)"
  if CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTTS_FUZZ=ON -DPTTS_SANITIZE=ON >/dev/null &&
     cmake --build build-fuzz -j "$JOBS"; then
    for fz in build-fuzz/tests/fuzz_*; do
      [ -x "$fz" ] || continue
      name=$(basename "$fz")
      corpus=$(mktemp -d)
      seeds="tests/fuzz/seeds/${name#fuzz_}"
      [ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
      echo "-- $name"
      PTTS_FIXTURES="$PWD/tests/fixtures" ASAN_OPTIONS=detect_leaks=1 \
        LSAN_OPTIONS=suppressions="$PWD/tests/fuzz/lsan.supp" \
        "$fz" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 "$corpus" >"build-fuzz/$name.log" 2>&1
      st=$?
      tail -3 "build-fuzz/$name.log"
      count "$name" $st
      rm -rf "$corpus"
    done
  else
    count build-fuzz 1
  fi
fi

echo
for f in "${skipped[@]}"; do echo "skipped (not counted): $f"; done
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
