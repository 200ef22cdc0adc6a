/* float_minmax.c: reduce_min, reduce_max and round (f32), bit-identical to lib/ref/ref_minmax.c:
 * each reduction window is visited in row-major order, a value replaces the running one only
 * when strictly less (greater), from +inf (-inf); a NaN anywhere in the window makes the
 * result the quiet NaN the reference writes. Round is llvm.roundeven where |x| < 2^23 (NaN,
 * infinities and larger values pass unchanged, as in the reference). Plain scalar loops: these
 * ops appear on small shape computations (DynamicQuantizeLinear's expanded form). */
#include "codegen/lower/lower.h"

#include <llvm-c/Core.h>

#include <math.h>
#include <string.h>

static LLVMValueRef
intr1(Kb *k, const char *name, LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    return LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, &t, 1),
                          LLVMGetIntrinsicDeclaration(k->mod, id, &t, 1), &v, 1, "");
}

static bool
emit_round(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *x = &ir_value(k->g, n->in[0])->type;
    CgLoop l;
    LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, (int64_t)type_numel_unchecked(x)));
    LLVMValueRef v = cg_load_raw(k, ET_F32, a->in[0], i);
    LLVMValueRef small = LLVMBuildFCmp(k->b, LLVMRealOLT, intr1(k, "llvm.fabs", v), cg_f32(k, 8388608.0f), "");
    cg_store_raw(k, ET_F32, a->out[0], i, LLVMBuildSelect(k->b, small, intr1(k, "llvm.roundeven", v), v, ""));
    cg_loop_end(k, &l);
    return true;
}

static bool
emit_reduce_minmax(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *t = &ir_value(k->g, n->in[0])->type;
    bool is_min = n->op == OP_REDUCE_MIN;
    int64_t axes[IR_MAX_RANK];
    int na = ir_attr_ints(k->g, n, "axes", axes, IR_MAX_RANK);
    bool red[IR_MAX_RANK] = {0};
    for (int d = 0; d < t->rank; d++)
        red[d] = na < 0;
    for (int i = 0; i < na; i++)
        red[axes[i] < 0 ? axes[i] + t->rank : axes[i]] = true;
    int64_t xs[IR_MAX_RANK], kd[IR_MAX_RANK], rd[IR_MAX_RANK];
    int64_t kst[2][IR_MAX_RANK], rst[1][IR_MAX_RANK], s = 1;
    int nk = 0, nr = 0;
    type_strides(t, xs);
    for (int d = 0; d < t->rank; d++) {
        if (red[d]) {
            rd[nr] = t->dims[d];
            rst[0][nr++] = xs[d];
        } else {
            kd[nk] = t->dims[d];
            kst[0][nk++] = xs[d];
        }
    }
    for (int d = nk - 1; d >= 0; d--) {
        kst[1][d] = s;
        s *= kd[d];
    }
    LLVMBuilderRef b = k->b;
    LLVMValueRef accp = cg_entry_alloca(k, k->f32), nanp = cg_entry_alloca(k, k->i1);
    CgNest nko, nre;
    LLVMValueRef ki[2], ri[1];
    cg_nest_begin(k, &nko, kd, nk, 2, (const int64_t (*)[IR_MAX_RANK])kst, ki);
    LLVMBuildStore(b, cg_f32(k, is_min ? INFINITY : -INFINITY), accp);
    LLVMBuildStore(b, LLVMConstInt(k->i1, 0, 0), nanp);
    cg_nest_begin(k, &nre, rd, nr, 1, (const int64_t (*)[IR_MAX_RANK])rst, ri);
    LLVMValueRef v = cg_load_raw(k, ET_F32, a->in[0], cg_add(k, ki[0], ri[0]));
    LLVMValueRef acc = LLVMBuildLoad2(b, k->f32, accp, "");
    LLVMValueRef better = LLVMBuildFCmp(b, is_min ? LLVMRealOLT : LLVMRealOGT, v, acc, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, better, v, acc, ""), accp);
    LLVMBuildStore(b, LLVMBuildOr(b, LLVMBuildLoad2(b, k->i1, nanp, ""),
                                  LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), ""), nanp);
    cg_nest_end(k, &nre);
    LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildLoad2(b, k->i1, nanp, ""), cg_f32(k, NAN),
                                     LLVMBuildLoad2(b, k->f32, accp, ""), "");
    cg_store_raw(k, ET_F32, a->out[0], ki[1], r);
    cg_nest_end(k, &nko);
    return true;
}

bool
cg_emit_minmax(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    if (ir_value(g, n->in[0])->type.elem != ET_F32 || ir_value(g, n->out[0])->type.elem != ET_F32)
        return cg_fail(k, n, "%s: only f32 is supported", op_info(n->op)->name);
    return n->op == OP_ROUND ? emit_round(k, n, a) : emit_reduce_minmax(k, n, a);
}
