/*
 * test_config.c - the 3.3 YAML/JSON configuration reader (src/config.c, MODEL.md 10.2): every
 * fixture config*.yaml and both manifests parse to the values they hold; the strict schema
 * (unknown keys at every depth named by their full path, missing required keys, wrong types,
 * flow.type, the flow_lm/mimi weights pair); replace_characters as UTF-8; path resolution
 * (relative, absolute, URL folders with hf:// revisions); hostile documents (deep nesting,
 * alias bombs, huge and binary input) refused quickly; and the packaged config of every
 * language (hub.c) against the text options of tests/fixtures/text_cases.json.
 */
// ctest-label: unit
#include <cjson/cJSON.h>
#include <limits.h>

#include "common.h"
#include "config.h"
#include "hub.h"
#include "test.h"
#include "weights.h"

/* Under AddressSanitizer (the sanitizer stage): a string function checks its whole argument up
 * to the NUL, so a string passed without one is caught whatever the heap holds (fuzz_config
 * found join_path's strstr on its unterminated result; the URL-folder joins below reach it). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "strict_string_checks=1"; }

/* realpath() of both sides, so "tiny/../tokenizer/x" equals "tokenizer/x". */
static int same_file(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!a || !b || !realpath(a, ra) || !realpath(b, rb)) return 0;
    return strcmp(ra, rb) == 0;
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    REQUIRE(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    REQUIRE(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    buf[n] = 0;
    if (len) *len = (size_t)n;
    return buf;
}

/* The values every fixture config shares (MODEL.md 10.2 schema, tiny or full sizes). */
static void check_common(const ptts_config *c, int full) {
    CHECK(c->weights_path == NULL && c->weights_path_without_voice_cloning == NULL);
    CHECK(c->flow_lm_weights_path == NULL && c->mimi_weights_path == NULL);
    CHECK(c->text.remove_semicolons == 0);
    CHECK(c->text.append_terminal_punctuation == 1 && c->text.capitalize_first_letter == 1);
    CHECK(c->text.n_replace == 0);
    CHECK(c->recommended_frames_after_eos == -1);
    CHECK(c->default_temperature == 0.3f);
    CHECK(c->insert_bos_before_voice == 1);
    CHECK(c->flow_lm_dtype && !strcmp(c->flow_lm_dtype, "float32"));
    CHECK(c->flow_depth == (full ? 6 : 2) && c->flow_dim == (full ? 512 : 32));
    CHECK(c->d_model == (full ? 1024 : 64) && c->hidden_scale == 4);
    CHECK(c->max_period == 10000.0f);
    CHECK(c->num_heads == (full ? 16 : 4) && c->num_layers == (full ? 6 : 2));
    CHECK(c->lookup_dim == c->d_model);
    CHECK(c->mimi_dtype && !strcmp(c->mimi_dtype, "float32"));
    CHECK(c->sample_rate == 24000 && c->channels == 1 && c->frame_rate == 12.5f);
    CHECK(c->mimi_inner_dim == (full ? 32 : 16) && c->mimi_outer_dim == (full ? 512 : 32));
    CHECK(c->seanet_dimension == (full ? 512 : 32) && c->seanet_channels == 1);
    CHECK(c->seanet_n_filters == (full ? 64 : 4) && c->seanet_n_residual_layers == 1);
    CHECK(c->n_seanet_ratios == 3 && c->seanet_ratios[0] == 6 && c->seanet_ratios[1] == 5 &&
          c->seanet_ratios[2] == 4);
    CHECK(c->seanet_kernel_size == 7 && c->seanet_residual_kernel_size == 3);
    CHECK(c->seanet_last_kernel_size == 3 && c->seanet_dilation_base == 2);
    CHECK(c->seanet_pad_mode && !strcmp(c->seanet_pad_mode, "constant"));
    CHECK(c->seanet_compress == 2);
    CHECK(c->codec_d_model == (full ? 512 : 32) && c->codec_num_heads == (full ? 8 : 4));
    CHECK(c->codec_num_layers == 2 && c->codec_ffn == (full ? 2048 : 64));
    CHECK(c->codec_layer_scale == 0.01f && c->codec_context == 250);
    CHECK(c->codec_max_period == 10000.0f);
    CHECK(c->codec_input_dimension == c->codec_d_model);
    CHECK(c->n_codec_output_dimensions == 1 && c->codec_output_dimensions[0] == c->codec_d_model);
    CHECK(c->quantizer_dimension == (full ? 32 : 16));
    CHECK(c->quantizer_output_dimension == (full ? 512 : 32));
}

static void load_fixture(ptts_config *c, const char *rel) {
    ptts_error e = {0};
    int rc = ptts_config_load(c, fixture_path(rel), &e);
    CHECKF(rc == PTTS_OK, "%s: %s", rel, e.msg);
}

static void test_fixture_configs(void) {
    static const struct {
        const char *file;
        int full, flow, pad, n_bins;
        const char *kind, *tokenizer;
    } cases[] = {
        {"tiny/config.yaml", 0, PTTS_FLOW_LSD, 0, 300, "sentencepiece", "sp_unigram_tiny.model"},
        {"tiny/config_drifting.yaml", 0, PTTS_FLOW_DRIFTING, 0, 300, "sentencepiece",
         "sp_unigram_tiny.model"},
        {"tiny/config_flow_matching.yaml", 0, PTTS_FLOW_MATCHING, 0, 300, "sentencepiece",
         "sp_unigram_tiny.model"},
        {"tiny/config_json_tokenizer.yaml", 0, PTTS_FLOW_LSD, 0, 300, "tokenizers",
         "sp_unigram_tiny.tokenizer.json"},
        {"tiny/config_pad.yaml", 0, PTTS_FLOW_LSD, 1, 1000, "sentencepiece",
         "sp_unigram_bytefb.model"},
        {"tiny/manifest.json", 0, PTTS_FLOW_LSD, 0, 300, "sentencepiece", "sp_unigram_tiny.model"},
        {"full/config.yaml", 1, PTTS_FLOW_LSD, 0, 4000, "sentencepiece", "sp_unigram.model"},
        {"full/config_json_tokenizer.yaml", 1, PTTS_FLOW_LSD, 0, 4000, "tokenizers",
         "sp_unigram.tokenizer.json"},
        {"full/manifest.json", 1, PTTS_FLOW_LSD, 0, 4000, "sentencepiece", "sp_unigram.model"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ptts_config c;
        load_fixture(&c, cases[i].file);
        check_common(&c, cases[i].full);
        CHECKF(c.flow_type == cases[i].flow, "%s", cases[i].file);
        CHECKF(c.text.pad_with_spaces == cases[i].pad, "%s", cases[i].file);
        CHECKF(c.n_bins == cases[i].n_bins, "%s", cases[i].file);
        CHECKF(c.tokenizer_kind && !strcmp(c.tokenizer_kind, cases[i].kind), "%s", cases[i].file);
        char want[256];
        snprintf(want, sizeof want, "tokenizer/%s", cases[i].tokenizer);
        /* resolved against the config's folder, without touching the file system */
        const char *dir = fixture_path(cases[i].full ? "full" : "tiny");
        CHECKF(c.tokenizer_path && !strncmp(c.tokenizer_path, dir, strlen(dir)) &&
                   same_file(c.tokenizer_path, fixture_path(want)),
               "%s: %s", cases[i].file, c.tokenizer_path ? c.tokenizer_path : "(null)");
        ptts_config_free(&c);
    }
}

/* `s` with the first `from` replaced by `to` (malloc'd). */
static char *replaced(const char *s, const char *from, const char *to) {
    const char *at = strstr(s, from);
    REQUIRE(at);
    size_t a = (size_t)(at - s), fl = strlen(from), tl = strlen(to), n = strlen(s);
    char *out = malloc(n - fl + tl + 1);
    REQUIRE(out);
    memcpy(out, s, a);
    memcpy(out + a, to, tl);
    memcpy(out + a + tl, at + fl, n - a - fl + 1);
    return out;
}

/* The tiny fixture config with the first `from` replaced by `to`. */
static char *tiny_with(const char *from, const char *to) {
    char *y = read_text(fixture_path("tiny/config.yaml"), NULL);
    char *out = replaced(y, from, to);
    free(y);
    return out;
}

/* The message names the file, the line and the key path. */
static void expect_error(const char *yaml, size_t len, const char *tag, const char *what) {
    ptts_config c;
    ptts_error e = {0};
    double t0 = ptts_now();
    int rc = ptts_config_load_memory(&c, yaml, len, "bad.yaml", "/x", &e);
    CHECKF(ptts_now() - t0 < 2.0, "%.1f s for '%s'", ptts_now() - t0, tag);
    CHECKF(rc == PTTS_E_FORMAT && e.code == PTTS_E_FORMAT, "rc %d for '%s'", rc, tag);
    CHECKF(strstr(e.msg, tag) != NULL, "message '%s' lacks '%s'", e.msg, tag);
    if (what) CHECKF(strstr(e.msg, what) != NULL, "message '%s' lacks '%s'", e.msg, what);
    CHECK(c.tokenizer_path == NULL && c.weights_path == NULL && c.d_model == 0);
    ptts_config_free(&c);
}

static void expect_tiny_error(const char *from, const char *to, const char *tag, const char *what) {
    char *y = tiny_with(from, to);
    expect_error(y, strlen(y), tag, what);
    free(y);
}

static void test_strict_schema(void) {
    /* unknown keys, at every depth, by their full path and line */
    expect_tiny_error("    type: lsd\n", "    typ: lsd\n", "bad.yaml:18: flow_lm.flow.typ",
                      "unknown key");
    expect_tiny_error("default_temperature: 0.3\n", "default_temperature: 0.3\ntemperature: 1\n",
                      "bad.yaml:12: temperature", "unknown key");
    expect_tiny_error("    context: 250\n", "    context: 250\n    window: 3\n",
                      "mimi.transformer.window", "unknown key");
    expect_tiny_error("mimi:\n", "lsd_decode_steps: 1\nmimi:\n", "lsd_decode_steps", "unknown key");
    /* missing required keys, named by their path */
    expect_tiny_error("    dimension: 16\n", "", "mimi.quantizer.dimension", "missing");
    expect_tiny_error("  dtype: float32\n  flow:", "  flow:", "flow_lm.dtype", "missing");
    expect_tiny_error("    tokenizer: sentencepiece\n", "", "flow_lm.lookup_table.tokenizer",
                      "missing");
    const char *only_flow = "flow_lm: {dtype: float32}\n";
    expect_error(only_flow, strlen(only_flow), "flow_lm.flow", "missing");
    expect_error("{}", 2, "flow_lm", "missing");
    /* wrong types */
    expect_tiny_error("    d_model: 64\n", "    d_model: big\n",
                      "bad.yaml:20:", "flow_lm.transformer.d_model");
    expect_tiny_error("    d_model: 64\n", "    d_model: \"64\"\n", "flow_lm.transformer.d_model",
                      "quoted");
    expect_tiny_error("    num_heads: 4\n", "    num_heads: 4.5\n", "num_heads", "integer");
    expect_tiny_error("remove_semicolons: false", "remove_semicolons: 1",
                      "bad.yaml:6:", "remove_semicolons");
    expect_tiny_error("model_recommended_frames_after_eos: null",
                      "model_recommended_frames_after_eos: [8]",
                      "bad.yaml:10:", "model_recommended_frames_after_eos");
    expect_tiny_error("    tokenizer_path: ../tokenizer/sp_unigram_tiny.model",
                      "    tokenizer_path: {a: b}", "flow_lm.lookup_table.tokenizer_path",
                      "mapping");
    expect_tiny_error("    tokenizer: sentencepiece", "    tokenizer: null",
                      "flow_lm.lookup_table.tokenizer", "a string");
    expect_tiny_error("    pad_mode: constant", "    pad_mode: 3", "mimi.seanet.pad_mode",
                      "a string");
    expect_tiny_error("    ratios:\n    - 6\n", "    ratios:\n    - x\n", "mimi.seanet.ratios",
                      "integers");
    expect_tiny_error("  frame_rate: 12.5", "  frame_rate: fast", "mimi.frame_rate", "number");
    expect_tiny_error("    context: 250", "    context: 99999999999", "mimi.transformer.context",
                      NULL);
    expect_tiny_error("flow_lm:\n  insert", "flow_lm: 3\nx:\n  insert", "bad.yaml:12:", "flow_lm");
    /* flow.type: the three samplers, nothing else */
    expect_tiny_error("    type: lsd", "    type: euler", "flow_lm.flow.type",
                      "lsd, flow_matching or drifting");
    /* the separate weights files come as a pair */
    expect_tiny_error("  weights_path: null\nmimi:", "  weights_path: a.safetensors\nmimi:",
                      "flow_lm.weights_path and mimi.weights_path", "together");
    /* replace_characters: one character to a string */
    expect_tiny_error("replace_characters: {}", "replace_characters: {ab: x}", "replace_characters",
                      "one character");
    expect_tiny_error("replace_characters: {}", "replace_characters: {a: [x]}",
                      "replace_characters", "a string");
    /* inside the manifest's "config" mapping */
    char *m = read_text(fixture_path("tiny/manifest.json"), NULL);
    char *at = strstr(m, "\"insert_bos_before_voice\": true");
    REQUIRE(at);
    memcpy(at, "\"insert_bos_before_voicX\"", strlen("\"insert_bos_before_voicX\""));
    expect_error(m, strlen(m), "flow_lm.insert_bos_before_voicX", "unknown key");
    free(m);

    /* flow_lm.weights_path and mimi.weights_path given together; relative ones resolved */
    char *y1 = tiny_with("  weights_path: null\nmimi:", "  weights_path: fl.safetensors\nmimi:");
    char *y = replaced(y1, "  weights_path: null\n", "  weights_path: /m.safetensors\n");
    free(y1);
    ptts_config c;
    ptts_error e = {0};
    CHECKF(ptts_config_load_memory(&c, y, strlen(y), "w.yaml", "/cfg", &e) == 0, "%s", e.msg);
    CHECK(c.flow_lm_weights_path && !strcmp(c.flow_lm_weights_path, "/cfg/fl.safetensors"));
    CHECK(c.mimi_weights_path && !strcmp(c.mimi_weights_path, "/m.safetensors"));
    ptts_config_free(&c);
    free(y);
}

static void test_values(void) {
    ptts_config c;
    ptts_error e = {0};
    /* replace_characters in UTF-8, a null inner_dim, a repeated key (the last wins), a number
     * for a float, non-default text flags and temperature, hf:// and https weights */
    char *y0 = tiny_with("replace_characters: {}",
                         "replace_characters: {\"\\\"\": \"\", \"\xe2\x80\x99\": \"'\", "
                         "\":\": \",\", \xc2\xa1: \"\"}");
    char *y1 = replaced(y0, "remove_semicolons: false", "remove_semicolons: true");
    char *y2 = replaced(y1, "  inner_dim: 16", "  inner_dim: ~");
    char *y3 = replaced(y2, "default_temperature: 0.3", "default_temperature: 1");
    char *yy = replaced(y3, "weights_path: null\nweights_path_without",
                        "weights_path: hf://kyutai/pocket-tts/languages/x/model.safetensors@abc\n"
                        "capitalize_first_letter: false\nweights_path_without");
    free(y0);
    free(y1);
    free(y2);
    free(y3);
    /* capitalize_first_letter appears twice now: true later in the file wins */
    CHECKF(ptts_config_load_memory(&c, yy, strlen(yy), "v.yaml", "/models/conf", &e) == 0, "%s",
           e.msg);
    CHECK(c.weights_path &&
          !strcmp(c.weights_path, "hf://kyutai/pocket-tts/languages/x/model.safetensors@abc"));
    CHECK(c.text.capitalize_first_letter == 1);
    CHECK(c.text.remove_semicolons == 1);
    CHECK(c.default_temperature == 1.0f);
    CHECK(c.mimi_inner_dim == 32); /* null: seanet.dimension */
    CHECK(c.tokenizer_path &&
          !strcmp(c.tokenizer_path, "/models/conf/../tokenizer/sp_unigram_tiny.model"));
    CHECKF(c.text.n_replace == 4, "%d", c.text.n_replace);
    if (c.text.n_replace == 4) {
        CHECK(!strcmp(c.text.replace_from[0], "\"") && !strcmp(c.text.replace_to[0], ""));
        CHECK(!strcmp(c.text.replace_from[1], "\xe2\x80\x99") &&
              !strcmp(c.text.replace_to[1], "'"));
        CHECK(!strcmp(c.text.replace_from[2], ":") && !strcmp(c.text.replace_to[2], ","));
        CHECK(!strcmp(c.text.replace_from[3], "\xc2\xa1") && !strcmp(c.text.replace_to[3], ""));
    }
    ptts_config_free(&c);
    CHECK(c.text.n_replace == 0 && c.replace_from == NULL && c.tokenizer_path == NULL);

    /* URL folders: an hf:// revision moves to the end, "../" climbs within the repository */
    static const struct {
        const char *base, *rel, *want;
    } joins[] = {
        {"hf://org/repo/cfg@abc", "tok.json", "hf://org/repo/cfg/tok.json@abc"},
        {"hf://org/repo/a/b@abc", "../t/tok.json", "hf://org/repo/a/t/tok.json@abc"},
        {"hf://org/repo@abc", "../../tok.json", "hf://org/repo/tok.json@abc"},
        {"hf://org/repo/cfg", "./tok.json", "hf://org/repo/cfg/tok.json"},
        {"https://host/x/y", "../tok.json", "https://host/x/tok.json"},
        {"https://host/x", "../../tok.json", "https://host/tok.json"},
        {"/local/dir", "../tok.json", "/local/dir/../tok.json"},
        {"/local/dir", "hf://o/r/t.json@1", "hf://o/r/t.json@1"},
        {"hf://org/repo/cfg@abc", "/abs/t.json", "/abs/t.json"},
    };
    for (size_t i = 0; i < sizeof joins / sizeof joins[0]; i++) {
        char *p = tiny_with("../tokenizer/sp_unigram_tiny.model", joins[i].rel);
        CHECKF(ptts_config_load_memory(&c, p, strlen(p), "j.yaml", joins[i].base, &e) == 0, "%s",
               e.msg);
        CHECKF(c.tokenizer_path && !strcmp(c.tokenizer_path, joins[i].want), "%s + %s = %s",
               joins[i].base, joins[i].rel, c.tokenizer_path ? c.tokenizer_path : "(null)");
        ptts_config_free(&c);
        free(p);
    }
    free(yy);
}

static void test_hostile(void) {
    /* malformed YAML, with the line */
    expect_error("a: 1\nb: [1, 2\nc: 3\n", 18, "bad.yaml:", "malformed");
    expect_error("a: 1\n  b: 2\n", 12, "bad.yaml:2:", "malformed");
    expect_error("a: *nowhere\n", 12, "bad.yaml:1:", NULL);
    expect_error("", 0, "bad.yaml", "empty");
    expect_error("- 1\n- 2\n", 8, "bad.yaml:1", "mapping");
    /* deep nesting: refused by the pre-pass before a tree is built */
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 8);
    memcpy(deep, "a: ", 3);
    memset(deep + 3, '[', depth);
    memset(deep + 3 + depth, ']', depth);
    expect_error(deep, 3 + 2 * depth, "bad.yaml:1:", "nested deeper");
    free(deep);
    /* an alias bomb (each level nine references to the previous one) where a string goes */
    char bomb[2048];
    int n = snprintf(bomb, sizeof bomb, "a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 9; i++)
        n += snprintf(bomb + n, sizeof bomb - (size_t)n,
                      "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
                      i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    expect_error(bomb, (size_t)n, "bad.yaml:1: a0", "unknown key");
    char *t = tiny_with("replace_characters: {}", "replace_characters: {x: *a8}");
    size_t tl = strlen(t), bl = (size_t)n;
    char *tb = malloc(tl + bl + 1);
    memcpy(tb, bomb, bl);
    memcpy(tb + bl, t, tl + 1);
    expect_error(tb, tl + bl, "bad.yaml:1: a0", "unknown key");
    free(tb);
    free(t);
    /* too large, binary, not UTF-8 (a UTF-16 byte-order mark is not followed) */
    size_t big = (size_t)300 << 10;
    char *huge = malloc(big);
    memset(huge, '#', big);
    expect_error(huge, big, "bad.yaml", "too large");
    free(huge);
    const char bin[] = "\x7f"
                       "ELF\x02\x01\x01\x00\x00\x00\xff\xfe\x00\x01";
    expect_error(bin, sizeof bin - 1, "bad.yaml", NULL);
    const char u16[] = "\xff\xfe"
                       "a\0:\0 \0"
                       "1\0";
    expect_error(u16, sizeof u16 - 1, "bad.yaml", NULL);
    const char badutf8[] = "a: \"\xc3\x28\"\n";
    expect_error(badutf8, sizeof badutf8 - 1, "bad.yaml", NULL);

    ptts_config c;
    ptts_error e = {0};
    CHECK(ptts_config_load(&c, fixture_path("no/such/config.yaml"), &e) == PTTS_E_IO);
    CHECK(strstr(e.msg, "no/such/config.yaml") != NULL);
    ptts_config_free(&c);
    CHECK(ptts_config_load(&c, NULL, &e) == PTTS_E_INVALID);
    CHECK(ptts_config_load_memory(NULL, "a: 1", 4, "x", NULL, &e) == PTTS_E_INVALID);
}

/* Each language's packaged config: the schema accepts it, and its text options are those of
 * the 3.3 YAMLs in text_cases.json (language_settings); the rest per MODEL.md 10.4. */
static void test_packaged(void) {
    char *json = read_text(fixture_path("text_cases.json"), NULL);
    cJSON *root = cJSON_Parse(json);
    free(json);
    REQUIRE(root);
    cJSON *settings = cJSON_GetObjectItem(root, "language_settings");
    REQUIRE(settings);
    int compared = 0;
    for (int i = 0; i < ptts_language_count(); i++) {
        const ptts_language *l = ptts_language_at(i);
        ptts_config c;
        ptts_error e = {0};
        CHECKF(ptts_language_config(l, &c, &e) == 0, "%s: %s", l->name, e.msg);
        CHECK(c.num_layers == l->layers && c.insert_bos_before_voice == l->insert_bos_before_voice);
        CHECK(c.mimi_inner_dim == l->inner_dim && c.n_bins == 4000 && c.d_model == 1024);
        CHECK(c.flow_type ==
              (!strcmp(l->sampler, "drifting") ? PTTS_FLOW_DRIFTING : PTTS_FLOW_LSD));
        CHECK(c.default_temperature == 0.3f && c.recommended_frames_after_eos == -1);
        CHECK(c.tokenizer_kind && !strcmp(c.tokenizer_kind, "tokenizers"));
        CHECK(c.text.pad_with_spaces == l->pad_with_spaces);
        CHECK(c.text.remove_semicolons == l->remove_semicolons);
        if (l->tokenizer_revision) {
            char want[256];
            snprintf(want, sizeof want, "hf://%s/%s@%s", PTTS_OPEN_REPO, l->tokenizer_path,
                     l->tokenizer_revision);
            CHECKF(c.tokenizer_path && !strcmp(c.tokenizer_path, want), "%s", l->name);
        } else {
            CHECK(c.tokenizer_path == NULL);
        }
        CHECK((c.weights_path != NULL) == (l->gated_revision != NULL));
        CHECK((c.weights_path_without_voice_cloning != NULL) == (l->open_revision != NULL));
        /* the base name of a family (english_2026-09_24l -> english) has its 3.3 settings */
        cJSON *s = cJSON_GetObjectItem(settings, l->name);
        char family[32];
        snprintf(family, sizeof family, "%s", l->name);
        if (!s && strchr(family, '_') && strncmp(family, "english_2026-01", 15)) {
            *strchr(family, '_') = 0;
            s = cJSON_GetObjectItem(settings, family);
        }
        if (s) {
            compared++;
            CHECKF(c.text.pad_with_spaces ==
                       cJSON_IsTrue(cJSON_GetObjectItem(s, "pad_with_spaces_for_short_inputs")),
                   "%s", l->name);
            CHECKF(c.text.remove_semicolons ==
                       cJSON_IsTrue(cJSON_GetObjectItem(s, "remove_semicolons")),
                   "%s", l->name);
            CHECK(c.text.append_terminal_punctuation ==
                  cJSON_IsTrue(cJSON_GetObjectItem(s, "append_terminal_punctuation")));
            CHECK(c.text.capitalize_first_letter ==
                  cJSON_IsTrue(cJSON_GetObjectItem(s, "capitalize_first_letter")));
            cJSON *rep = cJSON_GetObjectItem(s, "replace_characters");
            CHECKF(cJSON_GetArraySize(rep) == c.text.n_replace, "%s: %d replacements", l->name,
                   c.text.n_replace);
            int k = 0;
            for (cJSON *r = rep ? rep->child : NULL; r && k < c.text.n_replace; r = r->next, k++)
                CHECKF(!strcmp(r->string, c.text.replace_from[k]) &&
                           !strcmp(r->valuestring, c.text.replace_to[k]),
                       "%s: replacement %d", l->name, k);
        }
        ptts_config_free(&c);
    }
    CHECKF(compared == 17, "%d languages compared", compared); /* all but portuguese* */
    cJSON_Delete(root);
}

int main(void) {
    test_fixture_configs();
    test_strict_schema();
    test_values();
    test_hostile();
    test_packaged();
    return test_summary();
}
