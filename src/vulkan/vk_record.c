/*
 * vk_record.c - the dispatch recorders of the Vulkan engine and the kernel choice (vk_engine.h):
 * linears (gemm_pick / tc_pick choose among linear.comp, gemm.comp, mgemm.comp, skinny.comp,
 * the register-tiled gemm_*.comp and the tensor-core gemm_tc_*.comp / gemm_tch_*.comp), row ops
 * (copies, ELU, adds, the latent's denormalization), layer norms (optionally with the flow head's
 * modulation), the transformer layer (norm, qkv, RoPE + KV append, attention, out, FFN), the
 * flow head with its sampler, and the multi-dispatch step: per frame input_linear [n][ld] ->
 * [n][d], the backbone layers, out_norm, the EOS logit [n][1], the flow head [n][d] -> [n][ld].
 * Push constants carry float offsets (relative to the weights window's base for weights).
 * Arithmetic mirrors the CPU path (ops.c, flow_head.c); sums run in another order (GPU parity
 * is checked at 1e-3 relative L2 per frame).
 */
#include <math.h>
#include <string.h>

#include "vk_engine.h"

void vkr_span_add(wspan *s, uint32_t off, size_t n) {
    if (off == NONE) return;
    if (off < s->lo) s->lo = off;
    if (off + n > s->hi) s->hi = (uint32_t)(off + n);
}
uint32_t vkr_span_base(vk_engine *g, const wspan *s) {
    if (s->lo > s->hi) return 0; /* no weights read: the window does not matter */
    return (uint32_t)(pvk_weights_window(&g->c, (VkDeviceSize)s->lo * 4, (VkDeviceSize)s->hi * 4) /
                      4);
}
static uint32_t rel(uint32_t off, uint32_t base) { return off == NONE ? NONE : off - base; }

typedef struct pc_lin { /* at most 128 bytes: the pipeline layout's push-constant range */
    uint32_t N, K, M, xoff, xrps, xgs, xld, yoff, yrps, ygs, yld, goff, grps, ggs, gld, gbuf, woff,
        boff, act, accum;
    float alpha;
    uint32_t v4; /* K, X offsets and strides all multiples of 4: vec4 loads */
} pc_lin;

_Static_assert(sizeof(pc_lin) <= 128, "pc_lin: the push-constant range is 128 bytes");

/* A tiled gemm pipeline: its name (ptts_vk_tuning.gemm_force / tc_force), rows x outputs of a
 * workgroup's tile, and whether it reads W's float16 copy (glin.f) instead of the float32. */
typedef struct gtile {
    const char *name;
    int pipe;
    uint32_t bm, bn;
    int f16;
} gtile;

static const gtile gemm_tiles[GT_N] = {{"l", PVK_GEMM_L, 128, 128, 0},
                                       {"r64", PVK_GEMM_R64, 256, 64, 0},
                                       {"r32", PVK_GEMM_R32, 256, 32, 0}};

/* Workgroups of tile t's grid for N rows -> M outputs. */
static uint32_t tile_wgs(const gtile *t, uint32_t N, uint32_t M) {
    return ((M + t->bn - 1) / t->bn) * ((N + t->bm - 1) / t->bm);
}

/* The tile for N rows -> M outputs (vec4 operands), -1: none (gemm.comp and mgemm.comp
 * decide). The largest tile whose outputs fit (128, 64 or 32: few outputs get tall tiles) while
 * its grid has two workgroups per compute unit; smaller grids are latency-bound, and there
 * gemm.comp / mgemm.comp won, as they did against a K-split tile and few-row tiles (removed;
 * the H200 measurements are in bench/RESULTS.md). */
static int gemm_pick(const vk_engine *g, uint32_t N, uint32_t M) {
    if (g->tn.gemm_force >= 0) return g->tn.gemm_force;
    if (N < 32 || M < 16) return -1;
    const int big = M > 64 ? GT_L : M > 32 ? GT_R64 : GT_R32;
    return tile_wgs(&gemm_tiles[big], N, M) >= 2 * g->tn.gemm_units ? big : -1;
}

/* gemm_tc.glsl's tiles, then gemm_tch.glsl's: the same products from W's float16 copy, wide
 * (64 x 128) and tall (128 x 64, 128 x 32), for the codec's large gemms and the step of 256+
 * streams. */
static const gtile tc_tiles[TC_N] = {
    {"l", PVK_GEMM_TC_L, 128, 128, 0},  {"m", PVK_GEMM_TC_M, 64, 64, 0},
    {"s", PVK_GEMM_TC_S, 32, 32, 0},    {"wh", PVK_GEMM_TCH_W, 64, 128, 1},
    {"th", PVK_GEMM_TCH_T, 128, 64, 1}, {"tq", PVK_GEMM_TCH_Q, 128, 32, 1}};

/* The tensor-core tile for N rows -> M outputs, -1: none (fewer than TC_ROWS rows stay on the
 * float32 kernels). The 32 x 32 tile by default: it beat the square 64 and 128 tiles at every
 * stream count on the H200 (the step's few-row gemms are bound by K-step latency, and the most
 * workgroups in flight win). Where a wide (64 x 128) or tall (128 x 64) tile fits the outputs
 * and its grid fills the GPU twice (the codec's large gemms), that tile: each reads its X rows
 * and W outputs 2-4x fewer times from L2 than 32 x 32 tiles do (bench/RESULTS.md). From
 * STEP_WIDE_ROWS rows (the step of that many streams) those tiles too, their grid short of one
 * wave or not (H200, bench_vulkan paired: 512 streams 3329-3341x with 32 x 32 tiles there,
 * 3530-3562x; 1024 streams: the step 12.6 -> 11.0 ms with the wide tiles). The wide and tall tiles
 * read W's float16 copy (gemm_tch.glsl): the same products as converting float32 W in the shader,
 * 9-10% less gemm time at 1,024 streams (every gemm forced on one tile: 484 against 534 ms wide,
 * 434 against 481 tall; the 491,520 x 256 conv 1.29 against 1.51 ms), and their float32-weight
 * twins are gone. Their K steps are 32: 102-106 registers, two workgroups an SM (forced on
 * every gemm: 378 against 482 ms wide, 343 against 435 tall; 64 x 64 tiles of 4 subgroups and
 * 64 x 128 / 128 x 128 tiles with 64 x 32 outputs a subgroup were slower, bench/RESULTS.md). With
 * those, STEP_WIDE_ROWS came down from 512 to 256: the step's gemms on them at 256-511 rows are
 * slower alone (256 streams: the step 3.8 -> 4.5 ms) but leave more of the GPU to the codec
 * beside them (paired: 256 streams 3979-3986x -> 4334-4354x, 384: 3950-3963x -> 4453-4464x);
 * from 128 rows they lost (128 streams 3585-3593x -> 3289-3296x). The 32-63-output gemms whose
 * grid fills the GPU four times take the tall 128 x 32 tile (the codec's last residual conv, 64
 * -> 32 channels over 1920 rows a frame): the 32 x 32 tile converted W to float16 in each of its
 * 61,440 workgroups at 1,024 streams and took 1216 us a dispatch, 128 x 32 takes 602 (engine
 * 4690-4725x -> 4884-4922x paired at 1,024 streams); at 32 streams its 480 workgroups (1.8
 * waves of two an SM) lost 2.4% to the 32 x 32 tile's 1920 (bench/RESULTS.md). */
#define STEP_WIDE_ROWS 256

static int tc_pick(const vk_engine *g, uint32_t N, uint32_t M) {
    if (!g->tn.tc || N < TC_ROWS || M < 16) return -1;
    if (g->tn.tc_force >= 0) return g->tn.tc_force;
    const int t = M >= 128 ? TC_WH : M >= 64 ? TC_TH : TC_S;
    if (t != TC_S && (tile_wgs(&tc_tiles[t], N, M) >= 2 * g->tn.gemm_units || N >= STEP_WIDE_ROWS))
        return t;
    if (t == TC_S && M >= 32 && tile_wgs(&tc_tiles[TC_TQ], N, M) >= 4 * g->tn.gemm_units)
        return TC_TQ;
    return TC_S;
}

int vkr_tile_named(int tc, const char *name) {
    if (!name) return -1;
    const gtile *t = tc ? tc_tiles : gemm_tiles;
    const int n = tc ? TC_N : GT_N;
    for (int i = 0; i < n; i++)
        if (!strcmp(name, t[i].name)) return i;
    return -2;
}

/* Y (=|+=) gate * alpha * act(xact(X) W^T + b); gate: rows in the arena (gbuf 0) or a weight
 * vector (gbuf 1, goff a weight offset, every row the same); xact: ACT_ELU of every X value as
 * it is loaded (rec_wconv: the PVK_XELU pipeline variants; no other is made), ACT_NONE
 * through vkr_linear. */
void vkr_linear_x(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X, rows Y,
                  int act, int accum, float alpha, uint32_t goff, rows G, uint32_t gbuf, int xact) {
    if (N == 0) return;
    pc_lin p = {
        N,    L->in, L->out, X.off, X.rps, X.gs, X.ld, Y.off,         Y.rps,           Y.gs,  Y.ld,
        goff, G.rps, G.gs,   G.ld,  gbuf,  L->w, L->b, (uint32_t)act, (uint32_t)accum, alpha, 0};
    const int xv = xact == ACT_ELU ? PVK_XELU : 0; /* the pipelines' ELU-on-load variants */
    p.v4 = L->in % 4 == 0 && X.off % 4 == 0 && X.gs % 4 == 0 && X.ld % 4 == 0 && L->w % 4 == 0;
    /* with vec4 operands, the register-tiled gemm_tile.glsl kernels where a grid fills the GPU
     * (gemm_pick); else the 64x64-tile gemm once it fills the GPU (>= 256 workgroups); below
     * that, from 16 rows, the register-blocked mgemm (32 outputs x 8 rows a workgroup) when
     * operands are vec4s */
    const uint32_t tiles = ((L->out + 63) / 64) * ((N + 63) / 64);
    const int tiled = p.v4 && !(L->out <= 8 && N >= 256);
    const int tc = tiled ? tc_pick(g, N, L->out) : -1;
    const int gt = tiled && tc < 0 ? gemm_pick(g, N, L->out) : -1;
    const gtile *t = tc >= 0 ? &tc_tiles[tc] : gt >= 0 ? &gemm_tiles[gt] : NULL;
    /* a float16 tile reads W's float16 copy (rows of in rounded up to 8 halves): vk_weights.c
     * makes one wherever tc_pick can pick (tensor cores on, in % 4 == 0, out >= 16) */
    const int f16 = t && t->f16;
    const uint32_t wo = f16 ? L->f : L->w;
    wspan sp = WSPAN0;
    vkr_span_add(&sp, wo, f16 ? (size_t)L->out * ((L->in + 7) / 8) * 4 : (size_t)L->out * L->in);
    vkr_span_add(&sp, L->b, L->out);
    if (gbuf == 1) vkr_span_add(&sp, goff, L->out);
    const uint32_t wb = vkr_span_base(g, &sp);
    p.woff = wo - wb;
    p.boff = rel(L->b, wb);
    if (gbuf == 1) {
        p.goff = rel(goff, wb);
        p.grps = COMPACT;
        p.ggs = 0;
        p.gld = 0;
    }
    if (tc >= 0)
        g->tc_n[tc]++;
    else if (gt >= 0)
        g->gemm_n[gt]++;
    if (t)
        pvk_dispatch(&g->c, cb, t->pipe | xv, &p, sizeof p, (L->out + t->bn - 1) / t->bn,
                     (N + t->bm - 1) / t->bm, 1);
    else if (L->out <= 8 && N >= 256) /* a few outputs of many rows: an invocation per row */
        pvk_dispatch_flat(&g->c, cb, PVK_SKINNY | xv, &p, sizeof p, N);
    else if (p.v4 && N >= 16 && L->out >= 32 && tiles < 256)
        pvk_dispatch(&g->c, cb, PVK_MGEMM | xv, &p, sizeof p, (N + 7) / 8, (L->out + 31) / 32, 1);
    else if (N >= 32 && L->out >= 16)
        pvk_dispatch(&g->c, cb, PVK_GEMM | xv, &p, sizeof p, (L->out + 63) / 64, (N + 63) / 64, 1);
    else
        pvk_dispatch(&g->c, cb, PVK_LINEAR | xv, &p, sizeof p, (L->out + 7) / 8, (N + 7) / 8, 1);
}

void vkr_linear(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X, rows Y,
                int act, int accum, float alpha, uint32_t goff, rows G, uint32_t gbuf) {
    vkr_linear_x(g, cb, L, N, X, Y, act, accum, alpha, goff, G, gbuf, ACT_NONE);
}

void vkr_lin(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X, rows Y, int act) {
    vkr_linear(g, cb, L, N, X, Y, act, 0, 1.f, NONE, RC(0, 0), 0);
}

typedef struct pc_row {
    uint32_t rows, width, op, list, sbuf, soff, srps, sgs, sld, sslot, dbuf, doff, drps, dgs, dld,
        dslot, v1, v2;
} pc_row;

void vkr_rowop(vk_engine *g, VkCommandBuffer cb, uint32_t nrows, uint32_t width, int op,
               uint32_t list, side s, side d, uint32_t v1, uint32_t v2) {
    if (nrows == 0 || width == 0) return;
    wspan sp = WSPAN0;
    if (s.buf == BUF_WEIGHTS) vkr_span_add(&sp, s.r.off, s.wn);
    if (op == OP_AFFINE) {
        vkr_span_add(&sp, v1, width);
        vkr_span_add(&sp, v2, width);
    }
    const uint32_t wb = vkr_span_base(g, &sp);
    if (s.buf == BUF_WEIGHTS) s.r.off -= wb;
    if (op == OP_AFFINE) {
        v1 -= wb;
        v2 -= wb;
    }
    pc_row p = {nrows,  width, (uint32_t)op, list,    s.buf,  s.r.off, s.r.rps, s.r.gs, s.r.ld,
                s.slot, d.buf, d.r.off,      d.r.rps, d.r.gs, d.r.ld,  d.slot,  v1,     v2};
    pvk_dispatch_flat(&g->c, cb, PVK_ROWOP, &p, sizeof p, (uint64_t)nrows * width);
}

typedef struct pc_ln {
    uint32_t d, xoff, xld, yoff, yld, woff, boff, moff, mld;
    float eps;
} pc_ln;

static void rec_ln(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t d, uint32_t x, uint32_t y,
                   uint32_t w, uint32_t b, uint32_t mod, uint32_t mld, float eps) {
    wspan sp = WSPAN0;
    vkr_span_add(&sp, w, d);
    vkr_span_add(&sp, b, d);
    const uint32_t wb = vkr_span_base(g, &sp);
    pc_ln p = {d, x, d, y, d, rel(w, wb), rel(b, wb), mod, mld, eps};
    uint32_t gx = n < 65535 ? n : 65535, gy = (n + gx - 1) / gx;
    if (n) pvk_dispatch(&g->c, cb, PVK_LAYERNORM, &p, sizeof p, gx, gy, 1);
}

/* Cache offsets in words; kvh: rows of float16 pairs (kv.glsl). */
typedef struct pc_rope {
    uint32_t rows, rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, freq, qoff, kvh;
} pc_rope;
typedef struct pc_att {
    uint32_t rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint32_t v4; /* a row's and a head's words and every cache offset multiples of 4: 16-byte
                  * key loads */
    uint32_t kvh;
} pc_att;
typedef struct pc_attg {
    uint32_t rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint32_t nqb, kvh;
} pc_attg;
typedef struct pc_adv {
    uint32_t groups, list, len, inc;
} pc_adv;

static void rec_advance(vk_engine *g, VkCommandBuffer cb, uint32_t groups, uint32_t list,
                        uint32_t len, uint32_t inc) {
    pc_adv p = {groups, list, len, inc};
    pvk_dispatch_flat(&g->c, cb, PVK_ADVANCE, &p, sizeof p, groups);
}

/* n rows (groups of rps rows, one slot per group) through the transformer; positions advance. */
void vkr_transformer(vk_engine *g, VkCommandBuffer cb, const tspec *t, uint32_t n, uint32_t rps) {
    const uint32_t d = (uint32_t)t->d, dh = d / (uint32_t)t->heads;
    for (int l = 0; l < t->layers; l++) {
        const gtl *L = &t->L[l];
        const uint32_t kvlayer = (uint32_t)(l * t->kvlstride);
        rec_ln(g, cb, n, d, t->x, t->h, L->n1w, L->n1b, NONE, 0, 1e-5f);
        vkr_lin(g, cb, &L->qkv, n, RC(t->h, d), RC(t->qkv, 3 * d), ACT_NONE);
        wspan sp = WSPAN0;
        vkr_span_add(&sp, t->freq, dh / 2);
        pc_rope pr = {n,
                      rps,
                      d,
                      dh,
                      t->list,
                      t->len,
                      t->kvbase,
                      (uint32_t)t->kvslot,
                      kvlayer,
                      t->cap,
                      t->freq - vkr_span_base(g, &sp),
                      t->qkv,
                      (uint32_t)t->kvh};
        pvk_kv_window(&g->c, t->win0 + l * t->winstep); /* the layer's cache pair */
        pvk_dispatch_flat(&g->c, cb, PVK_ROPE_KV, &pr, sizeof pr, (uint64_t)n * d / 2);
        pc_att pa = {rps,
                     d,
                     dh,
                     t->list,
                     t->len,
                     t->kvbase,
                     (uint32_t)t->kvslot,
                     kvlayer,
                     t->cap,
                     (uint32_t)t->window,
                     t->qkv,
                     t->att,
                     1.0f / sqrtf((float)dh),
                     0,
                     (uint32_t)t->kvh};
        const uint32_t rw = t->kvh ? d / 2 : d, hw = t->kvh ? dh / 2 : dh; /* words */
        pa.v4 = rw % 4 == 0 && hw % 4 == 0 && t->kvbase % 4 == 0 && t->kvslot % 4 == 0 &&
                kvlayer % 4 == 0;
        if (rps > 1 && dh <= 64 && pa.v4) {
            /* groups of rows of one slot: keys and values read once per 16 query rows */
            pc_attg pg = {rps,
                          d,
                          dh,
                          t->list,
                          t->len,
                          t->kvbase,
                          (uint32_t)t->kvslot,
                          kvlayer,
                          t->cap,
                          (uint32_t)t->window,
                          t->qkv,
                          t->att,
                          pa.scale,
                          (rps + 15) / 16,
                          (uint32_t)t->kvh};
            /* on tensor cores: float16 rows, heads of 16-channel multiples (attn_tc.comp) */
            const int tc = g->tn.attn_tc && t->kvh && dh % 16 == 0;
            g->counts.attn_tc += (unsigned long long)tc;
            pvk_dispatch(&g->c, cb, tc ? PVK_ATTN_TC : PVK_ATTN_GROUP, &pg, sizeof pg,
                         n / rps * pg.nqb, (uint32_t)t->heads, 1);
        } else {
            /* flash-decoding's form over float16 rows, heads of 8 to 64 channels (attn_dec.comp) */
            const int fd =
                g->tn.attn_dec && t->kvh && pa.v4 && dh >= 8 && dh <= 64 && (dh & (dh - 1)) == 0;
            g->counts.attn_dec += (unsigned long long)fd;
            pvk_dispatch(&g->c, cb, fd ? PVK_ATTN_DEC : PVK_ATTENTION, &pa, sizeof pa, n,
                         (uint32_t)t->heads, 1);
        }
        vkr_linear(g, cb, &L->out, n, RC(t->att, d), RC(t->x, d), ACT_NONE, 1, 1.f, L->ls1,
                   RC(0, 0), L->ls1 == NONE ? 0 : 1);
        rec_ln(g, cb, n, d, t->x, t->h, L->n2w, L->n2b, NONE, 0, 1e-5f);
        vkr_lin(g, cb, &L->l1, n, RC(t->h, d), RC(t->ff, (uint32_t)t->ffn), ACT_GELU);
        vkr_linear(g, cb, &L->l2, n, RC(t->ff, (uint32_t)t->ffn), RC(t->x, d), ACT_NONE, 1, 1.f,
                   L->ls2, RC(0, 0), L->ls2 == NONE ? 0 : 1);
    }
    rec_advance(g, cb, n / rps, t->list, t->len, rps);
}

tspec vkr_bb_spec(vk_engine *g, uint32_t list) {
    const ptts_weights *w = g->w;
    const int one = g->kv.nwin == 1; /* one cache pair, else a pair per layer (vk_kv) */
    const size_t layer = (size_t)g->kv.cap * vk_kv_rw(&g->kv, w->arch.d);
    tspec t = {.L = g->wt.bb,
               .layers = w->arch.layers,
               .d = w->arch.d,
               .kvh = g->kv.h16,
               .heads = w->arch.heads,
               .ffn = w->arch.ffn,
               .window = w->backbone.window,
               .list = list,
               .len = g->ix.bblen,
               .kvbase = 0,
               .cap = (uint32_t)g->kv.cap,
               .freq = g->wt.bb_freq,
               .kvslot = one ? g->kv.bb_slot : layer,
               .kvlstride = one ? layer : 0,
               .win0 = 0,
               .winstep = one ? 0 : 1,
               .x = g->ar.bx,
               .h = g->ar.bh,
               .qkv = g->ar.bqkv,
               .att = g->ar.batt,
               .ff = g->ar.bff};
    return t;
}

/* The sampler's evaluations of the flow head per latent, and how each one's output lands in
 * x (MODEL.md 5): lsd and flow_matching x += flow(h, time row i, x) / N for i < N; drifting
 * x = flow(h, x), once (its time row is zeros: y = cond_embed(h) alone). */
int vkr_flow_evals(const vk_engine *g) {
    return g->w->arch.flow_type == PTTS_FLOW_DRIFTING ? 1 : g->steps;
}
int vkr_flow_accum(const vk_engine *g) { return g->w->arch.flow_type != PTTS_FLOW_DRIFTING; }
float vkr_flow_alpha(const vk_engine *g) {
    return vkr_flow_accum(g) ? 1.0f / (float)g->steps : 1.0f;
}

/* The flow head on n rows: h [n][d] (compact), x [n][ld] holds the noise -> the latent. */
void vkr_flow(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t h, uint32_t x) {
    const ptts_arch *a = &g->w->arch;
    const uint32_t fd = (uint32_t)a->fd, ld = (uint32_t)a->ld;
    vkr_lin(g, cb, &g->wt.cond, n, RC(h, (uint32_t)a->d), RC(g->ar.ce, fd), ACT_NONE);
    for (int i = 0; i < vkr_flow_evals(g); i++) {
        pvk_skip_barrier(&g->c); /* sy and the input projection are independent */
        vkr_rowop(g, cb, n, fd, OP_SILU_ADDV, 0, SA(RC(g->ar.ce, fd)), SA(RC(g->ar.sy, fd)),
                  g->ar.te + (uint32_t)i * fd, 0);
        vkr_lin(g, cb, &g->wt.input_proj, n, RC(x, ld), RC(g->ar.xh, fd), ACT_NONE);
        const uint32_t mld = g->wt.ada_all.out; /* every block's modulation, one dispatch */
        vkr_lin(g, cb, &g->wt.ada_all, n, RC(g->ar.sy, fd), RC(g->ar.mod, mld), ACT_NONE);
        for (int b = 0; b < a->flow_depth; b++) {
            const uint32_t mb = g->ar.mod + (uint32_t)b * 3 * fd;
            rec_ln(g, cb, n, fd, g->ar.xh, g->ar.hb, g->wt.fb[b].ln_w, g->wt.fb[b].ln_b, mb, mld,
                   1e-6f);
            vkr_lin(g, cb, &g->wt.fb[b].mlp0, n, RC(g->ar.hb, fd), RC(g->ar.ub, fd), ACT_SILU);
            vkr_linear(g, cb, &g->wt.fb[b].mlp2, n, RC(g->ar.ub, fd), RC(g->ar.xh, fd), ACT_NONE, 1,
                       1.f, mb + 2 * fd, RC(mb + 2 * fd, mld), 0);
        }
        rec_ln(g, cb, n, fd, g->ar.xh, g->ar.hb, NONE, NONE,
               g->ar.mod + (uint32_t)a->flow_depth * 3 * fd, mld, 1e-6f);
        vkr_linear(g, cb, &g->wt.final_linear, n, RC(g->ar.hb, fd), RC(x, ld), ACT_NONE,
                   vkr_flow_accum(g), vkr_flow_alpha(g), NONE, RC(0, 0), 0);
    }
}

/* The multi-dispatch step command buffer: k frames for the n slots of the step list (the
 * persistent one-dispatch step, vk_stepk.c, is the caller's other choice). */
void vkr_step(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t k) {
    const ptts_arch *a = &g->w->arch;
    const uint32_t d = (uint32_t)a->d, ld = (uint32_t)a->ld, L = g->ix.step;
    vkr_rowop(g, cb, n, ld, OP_COPY, L, SS(BUF_ARENA, RG(g->ar.lat, 1, ld, 0)),
              SA(RC(g->ar.latc, ld)), 0, 0);
    tspec t = vkr_bb_spec(g, L);
    for (uint32_t j = 0; j < k; j++) {
        vkr_lin(g, cb, &g->wt.input_linear, n, RC(g->ar.latc, ld), RC(g->ar.bx, d), ACT_NONE);
        vkr_transformer(g, cb, &t, n, 1);
        rec_ln(g, cb, n, d, g->ar.bx, g->ar.bh, g->wt.out_nw, g->wt.out_nb, NONE, 0, 1e-5f);
        /* EOS logits, the noise copy and the flow's cond linear are independent: one barrier */
        pvk_skip_barrier(&g->c);
        vkr_lin(g, cb, &g->wt.out_eos, n, RC(g->ar.bh, d), RC(g->ar.eosc + j, KMAX), ACT_NONE);
        pvk_skip_barrier(&g->c);
        vkr_rowop(g, cb, n, ld, OP_COPY, 0, SB(BUF_IO, RC(g->ox.noise + j * ld, k * ld)),
                  SA(RC(g->ar.latc, ld)), 0, 0);
        vkr_flow(g, cb, n, g->ar.bh, g->ar.latc);
        /* the two latent copies only read latc, as the next frame's input linear does */
        pvk_skip_barrier(&g->c);
        vkr_rowop(g, cb, n, ld, OP_COPY, 0, SA(RC(g->ar.latc, ld)),
                  SB(BUF_IO, RC(g->ox.lat + j * ld, k * ld)), 0, 0);
        if (j + 1 < k) pvk_skip_barrier(&g->c);
        vkr_rowop(g, cb, n, ld, OP_COPY, L, SA(RC(g->ar.latc, ld)),
                  SS(BUF_ARENA, RG(g->ar.steplat + j * ld, 1, KMAX * ld, 0)), 0, 0);
    }
    vkr_rowop(g, cb, n, k, OP_COPY, 0, SA(RC(g->ar.eosc, KMAX)), SB(BUF_IO, RC(g->ox.eos, k)), 0,
              0);
    vkr_rowop(g, cb, n, ld, OP_COPY, L, SA(RC(g->ar.latc, ld)),
              SS(BUF_ARENA, RG(g->ar.lat, 1, ld, 0)), 0, 0);
}
