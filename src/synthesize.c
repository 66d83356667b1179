/*
 * synthesize.c - ptts_synthesize, the whole-utterance call: a stream pulled to its end, each frame
 * handed to the caller's callback (frames of PTTS_FRAME_SAMPLES samples, fewer for a pause's last
 * one). A thin wrapper over the public stream API, as DESIGN.md wants it.
 */
#include "common.h"

int ptts_synthesize(const ptts_model *m, const ptts_voice *v, const char *text,
                    const ptts_gen_options *o, ptts_audio_fn fn, void *user, ptts_error *e) {
    ptts_stream *s;
    int rc = ptts_stream_create(&s, m, e);
    if (rc) return rc;
    float *pcm = ptts_calloc_aligned(PTTS_FRAME_SAMPLES * sizeof(float));
    if (!pcm) {
        ptts_stream_free(s);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    rc = ptts_stream_start(s, v, text, o, e);
    while (!rc) {
        int n = ptts_stream_next(s, pcm, e);
        if (n < 0) {
            rc = n;
            break;
        }
        if (n == 0) break;
        if (fn && fn(user, pcm, n)) {
            rc = ptts_fail(e, PTTS_E_CANCELLED, "cancelled by the caller");
            break;
        }
    }
    ptts_free_aligned(pcm);
    ptts_stream_free(s);
    return rc;
}
