// ctest-label: unit
/*
 * test_server_audio.c - the server's encoders (tools/server/server_audio.c): FLAC takes samples
 * past [-1, 1] (the model's peaks) and clips them, streamed and whole, instead of failing the
 * write (libFLAC 1.4 refuses out-of-range blocks when libsndfile does not clip).
 */
#include <sndfile.h>
#include <unistd.h>

#include "server.h"
#include "test.h"

/* Encode 10 frames of a tone with peaks of +1.5 and -1.7 as FLAC; decode and check the peaks
 * came back clipped and the rest close to the input. */
static void flac_peaks(int streaming) {
    char err[256];
    srv_enc *e = NULL;
    REQUIRE(srv_enc_open(&e, FMT_FLAC, 1.0, streaming, err, sizeof err) == 0);
    enum { N = 10 * PTTS_FRAME_SAMPLES };
    static float x[N];
    for (int i = 0; i < N; i++)
        x[i] = 0.5f * sinf(0.01f * (float)i);
    x[3 * PTTS_FRAME_SAMPLES + 7] = 1.5f;
    x[6 * PTTS_FRAME_SAMPLES + 11] = -1.7f;
    char path[] = "/tmp/test_server_audio_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    int wrote_all = 1;
    for (int f = 0; f < 10; f++) {
        CHECKF(srv_enc_write(e, x + f * PTTS_FRAME_SAMPLES, PTTS_FRAME_SAMPLES) == 0,
               "streaming %d: frame %d", streaming, f);
        size_t n;
        const uint8_t *d = srv_enc_data(e, &n);
        if (n) wrote_all &= write(fd, d, n) == (ssize_t)n;
        srv_enc_consume(e, n);
    }
    CHECK(srv_enc_finish(e) == 0);
    size_t n;
    const uint8_t *d = srv_enc_data(e, &n);
    if (n) wrote_all &= write(fd, d, n) == (ssize_t)n;
    srv_enc_consume(e, n);
    srv_enc_free(e);
    close(fd);
    CHECK(wrote_all);
    SF_INFO in = {0};
    SNDFILE *sf = sf_open(path, SFM_READ, &in);
    CHECKF(sf != NULL, "streaming %d: the FLAC does not decode: %s", streaming, sf_strerror(NULL));
    if (sf) {
        static float y[N + 16];
        sf_count_t got = sf_readf_float(sf, y, N + 16);
        sf_close(sf);
        CHECKF(got == N, "streaming %d: %lld samples", streaming, (long long)got);
        CHECK(y[3 * PTTS_FRAME_SAMPLES + 7] > 0.999f && y[3 * PTTS_FRAME_SAMPLES + 7] <= 1.0f);
        CHECK(y[6 * PTTS_FRAME_SAMPLES + 11] < -0.999f && y[6 * PTTS_FRAME_SAMPLES + 11] >= -1.0f);
        double worst = 0;
        for (int i = 0; i < N && i < got; i++)
            if (fabsf(x[i]) <= 1.0f) worst = fmax(worst, fabs((double)y[i] - x[i]));
        CHECKF(worst < 1e-3, "streaming %d: largest error %g", streaming, worst);
    }
    unlink(path);
}

int main(void) {
    if (!srv_format_available(FMT_FLAC)) return test_skip("this libsndfile cannot write FLAC");
    flac_peaks(0);
    flac_peaks(1);
    return test_summary();
}
