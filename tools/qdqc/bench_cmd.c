/* bench_cmd.c: `qdqc bench`: latency of the JIT-compiled model. Only the public API.
 * Inputs are deterministic pseudo-random bytes (every bit pattern is a valid integer; floats
 * are drawn in [-1, 1)). GOPS = 2 * (int8 MACs of `qdqc --report`) / median time. */
#define _POSIX_C_SOURCE 200809L
#include "bench_cmd.h"
#include "par_profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t
mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void
fill(void *buf, size_t n, size_t es, const char *et, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = mix(&s);
        if (!strcmp(et, "f32")) {
            float v = (float)((double)(r >> 40) / (double)(1 << 24) * 2.0 - 1.0);
            memcpy((char *)buf + 4 * i, &v, 4);
        } else if (!strcmp(et, "f64")) {
            double v = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
            memcpy((char *)buf + 8 * i, &v, 8);
        } else if (es == 1) {
            ((uint8_t *)buf)[i] = !strcmp(et, "bool") ? (uint8_t)(r & 1) : (uint8_t)r;
        } else {
            uint64_t v = es == 2 ? r : r & 3; /* small wide integers (indices, shapes) */
            memcpy((char *)buf + es * i, &v, es);
        }
    }
}

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* int8 MACs from the report's totals line ("N int8 MACs"); 0 if absent. */
static unsigned long long
report_macs(qdqc_module *m)
{
    char *r = qdqc_module_report(m);
    unsigned long long macs = 0;
    const char *p = r ? strstr(r, " int8 MACs") : NULL;
    if (p) {
        const char *s = p;
        while (s > r && s[-1] >= '0' && s[-1] <= '9')
            s--;
        macs = strtoull(s, NULL, 10);
    }
    qdqc_string_free(r);
    return macs;
}

static size_t
numel(int rank, const int64_t *dims)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)(dims[i] > 0 ? dims[i] : 0);
    return n;
}

/* runs the model `runs` times through the recording hook of par_profile.h and prints its report */
static int
par_profile(qdqc_jit *j, void **in, void **out, const BenchOpts *o, int runs)
{
    ParProf *p = par_prof_create();
    if (!p) {
        fprintf(stderr, "qdqc: error: out of memory\n");
        return 1;
    }
    qdqc_jit_set_parallel_for(j, par_prof_hook, p);
    int rc = 0;
    for (int i = 0; i < runs && rc == 0; i++) {
        par_prof_run_begin(p);
        if (qdqc_jit_run(j, (const void *const *)in, out) != QDQC_OK)
            rc = 1;
        par_prof_run_end(p);
    }
    if (rc == 0) {
        printf("model %s\n", o->model);
        par_prof_report(p, o->threads, stdout);
    }
    par_prof_destroy(p);
    return rc;
}

int
qdqc_cli_bench(qdqc_context *ctx, const BenchOpts *o)
{
    int iters = o->iters > 0 ? o->iters : 20, warmup = o->warmup >= 0 ? o->warmup : 3;
    qdqc_module *m = NULL;
    if (qdqc_module_load_file(ctx, o->model, &m) != QDQC_OK)
        return 1;
    const char *passes = o->passes ? o->passes : "default";
    if (*passes && qdqc_module_run_passes(m, passes) != QDQC_OK) {
        qdqc_module_destroy(m);
        return 1;
    }
    size_t nin = qdqc_module_input_count(m), nout = qdqc_module_output_count(m);
    void **in = calloc(nin ? nin : 1, sizeof(void *)), **out = calloc(nout ? nout : 1, sizeof(void *));
    double *t = calloc((size_t)iters, sizeof(double));
    qdqc_jit *j = NULL;
    qdqc_threadpool *pool = NULL;
    int rc = 1;
    if (!in || !out || !t) {
        fprintf(stderr, "qdqc: error: out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < nin; i++) {
        const char *et = qdqc_module_input_elem_type(m, i);
        size_t es = qdqc_elem_type_size(et);
        size_t n = numel(qdqc_module_input_rank(m, i), qdqc_module_input_dims(m, i));
        if (!es || !(in[i] = calloc(n ? n : 1, es))) {
            fprintf(stderr, "qdqc: error: cannot allocate input '%s'\n", qdqc_module_input_name(m, i));
            goto done;
        }
        fill(in[i], n, es, et, 1000003u + i);
    }
    for (size_t i = 0; i < nout; i++) {
        size_t es = qdqc_elem_type_size(qdqc_module_output_elem_type(m, i));
        size_t n = numel(qdqc_module_output_rank(m, i), qdqc_module_output_dims(m, i));
        if (!es || !(out[i] = calloc(n ? n : 1, es))) {
            fprintf(stderr, "qdqc: error: cannot allocate output '%s'\n", qdqc_module_output_name(m, i));
            goto done;
        }
    }
    double c0 = now_ms();
    if (qdqc_jit_create(m, o->copts, &j) != QDQC_OK)
        goto done;
    double compile = now_ms() - c0;
    if (o->par_profile) {
        rc = par_profile(j, in, out, o, warmup + iters);
        goto done;
    }
    if (o->threads > 1) {
        pool = qdqc_threadpool_create(o->threads);
        if (!pool) {
            fprintf(stderr, "qdqc: error: cannot start %d threads\n", o->threads);
            goto done;
        }
        qdqc_jit_set_parallel_for(j, qdqc_threadpool_parallel_for, pool);
    }
    for (int i = 0; i < warmup + iters; i++) {
        double s = now_ms();
        if (qdqc_jit_run(j, (const void *const *)in, out) != QDQC_OK)
            goto done;
        if (i >= warmup)
            t[i - warmup] = now_ms() - s;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    double med = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
    int p90 = (iters * 9 + 9) / 10 - 1; /* ceil(0.9 * iters) - 1 */
    unsigned long long macs = report_macs(m);
    printf("model %s: %d iterations after %d warm-up, %d thread%s, compile %.1f ms\n", o->model,
           iters, warmup, o->threads > 1 ? o->threads : 1, o->threads > 1 ? "s" : "", compile);
    printf("median %.3f ms\n", med);
    printf("min %.3f ms\n", t[0]);
    printf("p90 %.3f ms\n", t[p90]);
    printf("GOPS %.2f (%llu int8 MACs x 2 / median)\n",
           med > 0 ? 2.0 * (double)macs / (med * 1e6) : 0.0, macs);
    printf("workspace %zu bytes\n", qdqc_jit_workspace_size(j));
    rc = 0;
done:
    qdqc_jit_destroy(j);
    qdqc_threadpool_destroy(pool);
    for (size_t i = 0; in && i < nin; i++)
        free(in[i]);
    for (size_t i = 0; out && i < nout; i++)
        free(out[i]);
    free(in);
    free(out);
    free(t);
    qdqc_module_destroy(m);
    return rc;
}
