/*
 * test_safetensors.c - the safetensors reader against hostile input, the writer round trip, the
 * float conversions (half.h) against straightforward references, the fixture checkpoint and
 * st_load_f32.
 *
 * Hostile files are built in memory ([u64 LE length][JSON][data]) and opened with
 * st_open_memory from a buffer of exactly their size (so ASan sees any overread); each must fail
 * with the expected code and a message naming the file (and the tensor where there is one).
 * Every prefix of a valid file must fail too. Conversions: all 65536 F16 and BF16 values against
 * a decoder written from the definition, every rounding midpoint between adjacent half values
 * and its neighbours, and a few million random floats against a rounding reference in double.
 */
// ctest-label: unit
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors.h"
#include "test.h"

#define NAME "x.safetensors"

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* [u64 LE strlen(json)][json][data_len bytes: i * 7 + 1]; exact-size allocation. */
static uint8_t *mk(const char *json, size_t data_len, size_t *len) {
    size_t n = strlen(json);
    *len = 8 + n + data_len;
    uint8_t *b = malloc(*len);
    REQUIRE(b != NULL);
    for (int k = 0; k < 8; k++)
        b[k] = (uint8_t)((uint64_t)n >> (8 * k));
    memcpy(b + 8, json, n);
    for (size_t i = 0; i < data_len; i++)
        b[8 + n + i] = (uint8_t)(i * 7 + 1);
    return b;
}

static void expect_fail_buf(const uint8_t *b, size_t len, int code, const char *sub, int line) {
    st_file *f = (st_file *)&f; /* must be reset to NULL */
    ptts_error e = {0};
    int rc = st_open_memory(&f, b, len, NAME, &e);
    CHECKF(rc == code, "line %d: rc %d (%s), want %d", line, rc, e.msg, code);
    CHECKF(rc == 0 || f == NULL, "line %d: out not cleared", line);
    CHECKF(rc == 0 || e.code == rc, "line %d: e.code %d", line, e.code);
    CHECKF(rc == 0 || strncmp(e.msg, NAME ": ", strlen(NAME) + 2) == 0,
           "line %d: message does not name the file: %s", line, e.msg);
    CHECKF(!sub || strstr(e.msg, sub), "line %d: message \"%s\" lacks \"%s\"", line, e.msg, sub);
    if (rc == 0) st_close(f);
}

static void expect_fail_(const char *json, size_t data_len, int code, const char *sub, int line) {
    size_t len;
    uint8_t *b = mk(json, data_len, &len);
    expect_fail_buf(b, len, code, sub, line);
    free(b);
}
#define FAIL(json, dl, code, sub) expect_fail_(json, dl, code, sub, __LINE__)

static st_file *open_ok_(const char *json, size_t data_len, uint8_t **keep, int line) {
    size_t len;
    uint8_t *b = mk(json, data_len, &len);
    st_file *f = NULL;
    ptts_error e = {0};
    int rc = st_open_memory(&f, b, len, NAME, &e);
    CHECKF(rc == 0, "line %d: %s", line, e.msg);
    *keep = b;
    return rc == 0 ? f : NULL;
}
#define OPEN_OK(json, dl, keep) open_ok_(json, dl, keep, __LINE__)

#define ENT(dt, shape, offs) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"
#define KV(name, dt, shape, offs) "\"" name "\":" ENT(dt, shape, offs)

static void test_hostile(void) {
    /* too short, header length vs file */
    uint8_t raw[16] = {0};
    for (size_t l = 0; l < 8; l++)
        expect_fail_buf(raw, l, PTTS_E_FORMAT, NULL, __LINE__);
    expect_fail_buf(raw, 8, PTTS_E_FORMAT, "does not start", __LINE__); /* length 0 */
    uint64_t lens[] = {9, 100, (uint64_t)1 << 32, (uint64_t)1 << 63, UINT64_MAX};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        uint8_t b[10] = {0, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
        for (int k = 0; k < 8; k++)
            b[k] = (uint8_t)(lens[i] >> (8 * k));
        expect_fail_buf(b, sizeof b, PTTS_E_FORMAT, "exceeds the file", __LINE__);
    }
    { /* a header of 100 MB + 1 in a file large enough: refused by the cap, not parsed */
        size_t hl = 100000001, len = 8 + hl;
        uint8_t *b = calloc(1, len);
        REQUIRE(b != NULL);
        for (int k = 0; k < 8; k++)
            b[k] = (uint8_t)((uint64_t)hl >> (8 * k));
        b[8] = '{';
        expect_fail_buf(b, len, PTTS_E_FORMAT, "too large", __LINE__);
        free(b);
    }

    /* JSON */
    FAIL("{\"a\":", 0, PTTS_E_FORMAT, "not valid JSON");
    FAIL("{\"a\" 1}", 0, PTTS_E_FORMAT, "not valid JSON");
    FAIL("{,}", 0, PTTS_E_FORMAT, "not valid JSON");
    FAIL("{\"a", 0, PTTS_E_FORMAT, "not valid JSON");
    FAIL("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4, PTTS_E_FORMAT,
         "not valid JSON");
    FAIL("[1, 2]", 0, PTTS_E_FORMAT, "does not start");
    FAIL("\"str\"", 0, PTTS_E_FORMAT, "does not start");
    FAIL("42", 0, PTTS_E_FORMAT, "does not start");
    FAIL(" {}", 0, PTTS_E_FORMAT, "does not start");
    FAIL("{} x", 0, PTTS_E_FORMAT, "trailing");
    FAIL("{}{}", 0, PTTS_E_FORMAT, "trailing");
    {
        static const char nul_pad[] = "{}\0\0\0\0\0\0";
        uint8_t b[16] = {8};
        memcpy(b + 8, nul_pad, 8);
        expect_fail_buf(b, sizeof b, PTTS_E_FORMAT, "control byte", __LINE__);
    }

    /* entries */
    FAIL("{\"foo\":1}", 0, PTTS_E_FORMAT, "tensor foo: entry is not an object");
    FAIL("{\"foo\":[1]}", 0, PTTS_E_FORMAT, "tensor foo: entry is not an object");
    FAIL("{\"foo\":\"F32\"}", 0, PTTS_E_FORMAT, "tensor foo: entry is not an object");
    FAIL("{\"foo\":null}", 0, PTTS_E_FORMAT, "tensor foo: entry is not an object");
    FAIL("{\"foo\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, PTTS_E_FORMAT,
         "tensor foo: missing \"dtype\"");
    FAIL("{\"foo\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, PTTS_E_FORMAT,
         "tensor foo: missing \"shape\"");
    FAIL("{\"foo\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, PTTS_E_FORMAT,
         "tensor foo: missing \"data_offsets\"");
    FAIL("{\"foo\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
         PTTS_E_FORMAT, "duplicate key");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[0,4]") ",\"bar\":1}", 4, PTTS_E_FORMAT, "tensor bar");

    /* wrong types */
    FAIL("{\"foo\":{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, PTTS_E_FORMAT,
         "tensor foo: dtype is not a string");
    FAIL("{\"foo\":" ENT("F32", "\"x\"", "[0,4]") "}", 4, PTTS_E_FORMAT, "shape is not an array");
    FAIL("{\"foo\":" ENT("F32", "{}", "[0,4]") "}", 4, PTTS_E_FORMAT, "shape is not an array");
    FAIL("{\"foo\":" ENT("F32", "[1.5]", "[0,6]") "}", 6, PTTS_E_FORMAT, "shape[0]");
    FAIL("{\"foo\":" ENT("F32", "[true]", "[0,4]") "}", 4, PTTS_E_FORMAT, "shape[0]");
    FAIL("{\"foo\":" ENT("F32", "[1,[1]]", "[0,4]") "}", 4, PTTS_E_FORMAT, "shape[1]");
    FAIL("{\"foo\":" ENT("F32", "[\"1\"]", "[0,4]") "}", 4, PTTS_E_FORMAT, "shape[0]");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[0]") "}", 4, PTTS_E_FORMAT, "data_offsets is not");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[0,4,8]") "}", 8, PTTS_E_FORMAT, "data_offsets is not");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[\"0\",4]") "}", 4, PTTS_E_FORMAT, "data_offsets is not");
    FAIL("{\"foo\":" ENT("F32", "[1]", "{\"0\":4}") "}", 4, PTTS_E_FORMAT, "data_offsets is not");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[-4,0]") "}", 4, PTTS_E_FORMAT, "data_offsets is not");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[0.5,4.5]") "}", 8, PTTS_E_FORMAT, "data_offsets is not");
    FAIL("{\"foo\":" ENT("F32", "[1]", "null") "}", 4, PTTS_E_FORMAT, "data_offsets is not");

    /* shapes */
    FAIL("{\"foo\":" ENT("F32", "[-1]", "[0,4]") "}", 4, PTTS_E_FORMAT, "tensor foo: shape[0]");
    FAIL("{\"foo\":" ENT("F32", "[2,-3]", "[0,4]") "}", 4, PTTS_E_FORMAT, "tensor foo: shape[1]");
    FAIL("{\"foo\":" ENT("F32", "[1e300]", "[0,4]") "}", 4, PTTS_E_FORMAT, "shape[0]");
    FAIL("{\"foo\":" ENT("F32", "[1073741824,1073741824,1073741824]", "[0,4]") "}", 4,
         PTTS_E_FORMAT, "tensor foo: shape product overflows");
    FAIL("{\"foo\":" ENT("U8", "[4294967296,4294967296]", "[0,4]") "}", 4, PTTS_E_FORMAT,
         "overflows");
    FAIL("{\"foo\":" ENT("F32", "[536870912,536870912,4]", "[0,4]") "}", 4, PTTS_E_FORMAT,
         "overflows"); /* 2^60 elements: 8-byte elements would not fit an int64 byte count */
    FAIL("{\"foo\":" ENT("F32", "[1,1,1,1,1,1,1,1,1]", "[0,4]") "}", 4, PTTS_E_UNSUPPORTED,
         "tensor foo: 9 dimensions");

    /* offsets and sizes */
    FAIL("{\"foo\":" ENT("F32", "[3]", "[0,12]") "}", 8, PTTS_E_FORMAT,
         NAME ": tensor foo: data_offsets [0, 12] out of range (data section is 8 bytes)");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[8,4]") "}", 8, PTTS_E_FORMAT, "out of range");
    FAIL("{\"foo\":" ENT("F32", "[0]", "[9,9]") "}", 8, PTTS_E_FORMAT, "out of range");
    FAIL("{\"foo\":" ENT("F32", "[1]", "[9007199254740988,9007199254740992]") "}", 8, PTTS_E_FORMAT,
         "out of range");
    FAIL("{\"foo\":" ENT("F32", "[3]", "[0,8]") "}", 8, PTTS_E_FORMAT,
         "tensor foo: data_offsets [0, 8] hold 8 bytes, shape and dtype F32 need 12");
    FAIL("{\"foo\":" ENT("BF16", "[2,2]", "[0,4]") "}", 8, PTTS_E_FORMAT, "need 8");
    FAIL("{\"foo\":" ENT("F32", "[]", "[0,0]") "}", 8, PTTS_E_FORMAT, "need 4");
    FAIL("{\"a\":" ENT("F32", "[2]", "[0,8]") ",\"b\":" ENT("F32", "[2]", "[4,12]") "}", 12,
         PTTS_E_FORMAT, "overlap");
    FAIL("{" KV("b", "F32", "[2]", "[4,12]") "," KV("a", "F32", "[1]", "[0,4]") "," KV(
             "c", "F32", "[1]", "[8,12]") "}",
         12, PTTS_E_FORMAT, "tensor c: data_offsets [8, 12] overlap tensor b [4, 12]");
    FAIL("{\"a\":" ENT("F32", "[3]", "[0,12]") ",\"b\":" ENT("F32", "[1]", "[4,8]") "}", 12,
         PTTS_E_FORMAT, "overlap");
    FAIL("{\"a\":" ENT("F32", "[1]", "[0,4]") ",\"b\":" ENT("F32", "[1]", "[0,4]") "}", 8,
         PTTS_E_FORMAT, "overlap");

    /* dtypes */
    FAIL("{\"foo\":" ENT("F128", "[1]", "[0,16]") "}", 16, PTTS_E_FORMAT,
         "tensor foo: unknown dtype \"F128\"");
    FAIL("{\"foo\":" ENT("f32", "[1]", "[0,4]") "}", 4, PTTS_E_FORMAT, "unknown dtype");
    FAIL("{\"foo\":" ENT("", "[1]", "[0,4]") "}", 4, PTTS_E_FORMAT, "unknown dtype");
    FAIL("{\"foo\":" ENT("F8_E4M3", "[1]", "[0,1]") "}", 4, PTTS_E_UNSUPPORTED,
         "tensor foo: dtype F8_E4M3 is not supported");
    FAIL("{\"foo\":" ENT("U32", "[1]", "[0,4]") "}", 4, PTTS_E_UNSUPPORTED, "U32");

    /* duplicates */
    FAIL("{\"a\":" ENT("F32", "[1]", "[0,4]") ",\"a\":" ENT("F32", "[1]", "[4,8]") "}", 8,
         PTTS_E_FORMAT, "tensor a: duplicate name");
    FAIL("{\"a\":" ENT("F32", "[0]", "[0,0]") ",\"b\":" ENT("F32", "[0]", "[0,0]") ",\"a\":" ENT(
             "F32", "[0]", "[0,0]") "}",
         0, PTTS_E_FORMAT, "duplicate name");
    FAIL("{\"__metadata__\":{},\"__metadata__\":{}}", 0, PTTS_E_FORMAT,
         "duplicate \"__metadata__\"");

    /* metadata */
    FAIL("{\"__metadata__\":{\"k\":1}}", 0, PTTS_E_FORMAT,
         "__metadata__ value \"k\" is not a string");
    FAIL("{\"__metadata__\":{\"k\":null}}", 0, PTTS_E_FORMAT, "not a string");
    FAIL("{\"__metadata__\":{\"k\":{}}}", 0, PTTS_E_FORMAT, "not a string");
    FAIL("{\"__metadata__\":\"x\"}", 0, PTTS_E_FORMAT, "__metadata__ is not an object");
    FAIL("{\"__metadata__\":[]}", 0, PTTS_E_FORMAT, "__metadata__ is not an object");
    FAIL("{\"__metadata__\":{\"k\":\"1\",\"j\":\"2\",\"k\":\"3\"}}", 0, PTTS_E_FORMAT,
         "duplicate __metadata__ key \"k\"");
}

static void test_accepted(void) {
    uint8_t *keep;
    st_file *f = OPEN_OK("{}      ", 0, &keep); /* padding */
    /* a scalar, empty tensors (one inside another's bytes), metadata between tensors, an
     * extra key and reordered keys in an entry, whitespace padding of every kind */
    const char *json =
        "{" KV("s", "F32", "[]", "[0,4]") "," KV("z", "F32", "[0,3]", "[2,2]") "," KV(
            "e", "I8", "[0]", "[4,4]") ",\"__metadata__\":{\"format\":\"pt\"},"
                                       "\"t\":{\"extra\":1,\"data_offsets\":[4,8],\"shape\":[2],"
                                       "\"dtype\":\"I16\"}} \n\t ";
    if (f) CHECK(st_count(f) == 0 && st_metadata(f, "x") == NULL && st_find(f, "x") == NULL);
    st_close(f);
    free(keep);

    f = OPEN_OK(json, 10, &keep);
    if (f) {
        CHECK(st_count(f) == 4);
        const st_tensor *s = st_at(f, 0), *z = st_at(f, 1), *e = st_at(f, 2), *t = st_at(f, 3);
        CHECK(st_at(f, 4) == NULL && st_at(f, -1) == NULL);
        CHECK(strcmp(s->name, "s") == 0 && s->ndim == 0 && s->numel == 1 && s->nbytes == 4);
        CHECK(s->data == keep + 8 + strlen(json) && t->data == s->data + 4);
        CHECK(z->numel == 0 && z->ndim == 2 && z->shape[1] == 3 && z->nbytes == 0);
        CHECK(e->numel == 0 && e->dtype == ST_I8);
        CHECK(t->dtype == ST_I16 && t->numel == 2 && st_find(f, "t") == t);
        CHECK(st_find(f, "z") == z && st_find(f, "e") == e && st_find(f, "q") == NULL);
        const char *fmt = st_metadata(f, "format");
        CHECK(fmt && strcmp(fmt, "pt") == 0);
        CHECK(strcmp(st_path(f), NAME) == 0);
    }
    st_close(f);
    free(keep);
}

static int nbad(const uint8_t *b, size_t len) {
    st_file *f = NULL;
    int rc = st_open_memory(&f, b, len, NAME, NULL);
    if (rc == 0) {
        /* whatever was accepted must lie inside the buffer and convert */
        for (int i = 0; i < st_count(f); i++) {
            const st_tensor *t = st_at(f, i);
            CHECK(t->data >= b + 8 && t->data + t->nbytes <= b + len);
            float *tmp = malloc((size_t)t->numel * 8 + 8);
            REQUIRE(tmp != NULL);
            if (t->dtype == ST_F32 || t->dtype == ST_BF16 || t->dtype == ST_F16)
                CHECK(st_to_f32(f, t, tmp, NULL) == 0);
            else if (t->dtype != ST_F64 && t->dtype != ST_BOOL)
                CHECK(st_to_i64(f, t, (int64_t *)tmp, NULL) == 0);
            free(tmp);
        }
        st_close(f);
    }
    return rc != 0;
}

/* Byte buffer of a file written by st_write. */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    REQUIRE(fp != NULL);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    REQUIRE(b != NULL && fread(b, 1, (size_t)n, fp) == (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return b;
}

static int count_tmp(const char *dir) {
    DIR *d = opendir(dir);
    REQUIRE(d != NULL);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static char g_dir[64];

static const char *tpath(const char *name) {
    static char buf[4][256];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 256, "%s/%s", g_dir, name);
    return b;
}

static void test_writer(void) {
    /* one tensor of every dtype, with odd sizes so later tensors sit at unaligned offsets */
    uint8_t bytes[ST_DTYPE_COUNT][3 * 8];
    for (int d = 0; d < ST_DTYPE_COUNT; d++)
        for (int i = 0; i < 24; i++)
            bytes[d][i] = (uint8_t)(d * 31 + i * 13 + 5);
    st_out_tensor ts[ST_DTYPE_COUNT + 3];
    char names[ST_DTYPE_COUNT][32];
    int n = 0;
    for (int d = 0; d < ST_DTYPE_COUNT; d++) {
        snprintf(names[d], sizeof names[d], "t.%s", st_dtype_name((st_dtype)d));
        ts[n++] = (st_out_tensor){names[d], (st_dtype)d, 2, {1, 3}, bytes[d]};
    }
    ts[n++] = (st_out_tensor){"scalar \"q\\\x01\xc3\xa9", ST_F32, 0, {0}, bytes[0]};
    ts[n++] = (st_out_tensor){"empty", ST_F32, 3, {4, 0, 2}, NULL};
    ts[n++] = (st_out_tensor){"big", ST_I64, 1, {3}, bytes[1]};
    const char *meta[] = {"format", "pt", "note", "a \"quoted\" \\ value\n", "b", "", NULL};
    const char *p = tpath("w.safetensors");
    ptts_error e = {0};
    CHECKF(st_write(p, ts, n, meta, &e) == 0, "%s", e.msg);
    CHECK(count_tmp(g_dir) == 0);

    size_t len;
    uint8_t *b = slurp(p, &len);
    uint64_t hl = 0;
    for (int k = 7; k >= 0; k--)
        hl = (hl << 8) | b[k];
    CHECK(hl % 8 == 0 && hl < len);
    CHECK(b[8 + hl - 1] == ' ' || b[8 + hl - 1] == '}');

    st_file *f = NULL;
    CHECKF(st_open(&f, p, &e) == 0, "%s", e.msg);
    if (f) {
        CHECK(st_count(f) == n);
        uint64_t expect_off = 0;
        for (int i = 0; i < n && i < st_count(f); i++) {
            const st_tensor *t = st_at(f, i);
            CHECKF(strcmp(t->name, ts[i].name) == 0, "%d: %s", i, t->name);
            CHECK(t->dtype == ts[i].dtype && t->ndim == ts[i].ndim);
            for (int k = 0; k < t->ndim; k++)
                CHECK(t->shape[k] == ts[i].shape[k]);
            CHECK(t->nbytes == 0 || memcmp(t->data, ts[i].data, t->nbytes) == 0);
            CHECK(st_find(f, ts[i].name) == t);
            expect_off += t->nbytes;
        }
        CHECK(8 + hl + expect_off == len);
        CHECK(strcmp(st_metadata(f, "format"), "pt") == 0);
        CHECK(strcmp(st_metadata(f, "note"), "a \"quoted\" \\ value\n") == 0);
        CHECK(strcmp(st_metadata(f, "b"), "") == 0);
        CHECK(st_metadata(f, "c") == NULL);
        st_close(f);
    }
    /* back to back in the given order from offset 0, ending at the end of the file: what the
     * reference reader requires */
    f = NULL;
    CHECK(st_open_memory(&f, b, len, "w", &e) == 0);
    if (f) {
        const uint8_t *next = b + 8 + hl;
        for (int i = 0; i < st_count(f); i++) {
            CHECK(st_at(f, i)->data == next);
            next += st_at(f, i)->nbytes;
        }
        st_close(f);
    }

    /* every prefix of the file is refused; single-byte changes never crash */
    int refused = 0;
    for (size_t l = 0; l < len; l++) {
        uint8_t *c = malloc(l ? l : 1);
        REQUIRE(c != NULL);
        memcpy(c, b, l);
        refused += nbad(c, l);
        free(c);
    }
    CHECKF(refused == (int)len, "%d of %zu prefixes refused", refused, len);
    CHECK(!nbad(b, len));
    static const uint8_t vals[] = {0, ' ', '"', '0', '9', '[', ']', '{', '}', ',', ':', 0xff, '-'};
    uint8_t *c = malloc(len);
    REQUIRE(c != NULL);
    for (size_t i = 0; i < 8 + hl; i++)
        for (size_t v = 0; v < sizeof vals; v++) {
            memcpy(c, b, len);
            c[i] = vals[v];
            (void)nbad(c, len);
        }
    free(c);
    free(b);

    /* overwrite an existing file */
    st_out_tensor one = {"only", ST_U8, 1, {3}, "abc"};
    CHECK(st_write(p, &one, 1, NULL, &e) == 0);
    f = NULL;
    CHECK(st_open(&f, p, &e) == 0);
    if (f) {
        CHECK(st_count(f) == 1 && st_metadata(f, "format") == NULL);
        int64_t v[3];
        CHECK(st_to_i64(f, st_at(f, 0), v, &e) == 0 && v[0] == 'a' && v[2] == 'c');
        st_close(f);
    }
    /* no tensors at all */
    CHECK(st_write(p, NULL, 0, NULL, &e) == 0);
    f = NULL;
    CHECK(st_open(&f, p, &e) == 0 && f && st_count(f) == 0);
    st_close(f);

    /* refused inputs: nothing written, nothing left behind */
    remove(p);
    st_out_tensor dup[2] = {{"a", ST_U8, 1, {1}, "x"}, {"a", ST_U8, 1, {1}, "y"}};
    CHECK(st_write(p, dup, 2, NULL, &e) == PTTS_E_INVALID && strstr(e.msg, "duplicate"));
    st_out_tensor bad = {"a", ST_DTYPE_COUNT, 1, {1}, "x"};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID && strstr(e.msg, "dtype"));
    bad = (st_out_tensor){"a", ST_U8, ST_MAX_DIMS + 1, {1}, "x"};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID && strstr(e.msg, "ndim"));
    bad = (st_out_tensor){"a", ST_U8, 1, {-1}, "x"};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID && strstr(e.msg, "dim"));
    bad = (st_out_tensor){"a", ST_U8, 1, {2}, NULL};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID && strstr(e.msg, "NULL"));
    bad = (st_out_tensor){"a", ST_F64, 3, {1 << 30, 1 << 30, 1 << 30}, "x"};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID && strstr(e.msg, "overflow"));
    bad = (st_out_tensor){"\xc3", ST_U8, 1, {1}, "x"};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID && strstr(e.msg, "name"));
    bad = (st_out_tensor){"__metadata__", ST_U8, 1, {1}, "x"};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID);
    bad = (st_out_tensor){"", ST_U8, 1, {1}, "x"};
    CHECK(st_write(p, &bad, 1, NULL, &e) == PTTS_E_INVALID);
    const char *dmeta[] = {"k", "1", "k", "2", NULL};
    CHECK(st_write(p, &one, 1, dmeta, &e) == PTTS_E_INVALID && strstr(e.msg, "duplicate"));
    const char *ometa[] = {"k", NULL};
    CHECK(st_write(p, &one, 1, ometa, &e) == PTTS_E_INVALID);
    const char *umeta[] = {"k", "\xed\xa0\x80", NULL}; /* a UTF-8 encoded surrogate */
    CHECK(st_write(p, &one, 1, umeta, &e) == PTTS_E_INVALID);
    CHECK(access(p, F_OK) != 0);
    CHECK(st_write(tpath("no/such/dir.safetensors"), &one, 1, NULL, &e) == PTTS_E_IO);
    CHECK(count_tmp(g_dir) == 0);
    /* the target is a directory: the rename fails and the temp file is removed */
    REQUIRE(mkdir(tpath("adir"), 0755) == 0);
    REQUIRE(mkdir(tpath("adir/sub"), 0755) == 0);
    CHECK(st_write(tpath("adir"), &one, 1, NULL, &e) == PTTS_E_IO && strstr(e.msg, "rename"));
    CHECK(count_tmp(g_dir) == 0);
    rmdir(tpath("adir/sub"));
    rmdir(tpath("adir"));
}

static void test_files(void) {
    ptts_error e = {0};
    st_file *f = (st_file *)&e;
    CHECK(st_open(&f, tpath("missing.safetensors"), &e) == PTTS_E_NOT_FOUND && f == NULL);
    CHECK(strstr(e.msg, "missing.safetensors") != NULL);
    CHECK(st_open(&f, g_dir, &e) == PTTS_E_IO && strstr(e.msg, "directory"));
    const char *p = tpath("empty.safetensors");
    FILE *fp = fopen(p, "wb");
    REQUIRE(fp != NULL);
    fclose(fp);
    CHECK(st_open(&f, p, &e) == PTTS_E_FORMAT && strstr(e.msg, "empty"));
    CHECK(strstr(e.msg, p) == e.msg);
    if (geteuid() != 0) {
        REQUIRE(chmod(p, 0) == 0);
        CHECK(st_open(&f, p, &e) == PTTS_E_IO);
    } else {
        printf("running as root: the unreadable-file case is not checked\n");
    }
    remove(p);
    CHECK(st_open(&f, "/dev/null", &e) == PTTS_E_IO && strstr(e.msg, "regular"));
}

static void test_convert_and_expect(void) {
    /* BF16 [1] at 0, then F32 [2] at offset 2 (unaligned), F16 [2], then the integer types */
    uint8_t data[64] = {0};
    size_t o = 0;
    uint16_t hb = st_f32_to_bf16(1.5f);
    data[o++] = (uint8_t)hb;
    data[o++] = (uint8_t)(hb >> 8);
    float fv[2] = {-2.25f, 3e-41f};
    memcpy(data + o, fv, 8); /* the test machine is little-endian, as the format */
    o += 8;
    uint16_t hh[2] = {st_f32_to_f16(0.333251953125f), 0xfc00};
    for (int k = 0; k < 2; k++) {
        data[o++] = (uint8_t)hh[k];
        data[o++] = (uint8_t)(hh[k] >> 8);
    }
    /* o = 14: I8 [2], U8 [2], I16 [1], I32 [1], I64 [1] */
    const uint8_t ints[] = {0x80, 0x7f, 0xff, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00,
                            0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80};
    memcpy(data + o, ints, sizeof ints);
    o += sizeof ints;
    /* clang-format off */
    static const char *json = "{"
        KV("b", "BF16", "[1]", "[0,2]") ","
        KV("f", "F32", "[2]", "[2,10]") ","
        KV("h", "F16", "[2]", "[10,14]") ","
        KV("i8", "I8", "[2]", "[14,16]") ","
        KV("u8", "U8", "[2]", "[16,18]") ","
        KV("i16", "I16", "[1]", "[18,20]") ","
        KV("i32", "I32", "[1]", "[20,24]") ","
        KV("i64", "I64", "[1]", "[24,32]") ","
        KV("d", "F64", "[1]", "[32,40]") ","
        KV("w", "F32", "[2,3]", "[40,64]") "}";
    /* clang-format on */
    size_t len;
    uint8_t *b = mk(json, 0, &len);
    uint8_t *full = malloc(len + 64);
    REQUIRE(full != NULL);
    memcpy(full, b, len);
    memcpy(full + len, data, 64);
    st_file *f = NULL;
    ptts_error e = {0};
    REQUIRE(st_open_memory(&f, full, len + 64, NAME, &e) == 0);
    float out[8];
    int64_t iv[8];
    CHECK(st_to_f32(f, st_find(f, "b"), out, &e) == 0 && out[0] == 1.5f);
    CHECK(st_to_f32(f, st_find(f, "f"), out, &e) == 0 && out[0] == -2.25f && out[1] == 3e-41f);
    CHECK(st_to_f32(f, st_find(f, "h"), out, &e) == 0 && out[0] == 0.333251953125f &&
          isinf(out[1]) && out[1] < 0);
    CHECK(st_to_i64(f, st_find(f, "i8"), iv, &e) == 0 && iv[0] == -128 && iv[1] == 127);
    CHECK(st_to_i64(f, st_find(f, "u8"), iv, &e) == 0 && iv[0] == 255 && iv[1] == 0);
    CHECK(st_to_i64(f, st_find(f, "i16"), iv, &e) == 0 && iv[0] == -32768);
    CHECK(st_to_i64(f, st_find(f, "i32"), iv, &e) == 0 && iv[0] == INT32_MIN);
    CHECK(st_to_i64(f, st_find(f, "i64"), iv, &e) == 0 && iv[0] == INT64_MIN);
    CHECK(st_to_f32(f, st_find(f, "i8"), out, &e) == PTTS_E_UNSUPPORTED &&
          strstr(e.msg, NAME ": tensor i8: dtype I8"));
    CHECK(st_to_f32(f, st_find(f, "d"), out, &e) == PTTS_E_UNSUPPORTED);
    CHECK(st_to_i64(f, st_find(f, "f"), iv, &e) == PTTS_E_UNSUPPORTED &&
          strstr(e.msg, "tensor f: dtype F32"));

    const st_tensor *t = NULL;
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s6[1] = {6};
    CHECK(st_expect(f, "w", 2, s23, &t, &e) == 0 && t == st_find(f, "w"));
    CHECK(st_expect(f, "w", 2, s32, &t, &e) == PTTS_E_MODEL && t == NULL);
    CHECK(strcmp(e.msg, NAME ": tensor w has shape [2, 3], expected [3, 2]") == 0);
    CHECK(st_expect(f, "w", 1, s6, NULL, &e) == PTTS_E_MODEL);
    CHECK(strcmp(e.msg, NAME ": tensor w has shape [2, 3], expected [6]") == 0);
    CHECK(st_expect(f, "b", 0, NULL, NULL, &e) == PTTS_E_MODEL &&
          strstr(e.msg, "has shape [1], expected []"));
    CHECK(st_expect(f, "nope", 1, s6, NULL, &e) == PTTS_E_MODEL &&
          strcmp(e.msg, NAME ": tensor nope is missing") == 0);
    st_close(f);
    free(full);
    free(b);

    CHECK(st_dtype_size(ST_F64) == 8 && st_dtype_size(ST_BF16) == 2 && st_dtype_size(ST_BOOL) == 1);
    CHECK(strcmp(st_dtype_name(ST_BF16), "BF16") == 0 && strcmp(st_dtype_name(ST_U8), "U8") == 0);
}

/* ---- conversions against references written from the definitions ---------------------- */

static double f16_value(uint16_t h) { /* finite halves only */
    int exp = (h >> 10) & 31, mant = h & 1023;
    double v = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
    return (h & 0x8000) ? -v : v;
}

/* Round |f| to the nearest half (even on ties) with nearbyint in double, then encode. */
static uint16_t ref_to_f16(float f) {
    uint16_t s = signbit(f) ? 0x8000 : 0;
    double v = fabs((double)f);
    if (isinf(v)) return s | 0x7c00;
    int ex;
    frexp(v, &ex);
    int e2 = ex - 1 < -14 ? -14 : ex - 1;
    double unit = ldexp(1.0, e2 - 10);
    double r = nearbyint(v / unit) * unit;
    if (r >= 65536.0) return s | 0x7c00;
    if (r < ldexp(1.0, -14)) return (uint16_t)(s | (uint16_t)(r / ldexp(1.0, -24)));
    double m = frexp(r, &ex); /* r = m 2^ex, m in [0.5, 1) */
    return (uint16_t)(s | (ex - 1 + 15) << 10 | (uint16_t)((m * 2 - 1) * 1024));
}

static uint16_t ref_to_bf16(float f) {
    uint16_t s = signbit(f) ? 0x8000 : 0;
    double v = fabs((double)f);
    if (isinf(v)) return s | 0x7f80;
    int ex;
    frexp(v, &ex);
    int e2 = ex - 1 < -126 ? -126 : ex - 1;
    double unit = ldexp(1.0, e2 - 7);
    double r = nearbyint(v / unit) * unit;
    if (r >= ldexp(1.0, 128)) return s | 0x7f80;
    return (uint16_t)(s | (f2u((float)r) >> 16)); /* r is a bf16 value, exact in float */
}

static void test_f16(void) {
    int bad_dec = 0, bad_rt = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float v = st_f16_to_f32((uint16_t)h);
        int exp = (h >> 10) & 31, mant = h & 1023;
        if (exp == 31) {
            uint32_t want = (h & 0x8000) << 16 | 0x7f800000u | (uint32_t)mant << 13;
            if (f2u(v) != want) bad_dec++;
            if (mant && !isnan(st_f16_to_f32(st_f32_to_f16(v)))) bad_rt++;
            if (!mant && st_f32_to_f16(v) != h) bad_rt++;
            continue;
        }
        float ref = (float)f16_value((uint16_t)h);
        if (f2u(v) != f2u(ref)) bad_dec++; /* bits: -0 included */
        if (st_f32_to_f16(v) != h) bad_rt++;
    }
    CHECKF(bad_dec == 0, "%d F16 values decode wrongly", bad_dec);
    CHECKF(bad_rt == 0, "%d F16 values do not round-trip", bad_rt);

    /* Every midpoint between adjacent non-negative halves (including 65504 and the first value
     * past it, 65536, which is inf): ties go to the even one, the float just below to the lower,
     * the float just above to the upper. Negated likewise. */
    int bad_mid = 0;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        double lo = f16_value((uint16_t)h),
               hi = h == 0x7bff ? 65536.0 : f16_value((uint16_t)(h + 1));
        float m = (float)((lo + hi) / 2);
        if ((double)m != (lo + hi) / 2) bad_mid++; /* the midpoint must be exact in float */
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        uint16_t below = st_f32_to_f16(nextafterf(m, 0)),
                 above = st_f32_to_f16(nextafterf(m, INFINITY));
        if (st_f32_to_f16(m) != even || below != h || above != h + 1) bad_mid++;
        if (st_f32_to_f16(-m) != (even | 0x8000) ||
            st_f32_to_f16(-nextafterf(m, 0)) != (h | 0x8000))
            bad_mid++;
    }
    CHECKF(bad_mid == 0, "%d F16 midpoints round wrongly", bad_mid);
    CHECK(st_f32_to_f16(65519.996f) == 0x7bff && st_f32_to_f16(65520.0f) == 0x7c00);
    CHECK(st_f32_to_f16(1e10f) == 0x7c00 && st_f32_to_f16(-1e10f) == 0xfc00);
    CHECK(st_f32_to_f16(INFINITY) == 0x7c00 && st_f32_to_f16(-INFINITY) == 0xfc00);
    CHECK(st_f32_to_f16(0x1p-25f) == 0 && st_f32_to_f16(nextafterf(0x1p-25f, 1)) == 1);
    CHECK(st_f32_to_f16(1e-45f) == 0 && st_f32_to_f16(-1e-45f) == 0x8000);
    CHECK(st_f32_to_f16(-0.0f) == 0x8000);
    uint16_t qn = st_f32_to_f16(NAN),
             sn = st_f32_to_f16(u2f(0x7f800001u)); /* signalling, low payload */
    CHECK((qn & 0x7c00) == 0x7c00 && (qn & 0x3ff) != 0);
    CHECK((sn & 0x7c00) == 0x7c00 && (sn & 0x3ff) != 0);
    CHECK(isnan(st_f16_to_f32(sn)) && (st_f32_to_f16(-NAN) & 0x8000));

    /* random floats, every exponent (NaNs skipped: checked above) */
    uint64_t x = 0x243f6a8885a308d3ull;
    int bad_rand = 0;
    for (int i = 0; i < 2000000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t u = (uint32_t)(x >> 32);
        if (i & 1)
            u = (u & 0x807fffffu) | ((uint32_t)(100 + (x >> 20) % 45) << 23); /* near range */
        float f = u2f(u);
        if (isnan(f)) continue;
        if (st_f32_to_f16(f) != ref_to_f16(f)) bad_rand++;
    }
    CHECKF(bad_rand == 0, "%d random floats round to F16 wrongly", bad_rand);
}

static void test_bf16(void) {
    int bad_dec = 0, bad_rt = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float v = st_bf16_to_f32((uint16_t)h);
        int exp = (h >> 7) & 255, mant = h & 127;
        if (exp == 255) {
            if (mant ? !isnan(v) : !isinf(v)) bad_dec++;
            if (mant ? !isnan(st_bf16_to_f32(st_f32_to_bf16(v))) : st_f32_to_bf16(v) != h) bad_rt++;
            continue;
        }
        double ref = exp == 0 ? ldexp(mant, -133) : ldexp(128 + mant, exp - 134);
        if (h & 0x8000) ref = -ref;
        if (f2u(v) != f2u((float)ref)) bad_dec++;
        if (st_f32_to_bf16(v) != h) bad_rt++;
    }
    CHECKF(bad_dec == 0, "%d BF16 values decode wrongly", bad_dec);
    CHECKF(bad_rt == 0, "%d BF16 values do not round-trip", bad_rt);
    int bad_mid = 0;
    for (uint32_t h = 0; h < 0x7f80; h++) {
        float m = u2f(h << 16 | 0x8000); /* halfway to h + 1 */
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (st_f32_to_bf16(m) != even || st_f32_to_bf16(nextafterf(m, 0)) != h ||
            st_f32_to_bf16(nextafterf(m, INFINITY)) != h + 1 ||
            st_f32_to_bf16(-m) != (even | 0x8000))
            bad_mid++;
    }
    CHECKF(bad_mid == 0, "%d BF16 midpoints round wrongly", bad_mid);
    CHECK(st_f32_to_bf16(u2f(0x7f7fffffu)) == 0x7f80); /* FLT_MAX rounds up to inf */
    CHECK(st_f32_to_bf16(u2f(0x7f7f7fffu)) == 0x7f7f);
    uint16_t sn = st_f32_to_bf16(u2f(0x7f800001u)); /* payload only in the dropped bits */
    CHECK(isnan(st_bf16_to_f32(sn)) && isnan(st_bf16_to_f32(st_f32_to_bf16(-NAN))));
    CHECK(st_f32_to_bf16(-NAN) & 0x8000);
    uint64_t x = 0x13198a2e03707344ull;
    int bad_rand = 0;
    for (int i = 0; i < 2000000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        float f = u2f((uint32_t)(x >> 32));
        if (isnan(f)) continue;
        if (st_f32_to_bf16(f) != ref_to_bf16(f)) bad_rand++;
    }
    CHECKF(bad_rand == 0, "%d random floats round to BF16 wrongly", bad_rand);
}

/* Every fixture file opens and every tensor converts; the tiny checkpoints hold finite values. */
static void test_fixtures(void) {
    const char *files[] = {"tiny/model.safetensors",
                           "tiny/model.bf16.safetensors",
                           "tiny/model.f16.safetensors",
                           "tiny/voice.safetensors",
                           "tiny/voice_short.safetensors",
                           "tiny/mimi_decode.safetensors",
                           "tiny/mimi_encode.safetensors",
                           "tiny/flow_head.safetensors",
                           "tiny/generate.safetensors",
                           "tiny/generate_short.safetensors",
                           "full/voice.safetensors",
                           "full/flow_head.safetensors",
                           "audio/resample_44k_to_24k.safetensors"};
    int ints = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        st_file *f = NULL;
        ptts_error e = {0};
        int rc = st_open(&f, fixture_path(files[i]), &e);
        CHECKF(rc == 0, "%s", e.msg);
        if (rc) continue;
        CHECK(st_count(f) > 0);
        for (int k = 0; k < st_count(f); k++) {
            const st_tensor *t = st_at(f, k);
            CHECK(st_find(f, t->name) == t);
            void *v = malloc((size_t)t->numel * 8 + 8);
            REQUIRE(v != NULL);
            if (t->dtype == ST_I64) {
                CHECKF(st_to_i64(f, t, v, &e) == 0, "%s", e.msg);
                ints++;
                free(v);
                continue;
            }
            CHECKF(st_to_f32(f, t, v, &e) == 0, "%s", e.msg);
            if (i < 3) {
                int finite = 1;
                for (int64_t j = 0; j < t->numel; j++)
                    finite &= isfinite(((float *)v)[j]) != 0;
                CHECKF(finite, "%s: %s has non-finite values", files[i], t->name);
            }
            free(v);
        }
        if (i == 0) {
            int64_t shape[2] = {1, 64};
            CHECK(st_count(f) == 150);
            CHECK(st_expect(f, "flow_lm.out_eos.weight", 2, shape, NULL, &e) == 0);
        }
        st_close(f);
    }
    CHECK(ints > 0); /* the voice files carry I64 tensors */
}

/* st_load_f32: one tensor by name as float32, with its count; the failures name what failed. */
static void test_load_f32(void) {
    const float a[6] = {1, -2, 3.5f, 0, 1e-3f, 7};
    const uint16_t b[3] = {0x3fc0, 0xbf80, 0x0000}; /* bf16 1.5, -1, 0 */
    const int64_t c[1] = {42};
    st_out_tensor ts[3] = {
        {"a", ST_F32, 2, {2, 3}, a}, {"b", ST_BF16, 1, {3}, b}, {"c", ST_I64, 1, {1}, c}};
    ptts_error e = {0};
    const char *p = tpath("load.safetensors");
    REQUIRE(st_write(p, ts, 3, NULL, &e) == 0);
    size_t n = 99;
    float *v = st_load_f32(p, "a", &n, &e);
    CHECK(v && n == 6 && !memcmp(v, a, sizeof a));
    free(v);
    v = st_load_f32(p, "b", &n, &e);
    CHECK(v && n == 3 && v[0] == 1.5f && v[1] == -1.0f && v[2] == 0.0f);
    free(v);
    n = 99;
    CHECK(st_load_f32(p, "c", &n, &e) == NULL && e.code == PTTS_E_UNSUPPORTED && n == 0);
    CHECK(st_load_f32(p, "nothing", &n, &e) == NULL && e.code == PTTS_E_NOT_FOUND &&
          strstr(e.msg, "nothing"));
    CHECK(st_load_f32(tpath("none.safetensors"), "a", NULL, &e) == NULL &&
          strstr(e.msg, "none.safetensors"));
    CHECK(st_load_f32(NULL, "a", &n, &e) == NULL && e.code == PTTS_E_INVALID);
    remove(p);
    /* a fixture tensor: the same values as st_to_f32 */
    v = st_load_f32(fixture_path("tiny/model.safetensors"), "flow_lm.out_eos.weight", &n, &e);
    CHECKF(v && n == 64, "%s", e.msg);
    st_file *f = NULL;
    REQUIRE(st_open(&f, fixture_path("tiny/model.safetensors"), &e) == 0);
    float want[64];
    REQUIRE(st_to_f32(f, st_find(f, "flow_lm.out_eos.weight"), want, &e) == 0);
    CHECK(v && !memcmp(v, want, sizeof want));
    st_close(f);
    free(v);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/ptts_st_XXXXXX");
    REQUIRE(mkdtemp(g_dir) != NULL);
    test_hostile();
    test_accepted();
    test_writer();
    test_files();
    test_convert_and_expect();
    test_f16();
    test_bf16();
    test_fixtures();
    test_load_f32();
    remove(tpath("w.safetensors"));
    CHECK(rmdir(g_dir) == 0);
    return test_summary();
}
