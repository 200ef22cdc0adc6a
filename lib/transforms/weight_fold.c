/* weight_fold.c: turn the weights and biases of Conv, ConvTranspose, MatMul and Gemm into
 * integer constants, so qdq-fold finds the ONNX Runtime form const(int)->dequantize everywhere.
 *  - quantize(f32 const) (TensorRT / PyTorch fake-quant export) is computed now:
 *    qn_quantize_f32 per element (f32 division, round half to even, saturate to the storage
 *    range, per-axis scales on the node's axis). Exact: it is what quantize computes.
 *  - const(int)->dequantize feeding a weight: the const's type gets the dequantize's
 *    parameters (the integers now say what they mean; nothing is computed).
 *  - Gemm is brought to transA=0, transB=0, alpha=1 (gemm_normalize): transA=1 (and transB=1
 *    of a non-constant B) on a per-tensor 8-bit dequantize becomes transpose(integers) ->
 *    dequantize (exact); an integer constant B with transB=1 is transposed now (axis 0 -> 1);
 *    alpha goes into B's scales, s' = (float)(s * |alpha|) (exact for powers of two, else
 *    rounded once, remark), and alpha < 0 negates B's integers (w' - zp' = -(w - zp), -128
 *    handled). alpha = 0, alpha with a non-constant B, and transposes of anything else stay,
 *    with a remark.
 *  - A float bias (f32 const; Gemm C of shape [], [1], [1,1], [N] or [1,N] as f32 const or
 *    dequantized integer const, times beta) of an op whose input and weight are both
 *    dequantized becomes const(i32, scale sx*sw[c], zp 0)->dequantize,
 *    b_q[c] = qn_quantize_bias(b[c], sx, sw[c]): f64 division by the f32 product sx*sw[c],
 *    round half to even, saturated to int32 (ONNX Runtime's quantizer rule). When quantizes
 *    receive the result (qm_out_scale: directly or through relu/clip/add/sub/layout ops) and
 *    some channel's rounding error |b - b_q*sx*sw| exceeds half of their smallest scale sy
 *    (possible only when sx*sw > sy), the bias stays float instead: op(x, w, b) becomes
 *    add(op(x, w), b), so the integer op keeps the 1-step bound (remark). A conv feeding a
 *    batchnorm keeps its float bias for bn-fold (quantized by the second run, at the folded
 *    scales).
 * needs: nothing.  keeps: shapes.  leaves stale: uses.
 */
#include "pass.h"

#include "numerics/numerics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Quantize an f32 const with q (per tensor or per axis); plain integer result (no type q). */
static Tensor *
quantize_const(Module *m, const Tensor *t, const QParams *q)
{
    Type ty = t->type;
    ty.elem = q->storage;
    ty.q = NULL;
    Tensor *r = ir_tensor_new(m, &ty);
    if (!r)
        return NULL;
    size_t n = type_numel_unchecked(&ty), inner = 1;
    if (q->axis >= 0)
        for (int d = q->axis + 1; d < ty.rank; d++)
            inner *= (size_t)ty.dims[d];
    size_t nc = q->axis >= 0 ? (size_t)ty.dims[q->axis] : 1;
    if (t->type.elem == ET_F32 && elem_size(q->storage) == 1 && q->storage != ET_BOOL &&
        nc * inner > 0) {
        /* the common case (f32 weights to 8 bits, 11.7 M of them in a ResNet-18 export): the
         * same qn_quantize_f32 per element, without a division per element for the channel
         * and the element-type dispatch of tensor_get_f / tensor_set_i */
        const unsigned char *src = t->data;
        unsigned char *dst = r->data;
        size_t outer = n / (nc * inner);
        for (size_t o = 0, i = 0; o < outer; o++)
            for (size_t c = 0; c < nc; c++) {
                float s = q->scale[c];
                int32_t zp = q->zp[c];
                for (size_t e = 0; e < inner; e++, i++) {
                    float x;
                    memcpy(&x, src + 4 * i, 4);
                    dst[i] = (unsigned char)qn_quantize_f32(x, s, zp, q->qmin, q->qmax);
                }
            }
        return r;
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = q->axis >= 0 ? (i / inner) % (size_t)ty.dims[q->axis] : 0;
        float x = (float)tensor_get_f(t, i);
        tensor_set_i(r, i, qn_quantize_f32(x, q->scale[c], q->zp[c], q->qmin, q->qmax));
    }
    return r;
}

/* quantize(f32 const) -> int const. */
static bool
fold_quantize_consts(Graph *g)
{
    bool changed = false;
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || n->op != OP_QUANTIZE || !n->q || n->nin != 1)
            continue;
        const Tensor *t = ir_const_of(g, n->in[0]);
        if (!t || !elem_is_float(t->type.elem))
            continue;
        Tensor *r = quantize_const(g->m, t, n->q);
        if (!r)
            continue;
        r = qm_tensor_retype(g->m, r, n->q);
        Loc loc = n->loc;
        ValueId out = n->out[0];
        NodeId c = ir_add_node(g, OP_CONST, 0, NULL, 1, loc);
        ir_set_attr_tensor(g, c, "value", r);
        g->nodes.data[i].dead = true;
        ir_set_result(g, c, 0, out); /* keeps the name of the quantized value */
        changed = true;
    }
    return changed;
}

/* The dequantize of an integer constant feeding operand `k` of n, or NULL. */
static Node *
dq_const(Graph *g, Node *n, uint32_t k)
{
    if (k >= n->nin || !n->in[k].id)
        return NULL;
    Node *dq = qm_def_op(g, n->in[k], OP_DEQUANTIZE);
    if (!dq || !dq->q || dq->nin != 1 || !ir_const_of(g, dq->in[0]))
        return NULL;
    return dq;
}

/* Index of the weight scale for output channel c. */
static int64_t
wchan(Graph *g, Node *n, const QParams *qw, int64_t c)
{
    if (qw->n == 1)
        return 0;
    if (n->op == OP_CONV_TRANSPOSE) {
        int64_t per = qw->n;
        (void)g;
        return c % per;
    }
    return c;
}

/* A rank-2 operand that is a per-tensor 8- or 16-bit dequantize of integers. */
static bool
transposable(Graph *g, ValueId v)
{
    Node *dq = qm_dq_act(g, v);
    return dq && dq->q->axis < 0 && ir_value(g, dq->in[0])->type.rank == 2;
}

/* transpose(x, perm=[1,0]) -> dequantize for operand k = dequantize(x), transposable: the
 * transposed integers take x's parameters (a layout op never rescales), and the new dequantize
 * has the old one's. Exact. VNONE if the operand is not so. */
static ValueId
transposed_operand(Graph *g, NodeId nid, uint32_t k)
{
    Node *dq = qm_dq_act(g, ir_node(g, nid)->in[k]);
    if (!transposable(g, ir_node(g, nid)->in[k]))
        return VNONE;
    const QParams *q = dq->q;
    ValueId x = dq->in[0];
    Loc loc = ir_node(g, nid)->loc;
    const char *dq_name = ir_value_name(g, ir_node(g, nid)->in[k]);
    Type t = ir_value(g, x)->type;
    int64_t d0 = t.dims[0];
    t.dims[0] = t.dims[1];
    t.dims[1] = d0;
    char name[256];
    snprintf(name, sizeof name, "%s_t", ir_value_name(g, x));
    NodeId tn = ir_add_node(g, OP_TRANSPOSE, 1, &x, 1, loc);
    int64_t perm[2] = {1, 0};
    ir_set_attr_ints(g, tn, "perm", perm, 2);
    ValueId xt = ir_add_result(g, tn, 0, name, &t);
    snprintf(name, sizeof name, "%s_t", dq_name);
    return qm_add_dq(g, xt, q, name, loc);
}

/* Negate a constant weight for alpha < 0: per channel (or for the whole tensor) the new
 * integers w' and zero point zp' satisfy w' - zp' = -(w - zp) exactly. i8 without -128 in the
 * channel or its zero point: w' = -w, zp' = -zp; otherwise w' = qmin + qmax - w (i8 full range:
 * ~w = -w - 1; u8: 255 - w), zp' likewise; both stay in [qmin, qmax]. False if some value or
 * zero point lies outside [qmin, qmax] (then nothing maps the range onto itself). */
static bool
negate_weight(Tensor *w, QParams *q)
{
    const Type *t = &w->type;
    size_t n = type_numel_unchecked(t), inner = 1;
    size_t nch = q->axis >= 0 ? (size_t)t->dims[q->axis] : 1;
    if (q->axis >= 0)
        for (int d = q->axis + 1; d < t->rank; d++)
            inner *= (size_t)t->dims[d];
    if (q->axis >= 0 && q->n != nch)
        return false;
    int64_t *r = xcalloc(nch, sizeof(int64_t)); /* 1 until a channel needs qmin + qmax */
    bool ok = true;
    for (size_t c = 0; c < nch && ok; c++) {
        int32_t zp = q->zp[c];
        ok = zp >= q->qmin && zp <= q->qmax;
        r[c] = zp == -128;
    }
    for (size_t i = 0; i < n && ok; i++) {
        int64_t v = tensor_get_i(w, i);
        size_t c = (i / inner) % nch;
        ok = v >= q->qmin && v <= q->qmax;
        r[c] |= v == -128;
    }
    for (size_t c = 0; c < nch && ok; c++)
        r[c] = q->storage == ET_I8 && !r[c] ? 0 : (int64_t)q->qmin + q->qmax;
    for (size_t i = 0; i < n && ok; i++) {
        size_t c = (i / inner) % nch;
        tensor_set_i(w, i, r[c] - tensor_get_i(w, i));
    }
    for (size_t c = 0; c < nch && ok; c++)
        q->zp[c] = (int32_t)(r[c] - q->zp[c]);
    free(r);
    return ok;
}

/* Gemm: bring the node to transA=0, transB=0, alpha=1 so that qdq-fold can make it a qmatmul.
 *  - transA=1: the 8-bit per-tensor dequantized A becomes transpose(A ints) -> dequantize.
 *  - constant integer B: transB=1 transposes the constant now (per-axis 0 -> 1); alpha goes
 *    into B's scales, s' = (float)(s * |alpha|), and alpha < 0 negates the integers
 *    (negate_weight). Exact up to the f32 rounding of s * |alpha| (none for powers of two).
 *  - non-constant dequantized B: transB=1 as for A; alpha != 1 stays (the activation's
 *    integers carry their own scale, which another scale cannot replace), with a remark.
 * The bias (C, times beta) is fold_bias's. Every refusal leaves the node as it was. */
static void
gemm_normalize(PassCtx *pc, Graph *g, NodeId nid)
{
    (void)pc;
    Node *n = ir_node(g, nid);
    float alpha = ir_attr_float(g, n, "alpha", 1.0f);
    bool ta = ir_attr_int(g, n, "transA", 0) != 0, tb = ir_attr_int(g, n, "transB", 0) != 0;
    if (!ta && !tb && alpha == 1.0f)
        return;
    Node *dq = dq_const(g, n, 1);
    if (!(alpha != 0) || !isfinite(alpha)) {
        node_remark(g, n, "alpha=%g cannot become a weight scale: the gemm stays float",
                    (double)alpha);
        return;
    }
    if (!dq && alpha != 1.0f) {
        node_remark(g, n, "alpha=%g with a non-constant B is not folded: B's integers keep "
                    "their own scale, so the gemm stays float", (double)alpha);
        return;
    }
    if (dq && alpha < 0 && !qm_is_8bit(dq->q->storage)) {
        node_remark(g, n, "alpha=%g: negating %s weights is not supported, the gemm stays float",
                    (double)alpha, elem_name(dq->q->storage));
        return;
    }
    if (ta && !transposable(g, n->in[0])) {
        node_remark(g, n, "transA=1 is not folded: A is not a per-tensor 8-bit dequantize");
        return;
    }
    if (!dq && tb && !transposable(g, n->in[1])) {
        node_remark(g, n, "transB=1 is not folded: B is neither a constant nor a per-tensor "
                    "8-bit dequantize");
        return;
    }
    /* B first (a constant the negation may refuse), then A */
    ValueId nb = VNONE;
    if (dq && (tb || alpha != 1.0f)) {
        const Tensor *w = ir_const_of(g, dq->in[0]);
        const QParams *q = dq->q;
        QParams *nq = ir_qparams_new(g->m, q->storage, q->axis, q->n);
        nq->qmin = q->qmin;
        nq->qmax = q->qmax;
        for (uint32_t c = 0; c < q->n; c++) {
            nq->scale[c] = q->scale[c] * fabsf(alpha);
            nq->zp[c] = q->zp[c];
            if (!(nq->scale[c] > 0) || !isfinite(nq->scale[c])) {
                node_remark(g, n, "alpha=%g makes a weight scale %g: the gemm stays float",
                            (double)alpha, (double)nq->scale[c]);
                return;
            }
        }
        Type ty = w->type;
        ty.q = NULL;
        if (tb) {
            if (q->axis >= 0)
                nq->axis = 1 - q->axis;
            ty.dims[0] = w->type.dims[1];
            ty.dims[1] = w->type.dims[0];
        }
        Tensor *nt = ir_tensor_new(g->m, &ty);
        int64_t r = w->type.dims[0], cc = w->type.dims[1];
        size_t es = elem_size(ty.elem);
        for (int64_t a = 0; a < r; a++)
            for (int64_t b = 0; b < cc; b++)
                memcpy((char *)nt->data + (size_t)(tb ? b * r + a : a * cc + b) * es,
                       (const char *)w->data + (size_t)(a * cc + b) * es, es);
        if (alpha < 0 && !negate_weight(nt, nq)) {
            node_remark(g, n, "alpha=%g: a weight lies outside its quantization range and "
                        "cannot be negated; the gemm stays float", (double)alpha);
            return;
        }
        nt = qm_tensor_retype(g->m, nt, nq);
        Loc loc = n->loc;
        const char *dq_name = ir_value_name(g, n->in[1]); /* interned: stable across additions */
        ValueId wv = ir_add_const(g, ir_value_name(g, dq->in[0]), nt, loc);
        nb = qm_add_dq(g, wv, nq, dq_name, loc); /* n and dq are stale from here */
    } else if (tb) {
        nb = transposed_operand(g, nid, 1);
    }
    ValueId na = ta ? transposed_operand(g, nid, 0) : VNONE;
    n = ir_node(g, nid);
    if (nb.id)
        n->in[1] = nb;
    if (na.id)
        n->in[0] = na;
    if (ta)
        ir_set_attr_int(g, nid, "transA", 0);
    if (tb)
        ir_set_attr_int(g, nid, "transB", 0);
    if (alpha != 1.0f)
        ir_set_attr_float(g, nid, "alpha", 1.0f);
    g->uses_valid = false;
    n = ir_node(g, nid);
    if (alpha < 0)
        node_remark(g, n, "alpha=%g folded: weights negated, |alpha| in the weight scale%s",
                    (double)alpha, frexpf(alpha, &(int){0}) != -0.5f ? " (rounded to f32)" : "");
    else if (alpha != 1.0f && frexpf(alpha, &(int){0}) != 0.5f)
        node_remark(g, n, "alpha=%g folded into the weight scale (rounded to f32)", (double)alpha);
}

/* A conv whose only consumer is a batchnorm (directly or through the PyTorch QAT div) with
 * constant statistics: bn-fold will rewrite its bias, which is quantized after that. */
static bool
before_batchnorm(Graph *g, Node *n)
{
    if (n->op != OP_CONV)
        return false;
    Node *u = qm_only_user(g, n->out[0], NULL);
    if (u && u->op == OP_DIV && ir_const_of(g, u->in[1]))
        u = qm_only_user(g, u->out[0], NULL);
    if (!u || u->op != OP_BATCHNORM)
        return false;
    for (uint32_t k = 1; k < u->nin; k++)
        if (!ir_const_of(g, u->in[k]))
            return false;
    return true;
}

/* The float values of a Gemm's C times beta, per output column (m of them), or false when C
 * is not a constant that varies along N only (shape [], [1], [1,1], [N] or [1,N]). C may be
 * an f32 constant or the dequantize of an integer constant. */
static bool
gemm_c_values(Graph *g, Node *n, int64_t m, float beta, float *out, bool *was_dq)
{
    const Tensor *c = ir_const_of(g, n->in[2]);
    Node *dq = NULL;
    *was_dq = false;
    if (!c) {
        dq = qm_def_op(g, n->in[2], OP_DEQUANTIZE);
        c = dq && dq->q && dq->nin == 1 ? ir_const_of(g, dq->in[0]) : NULL;
        if (!c || elem_is_float(c->type.elem) || dq->q->axis > 0 ||
            (dq->q->axis == 0 && c->type.rank != 1))
            return false;
        *was_dq = true;
    } else if (c->type.elem != ET_F32) {
        return false;
    }
    const Type *ct = &c->type;
    size_t nc = type_numel_unchecked(ct);
    bool scalar = nc == 1;
    bool row = (ct->rank == 1 && ct->dims[0] == m) ||
               (ct->rank == 2 && ct->dims[0] == 1 && ct->dims[1] == m);
    if (!scalar && !row)
        return false;
    for (int64_t j = 0; j < m; j++) {
        size_t i = scalar ? 0 : (size_t)j;
        float v = dq ? qn_dequantize((int32_t)tensor_get_i(c, i), qm_scale_at(dq->q, (int64_t)i),
                                     qm_zp_at(dq->q, (int64_t)i))
                     : (float)tensor_get_f(c, i);
        out[j] = v * beta;
    }
    return true;
}

static bool
fold_bias(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    if (n->nin < 3 || !n->in[2].id)
        return false;
    Node *dx = qm_def_op(g, n->in[0], OP_DEQUANTIZE);
    Node *dw = dq_const(g, n, 1);
    if (!dx || !dx->q || dx->q->axis >= 0 || !dw)
        return false;
    const Type *ot = &ir_value(g, n->out[0])->type;
    int64_t m = ot->dims[1];
    float beta = n->op == OP_GEMM ? ir_attr_float(g, n, "beta", 1.0f) : 1.0f;
    float *bf = xmalloc(((size_t)m + 1) * 3 * sizeof(float));
    float *sw = bf + m + 1;
    int32_t *bq = (int32_t *)(sw + m + 1);
    bool ok;
    if (n->op == OP_GEMM) {
        bool was_dq = false;
        /* an int32 C with beta = 1 is qdq-fold's (exact, or rescaled with a remark) */
        Node *cd = qm_def_op(g, n->in[2], OP_DEQUANTIZE);
        bool int_c = cd && cd->q && cd->q->storage == ET_I32;
        ok = !ir_attr_int(g, n, "transA", 0) && !ir_attr_int(g, n, "transB", 0) &&
             ir_attr_float(g, n, "alpha", 1) == 1.0f && (beta != 1.0f || !int_c) &&
             gemm_c_values(g, n, m, beta, bf, &was_dq);
        if (!ok && beta != 1.0f && ir_attr_float(g, n, "alpha", 1) == 1.0f &&
            !ir_attr_int(g, n, "transA", 0) && !ir_attr_int(g, n, "transB", 0))
            node_remark(g, n, "beta=%g: C is not a constant varying along N only, not folded "
                        "into the int32 bias", (double)beta);
        (void)was_dq;
    } else {
        const Tensor *b = ir_const_of(g, n->in[2]);
        ok = b && b->type.elem == ET_F32 && (int64_t)type_numel_unchecked(&b->type) == m &&
             !before_batchnorm(g, n);
        for (int64_t c = 0; ok && c < m; c++)
            bf[c] = (float)tensor_get_f(b, (size_t)c);
    }
    const QParams *qw = dw->q;
    bool per = qw->n > 1;
    for (int64_t c = 0; ok && c < m; c++) {
        sw[c] = qm_scale_at(qw, wchan(g, n, qw, c));
        if (!per && c > 0 && sw[c] != sw[0])
            ok = false;
    }
    if (!ok) {
        free(bf);
        return false;
    }
    float sx = dx->q->scale[0];
    float sy = qm_out_scale(g, n->out[0]);
    double steps = qm_quantize_bias(bf, sx, sw, m, sy, bq);
    if (steps > QM_BIAS_MAX_STEPS) {
        node_remark(g, n, "float bias kept float (an add after the integer op): rounded to int32 "
                    "at scale input scale * weight scale it would move the result by up to %.3g "
                    "output steps (scale %g), more than %g", steps, (double)sy, QM_BIAS_MAX_STEPS);
        qm_bias_to_add(g, nid, bf, m);
        free(bf);
        return true;
    }
    QParams *qb = ir_qparams_new(g->m, ET_I32, per ? 0 : -1, per ? (uint32_t)m : 1);
    Type bt = type_make(ET_I32, 1, &m);
    Tensor *bqt = ir_tensor_new(g->m, &bt);
    for (int64_t c = 0; c < m; c++) {
        tensor_set_i(bqt, (size_t)c, bq[c]);
        if (per || c == 0)
            qb->scale[per ? c : 0] = sx * sw[c];
    }
    free(bf);
    bqt = qm_tensor_retype(g->m, bqt, qb);
    Loc loc = n->loc;
    char name[256];
    snprintf(name, sizeof name, "%s_q", ir_value_name(g, n->in[2]));
    ValueId bv = ir_add_const(g, name, bqt, loc);
    ValueId dv = qm_add_dq(g, bv, qb, ir_value_name(g, ir_node(g, nid)->in[2]), loc);
    n = ir_node(g, nid); /* ir_add_const and qm_add_dq may move the node array */
    n->in[2] = dv;
    if (n->op == OP_GEMM)
        ir_set_attr_float(g, nid, "beta", 1.0f);
    return true;
}

bool
pass_weight_fold(PassCtx *pc, Graph *g)
{
    bool changed = fold_quantize_consts(g);
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || (n->op != OP_CONV && n->op != OP_CONV_TRANSPOSE && n->op != OP_MATMUL &&
                        n->op != OP_GEMM))
            continue;
        if (n->op == OP_GEMM) {
            uint32_t before = g->nodes.len;
            gemm_normalize(pc, g, (NodeId){i});
            changed |= g->nodes.len != before;
            n = &g->nodes.data[i];
        }
        Node *dw = dq_const(g, n, 1);
        if (dw && !ir_value(g, dw->in[0])->type.q) {
            ValueId wv = dw->in[0];
            const QParams *q = dw->q;
            if (ir_value(g, wv)->type.elem == q->storage && qm_annotate(g, wv, q)) {
                qm_const_set(g, wv, qm_tensor_retype(g->m, ir_const_of(g, wv), q));
                changed = true;
            }
        }
        changed |= fold_bias(g, (NodeId){i});
    }
    return changed;
}
