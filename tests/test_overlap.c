// ctest-label: parity
/*
 * test_overlap.c - the CPU engine's codec/backbone overlap (ptts_model_options.overlap) gives
 * the same results bit for bit as the plain path on the tiny model (overlap_check.h: a stream
 * over several chunks stopped by the EOS rule and by max_gen_len, a batch with joins, stops and
 * a cancel), with 2 and 3 threads; the reference's generate cases still replay with overlap on;
 * an unknown mode is refused.
 */
#include "overlap_check.h"
#include "replay.h"

static ptts_model *load(int threads, int overlap) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = threads;
    mo.overlap = overlap;
    ptts_model *m;
    int rc = ptts_model_load(&m, &mo, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    return m;
}

int main(void) {
    ptts_error e = {0};
    ptts_model *m2 = load(2, PTTS_OVERLAP_ON), *m3 = load(3, PTTS_OVERLAP_ON);
    ptts_model *ms[2] = {m2, m3};
    ptts_voice *v[2][2];
    for (int i = 0; i < 2; i++) {
        REQUIRE(ptts_voice_load(&v[i][0], ms[i], fixture_path("tiny/voice.safetensors"), &e) == 0);
        REQUIRE(ptts_voice_load(&v[i][1], ms[i], fixture_path("tiny/voice_short.safetensors"),
                                &e) == 0);
    }
    /* the fixture's eos_case threshold makes the EOS rule end chunks; 1e9 never fires */
    const float thr[2] = {eos_case_threshold(), 1e9f};
    overlap_compare(m2, (const ptts_voice *const *)v[0], thr, 2, thr[0], "2 threads");
    overlap_compare(m3, (const ptts_voice *const *)v[1], thr, 2, thr[0], "3 threads");

    /* the reference's cases, overlap on (overlap_compare left the model at auto) */
    ptts_model_set_overlap(m2, PTTS_OVERLAP_ON);
    errs er = {0}, es = {0};
    replay(m2, "tiny", "generate", "voice.safetensors", 1e9f, 218, 1e-4, &er);
    printf("tiny generate, overlap on: max rel err latents %.3g, eos %.3g, pcm %.3g\n", er.max_lat,
           er.max_eos, er.max_pcm);
    replay(m2, "tiny", "generate_short", "voice_short.safetensors", thr[0], 16, 1e-4, &es);
    printf("tiny generate_short (eos_case), overlap on: max rel err latents %.3g, pcm %.3g\n",
           es.max_lat, es.max_pcm);

    /* AUTO's rule: one stream overlaps on 2 threads but not on 5 (its lone codec outlasts the
     * rest there), a batch overlaps on 5 */
    ptts_model_set_overlap(m2, PTTS_OVERLAP_AUTO);
    run ra;
    run_init(&ra, m2->w->arch.ld);
    stream_run(m2, v[0][0], 1e9f, &ra);
    const long auto2 = idle_overlapped(m2);
    run_free(&ra);
    ptts_model *m5 = load(5, PTTS_OVERLAP_AUTO);
    ptts_voice *v5[2];
    REQUIRE(ptts_voice_load(&v5[0], m5, fixture_path("tiny/voice.safetensors"), &e) == 0);
    REQUIRE(ptts_voice_load(&v5[1], m5, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    run_init(&ra, m5->w->arch.ld);
    stream_run(m5, v5[0], 1e9f, &ra);
    const long auto5 = idle_overlapped(m5);
    run_free(&ra);
    run rb5[NUTT];
    for (int i = 0; i < NUTT; i++)
        run_init(&rb5[i], m5->w->arch.ld);
    batch_run(m5, (const ptts_voice *const *)v5, 1e9f, rb5);
    const long auto5b = idle_overlapped(m5) - auto5;
    for (int i = 0; i < NUTT; i++)
        run_free(&rb5[i]);
    CHECKF(auto2 > 0 && auto5 == 0 && auto5b > 0,
           "AUTO: one stream overlapped %ld frames on 2 threads, %ld on 5; a batch on 5: %ld",
           auto2, auto5, auto5b);
    ptts_voice_free(v5[0]);
    ptts_voice_free(v5[1]);
    ptts_model_free(m5);

    /* an unknown mode is refused */
    ptts_model_options mo = ptts_model_options_default();
    mo.overlap = 7;
    ptts_model *bad = NULL;
    CHECK(ptts_model_load(&bad, &mo, &e) == PTTS_E_INVALID && !bad);

    for (int i = 0; i < 2; i++) {
        ptts_voice_free(v[i][0]);
        ptts_voice_free(v[i][1]);
        ptts_model_free(ms[i]);
    }
    return test_summary();
}
