#!/usr/bin/env python3
"""A loopback mock of the Hugging Face hub for the download tests.

Usage: hf_mock.py PORT_FILE FIXTURES_DIR
Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening) and answers like the hub:
  HEAD/GET /{org}/{name}/resolve/{revision}/{path}
    LFS files: 302 to /cdn/{key} with X-Repo-Commit, X-Linked-Etag (sha256), X-Linked-Size;
    other files: 200 with ETag (git blob sha1) and X-Repo-Commit.
    404 with X-Error-Code RepositoryNotFound / RevisionNotFound / EntryNotFound.
  kyutai/pocket-tts is gated: 401 without a token, 403 unless it is "Bearer good-token".
  GET /cdn/{key} and /plain/{name}: the bytes, with Range support (206).
  GET /_log: the requests so far as JSON; GET /_reset: forget them and re-arm the faults.
Fault injection: test/repo interrupt.bin hangs up after 50000 bytes of the first full GET;
corrupt.bin announces a sha256 that its bytes do not have.
The tiny fixture model serves as every language's weights (english, german, italian and french
at their MODEL.md 10.6 revisions) with the tiny tokenizer.json; its voice is reshaped to 16
attention heads of 4 (a language's packaged config says 16 heads). test/repo and /plain/ also
hold cfg/tiny.yaml, the tiny config naming ../tok/t.json, for configs named by URL, and
test/repo cfg/weights.yaml, the same naming ../w/model.safetensors as its open weights.
Exits when its parent process dies.
"""
import hashlib
import json
import re
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPEN = "kyutai/pocket-tts-without-voice-cloning"
GATED = "kyutai/pocket-tts"
# MODEL.md 10.6: the revisions of english, german, italian and french
OPEN_EN = "e7205b6ee50e654a5ea19f0e9df2b0813b05e921"
OPEN_TOK_EN = "00eac05ed3d16bdc3f6b5d598874019c34a89214"
OPEN_W = "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"  # de/it weights, tokenizers; the voices
OPEN_FR = "8843db76457a91db32077edf8dfcd1c0e3e755fd"
GATED_EN = "983151f13aaeab1b13c1e5e3c2c383d49a9edf3f"
GATED_W = "2dd944b099d06bb9edbd221fef138685711d9bf0"
GATED_EN_2026_04 = "19f95fe2df36e79fbd9f10008595cc4c977a0fcc"
TEST_MAIN = "2" * 40
TEST_PINNED = "3" * 40


def pattern(n, seed):
    out = bytearray()
    x = seed
    while len(out) < n:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out += x.to_bytes(8, "little")
    return bytes(out[:n])


def main():
    port_file, fx = sys.argv[1], sys.argv[2]
    rd = lambda p: open(os.path.join(fx, p), "rb").read()
    model = rd("tiny/model.safetensors")
    # the tiny vocabulary in the layout Kyutai ships (MODEL.md 9.3: a bare Prepend normalizer);
    # the fixture's own file keeps the converter's Precompiled normalizer of its .model
    tj = json.loads(rd("tokenizer/sp_unigram_tiny.tokenizer.json"))
    tj["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"}]}
    tj["model"]["byte_fallback"] = False  # the tiny vocabulary has no byte pieces
    tok_shipped = json.dumps(tj, ensure_ascii=False).encode()
    tok = rd("tokenizer/sp_unigram_tiny.tokenizer.json")  # served as is for the config URLs
    # the packaged configs say 16 heads: the tiny model's 64 wide cache as 16 heads of 4
    voice = re.sub(rb"\[2,1,(\d+),4,16\]", rb"[2,1,\1,16,4]", rd("tiny/voice.safetensors"))
    assert voice != rd("tiny/voice.safetensors")
    cfg = rd("tiny/config.yaml").replace(b"../tokenizer/sp_unigram_tiny.model", b"../tok/t.json")
    assert cfg != rd("tiny/config.yaml")
    cfg_w = cfg.replace(b"weights_path_without_voice_cloning: null",
                        b"weights_path_without_voice_cloning: ../w/model.safetensors")
    assert cfg_w != cfg

    # (repo, revision) -> commit; (repo, commit) -> {path: (bytes, lfs, announced_sha256)}
    revs = {(GATED, GATED_EN): GATED_EN, (GATED, GATED_W): GATED_W,
            (GATED, GATED_EN_2026_04): GATED_EN_2026_04, (OPEN, "main"): OPEN_EN,
            ("test/repo", "main"): TEST_MAIN, ("test/repo", TEST_PINNED): TEST_PINNED}
    for r in (OPEN_EN, OPEN_TOK_EN, OPEN_W, OPEN_FR):
        revs[(OPEN, r)] = r
    files = {}
    for lang, open_rev, tok_rev, gated_rev in (("english", OPEN_EN, OPEN_TOK_EN, GATED_EN),
                                               ("german", OPEN_W, OPEN_W, GATED_W),
                                               ("italian", OPEN_W, OPEN_W, GATED_W),
                                               ("french", OPEN_FR, OPEN_FR, None)):
        files[(OPEN, open_rev, f"languages/{lang}/model.safetensors")] = (model, True, None)
        files[(OPEN, tok_rev, f"languages/{lang}/tokenizer.json")] = (tok_shipped, False, None)
        if gated_rev:
            files[(GATED, gated_rev, f"languages/{lang}/model.safetensors")] = (model, True, None)
    files[(GATED, GATED_EN_2026_04, "languages/english_2026-04/model.safetensors")] = (
        model, True, None)
    for v in ("alba", "marius", "juergen"):
        files[(OPEN, OPEN_W, f"languages/english/embeddings/{v}.safetensors")] = (voice, True, None)
    files[(OPEN, OPEN_W, "languages/german/embeddings/juergen.safetensors")] = (voice, True, None)
    files[(OPEN, OPEN_W, "languages/french/embeddings/estelle.safetensors")] = (voice, True, None)
    ok = pattern(300000, 1)
    for rev in (TEST_MAIN, TEST_PINNED):
        files[("test/repo", rev, "ok.bin")] = (ok, True, None)
        files[("test/repo", rev, "small.txt")] = (b"hello\n", False, None)
        files[("test/repo", rev, "sub/dir/deep.bin")] = (pattern(1000, 2), True, None)
        files[("test/repo", rev, "interrupt.bin")] = (pattern(200000, 3), True, None)
        files[("test/repo", rev, "corrupt.bin")] = (pattern(5000, 4), True,
                                                    hashlib.sha256(b"other").hexdigest())
        files[("test/repo", rev, "big.bin")] = (pattern(4 << 20, 5), True, None)
        files[("test/repo", rev, "cfg/tiny.yaml")] = (cfg, False, None)
        files[("test/repo", rev, "tok/t.json")] = (tok, False, None)
        files[("test/repo", rev, "cfg/weights.yaml")] = (cfg_w, False, None)
        files[("test/repo", rev, "w/model.safetensors")] = (model, True, None)
    plain = {"voice.safetensors": voice, "hello.txt": b"plain hello\n", "noext": b"x" * 10,
             "cfg/tiny.yaml": cfg, "tok/t.json": tok}
    cdn = {}
    for (repo, rev, path), (data, lfs, _) in files.items():
        if lfs:
            cdn[hashlib.sha256((repo + path).encode()).hexdigest()[:24]] = (data, path)

    state = {"log": [], "interrupted": set(), "last": time.time()}
    lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def record(self):
            with lock:
                state["last"] = time.time()
                state["log"].append({"method": self.command, "path": self.path,
                                     "range": self.headers.get("Range"),
                                     "auth": self.headers.get("Authorization")})

        def send(self, code, headers=(), body=b"", head=False):
            self.send_response(code)
            for k, v in headers:
                self.send_header(k, v)
            if not any(k.lower() == "content-length" for k, _ in headers):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head and body:
                self.wfile.write(body)

        def error(self, code, err_code, head):
            self.send(code, [("X-Error-Code", err_code), ("Content-Type", "application/json")],
                      json.dumps({"error": err_code}).encode(), head)

        def serve_bytes(self, data, head, key):
            rng = self.headers.get("Range")
            start = 0
            if rng and rng.startswith("bytes="):
                a, _, b = rng[6:].partition("-")
                start = int(a)
                end = int(b) if b else len(data) - 1
                if start >= len(data):
                    return self.send(416, [("Content-Range", f"bytes */{len(data)}")], b"", head)
                part = data[start:end + 1]
                return self.send(206, [("Content-Range", f"bytes {start}-{start + len(part) - 1}/{len(data)}"),
                                       ("Accept-Ranges", "bytes")], part, head)
            if key and key.endswith("interrupt.bin") and not head:
                with lock:
                    first = key not in state["interrupted"]
                    state["interrupted"].add(key)
                if first:  # announce everything, send a part, hang up
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[:50000])
                    self.wfile.flush()
                    self.close_connection = True
                    return
            self.send(200, [("Accept-Ranges", "bytes")], data, head)

        def handle_any(self, head):
            self.record()
            path = self.path.split("?")[0]
            if path == "/_log":
                with lock:
                    return self.send(200, [("Content-Type", "application/json")],
                                     json.dumps(state["log"]).encode(), head)
            if path == "/_reset":
                with lock:
                    state["log"].clear()
                    state["interrupted"].clear()
                return self.send(200, [], b"ok", head)
            if path.startswith("/cdn/"):
                k = path[5:]
                if k not in cdn:
                    return self.error(404, "EntryNotFound", head)
                data, name = cdn[k]
                return self.serve_bytes(data, head, name)
            if path.startswith("/plain/"):
                name = path[7:]
                if name not in plain:
                    return self.send(404, [], b"not found", head)
                return self.serve_bytes(plain[name], head, None)
            parts = path.lstrip("/").split("/")
            if len(parts) < 5 or parts[2] != "resolve":
                return self.error(404, "RepositoryNotFound", head)
            repo, rev, fpath = parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:])
            if not any(r == repo for r, _ in revs):
                return self.error(401, "RepositoryNotFound", head)
            if repo == GATED:
                auth = self.headers.get("Authorization")
                if not auth:
                    return self.error(401, "GatedRepo", head)
                if auth != "Bearer good-token":
                    return self.error(403, "GatedRepo", head)
            commit = revs.get((repo, rev))
            if not commit:
                return self.error(404, "RevisionNotFound", head)
            f = files.get((repo, commit, fpath))
            if not f:
                return self.error(404, "EntryNotFound", head)
            data, lfs, announced = f
            if lfs:
                key = hashlib.sha256((repo + fpath).encode()).hexdigest()[:24]
                sha = announced or hashlib.sha256(data).hexdigest()
                host = self.headers.get("Host")
                return self.send(302, [("X-Repo-Commit", commit), ("X-Linked-Etag", f'"{sha}"'),
                                       ("X-Linked-Size", str(len(data))), ("ETag", '"cdn-etag"'),
                                       ("Location", f"http://{host}/cdn/{key}?x=1")], b"", head)
            sha1 = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            self.send_response(200)
            self.send_header("X-Repo-Commit", commit)
            self.send_header("ETag", f'"{sha1}"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if not head:
                self.wfile.write(data)

        def do_HEAD(self):
            self.handle_any(True)

        def do_GET(self):
            self.handle_any(False)

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
                super().handle_error(request, client_address)

    srv = Server(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, port_file)
    parent = os.getppid()

    def watchdog():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
