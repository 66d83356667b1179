/*
 * test_tokenizer_json.c - the tokenizer.json backend (src/tokenizer_json.c, MODEL.md 9.3).
 *
 *  1. tokenizer/json_cases.json for sp_unigram_bytefb.tokenizer.json (the shipped structure):
 *     ids and decoded text of all 30 strings exactly, the .model's ids wherever the fixture says
 *     same_ids_as_model; the cases where the two backends differ are printed.
 *  2. The other fixture files use components outside the shipped subset (a Precompiled
 *     normalizer, no Prepend, a BPE model): each is refused with PTTS_E_UNSUPPORTED naming it.
 *  3. Picking the backend: by the config's kind, by the ".json" suffix, with an "@revision".
 *  4. Hostile files: every truncation of a small file, flipped bytes, and hand-edited trees
 *     (wrong types, huge vocabularies, bad byte pieces, no unk_id, duplicates, mismatched added
 *     tokens): a clear PTTS_E_* error naming the problem, never a crash.
 *  5. Random byte strings encode and decode; a 2 MB text encodes in linear time.
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
    CHECK(same == 26);
}

/* The fixture files outside the shipped subset. */
static void test_unsupported(void) {
    static const struct {
        const char *file, *what;
    } files[] = {
        {"tokenizer/sp_unigram.tokenizer.json", "normalizer Sequence with Precompiled"},
        {"tokenizer/sp_unigram_tiny.tokenizer.json", "normalizer Sequence with Precompiled"},
        {"tokenizer/sp_unigram_identity.tokenizer.json", "normalizer Sequence with no Prepend"},
        {"tokenizer/sp_bpe_bytefb.tokenizer.json", "normalizer Sequence with Precompiled"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        ptts_tokenizer *t = NULL;
        ptts_error e = {0};
        CHECK(ptts_tokenizer_load(&t, fixture_path(files[i].file), &e) == PTTS_E_UNSUPPORTED);
        CHECKF(strstr(e.msg, files[i].what) != NULL, "%s: '%s'", files[i].file, e.msg);
        CHECK(t == NULL);
    }
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
        {e_missing_byte, PTTS_E_FORMAT, "without the byte piece <0x41>"},
        {e_empty_piece, PTTS_E_FORMAT, "model.vocab[300] is empty"},
        {e_post, PTTS_E_UNSUPPORTED, "post_processor is not supported"},
        {e_added_id, PTTS_E_FORMAT, "added_tokens[1]: id 5 is not the vocabulary index"},
        {e_added_lstrip, PTTS_E_UNSUPPORTED, "added_tokens[0]: lstrip must be false"},
        {e_decoder, PTTS_E_UNSUPPORTED, "decoder Sequence is not supported"},
        {e_pretok, PTTS_E_UNSUPPORTED, "pre_tokenizer Metaspace is not supported"},
        {e_normalizer, PTTS_E_UNSUPPORTED, "normalizer (no type) is not supported"},
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
    test_unsupported();
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
