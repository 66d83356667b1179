/* pool.c - the persistent thread pool (see pool.h). Tasks are claimed with an atomic counter;
 * completion is counted with another. Workers spin 20000 loads before sleeping (9 us on a Zen
 * 5: longer spins lost with a busy neighbour, bench/RESULTS.md "Where the CPU loop's time
 * goes"); the caller spins, then yields, while it waits for tasks other threads hold. A borrowed
 * pool is the same region machinery with helpers (ptts_pool_help) in place of workers. */
#define _GNU_SOURCE
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct ptts_pool {
    int nthreads;
    pthread_t *threads;
    pthread_mutex_t mu; /* guards sleeping and waking */
    pthread_cond_t cv;
    pthread_mutex_t region_mu; /* serializes regions */
    /* (generation << 32) | next task index. Claiming a task is a CAS that also checks the
     * generation, so a worker late from the previous region can never claim a task of the next
     * one with stale n/fn/ctx. */
    _Atomic uint64_t ticket;
    atomic_int done; /* tasks finished in the current region */
    /* Read before the claim, possibly by a thread late from the previous region (a stale value
     * only leads to a failing CAS): atomic so that the read is no data race. fn and ctx are
     * read after a successful claim, which orders them after the region's publication. */
    atomic_int n;
    ptts_pool_fn fn;
    void *ctx;
    atomic_int stop;
    int borrowed; /* no threads of its own (ptts_pool_create_borrowed) */
    long regions; /* ptts_pool_counts: written under region_mu */
    long sleeps;  /* written under mu */
};

typedef struct {
    ptts_pool *p;
    int tid;
} worker_arg;

static void run_tasks(ptts_pool *p, uint32_t gen, int tid) {
    uint64_t t = atomic_load_explicit(&p->ticket, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(t >> 32) != gen) return;
        int n = atomic_load_explicit(&p->n, memory_order_relaxed);
        int i = (int)(uint32_t)t;
        if (i >= n) return;
        if (!atomic_compare_exchange_weak_explicit(&p->ticket, &t, t + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        p->fn(p->ctx, i, tid);
        atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
        t = atomic_load_explicit(&p->ticket, memory_order_acquire);
    }
}

static void *worker(void *arg) {
    worker_arg *wa = arg;
    ptts_pool *p = wa->p;
    int tid = wa->tid;
    free(wa);
    uint32_t seen = (uint32_t)(atomic_load(&p->ticket) >> 32);
    for (;;) {
        uint32_t g;
        int spins = 0;
        while ((g = (uint32_t)(atomic_load_explicit(&p->ticket, memory_order_acquire) >> 32)) ==
                   seen &&
               !atomic_load(&p->stop)) {
            if (++spins > 20000) {
                pthread_mutex_lock(&p->mu);
                if ((uint32_t)(atomic_load(&p->ticket) >> 32) == seen && !atomic_load(&p->stop))
                    p->sleeps++;
                while ((uint32_t)(atomic_load(&p->ticket) >> 32) == seen && !atomic_load(&p->stop))
                    pthread_cond_wait(&p->cv, &p->mu);
                pthread_mutex_unlock(&p->mu);
                spins = 0;
            }
        }
        if (atomic_load(&p->stop)) return NULL;
        seen = g;
        run_tasks(p, g, tid);
    }
}

ptts_pool *ptts_pool_create(int nthreads) {
    if (nthreads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = c > 0 ? (int)c : 1;
    }
    if (nthreads > 256) nthreads = 256;
    ptts_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nthreads = nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->region_mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (nthreads > 1) {
        p->threads = calloc((size_t)nthreads - 1, sizeof *p->threads);
        if (!p->threads) {
            ptts_pool_free(p);
            return NULL;
        }
        for (int i = 1; i < nthreads; i++) {
            worker_arg *wa = malloc(sizeof *wa);
            if (wa) { /* filled before the worker starts: it reads and frees it */
                wa->p = p;
                wa->tid = i;
            }
            if (!wa || pthread_create(&p->threads[i - 1], NULL, worker, wa) != 0) {
                free(wa);
                p->nthreads = i; /* only i-1 workers exist */
                ptts_pool_free(p);
                return NULL;
            }
        }
    }
    return p;
}

void ptts_pool_free(ptts_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i + 1 < p->nthreads && p->threads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->region_mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

int ptts_pool_threads(const ptts_pool *p) { return p ? p->nthreads : 1; }

void ptts_pool_counts(ptts_pool *p, long *regions, long *sleeps) {
    *regions = *sleeps = 0;
    if (!p) return;
    pthread_mutex_lock(&p->region_mu);
    *regions = p->regions;
    pthread_mutex_unlock(&p->region_mu);
    pthread_mutex_lock(&p->mu);
    *sleeps = p->sleeps;
    pthread_mutex_unlock(&p->mu);
}

ptts_pool *ptts_pool_create_borrowed(int nthreads) {
    ptts_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nthreads = nthreads < 1 ? 1 : nthreads > 256 ? 256 : nthreads;
    p->borrowed = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->region_mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return p;
}

void ptts_pool_help(ptts_pool *p, const int *stop) {
    /* A generation is worked on once: its tasks are claimed in order, so when run_tasks comes
     * back none of it is left. Joining mid-region is fine (the claim checks the generation). */
    uint32_t seen = 0;
    int first = 1;
    for (int spins = 0;;) {
        uint32_t g = (uint32_t)(atomic_load_explicit(&p->ticket, memory_order_acquire) >> 32);
        if (first || g != seen) {
            first = 0;
            seen = g;
            run_tasks(p, g, 1);
            spins = 0;
            continue;
        }
        if (__atomic_load_n(stop, __ATOMIC_ACQUIRE)) return;
        if (++spins > 2000) sched_yield();
    }
}

void ptts_pool_run(ptts_pool *p, int n, ptts_pool_fn fn, void *ctx) {
    if (n <= 0) return;
    if (!p || p->nthreads == 1 || n == 1) {
        for (int i = 0; i < n; i++)
            fn(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&p->region_mu);
    p->regions++;
    /* Close the finished generation first: a worker late from it may read the new n below
     * and would otherwise still win a CAS on the old ticket (old gen, old n), running a task
     * index of the new region twice. With the index at INT32_MAX that CAS fails. */
    atomic_store(&p->ticket, (atomic_load(&p->ticket) & 0xffffffff00000000ull) | 0x7fffffffull);
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->n, n, memory_order_relaxed);
    atomic_store(&p->done, 0);
    uint32_t gen = (uint32_t)(atomic_load(&p->ticket) >> 32) + 1;
    pthread_mutex_lock(&p->mu);
    atomic_store_explicit(&p->ticket, (uint64_t)gen << 32, memory_order_release);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    run_tasks(p, gen, 0);
    /* A worker holding a task may have been preempted (a shared machine): after a short spin,
     * yield so that it can run on this core instead of waiting out a scheduler tick. */
    for (int spins = 0; atomic_load_explicit(&p->done, memory_order_acquire) < n;)
        if (++spins > 2000) sched_yield();
    pthread_mutex_unlock(&p->region_mu);
}
