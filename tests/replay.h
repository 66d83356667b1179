/*
 * replay.h - replaying a generation fixture (generate / generate_short of a size folder) through
 * a stream with the recorded noise, comparing chunk texts and ids, latents, EOS logits and PCM
 * per frame (relative L2 <= tol: 1e-4 for the CPU, 1e-3 for the GPU). Shared by test_generate.c
 * (tiny), test_generate_full.c and the Vulkan tests (vk_test.h).
 */
#ifndef PTTS_REPLAY_H
#define PTTS_REPLAY_H

#include <cjson/cJSON.h>

#include "generate.h"
#include "model.h"
#include "safetensors.h"
#include "test.h"

static float *load_f32(const char *path, const char *name, int64_t *numel) {
    st_file *f;
    ptts_error e = {0};
    if (st_open(&f, path, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    const st_tensor *t = st_find(f, name);
    float *out = t ? malloc((size_t)t->numel * sizeof(float)) : NULL;
    if (out) st_to_f32(f, t, out, &e);
    if (numel) *numel = t ? t->numel : 0;
    st_close(f);
    return out;
}

static cJSON *load_json(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    return j;
}

typedef struct {
    double max_lat, max_eos, max_pcm;
} errs;

/* The threshold of the tiny generate_short case's `key` (eos_case: EOS first fires at step
 * 11; eos_early_case: it crosses at step 3, which 3.3 ignores, and again at 11). */
static inline float short_case_threshold(const char *key) {
    cJSON *man = load_json(fixture_path("tiny/manifest.json"));
    REQUIRE(man);
    cJSON *cs = cJSON_GetObjectItem(cJSON_GetObjectItem(man, "cases"), "generate_short");
    cJSON *ec = cJSON_GetObjectItem(cJSON_GetObjectItem(cs, key), "eos_threshold");
    REQUIRE(ec);
    float t = (float)ec->valuedouble;
    cJSON_Delete(man);
    return t;
}

static inline float eos_case_threshold(void) { return short_case_threshold("eos_case"); }

/* Replays case `cname` of `size` through m's engine and compares every frame within `tol`;
 * the run must emit exactly `expect_frames` frames. (inline: not every test that includes this
 * header calls it.) */
static inline void replay(ptts_model *m, const char *size, const char *cname,
                          const char *voice_file, float eos_threshold, int expect_frames,
                          double tol, errs *er) {
    char path[512], gpath[512];
    snprintf(path, sizeof path, "%s/manifest.json", size);
    cJSON *man = load_json(fixture_path(path));
    REQUIRE(man);
    cJSON *cs = cJSON_GetObjectItem(cJSON_GetObjectItem(man, "cases"), cname);
    REQUIRE(cs);
    const char *text = cJSON_GetObjectItem(cs, "text")->valuestring;
    int max_tokens = cJSON_GetObjectItem(cs, "max_tokens")->valueint;
    snprintf(gpath, sizeof gpath, "%s/%s.safetensors", size, cname);
    const char *gp = fixture_path(gpath);
    int64_t n_noise, n_lat, n_eos, n_pcm;
    float *noise = load_f32(gp, "noise", &n_noise);
    float *lat = load_f32(gp, "latents", &n_lat);
    float *eos = load_f32(gp, "eos_logits", &n_eos);
    float *pcm = load_f32(gp, "pcm", &n_pcm);
    REQUIRE(noise && lat && eos && pcm);
    const int ld = m->w->arch.ld, fs = m->w->arch.frame_samples;

    ptts_error e = {0};
    snprintf(path, sizeof path, "%s/%s", size, voice_file);
    ptts_voice *v;
    REQUIRE(ptts_voice_load(&v, m, fixture_path(path), &e) == 0);
    ptts_voice_state *before;
    REQUIRE(ptts_voice_state_clone(&before, v->st, &e) == 0);

    ptts_gen_options o = ptts_gen_options_default();
    o.temperature = (float)cJSON_GetObjectItem(cs, "temperature")->valuedouble;
    o.temperature_set = 1;
    o.eos_threshold = eos_threshold;
    o.eos_threshold_set = 1;
    o.max_tokens = max_tokens;
    o.sampler_steps = cJSON_GetObjectItem(cs, "sampler_decode_steps")->valueint;
    o.noise = noise;
    o.noise_rows = (int)(n_noise / ld);
    /* the reference's chunks (re-prepared text, ids, F = guess + 2) from the manifest */
    cJSON *jch = cJSON_GetObjectItem(cs, "chunks");
    const int nc = cJSON_GetArraySize(jch);
    REQUIRE(nc >= 1);
    ptts_chunk *want = calloc((size_t)nc, sizeof *want);
    int *chunk_start = calloc((size_t)nc + 1, sizeof *chunk_start); /* first frame per chunk */
    REQUIRE(want && chunk_start);
    for (int i = 0; i < nc; i++) {
        cJSON *c = cJSON_GetArrayItem(jch, i), *ids = cJSON_GetObjectItem(c, "tokens");
        want[i].text = want[i].model_text = cJSON_GetObjectItem(c, "text")->valuestring;
        want[i].n_ids = cJSON_GetArraySize(ids);
        want[i].ids = calloc((size_t)want[i].n_ids, sizeof(int));
        REQUIRE(want[i].ids);
        for (int j = 0; j < want[i].n_ids; j++)
            want[i].ids[j] = cJSON_GetArrayItem(ids, j)->valueint;
        want[i].guess = cJSON_GetObjectItem(c, "frames_after_eos")->valueint - 2;
        chunk_start[i + 1] = chunk_start[i] + cJSON_GetObjectItem(c, "max_gen_len")->valueint;
    }

    ptts_stream *s;
    REQUIRE(ptts_stream_create(&s, m, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    /* the text side (text.c) gives the same chunks from the case's text */
    int rc = ptts_stream_start(s, v, text, &o, &e);
    CHECKF(rc == 0, "%s", e.msg);
    const ptts_chunk *chunks;
    int got_nc = rc ? 0 : ptts_stream_chunks(s, &chunks);
    CHECKF(got_nc == nc, "%s %s: %d chunks from the text, expected %d", size, cname, got_nc, nc);
    for (int i = 0; i < got_nc && i < nc; i++) {
        CHECKF(!strcmp(chunks[i].model_text, want[i].model_text), "chunk %d: '%s' vs '%s'", i,
               chunks[i].model_text, want[i].model_text);
        int same = chunks[i].n_ids == want[i].n_ids && chunks[i].guess == want[i].guess;
        for (int j = 0; same && j < chunks[i].n_ids; j++)
            same = chunks[i].ids[j] == want[i].ids[j];
        CHECKF(same, "chunk %d: ids or guess differ", i);
    }
    /* the loop itself runs on the reference's chunks */
    rc = ptts_stream_start_chunks(s, v, want, nc, &o, &e);
    CHECKF(rc == 0, "%s", e.msg);

    float *out = malloc((size_t)fs * sizeof(float));
    float *got_eos = calloc((size_t)n_eos, sizeof(float));
    int frames = 0;
    for (;;) {
        int n = ptts_stream_next(s, out, &e);
        CHECKF(n >= 0, "%s", e.msg);
        if (n <= 0) break;
        CHECK(n == fs);
        if (frames < n_lat / ld) {
            const ptts_step_record *r = ptts_stream_last_step(s);
            if (expect_frames == chunk_start[nc]) { /* no EOS stop: chunks run max_gen_len */
                int c = 0;
                while (c + 1 < nc && frames >= chunk_start[c + 1])
                    c++;
                CHECKF(r->chunk == c && r->step == frames - chunk_start[c],
                       "frame %d: chunk %d step %d, expected %d %d", frames, r->chunk, r->step, c,
                       frames - chunk_start[c]);
            }
            double el = rel_l2(r->latent, lat + (size_t)frames * ld, (size_t)ld);
            got_eos[frames] = r->eos;
            double ep = rel_l2(out, pcm + (size_t)frames * fs, (size_t)fs);
            if (el > er->max_lat) er->max_lat = el;
            if (ep > er->max_pcm) er->max_pcm = ep;
            CHECKF(el <= tol, "%s %s frame %d: latent rel err %.3g", size, cname, frames, el);
            CHECKF(ep <= tol, "%s %s frame %d: pcm rel err %.3g", size, cname, frames, ep);
        }
        frames++;
    }
    /* EOS logits are scalars per step, often near zero: compared as one tensor */
    int ne = frames < n_eos ? frames : (int)n_eos;
    er->max_eos = rel_l2(got_eos, eos, (size_t)ne);
    CHECKF(er->max_eos <= tol, "%s %s: eos logits rel err %.3g", size, cname, er->max_eos);
    free(got_eos);
    CHECKF(frames == expect_frames, "%s %s: %d frames, expected %d", size, cname, frames,
           expect_frames);
    /* the voice is a value: generation never modifies it */
    size_t vn = (size_t)before->layers * before->positions * before->heads * before->dh;
    CHECK(v->st->positions == before->positions);
    CHECK(memcmp(v->st->k, before->k, vn * sizeof(float)) == 0);
    CHECK(memcmp(v->st->v, before->v, vn * sizeof(float)) == 0);

    free(out);
    ptts_stream_free(s);
    for (int i = 0; i < nc; i++)
        free(want[i].ids);
    free(want);
    free(chunk_start);
    ptts_voice_state_free(before);
    ptts_voice_free(v);
    free(noise);
    free(lat);
    free(eos);
    free(pcm);
    cJSON_Delete(man);
}

#endif
