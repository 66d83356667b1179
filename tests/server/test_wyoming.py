#!/usr/bin/env python3
"""End-to-end tests of the Wyoming server (`pocket-tts serve --wyoming-port`) on the tiny fixture
model over loopback, with the client of wyoming_client.py (written from the protocol).

describe -> info; synthesize = `pocket-tts generate` at temperature 0 (s16 samples identical);
streaming synthesis word by word = the chunks the streaming rule predicts, each spoken as it
would be alone; the idle flush after a sentence end; the duplicate synthesize ignored; 10,000
tiny chunks; concurrent connections and the connection limit; bad input (malformed header, huge
data_length, a header line past the limit, invalid UTF-8, a control character, unknown event,
unknown voice, text past the limit) answered with an error event (and a close when the framing
is lost or the synthesis ends); a half-close after a request (the whole answer) and a
disconnect mid-utterance (generation stops); the server healthy afterwards (HTTP /health and a
new describe); `pocket-tts wyoming` alone.

Usage: test_wyoming.py POCKET_TTS FIXTURES_DIR
"""
import atexit
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from e2e_util import check, failures, finish, start_server, watch_log
from wyoming_client import Client, encode

BIN, FX = sys.argv[1], sys.argv[2]
MODEL = ["--config", f"{FX}/tiny/manifest.json", "--weights", f"{FX}/tiny/model.safetensors"]
# no EOS: every chunk runs to its length limit (a long text streams for a while)
GEN = ["--temperature", "0", "--eos-threshold", "1e9"]
IDLE_MS = 300

tmp = tempfile.mkdtemp(prefix="ptts_wy_")
vdir = os.path.join(tmp, "voices")
os.mkdir(vdir)
shutil.copy(f"{FX}/tiny/voice.safetensors", os.path.join(vdir, "tiny.safetensors"))
LOG = os.path.join(tmp, "server.log")
srv, port, log = start_server(
    [BIN, "serve", *MODEL, *GEN, "--voices-dir", vdir, "--voice", "tiny", "--host", "127.0.0.1",
     "--port", "0", "--wyoming-port", "0", "--wyoming-idle-flush", str(IDLE_MS),
     "--max-concurrent", "4", "--max-text-chars", "20000", "--max-connections", "16"], LOG,
    wait_s=15)


def cleanup():
    if srv.poll() is None:
        srv.kill()
        srv.wait()
    shutil.rmtree(tmp, ignore_errors=True)


atexit.register(cleanup)
m = re.search(r"Wyoming on tcp://[^:]+:(\d+)", log)
if not check(port is not None and m is not None, "server starts and prints both ports"):
    print(log)
    sys.exit(1)
WPORT = int(m.group(1))


def client():
    return Client("127.0.0.1", WPORT, timeout=60)


def generate(text):
    r = subprocess.run([BIN, "generate", *MODEL, *GEN, "--voice", f"{FX}/tiny/voice.safetensors",
                        "--text", text, "-q", "--output-raw"], check=True, capture_output=True)
    return r.stdout


def http_get(path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", path)
    r = c.getresponse()
    d = r.read()
    c.close()
    return r.status, d


def metrics():
    vals = {}
    for line in http_get("/metrics")[1].decode().splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            vals[k] = float(v)
    return vals


def healthy(what):
    st, d = http_get("/health")
    c = client()
    t, info, _ = c.describe()
    c.close()
    check(st == 200 and t == "info", f"healthy after {what} (HTTP /health, Wyoming describe)")


def error_code(events):
    errs = [d for t, d in events if t == "error"]
    return errs[0].get("code") if errs and errs[0].get("text") else None


# ---- describe -> info
c = client()
t, info, _ = c.describe()
progs = info.get("tts") or [{}]
p = progs[0]
voices = {v.get("name"): v for v in p.get("voices", [])}
check(t == "info" and p.get("name") and p.get("installed") is True and p.get("version")
      and p.get("attribution", {}).get("name") and p.get("description"), "describe -> info program")
check(p.get("supports_synthesize_streaming") is True, "info: supports_synthesize_streaming")
check("tiny" in voices and voices["tiny"].get("languages") == ["en"]
      and voices["tiny"].get("attribution", {}).get("name"), "info: the voices-dir voice, languages en")
check(len(voices) > 1, f"info lists the presets too ({len(voices)} voices)")

# ---- synthesize = generate
TEXT = "Hello world. This is a test."
ref = generate(TEXT)
events, pcm, _ = c.synthesize(TEXT, "tiny")
types = [e[0] for e in events]
start = events[0][1] if events else {}
check(types[0] == "audio-start" and types[-1] == "audio-stop"
      and set(types[1:-1]) == {"audio-chunk"}, "synthesize: audio-start, audio-chunk..., audio-stop")
check(start.get("rate") == 24000 and start.get("width") == 2 and start.get("channels") == 1,
      "audio-start: 24000 Hz, width 2, mono")
check(len(ref) > 0 and pcm == ref, f"synthesize = generate ({len(pcm)} vs {len(ref)} bytes)")
events, pcm2, _ = c.synthesize(TEXT)
check(pcm2 == ref, "synthesize without a voice: the default voice (tiny)")
c.close()


# ---- streaming word by word: each complete sentence is a chunk once the next word comes
def read_samples(c, pcm, want_bytes, events):
    while len(pcm) < want_bytes:
        t, d, p = c.read_event()
        events.append(t)
        if t == "audio-chunk":
            pcm += p
        if t == "error":
            break
    return pcm


words = ["Hello ", "world.", " This", " is", " a", " test.", " Pi", " is", " 3.", "14", " ok.",
         " Bye"]
chunks = ["Hello world.", "This is a test.", "Pi is 3.14 ok.", "Bye"]
TAIL = 9600  # the 200 ms of silence after an utterance (generate's, and the stream's at its end)
alone = [generate(x)[:-TAIL] for x in chunks]
completes = {2: 0, 6: 1, 11: 2}  # the word that completes chunk k (the next one after its end)
c = client()
c.stream_start("tiny")
pcm, evs, ok = b"", [], True
for i, w in enumerate(words):
    c.chunk(w)
    if i in completes:
        pcm = read_samples(c, pcm, sum(len(a) for a in alone[:completes[i] + 1]), evs)
c.send("synthesize", {"text": "".join(words)})  # Home Assistant's duplicate: ignored
c.send("synthesize-stop")
while True:
    t, d, p = c.read_event()
    evs.append(t)
    if t == "audio-chunk":
        pcm += p
    if t in ("synthesize-stopped", "error"):
        break
check(evs[0] == "audio-start" and evs.count("audio-start") == 1 and evs[-2:] == ["audio-stop",
      "synthesize-stopped"], "streaming: audio-start .. audio-stop, synthesize-stopped")
check(pcm == b"".join(alone) + bytes(TAIL), f"streaming word by word = the predicted chunks spoken alone "
      f"({len(pcm)} vs {sum(len(a) for a in alone) + TAIL} bytes)")

# the idle flush: a sentence end with nothing after it is spoken after IDLE_MS
one = generate("Hello world.")
c.stream_start("tiny")
c.chunk("Hello ")
c.chunk("world.")
t0 = time.time()
pcm = read_samples(c, b"", len(one) - TAIL, [])
dt = time.time() - t0
check(pcm == one[:-TAIL] and dt >= IDLE_MS / 1000 * 0.9, f"idle flush: the sentence spoken after {dt:.2f} s "
      "with no more text")
c.send("synthesize-stop")
events, rest, _ = c.audio("synthesize-stopped")
check(rest == bytes(TAIL) and [e[0] for e in events] == ["audio-chunk", "audio-stop",
                                                         "synthesize-stopped"],
      "stop after the flushed sentence: audio-stop, synthesize-stopped")

# 10,000 tiny chunks (one byte or empty) = the text in one piece
s = "Hello world."
pieces = []
for i in range(10000):
    pieces.append(s[i // 800] if i % 800 == 0 and i // 800 < len(s) else "")
events, pcm, _ = c.stream(pieces, "tiny")
check(pcm == one and events[-1][0] == "synthesize-stopped", "10,000 tiny chunks = the whole text")

c.close()

# streaming text past --max-text-chars: an error, then the close (the synthesis is over)
c = client()
c.stream_start("tiny")
try:
    for _ in range(6000):
        c.chunk("abc ")
    c.send("synthesize-stop")
except OSError:
    pass  # the server may have closed while the rest was being sent
evs = []
try:
    while True:
        evs.append(c.read_event()[:2])
except (EOFError, OSError):
    pass
check([e[0] for e in evs] == ["error"] and error_code(evs) == "text_too_long",
      f"streamed text past the limit: one error ({error_code(evs)}), then the close")
c.close()
healthy("streaming")

# ---- concurrent connections (each equals its own generate)
texts = [f"Sentence number {i} for the concurrency test." for i in range(6)]
refs = [generate(x) for x in texts]
res = [None] * 6


def worker(i):
    try:
        cc = client()
        if i % 2:
            res[i] = cc.stream([w + " " for w in texts[i].split(" ")], "tiny")[1]
        else:
            res[i] = cc.synthesize(texts[i], "tiny")[1]
        cc.close()
    except (OSError, EOFError, ValueError) as e:
        res[i] = repr(e)


ths = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
for th in ths:
    th.start()
for th in ths:
    th.join()
check(all(r == x for r, x in zip(res, refs)), "6 concurrent connections (3 streaming) = generate")

# ---- bad input
def closed_with_error(raw, code, what):
    cc = client()
    cc.send_raw(raw)
    try:
        t, d, _ = cc.read_event()
    except (EOFError, ConnectionError, ValueError):
        t, d = None, {}
    check(t == "error" and d.get("code") == code and d.get("text") and cc.closed(),
          f"{what}: error {d.get('code')} and the connection closed")
    cc.close()


closed_with_error(b"this is not json\n", "malformed_event", "malformed header")
closed_with_error(b'{"type": "synthesize", "data_length": 1000000000000}\n', "malformed_event",
                  "huge data_length")
closed_with_error(b'{"type": "synthesize", "payload_length": -5}\n', "malformed_event",
                  "negative payload_length")
closed_with_error(b'{"type": "synthesize", "data": {"text": "\xff\xfe"}}\n', "malformed_event",
                  "invalid UTF-8 in the header")
closed_with_error(b'{"type": "synthesize", "data_length": 4}\n\xc3\x28{}', "malformed_event",
                  "invalid UTF-8 in the data")
closed_with_error(b'{"type": "' + b"x" * 70000, "malformed_event", "a header line past the limit")
closed_with_error(b'{"data": {}}\n', "malformed_event", "no type")

# errors in what a connection asks for: the connection goes on
c = client()
c.send("transcribe", {"text": "x"})
t, d, _ = c.read_event()
check(t == "error" and d.get("code") == "unknown_event", "unknown event: an error event")
check(c.describe()[0] == "info", "the connection goes on after an unknown event")
c.chunk("stray")
check(error_code([c.read_event()[:2]]) == "not_streaming", "synthesize-chunk without start: an error")
c.send("synthesize-stop")
check(error_code([c.read_event()[:2]]) == "not_streaming", "synthesize-stop without start: an error")
c.stream_start("tiny")
c.send("synthesize-start", {})
check(error_code([c.read_event()[:2]]) == "already_streaming", "a second synthesize-start: an error")
c.chunk("Hello ")
c.chunk("world.")
c.send("synthesize-stop")
events, pcm, _ = c.audio("synthesize-stopped")
check(pcm == one and events[-1][0] == "synthesize-stopped", "the stream goes on after it")
events, pcm, _ = c.synthesize(TEXT, "tiny")
check(pcm == ref, "the connection still synthesizes after the errors")
c.close()


# errors that end a synthesis: the error event, then the close (as wyoming-piper does; Home
# Assistant waits for audio-stop and learns of the failure at the close)
def fails(send, code, what):
    cc = client()
    send(cc)
    try:
        t, d, _ = cc.read_event()
    except (EOFError, ConnectionError, ValueError):
        t, d = None, {}
    check(t == "error" and d.get("code") == code and d.get("text") and cc.closed(),
          f"{what}: error {d.get('code')}, then the close")
    cc.close()


fails(lambda cc: cc.send("synthesize", {"text": "Hello", "voice": {"name": "nope"}}),
      "unknown_voice", "unknown voice")
fails(lambda cc: cc.stream_start("nope"), "unknown_voice", "unknown voice at synthesize-start")
fails(lambda cc: cc.send("synthesize", {"text": "Hi", "voice": "tiny"}), "invalid_voice",
      "a voice that is no object")
fails(lambda cc: cc.send("synthesize", {"text": "Hi \u0001 there"}), "control_character",
      "a control character")
fails(lambda cc: cc.send("synthesize", {"text": "x" * 20001}), "text_too_long",
      "text past --max-text-chars")
fails(lambda cc: cc.send("synthesize", {"voice": {"name": "tiny"}}), "missing_text",
      "synthesize without text")
fails(lambda cc: (cc.stream_start("tiny"), cc.chunk("Hi \u0007")), "control_character",
      "a control character in a chunk")

# ---- past --max-connections (16): an error event and a close; the others unaffected
time.sleep(0.5)  # the connections above have ended
many = [client() for _ in range(16)]
check(all(cc.describe()[0] == "info" for cc in many), "16 connections open at once")
extra = client()
try:
    t, d, _ = extra.read_event()
except (EOFError, ConnectionError, ValueError):
    t, d = None, {}
check(t == "error" and d.get("code") == "too_many_connections" and extra.closed(),
      "the 17th connection: error too_many_connections, closed")
extra.close()
for cc in many:
    cc.close()
time.sleep(0.5)
healthy("a full connection table")

# ---- a half-close after the request (as `nc -N` does): the answer comes in full, then the close
c = client()
c.send("synthesize", {"text": TEXT, "voice": {"name": "tiny"}})
c.sock.shutdown(socket.SHUT_WR)
events, pcm, _ = c.audio("audio-stop")
check(pcm == ref and c.closed(), "half-close after synthesize: the whole audio, then the close")
c.close()
c = client()
events_in = [encode("synthesize-start", {"voice": {"name": "tiny"}}),
             encode("synthesize-chunk", {"text": "Hello "}), encode("synthesize-chunk", {"text": "world."}),
             encode("synthesize-stop")]
c.send_raw(b"".join(events_in))
c.sock.shutdown(socket.SHUT_WR)
events, pcm, _ = c.audio("synthesize-stopped")
check(pcm == one and events[-1][0] == "synthesize-stopped" and c.closed(),
      "half-close after a whole stream: its audio, synthesize-stopped, then the close")
c.close()
c = client()
c.stream_start("tiny")
c.chunk("Hello there")
c.sock.shutdown(socket.SHUT_WR)
check(c.closed(), "half-close in a stream without its stop: the server closes")
c.close()

# ---- a disconnect mid-utterance stops its generation (plain and streaming)
LONG = "This is a long sentence for the disconnect test. " * 100
for mode in ("synthesize", "stream"):
    m0 = metrics()
    c = client()
    if mode == "synthesize":
        c.send("synthesize", {"text": LONG, "voice": {"name": "tiny"}})
    else:
        c.stream_start("tiny")
        c.chunk(LONG)
    got = 0
    while got < 3:
        t, d, p = c.read_event()
        got += t == "audio-chunk"
    t_close = time.time()
    c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
    stopped = None
    for _ in range(200):
        if metrics().get("ptts_active_streams") == 0:
            stopped = time.time() - t_close
            break
        time.sleep(0.02)
    m1 = metrics()
    time.sleep(0.3)
    m2 = metrics()
    check(stopped is not None and m1["ptts_cancelled_total"] > m0.get("ptts_cancelled_total", 0),
          f"disconnect during {mode}: generation stopped after {stopped} s, counted as cancelled")
    check(m2["ptts_audio_seconds_total"] == m1["ptts_audio_seconds_total"],
          f"disconnect during {mode}: no audio generated afterwards")
healthy("the bad input")

# ---- clean stop
srv.terminate()
try:
    rc = srv.wait(timeout=20)
except subprocess.TimeoutExpired:
    rc = None
check(rc == 0, f"SIGTERM: the server exits 0 ({rc})")
# ---- `pocket-tts wyoming`: the Wyoming server alone (no HTTP), --port is its port
LOG2 = os.path.join(tmp, "wyoming.log")
with open(LOG2, "w") as lf:
    watch_log(LOG2)
    w = subprocess.Popen([BIN, "wyoming", *MODEL, *GEN, "--voices-dir", vdir, "--voice", "tiny",
                          "--host", "127.0.0.1", "--port", "0"], stdout=lf, stderr=subprocess.STDOUT)
wport = None
for _ in range(300):
    with open(LOG2) as lf:
        m = re.search(r"Wyoming on tcp://[^:]+:(\d+)", lf.read())
    if m or w.poll() is not None:
        break
    time.sleep(0.05)
if check(m is not None, "pocket-tts wyoming starts and prints its port"):
    cw = Client("127.0.0.1", int(m.group(1)), timeout=60)
    events, pcm, _ = cw.synthesize(TEXT, "tiny")
    cw.close()
    with open(LOG2) as lf:
        text = lf.read()
    check(pcm == ref and "http://" not in text, "pocket-tts wyoming synthesizes, no HTTP server")
w.terminate()
try:
    rc = w.wait(timeout=20)
except subprocess.TimeoutExpired:
    w.kill()
    rc = None
check(rc == 0, f"pocket-tts wyoming: SIGTERM exits 0 ({rc})")

if failures:
    with open(LOG) as f:
        print(f.read()[-4000:])
finish()
