// ctest-label: unit
/*
 * test_pauses.c - markup in the generation loop (tiny model, no noise): a pause gives exactly
 * its samples of zeros where the markup puts it (frames of PTTS_FRAME_SAMPLES, the last one
 * short) and the speech around it equals each chunk generated alone; sentence_silence between
 * chunks; markup off speaks brackets; invalid markup fails the start with the parser's message;
 * a batch slot gives the same frames.
 */
#include "collect.h"
#include "generate.h"

static ptts_model *m;
static ptts_voice *v;
static ptts_stream *s;

/* text with its pauses: want[] alternates chunk texts (spoken alone) and pause samples. */
typedef struct {
    const char *text; /* NULL: a pause of `samples` */
    int64_t samples;
} part;

static void expect(const char *text, const ptts_gen_options *o, const part *want, int n_want) {
    audio got = {0};
    CHECKF(speak(s, v, text, o, &got) == 0, "%s", text);
    int64_t at = 0;
    for (int i = 0; i < n_want; i++) {
        if (!want[i].text) {
            CHECKF(zeros(&got, at, want[i].samples), "\"%s\": %lld zeros at %lld", text,
                   (long long)want[i].samples, (long long)at);
            at += want[i].samples;
            continue;
        }
        audio alone = {0};
        CHECK(speak(s, v, want[i].text, o, &alone) == 0);
        CHECKF(alone.n > 0 && same(&got, at, &alone), "\"%s\": \"%s\" at %lld (%lld samples)", text,
               want[i].text, (long long)at, (long long)alone.n);
        at += alone.n;
        audio_free(&alone);
    }
    CHECKF(at == got.n, "\"%s\": %lld samples, expected %lld", text, (long long)got.n,
           (long long)at);
    audio_free(&got);
}

static void pauses(void) {
    ptts_gen_options o = quick_options();
    /* without the pause the two sentences would be one chunk */
    part a[] = {{"Hello there.", 0}, {NULL, 2400}, {"Bye now.", 0}};
    expect("Hello there. [pause:0.1] Bye now.", &o, a, 3);
    part b[] = {{NULL, 1200}, {"Hi.", 0}, {NULL, 12000 + 6000}, {"Go on.", 0}, {NULL, 24}};
    expect("[pause:50ms]Hi.<break time=\"500ms\"/> <break strength=\"weak\"/>Go on.[pause:0.001]",
           &o, b, 5);
    part c[] = {{NULL, 4800}};
    expect("[pause:0.2]", &o, c, 1);
    /* SSML tags removed, their text kept */
    part d[] = {{"Hello there.", 0}};
    expect("<speak><p>Hello there.</p></speak>", &o, d, 1);

    /* the frames of a pause: whole ones, then the rest (24240 = 12 x 1920 + 1200) */
    audio got = {0};
    CHECK(speak(s, v, "[pause:1.01]", &o, &got) == 0);
    CHECKF(got.frames == 13 && got.frame_n[11] == PTTS_FRAME_SAMPLES && got.frame_n[12] == 1200,
           "%d frames", got.frames);
    audio_free(&got);
}

static void sentence_silence(void) {
    ptts_gen_options o = quick_options();
    o.max_tokens = 4; /* each sentence its own chunk */
    o.sentence_silence = 0.25f;
    part a[] = {{"Hello there.", 0}, {NULL, 6000}, {"Bye now.", 0}};
    expect("Hello there. Bye now.", &o, a, 3);
    /* a pause replaces it */
    part b[] = {{"Hello there.", 0}, {NULL, 2400}, {"Bye now.", 0}};
    expect("Hello there. [pause:0.1] Bye now.", &o, b, 3);
    ptts_error e = {0};
    o.sentence_silence = 11.f;
    CHECK(ptts_stream_start(s, v, "Hi.", &o, &e) == PTTS_E_INVALID);
}

static void markup_off_and_errors(void) {
    ptts_error e = {0};
    ptts_gen_options o = quick_options();
    o.markup = PTTS_MARKUP_OFF;
    CHECK(ptts_stream_start(s, v, "Wait [pause] here.", &o, &e) == 0);
    const ptts_chunk *ch;
    int nc = ptts_stream_chunks(s, &ch);
    CHECKF(nc == 1 && strstr(ch[0].text, "pause"), "%d chunks: %s", nc, nc ? ch[0].text : "");
    /* brackets alone: a tag is text */
    o.markup = PTTS_MARKUP_BRACKETS;
    CHECK(ptts_stream_start(s, v, "<b>Bold</b> [pause] x", &o, &e) == 0);
    /* (the tiny tokenizer has no "<": the chunk text shows unknown pieces; "Bold" alone is
     * what SSML would leave) */
    nc = ptts_stream_chunks(s, &ch);
    CHECKF(nc == 2 && strlen(ch[0].text) > 8, "%d chunks: %s", nc, nc ? ch[0].text : "");
    o.markup = 0;
    int rc = ptts_stream_start(s, v, "Hello. <break time=\"abc\"/>", &o, &e);
    CHECKF(rc == PTTS_E_TEXT && strstr(e.msg, "markup at byte 7"), "%d %s", rc, e.msg);
    rc = ptts_stream_start(s, v, "[pause:11]", &o, &e);
    CHECKF(rc == PTTS_E_TEXT && strstr(e.msg, "markup at byte 0"), "%d %s", rc, e.msg);
    o.markup = 9;
    CHECK(ptts_stream_start(s, v, "Hi.", &o, &e) == PTTS_E_INVALID);
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
    o.markup = 0;
    rc = ptts_batch_start(b, v, "[pause:x]", &o, &e);
    CHECKF(rc == PTTS_E_TEXT && strstr(e.msg, "markup at byte 0"), "%d %s", rc, e.msg);
    ptts_batch_free(b);
}

typedef struct {
    audio a[2];
} batch_out;

static int on_batch(void *user, int slot, const float *pcm, int n) {
    batch_out *o = user;
    if (pcm) audio_add(&o->a[slot], pcm, n);
    return 0;
}

/* A batch slot with pauses next to a slot without: each equals its stream, frame by frame. */
static void batch(void) {
    ptts_error e = {0};
    ptts_gen_options o = quick_options();
    const char *t[2] = {"One. [pause:0.13] Two.", "A longer sentence without any pause."};
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
    for (int i = 0; i < 2; i++)
        CHECK(ptts_batch_start(b, v, t[i], &o, &e) == i);
    batch_out out = {0};
    int guard = 0;
    while (ptts_batch_active(b) > 0 && guard++ < 5000)
        CHECK(ptts_batch_step(b, on_batch, &out, &e) >= 0);
    for (int i = 0; i < 2; i++) {
        audio alone = {0};
        CHECK(speak(s, v, t[i], &o, &alone) == 0);
        CHECKF(out.a[i].n == alone.n && same(&out.a[i], 0, &alone) &&
                   out.a[i].frames == alone.frames &&
                   !memcmp(out.a[i].frame_n, alone.frame_n, (size_t)alone.frames * sizeof(int)),
               "slot %d: %lld samples in the batch, %lld alone", i, (long long)out.a[i].n,
               (long long)alone.n);
        audio_free(&alone);
        audio_free(&out.a[i]);
    }
    ptts_batch_free(b);
}

int main(void) {
    ptts_error e = {0};
    m = tiny_model();
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    REQUIRE(ptts_stream_create(&s, m, &e) == 0);
    pauses();
    sentence_silence();
    markup_off_and_errors();
    batch();
    ptts_stream_free(s);
    ptts_voice_free(v);
    ptts_model_free(m);
    return test_summary();
}
