# Sourced by the shell end-to-end tests that start `pocket-tts serve` themselves (the Python ones
# use e2e_util.finish()): sanitizer_log LOG prints LOG from its first sanitizer report on and
# returns 1 when it holds one (a -DPTTS_SANITIZE=ON build: an AddressSanitizer or LeakSanitizer
# report, UBSan's "runtime error" line, a sanitizer's SUMMARY line), else returns 0.
sanitizer_log() {
  local first
  first=$(grep -n -m1 -E 'ERROR: (Address|Leak)Sanitizer|: runtime error: |SUMMARY: [A-Za-z]+Sanitizer' "$1" |
    cut -d: -f1)
  [ -z "$first" ] && return 0
  echo "FAIL: a sanitizer report in the server's log:"
  tail -n +"$first" "$1" | head -80
  return 1
}
