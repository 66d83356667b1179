#!/usr/bin/env python3
"""End-to-end tests of the WebSocket input-streaming endpoint of `pocket-tts serve`
(GET /v1/tts/stream-input, docs/websocket.md) on the tiny fixture model, with Python's
`websockets` (Debian python3-websockets) as the client and raw sockets for what a correct
client never sends.

One-piece input equals `pocket-tts generate` (s16 byte for byte; f32 and base64 JSON agree with
it); word-by-word input equals the streaming rule's prediction (each complete sentence a chunk,
each chunk equal to that chunk generated alone); flush; the idle flush; cancel, then a second
utterance on the same socket; two concurrent sockets; pings; bad input (malformed, unmasked
and oversized frames, invalid UTF-8, binary, unknown and non-JSON messages, a bad handshake, a
disconnect mid-utterance, 10,000 one-character pieces, megabytes of text without a sentence end),
each with its error and close code and /health fine afterwards; closed sockets leave the
connection count; SIGTERM closes open sockets with 1001.

Usage: test_ws.py POCKET_TTS FIXTURES_DIR
"""
import asyncio
import atexit
import base64
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import websockets

from e2e_util import check, failures, finish, start_server

BIN, FX = sys.argv[1], sys.argv[2]
MODEL = ["--config", f"{FX}/tiny/manifest.json", "--weights", f"{FX}/tiny/model.safetensors"]
# no EOS: every chunk runs to its length limit, so chunks have known lengths
GEN = ["--temperature", "0", "--eos-threshold", "1e9"]
VOICE = f"{FX}/tiny/voice.safetensors"
TAIL = 24000 // 5 * 2  # generate's 200 ms silence tail, bytes of s16

tmp = tempfile.mkdtemp(prefix="ptts_ws_")
vdir = os.path.join(tmp, "voices")
os.mkdir(vdir)
shutil.copy(VOICE, os.path.join(vdir, "tiny.safetensors"))
LOG = os.path.join(tmp, "server.log")
srv, port, _ = start_server(
    [BIN, "serve", *MODEL, *GEN, "--voices-dir", vdir, "--voice", "tiny", "--host", "127.0.0.1",
     "--port", "0", "--max-concurrent", "4", "--queue", "4", "--max-text-chars", "2000",
     "--max-connections", "24", "--timeout", "5", "--client-buffer", "60"], LOG, wait_s=15)


def cleanup():
    if srv.poll() is None:
        srv.kill()
        srv.wait()
    shutil.rmtree(tmp, ignore_errors=True)


atexit.register(cleanup)
if not check(port is not None, "server starts and prints its port"):
    with open(LOG) as f:
        print(f.read())
    sys.exit(1)
URL = f"ws://127.0.0.1:{port}/v1/tts/stream-input"


def generate(text):
    """generate's s16 samples for text, without its 200 ms tail."""
    out = os.path.join(tmp, "gen.wav")
    subprocess.run([BIN, "generate", *MODEL, *GEN, "--voice", VOICE, "--text", text, "-q", "-o",
                    out], check=True)
    with open(out, "rb") as f:
        d = f.read()[44:]
    return d[:-TAIL]


def healthy():
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/health")
        r = c.getresponse()
        ok = r.status == 200 and json.loads(r.read()) == {"status": "healthy"}
        c.close()
        return ok
    except OSError:
        return False


def metrics(conn=None):
    """/metrics as {name: value}, on a new connection or on `conn` (kept open)."""
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    data = c.getresponse().read().decode()
    if conn is None:
        c.close()
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in data.splitlines() if line and not line.startswith("#")}


async def collect(ws, until_bytes=None, timeout=60):
    """Messages until "done" (or until_bytes of audio): (audio bytes, JSON messages)."""
    audio, msgs = b"", []
    deadline = time.time() + timeout
    while time.time() < deadline:
        if until_bytes is not None and len(audio) >= until_bytes:
            break
        m = await asyncio.wait_for(ws.recv(), deadline - time.time())
        if isinstance(m, bytes):
            audio += m
            continue
        j = json.loads(m)
        msgs.append(j)
        if j.get("type") == "audio":
            audio += base64.b64decode(j["audio"])
        if j.get("type") in ("done", "error"):
            break
    return audio, msgs


async def speak(first, pieces=(), **kw):
    async with websockets.connect(URL, max_size=None) as ws:
        await ws.send(json.dumps(first))
        for p in pieces:
            await ws.send(json.dumps(p))
        return await collect(ws, **kw)


def run(coro):
    return asyncio.run(coro)


TEXT = "Hello world. This is a test."
ref = generate(TEXT)

# ---- one piece = generate
audio, msgs = run(speak({"text": TEXT, "end": True}))
types = [m.get("type") for m in msgs]
check(types[:1] == ["ready"] and types[-1:] == ["done"], f"ready ... done: {types}")
check(msgs[0].get("sample_rate") == 24000 and msgs[0].get("output_format") == "pcm_s16le",
      f"ready message: {msgs[0] if msgs else None}")
check(audio == ref, f"one piece, s16 binary = generate [{len(audio)} vs {len(ref)} bytes]")
done = msgs[-1] if msgs else {}
check(abs(done.get("audio_seconds", -1) - len(ref) / 48000) < 1e-6
      and isinstance(done.get("first_audio_ms"), (int, float)), f"done message: {done}")
audio, msgs = run(speak({"output_format": "pcm_f32le", "binary": False},
                        [{"text": TEXT, "flush": True}, {"text": ""}]))
f32 = struct.unpack(f"<{len(audio) // 4}f", audio)
try:
    import numpy as np
    s16 = (np.clip(np.array(f32, dtype=np.float32), -1, 1) * np.float32(32767)).astype(np.int16)
    same = s16.tobytes() == ref
except ImportError:  # the conversion in double precision: the same in all but rare ties
    same = len(f32) * 2 == len(ref)
check(same and all(m.get("type") in ("ready", "audio", "done") for m in msgs),
      f"f32 as base64 JSON, a flushed piece ended by an empty text = generate ({len(f32)} samples)")
audio, msgs = run(speak({"text": TEXT, "end": True, "temperature": 0.7, "seed": 5}))
audio2, _ = run(speak({"text": TEXT, "end": True, "temperature": 0.7, "seed": 5}))
check(audio == audio2 and audio != ref and len(audio) > 0, "per-utterance options (seeded)")

# ---- word by word = the rule's prediction
CHUNKS = ["Hello world.", "This is a test.", "Bye"]
alone = [generate(c) for c in CHUNKS]


async def word_by_word():
    async with websockets.connect(URL) as ws:
        await ws.send(json.dumps({"idle_flush_ms": 0}))
        got, msgs = b"", []
        # after a sentence's next word, wait for that sentence's audio: the engine then waits
        # for text, so every chunk boundary is where the rule puts it
        plan = [("Hello ", None), ("world.", None), (" This", 1), (" is", None), (" a", None),
                (" test.", None), (" Bye", 2)]
        for word, done_chunks in plan:
            await ws.send(json.dumps({"text": word}))
            if done_chunks:
                want = sum(len(a) for a in alone[:done_chunks])
                a, m = await collect(ws, until_bytes=want - len(got))
                got += a
                msgs += m
        await ws.send(json.dumps({"end": True}))
        a, m = await collect(ws)
        return got + a, msgs + m


audio, msgs = run(word_by_word())
check(audio == b"".join(alone),
      f"word by word = each sentence alone [{len(audio)} vs {sum(len(a) for a in alone)} bytes]")


async def flushed(idle_ms, flush):
    async with websockets.connect(URL) as ws:
        await ws.send(json.dumps({"idle_flush_ms": idle_ms, "text": "Hello world."}))
        if flush:
            await ws.send(json.dumps({"text": "", "flush": True}))
        first = len(ref_hello)
        try:
            a, m = await collect(ws, until_bytes=first, timeout=3)
        except asyncio.TimeoutError:
            a = b""
        await ws.send(json.dumps({"text": " Bye", "end": True}))
        b, m = await collect(ws)
        return a, a + b


ref_hello, ref_bye = generate("Hello world."), generate("Bye")
a, total = run(flushed(0, True))
check(a == ref_hello and total == ref_hello + ref_bye, "flush: a hard chunk boundary")
a, total = run(flushed(300, False))
check(a == ref_hello and total == ref_hello + ref_bye, "idle flush: a sentence end, 300 ms pause")
a, total = run(flushed(0, False))
check(a == b"" and total == generate("Hello world. Bye"), "idle_flush_ms 0: no idle flush")

# ---- cancel, then another utterance on the same socket


async def cancel_then_again():
    async with websockets.connect(URL) as ws:
        await ws.send(json.dumps({"text": TEXT * 20}))
        a, _ = await collect(ws, until_bytes=1)
        await ws.send(json.dumps({"cancel": True}))
        b, m = await collect(ws)
        cancelled = m and m[-1].get("type") == "done" and m[-1].get("cancelled") is True
        await ws.send(json.dumps({"text": TEXT, "end": True}))
        c, m2 = await collect(ws)
        pong = await ws.ping(b"x")
        await asyncio.wait_for(pong, 5)
        return cancelled, len(a + b), c, m2


cancelled, n, again, m2 = run(cancel_then_again())
check(cancelled and n < len(ref) * 20, f"cancel: done with cancelled ({n} bytes before)")
check(again == ref and m2[-1].get("type") == "done", "a second utterance on the same socket")
check(True, "ping answered")  # wait_for would have raised otherwise

# ---- two concurrent sockets
T2 = "Another voice speaks here."
ref2 = generate(T2)


async def two():
    return await asyncio.gather(speak({"text": TEXT, "end": True}),
                                speak({"text": T2, "end": True}))


(a1, _), (a2, _) = run(two())
check(a1 == ref and a2 == ref2, "two concurrent sockets, each = generate")

# an utterance waiting for text holds its slot: slots (4) and queue (4) full, the next one is told
# to come back later (1013), and the server is fine once they close


async def full_house():
    socks = [await websockets.connect(URL) for _ in range(8)]
    for ws in socks:
        await ws.send(json.dumps({"text": "Waiting"}))
        assert json.loads(await ws.recv())["type"] == "ready"
    extra = await websockets.connect(URL)
    await extra.send(json.dumps({"text": "One more."}))
    _, m = await collect(extra, timeout=10)
    try:
        await asyncio.wait_for(extra.wait_closed(), 10)
    except asyncio.TimeoutError:
        pass
    code = extra.close_code
    for ws in socks:
        await ws.close()
    return m, code


m, code = run(full_house())
check(m and m[-1].get("code") == "busy" and code == 1013 and healthy(),
      f"slots and queue full: busy, close 1013 ({code})")

# ---- bad input (raw sockets)


def raw_open(headers=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    h = {"Host": "x", "Upgrade": "websocket", "Connection": "Upgrade",
         "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}
    h.update(headers or {})
    req = "GET /v1/tts/stream-input HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in h.items() if v is not None) + "\r\n"
    s.sendall(req.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    return s, head.decode(errors="replace"), rest


def frame(op, payload, mask=True, fin=True, length=None):
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | op
    if n < 126:
        h = bytes([b0, (0x80 if mask else 0) | n])
    elif n < 65536:
        h = bytes([b0, (0x80 if mask else 0) | 126]) + struct.pack(">H", n)
    else:
        h = bytes([b0, (0x80 if mask else 0) | 127]) + struct.pack(">Q", n)
    if not mask:
        return h + payload
    k = b"\x01\x02\x03\x04"
    return h + k + bytes(c ^ k[i & 3] for i, c in enumerate(payload))


def read_frames(s, rest=b"", timeout=10):
    """Server frames until its close: ([(op, payload)], close code or None)."""
    s.settimeout(timeout)
    buf, out = rest, []
    while True:
        while len(buf) >= 2:
            n = buf[1] & 127
            at = 2
            if n == 126:
                if len(buf) < 4:
                    break
                n, at = struct.unpack(">H", buf[2:4])[0], 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n, at = struct.unpack(">Q", buf[2:10])[0], 10
            if len(buf) < at + n:
                break
            op, p = buf[0] & 15, buf[at:at + n]
            buf = buf[at + n:]
            out.append((op, p))
            if op == 8:
                return out, struct.unpack(">H", p[:2])[0] if len(p) >= 2 else None
        try:
            d = s.recv(65536)
        except OSError:
            return out, None
        if not d:
            return out, None
        buf += d


def bad(what, data, want_close, want_code=None, first=None):
    s, head, rest = raw_open()
    if not head.startswith("HTTP/1.1 101") or "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" not in head:
        check(False, f"{what}: handshake ({head[:60]!r})")
        return
    if first:
        s.sendall(frame(1, json.dumps(first).encode()))
    try:
        s.sendall(data)
    except OSError:
        pass
    frames, code = read_frames(s, rest)
    errs = [json.loads(p) for op, p in frames if op == 1 and json.loads(p).get("type") == "error"]
    ok = code == want_close and (want_code is None or (errs and errs[-1].get("code") == want_code))
    s.close()
    check(ok and healthy(), f"{what}: close {code} (want {want_close}), error "
          f"{errs[-1] if errs else None}, /health fine")


bad("unmasked frame", frame(1, b'{"text":"x"}', mask=False), 1002, "protocol_error")
bad("oversized length", frame(1, b"", length=1 << 40), 1009, "message_too_large")
bad("malformed frame (reserved bits)", b"\xf1\x80\x00\x00\x00\x00", 1002)
bad("fragmented ping", frame(9, b"", fin=False), 1002)
bad("continuation without a message", frame(0, b"x"), 1002)
bad("invalid UTF-8", frame(1, b'{"text":"\xff\xfe"}'), 1007, "invalid_utf8")
bad("non-JSON", frame(1, b"hello"), 1008, "invalid_json")
bad("unknown message", frame(1, b'{"type":"speak"}'), 1008, "unknown_message")
bad("unknown member after the first", frame(1, b'{"voice":"tiny"}'), 1008, "unknown_message",
    first={"text": "Hi"})
bad("binary message", frame(2, b"\x00\x01"), 1003, "binary_message")
bad("bad option", frame(1, b'{"temperature":"hot"}'), 1008, "invalid_value")
bad("unknown voice", frame(1, b'{"voice":"nobody","text":"Hi."}'), 1008, "invalid_voice")
bad("control character", frame(1, b'{"text":"a\\u0007b"}'), 1007, "control_character")
bad("nothing to say", frame(1, b'{"text":"   ","end":true}'), 1007, "invalid_text")
bad("client close", frame(8, struct.pack(">H", 1000)), 1000)
s, head, _ = raw_open({"Sec-WebSocket-Version": "8"})
check(" 426 " in head.split("\r\n")[0], "version 8: 426")
s.close()
s, head, _ = raw_open({"Sec-WebSocket-Key": "short"})
check(" 400 " in head.split("\r\n")[0], "a bad key: 400")
s.close()
s, head, _ = raw_open({"Upgrade": None})
check(" 426 " in head.split("\r\n")[0], "no Upgrade header: 426")
s.close()

# a disconnect mid-utterance stops its generation within a frame
before = metrics()
s, head, rest = raw_open()
s.sendall(frame(1, json.dumps({"text": TEXT * 20, "end": True}).encode()))
s.settimeout(10)
got = b""
while len(got) < 20000:
    got += s.recv(65536)
s.close()
deadline = time.time() + 5
while time.time() < deadline and metrics().get("ptts_active_streams", 1) != 0:
    time.sleep(0.05)
after = metrics()
check(after.get("ptts_active_streams") == 0
      and after.get("ptts_cancelled_total", 0) > before.get("ptts_cancelled_total", 0)
      and healthy(), "disconnect mid-utterance: cancelled, the batch empty, /health fine")


# 10,000 one-character pieces (no sentence end: nothing is spoken while they come, so the client
# need not read meanwhile), then a cancel: all taken, done
async def tiny_pieces():
    text = "x " * 5000
    async with websockets.connect(URL) as ws:
        await ws.send(json.dumps({"idle_flush_ms": 0}))
        for ch in text:
            await ws.send(json.dumps({"text": ch}))
        await ws.send(json.dumps({"cancel": True}))
        a, m = await collect(ws, timeout=120)
        return m


t0 = time.time()
m = run(tiny_pieces())
check(m and m[-1].get("type") == "done" and not any(x.get("type") == "error" for x in m)
      and healthy(), f"10,000 one-character pieces, then cancel ({time.time() - t0:.1f} s)")

# more text than may wait (1 MiB) and no sentence end: throttled (the socket is not read), then
# refused after --timeout; the server's memory stays bounded
s, head, rest = raw_open()
s.sendall(frame(1, json.dumps({"text": "a "}).encode()))
s.settimeout(30)
piece = frame(1, json.dumps({"text": "word " * 1500}).encode())
sent = 0
try:
    while sent < (3 << 20):
        s.sendall(piece)
        sent += len(piece)
except OSError:
    pass
frames, code = read_frames(s, rest, timeout=30)
errs = [json.loads(p) for op, p in frames if op == 1 and json.loads(p).get("type") == "error"]
check(code == 1008 and errs and errs[-1].get("code") == "too_much_text" and healthy(),
      f"3 MiB with no sentence end: throttled, then 1008 too_much_text ({code})")
s.close()

# every socket closed: the server's connection count is back down to the one connection that
# asks. The polls share one keep-alive connection: a poll on a new connection each time may be
# counted before the server has seen the previous one's close.
probe = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
deadline = time.time() + 30  # a sanitized server takes seconds to drop a throttled socket
while True:
    n_open = metrics(probe).get("ptts_open_connections")
    if n_open == 1 or time.time() > deadline:
        break
    time.sleep(0.05)
probe.close()
check(n_open == 1, f"closed sockets leave the connection count ({n_open} open)")

# ---- SIGTERM: an open utterance is ended and spoken, then the socket closes with 1001
s, head, rest = raw_open()
s.sendall(frame(1, json.dumps({"text": "Hello world."}).encode()))
time.sleep(0.3)
srv.send_signal(signal.SIGTERM)
frames, code = read_frames(s, rest, timeout=20)
audio = b"".join(p for op, p in frames if op == 2)
texts = [json.loads(p).get("type") for op, p in frames if op == 1]
check(code == 1001 and "done" in texts and audio == ref_hello,
      f"SIGTERM: the utterance is spoken to its end, then close 1001 ({code}, {texts})")
s.close()
rc = srv.wait(timeout=30)
check(rc == 0, f"SIGTERM: clean exit ({rc})")

if failures:
    with open(LOG) as f:
        print(f.read()[-4000:])
finish()
