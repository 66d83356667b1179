"""Three `pocket-tts serve` replicas on the tiny fixture model behind haproxy (docs/haproxy.cfg),
all on loopback: 32 clients through haproxy while each replica in turn is stopped with SIGTERM
(it drains and exits 0) and started again; every request must be answered completely, or with a
503 + Retry-After that the client retries. Then one replica is killed with SIGKILL while it
streams: its streams must end as truncated chunked streams (an error the client sees), the
others complete, and new requests go to the two left.

Usage: test_haproxy.py POCKET_TTS FIXTURES_DIR DOCS_DIR HAPROXY"""
import http.client
import json
import os
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

BIN, FX, DOCS, HAPROXY = sys.argv[1:5]
tmp = tempfile.mkdtemp(prefix="ptts_haproxy_")
vdir = os.path.join(tmp, "voices")
os.makedirs(vdir)
shutil.copy(f"{FX}/tiny/voice.safetensors", os.path.join(vdir, "tiny.safetensors"))
TEXT = "Hello from behind the load balancer."
LONG = "This sentence is streamed by a replica that is about to be killed. " * 60


def free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


ports = [free_port() for _ in range(3)]
lb_port = free_port()
procs = [None, None, None]


def start_replica(i):
    argv = [BIN, "serve", "--config", f"{FX}/tiny/manifest.json", "--weights", f"{FX}/tiny/model.safetensors",
            "--voices-dir", vdir, "--voice", "tiny", "--host", "127.0.0.1", "--port", str(ports[i]),
            "--threads", "1", "--max-concurrent", "8", "--queue", "16", "--drain-timeout", "20",
            "--temperature", "0", "--eos-threshold", "1e9", "--log-level", "warn"]
    proc, port, log = start_server(argv, os.path.join(tmp, f"r{i}.log"), wait_s=60)
    check(port == ports[i], f"replica {i + 1} serves on {ports[i]}" + ("" if port else f": {log[-300:]}"))
    procs[i] = proc


for i in range(3):
    start_replica(i)
env = dict(os.environ, PTTS_LB_BIND=f"127.0.0.1:{lb_port}",
           **{f"PTTS_R{i + 1}": f"127.0.0.1:{ports[i]}" for i in range(3)})
hlog = open(os.path.join(tmp, "haproxy.log"), "w")
# -n: the config's maxconn would need about 8000 descriptors, more than a CI user may have
lb = subprocess.Popen([HAPROXY, "-db", "-n", "256", "-f", f"{DOCS}/haproxy.cfg"], env=env, stdout=hlog,
                      stderr=subprocess.STDOUT)


def request(text, timeout=60, hold=None):
    """POST a streamed PCM speech request through haproxy: (status, headers, body, complete);
    complete is False when the chunked stream was cut (no last chunk) or the connection broke.
    hold: an Event; the first 4 KiB read, the rest only once it is set (the stream stays open on
    its replica meanwhile: the socket buffers hold far less than the whole answer)."""
    c = http.client.HTTPConnection("127.0.0.1", lb_port, timeout=timeout)
    try:
        c.request("POST", "/v1/audio/speech", json.dumps({"input": text, "response_format": "pcm"}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        first = b""
        try:
            if hold is not None:
                first = r.read(4096)
                hold.wait(timeout)
            body = r.read()
            return r.status, dict(r.getheaders()), first + body, True
        except (http.client.IncompleteRead, OSError) as ex:
            part = ex.partial if isinstance(ex, http.client.IncompleteRead) else b""
            return r.status, dict(r.getheaders()), first + part, False
    except (OSError, http.client.HTTPException) as ex:
        return None, {}, repr(ex).encode(), False
    finally:
        c.close()


ready = False
for _ in range(200):
    st, h, ref, done = request(TEXT, timeout=5)
    if st == 200 and done:
        ready = True
        break
    time.sleep(0.05)
check(ready and len(ref) > 0, f"haproxy forwards to the replicas ({len(ref)} bytes)")
if not ready:
    lb.kill()
    for p in procs:
        p.kill()
    hlog.close()
    with open(os.path.join(tmp, "haproxy.log")) as f:
        print(f.read()[-2000:])
    sys.exit(1)

# ---- 32 clients while every replica is restarted in turn
stop = threading.Event()
lock = threading.Lock()
stats = {"ok": 0, "retried_503": 0, "bad": []}


def client():
    while not stop.is_set():
        for attempt in range(20):
            st, h, body, done = request(TEXT)
            if st == 503 and done and h.get("Retry-After"):
                with lock:
                    stats["retried_503"] += 1
                time.sleep(0.05)
                continue
            with lock:
                if st == 200 and done and body == ref:
                    stats["ok"] += 1
                else:
                    stats["bad"].append((st, done, len(body), body[:200]))
            break


ths = [threading.Thread(target=client) for _ in range(32)]
for t in ths:
    t.start()
time.sleep(1.0)
for i in range(3):
    n0 = stats["ok"]
    procs[i].send_signal(signal.SIGTERM)
    try:
        rc = procs[i].wait(timeout=30)
    except subprocess.TimeoutExpired:
        rc = "still running after 30 s"
    check(rc == 0, f"replica {i + 1}: SIGTERM mid-run, drained and exited {rc}")
    start_replica(i)
    time.sleep(1.5)  # two health checks bring it back
    check(stats["ok"] > n0, f"requests kept being answered around replica {i + 1}'s restart")
stop.set()
for t in ths:
    t.join(timeout=60)
check(not stats["bad"], f"rolling restart: {stats['ok']} answered completely, {stats['retried_503']} "
      f"clean 503s retried, {len(stats['bad'])} other answers {stats['bad'][:3]}")
check(stats["ok"] >= 50, f"rolling restart: enough requests went through ({stats['ok']})")

# ---- SIGKILL one replica mid-stream: its streams are cut (the client sees it), others complete.
# The clients stop reading after their first 4 KiB until the kill: on a fast machine the tiny
# model generates a whole answer (~23 MB) in well under a second, so without this the streams
# could end before the kill, and a cut would depend on timing.
results = []
resume = threading.Event()


def streamer():
    results.append(request(LONG, timeout=60, hold=resume))


streams = [threading.Thread(target=streamer) for _ in range(6)]
for t in streams:
    t.start()
active = False
for _ in range(400):  # every replica streams (leastconn spreads the six)
    n = 0
    for p in ports:
        try:
            c = http.client.HTTPConnection("127.0.0.1", p, timeout=2)
            c.request("GET", "/metrics")
            m = c.getresponse().read().decode()
            c.close()
            n += any(line.startswith("ptts_active_streams ") and line != "ptts_active_streams 0"
                     for line in m.splitlines())
        except OSError:
            pass
    if n == 3:
        active = True
        break
    time.sleep(0.01)
check(active, "the six streams run on all three replicas")
procs[0].kill()
procs[0].wait()
resume.set()
for t in streams:
    t.join(timeout=90)
cut = [r for r in results if not r[3]]
whole = [r for r in results if r[0] == 200 and r[3]]
check(len(results) == 6 and len(cut) >= 1 and len(cut) + len(whole) == 6,
      f"SIGKILL mid-stream: {len(cut)} stream(s) cut, detected by the client; {len(whole)} complete")
check(all(len(r[2]) > 0 for r in whole) and len({r[2] for r in whole}) <= 1,
      "the streams on the other replicas are whole")
after = [request(TEXT) for _ in range(12)]
check(all(st == 200 and done and body == ref for st, h, body, done in after),
      f"after the kill, new requests go to the replicas left: {[a[0] for a in after]}")

for p in procs[1:]:
    p.send_signal(signal.SIGTERM)
for p in procs[1:]:
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
lb.terminate()
lb.wait(timeout=10)
hlog.close()
if failures:
    for name in ["haproxy.log", "r0.log", "r1.log", "r2.log"]:
        with open(os.path.join(tmp, name)) as f:
            print(f"---- {name}\n{f.read()[-2000:]}")
shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
