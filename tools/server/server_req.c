/*
 * server_req.c - the request bodies of `pocket-tts serve`, parsed and checked apart from the
 * HTTP library so that a fuzzer can call them (tests/fuzz/fuzz_server_body.c): the JSON body of
 * POST /v1/audio/speech and the form fields of POST /tts (libmicrohttpd splits the multipart
 * or urlencoded body into fields; srv_form_field collects them with limits). Every refusal is
 * an HTTP status, an OpenAI-style param/code and a message.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "util.h"

static int refuse(srv_bad *b, unsigned status, const char *param, const char *code, const char *fmt,
                  ...) TOOL_PRINTF(5, 6);
static int refuse(srv_bad *b, unsigned status, const char *param, const char *code, const char *fmt,
                  ...) {
    b->status = status;
    b->param = param;
    b->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof b->msg, fmt, ap);
    va_end(ap);
    return (int)status;
}

static size_t utf8_chars(const char *t, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)t[i] & 0xC0) != 0x80;
    return n;
}

static int blank(const char *t, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (!strchr(" \t\r\n\f\v", t[i])) return 0;
    return 1;
}

size_t srv_utf8_check(const char *text, size_t len, uint32_t *cp) {
    const unsigned char *t = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned c = t[i];
        uint32_t u;
        size_t n;
        if (c < 0x80) {
            u = c, n = 1;
        } else if (c >= 0xC2 && c <= 0xDF) {
            u = c & 0x1F, n = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            u = c & 0x0F, n = 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            u = c & 0x07, n = 4;
        } else {
            *cp = 0xFFFFFFFFu;
            return i;
        }
        if (len - i < n) {
            *cp = 0xFFFFFFFFu;
            return i;
        }
        for (size_t k = 1; k < n; k++) {
            if ((t[i + k] & 0xC0) != 0x80) {
                *cp = 0xFFFFFFFFu;
                return i;
            }
            u = (u << 6) | (t[i + k] & 0x3F);
        }
        /* overlong forms, UTF-16 surrogates, past U+10FFFF */
        if ((n == 3 && (u < 0x800 || (u >= 0xD800 && u <= 0xDFFF))) ||
            (n == 4 && (u < 0x10000 || u > 0x10FFFF))) {
            *cp = 0xFFFFFFFFu;
            return i;
        }
        /* C0 controls but tab and line ends, DEL, C1 controls */
        if ((u < 0x20 && u != '\t' && u != '\n' && u != '\r') || (u >= 0x7F && u <= 0x9F)) {
            *cp = u;
            return i;
        }
        i += n;
    }
    return len;
}

/* The checks every text gets: valid UTF-8 without control characters, not blank, at most
 * max_chars characters. */
static int check_text(const char *text, size_t len, int max_chars, const char *param, srv_bad *b) {
    uint32_t cp = 0;
    size_t at = srv_utf8_check(text, len, &cp);
    if (at < len && cp == 0xFFFFFFFFu)
        return refuse(b, 400, param, "invalid_utf8",
                      "the text is not valid UTF-8 (byte offset %zu)", at);
    if (at < len)
        return refuse(b, 400, param, "control_character",
                      "the text contains the control character U+%04X at byte offset %zu; only "
                      "tab, line feed and carriage return are accepted",
                      (unsigned)cp, at);
    if (blank(text, len)) return refuse(b, 400, param, NULL, "the text cannot be empty");
    size_t n = utf8_chars(text, len);
    if (n > (size_t)max_chars)
        return refuse(b, 400, param, NULL,
                      "the text has %zu characters; this server accepts at most %d", n, max_chars);
    return 0;
}

/* ---- POST /v1/audio/speech ---------------------------------------------------------------- */

/* OpenAI's speech models as its SDK lists them (every one speaks with this model) */
const char *const srv_model_ids[SRV_N_MODELS] = {"pocket-tts", "tts-1", "tts-1-hd",
                                                 "gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-12-15"};

void srv_speech_free(srv_speech *r) {
    free(r->text);
    free(r->voice);
    memset(r, 0, sizeof *r);
}

int srv_speech_parse(const char *body, size_t len, int max_text_chars,
                     const ptts_gen_options *defaults, srv_speech *r, srv_bad *b) {
    memset(r, 0, sizeof *r);
    r->go = *defaults;
    r->fmt = srv_format_available(FMT_MP3) ? FMT_MP3 : FMT_WAV; /* OpenAI's default: mp3 */
    r->speed = 1.0;
    r->streaming = 1;
    if (!body) return refuse(b, 400, NULL, NULL, "a JSON body is required");
    /* cJSON decodes \u0000 into a NUL that would end the string early: refused here */
    for (size_t i = 0; i + 5 < len; i++) {
        if (body[i] != '\\') continue;
        if (body[i + 1] == 'u' && !memcmp(body + i + 2, "0000", 4))
            return refuse(b, 400, NULL, "control_character",
                          "the body contains \\u0000 (NUL) at byte offset %zu", i);
        i++; /* an escaped character: "\\\\u0000" is a backslash, then text */
    }
    cJSON *j = cJSON_ParseWithLength(body, len);
    if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return refuse(b, 400, NULL, "invalid_json", "the body is not a JSON object");
    }
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(j, "model"),
                *input = cJSON_GetObjectItemCaseSensitive(j, "input"),
                *voice = cJSON_GetObjectItemCaseSensitive(j, "voice"),
                *fmtj = cJSON_GetObjectItemCaseSensitive(j, "response_format"),
                *speedj = cJSON_GetObjectItemCaseSensitive(j, "speed"),
                *streamj = cJSON_GetObjectItemCaseSensitive(j, "stream"),
                *sfj = cJSON_GetObjectItemCaseSensitive(j, "stream_format"),
                *instr = cJSON_GetObjectItemCaseSensitive(j, "instructions");
    /* OpenAI's voice object {"id": "..."} names a voice as the string does */
    if (cJSON_IsObject(voice)) voice = cJSON_GetObjectItemCaseSensitive(voice, "id");
    int st = 0;
    if (model && !cJSON_IsNull(model)) {
        int known = 0;
        if (cJSON_IsString(model))
            for (int i = 0; i < SRV_N_MODELS; i++)
                known |= !strcmp(model->valuestring, srv_model_ids[i]);
        if (!known)
            st = refuse(b, 404, "model", "model_not_found",
                        "unknown model; GET /v1/models lists them");
    }
    if (!st && !cJSON_IsString(input))
        st = refuse(b, 400, "input", NULL, "'input' must be a string");
    if (!st)
        st = check_text(input->valuestring, strlen(input->valuestring), max_text_chars, "input", b);
    if (!st && fmtj && !cJSON_IsNull(fmtj)) {
        char list[96];
        srv_format_list(list, sizeof list);
        if (!cJSON_IsString(fmtj) || (r->fmt = srv_format_parse(fmtj->valuestring)) < 0)
            st = refuse(b, 400, "response_format", NULL,
                        "response_format is one of mp3, opus, aac, flac, wav, pcm; this server "
                        "writes %s",
                        list);
        else if (!srv_format_available(r->fmt))
            st = refuse(b, 400, "response_format", "unsupported_format",
                        "this server cannot write %s; it writes %s", srv_format_name(r->fmt), list);
    }
    if (!st && speedj && !cJSON_IsNull(speedj)) {
        if (!cJSON_IsNumber(speedj) || !(speedj->valuedouble >= 0.25 && speedj->valuedouble <= 4.0))
            st = refuse(b, 400, "speed", NULL, "speed must be a number in [0.25, 4.0]");
        else
            r->speed = speedj->valuedouble;
    }
    if (!st && streamj && !cJSON_IsNull(streamj)) {
        if (!cJSON_IsBool(streamj))
            st = refuse(b, 400, "stream", NULL, "stream must be true or false");
        else
            r->streaming = cJSON_IsTrue(streamj);
    }
    if (!st && sfj && !cJSON_IsNull(sfj)) {
        if (!cJSON_IsString(sfj) ||
            (strcmp(sfj->valuestring, "audio") && strcmp(sfj->valuestring, "sse")))
            st = refuse(b, 400, "stream_format", NULL, "stream_format is \"audio\" or \"sse\"");
        else if (!strcmp(sfj->valuestring, "sse") && !srv_format_sse_ok(r->fmt))
            st = refuse(b, 400, "stream_format", "unsupported_format",
                        "stream_format \"sse\" carries response_format pcm or wav (formats whose "
                        "pieces concatenate), not %s",
                        srv_format_name(r->fmt));
        else if (!strcmp(sfj->valuestring, "sse"))
            r->sse = r->streaming = 1; /* events as the audio comes, whatever "stream" says */
    }
    /* accepted and ignored (the model takes no style prompt): checked as any text is */
    if (!st && instr && !cJSON_IsNull(instr)) {
        uint32_t cp = 0;
        size_t n = cJSON_IsString(instr) ? strlen(instr->valuestring) : 0;
        if (!cJSON_IsString(instr))
            st = refuse(b, 400, "instructions", NULL, "'instructions' must be a string");
        else if (srv_utf8_check(instr->valuestring, n, &cp) < n)
            st = refuse(b, 400, "instructions", "invalid_text",
                        "'instructions' is not valid UTF-8 or holds a control character");
        else if (utf8_chars(instr->valuestring, n) > SRV_INSTRUCTIONS_MAX)
            st = refuse(b, 400, "instructions", NULL,
                        "'instructions' has more than %d characters (they are ignored: this "
                        "model takes no style prompt)",
                        SRV_INSTRUCTIONS_MAX);
    }
    if (!st) st = srv_gen_opts_parse(j, &r->go, b);
    if (!st && voice && !cJSON_IsNull(voice) && !cJSON_IsString(voice))
        st = refuse(b, 400, "voice", NULL, "'voice' must be a string or {\"id\": string}");
    if (!st) {
        r->input_chars = (int)utf8_chars(input->valuestring, strlen(input->valuestring));
        r->text = tool_strdup(input->valuestring);
        r->voice = cJSON_IsString(voice) ? tool_strdup(voice->valuestring) : NULL;
        if (!r->text || (cJSON_IsString(voice) && !r->voice))
            st = refuse(b, 500, NULL, NULL, "out of memory");
    }
    cJSON_Delete(j);
    if (st) srv_speech_free(r);
    return st;
}

/* ---- POST /tts ---------------------------------------------------------------------------- */

int srv_append(char **dst, size_t *len, const char *data, size_t n, size_t limit) {
    if (n > limit || *len > limit - n) return -1;
    char *nb = realloc(*dst, *len + n + 1);
    if (!nb) return -1;
    if (n) memcpy(nb + *len, data, n);
    *len += n;
    nb[*len] = 0;
    *dst = nb;
    return 0;
}

/* the form fields of the generation options, as srv_gen_opts_parse names its members */
static const char *const form_opts[SRV_FORM_OPTS] = {"temperature", "seed", "eos_threshold",
                                                     "frames_after_eos", "decode_steps"};
#define FORM_OPT_MAX 64 /* bytes of an option's value: a number */

void srv_form_field(srv_form *f, const char *key, const char *filename, const char *data,
                    size_t size) {
    if (!key) return;
    for (int i = 0; i < SRV_FORM_OPTS; i++)
        if (!strcmp(key, form_opts[i])) {
            if (srv_append(&f->opt[i], &f->opt_len[i], data, size, FORM_OPT_MAX)) f->bad = 1;
            if (!f->opt[i]) srv_append(&f->opt[i], &f->opt_len[i], "", 0, FORM_OPT_MAX);
            return;
        }
    if (!strcmp(key, "text")) {
        if (srv_append(&f->text, &f->text_len, data, size, f->text_limit)) f->text_too_long = 1;
        if (!f->text) srv_append(&f->text, &f->text_len, "", 0, f->text_limit);
    } else if (!strcmp(key, "voice_url")) {
        if (srv_append(&f->voice_url, &f->voice_url_len, data, size, 4096)) f->bad = 1;
        if (!f->voice_url) srv_append(&f->voice_url, &f->voice_url_len, "", 0, 4096);
    } else if (!strcmp(key, "voice_wav")) {
        /* a browser form with no file chosen sends an empty part with an empty filename */
        if (size > 0 || (filename && *filename)) f->wav_field = 1;
        char *w = (char *)f->wav;
        if (srv_append(&w, &f->wav_len, data, size, f->wav_limit)) f->too_big = 1;
        f->wav = (uint8_t *)w;
    }
}

int srv_form_check(const srv_form *f, int max_text_chars, srv_bad *b) {
    if (f->too_big)
        return refuse(b, 413, "voice_wav", "payload_too_large", "the upload exceeds %zu MB",
                      f->wav_limit >> 20);
    if (f->bad) return refuse(b, 400, NULL, NULL, "malformed form data");
    if (f->text_too_long)
        return refuse(b, 400, "text", "text_too_long",
                      "the text is too long; this server accepts at most %d characters",
                      max_text_chars);
    if (!f->text) return refuse(b, 400, "text", NULL, "the form field 'text' is required");
    int st = check_text(f->text, f->text_len, max_text_chars, "text", b);
    if (st) return st;
    if (f->voice_url && *f->voice_url && f->wav_field)
        return refuse(b, 400, "voice_url", NULL, "give either voice_url or voice_wav, not both");
    if (f->wav_field && f->wav_len == 0)
        return refuse(b, 400, "voice_wav", NULL, "the uploaded voice_wav is empty");
    return 0;
}

int srv_form_gen_opts(const srv_form *f, ptts_gen_options *go, srv_bad *b) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return refuse(b, 500, NULL, NULL, "out of memory");
    int st = 0;
    for (int i = 0; i < SRV_FORM_OPTS && !st; i++) {
        if (!f->opt[i]) continue;
        /* a decimal number and nothing else (strtod would also take "inf", "nan", hex) */
        const char *t = f->opt[i];
        size_t n = f->opt_len[i];
        int ok = n > 0 && n == strspn(t, "0123456789+-.eE") && strlen(t) == n;
        char *end = NULL;
        double v = ok ? strtod(t, &end) : 0;
        if (!ok || end != t + n)
            st =
                refuse(b, 400, form_opts[i], "invalid_type", "'%s' must be a number", form_opts[i]);
        else if (!cJSON_AddNumberToObject(o, form_opts[i], v))
            st = refuse(b, 500, NULL, NULL, "out of memory");
    }
    if (!st) st = srv_gen_opts_parse(o, go, b);
    cJSON_Delete(o);
    return st;
}

void srv_form_free(srv_form *f) {
    for (int i = 0; i < SRV_FORM_OPTS; i++)
        free(f->opt[i]);
    free(f->text);
    free(f->voice_url);
    free(f->wav);
    memset(f, 0, sizeof *f);
}

/* ---- per-request generation options ------------------------------------------------------- */

/* obj's member `name` as a number in [lo, hi] (an integer when integral): 0 with *v set, 1 when
 * absent (or JSON null), else the 400. */
static int opt_number(const cJSON *obj, const char *name, double lo, double hi, int integral,
                      double *v, srv_bad *b) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!it || cJSON_IsNull(it)) return 1;
    if (!cJSON_IsNumber(it))
        return refuse(b, 400, name, "invalid_type", "'%s' must be a number", name);
    const double x = it->valuedouble;
    if (!(x >= lo && x <= hi))
        return refuse(b, 400, name, "invalid_value", "'%s' must be in [%g, %g]", name, lo, hi);
    if (integral && x != (double)(int64_t)x)
        return refuse(b, 400, name, "invalid_value", "'%s' must be an integer", name);
    *v = x;
    return 0;
}

int srv_gen_opts_parse(const cJSON *obj, ptts_gen_options *go, srv_bad *b) {
    if (!cJSON_IsObject(obj)) return 0;
    double v = 0;
    int rc;
    if ((rc = opt_number(obj, "temperature", 0, 2, 0, &v, b)) > 1) return rc;
    if (rc == 0) go->temperature = (float)v, go->temperature_set = 1;
    if ((rc = opt_number(obj, "seed", 0, 9007199254740992.0, 1, &v, b)) > 1) return rc;
    if (rc == 0) go->seed = (uint64_t)v, go->seed_set = 1;
    if ((rc = opt_number(obj, "eos_threshold", -20, 20, 0, &v, b)) > 1) return rc;
    if (rc == 0) go->eos_threshold = (float)v, go->eos_threshold_set = 1;
    if ((rc = opt_number(obj, "frames_after_eos", 0, 100, 1, &v, b)) > 1) return rc;
    if (rc == 0) go->frames_after_eos = (int)v, go->frames_after_eos_set = 1;
    if ((rc = opt_number(obj, "decode_steps", 1, 64, 1, &v, b)) > 1) return rc;
    if (rc == 0) go->sampler_steps = (int)v;
    return 0;
}
