// ctest-label: full
// ctest-timeout: 1800
/*
 * test_overlap_full.c - the codec/backbone overlap gives the same bits as the plain path at
 * full size (english_2026-04 architecture, synthetic pocket-fill-v1 weights), where the
 * kernels split work over threads as they do in production, for f32, bf16 and int8 on 2
 * threads (overlap_check.h: a stream over three chunks, a batch with joins, stops, a cancel).
 * EOS thresholds -1e9 (the rule ends every chunk frames_after_eos frames in) and 1e9 (never).
 */
#include "overlap_check.h"

int main(void) {
    ptts_error e = {0};
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "full") == 0);
    const int prec[3] = {PTTS_PRECISION_F32, PTTS_PRECISION_BF16, PTTS_PRECISION_INT8};
    const char *names[3] = {"f32", "bf16", "int8"};
    for (int p = 0; p < 3; p++) {
        ptts_model *m;
        int rc = ptts_model_create_filled(&m, &a, fixture_path("tokenizer/sp_unigram.model"), 2,
                                          prec[p], &e);
        REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
        ptts_voice *v;
        REQUIRE(ptts_voice_load(&v, m, fixture_path("full/voice.safetensors"), &e) == 0);
        const ptts_voice *voices[2] = {v, v};
        const float thr[2] = {-1e9f, 1e9f};
        overlap_compare(m, voices, thr, 2, thr[0], names[p]);
        ptts_voice_free(v);
        ptts_model_free(m);
    }
    return test_summary();
}
