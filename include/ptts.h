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

#ifdef __cplusplus
}
#endif
#endif /* PTTS_H */
