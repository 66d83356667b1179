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
 * The per-utterance state (chunks, EOS bookkeeping, noise) is `utt`; the compute is an engine
 * (engine.h) with one slot per utterance. A batch advances many utterances together, one step
 * call at a time, through a many-slot engine (weights read once per step for all of them); a
 * stream is a one-slot batch whose frames are pulled one by one. When an engine runs k steps
 * per call, the noise generator is rewound to just after the last step the rule consumed, so
 * the draws do not depend on k. Nothing is allocated per frame.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "engine.h"
#include "generate.h"
#include "markup.h"
#include "model.h"
#include "noise.h"
#include "text_feed.h"

/* A chunk of more ids than this is cut at word boundaries (see ptts_chunks_limit): the
 * reference would prompt and generate it whole, with attention over thousands of positions. */
#define PTTS_HARD_MAX_CHUNK_TOKENS 500

/* EOS logits of a chunk's steps 0..5 are ignored (forgotten, not postponed: a later step must
 * cross the threshold again), MODEL.md 8.4. Not configurable in the reference either. */
#define PTTS_EOS_MIN_STEP 6

/* Each chunk's first FADE_IN_SAMPLES samples (sample_rate / 200: 5 ms) fade in, MODEL.md 6. */
#define FADE_IN_SAMPLES 120

ptts_gen_options ptts_gen_options_default(void) {
    ptts_gen_options o;
    memset(&o, 0, sizeof o); /* every default is zero-encoded (ptts.h) */
    return o;
}

/* One utterance: text chunks and the pauses around them, position in them, EOS bookkeeping,
 * noise; with incremental text, the bytes fed that are not chunks yet. */
typedef struct utt {
    const ptts_voice *voice; /* NULL: no utterance */
    ptts_gen_options o;
    unsigned markup; /* markup.h flags */
    int64_t gap;     /* sentence_silence in samples */
    ptts_chunk *chunks;
    int64_t *pause; /* [n_chunks + 1]: zeros before chunk i, pause[n_chunks] after the last */
    int n_chunks, chunk;
    int pause_at;      /* pause[pause_at] is the next pause not begun */
    int64_t silence;   /* samples of the current pause still to emit */
    int chunks_before; /* incremental: chunks of earlier pieces (freed once spoken) */
    int incremental, waiting, had_items, text_failed;
    ptts_feed feed; /* incremental: the text not yet chunks */
    int frames_total, eos_missed;
    ptts_rng rng;
    int in_chunk, step, eos_step, F, max_gen;
    int noise_short; /* supplied noise ran out at a step the rule needed: 1 + its row index */
    int call_chunk, call_step0; /* chunk and first step of the last consumed call's frames */
} utt;

static void utt_clear(utt *u) {
    ptts_chunks_free(u->chunks, u->n_chunks);
    free(u->pause);
    ptts_feed_free(&u->feed);
    memset(u, 0, sizeof *u);
}

static int check_options(const ptts_gen_options *o, ptts_error *e) {
    if (!(o->temperature >= 0.f) || o->temperature > 100.f)
        return ptts_fail(e, PTTS_E_INVALID, "temperature must be in [0, 100], got %g",
                         (double)o->temperature);
    if (o->noise_clamp != o->noise_clamp)
        return ptts_fail(e, PTTS_E_INVALID, "noise_clamp is not a number");
    if (o->eos_threshold != o->eos_threshold)
        return ptts_fail(e, PTTS_E_INVALID, "eos_threshold is not a number");
    if (o->sampler_steps < 0 || o->sampler_steps > 1000)
        return ptts_fail(e, PTTS_E_INVALID, "sampler_steps must be in [1, 1000], got %d",
                         o->sampler_steps);
    if (o->max_tokens < 0 || o->max_tokens > 100000)
        return ptts_fail(e, PTTS_E_INVALID, "max_tokens must be in [1, 100000], got %d",
                         o->max_tokens);
    if (o->frames_after_eos > 100000)
        return ptts_fail(e, PTTS_E_INVALID, "frames_after_eos too large: %d", o->frames_after_eos);
    if (o->noise && o->noise_rows <= 0)
        return ptts_fail(e, PTTS_E_INVALID, "noise given without rows");
    if (o->markup != PTTS_MARKUP_OFF && (o->markup < 0 || o->markup > 7))
        return ptts_fail(e, PTTS_E_INVALID, "markup must be 0, PTTS_MARKUP_OFF or flags, got %d",
                         o->markup);
    if (!(o->sentence_silence >= 0.f) || o->sentence_silence > 10.f)
        return ptts_fail(e, PTTS_E_INVALID, "sentence_silence must be in [0, 10] s, got %g",
                         (double)o->sentence_silence);
    return 0;
}

/* The options with their defaults filled in (ptts.h: zero means default) and checked, and the
 * voice checked against the model. */
static int utt_options(utt *u, const ptts_model *m, const ptts_voice *v,
                       const ptts_gen_options *opt, ptts_error *e) {
    if (!v) return ptts_fail(e, PTTS_E_INVALID, "a voice is required");
    u->o = opt ? *opt : ptts_gen_options_default();
    if (!u->o.temperature_set) u->o.temperature = m->default_temperature;
    if (!u->o.eos_threshold_set) u->o.eos_threshold = -4.0f;
    if (!u->o.frames_after_eos_set) u->o.frames_after_eos = -1;
    if (u->o.sampler_steps == 0) u->o.sampler_steps = 1;
    if (u->o.max_tokens == 0) u->o.max_tokens = 50;
    int rc = check_options(&u->o, e);
    if (rc) return rc;
    u->markup = u->o.markup == 0                 ? PTTS_MARKUP_ALL
                : u->o.markup == PTTS_MARKUP_OFF ? 0u
                                                 : (unsigned)u->o.markup;
    u->gap = (int64_t)llround((double)u->o.sentence_silence * PTTS_SAMPLE_RATE);
    const ptts_arch *a = &m->w->arch;
    const ptts_voice_state *vs = v->st;
    if (vs->layers != a->layers || vs->heads != a->heads || vs->heads * vs->dh != a->d)
        return ptts_fail(e, PTTS_E_MODEL,
                         "voice state has %d layers x %d heads x %d, the model needs %d x %d x %d",
                         vs->layers, vs->heads, vs->dh, a->layers, a->heads, a->d / a->heads);
    return 0;
}

/* The chunks' ids against the model's vocabulary. */
static int check_ids(const ptts_model *m, const ptts_chunk *c, int n, ptts_error *e) {
    const int nb = m->w->arch.nb;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < c[i].n_ids; j++)
            if (c[i].ids[j] < 0 || c[i].ids[j] >= nb)
                return ptts_fail(e, PTTS_E_MODEL,
                                 "token id %d is outside the model's vocabulary of %d", c[i].ids[j],
                                 nb);
    return 0;
}

/* With u->chunks and u->pause in place: checks the ids and seeds the noise. On an error the
 * utterance is cleared. */
static int utt_finish(utt *u, const ptts_model *m, const ptts_voice *v, ptts_error *e) {
    int rc = u->pause ? check_ids(m, u->chunks, u->n_chunks, e)
                      : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    if (rc) {
        utt_clear(u);
        return rc;
    }
    ptts_rng_seed(&u->rng, u->o.seed_set, u->o.seed, (uint64_t)(uintptr_t)u);
    u->voice = v;
    return 0;
}

/* text[0..len) as the utterance's options make it chunks and pauses. */
static int utt_items(const utt *u, const ptts_model *m, const char *text, size_t len,
                     ptts_items *it, ptts_error *e) {
    return ptts_items_build(m->tok, &m->text, text, len, u->markup, u->o.max_tokens,
                            PTTS_MAX(PTTS_HARD_MAX_CHUNK_TOKENS, u->o.max_tokens), u->gap, it, e);
}

static int utt_start(utt *u, const ptts_model *m, const ptts_voice *v, const char *text,
                     const ptts_gen_options *opt, ptts_error *e) {
    utt_clear(u);
    if (!text) return ptts_fail(e, PTTS_E_INVALID, "a text is required");
    int rc = utt_options(u, m, v, opt, e);
    ptts_items it;
    if (!rc) rc = utt_items(u, m, text, strlen(text), &it, e);
    if (rc) {
        utt_clear(u);
        return rc;
    }
    u->chunks = it.chunks;
    u->n_chunks = it.n;
    u->pause = it.pause;
    return utt_finish(u, m, v, e);
}

/* An utterance whose text is fed later (utt_feed, utt_take). */
static int utt_start_incremental(utt *u, const ptts_model *m, const ptts_voice *v,
                                 const ptts_gen_options *opt, ptts_error *e) {
    utt_clear(u);
    int rc = utt_options(u, m, v, opt, e);
    if (rc) {
        utt_clear(u);
        return rc;
    }
    u->incremental = 1;
    u->pause = calloc(1, sizeof *u->pause);
    return utt_finish(u, m, v, e);
}

/* Text for an incremental utterance (PTTS_E_INVALID on any other). */
static int utt_feed(utt *u, const char *text, size_t len, int flush, ptts_error *e) {
    if (!u->voice || !u->incremental)
        return ptts_fail(e, PTTS_E_INVALID, "%s",
                         !u->voice ? "no utterance to feed"
                                   : "the utterance was not started incrementally");
    int rc = ptts_feed_append(&u->feed, text, len, e);
    return rc || !flush ? rc : ptts_feed_flush(&u->feed, flush > 1, e);
}

static int is_blank_text(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) return 0;
    return 1;
}

/* Incremental, every chunk spoken: the complete text fed so far becomes the next chunks (the
 * spoken ones are freed). 1: new chunks, 0: none yet (waiting, or ended: complete), < 0 error. */
static int utt_take(utt *u, const ptts_model *m, ptts_error *e) {
    char *t;
    size_t len;
    int rc = ptts_feed_take(&u->feed, u->markup, &t, &len, e);
    if (rc) return rc;
    ptts_items it = {0};
    /* the blank rest of a text or a flush of blanks is dropped; an empty text is the error */
    if (!(t ? is_blank_text(t, len) && (u->had_items || !u->feed.ended)
            : u->had_items || !u->feed.ended)) {
        rc = utt_items(u, m, t ? t : "", len, &it, e);
        if (!rc) rc = check_ids(m, it.chunks, it.n, e);
    }
    free(t);
    if (rc) {
        ptts_items_free(&it);
        return rc;
    }
    if (!it.pause) return 0;
    /* sentence_silence between the last spoken chunk and this piece's first, unless a pause
     * separates them */
    if (u->n_chunks + u->chunks_before > 0 && u->pause[u->n_chunks] == 0 && it.n > 0 &&
        it.pause[0] == 0)
        it.pause[0] = u->gap;
    u->chunks_before += u->n_chunks;
    ptts_chunks_free(u->chunks, u->n_chunks);
    free(u->pause);
    u->chunks = it.chunks;
    u->n_chunks = it.n;
    u->pause = it.pause;
    u->chunk = u->pause_at = 0;
    u->had_items = 1;
    return 1;
}

/* A deep copy of n chunks into u->chunks. */
static int utt_copy_chunks(utt *u, const ptts_chunk *src, int n, ptts_error *e) {
    if (!src || n < 1) return ptts_fail(e, PTTS_E_INVALID, "at least one chunk is required");
    u->chunks = calloc((size_t)n, sizeof *u->chunks);
    if (!u->chunks) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    u->n_chunks = n;
    for (int i = 0; i < n; i++) {
        const ptts_chunk *c = &src[i];
        ptts_chunk *d = &u->chunks[i];
        if (c->n_ids < 1 || c->n_ids > PTTS_HARD_MAX_CHUNK_TOKENS || !c->ids)
            return ptts_fail(e, PTTS_E_INVALID, "chunk %d has %d ids (1 to %d)", i, c->n_ids,
                             PTTS_HARD_MAX_CHUNK_TOKENS);
        d->text = ptts_strdup(c->text ? c->text : "");
        d->model_text = ptts_strdup(c->model_text ? c->model_text : "");
        d->ids = malloc((size_t)c->n_ids * sizeof *d->ids);
        if (!d->text || !d->model_text || !d->ids)
            return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        memcpy(d->ids, c->ids, (size_t)c->n_ids * sizeof *d->ids);
        d->n_ids = c->n_ids;
        d->guess = c->guess;
    }
    return 0;
}

static int utt_start_chunks(utt *u, const ptts_model *m, const ptts_voice *v,
                            const ptts_chunk *chunks, int n, const ptts_gen_options *opt,
                            ptts_error *e) {
    utt_clear(u);
    int rc = utt_options(u, m, v, opt, e);
    if (!rc) rc = utt_copy_chunks(u, chunks, n, e);
    if (!rc && !(u->pause = calloc((size_t)n + 1, sizeof *u->pause)))
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    if (rc) {
        utt_clear(u);
        return rc;
    }
    return utt_finish(u, m, v, e);
}

/* What utt_ready found. */
enum { UTT_DONE = 0, UTT_STEP = 1, UTT_SILENCE = 2, UTT_WAIT = 3 };

/* Make sure the utterance is inside a chunk (beginning the next one in the engine's slot), in
 * a pause or waiting for text. Returns UTT_STEP when there is a step to run, UTT_SILENCE when
 * u->silence samples of a pause come first, UTT_WAIT when incremental text must arrive first,
 * UTT_DONE when the utterance is complete, < 0 on error. */
static int utt_ready(utt *u, const ptts_model *m, const ptts_engine_ops *ops, void *eng, int slot,
                     ptts_error *e) {
    u->waiting = 0;
    if (u->voice && u->noise_short)
        return ptts_fail(e, PTTS_E_INVALID, "the supplied noise has %d rows; step %d needs more",
                         u->o.noise_rows, u->noise_short - 1);
    for (;;) {
        if (!u->voice) return UTT_DONE;
        if (!u->in_chunk) {
            if (u->pause_at <= u->chunk && u->pause_at <= u->n_chunks) {
                u->silence = u->pause[u->pause_at];
                u->pause_at = u->chunk + 1;
            }
            if (u->silence > 0) return UTT_SILENCE;
            if (u->chunk >= u->n_chunks) {
                int rc = u->incremental ? utt_take(u, m, e) : 0;
                if (rc < 0) {
                    u->text_failed = 1;
                    return rc;
                }
                if (rc > 0) continue;
                if (u->incremental && !u->feed.ended) {
                    u->waiting = 1;
                    return UTT_WAIT;
                }
                return UTT_DONE;
            }
            const ptts_chunk *ch = &u->chunks[u->chunk];
            u->max_gen = (int)ceil(((double)ch->n_ids / 3.0 + 2.0) * 12.5);
            if (u->o.frames_after_eos >= 0) {
                u->F = u->o.frames_after_eos;
            } else if (m->recommended_frames_after_eos >= 0) {
                u->F = m->recommended_frames_after_eos;
            } else {
                u->F = ch->guess + 2;
            }
            int rc = ops->begin_chunk(eng, slot, u->voice->st, ch->ids, ch->n_ids, u->max_gen, e);
            if (rc) return rc;
            u->step = 0;
            u->eos_step = -1;
            u->in_chunk = 1;
        }
        if (u->step < u->max_gen) return UTT_STEP;
        if (u->eos_step < 0) {
            u->eos_missed++;
            ptts_log(PTTS_LOG_WARN, "chunk %d reached max_gen_len (%d frames) without EOS",
                     u->chunk, u->max_gen);
        }
        u->in_chunk = 0;
        u->chunk++;
    }
}

/* Steps this utterance may take in one call (>= 1 when utt_ready said 1). */
static int utt_plan(const utt *u, int kmax) { return PTTS_MIN(kmax, u->max_gen - u->step); }

/* Noise for k steps, remembering the generator after each draw (for the rewind). */
static int utt_noise(utt *u, int ld, int k, float *noise, ptts_rng *after, ptts_error *e) {
    for (int j = 0; j < k; j++) {
        int rc = ptts_noise_draw(&u->rng, &u->o, ld, noise + (size_t)j * ld, e);
        if (rc) return rc;
        after[j] = u->rng;
    }
    return 0;
}

/* The most frames the next call should compute for u: in the first chunk 1, 2, 4, ... up to
 * kmax (the GPU's 8). The first audio then waits for one frame's work instead of kmax frames'
 * (H200: 3.9 against 7.3 ms in bench_vulkan), and during the ramp no call computes more frames
 * than are buffered ahead of it, so a slow device keeps up with playback. Later chunks start
 * behind audio already handed out and take kmax. Same frames whatever k: the engine steps the
 * same computation. */
static int utt_ramp(const utt *u, int kmax) {
    return u->chunk == 0 ? PTTS_MIN(kmax, u->step + 1) : kmax;
}

/* The k of u's next call when it can be computed with this call's decode (step_decode): u
 * emitted all k frames of this call and goes on in its chunk past the ramp (in the ramp the
 * decode runs alone, so that first audio waits for nothing more); else 0. */
static int utt_pair_k(const utt *u, int emitted, int k, int kmax) {
    if (!u->voice || emitted != k || !u->in_chunk || u->step >= u->max_gen ||
        utt_ramp(u, kmax) != kmax)
        return 0;
    return utt_plan(u, kmax);
}

/* Apply the EOS rule to k computed steps; returns how many frames to emit (a prefix). */
static int utt_consume(utt *u, int k, const float *eos, const ptts_rng *after) {
    u->call_chunk = u->chunk;
    u->call_step0 = u->step;
    for (int j = 0; j < k; j++) {
        int s = u->step;
        if (u->o.noise && after[j].noise_used > u->o.noise_rows) { /* step s had no row */
            u->noise_short = after[j].noise_used;
            u->rng = after[j];
            return j;
        }
        if (eos[j] > u->o.eos_threshold && u->eos_step < 0 && s >= PTTS_EOS_MIN_STEP)
            u->eos_step = s;
        if (u->eos_step >= 0 && s >= u->eos_step + u->F) {
            u->rng = after[j]; /* step s was computed (its noise drawn) but not emitted */
            u->in_chunk = 0;
            u->chunk++;
            return j;
        }
        u->step++;
        u->frames_total++;
    }
    u->rng = after[k - 1];
    return k;
}

/* The chunk's first samples times torch's float32 linspace(0, 1, 120) (MODEL.md 6), in place
 * on pcm [frame_samples]: the first frame a fresh decoder gave for the chunk. */
static void fade_in(float *pcm, int frame_samples) {
    const int n = PTTS_MIN(FADE_IN_SAMPLES, frame_samples);
    for (int i = 0; i < n; i++)
        pcm[i] *= ptts_linspace_f32(0.f, 1.f, FADE_IN_SAMPLES, i);
}

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

struct ptts_batch {
    const ptts_model *m;
    const ptts_engine_ops *ops;
    void *eng;
    int n_slots, kmax, sampler_steps;
    utt *u;                   /* [n_slots] */
    int *active;              /* slot ids stepped this call */
    int *counts;              /* frames to emit per stepped slot */
    step_bufs q;              /* [n_slots] slots; pending frames are for the same slots */
    int pend_n;               /* how many slots the pending call stepped */
    unsigned char *pend_live; /* [n_slots]: the slot's utterance has pending frames */
    float *zeros;             /* [frame_samples]: a frame of a pause */
    ptts_error *slot_err;     /* a stream's: where a slot's error goes (NULL: logged) */
    int failed;               /* an engine operation failed: the engine is not reused */
    /* Frames handed out one call late (an engine with sync, a batch not a stream's): a paired
     * call's decode is still running when step returns, so its frames go out at the next
     * step, after the call after it is submitted; the host hands out frames while the device
     * computes (the server's frame callbacks were 15% of its generation thread's time on the
     * H200, bench/RESULTS.md). d*: that call's slots, counts, first-frame fades and the
     * utterance each was for (epoch: a slot's restarts and cancels since). */
    int defer, dn, dk;
    int *dslot, *dcount;
    unsigned char *dfade;
    unsigned *depoch, *epoch;
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
        b->u = calloc((size_t)max_streams, sizeof *b->u);
        b->active = calloc((size_t)max_streams, sizeof *b->active);
        b->counts = calloc((size_t)max_streams, sizeof *b->counts);
        b->pend_live = calloc((size_t)max_streams, 1);
        b->zeros = calloc((size_t)m->w->arch.frame_samples, sizeof *b->zeros);
        b->defer = b->ops->sync != NULL;
        b->dslot = calloc((size_t)max_streams, sizeof *b->dslot);
        b->dcount = calloc((size_t)max_streams, sizeof *b->dcount);
        b->dfade = calloc((size_t)max_streams, 1);
        b->depoch = calloc((size_t)max_streams, sizeof *b->depoch);
        b->epoch = calloc((size_t)max_streams, sizeof *b->epoch);
        rc = bufs_alloc(&b->q, (size_t)max_streams, (size_t)b->kmax, &m->w->arch, e);
        if (!rc && !(b->u && b->active && b->counts && b->pend_live && b->zeros && b->dslot &&
                     b->dcount && b->dfade && b->depoch && b->epoch))
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
    bufs_free(&b->q);
    free(b->pend_live);
    free(b->zeros);
    free(b->dslot);
    free(b->dcount);
    free(b->dfade);
    free(b->depoch);
    free(b->epoch);
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

/* The batch's slots for a fresh step call (every utterance that is ready, beginning chunks as
 * needed; those that end are reported) and its k: how many slots, < 0 on an error. */
static int batch_plan(ptts_batch *b, ptts_batch_fn fn, void *user, int *kout) {
    /* every active utterance takes the same k: the smallest remaining budget, and the ramp
     * (utt_ramp) only while every utterance is in it: one that arrives at an idle batch gets
     * its first audio after one frame's work; one that joins running streams waits a call of
     * kmax frames, so that arrivals under load do not hold everyone at small calls */
    int n = 0, k = b->kmax, ramp = 1;
    for (int i = 0; i < b->n_slots; i++) {
        utt *u = &b->u[i];
        if (!u->voice) continue;
        ptts_error se = {0};
        int rc = utt_ready(u, b->m, b->ops, b->eng, i, &se);
        if (rc == UTT_WAIT) continue;
        if (rc == UTT_SILENCE) { /* a frame of the pause (the last one short), no step */
            int ns = (int)PTTS_MIN(u->silence, (int64_t)b->m->w->arch.frame_samples);
            u->silence -= ns;
            if (fn && fn(user, i, b->zeros, ns)) batch_clear(b, i);
            continue;
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
            continue;
        }
        k = PTTS_MIN(k, utt_plan(u, b->kmax));
        ramp = PTTS_MAX(ramp, utt_ramp(u, b->kmax));
        b->active[n++] = i;
    }
    *kout = PTTS_MIN(k, ramp);
    return n;
}

/* With step_decode: the k of the next call when it can go with this call's decode (utt_pair_k
 * of every stepped utterance, and no other utterance waits to join), else 0. */
static int batch_pair_k(const ptts_batch *b, int n, int k) {
    if (!b->ops->step_decode || n != ptts_batch_active(b)) return 0;
    int kn = b->kmax;
    for (int j = 0; j < n; j++) {
        int kj = utt_pair_k(&b->u[b->active[j]], b->counts[j], k, b->kmax);
        if (kj == 0) return 0;
        kn = PTTS_MIN(kn, kj);
    }
    return kn;
}

/* The frames of the last decode in q.pcm (dn slots of dk frames) to the callback, but not
 * those of an utterance cancelled or restarted since. */
static void hand_out_late(ptts_batch *b, ptts_batch_fn fn, void *user) {
    const size_t fs = (size_t)b->m->w->arch.frame_samples;
    const int n = b->dn, k = b->dk;
    b->dn = 0;
    for (int j = 0; j < n; j++) {
        const int slot = b->dslot[j];
        if (b->depoch[j] != b->epoch[slot] || !b->u[slot].voice) continue;
        if (b->dfade[j]) fade_in(b->q.pcm + (size_t)j * k * fs, (int)fs);
        for (int f = 0; f < b->dcount[j]; f++) {
            if (fn && fn(user, slot, b->q.pcm + ((size_t)j * k + f) * fs, (int)fs)) {
                batch_clear(b, slot);
                break;
            }
        }
    }
}

int ptts_batch_step(ptts_batch *b, ptts_batch_fn fn, void *user, ptts_error *e) {
    const ptts_arch *a = &b->m->w->arch;
    const size_t ld = (size_t)a->ld;
    int n, k, rc, buf;
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
    int kn = batch_pair_k(b, n, k);
    int late = 0; /* this call's frames are handed out at the next step */
    if (kn > 0) { /* the next call's noise, drawn after this call's EOS rule as it would be */
        for (int j = 0; j < n; j++) {
            utt *u = &b->u[b->active[j]];
            if ((rc = utt_noise(u, (int)ld, kn, b->q.noise + (size_t)j * kn * ld,
                                b->q.after + (size_t)j * b->kmax, e)))
                return rc;
        }
        rc = b->ops->step_decode(b->eng, b->active, n, k, b->counts, b->q.pcm, kn, b->q.noise,
                                 b->q.eos[buf ^ 1], b->q.lat[buf ^ 1], e);
        late = b->defer;
        if (!rc && !late && b->ops->sync) rc = b->ops->sync(b->eng, e);
        if (!rc) {
            b->q.pend_k = kn;
            b->pend_n = n;
            for (int j = 0; j < n; j++)
                b->pend_live[b->active[j]] = 1;
        }
    } else {
        hand_out_late(b, fn, user); /* before this decode writes q.pcm */
        rc = b->ops->decode(b->eng, b->active, n, k, b->counts, b->q.pcm, e);
    }
    if (rc) {
        b->failed = 1;
        return rc;
    }
    if (late) hand_out_late(b, fn, user); /* the last call's, decoded before this one */
    for (int j = 0; j < n; j++) {
        int slot = b->active[j];
        b->dslot[j] = slot;
        b->dcount[j] = b->counts[j];
        b->dfade[j] = b->u[slot].call_step0 == 0 && b->counts[j] > 0; /* the chunk's first */
        b->depoch[j] = b->epoch[slot];
    }
    b->dn = n;
    b->dk = k;
    if (!late) hand_out_late(b, fn, user);
    return ptts_batch_active(b);
}

/* ---- stream: one utterance, pulled frame by frame from a one-slot batch ------------------ */

struct ptts_stream {
    ptts_batch *b;         /* one slot (0) */
    int n_ready, next_out; /* frames of the last step call (slot 0's in b->q), handed out */
    int end_rc;            /* the batch's end report for the slot: 0 complete, < 0 an error */
    int sil_n;             /* the last step call gave a frame of a pause of this many samples */
    ptts_error err;        /* the slot's error message (b->slot_err) */
    ptts_step_record rec;
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
    s->b->defer = 0; /* a stream hands its frames out as they are computed */
    *out = s;
    return 0;
}

void ptts_stream_free(ptts_stream *s) {
    if (!s) return;
    ptts_batch_free(s->b);
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
    s->n_ready = s->next_out = s->sil_n = 0;
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
    (void)slot;
    if (pcm == s->b->zeros) s->sil_n = n;
    if (pcm)
        s->n_ready++;
    else
        s->end_rc = n;
    return 0;
}

int ptts_stream_next(ptts_stream *s, float *pcm, ptts_error *e) {
    ptts_batch *b = s->b;
    const ptts_arch *a = &b->m->w->arch;
    utt *u = &b->u[0];
    while (s->next_out >= s->n_ready) {
        s->n_ready = s->next_out = s->sil_n = 0;
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
    int j = s->next_out++;
    if (s->sil_n > 0) { /* a pause's frame: the call stepped nothing else for the slot */
        memset(pcm, 0, (size_t)s->sil_n * sizeof(float));
        return s->sil_n;
    }
    memcpy(pcm, b->q.pcm + (size_t)j * a->frame_samples, (size_t)a->frame_samples * sizeof(float));
    s->rec.chunk = u->call_chunk;
    s->rec.step = u->call_step0 + j;
    s->rec.eos = b->q.eos[b->q.cur][j];
    s->rec.latent = b->q.lat[b->q.cur] + (size_t)j * a->ld;
    return a->frame_samples;
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

int ptts_stream_chunks(const ptts_stream *s, const ptts_chunk **chunks) {
    *chunks = s->b->u[0].chunks;
    return s->b->u[0].n_chunks;
}
