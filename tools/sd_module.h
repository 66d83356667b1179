/*
 * sd_module.h - sd_pocket-tts, the speech-dispatcher output module: what its three files share.
 * sd_pocket_tts.c speaks the module protocol (stdin/stdout) and runs the synthesis worker,
 * sd_config.c reads the module's config file and names its voices, sd_audio.c turns frames
 * into the audio the server plays (rate and pitch through Rubber Band, volume as a gain, 16-bit
 * PCM in `705 AUDIO` events).
 */
#ifndef PTTS_SD_MODULE_H
#define PTTS_SD_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "ptts.h"

#if defined(__GNUC__)
#define SD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SD_PRINTF(a, b)
#endif

/* An `AddVoice "LANG" "TYPE" "VOICE"` line: speech-dispatcher's voice type (male1 ... female3,
 * child_male, child_female) for a language, mapped to one of the module's voices. */
typedef struct sd_type_map {
    char *lang, *type, *voice;
} sd_type_map;

/* One voice the module lists: a file of PocketTTSVoicesDir (path set: a voice state or audio to
 * clone) or a preset of the model's language (path NULL). `v` is loaded on first use. */
typedef struct sd_voice {
    char *name, *path;
    ptts_voice *v;
} sd_voice;

typedef struct sd_config {
    char *language;       /* PocketTTSLanguage: a ptts_language name (default english) */
    char *lang_code;      /* PocketTTSLanguageCode: what LIST VOICES says (default: from
                           * the language's name, "en" for english*) */
    char *config_path;    /* PocketTTSConfig, PocketTTSWeights, PocketTTSTokenizer: a model */
    char *weights_path;   /* of one's own (then presets are not listed: they belong to the */
    char *tokenizer_path; /* published weights) */
    int precision;        /* PocketTTSPrecision f32|bf16|int8 */
    int threads;          /* PocketTTSThreads (0: every CPU) */
    char *voices_dir;     /* PocketTTSVoicesDir: *.safetensors states, audio files to clone */
    char *default_voice;  /* PocketTTSDefaultVoice (default: the language's preset) */
    float temperature;    /* PocketTTSTemperature, with temperature_set */
    int temperature_set;
    sd_type_map *types; /* AddVoice lines */
    int n_types;
    sd_voice *voices; /* filled by sd_voices_scan */
    int n_voices;
} sd_config;

/* Defaults, then `path` (NULL: defaults only). Returns 0, or -1 with a message in err. */
int sd_config_read(sd_config *c, const char *path, char *err, size_t cap);
/* The voices of voices_dir (sorted by name) and, for the published model, the presets. */
int sd_voices_scan(sd_config *c, char *err, size_t cap);
/* The voice named `name` (any case), or NULL. */
sd_voice *sd_voice_find(sd_config *c, const char *name);
/* The voice for the client's settings: synthesis_voice when it names one, else the AddVoice
 * entry of voice_type (for the language, else any), else the default voice. Never NULL. */
sd_voice *sd_voice_pick(sd_config *c, const char *synthesis_voice, const char *voice_type,
                        const char *language);
void sd_config_free(sd_config *c);

/* Log a line on stderr (speech-dispatcher keeps the module's stderr in its log) and, with
 * DEBUG ON, in the debug file. level: PTTS_LOG_*; lines above the LOGLEVEL are dropped. */
void sd_log(int level, const char *fmt, ...) SD_PRINTF(2, 3);
/* LOGLEVEL: speech-dispatcher's 0-5, mapped onto PTTS_LOG_* (default: warnings). */
void sd_log_set_level(int spd_level);
/* DEBUG ON FILE (file non-NULL: also log there, at debug level) / DEBUG OFF. 0 or -1. */
int sd_log_debug(const char *file);

/* Protocol output: whole replies and events under one lock, so that the worker's events never
 * split a reply. Returns 0, or -1 when stdout is gone (the server died). */
int sd_send(const char *fmt, ...) SD_PRINTF(1, 2);

/* The audio stage of one message: speed (rate) and pitch scales for Rubber Band (1: none) and
 * a linear gain (volume). Output goes to the server as `705 AUDIO` events. */
typedef struct sd_audio sd_audio;
int sd_audio_open(sd_audio **out, double speed, double pitch_scale, float gain);
/* n samples at 24 kHz; returns 0, or -1 when stdout is gone or memory ran out. */
int sd_audio_write(sd_audio *a, const float *x, int n);
/* The samples Rubber Band still holds. */
int sd_audio_finish(sd_audio *a);
void sd_audio_free(sd_audio *a);
/* One `705 AUDIO` event of n 16-bit mono samples at 24 kHz (HDLC-escaped). */
int sd_send_audio(const int16_t *pcm, int n);

#endif
