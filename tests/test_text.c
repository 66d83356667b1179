/*
 * test_text.c - text preparation and sentence splitting (src/text.c) against the 3.3 reference:
 * every case of tests/fixtures/text_cases.json (prepare_text_prompt over its flag combinations
 * and replace tables, or the error; split_into_best_sentences at max_tokens 8/20/50 with each
 * chunk's re-prepared text and count; language_settings + language_cases; split_backends through
 * the .model and its tokenizer.json), the generation chunks of tiny/ and full/ manifest.json,
 * Python string semantics on hand-picked Unicode (whitespace, full uppercase mapping), the
 * replace table's rules, robustness on invalid UTF-8 and control characters, and linear running
 * time on multi-megabyte texts.
 */
// ctest-label: unit
// ctest-timeout: 300
#include <cjson/cJSON.h>

#include "common.h"
#include "test.h"
#include "text.h"
#include "tokenizer.h"

/* The 2.1-era cases: pad and remove_semicolons, the other rules at their defaults. */
static const ptts_text_options *O(int pad, int semi) {
    static ptts_text_options o[8];
    static int k;
    ptts_text_options *p = &o[k++ & 7];
    *p = ptts_text_options_default();
    p->pad_with_spaces = pad;
    p->remove_semicolons = semi;
    return p;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len) *len = (size_t)n;
    }
    return buf;
}

static cJSON *load_json(const char *rel) {
    char *s = read_file(fixture_path(rel), NULL);
    REQUIRE(s != NULL);
    cJSON *j = cJSON_Parse(s);
    free(s);
    REQUIRE(j != NULL);
    return j;
}

/* Python's prepare_text_prompt on inputs chosen for the Unicode rules (expected values produced
 * by the reference function under CPython 3.11; NULL: the "empty" error). */
static const struct {
    const char *in;
    int pad, semi;
    const char *out;
    int guess;
} unicode_cases[] = {
    /* '\x1c\u3000hello\u2029\x85' */
    {"\034\343\200\200hello\342\200\251\302\205", 0, 0, "Hello.", 3},
    {"\034\343\200\200hello\342\200\251\302\205", 1, 0, "        Hello.", 3},
    /* '\u200bhi' */
    {"\342\200\213hi", 0, 0, "\342\200\213hi.", 3},
    {"\342\200\213hi", 1, 0, "        \342\200\213hi.", 3},
    /* 'a\u3000b\u3000c\u3000d\u3000e' */
    {"a\343\200\200b\343\200\200c\343\200\200d\343\200\200e", 0, 0,
     "A\343\200\200b\343\200\200c\343\200\200d\343\200\200e.", 1},
    {"a\343\200\200b\343\200\200c\343\200\200d\343\200\200e", 1, 0,
     "A\343\200\200b\343\200\200c\343\200\200d\343\200\200e.", 1},
    /* 'a\u200bb c d e' */
    {"a\342\200\213b c d e", 0, 0, "A\342\200\213b c d e.", 3},
    {"a\342\200\213b c d e", 1, 0, "        A\342\200\213b c d e.", 3},
    /* '\xdftra\xdfe' */
    {"\303\237tra\303\237e", 0, 0, "SStra\303\237e.", 3},
    {"\303\237tra\303\237e", 1, 0, "        SStra\303\237e.", 3},
    /* '\u0149' */
    {"\305\211", 0, 0, "\312\274N.", 3},
    {"\305\211", 1, 0, "        \312\274N.", 3},
    /* '\u01c6x' */
    {"\307\206x", 0, 0, "\307\204x.", 3},
    {"\307\206x", 1, 0, "        \307\204x.", 3},
    /* '\u01c5a' */
    {"\307\205a", 0, 0, "\307\204a.", 3},
    {"\307\205a", 1, 0, "        \307\204a.", 3},
    /* '\ufb01x' */
    {"\357\254\201x", 0, 0, "FIx.", 3},
    {"\357\254\201x", 1, 0, "        FIx.", 3},
    /* '\u1fb3' */
    {"\341\276\263", 0, 0, "\316\221\316\231.", 3},
    {"\341\276\263", 1, 0, "        \316\221\316\231.", 3},
    /* '\u1f88 ok' */
    {"\341\276\210 ok", 0, 0, "\341\274\210\316\231 ok.", 3},
    {"\341\276\210 ok", 1, 0, "        \341\274\210\316\231 ok.", 3},
    /* 'x\xb2' */
    {"x\302\262", 0, 0, "X\302\262.", 3},
    {"x\302\262", 1, 0, "        X\302\262.", 3},
    /* '\u216b' */
    {"\342\205\253", 0, 0, "\342\205\253.", 3},
    {"\342\205\253", 1, 0, "        \342\205\253.", 3},
    /* 'abc\u0301' */
    {"abc\314\201", 0, 0, "Abc\314\201.", 3},
    {"abc\314\201", 1, 0, "        Abc\314\201.", 3},
    /* '\u4e00' */
    {"\344\270\200", 0, 0, "\344\270\200.", 3},
    {"\344\270\200", 1, 0, "        \344\270\200.", 3},
    /* 'hi!' */
    {"hi!", 0, 0, "Hi!", 3},
    {"hi!", 1, 0, "        Hi!", 3},
    /* '\u0663' */
    {"\331\243", 0, 0, "\331\243.", 3},
    {"\331\243", 1, 0, "        \331\243.", 3},
    /* 'a  \r\n  b;c' */
    {"a  \015\012  b;c", 0, 0, "A   b;c.", 3},
    {"a  \015\012  b;c", 0, 1, "A   b,c.", 3},
    {"a  \015\012  b;c", 1, 0, "        A   b;c.", 3},
    {"a  \015\012  b;c", 1, 1, "        A   b,c.", 3},
    /* ' \t\x0b\x0c a\x1fb\x1d ' */
    {" \011\013\014 a\037b\035 ", 0, 0, "A\037b.", 3},
    {" \011\013\014 a\037b\035 ", 1, 0, "        A\037b.", 3},
    /* '\u2160 i' */
    {"\342\205\240 i", 0, 0, "\342\205\240 i.", 3},
    {"\342\205\240 i", 1, 0, "        \342\205\240 i.", 3},
    /* '\u24d0b' */
    {"\342\223\220b", 0, 0, "\342\222\266b.", 3},
    {"\342\223\220b", 1, 0, "        \342\222\266b.", 3},
    /* '\u0130x' */
    {"\304\260x", 0, 0, "\304\260x.", 3},
    {"\304\260x", 1, 0, "        \304\260x.", 3},
    /* 'i' */
    {"i", 0, 0, "I.", 3},
    {"i", 1, 0, "        I.", 3},
    /* '\xa0\xa0\u180e' */
    {"\302\240\302\240\341\240\216", 0, 0, "\341\240\216.", 3},
    {"\302\240\302\240\341\240\216", 1, 0, "        \341\240\216.", 3},
    /* 'one two three four five six' */
    {"one two three four five six", 0, 0, "One two three four five six.", 1},
    {"one two three four five six", 1, 0, "One two three four five six.", 1},
    /* 'one two three four' */
    {"one two three four", 0, 0, "One two three four.", 3},
    {"one two three four", 1, 0, "        One two three four.", 3},
    /* 'one\u2028two\u2029three\xa0four\u1680five' */
    {"one\342\200\250two\342\200\251three\302\240four\341\232\200five", 0, 0,
     "One\342\200\250two\342\200\251three\302\240four\341\232\200five.", 1},
    {"one\342\200\250two\342\200\251three\302\240four\341\232\200five", 1, 0,
     "One\342\200\250two\342\200\251three\302\240four\341\232\200five.", 1},
    /* '\u0131' */
    {"\304\261", 0, 0, "I.", 3},
    {"\304\261", 1, 0, "        I.", 3},
    /* '\u017f' */
    {"\305\277", 0, 0, "S.", 3},
    {"\305\277", 1, 0, "        S.", 3},
    /* '\u1e9e' */
    {"\341\272\236", 0, 0, "\341\272\236.", 3},
    {"\341\272\236", 1, 0, "        \341\272\236.", 3},
    /* 'tab\there' */
    {"tab\011here", 0, 0, "Tab\011here.", 3},
    {"tab\011here", 1, 0, "        Tab\011here.", 3},
    /* 'x;;  ;y' */
    {"x;;  ;y", 0, 0, "X;; ;y.", 3},
    {"x;;  ;y", 0, 1, "X,, ,y.", 3},
    {"x;;  ;y", 1, 0, "        X;; ;y.", 3},
    {"x;;  ;y", 1, 1, "        X,, ,y.", 3},
    /* '\u180e' */
    {"\341\240\216", 0, 0, "\341\240\216.", 3},
    {"\341\240\216", 1, 0, "        \341\240\216.", 3},
    /* '\xa0' */
    {"\302\240", 0, 0, NULL, 0},
    {"\302\240", 1, 0, NULL, 0},
};

/* ptts_text_options from a JSON object with the reference's keys (a fixture case or a config's
 * language_settings): replace_characters is null or an object of single characters. The table
 * points into the JSON and into `keys`/`vals` (room for 32 entries). */
static ptts_text_options opts_json(cJSON *c, const char *pad_key, const char **keys,
                                   const char **vals) {
    ptts_text_options o = ptts_text_options_default();
    o.pad_with_spaces = cJSON_IsTrue(cJSON_GetObjectItem(c, pad_key));
    o.remove_semicolons = cJSON_IsTrue(cJSON_GetObjectItem(c, "remove_semicolons"));
    o.append_terminal_punctuation =
        cJSON_IsTrue(cJSON_GetObjectItem(c, "append_terminal_punctuation"));
    o.capitalize_first_letter = cJSON_IsTrue(cJSON_GetObjectItem(c, "capitalize_first_letter"));
    cJSON *r = cJSON_GetObjectItem(c, "replace_characters"), *kv;
    int n = 0;
    if (cJSON_IsObject(r)) cJSON_ArrayForEach(kv, r) {
            REQUIRE(n < 32 && cJSON_IsString(kv));
            keys[n] = kv->string;
            vals[n] = kv->valuestring;
            n++;
        }
    o.n_replace = n;
    o.replace_from = keys;
    o.replace_to = vals;
    return o;
}

static void test_prepare_fixture(cJSON *root) {
    cJSON *cases = cJSON_GetObjectItem(root, "prepare_text_prompt");
    REQUIRE(cJSON_IsArray(cases));
    int count = 0, errors = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *in = cJSON_GetObjectItem(c, "input")->valuestring;
        const char *keys[32], *vals[32];
        ptts_text_options o = opts_json(c, "pad_with_spaces", keys, vals);
        cJSON *err = cJSON_GetObjectItem(c, "error");
        char *out = NULL;
        int guess = -1;
        ptts_error e = {0};
        int rc = ptts_text_prepare(in, &o, &out, &guess, &e);
        if (err) {
            CHECKF(rc == PTTS_E_TEXT, "input '%s': rc %d", in, rc);
            CHECKF(strcmp(e.msg, err->valuestring) == 0, "input '%s': message '%s'", in, e.msg);
            CHECK(out == NULL);
            errors++;
        } else {
            const char *want = cJSON_GetObjectItem(c, "text")->valuestring;
            int want_guess = cJSON_GetObjectItem(c, "frames_after_eos_guess")->valueint;
            CHECKF(rc == PTTS_OK, "input '%s': %s", in, e.msg);
            CHECKF(out && strcmp(out, want) == 0,
                   "input '%s' pad %d semi %d append %d cap %d replace %d: got '%s' want '%s'", in,
                   o.pad_with_spaces, o.remove_semicolons, o.append_terminal_punctuation,
                   o.capitalize_first_letter, o.n_replace, out ? out : "(null)", want);
            CHECKF(guess == want_guess, "input '%s': guess %d want %d", in, guess, want_guess);
        }
        free(out);
        count++;
    }
    CHECK(count == 371);
    CHECK(errors > 0);
}

static void test_prepare_unicode(void) {
    for (size_t i = 0; i < sizeof unicode_cases / sizeof unicode_cases[0]; i++) {
        char *out = NULL;
        int guess = -1;
        ptts_error e = {0};
        int rc = ptts_text_prepare(
            unicode_cases[i].in, O(unicode_cases[i].pad, unicode_cases[i].semi), &out, &guess, &e);
        if (!unicode_cases[i].out) {
            CHECKF(rc == PTTS_E_TEXT, "unicode case %zu: rc %d", i, rc);
            CHECK(strcmp(e.msg, "Text prompt cannot be empty") == 0);
        } else {
            CHECKF(rc == PTTS_OK, "unicode case %zu: %s", i, e.msg);
            CHECKF(out && strcmp(out, unicode_cases[i].out) == 0, "unicode case %zu: got '%s'", i,
                   out ? out : "(null)");
            CHECKF(guess == unicode_cases[i].guess, "unicode case %zu: guess %d", i, guess);
        }
        free(out);
    }
}

/* Bytes that are not valid UTF-8 stay as they are (no property: not space, not alphanumeric,
 * never upper-cased); control characters are ordinary non-space characters. */
static void test_prepare_invalid(void) {
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"\377\376hello\200", "\377\376hello\200."},
        {" \200abc ", "\200abc."},
        {"abc\303", "Abc\303."},             /* truncated 2-byte sequence at the end */
        {"\303abc", "\303abc."},             /* truncated sequence at the start */
        {"\355\240\200x", "\355\240\200x."}, /* encoded surrogate: invalid */
        {"\300\257 a", "\300\257 a."},       /* overlong '/' */
        {"\001\002abc\177", "\001\002abc\177."},
        {"\033[31mred", "\033[31mred."},
        {"\364\220\200\200", "\364\220\200\200."},   /* above U+10FFFF */
        {"x\360\237\230\200", "X\360\237\230\200."}, /* emoji: valid, So, not alphanumeric */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        int guess;
        ptts_error e = {0};
        int rc = ptts_text_prepare(cases[i].in, O(0, 0), &out, &guess, &e);
        CHECKF(rc == PTTS_OK, "invalid case %zu: %s", i, e.msg);
        CHECKF(out && strcmp(out, cases[i].out) == 0, "invalid case %zu: got '%s'", i,
               out ? out : "(null)");
        free(out);
    }
    /* Every single byte value, alone and around text: never crashes, always a result or the
     * empty-text error. */
    for (int b = 1; b < 256; b++) {
        char in[8] = {(char)b, 'a', (char)b, 0};
        char *out = NULL;
        int guess;
        int rc = ptts_text_prepare(in, O(1, 1), &out, &guess, NULL);
        CHECK(rc == PTTS_OK && out != NULL);
        free(out);
        char one[2] = {(char)b, 0};
        rc = ptts_text_prepare(one, O(0, 0), &out, &guess, NULL);
        CHECK(rc == PTTS_OK || rc == PTTS_E_TEXT);
        CHECK((rc == PTTS_OK) == (out != NULL));
        free(out);
    }
    char *out = (char *)1;
    int guess;
    CHECK(ptts_text_prepare(NULL, O(0, 0), &out, &guess, NULL) == PTTS_E_INVALID);
}

/* The replace table: one pass (a value is not mapped again), a later duplicate key wins, keys
 * that are not one character are refused. */
static void test_prepare_replace(void) {
    const char *from[] = {"a", "b", "\xc3\x9f", "a"}, *to[] = {"bb", "X", "ss", "c"};
    ptts_text_options o = ptts_text_options_default();
    o.capitalize_first_letter = 0;
    o.append_terminal_punctuation = 0;
    o.replace_from = from;
    o.replace_to = to;
    o.n_replace = 4;
    char *out = NULL;
    int guess;
    ptts_error e = {0};
    CHECK(ptts_text_prepare("ab \xc3\x9f\t\tb!, x", &o, &out, &guess, &e) == PTTS_OK);
    CHECKF(out && strcmp(out, "cX ss X! x") == 0, "got '%s'", out ? out : e.msg);
    free(out);
    const char *bad[] = {"ab"}, *bad2[] = {""}, *val[] = {"x"};
    o.n_replace = 1;
    o.replace_from = bad;
    o.replace_to = val;
    CHECK(ptts_text_prepare("ab", &o, &out, &guess, &e) == PTTS_E_INVALID);
    CHECK(strstr(e.msg, "replace_characters") != NULL);
    o.replace_from = bad2;
    CHECK(ptts_text_prepare("ab", &o, &out, &guess, &e) == PTTS_E_INVALID);
    o.replace_from = from;
    o.replace_to = NULL;
    CHECK(ptts_text_prepare("ab", &o, &out, &guess, &e) == PTTS_E_INVALID);
}

/* The chunks of one split against a fixture list of {chunk, model_text, model_tokens,
 * frames_after_eos} objects (language_cases). */
static void check_chunks(const char *what, const char *in, const ptts_chunk *chunks, int n,
                         cJSON *want) {
    CHECKF(n == cJSON_GetArraySize(want), "%s '%.40s': %d chunks, want %d", what, in, n,
           cJSON_GetArraySize(want));
    for (int i = 0; i < n && i < cJSON_GetArraySize(want); i++) {
        cJSON *w = cJSON_GetArrayItem(want, i);
        const char *wc = cJSON_GetObjectItem(w, "chunk")->valuestring;
        const char *wm = cJSON_GetObjectItem(w, "model_text")->valuestring;
        cJSON *wt = cJSON_GetObjectItem(w, "model_tokens");
        int wf = cJSON_GetObjectItem(w, "frames_after_eos")->valueint;
        CHECKF(strcmp(chunks[i].text, wc) == 0, "%s '%.40s' chunk %d: '%s' want '%s'", what, in, i,
               chunks[i].text, wc);
        CHECKF(strcmp(chunks[i].model_text, wm) == 0, "%s '%.40s' model_text %d: '%s' want '%s'",
               what, in, i, chunks[i].model_text, wm);
        CHECKF(chunks[i].guess + 2 == wf, "%s '%.40s' chunk %d: F %d want %d", what, in, i,
               chunks[i].guess + 2, wf);
        int same = chunks[i].n_ids == cJSON_GetArraySize(wt);
        for (int k = 0; same && k < chunks[i].n_ids; k++)
            same = chunks[i].ids[k] == cJSON_GetArrayItem(wt, k)->valueint;
        CHECKF(same, "%s '%.40s' chunk %d: ids differ (%d ids)", what, in, i, chunks[i].n_ids);
    }
}

/* language_settings + language_cases: each shipped config's text options, prepare and split at
 * max_tokens 20 and 50 (sp_unigram standing in for the language's tokenizer). */
static void test_language(cJSON *root, const ptts_tokenizer *tok) {
    cJSON *settings = cJSON_GetObjectItem(root, "language_settings");
    cJSON *cases = cJSON_GetObjectItem(root, "language_cases"), *c;
    REQUIRE(cJSON_IsObject(settings) && cJSON_IsArray(cases));
    int count = 0, errors = 0;
    cJSON_ArrayForEach(c, cases) {
        const char *cfg = cJSON_GetObjectItem(c, "config")->valuestring;
        const char *in = cJSON_GetObjectItem(c, "input")->valuestring;
        cJSON *s = cJSON_GetObjectItem(settings, cfg);
        REQUIRE(s != NULL);
        const char *keys[32], *vals[32];
        ptts_text_options o = opts_json(s, "pad_with_spaces_for_short_inputs", keys, vals);
        char *out = NULL;
        int guess = -1;
        ptts_error e = {0};
        int rc = ptts_text_prepare(in, &o, &out, &guess, &e);
        cJSON *perr = cJSON_GetObjectItem(c, "prepare_error");
        if (perr) {
            CHECKF(rc == PTTS_E_TEXT && strcmp(e.msg, perr->valuestring) == 0,
                   "%s '%s': rc %d '%s'", cfg, in, rc, e.msg);
            errors++;
        } else {
            CHECKF(rc == PTTS_OK &&
                       strcmp(out, cJSON_GetObjectItem(c, "prepared")->valuestring) == 0,
                   "%s '%s': got '%s'", cfg, in, out ? out : e.msg);
            CHECK(guess == cJSON_GetObjectItem(c, "frames_after_eos_guess")->valueint);
        }
        free(out);
        static const int maxes[2] = {20, 50};
        for (int k = 0; k < 2; k++) {
            char key[32];
            snprintf(key, sizeof key, "split_%d", maxes[k]);
            cJSON *want = cJSON_GetObjectItem(c, key);
            snprintf(key, sizeof key, "split_%d_error", maxes[k]);
            cJSON *werr = cJSON_GetObjectItem(c, key);
            ptts_chunk *chunks = NULL;
            int n = 0;
            rc = ptts_text_split(tok, in, maxes[k], &o, &chunks, &n, &e);
            if (werr) {
                CHECKF(rc == PTTS_E_TEXT && strcmp(e.msg, werr->valuestring) == 0,
                       "%s '%s' split: rc %d '%s'", cfg, in, rc, e.msg);
            } else {
                CHECKF(rc == PTTS_OK, "%s '%s' split %d: %s", cfg, in, maxes[k], e.msg);
                REQUIRE(want != NULL);
                check_chunks(cfg, in, chunks, n, want);
            }
            ptts_chunks_free(chunks, n);
        }
        count++;
    }
    CHECK(count == 350);
    CHECK(errors > 0);
}

/* split_backends: the same split through the .model and its tokenizer.json. */
static void test_split_backends(cJSON *root) {
    cJSON *sb = cJSON_GetObjectItem(root, "split_backends");
    cJSON *files = cJSON_GetObjectItem(sb, "tokenizers");
    int max_tokens = cJSON_GetObjectItem(sb, "max_tokens")->valueint;
    ptts_tokenizer *tok[2] = {NULL, NULL};
    ptts_error e = {0};
    for (int k = 0; k < 2; k++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tokenizer/%s", cJSON_GetArrayItem(files, k)->valuestring);
        REQUIRE(ptts_tokenizer_load(&tok[k], fixture_path(rel), &e) == PTTS_OK);
    }
    ptts_text_options o = ptts_text_options_default();
    int count = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(sb, "cases")) {
        const char *in = cJSON_GetObjectItem(c, "input")->valuestring;
        static const char *side[2] = {"model", "json"};
        for (int k = 0; k < 2; k++) {
            cJSON *want = cJSON_GetObjectItem(c, side[k]);
            ptts_chunk *chunks = NULL;
            int n = 0;
            CHECKF(ptts_text_split(tok[k], in, max_tokens, &o, &chunks, &n, &e) == PTTS_OK,
                   "%s '%s': %s", side[k], in, e.msg);
            int same = n == cJSON_GetArraySize(want);
            for (int i = 0; same && i < n; i++)
                same = strcmp(chunks[i].text, cJSON_GetArrayItem(want, i)->valuestring) == 0;
            CHECKF(same, "split_backends %s '%.60s': %d chunks, first '%s'", side[k], in, n,
                   n ? chunks[0].text : "");
            ptts_chunks_free(chunks, n);
        }
        count++;
    }
    CHECK(count == 52);
    ptts_tokenizer_free(tok[0]);
    ptts_tokenizer_free(tok[1]);
}

static void test_split_fixture(cJSON *root) {
    ptts_tokenizer *tok = NULL;
    ptts_error e = {0};
    char rel[256];
    snprintf(rel, sizeof rel, "tokenizer/%s", cJSON_GetObjectItem(root, "tokenizer")->valuestring);
    REQUIRE(ptts_tokenizer_load(&tok, fixture_path(rel), &e) == PTTS_OK);
    cJSON *cases = cJSON_GetObjectItem(root, "split_into_best_sentences");
    REQUIRE(cJSON_IsArray(cases));
    ptts_text_options o = ptts_text_options_default();
    int count = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *in = cJSON_GetObjectItem(c, "input")->valuestring;
        int max_tokens = cJSON_GetObjectItem(c, "max_tokens")->valueint;
        cJSON *want = cJSON_GetObjectItem(c, "chunks");
        cJSON *prep = cJSON_GetObjectItem(c, "prepared_chunks");
        cJSON *counts = cJSON_GetObjectItem(c, "chunk_token_counts");
        ptts_chunk *chunks = NULL;
        int n = -1;
        int rc = ptts_text_split(tok, in, max_tokens, &o, &chunks, &n, &e);
        CHECKF(rc == PTTS_OK, "split '%s': %s", in, e.msg);
        CHECKF(n == cJSON_GetArraySize(want), "split '%.40s' max %d: %d chunks, want %d", in,
               max_tokens, n, cJSON_GetArraySize(want));
        for (int i = 0; i < n && i < cJSON_GetArraySize(want); i++) {
            const char *w = cJSON_GetArrayItem(want, i)->valuestring;
            cJSON *p = cJSON_GetArrayItem(prep, i);
            const char *wm = cJSON_GetArrayItem(p, 0)->valuestring;
            CHECKF(strcmp(chunks[i].text, w) == 0, "split '%.40s' max %d chunk %d: '%s' want '%s'",
                   in, max_tokens, i, chunks[i].text, w);
            CHECKF(strcmp(chunks[i].model_text, wm) == 0,
                   "split '%.40s' max %d chunk %d: model_text '%s' want '%s'", in, max_tokens, i,
                   chunks[i].model_text, wm);
            CHECK(chunks[i].guess == cJSON_GetArrayItem(p, 1)->valueint);
            CHECKF(chunks[i].n_ids == cJSON_GetArrayItem(counts, i)->valueint,
                   "split '%.40s' max %d chunk %d: %d ids want %d", in, max_tokens, i,
                   chunks[i].n_ids, cJSON_GetArrayItem(counts, i)->valueint);
            /* The ids are model_text tokenized as it is. */
            int *ids = NULL, nids = 0;
            REQUIRE(ptts_tokenizer_encode(tok, wm, strlen(wm), &ids, &nids, &e) == PTTS_OK);
            CHECK(chunks[i].n_ids == nids);
            CHECK(nids == 0 ||
                  (chunks[i].ids && memcmp(ids, chunks[i].ids, (size_t)nids * sizeof *ids) == 0));
            free(ids);
        }
        ptts_chunks_free(chunks, n);
        count++;
    }
    CHECK(count == 150);
    ptts_tokenizer_free(tok);
}

/* The generation cases of the fixtures' manifests: the chunks' prepared texts (what the model
 * is fed), ids and F. tokenizer/pad: the case's own config where it is not the manifest's
 * (generate_short_pad: config_pad.yaml), else NULL / -1. */
static void test_split_manifest(const char *manifest, const char *case_name, const char *tokenizer,
                                int pad) {
    cJSON *m = load_json(manifest);
    cJSON *cfg = cJSON_GetObjectItem(m, "config");
    const char *tp =
        tokenizer ? tokenizer
                  : cJSON_GetObjectItem(
                        cJSON_GetObjectItem(cJSON_GetObjectItem(cfg, "flow_lm"), "lookup_table"),
                        "tokenizer_path")
                        ->valuestring;
    char rel[512];
    snprintf(rel, sizeof rel, "%.*s/%s", (int)(strchr(manifest, '/') - manifest), manifest, tp);
    ptts_tokenizer *tok = NULL;
    ptts_error e = {0};
    REQUIRE(ptts_tokenizer_load(&tok, fixture_path(rel), &e) == PTTS_OK);
    cJSON *gc = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "cases"), case_name);
    REQUIRE(gc != NULL);
    const char *text = cJSON_GetObjectItem(gc, "text")->valuestring;
    int max_tokens = cJSON_GetObjectItem(gc, "max_tokens")->valueint;
    const char *keys[32], *vals[32];
    ptts_text_options o = opts_json(cfg, "pad_with_spaces_for_short_inputs", keys, vals);
    if (pad >= 0) o.pad_with_spaces = pad;
    cJSON *want = cJSON_GetObjectItem(gc, "chunks");
    ptts_chunk *chunks = NULL;
    int n = -1;
    CHECKF(ptts_text_split(tok, text, max_tokens, &o, &chunks, &n, &e) == PTTS_OK, "%s", e.msg);
    CHECKF(n == cJSON_GetArraySize(want), "%s %s: %d chunks", manifest, case_name, n);
    for (int i = 0; i < n && i < cJSON_GetArraySize(want); i++) {
        cJSON *w = cJSON_GetArrayItem(want, i);
        const char *wt = cJSON_GetObjectItem(w, "text")->valuestring;
        cJSON *wids = cJSON_GetObjectItem(w, "tokens");
        CHECKF(strcmp(chunks[i].model_text, wt) == 0, "%s %s chunk %d: '%s' want '%s'", manifest,
               case_name, i, chunks[i].model_text, wt);
        CHECK(chunks[i].guess + 2 == cJSON_GetObjectItem(w, "frames_after_eos")->valueint);
        CHECKF(chunks[i].n_ids == cJSON_GetArraySize(wids), "%s chunk %d: %d ids", manifest, i,
               chunks[i].n_ids);
        for (int k = 0; k < chunks[i].n_ids && k < cJSON_GetArraySize(wids); k++)
            CHECKF(chunks[i].ids[k] == cJSON_GetArrayItem(wids, k)->valueint,
                   "%s chunk %d id %d: %d", manifest, i, k, chunks[i].ids[k]);
    }
    ptts_chunks_free(chunks, n);
    ptts_tokenizer_free(tok);
    cJSON_Delete(m);
}

/* Splitting never crashes on invalid UTF-8 and control characters; bad arguments are refused. */
static void test_split_robust(const ptts_tokenizer *tok) {
    static const char *inputs[] = {
        "\377\376hello\200. World\303",
        "\001\002abc\177. \033[0m def! \x1f\x1c ghi",
        "\355\240\200. \300\257? \364\220\200\200...",
        "... !!! ??? ,,, ;;; :::",
        ". . . . . . . . . . . . . . . . . . . . . . . . . . . . .",
        ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,",
        "\t\v\f x \x85",
    };
    ptts_error e = {0};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        for (int max_tokens = 1; max_tokens <= 50; max_tokens += 7) {
            ptts_chunk *chunks = NULL;
            int n = -1;
            int rc = ptts_text_split(tok, inputs[i], max_tokens, O(1, 1), &chunks, &n, &e);
            CHECKF(rc == PTTS_OK, "robust input %zu: %s", i, e.msg);
            for (int k = 0; k < n; k++)
                CHECK(chunks[k].text != NULL);
            ptts_chunks_free(chunks, n);
        }
    }
    for (int b = 1; b < 256; b++) {
        char in[4] = {(char)b, '.', (char)b, 0};
        ptts_chunk *chunks = NULL;
        int n = -1;
        int rc = ptts_text_split(tok, in, 8, O(0, 0), &chunks, &n, &e);
        CHECK(rc == PTTS_OK || rc == PTTS_E_TEXT);
        ptts_chunks_free(chunks, n);
    }
    ptts_chunk *chunks = NULL;
    int n = 0;
    CHECK(ptts_text_split(tok, "   \n ", 50, O(0, 0), &chunks, &n, &e) == PTTS_E_TEXT);
    CHECK(strcmp(e.msg, "Text prompt cannot be empty") == 0);
    CHECK(ptts_text_split(tok, "hi", 0, O(0, 0), &chunks, &n, &e) == PTTS_E_INVALID);
    CHECK(ptts_text_split(NULL, "hi", 8, O(0, 0), &chunks, &n, &e) == PTTS_E_INVALID);
    CHECK(ptts_text_split(tok, NULL, 8, O(0, 0), &chunks, &n, &e) == PTTS_E_INVALID);
}

/* ptts_chunks_limit: a chunk of more than hard_max ids (no punctuation at all) is cut at word
 * boundaries, each piece prepared again like any chunk (capitalised, a final period, the pad of
 * short pieces); chunks within hard_max are kept as they are. */
static void test_chunks_limit(const ptts_tokenizer *tok) {
    char text[4096];
    size_t k = 0;
    for (int i = 0; i < 300; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, "%sword", i ? " " : "");
    ptts_text_options o = ptts_text_options_default();
    o.pad_with_spaces = 1;
    ptts_chunk *chunks = NULL;
    int n = 0;
    ptts_error e = {0};
    REQUIRE(ptts_text_split(tok, "Short one. Then more", 50, &o, &chunks, &n, &e) == PTTS_OK);
    REQUIRE(ptts_chunks_limit(tok, &chunks, &n, 50, 500, &o, &e) == PTTS_OK);
    CHECK(n == 1 && strcmp(chunks[0].model_text, "        Short one. Then more.") == 0);
    ptts_chunks_free(chunks, n);
    REQUIRE(ptts_text_split(tok, text, 50, &o, &chunks, &n, &e) == PTTS_OK);
    REQUIRE(n == 1);
    int total = chunks[0].n_ids;
    CHECK(total > 100);
    REQUIRE(ptts_chunks_limit(tok, &chunks, &n, 50, 100, &o, &e) == PTTS_OK);
    CHECKF(n > 1 && n <= total / 40 + 2, "%d pieces of %d ids", n, total);
    for (int i = 0; i < n; i++) {
        char *want = NULL;
        int guess = 0, *ids = NULL, nids = 0;
        REQUIRE(ptts_text_prepare(chunks[i].text, &o, &want, &guess, &e) == PTTS_OK);
        CHECKF(strcmp(chunks[i].model_text, want) == 0, "piece %d: '%.40s'", i,
               chunks[i].model_text);
        CHECK(chunks[i].model_text[0] == 'W' || chunks[i].model_text[0] == ' ');
        CHECK(chunks[i].guess == guess);
        REQUIRE(ptts_tokenizer_encode(tok, want, strlen(want), &ids, &nids, &e) == PTTS_OK);
        CHECK(nids == chunks[i].n_ids &&
              memcmp(ids, chunks[i].ids, (size_t)nids * sizeof *ids) == 0);
        CHECK(chunks[i].n_ids <= 52);
        free(ids);
        free(want);
    }
    ptts_chunks_free(chunks, n);
}

static char *repeat(const char *unit, size_t target, size_t *len) {
    size_t ul = strlen(unit), reps = target / ul + 1;
    char *s = malloc(reps * ul + 1);
    REQUIRE(s != NULL);
    for (size_t i = 0; i < reps; i++)
        memcpy(s + i * ul, unit, ul);
    s[reps * ul] = '\0';
    *len = reps * ul;
    return s;
}

/* Several megabytes, timed. The split runs the tokenizer three times over the text (the whole
 * text, an oversized sentence again, each chunk) plus decoding; everything else is linear, so the
 * split must stay within a small multiple of one encode of the same text. Anything quadratic in
 * bytes or ids (2 M bytes, ~0.8 M ids) would be thousands of times slower. Preparing is timed
 * against an absolute bound for the same reason. */
static void test_huge(const ptts_tokenizer *tok) {
    static const struct {
        const char *name, *unit;
        int split;
    } kinds[] = {
        {"sentences", "It goes on for a while, with commas; and colons: all of them. ", 1},
        {"one endless sentence", "word word, word ", 1},
        {"no punctuation at all", "word ", 1},
        {"whitespace runs", " \n\r  \t\xe3\x80\x80 x ", 0},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t len;
        char *s = repeat(kinds[k].unit, (size_t)2 << 20, &len);
        ptts_error e = {0};
        double t0 = ptts_now();
        if (kinds[k].split) {
            int *ids = NULL, nids = 0;
            CHECK(ptts_tokenizer_encode(tok, s, len, &ids, &nids, &e) == PTTS_OK);
            free(ids);
            double t_enc = ptts_now() - t0;
            ptts_chunk *chunks = NULL;
            int n = 0;
            t0 = ptts_now();
            CHECKF(ptts_text_split(tok, s, 50, O(0, 0), &chunks, &n, &e) == PTTS_OK, "%s", e.msg);
            double t = ptts_now() - t0;
            CHECK(n >= 1);
            printf("huge text (%s): %.1f MB, %d ids, %d chunks: split %.3f s, one encode %.3f s\n",
                   kinds[k].name, (double)len / 1e6, nids, n, t, t_enc);
            CHECKF(t <= 8.0 * t_enc + 1.0, "%s: split %.3f s vs encode %.3f s", kinds[k].name, t,
                   t_enc);
            ptts_chunks_free(chunks, n);
        } else {
            char *out = NULL;
            int guess;
            CHECK(ptts_text_prepare(s, O(1, 1), &out, &guess, &e) == PTTS_OK);
            free(out);
            double t = ptts_now() - t0;
            printf("huge text (%s): %.1f MB: prepare %.3f s\n", kinds[k].name, (double)len / 1e6,
                   t);
            CHECKF(t < 5.0, "%s: prepare took %.3f s", kinds[k].name, t);
        }
        free(s);
    }
}

int main(void) {
    cJSON *root = load_json("text_cases.json");
    test_prepare_fixture(root);
    test_prepare_unicode();
    test_prepare_invalid();
    test_prepare_replace();
    test_split_fixture(root);
    test_split_manifest("tiny/manifest.json", "generate", NULL, -1);
    test_split_manifest("tiny/manifest.json", "generate_short", NULL, -1);
    test_split_manifest("tiny/manifest.json", "generate_short_pad",
                        "../tokenizer/sp_unigram_bytefb.model", 1);
    test_split_manifest("full/manifest.json", "generate", NULL, -1);
    ptts_tokenizer *tok = NULL;
    ptts_error e = {0};
    REQUIRE(ptts_tokenizer_load(&tok, fixture_path("tokenizer/sp_unigram.model"), &e) == PTTS_OK);
    test_language(root, tok);
    test_split_backends(root);
    test_split_robust(tok);
    test_chunks_limit(tok);
    test_huge(tok);
    ptts_tokenizer_free(tok);
    cJSON_Delete(root);
    return test_summary();
}
