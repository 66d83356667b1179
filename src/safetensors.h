/*
 * safetensors.h - reading (safetensors.c) and writing (safetensors_write.c) safetensors files.
 *
 * Format: u64 little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets:
 * [begin, end]}, "__metadata__": {str: str}}, then the data section; offsets are relative to the
 * data section. The reader maps the file and validates everything before any tensor is touched:
 * header length within the file, JSON well formed (cJSON), known dtypes, shape product times the
 * dtype size equal to end - begin, offsets inside the data section and not overlapping, no
 * duplicate names. Every error names the file and, where there is one, the tensor.
 */
#ifndef PTTS_SAFETENSORS_H
#define PTTS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "half.h"

typedef enum {
    ST_F64,
    ST_F32,
    ST_F16,
    ST_BF16,
    ST_I64,
    ST_I32,
    ST_I16,
    ST_I8,
    ST_U8,
    ST_BOOL,
    ST_DTYPE_COUNT
} st_dtype;

#define ST_MAX_DIMS 8

typedef struct st_tensor {
    const char *name; /* NUL-terminated, owned by the st_file */
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    int64_t numel;       /* product of shape (1 for a 0-d tensor) */
    const uint8_t *data; /* inside the mapping; NOT necessarily aligned */
    size_t nbytes;
} st_tensor;

typedef struct st_file st_file;

/* Open and validate a file (mmap, read-only). */
int st_open(st_file **out, const char *path, ptts_error *e);
/* Validate a buffer in memory (not copied: it must outlive the st_file). `name` is used in
 * messages. Used by the fuzz target and by callers that already hold the bytes. */
int st_open_memory(st_file **out, const void *buf, size_t size, const char *name, ptts_error *e);
void st_close(st_file *f);

const char *st_path(const st_file *f);
int st_count(const st_file *f);
const st_tensor *st_at(const st_file *f, int i);              /* in file order of the header */
const st_tensor *st_find(const st_file *f, const char *name); /* NULL when absent */
/* A "__metadata__" value, or NULL. */
const char *st_metadata(const st_file *f, const char *key);

const char *st_dtype_name(st_dtype d); /* "F32", "BF16", ... */
size_t st_dtype_size(st_dtype d);

/* Convert a F32/BF16/F16 tensor to float32 (`dst` holds t->numel floats). BF16 and F16 are
 * widened exactly (F16 subnormals, inf and NaN included). Other dtypes: PTTS_E_UNSUPPORTED with a
 * message naming the file and the tensor. */
int st_to_f32(const st_file *f, const st_tensor *t, float *dst, ptts_error *e);
/* The whole tensor `name` of the file at `path` as float32 (F32/BF16/F16), malloc'd, with its
 * element count in *n (may be NULL); NULL with e filled when the file, the tensor or its dtype
 * does not do (PTTS_E_NOT_FOUND for a missing tensor). For tests, benches and tools. */
float *st_load_f32(const char *path, const char *name, size_t *n, ptts_error *e);
/* Read an integer tensor (I64/I32/I16/I8/U8) as int64 values. */
int st_to_i64(const st_file *f, const st_tensor *t, int64_t *dst, ptts_error *e);

/* Check that tensor `name` exists with exactly the given shape; message names both shapes:
 * "model.safetensors: tensor flow_lm.out_eos.weight has shape [2, 1024], expected [1, 1024]". */
int st_expect(const st_file *f, const char *name, int ndim, const int64_t *shape,
              const st_tensor **out, ptts_error *e);

/* The float conversions st_bf16_to_f32, st_f16_to_f32, st_f32_to_bf16 and st_f32_to_f16 are in
 * half.h (included here for the callers that always found them here). */

/* --- writer ---------------------------------------------------------------------------------
 * Tensors are written back to back in the given order (the reference reader refuses gaps), after
 * a header padded with spaces to a multiple of 8 bytes so the data section starts 8-byte aligned
 * in the file. Names must be unique, non-empty UTF-8; dtypes and shapes valid. The file is written
 * to "<path>.tmp.<pid>", fsynced and renamed over `path` when complete, so a failure never leaves
 * a partial file behind. */
typedef struct st_out_tensor {
    const char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const void *data; /* numel * dtype size bytes, little-endian */
} st_out_tensor;

/* meta: NULL or a NULL-terminated list of key, value, key, value, ..., NULL. */
int st_write(const char *path, const st_out_tensor *ts, int n, const char *const *meta,
             ptts_error *e);

#endif
