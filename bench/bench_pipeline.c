/*
 * bench_pipeline.c - speed of the pipeline (CPU, or an engine on the GPU) on a full-size model
 * with synthetic pocket-fill-v1 weights (the english_2026-04 architecture; no checkpoint needed).
 * Shares the option parsing of the CLI (tools/cli.c).
 *
 * For each precision (f32, bf16, int8) and thread count it prints, as medians over --reps runs:
 *   backbone  ms per generation step (input_linear, 6 layers, out_norm, EOS head) from a voice
 *   flow      ms per flow-head sample (1 LSD step, one row)
 *   codec     ms per decoded frame (latent -> 1920 samples)
 *   loop      ms per frame through ptts_stream_next (all of the above plus noise and the rule),
 *             and the real-time factor (80 ms of audio / that); with the CPU engine, then where
 *             a frame's time went inside the loop (ptts_engine_cpu_times, means over the runs):
 *             backbone, flow and codec as the loop ran them (their weights evicted by each
 *             other's, unlike the stages above, timed alone), the overlap region and inside it
 *             its step task (the next step's backbone, with its flow head when the loop pairs
 *             them) and its codec tasks (one thread each), the rest (outside the
 *             engine: noise, EOS rule, copies), and the pool regions and worker wake-ups
 *   ttfa      time to first audio: ptts_stream_start (text, chunk prompt) + the first frame,
 *             from a loaded voice
 *   encode    voice cloning of a 10 s clip (ptts_voice_from_samples, 24 kHz)
 *   batch     aggregate frames per second of 1, 2, 4, 8 streams through ptts_batch, and the
 *             speed-up over one stream
 *   maxrss    the process's peak resident memory so far (getrusage; grows across configs)
 * loop, ttfa and batch run once per --overlap mode listed (the same model: "on,off,on,off"
 * interleaves an A/B comparison); the other figures do not depend on it.
 * The voice for every measurement is the one cloned from the synthetic 10 s clip. Figures are
 * wall time: on a shared machine they move with other load (run several times).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backbone.h"
#include "cli.h"
#include "codec.h"
#include "engine.h"
#include "engine_vulkan.h"
#include "flow.h"
#include "generate.h"
#include "model.h"
#include "text.h"

#define MAXLIST 16
#define DEFAULT_TEXT "The quick brown fox jumps over the lazy dog near the quiet river bank."

enum {
    P_BACKBONE = 1,
    P_FLOW = 2,
    P_CODEC = 4,
    P_LOOP = 8,
    P_TTFA = 16,
    P_ENCODE = 32,
    P_BATCH = 64,
    P_ALL = 127
};

typedef struct bench_args {
    int prec[MAXLIST], n_prec;
    int threads[MAXLIST], n_threads;
    int streams[MAXLIST], n_streams;
    int overlap[MAXLIST], n_overlap;
    int parts;
    int backend; /* PTTS_BACKEND_CPU (default), _VULKAN or _VULKAN_CODEC: the loop, ttfa, batch */
    const char *device; /* --device: the Vulkan device (NULL: picked) */
    int frames, reps;
    int stored_bf16; /* --stored bf16: the synthetic values rounded to bf16 */
    const char *tokenizer, *text;
} bench_args;

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_pipeline [options]\n\n"
            "Speed of the pipeline on a full-size model with synthetic weights.\n\n"
            "  --precision LIST   f32,bf16,int8 (default: all three)\n"
            "  --threads LIST     thread counts (default: 1 and every online CPU)\n"
            "  --only LIST        backbone,flow,codec,loop,ttfa,encode,batch (default: all)\n"
            "  --streams LIST     batch sizes for `batch` (default 1,2,4,8)\n"
            "  --overlap LIST     auto,on,off: codec/backbone overlap modes for loop, ttfa and\n"
            "                     batch, run in turn (default: auto)\n"
            "  --backend B        cpu (default), vulkan or vulkan-codec (codec on the GPU): the\n"
            "                     engine of loop, ttfa and batch (the parts stay on the CPU)\n"
            "  --device D         the Vulkan device, as `pocket-tts devices` lists them\n"
            "  --frames N         frames (steps) per timed run (default 40)\n"
            "  --reps N           timed runs per figure; the median is printed (default 3)\n"
            "  --tokenizer PATH   SentencePiece model, a path or a URL (default: the english\n"
            "                     model's, downloaded once)\n"
            "  --text TEXT        the sentence generated (default: a 13-word sentence)\n"
            "  --stored f32|bf16  the synthetic checkpoint's storage (default f32); bf16 rounds\n"
            "                     every value to bf16 as the released files hold them, so that\n"
            "                     float32 mode runs as it does on a released file\n");
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double maxrss_mb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* "a,b,c" -> values through `conv` (returns < -1000 on a bad item). */
static int parse_list(const char *opt, const char *s, int *out, int max,
                      int (*conv)(const char *)) {
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int v = conv(tok);
        if (v < -1000 || n == max) {
            fprintf(stderr, "bench_pipeline: bad %s item '%s'\n", opt, tok);
            return -1;
        }
        out[n++] = v;
    }
    if (n == 0) fprintf(stderr, "bench_pipeline: %s needs at least one item\n", opt);
    return n > 0 ? n : -1;
}

static int conv_prec(const char *s) {
    if (!strcmp(s, "f32") || !strcmp(s, "float32")) return PTTS_PRECISION_F32;
    if (!strcmp(s, "bf16") || !strcmp(s, "bfloat16")) return PTTS_PRECISION_BF16;
    if (!strcmp(s, "int8") || !strcmp(s, "q8")) return PTTS_PRECISION_INT8;
    return -2000;
}

static int conv_overlap(const char *s) {
    if (!strcmp(s, "auto")) return PTTS_OVERLAP_AUTO;
    if (!strcmp(s, "on")) return PTTS_OVERLAP_ON;
    if (!strcmp(s, "off")) return PTTS_OVERLAP_OFF;
    return -2000;
}

static const char *overlap_name(int o) {
    return o == PTTS_OVERLAP_ON ? "on" : o == PTTS_OVERLAP_OFF ? "off" : "auto";
}

static int conv_pos(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    return (*end || v < 1 || v > 4096) ? -2000 : (int)v;
}

static int conv_part(const char *s) {
    static const char *names[] = {"backbone", "flow", "codec", "loop", "ttfa", "encode", "batch"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(s, names[i])) return 1 << i;
    return -2000;
}

static double lin_bytes(const ptts_lin *L) {
    double per = L->type == PTTS_W_Q8 ? 1.0 : L->type == PTTS_W_BF16 ? 2.0 : 4.0;
    return (double)L->out * L->in * per + (L->type == PTTS_W_Q8 ? 4.0 * L->out : 0.0);
}

/* Weight bytes one backbone step streams (the transformer's matrices). */
static double backbone_bytes(const ptts_weights *w) {
    double b = 0;
    for (int l = 0; l < w->backbone.layers; l++) {
        const ptts_tlayer *L = &w->backbone.layer[l];
        b += lin_bytes(&L->in_proj) + lin_bytes(&L->out_proj) + lin_bytes(&L->linear1) +
             lin_bytes(&L->linear2);
    }
    return b;
}

static const char *prec_name(int p) {
    return p == PTTS_PRECISION_BF16 ? "bf16" : p == PTTS_PRECISION_INT8 ? "int8" : "f32";
}

/* ---- the measurements ----------------------------------------------------------------------- */

static double bench_backbone(ptts_model *m, const ptts_voice *v, const int *ids, int n_ids,
                             const bench_args *ba, ptts_error *e) {
    const ptts_arch *a = &m->w->arch;
    ptts_backbone bb;
    /* the cache in the engine's format (engine_cpu.c: float16 with bf16 or int8 weights) */
    if (ptts_backbone_init(&bb, m->w, v->st->positions + n_ids + ba->frames + 8,
                           m->w->mode != PTTS_WMODE_F32, e))
        return -1;
    float *h = ptts_calloc_aligned((size_t)a->d * sizeof(float));
    float *lat = ptts_calloc_aligned((size_t)a->ld * sizeof(float));
    double t[64];
    int rc = h && lat ? 0 : -1;
    for (int i = 0; i < a->ld && lat; i++)
        lat[i] = 0.5f * sinf(0.3f * (float)i);
    for (int r = 0; !rc && r < ba->reps; r++) {
        if ((rc = ptts_backbone_set_voice(&bb, v->st, e))) break;
        ptts_backbone_prompt_tokens(&bb, &m->ctx, ids, n_ids);
        float eos;
        ptts_backbone_step(&bb, &m->ctx, NULL, h, &eos);
        double t0 = ptts_now();
        for (int f = 1; f < ba->frames; f++)
            ptts_backbone_step(&bb, &m->ctx, lat, h, &eos);
        t[r] = (ptts_now() - t0) * 1e3 / (ba->frames - 1);
    }
    ptts_free_aligned(h);
    ptts_free_aligned(lat);
    ptts_backbone_free(&bb);
    return rc ? -1 : median(t, ba->reps);
}

static double bench_flow(ptts_model *m, const bench_args *ba, ptts_error *e) {
    const ptts_arch *a = &m->w->arch;
    ptts_flow *f;
    if (ptts_flow_create(&f, m->w, 1, 1, e)) return -1;
    float *h = ptts_calloc_aligned((size_t)a->d * sizeof(float));
    float *x = ptts_calloc_aligned((size_t)a->ld * sizeof(float));
    float *out = ptts_calloc_aligned((size_t)a->ld * sizeof(float));
    double t[64];
    if (!h || !x || !out) return -1;
    for (int i = 0; i < a->d; i++)
        h[i] = sinf(0.01f * (float)i);
    for (int i = 0; i < a->ld; i++)
        x[i] = cosf(0.7f * (float)i);
    ptts_flow_sample(f, &m->ctx, h, x, 1, out);
    for (int r = 0; r < ba->reps; r++) {
        double t0 = ptts_now();
        for (int i = 0; i < ba->frames; i++)
            ptts_flow_sample(f, &m->ctx, h, x, 1, out);
        t[r] = (ptts_now() - t0) * 1e3 / ba->frames;
    }
    ptts_free_aligned(h);
    ptts_free_aligned(x);
    ptts_free_aligned(out);
    ptts_flow_free(f);
    return median(t, ba->reps);
}

static double bench_codec(ptts_model *m, const bench_args *ba, ptts_error *e) {
    const ptts_arch *a = &m->w->arch;
    ptts_codec_dec *d;
    if (ptts_codec_dec_create(&d, m->w, e)) return -1;
    float *lat = ptts_calloc_aligned((size_t)16 * a->ld * sizeof(float));
    float *pcm = ptts_calloc_aligned((size_t)a->frame_samples * sizeof(float));
    double t[64];
    if (!lat || !pcm) return -1;
    for (int i = 0; i < 16 * a->ld; i++)
        lat[i] = sinf(0.37f * (float)i);
    for (int r = 0; r < ba->reps; r++) {
        ptts_codec_dec_reset(d);
        ptts_codec_dec_frame(d, &m->ctx, lat, pcm, NULL);
        double t0 = ptts_now();
        for (int i = 0; i < ba->frames; i++)
            ptts_codec_dec_frame(d, &m->ctx, lat + (size_t)(i % 16) * a->ld, pcm, NULL);
        t[r] = (ptts_now() - t0) * 1e3 / ba->frames;
    }
    ptts_free_aligned(lat);
    ptts_free_aligned(pcm);
    ptts_codec_dec_free(d);
    return median(t, ba->reps);
}

static ptts_gen_options gen_opts(void) {
    ptts_gen_options o = ptts_gen_options_default();
    o.seed = 42;
    o.seed_set = 1;
    o.eos_threshold = 1e9f; /* synthetic weights: never stop early, every run is as long */
    o.eos_threshold_set = 1;
    return o;
}

/* Where the timed frames' time went, summed over the runs (the CPU engine's times). */
typedef struct loop_parts {
    ptts_cpu_times t;
    double wall; /* seconds of the timed frames */
    long frames;
} loop_parts;

/* ms per frame of the whole loop (*loop) and time to first audio (*ttfa), medians; *parts. An
 * engine may compute several frames a call (the GPU's 8) and hand them out one by one: the loop
 * figure is the time after the first frame divided by the frames computed in that time (the
 * stream's frames_total; every frame is emitted, EOS is off), never by the frames handed out, some
 * of which the first call computed. At least one call is timed whatever --frames says, and the
 * window ends where no frame is computed ahead (frames_ahead 0): where the GPU steps the next
 * call's frames with the last call's audio, that is the chunk's end, so the window holds as
 * many steps as decodes. */
static int bench_stream(ptts_model *m, const ptts_voice *v, const bench_args *ba, double *loop,
                        double *ttfa, loop_parts *parts, ptts_error *e) {
    ptts_stream *s;
    if (ptts_stream_create(&s, m, e)) return -1;
    float *pcm = ptts_calloc_aligned((size_t)m->w->arch.frame_samples * sizeof(float));
    double tl[64], tt[64];
    ptts_gen_options o = gen_opts();
    int rc = pcm ? 0 : -1;
    const ptts_engine_ops *ops;
    void *eng = ptts_stream_engine(s, &ops);
    ptts_cpu_times c0 = {0}, c1 = {0};
    memset(parts, 0, sizeof *parts);
    for (int r = 0; !rc && r < ba->reps; r++) {
        double t0 = ptts_now();
        if ((rc = ptts_stream_start(s, v, ba->text, &o, e))) break;
        if ((rc = ptts_stream_next(s, pcm, e)) <= 0) {
            if (rc == 0) rc = ptts_fail(e, PTTS_E_INTERNAL, "no audio");
            break;
        }
        rc = 0;
        ptts_stream_status st;
        ptts_stream_get_status(s, &st);
        const int computed0 = st.frames_total; /* by the first call */
        if (ops == &ptts_engine_cpu) ptts_engine_cpu_times(eng, &c0);
        double t1 = ptts_now();
        for (int f = 1;; f++) {
            if (f >= ba->frames) {
                ptts_stream_get_status(s, &st);
                if (st.frames_total > computed0 && st.frames_ahead == 0) break;
            }
            int n = ptts_stream_next(s, pcm, e);
            if (n < 0) rc = n;
            if (n <= 0) break;
        }
        double t2 = ptts_now();
        if (ops == &ptts_engine_cpu) {
            ptts_engine_cpu_times(eng, &c1);
            parts->t.backbone += c1.backbone - c0.backbone;
            parts->t.flow += c1.flow - c0.flow;
            parts->t.codec += c1.codec - c0.codec;
            parts->t.region += c1.region - c0.region;
            parts->t.region_step += c1.region_step - c0.region_step;
            parts->t.region_flow += c1.region_flow - c0.region_flow;
            parts->t.region_codec += c1.region_codec - c0.region_codec;
            parts->t.regions += c1.regions - c0.regions;
            parts->t.sleeps += c1.sleeps - c0.sleeps;
        }
        ptts_stream_get_status(s, &st);
        tt[r] = (t1 - t0) * 1e3;
        if (!rc && st.frames_total <= computed0)
            rc = ptts_fail(e, PTTS_E_INVALID,
                           "the text ended before a timed frame; a longer --text");
        tl[r] = rc ? 0.0 : (t2 - t1) * 1e3 / (st.frames_total - computed0);
        if (!rc) {
            parts->frames += st.frames_total - computed0;
            parts->wall += t2 - t1;
        }
    }
    ptts_free_aligned(pcm);
    ptts_stream_free(s);
    if (rc) return -1;
    *loop = median(tl, ba->reps);
    *ttfa = median(tt, ba->reps);
    return 0;
}

static int count_frame(void *user, int slot, const float *pcm, int n) {
    (void)slot;
    (void)n;
    if (pcm) ++*(long *)user;
    return 0;
}

/* Aggregate frames per second of n streams through one batch (median over reps): the frames
 * delivered in --frames - 1 calls after the first. Where the engine pairs each call's decode
 * with the next call's step, the last timed call also computes frames it does not deliver, so
 * the figure errs low by at most one call. */
static double bench_batch(ptts_model *m, const ptts_voice *v, int n, const bench_args *ba,
                          ptts_error *e) {
    ptts_batch *b;
    if (ptts_batch_create(&b, m, n, e)) return -1;
    ptts_gen_options o = gen_opts();
    double t[64];
    int rc = 0;
    for (int r = 0; !rc && r < ba->reps; r++) {
        for (int i = 0; !rc && i < n; i++) {
            o.seed = 42 + (uint64_t)i;
            if (ptts_batch_start(b, v, ba->text, &o, e) < 0) rc = -1;
        }
        long frames = 0;
        /* the first step prompts every stream's chunk: not part of the steady state */
        if (!rc && ptts_batch_step(b, count_frame, &frames, e) < 0) rc = -1;
        frames = 0;
        double t0 = ptts_now();
        for (int f = 1; !rc && f < ba->frames; f++)
            if (ptts_batch_step(b, count_frame, &frames, e) < 0) rc = -1;
        t[r] = (double)frames / (ptts_now() - t0);
        for (int i = 0; i < n; i++)
            ptts_batch_cancel(b, i);
    }
    ptts_batch_free(b);
    return rc ? -1 : median(t, ba->reps);
}

/* One precision and thread count. */
static int bench_config(const bench_args *ba, int prec, int threads) {
    ptts_error e = {0};
    ptts_arch a;
    ptts_arch_preset(&a, "full");
    ptts_model *m;
    double t0 = ptts_now();
    if (ptts_model_create_filled_bf16(&m, &a, ba->tokenizer, threads, prec, ba->stored_bf16, &e)) {
        fprintf(stderr, "bench_pipeline: %s\n", e.msg);
        return 1;
    }
    if (ba->backend == PTTS_BACKEND_VULKAN) m->be.engine = ptts_vulkan_engine();
    if (ba->backend == PTTS_BACKEND_VULKAN_CODEC) m->be.engine = ptts_hybrid_engine();
    char dev[256] = "";
    if (ba->backend != PTTS_BACKEND_CPU) {
        int rc;
        if (!m->be.engine) /* a build without Vulkan */
            rc = ptts_fail(&e, PTTS_E_UNSUPPORTED, "this build has no Vulkan backend");
        else if (ba->device && !(m->be.args.device = strdup(ba->device)))
            rc = ptts_fail(&e, PTTS_E_NOMEM, "out of memory");
        else /* the device the engines will take: said in the header, checked before timing */
            rc = ptts_vulkan_probe(m->be.args.device, dev, sizeof dev, NULL, &e);
        if (rc) {
            fprintf(stderr, "bench_pipeline: %s\n", e.msg);
            ptts_model_free(m);
            return 1;
        }
    }
    printf("\n== %s, %d thread%s (kernels %s, weights %.0f MB, built in %.1f s, engine %s%s%s)\n",
           prec_name(prec), threads, threads > 1 ? "s" : "", m->ctx.k->isa,
           (double)m->w->bytes / 1e6, ptts_now() - t0, m->be.engine ? m->be.engine->name : "cpu",
           *dev ? " on " : "", dev);
    fflush(stdout);

    /* the voice: cloned from a synthetic 10 s clip (timed as `encode`) */
    const int clip = 10 * PTTS_SAMPLE_RATE;
    float *audio = malloc((size_t)clip * sizeof(float));
    int rc = audio ? 0 : 1;
    for (int i = 0; i < clip && audio; i++)
        audio[i] = 0.3f * sinf(0.05f * (float)i + 0.001f * (float)i * (float)(i % 7)) +
                   0.05f * sinf(0.0031f * (float)i);
    ptts_voice *v = NULL;
    double t_enc[64];
    int enc_reps = (ba->parts & P_ENCODE)                                   ? ba->reps
                   : (ba->parts & (P_BACKBONE | P_LOOP | P_TTFA | P_BATCH)) ? 1
                                                                            : 0;
    for (int r = 0; !rc && r < enc_reps; r++) {
        ptts_voice_free(v);
        v = NULL;
        double s0 = ptts_now();
        if (ptts_voice_from_samples(&v, m, audio, clip, PTTS_SAMPLE_RATE, 0, &e)) rc = 1;
        t_enc[r] = ptts_now() - s0;
    }
    free(audio);
    if (!rc && (ba->parts & P_ENCODE))
        printf("encode   %8.1f ms for a 10 s clip (%.1fx real time), voice of %d positions\n",
               median(t_enc, enc_reps) * 1e3, 10.0 / median(t_enc, enc_reps),
               ptts_voice_positions(v));

    ptts_chunk *chunks = NULL;
    int n_chunks = 0;
    if (!rc && ptts_text_split(m->tok, ba->text, 50, &m->text, &chunks, &n_chunks, &e)) rc = 1;
    double bb = 0, fl = 0, cd = 0;
    if (!rc && (ba->parts & P_BACKBONE)) {
        bb = bench_backbone(m, v, chunks[0].ids, chunks[0].n_ids, ba, &e);
        if (bb < 0)
            rc = 1;
        else
            printf("backbone %8.2f ms/step  (%.0f MB of weights per step: %.1f GB/s)\n", bb,
                   backbone_bytes(m->w) / 1e6, backbone_bytes(m->w) / 1e6 / bb);
    }
    if (!rc && (ba->parts & P_FLOW)) {
        fl = bench_flow(m, ba, &e);
        if (fl < 0)
            rc = 1;
        else
            printf("flow     %8.2f ms/frame\n", fl);
    }
    if (!rc && (ba->parts & P_CODEC)) {
        cd = bench_codec(m, ba, &e);
        if (cd < 0)
            rc = 1;
        else
            printf("codec    %8.2f ms/frame\n", cd);
    }
    for (int ov = 0; !rc && ov < ba->n_overlap; ov++) {
        ptts_model_set_overlap(m, ba->overlap[ov]); /* read when an engine is created */
        if (ba->parts & (P_LOOP | P_TTFA | P_BATCH))
            printf("-- overlap %s\n", overlap_name(m->be.args.overlap));
        if (!rc && (ba->parts & (P_LOOP | P_TTFA))) {
            double loop, ttfa;
            loop_parts lp;
            if (bench_stream(m, v, ba, &loop, &ttfa, &lp, &e))
                rc = 1;
            else {
                if (ba->parts & P_LOOP)
                    printf("loop     %8.2f ms/frame  (real-time factor %.2fx: %.0f ms of audio per "
                           "frame)\n",
                           loop, 80.0 / loop, 1e3 * PTTS_FRAME_SAMPLES / PTTS_SAMPLE_RATE);
                if ((ba->parts & P_LOOP) && lp.frames > 0 && m->be.engine == &ptts_engine_cpu) {
                    const ptts_cpu_times *c = &lp.t;
                    const double f = 1e3 / (double)lp.frames;
                    printf("  in it  backbone %.2f, flow %.2f, codec %.2f", c->backbone * f,
                           c->flow * f, c->codec * f);
                    if (c->region > 0)
                        printf(", overlap region %.2f (its step %.2f of which flow %.2f, "
                               "codec %.2f)",
                               c->region * f, c->region_step * f, c->region_flow * f,
                               c->region_codec * f);
                    printf(", rest %.2f ms/frame; %.1f pool regions, %.1f worker sleeps a frame\n",
                           (lp.wall - c->backbone - c->flow - c->codec - c->region) * f,
                           (double)c->regions / (double)lp.frames,
                           (double)c->sleeps / (double)lp.frames);
                }
                if (ba->parts & P_TTFA)
                    printf("ttfa     %8.1f ms  (stream_start + first frame, %d text tokens)\n",
                           ttfa, chunks[0].n_ids);
            }
        }
        if (!rc && (ba->parts & P_BATCH)) {
            double one = 0;
            for (int i = 0; !rc && i < ba->n_streams; i++) {
                int n = ba->streams[i];
                double fps = bench_batch(m, v, n, ba, &e);
                if (fps < 0) {
                    rc = 1;
                    break;
                }
                if (n == 1) one = fps;
                printf(
                    "batch %2d %8.1f frames/s aggregate (%.2f ms per step of %d, %.1fx real time",
                    n, fps, 1e3 * n / fps, n, fps * 0.08);
                if (one > 0) printf(", %.2fx one stream", fps / one);
                printf(")\n");
                fflush(stdout);
            }
        }
    }
    if (rc)
        fprintf(stderr, "bench_pipeline: %s\n", e.msg);
    else
        printf("maxrss   %8.0f MB (process peak so far)\n", maxrss_mb());
    fflush(stdout);
    ptts_chunks_free(chunks, n_chunks);
    ptts_voice_free(v);
    ptts_model_free(m);
    return rc;
}

int main(int argc, char **argv) {
    bench_args ba = {.prec = {PTTS_PRECISION_F32, PTTS_PRECISION_BF16, PTTS_PRECISION_INT8},
                     .n_prec = 3,
                     .streams = {1, 2, 4, 8},
                     .n_streams = 4,
                     .overlap = {PTTS_OVERLAP_AUTO},
                     .n_overlap = 1,
                     .parts = P_ALL,
                     .frames = 40,
                     .reps = 3,
                     .text = DEFAULT_TEXT,
                     .backend = PTTS_BACKEND_CPU};
    cli_program = "bench_pipeline"; /* cli.h's messages */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    ba.threads[0] = 1;
    ba.n_threads = 1;
    if (ncpu > 1) ba.threads[ba.n_threads++] = (int)ncpu;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (cli_is(a, "--precision")) {
            if (!(v = cli_value(argc, argv, &i)) ||
                (ba.n_prec = parse_list("--precision", v, ba.prec, MAXLIST, conv_prec)) < 0)
                return 2;
        } else if (cli_is(a, "--threads")) {
            if (!(v = cli_value(argc, argv, &i)) ||
                (ba.n_threads = parse_list("--threads", v, ba.threads, MAXLIST, conv_pos)) < 0)
                return 2;
        } else if (cli_is(a, "--streams")) {
            if (!(v = cli_value(argc, argv, &i)) ||
                (ba.n_streams = parse_list("--streams", v, ba.streams, MAXLIST, conv_pos)) < 0)
                return 2;
        } else if (cli_is(a, "--overlap")) {
            if (!(v = cli_value(argc, argv, &i)) ||
                (ba.n_overlap = parse_list("--overlap", v, ba.overlap, MAXLIST, conv_overlap)) < 0)
                return 2;
        } else if (cli_is(a, "--backend")) {
            if (!(v = cli_value(argc, argv, &i))) return 2;
            if (!strcmp(v, "cpu"))
                ba.backend = PTTS_BACKEND_CPU;
            else if (!strcmp(v, "vulkan"))
                ba.backend = PTTS_BACKEND_VULKAN;
            else if (!strcmp(v, "vulkan-codec"))
                ba.backend = PTTS_BACKEND_VULKAN_CODEC;
            else {
                fprintf(stderr, "bench_pipeline: --backend is cpu, vulkan or vulkan-codec\n");
                return 2;
            }
        } else if (cli_is(a, "--device")) {
            if (!(v = cli_value(argc, argv, &i))) return 2;
            ba.device = v;
        } else if (cli_is(a, "--only")) {
            int parts[MAXLIST], n;
            if (!(v = cli_value(argc, argv, &i)) ||
                (n = parse_list("--only", v, parts, MAXLIST, conv_part)) < 0)
                return 2;
            ba.parts = 0;
            for (int j = 0; j < n; j++)
                ba.parts |= parts[j];
        } else if (cli_is(a, "--frames")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int("--frames", v, 2, 100000, &x))
                return 2;
            ba.frames = (int)x;
        } else if (cli_is(a, "--reps")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int("--reps", v, 1, 64, &x)) return 2;
            ba.reps = (int)x;
        } else if (cli_is(a, "--tokenizer")) {
            if (!(ba.tokenizer = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--text")) {
            if (!(ba.text = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--stored")) {
            if (!(v = cli_value(argc, argv, &i))) return 2;
            if (strcmp(v, "f32") && strcmp(v, "bf16")) {
                fprintf(stderr, "bench_pipeline: --stored takes f32 or bf16, not '%s'\n", v);
                return 2;
            }
            ba.stored_bf16 = !strcmp(v, "bf16");
        } else {
            fprintf(stderr, "bench_pipeline: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    /* the tokenizer as a local file: the given path or URL, else the english model's */
    char *tok = NULL;
    ptts_error e = {0};
    if (ba.tokenizer ? ptts_fetch(&tok, ba.tokenizer, &e)
                     : ptts_language_fetch_tokenizer("english", &tok, &e)) {
        fprintf(stderr, "bench_pipeline: the tokenizer: %s\n", e.msg);
        return 1;
    }
    ba.tokenizer = tok;
    printf("bench_pipeline: full-size model, synthetic weights stored as %s; %d frames per run, "
           "median of %d runs\n",
           ba.stored_bf16 ? "bf16" : "f32", ba.frames, ba.reps);
    int rc = 0;
    for (int p = 0; p < ba.n_prec && !rc; p++)
        for (int t = 0; t < ba.n_threads && !rc; t++)
            rc = bench_config(&ba, ba.prec[p], ba.threads[t]);
    free(tok);
    return rc;
}
