#!/usr/bin/env python3
"""Many open connections on `pocket-tts serve`: opens N idle keep-alive connections (each has
had one GET /health answered and stays open), then S streaming /v1/audio/speech clients on top,
and samples the server's RSS and thread count (/proc/PID/status) at each stage while timing
GET /health on a connection of its own. Prints figures, never assertions. Raises its own open
file limit to the hard limit; the server raises its own (run it with --max-connections above N
and a --timeout longer than this run).

With --bare the connections send nothing (a server that closes after each answer cannot hold
keep-alive ones); they must then open within the server's --timeout.

Usage: conn_hold.py URL SERVER_PID [--conns N] [--streams S] [--text TEXT] [--bare]
"""
import http.client
import json
import resource
import socket
import statistics
import sys
import threading
import time
import urllib.parse

args = sys.argv[1:]


def opt(name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return v
    return default


n_conns = int(opt("--conns", "4000"))
n_streams = int(opt("--streams", "16"))
text = opt("--text", "The quick brown fox jumps over the lazy dog, then it runs far away. " * 20)
bare = "--bare" in args
if bare:
    args.remove("--bare")
url = urllib.parse.urlparse(args[0])
pid = int(args[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def server_status():
    """(RSS in MiB, threads) of the server."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def health_ms(n=20):
    """Median and max of n GET /health on one fresh keep-alive connection, in ms."""
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        c.request("GET", "/health")
        r = c.getresponse()
        r.read()
        t.append(1e3 * (time.perf_counter() - t0))
        if r.status != 200:
            raise SystemExit(f"/health answered {r.status}")
    c.close()
    return statistics.median(t), max(t)


def row(stage, extra=""):
    rss, threads = server_status()
    med, mx = health_ms()
    print(f"{stage:<34} {rss:>9.1f} MiB {threads:>8} {med:>10.2f} ms {mx:>8.2f} ms  {extra}", flush=True)
    return rss


print(f"{'stage':<34} {'server RSS':>13} {'threads':>8} {'/health median':>13} {'max':>11}")
rss0 = row("idle")
held = []
t0 = time.perf_counter()
for i in range(n_conns):
    s = socket.create_connection((url.hostname, url.port))
    if not bare:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    held.append(s)
refused = 0
for s in [] if bare else held:  # every connection's answer, read to the end of its body
    s.settimeout(30)
    buf = b""
    while b"\r\n\r\n" not in buf or len(buf) < buf.index(b"\r\n\r\n") + 4 + 20:  # /health: 20 bytes
        b = s.recv(4096)
        if not b:
            break
        buf += b
    if not buf.startswith(b"HTTP/1.1 200"):
        refused += 1
rss1 = row(f"{n_conns} idle {'bare' if bare else 'keep-alive'} connections",
           f"({time.perf_counter() - t0:.1f} s to open; {refused} not answered 200)")
print(f"  RSS per idle connection: {1024 * (rss1 - rss0) / max(1, n_conns):.1f} KiB", flush=True)

stop = threading.Event()
got = []


def streamer():
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    c.request("POST", "/v1/audio/speech", json.dumps({"input": text, "response_format": "pcm", "stream": True}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    n = 0
    while not stop.is_set():
        b = r.read1(65536)
        if not b:
            break
        n += len(b)
    got.append((r.status, n))
    c.close()


ths = [threading.Thread(target=streamer) for _ in range(n_streams)]
for t in ths:
    t.start()
time.sleep(0.5)
row(f"+ {n_streams} streaming clients")
for t in ths:
    t.join()
ok = sum(1 for st, n in got if st == 200 and n > 0)
busy = sum(1 for st, n in got if st == 503)
row(f"streams done ({ok}/{n_streams} got audio, {busy} a 503)")
alive = 0
for s in held:  # the idle connections are still open and still answer
    try:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        alive += s.recv(4096).startswith(b"HTTP/1.1 200")
    except OSError:
        pass
    s.close()
print(f"  idle connections still answering: {alive}/{n_conns}", flush=True)
row("after closing them")
