// ctest-label: parity
// ctest-timeout: 900
/*
 * test_generate.c - the whole text-to-speech loop against the reference (tiny model):
 * generate.safetensors replayed with the recorded noise: chunk texts and ids, latents,
 * EOS logits, PCM per frame; generate_short with the eos_case threshold (exactly 16 frames);
 * prompting in one batch equals prompting row by row; the voice is never modified; the float16
 * cache of the reduced-precision modes holds the float32 values rounded.
 */
#include "backbone.h"
#include "half.h"
#include "replay.h"

/* Prompting a batch equals prompting row by row (same cache to rounding). */
static void batch_vs_rows(ptts_model *m) {
    ptts_error e = {0};
    const int n = 37;
    int ids[37];
    for (int i = 0; i < n; i++)
        ids[i] = (i * 37 + 11) % m->w->arch.nb;
    ptts_backbone a, b;
    REQUIRE(ptts_backbone_init(&a, m->w, 64, 0, &e) == 0);
    REQUIRE(ptts_backbone_init(&b, m->w, 64, 0, &e) == 0);
    ptts_backbone_prompt_tokens(&a, &m->ctx, ids, n);
    for (int i = 0; i < n; i++)
        ptts_backbone_prompt_tokens(&b, &m->ctx, ids + i, 1);
    CHECK(a.kv.len == n && b.kv.len == n);
    size_t per = (size_t)a.kv.cap * a.kv.d;
    double worst = 0;
    for (int l = 0; l < a.kv.layers; l++) {
        double ek = rel_l2(a.kv.k + l * per, b.kv.k + l * per, (size_t)n * a.kv.d);
        double ev = rel_l2(a.kv.v + l * per, b.kv.v + l * per, (size_t)n * a.kv.d);
        worst = fmax(worst, fmax(ek, ev));
    }
    printf("batch vs row-by-row prompting: max rel err %.3g\n", worst);
    CHECK(worst <= 1e-5);
    ptts_backbone_free(&a);
    ptts_backbone_free(&b);
}

/* The float16 cache (the bf16 and int8 modes' engine, here over the tiny float32 weights): layer
 * 0's keys and values, computed from the same rows in both, are the float32 cache's rounded to
 * nearest even, exactly; the later layers and a step's outputs stay close to the float32
 * cache's; a voice state set into it reads back rounded. */
static void kv16_cache(ptts_model *m) {
    ptts_error e = {0};
    const int n = 37, d = m->w->arch.d;
    int ids[37];
    for (int i = 0; i < n; i++)
        ids[i] = (i * 53 + 5) % m->w->arch.nb;
    ptts_backbone a, b;
    REQUIRE(ptts_backbone_init(&a, m->w, 64, 0, &e) == 0);
    REQUIRE(ptts_backbone_init(&b, m->w, 64, 1, &e) == 0);
    CHECK(!a.kv.f16 && b.kv.f16 && b.kv.kh && !b.kv.k);
    ptts_backbone_prompt_tokens(&a, &m->ctx, ids, n);
    ptts_backbone_prompt_tokens(&b, &m->ctx, ids, n);
    float *ka = malloc((size_t)n * d * sizeof(float)), *va = malloc((size_t)n * d * sizeof(float));
    float *kb = malloc((size_t)n * d * sizeof(float)), *vb = malloc((size_t)n * d * sizeof(float));
    REQUIRE(ka && va && kb && vb);
    double worst = 0;
    for (int l = 0; l < a.kv.layers; l++) {
        ptts_kv_get_rows(&a.kv, l, 0, n, ka, va);
        ptts_kv_get_rows(&b.kv, l, 0, n, kb, vb);
        if (l == 0) {
            size_t off = 0;
            for (size_t i = 0; i < (size_t)n * d && !off; i++)
                if (kb[i] != st_f16_to_f32(st_f32_to_f16(ka[i])) ||
                    vb[i] != st_f16_to_f32(st_f32_to_f16(va[i])))
                    off = i + 1;
            CHECKF(!off, "float16 cache, layer 0: value %zu is not the float32 one rounded",
                   off - 1);
        }
        worst = fmax(worst, fmax(rel_l2(kb, ka, (size_t)n * d), rel_l2(vb, va, (size_t)n * d)));
    }
    float ha[512], hb[512], ea, eb;
    REQUIRE(d <= 512);
    ptts_backbone_step(&a, &m->ctx, NULL, ha, &ea);
    ptts_backbone_step(&b, &m->ctx, NULL, hb, &eb);
    const double eh = rel_l2(hb, ha, (size_t)d);
    printf("float16 cache against float32: keys and values max rel err %.3g, step h %.3g, eos "
           "%.4g vs %.4g\n",
           worst, eh, eb, ea);
    CHECK(worst > 0 && worst <= 2e-3 && eh > 0 && eh <= 2e-3 && fabs(eb - ea) <= 1e-2);
    /* a voice state through the float16 cache: rounded on the way in, read back exactly */
    ptts_voice_state *st = NULL, *st16 = NULL;
    REQUIRE(ptts_backbone_to_voice(&a, &st, &e) == 0);
    REQUIRE(ptts_backbone_set_voice(&b, st, &e) == 0);
    REQUIRE(ptts_backbone_to_voice(&b, &st16, &e) == 0);
    size_t bad = 0, total = (size_t)st->layers * st->positions * d;
    for (size_t i = 0; i < total; i++)
        bad += st16->k[i] != st_f16_to_f32(st_f32_to_f16(st->k[i])) ||
               st16->v[i] != st_f16_to_f32(st_f32_to_f16(st->v[i]));
    CHECKF(!bad, "a voice state through the float16 cache: %zu values not rounded once", bad);
    ptts_voice_state_free(st);
    ptts_voice_state_free(st16);
    free(ka), free(va), free(kb), free(vb);
    ptts_backbone_free(&a);
    ptts_backbone_free(&b);
}

/* Noise draws (MODEL.md 8.4): a chunk stopped by EOS draws emitted frames + 1 rows (the step
 * whose latent the rule throws away draws too). eos_case emits 16 frames: 17 rows suffice and
 * 16 do not (the 16 frames come out, then the 17th step fails). */
static void eos_noise_draws(ptts_model *m) {
    ptts_error e = {0};
    const int ld = m->w->arch.ld;
    int64_t n_noise;
    float *noise = load_f32(fixture_path("tiny/generate_short.safetensors"), "noise", &n_noise);
    REQUIRE(noise && n_noise >= 17 * ld);
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    float *pcm = malloc((size_t)m->w->arch.frame_samples * sizeof *pcm);
    REQUIRE(pcm);
    for (int rows = 17; rows >= 16; rows--) {
        ptts_gen_options o = ptts_gen_options_default();
        o.eos_threshold = eos_case_threshold();
        o.eos_threshold_set = 1;
        o.noise = noise;
        o.noise_rows = rows;
        ptts_stream *s;
        REQUIRE(ptts_stream_create(&s, m, &e) == 0);
        REQUIRE(ptts_stream_start(s, v, "ok go", &o, &e) == 0);
        int frames = 0, n;
        while ((n = ptts_stream_next(s, pcm, &e)) > 0)
            frames++;
        if (rows == 17)
            CHECKF(n == 0 && frames == 16, "17 noise rows: %d frames, rc %d (%s)", frames, n,
                   e.msg);
        else
            CHECKF(n == PTTS_E_INVALID && frames == 16 && strstr(e.msg, "noise"),
                   "16 noise rows: %d frames, rc %d (%s)", frames, n, e.msg);
        ptts_stream_free(s);
    }
    free(pcm);
    ptts_voice_free(v);
    free(noise);
}

static ptts_model *load_model(const char *config, const char *weights) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path(config);
    mo.weights_path = fixture_path(weights);
    mo.threads = 2;
    ptts_model *m;
    int rc = ptts_model_load(&m, &mo, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s: %s\n", config, e.msg), 0));
    return m;
}

/* The other samplers: flow_matching at 1 and 4 steps, drifting free-running (its raw output is
 * fed back and amplifies rounding: 1e-3, MODEL.md tolerances). */
static void samplers(void) {
    ptts_model *m =
        load_model("tiny/config_flow_matching.yaml", "tiny/model_flow_matching.safetensors");
    CHECK(m->w->arch.flow_type == PTTS_FLOW_MATCHING);
    for (int k = 0; k < 2; k++) {
        errs er = {0};
        const char *cname = k ? "generate_flow_matching_steps4" : "generate_flow_matching_steps1";
        replay(m, "tiny", cname, "voice_short.safetensors", 1e9f, 50, 1e-4, &er);
        printf("tiny %s: max rel err latents %.3g, eos %.3g, pcm %.3g\n", cname, er.max_lat,
               er.max_eos, er.max_pcm);
    }
    ptts_model_free(m);
    m = load_model("tiny/config_drifting.yaml", "tiny/model_drifting.safetensors");
    CHECK(m->w->arch.flow_type == PTTS_FLOW_DRIFTING);
    errs er = {0};
    replay(m, "tiny", "generate_drifting", "voice_short.safetensors", 1e9f, 50, 1e-3, &er);
    printf("tiny generate_drifting (free-running): max rel err latents %.3g, eos %.3g, pcm %.3g\n",
           er.max_lat, er.max_eos, er.max_pcm);
    ptts_model_free(m);
}

/* english_2026-01 style: pad_with_spaces and the whitespace-keeping sp_unigram_bytefb tokenizer
 * with 1000 pieces (conditioner.embed.weight [1001, 64]); "ok go" is prepared to 8 spaces +
 * "Ok go." and that is what is tokenised (13 ids, max_gen_len 80). */
static void padded(void) {
    ptts_error e = {0};
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "tiny") == 0);
    a.nb = 1000;
    ptts_model *m;
    REQUIRE(ptts_model_create_filled(&m, &a, fixture_path("tokenizer/sp_unigram_bytefb.model"), 2,
                                     PTTS_PRECISION_F32, &e) == 0 ||
            (fprintf(stderr, "%s\n", e.msg), 0));
    m->text.pad_with_spaces = 1;
    errs er = {0};
    replay(m, "tiny", "generate_short_pad", "voice_short.safetensors", 1e9f, 80, 1e-4, &er);
    printf("tiny generate_short_pad: max rel err latents %.3g, eos %.3g, pcm %.3g\n", er.max_lat,
           er.max_eos, er.max_pcm);
    ptts_model_free(m);
}

int main(void) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    ptts_model *m;
    int rc = ptts_model_load(&m, &mo, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    errs er = {0};
    replay(m, "tiny", "generate", "voice.safetensors", 1e9f, 218, 1e-4, &er);
    printf("tiny generate: max rel err latents %.3g, eos %.3g, pcm %.3g\n", er.max_lat, er.max_eos,
           er.max_pcm);
    errs es = {0};
    replay(m, "tiny", "generate_short", "voice_short.safetensors", 1e9f, 50, 1e-4, &es);
    printf("tiny generate_short: max rel err latents %.3g, eos %.3g, pcm %.3g\n", es.max_lat,
           es.max_eos, es.max_pcm);
    /* eos_case: same noise, the threshold at which EOS first fires at step 11: 16 frames */
    errs ee = {0};
    replay(m, "tiny", "generate_short", "voice_short.safetensors", eos_case_threshold(), 16, 1e-4,
           &ee);
    /* eos_early_case: the logit crosses at step 3 (ignored: EOS counts from step 6) and next at
     * step 11: 16 frames again (2.1's rule gave 8) */
    replay(m, "tiny", "generate_short", "voice_short.safetensors",
           short_case_threshold("eos_early_case"), 16, 1e-4, &ee);
    eos_noise_draws(m);
    /* the pre-2.x voice file (current_end, no pad) is voice_short: the same run */
    replay(m, "tiny", "generate_short", "voice_legacy_current_end.safetensors", 1e9f, 50, 1e-4,
           &ee);
    batch_vs_rows(m);
    kv16_cache(m);
    ptts_model_free(m);
    samplers();
    padded();
    return test_summary();
}
