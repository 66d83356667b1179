// ctest-label: parity
// ctest-timeout: 900
/*
 * test_vulkan.c - the Vulkan engine against the reference (tiny model): generate and
 * generate_short replayed with the recorded noise through a stream on the GPU engine (8 steps
 * per call, so the EOS rule drops computed frames), latents / PCM per frame and EOS logits within
 * 1e-3 relative L2; the eos_case gives exactly 16 frames; a batch of 3 streams (different
 * voices, texts and lengths) on one engine equals the same streams run alone on the CPU.
 * The replays and the batch run again with each test hook of ptts_vk_tuning (backend.h): the
 * whole step as one persistent dispatch of one workgroup (stepk = 1), each register-tiled gemm
 * forced, the codec convs' windows copied into work buffers, decode and step submitted apart
 * (bit-exact against paired), each tensor-core tile forced (where the device has cooperative
 * matrices; every tile's samples bit-identical to the others', with the codec convs' windows
 * copied and with ELU on load), and with the hybrid engine (codec only on the GPU); after each
 * forced run the engine's counters (ptts_vulkan_engine_counts / _tile_uses) must show that the
 * forced path ran and no other tile did, and an unknown tile name must fail at create. The
 * sampler heads (lsd, flow_matching, drifting) alone against flow_head*.safetensors (1e-3);
 * flow_matching (1 and 4 steps) and drifting replay generate_flow_matching_steps1/4 (1e-3) and
 * generate_drifting (1e-2, free-running), on the multi-dispatch step and on stepk. A bf16
 * model's one-dispatch step (bf16 weight copies) against its multi-dispatch step. Skipped
 * (test_skip: exit 77, or a failure with PTTS_NO_SKIP) only when the build has no Vulkan backend
 * or no Vulkan device exists.
 */
#include <math.h>

#include "backend.h"
#include "engine_vulkan.h"
#include "generate.h"
#include "replay.h"

#define TOL 1e-3

/* A replay through the GPU engine at the GPU tolerance. */
static void replay_gpu(ptts_model *m, const char *cname, const char *voice_file,
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

static int on_frame(void *user, int slot, const float *pcm, int n) {
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

static ptts_vk_counts counts_of(ptts_model *m, int slots, void (*more)(void *eng, void *u),
                                void *u);

/* A stream's PCM alone on the CPU engine, the batch API, with options o: n samples. */
static int cpu_alone(ptts_model *m, const ptts_voice *v, const char *text,
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
 * sized for chunks of that many ids with the first voice first (ptts_batch_reserve). */
static void batch_vs_cpu_t(ptts_model *m, int ns, const char *const *texts, int reserve) {
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
        CHECKF(worst <= TOL, "batch of %d, stream %d: pcm rel err %.3g", ns, i, worst);
        free(gpu.pcm[i]);
        free(cpu.pcm[i]);
        if (i < 8) ptts_voice_free(v[i]);
    }
}

static void batch_vs_cpu_n(ptts_model *m, int ns) {
    static const char *const texts[3] = {"Hello world.", "A second, somewhat longer sentence here.",
                                         "Third."};
    batch_vs_cpu_t(m, ns, texts, 0);
}

static void batch_vs_cpu(ptts_model *m) { batch_vs_cpu_n(m, 3); }

/* The KV caches split into a buffer pair per layer and one for the codec rings (what many
 * streams of a large model need: 512 of the full model's are 7.6 GiB a buffer), forced here
 * by a small binding range. A tiny-model slot holds 128 KiB of backbone cache at the first
 * 256 positions (64 KiB a layer) and a 94 KiB codec ring: in 256 KiB bindings one stream
 * starts in one pair and moves to split caches when its prompt grows them past 256
 * positions; in 512 KiB, 3 streams start split. */
static void kv_split(ptts_model *m) {
    const ptts_vk_tuning split = {.kv_range = 256 << 10}, split3 = {.kv_range = 512 << 10};
    ptts_model_set_vk_tuning(m, &split);
    printf("KV caches split by layer:\n");
    replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218); /* every chunk within 256 */
    const int pairs = m->w->arch.layers + 1;
    ptts_vk_counts c = counts_of(m, 1, NULL, NULL);
    CHECKF(c.kv_pairs == 1, "one stream, 256 positions: %llu cache pairs, not 1", c.kv_pairs);
    /* one chunk of over 256 positions (its ids, max_gen_len and the voice's) */
    static const char *const grow[3] = {
        "This one sentence goes on and on without a single stop so that its chunk alone needs "
        "more positions than the caches begin with",
        "", ""};
    batch_vs_cpu_t(m, 1, grow, 0);
    c = counts_of(m, 1, NULL, NULL);
    CHECKF(c.kv_pairs == (unsigned long long)pairs, "one stream grown: %llu cache pairs, not %d",
           c.kv_pairs, pairs);
    ptts_model_set_vk_tuning(m, &split3);
    const ptts_vk_counts c0 = counts_of(m, 3, NULL, NULL);
    CHECKF(c0.kv_pairs == (unsigned long long)pairs, "3 streams: %llu cache pairs, not %d",
           c0.kv_pairs, pairs);
    batch_vs_cpu_n(m, 3);
    /* a layer over the range: a clear error at create, not a wrong result */
    const ptts_vk_tuning tiny = {.kv_range = 64 << 10};
    ptts_model_set_vk_tuning(m, &tiny);
    ptts_error e = {0};
    ptts_batch *b = NULL;
    int rc = ptts_batch_create(&b, m, 6, &e);
    if (!rc) ptts_batch_free(b);
    CHECKF(rc == PTTS_E_NOMEM && strstr(e.msg, "storage buffer range"),
           "6 streams in 64 KiB bindings: rc %d (%s)", rc, e.msg);
    ptts_model_set_vk_tuning(m, NULL);
}

/* The caches sized ahead (ptts_batch_reserve, a server's start): one growth to exactly the
 * positions asked (the voice's, the ids', max_gen_len's and one), none when a chunk within
 * them starts, not even one over the 256 positions of the start (kv_split's), the samples
 * still the CPU's; a smaller reserve keeps them; one past the device's range fails cleanly. */
static void kv_reserve(ptts_model *m) {
    static const char *const grow[3] = {
        "This one sentence goes on and on without a single stop so that its chunk alone needs "
        "more positions than the caches begin with",
        "Short.", "A second sentence. And a third one here."};
    const int S = 5; /* an engine of its own (the model keeps them by slot count) */
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    const int ids = 200;
    /* voice + ids + max_gen_len + the kmax - 1 frames a call may compute past it + 1 */
    const unsigned long long want =
        (unsigned long long)(ptts_voice_positions(v) + ids + (int)ceil((ids / 3.0 + 2) * 12.5) +
                             m->be.engine->max_steps_per_call(NULL));
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, S, &e) == 0);
    ptts_batch_free(b);
    const ptts_vk_counts c0 = counts_of(m, S, NULL, NULL);
    CHECKF(c0.kv_positions == 256 && c0.kv_grows == 0, "fresh: %llu positions, %llu growths",
           c0.kv_positions, c0.kv_grows);
    REQUIRE(ptts_batch_create(&b, m, S, &e) == 0);
    CHECKF(ptts_batch_reserve(b, v, ids, &e) == 0, "reserve: %s", e.msg);
    CHECKF(ptts_batch_reserve(b, v, 10, &e) == 0, "a smaller reserve: %s", e.msg);
    ptts_batch_free(b);
    ptts_vk_counts c = counts_of(m, S, NULL, NULL);
    CHECKF(c.kv_positions == want && c.kv_grows == 1,
           "reserved %d ids: %llu positions (want %llu), %llu growths", ids, c.kv_positions, want,
           c.kv_grows);
    printf("KV caches reserved for %d ids: %llu positions\n", ids, c.kv_positions);
    batch_vs_cpu_t(m, S, grow, 0);
    c = counts_of(m, S, NULL, NULL);
    CHECKF(c.kv_positions == want && c.kv_grows == 1,
           "chunks within the reserve: %llu positions, %llu growths", c.kv_positions, c.kv_grows);
    batch_vs_cpu_t(m, S, grow, ids); /* the reserve's path inside a batch's life */
    c = counts_of(m, S, NULL, NULL);
    CHECKF(c.kv_grows == 1, "a second reserve of the same size: %llu growths", c.kv_grows);
    /* for any clone of up to 30 s (a server that clones uploads): 377 voice positions */
    ptts_model_info info;
    ptts_model_get_info(m, &info);
    REQUIRE(ptts_batch_create(&b, m, S, &e) == 0);
    int rc = ptts_batch_reserve_clone(b, PTTS_VOICE_CLONE_SECONDS, ids, &e);
    ptts_batch_free(b);
    c = counts_of(m, S, NULL, NULL);
    const unsigned long long want_clone = want - (unsigned long long)ptts_voice_positions(v) + 377;
    if (info.has_voice_cloning)
        CHECKF(rc == 0 && c.kv_positions == want_clone && c.kv_grows == 2,
               "reserved for a 30 s clone: rc %d (%s), %llu positions (want %llu), %llu growths",
               rc, e.msg, c.kv_positions, want_clone, c.kv_grows);
    else
        CHECKF(rc == PTTS_E_UNSUPPORTED, "reserve for a clone without an encoder: rc %d", rc);
    const ptts_vk_tuning tiny = {.kv_range = 1 << 20}; /* 1 MiB bindings: 4096 ids do not fit */
    ptts_model_set_vk_tuning(m, &tiny);
    REQUIRE(ptts_batch_create(&b, m, S, &e) == 0);
    rc = ptts_batch_reserve(b, v, 4096, &e);
    CHECKF(rc == PTTS_E_NOMEM && strstr(e.msg, "storage buffer range"),
           "reserve past the range: rc %d (%s)", rc, e.msg);
    /* the caches it had are kept: the batch still speaks */
    ptts_gen_options o = ptts_gen_options_default();
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    CHECKF(ptts_batch_start(b, v, "Still speaks.", &o, &e) == 0, "start: %s", e.msg);
    collect one = {.cap = 0, .end = {-1}};
    int left;
    while ((left = ptts_batch_step(b, on_frame, &one, &e)) > 0) {
    }
    CHECKF(left == 0 && one.n[0] > 0 && one.end[0] >= 0,
           "after a failed reserve: %d (%s), %d samples", left, e.msg, one.n[0]);
    ptts_batch_free(b);
    ptts_model_set_vk_tuning(m, NULL);
    ptts_voice_free(v);
}

/* More slots than a codec pass holds (past 1024 streams; here 3 in passes of 2 slot-frames):
 * each decode runs one frame of two slots, then of the third, and the batch still matches the
 * CPU. */
static void codec_groups(ptts_model *m) {
    const ptts_vk_tuning fg2 = {.codec_fg = 2};
    ptts_model_set_vk_tuning(m, &fg2);
    printf("codec passes of 2 slot-frames, 3 streams:\n");
    batch_vs_cpu_n(m, 3);
    const ptts_vk_counts c = counts_of(m, 3, NULL, NULL);
    CHECKF(c.codec_groups > 0, "3 streams, passes of 2: %llu passes for a second group",
           c.codec_groups);
    ptts_model_set_vk_tuning(m, NULL);
    const ptts_vk_counts c0 = counts_of(m, 3, NULL, NULL);
    CHECKF(c0.codec_groups == 0, "3 streams: %llu passes for a second group", c0.codec_groups);
}

/* A seeded stream's PCM (n samples into *out, malloc'd). */
static int gen_pcm(ptts_model *m, const char *text, float **out) {
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

/* A batch whose calls pair decode and the next step: slot 1 is cancelled while its next frames
 * are computed and a new utterance starts there; the frames computed for the old one must not
 * reach the new one, and slot 0 goes on as if alone (both against the CPU). */
static void batch_cancel_restart(ptts_model *m) {
    static const char *text = "A second, somewhat longer sentence here.";
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    const int cap = 400 * 1920;
    collect gpu = {.cap = cap};
    gpu.pcm[0] = calloc((size_t)cap, sizeof(float));
    gpu.pcm[1] = calloc((size_t)cap, sizeof(float));
    float *ref = calloc((size_t)cap, sizeof(float));
    REQUIRE(gpu.pcm[0] && gpu.pcm[1] && ref);
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
    o.seed = 11;
    CHECK(ptts_batch_start(b, v, text, &o, &e) == 0);
    o.seed = 12;
    CHECK(ptts_batch_start(b, v, text, &o, &e) == 1);
    while (gpu.n[1] < 30 * 1920 && ptts_batch_step(b, on_frame, &gpu, &e) > 0) {
    }
    ptts_batch_cancel(b, 1);
    gpu.n[1] = 0;
    o.seed = 13;
    CHECK(ptts_batch_start(b, v, text, &o, &e) == 1);
    int left;
    while ((left = ptts_batch_step(b, on_frame, &gpu, &e)) > 0) {
    }
    CHECKF(left == 0, "batch: %s", e.msg);
    ptts_batch_free(b);
    static const uint64_t seeds[2] = {11, 13};
    for (int i = 0; i < 2; i++) {
        o.seed = seeds[i];
        int n = cpu_alone(m, v, text, &o, ref, cap);
        CHECKF(n == gpu.n[i] && n > 0, "cancel + restart, slot %d: %d samples, %d alone", i,
               gpu.n[i], n);
        double worst = 0;
        for (int f = 0; f + 1920 <= n && f + 1920 <= gpu.n[i]; f += 1920)
            worst = fmax(worst, rel_l2(gpu.pcm[i] + f, ref + f, 1920));
        printf("paired batch, cancel + restart, slot %d: %d frames, max rel err vs CPU %.3g\n", i,
               gpu.n[i] / 1920, worst);
        CHECKF(worst <= TOL, "cancel + restart, slot %d: rel err %.3g", i, worst);
    }
    free(gpu.pcm[0]);
    free(gpu.pcm[1]);
    free(ref);
    ptts_voice_free(v);
}

/* Streams that end by EOS at different frames: the generate_short case's noise and threshold
 * (EOS at step 11) with 0, 3 and 8 frames after it, so 11, 14 and 19 frames. Calls of 1, 2, 4
 * and 8 frames (the ramp), then the rest: the decode of the 4-frame call goes with the 8-frame
 * call's step; the first two streams end inside that call (steps 7-14) and are left out of the
 * next one, whose step goes with its decode for the third (utt_ends after the EOS rule; the
 * old rule decoded that call alone: 1 pair, not 2). Every stream's frames as the CPU gives
 * them alone. */
static void batch_eos_ends(ptts_model *m) {
    ptts_error e = {0};
    const int ld = m->w->arch.ld;
    int64_t n_noise;
    float *noise = load_f32(fixture_path("tiny/generate_short.safetensors"), "noise", &n_noise);
    REQUIRE(noise && n_noise >= 20 * ld);
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    static const int after[3] = {0, 3, 8};
    const int cap = 40 * 1920;
    collect gpu = {.cap = cap}, cpu = {.cap = cap};
    for (int i = 0; i < 3; i++) {
        gpu.pcm[i] = calloc((size_t)cap, sizeof(float));
        cpu.pcm[i] = calloc((size_t)cap, sizeof(float));
        REQUIRE(gpu.pcm[i] && cpu.pcm[i]);
    }
    ptts_gen_options o = ptts_gen_options_default();
    o.eos_threshold = eos_case_threshold();
    o.eos_threshold_set = 1;
    o.noise = noise;
    o.noise_rows = (int)(n_noise / ld);
    o.frames_after_eos_set = 1;
    const ptts_vk_counts c0 = counts_of(m, 3, NULL, NULL);
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    ptts_batch_set_call_budget(b, 1e9);
    for (int i = 0; i < 3; i++) {
        o.frames_after_eos = after[i];
        CHECK(ptts_batch_start(b, v, "ok go", &o, &e) == i);
    }
    int left;
    while ((left = ptts_batch_step(b, on_frame, &gpu, &e)) > 0)
        gpu.calls++;
    CHECKF(left == 0, "batch: %s", e.msg);
    ptts_batch_free(b);
    const unsigned long long pc = counts_of(m, 3, NULL, NULL).paired - c0.paired;
    printf("EOS ends at 11, 14, 19 frames: %d calls, %llu decodes paired with a step\n",
           gpu.calls + 1, pc);
    CHECKF(pc == 2, "streams ended by EOS: %llu decodes paired, 2 expected", pc);
    for (int i = 0; i < 3; i++) {
        o.frames_after_eos = after[i];
        cpu.n[i] = cpu_alone(m, v, "ok go", &o, cpu.pcm[i], cap);
    }
    for (int i = 0; i < 3; i++) {
        CHECKF(gpu.n[i] == (11 + after[i]) * 1920 && cpu.n[i] == gpu.n[i],
               "EOS + %d: %d samples on the GPU, %d on the CPU, %d expected", after[i], gpu.n[i],
               cpu.n[i], (11 + after[i]) * 1920);
        double worst = 0;
        for (int f = 0; f + 1920 <= gpu.n[i] && f + 1920 <= cpu.n[i]; f += 1920)
            worst = fmax(worst, rel_l2(gpu.pcm[i] + f, cpu.pcm[i] + f, 1920));
        CHECKF(worst <= TOL, "EOS + %d: pcm rel err %.3g", after[i], worst);
        free(gpu.pcm[i]);
        free(cpu.pcm[i]);
    }
    ptts_voice_free(v);
    free(noise);
}

/* The model's idle engine for `slots` streams (the one the last stream or batch used) and its
 * counters; the engine goes back to the model. */
static ptts_vk_counts counts_of(ptts_model *m, int slots, void (*more)(void *eng, void *u),
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

/* The stream's decode and next step in one submission (step_decode; on two queues where the
 * device has them) against the two submitted one after the other: the same kernels on the same
 * data, so the same samples bit for bit. */
static void pipe_exact(ptts_model *m) {
    float *a, *b;
    ptts_model_set_vk_tuning(m, NULL);
    int na = gen_pcm(m, "Hello there, one more sentence.", &a);
    const ptts_vk_counts ca = counts_of(m, 1, NULL, NULL);
    const ptts_vk_tuning apart = {.pipe = -1};
    ptts_model_set_vk_tuning(m, &apart);
    int nb = gen_pcm(m, "Hello there, one more sentence.", &b);
    const ptts_vk_counts cb = counts_of(m, 1, NULL, NULL);
    ptts_model_set_vk_tuning(m, NULL);
    int same = na == nb && na > 20 * 1920 && a && b && !memcmp(a, b, (size_t)na * sizeof(float));
    printf("decode + next step in one submission (%llu paired) vs apart (%llu): %d vs %d "
           "samples, %s\n",
           ca.paired, cb.paired, na, nb, same ? "identical" : "DIFFERENT");
    CHECKF(same, "step_decode: %d vs %d samples, not identical", na, nb);
    CHECKF(ca.paired > 0 && cb.paired == 0, "paired submissions: %llu paired, %llu apart",
           ca.paired, cb.paired);
    free(a);
    free(b);
}

/* Frames a ptts_batch_step handed to each slot, for the call budget's check; lead: how many
 * slot 0 had had (step[0], reset by the caller) when slot 1's first frame came. */
typedef struct {
    collect c;
    int step[BATCH_MAX], most, lead;
} per_step;

static int on_frame_step(void *user, int slot, const float *pcm, int n) {
    per_step *p = user;
    if (pcm && slot == 1 && p->c.n[1] == 0) p->lead = p->step[0];
    if (pcm && slot >= 0 && slot < BATCH_MAX && ++p->step[slot] > p->most) p->most = p->step[slot];
    return on_frame(&p->c, slot, pcm, n);
}

/* The call budget (generate.h): with none, every call of 3 streams in a 4-slot batch computes
 * one frame (a step hands a slot at most two: the late call's before it and its own); with a
 * large one, calls of kmax; the same samples either way (bit for bit on lavapipe; where the
 * device has tensor cores the codec's kernels follow its row counts, slots x k x 16, and the
 * samples agree within the GPU's tolerance). A full batch (3 slots) is
 * not held: nobody can join it. One text for the three, so that no stream runs alone (one
 * utterance is never held to the budget). */
static void call_budget(ptts_model *m) {
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    const int cap = 400 * 1920;
    per_step run[3];
    for (int r = 0; r < 3; r++) {
        memset(&run[r], 0, sizeof run[r]);
        run[r].c.cap = cap;
        ptts_batch *b;
        REQUIRE(ptts_batch_create(&b, m, r == 2 ? 3 : 4, &e) == 0);
        ptts_batch_set_call_budget(b, r == 1 ? 1e9 : 0.0);
        for (int i = 0; i < 3; i++) {
            run[r].c.pcm[i] = calloc((size_t)cap, sizeof(float));
            o.seed = 77 + (uint64_t)i;
            CHECK(ptts_batch_start(b, v, "Hello world, how are you today?", &o, &e) == i);
        }
        int left, most = 0;
        do {
            memset(run[r].step, 0, sizeof run[r].step);
            run[r].most = 0;
            left = ptts_batch_step(b, on_frame_step, &run[r], &e);
            most = run[r].most > most ? run[r].most : most;
        } while (left > 0);
        CHECKF(left == 0, "call budget: %s", e.msg);
        run[r].most = most;
        ptts_batch_free(b);
    }
    printf("call budget 0: at most %d frame(s) a slot a step; unbounded: %d; budget 0, the "
           "batch full: %d\n",
           run[0].most, run[1].most, run[2].most);
    CHECKF(run[0].most <= 2 && run[1].most > 2 && run[2].most > 2,
           "frames a slot a step: %d with budget 0, %d without, %d with budget 0 and no free slot",
           run[0].most, run[1].most, run[2].most);
    int same = 0;
    for (int i = 0; i < 3; i++) {
        const int n = run[0].c.n[i];
        for (int r = 1; r < 3; r++) {
            double worst = 0;
            for (int f = 0; n == run[r].c.n[i] && f + 1920 <= n && n <= cap; f += 1920)
                worst = fmax(worst, rel_l2(run[0].c.pcm[i] + f, run[r].c.pcm[i] + f, 1920));
            CHECKF(n > 20 * 1920 && n == run[r].c.n[i] && n <= cap && worst <= TOL,
                   "call budget, run %d, stream %d: %d vs %d samples, rel err %.3g", r, i, n,
                   run[r].c.n[i], worst);
            same += n == run[r].c.n[i] && n <= cap &&
                    !memcmp(run[0].c.pcm[i], run[r].c.pcm[i], (size_t)n * sizeof(float));
        }
        for (int r = 0; r < 3; r++)
            free(run[r].c.pcm[i]);
    }
    printf("call budget: %d of 6 streams bit for bit those of calls of one frame\n", same);
    ptts_voice_free(v);
}

/* An utterance that joins a running stream and fills the batch: the step that takes it in
 * consumes the running stream's call computed ahead and pairs its decode with the next call,
 * the joiner's first (batch_pair_k), held to the call budget whatever k the running stream has
 * (a budget of 0 here: one frame); the step after decodes the joiner's first frames alone
 * (batch_early), hands them out, and pairs the rest of the call's decode with the next call as
 * every other. The calls after pair too, the joiner in its ramp: the join costs one decode of
 * its first frames, where it cost the whole call's decode apart from a step and, before, the call
 * before it too and those of its ramp. Its first frames go out ahead of the running stream's
 * in that step (those of the last call, handed out once the next call is submitted), not after
 * them. With PTTS_JOIN_THROUGHPUT the joiner's first frames are decoded beside the next call (it
 * held to the budget as well) and go out one step later. */
static void join_first_audio(ptts_model *m, int policy) {
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    ptts_gen_options o = ptts_gen_options_default();
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    per_step run;
    memset(&run, 0, sizeof run);
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
    ptts_batch_set_call_budget(b, 0);
    CHECK(ptts_batch_set_joins(b, policy, &e) == 0);
    CHECK(ptts_batch_start(b, v, "A first sentence, long enough to run a while.", &o, &e) == 0);
    for (int i = 0; i < 6; i++) /* past its ramp: its calls are paired */
        CHECK(ptts_batch_step(b, on_frame_step, &run, &e) == 1);
    long d0, p0, x0, d, p, x;
    ptts_batch_calls(b, &d0, &p0, &x0);
    CHECK(ptts_batch_start(b, v, "The one that joins.", &o, &e) == 1);
    int steps = 0;
    run.lead = -1;
    for (; run.c.n[1] == 0 && steps < 10; steps++) {
        run.step[0] = 0;
        if (ptts_batch_step(b, on_frame_step, &run, &e) <= 0) break;
    }
    printf("joining a running stream: first audio from the %d-th step after, after %d frames of "
           "the running one in that step\n",
           steps, run.lead);
    const int thr = policy == PTTS_JOIN_THROUGHPUT; /* its first frames paired: a step later */
    CHECKF(run.c.n[1] == PTTS_FRAME_SAMPLES && steps <= 2 + thr && (thr || run.lead == 0),
           "the stream that joined: first audio after %d steps (and %d frames of the running "
           "one), %d samples of its first call",
           steps, run.lead, run.c.n[1]);

    for (int i = 0; i < 6; i++)
        CHECK(ptts_batch_step(b, on_frame_step, &run, &e) == 2);
    ptts_batch_calls(b, &d, &p, &x);
    printf("joining a running stream: %ld decodes, %ld paired with a step, %ld of its first "
           "frames apart\n",
           d - d0, p - p0, x - x0);
    CHECKF(d - d0 == steps + 6 && p - p0 == d - d0 && x - x0 == 1 - thr,
           "a join: %ld of %ld decodes apart from a step (0 expected), %ld of first frames (%d "
           "expected)",
           (d - d0) - (p - p0), d - d0, x - x0, 1 - thr);
    ptts_batch_free(b);
    ptts_voice_free(v);
}

/* Utterances that join a running one past its ramp, on the GPU: the running one goes through
 * chunks (max_tokens) and a pause, a joiner begins with a pause. With the frames handed out one
 * call late, an utterance between chunks sits out until its last frames are out (a chunk begun
 * earlier would reset its codec, a pause's zeros would go out ahead of them), without taking the
 * pairing from the others; every utterance's samples as the CPU gives it alone (pauses
 * included, zeros where they are), and every decode paired from the first join on but the last,
 * the joiners' first frames decoded apart (batch_early; 3 of 37 decoded alone with the whole
 * call's decode for them, 13 of 33 before that). */
static void joins_chunks_pauses(ptts_model *m) {
    static const char *texts[3] = {
        "This one runs for a while, sentence after sentence. <break time=\"200ms\"/> Then it "
        "goes on.",
        "The second joins, and it speaks for a while too. It has a second sentence.",
        "[pause:100ms]And a third one joins it, then says one more thing after that."};
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    ptts_gen_options o[3];
    const int cap = 400 * 1920;
    collect gpu = {.cap = cap};
    for (int i = 0; i < 3; i++) {
        o[i] = ptts_gen_options_default();
        o[i].seed = 70 + (uint64_t)i;
        o[i].seed_set = 1;
        o[i].eos_threshold = 1e9f;
        o[i].eos_threshold_set = 1;
        o[i].max_tokens = 10;
        REQUIRE((gpu.pcm[i] = calloc((size_t)cap, sizeof(float))));
    }
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    ptts_batch_set_call_budget(b, 1e9); /* calls of the engine's frames: the same each run */
    CHECK(ptts_batch_start(b, v, texts[0], &o[0], &e) == 0);
    long d0 = 0, p0 = 0, x0 = 0, d, p, x;
    int started = 1, left;
    while ((left = ptts_batch_step(b, on_frame, &gpu, &e)) > 0 || started < 3) {
        gpu.calls++;
        if (gpu.calls == 6 || gpu.calls == 8) { /* past the running one's ramp */
            if (started == 1) ptts_batch_calls(b, &d0, &p0, &x0);
            CHECK(ptts_batch_start(b, v, texts[started], &o[started], &e) == started);
            started++;
        }
        if (gpu.calls > 2000) break;
    }
    CHECKF(left == 0, "joins, chunks and pauses: %s", e.msg);
    ptts_batch_calls(b, &d, &p, &x);
    ptts_batch_free(b);
    printf("joins, chunks and pauses on the GPU: %ld decodes from the first join, %ld paired, "
           "%ld of joiners' first frames apart\n",
           d - d0, p - p0, x - x0);
    CHECKF(d - d0 > 20 && (d - d0) - (p - p0) <= 1 && x - x0 == 2,
           "joins, chunks and pauses: %ld of %ld decodes alone, %ld of first frames (2 expected)",
           (d - d0) - (p - p0), d - d0, x - x0);
    float *cpu = calloc((size_t)cap, sizeof(float));
    REQUIRE(cpu);
    for (int i = 0; i < 3; i++) {
        const int n = cpu_alone(m, v, texts[i], &o[i], cpu, cap);
        double worst = 0;
        for (int f = 0; f + 1920 <= n && f + 1920 <= cap; f += 1920)
            worst = fmax(worst, rel_l2(gpu.pcm[i] + f, cpu + f, 1920));
        printf("joins, chunks and pauses, utterance %d: %d samples on the GPU, %d on the CPU, "
               "max rel err per frame %.3g\n",
               i, gpu.n[i], n, worst);
        CHECKF(gpu.n[i] == n && n > 0 && worst <= TOL,
               "utterance %d: %d samples on the GPU, %d on the CPU, rel err %.3g", i, gpu.n[i], n,
               worst);
        free(gpu.pcm[i]);
    }
    free(cpu);
    ptts_voice_free(v);
}

/* The KV caches (backbone and codec rings) in float16 pairs (the default of bf16 / int8 weights,
 * forced here on the float32 tiny model): the replays within KV16_TOL (float16 keys and values: the
 * tiny model's 218-frame replay reads ~9e-4, the 1e-3 of float32 caches is not the contract here;
 * bf16 weights alone cost ~3e-3 at full size, bench/RESULTS.md), on the multi-dispatch step and
 * on stepk (one workgroup); and caches that grow at a chunk's start from one buffer pair into
 * a pair per layer (the float16 rows copied as they are): the same samples bit for bit as the
 * caches that never split. */
#define KV16_TOL 3e-3
static void kv_half(ptts_model *m) {
    const ptts_vk_tuning h = {.kv16 = 1, .stepk = -1}, hk = {.kv16 = 1, .stepk = 1};
    ptts_model_set_vk_tuning(m, &h);
    errs er = {0};
    replay(m, "tiny", "generate", "voice.safetensors", 1e9f, 218, KV16_TOL, &er);
    printf("float16 KV caches, generate: max rel err latents %.3g, eos %.3g, pcm %.3g\n",
           er.max_lat, er.max_eos, er.max_pcm);
    replay(m, "tiny", "generate_short", "voice_short.safetensors", eos_case_threshold(), 16,
           KV16_TOL, &er);
    ptts_vk_counts c = counts_of(m, 1, NULL, NULL);
    CHECKF(c.kv_half == 1 && c.ring_half == 1 && c.stepk_frames == 0,
           "kv16 hook: kv_half %llu, ring_half %llu, stepk frames %llu", c.kv_half, c.ring_half,
           c.stepk_frames);
    /* a grown chunk: one pair (111 KiB: 2 layers of 32 KiB, the 47 KiB codec ring) in 120 KiB
     * bindings at 256 positions, split past them */
    static const char grow[] =
        "This one sentence goes on and on without a single stop so that its chunk alone needs "
        "more positions than the caches begin with";
    float *one, *split;
    const int n1 = gen_pcm(m, grow, &one);
    const ptts_vk_tuning hs = {.kv16 = 1, .stepk = -1, .kv_range = 120 << 10};
    ptts_model_set_vk_tuning(m, &hs);
    CHECKF(counts_of(m, 1, NULL, NULL).kv_pairs == 1, "kv16, 120 KiB: %llu pairs at the start",
           counts_of(m, 1, NULL, NULL).kv_pairs);
    const int n2 = gen_pcm(m, grow, &split);
    c = counts_of(m, 1, NULL, NULL);
    CHECKF(c.kv_half == 1 && c.kv_pairs == (unsigned long long)m->w->arch.layers + 1,
           "kv16, grown: kv_half %llu, %llu cache pairs", c.kv_half, c.kv_pairs);
    CHECKF(n1 == n2 && n1 > 0 && one && split && !memcmp(one, split, (size_t)n1 * sizeof(float)),
           "kv16: grown into split caches, %d samples vs %d unsplit, not the same", n2, n1);
    printf("float16 KV caches grown into split pairs: %d samples, the same as unsplit\n", n2);
    free(one);
    free(split);
    ptts_model_set_vk_tuning(m, &hk);
    replay(m, "tiny", "generate", "voice.safetensors", 1e9f, 218, KV16_TOL, &er);
    printf("float16 KV caches, stepk: max rel err latents %.3g, eos %.3g, pcm %.3g\n", er.max_lat,
           er.max_eos, er.max_pcm);
    c = counts_of(m, 1, NULL, NULL);
    CHECKF(c.kv_half == 1 && c.stepk_frames > 0, "kv16 + stepk: kv_half %llu, stepk frames %llu",
           c.kv_half, c.stepk_frames);
    ptts_model_set_vk_tuning(m, NULL);
    c = counts_of(m, 1, NULL, NULL); /* float32 weights: float32 caches */
    CHECKF(c.kv_half == 0 && c.ring_half == 0, "float32: kv_half %llu, ring_half %llu", c.kv_half,
           c.ring_half);
}

/* A bf16 model: stepk streams the packed bf16 copies of the backbone and flow matrices, the
 * multi-dispatch path their exact float32 widening; the two must agree to rounding order. */
static void bf16_stepk(void) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    mo.precision = PTTS_PRECISION_BF16;
    mo.backend = PTTS_BACKEND_CPU;
    mo.tensor_cores = -1; /* the float32 codec gemms in both (the step is compared) */
    ptts_model *m;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    m->be.engine = ptts_vulkan_engine();
    float *a, *b;
    const ptts_vk_tuning off = {.stepk = -1}, one = {.stepk = 1};
    ptts_model_set_vk_tuning(m, &off);
    int na = gen_pcm(m, "Hello there, one more sentence.", &a);
    CHECK(counts_of(m, 1, NULL, NULL).stepk_frames == 0);
    CHECK(counts_of(m, 1, NULL, NULL).kv_half == 1); /* bf16 weights: float16 caches */
    CHECK(counts_of(m, 1, NULL, NULL).ring_half == 1);
    ptts_model_set_vk_tuning(m, &one);
    int nb = gen_pcm(m, "Hello there, one more sentence.", &b);
    CHECK(counts_of(m, 1, NULL, NULL).stepk_frames > 0);
    CHECKF(na == nb && na > 0, "bf16: %d vs %d samples", na, nb);
    double d2 = 0, r2 = 0;
    for (int i = 0; i < na && i < nb; i++) {
        d2 += (double)(a[i] - b[i]) * (a[i] - b[i]);
        r2 += (double)a[i] * a[i];
    }
    double rel = sqrt(d2 / (r2 > 0 ? r2 : 1));
    printf(
        "bf16 model, stepk (bf16 weights) vs multi-dispatch (f32 copies): %d samples, rel %.3g\n",
        na, rel);
    CHECKF(rel <= 1e-4, "bf16 stepk vs multi-dispatch: rel %.3g", rel);
    free(a);
    free(b);
    ptts_model_free(m);
}

/* The dispatches of every tile of one kind, for the forced-tile checks. */
typedef struct {
    int tc, n;
    const char *const *names;
    long long uses[8];
} tile_uses;
static void read_tiles(void *eng, void *u) {
    tile_uses *t = u;
    for (int i = 0; i < t->n; i++)
        t->uses[i] = ptts_vulkan_engine_tile_uses(eng, t->tc, t->names[i]);
}

/* Tile `forced` of names[n] ran on the model's one-stream engine and no other tile did. */
static void check_forced(ptts_model *m, int tc, const char *const *names, int n, int forced) {
    tile_uses t = {tc, n, names, {0}};
    counts_of(m, 1, read_tiles, &t);
    for (int i = 0; i < n; i++)
        CHECKF(i == forced ? t.uses[i] > 0 : t.uses[i] == 0,
               "%s tile %s forced: tile %s ran %lld "
               "times",
               tc ? "tensor-core" : "gemm", names[forced], names[i], t.uses[i]);
}

/* Every tensor-core tile sums the same float16 products in the same K order (the float16
 * weight copies hold what the others round W to): a seeded stream's samples with each of the n
 * tiles forced, bit for bit those of the first; conv_copy: the hook's value (1: windows copied,
 * else ELU on load, the default). */
static void tc_same(ptts_model *m, const char *const *names, int n, int conv_copy) {
    float *ref = NULL;
    int nref = 0, differ = 0;
    for (int i = 0; i < n; i++) {
        const ptts_vk_tuning force = {.tc_force = names[i], .conv_copy = conv_copy};
        ptts_model_set_vk_tuning(m, &force);
        float *pcm;
        const int k = gen_pcm(m, "Hello there, one more sentence.", &pcm);
        if (i == 0) {
            ref = pcm;
            nref = k;
            continue;
        }
        const int same = k == nref && k > 20 * 1920 && pcm && ref &&
                         !memcmp(pcm, ref, (size_t)k * sizeof(float));
        CHECKF(same, "tensor-core tile %s: %d samples, not those of tile %s (%d)", names[i], k,
               names[0], nref);
        differ += !same;
        free(pcm);
    }
    printf("tensor-core tiles, %s: %d samples with each of %d forced, %d differ from tile %s's\n",
           conv_copy > 0 ? "windows copied" : "ELU on load", nref, n, differ, names[0]);
    free(ref);
    ptts_model_set_vk_tuning(m, NULL);
}

/* The grouped attention (prompts; the codec's needs heads of 16-channel multiples, the tiny
 * codec's are 8) on tensor cores with float16 caches (attn_tc.comp: float16 queries and
 * probabilities in the products) against attn_group.comp on the same caches: both replays
 * within KV16_TOL, and the hook's choice taken. */
static void attn_tc(ptts_model *m) {
    errs er = {0};
    const ptts_vk_tuning off = {.kv16 = 1, .attn_tc = -1}, on = {.kv16 = 1};
    ptts_model_set_vk_tuning(m, &off);
    replay(m, "tiny", "generate", "voice.safetensors", 1e9f, 218, KV16_TOL, &er);
    printf("float16 caches, tensor-core gemms, attention scalar: max rel err latents %.3g, eos "
           "%.3g, pcm %.3g\n",
           er.max_lat, er.max_eos, er.max_pcm);
    CHECK(counts_of(m, 1, NULL, NULL).attn_tc == 0);
    ptts_model_set_vk_tuning(m, &on);
    replay(m, "tiny", "generate", "voice.safetensors", 1e9f, 218, KV16_TOL, &er);
    replay(m, "tiny", "generate_short", "voice_short.safetensors", eos_case_threshold(), 16,
           KV16_TOL, &er);
    printf("float16 caches, tensor-core gemms and attention: max rel err latents %.3g, eos %.3g, "
           "pcm %.3g\n",
           er.max_lat, er.max_eos, er.max_pcm);
    const ptts_vk_counts c = counts_of(m, 1, NULL, NULL);
    CHECKF(c.attn_tc > 0, "attention on tensor cores: %llu dispatches recorded", c.attn_tc);
    ptts_model_set_vk_tuning(m, NULL);
}

/* The sampler heads of MODEL.md 5 on the GPU. Their variant checkpoints hold exactly the LSD
 * checkpoint's tensors of the same names (fixtures README), so the tiny LSD model with its
 * arch's sampler type changed is the flow_matching (time_embed.0 used) or the drifting model
 * (no time input); the CPU engine is not run here. */
static void sampler_heads(ptts_model *m) {
    const ptts_arch keep = m->w->arch;
    static const ptts_vk_tuning hooks[2] = {{.stepk = -1}, {.stepk = 1}};
    for (int h = 0; h < 2; h++) {
        ptts_model_set_vk_tuning(m, &hooks[h]);
        m->w->arch.flow_type = PTTS_FLOW_MATCHING;
        m->w->arch.n_time_embed = 1;
        printf("flow_matching head, %s:\n", h ? "stepk" : "multi-dispatch step");
        replay_gpu(m, "generate_flow_matching_steps1", "voice_short.safetensors", 1e9f, 50);
        replay_gpu(m, "generate_flow_matching_steps4", "voice_short.safetensors", 1e9f, 50);
        const unsigned long long fm = counts_of(m, 1, NULL, NULL).stepk_frames;
        ptts_model_set_vk_tuning(m, &hooks[h]); /* engines made for the other head go */
        m->w->arch.flow_type = PTTS_FLOW_DRIFTING;
        m->w->arch.n_time_embed = 0;
        printf("drifting head, %s:\n", h ? "stepk" : "multi-dispatch step");
        errs er = {0};
        replay(m, "tiny", "generate_drifting", "voice_short.safetensors", 1e9f, 50, 1e-2, &er);
        printf("vulkan tiny generate_drifting: max rel err latents %.3g, eos %.3g, pcm %.3g\n",
               er.max_lat, er.max_eos, er.max_pcm);
        const unsigned long long dr = counts_of(m, 1, NULL, NULL).stepk_frames;
        CHECKF(h ? fm > 0 && dr > 0 : fm == 0 && dr == 0, "stepk frames: %llu, %llu", fm, dr);
        m->w->arch = keep;
    }
    ptts_model_set_vk_tuning(m, NULL);
}

/* The flow head alone on the GPU against the head fixtures (cond [5][d], noise [5][ld] ->
 * out_stepsN [5][ld], per row at the GPU tolerance) for each sampler type, on a copy of the
 * weights with the type set (as in sampler_heads); lsd also at 2 steps, flow_matching at 16
 * (more evaluations than stepk takes: the multi-dispatch recorder). */
static void flow_heads(const ptts_model *m) {
    static const struct {
        const char *file;
        int type, k, steps[3];
    } cases[] = {{"tiny/flow_head.safetensors", PTTS_FLOW_LSD, 2, {1, 2, 4}},
                 {"tiny/flow_head_flow_matching.safetensors", PTTS_FLOW_MATCHING, 1, {1, 4, 16}},
                 {"tiny/flow_head_drifting.safetensors", PTTS_FLOW_DRIFTING, 0, {1, 0, 0}}};
    const ptts_engine_ops *ops = ptts_vulkan_engine();
    const int R = 5, d = m->w->arch.d, ld = m->w->arch.ld;
    ptts_error e = {0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ptts_weights wv = *m->w;
        wv.arch.flow_type = cases[c].type;
        wv.arch.n_time_embed = cases[c].k;
        const ptts_engine_args args = {.w = &wv, .ctx = &m->ctx};
        void *eng;
        REQUIRE(ops->create(&eng, &args, R, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
        const char *path = fixture_path(cases[c].file);
        int64_t nc = 0, nn = 0;
        float *cond = load_f32(path, "cond", &nc), *noise = load_f32(path, "noise", &nn);
        REQUIRE(cond && noise && nc == (int64_t)R * d && nn == (int64_t)R * ld);
        float out[5 * 64];
        REQUIRE(R * ld <= (int)(sizeof out / sizeof out[0]));
        for (int i = 0; i < 3 && cases[c].steps[i]; i++) {
            const int steps = cases[c].steps[i];
            char name[32];
            snprintf(name, sizeof name, "out_steps%d", steps);
            int64_t nw = 0;
            float *want = load_f32(path, name, &nw);
            REQUIRE(want && nw == (int64_t)R * ld);
            CHECK(ops->set_sampler_steps(eng, steps, &e) == 0);
            CHECKF(ptts_vulkan_flow_sample(eng, cond, noise, R, out, &e) == 0, "%s", e.msg);
            double worst = 0;
            for (int r = 0; r < R; r++)
                worst = fmax(worst, rel_l2(out + r * ld, want + r * ld, (size_t)ld));
            printf("%s, %d steps on the GPU: max rel err per row %.3g\n", cases[c].file, steps,
                   worst);
            CHECKF(worst <= TOL, "%s steps %d: rel err %.3g", cases[c].file, steps, worst);
            free(want);
        }
        free(cond);
        free(noise);
        ops->destroy(eng);
    }
}

/* The reduced-precision paths (float16 caches, tensor cores) follow the precision mode, not
 * the matrices' storage: in float32 a released-style file's matrices (every value bf16) are
 * stored as bf16 as in bf16 mode (weights.c), and its caches must stay float32. */
static void half_by_mode(const ptts_engine_ops *ops) {
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "tiny") == 0);
    for (int p = 0; p < 2; p++) {
        ptts_model *m;
        ptts_error e = {0};
        int rc =
            ptts_model_create_filled_bf16(&m, &a, fixture_path("tokenizer/sp_unigram.model"), 2,
                                          p ? PTTS_PRECISION_BF16 : PTTS_PRECISION_F32, 1, &e);
        REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
        CHECK(m->w->backbone.layer[0].in_proj.type == PTTS_W_BF16); /* stored alike */
        m->be.engine = ops;
        void *eng;
        REQUIRE(ptts_engine_acquire(&m->be, ops, 1, &eng, &e) == 0);
        ptts_vk_counts c;
        ptts_vulkan_engine_counts(eng, &c);
        const int tc = ptts_vulkan_engine_tc(eng);
        ptts_engine_release(&m->be, ops, 1, eng, 0);
        CHECKF(c.kv_half == (unsigned long long)p && (p || !tc),
               "%s mode on bf16-stored weights: float16 caches %llu, tensor cores %d",
               p ? "bf16" : "float32", c.kv_half, tc);
        ptts_model_free(m);
    }
}

int main(void) {
    const ptts_engine_ops *ops = ptts_vulkan_engine();
    ptts_error e = {0};
    char name[256];
    int discrete = 0;
    if (ptts_vulkan_probe(NULL, name, sizeof name, &discrete, &e) || !ops) {
        char why[600];
        snprintf(why, sizeof why, "no Vulkan backend or device: %s", e.msg);
        return test_skip(why);
    }
    printf("Vulkan device: %s (%s)\n", name, discrete ? "discrete" : "not discrete");
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    mo.backend = PTTS_BACKEND_CPU;
    ptts_model *m;
    int rc = ptts_model_load(&m, &mo, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    m->be.engine = ops;
    replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218);
    replay_gpu(m, "generate_short", "voice_short.safetensors", 1e9f, 50);
    replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
    if (!discrete) /* a device without an SM count: no stepk, no tensor cores by default */
        CHECK(counts_of(m, 1, NULL, NULL).stepk_frames == 0);
    CHECK(counts_of(m, 1, NULL, NULL).conv_copies == 0); /* float32: ELU on load */
    batch_vs_cpu(m);
    batch_vs_cpu_n(m, 4); /* 32 slot-frames: one full codec pass */
    batch_vs_cpu_n(m, 6); /* 48: each call's frames over two passes */
    batch_vs_cpu_n(m, 20);
    pipe_exact(m);
    call_budget(m);
    join_first_audio(m, PTTS_JOIN_FIRST_AUDIO);
    join_first_audio(m, PTTS_JOIN_THROUGHPUT);
    joins_chunks_pauses(m);
    batch_cancel_restart(m);
    batch_eos_ends(m);
    kv_split(m);
    kv_reserve(m);
    kv_half(m);
    half_by_mode(ops);
    codec_groups(m);
    /* the step as one persistent dispatch (stepk.comp) with a one-workgroup grid: the path a
     * GPU that reports its SM count takes by default, exercised on any device */
    const ptts_vk_tuning stepk1 = {.stepk = 1};
    ptts_model_set_vk_tuning(m, &stepk1);
    printf("stepk, one workgroup:\n");
    replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218);
    replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
    {
        void *eng;
        REQUIRE(ptts_engine_acquire(&m->be, ops, 1, &eng, &e) == 0);
        ptts_vk_counts c;
        ptts_vulkan_engine_counts(eng, &c);
        CHECKF(ptts_vulkan_engine_stepk(eng) == 1 && c.stepk_frames >= 218 + 16,
               "stepk workgroups %d, %llu frames", ptts_vulkan_engine_stepk(eng), c.stepk_frames);
        ptts_engine_release(&m->be, ops, 1, eng, 0);
    }
    batch_vs_cpu(m);
    /* every register-tiled gemm (gemm_tile.glsl) forced onto every linear with vec4 operands,
     * whatever its shape (partial tiles, short K, few rows), against the reference; the batch
     * against the CPU (grouped row addressing, shared by every tile) for the first */
    static const char *const tiles[] = {"l", "r64", "r32"};
    for (int i = 0; i < 3; i++) {
        const ptts_vk_tuning force = {.gemm_force = tiles[i]};
        ptts_model_set_vk_tuning(m, &force);
        printf("gemm tile %s everywhere:\n", tiles[i]);
        replay_gpu(m, "generate_short", "voice_short.safetensors", 1e9f, 50);
        check_forced(m, 0, tiles, 3, i);
        if (i == 0) batch_vs_cpu(m);
    }
    {
        const ptts_vk_tuning bad = {.gemm_force = "s16"}; /* a tile that no longer exists */
        ptts_model_set_vk_tuning(m, &bad);
        ptts_stream *s = NULL;
        rc = ptts_stream_create(&s, m, &e);
        if (!rc) ptts_stream_free(s);
        CHECKF(rc == PTTS_E_INVALID && strstr(e.msg, "s16"), "unknown gemm tile: rc %d (%s)", rc,
               e.msg);
    }
    /* the SEANet convs with their ELU'd windows copied into work buffers (a hook: the default
     * is ELU on load) */
    const ptts_vk_tuning copy = {.conv_copy = 1};
    ptts_model_set_vk_tuning(m, &copy);
    printf("codec convs through work buffers:\n");
    replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218);
    replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
    CHECK(counts_of(m, 1, NULL, NULL).conv_copies > 0);
    batch_vs_cpu(m);
    ptts_model_set_vk_tuning(m, NULL);
    flow_heads(m);
    sampler_heads(m);
    /* codec-only mode: backbone and flow head on the CPU, the codec on the GPU */
    m->be.engine = ptts_hybrid_engine();
    printf("vulkan-codec (hybrid):\n");
    replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218);
    replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
    batch_vs_cpu(m);
    ptts_model_free(m);
    /* the tensor-core gemms (gemm_tc.glsl, float16 operands) where the device has cooperative
     * matrices (not lavapipe: said and skipped), each tile forced onto a float32 model at the
     * same tolerance (ptts_model_options.tensor_cores = 1) */
    mo.config_path = fixture_path("tiny/manifest.json"); /* fixture_path's buffers rotate */
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.tensor_cores = 1;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    m->be.engine = ops;
    {
        void *eng;
        REQUIRE(ptts_engine_acquire(&m->be, ops, 1, &eng, &e) == 0);
        const int tc = ptts_vulkan_engine_tc(eng);
        ptts_engine_release(&m->be, ops, 1, eng, 0);
        if (!tc) printf("tensor-core gemms: the device has no cooperative matrices, skipped\n");
        static const char *const tct[] = {"l", "m", "s", "wh", "th", "tq"};
        const int ntc = (int)(sizeof tct / sizeof *tct);
        for (int i = 0; tc && i < ntc; i++) {
            const ptts_vk_tuning force = {.tc_force = tct[i]};
            ptts_model_set_vk_tuning(m, &force);
            printf("tensor-core gemm tile %s everywhere:\n", tct[i]);
            replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218);
            replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
            check_forced(m, 1, tct, ntc, i);
            batch_vs_cpu(m);
        }
        if (tc) {
            tc_same(m, tct, ntc, 0);
            /* the convs' windows ELU'd into work buffers (the hook) instead of ELU on load (the
             * tiles' PVK_XELU variants, the default) */
            const ptts_vk_tuning copied = {.tc_force = tct[0], .conv_copy = 1};
            ptts_model_set_vk_tuning(m, &copied);
            printf("tensor-core gemm tile %s everywhere, windows copied:\n", tct[0]);
            replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
            tc_same(m, tct, ntc, 1);
            attn_tc(m);
        }
    }
    ptts_model_free(m);
    bf16_stepk();
    return test_summary();
}
