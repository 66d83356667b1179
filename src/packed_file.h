/*
 * packed_file.h - the converted weights file ("PTTSPACK", `pocket-tts convert`): the arrays
 * that loading a checkpoint builds (int8 rows and their scales, bf16 matrices, f32 and bf16
 * panels, repacked convolutions), written once so that a later load maps them (mmap) instead of
 * converting and packing. The results are those of the checkpoint loaded with the same
 * precision, to the bit: the file holds the very bytes the load built.
 *
 * Layout (little-endian; all offsets from the file's start):
 *   0   "PTTSPACK"                       8 bytes
 *   8   u32 format version (1)
 *   12  u32 precision (PTTS_PRECISION_*)
 *   16  u64 size of this file            (a truncated or extended file is refused)
 *   24  u64 size of the source checkpoint
 *   32  SHA-256 of the source checkpoint 32 bytes
 *   64  u32 n_arch: ints of ptts_arch that follow (a build with another ptts_arch refuses it)
 *   68  u32 n_entries
 *   72  u64 offset of the first array
 *   80  u32 0x01020304                   (byte order)
 *   84  12 zero bytes
 *   96  i32 arch[n_arch]
 *   then n_entries x {u64 offset, u64 bytes}: one per array field of ptts_weights, in the fixed
 *   order of the walk in packed_file.c (bytes 0: NULL); each array 64-byte aligned.
 * The integers of the structures (matrix sizes, kernel sizes, strides) are not stored: they are
 * rebuilt from the architecture by the same binding as a checkpoint's (weights.c), and every
 * array's size must be the one they imply.
 */
#ifndef PTTS_PACKED_FILE_H
#define PTTS_PACKED_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "weights.h"

#define PTTS_PACKED_MAGIC "PTTSPACK"
#define PTTS_PACKED_VERSION 1u

/* Whether the file at path starts with the converted file's magic (0 when unreadable). */
int ptts_packed_is(const char *path);
/* Write w (loaded from src_path in `mode`) to out_path: under a temporary name, renamed when
 * complete. Hashes src_path (its size and SHA-256 go into the header). */
int ptts_packed_write(const ptts_weights *w, ptts_wmode mode, const char *src_path,
                      const char *out_path, ptts_error *e);
/* Map a converted file (read-only) and bind its arrays. o->mode other than F32 must be the
 * file's precision (F32, the default, takes the file's). Errors name the file. */
int ptts_packed_load(ptts_weights **out, const char *path, const ptts_weights_options *o,
                     ptts_error *e);
/* The same over bytes in memory (the fuzzer): the weights point into buf, which must outlive
 * them. `name` prefixes the errors. */
int ptts_packed_load_memory(ptts_weights **out, const void *buf, size_t size, const char *name,
                            const ptts_weights_options *o, ptts_error *e);
#endif
