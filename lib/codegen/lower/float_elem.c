/* float_elem.c: float-island kernels (f32, ONNX semantics) matching lib/ref/ref_elem.c
 * and lib/ref/ref.c operation for operation: element-wise add/sub/mul/div/prelu with numpy
 * broadcasting (one f32 operation; the f32 ones run as float_math.c's vector kernel), the
 * piecewise-linear activations (relu, clip, leaky_relu, hard_sigmoid, hard_swish) evaluated in double and rounded once as the reference does,
 * batchnorm, qreduce_mean, cast and the dynamic (run-time scale / zero point) quantize /
 * dequantize (dynamic_quantize: dynq.c), each an emitter of ops.def's LOWER column. The
 * transcendental functions (sigmoid, tanh, erf, gelu, exp, log, pow, ...) are float_math.c's
 * vector kernels, softmax / layernorm / reduce_mean float_norm.c's; sqrt is llvm.sqrt
 * (correctly rounded). So the results are bit-identical to the reference interpreter;
 * test/e2e/fixtures.test checks it. */
#include "codegen/lower/float_math.h"
#include "codegen/lower/lower.h"
#include "ir/eval.h"
#include "numerics/elementwise.h"

#include <llvm-c/Core.h>

#include <math.h>
#include <string.h>

/* ---- shared helpers ---- */
static LLVMValueRef
dconst(Kb *k, double v)
{
    return LLVMConstReal(k->f64, v);
}

static LLVMValueRef
fsel(Kb *k, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b, LLVMValueRef t,
     LLVMValueRef f)
{
    return LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, p, a, b, ""), t, f, "");
}

static LLVMValueRef
load_d(Kb *k, LLVMValueRef base, LLVMValueRef idx)
{
    return LLVMBuildFPExt(k->b, cg_load_raw(k, ET_F32, base, idx), k->f64, "");
}

static void
store_d(Kb *k, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v)
{
    cg_store_raw(k, ET_F32, base, idx, LLVMBuildFPTrunc(k->b, v, k->f32, ""));
}

static const Type *
vt(Kb *k, ValueId v)
{
    return &ir_value(k->g, v)->type;
}

static bool
need_f32(Kb *k, Node *n, uint32_t i)
{
    const Type *t = vt(k, n->in[i]);
    if (t->elem != ET_F32)
        return cg_fail(k, n, "operand %u must be f32, got %s", i, elem_name(t->elem));
    return true;
}

/* ---- element-wise ---- */

bool
cg_emit_float_binary(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *ta = vt(k, n->in[0]), *tb = vt(k, n->in[1]), *y = vt(k, n->out[0]);
    bool fl = y->elem == ET_F32;
    if (fl && (ta->elem != ET_F32 || tb->elem != ET_F32))
        return cg_fail(k, n, "operands must be f32");
    if (!fl && (!elem_is_int(y->elem) || !elem_is_int(ta->elem) || !elem_is_int(tb->elem) ||
                y->q))
        return cg_fail(k, n, "%s on %s is not supported", op_info(n->op)->name,
                       elem_name(y->elem));
    if (fl) /* one f32 operation per element: float_math.c's vector kernel */
        return cg_emit_float_math(k, n, a);
    int64_t st[3][IR_MAX_RANK];
    type_strides(y, st[0]);
    type_bcast_strides(ta, y, st[1]);
    type_bcast_strides(tb, y, st[2]);
    CgNest ns;
    LLVMValueRef idx[3];
    cg_nest_begin(k, &ns, y->dims, y->rank, 3, (const int64_t (*)[IR_MAX_RANK])st, idx);
    LLVMValueRef r = NULL;
    {
        LLVMValueRef x = cg_load_i64(k, ta->elem, a->in[0], idx[1]);
        LLVMValueRef z = cg_load_i64(k, tb->elem, a->in[1], idx[2]);
        switch (n->op) {
        case OP_ADD: r = LLVMBuildAdd(k->b, x, z, ""); break;
        case OP_SUB: r = LLVMBuildSub(k->b, x, z, ""); break;
        case OP_MUL: r = LLVMBuildMul(k->b, x, z, ""); break;
        case OP_DIV: {
            /* C division (toward zero) in int64. The reference rejects a zero divisor (and
             * INT64_MIN / -1); compiled code cannot fail at run time and gives 0 there. */
            LLVMValueRef bad = LLVMBuildOr(k->b, LLVMBuildICmp(k->b, LLVMIntEQ, z, cg_i64(k, 0), ""),
                                           LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntEQ, z, cg_i64(k, -1), ""),
                                                        LLVMBuildICmp(k->b, LLVMIntEQ, x, cg_i64(k, INT64_MIN), ""), ""), "");
            LLVMValueRef zs = LLVMBuildSelect(k->b, bad, cg_i64(k, 1), z, "");
            r = LLVMBuildSelect(k->b, bad, cg_i64(k, 0), LLVMBuildSDiv(k->b, x, zs, ""), "");
            break;
        }
        default:
            r = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLT, x, cg_i64(k, 0), ""),
                                LLVMBuildMul(k->b, x, z, ""), x, "");
            break;
        }
        cg_store_i64(k, y->elem, a->out[0], idx[0], r);
    }
    cg_nest_end(k, &ns);
    return true;
}

/* clamp(v, 0, 1) in double, NaN passes */
static LLVMValueRef
clamp01(Kb *k, LLVMValueRef v)
{
    v = fsel(k, LLVMRealOLT, v, dconst(k, 0), dconst(k, 0), v);
    return fsel(k, LLVMRealOGT, v, dconst(k, 1), dconst(k, 1), v);
}

/* Bound of clip: operand i (its first element, f32) or attribute name, else dflt (double). */
static bool
clip_bound(Kb *k, Node *n, const CgNodeArgs *a, uint32_t i, const char *name, double dflt,
           LLVMValueRef *out)
{
    if (i < n->nin && n->in[i].id) {
        ElemType e = vt(k, n->in[i])->elem;
        if (e == ET_F32)
            *out = load_d(k, a->in[i], cg_i64(k, 0));
        else if (elem_is_int(e)) /* ref_get_f of an integer: exact in double below 2^53 */
            *out = LLVMBuildSIToFP(k->b, cg_load_i64(k, e, a->in[i], cg_i64(k, 0)), k->f64, "");
        else
            return cg_fail(k, n, "clip bound %u must be f32 or an integer", i);
        return true;
    }
    const Attr *at = ir_attr(k->g, n, name);
    double v = dflt;
    if (at)
        v = at->kind == ATTR_INT ? (double)at->i : (double)at->f;
    *out = dconst(k, v);
    return true;
}

static bool
emit_unary(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *x = vt(k, n->in[0]), *y = vt(k, n->out[0]);
    int64_t cnt = (int64_t)type_numel_unchecked(y);
    if (x->elem != ET_F32 && n->op == OP_CLIP && elem_is_int(x->elem) && y->elem == x->elem &&
        x->elem != ET_I64) {
        /* ref: if ((double)v < lo) v = (int64)lo; if ((double)v > hi) v = (int64)hi */
        LLVMValueRef lo, hi;
        if (!clip_bound(k, n, a, 1, "min", -INFINITY, &lo) ||
            !clip_bound(k, n, a, 2, "max", INFINITY, &hi))
            return false;
        int64_t emin, emax;
        elem_range(x->elem, &emin, &emax);
        /* an infinite or out-of-range bound never applies to a value of this type */
        lo = fsel(k, LLVMRealOLT, lo, dconst(k, (double)emin), dconst(k, (double)emin), lo);
        hi = fsel(k, LLVMRealOGT, hi, dconst(k, (double)emax), dconst(k, (double)emax), hi);
        CgLoop l;
        LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, cnt));
        LLVMValueRef v = cg_load_i64(k, x->elem, a->in[0], i);
        LLVMValueRef d = LLVMBuildSIToFP(k->b, v, k->f64, "");
        v = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOLT, d, lo, ""),
                            LLVMBuildFPToSI(k->b, lo, k->i64, ""), v, "");
        d = LLVMBuildSIToFP(k->b, v, k->f64, "");
        v = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, d, hi, ""),
                            LLVMBuildFPToSI(k->b, hi, k->i64, ""), v, "");
        cg_store_i64(k, y->elem, a->out[0], i, v);
        cg_loop_end(k, &l);
        return true;
    }
    if (x->elem != ET_F32) {
        if (n->op == OP_RELU && elem_is_int(x->elem) && !x->q && y->elem == x->elem) {
            CgLoop l;
            LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, cnt));
            cg_store_i64(k, y->elem, a->out[0], i,
                         cg_smax(k, cg_load_i64(k, x->elem, a->in[0], i), cg_i64(k, 0)));
            cg_loop_end(k, &l);
            return true;
        }
        return cg_fail(k, n, "%s on %s is not supported", op_info(n->op)->name,
                       elem_name(x->elem));
    }
    LLVMValueRef lo = NULL, hi = NULL;
    if (n->op == OP_CLIP && (!clip_bound(k, n, a, 1, "min", -INFINITY, &lo) ||
                             !clip_bound(k, n, a, 2, "max", INFINITY, &hi)))
        return false;
    CgLoop l;
    LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, cnt));
    LLVMValueRef v = load_d(k, a->in[0], i), r = v;
    LLVMBuilderRef b = k->b;
    switch (n->op) {
    case OP_RELU:
        r = fsel(k, LLVMRealOGT, v, dconst(k, 0), v, dconst(k, 0));
        break;
    case OP_CLIP:
        r = fsel(k, LLVMRealOLT, v, lo, lo, v);
        r = fsel(k, LLVMRealOGT, r, hi, hi, r);
        break;
    case OP_LEAKY_RELU:
        r = fsel(k, LLVMRealOLT, v, dconst(k, 0),
                 LLVMBuildFMul(b, dconst(k, (double)ir_attr_float(g, n, "alpha", 0.01f)), v, ""), v);
        break;
    case OP_HARD_SIGMOID:
        r = LLVMBuildFAdd(b, LLVMBuildFMul(b, dconst(k, (double)ir_attr_float(g, n, "alpha", 0.2f)), v, ""),
                          dconst(k, (double)ir_attr_float(g, n, "beta", 0.5f)), "");
        r = clamp01(k, r);
        break;
    case OP_HARD_SWISH:
        r = LLVMBuildFAdd(b, LLVMBuildFDiv(b, v, dconst(k, 6.0), ""), dconst(k, 0.5), "");
        r = LLVMBuildFMul(b, v, clamp01(k, r), "");
        break;
    default:
        break;
    }
    store_d(k, a->out[0], i, r);
    cg_loop_end(k, &l);
    return true;
}

/* ---- normalisations ---- */

bool
cg_emit_batchnorm(Kb *k, Node *n, const CgNodeArgs *a)
{
    for (uint32_t i = 0; i < 5; i++)
        if (!need_f32(k, n, i))
            return false;
    const Type *x = vt(k, n->in[0]);
    if (x->rank < 2)
        return cg_fail(k, n, "batchnorm needs rank >= 2");
    LLVMValueRef eps = dconst(k, (double)ir_attr_float(k->g, n, "epsilon", 1e-5f));
    int64_t inner = 1;
    for (int d = 2; d < x->rank; d++)
        inner *= x->dims[d];
    CgLoop ln, lc, li;
    LLVMBuilderRef b = k->b;
    LLVMValueRef vn = cg_loop_begin(k, &ln, cg_i64(k, x->dims[0]));
    LLVMValueRef vc = cg_loop_begin(k, &lc, cg_i64(k, x->dims[1]));
    LLVMValueRef den = LLVMBuildFAdd(b, load_d(k, a->in[4], vc), eps, "");
    LLVMTypeRef f64 = k->f64;
    den = cg_call(k, "llvm.sqrt.f64", f64, &f64, &den, 1);
    LLVMValueRef vi = cg_loop_begin(k, &li, cg_i64(k, inner));
    LLVMValueRef idx = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, x->dims[1])), vc),
                                        cg_i64(k, inner)), vi);
    LLVMValueRef v = LLVMBuildFSub(b, load_d(k, a->in[0], idx), load_d(k, a->in[3], vc), "");
    v = LLVMBuildFDiv(b, v, den, "");
    v = LLVMBuildFMul(b, v, load_d(k, a->in[1], vc), "");
    v = LLVMBuildFAdd(b, v, load_d(k, a->in[2], vc), "");
    store_d(k, a->out[0], idx, v);
    cg_loop_end(k, &li);
    cg_loop_end(k, &lc);
    cg_loop_end(k, &ln);
    return true;
}

/* qreduce_mean (int64 sum of x - zx, then qn_qavg, or qn_qavg_fixed under --requant=fixed).
 * Loops: kept axes outside, reduced axes inside. (The f32 reduce_mean is float_norm.c's.) */
bool
cg_emit_qreduce_mean(Kb *k, Node *n, const CgNodeArgs *a)
{
    const bool q = true;
    const Type *t = vt(k, n->in[0]), *y = vt(k, n->out[0]);
    if (q && (!t->q || t->q->axis >= 0 || !y->q || y->q->axis >= 0 || !elem_is_int(y->elem)))
        return cg_fail(k, n, "qreduce_mean needs per-tensor quantized operand and result");
    IrReduceSplit rs;
    if (!ir_reduce_split(k->g, n, t, &rs))
        return cg_fail(k, n, "axis out of range");
    int64_t cnt = rs.cnt;
    /* qn_qavg or qn_qavg_fixed of the sum over cnt */
    CgRq rq = {.mode = k->rq, .mult = NULL, .fmult = NULL, .fshift = NULL, .zp = y->q->zp[0],
               .lo = 0, .hi = 0, .sx = t->q->scale[0], .sy = y->q->scale[0], .by_count = false};
    ir_clamp_range(k->g, n, y->q, &rq.lo, &rq.hi);
    if (q && cnt > 0 && !rq.mode->avg_init(k, n, &rq, cnt, cg_range_bits(k, n->in[0])))
        return false;
    LLVMBuilderRef b = k->b;
    CgNest nko, nre;
    LLVMValueRef ki[2], ri[1];
    LLVMValueRef accp = cg_entry_alloca(k, k->i64);
    cg_nest_begin(k, &nko, rs.kd, rs.nk, 2, (const int64_t (*)[IR_MAX_RANK])rs.kst, ki);
    LLVMBuildStore(b, cg_i64(k, 0), accp);
    cg_nest_begin(k, &nre, rs.rd, rs.nr, 1, (const int64_t (*)[IR_MAX_RANK])rs.rst, ri);
    LLVMValueRef xi = cg_add(k, ki[0], ri[0]);
    LLVMValueRef v = LLVMBuildSub(b, cg_load_i64(k, t->elem, a->in[0], xi), cg_i64(k, t->q->zp[0]), "");
    LLVMBuildStore(b, cg_add(k, LLVMBuildLoad2(b, k->i64, accp, ""), v), accp);
    cg_nest_end(k, &nre);
    {
        int32_t lo = rq.lo, hi = rq.hi, zy = rq.zp;
        LLVMValueRef r = cnt <= 0 ? cg_i64(k, zy < lo ? lo : zy > hi ? hi : zy)
                                  : rq.mode->avg(k, &rq, LLVMBuildLoad2(b, k->i64, accp, ""), cg_i64(k, cnt));
        cg_store_i64(k, y->elem, a->out[0], ki[1], r);
    }
    cg_nest_end(k, &nko);
    return true;
}

/* ---- cast, dynamic quantize / dequantize ---- */

/* f64 -> f16 rounded once (ir_f64_to_f16): round to odd to f32, then to nearest even */
static LLVMValueRef
f64_to_f16(Kb *k, LLVMValueRef d)
{
    LLVMBuilderRef b = k->b;
    LLVMTypeRef f64 = k->f64;
    LLVMValueRef t = LLVMBuildFPTrunc(b, d, k->f32, ""), back = LLVMBuildFPExt(b, t, f64, "");
    LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealONE, back, d, "");
    LLVMValueRef away = LLVMBuildFCmp(b, LLVMRealOGT, cg_call(k, "llvm.fabs.f64", f64, &f64, &back, 1),
                                      cg_call(k, "llvm.fabs.f64", f64, &f64, &d, 1), "");
    LLVMValueRef bits = LLVMBuildBitCast(b, t, k->i32, "");
    bits = LLVMBuildSub(b, bits, LLVMBuildZExt(b, away, k->i32, ""), "");
    bits = LLVMBuildOr(b, bits, cg_i32(k, 1), "");
    t = LLVMBuildSelect(b, inexact, LLVMBuildBitCast(b, bits, k->f32, ""), t, "");
    return LLVMBuildFPTrunc(b, t, cg_elem_type(k, ET_F16), "");
}

/* ir_cast_elem (lib/ir/eval.c), element by element */
bool
cg_emit_cast(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *x = vt(k, n->in[0]), *y = vt(k, n->out[0]);
    ElemType from = x->elem, to = y->elem;
    if (from == ET_NONE || to == ET_NONE || from == ET_I4 || from == ET_U4 || to == ET_I4 ||
        to == ET_U4)
        return cg_fail(k, n, "cast from %s to %s is not supported", elem_name(from), elem_name(to));
    LLVMBuilderRef b = k->b;
    CgLoop l;
    LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, (int64_t)type_numel_unchecked(x)));
    LLVMValueRef v = cg_load_i64(k, from, a->in[0], i);
    if (elem_is_float(from)) {
        if (from != ET_F64) /* exact */
            v = LLVMBuildFPExt(b, v, k->f64, "");
        if (to == ET_BOOL) {
            cg_store_i64(k, to, a->out[0], i,
                         LLVMBuildZExt(b, LLVMBuildFCmp(b, LLVMRealUNE, v, dconst(k, 0), ""), k->i64, ""));
        } else if (to == ET_F16 && from == ET_F64) {
            cg_store_raw(k, to, a->out[0], i, f64_to_f16(k, v));
        } else if (elem_is_float(to)) {
            LLVMValueRef d = to == ET_F64 ? v : LLVMBuildFPTrunc(b, v, k->f32, "");
            if (to == ET_F16) /* from f32 / f16: exact in f32, rounded once */
                d = LLVMBuildFPTrunc(b, d, cg_elem_type(k, ET_F16), "");
            cg_store_raw(k, to, a->out[0], i, d);
        } else {
            /* NaN -> 0, >= 2^63 -> INT64_MAX, < -2^63 -> INT64_MIN, else truncation; the
             * store wraps to the target's width */
            LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, v, v, "");
            LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGE, v, dconst(k, 0x1p63), "");
            LLVMValueRef small = LLVMBuildFCmp(b, LLVMRealOLT, v, dconst(k, -0x1p63), "");
            LLVMValueRef out = LLVMBuildOr(b, LLVMBuildOr(b, big, small, ""), nan, "");
            LLVMValueRef r = LLVMBuildFPToSI(b, LLVMBuildSelect(b, out, dconst(k, 0), v, ""), k->i64, "");
            r = LLVMBuildSelect(b, big, cg_i64(k, INT64_MAX), r, "");
            r = LLVMBuildSelect(b, small, cg_i64(k, INT64_MIN), r, "");
            cg_store_i64(k, to, a->out[0], i, r);
        }
    } else {
        if (from == ET_BOOL)
            v = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, v, cg_i64(k, 0), ""), k->i64, "");
        if (to == ET_BOOL) {
            cg_store_i64(k, to, a->out[0], i,
                         LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, v, cg_i64(k, 0), ""), k->i64, ""));
        } else if (elem_is_float(to)) {
            /* (double)(float)v for f32 / f16 (i64 rounded once), (double)v for f64 */
            LLVMValueRef d = LLVMBuildSIToFP(b, v, to == ET_F64 ? k->f64 : k->f32, "");
            if (to == ET_F16)
                d = LLVMBuildFPTrunc(b, d, cg_elem_type(k, ET_F16), "");
            cg_store_raw(k, to, a->out[0], i, d);
        } else {
            cg_store_i64(k, to, a->out[0], i, v);
        }
    }
    cg_loop_end(k, &l);
    return true;
}

/* quantize / dequantize with run-time scale (and zero point) operands; per tensor, per axis
 * ('axis', default 1) or blocked ('block_size', ir_qdq_layout). Range: the storage type's. */
bool
cg_emit_qdq_dynamic(Kb *k, Node *n, const CgNodeArgs *a)
{
    bool isq = n->op == OP_QUANTIZE;
    const Type *x = vt(k, n->in[0]), *y = vt(k, n->out[0]);
    const Type *st = vt(k, n->in[1]);
    bool has_zp = n->nin > 2 && n->in[2].id;
    const Type *zt = has_zp ? vt(k, n->in[2]) : NULL;
    ElemType storage = isq ? y->elem : x->elem;
    if (st->elem != ET_F32 || (isq && x->elem != ET_F32 && x->elem != ET_I32) ||
        (!isq && y->elem != ET_F32) || !elem_is_int(storage))
        return cg_fail(k, n, "unsupported element types for %s", op_info(n->op)->name);
    QdqLayout lay;
    char err[200];
    if (!ir_qdq_layout(x, st, zt, ir_attr_int(k->g, n, "axis", 1),
                       ir_attr_int(k->g, n, "block_size", 0), &lay, err, sizeof err))
        return cg_fail(k, n, "%s", err);
    size_t ns = lay.nparams;
    int64_t outer = lay.outer, dim = lay.dim, inner = lay.inner;
    int64_t lo, hi;
    elem_range(storage, &lo, &hi);
    LLVMBuilderRef b = k->b;
    /* every scale positive and finite, as the reference interpreter checks (ref.c qargs);
     * otherwise the node function returns QDQC_ERR_RUNTIME (cg_node_may_fail, docs/abi.md) */
    CgLoop ls;
    LLVMValueRef vs = cg_loop_begin(k, &ls, cg_i64(k, (int64_t)ns));
    LLVMValueRef sv = cg_load_raw(k, ET_F32, a->in[1], vs);
    LLVMValueRef good = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, sv, cg_f32(k, 0.0f), ""),
                                     LLVMBuildFCmp(b, LLVMRealOLT, sv, cg_f32(k, INFINITY), ""),
                                     "");
    cg_ret_unless(k, good, cg_i32(k, QDQC_ERR_RUNTIME), "bad_scale");
    cg_loop_end(k, &ls);
    CgLoop lo_, lc, li;
    LLVMValueRef vo = cg_loop_begin(k, &lo_, cg_i64(k, outer));
    LLVMValueRef vc = cg_loop_begin(k, &lc, cg_i64(k, dim));
    /* parameter index o*ostride + (c/block)*cstride (+ r*rstride inside, when blocked) */
    LLVMValueRef pc = vc; /* per axis, or per tensor (dim 1) */
    if (lay.rstride)
        pc = cg_add(k, cg_mul(k, vo, cg_i64(k, lay.ostride)),
                    cg_mul(k, LLVMBuildUDiv(b, vc, cg_i64(k, lay.block), ""),
                           cg_i64(k, lay.cstride)));
    LLVMValueRef s = NULL, zp = NULL;
    if (!lay.rstride) {
        s = cg_load_raw(k, ET_F32, a->in[1], pc);
        zp = has_zp ? cg_load_i64(k, zt->elem, a->in[2], pc) : cg_i64(k, 0);
    }
    LLVMValueRef vi = cg_loop_begin(k, &li, cg_i64(k, inner));
    if (lay.rstride) {
        LLVMValueRef pi = cg_add(k, pc, cg_mul(k, vi, cg_i64(k, lay.rstride)));
        s = cg_load_raw(k, ET_F32, a->in[1], pi);
        zp = has_zp ? cg_load_i64(k, zt->elem, a->in[2], pi) : cg_i64(k, 0);
    }
    LLVMValueRef idx = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vo, cg_i64(k, dim)), vc), cg_i64(k, inner)), vi);
    if (isq) {
        LLVMValueRef xv = cg_load_i64(k, x->elem, a->in[0], idx);
        if (x->elem != ET_F32) /* (float)ref_get_f: int32 -> double -> float */
            xv = LLVMBuildSIToFP(b, xv, k->f32, "");
        cg_store_i64(k, y->elem, a->out[0], idx,
                     cg_finish_f32(k, LLVMBuildFDiv(b, xv, s, ""), zp, lo, hi));
    } else {
        /* qn_dequantize((int32_t)q, s, zp): (f32)(q - zp) in int64, then * s */
        LLVMValueRef q = cg_load_i64(k, x->elem, a->in[0], idx);
        q = LLVMBuildSExt(b, LLVMBuildTrunc(b, q, k->i32, ""), k->i64, "");
        LLVMValueRef d = LLVMBuildSub(b, q, zp, "");
        cg_store_raw(k, ET_F32, a->out[0], idx, LLVMBuildFMul(b, LLVMBuildSIToFP(b, d, k->f32, ""), s, ""));
    }
    cg_loop_end(k, &li);
    cg_loop_end(k, &lc);
    cg_loop_end(k, &lo_);
    return true;
}

/* relu, clip, leaky_relu, sigmoid, hard_sigmoid, hard_swish, tanh, erf, gelu: f32 on
 * float_math.c's vector kernels (cg_float_math_op), other float types here */
bool
cg_emit_float_unary(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_float_math_op(k, n))
        return cg_emit_float_math(k, n, a);
    return emit_unary(k, n, a);
}

/* exp, log, sqrt, reciprocal, neg, abs, round, pow, min, max: float_math.c */
bool
cg_emit_float_math_op(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_float_math_op(k, n))
        return cg_emit_float_math(k, n, a);
    return cg_emit_none(k, n, a);
}

/* an op the code generator has no emitter for */
bool
cg_emit_none(Kb *k, Node *n, const CgNodeArgs *a)
{
    (void)a;
    return cg_fail(k, n, "%s is not supported by the code generator", op_info(n->op)->name);
}
