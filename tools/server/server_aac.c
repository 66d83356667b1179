/*
 * server_aac.c - the AAC writer of `pocket-tts serve` (OpenAI's response_format "aac"): FFmpeg's
 * native AAC encoder (libavcodec, AAC-LC) on the model's 24 kHz mono, each packet framed as
 * ADTS (ISO 14496-3 1.A.2: a 7-byte header per frame, no CRC), the self-synchronising stream
 * that browsers, players and OpenAI's own aac answers use. Frames go to the sink as the encoder
 * releases them (1024 samples each, after its priming delay), so the stream plays while it is
 * generated.
 */
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/log.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define AAC_RATE 24000
#define AAC_RATE_INDEX 6  /* ISO 14496-3 table 1.18: 24000 Hz */
#define AAC_BITRATE 64000 /* bits/s: AAC-LC's usual rate for mono speech of this bandwidth */
#define ADTS_HEADER 7

struct srv_aac {
    AVCodecContext *ctx;
    AVFrame *frame;
    AVPacket *pkt;
    srv_sink sink;
    void *user;
    int n_pending; /* samples in frame->data[0] not yet sent to the encoder */
    int64_t pts;   /* samples sent to the encoder */
    int finished;
};

/* Every packet the encoder has ready, each behind its ADTS header. */
static int drain(srv_aac *a) {
    for (;;) {
        int rc = avcodec_receive_packet(a->ctx, a->pkt);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return 0;
        if (rc < 0) return -1;
        const unsigned len = (unsigned)a->pkt->size + ADTS_HEADER; /* 13 bits */
        if (len >= 1u << 13) {
            av_packet_unref(a->pkt);
            return -1;
        }
        const unsigned profile = 1, channels = 1; /* AAC-LC (object type 2, minus 1); mono */
        uint8_t h[ADTS_HEADER] = {
            0xFF,
            0xF1, /* sync, MPEG-4, layer 0, no CRC */
            (uint8_t)(profile << 6 | AAC_RATE_INDEX << 2 | channels >> 2),
            (uint8_t)((channels & 3) << 6 | len >> 11),
            (uint8_t)(len >> 3),
            (uint8_t)((len & 7) << 5 | 0x1F), /* buffer fullness 0x7FF: variable rate */
            0xFC,                             /* ... and one raw data block */
        };
        rc = a->sink(a->user, h, sizeof h) || a->sink(a->user, a->pkt->data, (size_t)a->pkt->size);
        av_packet_unref(a->pkt);
        if (rc) return -1;
    }
}

/* The pending samples (n_pending of them) to the encoder. */
static int send_frame(srv_aac *a) {
    a->frame->nb_samples = a->n_pending;
    a->frame->pts = a->pts;
    a->pts += a->n_pending;
    a->n_pending = 0;
    if (avcodec_send_frame(a->ctx, a->frame) < 0) return -1;
    return drain(a);
}

int srv_aac_open(srv_aac **out, srv_sink sink, void *user, char *err, size_t cap) {
    *out = NULL;
    /* libavcodec's messages would go to stderr: failures are returned instead */
    av_log_set_level(AV_LOG_QUIET);
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_AAC);
    if (!codec) {
        snprintf(err, cap, "this libavcodec has no AAC encoder");
        return -1;
    }
    srv_aac *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    a->sink = sink;
    a->user = user;
    a->ctx = avcodec_alloc_context3(codec);
    a->frame = av_frame_alloc();
    a->pkt = av_packet_alloc();
    if (!a->ctx || !a->frame || !a->pkt) {
        snprintf(err, cap, "out of memory");
        srv_aac_free(a);
        return -1;
    }
    a->ctx->sample_rate = AAC_RATE;
    a->ctx->sample_fmt = AV_SAMPLE_FMT_FLTP;
    a->ctx->bit_rate = AAC_BITRATE;
    a->ctx->profile = FF_PROFILE_AAC_LOW;
    a->ctx->time_base = (AVRational){1, AAC_RATE};
    av_channel_layout_default(&a->ctx->ch_layout, 1);
    int rc = avcodec_open2(a->ctx, codec, NULL);
    if (rc >= 0) {
        a->frame->format = AV_SAMPLE_FMT_FLTP;
        a->frame->sample_rate = AAC_RATE;
        a->frame->nb_samples = a->ctx->frame_size;
        rc = av_channel_layout_copy(&a->frame->ch_layout, &a->ctx->ch_layout);
        if (rc >= 0) rc = av_frame_get_buffer(a->frame, 0);
    }
    if (rc < 0) {
        char m[128];
        av_strerror(rc, m, sizeof m);
        snprintf(err, cap, "the AAC encoder: %s", m);
        srv_aac_free(a);
        return -1;
    }
    *out = a;
    return 0;
}

int srv_aac_write(srv_aac *a, const float *x, size_t n) {
    if (a->finished) return -1;
    const int fs = a->ctx->frame_size;
    for (size_t i = 0; i < n;) {
        /* the encoder may still hold the frame's buffer: get a writable one */
        if (a->n_pending == 0 && av_frame_make_writable(a->frame) < 0) return -1;
        size_t k = (size_t)(fs - a->n_pending);
        if (k > n - i) k = n - i;
        memcpy((float *)a->frame->data[0] + a->n_pending, x + i, k * sizeof(float));
        a->n_pending += (int)k;
        i += k;
        if (a->n_pending == fs && send_frame(a)) return -1;
    }
    return 0;
}

int srv_aac_finish(srv_aac *a) {
    if (a->finished) return 0;
    a->finished = 1;
    /* the last, shorter frame (the encoder takes one), then the flush of its delay */
    if (a->n_pending > 0 && send_frame(a)) return -1;
    if (avcodec_send_frame(a->ctx, NULL) < 0) return -1;
    return drain(a);
}

void srv_aac_free(srv_aac *a) {
    if (!a) return;
    avcodec_free_context(&a->ctx);
    av_frame_free(&a->frame);
    av_packet_free(&a->pkt);
    free(a);
}
