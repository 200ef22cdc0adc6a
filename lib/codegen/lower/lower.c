/* lower.c: the per-node dispatch: which emitter lowers a node, its scratch size and
 * which of its operands are compile-time constants. The helpers the emitters share (irb/kb.c)
 * live apart, so the emitters depend on them and this file on the emitters, with no loop. */
#include "codegen/lower/lower.h"
#include "codegen/lower/qmatmul_rt.h"

/* ---- dispatch ---- */

int64_t
cg_node_scratch(Kb *k, Node *n)
{
    switch (n->op) {
    case OP_QCONV: case OP_QMATMUL:
        if (n->op == OP_QMATMUL && cg_qmatmul_rt_ok(k, n)) /* run-time B: qmatmul_rt.c */
            return cg_qmatmul_rt_scratch(k, n);
        return cg_linear_scratch(k, n);
    case OP_QCONV_TRANSPOSE:
        return cg_qdirect_scratch(k, n);
    case OP_CONV_TRANSPOSE:
        if (cg_float_conv_ok(k, n))
            return cg_float_conv_scratch(k, n);
        return cg_float_linear_scratch(k, n);
    case OP_CONV:
        return cg_float_conv_scratch(k, n);
    case OP_DYNAMIC_QUANTIZE:
        return cg_dynq_scratch(k, n);
    case OP_WMATMUL:
        return cg_wonly_i8_scratch(k, n);
    case OP_MATMUL_INTEGER:
        return cg_minteger_scratch(k, n);
    case OP_WCONV:
        return cg_wconv_scratch(k, n);
    default:
        return 0;
    }
}

bool
cg_operand_static(Kb *k, Node *n, uint32_t i)
{
    if (n->op == OP_WMATMUL || n->op == OP_WCONV)
        return i >= 1; /* packed at compile time (float_wonly.c, float_wconv.c) */
    if (n->op == OP_MATMUL_INTEGER)
        return cg_minteger_static(k, n, i);
    if (n->op == OP_MATMUL || n->op == OP_GEMM)
        return cg_float_gemm_static(k, n, i);
    if (n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE)
        return cg_float_conv_static(k, n, i);
    if (n->op == OP_QMATMUL && cg_qmatmul_dynamic(k, n))
        return false;
    if (n->op == OP_QCONV || n->op == OP_QMATMUL)
        return cg_linear_static(k, n, i);
    return false;
}

bool
cg_node_may_fail(Graph *g, const Node *n)
{
    /* a gather with run-time indices checks them like the reference (layout.c) */
    if (n->op == OP_GATHER)
        return !ir_const_of(g, n->in[1]);
    return ((n->op == OP_QUANTIZE || n->op == OP_DEQUANTIZE) && !n->q && n->nin > 1 &&
            n->in[1].id) ||
           n->op == OP_DYNAMIC_QUANTIZE; /* NaN or infinity in its input (dynq.c) */
}

bool
cg_emit_node(Kb *k, Node *n, const CgNodeArgs *a)
{
    const OpInfo *oi = op_info(n->op);
    if (a->nchain) /* a float element-wise chain: float_chain.c */
        return cg_emit_float_chain(k, n, a);
    switch (n->op) {
    case OP_QMATMUL:
        if (cg_qmatmul_rt_ok(k, n))
            return cg_emit_qmatmul_rt(k, n, a);
        if (cg_qmatmul_dynamic(k, n))
            return cg_emit_qdirect(k, n, a);
        return cg_emit_linear(k, n, a);
    case OP_QCONV:
        return cg_emit_linear(k, n, a);
    case OP_WMATMUL:
        return cg_wonly_i8(k, n) ? cg_emit_wonly_i8(k, n, a) : cg_emit_wonly(k, n, a);
    case OP_DYNAMIC_QUANTIZE:
        return cg_emit_dynamic_quantize(k, n, a);
    case OP_MATMUL_INTEGER:
        return cg_emit_minteger(k, n, a);
    case OP_WCONV:
        return cg_emit_wconv(k, n, a);
    case OP_QCONV_TRANSPOSE:
        return cg_emit_qdirect(k, n, a);
    case OP_QUANTIZE: case OP_DEQUANTIZE:
        /* run-time scale / zero point operands: float_elem.c */
        if (cg_node_may_fail(k->g, n))
            return cg_emit_float(k, n, a);
        return cg_emit_int(k, n, a);
    case OP_MAXPOOL:
        /* 3 spatial dims or the indices result: float_linear.c */
        if (ir_value(k->g, n->in[0])->type.rank == 5 || n->nout > 1)
            return cg_emit_float_linear(k, n, a);
        return cg_emit_pool(k, n, a);
    case OP_QAVGPOOL:
        return cg_emit_pool(k, n, a);
    case OP_LUT: case OP_REQUANTIZE: case OP_QADD:
    case OP_QSUB: case OP_QMUL:
        return cg_emit_int(k, n, a);
    /* issue 14 item 4: comparisons, logic, selection, broadcasting copies, reductions */
    case OP_EQUAL: case OP_LESS: case OP_LESS_EQUAL: case OP_GREATER: case OP_GREATER_EQUAL:
    case OP_NOT: case OP_AND: case OP_OR: case OP_XOR: case OP_WHERE: case OP_EXPAND:
    case OP_TILE: case OP_RANGE:
        return cg_emit_select(k, n, a);
    case OP_REDUCE_SUM: case OP_REDUCE_MAX: case OP_REDUCE_MIN: case OP_ARGMAX:
        return cg_emit_reduce(k, n, a);
    default:
        break;
    }
    if (oi->flags & OPF_LAYOUT)
        return cg_emit_layout(k, n, a);
    return cg_emit_float(k, n, a);
}
