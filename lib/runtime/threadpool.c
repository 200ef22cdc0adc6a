/* threadpool.c: a small pthread pool for the parallel-for hook of compiled models
 * (qdqc_threadpool_parallel_for matches qdqc_parallel_for_fn). The caller thread takes part;
 * [0, n) is handed out in chunks of about n / (4 * threads) through an atomic counter.
 * One parallel_for at a time per pool. No global state. */
#define _POSIX_C_SOURCE 200809L
#include <qdqc/qdqc.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct qdqc_threadpool {
    int nthreads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    uint64_t gen;        /* job generation */
    bool stop;
    qdqc_parallel_fn fn;
    void *arg;
    int64_t n, chunk;
    atomic_int_fast64_t next;
    int active;          /* workers still inside the current job */
};

static void
run_chunks(struct qdqc_threadpool *p)
{
    for (;;) {
        int64_t b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->n)
            break;
        int64_t e = b + p->chunk < p->n ? b + p->chunk : p->n;
        p->fn(p->arg, b, e);
    }
}

static void *
worker(void *vp)
{
    struct qdqc_threadpool *p = vp;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->gen == seen)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        run_chunks(p);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

qdqc_threadpool *
qdqc_threadpool_create(int nthreads)
{
    struct qdqc_threadpool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->nthreads = nthreads > 1 ? nthreads - 1 : 0; /* the caller is one of the threads */
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->threads = calloc((size_t)(p->nthreads ? p->nthreads : 1), sizeof(pthread_t));
    for (int i = 0; i < p->nthreads; i++)
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            p->nthreads = i;
            break;
        }
    return p;
}

void
qdqc_threadpool_destroy(qdqc_threadpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}

void
qdqc_threadpool_parallel_for(void *pool, qdqc_parallel_fn fn, void *arg, int64_t n)
{
    struct qdqc_threadpool *p = pool;
    if (n <= 0)
        return;
    if (!p || p->nthreads == 0 || n == 1) {
        fn(arg, 0, n);
        return;
    }
    int64_t parts = 4 * (int64_t)(p->nthreads + 1);
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = n / parts > 0 ? n / parts : 1;
    atomic_store(&p->next, 0);
    p->active = p->nthreads;
    p->gen++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    run_chunks(p);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
