/* plan.c: the build plan of a graph (plan.h).
 *
 * Every value gets a home: a graph input buffer, a graph output buffer (a node result that is a
 * graph output is written there directly), a constant global (const nodes, materialised only
 * when a kernel reads them at run time), or an offset in the one workspace, planned by liveness
 * (memplan.c). A node may also ask for private scratch (im2col, GEMM staging), which lives only
 * during its step. The activation layout plan (which values are stored NHWC, layout.c) and the
 * residual adds fused into a conv's epilogue (cg_residual_add) are decided here too, before any
 * code is emitted, because they change which steps exist and what each one reads. */
#include "codegen/plan/plan.h"

#include "codegen/lower/qconv.h"

#include <stdlib.h>
#include <string.h>

/* The plan's arrays: a failure is reported by the caller after it freed the others (counted
 * by the allocation-failure test hook like every library allocation). */
static void *
plan_calloc(size_t n, size_t size)
{
    return try_calloc(n, size);
}

void
cg_plan_free(CgPlan *p)
{
    free(p->fuse);
    free(p->fuse_other);
    free(p->fused_away);
    free(p->chain_next);
    free(p->se);
    free(p->se_of);
    free(p->view);
    free(p->uses);
    free(p->nhwc);
    free(p->loc);
    free(p->reqs);
    free(p->scratch_req);
    free(p->steps);
    memset(p, 0, sizeof *p);
}

/* Readers of every value, then the qadds fused into the conv before them:
 * fuse[conv] = the qadd, whose own step disappears. */
static void
plan_fusion(Kb *k, CgPlan *p)
{
    Graph *g = k->g;
    uint32_t nnodes = g->nodes.len;
    for (uint32_t i = 1; i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        for (uint32_t a = 0; !n->dead && a < n->nin; a++)
            p->uses[n->in[a].id]++;
    }
    for (uint32_t j = 0; j < g->outputs.len; j++)
        p->uses[g->outputs.data[j].id]++;
    for (uint32_t i = 1; i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        Node *q = n->dead || p->fused_away[i] ? NULL
                                              : cg_residual_add(k, n, p->uses, &p->fuse_other[i]);
        if (q) {
            p->fuse[i] = q;
            p->fused_away[q - g->nodes.data] = 1;
        }
    }
}

/* The float element-wise chains (plan.h): greedily forward from each node in order; user[v]
 * is v's single reader (0: none or several, or a graph output). False if out of memory. */
static bool
plan_chains(Kb *k, CgPlan *p)
{
    Graph *g = k->g;
    uint32_t nnodes = g->nodes.len, *user = plan_calloc(g->values.len + 1, sizeof *user);
    if (!user)
        return false;
    for (uint32_t i = 1; i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        for (uint32_t a = 0; !n->dead && a < n->nin; a++)
            user[n->in[a].id] = p->uses[n->in[a].id] == 1 ? i : 0;
    }
    for (uint32_t i = 1; i < nnodes; i++) {
        Node *h = ir_node(g, (NodeId){i});
        if (h->dead || p->fused_away[i] || p->fuse[i] || p->se_of[i] || h->nout != 1 ||
            !(cg_chain_qdq(g, h, OP_DEQUANTIZE) || cg_chain_member(k, h, h->in[0])))
            continue;
        uint32_t cur = i, ops = h->op != OP_DEQUANTIZE, len = 1;
        for (;;) {
            Node *c = ir_node(g, (NodeId){cur});
            uint32_t u = user[c->out[0].id];
            Node *un = u ? ir_node(g, (NodeId){u}) : NULL;
            bool tail = un && cg_chain_qdq(g, un, OP_QUANTIZE);
            if (!un || p->fused_away[u] || p->fuse[u] || p->se_of[u] ||
                (!tail && !cg_chain_member(k, un, c->out[0])) ||
                !type_shape_equal(&ir_value(g, un->out[0])->type, &ir_value(g, h->out[0])->type))
                break;
            p->chain_next[cur] = u;
            cur = u;
            len++;
            ops += !tail;
            if (tail)
                break;
        }
        if (len < 2 || ops < 1) {
            for (uint32_t c = i, nx; c; c = nx) {
                nx = p->chain_next[c];
                p->chain_next[c] = 0;
            }
            continue;
        }
        p->fuse[i] = ir_node(g, (NodeId){cur});
        for (uint32_t c = p->chain_next[i]; c; c = p->chain_next[c])
            p->fused_away[c] = 1;
    }
    free(user);
    return true;
}

/* A view: a node whose result has the same bytes as its operand (reshape, flatten, squeeze,
 * unsqueeze, identity: lower/layout.c would copy them unchanged) takes no step and no buffer;
 * its result lives where its operand does (view_loc). Not when the result is a graph output
 * (its own buffer) or the operand a constant, nor inside a fusion. Values are written once, by
 * the step that produces them, so the shared bytes never change while either is read. */
static bool
is_view(Graph *g, const CgPlan *p, uint32_t i)
{
    Node *n = ir_node(g, (NodeId){i});
    switch (n->op) {
    case OP_IDENTITY: case OP_RESHAPE: case OP_FLATTEN: case OP_SQUEEZE: case OP_UNSQUEEZE:
        break;
    default:
        return false;
    }
    if (n->nout != 1 || p->fuse[i] || p->chain_next[i] || p->loc[n->in[0].id].kind == CG_LOC_CONST)
        return false;
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    if (x->elem != y->elem || type_numel_unchecked(x) != type_numel_unchecked(y))
        return false;
    return !ir_is_graph_output(g, n->out[0]);
}

/* The home of value v when a view produces it: its operand's (through chains of views). */
static void
view_loc(Graph *g, CgPlan *p, ValueId v)
{
    if (!v.id || p->loc[v.id].kind != CG_LOC_NONE)
        return;
    NodeId d = ir_value(g, v)->def;
    if (!d.id || !p->view[d.id])
        return;
    ValueId x = ir_node(g, d)->in[0];
    view_loc(g, p, x);
    p->loc[v.id] = p->loc[x.id];
}

/* Homes of inputs and constants, the steps and their scratch; false if a node is not
 * supported. */
static bool
plan_steps(Kb *k, CgPlan *p)
{
    Graph *g = k->g;
    uint32_t nnodes = g->nodes.len;
    for (uint32_t i = 0; i < g->inputs.len; i++)
        p->loc[g->inputs.data[i].id] = (CgLoc){CG_LOC_IN, i, NULL};
    for (uint32_t i = 1; i < nnodes; i++) {
        Node *n = ir_node(g, (NodeId){i});
        if (n->dead)
            continue;
        if (n->op == OP_CONST) {
            p->loc[n->out[0].id] = (CgLoc){CG_LOC_CONST, 0, NULL};
            continue;
        }
        if (p->fused_away[i])
            continue;
        if (is_view(g, p, i)) {
            p->view[i] = 1;
            continue;
        }
        p->steps[p->nsteps] = i;
        int64_t s = p->se_of[i] ? p->se[p->se_of[i] - 1].scratch : cg_node_scratch(k, n);
        if (s < 0)
            return false;
        if (s > 0) {
            p->reqs[p->nreq] = (CgMemReq){s, (int32_t)p->nsteps, (int32_t)p->nsteps, 0};
            p->scratch_req[p->nsteps] = (int64_t)p->nreq++ + 1;
        }
        p->nsteps++;
    }
    return true;
}

/* Homes of the node results (graph outputs in place, the rest in the workspace), their live
 * ranges, then the workspace offsets. */
static bool
plan_buffers(Kb *k, CgPlan *p)
{
    Graph *g = k->g;
    for (uint32_t j = 0; j < g->outputs.len; j++) {
        CgLoc *l = &p->loc[g->outputs.data[j].id];
        if (l->kind == CG_LOC_NONE)
            *l = (CgLoc){CG_LOC_OUT, j, NULL};
    }
    for (uint32_t s = 0; s < p->nsteps; s++) {
        Node *n = ir_node(g, (NodeId){p->steps[s]});
        Node *on = cg_plan_step_out(p, g, s); /* whose results this step writes */
        for (uint32_t r = 0; r < on->nout; r++) {
            CgLoc *l = &p->loc[on->out[r].id];
            if (l->kind != CG_LOC_NONE)
                continue;
            p->reqs[p->nreq] = (CgMemReq){cg_value_bytes(g, on->out[r]), (int32_t)s, (int32_t)s, 0};
            *l = (CgLoc){CG_LOC_WS, (int64_t)p->nreq++, NULL};
        }
        ValueId sev[CG_SE_MAX * 4];
        bool sest[CG_SE_MAX * 4];
        uint32_t se = p->se_of[p->steps[s]], nse = se ? cg_se_inputs(k, &p->se[se - 1], sev, sest) : 0;
        for (uint32_t a = 0; a <= (se ? nse : n->nin); a++) {
            ValueId v = se && a < nse ? sev[a]
                        : se          ? (ValueId){0}
                        : a < n->nin  ? n->in[a]
                        : on != n     ? on->in[p->fuse_other[p->steps[s]]]
                                      : (ValueId){0};
            view_loc(g, p, v);
            CgLoc *l = &p->loc[v.id];
            if (v.id && l->kind == CG_LOC_WS)
                p->reqs[l->index].last = (int32_t)s;
        }
    }
    for (uint32_t j = 0; j < g->outputs.len; j++) {
        CgLoc *l = &p->loc[g->outputs.data[j].id];
        if (l->kind == CG_LOC_WS)
            p->reqs[l->index].last = (int32_t)p->nsteps;
    }
    p->workspace = cg_memplan(p->reqs, p->nreq);
    return p->workspace >= 0;
}

CgPlanStatus
cg_plan_build(Kb *k, CgPlan *p)
{
    Graph *g = k->g;
    uint32_t nval = g->values.len, nnodes = g->nodes.len;
    memset(p, 0, sizeof *p);
    p->loc = plan_calloc(nval ? nval : 1, sizeof *p->loc);
    p->reqs = plan_calloc((size_t)nval + nnodes + 1, sizeof *p->reqs);
    p->scratch_req = plan_calloc(nnodes ? nnodes : 1, sizeof *p->scratch_req);
    p->steps = plan_calloc(nnodes ? nnodes : 1, sizeof *p->steps);
    if (!(p->loc && p->reqs && p->scratch_req && p->steps)) {
        cg_plan_free(p);
        return CG_PLAN_OOM_VALUES;
    }
    p->nhwc = cg_layout_plan(k);
    k->nhwc = p->nhwc;
    p->fuse = plan_calloc(nnodes ? nnodes : 1, sizeof *p->fuse);
    p->fuse_other = plan_calloc(nnodes ? nnodes : 1, sizeof *p->fuse_other);
    p->fused_away = plan_calloc(nnodes ? nnodes : 1, 1);
    p->uses = plan_calloc(nval ? nval : 1, sizeof *p->uses);
    p->chain_next = plan_calloc(nnodes ? nnodes : 1, sizeof *p->chain_next);
    p->view = plan_calloc(nnodes ? nnodes : 1, 1);
    if (!(p->fuse && p->fuse_other && p->fused_away && p->uses && p->chain_next && p->view)) {
        cg_plan_free(p);
        k->nhwc = NULL;
        return CG_PLAN_OOM_NODES;
    }
    plan_fusion(k, p);
    if (!cg_plan_se(k, p) || !plan_chains(k, p)) {
        cg_plan_free(p);
        k->nhwc = NULL;
        return CG_PLAN_OOM_NODES;
    }
    if (!plan_steps(k, p) || !plan_buffers(k, p)) {
        cg_plan_free(p);
        k->nhwc = NULL;
        return CG_PLAN_FAIL;
    }
    return CG_PLAN_OK;
}
