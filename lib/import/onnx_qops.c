/* onnx_qops.c: the quantized ONNX ops: QuantizeLinear, DequantizeLinear (per-tensor and
 * per-axis, static or runtime parameters), DynamicQuantizeLinear, QLinearConv, QLinearMatMul,
 * ConvInteger and MatMulInteger, and the com.microsoft QuantizeLinear/DequantizeLinear aliases.
 * Constant scale/zero point become the node's QParams; runtime ones stay operands.
 * QLinearConv/QLinearMatMul expand into dequantize -> conv/matmul -> quantize with the same
 * parameters (the passes fold them back); ConvInteger/MatMulInteger with constant zero points
 * map onto qconv/qmatmul with an i32 result, their operands typed q{scale=1, zp}; with runtime
 * zero points they expand into dequantize (scale 1) -> float conv/matmul -> cast to i32 (exact
 * while |acc| <= 2^24). */
#include "onnx_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- quantization parameters ---- */
static bool
is_q_storage(ElemType e, bool allow_i32)
{
    return e == ET_U8 || e == ET_I8 || e == ET_U16 || e == ET_I16 || e == ET_U4 || e == ET_I4 ||
           (allow_i32 && e == ET_I32);
}

/* Static parameters from constant scale/zero point (z may be NULL: zero). The integer side has
 * type xt; per-axis parameters apply along `axis` of xt. A 1-element scale, whatever its
 * shape, is per-tensor. */
static QParams *
qparams_of(OnnxImp *I, const Tensor *s, const Tensor *z, ElemType storage, int64_t axis,
           const Type *xt)
{
    size_t n = type_numel_unchecked(&s->type);
    if (!elem_is_float(s->type.elem)) {
        onnx_node_error(I, "scale must be float, got %s", elem_name(s->type.elem));
        return NULL;
    }
    if (n != 1 && s->type.rank != 1) {
        onnx_node_error(I, "scale of rank %d with %zu values: block quantization is not "
                        "supported", s->type.rank, n);
        return NULL;
    }
    if (z && type_numel_unchecked(&z->type) != n) {
        onnx_node_error(I, "zero point has %zu values, scale has %zu",
                        type_numel_unchecked(&z->type), n);
        return NULL;
    }
    if (z && z->type.elem != storage) {
        onnx_node_error(I, "zero point type %s differs from %s", elem_name(z->type.elem),
                        elem_name(storage));
        return NULL;
    }
    int64_t a = -1;
    if (n != 1) {
        if (!onnx_norm_axis(I, axis, xt->rank, &a))
            return NULL;
        if (xt->dims[a] != (int64_t)n) {
            onnx_node_error(I, "per-axis scale has %zu values, axis %lld has size %lld", n,
                            (long long)a, (long long)xt->dims[a]);
            return NULL;
        }
    }
    QParams *q = ir_qparams_new(I->m, storage, (int32_t)a, (uint32_t)n);
    int64_t lo, hi;
    elem_range(storage, &lo, &hi);
    for (size_t i = 0; i < n; i++) {
        double sc = tensor_get_f(s, i);
        float f = (float)sc;
        if (!(f >= FLT_MIN) || !isfinite(f)) {
            char buf[48];
            fmt_float(buf, f);
            onnx_node_error(I, "scale%s must be positive, normal and finite, got %s",
                            n == 1 ? "" : "[i]", buf);
            return NULL;
        }
        q->scale[i] = f;
        int64_t zp = z ? tensor_get_i(z, i) : 0;
        if (zp < lo || zp > hi) {
            onnx_node_error(I, "zero point %lld is outside the %s range", (long long)zp,
                            elem_name(storage));
            return NULL;
        }
        q->zp[i] = (int32_t)zp;
    }
    return q;
}

static bool
check_block(OnnxImp *I)
{
    if (onnx_attr_i(I, "block_size", 0) != 0) {
        onnx_node_error(I, "block quantization (block_size=%lld) is not supported",
                        (long long)onnx_attr_i(I, "block_size", 0));
        return false;
    }
    return true;
}

/* dequantize x with scale s and zero point z (values; z may be VNONE). Static when both are
 * constants, else the dynamic form. */
/* A Q/DQ whose scale is a run-time value: a 1-D scale of more than one element is per-axis
 * (sets the node's "axis"); higher ranks would be block quantization, which is refused. */
static bool
set_runtime_axis(OnnxImp *I, NodeId n, const Type *st, int64_t axis, int rank)
{
    if (type_numel_unchecked(st) == 1)
        return true;
    int64_t a;
    if (st->rank != 1) {
        onnx_node_error(I, "scale of rank %d: block quantization is not supported", st->rank);
        return false;
    }
    if (!onnx_norm_axis(I, axis, rank, &a))
        return false;
    ir_set_attr_int(I->g, n, "axis", a);
    return true;
}

static ValueId
build_dq(OnnxImp *I, ValueId x, ValueId s, ValueId z, int64_t axis, const char *name)
{
    Graph *g = I->g;
    const Type *xt = TY(I, x), *st = TY(I, s);
    if (!is_q_storage(xt->elem, true)) {
        onnx_node_error(I, "dequantizing %s is not supported", elem_name(xt->elem));
        return VNONE;
    }
    if (!elem_is_float(st->elem)) {
        onnx_node_error(I, "scale must be float, got %s", elem_name(st->elem));
        return VNONE;
    }
    const Tensor *sc = ir_const_of(g, s), *zc = z.id ? ir_const_of(g, z) : NULL;
    ElemType to = st->elem;
    NodeId n;
    if (sc && (!z.id || zc)) {
        QParams *q = qparams_of(I, sc, zc, xt->elem, axis, xt);
        if (!q)
            return VNONE;
        /* x from a quantize with the same parameters but a narrower range (a Clip folded into
         * it, op_clip): the same quantization; dequantizing does not depend on the range */
        const Node *qd = ir_def(g, x);
        if (qd && qd->op == OP_QUANTIZE && qd->q && !qparams_is_full_range(qd->q)) {
            QParams t = *qd->q;
            t.qmin = q->qmin;
            t.qmax = q->qmax;
            if (qparams_equal(&t, q)) {
                q->qmin = qd->q->qmin;
                q->qmax = qd->q->qmax;
            }
        }
        n = onnx_mk(I, OP_DEQUANTIZE, 1, &x, 1);
        ir_node(g, n)->q = q;
    } else {
        if (z.id && TY(I, z)->elem != xt->elem) {
            onnx_node_error(I, "zero point type %s differs from %s", elem_name(TY(I, z)->elem),
                            elem_name(xt->elem));
            return VNONE;
        }
        ValueId ins[3] = {x, s, z};
        n = onnx_mk(I, OP_DEQUANTIZE, z.id ? 3 : 2, ins, 1);
        if (!set_runtime_axis(I, n, st, axis, xt->rank))
            return VNONE;
    }
    if (to != ET_F32)
        ir_set_attr_string(g, n, "to", elem_name(to));
    return onnx_emit1(I, n, name, ET_NONE);
}

static ValueId
build_q(OnnxImp *I, ValueId x, ValueId s, ValueId z, ElemType storage, int64_t axis,
        const char *name)
{
    Graph *g = I->g;
    const Type *xt = TY(I, x), *st = TY(I, s);
    if (!is_q_storage(storage, false)) {
        onnx_node_error(I, "quantizing to %s is not supported", elem_name(storage));
        return VNONE;
    }
    if (!elem_is_float(st->elem)) {
        onnx_node_error(I, "scale must be float, got %s", elem_name(st->elem));
        return VNONE;
    }
    const Tensor *sc = ir_const_of(g, s), *zc = z.id ? ir_const_of(g, z) : NULL;
    NodeId n;
    if (sc && (!z.id || zc)) {
        Type rt = *xt;
        rt.elem = storage;
        QParams *q = qparams_of(I, sc, zc, storage, axis, &rt);
        if (!q)
            return VNONE;
        n = onnx_mk(I, OP_QUANTIZE, 1, &x, 1);
        ir_node(g, n)->q = q;
    } else {
        ValueId ins[3] = {x, s, z};
        n = onnx_mk(I, OP_QUANTIZE, z.id ? 3 : 2, ins, 1);
        if (!set_runtime_axis(I, n, st, axis, xt->rank))
            return VNONE;
    }
    return onnx_emit1(I, n, name, ET_NONE);
}

/* The element types QuantizeLinear/DequantizeLinear take before opset 21 are u8 and i8 (and
 * i32 for DequantizeLinear's input); i16, u16, i4 and u4 are from opset 21. Another type at
 * an older opset is a warning (an error under --strict); qdqc still handles it. */
static bool
check_storage_opset(OnnxImp *I, ElemType e, const char *what)
{
    bool ms = I->node->domain && strcmp(I->node->domain, "com.microsoft") == 0;
    if (ms || I->opset >= 21 || !(e == ET_I16 || e == ET_U16 || e == ET_I4 || e == ET_U4))
        return true;
    return onnx_node_lint(I, "%s type %s is not defined for %s at opset %lld (it is from "
                          "opset 21)", what, elem_name(e), I->node->op_type,
                          (long long)I->opset);
}

static bool
op_quantize(OnnxImp *I)
{
    if (!check_block(I))
        return false;
    ValueId x = IN(I, 0), s = IN(I, 1), z = IN(I, 2);
    ElemType storage = ET_U8;
    if (z.id) {
        storage = TY(I, z)->elem;
    } else if (onnx_attr(I, "output_dtype")) {
        int64_t dt = onnx_attr_i(I, "output_dtype", 2);
        storage = onnx_elem((int32_t)dt);
        if (storage == ET_NONE) {
            onnx_node_error(I, "output_dtype %s is not supported", onnx_dtype_name((int32_t)dt));
            return false;
        }
    }
    if (!check_storage_opset(I, storage, z.id ? "zero point" : "output"))
        return false;
    ValueId y = build_q(I, x, s, z, storage, onnx_attr_i(I, "axis", 1), onnx_out_name(I, 0));
    return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
}

/* DequantizeLinear-21 with block_size: supported for a constant i8/u8 matrix with constant f32
 * scales (and zero points) of the block shape, the weights of weight-only quantized
 * MatMul/Gemm: the dequantize keeps its operands (scale [ceil(K / block_size), N] for blocks
 * along axis 0), `axis` and `block_size`; the weight-only pass makes the consumer a blocked
 * wmatmul, and dq-const-fold turns what is left into an f32 constant (docs/onnx.md). */
static ValueId
build_dq_block(OnnxImp *I, ValueId x, ValueId s, ValueId z, int64_t axis, int64_t bs,
               const char *name)
{
    Graph *g = I->g;
    const Type *xt = TY(I, x), *st = TY(I, s);
    const Tensor *sc = ir_const_of(g, s);
    if (!ir_const_of(g, x) || xt->rank != 2 || (xt->elem != ET_I8 && xt->elem != ET_U8) || !sc ||
        st->elem != ET_F32 || (z.id && !ir_const_of(g, z))) {
        onnx_node_error(I, "block quantization (block_size=%lld) is supported for a constant i8/u8 "
                        "matrix with constant f32 scales and zero points (weight-only weights) only",
                        (long long)bs);
        return VNONE;
    }
    int64_t a;
    if (bs < 1) {
        onnx_node_error(I, "block_size must be positive, got %lld", (long long)bs);
        return VNONE;
    }
    if (!onnx_norm_axis(I, axis, 2, &a))
        return VNONE;
    int64_t nb = (xt->dims[a] + bs - 1) / bs;
    if (st->rank != 2 || st->dims[a] != nb || st->dims[1 - a] != xt->dims[1 - a]) {
        onnx_node_error(I, "block scale must have shape [%lld,%lld] (block_size %lld on axis %lld)",
                        (long long)(a == 0 ? nb : xt->dims[0]), (long long)(a == 0 ? xt->dims[1] : nb),
                        (long long)bs, (long long)a);
        return VNONE;
    }
    if (z.id && (TY(I, z)->elem != xt->elem || !type_shape_equal(TY(I, z), st))) {
        onnx_node_error(I, "block zero point must be %s of the scale's shape", elem_name(xt->elem));
        return VNONE;
    }
    for (size_t i = 0; i < type_numel_unchecked(st); i++) {
        float f = ((const float *)sc->data)[i];
        if (!(f >= FLT_MIN) || !isfinite(f)) {
            char buf[48];
            fmt_float(buf, f);
            onnx_node_error(I, "scale[i] must be positive, normal and finite, got %s", buf);
            return VNONE;
        }
    }
    ValueId ins[3] = {x, s, z};
    NodeId n = onnx_mk(I, OP_DEQUANTIZE, z.id ? 3 : 2, ins, 1);
    ir_set_attr_int(g, n, "axis", a);
    ir_set_attr_int(g, n, "block_size", bs);
    return onnx_emit1(I, n, name, ET_NONE);
}

static bool
op_dequantize(OnnxImp *I)
{
    int64_t bs = onnx_attr_i(I, "block_size", 0);
    if (bs != 0) {
        ValueId y = build_dq_block(I, IN(I, 0), IN(I, 1), IN(I, 2), onnx_attr_i(I, "axis", 1), bs,
                                   onnx_out_name(I, 0));
        return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
    }
    ValueId x = IN(I, 0), z = IN(I, 2);
    if (!check_storage_opset(I, TY(I, x)->elem, "input") ||
        (z.id && TY(I, z)->elem != TY(I, x)->elem &&
         !check_storage_opset(I, TY(I, z)->elem, "zero point")))
        return false;
    ValueId y = build_dq(I, IN(I, 0), IN(I, 1), IN(I, 2), onnx_attr_i(I, "axis", 1),
                         onnx_out_name(I, 0));
    return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
}

static bool
op_dynamic_quantize(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    return onnx_emit(I, onnx_mk(I, OP_DYNAMIC_QUANTIZE, 1, &x, 3), ET_NONE);
}

/* ---- QLinear* expansion ---- */
/* bias scale = x_scale * w_scale: a constant when both are, else a mul node */
static ValueId
bias_dq(OnnxImp *I, ValueId b, ValueId xs, ValueId ws)
{
    Graph *g = I->g;
    const Tensor *xc = ir_const_of(g, xs), *wc = ir_const_of(g, ws);
    const Type *bt = TY(I, b);
    if (bt->elem != ET_I32) {
        onnx_node_error(I, "bias must be int32, got %s", elem_name(bt->elem));
        return VNONE;
    }
    if (xc && wc) {
        size_t nx = type_numel_unchecked(&xc->type), nw = type_numel_unchecked(&wc->type);
        if (nx != 1) {
            onnx_node_error(I, "input scale must have one value");
            return VNONE;
        }
        if (nw != 1 && (bt->rank != 1 || (int64_t)nw != bt->dims[0])) {
            onnx_node_error(I, "bias has %lld values, weight scale has %zu",
                            bt->rank ? (long long)bt->dims[0] : 1LL, nw);
            return VNONE;
        }
        QParams *q = ir_qparams_new(I->m, ET_I32, nw == 1 ? -1 : 0, (uint32_t)nw);
        float sx = (float)tensor_get_f(xc, 0);
        for (size_t i = 0; i < nw; i++) {
            q->scale[i] = sx * (float)tensor_get_f(wc, i);
            if (!(q->scale[i] > 0) || !isfinite(q->scale[i])) {
                onnx_node_error(I, "bias scale (input scale x weight scale) must be positive and "
                                "finite");
                return VNONE;
            }
        }
        NodeId n = onnx_mk(I, OP_DEQUANTIZE, 1, &b, 1);
        ir_node(g, n)->q = q;
        return onnx_emit1(I, n, onnx_tmp_name(I, "b_dq"), ET_NONE);
    }
    ValueId ins[2] = {xs, ws};
    ValueId bs = onnx_emit1(I, onnx_mk(I, OP_MUL, 2, ins, 1), onnx_tmp_name(I, "b_scale"), ET_NONE);
    if (!bs.id)
        return VNONE;
    ValueId din[2] = {b, bs};
    NodeId n = onnx_mk(I, OP_DEQUANTIZE, 2, din, 1);
    if (type_numel_unchecked(TY(I, bs)) != 1)
        ir_set_attr_int(g, n, "axis", 0);
    return onnx_emit1(I, n, onnx_tmp_name(I, "b_dq"), ET_NONE);
}

static bool
op_qlinear_conv(OnnxImp *I)
{
    ValueId x = IN(I, 0), w = IN(I, 3), b = IN(I, 8);
    ValueId xd = build_dq(I, x, IN(I, 1), IN(I, 2), 1, onnx_tmp_name(I, "x_dq"));
    if (!xd.id)
        return false;
    ValueId wd = build_dq(I, w, IN(I, 4), IN(I, 5), 0, onnx_tmp_name(I, "w_dq"));
    if (!wd.id)
        return false;
    ValueId bd = VNONE;
    if (b.id && !(bd = bias_dq(I, b, IN(I, 1), IN(I, 4))).id)
        return false;
    NodeId n = onnx_build_conv(I, OP_CONV, xd, wd, bd);
    if (!n.id)
        return false;
    ValueId yf = onnx_emit1(I, n, onnx_tmp_name(I, "f"), ET_NONE);
    if (!yf.id)
        return false;
    ValueId yz = IN(I, 7);
    ElemType st = yz.id ? TY(I, yz)->elem : ET_U8;
    ValueId y = build_q(I, yf, IN(I, 6), yz, st, 1, onnx_out_name(I, 0));
    return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
}

static bool
op_qlinear_matmul(OnnxImp *I)
{
    ValueId a = IN(I, 0), b = IN(I, 3);
    int ra = TY(I, a)->rank, rb = TY(I, b)->rank;
    ValueId ad = build_dq(I, a, IN(I, 1), IN(I, 2), ra >= 2 ? ra - 2 : 0, onnx_tmp_name(I, "a_dq"));
    if (!ad.id)
        return false;
    ValueId bd = build_dq(I, b, IN(I, 4), IN(I, 5), rb - 1, onnx_tmp_name(I, "b_dq"));
    if (!bd.id)
        return false;
    ValueId ins[2] = {ad, bd};
    ValueId yf = onnx_emit1(I, onnx_mk(I, OP_MATMUL, 2, ins, 1), onnx_tmp_name(I, "f"), ET_NONE);
    if (!yf.id)
        return false;
    ValueId yz = IN(I, 7);
    ElemType st = yz.id ? TY(I, yz)->elem : ET_U8;
    ValueId y = build_q(I, yf, IN(I, 6), yz, st, 1, onnx_out_name(I, 0));
    return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
}

/* ConvInteger / MatMulInteger. `wax` is the weight's per-channel axis. */
static bool
integer_op(OnnxImp *I, bool conv)
{
    Graph *g = I->g;
    ValueId x = IN(I, 0), w = IN(I, 1), xz = IN(I, 2), wz = IN(I, 3);
    /* copies: adding values below moves the value array */
    const Type xt_copy = *TY(I, x), wt_copy = *TY(I, w);
    const Type *xt = &xt_copy, *wt = &wt_copy;
    if ((xt->elem != ET_U8 && xt->elem != ET_I8) || (wt->elem != ET_U8 && wt->elem != ET_I8)) {
        onnx_node_error(I, "operands must be u8 or i8, got %s and %s", elem_name(xt->elem),
                        elem_name(wt->elem));
        return false;
    }
    int wax = conv ? 0 : wt->rank - 1;
    const Tensor *xzc = xz.id ? ir_const_of(g, xz) : NULL, *wzc = wz.id ? ir_const_of(g, wz) : NULL;
    bool static_ok = (!xz.id || (xzc && type_numel_unchecked(&xzc->type) == 1)) &&
                     (!wz.id || wzc);
    if (static_ok) {
        float one = 1.0f;
        Type ot = type_make(ET_F32, 0, NULL);
        Tensor st = {ot, &one, 4};
        QParams *qx = qparams_of(I, &st, xzc, xt->elem, 1, xt);
        if (!qx)
            return false;
        size_t nw = wzc ? type_numel_unchecked(&wzc->type) : 1;
        float *ones = arena_alloc(&I->m->arena, nw * sizeof(float));
        for (size_t i = 0; i < nw; i++)
            ones[i] = 1.0f;
        Tensor sw = {type_make(ET_F32, nw == 1 ? 0 : 1, (int64_t[]){(int64_t)nw}), ones,
                     nw * 4};
        QParams *qw = qparams_of(I, &sw, wzc, wt->elem, wax, wt);
        if (!qw)
            return false;
        NodeId n;
        if (conv) {
            n = onnx_build_conv(I, OP_QCONV, x, w, VNONE);
            if (!n.id)
                return false;
        } else {
            ValueId ins[2] = {x, w};
            n = onnx_mk(I, OP_QMATMUL, 2, ins, 1);
        }
        QConstraint cx = {x, qx, true, n}, cw = {w, qw, true, n};
        vec_push(&I->qc, cx);
        vec_push(&I->qc, cw);
        return onnx_emit(I, n, ET_I32);
    }
    /* runtime zero points: dequantize with scale 1, float compute, cast back to i32 */
    float one = 1.0f;
    ValueId s1 = onnx_const_f32(I, onnx_tmp_name(I, "one"), &one, 0, NULL);
    ValueId xd = build_dq(I, x, s1, xz, conv ? 1 : (xt->rank >= 2 ? xt->rank - 2 : 0),
                          onnx_tmp_name(I, "x_dq"));
    if (!xd.id)
        return false;
    ValueId ws1 = s1;
    if (wz.id && type_numel_unchecked(TY(I, wz)) != 1) {
        size_t nw = type_numel_unchecked(TY(I, wz));
        float *ones = xmalloc(nw * sizeof(float));
        for (size_t i = 0; i < nw; i++)
            ones[i] = 1.0f;
        ws1 = onnx_const_f32(I, onnx_tmp_name(I, "ones"), ones, 1, (int64_t[]){(int64_t)nw});
        free(ones);
    }
    ValueId wd = build_dq(I, w, ws1, wz, wax, onnx_tmp_name(I, "w_dq"));
    if (!wd.id)
        return false;
    NodeId n;
    if (conv) {
        n = onnx_build_conv(I, OP_CONV, xd, wd, VNONE);
        if (!n.id)
            return false;
    } else {
        ValueId ins[2] = {xd, wd};
        n = onnx_mk(I, OP_MATMUL, 2, ins, 1);
    }
    ValueId f = onnx_emit1(I, n, onnx_tmp_name(I, "f"), ET_NONE);
    if (!f.id)
        return false;
    NodeId c = onnx_mk(I, OP_CAST, 1, &f, 1);
    ir_set_attr_string(g, c, "to", "i32");
    return onnx_emit(I, c, ET_NONE);
}

static bool op_conv_integer(OnnxImp *I) { return integer_op(I, true); }
static bool op_matmul_integer(OnnxImp *I) { return integer_op(I, false); }

/* com.microsoft ops imported as their default-domain namesakes */
bool
onnx_qop_ms_alias(const char *op_type)
{
    return strcmp(op_type, "QuantizeLinear") == 0 || strcmp(op_type, "DequantizeLinear") == 0;
}

const OnnxOpEntry onnx_qop_table[] = {
    {"QuantizeLinear", op_quantize, 2, 3, 1},
    {"DequantizeLinear", op_dequantize, 2, 3, 1},
    {"DynamicQuantizeLinear", op_dynamic_quantize, 1, 1, 3},
    {"QLinearConv", op_qlinear_conv, 8, 9, 1},
    {"QLinearMatMul", op_qlinear_matmul, 8, 8, 1},
    {"ConvInteger", op_conv_integer, 2, 4, 1},
    {"MatMulInteger", op_matmul_integer, 2, 4, 1},
};
const size_t onnx_qop_table_len = ARRAY_LEN(onnx_qop_table);
