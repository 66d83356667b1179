#!/usr/bin/env bash
# End-to-end: Piper-style pipes of `pocket-tts generate` on the tiny fixture model: --output-raw
# through sox; raw = the WAV's data; --text - speaks before stdin is closed (a slow writer);
# --text - equals --text-whole for text that arrives at once; pauses in the output; --no-markup;
# --json-input with per-line output files and voices.
# Usage: e2e_pipes.sh POCKET_TTS FIXTURES_DIR
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
quick=(--temperature 0 --eos-threshold -1e9 --frames-after-eos 2 -q)
samples() { echo $(( $(stat -c %s "$1") / 2 )); }

# the issue's pipe: raw s16le into sox
if command -v sox >/dev/null; then
  echo hi | "$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text - --output-raw |
    sox -t raw -r 24000 -e signed -b 16 -c 1 - "$tmp/out.wav" 2>"$tmp/sox.err" &&
    [ "$(soxi -r "$tmp/out.wav")" = 24000 ] && [ "$(soxi -s "$tmp/out.wav")" -gt 4800 ] &&
    ok "echo hi | generate --text - --output-raw | sox" || bad "raw into sox: $(cat "$tmp/sox.err")"
else
  bad "sox is not installed (scripts/install-deps.sh)"
fi

# raw is the WAV's data, byte for byte
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text "Hello there. Bye now." -o "$tmp/a.wav" &&
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text "Hello there. Bye now." --output-raw >"$tmp/a.raw" &&
  cmp -s <(tail -c +45 "$tmp/a.wav") "$tmp/a.raw" && ok "raw = the WAV's samples" || bad "raw differs from the WAV"
# stdin that arrives at once (printf is done before the model is loaded): fed in one piece,
# so streaming equals read-everything (one chunk, not a chunk per sentence)
printf 'Hello there. Bye now.' | "$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text - --output-raw >"$tmp/s.raw" &&
printf 'Hello there. Bye now.' | "$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text - --text-whole --output-raw >"$tmp/w.raw" &&
  cmp -s "$tmp/s.raw" "$tmp/w.raw" && cmp -s "$tmp/s.raw" "$tmp/a.raw" && ok "--text - = --text-whole = --text" ||
  bad "streamed stdin differs from the whole text"

# a slow writer: the first audio bytes arrive while it still writes (it writes the second
# sentence only after 3 s; the audio of the first is on stdout by then)
( printf 'Hello there. '; sleep 3; printf 'Bye now.'; touch "$tmp/writer_done" ) |
  "$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text - --output-raw |
  { head -c 2 >/dev/null; [ -e "$tmp/writer_done" ] && echo late || echo early; cat >/dev/null; } >"$tmp/when"
[ "$(cat "$tmp/when")" = early ] && ok "first audio before stdin is closed" || bad "audio came only after the writer finished"

# pauses: 0.5 s of zeros between the two sentences, exactly; --no-markup speaks the brackets
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text "Hello there." --output-raw >"$tmp/p1.raw" &&
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text "Bye now." --output-raw >"$tmp/p2.raw" &&
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text "Hello there. [pause] Bye now." --output-raw >"$tmp/p.raw" || bad "pause runs"
n1=$(( $(samples "$tmp/p1.raw") - 4800 ))
head -c $((2 * n1)) "$tmp/p1.raw" >"$tmp/want.raw"; head -c 24000 /dev/zero >>"$tmp/want.raw"; cat "$tmp/p2.raw" >>"$tmp/want.raw"
cmp -s "$tmp/p.raw" "$tmp/want.raw" && ok "[pause] is 12000 zero samples between the chunks" || bad "pause output differs"
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text "Hello there. [pause] Bye now." --no-markup --output-raw >"$tmp/nm.raw" &&
  ! cmp -s "$tmp/nm.raw" "$tmp/p.raw" && ok "--no-markup" || bad "--no-markup"
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --text "Hi [pause:x]" -o "$tmp/bad.wav" 2>"$tmp/e" ;
  grep -q "markup at byte 3" "$tmp/e" && [ ! -e "$tmp/bad.wav" ] && ok "invalid markup: $(cat "$tmp/e")" || bad "invalid markup: $(cat "$tmp/e")"
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --max-tokens 4 --sentence-silence 0.25 --text "Hello there. Bye now." --output-raw >"$tmp/ss.raw" &&
"$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --max-tokens 4 --text "Hello there. Bye now." --output-raw >"$tmp/ns.raw" &&
  [ $(( $(samples "$tmp/ss.raw") - $(samples "$tmp/ns.raw") )) -eq 6000 ] && ok "--sentence-silence 0.25: 6000 samples more" || bad "--sentence-silence"

# JSON lines: one model, a file per line where asked, the rest to stdout, a bad line reported
printf '%s\n' "{\"text\": \"Hello there.\", \"output_file\": \"$tmp/j1.wav\"}" \
  '{"text": "Bye now."}' 'not json' "{\"text\": \"Hello there.\", \"voice\": \"$fx/tiny/voice_short.safetensors\", \"output_file\": \"$tmp/j3.wav\"}" |
  "$bin" generate "${model[@]}" "${voice[@]}" "${quick[@]}" --json-input --output-raw >"$tmp/j.raw" 2>"$tmp/je"
jrc=$?
cmp -s <(tail -c +45 "$tmp/j1.wav") "$tmp/p1.raw" && ok "json line 1 to its file" || bad "json line 1"
cmp -s "$tmp/j.raw" "$tmp/p2.raw" && ok "json line 2 to stdout" || bad "json line 2"
[ $jrc -eq 1 ] && grep -q "line 3: not a JSON object" "$tmp/je" && ok "bad json line reported, exit 1" || bad "bad line: rc $jrc, $(cat "$tmp/je")"
"$bin" generate "${model[@]}" --voice "$fx/tiny/voice_short.safetensors" "${quick[@]}" --text "Hello there." -o "$tmp/vs.wav" &&
  cmp -s "$tmp/j3.wav" "$tmp/vs.wav" && ok "json line voice" || bad "json line voice"

exit $fail
