/*
 * test_packed.c - the converted weights file (src/packed_file.c, ptts_weights_convert): for each
 * precision the tiny model converted and loaded gives the checkpoint's audio to the bit, and
 * holds the same weight bytes; a truncated, extended or altered file (magic, version, byte order,
 * precision, architecture, table sizes and offsets, every header and table byte in turn) is
 * refused or loads, never crashes; a precision other than the file's is refused; converting a
 * converted file is refused; `pocket-tts convert` writes the same bytes as the API and
 * answers a usage error with status 2.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "packed_file.h"
#include "test.h"

typedef struct pcm_buf {
    float *v;
    size_t n, cap;
} pcm_buf;

static int collect(void *user, const float *pcm, int n) {
    pcm_buf *b = user;
    if (b->n + (size_t)n > b->cap) {
        size_t cap = (b->n + (size_t)n) * 2;
        float *v = realloc(b->v, cap * sizeof *v);
        if (!v) return 1;
        b->v = v;
        b->cap = cap;
    }
    memcpy(b->v + b->n, pcm, (size_t)n * sizeof *pcm);
    b->n += (size_t)n;
    return 0;
}

static ptts_model_options tiny_options(const char *weights, int precision) {
    ptts_model_options o = ptts_model_options_default();
    o.config_path = fixture_path("tiny/config.yaml");
    o.weights_path = weights;
    o.precision = precision;
    o.threads = 2;
    o.backend = PTTS_BACKEND_CPU;
    return o;
}

/* The audio of the tiny model from `weights` (empty on failure). */
static pcm_buf speak(const char *weights, int precision, size_t *weight_bytes, int *mapped) {
    pcm_buf b = {0};
    ptts_model_options o = tiny_options(weights, precision);
    ptts_model *m = NULL;
    ptts_voice *v = NULL;
    ptts_error e = {0};
    ptts_gen_options g = ptts_gen_options_default();
    g.seed = 7;
    g.seed_set = 1;
    int rc = ptts_model_load(&m, &o, &e);
    if (!rc) rc = ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e);
    if (!rc) rc = ptts_synthesize(m, v, "Hello there. How are you today?", &g, collect, &b, &e);
    if (rc) {
        fprintf(stderr, "%s: %s\n", weights, e.msg);
        b.n = 0;
    } else {
        *weight_bytes = m->w->bytes;
        *mapped = m->w->map != NULL;
    }
    ptts_voice_free(v);
    ptts_model_free(m);
    return b;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = n > 0 ? malloc((size_t)n) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return p;
}

/* Load bytes (a copy of buf with byte `at` set to `val`, or none when at is SIZE_MAX): the code. */
static int load_bytes(const unsigned char *buf, size_t size, size_t at, unsigned char val, int mode,
                      char *msg) {
    unsigned char *c = malloc(size ? size : 1);
    if (!c) return PTTS_E_NOMEM;
    memcpy(c, buf, size);
    if (at < size) c[at] = val;
    ptts_weights *w = NULL;
    ptts_error e = {0};
    ptts_weights_options o = {.mode = (ptts_wmode)mode};
    int rc = ptts_packed_load_memory(&w, c, size, "t.ptpack", &o, &e);
    if (!rc && !w) rc = PTTS_E_INTERNAL;
    if (rc && msg) memcpy(msg, e.msg, sizeof e.msg);
    ptts_weights_free(w);
    free(c);
    return rc;
}

static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void hostile(const char *path) {
    size_t size;
    unsigned char *buf = read_file(path, &size);
    REQUIRE(buf && size > 4096);
    char msg[PTTS_ERROR_MSG_MAX] = "";
    CHECK(load_bytes(buf, size, SIZE_MAX, 0, 0, NULL) == 0);
    /* truncated, extended */
    CHECK(load_bytes(buf, size - 1, SIZE_MAX, 0, 0, msg) == PTTS_E_FORMAT);
    CHECKF(strstr(msg, "truncated") != NULL, "%s", msg);
    CHECK(load_bytes(buf, size / 2, SIZE_MAX, 0, 0, NULL) == PTTS_E_FORMAT);
    CHECK(load_bytes(buf, 50, SIZE_MAX, 0, 0, NULL) == PTTS_E_FORMAT);
    CHECK(load_bytes(buf, 0, SIZE_MAX, 0, 0, NULL) == PTTS_E_FORMAT);
    unsigned char *big = calloc(size + 64, 1);
    REQUIRE(big);
    memcpy(big, buf, size);
    CHECK(load_bytes(big, size + 64, SIZE_MAX, 0, 0, NULL) == PTTS_E_FORMAT);
    free(big);
    /* header fields */
    CHECK(load_bytes(buf, size, 0, 'X', 0, msg) == PTTS_E_FORMAT); /* magic */
    CHECK(load_bytes(buf, size, 8, 2, 0, msg) == PTTS_E_FORMAT);   /* version */
    CHECKF(strstr(msg, "convert the checkpoint again") != NULL, "%s", msg);
    CHECK(load_bytes(buf, size, 64, buf[64] + 1, 0, NULL) == PTTS_E_FORMAT); /* n_arch */
    CHECK(load_bytes(buf, size, 80, 0x03, 0, NULL) == PTTS_E_FORMAT);        /* byte order */
    CHECK(load_bytes(buf, size, 12, 9, 0, NULL) == PTTS_E_FORMAT);           /* precision */
    CHECK(load_bytes(buf, size, 68, (unsigned char)(buf[68] + 1), 0, msg) == PTTS_E_FORMAT);
    CHECK(load_bytes(buf, size, 68, (unsigned char)(buf[68] - 1), 0, msg) == PTTS_E_FORMAT);
    CHECK(load_bytes(buf, size, 79, 0x7f, 0, NULL) == PTTS_E_FORMAT); /* payload offset */
    /* the architecture: d (its first int) one wider, then negative */
    CHECK(load_bytes(buf, size, 96, (unsigned char)(buf[96] + 64), 0, msg) == PTTS_E_FORMAT);
    CHECK(load_bytes(buf, size, 99, 0x80, 0, NULL) == PTTS_E_FORMAT);
    /* the first table entry: its size, its offset unaligned, past the end, into the header */
    const size_t table = 96 + 4 * (sizeof(ptts_arch) / sizeof(int));
    CHECK(load_bytes(buf, size, table + 8, (unsigned char)(buf[table + 8] + 4), 0, msg) ==
          PTTS_E_FORMAT);
    CHECKF(strstr(msg, "size does not match") != NULL, "%s", msg);
    CHECK(load_bytes(buf, size, table, (unsigned char)(buf[table] + 4), 0, msg) == PTTS_E_FORMAT);
    CHECK(load_bytes(buf, size, table + 5, 0x10, 0, NULL) == PTTS_E_FORMAT);
    unsigned char *c = malloc(size);
    REQUIRE(c);
    memcpy(c, buf, size);
    put64(c + table, 0);
    CHECK(load_bytes(c, size, SIZE_MAX, 0, 0, NULL) == PTTS_E_FORMAT);
    /* the last array's offset and size pushed past the end */
    const uint64_t n_entries = buf[68] | (uint64_t)buf[69] << 8;
    unsigned char *last = c + table + 16 * (n_entries - 1);
    memcpy(c, buf, size);
    if (get64(last + 8)) {
        put64(last, get64(last) + 64);
        CHECK(load_bytes(c, size, SIZE_MAX, 0, 0, NULL) == PTTS_E_FORMAT);
    }
    /* an array dropped (size 0): a required one is refused, an optional one leaves a matrix
     * without storage or panels (refused, or loads without them) */
    for (uint64_t i = 0; i < n_entries; i++) {
        memcpy(c, buf, size);
        put64(c + table + 16 * i + 8, 0);
        int rc = load_bytes(c, size, SIZE_MAX, 0, 0, NULL);
        if (rc != 0 && rc != PTTS_E_FORMAT) CHECKF(0, "entry %llu: %d", (unsigned long long)i, rc);
    }
    free(c);
    /* every byte of the header, architecture and table changed in turn: loads or refused */
    const size_t payload = (size_t)get64(buf + 72);
    int odd = 0;
    for (size_t at = 0; at < payload && at < size; at++) {
        int rc = load_bytes(buf, size, at, (unsigned char)(buf[at] ^ 0x41), 0, NULL);
        odd += rc != 0 && rc != PTTS_E_FORMAT && rc != PTTS_E_INVALID && rc != PTTS_E_MODEL;
    }
    CHECK(odd == 0);
    free(buf);
}

int main(void) {
    static const char *names[3] = {"f32", "bf16", "int8"};
    char ckpt[1024]; /* fixture_path's buffers are reused */
    snprintf(ckpt, sizeof ckpt, "%s", fixture_path("tiny/model.safetensors"));
    char path[3][64];
    for (int p = 0; p < 3; p++) {
        snprintf(path[p], sizeof path[p], "test_packed_%d.%s.ptpack", (int)getpid(), names[p]);
        ptts_model_options o = tiny_options(ckpt, p);
        ptts_error e = {0};
        int rc = ptts_weights_convert(&o, path[p], &e);
        CHECKF(rc == 0, "convert %s: %s", names[p], e.msg);
        if (rc) continue;
        CHECK(ptts_packed_is(path[p]));
        size_t bytes_a = 0, bytes_b = 0, bytes_c = 0;
        int map_a = -1, map_b = -1, map_c = -1;
        pcm_buf a = speak(ckpt, p, &bytes_a, &map_a);
        pcm_buf b = speak(path[p], PTTS_PRECISION_F32, &bytes_b, &map_b); /* the file's */
        pcm_buf c = speak(path[p], p, &bytes_c, &map_c);                  /* the same, named */
        CHECKF(a.n > 0 && a.n == b.n && a.n == c.n, "%s: %zu %zu %zu samples", names[p], a.n, b.n,
               c.n);
        CHECKF(a.n == b.n && a.n && !memcmp(a.v, b.v, a.n * sizeof(float)), "%s: audio differs",
               names[p]);
        CHECK(a.n == c.n && a.n && !memcmp(a.v, c.v, a.n * sizeof(float)));
        CHECKF(bytes_a == bytes_b && bytes_b == bytes_c, "%s: %zu %zu %zu weight bytes", names[p],
               bytes_a, bytes_b, bytes_c);
        CHECK(map_a == 0 && map_b == 1 && map_c == 1);
        free(a.v);
        free(b.v);
        free(c.v);
        /* converting the converted file */
        o = tiny_options(path[p], p);
        CHECK(ptts_weights_convert(&o, "test_packed_never.ptpack", &e) == PTTS_E_INVALID);
        CHECK(access("test_packed_never.ptpack", F_OK) != 0);
    }
    /* another precision than the file's */
    {
        ptts_model_options o = tiny_options(path[2], PTTS_PRECISION_BF16);
        ptts_model *m = NULL;
        ptts_error e = {0};
        CHECK(ptts_model_load(&m, &o, &e) == PTTS_E_INVALID && !m);
        CHECKF(strstr(e.msg, "converted for int8") != NULL, "%s", e.msg);
    }
    /* the command writes the very file the API wrote; a missing output is a usage error */
    {
        char cmd[4096], cli[96];
        snprintf(cli, sizeof cli, "test_packed_%d.cli.ptpack", (int)getpid());
        snprintf(cmd, sizeof cmd, "'%s' convert --precision int8 --config '%s' --weights '%s' '%s'",
                 PTTS_BIN, fixture_path("tiny/config.yaml"), ckpt, cli);
        CHECK(system(cmd) == 0);
        size_t n1 = 0, n2 = 0;
        unsigned char *a = read_file(path[2], &n1), *b = read_file(cli, &n2);
        CHECK(a && b && n1 == n2 && !memcmp(a, b, n1));
        free(a);
        free(b);
        remove(cli);
        snprintf(cmd, sizeof cmd, "'%s' convert --precision int8 2>/dev/null", PTTS_BIN);
        int st = system(cmd);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    }
    hostile(path[2]);
    hostile(path[1]);
    for (int p = 0; p < 3; p++)
        remove(path[p]);
    return test_summary();
}
