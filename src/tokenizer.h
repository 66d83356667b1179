/*
 * tokenizer.h - the text tokenizer in C, two backends behind one type (MODEL.md section 9):
 * SentencePiece (a `.model`, ModelProto protobuf: precompiled character map, unigram Viterbi or
 * BPE, byte fallback, decoding exactly like the SentencePiece library 0.1.97) and Hugging Face
 * `tokenizer.json` (the Unigram subset Kyutai ships, encoded and decoded as MODEL.md 9.3 says).
 * The caller checks the vocabulary size against the config's n_bins.
 */
#ifndef PTTS_TOKENIZER_H
#define PTTS_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

typedef struct ptts_tokenizer ptts_tokenizer;

/* Loads a tokenizer file: tokenizer.json when the path, with any "@revision" suffix removed,
 * ends in ".json", else a SentencePiece .model. */
int ptts_tokenizer_load(ptts_tokenizer **out, const char *path, ptts_error *e);
/* As ptts_tokenizer_load with the config's lookup_table.tokenizer kind (MODEL.md 9.1):
 * "tokenizers" or "json" -> tokenizer.json; anything else, or NULL -> by the path's suffix. */
int ptts_tokenizer_load_kind(ptts_tokenizer **out, const char *path, const char *kind,
                             ptts_error *e);
/* From bytes in memory (copied as needed); `name` is used in messages. A .model: */
int ptts_tokenizer_load_memory(ptts_tokenizer **out, const void *buf, size_t size, const char *name,
                               ptts_error *e);
/* A tokenizer.json: */
int ptts_tokenizer_load_json_memory(ptts_tokenizer **out, const void *buf, size_t size,
                                    const char *name, ptts_error *e);
void ptts_tokenizer_free(ptts_tokenizer *t);

int ptts_tokenizer_vocab_size(const ptts_tokenizer *t);
/* The piece string of an id (NULL when out of range). */
const char *ptts_tokenizer_piece(const ptts_tokenizer *t, int id);

/* Encode `len` bytes of UTF-8 text (no BOS/EOS). On success *ids is a malloc'd array of *n ids
 * (free() it). Invalid UTF-8 never crashes (handled like the library does). */
int ptts_tokenizer_encode(const ptts_tokenizer *t, const char *text, size_t len, int **ids, int *n,
                          ptts_error *e);
/* As ptts_tokenizer_encode, and also the pieces as SentencePiece's EncodeAsPieces gives them (an
 * unknown piece is its normalized surface, e.g. "\xE2\x98\x83", not "<unk>"). *pieces is one
 * malloc'd block (free() it once): *n strings followed by a NULL pointer (a NUL byte of the
 * text, which some maps keep, ends its piece's C string early). */
int ptts_tokenizer_encode_pieces(const ptts_tokenizer *t, const char *text, size_t len, int **ids,
                                 char ***pieces, int *n, ptts_error *e);
/* Decode ids to a malloc'd NUL-terminated string (free() it), as SentencePiece's DecodeIds. */
int ptts_tokenizer_decode(const ptts_tokenizer *t, const int *ids, int n, char **text,
                          ptts_error *e);

/* Decode a part of an id sequence. With `continued` set the ids are decoded as if they followed
 * ids that took the decoder out of its start state (the word-start space of the first piece is
 * kept). When ptts_tokenizer_decode_is_local(t), decode(a + b) = decode(a) + decode_part(b, c)
 * with c from ptts_tokenizer_decode_continues(a), for every cut that does not split a run of
 * byte pieces: not between two ids for which ptts_tokenizer_in_byte_run holds. */
int ptts_tokenizer_decode_part(const ptts_tokenizer *t, const int *ids, int n, int continued,
                               char **text, ptts_error *e);
int ptts_tokenizer_decode_is_local(const ptts_tokenizer *t);
/* The `continued` to pass for ids[n:] after ids[:n]: whether the decoder has left its start
 * state (SentencePiece: decode(ids[:n]) is not empty; tokenizer.json: ids[:n] holds a token that
 * is not special). Once true it stays true for a longer prefix. */
int ptts_tokenizer_decode_continues(const ptts_tokenizer *t, const int *ids, int n, int *yes,
                                    ptts_error *e);
/* Whether an id can belong to a run of byte pieces <0xHH> that decoding reassembles: a byte
 * piece, or (tokenizer.json) a special token, which decoding skips (0 when out of range). */
int ptts_tokenizer_in_byte_run(const ptts_tokenizer *t, int id);

#endif
