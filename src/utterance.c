/*
 * utterance.c - one utterance of the generation loop (utterance.h): options and their
 * defaults, text to chunks and pauses (text_feed.h), the start of each chunk in the engine's
 * slot, the EOS rule (MODEL.md 8.4), noise (noise.h) and the chunk's fade-in (MODEL.md 6).
 */
#include "utterance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "markup.h"

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

void utt_clear(utt *u) {
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

int utt_start(utt *u, const ptts_model *m, const ptts_voice *v, const char *text,
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
int utt_start_incremental(utt *u, const ptts_model *m, const ptts_voice *v,
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

int utt_feed(utt *u, const char *text, size_t len, int flush, ptts_error *e) {
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

int utt_start_chunks(utt *u, const ptts_model *m, const ptts_voice *v, const ptts_chunk *chunks,
                     int n, const ptts_gen_options *opt, ptts_error *e) {
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

int utt_max_gen(int n_ids) { return (int)ceil(((double)n_ids / 3.0 + 2.0) * 12.5); }

int utt_max_steps(int n_ids, int kmax) { return utt_max_gen(n_ids) + PTTS_MAX(kmax, 1) - 1; }

int utt_ready(utt *u, const ptts_model *m, const ptts_engine_ops *ops, void *eng, int slot,
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
            u->max_gen = utt_max_gen(ch->n_ids);
            if (u->o.frames_after_eos >= 0) {
                u->F = u->o.frames_after_eos;
            } else if (m->recommended_frames_after_eos >= 0) {
                u->F = m->recommended_frames_after_eos;
            } else {
                u->F = ch->guess + 2;
            }
            int rc = ops->begin_chunk(eng, slot, u->voice->st, ch->ids, ch->n_ids,
                                      utt_max_steps(ch->n_ids, ops->max_steps_per_call(eng)), e);
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

int utt_plan(const utt *u, int kmax) { return PTTS_MIN(kmax, u->max_gen - u->step); }

int utt_noise(utt *u, int ld, int k, float *noise, ptts_rng *after, ptts_error *e) {
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
 * behind audio already handed out and take kmax. The ramp counts only when every utterance of
 * a call is in it (batch_plan): one that joins running streams takes their k, held to the
 * call budget (generate.c). The same frames whatever k, up to rounding where the engine picks
 * its kernels by row counts (the GPU's codec): the engine steps the same computation. */
int utt_ramp(const utt *u, int kmax) { return u->chunk == 0 ? PTTS_MIN(kmax, u->step + 1) : kmax; }

/* The k of u's next call when it can be computed with this call's decode (step_decode): u
 * emitted all k frames of this call, which was not its first, and goes on in its chunk; else
 * 0. The call of an utterance's first frames decodes alone and its frames go out at once: a
 * paired call's go out after the next call, which first audio would wait for (on the H200,
 * 1,024 streams joining 341: 535-602 ms). Pairing that call too was measured under a steady
 * load of 1,024 clients on an H100: 4008-4191x against 3417-3471x, but a median first audio of
 * 159-183 ms against 79-82 (bench/RESULTS.md, "Joins that keep the pairing"): a batch's choice
 * (ptts_batch_set_joins); by default a `running` batch decodes a joiner's first frames apart
 * (generate.c, batch_early) and pairs the rest of the call. In its ramp, or in its first call, u
 * pairs only in a running batch (another utterance of the call is past its ramp, so the ramp sets
 * no k, batch_plan); alone, or in a wave that is all in its ramp, it decodes alone. */
int utt_pair_k(const utt *u, int emitted, int k, int kmax, int running) {
    if (!u->voice || emitted != k || !u->in_chunk || u->step >= u->max_gen ||
        (!running && ((u->call_chunk == 0 && u->call_step0 == 0) || utt_ramp(u, kmax) != kmax)))
        return 0;
    return utt_plan(u, kmax);
}

int utt_ends(const utt *u) {
    if (!u->voice || u->incremental || u->silence > 0) return 0;
    /* the chunk utt_ready goes to next: EOS already moved u on (in_chunk 0); max_gen has not */
    int next;
    if (!u->in_chunk)
        next = u->chunk;
    else if (u->step >= u->max_gen)
        next = u->chunk + 1;
    else
        return 0;
    if (next < u->n_chunks) return 0;
    /* the pause utt_ready would begin there (pause[n_chunks]: after the last chunk) */
    return !(u->pause_at <= next && u->pause_at <= u->n_chunks && u->pause[u->pause_at] > 0);
}

int utt_consume(utt *u, int k, const float *eos, const ptts_rng *after) {
    u->call_chunk = u->chunk;
    u->call_step0 = u->step;
    for (int j = 0; j < k; j++) {
        int s = u->step;
        if (s >= u->max_gen) {     /* computed for the batch's other utterances (batch_plan) */
            u->rng = after[j - 1]; /* j >= 1: a call starts below max_gen (utt_ready) */
            return j;
        }
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
void utt_fade_in(float *pcm, int frame_samples) {
    const int n = PTTS_MIN(FADE_IN_SAMPLES, frame_samples);
    for (int i = 0; i < n; i++)
        pcm[i] *= ptts_linspace_f32(0.f, 1.f, FADE_IN_SAMPLES, i);
}
