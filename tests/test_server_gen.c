// ctest-label: unit
/*
 * test_server_gen.c - the server's generation thread (tools/server/server_gen.c) without HTTP:
 * a plain request popped frame by frame equals the stream; an incremental request fed a
 * sentence, then another after its first audio, equals the two sentences spoken alone; the
 * thread sleeps while every request waits for text; the feed bound, a feed after the end,
 * cancellation mid-utterance; and the per-request options' validation (srv_gen_opts_parse).
 */
#include <cjson/cJSON.h>
#include <sys/resource.h>

#include "collect.h"
#include "server.h"

static ptts_model *m;
static ptts_voice *v;
static srv S;

/* Pop every frame of r into a until it ends: returns SRV_POP_DONE or SRV_POP_FAILED. */
static int pop_all(srv_req *r, audio *a) {
    float buf[4 * PTTS_FRAME_SAMPLES];
    for (int guard = 0; guard < 100000; guard++) {
        int n = srv_req_pop(&S, r, buf, 4, 200);
        if (n < 0) return n;
        if (n > 0) audio_add(a, buf, n);
    }
    return 0;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void plain(ptts_stream *st, const ptts_gen_options *o) {
    audio want = {0}, got = {0};
    CHECK(speak(st, v, "A plain request, frame by frame.", o, &want) == 0);
    srv_req *r = srv_req_new(&S, strdup("A plain request, frame by frame."), v, NULL);
    REQUIRE(r);
    CHECK(srv_enqueue(&S, r) == 0);
    CHECK(pop_all(r, &got) == SRV_POP_DONE);
    CHECKF(want.n > 0 && got.n == want.n && same(&got, 0, &want), "%lld samples, stream %lld",
           (long long)got.n, (long long)want.n);
    srv_req_unref(&S, r);
    audio_free(&want);
    audio_free(&got);
}

static void incremental(ptts_stream *st, const ptts_gen_options *o) {
    audio want = {0}, got = {0};
    CHECK(speak(st, v, "First one.", o, &want) == 0);
    CHECK(speak(st, v, "Second one.", o, &want) == 0);
    srv_req *r = srv_req_new_incremental(&S, v, NULL);
    REQUIRE(r);
    CHECK(srv_enqueue(&S, r) == 0);
    CHECK(srv_req_feed(&S, r, "First", 5, 0, 0) == 0);
    CHECK(srv_req_feed(&S, r, " one.", 5, 0, 0) == 0);
    /* the sentence is not complete before the next character: nothing to do, and the
     * generation thread must sleep rather than spin */
    float buf[4 * PTTS_FRAME_SAMPLES];
    double c0 = cpu_seconds();
    CHECK(srv_req_pop(&S, r, buf, 4, 400) == 0);
    double busy = cpu_seconds() - c0;
    CHECKF(busy < 0.2, "%.3f s of CPU in 0.4 s of waiting for text", busy);
    CHECK(srv_req_feed(&S, r, " ", 1, 0, 0) == 0);
    int n = 0;
    for (int guard = 0; n == 0 && guard < 100; guard++)
        n = srv_req_pop(&S, r, buf, 1, 200);
    CHECK(n > 0);
    if (n > 0) audio_add(&got, buf, n);
    /* the second sentence arrives after the first one's audio began: its own chunk */
    CHECK(srv_req_feed(&S, r, "Second one.", 11, 0, 1) == 0);
    CHECK(srv_req_feed(&S, r, "late", 4, 0, 0) == SRV_FEED_ENDED);
    CHECK(pop_all(r, &got) == SRV_POP_DONE);
    CHECKF(got.n == want.n && same(&got, 0, &want), "%lld samples, alone %lld", (long long)got.n,
           (long long)want.n);
    srv_req_unref(&S, r);
    audio_free(&want);
    audio_free(&got);
}

static void bound_and_cancel(void) {
    srv_req *r = srv_req_new_incremental(&S, v, NULL);
    REQUIRE(r);
    CHECK(srv_enqueue(&S, r) == 0);
    size_t big = PTTS_FEED_MAX_BYTES + 1;
    char *t = malloc(big);
    REQUIRE(t);
    memset(t, 'a', big);
    CHECK(srv_req_feed(&S, r, t, big, 0, 0) == SRV_FEED_FULL);
    free(t);
    int full = 0;
    for (int i = 0; i <= SRV_FLUSH_MAX && !full; i++)
        full = srv_req_feed(&S, r, "", 0, 1, 0) == SRV_FEED_FULL;
    (void)full; /* the thread may hand flushes over meanwhile: the bound is checked above */
    CHECK(srv_req_feed(&S, r, "Talk and talk and talk. And more. ", 34, 0, 0) == 0);
    float buf[PTTS_FRAME_SAMPLES];
    int n = 0;
    for (int guard = 0; n == 0 && guard < 100; guard++)
        n = srv_req_pop(&S, r, buf, 1, 200);
    CHECK(n > 0);
    srv_req_cancel(&S, r);
    audio rest = {0};
    CHECK(pop_all(r, &rest) == SRV_POP_FAILED);
    CHECK(srv_req_feed(&S, r, "x", 1, 0, 0) == SRV_FEED_ENDED);
    srv_req_unref(&S, r);
    audio_free(&rest);
    /* the thread goes on serving */
    r = srv_req_new(&S, strdup("Still here."), v, NULL);
    REQUIRE(r);
    CHECK(srv_enqueue(&S, r) == 0);
    CHECK(pop_all(r, &rest) == SRV_POP_DONE && rest.n > 0);
    srv_req_unref(&S, r);
    audio_free(&rest);
}

static int opts(const char *json, ptts_gen_options *go) {
    cJSON *j = cJSON_Parse(json);
    REQUIRE(j);
    srv_bad b = {0};
    int rc = srv_gen_opts_parse(j, go, &b);
    cJSON_Delete(j);
    return rc ? (int)b.status : 0;
}

static void options(void) {
    ptts_gen_options go = {0};
    CHECK(opts("{\"temperature\":0.5,\"seed\":42,\"eos_threshold\":-3,\"frames_after_eos\":3,"
               "\"decode_steps\":2}",
               &go) == 0);
    CHECK(go.temperature_set && go.temperature == 0.5f && go.seed_set && go.seed == 42 &&
          go.eos_threshold_set && go.eos_threshold == -3.f && go.frames_after_eos_set &&
          go.frames_after_eos == 3 && go.sampler_steps == 2);
    ptts_gen_options d = {0};
    CHECK(opts("{\"input\":\"x\",\"temperature\":null}", &d) == 0 && !d.temperature_set);
    const char *bad[] = {
        "{\"temperature\":3}",      "{\"temperature\":\"hot\"}",  "{\"seed\":-1}",
        "{\"seed\":1.5}",           "{\"frames_after_eos\":101}", "{\"decode_steps\":0}",
        "{\"eos_threshold\":1e400}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ptts_gen_options g = {0};
        CHECKF(opts(bad[i], &g) == 400, "%s accepted", bad[i]);
    }
}

int main(void) {
    ptts_error e = {0};
    (void)zeros; /* collect.h's, unused here */
    options();
    m = tiny_model();
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    ptts_stream *st;
    REQUIRE(ptts_stream_create(&st, m, &e) == 0);
    ptts_gen_options o = quick_options();
    S.cfg.max_concurrent = 3;
    S.cfg.queue_len = 4;
    S.cfg.client_buffer_s = 600;
    S.cfg.go = o;
    S.model = m;
    S.frame_samples = PTTS_FRAME_SAMPLES;
    pthread_mutex_init(&S.mu, NULL);
    pthread_cond_init(&S.gen_cv, NULL);
    REQUIRE(srv_gen_start(&S, &e) == 0);
    plain(st, &o);
    incremental(st, &o);
    bound_and_cancel();
    srv_gen_stop(&S);
    pthread_cond_destroy(&S.gen_cv);
    pthread_mutex_destroy(&S.mu);
    ptts_stream_free(st);
    ptts_voice_free(v);
    ptts_model_free(m);
    return test_summary();
}
