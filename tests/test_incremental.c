// ctest-label: unit
/*
 * test_incremental.c - incremental text (ptts_stream_start_incremental and the batch's): the
 * completeness rule (ptts_text_complete); all text in one piece, or in thousands of one-byte
 * pieces, before the first frame equals ptts_stream_start (same chunks, same samples with a
 * seed); words fed between frames give the chunks the rule predicts, each equal to that chunk
 * alone (no noise); flush, empty pieces, a UTF-8 character split across pieces, invalid UTF-8,
 * the bound (PTTS_E_BUSY), cancellation, a feed after the end, a batch slot.
 */
#include "collect.h"
#include "generate.h"
#include "markup.h"
#include "text_feed.h"

static ptts_model *m;
static ptts_voice *v;
static ptts_stream *s;

static void complete_rule(void) {
    static const struct {
        const char *text;
        size_t want;
    } cases[] = {
        {"Hi. ", 3},
        {"Hi.", 0},
        {"Hi.There", 3},
        {"Hi! What? ", 9},
        {"3.75 is", 0},
        {"It is 3.", 0},
        {"It is 3. ", 0},
        {"It is 3. x", 8},
        {"It is 3. 5", 0},
        {"Wait... ok", 7},
        {"Ha!. x", 4},
        {"1.. 2", 3},
        {"no end", 0},
        {"A\xe2\x80\xa6 b", 4},
        {"<break time=\"1.5s\"/> x", 0},
        {"<p>Hi.</p> x", 6},
        {"Hi![pause:1.5", 3},
        {"[pause:1.5] x. y", 14},
        {"[laughs. x", 8},
        {"a <b. c", 0},
        {"x<3. y", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t got = ptts_text_complete(cases[i].text, strlen(cases[i].text), PTTS_MARKUP_ALL);
        CHECKF(got == cases[i].want, "\"%s\": %zu, expected %zu", cases[i].text, got,
               cases[i].want);
    }
    /* markup off: a tag's marks count */
    CHECK(ptts_text_complete("<p a. b", 7, 0) == 5);
}

/* the incremental stream fed `pieces` (NULL-terminated) and ended before any frame */
static int fed(const char *const *pieces, const ptts_gen_options *o, audio *a) {
    ptts_error e = {0};
    REQUIRE(ptts_stream_start_incremental(s, v, o, &e) == 0);
    for (int i = 0; pieces[i]; i++)
        CHECKF(ptts_stream_feed(s, pieces[i], strlen(pieces[i]), &e) == 0, "%s", e.msg);
    CHECK(ptts_stream_end(s, &e) == 0);
    return drain(s, a);
}

static ptts_gen_options seeded(void) {
    ptts_gen_options o = ptts_gen_options_default(); /* temperature 0.3: noise matters */
    o.seed = 42;
    o.seed_set = 1;
    o.eos_threshold = -1e9f;
    o.eos_threshold_set = 1;
    o.frames_after_eos = 3;
    o.frames_after_eos_set = 1;
    o.max_tokens = 12;
    return o;
}

static void one_piece(void) {
    const char *text =
        "Hello world. This is a test, of pieces. Pi is 3.14 [pause:0.1] and e is 2.718!";
    ptts_gen_options o = seeded();
    audio want = {0}, got = {0};
    CHECK(speak(s, v, text, &o, &want) == 0);
    ptts_stream_status st;
    ptts_stream_get_status(s, &st);
    const char *p1[] = {text, NULL};
    CHECK(fed(p1, &o, &got) == 0);
    ptts_stream_status sg;
    ptts_stream_get_status(s, &sg);
    CHECKF(want.n > 0 && got.n == want.n && same(&got, 0, &want) && sg.n_chunks == st.n_chunks,
           "one piece: %lld samples, %d chunks; start: %lld, %d", (long long)got.n, sg.n_chunks,
           (long long)want.n, st.n_chunks);
    audio_free(&got);
    /* one byte at a time (and an empty piece between each) */
    size_t n = strlen(text);
    char(*bytes)[2] = calloc(n, sizeof *bytes);
    const char **pn = calloc(2 * n + 1, sizeof *pn);
    for (size_t i = 0; i < n; i++) {
        bytes[i][0] = text[i];
        pn[2 * i] = bytes[i];
        pn[2 * i + 1] = "";
    }
    CHECK(fed(pn, &o, &got) == 0);
    CHECK(got.n == want.n && same(&got, 0, &want));
    audio_free(&got);
    free(pn);
    free(bytes);
    audio_free(&want);
}

/* Thousands of pieces of a long text: equals the start. */
static void many_pieces(void) {
    ptts_gen_options o = seeded();
    o.frames_after_eos = 0;
    char text[6000] = "";
    for (int i = 0; strlen(text) < 5000; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "Line %d is here. ", i);
    audio want = {0}, got = {0};
    CHECK(speak(s, v, text, &o, &want) == 0);
    ptts_error e = {0};
    REQUIRE(ptts_stream_start_incremental(s, v, &o, &e) == 0);
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i += 3)
        CHECK(ptts_stream_feed(s, text + i, i + 3 <= n ? 3 : n - i, &e) == 0);
    CHECK(ptts_stream_end(s, &e) == 0);
    CHECK(drain(s, &got) == 0);
    CHECKF(want.n > 0 && got.n == want.n && same(&got, 0, &want), "%lld samples, start %lld",
           (long long)got.n, (long long)want.n);
    audio_free(&got);
    audio_free(&want);
}

/* Words fed between frames: each complete sentence is a chunk as soon as the next word comes
 * (what the rule predicts), spoken as it would be alone. */
static void word_by_word(void) {
    ptts_gen_options o = quick_options();
    const char *words[] = {"Hello ", "world.", " This", " is",  " a",   " test.", " Pi",
                           " is",    " 3.",    "14",    " ok.", " Bye", NULL};
    const char *chunks[] = {"Hello world.", "This is a test.", "Pi is 3.14 ok.", "Bye"};
    ptts_error e = {0};
    REQUIRE(ptts_stream_start_incremental(s, v, &o, &e) == 0);
    audio got = {0};
    ptts_stream_status st;
    for (int i = 0; words[i]; i++) {
        CHECKF(ptts_stream_feed(s, words[i], strlen(words[i]), &e) == 0, "word %d: %s", i, e.msg);
        CHECK(drain(s, &got) == 0);
        ptts_stream_get_status(s, &st);
        CHECK(st.waiting);
    }
    CHECK(ptts_stream_end(s, &e) == 0);
    CHECK(drain(s, &got) == 0);
    ptts_stream_get_status(s, &st);
    CHECKF(st.n_chunks == 4 && !st.waiting, "%d chunks", st.n_chunks);
    int64_t at = 0;
    for (int i = 0; i < 4; i++) {
        audio alone = {0};
        CHECK(speak(s, v, chunks[i], &o, &alone) == 0);
        CHECKF(same(&got, at, &alone), "chunk %d \"%s\" at %lld", i, chunks[i], (long long)at);
        at += alone.n;
        audio_free(&alone);
    }
    CHECK(at == got.n);
    audio_free(&got);

    /* a flush is a boundary; sentence_silence joins pieces */
    o.sentence_silence = 0.1f;
    REQUIRE(ptts_stream_start_incremental(s, v, &o, &e) == 0);
    CHECK(ptts_stream_feed(s, "Hello world", 11, &e) == 0);
    CHECK(drain(s, &got) == 0 && got.n == 0); /* nothing complete yet */
    CHECK(ptts_stream_flush(s, &e) == 0);
    CHECK(drain(s, &got) == 0 && got.n > 0);
    int64_t first = got.n;
    CHECK(ptts_stream_feed(s, "Bye", 3, &e) == 0 && ptts_stream_end(s, &e) == 0);
    CHECK(drain(s, &got) == 0);
    audio a1 = {0}, a2 = {0};
    CHECK(speak(s, v, "Hello world", &o, &a1) == 0 && speak(s, v, "Bye", &o, &a2) == 0);
    CHECK(a1.n == first && same(&got, 0, &a1) && zeros(&got, first, 2400) &&
          same(&got, first + 2400, &a2) && got.n == first + 2400 + a2.n);
    audio_free(&a1);
    audio_free(&a2);
    audio_free(&got);
}

static void edges(void) {
    ptts_gen_options o = quick_options();
    ptts_error e = {0};
    audio want = {0}, got = {0};
    /* a UTF-8 character split across pieces */
    CHECK(speak(s, v, "Caf\xc3\xa9 ok.", &o, &want) == 0);
    const char *p1[] = {"Caf\xc3", "", "\xa9 ok.", NULL};
    CHECK(fed(p1, &o, &got) == 0);
    CHECK(got.n == want.n && same(&got, 0, &want));
    audio_free(&got);
    audio_free(&want);
    /* invalid UTF-8: the error of ptts_stream_start, from the frame that reaches it */
    int want_rc = ptts_stream_start(s, v, "Bad \xff byte.", &o, &e);
    const char *p2[] = {"Bad \xff", " byte.", NULL};
    int rc = fed(p2, &o, &got);
    CHECKF(rc == (want_rc ? want_rc : 0), "invalid UTF-8: %d, start %d", rc, want_rc);
    audio_free(&got);
    /* the end with no text: the start's empty-text error; blanks after speech are nothing */
    const char *p3[] = {"  ", NULL};
    CHECK(fed(p3, &o, &got) == PTTS_E_TEXT);
    const char *p4[] = {"Hi. ", " \n", NULL};
    CHECK(fed(p4, &o, &got) == 0 && got.n > 0);
    audio_free(&got);
    /* invalid markup */
    const char *p5[] = {"Hi. [pause:x] more", NULL};
    CHECK(fed(p5, &o, &got) == PTTS_E_TEXT);
    audio_free(&got);
    /* a feed after the end, on a plain start, on nothing */
    REQUIRE(ptts_stream_start_incremental(s, v, &o, &e) == 0);
    CHECK(ptts_stream_end(s, &e) == 0);
    CHECK(ptts_stream_feed(s, "x", 1, &e) == PTTS_E_INVALID);
    CHECK(ptts_stream_flush(s, &e) == PTTS_E_INVALID);
    REQUIRE(ptts_stream_start(s, v, "Hi.", &o, &e) == 0);
    CHECK(ptts_stream_feed(s, "x", 1, &e) == PTTS_E_INVALID);
    ptts_stream_cancel(s);
    CHECK(ptts_stream_feed(s, "x", 1, &e) == PTTS_E_INVALID);
    /* the bound: BUSY, nothing taken; what was fed is still spoken */
    REQUIRE(ptts_stream_start_incremental(s, v, &o, &e) == 0);
    char *big = malloc(PTTS_FEED_MAX_BYTES);
    memset(big, 'a', PTTS_FEED_MAX_BYTES);
    CHECK(ptts_stream_feed(s, big, PTTS_FEED_MAX_BYTES - 1, &e) == 0);
    CHECK(ptts_stream_feed(s, big, 2, &e) == PTTS_E_BUSY && strstr(e.msg, "bound"));
    CHECK(ptts_stream_feed(s, ".", 1, &e) == 0);
    CHECK(ptts_stream_feed(s, "x", 1, &e) == PTTS_E_BUSY);
    free(big);
    /* cancellation mid-chunk */
    float pcm[PTTS_FRAME_SAMPLES];
    ptts_stream_cancel(s);
    CHECK(ptts_stream_next(s, pcm, &e) == 0);
    REQUIRE(ptts_stream_start_incremental(s, v, &o, &e) == 0);
    CHECK(ptts_stream_feed(s, "One two. Three", 14, &e) == 0);
    CHECK(ptts_stream_next(s, pcm, &e) == PTTS_FRAME_SAMPLES);
    ptts_stream_cancel(s);
    CHECK(ptts_stream_next(s, pcm, &e) == 0);
    ptts_stream_status st;
    ptts_stream_get_status(s, &st);
    CHECK(!st.waiting);
}

typedef struct {
    audio a;
    int ended, end_rc;
} slot_out;

static int on_batch(void *user, int slot, const float *pcm, int n) {
    slot_out *o = (slot_out *)user + slot;
    if (pcm)
        audio_add(&o->a, pcm, n);
    else
        o->ended = 1, o->end_rc = n;
    return 0;
}

/* A batch: an incremental slot fed between steps next to a plain slot; each equals its
 * stream (the incremental one: its chunks alone). A text error ends only its slot. */
static void batch(void) {
    ptts_error e = {0};
    ptts_gen_options o = quick_options();
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    CHECK(ptts_batch_start(b, v, "A plain utterance runs beside.", &o, &e) == 0);
    CHECK(ptts_batch_start_incremental(b, v, &o, &e) == 1);
    CHECK(ptts_batch_start_incremental(b, v, &o, &e) == 2);
    CHECK(ptts_batch_feed(b, 2, "Fine. [pause:", 13, &e) == 0);
    CHECK(ptts_batch_end(b, 2, &e) == 0);
    slot_out out[3] = {0};
    const char *words[] = {"First", " one.", " Second", " one.", NULL};
    int w = 0, guard = 0;
    while (ptts_batch_active(b) > 0 && guard++ < 5000) {
        if (words[w]) {
            CHECK(ptts_batch_feed(b, 1, words[w], strlen(words[w]), &e) == 0);
            if (!words[++w]) CHECK(ptts_batch_end(b, 1, &e) == 0);
        }
        CHECK(ptts_batch_step(b, on_batch, out, &e) >= 0);
    }
    CHECK(ptts_batch_feed(b, 7, "x", 1, &e) == PTTS_E_INVALID);
    ptts_batch_free(b);
    audio a0 = {0}, a1 = {0};
    CHECK(speak(s, v, "A plain utterance runs beside.", &o, &a0) == 0);
    CHECK(speak(s, v, "First one.", &o, &a1) == 0 && speak(s, v, "Second one.", &o, &a1) == 0);
    CHECK(out[0].ended && out[0].end_rc == 0 && out[0].a.n == a0.n && same(&out[0].a, 0, &a0));
    CHECKF(out[1].ended && out[1].end_rc == 0 && out[1].a.n == a1.n && same(&out[1].a, 0, &a1),
           "incremental slot: %lld samples, alone %lld", (long long)out[1].a.n, (long long)a1.n);
    CHECKF(out[2].ended && out[2].end_rc == PTTS_E_TEXT, "slot 2 rc %d", out[2].end_rc);
    for (int i = 0; i < 3; i++)
        audio_free(&out[i].a);
    audio_free(&a0);
    audio_free(&a1);
}

int main(void) {
    ptts_error e = {0};
    complete_rule();
    m = tiny_model();
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    REQUIRE(ptts_stream_create(&s, m, &e) == 0);
    one_piece();
    many_pieces();
    word_by_word();
    edges();
    batch();
    ptts_stream_free(s);
    ptts_voice_free(v);
    ptts_model_free(m);
    return test_summary();
}
