"""pocket_tts: the official Pocket TTS Python API over the C library libpocket-tts."""

from .tts_model import ModelState, TTSModel, export_model_state

__all__ = ["TTSModel", "ModelState", "export_model_state"]
