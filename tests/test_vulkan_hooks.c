// ctest-label: parity
// ctest-timeout: 900
/*
 * test_vulkan_hooks.c - the Vulkan engine's paths that a test hook of ptts_vk_tuning (engine.h)
 * forces, each against the reference (tiny model: replays of generate / generate_short and
 * batches against the CPU, vk_test.h), and after each forced run the engine's counters
 * (ptts_vulkan_engine_counts / _tile_uses) showing that the forced path ran and no other tile
 * did: KV caches split per layer, sized ahead and grown, in float16 pairs (and the precision
 * mode choosing them); the one-row attention in flash-decoding's form; the whole step as one
 * persistent dispatch of one workgroup (stepk = 1); each register-tiled gemm forced (an unknown
 * tile name fails at create); the codec convs' windows copied into work buffers; each
 * tensor-core tile forced where the device has cooperative matrices (every tile's samples
 * bit-identical to the others', with the windows copied and with ELU on load) and the grouped
 * attention on tensor cores; a bf16 model's one-dispatch step (bf16 weight copies) against its
 * multi-dispatch step. Skipped as test_vulkan.c is.
 */
#include "vk_test.h"

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
    batch_vs_cpu_t(m, 1, grow, 0, TOL);
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
    batch_vs_cpu_t(m, S, grow, 0, TOL);
    c = counts_of(m, S, NULL, NULL);
    CHECKF(c.kv_positions == want && c.kv_grows == 1,
           "chunks within the reserve: %llu positions, %llu growths", c.kv_positions, c.kv_grows);
    batch_vs_cpu_t(m, S, grow, ids, TOL); /* the reserve's path inside a batch's life */
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

/* The KV caches (backbone and codec rings) in float16 pairs (the default of bf16 / int8 weights,
 * forced here on the float32 tiny model): the replays within KV16_TOL (vk_test.h), on the
 * multi-dispatch step and
 * on stepk (one workgroup); and caches that grow at a chunk's start from one buffer pair into
 * a pair per layer (the float16 rows copied as they are): the same samples bit for bit as the
 * caches that never split. */
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

/* The one-row attention in flash-decoding's form (attn_dec.comp over float16 rows where the
 * device has subgroup shuffles, through the hook; the tiny model's heads are 16 channels) against
 * attention.comp (the default) on the same caches: both replays within KV16_TOL of the CPU, both on
 * a batch of 6 streams (slots through the list, positions of several lengths) within
 * KV16_BATCH_TOL, and the hook's choice taken. */
#define KV16_BATCH_TOL 5e-3 /* attention.comp's worst frame of the batch: 2.9e-3 on lavapipe */
static void attn_dec(ptts_model *m) {
    const ptts_vk_tuning off = {.kv16 = 1, .stepk = -1},
                         on = {.kv16 = 1, .stepk = -1, .attn_dec = 1};
    errs er = {0};
    ptts_model_set_vk_tuning(m, &off);
    replay(m, "tiny", "generate", "voice.safetensors", 1e9f, 218, KV16_TOL, &er);
    printf("float16 caches, attention.comp: max rel err latents %.3g, eos %.3g, pcm %.3g\n",
           er.max_lat, er.max_eos, er.max_pcm);
    CHECK(counts_of(m, 1, NULL, NULL).attn_dec == 0);
    ptts_model_set_vk_tuning(m, &on);
    int has = 0;
    ptts_error e = {0};
    void *eng;
    REQUIRE(ptts_engine_acquire(&m->be, m->be.engine, 1, &eng, &e) == 0);
    has = ptts_vulkan_engine_dec_attention(eng);
    ptts_engine_release(&m->be, m->be.engine, 1, eng, 0);
    if (!has) {
        printf("attn_dec: the device has no subgroup shuffles, skipped\n");
        ptts_model_set_vk_tuning(m, NULL);
        return;
    }
    er = (errs){0};
    replay(m, "tiny", "generate", "voice.safetensors", 1e9f, 218, KV16_TOL, &er);
    replay(m, "tiny", "generate_short", "voice_short.safetensors", eos_case_threshold(), 16,
           KV16_TOL, &er);
    printf("float16 caches, attn_dec.comp: max rel err latents %.3g, eos %.3g, pcm %.3g\n",
           er.max_lat, er.max_eos, er.max_pcm);
    const unsigned long long n1 = counts_of(m, 1, NULL, NULL).attn_dec;
    CHECKF(n1 > 0, "attn_dec: %llu dispatches recorded", n1);
    static const char *const texts[3] = {"Hello world.", "A second, somewhat longer sentence here.",
                                         "Third."};
    batch_vs_cpu_t(m, 6, texts, 0, KV16_BATCH_TOL);
    CHECKF(counts_of(m, 6, NULL, NULL).attn_dec > 0, "attn_dec: none recorded for 6 slots");
    ptts_model_set_vk_tuning(m, &off);
    printf("the same batch with attention.comp:\n");
    batch_vs_cpu_t(m, 6, texts, 0, KV16_BATCH_TOL);
    ptts_model_set_vk_tuning(m, NULL);
}

/* A bf16 model: stepk streams the packed bf16 copies of the backbone and flow matrices, the
 * multi-dispatch path their exact float32 widening; the two must agree to rounding order. */
static void bf16_stepk(void) {
    /* the float32 codec gemms in both (tensor cores off: the step is compared) */
    ptts_model *m = vk_test_model(PTTS_PRECISION_BF16, -1);
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
    vk_test_probe(NULL);
    ptts_model *m = vk_test_model(PTTS_PRECISION_F32, 0);
    kv_split(m);
    kv_reserve(m);
    kv_half(m);
    attn_dec(m);
    half_by_mode(ops);
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
        int rc = ptts_stream_create(&s, m, &e);
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
    ptts_model_free(m);
    /* the tensor-core gemms (gemm_tc.glsl, float16 operands) where the device has cooperative
     * matrices (not lavapipe: said and skipped), each tile forced onto a float32 model at the
     * same tolerance (ptts_model_options.tensor_cores = 1) */
    m = vk_test_model(PTTS_PRECISION_F32, 1);
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
