/*
 * vk_stepk.c - the generation step as ONE persistent dispatch (shaders/stepk.comp,
 * stepk512.comp) for one or two streams, where the multi-dispatch step would spend most of a
 * frame in launch and barrier latency. The host builds a program per k: a list of phases of
 * PH_WORDS words each (matrix-vector products with their staged input's layer norm or
 * modulation, attention with RoPE and the cache append, element-wise copies of the noise in
 * and the latents and EOS logits out), stored in the arena; the grid runs them separated by
 * grid-wide barriers. The rows and their slots come with the dispatch (push constants and the
 * step list), so one program per k and parity serves any slot list. Per frame: input_linear
 * [n][ld] -> [n][d], per layer qkv / attention / out / FFN, the EOS logit and cond_embed,
 * then per flow evaluation input_proj, every block's modulation, the blocks and final_linear.
 */
#include <math.h>
#include <string.h>

#include "shaders/stepk_abi.h"
#include "vk_engine.h"

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A PHK_MATVEC phase: y (=|+=) alpha * act(x W^T + b), x rows at xoff (stride xld, buffer
 * PHB_ARENA / PHB_IO), y rows at yoff (stride yld) in the arena; staged raw, ungated. */
static uint32_t *ph_mv(uint32_t *w, const glin *L, uint32_t xbuf, uint32_t xoff, uint32_t xld,
                       uint32_t yoff, uint32_t yld, int act, int accum, float alpha) {
    memset(w, 0, PH_WORDS * 4);
    w[PH_KIND] = PHK_MATVEC;
    w[MV_K] = L->in;
    w[MV_M] = L->out;
    w[MV_XBUF] = xbuf;
    w[MV_XOFF] = xoff;
    w[MV_XLD] = xld;
    w[MV_STAGE] = MVS_RAW;
    w[MV_LN_W] = w[MV_LN_B] = w[MV_MOD] = w[MV_SILU_VEC] = NONE;
    w[MV_W] = L->w;
    w[MV_B] = L->b;
    w[MV_ACT] = (uint32_t)act;
    w[MV_ALPHA] = fbits(alpha);
    w[MV_GATE] = NONE;
    w[MV_YOFF] = yoff;
    w[MV_YLD] = yld;
    w[MV_ACCUM] = (uint32_t)accum;
    w[MV_WH] = L->h; /* the bf16 copy, if any */
    return w;
}
/* The matvec's input staged as LN(x; eps) [* lnw + lnb] [modulated by the rows at mod]. */
static void ph_ln(uint32_t *w, uint32_t lnw, uint32_t lnb, float eps, uint32_t mod, uint32_t mld) {
    w[MV_STAGE] = MVS_LN;
    w[MV_LN_W] = lnw;
    w[MV_LN_B] = lnb;
    w[MV_LN_EPS] = fbits(eps);
    w[MV_MOD] = mod;
    w[MV_MOD_LD] = mld;
}
/* The matvec's outputs gated: by a weights vector (gbuf 1) or arena rows (gbuf 0, stride gld). */
static void ph_gate(uint32_t *w, uint32_t goff, uint32_t gbuf, uint32_t gld) {
    w[MV_GATE] = goff;
    w[MV_GATE_BUF] = gbuf;
    w[MV_GATE_LD] = gld;
}
/* copy j of a phase: n rows of `width` from (sbuf, soff, sld) to (dbuf, doff, dld), the
 * destination row the slot's (dslot) or the row index */
static void ph_copy(uint32_t *w, uint32_t j, uint32_t sbuf, uint32_t soff, uint32_t sld,
                    uint32_t dbuf, uint32_t doff, uint32_t dld, uint32_t dslot, uint32_t width) {
    uint32_t *c = w + PH_COPY + PH_COPY_WORDS * j;
    c[CP_SBUF] = sbuf;
    c[CP_SOFF] = soff;
    c[CP_SLD] = sld;
    c[CP_DBUF] = dbuf;
    c[CP_DOFF] = doff;
    c[CP_DLD] = dld;
    c[CP_DSLOT] = dslot;
    c[CP_WIDTH] = width;
}

/* Can this step (n rows) run as stepk? */
int vks_ok(const vk_engine *g, int n) {
    const ptts_arch *a = &g->w->arch;
    const int dh = a->d / a->heads, big = a->ffn > a->d ? a->ffn : a->d;
    return g->sk.G > 0 && n <= STEPK_N && vkr_flow_evals(g) <= STEPK_LSD &&
           g->c.wrange >= g->c.wsize && /* every layer's weights visible at once */
           g->kv.nwin == 1 &&           /* and every layer's caches */
           n * big <= 6144 && n * a->fd <= 6144 && dh <= 256 /* stepk.comp XS4 */ && dh % 2 == 0 &&
           a->d % 4 == 0 && a->ffn % 4 == 0 && a->fd % 4 == 0 && a->ld % 4 == 0 &&
           g->wt.ada_all.out % 4 == 0;
}

/* The program of k frames (the rows and their slots come with the dispatch: push constants and
 * the step list), so one program per k serves any slot list: returns the phase count. */
uint32_t vks_program(const vk_engine *g, uint32_t k, uint32_t *P) {
    const ptts_weights *w = g->w;
    const ptts_arch *a = &w->arch;
    const uint32_t d = (uint32_t)a->d, ld = (uint32_t)a->ld, fd = (uint32_t)a->fd;
    const uint32_t ffn = (uint32_t)a->ffn, dh = d / (uint32_t)a->heads;
    const uint32_t mld = g->wt.ada_all.out;
    uint32_t np = 0;
#define NEXT (P + (size_t)(np++) * PH_WORDS)
    for (uint32_t j = 0; j < k; j++) {
        uint32_t *q = ph_mv(NEXT, &g->wt.input_linear, PHB_ARENA, g->ar.latc, ld, g->ar.bx, d,
                            ACT_NONE, 0, 1.f);
        if (j > 0) { /* the previous frame's latent out */
            ph_copy(q, 0, PHB_ARENA, g->ar.latc, ld, PHB_IO, g->ox.lat + (j - 1) * ld, k * ld, 0,
                    ld);
            ph_copy(q, 1, PHB_ARENA, g->ar.latc, ld, PHB_ARENA, g->ar.steplat + (j - 1) * ld,
                    KMAX * ld, 1, ld);
        }
        for (int l = 0; l < a->layers; l++) {
            const gtl *L = &g->wt.bb[l];
            q = ph_mv(NEXT, &L->qkv, PHB_ARENA, g->ar.bx, d, g->ar.bqkv, 3 * d, ACT_NONE, 0, 1.f);
            ph_ln(q, L->n1w, L->n1b, 1e-5f, NONE, 0);
            q = NEXT;
            memset(q, 0, PH_WORDS * 4);
            q[PH_KIND] = PHK_ATTN;
            q[AT_D] = d;
            q[AT_DH] = dh;
            q[AT_HEADS] = (uint32_t)a->heads;
            q[AT_QKV] = g->ar.bqkv;
            q[AT_OUT] = g->ar.batt;
            q[AT_KVBASE] = 0; /* the backbone's caches come first */
            q[AT_KVSLOT] = (uint32_t)g->kv.bb_slot;
            q[AT_KVLAYER] = (uint32_t)((size_t)l * g->kv.cap * vk_kv_rw(&g->kv, (int)d));
            q[AT_CAP] = (uint32_t)g->kv.cap;
            q[AT_WINDOW] = (uint32_t)w->backbone.window;
            q[AT_FREQ] = g->wt.bb_freq;
            q[AT_FRAME] = j;
            q[AT_SCALE] = fbits(1.0f / sqrtf((float)dh));
            q[AT_KVH] = (uint32_t)g->kv.h16;
            q = ph_mv(NEXT, &L->out, PHB_ARENA, g->ar.batt, d, g->ar.bx, d, ACT_NONE, 1, 1.f);
            if (L->ls1 != NONE) ph_gate(q, L->ls1, 1, 0);
            q = ph_mv(NEXT, &L->l1, PHB_ARENA, g->ar.bx, d, g->ar.bff, ffn, ACT_GELU, 0, 1.f);
            ph_ln(q, L->n2w, L->n2b, 1e-5f, NONE, 0);
            q = ph_mv(NEXT, &L->l2, PHB_ARENA, g->ar.bff, ffn, g->ar.bx, d, ACT_NONE, 1, 1.f);
            if (L->ls2 != NONE) ph_gate(q, L->ls2, 1, 0);
        }
        /* EOS logit; the frame's noise into latc (input_linear read it two phases ago) */
        q = ph_mv(NEXT, &g->wt.out_eos, PHB_ARENA, g->ar.bx, d, g->ar.eosc + j, KMAX, ACT_NONE, 0,
                  1.f);
        ph_ln(q, g->wt.out_nw, g->wt.out_nb, 1e-5f, NONE, 0);
        ph_copy(q, 0, PHB_IO, g->ox.noise + j * ld, k * ld, PHB_ARENA, g->ar.latc, ld, 0, ld);
        q = ph_mv(NEXT, &g->wt.cond, PHB_ARENA, g->ar.bx, d, g->ar.ce, fd, ACT_NONE, 0, 1.f);
        ph_ln(q, g->wt.out_nw, g->wt.out_nb, 1e-5f, NONE, 0);
        for (int i = 0; i < vkr_flow_evals(g); i++) {
            ph_mv(NEXT, &g->wt.input_proj, PHB_ARENA, g->ar.latc, ld, g->ar.xh, fd, ACT_NONE, 0,
                  1.f);
            q = ph_mv(NEXT, &g->wt.ada_all, PHB_ARENA, g->ar.ce, fd, g->ar.mod, mld, ACT_NONE, 0,
                      1.f);
            q[MV_STAGE] = MVS_SILU_ADD;
            q[MV_SILU_VEC] = g->ar.te + (uint32_t)i * fd;
            for (int b = 0; b < a->flow_depth; b++) {
                const uint32_t mb = g->ar.mod + (uint32_t)b * 3 * fd;
                q = ph_mv(NEXT, &g->wt.fb[b].mlp0, PHB_ARENA, g->ar.xh, fd, g->ar.ub, fd, ACT_SILU,
                          0, 1.f);
                ph_ln(q, g->wt.fb[b].ln_w, g->wt.fb[b].ln_b, 1e-6f, mb, mld);
                q = ph_mv(NEXT, &g->wt.fb[b].mlp2, PHB_ARENA, g->ar.ub, fd, g->ar.xh, fd, ACT_NONE,
                          1, 1.f);
                ph_gate(q, mb + 2 * fd, 0, mld);
            }
            q = ph_mv(NEXT, &g->wt.final_linear, PHB_ARENA, g->ar.xh, fd, g->ar.latc, ld, ACT_NONE,
                      vkr_flow_accum(g), vkr_flow_alpha(g));
            ph_ln(q, NONE, NONE, 1e-6f, g->ar.mod + (uint32_t)a->flow_depth * 3 * fd, mld);
        }
    }
    /* epilogue: the last latent out and kept, EOS logits out, positions advanced */
    uint32_t *q = NEXT;
    memset(q, 0, PH_WORDS * 4);
    q[PH_KIND] = PHK_NONE;
    ph_copy(q, 0, PHB_ARENA, g->ar.latc, ld, PHB_IO, g->ox.lat + (k - 1) * ld, k * ld, 0, ld);
    ph_copy(q, 1, PHB_ARENA, g->ar.latc, ld, PHB_ARENA, g->ar.steplat + (k - 1) * ld, KMAX * ld, 1,
            ld);
    ph_copy(q, 2, PHB_ARENA, g->ar.eosc, KMAX, PHB_IO, g->ox.eos, k, 0, k);
    ph_copy(q, 3, PHB_ARENA, g->ar.latc, ld, PHB_ARENA, g->ar.lat, ld, 1, ld);
    q[PH_ADVANCE] = k;
#undef NEXT
    return np;
}

typedef struct pc_stepk {
    uint32_t prog, nph, sync, n, list, len;
} pc_stepk;

/* Record the step as stepk (the program for k already uploaded to prog[k]). */
void vks_record(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t k) {
    const uint32_t ld = (uint32_t)g->w->arch.ld;
    vkr_rowop(g, cb, n, ld, OP_COPY, g->ix.step, SS(BUF_ARENA, RG(g->ar.lat, 1, ld, 0)),
              SA(RC(g->ar.latc, ld)), 0, 0);
    pvk_fill(cb, &g->arena, (size_t)g->sk.sync_off * 4, 8, 0); /* the barrier's count and epoch */
    pvk_weights_window(&g->c, 0, g->c.wsize);
    pc_stepk p = {
        g->sk.prog[k][g->cc.rpar], g->sk.prog_n[k], g->sk.sync_off, n, g->ix.step, g->ix.bblen};
    pvk_dispatch(&g->c, cb, g->sk.pipe, &p, sizeof p, (uint32_t)g->sk.G, 1, 1);
}
