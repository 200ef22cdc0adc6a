/* compile.c: public API of the code generator (qdqc_module_compile_*, qdqc_jit_*): thin
 * wrappers over lib/codegen. Nothing here prints or exits. */
#include "api/dynamic.h"
#include "api/report.h"
#include "codegen/codegen.h"
#include "support/file_write.h"
#include "support/support.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct qdqc_compile_options {
    CgOptions o;
};

/* One step of the compiled run (qdqc_jit_step_*). */
typedef struct JitStep {
    char *name, *op;
    uint64_t macs;
} JitStep;

struct qdqc_jit {
    CgJitModel *m;
    qdqc_parallel_for_fn pf;
    void *pf_ctx;
    qdqc_profile_fn hook;
    void *hook_ctx;
    JitStep *steps;
    size_t nsteps;
    /* a qdqc_jit_run is in progress: the session's one workspace holds its activations, so a
     * second run at the same time (another thread, or the parallel-for hook calling back)
     * would overwrite them; it gets QDQC_ERR_BUSY instead */
    atomic_bool running;
    bool dynamic; /* compiled with a run-time dimension: qdqc_jit_run_shapes */
    qdqc_context *ctx;
};

qdqc_compile_options *
qdqc_compile_options_create(void)
{
    qdqc_compile_options *o = try_calloc(1, sizeof *o);
    if (o)
        cg_options_init(&o->o);
    return o;
}

void
qdqc_compile_options_destroy(qdqc_compile_options *o)
{
    free(o);
}

static bool
copy_opt(char *dst, size_t n, const char *v)
{
    if (strlen(v) >= n)
        return false;
    memcpy(dst, v, strlen(v) + 1);
    return true;
}

static bool
profile_opt(CgOptions *c, const char *v)
{
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
        return false;
    c->profile = v[0] == '1';
    return true;
}

qdqc_status
qdqc_compile_options_set(qdqc_compile_options *o, const char *name, const char *value)
{
    if (!o || !name || !value)
        return QDQC_ERR_INVALID_ARG;
    CgOptions *c = &o->o;
    bool ok = !strcmp(name, "target") ? copy_opt(c->triple, sizeof c->triple, value)
              : !strcmp(name, "mcpu") ? copy_opt(c->cpu, sizeof c->cpu, value)
              : !strcmp(name, "mattr") ? copy_opt(c->mattr, sizeof c->mattr, value)
              : !strcmp(name, "name") ? copy_opt(c->prefix, sizeof c->prefix, value)
              : !strcmp(name, "isa") ? copy_opt(c->isa, sizeof c->isa, value)
              : !strcmp(name, "profile") ? profile_opt(c, value)
                                       : false;
    return ok ? QDQC_OK : QDQC_ERR_INVALID_ARG;
}

qdqc_status
qdqc_compile_options_check(qdqc_context *ctx, const qdqc_compile_options *opts)
{
    if (!ctx)
        return QDQC_ERR_INVALID_ARG;
    CgOptions o;
    if (opts)
        o = opts->o;
    else
        cg_options_init(&o);
    CgTarget t;
    char err[512];
    if (!cg_options_target(&o, &t, err, sizeof err)) {
        diag_error(ctx, NULL, "%s", err);
        return QDQC_ERR_INVALID_ARG;
    }
    CgGemmIsa isa;
    if (o.isa[0] && !cg_isa_lookup(&t, o.isa, &isa, err, sizeof err)) {
        diag_error(ctx, NULL, "%s", err);
        return QDQC_ERR_INVALID_ARG;
    }
    bool ident = o.prefix[0] && !(o.prefix[0] >= '0' && o.prefix[0] <= '9');
    for (const char *p = o.prefix; ident && *p; p++)
        ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                (*p >= '0' && *p <= '9') || *p == '_';
    if (!ident) {
        diag_error(ctx, NULL, "symbol prefix '%s' is not a C identifier", o.prefix);
        return QDQC_ERR_INVALID_ARG;
    }
    return QDQC_OK;
}

static void
resolve(qdqc_module *m, const qdqc_compile_options *opts, CgOptions *o)
{
    if (opts)
        *o = opts->o;
    else
        cg_options_init(o);
    o->requant_fixed = m->ctx->opt.requant_fixed != 0;
}

/* The module to compile and its options: m itself when its shapes are static, or with a
 * run-time dimension (api_dyn_prepare) the module at size 1 in *unit, o->dyn = dyn (free both
 * after the compile: ir_module_destroy, api_dyn_free; both are empty otherwise). NULL with a
 * diagnostic. */
static Module *
compile_input(Module *m, const qdqc_compile_options *opts, CgOptions *o, Module **unit,
              CgDyn *dyn)
{
    resolve(m, opts, o);
    int dynamic = api_dyn_prepare(m, unit, dyn);
    if (dynamic < 0 || (!dynamic && !ir_require_static(&m->g, "compiling")))
        return NULL;
    o->dyn = dynamic ? dyn : NULL;
    return dynamic ? *unit : m;
}

qdqc_status
qdqc_module_compile_outputs(qdqc_module *m, const qdqc_compile_options *opts, size_t n,
                            const qdqc_emit_kind *kinds, char **outs, size_t *lens)
{
    if (!m || (n && (!kinds || !outs || !lens)))
        return QDQC_ERR_INVALID_ARG;
    CgEmitKind ck[8];
    if (n > sizeof ck / sizeof ck[0])
        return QDQC_ERR_INVALID_ARG;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned)kinds[i] > QDQC_EMIT_BITCODE)
            return QDQC_ERR_INVALID_ARG;
        ck[i] = kinds[i] == QDQC_EMIT_OBJ      ? CG_EMIT_OBJ
                : kinds[i] == QDQC_EMIT_ASM    ? CG_EMIT_ASM
                : kinds[i] == QDQC_EMIT_LLVM   ? CG_EMIT_LLVM
                : kinds[i] == QDQC_EMIT_HEADER ? CG_EMIT_HEADER
                                               : CG_EMIT_BITCODE;
    }
    CgOptions o;
    Module *unit = NULL;
    CgDyn dyn;
    Module *cm = compile_input(m, opts, &o, &unit, &dyn);
    if (!cm)
        return QDQC_ERR_CODEGEN;
    OOM_TRAP_ENTER(trap, m->ctx, m->filename, QDQC_ERR_NOMEM);
    qdqc_status st = cg_compile_kinds(cm, &o, n, ck, outs, lens) ? QDQC_OK : QDQC_ERR_CODEGEN;
    OOM_TRAP_LEAVE(trap);
    ir_module_destroy(unit);
    api_dyn_free(&dyn);
    return st;
}

qdqc_status
qdqc_module_compile_to_memory(qdqc_module *m, const qdqc_compile_options *opts,
                              qdqc_emit_kind kind, char **out, size_t *len)
{
    if (!m || !out || !len)
        return QDQC_ERR_INVALID_ARG;
    return qdqc_module_compile_outputs(m, opts, 1, &kind, out, len);
}

qdqc_status
qdqc_module_compile_to_file(qdqc_module *m, const qdqc_compile_options *opts, const char *path,
                            qdqc_emit_kind kind)
{
    if (!m || !path)
        return QDQC_ERR_INVALID_ARG;
    char *buf;
    size_t len;
    qdqc_status st = qdqc_module_compile_to_memory(m, opts, kind, &buf, &len);
    if (st != QDQC_OK)
        return st;
    char err[1200];
    if (!write_file_atomic(path, buf, len, err, sizeof err)) {
        diag_error(m->ctx, NULL, "%s", err);
        st = QDQC_ERR_IO;
    }
    free(buf);
    return st;
}

static char *
dup_str(const char *a, const char *sep, const char *b)
{
    size_t la = strlen(a), ls = b ? strlen(sep) : 0, lb = b ? strlen(b) : 0;
    char *s = qdqc_alloc_fails() ? NULL : malloc(la + ls + lb + 1);
    if (s) {
        memcpy(s, a, la);
        memcpy(s + la, sep, ls);
        memcpy(s + la + ls, b ? b : "", lb + 1);
    }
    return s;
}

/* the ONNX node name, else "%" and the name of the node's first result */
static char *
node_name(Graph *g, Node *n)
{
    if (n->loc.node && n->loc.node[0])
        return dup_str(n->loc.node, "", NULL);
    return dup_str("%", "", n->nout ? ir_value_name(g, n->out[0]) : "?");
}

/* The session's step table from the module it was compiled from (false: out of memory). */
static bool
jit_steps(qdqc_jit *j, Module *m)
{
    size_t n;
    const CgStep *cs = cg_jit_model_steps(j->m, &n);
    j->steps = n ? (qdqc_alloc_fails() ? NULL : calloc(n, sizeof *j->steps)) : NULL;
    if (n && !j->steps)
        return false;
    j->nsteps = n;
    Graph *g = &m->g;
    for (size_t i = 0; i < n; i++) {
        Node *a = ir_node(g, (NodeId){cs[i].node});
        Node *b = cs[i].fused ? ir_node(g, (NodeId){cs[i].fused}) : NULL;
        char *na = node_name(g, a), *nb = b ? node_name(g, b) : NULL;
        JitStep *st = &j->steps[i];
        st->name = na && (!b || nb) ? dup_str(na, " + ", nb) : NULL;
        st->op = dup_str(op_info(a->op)->name, "+", b ? op_info(b->op)->name : NULL);
        st->macs = report_node_macs(g, a);
        free(na);
        free(nb);
        if (!st->name || !st->op)
            return false;
    }
    return true;
}

qdqc_status
qdqc_jit_create(qdqc_module *m, const qdqc_compile_options *opts, qdqc_jit **out)
{
    if (!m || !out)
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    CgOptions o;
    Module *unit = NULL;
    CgDyn dyn;
    Module *cm = compile_input(m, opts, &o, &unit, &dyn);
    if (!cm)
        return QDQC_ERR_CODEGEN;
    OOM_TRAP_ENTER(trap, m->ctx, m->filename, QDQC_ERR_NOMEM);
    CgJitModel *jm = cg_jit_model_create(cm, &o);
    OOM_TRAP_LEAVE(trap);
    api_dyn_free(&dyn);
    if (!jm) {
        ir_module_destroy(unit);
        return QDQC_ERR_CODEGEN;
    }
    qdqc_jit *j = try_calloc(1, sizeof *j);
    if (!j) {
        cg_jit_model_destroy(jm);
        ir_module_destroy(unit);
        diag_error(m->ctx, NULL, "out of memory: JIT session");
        return QDQC_ERR_NOMEM;
    }
    j->m = jm;
    j->dynamic = unit != NULL;
    j->ctx = m->ctx;
    atomic_init(&j->running, false);
    bool steps_ok = jit_steps(j, cm);
    ir_module_destroy(unit);
    if (!steps_ok) {
        qdqc_jit_destroy(j);
        diag_error(m->ctx, NULL, "out of memory: JIT session");
        return QDQC_ERR_NOMEM;
    }
    *out = j;
    return QDQC_OK;
}

void
qdqc_jit_set_parallel_for(qdqc_jit *j, qdqc_parallel_for_fn pf, void *ctx)
{
    if (!j)
        return;
    j->pf = pf;
    j->pf_ctx = ctx;
}

qdqc_status
qdqc_jit_run(qdqc_jit *j, const void *const *inputs, void *const *outputs)
{
    if (!j)
        return QDQC_ERR_INVALID_ARG;
    /* No diagnostic for BUSY: the caller may be another thread than the context's. */
    if (atomic_exchange_explicit(&j->running, true, memory_order_acquire))
        return QDQC_ERR_BUSY;
    bool ok = cg_jit_model_run(j->m, inputs, outputs, (CgParallelFor)j->pf, j->pf_ctx,
                               (CgStepHook)j->hook, j->hook_ctx);
    atomic_store_explicit(&j->running, false, memory_order_release);
    return ok ? QDQC_OK : QDQC_ERR_RUNTIME;
}

qdqc_status
qdqc_jit_run_shapes(qdqc_jit *j, const int64_t *const *input_shapes, const void *const *inputs,
                    int64_t *const *output_shapes, void *const *outputs)
{
    if (!j || !input_shapes || (outputs && !inputs))
        return QDQC_ERR_INVALID_ARG;
    if (!j->dynamic) {
        diag_error(j->ctx, NULL, "qdqc_jit_run_shapes: the session has no run-time dimension "
                   "(qdqc_context_set_dim_range); run it with qdqc_jit_run");
        return QDQC_ERR_INVALID_ARG;
    }
    if (atomic_exchange_explicit(&j->running, true, memory_order_acquire))
        return QDQC_ERR_BUSY;
    int st = cg_jit_model_run_shapes(j->m, input_shapes, inputs, output_shapes, outputs,
                                     (CgParallelFor)j->pf, j->pf_ctx);
    atomic_store_explicit(&j->running, false, memory_order_release);
    return (qdqc_status)st;
}

size_t
qdqc_jit_workspace_size(const qdqc_jit *j)
{
    return j ? cg_jit_model_workspace_size(j->m) : 0;
}

size_t
qdqc_jit_step_count(const qdqc_jit *j)
{
    return j ? j->nsteps : 0;
}

const char *
qdqc_jit_step_name(const qdqc_jit *j, size_t i)
{
    return j && i < j->nsteps ? j->steps[i].name : NULL;
}

const char *
qdqc_jit_step_op(const qdqc_jit *j, size_t i)
{
    return j && i < j->nsteps ? j->steps[i].op : NULL;
}

uint64_t
qdqc_jit_step_macs(const qdqc_jit *j, size_t i)
{
    return j && i < j->nsteps ? j->steps[i].macs : 0;
}

qdqc_status
qdqc_jit_set_profile_hook(qdqc_jit *j, qdqc_profile_fn fn, void *ctx)
{
    if (!j || (fn && !cg_jit_model_profiled(j->m)))
        return QDQC_ERR_INVALID_ARG;
    j->hook = fn;
    j->hook_ctx = ctx;
    return QDQC_OK;
}

void
qdqc_jit_destroy(qdqc_jit *j)
{
    if (!j)
        return;
    cg_jit_model_destroy(j->m);
    for (size_t i = 0; j->steps && i < j->nsteps; i++) {
        free(j->steps[i].name);
        free(j->steps[i].op);
    }
    free(j->steps);
    free(j);
}
