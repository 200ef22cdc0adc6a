/* onnx_qops.c: the quantized ONNX ops: QuantizeLinear, DequantizeLinear (per-tensor and
 * per-axis, static or runtime parameters), DynamicQuantizeLinear, QLinearConv, QLinearMatMul,
 * ConvInteger and MatMulInteger, and the com.microsoft QuantizeLinear/DequantizeLinear aliases.
 * Constant scale/zero point become the node's QParams; runtime ones stay operands, as do those
 * of blocked quantization (opset 21 `block_size`, build_blocked).
 * QLinearConv/QLinearMatMul expand into dequantize -> conv/matmul -> quantize with the same
 * parameters (the passes fold them back); ConvInteger/MatMulInteger with constant zero points
 * map onto qconv/qmatmul with an i32 result, their operands typed q{scale=1, zp}; with runtime
 * zero points MatMulInteger becomes matmul_integer (zero points as operands, exact int32) and
 * ConvInteger expands into dequantize (scale 1) -> float conv -> cast to i32 (exact while
 * |acc| <= 2^24). */
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
        onnx_node_error(I, "scale of rank %d with %zu values needs block_size (per-axis "
                        "scales are 1-D)", s->type.rank, n);
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

/* A blocked dequantize of a constant 4-bit weight with negative scales (ONNX Runtime's
 * symmetric 4-bit QDQ quantizer writes s = max_signed / -8): the weight stored centred in i8,
 * w = q - z where s > 0 and z - q where s < 0, with |s| and no zero point. Exact:
 * (q - z) * s == (z - q) * -s. False (nothing changed) when x or z is not constant or no scale
 * is negative; a scale of magnitude 0, subnormal or not finite is left to the caller's check. */
static bool
centre_negative_blocks(OnnxImp *I, ValueId *x, ValueId *s, ValueId *z, ElemType *storage,
                       const QdqLayout *l)
{
    Graph *g = I->g;
    const Tensor *xc = ir_const_of(g, *x), *sc = ir_const_of(g, *s);
    const Tensor *zc = z->id ? ir_const_of(g, *z) : NULL;
    if (!xc || !sc || (z->id && !zc))
        return false;
    bool neg = false;
    for (size_t i = 0; i < l->nparams; i++)
        neg |= tensor_get_f(sc, i) < 0;
    if (!neg)
        return false;
    Type wt = xc->type, stt = sc->type;
    wt.elem = ET_I8;
    wt.q = NULL;
    stt.q = NULL;
    Tensor *w = ir_tensor_new(I->m, &wt), *ns = ir_tensor_new(I->m, &stt);
    if (!w || !ns)
        return false;
    for (size_t i = 0; i < l->nparams; i++)
        tensor_set_f(ns, i, fabs(tensor_get_f(sc, i)));
    size_t n = type_numel_unchecked(&wt);
    for (size_t i = 0; i < n; i++) {
        int64_t p = ir_qdq_param_index(l, (int64_t)i);
        int64_t q = tensor_get_i(xc, i) - (zc ? tensor_get_i(zc, (size_t)p) : 0);
        tensor_set_i(w, i, tensor_get_f(sc, (size_t)p) < 0 ? -q : q);
    }
    *x = ir_add_const(g, onnx_tmp_name(I, "weight_centred"), w, I->loc);
    *s = ir_add_const(g, onnx_tmp_name(I, "weight_scale"), ns, I->loc);
    *z = VNONE;
    *storage = ET_I8;
    return true;
}

/* ONNX 21 blocked quantization (block_size > 0): the dynamic form (scale and zero point stay
 * operands, constant or not) with `axis` normalized and `block_size`; each element of x uses the
 * scale at its index with index[axis] / block_size (ir_qdq_layout). A quantize without a zero
 * point gets a zero constant of its storage type, which types its result. Constant scales are
 * checked here as static ones are (positive, normal, finite). */
static ValueId
build_blocked(OnnxImp *I, bool isq, ValueId x, ValueId s, ValueId z, ElemType storage,
              int64_t axis, int64_t block, const char *name)
{
    Graph *g = I->g;
    const Type *xt = TY(I, x), *st = TY(I, s);
    if (!elem_is_float(st->elem)) {
        onnx_node_error(I, "scale must be float, got %s", elem_name(st->elem));
        return VNONE;
    }
    if (z.id && TY(I, z)->elem != storage) {
        onnx_node_error(I, "zero point type %s differs from %s", elem_name(TY(I, z)->elem),
                        elem_name(storage));
        return VNONE;
    }
    QdqLayout l;
    char err[200];
    if (!ir_qdq_layout(xt, st, z.id ? TY(I, z) : NULL, axis, block, &l, err, sizeof err)) {
        onnx_node_error(I, "%s", err);
        return VNONE;
    }
    const Tensor *sc = ir_const_of(g, s);
    if (!isq && sc && (storage == ET_I4 || storage == ET_U4) && st->elem == ET_F32 &&
        centre_negative_blocks(I, &x, &s, &z, &storage, &l)) {
        sc = ir_const_of(g, s);
        xt = TY(I, x); /* the values array may have moved */
        st = TY(I, s);
    }
    for (size_t i = 0; sc && i < l.nparams; i++) {
        float f = (float)tensor_get_f(sc, i);
        if (!(f >= FLT_MIN) || !isfinite(f)) {
            char buf[48];
            fmt_float(buf, f);
            onnx_node_error(I, "scale[%zu] must be positive, normal and finite, got %s", i, buf);
            return VNONE;
        }
    }
    if (isq && !z.id) {
        Type zt = *st;
        zt.elem = storage;
        zt.q = NULL;
        Tensor *zc = ir_tensor_new(I->m, &zt);
        if (!zc) {
            onnx_node_error(I, "zero point too large");
            return VNONE;
        }
        z = ir_add_const(g, onnx_tmp_name(I, "zero_point"), zc, I->loc);
    }
    ValueId ins[3] = {x, s, z};
    NodeId n = onnx_mk(I, isq ? OP_QUANTIZE : OP_DEQUANTIZE, z.id ? 3 : 2, ins, 1);
    /* block_size first: the text form's parser reads `axis` last (parse.c), so the printed
     * module parses back to the same text */
    ir_set_attr_int(g, n, "block_size", block);
    ir_set_attr_int(g, n, "axis", l.axis);
    if (!isq && st->elem != ET_F32)
        ir_set_attr_string(g, n, "to", elem_name(st->elem));
    return onnx_emit1(I, n, name, ET_NONE);
}

/* dequantize x with scale s and zero point z (values; z may be VNONE). Static when both are
 * constants, else the dynamic form. */
/* A Q/DQ whose scale is a run-time value: a 1-D scale of more than one element is per-axis
 * (sets the node's "axis"); a scale of higher rank needs block_size (build_blocked). */
static bool
set_runtime_axis(OnnxImp *I, NodeId n, const Type *st, int64_t axis, int rank)
{
    if (type_numel_unchecked(st) == 1)
        return true;
    int64_t a;
    if (st->rank != 1) {
        onnx_node_error(I, "scale of rank %d needs block_size (per-axis scales are 1-D)",
                        st->rank);
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
        if (!z.id && storage != ET_U8) {
            /* output_dtype without a zero point: a zero constant types the result */
            Type zt = *st;
            zt.elem = storage;
            zt.q = NULL;
            Tensor *zero = ir_tensor_new(I->m, &zt);
            if (!zero) {
                onnx_node_error(I, "zero point too large");
                return VNONE;
            }
            z = ir_add_const(g, onnx_tmp_name(I, "zero_point"), zero, I->loc);
        }
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

/* The float types of QuantizeLinear's input and scale (DequantizeLinear's scale and output)
 * before opset 19 are f32 (and i32 for QuantizeLinear's input); f16 is from opset 19 (bf16
 * too, which qdqc does not import): a warning (an error under --strict) at an older opset, as
 * above. */
static bool
check_float_opset(OnnxImp *I, ElemType e, const char *what)
{
    bool ms = I->node->domain && strcmp(I->node->domain, "com.microsoft") == 0;
    if (ms || I->opset >= 19 || e != ET_F16)
        return true;
    return onnx_node_lint(I, "%s type %s is not defined for %s at opset %lld (it is from "
                          "opset 19)", what, elem_name(e), I->node->op_type,
                          (long long)I->opset);
}

static bool
op_quantize(OnnxImp *I)
{
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
    if (!check_storage_opset(I, storage, z.id ? "zero point" : "output") ||
        (x.id && !check_float_opset(I, TY(I, x)->elem, "input")) ||
        (s.id && TY(I, s)->elem != (x.id ? TY(I, x)->elem : ET_NONE) &&
         !check_float_opset(I, TY(I, s)->elem, "scale")))
        return false;
    int64_t block = onnx_attr_i(I, "block_size", 0);
    if (block != 0) {
        if (!is_q_storage(storage, false)) {
            onnx_node_error(I, "quantizing to %s is not supported", elem_name(storage));
            return false;
        }
        ValueId y = build_blocked(I, true, x, s, z, storage, onnx_attr_i(I, "axis", 1), block,
                                  onnx_out_name(I, 0));
        return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
    }
    ValueId y = build_q(I, x, s, z, storage, onnx_attr_i(I, "axis", 1), onnx_out_name(I, 0));
    return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
}

static bool
op_dequantize(OnnxImp *I)
{
    ValueId x = IN(I, 0), s = IN(I, 1), z = IN(I, 2);
    if (!check_storage_opset(I, TY(I, x)->elem, "input") ||
        (s.id && !check_float_opset(I, TY(I, s)->elem, "scale")) ||
        (z.id && TY(I, z)->elem != TY(I, x)->elem &&
         !check_storage_opset(I, TY(I, z)->elem, "zero point")))
        return false;
    int64_t block = onnx_attr_i(I, "block_size", 0);
    if (block != 0) {
        if (!is_q_storage(TY(I, x)->elem, true)) {
            onnx_node_error(I, "dequantizing %s is not supported", elem_name(TY(I, x)->elem));
            return false;
        }
        ValueId y = build_blocked(I, false, x, IN(I, 1), z, TY(I, x)->elem,
                                  onnx_attr_i(I, "axis", 1), block, onnx_out_name(I, 0));
        return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
    }
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

/* MatMulInteger whose zero points are not both constants (e.g. after DynamicQuantizeLinear):
 * `matmul_integer` takes them as operands and accumulates exactly in int32 (docs/ir.md). a's
 * zero point must be one value (ONNX's per-row form is refused), b's one value or one per
 * column. */
static bool
matmul_integer(OnnxImp *I, ValueId x, ValueId w, ValueId xz, ValueId wz)
{
    const Type *wt = TY(I, w);
    int64_t nn = wt->rank >= 2 ? wt->dims[wt->rank - 1] : 1;
    if (xz.id && type_numel_unchecked(TY(I, xz)) != 1) {
        onnx_node_error(I, "a_zero_point has %zu values: only one (per tensor) is supported, "
                        "not one per row", type_numel_unchecked(TY(I, xz)));
        return false;
    }
    if (wz.id && type_numel_unchecked(TY(I, wz)) != 1 &&
        (TY(I, wz)->rank != 1 || TY(I, wz)->dims[0] != nn)) {
        onnx_node_error(I, "b_zero_point must have one value or %lld (one per column)",
                        (long long)nn);
        return false;
    }
    if ((xz.id && TY(I, xz)->elem != TY(I, x)->elem) || (wz.id && TY(I, wz)->elem != wt->elem)) {
        onnx_node_error(I, "zero point types must be those of A and B");
        return false;
    }
    ValueId ins[4] = {x, w, xz, wz};
    return onnx_emit(I, onnx_mk(I, OP_MATMUL_INTEGER, wz.id ? 4 : xz.id ? 3 : 2, ins, 1), ET_NONE);
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
    if (!conv)
        return matmul_integer(I, x, w, xz, wz);
    /* ConvInteger with run-time zero points: dequantize with scale 1, float conv, cast back to
     * i32 (exact while |acc| <= 2^24) */
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

/* ---- com.microsoft MatMulNBits (ONNX Runtime's 4-bit weight quantizer, MatMulNBitsQuantizer) ----
 * Y = A x dequantize(B)^T (+ bias): B [N, n_blocks, block_size / 2] packs the 4-bit weights of
 * row n (the low nibble first), scales [N * n_blocks] (or [N, n_blocks]), zero_points packed
 * 4-bit [N * ceil(n_blocks / 2)] (low nibble first) or, absent, 8. Imported as what it is: a
 * constant u4 weight [K, N] with block-wise scales and zero points along K (opset-21
 * blocked dequantize, axis 0) -> matmul [-> add bias]; weight-only makes it a wmatmul (negative
 * scales: an i8 centred weight, centre_negative_blocks). Constant
 * B, scales and zero points only; bits 4, no g_idx, f32 A and scales. */
static bool
op_matmul_nbits(OnnxImp *I)
{
    Graph *g = I->g;
    int64_t K = onnx_attr_i(I, "K", 0), N = onnx_attr_i(I, "N", 0);
    int64_t bits = onnx_attr_i(I, "bits", 4), bs = onnx_attr_i(I, "block_size", 0);
    ValueId a = IN(I, 0);
    const Tensor *b = CIN(I, 1), *sc = CIN(I, 2);
    const Tensor *zp = I->node->n_input > 3 ? CIN(I, 3) : NULL;
    bool has_zp = I->node->n_input > 3 && I->node->input[3] && *I->node->input[3];
    bool has_gidx = I->node->n_input > 4 && I->node->input[4] && *I->node->input[4];
    ValueId bias = I->node->n_input > 5 ? IN(I, 5) : VNONE;
    if (bits != 4) {
        onnx_node_error(I, "MatMulNBits with bits=%lld is not supported (4)", (long long)bits);
        return false;
    }
    if (K <= 0 || N <= 0 || bs < 16 || (bs & (bs - 1))) {
        onnx_node_error(I, "MatMulNBits needs K, N > 0 and block_size a power of 2 >= 16, got "
                        "K=%lld N=%lld block_size=%lld", (long long)K, (long long)N, (long long)bs);
        return false;
    }
    if (has_gidx) {
        onnx_node_error(I, "MatMulNBits with g_idx is not supported");
        return false;
    }
    int64_t nb = (K + bs - 1) / bs, blob = bs / 2;
    if (!b || b->type.elem != ET_U8 || type_numel_unchecked(&b->type) != (size_t)(N * nb * blob)) {
        onnx_node_error(I, "B must be a constant uint8 [%lld, %lld, %lld]", (long long)N,
                        (long long)nb, (long long)blob);
        return false;
    }
    if (!sc || sc->type.elem != ET_F32 || type_numel_unchecked(&sc->type) != (size_t)(N * nb)) {
        onnx_node_error(I, "scales must be a constant f32 of %lld values", (long long)(N * nb));
        return false;
    }
    int64_t zrow = (nb + 1) / 2;
    if (has_zp && (!zp || zp->type.elem != ET_U8 ||
                   type_numel_unchecked(&zp->type) != (size_t)(N * zrow))) {
        onnx_node_error(I, "zero_points must be a constant packed uint8 of %lld values",
                        (long long)(N * zrow));
        return false;
    }
    if (!TY(I, a) || TY(I, a)->elem != ET_F32 || !TY(I, a)->rank ||
        TY(I, a)->dims[TY(I, a)->rank - 1] != K) {
        onnx_node_error(I, "A must be f32 with a last dimension of K=%lld", (long long)K);
        return false;
    }
    Type wt = {.elem = ET_U4, .rank = 2, .dims = {K, N}};
    Type st = {.elem = ET_F32, .rank = 2, .dims = {nb, N}};
    Type zt = {.elem = ET_U4, .rank = 2, .dims = {nb, N}};
    Tensor *w = ir_tensor_new(I->m, &wt), *s = ir_tensor_new(I->m, &st);
    Tensor *z = ir_tensor_new(I->m, &zt);
    if (!w || !s || !z) {
        onnx_node_error(I, "MatMulNBits weight too large");
        return false;
    }
    const unsigned char *bp = b->data;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t j = 0; j < nb; j++) {
            int64_t zv = 8;
            if (has_zp) {
                unsigned char zb = ((const unsigned char *)zp->data)[n * zrow + j / 2];
                zv = (j & 1) ? zb >> 4 : zb & 15;
            }
            tensor_set_f(s, (size_t)(j * N + n), tensor_get_f(sc, (size_t)(n * nb + j)));
            tensor_set_i(z, (size_t)(j * N + n), zv);
            for (int64_t k = j * bs; k < K && k < (j + 1) * bs; k++) {
                unsigned char byte = bp[(n * nb + j) * blob + (k % bs) / 2];
                tensor_set_i(w, (size_t)(k * N + n), (k & 1) ? byte >> 4 : byte & 15);
            }
        }
    }
    ValueId wv = ir_add_const(g, onnx_tmp_name(I, "weight_u4"), w, I->loc);
    ValueId sv = ir_add_const(g, onnx_tmp_name(I, "weight_scale"), s, I->loc);
    ValueId zv = ir_add_const(g, onnx_tmp_name(I, "weight_zero_point"), z, I->loc);
    /* negative scales (ONNX Runtime's symmetric quantizer): build_blocked centres the weight */
    ValueId dq = build_blocked(I, false, wv, sv, zv, ET_U4, 0, bs, onnx_tmp_name(I, "weight"));
    if (!dq.id)
        return false;
    ValueId ins[2] = {a, dq};
    NodeId mm = onnx_mk(I, OP_MATMUL, 2, ins, 1);
    if (!bias.id)
        return onnx_emit(I, mm, ET_NONE);
    ValueId y = onnx_emit1(I, mm, onnx_tmp_name(I, "matmul"), ET_NONE);
    if (!y.id)
        return false;
    ValueId ains[2] = {y, bias};
    return onnx_emit(I, onnx_mk(I, OP_ADD, 2, ains, 1), ET_NONE);
}

/* com.microsoft ops imported as their default-domain namesakes, and MatMulNBits */
bool
onnx_qop_ms_alias(const char *op_type)
{
    return strcmp(op_type, "QuantizeLinear") == 0 || strcmp(op_type, "DequantizeLinear") == 0 ||
           strcmp(op_type, "MatMulNBits") == 0;
}

const OnnxOpEntry onnx_qop_table[] = {
    {"QuantizeLinear", op_quantize, 2, 3, 1, SYM_ANY},
    {"DequantizeLinear", op_dequantize, 2, 3, 1, SYM_ANY},
    {"DynamicQuantizeLinear", op_dynamic_quantize, 1, 1, 3, SYM_NONE},
    {"QLinearConv", op_qlinear_conv, 8, 9, 1, SYM_NONE},
    {"QLinearMatMul", op_qlinear_matmul, 8, 8, 1, SYM_NONE},
    {"ConvInteger", op_conv_integer, 2, 4, 1, SYM_NONE},
    {"MatMulInteger", op_matmul_integer, 2, 4, 1, SYM_NONE},
    {"MatMulNBits", op_matmul_nbits, 3, 6, 1, SYM_NONE}, /* com.microsoft only (find_op) */
};
const size_t onnx_qop_table_len = ARRAY_LEN(onnx_qop_table);
