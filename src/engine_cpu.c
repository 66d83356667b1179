/*
 * engine_cpu.c - the CPU engine behind engine.h: per slot a backbone (KV cache), a codec
 * decoder and the last latent; one flow head shared by the slots. One step per call (k = 1):
 * the loop needs each EOS logit before deciding to go on. A step of n slots is one batched
 * backbone pass (every weight matrix read once for the n rows, attention per slot over its own
 * cache) and one flow-head pass over the n rows.
 *
 * Overlap (ptts_model_options.overlap): decode(t) runs, as one pool region, the codec of each
 * emitted slot (one task per slot, one thread each) next to the backbone of step t+1 for those
 * slots (one task: it needs only latent t; the noise is used by the flow head, which stays in
 * step()). The task counter hands out the backbone first, then the codecs, then threads-1
 * "help" tasks: a thread with no codec left lends itself to the backbone, which runs on a
 * borrowed pool (pool.h), so no core idles while the other finishes. The h and EOS logit so
 * computed are kept per slot ("pre") and step(t+1) runs the backbone only for the slots
 * without them (a slot after begin_chunk), then the flow head over all. When the loop pairs
 * the decode with the next step (step_decode: every utterance goes on, generate.c
 * batch_pair_k), the noise of step t+1 is known and the backbone task runs the whole step,
 * flow head included: a frame is one pool region, not one plus the flow head's ~20. Results are
 * bit-identical to the plain path: every kernel computes each output the same way whatever
 * the thread split or the number of rows (ptts_linear splits output rows in 16-aligned
 * chunks; the codec's panel kernel row tiles in 8-aligned chunks; attention per (row, head));
 * tests/test_overlap*.c hold it to the bit. A pre-step of a slot that then stops
 * (max_gen_len reached, cancelled) is wasted but harmless: the next use of the slot is
 * begin_chunk, which resets the cache and the flag; the cache has room for it (one position
 * past max_steps is reserved). After an EOS stop the step past the last frame is computed
 * anyway (the rule needs its logit), so only max_gen_len stops waste one.
 *
 * When it pays (AUTO): measured on 2 cores of a Zen 5 EPYC (bench/RESULTS.md, "Codec/backbone
 * overlap"), interleaved A/B, one stream: int8 5.71 -> 4.79 ms/frame, f32 9.79 -> 9.05, bf16
 * faster too; batches: see there. Without the help tasks a single f32 stream got slower (its
 * backbone is memory-bound and needs both cores: 11.7 ms on one, 6.2 on two); with them the
 * backbone gets every core once the codec is done. So AUTO is on with 2+ threads in every
 * precision and batch size, except one stream on more than OVERLAP_ONE_MAX threads: there the
 * lone codec on one thread outlasts the backbone and flow on all the others, and the codec in
 * turn on every thread is shorter. Measured on the H200 host's Xeon (bench/RESULTS.md, "The
 * overlap by thread count"), loop ms/frame with the overlap on / off, two rounds each: int8
 * (AMX) 2 threads 7.87, 9.14 / 9.92, 10.45; 4: 5.30, 4.92 / 5.36, 5.45; 8: 4.31, 4.80 / 3.77,
 * 3.15; 16: 3.88, 3.60 / 2.87, 3.12; f32 (AVX-512) 2: 18.1, 16.3 / 20.2, 21.4; 16: 11.3, 10.3
 * / 6.3, 5.9; bf16 (AMX) 2: 11.7, 10.8 / 12.8, 12.6; 16: 4.7, 4.1 / 4.2, 3.9. Batches keep the
 * overlap: their codecs are one task per stream, spread over the threads.
 *
 * Batched codec (2+ slots decoded in one call): the codec's 16-row stages of every decoded slot
 * run together (ptts_codec_dec_frames_low: transformer, dec_in, up[0], each weight read once
 * for all the slots), then each slot's high-rate stages (ptts_codec_dec_frame_high). In the
 * overlap region that is task 1 (on its own borrowed pool) and one high-rate task per slot after
 * it; a high task claimed before task 1 ends lends its thread to task 1's pool until it does
 * (overlap_task_batched). One slot keeps the single-stream path above. Bit-identical to the
 * lone decode (test_codec_batch; test_batch / test_overlap end to end).
 */
#include <stdlib.h>
#include <string.h>

#include "backbone.h"
#include "codec.h"
#include "engine.h"
#include "flow.h"

typedef struct cpu_slot {
    ptts_backbone bb;
    ptts_codec_dec *dec;
    int have_latent; /* latent holds the previous step's output */
    int pre;         /* the next step's backbone already ran (in decode): h_pre, eos_pre */
    int fresh;       /* no frame decoded since begin_chunk */
} cpu_slot;

typedef struct cpu_engine {
    const ptts_weights *w;
    const ptts_ctx *ctx; /* kernels + the model's pool */
    int n_slots;
    cpu_slot *slot;
    ptts_flow *flow;
    float *h;      /* [slots, d] */
    float *x0;     /* [slots, ld] */
    float *latent; /* [slots, ld]: each slot's last latent */
    /* batched step workspace (sized at chunk start for the largest cache) */
    ptts_backbone **bb;   /* [slots] */
    const float **lat_in; /* [slots] */
    ptts_kv **kv;         /* [slots] */
    float *xs;            /* [slots, d] */
    float *scratch;       /* ptts_transformer_step_scratch(slots, scratch_cap) */
    int scratch_cap;
    /* ptts_engine_cpu_times (its regions and sleeps are the pool's) */
    ptts_cpu_times times;
    double *tid_codec; /* [threads]: seconds of overlap codec tasks by pool tid (the tasks of a
                          region may run on several threads at once: a sum each) */
    /* overlap */
    int overlap;     /* PTTS_OVERLAP_* of the engine args */
    long overlapped; /* frames decoded beside the next step, since created (tests) */
    long paired;     /* of those, frames decoded beside the whole next step (step_decode) */
    ptts_ctx solo;   /* the model's kernels, no pool: a codec task's thread */
    ptts_pool *sub;  /* borrowed pool (pool.h) for the backbone task: threads done with
                        the codecs lend themselves to it (NULL with one thread) */
    ptts_ctx bbctx;  /* the model's kernels on `sub` */
    int help_stop;   /* set (atomically) when the backbone task is done */
    float *hb;       /* [slots, d]: backbone output of the slots run together */
    float *eb;       /* [slots] */
    float *h_pre;    /* [slots, d] by slot: h of the pre-computed next step */
    float *eos_pre;  /* [slots] by slot */
    int *pick;       /* [slots]: call positions of the decoded slots (decode) */
    int *run;        /* [slots]: the slots a backbone pass runs, in its row order */
    /* the current overlap region (decode): n_codec codec tasks after the backbone task, which
     * runs the backbone of r_run[r_nrun]; with r_noise (step_decode) also the flow head,
     * writing r_eos, r_lat in r_run order, else h_pre, eos_pre */
    const int *r_slots;
    float *r_pcm;
    int r_n_codec;
    const int *r_run;
    int r_nrun;
    const float *r_noise;
    float *r_eos, *r_lat;
    /* batched codec (2+ slots): the low-rate stages of every decoded stream at once */
    ptts_codec_batch *cb;  /* sized for n_slots; NULL with one slot */
    ptts_codec_dec **decs; /* [slots]: the decoded slots' decoders, in pick order */
    const float **lats;    /* [slots]: their latents */
    ptts_pool *csub;       /* borrowed pool of the batched low-rate task: a high-rate task
                              waiting for it lends its thread (NULL with one thread) */
    ptts_ctx cctx;         /* the model's kernels on `csub` */
    int low_done;          /* set (atomically) when the batched low-rate task is done */
} cpu_engine;

static void cpu_destroy(void *p) {
    cpu_engine *g = p;
    if (!g) return;
    for (int i = 0; i < g->n_slots && g->slot; i++) {
        ptts_backbone_free(&g->slot[i].bb);
        ptts_codec_dec_free(g->slot[i].dec);
    }
    free(g->slot);
    ptts_flow_free(g->flow);
    ptts_free_aligned(g->h);
    ptts_free_aligned(g->x0);
    ptts_free_aligned(g->latent);
    free(g->bb);
    free(g->lat_in);
    free(g->kv);
    ptts_free_aligned(g->xs);
    ptts_free_aligned(g->scratch);
    ptts_free_aligned(g->hb);
    ptts_free_aligned(g->eb);
    ptts_free_aligned(g->h_pre);
    ptts_free_aligned(g->eos_pre);
    free(g->pick);
    free(g->run);
    free(g->tid_codec);
    ptts_pool_free(g->sub);
    ptts_codec_batch_free(g->cb);
    free(g->decs);
    free(g->lats);
    ptts_pool_free(g->csub);
    free(g);
}

static int cpu_create(void **out, const ptts_engine_args *args, int slots, ptts_error *e) {
    *out = NULL;
    if (slots < 1) return ptts_fail(e, PTTS_E_INVALID, "an engine needs at least one slot");
    cpu_engine *g = calloc(1, sizeof *g);
    if (!g) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    g->w = args->w;
    g->ctx = args->ctx;
    const ptts_arch *a = &g->w->arch;
    g->slot = calloc((size_t)slots, sizeof *g->slot);
    g->h = ptts_calloc_aligned((size_t)slots * a->d * sizeof(float));
    g->x0 = ptts_calloc_aligned((size_t)slots * a->ld * sizeof(float));
    g->latent = ptts_calloc_aligned((size_t)slots * a->ld * sizeof(float));
    g->bb = calloc((size_t)slots, sizeof *g->bb);
    g->lat_in = calloc((size_t)slots, sizeof *g->lat_in);
    g->kv = calloc((size_t)slots, sizeof *g->kv);
    g->xs = ptts_calloc_aligned((size_t)slots * a->d * sizeof(float));
    g->hb = ptts_calloc_aligned((size_t)slots * a->d * sizeof(float));
    g->eb = ptts_calloc_aligned((size_t)slots * sizeof(float));
    g->h_pre = ptts_calloc_aligned((size_t)slots * a->d * sizeof(float));
    g->eos_pre = ptts_calloc_aligned((size_t)slots * sizeof(float));
    g->pick = calloc((size_t)slots, sizeof *g->pick);
    g->run = calloc((size_t)slots, sizeof *g->run);
    g->overlap = args->overlap;
    g->solo.k = g->ctx->k;
    g->solo.pool = NULL;
    int threads = ptts_pool_threads(g->ctx->pool);
    g->tid_codec = calloc((size_t)threads, sizeof *g->tid_codec);
    if (threads > 1) g->sub = ptts_pool_create_borrowed(threads);
    g->bbctx.k = g->ctx->k;
    g->bbctx.pool = g->sub;
    g->decs = calloc((size_t)slots, sizeof *g->decs);
    g->lats = calloc((size_t)slots, sizeof *g->lats);
    if (threads > 1) g->csub = ptts_pool_create_borrowed(threads);
    g->cctx.k = g->ctx->k;
    g->cctx.pool = g->csub;
    int rc = 0;
    if (!g->slot || !g->h || !g->x0 || !g->latent || !g->bb || !g->lat_in || !g->kv || !g->xs ||
        !g->hb || !g->eb || !g->h_pre || !g->eos_pre || !g->pick || !g->run || !g->tid_codec ||
        (threads > 1 && !g->sub) || !g->decs || !g->lats || (threads > 1 && !g->csub))
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    g->n_slots = slots;
    /* the backbone's caches in float16 where its weights are bf16 or int8, as on the GPU: the
     * attention reads half the bytes a step (bench/RESULTS.md, "Float16 KV caches on the CPU");
     * float32 keeps the reference's arithmetic */
    const int kv16 = g->w->mode != PTTS_WMODE_F32;
    for (int i = 0; !rc && i < slots; i++) {
        rc = ptts_backbone_init(&g->slot[i].bb, g->w, 512, kv16, e);
        if (!rc) rc = ptts_codec_dec_create(&g->slot[i].dec, g->w, e);
    }
    if (!rc && slots > 1) rc = ptts_codec_batch_create(&g->cb, g->w, slots, e);
    if (!rc) rc = ptts_flow_create(&g->flow, g->w, 1, slots, e);
    if (rc) {
        cpu_destroy(g);
        return rc;
    }
    *out = g;
    return 0;
}

static int cpu_max_steps(void *p) {
    (void)p;
    return 1;
}

static int cpu_set_sampler_steps(void *p, int steps, ptts_error *e) {
    cpu_engine *g = p;
    if (ptts_flow_steps(g->flow) == steps) return 0;
    ptts_flow *f;
    int rc = ptts_flow_create(&f, g->w, steps, g->n_slots, e);
    if (rc) return rc;
    ptts_flow_free(g->flow);
    g->flow = f;
    return 0;
}

/* Slot s's cache for `positions`, and the batched step's scratch for the largest cache of any
 * slot. */
static int slot_reserve(cpu_engine *g, cpu_slot *s, int positions, ptts_error *e) {
    int rc = ptts_backbone_reserve(&s->bb, positions, e);
    if (rc || s->bb.kv.cap <= g->scratch_cap) return rc;
    size_t n = ptts_transformer_step_scratch(&g->w->backbone, g->n_slots, s->bb.kv.cap);
    float *sc = ptts_calloc_aligned(n * sizeof(float));
    if (!sc) return ptts_fail(e, PTTS_E_NOMEM, "out of memory (step scratch)");
    ptts_free_aligned(g->scratch);
    g->scratch = sc;
    g->scratch_cap = s->bb.kv.cap;
    return 0;
}

static int cpu_reserve(void *p, int positions, ptts_error *e) {
    cpu_engine *g = p;
    if (positions < 1 || positions > (1 << 20))
        return ptts_fail(e, PTTS_E_INVALID, "cannot reserve %d cache positions", positions);
    int rc = 0;
    for (int i = 0; !rc && i < g->n_slots; i++)
        rc = slot_reserve(g, &g->slot[i], positions, e);
    return rc;
}

static int cpu_begin_chunk(void *p, int slot, const ptts_voice_state *v, const int *ids, int n_ids,
                           int max_steps, ptts_error *e) {
    cpu_engine *g = p;
    cpu_slot *s = &g->slot[slot];
    int rc = slot_reserve(g, s, v->positions + n_ids + max_steps + 1, e);
    if (!rc) rc = ptts_backbone_set_voice(&s->bb, v, e);
    if (rc) return rc;
    ptts_backbone_prompt_tokens(&s->bb, g->ctx, ids, n_ids);
    ptts_codec_dec_reset(s->dec);
    s->have_latent = 0;
    s->pre = 0;
    s->fresh = 1;
    return 0;
}

/* The backbone step of slots run[0..m) (hb, eb rows 0..m). */
static void backbone_pass(cpu_engine *g, const ptts_ctx *c, const int *run, int m) {
    const ptts_arch *a = &g->w->arch;
    for (int j = 0; j < m; j++) {
        int slot = run[j];
        cpu_slot *s = &g->slot[slot];
        g->bb[j] = &s->bb;
        g->lat_in[j] = s->have_latent ? g->latent + (size_t)slot * a->ld : NULL;
    }
    ptts_backbone_step_batch(g->bb, m, c, g->lat_in, g->xs, g->scratch, g->scratch_cap, g->kv,
                             g->hb, g->eb);
}

/* A step's end: each slot keeps its latent (latents [n, ld] in call order) as the next
 * backbone step's input. */
static void step_done(cpu_engine *g, const int *slots, int n, const float *latents) {
    const ptts_arch *a = &g->w->arch;
    for (int i = 0; i < n; i++) {
        memcpy(g->latent + (size_t)slots[i] * a->ld, latents + (size_t)i * a->ld,
               (size_t)a->ld * sizeof(float));
        g->slot[slots[i]].have_latent = 1;
    }
    g->times.steps++;
}

static int cpu_step(void *p, const int *slots, int n, int k, const float *noise, float *eos,
                    float *latents, ptts_error *e) {
    cpu_engine *g = p;
    const ptts_arch *a = &g->w->arch;
    if (k != 1) return ptts_fail(e, PTTS_E_INTERNAL, "the CPU engine runs one step per call");
    /* the backbone for the slots whose step did not run in the last decode, all threads */
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!g->slot[slots[i]].pre) g->run[m++] = slots[i];
    double t0 = ptts_now();
    if (m > 0) backbone_pass(g, g->ctx, g->run, m);
    double t1 = ptts_now();
    /* h [n, d], eos [n] in call order: pre-computed rows, then this pass's */
    for (int i = 0, j = 0; i < n; i++) {
        cpu_slot *s = &g->slot[slots[i]];
        const float *hi = s->pre ? g->h_pre + (size_t)slots[i] * a->d : g->hb + (size_t)j * a->d;
        eos[i] = s->pre ? g->eos_pre[slots[i]] : g->eb[j];
        j += !s->pre;
        s->pre = 0;
        memcpy(g->h + (size_t)i * a->d, hi, (size_t)a->d * sizeof(float));
    }
    /* the flow head over every slot's row at once */
    ptts_flow_sample(g->flow, g->ctx, g->h, noise, n, latents);
    g->times.backbone += t1 - t0;
    g->times.flow += ptts_now() - t1;
    step_done(g, slots, n, latents);
    return 0;
}

/* Threads up to which AUTO overlaps one stream's decode (the top of the file). */
#define OVERLAP_ONE_MAX 4

/* Whether a decode of n_codec frames overlaps: the mode, AUTO's rule (see the top of the
 * file: with 2+ threads, but one stream only up to OVERLAP_ONE_MAX). Never for a chunk's first
 * frame (`fresh`): that frame's codec gets every thread, so the time to first audio stays as
 * without overlap (+2.5-3.5 ms measured otherwise, int8); the chunk's second step then runs its
 * backbone on every thread. */
static int overlap_pays(const cpu_engine *g, int n_codec, int fresh) {
    int threads = ptts_pool_threads(g->ctx->pool);
    if (threads < 2 || n_codec < 1 || fresh) return 0;
    if (g->overlap == PTTS_OVERLAP_AUTO && n_codec == 1 && threads > OVERLAP_ONE_MAX) return 0;
    return g->overlap != PTTS_OVERLAP_OFF;
}

/* Task 0: the next step on the borrowed pool: the backbone of r_run, and with step_decode the
 * flow head too (its noise is known then), else h_pre / eos_pre for step(); task 1 + j: the
 * codec of the j-th decoded slot (one thread); the last threads - 1 tasks: lend this thread
 * to task 0 until it is done. Tasks are claimed in index order, so a thread helps only once
 * every codec is taken, and task 0 is running by then (no task waits for one not yet
 * claimed). The flow head's latents go to r_lat, not to the engine's latent rows, which the
 * codec tasks are reading. */
static void overlap_task(void *ctx, int task, int tid) {
    cpu_engine *g = ctx;
    const ptts_arch *a = &g->w->arch;
    if (task == 0) {
        double t0 = ptts_now();
        backbone_pass(g, &g->bbctx, g->r_run, g->r_nrun);
        if (g->r_noise) {
            double t1 = ptts_now();
            ptts_flow_sample(g->flow, &g->bbctx, g->hb, g->r_noise, g->r_nrun, g->r_lat);
            memcpy(g->r_eos, g->eb, (size_t)g->r_nrun * sizeof(float));
            g->times.region_flow += ptts_now() - t1;
        } else {
            for (int j = 0; j < g->r_nrun; j++) {
                int slot = g->r_run[j];
                memcpy(g->h_pre + (size_t)slot * a->d, g->hb + (size_t)j * a->d,
                       (size_t)a->d * sizeof(float));
                g->eos_pre[slot] = g->eb[j];
            }
        }
        g->times.region_step += ptts_now() - t0; /* one task a region: one writer */
        __atomic_store_n(&g->help_stop, 1, __ATOMIC_RELEASE);
        return;
    }
    if (task > g->r_n_codec) {
        ptts_pool_help(g->sub, &g->help_stop);
        return;
    }
    int i = g->pick[task - 1];
    int slot = g->r_slots[i];
    double t0 = ptts_now();
    ptts_codec_dec_frame(g->slot[slot].dec, &g->solo, g->latent + (size_t)slot * a->ld,
                         g->r_pcm + (size_t)i * a->frame_samples, NULL);
    g->tid_codec[tid] += ptts_now() - t0;
}

/* The batched variant (2+ codecs): task 0 the backbone as above; task 1 the low-rate codec
 * stages of all the decoded streams at once (ptts_codec_dec_frames_low, on the borrowed pool
 * `csub`); task 2 + j the high-rate stages of the j-th stream, which first waits for task 1 by
 * lending its thread to csub (so a thread that gets there early works on the batched part
 * instead of idling); then threads - 1 backbone help tasks. Claimed in index order: by the time
 * a high task runs, task 1 is running or done (no wait on an unclaimed task). */
static void overlap_task_batched(void *ctx, int task, int tid) {
    cpu_engine *g = ctx;
    const ptts_arch *a = &g->w->arch;
    const int nc = g->r_n_codec;
    if (task == 0) {
        overlap_task(ctx, 0, tid);
        return;
    }
    double t0 = ptts_now();
    if (task == 1) {
        ptts_codec_dec_frames_low(g->cb, g->decs, nc, &g->cctx, g->lats);
        g->tid_codec[tid] += ptts_now() - t0;
        __atomic_store_n(&g->low_done, 1, __ATOMIC_RELEASE);
        return;
    }
    if (task > nc + 1) {
        ptts_pool_help(g->sub, &g->help_stop);
        return;
    }
    if (!__atomic_load_n(&g->low_done, __ATOMIC_ACQUIRE)) ptts_pool_help(g->csub, &g->low_done);
    int i = g->pick[task - 2];
    ptts_codec_dec_frame_high(g->decs[task - 2], &g->solo, g->r_pcm + (size_t)i * a->frame_samples);
    g->tid_codec[tid] += ptts_now() - t0; /* with the wait for task 1 (spent helping it) */
}

/* decs, lats for the n_codec slots at call positions pick[0..nc) of `slots`. */
static void gather_codecs(cpu_engine *g, const int *slots, int nc) {
    const ptts_arch *a = &g->w->arch;
    for (int j = 0; j < nc; j++) {
        int slot = slots[g->pick[j]];
        g->decs[j] = g->slot[slot].dec;
        g->lats[j] = g->latent + (size_t)slot * a->ld;
    }
}

/* The next step when it goes with a decode (step_decode): its slots, noise and outputs. */
typedef struct next_step {
    const int *slots;
    int n;
    const float *noise;
    float *eos, *latents;
} next_step;

/* The codec of the slots of the last step call with counts > 0 (pcm in call order), and the
 * next step: with nx (step_decode) that of nx->slots, else, in an overlap region, the backbone
 * of the decoded slots ahead of step() (pre). Overlapped as overlap_pays says; otherwise the
 * codec, then nx's step, each on every thread. */
static int run_decode(cpu_engine *g, const int *slots, int n, const int *counts, float *pcm,
                      const next_step *nx, ptts_error *e) {
    const ptts_arch *a = &g->w->arch;
    int nc = 0, fresh = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0) {
            g->pick[nc++] = i;
            fresh |= g->slot[slots[i]].fresh;
            g->slot[slots[i]].fresh = 0;
        }
    const double t0 = ptts_now();
    g->times.decodes++;
    if (overlap_pays(g, nc, fresh)) {
        /* every decoded slot has taken a step this frame (have_latent) and none is pre yet */
        g->r_slots = slots;
        g->r_pcm = pcm;
        g->r_n_codec = nc;
        if (nx) {
            g->r_run = nx->slots;
            g->r_nrun = nx->n;
            g->r_noise = nx->noise;
            g->r_eos = nx->eos;
            g->r_lat = nx->latents;
        } else {
            for (int j = 0; j < nc; j++)
                g->run[j] = slots[g->pick[j]];
            g->r_run = g->run;
            g->r_nrun = nc;
            g->r_noise = NULL;
        }
        g->help_stop = 0;
        int threads = ptts_pool_threads(g->ctx->pool);
        if (g->cb && nc >= 2) {
            gather_codecs(g, slots, nc);
            g->low_done = 0;
            ptts_pool_run(g->ctx->pool, 2 + nc + threads - 1, overlap_task_batched, g);
        } else {
            ptts_pool_run(g->ctx->pool, 1 + nc + threads - 1, overlap_task, g);
        }
        if (nx) {
            step_done(g, nx->slots, nx->n, nx->latents);
            g->paired += nc;
        } else {
            for (int j = 0; j < nc; j++)
                g->slot[slots[g->pick[j]]].pre = 1;
        }
        g->overlapped += nc;
        g->times.region += ptts_now() - t0;
        return 0;
    }
    if (g->cb && nc >= 2) {
        /* batched low-rate stages on every thread, then each stream's high-rate stages */
        gather_codecs(g, slots, nc);
        ptts_codec_dec_frames_low(g->cb, g->decs, nc, g->ctx, g->lats);
        for (int j = 0; j < nc; j++)
            ptts_codec_dec_frame_high(g->decs[j], g->ctx,
                                      pcm + (size_t)g->pick[j] * a->frame_samples);
    } else {
        for (int i = 0; i < n; i++)
            if (counts[i] > 0)
                ptts_codec_dec_frame(g->slot[slots[i]].dec, g->ctx,
                                     g->latent + (size_t)slots[i] * a->ld,
                                     pcm + (size_t)i * a->frame_samples, NULL);
    }
    g->times.codec += ptts_now() - t0;
    return nx ? cpu_step(g, nx->slots, nx->n, 1, nx->noise, nx->eos, nx->latents, e) : 0;
}

static int cpu_decode(void *p, const int *slots, int n, int k, const int *counts, float *pcm,
                      ptts_error *e) {
    (void)k;
    return run_decode(p, slots, n, counts, pcm, NULL, e);
}

/* The codec of the last step call beside the whole next step, flow head included: the loop
 * pairs the two whenever every utterance goes on (generate.c, batch_pair_k), so a frame is one
 * pool region, and the flow head, whose weights the codec and backbone evict each frame, runs
 * from memory while the codec computes (alone after the region it took 0.43 ms a frame on a
 * Zen 4 where it takes 0.15 warm: bench/RESULTS.md). */
static int cpu_step_decode(void *p, const int *slots, int n, int k, const int *counts, float *pcm,
                           const int *next, int nn, int kn, const float *noise, float *eos,
                           float *latents, ptts_error *e) {
    (void)k;
    if (kn != 1) return ptts_fail(e, PTTS_E_INTERNAL, "the CPU engine runs one step per call");
    const next_step nx = {next, nn, noise, eos, latents};
    return run_decode(p, slots, n, counts, pcm, &nx, e);
}

long ptts_engine_cpu_overlapped(const void *eng, int paired) {
    const cpu_engine *g = eng;
    return paired ? g->paired : g->overlapped;
}

void ptts_engine_cpu_times(const void *eng, ptts_cpu_times *out) {
    const cpu_engine *g = eng;
    *out = g->times;
    for (int t = 0; t < ptts_pool_threads(g->ctx->pool); t++)
        out->region_codec += g->tid_codec[t];
    ptts_pool_counts(g->ctx->pool, &out->regions, &out->sleeps);
}

const ptts_engine_ops ptts_engine_cpu = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .max_steps_per_call = cpu_max_steps,
    .set_sampler_steps = cpu_set_sampler_steps,
    .reserve = cpu_reserve,
    .begin_chunk = cpu_begin_chunk,
    .step = cpu_step,
    .decode = cpu_decode,
    .step_decode = cpu_step_decode,
};
