/* test_fconv.c: the f32 convolution kernels (lib/codegen/lower/float_conv.c and the scalar loop
 * of float_linear.c) against the reference interpreter (lib/ref/ref_linear.c, run_float_conv),
 * bit for bit, on every x86 kernel path this host can run (generic with the host's features, generic
 * on the x86-64 baseline without FMA hardware, avx2, avxvnni, avx512vnni).
 *
 * A seeded sweep of one-conv graphs (1-D and 2-D, groups from 1 to depthwise with channel
 * multipliers, strides 1-3, dilations 1-2, asymmetric pads, bias or none, batch 1-2, and a 3-D
 * conv) and of conv_transpose graphs (groups, strides, dilations, pads, output_padding, 1-D, 2-D
 * and 3-D: the transposed im2col and the scalar loop) covers every kernel form (channels or pixels as GEMM rows, the input read directly for a
 * 1x1, the depthwise row kernel with stride 1, 2 and 3, the scalar loop); the weights and inputs
 * are exact f32 bytes in the graph text. Special values: an infinite weight next to padding (the
 * padded tap's fma(0, inf, acc) makes the element NaN in both), negative zeros. Each case runs
 * once without a parallel-for hook and once on a 2-thread pool.
 *
 * Usage: test_fconv    (prints "N passed, M failed"; exit status 1 on failure) */
#define _POSIX_C_SOURCE 200809L
#include "qdqc/qdqc.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long passed, failed;
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t
rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float
rndf(void)
{
    return ((float)(rnd() % 20001) - 10000.0f) / 4096.0f;
}

typedef struct Case {
    int ns, n, c, m, g, k[3], s[3], d[3], pb[3], pe[3], in[3], out[3];
    int bias, tr, op[3]; /* tr: conv_transpose, op: its output_padding */
} Case;

static void
hex(char **p, const float *v, size_t cnt)
{
    const unsigned char *b = (const unsigned char *)v;
    *p += sprintf(*p, "0x");
    for (size_t i = 0; i < cnt * 4; i++)
        *p += sprintf(*p, "%02X", b[i]);
}

static void
dims(char **p, int n, int c, const Case *t, const int *sp)
{
    *p += sprintf(*p, "f32[%d,%d", n, c);
    for (int i = 0; i < t->ns; i++)
        *p += sprintf(*p, ",%d", sp[i]);
    *p += sprintf(*p, "]");
}

static void
ints(char **p, const char *name, const int *a, int cnt, const int *b)
{
    *p += sprintf(*p, ", %s=[", name);
    for (int i = 0; i < cnt; i++)
        *p += sprintf(*p, "%s%d", i ? ", " : "", a[i]);
    for (int i = 0; b && i < cnt; i++)
        *p += sprintf(*p, ", %d", b[i]);
    *p += sprintf(*p, "]");
}

/* the graph text of case t with weights w [m][c/g][k...] and bias b [m] */
static char *
graph(const Case *t, const float *w, size_t nw, const float *b)
{
    char *text = malloc(nw * 8 + (size_t)t->m * 8 + 4096), *p = text;
    p += sprintf(p, "graph @fconv(%%x: ");
    dims(&p, t->n, t->c, t, t->in);
    p += sprintf(p, ") -> ");
    dims(&p, t->n, t->m, t, t->out);
    if (t->tr)
        p += sprintf(p, " {\n  %%w = const dense<f32[%d,%d", t->c, t->m / t->g);
    else
        p += sprintf(p, " {\n  %%w = const dense<f32[%d,%d", t->m, t->c / t->g);
    for (int i = 0; i < t->ns; i++)
        p += sprintf(p, ",%d", t->k[i]);
    p += sprintf(p, "], ");
    hex(&p, w, nw);
    p += sprintf(p, ">\n");
    if (t->bias) {
        p += sprintf(p, "  %%b = const dense<f32[%d], ", t->m);
        hex(&p, b, (size_t)t->m);
        p += sprintf(p, ">\n");
    }
    p += sprintf(p, "  %%y = %s %%x, %%w%s, group=%d", t->tr ? "conv_transpose" : "conv",
                 t->bias ? ", %b" : "", t->g);
    ints(&p, "strides", t->s, t->ns, NULL);
    ints(&p, "pads", t->pb, t->ns, t->pe);
    ints(&p, "dilations", t->d, t->ns, NULL);
    if (t->tr)
        ints(&p, "output_padding", t->op, t->ns, NULL);
    p += sprintf(p, " : ");
    dims(&p, t->n, t->m, t, t->out);
    p += sprintf(p, "\n  return %%y\n}\n");
    return text;
}

static void
check(int ok, const char *what, const char *detail)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL %s%s%s\n", what, detail && *detail ? ": " : "", detail ? detail : "");
}

static size_t
numel(int n, int c, const Case *t, const int *sp)
{
    size_t r = (size_t)n * (size_t)c;
    for (int i = 0; i < t->ns; i++)
        r *= (size_t)sp[i];
    return r;
}

/* Compile case t on every path in isas and compare with the reference. special: 1 = an
 * infinite weight (tap 0 of channel 0), 2 = negative zeros in x and w */
static void
run_case(const Case *t, const char *const *isas, int nisa, qdqc_threadpool *pool, int special,
         const char *label)
{
    size_t nw = t->tr ? (size_t)t->c * (size_t)(t->m / t->g) : (size_t)t->m * (size_t)(t->c / t->g), nx = numel(t->n, t->c, t, t->in);
    size_t ny = numel(t->n, t->m, t, t->out);
    for (int i = 0; i < t->ns; i++)
        nw *= (size_t)t->k[i];
    float *w = malloc(nw * 4), *b = malloc((size_t)t->m * 4), *x = malloc(nx * 4);
    float *yr = malloc(ny * 4), *yj = malloc(ny * 4);
    for (size_t i = 0; i < nw; i++)
        w[i] = special == 2 && i % 3 == 0 ? -0.0f : rndf();
    for (int i = 0; i < t->m; i++)
        b[i] = rndf();
    for (size_t i = 0; i < nx; i++)
        x[i] = special == 2 && i % 2 == 0 ? -0.0f : rndf();
    if (special == 1)
        w[0] = INFINITY;
    char *text = graph(t, w, nw, b);
    qdqc_context *ctx = qdqc_context_create();
    qdqc_module *mod = NULL;
    qdqc_status st = qdqc_module_parse(ctx, text, strlen(text), "fconv.qir", &mod);
    check(st == QDQC_OK, label, qdqc_context_get_diagnostics(ctx));
    const void *ins[1] = {x};
    void *ro[1] = {yr}, *jo[1] = {yj};
    if (st == QDQC_OK) {
        st = qdqc_module_run_reference(mod, ins, ro);
        check(st == QDQC_OK, label, qdqc_context_get_diagnostics(ctx));
    }
    for (int i = 0; st == QDQC_OK && i < nisa; i++) {
        qdqc_compile_options *o = qdqc_compile_options_create();
        bool base = strcmp(isas[i], "x86-64") == 0; /* no FMA hardware: llvm.fma calls fmaf */
        qdqc_compile_options_set(o, "isa", base ? "generic" : isas[i]);
        if (base)
            qdqc_compile_options_set(o, "mcpu", "x86-64");
        qdqc_jit *j = NULL;
        qdqc_status sj = qdqc_jit_create(mod, o, &j);
        char what[160];
        snprintf(what, sizeof what, "%s [%s]", label, isas[i]);
        check(sj == QDQC_OK, what, qdqc_context_get_diagnostics(ctx));
        for (int par = 0; sj == QDQC_OK && par < 2; par++) {
            memset(yj, 0x5A, ny * 4);
            if (par)
                qdqc_jit_set_parallel_for(j, qdqc_threadpool_parallel_for, pool);
            check(qdqc_jit_run(j, ins, jo) == QDQC_OK && memcmp(yr, yj, ny * 4) == 0, what,
                  par ? "JIT (2 threads) != reference" : "JIT != reference");
        }
        if (special == 1 && sj == QDQC_OK)
            check(isnan(yj[0]), what, "an infinite weight at a padded tap gives NaN");
        qdqc_jit_destroy(j);
        qdqc_compile_options_destroy(o);
    }
    qdqc_module_destroy(mod);
    qdqc_context_destroy(ctx);
    free(text), free(w), free(b), free(x), free(yr), free(yj);
}

/* a random valid conv_transpose with ns spatial dims */
static void
random_case_t(Case *t, int ns)
{
    static const int gs[][3] = {{1, 5, 7}, {1, 16, 3}, {2, 4, 6}, {3, 6, 3}, {4, 4, 4}, {1, 24, 20}};
    memset(t, 0, sizeof *t);
    const int *gcm = gs[rnd() % 6];
    t->ns = ns, t->tr = 1, t->g = gcm[0], t->c = gcm[1], t->m = gcm[2];
    t->n = 1 + (int)(rnd() % 4 == 0);
    t->bias = (int)(rnd() % 3 != 0);
    for (int i = 0; i < ns; i++) {
        t->k[i] = 1 + (int)(rnd() % 4);
        t->s[i] = 1 + (int)(rnd() % 3);
        t->d[i] = 1 + (int)(rnd() % 4 == 0);
        t->in[i] = 1 + (int)(rnd() % (i == ns - 1 ? 20 : 8));
        t->op[i] = (int)(rnd() % (uint32_t)t->s[i]);
        int full = (t->in[i] - 1) * t->s[i] + (t->k[i] - 1) * t->d[i] + 1 + t->op[i];
        t->pb[i] = (int)(rnd() % 3) % full;
        t->pe[i] = (int)(rnd() % 3) % (full - t->pb[i]);
        t->out[i] = full - t->pb[i] - t->pe[i];
    }
}

/* a random valid case with ns spatial dims */
static void
random_case(Case *t, int ns)
{
    static const int gs[][3] = {{1, 5, 7}, {1, 3, 16}, {2, 4, 6}, {3, 6, 3}, {6, 6, 6},
                                {8, 8, 16}, {1, 20, 4}, {4, 8, 4}, {1, 64, 8}, {5, 5, 10}};
    memset(t, 0, sizeof *t);
    const int *gcm = gs[rnd() % 10];
    t->ns = ns, t->g = gcm[0], t->c = gcm[1], t->m = gcm[2];
    t->n = 1 + (int)(rnd() % 4 == 0);
    t->bias = (int)(rnd() % 3 != 0);
    for (int i = 0; i < ns; i++) {
        t->k[i] = 1 + (int)(rnd() % (i == ns - 1 ? 5 : 3));
        t->s[i] = 1 + (int)(rnd() % 3 == 0) + (int)(rnd() % 6 == 0);
        t->d[i] = 1 + (int)(rnd() % 4 == 0);
        t->pb[i] = (int)(rnd() % 3);
        t->pe[i] = (int)(rnd() % 3);
        int span = (t->k[i] - 1) * t->d[i] + 1;
        t->in[i] = span + (int)(rnd() % (i == ns - 1 ? 40 : 12));
        t->out[i] = (t->in[i] + t->pb[i] + t->pe[i] - span) / t->s[i] + 1;
    }
}

int
main(void)
{
    const char *isas[5];
    int nisa = 0;
    isas[nisa++] = "generic";
#if defined(__x86_64__)
    isas[nisa++] = "x86-64";
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        isas[nisa++] = "avx2";
    if (__builtin_cpu_supports("avxvnni"))
        isas[nisa++] = "avxvnni";
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        isas[nisa++] = "avx512vnni";
#endif
    qdqc_threadpool *pool = qdqc_threadpool_create(2);
    char label[96];
    for (int i = 0; i < 48; i++) {
        Case t;
        random_case(&t, i % 4 == 3 ? 1 : 2);
        snprintf(label, sizeof label, "case %d (%dD g%d c%d m%d)", i, t.ns, t.g, t.c, t.m);
        run_case(&t, isas, nisa, pool, 0, label);
    }
    for (int i = 0; i < 24; i++) {
        Case t;
        random_case_t(&t, i % 4 == 3 ? 1 : 2);
        snprintf(label, sizeof label, "conv_transpose %d (%dD g%d c%d m%d)", i, t.ns, t.g, t.c, t.m);
        run_case(&t, isas, nisa, pool, 0, label);
    }
    Case t = {.ns = 2, .n = 1, .c = 4, .m = 8, .g = 1, .k = {3, 3}, .s = {1, 1}, .d = {1, 1},
              .pb = {1, 1}, .pe = {1, 1}, .in = {6, 7}, .out = {6, 7}, .bias = 1};
    run_case(&t, isas, nisa, pool, 1, "inf weight, padded");
    run_case(&t, isas, nisa, pool, 2, "negative zeros");
    t.g = 4, t.c = 4, t.m = 4;
    run_case(&t, isas, nisa, pool, 1, "inf weight, padded, depthwise");
    run_case(&t, isas, nisa, pool, 2, "negative zeros, depthwise");
    Case t3 = {.ns = 3, .n = 1, .c = 2, .m = 3, .g = 1, .k = {2, 3, 3}, .s = {1, 2, 1},
               .d = {1, 1, 2}, .pb = {1, 0, 1}, .pe = {0, 1, 2}, .in = {3, 6, 7}, .bias = 1};
    for (int i = 0; i < 3; i++)
        t3.out[i] = (t3.in[i] + t3.pb[i] + t3.pe[i] - (t3.k[i] - 1) * t3.d[i] - 1) / t3.s[i] + 1;
    run_case(&t3, isas, nisa, pool, 0, "3-D");
    t3.tr = 1, t3.op[0] = 0, t3.op[1] = 1, t3.op[2] = 1;
    for (int i = 0; i < 3; i++)
        t3.out[i] = (t3.in[i] - 1) * t3.s[i] + (t3.k[i] - 1) * t3.d[i] + 1 + t3.op[i] - t3.pb[i] - t3.pe[i];
    run_case(&t3, isas, nisa, pool, 0, "3-D conv_transpose");
    qdqc_threadpool_destroy(pool);
    printf("%ld passed, %ld failed (paths:", passed, failed);
    for (int i = 0; i < nisa; i++)
        printf(" %s", isas[i]);
    printf(")\n");
    return failed ? 1 : 0;
}
