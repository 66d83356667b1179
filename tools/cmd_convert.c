/*
 * cmd_convert.c - `pocket-tts convert`: write a checkpoint in the form loading builds for a
 * precision (ptts_weights_convert), so that `--weights OUT` starts by mapping it, with nothing
 * converted or packed.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const char usage[] =
    "usage: pocket-tts convert [--precision f32|bf16|int8] [--language L | --config FILE |\n"
    "                          --weights FILE] OUT\n";

int cmd_convert(int argc, char **argv) {
    const char *out = NULL;
    cli_model_args ma = {.mo = ptts_model_options_default()};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s\nWrites the model's weights as loading them with --precision builds them "
                   "(int8 rows and\nscales, bf16 matrices and panels, float32 panels). `pocket-tts "
                   "generate --weights OUT`\nthen maps OUT at start, with nothing to convert or "
                   "pack, and gives the checkpoint's\nresults in that precision to the bit. The "
                   "model is chosen as for generate (default:\nthe english model); OUT records "
                   "the checkpoint's size and SHA-256 and is for this\nversion of pocket-tts "
                   "(another refuses it: convert again). Default precision: f32.\n",
                   usage);
            return 0;
        } else if ((r = cli_model_option(&ma, argc, argv, &i)) != 0) {
            if (r < 0) return 2;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "pocket-tts convert: unknown option '%s'\n", a);
            return 2;
        } else if (!out) {
            out = a;
        } else {
            fprintf(stderr, "pocket-tts convert: one output file\n");
            return 2;
        }
    }
    if (!out) {
        fputs(usage, stderr);
        return 2;
    }
    cli_show_progress(0);
    ptts_error e = {0};
    if (ptts_weights_convert(&ma.mo, out, &e)) {
        fprintf(stderr, "pocket-tts convert: %s\n", e.msg);
        return e.code == PTTS_E_INVALID ? 2 : 1;
    }
    return 0;
}
