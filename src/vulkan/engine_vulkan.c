/*
 * engine_vulkan.c - the generation step on a Vulkan device behind engine.h (the parts of the
 * engine are listed in vk_engine.h; begin_chunk is vk_prompt.c's). This file holds the
 * engine's resources and operations:
 *  - the arena layout (layout_arena: every scratch region, the SEANet's fronted buffers and
 *    per-slot streaming state, the stepk programs), the ints and io buffers, and the KV caches
 *    (kv_alloc: [slot][layer][cap][d] for the backbone, float16 in the reduced-precision modes,
 *    grown at chunk start when a chunk needs more positions; the codec's ring
 *    [slot][layer][window + a pass's rows][C] after them;
 *    split into a buffer pair per layer where that is more than one binding holds, vk_kv);
 *  - create (the paths chosen from the device, the options and the test hooks) and destroy;
 *  - step(k): one command buffer per (slots, k, parity), recorded once and replayed, runs k
 *    frames for every listed slot; the latent stays on the GPU from frame to frame, the noise
 *    [n][k][ld] is uploaded up front, only the EOS logits [n][k] and latents come back;
 *  - decode: one command buffer per (slot order, counts, k, parity) runs the codec over the
 *    emitted frames of every slot (sorted by count so frame f runs on a prefix of the list;
 *    several frames of a slot in one pass while a pass holds at most FG slot-frames) and writes
 *    PCM [n][k][1920] to host memory; step_decode submits both at once and returns, sync
 *    waits for them;
 *  - the codec-only entry points of the hybrid engine and the test queries.
 * Positions live in the ints buffer and the shaders advance them, so recorded command buffers
 * stay valid from call to call.
 */
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "vk_engine.h"

/* ---- buffers ------------------------------------------------------------------------------ */

static void drop_cached(vk_engine *g, cached *c) {
    pvk_cmd_free_q(&g->c, c->cb, c->q);
    free(c->key);
    memset(c, 0, sizeof *c);
}

static void drop_all_cached(vk_engine *g) {
    for (int i = 0; i <= KMAX; i++)
        for (int q = 0; q < 2; q++) {
            drop_cached(g, &g->cc.step_cb[i][q]);
            drop_cached(g, &g->cc.dec_cb[i][q]);
            g->sk.prog_ok[i][q] = 0; /* programs hold cache sizes and LSD steps */
        }
    drop_cached(g, &g->cc.lat_cb);
}

static void kv_free(vk_engine *g, pvk_buffer *k, pvk_buffer *v, int n) {
    for (int i = 0; i < n; i++) {
        pvk_buffer_destroy(&g->c, &k[i]);
        pvk_buffer_destroy(&g->c, &v[i]);
    }
}

/* (Re)allocate the K and V caches for `cap` backbone positions per slot, keeping contents: in
 * one buffer pair while that fits in a binding (the storage buffer range, or the test hook's
 * ptts_vk_tuning.kv_range), else a pair per backbone layer and one for the codec rings. */
static int kv_alloc(vk_engine *g, int cap, ptts_error *e) {
    const ptts_arch *a = &g->w->arch;
    const size_t rw = vk_kv_rw(&g->kv, a->d), S = (size_t)g->S; /* words a backbone row */
    const size_t range = g->tn.kv_range;
    vk_kv nkv = g->kv;
    nkv.cap = cap;
    nkv.bb_slot = (size_t)a->layers * cap * rw;
    const size_t cd_total = S * g->kv.cd_slot, layer = S * cap * rw;
    size_t sizes[PVK_KV_SETS];
    if ((S * nkv.bb_slot + cd_total) * 4 <= range) {
        nkv.nwin = 1;
        sizes[0] = (S * nkv.bb_slot + cd_total) * 4;
    } else {
        nkv.nwin = a->layers + 1;
        if (nkv.nwin > PVK_KV_SETS || layer * 4 > range || cd_total * 4 > range)
            return ptts_fail(e, PTTS_E_NOMEM,
                             "Vulkan: the KV caches of %d streams (%d positions) need %.1f MiB a "
                             "layer, over the device's storage buffer range (%.1f MiB)",
                             g->S, cap, (layer > cd_total ? layer : cd_total) * 4 / 1048576.0,
                             range / 1048576.0);
        for (int i = 0; i < a->layers; i++)
            sizes[i] = layer * 4;
        sizes[a->layers] = cd_total * 4;
    }
    pvk_buffer nk[PVK_KV_SETS] = {0}, nv[PVK_KV_SETS] = {0};
    int rc = 0;
    for (int i = 0; !rc && i < nkv.nwin; i++)
        if (!(rc = pvk_buffer_create(&g->c, &nk[i], sizes[i], 0, e)))
            rc = pvk_buffer_create(&g->c, &nv[i], sizes[i], 0, e);
    if (!rc && g->kv.nwin) { /* the old contents: every slot's layers, then the codec rings */
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) rc = PTTS_E_BACKEND;
        const size_t bytes = (size_t)g->kv.cap * rw * 4;
        for (int s = 0; !rc && s < g->S; s++)
            for (int l = 0; l < a->layers; l++) {
                int wo, wn;
                size_t so = vk_kv_bb(&g->kv, a->d, s, l, &wo) * 4;
                size_t dof = vk_kv_bb(&nkv, a->d, s, l, &wn) * 4;
                pvk_copy(cb, &g->kbuf[wo], so, &nk[wn], dof, bytes);
                pvk_copy(cb, &g->vbuf[wo], so, &nv[wn], dof, bytes);
            }
        if (!rc && cd_total) {
            int wo, wn;
            size_t so = vk_kv_cd(&g->kv, g->S, 0, &wo) * 4, dof = vk_kv_cd(&nkv, g->S, 0, &wn) * 4;
            pvk_copy(cb, &g->kbuf[wo], so, &nk[wn], dof, cd_total * 4);
            pvk_copy(cb, &g->vbuf[wo], so, &nv[wn], dof, cd_total * 4);
        }
        if (!rc) rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
        if (cb) pvk_cmd_free(&g->c, cb);
    }
    if (rc) {
        kv_free(g, nk, nv, nkv.nwin);
        return rc;
    }
    kv_free(g, g->kbuf, g->vbuf, g->kv.nwin);
    memcpy(g->kbuf, nk, sizeof nk);
    memcpy(g->vbuf, nv, sizeof nv);
    g->kv = nkv;
    pvk_bind_kv(&g->c, nkv.nwin, g->kbuf, g->vbuf);
    drop_all_cached(g);
    return 0;
}

static void vk_destroy(void *p) {
    vk_engine *g = p;
    if (!g) return;
    if (g->c.dev) {
        ptts_error e = {0};
        pvk_wait_pair(&g->c, &e); /* a step_decode in flight (its results are not wanted) */
        if (g->pend.cb) pvk_cmd_free(&g->c, g->pend.cb); /* recorded, never submitted */
        drop_all_cached(g);
        pvk_buffer *bufs[] = {&g->wbuf, &g->arena, &g->ints, &g->io, &g->stage};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            pvk_buffer_destroy(&g->c, bufs[i]);
        kv_free(g, g->kbuf, g->vbuf, g->kv.nwin);
        for (int i = 0; i < VK_VOICES; i++)
            pvk_buffer_destroy(&g->c, &g->vc[i].buf);
        pvk_destroy(&g->c);
    }
    free(g->wt.bb);
    free(g->wt.cd);
    free(g->wt.fb);
    free(g->cc.sorted);
    free(g->cc.orig);
    free(g->cc.scount);
    free(g->cc.dkey);
    free(g->fly.counts);
    free(g->pend.in);
    free(g->pend.slot);
    free(g->pend.tok);
    free(g);
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
    /* FG: slot-frames one codec pass may hold (decode_prep keeps nf * kc <= FG) */
    const size_t FG = PTTS_MIN(PTTS_MIN(S * KMAX, PTTS_MAX(S, CODEC_FG)), (size_t)g->tn.codec_fg);
    const size_t RB1 = RB_ROWS(S), RC2 = FG * us;
    g->FG = (int)FG;
    g->RB = (int)RB1;
    size_t top = 0;
    g->ar.lat = A(&top, S * ld);
    g->ar.steplat_[0] = A(&top, S * KMAX * ld);
    g->ar.steplat_[1] = A(&top, S * KMAX * ld);
    g->ar.steplat = g->ar.steplat_[0];
    g->ar.te = A(&top, TE_MAX * fd);
    g->ar.bx = A(&top, RB1 * d);
    g->ar.bh = A(&top, RB1 * d);
    g->ar.bqkv = A(&top, RB1 * 3 * d);
    g->ar.batt = A(&top, RB1 * d);
    g->ar.bff = A(&top, RB1 * (size_t)a->ffn);
    g->ar.ce = A(&top, S * fd);
    g->ar.sy = A(&top, S * fd);
    g->ar.xh = A(&top, S * fd);
    g->ar.hb = A(&top, S * fd);
    g->ar.ub = A(&top, S * fd);
    g->ar.mod = A(&top, S * ((size_t)a->flow_depth * 3 + 2) * fd);
    g->ar.latc = A(&top, S * ld);
    g->ar.eosc = A(&top, S * KMAX);
    g->ar.zc = A(&top, FG * ld);
    g->ar.qc = A(&top, FG * C);
    g->ar.cx = A(&top, RC2 * C);
    g->ar.ch = A(&top, RC2 * C);
    g->ar.cqkv = A(&top, RC2 * 3 * C);
    g->ar.catt = A(&top, RC2 * C);
    g->ar.cff = A(&top, RC2 * (size_t)cw->dec_tr.ffn);
    g->cm.hist_in = cw->dec_in.k - cw->dec_in.stride;
    /* a conv's work buffer: per group (slot) its carried rows, then the pass's new rows */
    g->cm.w_in = A(&top, (S * g->cm.hist_in + FG * us) * C);
    /* h0 and acc[s] fronted (rec_wconv): per group (slot) front rows for the carried rows of
     * the convs that read them (up[0]; r1[s] then up[s + 1] or dec_out), then the pass's rows */
    g->cm.hist_out = cw->dec_out.k - cw->dec_out.stride;
    for (int s = 0; s < 3; s++)
        g->cm.hist_r[s] = cw->dec_res[s].c1.k - cw->dec_res[s].c1.stride;
    g->cm.f_h0 = g->wt.up[0].k - 1;
    g->cm.h0 = A(&top, (S * g->cm.f_h0 + FG * us) * (size_t)cw->dec_in.cout);
    size_t rows = us, width = (size_t)cw->dec_in.cout;
    /* the conv_copy work buffers: per group (slot) the window, hist + the pass's rows */
#define WORK(hist, n, w) (g->tn.conv_copy ? A(&top, (S * (size_t)(hist) + FG * (n)) * (w)) : NONE)
    for (int s = 0; s < 3; s++) {
        const ptts_convtr *ct = &cw->dec_up[s];
        g->cm.U[s] = WORK(g->wt.up[s].k - 1, rows, width);
        rows *= (size_t)ct->stride;
        width = (size_t)ct->cout;
        const uint32_t next = s < 2 ? g->wt.up[s + 1].k - 1 : (uint32_t)g->cm.hist_out;
        g->cm.f_acc[s] = (uint32_t)g->cm.hist_r[s] > next ? (uint32_t)g->cm.hist_r[s] : next;
        g->cm.acc[s] = A(&top, (S * g->cm.f_acc[s] + FG * rows) * width);
        g->cm.R[s] = WORK(g->cm.hist_r[s], rows, width);
        g->cm.rh[s] = A(&top, FG * rows * (size_t)cw->dec_res[s].c1.cout);
    }
    g->cm.O = WORK(g->cm.hist_out, rows, width);
#undef WORK
    g->cm.pcmc = A(&top, FG * rows);
    /* per-slot codec state, one contiguous block per slot region */
    g->cm.st_up = A(&top, S * (size_t)(cw->upsample_k - cw->upsample_stride) * C);
    g->cm.st_in = A(&top, S * g->cm.hist_in * C);
    width = (size_t)cw->dec_in.cout;
    for (int s = 0; s < 3; s++) {
        const ptts_convtr *ct = &cw->dec_up[s];
        g->cm.st_tail[s] = A(&top, S * (size_t)(g->wt.up[s].k - 1) * ct->cin);
        g->cm.st_r[s] = A(&top, S * g->cm.hist_r[s] * (size_t)ct->cout);
        width = (size_t)ct->cout;
    }
    g->cm.st_out = A(&top, S * g->cm.hist_out * width);
    /* stepk programs: one region per k (a cached step command buffer per k replays its own) */
    g->sk.prog_ph = 3 + 5 * a->layers + STEPK_LSD * (3 + 2 * a->flow_depth);
    for (int k = 1; k <= KMAX; k++)
        for (int q = 0; q < 2; q++)
            g->sk.prog[k][q] = A(&top, ((size_t)k * g->sk.prog_ph + 1) * PH_WORDS);
    g->sk.sync_off = A(&top, 2); /* stepk's grid barrier: count, epoch */
    if (top > 0xffffffffu / 4)
        return ptts_fail(e, PTTS_E_NOMEM, "Vulkan: %d streams need too much scratch", g->S);
    int rc = pvk_buffer_create(&g->c, &g->arena, top * 4, 0, e);
    if (rc) return rc;
    /* ints and io */
    g->ix.bblen = 0;
    g->ix.cdlen = (uint32_t)S;
    g->ix.step = (uint32_t)(2 * S);
    g->ix.dec = (uint32_t)(3 * S);
    g->ix.orig = (uint32_t)(4 * S);
    g->ix.plist = (uint32_t)(5 * S);
    g->ix.ids = (uint32_t)(5 * S + IDS_MAX);
    if ((rc = pvk_buffer_create(&g->c, &g->ints, (5 * S + 2 * IDS_MAX) * 4, 1, e))) return rc;
    size_t io = 0;
    g->ox.noise = A(&io, S * KMAX * ld);
    g->ox.eos = A(&io, S * KMAX);
    g->ox.lat = A(&io, S * KMAX * ld);
    g->ox.pcm = A(&io, S * KMAX * (size_t)a->frame_samples);
    if ((rc = pvk_buffer_create(&g->c, &g->io, io * 4, 1, e))) return rc;
    /* the ring holds the window plus the rows of one pass (up to KMAX frames) */
    g->kv.ccap = cw->dec_tr.window + KMAX * (int)us - 1;
    g->kv.cd_slot = (size_t)cw->dec_tr.layers * g->kv.ccap * vk_kv_crw(&g->kv, C);
    pvk_bind(&g->c, PVK_B_WEIGHTS, &g->wbuf);
    pvk_bind(&g->c, PVK_B_ARENA, &g->arena);
    pvk_bind(&g->c, PVK_B_INTS, &g->ints);
    pvk_bind(&g->c, PVK_B_IO, &g->io);
    return kv_alloc(g, 256, e);
}

/* ---- engine ops --------------------------------------------------------------------------- */

static int vk_set_sampler_steps(void *p, int steps, ptts_error *e);

/* The kernel and path choices of a new engine: the device's capabilities, the model's options
 * and the test hooks (ptts_vk_tuning, every field zero for users). */
/* Cache rows of d channels in h heads can hold float16 pairs: 8-channel multiples, a head's
 * keys in whole 16-byte loads (kv.glsl). */
static int rows16(int d, int h) { return d % 8 == 0 && (d / h) % 8 == 0; }

static int choose_paths(vk_engine *g, const ptts_engine_args *a, ptts_error *e) {
    static const ptts_vk_tuning none = {0};
    const ptts_vk_tuning *t = a->vk ? a->vk : &none;
    g->tn.gemm_units = g->c.sm_count > 0 ? (uint32_t)g->c.sm_count : 8;
    g->tn.gemm_force = vkr_tile_named(0, t->gemm_force);
    g->tn.tc_force = vkr_tile_named(1, t->tc_force);
    if (g->tn.gemm_force < -1 || g->tn.tc_force < -1)
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan: no %s gemm tile '%s'",
                         g->tn.gemm_force < -1 ? "register-tiled" : "tensor-core",
                         g->tn.gemm_force < -1 ? t->gemm_force : t->tc_force);
    /* tensor cores by default where the model runs in reduced precision (bf16 / int8 backbone
     * weights: the CPU path rounds the codec's operands to bf16 there too). The mode, not the
     * matrices' storage: in float32 a released (BF16) file's matrices are stored as bf16 too,
     * and float32 means the reference's arithmetic (float32 operands and caches). */
    const int half = g->w->mode != PTTS_WMODE_F32;
    g->tn.tc = g->c.coop && (a->tensor_cores ? a->tensor_cores > 0 : half);
    g->tn.conv_copy = t->conv_copy > 0; /* ELU on load unless a test asks (vk_engine.h) */
    /* the caches (backbone and codec rings) in float16 where the weights are reduced
     * precision (vk_kv), or as a test asks, where their rows allow (rows16) */
    const int kv16 = t->kv16 ? t->kv16 > 0 : half;
    const ptts_transformer *ct = &g->w->codec.dec_tr;
    g->kv.h16 = kv16 && rows16(g->w->arch.d, g->w->arch.heads);
    g->kv.c16 = kv16 && rows16(ct->d, ct->heads);
    g->tn.attn_tc = g->c.pipe[PVK_ATTN_TC] && (t->attn_tc ? t->attn_tc > 0 : g->tn.tc);
    g->tn.attn_dec = g->c.pipe[PVK_ATTN_DEC] && t->attn_dec > 0; /* vk_tune says why */
    /* stepk's grid must be resident at once: one workgroup per SM where the device says how
     * many it has (NVIDIA), less STEPK_SPARE for the codec beside it on a second queue;
     * elsewhere off unless the hook asks for N workgroups (the tests run 1 on lavapipe) */
    int spare = g->c.pool2 && g->c.sm_count >= 2 * STEPK_SPARE ? STEPK_SPARE : 0;
    g->sk.G = t->stepk > 0 ? t->stepk : t->stepk < 0 ? 0 : g->c.sm_count - spare;
    if (g->sk.G < 0) g->sk.G = 0;
    /* 512 invocations where the device has the shared memory (faster on the H200) */
    g->sk.pipe = g->c.pipe[PVK_STEPK512] ? PVK_STEPK512 : PVK_STEPK;
    g->tn.pipe = t->pipe >= 0;
    g->tn.kv_range = g->c.props.limits.maxStorageBufferRange & ~(size_t)255;
    if (t->kv_range > 0 && t->kv_range < g->tn.kv_range)
        g->tn.kv_range = t->kv_range & ~(size_t)255;
    g->tn.codec_fg = t->codec_fg > 0 ? PTTS_MIN(t->codec_fg, CODEC_FG_MAX) : CODEC_FG_MAX;
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
    if (slots > IDS_MAX) /* a prompt pass lists every pending slot (pend_prompts) */
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan: at most %d streams, not %d", IDS_MAX, slots);
    const ptts_weights *w = args->w;
    const ptts_codec_weights *cw = &w->codec;
    if (w->arch.d / w->arch.heads > 256 || w->arch.flow_depth > 64 ||
        cw->dec_tr.d / cw->dec_tr.heads > 256 ||
        cw->upsample_k - cw->upsample_stride > cw->upsample_stride || cw->dec_tr.window <= 0)
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "Vulkan: this architecture is not supported "
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
    g->cc.sorted = calloc((size_t)slots, sizeof(int));
    g->cc.orig = calloc((size_t)slots, sizeof(int));
    g->cc.scount = calloc((size_t)slots, sizeof(int));
    g->cc.dkey = calloc((size_t)3 * slots, sizeof(int));
    g->fly.counts = calloc((size_t)slots, sizeof(int));
    g->pend.in = calloc((size_t)slots, 1);
    g->pend.slot = calloc((size_t)5 * slots, sizeof(int));
    if (g->pend.slot) {
        g->pend.off = g->pend.slot + slots;
        g->pend.cnt = g->pend.off + slots;
        g->pend.done = g->pend.cnt + slots;
        g->pend.act = g->pend.done + slots;
    }
    int rc = (!g->cc.sorted || !g->cc.orig || !g->cc.scount || !g->cc.dkey || !g->pend.in ||
              !g->pend.slot || !g->fly.counts)
                 ? ptts_fail(e, PTTS_E_NOMEM, "out of memory")
                 : 0;
    if (!rc) rc = pvk_create(&g->c, args->device, e);
    if (!rc) rc = choose_paths(g, args, e);
    /* with tensor cores the convs now ELU their inputs on load (they copied ELU'd windows
     * before f2ac768): those variants now, not inside a call's recording. On the H200 a fresh
     * server's first wave of 1,024 clients once queued ~1.9 s, the next server's not; a driver
     * compile of lazily made variants on an empty shader cache is the suspect, not measured
     * (bench/RESULTS.md). float32 keeps making its variants on first use, as it always has. */
    if (!rc && g->tn.tc && !g->tn.conv_copy) rc = pvk_make_xelu(&g->c, e);
    if (!rc) rc = vkw_upload_weights(g, e);
    if (!rc) rc = layout_arena(g, e);
    if (!rc) rc = vk_set_sampler_steps(g, 1, e);
    if (rc) {
        vk_destroy(g);
        return rc;
    }
    *out = g;
    return 0;
}

static int vk_sync(void *p, ptts_error *e);

/* A step_decode in flight waited for, then the pending prompts run (vk_prompt.c). */
static int flush(vk_engine *g, ptts_error *e) {
    int rc = vk_sync(g, e);
    return rc ? rc : vkp_flush(g, e);
}

/* The caches for `cap` positions: the chunks recorded and pending first (they are recorded
 * against the old ones), and every recorded command buffer dropped (kv_alloc). */
static int kv_grow(vk_engine *g, int cap, ptts_error *e) {
    int rc = vkp_flush(g, e);
    if (!rc) rc = kv_alloc(g, cap, e);
    if (!rc) g->counts.kv_grows++;
    return rc;
}

/* Checked, the caches grown when the chunk needs more positions, then recorded and left
 * pending (vkp_record). */
static int vk_begin_chunk(void *p, int slot, const ptts_voice_state *v, const int *ids, int n_ids,
                          int max_steps, ptts_error *e) {
    vk_engine *g = p;
    const ptts_arch *a = &g->w->arch;
    if (slot < 0 || slot >= g->S) return ptts_fail(e, PTTS_E_INVALID, "no slot %d", slot);
    int rc = vk_sync(g, e);
    if (rc) return rc;
    if (v->layers != a->layers || v->heads * v->dh != a->d || v->heads != a->heads)
        return ptts_fail(e, PTTS_E_MODEL,
                         "voice state has %d layers x %d heads x %d, the model needs %d x %d x %d",
                         v->layers, v->heads, v->dh, a->layers, a->heads, a->d / a->heads);
    if (n_ids < 0) return ptts_fail(e, PTTS_E_INVALID, "%d token ids", n_ids);
    for (int i = 0; i < n_ids; i++)
        if (ids[i] < 0 || ids[i] > a->nb)
            return ptts_fail(e, PTTS_E_INVALID, "token id %d out of range", ids[i]);
    const int need = v->positions + n_ids + max_steps + 1;
    if (need > g->kv.cap &&
        (rc = kv_grow(g, need > g->kv.cap * 3 / 2 ? need : g->kv.cap * 3 / 2, e)))
        return rc;
    return vkp_record(g, slot, v, ids, n_ids, e);
}

static int vk_reserve(void *p, int positions, ptts_error *e) {
    vk_engine *g = p;
    if (positions < 1 || positions > (1 << 20))
        return ptts_fail(e, PTTS_E_INVALID, "cannot reserve %d cache positions", positions);
    int rc = vk_sync(g, e);
    return rc || positions <= g->kv.cap ? rc : kv_grow(g, positions, e);
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
    if (!rc) rc = flush(g, e);
    if (rc) {
        free(te);
        return rc;
    }
    rc = vkw_upload(g, &g->arena, (size_t)g->ar.te * 4, te, (size_t)steps * fd * sizeof(float), e);
    free(te);
    if (rc) return rc;
    g->steps = steps;
    drop_all_cached(g);
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
    g->cc.rpar = par;
    g->ar.steplat = g->ar.steplat_[par];
}

/* The step call's inputs written and its command buffer (cached per k and parity, recorded
 * on first use) in *out; the call writes steplat_[g->cc.par]. */
static int step_prep(vk_engine *g, const int *slots, int n, int k, const float *noise,
                     VkCommandBuffer *out, ptts_error *e) {
    const ptts_arch *a = &g->w->arch;
    if (k < 1 || k > KMAX || n < 1 || n > g->S)
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan step: %d slots x %d steps", n, k);
    const int par = g->cc.par;
    uint32_t *iv = g->ints.map;
    for (int i = 0; i < n; i++)
        iv[g->ix.step + i] = (uint32_t)slots[i];
    memcpy((float *)g->io.map + g->ox.noise, noise, (size_t)n * k * a->ld * sizeof(float));
    cached *c = &g->cc.step_cb[k][par];
    if (!same_key(c, n, k, slots, n)) {
        drop_cached(g, c);
        use_par(g, par);
        if (vks_ok(g, n) && !g->sk.prog_ok[k][par]) { /* before recording: an upload submits */
            size_t words = ((size_t)k * g->sk.prog_ph + 1) * PH_WORDS;
            uint32_t *P = calloc(words, 4);
            if (!P) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
            g->sk.prog_n[k] = vks_program(g, (uint32_t)k, P);
            int rc = vkw_upload(g, &g->arena, (size_t)g->sk.prog[k][par] * 4, P,
                                (size_t)g->sk.prog_n[k] * PH_WORDS * 4, e);
            free(P);
            if (rc) return rc;
            g->sk.prog_ok[k][par] = 1;
        }
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) return PTTS_E_BACKEND;
        if (vks_ok(g, n)) /* the one-dispatch step where it runs, else the multi-dispatch one */
            vks_record(g, cb, (uint32_t)n, (uint32_t)k);
        else
            vkr_step(g, cb, (uint32_t)n, (uint32_t)k);
        int rc = pvk_cmd_end(&g->c, cb, e);
        if (rc || set_key(c, n, k, slots, n)) {
            pvk_cmd_free(&g->c, cb);
            return rc ? rc : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        }
        c->cb = cb;
    }
    if (vks_ok(g, n)) g->counts.stepk_frames += (unsigned long long)k;
    *out = c->cb;
    return 0;
}

/* After a step call ran: its outputs to the caller, the parities moved on. */
static void step_done(vk_engine *g, int n, int k, float *eos, float *latents) {
    const ptts_arch *a = &g->w->arch;
    const float *io = g->io.map;
    memcpy(eos, io + g->ox.eos, (size_t)n * k * sizeof(float));
    memcpy(latents, io + g->ox.lat, (size_t)n * k * a->ld * sizeof(float));
    g->cc.lpar = g->cc.par;
    g->cc.par ^= 1;
}

static int vk_step(void *p, const int *slots, int n, int k, const float *noise, float *eos,
                   float *latents, ptts_error *e) {
    vk_engine *g = p;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    int rc = flush(g, e);
    if (!rc) rc = step_prep(g, slots, n, k, noise, &cb, e);
    if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
    if (rc) return rc;
    step_done(g, n, k, eos, latents);
    return 0;
}

/* The queue decode command buffers are for: the second where it is of another family (a
 * command buffer is for one family), else the first. */
static int dq(const vk_engine *g) { return g->c.pool2 != VK_NULL_HANDLE; }

/* The decode call's lists written and its command buffer (cached per k, slot order, counts and
 * parity) in *out, NULL when no slot has a frame; reads steplat_[g->cc.lpar]. */
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
                g->cc.sorted[m] = slots[i];
                g->cc.orig[m] = i;
                g->cc.scount[m] = c;
                m++;
            }
    if (m == 0) return 0;
    kmax = g->cc.scount[0];
    uint32_t *iv = g->ints.map;
    for (int i = 0; i < m; i++) {
        iv[g->ix.dec + i] = (uint32_t)g->cc.sorted[i];
        iv[g->ix.orig + i] = (uint32_t)g->cc.orig[i];
    }
    int *key = g->cc.dkey; /* no allocation per call */
    memcpy(key, g->cc.sorted, (size_t)m * sizeof(int));
    memcpy(key + m, g->cc.scount, (size_t)m * sizeof(int));
    memcpy(key + 2 * m, g->cc.orig, (size_t)m * sizeof(int));
    cached *c = &g->cc.dec_cb[k][g->cc.lpar];
    int rc = 0;
    if (!same_key(c, m, k, key, 3 * m)) {
        drop_cached(g, c);
        use_par(g, g->cc.lpar);
        VkCommandBuffer cb = pvk_cmd_begin_q(&g->c, dq(g), e);
        if (!cb) rc = PTTS_E_BACKEND;
        /* passes over frames f .. f + kc - 1 of the nf slots that have them (a prefix: sorted
         * by count), kc as large as every one of them has frames and nf * kc <= FG allows;
         * more than FG slots: one frame of FG slots a pass */
        for (int f = 0; !rc && f < kmax;) {
            int nf = 0;
            while (nf < m && g->cc.scount[nf] > f)
                nf++;
            int kc = g->cc.scount[nf - 1] - f, cap = g->FG / nf;
            if (kc > cap) kc = cap > 0 ? cap : 1;
            for (int s0 = 0; s0 < nf; s0 += g->FG) {
                g->counts.codec_groups += s0 > 0;
                vkc_pass(g, cb, (uint32_t)s0, (uint32_t)PTTS_MIN(g->FG, nf - s0), (uint32_t)f,
                         (uint32_t)kc, (uint32_t)k);
            }
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
    const float *io = (const float *)g->io.map + g->ox.pcm;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            memcpy(pcm + (size_t)i * k * fs, io + (size_t)i * k * fs,
                   (size_t)counts[i] * fs * sizeof(float));
}

static int vk_decode(void *p, const int *slots, int n, int k, const int *counts, float *pcm,
                     ptts_error *e) {
    vk_engine *g = p;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    int rc = flush(g, e);
    if (!rc) rc = decode_prep(g, slots, n, k, counts, &cb, e);
    if (rc || !cb) return rc;
    if ((rc = pvk_submit_wait_q(&g->c, cb, dq(g), e))) return rc;
    decode_done(g, n, k, counts, pcm);
    return 0;
}

/* decode(slots, k, counts) of the last step call and the next step call (next[nn], a
 * subsequence of slots, kn frames) in one submission, on two queues where the device has them: the
 * codec's buffers, the step's and the latents they pass (by parity) are disjoint. Returns once
 * submitted; vk_sync (the caller's, or the next operation's) waits and writes the results. The
 * inputs it reads from the io and ints buffers are not written again before that: every other
 * operation syncs first. ptts_vk_tuning.pipe < 0: one after the other, waited for (a test
 * hook: the same results bit for bit), the results still written by vk_sync as engine.h says:
 * the loop hands out the last call's frames after this returns. */
static int vk_step_decode(void *p, const int *slots, int n, int k, const int *counts, float *pcm,
                          const int *next, int nn, int kn, const float *noise, float *eos,
                          float *latents, ptts_error *e) {
    vk_engine *g = p;
    VkCommandBuffer dcb = VK_NULL_HANDLE, scb = VK_NULL_HANDLE;
    int rc = flush(g, e);
    if (!rc) rc = decode_prep(g, slots, n, k, counts, &dcb, e);
    if (!rc && !g->tn.pipe && dcb) rc = pvk_submit_wait_q(&g->c, dcb, dq(g), e);
    if (!rc) rc = step_prep(g, next, nn, kn, noise, &scb, e);
    if (!rc) rc = g->tn.pipe ? pvk_submit_pair(&g->c, scb, dcb, e) : pvk_submit_wait(&g->c, scb, e);
    if (rc) return rc;
    vk_fly *f = &g->fly;
    *f = (vk_fly){1, n, k, nn, kn, dcb != VK_NULL_HANDLE, f->counts, pcm, eos, latents};
    memcpy(f->counts, counts, (size_t)n * sizeof(int));
    return 0;
}

static int vk_sync(void *p, ptts_error *e) {
    vk_engine *g = p;
    vk_fly *f = &g->fly;
    if (!f->on) return 0;
    f->on = 0;
    int rc = pvk_wait_pair(&g->c, e);
    if (rc) return rc;
    if (f->dec) {
        g->counts.paired += g->tn.pipe != 0; /* apart (the test hook): not a pair */
        decode_done(g, f->n, f->k, f->counts, f->pcm);
    }
    step_done(g, f->nn, f->kn, f->eos, f->latents);
    return 0;
}

static const ptts_engine_ops vk_ops = {
    .name = "vulkan",
    .create = vk_create,
    .destroy = vk_destroy,
    .max_steps_per_call = vk_max_steps,
    .set_sampler_steps = vk_set_sampler_steps,
    .reserve = vk_reserve,
    .begin_chunk = vk_begin_chunk,
    .step = vk_step,
    .decode = vk_decode,
    .step_decode = vk_step_decode,
    .sync = vk_sync,
};

const ptts_engine_ops *ptts_vulkan_engine(void) { return &vk_ops; }

int ptts_vulkan_engine_stepk(void *p) { return ((vk_engine *)p)->sk.G; }
int ptts_vulkan_engine_tc(void *p) { return ((vk_engine *)p)->tn.tc; }
int ptts_vulkan_engine_tc_attention(void *p) { return ((vk_engine *)p)->tn.attn_tc; }
int ptts_vulkan_engine_dec_attention(void *p) { return ((vk_engine *)p)->tn.attn_dec; }

void ptts_vulkan_engine_counts(void *p, ptts_vk_counts *out) {
    const vk_engine *g = p;
    *out = g->counts;
    out->kv_pairs = (unsigned long long)g->kv.nwin;
    out->kv_positions = (unsigned long long)g->kv.cap;
    out->kv_half = (unsigned long long)g->kv.h16;
    out->ring_half = (unsigned long long)g->kv.c16;
}

long long ptts_vulkan_engine_tile_uses(void *p, int tc, const char *name) {
    const vk_engine *g = p;
    const int i = vkr_tile_named(tc, name);
    if (i < 0) return -1;
    return (long long)(tc ? g->tc_n[i] : g->gemm_n[i]);
}

/* ---- codec-only use (engine_hybrid.c: backbone and flow on the CPU) ---------------------- */

int ptts_vulkan_codec_reset(void *p, int slot, ptts_error *e) {
    vk_engine *g = p;
    if (slot < 0 || slot >= g->S) return ptts_fail(e, PTTS_E_INVALID, "no slot %d", slot);
    int rc = flush(g, e);
    if (rc) return rc;
    ((uint32_t *)g->ints.map)[g->ix.cdlen + slot] = 0;
    VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
    if (!cb) return PTTS_E_BACKEND;
    vkc_reset(g, cb, slot);
    rc = pvk_cmd_end(&g->c, cb, e);
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
    int rc = flush(g, e);
    if (rc) return rc;
    /* the latents [n][k][ld] into the slots' step rows, where decode reads them */
    memcpy((float *)g->io.map + g->ox.lat, latents, (size_t)n * k * ld * sizeof(float));
    uint32_t *iv = g->ints.map;
    for (int i = 0; i < n; i++)
        iv[g->ix.step + i] = (uint32_t)slots[i];
    cached *c = &g->cc.lat_cb; /* recorded once per (slots, k), replayed: nothing per frame */
    if (!same_key(c, n, k, slots, n)) {
        drop_cached(g, c);
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) return PTTS_E_BACKEND;
        vkr_rowop(g, cb, (uint32_t)(n * k), ld, OP_COPY, g->ix.step, SB(BUF_IO, RC(g->ox.lat, ld)),
                  SS(BUF_ARENA, RG(g->ar.steplat_[0], (uint32_t)k, KMAX * ld, ld)), 0, 0);
        rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc && set_key(c, n, k, slots, n)) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        if (rc) {
            pvk_cmd_free(&g->c, cb);
            return rc;
        }
        c->cb = cb;
    }
    rc = pvk_submit_wait(&g->c, c->cb, e);
    g->cc.lpar = 0; /* decode reads what the copy wrote */
    return rc ? rc : vk_decode(p, slots, n, k, counts, pcm, e);
}

int ptts_vulkan_flow_sample(void *p, const float *h, const float *x0, int n, float *out,
                            ptts_error *e) {
    vk_engine *g = p;
    const uint32_t d = (uint32_t)g->w->arch.d, ld = (uint32_t)g->w->arch.ld;
    if (n < 1 || n > g->S)
        return ptts_fail(e, PTTS_E_INVALID, "Vulkan flow head: %d rows for %d slots", n, g->S);
    /* h into the backbone's normed rows, x0 into the sampled latents: where the step has them */
    int rc = flush(g, e);
    if (!rc)
        rc = vkw_upload(g, &g->arena, (size_t)g->ar.bh * 4, h, (size_t)n * d * sizeof(float), e);
    if (!rc)
        rc =
            vkw_upload(g, &g->arena, (size_t)g->ar.latc * 4, x0, (size_t)n * ld * sizeof(float), e);
    if (rc) return rc;
    VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
    if (!cb) return PTTS_E_BACKEND;
    vkr_flow(g, cb, (uint32_t)n, g->ar.bh, g->ar.latc);
    vkr_rowop(g, cb, (uint32_t)n, ld, OP_COPY, 0, SA(RC(g->ar.latc, ld)),
              SB(BUF_IO, RC(g->ox.lat, ld)), 0, 0);
    rc = pvk_cmd_end(&g->c, cb, e);
    if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
    pvk_cmd_free(&g->c, cb);
    if (!rc) memcpy(out, (const float *)g->io.map + g->ox.lat, (size_t)n * ld * sizeof(float));
    return rc;
}

size_t ptts_vulkan_engine_bytes(void *p) {
    vk_engine *g = p;
    size_t kv = 0;
    for (int i = 0; i < g->kv.nwin; i++)
        kv += g->kbuf[i].size + g->vbuf[i].size;
    return (size_t)(g->wbuf.size + g->arena.size + kv + g->ints.size + g->io.size + g->stage.size);
}
