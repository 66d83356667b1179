/*
 * test_voice.c - voice-state files (MODEL.md section 7): the reference's tiny voices
 * (voice.safetensors: 2 layers, cache [2, 1, 66, 4, 16]; voice_short: 11 positions) load to
 * exactly the cached keys and values; save -> reload is identical and the saved file has the
 * reference's 3.3 tensor names (cache, offset, pad), shapes, dtypes and bytes; BF16/F16 caches
 * and the legacy current_end load (the reference's voice_legacy_current_end equals voice_short);
 * pad missing or 0 is accepted, non-zero (voice_pad_nonzero) refused; a shorter offset keeps the
 * first positions; mismatched layers/heads/dh are PTTS_E_MODEL; missing layers or offsets,
 * inconsistent layers, bad offsets and non-voice files are refused.
 */
// ctest-label: unit
#include <unistd.h>

#include "safetensors.h"
#include "test.h"
#include "voice.h"

#define L 2
#define H 4
#define DH 16
#define D (H * DH)

static char tmp_paths[16][256];
static int n_tmp;

static const char *tmp_path(const char *tag) {
    REQUIRE(n_tmp < 16);
    char *p = tmp_paths[n_tmp++];
    snprintf(p, 256, "test_voice.%ld.%s.safetensors", (long)getpid(), tag);
    return p;
}

/* One layer of a synthetic voice file. */
typedef struct {
    int index;      /* layer index in the names */
    st_dtype dtype; /* cache dtype */
    int ndim;
    int64_t shape[5];
    const float *data; /* numel floats (converted to dtype) */
    int offset_kind;   /* 0: offset I64 [1], 1: current_end F32 [off], 2: none */
    int64_t off;
    int pad_kind; /* 0: no pad, 1: pad I64 [1] = pad, 2: pad F32 [1] */
    int64_t pad;
} vlayer;

static void *convert(const float *src, size_t n, st_dtype dt) {
    if (dt == ST_F32) {
        float *o = malloc(n * 4 + 4);
        REQUIRE(o != NULL);
        memcpy(o, src, n * 4);
        return o;
    }
    if (dt == ST_BF16 || dt == ST_F16) {
        uint16_t *o = malloc(n * 2 + 2);
        REQUIRE(o != NULL);
        for (size_t i = 0; i < n; i++)
            o[i] = dt == ST_BF16 ? st_f32_to_bf16(src[i]) : st_f32_to_f16(src[i]);
        return o;
    }
    /* I32: the value truncated (only used to test dtype refusal) */
    int32_t *o = malloc(n * 4 + 4);
    REQUIRE(o != NULL);
    for (size_t i = 0; i < n; i++)
        o[i] = (int32_t)src[i];
    return o;
}

static void write_voice(const char *path, const vlayer *ls, int n) {
    st_out_tensor ts[16] = {{0}};
    void *bufs[16] = {0};
    char names[16][80];
    int nt = 0;
    REQUIRE(3 * n <= 16);
    for (int i = 0; i < n; i++) {
        const vlayer *v = &ls[i];
        size_t numel = 1;
        for (int k = 0; k < v->ndim; k++)
            numel *= (size_t)v->shape[k];
        st_out_tensor *t = &ts[nt];
        memset(t, 0, sizeof *t);
        snprintf(names[nt], 80, "transformer.layers.%d.self_attn/cache", v->index);
        t->name = names[nt];
        t->dtype = v->dtype;
        t->ndim = v->ndim;
        memcpy(t->shape, v->shape, sizeof v->shape);
        t->data = bufs[nt] = convert(v->data, numel, v->dtype);
        nt++;
        if (v->pad_kind) {
            t = &ts[nt];
            memset(t, 0, sizeof *t);
            snprintf(names[nt], 80, "transformer.layers.%d.self_attn/pad", v->index);
            t->name = names[nt];
            t->ndim = 1;
            t->shape[0] = 1;
            int64_t *o = malloc(sizeof *o);
            REQUIRE(o != NULL);
            if (v->pad_kind == 1) {
                *o = v->pad;
                t->dtype = ST_I64;
            } else {
                float f = (float)v->pad;
                memcpy(o, &f, sizeof f);
                t->dtype = ST_F32;
            }
            t->data = bufs[nt] = o;
            nt++;
        }
        if (v->offset_kind == 2) continue;
        t = &ts[nt];
        memset(t, 0, sizeof *t);
        if (v->offset_kind == 0) {
            snprintf(names[nt], 80, "transformer.layers.%d.self_attn/offset", v->index);
            int64_t *o = malloc(sizeof *o);
            REQUIRE(o != NULL);
            *o = v->off;
            t->dtype = ST_I64;
            t->ndim = 1;
            t->shape[0] = 1;
            t->data = bufs[nt] = o;
        } else {
            snprintf(names[nt], 80, "transformer.layers.%d.self_attn/current_end", v->index);
            float *z = calloc((size_t)v->off + 1, sizeof *z);
            REQUIRE(z != NULL);
            t->dtype = ST_F32;
            t->ndim = 1;
            t->shape[0] = v->off;
            t->data = bufs[nt] = z;
        }
        t->name = names[nt];
        nt++;
    }
    ptts_error e = {0};
    int rc = st_write(path, ts, nt, NULL, &e);
    if (rc) fprintf(stderr, "%s\n", e.msg);
    REQUIRE(rc == 0);
    for (int i = 0; i < nt; i++)
        free(bufs[i]);
}

/* The fixture's two layers as vlayers (F32, offset). */
static void fixture_layers(vlayer *ls, float *const *data, int64_t P) {
    for (int i = 0; i < L; i++)
        ls[i] = (vlayer){.index = i,
                         .dtype = ST_F32,
                         .ndim = 5,
                         .shape = {2, 1, P, H, DH},
                         .data = data[i],
                         .offset_kind = 0,
                         .off = P};
}

/* The state equals cache [2, 1, P, H, DH] per layer (first `pos` positions), after rounding
 * each value through dtype. */
static int state_matches(const ptts_voice_state *v, float *const *data, int64_t P, int pos,
                         st_dtype dt) {
    if (!v || v->layers != L || v->heads != H || v->dh != DH || v->positions != pos) return 0;
    for (int l = 0; l < L; l++)
        for (int half = 0; half < 2; half++) {
            const float *got = (half ? v->v : v->k) + (size_t)l * pos * D;
            const float *src = data[l] + (size_t)half * P * D;
            for (size_t i = 0; i < (size_t)pos * D; i++) {
                float want = dt == ST_BF16  ? st_bf16_to_f32(st_f32_to_bf16(src[i]))
                             : dt == ST_F16 ? st_f16_to_f32(st_f32_to_f16(src[i]))
                                            : src[i];
                if (memcmp(&got[i], &want, sizeof want) != 0) return 0;
            }
        }
    return 1;
}

static int expect_fail(const char *path, int layers, int heads, int dh, int code,
                       const char *needle) {
    ptts_error e = {0};
    ptts_voice_state *v = NULL;
    int rc = ptts_voice_state_load(&v, path, layers, heads, dh, &e);
    printf("  %s -> %d: %s\n", path, rc, e.msg);
    int ok = rc == code && v == NULL && e.code == code && (!needle || strstr(e.msg, needle));
    ptts_voice_state_free(v);
    return ok;
}

int main(void) {
    ptts_error e = {0};

    /* The reference's raw cache values. */
    st_file *ref = NULL;
    REQUIRE(st_open(&ref, fixture_path("tiny/voice.safetensors"), &e) == 0);
    float *data[L];
    const int64_t P = 66;
    for (int l = 0; l < L; l++) {
        char nm[80];
        snprintf(nm, sizeof nm, "transformer.layers.%d.self_attn/cache", l);
        const int64_t shape[5] = {2, 1, P, H, DH};
        const st_tensor *t = NULL;
        REQUIRE(st_expect(ref, nm, 5, shape, &t, &e) == 0);
        data[l] = malloc((size_t)t->numel * sizeof(float));
        REQUIRE(data[l] != NULL);
        REQUIRE(st_to_f32(ref, t, data[l], &e) == 0);
    }

    /* Load the fixtures, checked and unchecked. */
    ptts_voice_state *v = NULL, *v2 = NULL;
    CHECK(ptts_voice_state_load(&v, fixture_path("tiny/voice.safetensors"), L, H, DH, &e) == 0);
    CHECK(state_matches(v, data, P, (int)P, ST_F32));
    CHECK(ptts_voice_state_load(&v2, fixture_path("tiny/voice.safetensors"), 0, 0, 0, &e) == 0);
    CHECK(state_matches(v2, data, P, (int)P, ST_F32));
    ptts_voice_state_free(v2);
    v2 = NULL;
    CHECK(ptts_voice_state_load(&v2, fixture_path("tiny/voice_short.safetensors"), L, H, DH, &e) ==
          0);
    CHECK(v2 && v2->positions == 11 && v2->layers == L && v2->heads == H && v2->dh == DH);
    ptts_voice_state_free(v2);
    v2 = NULL;

    /* From memory. */
    {
        FILE *fp = fopen(fixture_path("tiny/voice.safetensors"), "rb");
        REQUIRE(fp != NULL);
        fseek(fp, 0, SEEK_END);
        long sz = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        unsigned char *buf = malloc((size_t)sz);
        REQUIRE(buf != NULL && fread(buf, 1, (size_t)sz, fp) == (size_t)sz);
        fclose(fp);
        CHECK(ptts_voice_state_load_memory(&v2, buf, (size_t)sz, "mem", L, H, DH, &e) == 0);
        CHECK(state_matches(v2, data, P, (int)P, ST_F32));
        ptts_voice_state_free(v2);
        v2 = NULL;
        /* a truncated copy is refused */
        CHECK(ptts_voice_state_load_memory(&v2, buf, (size_t)sz - 8, "mem", L, H, DH, &e) != 0 &&
              v2 == NULL);
        memset(buf, 'x', 64);
        CHECK(ptts_voice_state_load_memory(&v2, buf, (size_t)sz, "mem", L, H, DH, &e) != 0 &&
              v2 == NULL);
        free(buf);
    }

    /* Clone: equal and independent. */
    CHECK(ptts_voice_state_clone(&v2, v, &e) == 0);
    CHECK(state_matches(v2, data, P, (int)P, ST_F32));
    CHECK(v2 && v2->k != v->k && v2->v != v->v);
    if (v2) v2->k[0] += 1.0f;
    CHECK(state_matches(v, data, P, (int)P, ST_F32));
    ptts_voice_state_free(v2);
    v2 = NULL;

    /* Save -> reload identical; the file matches the reference's header and bytes. */
    const char *saved = tmp_path("saved");
    CHECK(ptts_voice_state_save(v, saved, &e) == 0);
    CHECK(ptts_voice_state_load(&v2, saved, L, H, DH, &e) == 0);
    CHECK(state_matches(v2, data, P, (int)P, ST_F32));
    ptts_voice_state_free(v2);
    v2 = NULL;
    {
        st_file *sf = NULL;
        REQUIRE(st_open(&sf, saved, &e) == 0);
        CHECK(st_count(sf) == st_count(ref));
        for (int i = 0; i < st_count(ref); i++) {
            const st_tensor *a = st_at(ref, i), *b = st_find(sf, a->name);
            CHECKF(b != NULL, "%s missing in the saved file", a->name);
            if (!b) continue;
            CHECKF(b->dtype == a->dtype && b->ndim == a->ndim &&
                       memcmp(b->shape, a->shape, (size_t)a->ndim * sizeof a->shape[0]) == 0,
                   "%s", a->name);
            CHECKF(b->nbytes == a->nbytes && memcmp(b->data, a->data, a->nbytes) == 0,
                   "%s bytes differ", a->name);
        }
        st_close(sf);
    }
    /* Saving into a folder that does not exist fails and leaves nothing. */
    CHECK(ptts_voice_state_save(v, "no-such-dir.test_voice/v.safetensors", &e) == PTTS_E_IO);
    CHECK(access("no-such-dir.test_voice/v.safetensors", F_OK) != 0);

    /* alloc: zeros; bad sizes refused. */
    CHECK(ptts_voice_state_alloc(&v2, 3, 2, 8, 5, &e) == 0);
    {
        int zero = v2 && v2->positions == 5;
        for (int i = 0; zero && i < 3 * 5 * 16; i++)
            zero = v2->k[i] == 0.0f && v2->v[i] == 0.0f;
        CHECK(zero);
        CHECK(v2 && ((uintptr_t)v2->k & 63) == 0 && ((uintptr_t)v2->v & 63) == 0);
    }
    ptts_voice_state_free(v2);
    v2 = NULL;
    CHECK(ptts_voice_state_alloc(&v2, 0, 2, 8, 5, &e) == PTTS_E_INVALID && v2 == NULL);
    CHECK(ptts_voice_state_alloc(&v2, 1, 2, 8, -1, &e) == PTTS_E_INVALID && v2 == NULL);

    vlayer ls[4];

    /* BF16 and F16 caches. */
    static const st_dtype half_types[2] = {ST_BF16, ST_F16};
    for (int k = 0; k < 2; k++) {
        const char *p = tmp_path(k ? "f16" : "bf16");
        fixture_layers(ls, data, P);
        ls[0].dtype = ls[1].dtype = half_types[k];
        write_voice(p, ls, L);
        CHECK(ptts_voice_state_load(&v2, p, L, H, DH, &e) == 0);
        CHECKF(state_matches(v2, data, P, (int)P, half_types[k]), "%s", p);
        ptts_voice_state_free(v2);
        v2 = NULL;
    }

    /* Legacy current_end, and a cache longer than the offset. */
    {
        const char *p = tmp_path("legacy");
        fixture_layers(ls, data, P);
        ls[0].offset_kind = ls[1].offset_kind = 1;
        write_voice(p, ls, L);
        CHECK(ptts_voice_state_load(&v2, p, L, H, DH, &e) == 0);
        CHECK(state_matches(v2, data, P, (int)P, ST_F32));
        ptts_voice_state_free(v2);
        v2 = NULL;

        p = tmp_path("legacy60");
        ls[0].off = ls[1].off = 60;
        write_voice(p, ls, L);
        CHECK(ptts_voice_state_load(&v2, p, L, H, DH, &e) == 0);
        CHECK(state_matches(v2, data, P, 60, ST_F32));
        ptts_voice_state_free(v2);
        v2 = NULL;

        p = tmp_path("offset60");
        fixture_layers(ls, data, P);
        ls[0].off = ls[1].off = 60;
        write_voice(p, ls, L);
        CHECK(ptts_voice_state_load(&v2, p, L, H, DH, &e) == 0);
        CHECK(state_matches(v2, data, P, 60, ST_F32));
        ptts_voice_state_free(v2);
        v2 = NULL;
    }

    /* pad (3.3): 0 is accepted, non-zero and non-integer refused; the reference's files */
    {
        const char *pp = tmp_path("pad");
        fixture_layers(ls, data, P);
        ls[0].pad_kind = ls[1].pad_kind = 1;
        write_voice(pp, ls, L);
        CHECK(ptts_voice_state_load(&v2, pp, L, H, DH, &e) == 0);
        CHECK(state_matches(v2, data, P, (int)P, ST_F32));
        ptts_voice_state_free(v2);
        v2 = NULL;
        ls[1].pad = 3;
        write_voice(pp, ls, L);
        CHECK(expect_fail(pp, L, H, DH, PTTS_E_UNSUPPORTED, "transformer.layers.1.self_attn/pad"));
        ls[1].pad = 0;
        ls[1].pad_kind = 2;
        write_voice(pp, ls, L);
        CHECK(expect_fail(pp, L, H, DH, PTTS_E_FORMAT, "transformer.layers.1.self_attn/pad"));
        CHECK(expect_fail(fixture_path("tiny/voice_pad_nonzero.safetensors"), L, H, DH,
                          PTTS_E_UNSUPPORTED, "padded positions"));
        ptts_voice_state *a = NULL, *b = NULL, *c = NULL;
        CHECK(ptts_voice_state_load(&a, fixture_path("tiny/voice_short.safetensors"), L, H, DH,
                                    &e) == 0);
        CHECK(ptts_voice_state_load(&b, fixture_path("tiny/voice_legacy_current_end.safetensors"),
                                    L, H, DH, &e) == 0);
        CHECK(ptts_voice_state_load(&c, fixture_path("tiny/voice_pause.safetensors"), L, H, DH,
                                    &e) == 0);
        const size_t bytes = a ? (size_t)L * a->positions * D * sizeof(float) : 0;
        CHECK(a && b && b->positions == a->positions && memcmp(a->k, b->k, bytes) == 0 &&
              memcmp(a->v, b->v, bytes) == 0);
        CHECK(a && c && c->positions == a->positions && memcmp(a->k, c->k, bytes) == 0 &&
              memcmp(a->v, c->v, bytes) == 0);
        ptts_voice_state_free(a);
        ptts_voice_state_free(b);
        ptts_voice_state_free(c);
    }

    /* Shape mismatches with the model: PTTS_E_MODEL naming the tensor. */
    const char *fx = fixture_path("tiny/voice.safetensors");
    CHECK(expect_fail(fx, L, 8, DH, PTTS_E_MODEL, "transformer.layers.0.self_attn/cache"));
    CHECK(expect_fail(fx, L, H, 32, PTTS_E_MODEL, "[2, 1, 66, 4, 16]"));
    CHECK(expect_fail(fx, 6, H, DH, PTTS_E_MODEL, "2 layers"));

    /* Missing layer 0 (layer 1 present). */
    const char *p = tmp_path("bad");
    fixture_layers(ls, data, P);
    write_voice(p, ls + 1, 1);
    CHECK(expect_fail(p, 0, 0, 0, PTTS_E_FORMAT, "transformer.layers.0.self_attn/cache"));
    /* Only layer 0 where the model has 2. */
    write_voice(p, ls, 1);
    CHECK(expect_fail(p, L, H, DH, PTTS_E_MODEL, "1 layers"));
    /* A missing offset. */
    fixture_layers(ls, data, P);
    ls[1].offset_kind = 2;
    write_voice(p, ls, L);
    CHECK(expect_fail(p, L, H, DH, PTTS_E_FORMAT, "transformer.layers.1.self_attn/offset"));
    /* Offsets out of range or disagreeing. */
    static const int64_t bad_offsets[3] = {P + 1, 0, -3};
    for (int k = 0; k < 3; k++) {
        fixture_layers(ls, data, P);
        ls[0].off = ls[1].off = bad_offsets[k];
        write_voice(p, ls, L);
        CHECK(expect_fail(p, L, H, DH, PTTS_E_FORMAT, "offset"));
    }
    fixture_layers(ls, data, P);
    ls[1].off = P - 1;
    write_voice(p, ls, L);
    CHECK(expect_fail(p, L, H, DH, PTTS_E_FORMAT, "layer 1"));
    /* Layers of different lengths. */
    fixture_layers(ls, data, P);
    ls[1].shape[2] = P - 1;
    ls[0].off = ls[1].off = 60;
    write_voice(p, ls, L);
    CHECK(expect_fail(p, 0, 0, 0, PTTS_E_FORMAT, "transformer.layers.1.self_attn/cache"));
    /* Wrong rank and batch. */
    fixture_layers(ls, data, P);
    ls[0].ndim = 4;
    ls[0].shape[0] = 2;
    ls[0].shape[1] = P;
    ls[0].shape[2] = H;
    ls[0].shape[3] = DH;
    write_voice(p, ls, L);
    CHECK(expect_fail(p, L, H, DH, PTTS_E_FORMAT, "transformer.layers.0.self_attn/cache"));
    fixture_layers(ls, data, P);
    ls[0].shape[1] = 2;
    ls[0].shape[2] = P / 2;
    ls[0].off = ls[1].off = 30;
    write_voice(p, ls, L);
    CHECK(expect_fail(p, L, H, DH, PTTS_E_FORMAT, "expected [2, 1, P"));
    /* An integer cache. */
    fixture_layers(ls, data, P);
    ls[0].dtype = ls[1].dtype = ST_I32;
    write_voice(p, ls, L);
    CHECK(expect_fail(p, L, H, DH, PTTS_E_UNSUPPORTED, "I32"));
    /* An absurd layer index. */
    fixture_layers(ls, data, P);
    ls[1].index = 123456789;
    write_voice(p, ls, L);
    CHECK(expect_fail(p, 0, 0, 0, PTTS_E_FORMAT, "out of range"));
    /* Not a voice state: another safetensors file; not a safetensors file at all. */
    CHECK(expect_fail(fixture_path("tiny/flow_head.safetensors"), L, H, DH, PTTS_E_FORMAT,
                      "not a voice state"));
    {
        ptts_voice_state *w = NULL;
        CHECK(ptts_voice_state_load(&w, fixture_path("tiny/manifest.json"), L, H, DH, &e) != 0 &&
              w == NULL);
        CHECK(ptts_voice_state_load(&w, "does-not-exist.safetensors", L, H, DH, &e) != 0 &&
              w == NULL);
    }

    ptts_voice_state_free(v);
    for (int l = 0; l < L; l++)
        free(data[l]);
    st_close(ref);
    for (int i = 0; i < n_tmp; i++)
        remove(tmp_paths[i]);
    return test_summary();
}
