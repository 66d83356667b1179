// ctest-label: parity
// ctest-timeout: 900
/*
 * test_generate.c - the whole text-to-speech loop against the reference (tiny model):
 * generate.safetensors replayed with the recorded noise: chunk texts and ids, latents,
 * EOS logits, PCM per frame; generate_short with the eos_case threshold (exactly 16 frames);
 * prompting in one batch equals prompting row by row; the voice is never modified.
 */
#include "backbone.h"
#include "replay.h"

/* Prompting a batch equals prompting row by row (same cache to rounding). */
static void batch_vs_rows(ptts_model *m) {
    ptts_error e = {0};
    const int n = 37;
    int ids[37];
    for (int i = 0; i < n; i++) ids[i] = (i * 37 + 11) % m->w->arch.nb;
    ptts_backbone a, b;
    REQUIRE(ptts_backbone_init(&a, m->w, 64, &e) == 0);
    REQUIRE(ptts_backbone_init(&b, m->w, 64, &e) == 0);
    ptts_backbone_prompt_tokens(&a, &m->ctx, ids, n);
    for (int i = 0; i < n; i++) ptts_backbone_prompt_tokens(&b, &m->ctx, ids + i, 1);
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
    printf("tiny generate: max rel err latents %.3g, eos %.3g, pcm %.3g\n", er.max_lat,
           er.max_eos, er.max_pcm);
    errs es = {0};
    replay(m, "tiny", "generate_short", "voice_short.safetensors", 1e9f, 50, 1e-4, &es);
    printf("tiny generate_short: max rel err latents %.3g, eos %.3g, pcm %.3g\n", es.max_lat,
           es.max_eos, es.max_pcm);
    /* eos_case: same noise, the threshold at which EOS first fires at step 11: 16 frames */
    errs ee = {0};
    replay(m, "tiny", "generate_short", "voice_short.safetensors", eos_case_threshold(), 16, 1e-4,
           &ee);
    batch_vs_rows(m);
    ptts_model_free(m);
    return test_summary();
}
