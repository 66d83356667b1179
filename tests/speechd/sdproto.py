"""The speech-dispatcher module protocol, as the daemon speaks it to sd_pocket-tts: a module
process on pipes, its replies and events (705 AUDIO decoded), and the tiny fixture model's
config. Shared by module_protocol.py (the module alone) and daemon.py (the daemon's setup)."""
import os
import shutil
import struct
import subprocess
import threading
import time


def write_config(tmp, fx, extra=""):
    """A module config for the tiny fixture model with two voices, tinya and tinyb (two voice
    states of tests/fixtures/tiny), temperature 0 (the same text and voice, the same audio)."""
    voices = os.path.join(tmp, "voices")
    os.makedirs(voices, exist_ok=True)
    shutil.copy(os.path.join(fx, "tiny", "voice.safetensors"), os.path.join(voices, "tinya.safetensors"))
    shutil.copy(os.path.join(fx, "tiny", "voice_short.safetensors"),
                os.path.join(voices, "tinyb.safetensors"))
    path = os.path.join(tmp, "pocket-tts.conf")
    with open(path, "w") as f:
        f.write('# the tiny fixture model\n'
                f'PocketTTSConfig "{fx}/tiny/manifest.json"\n'
                f'PocketTTSWeights "{fx}/tiny/model.safetensors"\n'
                f'PocketTTSVoicesDir "{voices}"\n'
                'PocketTTSDefaultVoice "tinya"\n'
                'PocketTTSTemperature 0\n'
                'PocketTTSThreads 1\n'
                'AddVoice "en" "female1" "tinyb"\n' + extra)
    return path


def unescape(data):
    """HDLC: 0x7d then a byte with bit 5 inverted stands for that byte."""
    out = bytearray()
    i = 0
    while i < len(data):
        b = data[i]
        if b == 0x7D:
            i += 1
            b = data[i] ^ 0x20
        out.append(b)
        i += 1
    return bytes(out)


class Module:
    def __init__(self, binary, config):
        args = [binary] + ([config] if config else [])
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.stderr = b""
        self._t = threading.Thread(target=self._drain_stderr, daemon=True)
        self._t.start()

    def _drain_stderr(self):
        for line in self.p.stderr:
            self.stderr += line

    def send(self, *lines):
        self.p.stdin.write(b"".join((l if isinstance(l, bytes) else l.encode()) + b"\n" for l in lines))
        self.p.stdin.flush()

    def line(self):
        """One line of stdout without its newline; None at the end."""
        l = self.p.stdout.readline()
        return None if not l else l[:-1] if l.endswith(b"\n") else l

    def reply(self):
        """The next reply or event: (code, [lines]) with the lines of a multi-line one; a 705
        AUDIO event's lines hold its header values and its samples (a bytes of s16le)."""
        lines = []
        while True:
            l = self.line()
            if l is None:
                return None, lines
            if l.startswith(b"705-AUDIO\0"):
                lines.append(unescape(l[len(b"705-AUDIO\0"):]))
                continue
            if len(l) >= 4 and l[3:4] == b"-":
                lines.append(l[4:].decode(errors="replace"))
                continue
            return int(l[:3]), lines + [l[4:].decode(errors="replace")]

    def expect(self, code, what):
        got, lines = self.reply()
        if got != code:
            raise AssertionError(f"{what}: expected {code}, got {got} {lines}")
        return lines

    def events(self, timeout=60):
        """Events up to the one that ends the message (702, 703, 704): (list of (code, lines),
        the samples as one bytes)."""
        evs, pcm = [], b""
        t0 = time.time()
        while True:
            code, lines = self.reply()
            if code is None:
                raise AssertionError("module closed its output during a message")
            evs.append((code, lines))
            if code == 705:
                hdr = dict(x.split("=") for x in lines[:-2])
                samples = lines[-2]
                assert hdr["bits"] == "16" and hdr["num_channels"] == "1", hdr
                assert hdr["sample_rate"] == "24000" and hdr["big_endian"] == "0", hdr
                assert int(hdr["num_samples"]) * 2 == len(samples), (hdr, len(samples))
                pcm += samples
            if code in (702, 703, 704):
                return evs, pcm
            if time.time() - t0 > timeout:
                raise AssertionError("no end of message")

    def close(self):
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        rc = self.p.wait(timeout=20)
        self._t.join(5)
        return rc


def peak(pcm):
    n = len(pcm) // 2
    return max((abs(v) for v in struct.unpack(f"<{n}h", pcm[:2 * n])), default=0)
