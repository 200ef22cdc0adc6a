/* reduce.c: reduce_sum, reduce_max, reduce_min and argmax, exactly as lib/ir/eval.c defines
 * them (the reference interpreter runs that code):
 *  - float sums add in double into IR_SUM_LANES partial sums, element k of an output's reduced
 *    elements into partial k mod 8 (each starting at -0.0), combined as
 *    ((p0+p4)+(p2+p6))+((p1+p5)+(p3+p7)) and rounded once (a NaN: the canonical one, since
 *    x86 and AArch64 make different NaNs of inf - inf); integer sums wrap (in the element
 *    type, which equals eval.c's int64 sum truncated);
 *  - float max/min are llvm.maximum / llvm.minimum (NaN if any operand is, -0 < +0), whose
 *    result does not depend on the order, then a NaN becomes the canonical quiet NaN; integers
 *    use smax/umax/smin/umin by type, bool as its bytes (then != 0);
 *  - argmax walks the axis in order keeping the first (last) largest, a NaN above any number.
 * When the reduced axes are the trailing ones (each output reduces one contiguous block: the
 * last-axis reductions of transformers) the block runs as explicit vectors: 8 f32 widened to 8
 * doubles per step for float sums (the 8 partial sums are the 8 lanes; a tail adds -0.0 in the
 * lanes it does not reach), ISA-width vectors of the element type for max, min and integer
 * sums; outputs are split across the parallel-for hook when the operand has at least PAR_MIN
 * elements. Other axis sets run as scalar loops in eval.c's order (a counter picks the
 * partial sum). */
#include "codegen/lower/lower.h"
#include "codegen/target/isa.h"
#include "codegen/target/module.h"
#include "ir/eval.h"

#include <llvm-c/Core.h>

#include <math.h>
#include <string.h>

enum { PAR_MIN = 1 << 15 };

static const Type *
vt(Kb *k, ValueId v)
{
    return &ir_value(k->g, v)->type;
}

static LLVMValueRef
intr(Kb *k, const char *name, LLVMTypeRef t, LLVMValueRef *args, unsigned n)
{
    return irb_intr(k->b, k->c, k->mod, name, &t, 1, args, n);
}

static bool
is_unsigned(ElemType e)
{
    return e == ET_U8 || e == ET_U16 || e == ET_U32 || e == ET_BOOL;
}

/* The neutral start of an output (-0.0 for float sums), as eval.c sets it, in type t. */
static LLVMValueRef
start_value(Kb *k, OpKind op, ElemType e, LLVMTypeRef t)
{
    bool max = op == OP_REDUCE_MAX;
    if (elem_is_float(e) || op == OP_REDUCE_SUM)
        return elem_is_float(e) ? LLVMConstReal(t, op == OP_REDUCE_SUM ? -0.0
                                                   : max ? -INFINITY : INFINITY)
                                : LLVMConstInt(t, 0, 0);
    int64_t lo, hi;
    elem_range(e, &lo, &hi);
    return LLVMConstInt(t, (unsigned long long)(max ? lo : hi), 1);
}

/* max/min of a and b (scalars or vectors of the element type e, or f64 for f16) */
static LLVMValueRef
extreme(Kb *k, OpKind op, ElemType e, LLVMValueRef a, LLVMValueRef b)
{
    bool max = op == OP_REDUCE_MAX;
    const char *nm = elem_is_float(e) ? (max ? "llvm.maximum" : "llvm.minimum")
                     : is_unsigned(e) ? (max ? "llvm.umax" : "llvm.umin")
                                      : (max ? "llvm.smax" : "llvm.smin");
    LLVMValueRef args[2] = {a, b};
    return intr(k, nm, LLVMTypeOf(a), args, 2);
}

/* A finished output r (double for float sums, else the element's own type) stored at y[i]. */
static void
store_result(Kb *k, Node *n, LLVMValueRef out, LLVMValueRef i, LLVMValueRef r)
{
    ElemType e = vt(k, n->out[0])->elem;
    LLVMBuilderRef b = k->b;
    if (elem_is_float(e) && n->op != OP_REDUCE_SUM) {
        /* a NaN: the canonical quiet NaN (eval.c stores NAN) */
        LLVMTypeRef t = LLVMTypeOf(r);
        r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, r, r, ""), LLVMConstReal(t, NAN), r, "");
        if (e == ET_F16)
            r = LLVMBuildFPTrunc(b, r, cg_elem_type(k, ET_F16), ""); /* an f16 value: exact */
    } else if (elem_is_float(e)) {
        r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, r, r, ""), LLVMConstReal(k->f64, NAN), r, "");
        if (e == ET_F32)
            r = LLVMBuildFPTrunc(b, r, k->f32, "");
        else if (e == ET_F16) /* eval.c: tensor_set_f, i.e. to f32, then f16 */
            r = LLVMBuildFPTrunc(b, LLVMBuildFPTrunc(b, r, k->f32, ""), cg_elem_type(k, ET_F16), "");
    } else if (e == ET_BOOL) {
        r = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, r, LLVMConstInt(LLVMTypeOf(r), 0, 0), ""),
                          k->i8, "");
    }
    cg_store_raw(k, e, out, i, r);
}

/* The element as the accumulation reads it: double for float sums, f32 for f16 max/min. */
static LLVMValueRef
load_acc(Kb *k, OpKind op, ElemType e, LLVMValueRef base, LLVMValueRef i)
{
    LLVMValueRef v = cg_load_raw(k, e, base, i);
    if (op == OP_REDUCE_SUM && elem_is_float(e) && e != ET_F64)
        return LLVMBuildFPExt(k->b, v, k->f64, "");
    if (e == ET_F16)
        return LLVMBuildFPExt(k->b, v, k->f32, "");
    return v;
}

/* ---- contiguous blocks (the reduced axes are the trailing ones) ---- */

/* Reduce x[base, base + R) (vector steps of vl lanes, then a tail) into one value. */
static LLVMValueRef
block(Kb *k, Node *n, ElemType e, LLVMValueRef x, LLVMValueRef base, int64_t R, unsigned vl)
{
    LLVMBuilderRef b = k->b;
    bool fsum = n->op == OP_REDUCE_SUM && elem_is_float(e);
    LLVMTypeRef st = fsum ? k->f64 : e == ET_F16 ? k->f32 : cg_elem_type(k, e);
    LLVMTypeRef vty = LLVMVectorType(st, vl);
    LLVMValueRef neutral = start_value(k, n->op, e, st);
    LLVMValueRef accp = cg_entry_alloca(k, vty);
    LLVMBuildStore(b, cg_vsplat(k, neutral, vl), accp);
    int64_t nv = R / vl;
    if (nv > 0) {
        CgLoop l;
        LLVMValueRef q = cg_loop_begin(k, &l, cg_i64(k, nv));
        LLVMValueRef p = LLVMBuildGEP2(b, cg_elem_type(k, e), x,
                                       (LLVMValueRef[]){cg_add(k, base, cg_mul(k, q, cg_i64(k, vl)))}, 1, "");
        LLVMValueRef v = irb_load(&k->ir, LLVMVectorType(cg_elem_type(k, e), vl), p, 1);
        if (LLVMVectorType(cg_elem_type(k, e), vl) != vty)
            v = LLVMBuildFPExt(b, v, vty, "");
        LLVMValueRef acc = LLVMBuildLoad2(b, vty, accp, "");
        acc = n->op == OP_REDUCE_SUM ? (fsum ? LLVMBuildFAdd(b, acc, v, "") : LLVMBuildAdd(b, acc, v, ""))
                                     : extreme(k, n->op, e, acc, v);
        LLVMBuildStore(b, acc, accp);
        cg_loop_end(k, &l);
    }
    LLVMValueRef acc = LLVMBuildLoad2(b, vty, accp, "");
    if (R % vl) { /* lane j takes element nv*vl + j: its place in the order; the rest neutral */
        LLVMValueRef t = cg_vsplat(k, neutral, vl);
        for (int64_t j = 0; j < R % vl; j++)
            t = LLVMBuildInsertElement(b, t, load_acc(k, n->op, e, x, cg_add(k, base, cg_i64(k, nv * vl + j))),
                                       cg_i32(k, j), "");
        acc = n->op == OP_REDUCE_SUM ? (fsum ? LLVMBuildFAdd(b, acc, t, "") : LLVMBuildAdd(b, acc, t, ""))
                                     : extreme(k, n->op, e, acc, t);
    }
    if (fsum) { /* ((p0+p4)+(p2+p6))+((p1+p5)+(p3+p7)) */
        for (unsigned h = vl / 2; h >= 1; h /= 2) {
            LLVMValueRef lo[8], hi[8];
            for (unsigned j = 0; j < h; j++) {
                lo[j] = cg_i32(k, j);
                hi[j] = cg_i32(k, h + j);
            }
            LLVMValueRef a0 = LLVMBuildShuffleVector(b, acc, acc, LLVMConstVector(lo, h), "");
            LLVMValueRef a1 = LLVMBuildShuffleVector(b, acc, acc, LLVMConstVector(hi, h), "");
            acc = LLVMBuildFAdd(b, a0, a1, "");
        }
        return LLVMBuildExtractElement(b, acc, cg_i32(k, 0), "");
    }
    const char *nm = n->op == OP_REDUCE_SUM ? "llvm.vector.reduce.add"
                     : elem_is_float(e) ? (n->op == OP_REDUCE_MAX ? "llvm.vector.reduce.fmaximum"
                                                                  : "llvm.vector.reduce.fminimum")
                     : is_unsigned(e) ? (n->op == OP_REDUCE_MAX ? "llvm.vector.reduce.umax"
                                                                : "llvm.vector.reduce.umin")
                                      : (n->op == OP_REDUCE_MAX ? "llvm.vector.reduce.smax"
                                                                : "llvm.vector.reduce.smin");
    return intr(k, nm, vty, &acc, 1);
}

static bool
emit_blocks(Kb *k, Node *n, const CgNodeArgs *a, int64_t outs, int64_t R)
{
    ElemType e = vt(k, n->in[0])->elem;
    bool fsum = n->op == OP_REDUCE_SUM && elem_is_float(e);
    /* lanes: the 8 partial sums; else an ISA vector of 32-bit lanes (of the element type up to
     * 32 bits, which f16 widens to f32), half as many 64-bit ones */
    unsigned vl = cg_isa_i32_lanes(k->t, k->isa);
    if (fsum)
        vl = IR_SUM_LANES;
    else if (elem_size(e) == 8)
        vl /= 2;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    bool par = outs > 1 && outs * R >= PAR_MIN;
    Par pp;
    LLVMValueRef o;
    CgLoop l;
    if (par) {
        o = cg_par_begin(k, &pp, outs, io, 2);
        if (cg_isa_i32_lanes(k->t, k->isa) == 16)
            cg_function_set_target(pp.fn, k->t, 512);
    } else {
        o = cg_loop_begin(k, &l, cg_i64(k, outs));
    }
    LLVMValueRef r;
    if (R == 0) /* eval.c: an empty sum is +0.0; an empty max/min its start */
        r = fsum ? LLVMConstReal(k->f64, 0.0)
                 : start_value(k, n->op, e, e == ET_F16 ? k->f32 : cg_elem_type(k, e));
    else
        r = block(k, n, e, io[0], cg_mul(k, o, cg_i64(k, R)), R, vl);
    store_result(k, n, io[1], o, r);
    if (par)
        cg_par_end(k, &pp, a);
    else
        cg_loop_end(k, &l);
    return true;
}

/* ---- any axes: scalar loops in eval.c's order ---- */

static bool
emit_general(Kb *k, Node *n, const CgNodeArgs *a, const bool *red)
{
    const Type *t = vt(k, n->in[0]);
    ElemType e = t->elem;
    LLVMBuilderRef b = k->b;
    bool fsum = n->op == OP_REDUCE_SUM && elem_is_float(e);
    int64_t xs[IR_MAX_RANK], kd[IR_MAX_RANK], rd[IR_MAX_RANK];
    int64_t kst[2][IR_MAX_RANK], rst[1][IR_MAX_RANK], s = 1, cnt = 1;
    int nk = 0, nr = 0;
    type_strides(t, xs);
    for (int d = 0; d < t->rank; d++) {
        if (red[d]) {
            rd[nr] = t->dims[d];
            rst[0][nr++] = xs[d];
            cnt *= t->dims[d];
        } else {
            kd[nk] = t->dims[d];
            kst[0][nk++] = xs[d];
        }
    }
    for (int d = nk - 1; d >= 0; d--) {
        kst[1][d] = s;
        s *= kd[d];
    }
    LLVMTypeRef st = fsum ? k->f64 : e == ET_F16 ? k->f32 : cg_elem_type(k, e);
    LLVMValueRef neutral = start_value(k, n->op, e, st);
    LLVMTypeRef at = LLVMArrayType2(st, IR_SUM_LANES);
    LLVMValueRef accp = cg_entry_alloca(k, at), kp = cg_entry_alloca(k, k->i64);
    CgNest nko, nre;
    LLVMValueRef ki[2], ri[1];
    cg_nest_begin(k, &nko, kd, nk, 2, (const int64_t (*)[IR_MAX_RANK])kst, ki);
    for (int j = 0; j < IR_SUM_LANES; j++)
        LLVMBuildStore(b, neutral, LLVMBuildGEP2(b, st, accp, (LLVMValueRef[]){cg_i64(k, j)}, 1, ""));
    LLVMBuildStore(b, cg_i64(k, 0), kp);
    cg_nest_begin(k, &nre, rd, nr, 1, (const int64_t (*)[IR_MAX_RANK])rst, ri);
    LLVMValueRef kk = LLVMBuildLoad2(b, k->i64, kp, "");
    LLVMValueRef lane = fsum ? LLVMBuildAnd(b, kk, cg_i64(k, IR_SUM_LANES - 1), "") : cg_i64(k, 0);
    LLVMValueRef p = LLVMBuildGEP2(b, st, accp, &lane, 1, "");
    LLVMValueRef acc = LLVMBuildLoad2(b, st, p, ""), v = load_acc(k, n->op, e, a->in[0], cg_add(k, ki[0], ri[0]));
    acc = n->op == OP_REDUCE_SUM ? (fsum ? LLVMBuildFAdd(b, acc, v, "") : LLVMBuildAdd(b, acc, v, ""))
                                 : extreme(k, n->op, e, acc, v);
    LLVMBuildStore(b, acc, p);
    LLVMBuildStore(b, cg_add(k, kk, cg_i64(k, 1)), kp);
    cg_nest_end(k, &nre);
    LLVMValueRef r;
    if (fsum && cnt == 0) {
        r = LLVMConstReal(k->f64, 0.0);
    } else if (fsum) {
        LLVMValueRef pv[IR_SUM_LANES];
        for (int j = 0; j < IR_SUM_LANES; j++)
            pv[j] = LLVMBuildLoad2(b, st, LLVMBuildGEP2(b, st, accp, (LLVMValueRef[]){cg_i64(k, j)}, 1, ""), "");
        r = LLVMBuildFAdd(b, LLVMBuildFAdd(b, LLVMBuildFAdd(b, pv[0], pv[4], ""), LLVMBuildFAdd(b, pv[2], pv[6], ""), ""),
                          LLVMBuildFAdd(b, LLVMBuildFAdd(b, pv[1], pv[5], ""), LLVMBuildFAdd(b, pv[3], pv[7], ""), ""), "");
    } else {
        r = LLVMBuildLoad2(b, st, accp, "");
    }
    store_result(k, n, a->out[0], ki[1], r);
    cg_nest_end(k, &nko);
    return true;
}

/* ---- argmax ---- */

static bool
emit_argmax(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *t = vt(k, n->in[0]);
    ElemType e = t->elem;
    LLVMBuilderRef b = k->b;
    int64_t ax = ir_attr_int(k->g, n, "axis", 0);
    if (ax < 0)
        ax += t->rank;
    bool last = ir_attr_int(k->g, n, "select_last_index", 0) != 0, fl = elem_is_float(e);
    int64_t outer = 1, dim = t->dims[ax], inner = 1;
    for (int d = 0; d < ax; d++)
        outer *= t->dims[d];
    for (int d = (int)ax + 1; d < t->rank; d++)
        inner *= t->dims[d];
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    bool par = outer > 1 && outer * dim * inner >= PAR_MIN;
    Par pp;
    CgLoop lo, li, lj;
    LLVMValueRef vo = par ? cg_par_begin(k, &pp, outer, io, 2) : cg_loop_begin(k, &lo, cg_i64(k, outer));
    LLVMValueRef vi = cg_loop_begin(k, &li, cg_i64(k, inner));
    LLVMValueRef b0 = cg_add(k, cg_mul(k, vo, cg_i64(k, dim * inner)), vi);
    LLVMTypeRef vty = fl ? (e == ET_F64 ? k->f64 : k->f32) : k->i64;
    LLVMValueRef bestp = cg_entry_alloca(k, k->i64), bvp = cg_entry_alloca(k, vty);
    LLVMValueRef v0 = fl ? load_acc(k, OP_ARGMAX, e, io[0], b0) : cg_load_i64(k, e, io[0], b0);
    if (e == ET_BOOL)
        v0 = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, v0, cg_i64(k, 0), ""), k->i64, "");
    LLVMBuildStore(b, cg_i64(k, 0), bestp);
    LLVMBuildStore(b, v0, bvp);
    LLVMValueRef j = cg_add(k, cg_loop_begin(k, &lj, cg_i64(k, dim - 1)), cg_i64(k, 1));
    LLVMValueRef xi = cg_add(k, b0, cg_mul(k, j, cg_i64(k, inner)));
    LLVMValueRef v = fl ? load_acc(k, OP_ARGMAX, e, io[0], xi) : cg_load_i64(k, e, io[0], xi);
    if (e == ET_BOOL)
        v = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, v, cg_i64(k, 0), ""), k->i64, "");
    LLVMValueRef bv = LLVMBuildLoad2(b, vty, bvp, ""), take;
    if (fl) { /* eval.c: bv NaN ? last && v NaN : v NaN || v > bv || (last && v == bv) */
        LLVMValueRef vn = LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), bn = LLVMBuildFCmp(b, LLVMRealUNO, bv, bv, "");
        LLVMValueRef gt = LLVMBuildFCmp(b, last ? LLVMRealOGE : LLVMRealOGT, v, bv, "");
        LLVMValueRef ifnum = LLVMBuildOr(b, vn, gt, "");
        take = LLVMBuildSelect(b, bn, last ? vn : LLVMConstInt(k->i1, 0, 0), ifnum, "");
    } else {
        take = LLVMBuildICmp(b, last ? LLVMIntSGE : LLVMIntSGT, v, bv, "");
    }
    LLVMBuildStore(b, LLVMBuildSelect(b, take, j, LLVMBuildLoad2(b, k->i64, bestp, ""), ""), bestp);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, v, bv, ""), bvp);
    cg_loop_end(k, &lj);
    cg_store_raw(k, ET_I64, io[1], cg_add(k, cg_mul(k, vo, cg_i64(k, inner)), vi),
                 LLVMBuildLoad2(b, k->i64, bestp, ""));
    cg_loop_end(k, &li);
    if (par)
        cg_par_end(k, &pp, a);
    else
        cg_loop_end(k, &lo);
    return true;
}

bool
cg_emit_reduce(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *t = vt(k, n->in[0]);
    if (t->elem == ET_I4 || t->elem == ET_U4 || t->elem == ET_NONE)
        return cg_fail(k, n, "%s of %s is not supported", op_info(n->op)->name, elem_name(t->elem));
    if (n->op == OP_ARGMAX)
        return emit_argmax(k, n, a);
    IrReduceSplit rs;
    if (!ir_reduce_split(k->g, n, t, &rs))
        return cg_fail(k, n, "axis out of range");
    /* trailing reduced axes only: outputs x R contiguous elements */
    if (!rs.trailing)
        return emit_general(k, n, a, rs.red);
    if (rs.nkept == 0)
        return true;
    return emit_blocks(k, n, a, rs.nkept, rs.cnt);
}
