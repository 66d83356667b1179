/*
 * utterance.h - one utterance of the generation loop (generate.c): its options with their
 * defaults, its text as chunks and pauses (whole or fed incrementally), the EOS rule over the
 * steps an engine computed, its noise and the chunk's fade-in. generate.c drives utterances in
 * the slots of an engine; nothing here calls the engine but utt_ready's begin_chunk.
 */
#ifndef PTTS_UTTERANCE_H
#define PTTS_UTTERANCE_H

#include "engine.h"
#include "model.h"
#include "noise.h"
#include "text_feed.h"

/* One utterance: text chunks and the pauses around them, position in them, EOS bookkeeping,
 * noise; with incremental text, the bytes fed that are not chunks yet. */
typedef struct utt {
    const ptts_voice *voice; /* NULL: no utterance */
    ptts_gen_options o;
    unsigned markup; /* markup.h flags */
    int64_t gap;     /* sentence_silence in samples */
    ptts_chunk *chunks;
    int64_t *pause; /* [n_chunks + 1]: zeros before chunk i, pause[n_chunks] after the last */
    int n_chunks, chunk;
    int pause_at;      /* pause[pause_at] is the next pause not begun */
    int64_t silence;   /* samples of the current pause still to emit */
    int chunks_before; /* incremental: chunks of earlier pieces (freed once spoken) */
    int incremental, waiting, had_items, text_failed;
    ptts_feed feed; /* incremental: the text not yet chunks */
    int frames_total, eos_missed;
    ptts_rng rng;
    int in_chunk, step, eos_step, F, max_gen;
    int noise_short; /* supplied noise ran out at a step the rule needed: 1 + its row index */
    int call_chunk, call_step0; /* chunk and first step of the last consumed call's frames */
} utt;

void utt_clear(utt *u);
/* A new utterance of text (utt_start), of text fed later (utt_start_incremental: utt_feed,
 * then chunks when generation needs them) or of chunks already split (utt_start_chunks,
 * copied); the options checked with their defaults filled in. On an error u is cleared. */
int utt_start(utt *u, const ptts_model *m, const ptts_voice *v, const char *text,
              const ptts_gen_options *opt, ptts_error *e);
int utt_start_incremental(utt *u, const ptts_model *m, const ptts_voice *v,
                          const ptts_gen_options *opt, ptts_error *e);
int utt_start_chunks(utt *u, const ptts_model *m, const ptts_voice *v, const ptts_chunk *chunks,
                     int n, const ptts_gen_options *opt, ptts_error *e);
/* Text for an incremental utterance (flush 1: a flush, 2: the end); PTTS_E_INVALID on any
 * other. */
int utt_feed(utt *u, const char *text, size_t len, int flush, ptts_error *e);

/* What utt_ready found. */
enum { UTT_DONE = 0, UTT_STEP = 1, UTT_SILENCE = 2, UTT_WAIT = 3 };
/* Make sure the utterance is inside a chunk (beginning the next one in the engine's slot), in
 * a pause or waiting for text. Returns UTT_STEP when there is a step to run, UTT_SILENCE when
 * u->silence samples of a pause come first, UTT_WAIT when incremental text must arrive first,
 * UTT_DONE when the utterance is complete, < 0 on error. */
int utt_ready(utt *u, const ptts_model *m, const ptts_engine_ops *ops, void *eng, int slot,
              ptts_error *e);
/* A chunk's step budget, max_gen_len = ceil((n_ids / 3 + 2) * 12.5) in double (MODEL.md 8.4). */
int utt_max_gen(int n_ids);
/* The steps a chunk of n_ids ids may compute in a batch whose calls take up to kmax frames:
 * max_gen_len, and the kmax - 1 past it that a call of the other utterances' k computes for one
 * that reaches max_gen_len inside it (batch_plan); the caches are sized for them. */
int utt_max_steps(int n_ids, int kmax);
/* The frames this utterance still wants, at most kmax (>= 1 when utt_ready said UTT_STEP). */
int utt_plan(const utt *u, int kmax);
/* The most frames u's next call should compute (the first chunk ramps 1, 2, 4, ... kmax). */
int utt_ramp(const utt *u, int kmax);
/* The k of u's next call when it can be computed with this call's decode, else 0; `running`:
 * another utterance of the call is past its ramp (neither the ramp nor u's first call holds u
 * back; the batch decides on first frames, batch_pair_k). */
int utt_pair_k(const utt *u, int emitted, int k, int kmax, int running);
/* After utt_consume: whether u has nothing after this call's frames (its chunk ended, and no
 * chunk, pause or streamed text follows), so that the next utt_ready says UTT_DONE. */
int utt_ends(const utt *u);
/* Noise for k steps [k][ld], remembering the generator after each draw (for the rewind). */
int utt_noise(utt *u, int ld, int k, float *noise, ptts_rng *after, ptts_error *e);
/* Apply the EOS rule and max_gen_len to k computed steps; returns how many frames to emit (a
 * prefix). */
int utt_consume(utt *u, int k, const float *eos, const ptts_rng *after);
/* The chunk's first samples faded in, in place on pcm [frame_samples] (MODEL.md 6). */
void utt_fade_in(float *pcm, int frame_samples);

#endif
