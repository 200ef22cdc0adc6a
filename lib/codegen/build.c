/* llvm_graph.c: the graph-level code generator.
 *
 * Plan: every value gets a home: a graph input buffer, a graph output buffer (a node result that
 * is a graph output is written there directly), a constant global (const nodes, materialised
 * only when a kernel reads them at run time), or an offset in the one workspace, planned by
 * liveness (memplan.c). A node may also ask for private scratch (im2col, GEMM staging), which
 * lives only during its step.
 *
 * Emission: one internal function per node, `void PREFIX.nK(ptr operands..., ptr results...,
 * ptr scratch, ptr pf, ptr pf_ctx)` (`i32` for the nodes that check run-time operands,
 * cg_node_may_fail: 0 or a qdqc_status), and the public functions
 *     int PREFIX_run_ex(const void *const *in, void *const *out, void *ws, pf, pf_ctx)
 *     int PREFIX_run(const void *const *in, void *const *out, void *ws)
 *     size_t PREFIX_workspace_size(void)
 * run_ex is straight-line: for each step, compute the operand/result addresses (constant offsets
 * into ws) and call the node function (returning its status at once if it fails); then copy
 * the graph outputs that are not written in place (an output that is a graph input, a
 * constant, or the same value listed twice); then return 0 (QDQC_OK).
 * Tensors are dense, C order, in the graph's logical layout (NCHW): see docs/abi.md.
 * The same CgBuilt drives the object writer and the JIT, so they cannot disagree. */
#include "codegen/codegen.h"

#include "codegen/target/module.h"
#include "codegen/lower/qconv.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum LocKind { LOC_NONE, LOC_IN, LOC_OUT, LOC_WS, LOC_CONST } LocKind;

typedef struct Loc1 {
    LocKind kind;
    int64_t index;   /* input/output index, or memreq index for LOC_WS */
    LLVMValueRef global;
} Loc1;

void
cg_options_init(CgOptions *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->prefix, sizeof o->prefix, "model");
}

/* The CPU and features an --isa implies when no --mcpu is given: the oldest CPU level that has
 * the path's instructions, so the output does not depend on the host and runs on every machine
 * that has them (docs/targets.md, "Which machine"). */
static const struct {
    CgGemmIsa isa;
    bool x86;
    const char *cpu, *mattr, *needs;
} isa_baseline[] = {
    {CG_GEMM_GENERIC, true, "x86-64", "", "nothing"},
    {CG_GEMM_X86_AVX2, true, "x86-64-v3", "", "avx2"},
    {CG_GEMM_X86_AVXVNNI, true, "x86-64-v3", "+avxvnni", "avxvnni, or avx512vnni and avx512vl"},
    {CG_GEMM_X86_AVX512VNNI, true, "x86-64-v4", "+avx512vnni", "avx512vnni and avx512bw"},
    {CG_GEMM_GENERIC, false, "generic", "", "nothing"},
    {CG_GEMM_A64_NEON, false, "generic", "", "neon"},
    {CG_GEMM_A64_DOTPROD, false, "generic", "+dotprod", "dotprod"},
    {CG_GEMM_A64_I8MM, false, "generic", "+dotprod,+i8mm", "i8mm"},
};

/* "generic, avx2, ..." : the kernel paths of one architecture, for messages. */
static void
isa_list(bool x86, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t i = 0; i < sizeof isa_baseline / sizeof isa_baseline[0]; i++)
        if (isa_baseline[i].x86 == x86) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                     cg_gemm_isa_name(isa_baseline[i].isa));
        }
}

/* The table row of kernel path `name` on x86-64 (x86) or AArch64, or -1. */
static int
isa_row(bool x86, const char *name)
{
    for (size_t i = 0; i < sizeof isa_baseline / sizeof isa_baseline[0]; i++)
        if (isa_baseline[i].x86 == x86 && strcmp(cg_gemm_isa_name(isa_baseline[i].isa), name) == 0)
            return (int)i;
    return -1;
}

bool
cg_isa_lookup(const CgTarget *t, const char *name, CgGemmIsa *out, char *err, size_t errlen)
{
    int r = isa_row(t->x86, name);
    if (r < 0) {
        char valid[128];
        isa_list(t->x86, valid, sizeof valid);
        snprintf(err, errlen, "unknown kernel path '%.31s' for %s (valid: %s)", name,
                 t->x86 ? "x86-64" : "aarch64", valid);
        return false;
    }
    if (!cg_gemm_isa_supported(t, isa_baseline[r].isa)) {
        char have[128] = "";
        for (size_t j = 0; j < sizeof isa_baseline / sizeof isa_baseline[0]; j++) {
            CgGemmIsa v = isa_baseline[j].isa;
            size_t used = strlen(have);
            if (isa_baseline[j].x86 == t->x86 && cg_gemm_isa_supported(t, v) &&
                !strstr(have, cg_gemm_isa_name(v)))
                snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "",
                         cg_gemm_isa_name(v));
        }
        snprintf(err, errlen, "kernel path '%s' needs %s, which the target (cpu %s%s%s) lacks; "
                 "its paths: %s", name, isa_baseline[r].needs, t->cpu,
                 t->features[0] ? ", features " : "",
                 strlen(t->features) < 80 ? t->features : "...", have);
        return false;
    }
    *out = isa_baseline[r].isa;
    return true;
}

/* The target is a function of the options alone wherever they say anything about the CPU:
 *   nothing given            the host: its triple, CPU name (tuning) and feature string
 *   only --mattr             the host's CPU and features, then --mattr
 *   --mcpu                   that CPU's features, then --mattr (host: the triple, if no --target)
 *   --isa without --mcpu     the path's baseline CPU (isa_baseline), then --mattr
 *   --target without either  "generic" for that triple, then --mattr
 * so any test that pins --mcpu or --isa emits the same IR on every host. */
bool
cg_options_target(const CgOptions *o, CgTarget *t, char *err, size_t errlen)
{
    if (!o->triple[0] && !o->cpu[0] && !o->mattr[0] && !o->isa[0])
        return cg_target_host(t, err, errlen);
    if (!o->triple[0] && !o->cpu[0] && !o->isa[0])
        return cg_target_parse(t, NULL, "native", o->mattr, err, errlen);
    if (o->cpu[0] || !o->isa[0])
        return cg_target_parse(t, o->triple, o->cpu, o->mattr, err, errlen);
    /* --isa without --mcpu: the architecture first, then the path's baseline */
    if (!cg_target_parse(t, o->triple, "generic", "", err, errlen))
        return false;
    int r = isa_row(t->x86, o->isa);
    if (r >= 0) {
        char mattr[sizeof o->mattr + 32];
        snprintf(mattr, sizeof mattr, "%s%s%s", isa_baseline[r].mattr,
                 isa_baseline[r].mattr[0] && o->mattr[0] ? "," : "", o->mattr);
        return cg_target_parse(t, o->triple, isa_baseline[r].cpu, mattr, err, errlen);
    }
    CgGemmIsa unused;
    return cg_isa_lookup(t, o->isa, &unused, err, errlen); /* the unknown-path message */
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
    k->c = b->ctx;
    k->mod = b->mod;
    k->b = LLVMCreateBuilderInContext(b->ctx);
    k->t = &b->t;
    k->isa = b->isa;
    k->requant_fixed = o->requant_fixed;
    k->g = g;
    k->prefix = o->prefix;
    k->err = err;
    k->errlen = errlen;
    k->i1 = LLVMInt1TypeInContext(k->c);
    k->i8 = LLVMInt8TypeInContext(k->c);
    k->i16 = LLVMInt16TypeInContext(k->c);
    k->i32 = LLVMInt32TypeInContext(k->c);
    k->i64 = LLVMInt64TypeInContext(k->c);
    k->f32 = LLVMFloatTypeInContext(k->c);
    k->f64 = LLVMDoubleTypeInContext(k->c);
    k->ptr = LLVMPointerTypeInContext(k->c, 0);
    k->vd = LLVMVoidTypeInContext(k->c);
}

static void
fn_attrs(Kb *k, LLVMValueRef fn)
{
    cg_function_set_target(fn, k->t, 0);
    unsigned id = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(k->c, id, 0));
}

static LLVMValueRef
value_ptr(Kb *k, Graph *g, Loc1 *loc, ValueId v, LLVMValueRef in, LLVMValueRef out,
          LLVMValueRef ws, const CgMemReq *reqs)
{
    Loc1 *l = &loc[v.id];
    switch (l->kind) {
    case LOC_IN: case LOC_OUT: {
        LLVMValueRef idx = cg_i64(k, l->index);
        LLVMValueRef p = LLVMBuildGEP2(k->b, k->ptr, l->kind == LOC_IN ? in : out, &idx, 1, "");
        return LLVMBuildLoad2(k->b, k->ptr, p, ir_value_name(g, v));
    }
    case LOC_WS:
        return cg_gep(k, ws, cg_i64(k, reqs[l->index].offset));
    case LOC_CONST:
        if (!l->global) {
            const Tensor *t = ir_const_of(g, v);
            l->global = cg_const_bytes(k, t->data, t->nbytes ? t->nbytes : 1, "k");
        }
        return l->global;
    default:
        return LLVMConstPointerNull(k->ptr);
    }
}

static int64_t
value_bytes(Graph *g, ValueId v)
{
    const Type *t = &ir_value(g, v)->type;
    return (int64_t)(type_numel_unchecked(t) * elem_size(t->elem));
}

/* The plan's arrays: a failure is reported by the caller after it freed the others (counted
 * by the allocation-failure test hook like every library allocation). */
static void *
plan_calloc(size_t n, size_t size)
{
    return qdqc_alloc_fails() ? NULL : calloc(n, size);
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

bool
cg_build(Module *m, const CgOptions *o, CgBuilt *b)
{
    char err[1024] = "";
    memset(b, 0, sizeof *b);
    double t0 = clock_ms();
    Graph *g = &m->g;
    if (!valid_prefix(o->prefix))
        return build_fail(m, b, "--name must be a C identifier");
    if (!cg_options_target(o, &b->t, err, sizeof err))
        return build_fail(m, b, err);
    b->isa = cg_gemm_isa_best(&b->t);
    if (o->isa[0] && !cg_isa_lookup(&b->t, o->isa, &b->isa, err, sizeof err))
        return build_fail(m, b, err);
    if (!cg_target_machine_create(&b->t, &b->tm, err, sizeof err) ||
        !cg_module_create(o->prefix, b->tm, &b->ctx, &b->mod, err, sizeof err))
        return build_fail(m, b, err);
    /* an allocation failure from here on frees them from the API's entry point */
    oom_defer(dispose_tm, b->tm);
    oom_defer(dispose_ctx, b->ctx);

    /* ---- plan ---- */
    uint32_t nval = g->values.len, nnodes = g->nodes.len;
    Loc1 *loc = plan_calloc(nval ? nval : 1, sizeof *loc);
    CgMemReq *reqs = plan_calloc((size_t)nval + nnodes + 1, sizeof *reqs);
    int64_t *scratch_req = plan_calloc(nnodes ? nnodes : 1, sizeof *scratch_req);
    uint32_t *steps = plan_calloc(nnodes ? nnodes : 1, sizeof *steps);
    bool ok = loc && reqs && scratch_req && steps;
    if (!ok) {
        free(loc);
        free(reqs);
        free(scratch_req);
        free(steps);
        cg_built_free(b);
        oom_raise("code generation: planning %u values", nval);
    }
    size_t nreq = 0;
    uint32_t nsteps = 0;
    Kb k;
    kb_init(&k, b, g, o, err, sizeof err);
    uint8_t *nhwc = ok ? cg_layout_plan(&k) : NULL;
    k.nhwc = nhwc;
    k.gemm_cache = cg_gemm_cache_create(); /* NULL (out of memory): no sharing */
    /* residual adds fused into the epilogue of the conv before them (cg_residual_add):
     * fuse[conv] = the qadd, whose own step disappears */
    Node **fuse = plan_calloc(nnodes ? nnodes : 1, sizeof *fuse);
    uint32_t *fuse_other = plan_calloc(nnodes ? nnodes : 1, sizeof *fuse_other);
    uint8_t *fused_away = plan_calloc(nnodes ? nnodes : 1, 1);
    uint32_t *uses = plan_calloc(nval ? nval : 1, sizeof *uses);
    if (!(fuse && fuse_other && fused_away && uses)) {
        free(fuse);
        free(fuse_other);
        free(fused_away);
        free(uses);
        free(nhwc);
        free(loc);
        free(reqs);
        free(scratch_req);
        free(steps);
        LLVMDisposeBuilder(k.b);
        cg_gemm_cache_destroy(k.gemm_cache);
        cg_built_free(b);
        oom_raise("code generation: planning %u nodes", nnodes);
    }
    for (uint32_t i = 1; ok && i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        for (uint32_t a = 0; !n->dead && a < n->nin; a++)
            uses[n->in[a].id]++;
    }
    for (uint32_t j = 0; ok && j < g->outputs.len; j++)
        uses[g->outputs.data[j].id]++;
    for (uint32_t i = 1; ok && i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        Node *q = n->dead || fused_away[i] ? NULL : cg_residual_add(&k, n, uses, &fuse_other[i]);
        if (q) {
            fuse[i] = q;
            fused_away[q - g->nodes.data] = 1;
        }
    }
    for (uint32_t i = 0; ok && i < g->inputs.len; i++)
        loc[g->inputs.data[i].id] = (Loc1){LOC_IN, i, NULL};
    for (uint32_t i = 1; ok && i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        if (n->dead)
            continue;
        if (n->op == OP_CONST) {
            loc[n->out[0].id] = (Loc1){LOC_CONST, 0, NULL};
            continue;
        }
        if (fused_away[i])
            continue;
        steps[nsteps] = i;
        int64_t s = cg_node_scratch(&k, n);
        if (s < 0) {
            ok = false;
            break;
        }
        if (s > 0) {
            reqs[nreq] = (CgMemReq){s, (int32_t)nsteps, (int32_t)nsteps, 0};
            scratch_req[nsteps] = (int64_t)nreq++ + 1;
        }
        nsteps++;
    }
    for (uint32_t j = 0; ok && j < g->outputs.len; j++) {
        Loc1 *l = &loc[g->outputs.data[j].id];
        if (l->kind == LOC_NONE)
            *l = (Loc1){LOC_OUT, j, NULL};
    }
    for (uint32_t s = 0; ok && s < nsteps; s++) {
        Node *n = ir_node(g, (NodeId){steps[s]});
        Node *on = fuse[steps[s]] ? fuse[steps[s]] : n; /* whose results this step writes */
        for (uint32_t r = 0; r < on->nout; r++) {
            Loc1 *l = &loc[on->out[r].id];
            if (l->kind != LOC_NONE)
                continue;
            reqs[nreq] = (CgMemReq){value_bytes(g, on->out[r]), (int32_t)s, (int32_t)s, 0};
            *l = (Loc1){LOC_WS, (int64_t)nreq++, NULL};
        }
        for (uint32_t a = 0; a <= n->nin; a++) {
            ValueId v = a < n->nin ? n->in[a] : on != n ? on->in[fuse_other[steps[s]]] : (ValueId){0};
            Loc1 *l = &loc[v.id];
            if (v.id && l->kind == LOC_WS)
                reqs[l->index].last = (int32_t)s;
        }
    }
    for (uint32_t j = 0; ok && j < g->outputs.len; j++) {
        Loc1 *l = &loc[g->outputs.data[j].id];
        if (l->kind == LOC_WS)
            reqs[l->index].last = (int32_t)nsteps;
    }
    if (ok) {
        b->workspace = cg_memplan(reqs, nreq);
        ok = b->workspace >= 0;
    }

    /* ---- node functions ---- */
    LLVMValueRef *fns = xcalloc(nsteps ? nsteps : 1, sizeof *fns);
    for (uint32_t s = 0; ok && s < nsteps; s++) {
        Node *n = ir_node(g, (NodeId){steps[s]});
        Node *on = fuse[steps[s]] ? fuse[steps[s]] : n;
        unsigned nres = on != n ? 1 : 0;
        if (n->nin > 16 || on->nout > 16) {
            ok = cg_fail(&k, n, "more than 16 operands or results");
            break;
        }
        unsigned np = n->nin + on->nout + nres + 3;
        LLVMTypeRef pt[40];
        for (unsigned i = 0; i < np; i++)
            pt[i] = k.ptr;
        char name[96];
        snprintf(name, sizeof name, "%s.n%u.%s%s", o->prefix, s, op_info(n->op)->name,
                 nres ? "_qadd" : "");
        bool may_fail = cg_node_may_fail(g, n);
        LLVMValueRef fn = LLVMAddFunction(b->mod, name,
                                          LLVMFunctionType(may_fail ? k.i32 : k.vd, pt, np, 0));
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        fn_attrs(&k, fn);
        /* one symbol per node: readable profiles (perf), and run_ex stays small */
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(k.c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
        fns[s] = fn;
        k.fn = fn;
        LLVMPositionBuilderAtEnd(k.b, LLVMAppendBasicBlockInContext(k.c, fn, "entry"));
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
        a.scratch = LLVMGetParam(fn, n->nin + on->nout + nres);
        a.pf = LLVMGetParam(fn, n->nin + on->nout + nres + 1);
        a.pf_ctx = LLVMGetParam(fn, n->nin + on->nout + nres + 2);
        ok = cg_emit_node(&k, n, &a);
        if (ok && may_fail)
            LLVMBuildRet(k.b, cg_i32(&k, QDQC_OK));
        else if (ok)
            LLVMBuildRetVoid(k.b);
    }

    /* ---- run_ex / run / workspace_size (and run_profile) ---- */
    LLVMTypeRef pt[7] = {k.ptr, k.ptr, k.ptr, k.ptr, k.ptr, k.ptr, k.ptr};
    LLVMTypeRef runex_t = LLVMFunctionType(k.i32, pt, 5, 0);
    LLVMValueRef runex = NULL;
    /* variant 0: run_ex; variant 1 (o->profile): run_profile, the same steps with
     * hook(hook_ctx, s, 0) before and hook(hook_ctx, s, 1) after each, or run_ex when hook is
     * NULL */
    for (int prof = 0; ok && prof <= (o->profile ? 1 : 0); prof++) {
        char name[128];
        snprintf(name, sizeof name, prof ? "%s_run_profile" : "%s_run_ex", o->prefix);
        LLVMValueRef fn = LLVMAddFunction(b->mod, name, LLVMFunctionType(k.i32, pt, prof ? 7 : 5, 0));
        if (!prof)
            runex = fn;
        fn_attrs(&k, fn);
        k.fn = fn;
        LLVMPositionBuilderAtEnd(k.b, LLVMAppendBasicBlockInContext(k.c, fn, "entry"));
        LLVMValueRef pin = LLVMGetParam(fn, 0), pout = LLVMGetParam(fn, 1);
        LLVMValueRef ws = LLVMGetParam(fn, 2), hook = prof ? LLVMGetParam(fn, 5) : NULL;
        LLVMTypeRef hook_t = LLVMFunctionType(k.vd, (LLVMTypeRef[]){k.ptr, k.i32, k.i32}, 3, 0);
        if (prof) {
            LLVMBasicBlockRef plain = LLVMAppendBasicBlockInContext(k.c, fn, "no_hook");
            LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(k.c, fn, "");
            LLVMBuildCondBr(k.b, LLVMBuildIsNull(k.b, hook, ""), plain, go);
            LLVMPositionBuilderAtEnd(k.b, plain);
            LLVMValueRef rargs[5];
            for (unsigned i = 0; i < 5; i++)
                rargs[i] = LLVMGetParam(fn, i);
            LLVMBuildRet(k.b, LLVMBuildCall2(k.b, runex_t, runex, rargs, 5, ""));
            LLVMPositionBuilderAtEnd(k.b, go);
        }
        for (uint32_t s = 0; s < nsteps; s++) {
            Node *n = ir_node(g, (NodeId){steps[s]});
            Node *on = fuse[steps[s]] ? fuse[steps[s]] : n;
            LLVMValueRef args[40];
            unsigned na = 0;
            for (uint32_t i = 0; i < n->nin; i++)
                args[na++] = !n->in[i].id || cg_operand_static(&k, n, i)
                                 ? LLVMConstPointerNull(k.ptr)
                                 : value_ptr(&k, g, loc, n->in[i], pin, pout, ws, reqs);
            for (uint32_t i = 0; i < on->nout; i++)
                args[na++] = value_ptr(&k, g, loc, on->out[i], pin, pout, ws, reqs);
            if (on != n)
                args[na++] = value_ptr(&k, g, loc, on->in[fuse_other[steps[s]]], pin, pout, ws, reqs);
            args[na++] = scratch_req[s] ? cg_gep(&k, ws, cg_i64(&k, reqs[scratch_req[s] - 1].offset))
                                        : LLVMConstPointerNull(k.ptr);
            args[na++] = LLVMGetParam(fn, 3);
            args[na++] = LLVMGetParam(fn, 4);
            LLVMValueRef hargs[3] = {prof ? LLVMGetParam(fn, 6) : NULL, cg_i32(&k, (int64_t)s),
                                     cg_i32(&k, 0)};
            if (prof)
                LLVMBuildCall2(k.b, hook_t, hook, hargs, 3, "");
            LLVMValueRef st = LLVMBuildCall2(k.b, LLVMGlobalGetValueType(fns[s]), fns[s], args,
                                             na, "");
            if (prof) {
                hargs[2] = cg_i32(&k, 1);
                LLVMBuildCall2(k.b, hook_t, hook, hargs, 3, "");
            }
            if (cg_node_may_fail(g, n)) {
                LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(k.c, fn, "fail");
                LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(k.c, fn, "");
                LLVMBuildCondBr(k.b, LLVMBuildICmp(k.b, LLVMIntNE, st, cg_i32(&k, QDQC_OK), ""),
                                bad, cont);
                LLVMPositionBuilderAtEnd(k.b, bad);
                LLVMBuildRet(k.b, st);
                LLVMPositionBuilderAtEnd(k.b, cont);
            }
        }
        for (uint32_t j = 0; j < g->outputs.len; j++) {
            ValueId v = g->outputs.data[j];
            Loc1 *l = &loc[v.id];
            if (l->kind == LOC_OUT && l->index == j)
                continue;
            LLVMValueRef idx = cg_i64(&k, j);
            LLVMValueRef dst = LLVMBuildLoad2(k.b, k.ptr, LLVMBuildGEP2(k.b, k.ptr, pout, &idx, 1, ""), "");
            LLVMValueRef src = value_ptr(&k, g, loc, v, pin, pout, ws, reqs);
            LLVMBuildMemCpy(k.b, dst, 1, src, 1, cg_i64(&k, value_bytes(g, v)));
        }
        LLVMBuildRet(k.b, cg_i32(&k, QDQC_OK));
    }
    if (ok) {
        char name[128];
        snprintf(name, sizeof name, "%s_run", o->prefix);
        LLVMValueRef run = LLVMAddFunction(b->mod, name, LLVMFunctionType(k.i32, pt, 3, 0));
        fn_attrs(&k, run);
        LLVMPositionBuilderAtEnd(k.b, LLVMAppendBasicBlockInContext(k.c, run, "entry"));
        LLVMValueRef cargs[5] = {LLVMGetParam(run, 0), LLVMGetParam(run, 1), LLVMGetParam(run, 2),
                                 LLVMConstPointerNull(k.ptr), LLVMConstPointerNull(k.ptr)};
        LLVMBuildRet(k.b, LLVMBuildCall2(k.b, runex_t, runex, cargs, 5, ""));

        snprintf(name, sizeof name, "%s_workspace_size", o->prefix);
        LLVMValueRef wsz = LLVMAddFunction(b->mod, name, LLVMFunctionType(k.i64, NULL, 0, 0));
        fn_attrs(&k, wsz);
        LLVMPositionBuilderAtEnd(k.b, LLVMAppendBasicBlockInContext(k.c, wsz, "entry"));
        LLVMBuildRet(k.b, cg_i64(&k, b->workspace));
    }
    LLVMDisposeBuilder(k.b);
    cg_gemm_cache_destroy(k.gemm_cache);
    /* the steps in run order, for the step table of the JIT and the header */
    b->steps = ok ? plan_calloc(nsteps ? nsteps : 1, sizeof *b->steps) : NULL;
    for (uint32_t s = 0; b->steps && s < nsteps; s++) {
        CgStep *st = &b->steps[s];
        st->node = steps[s];
        st->fused = fuse[steps[s]] ? (uint32_t)(fuse[steps[s]] - g->nodes.data) : 0;
    }
    b->nsteps = b->steps ? nsteps : 0;
    bool steps_oom = ok && !b->steps;
    free(fns);
    free(fuse);
    free(fuse_other);
    free(fused_away);
    free(uses);
    free(nhwc);
    free(loc);
    free(reqs);
    free(scratch_req);
    free(steps);
    if (steps_oom) {
        cg_built_free(b);
        oom_raise("code generation: the table of %u steps", nsteps);
    }
    if (!ok) {
        if (err[0])
            diag_error(m->ctx, NULL, "codegen: %s", err);
        cg_built_free(b);
        return false;
    }
    ctx_phase_end(m->ctx, m->filename, "lower", t0);
    /* O2, not O3: the GEMM microkernels are explicit intrinsics with constant trip counts and
     * the row loops vectorise at O2 as well; O3's extra passes cost ~8% of the compile time of
     * ResNet-18 and gained nothing measurable at run time (docs/performance.md). */
    t0 = clock_ms();
    if (!cg_module_optimize(b->mod, b->tm, "default<O2>", err, sizeof err))
        return build_fail(m, b, err);
    ctx_phase_end(m->ctx, m->filename, "llvm-opt", t0);
    return true;
}
