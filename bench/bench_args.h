/*
 * bench_args.h - the arguments of the benches without options, checked (cli.h): -h / --help
 * prints the usage, and a value that is not a number in its range, or an argument too many, is
 * an error (exit 2), so that a misspelt run never prints figures of defaults it did not ask for.
 */
#ifndef PTTS_BENCH_ARGS_H
#define PTTS_BENCH_ARGS_H

#include <stdio.h>
#include <string.h>

#include "cli.h"

/* -1: go on; else the exit code: 0 after the usage (--help), 2 for more than max arguments.
 * Names the program in cli.h's messages (argv[0] without its folder). */
static inline int bench_args(int argc, char **argv, int max, const char *usage) {
    const char *slash = strrchr(argv[0], '/');
    cli_program = slash ? slash + 1 : argv[0];
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
    if (argc - 1 > max) {
        fprintf(stderr, "%s: %d arguments, at most %d; %s", cli_program, argc - 1, max, usage);
        return 2;
    }
    return -1;
}

/* argv[i] as an int in [lo, hi] into *out, def when absent; -1 (a message) when it is not. */
static inline int bench_arg_int(int argc, char **argv, int i, const char *what, int def, long lo,
                                long hi, int *out) {
    long x = def;
    if (i < argc && cli_parse_int(what, argv[i], lo, hi, &x)) return -1;
    *out = (int)x;
    return 0;
}

/* The same for a number. */
static inline int bench_arg_float(int argc, char **argv, int i, const char *what, double def,
                                  double lo, double hi, double *out) {
    *out = def;
    return i < argc ? cli_parse_float(what, argv[i], lo, hi, out) : 0;
}

#endif
