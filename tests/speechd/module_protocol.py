"""sd_pocket-tts on its own: the protocol lines speech-dispatcher sends on its stdin and the
replies and events it must answer (doc: "Communication Protocol for Output Modules").
Usage: module_protocol.py SD_POCKET_TTS FIXTURES_DIR TMP_DIR"""
import os
import sys
import time

from sdproto import Module, peak, write_config

binary, fx, tmp = sys.argv[1:4]
config = write_config(tmp, fx)
fails = 0


def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1


def started(cfg=config):
    m = Module(binary, cfg)
    m.send("INIT")
    lines = m.expect(299, "INIT")
    m.send("AUDIO", "audio_output_method=server", ".")
    m.expect(207, "AUDIO")
    m.expect(203, "AUDIO server")
    return m, lines


def settings(m, **kv):
    m.send("SET", *[f"{k}={v}" for k, v in kv.items()], ".")
    m.expect(203, "SET")
    return m.reply()


def speak(m, text, cmd="SPEAK"):
    m.send(cmd)
    m.expect(202, cmd)
    m.send(*text.split("\n"), ".")
    m.expect(200, cmd + " text")
    return m.events()


# the daemon's first exchange: INIT, AUDIO (server audio accepted, any other method declined)
m = Module(binary, config)
m.send("INIT")
lines = m.expect(299, "INIT")
check(any("pocket-tts" in l for l in lines), f"INIT: 299 with the module's info {lines}")
m.send("AUDIO", "audio_output_method=pulse", "audio_pulse_device=default", ".")
m.expect(207, "AUDIO")
code, lines = m.reply()
check(code == 300 and "server" in lines[0], f"AUDIO pulse declined, saying why: {code} {lines}")
m.send("AUDIO", "audio_output_method=server", ".")
m.expect(207, "AUDIO")
code, _ = m.reply()
check(code == 203, "AUDIO server: 203 OK AUDIO INITIALIZED")

m.send("LIST VOICES")
code, lines = m.reply()
check(code == 200 and lines[:2] == ["tinya\ten\tnone", "tinyb\ten\tnone"],
      f"LIST VOICES: the voices folder, language en: {lines}")

code, lines = settings(m, rate=0, pitch=0, pitch_range=0, volume=100, punctuation_mode="none",
                       spelling_mode="off", cap_let_recogn="none", voice="male1", language="en",
                       synthesis_voice="NULL", future_setting="x")
check(code == 203, "SET as the daemon sends it (and a name it does not know): 203")
m.send("SET", "rate=999", ".")
m.expect(203, "SET")
code, _ = m.reply()
check(code == 303, f"SET rate=999: 303 ({code})")
m.send("SET", "rate", ".")
m.expect(203, "SET")
code, _ = m.reply()
check(code == 302, f"SET without '=': 302 ({code})")
m.send("SET", "pitch=abc", ".")
m.expect(203, "SET")
code, _ = m.reply()
check(code == 303, f"SET pitch=abc: 303 ({code})")
m.send("BOGUS")
code, _ = m.reply()
check(code == 300, "unknown command: 300")

# speak: BEGIN, audio, the SSML's marks in order, END; audio not silent
ssml = '<speak>Hello world.<mark name="__spd_0"/> This is a test.<mark name="__spd_1"/></speak>'
evs, base = speak(m, ssml)
codes = [c for c, _ in evs]
marks = [l[0] for c, l in evs if c == 700]
check(codes[0] == 701 and codes[-1] == 702 and 705 in codes, f"BEGIN, AUDIO..., END ({len(codes)} events)")
check(marks == ["__spd_0", "__spd_1"], f"index marks in order: {marks}")
first_mark = codes.index(700)
check(705 in codes[:first_mark] and 705 in codes[first_mark:], "a mark between the audio of its two sides")
check(len(base) > 2 * 24000 * 0.3 and peak(base) > 100, f"audio: {len(base) // 2} samples, peak {peak(base)}")

evs, again = speak(m, ssml)
check(again == base, "the same text and voice at temperature 0: the same audio")

# voices: synthesis_voice by name, the voice type through AddVoice, unknown names: the default
settings(m, synthesis_voice="tinyb")
_, vb = speak(m, ssml)
check(vb != base, "synthesis_voice=tinyb: other audio")
settings(m, synthesis_voice="NULL", voice="female1", language="en-US")
_, vt = speak(m, ssml)
check(vt == vb, "voice=female1 (AddVoice en female1 tinyb) for en-US: tinyb")
settings(m, synthesis_voice="nosuchvoice", voice="male3")
_, vd = speak(m, ssml)
check(vd == base, "an unknown voice and an unmapped type: the default voice")

# rate (Rubber Band: 2^(rate/100) times the speed), pitch, volume (gain (volume+100)/200)
settings(m, synthesis_voice="NULL", voice="male1", rate=100)
_, fast = speak(m, ssml)
settings(m, rate=-100)
_, slow = speak(m, ssml)
r_fast, r_slow = len(fast) / len(base), len(slow) / len(base)
check(0.4 < r_fast < 0.6, f"rate=100: {r_fast:.2f} of the duration")
check(1.8 < r_slow < 2.2, f"rate=-100: {r_slow:.2f} of the duration")
settings(m, rate=0, pitch=60)
_, high = speak(m, ssml)
check(abs(len(high) / len(base) - 1) < 0.05 and high != base, f"pitch=60: same duration ({len(high) / len(base):.2f}), other audio")
settings(m, pitch=0, volume=0)
_, half = speak(m, ssml)
check(len(half) == len(base) and abs(peak(half) / peak(base) - 0.5) < 0.02,
      f"volume=0: half the amplitude ({peak(half)} vs {peak(base)})")
settings(m, volume=-100)
_, mute = speak(m, ssml)
check(len(mute) == len(base) and peak(mute) == 0, "volume=-100: silence")
settings(m, volume=100)

# STOP within a frame: a long message, STOP sent while its audio fills the pipe
long_text = "<speak>" + " ".join(f"Sentence number {i} is here.<mark name=\"__spd_{i}\"/>" for i in range(300)) + "</speak>"
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send(long_text, ".")
m.expect(200, "SPEAK long")
time.sleep(0.3)
t0 = time.time()
m.send("STOP")
evs, pcm = m.events()
dt = time.time() - t0
check(evs[0][0] == 701 and evs[-1][0] == 703, f"STOP: ends with 703 STOP ({evs[-1][0]})")
check(dt < 3, f"STOP: the message ended {dt:.2f} s after it")
check(len(pcm) / 2 / 24000 < 20, f"STOP: {len(pcm) / 2 / 24000:.1f} s of a ~200 s message sent")
m.send("STOP")  # STOP when idle: nothing happens, no reply
_, after = speak(m, ssml)
check(after == base, "after STOP (and a STOP when idle): the next message as before")

# PAUSE: the message goes on to the next __spd_ mark (where the daemon's queue pauses and
# later resumes), sends it after the audio before it, then 704; the marks in order
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send(long_text, ".")
m.expect(200, "SPEAK long")
time.sleep(0.3)
t0 = time.time()
m.send("PAUSE")
evs, _ = m.events()
dt = time.time() - t0
marks = [l[0] for c, l in evs if c == 700]
check(evs[-1][0] == 704 and evs[-2][0] == 700, f"PAUSE: ends with a mark, then 704 PAUSE ({evs[-2][0]}, {evs[-1][0]}) after {dt:.2f} s")
check(marks == [f"__spd_{i}" for i in range(len(marks))] and len(marks) < 300,
      f"PAUSE: {len(marks)} marks of 300, in order")
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send("<speak>" + " ".join(["No mark in this message."] * 20) + "</speak>", ".")
m.expect(200, "SPEAK")
m.send("PAUSE")
evs, pcm = m.events()
check(evs[-1][0] == 702 and len(pcm) > 0, f"PAUSE with no mark to pause at: the message ends (702: {evs[-1][0]})")

# SPEAK while speaking is refused (the daemon never does it; the module stays sane)
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send(long_text, ".")
m.expect(200, "SPEAK long")
m.send("SPEAK")
code = 0
while code not in (202, None):
    code, _ = m.reply()
m.send("Again.", ".")
while code not in (301, 200, None):
    code, _ = m.reply()
check(code == 301, f"SPEAK while speaking: 301 ({code})")
m.send("STOP")
evs, _ = m.events()
check(evs[-1][0] == 703, "then STOP ends the first message")

# CHAR, KEY, SOUND_ICON
evs, pcm = speak(m, "a", "CHAR")
check([c for c, _ in evs][0] == 701 and evs[-1][0] == 702 and len(pcm) > 0, "CHAR a: spoken")
evs, pcm = speak(m, "shift_a", "KEY")
check(evs[-1][0] == 702 and len(pcm) > 0, "KEY shift_a: spoken")
evs, pcm = speak(m, "bell", "SOUND_ICON")
check([(c, l) for c, l in evs] == [(701, ["BEGIN"]), (706, ["bell", "ICON"]), (702, ["END"])],
      f"SOUND_ICON bell: 706 ICON for the server to play: {evs}")
m.send("CHAR")
m.expect(202, "CHAR")
m.send("a", "b", ".")
code, _ = m.reply()
check(code == 305, f"CHAR of two lines: 305 ({code})")

# bad input: clear refusals, the module stays healthy
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send(".")
code, _ = m.reply()
check(code == 301, f"empty message: 301 ({code})")
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send(b"caf\xc3 \xff\xfe", ".")
code, _ = m.reply()
check(code == 301, f"invalid UTF-8: 301 ({code})")
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send("x" * (5 << 20), ".")
code, _ = m.reply()
check(code == 301, f"a 5 MiB line: 301 ({code})")
evs, pcm = speak(m, '<speak>Before. <break time="forever"/> After.</speak>')
check(evs[-1][0] == 702, "invalid markup: the message still ends (702), the bad piece skipped")
evs, pcm = speak(m, "Plain text [pause:0.2] with a pause.\n..A line that starts with a dot.")
check(evs[-1][0] == 702 and len(pcm) > 0, "plain text over lines, a doubled leading dot: spoken")
check(b"skipped" in m.stderr, "the skipped piece is said on stderr")

# LOGLEVEL, DEBUG
m.send("LOGLEVEL", "log_level=5", ".")
m.expect(207, "LOGLEVEL")
code, _ = m.reply()
check(code == 203, "LOGLEVEL: 203")
dbg = os.path.join(tmp, "debug.log")
m.send(f"DEBUG ON {dbg}")
code, _ = m.reply()
check(code == 200, "DEBUG ON: 200")
speak(m, "Logged.")
m.send("DEBUG OFF")
code, _ = m.reply()
check(code == 200 and os.path.getsize(dbg) > 0, "DEBUG OFF: 200, the file has the log")
m.send("DEBUG ON /nonexistent/dir/file")
code, _ = m.reply()
check(code == 303, f"DEBUG ON an unwritable file: 303 ({code})")

m.send("QUIT")
code, _ = m.reply()
check(code == 210 and m.close() == 0, "QUIT: 210, exit 0")

# the end of input in the middle of a message: the module ends promptly
m, _ = started()
m.send("SPEAK")
m.expect(202, "SPEAK")
m.send(long_text, ".")
m.expect(200, "SPEAK")
t0 = time.time()
m.p.stdin.close()
while m.line() is not None:
    pass
rc = m.p.wait(timeout=20)
check(rc == 0 and time.time() - t0 < 5, f"EOF while speaking: exit {rc} in {time.time() - t0:.1f} s")

# a config error: 399 at INIT with the reason, exit 1
bad = os.path.join(tmp, "bad.conf")
with open(bad, "w") as f:
    f.write('PocketTTSLanguage "english"\nPocketTTSThreeds 4\n')
m = Module(binary, bad)
m.send("INIT")
code, lines = m.reply()
check(code == 399 and "PocketTTSThreeds" in lines[0] and ":2:" in lines[0], f"unknown directive: 399 {lines}")
check(m.close() == 1, "exit 1")
m = Module(binary, write_config(tmp, fx, 'PocketTTSDefaultVoice "nobody"\n'))
m.send("INIT")
code, lines = m.reply()
check(code == 399 and "nobody" in lines[0], f"unknown default voice: 399 {lines}")
m.close()
m = Module(binary, config)
m.send("SPEAK")
check(m.line() is None and m.close() == 3, "a first command other than INIT: exit 3, no output")

print("module protocol:", "FAILED" if fails else "passed")
sys.exit(1 if fails else 0)
