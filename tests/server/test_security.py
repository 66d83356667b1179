#!/usr/bin/env python3
"""End-to-end tests of what `pocket-tts serve` refuses (docs/security.md), on loopback only.

Voice URLs: by default a request naming http://127.0.0.1:PORT/..., https://127.0.0.1:PORT/...,
https://localhost:PORT/..., an IPv4-mapped loopback or the metadata address is refused and a
listener on that port sees no connection; with --voice-urls any the same listener does see one
(the control), a file over --voice-url-max-mb and a server that never answers
(--voice-url-timeout) are refused; with --voice-urls none every URL is. Errors name no server
path. Text: invalid UTF-8 and control characters give 400 with the byte offset. Past
--max-connections: 503 with Retry-After, counted in /metrics. A 20 MB body over the limit gives
Python's urllib a 413 (not a reset). One log line per request. /ready fails at once on SIGTERM
and new syntheses get 503 while a stream in flight still finishes, then the server exits 0.

Usage: test_security.py POCKET_TTS FIXTURES_DIR
"""
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from e2e_util import check, failures, finish, start_server

BIN, FX = sys.argv[1], sys.argv[2]
MODEL = ["--config", f"{FX}/tiny/manifest.json", "--weights", f"{FX}/tiny/model.safetensors"]
GEN = ["--temperature", "0", "--eos-threshold", "1e9"]
tmp = tempfile.mkdtemp(prefix="ptts_sec_")
os.environ["HOME"] = tmp  # the URL cache (~/.cache/pocket_tts) lives in the test's folder
os.environ["HF_HOME"] = os.path.join(tmp, "hf")
servers = []


class Listener:
    """A TCP listener on loopback that counts the connections it accepts (and never answers)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns = []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(c)


class Files(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.lstrip("/")
        data = open(os.path.join(FX, "audio", "voice_24k.wav"), "rb").read() if path == "v.wav" \
            else b"\0" * (3 << 20)
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:  # the server stops reading a file over its limit
            pass

    def log_message(self, *a):
        pass


def serve(extra, name):
    log = os.path.join(tmp, name + ".log")
    proc, port, text = start_server([BIN, "serve", *MODEL, *GEN, "--voice",
                                     f"{FX}/tiny/voice.safetensors", "--host", "127.0.0.1",
                                     "--port", "0", *extra], log, wait_s=20)
    servers.append(proc)
    if not check(port is not None, f"{name}: server starts"):
        print(text)
        sys.exit(1)
    return proc, port, log


def request(port, method, path, body=None, headers=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, hdrs, data


def speech(port, payload, raw=None, **kw):
    body = raw if raw is not None else json.dumps(payload).encode()
    return request(port, "POST", "/v1/audio/speech", body, {"Content-Type": "application/json"},
                   **kw)


def message(data):
    try:
        return json.loads(data)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return None


def no_server_path(msg):
    return msg is not None and tmp not in msg and ".cache" not in msg and FX not in msg


try:
    # ---- default server: public voice URLs only ----------------------------------------------
    # --drain-timeout 120: the stream in flight at SIGTERM below is ~470 s of audio, which a
    # sanitizer build on a loaded machine takes longer than the default 30 s to generate
    proc, port, log = serve(["--max-connections", "6", "--max-text-chars", "2000", "--client-buffer", "3600",
                             "--voice-url-timeout", "5", "--drain-timeout", "120"], "public")
    lst = Listener()
    for url in [f"http://127.0.0.1:{lst.port}/v.wav", f"https://127.0.0.1:{lst.port}/v.wav",
                f"https://localhost:{lst.port}/v.wav", f"https://[::1]:{lst.port}/v.wav",
                f"https://[::ffff:127.0.0.1]:{lst.port}/v.wav", "https://169.254.169.254/latest",
                "https://10.0.0.1/v.wav", "https://0.0.0.0/v.wav"]:
        st, _, data = speech(port, {"input": "hello", "voice": url, "response_format": "wav"})
        m = message(data)
        check(st == 400 and no_server_path(m), f"voice {url}: 400 {m!r}")
    b = "----b"
    form = (f"--{b}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nhello\r\n"
            f"--{b}\r\nContent-Disposition: form-data; name=\"voice_url\"\r\n\r\n"
            f"https://localhost:{lst.port}/v.wav\r\n--{b}--\r\n").encode()
    st, _, data = request(port, "POST", "/tts", form,
                          {"Content-Type": f"multipart/form-data; boundary={b}"})
    check(st == 400, f"/tts voice_url to localhost: {st} {message(data)!r}")
    time.sleep(0.3)
    check(lst.accepted == 0, f"the loopback listener saw no connection ({lst.accepted})")

    # ---- text ---------------------------------------------------------------------------------
    st, _, data = speech(port, None, raw=b'{"input":"\xff\xfe\xfd"}')
    check(st == 400 and "byte offset 0" in (message(data) or ""),
          f"invalid UTF-8: {st} {message(data)!r}")
    st, _, data = speech(port, None, raw=b'{"input":"ok \xc3\x28"}')
    check(st == 400 and "byte offset 3" in (message(data) or ""),
          f"invalid UTF-8 mid-text: {st} {message(data)!r}")
    st, _, data = speech(port, {"input": "ab\x01c"})
    check(st == 400 and "U+0001" in (message(data) or "") and "offset 2" in (message(data) or ""),
          f"control character: {st} {message(data)!r}")
    st, _, data = speech(port, None, raw=b'{"input":"a\\u0000b"}')
    check(st == 400, f"escaped NUL: {st} {message(data)!r}")
    st, _, data = speech(port, {"input": "x" * 2001})
    check(st == 400, f"text over --max-text-chars: {st}")
    st, _, data = speech(port, {"input": "tab\tand\nlines\r\nare fine", "response_format": "wav",
                                "stream": False})
    check(st == 200 and data[:4] == b"RIFF", f"tab, LF and CR accepted: {st}")

    # ---- early 413 to a client that writes its whole body first (urllib) ------------------------
    big = b'{"input":"' + b"a" * (20 << 20) + b'"}'
    try:
        urllib.request.urlopen(urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/audio/speech", data=big,
            headers={"Content-Type": "application/json"}), timeout=60)
        check(False, "urllib 20 MB body: no error")
    except urllib.error.HTTPError as e:
        check(e.code == 413, f"urllib 20 MB body: HTTP {e.code}")
    except OSError as e:
        check(False, f"urllib 20 MB body: {e!r} instead of 413")
    st, _, _ = request(port, "GET", "/health")
    check(st == 200, "healthy after the 20 MB body")

    # ---- connection limit ---------------------------------------------------------------------
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(12)]
    time.sleep(0.3)
    st, hdrs, data = request(port, "GET", "/health", timeout=10)
    check(st == 503 and hdrs.get("retry-after") == "1",
          f"past --max-connections: {st} Retry-After {hdrs.get('retry-after')}")
    for s_ in idle:
        s_.close()
    time.sleep(0.5)
    st, _, data = request(port, "GET", "/metrics")
    refused = [ln for ln in data.decode().splitlines()
               if ln.startswith("ptts_connections_refused_total ")]
    check(st == 200 and refused and float(refused[0].split()[1]) >= 1,
          f"/metrics counts the refusal: {refused}")

    # ---- /health, /ready and the drain --------------------------------------------------------
    st, _, _ = request(port, "GET", "/ready")
    check(st == 200, "/ready before SIGTERM: 200")
    # a stream in flight: its client reads nothing until after the signal, so the server is
    # still writing it (the tiny model is faster than any socket buffer)
    body = json.dumps({"input": "a long sentence to speak. " * 70,
                       "response_format": "pcm"}).encode()
    stream = socket.create_connection(("127.0.0.1", port), timeout=60)
    stream.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: "
                   b"application/json\r\nContent-Length: " + str(len(body)).encode() +
                   b"\r\n\r\n" + body)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    st, hdrs, _ = request(port, "GET", "/ready")
    check(st == 503 and hdrs.get("connection", "").lower() == "close",
          f"/ready during the drain: {st}")
    st, hdrs, _ = speech(port, {"input": "hello"})
    check(st == 503 and hdrs.get("retry-after") == "1", f"a new synthesis during the drain: {st}")
    got = b""
    while True:
        part = stream.recv(1 << 16)
        if not part:
            break
        got += part
    stream.close()
    check(got.startswith(b"HTTP/1.1 200") and got.endswith(b"0\r\n\r\n") and len(got) > 1 << 20,
          f"the stream in flight finished: {got[:15]!r}, {len(got)} bytes")
    try:
        rc = proc.wait(30)
    except Exception:
        rc = None
    check(rc == 0, f"exit status after the drain: {rc}")
    text = open(log).read()
    check("POST /v1/audio/speech 200 bytes=" in text and "first_audio_ms=" in text,
          "one log line per request")
    check("GET /ready 503" in text, "the log has /ready's 503")

    # ---- --voice-urls any: the listener as a control, size and time limits ---------------------
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Files)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    fport = httpd.server_address[1]
    proc, port, log = serve(["--voice-urls", "any", "--voice-url-max-mb", "1",
                             "--voice-url-timeout", "2"], "any")
    st, _, data = speech(port, {"input": "hello", "voice": f"http://127.0.0.1:{fport}/v.wav",
                                "response_format": "wav", "stream": False})
    check(st == 200 and data[:4] == b"RIFF", f"--voice-urls any: a loopback voice URL: {st}")
    st, _, data = speech(port, {"input": "hello", "voice": f"http://127.0.0.1:{fport}/big.wav"})
    check(st == 400 and no_server_path(message(data)),
          f"voice over --voice-url-max-mb: {st} {message(data)!r}")
    t0 = time.time()
    st, _, data = speech(port, {"input": "hello", "voice": f"http://127.0.0.1:{lst.port}/v.wav"})
    dt = time.time() - t0
    check(st == 502 and dt < 10 and lst.accepted >= 1,
          f"a voice URL that never answers: {st} after {dt:.1f} s ({lst.accepted} connection)")
    check(no_server_path(message(data)), f"its message names no path: {message(data)!r}")
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    httpd.shutdown()

    # ---- --voice-urls none ---------------------------------------------------------------------
    proc, port, log = serve(["--voice-urls", "none"], "none")
    st, _, data = speech(port, {"input": "hello", "voice": "hf://kyutai/tts-voices/x.wav"})
    check(st == 400, f"--voice-urls none: {st} {message(data)!r}")
finally:
    for p in servers:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)

finish()
