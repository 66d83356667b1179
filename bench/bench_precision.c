/*
 * bench_precision.c - what each weight precision costs in accuracy: the full-size generate
 * fixture (full/generate.safetensors: 80 frames of "Hello world. This is a test." from
 * full/voice.safetensors, the reference's float32 noise replayed) run through a stream with the
 * backbone in f32, bf16 and int8, compared with the reference's float32 latents and PCM.
 * Prints, per mode, the relative L2 error over the whole replay (all frames as one vector) and
 * the worst single frame, for latents, EOS logits and PCM, plus the error against this
 * program's own f32 run. The codec's own share: "pcm, codec alone" decodes the reference's
 * latents (a fresh decoder of the mode's weights) and compares with the reference PCM.
 * Reports only; nothing is gated (the parity tests gate f32 at 1e-4).
 *
 * Usage: bench_precision [threads (default 0: every CPU)]; fixtures from $PTTS_FIXTURES, else
 * tests/fixtures (run from the source tree).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "bench_args.h"
#include "codec.h"
#include "generate.h"
#include "model.h"
#include "safetensors.h"

#define FRAMES 80

static const char *fixture(const char *rel) {
    static char buf[4][1024];
    static int slot;
    const char *dir = getenv("PTTS_FIXTURES");
    char *b = buf[slot++ % 4];
    snprintf(b, 1024, "%s/%s", dir && *dir ? dir : "tests/fixtures", rel);
    return b;
}

static float *load_f32(const char *path, const char *name, int64_t *numel) {
    st_file *f;
    ptts_error e = {0};
    if (st_open(&f, path, &e)) {
        fprintf(stderr, "bench_precision: %s\n", e.msg);
        return NULL;
    }
    const st_tensor *t = st_find(f, name);
    float *out = t ? malloc((size_t)t->numel * sizeof(float)) : NULL;
    if (out && st_to_f32(f, t, out, &e)) {
        free(out);
        out = NULL;
    }
    if (numel) *numel = t ? t->numel : 0;
    st_close(f);
    return out;
}

typedef struct {
    double num, den, worst; /* sum (a-b)^2, sum b^2, worst per-frame relative L2 */
} acc;

static void acc_add(acc *a, const float *x, const float *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)x[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    a->num += num;
    a->den += den;
    double r = den > 0 ? sqrt(num / den) : sqrt(num);
    if (r > a->worst) a->worst = r;
}

static double acc_rel(const acc *a) { return a->den > 0 ? sqrt(a->num / a->den) : sqrt(a->num); }

/* The reference latents through a fresh decoder of m's weights, PCM against the reference
 * (whose first 120 samples carry the chunk's fade-in, MODEL.md 6: applied here too). */
static int codec_alone(ptts_model *m, const float *rlat, const float *rpcm, acc *a) {
    ptts_codec_dec *d;
    ptts_error e = {0};
    const int ld = m->w->arch.ld, fs = PTTS_FRAME_SAMPLES;
    float *pcm = malloc((size_t)fs * sizeof(float));
    if (!pcm || ptts_codec_dec_create(&d, m->w, &e)) {
        fprintf(stderr, "bench_precision: %s\n", pcm ? e.msg : "out of memory");
        free(pcm);
        return -1;
    }
    for (int f = 0; f < FRAMES; f++) {
        ptts_codec_dec_frame(d, &m->ctx, rlat + (size_t)f * ld, pcm, NULL);
        for (int i = 0; f == 0 && i < 120; i++)
            pcm[i] *= ptts_linspace_f32(0.f, 1.f, 120, i);
        acc_add(a, pcm, rpcm + (size_t)f * fs, (size_t)fs);
    }
    ptts_codec_dec_free(d);
    free(pcm);
    return 0;
}

/* Runs the replay; writes FRAMES latents, eos and pcm frames; *codec gets the codec-alone
 * error. */
static int run(int precision, int threads, const float *noise, int noise_rows, const float *rlat,
               const float *rpcm, float *lat, float *eos, float *pcm, double *ms, acc *codec) {
    ptts_error e = {0};
    ptts_arch a;
    ptts_arch_preset(&a, "full");
    ptts_model *m;
    if (ptts_model_create_filled(&m, &a, fixture("tokenizer/sp_unigram.model"), threads, precision,
                                 &e)) {
        fprintf(stderr, "bench_precision: %s\n", e.msg);
        return -1;
    }
    ptts_voice *v;
    if (ptts_voice_load(&v, m, fixture("full/voice.safetensors"), &e)) {
        fprintf(stderr, "bench_precision: %s\n", e.msg);
        ptts_model_free(m);
        return -1;
    }
    const int ld = a.ld, fs = PTTS_FRAME_SAMPLES;
    ptts_gen_options o = ptts_gen_options_default();
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    o.max_tokens = 50;
    o.sampler_steps = 1;
    o.noise = noise;
    o.noise_rows = noise_rows;
    ptts_stream *s;
    int rc = ptts_stream_create(&s, m, &e);
    if (!rc) rc = ptts_stream_start(s, v, "Hello world. This is a test.", &o, &e);
    double t0 = ptts_now();
    int f = 0;
    while (!rc && f < FRAMES) {
        int n = ptts_stream_next(s, pcm + (size_t)f * fs, &e);
        if (n < 0) rc = n;
        if (n <= 0) break;
        const ptts_step_record *r = ptts_stream_last_step(s);
        memcpy(lat + (size_t)f * ld, r->latent, (size_t)ld * sizeof(float));
        eos[f] = r->eos;
        f++;
    }
    *ms = (ptts_now() - t0) * 1e3 / (f ? f : 1);
    if (rc) {
        fprintf(stderr, "bench_precision: %s\n", e.msg);
    } else if (f != FRAMES) {
        fprintf(stderr, "bench_precision: %d frames, not %d\n", f, FRAMES);
        rc = -1;
    }
    ptts_stream_free(s);
    ptts_voice_free(v);
    if (!rc) rc = codec_alone(m, rlat, rpcm, codec);
    ptts_model_free(m);
    return rc;
}

int main(int argc, char **argv) {
    int threads;
    int rc = bench_args(argc, argv, 1, "usage: bench_precision [threads (0: every CPU)]\n");
    if (rc >= 0) return rc;
    if (bench_arg_int(argc, argv, 1, "threads", 0, 0, 1024, &threads)) return 2;
    const char *gp = fixture("full/generate.safetensors");
    int64_t n_noise, n_lat, n_eos, n_pcm;
    float *noise = load_f32(gp, "noise", &n_noise);
    float *rlat = load_f32(gp, "latents", &n_lat);
    float *reos = load_f32(gp, "eos_logits", &n_eos);
    float *rpcm = load_f32(gp, "pcm", &n_pcm);
    const int ld = 32, fs = PTTS_FRAME_SAMPLES;
    if (!noise || !rlat || !reos || !rpcm || n_lat < FRAMES * ld || n_pcm < FRAMES * fs ||
        n_eos < FRAMES) {
        fprintf(stderr, "bench_precision: cannot read %s (set PTTS_FIXTURES)\n", gp);
        return 1;
    }
    float *lat[3], *eos[3], *pcm[3];
    printf("precision error over the full generate replay (%d frames, reference float32 noise), "
           "relative L2: whole replay / worst frame\n",
           FRAMES);
    printf("%-5s %9s | %-19s | %-19s | %-9s | %-19s | %-19s | %-19s\n", "mode", "ms/frame",
           "latents vs ref", "pcm vs ref", "eos vs ref", "latents vs own f32", "pcm vs own f32",
           "pcm, codec alone");
    static const char *names[3] = {"f32", "bf16", "int8"};
    for (int p = 0; p < 3; p++) {
        lat[p] = malloc((size_t)FRAMES * ld * sizeof(float));
        eos[p] = malloc((size_t)FRAMES * sizeof(float));
        pcm[p] = malloc((size_t)FRAMES * fs * sizeof(float));
        double ms;
        acc ac = {0};
        if (!lat[p] || !eos[p] || !pcm[p] ||
            run(p, threads, noise, (int)(n_noise / ld), rlat, rpcm, lat[p], eos[p], pcm[p], &ms,
                &ac))
            return 1;
        acc al = {0}, ap = {0}, ae = {0}, ol = {0}, op = {0};
        for (int f = 0; f < FRAMES; f++) {
            acc_add(&al, lat[p] + (size_t)f * ld, rlat + (size_t)f * ld, (size_t)ld);
            acc_add(&ap, pcm[p] + (size_t)f * fs, rpcm + (size_t)f * fs, (size_t)fs);
            acc_add(&ol, lat[p] + (size_t)f * ld, lat[0] + (size_t)f * ld, (size_t)ld);
            acc_add(&op, pcm[p] + (size_t)f * fs, pcm[0] + (size_t)f * fs, (size_t)fs);
        }
        acc_add(&ae, eos[p], reos, FRAMES);
        printf("%-5s %9.2f | %8.2e / %8.2e | %8.2e / %8.2e | %9.2e | %8.2e / %8.2e | %8.2e / "
               "%8.2e | %8.2e / %8.2e\n",
               names[p], ms, acc_rel(&al), al.worst, acc_rel(&ap), ap.worst, acc_rel(&ae),
               acc_rel(&ol), ol.worst, acc_rel(&op), op.worst, acc_rel(&ac), ac.worst);
        fflush(stdout);
    }
    for (int p = 0; p < 3; p++) {
        free(lat[p]);
        free(eos[p]);
        free(pcm[p]);
    }
    free(noise);
    free(rlat);
    free(reos);
    free(rpcm);
    return 0;
}
