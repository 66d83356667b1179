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

/* Intermediate values of the last decoded frame, for tests (layouts as the fixture's taps):
 * quant [C] after the 1x1 conv, up [C, 16] after the upsampling, tr [C, 16] after the
 * transformer (channel-major, i.e. transposed from the internal [16, C]). */
typedef struct ptts_codec_taps {
    float *quant, *up, *tr; /* caller's buffers, or NULL */
} ptts_codec_taps;

/* One frame: latent [ld] as produced by the flow head (normalized; the decoder applies
 * latent * emb_std + emb_mean) -> pcm [frame_samples]. taps may be NULL. */
void ptts_codec_dec_frame(ptts_codec_dec *d, const ptts_ctx *c, const float *latent, float *pcm,
                          const ptts_codec_taps *taps);

/* Encoder: audio [n] at 24 kHz (zero-padded to a multiple of frame_samples) -> latents
 * [T, inner_dim] (T = ceil(n / frame_samples)), malloc'd in *latents. Memory is bounded by the
 * clip length (the transformer runs in blocks over a windowed cache). Optional taps
 * seanet/tr [C, T*16] channel-major (malloc'd by the callee when the pointers are non-NULL).
 * A model without encoder weights -> PTTS_E_UNSUPPORTED with an explanation. */
int ptts_codec_encode(const ptts_weights *w, const ptts_ctx *c, const float *audio, int64_t n,
                      float **latents, int *T, float **tap_seanet, float **tap_tr, ptts_error *e);

#endif
