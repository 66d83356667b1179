/*
 * engine_vulkan.c - the whole generation step on a Vulkan device (engine.h):
 *
 *  - weights uploaded once as float32 into one buffer (bf16 / int8 backbones are widened);
 *  - per slot: the backbone KV cache (K and V buffers, [slot][layer][cap][d], grown at chunk
 *    start when a chunk needs more positions), the codec's ring KV cache (window + the rows of a pass), the
 *    codec's streaming state (conv carries, the transposed convs' last input rows, upsampling tail) and the last
 *    latent, all resident on the GPU;
 *  - step(k): one command buffer, recorded once per (slots, k) and replayed, runs k frames for
 *    every listed slot (backbone rows batched across slots, then the flow head); the latent stays
 *    on the GPU from frame to frame, the k frames' noise is uploaded up front, only the EOS
 *    logits and latents come back;
 *  - decode: one command buffer runs the codec over the emitted frames of every slot (slots
 *    sorted by frame count so frame f runs on a prefix of the list; several frames of a slot in
 *    one pass while the pass stays under CODEC_FG slot-frames) and writes PCM to host memory;
 *  - begin_chunk: the voice cache copied in, the text rows prompted in blocks on the GPU.
 * Positions live in a small integer buffer that the shaders advance, so recorded command
 * buffers stay valid from call to call. Arithmetic mirrors the CPU path (ops.c, flow_head.c,
 * codec_dec.c): RoPE frequencies and flow time embeddings are computed on the host exactly as
 * there; sums run in another order (GPU parity is checked at 1e-3 relative L2 per frame).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_vulkan.h"
#include "flow.h"
#include "vk.h"

/* Steps per call (frames one step command buffer computes). Larger k amortizes a submission
 * over more frames, but delays the first audio and grows the per-k caches (step_cb, dec_cb,
 * the stepk programs); 8 is the value checked on lavapipe and the H200 (the tests' 3-stream
 * batch replays 8-frame calls; bench/RESULTS.md has the per-frame times). */
#define KMAX 8
#define PBLOCK 64       /* prompt rows per pass */
#define IDS_MAX 4096    /* prompt ids per submit */
#define TE_MAX 1000     /* LSD steps */
/* The codec runs several frames of a slot in one pass (its convolutions and transformer are
 * causal and streaming, so T frames at once equal T passes of one frame) until a pass holds
 * this many slot-frames: one stream's 8 frames cost one pass instead of 8 (a pass is ~40
 * dispatches, each bound by launch latency at one stream); from 32 streams on, one frame of
 * every stream already fills the GPU. */
#define CODEC_FG 32
/* stepk.comp: the whole step as one persistent dispatch for up to STEPK_N rows (one or two
 * streams) and LSD step counts up to STEPK_LSD (the program grows with both). */
#define STEPK_N 2
#define STEPK_LSD 4
#define PH_WORDS 64 /* stepk.glsl phb[][] */
/* Fewest rows a tensor-core gemm takes (fewer: the float32 kernels, latency-bound anyway). */
#define TC_ROWS 16
/* SMs the persistent stepk grid leaves to the codec when a second queue runs it beside the next
 * step (vk_step_decode); the best of 0-32 on the H200 (bench/RESULTS.md). */
#define STEPK_SPARE 24
/* Default fence polling on a discrete GPU (us): longer than a step call lasts there; 0
 * elsewhere, where the polling core is one the device computes with (bench/RESULTS.md). */
#define SPIN_DISCRETE_US 20000
#define NONE 0xffffffffu
#define COMPACT 0x7fffffffu

typedef struct glin {
    uint32_t w, b;
    uint32_t in, out;
    /* the same matrix as packed bf16 pairs (float offset, NONE: none), for stepk: kept where
     * the model stores the matrix in bf16 (--precision bf16), so the one-stream step streams
     * half the bytes with exactly the values the float32 copy holds */
    uint32_t h;
} glin;

typedef struct gtl {
    glin qkv, out, l1, l2;
    uint32_t n1w, n1b, n2w, n2b, ls1, ls2;
} gtl;

typedef struct gconv {
    glin w;
    uint32_t cin, cout, k, st;
    /* a ConvTranspose1d (k, stride ust) held as the conv rec_sconv runs: each input row's
     * ust output rows from a window of k = ceil(k / ust) input rows (wb_convtr); 0 for convs */
    uint32_t ust;
} gconv;

/* The gemm_tile.glsl tiles and the gemm_tc.glsl (tensor-core) tiles: gemm_tiles, tc_tiles. */
enum { GT_L, GT_R64, GT_R32, GT_N };
enum { TC_L, TC_M, TC_S, TC_W, TC_T, TC_N };

typedef struct cached {
    VkCommandBuffer cb;
    int n, k;
    int *key; /* slots (step) or slots + counts (decode) */
    int nkey;
    int q; /* recorded for the second queue (pvk_cmd_begin_q) */
} cached;

typedef struct vk_engine {
    const ptts_weights *w;
    int S, steps;
    pvk_ctx c;
    pvk_buffer wbuf, arena, kbuf, vbuf, ints, io, stage;
    /* weights (float offsets in wbuf) */
    gtl *bb, *cd;
    glin input_linear, out_eos, cond, input_proj, final_linear, quant;
    uint32_t out_nw, out_nb, bos, embed, bb_freq, cd_freq, emb_std, emb_mean, up_w;
    struct {
        uint32_t ln_w, ln_b;
        glin mlp0, mlp2;
    } *fb;
    glin ada_all; /* every flow block's ada, then final_ada: [depth * 3 fd + 2 fd][fd] */
    gconv dec_in, up[3], r1[3], r2[3], dec_out;
    /* caches */
    int cap, ccap;
    size_t bb_kv_slot, cd_kv_slot; /* floats per slot */
    /* arena offsets (floats) */
    /* steplat: the step's latents [S][KMAX][ld] that decode reads, in two regions by parity:
     * a step call writes steplat_[par] (then par flips) and decode reads steplat_[lpar], the
     * last step's, so the codec of one call can run beside the next call's step
     * (vk_step_decode). steplat is the region of the command buffer being recorded (use_par). */
    uint32_t lat, steplat, steplat_[2], te;
    uint32_t bx, bh, bqkv, batt, bff;                 /* backbone scratch [RB1][..] */
    uint32_t ce, sy, xh, hb, ub, mod, latc, eosc;     /* flow and step I/O [S][..] */
    uint32_t zc, qc, cx, ch, cqkv, catt, cff;         /* codec transformer [S*16][..] */
    uint32_t w_in, h0, acc[3], rh[3], pcmc; /* SEANet scratch */
    /* conv_copy: the convs after dec_in ELU their window into these work buffers (NONE
     * otherwise) and the gemm reads them, instead of ELU on load (rec_wconv). On with the
     * tensor-core gemms, where it measured faster; off for float32, where ELU on load did
     * (bench/RESULTS.md, the H200 codec); ptts_vk_tuning.conv_copy overrides. */
    int conv_copy;
    uint32_t U[3], R[3], O;
    /* h0 and acc[s] are fronted ([group][front + T][width], rec_wconv): their front rows, the
     * most carried rows any conv reading them needs */
    uint32_t f_h0, f_acc[3];
    uint32_t st_up, st_in, st_tail[3], st_r[3], st_out; /* per slot state */
    int hist_in, hist_r[3], hist_out;
    /* ints offsets */
    uint32_t i_bblen, i_cdlen, i_step, i_dec, i_orig, i_plist, i_ids;
    /* io offsets */
    uint32_t o_noise, o_eos, o_lat, o_pcm;
    int par, lpar, rpar; /* the next step's parity, the last step's, the recording's */
    cached step_cb[KMAX + 1][2];
    cached dec_cb[KMAX + 1][2]; /* by k (a stream's chunk ramps k up: 1, 2, 4, 8; generate.c)
                                 * and parity */
    cached lat_cb; /* codec-only mode: host latents into the slots' step rows */
    int *sorted, *orig, *scount;
    int *dkey; /* [3 * S]: a decode call's key (sorted slots, counts, caller order) */
    /* The kernel choice (rec_linear): gemm_force / tc_force a tile of gemm_tiles / tc_tiles
     * for every linear they can run (ptts_vk_tuning, tests), -1: gemm_pick / tc_pick decide;
     * gemm_units the compute units a grid should fill (the SM count, else 8); tc: tensor-core
     * gemms on (the device has them and ptts_engine_args.tensor_cores or the precision asks). */
    int gemm_force, tc, tc_force;
    uint32_t gemm_units;
    int FG; /* slot-frames per codec pass (scratch rows) */
    /* stepk: workgroups of the persistent grid (0: off), program per k (arena word offsets),
     * its phase count, the grid barrier's counter */
    int stepk_G;
    int stepk_pipe; /* PVK_STEPK512 where the device has it, else PVK_STEPK (256 invocations) */
    int pipe;       /* vk_step_decode submits both at once (0: one after the other, a test hook) */
    ptts_vk_counts counts; /* what ran (ptts_vulkan_engine_counts) */
    uint64_t gemm_n[GT_N], tc_n[TC_N]; /* dispatches recorded per tile */
    uint32_t prog[KMAX + 1][2], prog_n[KMAX + 1], sync_off;
    int prog_ok[KMAX + 1][2]; /* prog[k][par] is uploaded for the current caches and LSD steps */
    int prog_ph;
} vk_engine;

/* ---- weights ------------------------------------------------------------------------------ */

typedef struct wbuild {
    float *p;
    size_t n, cap;
    int fail;
} wbuild;

static uint32_t wb_reserve(wbuild *b, size_t n) {
    size_t need = ((b->n + 63) & ~(size_t)63) + n;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : (1u << 20);
        while (cap < need) cap *= 2;
        float *q = realloc(b->p, cap * sizeof(float));
        if (!q) {
            b->fail = 1;
            return 0;
        }
        b->p = q;
        b->cap = cap;
    }
    uint32_t off = (uint32_t)((b->n + 63) & ~(size_t)63);
    if ((size_t)off + n > 0xffffffffu) b->fail = 1;
    b->n = need;
    return off;
}

static uint32_t wb_vec(wbuild *b, const float *v, size_t n) {
    if (!v) return NONE;
    uint32_t off = wb_reserve(b, n);
    if (!b->fail) memcpy(b->p + off, v, n * sizeof(float));
    return off;
}

/* L's weights as float32 at dst. */
static void wb_widen(float *dst, const ptts_lin *L) {
    size_t n = (size_t)L->in * L->out;
    switch (L->type) {
    case PTTS_W_F32: memcpy(dst, L->w, n * sizeof(float)); break;
    case PTTS_W_BF16:
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)L->wh[i] << 16;
            memcpy(&dst[i], &u, 4);
        }
        break;
    case PTTS_W_Q8:
        for (size_t i = 0; i < n; i++) dst[i] = (float)L->wq[i] * L->scale[i / (size_t)L->in];
        break;
    }
}

static glin wb_lin(wbuild *b, const ptts_lin *L) {
    glin g = {NONE, NONE, (uint32_t)L->in, (uint32_t)L->out, NONE};
    g.w = wb_reserve(b, (size_t)L->in * L->out);
    if (b->fail) return g;
    wb_widen(b->p + g.w, L);
    g.b = wb_vec(b, L->bias, (size_t)L->out);
    return g;
}

/* n linears of the same input width stacked into one (outputs concatenated; a missing bias
 * reads as zeros): one dispatch computes them all. */
static glin wb_lin_cat(wbuild *b, const ptts_lin *const *L, int n) {
    size_t out = 0, in = (size_t)L[0]->in;
    int bias = 0;
    for (int i = 0; i < n; i++) {
        out += (size_t)L[i]->out;
        bias |= L[i]->bias != NULL;
    }
    glin g = {NONE, NONE, (uint32_t)in, (uint32_t)out, NONE};
    g.w = wb_reserve(b, in * out);
    if (b->fail) return g;
    for (int i = 0, r = 0; i < n; r += L[i]->out, i++) wb_widen(b->p + g.w + (size_t)r * in, L[i]);
    if (!bias) return g;
    g.b = wb_reserve(b, out);
    if (b->fail) return g;
    for (int i = 0, r = 0; i < n; r += L[i]->out, i++) {
        if (L[i]->bias) memcpy(b->p + g.b + r, L[i]->bias, (size_t)L[i]->out * sizeof(float));
        else memset(b->p + g.b + r, 0, (size_t)L[i]->out * sizeof(float));
    }
    return g;
}

/* The bf16 copy of a matrix the model stores in bf16 (rows of whole 16-byte groups). */
static void wb_half(wbuild *b, glin *g, const ptts_lin *const *L, int n) {
    if (g->in % 8) return;
    for (int i = 0; i < n; i++)
        if (L[i]->type != PTTS_W_BF16 || !L[i]->wh) return;
    uint32_t off = wb_reserve(b, (size_t)g->out * g->in / 2);
    if (b->fail) return;
    for (int i = 0, r = 0; i < n; r += L[i]->out, i++)
        memcpy((uint16_t *)(b->p + off) + (size_t)r * g->in, L[i]->wh,
               (size_t)L[i]->out * L[i]->in * sizeof(uint16_t));
    g->h = off;
}
static glin wb_lin_h(wbuild *b, const ptts_lin *L) {
    glin g = wb_lin(b, L);
    if (!b->fail) wb_half(b, &g, &L, 1);
    return g;
}

static void wb_tl(wbuild *b, const ptts_tlayer *L, int d, gtl *g, int half) {
    g->qkv = half ? wb_lin_h(b, &L->in_proj) : wb_lin(b, &L->in_proj);
    g->out = half ? wb_lin_h(b, &L->out_proj) : wb_lin(b, &L->out_proj);
    g->l1 = half ? wb_lin_h(b, &L->linear1) : wb_lin(b, &L->linear1);
    g->l2 = half ? wb_lin_h(b, &L->linear2) : wb_lin(b, &L->linear2);
    g->n1w = wb_vec(b, L->norm1_w, (size_t)d);
    g->n1b = wb_vec(b, L->norm1_b, (size_t)d);
    g->n2w = wb_vec(b, L->norm2_w, (size_t)d);
    g->n2b = wb_vec(b, L->norm2_b, (size_t)d);
    g->ls1 = wb_vec(b, L->ls1, (size_t)d);
    g->ls2 = wb_vec(b, L->ls2, (size_t)d);
}

static gconv wb_conv(wbuild *b, const ptts_conv *cv) {
    gconv g = {wb_lin(b, &cv->w), (uint32_t)cv->cin, (uint32_t)cv->cout, (uint32_t)cv->k,
               (uint32_t)cv->stride, 0};
    return g;
}

/* A ConvTranspose1d (k, stride s, weights [k * cout][cin]: tap j of output channel c at row
 * j * cout + c) as a stride-1 conv over a window of R = ceil(k / s) input rows: input row t
 * makes output rows t s .. t s + s - 1, row t s + j taking tap j + q s of input row t - q for
 * q < R. One gemm [T][R cin] x [s cout][R cin]^T writes the output rows in place (its s cout
 * outputs of row t are output rows t s .. + s - 1), the bias on every one, and the streaming
 * state is the last R - 1 input rows (zeros at the start, as the partial sums of the overlap-add
 * form are): no [T][k cout] intermediate and no overlap-add pass. Window column
 * (R - 1 - q) cin + i holds input row t - q, channel i. */
static gconv wb_convtr(wbuild *b, const ptts_convtr *ct) {
    const uint32_t cin = (uint32_t)ct->cin, cout = (uint32_t)ct->cout, k = (uint32_t)ct->k,
                   st = (uint32_t)ct->stride, R = (k + st - 1) / st;
    gconv g = {{NONE, NONE, R * cin, st * cout, NONE}, cin, st * cout, R, 1, st};
    float *src = malloc((size_t)k * cout * cin * sizeof(float));
    if (!src) {
        b->fail = 1;
        return g;
    }
    wb_widen(src, &ct->w);
    g.w.w = wb_reserve(b, (size_t)R * cin * st * cout);
    if (!b->fail) {
        float *dst = b->p + g.w.w;
        for (uint32_t j = 0; j < st; j++)
            for (uint32_t c = 0; c < cout; c++) {
                float *row = dst + ((size_t)j * cout + c) * R * cin;
                for (uint32_t q = 0; q < R; q++) {
                    float *win = row + (size_t)(R - 1 - q) * cin;
                    const uint32_t tap = j + q * st;
                    if (tap < k) memcpy(win, src + ((size_t)tap * cout + c) * cin, cin * sizeof(float));
                    else memset(win, 0, cin * sizeof(float));
                }
            }
    }
    free(src);
    if (ct->bias) {
        g.w.b = wb_reserve(b, (size_t)st * cout);
        if (!b->fail)
            for (uint32_t j = 0; j < st; j++)
                memcpy(b->p + g.w.b + (size_t)j * cout, ct->bias, cout * sizeof(float));
    }
    return g;
}

/* RoPE frequencies as ops.c computes them. */
static uint32_t wb_freqs(wbuild *b, int dh) {
    uint32_t off = wb_reserve(b, (size_t)dh / 2);
    if (b->fail) return off;
    const float c = (float)(-log(10000.0) * 2.0 / dh);
    for (int i = 0; i < dh / 2; i++) b->p[off + i] = expf((float)i * c);
    return off;
}

/* ---- uploads ------------------------------------------------------------------------------ */

static int stage_reserve(vk_engine *g, size_t bytes, ptts_error *e) {
    if (g->stage.size >= bytes) return 0;
    pvk_buffer_destroy(&g->c, &g->stage);
    return pvk_buffer_create(&g->c, &g->stage, bytes, 1, e);
}

/* host bytes -> device buffer at byte offset (through the staging buffer, waits). */
static int upload(vk_engine *g, const pvk_buffer *dst, size_t dst_off, const void *src,
                  size_t bytes, ptts_error *e) {
    const size_t chunk = (size_t)64 << 20;
    for (size_t done = 0; done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        int rc = stage_reserve(g, n, e);
        if (rc) return rc;
        memcpy(g->stage.map, (const char *)src + done, n);
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) return PTTS_E_BACKEND;
        pvk_copy(cb, &g->stage, 0, dst, dst_off + done, n);
        rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
        pvk_cmd_free(&g->c, cb);
        if (rc) return rc;
    }
    return 0;
}

/* ---- recording ---------------------------------------------------------------------------- */

/* The weights a dispatch reads, [lo, hi) in floats: the weights window is placed over them
 * (vk.h: a device may see at most maxStorageBufferRange bytes of a buffer at once, 128 MiB on
 * lavapipe against 377 MiB of float32 weights), and push constants carry offsets relative to
 * its base. On devices that see the whole buffer the base is always 0. */
typedef struct wspan {
    uint32_t lo, hi;
} wspan;
#define WSPAN0 ((wspan){0xffffffffu, 0})
static void span_add(wspan *s, uint32_t off, size_t n) {
    if (off == NONE) return;
    if (off < s->lo) s->lo = off;
    if (off + n > s->hi) s->hi = (uint32_t)(off + n);
}
static uint32_t span_base(vk_engine *g, const wspan *s) {
    if (s->lo > s->hi) return 0; /* no weights read: the window does not matter */
    return (uint32_t)(pvk_weights_window(&g->c, (VkDeviceSize)s->lo * 4, (VkDeviceSize)s->hi * 4) / 4);
}
static uint32_t rel(uint32_t off, uint32_t base) { return off == NONE ? NONE : off - base; }

typedef struct rows {
    uint32_t off, rps, gs, ld;
} rows;

static rows RC(uint32_t off, uint32_t ld) { return (rows){off, COMPACT, 0, ld}; }
static rows RG(uint32_t off, uint32_t rps, uint32_t gs, uint32_t ld) {
    return (rows){off, rps, gs, ld};
}

typedef struct pc_lin { /* at most 128 bytes: the pipeline layout's push-constant range */
    uint32_t N, K, M, xoff, xrps, xgs, xld, yoff, yrps, ygs, yld, goff, grps, ggs, gld, gbuf,
        woff, boff, act, accum;
    float alpha;
    uint32_t v4; /* K, X offsets and strides all multiples of 4: vec4 loads */
} pc_lin;

enum { ACT_NONE, ACT_GELU, ACT_SILU, ACT_ELU };
_Static_assert(sizeof(pc_lin) <= 128, "pc_lin: the push-constant range is 128 bytes");

/* A tiled gemm pipeline: its name for PTTS_VK_*_FORCE, rows x outputs of a workgroup's tile. */
typedef struct gtile {
    const char *name;
    int pipe;
    uint32_t bm, bn;
} gtile;

static const gtile gemm_tiles[GT_N] = {
    {"l", PVK_GEMM_L, 128, 128}, {"r64", PVK_GEMM_R64, 256, 64}, {"r32", PVK_GEMM_R32, 256, 32}};

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
    if (g->gemm_force >= 0) return g->gemm_force;
    if (N < 32 || M < 16) return -1;
    const int big = M > 64 ? GT_L : M > 32 ? GT_R64 : GT_R32;
    return tile_wgs(&gemm_tiles[big], N, M) >= 2 * g->gemm_units ? big : -1;
}

static const gtile tc_tiles[TC_N] = {
    {"l", PVK_GEMM_TC_L, 128, 128}, {"m", PVK_GEMM_TC_M, 64, 64}, {"s", PVK_GEMM_TC_S, 32, 32},
    {"w", PVK_GEMM_TC_W, 64, 128},  {"t", PVK_GEMM_TC_T, 128, 64}};

/* The tensor-core tile for N rows -> M outputs, -1: none (fewer than TC_ROWS rows stay on the
 * float32 kernels). The 32 x 32 tile by default: it beat the square 64 and 128 tiles at every
 * stream count on the H200 (the step's few-row gemms are bound by K-step latency, and the most
 * workgroups in flight win). Where a wide (64 x 128) or tall (128 x 64) tile fits the outputs
 * and its grid fills the GPU twice (the codec's large gemms), that tile: each reads its X rows
 * and W outputs 2-4x fewer times from L2 than 32 x 32 tiles do (bench/RESULTS.md). */
static int tc_pick(const vk_engine *g, uint32_t N, uint32_t M) {
    if (!g->tc || N < TC_ROWS || M < 16) return -1;
    if (g->tc_force >= 0) return g->tc_force;
    const int t = M >= 128 ? TC_W : M >= 64 ? TC_T : TC_S;
    if (t != TC_S && tile_wgs(&tc_tiles[t], N, M) >= 2 * g->gemm_units) return t;
    return TC_S;
}

/* Y (=|+=) gate * alpha * act(xact(X) W^T + b); gate: rows in the arena (gbuf 0) or a weight
 * vector (gbuf 1, goff a weight offset, every row the same); xact: ACT_ELU of every X value as
 * it is loaded (rec_wconv: the PVK_XELU pipeline variants; no other is made), ACT_NONE
 * through rec_linear. */
static void rec_linear_x(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X,
                         rows Y, int act, int accum, float alpha, uint32_t goff, rows G,
                         uint32_t gbuf, int xact) {
    if (N == 0) return;
    pc_lin p = {N,     L->in, L->out, X.off, X.rps, X.gs, X.ld, Y.off, Y.rps, Y.gs, Y.ld,
                goff,  G.rps, G.gs,   G.ld,  gbuf,  L->w, L->b, (uint32_t)act,
                (uint32_t)accum, alpha, 0};
    const int xv = xact == ACT_ELU ? PVK_XELU : 0; /* the pipelines' ELU-on-load variants */
    p.v4 = L->in % 4 == 0 && X.off % 4 == 0 && X.gs % 4 == 0 && X.ld % 4 == 0 && L->w % 4 == 0;
    wspan sp = WSPAN0;
    span_add(&sp, L->w, (size_t)L->out * L->in);
    span_add(&sp, L->b, L->out);
    if (gbuf == 1) span_add(&sp, goff, L->out);
    const uint32_t wb = span_base(g, &sp);
    p.woff = L->w - wb;
    p.boff = rel(L->b, wb);
    if (gbuf == 1) {
        p.goff = rel(goff, wb);
        p.grps = COMPACT;
        p.ggs = 0;
        p.gld = 0;
    }
    /* with vec4 operands, the register-tiled gemm_tile.glsl kernels where a grid fills the GPU
     * (gemm_pick); else the 64x64-tile gemm once it fills the GPU (>= 256 workgroups); below
     * that, from 16 rows, the register-blocked mgemm (32 outputs x 8 rows a workgroup) when
     * operands are vec4s */
    const uint32_t tiles = ((L->out + 63) / 64) * ((N + 63) / 64);
    const int tiled = p.v4 && !(L->out <= 8 && N >= 256);
    const int tc = tiled ? tc_pick(g, N, L->out) : -1;
    const int gt = tiled && tc < 0 ? gemm_pick(g, N, L->out) : -1;
    const gtile *t = tc >= 0 ? &tc_tiles[tc] : gt >= 0 ? &gemm_tiles[gt] : NULL;
    if (tc >= 0) g->tc_n[tc]++;
    else if (gt >= 0) g->gemm_n[gt]++;
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

static void rec_linear(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X,
                       rows Y, int act, int accum, float alpha, uint32_t goff, rows G,
                       uint32_t gbuf) {
    rec_linear_x(g, cb, L, N, X, Y, act, accum, alpha, goff, G, gbuf, ACT_NONE);
}

static void lin(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X, rows Y,
                int act) {
    rec_linear(g, cb, L, N, X, Y, act, 0, 1.f, NONE, RC(0, 0), 0);
}

typedef struct pc_row {
    uint32_t rows, width, op, list, sbuf, soff, srps, sgs, sld, sslot, dbuf, doff, drps, dgs, dld,
        dslot, v1, v2;
} pc_row;

enum { OP_COPY, OP_ELU, OP_ADD, OP_SILU_ADDV, OP_AFFINE };
enum { BUF_ARENA, BUF_WEIGHTS, BUF_IO };

/* side: buffer, rows, slot-indexed through the list; wn: for a weights source, the floats
 * from r.off it may read (a table indexed through the list) */
typedef struct side {
    uint32_t buf;
    rows r;
    uint32_t slot;
    uint32_t wn;
} side;

static side SA(rows r) { return (side){BUF_ARENA, r, 0, 0}; }
static side SS(uint32_t buf, rows r) { return (side){buf, r, 1, 0}; }
static side SB(uint32_t buf, rows r) { return (side){buf, r, 0, 0}; }
static side SWT(rows r, uint32_t n) { return (side){BUF_WEIGHTS, r, 1, n}; }

static void rec_rowop(vk_engine *g, VkCommandBuffer cb, uint32_t nrows, uint32_t width, int op,
                      uint32_t list, side s, side d, uint32_t v1, uint32_t v2) {
    if (nrows == 0 || width == 0) return;
    wspan sp = WSPAN0;
    if (s.buf == BUF_WEIGHTS) span_add(&sp, s.r.off, s.wn);
    if (op == OP_AFFINE) {
        span_add(&sp, v1, width);
        span_add(&sp, v2, width);
    }
    const uint32_t wb = span_base(g, &sp);
    if (s.buf == BUF_WEIGHTS) s.r.off -= wb;
    if (op == OP_AFFINE) {
        v1 -= wb;
        v2 -= wb;
    }
    pc_row p = {nrows,     width,    (uint32_t)op, list,     s.buf,    s.r.off,
                s.r.rps,   s.r.gs,   s.r.ld,       s.slot,   d.buf,    d.r.off,
                d.r.rps,   d.r.gs,   d.r.ld,       d.slot,   v1,       v2};
    pvk_dispatch_flat(&g->c, cb, PVK_ROWOP, &p, sizeof p, (uint64_t)nrows * width);
}

typedef struct pc_ln {
    uint32_t d, xoff, xld, yoff, yld, woff, boff, moff, mld;
    float eps;
} pc_ln;

static void rec_ln(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t d, uint32_t x,
                   uint32_t y, uint32_t w, uint32_t b, uint32_t mod, uint32_t mld, float eps) {
    wspan sp = WSPAN0;
    span_add(&sp, w, d);
    span_add(&sp, b, d);
    const uint32_t wb = span_base(g, &sp);
    pc_ln p = {d, x, d, y, d, rel(w, wb), rel(b, wb), mod, mld, eps};
    uint32_t gx = n < 65535 ? n : 65535, gy = (n + gx - 1) / gx;
    if (n) pvk_dispatch(&g->c, cb, PVK_LAYERNORM, &p, sizeof p, gx, gy, 1);
}

typedef struct tspec {
    const gtl *L;
    int layers, d, heads, ffn, window;
    uint32_t list, len, kvbase, cap, freq;
    size_t kvslot;
    uint32_t x, h, qkv, att, ff;
} tspec;

typedef struct pc_rope {
    uint32_t rows, rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, freq, qoff;
} pc_rope;
typedef struct pc_att {
    uint32_t rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint32_t v4; /* d, dh and every cache offset multiples of 4: vec4 key loads */
} pc_att;
typedef struct pc_attg {
    uint32_t rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint32_t nqb;
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
static void rec_transformer(vk_engine *g, VkCommandBuffer cb, const tspec *t, uint32_t n,
                            uint32_t rps) {
    const uint32_t d = (uint32_t)t->d, dh = d / (uint32_t)t->heads;
    for (int l = 0; l < t->layers; l++) {
        const gtl *L = &t->L[l];
        const uint32_t kvlayer = (uint32_t)l * t->cap * d;
        rec_ln(g, cb, n, d, t->x, t->h, L->n1w, L->n1b, NONE, 0, 1e-5f);
        lin(g, cb, &L->qkv, n, RC(t->h, d), RC(t->qkv, 3 * d), ACT_NONE);
        wspan sp = WSPAN0;
        span_add(&sp, t->freq, dh / 2);
        pc_rope pr = {n,      rps,    d,
                      dh,     t->list, t->len,
                      t->kvbase, (uint32_t)t->kvslot, kvlayer,
                      t->cap, t->freq - span_base(g, &sp), t->qkv};
        pvk_dispatch_flat(&g->c, cb, PVK_ROPE_KV, &pr, sizeof pr, (uint64_t)n * d / 2);
        pc_att pa = {rps,     d,         dh,     t->list, t->len, t->kvbase, (uint32_t)t->kvslot,
                     kvlayer, t->cap, (uint32_t)t->window, t->qkv, t->att,
                     1.0f / sqrtf((float)dh), 0};
        pa.v4 = d % 4 == 0 && dh % 4 == 0 && t->kvbase % 4 == 0 && t->kvslot % 4 == 0 &&
                kvlayer % 4 == 0;
        if (rps > 1 && dh <= 64 && pa.v4) {
            /* groups of rows of one slot: keys and values read once per 16 query rows */
            pc_attg pg = {rps,     d,      dh,     t->list, t->len, t->kvbase, (uint32_t)t->kvslot,
                          kvlayer, t->cap, (uint32_t)t->window, t->qkv, t->att, pa.scale,
                          (rps + 15) / 16};
            pvk_dispatch(&g->c, cb, PVK_ATTN_GROUP, &pg, sizeof pg, n / rps * pg.nqb,
                         (uint32_t)t->heads, 1);
        } else {
            pvk_dispatch(&g->c, cb, PVK_ATTENTION, &pa, sizeof pa, n, (uint32_t)t->heads, 1);
        }
        rec_linear(g, cb, &L->out, n, RC(t->att, d), RC(t->x, d), ACT_NONE, 1, 1.f, L->ls1,
                   RC(0, 0), L->ls1 == NONE ? 0 : 1);
        rec_ln(g, cb, n, d, t->x, t->h, L->n2w, L->n2b, NONE, 0, 1e-5f);
        lin(g, cb, &L->l1, n, RC(t->h, d), RC(t->ff, (uint32_t)t->ffn), ACT_GELU);
        rec_linear(g, cb, &L->l2, n, RC(t->ff, (uint32_t)t->ffn), RC(t->x, d), ACT_NONE, 1, 1.f,
                   L->ls2, RC(0, 0), L->ls2 == NONE ? 0 : 1);
    }
    rec_advance(g, cb, n / rps, t->list, t->len, rps);
}

static tspec bb_spec(vk_engine *g, uint32_t list) {
    const ptts_weights *w = g->w;
    tspec t = {g->bb,   w->arch.layers, w->arch.d, w->arch.heads, w->arch.ffn,
               w->backbone.window, list, g->i_bblen, 0, (uint32_t)g->cap, g->bb_freq,
               g->bb_kv_slot, g->bx, g->bh, g->bqkv, g->batt, g->bff};
    return t;
}

/* The sampler's evaluations of the flow head per latent, and how each one's output lands in
 * x (MODEL.md 5): lsd and flow_matching x += flow(h, time row i, x) / N for i < N; drifting
 * x = flow(h, x), once (its time row is zeros: y = cond_embed(h) alone). */
static int flow_evals(const vk_engine *g) {
    return g->w->arch.flow_type == PTTS_FLOW_DRIFTING ? 1 : g->steps;
}
static int flow_accum(const vk_engine *g) { return g->w->arch.flow_type != PTTS_FLOW_DRIFTING; }
static float flow_alpha(const vk_engine *g) {
    return flow_accum(g) ? 1.0f / (float)g->steps : 1.0f;
}

/* The flow head on n rows: h [n][d] (compact), x [n][ld] holds the noise -> the latent. */
static void rec_flow(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t h, uint32_t x) {
    const ptts_arch *a = &g->w->arch;
    const uint32_t fd = (uint32_t)a->fd, ld = (uint32_t)a->ld;
    lin(g, cb, &g->cond, n, RC(h, (uint32_t)a->d), RC(g->ce, fd), ACT_NONE);
    for (int i = 0; i < flow_evals(g); i++) {
        pvk_skip_barrier(&g->c); /* sy and the input projection are independent */
        rec_rowop(g, cb, n, fd, OP_SILU_ADDV, 0, SA(RC(g->ce, fd)), SA(RC(g->sy, fd)),
                  g->te + (uint32_t)i * fd, 0);
        lin(g, cb, &g->input_proj, n, RC(x, ld), RC(g->xh, fd), ACT_NONE);
        const uint32_t mld = g->ada_all.out; /* every block's modulation, one dispatch */
        lin(g, cb, &g->ada_all, n, RC(g->sy, fd), RC(g->mod, mld), ACT_NONE);
        for (int b = 0; b < a->flow_depth; b++) {
            const uint32_t mb = g->mod + (uint32_t)b * 3 * fd;
            rec_ln(g, cb, n, fd, g->xh, g->hb, g->fb[b].ln_w, g->fb[b].ln_b, mb, mld, 1e-6f);
            lin(g, cb, &g->fb[b].mlp0, n, RC(g->hb, fd), RC(g->ub, fd), ACT_SILU);
            rec_linear(g, cb, &g->fb[b].mlp2, n, RC(g->ub, fd), RC(g->xh, fd), ACT_NONE, 1, 1.f,
                       mb + 2 * fd, RC(mb + 2 * fd, mld), 0);
        }
        rec_ln(g, cb, n, fd, g->xh, g->hb, NONE, NONE, g->mod + (uint32_t)a->flow_depth * 3 * fd,
               mld, 1e-6f);
        rec_linear(g, cb, &g->final_linear, n, RC(g->hb, fd), RC(x, ld), ACT_NONE, flow_accum(g),
                   flow_alpha(g), NONE, RC(0, 0), 0);
    }
}

/* ---- stepk: the step as one persistent dispatch (shaders/stepk.comp) ---------------------- */

enum { PH_MATVEC, PH_ATTN, PH_NONE };
enum { ST_RAW, ST_LN, ST_SILU_ADD };

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* y (=|+=) gate * alpha * act(stage(x) W^T + b): x rows at xoff (stride xld, buffer 0 arena /
 * 2 io), y rows at yoff (stride yld) in the arena. */
static uint32_t *ph_job(uint32_t *w, const glin *L, uint32_t xbuf,
                        uint32_t xoff, uint32_t xld, uint32_t yoff, uint32_t yld, int act,
                        int accum, float alpha) {
    w[1] = L->in;
    w[2] = L->out;
    w[3] = xbuf;
    w[4] = xoff;
    w[5] = xld;
    w[6] = ST_RAW;
    w[7] = w[8] = w[10] = w[12] = NONE;
    w[13] = L->w;
    w[14] = L->b;
    w[15] = (uint32_t)act;
    w[16] = fbits(alpha);
    w[17] = NONE;
    w[20] = yoff;
    w[21] = yld;
    w[22] = (uint32_t)accum;
    w[23] = L->h; /* the bf16 copy, if any */
    return w;
}
static uint32_t *ph_mv(uint32_t *w, const glin *L, uint32_t xbuf,
                       uint32_t xoff, uint32_t xld, uint32_t yoff, uint32_t yld, int act,
                       int accum, float alpha) {
    memset(w, 0, PH_WORDS * 4);
    ph_job(w, L, xbuf, xoff, xld, yoff, yld, act, accum, alpha);
    w[0] = PH_MATVEC;
    return w;
}
static void ph_ln(uint32_t *w, uint32_t lnw, uint32_t lnb, float eps, uint32_t mod, uint32_t mld) {
    w[6] = ST_LN;
    w[7] = lnw;
    w[8] = lnb;
    w[9] = fbits(eps);
    w[10] = mod;
    w[11] = mld;
}
static void ph_gate(uint32_t *w, uint32_t goff, uint32_t gbuf, uint32_t gld) {
    w[17] = goff;
    w[18] = gbuf;
    w[19] = gld;
}
/* copy job j of a phase: n rows of `width` from (sbuf, soff, sld) to (dbuf, doff, dld), the
 * destination row the slot's (dslot) or the row index */
static void ph_copy(uint32_t *w, int j, uint32_t sbuf, uint32_t soff, uint32_t sld,
                    uint32_t dbuf, uint32_t doff, uint32_t dld, uint32_t dslot, uint32_t width) {
    uint32_t *c = w + 32 + 8 * j;
    c[0] = sbuf;
    c[1] = soff;
    c[2] = sld;
    c[3] = dbuf;
    c[4] = doff;
    c[5] = dld;
    c[6] = dslot;
    c[7] = width;
}

/* Can this step (n rows) run as stepk? */
static int stepk_ok(const vk_engine *g, int n) {
    const ptts_arch *a = &g->w->arch;
    const int dh = a->d / a->heads, big = a->ffn > a->d ? a->ffn : a->d;
    return g->stepk_G > 0 && n <= STEPK_N && flow_evals(g) <= STEPK_LSD &&
           g->c.wrange >= g->c.wsize && /* every layer's weights visible at once */
           n * big <= 6144 && n * a->fd <= 6144 && dh <= 256 /* stepk.comp XS4 */ && dh % 2 == 0 &&
           a->d % 4 == 0 && a->ffn % 4 == 0 && a->fd % 4 == 0 && a->ld % 4 == 0 &&
           g->ada_all.out % 4 == 0;
}

/* The program of k frames (the rows and their slots come with the dispatch: push constants and
 * the step list), so one program per k serves any slot list: returns the phase count. */
static uint32_t stepk_program(const vk_engine *g, uint32_t k, uint32_t *P) {
    const ptts_weights *w = g->w;
    const ptts_arch *a = &w->arch;
    const uint32_t d = (uint32_t)a->d, ld = (uint32_t)a->ld, fd = (uint32_t)a->fd;
    const uint32_t ffn = (uint32_t)a->ffn, dh = d / (uint32_t)a->heads;
    const uint32_t mld = g->ada_all.out;
    uint32_t np = 0;
#define NEXT (P + (size_t)(np++) * PH_WORDS)
    for (uint32_t j = 0; j < k; j++) {
        uint32_t *q = ph_mv(NEXT, &g->input_linear, 0, g->latc, ld, g->bx, d, ACT_NONE, 0, 1.f);
        if (j > 0) { /* the previous frame's latent out */
            ph_copy(q, 0, 0, g->latc, ld, 2, g->o_lat + (j - 1) * ld, k * ld, 0, ld);
            ph_copy(q, 1, 0, g->latc, ld, 0, g->steplat + (j - 1) * ld, KMAX * ld, 1, ld);
        }
        for (int l = 0; l < a->layers; l++) {
            const gtl *L = &g->bb[l];
            q = ph_mv(NEXT, &L->qkv, 0, g->bx, d, g->bqkv, 3 * d, ACT_NONE, 0, 1.f);
            ph_ln(q, L->n1w, L->n1b, 1e-5f, NONE, 0);
            q = NEXT;
            memset(q, 0, PH_WORDS * 4);
            q[0] = PH_ATTN;
            q[1] = d;
            q[2] = dh;
            q[3] = (uint32_t)a->heads;
            q[4] = g->bqkv;
            q[5] = g->batt;
            q[6] = 0; /* kvbase: the backbone's caches come first */
            q[7] = (uint32_t)g->bb_kv_slot;
            q[8] = (uint32_t)l * (uint32_t)g->cap * d;
            q[9] = (uint32_t)g->cap;
            q[10] = (uint32_t)w->backbone.window;
            q[11] = g->bb_freq;
            q[12] = j;
            q[13] = fbits(1.0f / sqrtf((float)dh));
            q = ph_mv(NEXT, &L->out, 0, g->batt, d, g->bx, d, ACT_NONE, 1, 1.f);
            if (L->ls1 != NONE) ph_gate(q, L->ls1, 1, 0);
            q = ph_mv(NEXT, &L->l1, 0, g->bx, d, g->bff, ffn, ACT_GELU, 0, 1.f);
            ph_ln(q, L->n2w, L->n2b, 1e-5f, NONE, 0);
            q = ph_mv(NEXT, &L->l2, 0, g->bff, ffn, g->bx, d, ACT_NONE, 1, 1.f);
            if (L->ls2 != NONE) ph_gate(q, L->ls2, 1, 0);
        }
        /* EOS logit; the frame's noise into latc (input_linear read it two phases ago) */
        q = ph_mv(NEXT, &g->out_eos, 0, g->bx, d, g->eosc + j, KMAX, ACT_NONE, 0, 1.f);
        ph_ln(q, g->out_nw, g->out_nb, 1e-5f, NONE, 0);
        ph_copy(q, 0, 2, g->o_noise + j * ld, k * ld, 0, g->latc, ld, 0, ld);
        q = ph_mv(NEXT, &g->cond, 0, g->bx, d, g->ce, fd, ACT_NONE, 0, 1.f);
        ph_ln(q, g->out_nw, g->out_nb, 1e-5f, NONE, 0);
        for (int i = 0; i < flow_evals(g); i++) {
            ph_mv(NEXT, &g->input_proj, 0, g->latc, ld, g->xh, fd, ACT_NONE, 0, 1.f);
            q = ph_mv(NEXT, &g->ada_all, 0, g->ce, fd, g->mod, mld, ACT_NONE, 0, 1.f);
            q[6] = ST_SILU_ADD;
            q[12] = g->te + (uint32_t)i * fd;
            for (int b = 0; b < a->flow_depth; b++) {
                const uint32_t mb = g->mod + (uint32_t)b * 3 * fd;
                q = ph_mv(NEXT, &g->fb[b].mlp0, 0, g->xh, fd, g->ub, fd, ACT_SILU, 0, 1.f);
                ph_ln(q, g->fb[b].ln_w, g->fb[b].ln_b, 1e-6f, mb, mld);
                q = ph_mv(NEXT, &g->fb[b].mlp2, 0, g->ub, fd, g->xh, fd, ACT_NONE, 1, 1.f);
                ph_gate(q, mb + 2 * fd, 0, mld);
            }
            q = ph_mv(NEXT, &g->final_linear, 0, g->xh, fd, g->latc, ld, ACT_NONE, flow_accum(g),
                      flow_alpha(g));
            ph_ln(q, NONE, NONE, 1e-6f, g->mod + (uint32_t)a->flow_depth * 3 * fd, mld);
        }
    }
    /* epilogue: the last latent out and kept, EOS logits out, positions advanced */
    uint32_t *q = NEXT;
    memset(q, 0, PH_WORDS * 4);
    q[0] = PH_NONE;
    ph_copy(q, 0, 0, g->latc, ld, 2, g->o_lat + (k - 1) * ld, k * ld, 0, ld);
    ph_copy(q, 1, 0, g->latc, ld, 0, g->steplat + (k - 1) * ld, KMAX * ld, 1, ld);
    ph_copy(q, 2, 0, g->eosc, KMAX, 2, g->o_eos, k, 0, k);
    ph_copy(q, 3, 0, g->latc, ld, 0, g->lat, ld, 1, ld);
    q[31] = k; /* positions advance (word 31: after every kind's fields, before the copies) */
#undef NEXT
    return np;
}

typedef struct pc_stepk {
    uint32_t prog, nph, sync, n, list, len;
} pc_stepk;

/* Record the step as stepk (the program for k already uploaded to prog[k]). */
static void rec_stepk(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t k) {
    const uint32_t ld = (uint32_t)g->w->arch.ld;
    rec_rowop(g, cb, n, ld, OP_COPY, g->i_step, SS(BUF_ARENA, RG(g->lat, 1, ld, 0)),
              SA(RC(g->latc, ld)), 0, 0);
    pvk_fill(cb, &g->arena, (size_t)g->sync_off * 4, 8, 0); /* the barrier's count and epoch */
    pvk_weights_window(&g->c, 0, g->c.wsize);
    pc_stepk p = {g->prog[k][g->rpar], g->prog_n[k], g->sync_off, n, g->i_step, g->i_bblen};
    pvk_dispatch(&g->c, cb, g->stepk_pipe, &p, sizeof p, (uint32_t)g->stepk_G, 1, 1);
}

/* The step command buffer: k frames for the n slots of the step list. */
static void rec_step(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t k) {
    if (stepk_ok(g, (int)n)) {
        rec_stepk(g, cb, n, k);
        return;
    }
    const ptts_arch *a = &g->w->arch;
    const uint32_t d = (uint32_t)a->d, ld = (uint32_t)a->ld, L = g->i_step;
    rec_rowop(g, cb, n, ld, OP_COPY, L, SS(BUF_ARENA, RG(g->lat, 1, ld, 0)), SA(RC(g->latc, ld)), 0, 0);
    tspec t = bb_spec(g, L);
    for (uint32_t j = 0; j < k; j++) {
        lin(g, cb, &g->input_linear, n, RC(g->latc, ld), RC(g->bx, d), ACT_NONE);
        rec_transformer(g, cb, &t, n, 1);
        rec_ln(g, cb, n, d, g->bx, g->bh, g->out_nw, g->out_nb, NONE, 0, 1e-5f);
        /* EOS logits, the noise copy and the flow's cond linear are independent: one barrier */
        pvk_skip_barrier(&g->c);
        lin(g, cb, &g->out_eos, n, RC(g->bh, d), RC(g->eosc + j, KMAX), ACT_NONE);
        pvk_skip_barrier(&g->c);
        rec_rowop(g, cb, n, ld, OP_COPY, 0, SB(BUF_IO, RC(g->o_noise + j * ld, k * ld)),
                  SA(RC(g->latc, ld)), 0, 0);
        rec_flow(g, cb, n, g->bh, g->latc);
        /* the two latent copies only read latc, as the next frame's input linear does */
        pvk_skip_barrier(&g->c);
        rec_rowop(g, cb, n, ld, OP_COPY, 0, SA(RC(g->latc, ld)),
                  SB(BUF_IO, RC(g->o_lat + j * ld, k * ld)), 0, 0);
        if (j + 1 < k) pvk_skip_barrier(&g->c);
        rec_rowop(g, cb, n, ld, OP_COPY, L, SA(RC(g->latc, ld)),
                  SS(BUF_ARENA, RG(g->steplat + j * ld, 1, KMAX * ld, 0)), 0, 0);
    }
    rec_rowop(g, cb, n, k, OP_COPY, 0, SA(RC(g->eosc, KMAX)), SB(BUF_IO, RC(g->o_eos, k)), 0, 0);
    rec_rowop(g, cb, n, ld, OP_COPY, L, SA(RC(g->latc, ld)), SS(BUF_ARENA, RG(g->lat, 1, ld, 0)), 0, 0);
}

/* A streaming causal conv over T new rows per group: input rows (compact, T per group, op copy
 * or ELU) appended after the slot's carried rows in the work buffer W, the gemm, the last hist
 * rows carried back. dec_in's (its input, cx, is the codec transformer's compact output); the
 * convs after it read their input in place (rec_wconv). */
static void rec_sconv(vk_engine *g, VkCommandBuffer cb, const gconv *cv, uint32_t groups,
                      uint32_t T, uint32_t hist, uint32_t state, uint32_t W, uint32_t in,
                      int op, rows Y, int act, int accum) {
    const uint32_t cin = cv->cin, gs = (hist + T) * cin, L = g->i_dec;
    if (hist) { /* carried rows and new rows go to disjoint rows of W */
        pvk_skip_barrier(&g->c);
        rec_rowop(g, cb, groups * hist, cin, OP_COPY, L, SS(BUF_ARENA, RG(state, hist, hist * cin, cin)),
                  SA(RG(W, hist, gs, cin)), 0, 0);
    }
    rec_rowop(g, cb, groups * T, cin, op, 0, SA(RC(in, cin)), SA(RG(W + hist * cin, T, gs, cin)), 0,
              0);
    rec_linear(g, cb, &cv->w, groups * T / cv->st, RG(W, T / cv->st, gs, cv->st * cin), Y, act,
               accum, 1.f, NONE, RC(0, 0), 0);
    if (hist)
        rec_rowop(g, cb, groups * hist, cin, OP_COPY, L, SA(RG(W + T * cin, hist, gs, cin)),
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
static void rec_wconv(vk_engine *g, VkCommandBuffer cb, const gconv *cv, uint32_t groups,
                      uint32_t T, uint32_t hist, uint32_t state, uint32_t in, uint32_t F,
                      int xact, rows Y, int act, int accum, uint32_t W) {
    const uint32_t cin = cv->cin, gs = (F + T) * cin, win = in + (F - hist) * cin, L = g->i_dec;
    if (hist) {
        rec_rowop(g, cb, groups * hist, cin, OP_COPY, L, SS(BUF_ARENA, RG(state, hist, hist * cin, cin)),
                  SA(RG(win, hist, gs, cin)), 0, 0);
        /* after the copy in (T < hist would carry front rows), beside the gemm (both only
         * read the buffer; the gemm's barrier orders it for what follows) */
        pvk_skip_barrier(&g->c);
        rec_rowop(g, cb, groups * hist, cin, OP_COPY, L, SA(RG(win + T * cin, hist, gs, cin)),
                  SS(BUF_ARENA, RG(state, hist, hist * cin, cin)), 0, 0);
    }
    if (W != NONE) {
        const uint32_t gw = (hist + T) * cin;
        g->counts.conv_copies++;
        rec_rowop(g, cb, groups * (hist + T), cin, xact == ACT_ELU ? OP_ELU : OP_COPY, 0,
                  SA(RG(win, hist + T, gs, cin)), SA(RG(W, hist + T, gw, cin)), 0, 0);
        rec_linear(g, cb, &cv->w, groups * T / cv->st, RG(W, T / cv->st, gw, cv->st * cin), Y,
                   act, accum, 1.f, NONE, RC(0, 0), 0);
        return;
    }
    rec_linear_x(g, cb, &cv->w, groups * T / cv->st, RG(win, T / cv->st, gs, cv->st * cin), Y, act,
                 accum, 1.f, NONE, RC(0, 0), 0, xact);
}

typedef struct pc_up {
    uint32_t groups, frames, C, us, uk, list, qoff, xoff, toff, woff;
} pc_up;

/* The codec on frames f0 .. f0 + kc - 1 of the first nf slots of the decode list -> io pcm
 * (caller order, k frames per caller slot). Every stage is streaming and causal, so the kc
 * frames of a slot go through as one group of kc * 16 rows (transformer rows attend within the
 * group causally; convolutions carry state per group). */
static void rec_codec_pass(vk_engine *g, VkCommandBuffer cb, uint32_t nf, uint32_t f0,
                           uint32_t kc, uint32_t k) {
    const ptts_weights *w = g->w;
    const ptts_arch *a = &w->arch;
    const uint32_t ld = (uint32_t)a->ld, C = (uint32_t)a->C, L = g->i_dec;
    const uint32_t us = (uint32_t)w->codec.upsample_stride, uk = (uint32_t)w->codec.upsample_k;
    const uint32_t nr = nf * kc; /* latent rows */
    rec_rowop(g, cb, nr, ld, OP_AFFINE, L,
              SS(BUF_ARENA, RG(g->steplat + f0 * ld, kc, KMAX * ld, ld)), SA(RC(g->zc, ld)),
              g->emb_std, g->emb_mean);
    lin(g, cb, &g->quant, nr, RC(g->zc, ld), RC(g->qc, C), ACT_NONE);
    wspan sp = WSPAN0;
    span_add(&sp, g->up_w, (size_t)C * uk);
    pc_up pu = {nf, kc, C, us, uk, L, g->qc, g->cx, g->st_up, g->up_w - span_base(g, &sp)};
    pvk_dispatch_flat(&g->c, cb, PVK_UPSAMPLE, &pu, sizeof pu, (uint64_t)nr * us * C);
    const ptts_transformer *tr = &w->codec.dec_tr;
    tspec t = {g->cd,    tr->layers, tr->d, tr->heads, tr->ffn, tr->window, L, g->i_cdlen,
               (uint32_t)(g->bb_kv_slot * (size_t)g->S), (uint32_t)g->ccap, g->cd_freq,
               g->cd_kv_slot, g->cx, g->ch, g->cqkv, g->catt, g->cff};
    rec_transformer(g, cb, &t, nr * us, kc * us);
    /* SEANet: dec_in writes h0's rows after its front rows, every later conv reads its input
     * in place (rec_wconv) with the ELU before it applied on load */
    uint32_t rws = kc * us, width = g->dec_in.cout, cur = g->h0, fc = g->f_h0;
    rec_sconv(g, cb, &g->dec_in, nf, rws, (uint32_t)g->hist_in, g->st_in, g->w_in, g->cx,
              OP_COPY, RF(g->h0, fc, rws, width), ACT_NONE, 0);
    for (int s = 0; s < 3; s++) {
        const gconv *up = &g->up[s];
        /* ELU, then the transposed conv as a windowed conv (wb_convtr): [rws][ust cout] rows
         * are the [rws ust][cout] output, here the rows after acc[s]'s front rows */
        const uint32_t fa = g->f_acc[s], wo = up->cout / up->ust, ro = rws * up->ust;
        rec_wconv(g, cb, up, nf, rws, up->k - 1, g->st_tail[s], cur, fc, ACT_ELU,
                  RG(g->acc[s] + fa * wo, rws, (fa + ro) * wo, up->cout), ACT_NONE, 0, g->U[s]);
        rws = ro;
        width = wo;
        /* residual block on acc: r1 carries the rows before r2 adds to them */
        rec_wconv(g, cb, &g->r1[s], nf, rws, (uint32_t)g->hist_r[s], g->st_r[s], g->acc[s], fa,
                  ACT_ELU, RC(g->rh[s], g->r1[s].cout), ACT_ELU, 0, g->R[s]);
        rec_linear(g, cb, &g->r2[s].w, nf * rws, RC(g->rh[s], g->r1[s].cout),
                   RF(g->acc[s], fa, rws, width), ACT_NONE, 1, 1.f, NONE, RC(0, 0), 0);
        cur = g->acc[s];
        fc = fa;
    }
    rec_wconv(g, cb, &g->dec_out, nf, rws, (uint32_t)g->hist_out, g->st_out, cur, fc, ACT_ELU,
              RC(g->pcmc, 1), ACT_NONE, 0, g->O);
    const uint32_t fs = (uint32_t)a->frame_samples;
    rec_rowop(g, cb, nf, kc * fs, OP_COPY, g->i_orig, SA(RC(g->pcmc, kc * fs)),
              SS(BUF_IO, RG(g->o_pcm + f0 * fs, 1, k * fs, 0)), 0, 0);
}

/* ---- buffers ------------------------------------------------------------------------------ */

static void drop_cached(vk_engine *g, cached *c) {
    pvk_cmd_free_q(&g->c, c->cb, c->q);
    free(c->key);
    memset(c, 0, sizeof *c);
}

static void drop_all_cached(vk_engine *g) {
    for (int i = 0; i <= KMAX; i++)
        for (int q = 0; q < 2; q++) {
            drop_cached(g, &g->step_cb[i][q]);
            drop_cached(g, &g->dec_cb[i][q]);
            g->prog_ok[i][q] = 0; /* programs hold cache sizes and LSD steps */
        }
    drop_cached(g, &g->lat_cb);
}

/* (Re)allocate the K and V caches for `cap` backbone positions per slot, keeping contents. */
static int kv_alloc(vk_engine *g, int cap, ptts_error *e) {
    const ptts_arch *a = &g->w->arch;
    const size_t d = (size_t)a->d, S = (size_t)g->S;
    size_t bb_slot = (size_t)a->layers * cap * d;
    size_t cd_total = S * g->cd_kv_slot;
    size_t floats = S * bb_slot + cd_total;
    if (floats > 0xffffffffu)
        return ptts_fail(e, PTTS_E_NOMEM, "Vulkan: a KV cache of %d positions for %d streams is "
                                          "too large", cap, g->S);
    pvk_buffer nk, nv;
    int rc = pvk_buffer_create(&g->c, &nk, floats * 4, 0, e);
    if (rc) return rc;
    if ((rc = pvk_buffer_create(&g->c, &nv, floats * 4, 0, e))) {
        pvk_buffer_destroy(&g->c, &nk);
        return rc;
    }
    if (g->kbuf.buf) {
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) rc = PTTS_E_BACKEND;
        for (size_t s = 0; !rc && s < S; s++)
            for (int l = 0; l < a->layers; l++) {
                size_t so = (s * g->bb_kv_slot + (size_t)l * g->cap * d) * 4;
                size_t dof = (s * bb_slot + (size_t)l * cap * d) * 4;
                pvk_copy(cb, &g->kbuf, so, &nk, dof, (size_t)g->cap * d * 4);
                pvk_copy(cb, &g->vbuf, so, &nv, dof, (size_t)g->cap * d * 4);
            }
        if (!rc && cd_total) {
            pvk_copy(cb, &g->kbuf, S * g->bb_kv_slot * 4, &nk, S * bb_slot * 4, cd_total * 4);
            pvk_copy(cb, &g->vbuf, S * g->bb_kv_slot * 4, &nv, S * bb_slot * 4, cd_total * 4);
        }
        if (!rc) rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
        pvk_cmd_free(&g->c, cb);
        if (rc) {
            pvk_buffer_destroy(&g->c, &nk);
            pvk_buffer_destroy(&g->c, &nv);
            return rc;
        }
    }
    pvk_buffer_destroy(&g->c, &g->kbuf);
    pvk_buffer_destroy(&g->c, &g->vbuf);
    g->kbuf = nk;
    g->vbuf = nv;
    g->cap = cap;
    g->bb_kv_slot = bb_slot;
    pvk_bind(&g->c, PVK_B_KC, &g->kbuf);
    pvk_bind(&g->c, PVK_B_VC, &g->vbuf);
    drop_all_cached(g);
    return 0;
}

static void vk_destroy(void *p) {
    vk_engine *g = p;
    if (!g) return;
    if (g->c.dev) {
        drop_all_cached(g);
        pvk_buffer *bufs[] = {&g->wbuf, &g->arena, &g->kbuf, &g->vbuf,
                              &g->ints, &g->io,    &g->stage};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) pvk_buffer_destroy(&g->c, bufs[i]);
        pvk_destroy(&g->c);
    }
    free(g->bb);
    free(g->cd);
    free(g->fb);
    free(g->sorted);
    free(g->orig);
    free(g->scount);
    free(g->dkey);
    free(g);
}

static int upload_weights(vk_engine *g, ptts_error *e) {
    const ptts_weights *w = g->w;
    const ptts_arch *a = &w->arch;
    const ptts_codec_weights *cw = &w->codec;
    wbuild b = {0};
    g->bb = calloc((size_t)a->layers, sizeof *g->bb);
    g->cd = calloc((size_t)cw->dec_tr.layers, sizeof *g->cd);
    g->fb = calloc((size_t)(a->flow_depth > 0 ? a->flow_depth : 1), sizeof *g->fb);
    if (!g->bb || !g->cd || !g->fb) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    for (int l = 0; l < a->layers; l++) wb_tl(&b, &w->backbone.layer[l], a->d, &g->bb[l], 1);
    g->input_linear = wb_lin_h(&b, &w->input_linear);
    g->out_eos = wb_lin_h(&b, &w->out_eos);
    g->out_nw = wb_vec(&b, w->out_norm_w, (size_t)a->d);
    g->out_nb = wb_vec(&b, w->out_norm_b, (size_t)a->d);
    g->bos = wb_vec(&b, w->bos_emb, (size_t)a->ld);
    g->embed = wb_vec(&b, w->embed, (size_t)(a->nb + 1) * a->d);
    g->bb_freq = wb_freqs(&b, a->d / a->heads);
    const ptts_flow_weights *fw = &w->flow;
    g->cond = wb_lin_h(&b, &fw->cond_embed);
    g->input_proj = wb_lin_h(&b, &fw->input_proj);
    for (int i = 0; i < a->flow_depth; i++) {
        g->fb[i].ln_w = wb_vec(&b, fw->block[i].ln_w, (size_t)a->fd);
        g->fb[i].ln_b = wb_vec(&b, fw->block[i].ln_b, (size_t)a->fd);
        g->fb[i].mlp0 = wb_lin_h(&b, &fw->block[i].mlp0);
        g->fb[i].mlp2 = wb_lin_h(&b, &fw->block[i].mlp2);
    }
    const ptts_lin *ada[65];
    int nada = 0;
    for (int i = 0; i < a->flow_depth && nada < 64; i++) ada[nada++] = &fw->block[i].ada;
    ada[nada++] = &fw->final_ada;
    g->ada_all = wb_lin_cat(&b, ada, nada);
    if (!b.fail) wb_half(&b, &g->ada_all, ada, nada);
    g->final_linear = wb_lin_h(&b, &fw->final_linear);
    g->emb_std = wb_vec(&b, cw->emb_std, (size_t)a->ld);
    g->emb_mean = wb_vec(&b, cw->emb_mean, (size_t)a->ld);
    g->quant = wb_lin(&b, &cw->quant_out);
    g->up_w = wb_vec(&b, cw->upsample_w, (size_t)a->C * cw->upsample_k);
    for (int l = 0; l < cw->dec_tr.layers; l++)
        wb_tl(&b, &cw->dec_tr.layer[l], a->C, &g->cd[l], 0);
    g->cd_freq = wb_freqs(&b, cw->dec_tr.d / cw->dec_tr.heads);
    g->dec_in = wb_conv(&b, &cw->dec_in);
    for (int s = 0; s < 3; s++) {
        g->up[s] = wb_convtr(&b, &cw->dec_up[s]);
        g->r1[s] = wb_conv(&b, &cw->dec_res[s].c1);
        g->r2[s] = wb_conv(&b, &cw->dec_res[s].c2);
    }
    g->dec_out = wb_conv(&b, &cw->dec_out);
    int rc = 0;
    if (b.fail) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory (weights for the GPU)");
    if (!rc) rc = pvk_buffer_create_ex(&g->c, &g->wbuf, b.n * sizeof(float), 0, 1, e);
    if (!rc) rc = upload(g, &g->wbuf, 0, b.p, b.n * sizeof(float), e);
    free(b.p);
    return rc;
}

/* arena bump allocation (floats, 64-aligned) */
static uint32_t A(size_t *top, size_t n) {
    size_t off = (*top + 63) & ~(size_t)63;
    *top = off + (n ? n : 1);
    return (uint32_t)off;
}

static int layout_arena(vk_engine *g, ptts_error *e) {
    const ptts_weights *w = g->w;
    const ptts_arch *a = &w->arch;
    const ptts_codec_weights *cw = &w->codec;
    const size_t S = (size_t)g->S, d = (size_t)a->d, ld = (size_t)a->ld, fd = (size_t)a->fd;
    const size_t C = (size_t)a->C, us = (size_t)cw->upsample_stride;
    /* FG: slot-frames one codec pass may hold (vk_decode keeps nf * kc <= FG) */
    const size_t FG = S * KMAX < (S > CODEC_FG ? S : CODEC_FG) ? S * KMAX
                                                              : (S > CODEC_FG ? S : CODEC_FG);
    const size_t RB1 = S > PBLOCK ? S : PBLOCK, RC2 = FG * us;
    g->FG = (int)FG;
    size_t top = 0;
    g->lat = A(&top, S * ld);
    g->steplat_[0] = A(&top, S * KMAX * ld);
    g->steplat_[1] = A(&top, S * KMAX * ld);
    g->steplat = g->steplat_[0];
    g->te = A(&top, TE_MAX * fd);
    g->bx = A(&top, RB1 * d);
    g->bh = A(&top, RB1 * d);
    g->bqkv = A(&top, RB1 * 3 * d);
    g->batt = A(&top, RB1 * d);
    g->bff = A(&top, RB1 * (size_t)a->ffn);
    g->ce = A(&top, S * fd);
    g->sy = A(&top, S * fd);
    g->xh = A(&top, S * fd);
    g->hb = A(&top, S * fd);
    g->ub = A(&top, S * fd);
    g->mod = A(&top, S * ((size_t)a->flow_depth * 3 + 2) * fd);
    g->latc = A(&top, S * ld);
    g->eosc = A(&top, S * KMAX);
    g->zc = A(&top, FG * ld);
    g->qc = A(&top, FG * C);
    g->cx = A(&top, RC2 * C);
    g->ch = A(&top, RC2 * C);
    g->cqkv = A(&top, RC2 * 3 * C);
    g->catt = A(&top, RC2 * C);
    g->cff = A(&top, RC2 * (size_t)cw->dec_tr.ffn);
    g->hist_in = cw->dec_in.k - cw->dec_in.stride;
    /* a conv's work buffer: per group (slot) its carried rows, then the pass's new rows */
    g->w_in = A(&top, (S * g->hist_in + FG * us) * C);
    /* h0 and acc[s] fronted (rec_wconv): per group (slot) front rows for the carried rows of
     * the convs that read them (up[0]; r1[s] then up[s + 1] or dec_out), then the pass's rows */
    g->hist_out = cw->dec_out.k - cw->dec_out.stride;
    for (int s = 0; s < 3; s++) g->hist_r[s] = cw->dec_res[s].c1.k - cw->dec_res[s].c1.stride;
    g->f_h0 = g->up[0].k - 1;
    g->h0 = A(&top, (S * g->f_h0 + FG * us) * (size_t)cw->dec_in.cout);
    size_t rows = us, width = (size_t)cw->dec_in.cout;
    /* the conv_copy work buffers: per group (slot) the window, hist + the pass's rows */
#define WORK(hist, n, w) (g->conv_copy ? A(&top, (S * (size_t)(hist) + FG * (n)) * (w)) : NONE)
    for (int s = 0; s < 3; s++) {
        const ptts_convtr *ct = &cw->dec_up[s];
        g->U[s] = WORK(g->up[s].k - 1, rows, width);
        rows *= (size_t)ct->stride;
        width = (size_t)ct->cout;
        const uint32_t next = s < 2 ? g->up[s + 1].k - 1 : (uint32_t)g->hist_out;
        g->f_acc[s] = (uint32_t)g->hist_r[s] > next ? (uint32_t)g->hist_r[s] : next;
        g->acc[s] = A(&top, (S * g->f_acc[s] + FG * rows) * width);
        g->R[s] = WORK(g->hist_r[s], rows, width);
        g->rh[s] = A(&top, FG * rows * (size_t)cw->dec_res[s].c1.cout);
    }
    g->O = WORK(g->hist_out, rows, width);
#undef WORK
    g->pcmc = A(&top, FG * rows);
    /* per-slot codec state, one contiguous block per slot region */
    g->st_up = A(&top, S * (size_t)(cw->upsample_k - cw->upsample_stride) * C);
    g->st_in = A(&top, S * g->hist_in * C);
    width = (size_t)cw->dec_in.cout;
    for (int s = 0; s < 3; s++) {
        const ptts_convtr *ct = &cw->dec_up[s];
        g->st_tail[s] = A(&top, S * (size_t)(g->up[s].k - 1) * ct->cin);
        g->st_r[s] = A(&top, S * g->hist_r[s] * (size_t)ct->cout);
        width = (size_t)ct->cout;
    }
    g->st_out = A(&top, S * g->hist_out * width);
    /* stepk programs: one region per k (a cached step command buffer per k replays its own) */
    g->prog_ph = 3 + 5 * a->layers + STEPK_LSD * (3 + 2 * a->flow_depth);
    for (int k = 1; k <= KMAX; k++)
        for (int q = 0; q < 2; q++)
            g->prog[k][q] = A(&top, ((size_t)k * g->prog_ph + 1) * PH_WORDS);
    g->sync_off = A(&top, 2); /* stepk's grid barrier: count, epoch */
    if (top > 0xffffffffu / 4)
        return ptts_fail(e, PTTS_E_NOMEM, "Vulkan: %d streams need too much scratch", g->S);
    int rc = pvk_buffer_create(&g->c, &g->arena, top * 4, 0, e);
    if (rc) return rc;
    /* ints and io */
    g->i_bblen = 0;
    g->i_cdlen = (uint32_t)S;
    g->i_step = (uint32_t)(2 * S);
    g->i_dec = (uint32_t)(3 * S);
    g->i_orig = (uint32_t)(4 * S);
    g->i_plist = (uint32_t)(5 * S);
    g->i_ids = (uint32_t)(5 * S + 1);
    if ((rc = pvk_buffer_create(&g->c, &g->ints, (5 * S + 1 + IDS_MAX) * 4, 1, e))) return rc;
    size_t io = 0;
    g->o_noise = A(&io, S * KMAX * ld);
    g->o_eos = A(&io, S * KMAX);
    g->o_lat = A(&io, S * KMAX * ld);
    g->o_pcm = A(&io, S * KMAX * (size_t)a->frame_samples);
    if ((rc = pvk_buffer_create(&g->c, &g->io, io * 4, 1, e))) return rc;
    /* the ring holds the window plus the rows of one pass (up to KMAX frames) */
    g->ccap = cw->dec_tr.window + KMAX * (int)us - 1;
    g->cd_kv_slot = (size_t)cw->dec_tr.layers * g->ccap * C;
    pvk_bind(&g->c, PVK_B_WEIGHTS, &g->wbuf);
    pvk_bind(&g->c, PVK_B_ARENA, &g->arena);
    pvk_bind(&g->c, PVK_B_INTS, &g->ints);
    pvk_bind(&g->c, PVK_B_IO, &g->io);
    return kv_alloc(g, 256, e);
}

/* ---- engine ops --------------------------------------------------------------------------- */

static int vk_set_sampler_steps(void *p, int steps, ptts_error *e);

/* A tile by name (ptts_vk_tuning), -1 for none named, < -1 for an unknown name. */
static int tile_named(const gtile *t, int n, const char *name) {
    if (!name) return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(name, t[i].name)) return i;
    return -2;
}

/* The kernel and path choices of a new engine: the device's capabilities, the model's options
 * and the test hooks (ptts_vk_tuning, every field zero for users). */
static int choose_paths(vk_engine *g, const ptts_engine_args *a, ptts_error *e) {
    static const ptts_vk_tuning none = {0};
    const ptts_vk_tuning *t = a->vk ? a->vk : &none;
    g->gemm_units = g->c.sm_count > 0 ? (uint32_t)g->c.sm_count : 8;
    g->gemm_force = tile_named(gemm_tiles, GT_N, t->gemm_force);
    g->tc_force = tile_named(tc_tiles, TC_N, t->tc_force);
    if (g->gemm_force < -1 || g->tc_force < -1)
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan: no %s gemm tile '%s'",
                         g->gemm_force < -1 ? "register-tiled" : "tensor-core",
                         g->gemm_force < -1 ? t->gemm_force : t->tc_force);
    /* tensor cores by default where the model runs in reduced precision (bf16 / int8 backbone
     * weights: the CPU path rounds the codec's operands to bf16 there too) */
    const int half = g->w->backbone.layer[0].in_proj.type != PTTS_W_F32;
    g->tc = g->c.coop && (a->tensor_cores ? a->tensor_cores > 0 : half);
    g->conv_copy = t->conv_copy ? t->conv_copy > 0 : g->tc;
    /* stepk's grid must be resident at once: one workgroup per SM where the device says how
     * many it has (NVIDIA), less STEPK_SPARE for the codec beside it on a second queue;
     * elsewhere off unless the hook asks for N workgroups (the tests run 1 on lavapipe) */
    int spare = g->c.pool2 && g->c.sm_count >= 2 * STEPK_SPARE ? STEPK_SPARE : 0;
    g->stepk_G = t->stepk > 0 ? t->stepk : t->stepk < 0 ? 0 : g->c.sm_count - spare;
    if (g->stepk_G < 0) g->stepk_G = 0;
    /* 512 invocations where the device has the shared memory (faster on the H200) */
    g->stepk_pipe = g->c.pipe[PVK_STEPK512] ? PVK_STEPK512 : PVK_STEPK;
    g->pipe = t->pipe >= 0;
    const int discrete = g->c.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    g->c.spin_us = a->fence_spin_us > 0   ? a->fence_spin_us
                   : a->fence_spin_us < 0 ? 0
                   : discrete             ? SPIN_DISCRETE_US
                                          : 0;
    return 0;
}

static int vk_create(void **out, const ptts_engine_args *args, int slots, ptts_error *e) {
    *out = NULL;
    if (slots < 1) return ptts_fail(e, PTTS_E_INVALID, "an engine needs at least one slot");
    const ptts_weights *w = args->w;
    const ptts_codec_weights *cw = &w->codec;
    if (w->arch.d / w->arch.heads > 256 || w->arch.flow_depth > 64 ||
        cw->dec_tr.d / cw->dec_tr.heads > 256 || cw->upsample_k - cw->upsample_stride > cw->upsample_stride || cw->dec_tr.window <= 0)
        return ptts_fail(e, PTTS_E_UNSUPPORTED, "Vulkan: this architecture is not supported "
                                                "(head width over 256, over 64 flow blocks "
                                                "or unusual upsampling)");
    if (w->arch.flow_type < PTTS_FLOW_LSD || w->arch.flow_type > PTTS_FLOW_DRIFTING)
        return ptts_fail(e, PTTS_E_UNSUPPORTED, "Vulkan: unknown sampler type %d",
                         w->arch.flow_type);
    for (int s = 0; s < 3; s++)
        if (cw->dec_up[s].k < cw->dec_up[s].stride || cw->dec_res[s].c1.stride != 1 ||
            cw->dec_res[s].c2.k != 1)
            return ptts_fail(e, PTTS_E_UNSUPPORTED, "Vulkan: unsupported SEANet layer shapes");
    vk_engine *g = calloc(1, sizeof *g);
    if (!g) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    g->w = w;
    g->S = slots;
    g->sorted = calloc((size_t)slots, sizeof(int));
    g->orig = calloc((size_t)slots, sizeof(int));
    g->scount = calloc((size_t)slots, sizeof(int));
    g->dkey = calloc((size_t)3 * slots, sizeof(int));
    int rc = (!g->sorted || !g->orig || !g->scount || !g->dkey)
                 ? ptts_fail(e, PTTS_E_NOMEM, "out of memory")
                 : 0;
    if (!rc) rc = pvk_create(&g->c, args->device, e);
    if (!rc) rc = choose_paths(g, args, e);
    if (!rc) rc = upload_weights(g, e);
    if (!rc) rc = layout_arena(g, e);
    if (!rc) rc = vk_set_sampler_steps(g, 1, e);
    if (rc) {
        vk_destroy(g);
        return rc;
    }
    *out = g;
    return 0;
}

static int vk_max_steps(void *p) {
    (void)p;
    return KMAX;
}

static int vk_set_sampler_steps(void *p, int steps, ptts_error *e) {
    vk_engine *g = p;
    if (steps == g->steps) return 0;
    if (steps < 1 || steps > TE_MAX)
        return ptts_fail(e, PTTS_E_INVALID, "sampler steps must be in [1, %d], got %d", TE_MAX,
                         steps);
    const int fd = g->w->arch.fd;
    float *te = malloc((size_t)steps * fd * sizeof(float));
    if (!te) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    int rc = ptts_flow_time_table(g->w, steps, te, e);
    if (rc) {
        free(te);
        return rc;
    }
    rc = upload(g, &g->arena, (size_t)g->te * 4, te, (size_t)steps * fd * sizeof(float), e);
    free(te);
    if (rc) return rc;
    g->steps = steps;
    drop_all_cached(g);
    return 0;
}

typedef struct state_region {
    uint32_t off;
    size_t n; /* floats per slot */
} state_region;

/* Fresh codec state for a slot (every state region's rows of it; the ring's position is the
 * caller's: iv[i_cdlen + slot] = 0). Recorded into cb; the caller orders what follows. */
static void rec_codec_reset(vk_engine *g, VkCommandBuffer cb, int slot) {
    const ptts_arch *a = &g->w->arch;
    const ptts_codec_weights *cw = &g->w->codec;
    state_region st[9];
    int ns = 0;
    st[ns++] = (state_region){g->st_up, (size_t)(cw->upsample_k - cw->upsample_stride) * a->C};
    st[ns++] = (state_region){g->st_in, (size_t)g->hist_in * a->C};
    for (int s = 0; s < 3; s++) {
        const ptts_convtr *ct = &cw->dec_up[s];
        st[ns++] = (state_region){g->st_tail[s], (size_t)(g->up[s].k - 1) * ct->cin};
        st[ns++] = (state_region){g->st_r[s], (size_t)g->hist_r[s] * ct->cout};
    }
    st[ns++] = (state_region){g->st_out, (size_t)g->hist_out * cw->dec_out.cin};
    for (int i = 0; i < ns; i++)
        if (st[i].n)
            vkCmdFillBuffer(cb, g->arena.buf, ((size_t)st[i].off + slot * st[i].n) * 4,
                            st[i].n * 4, 0);
}

static int vk_begin_chunk(void *p, int slot, const ptts_voice_state *v, const int *ids,
                          int n_ids, int max_steps, ptts_error *e) {
    vk_engine *g = p;
    const ptts_arch *a = &g->w->arch;
    if (slot < 0 || slot >= g->S) return ptts_fail(e, PTTS_E_INVALID, "no slot %d", slot);
    if (v->layers != a->layers || v->heads * v->dh != a->d || v->heads != a->heads)
        return ptts_fail(e, PTTS_E_MODEL,
                         "voice state has %d layers x %d heads x %d, the model needs %d x %d x %d",
                         v->layers, v->heads, v->dh, a->layers, a->heads, a->d / a->heads);
    for (int i = 0; i < n_ids; i++)
        if (ids[i] < 0 || ids[i] > a->nb)
            return ptts_fail(e, PTTS_E_INVALID, "token id %d out of range", ids[i]);
    int need = v->positions + n_ids + max_steps + 1, rc;
    if (need > g->cap && (rc = kv_alloc(g, need > g->cap * 3 / 2 ? need : g->cap * 3 / 2, e)))
        return rc;
    const size_t d = (size_t)a->d, P = (size_t)v->positions, per = (size_t)a->layers * P * d;
    if (per && (rc = stage_reserve(g, 2 * per * sizeof(float), e))) return rc;
    if (per) {
        memcpy(g->stage.map, v->k, per * sizeof(float));
        memcpy((float *)g->stage.map + per, v->v, per * sizeof(float));
    }
    uint32_t *iv = g->ints.map;
    iv[g->i_bblen + slot] = (uint32_t)P;
    iv[g->i_cdlen + slot] = 0;
    iv[g->i_plist] = (uint32_t)slot;
    for (int done = 0; done < n_ids || done == 0; done += IDS_MAX) {
        int cnt = n_ids - done < IDS_MAX ? n_ids - done : IDS_MAX;
        for (int i = 0; i < cnt; i++) iv[g->i_ids + i] = (uint32_t)ids[done + i];
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) return PTTS_E_BACKEND;
        if (done == 0) {
            for (int l = 0; per && l < a->layers; l++) {
                size_t dst = ((size_t)slot * g->bb_kv_slot + (size_t)l * g->cap * d) * 4;
                pvk_copy(cb, &g->stage, (size_t)l * P * d * 4, &g->kbuf, dst, P * d * 4);
                pvk_copy(cb, &g->stage, (per + (size_t)l * P * d) * 4, &g->vbuf, dst, P * d * 4);
            }
            rec_codec_reset(g, cb, slot);
            pvk_copy(cb, &g->wbuf, (size_t)g->bos * 4, &g->arena,
                     ((size_t)g->lat + (size_t)slot * a->ld) * 4, (size_t)a->ld * 4);
        }
        tspec t = bb_spec(g, g->i_plist);
        for (int b0 = 0; b0 < cnt; b0 += PBLOCK) {
            uint32_t mrows = (uint32_t)(cnt - b0 < PBLOCK ? cnt - b0 : PBLOCK);
            rec_rowop(g, cb, mrows, (uint32_t)d, OP_COPY, g->i_ids + (uint32_t)b0,
                      SWT(RG(g->embed, 1, (uint32_t)d, 0), (uint32_t)((a->nb + 1) * d)),
                      SA(RC(g->bx, (uint32_t)d)), 0, 0);
            rec_transformer(g, cb, &t, mrows, mrows);
        }
        rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
        pvk_cmd_free(&g->c, cb);
        if (rc) return rc;
        if (n_ids == 0) break;
    }
    return 0;
}

static int same_key(const cached *c, int n, int k, const int *key, int nkey) {
    return c->cb && c->n == n && c->k == k && c->nkey == nkey &&
           !memcmp(c->key, key, (size_t)nkey * sizeof(int));
}

static int set_key(cached *c, int n, int k, const int *key, int nkey) {
    c->key = malloc((size_t)(nkey ? nkey : 1) * sizeof(int));
    if (!c->key) return -1;
    memcpy(c->key, key, (size_t)nkey * sizeof(int));
    c->n = n;
    c->k = k;
    c->nkey = nkey;
    return 0;
}

/* Record command buffers for steplat_[par] (use_par before recording). */
static void use_par(vk_engine *g, int par) {
    g->rpar = par;
    g->steplat = g->steplat_[par];
}

/* The step call's inputs written and its command buffer (cached per k and parity, recorded
 * on first use) in *out; the call writes steplat_[g->par]. */
static int step_prep(vk_engine *g, const int *slots, int n, int k, const float *noise,
                     VkCommandBuffer *out, ptts_error *e) {
    const ptts_arch *a = &g->w->arch;
    if (k < 1 || k > KMAX || n < 1 || n > g->S)
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan step: %d slots x %d steps", n, k);
    const int par = g->par;
    uint32_t *iv = g->ints.map;
    for (int i = 0; i < n; i++) iv[g->i_step + i] = (uint32_t)slots[i];
    memcpy((float *)g->io.map + g->o_noise, noise, (size_t)n * k * a->ld * sizeof(float));
    cached *c = &g->step_cb[k][par];
    if (!same_key(c, n, k, slots, n)) {
        drop_cached(g, c);
        use_par(g, par);
        if (stepk_ok(g, n) && !g->prog_ok[k][par]) { /* before recording: an upload submits */
            size_t words = ((size_t)k * g->prog_ph + 1) * PH_WORDS;
            uint32_t *P = calloc(words, 4);
            if (!P) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
            g->prog_n[k] = stepk_program(g, (uint32_t)k, P);
            int rc = upload(g, &g->arena, (size_t)g->prog[k][par] * 4, P,
                            (size_t)g->prog_n[k] * PH_WORDS * 4, e);
            free(P);
            if (rc) return rc;
            g->prog_ok[k][par] = 1;
        }
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) return PTTS_E_BACKEND;
        rec_step(g, cb, (uint32_t)n, (uint32_t)k);
        int rc = pvk_cmd_end(&g->c, cb, e);
        if (rc || set_key(c, n, k, slots, n)) {
            pvk_cmd_free(&g->c, cb);
            return rc ? rc : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        }
        c->cb = cb;
    }
    if (stepk_ok(g, n)) g->counts.stepk_frames += (unsigned long long)k;
    *out = c->cb;
    return 0;
}

/* After a step call ran: its outputs to the caller, the parities moved on. */
static void step_done(vk_engine *g, int n, int k, float *eos, float *latents) {
    const ptts_arch *a = &g->w->arch;
    const float *io = g->io.map;
    memcpy(eos, io + g->o_eos, (size_t)n * k * sizeof(float));
    memcpy(latents, io + g->o_lat, (size_t)n * k * a->ld * sizeof(float));
    g->lpar = g->par;
    g->par ^= 1;
}

static int vk_step(void *p, const int *slots, int n, int k, const float *noise, float *eos,
                   float *latents, ptts_error *e) {
    vk_engine *g = p;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    int rc = step_prep(g, slots, n, k, noise, &cb, e);
    if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
    if (rc) return rc;
    step_done(g, n, k, eos, latents);
    return 0;
}

/* The queue decode command buffers are for: the second where it is of another family (a
 * command buffer is for one family), else the first. */
static int dq(const vk_engine *g) { return g->c.pool2 != VK_NULL_HANDLE; }

/* The decode call's lists written and its command buffer (cached per k, slot order, counts and
 * parity) in *out, NULL when no slot has a frame; reads steplat_[g->lpar]. */
static int decode_prep(vk_engine *g, const int *slots, int n, int k, const int *counts,
                       VkCommandBuffer *out, ptts_error *e) {
    *out = VK_NULL_HANDLE;
    if (k < 1 || k > KMAX || n < 1 || n > g->S)
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan decode: %d slots x %d steps", n, k);
    /* slots by count, descending (stable): frame f runs on a prefix */
    int m = 0, kmax = 0;
    for (int c = k; c >= 1; c--)
        for (int i = 0; i < n; i++)
            if (counts[i] == c) {
                g->sorted[m] = slots[i];
                g->orig[m] = i;
                g->scount[m] = c;
                m++;
            }
    if (m == 0) return 0;
    kmax = g->scount[0];
    uint32_t *iv = g->ints.map;
    for (int i = 0; i < m; i++) {
        iv[g->i_dec + i] = (uint32_t)g->sorted[i];
        iv[g->i_orig + i] = (uint32_t)g->orig[i];
    }
    int *key = g->dkey; /* no allocation per call */
    memcpy(key, g->sorted, (size_t)m * sizeof(int));
    memcpy(key + m, g->scount, (size_t)m * sizeof(int));
    memcpy(key + 2 * m, g->orig, (size_t)m * sizeof(int));
    cached *c = &g->dec_cb[k][g->lpar];
    int rc = 0;
    if (!same_key(c, m, k, key, 3 * m)) {
        drop_cached(g, c);
        use_par(g, g->lpar);
        VkCommandBuffer cb = pvk_cmd_begin_q(&g->c, dq(g), e);
        if (!cb) rc = PTTS_E_BACKEND;
        /* passes over frames f .. f + kc - 1 of the nf slots that have them (a prefix: sorted
         * by count), kc as large as every one of them has frames and nf * kc <= FG allows */
        for (int f = 0; !rc && f < kmax;) {
            int nf = 0;
            while (nf < m && g->scount[nf] > f) nf++;
            int kc = g->scount[nf - 1] - f, cap = g->FG / nf;
            if (kc > cap) kc = cap > 0 ? cap : 1;
            rec_codec_pass(g, cb, (uint32_t)nf, (uint32_t)f, (uint32_t)kc, (uint32_t)k);
            f += kc;
        }
        if (!rc) rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc && set_key(c, m, k, key, 3 * m)) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        if (rc) {
            pvk_cmd_free_q(&g->c, cb, dq(g));
        } else {
            c->cb = cb;
            c->q = dq(g);
        }
    }
    if (!rc) *out = c->cb;
    return rc;
}

static void decode_done(vk_engine *g, int n, int k, const int *counts, float *pcm) {
    const size_t fs = (size_t)g->w->arch.frame_samples;
    const float *io = (const float *)g->io.map + g->o_pcm;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            memcpy(pcm + (size_t)i * k * fs, io + (size_t)i * k * fs,
                   (size_t)counts[i] * fs * sizeof(float));
}

static int vk_decode(void *p, const int *slots, int n, int k, const int *counts, float *pcm,
                     ptts_error *e) {
    vk_engine *g = p;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    int rc = decode_prep(g, slots, n, k, counts, &cb, e);
    if (rc || !cb) return rc;
    if ((rc = pvk_submit_wait_q(&g->c, cb, dq(g), e))) return rc;
    decode_done(g, n, k, counts, pcm);
    return 0;
}

/* decode(slots, k, counts) of the last step call and the next step call (same slots, kn
 * frames) in one submission, on two queues where the device has them: the codec's buffers,
 * the step's and the latents they pass (by parity) are disjoint. ptts_vk_tuning.pipe < 0: one
 * after the other (a test hook: the same results bit for bit). */
static int vk_step_decode(void *p, const int *slots, int n, int k, const int *counts,
                          float *pcm, int kn, const float *noise, float *eos, float *latents,
                          ptts_error *e) {
    vk_engine *g = p;
    if (!g->pipe) {
        int rc = vk_decode(p, slots, n, k, counts, pcm, e);
        return rc ? rc : vk_step(p, slots, n, kn, noise, eos, latents, e);
    }
    VkCommandBuffer dcb = VK_NULL_HANDLE, scb = VK_NULL_HANDLE;
    int rc = decode_prep(g, slots, n, k, counts, &dcb, e);
    if (!rc) rc = step_prep(g, slots, n, kn, noise, &scb, e);
    if (!rc) rc = dcb ? pvk_submit_pair(&g->c, scb, dcb, e) : pvk_submit_wait(&g->c, scb, e);
    if (rc) return rc;
    if (dcb) g->counts.paired++;
    if (dcb) decode_done(g, n, k, counts, pcm);
    step_done(g, n, kn, eos, latents);
    return 0;
}

static const ptts_engine_ops vk_ops = {
    .name = "vulkan",
    .create = vk_create,
    .destroy = vk_destroy,
    .max_steps_per_call = vk_max_steps,
    .set_sampler_steps = vk_set_sampler_steps,
    .begin_chunk = vk_begin_chunk,
    .step = vk_step,
    .decode = vk_decode,
    .step_decode = vk_step_decode,
};

const ptts_engine_ops *ptts_vulkan_engine(void) { return &vk_ops; }

int ptts_vulkan_probe(const char *want, char *name, size_t name_size, int *discrete,
                      ptts_error *e) {
    pvk_device_info d[PVK_MAX_DEVICES];
    int n = pvk_probe(d, PVK_MAX_DEVICES, e);
    if (n < 0) return n;
    int i = pvk_pick(d, n, want, e);
    if (i < 0) return i;
    if (name && name_size) snprintf(name, name_size, "%s", d[i].name);
    if (discrete) *discrete = d[i].discrete;
    return 0;
}

int ptts_gpu_devices(ptts_gpu_device *out, int max, ptts_error *e) {
    pvk_device_info d[PVK_MAX_DEVICES];
    int n = pvk_probe(d, PVK_MAX_DEVICES, e);
    if (n < 0) return n;
    ptts_error pe = {0};
    int pick = pvk_pick(d, n, NULL, &pe); /* PTTS_VK_DEVICE, else the first discrete GPU... */
    for (int i = 0; i < n && i < max; i++) {
        _Static_assert(sizeof out[i].name == sizeof d[i].name, "device name sizes");
        memcpy(out[i].name, d[i].name, sizeof out[i].name);
        out[i].name[sizeof out[i].name - 1] = 0;
        out[i].kind = pvk_type_name(d[i].type);
        out[i].memory = d[i].memory;
        out[i].picked = i == pick;
    }
    return n < max ? n : max;
}

int ptts_vulkan_engine_stepk(void *p) { return ((vk_engine *)p)->stepk_G; }
int ptts_vulkan_engine_tc(void *p) { return ((vk_engine *)p)->tc; }

void ptts_vulkan_engine_counts(void *p, ptts_vk_counts *out) { *out = ((vk_engine *)p)->counts; }

long long ptts_vulkan_engine_tile_uses(void *p, int tc, const char *name) {
    const vk_engine *g = p;
    const int i = tile_named(tc ? tc_tiles : gemm_tiles, tc ? TC_N : GT_N, name);
    if (i < 0) return -1;
    return (long long)(tc ? g->tc_n[i] : g->gemm_n[i]);
}

/* ---- codec-only use (engine_hybrid.c: backbone and flow on the CPU) ---------------------- */

int ptts_vulkan_codec_reset(void *p, int slot, ptts_error *e) {
    vk_engine *g = p;
    if (slot < 0 || slot >= g->S) return ptts_fail(e, PTTS_E_INVALID, "no slot %d", slot);
    ((uint32_t *)g->ints.map)[g->i_cdlen + slot] = 0;
    VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
    if (!cb) return PTTS_E_BACKEND;
    rec_codec_reset(g, cb, slot);
    int rc = pvk_cmd_end(&g->c, cb, e);
    if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
    pvk_cmd_free(&g->c, cb);
    return rc;
}

int ptts_vulkan_decode_latents(void *p, const int *slots, int n, int k, const int *counts,
                               const float *latents, float *pcm, ptts_error *e) {
    vk_engine *g = p;
    const uint32_t ld = (uint32_t)g->w->arch.ld;
    if (k < 1 || k > KMAX || n < 1 || n > g->S)
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan decode: %d slots x %d steps", n, k);
    /* the latents [n][k][ld] into the slots' step rows, where decode reads them */
    memcpy((float *)g->io.map + g->o_lat, latents, (size_t)n * k * ld * sizeof(float));
    uint32_t *iv = g->ints.map;
    for (int i = 0; i < n; i++) iv[g->i_step + i] = (uint32_t)slots[i];
    cached *c = &g->lat_cb; /* recorded once per (slots, k), replayed: nothing per frame */
    int rc = 0;
    if (!same_key(c, n, k, slots, n)) {
        drop_cached(g, c);
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) return PTTS_E_BACKEND;
        rec_rowop(g, cb, (uint32_t)(n * k), ld, OP_COPY, g->i_step, SB(BUF_IO, RC(g->o_lat, ld)),
                  SS(BUF_ARENA, RG(g->steplat_[0], (uint32_t)k, KMAX * ld, ld)), 0, 0);
        rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc && set_key(c, n, k, slots, n)) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        if (rc) {
            pvk_cmd_free(&g->c, cb);
            return rc;
        }
        c->cb = cb;
    }
    rc = pvk_submit_wait(&g->c, c->cb, e);
    g->lpar = 0; /* decode reads what the copy wrote */
    return rc ? rc : vk_decode(p, slots, n, k, counts, pcm, e);
}

size_t ptts_vulkan_engine_bytes(void *p) {
    vk_engine *g = p;
    return (size_t)(g->wbuf.size + g->arena.size + g->kbuf.size + g->vbuf.size + g->ints.size +
                    g->io.size + g->stage.size);
}
