// ctest-label: parity
// ctest-timeout: 600
/*
 * test_voice_clone.c - voice cloning from audio with the tiny model (MODEL.md sections 6-7):
 *  - audio/voice_24k.wav -> tiny/voice.safetensors (66 positions incl. BOS) and
 *    audio/short_24k.wav -> tiny/voice_short.safetensors (11 positions), per-position rel L2 of
 *    keys and values <= 1e-4, both through 3.3's end_on_pause;
 *  - end_on_pause: audio/end_on_pause.safetensors input -> output (17760 samples), and
 *    short_trailing_silence_24k.wav clones to exactly the voice of short_24k.wav (and to
 *    tiny/voice_pause.safetensors);
 *  - audio/voice_44k_stereo.wav (mono mix + resample) against voice.safetensors: measured, with
 *    a loose bound, and tightly against the voice cloned from the reference's own mono mix and
 *    24 kHz resampling (audio/resample_44k_to_24k.safetensors);
 *  - a voice saved with ptts_voice_save has the reference file's names, dtypes and shapes, loads
 *    back bit for bit and replays the reference's generation (recorded noise) to 1e-4 per frame;
 *  - errors: not audio, missing file, shorter than one frame, silent, non-finite samples, a model
 *    without encoder weights (which still loads and generates from a voice-state file);
 *  - an hour-long WAV (sparse file in a temporary folder) is truncated to 30 s at its own rate,
 *    as the reference does, without being loaded whole (peak RSS grows by far less than the
 *    file's decoded size).
 */
#include <cjson/cJSON.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio.h"
#include "voice_check.h"
#include "wav.h"

#define TOL 1e-4
/* voice_44k_stereo.wav is the same speech as voice_24k.wav, not the same samples: measured
 * 6.4e-4 against voice.safetensors; a doubled level (channels summed) gives 0.72. */
#define E44_BOUND 5e-3

static char tmpdir[256];

static const char *tmp_file(const char *name) {
    static char buf[8][512];
    static int k;
    char *b = buf[k++ & 7];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}

static long max_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static cJSON *load_manifest(void) {
    FILE *f = fopen(fixture_path("tiny/manifest.json"), "rb");
    REQUIRE(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    REQUIRE(buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = 0;
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    REQUIRE(j != NULL);
    return j;
}

/* Export `v`, check the file against the reference's, reload it, and replay generation case
 * `cname` with the recorded noise: PCM against the reference's and against the fixture voice's
 * run. */
static void export_and_replay(const ptts_model *m, const ptts_voice *v, const char *ref_voice,
                              const char *cname, const char *gen_file, cJSON *man) {
    ptts_error e = {0};
    const char *out = tmp_file(cname);
    CHECKF(ptts_voice_save(v, out, &e) == 0, "%s", e.msg);
    CHECKF(same_voice_header(out, fixture_path(ref_voice)), "%s header differs from %s", out,
           ref_voice);
    ptts_voice *back = NULL, *fx = NULL;
    REQUIRE(ptts_voice_load(&back, m, out, &e) == 0);
    REQUIRE(ptts_voice_load(&fx, m, fixture_path(ref_voice), &e) == 0);
    size_t n = (size_t)back->st->layers * back->st->positions * back->st->heads * back->st->dh;
    CHECKF(back->st->positions == v->st->positions &&
               memcmp(back->st->k, v->st->k, n * sizeof(float)) == 0 &&
               memcmp(back->st->v, v->st->v, n * sizeof(float)) == 0,
           "%s: the exported voice does not load back bit for bit", cname);

    cJSON *cs = cJSON_GetObjectItem(cJSON_GetObjectItem(man, "cases"), cname);
    REQUIRE(cs != NULL);
    const char *text = cJSON_GetObjectItem(cs, "text")->valuestring;
    const int max_tokens = cJSON_GetObjectItem(cs, "max_tokens")->valueint;
    int64_t n_noise = 0, n_pcm = 0;
    float *noise = fixture_f32(gen_file, "noise", &n_noise);
    float *ref_pcm = fixture_f32(gen_file, "pcm", &n_pcm);
    REQUIRE(noise && ref_pcm);
    const int fs = m->w->arch.frame_samples, ld = m->w->arch.ld;
    int fa = 0, fb = 0;
    float *a = gen_replay(m, back, text, max_tokens, noise, (int)(n_noise / ld), &fa);
    float *b = gen_replay(m, fx, text, max_tokens, noise, (int)(n_noise / ld), &fb);
    double e_ref = pcm_err(a, fa, ref_pcm, (int)(n_pcm / fs), fs);
    double e_fx = pcm_err(a, fa, b, fb, fs);
    printf("%s from the exported voice: %d frames, max rel L2 per frame vs reference PCM %.3g, "
           "vs the fixture voice's run %.3g\n",
           cname, fa, e_ref, e_fx);
    CHECKF(e_ref <= TOL, "%s: %.3g", cname, e_ref);
    CHECKF(e_fx <= TOL, "%s: %.3g", cname, e_fx);
    free(a);
    free(b);
    free(noise);
    free(ref_pcm);
    ptts_voice_free(back);
    ptts_voice_free(fx);
}

/* A cloning call that must fail with `code` and a message containing `needle`. */
static int expect_clone_fail(int rc, ptts_voice *v, const ptts_error *e, int code,
                             const char *needle) {
    printf("  -> %d: %s\n", rc, e->msg);
    int ok = rc == code && v == NULL && e->code == code && strstr(e->msg, needle) != NULL;
    ptts_voice_free(v);
    return ok;
}

static void sine(float *x, int64_t n, int rate, float amp) {
    for (int64_t i = 0; i < n; i++)
        x[i] = amp * (float)(sin(2 * M_PI * 220.0 * (double)i / rate) *
                             (0.6 + 0.4 * sin(2 * M_PI * 3.0 * (double)i / rate)));
}

static void errors(const ptts_model *m) {
    ptts_error e = {0};
    ptts_voice *v = NULL;
    int rc;
    printf("errors:\n");
    rc = ptts_voice_from_audio_file(&v, m, fixture_path("text_cases.json"), 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "not an audio file"));
    v = NULL;
    rc = ptts_voice_from_audio_file(&v, m, tmp_file("absent.wav"), 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_IO, "absent.wav"));
    v = NULL;

    float *x = malloc(48000 * sizeof *x);
    REQUIRE(x != NULL);
    sine(x, 48000, 24000, 0.5f);
    /* one frame is the minimum: 1919 samples fail; 1920 (+ end_on_pause's 1920 zeros) make
     * BOS + 2 positions */
    rc = ptts_voice_from_samples(&v, m, x, 1919, 24000, 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "too short"));
    v = NULL;
    rc = ptts_voice_from_samples(&v, m, x, 1920, 24000, 30, &e);
    CHECKF(rc == 0 && ptts_voice_positions(v) == 3, "%d positions (%s)",
           rc ? -1 : ptts_voice_positions(v), e.msg);
    ptts_voice_free(v);
    v = NULL;
    /* 3500 samples at 44.1 kHz resample to 1905 < 1920 */
    rc = ptts_voice_from_samples(&v, m, x, 3500, 44100, 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "too short"));
    v = NULL;
    /* a long clip truncated below one frame */
    rc = ptts_voice_from_samples(&v, m, x, 48000, 24000, 0.05, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "too short"));
    v = NULL;
    rc = ptts_voice_from_samples(&v, m, x, 0, 24000, 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "empty"));
    v = NULL;

    /* silence: zeros, and a tone below the 1e-4 peak; a quiet but real tone works */
    float *z = calloc(48000, sizeof *z);
    REQUIRE(z != NULL);
    rc = ptts_voice_from_samples(&v, m, z, 48000, 24000, 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "the audio is silent"));
    v = NULL;
    sine(z, 48000, 24000, 5e-5f);
    rc = ptts_voice_from_samples(&v, m, z, 48000, 24000, 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "the audio is silent"));
    v = NULL;
    sine(z, 48000, 24000, 2e-3f);
    rc = ptts_voice_from_samples(&v, m, z, 48000, 24000, 30, &e);
    /* 48000 samples + 1920 zeros: 26 frames + BOS */
    CHECKF(rc == 0 && ptts_voice_positions(v) == 27, "quiet tone: %d positions (%s)",
           rc ? -1 : ptts_voice_positions(v), e.msg);
    ptts_voice_free(v);
    v = NULL;
    /* silence in a file (16-bit WAV written by the project's writer) */
    {
        wav_writer *w = NULL;
        const char *p = tmp_file("silent.wav");
        float *zero = calloc(24000, sizeof *zero);
        REQUIRE(zero && wav_open(&w, p, 24000, &e) == 0);
        REQUIRE(wav_write(w, zero, 24000, &e) == 0 && wav_close(w, &e) == 0);
        free(zero);
        rc = ptts_voice_from_audio_file(&v, m, p, 30, &e);
        CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "the audio is silent"));
        CHECK(strstr(e.msg, "silent.wav") != NULL);
        v = NULL;
    }
    /* a NaN among the samples */
    x[1000] = NAN;
    rc = ptts_voice_from_samples(&v, m, x, 48000, 24000, 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_AUDIO, "non-finite"));
    v = NULL;
    free(x);
    free(z);
}

/* A 1-hour 44.1 kHz 16-bit mono WAV whose first `signal_s` seconds hold a tone (the rest is a
 * hole in a sparse file: zeros on read, no disk). */
static void write_hour_wav(const char *path, int rate, int signal_s) {
    const int64_t frames = (int64_t)3600 * rate, data = frames * 2;
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    uint8_t h[44];
    wav_header(h, rate, frames);
    REQUIRE(fwrite(h, 1, 44, f) == 44);
    const int64_t ns = (int64_t)signal_s * rate;
    int16_t *s = malloc((size_t)ns * sizeof *s);
    REQUIRE(s != NULL);
    for (int64_t i = 0; i < ns; i++) {
        double t = (double)i / rate;
        double y = 0.4 * sin(2 * M_PI * 180.0 * t) * (0.5 + 0.5 * sin(2 * M_PI * 2.3 * t)) +
                   0.1 * sin(2 * M_PI * 1234.5 * t + 3 * sin(2 * M_PI * 0.7 * t));
        s[i] = (int16_t)lrint(y * 32767);
    }
    REQUIRE(fwrite(s, 2, (size_t)ns, f) == (size_t)ns);
    free(s);
    REQUIRE(fflush(f) == 0 && ftruncate(fileno(f), (off_t)(44 + data)) == 0);
    fclose(f);
}

static void hour_long(const ptts_model *m) {
    ptts_error e = {0};
    const int rate = 44100;
    const char *p = tmp_file("hour.wav");
    write_hour_wav(p, rate, 31);
    struct stat st;
    REQUIRE(stat(p, &st) == 0);
    long before = max_rss_kb();
    double t0 = ptts_now();
    ptts_voice *v = NULL;
    int rc = ptts_voice_from_audio_file(&v, m, p, 30, &e);
    double dt = ptts_now() - t0;
    long after = max_rss_kb();
    CHECKF(rc == 0, "%s", e.msg);
    /* 30 s at 44.1 kHz -> 1323000 samples -> 720000 at 24 kHz -> + 1920 zeros (end_on_pause)
     * -> 376 frames + BOS */
    CHECKF(v && ptts_voice_positions(v) == 377, "%d positions", v ? ptts_voice_positions(v) : -1);
    /* what a server reserves its caches for (ptts_batch_reserve_clone) */
    CHECK(ptts_voice_clone_positions(PTTS_FRAME_SAMPLES, 30) == 377);
    const double whole_mb = 3600.0 * rate * sizeof(float) / 1048576.0;
    printf("1-hour WAV (%.0f MB on disk, %lld MB allocated; %.0f MB as float): cloned from 30 s "
           "in %.2f s, peak RSS %ld -> %ld MB\n",
           (double)st.st_size / 1048576.0, (long long)st.st_blocks * 512 / 1048576, whole_mb, dt,
           before / 1024, after / 1024);
    CHECKF(after - before < 64 * 1024, "peak RSS grew by %ld MB", (after - before) / 1024);
    /* The reference truncates at the file's rate, then resamples: the same voice as the first
     * 1323000 samples cloned whole. */
    float *x = NULL;
    int64_t n = 0;
    int r2 = 0;
    REQUIRE(ptts_audio_read(p, 30, &x, &n, &r2, &e) == 0);
    CHECK(n == 30 * rate && r2 == rate);
    ptts_voice *w = NULL;
    REQUIRE(ptts_voice_from_samples(&w, m, x, n, rate, 0, &e) == 0);
    double err = v ? voice_state_err(v->st, w->st) : INFINITY;
    printf("  truncated file vs its first 30 s cloned whole: max rel L2 %.3g\n", err);
    CHECK(err == 0);
    ptts_voice_free(w);
    /* max_seconds given to ptts_voice_from_samples truncates the same way */
    REQUIRE(ptts_voice_from_samples(&w, m, x, n, rate, 12.5, &e) == 0);
    ptts_voice *u = NULL;
    REQUIRE(ptts_voice_from_samples(&u, m, x, (int64_t)(12.5 * rate), rate, 0, &e) == 0);
    /* 12.5 s: 300000 samples at 24 kHz + 1920 zeros -> 158 frames + BOS */
    CHECK(voice_state_err(w->st, u->st) == 0 && ptts_voice_positions(w) == 1 + 158);
    CHECK(ptts_voice_clone_positions(PTTS_FRAME_SAMPLES, 12.5) == 1 + 158);
    ptts_voice_free(u);
    ptts_voice_free(w);
    free(x);
    ptts_voice_free(v);
    remove(p);
}

/* The tiny model without mimi.encoder*, mimi.encoder_transformer*, mimi.downsample*. */
static void no_encoder(const ptts_model *full) {
    ptts_error e = {0};
    st_file *src = NULL;
    REQUIRE(st_open(&src, fixture_path("tiny/model.safetensors"), &e) == 0);
    int n = st_count(src), k = 0;
    st_out_tensor *ts = calloc((size_t)n, sizeof *ts);
    REQUIRE(ts != NULL);
    for (int i = 0; i < n; i++) {
        const st_tensor *t = st_at(src, i);
        if (!strncmp(t->name, "mimi.encoder", 12) || !strncmp(t->name, "mimi.downsample", 15))
            continue;
        ts[k].name = t->name;
        ts[k].dtype = t->dtype;
        ts[k].ndim = t->ndim;
        memcpy(ts[k].shape, t->shape, sizeof t->shape);
        ts[k].data = t->data;
        k++;
    }
    printf("model without voice cloning: %d of %d tensors kept\n", k, n);
    CHECK(k < n && k > 0);
    const char *wp = tmp_file("no_encoder.safetensors");
    REQUIRE(st_write(wp, ts, k, NULL, &e) == 0);
    free(ts);
    st_close(src);

    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = wp;
    mo.threads = 2;
    ptts_model *m = NULL;
    int rc = ptts_model_load(&m, &mo, &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (rc) return;
    ptts_model_info info;
    ptts_model_get_info(m, &info);
    CHECK(info.has_voice_cloning == 0);
    static const char *msg = "this checkpoint has no voice-cloning weights: use a preset voice or "
                             "the model with voice cloning";
    ptts_voice *v = NULL;
    rc = ptts_voice_from_audio_file(&v, m, fixture_path("audio/voice_24k.wav"), 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_UNSUPPORTED, msg));
    v = NULL;
    float x[4000];
    sine(x, 4000, 24000, 0.5f);
    rc = ptts_voice_from_samples(&v, m, x, 4000, 24000, 30, &e);
    CHECK(expect_clone_fail(rc, v, &e, PTTS_E_UNSUPPORTED, msg));
    v = NULL;

    /* it still generates from a voice-state file, exactly as the complete model does */
    ptts_voice *a = NULL, *b = NULL;
    REQUIRE(ptts_voice_load(&a, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    REQUIRE(ptts_voice_load(&b, full, fixture_path("tiny/voice.safetensors"), &e) == 0);
    int64_t n_noise = 0;
    float *noise = fixture_f32("tiny/generate_short.safetensors", "noise", &n_noise);
    REQUIRE(noise != NULL);
    int fa = 0, fb = 0;
    const int ld = m->w->arch.ld, fs = m->w->arch.frame_samples;
    float *pa = gen_replay(m, a, "ok go", 50, noise, (int)(n_noise / ld), &fa);
    float *pb = gen_replay(full, b, "ok go", 50, noise, (int)(n_noise / ld), &fb);
    CHECKF(fa > 0 && fa == fb && memcmp(pa, pb, (size_t)fa * fs * sizeof(float)) == 0,
           "%d vs %d frames", fa, fb);
    printf("  generates %d frames from a voice file, identical to the complete model\n", fa);
    free(pa);
    free(pb);
    free(noise);
    ptts_voice_free(a);
    ptts_voice_free(b);
    ptts_model_free(m);
    remove(wp);
}

/* end_on_pause on the reference's input: 37486 samples cut to 15840, faded, + 1920 zeros. */
static void end_on_pause_fixture(void) {
    ptts_error e = {0};
    int64_t n_in = 0, n_want = 0, n_out = 0;
    float *in = fixture_f32("audio/end_on_pause.safetensors", "input", &n_in);
    float *want = fixture_f32("audio/end_on_pause.safetensors", "output", &n_want);
    REQUIRE(in && want && n_in == 37486 && n_want == 17760);
    float *out = NULL;
    REQUIRE(ptts_end_on_pause(in, n_in, 24000, &out, &n_out, &e) == 0);
    CHECKF(n_out == n_want, "%lld samples, expected %lld", (long long)n_out, (long long)n_want);
    double worst = 0;
    for (int64_t i = 0; i < n_out && i < n_want; i++)
        worst = fmax(worst, fabs((double)out[i] - want[i]));
    printf("end_on_pause: %lld -> %lld samples, max |diff| %.3g\n", (long long)n_in,
           (long long)n_out, worst);
    CHECKF(worst <= 1e-7, "max |diff| %.3g", worst);
    free(out);
    /* shorter than one 20 ms frame: unchanged, no padding */
    REQUIRE(ptts_end_on_pause(in, 479, 24000, &out, &n_out, &e) == 0);
    CHECK(n_out == 479 && memcmp(out, in, 479 * sizeof *in) == 0);
    free(out);
    /* all silent: every frame ties at -240 dB, so all count as loud: cut to whole frames,
     * faded, padded */
    float *z = calloc(1000, sizeof *z);
    REQUIRE(z && ptts_end_on_pause(z, 1000, 24000, &out, &n_out, &e) == 0);
    CHECK(n_out == 960 + 1920);
    free(out);
    free(z);
    free(in);
    free(want);
}

int main(void) {
    ptts_error e = {0};
    snprintf(tmpdir, sizeof tmpdir, "test_voice_clone.XXXXXX");
    REQUIRE(mkdtemp(tmpdir) != NULL);

    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    ptts_model *m = NULL;
    int rc = ptts_model_load(&m, &mo, &e);
    REQUIRE(rc == 0 || (fprintf(stderr, "%s\n", e.msg), 0));

    /* the hour-long file first, while the process is small */
    hour_long(m);

    ptts_voice_state *ref = load_ref_voice(m, "tiny/voice.safetensors");
    ptts_voice_state *ref_short = load_ref_voice(m, "tiny/voice_short.safetensors");
    REQUIRE(ref && ref_short && ref->positions == 66 && ref_short->positions == 11);

    ptts_voice *v24 = NULL, *vshort = NULL, *v44 = NULL;
    double e24 = clone_err(m, "audio/voice_24k.wav", ref, &v24);
    double esh = clone_err(m, "audio/short_24k.wav", ref_short, &vshort);
    printf("voice_24k.wav -> voice.safetensors: max rel L2 per position %.3g\n", e24);
    printf("short_24k.wav -> voice_short.safetensors: max rel L2 per position %.3g\n", esh);
    CHECKF(e24 <= TOL, "%.3g", e24);
    CHECKF(esh <= TOL, "%.3g", esh);

    /* the trailing hiss is cut: the voice of short_24k.wav, bit for bit */
    ptts_voice_state *ref_pause = load_ref_voice(m, "tiny/voice_pause.safetensors");
    ptts_voice *vpause = NULL;
    double epa = clone_err(m, "audio/short_trailing_silence_24k.wav", ref_pause, &vpause);
    double epb = vpause && vshort ? voice_state_err(vpause->st, vshort->st) : INFINITY;
    printf("short_trailing_silence_24k.wav -> voice_pause.safetensors: %.3g; vs short_24k.wav's "
           "voice: %.3g\n",
           epa, epb);
    CHECKF(epa <= TOL, "%.3g", epa);
    CHECKF(epb == 0, "%.3g", epb);
    ptts_voice_free(vpause);
    ptts_voice_state_free(ref_pause);
    end_on_pause_fixture();

    /* 44.1 kHz stereo: the same speech, but not the same samples as voice_24k.wav */
    double e44 = clone_err(m, "audio/voice_44k_stereo.wav", ref, &v44);
    printf("voice_44k_stereo.wav -> voice.safetensors: max rel L2 per position %.3g\n", e44);
    CHECKF(e44 <= E44_BOUND, "%.3g", e44);
    if (v44) {
        /* tight: the reference's mono mix and resampling of this file give the same voice */
        int64_t nm = 0, nr = 0;
        float *mono = fixture_f32("audio/resample_44k_to_24k.safetensors", "input_mono", &nm);
        float *res = fixture_f32("audio/resample_44k_to_24k.safetensors", "resampled", &nr);
        REQUIRE(mono && res);
        ptts_voice *a = NULL, *b = NULL, *c = NULL;
        REQUIRE(ptts_voice_from_samples(&a, m, mono, nm, 44100, 30, &e) == 0);
        REQUIRE(ptts_voice_from_samples(&b, m, res, nr, 24000, 30, &e) == 0);
        double ea = voice_state_err(v44->st, a->st), eb = voice_state_err(v44->st, b->st);
        printf("  vs the voice of the reference's mono mix %.3g, of its 24 kHz resampling %.3g\n",
               ea, eb);
        CHECK(ea == 0);
        CHECKF(eb <= TOL, "%.3g", eb);
        /* what a bug looks like: channels summed instead of averaged (twice the level) */
        for (int64_t i = 0; i < nr; i++)
            res[i] *= 2.0f;
        REQUIRE(ptts_voice_from_samples(&c, m, res, nr, 24000, 30, &e) == 0);
        double ec = voice_state_err(c->st, ref);
        printf("  (for scale: channels summed instead of averaged: %.3g vs voice.safetensors)\n",
               ec);
        CHECK(ec > 5 * E44_BOUND);
        ptts_voice_free(a);
        ptts_voice_free(b);
        ptts_voice_free(c);
        free(mono);
        free(res);
    }

    /* export -> the reference's file layout -> same generation */
    cJSON *man = load_manifest();
    if (v24)
        export_and_replay(m, v24, "tiny/voice.safetensors", "generate", "tiny/generate.safetensors",
                          man);
    if (vshort)
        export_and_replay(m, vshort, "tiny/voice_short.safetensors", "generate_short",
                          "tiny/generate_short.safetensors", man);
    cJSON_Delete(man);

    errors(m);
    no_encoder(m);

    ptts_voice_free(v24);
    ptts_voice_free(vshort);
    ptts_voice_free(v44);
    ptts_voice_state_free(ref);
    ptts_voice_state_free(ref_short);
    ptts_model_free(m);
    for (int i = 0; i < 2; i++)
        remove(tmp_file(i ? "generate_short" : "generate"));
    remove(tmp_file("silent.wav"));
    rmdir(tmpdir);
    return test_summary();
}
