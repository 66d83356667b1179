/*
 * wav.h - the tools' WAV writer: the 16-bit mono PCM WAV the reference writes, to a file
 * (atomically) or a stream.
 */
#ifndef PTTS_TOOLS_WAV_H
#define PTTS_TOOLS_WAV_H

#include <stdint.h>
#include <stdio.h>

#include "ptts.h"

/* Streaming 16-bit mono WAV writer. Samples are clamped to [-1, 1], scaled by 32767 and
 * truncated toward zero (the reference's conversion). To a file: written to a temporary name,
 * the header patched with the true length and the file renamed at close; on abort the
 * temporary is removed (no partial file). To a pipe/stdout (path "-"): a header with an
 * oversized length (as the reference does), data flushed frame by frame. */
typedef struct wav_writer wav_writer;
int wav_open(wav_writer **out, const char *path, int sample_rate, ptts_error *e);
/* Write to an already-open stream (never patched: the header says "oversized length"). */
int wav_open_stream(wav_writer **out, FILE *f, int sample_rate, ptts_error *e);
int wav_write(wav_writer *w, const float *samples, int64_t n, ptts_error *e);
/* Finish: (file) patch the header, rename into place. Frees w. */
int wav_close(wav_writer *w, ptts_error *e);
/* Give up: remove the temporary file. Frees w. NULL is a no-op. */
void wav_abort(wav_writer *w);

/* One sample as the writer stores it (the conversion above); for raw s16le output. */
int16_t wav_sample(float x);

/* The 44-byte header for a mono 16-bit stream of `n_samples` (UINT32_MAX-ish when unknown). */
void wav_header(uint8_t out[44], int sample_rate, int64_t n_samples);

#endif
