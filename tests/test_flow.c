/*
 * test_flow.c - the flow head and its three samplers (MODEL.md sections 2 and 5) on the tiny
 * model: lsd (model.safetensors, flow_head.safetensors: out_steps1/2/4), flow_matching
 * (model_flow_matching.safetensors: out_steps1/4/16) and drifting (model_drifting.safetensors:
 * out_steps1), cond [5, 64], noise [5, 16] -> [5, 16], relative L2 per row <= 1e-4, rows
 * batched and one at a time; the sampler type derived from the time embedders (K = 2, 1, 0),
 * and a config's type that contradicts the weights refused.
 */
// ctest-label: parity
#include "flow_check.h"

static ptts_weights *load(const char *rel) {
    ptts_error e = {0};
    ptts_weights *w = NULL;
    const ptts_weights_options o = {.mode = PTTS_WMODE_F32, .heads = 4, .codec_heads = 4};
    if (ptts_weights_load(&w, fixture_path(rel), &o, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
    return w;
}

int main(void) {
    ptts_error e = {0};
    static const int lsd_steps[] = {1, 2, 4}, fm_steps[] = {1, 4, 16}, drift_steps[] = {1};
    ptts_weights *w = load("tiny/model.safetensors");
    CHECK(w->arch.fd == 32 && w->arch.ld == 16 && w->arch.flow_depth == 2);
    CHECK(w->arch.n_time_embed == 2 && w->arch.flow_type == PTTS_FLOW_LSD);
    flow_check(w, "tiny/flow_head.safetensors", 1e-4, lsd_steps, 3);
    CHECK(ptts_arch_check_flow_type(&w->arch, PTTS_FLOW_LSD, "config.yaml", &e) == 0);
    CHECK(ptts_arch_check_flow_type(&w->arch, PTTS_FLOW_DRIFTING, "config.yaml", &e) ==
              PTTS_E_MODEL &&
          strstr(e.msg, "config.yaml says flow.type drifting"));
    printf("lsd weights, drifting config: %s\n", e.msg);
    ptts_weights_free(w);

    w = load("tiny/model_flow_matching.safetensors");
    CHECK(w->arch.n_time_embed == 1 && w->arch.flow_type == PTTS_FLOW_MATCHING);
    flow_check(w, "tiny/flow_head_flow_matching.safetensors", 1e-4, fm_steps, 3);
    CHECK(ptts_arch_check_flow_type(&w->arch, PTTS_FLOW_LSD, "c.yaml", &e) == PTTS_E_MODEL);
    ptts_weights_free(w);

    w = load("tiny/model_drifting.safetensors");
    CHECK(w->arch.n_time_embed == 0 && w->arch.flow_type == PTTS_FLOW_DRIFTING);
    flow_check(w, "tiny/flow_head_drifting.safetensors", 1e-4, drift_steps, 1);
    CHECK(ptts_arch_check_flow_type(&w->arch, PTTS_FLOW_DRIFTING, "c.yaml", &e) == 0);
    CHECK(ptts_arch_check_flow_type(&w->arch, PTTS_FLOW_MATCHING, "c.yaml", &e) == PTTS_E_MODEL);
    ptts_weights_free(w);

    /* names */
    CHECK(ptts_flow_type_from_name("lsd") == PTTS_FLOW_LSD &&
          ptts_flow_type_from_name("flow_matching") == PTTS_FLOW_MATCHING &&
          ptts_flow_type_from_name("drifting") == PTTS_FLOW_DRIFTING &&
          ptts_flow_type_from_name("euler") == -1 && ptts_flow_type_from_name(NULL) == -1);
    CHECK(ptts_flow_k(7) == -1 && ptts_flow_type_of_k(3) == -1);
    return test_summary();
}
