// ctest-label: unit
/*
 * test_public_api.c - a black-box test through include/ptts.h alone (compiled without src/ on
 * its include path): the tiny model loads from zeroed options plus its files, a voice is loaded,
 * loaded from memory, opened (state file and audio) and cloned from memory, an utterance streams
 * frame by frame in PTTS_FRAME_SAMPLES frames, a text tokenizes, the log callback hears the backend
 * choice; bad arguments and files give their error codes with a message, and every free takes NULL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptts.h"
#include "test.h"

static int n_logs;
static void on_log(void *user, int level, const char *msg) {
    (void)level;
    n_logs += user == &n_logs && msg && *msg;
}

static ptts_model_options tiny_options(void) {
    ptts_model_options o = {0}; /* zero is the defaults */
    o.config_path = fixture_path("tiny/manifest.json");
    o.weights_path = fixture_path("tiny/model.safetensors");
    o.threads = 2;
    return o;
}

static char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = len > 0 ? malloc((size_t)len) : NULL;
    *n = buf ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    return buf;
}

/* Frames of one utterance, each checked to be PTTS_FRAME_SAMPLES finite samples. */
static int stream_frames(ptts_stream *s, const ptts_voice *v, const char *text) {
    ptts_error e = {0};
    ptts_gen_options o = {0};
    o.seed_set = 1;
    o.seed = 7;
    if (ptts_stream_start(s, v, text, &o, &e)) {
        CHECKF(0, "stream_start: %s", e.msg);
        return -1;
    }
    static float pcm[PTTS_FRAME_SAMPLES];
    int frames = 0, r;
    while ((r = ptts_stream_next(s, pcm, &e)) > 0 && frames < 1000) {
        CHECK(r == PTTS_FRAME_SAMPLES);
        int finite = 1;
        for (int i = 0; i < r; i++)
            finite &= pcm[i] == pcm[i] && pcm[i] > -4 && pcm[i] < 4;
        CHECK(finite);
        frames++;
    }
    CHECKF(r == 0, "stream_next: %d %s", r, e.msg);
    return frames;
}

int main(void) {
    ptts_error e = {0};
    for (int c = 0; c >= -14; c--)
        CHECK(ptts_strerror(c) && *ptts_strerror(c));
    CHECK(ptts_strerror(-999) && *ptts_strerror(-999));

    /* the log callback hears the automatic backend choice */
    ptts_set_log_callback(on_log, &n_logs);
    ptts_model_options mo = tiny_options();
    ptts_model *m = NULL;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    ptts_set_log_callback(NULL, NULL);
    CHECKF(n_logs >= 1, "%d log messages", n_logs);
    ptts_model_info info;
    ptts_model_get_info(m, &info);
    CHECK(info.frame_samples == PTTS_FRAME_SAMPLES && info.sample_rate == PTTS_SAMPLE_RATE);
    CHECK(info.has_voice_cloning && info.threads == 2 && info.isa && info.weight_bytes > 0);

    /* voices: a state file, the same through ptts_voice_open, audio opened and from memory */
    ptts_voice *v = NULL, *vo = NULL, *va = NULL, *vm = NULL, *bad_mem = NULL;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    int cloned = -1;
    CHECKF(ptts_voice_open(&vo, m, NULL, fixture_path("tiny/voice.safetensors"), 0, &cloned, &e) ==
                   0 &&
               cloned == 0,
           "%s", e.msg);
    CHECK(vo && ptts_voice_positions(vo) == ptts_voice_positions(v));
    CHECKF(ptts_voice_open(&va, m, NULL, fixture_path("audio/voice_24k.wav"), 0, &cloned, &e) ==
                   0 &&
               cloned == 1,
           "%s", e.msg);
    size_t n_wav = 0;
    char *wav = read_file(fixture_path("audio/voice_24k.wav"), &n_wav);
    REQUIRE(wav);
    CHECKF(ptts_voice_from_audio_memory(&vm, m, wav, n_wav, PTTS_VOICE_CLONE_SECONDS, &e) == 0,
           "%s", e.msg);
    CHECK(va && vm && ptts_voice_positions(va) == ptts_voice_positions(vm));
    size_t n_st = 0;
    char *st_bytes = read_file(fixture_path("tiny/voice.safetensors"), &n_st);
    ptts_voice *vl = NULL;
    CHECKF(st_bytes && ptts_voice_load_memory(&vl, m, st_bytes, n_st, &e) == 0, "%s", e.msg);
    CHECK(vl && ptts_voice_positions(vl) == ptts_voice_positions(v));
    CHECK(ptts_voice_load_memory(&bad_mem, m, st_bytes, n_st / 2, &e) < 0 && !bad_mem);
    free(st_bytes);
    ptts_voice_free(vl);

    /* an utterance, twice on one stream */
    ptts_stream *s = NULL;
    REQUIRE(ptts_stream_create(&s, m, &e) == 0);
    int f1 = stream_frames(s, v, "Hello from the public header.");
    int f2 = stream_frames(s, va ? va : v, "A second utterance on the same stream.");
    CHECKF(f1 > 0 && f2 > 0, "%d and %d frames", f1, f2);
    ptts_stream_status st;
    ptts_stream_get_status(s, &st);
    CHECK(st.frames_total == f2);

    /* tokenizing needs no weights */
    int *ids = NULL, n = 0;
    char **pieces = NULL;
    CHECKF(ptts_tokenize(&mo, "Hello world.", 12, &ids, &pieces, &n, &e) == 0 && n > 0, "%s",
           e.msg);
    CHECK(pieces && pieces[0] && !pieces[n]);
    free(ids);
    free(pieces);

    /* errors: a code and a message */
    e.msg[0] = 0;
    CHECK(ptts_stream_start(s, v, "", NULL, &e) == PTTS_E_TEXT && e.msg[0]);
    ptts_voice *bad = NULL;
    CHECK(ptts_voice_load(&bad, m, "/nonexistent/voice.safetensors", &e) < 0 && !bad);
    CHECK(ptts_voice_open(&bad, m, NULL, fixture_path("tiny/manifest.json"), 0, NULL, &e) ==
              PTTS_E_AUDIO &&
          !bad);
    CHECK(ptts_voice_from_audio_memory(&bad, m, "not audio at all", 16, 0, &e) == PTTS_E_AUDIO);
    CHECK(ptts_voice_from_samples(&bad, m, NULL, 0, 24000, 0, &e) == PTTS_E_AUDIO && !bad);
    ptts_model *bm = NULL;
    ptts_model_options bo = tiny_options();
    bo.weights_path = "/nonexistent/model.safetensors";
    CHECK(ptts_model_load(&bm, &bo, &e) < 0 && !bm && e.msg[0]);
    bo = tiny_options();
    bo.overlap = 7;
    CHECK(ptts_model_load(&bm, &bo, &e) == PTTS_E_INVALID && !bm);
    bo = tiny_options();
    bo.tensor_cores = 2;
    CHECK(ptts_model_load(&bm, &bo, &e) == PTTS_E_INVALID && !bm);
    bo = tiny_options();
    bo.backend = 99;
    CHECK(ptts_model_load(&bm, &bo, &e) == PTTS_E_INVALID && !bm);
    bo = tiny_options();
    bo.weights_path = fixture_path("tiny/voice.safetensors"); /* a voice is no model */
    CHECK(ptts_model_load(&bm, &bo, &e) == PTTS_E_MODEL && !bm);
    ptts_batch *b = NULL;
    CHECK(ptts_batch_create(&b, m, 0, &e) == PTTS_E_INVALID && !b);

    /* free(NULL) is a no-op everywhere */
    ptts_model_free(NULL);
    ptts_voice_free(NULL);
    ptts_stream_free(NULL);
    ptts_batch_free(NULL);

    free(wav);
    ptts_stream_free(s);
    ptts_voice_free(v);
    ptts_voice_free(vo);
    ptts_voice_free(va);
    ptts_voice_free(vm);
    ptts_model_free(m);
    return test_summary();
}
