"""Many open connections on `pocket-tts serve` (tiny fixture model, loopback): N idle keep-alive
connections (N = 2000, fewer when the open-file limit is lower) cost no thread and bounded
memory, /health answers quickly meanwhile, streams run next to them, every held connection still
answers afterwards, and a request queued behind busy slots whose client hangs up leaves the
queue.

Usage: test_conns.py POCKET_TTS FIXTURES_DIR"""
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import check, failures, start_server  # noqa: E402

BIN, FX = sys.argv[1], sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
# the server keeps about half its descriptors for connections (srv_http_start): stay under that
N = max(100, min(2000, (hard - 64) // 2 - 100))
tmp = tempfile.mkdtemp(prefix="ptts_conns_")
vdir = os.path.join(tmp, "voices")
os.makedirs(vdir)
shutil.copy(f"{FX}/tiny/voice.safetensors", os.path.join(vdir, "tiny.safetensors"))
srv, port, log = start_server(
    [BIN, "serve", "--config", f"{FX}/tiny/manifest.json", "--weights", f"{FX}/tiny/model.safetensors",
     "--voices-dir", vdir, "--voice", "tiny", "--host", "127.0.0.1", "--port", "0", "--threads", "1",
     "--max-concurrent", "2", "--queue", "4", "--timeout", "120", "--temperature", "0",
     "--eos-threshold", "1e9", "--log-level", "warn"], os.path.join(tmp, "server.log"))
if not check(port is not None, "server started"):
    print(log)
    sys.exit(1)


def status():
    """(RSS KiB, threads) of the server."""
    rss = threads = 0
    with open(f"/proc/{srv.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def health_worst(n=20):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    worst = 0
    for _ in range(n):
        t0 = time.perf_counter()
        c.request("GET", "/health")
        r = c.getresponse()
        r.read()
        worst = max(worst, time.perf_counter() - t0)
    c.close()
    return worst


def answered(s):
    """Read one /health answer (20-byte body) from a raw socket: True when it is a 200."""
    buf = b""
    while b"\r\n\r\n" not in buf or len(buf) < buf.index(b"\r\n\r\n") + 24:
        b = s.recv(4096)
        if not b:
            return False
        buf += b
    return buf.startswith(b"HTTP/1.1 200")


TEXT = "The quick brown fox jumps over the lazy dog. " * 4
rss0, th0 = status()
held = []
for _ in range(N):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    held.append(s)
for s in held:
    s.settimeout(30)
ok = sum(answered(s) for s in held)
rss1, th1 = status()
check(ok == N, f"{N} keep-alive connections answered ({ok})")
check(th1 <= th0, f"no thread per connection: {th0} threads before, {th1} with {N} open")
per = (rss1 - rss0) / N
check(per < 48, f"memory per idle connection: {per:.1f} KiB (RSS {rss0} -> {rss1} KiB)")
w = health_worst()
check(w < 0.5, f"/health next to them: worst {1e3 * w:.1f} ms")

res = []


def stream():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/v1/audio/speech", json.dumps({"input": TEXT, "response_format": "pcm"}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    res.append((r.status, len(r.read())))
    c.close()


ths = [threading.Thread(target=stream) for _ in range(6)]  # 2 slots, 4 queued
for t in ths:
    t.start()
time.sleep(0.2)
w = health_worst()
for t in ths:
    t.join()
check(len(res) == 6 and all(st == 200 and n > 0 for st, n in res) and len({n for st, n in res}) == 1,
      f"6 streams (2 slots, 4 queued) next to the idle connections: {res}")
check(w < 0.5, f"/health during the streams: worst {1e3 * w:.1f} ms")
alive = 0
for s in held:
    try:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        alive += answered(s)
    except OSError:
        pass
check(alive == N, f"every held connection still answers ({alive}/{N})")
for s in held:
    s.close()


def metrics():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    m = {}
    for line in c.getresponse().read().decode().splitlines():
        if line and not line.startswith("#") and " " in line:
            k, v = line.rsplit(" ", 1)
            m[k] = float(v)
    c.close()
    return m


# a queued request whose client leaves is dropped from the queue (the generation thread wakes
# suspended queued connections to look)
LONG = "This is a long sentence that keeps a slot busy for a while. " * 160
stop_long = threading.Event()


def long_reader():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/v1/audio/speech", json.dumps({"input": LONG, "response_format": "pcm"}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    while not stop_long.is_set() and r.read(65536):
        pass
    c.close()


longs = [threading.Thread(target=long_reader) for _ in range(2)]
for t in longs:
    t.start()
for _ in range(200):
    if metrics().get("ptts_active_streams", 0) == 2:
        break
    time.sleep(0.02)
q = socket.create_connection(("127.0.0.1", port))
body = json.dumps({"input": TEXT, "response_format": "pcm"}).encode()
q.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
seen = False
for _ in range(100):
    if metrics().get("ptts_queue_depth", 0) >= 1:
        seen = True
        break
    time.sleep(0.02)
q.close()
left = None
for _ in range(100):
    m = metrics()
    if m.get("ptts_queue_depth", 1) == 0:
        left = m.get("ptts_active_streams")
        break
    time.sleep(0.02)
check(seen and left == 2, "a queued request whose client hung up leaves the queue while the slots are "
      f"still busy (queued: {seen}, active streams when it left: {left})")
stop_long.set()
for t in longs:
    t.join()

srv.send_signal(signal.SIGTERM)
try:
    rc = srv.wait(timeout=30)
except subprocess.TimeoutExpired:
    srv.kill()
    rc = "still running after 30 s"
check(rc == 0, f"SIGTERM: exit {rc}")
shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
