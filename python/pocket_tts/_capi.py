"""ctypes declarations of the part of include/ptts.h that the Python API uses.

The structures mirror ptts.h field by field (same order, same C types): a change there must be
made here too (python/tests compare the audio with the CLI's, which a mismatch would break).
"""

import ctypes
import ctypes.util
import os

SONAME = "libpocket-tts.so.0"

PTTS_E_INVALID = -1
PTTS_E_NOMEM = -2
PTTS_E_IO = -3
PTTS_E_FORMAT = -4
PTTS_E_MODEL = -5
PTTS_E_UNSUPPORTED = -6
PTTS_E_TEXT = -7
PTTS_E_NOT_FOUND = -8
PTTS_E_AUDIO = -12

PTTS_BACKENDS = {"auto": 0, "cpu": 1, "vulkan": 2, "vulkan-codec": 3}
PTTS_PRECISIONS = {"f32": 0, "bf16": 1, "int8": 2}
PTTS_ERROR_MSG_MAX = 512


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * PTTS_ERROR_MSG_MAX)]


class ModelOptions(ctypes.Structure):
    _fields_ = [
        ("config_path", ctypes.c_char_p),
        ("weights_path", ctypes.c_char_p),
        ("tokenizer_path", ctypes.c_char_p),
        ("precision", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("backend", ctypes.c_int),
        ("device", ctypes.c_char_p),
        ("overlap", ctypes.c_int),
        ("language", ctypes.c_char_p),
        ("tensor_cores", ctypes.c_int),
        ("fence_spin_us", ctypes.c_int),
    ]


class ModelInfo(ctypes.Structure):
    _fields_ = [
        ("layers", ctypes.c_int),
        ("d", ctypes.c_int),
        ("heads", ctypes.c_int),
        ("latent_dim", ctypes.c_int),
        ("vocab_size", ctypes.c_int),
        ("has_voice_cloning", ctypes.c_int),
        ("insert_bos_before_voice", ctypes.c_int),
        ("sample_rate", ctypes.c_int),
        ("frame_samples", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("isa", ctypes.c_char_p),
        ("weight_bytes", ctypes.c_size_t),
    ]


class GenOptions(ctypes.Structure):
    _fields_ = [
        ("temperature", ctypes.c_float),
        ("temperature_set", ctypes.c_int),
        ("noise_clamp", ctypes.c_float),
        ("eos_threshold", ctypes.c_float),
        ("eos_threshold_set", ctypes.c_int),
        ("frames_after_eos", ctypes.c_int),
        ("frames_after_eos_set", ctypes.c_int),
        ("sampler_steps", ctypes.c_int),
        ("max_tokens", ctypes.c_int),
        ("seed", ctypes.c_uint64),
        ("seed_set", ctypes.c_int),
        ("noise", ctypes.POINTER(ctypes.c_float)),
        ("noise_rows", ctypes.c_int),
        ("markup", ctypes.c_int),
        ("sentence_silence", ctypes.c_float),
    ]


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_E = ctypes.POINTER(Error)
_SIGNATURES = {
    "ptts_version": (ctypes.c_char_p, []),
    "ptts_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "ptts_model_load": (ctypes.c_int, [_PP, ctypes.POINTER(ModelOptions), _E]),
    "ptts_model_free": (None, [_P]),
    "ptts_model_get_info": (None, [_P, ctypes.POINTER(ModelInfo)]),
    "ptts_language_find": (_P, [ctypes.c_char_p]),
    "ptts_preset_voice_count": (ctypes.c_int, [ctypes.c_char_p]),
    "ptts_preset_voice_name": (ctypes.c_char_p, [ctypes.c_char_p, ctypes.c_int]),
    "ptts_voice_open": (
        ctypes.c_int,
        [_PP, _P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double, ctypes.POINTER(ctypes.c_int), _E],
    ),
    "ptts_voice_from_samples": (
        ctypes.c_int,
        [_PP, _P, ctypes.POINTER(ctypes.c_float), ctypes.c_int64, ctypes.c_int, ctypes.c_double, _E],
    ),
    "ptts_voice_save": (ctypes.c_int, [_P, ctypes.c_char_p, _E]),
    "ptts_voice_free": (None, [_P]),
    "ptts_stream_create": (ctypes.c_int, [_PP, _P, _E]),
    "ptts_stream_free": (None, [_P]),
    "ptts_stream_start": (
        ctypes.c_int,
        [_P, _P, ctypes.c_char_p, ctypes.POINTER(GenOptions), _E],
    ),
    "ptts_stream_next": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_float), _E]),
}

_loaded = {}


def load_library(path=None):
    """The shared library: `path` when given (a file, or a folder holding the SONAME), else the
    installed SONAME through the dynamic linker's search. No environment variable is read."""
    key = os.path.abspath(path) if path else SONAME
    if key in _loaded:
        return _loaded[key]
    if path:
        target = os.path.join(path, SONAME) if os.path.isdir(path) else path
        if not os.path.exists(target):
            raise FileNotFoundError(f"libpocket-tts: no such file: {target}")
    else:
        target = SONAME
    try:
        lib = ctypes.CDLL(target)
    except OSError as exc:
        raise OSError(
            f"cannot load {target} ({exc}): install libpocket-tts0 (the .deb) or "
            "`cmake --install`, or pass library=PATH to TTSModel.load_model"
        ) from exc
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _loaded[key] = lib
    return lib
