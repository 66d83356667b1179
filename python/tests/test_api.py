"""The official-style API on the tiny fixtures, against the CLI's samples for the same seed.

Run by tests/e2e_python.sh (ctest e2e_python), which installs the package with pip and writes
paths.json (the CLI, the shared library, the fixtures) into the working directory.
"""

import json
import os
import subprocess
import tempfile
import unittest
import wave

import numpy as np

from pocket_tts import ModelState, TTSModel, export_model_state

with open("paths.json") as f:
    PATHS = json.load(f)
FX = PATHS["fixtures"]
CONFIG = os.path.join(FX, "tiny", "config.yaml")
WEIGHTS = os.path.join(FX, "tiny", "model.safetensors")
VOICE = os.path.join(FX, "tiny", "voice.safetensors")
AUDIO = os.path.join(FX, "audio", "voice_24k.wav")
TEXT = "Hello world. This is a test."


def load(**kw):
    return TTSModel.load_model(config=CONFIG, weights=WEIGHTS, backend="cpu",
                               library=PATHS["library"], **kw)


def cli_samples(*args):
    """The int16 samples `pocket-tts generate` writes, without its 200 ms of trailing silence."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "a.wav")
        subprocess.run([PATHS["cli"], "generate", "--config", CONFIG, "--weights", WEIGHTS,
                        "--backend", "cpu", "-q", "-o", out, *args], check=True)
        with wave.open(out) as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return pcm[:-4800]


def to_int16(audio):
    """The CLI's WAV conversion: clamp to [-1, 1], scale by 32767, truncate toward zero."""
    return (np.clip(audio, -1.0, 1.0) * 32767.0).astype(np.int16)


class TestOfficialApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = load()
        cls.voice = cls.model.get_state_for_audio_prompt(VOICE)

    def test_sample_rate(self):
        self.assertEqual(self.model.sample_rate, 24000)

    def test_same_samples_as_cli(self):
        audio = self.model.generate_audio(self.voice, TEXT, seed=7)
        self.assertEqual(audio.dtype, np.float32)
        self.assertEqual(audio.ndim, 1)
        want = cli_samples("--voice", VOICE, "--text", TEXT, "--seed", "7")
        self.assertGreater(want.size, 0)
        np.testing.assert_array_equal(to_int16(audio), want)

    def test_generation_options_match_cli(self):
        model = load(temp=0.7, eos_threshold=-2.0, noise_clamp=1.5, sampler_decode_steps=2)
        voice = model.get_state_for_audio_prompt(VOICE)
        audio = model.generate_audio(voice, TEXT, max_tokens=8, frames_after_eos=1, seed=3)
        want = cli_samples("--voice", VOICE, "--text", TEXT, "--seed", "3", "--temperature", "0.7",
                           "--eos-threshold", "-2", "--noise-clamp", "1.5",
                           "--sampler-decode-steps", "2", "--max-tokens", "8",
                           "--frames-after-eos", "1")
        np.testing.assert_array_equal(to_int16(audio), want)

    def test_stream_is_the_whole_audio_in_frames(self):
        chunks = list(self.model.generate_audio_stream(self.voice, TEXT, seed=7))
        self.assertTrue(chunks)
        self.assertTrue(all(c.shape == (1920,) for c in chunks))
        np.testing.assert_array_equal(np.concatenate(chunks),
                                      self.model.generate_audio(self.voice, TEXT, seed=7))

    def test_default_temperature_is_the_configs(self):
        explicit = load(temp=0.3)
        v = explicit.get_state_for_audio_prompt(VOICE)
        np.testing.assert_array_equal(self.model.generate_audio(self.voice, TEXT, seed=5),
                                      explicit.generate_audio(v, TEXT, seed=5))
        hot = load(temp=1.0)
        v = hot.get_state_for_audio_prompt(VOICE)
        self.assertFalse(np.array_equal(self.model.generate_audio(self.voice, TEXT, seed=5),
                                        hot.generate_audio(v, TEXT, seed=5)))

    def test_lsd_decode_steps_overrides_sampler_decode_steps(self):
        a = load(temp=0, sampler_decode_steps=3)
        b = load(temp=0, sampler_decode_steps=1, lsd_decode_steps=3)
        c = load(temp=0)
        ga = a.generate_audio(a.get_state_for_audio_prompt(VOICE), TEXT)
        gb = b.generate_audio(b.get_state_for_audio_prompt(VOICE), TEXT)
        gc = c.generate_audio(c.get_state_for_audio_prompt(VOICE), TEXT)
        np.testing.assert_array_equal(ga, gb)
        self.assertFalse(np.array_equal(ga, gc))

    def test_export_model_state_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "v.safetensors")
            export_model_state(self.voice, path)
            again = self.model.get_state_for_audio_prompt(path)
        np.testing.assert_array_equal(self.model.generate_audio(again, TEXT, seed=2),
                                      self.model.generate_audio(self.voice, TEXT, seed=2))

    def test_voice_from_array_is_the_clis_clone(self):
        with wave.open(AUDIO) as w:
            self.assertEqual(w.getframerate(), 24000)
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, w.getnchannels())
        samples = (pcm.T.astype(np.float32) / 32768.0)
        state = self.model.get_state_for_audio_prompt(samples)
        self.assertIsInstance(state, ModelState)
        from_file = self.model.get_state_for_audio_prompt(AUDIO)
        a = self.model.generate_audio(state, "Cloned.", seed=1)
        np.testing.assert_array_equal(a, self.model.generate_audio(from_file, "Cloned.", seed=1))
        np.testing.assert_array_equal(to_int16(a), cli_samples("--voice", AUDIO, "--text", "Cloned.",
                                                               "--seed", "1"))

    def test_mistakes_raise_the_official_exceptions(self):
        for text in ("", "   \n"):
            with self.assertRaises(ValueError):
                self.model.generate_audio(self.voice, text)
        with self.assertRaises(ValueError):
            TTSModel.load_model(language="english", config=CONFIG, library=PATHS["library"])
        with self.assertRaises(ValueError):
            TTSModel.load_model(config=os.path.join(FX, "tiny", "manifest.json"),
                                library=PATHS["library"])
        with self.assertRaises(FileNotFoundError):
            TTSModel.load_model(config="/nonexistent/config.yaml", library=PATHS["library"])
        with self.assertRaises(FileNotFoundError):
            TTSModel.load_model(language="klingon", library=PATHS["library"])
        with self.assertRaises(FileNotFoundError):
            self.model.get_state_for_audio_prompt("/nonexistent/voice.wav")
        # a preset voice needs a model loaded by language, as in the reference
        with self.assertRaises(ValueError):
            self.model.get_state_for_audio_prompt("alba")
        with self.assertRaises(ValueError):
            self.model.get_state_for_audio_prompt(np.zeros(0, dtype=np.float32))
        with self.assertRaises(ValueError):
            self.model.get_state_for_audio_prompt(np.zeros(24000, dtype=np.float32))  # silent
        with self.assertRaises(FileNotFoundError):
            TTSModel.load_model(config=CONFIG, library="/nonexistent/libpocket-tts.so.0")


if __name__ == "__main__":
    unittest.main()
