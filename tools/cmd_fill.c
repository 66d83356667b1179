/*
 * cmd_fill.c - `pocket-tts fill`: write a synthetic pocket-fill-v1 checkpoint (tests/fixtures/
 * README.md) of the tiny or full-size architecture, to benchmark or try the engine without the
 * real weights.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_fill(int argc, char **argv) {
    const char *arch = "full", *out = NULL, *dtype = "f32";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: pocket-tts fill [--arch full|tiny] [--dtype f32|bf16|f16] "
                   "OUT.safetensors\n\nWrites a checkpoint with the synthetic pocket-fill-v1 "
                   "weights (full = the english_2026-04 architecture, 109.5 M parameters).\n");
            return 0;
        } else if (cli_is(a, "--arch")) {
            if (!(arch = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--dtype")) {
            if (!(dtype = cli_value(argc, argv, &i))) return 2;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "pocket-tts fill: unknown option '%s'\n", a);
            return 2;
        } else if (!out) {
            out = a;
        } else {
            fprintf(stderr, "pocket-tts fill: one output file only\n");
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "usage: pocket-tts fill [--arch full|tiny] [--dtype f32|bf16|f16] "
                        "OUT.safetensors\n");
        return 2;
    }
    ptts_error e = {0};
    if (ptts_synthetic_weights_write(arch, dtype, out, &e)) {
        fprintf(stderr, "pocket-tts fill: %s\n", e.msg);
        return e.code == PTTS_E_INVALID ? 2 : 1;
    }
    return 0;
}
