/* pipeline.c: the pass registry, the default pipeline and the pass manager.
 * The default pipeline is one readable list, top to bottom; docs/passes.md describes each
 * pass. After each pass the graph is compacted (dead nodes swept, topological order restored)
 * and, with verify-each, verified. --print-after / --print-after-all print the IR through the
 * context's print sink; --time-passes reports each pass's time as a remark. */
#define _POSIX_C_SOURCE 200809L
#include "pass.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const PassInfo passes[] = {
#define PASS(NAME, FN, DESC) {NAME, FN, DESC},
#include "passes.def"
#undef PASS
};

static const char default_pipeline[] =
    "f16-widen,"        /* f16 arithmetic in f32 (ModelOpt's fp16 float parts) */
    "canonicalize,"
    "float-patterns,"   /* written-out Gelu / LayerNorm -> gelu, layernorm */
    "weight-fold,"      /* Q(f32 const) -> int const; int weights typed; float bias -> int32 */
    "bn-fold,"          /* batchnorm into conv weight scales (new float bias) */
    "qdq-propagate,"    /* DQ forward / Q backward over layout ops, round trips, duplicates */
    "weight-fold,"      /* biases of bn-fold, and of ops whose input DQ just moved next to them */
    "qdq-fold,"         /* conv/conv_transpose/matmul/gemm [+relu/clip] -> qconv/qmatmul */
    "qdq-elementwise,"  /* add/sub/mul, concat, average pooling, reduce-mean */
    "lut,"              /* 8-bit element-wise functions as tables */
    "int-lut,"          /* integer element-wise DAGs of one byte (SiLU, HardSwish, GELU) as tables */
    "qdq-propagate,"    /* round trips exposed by the folds */
    "matmul-integer-fold," /* MatMulInteger -> Cast -> Mul(scales) [-> Add]: one op */
    "weight-only,"      /* float matmul/gemm x DQ(4/8-bit const) -> wmatmul */
    "dq-const-fold,"    /* constant weights of float islands dequantized once */
    "dce,"
    "float-islands";    /* remarks: what stays float and why */

const char *
pass_default_pipeline(void)
{
    return default_pipeline;
}

size_t
pass_count(void)
{
    return ARRAY_LEN(passes);
}

const PassInfo *
pass_at(size_t i)
{
    return i < ARRAY_LEN(passes) ? &passes[i] : NULL;
}

const PassInfo *
pass_lookup(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(passes); i++)
        if (strcmp(passes[i].name, name) == 0)
            return &passes[i];
    return NULL;
}

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool
defer_passes(Module *m, const char *pipeline)
{
    size_t old = m->deferred_passes ? strlen(m->deferred_passes) : 0;
    char *p = realloc(m->deferred_passes, old + strlen(pipeline) + 2);
    if (!p) {
        diag_error(m->ctx, NULL, "out of memory");
        return false;
    }
    snprintf(p + old, strlen(pipeline) + 2, "%s%s", old ? "," : "", pipeline);
    m->deferred_passes = p;
    return true;
}

bool
pass_run_pipeline(Module *m, const char *pipeline)
{
    qdqc_context *ctx = m->ctx;
    if (!pipeline || !*pipeline || strcmp(pipeline, "default") == 0)
        pipeline = default_pipeline;
    /* expand and validate every name first, so a typo fails before any pass runs */
    char *list = xstrdup(pipeline);
    VEC(const PassInfo *) seq = {0};
    bool ok = true;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (strcmp(tok, "default") == 0) {
            const char *p = default_pipeline;
            while (*p) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)len, p);
                vec_push(&seq, pass_lookup(name));
                p = e ? e + 1 : p + len;
            }
            continue;
        }
        const PassInfo *pi = pass_lookup(tok);
        if (!pi) {
            diag_error(ctx, NULL, "unknown pass '%s' (see --list-passes)", tok);
            ok = false;
            continue;
        }
        vec_push(&seq, pi);
    }
    free(list);
    if (!ok) {
        vec_free(&seq);
        return false;
    }
    int64_t lo, hi;
    uint32_t nsym;
    if (seq.len && ir_runtime_symbol(&m->g, &lo, &hi, &nsym)) {
        /* a run-time dimension: the passes run on each specialisation at compile time */
        vec_free(&seq);
        return defer_passes(m, pipeline);
    }
    if (seq.len && !ir_require_static(&m->g, "the passes")) {
        vec_free(&seq);
        return false;
    }
    pass_check_keep_float(m);
    PassCtx pc = {ctx, m, &ctx->opt, false};
    for (uint32_t i = 0; i < seq.len && ok; i++) {
        const PassInfo *pi = seq.data[i];
        QDQC_ASSERT(pi);
        double t0 = ctx->opt.time_passes ? now_ms() : 0;
        pi->fn(&pc, &m->g);
        if (pc.failed || ctx->nerrors) {
            ok = false;
            break;
        }
        if (!ir_compact(&m->g)) {
            ok = false;
            break;
        }
        if (ctx->opt.time_passes) {
            Loc l = {.file = m->filename};
            diag_emit(ctx, QDQC_SEV_REMARK, &l, "pass %s: %.3f ms", pi->name, now_ms() - t0);
        }
        if (ctx->opt.verify_each && !ir_verify(&m->g)) {
            Loc l = {.file = m->filename};
            diag_error(ctx, &l, "verification failed after pass '%s'", pi->name);
            ok = false;
            break;
        }
        if (ctx->print_sink && (ctx->opt.print_after_all || pass_in_list(ctx->opt.print_after, pi->name))) {
            char *s = ir_print(&m->g);
            char hdr[128];
            snprintf(hdr, sizeof hdr, "// -----// IR Dump After %s //----- //\n", pi->name);
            ctx->print_sink(ctx->print_user, hdr);
            ctx->print_sink(ctx->print_user, s);
            free(s);
        }
    }
    vec_free(&seq);
    return ok;
}
