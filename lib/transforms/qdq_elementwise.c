/* qdq_elementwise.c: element-wise arithmetic, concatenation and averaging in integers.
 *  - dequantize(a), dequantize(b) -> Add/Sub/Mul [-> Relu/Clip] -> quantize  =>  qadd/qsub/qmul
 *    (any two per-tensor i8/u8 scales, broadcasting as before; a Relu/Clip becomes clamp).
 *  - dequantize(x_i) -> Concat -> quantize  =>  Concat of the integers, each input whose
 *    parameters differ from the quantize's first passing through `requantize` (exact:
 *    requantize is quantize(dequantize(x)) and concat only moves values).
 *  - dequantize(x) -> AveragePool / GlobalAveragePool / ReduceMean -> quantize  =>
 *    qavgpool (global=1 for the global form) / qreduce_mean, same attributes; 1-D and 2-D
 *    pools only (3-D ones stay float, with a remark).
 *  - dequantize(x) -> Relu/Clip -> quantize with a 16-bit x or quantize  =>  requantize x with
 *    clamp = [q(lo), q(hi)] (exact: requantize is quantize(dequantize(x)) and quantize is
 *    monotone; 8-bit to 8-bit is lut's table).
 * Operands and the quantize are per tensor, 8- or 16-bit (i8/u8/i16/u16, mixed: a Concat
 * operand of another type is requantized to the quantize's); the quantize must be the only
 * consumer (through the activation, if any).
 * Arithmetic: lib/numerics/elementwise.h, docs/numerics.md.
 * needs: nothing.  keeps: result value names.  leaves stale: uses.
 */
#include "pass.h"

#include <math.h>

/* The quantize (and optional activation) consuming v, if foldable. */
static Node *
quantize_after(Graph *g, ValueId v, Node **act, float *lo, float *hi)
{
    *act = NULL;
    *lo = -INFINITY;
    *hi = INFINITY;
    Node *u = qm_only_user(g, v, NULL);
    if (u && (u->op == OP_RELU || u->op == OP_CLIP) && qm_act_bounds(g, u, lo, hi)) {
        Node *u2 = qm_only_user(g, u->out[0], NULL);
        if (u2 && u2->op == OP_QUANTIZE) {
            *act = u;
            u = u2;
        }
    }
    if (!u || u->op != OP_QUANTIZE || !u->q || u->q->axis >= 0 ||
        !(qm_is_8bit(u->q->storage) || qm_is_16bit(u->q->storage))) {
        *act = NULL;
        return NULL;
    }
    return u;
}

/* Per-tensor 8- or 16-bit dequantize defining v. */
static Node *
dq_pt(Graph *g, ValueId v)
{
    Node *d = qm_dq_act(g, v);
    return d && d->q->axis < 0 ? d : NULL;
}

/* Make n's replacement `r` produce q's result (and drop act and q). */
static void
take_result(Graph *g, NodeId r, Node *n, Node *act, Node *q, float lo, float hi)
{
    const QParams *yq = q->q;
    ValueId y = q->out[0];
    if (act) {
        int32_t qlo, qhi;
        qm_act_clamp(yq, lo, hi, &qlo, &qhi);
        qm_set_clamp(g, r, yq, qlo, qhi);
        act->dead = true;
    }
    n->dead = true;
    q->dead = true;
    qm_take_quantized(g, r, y, yq, q->loc);
}

static bool
fold_binary(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    Node *da = dq_pt(g, n->in[0]), *db = dq_pt(g, n->in[1]);
    if (!da || !db)
        return false;
    Node *act, *q;
    float lo, hi;
    if (!(q = quantize_after(g, n->out[0], &act, &lo, &hi)))
        return false;
    ValueId a = da->in[0], b = db->in[0];
    if (!qm_annotate(g, a, da->q) || !qm_annotate(g, b, db->q))
        return false;
    OpKind op = n->op == OP_ADD ? OP_QADD : n->op == OP_SUB ? OP_QSUB : OP_QMUL;
    ValueId ins[2] = {a, b};
    NodeId qid = qm_id(g, q), aid = qm_id(g, act);
    NodeId r = ir_add_node(g, op, 2, ins, 1, n->loc);
    take_result(g, r, ir_node(g, nid), qm_node(g, aid), qm_node(g, qid), lo, hi);
    return true;
}

static bool
fold_concat(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    Node *act, *q;
    float lo, hi;
    if (!(q = quantize_after(g, n->out[0], &act, &lo, &hi)) || act)
        return false;
    for (uint32_t k = 0; k < n->nin; k++)
        if (!dq_pt(g, n->in[k]))
            return false;
    uint32_t nin = n->nin;
    const QParams *yq = q->q; /* arena-owned: stays valid when nodes are added */
    ValueId *ins = xmalloc(nin * sizeof(ValueId));
    for (uint32_t k = 0; k < nin; k++) {
        Node *d = dq_pt(g, ir_node(g, nid)->in[k]);
        ValueId x = d->in[0];
        const QParams *xq = d->q;
        if (!qm_annotate(g, x, xq)) {
            free(ins);
            return false;
        }
        if (!qparams_equal(xq, yq)) { /* also another storage type: u8 -> i16 */
            Loc loc = d->loc;
            Type t = ir_value(g, x)->type;
            t.q = yq;
            t.elem = yq->storage;
            NodeId rq = ir_add_node(g, OP_REQUANTIZE, 1, &x, 1, loc);
            x = ir_add_result(g, rq, 0, ir_value_name(g, x), &t);
        }
        ins[k] = x;
    }
    Node *act2;
    NodeId r = ir_add_node(g, OP_CONCAT, nin, ins, 1, ir_node(g, nid)->loc);
    free(ins);
    qm_copy_attrs(g, r, nid, NULL);
    /* re-find the quantize: node pointers move when nodes are added */
    n = ir_node(g, nid);
    q = quantize_after(g, n->out[0], &act2, &lo, &hi);
    take_result(g, r, n, NULL, q, lo, hi);
    return true;
}

static bool
fold_average(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    Node *d = dq_pt(g, n->in[0]);
    if (!d)
        return false;
    /* the integer pool kernels are 1-D and 2-D (lib/codegen/llvm_kernels_int.c); a 3-D pool
     * stays a float island, which the float kernels compute (up to 3 spatial dimensions) */
    if (n->op != OP_REDUCE_MEAN && ir_value(g, n->in[0])->type.rank > 4) {
        node_remark(g, n, "not folded into a qavgpool: %d spatial dimensions (the integer "
                    "pools are 1-D and 2-D)", ir_value(g, n->in[0])->type.rank - 2);
        return false;
    }
    Node *act, *q;
    float lo, hi;
    if (!(q = quantize_after(g, n->out[0], &act, &lo, &hi)))
        return false;
    ValueId x = d->in[0];
    if (!qm_annotate(g, x, d->q))
        return false;
    NodeId qid = qm_id(g, q), aid = qm_id(g, act);
    OpKind op = n->op == OP_REDUCE_MEAN ? OP_QREDUCE_MEAN : OP_QAVGPOOL;
    NodeId r = ir_add_node(g, op, 1, &x, 1, n->loc);
    qm_copy_attrs(g, r, nid, NULL);
    n = ir_node(g, nid);
    if (n->op == OP_GLOBAL_AVGPOOL)
        ir_set_attr_int(g, r, "global", 1);
    take_result(g, r, ir_node(g, nid), qm_node(g, aid), qm_node(g, qid), lo, hi);
    return true;
}

/* dequantize(x) -> Relu/Clip -> quantize with 16-bit x or result: requantize with clamp. */
static bool
fold_act16(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    Node *d = dq_pt(g, n->in[0]);
    float lo, hi;
    if (!d || !qm_act_bounds(g, n, &lo, &hi))
        return false;
    Node *q = qm_only_user(g, n->out[0], NULL);
    if (!q || q->op != OP_QUANTIZE || !q->q || q->q->axis >= 0 || q->nin != 1 ||
        !(qm_is_8bit(q->q->storage) || qm_is_16bit(q->q->storage)) ||
        (qm_is_8bit(q->q->storage) && qm_is_8bit(d->q->storage))) /* lut's */
        return false;
    ValueId x = d->in[0];
    if (!qm_annotate(g, x, d->q))
        return false;
    NodeId qid = qm_id(g, q);
    const QParams *yq = q->q;
    NodeId r = ir_add_node(g, OP_REQUANTIZE, 1, &x, 1, ir_node(g, nid)->loc);
    int32_t qlo, qhi;
    qm_act_clamp(yq, lo, hi, &qlo, &qhi);
    qm_set_clamp(g, r, yq, qlo, qhi);
    ir_node(g, nid)->dead = true;
    q = qm_node(g, qid);
    q->dead = true;
    qm_take_quantized(g, r, q->out[0], yq, q->loc);
    return true;
}

bool
pass_qdq_elementwise(PassCtx *pc, Graph *g)
{
    bool changed = false;
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || pass_keep_float(pc, n))
            continue;
        switch (n->op) {
        case OP_ADD: case OP_SUB: case OP_MUL:
            changed |= fold_binary(g, (NodeId){i});
            break;
        case OP_CONCAT:
            changed |= fold_concat(g, (NodeId){i});
            break;
        case OP_AVGPOOL: case OP_GLOBAL_AVGPOOL: case OP_REDUCE_MEAN:
            changed |= fold_average(g, (NodeId){i});
            break;
        case OP_RELU: case OP_CLIP:
            changed |= fold_act16(g, (NodeId){i});
            break;
        default:
            break;
        }
    }
    return changed;
}
