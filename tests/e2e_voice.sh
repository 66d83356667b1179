#!/usr/bin/env bash
# End-to-end: `pocket-tts export-voice` on the tiny fixture model. The exported voice of
# audio/voice_24k.wav has the reference's 3.3 tensor names (cache, offset, pad), dtypes and shapes
# and its values (1e-4 per position, end_on_pause applied), loads in `generate` and gives the same audio as cloning from the WAV directly;
# --max-seconds / --no-truncate; an hour-long WAV is truncated to 30 s with bounded memory; clear
# errors (not audio, missing, too short, silent, a model without voice-cloning weights, an
# unwritable output) with no file left behind.
# Usage: e2e_voice.sh POCKET_TTS FIXTURES_DIR
set -u
bin=$1
fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
model=(--config "$fx/tiny/manifest.json" --weights "$fx/tiny/model.safetensors")

# Helpers in Python's standard library: safetensors headers and values, WAV files.
cat >"$tmp/h.py" <<'EOF'
import array, json, math, os, resource, struct, subprocess, sys, wave

def st(path):
    b = open(path, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8 + n])
    h.pop('__metadata__', None)
    return h, b[8 + n:]

def cmd_same_header(a, b):  # names, dtypes, shapes equal
    ha, _ = st(a); hb, _ = st(b)
    sa = {k: (v['dtype'], v['shape']) for k, v in ha.items()}
    sb = {k: (v['dtype'], v['shape']) for k, v in hb.items()}
    if sa != sb:
        print('header differs:', sa, sb); sys.exit(1)

def cmd_positions(a):
    h, _ = st(a)
    print(h['transformer.layers.0.self_attn/cache']['shape'][2])

def cmd_max_err(a, b):  # worst per-position rel L2 of keys / values rows, and offsets equal
    ha, da = st(a); hb, db = st(b)
    worst = 0.0
    for k, v in hb.items():
        o0, o1 = v['data_offsets']; p0, p1 = ha[k]['data_offsets']
        if v['dtype'] == 'I64':
            if da[p0:p1] != db[o0:o1]: print('offset differs', k); sys.exit(1)
            continue
        x = array.array('f', da[p0:p1]); y = array.array('f', db[o0:o1])
        d = v['shape'][3] * v['shape'][4]
        for r in range(len(y) // d):
            num = sum((x[r*d+i] - y[r*d+i]) ** 2 for i in range(d))
            den = sum(y[r*d+i] ** 2 for i in range(d))
            worst = max(worst, math.sqrt(num / max(den, 1e-30)))
    print('%.3g' % worst)

def cmd_wav(path, seconds, amp, rate):  # a tone (amp 0: silence)
    n = int(float(seconds) * int(rate))
    w = wave.open(path, 'wb'); w.setnchannels(1); w.setsampwidth(2); w.setframerate(int(rate))
    s = array.array('h', (int(float(amp) * 32767 * math.sin(2 * math.pi * 220 * i / int(rate)))
                          for i in range(n)))
    w.writeframes(s.tobytes()); w.close()

def cmd_hour_wav(path):  # 1 hour at 24 kHz: 31 s of tone, then a hole (sparse file)
    rate = 24000; frames = 3600 * rate
    cmd_wav(path, 31, 0.3, rate)
    with open(path, 'r+b') as f:
        f.seek(4); f.write(struct.pack('<I', 36 + 2 * frames))
        f.seek(40); f.write(struct.pack('<I', 2 * frames))
        f.truncate(44 + 2 * frames)

def cmd_strip(src, dst):  # the model without mimi.encoder*, mimi.downsample*
    h, data = st(src)
    keep = {k: v for k, v in h.items()
            if not k.startswith('mimi.encoder') and not k.startswith('mimi.downsample')}
    out, blobs, off = {}, [], 0
    for k, v in keep.items():
        b = data[v['data_offsets'][0]:v['data_offsets'][1]]
        out[k] = {'dtype': v['dtype'], 'shape': v['shape'], 'data_offsets': [off, off + len(b)]}
        blobs.append(b); off += len(b)
    hj = json.dumps(out).encode()
    hj += b' ' * ((8 - len(hj) % 8) % 8)
    with open(dst, 'wb') as f:
        f.write(struct.pack('<Q', len(hj))); f.write(hj)
        for b in blobs: f.write(b)

def cmd_maxrss(*argv):  # run a command, print the child's peak RSS in MB, exit with its status
    rc = subprocess.call(list(argv))
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
    sys.exit(rc)

globals()['cmd_' + sys.argv[1]](*sys.argv[2:])
EOF
py() { python3 "$tmp/h.py" "$@"; }

# export: message with the time taken; the reference's layout and values
"$bin" export-voice "$fx/audio/voice_24k.wav" "$tmp/v.safetensors" "${model[@]}" 2>"$tmp/err" ||
  bad "export-voice: $(cat "$tmp/err")"
[ -s "$tmp/v.safetensors" ] && ok "voice file written" || bad "no voice file"
grep -q "exported to .* in [0-9]* ms" "$tmp/err" && ok "time taken printed" || bad "no timing line: $(cat "$tmp/err")"
py same_header "$tmp/v.safetensors" "$fx/tiny/voice.safetensors" && ok "names, dtypes, shapes as the reference" || bad "header differs"
err=$(py max_err "$tmp/v.safetensors" "$fx/tiny/voice.safetensors")
python3 -c "import sys; sys.exit(0 if float('$err') <= 1e-4 else 1)" && ok "values vs reference: max rel L2 $err" || bad "values differ: $err"
ls "$tmp" | grep -q '\.tmp' && bad "temporary file left"
"$bin" export-voice "$fx/audio/voice_24k.wav" "$tmp/q.safetensors" "${model[@]}" --quiet 2>"$tmp/err2" &&
  [ ! -s "$tmp/err2" ] && cmp -s "$tmp/v.safetensors" "$tmp/q.safetensors" && ok "--quiet: silent, same file" || bad "--quiet: $(cat "$tmp/err2")"

# options: --max-seconds 1 keeps 24000 samples; end_on_pause cuts the quiet end of that second
# (at most 21120 samples + 1920 zeros: 12 frames + BOS); --no-truncate the whole clip
"$bin" export-voice "$fx/audio/voice_24k.wav" "$tmp/one.safetensors" "${model[@]}" --max-seconds 1 -q &&
  [ "$(py positions "$tmp/one.safetensors")" = 13 ] && ok "--max-seconds 1: 13 positions" || bad "--max-seconds"
"$bin" export-voice "$fx/audio/voice_24k.wav" "$tmp/all.safetensors" "${model[@]}" --no-truncate -q &&
  cmp -s "$tmp/all.safetensors" "$tmp/v.safetensors" && ok "--no-truncate on a 5.5 s clip: same voice" || bad "--no-truncate"
"$bin" export-voice "$fx/audio/voice_24k.wav" "$tmp/x.safetensors" "${model[@]}" --no-truncate --max-seconds 3 2>/dev/null
[ $? -eq 2 ] && ok "contradicting options: usage error" || bad "contradicting options accepted"
"$bin" export-voice "$fx/audio/voice_24k.wav" 2>/dev/null
[ $? -eq 2 ] && ok "missing output: usage error" || bad "missing output accepted"

# the exported file in generate; the same audio as cloning from the WAV in generate
gen=(generate "${model[@]}" --text "Hello world. This is a test." --seed 5 --eos-threshold 1e9 -q)
"$bin" "${gen[@]}" --voice "$tmp/v.safetensors" -o "$tmp/a.wav" && [ -s "$tmp/a.wav" ] &&
  ok "generate loads the exported voice" || bad "generate with the exported voice"
"$bin" "${gen[@]}" --voice "$fx/audio/voice_24k.wav" -o "$tmp/b.wav" &&
  cmp -s "$tmp/a.wav" "$tmp/b.wav" && ok "generate --voice WAV = --voice exported file" || bad "audio differs"
# 44.1 kHz stereo clones too
"$bin" "${gen[@]}" --voice "$fx/audio/voice_44k_stereo.wav" -o "$tmp/c.wav" && [ -s "$tmp/c.wav" ] &&
  ok "generate --voice 44.1 kHz stereo WAV" || bad "44.1 kHz stereo"

# an hour-long WAV: 30 s used (720000 samples + end_on_pause's 1920 zeros: 376 frames + BOS), peak memory far below the decoded file (345 MB)
py hour_wav "$tmp/hour.wav"
rss=$(py maxrss "$bin" export-voice "$tmp/hour.wav" "$tmp/h.safetensors" "${model[@]}" -q)
[ $? -eq 0 ] && [ "$(py positions "$tmp/h.safetensors")" = 377 ] && ok "1-hour WAV: 30 s used" || bad "1-hour WAV"
[ "$rss" -lt 100 ] && ok "1-hour WAV: peak RSS $rss MB" || bad "1-hour WAV: peak RSS $rss MB"
rm -f "$tmp/hour.wav"

# errors: clear message, exit status 1, no output file
expect_error() { # description pattern args...
  local what=$1 pat=$2; shift 2
  rm -f "$tmp/x.safetensors"
  if "$bin" export-voice "$@" 2>"$tmp/e"; then bad "$what: succeeded"; return; fi
  grep -q -- "$pat" "$tmp/e" && ok "$what: $(head -c 200 "$tmp/e")" || bad "$what: message was: $(cat "$tmp/e")"
  ls "$tmp" | grep -q '^x\.safetensors' && bad "$what: left a file"
}
expect_error "not audio" "not an audio file" "$fx/text_cases.json" "$tmp/x.safetensors" "${model[@]}"
expect_error "missing audio" "cannot open" "$tmp/none.wav" "$tmp/x.safetensors" "${model[@]}"
py wav "$tmp/short.wav" 0.05 0.5 24000
expect_error "shorter than one frame" "too short" "$tmp/short.wav" "$tmp/x.safetensors" "${model[@]}"
py wav "$tmp/silent.wav" 2 0 24000
expect_error "silent clip" "the audio is silent" "$tmp/silent.wav" "$tmp/x.safetensors" "${model[@]}"
expect_error "unwritable output" "no-such-dir" "$fx/audio/voice_24k.wav" "$tmp/no-such-dir/x.safetensors" "${model[@]}"
py strip "$fx/tiny/model.safetensors" "$tmp/noenc.safetensors"
noenc=(--config "$fx/tiny/manifest.json" --weights "$tmp/noenc.safetensors")
nomsg="this checkpoint has no voice-cloning weights: use a preset voice or the model with voice cloning"
expect_error "model without voice cloning" "$nomsg" "$fx/audio/voice_24k.wav" "$tmp/x.safetensors" "${noenc[@]}"
# ... which still generates from a voice file, exactly as the complete model
"$bin" generate "${noenc[@]}" --voice "$fx/tiny/voice.safetensors" --text "Hi there." --seed 2 -q -o "$tmp/n1.wav" &&
"$bin" generate "${model[@]}" --voice "$fx/tiny/voice.safetensors" --text "Hi there." --seed 2 -q -o "$tmp/n2.wav" &&
  cmp -s "$tmp/n1.wav" "$tmp/n2.wav" && ok "model without voice cloning generates from a voice file" || bad "no-encoder model generation"
if "$bin" generate "${noenc[@]}" --voice "$fx/audio/voice_24k.wav" --text "Hi." -q -o "$tmp/n3.wav" 2>"$tmp/e"; then
  bad "generate cloned without encoder weights"
else
  grep -q "$nomsg" "$tmp/e" && ok "generate --voice WAV without encoder weights: clear error" || bad "message was: $(cat "$tmp/e")"
fi

exit $fail
