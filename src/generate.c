/*
 * generate.c - the generation loop (MODEL.md section 8), written once for every backend.
 *
 * Per text chunk: copy the voice state into the cache, prompt the chunk's token ids, then
 * autoregressive steps s = 0, 1, ...:
 *     h, eos = backbone(latent_{s-1} or BOS);  latent_s = sampler(h, noise_s);
 *     if eos > threshold and no EOS yet and s >= 6: eos_step = s
 *     if eos_step set and s >= eos_step + F: stop (step s is not emitted)
 *     emit decode(latent_s)                      (1920 samples, 80 ms)
 * max_gen_len = ceil((n_tokens / 3 + 2) * 12.5) with the ids of the re-prepared chunk text;
 * F = the caller's frames_after_eos, else the model's recommendation, else the chunk's guess + 2.
 * The codec restarts from a fresh state for every chunk, and the first 120 samples it gives
 * fade in (here, after the engine's decode, so that every backend fades once); the voice is
 * never modified.
 *
 * Noise: noise.h. Text: text_feed.h turns the text (markup, then each text segment split by
 * the 3.3 rules) into chunks with the pauses between them; a pause is emitted as frames of
 * zeros, the last one short, with no step; incremental text becomes chunks when generation
 * needs the next one (ptts.h).
 *
 * The per-utterance state (chunks, EOS bookkeeping, noise) is `utt` (utterance.c); the compute
 * is an engine
 * (engine.h) with one slot per utterance. A batch advances many utterances together, one step
 * call at a time, through a many-slot engine (weights read once per step for all of them); a
 * stream is a one-slot batch whose frames are pulled one by one. When an engine runs k steps
 * per call, the noise generator is rewound to just after the last step the rule consumed, so
 * the draws do not depend on k. Nothing is allocated per frame.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "generate.h"
#include "model.h"
#include "utterance.h"
#include "voice.h"

/* ---- step buffers --------------------------------------------------------------------------- */

/* The buffers of step calls for `slots` utterances of up to kmax frames each: noise
 * [slots][kmax][ld] and pcm [slots][kmax][frame_samples]; EOS logits [slots][kmax] and latents
 * [slots][kmax][ld] twice: the last call's in [cur] and, with an engine that has step_decode,
 * the next call's (pend_k frames, computed with the last decode, not yet through the EOS rule)
 * in [cur ^ 1]; the generator after each draw, for the rewind, [slots][kmax]. */
typedef struct step_bufs {
    float *noise, *pcm;
    float *eos[2], *lat[2];
    ptts_rng *after;
    int cur, pend_k;
} step_bufs;

static int bufs_alloc(step_bufs *q, size_t slots, size_t kmax, const ptts_arch *a, ptts_error *e) {
    const size_t nk = slots * kmax;
    q->noise = ptts_calloc_aligned(nk * a->ld * sizeof(float));
    q->pcm = ptts_calloc_aligned(nk * a->frame_samples * sizeof(float));
    q->after = calloc(nk, sizeof *q->after);
    int ok = q->noise && q->pcm && q->after;
    for (int i = 0; i < 2; i++) {
        q->eos[i] = ptts_calloc_aligned(nk * sizeof(float));
        q->lat[i] = ptts_calloc_aligned(nk * a->ld * sizeof(float));
        ok = ok && q->eos[i] && q->lat[i];
    }
    return ok ? 0 : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
}

static void bufs_free(step_bufs *q) {
    ptts_free_aligned(q->noise);
    ptts_free_aligned(q->pcm);
    free(q->after);
    for (int i = 0; i < 2; i++) {
        ptts_free_aligned(q->eos[i]);
        ptts_free_aligned(q->lat[i]);
    }
}

/* ---- batch: many utterances, one step each per call --------------------------------------- */

/* The device work one call of several utterances may take, in seconds (batch_kcap). */
#define PTTS_CALL_BUDGET_S 0.05

struct ptts_batch {
    const ptts_model *m;
    const ptts_engine_ops *ops;
    void *eng;
    int n_slots, kmax, sampler_steps;
    utt *u;                   /* [n_slots] */
    int *active;              /* slot ids stepped this call */
    int *counts;              /* frames to emit per stepped slot */
    int *dc;                  /* [n]: the frames the call's decode takes (batch_early: counts
                                 less the joiners' first frames, decoded apart) */
    float *early_pcm;         /* q.pcm's size: the joiners' first frames (batch_early; NULL
                                 where no call is paired: one slot, no step_decode) */
    step_bufs q;              /* [n_slots] slots; pending frames are for the same slots */
    int pend_n;               /* how many slots the pending call stepped */
    int *next;                /* the slots of the call paired with this decode (batch_pair_k) */
    unsigned char *ends;      /* [n] of this call: the utterance ends with its frames */
    unsigned char *pend_live; /* [n_slots]: the slot's utterance has pending frames */
    unsigned char *taken;     /* [n_slots]: frames of this or the last call not out */
    long decodes, paired;     /* calls decoded since created, and of them with step_decode */
    long early;               /* decodes of joiners' first frames apart (batch_early) */
    int joins;                /* PTTS_JOIN_*: a joiner's first frames decoded alone or paired */
    float *zeros;             /* [frame_samples]: a frame of a pause */
    ptts_error *slot_err;     /* a stream's: where a slot's error goes (NULL: logged) */
    int failed;               /* an engine operation failed: the engine is not reused */
    /* Frames handed out one call late (an engine with sync, a batch not a stream's): a paired
     * call's decode is still running when step returns, so its frames go out at the next
     * step, after the call after it is submitted; the host hands out frames while the device
     * computes (the server's frame callbacks were 15% of its generation thread's time on the
     * H200, bench/RESULTS.md). d*: that call's slots, counts, first-frame fades and the
     * utterance each was for (epoch: a slot's restarts and cancels since). */
    int defer, dn, dk, dbuf; /* dbuf: the q.eos / q.lat buffer of that call */
    int *dslot, *dcount, *dchunk, *dstep0;
    unsigned char *dfade, *dend; /* dend: complete once its frames are out (ends, paired) */
    unsigned *depoch, *epoch;
    ptts_step_record out; /* the frame being handed out (a stream keeps its record) */
    /* A call of several utterances computes at most batch_kcap frames (call_budget seconds of
     * the device's work), so that one that joins waits a short call. t_enter: the last
     * ptts_batch_step's start; k_last, n_last: the frames that step advanced and the
     * utterances it stepped when they were 2+ (k_last 0: the next interval is not measured);
     * frame_s: seconds a frame of n_meas utterances, averaged over calls of that many. */
    double call_budget, t_enter, frame_s;
    int k_last, n_last, n_meas;
};

int ptts_batch_create(ptts_batch **out, const ptts_model *m, int max_streams, ptts_error *e) {
    *out = NULL;
    if (max_streams < 1 || max_streams > 4096)
        return ptts_fail(e, PTTS_E_INVALID, "a batch holds 1 to 4096 streams, not %d", max_streams);
    ptts_batch *b = calloc(1, sizeof *b);
    if (!b) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    b->m = m;
    b->ops = m->be.engine;
    b->n_slots = max_streams;
    b->sampler_steps = 1;
    int rc = ptts_engine_acquire(&m->be, b->ops, max_streams, &b->eng, e);
    if (!rc) {
        b->kmax = b->ops->max_steps_per_call(b->eng);
        b->call_budget = PTTS_CALL_BUDGET_S;
        b->u = calloc((size_t)max_streams, sizeof *b->u);
        b->active = calloc((size_t)max_streams, sizeof *b->active);
        b->counts = calloc((size_t)max_streams, sizeof *b->counts);
        b->dc = calloc((size_t)max_streams, sizeof *b->dc);
        b->pend_live = calloc((size_t)max_streams, 1);
        b->next = calloc((size_t)max_streams, sizeof *b->next);
        b->ends = calloc((size_t)max_streams, 1);
        b->taken = calloc((size_t)max_streams, 1);
        b->dend = calloc((size_t)max_streams, 1);
        b->zeros = calloc((size_t)m->w->arch.frame_samples, sizeof *b->zeros);
        b->defer = b->ops->sync != NULL;
        b->dslot = calloc((size_t)max_streams, sizeof *b->dslot);
        b->dcount = calloc((size_t)max_streams, sizeof *b->dcount);
        b->dfade = calloc((size_t)max_streams, 1);
        b->depoch = calloc((size_t)max_streams, sizeof *b->depoch);
        b->epoch = calloc((size_t)max_streams, sizeof *b->epoch);
        b->dchunk = calloc((size_t)max_streams, sizeof *b->dchunk);
        b->dstep0 = calloc((size_t)max_streams, sizeof *b->dstep0);
        rc = bufs_alloc(&b->q, (size_t)max_streams, (size_t)b->kmax, &m->w->arch, e);
        const int pairs = max_streams > 1 && b->ops->step_decode; /* batch_early may run */
        if (pairs)
            b->early_pcm = malloc((size_t)max_streams * (size_t)b->kmax *
                                  (size_t)m->w->arch.frame_samples * sizeof(float));
        if (!rc && pairs && !b->early_pcm) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        if (!rc && !(b->u && b->active && b->counts && b->dc && b->pend_live && b->next &&
                     b->ends && b->taken && b->dend && b->zeros && b->dslot && b->dcount &&
                     b->dfade && b->depoch && b->epoch && b->dchunk && b->dstep0))
            rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    if (rc) {
        ptts_batch_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

void ptts_batch_free(ptts_batch *b) {
    if (!b) return;
    for (int i = 0; b->u && i < b->n_slots; i++)
        utt_clear(&b->u[i]);
    ptts_error e = {0};
    if (b->eng && b->ops->sync && b->ops->sync(b->eng, &e)) b->failed = 1; /* one in flight */
    ptts_engine_release(&b->m->be, b->ops, b->n_slots, b->eng, b->failed);
    free(b->u);
    free(b->active);
    free(b->counts);
    free(b->dc);
    free(b->early_pcm);
    bufs_free(&b->q);
    free(b->pend_live);
    free(b->next);
    free(b->ends);
    free(b->taken);
    free(b->dend);
    free(b->zeros);
    free(b->dslot);
    free(b->dcount);
    free(b->dfade);
    free(b->depoch);
    free(b->epoch);
    free(b->dchunk);
    free(b->dstep0);
    free(b);
}

/* The slot's utterance is over: frames computed ahead for it are dropped. */
static void batch_clear(ptts_batch *b, int slot) {
    utt_clear(&b->u[slot]);
    b->pend_live[slot] = 0;
    b->epoch[slot]++; /* frames of it still to hand out are dropped */
}

/* A free slot for an utterance of `steps` sampler steps, or PTTS_E_BUSY. */
static int batch_free_slot(const ptts_batch *b, int steps, ptts_error *e) {
    int slot = -1;
    for (int i = 0; i < b->n_slots && slot < 0; i++)
        if (!b->u[i].voice) slot = i;
    if (slot < 0)
        return ptts_fail(e, PTTS_E_BUSY, "all %d streams of the batch are busy", b->n_slots);
    if (ptts_batch_active(b) > 0 && steps != b->sampler_steps)
        return ptts_fail(e, PTTS_E_BUSY,
                         "the batch runs %d sampler steps; a request for %d must wait until it "
                         "is idle",
                         b->sampler_steps, steps);
    return slot;
}

/* After utt_start* in `slot` (rc its result): the engine's sampler for the utterance's steps.
 * Returns the slot or an error. */
static int batch_started(ptts_batch *b, int slot, int rc, ptts_error *e) {
    if (rc) return rc;
    const int steps = b->u[slot].o.sampler_steps;
    if (steps != b->sampler_steps) {
        if ((rc = b->ops->set_sampler_steps(b->eng, steps, e))) {
            b->failed = 1;
            batch_clear(b, slot);
            return rc;
        }
        b->sampler_steps = steps;
    }
    b->epoch[slot]++;
    return slot;
}

static int steps_of(const ptts_gen_options *o) {
    return o && o->sampler_steps > 0 ? o->sampler_steps : 1;
}

int ptts_batch_start(ptts_batch *b, const ptts_voice *v, const char *text,
                     const ptts_gen_options *o, ptts_error *e) {
    int slot = batch_free_slot(b, steps_of(o), e);
    if (slot < 0) return slot;
    return batch_started(b, slot, utt_start(&b->u[slot], b->m, v, text, o, e), e);
}

int ptts_batch_start_incremental(ptts_batch *b, const ptts_voice *v, const ptts_gen_options *o,
                                 ptts_error *e) {
    int slot = batch_free_slot(b, steps_of(o), e);
    if (slot < 0) return slot;
    return batch_started(b, slot, utt_start_incremental(&b->u[slot], b->m, v, o, e), e);
}

static utt *batch_utt(ptts_batch *b, int slot, ptts_error *e) {
    if (slot < 0 || slot >= b->n_slots) {
        ptts_fail(e, PTTS_E_INVALID, "slot %d is not one of the batch's %d", slot, b->n_slots);
        return NULL;
    }
    return &b->u[slot];
}

int ptts_batch_feed(ptts_batch *b, int slot, const char *text, size_t len, ptts_error *e) {
    utt *u = batch_utt(b, slot, e);
    return u ? utt_feed(u, text, len, 0, e) : PTTS_E_INVALID;
}

int ptts_batch_flush(ptts_batch *b, int slot, ptts_error *e) {
    utt *u = batch_utt(b, slot, e);
    return u ? utt_feed(u, NULL, 0, 1, e) : PTTS_E_INVALID;
}

int ptts_batch_end(ptts_batch *b, int slot, ptts_error *e) {
    utt *u = batch_utt(b, slot, e);
    return u ? utt_feed(u, NULL, 0, 2, e) : PTTS_E_INVALID;
}

void ptts_batch_cancel(ptts_batch *b, int slot) {
    if (slot >= 0 && slot < b->n_slots) batch_clear(b, slot);
}

int ptts_batch_reserve(ptts_batch *b, const ptts_voice *v, int n_ids, ptts_error *e) {
    if (!v || n_ids < 1 || n_ids > 4096)
        return ptts_fail(e, PTTS_E_INVALID, "reserve: a voice and 1 to 4096 token ids, not %d",
                         n_ids);
    if (!b->ops->reserve) return 0;
    return b->ops->reserve(b->eng, v->st->positions + n_ids + utt_max_steps(n_ids, b->kmax) + 1, e);
}

int ptts_batch_reserve_clone(ptts_batch *b, double seconds, int n_ids, ptts_error *e) {
    if (!b->m->w->arch.has_encoder)
        return ptts_fail(e, PTTS_E_UNSUPPORTED, "reserve: this model cannot clone voices");
    const int p = ptts_voice_clone_positions(b->m->w->arch.frame_samples, seconds);
    if (p < 1 || n_ids < 1 || n_ids > 4096)
        return ptts_fail(e, PTTS_E_INVALID,
                         "reserve: a clip of 0 to 3600 s and 1 to 4096 token ids, not %g s, %d",
                         seconds, n_ids);
    if (!b->ops->reserve) return 0;
    return b->ops->reserve(b->eng, p + n_ids + utt_max_steps(n_ids, b->kmax) + 1, e);
}

int ptts_batch_active(const ptts_batch *b) {
    int n = 0;
    for (int i = 0; i < b->n_slots; i++)
        n += b->u[i].voice != NULL;
    return n;
}

int ptts_batch_waiting(const ptts_batch *b) {
    int n = 0;
    for (int i = 0; i < b->n_slots; i++)
        n += b->u[i].voice != NULL && b->u[i].waiting;
    return n;
}

/* The most frames a call of several utterances computes. A call's frames are handed out after
 * it (and an utterance joins between calls), so one that joins a running batch waits for the
 * call in flight, then its own call, before its first audio: with calls of the GPU's 8 frames
 * that was 315-620 ms (median) for 1,024 streams on the H200, where a frame of them takes some
 * 22 ms (bench/RESULTS.md). So a call takes at most call_budget seconds of frames, the seconds
 * a frame measured between the starts of consecutive calls (the device's time, or the host's
 * when that is longer; averaged over two calls of as many utterances), scaled by the
 * utterances when the call has more than the measured ones (a wave of arrivals: 316 joining
 * 28 got the 28's 8 frames, 147 ms on the H200, before this). Small batches keep kmax (a frame of
 * 64 streams is ~1.5 ms). Only while a slot is free or a call carries an utterance's first frame
 * (batch_held): shorter calls cost device time (1,024 streams on the H200: calls of 2 frames
 * 3254x, of 8 3590x), and a full batch has nobody to let in until a stream ends; one
 * utterance alone is never held either (its calls may be paced by a reader, which is no device
 * time). The same frames whatever k, up to rounding: the GPU picks kernels by row counts, and
 * the codec's rows are slots x k x 16. */
static int batch_kcap(const ptts_batch *b, int n) {
    if (b->call_budget <= 0) return 1;
    if (b->frame_s <= 0) return b->kmax;
    const double f = n > b->n_meas ? b->frame_s * n / b->n_meas : b->frame_s;
    const double k = b->call_budget / f;
    return k >= b->kmax ? b->kmax : k < 1 ? 1 : (int)k;
}

/* The seconds a frame of the last call took (batch_kcap), at the start of a step. */
static void batch_measure(ptts_batch *b) {
    const double now = ptts_now();
    if (b->k_last > 0) {
        const double f = (now - b->t_enter) / b->k_last;
        const int same = b->n_last == b->n_meas && b->frame_s > 0;
        b->frame_s = same ? 0.5 * (b->frame_s + f) : f;
        b->n_meas = b->n_last;
    }
    b->t_enter = now;
    b->k_last = 0;
}

void ptts_batch_set_call_budget(ptts_batch *b, double seconds) { b->call_budget = seconds; }

int ptts_batch_set_joins(ptts_batch *b, int policy, ptts_error *e) {
    if (policy != PTTS_JOIN_FIRST_AUDIO && policy != PTTS_JOIN_THROUGHPUT)
        return ptts_fail(e, PTTS_E_INVALID,
                         "no join policy %d (PTTS_JOIN_FIRST_AUDIO or "
                         "PTTS_JOIN_THROUGHPUT)",
                         policy);
    b->joins = policy;
    return 0;
}

void ptts_batch_calls(const ptts_batch *b, long *decodes, long *paired, long *early) {
    *decodes = b->decodes;
    *paired = b->paired;
    if (early) *early = b->early;
}

/* Whether a call of n utterances is held to the call budget (batch_kcap): when it steps more
 * than one and a slot is free for another to join, or an utterance's first frame is in it
 * (fresh: one that just joined, whose first audio waits for the call). */
static int batch_held(const ptts_batch *b, int n, int fresh) {
    return n > 1 && (fresh || ptts_batch_active(b) < b->n_slots);
}

/* Slot i's utterance made ready for a call (utt_ready, which begins its next chunk where one
 * is due): 1 when it takes a step; else 0: it waits for text, gave a frame of a pause, or ended
 * or failed, which fn is told (the slot freed). */
static int batch_ready(ptts_batch *b, int i, ptts_batch_fn fn, void *user) {
    utt *u = &b->u[i];
    ptts_error se = {0};
    int rc = utt_ready(u, b->m, b->ops, b->eng, i, &se);
    if (rc == UTT_WAIT) return 0;
    if (rc == UTT_SILENCE) { /* a frame of the pause (the last one short), no step */
        int ns = (int)PTTS_MIN(u->silence, (int64_t)b->m->w->arch.frame_samples);
        u->silence -= ns;
        if (fn && fn(user, i, b->zeros, ns)) batch_clear(b, i);
        return 0;
    }
    if (rc < 0) {
        if (!u->text_failed) b->failed = 1; /* an engine's error: not reused */
        batch_clear(b, i);
        if (b->slot_err)
            *b->slot_err = se;
        else
            ptts_log(PTTS_LOG_ERROR, "stream %d: %s", i, se.msg);
    } else if (rc == 0) { /* complete: the slot is free; its record stays for the status */
        u->voice = NULL;
        b->pend_live[i] = 0;
    }
    if (rc <= 0) {
        if (fn) fn(user, i, NULL, rc);
        return 0;
    }
    return 1;
}

/* The batch's slots for a fresh step call (every utterance that is ready, beginning chunks as
 * needed; those that end are reported) and its k: how many slots, < 0 on an error. */
static int batch_plan(ptts_batch *b, ptts_batch_fn fn, void *user, int *kout) {
    /* every active utterance takes the same k: the most frames any still wants (utt_plan), and
     * the ramp (utt_ramp) only while every utterance is in it: one that arrives at an idle
     * batch gets its first audio after one frame's work; one that joins running streams, a
     * call of the budget's frames (batch_held). One that reaches max_gen_len inside the call
     * computes the rest of it for nothing (utt_consume emits up to max_gen_len; its cache has
     * room, utt_max_steps), as one that meets EOS does: before, its remaining frames set the k
     * of the whole batch, a short call at each group's end (on the H200, 5-25 ms calls among
     * 40 ms ones of 8 frames at 256 streams; bench/RESULTS.md) */
    int n = 0, k = 1, ramp = 1, fresh = 0;
    for (int i = 0; i < b->n_slots; i++) {
        utt *u = &b->u[i];
        if (!u->voice || !batch_ready(b, i, fn, user)) continue;
        k = PTTS_MAX(k, utt_plan(u, b->kmax));
        ramp = PTTS_MAX(ramp, utt_ramp(u, b->kmax));
        fresh |= u->chunk == 0 && u->step == 0;
        b->active[n++] = i;
    }
    *kout = PTTS_MIN(k, ramp);
    if (batch_held(b, n, fresh)) *kout = PTTS_MIN(*kout, batch_kcap(b, n));
    return n;
}

/* An utterance that ended with a paired call (batch_pair_k), its frames out: complete, as
 * batch_plan completes one (utt_ends said utt_ready would find nothing more; were it wrong,
 * the utterance is not in the pending call, so the next call is not paired and batch_plan
 * takes it up). */
static void batch_complete(ptts_batch *b, int slot, ptts_batch_fn fn, void *user) {
    ptts_error se = {0};
    utt *u = &b->u[slot];
    if (utt_ready(u, b->m, b->ops, b->eng, slot, &se) != UTT_DONE) return;
    u->voice = NULL;
    b->pend_live[slot] = 0;
    if (fn) fn(user, slot, NULL, 0);
}

/* count frames of slot's chunk `chunk` from its step step0 to the callback: pcm [count][fs],
 * eos [count], lat [count][ld]; fade: the chunk's first frame is in them. 1 when the callback
 * stopped the utterance (the slot cleared). */
static int hand_out(ptts_batch *b, int slot, float *pcm, int count, int fade, int chunk, int step0,
                    const float *eos, const float *lat, ptts_batch_fn fn, void *user) {
    const size_t fs = (size_t)b->m->w->arch.frame_samples, ld = (size_t)b->m->w->arch.ld;
    if (fade && count > 0) utt_fade_in(pcm, (int)fs);
    for (int f = 0; f < count; f++) {
        b->out = (ptts_step_record){chunk, step0 + f, eos[f], lat + (size_t)f * ld};
        if (fn && fn(user, slot, pcm + (size_t)f * fs, (int)fs)) {
            batch_clear(b, slot);
            return 1;
        }
    }
    return 0;
}

/* The frames of the last decode in q.pcm (dn slots of dk frames) to the callback, but not
 * those of an utterance cancelled or restarted since. */
static void hand_out_late(ptts_batch *b, ptts_batch_fn fn, void *user) {
    const size_t fs = (size_t)b->m->w->arch.frame_samples, ld = (size_t)b->m->w->arch.ld;
    const size_t k = (size_t)b->dk;
    const int n = b->dn;
    b->dn = 0;
    for (int j = 0; j < n; j++) {
        const int slot = b->dslot[j];
        if (b->depoch[j] != b->epoch[slot] || !b->u[slot].voice) continue;
        if (hand_out(b, slot, b->q.pcm + j * k * fs, b->dcount[j], b->dfade[j], b->dchunk[j],
                     b->dstep0[j], b->q.eos[b->dbuf] + j * k, b->q.lat[b->dbuf] + j * k * ld, fn,
                     user))
            continue;
        if (b->dend[j] && b->u[slot].voice) batch_complete(b, slot, fn, user);
    }
}

/* Whether count frames of u's last call include its first (of its first chunk): a joiner's. */
static int first_frames(const utt *u, int count) {
    return count > 0 && u->call_chunk == 0 && u->call_step0 == 0;
}

/* Whether the batch is running: an utterance of the call (n slots, k frames) goes on past its
 * ramp, so the ramp holds back no one (batch_plan) and the next call can be paired. */
static int batch_running(const ptts_batch *b, int n, int k) {
    for (int j = 0; j < n; j++)
        if (utt_pair_k(&b->u[b->active[j]], b->counts[j], k, b->kmax, 0) > 0) return 1;
    return 0;
}

/* The call's frames (n slots, k frames, counts[n] each) recorded for hand_out_late; kn > 0:
 * the next call is paired, so those that end (b->ends) are completed once out. */
static void batch_record(ptts_batch *b, int n, int k, const int *counts, int kn) {
    for (int j = 0; j < n; j++) {
        int slot = b->active[j];
        b->dslot[j] = slot;
        b->dcount[j] = counts[j];
        b->dfade[j] = b->u[slot].call_step0 == 0 && counts[j] > 0; /* the chunk's first */
        b->depoch[j] = b->epoch[slot];
        b->dchunk[j] = b->u[slot].call_chunk;
        b->dstep0[j] = b->u[slot].call_step0;
        b->dend[j] = kn > 0 && b->ends[j];
    }
    b->dn = n;
    b->dk = k;
    b->dbuf = b->q.cur;
}

/* The decode counts of the call just computed (b->dc) and, in a running batch with the default
 * join policy, the first frames of the utterances that joined it decoded apart, before the
 * call's decode, and handed out at once (0, or < 0 on an engine's error). The call's decode then
 * goes with the next call's step as every other (batch_pair_k); a join costs a decode of the
 * joiners alone (a few streams: latency-bound and short) where it cost the whole call's decode
 * apart from the next step. Into early_pcm (q.pcm's size): q.pcm still holds the last call's
 * frames, which go out after the next call is submitted (hand_out_late), the joiners' ahead of
 * them. */
static int batch_early(ptts_batch *b, int n, int k, ptts_batch_fn fn, void *user, ptts_error *e) {
    memcpy(b->dc, b->counts, (size_t)n * sizeof *b->dc);
    if (b->joins == PTTS_JOIN_THROUGHPUT || !b->early_pcm || !batch_running(b, n, k)) return 0;
    int *ec = b->next; /* free until batch_pair_k: the joiners' counts */
    int m = 0;
    for (int j = 0; j < n; j++) {
        const utt *u = &b->u[b->active[j]];
        const int first = u->voice && first_frames(u, b->counts[j]);
        ec[j] = first ? b->counts[j] : 0;
        b->dc[j] -= ec[j];
        m += first;
    }
    if (m == 0) return 0;
    const size_t fs = (size_t)b->m->w->arch.frame_samples, ld = (size_t)b->m->w->arch.ld;
    int rc = b->ops->decode(b->eng, b->active, n, k, ec, b->early_pcm, e);
    if (rc) return rc;
    b->early++;
    for (int j = 0; j < n; j++)
        if (ec[j] > 0) {
            const int slot = b->active[j];
            const size_t jk = (size_t)j * (size_t)k;
            hand_out(b, slot, b->early_pcm + jk * fs, ec[j], 1, b->u[slot].call_chunk,
                     b->u[slot].call_step0, b->q.eos[b->q.cur] + jk, b->q.lat[b->q.cur] + jk * ld,
                     fn, user);
        }
    return 0;
}

/* With step_decode: the k of the next call when it can go with this call's decode, else 0;
 * that call's slots in b->next[*nn]. The batch pairs when it is running (an utterance of this
 * call goes on past its ramp, utt_pair_k); else its decode runs alone and batch_plan takes the
 * batch up (a lone stream's or a wave's first audio does not wait for a paired call). Else an
 * utterance of this call goes on in the next (utt_pair_k: in a running batch in its ramp and
 * first call too; batch_early has decoded joiners' first frames apart unless the policy is
 * PTTS_JOIN_THROUGHPUT, ptts_batch_set_joins), or ends with this call's frames
 * (utt_ends: b->ends, completed once its frames are out, hand_out_late), or sits out: its chunk
 * ended and another chunk, a pause or streamed text follows. The batch's other utterances are
 * then made ready (batch_ready) unless they have frames still to hand out (`taken`: this
 * call's and the last call's, whose hand-out comes after this; a chunk begun now would reset
 * the codec, a pause's frames would go out ahead of them): one that has just started, whose
 * streamed text has come or which sat out joins the next call (its chunk begun now); one that
 * waits for text or gives a frame of a pause stays out. The next call is held to the budget
 * while a slot is free or one joins. A join now costs a decode of its first frames alone
 * (batch_early); before, the whole call's decode ran apart from the next step (utt_pair_k),
 * and earlier still it also broke the pairing for the call before it and, on the GPU, for
 * every call of its ramp, and so did every chunk's end, pause, cancel and wait for streamed
 * text; one utterance's end did until d7effd8 (on the H200 that call's decode ran alone, 76 ms
 * where a paired call of 256 streams takes 40; bench/RESULTS.md). */
static int batch_pair_k(ptts_batch *b, int n, int k, int *nn, ptts_batch_fn fn, void *user) {
    *nn = 0;
    if (!b->ops->step_decode || n == 0) return 0;
    const int running = batch_running(b, n, k);
    if (!running) return 0;
    int kn = 1, m = 0, fresh = 0; /* the most frames any wants, as batch_plan */
    for (int j = 0; j < n; j++) {
        const utt *u = &b->u[b->active[j]];
        b->ends[j] = 0;
        if (!u->voice) continue; /* cancelled since the call was computed: no frame, no step */
        /* an utterance's first frames still in this decode (PTTS_JOIN_THROUGHPUT; else
         * batch_early decoded them apart): the next call held to the budget, they go out
         * after it */
        fresh |= first_frames(u, b->dc[j]);
        int kj = utt_pair_k(u, b->counts[j], k, b->kmax, running);
        b->ends[j] = kj == 0 && utt_ends(u);
        if (kj == 0) continue; /* ends, or sits out until its frames are out (taken) */
        kn = PTTS_MAX(kn, kj);
        b->next[m++] = b->active[j];
    }
    memset(b->taken, 0, (size_t)b->n_slots);
    for (int j = 0; j < n; j++)
        b->taken[b->active[j]] = 1;
    for (int j = 0; j < b->dn; j++) /* the last call's frames, not out yet (hand_out_late) */
        if ((b->dend[j] || b->dcount[j] > 0) && b->depoch[j] == b->epoch[b->dslot[j]])
            b->taken[b->dslot[j]] = 1;
    for (int i = 0; i < b->n_slots; i++) {
        utt *u = &b->u[i];
        if (!u->voice || b->taken[i] || !batch_ready(b, i, fn, user)) continue;
        kn = PTTS_MAX(kn, utt_plan(u, b->kmax));
        fresh |= u->chunk == 0 && u->step == 0;
        b->next[m++] = i;
    }
    /* held to the call budget (batch_held) while a slot is free (the ending ones counted), one
     * joins (its first frames wait for this call) or first frames are decoded */
    if (m > 1 && (fresh || m < b->n_slots)) kn = PTTS_MIN(kn, batch_kcap(b, m));
    *nn = m;
    return kn;
}

int ptts_batch_step(ptts_batch *b, ptts_batch_fn fn, void *user, ptts_error *e) {
    const ptts_arch *a = &b->m->w->arch;
    const size_t ld = (size_t)a->ld;
    int n, k, rc, buf;
    batch_measure(b);
    if (b->ops->sync && (rc = b->ops->sync(b->eng, e))) { /* the call in flight */
        b->failed = 1;
        return rc;
    }
    if (b->q.pend_k) { /* computed with the last call's decode: the same slots */
        n = b->pend_n;
        k = b->q.pend_k;
        buf = b->q.cur ^ 1;
        b->q.pend_k = 0;
    } else {
        if ((n = batch_plan(b, fn, user, &k)) == 0) return ptts_batch_active(b);
        buf = b->q.cur ^ 1;
        for (int j = 0; j < n; j++) {
            utt *u = &b->u[b->active[j]];
            if ((rc = utt_noise(u, (int)ld, k, b->q.noise + (size_t)j * k * ld,
                                b->q.after + (size_t)j * b->kmax, e)))
                return rc;
            b->pend_live[b->active[j]] = 1;
        }
        if ((rc = b->ops->step(b->eng, b->active, n, k, b->q.noise, b->q.eos[buf], b->q.lat[buf],
                               e))) {
            b->failed = 1;
            return rc;
        }
    }
    b->q.cur = buf;
    /* the EOS rule; a slot cancelled (or restarted) since its frames were computed emits none */
    for (int j = 0; j < n; j++) {
        int slot = b->active[j];
        b->counts[j] = b->pend_live[slot]
                           ? utt_consume(&b->u[slot], k, b->q.eos[buf] + (size_t)j * k,
                                         b->q.after + (size_t)j * b->kmax)
                           : 0;
        b->pend_live[slot] = 0;
    }
    if ((rc = batch_early(b, n, k, fn, user, e))) {
        b->failed = 1;
        return rc;
    }
    int nn;
    int kn = batch_pair_k(b, n, k, &nn, fn, user);
    b->decodes++;
    int late = 0; /* this call's frames are handed out at the next step */
    if (kn > 0) { /* the next call's noise, drawn after this call's EOS rule as it would be */
        for (int j = 0; j < nn; j++) {
            utt *u = &b->u[b->next[j]];
            if ((rc = utt_noise(u, (int)ld, kn, b->q.noise + (size_t)j * kn * ld,
                                b->q.after + (size_t)j * b->kmax, e)))
                return rc;
        }
        b->paired++;
        rc = b->ops->step_decode(b->eng, b->active, n, k, b->dc, b->q.pcm, b->next, nn, kn,
                                 b->q.noise, b->q.eos[buf ^ 1], b->q.lat[buf ^ 1], e);
        late = b->defer;
        if (!rc && !late && b->ops->sync) rc = b->ops->sync(b->eng, e);
        if (!rc) {
            b->q.pend_k = kn;
            b->pend_n = nn;
            for (int j = 0; j < nn; j++)
                b->pend_live[b->next[j]] = 1;
        }
    } else {
        hand_out_late(b, fn, user); /* before this decode writes q.pcm */
        rc = b->ops->decode(b->eng, b->active, n, k, b->dc, b->q.pcm, e);
    }
    if (rc) {
        b->failed = 1;
        return rc;
    }
    if (late) hand_out_late(b, fn, user); /* the last call's, decoded before this one */
    batch_record(b, n, k, b->dc, kn);
    if (kn > 0) memcpy(b->active, b->next, (size_t)nn * sizeof *b->active); /* the pending call's */
    b->k_last = n > 1 ? k : 0;
    b->n_last = n;
    if (!late) hand_out_late(b, fn, user);
    return ptts_batch_active(b);
}

/* ---- stream: one utterance, pulled frame by frame from a one-slot batch ------------------ */

struct ptts_stream {
    ptts_batch *b;         /* one slot (0) */
    int n_ready, next_out; /* frames the last ptts_batch_step handed out, and returned */
    int end_rc;            /* the batch's end report for the slot: 0 complete, < 0 an error */
    ptts_error err;        /* the slot's error message (b->slot_err) */
    ptts_step_record rec;
    /* The frames one ptts_batch_step hands out, copied: up to 2 kmax (a late call's and the
     * call's own, when the call after it cannot be paired) or one frame of a pause. With
     * an engine that syncs, the batch hands a call's frames out while the device computes
     * the next call, so they are copied before the call after that overwrites the batch's
     * buffers. pcm [2 kmax][frame_samples], len [2 kmax] samples (a pause's may be short),
     * recs [2 kmax] (latent: into lat [2 kmax][ld]), pause [2 kmax]. */
    float *pcm, *lat;
    int *len;
    unsigned char *pause;
    ptts_step_record *recs;
};

int ptts_stream_create(ptts_stream **out, const ptts_model *m, ptts_error *e) {
    *out = NULL;
    ptts_stream *s = calloc(1, sizeof *s);
    if (!s) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    int rc = ptts_batch_create(&s->b, m, 1, e);
    if (rc) {
        free(s);
        return rc;
    }
    s->b->slot_err = &s->err;
    const ptts_arch *a = &m->w->arch;
    const size_t nf = 2 * (size_t)s->b->kmax;
    s->pcm = ptts_calloc_aligned(nf * a->frame_samples * sizeof(float));
    s->lat = calloc(nf * a->ld, sizeof(float));
    s->len = calloc(nf, sizeof(int));
    s->pause = calloc(nf, 1);
    s->recs = calloc(nf, sizeof *s->recs);
    if (!s->pcm || !s->lat || !s->len || !s->pause || !s->recs) {
        ptts_stream_free(s);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    *out = s;
    return 0;
}

void ptts_stream_free(ptts_stream *s) {
    if (!s) return;
    ptts_batch_free(s->b);
    ptts_free_aligned(s->pcm);
    free(s->lat);
    free(s->len);
    free(s->pause);
    free(s->recs);
    free(s);
}

/* A new utterance replaces the current one: frames computed ahead for it are dropped. */
static int stream_slot(ptts_stream *s, const ptts_gen_options *o, ptts_error *e) {
    ptts_stream_cancel(s);
    return batch_free_slot(s->b, steps_of(o), e);
}

int ptts_stream_start(ptts_stream *s, const ptts_voice *v, const char *text,
                      const ptts_gen_options *o, ptts_error *e) {
    int slot = stream_slot(s, o, e);
    if (slot >= 0)
        slot = batch_started(s->b, slot, utt_start(&s->b->u[slot], s->b->m, v, text, o, e), e);
    return slot < 0 ? slot : 0;
}

int ptts_stream_start_incremental(ptts_stream *s, const ptts_voice *v, const ptts_gen_options *o,
                                  ptts_error *e) {
    int slot = stream_slot(s, o, e);
    if (slot >= 0)
        slot =
            batch_started(s->b, slot, utt_start_incremental(&s->b->u[slot], s->b->m, v, o, e), e);
    return slot < 0 ? slot : 0;
}

int ptts_stream_feed(ptts_stream *s, const char *text, size_t len, ptts_error *e) {
    return utt_feed(&s->b->u[0], text, len, 0, e);
}

int ptts_stream_flush(ptts_stream *s, ptts_error *e) {
    return utt_feed(&s->b->u[0], NULL, 0, 1, e);
}

int ptts_stream_end(ptts_stream *s, ptts_error *e) { return utt_feed(&s->b->u[0], NULL, 0, 2, e); }

void ptts_stream_cancel(ptts_stream *s) {
    ptts_batch_cancel(s->b, 0);
    s->b->q.pend_k = 0;
    s->n_ready = s->next_out = 0;
}

int ptts_stream_start_chunks(ptts_stream *s, const ptts_voice *v, const ptts_chunk *chunks, int n,
                             const ptts_gen_options *o, ptts_error *e) {
    int slot = stream_slot(s, o, e);
    if (slot >= 0)
        slot = batch_started(s->b, slot,
                             utt_start_chunks(&s->b->u[slot], s->b->m, v, chunks, n, o, e), e);
    return slot < 0 ? slot : 0;
}

static int stream_collect(void *user, int slot, const float *pcm, int n) {
    ptts_stream *s = user;
    const ptts_batch *b = s->b;
    const ptts_arch *a = &b->m->w->arch;
    (void)slot;
    if (!pcm) {
        s->end_rc = n;
        return 0;
    }
    const int j = s->n_ready;
    if (j >= 2 * b->kmax) return 1; /* cannot happen: at most a late call's and its own */
    s->n_ready++;
    s->len[j] = n;
    s->pause[j] = pcm == b->zeros;
    memcpy(s->pcm + (size_t)j * a->frame_samples, pcm, (size_t)n * sizeof(float));
    if (!s->pause[j]) {
        float *lat = s->lat + (size_t)j * a->ld;
        memcpy(lat, b->out.latent, (size_t)a->ld * sizeof(float));
        s->recs[j] = b->out;
        s->recs[j].latent = lat;
    }
    return 0;
}

int ptts_stream_next(ptts_stream *s, float *pcm, ptts_error *e) {
    ptts_batch *b = s->b;
    utt *u = &b->u[0];
    while (s->next_out >= s->n_ready) {
        s->n_ready = s->next_out = 0;
        s->end_rc = 0;
        int active = ptts_batch_step(b, stream_collect, s, e);
        if (active < 0) { /* the utterance is over and the engine is not reused */
            u->voice = NULL;
            b->q.pend_k = 0;
            b->failed = 1;
            return active;
        }
        if (s->n_ready == 0 && (active == 0 || u->waiting)) {
            if (s->end_rc < 0 && e) *e = s->err;
            return s->end_rc;
        }
    }
    const int j = s->next_out++;
    memcpy(pcm, s->pcm + (size_t)j * b->m->w->arch.frame_samples,
           (size_t)s->len[j] * sizeof(float));
    if (!s->pause[j]) s->rec = s->recs[j]; /* a pause's frame leaves the record as it was */
    return s->len[j];
}

void ptts_stream_get_status(const ptts_stream *s, ptts_stream_status *st) {
    const utt *u = &s->b->u[0];
    st->n_chunks = u->chunks_before + u->n_chunks;
    st->chunk = PTTS_MAX(0, PTTS_MIN(u->chunks_before + u->chunk, st->n_chunks - 1));
    st->step = u->step;
    st->frames_total = u->frames_total;
    st->eos_missed = u->eos_missed;
    st->frames_ahead = s->b->q.pend_k;
    st->waiting = u->voice && u->waiting;
}

const ptts_step_record *ptts_stream_last_step(const ptts_stream *s) { return &s->rec; }

void *ptts_stream_engine(const ptts_stream *s, const ptts_engine_ops **ops) {
    *ops = s->b->ops;
    return s->b->eng;
}

int ptts_stream_chunks(const ptts_stream *s, const ptts_chunk **chunks) {
    *chunks = s->b->u[0].chunks;
    return s->b->u[0].n_chunks;
}
