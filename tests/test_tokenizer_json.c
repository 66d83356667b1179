/*
 * test_tokenizer_json.c - the tokenizer.json backend (src/tokenizer_json.c, MODEL.md 9.3).
 *
 *  1. tokenizer/json_cases.json for sp_unigram_bytefb.tokenizer.json (the shipped structure),
 *     sp_unigram and sp_unigram_tiny (the converter's Precompiled + Replace + Strip + Prepend
 *     normalizer) and sp_unigram_identity (an empty normalizer Sequence and no byte pieces: the
 *     converter's negative case, which the library would still load): ids and decoded text of all
 *     30 strings exactly, the .model's ids wherever the fixture says same_ids_as_model; the cases
 *     where the two backends differ (the tie-breaks among them) are printed.
 *  2. sp_bpe_bytefb.tokenizer.json (a BPE model) is refused with PTTS_E_UNSUPPORTED naming it.
 *  3. Picking the backend: by the config's kind, by the ".json" suffix, with an "@revision".
 *  4. Hostile files: every truncation of a small file, flipped bytes, and hand-edited trees
 *     (wrong types, huge vocabularies, bad byte pieces, no unk_id, duplicates, mismatched added
 *     tokens, normalizer steps out of order or unknown, another Replace pattern, bad base64, short
 *     or oversized charsmaps, sp_unigram_tiny's charsmap cut in half): a clear PTTS_E_* error
 *     naming the problem, never a crash.
 *  5. A hand-built charsmap ("\t" -> " ") through each normalizer step; a charsmap whose double
 *     array points outside itself fails the encode cleanly.
 *  6. Random byte strings encode and decode; a 2 MB text encodes in linear time.
 */
// ctest-label: unit
// ctest-timeout: 300
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "test.h"
#include "tokenizer.h"

#define SHIPPED "tokenizer/sp_unigram_bytefb.tokenizer.json"

static char *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = 0;
        *size = (size_t)n;
    }
    return b;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static int ids_equal(const int *a, int na, const cJSON *want) {
    if (na != cJSON_GetArraySize(want)) return 0;
    for (int i = 0; i < na; i++)
        if (a[i] != cJSON_GetArrayItem(want, i)->valueint) return 0;
    return 1;
}

static void test_cases(const ptts_tokenizer *tj, const ptts_tokenizer *tm, const cJSON *entry) {
    CHECK(ptts_tokenizer_vocab_size(tj) == cJSON_GetObjectItem(entry, "vocab_size")->valueint);
    CHECK(ptts_tokenizer_vocab_size(tj) == ptts_tokenizer_vocab_size(tm));
    const cJSON *c;
    int count = 0, same = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(entry, "cases")) {
        const char *text = cJSON_GetObjectItem(c, "text")->valuestring;
        const cJSON *want = cJSON_GetObjectItem(c, "ids");
        int *ids = NULL, n = 0, *mids = NULL, mn = 0;
        ptts_error e = {0};
        CHECKF(ptts_tokenizer_encode(tj, text, strlen(text), &ids, &n, &e) == PTTS_OK, "%s", e.msg);
        CHECKF(ids_equal(ids, n, want), "json ids of '%.60s' (%d ids)", text, n);
        REQUIRE(ptts_tokenizer_encode(tm, text, strlen(text), &mids, &mn, &e) == PTTS_OK);
        int as_model = n == mn && (n == 0 || memcmp(ids, mids, (size_t)n * sizeof *ids) == 0);
        if (cJSON_IsTrue(cJSON_GetObjectItem(c, "same_ids_as_model"))) {
            CHECKF(as_model, "'%.60s': the .model's ids differ", text);
            same++;
        } else {
            printf("backends differ (as the fixture says) on '%.60s'\n", text);
        }
        char *dec = NULL;
        CHECK(ptts_tokenizer_decode(tj, ids, n, &dec, &e) == PTTS_OK);
        const char *wd = cJSON_GetObjectItem(c, "decoded")->valuestring;
        CHECKF(dec && strcmp(dec, wd) == 0, "decode of '%.60s': '%s' want '%s'", text, dec, wd);
        /* The pieces are the vocabulary strings of the ids. */
        char **pieces = NULL;
        int *pids = NULL, pn = 0;
        CHECK(ptts_tokenizer_encode_pieces(tj, text, strlen(text), &pids, &pieces, &pn, &e) ==
              PTTS_OK);
        CHECK(pn == n);
        for (int i = 0; i < pn && i < n; i++)
            CHECK(strcmp(pieces[i], ptts_tokenizer_piece(tj, ids[i])) == 0);
        CHECK(pieces && pieces[pn] == NULL);
        free(pieces);
        free(pids);
        free(dec);
        free(ids);
        free(mids);
        count++;
    }
    CHECK(count == 30);
    CHECK(count - same == cJSON_GetObjectItem(entry, "n_ids_differ")->valueint);
}

/* The fixture file outside the supported subset. */
static void test_unsupported(void) {
    ptts_tokenizer *t = NULL;
    ptts_error e = {0};
    CHECK(ptts_tokenizer_load(&t, fixture_path("tokenizer/sp_bpe_bytefb.tokenizer.json"), &e) ==
          PTTS_E_UNSUPPORTED);
    CHECKF(strstr(e.msg, "model type BPE is not supported") != NULL, "'%s'", e.msg);
    CHECK(t == NULL);
}

/* A literal "<s>" is one id only with the JSON backend: tells which backend was loaded. */
static int is_json(const ptts_tokenizer *t) {
    int *ids = NULL, n = 0;
    REQUIRE(ptts_tokenizer_encode(t, "<s>", 3, &ids, &n, NULL) == PTTS_OK);
    int r = n == 1 && ids[0] == 1;
    free(ids);
    return r;
}

static void test_pick(const char *json, size_t size) {
    ptts_tokenizer *t = NULL;
    ptts_error e = {0};
    REQUIRE(ptts_tokenizer_load(&t, fixture_path(SHIPPED), &e) == PTTS_OK);
    CHECK(is_json(t));
    ptts_tokenizer_free(t);
    REQUIRE(ptts_tokenizer_load_kind(&t, fixture_path("tokenizer/sp_unigram_bytefb.model"),
                                     "sentencepiece", &e) == PTTS_OK);
    CHECK(!is_json(t));
    ptts_tokenizer_free(t);
    /* The kind wins over the suffix: a .model read as JSON is not JSON. */
    CHECK(ptts_tokenizer_load_kind(&t, fixture_path("tokenizer/sp_unigram_bytefb.model"),
                                   "tokenizers", &e) == PTTS_E_FORMAT);
    CHECK(strstr(e.msg, "not valid JSON") != NULL);
    /* "@revision" is removed before the suffix test; a file without a .json name needs the kind. */
    static const char *names[] = {"pick.tokenizer.json@e7205b6e", "pick_tokenizer_noext"};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(names[k], "wb");
        REQUIRE(f && fwrite(json, 1, size, f) == size);
        fclose(f);
    }
    REQUIRE(ptts_tokenizer_load(&t, names[0], &e) == PTTS_OK);
    CHECK(is_json(t));
    ptts_tokenizer_free(t);
    CHECK(ptts_tokenizer_load(&t, names[1], &e) == PTTS_E_FORMAT); /* read as a .model */
    REQUIRE(ptts_tokenizer_load_kind(&t, names[1], "json", &e) == PTTS_OK);
    CHECK(is_json(t));
    ptts_tokenizer_free(t);
    remove(names[0]);
    remove(names[1]);
}

static void exercise(const ptts_tokenizer *t) {
    static const char *texts[] = {"Hello, world! <s></s><unk>", "\xff\xfe\x80 a\xe2\x96\x81", ""};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int *ids = NULL, n = 0;
        if (ptts_tokenizer_encode(t, texts[i], strlen(texts[i]), &ids, &n, NULL) == PTTS_OK) {
            char *s = NULL;
            CHECK(ptts_tokenizer_decode(t, ids, n, &s, NULL) == PTTS_OK);
            free(s);
        }
        free(ids);
    }
}

/* Loads a tree printed back to JSON; returns the error code (a success is exercised). */
static int load_tree(cJSON *root, ptts_error *e) {
    char *s = cJSON_PrintUnformatted(root);
    REQUIRE(s);
    ptts_tokenizer *t = NULL;
    int rc = ptts_tokenizer_load_json_memory(&t, s, strlen(s), "edited.json", e);
    if (rc == PTTS_OK) exercise(t);
    CHECK((rc == PTTS_OK) == (t != NULL));
    ptts_tokenizer_free(t);
    free(s);
    return rc;
}

static cJSON *model_of(cJSON *root) { return cJSON_GetObjectItem(root, "model"); }
static cJSON *vocab_of(cJSON *root) { return cJSON_GetObjectItem(model_of(root), "vocab"); }

/* One edit of the shipped tree and the error it must give. */
typedef void (*edit_fn)(cJSON *root);
static void e_bpe(cJSON *r) {
    cJSON_ReplaceItemInObject(model_of(r), "type", cJSON_CreateString("BPE"));
}
static void e_no_unk(cJSON *r) { cJSON_DeleteItemFromObject(model_of(r), "unk_id"); }
static void e_unk_range(cJSON *r) {
    cJSON_ReplaceItemInObject(model_of(r), "unk_id", cJSON_CreateNumber(1000));
}
static void e_unk_type(cJSON *r) {
    cJSON_ReplaceItemInObject(model_of(r), "unk_id", cJSON_CreateString("0"));
}
static void e_no_fallback(cJSON *r) {
    cJSON_ReplaceItemInObject(model_of(r), "byte_fallback", cJSON_CreateString("yes"));
}
static void e_vocab_type(cJSON *r) {
    cJSON_ReplaceItemInObject(model_of(r), "vocab", cJSON_CreateObject());
}
static void e_entry_type(cJSON *r) {
    cJSON_ReplaceItemInArray(vocab_of(r), 5, cJSON_CreateString("x"));
}
static void e_score_type(cJSON *r) {
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(vocab_of(r), 7), 1, cJSON_CreateString("-1"));
}
static void e_duplicate(cJSON *r) {
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(vocab_of(r), 300), 0, cJSON_CreateString("<s>"));
}
static void e_bad_byte(cJSON *r) {
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(vocab_of(r), 300), 0, cJSON_CreateString("<0xZZ>"));
}
static void e_missing_byte(cJSON *r) {
    /* <0x41> (id 3 + 0x41 = 68 here) renamed: byte fallback has no piece for 'A'. */
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(vocab_of(r), 68), 0, cJSON_CreateString("zzq"));
}
static void e_empty_piece(cJSON *r) {
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(vocab_of(r), 300), 0, cJSON_CreateString(""));
}
static void e_post(cJSON *r) {
    cJSON_ReplaceItemInObject(r, "post_processor", cJSON_CreateObject());
}
static void e_added_id(cJSON *r) {
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "added_tokens"), 1);
    cJSON_ReplaceItemInObject(a, "id", cJSON_CreateNumber(5));
}
static void e_added_lstrip(cJSON *r) {
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "added_tokens"), 0);
    cJSON_ReplaceItemInObject(a, "lstrip", cJSON_CreateTrue());
}
static void e_decoder(cJSON *r) {
    cJSON *d = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "decoder"), "decoders");
    cJSON_DeleteItemFromArray(d, 2);
}
static void e_pretok(cJSON *r) {
    cJSON *p = cJSON_GetObjectItem(r, "pre_tokenizer");
    cJSON_ReplaceItemInObject(p, "prepend_scheme", cJSON_CreateString("first"));
}
static void e_normalizer(cJSON *r) {
    cJSON_ReplaceItemInObject(r, "normalizer", cJSON_CreateNull());
}
static void e_root_array(cJSON *r) { (void)r; }

/* Normalizer edits: the shipped tree's normalizer is Sequence[Prepend("\u2581")]. */
static void add_step(cJSON *r, int at, const char *step) {
    cJSON *list = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "normalizer"), "normalizers");
    cJSON *o = cJSON_Parse(step);
    REQUIRE(list && o);
    cJSON_InsertItemInArray(list, at, o);
}
static void e_replace_regex(cJSON *r) {
    add_step(r, 0, "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\s+\"},\"content\":\" \"}");
}
static void e_replace_string(cJSON *r) {
    add_step(r, 0, "{\"type\":\"Replace\",\"pattern\":{\"String\":\"  \"},\"content\":\" \"}");
}
static void e_replace_content(cJSON *r) {
    add_step(r, 0, "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" {2,}\"},\"content\":\"\"}");
}
static void e_nfkc(cJSON *r) { add_step(r, 0, "{\"type\":\"NFKC\"}"); }
static void e_order(cJSON *r) {
    add_step(r, 1, "{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true}");
}
static void e_twice(cJSON *r) { add_step(r, 1, "{\"type\":\"Prepend\",\"prepend\":\"\u2581\"}"); }
static void e_strip_type(cJSON *r) {
    add_step(r, 0, "{\"type\":\"Strip\",\"strip_left\":\"yes\",\"strip_right\":true}");
}
static void e_prepend_other(cJSON *r) {
    add_step(r, 0, "{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true}");
    cJSON *list = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "normalizer"), "normalizers");
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(list, 1), "prepend", cJSON_CreateString("_"));
}
static void e_no_list(cJSON *r) {
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(r, "normalizer"), "normalizers");
}
static void precompiled(cJSON *r, const char *b64) {
    char step[256];
    snprintf(step, sizeof step, "{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"%s\"}", b64);
    add_step(r, 0, step);
}
static void e_b64_char(cJSON *r) { precompiled(r, "QUF!QUFB"); }
static void e_b64_len(cJSON *r) { precompiled(r, "QUFBQU"); }
static void e_b64_pad(cJSON *r) { precompiled(r, "QQ=AQUFB"); }
static void e_b64_empty(cJSON *r) { precompiled(r, ""); }
static void e_map_short(cJSON *r) { precompiled(r, "QUFB"); }        /* 3 bytes */
static void e_map_size(cJSON *r) { precompiled(r, "////fwAAAAA="); } /* trie 2^31 bytes */
static void e_map_type(cJSON *r) {
    add_step(r, 0, "{\"type\":\"Precompiled\",\"precompiled_charsmap\":5}");
}

static void test_hostile_trees(const char *json) {
    static const struct {
        edit_fn f;
        int code;
        const char *msg;
    } edits[] = {
        {e_bpe, PTTS_E_UNSUPPORTED, "model type BPE"},
        {e_no_unk, PTTS_E_FORMAT, "model.unk_id is missing"},
        {e_unk_range, PTTS_E_FORMAT, "model.unk_id is not an index"},
        {e_unk_type, PTTS_E_FORMAT, "model.unk_id is not an index"},
        {e_no_fallback, PTTS_E_FORMAT, "byte_fallback must be true or false"},
        {e_vocab_type, PTTS_E_FORMAT, "model.vocab is not a non-empty list"},
        {e_entry_type, PTTS_E_FORMAT, "[piece, finite score] pairs"},
        {e_score_type, PTTS_E_FORMAT, "[piece, finite score] pairs"},
        {e_duplicate, PTTS_E_FORMAT, "model.vocab[300] (\"<s>\") is defined twice"},
        {e_bad_byte, PTTS_E_FORMAT, "is not a valid byte piece"},
        {e_missing_byte, PTTS_OK, ""}, /* its spans become unk_id: test_normalizer_steps */
        {e_empty_piece, PTTS_E_FORMAT, "model.vocab[300] is empty"},
        {e_post, PTTS_E_UNSUPPORTED, "post_processor is not supported"},
        {e_added_id, PTTS_E_FORMAT, "added_tokens[1]: id 5 is not the vocabulary index"},
        {e_added_lstrip, PTTS_E_UNSUPPORTED, "added_tokens[0]: lstrip must be false"},
        {e_decoder, PTTS_E_UNSUPPORTED, "decoder Sequence is not supported"},
        {e_pretok, PTTS_E_UNSUPPORTED, "pre_tokenizer Metaspace is not supported"},
        {e_normalizer, PTTS_E_UNSUPPORTED, "normalizer (no type) is not supported"},
        {e_replace_regex, PTTS_E_UNSUPPORTED, "Replace of Regex \"\\s+\" is not supported"},
        {e_replace_string, PTTS_E_UNSUPPORTED, "Replace of String \"  \" is not supported"},
        {e_replace_content, PTTS_E_UNSUPPORTED, "Replace of Regex \" {2,}\" is not supported"},
        {e_nfkc, PTTS_E_UNSUPPORTED, "normalizer Sequence with NFKC is not supported"},
        {e_order, PTTS_E_UNSUPPORTED, "Sequence with Strip after Prepend is not supported"},
        {e_twice, PTTS_E_UNSUPPORTED, "Sequence with Prepend after Prepend is not supported"},
        {e_strip_type, PTTS_E_FORMAT, "Strip needs booleans strip_left and strip_right"},
        {e_prepend_other, PTTS_E_UNSUPPORTED, "normalizer Prepend is not supported"},
        {e_no_list, PTTS_E_FORMAT, "normalizer Sequence without a normalizers list"},
        {e_b64_char, PTTS_E_FORMAT, "precompiled_charsmap is not base64"},
        {e_b64_len, PTTS_E_FORMAT, "precompiled_charsmap is not base64"},
        {e_b64_pad, PTTS_E_FORMAT, "precompiled_charsmap is not base64"},
        {e_b64_empty, PTTS_E_FORMAT, "precompiled_charsmap is not base64"},
        {e_map_short, PTTS_E_FORMAT, "precompiled_charsmap is broken"},
        {e_map_size, PTTS_E_FORMAT, "precompiled_charsmap trie size 2147483647 does not fit"},
        {e_map_type, PTTS_E_FORMAT, "Precompiled needs a string precompiled_charsmap"},
        {e_root_array, PTTS_OK, ""}, /* the unedited tree loads */
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        cJSON *root = cJSON_Parse(json);
        REQUIRE(root);
        edits[i].f(root);
        ptts_error e = {0};
        int rc = load_tree(root, &e);
        CHECKF(rc == edits[i].code, "edit %zu: rc %d (%s)", i, rc, e.msg);
        CHECKF(strstr(e.msg, edits[i].msg) != NULL, "edit %zu: '%s'", i, e.msg);
        cJSON_Delete(root);
    }
    /* Not an object; a huge vocabulary (bounded before anything is allocated for it). */
    ptts_tokenizer *t = NULL;
    ptts_error e = {0};
    CHECK(ptts_tokenizer_load_json_memory(&t, "[1,2]", 5, "a.json", &e) == PTTS_E_FORMAT);
    CHECK(strstr(e.msg, "not a tokenizer.json object") != NULL);
    /* 2^18 + 1 extra pieces spliced into the text of the vocabulary list. */
    const char *at = strstr(json, "\"vocab\"");
    REQUIRE(at && strchr(at, '['));
    size_t head = (size_t)(strchr(at, '[') - json) + 1, extra = ((size_t)1 << 18) + 1,
           rest = strlen(json) - head;
    char *big = malloc(head + extra * 16 + rest + 1), *w = big;
    REQUIRE(big);
    memcpy(w, json, head);
    w += head;
    for (size_t i = 0; i < extra; i++)
        w += sprintf(w, "[\"q%zu\",-20],", i);
    memcpy(w, json + head, rest + 1);
    CHECK(ptts_tokenizer_load_json_memory(&t, big, strlen(big), "big.json", &e) == PTTS_E_FORMAT);
    CHECKF(strstr(e.msg, "(at most 262144)") != NULL, "%s", e.msg);
    CHECK(t == NULL);
    free(big);
}

/* The shipped tree with its normalizer replaced by Sequence[steps] (a JSON list's text), or with
 * the byte piece of `drop_byte` renamed (-1: none). */
static ptts_tokenizer *edited(const char *json, const char *steps, int drop_byte) {
    cJSON *root = cJSON_Parse(json), *list = cJSON_Parse(steps);
    REQUIRE(root && list);
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "type", "Sequence");
    cJSON_AddItemToObject(n, "normalizers", list);
    cJSON_ReplaceItemInObject(root, "normalizer", n);
    if (drop_byte >= 0)
        cJSON_ReplaceItemInArray(cJSON_GetArrayItem(vocab_of(root), 3 + drop_byte), 0,
                                 cJSON_CreateString("zzq"));
    char *s = cJSON_PrintUnformatted(root);
    REQUIRE(s);
    ptts_tokenizer *t = NULL;
    ptts_error e = {0};
    CHECKF(ptts_tokenizer_load_json_memory(&t, s, strlen(s), "steps.json", &e) == PTTS_OK, "%s",
           e.msg);
    free(s);
    cJSON_Delete(root);
    return t;
}

/* ids(a, text_a) == ids(b, text_b). */
static int same_ids(const ptts_tokenizer *a, const char *ta, const ptts_tokenizer *b,
                    const char *tb) {
    int *ia = NULL, *ib = NULL, na = 0, nb = 0;
    if (!a || !b || ptts_tokenizer_encode(a, ta, strlen(ta), &ia, &na, NULL) ||
        ptts_tokenizer_encode(b, tb, strlen(tb), &ib, &nb, NULL))
        return 0;
    int r = na == nb && (na == 0 || memcmp(ia, ib, (size_t)na * sizeof *ia) == 0);
    free(ia);
    free(ib);
    return r;
}

static void b64(const uint8_t *d, size_t n, char *out) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
                     (i + 2 < n ? d[i + 2] : 0);
        *out++ = a[v >> 18];
        *out++ = a[v >> 12 & 63];
        *out++ = i + 1 < n ? a[v >> 6 & 63] : '=';
        *out++ = i + 2 < n ? a[v & 63] : '=';
    }
    *out = 0;
}

static void put32(uint8_t *p, uint32_t v) {
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> 8 * k);
}

/* A darts-clone double array of 512 units with the one key "\t" (value 0) and the pool " ":
 * root offset 16, the '\t' unit at 16 ^ 9 with a leaf at (16 ^ 9) ^ 256. `broken` gives a
 * one-unit array that every byte but NUL walks out of. Returns the JSON Precompiled step. */
static char *tab_charsmap(int broken) {
    enum { UNITS = 512 };
    static uint8_t blob[4 + 4 * UNITS + 2];
    memset(blob, 0, sizeof blob);
    uint32_t trie = broken ? 4 : 4 * UNITS;
    put32(blob, trie);
    if (!broken) {
        put32(blob + 4, 16u << 10);
        put32(blob + 4 + 4 * (16 ^ 9), 9u | 1u << 8 | 256u << 10);
        put32(blob + 4 + 4 * ((16 ^ 9) ^ 256), 0x80000000u);
    }
    blob[4 + trie] = ' ';
    size_t n = 6 + trie;
    char *step = malloc(4 * (n + 2) / 3 + 128);
    REQUIRE(step);
    int h = sprintf(step, "{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"");
    b64(blob, n, step + h);
    strcat(step, "\"}");
    return step;
}

/* Each normalizer step against the shipped tokenizer (plain Prepend) on the text that step
 * should produce. */
static void test_normalizer_steps(const char *json, const ptts_tokenizer *shipped) {
    static const char *replace = "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" {2,}\"},"
                                 "\"content\":\" \"}";
    static const char *prepend = "{\"type\":\"Prepend\",\"prepend\":\"\u2581\"}";
    char steps[16384];
    char *map = tab_charsmap(0);
    snprintf(steps, sizeof steps,
             "[%s,%s,{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true},%s]", map,
             replace, prepend);
    ptts_tokenizer *t = edited(json, steps, -1);
    CHECK(same_ids(t, "a\tb", shipped, "a b"));
    CHECK(same_ids(t, " \t a  \t b\t\xe3\x80\x80", shipped, "a b")); /* U+3000 is stripped too */
    CHECK(same_ids(t, "a<s>\t b", shipped, "a<s>b"));                /* per segment */
    CHECK(same_ids(t, "\t \t", shipped, ""));
    ptts_tokenizer_free(t);
    /* Strip on one side only, without Replace. */
    snprintf(steps, sizeof steps,
             "[{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":false},%s]", prepend);
    t = edited(json, steps, -1);
    CHECK(same_ids(t, "  a  b  ", shipped, "a  b  "));
    ptts_tokenizer_free(t);
    snprintf(steps, sizeof steps, "[%s,%s]", replace, prepend);
    t = edited(json, steps, -1);
    CHECK(same_ids(t, "  a   b  ", shipped, " a b "));
    CHECK(same_ids(t, "a\t\tb", shipped, "a\t\tb")); /* only U+0020 runs collapse */
    ptts_tokenizer_free(t);
    /* No Prepend: Metaspace alone prepends U+2581 unless the text starts with one. */
    t = edited(json, "[]", -1);
    CHECK(same_ids(t, "a b", shipped, "a b"));
    CHECK(same_ids(t, " a", shipped, "a"));
    CHECK(same_ids(t, "\u2581a", shipped, "a"));
    CHECK(!same_ids(t, "  a", shipped, "a"));
    ptts_tokenizer_free(t);
    /* A span with a byte that has no byte piece becomes unk_id. */
    t = edited(json, "[]", 0xE6);
    int *ids = NULL, n = 0, *sid = NULL, sn = 0;
    REQUIRE(t && ptts_tokenizer_encode(t, "\xe6\x97\xa5", 3, &ids, &n, NULL) == PTTS_OK);
    REQUIRE(ptts_tokenizer_encode(shipped, "\xe6\x97\xa5", 3, &sid, &sn, NULL) == PTTS_OK);
    CHECKF(sn == 4 && n == 2 && ids[0] == sid[0] && ids[1] == 0, "%d ids, %d shipped", n, sn);
    free(ids);
    free(sid);
    ptts_tokenizer_free(t);
    free(map);
    /* A charsmap that walks outside its double array loads (its size fits) but encodes to an
     * error, never a read out of bounds. */
    map = tab_charsmap(1);
    snprintf(steps, sizeof steps, "[%s,%s]", map, prepend);
    t = edited(json, steps, -1);
    ptts_error e = {0};
    ids = NULL;
    CHECK(t && ptts_tokenizer_encode(t, "a", 1, &ids, &n, &e) == PTTS_E_FORMAT);
    CHECKF(strstr(e.msg, "charsmap is malformed") != NULL, "'%s'", e.msg);
    CHECK(ids == NULL);
    ptts_tokenizer_free(t);
    free(map);
}

/* sp_unigram_tiny's real charsmap cut in half (its trie no longer fits), and a charsmap that
 * makes the file larger than the backend reads (refused before parsing). */
static void test_charsmap_limits(const char *json) {
    size_t tn = 0;
    char *tiny = read_all(fixture_path("tokenizer/sp_unigram_tiny.tokenizer.json"), &tn);
    REQUIRE(tiny);
    cJSON *root = cJSON_Parse(tiny);
    REQUIRE(root);
    cJSON *step = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "normalizer"), "normalizers"), 0);
    const cJSON *map = cJSON_GetObjectItem(step, "precompiled_charsmap");
    REQUIRE(cJSON_IsString(map));
    size_t cut = strlen(map->valuestring) / 2 & ~(size_t)3;
    char *half = malloc(cut + 1);
    REQUIRE(half);
    memcpy(half, map->valuestring, cut);
    half[cut] = 0;
    cJSON_ReplaceItemInObject(step, "precompiled_charsmap", cJSON_CreateString(half));
    ptts_error e = {0};
    CHECK(load_tree(root, &e) == PTTS_E_FORMAT);
    CHECKF(strstr(e.msg, "precompiled_charsmap trie size") && strstr(e.msg, "does not fit"), "'%s'",
           e.msg);
    cJSON_Delete(root);
    free(half);
    free(tiny);
    root = cJSON_Parse(json);
    REQUIRE(root);
    size_t n = (size_t)17 << 20;
    char *huge = malloc(n + 1);
    REQUIRE(huge);
    memset(huge, 'A', n);
    huge[n] = 0;
    step = cJSON_CreateObject();
    cJSON_AddStringToObject(step, "type", "Precompiled");
    cJSON_AddStringToObject(step, "precompiled_charsmap", huge);
    cJSON_InsertItemInArray(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "normalizer"), "normalizers"), 0, step);
    e.msg[0] = 0;
    CHECK(load_tree(root, &e) == PTTS_E_FORMAT);
    CHECKF(strstr(e.msg, "tokenizer.json larger than") != NULL, "'%s'", e.msg);
    cJSON_Delete(root);
    free(huge);
}

/* Truncations and flipped bytes of the shipped file: an error or a working tokenizer. */
static void test_hostile_bytes(const char *json, size_t size) {
    int loaded = 0, refused = 0;
    for (size_t cut = 0; cut < size; cut += 1 + cut / 64) {
        ptts_tokenizer *t = NULL;
        ptts_error e = {0};
        int rc = ptts_tokenizer_load_json_memory(&t, json, cut, "cut.json", &e);
        CHECKF(rc == PTTS_E_FORMAT || rc == PTTS_E_UNSUPPORTED, "cut %zu: rc %d", cut, rc);
        refused += rc != PTTS_OK;
        ptts_tokenizer_free(t);
    }
    char *copy = malloc(size);
    REQUIRE(copy);
    for (int k = 0; k < 400; k++) {
        memcpy(copy, json, size);
        /* One JSON-ish byte (often still valid JSON) or a random one. */
        static const char pool[] = "0123456789eE.-+\" ,:[]{}tfn\\u";
        copy[rnd() % size] = k % 2 ? (char)rnd() : pool[rnd() % (sizeof pool - 1)];
        ptts_tokenizer *t = NULL;
        ptts_error e = {0};
        int rc = ptts_tokenizer_load_json_memory(&t, copy, size, "flip.json", &e);
        CHECK(rc == PTTS_OK || rc == PTTS_E_FORMAT || rc == PTTS_E_UNSUPPORTED);
        if (rc == PTTS_OK) {
            exercise(t);
            loaded++;
        } else {
            CHECK(e.msg[0] != '\0');
        }
        ptts_tokenizer_free(t);
    }
    free(copy);
    printf("hostile bytes: %d truncations refused, %d of 400 flipped files still loaded\n", refused,
           loaded);
}

static void test_random_and_huge(const ptts_tokenizer *tj, const ptts_tokenizer *tm) {
    char buf[64];
    for (int k = 0; k < 3000; k++) {
        size_t n = rnd() % sizeof buf;
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)(rnd() % 4 == 0 ? ' ' : rnd());
        int *ids = NULL, nids = 0;
        REQUIRE(ptts_tokenizer_encode(tj, buf, n, &ids, &nids, NULL) == PTTS_OK);
        for (int i = 0; i < nids; i++)
            CHECK(ids[i] >= 0 && ids[i] < ptts_tokenizer_vocab_size(tj));
        char *s = NULL;
        CHECK(ptts_tokenizer_decode(tj, ids, nids, &s, NULL) == PTTS_OK);
        free(s);
        free(ids);
    }
    static const char *units[] = {"It goes on, and on: <s> all of it. ", "a", "\xe6\x97\xa5 "};
    for (int u = 0; u < 3; u++) {
        size_t ul = strlen(units[u]), reps = ((size_t)2 << 20) / ul, len = reps * ul;
        char *s = malloc(len + 1);
        REQUIRE(s);
        for (size_t i = 0; i < reps; i++)
            memcpy(s + i * ul, units[u], ul);
        s[len] = 0;
        int *ids = NULL, n = 0;
        double t0 = ptts_now();
        CHECK(ptts_tokenizer_encode(tm, s, len, &ids, &n, NULL) == PTTS_OK);
        double t_model = ptts_now() - t0;
        free(ids);
        t0 = ptts_now();
        CHECK(ptts_tokenizer_encode(tj, s, len, &ids, &n, NULL) == PTTS_OK);
        double t_json = ptts_now() - t0;
        printf("2 MB of '%s': json %d ids %.3f s, .model %.3f s\n", units[u], n, t_json, t_model);
        CHECKF(t_json <= 8.0 * t_model + 1.0, "json encode %.3f s vs .model %.3f s", t_json,
               t_model);
        char *d = NULL;
        CHECK(ptts_tokenizer_decode(tj, ids, n, &d, NULL) == PTTS_OK);
        free(d);
        free(ids);
        free(s);
    }
}

int main(void) {
    size_t jn = 0, sn = 0;
    char *cases = read_all(fixture_path("tokenizer/json_cases.json"), &jn);
    char *json = read_all(fixture_path(SHIPPED), &sn);
    REQUIRE(cases && json);
    cJSON *root = cJSON_Parse(cases);
    REQUIRE(root);
    ptts_tokenizer *tj = NULL, *tm = NULL;
    ptts_error e = {0};
    REQUIRE(ptts_tokenizer_load(&tj, fixture_path(SHIPPED), &e) == PTTS_OK);
    REQUIRE(ptts_tokenizer_load(&tm, fixture_path("tokenizer/sp_unigram_bytefb.model"), &e) ==
            PTTS_OK);
    test_cases(tj, tm, cJSON_GetObjectItem(root, "sp_unigram_bytefb.tokenizer.json"));
    static const char *others[] = {"sp_unigram", "sp_unigram_tiny", "sp_unigram_identity"};
    for (int k = 0; k < 3; k++) {
        char jp[96], mp[96], key[96];
        snprintf(jp, sizeof jp, "tokenizer/%s.tokenizer.json", others[k]);
        snprintf(mp, sizeof mp, "tokenizer/%s.model", others[k]);
        snprintf(key, sizeof key, "%s.tokenizer.json", others[k]);
        ptts_tokenizer *oj = NULL, *om = NULL;
        CHECKF(ptts_tokenizer_load(&oj, fixture_path(jp), &e) == PTTS_OK, "%s", e.msg);
        REQUIRE(ptts_tokenizer_load(&om, fixture_path(mp), &e) == PTTS_OK);
        printf("%s:\n", key);
        if (oj) test_cases(oj, om, cJSON_GetObjectItem(root, key));
        ptts_tokenizer_free(oj);
        ptts_tokenizer_free(om);
    }
    test_unsupported();
    test_normalizer_steps(json, tj);
    test_charsmap_limits(json);
    test_pick(json, sn);
    test_hostile_trees(json);
    test_hostile_bytes(json, sn);
    test_random_and_huge(tj, tm);
    ptts_tokenizer_free(tj);
    ptts_tokenizer_free(tm);
    cJSON_Delete(root);
    free(json);
    free(cases);
    return test_summary();
}
