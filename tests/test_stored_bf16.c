// ctest-label: unit
/*
 * test_stored_bf16.c - float32 mode keeps a matrix whose values are all bf16 (a BF16 file's,
 * as the released checkpoints are) as bf16 (weights.c make_lin): the same values in half the
 * bytes, computed in float32.
 * - The tiny F32 checkpoint stays float32; its BF16 copy (the same values rounded) loads with
 *   bf16 matrices in the backbone, the flow head and the codec, each value the file's.
 * - pocket-fill-v1 weights with fill_bf16 do the same, and the two storages of those values
 *   give the same linear layers: bit for bit with the reference kernels (the same sums in the
 *   same order), within float32 rounding of the sums with every other table.
 * - A matrix with a single value off the bf16 grid stays float32.
 */
#include <math.h>
#include <unistd.h>

#include "cpu/kernels.h"
#include "ops.h"
#include "safetensors.h"
#include "test.h"
#include "weights.h"

/* The matrices checked: backbone, flow head, codec (a panel matrix: its f32 panels kept). */
static const ptts_lin *lins(const ptts_weights *w, int i) {
    switch (i) {
    case 0: return &w->backbone.layer[0].in_proj;
    case 1: return &w->backbone.layer[1].linear2;
    case 2: return &w->flow.block[0].mlp0;
    case 3: return &w->out_eos;
    default: return &w->codec.dec_tr.layer[0].linear1;
    }
}
#define NLIN 5

static float widened(const ptts_lin *L, size_t i) {
    return L->type == PTTS_W_BF16 ? st_bf16_to_f32(L->wh[i]) : L->w[i];
}

/* Y through L against Y through an F32 ptts_lin of L's values, for every kernel table. */
static void same_linear(const ptts_lin *L, const char *what) {
    const size_t n = (size_t)L->out * L->in;
    float *w32 = malloc(n * sizeof(float));
    REQUIRE(w32 != NULL);
    for (size_t i = 0; i < n; i++)
        w32[i] = widened(L, i);
    const int N = 3;
    float *x = malloc((size_t)N * L->in * sizeof(float));
    float *y0 = malloc((size_t)N * L->out * sizeof(float));
    float *y1 = malloc((size_t)N * L->out * sizeof(float));
    REQUIRE(x && y0 && y1);
    uint32_t s = 12345;
    for (int i = 0; i < N * L->in; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    const ptts_kernels *t[8];
    int nt = ptts_kernels_all(t, 8);
    for (int k = 0; k < nt; k++) {
        t[k]->gemm_bf16(N, L->in, x, L->in, L->wh, L->bias, y0, L->out, 0, L->out);
        t[k]->gemm_f32(N, L->in, x, L->in, w32, L->bias, y1, L->out, 0, L->out);
        double worst = 0, scale = 0;
        int equal = 1;
        for (int i = 0; i < N * L->out; i++) {
            equal &= y0[i] == y1[i];
            worst = fmax(worst, fabs((double)y0[i] - y1[i]));
            scale = fmax(scale, fabs((double)y1[i]));
        }
        if (!strcmp(t[k]->isa, "ref"))
            CHECKF(equal, "%s, ref: bf16 storage gives other bits (worst %g)", what, worst);
        else /* K products summed in another order: a few ulps of the largest output */
            CHECKF(worst <= 1e-5 * scale * sqrt((double)L->in) + 1e-30, "%s, %s: worst %g of %g",
                   what, t[k]->isa, worst, scale);
    }
    free(w32);
    free(x);
    free(y0);
    free(y1);
}

/* The BF16 fixture as an F32 file (its values widened), one value of `nudged` moved off the
 * bf16 grid by one ulp. */
static void write_f32_copy(const char *path, const char *nudged) {
    st_file *f;
    ptts_error e = {0};
    REQUIRE(st_open(&f, fixture_path("tiny/model.bf16.safetensors"), &e) == 0);
    const int n = st_count(f);
    st_out_tensor *out = calloc((size_t)n, sizeof *out);
    float **bufs = calloc((size_t)n, sizeof *bufs);
    REQUIRE(out && bufs);
    for (int i = 0; i < n; i++) {
        const st_tensor *t = st_at(f, i);
        out[i] = (st_out_tensor){t->name, t->dtype, t->ndim, {0}, t->data};
        memcpy(out[i].shape, t->shape, sizeof out[i].shape);
        if (t->dtype != ST_BF16) continue;
        REQUIRE((bufs[i] = malloc((size_t)t->numel * sizeof(float))) != NULL);
        REQUIRE(st_to_f32(f, t, bufs[i], &e) == 0);
        if (!strcmp(t->name, nudged)) {
            uint32_t u;
            memcpy(&u, &bufs[i][7], 4);
            u |= 1u;
            memcpy(&bufs[i][7], &u, 4);
        }
        out[i].dtype = ST_F32;
        out[i].data = bufs[i];
    }
    REQUIRE(st_write(path, out, n, NULL, &e) == 0);
    for (int i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(out);
    st_close(f);
}

/* The matrices of w32 (float32 values) and wb (the same rounded to bf16): float32 storage in
 * the one, bf16 in the other, the values rounded to nearest even, and the same linear layers. */
static void compare(const ptts_weights *w32, const ptts_weights *wb, const char *what) {
    for (int i = 0; i < NLIN; i++) {
        const ptts_lin *a = lins(w32, i), *b = lins(wb, i);
        CHECKF(a->type == PTTS_W_F32 && a->w, "%s, float32 matrix %d: type %d", what, i, a->type);
        CHECKF(b->type == PTTS_W_BF16 && b->wh && !b->w, "%s, bf16 matrix %d: type %d", what, i,
               b->type);
        if (b->type != PTTS_W_BF16 || a->type != PTTS_W_F32) continue;
        size_t n = (size_t)a->out * a->in, bad = 0;
        for (size_t k = 0; k < n; k++)
            bad += b->wh[k] != st_f32_to_bf16(a->w[k]);
        CHECKF(bad == 0, "%s, matrix %d: %zu values are not the rounded ones", what, i, bad);
        same_linear(b, what);
    }
}

int main(void) {
    ptts_error e = {0};
    ptts_weights_options o = {.heads = 4, .codec_heads = 4};
    ptts_weights *w32 = NULL, *wb = NULL;
    REQUIRE(ptts_weights_load(&w32, fixture_path("tiny/model.safetensors"), &o, &e) == 0);
    REQUIRE(ptts_weights_load(&wb, fixture_path("tiny/model.bf16.safetensors"), &o, &e) == 0);
    compare(w32, wb, "BF16 file");
    /* the codec's panel matrix keeps its float32 panels, of the bf16 values */
    const ptts_lin *c = lins(wb, 4);
    CHECK(c->wp != NULL && c->wp[0] == st_bf16_to_f32(c->wh[0]));
    ptts_weights_free(w32);
    ptts_weights_free(wb);

    /* an F32 file of bf16 values is stored as bf16 too, but not a matrix with one value off */
    char dir[] = "/tmp/ptts_stored_XXXXXX", path[512];
    REQUIRE(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/nudged.safetensors", dir);
    write_f32_copy(path, "flow_lm.transformer.layers.0.self_attn.in_proj.weight");
    REQUIRE(ptts_weights_load(&wb, path, &o, &e) == 0);
    CHECKF(lins(wb, 0)->type == PTTS_W_F32, "the nudged matrix: type %d", lins(wb, 0)->type);
    CHECKF(lins(wb, 1)->type == PTTS_W_BF16, "the others: type %d", lins(wb, 1)->type);
    ptts_weights_free(wb);
    unlink(path);
    rmdir(dir);

    /* synthetic weights rounded to bf16 */
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "tiny") == 0);
    ptts_weights *f32 = NULL, *fb = NULL;
    ptts_weights_options fo = {0};
    REQUIRE(ptts_weights_fill(&f32, &a, &fo, &e) == 0);
    fo.fill_bf16 = 1;
    REQUIRE(ptts_weights_fill(&fb, &a, &fo, &e) == 0);
    compare(f32, fb, "fill_bf16");
    ptts_weights_free(f32);
    ptts_weights_free(fb);
    return test_summary();
}
