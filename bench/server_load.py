#!/usr/bin/env python3
"""Load test of `pocket-tts serve`: C clients at once, each POSTs /v1/audio/speech (pcm, streamed)
and reads to the end. Prints per concurrency: time to the first audio byte (median and max over
the clients), the audio each got, and the aggregate real-time factor (all audio seconds / wall
seconds of the round). Prints figures, never assertions.

Usage: server_load.py URL [CONCURRENCY ...] [--text TEXT ...] [--texts FILE] [--rounds N]
                      [--procs P]

--text, given more than once, or --texts FILE (a text a line): client i of a round asks for the
(i mod n)-th text, so that requests of several lengths run together and end at different times,
as a server's do; "audio/client" is then their mean.

--procs P splits the clients over P processes (default 1). One Python process reads at most a
few tens of MB/s of streamed PCM over all its threads (the GIL): with hundreds of clients of a
fast server the client, not the server, sets the pace, and its threads see the first audio late
(1,024 clients on the H200 host: median 141-208 ms with 16 processes, 122-127 ms with 128, the
server's own log 106-126 ms). Give a process 8-16 clients. Every client's thread is started and
waiting before a round begins, so that starting threads is not timed either.
"""
import http.client
import json
import multiprocessing
import statistics
import sys
import threading
import time
import urllib.parse

args = sys.argv[1:]
texts = []
rounds = 1
while "--text" in args:
    i = args.index("--text")
    texts.append(args[i + 1])
    del args[i:i + 2]
if "--texts" in args:
    i = args.index("--texts")
    with open(args[i + 1], encoding="utf-8") as f:
        texts += [line.strip() for line in f if line.strip()]
    del args[i:i + 2]
texts = texts or ["The quick brown fox jumps over the lazy dog, then it runs far away into the forest."]
if "--rounds" in args:
    i = args.index("--rounds")
    rounds = int(args[i + 1])
    del args[i:i + 2]
procs = 1
if "--procs" in args:
    i = args.index("--procs")
    procs = max(1, int(args[i + 1]))
    del args[i:i + 2]
url = urllib.parse.urlparse(args[0])
levels = [int(a) for a in args[1:]] or [1, 4, 16]


def client(out, go, text):
    """One request: (status, first audio s, audio s, start, end); status 0 when it failed."""
    go.wait()
    t0 = time.monotonic()
    status, first, n = 0, None, 0
    try:
        c = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
        c.request("POST", "/v1/audio/speech",
                  json.dumps({"input": text, "response_format": "pcm", "stream": True}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        while True:
            b = r.read1(65536)
            if not b:
                break
            if first is None:
                first = time.monotonic() - t0
            n += len(b)
        status = r.status
        c.close()
    except (OSError, http.client.HTTPException):
        pass
    out.append((status, first, n / 2 / 24000, t0, time.monotonic()))


def worker(count, first, barrier, q):
    """count clients (first, first + 1, ...) in threads of this process, released together at
    the barrier."""
    res, go = [], threading.Event()
    ths = [threading.Thread(target=client, args=(res, go, texts[(first + i) % len(texts)]))
           for i in range(count)]
    for t in ths:
        t.start()
    barrier.wait()
    go.set()
    for t in ths:
        t.join()
    q.put(res)


def run_round(conc):
    """One round of conc clients: their results, and the wall time from the release to the end
    of the last (CLOCK_MONOTONIC is one clock for every process)."""
    counts = [conc // procs + (1 if i < conc % procs else 0) for i in range(procs)]
    counts = [c for c in counts if c > 0]
    barrier = multiprocessing.Barrier(len(counts) + 1)
    q = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=worker, args=(c, sum(counts[:i]), barrier, q))
          for i, c in enumerate(counts)]
    for p in ps:
        p.start()
    barrier.wait()
    t0 = time.monotonic()
    res = []
    for _ in ps:
        res += q.get()
    for p in ps:
        p.join()
    return res, max(r[4] for r in res) - t0


print(f"{'clients':>7} {'first audio median':>19} {'max':>8} {'audio/client':>13} {'wall':>7} {'aggregate RTF':>14}"
      + (f"  ({procs} client processes)" if procs > 1 else ""))
for conc in levels:
    for _ in range(rounds):
        res, wall = run_round(conc)
        bad = [r for r in res if r[0] != 200]
        firsts = [r[1] for r in res if r[1] is not None] or [float("nan")]
        audio = sum(r[2] for r in res)
        print(f"{conc:>7} {1e3 * statistics.median(firsts):>16.0f} ms {1e3 * max(firsts):>5.0f} ms "
              f"{audio / conc:>11.2f} s {wall:>6.2f}s {audio / wall:>13.2f}x" + (f"  ({len(bad)} failed)" if bad else ""),
              flush=True)
