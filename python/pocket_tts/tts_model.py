"""TTSModel: the official pocket_tts API over libpocket-tts (ctypes).

Arrays are numpy float32 where the official package returns torch tensors (torch tensors with
load_model(..., return_tensors="pt")). A model state is a ModelState: a voice of the C library,
never modified by generation (so copy_state changes nothing).
"""

import ctypes
import os
from pathlib import Path

import numpy as np

from . import _capi

DEFAULT_LANGUAGE = "english"
DEFAULT_EOS_THRESHOLD = -4.0
DEFAULT_SAMPLER_DECODE_STEPS = 1
MAX_TOKEN_PER_CHUNK = 50
# What the reference's export and server truncate a cloning prompt to (truncate=True).
TRUNCATE_SECONDS = 30.0

VOICE_CLONING_UNSUPPORTED = (
    "We could not download the weights for the model with voice cloning, but you're trying to "
    "use voice cloning. Without voice cloning, you can use the catalog of preset voices. If you "
    "want access to the model with voice cloning, go to https://huggingface.co/kyutai/pocket-tts "
    "and accept the terms, then log in locally with `hf auth login` or set HF_TOKEN."
)


def _raise(lib, code, err, what):
    """The official package's exception type for a PTTS_E_* code."""
    msg = err.msg.decode("utf-8", "replace") or lib.ptts_strerror(code).decode()
    text = f"{what}: {msg}"
    if code in (_capi.PTTS_E_INVALID, _capi.PTTS_E_TEXT, _capi.PTTS_E_AUDIO):
        raise ValueError(text)
    if code == _capi.PTTS_E_NOT_FOUND:
        raise FileNotFoundError(text)
    if code == _capi.PTTS_E_NOMEM:
        raise MemoryError(text)
    raise RuntimeError(text)


def _is_url(s):
    return s.startswith(("http://", "https://", "hf://"))


class ModelState:
    """The state after a voice prompt (a ptts_voice). Pass it to generate_audio()."""

    def __init__(self, lib, handle):
        self._lib = lib
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.ptts_voice_free(self._handle)
            self._handle = None


class TTSModel:
    def __init__(self, lib, handle, info, origin, temp, lsd_decode_steps, noise_clamp,
                 eos_threshold, return_tensors):
        self._lib = lib
        self._handle = handle
        self._info = info
        self.origin = origin  # the language name, or None for a config file
        self.temp = temp
        self.lsd_decode_steps = lsd_decode_steps
        self.noise_clamp = noise_clamp
        self.eos_threshold = eos_threshold
        self.has_voice_cloning = bool(info.has_voice_cloning)
        self._torch = None
        if return_tensors == "pt":
            import torch  # an ImportError here is the answer: torch is not installed

            self._torch = torch
        elif return_tensors != "np":
            raise ValueError(f"return_tensors must be 'np' or 'pt', not {return_tensors!r}")

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.ptts_model_free(self._handle)
            self._handle = None

    @property
    def sample_rate(self) -> int:
        return self._info.sample_rate

    @property
    def device(self) -> str:
        return "cpu"

    @classmethod
    def load_model(
        cls,
        language=None,
        config=None,
        temp=None,
        lsd_decode_steps=None,
        noise_clamp=None,
        eos_threshold=DEFAULT_EOS_THRESHOLD,
        quantize=False,
        sampler_decode_steps=DEFAULT_SAMPLER_DECODE_STEPS,
        *,
        weights=None,
        tokenizer=None,
        threads=0,
        backend="auto",
        library=None,
        return_tensors="np",
    ):
        """Load a model as the official TTSModel.load_model does.

        language or config (not both; neither: english). temp: the noise variance, None for the
        config's default_temperature (3.3). sampler_decode_steps (3.3's name) or the older
        lsd_decode_steps, which overrides it when given. noise_clamp: None for no clamping.
        quantize: int8 backbone weights. Beyond the official arguments: weights and tokenizer
        replace the config's files, threads (0: all cores), backend ("auto", "cpu", "vulkan",
        "vulkan-codec"), library (the path of libpocket-tts.so.0 or its folder; default: the
        installed SONAME) and return_tensors ("np", or "pt" for torch tensors).
        """
        if config is not None and language is not None:
            raise ValueError("Cannot specify both config and language, please choose one or the other.")
        lib = _capi.load_library(library)
        if config is None and language is None:
            language = DEFAULT_LANGUAGE
        if language is not None and not lib.ptts_language_find(language.encode()):
            raise FileNotFoundError(f"No config for the language {language!r}")
        if config is not None:
            config = str(config)
            if not config.endswith((".yaml", ".yml")):
                raise ValueError("Config should be a path to a YAML file ending with .yaml")
            if not _is_url(config) and not os.path.exists(config):
                raise FileNotFoundError(f"Config file not found: {config}")
        for name, path in (("weights", weights), ("tokenizer", tokenizer)):
            if path is not None and not _is_url(str(path)) and not os.path.exists(str(path)):
                raise FileNotFoundError(f"{name} file not found: {path}")
        if backend not in _capi.PTTS_BACKENDS:
            raise ValueError(f"backend must be one of {sorted(_capi.PTTS_BACKENDS)}")
        steps = sampler_decode_steps if lsd_decode_steps is None else lsd_decode_steps
        if int(steps) < 1:
            raise ValueError("the sampler's decode steps must be at least 1")

        def enc(s):
            return None if s is None else str(s).encode()

        opts = _capi.ModelOptions(
            config_path=enc(config),
            weights_path=enc(weights),
            tokenizer_path=enc(tokenizer),
            precision=_capi.PTTS_PRECISIONS["int8" if quantize else "f32"],
            threads=int(threads),
            backend=_capi.PTTS_BACKENDS[backend],
            language=enc(language),
        )
        handle = ctypes.c_void_p()
        err = _capi.Error()
        rc = lib.ptts_model_load(ctypes.byref(handle), ctypes.byref(opts), ctypes.byref(err))
        if rc < 0:
            if rc == _capi.PTTS_E_IO:
                raise FileNotFoundError(err.msg.decode("utf-8", "replace"))
            _raise(lib, rc, err, "load_model")
        info = _capi.ModelInfo()
        lib.ptts_model_get_info(handle, ctypes.byref(info))
        return cls(lib, handle, info, language, temp, int(steps), noise_clamp, eos_threshold,
                   return_tensors)

    def _preset_names(self):
        lang = (self.origin or DEFAULT_LANGUAGE).encode()
        n = self._lib.ptts_preset_voice_count(lang)
        return {self._lib.ptts_preset_voice_name(lang, i).decode() for i in range(n)}

    def get_state_for_audio_prompt(self, audio_conditioning, truncate=False) -> ModelState:
        """A state from a voice: a preset name, a voice-state .safetensors or an audio file (a
        path, an hf:// or http(s) URL), or samples at sample_rate ([samples] or [channels,
        samples], numpy or torch; channels averaged). truncate: audio cut to its first 30 s."""
        lib = self._lib
        handle = ctypes.c_void_p()
        err = _capi.Error()
        seconds = TRUNCATE_SECONDS if truncate else 0.0
        if isinstance(audio_conditioning, (str, Path)):
            voice = str(audio_conditioning)
            is_preset = isinstance(audio_conditioning, str) and voice in self._preset_names()
            if is_preset and self.origin is None:
                raise ValueError(
                    "Cannot use predefined voices when the model is not loaded from a config "
                    "associated with a language."
                )
            if not is_preset and not _is_url(voice) and not os.path.exists(voice):
                raise FileNotFoundError(f"No such file: {voice}")
            if not is_preset and not voice.endswith(".safetensors") and not self.has_voice_cloning:
                raise ValueError(VOICE_CLONING_UNSUPPORTED)
            lang = None if self.origin is None else self.origin.encode()
            rc = lib.ptts_voice_open(ctypes.byref(handle), self._handle, lang, voice.encode(),
                                     seconds, None, ctypes.byref(err))
        else:
            if hasattr(audio_conditioning, "detach"):  # a torch tensor
                audio_conditioning = audio_conditioning.detach().cpu().numpy()
            audio = np.asarray(audio_conditioning, dtype=np.float32)
            if audio.ndim == 2:
                audio = audio.mean(axis=0)
            if audio.ndim != 1 or audio.size == 0:
                raise ValueError("The audio prompt must be a non-empty [samples] or [channels, samples] array")
            if not self.has_voice_cloning:
                raise ValueError(VOICE_CLONING_UNSUPPORTED)
            audio = np.ascontiguousarray(audio)
            rc = lib.ptts_voice_from_samples(
                ctypes.byref(handle), self._handle,
                audio.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), audio.size,
                self.sample_rate, seconds, ctypes.byref(err))
        if rc < 0:
            if rc == _capi.PTTS_E_UNSUPPORTED and not self.has_voice_cloning:
                raise ValueError(VOICE_CLONING_UNSUPPORTED)
            _raise(lib, rc, err, "get_state_for_audio_prompt")
        return ModelState(lib, handle)

    def _gen_options(self, max_tokens, frames_after_eos, seed):
        o = _capi.GenOptions()
        if self.temp is not None:
            o.temperature, o.temperature_set = float(self.temp), 1
        if self.noise_clamp is not None:
            o.noise_clamp = float(self.noise_clamp)
        if self.eos_threshold is not None:
            o.eos_threshold, o.eos_threshold_set = float(self.eos_threshold), 1
        if frames_after_eos is not None:
            if frames_after_eos < 0:
                raise ValueError("frames_after_eos must be >= 0")
            o.frames_after_eos, o.frames_after_eos_set = int(frames_after_eos), 1
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        o.max_tokens = int(max_tokens)
        o.sampler_steps = self.lsd_decode_steps
        if seed is not None:
            o.seed, o.seed_set = int(seed), 1
        return o

    def _out(self, array):
        return self._torch.from_numpy(array) if self._torch is not None else array

    def generate_audio_stream(self, model_state, text_to_generate, max_tokens=MAX_TOKEN_PER_CHUNK,
                              frames_after_eos=None, copy_state=True, *, seed=None):
        """Yield the audio as it is generated: one [1920] float32 array (80 ms) per frame.
        seed (beyond the official API): reproducible noise, as the CLI's --seed."""
        if not isinstance(model_state, ModelState):
            raise TypeError("model_state must come from get_state_for_audio_prompt()")
        if not isinstance(text_to_generate, str):
            raise TypeError("text_to_generate must be a str")
        if text_to_generate.strip() == "":
            raise ValueError("Text prompt cannot be empty")
        lib = self._lib
        opts = self._gen_options(max_tokens, frames_after_eos, seed)
        err = _capi.Error()
        stream = ctypes.c_void_p()
        rc = lib.ptts_stream_create(ctypes.byref(stream), self._handle, ctypes.byref(err))
        if rc < 0:
            _raise(lib, rc, err, "generate_audio_stream")
        try:
            rc = lib.ptts_stream_start(stream, model_state._handle, text_to_generate.encode(),
                                       ctypes.byref(opts), ctypes.byref(err))
            if rc < 0:
                _raise(lib, rc, err, "generate_audio_stream")
            while True:
                frame = np.empty(self._info.frame_samples, dtype=np.float32)
                n = lib.ptts_stream_next(stream, frame.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                         ctypes.byref(err))
                if n < 0:
                    _raise(lib, n, err, "generate_audio_stream")
                if n == 0:
                    return
                yield self._out(frame[:n])
        finally:
            lib.ptts_stream_free(stream)

    def generate_audio(self, model_state, text_to_generate, max_tokens=MAX_TOKEN_PER_CHUNK,
                       frames_after_eos=None, copy_state=True, *, seed=None):
        """The whole waveform: a [samples] float32 array at sample_rate."""
        chunks = [
            np.asarray(c) for c in self.generate_audio_stream(
                model_state, text_to_generate, max_tokens, frames_after_eos, copy_state, seed=seed)
        ]
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        return self._out(audio)


def export_model_state(model_state, dest):
    """Save a state as the reference's voice-state .safetensors (3.3 format)."""
    if not isinstance(model_state, ModelState):
        raise TypeError("model_state must come from get_state_for_audio_prompt()")
    err = _capi.Error()
    rc = model_state._lib.ptts_voice_save(model_state._handle, str(dest).encode(), ctypes.byref(err))
    if rc < 0:
        if rc == _capi.PTTS_E_IO:
            raise OSError(err.msg.decode("utf-8", "replace"))
        _raise(model_state._lib, rc, err, "export_model_state")
