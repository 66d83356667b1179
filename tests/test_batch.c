// ctest-label: parity
/*
 * test_batch.c - several utterances through one ptts_batch give the same audio as each one
 * alone through ptts_synthesize (same seeds), including a slot freed and reused mid-run and a
 * cancelled slot; the reference's generate case replayed inside a batch next to other streams,
 * with the caches sized ahead (ptts_batch_reserve); utterances that join running ones keep the
 * running ones' decodes paired with their next steps (batch_pair_k) and speak as they do alone.
 */
#include "collect.h"
#include "generate.h"
#include "model.h"
#include "replay.h"
#include "test.h"

#define MAXF 400

/* Frames collected per utterance; utt_of_slot maps the batch's slots to utterances. */
typedef struct {
    float *pcm[4];
    int frames[4];
    int ended[4];
    int utt_of_slot[3];
    int cancel_slot, cancel_after;
} collect;

static int on_frame(void *user, int slot, const float *pcm, int n) {
    collect *c = user;
    int u = c->utt_of_slot[slot];
    if (!pcm) {
        c->ended[u] = 1;
        CHECK(n == 0);
        return 0;
    }
    CHECK(n == PTTS_FRAME_SAMPLES);
    if (c->frames[u] < MAXF)
        memcpy(c->pcm[u] + (size_t)c->frames[u] * n, pcm, (size_t)n * sizeof(float));
    c->frames[u]++;
    return slot == c->cancel_slot && c->frames[u] >= c->cancel_after;
}

typedef struct {
    float *pcm;
    int frames;
} single;

static int on_single(void *user, const float *pcm, int n) {
    single *s = user;
    if (s->frames < MAXF) memcpy(s->pcm + (size_t)s->frames * n, pcm, (size_t)n * sizeof(float));
    s->frames++;
    return 0;
}

/* The reference's generate_short replayed in slot 1 (its recorded noise, the eos_case threshold:
 * 16 frames, MODEL.md 8.4) while slots 0 and 2 speak other texts with drawn noise: the frames
 * equal the fixture's within the float32 tolerance. */
static void reference_in_batch(ptts_model *m, const ptts_voice *v, const ptts_voice *vs) {
    ptts_error e = {0};
    int64_t nn = 0, np = 0;
    float *noise = load_f32(fixture_path("tiny/generate_short.safetensors"), "noise", &nn);
    float *ref = load_f32(fixture_path("tiny/generate_short.safetensors"), "pcm", &np);
    REQUIRE(noise && ref);
    ptts_gen_options o[3];
    for (int i = 0; i < 3; i++) {
        o[i] = ptts_gen_options_default();
        o[i].seed = 7 + (uint64_t)i;
        o[i].seed_set = 1;
    }
    o[1].noise = noise;
    o[1].noise_rows = (int)(nn / m->w->arch.ld);
    o[1].eos_threshold = eos_case_threshold();
    o[1].eos_threshold_set = 1;
    const char *texts[3] = {"Hello world. This is a test.", "ok go", "A third voice speaks."};
    const ptts_voice *voices[3] = {v, vs, v};
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    /* the caches sized ahead (as a server does at start) change nothing in the samples */
    CHECKF(ptts_batch_reserve(b, v, 120, &e) == 0, "reserve: %s", e.msg);
    CHECK(ptts_batch_reserve(b, v, 0, &e) == PTTS_E_INVALID);
    CHECK(ptts_batch_reserve(b, v, 5000, &e) == PTTS_E_INVALID);
    CHECK(ptts_batch_reserve(b, NULL, 50, &e) == PTTS_E_INVALID);
    CHECKF(ptts_batch_reserve_clone(b, PTTS_VOICE_CLONE_SECONDS, 58, &e) == 0, "%s", e.msg);
    CHECK(ptts_batch_reserve_clone(b, 0, 58, &e) == PTTS_E_INVALID);
    CHECK(ptts_batch_reserve_clone(b, 1e9, 58, &e) == PTTS_E_INVALID);
    CHECK(ptts_batch_reserve_clone(b, 30, 0, &e) == PTTS_E_INVALID);
    collect c = {.cancel_slot = -1, .utt_of_slot = {0, 1, 2}};
    for (int i = 0; i < 3; i++) {
        c.pcm[i] = calloc((size_t)MAXF * PTTS_FRAME_SAMPLES, sizeof(float));
        CHECKF(ptts_batch_start(b, voices[i], texts[i], &o[i], &e) == i, "%s", e.msg);
    }
    int guard = 0;
    while (ptts_batch_active(b) > 0 && guard++ < 2000)
        CHECKF(ptts_batch_step(b, on_frame, &c, &e) >= 0, "%s", e.msg);
    CHECKF(c.ended[1] && c.frames[1] == 16, "the reference's case in a batch: %d frames, not 16",
           c.frames[1]);
    double worst = 0;
    for (int f = 0; f < c.frames[1] && f < 16 && (f + 1) * PTTS_FRAME_SAMPLES <= np; f++) {
        double r = rel_l2(c.pcm[1] + (size_t)f * PTTS_FRAME_SAMPLES,
                          ref + (size_t)f * PTTS_FRAME_SAMPLES, PTTS_FRAME_SAMPLES);
        if (r > worst) worst = r;
    }
    printf(
        "generate_short in slot 1 of 3: %d frames, max rel err per frame vs the reference %.3g\n",
        c.frames[1], worst);
    CHECK(worst <= 1e-4);
    CHECK(c.frames[0] > 0 && c.frames[2] > 0);
    ptts_batch_free(b);
    for (int i = 0; i < 3; i++)
        free(c.pcm[i]);
    free(noise);
    free(ref);
}

/* The joined utterances' samples (collect.h; frames of pauses may be short) and ends. */
typedef struct {
    audio a[3];
    int ended[3];
} joined;

static int on_joined(void *user, int slot, const float *pcm, int n) {
    joined *c = user;
    if (!pcm)
        c->ended[slot] = 1;
    else
        audio_add(&c->a[slot], pcm, n);
    return 0;
}

static int on_alone(void *user, const float *pcm, int n) {
    audio_add(user, pcm, n);
    return 0;
}

/* Two utterances join a running one, each after a few steps: every call's decode goes with the
 * next step, and a join costs a decode of the joiner's first frames alone (batch_early, which
 * hands them out at once), none with PTTS_JOIN_THROUGHPUT; before, the whole call's decode ran
 * apart from the next step, and earlier still the call before the join's too (14 decodes apart
 * here). The running one goes through chunks (max_tokens) and a pause, the last joiner begins
 * with a pause: an utterance between chunks sits out a call instead of taking the pairing from
 * all. Every utterance's frames (pauses included) are the same as alone. Decodes are counted
 * from the first join until the running utterance ends. */
static void joins_keep_pairing(ptts_model *m, const ptts_voice *v, int policy) {
    ptts_error e = {0};
    static const char *texts[3] = {
        "This one runs for a while, sentence after sentence. <break time=\"200ms\"/> Then it "
        "goes on.",
        "The second joins, and it speaks for a while too. It has a second sentence.",
        "[pause:100ms]And a third one joins it, then says one more thing after that."};
    ptts_gen_options o[3];
    for (int i = 0; i < 3; i++) {
        o[i] = ptts_gen_options_default();
        o[i].seed = 40 + (uint64_t)i;
        o[i].seed_set = 1;
        o[i].eos_threshold = 1e9f; /* to max_gen_len: the running one outlasts both joins */
        o[i].eos_threshold_set = 1;
        o[i].max_tokens = 10;
    }
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    CHECK(ptts_batch_set_joins(b, policy, &e) == 0);
    joined c = {0};
    CHECK(ptts_batch_start(b, v, texts[0], &o[0], &e) == 0);
    long d0 = 0, p0 = 0, x0 = 0, d, p, x;
    int steps = 0, started = 1;
    while (ptts_batch_active(b) > 0 && steps < 2000) {
        CHECKF(ptts_batch_step(b, on_joined, &c, &e) >= 0, "%s", e.msg);
        steps++;
        if (steps % 4 == 0 && started < 3) {
            if (started == 1) ptts_batch_calls(b, &d0, &p0, &x0);
            CHECK(ptts_batch_start(b, v, texts[started], &o[started], &e) == started);
            started++;
        }
        if (c.ended[0] && d0 >= 0) {
            ptts_batch_calls(b, &d, &p, &x);
            const long early = policy == PTTS_JOIN_THROUGHPUT ? 0 : 2;
            printf("two joins into a running utterance (joins %d): %ld decodes, %ld paired with "
                   "a step, %ld of joiners' first frames apart\n",
                   policy, d - d0, p - p0, x - x0);
            CHECKF(started == 3 && d - d0 >= 8 && p - p0 == d - d0 && x - x0 == early,
                   "joins %d: %ld of %ld decodes apart from the next step (0 expected), %ld of "
                   "joiners' first frames (%ld expected)",
                   policy, (d - d0) - (p - p0), d - d0, x - x0, early);
            d0 = -1;
        }
    }
    CHECK(started == 3 && d0 == -1);
    for (int i = 0; i < 3; i++) {
        audio s = {0};
        CHECK(ptts_synthesize(m, v, texts[i], &o[i], on_alone, &s, &e) == 0);
        const audio *g = &c.a[i];
        printf("joined utterance %d: %lld samples in the batch, %lld alone\n", i, (long long)g->n,
               (long long)s.n);
        CHECKF(c.ended[i] && g->n == s.n && s.n > 0 && same(g, 0, &s),
               "joined utterance %d: %lld samples in the batch, %lld alone, or other samples", i,
               (long long)g->n, (long long)s.n);
        audio_free(&s);
        audio_free(&c.a[i]);
    }
    ptts_batch_free(b);
}

int main(void) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    ptts_model *m;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0);
    ptts_voice *v, *vs;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    REQUIRE(ptts_voice_load(&vs, m, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    const char *texts[4] = {"Hello world. This is a test.", "ok go", "A third voice speaks here.",
                            "Short one."};
    const ptts_voice *voices[4] = {v, vs, v, vs};
    ptts_gen_options o[4];
    for (int i = 0; i < 4; i++) {
        o[i] = ptts_gen_options_default();
        o[i].seed = 100 + (uint64_t)i;
        o[i].seed_set = 1;
        o[i].eos_threshold = i == 3 ? -1e9f : 1e9f; /* slot 3 stops at once (F frames) */
        o[i].eos_threshold_set = 1;
        o[i].frames_after_eos = 2;
        o[i].frames_after_eos_set = 1;
    }

    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    collect c = {.cancel_slot = -1};
    for (int i = 0; i < 4; i++)
        c.pcm[i] = calloc((size_t)MAXF * PTTS_FRAME_SAMPLES, sizeof(float));
    /* slots 0, 1, 2 now; the fourth utterance waits for a free slot */
    for (int i = 0; i < 3; i++) {
        int slot = ptts_batch_start(b, voices[i], texts[i], &o[i], &e);
        CHECKF(slot == i, "slot %d: %s", slot, e.msg);
        c.utt_of_slot[i] = i;
    }
    CHECK(ptts_batch_start(b, v, "no room", &o[0], &e) == PTTS_E_BUSY);
    int started4 = 0, guard = 0;
    while (ptts_batch_active(b) > 0 && guard++ < 2000) {
        int left = ptts_batch_step(b, on_frame, &c, &e);
        CHECKF(left >= 0, "%s", e.msg);
        if (!started4 && ptts_batch_active(b) < 3) {
            int s4 = ptts_batch_start(b, voices[3], texts[3], &o[3], &e);
            CHECK(s4 >= 0 && s4 < 3);
            if (s4 >= 0 && s4 < 3) c.utt_of_slot[s4] = 3;
            started4 = 1;
        }
    }
    CHECK(started4);
    for (int i = 0; i < 4; i++)
        CHECK(c.ended[i]);
    /* compare each utterance with the same one alone */
    for (int i = 0; i < 4; i++) {
        single s = {calloc((size_t)MAXF * PTTS_FRAME_SAMPLES, sizeof(float)), 0};
        CHECK(ptts_synthesize(m, voices[i], texts[i], &o[i], on_single, &s, &e) == 0);
        CHECKF(c.frames[i] == s.frames, "utterance %d: %d frames in the batch, %d alone", i,
               c.frames[i], s.frames);
        int nf = PTTS_MIN(PTTS_MIN(c.frames[i], s.frames), MAXF);
        double err = rel_l2(c.pcm[i], s.pcm, (size_t)nf * PTTS_FRAME_SAMPLES);
        printf("utterance %d: %d frames, rel err vs alone %.3g\n", i, nf, err);
        CHECK(nf > 0 && err <= 1e-5);
        free(s.pcm);
    }

    /* cancel: a callback returning nonzero ends that utterance only */
    collect cc = {.cancel_slot = 1, .cancel_after = 3, .utt_of_slot = {0, 1, 2}};
    for (int i = 0; i < 4; i++)
        cc.pcm[i] = c.pcm[i];
    CHECK(ptts_batch_start(b, v, texts[0], &o[0], &e) == 0);
    CHECK(ptts_batch_start(b, v, texts[2], &o[2], &e) == 1);
    guard = 0;
    while (ptts_batch_active(b) > 0 && guard++ < 2000)
        ptts_batch_step(b, on_frame, &cc, &e);
    CHECK(cc.frames[1] == 3);
    CHECK(cc.frames[0] > 3);
    ptts_batch_free(b);
    for (int i = 0; i < 4; i++)
        free(c.pcm[i]);
    reference_in_batch(m, v, vs);
    joins_keep_pairing(m, v, PTTS_JOIN_FIRST_AUDIO);
    joins_keep_pairing(m, v, PTTS_JOIN_THROUGHPUT);
    {
        ptts_batch *b;
        REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
        CHECK(ptts_batch_set_joins(b, 2, &e) == PTTS_E_INVALID && strstr(e.msg, "join policy"));
        ptts_batch_free(b);
    }
    ptts_voice_free(v);
    ptts_voice_free(vs);
    ptts_model_free(m);
    return test_summary();
}
