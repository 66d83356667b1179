/*
 * codec_dec.c - the Mimi decoder, streamed one latent frame at a time (MODEL.md section 6).
 *
 * Shapes per frame (time-major [rows, channels]; C codec width, nf SEANet filters, ratios
 * (6, 5, 4) in the full model):
 *   latent [ld] -> z = latent * emb_std + emb_mean [ld] -> quant = output_proj z [C]
 *   -> depthwise ConvTranspose1d k 32 s 16 -> [16, C] -> transformer (2 layers) [16, C]
 *   -> conv k7 [16, 8nf] -> ELU, convtr k12 s6 [96, 4nf] -> resblock
 *   -> ELU, convtr k10 s5 [480, 2nf] -> resblock -> ELU, convtr k8 s4 [1920, nf] -> resblock
 *   -> ELU, conv k3 -> pcm [1920, 1].
 * Streaming state: each Conv1d keeps its last k - s input rows in front of its input buffer,
 * each ConvTranspose1d keeps the k - s overlapping output rows (without bias), the transformer
 * keeps a ring KV cache of window + 16 - 1 positions. Everything is allocated at create.
 */
#include "codec.h"

#include <stdlib.h>
#include <string.h>

#include "codec_blocks.h"

/* Streaming ConvTranspose1d: the output of a call is acc rows [0, T*s) (bias added); rows
 * [T*s, T*s + k - s) are the tail carried into `partial` for the next call. */
typedef struct sconvtr {
    const ptts_convtr *ct;
    float *y;       /* [max_in, k*cout]: per input row, the k output rows it contributes */
    float *acc;     /* [max_in*s + k - s, cout] */
    float *partial; /* [k - s, cout] */
} sconvtr;

struct ptts_codec_dec {
    const ptts_weights *w;
    float *z;          /* [ld] */
    float *quant;      /* [C] */
    float *up_partial; /* [upsample_k - upsample_stride, C] */
    ptts_kv kv;
    float *tr_scratch;
    ptts_sconv in; /* its input region holds the upsampled rows the transformer updates */
    float *h0;     /* [16, 8nf] */
    sconvtr up[3];
    ptts_sres res[3];
    ptts_sconv out;
    ptts_bufs bufs; /* every allocation, freed together */
};

static int sconvtr_init(ptts_codec_dec *d, sconvtr *s, const ptts_convtr *ct, int max_in) {
    s->ct = ct;
    s->y = ptts_bufs_alloc(&d->bufs, (size_t)max_in, (size_t)ct->k * ct->cout);
    s->acc = ptts_bufs_alloc(&d->bufs, (size_t)max_in * ct->stride + ct->k - ct->stride,
                             (size_t)ct->cout);
    s->partial = ptts_bufs_alloc(&d->bufs, (size_t)(ct->k - ct->stride), (size_t)ct->cout);
    return s->y && s->acc && s->partial ? 0 : -1;
}

/* Output rows r0 .. r1 of the overlap-add of s->y [T, k*cout] into s->acc: the carried tail or
 * zeros, then the contribution of every input row t covering the row (t*stride <= r <
 * t*stride + k) in increasing t, then the bias (rows below T*stride): per value the additions
 * of one axpy per t over the whole run, in the same order, so any split of the rows gives the
 * same bits. */
typedef struct {
    const ptts_ctx *c;
    sconvtr *s;
    int T;
} convtr_job;

static void sconvtr_add_rows(void *ctx, int r0, int r1) {
    const convtr_job *j = ctx;
    const ptts_convtr *ct = j->s->ct;
    const ptts_kernels *k = j->c->k;
    const int co = ct->cout, st = ct->stride, kk = ct->k, T = j->T, tail = kk - st;
    float *acc = j->s->acc;
    for (int r = r0; r < r1; r++) {
        float *row = acc + (size_t)r * co;
        if (r < tail)
            memcpy(row, j->s->partial + (size_t)r * co, (size_t)co * sizeof(float));
        else
            memset(row, 0, (size_t)co * sizeof(float));
        /* t from the first input row whose k outputs reach r, to the last that starts by r */
        const int t0 = r >= kk ? (r - kk) / st + 1 : 0, t1 = PTTS_MIN(T - 1, r / st);
        for (int t = t0; t <= t1; t++)
            k->axpy(row, 1.f, j->s->y + (size_t)t * kk * co + (size_t)(r - t * st) * co, co);
        if (ct->bias && r < T * st) k->axpy(row, 1.f, ct->bias, co);
    }
}

/* s->y [T, k*cout] (the matrix product, already done) -> s->acc rows [0, T*stride) of cout:
 * overlap-add with the carried tail, bias; rows spread over the pool, then the new tail. */
static void sconvtr_add(const ptts_ctx *c, sconvtr *s, int T) {
    const ptts_convtr *ct = s->ct;
    const int co = ct->cout, st = ct->stride, rows = T * st + ct->k - st;
    convtr_job j = {c, s, T};
    /* memory-bound additions: weighed as 4 flops each against the pool's threshold */
    ptts_rows_par(c, rows, 8, 4.0 * T * ct->k * co, sconvtr_add_rows, &j);
    memcpy(s->partial, s->acc + (size_t)T * st * co, (size_t)(ct->k - st) * co * sizeof(float));
}

/* Input rows r0 .. r1 of an upsampling stage: ELU in place, then their rows of the matrix
 * product (each row alone: ptts_linear_rows). */
typedef struct {
    const ptts_ctx *c;
    sconvtr *s;
    float *x;
    int T;
} up_job;

static void up_rows(void *ctx, int r0, int r1) {
    const up_job *j = ctx;
    const ptts_lin *L = &j->s->ct->w;
    j->c->k->elu(j->x + (size_t)r0 * L->in, j->x + (size_t)r0 * L->in, (r1 - r0) * L->in);
    ptts_linear_rows(j->c, L, j->x, L->in, r0, r1, j->s->y, L->out);
}

/* x [T, cin] -> s->acc rows [0, T*stride) of cout. */
static void sconvtr_run(const ptts_ctx *c, sconvtr *s, const float *x, int T) {
    ptts_linear(c, &s->ct->w, x, T, s->y);
    sconvtr_add(c, s, T);
}

/* ELU(x) in place, x [T, cin] -> s->acc rows [0, T*stride) of cout: as ELU then sconvtr_run, in
 * one pool region for the ELU and the product. */
static void sconvtr_run_elu(const ptts_ctx *c, sconvtr *s, float *x, int T) {
    const ptts_lin *L = &s->ct->w;
    if (T < 64 || !ptts_linear_rows_ok(L, T)) { /* few rows: ptts_linear splits the panels */
        c->k->elu(x, x, T * L->in);
        sconvtr_run(c, s, x, T);
        return;
    }
    up_job j = {c, s, x, T};
    ptts_rows_par(c, T, 8, 2.0 * T * L->in * L->out, up_rows, &j);
    sconvtr_add(c, s, T);
}

void ptts_codec_dec_free(ptts_codec_dec *d) {
    if (!d) return;
    ptts_kv_free(&d->kv);
    ptts_bufs_free(&d->bufs);
    free(d);
}

int ptts_codec_dec_create(ptts_codec_dec **out, const ptts_weights *w, ptts_error *e) {
    *out = NULL;
    const ptts_arch *a = &w->arch;
    const ptts_codec_weights *cw = &w->codec;
    const int us = cw->upsample_stride, uk = cw->upsample_k;
    if (us <= 0 || uk < us || uk - us > us || !cw->upsample_w || cw->dec_tr.d != a->C ||
        cw->dec_tr.window <= 0)
        return ptts_fail(e, PTTS_E_MODEL, "codec decoder: inconsistent upsampling weights");
    int frame = us;
    for (int s = 0; s < 3; s++)
        frame *= cw->dec_up[s].stride;
    if (frame != a->frame_samples || cw->dec_in.stride != 1 || cw->dec_out.stride != 1 ||
        cw->dec_out.cout != 1)
        return ptts_fail(e, PTTS_E_MODEL,
                         "codec decoder: the upsampling ratios give %d samples per frame, "
                         "expected %d",
                         frame, a->frame_samples);
    ptts_codec_dec *d = calloc(1, sizeof *d);
    if (!d) return ptts_fail(e, PTTS_E_NOMEM, "codec decoder: out of memory");
    d->w = w;
    int ok = 1;
    d->z = ptts_bufs_alloc(&d->bufs, (size_t)a->ld, 1);
    d->quant = ptts_bufs_alloc(&d->bufs, (size_t)a->C, 1);
    d->up_partial = ptts_bufs_alloc(&d->bufs, (size_t)(uk - us), (size_t)a->C);
    ok = ok && d->z && d->quant && d->up_partial;
    /* the ring holds every key a query of a 16-row frame can see */
    const int cap = cw->dec_tr.window + us - 1;
    if (ok && ptts_kv_init(&d->kv, cw->dec_tr.layers, cw->dec_tr.d, cap, 0) != 0) ok = 0;
    if (ok) {
        d->tr_scratch =
            ptts_bufs_alloc(&d->bufs, ptts_transformer_scratch(&cw->dec_tr, us, cap), 1);
        ok = d->tr_scratch != NULL;
    }
    ok = ok && ptts_sconv_init(&d->bufs, &d->in, &cw->dec_in, us) == 0;
    if (ok) d->h0 = ptts_bufs_alloc(&d->bufs, (size_t)us, (size_t)cw->dec_in.cout);
    ok = ok && d->h0;
    int rows = us;
    for (int s = 0; ok && s < 3; s++) {
        ok = sconvtr_init(d, &d->up[s], &cw->dec_up[s], rows) == 0;
        rows *= cw->dec_up[s].stride;
        ok = ok && ptts_sres_init(&d->bufs, &d->res[s], &cw->dec_res[s], rows) == 0;
    }
    ok = ok && ptts_sconv_init(&d->bufs, &d->out, &cw->dec_out, rows) == 0;
    if (!ok) {
        ptts_codec_dec_free(d);
        return ptts_fail(e, PTTS_E_NOMEM, "codec decoder: out of memory");
    }
    *out = d;
    return 0;
}

static void zero_rows(float *p, int rows, int cols) {
    memset(p, 0, (size_t)rows * cols * sizeof(float));
}

void ptts_codec_dec_reset(ptts_codec_dec *d) {
    const ptts_codec_weights *cw = &d->w->codec;
    zero_rows(d->up_partial, cw->upsample_k - cw->upsample_stride, d->w->arch.C);
    ptts_kv_reset(&d->kv);
    ptts_sconv_reset(&d->in);
    for (int s = 0; s < 3; s++) {
        const ptts_convtr *ct = d->up[s].ct;
        zero_rows(d->up[s].partial, ct->k - ct->stride, ct->cout);
        ptts_sconv_reset(&d->res[s].c1);
    }
    ptts_sconv_reset(&d->out);
}

/* [rows, C] time-major -> [C, rows] channel-major. */
static void transpose_to(float *dst, const float *src, int rows, int C) {
    for (int r = 0; r < rows; r++)
        for (int ch = 0; ch < C; ch++)
            dst[(size_t)ch * rows + r] = src[(size_t)r * C + ch];
}

/* latent [ld] -> the upsampled rows x [us, C] (z, quant_out, the depthwise transposed conv with
 * its carried tail). */
static void dec_quant_up(ptts_codec_dec *d, const ptts_ctx *c, const float *latent, float *x,
                         const ptts_codec_taps *taps) {
    const ptts_arch *a = &d->w->arch;
    const ptts_codec_weights *cw = &d->w->codec;
    const int C = a->C, us = cw->upsample_stride, uk = cw->upsample_k, tail = uk - us;

    for (int i = 0; i < a->ld; i++)
        d->z[i] = latent[i] * cw->emb_std[i] + cw->emb_mean[i];
    ptts_linear(c, &cw->quant_out, d->z, 1, d->quant);
    if (taps && taps->quant) memcpy(taps->quant, d->quant, (size_t)C * sizeof(float));

    /* depthwise transposed conv of one input step: y[j, ch] = quant[ch] * w[ch, j], j < uk;
     * rows < us are emitted (plus the carried tail), rows us .. uk-1 become the new tail */
    const float *uw = cw->upsample_w;
    for (int j = 0; j < us; j++) {
        float *row = x + (size_t)j * C;
        const float *carry = j < tail ? d->up_partial + (size_t)j * C : NULL;
        for (int ch = 0; ch < C; ch++)
            row[ch] = d->quant[ch] * uw[(size_t)ch * uk + j] + (carry ? carry[ch] : 0.f);
    }
    for (int j = 0; j < tail; j++) {
        float *row = d->up_partial + (size_t)j * C;
        for (int ch = 0; ch < C; ch++)
            row[ch] = d->quant[ch] * uw[(size_t)ch * uk + us + j];
    }
}

/* With st (ptts_codec_taps.stage_s): the time since *t added to st[stage], *t now. */
static void stage_done(double *st, int stage, double *t) {
    if (!st) return;
    double now = ptts_now();
    st[stage] += now - *t;
    *t = now;
}

/* After up[0]'s rows are in d->up[0].acc [us * r0, 4nf]: the high-rate SEANet stages, one
 * stream (rows 96 .. 1920 a frame: plenty for the kernels on their own). st, t: stage_done. */
static void dec_high(ptts_codec_dec *d, const ptts_ctx *c, float *pcm, double *st, double *t) {
    int rows = d->w->codec.upsample_stride * d->up[0].ct->stride, width = d->up[0].ct->cout;
    ptts_sres_run(c, &d->res[0], d->up[0].acc, rows);
    stage_done(st, PTTS_CDS_RES0, t);
    const float *cur = d->up[0].acc;
    for (int s = 1; s < 3; s++) {
        float *curw = d->up[s - 1].acc; /* cur: ELU in place */
        sconvtr_run_elu(c, &d->up[s], curw, rows);
        stage_done(st, s == 1 ? PTTS_CDS_UP1 : PTTS_CDS_UP2, t);
        rows *= d->up[s].ct->stride;
        width = d->up[s].ct->cout;
        ptts_sres_run(c, &d->res[s], d->up[s].acc, rows);
        stage_done(st, s == 1 ? PTTS_CDS_RES1 : PTTS_CDS_RES2, t);
        cur = d->up[s].acc;
    }
    ptts_elu_par(c, ptts_sconv_in(&d->out), cur, rows * width);
    ptts_sconv_run(c, &d->out, rows, pcm);
    stage_done(st, PTTS_CDS_OUT, t);
}

void ptts_codec_dec_frame(ptts_codec_dec *d, const ptts_ctx *c, const float *latent, float *pcm,
                          const ptts_codec_taps *taps) {
    const int C = d->w->arch.C, us = d->w->codec.upsample_stride;
    double *st = taps ? taps->stage_s : NULL, t = st ? ptts_now() : 0;
    float *x = ptts_sconv_in(&d->in);
    dec_quant_up(d, c, latent, x, taps);
    if (taps && taps->up) transpose_to(taps->up, x, us, C);
    stage_done(st, PTTS_CDS_UPSAMPLE, &t);

    ptts_transformer_forward(c, &d->w->codec.dec_tr, &d->kv, x, us, d->tr_scratch);
    if (taps && taps->tr) transpose_to(taps->tr, x, us, C);
    stage_done(st, PTTS_CDS_TRANSFORMER, &t);

    /* SEANet decoder: dec_in, ELU, up[0] (the low-rate stages, as batched below), then the rest */
    ptts_sconv_run(c, &d->in, us, d->h0);
    ptts_elu_par(c, d->h0, d->h0, us * d->in.cv->cout);
    stage_done(st, PTTS_CDS_DEC_IN, &t);
    sconvtr_run(c, &d->up[0], d->h0, us);
    stage_done(st, PTTS_CDS_UP0, &t);
    dec_high(d, c, pcm, st, &t);
}

/* ---- batched decoding ------------------------------------------------------------------------
 * n streams' frames at once for the stages that see 16 rows a frame (their weights are ~90% of
 * the decoder's: transformer 6.3 M, dec_in 1.8 M, up[0] 1.6 M parameters at full size): the
 * transformer over [n * 16, C] (ptts_transformer_forward_groups, attention per stream on its
 * own ring), dec_in and up[0] with ptts_linear_groups over the streams' own state buffers (each
 * weight panel fetched once for all streams). Per stream before: z, quant_out (one row: the
 * N < 4 kernel, kept per stream so its arithmetic stays that of a lone decode), upsampling;
 * after: ELU, up[0]'s overlap-add, and dec_high. Every output is computed by the same kernel
 * call shapes per row as ptts_codec_dec_frame, so the PCM is bit-identical. */
struct ptts_codec_batch {
    const ptts_weights *w;
    int max;
    float *x;       /* [max * us, C]: the streams' upsampled rows, then transformer output */
    float *scratch; /* ptts_transformer_groups_scratch(max, us, cap) */
    int cap;
    ptts_kv **kv;      /* [max] */
    const float **xin; /* [max] */
    float **yout;      /* [max] */
};

void ptts_codec_batch_free(ptts_codec_batch *b) {
    if (!b) return;
    ptts_free_aligned(b->x);
    ptts_free_aligned(b->scratch);
    free(b->kv);
    free(b->xin);
    free(b->yout);
    free(b);
}

int ptts_codec_batch_create(ptts_codec_batch **out, const ptts_weights *w, int max_streams,
                            ptts_error *e) {
    *out = NULL;
    if (max_streams < 1) return ptts_fail(e, PTTS_E_INVALID, "codec batch: no streams");
    const ptts_codec_weights *cw = &w->codec;
    const int us = cw->upsample_stride;
    ptts_codec_batch *b = calloc(1, sizeof *b);
    if (!b) return ptts_fail(e, PTTS_E_NOMEM, "codec batch: out of memory");
    b->w = w;
    b->max = max_streams;
    b->cap = cw->dec_tr.window + us - 1; /* as ptts_codec_dec_create's ring */
    size_t xs, ss;
    if (ptts_mul_size((size_t)max_streams * us, (size_t)w->arch.C * sizeof(float), &xs) ||
        ptts_mul_size(ptts_transformer_groups_scratch(&cw->dec_tr, max_streams, us, b->cap),
                      sizeof(float), &ss)) {
        ptts_codec_batch_free(b);
        return ptts_fail(e, PTTS_E_NOMEM, "codec batch: too many streams");
    }
    b->x = ptts_calloc_aligned(xs);
    b->scratch = ptts_calloc_aligned(ss);
    b->kv = calloc((size_t)max_streams, sizeof *b->kv);
    b->xin = calloc((size_t)max_streams, sizeof *b->xin);
    b->yout = calloc((size_t)max_streams, sizeof *b->yout);
    if (!b->x || !b->scratch || !b->kv || !b->xin || !b->yout) {
        ptts_codec_batch_free(b);
        return ptts_fail(e, PTTS_E_NOMEM, "codec batch: out of memory");
    }
    *out = b;
    return 0;
}

int ptts_codec_batch_max(const ptts_codec_batch *b) { return b ? b->max : 0; }

void ptts_codec_dec_frames_low(ptts_codec_batch *b, ptts_codec_dec *const *d, int n,
                               const ptts_ctx *c, const float *const *latents) {
    const ptts_codec_weights *cw = &b->w->codec;
    const int C = b->w->arch.C, us = cw->upsample_stride;
    const size_t frame = (size_t)us * C;
    /* transformer: stream i's rows at x + i * frame, its ring d[i]->kv */
    for (int i = 0; i < n; i++) {
        dec_quant_up(d[i], c, latents[i], b->x + i * frame, NULL);
        b->kv[i] = &d[i]->kv;
    }
    ptts_transformer_forward_groups(c, &cw->dec_tr, b->kv, n, b->x, us, b->scratch, b->cap);
    /* dec_in (k7, stride 1): each stream's window [hist | 16 new rows] in its own sconv buffer,
     * X rows overlapping (ldx = cin, K = k * cin), as ptts_sconv_run reads it */
    const ptts_sconv *in0 = &d[0]->in;
    for (int i = 0; i < n; i++) {
        memcpy(ptts_sconv_in(&d[i]->in), b->x + i * frame, frame * sizeof(float));
        b->xin[i] = d[i]->in.buf;
        b->yout[i] = d[i]->h0;
    }
    ptts_linear_groups(c, &in0->cv->w, b->xin, in0->cv->cin, us, b->yout, in0->cv->w.out, n);
    for (int i = 0; i < n; i++) {
        ptts_sconv *s = &d[i]->in;
        memmove(s->buf, s->buf + (size_t)us * s->cv->cin,
                (size_t)s->hist * s->cv->cin * sizeof(float));
        c->k->elu(d[i]->h0, d[i]->h0, us * s->cv->cout);
        b->xin[i] = d[i]->h0;
        b->yout[i] = d[i]->up[0].y;
    }
    /* up[0]: the matrix over all streams, then each stream's overlap-add */
    const ptts_convtr *ct = d[0]->up[0].ct;
    ptts_linear_groups(c, &ct->w, b->xin, ct->w.in, us, b->yout, ct->w.out, n);
    for (int i = 0; i < n; i++)
        sconvtr_add(c, &d[i]->up[0], us);
}

void ptts_codec_dec_frame_high(ptts_codec_dec *d, const ptts_ctx *c, float *pcm) {
    dec_high(d, c, pcm, NULL, NULL);
}
