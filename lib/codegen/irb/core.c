/* core.c: the shared IR-building sequences (core.h). */
#include "codegen/irb/core.h"

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>

LLVMValueRef
irb_loop_begin(LLVMBuilderRef b, LLVMContextRef c, LLVMValueRef fn, IrbLoop *l,
               LLVMValueRef start, LLVMValueRef end, LLVMValueRef step, const char *hdr,
               const char *body, const char *exit, const char *iv)
{
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    l->hdr = LLVMAppendBasicBlockInContext(c, fn, hdr);
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(c, fn, body);
    l->exit = LLVMAppendBasicBlockInContext(c, fn, exit);
    l->step = step;
    LLVMBuildBr(b, l->hdr);
    LLVMPositionBuilderAtEnd(b, l->hdr);
    l->iv = LLVMBuildPhi(b, LLVMTypeOf(start), iv);
    LLVMAddIncoming(l->iv, &start, &pre, 1);
    LLVMValueRef cond = LLVMBuildICmp(b, LLVMIntSLT, l->iv, end, "");
    LLVMBuildCondBr(b, cond, bb, l->exit);
    LLVMPositionBuilderAtEnd(b, bb);
    return l->iv;
}

LLVMValueRef
irb_loop_latch(LLVMBuilderRef b, IrbLoop *l)
{
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMValueRef next = LLVMBuildNSWAdd(b, l->iv, l->step, "");
    LLVMValueRef br = LLVMBuildBr(b, l->hdr);
    LLVMAddIncoming(l->iv, &next, &latch, 1);
    return br;
}

void
irb_loop_hint(LLVMContextRef c, LLVMValueRef br, unsigned hints)
{
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(c, NULL, 0);
    LLVMMetadataRef ops[3] = {tmp};
    unsigned n = 1;
    if (hints & IRB_NO_VECTORIZE) {
        const char *key = "llvm.loop.vectorize.enable";
        LLVMMetadataRef kv[2] = {LLVMMDStringInContext2(c, key, strlen(key)),
                                 LLVMValueAsMetadata(LLVMConstInt(LLVMInt1TypeInContext(c), 0, 0))};
        ops[n++] = LLVMMDNodeInContext2(c, kv, 2);
    }
    if (hints & IRB_NO_UNROLL) {
        const char *key = "llvm.loop.unroll.disable";
        LLVMMetadataRef kv = LLVMMDStringInContext2(c, key, strlen(key));
        ops[n++] = LLVMMDNodeInContext2(c, &kv, 1);
    }
    LLVMMetadataRef id = LLVMMDNodeInContext2(c, ops, n);
    LLVMMetadataReplaceAllUsesWith(tmp, id); /* also frees tmp */
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c, "llvm.loop", 9), LLVMMetadataAsValue(c, id));
}

void
irb_init(Irb *ir, LLVMModuleRef mod, LLVMBuilderRef b)
{
    LLVMContextRef c = LLVMGetModuleContext(mod);
    *ir = (Irb){.c = c, .mod = mod, .b = b};
    ir->i1 = LLVMInt1TypeInContext(c);
    ir->i8 = LLVMInt8TypeInContext(c);
    ir->i16 = LLVMInt16TypeInContext(c);
    ir->i32 = LLVMInt32TypeInContext(c);
    ir->i64 = LLVMInt64TypeInContext(c);
    ir->f32 = LLVMFloatTypeInContext(c);
    ir->f64 = LLVMDoubleTypeInContext(c);
    ir->ptr = LLVMPointerTypeInContext(c, 0);
    ir->vd = LLVMVoidTypeInContext(c);
}

LLVMValueRef
irb_i64(const Irb *ir, int64_t v)
{
    return LLVMConstInt(ir->i64, (unsigned long long)v, 1);
}

LLVMValueRef
irb_i32(const Irb *ir, int64_t v)
{
    return LLVMConstInt(ir->i32, (unsigned long long)v, 1);
}

LLVMValueRef
irb_gep8(const Irb *ir, LLVMValueRef base, LLVMValueRef off)
{
    return LLVMBuildInBoundsGEP2(ir->b, ir->i8, base, &off, 1, "");
}

LLVMValueRef
irb_load(const Irb *ir, LLVMTypeRef t, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef v = LLVMBuildLoad2(ir->b, t, ptr, "");
    LLVMSetAlignment(v, align);
    return v;
}

void
irb_store(const Irb *ir, LLVMValueRef v, LLVMValueRef ptr, unsigned align)
{
    LLVMSetAlignment(LLVMBuildStore(ir->b, v, ptr), align);
}

LLVMValueRef
irb_fma(const Irb *ir, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[3] = {a, b, c};
    return irb_intr(ir->b, ir->c, ir->mod, "llvm.fma", &t, 1, args, 3);
}

LLVMBasicBlockRef
irb_block(const Irb *ir, const char *name)
{
    return LLVMAppendBasicBlockInContext(ir->c, ir->fn, name);
}

LLVMValueRef
irb_do_begin(const Irb *ir, IrbDoLoop *l, const char *name)
{
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(ir->b);
    l->head = LLVMAppendBasicBlockInContext(ir->c, ir->fn, name);
    l->exit = LLVMAppendBasicBlockInContext(ir->c, ir->fn, name);
    LLVMBuildBr(ir->b, l->head);
    LLVMPositionBuilderAtEnd(ir->b, l->head);
    l->iv = LLVMBuildPhi(ir->b, ir->i64, name);
    LLVMValueRef zero = irb_i64(ir, 0);
    LLVMAddIncoming(l->iv, &zero, &pre, 1);
    return l->iv;
}

void
irb_do_end(const Irb *ir, IrbDoLoop *l, LLVMValueRef n)
{
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(ir->b);
    LLVMValueRef next = LLVMBuildNSWAdd(ir->b, l->iv, irb_i64(ir, 1), "");
    LLVMAddIncoming(l->iv, &next, &latch, 1);
    LLVMValueRef more = LLVMBuildICmp(ir->b, LLVMIntSLT, next, n, "");
    LLVMBuildCondBr(ir->b, more, l->head, l->exit);
    LLVMPositionBuilderAtEnd(ir->b, l->exit);
}

LLVMValueRef
irb_splat(LLVMBuilderRef b, LLVMContextRef c, LLVMValueRef s, unsigned n)
{
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), n);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
    LLVMValueRef v = LLVMBuildInsertElement(b, LLVMGetPoison(vt), s, LLVMConstInt(i32, 0, 1), "");
    return LLVMBuildShuffleVector(b, v, LLVMGetPoison(vt), LLVMConstNull(LLVMVectorType(i32, n)),
                                  "");
}

LLVMValueRef
irb_intr(LLVMBuilderRef b, LLVMContextRef c, LLVMModuleRef mod, const char *name, LLVMTypeRef *ov,
         size_t nov, LLVMValueRef *args, unsigned nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    assert(id != 0 && "unknown intrinsic");
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(mod, id, ov, nov);
    LLVMTypeRef fty = LLVMIntrinsicGetType(c, id, ov, nov);
    return LLVMBuildCall2(b, fty, f, args, nargs, "");
}

static void
align_arg(LLVMContextRef c, LLVMValueRef call, unsigned arg, unsigned align)
{
    LLVMAddCallSiteAttribute(call, arg, LLVMCreateEnumAttribute(c, LLVMGetEnumAttributeKindForName("align", 5), align));
}

LLVMValueRef
irb_masked_load(LLVMBuilderRef b, LLVMContextRef c, LLVMModuleRef mod, LLVMTypeRef vt,
                LLVMValueRef ptr, LLVMValueRef mask, LLVMValueRef pass, unsigned align)
{
    LLVMTypeRef ov[2] = {vt, LLVMTypeOf(ptr)};
    LLVMValueRef args[3] = {ptr, mask, pass};
    LLVMValueRef v = irb_intr(b, c, mod, "llvm.masked.load", ov, 2, args, 3);
    align_arg(c, v, 1, align);
    return v;
}

void
irb_masked_store(LLVMBuilderRef b, LLVMContextRef c, LLVMModuleRef mod, LLVMValueRef v,
                 LLVMValueRef ptr, LLVMValueRef mask, unsigned align)
{
    LLVMTypeRef ov[2] = {LLVMTypeOf(v), LLVMTypeOf(ptr)};
    LLVMValueRef args[3] = {v, ptr, mask};
    align_arg(c, irb_intr(b, c, mod, "llvm.masked.store", ov, 2, args, 3), 2, align);
}

LLVMValueRef
irb_const_global(LLVMContextRef c, LLVMModuleRef mod, const char *name, const void *data,
                 size_t n)
{
    LLVMValueRef init = LLVMConstStringInContext2(c, (const char *)data, n, 1);
    LLVMValueRef gv = LLVMAddGlobal(mod, LLVMTypeOf(init), name);
    LLVMSetInitializer(gv, init);
    LLVMSetGlobalConstant(gv, 1);
    LLVMSetLinkage(gv, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(gv, 64);
    return gv;
}

/* ---- fixed-mode integer arithmetic ---- */

LLVMValueRef
cg_const_like(LLVMValueRef v, int64_t c)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
        return LLVMConstInt(t, (unsigned long long)c, 1);
    unsigned n = LLVMGetVectorSize(t);
    LLVMValueRef e = LLVMConstInt(LLVMGetElementType(t), (unsigned long long)c, 1);
    LLVMValueRef *lanes = malloc(n * sizeof *lanes);
    if (!lanes)
        abort();
    for (unsigned i = 0; i < n; i++)
        lanes[i] = e;
    LLVMValueRef r = LLVMConstVector(lanes, n);
    free(lanes);
    return r;
}

LLVMValueRef
cg_build_rescale(LLVMBuilderRef b, LLVMValueRef v, LLVMValueRef mult, LLVMValueRef shift)
{
    LLVMValueRef p = LLVMBuildMul(b, v, mult, "");
    p = LLVMBuildAShr(b, p, LLVMBuildSub(b, shift, cg_const_like(shift, 1), ""), "");
    p = LLVMBuildAdd(b, p, cg_const_like(p, 1), "");
    return LLVMBuildAShr(b, p, cg_const_like(p, 1), "");
}

static LLVMValueRef
select_cmp(LLVMBuilderRef b, LLVMIntPredicate pred, LLVMValueRef x, LLVMValueRef y)
{
    return LLVMBuildSelect(b, LLVMBuildICmp(b, pred, x, y, ""), x, y, "");
}

LLVMValueRef
cg_build_rescale_wide(LLVMBuilderRef b, LLVMValueRef acc, LLVMValueRef mult, LLVMValueRef shift)
{
    LLVMValueRef c31 = cg_const_like(acc, 31);
    LLVMValueRef rnd = LLVMBuildShl(b, cg_const_like(shift, 1), LLVMBuildSub(b, shift, cg_const_like(shift, 1), ""), "");
    LLVMValueRef h = LLVMBuildAShr(b, acc, c31, "");
    LLVMValueRef l = LLVMBuildAnd(b, acc, cg_const_like(acc, 0x7fffffff), "");
    LLVMValueRef t = LLVMBuildAShr(b, LLVMBuildAdd(b, LLVMBuildMul(b, l, mult, ""), rnd, ""), c31, "");
    LLVMValueRef sh = select_cmp(b, LLVMIntSGT, LLVMBuildSub(b, shift, c31, ""), cg_const_like(shift, 0));
    LLVMValueRef vb = LLVMBuildAShr(b, LLVMBuildAdd(b, LLVMBuildMul(b, h, mult, ""), t, ""), sh, "");
    LLVMValueRef ac = select_cmp(b, LLVMIntSGT, acc, cg_const_like(acc, -INT64_C(0xffffffff)));
    ac = select_cmp(b, LLVMIntSLT, ac, cg_const_like(acc, INT64_C(0xffffffff)));
    LLVMValueRef va = LLVMBuildAShr(b, LLVMBuildAdd(b, LLVMBuildMul(b, ac, mult, ""), rnd, ""), shift, "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGE, shift, c31, ""), vb, va, "");
}

static LLVMValueRef
rescale_c(LLVMBuilderRef b, LLVMValueRef v, QnFixed f)
{
    return cg_build_rescale(b, v, cg_const_like(v, f.mult), cg_const_like(v, f.shift));
}

LLVMValueRef
cg_build_add_sat(LLVMBuilderRef b, LLVMValueRef v, int32_t zy, int32_t lo, int32_t hi)
{
    v = LLVMBuildAdd(b, v, cg_const_like(v, zy), "");
    LLVMValueRef l = cg_const_like(v, lo), h = cg_const_like(v, hi);
    v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, l, ""), l, v, "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, v, h, ""), h, v, "");
}

LLVMValueRef
cg_build_addsub_fixed(LLVMBuilderRef b, LLVMValueRef da, LLVMValueRef db, const QnAddFixed *f,
                      bool sub)
{
    LLVMValueRef A = rescale_c(b, da, f->a), B = rescale_c(b, db, f->b);
    return rescale_c(b, sub ? LLVMBuildSub(b, A, B, "") : LLVMBuildAdd(b, A, B, ""), f->y);
}
