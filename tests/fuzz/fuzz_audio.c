/*
 * fuzz_audio.c - libFuzzer target for ptts_audio_read_memory: arbitrary bytes (an upload) must
 * give either PTTS_OK with a finite, non-empty signal at a plausible rate, or an error code with
 * a message - never a crash, a leak or undefined behaviour. A decoded signal is also resampled to
 * 24 kHz (bounded to 2 s so that each input stays fast) to exercise the filter paths for the
 * unusual rates a hostile header can carry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    float *x = NULL;
    int64_t n = 0;
    int rate = 0;
    ptts_error e;
    memset(&e, 0, sizeof e);
    int rc = ptts_audio_read_memory(data, size, 2.0, &x, &n, &rate, &e);
    if (rc != PTTS_OK) {
        if (x != NULL || n != 0 || e.code != rc || e.msg[0] == 0) abort();
        return 0;
    }
    if (!x || n <= 0 || n > (int64_t)rate * 2 || rate < 1000 || rate > 384000) abort();
    for (int64_t i = 0; i < n; i++)
        if (!(x[i] == x[i]) || x[i] - x[i] != 0.0f) abort(); /* NaN or infinite */
    float *y = NULL;
    int64_t m = 0;
    if (ptts_resample(x, n, rate, 24000, &y, &m, &e) != PTTS_OK) abort();
    if (m != (n * 24000 + rate - 1) / rate) abort();
    free(y);
    free(x);
    return 0;
}
