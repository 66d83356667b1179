/*
 * test_markup.c - the pause / SSML markup parser (src/markup.c): every rule of markup.h with the
 * exact segment list and sample counts, errors with their exact messages and byte offsets,
 * entity decoding, the flags (markup off, brackets only, SSML only, SSML document), invalid UTF-8
 * and NUL bytes passed through, segment offsets, and linear running time on 10 MB inputs and
 * 100k pauses.
 */
// ctest-label: unit
#include "markup.h"
#include "test.h"

/* The segments as one string: T(text) for a text segment, P(samples) for a pause. */
static char *render(const ptts_markup *m) {
    size_t cap = 64;
    for (size_t i = 0; i < m->n; i++)
        cap += m->segments[i].len + 32;
    char *r = malloc(cap);
    REQUIRE(r != NULL);
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        const ptts_segment *g = &m->segments[i];
        if (g->kind == PTTS_SEGMENT_TEXT) {
            r[k++] = 'T';
            r[k++] = '(';
            memcpy(r + k, g->text, g->len);
            k += g->len;
            r[k++] = ')';
        } else {
            k += (size_t)snprintf(r + k, cap - k, "P(%lld)", (long long)g->samples);
        }
    }
    r[k] = 0;
    return r;
}

/* Structural invariants of every successful parse (markup.h "Segments"): one check per parse. */
static void check_invariants(const ptts_markup *m, unsigned flags, size_t len) {
    size_t bad = 0;
    for (size_t i = 0; i < m->n; i++) {
        const ptts_segment *g = &m->segments[i];
        if (g->kind == PTTS_SEGMENT_TEXT)
            bad += !(g->text != NULL && g->text[g->len] == 0 && g->samples == 0);
        else
            bad += !(g->text == NULL && g->samples > 0);
        bad += g->offset > len;
        if (i > 0)
            bad += g->kind == m->segments[i - 1].kind || g->offset <= m->segments[i - 1].offset;
    }
    CHECKF(m->n >= 1 && bad == 0, "%zu segments, %zu bad", m->n, bad);
    if (!(flags & (PTTS_MARKUP_BRACKETS | PTTS_MARKUP_SSML))) CHECK(m->n == 1);
}

static void ok_len(const char *in, size_t len, unsigned flags, const char *want, int line) {
    ptts_markup *m = NULL;
    ptts_error e = {0};
    int rc = ptts_markup_parse(in, len, flags, &m, &e);
    CHECKF(rc == PTTS_OK, "line %d: %s", line, e.msg);
    if (rc != PTTS_OK) return;
    check_invariants(m, flags, len);
    char *got = render(m);
    CHECKF(strcmp(got, want) == 0, "line %d: got \"%s\", want \"%s\"", line, got, want);
    free(got);
    ptts_markup_free(m);
}
#define OK(in, want) ok_len(in, strlen(in), PTTS_MARKUP_ALL, want, __LINE__)
#define OKF(in, flags, want) ok_len(in, strlen(in), flags, want, __LINE__)

static void err(const char *in, unsigned flags, const char *want, int line) {
    ptts_markup *m = (ptts_markup *)1;
    ptts_error e = {0};
    int rc = ptts_markup_parse(in, strlen(in), flags, &m, &e);
    CHECKF(rc == PTTS_E_TEXT && e.code == PTTS_E_TEXT && m == NULL, "line %d: rc %d", line, rc);
    CHECKF(strcmp(e.msg, want) == 0, "line %d: got \"%s\", want \"%s\"", line, e.msg, want);
    if (rc == PTTS_OK) ptts_markup_free(m);
}
#define ERR(in, want) err(in, PTTS_MARKUP_ALL, want, __LINE__)

static void test_brackets(void) {
    OK("Hello [pause] world", "T(Hello )P(12000)T( world)");
    OK("[pause:1.5]", "P(36000)");
    OK("[pause:0.25]", "P(6000)");
    OK("[pause:0.1]", "P(2400)");
    OK("[pause:0.3]", "P(7200)");
    OK("[pause:0.35]", "P(8400)");
    OK("[pause:1.005]", "P(24120)");
    /* ten tenths are one second exactly (no float accumulation) */
    OK("[pause:0.1][pause:0.1][pause:0.1][pause:0.1][pause:0.1]"
       "[pause:0.1][pause:0.1][pause:0.1][pause:0.1][pause:0.1]",
       "P(24000)");
    OK("[pause:.5]", "P(12000)");
    OK("[pause:2]", "P(48000)");
    OK("[pause:002.500]", "P(60000)");
    OK("[pause: 1.5 ]", "P(36000)");
    OK("[pause\t:\t1\t]", "P(24000)");
    OK("[pause ]", "P(12000)");
    OK("[PAUSE] [Pause:1]", "P(36000)");
    OK("[pause:500ms]", "P(12000)");
    OK("[pause:1s]", "P(24000)");
    OK("[pause:1.25ms]", "P(30)");
    OK("[pause:10]", "P(240000)");
    OK("[pause:10.000000000000]", "P(240000)");
    OK("[pause:10000ms]", "P(240000)");
    /* 62.5 us is 1.5 samples: ties go up; 20 us is 0.48 sample: no pause, one text */
    OK("[pause:0.0000625]", "P(2)");
    OK("[pause:0.0000209]", "P(1)");
    OK("a[pause:0.00002]b", "T(ab)");
    OK("a[pause:0.000000001]b", "T(ab)");
    OK("a [pause:0] b", "T(a  b)");
    OK("[pauses] are [ok] ] [ [paus] [pause_x] [pause-y] [pause2]",
       "T([pauses] are [ok] ] [ [paus] [pause_x] [pause-y] [pause2])");
    OK("a [pause] [pause:1] b", "T(a )P(36000)T( b)");
    OK("a [pause][pause]", "T(a )P(24000)");
    OK("  [pause]  ", "P(12000)");
    OK(" x [pause]\n", "T( x )P(12000)");
    OK("[pause:10][pause:10]", "P(480000)");
    OK("a[pause]\xc2\xa0\xe3\x80\x80\t[pause]b", "T(a)P(24000)T(b)");
    OK("a[pause][pause:0]b", "T(a)P(12000)T(b)");
    OK("[pause]a[pause]b[pause]", "P(12000)T(a)P(12000)T(b)P(12000)");
    OK("", "T()");
    OK("   ", "T(   )");
    OK("no markup at all.", "T(no markup at all.)");
}

static void test_bracket_errors(void) {
    const char *num = "pause must be a number of seconds, as in [pause:1.5]";
    char want[256];
    snprintf(want, sizeof want, "markup at byte 0: [pause:]: %s", num);
    ERR("[pause:]", want);
    snprintf(want, sizeof want, "markup at byte 3: [pause:x]: %s", num);
    ERR("ab [pause:x] c", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:-1]: %s", num);
    ERR("[pause:-1]", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:+1]: %s", num);
    ERR("[pause:+1]", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:1e3]: %s", num);
    ERR("[pause:1e3]", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:1.]: %s", num);
    ERR("[pause:1.]", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:.]: %s", num);
    ERR("[pause:.]", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:1 .5]: %s", num);
    ERR("[pause:1 .5]", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:1.5h]: %s", num);
    ERR("[pause:1.5h]", want);
    snprintf(want, sizeof want, "markup at byte 0: [pause:1,5]: %s", num);
    ERR("[pause:1,5]", want);
    ERR("[pause:1.5", "markup at byte 0: [pause:1.5: [pause is not closed by ]");
    ERR("x [pause", "markup at byte 2: [pause: [pause is not closed by ]");
    ERR("x [pause:", "markup at byte 2: [pause:: [pause is not closed by ]");
    ERR("[pause,x]", "markup at byte 0: [pause,x]: expected ] or :seconds after [pause");
    ERR("[pause 1]", "markup at byte 0: [pause 1]: expected ] or :seconds after [pause");
    ERR("[pause:10.5]", "markup at byte 0: [pause:10.5]: a pause is at most 10 s");
    ERR("[pause:10.000000001]", "markup at byte 0: [pause:10.000000001]: a pause is at most 10 s");
    ERR("[pause:10001ms]", "markup at byte 0: [pause:10001ms]: a pause is at most 10 s");
    ERR("[pause:99999999999999999999999999]",
        "markup at byte 0: [pause:99999999999999999999999999]: a pause is at most 10 s");
    ERR("[pause:0.0000000001]",
        "markup at byte 0: [pause:0.0000000001]: a pause is given to the nanosecond at most");
    ERR("[pause:0.0000001ms]",
        "markup at byte 0: [pause:0.0000001ms]: a pause is given to the nanosecond at most");
    /* the snippet: cut at 48 bytes, control bytes and invalid UTF-8 shown as "?" */
    ERR("[pause:\xff\x01]",
        "markup at byte 0: [pause:??]: pause must be a number of seconds, as in [pause:1.5]");
    ERR("[pause:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20]",
        "markup at byte 0: [pause:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17...: pause must be a "
        "number of seconds, as in [pause:1.5]");
    ERR("\xc3\xa9t\xc3\xa9 [pause:\xc3\xa9]",
        "markup at byte 6: [pause:\xc3\xa9]: pause must be a number of seconds, as in [pause:1.5]");
}

static void test_break(void) {
    OK("Hello <break time=\"500ms\"/> world", "T(Hello )P(12000)T( world)");
    OK("<break time=\"2s\"/>", "P(48000)");
    OK("<break time=\"1.5s\"/>", "P(36000)");
    OK("<break time='100ms'/>", "P(2400)");
    OK("<break time=\".5s\"/>", "P(12000)");
    OK("<break time=\"0.5ms\"/>", "P(12)");
    OK("a<break   time =  ' 250ms '   />b", "T(a)P(6000)T(b)");
    OK("a<break\ntime=\"1s\"\n/>b", "T(a)P(24000)T(b)");
    OK("<break time=\"1s\"></break>", "P(24000)");
    OK("<BREAK TIME=\"1S\"/>", "P(24000)");
    OK("<break time=\"10s\"/>", "P(240000)");
    OK("a<break strength=\"none\"/>b", "T(ab)");
    OK("<break strength=\"x-weak\"/>", "P(2400)");
    OK("<break strength=\"weak\"/>", "P(6000)");
    OK("<break strength=\"medium\"/>", "P(12000)");
    OK("<break strength=\"strong\"/>", "P(18000)");
    OK("<break strength=\"x-strong\"/>", "P(30000)");
    OK("<break/>", "P(12000)");
    OK("<break />", "P(12000)");
    OK("<break>", "P(12000)");
    OK("<break strength=\"x-strong\" time=\"100ms\"/>", "P(2400)");
    OK("<break time=\"100ms\" strength=\"bogus-but-ignored\"/>", "P(2400)");
    OK("<break time=\"1&#115;\"/>", "P(24000)");
    OK("<break xml:lang=\"en\" foo='bar'/>", "P(12000)");
    OK("a <break/> [pause] <break time=\"1s\"/> b", "T(a )P(48000)T( b)");
}

static void test_break_errors(void) {
    ERR("I will pause now <break time=\"abc\"/>",
        "markup at byte 17: <break time=\"abc\"/>: time must be a number followed by s or ms");
    ERR("<break time=\"5\"/>",
        "markup at byte 0: <break time=\"5\"/>: time must be a number followed by s or ms");
    ERR("<break time=\"\"/>",
        "markup at byte 0: <break time=\"\"/>: time must be a number followed by s or ms");
    ERR("<break time=\"-1s\"/>",
        "markup at byte 0: <break time=\"-1s\"/>: time must be a number followed by s or ms");
    ERR("<break time=\"11s\"/>",
        "markup at byte 0: <break time=\"11s\"/>: a pause is at most 10 s");
    ERR("<break time=\"1.0000000001s\"/>", "markup at byte 0: <break time=\"1.0000000001s\"/>: a "
                                           "pause is given to the nanosecond at most");
    ERR("<break strength=\"loud\"/>",
        "markup at byte 0: <break strength=\"loud\"/>: strength must be none, x-weak, weak, "
        "medium, strong or x-strong");
    ERR("x <break time=\"1s\"", "markup at byte 2: <break time=\"1s\": tag is not closed by >");
    ERR("a <b", "markup at byte 2: <b: tag is not closed by >");
    ERR("<break time=1s/>", "markup at byte 0: <break time=1s/>: attribute value must be quoted");
    ERR("<break time=\"1s/>",
        "markup at byte 0: <break time=\"1s/>: attribute quote is not closed");
    ERR("<break time/>", "markup at byte 0: <break time/>: attribute without =\"value\"");
    ERR("<break time=\"1s\"strength=\"weak\"/>",
        "markup at byte 0: <break time=\"1s\"strength=\"weak\"/>: expected an attribute, > or />");
    ERR("<break / >", "markup at byte 0: <break / >: expected > after /");
    ERR("</speak x>", "markup at byte 0: </speak x>: expected an attribute, > or />");
    ERR("a </ b>", "markup at byte 2: </ b>: expected a tag name");
    ERR("<break time=\"&bogus;\"/>",
        "markup at byte 13: &bogus;: unknown entity (write & as &amp;)");
}

static void test_tags(void) {
    OK("<speak>Hello <p>world</p><s>x</s></speak>", "T(Hello worldx)");
    OK("<prosody rate=\"slow\">a</prosody><emphasis level=\"strong\">b</emphasis>"
       "<say-as interpret-as=\"digits\">12</say-as><voice name=\"x\">c</voice>"
       "<foo bar='1'>d</foo><lang xml:lang=\"fr\">e</lang><audio src=\"x.wav\"/>f",
       "T(ab12cdef)");
    OK("<sub alias=\"World Wide Web\">WWW</sub> site", "T(World Wide Web site)");
    OK("<sub alias=\"AT&amp;T\"/> is", "T(AT&T is)");
    OK("<sub alias=\"x\">a<break/>b</sub >c", "T(xc)");
    OK("<sub alias=\"x\">a</su></b></sub>c", "T(xc)");
    OK("<sub>WWW</sub>", "T(WWW)");
    OK("a<!-- c [pause] <break/> -->b", "T(ab)");
    OK("a<!---->b", "T(ab)");
    OK("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<speak>x</speak>", "T(\nx)");
    OK("<!DOCTYPE speak PUBLIC \"-//W3C//DTD SYNTHESIS 1.0//EN\" \"s.dtd\">x", "T(x)");
    OK("<!DOCTYPE speak [<!ENTITY a \"b\">]>x", "T(x)");
    OK("<speak><![CDATA[a<b&c [pause]]]></speak>", "T(a<b&c [pause])");
    OK("a < b, x<3, a <= b, 1<2>0 and a<", "T(a < b, x<3, a <= b, 1<2>0 and a<)");
    OK("a > b", "T(a > b)");
    ERR("<!-- x", "markup at byte 0: <!-- x: comment is not closed by -->");
    ERR("<?xml", "markup at byte 0: <?xml: <? is not closed by ?>");
    ERR("<![CDATA[x", "markup at byte 0: <![CDATA[x: CDATA is not closed by ]]>");
    ERR("<!DOCTYPE x", "markup at byte 0: <!DOCTYPE x: <!DOCTYPE is not closed by >");
    ERR("<!DOCTYPE x [", "markup at byte 0: <!DOCTYPE x [: <!DOCTYPE is not closed by ]>");
    ERR("<!ELEMENT x>", "markup at byte 0: <!ELEMENT x>: unknown <! declaration");
    ERR("a <sub alias=\"x\">y",
        "markup at byte 2: <sub alias=\"x\">: <sub> is not closed by </sub>");
}

static void test_entities(void) {
    /* &#X (capital) is no character reference in XML */
    ERR("<speak>&#X20AC;</speak>", "markup at byte 7: &#X20AC;: unknown entity (write & as &amp;)");
    OK("<speak>Tom &amp; Jerry &lt;3 &gt; &quot;q&quot; &apos;s &#65;&#x42;&#x20ac;"
       "&#128512;&#9;&#0000065;&#x10FFFF;</speak>",
       "T(Tom & Jerry <3 > \"q\" 's AB\xe2\x82\xac\xf0\x9f\x98\x80\tA\xf4\x8f\xbf\xbf)");
    OK("AT&T &amp; &#65; <break/> x", "T(AT&T &amp; &#65; )P(12000)T( x)");
    OK("<speak>&lt;</speak> &amp; <speak><speak>&amp;</speak>&amp;</speak>&amp;",
       "T(< &amp; &&&amp;)");
    OKF("Tom &amp; Jerry", PTTS_MARKUP_ALL | PTTS_MARKUP_SSML_DOCUMENT, "T(Tom & Jerry)");
    OKF("Tom &amp; Jerry", PTTS_MARKUP_BRACKETS | PTTS_MARKUP_SSML_DOCUMENT, "T(Tom &amp; Jerry)");
    OK("<speak>&lt;break/&gt;</speak>", "T(<break/>)");
    ERR("<speak>AT&T</speak>", "markup at byte 9: &T: unknown entity (write & as &amp;)");
    ERR("<speak>a & b</speak>", "markup at byte 9: &: unknown entity (write & as &amp;)");
    ERR("<speak>&nbsp;</speak>", "markup at byte 7: &nbsp;: unknown entity (write & as &amp;)");
    ERR("<speak>&#;</speak>", "markup at byte 7: &#;: unknown entity (write & as &amp;)");
    ERR("<speak>&#x;</speak>", "markup at byte 7: &#x;: unknown entity (write & as &amp;)");
    ERR("<speak>&#12a;</speak>", "markup at byte 7: &#12a;: unknown entity (write & as &amp;)");
    ERR("<speak>&amp", "markup at byte 7: &amp: unknown entity (write & as &amp;)");
    ERR("<speak>&0123456789012345678901234567890123456789;",
        "markup at byte 7: &0123456789012345678901234567890: unknown entity (write & as &amp;)");
    const char *bad = "character reference outside XML's characters";
    const char *refs[] = {
        "&#0;",     "&#x0;",    "&#1;",     "&#x1F;",     "&#xD800;",
        "&#xDFFF;", "&#xFFFE;", "&#xFFFF;", "&#x110000;", "&#99999999999999999999;"};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        char in[64], want[160];
        snprintf(in, sizeof in, "<speak>%s</speak>", refs[i]);
        snprintf(want, sizeof want, "markup at byte 7: %s: %s", refs[i], bad);
        err(in, PTTS_MARKUP_ALL, want, __LINE__);
    }
}

static void test_flags(void) {
    const char *in = "a [pause] <break/> &amp; <speak>&amp;</speak> [pause:x] <b";
    char want[128];
    snprintf(want, sizeof want, "T(%s)", in);
    OKF(in, 0, want);
    OKF(in, PTTS_MARKUP_SSML_DOCUMENT, want);
    OKF("", 0, "T()");
    OKF("  ", 0, "T(  )");
    OKF("[pause]<break/>&amp;", PTTS_MARKUP_BRACKETS, "P(12000)T(<break/>&amp;)");
    OKF("[pause]<break/><speak>&amp;</speak>", PTTS_MARKUP_SSML, "T([pause])P(12000)T(&)");
    OKF("[pause:x] <break/>", PTTS_MARKUP_SSML, "T([pause:x] )P(12000)");
    err("[pause:x]", PTTS_MARKUP_BRACKETS,
        "markup at byte 0: [pause:x]: pause must be a number of seconds, as in [pause:1.5]",
        __LINE__);
    err("<b", PTTS_MARKUP_SSML, "markup at byte 0: <b: tag is not closed by >", __LINE__);

    ptts_markup *m = NULL;
    ptts_error e = {0};
    CHECK(ptts_markup_parse("x", 1, PTTS_MARKUP_ALL, NULL, &e) == PTTS_E_INVALID);
    CHECK(ptts_markup_parse(NULL, 1, PTTS_MARKUP_ALL, &m, &e) == PTTS_E_INVALID && m == NULL);
    CHECK(ptts_markup_parse(NULL, 0, PTTS_MARKUP_ALL, &m, &e) == PTTS_OK && m && m->n == 1 &&
          m->segments[0].len == 0);
    ptts_markup_free(m);
    ptts_markup_free(NULL);
    CHECK(ptts_markup_parse("[pause:x]", 9, PTTS_MARKUP_ALL, &m, NULL) == PTTS_E_TEXT && !m);
}

/* Invalid UTF-8 and NUL bytes pass through; offsets point into the input. */
static void test_bytes_and_offsets(void) {
    OK("\xff\xfe [pause] \xc3", "T(\xff\xfe )P(12000)T( \xc3)");
    OK("\xed\xa0\x80<s>\xc0\xaf</s>", "T(\xed\xa0\x80\xc0\xaf)");
    ptts_markup *m = NULL;
    ptts_error e = {0};
    const char nul[] = "a\0b[pause]\0";
    REQUIRE(ptts_markup_parse(nul, sizeof nul - 1, PTTS_MARKUP_ALL, &m, &e) == PTTS_OK);
    REQUIRE(m->n == 3);
    CHECK(m->segments[0].len == 3 && memcmp(m->segments[0].text, "a\0b", 4) == 0);
    CHECK(m->segments[2].len == 1 && m->segments[2].text[0] == 0);
    ptts_markup_free(m);

    const char *in = "<speak>Hi &amp; [pause] <break/> <s>you</s>[pause]";
    REQUIRE(ptts_markup_parse(in, strlen(in), PTTS_MARKUP_ALL, &m, &e) == PTTS_OK);
    REQUIRE(m->n == 4);
    CHECK(m->segments[0].offset == 7);  /* "Hi" */
    CHECK(m->segments[1].offset == 16); /* the first of the merged pauses */
    CHECK(m->segments[1].samples == 24000);
    CHECK(m->segments[2].offset == 32); /* the space before <s> */
    CHECK(strcmp(m->segments[2].text, " you") == 0);
    CHECK(m->segments[3].offset == 43 && m->segments[3].samples == 12000);
    ptts_markup_free(m);

    in = "a<sub alias=\"b\">c</sub>";
    REQUIRE(ptts_markup_parse(in, strlen(in), PTTS_MARKUP_ALL, &m, &e) == PTTS_OK);
    CHECK(m->n == 1 && m->segments[0].offset == 0 && strcmp(m->segments[0].text, "ab") == 0);
    ptts_markup_free(m);
    in = " [pause]<sub alias=\"b\">c</sub>";
    REQUIRE(ptts_markup_parse(in, strlen(in), PTTS_MARKUP_ALL, &m, &e) == PTTS_OK);
    CHECK(m->n == 2 && m->segments[1].offset == 8 && strcmp(m->segments[1].text, "b") == 0);
    ptts_markup_free(m);
}

static char *repeat(const char *unit, size_t total, size_t *len) {
    size_t ul = strlen(unit), reps = total / ul;
    char *s = malloc(reps * ul + 1);
    REQUIRE(s != NULL);
    for (size_t i = 0; i < reps; i++)
        memcpy(s + i * ul, unit, ul);
    s[reps * ul] = 0;
    *len = reps * ul;
    return s;
}

/* 10 MB inputs and 100k pauses, timed against an absolute bound: anything quadratic in bytes or
 * segments would take hours. Each case states its segment count and total pause samples. */
static void test_huge(void) {
    static const struct {
        const char *name, *unit;
        size_t total;
        int error;
    } kinds[] = {
        {"plain text", "It goes on for a while, with [brackets] and a < b. ", 10u << 20, 0},
        {"100k pauses", "word [pause:0.1] ", 1700000, 0},
        {"only pauses", "[pause]", 10u << 20, 0},
        {"short segments", "a<break/>", 10u << 20, 0},
        {"entities", "<speak>&amp;&#x20AC;</speak>", 10u << 20, 0},
        {"tags", "<s>x</s><prosody rate='slow'>y</prosody>", 10u << 20, 0},
        {"unclosed comment", "<!-- ", 10u << 20, 1},
        {"unclosed sub", "<sub alias='x'></su", 10u << 20, 1},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t len;
        char *s = repeat(kinds[k].unit, kinds[k].total, &len);
        size_t reps = len / strlen(kinds[k].unit);
        ptts_markup *m = NULL;
        ptts_error e = {0};
        double t0 = ptts_now();
        int rc = ptts_markup_parse(s, len, PTTS_MARKUP_ALL, &m, &e);
        double t = ptts_now() - t0;
        printf("huge (%s): %.1f MB, %zu segments: %.3f s\n", kinds[k].name, (double)len / 1e6,
               m ? m->n : 0, t);
        CHECKF(t < 5.0, "%s: %.3f s", kinds[k].name, t);
        if (kinds[k].error) {
            CHECK(rc == PTTS_E_TEXT && strstr(e.msg, "markup at byte 0: ") == e.msg);
        } else {
            CHECKF(rc == PTTS_OK, "%s: %s", kinds[k].name, e.msg);
        }
        if (rc == PTTS_OK) {
            check_invariants(m, PTTS_MARKUP_ALL, len);
            int64_t samples = 0;
            size_t text = 0, pauses = 0;
            for (size_t i = 0; i < m->n; i++) {
                samples += m->segments[i].samples;
                text += m->segments[i].len;
                pauses += m->segments[i].kind == PTTS_SEGMENT_PAUSE;
            }
            if (k == 0) CHECK(m->n == 1 && text == len);
            if (k == 1)
                CHECK(reps == 100000 && pauses == reps && m->n == 2 * reps &&
                      samples == 2400 * (int64_t)reps && text == 6 * reps - 1);
            if (k == 2) CHECK(m->n == 1 && samples == 12000 * (int64_t)reps);
            if (k == 3) CHECK(m->n == 2 * reps && samples == 12000 * (int64_t)reps);
            if (k == 4) CHECK(m->n == 1 && text == 4 * reps);
            if (k == 5) CHECK(m->n == 1 && text == 2 * reps);
        }
        ptts_markup_free(m);
        free(s);
    }
}

int main(void) {
    test_brackets();
    test_bracket_errors();
    test_break();
    test_break_errors();
    test_tags();
    test_entities();
    test_flags();
    test_bytes_and_offsets();
    test_huge();
    return test_summary();
}
