/* float_patterns.c: the written-out Gelu and LayerNorm of transformer exports become the fused
 * ops, so that the float island runs one vector kernel (lower/float_math.c, float_norm.c) and an
 * 8-bit Gelu between a dequantize and a quantize becomes a table (lut) instead of five passes
 * over memory.
 *   gelu (erf):  x * 0.5 * (1 + erf(x / sqrt(2)))               => gelu x
 *                (any association of the three factors; x * (1 / sqrt(2)) for the division)
 *   gelu (tanh): x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
 *                                                               => gelu x, approximate="tanh"
 *                (x^3 as pow(x, 3), (x * x) * x or x * (x * x))
 *   layernorm:   d = x - reduce_mean(x, A); v = reduce_mean(d^2, A)   (d^2: pow(d, 2) or d * d)
 *                y = d / sqrt(v + eps) [* gamma] [+ beta]           => layernorm x, gamma, beta,
 *                                                                      axis=min(A), epsilon=eps
 *                A the trailing axes, keepdims=1; gamma, beta broadcasting to the normalized
 *                shape (no gamma: a constant of ones).
 * Only exactly that math: every constant equal to its value (relative 1e-6, so the f32 and f64
 * spellings of sqrt(2) both match), every intermediate used only inside the pattern, all f32.
 * The fused op rounds differently from the five or nine f32 operations it replaces (its own
 * definition, docs/numerics.md), within a few ulp.
 * needs: nothing.  keeps: the result value and its name.  leaves stale: uses. */
#include "pass.h"

#include <math.h>
#include <string.h>

static bool
near(double v, double want)
{
    return fabs(v - want) <= 1e-6 * fabs(want);
}

static bool
is_const(Graph *g, ValueId v, double want)
{
    double d;
    return qm_const_scalar(g, v, &d) && near(d, want);
}

/* a live, all-f32 node of op defining v and used only by `user` (NULL: any single user) */
static Node *
inner(Graph *g, ValueId v, OpKind op, const Node *user)
{
    Node *d = qm_def_op(g, v, op);
    if (!d || ir_value(g, v)->type.elem != ET_F32 || ir_is_graph_output(g, v))
        return NULL;
    Node *u = qm_only_user(g, v, NULL);
    return u && (!user || u == user) ? d : NULL;
}

/* operand of the binary node n that is not `other` (by value); VNONE if none or both */
static ValueId
other_operand(const Node *n, ValueId other)
{
    if (n->in[0].id == other.id && n->in[1].id != other.id)
        return n->in[1];
    if (n->in[1].id == other.id && n->in[0].id != other.id)
        return n->in[0];
    return VNONE;
}

/* the operand of commutative n that is the scalar constant `want`: the other one */
static ValueId
with_const(Graph *g, const Node *n, double want)
{
    for (int i = 0; i < 2; i++)
        if (is_const(g, n->in[i], want))
            return n->in[1 - i];
    return VNONE;
}

/* the nodes a match covers, marked dead when it is replaced */
typedef struct Kill {
    Node *n[16];
    int k;
} Kill;

static Node *
keep(Kill *kl, Node *n)
{
    if (n && kl->k < 16)
        kl->n[kl->k++] = n;
    return n;
}

/* x^3 written as pow(x, 3), (x * x) * x or x * (x * x): x, else VNONE */
static ValueId
cube_of(Graph *g, ValueId v, const Node *user, Kill *kl)
{
    Node *p = inner(g, v, OP_POW, user);
    if (p)
        return is_const(g, p->in[1], 3.0) && keep(kl, p) ? p->in[0] : VNONE;
    Node *m = inner(g, v, OP_MUL, user);
    if (!m)
        return VNONE;
    for (int i = 0; i < 2; i++) {
        Node *sq = inner(g, m->in[i], OP_MUL, m);
        if (sq && sq->in[0].id == sq->in[1].id && sq->in[0].id == m->in[1 - i].id) {
            keep(kl, m);
            keep(kl, sq);
            return sq->in[0];
        }
    }
    return VNONE;
}

/* a = 1 + erf(x / sqrt(2)) or 1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)) used by `user`: x */
static ValueId
gelu_arg(Graph *g, ValueId a, const Node *user, bool *tanh_form, Kill *kl)
{
    Node *add = keep(kl, inner(g, a, OP_ADD, user));
    if (!add)
        return VNONE;
    ValueId t = with_const(g, add, 1.0);
    Node *e = t.id ? keep(kl, inner(g, t, OP_ERF, add)) : NULL;
    if (e) {
        *tanh_form = false;
        Node *d = keep(kl, inner(g, e->in[0], OP_DIV, e));
        if (d)
            return is_const(g, d->in[1], sqrt(2.0)) ? d->in[0] : VNONE;
        Node *m = keep(kl, inner(g, e->in[0], OP_MUL, e));
        return m ? with_const(g, m, sqrt(0.5)) : VNONE;
    }
    Node *th = t.id ? keep(kl, inner(g, t, OP_TANH, add)) : NULL;
    Node *m2 = th ? keep(kl, inner(g, th->in[0], OP_MUL, th)) : NULL;
    ValueId s = m2 ? with_const(g, m2, sqrt(2.0 / 3.14159265358979323846)) : VNONE;
    Node *a1 = s.id ? keep(kl, inner(g, s, OP_ADD, m2)) : NULL;
    if (!a1)
        return VNONE;
    *tanh_form = true;
    for (int i = 0; i < 2; i++) {
        Node *m1 = inner(g, a1->in[i], OP_MUL, a1);
        ValueId c = m1 ? with_const(g, m1, 0.044715) : VNONE;
        if (c.id && cube_of(g, c, m1, kl).id == a1->in[1 - i].id) {
            keep(kl, m1);
            return a1->in[1 - i];
        }
    }
    return VNONE;
}

/* Replace the pattern ending at node nid (result y) by op(in): the new node defines y; the
 * nodes of kl die. */
static NodeId
replace_by(Graph *g, NodeId nid, OpKind op, const ValueId *in, uint32_t nin, Kill *kl)
{
    for (int i = 0; i < kl->k; i++)
        kl->n[i]->dead = true;
    Node *n = ir_node(g, nid);
    ValueId y = n->out[0];
    Loc loc = n->loc;
    n->dead = true;
    NodeId r = ir_add_node(g, op, nin, in, 1, loc);
    ir_set_result(g, r, 0, y);
    return r;
}

/* n = x * 0.5 * (1 + f(x)) in any association of its three factors */
static bool
fuse_gelu(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    if (n->op != OP_MUL || ir_value(g, n->out[0])->type.elem != ET_F32)
        return false;
    ValueId f[3];
    Node *sub = NULL;
    for (int i = 0; i < 2 && !sub; i++) {
        sub = inner(g, n->in[i], OP_MUL, n);
        if (sub) {
            f[0] = sub->in[0];
            f[1] = sub->in[1];
            f[2] = n->in[1 - i];
        }
    }
    if (!sub)
        return false;
    int half = -1;
    for (int i = 0; i < 3; i++)
        if (is_const(g, f[i], 0.5))
            half = i;
    if (half < 0)
        return false;
    ValueId a = f[(half + 1) % 3], b = f[(half + 2) % 3];
    for (int s = 0; s < 2; s++) {
        ValueId add = s ? b : a, x = s ? a : b;
        Node *user = add.id == n->in[0].id || add.id == n->in[1].id ? n : sub;
        bool tanh_form = false;
        Kill kl = {.k = 0};
        keep(&kl, sub);
        if (!x.id || gelu_arg(g, add, user, &tanh_form, &kl).id != x.id)
            continue;
        NodeId r = replace_by(g, nid, OP_GELU, &x, 1, &kl);
        if (tanh_form)
            ir_set_attr_string(g, r, "approximate", "tanh");
        return true;
    }
    return false;
}

/* axes of reduce_mean n normalised: true if they are the trailing k axes with keepdims=1 */
static bool
trailing_axes(Graph *g, const Node *n, int rank, int *first)
{
    int64_t ax[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "axes", ax, IR_MAX_RANK);
    if (k <= 0 || ir_attr_int(g, n, "keepdims", 1) != 1)
        return false;
    bool seen[IR_MAX_RANK] = {0};
    for (int i = 0; i < k; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
        if (a < 0 || a >= rank || seen[a])
            return false;
        seen[a] = true;
    }
    for (int a = rank - k; a < rank; a++)
        if (!seen[a])
            return false;
    *first = rank - k;
    return true;
}

/* v: an f32 constant broadcasting to the shape `tail` alone (right-aligned, rank <= tail's) */
static bool
affine_param(Graph *g, ValueId v, const Type *tail)
{
    const Type *t = &ir_value(g, v)->type;
    if (!ir_const_of(g, v) || t->elem != ET_F32 || t->q || t->rank > tail->rank)
        return false;
    for (int j = 0; j < t->rank; j++) {
        int64_t td = tail->dims[tail->rank - t->rank + j];
        if (t->dims[j] != td && t->dims[j] != 1)
            return false;
    }
    return true;
}

/* n = d / sqrt(reduce_mean(d^2) + eps), d = x - reduce_mean(x) [then * gamma, + beta] */
static bool
fuse_layernorm(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    if (n->op != OP_DIV || ir_value(g, n->out[0])->type.elem != ET_F32)
        return false;
    Node *d = qm_def_op(g, n->in[0], OP_SUB);
    Node *sq = inner(g, n->in[1], OP_SQRT, n);
    Node *e = sq ? inner(g, sq->in[0], OP_ADD, sq) : NULL;
    if (!d || !e || ir_is_graph_output(g, n->in[0]))
        return false;
    ValueId x = d->in[0], dv = n->in[0];
    const Type *xt = &ir_value(g, x)->type;
    Node *m = inner(g, d->in[1], OP_REDUCE_MEAN, d);
    int a0, a1;
    if (xt->elem != ET_F32 || !m || m->in[0].id != x.id || !trailing_axes(g, m, xt->rank, &a0))
        return false;
    double eps = 0;
    ValueId vv = VNONE;
    for (int i = 0; i < 2 && !vv.id; i++)
        if (qm_const_scalar(g, e->in[i], &eps))
            vv = e->in[1 - i];
    Node *v = vv.id ? inner(g, vv, OP_REDUCE_MEAN, e) : NULL;
    if (!v || !trailing_axes(g, v, xt->rank, &a1) || a1 != a0 || !(eps >= 0))
        return false;
    Node *p = qm_def_op(g, v->in[0], OP_POW);
    if (p ? !(p->in[0].id == dv.id && is_const(g, p->in[1], 2.0))
          : !((p = qm_def_op(g, v->in[0], OP_MUL)) && p->in[0].id == dv.id && p->in[1].id == dv.id))
        return false;
    /* d's uses: the division and the square (pow once, or mul twice) */
    if (qm_only_user(g, v->in[0], NULL) != v ||
        ir_num_uses(g, dv) != (p->op == OP_MUL ? 3u : 2u))
        return false;
    /* optional * gamma, + beta (f32 constants broadcasting to the normalized shape alone) */
    Type tail = type_make(ET_F32, xt->rank - a0, xt->dims + a0);
    ValueId ins[3] = {x, VNONE, VNONE};
    Node *gm = qm_only_user(g, n->out[0], NULL), *bt = NULL;
    gm = gm && gm->op == OP_MUL && !ir_is_graph_output(g, n->out[0]) ? gm : NULL;
    ins[1] = gm ? other_operand(gm, n->out[0]) : VNONE;
    if (!ins[1].id || !affine_param(g, ins[1], &tail)) {
        gm = NULL;
        ins[1] = VNONE;
    } else {
        bt = qm_only_user(g, gm->out[0], NULL);
        bt = bt && bt->op == OP_ADD && !ir_is_graph_output(g, gm->out[0]) ? bt : NULL;
        ins[2] = bt ? other_operand(bt, gm->out[0]) : VNONE;
        if (!ins[2].id || !affine_param(g, ins[2], &tail)) {
            bt = NULL;
            ins[2] = VNONE;
        }
    }
    NodeId last = bt ? qm_id(g, bt) : gm ? qm_id(g, gm) : nid;
    Kill kl = {.k = 0};
    Node *chain[] = {d, m, sq, e, v, p, gm ? n : NULL, bt ? gm : NULL};
    for (size_t i = 0; i < sizeof chain / sizeof chain[0]; i++)
        keep(&kl, chain[i]);
    if (!ins[1].id) {
        /* node pointers move when a node is added: kill first */
        for (int i = 0; i < kl.k; i++)
            kl.n[i]->dead = true;
        kl.k = 0;
        Loc loc = ir_node(g, nid)->loc;
        Tensor *ones = ir_tensor_new(g->m, &tail);
        for (size_t i = 0; i < type_numel_unchecked(&tail); i++)
            ((float *)ones->data)[i] = 1.0f;
        ins[1] = ir_add_const(g, NULL, ones, loc);
    }
    NodeId r = replace_by(g, last, OP_LAYERNORM, ins, ins[2].id ? 3 : 2, &kl);
    ir_set_attr_int(g, r, "axis", a0);
    ir_set_attr_float(g, r, "epsilon", (float)eps);
    return true;
}

bool
pass_float_patterns(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        if (n->op == OP_MUL && fuse_gelu(g, (NodeId){i}))
            changed = true;
        else if (n->op == OP_DIV && fuse_layernorm(g, (NodeId){i}))
            changed = true;
        if (changed)
            qm_uses(g);
    }
    return changed;
}
