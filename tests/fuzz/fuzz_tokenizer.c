/*
 * fuzz_tokenizer.c - libFuzzer target for the SentencePiece port. The first byte picks the mode:
 *   even: the rest is a .model file: load it (must succeed or fail cleanly) and, when it loads,
 *         encode and decode a fixed text with it;
 *   odd:  the rest is text: encode it with one of the four fixture models (chosen by the first
 *         byte), check the ids are in range, decode them; then decode the same bytes read as
 *         16-bit ids.
 * The fixture models come from $PTTS_FIXTURES/tokenizer/ or, without it, from the tests/fixtures
 * folder next to this file (its path is compiled in through __FILE__).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

static const char *MODELS[4] = {"sp_unigram.model", "sp_bpe_bytefb.model",
                                "sp_unigram_identity.model", "sp_unigram_tiny.model"};
static ptts_tokenizer *g_tok[4];

static void load_fixtures(void) {
    char dir[1024];
    const char *env = getenv("PTTS_FIXTURES");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
    } else {
        /* __FILE__ = .../tests/fuzz/fuzz_tokenizer.c -> .../tests/fixtures */
        snprintf(dir, sizeof dir, "%s", __FILE__);
        char *cut = strstr(dir, "fuzz/fuzz_tokenizer.c");
        if (cut)
            strcpy(cut, "fixtures");
        else
            snprintf(dir, sizeof dir, "tests/fixtures");
    }
    for (int i = 0; i < 4; i++) {
        char path[1200];
        ptts_error e = {0};
        snprintf(path, sizeof path, "%s/tokenizer/%s", dir, MODELS[i]);
        if (ptts_tokenizer_load(&g_tok[i], path, &e)) {
            fprintf(stderr, "fuzz_tokenizer: %s (set PTTS_FIXTURES)\n", e.msg);
            abort();
        }
    }
}

static void roundtrip(const ptts_tokenizer *t, const char *text, size_t len) {
    int *ids = NULL, n = 0;
    char **pieces = NULL;
    int rc = ptts_tokenizer_encode_pieces(t, text, len, &ids, &pieces, &n, NULL);
    if (rc == 0) {
        for (int i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= ptts_tokenizer_vocab_size(t) || !pieces[i]) abort();
        if (pieces[n] != NULL) abort();
        char *d = NULL;
        if (ptts_tokenizer_decode(t, ids, n, &d, NULL) != 0 || !d) abort();
        free(d);
    } else if (rc != PTTS_E_FORMAT) {
        abort(); /* only a broken charsmap can make encoding fail */
    }
    free(ids);
    free(pieces);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_tok[0]) load_fixtures();
    if (size < 1) return 0;
    const uint8_t mode = data[0];
    data++;
    size--;
    if ((mode & 1) == 0) {
        ptts_tokenizer *t = NULL;
        ptts_error e = {0};
        int rc = ptts_tokenizer_load_memory(&t, data, size, "fuzz", &e);
        if (rc == 0) {
            static const char text[] = " Hello  w\xc3\xb6rld \xe2\x98\x83\xff <break> 12 ";
            roundtrip(t, text, sizeof text - 1);
            ptts_tokenizer_free(t);
        } else if (t != NULL || e.code != rc ||
                   (rc != PTTS_E_FORMAT && rc != PTTS_E_UNSUPPORTED && rc != PTTS_E_NOMEM)) {
            abort();
        }
        return 0;
    }
    const ptts_tokenizer *t = g_tok[(mode >> 1) & 3];
    roundtrip(t, (const char *)data, size);
    int n = (int)(size / 2), vocab = ptts_tokenizer_vocab_size(t);
    int *ids = malloc(((size_t)n + 1) * sizeof *ids);
    if (!ids) return 0;
    for (int i = 0; i < n; i++)
        ids[i] = (data[2 * i] | data[2 * i + 1] << 8) % vocab;
    char *d = NULL;
    if (ptts_tokenizer_decode(t, ids, n, &d, NULL) != 0 || !d) abort();
    free(d);
    free(ids);
    return 0;
}
