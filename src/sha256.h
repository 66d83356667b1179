/*
 * sha256.h - SHA-256 (FIPS 180-4), streaming. Used to check downloads against the hash the
 * Hugging Face hub publishes for LFS files and to name cached http(s) downloads.
 */
#ifndef PTTS_SHA256_H
#define PTTS_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ptts_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    size_t fill;
} ptts_sha256;

void ptts_sha256_init(ptts_sha256 *s);
void ptts_sha256_update(ptts_sha256 *s, const void *data, size_t n);
void ptts_sha256_final(ptts_sha256 *s, uint8_t out[32]);
/* Lowercase hex of the 32-byte digest of `data` into hex[65]. */
void ptts_sha256_hex(const void *data, size_t n, char hex[65]);
void ptts_sha256_to_hex(const uint8_t d[32], char hex[65]);

#endif
