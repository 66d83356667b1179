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
 *  - Options structs: zero (or NULL) means default in every field, so `{0}` is the defaults, as
 *    is the *_default() function's result. A value whose zero is meaningful is used only with
 *    its _set flag.
 */
#ifndef PTTS_H
#define PTTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (what `pocket-tts --version` prints). Never NULL. */
const char *ptts_version(void);

#define PTTS_SAMPLE_RATE 24000
/* One latent frame = 80 ms at 24 kHz: what ptts_stream_next writes and a frame callback
 * receives. A checkpoint whose codec makes other frames (16 x the product of its upsampling
 * ratios, 6 x 5 x 4 for every published one) is refused at load (PTTS_E_UNSUPPORTED). */
#define PTTS_FRAME_SAMPLES 1920
/* The seconds of audio the reference clones a voice from where it truncates (export-voice and
 * the server's uploads; the CLI's --voice, voice_url and serve --default-voice do not). */
#define PTTS_VOICE_CLONE_SECONDS 30.0

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
/* Process-wide log sink; NULL (the default) discards every message. Safe to set from any thread
 * at any time: the callback is called, one message at a time, from whichever thread the library
 * runs the logging call on (ptts_model_load's, a stream's, a batch's), and never again once the
 * call that replaced it has returned. It must not call ptts_set_log_callback itself. */
void ptts_set_log_callback(ptts_log_fn fn, void *user);

/* ---- model ---------------------------------------------------------------------------------
 * The weights (safetensors, F32/BF16/F16), the tokenizer and the text rules of one language.
 * Read-only after loading; share one model between streams and threads. */
typedef struct ptts_model ptts_model;

enum { PTTS_PRECISION_F32 = 0, PTTS_PRECISION_BF16 = 1, PTTS_PRECISION_INT8 = 2 };
/* VULKAN_CODEC: backbone and flow head on the CPU, the codec on the GPU (--backend
 * vulkan-codec; bench/RESULTS.md says where each mode is faster). */
enum {
    PTTS_BACKEND_AUTO = 0,
    PTTS_BACKEND_CPU = 1,
    PTTS_BACKEND_VULKAN = 2,
    PTTS_BACKEND_VULKAN_CODEC = 3
};
/* CPU engine: run the codec of frame t on some threads while the others compute the backbone
 * of frame t+1 (same results bit for bit; a chunk's first frame is never overlapped, so the
 * time to first audio does not change). AUTO: on with 2 to 4 threads, and for batches with
 * any number, where it was measured faster; off for one stream on 5+ threads (its codec on one
 * thread then takes longer than everything else on all of them) and with one thread (nothing
 * to overlap). See engine_cpu.c for the figures. The GPU engine ignores it. */
enum { PTTS_OVERLAP_AUTO = 0, PTTS_OVERLAP_ON = 1, PTTS_OVERLAP_OFF = 2 };

typedef struct ptts_model_options {
    /* Paths may be local files, hf://ORG/NAME/PATH[@REVISION] or http(s) URLs (downloaded into
     * the cache on first use, see ptts_fetch). With none of config_path, weights_path and
     * tokenizer_path set, the language's published model is used (english by default). */
    const char *config_path; /* the reference's YAML (or JSON) config; NULL: none */
    /* Overrides the config's weights_path. A file written by ptts_weights_convert (`pocket-tts
     * convert`) is recognised by its first bytes and mapped as it is: nothing converted or
     * packed at load; its precision is the one it was converted for (precision below: 0 takes
     * it, another value must match it). */
    const char *weights_path;
    const char *tokenizer_path; /* overrides the config's tokenizer_path */
    int precision;              /* PTTS_PRECISION_*: backbone weight storage (0: float32) */
    int threads;                /* 0: every online CPU */
    int backend;                /* PTTS_BACKEND_* (0: auto) */
    /* The Vulkan device: its index as ptts_gpu_devices lists them, or a part of its name in any
     * case ("h200", "radeon"). NULL: the first discrete GPU, else an integrated one, else the
     * first (PTTS_VK_DEVICE=N names one too). With the auto backend, naming a device asks for
     * the GPU on it (an error when it does not exist or does not work), not for the CPU. */
    const char *device;
    int overlap; /* PTTS_OVERLAP_* (0: auto) */
    /* A language of ptts_language_find (english, french_24l, ...): its weights (the gated ones
     * with voice cloning when the token allows, else the open ones), tokenizer and text rules.
     * A config or explicit paths given as well take precedence over the language's. */
    const char *language;
    /* GPU gemms on tensor cores (float16 operands, float32 sums; changes the numerics within
     * the GPU tolerance): 0 auto (on where the device has cooperative matrices and the
     * precision is bf16 or int8), 1 on where the device has them, -1 off. */
    int tensor_cores;
    /* GPU: poll a submission's fence for this many microseconds before sleeping in the driver
     * (lower latency per frame, one CPU core busy while the GPU works): 0 the default (20000
     * on a discrete GPU, none elsewhere), < 0 never poll. */
    int fence_spin_us;
} ptts_model_options;

ptts_model_options ptts_model_options_default(void);
int ptts_model_load(ptts_model **out, const ptts_model_options *o, ptts_error *e);
/* Free streams and batches first. The model keeps the engines of up to two freed streams or
 * batches for the next ones of the same size (on a GPU an engine holds the uploaded weights:
 * the next stream starts without uploading them again); they are released here. */
void ptts_model_free(ptts_model *m);

/* The Vulkan devices, in the order ptts_model_options.device numbers them: fills up to `max`
 * and returns how many, or < 0 with e filled (a build without the Vulkan backend, no driver, no
 * device). picked marks the device used when none is named. */
typedef struct ptts_gpu_device {
    char name[256];
    const char *kind;          /* "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other" */
    unsigned long long memory; /* bytes of its largest device-local memory heap */
    int picked;
} ptts_gpu_device;
int ptts_gpu_devices(ptts_gpu_device *out, int max, ptts_error *e);

typedef struct ptts_model_info {
    int layers, d, heads, latent_dim, vocab_size;
    int has_voice_cloning; /* encoder weights present */
    int insert_bos_before_voice;
    int sample_rate, frame_samples;
    int threads;
    const char *isa; /* CPU kernels in use */
    size_t weight_bytes;
} ptts_model_info;
void ptts_model_get_info(const ptts_model *m, ptts_model_info *info);

/* ---- voices --------------------------------------------------------------------------------
 * A voice is the backbone's state after the voice prompt. Voices are values: never modified by
 * generation, freely shared between streams. */
typedef struct ptts_voice ptts_voice;

/* A voice-state file in the reference's format (safetensors): offset or the legacy
 * current_end; a `pad` key must be 0 (non-zero, from batched generation: PTTS_E_UNSUPPORTED). */
int ptts_voice_load(ptts_voice **out, const ptts_model *m, const char *path, ptts_error *e);
int ptts_voice_load_memory(ptts_voice **out, const ptts_model *m, const void *buf, size_t size,
                           ptts_error *e);
/* Clone a voice from mono samples at `sample_rate` (resampled to 24 kHz). max_seconds > 0
 * truncates at the input rate before resampling (the reference's export and server use 30).
 * As in 3.3, the clip then goes through end_on_pause: trailing silence (frames more than 35 dB
 * below the loudest 20 ms) is cut, the end faded over 20 ms and 80 ms of silence appended.
 * Errors: PTTS_E_UNSUPPORTED when the weights have no codec encoder (the open checkpoints);
 * PTTS_E_AUDIO for a clip shorter than one 80 ms frame, a silent clip (peak below 1e-4) or
 * non-finite samples. */
int ptts_voice_from_samples(ptts_voice **out, const ptts_model *m, const float *samples, int64_t n,
                            int sample_rate, double max_seconds, ptts_error *e);
/* Clone a voice from an audio file (WAV of any sample format, FLAC, OGG/Vorbis, Opus, MP3;
 * channels averaged). With max_seconds > 0 only that much of the file is read. Errors as
 * ptts_voice_from_samples, plus PTTS_E_IO (missing file) and PTTS_E_AUDIO (not audio). */
int ptts_voice_from_audio_file(ptts_voice **out, const ptts_model *m, const char *path,
                               double max_seconds, ptts_error *e);
/* Clone a voice from an audio file held in memory (an upload): as ptts_voice_from_audio_file. */
int ptts_voice_from_audio_memory(ptts_voice **out, const ptts_model *m, const void *buf,
                                 size_t size, double max_seconds, ptts_error *e);
/* A voice argument as the CLI and the server take it: a preset name (for `language`; NULL:
 * english), an hf:// or http(s) URL (downloaded when needed) or a local path, naming either a
 * voice-state file (loaded; told by its content, a safetensors header) or audio (cloned, from
 * its first max_seconds when > 0). *cloned (may be NULL) is set to 1 for audio, else 0. Errors
 * as ptts_voice_resolve, ptts_voice_load and ptts_voice_from_audio_file. */
int ptts_voice_open(ptts_voice **out, const ptts_model *m, const char *language, const char *voice,
                    double max_seconds, int *cloned, ptts_error *e);
/* Save in the reference's 3.3 voice-state format (F32 cache, int64 offset, int64 pad = 0),
 * atomically. */
int ptts_voice_save(const ptts_voice *v, const char *path, ptts_error *e);
int ptts_voice_positions(const ptts_voice *v);
void ptts_voice_free(ptts_voice *v);

/* ---- languages, preset voices, downloads -----------------------------------------------------
 * Files named hf://ORG/NAME/PATH[@REVISION] come from Hugging Face (HF_ENDPOINT overrides
 * https://huggingface.co; HF_TOKEN or the token file of `hf auth login` is sent) into the hub
 * cache that the Python package also uses ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub);
 * http(s) URLs into ~/.cache/pocket_tts. HF_HUB_OFFLINE=1 forbids the network. */
typedef struct ptts_language {
    const char *name;    /* the packaged config's stem; its files are in languages/{name}/ */
    int layers;          /* backbone layers: 6 or 24 */
    const char *sampler; /* flow_lm.flow.type: "lsd" or "drifting" */
    int insert_bos_before_voice; /* flow_lm.insert_bos_before_voice */
    int inner_dim;               /* mimi.inner_dim: the speaker projection width */
    int pad_with_spaces;         /* text rules (MODEL.md 8.1, 10.4) */
    int remove_semicolons;
    const char *replace;       /* replace_characters table of MODEL.md 10.5: "", "A", "A+FR"
                                * or "A+ES" */
    const char *default_voice; /* a preset name (MODEL.md 7.4) */
    const char *default_text;  /* what `pocket-tts generate` says without --text */
    /* Pinned files (MODEL.md 10.6; full 40-hex revisions). NULL where no source shows them:
     * the gated weights of french (used as a refused gated download: the open weights, no
     * cloning) and everything of portuguese_24l (a download needs explicit paths). */
    const char *gated_revision; /* kyutai/pocket-tts languages/{name}/model.safetensors */
    const char *open_revision;  /* kyutai/pocket-tts-without-voice-cloning, same path */
    const char *tokenizer_path; /* in the open repository (languages/{name}/tokenizer.json, or
                                 * the repo root's for english_2026-01) */
    const char *tokenizer_revision;
    const char *voices_revision; /* of languages/{name}/embeddings/{voice}.safetensors */
    int listed;                  /* 0: left out of the CLI help (the english_*_24l) */
} ptts_language;

int ptts_language_count(void);
const ptts_language *ptts_language_at(int i); /* NULL when out of range */
/* By config name (english, french_24l, english_drifting_26-09, ...); NULL when unknown. */
const ptts_language *ptts_language_find(const char *name);

/* Download progress: `done` of `total` bytes (-1: unknown) of the file `name`; called about ten
 * times a second, then once with done == total when the file is complete. A nonzero return
 * cancels the download (PTTS_E_CANCELLED). Process-wide; NULL (the default) reports nothing.
 * Safe to set from any thread: called on the thread that downloads (the one in ptts_fetch,
 * ptts_model_load, ...), one call at a time, never again once the call that replaced it has
 * returned; it must not call ptts_set_progress_callback itself. */
typedef int (*ptts_progress_fn)(void *user, const char *name, int64_t done, int64_t total);
void ptts_set_progress_callback(ptts_progress_fn fn, void *user);

/* A local path for `path_or_url`: a local path is returned as it is; a URL is downloaded unless
 * cached. *path is malloc'd (free it). */
int ptts_fetch(char **path, const char *path_or_url, ptts_error *e);
/* Limits for a URL the program did not choose itself (a server's client named it). */
typedef struct ptts_fetch_options {
    /* 1: https:// (and hf:// over https) only, redirects included, no proxy, and every
     * connection of the transfer goes to a public unicast address: the address checked is the
     * one connected to (after resolution, each redirect hop too), never loopback, private,
     * link-local, carrier-grade NAT, multicast, unspecified, reserved or their IPv4-mapped /
     * NAT64 / 6to4 forms. A refused address is PTTS_E_INVALID. */
    int public_only;
    int64_t max_bytes; /* a larger file fails (PTTS_E_NOMEM) and is deleted; 0: no limit */
    int timeout_s;     /* the whole download, retries included (PTTS_E_NETWORK); 0: none */
} ptts_fetch_options;
/* ptts_fetch of a URL (a local path is refused: PTTS_E_INVALID) under the limits of `o`. A
 * cached copy is used without any network. */
int ptts_fetch_url(char **path, const char *url, const ptts_fetch_options *o, ptts_error *e);
/* 1 with *path (malloc'd) when the URL is in the cache (or the local file exists), else 0.
 * Never touches the network. */
int ptts_fetch_cached(char **path, const char *path_or_url);

/* The weights and tokenizer of a language, downloaded when needed: the gated weights with voice
 * cloning first, the open ones when those are refused (said once through the log callback) or
 * not known (french). *has_cloning (may be NULL) says which. Both paths malloc'd. A language
 * whose files are not pinned (portuguese_24l) is PTTS_E_UNSUPPORTED, with the reason. */
int ptts_language_fetch(const char *language, char **weights_path, char **tokenizer_path,
                        int *has_cloning, ptts_error *e);
/* Only the tokenizer of a language (a few hundred kB), downloaded when needed. */
int ptts_language_fetch_tokenizer(const char *language, char **tokenizer_path, ptts_error *e);

/* Preset voices (MODEL.md 7.4): the 27 names, each accepted with every language (its folder
 * holds that voice computed with its own weights). The count is 0 for an unknown language. */
int ptts_preset_voice_count(const char *language);
const char *ptts_preset_voice_name(const char *language, int i);
/* The hf:// URL of preset `voice` for `language` (any preset name is accepted for any
 * language; the repository says whether it exists). Writes a NUL-terminated URL; returns 0, or
 * PTTS_E_NOT_FOUND when `voice` is no preset, PTTS_E_INVALID for an unknown language or a
 * buffer too small, PTTS_E_UNSUPPORTED when the language's voices revision is not known. */
int ptts_preset_voice_url(const char *language, const char *voice, char *url, size_t cap);
/* A voice argument as a local file: a preset name (for `language`; NULL: english), an hf:// or
 * http(s) URL, or a local path. Downloads when needed; *path is malloc'd. */
int ptts_voice_resolve(char **path, const char *language, const char *voice, ptts_error *e);

/* ---- developer entries (pocket-tts tokenize, fill) --------------------------------------------
 */
/* The SentencePiece ids of `text` (len bytes, no BOS/EOS), as SentencePiece's encode gives them,
 * with the tokenizer of `o` (tokenizer_path, else the config's, else the language's: english by
 * default; downloaded when needed); no weights are read. *ids is malloc'd (free it). With pieces
 * non-NULL, also the pieces: one malloc'd block (free it once) of *n strings, then NULL. */
int ptts_tokenize(const ptts_model_options *o, const char *text, size_t len, int **ids,
                  char ***pieces, int *n, ptts_error *e);
/* Write a checkpoint of synthetic pocket-fill-v1 weights (tests/fixtures/README.md) of the
 * architecture `arch` ("full": english_2026-04's, 109.5 M parameters; "tiny") in `dtype` ("f32",
 * "bf16" or "f16"), to try or benchmark the engine without the real weights. */
int ptts_synthetic_weights_write(const char *arch, const char *dtype, const char *path,
                                 ptts_error *e);
/* Convert the weights of the model that `o` describes (a checkpoint, with its config's head
 * counts) to the form loading builds for o->precision (int8 rows and scales, bf16 matrices and
 * panels, float32 panels), written to `out` (under a temporary name, renamed when complete).
 * Loading `out` as weights_path maps it with nothing converted or packed, and gives the
 * checkpoint's results in that precision to the bit. The file states its format version, the
 * precision and the source's size and SHA-256; it is for this build of the library and this
 * byte order (another is refused: convert again). Only the weights are read (no tokenizer
 * needed); threads, backend and the other options are not used. */
int ptts_weights_convert(const ptts_model_options *o, const char *out, ptts_error *e);

/* ---- generation ---------------------------------------------------------------------------- */
/* Zero means default in every field (`ptts_gen_options o = {0};` is the reference's defaults,
 * MODEL.md 10.1). A value whose zero is meaningful is used only with its _set flag. */
typedef struct ptts_gen_options {
    float temperature; /* noise variance (with temperature_set; 0: no noise). Unset: the
                        * model's default_temperature (0.3 for every shipped config) */
    int temperature_set;
    float noise_clamp;   /* > 0: noise truncated to [-clamp, clamp]; <= 0: none (default) */
    float eos_threshold; /* with eos_threshold_set; unset: -4.0 */
    int eos_threshold_set;
    int frames_after_eos; /* with frames_after_eos_set (>= 0); unset: auto (the config's
                           * recommendation, else the chunk's guess + 2) */
    int frames_after_eos_set;
    int sampler_steps; /* sampler_decode_steps (was lsd_decode_steps); 0: 1. The model's
                        * sampler (lsd, flow_matching, drifting) sets its meaning: drifting
                        * ignores it; flow_matching wants about 16 (not enforced) */
    int max_tokens;    /* tokens per text chunk; 0: 50 */
    uint64_t seed;     /* with seed_set: reproducible noise */
    int seed_set;      /* 0: a random seed */
    /* Replay these noise rows ([noise_rows, latent_dim], in generation order) instead of
     * drawing; running past the end is an error. For tests against the reference. */
    const float *noise;
    int noise_rows;
    /* Pauses and SSML in the text: 0 (the default) reads both; PTTS_MARKUP_OFF speaks the text
     * as written; else PTTS_MARKUP_* flags. On by default because clients send pauses and SSML
     * without asking (no one wants "[pause]" read out) and plain text rarely trips it: only
     * "[pause" and a "<" before a letter, "/", "!" or "?" start markup ("[laughs]", "a < b" and
     * "AT&T" stay text). Brackets: [pause] (0.5 s), [pause:S] (S seconds, "1.5", "500ms").
     * SSML: <break time="500ms"/>, <break strength="none|x-weak|weak|medium|strong|x-strong"/>
     * (0, 0.1, 0.25, 0.5, 0.75, 1.25 s), <sub alias="A">..</sub>; other tags are removed with
     * their text kept; entities inside <speak>. At most 10 s per pause. A pause ends the chunk
     * before it, and exactly that many samples of silence follow before the next chunk (see
     * ptts_stream_next). Invalid markup: PTTS_E_TEXT naming the byte offset. */
    int markup;
    /* Seconds of silence between two chunks that no pause separates (0: none, the reference's
     * behaviour; at most 10), like Piper's --sentence-silence. */
    float sentence_silence;
} ptts_gen_options;

/* ptts_gen_options.markup. The flags' values are those of the internal parser (src/markup.h). */
enum {
    PTTS_MARKUP_OFF = -1,
    PTTS_MARKUP_BRACKETS = 1,     /* [pause], [pause:S]: alone for text where "<" means itself */
    PTTS_MARKUP_SSML = 2,         /* tags, comments, entities inside <speak>: alone for SSML clients
                                   * whose text holds literal brackets */
    PTTS_MARKUP_SSML_DOCUMENT = 4 /* with SSML: entities decoded everywhere (the text is SSML) */
};

ptts_gen_options ptts_gen_options_default(void);

/* A stream generates one utterance at a time, frame by frame. Each stream has its own cache,
 * codec state, scratch and random generator; streams of one model may run on different
 * threads. */
typedef struct ptts_stream ptts_stream;

int ptts_stream_create(ptts_stream **out, const ptts_model *m, ptts_error *e);
void ptts_stream_free(ptts_stream *s);
/* Read the markup of `text` (ptts_gen_options.markup), prepare and split each piece of text;
 * invalid markup or an empty text is PTTS_E_TEXT. The voice must stay alive until the
 * utterance ends. */
int ptts_stream_start(ptts_stream *s, const ptts_voice *v, const char *text,
                      const ptts_gen_options *o, ptts_error *e);
/* Generate the next frame: writes PTTS_FRAME_SAMPLES samples (float, about [-1, 1]) to pcm (a
 * buffer of at least that many) and returns that count; 0 when the utterance is complete (or,
 * incremental, waits for text: see below); < 0 on error. A pause (markup, sentence_silence)
 * comes as frames of PTTS_FRAME_SAMPLES zeros and a last frame of the remainder: fewer samples,
 * so that a pause of N samples is exactly N zeros; speech frames are always whole. */
int ptts_stream_next(ptts_stream *s, float *pcm, ptts_error *e);

/* Incremental text (an LLM's tokens, a socket): start with the voice and options and no text,
 * then feed pieces of any size (split anywhere, in the middle of a UTF-8 character too), flush,
 * end. Text becomes chunks only when generation needs the next one: then every complete
 * sentence that has arrived is split (MODEL.md 8.3, markup included) as one text would be,
 * and the rest waits. A sentence is complete at a run of end marks (. ! ? U+2026) followed by
 * any character, except a decimal point (a single "." after a digit with a digit as the next
 * character other than whitespace: "3.75", "2. 5": that waits for the digit or its absence);
 * marks inside a tag or a [pause...] do not count. A flush makes all text fed so far complete
 * (a hard chunk boundary: where a server's idle-time rule calls it); the end makes the rest
 * complete and ends the utterance once spoken. So all text fed and ended before the first
 * ptts_stream_next gives the chunks and, with a seed, the samples of ptts_stream_start.
 * While every complete sentence has been spoken and the end has not come, ptts_stream_next
 * returns 0 with ptts_stream_status.waiting set; feed more and call it again. At most
 * PTTS_FEED_MAX_BYTES bytes wait to become chunks: a feed beyond it is PTTS_E_BUSY (nothing is
 * taken: let generation catch up and feed it again). Errors in the text (invalid markup,
 * invalid UTF-8, an empty text at the end) are reported by the ptts_stream_next that reaches
 * them. A feed after the end, or on a stream not started incrementally, is PTTS_E_INVALID. */
#define PTTS_FEED_MAX_BYTES (1u << 20)
int ptts_stream_start_incremental(ptts_stream *s, const ptts_voice *v, const ptts_gen_options *o,
                                  ptts_error *e);
int ptts_stream_feed(ptts_stream *s, const char *text, size_t len, ptts_error *e);
int ptts_stream_flush(ptts_stream *s, ptts_error *e);
int ptts_stream_end(ptts_stream *s, ptts_error *e);
/* Drop the current utterance (incremental or not) and any frames computed ahead for it; the
 * stream is idle until the next start. */
void ptts_stream_cancel(ptts_stream *s);

typedef struct ptts_stream_status {
    int chunk, n_chunks; /* current chunk (0-based) and how many */
    int step;            /* step within the chunk */
    int frames_total;    /* speech frames emitted so far (a pause's frames not counted) */
    int eos_missed;      /* chunks that hit max_gen_len without EOS */
    int frames_ahead;    /* frames the engine has computed beyond those (a GPU computes the
                          * next call's frames with the last call's audio): 0 at chunk ends */
    int waiting;         /* incremental: all complete text is spoken; feed, flush or end */
} ptts_stream_status;
void ptts_stream_get_status(const ptts_stream *s, ptts_stream_status *st);

/* Whole utterance through a callback: `fn` receives each frame as soon as it exists; a nonzero
 * return stops generation (PTTS_E_CANCELLED). */
typedef int (*ptts_audio_fn)(void *user, const float *pcm, int n_samples);
int ptts_synthesize(const ptts_model *m, const ptts_voice *v, const char *text,
                    const ptts_gen_options *o, ptts_audio_fn fn, void *user, ptts_error *e);

/* ---- batches -------------------------------------------------------------------------------
 * Many utterances advanced together: each ptts_batch_step() runs one step of every active
 * utterance with the weights read once (a server's concurrent requests). Not thread-safe: one
 * thread drives a batch. */
typedef struct ptts_batch ptts_batch;

int ptts_batch_create(ptts_batch **out, const ptts_model *m, int max_streams, ptts_error *e);
void ptts_batch_free(ptts_batch *b);
/* Start an utterance in a free slot: returns the slot (>= 0), PTTS_E_BUSY when every slot is
 * taken (or the batch runs another sampler step count), or another error. */
int ptts_batch_start(ptts_batch *b, const ptts_voice *v, const char *text,
                     const ptts_gen_options *o, ptts_error *e);
/* fn(user, slot, pcm, n): a frame of slot's utterance (n samples: PTTS_FRAME_SAMPLES, fewer for
 * the last frame of a pause); pcm NULL marks the end of
 * that utterance (n = 0: complete, n < 0: an error code); the slot is free afterwards. A nonzero
 * return cancels that utterance. */
typedef int (*ptts_batch_fn)(void *user, int slot, const float *pcm, int n);
/* One step of every active utterance. Returns how many remain active, or < 0 on an error. On a
 * GPU a step may return while the device still decodes its frames: they then reach fn during
 * the next step, while the device computes the one after (frames stay in order, and every
 * frame of an utterance comes before its end is reported). */
int ptts_batch_step(ptts_batch *b, ptts_batch_fn fn, void *user, ptts_error *e);
void ptts_batch_cancel(ptts_batch *b, int slot);
/* Incremental text in a slot, as the stream's (ptts_stream_start_incremental): the start returns
 * the slot; a slot that waits for text is active but takes no step and gets no frame; its
 * pauses come as frames of fewer samples as in ptts_stream_next; its text errors end it through
 * fn (pcm NULL, n < 0). */
int ptts_batch_start_incremental(ptts_batch *b, const ptts_voice *v, const ptts_gen_options *o,
                                 ptts_error *e);
int ptts_batch_feed(ptts_batch *b, int slot, const char *text, size_t len, ptts_error *e);
int ptts_batch_flush(ptts_batch *b, int slot, ptts_error *e);
int ptts_batch_end(ptts_batch *b, int slot, ptts_error *e);
/* Size every stream's state now for chunks of up to n_ids token ids spoken with voice v: its
 * prompt, the ids and the chunk's step budget (MODEL.md 8.4). A chunk longer than any before
 * otherwise grows them when it starts; on a GPU every stream of the batch then waits while the
 * caches are copied (about 0.1 s at 256 streams on an H200). Chunks are split at max_tokens
 * (ptts_gen_options, 50) counted on the text before each chunk is prepared again, which can add
 * a few ids; a sentence with no break within max_tokens is one longer chunk. The memory is held
 * for every stream (on the CPU and on a GPU, 2 bytes per position, layer and model dimension
 * for K and for V in the reduced-precision modes, 4 in float32: with a 10 s voice and 50 ids,
 * 410 positions, about 10 MiB a stream for a 6-layer model of dimension 1024). Never shrinks. */
int ptts_batch_reserve(ptts_batch *b, const ptts_voice *v, int n_ids, ptts_error *e);
/* The same for any voice cloned from up to `seconds` of audio (ptts_voice_from_samples with
 * max_seconds = seconds; PTTS_VOICE_CLONE_SECONDS: 377 positions): for a server that clones
 * uploads, whose voices are not known at start. PTTS_E_UNSUPPORTED when the model cannot clone,
 * PTTS_E_INVALID for seconds outside (0, 3600] or n_ids outside 1 to 4096. */
int ptts_batch_reserve_clone(ptts_batch *b, double seconds, int n_ids, ptts_error *e);
int ptts_batch_active(const ptts_batch *b);
/* How a batch that is running treats the first frames of an utterance that joins it (on an
 * engine that decodes a call beside the next call's step: the GPU's, the CPU's with 2+ threads).
 * PTTS_JOIN_FIRST_AUDIO (the default): they are decoded apart from the rest of their call (the
 * joiners alone: a few streams, a short decode) and go out at once; the rest of the call is
 * decoded beside the next call's step like every other call. PTTS_JOIN_THROUGHPUT: with their
 * call, so no decode runs apart and each joiner gets its first audio one call later. Measured
 * under a steady load on an H100 (bench/RESULTS.md, "Joiners decoded apart"). The same
 * samples either way. */
enum { PTTS_JOIN_FIRST_AUDIO = 0, PTTS_JOIN_THROUGHPUT = 1 };
int ptts_batch_set_joins(ptts_batch *b, int policy, ptts_error *e);
/* Active incremental slots that, at the last ptts_batch_step, had spoken all their complete
 * text and waited for more (they took no step). When it equals ptts_batch_active, stepping
 * again does nothing until a feed, flush, end or cancel: a server can sleep until one. */
int ptts_batch_waiting(const ptts_batch *b);

#ifdef __cplusplus
}
#endif
#endif /* PTTS_H */
