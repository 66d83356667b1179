/*
 * vk_codec.c - the Mimi decoder on the GPU as recorded passes (vk_engine.h): per pass, kc
 * frames of nf slots (a slot's frames as one group: every stage is causal and streaming, so
 * kc frames at once equal kc passes of one). Latents [nf kc][ld] -> denormalized -> quantizer
 * output_proj [nf kc][C] -> depthwise upsampling x16 -> the decoder transformer over
 * [nf kc 16][C] rows (a ring KV cache per slot) -> SEANet: dec_in (C -> 8 nf, k 7), three
 * stages of ELU + transposed conv (held as windowed convs, vk_weights.c) and a residual block,
 * ELU + dec_out -> PCM [nf][kc 1920]. Each conv carries its last input rows per slot in the
 * arena (vk_codec_mem); vkc_reset zeroes a slot's state.
 */
#include <string.h>

#include "vk_engine.h"

/* A streaming causal conv over T new rows per group: input rows (compact, T per group, op copy
 * or ELU) appended after the slot's carried rows in the work buffer W, the gemm, the last hist
 * rows carried back (L: the pass's slot list, in the ints buffer). dec_in's (its input, cx, is
 * the codec transformer's compact output); the convs after it read their input in place
 * (rec_wconv). */
static void rec_sconv(vk_engine *g, VkCommandBuffer cb, const gconv *cv, uint32_t L,
                      uint32_t groups, uint32_t T, uint32_t hist, uint32_t state, uint32_t W,
                      uint32_t in, int op, rows Y, int act, int accum) {
    const uint32_t cin = cv->cin, gs = (hist + T) * cin;
    if (hist) { /* carried rows and new rows go to disjoint rows of W */
        pvk_skip_barrier(&g->c);
        vkr_rowop(g, cb, groups * hist, cin, OP_COPY, L,
                  SS(BUF_ARENA, RG(state, hist, hist * cin, cin)), SA(RG(W, hist, gs, cin)), 0, 0);
    }
    vkr_rowop(g, cb, groups * T, cin, op, 0, SA(RC(in, cin)), SA(RG(W + hist * cin, T, gs, cin)), 0,
              0);
    vkr_linear(g, cb, &cv->w, groups * T / cv->st, RG(W, T / cv->st, gs, cv->st * cin), Y, act,
               accum, 1.f, NONE, RC(0, 0), 0);
    if (hist)
        vkr_rowop(g, cb, groups * hist, cin, OP_COPY, L, SA(RG(W + T * cin, hist, gs, cin)),
                  SS(BUF_ARENA, RG(state, hist, hist * cin, cin)), 0, 0);
}

/* A fronted buffer's T rows of the pass, per group (slot) after its front rows F:
 * [group][F + T][width], rows at F of each group. */
static rows RF(uint32_t buf, uint32_t F, uint32_t T, uint32_t width) {
    return RG(buf + F * width, T, (F + T) * width, width);
}

/* rec_sconv for an input that is already in a fronted buffer (RF: its producer wrote the T rows
 * after F >= hist front rows a group, raw): the slot's carried rows into the last hist front
 * rows, then the gemm reads each group's hist + T rows where they are, xact (ACT_ELU for
 * every conv after dec_in) applied to every value as it loads them; the last hist rows
 * (raw, like the carried rows) go back to the state before the gemm, so a later pass over the
 * buffer (the residual block's r2, accumulating) cannot change them. No rowop over the T rows,
 * unless W != NONE (vk_engine.conv_copy): then the window goes through xact into W
 * ([group][hist + T][cin]) first and the gemm reads W as it is. */
static void rec_wconv(vk_engine *g, VkCommandBuffer cb, const gconv *cv, uint32_t L,
                      uint32_t groups, uint32_t T, uint32_t hist, uint32_t state, uint32_t in,
                      uint32_t F, int xact, rows Y, int act, int accum, uint32_t W) {
    const uint32_t cin = cv->cin, gs = (F + T) * cin, win = in + (F - hist) * cin;
    if (hist) {
        vkr_rowop(g, cb, groups * hist, cin, OP_COPY, L,
                  SS(BUF_ARENA, RG(state, hist, hist * cin, cin)), SA(RG(win, hist, gs, cin)), 0,
                  0);
        /* after the copy in (T < hist would carry front rows), beside the gemm (both only
         * read the buffer; the gemm's barrier orders it for what follows) */
        pvk_skip_barrier(&g->c);
        vkr_rowop(g, cb, groups * hist, cin, OP_COPY, L, SA(RG(win + T * cin, hist, gs, cin)),
                  SS(BUF_ARENA, RG(state, hist, hist * cin, cin)), 0, 0);
    }
    if (W != NONE) {
        const uint32_t gw = (hist + T) * cin;
        g->counts.conv_copies++;
        vkr_rowop(g, cb, groups * (hist + T), cin, xact == ACT_ELU ? OP_ELU : OP_COPY, 0,
                  SA(RG(win, hist + T, gs, cin)), SA(RG(W, hist + T, gw, cin)), 0, 0);
        vkr_linear(g, cb, &cv->w, groups * T / cv->st, RG(W, T / cv->st, gw, cv->st * cin), Y, act,
                   accum, 1.f, NONE, RC(0, 0), 0);
        return;
    }
    vkr_linear_x(g, cb, &cv->w, groups * T / cv->st, RG(win, T / cv->st, gs, cv->st * cin), Y, act,
                 accum, 1.f, NONE, RC(0, 0), 0, xact);
}

typedef struct pc_up {
    uint32_t groups, frames, C, us, uk, list, qoff, xoff, toff, woff;
} pc_up;

/* The codec on frames f0 .. f0 + kc - 1 of nf slots of the decode list from its s0-th -> io
 * pcm (caller order, k frames per caller slot). Every stage is streaming and causal, so the kc
 * frames of a slot go through as one group of kc * 16 rows (transformer rows attend within the
 * group causally; convolutions carry state per group). */
void vkc_pass(vk_engine *g, VkCommandBuffer cb, uint32_t s0, uint32_t nf, uint32_t f0, uint32_t kc,
              uint32_t k) {
    const ptts_weights *w = g->w;
    const ptts_arch *a = &w->arch;
    const uint32_t ld = (uint32_t)a->ld, C = (uint32_t)a->C, L = g->ix.dec + s0;
    const uint32_t us = (uint32_t)w->codec.upsample_stride, uk = (uint32_t)w->codec.upsample_k;
    const uint32_t nr = nf * kc; /* latent rows */
    vkr_rowop(g, cb, nr, ld, OP_AFFINE, L,
              SS(BUF_ARENA, RG(g->ar.steplat + f0 * ld, kc, KMAX * ld, ld)), SA(RC(g->ar.zc, ld)),
              g->wt.emb_std, g->wt.emb_mean);
    vkr_lin(g, cb, &g->wt.quant, nr, RC(g->ar.zc, ld), RC(g->ar.qc, C), ACT_NONE);
    wspan sp = WSPAN0;
    vkr_span_add(&sp, g->wt.up_w, (size_t)C * uk);
    pc_up pu = {nf, kc,       C,        us,          uk,
                L,  g->ar.qc, g->ar.cx, g->cm.st_up, g->wt.up_w - vkr_span_base(g, &sp)};
    pvk_dispatch_flat(&g->c, cb, PVK_UPSAMPLE, &pu, sizeof pu, (uint64_t)nr * us * C);
    const ptts_transformer *tr = &w->codec.dec_tr;
    int win;
    const size_t ring = vk_kv_cd(&g->kv, g->S, 0, &win); /* slot 0's ring: where they begin */
    tspec t = {.L = g->wt.cd,
               .layers = tr->layers,
               .d = tr->d,
               .heads = tr->heads,
               .ffn = tr->ffn,
               .window = tr->window,
               .list = L,
               .len = g->ix.cdlen,
               .kvbase = (uint32_t)ring,
               .cap = (uint32_t)g->kv.ccap,
               .freq = g->wt.cd_freq,
               .kvslot = g->kv.cd_slot,
               .kvh = g->kv.c16,
               .kvlstride = (size_t)g->kv.ccap * vk_kv_crw(&g->kv, tr->d),
               .win0 = win,
               .winstep = 0,
               .x = g->ar.cx,
               .h = g->ar.ch,
               .qkv = g->ar.cqkv,
               .att = g->ar.catt,
               .ff = g->ar.cff};
    vkr_transformer(g, cb, &t, nr * us, kc * us);
    /* SEANet: dec_in writes h0's rows after its front rows, every later conv reads its input
     * in place (rec_wconv) with the ELU before it applied on load */
    uint32_t rws = kc * us, width = g->wt.dec_in.cout, cur = g->cm.h0, fc = g->cm.f_h0;
    rec_sconv(g, cb, &g->wt.dec_in, L, nf, rws, (uint32_t)g->cm.hist_in, g->cm.st_in, g->cm.w_in,
              g->ar.cx, OP_COPY, RF(g->cm.h0, fc, rws, width), ACT_NONE, 0);
    for (int s = 0; s < 3; s++) {
        const gconv *up = &g->wt.up[s];
        /* ELU, then the transposed conv as a windowed conv (wb_convtr): [rws][ust cout] rows
         * are the [rws ust][cout] output, here the rows after acc[s]'s front rows */
        const uint32_t fa = g->cm.f_acc[s], wo = up->cout / up->ust, ro = rws * up->ust;
        rec_wconv(g, cb, up, L, nf, rws, up->k - 1, g->cm.st_tail[s], cur, fc, ACT_ELU,
                  RG(g->cm.acc[s] + fa * wo, rws, (fa + ro) * wo, up->cout), ACT_NONE, 0,
                  g->cm.U[s]);
        rws = ro;
        width = wo;
        /* residual block on acc: r1 carries the rows before r2 adds to them */
        rec_wconv(g, cb, &g->wt.r1[s], L, nf, rws, (uint32_t)g->cm.hist_r[s], g->cm.st_r[s],
                  g->cm.acc[s], fa, ACT_ELU, RC(g->cm.rh[s], g->wt.r1[s].cout), ACT_ELU, 0,
                  g->cm.R[s]);
        vkr_linear(g, cb, &g->wt.r2[s].w, nf * rws, RC(g->cm.rh[s], g->wt.r1[s].cout),
                   RF(g->cm.acc[s], fa, rws, width), ACT_NONE, 1, 1.f, NONE, RC(0, 0), 0);
        cur = g->cm.acc[s];
        fc = fa;
    }
    rec_wconv(g, cb, &g->wt.dec_out, L, nf, rws, (uint32_t)g->cm.hist_out, g->cm.st_out, cur, fc,
              ACT_ELU, RC(g->cm.pcmc, 1), ACT_NONE, 0, g->cm.O);
    const uint32_t fs = (uint32_t)a->frame_samples;
    vkr_rowop(g, cb, nf, kc * fs, OP_COPY, g->ix.orig + s0, SA(RC(g->cm.pcmc, kc * fs)),
              SS(BUF_IO, RG(g->ox.pcm + f0 * fs, 1, k * fs, 0)), 0, 0);
}

typedef struct state_region {
    uint32_t off;
    size_t n; /* floats per slot */
} state_region;

/* Fresh codec state for a slot (every state region's rows of it; the ring's position is the
 * caller's: iv[i_cdlen + slot] = 0). Recorded into cb; the caller orders what follows. */
void vkc_reset(vk_engine *g, VkCommandBuffer cb, int slot) {
    const ptts_arch *a = &g->w->arch;
    const ptts_codec_weights *cw = &g->w->codec;
    state_region st[9];
    int ns = 0;
    st[ns++] = (state_region){g->cm.st_up, (size_t)(cw->upsample_k - cw->upsample_stride) * a->C};
    st[ns++] = (state_region){g->cm.st_in, (size_t)g->cm.hist_in * a->C};
    for (int s = 0; s < 3; s++) {
        const ptts_convtr *ct = &cw->dec_up[s];
        st[ns++] = (state_region){g->cm.st_tail[s], (size_t)(g->wt.up[s].k - 1) * ct->cin};
        st[ns++] = (state_region){g->cm.st_r[s], (size_t)g->cm.hist_r[s] * ct->cout};
    }
    st[ns++] = (state_region){g->cm.st_out, (size_t)g->cm.hist_out * cw->dec_out.cin};
    for (int i = 0; i < ns; i++)
        if (st[i].n)
            vkCmdFillBuffer(cb, g->arena.buf, ((size_t)st[i].off + slot * st[i].n) * 4, st[i].n * 4,
                            0);
}
