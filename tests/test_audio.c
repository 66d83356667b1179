/*
 * test_audio.c - audio input, resampling and the WAV writer (src/audio.c).
 *
 * Resampling is checked two ways: against the reference's own output (fixture
 * audio/resample_44k_to_24k.safetensors, scipy resample_poly 44.1 -> 24 kHz) and, for many rate
 * pairs and lengths, against a slow float64 transcription of scipy's definition written here
 * independently of the library: firwin taps, h * up, scipy's n_pre_pad / n_post_pad /
 * n_pre_remove padding, upfirdn's full output (zero-stuff, convolve) and the slice. Reading is
 * checked on the fixture WAVs, on files of every sample format / codec written here with
 * libsndfile, on hostile inputs and on max_seconds truncation. The writer is checked byte by
 * byte (header sizes, clamping and truncation, stream header, abort leaves nothing).
 */
// ctest-label: unit
#include <cjson/cJSON.h>
#include <dirent.h>
#include <sndfile.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio.h"
#include "test.h"
#include "wav.h"

/* ---- a tiny safetensors reader for the fixture (F32 tensors only) ---- */

static float *load_f32(const char *path, const char *name, int64_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)size);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = (hl << 8) | buf[i];
    float *out = NULL;
    char *js = malloc(hl + 1);
    memcpy(js, buf + 8, hl);
    js[hl] = 0;
    cJSON *root = cJSON_Parse(js);
    cJSON *t = cJSON_GetObjectItemCaseSensitive(root, name);
    cJSON *offs = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
    cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    if (offs && cJSON_IsString(dt) && !strcmp(dt->valuestring, "F32")) {
        size_t b = (size_t)cJSON_GetArrayItem(offs, 0)->valuedouble;
        size_t e = (size_t)cJSON_GetArrayItem(offs, 1)->valuedouble;
        *n = (int64_t)((e - b) / 4);
        out = malloc(e - b);
        memcpy(out, buf + 8 + hl + b, e - b);
    }
    cJSON_Delete(root);
    free(js);
    free(buf);
    return out;
}

/* ---- slow float64 resample_poly, transcribed from scipy's definition ---- */

static int64_t gcd_(int64_t a, int64_t b) { return b ? gcd_(b, a % b) : a; }

static double i0_(double x) {
    double s = 0, t = 1;
    for (int k = 0; k < 60; k++) {
        if (k) t *= (x / 2) * (x / 2) / ((double)k * k);
        s += t;
    }
    return s;
}

static float *slow_resample(const float *x, int64_t n, int from, int to, int64_t *n_out) {
    int64_t g = gcd_(from, to), up = to / g, down = from / g;
    int64_t m = n * up / down + ((n * up) % down != 0);
    *n_out = m;
    float *y = calloc((size_t)(m + 1), sizeof *y);
    if (up == down) {
        memcpy(y, x, (size_t)n * sizeof *y);
        return y;
    }
    /* firwin(2*half+1, 1/max, window=('kaiser', 5.0)), scaled to unit sum, times up */
    int64_t max = up > down ? up : down, half = 10 * max, L = 2 * half + 1;
    double *h = malloc((size_t)L * sizeof *h), sum = 0;
    double alpha = (L - 1) / 2.0, fc = 1.0 / (double)max;
    for (int64_t k = 0; k < L; k++) {
        double mm = k - alpha, a = fc * mm;
        double sinc = a == 0 ? 1 : sin(3.14159265358979323846 * a) / (3.14159265358979323846 * a);
        double r = (k - alpha) / alpha;
        double w = i0_(5.0 * sqrt(1 - r * r)) / i0_(5.0);
        h[k] = fc * sinc * w;
        sum += h[k];
    }
    for (int64_t k = 0; k < L; k++)
        h[k] = h[k] / sum * (double)up;
    /* scipy's padding of h so that the kept outputs are centred */
    int64_t pre = down - half % down, post = 0, remove = (half + pre) / down;
#define OUTLEN(lh) ((((n - 1) * up + (lh)) - 1) / down + 1)
    while (OUTLEN(L + pre + post) < m + remove)
        post++;
    /* upfirdn: y_full[k] = sum_j hp[j] * xup[k*down - j], xup[u*up] = x[u], else 0 */
    for (int64_t i = 0; i < m; i++) {
        int64_t k = i + remove;
        double acc = 0;
        for (int64_t u = 0; u < n; u++) {
            int64_t j = k * down - u * up; /* index into the padded filter */
            int64_t jh = j - pre;          /* index into h */
            if (j >= 0 && j < L + pre + post && jh >= 0 && jh < L) acc += h[jh] * (double)x[u];
        }
        y[i] = (float)acc;
    }
#undef OUTLEN
    free(h);
    return y;
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}
static float frand(void) { return (float)(rnd() / 8388608.0 - 1.0); } /* [-1, 1) */

/* ---- helpers ---- */

static char tmpdir[256];

static const char *tmp_path(const char *name) {
    static char b[8][512];
    static int k;
    char *p = b[k++ & 7];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static void write_bytes(const char *path, const void *d, size_t n) {
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    if (n) REQUIRE(fwrite(d, 1, n, f) == n);
    fclose(f);
}

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long s = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)s + 1);
    *n = fread(b, 1, (size_t)s, f);
    fclose(f);
    return b;
}

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int count_dir_entries(void) {
    DIR *d = opendir(tmpdir);
    int c = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) c++;
    closedir(d);
    return c;
}

/* Write `n` frames of `ch` channels in `format` with libsndfile, from float or (if `xi`) from
 * int samples (full-scale 32-bit, which libsndfile stores exactly in every PCM width);
 * 0 if the format is missing. */
static int sf_write_file(const char *path, int format, int rate, int ch, const float *x,
                         const int *xi, int64_t n) {
    SF_INFO info = {0};
    info.samplerate = rate;
    info.channels = ch;
    info.format = format;
    if (!sf_format_check(&info)) return 0;
    SNDFILE *sf = sf_open(path, SFM_WRITE, &info);
    if (!sf) return 0;
    sf_count_t w = xi ? sf_writef_int(sf, xi, n) : sf_writef_float(sf, x, n);
    sf_close(sf);
    return w == n;
}

/* ---- tests ---- */

static void test_resample_fixture(void) {
    int64_t n_in = 0, n_ref = 0;
    float *in =
        load_f32(fixture_path("audio/resample_44k_to_24k.safetensors"), "input_mono", &n_in);
    float *ref =
        load_f32(fixture_path("audio/resample_44k_to_24k.safetensors"), "resampled", &n_ref);
    REQUIRE(in && ref);
    float *out = NULL;
    int64_t m = 0;
    ptts_error e = {0};
    CHECK(ptts_resample(in, n_in, 44100, 24000, &out, &m, &e) == PTTS_OK);
    CHECKF(m == n_ref, "length %lld vs %lld", (long long)m, (long long)n_ref);
    if (m == n_ref) {
        double err = rel_l2(out, ref, (size_t)m);
        double maxd = 0;
        for (int64_t i = 0; i < m; i++)
            maxd = fmax(maxd, fabs((double)out[i] - ref[i]));
        printf("resample 44100->24000 vs reference: rel L2 %.3g, max abs %.3g\n", err, maxd);
        CHECKF(err <= 1e-6, "rel L2 %g", err);
    }
    /* speed: 10 s of 44.1 kHz */
    int64_t n10 = 441000;
    float *x = malloc((size_t)n10 * sizeof *x);
    for (int64_t i = 0; i < n10; i++)
        x[i] = in[i % n_in];
    float *y = NULL;
    int64_t my = 0;
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = ptts_now();
        CHECK(ptts_resample(x, n10, 44100, 24000, &y, &my, &e) == PTTS_OK);
        best = fmin(best, ptts_now() - t0);
        CHECK(my == 240000);
        free(y);
    }
    printf("resample 10 s 44.1 kHz -> 24 kHz: %.1f ms (best of 3)\n", best * 1e3);
    free(x);

    /* the reading side: the stereo 44.1 kHz file mixes down to the reference's input_mono */
    float *mono = NULL;
    int64_t nm = 0;
    int rate = 0;
    CHECK(ptts_audio_read(fixture_path("audio/voice_44k_stereo.wav"), 0, &mono, &nm, &rate, &e) ==
          PTTS_OK);
    CHECK(rate == 44100);
    CHECKF(nm == n_in, "%lld frames vs %lld", (long long)nm, (long long)n_in);
    if (nm == n_in) {
        int exact = 1;
        for (int64_t i = 0; i < nm; i++)
            exact &= mono[i] == in[i];
        CHECKF(exact, "mono mix differs from the reference's input_mono");
    }
    free(mono);
    free(out);
    free(in);
    free(ref);
}

static void test_resample_vs_slow(void) {
    static const int rates[] = {8000, 11025, 16000, 22050, 32000, 44100, 48000, 96000, 7919, 12345};
    static const int64_t lens[] = {0, 1, 2, 3, 7, 150, 1001};
    float *x = malloc(4096 * sizeof *x);
    for (int i = 0; i < 4096; i++)
        x[i] = 0.5f * sinf(0.05f * i) + 0.3f * frand();
    double worst = 0;
    int pairs[32][2], np = 0;
    for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
        pairs[np][0] = rates[r];
        pairs[np++][1] = 24000;
    }
    pairs[np][0] = 24000, pairs[np++][1] = 44100;
    pairs[np][0] = 24000, pairs[np++][1] = 7919;
    pairs[np][0] = 44100, pairs[np++][1] = 48000;
    pairs[np][0] = 48000, pairs[np++][1] = 44100;
    pairs[np][0] = 12345, pairs[np++][1] = 11025;
    pairs[np][0] = 24000, pairs[np++][1] = 24000;
    for (int p = 0; p < np; p++) {
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            int64_t n = lens[li];
            /* the long length only where the filter is short enough for the slow O(n*m) loop */
            if (n > 200 && (pairs[p][0] == 7919 || pairs[p][1] == 7919 || pairs[p][0] == 12345))
                n = 200;
            float *a = NULL;
            int64_t ma = 0, mb = 0;
            ptts_error e = {0};
            int rc = ptts_resample(x, n, pairs[p][0], pairs[p][1], &a, &ma, &e);
            float *b = slow_resample(x, n, pairs[p][0], pairs[p][1], &mb);
            CHECKF(rc == PTTS_OK && ma == mb, "%d->%d n=%lld: rc %d len %lld vs %lld", pairs[p][0],
                   pairs[p][1], (long long)n, rc, (long long)ma, (long long)mb);
            if (rc == PTTS_OK && ma == mb && ma > 0) {
                double err = rel_l2(a, b, (size_t)ma);
                worst = fmax(worst, err);
                CHECKF(err <= 1e-6, "%d->%d n=%lld: rel L2 %g", pairs[p][0], pairs[p][1],
                       (long long)n, err);
            }
            free(a);
            free(b);
        }
    }
    printf("resample vs slow float64 definition, %d rate pairs: worst rel L2 %.3g\n", np, worst);
    /* errors */
    float *o = NULL;
    int64_t m = 0;
    ptts_error e = {0};
    CHECK(ptts_resample(x, 10, 0, 24000, &o, &m, &e) == PTTS_E_INVALID);
    CHECK(ptts_resample(x, 10, 24000, -5, &o, &m, &e) == PTTS_E_INVALID);
    CHECK(ptts_resample(x, -1, 44100, 24000, &o, &m, &e) == PTTS_E_INVALID);
    CHECK(ptts_resample(NULL, 10, 44100, 24000, &o, &m, &e) == PTTS_E_INVALID);
    CHECK(o == NULL);
    free(x);
}

static void test_read_fixtures(void) {
    float *x = NULL;
    int64_t n = 0;
    int rate = 0;
    ptts_error e = {0};
    CHECK(ptts_audio_read(fixture_path("audio/voice_24k.wav"), 0, &x, &n, &rate, &e) == PTTS_OK);
    CHECK(rate == 24000 && n == 132249);
    /* the reference reads int16 / 32768: check against the raw bytes */
    size_t sz = 0;
    unsigned char *raw = slurp(fixture_path("audio/voice_24k.wav"), &sz);
    REQUIRE(raw && sz >= 44 + 2 * 132249);
    int ok = 1;
    for (int64_t i = 0; i < n && ok; i++) {
        int16_t v = (int16_t)(raw[sz - 2 * n + 2 * i] | raw[sz - 2 * n + 2 * i + 1] << 8);
        ok = x[i] == (float)v / 32768.0f;
    }
    CHECK(ok);
    free(x);

    /* max_seconds: exactly rate * seconds frames, the same samples */
    float *y = NULL;
    int64_t ny = 0;
    CHECK(ptts_audio_read(fixture_path("audio/voice_24k.wav"), 1.5, &y, &ny, &rate, &e) == PTTS_OK);
    CHECK(ny == 36000);
    CHECK(y &&
          y[35999] ==
              (float)(int16_t)(raw[sz - 2 * n + 71998] | raw[sz - 2 * n + 71999] << 8) / 32768.0f);
    free(y);
    /* longer than the file: the whole file */
    CHECK(ptts_audio_read(fixture_path("audio/voice_24k.wav"), 1000, &y, &ny, &rate, &e) ==
          PTTS_OK);
    CHECK(ny == 132249);
    free(y);
    /* memory: same result, truncation too */
    CHECK(ptts_audio_read_memory(raw, sz, 0.25, &y, &ny, &rate, &e) == PTTS_OK);
    CHECK(ny == 6000 && rate == 24000);
    free(y);
    CHECK(ptts_audio_read_memory(raw, sz, 0, &y, &ny, &rate, &e) == PTTS_OK);
    CHECK(ny == 132249);
    free(y);
    /* a WAV cut inside its data: the frames that are there */
    CHECK(ptts_audio_read_memory(raw, 44 + 2000, 0, &y, &ny, &rate, &e) == PTTS_OK);
    CHECKF(ny > 0 && ny <= 1000, "%lld", (long long)ny);
    free(y);
    /* cut inside the header */
    CHECK(ptts_audio_read_memory(raw, 30, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    CHECK(y == NULL && ny == 0);
    free(raw);

    CHECK(ptts_audio_read(fixture_path("audio/short_24k.wav"), 0, &x, &n, &rate, &e) == PTTS_OK);
    CHECK(n == 23086 && rate == 24000);
    free(x);
}

static void test_formats(void) {
    const int64_t n = 24000;
    float *x = malloc((size_t)n * 3 * sizeof *x);
    int *xi = malloc((size_t)n * sizeof *xi);
    for (int64_t i = 0; i < n; i++) {
        float s = 0.5f * sinf(2.0f * 3.14159265f * 440.0f * (float)i / 24000.0f);
        int v = (int)(s * 32768.0f); /* a 16-bit value, stored exactly by every format */
        xi[i] = (int)((unsigned)v << 16);
        x[i] = (float)v / 32768.0f;
    }
    struct {
        const char *name;
        int format;
        double tol; /* relative L2 tolerance of the decoded signal */
        int optional;
    } fmts[] = {
        {"pcm16.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 0, 0},
        {"pcm24.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_24, 0, 0},
        {"pcm32.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_32, 0, 0},
        {"float.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 0, 0},
        {"double.wav", SF_FORMAT_WAV | SF_FORMAT_DOUBLE, 0, 0},
        {"pcm16.aiff", SF_FORMAT_AIFF | SF_FORMAT_PCM_16, 0, 0},
        {"pcm16.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 0, 0},
        {"vorbis.ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS, 0.05, 0},
        {"opus.ogg", SF_FORMAT_OGG | SF_FORMAT_OPUS, 0.2, 1},
        {"layer3.mp3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, 0.2, 1},
    };
    for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
        const char *path = tmp_path(fmts[f].name);
        /* libsndfile stores ints in float files unscaled: float data for those */
        int sub = fmts[f].format & SF_FORMAT_SUBMASK;
        int use_int = sub != SF_FORMAT_FLOAT && sub != SF_FORMAT_DOUBLE;
        if (!sf_write_file(path, fmts[f].format, 24000, 1, x, use_int ? xi : NULL, n)) {
            CHECKF(fmts[f].optional, "cannot write %s with libsndfile", fmts[f].name);
            printf("format %s: not available in this libsndfile, skipped\n", fmts[f].name);
            continue;
        }
        float *y = NULL;
        int64_t ny = 0;
        int rate = 0;
        ptts_error e = {0};
        int rc = ptts_audio_read(path, 0, &y, &ny, &rate, &e);
        CHECKF(rc == PTTS_OK, "%s: %s", fmts[f].name, e.msg);
        if (rc != PTTS_OK) continue;
        CHECK(rate == 24000);
        if (fmts[f].tol == 0) {
            CHECKF(ny == n && memcmp(x, y, (size_t)n * sizeof *x) == 0, "%s not exact",
                   fmts[f].name);
        } else {
            /* lossy: about the right length; signal close after the codec's delay is aligned */
            CHECKF(llabs(ny - n) < 4000, "%s: %lld frames", fmts[f].name, (long long)ny);
            double best = INFINITY;
            for (int lag = -2000; lag <= 2000; lag++) {
                int64_t a0 = 4000, len = 16000;
                if (a0 + lag < 0 || a0 + lag + len > ny) continue;
                double err = rel_l2(y + a0 + lag, x + a0, (size_t)len);
                if (err < best) best = err;
            }
            printf("format %s: %lld frames, rel L2 after alignment %.3g\n", fmts[f].name,
                   (long long)ny, best);
            CHECKF(best < fmts[f].tol, "%s: rel L2 %g", fmts[f].name, best);
        }
        /* same through memory */
        size_t sz = 0;
        unsigned char *b = slurp(path, &sz);
        float *z = NULL;
        int64_t nz = 0;
        CHECKF(ptts_audio_read_memory(b, sz, 0, &z, &nz, &rate, &e) == PTTS_OK, "%s: %s",
               fmts[f].name, e.msg);
        CHECK(nz == ny && z && memcmp(z, y, (size_t)ny * sizeof *z) == 0);
        free(z);
        free(b);
        free(y);
    }
    /* three channels: mean in float (filled backwards: x[i] is read before x[3i..] is written) */
    for (int64_t i = n / 3 - 1; i >= 0; i--) {
        float a = x[i];
        x[3 * i + 0] = a, x[3 * i + 1] = -0.25f * (float)(i % 7), x[3 * i + 2] = 0.1f;
    }
    const char *p3 = tmp_path("three.wav");
    REQUIRE(sf_write_file(p3, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 3, x, NULL, n / 3));
    float *y = NULL;
    int64_t ny = 0;
    int rate = 0;
    ptts_error e = {0};
    CHECK(ptts_audio_read(p3, 0, &y, &ny, &rate, &e) == PTTS_OK);
    CHECK(ny == n / 3 && rate == 16000);
    int ok = 1;
    for (int64_t i = 0; i < ny && ok; i++)
        ok = y[i] == (x[3 * i] + x[3 * i + 1] + x[3 * i + 2]) / 3.0f && isfinite(y[i]);
    CHECK(ok);
    free(y);
    /* non-finite samples are refused */
    x[5] = NAN;
    const char *pn = tmp_path("nan.wav");
    REQUIRE(sf_write_file(pn, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 1, x, NULL, 100));
    CHECK(ptts_audio_read(pn, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    /* a rate the resampler must not be asked for */
    const char *pr = tmp_path("rate.wav");
    REQUIRE(sf_write_file(pr, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 50, 1, x + 10, NULL, 100));
    CHECK(ptts_audio_read(pr, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    CHECK(strstr(e.msg, "sample rate") != NULL);
    /* a valid WAV with no frames */
    const char *pz = tmp_path("empty.wav");
    REQUIRE(sf_write_file(pz, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 24000, 1, x, NULL, 0));
    CHECK(ptts_audio_read(pz, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    free(x);
    free(xi);
}

static void test_hostile(void) {
    float *y = NULL;
    int64_t ny = 0;
    int rate = 0;
    ptts_error e = {0};
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rnd();
    CHECK(ptts_audio_read_memory(junk, sizeof junk, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    const char *text = "Hello, this is not audio at all.\n";
    CHECK(ptts_audio_read_memory(text, strlen(text), 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    CHECK(strstr(e.msg, "not an audio file") != NULL);
    const char *pt = tmp_path("text.wav");
    write_bytes(pt, text, strlen(text));
    CHECK(ptts_audio_read(pt, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    const char *pe = tmp_path("zero.wav");
    write_bytes(pe, "", 0);
    CHECK(ptts_audio_read(pe, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    CHECK(ptts_audio_read_memory("", 0, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    /* random bytes behind every accepted magic */
    static const char magics[][13] = {
        "RIFF\x10\0\0\0WAVE", "fLaC", "OggS", "ID3\x03",
        "FORM\0\0\0\020AIFF", "caff", "riff", "RF64\xff\xff\xff\xffWAVE",
        "\xff\xfb\x90\x00"};
    static const size_t magic_len[] = {12, 4, 4, 4, 12, 4, 4, 12, 4};
    for (size_t m = 0; m < sizeof magics / sizeof *magics; m++) {
        unsigned char b[600];
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)rnd();
        memcpy(b, magics[m], magic_len[m]);
        int rc = ptts_audio_read_memory(b, sizeof b, 0, &y, &ny, &rate, &e);
        CHECKF(rc == PTTS_E_AUDIO, "magic %zu: rc %d", m, rc);
        free(y);
        y = NULL;
    }
    /* absurd headers: channels 0, rate 0, huge data size */
    unsigned char hdr[44 + 200];
    memset(hdr, 0, sizeof hdr);
    wav_header(hdr, 24000, 100);
    hdr[22] = 0; /* channels = 0 */
    CHECK(ptts_audio_read_memory(hdr, sizeof hdr, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    wav_header(hdr, 0, 100);
    CHECK(ptts_audio_read_memory(hdr, sizeof hdr, 0, &y, &ny, &rate, &e) == PTTS_E_AUDIO);
    wav_header(hdr, 24000, -1); /* claims 2e9 bytes, has 200 */
    CHECK(ptts_audio_read_memory(hdr, sizeof hdr, 0, &y, &ny, &rate, &e) == PTTS_OK);
    CHECK(ny == 100);
    free(y);
    /* missing file and a directory: I/O errors */
    CHECK(ptts_audio_read(tmp_path("does-not-exist.wav"), 0, &y, &ny, &rate, &e) == PTTS_E_IO);
    CHECK(ptts_audio_read(tmpdir, 0, &y, &ny, &rate, &e) == PTTS_E_IO);
    CHECK(ptts_audio_read(NULL, 0, &y, &ny, &rate, &e) == PTTS_E_INVALID);
}

static void test_writer(void) {
    ptts_error e = {0};
    const char *path = tmp_path("out.wav");
    const float s[] = {-2.0f, -1.0f, -0.5f,  0.0f,     0.5f,  1.0f,     2.0f,
                       NAN,   1e-5f, -1e-5f, 0.99999f, -0.3f, INFINITY, -INFINITY};
    const int16_t want[] = {-32767,
                            -32767,
                            -16383,
                            0,
                            16383,
                            32767,
                            32767,
                            0,
                            0,
                            0,
                            (int16_t)(0.99999f * 32767.0f),
                            (int16_t)(-0.3f * 32767.0f),
                            32767,
                            -32767};
    const int ns = (int)(sizeof s / sizeof *s);
    CHECK(want[11] == -9830); /* -9830.1 truncated toward zero */
    wav_writer *w = NULL;
    REQUIRE(wav_open(&w, path, 24000, &e) == PTTS_OK);
    CHECK(access(path, F_OK) != 0); /* nothing at the final name until close */
    for (int rep = 0; rep < 3; rep++)
        CHECK(wav_write(w, s, ns, &e) == PTTS_OK);
    CHECK(wav_write(w, s, 0, &e) == PTTS_OK);
    CHECK(wav_close(w, &e) == PTTS_OK);
    size_t sz = 0;
    unsigned char *b = slurp(path, &sz);
    REQUIRE(b);
    CHECK(sz == 44 + 2 * 3 * (size_t)ns);
    CHECK(!memcmp(b, "RIFF", 4) && rd32(b + 4) == sz - 8 && !memcmp(b + 8, "WAVEfmt ", 8));
    CHECK(rd32(b + 16) == 16 && b[20] == 1 && b[22] == 1 && rd32(b + 24) == 24000);
    CHECK(rd32(b + 28) == 48000 && b[32] == 2 && b[34] == 16);
    CHECK(!memcmp(b + 36, "data", 4) && rd32(b + 40) == 2 * 3 * (uint32_t)ns);
    int ok = 1;
    for (int i = 0; i < 3 * ns; i++)
        ok &= (int16_t)(b[44 + 2 * i] | b[45 + 2 * i] << 8) == want[i % ns];
    CHECK(ok);
    free(b);
    CHECK(count_dir_entries() >= 1);
    /* read back through the reader */
    float *y = NULL;
    int64_t ny = 0;
    int rate = 0;
    CHECK(ptts_audio_read(path, 0, &y, &ny, &rate, &e) == PTTS_OK);
    CHECK(ny == 3 * ns && rate == 24000 && y[4] == 16383.0f / 32768.0f);
    free(y);

    /* abort: the temporary disappears and an existing file is left untouched */
    int before = count_dir_entries();
    REQUIRE(wav_open(&w, path, 24000, &e) == PTTS_OK);
    CHECK(count_dir_entries() == before + 1);
    CHECK(wav_write(w, s, ns, &e) == PTTS_OK);
    wav_abort(w);
    CHECK(count_dir_entries() == before);
    b = slurp(path, &sz);
    CHECK(b && sz == 44 + 2 * 3 * (size_t)ns);
    free(b);
    wav_abort(NULL);
    const char *p2 = tmp_path("never.wav");
    REQUIRE(wav_open(&w, p2, 24000, &e) == PTTS_OK);
    wav_abort(w);
    CHECK(access(p2, F_OK) != 0 && count_dir_entries() == before);
    /* errors */
    CHECK(wav_open(&w, tmp_path("no/such/dir.wav"), 24000, &e) == PTTS_E_IO && w == NULL);
    CHECK(wav_open(&w, path, 0, &e) == PTTS_E_INVALID);

    /* stream: header announces the reference's 1e9 frames, never patched */
    FILE *f = tmpfile();
    REQUIRE(f);
    REQUIRE(wav_open_stream(&w, f, 24000, &e) == PTTS_OK);
    CHECK(wav_write(w, s, ns, &e) == PTTS_OK);
    CHECK(wav_close(w, &e) == PTTS_OK);
    long fs = ftell(f);
    CHECK(fs == 44 + 2 * ns);
    unsigned char hb[64];
    rewind(f);
    CHECK(fread(hb, 1, 48, f) == 48);
    CHECK(rd32(hb + 40) == 2000000000u && rd32(hb + 4) == 2000000036u);
    CHECK((int16_t)(hb[44] | hb[45] << 8) == -32767);
    fclose(f);

    /* wav_header clamps lengths a RIFF header cannot hold */
    uint8_t h[44];
    wav_header(h, 24000, INT64_C(5000000000));
    CHECK(rd32(h + 40) % 2 == 0 && rd32(h + 40) >= 0xFFFFFFD0u && rd32(h + 4) == rd32(h + 40) + 36);
    wav_header(h, 22050, 0);
    CHECK(rd32(h + 40) == 0 && rd32(h + 4) == 36 && rd32(h + 24) == 22050 && rd32(h + 28) == 44100);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ptts_test_audio_XXXXXX");
    REQUIRE(mkdtemp(tmpdir));
    test_resample_fixture();
    test_resample_vs_slow();
    test_read_fixtures();
    test_hostile();
    test_formats();
    test_writer();
    /* clean up */
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) unlink(tmp_path(de->d_name));
    if (d) closedir(d);
    rmdir(tmpdir);
    return test_summary();
}
