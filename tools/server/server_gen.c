/*
 * server_gen.c - the generation thread of `pocket-tts serve`: a queue of requests, one
 * ptts_batch stepping every admitted request together, and a bounded ring of frames per request
 * (see server.h for the threading).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    r->t_admit = -1;
    r->go = s->cfg.go;
    pthread_cond_init(&r->cv, NULL);
    return r;
}

srv_req *srv_req_new_incremental(srv *s, const ptts_voice *v, ptts_voice *owned) {
    srv_req *r = srv_req_new(s, NULL, v, owned);
    if (r) r->incremental = 1;
    return r;
}

int srv_req_feed(srv *s, srv_req *r, const char *text, size_t len, int flush, int end) {
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    if (r->input_ended || r->cancel || r->state == RQ_DONE || r->state == RQ_FAILED) {
        rc = SRV_FEED_ENDED;
    } else if (r->feed_len + len > PTTS_FEED_MAX_BYTES || (flush && r->n_flush == SRV_FLUSH_MAX)) {
        rc = SRV_FEED_FULL;
    } else {
        if (r->feed_len + len + 1 > r->feed_cap) {
            size_t cap =
                r->feed_cap * 2 > r->feed_len + len + 1 ? r->feed_cap * 2 : r->feed_len + len + 1;
            char *nf = realloc(r->feed, cap);
            if (!nf) {
                pthread_mutex_unlock(&s->mu);
                return SRV_FEED_FULL;
            }
            r->feed = nf;
            r->feed_cap = cap;
        }
        if (len) memcpy(r->feed + r->feed_len, text, len);
        r->feed_len += len;
        if (flush) r->flush_at[r->n_flush++] = r->feed_len;
        if (end) r->feed_end = r->input_ended = 1;
        if (len || flush || end) {
            s->feeds_pending = 1;
            pthread_cond_signal(&s->gen_cv);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int srv_req_pop(srv *s, srv_req *r, float *out, int max_frames, int wait_ms) {
    pthread_mutex_lock(&s->mu);
    if (r->count == 0 && wait_ms > 0 && (r->state == RQ_QUEUED || r->state == RQ_ACTIVE) &&
        !r->cancel) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += wait_ms / 1000;
        ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        while (r->count == 0 && (r->state == RQ_QUEUED || r->state == RQ_ACTIVE) && !r->cancel)
            if (pthread_cond_timedwait(&r->cv, &s->mu, &ts)) break;
    }
    int n = 0;
    for (int got = 0; r->count > 0 && got < max_frames; got++) {
        const int len = r->ring_len[r->head];
        memcpy(out + n, r->ring + (size_t)r->head * r->frame_samples, (size_t)len * sizeof(float));
        n += len;
        r->head = (r->head + 1) % r->cap;
        r->count--;
    }
    if (n == 0 && r->state == RQ_DONE && !r->cancel)
        n = SRV_POP_DONE;
    else if (n == 0 && (r->state == RQ_FAILED || r->cancel || r->state == RQ_DONE))
        n = SRV_POP_FAILED;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void req_free(srv_req *r) {
    pthread_cond_destroy(&r->cv);
    free(r->text);
    free(r->ring);
    free(r->ring_len);
    free(r->feed);
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

/* Hand each active incremental request's queued text, flushes and end to the batch (s->mu
 * held). Text the batch cannot take yet (its own bound) stays queued for the next step. */
static void hand_feeds_locked(srv *s) {
    s->feeds_pending = 0;
    for (int i = 0; i < s->cfg.max_concurrent; i++) {
        srv_req *r = s->slot_req[i];
        if (!r || !r->incremental || r->cancel) continue;
        ptts_error e = {0};
        size_t done = 0;
        int k = 0, rc = 0;
        /* the text up to each flush, the flush, then the rest */
        while (rc == 0 && (k < r->n_flush || done < r->feed_len)) {
            size_t upto = k < r->n_flush ? r->flush_at[k] : r->feed_len;
            if (upto > done && (rc = ptts_batch_feed(s->batch, i, r->feed + done, upto - done, &e)))
                break;
            done = upto;
            if (k < r->n_flush) {
                if ((rc = ptts_batch_flush(s->batch, i, &e))) break;
                k++;
            }
        }
        if (rc == PTTS_E_BUSY) { /* the batch holds its bound: keep the rest for later */
            s->feeds_pending = 1;
        } else if (rc == 0 && r->feed_end) {
            rc = ptts_batch_end(s->batch, i, &e);
            if (rc == 0) r->feed_end = 0;
        }
        if (done) memmove(r->feed, r->feed + done, r->feed_len - done);
        r->feed_len -= done;
        for (int j = k; j < r->n_flush; j++)
            r->flush_at[j - k] = r->flush_at[j] - done;
        r->n_flush -= k;
        if (rc && rc != PTTS_E_BUSY) {
            ptts_batch_cancel(s->batch, i);
            r->err_code = rc;
            snprintf(r->err, sizeof r->err, "%s", e.msg);
            finish_locked(s, r, RQ_FAILED);
        }
    }
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
        /* and cancelled queued ones leave the queue (their room is free for others) */
        srv_req *prev = NULL;
        for (srv_req *r = s->q_head, *next; r; r = next) {
            next = r->next;
            if (!r->cancel) {
                prev = r;
                continue;
            }
            if (prev)
                prev->next = next;
            else
                s->q_head = next;
            if (s->q_tail == r) s->q_tail = prev;
            s->q_count--;
            finish_locked(s, r, RQ_DONE);
        }
        /* admit queued requests into free slots */
        int admitted = 0;
        while (s->q_head && s->active < s->cfg.max_concurrent) {
            srv_req *r = s->q_head;
            if (!r->cancel && s->active > 0 &&
                (r->go.sampler_steps > 0 ? r->go.sampler_steps : 1) != s->batch_steps)
                break; /* another step count: it waits until the batch has drained */
            s->q_head = r->next;
            if (!s->q_head) s->q_tail = NULL;
            s->q_count--;
            if (r->cancel) {
                finish_locked(s, r, RQ_DONE);
                continue;
            }
            int slot = r->incremental ? ptts_batch_start_incremental(s->batch, r->voice, &r->go, &e)
                                      : ptts_batch_start(s->batch, r->voice, r->text, &r->go, &e);
            if (slot < 0) {
                r->err_code = slot;
                snprintf(r->err, sizeof r->err, "%s", e.msg);
                finish_locked(s, r, RQ_FAILED);
                continue;
            }
            r->slot = slot;
            r->state = RQ_ACTIVE;
            r->t_admit = tool_now();
            admitted++;
            s->slot_req[slot] = r;
            s->active++;
            s->batch_steps = r->go.sampler_steps > 0 ? r->go.sampler_steps : 1;
            if (r->incremental) s->feeds_pending = 1;
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
        /* the batch's waiting count is that of the last step: a slot just fed steps again */
        const int fed = s->feeds_pending;
        if (fed) hand_feeds_locked(s);
        /* nothing to step: no request, or every one waits for text that has not come (a feed
         * or a cancel signals gen_cv under s->mu, which this thread holds since it looked) */
        if (s->active == 0 || (!fed && ptts_batch_waiting(s->batch) == s->active)) {
            pthread_cond_wait(&s->gen_cv, &s->mu);
            continue;
        }
        const int active = s->active, queued = s->q_count;
        pthread_mutex_unlock(&s->mu);
        double t0 = tool_now();
        int rc = ptts_batch_step(s->batch, on_frame, s, &e);
        double dt = tool_now() - t0;
        /* the engine's rhythm, for an operator who looks into first-audio times */
        srv_log(s, PTTS_LOG_DEBUG,
                "generation: a step of %d requests (%d admitted before it, %d queued) took %.1f ms",
                active, admitted, queued, 1e3 * dt);
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
    if (!rc) rc = ptts_batch_set_joins(s->batch, s->cfg.joins, e);
    if (rc) return rc;
    /* Every stream's caches sized now for a chunk of max_tokens ids (+8: a chunk prepared again
     * may tokenize a few ids longer) with the longest voice loaded at start and, where the model
     * clones, the longest clone of an upload or an audio URL (30 s: 377 positions): else the
     * first chunk longer than any before grows them while every stream of the batch waits
     * (ptts_batch_reserve). A voice-state file longer than both (a preset loaded later, a URL)
     * may still grow them once. */
    const ptts_voice *longest = NULL;
    for (int i = 0; i < s->n_voices; i++)
        if (!longest || ptts_voice_positions(s->voices[i].v) > ptts_voice_positions(longest))
            longest = s->voices[i].v;
    const int ids = (s->cfg.go.max_tokens > 0 ? s->cfg.go.max_tokens : 50) + 8;
    ptts_model_info info;
    ptts_model_get_info(s->model, &info);
    ptts_error re = {0};
    int rc2 = 0;
    if (ids <= 512 && longest) rc2 = ptts_batch_reserve(s->batch, longest, ids, &re);
    if (ids <= 512 && !rc2 && info.has_voice_cloning)
        rc2 = ptts_batch_reserve_clone(s->batch, PTTS_VOICE_CLONE_SECONDS, ids, &re);
    if (rc2)
        srv_log(s, PTTS_LOG_WARN, "caches not sized ahead (%s): a new longest chunk grows them",
                re.msg);
    else if (ids <= 512 && (longest || info.has_voice_cloning))
        srv_log(s, PTTS_LOG_INFO,
                "caches sized for chunks of %d ids with a voice of %d positions%s", ids,
                ptts_voice_positions(longest), info.has_voice_cloning ? " or a clone of 30 s" : "");
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
