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

int main(void) {
    const ptts_engine_ops *ops = ptts_vulkan_engine();
    ptts_error e = {0};
    vk_test_probe(NULL);
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "full") == 0);
    ptts_model *m;
    int rc = ptts_model_create_filled(&m, &a, fixture_path("tokenizer/sp_unigram.model"), 2,
                                      PTTS_PRECISION_F32, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    m->be.engine = ops;
    errs er = {0};
    replay(m, "full", "generate", "voice.safetensors", 1e9f, 80, 1e-3, &er);
    printf("vulkan full generate: max rel err latents %.3g, eos %.3g, pcm %.3g\n", er.max_lat,
           er.max_eos, er.max_pcm);
    const ptts_vk_tuning h = {.kv16 = 1};
    ptts_model_set_vk_tuning(m, &h);
    errs eh = {0};
    replay(m, "full", "generate", "voice.safetensors", 1e9f, 80, 1e-3, &eh);
    printf("vulkan full generate, float16 KV caches: max rel err latents %.3g, eos %.3g, pcm "
           "%.3g\n",
           eh.max_lat, eh.max_eos, eh.max_pcm);
    /* the one-row attention (the steps') in flash-decoding's form, over the same caches */
    const ptts_vk_tuning hd = {.kv16 = 1, .attn_dec = 1};
    ptts_model_set_vk_tuning(m, &hd);
    void *eng;
    REQUIRE(ptts_engine_acquire(&m->be, ops, 1, &eng, &e) == 0);
    const int dec = ptts_vulkan_engine_dec_attention(eng);
    ptts_engine_release(&m->be, ops, 1, eng, 0);
    if (dec) {
        errs ed = {0};
        replay(m, "full", "generate", "voice.safetensors", 1e9f, 80, 1e-3, &ed);
        printf("vulkan full generate, float16 KV caches, attn_dec: max rel err latents %.3g, eos "
               "%.3g, pcm %.3g\n",
               ed.max_lat, ed.max_eos, ed.max_pcm);
        ptts_vk_counts c;
        REQUIRE(ptts_engine_acquire(&m->be, ops, 1, &eng, &e) == 0);
        ptts_vulkan_engine_counts(eng, &c);
        ptts_engine_release(&m->be, ops, 1, eng, 0);
        CHECKF(c.attn_dec > 0, "attn_dec: %llu dispatches recorded", c.attn_dec);
    } else {
        printf("attn_dec: the device has no subgroup shuffles, skipped\n");
    }
    /* the grouped attention (the codec's, the prompt's) on tensor cores where the device has
     * them (attn_tc.comp), the gemms still float32 */
    const ptts_vk_tuning ht = {.kv16 = 1, .attn_tc = 1};
    ptts_model_set_vk_tuning(m, &ht);
    REQUIRE(ptts_engine_acquire(&m->be, ops, 1, &eng, &e) == 0);
    const int tc = ptts_vulkan_engine_tc_attention(eng);
    ptts_engine_release(&m->be, ops, 1, eng, 0);
    if (tc) {
        errs et = {0};
        replay(m, "full", "generate", "voice.safetensors", 1e9f, 80, 1e-3, &et);
        printf("vulkan full generate, float16 KV caches, attention on tensor cores: max rel err "
               "latents %.3g, eos %.3g, pcm %.3g\n",
               et.max_lat, et.max_eos, et.max_pcm);
    } else {
        printf("attention on tensor cores: the device has no cooperative matrices, skipped\n");
    }
    ptts_model_free(m);
    return test_summary();
}
