/* test_shared_pool.c: one qdqc_threadpool shared by many callers, and a JIT session used by
 * two calls at once (include/qdqc/qdqc.h, docs/api.md "Threads"). Only the public API.
 *
 *  1. pool: 8 threads call qdqc_threadpool_parallel_for on one 3-thread pool at the same time,
 *     each checking that its own [0, n) is covered exactly once; every fourth region's fn
 *     calls the pool again (a nested call) over a range of its own.
 *  2. sessions: MODEL (default: test/e2e/graphs/par_split.qir, which has every kernel the code
 *     generator splits for the hook) after the default pipeline; 8 JIT sessions, one per
 *     thread, share that pool and run at the same time; every run's outputs must equal the
 *     same input's run on a session without a hook, and the hook must have been called.
 *  3. busy: a session whose hook calls qdqc_jit_run on the same session (re-entry on one
 *     thread), and a run started from a second thread while the first is inside the hook,
 *     both return QDQC_ERR_BUSY and leave the first run's outputs intact.
 * A deadlock (the old pool: one caller waits forever, all workers asleep) is reported after
 * DEADLINE_S seconds instead of hanging. ctest runs it in the normal build and, with the label
 * tsan, in a ThreadSanitizer build (test/unit/run_tsan.sh, docs/testing.md).
 *
 * Usage: test_shared_pool [MODEL.qir]   (prints "N passed, M failed"; exit status 1 on failure) */
#define _POSIX_C_SOURCE 200809L
#include "qdqc/qdqc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NT 8           /* caller threads */
#define POOL_THREADS 3 /* the shared pool: fewer than the callers */
#define POOL_ROUNDS 400
#define RUN_ROUNDS 6
#define MAXN 300
#ifndef QDQC_PAR_MODEL
#define QDQC_PAR_MODEL "test/e2e/graphs/par_split.qir"
#endif
#define DEADLINE_S 240 /* per part; TSan on a loaded 2-CPU machine takes well under 60 s */

static atomic_long passed, failed;

static void
check(int cond, const char *what, long a, long b)
{
    if (cond) {
        atomic_fetch_add(&passed, 1);
        return;
    }
    if (atomic_fetch_add(&failed, 1) < 10)
        printf("FAIL: %s (%ld, %ld)\n", what, a, b);
}

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Starts NT threads on fn and waits for them, at most DEADLINE_S seconds: past that the test
 * reports the deadlock and exits (joining would hang). */
static atomic_int finished;
typedef struct Start {
    void *(*fn)(void *);
    void *arg;
} Start;

static void *
start_thread(void *vp)
{
    Start *s = vp;
    s->fn(s->arg);
    atomic_fetch_add(&finished, 1);
    return NULL;
}

static void
run_threads(const char *part, void *(*fn)(void *), void *args, size_t argsize)
{
    pthread_t th[NT];
    Start st[NT];
    atomic_store(&finished, 0);
    for (int t = 0; t < NT; t++) {
        st[t].fn = fn;
        st[t].arg = (char *)args + (size_t)t * argsize;
        if (pthread_create(&th[t], NULL, start_thread, &st[t]) != 0) {
            printf("FAIL: %s: cannot start thread %d\n", part, t);
            exit(1);
        }
    }
    for (long ms = 0; atomic_load(&finished) < NT; ms += 10) {
        if (ms > DEADLINE_S * 1000L) {
            printf("FAIL: %s: deadlock: %d of %d threads still inside after %d s\n", part,
                   NT - atomic_load(&finished), NT, DEADLINE_S);
            fflush(stdout);
            _Exit(1);
        }
        sleep_ms(10);
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
}

/* ---- 1. the pool alone ---- */
static qdqc_threadpool *pool;

typedef struct Region {
    atomic_int hits[MAXN];
    int nested;      /* fn calls the pool again over [0, INNER) of `inner` */
    struct Region *inner;
} Region;
#define INNER 16

static void
body(void *arg, int64_t b, int64_t e)
{
    Region *r = arg;
    for (int64_t i = b; i < e; i++)
        atomic_fetch_add(&r->hits[i >= 0 && i < MAXN ? i : 0], i >= 0 && i < MAXN ? 1 : 1000);
    if (r->nested)
        for (int64_t i = b; i < e; i++)
            qdqc_threadpool_parallel_for(pool, body, &r->inner[i], INNER);
}

typedef struct PoolArg {
    int id;
} PoolArg;

static void *
pool_caller(void *vp)
{
    PoolArg *a = vp;
    Region *r = calloc(1, sizeof *r);
    Region *inner = calloc(MAXN, sizeof *inner);
    if (!r || !inner) {
        check(0, "allocation", a->id, 0);
        free(r);
        free(inner);
        return NULL;
    }
    for (long round = 0; round < POOL_ROUNDS; round++) {
        long n = 1 + (a->id * 37 + round * 11) % MAXN;
        r->nested = round % 4 == 3;
        r->inner = inner;
        if (r->nested)
            n = n % 40 + 1; /* keep the nested work small */
        for (int i = 0; i < MAXN; i++)
            atomic_store(&r->hits[i], 0);
        for (long i = 0; i < n && r->nested; i++)
            for (int k = 0; k < INNER; k++)
                atomic_store(&inner[i].hits[k], 0);
        qdqc_threadpool_parallel_for(pool, body, r, n);
        int ok = 1;
        for (long i = 0; i < MAXN; i++)
            ok &= atomic_load(&r->hits[i]) == (i < n);
        check(ok, "concurrent caller: every index of [0, n) exactly once", a->id, n);
        if (r->nested) {
            ok = 1;
            for (long i = 0; i < n; i++)
                for (int k = 0; k < INNER; k++)
                    ok &= atomic_load(&inner[i].hits[k]) == 1;
            check(ok, "nested call: every index exactly once", a->id, n);
        }
    }
    free(inner);
    free(r);
    return NULL;
}

/* ---- 2. sessions sharing the pool ---- */
typedef struct Model {
    qdqc_module *m;
    size_t nin, nout;
    size_t in_bytes[8], out_bytes[8];
} Model;

static Model model;
static atomic_long hook_calls;

static void
counting_pf(void *ctx, qdqc_parallel_fn fn, void *arg, int64_t n)
{
    atomic_fetch_add(&hook_calls, 1);
    qdqc_threadpool_parallel_for(ctx, fn, arg, n);
}

static size_t
tensor_bytes(const qdqc_module *m, size_t i, int out)
{
    int rank = out ? qdqc_module_output_rank(m, i) : qdqc_module_input_rank(m, i);
    const int64_t *d = out ? qdqc_module_output_dims(m, i) : qdqc_module_input_dims(m, i);
    size_t n = qdqc_elem_type_size(out ? qdqc_module_output_elem_type(m, i)
                                       : qdqc_module_input_elem_type(m, i));
    for (int k = 0; k < rank; k++)
        n *= (size_t)d[k];
    return n;
}

/* Deterministic inputs that differ per seed; f32 values in [-1.25, 1.25]. */
static void **
make_inputs(int seed)
{
    void **in = calloc(model.nin, sizeof *in);
    for (size_t i = 0; in && i < model.nin; i++) {
        in[i] = malloc(model.in_bytes[i] ? model.in_bytes[i] : 1);
        if (!in[i])
            continue;
        if (!strcmp(qdqc_module_input_elem_type(model.m, i), "f32")) {
            float *f = in[i];
            for (size_t k = 0; k < model.in_bytes[i] / 4; k++)
                f[k] = (float)((long)((k * 13 + (size_t)seed * 7) % 41) - 20) / 16.0f;
        } else {
            unsigned char *u = in[i];
            for (size_t k = 0; k < model.in_bytes[i]; k++)
                u[k] = (unsigned char)(k * 29 + (size_t)seed * 5);
        }
    }
    return in;
}

static void **
make_outputs(void)
{
    void **out = calloc(model.nout, sizeof *out);
    for (size_t i = 0; out && i < model.nout; i++)
        out[i] = calloc(1, model.out_bytes[i] ? model.out_bytes[i] : 1);
    return out;
}

static void
free_bufs(void **b, size_t n)
{
    for (size_t i = 0; b && i < n; i++)
        free(b[i]);
    free(b);
}

static int
same_outputs(void *const *a, void *const *b)
{
    for (size_t i = 0; i < model.nout; i++)
        if (memcmp(a[i], b[i], model.out_bytes[i]) != 0)
            return 0;
    return 1;
}

typedef struct SessionArg {
    int id;
    qdqc_jit *j;
    void **in, **want;
} SessionArg;

static void *
session_caller(void *vp)
{
    SessionArg *a = vp;
    void **out = make_outputs();
    for (int round = 0; out && round < RUN_ROUNDS; round++) {
        for (size_t i = 0; i < model.nout; i++)
            memset(out[i], 0xEE, model.out_bytes[i]);
        qdqc_status st = qdqc_jit_run(a->j, (const void *const *)a->in, out);
        check(st == QDQC_OK, "session run on the shared pool", a->id, st);
        check(same_outputs(out, a->want), "session outputs equal the run without a hook", a->id,
              round);
    }
    free_bufs(out, model.nout);
    return NULL;
}

/* ---- 3. a session used by two calls at once ---- */
typedef struct Busy {
    qdqc_jit *j;
    void **in, **out2;
    qdqc_status inner; /* what the second call returned */
    int calls;
    atomic_int inside, go; /* the two-thread case: the run is in the hook / may go on */
} Busy;

/* The hook calls the session again before it does the region's work. */
static void
reentering_pf(void *ctx, qdqc_parallel_fn fn, void *arg, int64_t n)
{
    Busy *b = ctx;
    if (b->calls++ == 0)
        b->inner = qdqc_jit_run(b->j, (const void *const *)b->in, b->out2);
    fn(arg, 0, n);
}

/* The hook stops in its first region until the main thread says go. */
static void
blocking_pf(void *ctx, qdqc_parallel_fn fn, void *arg, int64_t n)
{
    Busy *b = ctx;
    if (b->calls++ == 0) {
        atomic_store(&b->inside, 1);
        for (long ms = 0; !atomic_load(&b->go) && ms < DEADLINE_S * 1000L; ms++)
            sleep_ms(1);
    }
    fn(arg, 0, n);
}

typedef struct Runner {
    Busy *b;
    void **out;
    qdqc_status st;
} Runner;

static void *
run_once(void *vp)
{
    Runner *r = vp;
    r->st = qdqc_jit_run(r->b->j, (const void *const *)r->b->in, r->out);
    return NULL;
}

static void
test_busy(qdqc_jit *j, void **in, void **want)
{
    Busy b = {.j = j, .in = in, .out2 = make_outputs(), .inner = QDQC_OK};
    void **out = make_outputs();
    /* re-entry from the hook, on the same thread */
    qdqc_jit_set_parallel_for(j, reentering_pf, &b);
    qdqc_status st = qdqc_jit_run(j, (const void *const *)in, out);
    check(st == QDQC_OK, "the outer run succeeds", st, 0);
    check(b.calls > 0, "the hook was called", b.calls, 0);
    check(b.inner == QDQC_ERR_BUSY, "a run re-entered from the hook returns QDQC_ERR_BUSY",
          b.inner, 0);
    check(same_outputs(out, want), "the outer run's outputs are intact", 0, 0);
    /* a second thread while the first run is inside the hook */
    b.calls = 0;
    atomic_store(&b.inside, 0);
    atomic_store(&b.go, 0);
    qdqc_jit_set_parallel_for(j, blocking_pf, &b);
    Runner r = {.b = &b, .out = out, .st = QDQC_ERR_RUNTIME};
    for (size_t i = 0; i < model.nout; i++)
        memset(out[i], 0xEE, model.out_bytes[i]);
    pthread_t th;
    if (pthread_create(&th, NULL, run_once, &r) != 0) {
        check(0, "start a thread", 0, 0);
    } else {
        long ms = 0;
        while (!atomic_load(&b.inside) && ms++ < DEADLINE_S * 1000L)
            sleep_ms(1);
        check(atomic_load(&b.inside), "the first run reached the hook", ms, 0);
        st = qdqc_jit_run(j, (const void *const *)in, b.out2);
        check(st == QDQC_ERR_BUSY, "a run from a second thread returns QDQC_ERR_BUSY", st, 0);
        atomic_store(&b.go, 1);
        pthread_join(th, NULL);
        check(r.st == QDQC_OK, "the first run succeeds", r.st, 0);
        check(same_outputs(out, want), "the first run's outputs are intact", 0, 0);
    }
    /* and the session is free again afterwards */
    qdqc_jit_set_parallel_for(j, NULL, NULL);
    st = qdqc_jit_run(j, (const void *const *)in, b.out2);
    check(st == QDQC_OK && same_outputs(b.out2, want), "the session is usable afterwards", st,
          0);
    free_bufs(out, model.nout);
    free_bufs(b.out2, model.nout);
}

static char *
read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) &&
            fread(s, 1, (size_t)n, f) == (size_t)n) {
            s[n] = 0;
            *len = (size_t)n;
        } else {
            free(s);
            s = NULL;
        }
    }
    fclose(f);
    return s;
}

int
main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : QDQC_PAR_MODEL;
    pool = qdqc_threadpool_create(POOL_THREADS);
    if (!pool) {
        printf("FAIL: cannot create the pool\n");
        return 1;
    }
    /* 1 */
    PoolArg pa[NT];
    for (int t = 0; t < NT; t++)
        pa[t].id = t;
    run_threads("pool", pool_caller, pa, sizeof pa[0]);

    /* 2 */
    size_t len = 0;
    char *text = read_text(path, &len);
    qdqc_context *ctx = qdqc_context_create();
    if (!text || !ctx) {
        printf("FAIL: cannot read %s\n", path);
        return 1;
    }
    if (qdqc_module_parse(ctx, text, len, path, &model.m) != QDQC_OK ||
        qdqc_module_run_passes(model.m, NULL) != QDQC_OK) {
        printf("FAIL: %s: %s\n", path, qdqc_context_get_diagnostics(ctx));
        return 1;
    }
    model.nin = qdqc_module_input_count(model.m);
    model.nout = qdqc_module_output_count(model.m);
    if (model.nin > 8 || model.nout > 8) {
        printf("FAIL: %s: more than 8 inputs or outputs\n", path);
        return 1;
    }
    for (size_t i = 0; i < model.nin; i++)
        model.in_bytes[i] = tensor_bytes(model.m, i, 0);
    for (size_t i = 0; i < model.nout; i++)
        model.out_bytes[i] = tensor_bytes(model.m, i, 1);
    qdqc_jit *seq = NULL;
    SessionArg sa[NT];
    int ok = qdqc_jit_create(model.m, NULL, &seq) == QDQC_OK;
    for (int t = 0; t < NT && ok; t++) {
        sa[t].id = t;
        sa[t].in = make_inputs(t);
        sa[t].want = make_outputs();
        ok = sa[t].in && sa[t].want &&
             qdqc_jit_run(seq, (const void *const *)sa[t].in, sa[t].want) == QDQC_OK &&
             qdqc_jit_create(model.m, NULL, &sa[t].j) == QDQC_OK;
        if (ok)
            qdqc_jit_set_parallel_for(sa[t].j, counting_pf, pool);
    }
    if (!ok) {
        printf("FAIL: JIT: %s\n", qdqc_context_get_diagnostics(ctx));
        return 1;
    }
    run_threads("sessions", session_caller, sa, sizeof sa[0]);
    check(atomic_load(&hook_calls) >= NT * RUN_ROUNDS, "the model calls the hook",
          atomic_load(&hook_calls), 0);

    /* 3 */
    test_busy(seq, sa[0].in, sa[0].want);

    for (int t = 0; t < NT; t++) {
        qdqc_jit_destroy(sa[t].j);
        free_bufs(sa[t].in, model.nin);
        free_bufs(sa[t].want, model.nout);
    }
    qdqc_jit_destroy(seq);
    qdqc_module_destroy(model.m);
    qdqc_context_destroy(ctx);
    free(text);
    qdqc_threadpool_destroy(pool);
    printf("%ld passed, %ld failed\n", atomic_load(&passed), atomic_load(&failed));
    return atomic_load(&failed) ? 1 : 0;
}
