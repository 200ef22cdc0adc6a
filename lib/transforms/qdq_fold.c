/* qdq_fold.c: fold dequantize -> {Conv, ConvTranspose, MatMul, Gemm} [-> Relu/Clip] [-> quantize]
 * into one integer op (qconv, qconv_transpose, qmatmul).
 *  - Operands: the input and the weight must come from static i8/u8 dequantizes; the input
 *    per tensor, the weight per tensor or per axis on its output-channel axis (Conv 0,
 *    ConvTranspose 1, MatMul/Gemm last). The integer operands take the dequantizes' parameters
 *    (qm_annotate); the dequantizes stay for any other consumer and die otherwise.
 *  - Bias: absent, or dequantize(const i32, zp 0) (weight-fold makes it so). A bias scale that
 *    differs from the f32 product sx*sw[c] is rescaled now: round_half_even(b*sb/(sx*sw))
 *    in f64, saturated, with a remark.
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

/* Plain i32 bias for the integer op, or VNONE (*ok false) if the bias cannot be folded. */
static ValueId
int_bias(Graph *g, Node *n, const QParams *qx, const QParams *qw, int64_t m, bool *ok)
{
    *ok = true;
    if (n->nin < 3 || !n->in[2].id)
        return VNONE;
    *ok = false;
    Node *db = qm_def_op(g, n->in[2], OP_DEQUANTIZE);
    if (!db || !db->q || db->q->storage != ET_I32 || db->q->axis > 0)
        return VNONE;
    const Tensor *b = ir_const_of(g, db->in[0]);
    if (!b || b->type.rank != 1 || b->type.dims[0] != m)
        return VNONE;
    for (uint32_t i = 0; i < db->q->n; i++)
        if (db->q->zp[i] != 0)
            return VNONE;
    Type bt = type_make(ET_I32, 1, &m);
    Tensor *nb = ir_tensor_new(g->m, &bt);
    bool rescaled = false;
    for (int64_t c = 0; c < m; c++) {
        float want = qx->scale[0] * qm_scale_at(qw, wchan(qw, c));
        float sb = qm_scale_at(db->q, c);
        int64_t v = tensor_get_i(b, (size_t)c);
        if (sb != want) {
            v = qn_saturate(qn_round_half_even_f64((double)v * sb / want), INT32_MIN, INT32_MAX);
            rescaled = true;
        }
        tensor_set_i(nb, (size_t)c, v);
    }
    if (rescaled)
        node_remark(g, n, "bias scale differs from input scale * weight scale: bias rescaled");
    *ok = true;
    if (!rescaled && !ir_value(g, db->in[0])->type.q)
        return db->in[0]; /* already a plain i32 constant */
    return ir_add_const(g, ir_value_name(g, db->in[0]), nb, n->loc);
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
    /* the consumer chain: [act] quantize */
    Node *act = NULL, *q = NULL;
    Node *u = qm_only_user(g, n->out[0], NULL);
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
    ValueId x = dx->in[0], w = dw->in[0];
    const QParams *qx = dx->q, *qw = dw->q;
    if (!qm_annotate(g, x, qx) || !qm_annotate(g, w, qw)) {
        node_remark(g, n, "an operand's integers already carry other parameters: not folded");
        return false;
    }
    bool bias_ok;
    ValueId b = int_bias(g, ir_node(g, nid), qx, qw, m, &bias_ok);
    if (!bias_ok) {
        node_remark(g, ir_node(g, nid), "bias is not an int32 dequantize: not folded");
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
    q = qm_node(g, qid);
    act = qm_node(g, aid);
    if (q) {
        ValueId y = q->out[0];
        const QParams *yq = q->q;
        if (act) {
            int32_t qlo, qhi;
            qm_act_clamp(yq, lo, hi, &qlo, &qhi);
            qm_set_clamp(g, r, yq, qlo, qhi);
            act->dead = true;
        }
        q->dead = true;
        ir_set_result(g, r, 0, y);
        ir_value(g, y)->type.q = yq;
        g->uses_valid = false;
    } else {
        ir_set_result(g, r, 0, n->out[0]);
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
