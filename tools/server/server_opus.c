/*
 * server_opus.c - the Ogg/Opus writer of `pocket-tts serve` (RFC 7845) on libopus and libogg,
 * built to stream: every srv_opus_write that completes at least one 20 ms packet ends with a
 * flushed Ogg page, so a client hears the audio while the rest is generated (libsndfile's
 * writer keeps pages until they are full). Input is the model's 24 kHz mono; the OpusHead says
 * so (input_sample_rate), the granule positions count 48 kHz samples as RFC 7845 requires, the
 * pre-skip is the encoder's lookahead and the last page's granule trims the final packet's
 * padding.
 */
#include <ogg/ogg.h>
#include <opus/opus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

#define OPUS_IN_RATE 24000
#define PACKET_SAMPLES (OPUS_IN_RATE / 50) /* 20 ms: Opus's usual frame for speech */
#define MAX_PACKET 4000                    /* libopus's recommended output buffer (bytes) */
#define GRANULE_SCALE (48000 / OPUS_IN_RATE)
#define BITRATE 32000 /* bits/s: transparent enough for 24 kHz mono speech, small to stream */

struct srv_opus {
    OpusEncoder *enc;
    ogg_stream_state os;
    int os_init;
    srv_sink sink;
    void *user;
    float pending[PACKET_SAMPLES]; /* a packet's samples not yet complete */
    int n_pending;
    int64_t packetno;   /* Ogg packets, the two headers included */
    int64_t packets;    /* audio packets encoded */
    int64_t samples_in; /* 24 kHz samples given */
    int pre_skip;       /* 48 kHz samples */
    uint8_t *pkt;
    int finished;
};

static void put_le16(uint8_t *p, unsigned v) {
    p[0] = (uint8_t)(v & 0xff);
    p[1] = (uint8_t)(v >> 8);
}
static void put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Every page the stream has ready (flush: also a partial one) to the sink. */
static int emit_pages(srv_opus *o, int flush) {
    ogg_page pg;
    while (flush ? ogg_stream_flush(&o->os, &pg) : ogg_stream_pageout(&o->os, &pg)) {
        if (o->sink(o->user, pg.header, (size_t)pg.header_len) ||
            o->sink(o->user, pg.body, (size_t)pg.body_len))
            return -1;
    }
    return 0;
}

static int packet_in(srv_opus *o, uint8_t *data, long len, int64_t granule, int bos, int eos) {
    ogg_packet op = {.packet = data,
                     .bytes = len,
                     .b_o_s = bos,
                     .e_o_s = eos,
                     .granulepos = granule,
                     .packetno = o->packetno++};
    return ogg_stream_packetin(&o->os, &op) ? -1 : 0;
}

int srv_opus_open(srv_opus **out, srv_sink sink, void *user, char *err, size_t cap) {
    *out = NULL;
    srv_opus *o = calloc(1, sizeof *o);
    uint8_t *pkt = malloc(MAX_PACKET);
    if (!o || !pkt) {
        free(o);
        free(pkt);
        snprintf(err, cap, "out of memory");
        return -1;
    }
    o->pkt = pkt;
    o->sink = sink;
    o->user = user;
    int oe = 0;
    o->enc = opus_encoder_create(OPUS_IN_RATE, 1, OPUS_APPLICATION_AUDIO, &oe);
    if (!o->enc) {
        snprintf(err, cap, "opus: %s", opus_strerror(oe));
        srv_opus_free(o);
        return -1;
    }
    opus_encoder_ctl(o->enc, OPUS_SET_BITRATE(BITRATE));
    opus_encoder_ctl(o->enc, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE));
    /* the middle complexity: every stream encodes in its connection's thread, and at the top
     * setting (10) the encoder costs as much as a fast model's generation */
    opus_encoder_ctl(o->enc, OPUS_SET_COMPLEXITY(5));
    opus_int32 lookahead = 0;
    opus_encoder_ctl(o->enc, OPUS_GET_LOOKAHEAD(&lookahead));
    o->pre_skip = (int)lookahead * GRANULE_SCALE;
    /* the serial only tells streams of one file apart: any value does */
    if (ogg_stream_init(&o->os, (int)(time(NULL) & 0x7fffffff))) {
        snprintf(err, cap, "out of memory");
        srv_opus_free(o);
        return -1;
    }
    o->os_init = 1;
    /* RFC 7845 5.1: identification header */
    uint8_t head[19];
    memcpy(head, "OpusHead", 8);
    head[8] = 1; /* version */
    head[9] = 1; /* channels */
    put_le16(head + 10, (unsigned)o->pre_skip);
    put_le32(head + 12, OPUS_IN_RATE);
    put_le16(head + 16, 0); /* output gain */
    head[18] = 0;           /* mapping family: mono */
    /* 5.2: comment header, the vendor string and no comments */
    const char *vendor = opus_get_version_string();
    size_t vl = strlen(vendor);
    uint8_t tags[8 + 4 + 256 + 4];
    if (vl > 256) vl = 256;
    memcpy(tags, "OpusTags", 8);
    put_le32(tags + 8, (uint32_t)vl);
    memcpy(tags + 12, vendor, vl);
    put_le32(tags + 12 + vl, 0);
    /* each header on a page of its own (5: the first page holds only the OpusHead) */
    if (packet_in(o, head, sizeof head, 0, 1, 0) || emit_pages(o, 1) ||
        packet_in(o, tags, (long)(16 + vl), 0, 0, 0) || emit_pages(o, 1)) {
        snprintf(err, cap, "the Ogg/Opus header could not be written");
        srv_opus_free(o);
        return -1;
    }
    *out = o;
    return 0;
}

/* One 20 ms packet of o->pending (zero-padded). A page's granule counts every 48 kHz sample
 * its packets decode to, the pre-skip included; the last one is the exact end instead (the
 * input's samples after the pre-skip), so the decoder drops the padding. */
static int encode_packet(srv_opus *o, int eos) {
    if (o->n_pending < PACKET_SAMPLES)
        memset(o->pending + o->n_pending, 0,
               (size_t)(PACKET_SAMPLES - o->n_pending) * sizeof(float));
    o->n_pending = 0;
    opus_int32 n = opus_encode_float(o->enc, o->pending, PACKET_SAMPLES, o->pkt, MAX_PACKET);
    if (n < 0) return -1;
    o->packets++;
    int64_t granule = eos ? o->pre_skip + o->samples_in * GRANULE_SCALE
                          : o->packets * PACKET_SAMPLES * GRANULE_SCALE;
    return packet_in(o, o->pkt, n, granule, 0, eos);
}

/* 48 kHz samples the packets so far decode to */
static int64_t decoded(const srv_opus *o) { return o->packets * PACKET_SAMPLES * GRANULE_SCALE; }

int srv_opus_write(srv_opus *o, const float *x, size_t n) {
    if (o->finished) return -1;
    int packets = 0;
    for (size_t i = 0; i < n;) {
        size_t k = (size_t)(PACKET_SAMPLES - o->n_pending);
        if (k > n - i) k = n - i;
        memcpy(o->pending + o->n_pending, x + i, k * sizeof(float));
        o->n_pending += (int)k;
        o->samples_in += (int64_t)k;
        i += k;
        if (o->n_pending == PACKET_SAMPLES) {
            if (encode_packet(o, 0)) return -1;
            packets++;
        }
    }
    return packets ? emit_pages(o, 1) : 0;
}

int srv_opus_finish(srv_opus *o) {
    if (o->finished) return 0;
    o->finished = 1;
    /* the encoder's lookahead delays the audio by the pre-skip: packets of the rest, then of
     * silence, until the decoded length covers pre-skip + input; the last one ends the stream */
    const int64_t want = o->pre_skip + o->samples_in * GRANULE_SCALE;
    do {
        int last = decoded(o) + PACKET_SAMPLES * GRANULE_SCALE >= want;
        if (encode_packet(o, last)) return -1;
    } while (decoded(o) < want);
    return emit_pages(o, 1);
}

void srv_opus_free(srv_opus *o) {
    if (!o) return;
    if (o->enc) opus_encoder_destroy(o->enc);
    if (o->os_init) ogg_stream_clear(&o->os);
    free(o->pkt);
    free(o);
}
