/*
 * tokenizer.h - SentencePiece in C: reads a `.model` (ModelProto protobuf), normalizes text with
 * the precompiled character map, encodes with unigram (Viterbi) or BPE, byte fallback, and
 * decodes ids back to text exactly like the SentencePiece library (0.1.97).
 */
#ifndef PTTS_TOKENIZER_H
#define PTTS_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

typedef struct ptts_tokenizer ptts_tokenizer;

int ptts_tokenizer_load(ptts_tokenizer **out, const char *path, ptts_error *e);
/* From bytes in memory (copied as needed); `name` is used in messages. */
int ptts_tokenizer_load_memory(ptts_tokenizer **out, const void *buf, size_t size,
                               const char *name, ptts_error *e);
void ptts_tokenizer_free(ptts_tokenizer *t);

int ptts_tokenizer_vocab_size(const ptts_tokenizer *t);
/* The piece string of an id (NULL when out of range). */
const char *ptts_tokenizer_piece(const ptts_tokenizer *t, int id);

/* Encode `len` bytes of UTF-8 text (no BOS/EOS). On success *ids is a malloc'd array of *n ids
 * (free() it). Invalid UTF-8 never crashes (handled like the library does). */
int ptts_tokenizer_encode(const ptts_tokenizer *t, const char *text, size_t len, int **ids,
                          int *n, ptts_error *e);
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
 * non-empty text (the word-start space of the first piece is kept). When
 * ptts_tokenizer_decode_is_local(t), decode(a + b) = decode(a) + decode_part(b, decode(a) != "")
 * for every cut that does not split a run of byte pieces (ptts_tokenizer_is_byte). */
int ptts_tokenizer_decode_part(const ptts_tokenizer *t, const int *ids, int n, int continued,
                               char **text, ptts_error *e);
int ptts_tokenizer_decode_is_local(const ptts_tokenizer *t);
/* Whether an id is a byte piece <0xHH> (0 when out of range). */
int ptts_tokenizer_is_byte(const ptts_tokenizer *t, int id);

#endif
