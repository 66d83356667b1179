/*
 * generate.c - the generation loop (MODEL.md section 8), written once for every backend.
 *
 * Per text chunk: copy the voice state into the cache, prompt the chunk's token ids, then
 * autoregressive steps s = 0, 1, ...:
 *     h, eos = backbone(latent_{s-1} or BOS);  latent_s = LSD(h, noise_s);
 *     if eos > threshold and no EOS yet: eos_step = s
 *     if eos_step set and s >= eos_step + F: stop (step s is not emitted)
 *     emit decode(latent_s)                      (1920 samples, 80 ms)
 * max_gen_len = ceil((n_tokens / 3 + 2) * 12.5); F = the caller's frames_after_eos, else the
 * model's recommendation, else guess(prepare(chunk)) + 2. The codec restarts from a fresh state
 * for every chunk; the voice is never modified.
 *
 * Noise: xoshiro256++ seeded through splitmix64, standard normals by Box-Muller (in double,
 * both values used), scaled by sqrt(temperature); with noise_clamp, values outside
 * [-clamp, clamp] are redrawn (a truncated normal). Tests replay the reference's draws.
 *
 * The stream is a state machine: ptts_stream_next() advances to the next emitted frame, so a
 * caller (CLI, server) pulls audio as it is produced. Nothing is allocated per frame.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backbone.h"
#include "codec.h"
#include "flow.h"
#include "generate.h"
#include "model.h"
#include "text.h"

/* A chunk of more ids than this is cut at word boundaries (see ptts_chunks_limit): the
 * reference would prompt and generate it whole, with attention over thousands of positions. */
#define PTTS_HARD_MAX_CHUNK_TOKENS 500

struct ptts_stream {
    const ptts_model *m;
    ptts_backbone bb;
    ptts_flow *flow;
    ptts_codec_dec *dec;
    /* utterance */
    const ptts_voice *voice;
    ptts_gen_options o;
    ptts_chunk *chunks;
    int n_chunks, chunk;
    int frames_total, eos_missed;
    uint64_t rng[4];
    int noise_used;
    int has_spare;
    double spare;
    /* chunk */
    int in_chunk, step, eos_step, F, max_gen;
    /* per-step buffers */
    float *latent, *noise, *h;
    float eos;
    int have_latent; /* latent holds the previous step's latent */
    ptts_step_record rec;
};

ptts_gen_options ptts_gen_options_default(void) {
    ptts_gen_options o;
    memset(&o, 0, sizeof o);
    o.temperature = 0.7f;
    o.noise_clamp = 0.f;
    o.eos_threshold = -4.0f;
    o.frames_after_eos = -1;
    o.lsd_steps = 1;
    o.max_tokens = 50;
    return o;
}

/* ---- random numbers ----------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro(uint64_t s[4]) {
    uint64_t r = rotl(s[0] + s[3], 23) + s[0];
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static double uniform01(uint64_t s[4]) { /* (0, 1] */
    return ((double)(xoshiro(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

static double normal(ptts_stream *st) {
    if (st->has_spare) {
        st->has_spare = 0;
        return st->spare;
    }
    double u = uniform01(st->rng), v = uniform01(st->rng);
    double r = sqrt(-2.0 * log(u)), a = 2.0 * 3.14159265358979323846 * v;
    st->spare = r * sin(a);
    st->has_spare = 1;
    return r * cos(a);
}

static void seed_rng(ptts_stream *st, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) st->rng[i] = splitmix64(&x);
    st->has_spare = 0;
}

/* noise_s [ld] */
static int draw_noise(ptts_stream *st, ptts_error *e) {
    const int ld = st->m->w->arch.ld;
    if (st->o.noise) {
        if (st->noise_used >= st->o.noise_rows)
            return ptts_fail(e, PTTS_E_INVALID, "the supplied noise has %d rows; step %d needs "
                                                "more",
                             st->o.noise_rows, st->noise_used);
        memcpy(st->noise, st->o.noise + (size_t)st->noise_used * ld, (size_t)ld * sizeof(float));
        st->noise_used++;
        return 0;
    }
    double std = sqrt((double)st->o.temperature);
    double clamp = st->o.noise_clamp;
    for (int i = 0; i < ld; i++) {
        if (std <= 0.0) {
            st->noise[i] = 0.f;
            continue;
        }
        double v = normal(st) * std;
        /* a truncated normal by rejection; clamps below 0.1 std would spin: clip those */
        if (clamp > 0.0) {
            if (clamp < 0.1 * std)
                v = v > clamp ? clamp : v < -clamp ? -clamp : v;
            else
                while (fabs(v) > clamp) v = normal(st) * std;
        }
        st->noise[i] = (float)v;
    }
    st->noise_used++;
    return 0;
}

/* ---- stream ------------------------------------------------------------------------------- */

int ptts_stream_create(ptts_stream **out, const ptts_model *m, ptts_error *e) {
    *out = NULL;
    ptts_stream *s = calloc(1, sizeof *s);
    if (!s) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    s->m = m;
    const ptts_arch *a = &m->w->arch;
    int rc = ptts_backbone_init(&s->bb, m->w, 512, e);
    if (!rc) rc = ptts_codec_dec_create(&s->dec, m->w, e);
    if (!rc) rc = ptts_flow_create(&s->flow, m->w, 1, 1, e);
    if (!rc) {
        s->latent = ptts_calloc_aligned((size_t)a->ld * sizeof(float));
        s->noise = ptts_calloc_aligned((size_t)a->ld * sizeof(float));
        s->h = ptts_calloc_aligned((size_t)a->d * sizeof(float));
        if (!s->latent || !s->noise || !s->h) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    if (rc) {
        ptts_stream_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static void clear_utterance(ptts_stream *s) {
    ptts_chunks_free(s->chunks, s->n_chunks);
    s->chunks = NULL;
    s->n_chunks = 0;
    s->chunk = 0;
    s->in_chunk = 0;
    s->voice = NULL;
}

void ptts_stream_free(ptts_stream *s) {
    if (!s) return;
    clear_utterance(s);
    ptts_backbone_free(&s->bb);
    ptts_codec_dec_free(s->dec);
    ptts_flow_free(s->flow);
    ptts_free_aligned(s->latent);
    ptts_free_aligned(s->noise);
    ptts_free_aligned(s->h);
    free(s);
}

static int check_options(const ptts_gen_options *o, ptts_error *e) {
    if (!(o->temperature >= 0.f) || o->temperature > 100.f)
        return ptts_fail(e, PTTS_E_INVALID, "temperature must be in [0, 100], got %g",
                         (double)o->temperature);
    if (o->noise_clamp != o->noise_clamp)
        return ptts_fail(e, PTTS_E_INVALID, "noise_clamp is not a number");
    if (o->eos_threshold != o->eos_threshold)
        return ptts_fail(e, PTTS_E_INVALID, "eos_threshold is not a number");
    if (o->lsd_steps < 0 || o->lsd_steps > 1000)
        return ptts_fail(e, PTTS_E_INVALID, "lsd_decode_steps must be in [1, 1000], got %d",
                         o->lsd_steps);
    if (o->max_tokens < 0 || o->max_tokens > 100000)
        return ptts_fail(e, PTTS_E_INVALID, "max_tokens must be in [1, 100000], got %d",
                         o->max_tokens);
    if (o->frames_after_eos > 100000)
        return ptts_fail(e, PTTS_E_INVALID, "frames_after_eos too large: %d", o->frames_after_eos);
    if (o->noise && o->noise_rows <= 0)
        return ptts_fail(e, PTTS_E_INVALID, "noise given without rows");
    return 0;
}

int ptts_stream_start(ptts_stream *s, const ptts_voice *v, const char *text,
                      const ptts_gen_options *opt, ptts_error *e) {
    clear_utterance(s);
    if (!v || !text) return ptts_fail(e, PTTS_E_INVALID, "a voice and a text are required");
    s->o = opt ? *opt : ptts_gen_options_default();
    if (s->o.lsd_steps == 0) s->o.lsd_steps = 1;
    if (s->o.max_tokens == 0) s->o.max_tokens = 50;
    int rc = check_options(&s->o, e);
    if (rc) return rc;
    const ptts_model *m = s->m;
    if (ptts_flow_steps(s->flow) != s->o.lsd_steps) {
        ptts_flow *f;
        if ((rc = ptts_flow_create(&f, m->w, s->o.lsd_steps, 1, e))) return rc;
        ptts_flow_free(s->flow);
        s->flow = f;
    }
    rc = ptts_text_split(m->tok, text, s->o.max_tokens, m->pad_with_spaces,
                         m->remove_semicolons, &s->chunks, &s->n_chunks, e);
    if (!rc)
        rc = ptts_chunks_limit(m->tok, &s->chunks, &s->n_chunks, s->o.max_tokens,
                               PTTS_MAX(PTTS_HARD_MAX_CHUNK_TOKENS, s->o.max_tokens), e);
    if (rc) {
        clear_utterance(s);
        return rc;
    }
    for (int i = 0; i < s->n_chunks; i++)
        for (int j = 0; j < s->chunks[i].n_ids; j++)
            if (s->chunks[i].ids[j] < 0 || s->chunks[i].ids[j] >= m->w->arch.nb) {
                int bad = s->chunks[i].ids[j];
                clear_utterance(s);
                return ptts_fail(e, PTTS_E_MODEL, "token id %d is outside the model's "
                                                  "vocabulary of %d",
                                 bad, m->w->arch.nb);
            }
    s->voice = v;
    uint64_t seed = s->o.seed;
    if (!s->o.seed_set) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid() ^
                     (uint64_t)(uintptr_t)s;
        seed = splitmix64(&x);
    }
    seed_rng(s, seed);
    s->noise_used = 0;
    s->frames_total = 0;
    s->eos_missed = 0;
    return 0;
}

static int begin_chunk(ptts_stream *s, ptts_error *e) {
    const ptts_model *m = s->m;
    const ptts_chunk *ch = &s->chunks[s->chunk];
    s->max_gen = (int)ceil(((double)ch->n_ids / 3.0 + 2.0) * 12.5);
    if (s->o.frames_after_eos >= 0) {
        s->F = s->o.frames_after_eos;
    } else if (m->recommended_frames_after_eos >= 0) {
        s->F = m->recommended_frames_after_eos;
    } else {
        char *prep = NULL;
        int guess = 1;
        int rc = ptts_text_prepare(ch->text, 0, 0, &prep, &guess, e);
        free(prep);
        if (rc) guess = 1; /* a chunk of only whitespace cannot occur after split */
        s->F = guess + 2;
    }
    const ptts_voice_state *vs = s->voice->st;
    int rc = ptts_backbone_reserve(&s->bb, vs->positions + ch->n_ids + s->max_gen + 1, e);
    if (rc) return rc;
    if ((rc = ptts_backbone_set_voice(&s->bb, vs, e))) return rc;
    ptts_backbone_prompt_tokens(&s->bb, &m->ctx, ch->ids, ch->n_ids);
    ptts_codec_dec_reset(s->dec);
    s->step = 0;
    s->eos_step = -1;
    s->have_latent = 0;
    s->in_chunk = 1;
    return 0;
}

static int step_frame(ptts_stream *s, float *pcm, ptts_error *e) {
    const ptts_model *m = s->m;
    for (;;) {
        if (!s->in_chunk) {
            if (s->chunk >= s->n_chunks) return 0;
            int rc = begin_chunk(s, e);
            if (rc) return rc;
        }
        if (s->step >= s->max_gen) {
            if (s->eos_step < 0) {
                s->eos_missed++;
                ptts_log(PTTS_LOG_WARN, "chunk %d reached max_gen_len (%d frames) without EOS",
                         s->chunk, s->max_gen);
            }
            s->in_chunk = 0;
            s->chunk++;
            continue;
        }
        int rc = draw_noise(s, e);
        if (rc) return rc;
        ptts_backbone_step(&s->bb, &m->ctx, s->have_latent ? s->latent : NULL, s->h, &s->eos);
        ptts_flow_sample(s->flow, &m->ctx, s->h, s->noise, 1, s->latent);
        s->have_latent = 1;
        s->rec.eos = s->eos;
        s->rec.latent = s->latent;
        s->rec.chunk = s->chunk;
        s->rec.step = s->step;
        if (s->eos > s->o.eos_threshold && s->eos_step < 0) s->eos_step = s->step;
        if (s->eos_step >= 0 && s->step >= s->eos_step + s->F) {
            s->rec.emitted = 0;
            s->in_chunk = 0;
            s->chunk++;
            continue;
        }
        s->rec.emitted = 1;
        ptts_codec_dec_frame(s->dec, &m->ctx, s->latent, pcm, NULL);
        s->step++;
        s->frames_total++;
        return m->w->arch.frame_samples;
    }
}

int ptts_stream_next(ptts_stream *s, float *pcm, ptts_error *e) {
    if (!s->voice) return 0;
    int rc = step_frame(s, pcm, e);
    if (rc <= 0) {
        /* finished or failed: the utterance is over */
        s->voice = NULL;
    }
    return rc;
}

void ptts_stream_get_status(const ptts_stream *s, ptts_stream_status *st) {
    st->chunk = s->chunk;
    st->n_chunks = s->n_chunks;
    st->step = s->step;
    st->frames_total = s->frames_total;
    st->eos_missed = s->eos_missed;
}

const ptts_step_record *ptts_stream_last_step(const ptts_stream *s) { return &s->rec; }

int ptts_stream_chunks(const ptts_stream *s, const ptts_chunk **chunks) {
    *chunks = s->chunks;
    return s->n_chunks;
}

int ptts_synthesize(const ptts_model *m, const ptts_voice *v, const char *text,
                    const ptts_gen_options *o, ptts_audio_fn fn, void *user, ptts_error *e) {
    ptts_stream *s;
    int rc = ptts_stream_create(&s, m, e);
    if (rc) return rc;
    float *pcm = ptts_calloc_aligned((size_t)m->w->arch.frame_samples * sizeof(float));
    if (!pcm) {
        ptts_stream_free(s);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    rc = ptts_stream_start(s, v, text, o, e);
    while (!rc) {
        int n = ptts_stream_next(s, pcm, e);
        if (n < 0) {
            rc = n;
            break;
        }
        if (n == 0) break;
        if (fn && fn(user, pcm, n)) {
            rc = ptts_fail(e, PTTS_E_CANCELLED, "cancelled by the caller");
            break;
        }
    }
    ptts_free_aligned(pcm);
    ptts_stream_free(s);
    return rc;
}
