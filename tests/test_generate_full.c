// ctest-label: full
// ctest-timeout: 1800
/*
 * test_generate_full.c - the whole loop at full size (english_2026-04 architecture, synthetic
 * pocket-fill-v1 weights) against full/generate.safetensors: 80 frames replayed with the
 * recorded noise from full/voice.safetensors, every latent, EOS logit and PCM frame within 1e-4.
 */
#include "replay.h"

int main(void) {
    ptts_error e = {0};
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "full") == 0);
    ptts_model *m;
    int rc = ptts_model_create_filled(&m, &a, fixture_path("tokenizer/sp_unigram.model"), 0,
                                      PTTS_PRECISION_F32, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    errs er = {0};
    replay(m, "full", "generate", "voice.safetensors", 1e9f, 80, 1e-4, &er);
    printf("full generate: max rel err latents %.3g, eos %.3g, pcm %.3g\n", er.max_lat, er.max_eos,
           er.max_pcm);
    ptts_model_free(m);
    return test_summary();
}
