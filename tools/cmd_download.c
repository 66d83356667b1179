/*
 * cmd_download.c - `pocket-tts download`: fetch a language's model (weights, tokenizer, default
 * voice) and optionally preset voices into the Hugging Face cache ahead of time, e.g. before
 * working offline (HF_HUB_OFFLINE=1). Prints where each file is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f) {
    fprintf(f, "usage: pocket-tts download [--language L] [--voices all|NAME|URL...] [--quiet]\n\n"
               "Downloads the model of a language (default english: the weights with voice\n"
               "cloning when HF_TOKEN gives access, else the open ones; the tokenizer; the\n"
               "default voice) and the preset voices asked for, into the Hugging Face cache\n"
               "($HF_HOME/hub, default ~/.cache/huggingface/hub). Files already there are\n"
               "not downloaded again.\n\n"
               "  --language L           one of:");
    for (int k = 0, col = 31; k < ptts_language_count(); k++) {
        const ptts_language *l = ptts_language_at(k);
        if (!l->listed) continue;
        if (col + 1 + (int)strlen(l->name) > 79) {
            fprintf(f, "\n                        ");
            col = 24;
        }
        col += fprintf(f, " %s", l->name);
    }
    fprintf(f, "\n"
               "  --voices V...          'all' (every preset voice) or voice names\n"
               "  --quiet                no progress\n");
}

static int get_voice(const char *language, const char *voice) {
    char *path = NULL;
    ptts_error e = {0};
    if (ptts_voice_resolve(&path, language, voice, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        return 1;
    }
    printf("voice %-16s %s\n", voice, path);
    free(path);
    return 0;
}

int cmd_download(int argc, char **argv) {
    const char *language = "english";
    int quiet = 0, all = 0, nv = 0;
    const char **voices = calloc((size_t)argc, sizeof *voices);
    if (!voices) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free(voices);
            return 0;
        } else if (cli_is(a, "--language")) {
            if (!(language = cli_value(argc, argv, &i))) goto usage_error;
        } else if (!strcmp(a, "--voices")) {
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                if (!strcmp(argv[++i], "all"))
                    all = 1;
                else
                    voices[nv++] = argv[i];
            }
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else {
            fprintf(stderr, "pocket-tts download: unknown option '%s' (see --help)\n", a);
            goto usage_error;
        }
    }
    const ptts_language *lang = ptts_language_find(language);
    if (!lang) {
        fprintf(stderr, "pocket-tts: unknown language '%s'; languages:", language);
        for (int k = 0; k < ptts_language_count(); k++)
            fprintf(stderr, " %s", ptts_language_at(k)->name);
        fputc('\n', stderr);
        goto usage_error;
    }
    ptts_set_log_callback(cli_log_to_stderr, &quiet);
    cli_show_progress(quiet);
    char *w = NULL, *t = NULL;
    int cloning = 0, rc = 0;
    ptts_error e = {0};
    if (ptts_language_fetch(lang->name, &w, &t, &cloning, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        free(voices);
        return 1;
    }
    printf("weights %-14s %s\n", cloning ? "(cloning)" : "(no cloning)", w);
    printf("tokenizer %-12s %s\n", "", t);
    free(w);
    free(t);
    rc |= get_voice(lang->name, lang->default_voice);
    for (int k = 0; all && k < ptts_preset_voice_count(lang->name); k++) {
        const char *v = ptts_preset_voice_name(lang->name, k);
        if (strcmp(v, lang->default_voice)) rc |= get_voice(lang->name, v);
    }
    for (int k = 0; k < nv; k++)
        rc |= get_voice(lang->name, voices[k]);
    free(voices);
    return rc;
usage_error:
    free(voices);
    return 2;
}
