/* threadpool.c: a small pthread pool for the parallel-for hook of compiled models
 * (qdqc_threadpool_parallel_for matches qdqc_parallel_for_fn). The caller thread takes part;
 * [0, n) is handed out in chunks of max(1, n / (QDQC_THREADPOOL_CHUNKS_PER_THREAD * threads))
 * through an atomic counter. No global state.
 *
 * Concurrent and nested calls. Any number of threads may call qdqc_threadpool_parallel_for on
 * one pool at once (sessions sharing a pool, a host's own threads, a fn that calls it again).
 * The pool runs one job at a time: a call takes the pool with an atomic exchange on `busy`;
 * a call that finds it taken does not wait for it but runs fn(arg, 0, n) on its own thread
 * and returns. Why not a queue of jobs: (1) no call ever waits for another call, so nothing
 * can deadlock, including a fn that calls the pool again from a worker or from the caller
 * (a queue would make such a call wait for workers that are busy running its own parent);
 * (2) a second caller is itself a running thread: while the pool's workers serve the first
 * job, the machine's cores are already shared between the callers, and handing the workers
 * to a second job as well would only oversubscribe them; (3) the results cannot differ, the
 * ranges being independent. The cost: with several callers, the one that holds the pool gets
 * its workers and the others run alone (a host that wants each caller to get threads gives
 * each its own pool). The fields of the job (fn, arg, n, chunk, next, the job word) are
 * written only by the holder of `busy`; the holder releases it (release order) after every
 * worker has left the job (the fetch_sub of the job word, observed by all_done), so the next
 * holder's writes come after every read of the previous job.
 *
 * A model calls the hook once per parallel region: ~50 times per inference for MobileNetV2,
 * regions of 20-100 us. Waking a sleeping worker through a condition variable costs a futex
 * wake plus the scheduler's latency (tens of us in a VM) on every region. So a worker polls for
 * the next job for up to SPIN_NS after its last one before it sleeps on the condition variable.
 * 200 us: on a 2-vCPU KVM guest (AMD EPYC Zen 5) 50-100 us left MobileNetV2's worker asleep
 * through most regions (1.05x at 2 threads), 200 us to 2 ms gave 1.78-1.85x alike.
 *
 * The caller never waits for a worker that has not started on the job: the job word holds the
 * generation, a closed bit and the count of workers inside the job; a worker enters with a
 * compare-and-swap only while the job is open, and the caller closes it once every chunk has
 * been handed out, then waits (polls, then sleeps) only for the workers inside. A worker that is
 * runnable but not running (an oversubscribed machine: spinning threads lose the scheduler's
 * wake-up preference) therefore costs nothing; with a waiting protocol it cost whole time
 * slices per region. Sleepers announce themselves (sleepers / caller_sleeps, sequentially
 * consistent atomics) before they re-check their condition under the mutex, and the other side
 * takes the mutex to signal only when it sees an announcement (Dekker: one of the two always
 * sees the other's write). */
#define _POSIX_C_SOURCE 200809L
#include <qdqc/runtime.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* how long either side polls (with a pause) before it sleeps */
#define SPIN_NS 200000

/* the job word: generation << GEN_SHIFT | CLOSED | workers inside the job */
#define GEN_SHIFT 16
#define CLOSED ((uint64_t)1 << 15)
#define INSIDE ((uint64_t)CLOSED - 1)

struct qdqc_threadpool {
    int nthreads;        /* worker threads (the caller is one more) */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    atomic_uint_fast64_t job;  /* generation, closed bit, workers inside (above) */
    atomic_bool stop;
    atomic_bool busy;          /* a parallel_for holds the pool (above) */
    qdqc_parallel_fn fn;
    void *arg;
    int64_t n, chunk;
    atomic_int_fast64_t next;
    atomic_int sleepers;       /* workers asleep (or about to be) on `work` */
    atomic_bool caller_sleeps; /* the caller is asleep (or about to be) on `done` */
};

static int64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Polls until cond(p, v) holds or SPIN_NS have passed; true if it holds. */
static bool
spin_until(struct qdqc_threadpool *p, bool (*cond)(struct qdqc_threadpool *, uint64_t), uint64_t v)
{
    int64_t t0 = 0;
    for (unsigned i = 0;; i++) {
        if (cond(p, v))
            return true;
        cpu_relax();
        if ((i & 63) == 63) {
            int64_t t = now_ns();
            if (!t0)
                t0 = t;
            else if (t - t0 > SPIN_NS)
                return false;
        }
    }
}

static bool
new_job(struct qdqc_threadpool *p, uint64_t seen)
{
    return atomic_load(&p->job) >> GEN_SHIFT != seen || atomic_load(&p->stop);
}

static bool
all_done(struct qdqc_threadpool *p, uint64_t unused)
{
    (void)unused;
    return (atomic_load(&p->job) & INSIDE) == 0;
}

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
    for (;;) {
        if (!spin_until(p, new_job, seen)) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while (!new_job(p, seen))
                pthread_cond_wait(&p->work, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop))
            break;
        /* enter the job if it is still open */
        uint64_t w = atomic_load(&p->job);
        bool in = false;
        while (!(w & CLOSED) && !in)
            in = atomic_compare_exchange_weak(&p->job, &w, w + 1);
        seen = w >> GEN_SHIFT;
        if (!in)
            continue;
        run_chunks(p);
        w = atomic_fetch_sub(&p->job, 1) - 1;
        if ((w & INSIDE) == 0 && atomic_load(&p->caller_sleeps)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
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
    atomic_init(&p->job, CLOSED);
    atomic_init(&p->stop, false);
    atomic_init(&p->busy, false);
    atomic_init(&p->next, 0);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->caller_sleeps, false);
    p->threads = calloc((size_t)(p->nthreads ? p->nthreads : 1), sizeof(pthread_t));
    if (!p->threads)
        p->nthreads = 0;
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
    atomic_store(&p->stop, true);
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
    /* another call holds the pool (a concurrent caller, or this one's own fn calling again):
     * run on this thread rather than wait (top of the file) */
    if (atomic_exchange_explicit(&p->busy, true, memory_order_acquire)) {
        fn(arg, 0, n);
        return;
    }
    int64_t parts = QDQC_THREADPOOL_CHUNKS_PER_THREAD * (int64_t)(p->nthreads + 1);
    /* the previous job is closed and no worker is inside it, so these plain fields are not
     * read until the new job word below (seq_cst) publishes them */
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = n / parts > 0 ? n / parts : 1;
    atomic_store(&p->next, 0);
    uint64_t gen = (atomic_load(&p->job) >> GEN_SHIFT) + 1;
    atomic_store(&p->job, gen << GEN_SHIFT);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
    }
    run_chunks(p);
    atomic_fetch_or(&p->job, CLOSED); /* every chunk is taken: no worker enters any more */
    if (!spin_until(p, all_done, 0)) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->caller_sleeps, true);
        while (!all_done(p, 0))
            pthread_cond_wait(&p->done, &p->mu);
        atomic_store(&p->caller_sleeps, false);
        pthread_mutex_unlock(&p->mu);
    }
    atomic_store_explicit(&p->busy, false, memory_order_release);
}
