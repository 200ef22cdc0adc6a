/* weight_fold.c: turn the weights and biases of Conv, ConvTranspose, MatMul and Gemm into
 * integer constants, so qdq-fold finds the ONNX Runtime form const(int)->dequantize everywhere.
 *  - quantize(f32 const) (TensorRT / PyTorch fake-quant export) is computed now:
 *    qn_quantize_f32 per element (f32 division, round half to even, saturate to the storage
 *    range, per-axis scales on the node's axis). Exact: it is what quantize computes.
 *  - const(int)->dequantize feeding a weight: the const's type gets the dequantize's
 *    parameters (the integers now say what they mean; nothing is computed).
 *  - Gemm with transB=1 and an integer constant B: B is transposed now (axis 0 -> 1), transB=0.
 *    alpha > 0 is folded into B's scales (f32 product; exact when alpha is a power of two);
 *    alpha <= 0 and transA=1 stay, with a remark.
 *  - A float bias (f32 const; Gemm C of shape [N] or [1,N], times beta) of an op whose input
 *    and weight are both dequantized becomes const(i32, scale sx*sw[c], zp 0)->dequantize,
 *    b_q[c] = qn_quantize_bias(b[c], sx, sw[c]): f64 division by the f32 product sx*sw[c],
 *    round half to even, saturated to int32 (ONNX Runtime's quantizer rule). This changes the
 *    float graph by at most half a bias step, as every QDQ bias does.
 * needs: nothing.  keeps: shapes.  leaves stale: uses.
 */
#include "pass.h"

#include "numerics/numerics.h"

#include <math.h>
#include <stdio.h>
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

static void
gemm_weight(PassCtx *pc, Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    if (ir_attr_int(g, n, "transA", 0)) {
        node_remark(g, n, "transA=1 is not folded: the input stays float");
        return;
    }
    Node *dq = dq_const(g, n, 1);
    if (!dq)
        return;
    const Tensor *w = ir_const_of(g, dq->in[0]);
    const QParams *q = dq->q;
    float alpha = ir_attr_float(g, n, "alpha", 1.0f);
    bool tb = ir_attr_int(g, n, "transB", 0) != 0;
    if (!tb && alpha == 1.0f)
        return;
    if (!(alpha > 0) || !isfinite(alpha)) {
        node_remark(g, n, "alpha=%g is not folded into the weight scale", (double)alpha);
        return;
    }
    QParams *nq = ir_qparams_new(g->m, q->storage, q->axis, q->n);
    nq->qmin = q->qmin;
    nq->qmax = q->qmax;
    for (uint32_t c = 0; c < q->n; c++) {
        nq->scale[c] = q->scale[c] * alpha;
        nq->zp[c] = q->zp[c];
    }
    Tensor *nt;
    if (tb) {
        if (q->axis >= 0)
            nq->axis = 1 - q->axis;
        Type ty = w->type;
        ty.dims[0] = w->type.dims[1];
        ty.dims[1] = w->type.dims[0];
        ty.q = NULL;
        nt = ir_tensor_new(g->m, &ty);
        int64_t r = w->type.dims[0], cc = w->type.dims[1];
        size_t es = elem_size(ty.elem);
        for (int64_t a = 0; a < r; a++)
            for (int64_t b = 0; b < cc; b++)
                memcpy((char *)nt->data + (size_t)(b * r + a) * es,
                       (const char *)w->data + (size_t)(a * cc + b) * es, es);
    } else {
        nt = qm_tensor_retype(g->m, w, NULL);
    }
    nt = qm_tensor_retype(g->m, nt, nq);
    Loc loc = n->loc;
    const char *dq_name = ir_value_name(g, n->in[1]); /* interned: stable across additions */
    ValueId wv = ir_add_const(g, ir_value_name(g, dq->in[0]), nt, loc);
    ValueId dv = qm_add_dq(g, wv, nq, dq_name, loc); /* n and dq are stale from here */
    n = ir_node(g, nid);
    n->in[1] = dv;
    ir_set_attr_int(g, nid, "transB", 0);
    ir_set_attr_float(g, nid, "alpha", 1.0f);
    if (alpha != 1.0f && frexpf(alpha, &(int){0}) != 0.5f)
        node_remark(g, n, "alpha=%g folded into the weight scale (rounded to f32)", (double)alpha);
    (void)pc;
}

static bool
fold_bias(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    if (n->nin < 3 || !n->in[2].id)
        return false;
    const Tensor *b = ir_const_of(g, n->in[2]);
    if (!b || b->type.elem != ET_F32)
        return false;
    Node *dx = qm_def_op(g, n->in[0], OP_DEQUANTIZE);
    Node *dw = dq_const(g, n, 1);
    if (!dx || !dx->q || dx->q->axis >= 0 || !dw)
        return false;
    const Type *ot = &ir_value(g, n->out[0])->type;
    int64_t m = n->op == OP_GEMM ? ot->dims[1] : ot->dims[1];
    size_t nb = type_numel_unchecked(&b->type);
    if (n->op == OP_GEMM) {
        bool row = (b->type.rank == 1 && b->type.dims[0] == m) ||
                   (b->type.rank == 2 && b->type.dims[0] == 1 && b->type.dims[1] == m);
        if (!row || ir_attr_int(g, n, "transB", 0) || ir_attr_float(g, n, "alpha", 1) != 1.0f)
            return false;
    } else if ((int64_t)nb != m) {
        return false;
    }
    const QParams *qw = dw->q;
    float beta = n->op == OP_GEMM ? ir_attr_float(g, n, "beta", 1.0f) : 1.0f;
    float sx = dx->q->scale[0];
    bool per = qw->n > 1;
    QParams *qb = ir_qparams_new(g->m, ET_I32, per ? 0 : -1, per ? (uint32_t)m : 1);
    Type bt = type_make(ET_I32, 1, &m);
    Tensor *bq = ir_tensor_new(g->m, &bt);
    for (int64_t c = 0; c < m; c++) {
        float sw = qm_scale_at(qw, wchan(g, n, qw, c));
        float v = (float)tensor_get_f(b, (size_t)c) * beta;
        tensor_set_i(bq, (size_t)c, qn_quantize_bias(v, sx, sw));
        if (per || c == 0)
            qb->scale[per ? c : 0] = sx * sw;
    }
    if (!per && m > 1)
        for (int64_t c = 1; c < m; c++)
            if (qm_scale_at(qw, wchan(g, n, qw, c)) != qw->scale[0])
                return false;
    bq = qm_tensor_retype(g->m, bq, qb);
    Loc loc = n->loc;
    char name[256];
    snprintf(name, sizeof name, "%s_q", ir_value_name(g, n->in[2]));
    ValueId bv = ir_add_const(g, name, bq, loc);
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
            gemm_weight(pc, g, (NodeId){i});
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
