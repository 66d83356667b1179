#!/usr/bin/env python3
"""Soak benchmark of `pocket-tts serve` (prints figures; not a test).

Starts the server (or uses --url), then runs --clients concurrent clients for --minutes that mix
every endpoint: /v1/audio/speech (streamed and whole, every format), /tts, the GET endpoints,
bad requests (invalid JSON, invalid UTF-8, unknown voice, a refused loopback voice URL, an
oversized body) and disconnects mid-stream. Every minute it samples the server's RSS, open
descriptors and threads (from /proc) and the requests answered. Verdict: after the warm-up
(the first --warmup minutes) RSS, descriptors and threads stay within 5% of their post-warm-up
value (descriptors and threads with one per client of slack: the connections open at the
sample), no response cut short, and no 5xx
came back other than 503 with Retry-After.

Usage: bench/soak.py POCKET_TTS [--minutes 30] [--clients 16] [--warmup 2]
                     [--model-args "--config C --weights W --voice V"] [serve options...]
"""
import argparse
import http.client
import json
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("bin")
ap.add_argument("--minutes", type=float, default=30)
ap.add_argument("--clients", type=int, default=16)
ap.add_argument("--warmup", type=float, default=2, help="minutes before the flat-line check")
ap.add_argument("--model-args", default="")
ap.add_argument("--sample-s", type=float, default=60)
ap.add_argument("--server-log", default=os.devnull, help="where the server's warnings go")
args, extra = ap.parse_known_args()

argv = [args.bin, "serve", *shlex.split(args.model_args), "--host", "127.0.0.1", "--port", "0",
        "--log-level", "warn", *extra]
srv = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
port = None
for line in srv.stderr:
    m = re.search(r"serving on http://[^:]+:(\d+)", line)
    if m:
        port = int(m.group(1))
        break
if port is None:
    sys.exit("the server did not start: " + " ".join(argv))
slog = open(args.server_log, "w")
threading.Thread(target=lambda: [slog.write(x) for x in srv.stderr], daemon=True).start()

lock = threading.Lock()
counts = {}  # status -> n
bad5xx = []
stop = time.time() + 60 * args.minutes
TEXTS = ["Hello there.", "The quick brown fox jumps over the lazy dog.",
         "A longer sentence, with a comma; and a second clause to speak out loud."]


def note(status, hdrs):
    with lock:
        counts[status] = counts.get(status, 0) + 1
        if status >= 500 and not (status == 503 and hdrs.get("retry-after")):
            bad5xx.append(status)


def req(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        r.read()
        note(r.status, {k.lower(): v for k, v in r.getheaders()})
    except (OSError, http.client.HTTPException) as e:
        kind = "incomplete" if isinstance(e, http.client.IncompleteRead) else "io"
        with lock:
            counts[kind] = counts.get(kind, 0) + 1
    finally:
        c.close()


def speech(payload=None, raw=None):
    req("POST", "/v1/audio/speech", raw if raw is not None else json.dumps(payload).encode(),
        {"Content-Type": "application/json"})


def disconnect():
    body = json.dumps({"input": TEXTS[2] * 4, "response_format": "pcm"}).encode()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        s.recv(4096)
        s.close()
        with lock:
            counts["disconnect"] = counts.get("disconnect", 0) + 1
    except OSError:
        pass


def client(seed):
    rnd = random.Random(seed)
    b = "----soak"
    while time.time() < stop:
        k = rnd.random()
        if k < 0.35:
            speech({"input": rnd.choice(TEXTS), "stream": rnd.random() < 0.5,
                    "response_format": rnd.choice(["wav", "pcm", "flac", "mp3", "opus"])})
        elif k < 0.45:
            form = (f"--{b}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\n"
                    f"{rnd.choice(TEXTS)}\r\n--{b}--\r\n").encode()
            req("POST", "/tts", form, {"Content-Type": f"multipart/form-data; boundary={b}"})
        elif k < 0.65:
            req("GET", rnd.choice(["/health", "/ready", "/metrics", "/v1/models",
                                   "/v1/audio/voices", "/"]))
        elif k < 0.70:
            speech(raw=b"{not json")
        elif k < 0.75:
            speech(raw=b'{"input":"\xff\xfe"}')
        elif k < 0.80:
            speech({"input": "hi", "voice": "no-such-voice"})
        elif k < 0.85:
            speech({"input": "hi", "voice": f"https://127.0.0.1:{port}/health"})
        elif k < 0.90:
            speech(raw=b'{"input":"' + b"a" * (2 << 20) + b'"}')
        else:
            disconnect()


def sample():
    pid = srv.pid
    with open(f"/proc/{pid}/status") as f:
        st = f.read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", st).group(1))
    thr = int(re.search(r"Threads:\s+(\d+)", st).group(1))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with lock:
        n = sum(v for k, v in counts.items() if isinstance(k, int))
    return rss, fds, thr, n


threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(args.clients)]
t0 = time.time()
for t in threads:
    t.start()
samples = []
print(f"soak: {args.clients} clients for {args.minutes:g} min, pid {srv.pid}, port {port}")
print(f"{'min':>5} {'RSS MiB':>8} {'fds':>5} {'threads':>7} {'requests':>9}")
while time.time() < stop:
    time.sleep(min(args.sample_s, max(0.1, stop - time.time())))
    rss, fds, thr, n = sample()
    m = (time.time() - t0) / 60
    samples.append((m, rss, fds, thr, n))
    print(f"{m:5.1f} {rss / 1024:8.1f} {fds:5d} {thr:7d} {n:9d}", flush=True)
for t in threads:
    t.join(180)
time.sleep(1)
rss, fds, thr, n = sample()
samples.append(((time.time() - t0) / 60, rss, fds, thr, n))
print(f"idle  {rss / 1024:8.1f} {fds:5d} {thr:7d} {n:9d}")
srv.send_signal(signal.SIGTERM)
rc = srv.wait(60)

after = [x for x in samples if x[0] >= args.warmup] or samples[-1:]
base = after[0]
ok = True
# descriptors and threads follow the connections open at the sample (one each per client, a
# few of the server's own): they get that much slack
conn_slack = args.clients + 4
for i, (name, slack) in enumerate([("RSS", 0), ("descriptors", conn_slack),
                                   ("threads", conn_slack)], start=1):
    hi = max(x[i] for x in after)
    flat = hi <= base[i] * 1.05 + slack
    ok &= flat
    print(f"{name}: {base[i]} after warm-up, at most {hi} later: {'flat' if flat else 'GROWS'}")
print("answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=str)))
print(f"5xx other than 503 with Retry-After: {len(bad5xx)}")
print(f"server exit status after SIGTERM: {rc}")
ok &= not bad5xx and rc == 0 and not counts.get("incomplete")
print(f"responses cut short: {counts.get('incomplete', 0)}")
print("verdict: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
