// ctest-label: full
// ctest-timeout: 1800
/*
 * test_voice_clone_full.c - voice cloning at full size (english_2026-04 architecture, synthetic
 * pocket-fill-v1 weights): audio/voice_24k.wav -> full/voice.safetensors (66 positions after
 * end_on_pause, 6 layers, per-position rel L2 of keys and values <= 1e-4);
 * audio/voice_44k_stereo.wav measured against it (same speech, other samples: loose bound); the
 * exported voice has the reference file's names, dtypes and shapes and replays the reference's
 * generation (recorded noise, 80 frames) to 1e-4 per frame.
 */
#include <cjson/cJSON.h>
#include <unistd.h>

#include "voice_check.h"

#define TOL 1e-4
/* tiny: 6.4e-4; a doubled input level gives errors of order 1 (see test_voice_clone.c) */
#define E44_BOUND 5e-3

int main(void) {
    ptts_error e = {0};
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "full") == 0);
    ptts_model *m = NULL;
    int rc = ptts_model_create_filled(&m, &a, fixture_path("tokenizer/sp_unigram.model"), 0,
                                      PTTS_PRECISION_F32, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    ptts_voice_state *ref = load_ref_voice(m, "full/voice.safetensors");
    REQUIRE(ref && ref->positions == 66 && ref->layers == 6);

    double t0 = ptts_now();
    ptts_voice *v = NULL;
    double e24 = clone_err(m, "audio/voice_24k.wav", ref, &v);
    double dt = ptts_now() - t0;
    printf("full: voice_24k.wav -> voice.safetensors: max rel L2 per position %.3g (%.2f s)\n", e24,
           dt);
    CHECKF(e24 <= TOL, "%.3g", e24);
    double e44 = clone_err(m, "audio/voice_44k_stereo.wav", ref, NULL);
    printf("full: voice_44k_stereo.wav -> voice.safetensors: max rel L2 per position %.3g\n", e44);
    CHECKF(e44 <= E44_BOUND, "%.3g", e44);

    if (v) {
        char out[256];
        snprintf(out, sizeof out, "test_voice_clone_full.%ld.safetensors", (long)getpid());
        CHECKF(ptts_voice_save(v, out, &e) == 0, "%s", e.msg);
        CHECK(same_voice_header(out, fixture_path("full/voice.safetensors")));
        ptts_voice *back = NULL;
        REQUIRE(ptts_voice_load(&back, m, out, &e) == 0);
        CHECK(voice_state_err(back->st, v->st) == 0);
        remove(out);

        /* the generate case of full/manifest.json with the recorded noise */
        FILE *f = fopen(fixture_path("full/manifest.json"), "rb");
        REQUIRE(f != NULL);
        char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        cJSON *man = cJSON_Parse(buf);
        REQUIRE(man != NULL);
        cJSON *cs = cJSON_GetObjectItem(cJSON_GetObjectItem(man, "cases"), "generate");
        REQUIRE(cs != NULL);
        int64_t n_noise = 0, n_pcm = 0;
        float *noise = fixture_f32("full/generate.safetensors", "noise", &n_noise);
        float *pcm = fixture_f32("full/generate.safetensors", "pcm", &n_pcm);
        REQUIRE(noise && pcm);
        const int fs = a.frame_samples;
        int frames = 0;
        t0 = ptts_now();
        float *got = gen_replay(m, back, cJSON_GetObjectItem(cs, "text")->valuestring,
                                cJSON_GetObjectItem(cs, "max_tokens")->valueint, noise,
                                (int)(n_noise / a.ld), &frames);
        double err = pcm_err(got, frames, pcm, (int)(n_pcm / fs), fs);
        printf("full: generate from the exported voice: %d frames, max rel L2 per frame vs "
               "reference PCM %.3g (%.1f s)\n",
               frames, err, ptts_now() - t0);
        CHECKF(err <= TOL, "%.3g", err);
        free(got);
        free(noise);
        free(pcm);
        cJSON_Delete(man);
        ptts_voice_free(back);
    }
    ptts_voice_free(v);
    ptts_voice_state_free(ref);
    ptts_model_free(m);
    return test_summary();
}
