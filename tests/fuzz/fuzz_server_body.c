/*
 * fuzz_server_body.c - libFuzzer target for the request bodies of `pocket-tts serve`
 * (tools/server/server_req.c). The first byte picks the route:
 *   even: the rest is the JSON body of POST /v1/audio/speech: srv_speech_parse accepts it (a
 *         text that passes the checks, a format this build writes, SSE only on pcm or wav, a
 *         speed and generation options in range) or refuses it with a 4xx status and a
 *         message;
 *   odd:  the rest is a sequence of /tts form pieces as libmicrohttpd hands them out, each
 *         [field: 1 byte (text, voice_url, voice_wav, other, temperature, seed, eos_threshold,
 *         decode_steps)][has filename: 1 byte][length: 1 byte][data], collected under small
 *         limits, then srv_form_check and srv_form_gen_opts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define MAX_CHARS 64

static void speech(const uint8_t *d, size_t n) {
    srv_speech r;
    srv_bad b;
    const ptts_gen_options def = ptts_gen_options_default();
    int st = srv_speech_parse((const char *)d, n, MAX_CHARS, &def, &r, &b);
    if (st) {
        if (st < 400 || st > 599 || !b.msg[0]) abort();
        return;
    }
    if (!r.text || !*r.text || r.fmt < FMT_WAV || r.fmt >= SRV_N_FMT ||
        !srv_format_available(r.fmt) || !(r.speed >= 0.25 && r.speed <= 4.0) ||
        (r.sse && (!r.streaming || !srv_format_sse_ok(r.fmt))) ||
        !(r.go.temperature >= 0 && r.go.temperature <= 2) || r.go.sampler_steps > 64)
        abort();
    srv_speech_free(&r);
}

static void form(const uint8_t *d, size_t n) {
    static const char *const keys[8] = {"text",          "voice_url",   "voice_wav",
                                        "other",         "temperature", "seed",
                                        "eos_threshold", "decode_steps"};
    srv_form f = {.text_limit = 4 * MAX_CHARS, .wav_limit = 1024};
    size_t i = 0;
    while (i + 3 <= n) {
        const char *key = keys[d[i] & 7];
        const char *filename = d[i + 1] & 1 ? "v.wav" : NULL;
        size_t len = d[i + 2];
        i += 3;
        if (len > n - i) len = n - i;
        srv_form_field(&f, key, filename, (const char *)d + i, len);
        i += len;
    }
    srv_bad b;
    ptts_gen_options go = ptts_gen_options_default();
    int st = srv_form_check(&f, MAX_CHARS, &b);
    if (!st) st = srv_form_gen_opts(&f, &go, &b);
    if (st && (st < 400 || st > 599 || !b.msg[0])) abort();
    if (!st && (!f.text || f.text_len > f.text_limit || f.wav_len > f.wav_limit ||
                (f.wav_field && !f.wav_len)))
        abort();
    srv_form_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (data[0] & 1)
        form(data + 1, size - 1);
    else
        speech(data + 1, size - 1);
    return 0;
}
