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

#include "codec_blocks.h"

#define BLOCK_FRAMES 4

typedef struct encoder {
    ptts_sconv in;
    ptts_sres res[3];
    ptts_sconv down[3];
    float *lvl[4];  /* SEANet activations: [rows_s, width_s] per level */
    ptts_sconv out; /* its output goes into ds's input region (then the transformer) */
    ptts_sconv ds;  /* downsample */
    ptts_kv kv;
    float *tr_scratch;
    ptts_bufs bufs; /* every allocation, freed together */
} encoder;

static void enc_free(encoder *en) {
    ptts_kv_free(&en->kv);
    ptts_bufs_free(&en->bufs);
}

/* Buffers for blocks of `bs` samples. */
static int enc_init(encoder *en, const ptts_weights *w, int bs) {
    const ptts_codec_weights *cw = &w->codec;
    int rows = bs;
    if (ptts_sconv_init(&en->bufs, &en->in, &cw->enc_in, rows)) return -1;
    if (!(en->lvl[0] = ptts_bufs_alloc(&en->bufs, (size_t)rows, (size_t)cw->enc_in.cout)))
        return -1;
    for (int s = 0; s < 3; s++) {
        if (ptts_sres_init(&en->bufs, &en->res[s], &cw->enc_res[s], rows)) return -1;
        if (ptts_sconv_init(&en->bufs, &en->down[s], &cw->enc_down[s], rows)) return -1;
        rows /= cw->enc_down[s].stride;
        if (!(en->lvl[s + 1] =
                  ptts_bufs_alloc(&en->bufs, (size_t)rows, (size_t)cw->enc_down[s].cout)))
            return -1;
    }
    if (ptts_sconv_init(&en->bufs, &en->out, &cw->enc_out, rows)) return -1;
    if (ptts_sconv_init(&en->bufs, &en->ds, &cw->downsample, rows)) return -1;
    const int cap = cw->enc_tr.window + rows - 1;
    if (ptts_kv_init(&en->kv, cw->enc_tr.layers, cw->enc_tr.d, cap, 0)) return -1;
    en->tr_scratch =
        ptts_bufs_alloc(&en->bufs, ptts_transformer_scratch(&cw->enc_tr, rows, cap), 1);
    return en->tr_scratch ? 0 : -1;
}

/* rows [r0, r0 + n) of a time-major [n, C] block into a channel-major [C, total] tap. */
static void tap_rows(float *tap, const float *x, int n, int C, int64_t r0, int64_t total) {
    for (int r = 0; r < n; r++)
        for (int ch = 0; ch < C; ch++)
            tap[(size_t)ch * total + r0 + r] = x[(size_t)r * C + ch];
}

int ptts_codec_encode(const ptts_weights *w, const ptts_ctx *c, const float *audio, int64_t n,
                      float **latents, int *T, float **tap_seanet, float **tap_tr, ptts_error *e) {
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
    for (int s = 0; s < 3; s++)
        down *= cw->enc_down[s].stride;
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
        float *x = ptts_sconv_in(&en.in);
        const int64_t s0 = f0 * fs;
        const int64_t have = PTTS_MAX((int64_t)0, PTTS_MIN((int64_t)rows, n - s0));
        memcpy(x, audio + s0, (size_t)have * sizeof(float));
        memset(x + have, 0, (size_t)(rows - have) * sizeof(float));
        ptts_sconv_run(c, &en.in, rows, en.lvl[0]);
        for (int s = 0; s < 3; s++) {
            const int m = cw->enc_down[s].cin;
            ptts_sres_run(c, &en.res[s], en.lvl[s], rows);
            c->k->elu(ptts_sconv_in(&en.down[s]), en.lvl[s], rows * m);
            ptts_sconv_run(c, &en.down[s], rows, en.lvl[s + 1]);
            rows /= cw->enc_down[s].stride;
        }
        c->k->elu(ptts_sconv_in(&en.out), en.lvl[3], rows * cw->enc_out.cin);
        float *y = ptts_sconv_in(&en.ds); /* [rows, C]: SEANet output, then transformer output */
        ptts_sconv_run(c, &en.out, rows, y);
        if (ts) tap_rows(ts, y, rows, C, f0 * rpf, trows);
        ptts_transformer_forward(c, &cw->enc_tr, &en.kv, y, rows, en.tr_scratch);
        if (tt) tap_rows(tt, y, rows, C, f0 * rpf, trows);
        if (f0 == 0) /* replicate padding: the history starts as copies of the first row */
            for (int r = 0; r < en.ds.hist; r++)
                memcpy(en.ds.buf + (size_t)r * C, y, (size_t)C * sizeof(float));
        ptts_sconv_run(c, &en.ds, rows, lat + (size_t)f0 * inner);
    }
    enc_free(&en);
    *latents = lat;
    *T = (int)nframes;
    if (tap_seanet) *tap_seanet = ts;
    if (tap_tr) *tap_tr = tt;
    return 0;
}
