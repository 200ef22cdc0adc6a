/* par_profile.c: the recording parallel-for hook of `qdqc bench --par-profile` and its
 * Amdahl report (par_profile.h). Only the public API. */
#define _POSIX_C_SOURCE 200809L
#include "par_profile.h"

#include "json_out.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct Region {
    int64_t n;
    int32_t step;   /* the model's step that opened it (par_prof_step_hook), -1 if unknown */
    double *unit;   /* ns of unit [i, i+1), min over runs */
    double before;  /* ns of serial work since the previous region (or the run's start) */
} Region;

struct ParProf {
    Region *r;
    size_t nr, cap;
    size_t cur;     /* next region of the current run */
    double mark;    /* clock at the end of the last region */
    double tail;    /* serial ns after the last region */
    double clk;     /* cost of one clock read, subtracted from every interval */
    int32_t step;   /* the step running now (par_prof_step_hook), -1 if unknown */
    int runs;
    bool bad;
};

static double
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double
dmin(double a, double b)
{
    return a < b ? a : b;
}

static double
interval(const ParProf *p, double t0, double t1)
{
    double d = t1 - t0 - p->clk;
    return d > 0 ? d : 0;
}

ParProf *
par_prof_create(void)
{
    ParProf *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->tail = INFINITY;
    p->step = -1;
    double best = INFINITY;
    for (int i = 0; i < 1000; i++) {
        double a = now_ns(), b = now_ns();
        best = dmin(best, b - a);
    }
    p->clk = best;
    return p;
}

void
par_prof_destroy(ParProf *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nr; i++)
        free(p->r[i].unit);
    free(p->r);
    free(p);
}

void
par_prof_hook(void *ctx, qdqc_parallel_fn fn, void *arg, int64_t n)
{
    ParProf *p = ctx;
    double t = now_ns();
    Region *r = NULL;
    if (p->runs == 0) {
        if (p->nr == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 64;
            Region *nr = realloc(p->r, cap * sizeof *nr);
            if (!nr)
                p->bad = true;
            else {
                p->r = nr;
                p->cap = cap;
            }
        }
        if (!p->bad) {
            r = &p->r[p->nr++];
            r->n = n;
            r->step = p->step;
            r->before = INFINITY;
            r->unit = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
            if (!r->unit) {
                p->nr--;
                r = NULL;
                p->bad = true;
            }
            for (int64_t i = 0; r && i < n; i++)
                r->unit[i] = INFINITY;
        }
    } else if (p->cur < p->nr && p->r[p->cur].n == n) {
        r = &p->r[p->cur];
    } else {
        p->bad = true;
    }
    if (r)
        r->before = dmin(r->before, interval(p, p->mark, t));
    for (int64_t i = 0; i < n; i++) {
        double t0 = now_ns();
        fn(arg, i, i + 1);
        double t1 = now_ns();
        if (r)
            r->unit[i] = dmin(r->unit[i], interval(p, t0, t1));
    }
    p->cur++;
    p->mark = now_ns();
}

void
par_prof_step_hook(void *ctx, int32_t step, int32_t end)
{
    ParProf *p = ctx;
    p->step = end ? -1 : step;
}

void
par_prof_run_begin(ParProf *p)
{
    p->cur = 0;
    p->step = -1;
    p->mark = now_ns();
}

bool
par_prof_run_end(ParProf *p)
{
    double t = now_ns();
    p->tail = dmin(p->tail, interval(p, p->mark, t));
    if (p->cur != p->nr)
        p->bad = true;
    p->runs++;
    return !p->bad;
}

/* Makespan of one region's units on T threads: chunks of c consecutive units, each taken by
 * the thread that is free first (the lowest index on ties: the caller is thread 0). */
static double
makespan(const Region *r, int T, int64_t c, double *fin)
{
    for (int t = 0; t < T; t++)
        fin[t] = 0;
    for (int64_t b = 0; b < r->n; b += c) {
        double w = 0;
        for (int64_t i = b; i < r->n && i < b + c; i++)
            w += r->unit[i];
        int best = 0;
        for (int t = 1; t < T; t++)
            if (fin[t] < fin[best])
                best = t;
        fin[best] += w;
    }
    double m = 0;
    for (int t = 0; t < T; t++)
        m = fin[t] > m ? fin[t] : m;
    return m;
}

static double
region_work(const Region *r)
{
    double w = 0;
    for (int64_t i = 0; i < r->n; i++)
        w += r->unit[i];
    return w;
}

typedef struct Loss {
    double loss, work; /* ns lost at T threads; ns of work (serial or region) */
    long index;
    int64_t n;         /* units; 0 for a serial gap */
} Loss;

static int
cmp_loss(const void *a, const void *b)
{
    double x = ((const Loss *)a)->loss, y = ((const Loss *)b)->loss;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* the region's makespan under qdqc_threadpool's chunking */
static double
region_makespan(const Region *r, int T, double *fin)
{
    int64_t c = r->n / ((int64_t)QDQC_THREADPOOL_CHUNKS_PER_THREAD * T);
    return makespan(r, T, c > 0 ? c : 1, fin);
}

/* " (node 'NAME', OP)" of a region's step, or "" */
static void
region_node(const ParProf *p, size_t i, const ParProfSteps *st, char *buf, size_t len)
{
    int32_t s = i < p->nr ? p->r[i].step : -1;
    buf[0] = 0;
    if (st && s >= 0 && (size_t)s < st->n)
        snprintf(buf, len, " (node '%s', %s)", st->name[s], st->op[s]);
}

static void
json_node(const ParProf *p, size_t i, const ParProfSteps *st, FILE *f, int *first)
{
    int32_t s = i < p->nr ? p->r[i].step : -1;
    if (s < 0)
        return;
    json_key(f, first, "step");
    fprintf(f, "%d", s);
    if (st && (size_t)s < st->n) {
        json_key(f, first, "node");
        json_string(f, st->name[s]);
        json_key(f, first, "op");
        json_string(f, st->op[s]);
    }
}

void
par_prof_report(const ParProf *p, int threads, const ParProfSteps *st, bool json, FILE *f)
{
    if (p->bad || p->runs == 0) {
        if (json)
            fprintf(f, "\"error\": \"the runs did not call the hook the same way\"");
        else
            fprintf(f, "parallel profile: unusable (the runs did not call the hook the same "
                       "way)\n");
        return;
    }
    int T = threads > 1 ? threads : 2;
    double S = p->tail, W = 0, M = 0, *fin = calloc((size_t)T, sizeof(double));
    int64_t units = 0;
    if (!fin)
        return;
    for (size_t i = 0; i < p->nr; i++) {
        const Region *r = &p->r[i];
        S += r->before;
        W += region_work(r);
        M += region_makespan(r, T, fin);
        units += r->n;
    }
    double one = S + W, pred = S + M;
    /* where it is lost: the largest serial gaps and region imbalances */
    Loss *l = calloc(2 * p->nr + 1, sizeof *l);
    size_t nl = 0;
    for (size_t i = 0; l && i <= p->nr; i++) {
        double s = i < p->nr ? p->r[i].before : p->tail;
        l[nl++] = (Loss){s - s / T, s, (long)i, 0};
        if (i < p->nr) {
            const Region *r = &p->r[i];
            double w = region_work(r);
            l[nl++] = (Loss){region_makespan(r, T, fin) - w / T, w, (long)i, r->n};
        }
    }
    if (l)
        qsort(l, nl, sizeof *l, cmp_loss);
    if (json) {
        int first = 1;
        json_key(f, &first, "regions");
        fprintf(f, "%zu", p->nr);
        json_key(f, &first, "units");
        fprintf(f, "%lld", (long long)units);
        json_key(f, &first, "runs");
        fprintf(f, "%d", p->runs);
        json_key(f, &first, "threads");
        fprintf(f, "%d", T);
        const struct {
            const char *k;
            double v;
        } num[] = {{"one_thread_ms", one * 1e-6}, {"serial_ms", S * 1e-6},
                   {"in_regions_ms", W * 1e-6},   {"slowest_threads_ms", M * 1e-6},
                   {"ideal_ms", W / T * 1e-6},    {"predicted_ms", pred * 1e-6},
                   {"scaling", pred > 0 ? one / pred : 0},
                   {"scaling_serial_only", one > 0 ? one / (S + W / T) : 0}};
        for (size_t i = 0; i < sizeof num / sizeof num[0]; i++) {
            json_key(f, &first, num[i].k);
            json_number(f, num[i].v);
        }
        json_key(f, &first, "region_list");
        fputs("[", f);
        for (size_t i = 0; i < p->nr; i++) {
            int rf = 1;
            fputs(i ? ", {" : "{", f);
            json_key(f, &rf, "region");
            fprintf(f, "%zu", i);
            json_node(p, i, st, f, &rf);
            json_key(f, &rf, "units");
            fprintf(f, "%lld", (long long)p->r[i].n);
            json_key(f, &rf, "work_ms");
            json_number(f, region_work(&p->r[i]) * 1e-6);
            json_key(f, &rf, "makespan_ms");
            json_number(f, region_makespan(&p->r[i], T, fin) * 1e-6);
            json_key(f, &rf, "serial_before_ms");
            json_number(f, p->r[i].before * 1e-6);
            fputs("}", f);
        }
        fputs("]", f);
        json_key(f, &first, "largest_losses");
        fputs("[", f);
        for (size_t i = 0; l && i < nl && i < 10; i++) {
            int rf = 1;
            fputs(i ? ", {" : "{", f);
            json_key(f, &rf, "loss_ms");
            json_number(f, l[i].loss * 1e-6);
            json_key(f, &rf, "kind");
            json_string(f, l[i].n ? "imbalance" : l[i].index < (long)p->nr ? "serial before"
                                                                          : "serial after");
            long ri = l[i].n || l[i].index < (long)p->nr ? l[i].index : l[i].index - 1;
            json_key(f, &rf, "region");
            fprintf(f, "%ld", ri);
            json_node(p, (size_t)ri, st, f, &rf);
            json_key(f, &rf, "work_ms");
            json_number(f, l[i].work * 1e-6);
            fputs("}", f);
        }
        fputs("]", f);
    } else {
        fprintf(f, "parallel profile: %zu regions, %lld units, min of %d runs, thread CPU time\n",
                p->nr, (long long)units, p->runs);
        fprintf(f, "1 thread %.3f ms: serial %.3f ms (%.1f%%), in regions %.3f ms\n", one * 1e-6,
                S * 1e-6, one > 0 ? 100 * S / one : 0, W * 1e-6);
        fprintf(f, "%d threads: slowest threads %.3f ms, ideal %.3f ms (imbalance %.1f%%)\n", T,
                M * 1e-6, W / T * 1e-6, W > 0 ? 100 * (M - W / T) / (W / T) : 0);
        fprintf(f, "%d threads: predicted %.3f ms, scaling %.2fx (serial only: %.2fx)\n", T,
                pred * 1e-6, pred > 0 ? one / pred : 0, one > 0 ? one / (S + W / T) : 0);
        if (l)
            fprintf(f, "largest losses at %d threads (regions numbered in run order from 0):\n", T);
        for (size_t i = 0; l && i < nl && i < 10; i++) {
            char node[512];
            if (l[i].n) {
                region_node(p, (size_t)l[i].index, st, node, sizeof node);
                fprintf(f, "  %.3f ms  region %ld%s: %lld units, %.3f ms of work\n",
                        l[i].loss * 1e-6, l[i].index, node, (long long)l[i].n, l[i].work * 1e-6);
            } else {
                long ri = l[i].index < (long)p->nr ? l[i].index : l[i].index - 1;
                region_node(p, (size_t)ri, st, node, sizeof node);
                fprintf(f, "  %.3f ms  serial %.3f ms %s region %ld%s\n", l[i].loss * 1e-6,
                        l[i].work * 1e-6, l[i].index < (long)p->nr ? "before" : "after", ri, node);
            }
        }
    }
    free(l);
    free(fin);
}
