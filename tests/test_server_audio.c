// ctest-label: unit
/*
 * test_server_audio.c - the response encoders of `pocket-tts serve` (tools/server/server_audio.c,
 * server_opus.c, server_aac.c) without HTTP, decoded back with the codecs' own decoders: a
 * 24 kHz tone written in uneven pieces comes back from Ogg/Opus (libopus) with the exact length
 * (pre-skip and end trim), a page released after every write that completes a packet, and the
 * tone's frequency; AAC comes back from ADTS (libavcodec) covering the tone; the SSE framing
 * gives delta events whose base64 decodes to the PCM stream, then the done event with usage;
 * the format names, availability and the SSE rule.
 */
#include <libavcodec/avcodec.h>
#include <math.h>
#include <opus/opus.h>

#include "server.h"
#include "test.h"

#define N_TONE 30011 /* samples: not a multiple of any codec frame */
#define TONE_HZ 440.0

static float tone[N_TONE];

/* Feed the tone in pieces of 1, 7, 333, 1920, ... samples; after each, take what is ready
 * into out (append), and count the writes after which bytes were ready. */
static size_t encode(srv_enc *e, uint8_t **out, int *ready_writes) {
    static const int pieces[] = {1, 7, 333, 1920, 4000, 59};
    size_t len = 0;
    *out = NULL;
    *ready_writes = 0;
    for (int i = 0, k = 0; i < N_TONE; k++) {
        int n = pieces[k % 6] < N_TONE - i ? pieces[k % 6] : N_TONE - i;
        CHECK(srv_enc_write(e, tone + i, n) == 0);
        i += n;
        size_t got;
        const uint8_t *d = srv_enc_data(e, &got);
        if (got) {
            (*ready_writes)++;
            *out = realloc(*out, len + got);
            memcpy(*out + len, d, got);
            len += got;
            srv_enc_consume(e, got);
        }
    }
    CHECK(srv_enc_finish(e) == 0);
    size_t got;
    const uint8_t *d = srv_enc_data(e, &got);
    *out = realloc(*out, len + got + 1);
    memcpy(*out + len, d, got);
    srv_enc_consume(e, got);
    return len + got;
}

/* The dominant frequency's closeness to TONE_HZ: the tone's share of the signal's energy
 * at TONE_HZ (a single-bin DFT over x[from, to)). */
static double tone_share(const float *x, size_t from, size_t to) {
    double re = 0, im = 0, en = 0;
    for (size_t i = from; i < to; i++) {
        double w = 2 * M_PI * TONE_HZ * (double)i / PTTS_SAMPLE_RATE;
        re += x[i] * cos(w), im += x[i] * sin(w), en += (double)x[i] * x[i];
    }
    return en > 0 ? 2 * (re * re + im * im) / ((double)(to - from) * en) : 0;
}

static void test_opus(void) {
    char err[256];
    srv_enc *e;
    REQUIRE(srv_enc_open(&e, FMT_OPUS, 1.0, 1, err, sizeof err) == 0);
    uint8_t *b;
    int ready;
    size_t n = encode(e, &b, &ready);
    srv_enc_free(e);
    /* pages: every one with "OggS", OpusHead first (input rate 24000), granules rising */
    size_t at = 0;
    int pages = 0, pre_skip = -1, eos = 0;
    int64_t granule = 0, last = 0;
    int dec_err = 0;
    OpusDecoder *dec = opus_decoder_create(48000, 1, &dec_err);
    REQUIRE(dec);
    float *pcm = malloc(sizeof(float) * 2 * (N_TONE + 48000));
    size_t decoded = 0;
    while (at + 27 <= n && !memcmp(b + at, "OggS", 4)) {
        const uint8_t *h = b + at;
        memcpy(&granule, h + 6, 8);
        int nseg = h[26];
        const uint8_t *seg = h + 27, *body = seg + nseg;
        size_t off = 0;
        for (int s = 0, plen = 0; s < nseg; s++) {
            plen += seg[s];
            if (seg[s] == 255) continue;
            const uint8_t *p = body + off;
            if (pages == 0) {
                CHECK(plen == 19 && !memcmp(p, "OpusHead", 8) && p[9] == 1);
                pre_skip = p[10] | p[11] << 8;
                CHECK((p[12] | p[13] << 8 | p[14] << 16 | (uint32_t)p[15] << 24) == 24000);
            } else if (pages > 1) {
                int k = opus_decode_float(dec, p, plen, pcm + decoded, 5760, 0);
                CHECK(k > 0);
                if (k > 0) decoded += (size_t)k;
            }
            off += (size_t)plen;
            plen = 0;
        }
        CHECK(!eos); /* nothing after the end of stream */
        eos = h[5] & 4;
        CHECK(granule >= last);
        last = granule;
        at = (size_t)(body + off - b);
        pages++;
    }
    CHECKF(at == n, "the Ogg pages end at %zu of %zu bytes", at, n);
    CHECK(eos);
    CHECKF(last - pre_skip == 2 * N_TONE, "last granule %lld, pre-skip %d, %d samples",
           (long long)last, pre_skip, N_TONE);
    CHECKF(pages > 10 && ready >= pages - 4, "%d pages, %d writes released bytes", pages, ready);
    /* the decoded 48 kHz audio covers the tone; every other sample is the 24 kHz tone */
    CHECK(decoded >= (size_t)(pre_skip + 2 * N_TONE));
    float *half = malloc(sizeof(float) * N_TONE);
    for (int i = 0; i < N_TONE; i++)
        half[i] = pcm[pre_skip + 2 * i];
    double share = tone_share(half, 2400, N_TONE - 2400);
    CHECKF(share > 0.9, "the 440 Hz share after Opus: %.3f", share);
    free(half);
    free(pcm);
    opus_decoder_destroy(dec);
    free(b);
}

static void test_aac(void) {
    char err[256];
    srv_enc *e;
    REQUIRE(srv_format_available(FMT_AAC));
    REQUIRE(srv_enc_open(&e, FMT_AAC, 1.0, 1, err, sizeof err) == 0);
    uint8_t *b;
    int ready;
    size_t n = encode(e, &b, &ready);
    srv_enc_free(e);
    const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_AAC);
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    REQUIRE(ctx && avcodec_open2(ctx, codec, NULL) == 0);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *fr = av_frame_alloc();
    float *pcm = malloc(sizeof(float) * (N_TONE + 8192));
    size_t at = 0, decoded = 0;
    int frames = 0;
    while (at + 7 <= n) {
        const uint8_t *h = b + at;
        CHECK(h[0] == 0xFF && (h[1] & 0xF6) == 0xF0); /* ADTS sync, layer 0 */
        CHECK(((h[2] >> 2) & 15) == 6);               /* 24000 Hz */
        size_t len = (size_t)((h[3] & 3) << 11 | h[4] << 3 | h[5] >> 5);
        if (len < 7 || at + len > n) break;
        pkt->data = b + at;
        pkt->size = (int)len;
        CHECK(avcodec_send_packet(ctx, pkt) == 0);
        while (avcodec_receive_frame(ctx, fr) == 0) {
            for (int i = 0; i < fr->nb_samples && decoded < N_TONE + 8192; i++)
                pcm[decoded++] = ((const float *)fr->data[0])[i];
        }
        at += len;
        frames++;
    }
    CHECKF(at == n, "the ADTS frames end at %zu of %zu bytes", at, n);
    CHECKF(decoded >= N_TONE && ready > 10, "%d frames, %zu samples, %d writes released bytes",
           frames, decoded, ready);
    /* the encoder's priming delay shifts the tone: judge its middle */
    double share = tone_share(pcm, 4096, N_TONE - 2400);
    CHECKF(share > 0.9, "the 440 Hz share after AAC: %.3f", share);
    free(pcm);
    av_frame_free(&fr);
    av_packet_free(&pkt);
    avcodec_free_context(&ctx);
    free(b);
}

static int b64v(char c) {
    const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(t, c) : NULL;
    return p ? (int)(p - t) : -1;
}

static void test_sse(void) {
    char err[256];
    srv_enc *plain, *e;
    REQUIRE(srv_enc_open(&plain, FMT_PCM, 1.0, 1, err, sizeof err) == 0);
    REQUIRE(srv_enc_open(&e, FMT_PCM, 1.0, 1, err, sizeof err) == 0);
    srv_enc_set_sse(e, 17);
    CHECK(!strcmp(srv_enc_mime(e), "text/event-stream"));
    CHECK(!strcmp(srv_enc_mime(plain), "audio/pcm"));
    uint8_t *ref, *ev;
    int ready;
    size_t nref = encode(plain, &ref, &ready);
    size_t nev = encode(e, &ev, &ready);
    srv_enc_free(plain);
    srv_enc_free(e);
    ev[nev] = 0;
    /* delta events, base64 decoded and joined, then one done event */
    const char *delta = "data: {\"type\":\"speech.audio.delta\",\"audio\":\"";
    uint8_t *audio = malloc(nref + 4);
    size_t alen = 0;
    int deltas = 0;
    const char *p = (const char *)ev;
    while (!strncmp(p, delta, strlen(delta))) {
        p += strlen(delta);
        int q[4], k = 0;
        for (; *p && *p != '"'; p++) {
            q[k++] = *p == '=' ? 0 : b64v(*p);
            CHECK(q[k - 1] >= 0);
            if (k == 4) {
                uint32_t v = (uint32_t)q[0] << 18 | (uint32_t)q[1] << 12 | (uint32_t)q[2] << 6 |
                             (uint32_t)q[3];
                int bytes = p[0] == '=' ? (p[-1] == '=' ? 1 : 2) : 3;
                for (int i = 0; i < bytes && alen < nref + 4; i++)
                    audio[alen++] = (uint8_t)(v >> (16 - 8 * i));
                k = 0;
            }
        }
        CHECK(k == 0 && !strncmp(p, "\"}\n\n", 4));
        p += 4;
        deltas++;
    }
    CHECKF(deltas > 5 && alen == nref && !memcmp(audio, ref, nref), "%d deltas, %zu of %zu bytes",
           deltas, alen, nref);
    char done[256];
    long long frames = (N_TONE + 1919) / 1920;
    snprintf(done, sizeof done,
             "data: {\"type\":\"speech.audio.done\",\"usage\":{\"input_tokens\":17,"
             "\"output_tokens\":%lld,\"total_tokens\":%lld}}\n\n",
             frames, 17 + frames);
    CHECKF(!strcmp(p, done), "the end of the stream: %s", p);
    free(audio);
    free(ref);
    free(ev);
}

static void test_formats(void) {
    static const char *const names[] = {"wav", "pcm", "flac", "opus", "mp3", "aac"};
    for (int f = 0; f < SRV_N_FMT; f++)
        CHECK(srv_format_parse(names[f]) == f && !strcmp(srv_format_name(f), names[f]));
    CHECK(srv_format_parse("aiff") == -1);
    CHECK(srv_format_sse_ok(FMT_PCM) && srv_format_sse_ok(FMT_WAV) && !srv_format_sse_ok(FMT_OPUS));
    char list[96];
    srv_format_list(list, sizeof list);
    CHECKF(strstr(list, "wav, pcm, flac, opus") && strstr(list, "aac"), "%s", list);
    CHECK(!strcmp(srv_format_mime(FMT_AAC), "audio/aac") &&
          !strcmp(srv_format_mime(FMT_OPUS), "audio/ogg"));
}

/* Samples past [-1, 1] (an untrained or loud voice) saturate in every container, streamed or
 * whole: libsndfile's FLAC writer failed on them for good before clipping was set. */
static void test_loud(void) {
    static float loud[4 * 1920];
    for (int i = 0; i < 4 * 1920; i++)
        loud[i] = 3.f * (float)sin(2 * M_PI * TONE_HZ * i / PTTS_SAMPLE_RATE);
    for (int f = 0; f < SRV_N_FMT; f++) {
        if (!srv_format_available(f)) continue;
        for (int streaming = 0; streaming < 2; streaming++) {
            char err[256];
            srv_enc *e;
            REQUIRE(srv_enc_open(&e, f, 1.0, streaming, err, sizeof err) == 0);
            int bad = 0;
            for (int r = 0; r < 25 && !bad; r++) {
                bad = srv_enc_write(e, loud, 4 * 1920) != 0;
                size_t n;
                srv_enc_data(e, &n);
                if (streaming && n) srv_enc_consume(e, n);
            }
            bad = bad || srv_enc_finish(e) != 0;
            CHECKF(!bad, "%s (%s): loud samples failed the encoder", srv_format_name(f),
                   streaming ? "streamed" : "whole");
            srv_enc_free(e);
        }
    }
}

int main(void) {
    for (int i = 0; i < N_TONE; i++)
        tone[i] = 0.5f * (float)sin(2 * M_PI * TONE_HZ * i / PTTS_SAMPLE_RATE);
    test_formats();
    test_loud();
    test_sse();
    test_opus();
    test_aac();
    return test_summary();
}
