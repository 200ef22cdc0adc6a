/* fuzz.c: qdqc-fuzz, the differential fuzzer of qdqc (docs/testing.md).
 *
 *   qdqc-fuzz --count N --seed S [--slots K] [--isa a,b] [--out DIR] [--no-shrink] [-v]
 *   qdqc-fuzz --check FILE.qir...       re-check reproducers (regression tests)
 *   qdqc-fuzz --print --seed S          print one generated graph
 *   qdqc-fuzz --mutate ... MODEL.onnx...  mutants of real models (mutate.c)
 * --qdq-pairs adds Q->DQ pairs whose dequantize has its own parameters (gen.c, op_qdq_pair);
 * --qdq-types adds Q->DQ side trips through i4/u4/i16/u16 (gen.c, op_qdq_types).
 * --transformer adds attention (QDQ MatMul of two activations through Reshape/Transpose,
 * Softmax between Q/DQ) and float islands (LayerNorm, GELU and element-wise chains between
 * DQ and Q) (gen.c, op_attention, op_island).
 * --select-ops adds where, comparisons, expand, tile, reduce_sum/max/min, argmax, a gather by
 * run-time indices and a cast through f16 (gen.c, op_select).
 * --dynq adds ONNX Runtime's dynamic quantization of a MatMul (gen.c, op_dynq).
 * --a16 makes half of the quantized activations 16-bit (u16/i16: A16W8 integer ops).
 * --wonly adds weight-only matmul/gemm/conv on float activations (gen.c, op_wonly).
 * Symbolic dimensions: half of the graphs (--symbolic: all, --no-symbolic: none) whose first
 * input's paths go only through ops that type symbols are also written with one or two of
 * that input's dimensions as symbols (?b, ?s; gen.c, sym_choose). That form must parse,
 * verify and print the same after a round trip, and bound to the sizes (qdqc_context_set_dim)
 * print exactly as the graph written with them; the three checks below run on the bound form,
 * and again on the form bound to larger sizes (each + 1..3: a graph never written with sizes);
 * then the graph is compiled once with a symbol as a run-time dimension and run at three sizes
 * against the reference bound to each (check_dynamic).
 *
 * Each random QDQ graph (gen.c) is checked three ways, through the public API only:
 *   1. literal QDQ semantics (reference interpreter, no passes) vs the integer reference
 *      (default pipeline): every output element within 1 quantization step where the bound
 *      applies (the op's inputs agreed exactly, or it is the first rounding op on its path);
 *   2. integer reference vs JIT code, bit for bit, for every GEMM ISA path the host runs
 *      (and with a 2-thread pool on the first one);
 *   3. every fixed_every-th graph: the same two checks with --requant=fixed.
 * A failing graph is shrunk (slots switched off, outputs reduced, dimensions capped) while it
 * fails the same way, and written as text IR. Exit status: 0 all agree, 1 a mismatch, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include "qdqc/qdqc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FZ_OK, FZ_UNSUP, FZ_GEN, FZ_REF_LIT, FZ_PIPE, FZ_REF_INT, FZ_BOUND, FZ_JIT_ERR, FZ_JIT,
       FZ_FIXED, FZ_SYM_RT, FZ_SYM_BIND, FZ_DYN, FZ_NCLASS };
static const char *const class_name[] = {"ok", "jit-unsupported", "invalid-graph",
                                         "ref-literal-error", "pipeline-error",
                                         "ref-integer-error", "qdq-vs-int", "jit-error",
                                         "jit-vs-ref", "jit-vs-ref-fixed",
                                         "symbolic-roundtrip", "symbolic-vs-static",
                                         "dynamic-vs-static"};

typedef struct Opts {
    const char *isas[8];
    int nisa;
    int fixed_every;
    bool threads;
    bool verbose;
    bool rotate;       /* one ISA path per graph (round robin) instead of all */
    bool strict_unsup; /* an op the code generator does not support is a failure */
    int inject;        /* self-test: 1 perturbs the integer reference, 2 the JIT output, 3 the
                          printed IR of a bound symbolic graph, 4 the output of a run with a
                          run-time dimension at its largest size */
} Opts;

typedef struct Result {
    int cls;
    const char *isa; /* JIT classes */
    char detail[2048];
    int out;         /* failing output (-1 unknown) */
    double worst_nonstrict; /* largest lit-vs-int difference where the bound does not apply */
    long compared;
    bool symbolic;   /* the graph was checked in its symbolic form, bound */
    int dyn;         /* check_dynamic: 0 not tried, 1 compiled with a run-time dimension and
                        run, 2 refused by the compiler (a symbol that is not batch-like) */
    int dyn_sizes;   /* sizes run through qdqc_jit_run_shapes and compared */
} Result;

typedef struct Bufs {
    size_t n;
    void **p;
    size_t *bytes;
    char (*et)[8];
} Bufs;

static void
bufs_free(Bufs *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->p[i]);
    free(b->p);
    free(b->bytes);
    free(b->et);
    memset(b, 0, sizeof *b);
}

static size_t
io_bytes(qdqc_module *m, size_t i, bool out, const char **et)
{
    int rank = out ? qdqc_module_output_rank(m, i) : qdqc_module_input_rank(m, i);
    const int64_t *d = out ? qdqc_module_output_dims(m, i) : qdqc_module_input_dims(m, i);
    *et = out ? qdqc_module_output_elem_type(m, i) : qdqc_module_input_elem_type(m, i);
    size_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= (size_t)d[k];
    return n * qdqc_elem_type_size(*et);
}

static void
bufs_alloc(Bufs *b, qdqc_module *m, bool out)
{
    b->n = out ? qdqc_module_output_count(m) : qdqc_module_input_count(m);
    b->p = calloc(b->n + 1, sizeof *b->p);
    b->bytes = calloc(b->n + 1, sizeof *b->bytes);
    b->et = calloc(b->n + 1, sizeof *b->et);
    for (size_t i = 0; i < b->n; i++) {
        const char *et;
        b->bytes[i] = io_bytes(m, i, out, &et);
        snprintf(b->et[i], sizeof b->et[i], "%s", et ? et : "?");
        b->p[i] = calloc(b->bytes[i] ? b->bytes[i] : 1, 1);
    }
}

/* Inputs: integers uniform over their type, f32 uniform in [-4.4, 4.4) with one value in
 * eight on a multiple of 1/64 (exact, often a quantization tie). */
static void
fill_inputs(Bufs *b, uint64_t seed, const char *text)
{
    Rng r = {seed * 0x9E3779B97F4A7C15ull + 7};
    for (size_t i = 0; i < b->n; i++) {
        const char *et = b->et[i];
        /* a run-time scale ("// fz-scale INPUT LO HI", --qdq-pairs): uniform in [lo, hi] */
        bool scale = false;
        for (const char *p = text; p && (p = strstr(p, "// fz-scale ")) != NULL; p += 12) {
            int in;
            double lo, hi;
            if (sscanf(p + 12, "%d %lf %lf", &in, &lo, &hi) == 3 && (size_t)in == i &&
                !strcmp(et, "f32")) {
                float *f = b->p[i];
                for (size_t k = 0; k < b->bytes[i] / 4; k++)
                    f[k] = (float)(lo + (hi - lo) * fz_unif(&r));
                scale = true;
            }
        }
        if (scale)
            continue;
        if (!strcmp(et, "f32")) {
            float *f = b->p[i];
            for (size_t k = 0; k < b->bytes[i] / 4; k++) {
                double u = fz_unif(&r) * 8.8 - 4.4;
                if (fz_int(&r, 0, 7) == 0)
                    u = floor(u * 64) / 64;
                f[k] = (float)u;
            }
        } else {
            uint8_t *p = b->p[i];
            for (size_t k = 0; k < b->bytes[i]; k++)
                p[k] = (uint8_t)fz_next(&r);
        }
    }
}

typedef struct Meta {
    int n;
    GenOut out[FZ_MAXOUT + 1];
} Meta;

static void
parse_meta(const char *text, Meta *m)
{
    memset(m, 0, sizeof *m);
    const char *p = text;
    while ((p = strstr(p, "// fz-out ")) != NULL && m->n < FZ_MAXOUT) {
        char kind[8];
        GenOut *o = &m->out[m->n];
        double s;
        if (sscanf(p + 10, "%7s %lf %d %d %d %d %d", kind, &s, &o->depth, &o->deps[0],
                   &o->deps[1], &o->deps[2], &o->deps[3]) == 7) {
            o->kind = !strcmp(kind, "q") ? OUT_Q : !strcmp(kind, "dq") ? OUT_DQ : OUT_F32;
            o->scale = (float)s;
            m->n++;
        }
        p += 10;
    }
}

static double
elem_f(const void *p, const char *et, size_t k)
{
    if (!strcmp(et, "f32"))
        return ((const float *)p)[k];
    if (!strcmp(et, "u8"))
        return ((const uint8_t *)p)[k];
    if (!strcmp(et, "i8"))
        return ((const int8_t *)p)[k];
    if (!strcmp(et, "i32"))
        return ((const int32_t *)p)[k];
    if (!strcmp(et, "u16"))
        return ((const uint16_t *)p)[k];
    if (!strcmp(et, "i16"))
        return ((const int16_t *)p)[k];
    if (!strcmp(et, "f64"))
        return ((const double *)p)[k];
    return ((const uint8_t *)p)[k];
}

/* lit vs int: every output within the bound where it applies */
static bool
compare_bound(const Bufs *lit, const Bufs *in, const Meta *meta, Result *res)
{
    bool exact[FZ_MAXOUT + 1];
    for (size_t i = 0; i < lit->n; i++) {
        exact[i] = true;
        if (lit->bytes[i] != in->bytes[i] || strcmp(lit->et[i], in->et[i])) {
            res->cls = FZ_BOUND;
            res->out = (int)i;
            snprintf(res->detail, sizeof res->detail, "output %zu: %s (%zu bytes) vs %s (%zu bytes)",
                     i, lit->et[i], lit->bytes[i], in->et[i], in->bytes[i]);
            return false;
        }
        const GenOut *o = (int)i < meta->n ? &meta->out[i] : NULL;
        size_t es = qdqc_elem_type_size(lit->et[i]), n = es ? lit->bytes[i] / es : 0;
        double maxabs = 0;
        for (size_t k = 0; k < n; k++) {
            double a = fabs(elem_f(lit->p[i], lit->et[i], k));
            if (a > maxabs && !isinf(a))
                maxabs = a;
        }
        double unit = 1;
        if (!strcmp(lit->et[i], "f32"))
            unit = o && o->kind == OUT_DQ ? (double)o->scale : 1e-4 * maxabs + 1e-6;
        bool strict = false;
        if (o) {
            strict = o->depth <= 1;
            bool deps_exact = true;
            for (int k = 0; k < 4; k++)
                if (o->deps[k] == -2 || (o->deps[k] >= 0 && !exact[o->deps[k]]))
                    deps_exact = false;
            strict |= deps_exact;
        }
        double worst = 0;
        size_t worst_k = 0, ndiff = 0;
        for (size_t k = 0; k < n; k++) {
            double a = elem_f(lit->p[i], lit->et[i], k), b = elem_f(in->p[i], in->et[i], k);
            double d = (isnan(a) && isnan(b)) || a == b ? 0 : fabs(a - b) / unit;
            /* a dequantized output holds f32(q * s): count whole steps, not the last bits of
             * the two f32 products (a 1-step flip would measure 1 + ~1e-6 otherwise) */
            if (d > 0 && !isnan(d) && o && o->kind == OUT_DQ && !strcmp(lit->et[i], "f32"))
                d = fabs(rint(a / unit) - rint(b / unit));
            if (isnan(d))
                d = INFINITY;
            if (d > 0)
                ndiff++;
            if (d > worst) {
                worst = d;
                worst_k = k;
            }
        }
        res->compared += (long)n;
        if (ndiff)
            exact[i] = false;
        if (worst > 1 + 1e-9) {
            if (!strict) {
                if (worst > res->worst_nonstrict)
                    res->worst_nonstrict = worst;
                continue;
            }
            res->cls = FZ_BOUND;
            res->out = (int)i;
            snprintf(res->detail, sizeof res->detail,
                     "output %zu (%s): %zu of %zu elements differ, max %.4g units at [%zu]: "
                     "literal %.9g, integer %.9g",
                     i, lit->et[i], ndiff, n, worst, worst_k,
                     elem_f(lit->p[i], lit->et[i], worst_k), elem_f(in->p[i], in->et[i], worst_k));
            return false;
        }
    }
    return true;
}

static bool
compare_exact(const Bufs *a, const Bufs *b, int cls, const char *isa, const char *what,
              Result *res)
{
    for (size_t i = 0; i < a->n; i++) {
        if (!memcmp(a->p[i], b->p[i], a->bytes[i]))
            continue;
        size_t es = qdqc_elem_type_size(a->et[i]), n = a->bytes[i] / es, nd = 0, first = 0;
        for (size_t k = 0; k < n; k++) {
            if (memcmp((char *)a->p[i] + k * es, (char *)b->p[i] + k * es, es)) {
                double x = elem_f(a->p[i], a->et[i], k), y = elem_f(b->p[i], b->et[i], k);
                if (isnan(x) && isnan(y))
                    continue;
                if (!nd)
                    first = k;
                nd++;
            }
        }
        if (!nd)
            continue;
        res->cls = cls;
        res->isa = isa;
        res->out = (int)i;
        snprintf(res->detail, sizeof res->detail,
                 "%s: output %zu (%s): %zu of %zu elements differ, first [%zu]: ref %.9g, jit %.9g",
                 what, i, a->et[i], nd, n, first, elem_f(a->p[i], a->et[i], first),
                 elem_f(b->p[i], b->et[i], first));
        return false;
    }
    return true;
}

static void
first_diag(qdqc_context *ctx, char *buf, size_t n)
{
    const char *d = qdqc_context_get_diagnostics(ctx);
    const char *e = d ? strstr(d, "error:") : NULL;
    const char *s = e ? e : d ? d : "";
    size_t k = strcspn(s, "\n");
    snprintf(buf, n, "%.*s", (int)(k < 600 ? k : 600), s);
}

/* text parsed (with the bindings of ctx) and run through the default pipeline into *m (which
 * the caller destroys either way); false with res->cls = cls and the first diagnostic */
static bool
parse_default(qdqc_context *ctx, const char *text, qdqc_module **m, int cls, Result *res)
{
    if (qdqc_module_parse(ctx, text, strlen(text), "fuzz.qir", m) == QDQC_OK &&
        qdqc_module_run_passes(*m, "default") == QDQC_OK)
        return true;
    res->cls = cls;
    first_diag(ctx, res->detail, sizeof res->detail);
    return false;
}

static bool
run_jit(qdqc_module *m, const char *isa, const Bufs *in, Bufs *out, qdqc_threadpool *pool,
        char *err, size_t errlen)
{
    qdqc_compile_options *o = qdqc_compile_options_create();
    if (isa && *isa)
        qdqc_compile_options_set(o, "isa", isa);
    qdqc_jit *j = NULL;
    qdqc_status st = qdqc_jit_create(m, o, &j);
    qdqc_compile_options_destroy(o);
    if (st == QDQC_OK) {
        st = qdqc_jit_run(j, (const void *const *)in->p, out->p);
        if (st == QDQC_OK && pool) {
            Bufs o2 = {0};
            bufs_alloc(&o2, m, true);
            qdqc_jit_set_parallel_for(j, qdqc_threadpool_parallel_for, pool);
            st = qdqc_jit_run(j, (const void *const *)in->p, o2.p);
            for (size_t i = 0; st == QDQC_OK && i < o2.n; i++)
                if (memcmp(o2.p[i], out->p[i], out->bytes[i])) {
                    snprintf(err, errlen, "output %zu differs between 1 and 2 threads", i);
                    bufs_free(&o2);
                    qdqc_jit_destroy(j);
                    return false;
                }
            bufs_free(&o2);
        }
    }
    qdqc_jit_destroy(j);
    if (st != QDQC_OK) {
        snprintf(err, errlen, "%s", qdqc_status_name(st));
        return false;
    }
    return true;
}

/* pre put before res->detail (which is cut to fit) */
static void
prefix_detail(Result *res, const char *pre)
{
    size_t n = strlen(res->detail), k = strlen(pre);
    if (n + k >= sizeof res->detail)
        n = sizeof res->detail - k - 1;
    memmove(res->detail + k, res->detail, n);
    memcpy(res->detail, pre, k);
    res->detail[n + k] = 0;
}

/* A symbolic graph's bindings, "// fz-dim NAME SIZE" lines, set on ctx; how many. */
static int
bind_dims(qdqc_context *ctx, const char *text)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, "// fz-dim ")) != NULL; p += 10) {
        char name[64];
        long long size;
        if (sscanf(p + 10, "%63s %lld", name, &size) == 2 &&
            qdqc_context_set_dim(ctx, name, size) == QDQC_OK)
            n++;
    }
    return n;
}

/* The first line where a and b differ, both versions, into res->detail. */
static void
first_difference(const char *what, const char *a, const char *b, Result *res)
{
    int line = 1;
    const char *la = a, *lb = b;
    for (size_t k = 0; a[k] && a[k] == b[k]; k++)
        if (a[k] == '\n') {
            line++;
            la = a + k + 1;
            lb = b + k + 1;
        }
    int na = (int)strcspn(la, "\n"), nb = (int)strcspn(lb, "\n");
    snprintf(res->detail, sizeof res->detail, "%s: line %d differs: '%.*s' vs '%.*s'", what,
             line, na < 600 ? na : 600, la, nb < 600 ? nb : 600, lb);
}

/* text parsed (with the bindings of ctx) and verified, printed; NULL with the diagnostic */
static char *
parse_print(qdqc_context *ctx, const char *text, Result *res, int cls)
{
    qdqc_module *m = NULL;
    char *p = NULL;
    if (qdqc_module_parse(ctx, text, strlen(text), "fuzz.qir", &m) == QDQC_OK &&
        qdqc_module_verify(m) == QDQC_OK)
        p = qdqc_module_print(m);
    if (!p) {
        res->cls = cls;
        first_diag(ctx, res->detail, sizeof res->detail);
    }
    qdqc_module_destroy(m);
    return p;
}

/* The checks of a graph's symbolic form (fz-dim lines) before it is bound for the three-way
 * check: unbound, it parses, verifies and prints with its symbols, and the printed IR parses
 * and prints the same (round trip); bound to the sizes, it prints as the same graph written
 * with them (static_text; NULL: not compared). */
static bool
check_symbolic(const char *text, const char *static_text, const Opts *op, Result *res)
{
    res->symbolic = true;
    qdqc_context *ctx = qdqc_context_create();
    char *p1 = parse_print(ctx, text, res, FZ_SYM_RT), *p2 = NULL, *pb = NULL, *ps = NULL;
    if (p1 && !strstr(p1, "?")) {
        res->cls = FZ_SYM_RT;
        snprintf(res->detail, sizeof res->detail, "unbound: printed without a symbol");
    } else if (p1 && (p2 = parse_print(ctx, p1, res, FZ_SYM_RT)) != NULL && strcmp(p1, p2)) {
        res->cls = FZ_SYM_RT;
        first_difference("printed, parsed and printed again", p1, p2, res);
    }
    qdqc_context_destroy(ctx);
    if (res->cls == FZ_OK && static_text) {
        qdqc_context *cb = qdqc_context_create(), *cs = qdqc_context_create();
        bind_dims(cb, text);
        pb = parse_print(cb, text, res, FZ_SYM_BIND);
        ps = pb ? parse_print(cs, static_text, res, FZ_SYM_BIND) : NULL;
        if (pb && ps && op->inject == 3)
            pb[strcspn(pb, "]")] = ')'; /* self-test: the first shape's bracket */
        if (pb && ps && strcmp(pb, ps)) {
            res->cls = FZ_SYM_BIND;
            first_difference("bound vs written with the sizes", pb, ps, res);
        }
        qdqc_context_destroy(cb);
        qdqc_context_destroy(cs);
    }
    qdqc_string_free(p1);
    qdqc_string_free(p2);
    qdqc_string_free(pb);
    qdqc_string_free(ps);
    return res->cls == FZ_OK;
}

/* The three-way check of one graph text. */
static void
check_text(const char *text, uint64_t input_seed, bool fixed, const Opts *op, Result *res)
{
    memset(res, 0, sizeof *res);
    res->out = -1;
    Meta meta;
    parse_meta(text, &meta);
    qdqc_context *ctx = qdqc_context_create();
    res->symbolic = bind_dims(ctx, text) > 0;
    qdqc_module *ml = NULL, *mi = NULL;
    Bufs in = {0}, olit = {0}, oint = {0}, ojit = {0};
    if (qdqc_module_parse(ctx, text, strlen(text), "fuzz.qir", &ml) != QDQC_OK ||
        qdqc_module_verify(ml) != QDQC_OK) {
        res->cls = FZ_GEN;
        first_diag(ctx, res->detail, sizeof res->detail);
        goto done;
    }
    bufs_alloc(&in, ml, false);
    fill_inputs(&in, input_seed, text);
    bufs_alloc(&olit, ml, true);
    if (qdqc_module_run_reference(ml, (const void *const *)in.p, olit.p) != QDQC_OK) {
        res->cls = FZ_REF_LIT;
        first_diag(ctx, res->detail, sizeof res->detail);
        goto done;
    }
    if (!parse_default(ctx, text, &mi, FZ_PIPE, res))
        goto done;
    bufs_alloc(&oint, mi, true);
    if (oint.n != olit.n) {
        res->cls = FZ_PIPE;
        snprintf(res->detail, sizeof res->detail, "%zu outputs after the pipeline, %zu before",
                 oint.n, olit.n);
        goto done;
    }
    if (qdqc_module_run_reference(mi, (const void *const *)in.p, oint.p) != QDQC_OK) {
        res->cls = FZ_REF_INT;
        first_diag(ctx, res->detail, sizeof res->detail);
        goto done;
    }
    if (op->inject == 1 && oint.n && oint.bytes[0])
        ((uint8_t *)oint.p[0])[0] ^= 0x6; /* +-2..6 units (or a float bit pattern change) */
    if (!compare_bound(&olit, &oint, &meta, res))
        goto done;
    qdqc_threadpool *pool = op->threads ? qdqc_threadpool_create(2) : NULL;
    int k0 = op->rotate && op->nisa ? (int)(input_seed % (uint64_t)op->nisa) : 0;
    int k1 = op->rotate ? k0 + 1 : op->nisa;
    for (int k = k0; k < k1 && k < op->nisa; k++) {
        bufs_alloc(&ojit, mi, true);
        char err[700] = "";
        if (!run_jit(mi, op->isas[k], &in, &ojit, k == 0 ? pool : NULL, err, sizeof err)) {
            res->cls = FZ_JIT_ERR;
            res->isa = op->isas[k];
            char d[600];
            first_diag(ctx, d, sizeof d);
            if (strstr(d, "codegen:") && !op->strict_unsup)
                res->cls = FZ_UNSUP; /* the code generator refuses the graph: a gap, not a bug */
            snprintf(res->detail, sizeof res->detail, "isa %s: %s %s", op->isas[k], err, d);
            bufs_free(&ojit);
            break;
        }
        if (op->inject == 2 && ojit.n && ojit.bytes[0])
            ((uint8_t *)ojit.p[0])[0] ^= 1;
        char what[64];
        snprintf(what, sizeof what, "isa %s", op->isas[k]);
        bool same = compare_exact(&oint, &ojit, FZ_JIT, op->isas[k], what, res);
        bufs_free(&ojit);
        if (!same)
            break;
    }
    qdqc_threadpool_destroy(pool);
    if (res->cls != FZ_OK || !fixed)
        goto done;
    /* fixed-point requantization: reference and JIT (last ISA) again */
    qdqc_context_set_option(ctx, "requant", "fixed");
    {
        Bufs ofx = {0};
        bufs_alloc(&ofx, mi, true);
        const char *isa = op->nisa ? op->isas[(input_seed / 4 + 1) % (uint64_t)op->nisa] : "";
        if (qdqc_module_run_reference(mi, (const void *const *)in.p, ofx.p) != QDQC_OK) {
            res->cls = FZ_REF_INT;
            first_diag(ctx, res->detail, sizeof res->detail);
        } else if (!compare_bound(&olit, &ofx, &meta, res)) {
            /* literal vs the fixed-mode integer reference, same bound: a fixed-mode result is
             * within 1/2 + E of the exact value and the literal one within 1/2 + (f32 error);
             * both extras are far below 1/2 (docs/numerics.md), so integers differ by <= 1 */
            prefix_detail(res, "requant=fixed: ");
        } else {
            bufs_alloc(&ojit, mi, true);
            char err[700] = "";
            if (!run_jit(mi, isa, &in, &ojit, NULL, err, sizeof err)) {
                res->cls = FZ_JIT_ERR;
                res->isa = isa;
                char d[600];
                first_diag(ctx, d, sizeof d);
                snprintf(res->detail, sizeof res->detail, "fixed, isa %s: %s %s", isa, err, d);
            } else {
                char what[64];
                snprintf(what, sizeof what, "requant=fixed isa %s", isa);
                compare_exact(&ofx, &ojit, FZ_FIXED, isa, what, res);
            }
        }
        bufs_free(&ofx);
    }
done:
    bufs_free(&in);
    bufs_free(&olit);
    bufs_free(&oint);
    bufs_free(&ojit);
    qdqc_module_destroy(ml);
    qdqc_module_destroy(mi);
    qdqc_context_destroy(ctx);
}

/* ---- generation + check, shrinking ---- */

/* The symbolic form with its "// fz-dim" sizes grown by 1..3 each: a graph the generator never
 * wrote with sizes (growing keeps every slice start inside its axis). */
static void
rebind_text(const char *text, uint64_t seed, Sb *out)
{
    Rng r = {seed * 0xD6E8FEB86659FD93ull + 3};
    const char *p = text, *q;
    while ((q = strstr(p, "// fz-dim ")) != NULL) {
        char name[64];
        long long size;
        int n = 0;
        sb_printf(out, "%.*s", (int)(q - p), p);
        if (sscanf(q + 10, "%63s %lld%n", name, &size, &n) < 2) {
            sb_printf(out, "// fz-dim ");
            p = q + 10;
            continue;
        }
        sb_printf(out, "// fz-dim %s %lld", name, size + fz_int(&r, 1, 3));
        p = q + 10 + n;
    }
    sb_printf(out, "%s", p);
}

/* The "// fz-dim NAME SIZE" lines of a symbolic graph (at most 2); how many. */
static int
read_dims(const char *text, char names[2][64], int64_t sizes[2])
{
    int n = 0;
    for (const char *p = text; n < 2 && (p = strstr(p, "// fz-dim ")) != NULL; p += 10) {
        long long size;
        if (sscanf(p + 10, "%63s %lld", names[n], &size) == 2)
            sizes[n++] = size;
    }
    return n;
}

/* ctx with symbol j of names at `size` (a range [1, size] when range is set) and the others at
 * their own sizes. */
static qdqc_context *
dims_context(int ns, char names[2][64], const int64_t sizes[2], int j, int64_t size, bool range)
{
    qdqc_context *ctx = qdqc_context_create();
    for (int k = 0; k < ns; k++) {
        if (k != j)
            qdqc_context_set_dim(ctx, names[k], sizes[k]);
        else if (range)
            qdqc_context_set_dim_range(ctx, names[k], 1, size);
        else
            qdqc_context_set_dim(ctx, names[k], size);
    }
    return ctx;
}

/* One size n of check_dynamic: the graph bound to n through the default pipeline, its integer
 * reference against the run-time-dimension session jd at the same inputs, bit for bit. */
static void
dynamic_size(qdqc_jit *jd, const char *text, qdqc_context *cs, int64_t n, uint64_t seed,
             const char *isa, const char *name, int64_t hi, bool perturb, Result *res)
{
    qdqc_module *ms = NULL;
    Bufs in = {0}, oref = {0}, ojit = {0};
    if (!parse_default(cs, text, &ms, FZ_PIPE, res))
        goto done;
    bufs_alloc(&in, ms, false);
    fill_inputs(&in, seed + (uint64_t)n, text);
    bufs_alloc(&oref, ms, true);
    bufs_alloc(&ojit, ms, true);
    if (qdqc_module_run_reference(ms, (const void *const *)in.p, oref.p) != QDQC_OK) {
        res->cls = FZ_REF_INT;
        first_diag(cs, res->detail, sizeof res->detail);
        goto done;
    }
    const int64_t *shapes[64];
    for (size_t i = 0; i < in.n && i < 64; i++)
        shapes[i] = qdqc_module_input_dims(ms, i);
    char what[160];
    snprintf(what, sizeof what, "run-time dimension %s in [1, %lld], isa %s, at %s = %lld", name,
             (long long)hi, *isa ? isa : "default", name, (long long)n);
    qdqc_status st = in.n > 64 ? QDQC_ERR_INVALID_ARG
                                : qdqc_jit_run_shapes(jd, shapes, (const void *const *)in.p,
                                                      NULL, ojit.p);
    if (st == QDQC_OK && perturb && ojit.n && ojit.bytes[0])
        ((uint8_t *)ojit.p[0])[0] ^= 1; /* self-test (--inject 4) */
    if (st != QDQC_OK) {
        res->cls = FZ_DYN;
        res->isa = isa;
        snprintf(res->detail, sizeof res->detail, "%s: qdqc_jit_run_shapes: %s", what,
                 qdqc_status_name(st));
    } else if (compare_exact(&oref, &ojit, FZ_DYN, isa, what, res)) {
        res->dyn_sizes++;
        for (size_t i = 0; i < oref.n; i++)
            res->compared += (long)(oref.bytes[i] / qdqc_elem_type_size(oref.et[i]));
    }
done:
    bufs_free(&in);
    bufs_free(&oref);
    bufs_free(&ojit);
    qdqc_module_destroy(ms);
}

/* The run-time dimension check of a symbolic graph that passed its other checks: one of its
 * symbols (?b, the one in the earlier axis, for three seeds in four) gets the range
 * [1, size + 3] (qdqc_context_set_dim_range; the other stays bound to its size), the graph
 * is compiled once on one ISA path and run through
 * qdqc_jit_run_shapes at 1, its own size and the top of the range (a range that reaches 4 also
 * has the chunk graph, docs/abi.md), each bit for bit against the integer reference of the
 * graph bound to that size; with --threads the last size on a 2-thread pool. A symbol that is
 * not batch-like is refused by the compiler: counted (res->dyn = 2), not a failure. */
static void
check_dynamic(const char *text, uint64_t seed, const Opts *op, Result *res)
{
    char names[2][64];
    int64_t sizes[2];
    int ns = read_dims(text, names, sizes);
    if (!ns)
        return;
    int j = ns > 1 && seed % 4 == 3; /* mostly ?b, the symbol in the earlier axis */
    int64_t hi = sizes[j] + 3;
    const char *isa = op->nisa ? op->isas[(seed / 2) % (uint64_t)op->nisa] : "";
    qdqc_context *cd = dims_context(ns, names, sizes, j, hi, true);
    qdqc_module *md = NULL;
    qdqc_jit *jd = NULL;
    qdqc_threadpool *pool = NULL;
    if (!parse_default(cd, text, &md, FZ_DYN, res)) {
        prefix_detail(res, "parsed with a run-time dimension: ");
        goto done;
    }
    qdqc_compile_options *o = qdqc_compile_options_create();
    if (*isa)
        qdqc_compile_options_set(o, "isa", isa);
    qdqc_status st = qdqc_jit_create(md, o, &jd);
    qdqc_compile_options_destroy(o);
    if (st != QDQC_OK) {
        res->dyn = 2;
        if (op->verbose) {
            char d[600];
            first_diag(cd, d, sizeof d);
            printf("seed %llu: run-time dimension %s refused: %s\n", (unsigned long long)seed,
                   names[j], d);
        }
        goto done;
    }
    res->dyn = 1;
    int64_t at[3] = {1, sizes[j], hi};
    for (int t = 0; t < 3 && res->cls == FZ_OK; t++) {
        if (t && at[t] == at[t - 1])
            continue;
        if (t == 2 && op->threads) {
            pool = qdqc_threadpool_create(2);
            qdqc_jit_set_parallel_for(jd, qdqc_threadpool_parallel_for, pool);
        }
        qdqc_context *cs = dims_context(ns, names, sizes, j, at[t], false);
        dynamic_size(jd, text, cs, at[t], seed, isa, names[j], hi, t == 2 && op->inject == 4,
                     res);
        qdqc_context_destroy(cs);
    }
done:
    qdqc_jit_destroy(jd);
    qdqc_threadpool_destroy(pool);
    qdqc_module_destroy(md);
    qdqc_context_destroy(cd);
}

/* A symbolic graph is checked in its symbolic form (check_symbolic), then bound to its sizes
 * through the context (qdqc_context_set_dim) for the three-way check, then bound to other
 * sizes (rebind_text) and checked the three ways again; text_out gets the text that failed,
 * or the symbolic form. */
static void
gen_check(const GenSpec *sp, const Opts *op, Result *res, Sb *text_out)
{
    GenGraph gg;
    fz_generate(sp, &gg);
    bool fixed = op->fixed_every > 0 && sp->seed % (uint64_t)op->fixed_every == 0;
    Sb *text = gg.nsym ? &gg.sym_text : &gg.text;
    memset(res, 0, sizeof *res);
    res->out = -1;
    if (!gg.nsym || check_symbolic(gg.sym_text.p, gg.text.p, op, res))
        check_text(text->p, sp->seed, fixed, op, res);
    Sb other = {0};
    if (gg.nsym && res->cls == FZ_OK) {
        Result r2;
        rebind_text(gg.sym_text.p, sp->seed, &other);
        check_text(other.p, sp->seed, fixed, op, &r2);
        r2.compared += res->compared;
        if (res->worst_nonstrict > r2.worst_nonstrict)
            r2.worst_nonstrict = res->worst_nonstrict;
        *res = r2;
        if (res->cls != FZ_OK && res->cls != FZ_UNSUP) {
            prefix_detail(res, "bound to other sizes: ");
            text = &other;
        }
    }
    if (gg.nsym && res->cls == FZ_OK && !fixed)
        check_dynamic(gg.sym_text.p, sp->seed, op, res);
    if (text_out) {
        sb_free(text_out);
        *text_out = *text;
        memset(text, 0, sizeof *text);
    }
    sb_free(&other);
    fz_graph_free(&gg);
}

static bool
same_failure(const Result *a, const Result *b)
{
    if (a->cls != b->cls)
        return false;
    if ((a->cls == FZ_JIT || a->cls == FZ_JIT_ERR || a->cls == FZ_FIXED) && a->isa && b->isa &&
        strcmp(a->isa, b->isa))
        return false;
    return true;
}

static int
shrink(GenSpec *sp, const Opts *op, const Result *orig, Result *last)
{
    int tries = 0;
    Result r;
    *last = *orig;
    /* 1. one output */
    if (sp->all_outputs && orig->out >= 0) {
        GenGraph gg;
        fz_generate(sp, &gg);
        int slot = orig->out < gg.nout ? gg.out[orig->out].slot : -1;
        fz_graph_free(&gg);
        if (slot >= 0) {
            GenSpec t = *sp;
            t.only_slot = slot;
            gen_check(&t, op, &r, NULL);
            tries++;
            if (same_failure(&r, orig)) {
                *sp = t;
                *last = r;
            }
        }
    }
    for (int round = 0; round < 2; round++) {
        bool changed = false;
        /* 2. switch slots off, last first */
        for (int s = sp->nslots - 1; s >= 0; s--) {
            if ((sp->skip >> s) & 1 || s == sp->only_slot)
                continue;
            GenSpec t = *sp;
            t.skip |= 1ull << s;
            gen_check(&t, op, &r, NULL);
            tries++;
            if (same_failure(&r, orig)) {
                *sp = t;
                *last = r;
                changed = true;
            }
        }
        /* 3. smaller dimensions */
        static const int caps[] = {1, 2, 3, 4, 6, 8, 12};
        int *fields[3] = {&sp->maxn, &sp->maxc, &sp->maxhw};
        for (int f = 0; f < 3; f++) {
            for (int c = 0; c < 7 && caps[c] < *fields[f]; c++) {
                GenSpec t = *sp;
                int *tf = f == 0 ? &t.maxn : f == 1 ? &t.maxc : &t.maxhw;
                *tf = caps[c];
                gen_check(&t, op, &r, NULL);
                tries++;
                if (same_failure(&r, orig)) {
                    *sp = t;
                    *last = r;
                    changed = true;
                    break;
                }
            }
        }
        if (!changed)
            break;
    }
    return tries;
}

static void
host_isas(Opts *op)
{
    op->isas[op->nisa++] = "generic";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5))
            continue;
        char *save = NULL;
        bool avx2 = false, vnni = false, avx512 = false;
        for (char *t = strtok_r(line, " \t\n:", &save); t; t = strtok_r(NULL, " \t\n:", &save)) {
            avx2 |= !strcmp(t, "avx2");
            vnni |= !strcmp(t, "avx_vnni");
            avx512 |= !strcmp(t, "avx512_vnni");
        }
        if (avx2)
            op->isas[op->nisa++] = "avx2";
        if (vnni)
            op->isas[op->nisa++] = "avxvnni";
        if (avx512)
            op->isas[op->nisa++] = "avx512vnni";
        break;
    }
    fclose(f);
}

static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    Sb b = {0};
    char buf[65536];
    size_t n;
    sb_printf(&b, "%s", "");
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_printf(&b, "%.*s", (int)n, buf);
    fclose(f);
    return b.p;
}

static void
usage(void)
{
    fprintf(stderr,
            "usage: qdqc-fuzz [--count N] [--seed S] [--slots K] [--isa A,B] [--out DIR]\n"
            "                 [--isa-mode all|rotate] [--fixed-every N] [--no-threads] [--no-shrink]\n"
            "                 [--max-fail N] [--progress N] [--strict-unsupported] [--qdq-pairs]\n"
            "                 [--qdq-types] [--transformer] [--select-ops] [--dynq] [--a16] [--wonly]\n"
            "                 [--symbolic | --no-symbolic] [-v]\n"
            "       qdqc-fuzz --check FILE.qir... [--input-seed S]\n"
            "       qdqc-fuzz --mutate [--count N] [--seed S] [--jobs J] ... MODEL.onnx...\n"
            "       qdqc-fuzz --print [--seed S] [--slots K] [--skip MASK] [--max-n N] [--max-c N]\n"
            "                 [--max-hw N] [--only-slot K] [--symbolic]  (the graph of seed S,\n"
            "                 as shrunk; with --symbolic its symbolic form if it has one)\n");
}

/* The command line of a generating run, --print or --check. */
typedef struct Cli {
    Opts op;
    GenSpec base; /* generator switches shared by every graph */
    long count;
    uint64_t seed, input_seed;
    int slots, max_fail, progress;
    int pmaxn, pmaxc, pmaxhw, ponly; /* --print: the shrinker's knobs */
    uint64_t pskip;
    const char *outdir;
    bool do_shrink, print, check;
    char isabuf[256];
    const char *files[256];
    int nfiles;
} Cli;

/* a flag taking a value: 1 taken, 0 not this flag (v: argv[i + 1] or NULL) */
static int
cli_value(Cli *c, const char *a, const char *v)
{
    if (!v)
        return 0;
    if (!strcmp(a, "--count"))
        c->count = atol(v);
    else if (!strcmp(a, "--seed"))
        c->seed = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--input-seed"))
        c->input_seed = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--slots"))
        c->slots = atoi(v);
    else if (!strcmp(a, "--isa"))
        snprintf(c->isabuf, sizeof c->isabuf, "%s", v);
    else if (!strcmp(a, "--out"))
        c->outdir = v;
    else if (!strcmp(a, "--fixed-every"))
        c->op.fixed_every = atoi(v);
    else if (!strcmp(a, "--max-fail"))
        c->max_fail = atoi(v);
    else if (!strcmp(a, "--isa-mode"))
        c->op.rotate = !strcmp(v, "rotate");
    else if (!strcmp(a, "--skip"))
        c->pskip = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--max-n"))
        c->pmaxn = atoi(v);
    else if (!strcmp(a, "--max-c"))
        c->pmaxc = atoi(v);
    else if (!strcmp(a, "--max-hw"))
        c->pmaxhw = atoi(v);
    else if (!strcmp(a, "--only-slot"))
        c->ponly = atoi(v);
    else if (!strcmp(a, "--progress"))
        c->progress = atoi(v);
    else if (!strcmp(a, "--inject"))
        c->op.inject = atoi(v);
    else
        return 0;
    return 1;
}

/* a switch: 1 taken, 0 not a switch */
static int
cli_switch(Cli *c, const char *a)
{
    GenSpec *g = &c->base;
    if (!strcmp(a, "--qdq-pairs"))
        g->qdq_pairs = true;
    else if (!strcmp(a, "--qdq-types"))
        g->qdq_types = true;
    else if (!strcmp(a, "--transformer"))
        g->transformer = true;
    else if (!strcmp(a, "--select-ops"))
        g->select_ops = true;
    else if (!strcmp(a, "--dynq"))
        g->dynq = true;
    else if (!strcmp(a, "--a16"))
        g->a16 = true;
    else if (!strcmp(a, "--wonly"))
        g->wonly = true;
    else if (!strcmp(a, "--symbolic"))
        g->sym_pct = 100;
    else if (!strcmp(a, "--no-symbolic"))
        g->sym_pct = 0;
    else if (!strcmp(a, "--strict-unsupported"))
        c->op.strict_unsup = true;
    else if (!strcmp(a, "--no-threads"))
        c->op.threads = false;
    else if (!strcmp(a, "--no-shrink"))
        c->do_shrink = false;
    else if (!strcmp(a, "--print"))
        c->print = true;
    else if (!strcmp(a, "--check"))
        c->check = true;
    else if (!strcmp(a, "-v"))
        c->op.verbose = true;
    else
        return 0;
    return 1;
}

/* -1 to go on, else the exit status (0 after --help, 2 for a usage error) */
static int
parse_cli(Cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--isa-mode") && v && strcmp(v, "rotate") && strcmp(v, "all")) {
            usage();
            return 2;
        }
        if (cli_value(c, a, v)) {
            i++;
        } else if (cli_switch(c, a)) {
        } else if (!strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (c->check && a[0] != '-' && c->nfiles < 256) {
            c->files[c->nfiles++] = a;
        } else {
            usage();
            return 2;
        }
    }
    if (c->slots < 1 || c->slots > 64 || c->count < 0) {
        usage();
        return 2;
    }
    if (c->outdir && !fz_mkdirs(c->outdir))
        return 2;
    if (c->isabuf[0]) {
        char *save = NULL;
        for (char *t = strtok_r(c->isabuf, ",", &save); t && c->op.nisa < 8;
             t = strtok_r(NULL, ",", &save))
            c->op.isas[c->op.nisa++] = t;
    } else {
        host_isas(&c->op);
    }
    return -1;
}

/* --check: re-check reproducers (a symbolic one: its round trip, then bound, then with a
 * run-time dimension) */
static int
check_files(const Cli *c)
{
    int bad = 0;
    for (int f = 0; f < c->nfiles; f++) {
        char *text = read_file(c->files[f]);
        if (!text) {
            fprintf(stderr, "qdqc-fuzz: cannot read %s\n", c->files[f]);
            return 2;
        }
        Result r;
        memset(&r, 0, sizeof r);
        if (!strstr(text, "// fz-dim ") || check_symbolic(text, NULL, &c->op, &r))
            check_text(text, c->input_seed, strstr(text, "// fz-fixed") != NULL, &c->op, &r);
        if (r.cls == FZ_OK && strstr(text, "// fz-dim ") && !strstr(text, "// fz-fixed"))
            check_dynamic(text, c->input_seed, &c->op, &r);
        printf("%s: %s%s%s (%ld elements compared%s%s)\n", c->files[f], class_name[r.cls],
               r.cls ? ": " : "", r.cls ? r.detail : "", r.compared,
               r.symbolic ? ", symbolic form bound" : "",
               r.dyn == 1 ? ", run with a run-time dimension"
               : r.dyn == 2 ? ", run-time dimension refused" : "");
        bad += r.cls != FZ_OK && r.cls != FZ_UNSUP;
        free(text);
    }
    return bad ? 1 : 0;
}

/* --print: the graph the run generates for this seed, with the shrinker's knobs as options */
static int
print_graph(Cli *c)
{
    GenSpec base = c->base;
    GenGraph gg;
    base.seed = c->seed;
    Rng r = {c->seed * 0x632BE59BD9B4E019ull};
    base.nslots = fz_int(&r, 1, c->slots);
    base.all_outputs = fz_int(&r, 0, 9) < 6;
    base.skip = c->pskip;
    if (c->pmaxn > 0)
        base.maxn = c->pmaxn;
    if (c->pmaxc > 0)
        base.maxc = c->pmaxc;
    if (c->pmaxhw > 0)
        base.maxhw = c->pmaxhw;
    base.only_slot = c->ponly;
    fz_generate(&base, &gg);
    /* --symbolic: the symbolic form the run checks, when the graph has one */
    fputs(gg.nsym && base.sym_pct == 100 ? gg.sym_text.p : gg.text.p, stdout);
    fz_graph_free(&gg);
    return 0;
}

/* the totals of a generating run */
typedef struct Tally {
    long nclass[FZ_NCLASS], compared, nonstrict, nsymbolic, ndyn, ndyn_refused, ndyn_sizes;
    double worst_nonstrict;
    int nfail, nunsup;
    struct {
        char msg[200];
        long n;
        uint64_t seed;
    } unsup[16];
} Tally;

static void
tally(Tally *t, const Result *res, uint64_t seed)
{
    t->nclass[res->cls]++;
    t->compared += res->compared;
    t->nsymbolic += res->symbolic;
    t->ndyn += res->dyn == 1;
    t->ndyn_refused += res->dyn == 2;
    t->ndyn_sizes += res->dyn_sizes;
    if (res->worst_nonstrict > 0) {
        t->nonstrict++;
        if (res->worst_nonstrict > t->worst_nonstrict)
            t->worst_nonstrict = res->worst_nonstrict;
    }
    if (res->cls != FZ_UNSUP)
        return;
    const char *m = strstr(res->detail, "codegen:");
    int k;
    for (k = 0; k < t->nunsup; k++)
        if (!strcmp(t->unsup[k].msg, m))
            break;
    if (k == t->nunsup && t->nunsup < 16) {
        snprintf(t->unsup[k].msg, sizeof t->unsup[k].msg, "%s", m);
        t->unsup[k].n = 0;
        t->unsup[k].seed = seed;
        t->nunsup++;
    }
    if (k < t->nunsup)
        t->unsup[k].n++;
}

/* a failing graph: shrink it, report it, write its reproducer under --out */
static void
report_failure(const Cli *c, GenSpec *sp, Result *res, Sb *text)
{
    const Opts *op = &c->op;
    Result last = *res;
    int tries = 0;
    if (c->do_shrink && res->cls != FZ_GEN) {
        tries = shrink(sp, op, res, &last);
        gen_check(sp, op, &last, text);
    }
    printf("FAIL seed %llu [%s] %s\n", (unsigned long long)sp->seed, class_name[res->cls],
           res->detail);
    if (tries)
        printf("  shrunk (%d tries) to: %s\n", tries, last.detail);
    char path[1024] = "";
    bool written = false;
    if (c->outdir) {
        snprintf(path, sizeof path, "%s/fuzz-%llu.qir", c->outdir, (unsigned long long)sp->seed);
        Sb file = {0};
        sb_printf(&file, "// %s: %s\n", class_name[last.cls], last.detail);
        if (op->fixed_every > 0 && sp->seed % (uint64_t)op->fixed_every == 0)
            sb_printf(&file, "// fz-fixed\n");
        sb_printf(&file, "// qdqc-fuzz --check %s --input-seed %llu\n", path,
                  (unsigned long long)sp->seed);
        sb_printf(&file, "%s", text->p);
        written = fz_write_file(path, file.p, file.len);
        if (written)
            printf("  reproducer: %s\n", path);
        else
            printf("  reproducer NOT written (%s): the graph follows\n", path);
        sb_free(&file);
    }
    if (!written || op->verbose)
        printf("%s", text->p);
    fflush(stdout);
}

static double
since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void
print_totals(const Tally *t, long count, double secs)
{
    printf("%ld graphs, %ld elements compared, %d mismatches (", count, t->compared, t->nfail);
    for (int c = 2; c < FZ_SYM_RT; c++)
        printf("%s%s %ld", c > 2 ? ", " : "", class_name[c], t->nclass[c]);
    printf("), %ld not compiled (op not supported by the code generator", t->nclass[FZ_UNSUP]);
    printf("), %ld graphs with a propagated difference > 1 (max %.3g units), %.1f s\n",
           t->nonstrict, t->worst_nonstrict, secs);
    printf("symbolic: %ld graphs checked in symbolic form, bound to their sizes and to larger "
           "ones (%s %ld, %s %ld)\n",
           t->nsymbolic, class_name[FZ_SYM_RT], t->nclass[FZ_SYM_RT], class_name[FZ_SYM_BIND],
           t->nclass[FZ_SYM_BIND]);
    printf("run-time dimension: %ld graphs compiled with one and run at %ld sizes, %ld refused "
           "(a symbol that is not batch-like) (%s %ld)\n",
           t->ndyn, t->ndyn_sizes, t->ndyn_refused, class_name[FZ_DYN], t->nclass[FZ_DYN]);
    for (int k = 0; k < t->nunsup; k++)
        printf("  not compiled: %ld x '%s' (first: seed %llu)\n", t->unsup[k].n, t->unsup[k].msg,
               (unsigned long long)t->unsup[k].seed);
}

/* count graphs from seed on, each checked (gen_check), failures shrunk and written */
static int
campaign(Cli *c)
{
    printf("qdqc-fuzz: %ld graphs from seed %llu, up to %d ops, ISA paths:", c->count,
           (unsigned long long)c->seed, c->slots);
    for (int k = 0; k < c->op.nisa; k++)
        printf(" %s", c->op.isas[k]);
    printf("\n");
    fflush(stdout);
    static Tally t;
    memset(&t, 0, sizeof t);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long count = c->count;
    for (long i = 0; i < count; i++) {
        GenSpec sp = c->base;
        sp.seed = c->seed + (uint64_t)i;
        Rng r = {sp.seed * 0x632BE59BD9B4E019ull};
        sp.nslots = fz_int(&r, 1, c->slots);
        sp.all_outputs = fz_int(&r, 0, 9) < 6;
        Result res;
        Sb text = {0};
        gen_check(&sp, &c->op, &res, &text);
        tally(&t, &res, sp.seed);
        if (c->op.verbose)
            printf("seed %llu: %s %s\n", (unsigned long long)sp.seed, class_name[res.cls],
                   res.cls ? res.detail : "");
        if (res.cls != FZ_OK && res.cls != FZ_UNSUP) {
            t.nfail++;
            report_failure(c, &sp, &res, &text);
        }
        sb_free(&text);
        if (c->progress > 0 && (i + 1) % c->progress == 0) {
            printf("progress: %ld graphs, %d mismatches, %ld not compiled, %.0f s\n", i + 1,
                   t.nfail, t.nclass[FZ_UNSUP], since(&t0));
            fflush(stdout);
        }
        if (t.nfail >= c->max_fail && c->max_fail > 0) {
            printf("stopping after %d failures\n", t.nfail);
            count = i + 1;
            break;
        }
    }
    print_totals(&t, count, since(&t0));
    return t.nfail ? 1 : 0;
}

int
main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--mutate"))
            return fz_mutate_main(argc, argv);
    static Cli c;
    c.op.fixed_every = 4;
    c.op.threads = true;
    c.count = 100;
    c.seed = c.input_seed = 1;
    c.slots = 5;
    c.max_fail = 5;
    c.ponly = -1;
    c.do_shrink = true;
    c.base.only_slot = -1;
    c.base.only_kind = -1;
    c.base.maxn = 2;
    c.base.maxc = 24;
    c.base.maxhw = 12;
    c.base.sym_pct = 50;
    int rc = parse_cli(&c, argc, argv);
    if (rc >= 0)
        return rc;
    if (c.check)
        return check_files(&c);
    if (c.print)
        return print_graph(&c);
    return campaign(&c);
}
