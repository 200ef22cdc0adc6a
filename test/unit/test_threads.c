/* test_threads.c: separate contexts are usable from separate threads at the same time
 * (include/qdqc/qdqc.h, docs/api.md). Two pthreads, each with its own context, repeatedly
 * parse a QDQ graph (different per thread), run the default pipeline, run it in the reference
 * interpreter, JIT-compile it and run that, and compare: the JIT equals the reference in every
 * round, every round gives the same result, and that equals what the same work computes on the
 * main thread afterwards. The threads start together and are the process's first users of the
 * library (and of LLVM's target registry). Each thread also provokes a parse error and checks
 * the diagnostic stayed in its own context. Only the public API is used.
 *
 * Usage: test_threads    (prints "N passed, M failed"; exit status 1 on failure) */
#define _POSIX_C_SOURCE 200809L
#include "qdqc/qdqc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 4
#define NX (1 * 3 * 8 * 8)
#define MAX_NY (1 * 8 * 8 * 8)

typedef struct Worker {
    int id;           /* 0 or 1: selects the graph (output channels 4 or 8) */
    pthread_barrier_t *start;
    long passed, failed;
    char first_failure[512];
    unsigned char got[MAX_NY];  /* the thread's first-round output */
} Worker;

static void
check(Worker *w, int cond, const char *what, const char *detail)
{
    if (cond) {
        w->passed++;
        return;
    }
    if (!w->failed)
        snprintf(w->first_failure, sizeof w->first_failure, "thread %d: %s%s%s", w->id, what,
                 detail && *detail ? ": " : "", detail ? detail : "");
    w->failed++;
}

static int
out_channels(int id)
{
    return id ? 8 : 4;
}

/* dequantize -> conv (float weights under quantize/dequantize, float bias) -> relu ->
 * quantize u8: the default pipeline turns it into one qconv. Weights differ per thread. */
static char *
graph_text(int id)
{
    int m = out_channels(id);
    size_t cap = 16384;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    int n = snprintf(s, cap,
                     "graph @net%d(%%x: f32[1,3,8,8]) -> u8[1,%d,8,8] {\n"
                     "  %%xq = quantize %%x, scale=0.02, zp=3 : i8[1,3,8,8]\n"
                     "  %%xd = dequantize %%xq, scale=0.02, zp=3 : f32[1,3,8,8]\n"
                     "  %%w = const dense<f32[%d,3,3,3], [",
                     id, m, m);
    for (int i = 0; i < m * 27; i++)
        n += snprintf(s + n, cap - (size_t)n, "%s%.4f", i ? ", " : "",
                      (double)(((i * 37 + id * 11) % 29) - 14) / 16.0);
    n += snprintf(s + n, cap - (size_t)n, "]>\n  %%b = const dense<f32[%d], [", m);
    for (int i = 0; i < m; i++)
        n += snprintf(s + n, cap - (size_t)n, "%s%.3f", i ? ", " : "", 0.125 * (i - 2));
    snprintf(s + n, cap - (size_t)n,
             "]>\n"
             "  %%wq = quantize %%w, axis=0, scale=[%s], zp=[%s] : i8[%d,3,3,3]\n"
             "  %%wd = dequantize %%wq, axis=0, scale=[%s], zp=[%s] : f32[%d,3,3,3]\n"
             "  %%c = conv %%xd, %%wd, %%b, pads=[1, 1, 1, 1] : f32[1,%d,8,8]\n"
             "  %%r = relu %%c : f32[1,%d,8,8]\n"
             "  %%y = quantize %%r, scale=0.05, zp=0 : u8[1,%d,8,8]\n"
             "  return %%y\n}\n",
             id ? "0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01" : "0.01, 0.01, 0.01, 0.01",
             id ? "0, 0, 0, 0, 0, 0, 0, 0" : "0, 0, 0, 0", m,
             id ? "0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01" : "0.01, 0.01, 0.01, 0.01",
             id ? "0, 0, 0, 0, 0, 0, 0, 0" : "0, 0, 0, 0", m, m, m, m);
    return s;
}

static void
fill_input(float *x, int id)
{
    for (int i = 0; i < NX; i++)
        x[i] = (float)(((i * 13 + id * 7) % 41) - 20) / 16.0f;
}

/* One full round: parse, passes, reference, JIT. ref/jit receive the outputs. */
static void
one_round(Worker *w, unsigned char *ref, unsigned char *jit)
{
    char *text = graph_text(w->id);
    qdqc_context *ctx = qdqc_context_create();
    check(w, text && ctx, "allocation", "");
    if (!text || !ctx) {
        free(text);
        qdqc_context_destroy(ctx);
        return;
    }
    qdqc_module *m = NULL;
    qdqc_status st = qdqc_module_parse(ctx, text, strlen(text), "threads.qir", &m);
    check(w, st == QDQC_OK, "parse", qdqc_context_get_diagnostics(ctx));
    if (st == QDQC_OK) {
        st = qdqc_module_run_passes(m, NULL);
        check(w, st == QDQC_OK, "passes", qdqc_context_get_diagnostics(ctx));
        char *ir = qdqc_module_print(m);
        check(w, ir && strstr(ir, "qconv") && !strstr(ir, " conv "), "pipeline makes a qconv",
              ir);
        qdqc_string_free(ir);
        float x[NX];
        fill_input(x, w->id);
        const void *ins[1] = {x};
        void *ref_outs[1] = {ref}, *jit_outs[1] = {jit};
        st = qdqc_module_run_reference(m, ins, ref_outs);
        check(w, st == QDQC_OK, "reference run", qdqc_context_get_diagnostics(ctx));
        qdqc_jit *j = NULL;
        st = qdqc_jit_create(m, NULL, &j);
        check(w, st == QDQC_OK, "JIT compile", qdqc_context_get_diagnostics(ctx));
        if (st == QDQC_OK) {
            st = qdqc_jit_run(j, ins, jit_outs);
            check(w, st == QDQC_OK, "JIT run", "");
        }
        qdqc_jit_destroy(j);
    }
    qdqc_module_destroy(m);
    /* A parse error lands in this context only, with this thread's file name. */
    char name[32];
    snprintf(name, sizeof name, "bad%d.qir", w->id);
    qdqc_context_clear_diagnostics(ctx);
    qdqc_module *bad = NULL;
    st = qdqc_module_parse(ctx, "graph @g(", 9, name, &bad);
    const char *d = qdqc_context_get_diagnostics(ctx);
    check(w, st == QDQC_ERR_PARSE && !bad, "parse error status", d);
    check(w, strstr(d, name) != NULL && strstr(d, w->id ? "bad0.qir" : "bad1.qir") == NULL,
          "diagnostic in its own context", d);
    check(w, qdqc_context_get_error_count(ctx) >= 1, "error count", d);
    qdqc_context_destroy(ctx);
    free(text);
}

static void *
worker_main(void *arg)
{
    Worker *w = arg;
    size_t ny = (size_t)out_channels(w->id) * 64;
    unsigned char ref[MAX_NY], jit[MAX_NY];
    pthread_barrier_wait(w->start);
    for (int r = 0; r < ROUNDS; r++) {
        memset(ref, 0xAA, sizeof ref);
        memset(jit, 0x55, sizeof jit);
        one_round(w, ref, jit);
        check(w, memcmp(ref, jit, ny) == 0, "JIT == reference", "");
        if (r == 0)
            memcpy(w->got, ref, ny);
        else
            check(w, memcmp(ref, w->got, ny) == 0, "same result every round", "");
    }
    return NULL;
}

int
main(void)
{
    Worker ws[2];
    pthread_barrier_t start;
    if (pthread_barrier_init(&start, NULL, 2) != 0) {
        fprintf(stderr, "pthread_barrier_init failed\n");
        return 1;
    }
    memset(ws, 0, sizeof ws);
    for (int i = 0; i < 2; i++) {
        ws[i].id = i;
        ws[i].start = &start;
    }
    pthread_t th[2];
    int started = 0;
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&th[i], NULL, worker_main, &ws[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            ws[i].failed++;
            break;
        }
        started++;
    }
    if (started < 2) {
        /* the barrier would never open for the first thread; nothing to join safely */
        fprintf(stderr, "could not start both threads\n");
        return 1;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < 2; i++) {
        /* the same work alone on this thread gives what the thread got */
        unsigned char want[MAX_NY], jit[MAX_NY];
        size_t ny = (size_t)out_channels(i) * 64;
        one_round(&ws[i], want, jit);
        check(&ws[i], memcmp(want, ws[i].got, ny) == 0, "threaded == alone", "");
        size_t nonzero = 0;
        for (size_t k = 0; k < ny; k++)
            nonzero += want[k] != 0;
        check(&ws[i], nonzero > ny / 4, "the output is not mostly zero", "");
    }
    long passed = 0, failed = 0;
    for (int i = 0; i < 2; i++) {
        passed += ws[i].passed;
        failed += ws[i].failed;
        if (ws[i].failed)
            fprintf(stderr, "FAIL %s\n", ws[i].first_failure);
    }
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
