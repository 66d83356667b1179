#!/usr/bin/env python3
"""Latency of streaming synthesis over Wyoming: the time from a sentence's last piece to its first
audio byte, client side, with C clients at once. Each client opens synthesize-start, sends the
words of a sentence as an LLM would (one piece every --gap ms), the last one ending in ". " (the
sentence is complete with that piece: no idle flush involved), and times from that send to the
first audio-chunk; then it sends synthesize-stop and reads to synthesize-stopped. Prints median
and max per concurrency over every client and round. Figures, never assertions.

The server: `pocket-tts serve --wyoming-port PORT ...` or `pocket-tts wyoming --port PORT ...`.

Usage: wyoming_latency.py HOST PORT [CONCURRENCY ...] [--rounds N] [--gap MS] [--voice NAME]
"""
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "server"))
from wyoming_client import Client  # noqa: E402

args = sys.argv[1:]


def option(name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return v
    return default


rounds = int(option("--rounds", "3"))
gap = float(option("--gap", "30")) / 1000
voice = option("--voice", None)
if len(args) < 2:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
host, port = args[0], int(args[1])
levels = [int(a) for a in args[2:]] or [1, 16]
WORDS = ["The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog. "]


def client(out):
    c = Client(host, port, timeout=600)
    try:
        c.stream_start(voice)
        for w in WORDS[:-1]:
            c.chunk(w)
            time.sleep(gap)
        t0 = time.perf_counter()
        c.chunk(WORDS[-1])
        first = None
        while first is None:
            t, d, _ = c.read_event()
            if t == "audio-chunk":
                first = time.perf_counter() - t0
            elif t == "error":
                raise RuntimeError(d.get("text"))
        c.send("synthesize-stop")
        c.audio("synthesize-stopped")
        out.append(first)
    finally:
        c.close()


for n in levels:
    lat = []
    t_start = time.perf_counter()
    for _ in range(rounds):
        ths = [threading.Thread(target=client, args=(lat,)) for _ in range(n)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
    wall = time.perf_counter() - t_start
    if len(lat) != n * rounds:
        print(f"{n:3d} clients: {n * rounds - len(lat)} of {n * rounds} failed")
    if lat:
        print(f"{n:3d} clients: last piece -> first audio median {statistics.median(lat) * 1000:.0f}"
              f" ms, max {max(lat) * 1000:.0f} ms ({len(lat)} utterances, {wall:.1f} s)",
              flush=True)
