/*
 * test_flow_full.c - the flow head and LSD decoding (MODEL.md section 5) at full size
 * (english_2026-04: d 1024, fd 512, 6 blocks, ld 32) with pocket-fill-v1 weights against
 * tests/fixtures/full/flow_head.safetensors: cond [5, 1024], noise [5, 32] -> out_steps1/2/4
 * [5, 32], relative L2 per row <= 1e-4, rows batched and one at a time.
 */
// ctest-label: full
// ctest-timeout: 600
#include "flow_check.h"

int main(void) {
    ptts_error e = {0};
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "full") == 0);
    ptts_weights *w = NULL;
    const ptts_weights_options o = {.mode = PTTS_WMODE_F32};
    if (ptts_weights_fill(&w, &a, &o, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    CHECK(w->arch.fd == 512 && w->arch.ld == 32 && w->arch.flow_depth == 6);
    static const int steps[] = {1, 2, 4};
    CHECK(w->arch.n_time_embed == 2 && w->arch.flow_type == PTTS_FLOW_LSD);
    flow_check(w, "full/flow_head.safetensors", 1e-4, steps, 3);
    ptts_weights_free(w);
    return test_summary();
}
