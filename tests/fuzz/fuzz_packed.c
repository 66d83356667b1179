/*
 * fuzz_packed.c - libFuzzer target for the converted weights file's reader: arbitrary bytes
 * through ptts_packed_load_memory in each precision; a refusal must be an error naming the
 * input, an acceptance weights whose arrays lie inside the input. Seeds (seeds/packed): valid
 * files of a micro architecture (d 16, one layer, no encoder) in bf16 and int8 (float32 matrices
 * in both: the flow head, the first and last convolutions), written
 * by ptts_weights_fill + ptts_packed_write, under the fuzz stage's 64 KiB -max_len.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packed_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const void *p, const uint8_t *data, size_t size) {
    return !p || ((const uint8_t *)p >= data && (const uint8_t *)p < data + size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int mode = PTTS_WMODE_F32; mode <= PTTS_WMODE_INT8; mode++) {
        ptts_weights *w = NULL;
        ptts_error e;
        ptts_weights_options o = {.mode = (ptts_wmode)mode};
        if (ptts_packed_load_memory(&w, data, size, "fuzz.ptpack", &o, &e) != 0) {
            if (w != NULL || e.code == 0 || strncmp(e.msg, "fuzz.ptpack", 11) != 0) abort();
            continue;
        }
        if (!w || w->bytes > size || !inside(w->embed, data, size) ||
            !inside(w->backbone.layer[0].in_proj.wq, data, size))
            abort();
        ptts_weights_free(w);
    }
    return 0;
}
