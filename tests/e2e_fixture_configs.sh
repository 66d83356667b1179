#!/usr/bin/env bash
# End-to-end through the CLI, for every 3.3 fixture config (tiny/config*.yaml, full/config*.yaml):
#   - `pocket-tts fill --arch CONFIG` writes that config's synthetic weights (weights_path is null
#     in the fixture configs: pocket-fill-v1), and for the tiny configs they equal the reference's
#     own weight files tensor for tensor;
#   - `pocket-tts tokenize --config CONFIG` gives the reference's ids for each chunk's prepared
#     text (the config's tokenizer: tokenizer.json or .model);
#   - `pocket-tts generate --config CONFIG` of the case's text with EOS off (threshold 1e9, as the
#     fixtures ran) writes exactly sum(max_gen_len) frames plus the 200 ms tail: the 3.3 text
#     rules, the re-prepared chunks, their token counts and the sampler all reached through the
#     command line. The samples themselves are compared in the parity tests, which replay the
#     reference's noise (the CLI draws its own).
# Usage: e2e_fixture_configs.sh POCKET_TTS FIXTURES_DIR
set -u
bin=$1
fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

# size, config, reference weights (or -), case, voice, extra generate flags
cases=(
  "tiny config.yaml model.safetensors generate voice.safetensors"
  "tiny config_json_tokenizer.yaml model.safetensors generate voice.safetensors"
  "tiny config.yaml model.safetensors generate_short voice_short.safetensors"
  "tiny config_pad.yaml - generate_short_pad voice_short.safetensors"
  "tiny config_drifting.yaml model_drifting.safetensors generate_drifting voice_short.safetensors"
  "tiny config_flow_matching.yaml model_flow_matching.safetensors generate_flow_matching_steps4 voice_short.safetensors --sampler-decode-steps 4"
  "full config.yaml - generate voice.safetensors --threads 2"
  "full config_json_tokenizer.yaml - generate voice.safetensors --threads 2"
)

# the manifest's fields of one case: text, max_tokens, then per chunk "tokens|max_gen_len|text"
field() { # size case
  python3 - "$fx/$1/manifest.json" "$2" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["cases"][sys.argv[2]]
print(c["text"])
print(c["max_tokens"])
for ch in c["chunks"]:
    print(" ".join(map(str, ch["tokens"])) + "|" + str(ch["max_gen_len"]) + "|" + ch["text"])
EOF
}

same_tensors() { # ours theirs
  python3 - "$1" "$2" <<'EOF'
import json, struct, sys
def rd(p):
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    h.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in h.items()}
sys.exit(0 if rd(sys.argv[1]) == rd(sys.argv[2]) else 1)
EOF
}

for c in "${cases[@]}"; do
  read -r size cfg ref cs voice extra <<<"$c"
  name="$size/$cfg $cs"
  mapfile -t info < <(field "$size" "$cs")
  text=${info[0]}
  maxtok=${info[1]}
  w="$tmp/${size}_${cfg%.yaml}.safetensors"
  if [ ! -f "$w" ]; then
    "$bin" fill --arch "$fx/$size/$cfg" "$w" 2>"$tmp/err" || { bad "$name: fill: $(cat "$tmp/err")"; continue; }
    if [ "$ref" != - ]; then
      same_tensors "$w" "$fx/$size/$ref" && ok "$name: fill --arch equals $ref" ||
        bad "$name: fill --arch differs from $ref"
    fi
  fi
  frames=0
  for ((k = 2; k < ${#info[@]}; k++)); do
    IFS='|' read -r ids mgl ctext <<<"${info[$k]}"
    frames=$((frames + mgl))
    got=$("$bin" tokenize --config "$fx/$size/$cfg" "$ctext" 2>"$tmp/err")
    [ "$got" = "$ids" ] && ok "$name: chunk $((k - 1)) ids" ||
      bad "$name: chunk $((k - 1)) '$ctext': ids '$got', reference '$ids' $(cat "$tmp/err")"
  done
  out="$tmp/out.wav"
  # shellcheck disable=SC2086
  "$bin" generate --config "$fx/$size/$cfg" --weights "$w" --voice "$fx/$size/$voice" \
    --text "$text" --max-tokens "$maxtok" --eos-threshold 1e9 --seed 1 --quiet \
    --output-path "$out" $extra 2>"$tmp/err" || { bad "$name: generate: $(cat "$tmp/err")"; continue; }
  samples=$((($(stat -c %s "$out") - 44) / 2))
  want=$((frames * 1920 + 4800))
  [ "$samples" -eq "$want" ] && ok "$name: $frames frames" ||
    bad "$name: $samples samples, the reference's chunks give $want ($frames frames)"
done

# a config that contradicts the weights' sampler is refused, naming both
"$bin" generate --config "$fx/tiny/config_drifting.yaml" --weights "$fx/tiny/model.safetensors" \
  --voice "$fx/tiny/voice_short.safetensors" --text hi --quiet --output-path "$tmp/x.wav" 2>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && grep -q "drifting" "$tmp/err" && grep -q "lsd" "$tmp/err" && [ ! -e "$tmp/x.wav" ] &&
  ok "sampler mismatch refused: $(tail -c 160 "$tmp/err")" || bad "sampler mismatch: exit $rc, $(cat "$tmp/err")"

exit $fail
