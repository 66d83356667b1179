/*
 * codec_enc.c - the Mimi encoder for voice cloning (MODEL.md section 6): 24 kHz audio ->
 * latents at 12.5 Hz.
 *
 * Shapes (time-major; S = T * 1920 samples after zero padding, nf SEANet filters, C codec
 * width, encoder ratios (4, 5, 6)):
 *   audio [S, 1] -> conv k7 [S, nf] -> resblock, ELU, conv k8 s4 [S/4, 2nf]
 *   -> resblock, ELU, conv k10 s5 [S/20, 4nf] -> resblock, ELU, conv k12 s6 [S/120, 8nf]
 *   -> ELU, conv k3 [T*16, C] ("seanet") -> transformer (causal, window 250) [T*16, C] ("tr")
 *   -> downsample conv k32 s16, replicate padding, no bias -> latents [T, inner_dim].
 * Every stage is causal and streaming, so the clip is processed in blocks of BLOCK_FRAMES
 * frames with the same state a streaming run keeps (conv histories, a ring KV cache of
 * window + 16 * BLOCK_FRAMES - 1 positions): memory is bounded by the block, not the clip
 * (apart from the outputs).
 */
#include "codec.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_FRAMES 4

/* Causal streaming Conv1d: buf = [hist rows | new input rows], hist = k - stride. */
typedef struct econv {
    const ptts_conv *cv;
    int hist;
    float *buf; /* [hist + max_in, cin], zeroed at allocation (fresh state) */
} econv;

typedef struct eres {
    econv c1;
    const ptts_conv *c2;
    float *h; /* [max, m/2] */
    float *t; /* [max, m] */
} eres;

typedef struct encoder {
    econv in;
    eres res[3];
    econv down[3];
    float *lvl[4];  /* SEANet activations: [rows_s, width_s] per level */
    econv out;      /* its output goes into ds's input region (then the transformer) */
    econv ds;       /* downsample */
    ptts_kv kv;
    float *tr_scratch;
    float *mem[24];
    int n_mem;
} encoder;

static float *enc_alloc(encoder *en, size_t rows, size_t cols) {
    size_t n;
    if (en->n_mem == (int)(sizeof en->mem / sizeof en->mem[0])) return NULL;
    if (ptts_mul_size(rows ? rows : 1, cols ? cols : 1, &n) ||
        ptts_mul_size(n, sizeof(float), &n))
        return NULL;
    float *p = ptts_calloc_aligned(n);
    if (p) en->mem[en->n_mem++] = p;
    return p;
}

static int econv_init(encoder *en, econv *s, const ptts_conv *cv, int max_in) {
    s->cv = cv;
    s->hist = cv->k - cv->stride;
    s->buf = enc_alloc(en, (size_t)(s->hist + max_in), (size_t)cv->cin);
    return s->buf ? 0 : -1;
}

static float *econv_in(const econv *s) { return s->buf + (size_t)s->hist * s->cv->cin; }

static void econv_run(const ptts_ctx *c, econv *s, int T, float *y) {
    const int cin = s->cv->cin, st = s->cv->stride;
    ptts_linear_strided(c, &s->cv->w, s->buf, st * cin, T / st, y, s->cv->cout);
    memmove(s->buf, s->buf + (size_t)T * cin, (size_t)s->hist * cin * sizeof(float));
}

static int eres_init(encoder *en, eres *r, const ptts_resnet *rw, int max) {
    r->c2 = &rw->c2;
    r->h = enc_alloc(en, (size_t)max, (size_t)rw->c1.cout);
    r->t = enc_alloc(en, (size_t)max, (size_t)rw->c2.cout);
    if (!r->h || !r->t) return -1;
    return econv_init(en, &r->c1, &rw->c1, max);
}

static void eres_run(const ptts_ctx *c, eres *r, float *x, int T) {
    const int m = r->c1.cv->cin, half = r->c1.cv->cout;
    c->k->elu(econv_in(&r->c1), x, T * m);
    econv_run(c, &r->c1, T, r->h);
    c->k->elu(r->h, r->h, T * half);
    ptts_linear(c, &r->c2->w, r->h, T, r->t);
    c->k->axpy(x, 1.f, r->t, T * m);
}

static void enc_free(encoder *en) {
    ptts_kv_free(&en->kv);
    for (int i = 0; i < en->n_mem; i++) ptts_free_aligned(en->mem[i]);
}

/* Buffers for blocks of `bs` samples. */
static int enc_init(encoder *en, const ptts_weights *w, int bs) {
    const ptts_codec_weights *cw = &w->codec;
    int rows = bs;
    if (econv_init(en, &en->in, &cw->enc_in, rows)) return -1;
    if (!(en->lvl[0] = enc_alloc(en, (size_t)rows, (size_t)cw->enc_in.cout))) return -1;
    for (int s = 0; s < 3; s++) {
        if (eres_init(en, &en->res[s], &cw->enc_res[s], rows)) return -1;
        if (econv_init(en, &en->down[s], &cw->enc_down[s], rows)) return -1;
        rows /= cw->enc_down[s].stride;
        if (!(en->lvl[s + 1] = enc_alloc(en, (size_t)rows, (size_t)cw->enc_down[s].cout)))
            return -1;
    }
    if (econv_init(en, &en->out, &cw->enc_out, rows)) return -1;
    if (econv_init(en, &en->ds, &cw->downsample, rows)) return -1;
    const int cap = cw->enc_tr.window + rows - 1;
    if (ptts_kv_init(&en->kv, cw->enc_tr.layers, cw->enc_tr.d, cap)) return -1;
    en->tr_scratch = enc_alloc(en, ptts_transformer_scratch(&cw->enc_tr, rows, cap), 1);
    return en->tr_scratch ? 0 : -1;
}

/* rows [r0, r0 + n) of a time-major [n, C] block into a channel-major [C, total] tap. */
static void tap_rows(float *tap, const float *x, int n, int C, int64_t r0, int64_t total) {
    for (int r = 0; r < n; r++)
        for (int ch = 0; ch < C; ch++) tap[(size_t)ch * total + r0 + r] = x[(size_t)r * C + ch];
}

int ptts_codec_encode(const ptts_weights *w, const ptts_ctx *c, const float *audio, int64_t n,
                      float **latents, int *T, float **tap_seanet, float **tap_tr,
                      ptts_error *e) {
    *latents = NULL;
    *T = 0;
    if (tap_seanet) *tap_seanet = NULL;
    if (tap_tr) *tap_tr = NULL;
    const ptts_arch *a = &w->arch;
    const ptts_codec_weights *cw = &w->codec;
    if (!a->has_encoder)
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "this checkpoint has no voice-cloning weights: use a preset voice or "
                         "the model with voice cloning");
    if (n <= 0) return ptts_fail(e, PTTS_E_AUDIO, "codec encoder: the audio is empty");
    const int fs = a->frame_samples, C = a->C, inner = a->inner_dim;
    int down = 1;
    for (int s = 0; s < 3; s++) down *= cw->enc_down[s].stride;
    const int rpf = fs / down; /* transformer rows per frame (16) */
    if (fs <= 0 || fs % down || rpf != cw->downsample.stride || cw->enc_in.cin != 1 ||
        cw->enc_out.cout != C || cw->enc_tr.d != C || cw->enc_tr.window <= 0)
        return ptts_fail(e, PTTS_E_MODEL, "codec encoder: inconsistent architecture");
    const int64_t nframes = (n + fs - 1) / fs;
    if (nframes > (1 << 20))
        return ptts_fail(e, PTTS_E_AUDIO, "codec encoder: the audio is too long (%lld samples)",
                         (long long)n);
    const int64_t trows = nframes * rpf;

    encoder en;
    memset(&en, 0, sizeof en);
    float *lat = malloc((size_t)nframes * inner * sizeof(float));
    float *ts = tap_seanet ? malloc((size_t)trows * C * sizeof(float)) : NULL;
    float *tt = tap_tr ? malloc((size_t)trows * C * sizeof(float)) : NULL;
    if (!lat || (tap_seanet && !ts) || (tap_tr && !tt) ||
        enc_init(&en, w, BLOCK_FRAMES * fs) != 0) {
        free(lat);
        free(ts);
        free(tt);
        enc_free(&en);
        return ptts_fail(e, PTTS_E_NOMEM, "codec encoder: out of memory (%lld frames)",
                         (long long)nframes);
    }

    for (int64_t f0 = 0; f0 < nframes; f0 += BLOCK_FRAMES) {
        const int bf = (int)PTTS_MIN((int64_t)BLOCK_FRAMES, nframes - f0);
        int rows = bf * fs;
        /* samples, zero-padded past the end of the clip */
        float *x = econv_in(&en.in);
        const int64_t s0 = f0 * fs;
        const int64_t have = PTTS_MAX((int64_t)0, PTTS_MIN((int64_t)rows, n - s0));
        memcpy(x, audio + s0, (size_t)have * sizeof(float));
        memset(x + have, 0, (size_t)(rows - have) * sizeof(float));
        econv_run(c, &en.in, rows, en.lvl[0]);
        for (int s = 0; s < 3; s++) {
            const int m = cw->enc_down[s].cin;
            eres_run(c, &en.res[s], en.lvl[s], rows);
            c->k->elu(econv_in(&en.down[s]), en.lvl[s], rows * m);
            econv_run(c, &en.down[s], rows, en.lvl[s + 1]);
            rows /= cw->enc_down[s].stride;
        }
        c->k->elu(econv_in(&en.out), en.lvl[3], rows * cw->enc_out.cin);
        float *y = econv_in(&en.ds); /* [rows, C]: SEANet output, then transformer output */
        econv_run(c, &en.out, rows, y);
        if (ts) tap_rows(ts, y, rows, C, f0 * rpf, trows);
        ptts_transformer_forward(c, &cw->enc_tr, &en.kv, y, rows, en.tr_scratch);
        if (tt) tap_rows(tt, y, rows, C, f0 * rpf, trows);
        if (f0 == 0) /* replicate padding: the history starts as copies of the first row */
            for (int r = 0; r < en.ds.hist; r++)
                memcpy(en.ds.buf + (size_t)r * C, y, (size_t)C * sizeof(float));
        econv_run(c, &en.ds, rows, lat + (size_t)f0 * inner);
    }
    enc_free(&en);
    *latents = lat;
    *T = (int)nframes;
    if (tap_seanet) *tap_seanet = ts;
    if (tap_tr) *tap_tr = tt;
    return 0;
}
