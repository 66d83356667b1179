/*
 * vk_engine.h - the Vulkan engine's state, shared by its parts:
 *
 *   vk_weights.c  the weights in the GPU layout (one buffer of float32, bf16 copies for stepk)
 *   vk_record.c   dispatch recorders and the kernel choice: linears, row ops, layer norms, the
 *                 transformer, the flow head, the multi-dispatch step
 *   vk_stepk.c    the step as one persistent dispatch: the phase program (shaders/stepk_abi.h)
 *   vk_codec.c    the Mimi decoder as recorded passes and its streaming state
 *   vk_prompt.c   begin_chunk: voice copies, the pending prompts in shared passes
 *   engine_vulkan.c  buffers and the arena layout, create/destroy, the engine.h operations and
 *                 their cached command buffers, the codec-only entry points (engine_hybrid.c)
 *
 * Everything the shaders address is a float offset (uint32) into one of the six buffers of
 * vk.h: wbuf (weights), arena (scratch, streaming state, stepk programs), kbuf / vbuf (KV
 * caches), ints (positions and slot lists) and io (host-visible inputs and outputs). Shapes
 * below: S slots, d / ld / fd backbone / latent / flow widths, C codec width, RB rows of a
 * backbone pass (S to 4 S: see PASS_ROWS), FG slot-frames of a codec pass, RC = FG * 16 codec
 * transformer rows (a frame is 16 rows after the upsampling).
 */
#ifndef PTTS_VK_ENGINE_H
#define PTTS_VK_ENGINE_H

#include <stdint.h>

#include "engine_vulkan.h"
#include "shaders/stepk_abi.h"
#include "vk.h"
#include "weights.h"

/* Steps per call (frames one step command buffer computes). Larger k amortizes a submission
 * over more frames, but delays the first audio and grows the per-k caches (step_cb, dec_cb,
 * the stepk programs); 8 is the value checked on lavapipe and the H200 (the tests' 3-stream
 * batch replays 8-frame calls; bench/RESULTS.md has the per-frame times). */
#define KMAX 8
#define PBLOCK 64    /* prompt rows per pass */
#define IDS_MAX 4096 /* prompt ids per submit */
/* Rows a backbone pass may hold (RB: the scratch rows of the arena): a step's S, and for the
 * prompts of many streams that arrive together (vk_prompt.c) up to 4 rows of each slot, at most
 * PASS_ROWS, at least PBLOCK. With RB = S, 544 streams joining 1,024 prompted one row of each
 * a pass: 30 passes for 30 tokens, each reading every slot's KV cache (175 ms of a wave's first
 * audio on the H200, bench/RESULTS.md); the scratch costs 40 KB a row (d = 1024). */
#define PASS_ROWS 4096
#define RB_ROWS(S)                                                                                 \
    PTTS_MAX((size_t)(S), PTTS_MAX((size_t)PBLOCK, PTTS_MIN(4 * (size_t)(S), (size_t)PASS_ROWS)))
/* Staging bytes the voice caches of prompts waiting for one submission may hold (vk_pend); a
 * prompt that does not fit submits the ones before it first. */
#define PEND_STAGE_MAX ((size_t)256 << 20)
#define TE_MAX 1000 /* sampler steps */
/* The codec runs several frames of a slot in one pass (its convolutions and transformer are
 * causal and streaming, so T frames at once equal T passes of one frame) until a pass holds
 * this many slot-frames: one stream's 8 frames cost one pass instead of 8, bound by launch
 * latency; from 32 streams on, one frame of every stream already fills a large GPU. */
#define CODEC_FG 32
/* ... and never more than this many: the pass's work buffers grow with it, and past 1024
 * streams (tensor cores: the convs' ELU'd windows copied) they took the arena past the 4 GiB
 * a binding can address; more slots than this decode in several passes of a frame each. */
#define CODEC_FG_MAX 1024
/* stepk.comp: the whole step as one persistent dispatch for up to STEPK_N rows (one or two
 * streams) and up to STEPK_LSD flow evaluations a frame (the program grows with both). */
#define STEPK_N 2
#define STEPK_LSD 4
/* Fewest rows a tensor-core gemm takes (fewer: the float32 kernels, latency-bound anyway). */
#define TC_ROWS 16
/* SMs the persistent stepk grid leaves to the codec when a second queue runs it beside the next
 * step (vk_step_decode): on the H200 (132 SMs) 100 workgroups take a float32 step as fast as
 * 108 and leave the codec more (bench/RESULTS.md, 2026-12-03 21:40). */
#define STEPK_SPARE 32
/* Default fence polling on a discrete GPU (us): longer than a step call lasts there; 0
 * elsewhere, where the polling core is one the device computes with (bench/RESULTS.md). */
#define SPIN_DISCRETE_US 20000
#define NONE 0xffffffffu    /* no buffer region (a missing bias, gate, copy) */
#define COMPACT 0x7fffffffu /* rows.rps: rows one after the other, no groups */

/* A linear in wbuf: W [out][in] at w, bias [out] at b (NONE: none), and the same matrix as
 * packed bf16 pairs at h (NONE: none) for stepk, kept where the model stores it in bf16 so the
 * one-stream step streams half the bytes with the values the float32 copy holds; and as
 * float16 at f (NONE: none), [out][in rounded up to 8] (zeros after in), each value rounded to
 * nearest even as the tensor-core tiles round W: the half-weight tiles (gemm_tch.glsl) read it,
 * so it exists where they may run (tensor cores on, vec4 rows: in % 4 == 0, out >= 16). */
typedef struct glin {
    uint32_t w, b;
    uint32_t in, out;
    uint32_t h;
    uint32_t f;
} glin;

/* A transformer layer: in_proj [3d][d] (q | k | v), out_proj [d][d], linear1 [ffn][d],
 * linear2 [d][ffn]; norms [d]; LayerScale ls1 / ls2 [d] (NONE in the backbone). */
typedef struct gtl {
    glin qkv, out, l1, l2;
    uint32_t n1w, n1b, n2w, n2b, ls1, ls2;
} gtl;

/* A causal conv [cout][k cin] of stride st; a ConvTranspose1d (k, stride ust) is held as the
 * stride-1 conv vk_codec.c runs: each input row's ust output rows from a window of
 * k = ceil(k / ust) input rows, W [ust cout][k cin] (vk_weights.c); ust is 0 for convs. */
typedef struct gconv {
    glin w;
    uint32_t cin, cout, k, st;
    uint32_t ust;
} gconv;

/* The gemm_tile.glsl tiles and the tensor-core tiles (vk_record.c): gemm_tc.glsl's, then
 * gemm_tch.glsl's (float16 weights, glin.f). */
enum { GT_L, GT_R64, GT_R32, GT_N };
enum { TC_L, TC_M, TC_S, TC_WH, TC_TH, TC_TQ, TC_N };

/* A recorded command buffer and the call it was recorded for. */
typedef struct cached {
    VkCommandBuffer cb;
    int n, k;
    int *key; /* slots (step) or slots + counts + caller order (decode) */
    int nkey;
    int q; /* recorded for the second queue (pvk_cmd_begin_q) */
} cached;

/* A flow res block: in_ln [fd], mlp.0 and mlp.2 [fd][fd] (its adaLN linear is in ada_all). */
typedef struct vk_fblock {
    uint32_t ln_w, ln_b;
    glin mlp0, mlp2;
} vk_fblock;

/* Weight offsets in wbuf (floats). */
typedef struct vk_wts {
    gtl *bb, *cd;              /* [layers] backbone, [codec layers] codec transformer */
    glin input_linear;         /* [d][ld] */
    glin out_eos;              /* [1][d] */
    glin cond, input_proj;     /* cond_embed [fd][d], input_proj [fd][ld] */
    glin final_linear;         /* [ld][fd] */
    glin quant;                /* quantizer output_proj [C][ld] */
    glin ada_all;              /* every flow block's ada, then final_ada: [depth 3 fd + 2 fd][fd] */
    uint32_t out_nw, out_nb;   /* out_norm [d] */
    uint32_t bos;              /* [ld] */
    uint32_t embed;            /* [nb + 1][d] */
    uint32_t bb_freq, cd_freq; /* RoPE frequencies [head width / 2] */
    uint32_t emb_std, emb_mean;                 /* [ld] */
    uint32_t up_w;                              /* depthwise upsampling [C][upsample_k] */
    vk_fblock *fb;                              /* [flow_depth] */
    gconv dec_in, up[3], r1[3], r2[3], dec_out; /* SEANet decoder */
} vk_wts;

/* Scratch in the arena (float offsets) for the step, the prompt and the flow head. */
typedef struct vk_arena {
    uint32_t lat; /* [S][ld] each slot's last latent (the next step's input) */
    /* the step's latents [S][KMAX][ld] that decode reads, in two regions by parity: a step
     * call writes steplat_[par] (then par flips) and decode reads steplat_[lpar], the last
     * step's, so the codec of one call can run beside the next call's step (vk_step_decode);
     * steplat is the region of the command buffer being recorded (use_par) */
    uint32_t steplat, steplat_[2];
    uint32_t te;                 /* [TE_MAX][fd] the sampler's time embeddings */
    uint32_t bx, bh, batt;       /* backbone residual, normed, attention out [RB][d] */
    uint32_t bqkv;               /* [RB][3d] */
    uint32_t bff;                /* [RB][ffn] */
    uint32_t ce, sy, xh, hb, ub; /* flow head [S][fd]: cond, silu(cond + t), x, ln, mlp */
    uint32_t mod;                /* [S][depth 3 fd + 2 fd] every block's modulation */
    uint32_t latc;               /* [S][ld] the latent being sampled */
    uint32_t eosc;               /* [S][KMAX] EOS logits of a call */
    uint32_t zc;                 /* [FG][ld] denormalized latents */
    uint32_t qc;                 /* [FG][C] quantizer output */
    uint32_t cx, ch, catt;       /* codec transformer [RC][C] */
    uint32_t cqkv;               /* [RC][3C] */
    uint32_t cff;                /* [RC][codec ffn] */
} vk_arena;

/* The SEANet decoder's scratch and streaming state in the arena (vk_codec.c). Rows per group
 * (a group is one slot's frames in a pass) after the upsampling: T = 16 kc; stage s multiplies
 * them by ratio s. */
typedef struct vk_codec_mem {
    uint32_t w_in; /* dec_in's work buffer [S hist_in + FG 16][C]: carried rows, then new */
    /* h0 [group][f_h0 + T][8 nf] and acc[s] [group][f_acc[s] + T_s][width_s] are fronted:
     * front rows for the carried rows of the convs that read them in place */
    uint32_t h0, acc[3], f_h0, f_acc[3];
    uint32_t rh[3]; /* residual branch [FG T_s][width_s / 2] */
    uint32_t pcmc;  /* [FG][1920] */
    /* conv_copy work buffers (NONE without): each conv's ELU'd window [group][hist + T][cin] */
    uint32_t U[3], R[3], O;
    /* per-slot streaming state [S][rows][width]: upsampling tail, dec_in's and each conv's
     * carried input rows (hist_* of them), the transposed convs' last k - 1 input rows */
    uint32_t st_up, st_in, st_tail[3], st_r[3], st_out;
    int hist_in, hist_r[3], hist_out;
} vk_codec_mem;

/* Word offsets in the ints buffer: positions and slot lists the shaders read. */
typedef struct vk_ints {
    uint32_t bblen, cdlen; /* [S] backbone positions, codec ring positions */
    uint32_t step, dec;    /* [S] the step call's slots; the decode call's (sorted by count) */
    uint32_t orig;         /* [S] a decode slot's place in the caller's order */
    uint32_t plist, ids;   /* [IDS_MAX] each: the prompt passes' slot lists and token ids,
                            * one pass after the other until they are submitted */
} vk_ints;

/* Float offsets in the io buffer (host-visible). */
typedef struct vk_io {
    uint32_t noise; /* [S][k][ld] */
    uint32_t eos;   /* [S][k] */
    uint32_t lat;   /* [S][k][ld] */
    uint32_t pcm;   /* [S][k][1920] */
} vk_io;

/* The KV caches, in one pair of buffers (kbuf[0] / vbuf[0]) while they fit in one binding:
 * every slot's backbone cache [S][layers][cap][rw], then every slot's codec ring
 * [S][codec layers][ccap][C] (the window plus the rows of one pass). Larger (many streams,
 * long caches: 512 streams of the full model need 7.6 GiB a buffer in float32), they are split
 * by layer: pair l < layers holds backbone layer l of every slot [S][cap][rw], the last pair
 * the codec rings; a dispatch binds the pair of the layer it reads (pvk_kv_window). nwin pairs.
 * Offsets and sizes are in 32-bit words. A backbone row is rw = d words of float32, or with h16
 * d / 2 words of float16 pairs (kv.glsl): the default where the weights are bf16 or int8, since
 * the backbone's attention at many streams is bound by these reads (bench/RESULTS.md). A codec
 * ring row is C words, or C / 2 with c16 (float16 pairs, the same rule): the codec's windowed
 * attention reads ~1 GB of float32 rings a layer and frame at 1,024 streams. */
typedef struct vk_kv {
    int cap, ccap;
    int h16;                 /* backbone rows of float16 pairs */
    int c16;                 /* codec ring rows of float16 pairs */
    int nwin;                /* 1: one pair; layers + 1: split by layer */
    size_t bb_slot, cd_slot; /* words per slot: all its backbone layers, its codec ring */
} vk_kv;

/* Words of a backbone cache row of d channels. */
static inline size_t vk_kv_rw(const vk_kv *kv, int d) {
    return kv->h16 ? (size_t)d / 2 : (size_t)d;
}
/* Words of a codec ring row of C channels. */
static inline size_t vk_kv_crw(const vk_kv *kv, int C) {
    return kv->c16 ? (size_t)C / 2 : (size_t)C;
}

/* Where slot s's rows of backbone layer l lie: the buffer pair (*win) and a word offset in it
 * (cap rows of vk_kv_rw words from there, the ring of positions % cap). */
static inline size_t vk_kv_bb(const vk_kv *kv, int d, int s, int l, int *win) {
    if (kv->nwin == 1) {
        *win = 0;
        return (size_t)s * kv->bb_slot + (size_t)l * kv->cap * vk_kv_rw(kv, d);
    }
    *win = l;
    return (size_t)s * kv->cap * vk_kv_rw(kv, d);
}
/* Where slot s's codec ring lies (cd_slot words), as vk_kv_bb; S: the engine's slots. */
static inline size_t vk_kv_cd(const vk_kv *kv, int S, int s, int *win) {
    *win = kv->nwin - 1;
    return (kv->nwin == 1 ? (size_t)S * kv->bb_slot : 0) + (size_t)s * kv->cd_slot;
}

/* stepk: the persistent grid and its programs (vk_stepk.c). */
typedef struct vk_stepk {
    int G;    /* workgroups of the grid, 0: off */
    int pipe; /* PVK_STEPK512 where the device has it, else PVK_STEPK (256 invocations) */
    uint32_t prog[KMAX + 1][2]; /* program of k frames for parity q (arena word offsets) */
    uint32_t prog_n[KMAX + 1];  /* its phase count */
    int prog_ok[KMAX + 1][2];   /* uploaded for the current caches and sampler steps */
    int prog_ph;                /* phases a frame may take (the programs' capacity) */
    uint32_t sync_off;          /* [2] the grid barrier's count and epoch */
} vk_stepk;

/* The paths a new engine chose (choose_paths in engine_vulkan.c). */
typedef struct vk_tune {
    /* gemm_force / tc_force: a tile of gemm_tiles / tc_tiles for every linear it can run
     * (ptts_vk_tuning, tests), -1: gemm_pick / tc_pick decide */
    int gemm_force, tc_force;
    int tc;              /* tensor-core gemms (the device has them, the options ask) */
    uint32_t gemm_units; /* compute units a grid should fill (the SM count, else 8) */
    /* the convs after dec_in ELU their window into work buffers and the gemm reads them,
     * instead of ELU on load: off by default (tests turn it on). It won with the tensor-core
     * tiles of K steps of 64 (one workgroup an SM); with K steps of 32 ELU on load is faster
     * at 256 and 1,024 streams and saves the buffers (1,024 streams: 19706 -> 18035 MiB),
     * and float32 always did better without (bench/RESULTS.md, the H200 codec) */
    int conv_copy;
    int pipe; /* vk_step_decode submits both at once (0: one after the other) */
    /* bytes one cache buffer may hold (vk_kv): the storage buffer range, less for tests */
    size_t kv_range;
    int codec_fg; /* the most slot-frames a codec pass holds: CODEC_FG_MAX, less for tests */
    /* attn_group's attention on tensor cores (attn_tc.comp) where its rows are float16 pairs
     * and its heads 16-channel multiples up to 64: with the tensor-core gemms by default */
    int attn_tc;
    /* attention.comp's one-row attention as attn_dec.comp (flash-decoding's form) where the
     * rows are float16 pairs and the heads 8 to 64 channels: only where a test or bench asks
     * (the hook), until a GPU has measured it against attention.comp (bench/RESULTS.md) */
    int attn_dec;
} vk_tune;

/* Chunks begun and not yet prompted. begin_chunk records its slot's voice copy, codec reset
 * and BOS latent into one open command buffer and keeps its token ids here; the next other
 * operation (vkp_flush) prompts every pending slot together (pend_prompts: each pass takes rows
 * of every slot that has rows left) and submits once. Before, each arriving slot was its own
 * passes and its own submission: 256 arriving streams cost 256 prompts in a row on the GPU
 * while every running stream waited (bench/RESULTS.md). */
typedef struct vk_pend {
    VkCommandBuffer cb;           /* VK_NULL_HANDLE: none open */
    int n;                        /* pending slots */
    int *slot, *off, *cnt, *done; /* [S] each: slot, its ids at tok + off, cnt ids, done so far */
    int *act;                     /* [S] a pass's slots (indices into the above) */
    int *tok, ntok, captok;       /* the pending ids, one slot after the other */
    size_t stage_used;            /* staging bytes the pending voice copies hold */
    uint32_t ids_used, list_used; /* ints words the recorded passes' ids and slot lists hold */
    unsigned char *in;            /* [S] the slot is pending */
} vk_pend;

/* Command buffers recorded once per call shape and replayed. */
typedef struct vk_cache {
    int par, lpar, rpar;         /* the next step's parity, the last step's, the recording's */
    cached step_cb[KMAX + 1][2]; /* by k and parity */
    cached dec_cb[KMAX + 1][2];  /* by k (a chunk ramps k up: 1, 2, 4, 8) and parity */
    cached lat_cb;               /* codec-only mode: host latents into the slots' step rows */
    int *sorted, *orig, *scount; /* [S] a decode call's slots by count, caller order, counts */
    int *dkey;                   /* [3 S] a decode call's key (no allocation per call) */
} vk_cache;

/* Voice caches kept on the device: begin_chunk copies a slot's voice keys and values from here
 * (device to device), so a voice crosses to the GPU once, not with every chunk of every stream
 * (256 arrivals of the fixture voice were 1.5 GB of host copies and a staging buffer that
 * filled every 42 of them, cutting the shared prompt passes short). Keyed by
 * ptts_voice_state.id; the least recently used one is replaced. */
#define VK_VOICES 8
typedef struct vk_voice_cache {
    uint64_t id; /* 0: empty */
    int positions;
    pvk_buffer buf; /* [2][layers][P][d] floats: keys, then values */
    unsigned long used;
    int pend; /* a pending prompt copies from it (vkp_flush clears) */
} vk_voice_cache;

/* A step_decode submitted and not yet waited for (vk_sync in engine_vulkan.c writes its results).
 */
typedef struct vk_fly {
    int on;
    int n, k, nn, kn, dec; /* decode n x k, step nn x kn; dec: a decode was submitted */
    int *counts;           /* [S] a copy of the decode's counts */
    float *pcm, *eos, *latents;
} vk_fly;

typedef struct vk_engine {
    const ptts_weights *w;
    int S;     /* slots */
    int steps; /* sampler steps N */
    int FG;    /* slot-frames per codec pass */
    int RB;    /* rows a backbone pass may hold (RB_ROWS) */
    pvk_ctx c;
    pvk_buffer wbuf, arena, ints, io, stage;
    pvk_buffer kbuf[PVK_KV_SETS], vbuf[PVK_KV_SETS]; /* kv.nwin of them */
    vk_wts wt;
    vk_arena ar;
    vk_codec_mem cm;
    vk_ints ix;
    vk_io ox;
    vk_kv kv;
    vk_stepk sk;
    vk_tune tn;
    vk_cache cc;
    vk_pend pend;
    vk_fly fly;
    vk_voice_cache vc[VK_VOICES];
    unsigned long vc_clock;
    ptts_vk_counts counts;             /* what ran (ptts_vulkan_engine_counts) */
    uint64_t gemm_n[GT_N], tc_n[TC_N]; /* dispatches recorded per tile */
} vk_engine;

/* ---- row addressing (vk_record.c) --------------------------------------------------------- */

/* Rows of a buffer: row r at off + (r / rps) gs + (r % rps) ld (rps COMPACT: off + r ld). */
typedef struct rows {
    uint32_t off, rps, gs, ld;
} rows;
static inline rows RC(uint32_t off, uint32_t ld) { return (rows){off, COMPACT, 0, ld}; }
static inline rows RG(uint32_t off, uint32_t rps, uint32_t gs, uint32_t ld) {
    return (rows){off, rps, gs, ld};
}

enum { ACT_NONE, ACT_GELU, ACT_SILU, ACT_ELU };
enum { OP_COPY, OP_ELU, OP_ADD, OP_SILU_ADDV, OP_AFFINE };
enum { BUF_ARENA, BUF_WEIGHTS, BUF_IO };

/* A row op's side: buffer, rows, slot-indexed through the list; wn: for a weights source, the
 * floats from r.off it may read (a table indexed through the list). */
typedef struct side {
    uint32_t buf;
    rows r;
    uint32_t slot;
    uint32_t wn;
} side;
static inline side SA(rows r) { return (side){BUF_ARENA, r, 0, 0}; }
static inline side SS(uint32_t buf, rows r) { return (side){buf, r, 1, 0}; }
static inline side SB(uint32_t buf, rows r) { return (side){buf, r, 0, 0}; }
static inline side SWT(rows r, uint32_t n) { return (side){BUF_WEIGHTS, r, 1, n}; }

/* The weights a dispatch reads, [lo, hi) in floats, for the weights window (vk.h). */
typedef struct wspan {
    uint32_t lo, hi;
} wspan;
#define WSPAN0 ((wspan){0xffffffffu, 0})
void vkr_span_add(wspan *s, uint32_t off, size_t n);
uint32_t vkr_span_base(vk_engine *g, const wspan *s);

/* A transformer pass: layers of L over the rows at x (h, qkv, att, ff scratch), slots
 * through the ints list `list`, positions at `len`, caches at kvbase (kvslot words a slot,
 * layer l at l * kvlstride in cache pair win0 + l * winstep). */
typedef struct tspec {
    const gtl *L;
    int layers, d, heads, ffn, window;
    int kvh; /* cache rows of float16 pairs (vk_kv.h16) */
    uint32_t list, len, kvbase, cap, freq;
    size_t kvslot, kvlstride;
    int win0, winstep;
    uint32_t x, h, qkv, att, ff;
} tspec;

/* ---- vk_record.c -------------------------------------------------------------------------- */

/* Y (=|+=) gate * alpha * act(xact(X) W^T + b) over N rows; gate rows G in the arena (gbuf 0)
 * or a weight vector at goff (gbuf 1); xact ACT_ELU: ELU on every X value as it is loaded. */
void vkr_linear_x(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X, rows Y,
                  int act, int accum, float alpha, uint32_t goff, rows G, uint32_t gbuf, int xact);
void vkr_linear(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X, rows Y,
                int act, int accum, float alpha, uint32_t goff, rows G, uint32_t gbuf);
void vkr_lin(vk_engine *g, VkCommandBuffer cb, const glin *L, uint32_t N, rows X, rows Y, int act);
/* nrows x width elements: d = op(s) (v1 / v2: OP_SILU_ADDV's vector, OP_AFFINE's scale and
 * shift, weight offsets); list: the ints list slot-indexed sides read their slot from. */
void vkr_rowop(vk_engine *g, VkCommandBuffer cb, uint32_t nrows, uint32_t width, int op,
               uint32_t list, side s, side d, uint32_t v1, uint32_t v2);
void vkr_transformer(vk_engine *g, VkCommandBuffer cb, const tspec *t, uint32_t n, uint32_t rps);
tspec vkr_bb_spec(vk_engine *g, uint32_t list);
/* The flow head and its sampler on n rows: h [n][d] (compact arena rows) and the noise in x
 * [n][ld] -> the latent in x. */
void vkr_flow(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t h, uint32_t x);
/* The multi-dispatch step command buffer: k frames for the n slots of the step list. */
void vkr_step(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t k);
/* Flow head evaluations per latent, whether each adds to x (1/N) or replaces it. */
int vkr_flow_evals(const vk_engine *g);
int vkr_flow_accum(const vk_engine *g);
float vkr_flow_alpha(const vk_engine *g);
/* The tile of that name (tc: tensor-core), -1 for no name, -2 for an unknown name. */
int vkr_tile_named(int tc, const char *name);

/* ---- vk_stepk.c --------------------------------------------------------------------------- */

/* Can a step of n rows run as stepk? */
int vks_ok(const vk_engine *g, int n);
/* The program of k frames into P (phase words): its phase count. */
uint32_t vks_program(const vk_engine *g, uint32_t k, uint32_t *P);
/* Record the step as stepk (the program for k uploaded to sk.prog[k][cc.rpar]). */
void vks_record(vk_engine *g, VkCommandBuffer cb, uint32_t n, uint32_t k);

/* ---- vk_codec.c --------------------------------------------------------------------------- */

/* The codec on frames f0 .. f0 + kc - 1 of nf slots of the decode list from its s0-th -> io
 * pcm. */
void vkc_pass(vk_engine *g, VkCommandBuffer cb, uint32_t s0, uint32_t nf, uint32_t f0, uint32_t kc,
              uint32_t k);
/* Fresh codec state for a slot (the ring's position is the caller's). */
void vkc_reset(vk_engine *g, VkCommandBuffer cb, int slot);

/* ---- vk_prompt.c -------------------------------------------------------------------------- */

/* A chunk's start in slot (validated, no step_decode in flight, caches large enough for it):
 * the cache := the voice state, a fresh codec state, the latent := BOS, recorded into the
 * pending prompts; the ids are prompted with every other slot begun before the next operation
 * (vkp_flush). */
int vkp_record(vk_engine *g, int slot, const ptts_voice_state *v, const int *ids, int n_ids,
               ptts_error *e);
/* Prompt and submit the pending chunks (vk_pend); 0 when none. Every operation but
 * begin_chunk calls it first (after waiting for a step_decode in flight): the KV caches, the
 * staging and ints buffers and the recording state are then the operation's own. */
int vkp_flush(vk_engine *g, ptts_error *e);

/* ---- vk_weights.c ------------------------------------------------------------------------- */

/* The model's weights into wbuf (wt filled). */
int vkw_upload_weights(vk_engine *g, ptts_error *e);
/* host bytes -> device buffer at byte offset (through the staging buffer; waits). */
int vkw_upload(vk_engine *g, const pvk_buffer *dst, size_t dst_off, const void *src, size_t bytes,
               ptts_error *e);
/* (The staging buffer holds the pending prompts' voices until vk_prompt.c's vkp_flush: a
 * caller of these has none pending.) */
int vkw_stage_reserve(vk_engine *g, size_t bytes, ptts_error *e);
#endif
