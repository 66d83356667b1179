#!/usr/bin/env python3
"""WebSocket input-streaming latency of `pocket-tts serve` (GET /v1/tts/stream-input): C clients
at once, each speaking sentences word by word the way an LLM writes them (a word every
--word-ms). The figure is the time from a sentence's last piece ("word. ", the space completes
the sentence) to the first audio byte after it, client side: the queue wait, the text prompt and
the first frame. Each sentence is an utterance of its own (first message, words, then a cancel
once its first audio has come: the rest of its audio would only load the machine), so every
measurement starts with the client's request admitted and waiting for text. Prints figures, never assertions (Debian python3-websockets).

Usage: ws_latency.py URL [CONCURRENCY ...] [--sentences N] [--word-ms MS]
   URL: ws://HOST:PORT/v1/tts/stream-input
"""
import asyncio
import json
import statistics
import sys
import time

import websockets

args = sys.argv[1:]
sentences, word_ms = 3, 20
for name in ("--sentences", "--word-ms"):
    if name in args:
        i = args.index(name)
        if name == "--sentences":
            sentences = int(args[i + 1])
        else:
            word_ms = float(args[i + 1])
        del args[i:i + 2]
url = args[0]
levels = [int(a) for a in args[1:]] or [1, 16]
SENTENCE = "The quick brown fox jumps over the lazy dog."


async def client(lat):
    async with websockets.connect(url, max_size=None) as ws:
        for _ in range(sentences):
            # one utterance per sentence: its first message is admitted while the words arrive
            await ws.send(json.dumps({"idle_flush_ms": 0}))
            words = SENTENCE.split(" ")
            for w in words[:-1]:
                await ws.send(json.dumps({"text": w + " "}))
                await asyncio.sleep(word_ms / 1000)
            t0 = time.perf_counter()
            await ws.send(json.dumps({"text": words[-1] + " "}))
            first = None
            while True:
                m = await ws.recv()
                if isinstance(m, bytes):
                    if first is None:
                        first = time.perf_counter() - t0
                        await ws.send(json.dumps({"cancel": True}))
                elif json.loads(m)["type"] in ("done", "error"):
                    break
            lat.append(first)


async def round_of(conc):
    lat = []
    t0 = time.perf_counter()
    await asyncio.gather(*(client(lat) for _ in range(conc)))
    return lat, time.perf_counter() - t0


print(f"{'clients':>7} {'last piece -> first audio: median':>34} {'p90':>8} {'max':>8} "
      f"{'sentences':>9} {'wall':>7}")
for conc in levels:
    lat, wall = asyncio.run(round_of(conc))
    ok = [x * 1000 for x in lat if x is not None]
    ok.sort()
    p90 = ok[min(len(ok) - 1, int(0.9 * len(ok)))] if ok else float("nan")
    print(f"{conc:>7} {statistics.median(ok) if ok else float('nan'):>31.0f} ms {p90:>5.0f} ms "
          f"{max(ok) if ok else float('nan'):>5.0f} ms {len(ok):>9} {wall:>6.1f}s", flush=True)
