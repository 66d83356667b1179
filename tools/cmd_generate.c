/*
 * cmd_generate.c - `pocket-tts generate`: text to a WAV file (or stdout), streamed frame by
 * frame, with the reference CLI's flags. The WAV is the reference's: 16-bit mono 24 kHz, 200 ms
 * of silence appended, the header patched with the true length for a file (a file is written
 * under a temporary name and renamed when complete: an error leaves no partial file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "util.h"
#include "wav.h"

#define MAX_TEXT_BYTES (64u << 20)

static void usage(FILE *f) {
    fprintf(f, "usage: pocket-tts generate [options]\n\n"
               "  --text TEXT            the text to speak ('-' reads stdin; default: a greeting\n"
               "                         in the model's language)\n"
               "  --voice VOICE          a preset name (alba, marius, ...; `pocket-tts voices`\n"
               "                         lists them; default: the language's), an hf:// or\n"
               "                         http(s) URL, a voice-state .safetensors, or an audio\n"
               "                         file to clone (WAV, FLAC, OGG, Opus, MP3; all of it)\n"
               "  --output-path PATH     WAV output (default ./tts_output.wav; '-' streams to "
               "stdout)\n"
               "  --quiet                no statistics or progress on stderr\n\n");
    fputs(cli_model_help, f);
    fputc('\n', f);
    fputs(cli_gen_help, f);
}

int cmd_generate(int argc, char **argv) {
    cli_model_args ma = {ptts_model_options_default()};
    ptts_gen_options go = ptts_gen_options_default();
    const char *text_arg = NULL, *voice_arg = NULL, *out_path = "./tts_output.wav";
    char *voice_path = NULL; /* the voice as a local file */
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_model_option(&ma, argc, argv, &i)) || (r = cli_gen_option(&go, argc, argv, &i))) {
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
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else {
            fprintf(stderr, "pocket-tts generate: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    ptts_set_log_callback(cli_log_to_stderr, &quiet);
    cli_show_progress(quiet);
    const ptts_language *lang = ptts_language_find(ma.mo.language ? ma.mo.language : "english");

    char *text = NULL;
    if (!text_arg) {
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
    ptts_voice *voice = NULL;
    ptts_stream *s = NULL;
    wav_writer *w = NULL;
    float *pcm = NULL;
    ptts_model_info info;
    ptts_model_get_info(m, &info);

    double tv = tool_now();
    int cloned = 0;
    if (ptts_voice_open(&voice, m, lang->name, voice_path, 0, &cloned, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    if (!quiet && cloned)
        fprintf(stderr, "pocket-tts: voice cloned from %s in %.0f ms\n", voice_path,
                1e3 * (tool_now() - tv));
    if (ptts_stream_create(&s, m, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    double t0 = tool_now();
    if (ptts_stream_start(s, voice, text, &go, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    int to_stdout = !strcmp(out_path, "-");
    if (to_stdout ? wav_open_stream(&w, stdout, PTTS_SAMPLE_RATE, &e)
                  : wav_open(&w, out_path, PTTS_SAMPLE_RATE, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    pcm = calloc((size_t)info.frame_samples, sizeof(float));
    if (!pcm) goto done;
    int progress = !quiet && isatty(2);
    double t_first = -1;
    int64_t samples = 0;
    for (;;) {
        int n = ptts_stream_next(s, pcm, &e);
        if (n < 0) {
            fprintf(stderr, "%spocket-tts: %s\n", progress ? "\n" : "", e.msg);
            goto done;
        }
        if (n == 0) break;
        if (wav_write(w, pcm, n, &e)) {
            fprintf(stderr, "%spocket-tts: %s\n", progress ? "\n" : "", e.msg);
            goto done;
        }
        if (to_stdout) fflush(stdout);
        if (t_first < 0) t_first = tool_now() - t0;
        samples += n;
        if (progress && (samples / n) % 5 == 0) {
            ptts_stream_status st;
            ptts_stream_get_status(s, &st);
            fprintf(stderr, "\rchunk %d/%d, %.1f s of audio", st.chunk + 1, st.n_chunks,
                    (double)samples / PTTS_SAMPLE_RATE);
        }
    }
    /* the reference appends 200 ms of silence */
    memset(pcm, 0, (size_t)info.frame_samples * sizeof(float));
    int64_t sil = PTTS_SAMPLE_RATE / 5;
    while (sil > 0) {
        int k = (int)TOOL_MIN(sil, (int64_t)info.frame_samples);
        if (wav_write(w, pcm, k, &e)) {
            fprintf(stderr, "pocket-tts: %s\n", e.msg);
            goto done;
        }
        sil -= k;
    }
    double wall = tool_now() - t0;
    wav_writer *wc = w;
    w = NULL;
    if (wav_close(wc, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    if (!quiet) {
        double secs = (double)samples / PTTS_SAMPLE_RATE;
        ptts_stream_status st;
        ptts_stream_get_status(s, &st);
        char first[64] = "no audio";
        if (t_first >= 0) snprintf(first, sizeof first, "first audio after %.0f ms", 1e3 * t_first);
        fprintf(stderr,
                "%s%.2f s of audio in %.2f s (%.2fx real time, %.1f ms per frame), %s; %d "
                "chunk%s, %d threads, %s kernels%s%s\n",
                progress ? "\r" : "", secs, wall, wall > 0 ? secs / wall : 0.0,
                samples ? 1e3 * wall / ((double)samples / info.frame_samples) : 0.0, first,
                st.n_chunks, st.n_chunks == 1 ? "" : "s", info.threads, info.isa,
                to_stdout ? "" : " -> ", to_stdout ? "" : out_path);
        if (st.eos_missed)
            fprintf(stderr, "pocket-tts: warning: %d chunk(s) ended at the length limit without "
                            "an end of speech\n",
                    st.eos_missed);
    }
    rc = 0;
done:
    wav_abort(w);
    free(pcm);
    ptts_stream_free(s);
    ptts_voice_free(voice);
    ptts_model_free(m);
    free(voice_path);
    free(text);
    return rc;
}
