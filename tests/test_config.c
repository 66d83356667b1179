/*
 * test_config.c - the YAML/JSON configuration reader (src/config.c): both fixture manifests
 * (JSON with a top-level "config" mapping), a YAML file in the reference's style, null values,
 * unknown keys, path resolution (relative, absolute, URLs), and the errors: malformed YAML,
 * wrong-typed known keys (with file and line), missing file, non-mapping documents.
 */
// ctest-label: unit
#include <limits.h>

#include "common.h"
#include "config.h"
#include "test.h"

/* realpath() of both sides, so "tiny/../tokenizer/x" equals "tokenizer/x". */
static int same_file(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!a || !b || !realpath(a, ra) || !realpath(b, rb)) return 0;
    return strcmp(ra, rb) == 0;
}

static void test_tiny_manifest(void) {
    ptts_config c;
    ptts_error e = {0};
    int rc = ptts_config_load(&c, fixture_path("tiny/manifest.json"), &e);
    CHECKF(rc == PTTS_OK, "%s", e.msg);
    CHECK(c.weights_path == NULL);
    CHECK(c.weights_path_without_voice_cloning == NULL);
    CHECKF(same_file(c.tokenizer_path, fixture_path("tokenizer/sp_unigram_tiny.model")), "%s",
           c.tokenizer_path ? c.tokenizer_path : "(null)");
    /* Resolved against the manifest's folder, without touching the file system. */
    const char *tp = c.tokenizer_path ? c.tokenizer_path : "";
    const char *dir = fixture_path("tiny");
    CHECK(strncmp(tp, dir, strlen(dir)) == 0);
    CHECK(strstr(tp, "sp_unigram_tiny.model") != NULL);
    CHECK(c.pad_with_spaces == 0);
    CHECK(c.remove_semicolons == 0);
    CHECK(c.recommended_frames_after_eos == -1); /* null */
    CHECK(c.insert_bos_before_voice == 1);
    CHECK(c.d_model == 64);
    CHECK(c.num_heads == 4);
    CHECK(c.num_layers == 2);
    CHECK(c.hidden_scale == 4);
    CHECK(c.max_period == 10000.0f);
    CHECK(c.n_bins == 300);
    CHECK(c.lookup_dim == 64);
    CHECK(c.flow_depth == 2);
    CHECK(c.flow_dim == 32);
    CHECK(c.mimi_inner_dim == 16);
    CHECK(c.mimi_outer_dim == 32);
    CHECK(c.seanet_n_filters == 4);
    CHECK(c.seanet_dimension == 32);
    CHECK(c.seanet_ratios[0] == 6 && c.seanet_ratios[1] == 5 && c.seanet_ratios[2] == 4);
    CHECK(c.codec_d_model == 32);
    CHECK(c.codec_num_heads == 4);
    CHECK(c.codec_num_layers == 2);
    CHECK(c.codec_ffn == 64);
    CHECK(c.codec_context == 250);
    CHECK(c.quantizer_dimension == 16);
    ptts_config_free(&c);
}

static void test_full_manifest(void) {
    ptts_config c;
    ptts_error e = {0};
    int rc = ptts_config_load(&c, fixture_path("full/manifest.json"), &e);
    CHECKF(rc == PTTS_OK, "%s", e.msg);
    CHECK(same_file(c.tokenizer_path, fixture_path("tokenizer/sp_unigram.model")));
    CHECK(c.insert_bos_before_voice == 1);
    CHECK(c.d_model == 1024);
    CHECK(c.num_heads == 16);
    CHECK(c.num_layers == 6);
    CHECK(c.n_bins == 4000);
    CHECK(c.lookup_dim == 1024);
    CHECK(c.flow_depth == 6);
    CHECK(c.flow_dim == 512);
    CHECK(c.mimi_inner_dim == 32);
    CHECK(c.mimi_outer_dim == 512);
    CHECK(c.seanet_n_filters == 64);
    CHECK(c.seanet_dimension == 512);
    CHECK(c.codec_d_model == 512);
    CHECK(c.codec_num_heads == 8);
    CHECK(c.codec_ffn == 2048);
    CHECK(c.quantizer_dimension == 32);
    ptts_config_free(&c);
}

/* In the reference's style: hf:// weights, a relative tokenizer, comments, unknown keys, anchors.
 */
static const char *reference_yaml =
    "# english, 24 layers\n"
    "weights_path: hf://kyutai/pocket-tts/languages/french_24l/model.safetensors@39592ff\n"
    "weights_path_without_voice_cloning: https://huggingface.co/x/resolve/main/m.safetensors\n"
    "model_recommended_frames_after_eos: 8\n"
    "remove_semicolons: true\n"
    "pad_with_spaces_for_short_inputs: no\n"
    "unknown_top: {a: [1, 2, {b: c}]}\n"
    "flow_lm:\n"
    "  dtype: float32\n"
    "  insert_bos_before_voice: false\n"
    "  lookup_table:\n"
    "    tokenizer: sentencepiece\n"
    "    tokenizer_path: languages/french/tokenizer.model\n"
    "    n_bins: 4000\n"
    "    dim: &d 1024\n"
    "  transformer:\n"
    "    d_model: *d\n"
    "    hidden_scale: 4\n"
    "    max_period: 10000.0\n"
    "    num_heads: 16\n"
    "    num_layers: 24\n"
    "  flow:\n"
    "    depth: 6\n"
    "    dim: 512\n"
    "  weights_path: null\n"
    "mimi:\n"
    "  sample_rate: 24000\n"
    "  frame_rate: 12.5\n"
    "  inner_dim: 32\n"
    "  outer_dim: 512\n"
    "  seanet:\n"
    "    n_filters: 64\n"
    "    dimension: 512\n"
    "    ratios: [6, 5, 4]\n"
    "  transformer: ~\n"
    "  quantizer:\n"
    "    dimension: 32\n"
    "    output_dimension: 512\n";

static void test_reference_yaml(void) {
    ptts_config c;
    ptts_error e = {0};
    int rc = ptts_config_load_memory(&c, reference_yaml, strlen(reference_yaml), "ref.yaml",
                                     "/models/conf", &e);
    CHECKF(rc == PTTS_OK, "%s", e.msg);
    CHECK(c.weights_path &&
          !strcmp(c.weights_path,
                  "hf://kyutai/pocket-tts/languages/french_24l/model.safetensors@39592ff"));
    CHECK(c.weights_path_without_voice_cloning &&
          !strcmp(c.weights_path_without_voice_cloning,
                  "https://huggingface.co/x/resolve/main/m.safetensors"));
    CHECK(c.tokenizer_path &&
          !strcmp(c.tokenizer_path, "/models/conf/languages/french/tokenizer.model"));
    CHECK(c.recommended_frames_after_eos == 8);
    CHECK(c.remove_semicolons == 1);
    CHECK(c.pad_with_spaces == 0);
    CHECK(c.insert_bos_before_voice == 0);
    CHECK(c.lookup_dim == 1024);
    CHECK(c.d_model == 1024); /* through the alias */
    CHECK(c.num_layers == 24);
    CHECK(c.max_period == 10000.0f);
    CHECK(c.seanet_ratios[0] == 6 && c.seanet_ratios[2] == 4);
    CHECK(c.codec_d_model == 0); /* mimi.transformer: null */
    CHECK(c.quantizer_dimension == 32);
    ptts_config_free(&c);

    /* No base folder: the relative path is kept as written; absolute paths always are. */
    const char *y = "flow_lm: {lookup_table: {tokenizer_path: rel/t.model}}\n"
                    "weights_path: /abs/w.safetensors\n";
    rc = ptts_config_load_memory(&c, y, strlen(y), "m.yaml", NULL, &e);
    CHECK(rc == PTTS_OK);
    CHECK(c.tokenizer_path && !strcmp(c.tokenizer_path, "rel/t.model"));
    CHECK(c.weights_path && !strcmp(c.weights_path, "/abs/w.safetensors"));
    ptts_config_free(&c);
    rc = ptts_config_load_memory(&c, y, strlen(y), "m.yaml", "base/", &e);
    CHECK(rc == PTTS_OK);
    CHECK(c.tokenizer_path && !strcmp(c.tokenizer_path, "base/rel/t.model"));
    CHECK(c.weights_path && !strcmp(c.weights_path, "/abs/w.safetensors"));
    ptts_config_free(&c);

    /* Defaults: an empty mapping gives "not given" everywhere. */
    rc = ptts_config_load_memory(&c, "{}", 2, "empty.json", NULL, &e);
    CHECK(rc == PTTS_OK);
    CHECK(c.tokenizer_path == NULL && c.weights_path == NULL);
    CHECK(c.recommended_frames_after_eos == -1 && c.insert_bos_before_voice == -1);
    CHECK(c.d_model == 0 && c.max_period == 0.0f && c.seanet_ratios[1] == 0);
    ptts_config_free(&c);

    /* A repeated key: the last one wins (PyYAML). */
    const char *dup = "remove_semicolons: false\nremove_semicolons: true\n";
    CHECK(ptts_config_load_memory(&c, dup, strlen(dup), "dup.yaml", NULL, &e) == PTTS_OK);
    CHECK(c.remove_semicolons == 1);
    ptts_config_free(&c);
}

/* The message names the file and the line (and the key for a type error). */
static void expect_error(const char *yaml, int code, const char *line_tag, const char *key) {
    ptts_config c;
    ptts_error e = {0};
    int rc = ptts_config_load_memory(&c, yaml, strlen(yaml), "bad.yaml", "/x", &e);
    CHECKF(rc == code, "rc %d for:\n%s", rc, yaml);
    CHECK(e.code == code);
    CHECKF(strstr(e.msg, line_tag) != NULL, "message '%s' lacks '%s'", e.msg, line_tag);
    if (key) CHECKF(strstr(e.msg, key) != NULL, "message '%s' lacks '%s'", e.msg, key);
    /* The config is left clean. */
    CHECK(c.tokenizer_path == NULL && c.weights_path == NULL && c.d_model == 0);
    CHECK(c.recommended_frames_after_eos == -1);
    ptts_config_free(&c);
}

static void test_errors(void) {
    /* Malformed YAML. */
    expect_error("a: 1\nb: [1, 2\nc: 3\n", PTTS_E_FORMAT, "bad.yaml:", NULL);
    expect_error("a: 1\n  b: 2\n", PTTS_E_FORMAT, "bad.yaml:2:", NULL);
    expect_error("{\"config\": {\"d\": 1,}", PTTS_E_FORMAT, "bad.yaml:", NULL);
    expect_error("key: \"unterminated\n", PTTS_E_FORMAT, "bad.yaml:", NULL);
    expect_error("a: *nowhere\n", PTTS_E_FORMAT, "bad.yaml:1:", NULL);
    /* Not a mapping. */
    expect_error("", PTTS_E_FORMAT, "bad.yaml", NULL);
    expect_error("- 1\n- 2\n", PTTS_E_FORMAT, "bad.yaml:1", NULL);
    expect_error("just a string\n", PTTS_E_FORMAT, "bad.yaml:1", NULL);
    /* Wrong types, with the line. */
    expect_error("a: 1\nflow_lm:\n  transformer:\n    d_model: big\n", PTTS_E_FORMAT,
                 "bad.yaml:4:", "flow_lm.transformer.d_model");
    expect_error("flow_lm:\n  transformer:\n    d_model: \"64\"\n", PTTS_E_FORMAT,
                 "bad.yaml:3:", "flow_lm.transformer.d_model");
    expect_error("flow_lm:\n  transformer:\n    num_heads: 4.5\n", PTTS_E_FORMAT,
                 "bad.yaml:3:", "num_heads");
    expect_error("remove_semicolons: 1\n", PTTS_E_FORMAT, "bad.yaml:1:", "remove_semicolons");
    expect_error("\npad_with_spaces_for_short_inputs: maybe\n", PTTS_E_FORMAT,
                 "bad.yaml:2:", "pad_with_spaces_for_short_inputs");
    expect_error("model_recommended_frames_after_eos: [8]\n", PTTS_E_FORMAT,
                 "bad.yaml:1:", "model_recommended_frames_after_eos");
    expect_error("flow_lm: 3\n", PTTS_E_FORMAT, "bad.yaml:1:", "flow_lm");
    expect_error("flow_lm:\n  lookup_table:\n    tokenizer_path: {a: b}\n", PTTS_E_FORMAT,
                 "bad.yaml:3:", "flow_lm.lookup_table.tokenizer_path");
    expect_error("mimi:\n  seanet:\n    ratios: [6, 5]\n", PTTS_E_FORMAT,
                 "bad.yaml:3:", "mimi.seanet.ratios");
    expect_error("mimi:\n  seanet:\n    ratios:\n      - 6\n      - x\n      - 4\n", PTTS_E_FORMAT,
                 "bad.yaml:5:", "mimi.seanet.ratios");
    expect_error("flow_lm:\n  transformer:\n    max_period: fast\n", PTTS_E_FORMAT,
                 "bad.yaml:3:", "max_period");
    expect_error("mimi:\n  sample_rate: 24k\n", PTTS_E_FORMAT, "bad.yaml:2:", "mimi.sample_rate");
    expect_error("mimi: {transformer: {context: 99999999999}}\n", PTTS_E_FORMAT,
                 "bad.yaml:1:", "mimi.transformer.context");
    /* Inside the manifest's "config" mapping. */
    expect_error("{\n \"config\": {\n  \"flow_lm\": {\"insert_bos_before_voice\": \"yes\"}}}\n",
                 PTTS_E_FORMAT, "bad.yaml:3:", "flow_lm.insert_bos_before_voice");

    /* Missing file; NULL arguments. */
    ptts_config c;
    ptts_error e = {0};
    CHECK(ptts_config_load(&c, fixture_path("no/such/config.yaml"), &e) == PTTS_E_IO);
    CHECK(strstr(e.msg, "no/such/config.yaml") != NULL);
    CHECK(c.tokenizer_path == NULL);
    ptts_config_free(&c);
    CHECK(ptts_config_load(&c, NULL, &e) == PTTS_E_INVALID);
    CHECK(ptts_config_load_memory(NULL, "a: 1", 4, "x", NULL, &e) == PTTS_E_INVALID);
}

int main(void) {
    test_tiny_manifest();
    test_full_manifest();
    test_reference_yaml();
    test_errors();
    return test_summary();
}
