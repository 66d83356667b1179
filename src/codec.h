/*
 * codec.h - the Mimi codec (MODEL.md section 6): the streaming decoder (latent -> 1920 samples
 * per frame, all state bounded) and the encoder (24 kHz audio -> latents at 12.5 Hz).
 */
#ifndef PTTS_CODEC_H
#define PTTS_CODEC_H

#include "ops.h"
#include "weights.h"

typedef struct ptts_codec_dec ptts_codec_dec;

/* Allocates every buffer the decoder will use (state and scratch); nothing is allocated per
 * frame. The state starts fresh. */
int ptts_codec_dec_create(ptts_codec_dec **out, const ptts_weights *w, ptts_error *e);
void ptts_codec_dec_free(ptts_codec_dec *d);
/* Fresh state (the reference decodes each text chunk from a fresh state). */
void ptts_codec_dec_reset(ptts_codec_dec *d);

/* The decoder's stages in order, for ptts_codec_taps.stage_s: quant_out and the upsampling,
 * the transformer, dec_in (with its ELU), up[0] (16 rows in, 96 out: the last low-rate stage),
 * then the high-rate ones: res[0], up[1], res[1], up[2], res[2], out (with its ELU). */
enum {
    PTTS_CDS_UPSAMPLE,
    PTTS_CDS_TRANSFORMER,
    PTTS_CDS_DEC_IN,
    PTTS_CDS_UP0,
    PTTS_CDS_RES0,
    PTTS_CDS_UP1,
    PTTS_CDS_RES1,
    PTTS_CDS_UP2,
    PTTS_CDS_RES2,
    PTTS_CDS_OUT,
    PTTS_CODEC_STAGES
};

/* Intermediate values of the last decoded frame, for tests (layouts as the fixture's taps):
 * quant [C] after the 1x1 conv, up [C, 16] after the upsampling, tr [C, 16] after the
 * transformer (channel-major, i.e. transposed from the internal [16, C]); and for benchmarks,
 * stage_s [PTTS_CODEC_STAGES]: wall seconds added to each stage's entry (10 clock reads a
 * frame; nothing when NULL). */
typedef struct ptts_codec_taps {
    float *quant, *up, *tr; /* caller's buffers, or NULL */
    double *stage_s;
} ptts_codec_taps;

/* One frame: latent [ld] as produced by the flow head (normalized; the decoder applies
 * latent * emb_std + emb_mean) -> pcm [frame_samples]. taps may be NULL. */
void ptts_codec_dec_frame(ptts_codec_dec *d, const ptts_ctx *c, const float *latent, float *pcm,
                          const ptts_codec_taps *taps);

/* Batched decoding: the frames of n streams (each its own ptts_codec_dec and state) at once,
 * bit-identical to ptts_codec_dec_frame on each. The low-rate part (quant_out, upsampling,
 * transformer, dec_in, up[0]: 16 rows a frame per stream, most of the decoder's weights) runs
 * every matrix once over all n streams' rows; the high-rate part (the SEANet stages from the
 * first residual block on, 96 .. 1920 rows) stays per stream, so callers may spread it over
 * threads. The workspace is sized at create for up to max_streams; nothing is allocated per
 * frame. */
typedef struct ptts_codec_batch ptts_codec_batch;
int ptts_codec_batch_create(ptts_codec_batch **out, const ptts_weights *w, int max_streams,
                            ptts_error *e);
void ptts_codec_batch_free(ptts_codec_batch *b);
int ptts_codec_batch_max(const ptts_codec_batch *b);
/* The low-rate part of one frame of each of d[0..n) (n <= max_streams, distinct decoders),
 * latents[i] [ld] as for ptts_codec_dec_frame; leaves each decoder ready for its high part. */
void ptts_codec_dec_frames_low(ptts_codec_batch *b, ptts_codec_dec *const *d, int n,
                               const ptts_ctx *c, const float *const *latents);
/* The rest of that frame for one decoder -> pcm [frame_samples]. */
void ptts_codec_dec_frame_high(ptts_codec_dec *d, const ptts_ctx *c, float *pcm);

/* Encoder: audio [n] at 24 kHz (zero-padded to a multiple of frame_samples) -> latents
 * [T, inner_dim] (T = ceil(n / frame_samples)), malloc'd in *latents. Memory is bounded by the
 * clip length (the transformer runs in blocks over a windowed cache). Optional taps
 * seanet/tr [C, T*16] channel-major (malloc'd by the callee when the pointers are non-NULL).
 * A model without encoder weights -> PTTS_E_UNSUPPORTED with an explanation. */
int ptts_codec_encode(const ptts_weights *w, const ptts_ctx *c, const float *audio, int64_t n,
                      float **latents, int *T, float **tap_seanet, float **tap_tr, ptts_error *e);

#endif
