/* int_lut.c: integer element-wise DAGs over one 8-bit tensor become one lookup table.
 *   y = g(x), g a DAG of lut / requantize / qadd / qsub / qmul nodes whose operands are x,
 *   other nodes of the DAG or one-element integer constants  =>  lut x, table[i] = g(i + min)
 * Why: once qdq-elementwise and lut have made their pieces integer, the activations that
 * exporters write out as products are still two to four passes over the tensor: ONNX Runtime's
 * quantize_static SiLU is lut(sigmoid) then qmul(x, that), HardSwish lut(hardsigmoid) then
 * qmul(x, that), torch's erf GELU lut(erf) -> qadd(+1) -> qmul(x, .) -> qmul(0.5). Each is a
 * function of the input byte alone, so one table read replaces them.
 * Exact: every entry is what the nodes compute for that input, node by node, with the
 * reference interpreter's per-element functions (lib/numerics/elementwise.h: qn_requantize,
 * qn_qadd, qn_qsub, qn_qmul, or their _fixed forms under --requant=fixed, from the same *_params
 * calls; a lut node's own table), so the table is the DAG's result bit for bit in the mode the
 * graph is compiled for. A node whose --requant=fixed parameters do not exist is left alone
 * (the reference and the code generator report it).
 * Conditions: x and every node's result 8-bit, quantized per tensor, of the root's shape (no
 * broadcasting but one-element constants); each node but the root used only inside the DAG; at
 * least two nodes (one node already is one pass).
 * needs: nothing.  keeps: the root's result value (name, type).  leaves stale: uses.
 */
#include "pass.h"

#include "numerics/elementwise.h"

#include <string.h>

enum { IL_MAX = 16 };

typedef struct IlChain {
    NodeId node[IL_MAX];
    uint32_t n;
    ValueId x;
    bool has_x;
} IlChain;

static bool
il_kind(OpKind op)
{
    return op == OP_LUT || op == OP_REQUANTIZE || op == OP_QADD || op == OP_QSUB || op == OP_QMUL;
}

static bool
per_tensor8(const Type *t)
{
    return t->q && t->q->axis < 0 && qm_is_8bit(t->elem);
}

/* A one-element integer constant quantized per tensor (read as its stored integer). */
static const Tensor *
scalar_const(Graph *g, ValueId v)
{
    const Tensor *t = ir_const_of(g, v);
    const Type *vt = &ir_value(g, v)->type;
    return t && type_numel_unchecked(&t->type) == 1 && elem_is_quant_storage(vt->elem) &&
                   vt->q && vt->q->axis < 0
               ? t
               : NULL;
}

static int
il_find(const IlChain *c, NodeId id)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->node[i].id == id.id)
            return (int)i;
    return -1;
}

static uint32_t
il_nin(const Node *n)
{
    return n->op == OP_LUT || n->op == OP_REQUANTIZE ? 1 : 2;
}

/* Adds the nodes computing v to c (a node in `blocked` stays a leaf); false when v's DAG has a
 * second non-constant leaf, a leaf or node of another shape or type, or too many nodes. */
static bool
il_add(Graph *g, IlChain *c, ValueId v, const Type *shape, const bool *blocked)
{
    if (scalar_const(g, v))
        return true;
    const Value *val = ir_value(g, v);
    Node *d = val->def.id ? ir_node(g, val->def) : NULL;
    if (!per_tensor8(&val->type) || !type_shape_equal(&val->type, shape))
        return false;
    if (!d || blocked[val->def.id] || !il_kind(d->op) || d->nout != 1 || d->nin < il_nin(d)) {
        if (c->has_x)
            return c->x.id == v.id;
        c->x = v;
        c->has_x = true;
        return true;
    }
    if (il_find(c, val->def) >= 0)
        return true;
    if (c->n == IL_MAX)
        return false;
    NodeId id = val->def;
    c->node[c->n++] = id;
    for (uint32_t i = 0; i < il_nin(ir_node(g, id)); i++)
        if (!il_add(g, c, ir_node(g, id)->in[i], shape, blocked))
            return false;
    return true;
}

/* The first node of c after the root (node 0) whose result is read outside c or is a graph
 * output, or -1. */
static int
il_open(Graph *g, const IlChain *c)
{
    for (uint32_t i = 1; i < c->n; i++) {
        ValueId v = ir_node(g, c->node[i])->out[0];
        const Use *u = ir_uses(g, v);
        for (uint32_t j = 0; j < ir_num_uses(g, v); j++)
            if (!u[j].node.id || il_find(c, u[j].node) < 0)
                return (int)i;
    }
    return -1;
}

/* One node's per-element function: operand and result parameters, the fixed-mode constants. */
typedef struct IlFn {
    const Node *n;
    float s[2], sy;
    int32_t z[2], zy, lo, hi;
    const Tensor *table;
    int64_t tmin; /* storage minimum of the lut's input */
    QnFixed m;
    QnAddFixed pa;
} IlFn;

static bool
il_prepare(Graph *g, const Node *n, bool fixed, IlFn *f)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    const Type *y = &ir_value(g, n->out[0])->type;
    int bits = 0;
    for (uint32_t i = 0; i < il_nin(n); i++) {
        const Type *t = &ir_value(g, n->in[i])->type;
        f->s[i] = t->q->scale[0];
        f->z[i] = t->q->zp[0];
        int64_t lo, hi;
        elem_range(t->elem, &lo, &hi);
        int b = qn_range_bits(lo, hi);
        bits = b > bits ? b : bits;
    }
    f->sy = y->q->scale[0];
    f->zy = y->q->zp[0];
    ir_clamp_range(g, n, y->q, &f->lo, &f->hi);
    switch (n->op) {
    case OP_LUT: {
        const Attr *ta = ir_attr(g, n, "table");
        int64_t hi;
        if (!ta || ta->kind != ATTR_TENSOR || type_numel_unchecked(&ta->t->type) != 256 ||
            ta->t->type.elem != y->elem)
            return false;
        f->table = ta->t;
        elem_range(ir_value(g, n->in[0])->type.elem, &f->tmin, &hi);
        return true;
    }
    case OP_REQUANTIZE:
        return !fixed || !qn_requantize_fixed_params(f->s[0], f->sy, &f->m);
    case OP_QMUL:
        return !fixed || !qn_qmul_fixed_params(f->s[0], f->s[1], f->sy, bits, &f->m);
    default:
        return !fixed || !qn_qadd_fixed_params(f->s[0], f->s[1], f->sy, bits, &f->pa);
    }
}

static int32_t
il_apply(const IlFn *f, const int32_t *v, bool fixed)
{
    int32_t a = v[0], b = v[1];
    switch (f->n->op) {
    case OP_LUT:
        return (int32_t)tensor_get_i(f->table, (size_t)(a - f->tmin));
    case OP_REQUANTIZE:
        return fixed ? qn_requantize_fixed(a, f->z[0], f->m, f->zy, f->lo, f->hi)
                     : qn_requantize(a, f->s[0], f->z[0], f->sy, f->zy, f->lo, f->hi);
    case OP_QADD:
        return fixed ? qn_qadd_fixed(a, f->z[0], b, f->z[1], &f->pa, f->zy, f->lo, f->hi)
                     : qn_qadd(a, f->s[0], f->z[0], b, f->s[1], f->z[1], f->sy, f->zy, f->lo, f->hi);
    case OP_QSUB:
        return fixed ? qn_qsub_fixed(a, f->z[0], b, f->z[1], &f->pa, f->zy, f->lo, f->hi)
                     : qn_qsub(a, f->s[0], f->z[0], b, f->s[1], f->z[1], f->sy, f->zy, f->lo, f->hi);
    default:
        return fixed ? qn_qmul_fixed(a, f->z[0], b, f->z[1], f->m, f->zy, f->lo, f->hi)
                     : qn_qmul(a, f->s[0], f->z[0], b, f->s[1], f->z[1], f->sy, f->zy, f->lo, f->hi);
    }
}

/* v's integer for the input integer xi: memoised per node (done[] cleared per input). */
static int32_t
il_eval(Graph *g, const IlChain *c, const IlFn *fn, ValueId v, int32_t xi, int32_t *memo, bool *done,
        bool fixed)
{
    if (v.id == c->x.id)
        return xi;
    const Tensor *k = scalar_const(g, v);
    if (k)
        return (int32_t)tensor_get_i(k, 0);
    int i = il_find(c, ir_value(g, v)->def);
    if (done[i])
        return memo[i];
    int32_t ops[2] = {0, 0};
    for (uint32_t j = 0; j < il_nin(fn[i].n); j++)
        ops[j] = il_eval(g, c, fn, fn[i].n->in[j], xi, memo, done, fixed);
    memo[i] = il_apply(&fn[i], ops, fixed);
    done[i] = true;
    return memo[i];
}

static bool
fold_one(Graph *g, NodeId root, bool fixed)
{
    Node *r = ir_node(g, root);
    if (!il_kind(r->op) || r->nout != 1 || r->nin < il_nin(r) ||
        !per_tensor8(&ir_value(g, r->out[0])->type))
        return false;
    /* a DAG of two or more nodes needs an operand computed by one of these ops: most roots
     * (a qadd of two convs) stop here, before the per-root table of blocked nodes */
    bool inner = false;
    for (uint32_t i = 0; i < il_nin(r) && !inner; i++) {
        NodeId d = ir_value(g, r->in[i])->def;
        inner = d.id && il_kind(ir_node(g, d)->op);
    }
    if (!inner)
        return false;
    Type shape = ir_value(g, r->out[0])->type;
    bool *blocked = xcalloc(g->nodes.len, sizeof *blocked);
    IlChain c;
    bool ok = false;
    for (int tries = 0; tries < IL_MAX; tries++) {
        memset(&c, 0, sizeof c);
        c.node[c.n++] = root;
        bool built = true;
        for (uint32_t i = 0; built && i < il_nin(r); i++)
            built = il_add(g, &c, r->in[i], &shape, blocked);
        int open = built ? il_open(g, &c) : -1;
        if (!built || open < 0) {
            ok = built && c.has_x && c.n >= 2;
            break;
        }
        blocked[c.node[open].id] = true; /* read elsewhere: it stays, as the DAG's input */
    }
    free(blocked);
    if (!ok)
        return false;
    IlFn fn[IL_MAX];
    for (uint32_t i = 0; i < c.n; i++)
        if (!il_prepare(g, ir_node(g, c.node[i]), fixed, &fn[i]))
            return false;
    const Type *xt = &ir_value(g, c.x)->type;
    int64_t smin, smax, n256 = 256;
    elem_range(xt->elem, &smin, &smax);
    Type tt = type_make(shape.elem, 1, &n256);
    Tensor *t = ir_tensor_new(g->m, &tt);
    if (!t)
        return false;
    for (int i = 0; i < 256; i++) {
        int32_t memo[IL_MAX];
        bool done[IL_MAX] = {false};
        int32_t v = il_eval(g, &c, fn, ir_node(g, root)->out[0], (int32_t)(smin + i), memo, done, fixed);
        tensor_set_i(t, (size_t)i, v);
    }
    ValueId x = c.x, y = ir_node(g, root)->out[0];
    NodeId l = ir_add_node(g, OP_LUT, 1, &x, 1, ir_node(g, root)->loc);
    ir_set_attr_tensor(g, l, "table", t);
    for (uint32_t i = 0; i < c.n; i++)
        ir_node(g, c.node[i])->dead = true;
    ir_set_result(g, l, 0, y);
    return true;
}

bool
pass_int_lut(PassCtx *pc, Graph *g)
{
    bool changed = false;
    bool fixed = pc->opt && pc->opt->requant_fixed;
    ir_fill_uses(g);
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || !il_kind(n->op) || pass_keep_float(pc, n))
            continue;
        if (fold_one(g, (NodeId){i}, fixed)) {
            changed = true;
            ir_fill_uses(g);
        }
    }
    return changed;
}
