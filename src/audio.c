/*
 * audio.c - audio in: reading any format to mono float, resampling (contract in audio.h). The
 * WAV writer is the tools' (tools/wav.c).
 *
 * Reading: libsndfile decodes every container/codec the system build has (Debian's 1.2: WAV and
 * WAVEX with int16/24/32/float/double and the ADPCM/law codecs, W64, RF64, AIFF, CAF, FLAC,
 * OGG/Vorbis, OGG/Opus, MP3). Files and memory buffers share one path through sf_open_virtual,
 * so the checks are identical for uploads and local files. Before libsndfile sees any byte, the
 * first bytes must carry the magic of one of those containers (for MP3, after any ID3v2 tags, a
 * chain of valid MPEG frame headers): arbitrary uploads then only ever reach the parsers we mean
 * to support (libsndfile also probes raw/obscure formats, and hands anything MP3-like to
 * mpg123, which complains on stderr), and a text file or random bytes get a clear "not an audio
 * file" message. Frames are pulled in bounded
 * blocks and reading stops at max_seconds, so a long file is never decoded or held whole.
 * Channels are averaged in float, as the reference does (numpy mean over float32 samples).
 *
 * Resampling: exactly scipy.signal.resample_poly(x, up, down) with its default window
 * ('kaiser', 5.0) and zero padding. scipy designs h = firwin(2*H+1, 1/max(up,down)) (H = 10 *
 * max(up,down)): a windowed sinc whose taps are scaled to sum to 1, cast to the input's dtype
 * (float32 for the reference) and multiplied by `up` in that dtype. Its padding bookkeeping
 * (n_pre_pad = down - H % down, n_pre_remove = (H + n_pre_pad) / down) reduces to: output i is
 * the zero-stuffed input convolved with h, read at position i*down + H, i.e. the filter is
 * centred on the output sample. We evaluate only the nonzero taps (polyphase: for output i,
 * phase p = (i*down + H) mod up uses taps p, p+up, p+2up, ...), so the cost is about
 * n_out * (2H+1)/up multiply-adds. Products of two floats are exact in double and the sum is
 * kept in double, so the result is the correctly rounded value of the reference's definition;
 * the reference itself accumulates in float32 (differences ~1e-7 relative).
 */
#include "audio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sndfile.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Sample rates outside this range are treated as a corrupt header (the resampler's filter length
 * grows with the rate). */
#define AUDIO_MIN_RATE 1000
#define AUDIO_MAX_RATE 384000
/* Hard limit on decoded frames when the caller asks for everything (~12 h at 48 kHz). */
#define AUDIO_MAX_FRAMES ((int64_t)INT32_MAX)
/* Interleaved samples decoded per libsndfile call. */
#define AUDIO_BLOCK_SAMPLES 65536

/* ---------------------------------------------------------------------------------------------
 * Virtual I/O: one interface over a FILE* and over a memory buffer.
 */

typedef struct {
    FILE *f;                  /* file source, or NULL */
    sf_count_t flen;          /* file length */
    const unsigned char *buf; /* memory source */
    sf_count_t size, pos;
} vio_src;

static sf_count_t vio_len(void *u) {
    vio_src *s = u;
    return s->f ? s->flen : s->size;
}

static sf_count_t vio_seek(sf_count_t off, int whence, void *u) {
    vio_src *s = u;
    sf_count_t base;
    if (s->f) {
        if (fseeko(s->f, (off_t)off, whence) != 0) return -1;
        return (sf_count_t)ftello(s->f);
    }
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = s->pos; break;
    case SEEK_END: base = s->size; break;
    default: return -1;
    }
    if ((off < 0 && off < -base) || (off > 0 && off > INT64_MAX - base)) return -1;
    s->pos = base + off;
    return s->pos;
}

static sf_count_t vio_read(void *ptr, sf_count_t count, void *u) {
    vio_src *s = u;
    if (count <= 0) return 0;
    if (s->f) return (sf_count_t)fread(ptr, 1, (size_t)count, s->f);
    if (s->pos >= s->size) return 0;
    sf_count_t k = PTTS_MIN(count, s->size - s->pos);
    memcpy(ptr, s->buf + s->pos, (size_t)k);
    s->pos += k;
    return k;
}

static sf_count_t vio_write(const void *ptr, sf_count_t count, void *u) {
    (void)ptr;
    (void)count;
    (void)u;
    return 0; /* read-only */
}

static sf_count_t vio_tell(void *u) {
    vio_src *s = u;
    return s->f ? (sf_count_t)ftello(s->f) : s->pos;
}

/* Read up to `len` bytes at `off` without disturbing libsndfile (which has not started yet). */
static size_t src_peek(vio_src *s, int64_t off, unsigned char *buf, size_t len) {
    if (s->f) {
        if (off < 0 || off >= s->flen || fseeko(s->f, (off_t)off, SEEK_SET) != 0) return 0;
        return fread(buf, 1, len, s->f);
    }
    if (off < 0 || off >= s->size) return 0;
    size_t k = (size_t)PTTS_MIN((int64_t)len, s->size - off);
    memcpy(buf, s->buf + off, k);
    return k;
}

/* Length in bytes of the MPEG audio frame whose 4-byte header is `h`, or 0 when `h` is not a
 * valid header (reserved version/layer/rate, free-format or bad bitrate). */
static int64_t mpeg_frame_len(const unsigned char *h) {
    static const short br[5][15] = {
        {0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448}, /* v1 L1 */
        {0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},    /* v1 L2 */
        {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},     /* v1 L3 */
        {0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},    /* v2 L1 */
        {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},         /* v2 L2/L3 */
    };
    static const int sr[3] = {44100, 48000, 32000};
    if (h[0] != 0xFF || (h[1] & 0xE0) != 0xE0) return 0;
    int ver = (h[1] >> 3) & 3, layer = 4 - ((h[1] >> 1) & 3); /* ver: 0 2.5, 2 v2, 3 v1 */
    int bi = h[2] >> 4, si = (h[2] >> 2) & 3, pad = (h[2] >> 1) & 1;
    if (ver == 1 || layer == 4 || bi == 0 || bi == 15 || si == 3) return 0;
    int table = ver == 3 ? layer - 1 : (layer == 1 ? 3 : 4);
    int64_t bitrate = (int64_t)br[table][bi] * 1000;
    int64_t rate = sr[si] >> (ver == 3 ? 0 : ver == 2 ? 1 : 2);
    if (layer == 1) return (12 * bitrate / rate + pad) * 4;
    if (layer == 3 && ver != 3) return 72 * bitrate / rate + pad;
    return 144 * bitrate / rate + pad;
}

/* The containers we hand to libsndfile, recognised by their first bytes; NULL for anything
 * else. An MP3 stream must start (after any ID3v2 tags) with a chain of valid frame headers:
 * libsndfile passes other data to mpg123, which prints its complaints on stderr. */
static const char *sniff_source(vio_src *s) {
    unsigned char b[16];
    int64_t off = 0;
    for (int tags = 0; tags < 8; tags++) {
        size_t n = src_peek(s, off, b, sizeof b);
        if (off == 0) {
            if (n >= 12 &&
                (!memcmp(b, "RIFF", 4) || !memcmp(b, "RIFX", 4) || !memcmp(b, "RF64", 4) ||
                 !memcmp(b, "BW64", 4)) &&
                !memcmp(b + 8, "WAVE", 4))
                return "WAV";
            if (n >= 16 && !memcmp(b, "riff", 4)) return "W64";
            if (n >= 12 && !memcmp(b, "FORM", 4) &&
                (!memcmp(b + 8, "AIFF", 4) || !memcmp(b + 8, "AIFC", 4)))
                return "AIFF";
            if (n >= 8 && !memcmp(b, "caff", 4)) return "CAF";
            if (n >= 4 && !memcmp(b, "OggS", 4)) return "OGG";
        }
        if (n >= 4 && !memcmp(b, "fLaC", 4)) return "FLAC"; /* also behind an ID3 tag */
        if (n >= 10 && !memcmp(b, "ID3", 3)) {
            /* ID3v2: 10-byte header, syncsafe size, optional 10-byte footer */
            if ((b[6] | b[7] | b[8] | b[9]) & 0x80) return NULL;
            int64_t sz = (int64_t)b[6] << 21 | (int64_t)b[7] << 14 | (int64_t)b[8] << 7 | b[9];
            off += 10 + sz + ((b[5] & 0x10) ? 10 : 0);
            continue;
        }
        /* MPEG audio: 4 frame headers must chain, or 2 and then the end of the data */
        int64_t pos = off, total = s->f ? s->flen : s->size;
        for (int fr = 0; fr < 4; fr++) {
            unsigned char h[4];
            if (src_peek(s, pos, h, 4) < 4) return fr > 1 && pos >= total ? "MP3" : NULL;
            int64_t len = mpeg_frame_len(h);
            if (!len) return NULL;
            pos += len;
            if (fr > 0 && pos >= total) return "MP3";
        }
        return "MP3";
    }
    return NULL;
}

#define NOT_AUDIO "not an audio file (expected WAV, FLAC, OGG/Vorbis/Opus, MP3, AIFF or CAF)"

/* Decode at most `max_seconds` of an opened source into mono float. */
static int read_source(vio_src *src, const char *name, const char *kind, double max_seconds,
                       float **samples, int64_t *n, int *rate, ptts_error *e) {
    SF_VIRTUAL_IO io = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = sf_open_virtual(&io, SFM_READ, &info, src);
    if (!sf) {
        /* libsndfile's code for a failed open is process-global and, for virtual I/O, often
         * the unhelpful "not a regular file": name it only when it says something. */
        int code = sf_error(NULL);
        if (code == SF_ERR_UNSUPPORTED_ENCODING || code == SF_ERR_MALFORMED_FILE)
            return ptts_fail(e, PTTS_E_AUDIO, "%s: unreadable %s data (%s)", name, kind,
                             sf_error_number(code));
        return ptts_fail(e, PTTS_E_AUDIO, "%s: corrupt or unsupported %s data", name, kind);
    }
    float *out = NULL, *block = NULL;
    int rc = PTTS_OK;
    if (info.channels < 1 || info.channels > 1024) {
        rc = ptts_fail(e, PTTS_E_AUDIO, "%s: unusable channel count %d", name, info.channels);
        goto done;
    }
    if (info.samplerate < AUDIO_MIN_RATE || info.samplerate > AUDIO_MAX_RATE) {
        rc = ptts_fail(e, PTTS_E_AUDIO, "%s: implausible sample rate %d Hz (expected %d..%d)", name,
                       info.samplerate, AUDIO_MIN_RATE, AUDIO_MAX_RATE);
        goto done;
    }
    if (info.frames == 0) {
        rc = ptts_fail(e, PTTS_E_AUDIO, "%s: the file contains no audio frames", name);
        goto done;
    }
    const int ch = info.channels;
    int64_t want = AUDIO_MAX_FRAMES + 1; /* one more frame than allowed detects "too long" */
    if (max_seconds > 0) {
        double w = floor(max_seconds * info.samplerate);
        want = w < 1 ? 1 : w > (double)AUDIO_MAX_FRAMES ? AUDIO_MAX_FRAMES : (int64_t)w;
    }
    int64_t cap = want;
    if (info.frames > 0 && info.frames < cap) cap = info.frames;
    if (cap > ((int64_t)1 << 20)) cap = (int64_t)1 << 20; /* grow as data really arrives */
    const sf_count_t block_frames = PTTS_MAX(1, AUDIO_BLOCK_SAMPLES / ch);
    out = malloc((size_t)cap * sizeof *out);
    block = malloc((size_t)block_frames * (size_t)ch * sizeof *block);
    if (!out || !block) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory reading audio", name);
        goto done;
    }
    int64_t got = 0;
    while (got < want) {
        sf_count_t ask = (sf_count_t)PTTS_MIN((int64_t)block_frames, want - got);
        sf_count_t k = sf_readf_float(sf, block, ask);
        if (k <= 0) break;
        if (got + k > cap) {
            int64_t nc = PTTS_MIN(PTTS_MAX(cap * 2, got + k), want);
            float *t = realloc(out, (size_t)nc * sizeof *out);
            if (!t) {
                rc = ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory reading audio", name);
                goto done;
            }
            out = t;
            cap = nc;
        }
        for (sf_count_t i = 0; i < k; i++) {
            const float *fr = block + (size_t)i * (size_t)ch;
            float v;
            if (ch == 1) {
                v = fr[0];
            } else {
                float s = 0.0f;
                for (int c = 0; c < ch; c++)
                    s += fr[c];
                v = s / (float)ch;
            }
            if (!isfinite(v)) {
                rc = ptts_fail(e, PTTS_E_AUDIO, "%s: non-finite sample at frame %lld", name,
                               (long long)(got + i));
                goto done;
            }
            out[got + i] = v;
        }
        got += k;
    }
    int err = sf_error(sf);
    if (err != SF_ERR_NO_ERROR) {
        rc = ptts_fail(e, PTTS_E_AUDIO, "%s: decoding failed after %lld frames (%s)", name,
                       (long long)got, sf_error_number(err));
        goto done;
    }
    if (got > AUDIO_MAX_FRAMES) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "%s: longer than %lld frames; give a maximum duration",
                       name, (long long)AUDIO_MAX_FRAMES);
        goto done;
    }
    if (got == 0) {
        rc = ptts_fail(e, PTTS_E_AUDIO, "%s: the file contains no audio frames", name);
        goto done;
    }
    if (got < cap) {
        float *t = realloc(out, (size_t)got * sizeof *out);
        if (t) out = t;
    }
    *samples = out;
    *n = got;
    *rate = info.samplerate;
    out = NULL;
done:
    free(out);
    free(block);
    sf_close(sf);
    return rc;
}

static int check_out_args(float **samples, int64_t *n, int *rate, ptts_error *e) {
    if (!samples || !n || !rate) return ptts_fail(e, PTTS_E_INVALID, "audio read: NULL output");
    *samples = NULL;
    *n = 0;
    *rate = 0;
    return PTTS_OK;
}

int ptts_audio_read(const char *path, double max_seconds, float **samples, int64_t *n, int *rate,
                    ptts_error *e) {
    int rc = check_out_args(samples, n, rate, e);
    if (rc) return rc;
    if (!path) return ptts_fail(e, PTTS_E_INVALID, "audio read: NULL path");
    FILE *f = fopen(path, "rb");
    if (!f) return ptts_fail(e, PTTS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    const char *kind = NULL;
    if (fstat(fileno(f), &st) != 0) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: cannot stat: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: not a regular file", path);
    } else {
        vio_src src = {f, (sf_count_t)st.st_size, NULL, 0, 0};
        if (st.st_size == 0) {
            rc = ptts_fail(e, PTTS_E_AUDIO, "%s: empty file", path);
        } else if (!(kind = sniff_source(&src))) {
            rc = ferror(f) ? ptts_fail(e, PTTS_E_IO, "%s: read error: %s", path, strerror(errno))
                           : ptts_fail(e, PTTS_E_AUDIO, "%s: " NOT_AUDIO, path);
        } else if (fseeko(f, 0, SEEK_SET) != 0) {
            rc = ptts_fail(e, PTTS_E_IO, "%s: cannot seek: %s", path, strerror(errno));
        } else {
            rc = read_source(&src, path, kind, max_seconds, samples, n, rate, e);
        }
    }
    fclose(f);
    return rc;
}

int ptts_audio_read_memory(const void *buf, size_t size, double max_seconds, float **samples,
                           int64_t *n, int *rate, ptts_error *e) {
    int rc = check_out_args(samples, n, rate, e);
    if (rc) return rc;
    if (!buf && size) return ptts_fail(e, PTTS_E_INVALID, "audio read: NULL buffer");
    if (size == 0) return ptts_fail(e, PTTS_E_AUDIO, "audio upload: empty");
    if (size > (size_t)INT64_MAX) return ptts_fail(e, PTTS_E_AUDIO, "audio upload: too large");
    vio_src src = {NULL, 0, buf, (sf_count_t)size, 0};
    const char *kind = sniff_source(&src);
    if (!kind) return ptts_fail(e, PTTS_E_AUDIO, "audio upload: " NOT_AUDIO);
    return read_source(&src, "audio upload", kind, max_seconds, samples, n, rate, e);
}

/* ---------------------------------------------------------------------------------------------
 * Resampling.
 */

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Modified Bessel function of the first kind, order 0 (power series; |x| <= 5 here, where it
 * converges to full double precision in ~25 terms). */
static double bessel_i0(double x) {
    double sum = 1.0, term = 1.0, q = 0.25 * x * x;
    for (int k = 1; k < 200; k++) {
        term *= q / ((double)k * (double)k);
        sum += term;
        if (term < sum * 1e-17) break;
    }
    return sum;
}

/* Tap k of scipy's firwin(L, fc, window=('kaiser', 5.0)) before its unit-sum scaling: the ideal
 * low-pass fc * sinc(fc * m), m = k - (L-1)/2, times the symmetric Kaiser window (i0_beta is
 * bessel_i0(5.0), its normalisation). */
static double firwin_tap(int64_t k, int64_t L, double fc, double i0_beta) {
    const double alpha = 0.5 * (double)(L - 1), beta = 5.0;
    double m = (double)k - alpha;
    double x = fc * m;
    double sinc = x == 0.0 ? 1.0 : sin(M_PI * x) / (M_PI * x);
    double r = m / alpha;
    return fc * sinc * bessel_i0(beta * sqrt(fmax(0.0, 1.0 - r * r))) / i0_beta;
}

int ptts_resample(const float *in, int64_t n, int from_rate, int to_rate, float **out,
                  int64_t *n_out, ptts_error *e) {
    if (!out || !n_out) return ptts_fail(e, PTTS_E_INVALID, "resample: NULL output");
    *out = NULL;
    *n_out = 0;
    if (n < 0 || (n > 0 && !in)) return ptts_fail(e, PTTS_E_INVALID, "resample: bad input");
    if (from_rate <= 0 || to_rate <= 0 || from_rate > AUDIO_MAX_RATE || to_rate > AUDIO_MAX_RATE)
        return ptts_fail(e, PTTS_E_INVALID, "resample: unsupported rates %d -> %d Hz (1..%d)",
                         from_rate, to_rate, AUDIO_MAX_RATE);
    const int64_t g = gcd64(from_rate, to_rate);
    const int64_t up = to_rate / g, down = from_rate / g;
    /* ceil(n * up / down) without overflow: n < 2^63 / up is checked first. */
    if (n > INT64_MAX / (up > 0 ? up : 1) / 2)
        return ptts_fail(e, PTTS_E_NOMEM, "resample: input too long");
    const int64_t m = (n * up + down - 1) / down;
    float *y = malloc((size_t)(m > 0 ? m : 1) * sizeof *y);
    if (!y)
        return ptts_fail(e, PTTS_E_NOMEM, "resample: out of memory (%lld samples)", (long long)m);
    if (up == down) {
        if (n) memcpy(y, in, (size_t)n * sizeof *y);
        *out = y;
        *n_out = n;
        return PTTS_OK;
    }
    const int64_t max_rate = PTTS_MAX(up, down), half = 10 * max_rate, L = 2 * half + 1;
    /* Polyphase layout: phase p holds taps h[p], h[p+up], ... reversed, so that output i reads
     * a forward run of the input. cnt(p) = ceil((L - p) / up). */
    const int64_t maxcnt = (L + up - 1) / up;
    float *poly = malloc((size_t)(up * maxcnt) * sizeof *poly);
    if (!poly) {
        free(y);
        return ptts_fail(e, PTTS_E_NOMEM, "resample: out of memory (filter of %lld taps)",
                         (long long)L);
    }
    /* firwin scales the taps to sum to 1 (the taps are exactly symmetric: sum one half);
     * resample_poly then casts them to float32 and multiplies by `up` in float32. Each tap is
     * computed straight into its polyphase slot, so no full-length copy of h is ever held. */
    const double fc = 1.0 / (double)max_rate, i0b = bessel_i0(5.0);
    double sum = firwin_tap(half, L, fc, i0b);
    for (int64_t k = 0; k < half; k++)
        sum += 2.0 * firwin_tap(k, L, fc, i0b);
    const float fup = (float)up;
    for (int64_t p = 0; p < up; p++) {
        const int64_t cnt = (L - p + up - 1) / up;
        float *row = poly + p * maxcnt;
        for (int64_t j = 0; j < cnt; j++)
            row[cnt - 1 - j] = (float)(firwin_tap(p + j * up, L, fc, i0b) / sum) * fup;
    }
    /* Output i: t = i*down + half; y[i] = sum_j h[p + j*up] * x[base - j], p = t mod up,
     * base = t div up, over j with 0 <= j < cnt(p) and 0 <= base - j < n. In the reversed row,
     * tap index r = cnt-1-j pairs with x[base - cnt + 1 + r]. */
    for (int64_t i = 0; i < m; i++) {
        const int64_t t = i * down + half;
        const int64_t p = t % up, base = t / up;
        const int64_t cnt = (L - p + up - 1) / up;
        const float *row = poly + p * maxcnt;
        int64_t x0 = base - cnt + 1; /* input index of row[0] */
        int64_t r0 = 0, r1 = cnt;
        if (x0 < 0) r0 = -x0;
        if (base >= n) r1 = cnt - (base - n + 1);
        double acc = 0.0;
        for (int64_t r = r0; r < r1; r++)
            acc += (double)row[r] * (double)in[x0 + r];
        y[i] = (float)acc;
    }
    free(poly);
    *out = y;
    *n_out = m;
    return PTTS_OK;
}

/* ---- end_on_pause (MODEL.md 7.3) ---------------------------------------------------------- */

float ptts_linspace_f32(float start, float end, int n, int k) {
    if (n < 2) return start;
    const float step = (end - start) / (float)(n - 1);
    return k < n / 2 ? start + (float)k * step : end - (float)(n - 1 - k) * step;
}

/* 20 log10(rms + 1e-12) of w [len] in float32 (the sum of squares in double, then rounded: the
 * order of a float sum is the reference's library's business). */
static float frame_db(const float *w, int64_t len) {
    double sq = 0;
    for (int64_t i = 0; i < len; i++)
        sq += (double)(w[i] * w[i]);
    const float rms = sqrtf((float)(sq / (double)len));
    return 20.0f * log10f(rms + 1e-12f);
}

int ptts_end_on_pause(const float *w, int64_t n, int sample_rate, float **out, int64_t *n_out,
                      ptts_error *e) {
    *out = NULL;
    *n_out = 0;
    if (!w || n < 0 || sample_rate <= 0)
        return ptts_fail(e, PTTS_E_INVALID, "end_on_pause: bad arguments");
    const int64_t frame = PTTS_MAX((int64_t)1, (int64_t)(0.02 * sample_rate));
    const int64_t nfr = n / frame;
    const int64_t tail = nfr > 0 ? (int64_t)(0.08 * sample_rate) : 0;
    int64_t end = n;
    if (nfr > 0) {
        float top = -INFINITY;
        for (int64_t j = 0; j < nfr; j++)
            top = fmaxf(top, frame_db(w + j * frame, frame));
        for (int64_t j = 0; j < nfr; j++)
            if (frame_db(w + j * frame, frame) > top - 35.0f) end = (j + 1) * frame;
    }
    float *y = malloc((size_t)(end + tail) * sizeof *y + 1);
    if (!y) return ptts_fail(e, PTTS_E_NOMEM, "end_on_pause: out of memory");
    memcpy(y, w, (size_t)end * sizeof *y);
    if (nfr > 0) {
        const int64_t f = PTTS_MIN(frame, end);
        for (int64_t k = 0; k < f; k++)
            y[end - f + k] *= ptts_linspace_f32(1.f, 0.f, (int)f, (int)k);
        memset(y + end, 0, (size_t)tail * sizeof *y);
    }
    *out = y;
    *n_out = end + tail;
    return 0;
}
