// ctest-label: parity
/*
 * test_codec.c - the Mimi codec against the reference (tests/fixtures/<size>/mimi_decode and
 * mimi_encode, MODEL.md section 6). Size "tiny" here (weights from tiny/model.safetensors);
 * test_codec_full.c includes this file with CODEC_TEST_SIZE "full" (pocket-fill-v1 weights).
 *
 * Decoder: latents [N, ld] streamed from a fresh state -> pcm [N, 1920] per frame, and the taps
 * quant [C], up [C, 16], tr [C, 16] of the first and last frame; then reset + decode again
 * (identical), and pools of 2 and 3 threads (identical).
 * Encoder: audio [S] -> seanet, tr [C, T*16], latents [T, inner_dim], and
 * conditioning = latents @ speaker_proj^T [T, d]; a prefix of the clip gives the prefix of the
 * latents (causal blocks); a checkpoint without the encoder is refused with an explanation.
 * Tolerance: relative L2 per frame / row / time step <= 1e-4.
 * Reduced modes (bf16, int8): the codec's matrices carry bf16 panels instead of f32 ones where
 * the kernels have gemm_bf16_panel, and each decoded frame stays within 2e-2 of the reference.
 */
#include <stdint.h>

#include "codec.h"
#include "ops.h"
#include "pool.h"
#include "safetensors.h"
#include "test.h"
#include "weights.h"

#ifndef CODEC_TEST_SIZE
#define CODEC_TEST_SIZE "tiny"
#endif

#define TOL 1e-4

/* A F32 tensor of the fixture (malloc'd); REQUIREs it exists. *numel receives its size. */
static float *load(const st_file *f, const char *name, int64_t *numel) {
    const st_tensor *t = st_find(f, name);
    if (!t) fprintf(stderr, "fixture tensor %s missing\n", name);
    REQUIRE(t != NULL);
    float *p = malloc((size_t)t->numel * sizeof(float));
    REQUIRE(p != NULL);
    ptts_error e = {0};
    REQUIRE(st_to_f32(f, t, p, &e) == 0);
    if (numel) *numel = t->numel;
    return p;
}

static ptts_weights *load_weights(void) {
    ptts_weights *w = NULL;
    ptts_error e = {0};
    int rc;
    if (!strcmp(CODEC_TEST_SIZE, "tiny")) {
        ptts_weights_options o = {.mode = PTTS_WMODE_F32, .heads = 4, .codec_heads = 4};
        rc = ptts_weights_load(&w, fixture_path("tiny/model.safetensors"), &o, &e);
    } else {
        ptts_arch a;
        REQUIRE(ptts_arch_preset(&a, CODEC_TEST_SIZE) == 0);
        rc = ptts_weights_fill(&w, &a, NULL, &e);
    }
    if (rc) fprintf(stderr, "weights: %s\n", e.msg);
    REQUIRE(rc == 0 && w != NULL);
    return w;
}

static void test_decode(const ptts_weights *w, const ptts_ctx *c) {
    const char *path = fixture_path(CODEC_TEST_SIZE "/mimi_decode.safetensors");
    st_file *f = NULL;
    ptts_error e = {0};
    REQUIRE(st_open(&f, path, &e) == 0);
    const int C = w->arch.C, ld = w->arch.ld, fs = w->arch.frame_samples;
    int64_t nl = 0;
    float *lat = load(f, "latents", &nl);
    const int N = (int)(nl / ld);
    REQUIRE(N >= 2 && (int64_t)N * ld == nl);
    float *pcm_ref = load(f, "pcm", NULL);
    char nm[64];
    float *ref[2][3];
    static const char *tapname[3] = {"quant", "up", "tr"};
    const int tapn[3] = {C, C * 16, C * 16};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            snprintf(nm, sizeof nm, "frame%d.%s", i ? N - 1 : 0, tapname[j]);
            ref[i][j] = load(f, nm, NULL);
        }
    float *got[2][3];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            REQUIRE((got[i][j] = malloc((size_t)tapn[j] * sizeof(float))));

    ptts_codec_dec *d = NULL;
    int rc = ptts_codec_dec_create(&d, w, &e);
    if (rc) fprintf(stderr, "decoder: %s\n", e.msg);
    REQUIRE(rc == 0);
    float *pcm = malloc((size_t)N * fs * sizeof(float));
    float *pcm2 = malloc((size_t)N * fs * sizeof(float));
    REQUIRE(pcm && pcm2);

    double worst = 0;
    for (int t = 0; t < N; t++) {
        ptts_codec_taps tp = {0};
        int which = t == 0 ? 0 : t == N - 1 ? 1 : -1;
        if (which >= 0) tp = (ptts_codec_taps){got[which][0], got[which][1], got[which][2], NULL};
        ptts_codec_dec_frame(d, c, lat + (size_t)t * ld, pcm + (size_t)t * fs,
                             which >= 0 ? &tp : NULL);
        double err = rel_l2(pcm + (size_t)t * fs, pcm_ref + (size_t)t * fs, (size_t)fs);
        CHECKF(err <= TOL, "pcm frame %d: rel L2 %.3g", t, err);
        if (err > worst) worst = err;
    }
    printf("%s decode: max pcm rel L2 over %d frames %.3g\n", CODEC_TEST_SIZE, N, worst);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            double err = rel_l2(got[i][j], ref[i][j], (size_t)tapn[j]);
            CHECKF(err <= TOL, "frame%d.%s: rel L2 %.3g", i ? N - 1 : 0, tapname[j], err);
            printf("  frame%d.%s rel L2 %.3g\n", i ? N - 1 : 0, tapname[j], err);
        }

    /* a reset gives a fresh state: the same output, bit for bit */
    ptts_codec_dec_reset(d);
    for (int t = 0; t < N; t++)
        ptts_codec_dec_frame(d, c, lat + (size_t)t * ld, pcm2 + (size_t)t * fs, NULL);
    CHECKF(memcmp(pcm, pcm2, (size_t)N * fs * sizeof(float)) == 0,
           "decoding after reset differs (rel L2 %.3g)", rel_l2(pcm2, pcm, (size_t)N * fs));

    /* stage timing (taps.stage_s, for benchmarks) changes no value and times every stage */
    double st[PTTS_CODEC_STAGES] = {0};
    const ptts_codec_taps timed = {.stage_s = st};
    ptts_codec_dec_reset(d);
    for (int t = 0; t < N; t++)
        ptts_codec_dec_frame(d, c, lat + (size_t)t * ld, pcm2 + (size_t)t * fs, &timed);
    CHECKF(memcmp(pcm, pcm2, (size_t)N * fs * sizeof(float)) == 0,
           "decoding with stage_s differs (rel L2 %.3g)", rel_l2(pcm2, pcm, (size_t)N * fs));
    for (int i = 0; i < PTTS_CODEC_STAGES; i++)
        CHECKF(st[i] > 0 && st[i] < 60, "stage %d: %g s over %d frames", i, st[i], N);

    /* with pools of 2 and 3 threads: bit for bit (every stage splits rows or outputs so that
     * each value is computed as on one thread, whatever the chunks) */
    for (int nt = 2; nt <= 3; nt++) {
        ptts_pool *pool = ptts_pool_create(nt);
        REQUIRE(pool != NULL);
        ptts_ctx c2 = {c->k, pool};
        ptts_codec_dec_reset(d);
        for (int t = 0; t < N; t++)
            ptts_codec_dec_frame(d, &c2, lat + (size_t)t * ld, pcm2 + (size_t)t * fs, NULL);
        CHECKF(memcmp(pcm, pcm2, (size_t)N * fs * sizeof(float)) == 0,
               "%d threads vs 1: rel L2 %.3g", nt, rel_l2(pcm2, pcm, (size_t)N * fs));
        ptts_pool_free(pool);
    }

    ptts_codec_dec_free(d);
    free(pcm);
    free(pcm2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            free(ref[i][j]);
            free(got[i][j]);
        }
    free(lat);
    free(pcm_ref);
    st_close(f);
}

/* Worst relative L2 over the columns (time steps) of channel-major [C, n] tensors. */
static double worst_column(const float *a, const float *b, int C, int64_t n, int64_t *at) {
    float *ca = malloc((size_t)C * sizeof(float)), *cb = malloc((size_t)C * sizeof(float));
    REQUIRE(ca && cb);
    double worst = 0;
    *at = -1;
    for (int64_t t = 0; t < n; t++) {
        for (int ch = 0; ch < C; ch++) {
            ca[ch] = a[(size_t)ch * n + t];
            cb[ch] = b[(size_t)ch * n + t];
        }
        double err = rel_l2(ca, cb, (size_t)C);
        if (!(err <= worst)) {
            worst = err;
            *at = t;
        }
    }
    free(ca);
    free(cb);
    return worst;
}

/* Worst relative L2 over the rows of row-major [n, width] tensors. */
static double worst_row(const float *a, const float *b, int n, int width, int *at) {
    double worst = 0;
    *at = -1;
    for (int r = 0; r < n; r++) {
        double err = rel_l2(a + (size_t)r * width, b + (size_t)r * width, (size_t)width);
        if (!(err <= worst)) {
            worst = err;
            *at = r;
        }
    }
    return worst;
}

static void test_encode(const ptts_weights *w, const ptts_ctx *c) {
    const char *path = fixture_path(CODEC_TEST_SIZE "/mimi_encode.safetensors");
    st_file *f = NULL;
    ptts_error e = {0};
    REQUIRE(st_open(&f, path, &e) == 0);
    const int C = w->arch.C, inner = w->arch.inner_dim, d = w->arch.d;
    const int fs = w->arch.frame_samples;
    int64_t S = 0, nlat = 0;
    float *audio = load(f, "audio", &S);
    float *seanet_ref = load(f, "seanet", NULL);
    float *tr_ref = load(f, "tr", NULL);
    float *lat_ref = load(f, "latents", &nlat);
    float *cond_ref = load(f, "conditioning", NULL);
    const int Tref = (int)(nlat / inner);

    float *lat = NULL, *seanet = NULL, *tr = NULL;
    int T = 0;
    int rc = ptts_codec_encode(w, c, audio, S, &lat, &T, &seanet, &tr, &e);
    if (rc) fprintf(stderr, "encode: %s\n", e.msg);
    REQUIRE(rc == 0);
    CHECKF(T == Tref && T == (int)((S + fs - 1) / fs), "T %d, expected %d", T, Tref);
    REQUIRE(T == Tref);
    int64_t at;
    int r;
    double es = worst_column(seanet, seanet_ref, C, (int64_t)T * 16, &at);
    CHECKF(es <= TOL, "seanet: rel L2 %.3g at step %lld", es, (long long)at);
    double et = worst_column(tr, tr_ref, C, (int64_t)T * 16, &at);
    CHECKF(et <= TOL, "tr: rel L2 %.3g at step %lld", et, (long long)at);
    double el = worst_row(lat, lat_ref, T, inner, &r);
    CHECKF(el <= TOL, "latents: rel L2 %.3g at frame %d", el, r);
    float *cond = malloc((size_t)T * d * sizeof(float));
    REQUIRE(cond != NULL);
    ptts_linear(c, &w->speaker_proj, lat, T, cond);
    double ec = worst_row(cond, cond_ref, T, d, &r);
    CHECKF(ec <= TOL, "conditioning: rel L2 %.3g at frame %d", ec, r);
    printf("%s encode (%d frames): max rel L2 seanet %.3g, tr %.3g, latents %.3g, "
           "conditioning %.3g\n",
           CODEC_TEST_SIZE, T, es, et, el, ec);

    /* causal in blocks: a 6-frame prefix (crossing a block boundary, ending mid-frame) gives
     * the first 5 latents of the whole clip */
    float *lat2 = NULL;
    int T2 = 0;
    REQUIRE(ptts_codec_encode(w, c, audio, 5 * fs + 700, &lat2, &T2, NULL, NULL, &e) == 0);
    CHECK(T2 == 6);
    double ep = rel_l2(lat2, lat, (size_t)5 * inner);
    CHECKF(ep <= 1e-6, "prefix latents differ: rel L2 %.3g", ep);
    free(lat2);

    /* no encoder weights: refused with an explanation */
    ptts_weights nw = *w;
    nw.arch.has_encoder = 0;
    ptts_error e2 = {0};
    float *lat3 = (float *)&nw;
    int T3 = -1;
    rc = ptts_codec_encode(&nw, c, audio, S, &lat3, &T3, NULL, NULL, &e2);
    CHECK(rc == PTTS_E_UNSUPPORTED && e2.code == PTTS_E_UNSUPPORTED);
    CHECK(lat3 == NULL && T3 == 0);
    CHECK(strstr(e2.msg, "no voice-cloning weights") != NULL);
    /* empty audio */
    rc = ptts_codec_encode(w, c, audio, 0, &lat3, &T3, NULL, NULL, &e2);
    CHECK(rc == PTTS_E_AUDIO);

    free(cond);
    free(lat);
    free(seanet);
    free(tr);
    free(audio);
    free(seanet_ref);
    free(tr_ref);
    free(lat_ref);
    free(cond_ref);
    st_close(f);
}

/* The bf16 and int8 modes: where the kernels have gemm_bf16_panel, the codec's matrices carry
 * bf16 panels instead of f32 ones (f32 mode: f32 panels only), and the decoded PCM stays near
 * the reference (bf16 weights and activations: ~5e-3 tiny, ~7e-3 full; bound 2e-2). */
static void test_reduced_modes(const ptts_weights *w32, const ptts_ctx *c) {
    const ptts_lin *L32 = &w32->codec.dec_tr.layer[0].linear1;
    CHECK(L32->wp != NULL && L32->wp16 == NULL);
    const char *path = fixture_path(CODEC_TEST_SIZE "/mimi_decode.safetensors");
    st_file *f = NULL;
    ptts_error e = {0};
    REQUIRE(st_open(&f, path, &e) == 0);
    const int ld = w32->arch.ld, fs = w32->arch.frame_samples;
    int64_t nl = 0;
    float *lat = load(f, "latents", &nl);
    float *pcm_ref = load(f, "pcm", NULL);
    const int N = (int)(nl / ld);
    float *pcm = malloc((size_t)fs * sizeof(float));
    REQUIRE(pcm);
    static const ptts_wmode modes[2] = {PTTS_WMODE_BF16, PTTS_WMODE_INT8};
    for (int mi = 0; mi < 2; mi++) {
        ptts_weights *w = NULL;
        ptts_weights_options o = {.mode = modes[mi], .heads = 4, .codec_heads = 4};
        int rc;
        if (!strcmp(CODEC_TEST_SIZE, "tiny")) {
            rc = ptts_weights_load(&w, fixture_path("tiny/model.safetensors"), &o, &e);
        } else {
            ptts_arch a;
            REQUIRE(ptts_arch_preset(&a, CODEC_TEST_SIZE) == 0);
            rc = ptts_weights_fill(&w, &a, &o, &e);
        }
        REQUIRE(rc == 0);
        const ptts_lin *L = &w->codec.dec_tr.layer[0].linear1;
        if (c->k->gemm_bf16_panel)
            CHECK(L->wp16 != NULL && L->wp == NULL);
        else
            CHECK(L->wp16 == NULL);
        ptts_codec_dec *d = NULL;
        REQUIRE(ptts_codec_dec_create(&d, w, &e) == 0);
        double worst = 0;
        for (int t = 0; t < N; t++) {
            ptts_codec_dec_frame(d, c, lat + (size_t)t * ld, pcm, NULL);
            double err = rel_l2(pcm, pcm_ref + (size_t)t * fs, (size_t)fs);
            if (err > worst) worst = err;
        }
        CHECKF(worst <= 2e-2, "%s mode decoder: worst frame rel L2 %.3g", mi ? "int8" : "bf16",
               worst);
        printf("%s mode decoder (%s panels): worst frame rel L2 %.3g\n", mi ? "int8" : "bf16",
               L->wp16 ? "bf16" : "f32", worst);
        ptts_codec_dec_free(d);
        ptts_weights_free(w);
    }
    free(pcm);
    free(lat);
    free(pcm_ref);
    st_close(f);
}

int main(void) {
    ptts_weights *w = load_weights();
    ptts_ctx c = {ptts_kernels_best(), NULL};
    printf("kernels: %s\n", c.k->isa);
    test_decode(w, &c);
    test_encode(w, &c);
    test_reduced_modes(w, &c);
    ptts_weights_free(w);
    return test_summary();
}
