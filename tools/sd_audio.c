/*
 * sd_audio.c - the audio of sd_pocket-tts: rate and pitch through Rubber Band (real-time mode,
 * as the HTTP server does speed), volume as a gain, then 16-bit PCM sent to speech-dispatcher
 * in `705 AUDIO` events, which the daemon plays through its own AudioOutputMethod.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rubberband/rubberband-c.h>

#include "sd_module.h"

/* Rubber Band takes at most this many samples per call (set_max_process_size). */
#define SD_RB_BLOCK 4096

static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER;

int sd_send(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&g_out);
    int rc = vfprintf(stdout, fmt, ap) < 0 || fflush(stdout) ? -1 : 0;
    pthread_mutex_unlock(&g_out);
    va_end(ap);
    return rc;
}

int sd_send_audio(const int16_t *pcm, int n) {
    if (n <= 0) return 0;
    pthread_mutex_lock(&g_out);
    /* The header lines say the encoding; the data follows "705-AUDIO" and a NUL byte, every
     * '\n' and 0x7d in it written as 0x7d then the byte with bit 5 inverted (HDLC), so that
     * its line ends at the first newline; the "705 AUDIO" line ends the event. */
    int rc = printf("705-bits=16\n705-num_channels=1\n705-sample_rate=%d\n705-num_samples=%d\n"
                    "705-big_endian=0\n705-AUDIO",
                    PTTS_SAMPLE_RATE, n) < 0;
    rc |= putchar(0) == EOF;
    for (int i = 0; i < n && !rc; i++) {
        uint16_t v = (uint16_t)pcm[i];
        unsigned char b[2] = {(unsigned char)(v & 0xff), (unsigned char)(v >> 8)};
        for (int k = 0; k < 2; k++) {
            if (b[k] == '\n' || b[k] == 0x7d) {
                rc |= putchar(0x7d) == EOF;
                rc |= putchar(b[k] ^ 0x20) == EOF;
            } else {
                rc |= putchar(b[k]) == EOF;
            }
        }
    }
    rc |= fputs("\n705 AUDIO\n", stdout) == EOF;
    rc |= fflush(stdout) != 0;
    pthread_mutex_unlock(&g_out);
    return rc ? -1 : 0;
}

struct sd_audio {
    RubberBandState rb; /* NULL when speed and pitch are 1 */
    long skip;          /* Rubber Band's start delay still to drop, samples */
    float gain;
    float *tmp;
    size_t tmp_cap;
    int16_t *pcm;
    size_t pcm_cap;
};

static int grow(void **p, size_t *cap, size_t n, size_t size) {
    if (n <= *cap) return 0;
    void *q = realloc(*p, n * size);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Gain, clip to [-1, 1], 16-bit (the library's conversion: x * 32767 truncated), send. */
static int emit(sd_audio *a, const float *x, size_t n) {
    if (n == 0) return 0;
    if (grow((void **)&a->pcm, &a->pcm_cap, n, sizeof *a->pcm)) return -1;
    for (size_t i = 0; i < n; i++) {
        float v = x[i] * a->gain;
        if (isnan(v)) v = 0;
        if (v > 1.0f) v = 1.0f;
        if (v < -1.0f) v = -1.0f;
        a->pcm[i] = (int16_t)(v * 32767.0f);
    }
    return sd_send_audio(a->pcm, (int)n);
}

int sd_audio_open(sd_audio **out, double speed, double pitch_scale, float gain) {
    *out = NULL;
    sd_audio *a = calloc(1, sizeof *a);
    if (!a) return -1;
    a->gain = gain;
    if (fabs(speed - 1.0) > 1e-9 || fabs(pitch_scale - 1.0) > 1e-9) {
        /* time ratio = output length / input length: 1 / speed */
        a->rb = rubberband_new(PTTS_SAMPLE_RATE, 1,
                               RubberBandOptionProcessRealTime | RubberBandOptionEngineFaster |
                                   RubberBandOptionThreadingNever,
                               1.0 / speed, pitch_scale);
        if (!a->rb) {
            free(a);
            return -1;
        }
        rubberband_set_max_process_size(a->rb, SD_RB_BLOCK);
        /* Real-time mode wants this much silence first and delays its output by the start
         * delay: padding in, dropping that much out keeps the speech from being cut. */
        unsigned pad = rubberband_get_preferred_start_pad(a->rb);
        a->skip = (long)rubberband_get_start_delay(a->rb);
        float zeros[1024] = {0};
        while (pad > 0) {
            unsigned k = pad < 1024 ? pad : 1024;
            const float *in[1] = {zeros};
            rubberband_process(a->rb, in, k, 0);
            pad -= k;
        }
    }
    *out = a;
    return 0;
}

static int drain(sd_audio *a) {
    int avail;
    while ((avail = rubberband_available(a->rb)) > 0) {
        if (grow((void **)&a->tmp, &a->tmp_cap, (size_t)avail, sizeof *a->tmp)) return -1;
        float *o[1] = {a->tmp};
        unsigned got = rubberband_retrieve(a->rb, o, (unsigned)avail);
        size_t off = 0;
        if (a->skip > 0) {
            off = got < (unsigned long)a->skip ? got : (size_t)a->skip;
            a->skip -= (long)off;
        }
        if (emit(a, a->tmp + off, got - off)) return -1;
    }
    return 0;
}

int sd_audio_write(sd_audio *a, const float *x, int n) {
    if (!a->rb) return emit(a, x, (size_t)n);
    for (int i = 0; i < n; i += SD_RB_BLOCK) {
        const float *in[1] = {x + i};
        rubberband_process(a->rb, in, (unsigned)(n - i < SD_RB_BLOCK ? n - i : SD_RB_BLOCK), 0);
        if (drain(a)) return -1;
    }
    return 0;
}

int sd_audio_finish(sd_audio *a) {
    if (!a->rb) return 0;
    float z = 0;
    const float *in[1] = {&z};
    rubberband_process(a->rb, in, 0, 1);
    return drain(a);
}

void sd_audio_free(sd_audio *a) {
    if (!a) return;
    if (a->rb) rubberband_delete(a->rb);
    free(a->tmp);
    free(a->pcm);
    free(a);
}
