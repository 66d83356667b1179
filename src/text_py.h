/*
 * text_py.h - Python's str semantics on UTF-8 for text.c (MODEL.md section 8): whitespace
 * (str.isspace), isdigit, the full upper() mapping, strip() and len(split()).
 */
#ifndef PTTS_TEXT_PY_H
#define PTTS_TEXT_PY_H

#include <stddef.h>
#include <stdint.h>

/* Decode one character at s[i] (i < n): returns its byte length and sets *cp, or -1 in *cp for
 * an invalid byte (length 1). */
size_t py_u8_next(const char *s, size_t n, size_t i, int32_t *cp);
int py_isspace(int32_t cp);
int py_isdigit(int32_t cp);
/* Python's str.upper() of one character, UTF-8 encoded into out (at most 12 bytes). */
size_t py_upper(int32_t cp, char *out);
/* Python's str.strip(): the [*b, *end) byte range without leading/trailing whitespace. */
void py_strip(const char *s, size_t n, size_t *b, size_t *end);
/* len(s.split()) */
size_t py_word_count(const char *s, size_t n);
/* The code point of the last character of s[0..n), n > 0 (-1 when it is an invalid byte), and
 * its byte length in *len. */
int32_t py_last_char(const char *s, size_t n, size_t *len);

#endif
