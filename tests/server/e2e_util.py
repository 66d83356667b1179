"""Shared by the Python end-to-end tests: check() and its failures list, and starting
`pocket-tts serve --port 0 ...` to learn its port from the line it prints."""
import re
import subprocess
import time

failures = []


def check(cond, what):
    """Print ok / FAIL for one check and remember a failure; returns cond."""
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def start_server(argv, log_path, wait_s=30.0):
    """Popen argv (the whole serve command line), stdout and stderr to log_path. Returns
    (process, port or None, the log so far); None when the server exits or prints no port
    within wait_s."""
    log = open(log_path, "w+")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    port = None
    deadline = time.time() + wait_s
    while time.time() < deadline:
        log.seek(0)
        m = re.search(r"serving on http://[^:]+:(\d+)", log.read())
        if m:
            port = int(m.group(1))
            break
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    log.seek(0)
    text = log.read()
    log.close()
    return proc, port, text
