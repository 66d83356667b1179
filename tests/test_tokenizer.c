/*
 * test_tokenizer.c - the SentencePiece port against the reference library's own output, and
 * against hostile input.
 *
 *  1. Every case of tokenizer/cases.json for all four models: ids, pieces (EncodeAsPieces, with
 *     unknown pieces as their surface) and DecodeIds text must match exactly; the vocabulary size
 *     and, where the fixture lists it, every id's piece string too.
 *  2. Hostile .model files must fail with PTTS_E_FORMAT (never crash): the real models truncated
 *     at many lengths, with bytes flipped, absurd varints and lengths, wrong wire types, a
 *     broken precompiled charsmap, and models without pieces or without <unk>. A flipped byte may
 *     still leave a valid model; then encoding and decoding must still work or fail cleanly.
 *  3. Random byte strings (invalid UTF-8, control characters, NUL, runs of spaces) encode and
 *     decode with every model; the ids must be in range and decoding them must succeed.
 * Run under ASan/UBSan (label unit) this is also the memory-safety check.
 */
// ctest-label: unit
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tokenizer.h"

static const char *MODELS[] = {"sp_unigram.model", "sp_bpe_bytefb.model",
                               "sp_unigram_identity.model", "sp_unigram_tiny.model"};
#define N_MODELS 4

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

static uint64_t rng_state = 0x1234567887654321ull;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static void check_cases(const char *model, const ptts_tokenizer *t, const cJSON *entry) {
    const cJSON *vs = cJSON_GetObjectItem(entry, "vocab_size");
    CHECKF(cJSON_IsNumber(vs) && ptts_tokenizer_vocab_size(t) == vs->valueint, "%s vocab", model);
    const cJSON *itp = cJSON_GetObjectItem(entry, "id_to_piece");
    if (cJSON_IsArray(itp)) {
        int i = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, itp) {
            const char *got = ptts_tokenizer_piece(t, i);
            CHECKF(got && cJSON_IsString(p) && !strcmp(got, p->valuestring), "%s id_to_piece %d",
                   model, i);
            i++;
        }
    }
    const cJSON *cases = cJSON_GetObjectItem(entry, "cases");
    REQUIRE(cJSON_IsArray(cases) && cJSON_GetArraySize(cases) > 0);
    const cJSON *c;
    int idx = 0;
    cJSON_ArrayForEach(c, cases) {
        const char *text = cJSON_GetObjectItem(c, "text")->valuestring;
        const cJSON *eids = cJSON_GetObjectItem(c, "ids");
        const cJSON *epieces = cJSON_GetObjectItem(c, "pieces");
        const char *edec = cJSON_GetObjectItem(c, "decoded")->valuestring;
        int *ids = NULL, n = -1;
        char **pieces = NULL;
        ptts_error e = {0};
        int rc = ptts_tokenizer_encode_pieces(t, text, strlen(text), &ids, &pieces, &n, &e);
        CHECKF(rc == 0, "%s case %d: %s", model, idx, e.msg);
        if (rc) {
            idx++;
            continue;
        }
        int same = n == cJSON_GetArraySize(eids) && n == cJSON_GetArraySize(epieces);
        for (int i = 0; same && i < n; i++) {
            if (cJSON_GetArrayItem(eids, i)->valueint != ids[i]) same = 0;
            if (strcmp(cJSON_GetArrayItem(epieces, i)->valuestring, pieces[i])) same = 0;
        }
        CHECKF(same, "%s case %d (\"%.60s\"): ids/pieces differ", model, idx, text);
        if (!same) {
            fprintf(stderr, "  got:");
            for (int i = 0; i < n; i++)
                fprintf(stderr, " %d:%s", ids[i], pieces[i]);
            fprintf(stderr, "\n");
        }
        CHECK(pieces[n] == NULL);
        /* The plain entry point gives the same ids. */
        int *ids2 = NULL, n2 = -1;
        CHECK(ptts_tokenizer_encode(t, text, strlen(text), &ids2, &n2, NULL) == 0 && n2 == n &&
              (n == 0 || !memcmp(ids, ids2, (size_t)n * sizeof *ids)));
        free(ids2);
        /* Decode the expected ids (not ours) so a decoding bug cannot hide behind an encoding one.
         */
        int ne = cJSON_GetArraySize(eids);
        int *exp = malloc(((size_t)ne + 1) * sizeof *exp);
        for (int i = 0; i < ne; i++)
            exp[i] = cJSON_GetArrayItem(eids, i)->valueint;
        char *dec = NULL;
        rc = ptts_tokenizer_decode(t, exp, ne, &dec, &e);
        CHECKF(rc == 0 && dec && !strcmp(dec, edec), "%s case %d decode: got \"%s\" want \"%s\"",
               model, idx, dec ? dec : "(null)", edec);
        free(dec);
        free(exp);
        free(ids);
        free(pieces);
        idx++;
    }
    printf("%s: %d cases\n", model, idx);
}

/* Builds a protobuf field key. */
static size_t put_varint(unsigned char *p, uint64_t v) {
    size_t n = 0;
    do {
        p[n++] = (unsigned char)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

static int load_mem(const void *b, size_t n, ptts_tokenizer **t) {
    ptts_error e = {0};
    int rc = ptts_tokenizer_load_memory(t, b, n, "hostile", &e);
    if (rc) CHECKF(*t == NULL && e.code == rc && e.msg[0], "error reported (rc %d)", rc);
    return rc;
}

/* A model that loads must also work: encode + decode some text without crashing. */
static void exercise(const ptts_tokenizer *t) {
    static const char *texts[] = {"Hello world. I am Kyutai's Pocket TTS.", "  a\tb\xff\xfe c ", "",
                                  "\xe2\x98\x83 <break> 12,000 \xef\xac\x81"};
    for (int i = 0; i < 4; i++) {
        int *ids = NULL, n = 0;
        int rc = ptts_tokenizer_encode(t, texts[i], strlen(texts[i]), &ids, &n, NULL);
        CHECK(rc == 0 || rc == PTTS_E_FORMAT);
        if (rc == 0) {
            char *d = NULL;
            CHECK(ptts_tokenizer_decode(t, ids, n, &d, NULL) == 0 && d);
            free(d);
        }
        free(ids);
    }
}

static void hostile(const char *model, const unsigned char *data, size_t size) {
    ptts_tokenizer *t = NULL;
    /* Truncations: every length in the first 2 KiB and around the pieces/spec boundaries, then a
     * spread over the whole file. A cut inside a length-delimited field is always an error;
     * a cut on a field boundary can leave a valid (smaller) model, which must then work. */
    int n_err = 0, n_ok = 0;
    for (size_t cut = 0; cut < size; cut += (cut < 2048 ? 1 : 1 + size / 997)) {
        int rc = load_mem(data, cut, &t);
        CHECKF(rc == 0 || rc == PTTS_E_FORMAT || rc == PTTS_E_UNSUPPORTED, "%s cut %zu rc %d",
               model, cut, rc);
        if (rc == 0) {
            exercise(t);
            ptts_tokenizer_free(t);
            t = NULL;
            n_ok++;
        } else {
            n_err++;
        }
    }
    CHECKF(n_err > 100, "%s: truncations rejected: %d", model, n_err);
    /* The last few bytes cut off: always inside the final (normalizer) field -> error. */
    for (size_t k = 1; k <= 8; k++)
        CHECKF(load_mem(data, size - k, &t) == PTTS_E_FORMAT, "%s cut -%zu", model, k);

    /* Random byte flips. */
    unsigned char *m = malloc(size);
    for (int trial = 0; trial < 300; trial++) {
        memcpy(m, data, size);
        int flips = 1 + (int)(rnd() % 4);
        for (int f = 0; f < flips; f++)
            m[rnd() % size] ^= (unsigned char)(1 + rnd() % 255);
        int rc = load_mem(m, size, &t);
        CHECK(rc == 0 || rc == PTTS_E_FORMAT || rc == PTTS_E_UNSUPPORTED);
        if (rc == 0) {
            exercise(t);
            ptts_tokenizer_free(t);
            t = NULL;
        }
    }
    /* Flips inside the charsmap trie (the last field's tail): indices may go anywhere. */
    for (int trial = 0; trial < 300; trial++) {
        memcpy(m, data, size);
        size_t tail = size > 200000 ? 200000 : size / 2;
        for (int f = 0; f < 8; f++)
            m[size - 1 - rnd() % tail] = (unsigned char)rnd();
        int rc = load_mem(m, size, &t);
        CHECK(rc == 0 || rc == PTTS_E_FORMAT);
        if (rc == 0) {
            exercise(t);
            ptts_tokenizer_free(t);
            t = NULL;
        }
    }
    free(m);
    printf("%s: hostile ok (%d truncations loaded, %d rejected)\n", model, n_ok, n_err);
}

/* A tiny protobuf writer for hand-made models. */
typedef struct {
    unsigned char b[512];
    size_t n;
} pbw;
static void pbw_bytes(pbw *w, int field, const void *p, size_t n) {
    w->n += put_varint(w->b + w->n, (uint64_t)field << 3 | 2);
    w->n += put_varint(w->b + w->n, n);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void pbw_varint(pbw *w, int field, uint64_t v) {
    w->n += put_varint(w->b + w->n, (uint64_t)field << 3);
    w->n += put_varint(w->b + w->n, v);
}
static void pbw_piece(pbw *w, const char *piece, float score, int type) {
    pbw p = {{0}, 0};
    pbw_bytes(&p, 1, piece, strlen(piece));
    uint32_t u;
    memcpy(&u, &score, 4);
    p.b[p.n++] = 0x15;
    for (int i = 0; i < 4; i++)
        p.b[p.n++] = (unsigned char)(u >> (8 * i));
    pbw_varint(&p, 3, (uint64_t)type);
    pbw_bytes(w, 1, p.b, p.n);
}

static void expect_ids(const ptts_tokenizer *t, const char *text, const int *want, int nwant,
                       const char *what) {
    int *ids = NULL, n = -1;
    int rc = ptts_tokenizer_encode(t, text, strlen(text), &ids, &n, NULL);
    int same = rc == 0 && n == nwant;
    for (int i = 0; same && i < n; i++)
        same = ids[i] == want[i];
    CHECKF(same, "%s: rc %d, %d ids", what, rc, n);
    free(ids);
}

/* BPE and unigram semantics the fixture models do not reach: an UNUSED piece is merged through
 * but resegmented into its halves (BPE) or skipped (unigram); a USER_DEFINED piece is never
 * split or merged; consecutive unknowns merge into one <unk>. */
static void handmade_semantics(void) {
    for (int model_type = 1; model_type <= 2; model_type++) {
        pbw w = {{0}, 0};
        pbw_piece(&w, "<unk>", 0, 2);         /* 0 */
        pbw_piece(&w, "a", -1, 1);            /* 1 */
        pbw_piece(&w, "b", -2, 1);            /* 2 */
        pbw_piece(&w, "ab", -0.5f, 5);        /* 3 unused */
        pbw_piece(&w, "xy", 0, 4);            /* 4 user-defined */
        pbw_piece(&w, "ya", -0.1f, 1);        /* 5: would steal the y of xy if xy were not frozen */
        pbw_piece(&w, "\xe2\x96\x81", -3, 1); /* 6 */
        pbw tr = {{0}, 0};
        pbw_varint(&tr, 3, (uint64_t)model_type);
        pbw_bytes(&w, 2, tr.b, tr.n);
        ptts_tokenizer *t = NULL;
        ptts_error e = {0};
        int rc = ptts_tokenizer_load_memory(&t, w.b, w.n, "handmade", &e);
        CHECKF(rc == 0, "handmade model type %d: %s", model_type, e.msg);
        if (rc) continue;
        const int want_ab[] = {6, 1, 2};
        expect_ids(t, "ab", want_ab, 3,
                   model_type == 1 ? "unigram unused" : "bpe unused resegmented");
        const int want_xya[] = {6, 4, 1};
        expect_ids(t, "xya", want_xya, 3,
                   model_type == 1 ? "unigram user symbol" : "bpe user symbol");
        const int want_unk[] = {6, 0, 1};
        expect_ids(t,
                   "qqq\xc3\xa9"
                   "a",
                   want_unk, 3, "unknown run merged");
        ptts_tokenizer_free(t);
    }
}

static void handmade(void) {
    ptts_tokenizer *t = NULL;
    unsigned char b[64];
    size_t n;
    /* Empty file: no pieces. */
    CHECK(load_mem("", 0, &t) == PTTS_E_FORMAT);
    /* An absurd varint (11 bytes of continuation). */
    memset(b, 0xFF, 11);
    b[11] = 0x01;
    CHECK(load_mem(b, 12, &t) == PTTS_E_FORMAT);
    /* A length far beyond the file. */
    n = 0;
    b[n++] = 0x0A; /* field 1, wire type 2 */
    n += put_varint(b + n, (uint64_t)1 << 40);
    CHECK(load_mem(b, n, &t) == PTTS_E_FORMAT);
    /* pieces with the wrong wire type (varint). */
    b[0] = 0x08;
    b[1] = 0x05;
    CHECK(load_mem(b, 2, &t) == PTTS_E_FORMAT);
    /* Wire types 3, 4, 6, 7 and field number 0. */
    for (int wt = 3; wt <= 7; wt++) {
        if (wt == 5) continue;
        b[0] = (unsigned char)((7 << 3) | wt);
        b[1] = 0;
        CHECK(load_mem(b, 2, &t) == PTTS_E_FORMAT);
    }
    b[0] = 0x02;
    b[1] = 0x00;
    CHECK(load_mem(b, 2, &t) == PTTS_E_FORMAT);
    /* One normal piece "a" but no <unk>. */
    static const unsigned char no_unk[] = {0x0A, 0x03, 0x0A, 0x01, 'a'};
    CHECK(load_mem(no_unk, sizeof no_unk, &t) == PTTS_E_FORMAT);
    /* <unk> only: no normal piece for the unigram lattice. */
    static const unsigned char only_unk[] = {0x0A, 0x09, 0x0A, 0x05, '<', 'u',
                                             'n',  'k',  '>',  0x18, 0x02};
    CHECK(load_mem(only_unk, sizeof only_unk, &t) == PTTS_E_FORMAT);
    /* <unk> + "a" loads (a minimal valid model) and works. */
    static const unsigned char mini[] = {0x0A, 0x09, 0x0A, 0x05, '<',  'u',  'n',
                                         'k',  '>',  0x18, 0x02, 0x0A, 0x08, 0x0A,
                                         0x01, 'a',  0x15, 0x00, 0x00, 0x80, 0xBF};
    CHECK(load_mem(mini, sizeof mini, &t) == 0);
    if (t) {
        int *ids = NULL, k = 0;
        CHECK(ptts_tokenizer_encode(t, "aab", 3, &ids, &k, NULL) == 0);
        /* normalized "\xe2\x96\x81aab": U+2581 unknown, a, a, b unknown -> [0, 1, 1, 0] */
        CHECKF(k == 4 && ids[0] == 0 && ids[1] == 1 && ids[2] == 1 && ids[3] == 0,
               "mini model: %d ids", k);
        char *d = NULL;
        CHECK(ptts_tokenizer_decode(t, ids, k, &d, NULL) == 0 &&
              !strcmp(d, " \xE2\x81\x87 aa \xE2\x81\x87 "));
        free(d);
        free(ids);
        int bad = 2;
        d = NULL;
        CHECK(ptts_tokenizer_decode(t, &bad, 1, &d, NULL) == PTTS_E_INVALID && d == NULL);
        bad = -1;
        CHECK(ptts_tokenizer_decode(t, &bad, 1, &d, NULL) == PTTS_E_INVALID);
        ptts_tokenizer_free(t);
        t = NULL;
    }
    /* The same piece twice. */
    static const unsigned char dup[] = {0x0A, 0x09, 0x0A, 0x05, '<',  'u',  'n',
                                        'k',  '>',  0x18, 0x02, 0x0A, 0x03, 0x0A,
                                        0x01, 'a',  0x0A, 0x03, 0x0A, 0x01, 'a'};
    CHECK(load_mem(dup, sizeof dup, &t) == PTTS_E_FORMAT);
    /* A byte piece without byte_fallback. */
    static const unsigned char bytep[] = {0x0A, 0x09, 0x0A, 0x05, '<',  'u',  'n',  'k',
                                          '>',  0x18, 0x02, 0x0A, 0x0A, 0x0A, 0x06, '<',
                                          '0',  'x',  '4',  '1',  '>',  0x18, 0x06};
    CHECK(load_mem(bytep, sizeof bytep, &t) == PTTS_E_FORMAT);
    /* A charsmap whose trie size exceeds the blob, and one whose trie jumps out of bounds. */
    unsigned char cm[64];
    memcpy(cm, mini, sizeof mini);
    n = sizeof mini;
    cm[n++] = 0x1A; /* field 3 normalizer_spec */
    cm[n++] = 10;
    cm[n++] = 0x12; /* field 2 precompiled_charsmap */
    cm[n++] = 8;
    cm[n++] = 0xFF; /* trie size 0xFF > 4 */
    cm[n++] = 0;
    cm[n++] = 0;
    cm[n++] = 0;
    memset(cm + n, 0, 4);
    n += 4;
    CHECK(load_mem(cm, n, &t) == PTTS_E_FORMAT);
    cm[n - 8] = 4;    /* trie of one unit ... */
    cm[n - 4] = 0x00; /* root unit: offset (0x3FFFFF << 10) points far away */
    cm[n - 3] = 0xFC;
    cm[n - 2] = 0xFF;
    cm[n - 1] = 0xFF;
    CHECK(load_mem(cm, n, &t) == 0);
    if (t) {
        int *ids = NULL, k = 0;
        ptts_error e = {0};
        CHECK(ptts_tokenizer_encode(t, "abc", 3, &ids, &k, &e) == PTTS_E_FORMAT && ids == NULL);
        ptts_tokenizer_free(t);
        t = NULL;
    }
    CHECK(ptts_tokenizer_load(&t, fixture_path("tokenizer/does_not_exist.model"), NULL) ==
          PTTS_E_IO);
}

static void random_text(ptts_tokenizer **tok) {
    static const char *frags[] = {" ",
                                  "  ",
                                  "\t",
                                  "\n",
                                  "\x00",
                                  "\x01",
                                  "\x7f",
                                  "\xc3\xa9",
                                  "\xe2\x96\x81",
                                  "\xf0\x9f\x98\x80",
                                  "\xef\xbf\xbd",
                                  "\xed\xa0\x80",
                                  "\xc0\xaf",
                                  "a",
                                  "the ",
                                  "<break>",
                                  "[pause]",
                                  "\xe3\x80\x80",
                                  "1",
                                  "\xef\xac\x81",
                                  "\xcc\x81",
                                  "<0x41>",
                                  "<unk>",
                                  "\xe2\x81\x87"};
    const int nf = (int)(sizeof frags / sizeof frags[0]);
    char text[512];
    for (int trial = 0; trial < 2000; trial++) {
        size_t len = 0, target = rnd() % 200;
        while (len < target) {
            if (rnd() % 3 == 0) {
                text[len++] = (char)(rnd() & 0xFF);
            } else {
                const char *f = frags[rnd() % nf];
                size_t fl = f[0] ? strlen(f) : 1;
                if (len + fl > sizeof text) break;
                memcpy(text + len, f, fl);
                len += fl;
            }
        }
        for (int m = 0; m < N_MODELS; m++) {
            int *ids = NULL, n = 0;
            char **pieces = NULL;
            int rc = ptts_tokenizer_encode_pieces(tok[m], text, len, &ids, &pieces, &n, NULL);
            CHECK(rc == 0);
            if (rc) continue;
            int ok = 1;
            /* A piece is never empty, but a NUL byte of the text reads as an empty C string. */
            for (int i = 0; i < n; i++)
                ok &= ids[i] >= 0 && ids[i] < ptts_tokenizer_vocab_size(tok[m]) && pieces[i];
            ok &= pieces[n] == NULL;
            CHECK(ok);
            char *d = NULL;
            CHECK(ptts_tokenizer_decode(tok[m], ids, n, &d, NULL) == 0 && d);
            free(d);
            free(ids);
            free(pieces);
        }
    }
}

int main(void) {
    size_t jn = 0;
    char *json = read_all(fixture_path("tokenizer/cases.json"), &jn);
    REQUIRE(json);
    cJSON *root = cJSON_Parse(json);
    REQUIRE(root);
    ptts_tokenizer *tok[N_MODELS] = {0};
    for (int m = 0; m < N_MODELS; m++) {
        char rel[128];
        snprintf(rel, sizeof rel, "tokenizer/%s", MODELS[m]);
        ptts_error e = {0};
        int rc = ptts_tokenizer_load(&tok[m], fixture_path(rel), &e);
        CHECKF(rc == 0, "%s: %s", MODELS[m], e.msg);
        REQUIRE(tok[m]);
        const cJSON *entry = cJSON_GetObjectItem(root, MODELS[m]);
        REQUIRE(entry);
        check_cases(MODELS[m], tok[m], entry);
    }
    handmade();
    handmade_semantics();
    random_text(tok);
    for (int m = 0; m < N_MODELS; m++) {
        char rel[128];
        snprintf(rel, sizeof rel, "tokenizer/%s", MODELS[m]);
        size_t size = 0;
        unsigned char *data = (unsigned char *)read_all(fixture_path(rel), &size);
        REQUIRE(data);
        hostile(MODELS[m], data, size);
        free(data);
        ptts_tokenizer_free(tok[m]);
    }
    cJSON_Delete(root);
    free(json);
    return test_summary();
}
