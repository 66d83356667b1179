#!/usr/bin/env python3
"""Load test of `pocket-tts serve`: C clients at once, each POSTs /v1/audio/speech (pcm, streamed)
and reads to the end. Prints per concurrency: time to the first audio byte (median and max over
the clients), the audio each got, and the aggregate real-time factor (all audio seconds / wall
seconds of the round). Prints figures, never assertions.

Usage: server_load.py URL [CONCURRENCY ...] [--text TEXT] [--rounds N]
"""
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

args = sys.argv[1:]
text = "The quick brown fox jumps over the lazy dog, then it runs far away into the forest."
rounds = 1
if "--text" in args:
    i = args.index("--text")
    text = args[i + 1]
    del args[i:i + 2]
if "--rounds" in args:
    i = args.index("--rounds")
    rounds = int(args[i + 1])
    del args[i:i + 2]
url = urllib.parse.urlparse(args[0])
levels = [int(a) for a in args[1:]] or [1, 4, 16]


def client(out):
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/audio/speech",
              json.dumps({"input": text, "response_format": "pcm", "stream": True}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    first = None
    n = 0
    while True:
        b = r.read1(65536)
        if not b:
            break
        if first is None:
            first = time.perf_counter() - t0
        n += len(b)
    out.append((r.status, first, n / 2 / 24000, time.perf_counter() - t0))
    c.close()


print(f"{'clients':>7} {'first audio median':>19} {'max':>8} {'audio/client':>13} {'wall':>7} {'aggregate RTF':>14}")
for conc in levels:
    for _ in range(rounds):
        res = []
        ths = [threading.Thread(target=client, args=(res,)) for _ in range(conc)]
        t0 = time.perf_counter()
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        wall = time.perf_counter() - t0
        bad = [r for r in res if r[0] != 200]
        firsts = [r[1] for r in res if r[1] is not None]
        audio = sum(r[2] for r in res)
        print(f"{conc:>7} {1e3 * statistics.median(firsts):>16.0f} ms {1e3 * max(firsts):>5.0f} ms "
              f"{audio / conc:>11.2f} s {wall:>6.2f}s {audio / wall:>13.2f}x" + (f"  ({len(bad)} failed)" if bad else ""),
              flush=True)
