/* irb/kb.c: the Kb toolkit shared by the kernel emitters: loops, element access, constants,
 * splats, the clamp of a quantized range, parallel-for outlining, loop nests over windows and
 * the exact rounding/requantization sequences of lib/numerics.
 *
 * Every numeric sequence here mirrors one function of lib/numerics step by step (same f32
 * operations in the same order, no fast-math flags, no FMA), so the emitted code equals the
 * reference interpreter bit for bit. Rounding to integer uses llvm.roundeven (ties to even,
 * independent of the rounding mode) after clamping into a range where fptosi is defined. */
#include "codegen/irb/irb.h"
#include "codegen/target/module.h"
#include "numerics/elementwise.h"

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
cg_fail(Kb *k, Node *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n)
        node_error(k->g, n, "codegen: %s", msg);
    else if (k->err)
        snprintf(k->err, k->errlen, "%s", msg);
    return false;
}

void
cg_fn_attrs(Kb *k, LLVMValueRef fn)
{
    cg_function_set_target(fn, k->t, 0);
    unsigned id = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(k->c, id, 0));
}

LLVMValueRef
cg_step_fn(Kb *k, const char *name, unsigned np, bool may_fail)
{
    LLVMTypeRef pt[64];
    for (unsigned i = 0; i < np && i < 64; i++)
        pt[i] = k->ptr;
    LLVMValueRef fn = LLVMAddFunction(k->mod, name,
                                      LLVMFunctionType(may_fail ? k->i32 : k->vd, pt, np < 64 ? np : 64, 0));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    cg_fn_attrs(k, fn);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    k->fn = fn;
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, fn, "entry"));
    return fn;
}

LLVMValueRef
cg_loop_begin(Kb *k, CgLoop *l, LLVMValueRef n)
{
    return irb_loop_begin(k->b, k->c, k->fn, l, cg_i64(k, 0), n, cg_i64(k, 1), "loop", "body",
                          "done", "i");
}

void
cg_loop_end(Kb *k, CgLoop *l)
{
    irb_loop_latch(k->b, l);
    LLVMPositionBuilderAtEnd(k->b, l->exit);
}

void
cg_loop_end_novec(Kb *k, CgLoop *l)
{
    /* !llvm.loop !0, !0 = !{!0, !{!"llvm.loop.vectorize.enable", i1 false}} */
    irb_loop_hint(k->c, irb_loop_latch(k->b, l), IRB_NO_VECTORIZE);
    LLVMPositionBuilderAtEnd(k->b, l->exit);
}

void
cg_loop_end_hint(Kb *k, CgLoop *l, unsigned hints)
{
    irb_loop_hint(k->c, irb_loop_latch(k->b, l), hints);
    LLVMPositionBuilderAtEnd(k->b, l->exit);
}

LLVMValueRef
cg_entry_alloca(Kb *k, LLVMTypeRef t)
{
    LLVMBuilderRef b = LLVMCreateBuilderInContext(k->c);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(k->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(b, first);
    else
        LLVMPositionBuilderAtEnd(b, entry);
    LLVMValueRef a = LLVMBuildAlloca(b, t, "");
    LLVMDisposeBuilder(b);
    return a;
}

LLVMValueRef
cg_i64(Kb *k, int64_t v)
{
    return irb_i64(&k->ir, v);
}

LLVMValueRef
cg_i32(Kb *k, int64_t v)
{
    return irb_i32(&k->ir, v);
}

LLVMValueRef
cg_f32(Kb *k, float v)
{
    return LLVMConstReal(k->f32, v);
}

LLVMValueRef
cg_gep(Kb *k, LLVMValueRef p, LLVMValueRef off)
{
    return LLVMBuildGEP2(k->b, k->i8, p, &off, 1, "");
}

LLVMValueRef
cg_add(Kb *k, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildAdd(k->b, a, b, "");
}

LLVMValueRef
cg_mul(Kb *k, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildMul(k->b, a, b, "");
}

LLVMTypeRef
cg_elem_type(Kb *k, ElemType e)
{
    switch (e) {
    case ET_F32: return k->f32;
    case ET_F64: return k->f64;
    case ET_F16: return LLVMHalfTypeInContext(k->c);
    default: break;
    }
    switch (elem_size(e)) {
    case 1: return k->i8;
    case 2: return k->i16;
    case 4: return k->i32;
    default: return k->i64;
    }
}

static bool
elem_signed(ElemType e)
{
    return e == ET_I8 || e == ET_I16 || e == ET_I32 || e == ET_I64 || e == ET_I4;
}

LLVMValueRef
cg_load_raw(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx)
{
    LLVMTypeRef t = cg_elem_type(k, e);
    LLVMValueRef p = LLVMBuildGEP2(k->b, t, base, &idx, 1, "");
    return irb_load(&k->ir, t, p, 1);
}

LLVMValueRef
cg_load_at(Kb *k, LLVMTypeRef t, LLVMValueRef base, LLVMValueRef off, unsigned align)
{
    return irb_load(&k->ir, t, cg_gep(k, base, off), align);
}

LLVMValueRef
cg_fma(Kb *k, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
    return irb_fma(&k->ir, a, b, c);
}

void
cg_store_raw(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v)
{
    LLVMTypeRef t = cg_elem_type(k, e);
    LLVMValueRef p = LLVMBuildGEP2(k->b, t, base, &idx, 1, "");
    irb_store(&k->ir, v, p, 1);
}

LLVMValueRef
cg_load_i64(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx)
{
    LLVMValueRef v = cg_load_raw(k, e, base, idx);
    if (elem_is_float(e))
        return v;
    if (elem_size(e) == 8)
        return v;
    return elem_signed(e) ? LLVMBuildSExt(k->b, v, k->i64, "") : LLVMBuildZExt(k->b, v, k->i64, "");
}

void
cg_store_i64(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v)
{
    LLVMTypeRef t = cg_elem_type(k, e);
    if (t != k->i64)
        v = LLVMBuildTrunc(k->b, v, t, "");
    cg_store_raw(k, e, base, idx, v);
}

LLVMValueRef
cg_const_bytes(Kb *k, const void *data, size_t n, const char *tag)
{
    char name[96];
    snprintf(name, sizeof name, "%s.c%u.%s", k->prefix, k->counter++, tag);
    return irb_const_global(k->c, k->mod, name, data, n);
}

LLVMValueRef
cg_smin(Kb *k, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLT, a, b, ""), a, b, "");
}

LLVMValueRef
cg_smax(Kb *k, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSGT, a, b, ""), a, b, "");
}

LLVMValueRef
cg_call(Kb *k, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt, LLVMValueRef *args,
        unsigned n)
{
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(k->mod, name);
    if (!f)
        f = LLVMAddFunction(k->mod, name, ft);
    return LLVMBuildCall2(k->b, ft, f, args, n, "");
}

/* llvm.roundeven of an f32 or f64 scalar (round half to even, exact) */
LLVMValueRef
cg_roundeven_f32(Kb *k, LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    const char *nm = t == k->f64 ? "llvm.roundeven.f64" : "llvm.roundeven.f32";
    return cg_call(k, nm, t, &t, &v, 1);
}

/* qn_round_half_even_f32_i64(v) + zy, saturated to [lo, hi]: NaN -> 0, |v| huge saturates.
 * Clamping v to +-2^62 first keeps fptosi defined and does not change the saturated result. */
LLVMValueRef
cg_finish_f32(Kb *k, LLVMValueRef v, LLVMValueRef zy, int64_t lo, int64_t hi)
{
    LLVMTypeRef ft = LLVMTypeOf(v);
    LLVMValueRef big = LLVMConstReal(ft, 4611686018427387904.0), nbig = LLVMConstReal(ft, -4611686018427387904.0);
    LLVMValueRef isnan = LLVMBuildFCmp(k->b, LLVMRealUNO, v, v, "");
    v = LLVMBuildSelect(k->b, isnan, LLVMConstReal(ft, 0.0), v, "");
    v = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, v, big, ""), big, v, "");
    v = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOLT, v, nbig, ""), nbig, v, "");
    LLVMValueRef r = LLVMBuildFPToSI(k->b, cg_roundeven_f32(k, v), k->i64, "");
    r = LLVMBuildAdd(k->b, r, zy, "");
    return cg_smin(k, cg_smax(k, r, cg_i64(k, lo)), cg_i64(k, hi));
}

/* qn_requant_float: f = (f32)acc * m; f = max(f, qmin - zp); f = min(f, qmax - zp);
 * rne(f) + zp, saturated. NaN (non-finite m) -> sat(zp). */
LLVMValueRef
cg_requant_float(Kb *k, LLVMValueRef acc, LLVMValueRef mult, int32_t zp, int32_t lo, int32_t hi)
{
    LLVMValueRef f = LLVMBuildSIToFP(k->b, LLVMBuildTrunc(k->b, acc, k->i32, ""), k->f32, "");
    f = LLVMBuildFMul(k->b, f, mult, "");
    LLVMValueRef flo = cg_f32(k, (float)((int64_t)lo - zp)), fhi = cg_f32(k, (float)((int64_t)hi - zp));
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOLT, f, flo, ""), flo, f, "");
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, f, fhi, ""), fhi, f, "");
    return cg_finish_f32(k, f, cg_i64(k, zp), lo, hi);
}

/* qn_requant_fixed: v = (acc * mult + 2^(shift-1)) >> shift (floor); sat(v + zp). */
LLVMValueRef
cg_requant_fixed(Kb *k, LLVMValueRef acc, LLVMValueRef mult, LLVMValueRef shift, int32_t zp,
                 int32_t lo, int32_t hi)
{
    LLVMValueRef p = LLVMBuildMul(k->b, acc, mult, "");
    LLVMValueRef rnd = LLVMBuildShl(k->b, cg_i64(k, 1), LLVMBuildSub(k->b, shift, cg_i64(k, 1), ""), "");
    LLVMValueRef v = LLVMBuildAShr(k->b, LLVMBuildAdd(k->b, p, rnd, ""), shift, "");
    v = LLVMBuildAdd(k->b, v, cg_i64(k, zp), "");
    return cg_smin(k, cg_smax(k, v, cg_i64(k, lo)), cg_i64(k, hi));
}

/* cg_requant_float in 32-bit lanes: f = (f32)acc * mult, clamped to [lo - zp, hi - zp] (NaN ->
 * 0), so rne(f) fits i32 and fptosi to i32 equals the i64 sequence; + zp, clamp [lo, hi]. The
 * vectoriser then keeps full 16-lane f32/i32 vectors instead of splitting for f32 -> i64. */
LLVMValueRef
cg_requant_float_i32(Kb *k, LLVMValueRef a32, LLVMValueRef mult, int32_t zp, int32_t lo, int32_t hi)
{
    LLVMValueRef f = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, a32, k->f32, ""), mult, "");
    LLVMValueRef flo = cg_f32(k, (float)((int64_t)lo - zp)), fhi = cg_f32(k, (float)((int64_t)hi - zp));
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOLT, f, flo, ""), flo, f, "");
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, f, fhi, ""), fhi, f, "");
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealUNO, f, f, ""), cg_f32(k, 0.0f), f, "");
    LLVMTypeRef ft = k->f32;
    LLVMValueRef r = LLVMBuildFPToSI(k->b, cg_call(k, "llvm.roundeven.f32", ft, &ft, &f, 1), k->i32, "");
    r = LLVMBuildAdd(k->b, r, cg_i32(k, zp), "");
    r = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLT, r, cg_i32(k, lo), ""), cg_i32(k, lo), r, "");
    return LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSGT, r, cg_i32(k, hi), ""), cg_i32(k, hi), r, "");
}

LLVMValueRef
cg_rescale(Kb *k, LLVMValueRef v, LLVMValueRef mult, LLVMValueRef shift)
{
    return cg_build_rescale(k->b, v, mult, shift);
}

LLVMValueRef
cg_rescale_c(Kb *k, LLVMValueRef v, QnFixed f)
{
    return cg_rescale(k, v, cg_const_like(v, f.mult), cg_const_like(v, f.shift));
}

LLVMValueRef
cg_add_sat(Kb *k, LLVMValueRef v, int32_t zy, int32_t lo, int32_t hi)
{
    return cg_build_add_sat(k->b, v, zy, lo, hi);
}

LLVMValueRef
cg_par_begin(Kb *k, Par *p, int64_t rows, LLVMValueRef *ptrs, int np)
{
    p->rows = rows;
    p->slot = cg_entry_alloca(k, LLVMArrayType2(k->ptr, (uint64_t)np));
    for (int i = 0; i < np; i++) {
        LLVMValueRef idx = cg_i64(k, i);
        LLVMBuildStore(k->b, ptrs[i], LLVMBuildGEP2(k->b, k->ptr, p->slot, &idx, 1, ""));
    }
    char name[96];
    snprintf(name, sizeof name, "%s.rows%u", k->prefix, k->counter++);
    LLVMTypeRef pt[3] = {k->ptr, k->i64, k->i64};
    p->fn = LLVMAddFunction(k->mod, name, LLVMFunctionType(k->vd, pt, 3, 0));
    LLVMSetLinkage(p->fn, LLVMInternalLinkage);
    cg_function_set_target(p->fn, k->t, 0);
    /* not inlined into the sequential call: a second copy of the body (whose row loop LLVM
     * then unrolls with constant bounds) for one call less per node (compile time,
     * docs/performance.md) */
    LLVMAddAttributeAtIndex(p->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    p->saved_bb = LLVMGetInsertBlock(k->b);
    p->saved_fn = k->fn;
    k->fn = p->fn;
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, p->fn, "entry"));
    LLVMValueRef ctx = LLVMGetParam(p->fn, 0);
    for (int i = 0; i < np; i++) {
        LLVMValueRef idx = cg_i64(k, i);
        ptrs[i] = LLVMBuildLoad2(k->b, k->ptr, LLVMBuildGEP2(k->b, k->ptr, ctx, &idx, 1, ""), "");
    }
    LLVMValueRef b = LLVMGetParam(p->fn, 1), e = LLVMGetParam(p->fn, 2);
    LLVMValueRef iv = cg_loop_begin(k, &p->l, LLVMBuildSub(k->b, e, b, ""));
    return cg_add(k, iv, b);
}

void
cg_par_end(Kb *k, Par *p, const CgNodeArgs *a)
{
    cg_loop_end_hint(k, &p->l, IRB_NO_UNROLL); /* one row (or block) per iteration */
    LLVMBuildRetVoid(k->b);
    k->fn = p->saved_fn;
    LLVMPositionBuilderAtEnd(k->b, p->saved_bb);
    LLVMTypeRef pt[3] = {k->ptr, k->i64, k->i64};
    LLVMTypeRef ft = LLVMFunctionType(k->vd, pt, 3, 0);
    LLVMBasicBlockRef par = LLVMAppendBasicBlockInContext(k->c, k->fn, "par");
    LLVMBasicBlockRef seq = LLVMAppendBasicBlockInContext(k->c, k->fn, "seq");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(k->c, k->fn, "join");
    LLVMBuildCondBr(k->b, LLVMBuildIsNull(k->b, a->pf, ""), seq, par);
    LLVMPositionBuilderAtEnd(k->b, seq);
    LLVMValueRef args[3] = {p->slot, cg_i64(k, 0), cg_i64(k, p->rows)};
    LLVMBuildCall2(k->b, ft, p->fn, args, 3, "");
    LLVMBuildBr(k->b, join);
    LLVMPositionBuilderAtEnd(k->b, par);
    LLVMTypeRef pft[4] = {k->ptr, k->ptr, k->ptr, k->i64};
    LLVMValueRef pargs[4] = {a->pf_ctx, p->fn, p->slot, cg_i64(k, p->rows)};
    LLVMBuildCall2(k->b, LLVMFunctionType(k->vd, pft, 4, 0), a->pf, pargs, 4, "");
    LLVMBuildBr(k->b, join);
    LLVMPositionBuilderAtEnd(k->b, join);
}

LLVMValueRef
cg_vsplat(Kb *k, LLVMValueRef s, unsigned n)
{
    return irb_splat(k->b, k->c, s, n);
}

void
cg_if_begin(Kb *k, CgIf *f, LLVMValueRef cond)
{
    f->then_bb = LLVMAppendBasicBlockInContext(k->c, k->fn, "then");
    f->else_bb = LLVMAppendBasicBlockInContext(k->c, k->fn, "else");
    f->join = LLVMAppendBasicBlockInContext(k->c, k->fn, "join");
    LLVMBuildCondBr(k->b, cond, f->then_bb, f->else_bb);
    LLVMPositionBuilderAtEnd(k->b, f->then_bb);
}

void
cg_if_else(Kb *k, CgIf *f)
{
    LLVMBuildBr(k->b, f->join);
    LLVMPositionBuilderAtEnd(k->b, f->else_bb);
}

void
cg_if_end(Kb *k, CgIf *f)
{
    LLVMBuildBr(k->b, f->join);
    LLVMPositionBuilderAtEnd(k->b, f->join);
}

static void
ret_branch(Kb *k, LLVMValueRef cond, bool ret_on_true, LLVMValueRef status, const char *name)
{
    LLVMBasicBlockRef ret = LLVMAppendBasicBlockInContext(k->c, k->fn, name);
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(k->c, k->fn, "");
    LLVMBuildCondBr(k->b, cond, ret_on_true ? ret : cont, ret_on_true ? cont : ret);
    LLVMPositionBuilderAtEnd(k->b, ret);
    LLVMBuildRet(k->b, status);
    LLVMPositionBuilderAtEnd(k->b, cont);
}

void
cg_ret_if(Kb *k, LLVMValueRef bad, LLVMValueRef status, const char *name)
{
    ret_branch(k, bad, true, status, name);
}

void
cg_ret_unless(Kb *k, LLVMValueRef ok, LLVMValueRef status, const char *name)
{
    ret_branch(k, ok, false, status, name);
}

LLVMValueRef
cg_in_range(Kb *k, LLVMValueRef v, int64_t hi)
{
    return LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, v, cg_i64(k, 0), ""),
                        LLVMBuildICmp(k->b, LLVMIntSLT, v, cg_i64(k, hi), ""), "");
}

void
cg_nest_begin(Kb *k, CgNest *ns, const int64_t *dims, int r, int nops,
              const int64_t (*st)[IR_MAX_RANK], LLVMValueRef *idx)
{
    ns->n = r;
    for (int j = 0; j < nops; j++)
        idx[j] = cg_i64(k, 0);
    for (int d = 0; d < r; d++) {
        LLVMValueRef iv = cg_loop_begin(k, &ns->l[d], cg_i64(k, dims[d]));
        for (int j = 0; j < nops; j++)
            if (st[j][d])
                idx[j] = cg_add(k, idx[j], cg_mul(k, iv, cg_i64(k, st[j][d])));
    }
}

void
cg_nest_end(Kb *k, CgNest *ns)
{
    for (int d = ns->n - 1; d >= 0; d--)
        cg_loop_end(k, &ns->l[d]);
}

bool
cg_window(Kb *k, Node *n, const Type *x, const Type *y, const int64_t *kernel, CgWin *w)
{
    char buf[128];
    const char *why = ir_window(k->g, n, x, y, kernel, w, buf, sizeof buf);
    return !why || cg_fail(k, n, "%s", why);
}

int
cg_range_bits(Kb *k, ValueId v)
{
    int64_t lo, hi;
    elem_range(ir_value(k->g, v)->type.elem, &lo, &hi);
    return qn_range_bits(lo, hi);
}

bool
cg_fixed_ok(Kb *k, Node *n, const char *why)
{
    return !why || cg_fail(k, n, "--requant=fixed: %s", why);
}

bool
cg_elem_fixed(Kb *k, Node *n, CgElemFixed *f)
{
    const Type *y = &ir_value(k->g, n->out[0])->type;
    const QParams *qa = ir_value(k->g, n->in[0])->type.q;
    float sy = y->q->scale[0];
    if (n->op == OP_REQUANTIZE)
        return cg_fixed_ok(k, n, qn_requantize_fixed_params(qa->scale[0], sy, &f->m));
    float sb = ir_value(k->g, n->in[1])->type.q->scale[0];
    int ba = cg_range_bits(k, n->in[0]), bb = cg_range_bits(k, n->in[1]);
    int bits = ba > bb ? ba : bb;
    if (n->op == OP_QMUL)
        return cg_fixed_ok(k, n, qn_qmul_fixed_params(qa->scale[0], sb, sy, bits, &f->m));
    return cg_fixed_ok(k, n, qn_qadd_fixed_params(qa->scale[0], sb, sy, bits, &f->add));
}

LLVMValueRef
cg_elem_fixed_value(Kb *k, Node *n, const CgElemFixed *f, LLVMValueRef *d)
{
    switch (n->op) {
    case OP_REQUANTIZE:
        return cg_rescale_c(k, d[0], f->m);
    case OP_QMUL:
        return cg_rescale_c(k, LLVMBuildMul(k->b, d[0], d[1], ""), f->m);
    default:
        return cg_build_addsub_fixed(k->b, d[0], d[1], &f->add, n->op == OP_QSUB);
    }
}
