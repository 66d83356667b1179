/*
 * bench_vulkan.c - the Vulkan engine on the full-size synthetic model (pocket-fill-v1 weights):
 * for 1, 8, 32, 128 streams (one engine, slots batched), ms per frame, real-time factor per
 * stream and in aggregate (a frame is 80 ms of audio), the split between the step (backbone +
 * flow head) and the codec, time to first audio (chunk start + a one-frame step call + decode,
 * as a stream's first call), the GPU memory held, and ms per frame and aggregate real-time
 * factor when each call pairs the decode of the last call with the next call's step in one
 * submission (step_decode: on two queues, side by side). Figures only, never assertions.
 *
 * Usage: bench_vulkan [--help] [--arch full|tiny] [--streams 1,8,32,128] [--frames N] [--k K]
 *                     [--precision f32|bf16] [--stored f32|bf16] [--bandwidth MiB]
 *                     [--stepk N] [--tc 1|-1] [--spin US] [--apart 1] [--tile l|m|s|wh|th|tq]
 *                     [--convcopy 1|-1] [--kv16 1|-1] [--attntc 1|-1] [--attndec 1|-1]
 *                     [--reserve IDS]
 * --stored bf16: the synthetic values rounded to bf16, as the released files hold them (float32
 * mode then keeps the matrices as bf16, weights.c: what a released file runs at).
 * --stepk, --apart, --tile, --convcopy, --kv16, --attntc, --attndec: the engine's test hooks
 * (ptts_vk_tuning: stepk workgroups, -1 off; decode and step submitted apart; one tensor-core
 * tile for every gemm that takes one; the codec convs' ELU'd windows through work buffers or ELU
 * on load; the KV caches in float16 or float32, by default float16 with bf16 weights; the
 * grouped attention on tensor cores or not, by default with the gemms'; the one-row attention
 * as attn_dec.comp with 1, else as attention.comp); --tc,
 * --spin: ptts_engine_args.tensor_cores / fence_spin_us (the model options). PTTS_VK_PROFILE /
 * PTTS_VK_PIPE_STATS reports go to stderr.
 * --reserve IDS: the caches sized at create for chunks of IDS token ids with the bench's 10 s
 * voice (ptts_batch_reserve, as `pocket-tts serve` does for 58): the memory a stream then holds.
 * --bandwidth: also the device's buffer-copy bandwidth (copies of MiB between two buffers), the
 * ceiling of the memory-bound kernels.
 * (PTTS_VK_DEVICE=N picks the device.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "engine_vulkan.h"
#include "ops.h"
#include "vulkan/vk.h"
#include "weights.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The device's copy bandwidth: reps copies of `bytes` between two device-local buffers in one
 * submit, timed on the host; GB/s counted as bytes read + written. A roofline for the engine's
 * memory-bound kernels. */
static int copy_bandwidth(size_t bytes, int reps, double *gbs, ptts_error *e) {
    *gbs = 0;
    if (bytes == 0 || reps < 1) return ptts_fail(e, PTTS_E_INVALID, "bandwidth: nothing to copy");
    pvk_ctx c;
    int rc = pvk_create(&c, NULL, e);
    if (rc) return rc;
    pvk_buffer a = {0}, b = {0};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    rc = pvk_buffer_create(&c, &a, bytes, 0, e);
    if (!rc) rc = pvk_buffer_create(&c, &b, bytes, 0, e);
    if (!rc && !(cb = pvk_cmd_begin(&c, e))) rc = PTTS_E_BACKEND;
    if (!rc) {
        pvk_fill(cb, &a, 0, bytes, 0x3f800000u);
        rc = pvk_cmd_end(&c, cb, e);
    }
    if (!rc) rc = pvk_submit_wait(&c, cb, e); /* first touch of both buffers */
    if (cb) pvk_cmd_free(&c, cb);
    cb = VK_NULL_HANDLE;
    if (!rc && !(cb = pvk_cmd_begin(&c, e))) rc = PTTS_E_BACKEND;
    if (!rc) {
        for (int i = 0; i < reps; i++)
            pvk_copy(cb, i % 2 ? &b : &a, 0, i % 2 ? &a : &b, 0, bytes);
        rc = pvk_cmd_end(&c, cb, e);
    }
    if (!rc) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = pvk_submit_wait(&c, cb, e);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (!rc && s > 0) *gbs = 2.0 * (double)bytes * reps / s * 1e-9;
    }
    if (cb) pvk_cmd_free(&c, cb);
    pvk_buffer_destroy(&c, &a);
    pvk_buffer_destroy(&c, &b);
    pvk_destroy(&c);
    return rc;
}

static void log_stderr(void *user, int level, const char *msg) {
    (void)user;
    (void)level;
    fprintf(stderr, "%s\n", msg);
}

static void die(const char *what, const ptts_error *e) {
    fprintf(stderr, "bench_vulkan: %s: %s\n", what, e->msg);
    exit(1);
}

static const char usage[] =
    "usage: bench_vulkan [options]\n"
    "\n"
    "The Vulkan engine on the full-size synthetic model (see the top of bench/bench_vulkan.c).\n"
    "\n"
    "  --arch full|tiny       the model's size (default full)\n"
    "  --streams LIST         batch sizes, comma-separated (default 1,8,32,128)\n"
    "  --frames N             frames a stream per figure (default 64)\n"
    "  --k K                  frames a call (default 8)\n"
    "  --precision f32|bf16   the weight mode (default f32)\n"
    "  --stored f32|bf16      the synthetic values as stored (bf16: as released files)\n"
    "  --bandwidth MiB        also the device's buffer-copy bandwidth\n"
    "  --reserve IDS          caches sized at create for chunks of IDS token ids\n"
    "  --tc 1|0|-1            tensor cores (ptts_engine_args.tensor_cores)\n"
    "  --spin US              fence spin, -1 off (ptts_engine_args.fence_spin_us)\n"
    "  --stepk N, --apart 0|1, --tile l|m|s|wh|th|tq, --convcopy 1|0|-1, --kv16 1|0|-1,\n"
    "  --attntc 1|0|-1, --attndec 1|0|-1\n"
    "                         the engine's test hooks (ptts_vk_tuning)\n";

/* The next option's value as an int in [lo, hi]; 0 on success. */
static int opt_int(int argc, char **argv, int *i, long lo, long hi, int *out) {
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(argv[*i], "="), argv[*i]);
    const char *v = cli_value(argc, argv, i);
    long x;
    if (!v || cli_parse_int(name, v, lo, hi, &x)) return -1;
    *out = (int)x;
    return 0;
}

/* The next option's value, one of two words: 0 for a, 1 for b, -1 (a message) otherwise. */
static int opt_pick(int argc, char **argv, int *i, const char *a, const char *b) {
    const int n = (int)strcspn(argv[*i], "=");
    const char *opt = argv[*i], *v = cli_value(argc, argv, i);
    if (v && !strcmp(v, a)) return 0;
    if (v && !strcmp(v, b)) return 1;
    if (v) fprintf(stderr, "bench_vulkan: %.*s is %s or %s, not '%s'\n", n, opt, a, b, v);
    return -1;
}

/* A comma-separated list of batch sizes in [1, 65536]. */
static int streams_ok(const char *s) {
    for (const char *p = s;;) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 1 || n > 65536 || (*end && *end != ',')) return 0;
        if (!*end) return 1;
        p = end + 1;
    }
}

int main(int argc, char **argv) {
    const char *arch = "full", *streams = "1,8,32,128";
    int frames = 64, kk = 8, bf16 = 0, bw = 0, tc = 0, spin = 0, stored_bf16 = 0, reserve = 0;
    int apart = 0;
    ptts_vk_tuning tune = {0};
    cli_program = "bench_vulkan"; /* cli.h's messages */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (cli_is(a, "--arch")) {
            bad = (arch = cli_value(argc, argv, &i)) == NULL;
        } else if (cli_is(a, "--streams")) {
            bad = !(streams = cli_value(argc, argv, &i));
            if (!bad && !streams_ok(streams)) {
                fprintf(stderr, "bench_vulkan: --streams is a list of sizes like 1,8,32\n");
                bad = 1;
            }
        } else if (cli_is(a, "--frames")) {
            bad = opt_int(argc, argv, &i, 1, 100000, &frames);
        } else if (cli_is(a, "--k")) {
            bad = opt_int(argc, argv, &i, 1, 64, &kk);
        } else if (cli_is(a, "--precision")) {
            bad = (bf16 = opt_pick(argc, argv, &i, "f32", "bf16")) < 0;
        } else if (cli_is(a, "--stored")) {
            bad = (stored_bf16 = opt_pick(argc, argv, &i, "f32", "bf16")) < 0;
        } else if (cli_is(a, "--bandwidth")) {
            bad = opt_int(argc, argv, &i, 1, 65536, &bw);
        } else if (cli_is(a, "--stepk")) {
            bad = opt_int(argc, argv, &i, -1, 65536, &tune.stepk);
        } else if (cli_is(a, "--apart")) {
            bad = opt_int(argc, argv, &i, 0, 1, &apart);
            tune.pipe = apart ? -1 : 0;
        } else if (cli_is(a, "--tc")) {
            bad = opt_int(argc, argv, &i, -1, 1, &tc);
        } else if (cli_is(a, "--spin")) {
            bad = opt_int(argc, argv, &i, -1, 1000000, &spin);
        } else if (cli_is(a, "--tile")) {
            bad = !(tune.tc_force = cli_value(argc, argv, &i));
        } else if (cli_is(a, "--convcopy")) {
            bad = opt_int(argc, argv, &i, -1, 1, &tune.conv_copy);
        } else if (cli_is(a, "--kv16")) {
            bad = opt_int(argc, argv, &i, -1, 1, &tune.kv16);
        } else if (cli_is(a, "--attntc")) {
            bad = opt_int(argc, argv, &i, -1, 1, &tune.attn_tc);
        } else if (cli_is(a, "--attndec")) {
            bad = opt_int(argc, argv, &i, -1, 1, &tune.attn_dec);
        } else if (cli_is(a, "--reserve")) {
            bad = opt_int(argc, argv, &i, 0, 4096, &reserve);
        } else {
            fprintf(stderr, "bench_vulkan: unknown option '%s' (see --help)\n", a);
            bad = 1;
        }
        if (bad) return 2;
    }
    ptts_set_log_callback(log_stderr, NULL);
    ptts_error e = {0};
    const ptts_engine_ops *ops = ptts_vulkan_engine();
    char dev[256];
    int discrete;
    if (!ops || ptts_vulkan_probe(NULL, dev, sizeof dev, &discrete, &e)) die("no Vulkan", &e);
    if (bw > 0) {
        double gbs;
        if (copy_bandwidth((size_t)bw << 20, 20, &gbs, &e)) die("bandwidth", &e);
        printf("device copy bandwidth (%d MiB buffers, 20 copies, read + write): %.0f GB/s\n", bw,
               gbs);
    }
    ptts_arch a;
    if (ptts_arch_preset(&a, arch)) {
        fprintf(stderr, "bench_vulkan: unknown arch %s\n", arch);
        return 1;
    }
    ptts_weights *w;
    ptts_weights_options wo = {0};
    if (bf16) wo.mode = PTTS_WMODE_BF16; /* bf16 backbone/codec storage (stepk streams it) */
    wo.fill_bf16 = stored_bf16;
    if (ptts_weights_fill(&w, &a, &wo, &e)) die("weights", &e);
    /* the engine needs only the weights */
    const ptts_ctx ctx = {ptts_kernels_ref(), NULL};
    const ptts_engine_args args = {
        .w = w, .ctx = &ctx, .tensor_cores = tc, .fence_spin_us = spin, .vk = &tune};
    a = w->arch;
    const int P = 125, n_ids = 40; /* a 10 s voice, a 40-token chunk */
    ptts_voice_state *v;
    if (ptts_voice_state_alloc(&v, a.layers, a.heads, a.d / a.heads, P, &e)) die("voice", &e);
    size_t vn = (size_t)a.layers * P * a.d;
    for (size_t i = 0; i < vn; i++) {
        v->k[i] = 0.05f * (float)((i * 2654435761u) % 1000) / 1000.f - 0.025f;
        v->v[i] = 0.05f * (float)((i * 40503u) % 1000) / 1000.f - 0.025f;
    }
    int ids[40];
    for (int i = 0; i < n_ids; i++)
        ids[i] = (i * 37 + 11) % a.nb;
    printf("device: %s (%s); model: %s (d %d, %d layers, codec C %d), %d frames per stream, "
           "k = %d steps per call, %s weights%s\n",
           dev, discrete ? "discrete" : "not discrete", arch, a.d, a.layers, a.C, frames, kk,
           bf16 ? "bf16 (stored as float32 for the multi-dispatch kernels, bf16 for stepk)"
                : "float32",
           stored_bf16 ? " (values rounded to bf16: stepk streams the bf16 copies)" : "");
    printf("%8s %10s %10s %10s %12s %12s %10s %10s %10s %10s\n", "streams", "ms/frame", "step ms",
           "codec ms", "RTF/stream", "RTF total", "TTFA ms", "GPU MiB", "paired ms", "paired RTF");
    for (const char *sp = streams; *sp;) {
        char *end;
        int S = (int)strtol(sp, &end, 10);
        sp = *end == ',' ? end + 1 : end + strlen(end);
        if (S < 1) continue;
        void *eng;
        double t0 = now();
        if (ops->create(&eng, &args, S, &e)) die("create", &e);
        double t_create = now() - t0;
        /* positions as ptts_batch_reserve counts them: voice + ids + max_gen_len + the kmax - 1
         * steps a call may compute past it + 1 */
        if (reserve > 0 && ops->reserve(eng,
                                        P + reserve + (int)ceil((reserve / 3.0 + 2.0) * 12.5) +
                                            ops->max_steps_per_call(eng),
                                        &e))
            die("reserve", &e);
        int *slots = malloc((size_t)S * sizeof(int)), *counts = malloc((size_t)S * sizeof(int));
        float *noise = malloc((size_t)S * kk * a.ld * sizeof(float));
        float *eos = malloc((size_t)S * kk * sizeof(float));
        float *lat = malloc((size_t)S * kk * a.ld * sizeof(float));
        float *pcm = malloc((size_t)S * kk * a.frame_samples * sizeof(float));
        for (int i = 0; i < S; i++) {
            slots[i] = i;
            counts[i] = kk;
        }
        for (size_t i = 0; i < (size_t)S * kk * a.ld; i++)
            noise[i] = (float)((i * 7919) % 200) / 100.f - 1.f;
        /* warm-up round (records the command buffers), then time to first audio on slot 0 */
        int total = frames + kk;
        for (int i = 0; i < S; i++)
            if (ops->begin_chunk(eng, i, v, ids, n_ids, total + kk, &e)) die("begin_chunk", &e);
        int one = 1; /* and the one-frame call of the time to first audio below */
        if (ops->step(eng, slots, S, kk, noise, eos, lat, &e) ||
            ops->decode(eng, slots, S, kk, counts, pcm, &e) ||
            ops->begin_chunk(eng, 0, v, ids, n_ids, total + kk, &e) ||
            ops->step(eng, slots, 1, 1, noise, eos, lat, &e) ||
            ops->decode(eng, slots, 1, 1, &one, pcm, &e))
            die("warm-up", &e);
        t0 = now();
        if (ops->begin_chunk(eng, 0, v, ids, n_ids, total + kk, &e)) die("begin_chunk", &e);
        double t_prompt = now() - t0;
        /* a stream's first call computes one frame (the ramp of ptts_stream_next) */
        if (ops->step(eng, slots, 1, 1, noise, eos, lat, &e) ||
            ops->decode(eng, slots, 1, 1, &one, pcm, &e))
            die("first", &e);
        double ttfa = now() - t0;
        for (int i = 0; i < S; i++)
            if (ops->begin_chunk(eng, i, v, ids, n_ids, total + kk, &e)) die("begin_chunk", &e);
        double ts = 0, td = 0;
        int done = 0;
        while (done < frames) {
            double a0 = now();
            if (ops->step(eng, slots, S, kk, noise, eos, lat, &e)) die("step", &e);
            double a1 = now();
            if (ops->decode(eng, slots, S, kk, counts, pcm, &e)) die("decode", &e);
            double a2 = now();
            ts += a1 - a0;
            td += a2 - a1;
            done += kk;
        }
        double per_frame = (ts + td) / done * 1e3; /* one step of every stream */
        double rtf_stream = 80.0 / per_frame, rtf_total = rtf_stream * S;
        /* paired: each call decodes the last call's frames and steps the next ones in one
         * submission (step_decode, as ptts_stream_next past its ramp): per call of kk frames */
        for (int i = 0; i < S; i++)
            if (ops->begin_chunk(eng, i, v, ids, n_ids, total + kk, &e)) die("begin_chunk", &e);
        if (ops->step(eng, slots, S, kk, noise, eos, lat, &e)) die("step", &e);
        double p0 = now();
        int pdone = 0;
        while (pdone < frames) {
            if (ops->step_decode(eng, slots, S, kk, counts, pcm, slots, S, kk, noise, eos, lat, &e))
                die("step_decode", &e);
            pdone += kk;
        }
        /* step_decode returns once its call is submitted: the last one's work counts too
         * (before 2026-12-03 it did not, and the paired figures of N calls read the time of
         * N - 1: 20% high at --frames 48, 5% at 160; bench/RESULTS.md) */
        if (ops->sync(eng, &e)) die("sync", &e);
        double paired = (now() - p0) / pdone * 1e3;
        if (ops->decode(eng, slots, S, kk, counts, pcm, &e)) die("decode", &e);
        printf("%8d %10.3f %10.3f %10.3f %11.1fx %11.1fx %10.1f %10.0f %10.3f %9.1fx\n", S,
               per_frame, ts / done * 1e3, td / done * 1e3, rtf_stream, rtf_total, ttfa * 1e3,
               ptts_vulkan_engine_bytes(eng) / 1048576.0, paired, 80.0 / paired * S);
        ptts_vk_counts vc;
        ptts_vulkan_engine_counts(eng, &vc);
        printf("         (engine create %.0f ms, chunk start %.1f ms, stepk workgroups %d, "
               "tensor-core gemms %s, attention %s, caches %s / rings %s of %llu positions, "
               "checksum eos %.6g pcm %.6g)\n",
               t_create * 1e3, t_prompt * 1e3, ptts_vulkan_engine_stepk(eng),
               ptts_vulkan_engine_tc(eng) ? "on" : "off",
               ptts_vulkan_engine_tc_attention(eng) ? "tensor cores" : "scalar",
               vc.kv_half ? "f16" : "f32", vc.ring_half ? "f16" : "f32", vc.kv_positions, eos[0],
               pcm[100]);
        fflush(stdout);
        ops->destroy(eng);
        free(slots);
        free(counts);
        free(noise);
        free(eos);
        free(lat);
        free(pcm);
    }
    ptts_voice_state_free(v);
    ptts_weights_free(w);
    return 0;
}
