/* se.c: squeeze-excitation blocks as one step of the plan (plan.h, CgSe).
 *
 * MobileNetV3's and EfficientNet's SE block is a global average pool of a feature map x, two
 * 1x1 convolutions on the pooled [N, C, 1, 1] vector with an activation after each, and the
 * channel-wise product of x with the result. Run node by node that is five or six steps, four
 * of them on a few hundred bytes, and in a QAT export a dequantize of the whole of x before
 * the product. The group makes it one step: the small values live in the step's scratch, x is
 * read by the pool and by the scale, the result written once, and a float scale (dequantize ->
 * mul -> quantize) is one float chain with the per-channel factor as a run-time operand
 * (lower/float_chain.c), so the dequantized x never reaches memory.
 *
 * The group is found on the data flow alone: a head (qavgpool, qreduce_mean) from a rank-4 x to
 * a small value, the small nodes after it that read only constants and members' results (a
 * SiLU's sigmoid and mul both read the conv before them), then the scale; every member's result
 * is read only inside the group. Each member keeps its own emitter, so the step computes exactly what the separate
 * steps did (the same reference semantics, bit for bit). */
#include "codegen/plan/plan.h"

#include "codegen/lower/lower.h"

#include <stdlib.h>
#include <string.h>

#define SE_SMALL_MAX ((int64_t)1 << 16)

/* [N, C', 1, ...] or [N, C'] with N the feature map's batch and at most SE_SMALL_MAX elements */
static bool
small_value(Graph *g, ValueId v, int64_t batch)
{
    const Type *t = &ir_value(g, v)->type;
    if (t->rank < 2 || t->dims[0] != batch || type_numel_unchecked(t) > (uint64_t)SE_SMALL_MAX)
        return false;
    for (int d = 2; d < t->rank; d++)
        if (t->dims[d] != 1)
            return false;
    return true;
}

typedef struct Finder {
    Kb *k;
    CgPlan *p;
    uint32_t *user; /* per ValueId: its one reader, 0 when none or several or a graph output */
} Finder;

/* whether value v is the result of a member of e */
static bool
in_group(Graph *g, const CgSe *e, ValueId v)
{
    NodeId d = v.id ? ir_value(g, v)->def : (NodeId){0};
    for (uint32_t j = 0; d.id && j < e->n; j++)
        if (e->node[j] == d.id)
            return true;
    return false;
}

/* whether node u, which reads a member's result, can join group e as a small node: its other
 * operands constants or members' results, at most 3 operands (so a group reads at most
 * 1 + 3 x CG_SE_MAX values, the bound of cg_se_inputs' array), its one result small */
static bool
small_member(Finder *f, const CgSe *e, Node *u, int64_t batch)
{
    Graph *g = f->k->g;
    uint32_t id = (uint32_t)(u - g->nodes.data);
    if (u->dead || u->nout != 1 || u->nin > 3 || f->p->fused_away[id] || f->p->fuse[id] ||
        cg_node_may_fail(g, u) || !small_value(g, u->out[0], batch) || e->n + 2 > CG_SE_MAX)
        return false;
    for (uint32_t i = 0; i < u->nin; i++)
        if (u->in[i].id && !in_group(g, e, u->in[i]) && !ir_const_of(g, u->in[i]))
            return false;
    return true;
}

/* the scale, u, reading small value s (a member's result) and x: qmul(s, x), or mul(s,
 * dequantize(x)) whose one reader is a static quantize; fills e's last member (and dq, q) */
static bool
scale_member(Finder *f, CgSe *e, Node *u, ValueId x)
{
    Graph *g = f->k->g;
    CgPlan *p = f->p;
    uint32_t id = (uint32_t)(u - g->nodes.data);
    if (u->dead || u->nin != 2 || u->nout != 1 || p->fused_away[id] || p->fuse[id] ||
        !type_shape_equal(&ir_value(g, u->out[0])->type, &ir_value(g, x)->type))
        return false;
    bool first = in_group(g, e, u->in[0]);
    ValueId s = first ? u->in[0] : u->in[1], o = first ? u->in[1] : u->in[0];
    if (!in_group(g, e, s) || in_group(g, e, o))
        return false;
    if (u->op == OP_QMUL && o.id == x.id) {
        e->node[e->n++] = id;
        return true;
    }
    /* the float chain reads the factor of plane (n, c) at n * C + c: s is [N, C, 1, 1] */
    const Type *st = &ir_value(g, s)->type, *xt = &ir_value(g, x)->type;
    if (u->op != OP_MUL || st->elem != ET_F32 || st->rank != 4 || st->dims[1] != xt->dims[1] ||
        p->uses[o.id] != 1 || cg_value_nhwc(f->k, x))
        return false;
    NodeId dq = ir_value(g, o)->def, qn = {f->user[u->out[0].id]};
    if (!dq.id || !qn.id || p->fused_away[dq.id] || p->fuse[dq.id] || p->fused_away[qn.id])
        return false;
    Node *d = ir_node(g, dq), *q = ir_node(g, qn);
    if (!cg_chain_qdq(g, d, OP_DEQUANTIZE) || d->in[0].id != x.id || !cg_chain_qdq(g, q, OP_QUANTIZE))
        return false;
    e->node[e->n++] = id;
    e->dq = dq.id;
    e->q = qn.id;
    return true;
}

/* every member's result is read only inside the group (and is no graph output) */
static bool
closed(Finder *f, const CgSe *e)
{
    Graph *g = f->k->g;
    for (uint32_t j = 0; j + 1 < e->n; j++) {
        ValueId v = ir_node(g, (NodeId){e->node[j]})->out[0];
        uint32_t readers = 0;
        for (uint32_t m = 0; m < e->n; m++) {
            Node *mn = ir_node(g, (NodeId){e->node[m]});
            for (uint32_t a = 0; a < mn->nin; a++)
                readers += mn->in[a].id == v.id;
        }
        if (readers != f->p->uses[v.id] || ir_is_graph_output(g, v))
            return false;
    }
    return true;
}

/* The group headed by node h, or false: the nodes after h in order that read a member's result
 * join as small nodes until the scale; a reader that is neither ends the search. */
static bool
find_group(Finder *f, uint32_t hid, CgSe *e)
{
    Graph *g = f->k->g;
    Node *h = ir_node(g, (NodeId){hid});
    memset(e, 0, sizeof *e);
    if (h->dead || (h->op != OP_QAVGPOOL && h->op != OP_QREDUCE_MEAN) || h->nout != 1)
        return false;
    ValueId x = h->in[0];
    const Type *xt = &ir_value(g, x)->type;
    if (xt->rank != 4 || !small_value(g, h->out[0], xt->dims[0]))
        return false;
    e->node[e->n++] = hid;
    for (uint32_t i = hid + 1; i < g->nodes.len; i++) {
        Node *u = ir_node(g, (NodeId){i});
        bool reads = false;
        for (uint32_t a = 0; !u->dead && a < u->nin; a++)
            reads = reads || in_group(g, e, u->in[a]);
        if (!reads)
            continue;
        if (small_member(f, e, u, xt->dims[0])) {
            e->node[e->n++] = i;
            continue;
        }
        return e->n >= 2 && scale_member(f, e, u, x) && closed(f, e);
    }
    return false;
}

/* scratch offsets: each member's result but the scale's, then each member's own scratch */
static bool
layout_scratch(Kb *k, CgSe *e)
{
    Graph *g = k->g;
    int64_t off = 0;
    for (uint32_t i = 0; i < e->n; i++) {
        Node *m = ir_node(g, (NodeId){e->node[i]});
        e->val_off[i] = -1;
        if (i + 1 < e->n) {
            e->val_off[i] = off;
            off += (cg_value_bytes(g, m->out[0]) + 63) / 64 * 64; /* small: no overflow */
        }
    }
    for (uint32_t i = 0; i < e->n; i++) {
        int64_t s = e->q && i + 1 == e->n ? 0 : cg_node_scratch(k, ir_node(g, (NodeId){e->node[i]}));
        if (s < 0)
            return false;
        e->scr_off[i] = s > 0 ? off : -1;
        off += (s + 63) / 64 * 64;
    }
    e->scratch = off;
    return true;
}

bool
cg_plan_se(Kb *k, CgPlan *p)
{
    Graph *g = k->g;
    uint32_t nnodes = g->nodes.len;
    Finder f = {k, p, try_calloc(g->values.len + 1, sizeof *f.user)};
    p->se_of = try_calloc(nnodes ? nnodes : 1, sizeof *p->se_of);
    if (!f.user || !p->se_of) {
        free(f.user);
        return false;
    }
    for (uint32_t i = 1; i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        for (uint32_t a = 0; !n->dead && a < n->nin; a++)
            f.user[n->in[a].id] = p->uses[n->in[a].id] == 1 ? i : 0;
    }
    for (uint32_t i = 1; i < nnodes; i++) {
        CgSe e;
        if (p->fused_away[i] || p->se_of[i] || !find_group(&f, i, &e) ||
            !layout_scratch(k, &e))
            continue;
        CgSe *grown = realloc(p->se, (p->nse + 1) * sizeof *p->se);
        if (!grown) {
            free(f.user);
            return false;
        }
        p->se = grown;
        p->se[p->nse++] = e;
        uint32_t step = e.q ? e.q : e.node[e.n - 1];
        for (uint32_t m = 0; m < e.n; m++)
            p->fused_away[e.node[m]] = 1;
        if (e.dq)
            p->fused_away[e.dq] = 1;
        p->fused_away[step] = 0;
        p->se_of[step] = p->nse;
    }
    free(f.user);
    return true;
}

uint32_t
cg_se_inputs(Kb *k, const CgSe *e, ValueId *v, bool *stat)
{
    Graph *g = k->g;
    uint32_t nv = 0;
    for (uint32_t i = 0; i <= e->n; i++) {
        /* the float scale's dequantize reads x first, then the members */
        uint32_t id = i == 0 ? e->dq : e->node[i - 1];
        if (!id)
            continue;
        Node *m = ir_node(g, (NodeId){id});
        for (uint32_t a = 0; a < m->nin; a++) {
            ValueId x = m->in[a];
            NodeId d = x.id ? ir_value(g, x)->def : (NodeId){0};
            bool inner = d.id == e->dq && e->dq;
            for (uint32_t j = 0; j < e->n && !inner; j++)
                inner = d.id == e->node[j];
            if (!x.id || inner)
                continue;
            bool st = cg_operand_static(k, m, a);
            uint32_t j = 0;
            while (j < nv && v[j].id != x.id)
                j++;
            if (j == nv) {
                v[nv] = x;
                stat[nv++] = st;
            } else {
                stat[j] = stat[j] && st;
            }
        }
    }
    return nv;
}
