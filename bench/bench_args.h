/*
 * bench_args.h - the arguments of the benches without options, checked: -h / --help
 * prints the usage, and a value that is not a number in its range, or an argument too many, is
 * an error (exit 2), so that a misspelt run never prints figures of defaults it did not ask for.
 */
#ifndef PTTS_BENCH_ARGS_H
#define PTTS_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program's name for messages: argv[0] without its folder. */
static inline const char *bench_prog(char **argv) {
    const char *slash = strrchr(argv[0], '/');
    return slash ? slash + 1 : argv[0];
}

/* -1: go on; else the exit code: 0 after the usage (--help), 2 for more than max arguments. */
static inline int bench_args(int argc, char **argv, int max, const char *usage) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
    if (argc - 1 > max) {
        fprintf(stderr, "%s: %d arguments, at most %d; %s", bench_prog(argv), argc - 1, max, usage);
        return 2;
    }
    return -1;
}

/* s as an int in [lo, hi]; -1 and a message naming `what` when it is not. */
static inline int bench_parse_int(char **argv, const char *what, const char *s, long lo, long hi,
                                  int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s is an integer from %ld to %ld, not '%s'\n", bench_prog(argv), what,
                lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* argv[i] as an int in [lo, hi] into *out, def when absent; -1 (a message) when it is not. */
static inline int bench_arg_int(int argc, char **argv, int i, const char *what, int def, long lo,
                                long hi, int *out) {
    *out = def;
    return i < argc ? bench_parse_int(argv, what, argv[i], lo, hi, out) : 0;
}

/* The same for a number. */
static inline int bench_arg_float(int argc, char **argv, int i, const char *what, double def,
                                  double lo, double hi, double *out) {
    *out = def;
    if (i >= argc) return 0;
    char *end;
    errno = 0;
    double v = strtod(argv[i], &end);
    if (errno || end == argv[i] || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "%s: %s is a number from %g to %g, not '%s'\n", bench_prog(argv), what, lo,
                hi, argv[i]);
        return -1;
    }
    *out = v;
    return 0;
}

#endif
