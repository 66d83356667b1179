// ctest-label: parity
/*
 * test_codec_batch.c - the batched codec decoder (ptts_codec_dec_frames_low + _high, codec.h)
 * gives the same PCM bit for bit as decoding each stream alone (ptts_codec_dec_frame), on the
 * tiny model in f32 (f32 panels), bf16 and int8 (bf16 panels where the kernels have them)
 * weights, with no pool and with a 2-thread pool for the batched side. NS streams with their own
 * state: stream i starts (reset) at frame 3 i, stream 2 sits out every 5th frame, stream 3 is
 * reset again at frame 20, and the frames run past the transformer's window, so the batch mixes
 * ring positions, fresh and wrapped caches and sizes 1..NS.
 */
#include "codec.h"
#include "ops.h"
#include "pool.h"
#include "test.h"
#include "weights.h"

#define NS 4
#define FRAMES 40

static ptts_weights *load_weights(ptts_wmode mode) {
    ptts_weights *w = NULL;
    ptts_error e = {0};
    ptts_weights_options o = {.mode = mode, .heads = 4, .codec_heads = 4};
    int rc = ptts_weights_load(&w, fixture_path("tiny/model.safetensors"), &o, &e);
    if (rc) fprintf(stderr, "weights: %s\n", e.msg);
    REQUIRE(rc == 0 && w != NULL);
    return w;
}

/* Whether stream i decodes at frame t (the schedule above); *reset: it starts fresh there. */
static int active(int i, int t, int *reset) {
    *reset = t == 3 * i || (i == 3 && t == 20);
    if (t < 3 * i) return 0;
    return !(i == 2 && t % 5 == 0);
}

static void check_mode(ptts_wmode mode, const char *name, ptts_pool *pool) {
    ptts_weights *w = load_weights(mode);
    const int ld = w->arch.ld, fs = w->arch.frame_samples;
    ptts_error e = {0};
    ptts_codec_dec *alone[NS], *bat[NS];
    for (int i = 0; i < NS; i++) {
        REQUIRE(ptts_codec_dec_create(&alone[i], w, &e) == 0);
        REQUIRE(ptts_codec_dec_create(&bat[i], w, &e) == 0);
    }
    ptts_codec_batch *b = NULL;
    REQUIRE(ptts_codec_batch_create(&b, w, NS, &e) == 0);
    CHECK(ptts_codec_batch_max(b) == NS);
    CHECK(w->arch.frame_samples > 0 && w->codec.dec_tr.window < FRAMES * 16);

    float *lat = malloc((size_t)NS * ld * sizeof(float));
    float *pa = malloc((size_t)NS * fs * sizeof(float));
    float *pb = malloc((size_t)NS * fs * sizeof(float));
    REQUIRE(lat && pa && pb);
    const ptts_ctx c1 = {ptts_kernels_best(), NULL};
    const ptts_ctx cb = {ptts_kernels_best(), pool};
    int mismatches = 0, decoded = 0;
    for (int t = 0; t < FRAMES; t++) {
        ptts_codec_dec *d[NS];
        const float *lp[NS];
        int idx[NS], n = 0;
        for (int i = 0; i < NS; i++) {
            int reset;
            if (!active(i, t, &reset)) continue;
            if (reset) {
                ptts_codec_dec_reset(alone[i]);
                ptts_codec_dec_reset(bat[i]);
            }
            for (int j = 0; j < ld; j++)
                lat[(size_t)i * ld + j] =
                    1.5f * sinf(0.37f * (float)(j + 1) * (float)(t + 2 * i + 1));
            ptts_codec_dec_frame(alone[i], &c1, lat + (size_t)i * ld, pa + (size_t)i * fs, NULL);
            d[n] = bat[i];
            lp[n] = lat + (size_t)i * ld;
            idx[n++] = i;
        }
        if (n == 0) continue;
        ptts_codec_dec_frames_low(b, d, n, &cb, lp);
        for (int j = 0; j < n; j++)
            ptts_codec_dec_frame_high(d[j], &cb, pb + (size_t)idx[j] * fs);
        for (int j = 0; j < n; j++) {
            const size_t o = (size_t)idx[j] * fs;
            decoded++;
            if (memcmp(pa + o, pb + o, (size_t)fs * sizeof(float))) {
                if (!mismatches)
                    fprintf(stderr, "%s, %s: frame %d stream %d (batch of %d) differs\n", name,
                            pool ? "2 threads" : "1 thread", t, idx[j], n);
                mismatches++;
            }
        }
    }
    CHECKF(mismatches == 0, "%s: %d of %d batched frames differ from lone decoding", name,
           mismatches, decoded);
    CHECK(decoded > FRAMES * 2);
    printf("%s (%s panels), %s: %d frames batched, identical\n", name,
           w->codec.dec_tr.layer[0].linear1.wp16 ? "bf16"
           : w->codec.dec_tr.layer[0].linear1.wp ? "f32"
                                                 : "no",
           pool ? "2 threads" : "1 thread", decoded);
    free(lat);
    free(pa);
    free(pb);
    ptts_codec_batch_free(b);
    for (int i = 0; i < NS; i++) {
        ptts_codec_dec_free(alone[i]);
        ptts_codec_dec_free(bat[i]);
    }
    ptts_weights_free(w);
}

int main(void) {
    ptts_pool *pool = ptts_pool_create(2);
    REQUIRE(pool != NULL);
    static const ptts_wmode modes[3] = {PTTS_WMODE_F32, PTTS_WMODE_BF16, PTTS_WMODE_INT8};
    static const char *names[3] = {"f32", "bf16", "int8"};
    for (int m = 0; m < 3; m++) {
        check_mode(modes[m], names[m], NULL);
        check_mode(modes[m], names[m], pool);
    }
    ptts_error e = {0};
    ptts_codec_batch *b = NULL;
    ptts_weights *w = load_weights(PTTS_WMODE_F32);
    CHECK(ptts_codec_batch_create(&b, w, 0, &e) == PTTS_E_INVALID && b == NULL);
    ptts_weights_free(w);
    ptts_pool_free(pool);
    return test_summary();
}
