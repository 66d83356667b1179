"""speech-dispatcher's own daemon with sd_pocket-tts, driven by its Python client (python3-speechd)
and spd-say: a private config dir and socket, the module added with AddModule, the daemon's
audio (server audio: the module sends it, the daemon plays it) through ALSA into a file (an
~/.asoundrc "file" PCM on the "null" one, under a private HOME). Checks: the voices are listed,
a message is spoken (BEGIN, END, non-silent audio in the file), rate changes the duration, the
voice changes the audio, a stop ends a long message at once.
Usage: daemon.py SD_POCKET_TTS FIXTURES_DIR TMP_DIR"""
import os
import subprocess
import sys
import threading
import time

import speechd

from sdproto import peak, write_config

binary, fx, tmp = sys.argv[1:4]
conf = os.path.join(tmp, "conf")
home = os.path.join(tmp, "home")
os.makedirs(os.path.join(conf, "modules"), exist_ok=True)
os.makedirs(home, exist_ok=True)
os.replace(write_config(tmp, fx), os.path.join(conf, "modules", "pocket-tts.conf"))
raw = os.path.join(tmp, "out.raw")
with open(os.path.join(conf, "speechd.conf"), "w") as f:
    f.write('AudioOutputMethod "alsa"\n'
            f'AddModule "pocket-tts" "{binary}" "pocket-tts.conf"\n'
            'DefaultModule "pocket-tts"\n'
            'DefaultLanguage "en"\n'
            'DefaultVolume 100\n'
            'LogLevel 3\n')
with open(os.path.join(home, ".asoundrc"), "w") as f:
    f.write(f'pcm.!default {{\n type file\n slave.pcm "null"\n file "{raw}"\n format "raw"\n}}\n')
sock = os.path.join(tmp, "speechd.sock")
env = dict(os.environ, HOME=home, XDG_RUNTIME_DIR=tmp, XDG_CONFIG_HOME=os.path.join(home, ".config"))
env.pop("SPEECHD_ADDRESS", None)
logdir = os.path.join(tmp, "log")
os.makedirs(logdir, exist_ok=True)
daemon = subprocess.Popen(["speech-dispatcher", "-s", "-t", "0", "-C", conf, "-c", "unix_socket",
                           "-S", sock, "-L", logdir, "-l", "3"],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
fails = 0


def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1


def show_logs():
    for name in sorted(os.listdir(logdir)):
        with open(os.path.join(logdir, name), errors="replace") as f:
            print(f"--- {name} (last lines)\n" + "".join(f.readlines()[-25:]))


for _ in range(100):
    if os.path.exists(sock) or daemon.poll() is not None:
        break
    time.sleep(0.1)
if not os.path.exists(sock):
    print("FAIL: the daemon did not start")
    show_logs()
    daemon.kill()
    sys.exit(1)

client = speechd.SSIPClient("e2e_speechd", address=f"unix_socket:{sock}", autospawn=False)
events = []  # (message id, event type, time) of every event the daemon sent this client
cond = threading.Condition()


def on_event(msg_id, client_id, kind, index_mark=None):
    with cond:
        events.append((msg_id, kind, time.time()))
        cond.notify_all()


# Every event of the connection, not speak()'s callback: python3-speechd hands an event to that
# callback only once speak() has registered it under the message id of the daemon's reply
# (225), dropping those that came before (a TODO in its SSIPClient.speak), and the daemon can
# send 701 BEGIN before 225 (seen under CPU load). A lost BEGIN left the cancel check waiting
# 30 s, then cancelling a message already played whole.
client._conn.set_callback(on_event)


def wait_event(msg_id, kinds, timeout=30):
    """The first event of message msg_id among kinds and when it came, or (None, None) after
    timeout seconds."""
    t_end = time.time() + timeout
    with cond:
        while True:
            got = next(((k, t) for m, k, t in events if m == msg_id and k in kinds), None)
            left = t_end - time.time()
            if got is not None or left <= 0:
                return got or (None, None)
            cond.wait(left)


def audio_size():
    return os.path.getsize(raw) if os.path.exists(raw) else 0


def say(text, stop_after=None):
    """Speak text; the samples the daemon wrote, the ending event (None when there was no
    BEGIN before it, or none at all), the seconds it took: from the start, or with stop_after
    (cancel that long after BEGIN) from the cancel to the ending event."""
    with cond:
        events.clear()
    before = audio_size()
    t0 = time.time()
    msg_id = int(client.speak(text)[2][0])
    begun = wait_event(msg_id, (speechd.CallbackType.BEGIN,))[0] is not None
    if stop_after is not None:
        time.sleep(stop_after)
        t0 = time.time()
        client.cancel()
    end, t_end = wait_event(msg_id, (speechd.CallbackType.END, speechd.CallbackType.CANCEL))
    if not begun:
        end = None
    dt = (t_end or time.time()) - t0
    time.sleep(0.2)  # the daemon writes the last period after it reports the end
    with open(raw, "rb") as f:
        f.seek(before)
        pcm = f.read()
    return pcm, end, dt


try:
    client.set_output_module("pocket-tts")
    voices = client.list_synthesis_voices()
    check(("tinya", "en", "none") in voices and ("tinyb", "en", "none") in voices,
          f"list_synthesis_voices: {voices}")

    text = "Hello world. This is a test."
    base, end, dt = say(text)
    check(end == speechd.CallbackType.END, f"spoken: BEGIN then END ({end}) in {dt:.2f} s")
    check(len(base) > 24000 and peak(base) > 100,
          f"the daemon played {len(base) // 2} samples into its ALSA file sink, peak {peak(base)}")
    same, _, _ = say(text)
    check(same == base, "the same message again: the same audio")

    client.set_rate(100)
    fast, end, _ = say(text)
    client.set_rate(0)
    ratio = len(fast) / len(base)
    check(end == speechd.CallbackType.END and 0.4 < ratio < 0.6, f"rate 100: {ratio:.2f} of the duration")

    client.set_synthesis_voice("tinyb")
    other, end, _ = say(text)
    check(end == speechd.CallbackType.END and len(other) > 0 and other != base,
          "synthesis voice tinyb: other audio")
    client.set_synthesis_voice("tinya")
    back, _, _ = say(text)
    check(back == base, "back to tinya: its audio again")

    long_text = " ".join(f"Sentence number {i} is here." for i in range(400))
    pcm, end, dt = say(long_text, stop_after=0.2)
    secs = len(pcm) / 2 / 24000
    # The daemon stops its own playback at once; the CANCEL event waits for the module's 703,
    # which a module that ignored STOP would send only once it has generated the whole message
    # (7 s on the tiny model without load).
    check(end == speechd.CallbackType.CANCEL and dt < 2,
          f"cancel: CANCEL event ({end}) {dt:.2f} s after the cancel")
    check(secs < 60, f"cancel: {secs:.1f} s of a message of ~280 s played")
    after, end, _ = say(text)
    check(end == speechd.CallbackType.END and after == base, "after the cancel: the next message as before")

    # Pause through the daemon is not checked: in these runs (0.11.4, this unpaced sink, and a
    # sink read at four times real time too) a client's pause of a long message was never
    # reported back and left the daemon busy until restarted, whether the module answered
    # PAUSE at the next __spd_ mark (704) or at once (704 or 703). An open problem; the
    # module's side of PAUSE is checked by module_protocol.py.
    env_say = dict(env, SPEECHD_ADDRESS=f"unix_socket:{sock}")
    before = audio_size()
    r = subprocess.run(["spd-say", "-w", "-o", "pocket-tts", "-r", "-50", "-y", "tinyb", text],
                       env=env_say, timeout=60, capture_output=True)
    slow = audio_size() - before
    check(r.returncode == 0 and 1.3 < slow / len(base) < 1.7,
          f"spd-say -r -50 -y tinyb: exit {r.returncode}, {slow / len(base):.2f} of the duration")
    r = subprocess.run(["spd-say", "-o", "pocket-tts", "-L"], env=env_say, timeout=30,
                       capture_output=True, text=True)
    check(r.returncode == 0 and "tinyb" in r.stdout, f"spd-say -L: {r.stdout.strip()!r}")
finally:
    client.close()
    daemon.terminate()
    try:
        daemon.wait(timeout=10)
    except subprocess.TimeoutExpired:
        daemon.kill()
if fails:
    show_logs()
print("daemon:", "FAILED" if fails else "passed")
sys.exit(1 if fails else 0)
