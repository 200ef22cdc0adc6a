/* runtime.h: libqdqc_runtime, the run-time support for models compiled ahead of time.
 *
 * A model compiled by qdqc (docs/abi.md) runs on the calling thread through PREFIX_run, or
 * splits its parallel loops through a parallel-for hook passed to PREFIX_run_ex. This header and
 * the small library libqdqc_runtime (a pthread pool; no LLVM, no libqdqc) provide such a hook:
 *
 *     qdqc_threadpool *pool = qdqc_threadpool_create(4);
 *     model_run_ex(inputs, outputs, workspace, qdqc_threadpool_parallel_for, pool);
 *     qdqc_threadpool_destroy(pool);
 *
 *     cc app.c model.o -lqdqc_runtime -lm     (pkg-config qdqc-runtime; CMake qdqc::qdqc_runtime)
 *
 * libqdqc exports the same functions (qdqc.h includes this header), so a program that links
 * libqdqc for the JIT does not need libqdqc_runtime as well. examples/run_threads.c shows the
 * whole use. */
#ifndef QDQC_RUNTIME_H
#define QDQC_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define QDQC_RUNTIME_API
#else
#define QDQC_RUNTIME_API __attribute__((visibility("default")))
#endif

/* Parallel-for hook (same contract as the generated header's PREFIX_parallel_for_fn): call
 * fn(arg, begin, end) over disjoint ranges covering [0, n), on any threads, and return when all
 * have returned. A compiled model calls the hook only from the thread that runs it, never from
 * inside fn; but runs on several threads that share one hook (sessions or AOT workspaces with
 * the same pf and ctx) call it concurrently, so a shared hook must allow that
 * (qdqc_threadpool_parallel_for does). */
typedef void (*qdqc_parallel_fn)(void *arg, int64_t begin, int64_t end);
typedef void (*qdqc_parallel_for_fn)(void *ctx, qdqc_parallel_fn fn, void *arg, int64_t n);

/* A small pthread pool whose qdqc_threadpool_parallel_for fits qdqc_parallel_for_fn
 * (pass the pool as ctx). nthreads <= 1: runs on the caller. The caller is one of the threads;
 * [0, n) is handed out in chunks of max(1, n / (QDQC_THREADPOOL_CHUNKS_PER_THREAD * nthreads))
 * through an atomic counter, each to the first free thread. Any number of threads may call
 * qdqc_threadpool_parallel_for on one pool at once, and fn may call it again (nested): the
 * pool's workers serve one call at a time, and a call that finds them taken runs
 * fn(arg, 0, n) on its own thread instead of waiting, so no call waits for another.
 * qdqc_threadpool_destroy must not overlap a call. qdqc_threadpool_create returns NULL when
 * out of memory; if some threads cannot be started the pool runs with fewer. */
#define QDQC_THREADPOOL_CHUNKS_PER_THREAD 4
typedef struct qdqc_threadpool qdqc_threadpool;
QDQC_RUNTIME_API qdqc_threadpool *qdqc_threadpool_create(int nthreads);
QDQC_RUNTIME_API void qdqc_threadpool_destroy(qdqc_threadpool *p); /* NULL is a no-op */
QDQC_RUNTIME_API void qdqc_threadpool_parallel_for(void *pool, qdqc_parallel_fn fn, void *arg,
                                                   int64_t n);

#ifdef __cplusplus
}
#endif
#endif /* QDQC_RUNTIME_H */
