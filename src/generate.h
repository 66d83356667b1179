/*
 * generate.h - internal views of a stream for tests and tools: the last step's latent and EOS
 * logit, and the text chunks of the current utterance.
 */
#ifndef PTTS_GENERATE_H
#define PTTS_GENERATE_H

#include "ptts.h"
#include "text.h"

struct ptts_engine_ops;

/* The speech frame the last ptts_stream_next returned (a pause's frame leaves it as it was). */
typedef struct ptts_step_record {
    int chunk, step;     /* its chunk (0-based) and step within the chunk (0 at bos_emb) */
    float eos;           /* the step's EOS logit */
    const float *latent; /* [ld] the step's latent, valid until the next call */
} ptts_step_record;

const ptts_step_record *ptts_stream_last_step(const ptts_stream *s);
/* The engine instance the stream runs on, and its operations (*ops): bench_pipeline reads the
 * CPU engine's times (engine.h) around its timed frames. */
void *ptts_stream_engine(const ptts_stream *s, const struct ptts_engine_ops **ops);
/* The chunks of the current utterance (valid until the next start). */
int ptts_stream_chunks(const ptts_stream *s, const ptts_chunk **chunks);
/* ptts_stream_start with the text already split: n chunks (copied; each needs model_text's ids
 * and guess), as a replay of the reference's chunks needs. */
int ptts_stream_start_chunks(ptts_stream *s, const ptts_voice *v, const ptts_chunk *chunks, int n,
                             const ptts_gen_options *o, ptts_error *e);

/* The device seconds one call of several utterances may take (default 0.05): at most
 * budget / (seconds a frame) frames a call, at least 1 (0: every such call one frame). */
void ptts_batch_set_call_budget(ptts_batch *b, double seconds);
/* The calls ptts_batch_step decoded since the batch was created, of them those whose decode
 * went with the next call's step (the engine's step_decode), and the decodes of joiners' first
 * frames apart from their call's (early, may be NULL): tests and benchmarks of the pairing
 * (batch_pair_k, batch_early). */
void ptts_batch_calls(const ptts_batch *b, long *decodes, long *paired, long *early);

#endif
