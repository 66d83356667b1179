// ctest-label: full
// ctest-timeout: 1800
/*
 * test_vulkan_full.c - the Vulkan engine at full size (english_2026-04 architecture, synthetic
 * pocket-fill-v1 weights) against full/generate.safetensors: 80 frames replayed with the
 * recorded noise through a stream on the GPU engine (8 steps per call, so several codec frames
 * per pass), every latent, EOS logit and PCM frame within the GPU tolerance 1e-3 relative L2;
 * again with the KV caches (the backbone's and the codec's rings) in float16 (the default of
 * bf16 / int8 weights, forced here on float32 weights: what float16 caches cost at full size);
 * with the one-row attention in flash-decoding's form (attn_dec.comp: the models' 64-channel
 * heads) where the device has subgroup shuffles; and with the grouped attention on tensor cores
 * (attn_tc.comp) where the device has them.
 * Runs on Mesa's lavapipe in CI. Skipped (test_skip: exit 77, or a failure with PTTS_NO_SKIP)
 * only when the build has no Vulkan backend or no Vulkan device exists.
 */
#include "vk_test.h"

/* The 80-frame replay with hook t, where on(engine) says the device has the path (on NULL:
 * always; else `absent` is said and the replay skipped); 1 when it ran. */
static int full_replay(ptts_model *m, const ptts_vk_tuning *t, int (*on)(void *eng),
                       const char *what, const char *absent) {
    ptts_model_set_vk_tuning(m, t);
    if (on) {
        ptts_error e = {0};
        void *eng;
        REQUIRE(ptts_engine_acquire(&m->be, m->be.engine, 1, &eng, &e) == 0);
        const int has = on(eng);
        ptts_engine_release(&m->be, m->be.engine, 1, eng, 0);
        if (!has) {
            printf("%s: %s, skipped\n", what, absent);
            return 0;
        }
    }
    errs er = {0};
    replay(m, "full", "generate", "voice.safetensors", 1e9f, 80, 1e-3, &er);
    printf("vulkan full generate, %s: max rel err latents %.3g, eos %.3g, pcm %.3g\n", what,
           er.max_lat, er.max_eos, er.max_pcm);
    return 1;
}

int main(void) {
    ptts_error e = {0};
    vk_test_probe(NULL);
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "full") == 0);
    ptts_model *m;
    int rc = ptts_model_create_filled(&m, &a, fixture_path("tokenizer/sp_unigram.model"), 2,
                                      PTTS_PRECISION_F32, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    m->be.engine = ptts_vulkan_engine();
    full_replay(m, NULL, NULL, "float32 caches", NULL);
    const ptts_vk_tuning h = {.kv16 = 1};
    full_replay(m, &h, NULL, "float16 KV caches", NULL);
    /* the one-row attention (the steps') in flash-decoding's form, over the same caches */
    const ptts_vk_tuning hd = {.kv16 = 1, .attn_dec = 1};
    if (full_replay(m, &hd, ptts_vulkan_engine_dec_attention, "float16 KV caches, attn_dec",
                    "the device has no subgroup shuffles"))
        CHECKF(counts_of(m, 1, NULL, NULL).attn_dec > 0, "attn_dec: none recorded");
    /* the grouped attention (the codec's, the prompt's) on tensor cores where the device has
     * them (attn_tc.comp), the gemms still float32 */
    const ptts_vk_tuning ht = {.kv16 = 1, .attn_tc = 1};
    full_replay(m, &ht, ptts_vulkan_engine_tc_attention,
                "float16 KV caches, attention on tensor cores",
                "the device has no cooperative matrices");
    ptts_model_free(m);
    return test_summary();
}
