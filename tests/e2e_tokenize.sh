#!/usr/bin/env bash
# e2e_tokenize.sh - `pocket-tts tokenize` end to end: ids, --pieces and stdin input for the first
# case of tokenizer/cases.json with sp_unigram.model (expected values copied from that fixture,
# the SentencePiece library's output), plus the usage errors. Run by ctest as
#   bash e2e_tokenize.sh <pocket-tts binary> <fixtures dir>
set -u
bin=$1
fx=$2
model="$fx/tokenizer/sp_unigram.model"
fail=0

check() { # name expected actual
    if [ "$2" != "$3" ]; then
        echo "FAIL $1: expected [$2] got [$3]" >&2
        fail=1
    else
        echo "ok   $1"
    fi
}

text="Hello world. I am Kyutai's Pocket TTS."
want_ids="491 120 251 4 1896 6 417 4 240 239 39 248 1195 10 5 184 57 345 247 2074 60 6"
want_pieces="▁H el lo ▁ world . ▁I ▁ am ▁K y ut ai ' s ▁P o ck et ▁TT S ."

check ids "$want_ids" "$("$bin" tokenize --tokenizer "$model" "$text")"
# The same text given as several arguments (joined with spaces).
check args "$want_ids" "$("$bin" tokenize --tokenizer "$model" Hello world. I am "Kyutai's" Pocket TTS.)"
check pieces "$want_pieces" "$("$bin" tokenize --tokenizer="$model" --pieces "$text")"
check stdin "$want_ids" "$(printf '%s\n' "$text" | "$bin" tokenize --tokenizer "$model" -)"
# Unknown characters: one merged <unk> (id 0) whose piece is the surface.
check unk "869 57 1824 4 0 15" "$("$bin" tokenize --tokenizer "$model" "emoji 😀👍🏽 and")"

"$bin" tokenize --help | grep -q -- "--tokenizer FILE" || { echo "FAIL help" >&2; fail=1; }
# Without --tokenizer: the language's tokenizer (english), from the cache only when offline.
nohf=$(mktemp -d)
HF_HUB_OFFLINE=1 HF_HOME="$nohf" "$bin" tokenize "$text" 2>"$nohf/err"; rc=$?
check "no tokenizer, offline, empty cache exits 1" 1 "$rc"
grep -q "HF_HUB_OFFLINE" "$nohf/err" || { echo "FAIL offline message: $(cat "$nohf/err")" >&2; fail=1; }
rm -rf "$nohf"
"$bin" tokenize 2>/dev/null; rc=$?
check "no text exits 2" 2 "$rc"
# --config: the config's tokenizer_path, resolved against the config's folder
check config "243 24 89 139 38 24 12 6" "$("$bin" tokenize --config "$fx/tiny/manifest.json" "Hello world.")"
"$bin" tokenize --tokenizer "$fx/does_not_exist.model" x 2>/dev/null; rc=$?
check "missing model exits 1" 1 "$rc"
"$bin" tokenize --tokenizer "$fx/tokenizer/cases.json" x 2>/dev/null; rc=$?
check "not a model exits 1" 1 "$rc"

exit $fail
