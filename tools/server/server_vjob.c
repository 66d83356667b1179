/*
 * server_vjob.c - voices that take a while, off libmicrohttpd's polling threads: the clone of
 * an uploaded clip, or the first load of a voice (a preset or URL download, up to
 * --voice-url-timeout), on a thread of its own while the request's connection is suspended;
 * the thread resumes the connection when done (see server.h).
 */
#include <microhttpd.h>
#include <stdio.h>

#include "server.h"

static void *vjob_main(void *arg) {
    srv_vjob *j = arg;
    srv *s = j->s;
    if (j->wav) {
        ptts_error e = {0};
        int rc = ptts_voice_from_audio_memory(&j->owned, s->model, j->wav, j->wav_len,
                                              PTTS_VOICE_CLONE_SECONDS, &e);
        if (rc) {
            snprintf(j->detail, j->dcap, "voice_wav: %s", e.msg);
            j->status = rc == PTTS_E_NOMEM ? 500 : 400;
            snprintf(j->msg, sizeof j->msg, "%s",
                     rc == PTTS_E_NOMEM ? "out of memory"
                     : rc == PTTS_E_UNSUPPORTED
                         ? "voice_wav: this server's model cannot clone voices"
                         : "voice_wav: not usable audio (not an audio file "
                           "this server reads, shorter than 80 ms, or silent)");
        }
        j->v = j->owned;
    } else {
        j->status =
            (unsigned)srv_voice_get(s, j->name, &j->v, j->msg, sizeof j->msg, j->detail, j->dcap);
    }
    pthread_mutex_lock(&s->mu);
    j->done = 1;
    MHD_resume_connection(j->c); /* j belongs to the connection's handler from here */
    s->voice_jobs--;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

void srv_vjob_start(srv *s, struct MHD_Connection *c, srv_vjob *j) {
    j->s = s;
    j->c = c;
    pthread_attr_t at;
    pthread_t t;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&s->mu); /* the thread's resume comes after the suspend */
    MHD_suspend_connection(c);
    s->voice_jobs++;
    if (s->voice_jobs > SRV_VJOBS_MAX || pthread_create(&t, &at, vjob_main, j)) {
        s->voice_jobs--;
        j->done = 1;
        j->status = 503;
        snprintf(j->msg, sizeof j->msg, "too many voices are being loaded; retry later");
        MHD_resume_connection(c);
    }
    pthread_mutex_unlock(&s->mu);
    pthread_attr_destroy(&at);
}
