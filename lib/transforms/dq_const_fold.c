/* dq_const_fold.c: a dequantize of a constant that no integer op took over becomes an f32
 * constant, computed once at compile time instead of on every run.
 * After qdq-fold, a `dequantize` whose operand is a constant and whose result is still used
 * feeds float ops only (a float island's weights: e.g. the classifier Gemm of torchvision's
 * eager QAT exports, whose input has no fake quantizer). Each element is qn_dequantize of the
 * integer with its channel's scale and zero point, the reference interpreter's arithmetic, so
 * the numbers are the same; the constant is 4x the bytes of an 8-bit one. Dequantizes with
 * run-time parameters, a `to` other than f32, a graph output as result or more than
 * DQ_CONST_MAX_BYTES of result are left alone. Layout ops whose operands thereby became
 * constants (a per-channel weight's Reshape, which qdq-propagate does not move the dequantize
 * across) are folded too (ir_try_fold), so no run-time layout step of a weight remains.
 * needs: nothing.  keeps: names of the consumers' operands (the constant takes the
 * dequantize's result name).  leaves stale: uses.
 */
#include "pass.h"

#include "numerics/numerics.h"

#define DQ_CONST_MAX_BYTES ((size_t)256 << 20)

bool
pass_dq_const_fold(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
    ir_fill_uses(g);
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || n->op != OP_DEQUANTIZE || ir_attr(g, n, "to") ||
            ir_is_graph_output(g, n->out[0]) || !ir_num_uses(g, n->out[0]))
            continue;
        bool block = !n->q && ir_attr_int(g, n, "block_size", 0) > 0;
        if (!block && (!n->q || n->nin != 1))
            continue;
        const Tensor *x = ir_const_of(g, n->in[0]);
        const Type *yt = &ir_value(g, n->out[0])->type;
        size_t cnt;
        if (!x || yt->elem != ET_F32 || !type_numel(yt, &cnt) ||
            cnt > DQ_CONST_MAX_BYTES / sizeof(float))
            continue;
        Type rt = *yt;
        rt.q = NULL;
        Tensor *r = ir_tensor_new(g->m, &rt);
        if (!r)
            continue;
        if (block) {
            /* x [R, C], scale (and zero point) with ceil(dim / block_size) along `axis` */
            const Tensor *st = ir_const_of(g, n->in[1]);
            const Tensor *zt = n->nin > 2 && n->in[2].id ? ir_const_of(g, n->in[2]) : NULL;
            if (!st || (n->nin > 2 && n->in[2].id && !zt) || x->type.rank != 2 ||
                st->type.elem != ET_F32 || st->type.rank != 2)
                continue;
            int64_t ax = ir_attr_int(g, n, "axis", 1), bs = ir_attr_int(g, n, "block_size", 0);
            int64_t R = x->type.dims[0], C = x->type.dims[1], sc = st->type.dims[1];
            float *out = r->data;
            for (int64_t a = 0; a < R; a++)
                for (int64_t j = 0; j < C; j++) {
                    size_t si = (size_t)(ax == 0 ? (a / bs) * sc + j : a * sc + j / bs);
                    out[a * C + j] = qn_dequantize((int32_t)tensor_get_i(x, (size_t)(a * C + j)),
                                                   ((const float *)st->data)[si],
                                                   zt ? (int32_t)tensor_get_i(zt, si) : 0);
                }
            goto replace;
        }
        const QParams *q = n->q;
        int64_t inner = 1;
        if (q->axis >= 0)
            for (int d = q->axis + 1; d < x->type.rank; d++)
                inner *= x->type.dims[d];
        float *out = r->data;
        for (size_t k = 0; k < cnt; k++) {
            int64_t c = q->axis < 0 ? 0 : ((int64_t)k / inner) % x->type.dims[q->axis];
            out[k] = qn_dequantize((int32_t)tensor_get_i(x, k), q->scale[c], q->zp[c]);
        }
    replace:;
        Loc loc = n->loc;
        ValueId from = n->out[0];
        const char *name = ir_value_name(g, from);
        ValueId cv = ir_add_const(g, name, r, loc); /* n is stale from here */
        ir_replace_all_uses(g, from, cv);
        ir_node(g, (NodeId){i})->dead = true;
        ir_fill_uses(g);
        changed = true;
    }
    /* the layout ops on the new constants (a weight's Reshape or Transpose before a float
     * MatMul) fold now, in node order so that chains fold through */
    for (uint32_t i = 1; changed && i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (!n->dead && (op_info(n->op)->flags & OPF_LAYOUT))
            ir_try_fold(g, (NodeId){i});
    }
    return changed;
}
