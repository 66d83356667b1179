/*
 * cmd_voices.c - `pocket-tts voices`: the preset voices of a language and whether each is in
 * the cache already (no network is used).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_voices(int argc, char **argv) {
    const char *language = "english";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: pocket-tts voices [--language L]\n\n"
                   "Lists the preset voices of a language (default english) and whether each is\n"
                   "downloaded. Any of them works as `generate --voice NAME`; `pocket-tts\n"
                   "download --voices all` fetches them all.\n");
            return 0;
        } else if (cli_is(a, "--language")) {
            if (!(language = cli_value(argc, argv, &i))) return 2;
        } else {
            fprintf(stderr, "pocket-tts voices: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    const ptts_language *lang = ptts_language_find(language);
    if (!lang) {
        fprintf(stderr, "pocket-tts: unknown language '%s'; languages:", language);
        for (int k = 0; k < ptts_language_count(); k++)
            fprintf(stderr, " %s", ptts_language_at(k)->name);
        fputc('\n', stderr);
        return 2;
    }
    printf("preset voices of %s (default %s):\n", lang->name, lang->default_voice);
    for (int k = 0; k < ptts_preset_voice_count(lang->name); k++) {
        const char *v = ptts_preset_voice_name(lang->name, k);
        char url[512], *path = NULL;
        if (ptts_preset_voice_url(lang->name, v, url, sizeof url)) continue;
        int cached = ptts_fetch_cached(&path, url);
        printf("  %-16s %s\n", v, cached ? path : "not downloaded");
        free(path);
    }
    return 0;
}
