/*
 * pool.h - one persistent thread pool. A parallel region runs `fn(ctx, i, tid)` for every task
 * i in [0, n); the calling thread takes part (tid 0). Workers spin briefly between regions (the
 * per-frame loop issues many short regions) and then sleep on a condition variable.
 * One region at a time per pool; regions from different threads are serialized. A borrowed
 * pool (below) has no threads: other threads lend themselves to its regions for a while.
 */
#ifndef PTTS_POOL_H
#define PTTS_POOL_H

typedef struct ptts_pool ptts_pool;
typedef void (*ptts_pool_fn)(void *ctx, int task, int tid);

/* nthreads <= 0: the number of online CPUs. Returns NULL on failure. */
ptts_pool *ptts_pool_create(int nthreads);
void ptts_pool_free(ptts_pool *p);
int ptts_pool_threads(const ptts_pool *p);
/* Run n tasks and wait for all of them. p may be NULL (runs inline). */
void ptts_pool_run(ptts_pool *p, int n, ptts_pool_fn fn, void *ctx);

/* Regions run with threads (ptts_pool_run with 2+ tasks and 2+ threads) and the times a worker
 * found no region and went to sleep, since the pool was created: how often a region had to
 * wake a worker (bench_pipeline prints them per frame). p may be NULL (zeros). */
void ptts_pool_counts(ptts_pool *p, long *regions, long *sleeps);

/* A pool without threads of its own: its regions run on the thread that calls ptts_pool_run
 * and on whichever threads are inside ptts_pool_help at the time (threads lent by a task of
 * another pool once that task has nothing else to do). nthreads is how many threads the work
 * is split for (ptts_pool_threads): caller plus the helpers expected. Returns NULL on failure;
 * freed with ptts_pool_free. */
ptts_pool *ptts_pool_create_borrowed(int nthreads);
/* Run tasks of p's regions as they are published until *stop is nonzero (spinning, yielding
 * the core after a while). */
void ptts_pool_help(ptts_pool *p, const int *stop);

#endif
