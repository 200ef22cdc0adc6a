/* test_threadpool.c: qdqc_threadpool_parallel_for (lib/runtime/threadpool.c) calls fn over
 * disjoint ranges covering [0, n) exactly once, for pools of 1, 2, 3 and 7 threads (more than
 * the machine has: workers preempted while spinning), for n from 1 to 300 (fewer units than
 * threads, chunk tails), back to back (workers still spinning from the previous job) and after
 * pauses longer than the pool's spin time (workers and caller asleep on the condition
 * variables). It also checks that the ranges a region hands out follow the documented chunking
 * (no range longer than max(1, n / (QDQC_THREADPOOL_CHUNKS_PER_THREAD * threads))) and that a
 * pool with workers really uses them on a region of slow units. Only the public API.
 *
 * Usage: test_threadpool    (prints "N passed, M failed"; exit status 1 on failure) */
#define _POSIX_C_SOURCE 200809L
#include "qdqc/qdqc.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define MAXN 300

typedef struct Job {
    atomic_int hits[MAXN];
    atomic_long maxlen;
    atomic_int nseen;            /* distinct threads that ran a range of this region */
    int slow;                    /* microseconds per unit */
} Job;

static atomic_long region;        /* bumped per region; a thread counts itself once per region */
static _Thread_local long seen_region = -1;

static long passed, failed;

static void
check(int cond, const char *what, int threads, long n)
{
    if (cond) {
        passed++;
        return;
    }
    if (failed++ < 10)
        printf("FAIL: %s (threads %d, n %ld)\n", what, threads, n);
}

static void
sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void
body(void *arg, int64_t b, int64_t e)
{
    Job *j = arg;
    long len = (long)(e - b), m = atomic_load(&j->maxlen);
    while (len > m && !atomic_compare_exchange_weak(&j->maxlen, &m, len))
        ;
    for (int64_t i = b; i < e; i++) {
        if (i >= 0 && i < MAXN)
            atomic_fetch_add(&j->hits[i], 1);
        else
            atomic_fetch_add(&j->hits[0], 1000); /* out of range: fails the check below */
        if (j->slow)
            sleep_us(j->slow);
    }
    long r = atomic_load(&region);
    if (seen_region != r) {
        seen_region = r;
        atomic_fetch_add(&j->nseen, 1);
    }
}

static void
reset(Job *j)
{
    for (int i = 0; i < MAXN; i++)
        atomic_store(&j->hits[i], 0);
    atomic_store(&j->maxlen, 0);
    atomic_store(&j->nseen, 0);
    atomic_fetch_add(&region, 1);
    j->slow = 0;
}

int
main(void)
{
    static Job j;
    const int counts[] = {1, 2, 3, 7};
    for (unsigned c = 0; c < sizeof counts / sizeof *counts; c++) {
        int T = counts[c];
        qdqc_threadpool *p = qdqc_threadpool_create(T);
        check(p != NULL, "create", T, 0);
        if (!p)
            continue;
        for (long round = 0; round < 3; round++) {
            for (long n = 1; n <= MAXN; n += (n < 40 ? 1 : 37)) {
                reset(&j);
                qdqc_threadpool_parallel_for(p, body, &j, n);
                int ok = 1;
                for (long i = 0; i < MAXN; i++)
                    ok &= atomic_load(&j.hits[i]) == (i < n ? 1 : 0);
                check(ok, "every index in [0, n) exactly once, nothing else", T, n);
                long chunk = T > 1 ? n / ((long)QDQC_THREADPOOL_CHUNKS_PER_THREAD * T) : n;
                check(atomic_load(&j.maxlen) <= (chunk > 1 ? chunk : 1) || T == 1 || n == 1,
                      "no range longer than the documented chunk", T, n);
                if (round == 1 && n % 3 == 0)
                    sleep_us(2000); /* past the spin time: the next region wakes sleepers */
            }
        }
        /* slow units: with workers, more than one thread runs them */
        reset(&j);
        j.slow = 1000;
        qdqc_threadpool_parallel_for(p, body, &j, 64);
        int ok = 1;
        for (long i = 0; i < 64; i++)
            ok &= atomic_load(&j.hits[i]) == 1;
        check(ok, "slow units each once", T, 64);
        check(T == 1 ? atomic_load(&j.nseen) == 1 : atomic_load(&j.nseen) >= 2,
              "the workers take part", T, 64);
        qdqc_threadpool_destroy(p);
    }
    /* NULL pool: the caller runs [0, n) at once */
    reset(&j);
    qdqc_threadpool_parallel_for(NULL, body, &j, 5);
    check(atomic_load(&j.maxlen) == 5 && atomic_load(&j.hits[4]) == 1, "NULL pool runs inline", 0, 5);
    qdqc_threadpool_destroy(NULL);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
