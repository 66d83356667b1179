// ctest-label: parity
// ctest-timeout: 900
/*
 * test_vulkan.c - the Vulkan engine's default paths against the reference (tiny model):
 * generate and generate_short replayed with the recorded noise through a stream on the GPU
 * engine (8 steps per call, so the EOS rule drops computed frames), latents / PCM per frame and
 * EOS logits within 1e-3 relative L2; the eos_case gives exactly 16 frames; batches of 3 to 20
 * streams (different voices, texts and lengths) on one engine equal the same streams run alone
 * on the CPU; the batch's scheduling (decode beside the next step bit-exact against apart, the
 * call budget, joins, cancels, EOS ends, codec passes of slot groups); the sampler heads (lsd,
 * flow_matching, drifting) alone against flow_head*.safetensors (1e-3), flow_matching (1 and 4
 * steps) and drifting replaying generate_flow_matching_steps1/4 (1e-3) and generate_drifting
 * (1e-2, free-running), on the multi-dispatch step and on stepk; and the hybrid engine (codec
 * only on the GPU). The paths a test hook forces (ptts_vk_tuning) are test_vulkan_hooks.c's.
 * Skipped (test_skip: exit 77, or a failure with PTTS_NO_SKIP) only when the build has no
 * Vulkan backend or no Vulkan device exists.
 */
#include "vk_test.h"

/* More slots than a codec pass holds (past 1024 streams; here 3 in passes of 2 slot-frames):
 * each decode runs one frame of two slots, then of the third, and the batch still matches the
 * CPU. */
static void codec_groups(ptts_model *m) {
    const ptts_vk_tuning fg2 = {.codec_fg = 2};
    ptts_model_set_vk_tuning(m, &fg2);
    printf("codec passes of 2 slot-frames, 3 streams:\n");
    batch_vs_cpu_n(m, 3);
    const ptts_vk_counts c = counts_of(m, 3, NULL, NULL);
    CHECKF(c.codec_groups > 0, "3 streams, passes of 2: %llu passes for a second group",
           c.codec_groups);
    ptts_model_set_vk_tuning(m, NULL);
    const ptts_vk_counts c0 = counts_of(m, 3, NULL, NULL);
    CHECKF(c0.codec_groups == 0, "3 streams: %llu passes for a second group", c0.codec_groups);
}

/* A batch whose calls pair decode and the next step: slot 1 is cancelled while its next frames
 * are computed and a new utterance starts there; the frames computed for the old one must not
 * reach the new one, and slot 0 goes on as if alone (both against the CPU). */
static void batch_cancel_restart(ptts_model *m) {
    static const char *text = "A second, somewhat longer sentence here.";
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    const int cap = 400 * 1920;
    collect gpu = {.cap = cap};
    gpu.pcm[0] = calloc((size_t)cap, sizeof(float));
    gpu.pcm[1] = calloc((size_t)cap, sizeof(float));
    float *ref = calloc((size_t)cap, sizeof(float));
    REQUIRE(gpu.pcm[0] && gpu.pcm[1] && ref);
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
    o.seed = 11;
    CHECK(ptts_batch_start(b, v, text, &o, &e) == 0);
    o.seed = 12;
    CHECK(ptts_batch_start(b, v, text, &o, &e) == 1);
    while (gpu.n[1] < 30 * 1920 && ptts_batch_step(b, on_frame, &gpu, &e) > 0) {
    }
    ptts_batch_cancel(b, 1);
    gpu.n[1] = 0;
    o.seed = 13;
    CHECK(ptts_batch_start(b, v, text, &o, &e) == 1);
    int left;
    while ((left = ptts_batch_step(b, on_frame, &gpu, &e)) > 0) {
    }
    CHECKF(left == 0, "batch: %s", e.msg);
    ptts_batch_free(b);
    static const uint64_t seeds[2] = {11, 13};
    for (int i = 0; i < 2; i++) {
        o.seed = seeds[i];
        int n = cpu_alone(m, v, text, &o, ref, cap);
        CHECKF(n == gpu.n[i] && n > 0, "cancel + restart, slot %d: %d samples, %d alone", i,
               gpu.n[i], n);
        double worst = 0;
        for (int f = 0; f + 1920 <= n && f + 1920 <= gpu.n[i]; f += 1920)
            worst = fmax(worst, rel_l2(gpu.pcm[i] + f, ref + f, 1920));
        printf("paired batch, cancel + restart, slot %d: %d frames, max rel err vs CPU %.3g\n", i,
               gpu.n[i] / 1920, worst);
        CHECKF(worst <= TOL, "cancel + restart, slot %d: rel err %.3g", i, worst);
    }
    free(gpu.pcm[0]);
    free(gpu.pcm[1]);
    free(ref);
    ptts_voice_free(v);
}

/* Streams that end by EOS at different frames: the generate_short case's noise and threshold
 * (EOS at step 11) with 0, 3 and 8 frames after it, so 11, 14 and 19 frames. Calls of 1, 2, 4
 * and 8 frames (the ramp), then the rest: the decode of the 4-frame call goes with the 8-frame
 * call's step; the first two streams end inside that call (steps 7-14) and are left out of the
 * next one, whose step goes with its decode for the third (utt_ends after the EOS rule; the
 * old rule decoded that call alone: 1 pair, not 2). Every stream's frames as the CPU gives
 * them alone. */
static void batch_eos_ends(ptts_model *m) {
    ptts_error e = {0};
    const int ld = m->w->arch.ld;
    int64_t n_noise;
    float *noise = load_f32(fixture_path("tiny/generate_short.safetensors"), "noise", &n_noise);
    REQUIRE(noise && n_noise >= 20 * ld);
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice_short.safetensors"), &e) == 0);
    static const int after[3] = {0, 3, 8};
    const int cap = 40 * 1920;
    collect gpu = {.cap = cap}, cpu = {.cap = cap};
    for (int i = 0; i < 3; i++) {
        gpu.pcm[i] = calloc((size_t)cap, sizeof(float));
        cpu.pcm[i] = calloc((size_t)cap, sizeof(float));
        REQUIRE(gpu.pcm[i] && cpu.pcm[i]);
    }
    ptts_gen_options o = ptts_gen_options_default();
    o.eos_threshold = eos_case_threshold();
    o.eos_threshold_set = 1;
    o.noise = noise;
    o.noise_rows = (int)(n_noise / ld);
    o.frames_after_eos_set = 1;
    const ptts_vk_counts c0 = counts_of(m, 3, NULL, NULL);
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    ptts_batch_set_call_budget(b, 1e9);
    for (int i = 0; i < 3; i++) {
        o.frames_after_eos = after[i];
        CHECK(ptts_batch_start(b, v, "ok go", &o, &e) == i);
    }
    int left;
    while ((left = ptts_batch_step(b, on_frame, &gpu, &e)) > 0)
        gpu.calls++;
    CHECKF(left == 0, "batch: %s", e.msg);
    ptts_batch_free(b);
    const unsigned long long pc = counts_of(m, 3, NULL, NULL).paired - c0.paired;
    printf("EOS ends at 11, 14, 19 frames: %d calls, %llu decodes paired with a step\n",
           gpu.calls + 1, pc);
    CHECKF(pc == 2, "streams ended by EOS: %llu decodes paired, 2 expected", pc);
    for (int i = 0; i < 3; i++) {
        o.frames_after_eos = after[i];
        cpu.n[i] = cpu_alone(m, v, "ok go", &o, cpu.pcm[i], cap);
    }
    for (int i = 0; i < 3; i++) {
        CHECKF(gpu.n[i] == (11 + after[i]) * 1920 && cpu.n[i] == gpu.n[i],
               "EOS + %d: %d samples on the GPU, %d on the CPU, %d expected", after[i], gpu.n[i],
               cpu.n[i], (11 + after[i]) * 1920);
        double worst = 0;
        for (int f = 0; f + 1920 <= gpu.n[i] && f + 1920 <= cpu.n[i]; f += 1920)
            worst = fmax(worst, rel_l2(gpu.pcm[i] + f, cpu.pcm[i] + f, 1920));
        CHECKF(worst <= TOL, "EOS + %d: pcm rel err %.3g", after[i], worst);
        free(gpu.pcm[i]);
        free(cpu.pcm[i]);
    }
    ptts_voice_free(v);
    free(noise);
}

/* The stream's decode and next step in one submission (step_decode; on two queues where the
 * device has them) against the two submitted one after the other: the same kernels on the same
 * data, so the same samples bit for bit. */
static void pipe_exact(ptts_model *m) {
    float *a, *b;
    ptts_model_set_vk_tuning(m, NULL);
    int na = gen_pcm(m, "Hello there, one more sentence.", &a);
    const ptts_vk_counts ca = counts_of(m, 1, NULL, NULL);
    const ptts_vk_tuning apart = {.pipe = -1};
    ptts_model_set_vk_tuning(m, &apart);
    int nb = gen_pcm(m, "Hello there, one more sentence.", &b);
    const ptts_vk_counts cb = counts_of(m, 1, NULL, NULL);
    ptts_model_set_vk_tuning(m, NULL);
    int same = na == nb && na > 20 * 1920 && a && b && !memcmp(a, b, (size_t)na * sizeof(float));
    printf("decode + next step in one submission (%llu paired) vs apart (%llu): %d vs %d "
           "samples, %s\n",
           ca.paired, cb.paired, na, nb, same ? "identical" : "DIFFERENT");
    CHECKF(same, "step_decode: %d vs %d samples, not identical", na, nb);
    CHECKF(ca.paired > 0 && cb.paired == 0, "paired submissions: %llu paired, %llu apart",
           ca.paired, cb.paired);
    free(a);
    free(b);
}

/* Frames a ptts_batch_step handed to each slot, for the call budget's check; lead: how many
 * slot 0 had had (step[0], reset by the caller) when slot 1's first frame came. */
typedef struct {
    collect c;
    int step[BATCH_MAX], most, lead;
} per_step;

static int on_frame_step(void *user, int slot, const float *pcm, int n) {
    per_step *p = user;
    if (pcm && slot == 1 && p->c.n[1] == 0) p->lead = p->step[0];
    if (pcm && slot >= 0 && slot < BATCH_MAX && ++p->step[slot] > p->most) p->most = p->step[slot];
    return on_frame(&p->c, slot, pcm, n);
}

/* The call budget (generate.h): with none, every call of 3 streams in a 4-slot batch computes
 * one frame (a step hands a slot at most two: the late call's before it and its own); with a
 * large one, calls of kmax; the same samples either way (bit for bit on lavapipe; where the
 * device has tensor cores the codec's kernels follow its row counts, slots x k x 16, and the
 * samples agree within the GPU's tolerance). A full batch (3 slots) is
 * not held: nobody can join it. One text for the three, so that no stream runs alone (one
 * utterance is never held to the budget). */
static void call_budget(ptts_model *m) {
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    ptts_gen_options o = ptts_gen_options_default();
    o.seed_set = 1;
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    const int cap = 400 * 1920;
    per_step run[3];
    for (int r = 0; r < 3; r++) {
        memset(&run[r], 0, sizeof run[r]);
        run[r].c.cap = cap;
        ptts_batch *b;
        REQUIRE(ptts_batch_create(&b, m, r == 2 ? 3 : 4, &e) == 0);
        ptts_batch_set_call_budget(b, r == 1 ? 1e9 : 0.0);
        for (int i = 0; i < 3; i++) {
            run[r].c.pcm[i] = calloc((size_t)cap, sizeof(float));
            o.seed = 77 + (uint64_t)i;
            CHECK(ptts_batch_start(b, v, "Hello world, how are you today?", &o, &e) == i);
        }
        int left, most = 0;
        do {
            memset(run[r].step, 0, sizeof run[r].step);
            run[r].most = 0;
            left = ptts_batch_step(b, on_frame_step, &run[r], &e);
            most = run[r].most > most ? run[r].most : most;
        } while (left > 0);
        CHECKF(left == 0, "call budget: %s", e.msg);
        run[r].most = most;
        ptts_batch_free(b);
    }
    printf("call budget 0: at most %d frame(s) a slot a step; unbounded: %d; budget 0, the "
           "batch full: %d\n",
           run[0].most, run[1].most, run[2].most);
    CHECKF(run[0].most <= 2 && run[1].most > 2 && run[2].most > 2,
           "frames a slot a step: %d with budget 0, %d without, %d with budget 0 and no free slot",
           run[0].most, run[1].most, run[2].most);
    int same = 0;
    for (int i = 0; i < 3; i++) {
        const int n = run[0].c.n[i];
        for (int r = 1; r < 3; r++) {
            double worst = 0;
            for (int f = 0; n == run[r].c.n[i] && f + 1920 <= n && n <= cap; f += 1920)
                worst = fmax(worst, rel_l2(run[0].c.pcm[i] + f, run[r].c.pcm[i] + f, 1920));
            CHECKF(n > 20 * 1920 && n == run[r].c.n[i] && n <= cap && worst <= TOL,
                   "call budget, run %d, stream %d: %d vs %d samples, rel err %.3g", r, i, n,
                   run[r].c.n[i], worst);
            same += n == run[r].c.n[i] && n <= cap &&
                    !memcmp(run[0].c.pcm[i], run[r].c.pcm[i], (size_t)n * sizeof(float));
        }
        for (int r = 0; r < 3; r++)
            free(run[r].c.pcm[i]);
    }
    printf("call budget: %d of 6 streams bit for bit those of calls of one frame\n", same);
    ptts_voice_free(v);
}

/* An utterance that joins a running stream and fills the batch: the step that takes it in
 * consumes the running stream's call computed ahead and pairs its decode with the next call,
 * the joiner's first (batch_pair_k), held to the call budget whatever k the running stream has
 * (a budget of 0 here: one frame); the step after decodes the joiner's first frames alone
 * (batch_early), hands them out, and pairs the rest of the call's decode with the next call as
 * every other. The calls after pair too, the joiner in its ramp: the join costs one decode of
 * its first frames, where it cost the whole call's decode apart from a step and, before, the call
 * before it too and those of its ramp. Its first frames go out ahead of the running stream's
 * in that step (those of the last call, handed out once the next call is submitted), not after
 * them. With PTTS_JOIN_THROUGHPUT the joiner's first frames are decoded beside the next call (it
 * held to the budget as well) and go out one step later. */
static void join_first_audio(ptts_model *m, int policy) {
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    ptts_gen_options o = ptts_gen_options_default();
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    per_step run;
    memset(&run, 0, sizeof run);
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 2, &e) == 0);
    ptts_batch_set_call_budget(b, 0);
    CHECK(ptts_batch_set_joins(b, policy, &e) == 0);
    CHECK(ptts_batch_start(b, v, "A first sentence, long enough to run a while.", &o, &e) == 0);
    for (int i = 0; i < 6; i++) /* past its ramp: its calls are paired */
        CHECK(ptts_batch_step(b, on_frame_step, &run, &e) == 1);
    long d0, p0, x0, d, p, x;
    ptts_batch_calls(b, &d0, &p0, &x0);
    CHECK(ptts_batch_start(b, v, "The one that joins.", &o, &e) == 1);
    int steps = 0;
    run.lead = -1;
    for (; run.c.n[1] == 0 && steps < 10; steps++) {
        run.step[0] = 0;
        if (ptts_batch_step(b, on_frame_step, &run, &e) <= 0) break;
    }
    printf("joining a running stream: first audio from the %d-th step after, after %d frames of "
           "the running one in that step\n",
           steps, run.lead);
    const int thr = policy == PTTS_JOIN_THROUGHPUT; /* its first frames paired: a step later */
    CHECKF(run.c.n[1] == PTTS_FRAME_SAMPLES && steps <= 2 + thr && (thr || run.lead == 0),
           "the stream that joined: first audio after %d steps (and %d frames of the running "
           "one), %d samples of its first call",
           steps, run.lead, run.c.n[1]);

    for (int i = 0; i < 6; i++)
        CHECK(ptts_batch_step(b, on_frame_step, &run, &e) == 2);
    ptts_batch_calls(b, &d, &p, &x);
    printf("joining a running stream: %ld decodes, %ld paired with a step, %ld of its first "
           "frames apart\n",
           d - d0, p - p0, x - x0);
    CHECKF(d - d0 == steps + 6 && p - p0 == d - d0 && x - x0 == 1 - thr,
           "a join: %ld of %ld decodes apart from a step (0 expected), %ld of first frames (%d "
           "expected)",
           (d - d0) - (p - p0), d - d0, x - x0, 1 - thr);
    ptts_batch_free(b);
    ptts_voice_free(v);
}

/* Utterances that join a running one past its ramp, on the GPU: the running one goes through
 * chunks (max_tokens) and a pause, a joiner begins with a pause. With the frames handed out one
 * call late, an utterance between chunks sits out until its last frames are out (a chunk begun
 * earlier would reset its codec, a pause's zeros would go out ahead of them), without taking the
 * pairing from the others; every utterance's samples as the CPU gives it alone (pauses
 * included, zeros where they are), and every decode paired from the first join on but the last,
 * the joiners' first frames decoded apart (batch_early; 3 of 37 decoded alone with the whole
 * call's decode for them, 13 of 33 before that). */
static void joins_chunks_pauses(ptts_model *m) {
    static const char *texts[3] = {
        "This one runs for a while, sentence after sentence. <break time=\"200ms\"/> Then it "
        "goes on.",
        "The second joins, and it speaks for a while too. It has a second sentence.",
        "[pause:100ms]And a third one joins it, then says one more thing after that."};
    ptts_error e = {0};
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path("tiny/voice.safetensors"), &e) == 0);
    ptts_gen_options o[3];
    const int cap = 400 * 1920;
    collect gpu = {.cap = cap};
    for (int i = 0; i < 3; i++) {
        o[i] = ptts_gen_options_default();
        o[i].seed = 70 + (uint64_t)i;
        o[i].seed_set = 1;
        o[i].eos_threshold = 1e9f;
        o[i].eos_threshold_set = 1;
        o[i].max_tokens = 10;
        REQUIRE((gpu.pcm[i] = calloc((size_t)cap, sizeof(float))));
    }
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    ptts_batch_set_call_budget(b, 1e9); /* calls of the engine's frames: the same each run */
    CHECK(ptts_batch_start(b, v, texts[0], &o[0], &e) == 0);
    long d0 = 0, p0 = 0, x0 = 0, d, p, x;
    int started = 1, left;
    while ((left = ptts_batch_step(b, on_frame, &gpu, &e)) > 0 || started < 3) {
        gpu.calls++;
        if (gpu.calls == 6 || gpu.calls == 8) { /* past the running one's ramp */
            if (started == 1) ptts_batch_calls(b, &d0, &p0, &x0);
            CHECK(ptts_batch_start(b, v, texts[started], &o[started], &e) == started);
            started++;
        }
        if (gpu.calls > 2000) break;
    }
    CHECKF(left == 0, "joins, chunks and pauses: %s", e.msg);
    ptts_batch_calls(b, &d, &p, &x);
    ptts_batch_free(b);
    printf("joins, chunks and pauses on the GPU: %ld decodes from the first join, %ld paired, "
           "%ld of joiners' first frames apart\n",
           d - d0, p - p0, x - x0);
    CHECKF(d - d0 > 20 && (d - d0) - (p - p0) <= 1 && x - x0 == 2,
           "joins, chunks and pauses: %ld of %ld decodes alone, %ld of first frames (2 expected)",
           (d - d0) - (p - p0), d - d0, x - x0);
    float *cpu = calloc((size_t)cap, sizeof(float));
    REQUIRE(cpu);
    for (int i = 0; i < 3; i++) {
        const int n = cpu_alone(m, v, texts[i], &o[i], cpu, cap);
        double worst = 0;
        for (int f = 0; f + 1920 <= n && f + 1920 <= cap; f += 1920)
            worst = fmax(worst, rel_l2(gpu.pcm[i] + f, cpu + f, 1920));
        printf("joins, chunks and pauses, utterance %d: %d samples on the GPU, %d on the CPU, "
               "max rel err per frame %.3g\n",
               i, gpu.n[i], n, worst);
        CHECKF(gpu.n[i] == n && n > 0 && worst <= TOL,
               "utterance %d: %d samples on the GPU, %d on the CPU, rel err %.3g", i, gpu.n[i], n,
               worst);
        free(gpu.pcm[i]);
    }
    free(cpu);
    ptts_voice_free(v);
}

/* The sampler heads of MODEL.md 5 on the GPU. Their variant checkpoints hold exactly the LSD
 * checkpoint's tensors of the same names (fixtures README), so the tiny LSD model with its
 * arch's sampler type changed is the flow_matching (time_embed.0 used) or the drifting model
 * (no time input); the CPU engine is not run here. */
static void sampler_heads(ptts_model *m) {
    const ptts_arch keep = m->w->arch;
    static const ptts_vk_tuning hooks[2] = {{.stepk = -1}, {.stepk = 1}};
    for (int h = 0; h < 2; h++) {
        ptts_model_set_vk_tuning(m, &hooks[h]);
        m->w->arch.flow_type = PTTS_FLOW_MATCHING;
        m->w->arch.n_time_embed = 1;
        printf("flow_matching head, %s:\n", h ? "stepk" : "multi-dispatch step");
        replay_gpu(m, "generate_flow_matching_steps1", "voice_short.safetensors", 1e9f, 50);
        replay_gpu(m, "generate_flow_matching_steps4", "voice_short.safetensors", 1e9f, 50);
        const unsigned long long fm = counts_of(m, 1, NULL, NULL).stepk_frames;
        ptts_model_set_vk_tuning(m, &hooks[h]); /* engines made for the other head go */
        m->w->arch.flow_type = PTTS_FLOW_DRIFTING;
        m->w->arch.n_time_embed = 0;
        printf("drifting head, %s:\n", h ? "stepk" : "multi-dispatch step");
        errs er = {0};
        replay(m, "tiny", "generate_drifting", "voice_short.safetensors", 1e9f, 50, 1e-2, &er);
        printf("vulkan tiny generate_drifting: max rel err latents %.3g, eos %.3g, pcm %.3g\n",
               er.max_lat, er.max_eos, er.max_pcm);
        const unsigned long long dr = counts_of(m, 1, NULL, NULL).stepk_frames;
        CHECKF(h ? fm > 0 && dr > 0 : fm == 0 && dr == 0, "stepk frames: %llu, %llu", fm, dr);
        m->w->arch = keep;
    }
    ptts_model_set_vk_tuning(m, NULL);
}

/* The flow head alone on the GPU against the head fixtures (cond [5][d], noise [5][ld] ->
 * out_stepsN [5][ld], per row at the GPU tolerance) for each sampler type, on a copy of the
 * weights with the type set (as in sampler_heads); lsd also at 2 steps, flow_matching at 16
 * (more evaluations than stepk takes: the multi-dispatch recorder). */
static void flow_heads(const ptts_model *m) {
    static const struct {
        const char *file;
        int type, k, steps[3];
    } cases[] = {{"tiny/flow_head.safetensors", PTTS_FLOW_LSD, 2, {1, 2, 4}},
                 {"tiny/flow_head_flow_matching.safetensors", PTTS_FLOW_MATCHING, 1, {1, 4, 16}},
                 {"tiny/flow_head_drifting.safetensors", PTTS_FLOW_DRIFTING, 0, {1, 0, 0}}};
    const ptts_engine_ops *ops = ptts_vulkan_engine();
    const int R = 5, d = m->w->arch.d, ld = m->w->arch.ld;
    ptts_error e = {0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ptts_weights wv = *m->w;
        wv.arch.flow_type = cases[c].type;
        wv.arch.n_time_embed = cases[c].k;
        const ptts_engine_args args = {.w = &wv, .ctx = &m->ctx};
        void *eng;
        REQUIRE(ops->create(&eng, &args, R, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
        const char *path = fixture_path(cases[c].file);
        int64_t nc = 0, nn = 0;
        float *cond = load_f32(path, "cond", &nc), *noise = load_f32(path, "noise", &nn);
        REQUIRE(cond && noise && nc == (int64_t)R * d && nn == (int64_t)R * ld);
        float out[5 * 64];
        REQUIRE(R * ld <= (int)(sizeof out / sizeof out[0]));
        for (int i = 0; i < 3 && cases[c].steps[i]; i++) {
            const int steps = cases[c].steps[i];
            char name[32];
            snprintf(name, sizeof name, "out_steps%d", steps);
            int64_t nw = 0;
            float *want = load_f32(path, name, &nw);
            REQUIRE(want && nw == (int64_t)R * ld);
            CHECK(ops->set_sampler_steps(eng, steps, &e) == 0);
            CHECKF(ptts_vulkan_flow_sample(eng, cond, noise, R, out, &e) == 0, "%s", e.msg);
            double worst = 0;
            for (int r = 0; r < R; r++)
                worst = fmax(worst, rel_l2(out + r * ld, want + r * ld, (size_t)ld));
            printf("%s, %d steps on the GPU: max rel err per row %.3g\n", cases[c].file, steps,
                   worst);
            CHECKF(worst <= TOL, "%s steps %d: rel err %.3g", cases[c].file, steps, worst);
            free(want);
        }
        free(cond);
        free(noise);
        ops->destroy(eng);
    }
}

int main(void) {
    int discrete = 0;
    vk_test_probe(&discrete);
    ptts_model *m = vk_test_model(PTTS_PRECISION_F32, 0);
    replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218);
    replay_gpu(m, "generate_short", "voice_short.safetensors", 1e9f, 50);
    replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
    if (!discrete) /* a device without an SM count: no stepk, no tensor cores by default */
        CHECK(counts_of(m, 1, NULL, NULL).stepk_frames == 0);
    CHECK(counts_of(m, 1, NULL, NULL).conv_copies == 0); /* float32: ELU on load */
    batch_vs_cpu(m);
    batch_vs_cpu_n(m, 4); /* 32 slot-frames: one full codec pass */
    batch_vs_cpu_n(m, 6); /* 48: each call's frames over two passes */
    batch_vs_cpu_n(m, 20);
    pipe_exact(m);
    call_budget(m);
    join_first_audio(m, PTTS_JOIN_FIRST_AUDIO);
    join_first_audio(m, PTTS_JOIN_THROUGHPUT);
    joins_chunks_pauses(m);
    batch_cancel_restart(m);
    batch_eos_ends(m);
    codec_groups(m);
    flow_heads(m);
    sampler_heads(m);
    /* codec-only mode: backbone and flow head on the CPU, the codec on the GPU */
    m->be.engine = ptts_hybrid_engine();
    printf("vulkan-codec (hybrid):\n");
    replay_gpu(m, "generate", "voice.safetensors", 1e9f, 218);
    replay_gpu(m, "generate_short", "voice_short.safetensors", eos_case_threshold(), 16);
    batch_vs_cpu(m);
    ptts_model_free(m);
    return test_summary();
}
