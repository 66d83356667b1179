/*
 * fuzz_safetensors.c - libFuzzer target for the safetensors reader: arbitrary bytes through
 * st_open_memory, then every accepted tensor through the converter for its dtype (float types
 * to float32, integer types to int64), so any tensor the validator lets through is also read
 * end to end. Conversions of one tensor are capped at 16 M elements to keep runs fast (the
 * input itself bounds numel for non-empty tensors, so the cap only matters for huge inputs).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    st_file *f = NULL;
    ptts_error e;
    if (st_open_memory(&f, data, size, "fuzz.safetensors", &e) != 0) {
        if (f != NULL || e.code == 0 || strncmp(e.msg, "fuzz.safetensors: ", 18) != 0) abort();
        return 0;
    }
    for (int i = 0; i < st_count(f); i++) {
        const st_tensor *t = st_at(f, i);
        if (t->numel > (1 << 24)) continue;
        if (t->data < data + 8 || t->nbytes > size || t->data + t->nbytes > data + size) abort();
        if (st_find(f, t->name) != t) abort();
        void *buf = malloc((size_t)t->numel * 8 + 8);
        if (!buf) continue;
        int rc;
        switch (t->dtype) {
        case ST_F32:
        case ST_BF16:
        case ST_F16: rc = st_to_f32(f, t, buf, &e); break;
        case ST_I64:
        case ST_I32:
        case ST_I16:
        case ST_I8:
        case ST_U8: rc = st_to_i64(f, t, buf, &e); break;
        default: rc = st_to_f32(f, t, buf, &e) == PTTS_E_UNSUPPORTED ? 0 : -1; break;
        }
        free(buf);
        if (rc != 0) abort();
    }
    st_close(f);
    return 0;
}
