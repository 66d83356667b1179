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
    "usage: pocket-tts convert [--precision f32|bf16|int8] IN.safetensors OUT\n";

int cmd_convert(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    int precision = PTTS_PRECISION_F32;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s\nWrites the weights of IN as loading them with --precision builds them "
                   "(int8 rows and\nscales, bf16 matrices and panels, float32 panels). `pocket-tts "
                   "generate --weights OUT`\nthen maps OUT at start, with nothing to convert or "
                   "pack, and gives IN's results in\nthat precision to the bit. OUT records IN's "
                   "size and SHA-256; it is for this version\nof pocket-tts (another refuses it: "
                   "convert again). Default precision: f32.\n",
                   usage);
            return 0;
        } else if (cli_is(a, "--precision")) {
            const char *v = cli_value(argc, argv, &i);
            if (!v) return 2;
            if (!strcmp(v, "f32"))
                precision = PTTS_PRECISION_F32;
            else if (!strcmp(v, "bf16"))
                precision = PTTS_PRECISION_BF16;
            else if (!strcmp(v, "int8"))
                precision = PTTS_PRECISION_INT8;
            else {
                fprintf(stderr, "pocket-tts convert: --precision is f32, bf16 or int8, got '%s'\n",
                        v);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "pocket-tts convert: unknown option '%s'\n", a);
            return 2;
        } else if (!in) {
            in = a;
        } else if (!out) {
            out = a;
        } else {
            fprintf(stderr, "pocket-tts convert: one input and one output file\n");
            return 2;
        }
    }
    if (!out) {
        fputs(usage, stderr);
        return 2;
    }
    ptts_error e = {0};
    if (ptts_weights_convert(in, out, precision, &e)) {
        fprintf(stderr, "pocket-tts convert: %s\n", e.msg);
        return e.code == PTTS_E_INVALID ? 2 : 1;
    }
    return 0;
}
