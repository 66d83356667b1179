/*
 * audio.h - audio in: any file libsndfile reads -> mono float; the reference's resample_poly to
 * 24 kHz. (The WAV writer of the tools is tools/wav.h.)
 */
#ifndef PTTS_AUDIO_H
#define PTTS_AUDIO_H

#include <stdint.h>
#include <stdio.h>

#include "common.h"

/* Read an audio file (WAV of any sample format, FLAC, OGG/Vorbis, Opus, MP3 where libsndfile
 * has it), average channels to mono. At most `max_seconds` of the input are read (<= 0: all);
 * a long file is never loaded whole. *samples is malloc'd (free()), *n its length, *rate the
 * file's sample rate. Not audio / empty -> PTTS_E_AUDIO with a clear message. */
int ptts_audio_read(const char *path, double max_seconds, float **samples, int64_t *n, int *rate,
                    ptts_error *e);
/* Same from bytes in memory (uploads). */
int ptts_audio_read_memory(const void *buf, size_t size, double max_seconds, float **samples,
                           int64_t *n, int *rate, ptts_error *e);

/* scipy.signal.resample_poly(x, up, down) with up/down = to_rate/from_rate reduced by their
 * gcd: polyphase FIR, Kaiser window (beta 5.0), half-length 10*max(up, down) taps per side,
 * zero-padded edges; output length ceil(n * up / down). *out is malloc'd (free()). Same rate:
 * a copy. */
int ptts_resample(const float *in, int64_t n, int from_rate, int to_rate, float **out,
                  int64_t *n_out, ptts_error *e);

/* end_on_pause (MODEL.md 7.3, 3.3's cloning prompts): with 20 ms frames (480 samples at 24 kHz)
 * cut w [n] after the last frame within 35 dB of the loudest (the tail shorter than a frame goes
 * too), fade the last frame out with linspace(1, 0, 480) and append 80 ms of zeros. Float32 as
 * the reference. A clip shorter than one frame is returned unchanged. *out is malloc'd
 * (free()), *n_out its length. */
int ptts_end_on_pause(const float *w, int64_t n, int sample_rate, float **out, int64_t *n_out,
                      ptts_error *e);

/* Element k of torch's float32 linspace(start, end, n) (endpoints included; n < 2: start): with
 * step = (end - start) / (n - 1) in float, start + k * step for k < n / 2, else
 * end - (n - 1 - k) * step (the CPU kernel's two halves). MODEL.md 6 and 7.3. */
float ptts_linspace_f32(float start, float end, int n, int k);

#endif
