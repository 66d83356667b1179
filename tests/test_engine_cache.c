// ctest-label: parity
// ctest-timeout: 600
/*
 * test_engine_cache.c - the model keeps the engines of freed streams and batches for the next
 * ones (backend.h: ptts_engine_acquire / release): a stream on a reused engine, even one freed in
 * the middle of an utterance, gives the same samples bit for bit as on a fresh engine; the idle
 * engine is really taken and given back; a batch likewise. On the CPU engine and, where a
 * Vulkan device exists, on the GPU engine.
 */
#include "engine_vulkan.h"
#include "model.h"
#include "test.h"

/* idle engines of the model's current kind for `slots` streams */
static int idle_count(const ptts_model *m, int slots) {
    const ptts_engine_cache *c = &m->be.cache;
    int n = 0;
    for (int i = 0; i < 2; i++)
        n += c->idle[i].eng && c->idle[i].ops == m->be.engine && c->idle[i].slots == slots;
    return n;
}

/* n samples of a seeded utterance (at most max_frames frames) into *out (malloc'd). */
static int gen(ptts_model *m, ptts_voice *v, uint64_t seed, int max_frames, float **out) {
    ptts_error e = {0};
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.seed = seed;
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    o.max_tokens = 24;
    ptts_stream *s;
    REQUIRE(ptts_stream_create(&s, m, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    CHECKF(ptts_stream_start(s, v, "Engines are kept for the next stream.", &o, &e) == 0, "%s",
           e.msg);
    float *pcm = calloc((size_t)64 * 1920, sizeof(float));
    int n = 0, r, f = 0;
    while (pcm && f < max_frames && n + 1920 <= 64 * 1920 &&
           (r = ptts_stream_next(s, pcm + n, &e)) > 0) {
        n += r;
        f++;
    }
    ptts_stream_free(s);
    if (out)
        *out = pcm;
    else
        free(pcm);
    return n;
}

#define SINK (160 * 1920)
typedef struct {
    float pcm[2][SINK];
    int n[2];
} sink;

static int on_frame(void *user, int slot, const float *pcm, int n) {
    sink *k = user;
    if (!pcm || slot < 0 || slot > 1) return 0;
    if (k->n[slot] + n <= SINK) memcpy(k->pcm[slot] + k->n[slot], pcm, (size_t)n * 4);
    k->n[slot] += n;
    return 0;
}

/* Two seeded streams in a batch of 2, stepped at most `steps` times. */
static void batch_run(ptts_model *m, ptts_voice *v, int steps, sink *k) {
    ptts_error e = {0};
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.seed = 3;
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    o.max_tokens = 12;
    CHECK(ptts_batch_start(b, v, "First stream.", &o, &e) == 0);
    o.seed = 4;
    CHECK(ptts_batch_start(b, v, "Second one, longer.", &o, &e) == 1);
    for (int i = 0; i < steps && ptts_batch_step(b, on_frame, k, &e) > 0; i++) {
    }
    ptts_batch_free(b);
}

static void run(ptts_model *m, const char *what) {
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    float *a, *c;
    int na = gen(m, v, 5, 1000, &a); /* fresh engine, returned to the model afterwards */
    CHECKF(idle_count(m, 1) == 1, "%s: %d idle engines after one stream", what, idle_count(m, 1));
    gen(m, v, 9, 3, NULL); /* reuses it, freed mid-utterance */
    CHECKF(idle_count(m, 1) == 1, "%s: %d idle engines", what, idle_count(m, 1));
    int nc = gen(m, v, 5, 1000, &c); /* a dirty engine again */
    CHECKF(na == nc && na > 0, "%s: %d vs %d samples", what, na, nc);
    CHECKF(na == nc && !memcmp(a, c, (size_t)na * sizeof(float)),
           "%s: a reused engine changed the samples", what);
    printf("%s: %d samples identical on a reused engine\n", what, na);
    free(a);
    free(c);
    /* a batch: fresh, then freed after two steps, then again on the dirty engine */
    sink *k1 = calloc(1, sizeof *k1), *k2 = calloc(1, sizeof *k2), *k3 = calloc(1, sizeof *k3);
    REQUIRE(k1 && k2 && k3);
    batch_run(m, v, 1000, k1);
    batch_run(m, v, 2, k2);
    batch_run(m, v, 1000, k3);
    CHECKF(idle_count(m, 2) == 1, "%s: the batch's engine was not kept", what);
    for (int i = 0; i < 2; i++)
        CHECKF(k1->n[i] == k3->n[i] && k1->n[i] > 0 && k1->n[i] <= SINK &&
                   !memcmp(k1->pcm[i], k3->pcm[i], (size_t)k1->n[i] * 4),
               "%s: batch stream %d differs on a reused engine (%d vs %d samples)", what, i,
               k1->n[i], k3->n[i]);
    printf("%s: batch of 2 identical on a reused engine (%d, %d samples)\n", what, k1->n[0],
           k1->n[1]);
    free(k1);
    free(k2);
    free(k3);
    ptts_voice_free(v);
}

int main(void) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    mo.backend = PTTS_BACKEND_CPU;
    ptts_model *m;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    run(m, "cpu");
    ptts_model_free(m);
    if (ptts_vulkan_engine() && !ptts_vulkan_probe(NULL, NULL, 0, NULL, &e)) {
        mo.backend = PTTS_BACKEND_VULKAN;
        REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
        REQUIRE(m->be.engine == ptts_vulkan_engine());
        run(m, "vulkan");
        ptts_model_free(m);
    }
    return test_summary();
}
