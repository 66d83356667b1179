/*
 * cmd_tokenize.c - `pocket-tts tokenize --tokenizer FILE [--pieces] TEXT...`: the token ids (or
 * pieces) of a text on one line, separated by spaces, exactly as the reference's tokenizer gives
 * them (no BOS/EOS): a SentencePiece .model, or a tokenizer.json (picked by the ".json" suffix,
 * after any "@revision"). It exists to check the tokenizer against the reference from the shell
 * and to see how a text is split. The TEXT arguments are joined with single spaces; `-` reads
 * standard input instead. Self-contained (no weights are loaded: ptts_tokenize).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

#define STDIN_LIMIT ((size_t)256 << 20)

static void usage(FILE *f) {
    fprintf(f,
            "usage: pocket-tts tokenize [--tokenizer FILE | --config FILE | --language L] "
            "[--pieces] TEXT...\n\n"
            "Print the token ids of TEXT (the arguments joined by spaces) on one line.\n"
            "  --tokenizer FILE  a SentencePiece .model or a tokenizer.json (a path or a URL)\n"
            "  --config FILE     the tokenizer of a model config (flow_lm.lookup_table)\n"
            "  --language L      the tokenizer of a language (default english; downloaded once)\n"
            "  --pieces          print the pieces instead of the ids\n"
            "  -                 as TEXT: read the text from standard input\n"
            "  -h, --help        this help\n");
}

/* Appends n bytes to a growing heap string; -1 when out of memory. */
static int append(char **s, size_t *len, size_t *cap, const char *p, size_t n) {
    if (*cap - *len < n + 1) {
        size_t nc = *cap ? *cap : 256;
        while (nc - *len < n + 1) {
            if (nc > ((size_t)-1) / 2) return -1;
            nc *= 2;
        }
        char *ns = realloc(*s, nc);
        if (!ns) return -1;
        *s = ns;
        *cap = nc;
    }
    memcpy(*s + *len, p, n);
    *len += n;
    (*s)[*len] = 0;
    return 0;
}

static int read_stdin(char **s, size_t *len, size_t *cap) {
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        if (*len + got > STDIN_LIMIT) {
            fprintf(stderr, "pocket-tts tokenize: standard input is larger than %zu bytes\n",
                    STDIN_LIMIT);
            return -1;
        }
        if (append(s, len, cap, chunk, got)) {
            fprintf(stderr, "pocket-tts tokenize: out of memory\n");
            return -1;
        }
    }
    if (ferror(stdin)) {
        fprintf(stderr, "pocket-tts tokenize: cannot read standard input\n");
        return -1;
    }
    return 0;
}

int cmd_tokenize(int argc, char **argv) {
    const char *model = NULL, *config = NULL, *language = NULL;
    int pieces = 0, n_text = 0, status = 1;
    char *text = NULL;
    size_t len = 0, cap = 0;
    int *ids = NULL, n = 0;
    char **pcs = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(text);
            return 0;
        } else if (!strcmp(a, "--pieces")) {
            pieces = 1;
        } else if (!strcmp(a, "--tokenizer")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "pocket-tts tokenize: --tokenizer needs a file\n");
                free(text);
                return 2;
            }
            model = argv[++i];
        } else if (!strncmp(a, "--tokenizer=", 12)) {
            model = a + 12;
        } else if (cli_is(a, "--config")) {
            if (!(config = cli_value(argc, argv, &i))) {
                free(text);
                return 2;
            }
        } else if (cli_is(a, "--language")) {
            if (!(language = cli_value(argc, argv, &i))) {
                free(text);
                return 2;
            }
        } else if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) {
                if ((n_text++ && append(&text, &len, &cap, " ", 1)) ||
                    append(&text, &len, &cap, argv[i], strlen(argv[i])))
                    goto oom;
            }
        } else if (a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "pocket-tts tokenize: unknown option '%s'\n\n", a);
            usage(stderr);
            free(text);
            return 2;
        } else {
            if (n_text++ && append(&text, &len, &cap, " ", 1)) goto oom;
            if (!strcmp(a, "-")) {
                if (read_stdin(&text, &len, &cap)) goto done;
            } else if (append(&text, &len, &cap, a, strlen(a))) {
                goto oom;
            }
        }
    }
    if (n_text == 0) {
        fprintf(stderr, "pocket-tts tokenize: no TEXT given\n\n");
        usage(stderr);
        free(text);
        return 2;
    }

    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.tokenizer_path = model;
    mo.config_path = config; /* a path or a URL: fetched by the library */
    mo.language = language;
    if (ptts_tokenize(&mo, text ? text : "", len, &ids, pieces ? &pcs : NULL, &n, &e)) {
        fprintf(stderr, "pocket-tts tokenize: %s\n", e.msg);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (i) putchar(' ');
        if (pieces)
            fputs(pcs[i], stdout);
        else
            printf("%d", ids[i]);
    }
    putchar('\n');
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "pocket-tts tokenize: cannot write the output\n");
        goto done;
    }
    status = 0;
    goto done;
oom:
    fprintf(stderr, "pocket-tts tokenize: out of memory\n");
done:
    free(ids);
    free(pcs);
    free(text);
    return status;
}
