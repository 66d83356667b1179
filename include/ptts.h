/*
 * ptts.h - the public API of pocket-tts-c, a C implementation of Kyutai's Pocket TTS.
 *
 * Conventions:
 *  - Functions return 0 (PTTS_OK) or a negative PTTS_E* code; ptts_strerror() names a code.
 *    Calls that can fail in detail take a `ptts_error *` (may be NULL) that receives the code and
 *    a message naming the file, tensor or argument at fault.
 *  - Every create/load has a matching free; free(NULL) is a no-op.
 *  - The library never prints, exits or aborts; diagnostics go to the log callback if one is set.
 *  - A ptts_model is read-only after loading and may be shared by many threads and streams.
 *  - Options structs: get the defaults from the *_default() function, then change fields.
 *    Integer and pointer fields also treat 0 / NULL as "default", so a zeroed struct is valid
 *    except for the float fields whose zero is meaningful (they say so).
 */
#ifndef PTTS_H
#define PTTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTTS_VERSION "0.1.0"

#define PTTS_SAMPLE_RATE 24000
#define PTTS_FRAME_SAMPLES 1920 /* one latent frame = 80 ms at 24 kHz */

enum {
    PTTS_OK = 0,
    PTTS_E_INVALID = -1,     /* bad argument or option value */
    PTTS_E_NOMEM = -2,       /* allocation failed or a size limit was exceeded */
    PTTS_E_IO = -3,          /* a file cannot be opened, read or written */
    PTTS_E_FORMAT = -4,      /* a file is malformed (safetensors, .model, YAML, audio) */
    PTTS_E_MODEL = -5,       /* missing or mis-shaped tensor, architecture mismatch */
    PTTS_E_UNSUPPORTED = -6, /* valid but not supported (dtype, feature not built in) */
    PTTS_E_TEXT = -7,        /* unusable text (empty after preparation) */
    PTTS_E_NOT_FOUND = -8,   /* a named voice, file or device does not exist */
    PTTS_E_NETWORK = -9,     /* download failed */
    PTTS_E_CANCELLED = -10,  /* the caller's callback asked to stop */
    PTTS_E_BACKEND = -11,    /* the GPU backend failed */
    PTTS_E_AUDIO = -12,      /* audio input unusable (not audio, too short, silent) */
    PTTS_E_BUSY = -13,       /* a resource is in use */
    PTTS_E_INTERNAL = -14    /* a bug: please report */
};

#define PTTS_ERROR_MSG_MAX 512
typedef struct ptts_error {
    int code;
    char msg[PTTS_ERROR_MSG_MAX];
} ptts_error;

/* Name of an error code ("invalid argument", ...). Never NULL. */
const char *ptts_strerror(int code);

enum { PTTS_LOG_ERROR = 0, PTTS_LOG_WARN = 1, PTTS_LOG_INFO = 2, PTTS_LOG_DEBUG = 3 };
typedef void (*ptts_log_fn)(void *user, int level, const char *msg);
/* Process-wide log sink; NULL (the default) discards every message. */
void ptts_set_log_callback(ptts_log_fn fn, void *user);

/* ---- model ---------------------------------------------------------------------------------
 * The weights (safetensors, F32/BF16/F16), the tokenizer and the text rules of one language.
 * Read-only after loading; share one model between streams and threads. */
typedef struct ptts_model ptts_model;

enum { PTTS_PRECISION_F32 = 0, PTTS_PRECISION_BF16 = 1, PTTS_PRECISION_INT8 = 2 };
enum { PTTS_BACKEND_AUTO = 0, PTTS_BACKEND_CPU = 1, PTTS_BACKEND_VULKAN = 2 };

typedef struct ptts_model_options {
    const char *config_path;    /* the reference's YAML (or JSON) config; NULL: none */
    const char *weights_path;   /* overrides the config's weights_path */
    const char *tokenizer_path; /* overrides the config's tokenizer_path */
    int precision;              /* PTTS_PRECISION_*: backbone weight storage (0: float32) */
    int threads;                /* 0: every online CPU */
    int backend;                /* PTTS_BACKEND_* (0: auto) */
    int heads, codec_heads;     /* 0: from the config, else width / 64 */
} ptts_model_options;

ptts_model_options ptts_model_options_default(void);
int ptts_model_load(ptts_model **out, const ptts_model_options *o, ptts_error *e);
void ptts_model_free(ptts_model *m);

typedef struct ptts_model_info {
    int layers, d, heads, latent_dim, vocab_size;
    int has_voice_cloning;       /* encoder weights present */
    int insert_bos_before_voice;
    int sample_rate, frame_samples;
    int threads;
    const char *isa;             /* CPU kernels in use */
    size_t weight_bytes;
} ptts_model_info;
void ptts_model_get_info(const ptts_model *m, ptts_model_info *info);

/* ---- voices --------------------------------------------------------------------------------
 * A voice is the backbone's state after the voice prompt. Voices are values: never modified by
 * generation, freely shared between streams. */
typedef struct ptts_voice ptts_voice;

/* A voice-state file in the reference's format (safetensors). */
int ptts_voice_load(ptts_voice **out, const ptts_model *m, const char *path, ptts_error *e);
int ptts_voice_load_memory(ptts_voice **out, const ptts_model *m, const void *buf, size_t size,
                           ptts_error *e);
/* Clone a voice from mono samples at `sample_rate` (resampled to 24 kHz). max_seconds > 0
 * truncates (the reference's export and server use 30). */
int ptts_voice_from_samples(ptts_voice **out, const ptts_model *m, const float *samples,
                            int64_t n, int sample_rate, double max_seconds, ptts_error *e);
/* Clone a voice from an audio file (any format libsndfile reads). */
int ptts_voice_from_audio_file(ptts_voice **out, const ptts_model *m, const char *path,
                               double max_seconds, ptts_error *e);
/* Save in the reference's voice-state format (F32 cache + int64 offset), atomically. */
int ptts_voice_save(const ptts_voice *v, const char *path, ptts_error *e);
int ptts_voice_positions(const ptts_voice *v);
void ptts_voice_free(ptts_voice *v);

/* ---- generation ---------------------------------------------------------------------------- */
typedef struct ptts_gen_options {
    float temperature;    /* noise variance; default 0.7. 0 means no noise (deterministic) */
    float noise_clamp;    /* > 0: noise truncated to [-clamp, clamp]; <= 0: none (default) */
    float eos_threshold;  /* default -4.0 */
    int frames_after_eos; /* < 0: auto (the model's recommendation, else the text's guess) */
    int lsd_steps;        /* 0: 1 */
    int max_tokens;       /* tokens per text chunk; 0: 50 */
    uint64_t seed;        /* with seed_set: reproducible noise */
    int seed_set;         /* 0: a random seed */
    /* Replay these noise rows ([noise_rows, latent_dim], in generation order) instead of
     * drawing; running past the end is an error. For tests against the reference. */
    const float *noise;
    int noise_rows;
} ptts_gen_options;

ptts_gen_options ptts_gen_options_default(void);

/* A stream generates one utterance at a time, frame by frame. Each stream has its own cache,
 * codec state, scratch and random generator; streams of one model may run on different
 * threads. */
typedef struct ptts_stream ptts_stream;

int ptts_stream_create(ptts_stream **out, const ptts_model *m, ptts_error *e);
void ptts_stream_free(ptts_stream *s);
/* Prepare and split `text`; the voice must stay alive until the utterance ends. */
int ptts_stream_start(ptts_stream *s, const ptts_voice *v, const char *text,
                      const ptts_gen_options *o, ptts_error *e);
/* Generate the next frame: writes PTTS_FRAME_SAMPLES samples (float, about [-1, 1]) to pcm and
 * returns that count; 0 when the utterance is complete; < 0 on error. */
int ptts_stream_next(ptts_stream *s, float *pcm, ptts_error *e);

typedef struct ptts_stream_status {
    int chunk, n_chunks;  /* current chunk (0-based) and how many */
    int step;             /* step within the chunk */
    int frames_total;     /* frames emitted so far */
    int eos_missed;       /* chunks that hit max_gen_len without EOS */
} ptts_stream_status;
void ptts_stream_get_status(const ptts_stream *s, ptts_stream_status *st);

/* Whole utterance through a callback: `fn` receives each frame as soon as it exists; a nonzero
 * return stops generation (PTTS_E_CANCELLED). */
typedef int (*ptts_audio_fn)(void *user, const float *pcm, int n_samples);
int ptts_synthesize(const ptts_model *m, const ptts_voice *v, const char *text,
                    const ptts_gen_options *o, ptts_audio_fn fn, void *user, ptts_error *e);

#ifdef __cplusplus
}
#endif
#endif /* PTTS_H */
