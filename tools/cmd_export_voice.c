/*
 * cmd_export_voice.c - `pocket-tts export-voice AUDIO OUT.safetensors`: clone a voice from an
 * audio file (any format libsndfile reads, any rate and channel count) and save the voice state
 * in the reference's format, loadable by `generate --voice` here and by the reference. Like the
 * reference's export-voice, the first 30 s are used unless --no-truncate (--max-seconds S picks
 * another limit; only that much of the file is ever read), the clip goes through end_on_pause
 * (in ptts_voice_from_samples) and the file carries 3.3's pad = 0 beside each offset.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "util.h"

#define DEFAULT_MAX_SECONDS 30.0

static void usage(FILE *f) {
    fprintf(f, "usage: pocket-tts export-voice AUDIO OUT.safetensors [options]\n\n"
               "Clone the voice of AUDIO (WAV, FLAC, OGG, Opus, MP3, AIFF, CAF; any rate and\n"
               "channel count) into a voice-state file for `generate --voice`.\n\n"
               "  --max-seconds S        use the first S seconds of the audio (default 30)\n"
               "  --no-truncate          use the whole file\n"
               "  --quiet                print nothing but errors\n\n");
    fputs(cli_model_help, f);
}

int cmd_export_voice(int argc, char **argv) {
    cli_model_args ma = {ptts_model_options_default()};
    const char *pos[2] = {NULL, NULL};
    int npos = 0, quiet = 0, no_truncate = 0, max_given = 0;
    double max_seconds = DEFAULT_MAX_SECONDS;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_model_option(&ma, argc, argv, &i))) {
            if (r < 0) return 2;
            continue;
        }
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (cli_is(a, "--max-seconds")) {
            const char *v = cli_value(argc, argv, &i);
            if (!v || cli_parse_float("--max-seconds", v, 1e-3, 1e7, &max_seconds)) return 2;
            max_given = 1;
        } else if (!strcmp(a, "--no-truncate")) {
            no_truncate = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "pocket-tts export-voice: unknown option '%s' (see --help)\n", a);
            return 2;
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            fprintf(stderr, "pocket-tts export-voice: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (npos < 2) {
        fprintf(stderr, "pocket-tts export-voice: give the audio file and the output file\n\n");
        usage(stderr);
        return 2;
    }
    if (no_truncate && max_given) {
        fprintf(stderr, "pocket-tts export-voice: --no-truncate and --max-seconds contradict each "
                        "other\n");
        return 2;
    }
    ptts_set_log_callback(cli_log_to_stderr, &quiet);
    ptts_model *m = cli_load_model(&ma, quiet);
    if (!m) return 1;
    int rc = 1;
    ptts_error e = {0};
    ptts_voice *v = NULL;
    double t0 = tool_now();
    if (ptts_voice_from_audio_file(&v, m, pos[0], no_truncate ? 0.0 : max_seconds, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    double t_clone = tool_now() - t0;
    if (ptts_voice_save(v, pos[1], &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    if (!quiet) {
        ptts_model_info info;
        ptts_model_get_info(m, &info);
        int frames = ptts_voice_positions(v) - (info.insert_bos_before_voice ? 1 : 0);
        fprintf(stderr,
                "pocket-tts: voice of %s (%d frames of %.0f ms) exported to %s in %.0f ms "
                "(%.0f ms to clone, %d threads)\n",
                pos[0], frames, 1e3 * info.frame_samples / info.sample_rate, pos[1],
                1e3 * (tool_now() - t0), 1e3 * t_clone, info.threads);
    }
    rc = 0;
done:
    ptts_voice_free(v);
    ptts_model_free(m);
    return rc;
}
