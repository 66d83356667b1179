#!/usr/bin/env python3
"""End-to-end tests of the OpenAI side of `pocket-tts serve` on the tiny fixture model.

Ogg/Opus streams page by page: the first audio page arrives while the generation still runs
(/metrics shows it active), the pages are valid Ogg (CRC, sequence, granules rising, the last
one's end of stream) and the last granule trims the output to the exact PCM length. AAC is a
chain of ADTS frames (AAC-LC, 24 kHz, mono) covering the audio. The voice
map: the default table is listed, a --voice-map file replaces entries, a voices-dir voice named
like an OpenAI voice wins, a bad map file stops the server at start with a clear message.
Per-request options on /v1/audio/speech and /tts: a seed gives equal bytes twice, another seed
other bytes, invalid values a 400 naming the member. SSE and instructions refusals.

Usage: test_openai.py POCKET_TTS FIXTURES_DIR
"""
import atexit
import http.client
import json
import os
import shutil
import struct
import sys
import tempfile
import time
import uuid

from e2e_util import check, failures, finish, start_server

BIN, FX = sys.argv[1], sys.argv[2]
# PTTS_TEST_AAC=0 (set by tests/CMakeLists.txt for a -DPTTS_AAC=OFF build): no aac writer
HAVE_AAC = os.environ.get("PTTS_TEST_AAC", "1") != "0"
MODEL = ["--config", f"{FX}/tiny/manifest.json", "--weights", f"{FX}/tiny/model.safetensors"]

tmp = tempfile.mkdtemp(prefix="ptts_oai_")
vdir = os.path.join(tmp, "voices")
os.mkdir(vdir)
shutil.copy(f"{FX}/tiny/voice.safetensors", os.path.join(vdir, "tiny.safetensors"))
# a voices-dir voice named like an OpenAI voice: it wins over the map
shutil.copy(f"{FX}/tiny/voice_short.safetensors", os.path.join(vdir, "echo.safetensors"))
vmap = os.path.join(tmp, "map.json")
with open(vmap, "w") as f:
    json.dump({"alloy": "tiny", "echo": "alba", "my-voice": "tiny"}, f)
procs = []


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)


atexit.register(cleanup)

# a bad map file: the server refuses to start and says why
for bad, what in [('["alloy"]', "not a JSON object"), ('{"alloy": 3}', "must map to"),
                  ('{"../x": "tiny"}', "not a voice name"), ("{", "not a JSON object")]:
    path = os.path.join(tmp, "bad.json")
    with open(path, "w") as f:
        f.write(bad)
    p, port_, log = start_server([BIN, "serve", *MODEL, "--voices-dir", vdir, "--voice", "tiny",
                                  "--voice-map", path, "--host", "127.0.0.1", "--port", "0"],
                                 os.path.join(tmp, "bad.log"), wait_s=15)
    procs.append(p)
    p.wait(timeout=15)
    check(port_ is None and p.returncode != 0 and what in log and "--voice-map" in log,
          f"--voice-map {bad}: start refused ({log.strip().splitlines()[-1] if log.strip() else ''})")
p, port_, log = start_server([BIN, "serve", *MODEL, "--voice-map", os.path.join(tmp, "none.json"),
                              "--host", "127.0.0.1", "--port", "0"], os.path.join(tmp, "bad.log"))
procs.append(p)
p.wait(timeout=15)
check(port_ is None and "cannot open" in log, "--voice-map of a missing file: start refused")

# no EOS: each chunk runs to its length limit, so a longer text generates for a while
srv, port, _ = start_server(
    [BIN, "serve", *MODEL, "--temperature", "0", "--eos-threshold", "1e9", "--voices-dir", vdir,
     "--voice", "tiny", "--voice-map", vmap, "--host", "127.0.0.1", "--port", "0",
     "--client-buffer", "600"],
    os.path.join(tmp, "server.log"), wait_s=15)
procs.append(srv)
if not check(port is not None, "server starts with --voice-map and prints its port"):
    sys.exit(1)


def request(method, path, body=None, headers=None, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def speech(payload, **kw):
    return request("POST", "/v1/audio/speech", json.dumps(payload).encode(),
                   {"Content-Type": "application/json"}, **kw)


def tts(fields):
    b = uuid.uuid4().hex
    out = b""
    for k, v in fields.items():
        out += f"--{b}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n".encode()
    out += f"--{b}--\r\n".encode()
    return request("POST", "/tts", out, {"Content-Type": f"multipart/form-data; boundary={b}"})


def error_of(data):
    try:
        return json.loads(data)["error"]
    except (ValueError, KeyError, TypeError):
        return None


def active_streams():
    _, _, data = request("GET", "/metrics")
    for line in data.decode().splitlines():
        if line.startswith("ptts_active_streams "):
            return float(line.split()[1])
    return None


# ---- Ogg/Opus, page by page
def ogg_crc(page):
    """Ogg's CRC-32 (polynomial 0x04c11db7, no reflection, zero init) of a page whose CRC field
    is zeroed."""
    crc = 0
    for byte in page:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7 if crc & 0x80000000 else crc << 1) & 0xFFFFFFFF
    return crc


def read_page(stream):
    """(header type, granule, sequence, body, crc ok) of the next page read from stream, or
    None at the end."""
    h = stream.read(27)
    if len(h) < 27:
        return None
    if h[:4] != b"OggS":
        raise ValueError(f"not an Ogg page: {h[:4]!r}")
    segs = stream.read(h[26])
    body = stream.read(sum(segs))
    raw = bytearray(h + segs + body)
    crc = struct.unpack("<I", raw[22:26])[0]
    raw[22:26] = b"\0\0\0\0"
    return h[5], struct.unpack("<q", h[6:14])[0], struct.unpack("<I", h[18:22])[0], body, \
        ogg_crc(bytes(raw)) == crc


TEXT = "The audio should reach the client page by page while the model still generates. " * 4
c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
c.request("POST", "/v1/audio/speech",
          json.dumps({"input": TEXT, "voice": "tiny", "response_format": "opus"}),
          {"Content-Type": "application/json"})
r = c.getresponse()
check(r.status == 200 and r.getheader("Content-Type") == "audio/ogg", f"opus: {r.status} audio/ogg")
pages, active_at_first, t_first = [], None, None
while True:
    pg = read_page(r)
    if pg is None:
        break
    pages.append(pg)
    if len(pages) == 3:  # OpusHead, OpusTags, then the first audio
        t_first = time.time()
        active_at_first = active_streams()
t_end = time.time()
c.close()
check(active_at_first == 1, f"the first audio page came while the generation ran (active: {active_at_first})")
check(len(pages) > 10, f"{len(pages)} pages, {t_end - t_first:.2f} s from the first audio page to the end")
check(all(p[4] for p in pages), "every page's CRC is right")
check([p[2] for p in pages] == list(range(len(pages))), "page sequence numbers 0, 1, ...")
head = pages[0][3]
check(pages[0][0] == 2 and head[:8] == b"OpusHead" and head[9] == 1 and
      struct.unpack("<I", head[12:16])[0] == 24000, "first page: BOS, OpusHead, mono, input rate 24000")
check(pages[1][3][:8] == b"OpusTags" and pages[1][1] == 0, "second page: OpusTags")
pre_skip = struct.unpack("<H", head[10:12])[0]
grans = [p[1] for p in pages[2:]]
check(all(a <= b for a, b in zip(grans, grans[1:])), "granule positions never fall")
check(pages[-1][0] & 4 and not any(p[0] & 4 for p in pages[:-1]), "only the last page ends the stream")
st, _, pcm = speech({"input": TEXT, "voice": "tiny", "response_format": "pcm"})
# granules count 48 kHz samples: twice the 24 kHz PCM's
check(st == 200 and grans[-1] - pre_skip == 2 * (len(pcm) // 2),
      f"the last granule trims to the PCM length ({(grans[-1] - pre_skip) / 2} = {len(pcm) // 2} samples)")
st, _, whole = speech({"input": TEXT, "voice": "tiny", "response_format": "opus", "stream": False})
check(st == 200 and whole[:4] == b"OggS" and len(whole) > 1000, "opus with stream false: one Ogg file")

# ---- AAC: ADTS frames (sync, AAC-LC, 24 kHz, mono) chained by their lengths to the end; a
# server built without its aac writer (cmake -DPTTS_AAC=OFF) refuses aac by name
st, h, aac = speech({"input": TEXT, "voice": "tiny", "response_format": "aac"})
if HAVE_AAC:
    i, frames, ok = 0, 0, st == 200 and h.get("content-type") == "audio/aac"
    while ok and i + 7 <= len(aac):
        b0, b1, b2, b3, b4, b5 = aac[i:i + 6]
        ok = b0 == 0xFF and b1 & 0xF6 == 0xF0 and b2 >> 6 == 1 and (b2 >> 2) & 15 == 6 and \
            ((b2 & 1) << 2 | b3 >> 6) == 1
        i += (b3 & 3) << 11 | b4 << 3 | b5 >> 5
        frames += 1
    check(ok and i == len(aac) and frames * 1024 >= len(pcm) // 2,
          f"aac: {frames} ADTS frames (AAC-LC 24 kHz mono) cover the {len(pcm) // 2} samples")
else:
    e = error_of(aac)
    check(st == 400 and e and e.get("param") == "response_format",
          f"aac without the aac writer: {st}, {e and e['message']}")
st, _, d = speech({"input": "x", "voice": "tiny", "response_format": "aiff"})
e = error_of(d)
check(st == 400 and e and "aac, flac, wav, pcm" in e["message"] and "writes wav, pcm, flac, opus" in e["message"],
      f"an unknown format's 400 lists OpenAI's and this server's formats: {e and e['message']}")

# ---- the voice map
st, _, d = request("GET", "/v1/audio/voices")
vj = json.loads(d)
oai = {v["id"]: v.get("voice") for v in vj["voices"] if v.get("source") == "openai"}
check(oai.get("alloy") == "tiny" and oai.get("my-voice") == "tiny", "the map file's entries are listed")
check(all(oai.get(n) for n in ["ash", "ballad", "coral", "fable", "onyx", "nova", "sage", "shimmer",
                               "verse", "marin", "cedar"]),
      f"the default table's OpenAI voices are listed ({len(oai)} names)")
check(oai.get("onyx") == "javert" and oai.get("nova") == "cosette", "default table: onyx javert, nova cosette")
check(all(f in vj["formats"] for f in ["wav", "pcm", "flac", "opus", "mp3"] + ["aac"] * HAVE_AAC)
      and ("aac" in vj["formats"]) == HAVE_AAC, f"formats: {vj['formats']}")
SHORT = "Hello from the voice map test."
st, _, ref = speech({"input": SHORT, "voice": "tiny", "response_format": "pcm"})
st2, _, d2 = speech({"input": SHORT, "voice": "alloy", "response_format": "pcm"})
check(st == 200 and st2 == 200 and d2 == ref, "alloy speaks as the map file's voice")
st, _, d3 = speech({"input": SHORT, "voice": "my-voice", "response_format": "pcm"})
check(st == 200 and d3 == ref, "a name the map file adds")
st, _, d4 = speech({"input": SHORT, "voice": "echo", "response_format": "pcm"})
check(st == 200 and d4 != ref and len(d4) > 0, "the voices-dir voice 'echo' wins over the map's 'alba'")
st, _, d5 = speech({"input": SHORT, "voice": {"id": "alloy"}, "response_format": "pcm"})
check(st == 200 and d5 == ref, "voice {\"id\": \"alloy\"}")

# ---- per-request options
opts = {"input": SHORT, "voice": "tiny", "response_format": "pcm", "temperature": 0.9,
        "eos_threshold": -4, "frames_after_eos": 2}
a = speech({**opts, "seed": 1234})[2]
b = speech({**opts, "seed": 1234})[2]
c2 = speech({**opts, "seed": 99})[2]
check(len(a) > 0 and a == b and a != c2, "speech: the same seed twice gives equal bytes, another seed others")
st, _, d6 = speech({"input": SHORT, "voice": "tiny", "response_format": "pcm", "decode_steps": 4})
check(st == 200 and len(d6) > 0, "speech: decode_steps 4")
t1, t2, t3 = (tts({"text": SHORT, "temperature": "0.9", "seed": s})[2] for s in ("5", "5", "6"))
check(len(t1) > 44 and t1 == t2 and t1 != t3, "/tts: the same seed field twice gives equal bytes")
for member, value in [("temperature", 2.5), ("temperature", "hot"), ("seed", -1), ("seed", 1.5),
                      ("eos_threshold", 30), ("frames_after_eos", 101), ("decode_steps", 0),
                      ("decode_steps", 65)]:
    st, _, d = speech({"input": SHORT, "voice": "tiny", member: value})
    e = error_of(d)
    check(st == 400 and e and e.get("param") == member and member in e.get("message", ""),
          f"speech {member}={value!r}: 400 naming it")
for member, value in [("temperature", "warm"), ("seed", "0x10"), ("seed", "inf"),
                      ("decode_steps", "100"), ("frames_after_eos", "")]:
    st, _, d = tts({"text": SHORT, member: value})
    e = error_of(d)
    check(st == 400 and e and e.get("param") == member, f"/tts {member}={value!r}: 400 naming it")

# ---- SSE, instructions and formats refused clearly
for payload, param in [({"stream_format": "sse", "response_format": "opus"}, "stream_format"),
                       ({"stream_format": "events"}, "stream_format"),
                       ({"stream_format": "sse", "response_format": "aac"},
                        "stream_format" if HAVE_AAC else "response_format"),
                       ({"response_format": "aiff"}, "response_format"),
                       ({"instructions": 5}, "instructions"),
                       ({"instructions": "x" * 4097}, "instructions"),
                       ({"instructions": "bell \u0007"}, "instructions")]:
    st, _, d = speech({"input": SHORT, "voice": "tiny", **payload})
    e = error_of(d)
    check(st == 400 and e and e.get("param") == param, f"{payload!r:.60}: 400 param {param}")
st, h, d = speech({"input": SHORT, "voice": "tiny", "response_format": "pcm", "stream_format": "sse",
                   "stream": False, "instructions": "calm"})
events = [json.loads(line[6:]) for line in d.decode().split("\n\n") if line.startswith("data: ")]
check(st == 200 and h.get("content-type") == "text/event-stream" and events and
      events[-1]["type"] == "speech.audio.done" and
      all(e["type"] == "speech.audio.delta" for e in events[:-1]),
      f"sse (stream false ignored): {len(events) - 1} deltas, then done")
st, _, d = request("GET", "/v1/models")
check(st == 200 and all("ignored" in m.get("instructions", "") for m in json.loads(d)["data"]),
      "/v1/models says instructions are ignored")
check(request("GET", "/health")[0] == 200, "the server is healthy afterwards")

finish()
