// ctest-label: unit
/*
 * test_backend.c - what model.c and backend.c promise: a model whose codec frame is not
 * PTTS_FRAME_SAMPLES is refused at load, naming its ratios (ptts_stream_next writes one frame
 * into a caller buffer of that size); the model always holds an engine (the CPU one for the cpu
 * backend); the test entries of backend.h store their setting and drop the idle engines, so the
 * next stream gets an engine made with it.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "fill_write.h"
#include "model.h"
#include "test.h"

static int idle_engines(const ptts_model *m) {
    return (m->be.cache.idle[0].eng != NULL) + (m->be.cache.idle[1].eng != NULL);
}

/* One short utterance on a new stream, freed at the end (its engine stays idle). */
static void one_stream(ptts_model *m, const ptts_voice *v) {
    ptts_error e = {0};
    ptts_stream *s = NULL;
    REQUIRE(ptts_stream_create(&s, m, &e) == 0);
    ptts_gen_options o = {0};
    o.seed_set = 1;
    CHECKF(ptts_stream_start(s, v, "Hi.", &o, &e) == 0, "%s", e.msg);
    float pcm[PTTS_FRAME_SAMPLES];
    CHECK(ptts_stream_next(s, pcm, &e) == PTTS_FRAME_SAMPLES);
    ptts_stream_free(s);
}

int main(void) {
    ptts_error e = {0};
    /* a codec with upsampling ratios 4 x 4 x 4 makes 1024-sample frames: refused */
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "tiny") == 0);
    a.ratios[0] = a.ratios[1] = a.ratios[2] = 4;
    ptts_model *m = NULL;
    int rc = ptts_model_create_filled(&m, &a, fixture_path("tokenizer/sp_unigram_tiny.model"), 1,
                                      PTTS_PRECISION_F32, &e);
    CHECKF(rc == PTTS_E_UNSUPPORTED && !m && strstr(e.msg, "1024") && strstr(e.msg, "4 x 4 x 4"),
           "%d: %s", rc, e.msg);
    const char *path = "test_backend_frame1024.safetensors";
    REQUIRE(ptts_fill_write(&a, ST_F32, path, &e) == 0);
    ptts_model_options mo = {0};
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = path;
    rc = ptts_model_load(&m, &mo, &e);
    CHECKF(rc == PTTS_E_UNSUPPORTED && !m && strstr(e.msg, "ratios 4 x 4 x 4"), "%d: %s", rc,
           e.msg);
    remove(path);

    /* the cpu backend: m->be.engine is the CPU engine, never NULL */
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.backend = PTTS_BACKEND_CPU;
    mo.threads = 2;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    CHECK(m->be.engine == &ptts_engine_cpu);
    ptts_voice *v = NULL;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);

    /* the GPU test hooks: a copy is kept (the caller's strings may go), idle engines dropped */
    one_stream(m, v);
    CHECK(idle_engines(m) == 1);
    char tile[8] = "r64";
    ptts_vk_tuning t = {.stepk = -1, .gemm_force = tile, .conv_copy = 1};
    ptts_model_set_vk_tuning(m, &t);
    memset(tile, 0, sizeof tile);
    CHECK(idle_engines(m) == 0);
    CHECK(m->be.cache.vk_set && m->be.cache.vk.stepk == -1 && m->be.cache.vk.conv_copy == 1 &&
          m->be.cache.vk.gemm_force && !strcmp(m->be.cache.vk.gemm_force, "r64") &&
          !m->be.cache.vk.tc_force);
    one_stream(m, v);
    CHECK(idle_engines(m) == 1);
    ptts_model_set_vk_tuning(m, NULL);
    CHECK(!m->be.cache.vk_set && !m->be.cache.vk.gemm_force && idle_engines(m) == 0);

    /* overlap: stored for the next engines, idle engines dropped */
    one_stream(m, v);
    ptts_model_set_overlap(m, PTTS_OVERLAP_OFF);
    CHECK(m->be.args.overlap == PTTS_OVERLAP_OFF && idle_engines(m) == 0);

    ptts_voice_free(v);
    ptts_model_free(m);
    return test_summary();
}
