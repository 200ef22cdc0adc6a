/* run_threads.c: a model compiled ahead of time, run on several threads through libqdqc_runtime
 * (include/qdqc/runtime.h, docs/abi.md "PREFIX_run_ex").
 *
 *   qdqc examples/mobilenetv2_qdq.onnx -o model.o -o model.h       (default --name=model)
 *   cc -I. examples/run_threads.c model.o $(pkg-config --cflags --libs qdqc-runtime) -lm -o run_threads
 *   ./run_threads THREADS [RUNS]
 *
 * Runs the model on a deterministic input (value i of input 0 is ((i * 7919) % 255) / 32 - 4,
 * in the input's element type) RUNS times (default 5, after one untimed run) with model_run on
 * the calling thread and RUNS times with model_run_ex and a qdqc_threadpool of THREADS threads,
 * checks that every threaded run writes the same output bytes as model_run (the kernels split
 * their loops into independent ranges, so the results cannot differ) and prints the median
 * time of each. Exit 0 if every run succeeded and matched. Works with any model whose inputs are f32 or
 * 8-bit integers. */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <qdqc/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const in_types[] = {MODEL_INPUT0_ELEM_TYPE};
static const size_t in_bytes[] = {MODEL_INPUT0_BYTES};
static const size_t in_numel[] = {MODEL_INPUT0_NUMEL};
static const size_t out_bytes[] = {MODEL_OUTPUT0_BYTES};

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* fills input buffer `buf` (element type `type`, n elements); 0 if the type is not handled */
static int
fill_input(void *buf, const char *type, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int v = (int)((i * 7919u) % 255u);
        if (!strcmp(type, "f32"))
            ((float *)buf)[i] = (float)v / 32.0f - 4.0f;
        else if (!strcmp(type, "u8"))
            ((uint8_t *)buf)[i] = (uint8_t)v;
        else if (!strcmp(type, "i8"))
            ((int8_t *)buf)[i] = (int8_t)(v - 128);
        else
            return 0;
    }
    return 1;
}

int
main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0, runs = argc > 2 ? atoi(argv[2]) : 5;
    if (argc < 2 || argc > 3 || threads < 1 || runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: %s THREADS [RUNS]\n", argv[0]);
        return 2;
    }
    if (MODEL_NUM_INPUTS != 1 || MODEL_NUM_OUTPUTS != 1) {
        fprintf(stderr, "run_threads: this driver handles models with one input and one output\n");
        return 2;
    }
    void *in = malloc(in_bytes[0]);
    void *ref = malloc(out_bytes[0]), *out = malloc(out_bytes[0]);
    size_t ws_bytes = (MODEL_WORKSPACE_SIZE + MODEL_WORKSPACE_ALIGN - 1) / MODEL_WORKSPACE_ALIGN *
                      MODEL_WORKSPACE_ALIGN + MODEL_WORKSPACE_ALIGN;
    void *ws = aligned_alloc(MODEL_WORKSPACE_ALIGN, ws_bytes);
    qdqc_threadpool *pool = qdqc_threadpool_create(threads);
    double *ms = malloc((size_t)runs * sizeof *ms);
    if (!in || !ref || !out || !ws || !pool || !ms) {
        fprintf(stderr, "run_threads: out of memory\n");
        return 1;
    }
    if (!fill_input(in, in_types[0], in_numel[0])) {
        fprintf(stderr, "run_threads: input element type %s is not handled\n", in_types[0]);
        return 2;
    }
    const void *ins[1] = {in};
    void *outs[1] = {ref};
    if (model_run(ins, outs, ws) != 0) { /* the reference output; also warms the caches */
        fprintf(stderr, "run_threads: model_run failed\n");
        return 1;
    }
    outs[0] = out;
    int same = 0;
    double median[2];
    for (int threaded = 0; threaded < 2; threaded++) {
        for (int r = 0; r < runs; r++) {
            memset(out, 0xa5, out_bytes[0]); /* a run that skipped a range would leave this */
            double t = now_ms();
            int st = threaded ? model_run_ex(ins, outs, ws, qdqc_threadpool_parallel_for, pool)
                              : model_run(ins, outs, ws);
            ms[r] = now_ms() - t;
            if (st != 0) {
                fprintf(stderr, "run_threads: %s failed\n", threaded ? "model_run_ex" : "model_run");
                return 1;
            }
            same += threaded && memcmp(out, ref, out_bytes[0]) == 0;
        }
        qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
        median[threaded] = ms[runs / 2];
    }
    printf("model_run (calling thread): median %.2f ms over %d runs\n", median[0], runs);
    printf("model_run_ex (qdqc_threadpool, %d threads): median %.2f ms over %d runs\n", threads,
           median[1], runs);
    printf("output '%s': %d of %d threaded runs identical to model_run\n", MODEL_OUTPUT0_NAME, same,
           runs);
    qdqc_threadpool_destroy(pool);
    free(ms);
    free(ws);
    free(in);
    free(ref);
    free(out);
    return same == runs ? 0 : 1;
}
