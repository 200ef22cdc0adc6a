/* build.c: the graph-level code generator: target -> plan -> lower -> ABI -> optimise.
 *
 * cg_build resolves the target and kernel path (target/options.c), creates the TargetMachine and
 * the module (target/), plans the home of every value and the steps (plan/plan.c), emits one
 * internal function per step,
 *     void PREFIX.nK(ptr operands..., ptr results..., ptr scratch, ptr pf, ptr pf_ctx)
 * (`i32` for the nodes that check run-time operands, cg_node_may_fail: 0 or a qdqc_status)
 * through the op -> emitter table (lower/lower.c), then the public functions of the ABI (abi.c)
 * and runs the pass pipeline. The same CgBuilt drives the object writer and the JIT, so they
 * cannot disagree. */
#include "codegen/abi.h"
#include "codegen/codegen.h"

#include "codegen/lower/lower.h"
#include "codegen/plan/plan.h"
#include "codegen/se_step.h"
#include "codegen/target/module.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
cg_options_init(CgOptions *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->prefix, sizeof o->prefix, "model");
}

static bool
valid_prefix(const char *p)
{
    if (!p[0] || (p[0] >= '0' && p[0] <= '9'))
        return false;
    for (const char *s = p; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static void
kb_init(Kb *k, CgBuilt *b, Graph *g, const CgOptions *o, char *err, size_t errlen)
{
    memset(k, 0, sizeof *k);
    irb_init(&k->ir, b->mod, LLVMCreateBuilderInContext(b->ctx));
    k->t = &b->t;
    k->isa = b->isa;
    k->rq = cg_rq_mode(o->requant_fixed);
    k->g = g;
    k->prefix = o->prefix;
    k->err = err;
    k->errlen = errlen;
}

static void
dispose_tm(void *tm)
{
    cg_target_machine_destroy(tm);
}

static void
dispose_ctx(void *ctx)
{
    LLVMContextDispose(ctx); /* with the module in it */
}

void
cg_built_free(CgBuilt *b)
{
    if (!b)
        return;
    oom_undefer(b->ctx);
    oom_undefer(b->tm);
    cg_module_destroy(b->ctx, b->mod);
    cg_target_machine_destroy(b->tm);
    free(b->steps);
    memset(b, 0, sizeof *b);
}

static bool
build_fail(Module *m, CgBuilt *b, const char *msg)
{
    diag_error(m->ctx, NULL, "codegen: %s", msg);
    cg_built_free(b);
    return false;
}


/* The internal function of step s (its node and, when a qadd is fused into it, the qadd's
 * results and other operand), emitted through the op -> emitter table. */
static LLVMValueRef
emit_step(Kb *k, CgPlan *p, uint32_t s, bool *ok)
{
    Graph *g = k->g;
    if (p->se_of[p->steps[s]]) /* a squeeze-excitation group: se_step.c */
        return cg_emit_se_step(k, p, s, ok);
    Node *n = ir_node(g, (NodeId){p->steps[s]});
    Node *on = cg_plan_step_out(p, g, s);
    bool chain = p->chain_next[p->steps[s]] != 0; /* a float chain (plan.h) */
    unsigned nres = on != n && !chain ? 1 : 0;
    if (n->nin > 16 || on->nout > 16) {
        *ok = cg_fail(k, n, "more than 16 operands or results");
        return NULL;
    }
    unsigned np = n->nin + on->nout + nres + 3;
    char name[96];
    snprintf(name, sizeof name, "%s.n%u.%s%s", k->prefix, s, op_info(n->op)->name,
             nres ? "_qadd" : chain ? "_chain" : "");
    bool may_fail = cg_node_may_fail(g, n);
    LLVMValueRef fn = cg_step_fn(k, name, np, may_fail);
    CgNodeArgs a;
    memset(&a, 0, sizeof a);
    for (uint32_t i = 0; i < n->nin; i++)
        a.in[i] = n->in[i].id ? LLVMGetParam(fn, i) : NULL;
    for (uint32_t i = 0; i < on->nout; i++)
        a.out[i] = LLVMGetParam(fn, n->nin + i);
    if (nres) {
        a.res_add = on;
        a.res = LLVMGetParam(fn, n->nin + on->nout);
    }
    for (uint32_t c = p->chain_next[p->steps[s]]; chain && c; c = p->chain_next[c]) {
        if (a.nchain == CG_CHAIN_MAX) {
            *ok = cg_fail(k, n, "a float chain of more than %d nodes", CG_CHAIN_MAX);
            return NULL;
        }
        a.chain[a.nchain++] = ir_node(g, (NodeId){c});
    }
    a.scratch = LLVMGetParam(fn, n->nin + on->nout + nres);
    a.pf = LLVMGetParam(fn, n->nin + on->nout + nres + 1);
    a.pf_ctx = LLVMGetParam(fn, n->nin + on->nout + nres + 2);
    *ok = cg_emit_node(k, n, &a);
    if (*ok && may_fail)
        LLVMBuildRet(k->b, cg_i32(k, QDQC_OK));
    else if (*ok)
        LLVMBuildRetVoid(k->b);
    return fn;
}

/* Target, TargetMachine and the empty module; false after build_fail. */
static bool
build_target(Module *m, const CgOptions *o, CgBuilt *b, char *err, size_t errlen)
{
    if (!valid_prefix(o->prefix))
        return build_fail(m, b, "--name must be a C identifier");
    if (!cg_options_target(o, &b->t, err, errlen))
        return build_fail(m, b, err);
    b->isa = cg_gemm_isa_best(&b->t);
    if (o->isa[0] && !cg_isa_lookup(&b->t, o->isa, &b->isa, err, errlen))
        return build_fail(m, b, err);
    if (!cg_target_machine_create(&b->t, &b->tm, err, errlen) ||
        !cg_module_create(o->prefix, b->tm, &b->ctx, &b->mod, err, errlen))
        return build_fail(m, b, err);
    /* an allocation failure from here on frees them from the API's entry point */
    oom_defer(dispose_tm, b->tm);
    oom_defer(dispose_ctx, b->ctx);
    return true;
}

/* Plan graph m and emit its steps and ABI functions (o's prefix) into b's module; the
 * workspace at least ws_floor; with steps, b's step table. False after setting err. */
static bool
emit_graph(Module *m, const CgOptions *o, CgBuilt *b, char *err, size_t errlen, int64_t ws_floor,
           bool steps)
{
    Graph *g = &m->g;
    Kb k;
    kb_init(&k, b, g, o, err, errlen);
    k.gemm_cache = cg_gemm_cache_create(); /* NULL (out of memory): no sharing */
    CgPlan plan;
    CgPlanStatus ps = cg_plan_build(&k, &plan);
    if (ps == CG_PLAN_OOM_VALUES || ps == CG_PLAN_OOM_NODES) {
        LLVMDisposeBuilder(k.b);
        cg_gemm_cache_destroy(k.gemm_cache);
        cg_built_free(b);
        if (ps == CG_PLAN_OOM_VALUES)
            oom_raise("code generation: planning %u values", g->values.len);
        oom_raise("code generation: planning %u nodes", g->nodes.len);
    }
    bool ok = ps == CG_PLAN_OK;
    if (ok && plan.workspace < ws_floor)
        plan.workspace = ws_floor; /* PREFIX_workspace_size serves every graph of the module */
    if (ok)
        b->workspace = plan.workspace;

    LLVMValueRef *fns = xcalloc(ok && plan.nsteps ? plan.nsteps : 1, sizeof *fns);
    for (uint32_t s = 0; ok && s < plan.nsteps; s++)
        fns[s] = emit_step(&k, &plan, s, &ok);
    if (ok)
        cg_emit_abi(&k, &plan, fns, o->profile, o->dyn);
    LLVMDisposeBuilder(k.b);
    cg_gemm_cache_destroy(k.gemm_cache);
    free(fns);
    /* the steps in run order, for the step table of the JIT and the header */
    b->steps = ok && steps ? try_calloc(plan.nsteps ? plan.nsteps : 1, sizeof *b->steps) : NULL;
    for (uint32_t s = 0; b->steps && s < plan.nsteps; s++) {
        CgStep *st = &b->steps[s];
        uint32_t se = plan.se_of[plan.steps[s]]; /* named by its pool and its scale */
        st->node = se ? plan.se[se - 1].node[0] : plan.steps[s];
        st->fused = se ? plan.steps[s]
                    : plan.fuse[plan.steps[s]] ? (uint32_t)(plan.fuse[plan.steps[s]] - g->nodes.data) : 0;
    }
    b->nsteps = b->steps ? plan.nsteps : 0;
    bool steps_oom = ok && steps && !b->steps;
    uint32_t nsteps = ps == CG_PLAN_OK ? plan.nsteps : 0;
    if (ps == CG_PLAN_OK)
        cg_plan_free(&plan);
    if (steps_oom) {
        cg_built_free(b);
        oom_raise("code generation: the table of %u steps", nsteps);
    }
    return ok;
}

/* The graph at the run-time dimension's chunk size (CgDyn.chunk) as PREFIX_b<chunk>_run_ex
 * (cg_dyn_chunk_prefix), internal to the module: PREFIX_run_shapes calls it on each full chunk (abi.c). */
static bool
emit_chunk_graph(const CgOptions *o, CgBuilt *b, char *err, size_t errlen)
{
    CgOptions oc = *o;
    cg_dyn_chunk_prefix(o->prefix, o->dyn, oc.prefix, sizeof oc.prefix);
    oc.profile = false;
    oc.dyn = NULL;
    if (!emit_graph(o->dyn->chunk_unit, &oc, b, err, errlen, 0, false))
        return false;
    static const char *const abi[] = {"run_ex", "run", "workspace_size"};
    for (size_t i = 0; i < sizeof abi / sizeof abi[0]; i++) {
        char name[160];
        snprintf(name, sizeof name, "%s_%s", oc.prefix, abi[i]);
        LLVMValueRef fn = LLVMGetNamedFunction(b->mod, name);
        if (fn)
            LLVMSetLinkage(fn, LLVMInternalLinkage);
    }
    return true;
}

bool
cg_build(Module *m, const CgOptions *o, CgBuilt *b)
{
    char err[1024] = "";
    memset(b, 0, sizeof *b);
    double t0 = clock_ms();
    if (!build_target(m, o, b, err, sizeof err))
        return false;
    bool ok = !o->dyn || !o->dyn->chunk || emit_chunk_graph(o, b, err, sizeof err);
    ok = ok && emit_graph(m, o, b, err, sizeof err, b->workspace, true);
    if (!ok) {
        if (err[0])
            diag_error(m->ctx, NULL, "codegen: %s", err);
        cg_built_free(b);
        return false;
    }
    ctx_phase_end(m->ctx, m->filename, "lower", t0);
    /* functions that differ only in their constants share one body (target/merge.c) */
    t0 = clock_ms();
    cg_module_merge(b->mod);
    ctx_phase_end(m->ctx, m->filename, "merge", t0);
    /* O2, not O3: the GEMM microkernels are explicit intrinsics with constant trip counts and
     * the row loops vectorise at O2 as well; O3's extra passes cost ~8% of the compile time of
     * ResNet-18 and gained nothing measurable at run time (docs/performance.md). */
    t0 = clock_ms();
    if (!cg_module_optimize(b->mod, b->tm, "default<O2>", err, sizeof err))
        return build_fail(m, b, err);
    ctx_phase_end(m->ctx, m->filename, "llvm-opt", t0);
    return true;
}
