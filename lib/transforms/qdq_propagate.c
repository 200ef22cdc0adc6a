/* qdq_propagate.c: move dequantize forward and quantize backward across ops that only move
 * values, and drop the round trips this exposes.
 *  - dequantize(x) -> L  =>  L(x) -> dequantize, for L in MaxPool, Reshape, Flatten, Transpose,
 *    Squeeze, Unsqueeze, Slice, Pad, Split, Gather (data operand), Identity, Expand, Tile,
 *    reduce_max / reduce_min over a non-empty set, and Concat when every operand has the same
 *    parameters. Exact for per-tensor parameters:
 *    dequantize is element-wise and monotone, so it commutes with moving, selecting and taking
 *    the maximum of values. Pad's constant must be exactly representable: the integer pad
 *    value is q = quantize(value), required to dequantize back to value (0.0 -> zero point).
 *    The integers of the moved op carry the same parameters (layout ops never rescale).
 *    Per-channel parameters move across a Transpose, whose result takes the permuted channel
 *    axis, and across a Reshape / Flatten / Squeeze / Unsqueeze that keeps the channel one
 *    whole dimension (the same size and the same number of elements before it), which
 *    becomes the channel axis (exact: each element keeps its own channel's scale and zero
 *    point).
 *    A maxpool with an indices result (ONNX's Indices output) moves only when dequantize is
 *    strictly increasing on the storage range (at most 16-bit storage, finite at both ends):
 *    distinct integers then stay distinct floats, so the first maximum of each window, and its
 *    index, are the same on either side; the indices result is passed on unchanged.
 *  - L -> quantize  =>  quantize -> L (same ops; L's float result must have no other consumer
 *    and its operand must not be a dequantize, which the first rule handles). Exact: quantize is
 *    element-wise and monotone; Pad's constant becomes quantize(value). Not across a maxpool
 *    with an indices result: quantize maps distinct floats to equal integers, which would move
 *    the first maximum. Not across reduce_max / reduce_min: a NaN wins the float reduction but
 *    quantizes to the zero point, which need not win the integer one.
 *  - quantize(dequantize(x)) with identical parameters (scale, zero point, storage, range)
 *    is x: every x in the storage range maps back to itself. With other per-tensor parameters
 *    it is `requantize x` (defined as exactly that round trip).
 *  - dequantize(quantize(v)) is NOT removed: it rounds v to the grid and saturates it, which
 *    the model was trained or calibrated with. It disappears only as part of the rules above
 *    (e.g. quantize(dequantize(quantize(v))) == quantize(v) by the round-trip rule).
 *  - Two quantizes (or dequantizes) of the same value with identical parameters merge, unless
 *    the later one's result is a graph output: the output keeps its own name (a TensorRT export
 *    quantizes a tensor once per consumer; a checking copy that lists each Q as an output must
 *    get every one of them back under its name).
 *    A moved layout op whose operand is a constant (DequantizeLinear(W) -> Transpose / Reshape
 *    -> MatMul, torch's export of a Linear on 3-D input) is folded into the constant at once
 *    (ir_try_fold; per channel with the permuted axis), so no run-time transpose of a weight
 *    remains. A block-wise dequantize of constants (weight, scale, zero point) followed by a
 *    2-D transpose becomes a dequantize of the transposed constants with the other axis.
 * Runs to a fixed point (at most 16 rounds).
 * needs: nothing.  keeps: graph output names.  leaves stale: uses.
 */
#include "pass.h"

#include "ir/eval.h"
#include "numerics/numerics.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* reduce_max / reduce_min over a non-empty set (an empty one gives -inf / +inf in float but the
 * type's bounds in integers) */
static bool
nonempty_reduce(Graph *g, const Node *n)
{
    const Type *t = &ir_value(g, n->in[0])->type;
    bool red[IR_MAX_RANK];
    if (!ir_reduce_mask(g, n, t->rank, red))
        return false;
    for (int d = 0; d < t->rank; d++)
        if (red[d] && t->dims[d] == 0)
            return false;
    return true;
}

static bool
is_mover(Graph *g, const Node *n)
{
    switch (n->op) {
    case OP_MAXPOOL: case OP_RESHAPE: case OP_FLATTEN: case OP_TRANSPOSE: case OP_SQUEEZE:
    case OP_UNSQUEEZE: case OP_SLICE: case OP_SPLIT: case OP_GATHER: case OP_IDENTITY:
    case OP_PAD: case OP_EXPAND: case OP_TILE:
        return true;
    case OP_REDUCE_MAX: case OP_REDUCE_MIN:
        return nonempty_reduce(g, n);
    case OP_RESIZE: /* nearest would be exact, but the verifier wants resize operands float */
    default:
        return false;
    }
}

/* Integer pad value for a float pad constant under q; false if not exactly representable. */
static bool
pad_value(Graph *g, const Node *n, const QParams *q, float *iv)
{
    if (n->op != OP_PAD)
        return true;
    if (strcmp(ir_attr_string(g, n, "mode", "constant"), "constant") != 0)
        return true;
    float v = ir_attr_float(g, n, "value", 0.0f);
    int32_t p = qn_quantize_f32(v, q->scale[0], q->zp[0], q->qmin, q->qmax);
    if (qn_dequantize(p, q->scale[0], q->zp[0]) != v)
        return false;
    *iv = (float)p;
    return true;
}

/* Distinct integers of q's storage range dequantize to distinct, finite floats: |q - zp| <
 * 2^17 is exact in f32 and (q - zp) * scale rounds apart (the products differ by at least
 * scale, far more than an ulp) unless the product overflows. */
static bool
dq_strictly_increasing(const QParams *q)
{
    return (int64_t)q->qmax - q->qmin <= 65535 &&
           isfinite(qn_dequantize(q->qmin, q->scale[0], q->zp[0])) &&
           isfinite(qn_dequantize(q->qmax, q->scale[0], q->zp[0]));
}

/* The parameters of a layout op's result whose operand has parameters q: per channel, the
 * channel axis moves to where the op puts it (a TensorRT export's weight
 * DequantizeLinear(axis 0) -> Transpose -> MatMul; ir_moved_axis); per tensor, q. */
static const QParams *
transposed_params(Graph *g, const Node *n, const QParams *q)
{
    if (q->axis < 0)
        return q;
    Type x = ir_value(g, n->in[0])->type;
    x.q = q;
    int axis = ir_moved_axis(g, n, &x, &ir_value(g, n->out[0])->type);
    assert(axis >= 0);
    QParams *r = ir_qparams_new(g->m, q->storage, axis, q->n);
    memcpy(r->scale, q->scale, q->n * sizeof(float));
    memcpy(r->zp, q->zp, q->n * sizeof(int32_t));
    r->qmin = q->qmin;
    r->qmax = q->qmax;
    return r;
}

/* Per-axis parameters move across n: a transpose, or a reshape (flatten, squeeze, unsqueeze)
 * that keeps the channel one whole dimension. */
static bool
axis_moves(Graph *g, const Node *n, const QParams *q)
{
    if (n->op != OP_TRANSPOSE && n->op != OP_RESHAPE && n->op != OP_FLATTEN &&
        n->op != OP_SQUEEZE && n->op != OP_UNSQUEEZE)
        return false;
    Type x = ir_value(g, n->in[0])->type;
    x.q = q;
    return ir_moved_axis(g, n, &x, &ir_value(g, n->out[0])->type) >= 0;
}

/* dequantize -> L  =>  L -> dequantize */
static bool
dq_forward(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    uint32_t ndata = n->op == OP_CONCAT ? n->nin : 1;
    const QParams *q = NULL;
    for (uint32_t k = 0; k < ndata; k++) {
        Node *d = qm_def_op(g, n->in[k], OP_DEQUANTIZE);
        if (!d || !d->q || d->nin != 1 || (d->q->axis >= 0 && !axis_moves(g, n, d->q)) ||
            (q && !qparams_equal(q, d->q)))
            return false;
        q = d->q;
    }
    const QParams *qr = transposed_params(g, n, q); /* the moved result's parameters */
    uint32_t nmove = ir_layout_nout(n); /* results that carry values; the rest pass on as is */
    if (nmove < n->nout && !dq_strictly_increasing(q))
        return false;
    float iv = 0;
    if (!pad_value(g, n, q, &iv))
        return false;
    ValueId *ins = xmalloc(n->nin * sizeof(ValueId));
    uint32_t nin = n->nin, nout = n->nout;
    for (uint32_t k = 0; k < nin; k++) {
        ins[k] = ir_node(g, nid)->in[k];
        if (k < ndata) {
            ins[k] = ir_def(g, ins[k])->in[0];
            if (!qm_annotate(g, ins[k], q)) {
                free(ins);
                return false;
            }
        }
    }
    Loc loc = n->loc;
    NodeId r = ir_add_node(g, ir_node(g, nid)->op, nin, ins, nout, loc);
    free(ins);
    qm_copy_attrs(g, r, nid, NULL);
    if (ir_node(g, nid)->op == OP_PAD && ir_attr(g, ir_node(g, nid), "value"))
        ir_set_attr_float(g, r, "value", iv);
    else if (ir_node(g, nid)->op == OP_PAD && iv != 0)
        ir_set_attr_float(g, r, "value", iv);
    for (uint32_t k = 0; k < nout; k++) {
        ValueId old = ir_node(g, nid)->out[k];
        if (k >= nmove) {
            ir_set_result(g, r, k, old);
            continue;
        }
        Type t = ir_value(g, old)->type;
        t.elem = q->storage;
        t.q = qr;
        ValueId iv2 = ir_add_result(g, r, k, ir_value_name(g, old), &t);
        ValueId dv = qm_add_dq(g, iv2, qr, ir_value_name(g, old), loc);
        if (!ir_is_graph_output(g, old)) {
            /* the integers take over the name (the float value dies) */
            uint32_t t2 = ir_value(g, old)->name;
            ir_value(g, old)->name = ir_value(g, iv2)->name;
            ir_value(g, iv2)->name = t2;
        }
        ir_replace_all_uses(g, old, dv);
    }
    ir_node(g, nid)->dead = true;
    ir_try_fold(g, r); /* the layout move of a constant (a weight) is done now, once */
    return true;
}

/* A 2-D transpose of constant t (any element type; its quantization, if any, per tensor). */
static ValueId
transposed_const(Graph *g, ValueId v, Loc loc)
{
    const Tensor *t = ir_const_of(g, v);
    Type rt = t->type;
    rt.dims[0] = t->type.dims[1];
    rt.dims[1] = t->type.dims[0];
    Tensor *r = ir_tensor_new(g->m, &rt);
    size_t es = elem_size(rt.elem);
    int64_t R = t->type.dims[0], C = t->type.dims[1];
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++)
            memcpy((char *)r->data + (size_t)(j * R + i) * es,
                   (const char *)t->data + (size_t)(i * C + j) * es, es);
    char name[512];
    snprintf(name, sizeof name, "%.500s.t", ir_value_name(g, v));
    return ir_add_const(g, name, r, loc);
}

/* dequantize(W, S[, Z], axis a, block_size) -> transpose (2-D), all constants  =>
 * dequantize(W^T, S^T[, Z^T], axis 1 - a, block_size): element (i, j) of the result is
 * W[j][i] with the scale and zero point of its block, on either side. */
static bool
dq_block_transpose(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    Node *d = qm_def_op(g, n->in[0], OP_DEQUANTIZE);
    if (!d || d->q || d->nin < 2 || ir_attr_int(g, d, "block_size", 0) <= 0 ||
        ir_value(g, n->in[0])->type.rank != 2 || !ir_const_of(g, d->in[0]) ||
        !ir_const_of(g, d->in[1]) || (d->nin > 2 && d->in[2].id && !ir_const_of(g, d->in[2])))
        return false;
    int64_t perm[IR_MAX_RANK];
    int np = ir_attr_ints(g, n, "perm", perm, IR_MAX_RANK);
    if (np > 0 && (np != 2 || perm[0] != 1))
        return false;
    NodeId did = ir_value(g, n->in[0])->def;
    Loc loc = n->loc;
    uint32_t nin = ir_node(g, did)->nin;
    ValueId ins[3];
    for (uint32_t k = 0; k < nin; k++) {
        ValueId v = ir_node(g, did)->in[k];
        ins[k] = v.id ? transposed_const(g, v, loc) : v;
    }
    int64_t axis = ir_attr_int(g, ir_node(g, did), "axis", 1);
    NodeId r = ir_add_node(g, OP_DEQUANTIZE, nin, ins, 1, loc);
    static const char *const skip[] = {"axis", NULL};
    qm_copy_attrs(g, r, did, skip);
    ir_set_attr_int(g, r, "axis", axis == 0 || axis == -2 ? 1 : 0);
    ValueId old = ir_node(g, nid)->out[0];
    ir_set_result(g, r, 0, old);
    ir_node(g, nid)->dead = true;
    return true;
}

/* L -> quantize  =>  quantize -> L */
static bool
q_backward(Graph *g, Node *qn)
{
    if (!qn->q || qn->q->axis >= 0 || qn->nin != 1)
        return false;
    Node *n = ir_def(g, qn->in[0]);
    if (!n || n->dead || n->nout != 1 || !(is_mover(g, n) || n->op == OP_CONCAT))
        return false;
    /* a NaN wins a float max/min but quantizes to the zero point, which need not win */
    if (n->op == OP_REDUCE_MAX || n->op == OP_REDUCE_MIN)
        return false;
    if (!qm_only_user(g, n->out[0], NULL))
        return false;
    uint32_t ndata = n->op == OP_CONCAT ? n->nin : 1;
    for (uint32_t k = 0; k < ndata; k++) {
        if (qm_def_op(g, n->in[k], OP_DEQUANTIZE))
            return false;
        if (!elem_is_float(ir_value(g, n->in[k])->type.elem))
            return false;
    }
    const QParams *q = qn->q;
    NodeId qid = qm_id(g, qn), nid = qm_id(g, n);
    float pv = 0;
    bool has_pad_value = n->op == OP_PAD &&
                         strcmp(ir_attr_string(g, n, "mode", "constant"), "constant") == 0;
    if (has_pad_value)
        pv = (float)qn_quantize_f32(ir_attr_float(g, n, "value", 0.0f), q->scale[0], q->zp[0],
                                    q->qmin, q->qmax);
    uint32_t nin = n->nin;
    ValueId *ins = xmalloc(nin * sizeof(ValueId));
    Loc loc = qn->loc;
    for (uint32_t k = 0; k < nin; k++) {
        ins[k] = ir_node(g, nid)->in[k];
        if (k < ndata)
            ins[k] = qm_add_q(g, ins[k], q, ir_value_name(g, ins[k]), loc);
    }
    NodeId r = ir_add_node(g, ir_node(g, nid)->op, nin, ins, 1, ir_node(g, nid)->loc);
    free(ins);
    qm_copy_attrs(g, r, nid, NULL);
    if (has_pad_value)
        ir_set_attr_float(g, r, "value", pv);
    ValueId y = ir_node(g, qid)->out[0];
    ir_node(g, qid)->dead = true;
    ir_node(g, nid)->dead = true;
    qm_take_quantized(g, r, y, q, loc);
    return true;
}

/* quantize(dequantize(x)) */
static bool
round_trip(Graph *g, Node *qn)
{
    Node *d = qm_def_op(g, qn->in[0], OP_DEQUANTIZE);
    if (!d || !d->q || !qn->q || d->nin != 1 || qn->nin != 1)
        return false;
    ValueId x = d->in[0], y = qn->out[0];
    if (qparams_equal(d->q, qn->q)) {
        if (!qm_annotate(g, x, d->q))
            return false;
        qn->dead = true;
        qm_replace_quantized(g, y, x, qn->q, qn->loc);
        return true;
    }
    if (d->q->axis >= 0 || qn->q->axis >= 0 || !qm_annotate(g, x, d->q))
        return false;
    NodeId qid = qm_id(g, qn);
    const QParams *yq = qn->q;
    Loc loc = ir_node(g, qid)->loc;
    NodeId r = ir_add_node(g, OP_REQUANTIZE, 1, &x, 1, loc);
    ir_node(g, qid)->dead = true;
    qm_take_quantized(g, r, y, yq, loc);
    return true;
}

/* Whether a's readers and b's can read one value: both carry the same parameters, or one is
 * plain and can be given the other's (not when a dequantize reads it with its own). */
static bool
same_meaning(Graph *g, ValueId a, ValueId b)
{
    const QParams *qa = ir_value(g, a)->type.q, *qb = ir_value(g, b)->type.q;
    if (qparams_equal(qa, qb))
        return true;
    if (qa && !qb)
        return qm_annotate(g, b, qa);
    if (qb && !qa)
        return qm_annotate(g, a, qb);
    return false;
}

/* Merge a quantize/dequantize into an earlier identical one on the same value. */
static bool
merge_duplicates(Graph *g)
{
    bool changed = false;
    qm_uses(g);
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || (n->op != OP_QUANTIZE && n->op != OP_DEQUANTIZE) || !n->q || n->nin != 1 ||
            ir_is_graph_output(g, n->out[0]))
            continue;
        uint32_t nu = ir_num_uses(g, n->in[0]);
        const Use *u = ir_uses(g, n->in[0]);
        for (uint32_t k = 0; k < nu; k++) {
            if (!u[k].node.id || u[k].node.id >= i)
                continue;
            Node *o = ir_node(g, u[k].node);
            if (!o->dead && o->op == n->op && o->nin == 1 && qparams_equal(o->q, n->q) &&
                same_meaning(g, o->out[0], n->out[0])) {
                n->dead = true;
                ir_replace_all_uses(g, n->out[0], o->out[0]);
                changed = true;
                break;
            }
        }
        if (changed)
            return true; /* uses are stale: caller loops */
    }
    return changed;
}

bool
pass_qdq_propagate(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
    for (int round = 0; round < 16; round++) {
        bool again = false;
        while (merge_duplicates(g))
            again = true;
        uint32_t nn = g->nodes.len;
        for (uint32_t i = 1; i < nn; i++) {
            Node *n = &g->nodes.data[i];
            if (n->dead)
                continue;
            if (is_mover(g, n) || n->op == OP_CONCAT)
                again |= dq_forward(g, (NodeId){i});
            n = &g->nodes.data[i];
            if (!n->dead && n->op == OP_TRANSPOSE)
                again |= dq_block_transpose(g, (NodeId){i});
            n = &g->nodes.data[i];
            if (!n->dead && n->op == OP_QUANTIZE) {
                qm_uses(g);
                if (round_trip(g, n) || q_backward(g, &g->nodes.data[i]))
                    again = true;
            }
        }
        changed |= again;
        if (!again)
            break;
        if (!ir_compact(g))
            return changed;
    }
    return changed;
}
