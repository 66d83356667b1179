/*
 * test_fill.c - pocket-fill-v1 against the reference's tiny checkpoint: every tensor of
 * tiny/model.safetensors must be reproduced bit for bit from its name and shape, and the BF16 /
 * F16 copies must equal our round-to-nearest-even conversions of the generated values, bit for
 * bit, and widen back (st_to_f32) to exactly those rounded values. The sampler-head variants
 * (model_flow_matching: 144 tensors, model_drifting: 138) are the tensor lists of the tiny
 * architecture with that flow_type (ptts_arch_tensors): the same names and shapes, fill values.
 */
// ctest-label: unit
#include <stdint.h>

#include "fill.h"
#include "safetensors.h"
#include "test.h"
#include "weights.h"

static float *gen(const st_tensor *t) {
    float *v = malloc(((size_t)t->numel + 1) * sizeof *v);
    REQUIRE(v != NULL);
    ptts_fill_tensor(t->name, t->ndim, t->shape, v);
    return v;
}

/* ptts_arch_tensors' listing, checked against a file name by name (shape, values). */
typedef struct {
    st_file *f;
    int i, bad;
} variant_walk;

static int variant_tensor(void *user, const char *name, int ndim, const int64_t *shape) {
    variant_walk *w = user;
    const st_tensor *t = st_find(w->f, name);
    w->i++;
    if (!t || t->ndim != ndim || memcmp(t->shape, shape, (size_t)ndim * sizeof *shape)) {
        fprintf(stderr, "variant: %s missing from the file or shaped otherwise\n", name);
        w->bad++;
        return 0;
    }
    float *want = gen(t), *have = malloc(((size_t)t->numel + 1) * sizeof *have);
    REQUIRE(have != NULL);
    ptts_error e = {0};
    if (st_to_f32(w->f, t, have, &e) || memcmp(want, have, (size_t)t->numel * sizeof *want))
        w->bad++;
    free(want);
    free(have);
    return 0;
}

static void sampler_variant(const char *rel, int flow_type, int count) {
    ptts_error e = {0};
    variant_walk w = {0};
    REQUIRE(st_open(&w.f, fixture_path(rel), &e) == 0);
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "tiny") == 0);
    a.flow_type = flow_type;
    CHECK(ptts_arch_tensors(&a, variant_tensor, &w, &e) == 0);
    CHECKF(w.bad == 0 && w.i == count && st_count(w.f) == count,
           "%s: %d listed, %d bad, %d in file", rel, w.i, w.bad, st_count(w.f));
    st_close(w.f);
}

int main(void) {
    ptts_error e = {0};
    st_file *f32 = NULL, *fb = NULL, *fh = NULL;
    REQUIRE(st_open(&f32, fixture_path("tiny/model.safetensors"), &e) == 0);
    REQUIRE(st_open(&fb, fixture_path("tiny/model.bf16.safetensors"), &e) == 0);
    REQUIRE(st_open(&fh, fixture_path("tiny/model.f16.safetensors"), &e) == 0);
    CHECK(st_count(f32) == 150);
    CHECK(st_count(fb) == st_count(f32));
    CHECK(st_count(fh) == st_count(f32));

    /* Known values of the hash and mixer (FNV-1a of "" is the offset basis; "a" is the
     * published test vector; splitmix64 from 0 gives 0xe220a8397b1dcdaf). */
    CHECK(ptts_fill_fnv1a64("") == 0xcbf29ce484222325ull);
    CHECK(ptts_fill_fnv1a64("a") == 0xaf63dc4c8601ec8cull);
    CHECK(ptts_fill_mix(0) == 0xe220a8397b1dcdafull);

    int bad_f32 = 0, bad_bf16 = 0, bad_f16 = 0;
    for (int i = 0; i < st_count(f32); i++) {
        const st_tensor *t = st_at(f32, i);
        REQUIRE(t->dtype == ST_F32);
        float *want = gen(t);
        float *have = malloc(((size_t)t->numel + 1) * sizeof *have);
        REQUIRE(have != NULL);
        CHECK(st_to_f32(f32, t, have, &e) == 0);
        if (memcmp(want, have, (size_t)t->numel * sizeof *want) != 0) {
            bad_f32++;
            fprintf(stderr, "fill mismatch: %s\n", t->name);
        }

        const st_tensor *tb = st_find(fb, t->name), *th = st_find(fh, t->name);
        CHECKF(tb && tb->dtype == ST_BF16 && tb->numel == t->numel, "%s", t->name);
        CHECKF(th && th->dtype == ST_F16 && th->numel == t->numel, "%s", t->name);
        if (tb && tb->dtype == ST_BF16 && tb->numel == t->numel) {
            int ok = 1;
            CHECK(st_to_f32(fb, tb, have, &e) == 0);
            for (int64_t k = 0; k < t->numel; k++) {
                uint16_t h = (uint16_t)(tb->data[2 * k] | tb->data[2 * k + 1] << 8);
                uint16_t r = st_f32_to_bf16(want[k]);
                float rv = st_bf16_to_f32(r);
                if (h != r || memcmp(&have[k], &rv, 4) != 0) ok = 0;
            }
            if (!ok) {
                bad_bf16++;
                fprintf(stderr, "bf16 mismatch: %s\n", t->name);
            }
        }
        if (th && th->dtype == ST_F16 && th->numel == t->numel) {
            int ok = 1;
            CHECK(st_to_f32(fh, th, have, &e) == 0);
            for (int64_t k = 0; k < t->numel; k++) {
                uint16_t h = (uint16_t)(th->data[2 * k] | th->data[2 * k + 1] << 8);
                uint16_t r = st_f32_to_f16(want[k]);
                float rv = st_f16_to_f32(r);
                if (h != r || memcmp(&have[k], &rv, 4) != 0) ok = 0;
            }
            if (!ok) {
                bad_f16++;
                fprintf(stderr, "f16 mismatch: %s\n", t->name);
            }
        }
        free(want);
        free(have);
    }
    CHECKF(bad_f32 == 0, "%d tensors differ from pocket-fill-v1", bad_f32);
    CHECKF(bad_bf16 == 0, "%d BF16 tensors differ", bad_bf16);
    CHECKF(bad_f16 == 0, "%d F16 tensors differ", bad_f16);

    /* A scalar and an empty tensor: defined, and nothing written past numel. */
    float s[2] = {0, 42};
    ptts_fill_tensor("x.weight", 0, NULL, s);
    CHECK(s[1] == 42 && fabsf(s[0]) <= 1.7320509f && s[0] != 0);
    int64_t zshape[2] = {0, 5};
    ptts_fill_tensor("y.weight", 2, zshape, s);
    CHECK(s[1] == 42);

    sampler_variant("tiny/model_flow_matching.safetensors", PTTS_FLOW_MATCHING, 144);
    sampler_variant("tiny/model_drifting.safetensors", PTTS_FLOW_DRIFTING, 138);

    st_close(f32);
    st_close(fb);
    st_close(fh);
    return test_summary();
}
