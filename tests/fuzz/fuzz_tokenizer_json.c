/*
 * fuzz_tokenizer_json.c - libFuzzer target for the tokenizer.json backend. An input that starts
 * with '{' is a tokenizer.json: load it (it must succeed or fail cleanly with a message) and,
 * when it loads, encode and decode a fixed text and the input itself with it (a broken charsmap
 * may fail the encoding with PTTS_E_FORMAT, nothing else may fail). Any other input is
 * text: encode it with the shipped-structure fixture file, check the ids are in range, decode
 * them whole and in two parts (decode_part), then decode the same bytes read as 16-bit ids.
 * Seeds: tests/fuzz/seeds/tokenizer_json/. The fixture comes from $PTTS_FIXTURES/tokenizer/ or,
 * without it, from the tests/fixtures folder next to this file (its path is compiled in through
 * __FILE__).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

static ptts_tokenizer *g_tok;

static void load_fixture(void) {
    char dir[1024];
    const char *env = getenv("PTTS_FIXTURES");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
    } else {
        /* __FILE__ = .../tests/fuzz/fuzz_tokenizer_json.c -> .../tests/fixtures */
        snprintf(dir, sizeof dir, "%s", __FILE__);
        char *cut = strstr(dir, "fuzz/fuzz_tokenizer_json.c");
        if (cut)
            strcpy(cut, "fixtures");
        else
            snprintf(dir, sizeof dir, "tests/fixtures");
    }
    char path[1200];
    ptts_error e = {0};
    snprintf(path, sizeof path, "%s/tokenizer/sp_unigram_bytefb.tokenizer.json", dir);
    if (ptts_tokenizer_load(&g_tok, path, &e)) {
        fprintf(stderr, "fuzz_tokenizer_json: %s (set PTTS_FIXTURES)\n", e.msg);
        abort();
    }
}

/* fuzzed: t is the input's own tokenizer, whose Precompiled charsmap (a double array, checked
 * as it is walked) may be broken: encoding then fails with PTTS_E_FORMAT, as for a .model
 * (fuzz_tokenizer.c); the fixture must encode every text. */
static void roundtrip(const ptts_tokenizer *t, const char *text, size_t len, int fuzzed) {
    int *ids = NULL, n = 0, vocab = ptts_tokenizer_vocab_size(t);
    ptts_error e = {0};
    int rc = ptts_tokenizer_encode(t, text, len, &ids, &n, &e);
    if (rc != 0) {
        if (!fuzzed || rc != PTTS_E_FORMAT || !strstr(e.msg, "charsmap")) abort();
        free(ids);
        return;
    }
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab) abort();
    char *d = NULL, *a = NULL, *b = NULL;
    if (ptts_tokenizer_decode(t, ids, n, &d, NULL) != 0 || !d) abort();
    /* decode(ids) = decode(ids[:k]) + decode_part(ids[k:], continued) at a cut between two
     * pieces that are not both in a byte run (compared as C strings: not when a <0x00> piece,
     * which a literal "<0x00>" in the text matches, puts a NUL into the text). */
    int k = n / 2, cont = 0, nul = 0;
    for (int i = 0; i < n; i++)
        nul |= strcmp(ptts_tokenizer_piece(t, ids[i]), "<0x00>") == 0;
    if (!nul && ptts_tokenizer_decode_is_local(t) &&
        !(k > 0 && k < n && ptts_tokenizer_in_byte_run(t, ids[k - 1]) &&
          ptts_tokenizer_in_byte_run(t, ids[k]))) {
        if (ptts_tokenizer_decode(t, ids, k, &a, NULL) ||
            ptts_tokenizer_decode_continues(t, ids, k, &cont, NULL) ||
            ptts_tokenizer_decode_part(t, ids + k, n - k, cont, &b, NULL))
            abort();
        size_t la = strlen(a);
        if (strncmp(d, a, la) != 0 || strcmp(d + la, b) != 0) abort();
    }
    free(a);
    free(b);
    free(d);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_tok) load_fixture();
    if (size > 0 && data[0] == '{') {
        ptts_tokenizer *t = NULL;
        ptts_error e = {0};
        int rc = ptts_tokenizer_load_json_memory(&t, data, size, "fuzz.json", &e);
        if (rc == 0) {
            static const char text[] = " Hello  w\xc3\xb6rld <s>\xe2\x98\x83\xff </s><0x41> 12 ";
            roundtrip(t, text, sizeof text - 1, 1);
            roundtrip(t, (const char *)data, size < 4096 ? size : 4096, 1);
            ptts_tokenizer_free(t);
        } else if (t != NULL || e.code != rc || !e.msg[0] ||
                   (rc != PTTS_E_FORMAT && rc != PTTS_E_UNSUPPORTED && rc != PTTS_E_NOMEM)) {
            abort();
        }
        return 0;
    }
    roundtrip(g_tok, (const char *)data, size, 0);
    int n = (int)(size / 2), vocab = ptts_tokenizer_vocab_size(g_tok);
    int *ids = malloc(((size_t)n + 1) * sizeof *ids);
    if (!ids) return 0;
    for (int i = 0; i < n; i++)
        ids[i] = (data[2 * i] | data[2 * i + 1] << 8) % vocab;
    char *d = NULL;
    if (ptts_tokenizer_decode(g_tok, ids, n, &d, NULL) != 0 || !d) abort();
    free(d);
    free(ids);
    return 0;
}
