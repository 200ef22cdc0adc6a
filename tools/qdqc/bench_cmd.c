/* bench_cmd.c: `qdqc bench`: latency of the JIT-compiled model. Only the public API.
 * Inputs are those of `qdqc run --random-inputs 1` (cli_util.c; an f16 input stays zero).
 * GOPS = 2 * (int8 + int16xint8 MACs of `qdqc --report`) / median time. */
#define _POSIX_C_SOURCE 200809L
#include "bench_cmd.h"

#include "cli_util.h"
#include "json_out.h"
#include "par_profile.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ms on clock c */
static double
clock_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The number before `what` in report text r ("N int8 MACs"); 0 if absent. */
static unsigned long long
count_before(const char *r, const char *what)
{
    const char *p = r ? strstr(r, what) : NULL;
    if (!p)
        return 0;
    const char *s = p;
    while (s > r && s[-1] >= '0' && s[-1] <= '9')
        s--;
    return strtoull(s, NULL, 10);
}

/* int8 MACs from the report's totals line ("N int8 MACs"), and in *m16 the MACs of ops with
 * 16-bit activations ("M int16xint8 MACs"); 0 if absent. */
static unsigned long long
report_macs(qdqc_module *m, unsigned long long *m16)
{
    char *r = qdqc_module_report(m);
    unsigned long long macs = count_before(r, " int8 MACs");
    *m16 = count_before(r, " int16xint8 MACs");
    qdqc_string_free(r);
    return macs;
}

/* The header of every JSON report: {"model": ..., "mode": ..., */
static void
json_head(const BenchOpts *o, const char *mode, int *first)
{
    fputs("{", stdout);
    json_key(stdout, first, "model");
    json_string(stdout, o->model);
    json_key(stdout, first, "mode");
    json_string(stdout, mode);
}

/* runs the model `runs` times through the recording hook of par_profile.h and prints its report */
static int
par_profile(qdqc_jit *j, void **in, void **out, const BenchOpts *o, int runs)
{
    ParProf *p = par_prof_create();
    size_t ns = qdqc_jit_step_count(j);
    const char **names = calloc(ns ? ns : 1, sizeof *names), **ops = calloc(ns ? ns : 1, sizeof *ops);
    if (!p || !names || !ops) {
        fprintf(stderr, "qdqc: error: out of memory\n");
        par_prof_destroy(p);
        free(names);
        free(ops);
        return 1;
    }
    for (size_t i = 0; i < ns; i++) {
        names[i] = qdqc_jit_step_name(j, i);
        ops[i] = qdqc_jit_step_op(j, i);
    }
    ParProfSteps st = {ns, names, ops};
    qdqc_jit_set_parallel_for(j, par_prof_hook, p);
    /* regions named by node: the step hook of the profile compile (bench sets it) */
    bool named = qdqc_jit_set_profile_hook(j, par_prof_step_hook, p) == QDQC_OK;
    int rc = 0;
    for (int i = 0; i < runs && rc == 0; i++) {
        par_prof_run_begin(p);
        if (qdqc_jit_run(j, (const void *const *)in, out) != QDQC_OK)
            rc = 1;
        par_prof_run_end(p);
    }
    if (rc == 0 && o->json) {
        int first = 1;
        json_head(o, "par-profile", &first);
        fputs(", ", stdout);
        par_prof_report(p, o->threads, named ? &st : NULL, true, stdout);
        fputs("}\n", stdout);
    } else if (rc == 0) {
        printf("model %s\n", o->model);
        par_prof_report(p, o->threads, named ? &st : NULL, false, stdout);
    }
    par_prof_destroy(p);
    free(names);
    free(ops);
    return rc;
}

/* --profile: each step's time (the minimum over the runs), by node. At 1 thread every step runs
 * on the calling thread, so the clock is that thread's CPU time: on a loaded machine a wall clock
 * adds to a step whatever ran while it was preempted (a scheduler tick of 4 ms at HZ=250), and a
 * run-to-run phase that repeats keeps it in the minimum. With a pool the steps' work is on other
 * threads too: the wall clock. */
typedef struct StepProf {
    size_t n;
    clockid_t clk;
    double *cur, *best; /* ms of each step in this run; minimum over runs */
    double t0;
    int32_t open;       /* the step begun and not yet ended, -1 if none */
    bool bad;           /* the hook saw steps out of order */
} StepProf;

static void
step_hook(void *ctx, int32_t step, int32_t end)
{
    StepProf *p = ctx;
    double t = clock_ms(p->clk);
    if (step < 0 || (size_t)step >= p->n || (end ? p->open != step : p->open != -1)) {
        p->bad = true;
        return;
    }
    if (end) {
        p->cur[step] += t - p->t0;
        p->open = -1;
    } else {
        p->open = step;
        p->t0 = clock_ms(p->clk); /* after the clock read above, as close to the step as possible */
    }
}

static const double *sort_key;

static int
cmp_step(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double u = sort_key[x], v = sort_key[y];
    return u < v ? 1 : u > v ? -1 : x < y ? -1 : x > y;
}

static double
median_of(double *t, int n)
{
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static int
step_profile(qdqc_jit *j, void **in, void **out, const BenchOpts *o, int warmup, int iters,
             double compile)
{
    int T = o->threads > 1 ? o->threads : 1;
    StepProf p = {.n = qdqc_jit_step_count(j), .open = -1,
                  .clk = T > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID};
    const char *clock_name = T > 1 ? "wall" : "thread CPU";
    size_t n1 = p.n ? p.n : 1;
    p.cur = calloc(n1, sizeof(double));
    p.best = malloc(n1 * sizeof(double));
    size_t *order = malloc(n1 * sizeof(size_t));
    double *runs = calloc((size_t)iters, sizeof(double));
    int rc = 1;
    if (!p.cur || !p.best || !order || !runs) {
        fprintf(stderr, "qdqc: error: out of memory\n");
        goto done;
    }
    if (qdqc_jit_set_profile_hook(j, step_hook, &p) != QDQC_OK) {
        fprintf(stderr, "qdqc: error: the model was not compiled with the step hook\n");
        goto done;
    }
    for (size_t i = 0; i < p.n; i++)
        p.best[i] = INFINITY;
    for (int r = 0; r < warmup + iters; r++) {
        memset(p.cur, 0, n1 * sizeof(double));
        double s = clock_ms(p.clk);
        if (qdqc_jit_run(j, (const void *const *)in, out) != QDQC_OK)
            goto done;
        double e = clock_ms(p.clk) - s;
        if (r < warmup)
            continue;
        runs[r - warmup] = e;
        for (size_t i = 0; i < p.n; i++)
            p.best[i] = p.cur[i] < p.best[i] ? p.cur[i] : p.best[i];
    }
    if (p.bad || p.open != -1) {
        fprintf(stderr, "qdqc: error: the step hook saw the steps out of order\n");
        goto done;
    }
    double total = 0;
    for (size_t i = 0; i < p.n; i++) {
        total += p.best[i];
        order[i] = i;
    }
    sort_key = p.best;
    qsort(order, p.n, sizeof *order, cmp_step);
    double med = median_of(runs, iters);
    if (o->json) {
        int first = 1;
        json_head(o, "profile", &first);
        json_key(stdout, &first, "iterations");
        printf("%d", iters);
        json_key(stdout, &first, "warmup");
        printf("%d", warmup);
        json_key(stdout, &first, "threads");
        printf("%d", T);
        json_key(stdout, &first, "clock");
        json_string(stdout, T > 1 ? "wall" : "thread-cpu");
        json_key(stdout, &first, "compile_ms");
        json_number(stdout, compile);
        json_key(stdout, &first, "median_ms");
        json_number(stdout, med);
        json_key(stdout, &first, "steps_ms");
        json_number(stdout, total);
        json_key(stdout, &first, "nodes");
        fputs("[", stdout);
    } else {
        printf("model %s: per-node profile, min of %d runs after %d warm-up, %d thread%s, %s time\n",
               o->model, iters, warmup, T, T > 1 ? "s" : "", clock_name);
        printf("run median %.3f ms (with the step hook); steps %.3f ms (sum of each step's "
               "minimum), %zu steps\n", med, total, p.n);
        printf("%10s %7s %8s  %s\n", "ms", "share", "GOPS", "node (op)");
    }
    for (size_t k = 0; k < p.n; k++) {
        size_t i = order[k];
        unsigned long long macs = (unsigned long long)qdqc_jit_step_macs(j, i);
        double share = total > 0 ? p.best[i] / total : 0;
        double gops = p.best[i] > 0 ? 2.0 * (double)macs / (p.best[i] * 1e6) : 0;
        if (o->json) {
            int f = 1;
            fputs(k ? ", {" : "{", stdout);
            json_key(stdout, &f, "step");
            printf("%zu", i);
            json_key(stdout, &f, "name");
            json_string(stdout, qdqc_jit_step_name(j, i));
            json_key(stdout, &f, "op");
            json_string(stdout, qdqc_jit_step_op(j, i));
            json_key(stdout, &f, "ms");
            json_number(stdout, p.best[i]);
            json_key(stdout, &f, "share");
            json_number(stdout, share);
            json_key(stdout, &f, "macs");
            printf("%llu", macs);
            json_key(stdout, &f, "gops");
            json_number(stdout, gops);
            fputs("}", stdout);
        } else {
            char g[32] = "-";
            if (macs)
                snprintf(g, sizeof g, "%.2f", gops);
            printf("%10.4f %6.1f%% %8s  %s (%s)\n", p.best[i], 100 * share, g,
                   qdqc_jit_step_name(j, i), qdqc_jit_step_op(j, i));
        }
    }
    if (o->json)
        fputs("]}\n", stdout);
    rc = 0;
done:
    qdqc_jit_set_profile_hook(j, NULL, NULL);
    free(p.cur);
    free(p.best);
    free(order);
    free(runs);
    return rc;
}

/* One timed call: qdqc_jit_run, or with --shape qdqc_jit_run_shapes at those shapes. */
typedef struct BenchCall {
    qdqc_jit *j;
    int64_t **ish; /* per input its --shape dims; NULL: a static run */
    int64_t **osh; /* per output, written by the run */
} BenchCall;

static bool
bench_call(const BenchCall *c, void **in, void **out)
{
    if (!c->ish)
        return qdqc_jit_run(c->j, (const void *const *)in, out) == QDQC_OK;
    return qdqc_jit_run_shapes(c->j, (const int64_t *const *)c->ish, (const void *const *)in,
                               c->osh, out) == QDQC_OK;
}

static void
bench_call_free(BenchCall *c, size_t nin, size_t nout)
{
    for (size_t i = 0; c->ish && i < nin; i++)
        free(c->ish[i]);
    for (size_t i = 0; c->osh && i < nout; i++)
        free(c->osh[i]);
    free(c->ish);
    free(c->osh);
}

/* Input i's shape: its --shape NAME=D0xD1... (the rank of the input), or the module's dims
 * when they are static. dims gets 8 entries. */
static bool
shape_of_input(qdqc_module *m, const BenchOpts *o, size_t i, int64_t *dims)
{
    const char *name = qdqc_module_input_name(m, i);
    int rank = qdqc_module_input_rank(m, i);
    const int64_t *md = qdqc_module_input_dims(m, i);
    for (int s = 0; s < o->nshapes; s++) {
        const char *eq = strchr(o->shapes[s], '=');
        if ((size_t)(eq - o->shapes[s]) != strlen(name) || strncmp(o->shapes[s], name, strlen(name)))
            continue;
        const char *p = eq + 1;
        int r = 0;
        for (char *end; r < 8; p = end + 1) {
            long long d = strtoll(p, &end, 10);
            if (end == p || d < 1)
                break;
            dims[r++] = d;
            if (*end != 'x')
                break;
        }
        if (r != rank) {
            fprintf(stderr, "qdqc: error: --shape %s: input '%s' has %d dimensions\n",
                    o->shapes[s], name, rank);
            return false;
        }
        return true;
    }
    for (int a = 0; a < rank; a++)
        if ((dims[a] = md[a]) < 0) {
            fprintf(stderr, "qdqc: error: input '%s' has a run-time dimension (axis %d): give "
                    "its shape with --shape %s=D0xD1x...\n", name, a, name);
            return false;
        }
    return true;
}

/* The inputs (deterministic random values) and outputs of the timed runs. With --shape, the
 * input shapes are the given ones and a shape query (qdqc_jit_run_shapes without outputs)
 * sizes the outputs. */
static bool
bench_buffers(qdqc_module *m, const BenchOpts *o, BenchCall *c, void **in, void **out)
{
    size_t nin = qdqc_module_input_count(m), nout = qdqc_module_output_count(m);
    if (o->nshapes && (!(c->ish = calloc(nin + 1, sizeof *c->ish)) ||
                       !(c->osh = calloc(nout + 1, sizeof *c->osh))))
        return false;
    for (size_t i = 0; i < nin; i++) {
        const char *et = qdqc_module_input_elem_type(m, i);
        size_t es = qdqc_elem_type_size(et);
        int64_t dims[8];
        int rank = qdqc_module_input_rank(m, i);
        if (!shape_of_input(m, o, i, dims) || (c->ish && !(c->ish[i] = calloc(9, sizeof(int64_t)))))
            return false;
        if (c->ish)
            memcpy(c->ish[i], dims, (size_t)rank * sizeof *dims);
        size_t n = cli_numel(rank, dims);
        if (!es || !(in[i] = calloc(n ? n : 1, es))) {
            fprintf(stderr, "qdqc: error: cannot allocate input '%s'\n", qdqc_module_input_name(m, i));
            return false;
        }
        cli_fill_random(in[i], n, et, 1, i); /* a type it cannot generate (f16) stays zero */
    }
    for (size_t i = 0; c->ish && i < nout; i++)
        if (!(c->osh[i] = calloc(9, sizeof(int64_t))))
            return false;
    if (c->ish && qdqc_jit_run_shapes(c->j, (const int64_t *const *)c->ish, (const void *const *)in,
                                      c->osh, NULL) != QDQC_OK)
        return false;
    for (size_t i = 0; i < nout; i++) {
        size_t es = qdqc_elem_type_size(qdqc_module_output_elem_type(m, i));
        int rank = qdqc_module_output_rank(m, i);
        size_t n = cli_numel(rank, c->osh ? c->osh[i] : qdqc_module_output_dims(m, i));
        if (!es || !(out[i] = calloc(n ? n : 1, es))) {
            fprintf(stderr, "qdqc: error: cannot allocate output '%s'\n", qdqc_module_output_name(m, i));
            return false;
        }
    }
    return true;
}

int
qdqc_cli_bench(qdqc_context *ctx, const BenchOpts *o)
{
    int iters = o->iters > 0 ? o->iters : 20, warmup = o->warmup >= 0 ? o->warmup : 3;
    qdqc_module *m = NULL;
    if (cli_load_module(ctx, o->model, &m) != QDQC_OK)
        return 1;
    const char *passes = o->passes ? o->passes : "default";
    if (*passes && qdqc_module_run_passes(m, passes) != QDQC_OK) {
        qdqc_module_destroy(m);
        return 1;
    }
    size_t nin = qdqc_module_input_count(m), nout = qdqc_module_output_count(m);
    void **in = calloc(nin ? nin : 1, sizeof(void *)), **out = calloc(nout ? nout : 1, sizeof(void *));
    double *t = calloc((size_t)iters, sizeof(double)), *tc = calloc((size_t)iters, sizeof(double));
    qdqc_jit *j = NULL;
    qdqc_threadpool *pool = NULL;
    BenchCall call = {0};
    int rc = 1;
    if (!in || !out || !t || !tc) {
        fprintf(stderr, "qdqc: error: out of memory\n");
        goto done;
    }
    double c0 = now_ms();
    if (qdqc_jit_create(m, o->copts, &j) != QDQC_OK)
        goto done;
    double compile = now_ms() - c0;
    call.j = j;
    if (!bench_buffers(m, o, &call, in, out))
        goto done;
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
    if (o->profile) {
        rc = step_profile(j, in, out, o, warmup, iters, compile);
        goto done;
    }
    for (int i = 0; i < warmup + iters; i++) {
        double s = now_ms(), sc = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (!bench_call(&call, in, out))
            goto done;
        if (i >= warmup) {
            t[i - warmup] = now_ms() - s;
            tc[i - warmup] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - sc;
        }
    }
    double med = median_of(t, iters), med_cpu = median_of(tc, iters);
    int p90 = (iters * 9 + 9) / 10 - 1; /* ceil(0.9 * iters) - 1 */
    unsigned long long macs16 = 0;
    unsigned long long macs = call.ish ? 0 : report_macs(m, &macs16);
    double gops = med > 0 ? 2.0 * (double)(macs + macs16) / (med * 1e6) : 0.0;
    if (call.ish) /* the module is symbolic: its MACs are counted at no size */
        macs16 = 0;
    if (o->json) {
        int first = 1;
        json_head(o, "timing", &first);
        json_key(stdout, &first, "iterations");
        printf("%d", iters);
        json_key(stdout, &first, "warmup");
        printf("%d", warmup);
        json_key(stdout, &first, "threads");
        printf("%d", o->threads > 1 ? o->threads : 1);
        const struct {
            const char *k;
            double v;
        } num[] = {{"compile_ms", compile}, {"median_ms", med}, {"min_ms", t[0]},
                   {"p90_ms", t[p90]}, {"median_cpu_ms", med_cpu}, {"gops", gops}};
        for (size_t i = 0; i < sizeof num / sizeof num[0]; i++) {
            json_key(stdout, &first, num[i].k);
            json_number(stdout, num[i].v);
        }
        json_key(stdout, &first, "int8_macs");
        printf("%llu", macs);
        if (macs16) {
            json_key(stdout, &first, "int16_macs");
            printf("%llu", macs16);
        }
        json_key(stdout, &first, "workspace_bytes");
        printf("%zu}\n", qdqc_jit_workspace_size(j));
        rc = 0;
        goto done;
    }
    printf("model %s: %d iterations after %d warm-up, %d thread%s, compile %.1f ms\n", o->model,
           iters, warmup, o->threads > 1 ? o->threads : 1, o->threads > 1 ? "s" : "", compile);
    printf("median %.3f ms\n", med);
    printf("min %.3f ms\n", t[0]);
    printf("p90 %.3f ms\n", t[p90]);
    printf("process CPU median %.3f ms\n", med_cpu);
    if (call.ish)
        printf("GOPS n/a (a run-time shape)\n");
    else if (macs16)
        printf("GOPS %.2f ((%llu int8 + %llu int16xint8 MACs) x 2 / median)\n", gops, macs, macs16);
    else
        printf("GOPS %.2f (%llu int8 MACs x 2 / median)\n", gops, macs);
    printf("workspace %zu bytes\n", qdqc_jit_workspace_size(j));
    rc = 0;
done:
    bench_call_free(&call, nin, nout);
    qdqc_jit_destroy(j);
    qdqc_threadpool_destroy(pool);
    for (size_t i = 0; in && i < nin; i++)
        free(in[i]);
    for (size_t i = 0; out && i < nout; i++)
        free(out[i]);
    free(in);
    free(out);
    free(t);
    free(tc);
    qdqc_module_destroy(m);
    return rc;
}
