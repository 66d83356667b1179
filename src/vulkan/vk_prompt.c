/*
 * vk_prompt.c - chunk starts on the Vulkan engine: vkp_record (from begin_chunk) records a slot's
 * voice copy (from the voice caches kept on the device, vk_voice_cache), codec reset and BOS latent
 * into one open command buffer and keeps its token ids (vk_pend); the next other operation
 * (vkp_flush) prompts every pending slot's rows in passes shared by the slots of one length
 * (pend_prompts) and submits once. 256 streams arriving together thus cost about len passes of
 * 256 rows in one submission instead of 256 prompts in a row (bench/RESULTS.md).
 */
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "vk_engine.h"

/* The open command buffer of the pending prompts (begun when none is open). */
static VkCommandBuffer pend_cb(vk_engine *g, ptts_error *e) {
    if (!g->pend.cb) g->pend.cb = pvk_cmd_begin(&g->c, e);
    return g->pend.cb;
}

/* End, submit and wait for the pending command buffer; the pass inputs' regions are free. */
static int pend_submit(vk_engine *g, ptts_error *e) {
    vk_pend *pd = &g->pend;
    VkCommandBuffer cb = pd->cb;
    pd->cb = VK_NULL_HANDLE;
    pd->ids_used = pd->list_used = 0;
    if (!cb) return 0;
    int rc = pvk_cmd_end(&g->c, cb, e);
    if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
    pvk_cmd_free(&g->c, cb);
    if (!rc) g->counts.prompt_submits++;
    return rc;
}

/* The pending slots' token rows through the backbone, the slots with as many rows left as
 * each other in one pass: rps rows of each (at most PBLOCK, and as many as the pass's rows and
 * the ids region allow), so G arriving slots of one length cost ceil(len / rps) passes instead
 * of G. A slot whose length no other pending slot has gets the passes it had alone (blocks of
 * PBLOCK rows, the same kernels, the same sums): which slots arrive together does not change a
 * stream's numbers then. A slot's rows are in order; each pass advances its position by rps. */
static int pend_prompts(vk_engine *g, ptts_error *e) {
    vk_pend *pd = &g->pend;
    const ptts_arch *a = &g->w->arch;
    const uint32_t d = (uint32_t)a->d, rb = (uint32_t)g->RB;
    uint32_t *iv = g->ints.map;
    for (;;) {
        int G = 0, len = 0;
        for (int i = 0; i < pd->n; i++) {
            const int left = pd->cnt[i] - pd->done[i];
            if (left <= 0 || (G > 0 && left != len)) continue;
            len = left;
            pd->act[G++] = i;
        }
        if (G == 0) return 0;
        uint32_t rps = (uint32_t)(len < PBLOCK ? len : PBLOCK);
        if (rps > rb / (uint32_t)G) rps = rb / (uint32_t)G;
        if (rps > IDS_MAX / (uint32_t)G) rps = IDS_MAX / (uint32_t)G;
        if (rps < 1) rps = 1; /* G <= S <= rb and S <= IDS_MAX (vk_create) */
        const uint32_t n = (uint32_t)G * rps;
        if (pd->ids_used + n > IDS_MAX || pd->list_used + (uint32_t)G > IDS_MAX) {
            /* the inputs of the passes so far stay until they ran */
            int rc = pend_submit(g, e);
            if (rc) return rc;
        }
        const uint32_t io = g->ix.ids + pd->ids_used, lo = g->ix.plist + pd->list_used;
        for (int j = 0; j < G; j++) {
            const int i = pd->act[j];
            iv[lo + (uint32_t)j] = (uint32_t)pd->slot[i];
            for (uint32_t r = 0; r < rps; r++)
                iv[io + (uint32_t)j * rps + r] =
                    (uint32_t)pd->tok[pd->off[i] + pd->done[i] + (int)r];
            pd->done[i] += (int)rps;
        }
        pd->ids_used += n;
        pd->list_used += (uint32_t)G;
        VkCommandBuffer cb = pend_cb(g, e);
        if (!cb) return PTTS_E_BACKEND;
        vkr_rowop(g, cb, n, d, OP_COPY, io,
                  SWT(RG(g->wt.embed, 1, d, 0), (uint32_t)((a->nb + 1) * d)), SA(RC(g->ar.bx, d)),
                  0, 0);
        tspec t = vkr_bb_spec(g, lo);
        vkr_transformer(g, cb, &t, n, rps);
    }
}

int vkp_flush(vk_engine *g, ptts_error *e) {
    vk_pend *pd = &g->pend;
    if (pd->n == 0 && !pd->cb) return 0;
    int rc = pend_prompts(g, e);
    if (!rc)
        rc = pend_submit(g, e);
    else if (pd->cb) {
        pvk_cmd_free(&g->c, pd->cb); /* recorded, never submitted */
        pd->cb = VK_NULL_HANDLE;
    }
    for (int i = 0; i < pd->n; i++)
        pd->in[pd->slot[i]] = 0;
    pd->n = 0;
    pd->ntok = 0;
    pd->stage_used = 0;
    for (int i = 0; i < VK_VOICES; i++)
        g->vc[i].pend = 0;
    pd->ids_used = pd->list_used = 0;
    return rc;
}

/* n voice values (floats) in the caches' format at out: as they are (n words), or with
 * vk_kv.h16 as float16 pairs (n / 2 words; n even: d is). */
static void kv_format(const vk_engine *g, const float *x, size_t n, void *out) {
    if (!g->kv.h16) {
        memcpy(out, x, n * sizeof(float));
        return;
    }
    uint32_t *o = out;
    for (size_t i = 0; i + 1 < n; i += 2)
        o[i / 2] = (uint32_t)st_f32_to_f16(x[i]) | (uint32_t)st_f32_to_f16(x[i + 1]) << 16;
}

/* The device copy of voice v ([2][layers][P][rw] words, per words each: kv_format's format): a
 * kept one, else uploaded into the least recently used place (the pending prompts run first
 * when their copies read that one, or when they hold staged voices: the upload goes through
 * the staging buffer). NULL when v has no id (the caller stages it) or on an error (*rc set).
 * pf: floats of v->k (and of v->v). */
static const pvk_buffer *voice_on_device(vk_engine *g, const ptts_voice_state *v, size_t pf,
                                         size_t per, int *rc, ptts_error *e) {
    *rc = 0;
    if (!v->id) return NULL;
    vk_voice_cache *c = NULL;
    for (int i = 0; i < VK_VOICES && !c; i++)
        if (g->vc[i].id == v->id && g->vc[i].positions == v->positions) c = &g->vc[i];
    if (!c) {
        c = &g->vc[0];
        for (int i = 1; i < VK_VOICES; i++)
            if (g->vc[i].used < c->used) c = &g->vc[i];
        if ((c->pend || g->pend.stage_used) && (*rc = vkp_flush(g, e))) return NULL;
        c->id = 0;
        if (c->buf.size < 2 * per * 4) {
            pvk_buffer_destroy(&g->c, &c->buf);
            if ((*rc = pvk_buffer_create(&g->c, &c->buf, 2 * per * 4, 0, e))) return NULL;
        }
        uint32_t *kv = malloc(2 * per * 4); /* keys then values in the caches' format */
        if (!kv) {
            *rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
            return NULL;
        }
        kv_format(g, v->k, pf, kv);
        kv_format(g, v->v, pf, kv + per);
        *rc = vkw_upload(g, &c->buf, 0, kv, 2 * per * 4, e);
        free(kv);
        if (*rc) return NULL;
        c->id = v->id;
        c->positions = v->positions;
    }
    c->used = ++g->vc_clock;
    c->pend = 1;
    return &c->buf;
}

int vkp_record(vk_engine *g, int slot, const ptts_voice_state *v, const int *ids, int n_ids,
               ptts_error *e) {
    vk_pend *pd = &g->pend;
    const ptts_arch *a = &g->w->arch;
    const size_t P = (size_t)v->positions, pf = (size_t)a->layers * P * (size_t)a->d;
    const size_t rw = vk_kv_rw(&g->kv, a->d), per = (size_t)a->layers * P * rw; /* words */
    int rc = 0;
    const pvk_buffer *src = per ? voice_on_device(g, v, pf, per, &rc, e) : NULL;
    if (rc) return rc;
    const size_t vbytes = per && !src ? 2 * per * 4 : 0; /* staged: no id */
    /* what the pending prompts hold must stay where they put it: a slot begun twice or a
     * staging buffer with no room left run them first */
    if (pd->in[slot] || pd->stage_used + vbytes > g->stage.size)
        if ((rc = vkp_flush(g, e))) return rc;
    if (vbytes > g->stage.size) {
        /* room for several arriving streams' voices (one submission for all of them) */
        size_t want = vbytes * (size_t)g->S;
        if (want > PEND_STAGE_MAX) want = PEND_STAGE_MAX;
        if (want < vbytes) want = vbytes;
        if ((rc = vkw_stage_reserve(g, want, e))) return rc;
    }
    if (pd->ntok + n_ids > pd->captok) { /* grows with the longest chunks seen, not per frame */
        int cap = pd->captok ? pd->captok : 1024;
        while (cap < pd->ntok + n_ids)
            cap *= 2;
        int *t = realloc(pd->tok, (size_t)cap * sizeof(int));
        if (!t) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        pd->tok = t;
        pd->captok = cap;
    }
    VkCommandBuffer cb = pend_cb(g, e);
    if (!cb) return PTTS_E_BACKEND;
    size_t so = 0;
    if (vbytes) {
        so = pd->stage_used;
        kv_format(g, v->k, pf, (char *)g->stage.map + so);
        kv_format(g, v->v, pf, (char *)g->stage.map + so + per * 4);
        pd->stage_used += vbytes;
        src = &g->stage;
    }
    for (int l = 0; per && l < a->layers; l++) {
        int win;
        size_t dst = vk_kv_bb(&g->kv, a->d, slot, l, &win) * 4;
        pvk_copy(cb, src, so + (size_t)l * P * rw * 4, &g->kbuf[win], dst, P * rw * 4);
        pvk_copy(cb, src, so + (per + (size_t)l * P * rw) * 4, &g->vbuf[win], dst, P * rw * 4);
    }
    vkc_reset(g, cb, slot);
    pvk_copy(cb, &g->wbuf, (size_t)g->wt.bos * 4, &g->arena,
             ((size_t)g->ar.lat + (size_t)slot * a->ld) * 4, (size_t)a->ld * 4);
    uint32_t *iv = g->ints.map;
    iv[g->ix.bblen + slot] = (uint32_t)P;
    iv[g->ix.cdlen + slot] = 0;
    memcpy(pd->tok + pd->ntok, ids, (size_t)n_ids * sizeof(int));
    pd->slot[pd->n] = slot;
    pd->off[pd->n] = pd->ntok;
    pd->cnt[pd->n] = n_ids;
    pd->done[pd->n] = 0;
    pd->n++;
    pd->ntok += n_ids;
    pd->in[slot] = 1;
    g->counts.prompts++;
    return 0;
}
