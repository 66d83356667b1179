/* main.c - `pocket-tts COMMAND [options]`: dispatch to the subcommands of commands.h. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ptts.h"

static const tool_command commands[] = {
    {"generate", cmd_generate, "speak a text into a WAV file or stdout"},
    {"export-voice", cmd_export_voice, "clone a voice from an audio file into a voice file"},
    {"tokenize", cmd_tokenize, "print the token ids (or pieces) of a text"},
    {"download", cmd_download, "fetch a language's model and preset voices into the cache"},
    {"voices", cmd_voices, "list the preset voices and whether they are downloaded"},
    {"serve", cmd_serve, "HTTP server: web page, the reference's /tts, OpenAI /v1/audio/speech"},
    {"wyoming", cmd_wyoming, "Wyoming TTS server for Home Assistant (serve without HTTP)"},
    {"devices", cmd_devices, "list the Vulkan devices (--device N picks one)"},
    {"fill", cmd_fill, "write a synthetic (pocket-fill-v1) checkpoint for benchmarks"},
    {"convert", cmd_convert, "write a checkpoint as loading packs it, for an instant start"},
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *f) {
    fprintf(f,
            "pocket-tts %s - Kyutai's Pocket TTS in C\n\nusage: pocket-tts COMMAND [options]\n\n",
            ptts_version());
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`pocket-tts COMMAND --help` describes a command's options.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("pocket-tts %s\n", ptts_version());
        return 0;
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "pocket-tts: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
