#!/usr/bin/env python3
"""A Wyoming TTS client written from the protocol (docs/PROTOCOLS.md), plain sockets and json:
no `wyoming` package. Used by tests/server/test_wyoming.py and bench/wyoming_latency.py, and
runnable by hand:

    wyoming_client.py HOST PORT describe
    wyoming_client.py HOST PORT synthesize "Hello world." [VOICE] > out.raw
    wyoming_client.py HOST PORT stream "Hello world. This is streamed." [VOICE] > out.raw

(out.raw: s16le mono at the rate of audio-start; `aplay -r 24000 -f S16_LE -t raw out.raw`.)

One event: a JSON header line (type, version, data_length, payload_length), then data_length
bytes of JSON data (merged over the header's "data"), then payload_length bytes of payload.
"""
import json
import socket
import sys
import time

VERSION = "1.9.0"


def encode(etype, data=None, payload=b""):
    """An event's bytes, data in the extra-data block as the reference writers put it."""
    d = json.dumps(data).encode() if data is not None else b""
    header = {"type": etype, "version": VERSION, "data_length": len(d),
              "payload_length": len(payload)}
    return json.dumps(header).encode() + b"\n" + d + payload


class Client:
    def __init__(self, host, port, timeout=60):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, etype, data=None, payload=b""):
        self.sock.sendall(encode(etype, data, payload))

    def send_raw(self, b):
        self.sock.sendall(b)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _line(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def read_event(self):
        """(type, data, payload); EOFError when the server closed the connection."""
        h = json.loads(self._line())
        data = dict(h.get("data") or {})
        dl, pl = h.get("data_length") or 0, h.get("payload_length") or 0
        if dl:
            data.update(json.loads(self._read(dl)))
        payload = self._read(pl) if pl else b""
        return h["type"], data, payload

    def closed(self, timeout=5):
        """True when the server closes the connection within timeout (events before are read)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                self.read_event()
        except (EOFError, ConnectionError):
            return True
        except (socket.timeout, ValueError):
            return False

    def describe(self):
        self.send("describe")
        return self.read_event()

    def audio(self, until):
        """Read events up to one of type `until`: (events [(type, data)], PCM bytes, the
        time of the first audio-chunk or None). An error event ends it too."""
        events, pcm, t_first = [], b"", None
        while True:
            t, d, p = self.read_event()
            events.append((t, d))
            if t == "audio-chunk":
                if t_first is None:
                    t_first = time.time()
                pcm += p
            if t == until or t == "error":
                return events, pcm, t_first

    def synthesize(self, text, voice=None):
        data = {"text": text}
        if voice:
            data["voice"] = {"name": voice}
        self.send("synthesize", data)
        return self.audio("audio-stop")

    def stream_start(self, voice=None):
        self.send("synthesize-start", {"voice": {"name": voice}} if voice else {})

    def chunk(self, text):
        self.send("synthesize-chunk", {"text": text})

    def stream(self, pieces, voice=None, duplicate=True):
        """Streaming synthesis of pieces (sent at once), with the whole text repeated as a
        `synthesize` before synthesize-stop as Home Assistant does."""
        self.stream_start(voice)
        for p in pieces:
            self.chunk(p)
        if duplicate:
            self.send("synthesize", {"text": "".join(pieces)})
        self.send("synthesize-stop")
        return self.audio("synthesize-stopped")


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    c = Client(argv[1], int(argv[2]))
    cmd = argv[3]
    if cmd == "describe":
        print(json.dumps(c.describe()[1], indent=2))
        return 0
    text = argv[4] if len(argv) > 4 else "Hello world."
    voice = argv[5] if len(argv) > 5 else None
    if cmd == "synthesize":
        events, pcm, _ = c.synthesize(text, voice)
    elif cmd == "stream":
        words = text.split(" ")
        events, pcm, _ = c.stream([w + " " for w in words[:-1]] + words[-1:], voice)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for t, d in events:
        if t == "error":
            print("error: " + d.get("text", ""), file=sys.stderr)
            return 1
    sys.stdout.buffer.write(pcm)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
