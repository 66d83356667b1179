/*
 * server_gen.c - the generation thread of `pocket-tts serve`: a queue of requests, one
 * ptts_batch stepping every admitted request together, and a bounded ring of frames per request
 * (see server.h for the threading).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "util.h"

/* Initial ring size in frames; it doubles up to max_cap as a client falls behind. */
#define RING_START 16
/* How often connections parked in the queue are woken to look for a hang-up (seconds). */
#define QUEUE_SWEEP_S 0.5

srv_req *srv_req_new(srv *s, char *text, const ptts_voice *v, ptts_voice *owned) {
    srv_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->refs = 1;
    r->state = RQ_QUEUED;
    r->slot = -1;
    r->text = text;
    r->voice = v;
    r->owned_voice = owned;
    r->frame_samples = s->frame_samples;
    double frames = s->cfg.client_buffer_s * PTTS_SAMPLE_RATE / s->frame_samples;
    r->max_cap = frames < 2 ? 2 : frames > 1e6 ? 1000000 : (int)frames;
    r->t_start = tool_now();
    r->t_first = -1;
    pthread_cond_init(&r->cv, NULL);
    return r;
}

static void req_free(srv_req *r) {
    pthread_cond_destroy(&r->cv);
    free(r->text);
    free(r->ring);
    free(r->ring_len);
    ptts_voice_free(r->owned_voice);
    free(r);
}

/* Tell whoever waits on r that it moved (s->mu held): the threads in srv_req_pop-style waits
 * and a parked connection (its wake hook, used once). */
static void notify_locked(srv_req *r) {
    pthread_cond_broadcast(&r->cv);
    if (r->wake) {
        void (*wake)(void *) = r->wake;
        r->wake = NULL;
        wake(r->wake_arg);
    }
}

/* With s->mu held. */
static void unref_locked(srv_req *r) {
    if (--r->refs == 0) req_free(r);
}

void srv_req_unref(srv *s, srv_req *r) {
    if (!r) return;
    pthread_mutex_lock(&s->mu);
    unref_locked(r);
    pthread_mutex_unlock(&s->mu);
}

void srv_req_cancel(srv *s, srv_req *r) {
    pthread_mutex_lock(&s->mu);
    if (!r->cancel && (r->state == RQ_QUEUED || r->state == RQ_ACTIVE)) {
        r->cancel = 1;
        s->cancelled++;
        pthread_cond_signal(&s->gen_cv);
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&s->mu);
}

int srv_enqueue(srv *s, srv_req *r) {
    pthread_mutex_lock(&s->mu);
    /* The queue holds requests waiting for a slot. The generation thread admits only between
     * steps, so requests that arrive during a step sit in the queue although a slot is free for
     * them: count those free slots in, or a burst on an idle server gets 503s it should not. */
    if (s->stop || s->active + s->q_count >= s->cfg.max_concurrent + s->cfg.queue_len) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    r->refs++;
    r->next = NULL;
    if (s->q_tail)
        s->q_tail->next = r;
    else
        s->q_head = r;
    s->q_tail = r;
    s->q_count++;
    pthread_cond_signal(&s->gen_cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* End a request on the generation side (s->mu held): state, wake its reader, drop the ref. */
static void finish_locked(srv *s, srv_req *r, int state) {
    if (r->slot >= 0) {
        s->slot_req[r->slot] = NULL;
        s->active--;
        r->slot = -1;
    }
    if (r->state == RQ_QUEUED || r->state == RQ_ACTIVE) r->state = state;
    notify_locked(r);
    unref_locked(r);
}

/* A frame of n <= frame_samples samples into the ring (s->mu held). 0, or -1 when the client is
 * too far behind. */
static int ring_push(srv_req *r, const float *pcm, int n) {
    if (r->count == r->cap) {
        if (r->cap >= r->max_cap) return -1;
        int nc = r->cap ? TOOL_MIN(r->cap * 2, r->max_cap) : TOOL_MIN(RING_START, r->max_cap);
        float *nr = malloc((size_t)nc * r->frame_samples * sizeof(float));
        int *nl = malloc((size_t)nc * sizeof(int));
        if (!nr || !nl) {
            free(nr);
            free(nl);
            return -1;
        }
        for (int i = 0; i < r->count; i++) {
            const int j = (r->head + i) % r->cap;
            memcpy(nr + (size_t)i * r->frame_samples, r->ring + (size_t)j * r->frame_samples,
                   (size_t)r->frame_samples * sizeof(float));
            nl[i] = r->ring_len[j];
        }
        free(r->ring);
        free(r->ring_len);
        r->ring = nr;
        r->ring_len = nl;
        r->cap = nc;
        r->head = 0;
    }
    int at = (r->head + r->count) % r->cap;
    memcpy(r->ring + (size_t)at * r->frame_samples, pcm, (size_t)n * sizeof(float));
    r->ring_len[at] = n;
    r->count++;
    return 0;
}

static int on_frame(void *user, int slot, const float *pcm, int n) {
    srv *s = user;
    pthread_mutex_lock(&s->mu);
    srv_req *r = s->slot_req[slot];
    int stop = 0;
    if (!r) {
        stop = 1;
    } else if (!pcm) {
        if (n < 0) {
            r->err_code = n;
            snprintf(r->err, sizeof r->err, "generation failed: %s", ptts_strerror(n));
        }
        finish_locked(s, r, n < 0 ? RQ_FAILED : RQ_DONE);
    } else if (r->cancel) {
        finish_locked(s, r, RQ_DONE);
        stop = 1;
    } else if (n < 1 || n > r->frame_samples || ring_push(r, pcm, n)) {
        r->overflow = 1;
        s->overflows++;
        snprintf(r->err, sizeof r->err, "the client fell more than %.0f s of audio behind",
                 s->cfg.client_buffer_s);
        finish_locked(s, r, RQ_FAILED);
        stop = 1;
    } else {
        if (r->t_first < 0) {
            r->t_first = tool_now();
            s->ttfb_sum += r->t_first - r->t_start;
            s->ttfb_count++;
        }
        r->samples += n;
        s->audio_s += (double)n / PTTS_SAMPLE_RATE;
        s->frames_total++;
        notify_locked(r);
    }
    pthread_mutex_unlock(&s->mu);
    return stop;
}

static void *gen_main(void *arg) {
    srv *s = arg;
    ptts_error e = {0};
    double last_sweep = 0;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        /* cancelled requests leave their slots before the next step */
        for (int i = 0; i < s->cfg.max_concurrent; i++) {
            srv_req *r = s->slot_req[i];
            if (r && r->cancel) {
                ptts_batch_cancel(s->batch, i);
                finish_locked(s, r, RQ_DONE);
            }
        }
        /* admit queued requests into free slots */
        while (s->q_head && s->active < s->cfg.max_concurrent) {
            srv_req *r = s->q_head;
            s->q_head = r->next;
            if (!s->q_head) s->q_tail = NULL;
            s->q_count--;
            if (r->cancel) {
                finish_locked(s, r, RQ_DONE);
                continue;
            }
            int slot = ptts_batch_start(s->batch, r->voice, r->text, &s->cfg.go, &e);
            if (slot < 0) {
                r->err_code = slot;
                snprintf(r->err, sizeof r->err, "%s", e.msg);
                finish_locked(s, r, RQ_FAILED);
                continue;
            }
            r->slot = slot;
            r->state = RQ_ACTIVE;
            s->slot_req[slot] = r;
            s->active++;
            notify_locked(r);
        }
        /* a parked connection does not see its client leave: wake the queued ones now and
         * then to look (they park again when the client is still there) */
        double now = tool_now();
        if (s->q_head && now - last_sweep >= QUEUE_SWEEP_S) {
            last_sweep = now;
            for (srv_req *r = s->q_head; r; r = r->next)
                notify_locked(r);
        }
        if (s->active == 0) {
            pthread_cond_wait(&s->gen_cv, &s->mu);
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        double t0 = tool_now();
        int rc = ptts_batch_step(s->batch, on_frame, s, &e);
        double dt = tool_now() - t0;
        pthread_mutex_lock(&s->mu);
        s->busy_s += dt;
        if (rc < 0) {
            /* the batch itself failed: every active request ends with the error */
            for (int i = 0; i < s->cfg.max_concurrent; i++) {
                srv_req *r = s->slot_req[i];
                if (!r) continue;
                ptts_batch_cancel(s->batch, i);
                r->err_code = rc;
                snprintf(r->err, sizeof r->err, "%s", e.msg);
                finish_locked(s, r, RQ_FAILED);
            }
        }
    }
    /* shutting down: end everything */
    for (int i = 0; i < s->cfg.max_concurrent; i++) {
        srv_req *r = s->slot_req[i];
        if (!r) continue;
        ptts_batch_cancel(s->batch, i);
        snprintf(r->err, sizeof r->err, "the server is shutting down");
        finish_locked(s, r, RQ_FAILED);
    }
    while (s->q_head) {
        srv_req *r = s->q_head;
        s->q_head = r->next;
        s->q_count--;
        snprintf(r->err, sizeof r->err, "the server is shutting down");
        finish_locked(s, r, RQ_FAILED);
    }
    s->q_tail = NULL;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int srv_gen_start(srv *s, ptts_error *e) {
    s->slot_req = calloc((size_t)s->cfg.max_concurrent, sizeof *s->slot_req);
    if (!s->slot_req) return tool_fail(e, PTTS_E_NOMEM, "out of memory");
    int rc = ptts_batch_create(&s->batch, s->model, s->cfg.max_concurrent, e);
    if (rc) return rc;
    if (pthread_create(&s->gen_thread, NULL, gen_main, s)) {
        ptts_batch_free(s->batch);
        s->batch = NULL;
        return tool_fail(e, PTTS_E_NOMEM, "cannot start the generation thread");
    }
    return 0;
}

void srv_gen_stop(srv *s) {
    if (!s->batch) return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_signal(&s->gen_cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->gen_thread, NULL);
    ptts_batch_free(s->batch);
    s->batch = NULL;
    free(s->slot_req);
    s->slot_req = NULL;
}
