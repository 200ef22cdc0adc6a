/* onnx_ops.c: translation of each ONNX node into qdqc IR: the float compute ops (Conv,
 * ConvTranspose, MatMul, Gemm, BatchNormalization, elementwise and activation ops, Softmax,
 * LayerNormalization, ReduceMean, pooling, Cast, Identity, Dropout; the comparisons, Not/And/
 * Or/Xor, Where, ReduceSum/Max/Min, ArgMax) and the dispatch over all
 * handler tables (this file's, onnx_qops.c's and onnx_layout.c's); the helpers the handlers
 * share are in onnx_build.c.
 * Every ONNX parameter passed as a constant input becomes an attribute (docs/ir.md
 * conventions). Errors name the node through I->loc. */
#include "onnx_internal.h"

#include <stdio.h>
#include <string.h>

static bool
op_conv(OnnxImp *I)
{
    NodeId n = onnx_build_conv(I, OP_CONV, IN(I, 0), IN(I, 1), IN(I, 2));
    return n.id && onnx_emit(I, n, ET_NONE);
}

static bool
op_conv_transpose(OnnxImp *I)
{
    Graph *g = I->g;
    ValueId x = IN(I, 0), w = IN(I, 1), b = IN(I, 2);
    const Type *xt = TY(I, x), *wt = TY(I, w);
    int64_t k[IR_MAX_RANK];
    int ns;
    if (!onnx_conv_spatial(I, xt, wt, k, &ns))
        return false;
    int64_t strides[IR_MAX_RANK], dil[IR_MAX_RANK], pads[2 * IR_MAX_RANK], opad[IR_MAX_RANK],
        oshape[IR_MAX_RANK];
    int cs = onnx_attr_ints(I, "strides", strides, IR_MAX_RANK);
    int cd = onnx_attr_ints(I, "dilations", dil, IR_MAX_RANK);
    int cp = onnx_attr_ints(I, "pads", pads, 2 * IR_MAX_RANK);
    int co = onnx_attr_ints(I, "output_padding", opad, IR_MAX_RANK);
    int cos = onnx_attr_ints(I, "output_shape", oshape, IR_MAX_RANK);
    int64_t ka[IR_MAX_RANK];
    int ck = onnx_attr_ints(I, "kernel_shape", ka, IR_MAX_RANK);
    if (cs == -2 || cd == -2 || cp == -2 || co == -2 || cos == -2 || ck == -2)
        return false;
    /* ONNX computes the output shape from kernel_shape when it is given: one that contradicts
     * the weight describes another convolution (Conv's is checked by shape inference) */
    bool kok = ck < 0 || ck == ns;
    for (int i = 0; kok && ck >= 0 && i < ns; i++)
        kok = ka[i] == k[i];
    if (!kok) {
        onnx_node_error(I, "kernel_shape does not match the weight shape");
        return false;
    }
    if ((cs >= 0 && cs != ns) || (cd >= 0 && cd != ns) || (cp >= 0 && cp != 2 * ns) ||
        (co >= 0 && co != ns) || (cos >= 0 && cos != ns && cos != ns + 2)) {
        onnx_node_error(I, "attributes do not match %d spatial dimensions", ns);
        return false;
    }
    for (int i = 0; i < ns; i++) {
        if (cs < 0) strides[i] = 1;
        if (cd < 0) dil[i] = 1;
        if (co < 0) opad[i] = 0;
        if (cp < 0) pads[i] = pads[ns + i] = 0;
    }
    const char *ap = onnx_attr_s(I, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    if (cos >= 0 || same) {
        for (int i = 0; i < ns; i++) {
            int64_t in = xt->dims[2 + i];
            if (strides[i] <= 0 || dil[i] <= 0 || strides[i] > (1 << 20) || dil[i] > (1 << 20) ||
                k[i] > (1 << 20) || opad[i] < 0 || opad[i] > (1 << 20)) {
                onnx_node_error(I, "strides, dilations and output_padding must be small and "
                                "positive");
                return false;
            }
            int64_t want = cos >= 0 ? oshape[cos == ns ? i : i + 2] : in * strides[i];
            if (want <= 0 || want > ((int64_t)1 << 40)) {
                onnx_node_error(I, "output_shape must be positive");
                return false;
            }
            int64_t total = strides[i] * (in - 1) + opad[i] + (k[i] - 1) * dil[i] + 1 - want;
            if (total == -1 && !same) {
                /* ONNX's floor division puts the one extra element at the end: that is
                 * output_padding */
                opad[i]++;
                total = 0;
                co = ns;
            }
            if (total < 0) {
                onnx_node_error(I, "output_shape %lld is larger than the transposed convolution "
                                "produces", (long long)want);
                return false;
            }
            bool upper = strcmp(ap, "SAME_UPPER") == 0;
            pads[i] = upper ? total / 2 : total - total / 2;
            pads[ns + i] = total - pads[i];
        }
        cp = 2 * ns;
    } else if (strcmp(ap, "VALID") == 0) {
        for (int i = 0; i < 2 * ns; i++)
            pads[i] = 0;
    }
    ValueId ins[3] = {x, w, b};
    NodeId n = onnx_mk(I, OP_CONV_TRANSPOSE, b.id ? 3 : 2, ins, 1);
    if (cs >= 0)
        ir_set_attr_ints(g, n, "strides", strides, (uint32_t)ns);
    ir_set_attr_ints(g, n, "pads", pads, (uint32_t)(2 * ns));
    if (cd >= 0)
        ir_set_attr_ints(g, n, "dilations", dil, (uint32_t)ns);
    if (co >= 0)
        ir_set_attr_ints(g, n, "output_padding", opad, (uint32_t)ns);
    if (onnx_attr(I, "group"))
        ir_set_attr_int(g, n, "group", onnx_attr_i(I, "group", 1));
    return onnx_emit(I, n, ET_NONE);
}

/* ---- float compute ---- */
bool
onnx_simple(OnnxImp *I, OpKind op, uint32_t nin)
{
    ValueId ins[8];
    for (uint32_t k = 0; k < nin; k++)
        ins[k] = IN(I, k);
    return onnx_emit(I, onnx_mk(I, op, nin, ins, 1), ET_NONE);
}

static bool op_matmul(OnnxImp *I) { return onnx_simple(I, OP_MATMUL, 2); }
static bool op_add(OnnxImp *I) { return onnx_simple(I, OP_ADD, 2); }
static bool op_sub(OnnxImp *I) { return onnx_simple(I, OP_SUB, 2); }
static bool op_mul(OnnxImp *I) { return onnx_simple(I, OP_MUL, 2); }
static bool op_div(OnnxImp *I) { return onnx_simple(I, OP_DIV, 2); }
static bool op_relu(OnnxImp *I) { return onnx_simple(I, OP_RELU, 1); }
static bool op_prelu(OnnxImp *I) { return onnx_simple(I, OP_PRELU, 2); }
static bool op_sigmoid(OnnxImp *I) { return onnx_simple(I, OP_SIGMOID, 1); }
static bool op_hard_swish(OnnxImp *I) { return onnx_simple(I, OP_HARD_SWISH, 1); }
static bool op_tanh(OnnxImp *I) { return onnx_simple(I, OP_TANH, 1); }
static bool op_erf(OnnxImp *I) { return onnx_simple(I, OP_ERF, 1); }
static bool op_identity(OnnxImp *I) { return onnx_simple(I, OP_IDENTITY, 1); }

/* Dropout is the identity unless it trains with a nonzero ratio: training_mode (input 2, from
 * opset 12) absent or a constant false, or the ratio a constant 0 (Swin's exports carry
 * Dropout(ratio=0, training_mode=True)). The mask output is then a constant all-true tensor.
 * A training Dropout with another ratio (or one computed at run time) is refused. */
static bool
op_dropout(OnnxImp *I)
{
    bool training = false;
    if (I->opset >= 12 && IN(I, 2).id) {
        const Tensor *t = CIN(I, 2);
        if (!t || type_numel_unchecked(&t->type) != 1) {
            onnx_node_error(I, "training_mode must be one constant value");
            return false;
        }
        training = tensor_get_i(t, 0) != 0;
    }
    if (training) {
        double ratio = 0.5; /* the default */
        if (IN(I, 1).id && !onnx_const_scalar_f(I, 1, "ratio", &ratio))
            return false;
        if (ratio != 0) {
            onnx_node_error(I, "training_mode is true and ratio is %g: a training Dropout "
                            "with a nonzero ratio is not supported (inference only)", ratio);
            return false;
        }
    }
    if (!onnx_simple(I, OP_IDENTITY, 1))
        return false;
    const char *mask = onnx_out_name(I, 1);
    if (!mask || !*mask)
        return true;
    Type t = *TY(I, IN(I, 0));
    t.q = NULL;
    t.elem = ET_BOOL;
    if (type_numel_unchecked(&t) > ONNX_MAX_EVAL_BYTES) {
        onnx_node_error(I, "the mask output is too large to build at import (more than %zu "
                        "MiB)", ONNX_MAX_EVAL_BYTES >> 20);
        return false;
    }
    Tensor *r = ir_tensor_new(I->m, &t);
    QDQC_ASSERT(r);
    memset(r->data, 1, r->nbytes);
    return onnx_bind(I, mask, ir_add_const(I->g, mask, r, I->loc));
}
static bool op_global_avgpool(OnnxImp *I) { return onnx_simple(I, OP_GLOBAL_AVGPOOL, 1); }

static bool
op_gemm(OnnxImp *I)
{
    ValueId ins[3] = {IN(I, 0), IN(I, 1), IN(I, 2)};
    NodeId n = onnx_mk(I, OP_GEMM, ins[2].id ? 3 : 2, ins, 1);
    if (onnx_attr(I, "alpha"))
        ir_set_attr_float(I->g, n, "alpha", onnx_attr_f(I, "alpha", 1.0f));
    if (onnx_attr(I, "beta"))
        ir_set_attr_float(I->g, n, "beta", onnx_attr_f(I, "beta", 1.0f));
    if (onnx_attr_i(I, "transA", 0))
        ir_set_attr_int(I->g, n, "transA", 1);
    if (onnx_attr_i(I, "transB", 0))
        ir_set_attr_int(I->g, n, "transB", 1);
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_batchnorm(OnnxImp *I)
{
    if (onnx_attr_i(I, "training_mode", 0)) {
        onnx_node_error(I, "training mode is not supported (inference BatchNormalization only)");
        return false;
    }
    ValueId ins[5];
    for (int k = 0; k < 5; k++)
        ins[k] = IN(I, (size_t)k);
    NodeId n = onnx_mk(I, OP_BATCHNORM, 5, ins, 1);
    ir_set_attr_float(I->g, n, "epsilon", onnx_attr_f(I, "epsilon", 1e-5f));
    return onnx_emit(I, n, ET_NONE);
}

/* Clip of the integer result of a static QuantizeLinear with constant bounds: PyTorch's export
 * of a fake quantizer with a reduced range (reduce_range=True, the fbgemm/x86 QAT qconfig:
 * quant_min 0, quant_max 127) is QuantizeLinear(u8) -> Clip(max=127) -> DequantizeLinear.
 * Saturating to the storage range and then clamping equals saturating to their intersection,
 * so the pair becomes one quantize with the narrower range (the DequantizeLinear that follows
 * takes that range over, build_dq). False (and nothing emitted) if the pattern does not
 * apply; *done reports a folded node. */
static bool
clip_of_quantize(OnnxImp *I, ValueId x, const Tensor *lc, const Tensor *hc, bool *done)
{
    Graph *g = I->g;
    *done = false;
    const Node *d = ir_def(g, x);
    if (!d || d->op != OP_QUANTIZE || !d->q || d->nin != 1 || elem_is_float(TY(I, x)->elem) ||
        (lc && elem_is_float(lc->type.elem)) || (hc && elem_is_float(hc->type.elem)))
        return true;
    const QParams *q = d->q;
    int64_t lo = lc ? tensor_get_i(lc, 0) : q->qmin, hi = hc ? tensor_get_i(hc, 0) : q->qmax;
    lo = lo > q->qmin ? lo : q->qmin;
    hi = hi < q->qmax ? hi : q->qmax;
    if (lo > hi)
        return true;
    QParams *nq = ir_qparams_new(I->m, q->storage, q->axis, q->n);
    memcpy(nq->scale, q->scale, q->n * sizeof(float));
    memcpy(nq->zp, q->zp, q->n * sizeof(int32_t));
    nq->qmin = (int32_t)lo;
    nq->qmax = (int32_t)hi;
    ValueId f = d->in[0];
    NodeId n = onnx_mk(I, OP_QUANTIZE, 1, &f, 1);
    ir_node(g, n)->q = nq;
    *done = true;
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_clip(OnnxImp *I)
{
    Graph *g = I->g;
    ValueId x = IN(I, 0);
    NodeId n;
    if (I->opset < 11) {
        n = onnx_mk(I, OP_CLIP, 1, &x, 1);
        if (onnx_attr(I, "min"))
            ir_set_attr_float(g, n, "min", onnx_attr_f(I, "min", 0));
        if (onnx_attr(I, "max"))
            ir_set_attr_float(g, n, "max", onnx_attr_f(I, "max", 0));
        return onnx_emit(I, n, ET_NONE);
    }
    ValueId lo = IN(I, 1), hi = IN(I, 2);
    const Tensor *lc = lo.id ? ir_const_of(g, lo) : NULL, *hc = hi.id ? ir_const_of(g, hi) : NULL;
    bool lo_attr = !lo.id || (lc && type_numel_unchecked(&lc->type) == 1);
    bool hi_attr = !hi.id || (hc && type_numel_unchecked(&hc->type) == 1);
    if (lo_attr && hi_attr) {
        bool done;
        bool ok = clip_of_quantize(I, x, lc, hc, &done);
        if (done || !ok)
            return ok;
        n = onnx_mk(I, OP_CLIP, 1, &x, 1);
        if (lc)
            ir_set_attr_float(g, n, "min", (float)tensor_get_f(lc, 0));
        if (hc)
            ir_set_attr_float(g, n, "max", (float)tensor_get_f(hc, 0));
    } else {
        ValueId ins[3] = {x, lo, hi};
        n = onnx_mk(I, OP_CLIP, 3, ins, 1);
    }
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_leaky_relu(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = onnx_mk(I, OP_LEAKY_RELU, 1, &x, 1);
    ir_set_attr_float(I->g, n, "alpha", onnx_attr_f(I, "alpha", 0.01f));
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_hard_sigmoid(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = onnx_mk(I, OP_HARD_SIGMOID, 1, &x, 1);
    ir_set_attr_float(I->g, n, "alpha", onnx_attr_f(I, "alpha", 0.2f));
    ir_set_attr_float(I->g, n, "beta", onnx_attr_f(I, "beta", 0.5f));
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_gelu(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const char *ap = onnx_attr_s(I, "approximate", "none");
    if (strcmp(ap, "none") && strcmp(ap, "tanh")) {
        onnx_node_error(I, "approximate '%s' is not valid (none, tanh)", ap);
        return false;
    }
    NodeId n = onnx_mk(I, OP_GELU, 1, &x, 1);
    if (strcmp(ap, "tanh") == 0)
        ir_set_attr_string(I->g, n, "approximate", "tanh");
    return onnx_emit(I, n, ET_NONE);
}

/* ---- float-island math ---- */
static bool op_exp(OnnxImp *I) { return onnx_simple(I, OP_EXP, 1); }
static bool op_log(OnnxImp *I) { return onnx_simple(I, OP_LOG, 1); }
static bool op_sqrt(OnnxImp *I) { return onnx_simple(I, OP_SQRT, 1); }
static bool op_reciprocal(OnnxImp *I) { return onnx_simple(I, OP_RECIPROCAL, 1); }
static bool op_abs(OnnxImp *I) { return onnx_simple(I, OP_ABS, 1); }
static bool op_round(OnnxImp *I) { return onnx_simple(I, OP_ROUND, 1); }

static bool
op_neg(OnnxImp *I)
{
    ElemType e = TY(I, IN(I, 0))->elem;
    if (e == ET_U8 || e == ET_U16 || e == ET_U32 || e == ET_U4) {
        onnx_node_error(I, "Neg of an unsigned type (%s) is not defined", elem_name(e));
        return false;
    }
    return onnx_simple(I, OP_NEG, 1);
}

/* Pow: an f32 base with an f32 or integer exponent, or integer ** integer (qdqc's `pow`); an
 * integer base with a float exponent (numpy truncates a float power) is refused. */
static bool
op_pow(OnnxImp *I)
{
    ElemType b = TY(I, IN(I, 0))->elem, e = TY(I, IN(I, 1))->elem;
    if (!(b == ET_F32 && (e == ET_F32 || elem_is_int(e))) && !(elem_is_int(b) && elem_is_int(e))) {
        onnx_node_error(I, "Pow of %s by %s is not supported (f32 base with an f32 or integer "
                           "exponent, or integers)", elem_name(b), elem_name(e));
        return false;
    }
    return onnx_simple(I, OP_POW, 2);
}

/* Min / Max of 1..n operands: a left fold of the binary op (one operand: identity). */
static bool
op_minmax(OnnxImp *I, OpKind op)
{
    size_t k = I->node->n_input;
    ValueId acc = IN(I, 0);
    if (k == 1)
        return onnx_simple(I, OP_IDENTITY, 1);
    for (size_t i = 1; i + 1 < k; i++) {
        ValueId ins[2] = {acc, IN(I, i)};
        char sfx[32];
        snprintf(sfx, sizeof sfx, "fold%zu", i);
        acc = onnx_emit1(I, onnx_mk(I, op, 2, ins, 1), onnx_tmp_name(I, sfx), ET_NONE);
        if (!acc.id)
            return false;
    }
    ValueId ins[2] = {acc, IN(I, k - 1)};
    return onnx_emit(I, onnx_mk(I, op, 2, ins, 1), ET_NONE);
}
static bool op_min(OnnxImp *I) { return op_minmax(I, OP_MIN); }
static bool op_max(OnnxImp *I) { return op_minmax(I, OP_MAX); }

static ValueId
build_reshape(OnnxImp *I, ValueId x, const int64_t *shape, int rank, const char *name)
{
    NodeId n = onnx_mk(I, OP_RESHAPE, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "shape", shape, (uint32_t)rank);
    return onnx_emit1(I, n, name, ET_NONE);
}

/* Softmax: opset >= 13 normalizes along one axis; before 13 the input is coerced to 2-D at
 * `axis` (default 1) and normalized over the flattened trailing part, emulated here with
 * reshape -> softmax(axis=1) -> reshape when the axis is not the last. */
static bool
op_softmax(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const Type *xt = TY(I, x);
    int64_t a;
    if (!onnx_norm_axis(I, onnx_attr_i(I, "axis", I->opset < 13 ? 1 : -1), xt->rank, &a))
        return false;
    if (I->opset >= 13 || a == xt->rank - 1) {
        NodeId n = onnx_mk(I, OP_SOFTMAX, 1, &x, 1);
        ir_set_attr_int(I->g, n, "axis", a);
        return onnx_emit(I, n, ET_NONE);
    }
    if (!ir_type_is_static(xt)) {
        onnx_node_error(I, "opset %lld Softmax over axes %lld.. of an input with symbolic "
                        "dimensions is not supported; bind them with --dim NAME=<size>",
                        (long long)I->opset, (long long)a);
        return false;
    }
    int64_t d0 = 1, d1 = 1;
    for (int i = 0; i < xt->rank; i++)
        *(i < a ? &d0 : &d1) *= xt->dims[i];
    int64_t shape2[2] = {d0, d1}, orig[IR_MAX_RANK];
    int rank = xt->rank;
    memcpy(orig, xt->dims, sizeof orig);
    ValueId r = build_reshape(I, x, shape2, 2, onnx_tmp_name(I, "2d"));
    if (!r.id)
        return false;
    NodeId n = onnx_mk(I, OP_SOFTMAX, 1, &r, 1);
    ir_set_attr_int(I->g, n, "axis", 1);
    ValueId s = onnx_emit1(I, n, onnx_tmp_name(I, "softmax2d"), ET_NONE);
    if (!s.id)
        return false;
    ValueId y = build_reshape(I, s, orig, rank, onnx_out_name(I, 0));
    return y.id && onnx_bind(I, onnx_out_name(I, 0), y);
}

/* Mean and InvStdDev (outputs 1 and 2) become results 1 and 2 when the model names them. */
static bool
op_layernorm(OnnxImp *I)
{
    ValueId ins[3] = {IN(I, 0), IN(I, 1), IN(I, 2)};
    uint32_t nout = 1;
    for (uint32_t k = 1; k < 3 && k < I->node->n_output; k++)
        if (I->node->output[k] && *I->node->output[k])
            nout = k + 1;
    if (nout > 1 && onnx_attr_i(I, "stash_type", 1) != 1) {
        onnx_node_error(I, "stash_type %lld with the Mean/InvStdDev outputs is not supported "
                        "(only 1, float)", (long long)onnx_attr_i(I, "stash_type", 1));
        return false;
    }
    NodeId n = onnx_mk(I, OP_LAYERNORM, ins[2].id ? 3 : 2, ins, nout);
    ir_set_attr_int(I->g, n, "axis", onnx_attr_i(I, "axis", -1));
    ir_set_attr_float(I->g, n, "epsilon", onnx_attr_f(I, "epsilon", 1e-5f));
    return onnx_emit(I, n, ET_NONE);
}

/* ReduceMean/Max/Min (axes an input from opset 18) and ReduceSum (from 13): `axes` from the
 * attribute or the constant input; none (or an empty list) reduces every axis unless
 * noop_with_empty_axes makes the node the identity. */
static bool
reduce_op(OnnxImp *I, OpKind op, int64_t axes_input_from)
{
    ValueId x = IN(I, 0);
    int64_t axes[IR_MAX_RANK];
    int k = -1;
    if (I->opset < axes_input_from) {
        k = onnx_attr_ints(I, "axes", axes, IR_MAX_RANK);
        if (k == -2)
            return false;
    } else if (IN(I, 1).id) {
        if (!onnx_const_ints(I, 1, "axes", axes, IR_MAX_RANK, &k))
            return false;
    }
    if (k <= 0 && onnx_attr_i(I, "noop_with_empty_axes", 0))
        return onnx_simple(I, OP_IDENTITY, 1);
    NodeId n = onnx_mk(I, op, 1, &x, 1);
    if (k > 0)
        ir_set_attr_ints(I->g, n, "axes", axes, (uint32_t)k);
    ir_set_attr_int(I->g, n, "keepdims", onnx_attr_i(I, "keepdims", 1) != 0);
    return onnx_emit(I, n, ET_NONE);
}

static bool op_reduce_mean(OnnxImp *I) { return reduce_op(I, OP_REDUCE_MEAN, 18); }

static bool
pool(OnnxImp *I, OpKind op, uint32_t nout, int64_t storage_order)
{
    ValueId x = IN(I, 0);
    int64_t k[IR_MAX_RANK];
    int ns;
    if (!onnx_conv_spatial(I, TY(I, x), NULL, k, &ns))
        return false;
    NodeId n = onnx_mk(I, op, 1, &x, nout);
    if (!onnx_conv_attrs(I, n, TY(I, x), k, ns, true))
        return false;
    if (op == OP_AVGPOOL && onnx_attr_i(I, "count_include_pad", 0))
        ir_set_attr_int(I->g, n, "count_include_pad", 1);
    if (storage_order)
        ir_set_attr_int(I->g, n, "storage_order", storage_order);
    return onnx_emit(I, n, ET_NONE);
}

/* The Indices output (when named) is result 1: the flat index of each maximum in the input
 * (batch and channel offsets included), row-major or, with storage_order=1, column-major over
 * the spatial axes. */
static bool
op_maxpool(OnnxImp *I)
{
    bool idx = I->node->n_output > 1 && I->node->output[1] && *I->node->output[1];
    int64_t so = onnx_attr_i(I, "storage_order", 0);
    if (so != 0 && so != 1) {
        onnx_node_error(I, "storage_order must be 0 or 1, got %lld", (long long)so);
        return false;
    }
    return pool(I, OP_MAXPOOL, idx ? 2 : 1, idx ? so : 0);
}

static bool op_avgpool(OnnxImp *I) { return pool(I, OP_AVGPOOL, 1, 0); }

static bool
op_cast(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t to = onnx_attr_i(I, "to", 0);
    ElemType e = onnx_elem((int32_t)to);
    if (e == ET_NONE) {
        onnx_node_error(I, "cast to %s is not supported", onnx_dtype_name((int32_t)to));
        return false;
    }
    NodeId n = onnx_mk(I, OP_CAST, 1, &x, 1);
    ir_set_attr_string(I->g, n, "to", elem_name(e));
    return onnx_emit(I, n, ET_NONE);
}

/* ---- comparisons, logic, selection, reductions (docs/ir.md) ---- */
static bool op_equal(OnnxImp *I) { return onnx_simple(I, OP_EQUAL, 2); }
static bool op_less(OnnxImp *I) { return onnx_simple(I, OP_LESS, 2); }
static bool op_less_equal(OnnxImp *I) { return onnx_simple(I, OP_LESS_EQUAL, 2); }
static bool op_greater(OnnxImp *I) { return onnx_simple(I, OP_GREATER, 2); }
static bool op_greater_equal(OnnxImp *I) { return onnx_simple(I, OP_GREATER_EQUAL, 2); }
static bool op_not(OnnxImp *I) { return onnx_simple(I, OP_NOT, 1); }
static bool op_and(OnnxImp *I) { return onnx_simple(I, OP_AND, 2); }
static bool op_or(OnnxImp *I) { return onnx_simple(I, OP_OR, 2); }
static bool op_xor(OnnxImp *I) { return onnx_simple(I, OP_XOR, 2); }
static bool op_where(OnnxImp *I) { return onnx_simple(I, OP_WHERE, 3); }
static bool op_reduce_sum(OnnxImp *I) { return reduce_op(I, OP_REDUCE_SUM, 13); }
static bool op_reduce_max(OnnxImp *I) { return reduce_op(I, OP_REDUCE_MAX, 18); }
static bool op_reduce_min(OnnxImp *I) { return reduce_op(I, OP_REDUCE_MIN, 18); }

static bool
op_argmax(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t last = onnx_attr_i(I, "select_last_index", 0);
    if (last != 0 && last != 1) {
        onnx_node_error(I, "select_last_index must be 0 or 1, got %lld", (long long)last);
        return false;
    }
    int64_t a;
    if (!onnx_norm_axis(I, onnx_attr_i(I, "axis", 0), TY(I, x)->rank, &a))
        return false;
    NodeId n = onnx_mk(I, OP_ARGMAX, 1, &x, 1);
    ir_set_attr_int(I->g, n, "axis", a);
    ir_set_attr_int(I->g, n, "keepdims", onnx_attr_i(I, "keepdims", 1) != 0);
    if (last)
        ir_set_attr_int(I->g, n, "select_last_index", 1);
    return onnx_emit(I, n, ET_NONE);
}

/* ---- dispatch ---- */
static const OnnxOpEntry onnx_op_table[] = {
    {"Conv", op_conv, 2, 3, 1, SYM_BATCH},
    {"ConvTranspose", op_conv_transpose, 2, 3, 1, SYM_NONE},
    {"MatMul", op_matmul, 2, 2, 1, SYM_ANY},
    {"Gemm", op_gemm, 2, 3, 1, SYM_BATCH},
    {"BatchNormalization", op_batchnorm, 5, 5, 1, SYM_BATCH},
    {"Add", op_add, 2, 2, 1, SYM_ANY},
    {"Sub", op_sub, 2, 2, 1, SYM_ANY},
    {"Mul", op_mul, 2, 2, 1, SYM_ANY},
    {"Div", op_div, 2, 2, 1, SYM_ANY},
    {"Relu", op_relu, 1, 1, 1, SYM_ANY},
    {"Clip", op_clip, 1, 3, 1, SYM_ANY},
    {"LeakyRelu", op_leaky_relu, 1, 1, 1, SYM_ANY},
    {"PRelu", op_prelu, 2, 2, 1, SYM_ANY},
    {"Sigmoid", op_sigmoid, 1, 1, 1, SYM_ANY},
    {"HardSigmoid", op_hard_sigmoid, 1, 1, 1, SYM_ANY},
    {"HardSwish", op_hard_swish, 1, 1, 1, SYM_ANY},
    {"Tanh", op_tanh, 1, 1, 1, SYM_ANY},
    {"Erf", op_erf, 1, 1, 1, SYM_ANY},
    {"Gelu", op_gelu, 1, 1, 1, SYM_ANY},
    /* float-island math */
    {"Exp", op_exp, 1, 1, 1, SYM_ANY},
    {"Log", op_log, 1, 1, 1, SYM_ANY},
    {"Sqrt", op_sqrt, 1, 1, 1, SYM_ANY},
    {"Reciprocal", op_reciprocal, 1, 1, 1, SYM_ANY},
    {"Neg", op_neg, 1, 1, 1, SYM_ANY},
    {"Abs", op_abs, 1, 1, 1, SYM_ANY},
    {"Round", op_round, 1, 1, 1, SYM_NONE},
    {"Pow", op_pow, 2, 2, 1, SYM_ANY},
    {"Min", op_min, 1, 4096, 1, SYM_ANY},
    {"Max", op_max, 1, 4096, 1, SYM_ANY},
    {"Softmax", op_softmax, 1, 1, 1, SYM_ANY},
    {"LayerNormalization", op_layernorm, 2, 3, 3, SYM_ANY},
    {"ReduceMean", op_reduce_mean, 1, 2, 1, SYM_BATCH},
    {"MaxPool", op_maxpool, 1, 1, 2, SYM_BATCH},
    {"AveragePool", op_avgpool, 1, 1, 1, SYM_BATCH},
    {"GlobalAveragePool", op_global_avgpool, 1, 1, 1, SYM_BATCH},
    {"Identity", op_identity, 1, 1, 1, SYM_ANY},
    {"Dropout", op_dropout, 1, 3, 2, SYM_NONE},
    {"Cast", op_cast, 1, 1, 1, SYM_ANY},
    /* comparisons, logic, selection, reductions, Einsum (onnx_einsum.c) */
    {"Equal", op_equal, 2, 2, 1, SYM_ANY},
    {"Less", op_less, 2, 2, 1, SYM_ANY},
    {"LessOrEqual", op_less_equal, 2, 2, 1, SYM_ANY},
    {"Greater", op_greater, 2, 2, 1, SYM_ANY},
    {"GreaterOrEqual", op_greater_equal, 2, 2, 1, SYM_ANY},
    {"Not", op_not, 1, 1, 1, SYM_ANY},
    {"And", op_and, 2, 2, 1, SYM_ANY},
    {"Or", op_or, 2, 2, 1, SYM_ANY},
    {"Xor", op_xor, 2, 2, 1, SYM_ANY},
    {"Where", op_where, 3, 3, 1, SYM_ANY},
    {"ReduceSum", op_reduce_sum, 1, 2, 1, SYM_NONE},
    {"ReduceMax", op_reduce_max, 1, 2, 1, SYM_NONE},
    {"ReduceMin", op_reduce_min, 1, 2, 1, SYM_NONE},
    {"ArgMax", op_argmax, 1, 1, 1, SYM_NONE},
    {"Einsum", onnx_op_einsum, 1, 64, 1, SYM_NONE},
};

static const OnnxOpEntry *
find_in(const OnnxOpEntry *t, size_t n, const char *op_type)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, op_type) == 0)
            return &t[i];
    return NULL;
}

static const OnnxOpEntry *
find_op(const OnnxImp *I, const char *domain, const char *op_type)
{
    bool dflt = !*domain || strcmp(domain, "ai.onnx") == 0;
    bool ms = strcmp(domain, "com.microsoft") == 0;
    if (!dflt && !(ms && onnx_qop_ms_alias(op_type)))
        return NULL;
    if (dflt && strcmp(op_type, "MatMulNBits") == 0) /* a com.microsoft op */
        return NULL;
    const OnnxOpEntry *e = find_in(onnx_op_table, ARRAY_LEN(onnx_op_table), op_type);
    if (!e)
        e = find_in(onnx_qop_table, onnx_qop_table_len, op_type);
    if (!e)
        e = find_in(onnx_layout_table, onnx_layout_table_len, op_type);
    if (!e)
        e = find_in(onnx_const_table, onnx_const_table_len, op_type);
    if (!e)
        return NULL;
    /* opset-specific availability */
    if (dflt && strcmp(op_type, "Gelu") == 0 && I->opset < 20)
        return NULL;
    if (dflt && strcmp(op_type, "LayerNormalization") == 0 && I->opset < 17)
        return NULL;
    if (dflt && strcmp(op_type, "HardSwish") == 0 && I->opset < 14)
        return NULL;
    if (dflt && (!strcmp(op_type, "LessOrEqual") || !strcmp(op_type, "GreaterOrEqual") ||
                 !strcmp(op_type, "Einsum")) && I->opset < 12)
        return NULL;
    if (dflt && (!strcmp(op_type, "Range") || !strcmp(op_type, "ScatterND")) && I->opset < 11)
        return NULL;
    if (dflt && strcmp(op_type, "Trilu") == 0 && I->opset < 14)
        return NULL;
    return e;
}

bool
onnx_op_supported(const OnnxImp *I, const char *domain, const char *op_type)
{
    return find_op(I, domain, op_type) != NULL;
}

/* An operand with a symbolic dimension the op's row does not allow (OnnxOpEntry.sym) is an
 * error naming the symbol. */
static bool
check_symbolic_operands(OnnxImp *I, const OnnxOpEntry *e)
{
    if (!I->g->dimx.len || e->sym == SYM_ANY)
        return true;
    bool batch = e->sym == SYM_BATCH;
    for (size_t k = 0; k < I->node->n_input; k++) {
        ValueId v = IN(I, k);
        const Type *t = v.id ? TY(I, v) : NULL;
        int d = t ? ir_type_first_sym_from(t, k == 0 && batch ? 1 : 0) : -1;
        if (d < 0)
            continue;
        char ds[96];
        const char *sym = "NAME";
        ir_dim_sym_name(I->g, t->dims[d], &sym);
        onnx_node_error(I, "input %zu has the symbolic dimension %s (axis %d), and qdqc imports "
                        "%s only with static shapes; bind it with --dim %s=<size>", k,
                        ir_dim_str(I->g, t->dims[d], ds, sizeof ds), d, e->name, sym);
        return false;
    }
    return true;
}

bool
onnx_translate(OnnxImp *I)
{
    const Onnx__NodeProto *np = I->node;
    const OnnxOpEntry *e = find_op(I, np->domain ? np->domain : "", np->op_type ? np->op_type : "");
    QDQC_ASSERT(e);
    if (np->n_input > (size_t)e->max_in) {
        onnx_node_error(I, "has %zu inputs, at most %d are allowed", np->n_input, e->max_in);
        return false;
    }
    for (int k = 0; k < e->min_in; k++)
        if ((size_t)k >= np->n_input || !np->input[k] || !*np->input[k]) {
            onnx_node_error(I, "input %d is required", k);
            return false;
        }
    if (np->n_output == 0 || !np->output[0] || !*np->output[0]) {
        onnx_node_error(I, "has no output");
        return false;
    }
    I->bad_attr = false;
    if (!onnx_check_attrs(I))
        return false;
    for (size_t k = (size_t)e->max_out; k < np->n_output; k++)
        if (np->output[k] && *np->output[k]) {
            onnx_node_error(I, "output %zu ('%s') is not supported: qdqc imports only the "
                            "first %d output%s of %s", k, np->output[k], e->max_out,
                            e->max_out == 1 ? "" : "s", e->name);
            return false;
        }
    if (!check_symbolic_operands(I, e))
        return false;
    bool ok = e->fn(I);
    if (ok && I->bad_attr)
        return false;
    return ok;
}

