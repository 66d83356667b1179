/*
 * cli.h - option parsing shared by the subcommands: model selection (--language, --config,
 * --weights, --tokenizer, --precision, --quantize, --threads, --backend, --device,
 * --overlap), generation settings (the reference's flags) and small helpers for numbers and
 * messages.
 */
#ifndef PTTS_CLI_H
#define PTTS_CLI_H

#include <stdio.h>

#include "ptts.h"

typedef struct cli_model_args {
    ptts_model_options mo;
} cli_model_args;

/* If argv[*i] is a model option, consume it (and its value) and return 1; 0 if it is not one;
 * -1 on a bad value (message printed). */
int cli_model_option(cli_model_args *a, int argc, char **argv, int *i);
/* Same for generation options. */
int cli_gen_option(ptts_gen_options *o, int argc, char **argv, int *i);
/* Load the model the options describe (none: the english model, downloaded on first use);
 * prints the error. Shows download progress unless quiet. */
ptts_model *cli_load_model(const cli_model_args *a, int quiet);
/* Download progress on stderr (a bar on a terminal), or none when quiet. */
void cli_show_progress(int quiet);
/* Help text for the shared options. */
extern const char *cli_model_help;
extern const char *cli_gen_help;

/* The name the messages below start with ("pocket-tts"; a bench sets its own). */
extern const char *cli_program;
/* Value of option argv[*i] ("--x v" or "--x=v"); NULL and a message when missing. */
const char *cli_value(int argc, char **argv, int *i);
int cli_is(const char *arg, const char *name); /* "--name" or "--name=..." */
int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out);
int cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out);
/* Read a whole stream into a NUL-terminated buffer (limit bytes at most). */
char *cli_read_all(FILE *f, size_t limit, size_t *len);
void cli_log_to_stderr(void *user, int level, const char *msg);

#endif
