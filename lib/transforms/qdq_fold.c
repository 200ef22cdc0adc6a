/* qdq_fold.c: fold dequantize -> {Conv, ConvTranspose, MatMul, Gemm} [-> Relu/Clip] [-> quantize]
 * into one integer op (qconv, qconv_transpose, qmatmul).
 *  - Operands: the input and the weight must come from static i8/u8 dequantizes; the input
 *    per tensor, the weight per tensor or per axis on its output-channel axis (Conv 0,
 *    ConvTranspose 1, MatMul/Gemm last). The integer operands take the dequantizes' parameters
 *    (qm_annotate); the dequantizes stay for any other consumer and die otherwise.
 *  - Bias: absent, or dequantize(const i32, zp 0) (weight-fold makes it so; a Gemm C may be
 *    [1,N] or one value, broadcast). A bias scale that differs from the f32 product sx*sw[c]
 *    is rescaled now: round_half_even(b*sb/(sx*sw)) in f64, saturated, with a remark.
 *  - MatMul -> Add(constant bias) (nn.Linear on rank > 2 inputs): the add folds into the
 *    qmatmul's int32 bias when the matmul result has no other consumer, the bias varies along
 *    the last axis only, and its int32 form is exact: dequantize(const i32, zp 0) with scale
 *    exactly sx*sw[n] (no rescaling), or an f32 constant quantized by qn_quantize_bias with a
 *    rounding error of at most QM_BIAS_MAX_STEPS steps of the quantize after it. The chain
 *    below then starts after the add. Otherwise the add stays float (remark why).
 *  - Result: with a following per-tensor quantize (the op's only consumer, possibly through one
 *    Relu/Clip that is the only consumer) the integer op produces the quantized value itself:
 *    requantization per docs/numerics.md. A Relu/Clip in between becomes clamp=[q(lo), q(hi)]
 *    (exact: quantize is monotone, so quantize(clip(v)) == clamp(quantize(v))); a Relu whose
 *    bound the quantize already clips leaves no clamp. Without such a quantize (TensorRT style,
 *    or the float result has other consumers) the integer op has an f32 result: the
 *    dequantizing epilogue (float)acc * (sx*sw[c]) replaces the float op, and what follows
 *    stays as it was.
 *  - Gemm folds when transA=0, transB=0, alpha=1, beta=1 (weight-fold normalises constants).
 * Not folded (left for float-islands to report): non-8-bit operands, per-axis activations,
 * a float (unquantized) bias, values whose integers already carry other parameters.
 * needs: weight-fold for float biases.  keeps: value names of the results.  leaves stale: uses.
 */
#include "pass.h"

#include "numerics/numerics.h"

#include <math.h>
#include <stdio.h>

static OpKind
int_op(OpKind op)
{
    switch (op) {
    case OP_CONV: return OP_QCONV;
    case OP_CONV_TRANSPOSE: return OP_QCONV_TRANSPOSE;
    case OP_MATMUL: case OP_GEMM: return OP_QMATMUL;
    default: return OP_INVALID;
    }
}

/* Weight scale index of output channel c (ConvTranspose: per-axis on axis 1, M/group scales). */
static int64_t
wchan(const QParams *qw, int64_t c)
{
    return qw->n == 1 ? 0 : c % (int64_t)qw->n;
}

/* Whether a bias of type bt broadcast against the result type yt varies along the last axis
 * only: rank <= yt's, every dimension 1 except the last, which is 1 or m. */
static bool
last_axis_only(const Type *bt, const Type *yt, int64_t m)
{
    if (bt->rank > yt->rank)
        return false;
    for (int d = 0; d + 1 < bt->rank; d++)
        if (bt->dims[d] != 1)
            return false;
    return bt->rank == 0 || bt->dims[bt->rank - 1] == m || bt->dims[bt->rank - 1] == 1;
}

/* Plain i32 bias [m] for the integer op from bias value bv = dequantize(const i32, zp 0), or
 * VNONE with *ok false. The constant may be [m], or [1, m] / a single value (Gemm C, a
 * MatMul's bias add; broadcast). A bias scale other than sx*sw[c] is rescaled (with a remark)
 * unless `exact` is set; then it is refused (*why says so). */
static ValueId
int_bias(Graph *g, NodeId nid, ValueId bv, const QParams *qx, const QParams *qw, int64_t m,
         bool exact, bool *ok, const char **why)
{
    *ok = true;
    *why = NULL;
    if (!bv.id)
        return VNONE;
    *ok = false;
    *why = "bias is not an int32 dequantize";
    Node *db = qm_def_op(g, bv, OP_DEQUANTIZE);
    if (!db || !db->q || db->q->storage != ET_I32 || db->nin != 1)
        return VNONE;
    const Tensor *b = ir_const_of(g, db->in[0]);
    if (!b)
        return VNONE;
    size_t nb = type_numel_unchecked(&b->type);
    OpKind op = ir_node(g, nid)->op;
    if (op == OP_CONV || op == OP_CONV_TRANSPOSE ? b->type.rank != 1 || b->type.dims[0] != m
                                                 : !last_axis_only(&b->type, &b->type, m))
        return VNONE;
    if (db->q->axis >= 0 && (db->q->axis != b->type.rank - 1 || (int64_t)db->q->n != m))
        return VNONE;
    for (uint32_t i = 0; i < db->q->n; i++)
        if (db->q->zp[i] != 0)
            return VNONE;
    Type bt = type_make(ET_I32, 1, &m);
    Tensor *nt = ir_tensor_new(g->m, &bt);
    bool rescaled = false;
    for (int64_t c = 0; c < m; c++) {
        int64_t i = nb == 1 ? 0 : c;
        float want = qx->scale[0] * qm_scale_at(qw, wchan(qw, c));
        float sb = qm_scale_at(db->q, i);
        int64_t v = tensor_get_i(b, (size_t)i);
        if (sb != want) {
            if (exact) {
                *why = "bias scale differs from input scale * weight scale";
                return VNONE;
            }
            v = qn_saturate(qn_round_half_even_f64((double)v * sb / want), INT32_MIN, INT32_MAX);
            rescaled = true;
        }
        tensor_set_i(nt, (size_t)c, v);
    }
    if (rescaled)
        node_remark(g, ir_node(g, nid),
                    "bias scale differs from input scale * weight scale: bias rescaled");
    *ok = true;
    *why = NULL;
    if (!rescaled && !ir_value(g, db->in[0])->type.q && b->type.rank == 1 && (int64_t)nb == m)
        return db->in[0]; /* already a plain i32 constant */
    return ir_add_const(g, ir_value_name(g, db->in[0]), nt, ir_node(g, nid)->loc);
}

/* Whether v is a bias-like constant: an f32 constant or the dequantize of a constant. */
static bool
const_bias(Graph *g, ValueId v)
{
    const Tensor *t = ir_const_of(g, v);
    if (t)
        return elem_is_float(t->type.elem);
    Node *d = qm_def_op(g, v, OP_DEQUANTIZE);
    return d && d->nin == 1 && ir_const_of(g, d->in[0]);
}

/* MatMul -> Add(constant bias), the nn.Linear export: the add folds into the qmatmul's int32
 * bias when the matmul result has no other consumer, the bias varies along the last (N) axis
 * only, and its int32 form is exact: dequantize(const i32, zp 0) with scale sx*sw[n], or an
 * f32 constant quantized as weight-fold does (qn_quantize_bias) with a rounding error of at
 * most QM_BIAS_MAX_STEPS steps of the quantize after it. Returns the add (its operand index
 * of the bias in *bk), or NULL; each refusal of a constant bias add says why. */
static Node *
matmul_bias_add(Graph *g, Node *n, int64_t m, uint32_t *bk)
{
    ValueId y = n->out[0];
    qm_uses(g);
    uint32_t nu = ir_num_uses(g, y);
    const Use *us = ir_uses(g, y);
    Node *add = NULL;
    uint32_t idx = 0;
    for (uint32_t i = 0; i < nu && !add; i++) {
        if (!us[i].node.id)
            continue;
        Node *u = ir_node(g, us[i].node);
        if (!u->dead && u->op == OP_ADD && u->nin == 2 && const_bias(g, u->in[1 - us[i].index])) {
            add = u;
            idx = us[i].index;
        }
    }
    if (!add)
        return NULL;
    if (nu != 1) {
        node_remark(g, add, "bias add not folded into the qmatmul: the matmul result has "
                    "other consumers");
        return NULL;
    }
    *bk = 1 - idx;
    ValueId bv = add->in[*bk];
    const Type *bt = &ir_value(g, bv)->type, *yt = &ir_value(g, y)->type;
    if (!last_axis_only(bt, yt, m)) {
        node_remark(g, add, "bias add not folded into the qmatmul: the bias varies along "
                    "another axis than the last (N)");
        return NULL;
    }
    if (qm_def_op(g, bv, OP_DEQUANTIZE))
        return add; /* int_bias checks it (exact scales only) */
    const Tensor *b = ir_const_of(g, bv);
    if (b->type.elem != ET_F32) {
        node_remark(g, add, "bias add not folded into the qmatmul: the bias is %s, not f32 "
                    "or a dequantized int32", elem_name(b->type.elem));
        return NULL;
    }
    return add;
}

/* The int32 [m] bias of a float bias constant bv (broadcast along the last axis) with its
 * rounding check; VNONE (with a remark on the add) when the rounding is too coarse. */
static ValueId
float_bias(Graph *g, Node *add, ValueId bv, const QParams *qx, const QParams *qw, int64_t m)
{
    const Tensor *b = ir_const_of(g, bv);
    size_t nb = type_numel_unchecked(&b->type);
    float *bf = xmalloc((size_t)m * 2 * sizeof(float) + (size_t)m * sizeof(int32_t));
    float *sw = bf + m;
    int32_t *bq = (int32_t *)(sw + m);
    for (int64_t c = 0; c < m; c++) {
        bf[c] = (float)tensor_get_f(b, nb == 1 ? 0 : (size_t)c);
        sw[c] = qm_scale_at(qw, wchan(qw, c));
    }
    float sy = qm_out_scale(g, add->out[0]);
    double steps = qm_quantize_bias(bf, qx->scale[0], sw, m, sy, bq);
    ValueId r = VNONE;
    if (steps > QM_BIAS_MAX_STEPS) {
        node_remark(g, add, "bias add stays float: rounded to int32 at scale input scale * "
                    "weight scale the bias would move the result by up to %.3g output steps "
                    "(scale %g), more than %g", steps, (double)sy, QM_BIAS_MAX_STEPS);
    } else {
        Type t = type_make(ET_I32, 1, &m);
        Tensor *bt = ir_tensor_new(g->m, &t);
        for (int64_t c = 0; c < m; c++)
            tensor_set_i(bt, (size_t)c, bq[c]);
        char name[256];
        snprintf(name, sizeof name, "%s_q", ir_value_name(g, bv));
        r = ir_add_const(g, name, bt, add->loc);
    }
    free(bf);
    return r;
}

static bool
fold_one(PassCtx *pc, Graph *g, NodeId nid)
{
    (void)pc;
    Node *n = ir_node(g, nid);
    OpKind qop = int_op(n->op);
    Node *dx = qm_dq8(g, n->in[0]), *dw = qm_dq8(g, n->in[1]);
    if (!dx || !dw)
        return false;
    if (dx->q->axis >= 0) {
        node_remark(g, n, "input is quantized per channel: not folded");
        return false;
    }
    const Type *wt = &ir_value(g, dw->in[0])->type;
    int want_axis = n->op == OP_CONV ? 0 : n->op == OP_CONV_TRANSPOSE ? 1 : wt->rank - 1;
    if (dw->q->axis >= 0 && dw->q->axis != want_axis) {
        node_remark(g, n, "weight is quantized on axis %d, expected %d: not folded",
                    dw->q->axis, want_axis);
        return false;
    }
    if (n->op == OP_GEMM && (ir_attr_int(g, n, "transA", 0) || ir_attr_int(g, n, "transB", 0) ||
                             ir_attr_float(g, n, "alpha", 1) != 1.0f ||
                             ir_attr_float(g, n, "beta", 1) != 1.0f))
        return false;
    const Type *yt = &ir_value(g, n->out[0])->type;
    int64_t m = n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE ? yt->dims[1]
                                                                : yt->dims[yt->rank - 1];
    ValueId x = dx->in[0], w = dw->in[0];
    const QParams *qx = dx->q, *qw = dw->q;
    /* MatMul -> Add(bias): the add's result is the one the integer op replaces */
    uint32_t bk = 0;
    Node *badd = n->op == OP_MATMUL && wt->rank >= 2 ? matmul_bias_add(g, n, m, &bk) : NULL;
    ValueId fbias = VNONE; /* the bias operand: the node's own, or the add's */
    if (badd)
        fbias = badd->in[bk];
    else if (n->nin > 2)
        fbias = n->in[2];
    NodeId addid = qm_id(g, badd);
    ValueId res = badd ? badd->out[0] : n->out[0];
    /* the consumer chain: [act] quantize */
    Node *act = NULL, *q = NULL;
    Node *u = qm_only_user(g, res, NULL);
    float lo = -INFINITY, hi = INFINITY;
    if (u && (u->op == OP_RELU || u->op == OP_CLIP) && qm_act_bounds(g, u, &lo, &hi)) {
        Node *u2 = qm_only_user(g, u->out[0], NULL);
        if (u2 && u2->op == OP_QUANTIZE)
            act = u, u = u2;
    }
    if (u && u->op == OP_QUANTIZE && u->q && u->q->axis < 0 && u->nin == 1 &&
        u->q->storage != ET_I4 && u->q->storage != ET_U4 && u->q->storage != ET_I32)
        q = u;
    else
        act = NULL;
    NodeId qid = qm_id(g, q), aid = qm_id(g, act);
    if (!qm_annotate(g, x, qx) || !qm_annotate(g, w, qw)) {
        node_remark(g, ir_node(g, nid),
                    "an operand's integers already carry other parameters: not folded");
        return false;
    }
    bool bias_ok = true;
    const char *why = NULL;
    ValueId b = VNONE;
    if (badd && !qm_def_op(g, fbias, OP_DEQUANTIZE)) {
        b = float_bias(g, qm_node(g, addid), fbias, qx, qw, m);
        if (!b.id) { /* the add stays float; the matmul folds alone */
            addid = NNONE;
            res = ir_node(g, nid)->out[0];
            qid = aid = NNONE;
        }
    } else {
        b = int_bias(g, nid, fbias, qx, qw, m, badd != NULL, &bias_ok, &why);
        if (!bias_ok && badd) {
            node_remark(g, qm_node(g, addid), "bias add not folded into the qmatmul: %s", why);
            addid = NNONE;
            res = ir_node(g, nid)->out[0];
            qid = aid = NNONE;
            bias_ok = true;
        }
    }
    if (!bias_ok) {
        node_remark(g, ir_node(g, nid), "%s: not folded", why);
        return false;
    }
    n = ir_node(g, nid);
    ValueId ins[3] = {x, w, b};
    Loc loc = n->loc;
    NodeId r = ir_add_node(g, qop, b.id ? 3 : 2, ins, 1, loc);
    n = ir_node(g, nid); /* ir_add_node may move the node array */
    static const char *const gemm_skip[] = {"transA", "transB", "alpha", "beta", NULL};
    qm_copy_attrs(g, r, nid, n->op == OP_GEMM ? gemm_skip : NULL);
    n = ir_node(g, nid);
    n->dead = true;
    if (addid.id)
        ir_node(g, addid)->dead = true;
    q = qm_node(g, qid);
    act = qm_node(g, aid);
    if (q) {
        ValueId yv = q->out[0];
        const QParams *yq = q->q;
        if (act) {
            int32_t qlo, qhi;
            qm_act_clamp(yq, lo, hi, &qlo, &qhi);
            qm_set_clamp(g, r, yq, qlo, qhi);
            act->dead = true;
        }
        q->dead = true;
        ir_set_result(g, r, 0, yv);
        ir_value(g, yv)->type.q = yq;
        g->uses_valid = false;
    } else {
        ir_set_result(g, r, 0, res);
    }
    return true;
}

bool
pass_qdq_fold(PassCtx *pc, Graph *g)
{
    bool changed = false;
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || int_op(n->op) == OP_INVALID)
            continue;
        changed |= fold_one(pc, g, (NodeId){i});
    }
    return changed;
}
