/* layout.c: the activation layout plan (which values are stored NHWC instead of the graph's
 * logical NCHW, cg_layout_plan) and the residual adds fused into a conv's GEMM epilogue
 * (cg_residual_add); the rules are at their declarations in plan.h. Both are decided before
 * any code is emitted, because they change what each step reads and which steps exist. */
#include "codegen/plan/plan.h"

#include <stdlib.h>
#include <string.h>

static bool
is_rank4(Graph *g, ValueId v)
{
    return ir_value(g, v)->type.rank == 4;
}

/* qconv kinds that accept/produce NHWC: 1 non-grouped (8- or 16-bit activations), 2 depthwise
 * multiplier 1 (8-bit: the NHWC depthwise kernel), 0 none. */
static int
conv_kind(Graph *g, Node *n)
{
    if (n->op != OP_QCONV || !is_rank4(g, n->in[0]) || !is_rank4(g, n->out[0]))
        return 0;
    const Type *x = &ir_value(g, n->in[0])->type, *w = &ir_value(g, n->in[1])->type;
    const Type *y = &ir_value(g, n->out[0])->type;
    bool a16 = x->elem == ET_I16 || x->elem == ET_U16;
    if (x->elem != ET_I8 && x->elem != ET_U8 && !a16)
        return 0;
    int64_t G = ir_attr_int(g, n, "group", 1);
    if (G == 1)
        return 1;
    if (a16)
        return 0;
    if (G == x->dims[1] && G == y->dims[1] && w->dims[1] == 1)
        return 2;
    return 0;
}

static bool
per_tensor(const Type *t)
{
    return !t->q || t->q->axis < 0;
}

/* Same-shape integer element-wise op whose operands are all the result's shape (or single
 * elements) and per-tensor quantized: indifferent to the layout. */
static bool
agnostic(Graph *g, Node *n)
{
    switch (n->op) {
    case OP_QADD: case OP_QSUB: case OP_QMUL: case OP_REQUANTIZE: case OP_LUT:
        break;
    default:
        return false;
    }
    if (n->nout != 1 || !is_rank4(g, n->out[0]))
        return false;
    const Type *y = &ir_value(g, n->out[0])->type;
    if (!per_tensor(y))
        return false;
    for (uint32_t i = 0; i < n->nin; i++) {
        if (!n->in[i].id)
            continue;
        const Type *t = &ir_value(g, n->in[i])->type;
        if (!per_tensor(t))
            return false;
        if (type_numel_unchecked(t) == 1)
            continue;
        if (t->rank != 4 || memcmp(t->dims, y->dims, 4 * sizeof(int64_t)) != 0)
            return false;
    }
    return true;
}

/* Integer (8- or 16-bit) 2-D maxpool with explicit geometry (NHWC variant below). */
static bool
pool_nhwc_ok(Graph *g, Node *n)
{
    if (n->op != OP_MAXPOOL || n->nout != 1 || !is_rank4(g, n->in[0]) || !is_rank4(g, n->out[0]))
        return false;
    ElemType e = ir_value(g, n->in[0])->type.elem;
    int64_t ks[2];
    return (e == ET_I8 || e == ET_U8 || e == ET_I16 || e == ET_U16) &&
           ir_attr_ints(g, n, "kernel_shape", ks, 2) == 2 &&
           strcmp(ir_attr_string(g, n, "auto_pad", "NOTSET"), "NOTSET") == 0;
}

/* Operand i of n is tied to n's result (must share its layout). */
static bool
tied(Graph *g, Node *n, uint32_t i)
{
    if (conv_kind(g, n) == 2 || pool_nhwc_ok(g, n))
        return i == 0;
    return agnostic(g, n) && type_numel_unchecked(&ir_value(g, n->in[i])->type) != 1;
}

uint8_t *
cg_layout_plan(Kb *k)
{
    Graph *g = k->g;
    uint32_t nval = g->values.len, nn = g->nodes.len;
    uint8_t *f = xcalloc(nval ? nval : 1, 1);
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = ir_node(g, (NodeId){i});
        if (!n->dead && (conv_kind(g, n) || agnostic(g, n) || pool_nhwc_ok(g, n)))
            f[n->out[0].id] = 1;
    }
    for (uint32_t j = 0; j < g->outputs.len; j++)
        f[g->outputs.data[j].id] = 0;
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = 1; i < nn; i++) {
            Node *n = ir_node(g, (NodeId){i});
            if (n->dead)
                continue;
            int ck = conv_kind(g, n);
            bool ag = agnostic(g, n) || pool_nhwc_ok(g, n);
            for (uint32_t a = 0; a < n->nin; a++) {
                ValueId v = n->in[a];
                if (!v.id || !f[v.id])
                    continue;
                if (!((ck && a == 0) || (ag && tied(g, n, a)))) {
                    f[v.id] = 0;
                    changed = true;
                }
            }
            if (!ck && !ag)
                continue;
            /* tied values: all NHWC or none */
            bool all = f[n->out[0].id] != 0;
            for (uint32_t a = 0; a < n->nin; a++)
                if (n->in[a].id && tied(g, n, a) && !f[n->in[a].id])
                    all = false;
            if (all)
                continue;
            if (f[n->out[0].id]) {
                f[n->out[0].id] = 0;
                changed = true;
            }
            for (uint32_t a = 0; a < n->nin; a++)
                if (n->in[a].id && tied(g, n, a) && f[n->in[a].id]) {
                    f[n->in[a].id] = 0;
                    changed = true;
                }
        }
    }
    return f;
}

bool
cg_value_nhwc(Kb *k, ValueId v)
{
    return k->nhwc && v.id && k->nhwc[v.id];
}

static bool
q8(const Type *t)
{
    return (t->elem == ET_I8 || t->elem == ET_U8) && t->q && t->q->axis < 0;
}

Node *
cg_residual_add(Kb *k, Node *n, const uint32_t *uses, uint32_t *other)
{
    Graph *g = k->g;
    if (conv_kind(g, n) != 1 || n->nout != 1)
        return NULL;
    ValueId v = n->out[0];
    const Type *vt = &ir_value(g, v)->type;
    if (!cg_value_nhwc(k, v) || !q8(vt) || uses[v.id] != 1)
        return NULL;
    uint32_t nid = (uint32_t)(n - g->nodes.data);
    Node *q = NULL;
    for (uint32_t i = nid + 1; i < g->nodes.len && !q; i++) {
        Node *m = ir_node(g, (NodeId){i});
        for (uint32_t a = 0; !m->dead && a < m->nin; a++)
            if (m->in[a].id == v.id)
                q = m;
    }
    if (!q || q->op != OP_QADD || q->nin != 2 || q->nout != 1 || q->in[0].id == q->in[1].id ||
        !q8(&ir_value(g, q->out[0])->type))
        return NULL;
    uint32_t o = q->in[0].id == v.id ? 1 : 0;
    ValueId u = q->in[o];
    const Type *ut = &ir_value(g, u)->type;
    if (!q8(ut) || ut->rank != vt->rank || memcmp(ut->dims, vt->dims, (size_t)vt->rank * sizeof(int64_t)) != 0 ||
        !cg_value_nhwc(k, u) || !cg_value_nhwc(k, q->out[0]))
        return NULL;
    /* the other operand exists when n runs: a graph input, or the result of an earlier node */
    const Value *uv = ir_value(g, u);
    if (uv->def.id && uv->def.id >= nid)
        return NULL;
    *other = o;
    return q;
}
