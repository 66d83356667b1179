/*
 * cmd_generate.c - `pocket-tts generate`: text to a WAV file (or stdout), streamed frame by
 * frame, with the reference CLI's flags, and Piper's pipes. The WAV is the reference's: 16-bit
 * mono 24 kHz, 200 ms of silence appended to each utterance, the header patched with the true
 * length for a file (a file is written under a temporary name and renamed when complete: an
 * error leaves no partial file). --output-raw writes the same samples without a header.
 *
 * Text from stdin (--text -) is fed to the stream as it arrives (ptts_stream_feed): the first
 * sentence is spoken as soon as it is complete, while the writer is still writing; stdin is
 * polled between frames, and read blocking only when every complete sentence is spoken.
 * --text-whole reads all of stdin first. --json-input takes one JSON object per line,
 * {"text", "voice"?, "output_file"?}, with one model for all lines, each line's audio written
 * as soon as it is done.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include "util.h"
#include "wav.h"

#define MAX_TEXT_BYTES (64u << 20)

static void usage(FILE *f) {
    fprintf(f, "usage: pocket-tts generate [options]\n\n"
               "  --text TEXT            the text to speak (default: a greeting in the model's\n"
               "                         language); '-' reads stdin and speaks each sentence as\n"
               "                         soon as it is complete there\n"
               "  --text-whole           with --text -: read all of stdin first\n"
               "  --json-input           JSON lines on stdin: {\"text\": ..., \"voice\": ...,\n"
               "                         \"output_file\": ...} (voice and output_file optional),\n"
               "                         each spoken once its line is complete\n"
               "  --voice VOICE          a preset name (alba, marius, ...; `pocket-tts voices`\n"
               "                         lists them; default: the language's), an hf:// or\n"
               "                         http(s) URL, a voice-state .safetensors, or an audio\n"
               "                         file to clone (WAV, FLAC, OGG, Opus, MP3; all of it)\n"
               "  --output-path PATH     WAV output (default ./tts_output.wav; '-' streams to "
               "stdout)\n"
               "  --output-raw           raw s16le 24 kHz mono on stdout, no header (aplay -r "
               "24000\n"
               "                         -f S16_LE -t raw -)\n"
               "  --quiet                no statistics or progress on stderr\n\n");
    fputs(cli_model_help, f);
    fputc('\n', f);
    fputs(cli_gen_help, f);
}

/* Where audio goes: a WAV writer, or raw s16le on stdout. */
typedef struct sink {
    wav_writer *w;
    int raw;
} sink;

static int sink_open(sink *k, const char *path, int raw, ptts_error *e) {
    k->raw = raw;
    k->w = NULL;
    if (raw) return 0;
    return strcmp(path, "-") ? wav_open(&k->w, path, PTTS_SAMPLE_RATE, e)
                             : wav_open_stream(&k->w, stdout, PTTS_SAMPLE_RATE, e);
}

static int sink_write(sink *k, const float *pcm, int n, ptts_error *e) {
    if (!k->raw) return wav_write(k->w, pcm, n, e);
    int16_t s[PTTS_FRAME_SAMPLES];
    for (int i = 0; i < n; i++)
        s[i] = wav_sample(pcm[i]); /* hosts are little-endian */
    if (fwrite(s, sizeof *s, (size_t)n, stdout) != (size_t)n || fflush(stdout))
        return tool_fail(e, PTTS_E_IO, "cannot write the audio to stdout");
    return 0;
}

static int sink_close(sink *k, ptts_error *e) {
    wav_writer *w = k->w;
    k->w = NULL;
    if (k->raw) return fflush(stdout) ? tool_fail(e, PTTS_E_IO, "cannot write stdout") : 0;
    return wav_close(w, e);
}

/* One utterance's run: the stream, the text source, statistics. */
typedef struct run {
    ptts_stream *s;
    sink *out;
    int to_stdout, progress;
    double t0, t_first;
    int64_t samples;
} run;

/* The frame just generated, to the sink; progress on a terminal. */
static int put_frame(run *r, const float *pcm, int n, ptts_error *e) {
    int rc = sink_write(r->out, pcm, n, e);
    if (rc) return rc;
    if (r->to_stdout && !r->out->raw) fflush(stdout);
    if (r->t_first < 0) r->t_first = tool_now() - r->t0;
    r->samples += n;
    if (r->progress && (r->samples / PTTS_FRAME_SAMPLES) % 5 == 0) {
        ptts_stream_status st;
        ptts_stream_get_status(r->s, &st);
        fprintf(stderr, "\rchunk %d/%d, %.1f s of audio", st.chunk + 1, st.n_chunks,
                (double)r->samples / PTTS_SAMPLE_RATE);
    }
    return 0;
}

/* The reference appends 200 ms of silence. */
static int put_tail(run *r, ptts_error *e) {
    static const float zeros[PTTS_FRAME_SAMPLES];
    int64_t sil = PTTS_SAMPLE_RATE / 5;
    while (sil > 0) {
        int k = (int)TOOL_MIN(sil, (int64_t)PTTS_FRAME_SAMPLES);
        int rc = sink_write(r->out, zeros, k, e);
        if (rc) return rc;
        sil -= k;
    }
    return 0;
}

/* What stdin has: read and fed until it has no more for now (the first poll blocks when
 * `block`), so that text written at once is fed at once. */
typedef struct input {
    char buf[4096];
    size_t held; /* read and not yet taken (the feed was busy) */
    int eof;
} input;

static int take_input(ptts_stream *s, input *in, int block, ptts_error *e) {
    for (int first = 1; !in->eof; first = 0) {
        if (in->held == 0) {
            struct pollfd p = {.fd = 0, .events = POLLIN};
            if (poll(&p, 1, first && block ? -1 : 0) <= 0) return 0;
            ssize_t got = read(0, in->buf, sizeof in->buf);
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
            if (got <= 0) {
                in->eof = 1;
                return ptts_stream_end(s, e);
            }
            in->held = (size_t)got;
            if (memchr(in->buf, 0, in->held))
                return tool_fail(e, PTTS_E_TEXT, "the text on stdin contains NUL bytes");
        }
        int rc = ptts_stream_feed(s, in->buf, in->held, e);
        if (rc == PTTS_E_BUSY) /* generation catches up first; or a sentence too long */
            return block ? ptts_stream_flush(s, e) : 0;
        if (rc) return rc;
        in->held = 0;
    }
    return 0;
}

/* --text -: stdin fed to an incremental stream, polled between frames and read blocking
 * only while the stream waits for text. */
static int speak_stdin(run *r, const ptts_voice *v, const ptts_gen_options *go, float *pcm,
                       ptts_error *e) {
    int rc = ptts_stream_start_incremental(r->s, v, go, e);
    input in = {.held = 0};
    while (!rc) {
        int n = ptts_stream_next(r->s, pcm, e), waiting = 0;
        if (n < 0) return n;
        if (n > 0) {
            if ((rc = put_frame(r, pcm, n, e))) break;
        } else {
            ptts_stream_status st;
            ptts_stream_get_status(r->s, &st);
            if (!st.waiting) break; /* complete */
            waiting = 1;
        }
        rc = take_input(r->s, &in, waiting, e);
    }
    return rc;
}

/* A whole text. */
static int speak_text(run *r, const ptts_voice *v, const char *text, const ptts_gen_options *go,
                      float *pcm, ptts_error *e) {
    int rc = ptts_stream_start(r->s, v, text, go, e);
    for (int n; !rc && (n = ptts_stream_next(r->s, pcm, e)) != 0;)
        rc = n < 0 ? n : put_frame(r, pcm, n, e);
    return rc;
}

typedef struct voices {
    const ptts_model *m;
    const ptts_language *lang;
    const char *fallback; /* for a line without "voice": --voice's */
    char *name;           /* the argument of the open voice */
    ptts_voice *v;
    int quiet;
} voices;

/* The voice named `arg` (NULL: the language's default), kept open for the next line. */
static ptts_voice *voice_get(voices *vs, const char *arg, ptts_error *e) {
    if (!arg) arg = vs->fallback;
    if (vs->v && !strcmp(vs->name, arg)) return vs->v;
    ptts_voice_free(vs->v);
    free(vs->name);
    vs->v = NULL;
    vs->name = tool_strdup(arg);
    if (!vs->name) {
        tool_fail(e, PTTS_E_NOMEM, "out of memory");
        return NULL;
    }
    double tv = tool_now();
    int cloned = 0;
    if (ptts_voice_open(&vs->v, vs->m, vs->lang->name, arg, 0, &cloned, e)) return NULL;
    if (!vs->quiet && cloned)
        fprintf(stderr, "pocket-tts: voice cloned from %s in %.0f ms\n", arg,
                1e3 * (tool_now() - tv));
    return vs->v;
}

/* --json-input: each line an utterance, to its output_file or to the main output. Returns the
 * number of lines that failed (each reported), or < 0 when the main output fails. */
static int speak_json_lines(run *r, voices *vs, const ptts_gen_options *go, float *pcm) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int failed = 0, rc = 0;
    for (long no = 1; rc >= 0 && (len = getline(&line, &cap, stdin)) >= 0; no++) {
        ptts_error e = {0};
        cJSON *j = NULL;
        sink file = {0};
        run lr = *r;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (len == 0) continue;
        const cJSON *text = NULL, *voice = NULL, *out = NULL;
        if ((size_t)len > MAX_TEXT_BYTES) {
            tool_fail(&e, PTTS_E_TEXT, "the line is longer than %u MB", MAX_TEXT_BYTES >> 20);
        } else if (!(j = cJSON_ParseWithLength(line, (size_t)len)) || !cJSON_IsObject(j)) {
            tool_fail(&e, PTTS_E_FORMAT, "not a JSON object");
        } else {
            text = cJSON_GetObjectItemCaseSensitive(j, "text");
            voice = cJSON_GetObjectItemCaseSensitive(j, "voice");
            out = cJSON_GetObjectItemCaseSensitive(j, "output_file");
            if (!cJSON_IsString(text) || (voice && !cJSON_IsString(voice)) ||
                (out && !cJSON_IsString(out)))
                tool_fail(&e, PTTS_E_FORMAT,
                          "\"text\" must be a string, \"voice\" and \"output_file\" strings "
                          "when given");
        }
        const ptts_voice *v = e.code ? NULL : voice_get(vs, voice ? voice->valuestring : NULL, &e);
        if (v && out) {
            if (!sink_open(&file, out->valuestring, 0, &e)) lr.out = &file;
        }
        int lrc = e.code ? e.code : speak_text(&lr, v, text->valuestring, go, pcm, &e);
        if (!lrc) lrc = put_tail(&lr, &e);
        if (!lrc && lr.out == &file) lrc = sink_close(&file, &e);
        wav_abort(file.w);
        if (lrc) {
            fprintf(stderr, "pocket-tts: line %ld: %s\n", no, e.msg);
            failed++;
            if (lr.out != &file && e.code == PTTS_E_IO) rc = -1; /* the main output is gone */
        }
        r->samples += lr.samples;
        if (r->t_first < 0) r->t_first = lr.t_first;
        cJSON_Delete(j);
    }
    free(line);
    return rc < 0 ? rc : failed;
}

int cmd_generate(int argc, char **argv) {
    cli_model_args ma = {ptts_model_options_default()};
    ptts_gen_options go = ptts_gen_options_default();
    const char *text_arg = NULL, *voice_arg = NULL, *out_path = "./tts_output.wav";
    char *voice_path = NULL; /* the voice as a local file */
    int quiet = 0, whole = 0, raw = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_model_option(&ma, argc, argv, &i)) ||
            (r = cli_gen_option(&go, argc, argv, &i))) {
            if (r < 0) return 2;
            continue;
        }
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (cli_is(a, "--text")) {
            if (!(text_arg = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--voice")) {
            if (!(voice_arg = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--output-path") || cli_is(a, "-o")) {
            if (!(out_path = cli_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--text-whole")) {
            whole = 1;
        } else if (!strcmp(a, "--output-raw")) {
            raw = 1;
        } else if (!strcmp(a, "--json-input")) {
            json = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else {
            fprintf(stderr, "pocket-tts generate: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (json && text_arg) {
        fprintf(stderr, "pocket-tts generate: --json-input reads the text from stdin: no --text\n");
        return 2;
    }
    ptts_set_log_callback(cli_log_to_stderr, &quiet);
    cli_show_progress(quiet);
    const ptts_language *lang = ptts_language_find(ma.mo.language ? ma.mo.language : "english");
    const int from_stdin = text_arg && !strcmp(text_arg, "-") && !whole;

    char *text = NULL;
    if (json || from_stdin) {
        /* read as it comes */
    } else if (!text_arg) {
        text = tool_strdup(lang->default_text);
    } else if (!strcmp(text_arg, "-")) {
        size_t n;
        text = cli_read_all(stdin, MAX_TEXT_BYTES, &n);
        if (!text) {
            fprintf(stderr, "pocket-tts: cannot read the text from stdin (at most %u MB)\n",
                    MAX_TEXT_BYTES >> 20);
            return 1;
        }
        if (strlen(text) != n) {
            fprintf(stderr, "pocket-tts: the text on stdin contains NUL bytes\n");
            free(text);
            return 1;
        }
    } else {
        text = tool_strdup(text_arg);
    }
    /* the voice first: a wrong name fails before a model download */
    ptts_error ve = {0};
    if (ptts_voice_resolve(&voice_path, lang->name, voice_arg ? voice_arg : lang->default_voice,
                           &ve)) {
        fprintf(stderr, "pocket-tts: %s\n", ve.msg);
        free(text);
        return 1;
    }
    if (access(voice_path, R_OK) != 0) {
        fprintf(stderr, "pocket-tts: cannot read the voice file %s\n", voice_path);
        free(voice_path);
        free(text);
        return 1;
    }

    ptts_model *m = cli_load_model(&ma, quiet);
    if (!m) {
        free(voice_path);
        free(text);
        return 1;
    }
    int rc = 1;
    ptts_error e = {0};
    voices vs = {m, lang, voice_path, NULL, NULL, quiet};
    sink out = {0};
    float *pcm = NULL;
    ptts_model_info info;
    ptts_model_get_info(m, &info);
    run r = {.out = &out, .to_stdout = raw || !strcmp(out_path, "-"), .t_first = -1};
    r.progress = !quiet && isatty(2);

    const ptts_voice *voice = voice_get(&vs, NULL, &e);
    if (!voice || ptts_stream_create(&r.s, m, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    pcm = calloc((size_t)info.frame_samples, sizeof(float));
    if (!pcm || sink_open(&out, out_path, raw, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", pcm ? e.msg : "out of memory");
        goto done;
    }
    r.t0 = tool_now();
    int failed = 0;
    if (json) {
        failed = speak_json_lines(&r, &vs, &go, pcm);
    } else {
        int src = from_stdin ? speak_stdin(&r, voice, &go, pcm, &e)
                             : speak_text(&r, voice, text, &go, pcm, &e);
        if (!src) src = put_tail(&r, &e);
        if (src) {
            fprintf(stderr, "%spocket-tts: %s\n", r.progress ? "\n" : "", e.msg);
            goto done;
        }
    }
    double wall = tool_now() - r.t0;
    if (failed < 0 || sink_close(&out, &e)) {
        if (failed >= 0) fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    if (!quiet) {
        double secs = (double)r.samples / PTTS_SAMPLE_RATE;
        ptts_stream_status st;
        ptts_stream_get_status(r.s, &st);
        char first[64] = "no audio";
        if (r.t_first >= 0)
            snprintf(first, sizeof first, "first audio after %.0f ms", 1e3 * r.t_first);
        fprintf(stderr,
                "%s%.2f s of audio in %.2f s (%.2fx real time), %s; %d chunk%s, %d threads, %s "
                "kernels%s%s\n",
                r.progress ? "\r" : "", secs, wall, wall > 0 ? secs / wall : 0.0, first,
                st.n_chunks, st.n_chunks == 1 ? "" : "s", info.threads, info.isa,
                r.to_stdout ? "" : " -> ", r.to_stdout ? "" : out_path);
        if (st.eos_missed)
            fprintf(stderr,
                    "pocket-tts: warning: %d chunk(s) ended at the length limit without "
                    "an end of speech\n",
                    st.eos_missed);
    }
    rc = failed ? 1 : 0;
done:
    wav_abort(out.w);
    free(pcm);
    ptts_stream_free(r.s);
    ptts_voice_free(vs.v);
    free(vs.name);
    ptts_model_free(m);
    free(voice_path);
    free(text);
    return rc;
}
