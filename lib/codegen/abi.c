/* abi.c: the C ABI of a compiled graph (docs/abi.md): the public functions
 *     int PREFIX_run_ex(const void *const *in, void *const *out, void *ws, pf, pf_ctx)
 *     int PREFIX_run(const void *const *in, void *const *out, void *ws)
 *     size_t PREFIX_workspace_size(void)
 * emitted into the built module, and the C header text that declares them.
 *
 * run_ex is straight-line: for each step of the plan, compute the operand/result addresses
 * (constant offsets into ws, graph buffers, constant globals) and call the node function
 * (returning its status at once if it fails, cg_node_may_fail); then copy the graph outputs that
 * are not written in place (an output that is a graph input, a constant, or the same value
 * listed twice); then return 0 (QDQC_OK). Tensors are dense, C order, in the graph's logical
 * layout (NCHW). */
#include "codegen/abi.h"
#include "codegen/codegen.h"
#include "codegen/lower/lower.h"
#include "codegen/plan/plan.h"
#include "support/support.h"

#include <llvm-c/Core.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The address of value v inside run_ex (in, out: its pointer-array parameters; ws: the
 * workspace). */
static LLVMValueRef
value_ptr(Kb *k, CgPlan *p, ValueId v, LLVMValueRef in, LLVMValueRef out, LLVMValueRef ws)
{
    Graph *g = k->g;
    CgLoc *l = &p->loc[v.id];
    switch (l->kind) {
    case CG_LOC_IN: case CG_LOC_OUT: {
        LLVMValueRef idx = cg_i64(k, l->index);
        LLVMValueRef ptr = LLVMBuildGEP2(k->b, k->ptr, l->kind == CG_LOC_IN ? in : out, &idx, 1, "");
        return LLVMBuildLoad2(k->b, k->ptr, ptr, ir_value_name(g, v));
    }
    case CG_LOC_WS:
        return cg_gep(k, ws, cg_i64(k, p->reqs[l->index].offset));
    case CG_LOC_CONST:
        if (!l->global) {
            const Tensor *t = ir_const_of(g, v);
            l->global = cg_const_bytes(k, t->data, t->nbytes ? t->nbytes : 1, "k");
        }
        return l->global;
    default:
        return LLVMConstPointerNull(k->ptr);
    }
}

/* The call of step s's node function fn inside run_ex (or run_profile: with hook, the calls
 * hook(hook_ctx, s, 0) before and hook(hook_ctx, s, 1) right after it), and the early return of
 * its status. */
static void
emit_step_call(Kb *k, CgPlan *p, uint32_t s, LLVMValueRef fn, LLVMValueRef runex,
               LLVMValueRef hook, LLVMValueRef hook_ctx)
{
    Graph *g = k->g;
    LLVMValueRef pin = LLVMGetParam(runex, 0), pout = LLVMGetParam(runex, 1);
    LLVMValueRef ws = LLVMGetParam(runex, 2);
    Node *n = ir_node(g, (NodeId){p->steps[s]});
    Node *on = cg_plan_step_out(p, g, s);
    LLVMValueRef args[CG_SE_MAX * 4 + 24];
    unsigned na = 0;
    uint32_t se = p->se_of[p->steps[s]];
    if (se) { /* a squeeze-excitation group: the values it reads (plan/se.c) */
        ValueId v[CG_SE_MAX * 4];
        bool stat[CG_SE_MAX * 4];
        uint32_t nv = cg_se_inputs(k, &p->se[se - 1], v, stat);
        for (uint32_t i = 0; i < nv; i++)
            args[na++] = stat[i] ? LLVMConstPointerNull(k->ptr) : value_ptr(k, p, v[i], pin, pout, ws);
    }
    for (uint32_t i = 0; !se && i < n->nin; i++)
        args[na++] = !n->in[i].id || cg_operand_static(k, n, i)
                         ? LLVMConstPointerNull(k->ptr)
                         : value_ptr(k, p, n->in[i], pin, pout, ws);
    for (uint32_t i = 0; i < on->nout; i++)
        args[na++] = value_ptr(k, p, on->out[i], pin, pout, ws);
    if (on != n && !p->chain_next[p->steps[s]] && !se) /* a fused qadd's other operand */
        args[na++] = value_ptr(k, p, on->in[p->fuse_other[p->steps[s]]], pin, pout, ws);
    args[na++] = p->scratch_req[s] ? cg_gep(k, ws, cg_i64(k, p->reqs[p->scratch_req[s] - 1].offset))
                                   : LLVMConstPointerNull(k->ptr);
    args[na++] = LLVMGetParam(runex, 3);
    args[na++] = LLVMGetParam(runex, 4);
    LLVMTypeRef hook_t = LLVMFunctionType(k->vd, (LLVMTypeRef[]){k->ptr, k->i32, k->i32}, 3, 0);
    LLVMValueRef hargs[3] = {hook_ctx, cg_i32(k, (int64_t)s), cg_i32(k, 0)};
    if (hook)
        LLVMBuildCall2(k->b, hook_t, hook, hargs, 3, "");
    LLVMValueRef st = LLVMBuildCall2(k->b, LLVMGlobalGetValueType(fn), fn, args, na, "");
    if (hook) {
        hargs[2] = cg_i32(k, 1);
        LLVMBuildCall2(k->b, hook_t, hook, hargs, 3, "");
    }
    if (cg_node_may_fail(g, n)) /* k->fn is runex */
        cg_ret_if(k, LLVMBuildICmp(k->b, LLVMIntNE, st, cg_i32(k, QDQC_OK), ""), st, "fail");
}

/* PREFIX_run_ex, or (profile) PREFIX_run_profile: run_ex's steps with the step hook in its
 * parameters 5 and 6 around each, and run_ex itself when the hook is NULL. */
static LLVMValueRef
emit_run(Kb *k, CgPlan *p, const LLVMValueRef *fns, LLVMValueRef runex)
{
    Graph *g = k->g;
    bool prof = runex != NULL;
    char name[128];
    LLVMTypeRef pt[7] = {k->ptr, k->ptr, k->ptr, k->ptr, k->ptr, k->ptr, k->ptr};
    snprintf(name, sizeof name, prof ? "%s_run_profile" : "%s_run_ex", k->prefix);
    LLVMValueRef fn = LLVMAddFunction(k->mod, name, LLVMFunctionType(k->i32, pt, prof ? 7 : 5, 0));
    cg_fn_attrs(k, fn);
    k->fn = fn;
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, fn, "entry"));
    LLVMValueRef pin = LLVMGetParam(fn, 0), pout = LLVMGetParam(fn, 1);
    LLVMValueRef ws = LLVMGetParam(fn, 2);
    LLVMValueRef hook = prof ? LLVMGetParam(fn, 5) : NULL, hook_ctx = prof ? LLVMGetParam(fn, 6) : NULL;
    if (prof) {
        LLVMBasicBlockRef plain = LLVMAppendBasicBlockInContext(k->c, fn, "no_hook");
        LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(k->c, fn, "");
        LLVMBuildCondBr(k->b, LLVMBuildIsNull(k->b, hook, ""), plain, go);
        LLVMPositionBuilderAtEnd(k->b, plain);
        LLVMValueRef rargs[5];
        for (unsigned i = 0; i < 5; i++)
            rargs[i] = LLVMGetParam(fn, i);
        LLVMBuildRet(k->b, LLVMBuildCall2(k->b, LLVMGlobalGetValueType(runex), runex, rargs, 5, ""));
        LLVMPositionBuilderAtEnd(k->b, go);
    }
    for (uint32_t s = 0; s < p->nsteps; s++)
        emit_step_call(k, p, s, fns[s], fn, hook, hook_ctx);
    for (uint32_t j = 0; j < g->outputs.len; j++) {
        ValueId v = g->outputs.data[j];
        CgLoc *l = &p->loc[v.id];
        if (l->kind == CG_LOC_OUT && l->index == j)
            continue;
        LLVMValueRef idx = cg_i64(k, j);
        LLVMValueRef dst = LLVMBuildLoad2(k->b, k->ptr, LLVMBuildGEP2(k->b, k->ptr, pout, &idx, 1, ""), "");
        LLVMValueRef src = value_ptr(k, p, v, pin, pout, ws);
        LLVMBuildMemCpy(k->b, dst, 1, src, 1, cg_i64(k, cg_value_bytes(g, v)));
    }
    LLVMBuildRet(k->b, cg_i32(k, QDQC_OK));
    return fn;
}

/* ---- a run-time batch dimension (CgDyn): PREFIX_run_shapes ----
 * Reads the symbol's value from the input shapes (each must match the graph's, the symbol's
 * axis a multiple of it, every input agreeing), checks it against [lo, hi], writes the output
 * shapes, then calls run_ex once per index of the symbol on the next slice of each input and
 * output that carries it (with CgDyn.chunk, first the chunk graph's run_ex once per full chunk
 * of indices). A bad shape returns QDQC_ERR_INVALID_ARG before anything runs. */

/* Fail (return QDQC_ERR_INVALID_ARG) unless ok. */
static void
dyn_require(Kb *k, LLVMValueRef ok)
{
    cg_ret_unless(k, ok, cg_i32(k, QDQC_ERR_INVALID_ARG), "bad_shape");
}

static LLVMValueRef
dyn_load_ptr(Kb *k, LLVMValueRef arr, uint32_t i)
{
    LLVMValueRef idx = cg_i64(k, i);
    return LLVMBuildLoad2(k->b, k->ptr, LLVMBuildGEP2(k->b, k->ptr, arr, &idx, 1, ""), "");
}

/* The symbol's value read from the input shapes (slot vs: -1 until an input sets it). */
static void
dyn_read_inputs(Kb *k, const CgDyn *d, LLVMValueRef shapes, LLVMValueRef vs)
{
    Graph *g = k->g;
    for (uint32_t i = 0; i < g->inputs.len; i++) {
        const Type *t = &ir_value(g, g->inputs.data[i])->type;
        LLVMValueRef sh = dyn_load_ptr(k, shapes, i);
        dyn_require(k, LLVMBuildIsNotNull(k->b, sh, ""));
        for (int a = 0; a < t->rank; a++) {
            LLVMValueRef dim = cg_load_at(k, k->i64, sh, cg_i64(k, 8 * a), 8);
            if (a != d->in[i].axis) {
                dyn_require(k, LLVMBuildICmp(k->b, LLVMIntEQ, dim, cg_i64(k, t->dims[a]), ""));
                continue;
            }
            LLVMValueRef c = cg_i64(k, d->in[i].coef);
            LLVMValueRef q = LLVMBuildSDiv(k->b, dim, c, "");
            dyn_require(k, LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGT, dim, cg_i64(k, 0), ""),
                                        LLVMBuildICmp(k->b, LLVMIntEQ, LLVMBuildMul(k->b, q, c, ""), dim, ""), ""));
            LLVMValueRef old = LLVMBuildLoad2(k->b, k->i64, vs, "");
            LLVMValueRef unset = LLVMBuildICmp(k->b, LLVMIntSLT, old, cg_i64(k, 0), "");
            dyn_require(k, LLVMBuildOr(k->b, unset, LLVMBuildICmp(k->b, LLVMIntEQ, old, q, ""), ""));
            LLVMBuildStore(k->b, q, vs);
        }
    }
}

void
cg_dyn_chunk_prefix(const char *prefix, const CgDyn *dyn, char *out, size_t n)
{
    int w = snprintf(out, n, "%s_b%lld", prefix, (long long)dyn->chunk);
    if (w < 0 || (size_t)w >= n)
        snprintf(out, n, "qdqc_b%lld", (long long)dyn->chunk);
}

/* The arrays PREFIX_run_shapes fills for each call of a run_ex: input and output pointers, the
 * caller's arrays, and the last three arguments (workspace, pf, pf_ctx). */
typedef struct DynCall {
    LLVMValueRef ins, outs, pin, pout;
    LLVMValueRef tail[3];
} DynCall;

/* Call runex on the slices of the inputs and outputs that start at index b of the symbol (the
 * graph at size 1 lays each index out as one slab); return its status if not 0. */
static void
dyn_call(Kb *k, const CgDyn *d, const DynCall *c, LLVMValueRef b, LLVMValueRef runex)
{
    Graph *g = k->g;
    for (uint32_t pass = 0; pass < 2; pass++) {
        uint32_t n = pass ? g->outputs.len : g->inputs.len;
        for (uint32_t i = 0; i < n; i++) {
            const IrBatchIO *io = pass ? &d->out[i] : &d->in[i];
            ValueId val = pass ? g->outputs.data[i] : g->inputs.data[i];
            LLVMValueRef ptr = dyn_load_ptr(k, pass ? c->pout : c->pin, i);
            if (io->axis >= 0)
                ptr = cg_gep(k, ptr, LLVMBuildMul(k->b, b, cg_i64(k, cg_value_bytes(g, val)), ""));
            LLVMValueRef idx = cg_i64(k, i);
            LLVMBuildStore(k->b, ptr, LLVMBuildGEP2(k->b, k->ptr, pass ? c->outs : c->ins, &idx, 1, ""));
        }
    }
    LLVMValueRef args[5] = {c->ins, c->outs, c->tail[0], c->tail[1], c->tail[2]};
    LLVMValueRef st = LLVMBuildCall2(k->b, LLVMGlobalGetValueType(runex), runex, args, 5, "");
    cg_ret_if(k, LLVMBuildICmp(k->b, LLVMIntNE, st, cg_i32(k, 0), ""), st, "failed");
}

static LLVMValueRef
emit_run_shapes(Kb *k, const CgDyn *d, LLVMValueRef runex)
{
    Graph *g = k->g;
    char name[128];
    LLVMTypeRef pt[7] = {k->ptr, k->ptr, k->ptr, k->ptr, k->ptr, k->ptr, k->ptr};
    snprintf(name, sizeof name, "%s_run_shapes", k->prefix);
    LLVMValueRef fn = LLVMAddFunction(k->mod, name, LLVMFunctionType(k->i32, pt, 7, 0));
    cg_fn_attrs(k, fn);
    k->fn = fn;
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, fn, "entry"));
    LLVMValueRef ishape = LLVMGetParam(fn, 0), pin = LLVMGetParam(fn, 1);
    LLVMValueRef oshape = LLVMGetParam(fn, 2), pout = LLVMGetParam(fn, 3);
    uint32_t nin = g->inputs.len, nout = g->outputs.len;
    LLVMValueRef vs = cg_entry_alloca(k, k->i64);
    LLVMBuildStore(k->b, cg_i64(k, -1), vs);
    dyn_require(k, LLVMBuildIsNotNull(k->b, ishape, ""));
    dyn_read_inputs(k, d, ishape, vs);
    LLVMValueRef v = LLVMBuildLoad2(k->b, k->i64, vs, "dim");
    dyn_require(k, LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, v, cg_i64(k, d->lo), ""),
                                LLVMBuildICmp(k->b, LLVMIntSLE, v, cg_i64(k, d->hi), ""), ""));
    /* output shapes: optional (NULL array or NULL entry: not written) */
    for (uint32_t o = 0; o < nout; o++) {
        const Type *t = &ir_value(g, g->outputs.data[o])->type;
        CgIf f0, f1;
        cg_if_begin(k, &f0, LLVMBuildIsNotNull(k->b, oshape, ""));
        LLVMValueRef sh = dyn_load_ptr(k, oshape, o);
        cg_if_begin(k, &f1, LLVMBuildIsNotNull(k->b, sh, ""));
        for (int a = 0; a < t->rank; a++) {
            LLVMValueRef dim = a == d->out[o].axis ? LLVMBuildMul(k->b, v, cg_i64(k, d->out[o].coef), "")
                                                   : cg_i64(k, t->dims[a]);
            LLVMBuildStore(k->b, dim, cg_gep(k, sh, cg_i64(k, 8 * a)));
        }
        cg_if_else(k, &f1);
        cg_if_end(k, &f1);
        cg_if_else(k, &f0);
        cg_if_end(k, &f0);
    }
    /* outputs == NULL: a shape query (the shapes checked and written, nothing run) */
    cg_ret_if(k, LLVMBuildIsNull(k->b, pout, ""), cg_i32(k, QDQC_OK), "shape_query");
    LLVMValueRef ins = cg_entry_alloca(k, LLVMArrayType2(k->ptr, nin ? nin : 1));
    LLVMValueRef outs = cg_entry_alloca(k, LLVMArrayType2(k->ptr, nout ? nout : 1));
    DynCall c = {ins, outs, pin, pout, {0}};
    for (int i = 0; i < 3; i++)
        c.tail[i] = LLVMGetParam(fn, 4 + i);
    LLVMValueRef done = cg_i64(k, 0);
    if (d->chunk) {
        /* each full chunk of indices through the graph compiled at the chunk size (build.c) */
        char cp[64], cname[96];
        cg_dyn_chunk_prefix(k->prefix, d, cp, sizeof cp);
        snprintf(cname, sizeof cname, "%s_run_ex", cp);
        LLVMValueRef chunk_runex = LLVMGetNamedFunction(k->mod, cname);
        QDQC_ASSERT(chunk_runex);
        LLVMValueRef nchunks = LLVMBuildSDiv(k->b, v, cg_i64(k, d->chunk), "nchunks");
        CgLoop l;
        LLVMValueRef ci = cg_loop_begin(k, &l, nchunks);
        dyn_call(k, d, &c, LLVMBuildMul(k->b, ci, cg_i64(k, d->chunk), ""), chunk_runex);
        cg_loop_end(k, &l);
        done = LLVMBuildMul(k->b, nchunks, cg_i64(k, d->chunk), "done");
    }
    CgLoop l;
    LLVMValueRef r = cg_loop_begin(k, &l, LLVMBuildSub(k->b, v, done, "left"));
    dyn_call(k, d, &c, LLVMBuildAdd(k->b, done, r, ""), runex);
    cg_loop_end(k, &l);
    LLVMBuildRet(k->b, cg_i32(k, QDQC_OK));
    return fn;
}

void
cg_emit_abi(Kb *k, CgPlan *p, const LLVMValueRef *fns, bool profile, const struct CgDyn *dyn)
{
    char name[128];
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->ptr, k->ptr, k->ptr};
    LLVMTypeRef runex_t = LLVMFunctionType(k->i32, pt, 5, 0);
    LLVMValueRef runex = emit_run(k, p, fns, NULL);
    if (profile)
        emit_run(k, p, fns, runex);

    snprintf(name, sizeof name, "%s_run", k->prefix);
    LLVMValueRef run = LLVMAddFunction(k->mod, name, LLVMFunctionType(k->i32, pt, 3, 0));
    cg_fn_attrs(k, run);
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, run, "entry"));
    LLVMValueRef cargs[5] = {LLVMGetParam(run, 0), LLVMGetParam(run, 1), LLVMGetParam(run, 2),
                             LLVMConstPointerNull(k->ptr), LLVMConstPointerNull(k->ptr)};
    LLVMBuildRet(k->b, LLVMBuildCall2(k->b, runex_t, runex, cargs, 5, ""));

    snprintf(name, sizeof name, "%s_workspace_size", k->prefix);
    LLVMValueRef wsz = LLVMAddFunction(k->mod, name, LLVMFunctionType(k->i64, NULL, 0, 0));
    cg_fn_attrs(k, wsz);
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, wsz, "entry"));
    LLVMBuildRet(k->b, cg_i64(k, p->workspace));
    if (dyn)
        emit_run_shapes(k, dyn, runex);
}

/* ---- the C header ---- */
static void
c_string(StrBuf *b, const char *s)
{
    sb_putc(b, '"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            sb_printf(b, "\\%c", ch);
        else if (ch < 32 || ch > 126)
            sb_printf(b, "\\%03o", ch);
        else
            sb_putc(b, (char)ch);
    }
    sb_putc(b, '"');
}

static void
io_block(StrBuf *b, Graph *g, const char *P, const char *p, bool out)
{
    const char *kind = out ? "OUTPUT" : "INPUT", *lk = out ? "output" : "input";
    VEC(ValueId) *v = out ? (void *)&g->outputs : (void *)&g->inputs;
    for (uint32_t i = 0; i < v->len; i++) {
        const Value *val = ir_value(g, v->data[i]);
        const Type *t = &val->type;
        sb_printf(b, "#define %s_%s%u_NAME ", P, kind, i);
        c_string(b, ir_str(g, val->name));
        sb_printf(b, "\n#define %s_%s%u_ELEM_TYPE \"%s\"\n", P, kind, i, elem_name(t->elem));
        sb_printf(b, "#define %s_%s%u_RANK %d\n#define %s_%s%u_DIMS {", P, kind, i, t->rank, P, kind, i);
        for (int d = 0; d < t->rank; d++)
            sb_printf(b, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
        if (t->rank == 0)
            sb_printf(b, "1");
        sb_printf(b, "}\n#define %s_%s%u_NUMEL %lluu\n", P, kind, i,
                  (unsigned long long)type_numel_unchecked(t));
        sb_printf(b, "#define %s_%s%u_BYTES %lluu\n", P, kind, i,
                  (unsigned long long)(type_numel_unchecked(t) * elem_size(t->elem)));
    }
    sb_printf(b, "static const char *const %s_%s_names[] = {", p, lk);
    for (uint32_t i = 0; i < v->len; i++) {
        sb_printf(b, "%s", i ? ", " : "");
        c_string(b, ir_str(g, ir_value(g, v->data[i])->name));
    }
    sb_printf(b, "%s};\n", v->len ? "" : "0");
}

/* The run-time dimension's part of the header: the symbol, its bounds, where it sits in each
 * input and output, and PREFIX_run_shapes. */
static void
dyn_header(StrBuf *b, Graph *g, const CgDyn *d, const char *p, const char *P)
{
    sb_printf(b, "\n/* Run-time dimension: the compiled object takes every %s in [%s_DIM_MIN,\n"
              " * %s_DIM_MAX]. %s_INPUTi_DIM_AXIS / %s_OUTPUTi_DIM_AXIS: the axis that is\n"
              " * %s_INPUTi_DIM_COEF * %s (-1: none; the _DIMS, _NUMEL and _BYTES above are at\n"
              " * %s = 1). */\n", d->sym, P, P, P, P, P, d->sym, d->sym);
    sb_printf(b, "#define %s_DIM_NAME ", P);
    c_string(b, d->sym);
    sb_printf(b, "\n#define %s_DIM_MIN %lld\n#define %s_DIM_MAX %lld\n", P, (long long)d->lo, P,
              (long long)d->hi);
    for (int out = 0; out < 2; out++) {
        uint32_t n = out ? g->outputs.len : g->inputs.len;
        for (uint32_t i = 0; i < n; i++) {
            const IrBatchIO *io = out ? &d->out[i] : &d->in[i];
            const char *kind = out ? "OUTPUT" : "INPUT";
            sb_printf(b, "#define %s_%s%u_DIM_AXIS %d\n#define %s_%s%u_DIM_COEF %lld\n", P, kind,
                      i, io->axis, P, kind, i, (long long)io->coef);
        }
    }
    sb_printf(b,
              "/* Run at the shapes of the inputs: input_shapes[i] holds %s_INPUTi_RANK\n"
              " * dimensions, equal to _DIMS but on _DIM_AXIS, which is _DIM_COEF * n with n in\n"
              " * [%s_DIM_MIN, %s_DIM_MAX] and the same n for every input. Buffers hold n times\n"
              " * the _BYTES at 1. output_shapes (or an entry of it) may be NULL; else entry i\n"
              " * receives output i's %s_OUTPUTi_RANK dimensions; outputs == NULL only checks\n"
              " * the shapes and writes output_shapes. Returns QDQC_ERR_INVALID_ARG (6)\n"
              " * before running anything when a shape does not conform, else as %s_run_ex. The\n"
              " * workspace is %s_WORKSPACE_SIZE bytes for every n. */\n"
              "int %s_run_shapes(const int64_t *const *input_shapes, const void *const *inputs,\n"
              "                  int64_t *const *output_shapes, void *const *outputs, void *workspace,\n"
              "                  %s_parallel_for_fn pf, void *pf_ctx);\n",
              P, P, P, P, p, P, p, p);
}

char *
cg_header_text(Module *m, const CgOptions *o, size_t workspace, const CgStep *steps,
               uint32_t nsteps)
{
    Graph *g = &m->g;
    const char *p = o->prefix;
    char P[64];
    size_t i;
    for (i = 0; p[i] && i + 1 < sizeof P; i++)
        P[i] = (char)toupper((unsigned char)p[i]);
    P[i] = 0;
    StrBuf b;
    sb_init(&b);
    sb_printf(&b,
              "/* %s.h: generated by qdqc %s. C ABI of the compiled model (docs/abi.md).\n"
              " * Buffers are dense, C order, in each tensor's element type; the workspace is\n"
              " * %s_WORKSPACE_SIZE bytes, 64-byte aligned, owned by the caller, and may not be\n"
              " * shared by concurrent runs. Link with -lm. */\n"
              "#ifndef %s_QDQC_H\n#define %s_QDQC_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
              "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
              p, qdqc_version_string(), P, P, P);
    sb_printf(&b, "#define %s_NUM_INPUTS %u\n#define %s_NUM_OUTPUTS %u\n", P, g->inputs.len, P,
              g->outputs.len);
    sb_printf(&b, "#define %s_WORKSPACE_SIZE %zuu\n#define %s_WORKSPACE_ALIGN 64\n\n", P, workspace, P);
    io_block(&b, g, P, p, false);
    sb_printf(&b, "\n");
    io_block(&b, g, P, p, true);
    sb_printf(&b,
              "\n/* Parallel-for hook: call fn(arg, begin, end) over disjoint ranges covering\n"
              " * [0, n), on any threads, and return when all calls have returned. A run calls\n"
              " * pf only from its own thread, never from inside fn; runs on several threads\n"
              " * sharing pf and pf_ctx call it concurrently, which it must then allow\n"
              " * (qdqc_threadpool_parallel_for does). */\n"
              "typedef void (*%s_parallel_fn)(void *arg, int64_t begin, int64_t end);\n"
              "typedef void (*%s_parallel_for_fn)(void *ctx, %s_parallel_fn fn, void *arg, int64_t n);\n\n"
              "/* inputs[i] / outputs[i]: %s_INPUTi_BYTES / %s_OUTPUTi_BYTES bytes each. Returns 0\n"
              " * (QDQC_OK), or QDQC_ERR_RUNTIME (9) when a run-time scale is not positive and\n"
              " * finite (the outputs are then undefined). */\n"
              "int %s_run(const void *const *inputs, void *const *outputs, void *workspace);\n"
              "/* As %s_run; pf == NULL runs on the calling thread. */\n"
              "int %s_run_ex(const void *const *inputs, void *const *outputs, void *workspace,\n"
              "               %s_parallel_for_fn pf, void *pf_ctx);\n"
              "size_t %s_workspace_size(void); /* == %s_WORKSPACE_SIZE */\n",
              p, p, p, P, P, p, p, p, p, p, P);
    if (o->dyn)
        dyn_header(&b, g, o->dyn, p, P);
    if (o->profile) {
        sb_printf(&b,
                  "\n/* Step hook (compiled with the option profile): %s_run_profile calls\n"
                  " * hook(hook_ctx, step, 0) right before step `step` (0 ..\n"
                  " * %s_NUM_STEPS - 1, in order) and hook(hook_ctx, step, 1) right after it, on\n"
                  " * the calling thread; hook == NULL runs as %s_run_ex. Step i runs the node\n"
                  " * %s_step_names[i] (the ONNX node name, or %%VALUE after its first result). */\n"
                  "typedef void (*%s_profile_fn)(void *ctx, int32_t step, int32_t end);\n"
                  "int %s_run_profile(const void *const *inputs, void *const *outputs, void *workspace,\n"
                  "                   %s_parallel_for_fn pf, void *pf_ctx, %s_profile_fn hook,\n"
                  "                   void *hook_ctx);\n"
                  "#define %s_NUM_STEPS %u\n"
                  "static const char *const %s_step_names[] = {",
                  p, P, p, p, p, p, p, p, P, nsteps, p);
        for (uint32_t si = 0; si < nsteps; si++) {
            sb_printf(&b, "%s\n    ", si ? "," : "");
            StrBuf nb;
            sb_init(&nb);
            for (int f = 0; f < (steps[si].fused ? 2 : 1); f++) {
                Node *n = ir_node(g, (NodeId){f ? steps[si].fused : steps[si].node});
                if (f)
                    sb_printf(&nb, " + ");
                if (n->loc.node && n->loc.node[0])
                    sb_printf(&nb, "%s", n->loc.node);
                else
                    sb_printf(&nb, "%%%s", n->nout ? ir_value_name(g, n->out[0]) : "?");
            }
            char *nm = sb_take(&nb);
            c_string(&b, nm);
            free(nm);
        }
        sb_printf(&b, "%s};\n", nsteps ? "" : "0");
    }
    sb_printf(&b, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
    return sb_take(&b);
}

