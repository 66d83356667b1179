#!/usr/bin/env bash
# End-to-end: `pocket-tts generate` on the tiny fixture model, to a file and to stdout; the same
# seed gives the same audio; bad input gives a clear error and leaves no file behind.
# Usage: e2e_generate.sh POCKET_TTS FIXTURES_DIR
set -u
bin=$1
fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
model=(--config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors")
voice=(--voice "$fx/tiny/voice.safetensors")

"$bin" generate "${model[@]}" "${voice[@]}" --text "Hello world. This is a test." --seed 7 \
  --eos-threshold 1e9 --max-tokens 12 --output-path "$tmp/a.wav" 2>"$tmp/err" || bad "generate to a file: $(cat "$tmp/err")"
[ -s "$tmp/a.wav" ] && ok "file written" || bad "no file"
grep -q "real time" "$tmp/err" && ok "statistics line" || bad "no statistics line"
# header: RIFF, 24 kHz mono 16-bit, patched data length = file size - 44
size=$(stat -c %s "$tmp/a.wav")
hdr=$(od -An -tu4 -j40 -N4 "$tmp/a.wav" | tr -d ' ')
[ "$hdr" -eq $((size - 44)) ] && ok "data length patched" || bad "data length $hdr for size $size"
rate=$(od -An -tu4 -j24 -N4 "$tmp/a.wav" | tr -d ' ')
[ "$rate" -eq 24000 ] && ok "24 kHz" || bad "rate $rate"
# whole frames of 1920 samples, then 200 ms (4800 samples) of silence
samples=$(( (size - 44) / 2 ))
[ $(( (samples - 4800) % 1920 )) -eq 0 ] && ok "whole frames + 200 ms" || bad "$samples samples"
# last 200 ms are silence
tail -c 9600 "$tmp/a.wav" | od -v -An -tx1 | tr -d ' \n' | grep -q '^0*$' && ok "silence appended" || bad "no trailing silence"

"$bin" generate "${model[@]}" "${voice[@]}" --text "Hello world. This is a test." --seed 7 \
  --eos-threshold 1e9 --max-tokens 12 --quiet --output-path - >"$tmp/b.wav" 2>"$tmp/err2" || bad "generate to stdout"
[ ! -s "$tmp/err2" ] && ok "--quiet is quiet" || bad "--quiet printed: $(cat "$tmp/err2")"
cmp -s <(tail -c +45 "$tmp/a.wav") <(tail -c +45 "$tmp/b.wav") && ok "stdout = file, same seed same audio" || bad "stdout audio differs"

echo "Hello from stdin." | "$bin" generate "${model[@]}" "${voice[@]}" --text - --seed 1 -q -o "$tmp/c.wav" && [ -s "$tmp/c.wav" ] && ok "text from stdin" || bad "text from stdin"

# temperature 0: deterministic without a seed
"$bin" generate "${model[@]}" "${voice[@]}" --text "Same every time." --temperature 0 -q -o "$tmp/d1.wav" &&
"$bin" generate "${model[@]}" "${voice[@]}" --text "Same every time." --temperature 0 -q -o "$tmp/d2.wav" &&
cmp -s "$tmp/d1.wav" "$tmp/d2.wav" && ok "temperature 0 is deterministic" || bad "temperature 0 differs"

# the hidden --lsd-decode-steps overrides --sampler-decode-steps, before or after it
steps=("${model[@]}" "${voice[@]}" --text "Same every time." --temperature 0 -q)
"$bin" generate "${steps[@]}" --sampler-decode-steps 3 -o "$tmp/s3.wav" &&
"$bin" generate "${steps[@]}" --lsd-decode-steps 3 --sampler-decode-steps 1 -o "$tmp/l3.wav" &&
"$bin" generate "${steps[@]}" --sampler-decode-steps 1 --lsd-decode-steps 3 -o "$tmp/l3b.wav" &&
cmp -s "$tmp/s3.wav" "$tmp/l3.wav" && cmp -s "$tmp/s3.wav" "$tmp/l3b.wav" &&
! cmp -s "$tmp/s3.wav" "$tmp/d1.wav" && ok "--lsd-decode-steps overrides --sampler-decode-steps" ||
  bad "--lsd-decode-steps does not override --sampler-decode-steps"
# an audio voice file is cloned (said on stderr), a state file is loaded
"$bin" generate "${model[@]}" --voice "$fx/audio/voice_24k.wav" --text "Cloned." --seed 1 \
  -o "$tmp/cl.wav" 2>"$tmp/ecl" && grep -q "voice cloned from" "$tmp/ecl" && ok "audio voice cloned" ||
  bad "audio voice: $(cat "$tmp/ecl")"

# errors: clear message, exit status 1 or 2, no file left behind
expect_error() { # description pattern args...
  local what=$1 pat=$2; shift 2
  rm -f "$tmp/x.wav"
  if "$bin" generate "$@" -o "$tmp/x.wav" 2>"$tmp/e"; then bad "$what: succeeded"; return; fi
  grep -qi -- "$pat" "$tmp/e" && ok "$what" || bad "$what: message was: $(cat "$tmp/e")"
  ls "$tmp" | grep -q '^x\.wav' && bad "$what: left a file"
}
expect_error "empty text" "cannot be empty" "${model[@]}" "${voice[@]}" --text "   "
expect_error "missing voice" "voice" "${model[@]}" --voice "$tmp/none.safetensors" --text hi
expect_error "voice of another shape" "voice\|shape\|layers" "${model[@]}" --voice "$fx/full/voice.safetensors" --text hi
expect_error "weights of the wrong kind" "missing\|tensor" --config "$fx/tiny/manifest.json" --weights "$fx/tiny/voice.safetensors" "${voice[@]}" --text hi
expect_error "bad option value" "temperature" "${model[@]}" "${voice[@]}" --text hi --temperature abc
expect_error "not a model file" "safetensors\|header\|file" --config "$fx/tiny/manifest.json" --weights "$fx/text_cases.json" "${voice[@]}" --text hi
expect_error "voice not audio" "audio\|format" "${model[@]}" --voice "$fx/text_cases.json" --text hi
# megabytes of text without punctuation: no crash, cut into chunks; EOS at step 0 with no frames
# after it (threshold -1e9, --frames-after-eos 0) keeps the run short
python3 -c "print('word ' * 400000)" >"$tmp/big.txt"
"$bin" generate "${model[@]}" "${voice[@]}" --text - --eos-threshold -1e9 --frames-after-eos 0 -q -o "$tmp/big.wav" <"$tmp/big.txt" && ok "2 MB of text" || bad "2 MB of text"

exit $fail
