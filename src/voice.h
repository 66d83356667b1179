/*
 * voice.h - voice states (MODEL.md section 7): the backbone KV cache after the voice prompt.
 *
 * File format (the reference's export-voice and the preset voices): safetensors with, for each
 * layer i, "transformer.layers.{i}.self_attn/cache" [2, 1, P, H, Dh] (keys after RoPE, then
 * values) and "transformer.layers.{i}.self_attn/offset" [1] int64 = P; older files carry
 * ".../current_end" (a tensor whose first dimension is P) instead of "offset"; 3.3 writes
 * ".../pad" [1] int64 = 0 too. F32/BF16/F16 caches are read; a missing or zero pad is accepted,
 * a non-zero one refused (PTTS_E_UNSUPPORTED). F32 cache, offset and pad = 0 are written, as
 * 3.3's export-voice does.
 */
#ifndef PTTS_VOICE_H
#define PTTS_VOICE_H

#include <stdint.h>

#include "common.h"

typedef struct ptts_voice_state {
    int layers, heads, dh; /* d = heads * dh */
    int positions;         /* P */
    float *k, *v;          /* [layers][P][d], 64-byte aligned */
    /* Unique per state made by ptts_voice_state_alloc (0: a state built elsewhere, e.g. on a
     * test's stack): a GPU engine keeps the caches it uploaded under it, so the contents must
     * not change once the state has been used. */
    uint64_t id;
} ptts_voice_state;

/* Allocate an empty state of the given size (contents zero). */
int ptts_voice_state_alloc(ptts_voice_state **out, int layers, int heads, int dh, int positions,
                           ptts_error *e);
void ptts_voice_state_free(ptts_voice_state *v);
int ptts_voice_state_clone(ptts_voice_state **out, const ptts_voice_state *v, ptts_error *e);

/* Load a voice-state file. layers/heads/dh > 0 are checked against the file (a voice whose
 * shape does not fit the model: PTTS_E_MODEL naming the tensor and both shapes). The offset
 * (or current_end) must agree with P (a cache longer than the offset: only the first `offset`
 * positions are used). */
int ptts_voice_state_load(ptts_voice_state **out, const char *path, int layers, int heads, int dh,
                          ptts_error *e);
int ptts_voice_state_load_memory(ptts_voice_state **out, const void *buf, size_t size,
                                 const char *name, int layers, int heads, int dh, ptts_error *e);
/* The most positions a voice cloned from `seconds` of audio holds (ptts_voice_from_samples):
 * the clip cut and resampled to at most ceil(seconds * 24000) samples, end_on_pause's 80 ms
 * of zeros after it, frames of frame_samples, and the BOS row where the model has one (30 s,
 * 1920-sample frames: 377). */
int ptts_voice_clone_positions(int frame_samples, double seconds);
/* Write the reference's 3.3 format (F32 cache, int64 offset, int64 pad = 0), atomically. */
int ptts_voice_state_save(const ptts_voice_state *v, const char *path, ptts_error *e);

#endif
