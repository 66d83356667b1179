/*
 * markup.h - pauses and SSML in input text: a parse of UTF-8 text into an ordered list of
 * segments, each a piece of text to speak or a pause of an exact number of samples at 24 kHz.
 * The stage runs before text preparation (text.h): the generation loop prepares and splits each
 * text segment into its own chunks, and emits exactly `samples` zero samples for a pause, so a
 * pause always ends the chunk before it and a fresh chunk starts after it.
 *
 * Bracket markup (PTTS_MARKUP_BRACKETS):
 *   [pause]          0.5 s
 *   [pause:S]        S seconds: digits with an optional fraction ("2", "1.5", ".25"), no sign,
 *                    no exponent, optionally followed by "s" or "ms" ("[pause:500ms]"); spaces
 *                    or tabs may surround S. "pause" is matched in any ASCII case.
 *   "[" not followed by "pause" is text, and so is "[pause" followed by a letter, digit, "_"
 *   or "-" ("[pauses]" is a word); any other "[pause..." that does not match the two forms
 *   above ("[pause:]", "[pause:x]", "[pause" at the end) is an error.
 *
 * SSML markup (PTTS_MARKUP_SSML):
 *   <break time="T"/>        T: a number as above followed by "s" or "ms" ("500ms", "1.5s"),
 *                            surrounding spaces allowed; single or double quotes.
 *   <break strength="X"/>    none 0 s, x-weak 0.1 s, weak 0.25 s, medium 0.5 s, strong 0.75 s,
 *                            x-strong 1.25 s.
 *   <break/>                 medium (0.5 s). time wins over strength when both are given; other
 *                            attributes are ignored; <break ...></break> is the same pause (any
 *                            closing tag is removed).
 *   <sub alias="A">C</sub>   A replaces C (C is skipped, tags in it included); without alias the
 *                            content is kept like any other tag's.
 *   Every other tag, known (<speak>, <p>, <s>, <prosody>, <emphasis>, <say-as>, <voice>, ...) or
 *   not, opening, closing or self-closing, is removed and its content kept; nothing replaces a
 *   removed tag (no space is inserted). Tag balance is not checked. <!-- comments -->, <?xml ...?>
 *   and other processing instructions, and <!DOCTYPE ...> are removed; <![CDATA[...]]> keeps its
 *   content verbatim.
 *   A "<" starts markup only when the next byte is an ASCII letter, "/", "!" or "?": "a < b",
 *   "x<3", "<=" and a "<" at the end are text, while "a <b" with no ">" after it and "</ x>"
 *   are errors (an unclosed tag, a missing tag name).
 *   Entity references &amp; &lt; &gt; &quot; &apos; &#N; &#xH; are decoded in attribute values,
 *   and in text inside a <speak> element or everywhere with PTTS_MARKUP_SSML_DOCUMENT (the caller
 *   declares the whole text SSML, e.g. a request with text_format "ssml"). Elsewhere "&" is text
 *   ("AT&T"). Where entities are decoded, an "&" that does not begin one of them, or a character
 *   reference outside XML's characters (NUL, surrogates, other C0 controls than tab, LF and CR,
 *   U+FFFE, U+FFFF, beyond U+10FFFF) is an error.
 *
 * Durations: a written pause is parsed as an exact count of nanoseconds (at most 9 decimals for
 * seconds, 6 for milliseconds; trailing zeros do not count) and converted with
 * samples = round(ns * 24000 / 1e9), ties rounded up, in integer arithmetic: 0.1 s is 2400
 * samples exactly. Every written pause is at most 10 s; a longer one is an error (never
 * clamped). A pause of 0 samples ("[pause:0]", strength="none") is no pause: the text around it
 * stays one segment. Adjacent pauses (nothing or only whitespace between them) add up into one
 * segment: each written pause is checked against 10 s, their sum is not (the writer asked for
 * each of them).
 *
 * Segments: text is kept byte for byte except for the markup removed (invalid UTF-8 and any other
 * bytes pass through unchanged: refusing them is the caller's job). Text segments that are empty
 * or only whitespace (Python's str.isspace) are dropped, except that a text without any pause
 * gives exactly one text segment, whatever it holds, so that the caller's preparation refuses an
 * empty text with its usual message. A pause at the very start or end is kept. Two text segments
 * are never adjacent, nor are two pauses.
 *
 * Errors: PTTS_E_TEXT with "markup at byte B: SNIPPET: reason", B the 0-based byte offset of the
 * "[", "<" or "&" that starts the faulty markup, SNIPPET that markup (cut at 48 bytes and then
 * "...", control characters and invalid UTF-8 shown as "?"), e.g.
 *   markup at byte 17: <break time="abc"/>: time must be a number followed by s or ms
 * PTTS_E_NOMEM when memory runs out, PTTS_E_INVALID for a NULL argument.
 * Running time and memory are linear in the input length.
 */
#ifndef PTTS_MARKUP_H
#define PTTS_MARKUP_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#define PTTS_MARKUP_SAMPLE_RATE 24000
#define PTTS_MARKUP_MAX_PAUSE_SAMPLES (10 * PTTS_MARKUP_SAMPLE_RATE) /* per written pause */

/* Flags of ptts_markup_parse: PTTS_MARKUP_BRACKETS, PTTS_MARKUP_SSML and
 * PTTS_MARKUP_SSML_DOCUMENT of ptts.h (the public options name them); 0 turns markup off: the
 * whole text is one literal text segment (brackets and tags spoken as written). */
#define PTTS_MARKUP_ALL (PTTS_MARKUP_BRACKETS | PTTS_MARKUP_SSML) /* what plain text input gets */

typedef enum ptts_segment_kind { PTTS_SEGMENT_TEXT, PTTS_SEGMENT_PAUSE } ptts_segment_kind;

typedef struct ptts_segment {
    ptts_segment_kind kind;
    const char *text; /* TEXT: `len` bytes plus a NUL, owned by the ptts_markup; PAUSE: NULL */
    size_t len;       /* TEXT: byte length (the input's NUL bytes, if any, are kept in it) */
    int64_t samples;  /* PAUSE: samples of silence at 24 kHz, > 0; TEXT: 0 */
    size_t offset;    /* byte offset in the input of the segment's first byte or markup */
} ptts_segment;

typedef struct ptts_markup {
    ptts_segment *segments; /* n >= 1 on success */
    size_t n;
    char *text; /* storage of every text segment */
} ptts_markup;

/* Parse text[0..len) with `flags`; on success *out is a new ptts_markup (free it with
 * ptts_markup_free). On error *out is NULL and e holds the message. */
int ptts_markup_parse(const char *text, size_t len, unsigned flags, ptts_markup **out,
                      ptts_error *e);
void ptts_markup_free(ptts_markup *m);

#endif
