/*
 * test_flow.c - the flow head and LSD decoding (MODEL.md section 5) on the tiny model against
 * tests/fixtures/tiny/flow_head.safetensors: cond [5, 64], noise [5, 16] -> out_steps1/2/4
 * [5, 16], relative L2 per row <= 1e-4, rows batched and one at a time.
 */
// ctest-label: parity
#include "flow_check.h"

int main(void) {
    ptts_error e = {0};
    ptts_weights *w = NULL;
    const ptts_weights_options o = {.mode = PTTS_WMODE_F32, .heads = 4, .codec_heads = 4};
    if (ptts_weights_load(&w, fixture_path("tiny/model.safetensors"), &o, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    CHECK(w->arch.fd == 32 && w->arch.ld == 16 && w->arch.flow_depth == 2);
    flow_check(w, "tiny/flow_head.safetensors", 1e-4);
    ptts_weights_free(w);
    return test_summary();
}
