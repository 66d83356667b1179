#!/usr/bin/env python3
"""Load test of `pocket-tts serve`: C clients at once, each POSTs /v1/audio/speech (pcm, streamed)
and reads to the end. Prints per concurrency: time to the first audio byte (median and max over
the clients), the audio each got, and the aggregate real-time factor (all audio seconds / wall
seconds of the round). Prints figures, never assertions.

Usage: server_load.py URL [CONCURRENCY ...] [--text TEXT ...] [--texts FILE] [--rounds N]
                      [--procs P] [--duration S]

--text, given more than once, or --texts FILE (a text a line): client i of a round asks for the
(i mod n)-th text, so that requests of several lengths run together and end at different times,
as a server's do; "audio/client" is then their mean.

--duration S: a steady load instead of a wave. Each client sends its requests one after another
(its j-th the (i + j)-th text mod n) on one kept-alive connection until S seconds after the
release, a request begun before then runs to its end; client i starts at its own time within
the first S/4 seconds, so requests end and new ones join the running ones all the time, as on
a server in use. Prints the requests, their first audio (median, 90th percentile, max), and the
aggregate real time over the steady part, the audio received from S/4 to S seconds (the
start's wave and the end's drain left out), besides that of the whole run.

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
duration = 0.0
if "--duration" in args:
    i = args.index("--duration")
    duration = float(args[i + 1])
    del args[i:i + 2]
procs = 1
if "--procs" in args:
    i = args.index("--procs")
    procs = max(1, int(args[i + 1]))
    del args[i:i + 2]
url = urllib.parse.urlparse(args[0])
levels = [int(a) for a in args[1:]] or [1, 4, 16]


def request(text, win=None, keep=None):
    """One request: (status, first audio s, audio s, start, end, audio s inside win, error);
    status 0 when it failed. win: (t_from, t_to) on CLOCK_MONOTONIC, or None. keep: a list
    holding the client's open connection (HTTP keep-alive, as a client of a server in use
    keeps one), or None for a connection of its own."""
    t0 = time.monotonic()
    status, first, n, inw, err = 0, None, 0, 0, ""
    c = keep[0] if keep else None
    try:
        if c is None:
            c = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
        c.request("POST", "/v1/audio/speech",
                  json.dumps({"input": text, "response_format": "pcm", "stream": True}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        while True:
            b = r.read1(65536)
            if not b:
                break
            now = time.monotonic()
            if first is None:
                first = now - t0
            n += len(b)
            if win and win[0] <= now <= win[1]:
                inw += len(b)
        status = r.status
        if status != 200:
            err = f"HTTP {status}"
        if keep is not None and not r.will_close:
            keep[0] = c
        else:
            c.close()
            if keep is not None:
                keep[0] = None
    except (OSError, http.client.HTTPException) as x:
        err = type(x).__name__
        if c is not None:
            c.close()
        if keep is not None:
            keep[0] = None
    return (status, first, n / 2 / 24000, t0, time.monotonic(), inw / 2 / 24000, err)


def client(out, go, i, rel):
    """Client i: one request (a wave), or requests back to back until `duration` seconds after
    the release (rel[0], set before go)."""
    go.wait()
    if not duration:
        out.append(request(texts[i % len(texts)]))
        return
    win = (rel[0] + duration / 4, rel[0] + duration)
    # client i starts at its own time in the first quarter (the golden ratio spreads them
    # evenly), so that requests end and begin all the time rather than in waves of equal texts
    time.sleep((i * 0.6180339887 % 1.0) * duration / 4)
    j, keep = 0, [None]
    while time.monotonic() < rel[0] + duration:
        out.append(request(texts[(i + j) % len(texts)], win, keep))
        j += 1
    if keep[0] is not None:
        keep[0].close()


def worker(count, first, barrier, q):
    """count clients (first, first + 1, ...) in threads of this process, released together at
    the barrier."""
    res, go, rel = [], threading.Event(), [0.0]
    ths = [threading.Thread(target=client, args=(res, go, first + i, rel)) for i in range(count)]
    for t in ths:
        t.start()
    barrier.wait()
    rel[0] = time.monotonic()
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


if duration:
    print(f"{'clients':>7} {'requests':>8} {'first audio median':>19} {'p90':>7} {'max':>7} "
          f"{'steady RTF':>11} {'whole RTF':>10}" + (f"  ({procs} client processes, {duration:g} s)"))
    for conc in levels:
        for _ in range(rounds):
            res, wall = run_round(conc)
            bad = [r for r in res if r[0] != 200]
            firsts = sorted(r[1] for r in res if r[1] is not None) or [float("nan")]
            p90 = firsts[min(len(firsts) - 1, int(0.9 * len(firsts)))]
            steady = sum(r[5] for r in res) / (0.75 * duration)
            why = {}
            for r in bad:
                why[r[6]] = why.get(r[6], 0) + 1
            print(f"{conc:>7} {len(res):>8} {1e3 * statistics.median(firsts):>16.0f} ms "
                  f"{1e3 * p90:>4.0f} ms {1e3 * firsts[-1]:>4.0f} ms {steady:>10.2f}x "
                  f"{sum(r[2] for r in res) / wall:>9.2f}x"
                  + (f"  ({len(bad)} failed: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items())) + ")"
                     if bad else ""), flush=True)
    sys.exit(0)

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
