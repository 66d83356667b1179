"""Shared by the Python end-to-end tests: check() and its failures list, starting
`pocket-tts serve --port 0 ...` to learn its port from the line it prints, and finish(), which
fails the test when a server's log holds a sanitizer report (a -DPTTS_SANITIZE=ON build)."""
import atexit
import re
import subprocess
import sys
import time

failures = []
# Every server log, kept open for reading: finish() reads it even after a test has removed its
# temporary folder (the open file outlives the unlink).
_logs = []
# The first line of an AddressSanitizer / LeakSanitizer report, UBSan's diagnostic line, and the
# SUMMARY line every sanitizer ends its report with.
_SANITIZER = re.compile(r"ERROR: (Address|Leak)Sanitizer|: runtime error: |SUMMARY: \w+Sanitizer")


def check(cond, what):
    """Print ok / FAIL for one check and remember a failure; returns cond."""
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def sanitized(binary):
    """True when binary is an AddressSanitizer build (-DPTTS_SANITIZE=ON): slower, so a test
    can allow for it."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def watch_log(path):
    """Keep the log at path (a server's stdout and stderr) for finish() to scan."""
    _logs.append((path, open(path, "r", errors="replace")))


def _reports():
    """(path, the text from its first sanitizer report on) for each watched log that has one."""
    found = []
    for path, f in _logs:
        f.seek(0)
        text = f.read()
        m = _SANITIZER.search(text)
        if m:
            found.append((path, text[text.rfind("\n", 0, m.start()) + 1:][:6000]))
    return found


def finish():
    """The end of a test: a failure for each log with a sanitizer report (a report that did not
    stop the server, or a leak found at its exit, would otherwise pass), then the failure
    count, and exit 1 on any failure."""
    global _finished
    _finished = True
    bad = dict(_reports())
    for path, _ in _logs:
        if not check(path not in bad, f"no sanitizer report in {path}"):
            print(bad[path])
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


def _at_exit():
    # a test stopped early (an exception, a server that died) has already failed: the report
    # that explains it is printed here
    if not _finished:
        for path, text in _reports():
            print(f"a sanitizer report in {path}:\n{text}")


_finished = False
atexit.register(_at_exit)


def start_server(argv, log_path, wait_s=30.0):
    """Popen argv (the whole serve command line), stdout and stderr to log_path. Returns
    (process, port or None, the log so far); None when the server exits or prints no port
    within wait_s."""
    log = open(log_path, "w+")
    watch_log(log_path)
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
