#!/usr/bin/env bash
# End-to-end: the first minutes of a new user, against tests/hf_mock.py (a loopback mock of the
# Hugging Face hub serving the tiny fixture model as every language's weights). `pocket-tts
# generate` with no argument downloads the english model (the gated repository refuses: the open
# one, said once) and its default voice, and speaks; a rerun with HF_HUB_OFFLINE=1 works from the
# cache without a request; preset names, URLs, `download`, `voices`, languages, and clear errors.
# Usage: e2e_download.sh POCKET_TTS FIXTURES_DIR
set -u
bin=$(realpath "$1")
fx=$(realpath "$2")
tmp=$(mktemp -d)
mock=
cleanup() { [ -n "$mock" ] && kill "$mock" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

python3 "$fx/../hf_mock.py" "$tmp/port" "$fx" &
mock=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "FAIL: the mock hub did not start"; exit 1; }
ep="http://127.0.0.1:$(cat "$tmp/port")"
unset HF_TOKEN HF_TOKEN_PATH HF_HUB_OFFLINE HF_HUB_CACHE HUGGINGFACE_HUB_CACHE XDG_CACHE_HOME
export HF_ENDPOINT=$ep HF_HOME=$tmp/hf HOME=$tmp/home
mkdir -p "$tmp/work" && cd "$tmp/work" || exit 1
requests() { python3 -c "import json,sys,urllib.request as u; print(len([r for r in json.load(u.urlopen(sys.argv[1]+'/_log')) if not r['path'].startswith('/_')]))" "$ep"; }
reset() { python3 -c "import sys,urllib.request as u; u.urlopen(sys.argv[1]+'/_reset').read()" "$ep"; }

# the first command of a new user: no argument at all (english: languages/english/, MODEL.md 10.3)
"$bin" generate 2>"$tmp/err"
st=$?
[ $st -eq 0 ] && [ -s tts_output.wav ] && ok "generate with no argument" || bad "generate with no argument ($st): $(cat "$tmp/err")"
[ "$(grep -c 'HF_TOKEN' "$tmp/err")" -eq 1 ] && grep -q "licence" "$tmp/err" && ok "the fallback to the open weights is said once" || bad "fallback message: $(cat "$tmp/err")"
grep -q "downloaded languages/english/model.safetensors" "$tmp/err" && ok "download reported" || bad "no download line: $(cat "$tmp/err")"
ls "$HF_HOME/hub/models--kyutai--pocket-tts-without-voice-cloning/snapshots/"*/languages/english/embeddings/alba.safetensors >/dev/null 2>&1 && ok "default voice alba in the hub cache" || bad "alba not cached"

# offline rerun: from the cache, no request
reset
HF_HUB_OFFLINE=1 "$bin" generate -q -o offline.wav 2>"$tmp/err" && [ -s offline.wav ] && ok "offline rerun" || bad "offline rerun: $(cat "$tmp/err")"
[ "$(requests)" -eq 0 ] && ok "offline made no request" || bad "offline made $(requests) requests"
if HF_HUB_OFFLINE=1 "$bin" generate -q --voice marius -o x.wav 2>"$tmp/err"; then bad "offline uncached voice succeeded"; else
  grep -q "HF_HUB_OFFLINE" "$tmp/err" && grep -q marius "$tmp/err" && ok "offline uncached voice: clear error" || bad "offline error: $(cat "$tmp/err")"; fi
[ ! -e x.wav ] || bad "a failed run left x.wav"

# voices: preset names, URLs, unknown names
"$bin" generate -q --voice marius --text "Hi there." -o m.wav 2>"$tmp/err" && [ -s m.wav ] && ok "--voice marius" || bad "--voice marius: $(cat "$tmp/err")"
"$bin" generate -q --voice "$ep/plain/voice.safetensors" --text "Hi." -o u.wav 2>"$tmp/err" && [ -s u.wav ] && ok "--voice URL" || bad "--voice URL: $(cat "$tmp/err")"
if "$bin" generate -q --voice nobody -o x.wav 2>"$tmp/err"; then bad "unknown voice succeeded"; else
  grep -q "not a preset" "$tmp/err" && grep -q alba "$tmp/err" && ok "unknown voice: clear error" || bad "unknown voice: $(cat "$tmp/err")"; fi
if "$bin" generate -q --language klingon -o x.wav 2>"$tmp/err"; then bad "unknown language succeeded"; else
  grep -q "unknown language 'klingon'" "$tmp/err" && grep -q french_24l "$tmp/err" && ok "unknown language: clear error" || bad "unknown language: $(cat "$tmp/err")"; fi

# voices lists cached status
"$bin" voices >"$tmp/out" 2>&1 || bad "voices failed"
grep -E "^  alba +/.*alba.safetensors" "$tmp/out" >/dev/null && grep -E "^  anna +not downloaded" "$tmp/out" >/dev/null && ok "voices: cached and not" || bad "voices: $(cat "$tmp/out")"

# download, another language, the gated weights with a token
"$bin" download --language german --voices juergen >"$tmp/out" 2>"$tmp/err" && grep -q "(no cloning)" "$tmp/out" && grep -q juergen "$tmp/out" && ok "download --language german" || bad "download german: $(cat "$tmp/out" "$tmp/err")"
"$bin" generate -q --language german -o de.wav 2>"$tmp/err" && [ -s de.wav ] && ok "generate --language german (default voice juergen)" || bad "german: $(cat "$tmp/err")"
HF_TOKEN=good-token "$bin" download -q >"$tmp/out" 2>"$tmp/err" && grep -q "(cloning)" "$tmp/out" && ok "download with a token: the gated weights" || bad "download with a token: $(cat "$tmp/out" "$tmp/err")"
if "$bin" download --voices nobody >/dev/null 2>"$tmp/err"; then bad "download of an unknown voice succeeded"; else
  grep -q "nobody" "$tmp/err" && ok "download of an unknown voice fails" || bad "download nobody: $(cat "$tmp/err")"; fi
# french: the open weights without asking for the gated ones; portuguese_24l: refused, saying why
"$bin" download --language french >"$tmp/out" 2>"$tmp/err" && grep -q "(no cloning)" "$tmp/out" && grep -q "languages/french/tokenizer.json" "$tmp/out" && ok "download --language french" || bad "download french: $(cat "$tmp/out" "$tmp/err")"
if "$bin" download --language portuguese_24l >/dev/null 2>"$tmp/err"; then bad "download portuguese_24l succeeded"; else
  grep -q "no source shows" "$tmp/err" && ok "download portuguese_24l: refused with the reason" || bad "portuguese_24l: $(cat "$tmp/err")"; fi

# a fresh cache and no network: a clear error, no output file
mkdir -p "$tmp/w2" && cd "$tmp/w2" || exit 1
if HF_HOME=$tmp/hf2 HF_ENDPOINT=http://127.0.0.1:1 "$bin" generate 2>"$tmp/err"; then bad "generate without network succeeded"; else
  grep -q "cannot reach" "$tmp/err" && ok "no network: clear error" || bad "no network: $(cat "$tmp/err")"; fi
[ ! -e tts_output.wav ] && ok "no output after a failure" || bad "output left after a failure"
# a cache folder that cannot be created
touch "$tmp/afile"
if HF_HOME=$tmp/afile/hf "$bin" generate 2>"$tmp/err"; then bad "unwritable cache succeeded"; else
  grep -q "cannot create the cache folder" "$tmp/err" && ok "unwritable cache: clear error" || bad "unwritable cache: $(cat "$tmp/err")"; fi

exit $fail
