/*
 * cmd_devices.c - `pocket-tts devices`: the Vulkan devices, numbered as --device takes them,
 * and which one each backend choice would use.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_devices(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: pocket-tts devices\n\n"
                   "Lists the Vulkan devices, numbered as `--device N` takes them (a part of\n"
                   "the name works too), and what `--backend auto` would run on.\n");
            return 0;
        }
        fprintf(stderr, "pocket-tts devices: unknown option '%s' (see --help)\n", argv[i]);
        return 2;
    }
    ptts_gpu_device d[16];
    ptts_error e = {0};
    int n = ptts_gpu_devices(d, 16, &e);
    if (n < 0) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        return 1;
    }
    printf("Vulkan devices:\n");
    int auto_gpu = -1;
    for (int i = 0; i < n; i++) {
        printf("  %d  %s (%s, %.1f GiB)%s\n", i, d[i].name, d[i].kind,
               (double)d[i].memory / (1024.0 * 1024 * 1024),
               d[i].picked ? "  <- --backend vulkan without --device" : "");
        if (d[i].picked && !strcmp(d[i].kind, "discrete GPU")) auto_gpu = i;
    }
    if (auto_gpu >= 0)
        printf("--backend auto runs on device %d.\n", auto_gpu);
    else
        printf("--backend auto runs on the CPU (no discrete GPU); --device N asks for a GPU.\n");
    return 0;
}
