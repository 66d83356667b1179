/*
 * vk_test.h - what test_vulkan.c and test_vulkan_hooks.c share: the GPU replays at the GPU
 * tolerance, a batch of streams on one engine against each stream alone on the CPU engine, a
 * seeded stream's PCM, an engine's counters, and the tiny model loaded for the Vulkan engine
 * (or the test skipped where the build or the machine has none).
 */
#ifndef PTTS_VK_TEST_H
#define PTTS_VK_TEST_H

#include <math.h>

#include "backend.h"
#include "engine_vulkan.h"
#include "generate.h"
#include "replay.h"

#define TOL 1e-3

/* A replay through the GPU engine at the GPU tolerance. */
static inline void replay_gpu(ptts_model *m, const char *cname, const char *voice_file,
                              float eos_threshold, int expect_frames) {
    errs er = {0};
    replay(m, "tiny", cname, voice_file, eos_threshold, expect_frames, TOL, &er);
    printf("vulkan tiny %s (threshold %g): max rel err latents %.3g, eos %.3g, pcm %.3g\n", cname,
           eos_threshold, er.max_lat, er.max_eos, er.max_pcm);
}

/* A batch of streams on one engine vs each stream alone on the CPU engine. */
#define BATCH_MAX 20
typedef struct {
    float *pcm[BATCH_MAX];
    int n[BATCH_MAX], cap;
    /* the ptts_batch_step calls so far (the caller counts), and at which one each stream had
     * its last frame and its end */
    int calls, last[BATCH_MAX], end[BATCH_MAX];
} collect;

static inline int on_frame(void *user, int slot, const float *pcm, int n) {
    collect *c = user;
    if (slot < 0 || slot >= BATCH_MAX) return 0;
    if (!pcm) {
        c->end[slot] = c->calls;
        return 0;
    }
    c->last[slot] = c->calls;
    if (c->n[slot] + n <= c->cap) memcpy(c->pcm[slot] + c->n[slot], pcm, (size_t)n * sizeof(float));
    c->n[slot] += n;
    return 0;
}

/* The model's idle engine for `slots` streams (the one the last stream or batch used) and its
 * counters; the engine goes back to the model. */
static inline ptts_vk_counts counts_of(ptts_model *m, int slots, void (*more)(void *eng, void *u),
                                       void *u) {
    ptts_error e = {0};
    void *eng;
    REQUIRE(ptts_engine_acquire(&m->be, m->be.engine, slots, &eng, &e) == 0);
    ptts_vk_counts c;
    ptts_vulkan_engine_counts(eng, &c);
    if (more) more(eng, u);
    ptts_engine_release(&m->be, m->be.engine, slots, eng, 0);
    return c;
}

/* A stream's PCM alone on the CPU engine, the batch API, with options o: n samples. */
static inline int cpu_alone(ptts_model *m, const ptts_voice *v, const char *text,
                            const ptts_gen_options *o, float *out, int cap) {
    const ptts_engine_ops *keep = m->be.engine;
    m->be.engine = &ptts_engine_cpu;
    ptts_error e = {0};
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 1, &e) == 0);
    CHECK(ptts_batch_start(b, v, text, o, &e) == 0);
    collect one = {.cap = cap};
    one.pcm[0] = out;
    while (ptts_batch_step(b, on_frame, &one, &e) > 0) {
    }
    ptts_batch_free(b);
    m->be.engine = keep;
    return one.n[0];
}

/* ns streams (<= BATCH_MAX): 3 stay within one codec pass of 8 frames each; 6 make the engine
 * split a call's frames over several passes (at most 32 slot-frames a pass, CODEC_FG); 20
 * arriving together are prompted in backbone passes of more rows than the engine's slots
 * (RB_ROWS: 80 rows, 4 of each of the 7 slots of one length a pass). reserve > 0: the caches
 * sized for chunks of that many ids with the first voice first (ptts_batch_reserve). tol: the
 * largest relative error of a frame. */
static inline void batch_vs_cpu_t(ptts_model *m, int ns, const char *const *texts, int reserve,
                                  double tol) {
    static const char *voices[3] = {"tiny/voice.safetensors", "tiny/voice_short.safetensors",
                                    "tiny/voice.safetensors"};
    ptts_error e = {0};
    /* a voice object for each of the first 8 streams, then shared (as a server shares one
     * voice between requests): more voices than the engine keeps on the device (VK_VOICES)
     * would split the prompts of streams begun together over several submissions */
    ptts_voice *v[BATCH_MAX];
    for (int i = 0; i < ns; i++)
        if (i < 8)
            REQUIRE(ptts_voice_load(&v[i], m, fixture_path(voices[i % 3]), &e) == 0);
        else
            v[i] = v[i % 6];
    const int cap = 400 * 1920;
    collect gpu = {.cap = cap}, cpu = {.cap = cap};
    for (int i = 0; i < ns; i++) {
        gpu.pcm[i] = calloc((size_t)cap, sizeof(float));
        cpu.pcm[i] = calloc((size_t)cap, sizeof(float));
    }
    /* the same seeded noise for both runs */
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.eos_threshold = 1e9f; /* lengths from the texts alone (no EOS flip at a rounding edge) */
    o.eos_threshold_set = 1;
    /* the streams begun together are prompted in one submission (vk_pend) */
    const int vk = m->be.engine == ptts_vulkan_engine();
    const ptts_vk_counts c0 = vk ? counts_of(m, ns, NULL, NULL) : (ptts_vk_counts){0};
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, ns, &e) == 0);
    ptts_batch_set_call_budget(b, 1e9); /* calls of the engine's frames: the same ones each run */
    if (reserve) CHECKF(ptts_batch_reserve(b, v[0], reserve, &e) == 0, "reserve: %s", e.msg);
    for (int i = 0; i < ns; i++) {
        o.seed = 1234 + (uint64_t)i;
        CHECK(ptts_batch_start(b, v[i], texts[i % 3], &o, &e) == i);
    }
    int left;
    while ((left = ptts_batch_step(b, on_frame, &gpu, &e)) > 0)
        gpu.calls++;
    CHECKF(left == 0, "batch: %s", e.msg);
    ptts_batch_free(b);
    /* a stream ends at the call that hands out its last frames, or at the next (the end of a
     * chunk is seen at the next call when the frames went out before it) */
    for (int i = 0; i < ns; i++)
        CHECKF(gpu.end[i] >= gpu.last[i] && gpu.end[i] <= gpu.last[i] + 1,
               "%d streams, stream %d: last frames at call %d, its end at call %d", ns, i,
               gpu.last[i], gpu.end[i]);
    if (vk) {
        const ptts_vk_counts c1 = counts_of(m, ns, NULL, NULL);
        /* decodes paired with the next call's step: all but those of the ramp's first two calls
         * (1 and 2 frames: their frames go out at once) and the last (calls also counts the
         * step that only ends the streams); a stream that ends before the others is left out
         * of the next call, not a reason to decode alone (when it was, these batches paired 2
         * fewer) */
        const unsigned long long pc = c1.paired - c0.paired;
        const int calls = gpu.calls + 1; /* with the last, which only ends the streams */
        printf("batch of %d: %d calls, %llu decodes paired with a step\n", ns, calls, pc);
        if (!(m->be.cache.vk_set && m->be.cache.vk.pipe < 0)) /* not apart (pipe_exact) */
            CHECKF(pc + 4 >= (unsigned long long)calls, "%d streams: %llu of %d calls paired", ns,
                   pc, calls);
        const unsigned long long np = c1.prompts - c0.prompts;
        const unsigned long long nsub = c1.prompt_submits - c0.prompt_submits;
        CHECKF(np >= (unsigned long long)ns && nsub + (unsigned long long)(ns - 1) <= np,
               "%d streams begun together: %llu chunks prompted in %llu submissions", ns, np, nsub);
    }
    for (int i = 0; i < ns; i++) {
        o.seed = 1234 + (uint64_t)i;
        cpu.n[i] = cpu_alone(m, v[i], texts[i % 3], &o, cpu.pcm[i], cap);
    }
    if (vk) { /* the calls the longest stream needs: a stream that reaches max_gen_len inside a
               * call computes the rest of it for the others (batch_plan), instead of the call
               * being cut to its frames (the old rule: a short call at each stream's end) */
        const int kmax = m->be.engine->max_steps_per_call(NULL);
        int longest = 0, want = 0;
        for (int i = 0; i < ns; i++)
            longest = cpu.n[i] / 1920 > longest ? cpu.n[i] / 1920 : longest;
        for (int f = 0; f < longest; want++) /* the ramp 1, 2, 4 .. kmax, then kmax a call */
            f += f + 1 < kmax ? f + 1 : kmax;
        CHECKF(gpu.calls == want, "%d streams, the longest %d frames: %d calls, %d expected", ns,
               longest, gpu.calls, want);
    }
    for (int i = 0; i < ns; i++) {
        CHECKF(gpu.n[i] == cpu.n[i] && gpu.n[i] > 0,
               "%d streams, stream %d: %d samples on the GPU, %d on the CPU", ns, i, gpu.n[i],
               cpu.n[i]);
        int n = gpu.n[i] < cpu.n[i] ? gpu.n[i] : cpu.n[i];
        if (n > cap) n = cap;
        double worst = 0;
        for (int f = 0; f + 1920 <= n; f += 1920)
            worst = fmax(worst, rel_l2(gpu.pcm[i] + f, cpu.pcm[i] + f, 1920));
        printf("batch of %d, stream %d: %d frames, max rel err vs CPU per frame %.3g\n", ns, i,
               n / 1920, worst);
        CHECKF(worst <= tol, "batch of %d, stream %d: pcm rel err %.3g", ns, i, worst);
        free(gpu.pcm[i]);
        free(cpu.pcm[i]);
        if (i < 8) ptts_voice_free(v[i]);
    }
}

static inline void batch_vs_cpu_n(ptts_model *m, int ns) {
    static const char *const texts[3] = {"Hello world.", "A second, somewhat longer sentence here.",
                                         "Third."};
    batch_vs_cpu_t(m, ns, texts, 0, TOL);
}

static inline void batch_vs_cpu(ptts_model *m) { batch_vs_cpu_n(m, 3); }

/* A seeded stream's PCM (n samples into *out, malloc'd). */
static inline int gen_pcm(ptts_model *m, const char *text, float **out) {
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.seed = 7;
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    o.max_tokens = 40;
    ptts_stream *s;
    REQUIRE(ptts_stream_create(&s, m, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    CHECKF(ptts_stream_start(s, v, text, &o, &e) == 0, "%s", e.msg);
    int cap = 64 * 1920, n = 0, r;
    float *pcm = calloc((size_t)cap, sizeof(float));
    while (pcm && n + 1920 <= cap && (r = ptts_stream_next(s, pcm + n, &e)) > 0)
        n += r;
    ptts_stream_free(s);
    ptts_voice_free(v);
    *out = pcm;
    return n;
}

/* float16 keys and values: the tiny model's 218-frame replay reads ~9e-4, the 1e-3 of float32
 * caches is not the contract there; bf16 weights alone cost ~3e-3 at full size
 * (bench/RESULTS.md) */
#define KV16_TOL 3e-3

/* Whether the build has a Vulkan engine and the machine a device: the test skipped (exit 77)
 * where not, else the device named; discrete: it is a discrete GPU (may be NULL). */
static inline void vk_test_probe(int *discrete) {
    ptts_error e = {0};
    char name[256];
    int disc = 0;
    if (ptts_vulkan_probe(NULL, name, sizeof name, &disc, &e) || !ptts_vulkan_engine()) {
        char why[600];
        snprintf(why, sizeof why, "no Vulkan backend or device: %s", e.msg);
        exit(test_skip(why));
    }
    printf("Vulkan device: %s (%s)\n", name, disc ? "discrete" : "not discrete");
    if (discrete) *discrete = disc;
}

/* The tiny model in `precision` (PTTS_PRECISION_*; tensor_cores: ptts_model_options'), with the
 * Vulkan engine as its engine. */
static inline ptts_model *vk_test_model(int precision, int tensor_cores) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    mo.precision = precision;
    mo.backend = PTTS_BACKEND_CPU;
    mo.tensor_cores = tensor_cores;
    ptts_model *m;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    m->be.engine = ptts_vulkan_engine();
    return m;
}

#endif
