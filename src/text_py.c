/*
 * text_py.c - Python's str semantics for one character or a UTF-8 string, as text.c needs them
 * to reproduce the reference's prepare_text_prompt and split_into_best_sentences (MODEL.md 8).
 *
 * Map: the full-uppercase table -> the Digit table -> py_u8_next -> py_isspace / py_isdigit /
 * py_upper -> py_strip / py_word_count / py_last_char.
 *
 * Why each piece is built this way:
 * - Python's str.strip()/str.split() whitespace is "general category Zs, or bidirectional class
 *   WS, B or S" (Objects/unicodectype.c, Tools/unicode/makeunicodedata.py); utf8proc gives both
 *   properties, so the same set falls out (TAB..CR, 0x1C..0x1F, space, NEL, NBSP, U+1680,
 *   U+2000..200A, U+2028/2029, U+202F, U+205F, U+3000). re's \s is the same set.
 * - str.isupper() on one character is the Unicode "Uppercase" property (Lu plus Other_Uppercase).
 *   The Other_Uppercase characters (Roman numerals, circled/squared Latin capitals) are their own
 *   uppercase, so "not Lu -> replace by upper()" gives the same text; we test Lu only.
 * - str.upper() uses the full case mapping: utf8proc_toupper (the simple mapping) plus the
 *   unconditional multi-character mappings of SpecialCasing.txt (special_upper below: every code
 *   point whose Python upper() is longer than one character, e.g. U+00DF -> "SS").
 * - str.isdigit() is Numeric_Type Decimal (= category Nd) or Digit; utf8proc has no numeric
 *   type, so the 128 Digit code points (superscripts, subscripts, circled digits...) are listed
 *   in digit_ranges (the same list as CPython 3.11's unicodedata 14.0).
 * - Invalid UTF-8 bytes never reach Python; here each is kept as an opaque one-byte character
 *   with no property (not space, not upper-cased, not a digit, no table key), so nothing crashes
 *   and the bytes go on to the tokenizer, which handles them like SentencePiece.
 */
#include "text_py.h"

#include <utf8proc.h>

/* Unconditional multi-character uppercase mappings (SpecialCasing.txt, as CPython applies them in
 * str.upper()); sorted by code point. Unused trailing slots are 0. */
static const struct {
    uint32_t cp;
    uint32_t up[3];
} special_upper[] = {
    {0x00DF, {0x0053, 0x0053, 0x0000}}, {0x0149, {0x02BC, 0x004E, 0x0000}},
    {0x01F0, {0x004A, 0x030C, 0x0000}}, {0x0390, {0x0399, 0x0308, 0x0301}},
    {0x03B0, {0x03A5, 0x0308, 0x0301}}, {0x0587, {0x0535, 0x0552, 0x0000}},
    {0x1E96, {0x0048, 0x0331, 0x0000}}, {0x1E97, {0x0054, 0x0308, 0x0000}},
    {0x1E98, {0x0057, 0x030A, 0x0000}}, {0x1E99, {0x0059, 0x030A, 0x0000}},
    {0x1E9A, {0x0041, 0x02BE, 0x0000}}, {0x1F50, {0x03A5, 0x0313, 0x0000}},
    {0x1F52, {0x03A5, 0x0313, 0x0300}}, {0x1F54, {0x03A5, 0x0313, 0x0301}},
    {0x1F56, {0x03A5, 0x0313, 0x0342}}, {0x1F80, {0x1F08, 0x0399, 0x0000}},
    {0x1F81, {0x1F09, 0x0399, 0x0000}}, {0x1F82, {0x1F0A, 0x0399, 0x0000}},
    {0x1F83, {0x1F0B, 0x0399, 0x0000}}, {0x1F84, {0x1F0C, 0x0399, 0x0000}},
    {0x1F85, {0x1F0D, 0x0399, 0x0000}}, {0x1F86, {0x1F0E, 0x0399, 0x0000}},
    {0x1F87, {0x1F0F, 0x0399, 0x0000}}, {0x1F88, {0x1F08, 0x0399, 0x0000}},
    {0x1F89, {0x1F09, 0x0399, 0x0000}}, {0x1F8A, {0x1F0A, 0x0399, 0x0000}},
    {0x1F8B, {0x1F0B, 0x0399, 0x0000}}, {0x1F8C, {0x1F0C, 0x0399, 0x0000}},
    {0x1F8D, {0x1F0D, 0x0399, 0x0000}}, {0x1F8E, {0x1F0E, 0x0399, 0x0000}},
    {0x1F8F, {0x1F0F, 0x0399, 0x0000}}, {0x1F90, {0x1F28, 0x0399, 0x0000}},
    {0x1F91, {0x1F29, 0x0399, 0x0000}}, {0x1F92, {0x1F2A, 0x0399, 0x0000}},
    {0x1F93, {0x1F2B, 0x0399, 0x0000}}, {0x1F94, {0x1F2C, 0x0399, 0x0000}},
    {0x1F95, {0x1F2D, 0x0399, 0x0000}}, {0x1F96, {0x1F2E, 0x0399, 0x0000}},
    {0x1F97, {0x1F2F, 0x0399, 0x0000}}, {0x1F98, {0x1F28, 0x0399, 0x0000}},
    {0x1F99, {0x1F29, 0x0399, 0x0000}}, {0x1F9A, {0x1F2A, 0x0399, 0x0000}},
    {0x1F9B, {0x1F2B, 0x0399, 0x0000}}, {0x1F9C, {0x1F2C, 0x0399, 0x0000}},
    {0x1F9D, {0x1F2D, 0x0399, 0x0000}}, {0x1F9E, {0x1F2E, 0x0399, 0x0000}},
    {0x1F9F, {0x1F2F, 0x0399, 0x0000}}, {0x1FA0, {0x1F68, 0x0399, 0x0000}},
    {0x1FA1, {0x1F69, 0x0399, 0x0000}}, {0x1FA2, {0x1F6A, 0x0399, 0x0000}},
    {0x1FA3, {0x1F6B, 0x0399, 0x0000}}, {0x1FA4, {0x1F6C, 0x0399, 0x0000}},
    {0x1FA5, {0x1F6D, 0x0399, 0x0000}}, {0x1FA6, {0x1F6E, 0x0399, 0x0000}},
    {0x1FA7, {0x1F6F, 0x0399, 0x0000}}, {0x1FA8, {0x1F68, 0x0399, 0x0000}},
    {0x1FA9, {0x1F69, 0x0399, 0x0000}}, {0x1FAA, {0x1F6A, 0x0399, 0x0000}},
    {0x1FAB, {0x1F6B, 0x0399, 0x0000}}, {0x1FAC, {0x1F6C, 0x0399, 0x0000}},
    {0x1FAD, {0x1F6D, 0x0399, 0x0000}}, {0x1FAE, {0x1F6E, 0x0399, 0x0000}},
    {0x1FAF, {0x1F6F, 0x0399, 0x0000}}, {0x1FB2, {0x1FBA, 0x0399, 0x0000}},
    {0x1FB3, {0x0391, 0x0399, 0x0000}}, {0x1FB4, {0x0386, 0x0399, 0x0000}},
    {0x1FB6, {0x0391, 0x0342, 0x0000}}, {0x1FB7, {0x0391, 0x0342, 0x0399}},
    {0x1FBC, {0x0391, 0x0399, 0x0000}}, {0x1FC2, {0x1FCA, 0x0399, 0x0000}},
    {0x1FC3, {0x0397, 0x0399, 0x0000}}, {0x1FC4, {0x0389, 0x0399, 0x0000}},
    {0x1FC6, {0x0397, 0x0342, 0x0000}}, {0x1FC7, {0x0397, 0x0342, 0x0399}},
    {0x1FCC, {0x0397, 0x0399, 0x0000}}, {0x1FD2, {0x0399, 0x0308, 0x0300}},
    {0x1FD3, {0x0399, 0x0308, 0x0301}}, {0x1FD6, {0x0399, 0x0342, 0x0000}},
    {0x1FD7, {0x0399, 0x0308, 0x0342}}, {0x1FE2, {0x03A5, 0x0308, 0x0300}},
    {0x1FE3, {0x03A5, 0x0308, 0x0301}}, {0x1FE4, {0x03A1, 0x0313, 0x0000}},
    {0x1FE6, {0x03A5, 0x0342, 0x0000}}, {0x1FE7, {0x03A5, 0x0308, 0x0342}},
    {0x1FF2, {0x1FFA, 0x0399, 0x0000}}, {0x1FF3, {0x03A9, 0x0399, 0x0000}},
    {0x1FF4, {0x038F, 0x0399, 0x0000}}, {0x1FF6, {0x03A9, 0x0342, 0x0000}},
    {0x1FF7, {0x03A9, 0x0342, 0x0399}}, {0x1FFC, {0x03A9, 0x0399, 0x0000}},
    {0xFB00, {0x0046, 0x0046, 0x0000}}, {0xFB01, {0x0046, 0x0049, 0x0000}},
    {0xFB02, {0x0046, 0x004C, 0x0000}}, {0xFB03, {0x0046, 0x0046, 0x0049}},
    {0xFB04, {0x0046, 0x0046, 0x004C}}, {0xFB05, {0x0053, 0x0054, 0x0000}},
    {0xFB06, {0x0053, 0x0054, 0x0000}}, {0xFB13, {0x0544, 0x0546, 0x0000}},
    {0xFB14, {0x0544, 0x0535, 0x0000}}, {0xFB15, {0x0544, 0x053B, 0x0000}},
    {0xFB16, {0x054E, 0x0546, 0x0000}}, {0xFB17, {0x0544, 0x053D, 0x0000}},
};

/* Numeric_Type=Digit (inclusive ranges): the isdigit() characters outside Nd. */
static const uint32_t digit_ranges[][2] = {
    {0xB2, 0xB3},       {0xB9, 0xB9},       {0x1369, 0x1371},   {0x19DA, 0x19DA},
    {0x2070, 0x2070},   {0x2074, 0x2079},   {0x2080, 0x2089},   {0x2460, 0x2468},
    {0x2474, 0x247C},   {0x2488, 0x2490},   {0x24EA, 0x24EA},   {0x24F5, 0x24FD},
    {0x24FF, 0x24FF},   {0x2776, 0x277E},   {0x2780, 0x2788},   {0x278A, 0x2792},
    {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A},
};

/* Decode one character at s[i] (i < n): returns its byte length and sets *cp, or -1 in *cp for
 * an invalid byte (length 1). */
size_t py_u8_next(const char *s, size_t n, size_t i, int32_t *cp) {
    utf8proc_int32_t c;
    utf8proc_ssize_t len =
        utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
    if (len <= 0) {
        *cp = -1;
        return 1;
    }
    *cp = c;
    return (size_t)len;
}

int py_isspace(int32_t cp) {
    if (cp < 0) return 0;
    if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f);
    const utf8proc_property_t *p = utf8proc_get_property(cp);
    return p->category == UTF8PROC_CATEGORY_ZS || p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
           p->bidi_class == UTF8PROC_BIDI_CLASS_B || p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

int py_isdigit(int32_t cp) {
    if (cp < 0) return 0;
    if (cp < 0x80) return cp >= '0' && cp <= '9';
    if (utf8proc_category(cp) == UTF8PROC_CATEGORY_ND) return 1;
    for (size_t i = 0; i < sizeof digit_ranges / sizeof digit_ranges[0]; i++)
        if ((uint32_t)cp >= digit_ranges[i][0] && (uint32_t)cp <= digit_ranges[i][1]) return 1;
    return 0;
}

/* Python's str.upper() of one character, UTF-8 encoded into out (at most 12 bytes). */
size_t py_upper(int32_t cp, char *out) {
    size_t lo = 0, hi = sizeof special_upper / sizeof special_upper[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (special_upper[mid].cp < (uint32_t)cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < sizeof special_upper / sizeof special_upper[0] &&
        special_upper[lo].cp == (uint32_t)cp) {
        size_t k = 0;
        for (int j = 0; j < 3 && special_upper[lo].up[j]; j++)
            k += (size_t)utf8proc_encode_char((utf8proc_int32_t)special_upper[lo].up[j],
                                              (utf8proc_uint8_t *)out + k);
        return k;
    }
    return (size_t)utf8proc_encode_char(utf8proc_toupper(cp), (utf8proc_uint8_t *)out);
}

/* Python's str.strip(): the [*b, *end) byte range without leading/trailing whitespace. */
void py_strip(const char *s, size_t n, size_t *b, size_t *end) {
    size_t i = 0, first = n, last = n;
    while (i < n) {
        int32_t cp;
        size_t len = py_u8_next(s, n, i, &cp);
        if (!py_isspace(cp)) {
            if (first == n) first = i;
            last = i + len;
        }
        i += len;
    }
    if (first == n) {
        *b = *end = n;
        return;
    }
    *b = first;
    *end = last;
}

/* len(s.split()) */
size_t py_word_count(const char *s, size_t n) {
    size_t i = 0, words = 0;
    int in_word = 0;
    while (i < n) {
        int32_t cp;
        size_t len = py_u8_next(s, n, i, &cp);
        int sp = py_isspace(cp);
        if (!sp && !in_word) words++;
        in_word = !sp;
        i += len;
    }
    return words;
}

/* The code point of the last character of s[0..n), n > 0 (-1 when it is an invalid byte), and
 * its byte length in *len. */
int32_t py_last_char(const char *s, size_t n, size_t *len) {
    size_t start = n - 1;
    while (start > 0 && n - start < 4 && ((unsigned char)s[start] & 0xc0) == 0x80)
        start--;
    int32_t cp;
    size_t l = py_u8_next(s, n, start, &cp);
    if (start + l != n) {
        *len = 1;
        return -1;
    }
    *len = l;
    return cp;
}
