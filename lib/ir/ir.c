/* ir.c: construction and editing of the graph IR: modules, values, nodes, attributes,
 * constants, use lists, compaction. Element types, qparams and tensors: types.c. */
#include "ir.h"

#include "numerics/fmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ops ---- */
#define SCALAR(f) f
#define NOSCALAR NULL
static const OpInfo op_tab[OP_COUNT] = {
    [OP_INVALID] = {"<invalid>", 0, 0, 0, 0, 0, NULL},
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, REF, LOWER, SCRATCH, STATIC,      \
           MLIR, VERIFY, LUT, FOLD, SUP, F32)                                                     \
    [OP_##E] = {NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, F32},
#include "ops.def"
#undef OP
};
#undef SCALAR
#undef NOSCALAR

const OpInfo *
op_info(OpKind k)
{
    return &op_tab[k < OP_COUNT ? k : OP_INVALID];
}

OpKind
op_from_name(const char *s, size_t n)
{
    for (int i = 1; i < OP_COUNT; i++)
        if (strlen(op_tab[i].name) == n && memcmp(op_tab[i].name, s, n) == 0)
            return (OpKind)i;
    return OP_INVALID;
}

/* ---- module ---- */
Module *
ir_module_create(qdqc_context *ctx, const char *filename)
{
    Module *m = xcalloc(1, sizeof *m);
    m->ctx = ctx;
    arena_init(&m->arena);
    intern_init(&m->strs);
    m->filename = intern_str(&m->strs, intern(&m->strs, filename ? filename : "<input>"));
    Graph *g = &m->g;
    g->m = m;
    g->name = intern(&m->strs, "main");
    Node n0 = {0};
    vec_push(&g->nodes, n0);
    Value v0 = {0};
    vec_push(&g->values, v0);
    return m;
}

static void
graph_free(Graph *g)
{
    vec_free(&g->nodes);
    vec_free(&g->values);
    vec_free(&g->inputs);
    vec_free(&g->outputs);
    free(g->use_start);
    free(g->uses);
    g->use_start = NULL;
    g->uses = NULL;
    free(g->name_taken);
    g->name_taken = NULL;
    g->name_taken_cap = 0;
    vec_free(&g->dimx);
}

void
ir_module_destroy(Module *m)
{
    if (!m)
        return;
    graph_free(&m->g);
    free(m->deferred_passes);
    intern_free(&m->strs);
    arena_free(&m->arena);
    free(m);
}

const char *
ir_value_name(const Graph *g, ValueId v)
{
    return ir_str(g, g->values.data[v.id].name);
}

/* ---- values ---- */
ValueId
ir_lookup_value(Graph *g, const char *name)
{
    uint32_t id = intern_lookup(&g->m->strs, name);
    if (!id)
        return VNONE;
    for (uint32_t i = 1; i < g->values.len; i++)
        if (g->values.data[i].name == id)
            return (ValueId){i};
    return VNONE;
}

static bool
name_taken(Graph *g, uint32_t id)
{
    return id < g->name_taken_cap && g->name_taken[id];
}

static void
mark_name_taken(Graph *g, uint32_t id)
{
    if (id >= g->name_taken_cap) {
        uint32_t cap = g->name_taken_cap ? g->name_taken_cap : 256;
        while (cap <= id)
            cap *= 2;
        g->name_taken = xrealloc(g->name_taken, cap);
        memset(g->name_taken + g->name_taken_cap, 0, cap - g->name_taken_cap);
        g->name_taken_cap = cap;
    }
    g->name_taken[id] = 1;
}

/* Sanitizer builds move the node and value arrays on every addition, so a Node or Value
 * pointer kept across ir_add_node/ir_add_value (a stale pointer: our bug) is reported by
 * ASan at once instead of only when the array happens to grow. */
#ifdef QDQC_STRESS_REALLOC
#define STRESS_MOVE(v)                                                              \
    do {                                                                            \
        size_t _bytes = (size_t)(v)->cap * sizeof(*(v)->data);                      \
        void *_p = xmalloc(_bytes);                                                 \
        memcpy(_p, (v)->data, (size_t)(v)->len * sizeof(*(v)->data));               \
        free((v)->data);                                                            \
        (v)->data = _p;                                                             \
    } while (0)
#else
#define STRESS_MOVE(v) ((void)0)
#endif

ValueId
ir_add_value(Graph *g, const char *name, const Type *t)
{
    uint32_t id = 0;
    if (name && *name) {
        id = intern(&g->m->strs, name);
        if (name_taken(g, id))
            id = 0;
    }
    if (!id) {
        const char *base = name && *name ? name : "t";
        char buf[512];
        do {
            snprintf(buf, sizeof buf, "%.400s.%u", base, ++g->name_counter);
            id = intern(&g->m->strs, buf);
        } while (name_taken(g, id));
    }
    mark_name_taken(g, id);
    Value v = {0};
    v.name = id;
    v.type = *t;
    vec_push(&g->values, v);
    STRESS_MOVE(&g->values);
    g->uses_valid = false;
    return (ValueId){g->values.len - 1};
}

ValueId
ir_add_input(Graph *g, const char *name, const Type *t)
{
    ValueId v = ir_add_value(g, name, t);
    ir_value(g, v)->is_input = true;
    ir_value(g, v)->def_index = g->inputs.len;
    vec_push(&g->inputs, v);
    return v;
}

NodeId
ir_add_node(Graph *g, OpKind op, uint32_t nin, const ValueId *in, uint32_t nout, Loc loc)
{
    Node n = {0};
    n.op = op;
    n.nin = nin;
    n.nout = nout;
    n.in = arena_alloc(&g->m->arena, (nin ? nin : 1) * sizeof(ValueId));
    if (in && nin)
        memcpy(n.in, in, nin * sizeof(ValueId));
    n.out = arena_alloc(&g->m->arena, (nout ? nout : 1) * sizeof(ValueId));
    n.loc = loc;
    vec_push(&g->nodes, n);
    STRESS_MOVE(&g->nodes);
    g->uses_valid = false;
    return (NodeId){g->nodes.len - 1};
}

void
ir_set_result(Graph *g, NodeId n, uint32_t i, ValueId v)
{
    Node *nd = ir_node(g, n);
    QDQC_ASSERT(i < nd->nout);
    nd->out[i] = v;
    Value *val = ir_value(g, v);
    val->def = n;
    val->def_index = i;
    val->is_input = false;
}

ValueId
ir_add_result(Graph *g, NodeId n, uint32_t i, const char *name, const Type *t)
{
    ValueId v = ir_add_value(g, name, t);
    ir_set_result(g, n, i, v);
    return v;
}

Node *
ir_def(Graph *g, ValueId v)
{
    if (!v.id)
        return NULL;
    Value *val = ir_value(g, v);
    return val->def.id ? ir_node(g, val->def) : NULL;
}

bool
ir_is_graph_output(const Graph *g, ValueId v)
{
    for (uint32_t k = 0; k < g->outputs.len; k++)
        if (g->outputs.data[k].id == v.id)
            return true;
    return false;
}

/* ---- attributes ---- */
static Attr *
attr_slot(Graph *g, NodeId nid, uint32_t name)
{
    Node *n = ir_node(g, nid);
    for (uint32_t i = 0; i < n->nattr; i++)
        if (n->attrs[i].name == name)
            return &n->attrs[i];
    Attr *na = arena_alloc(&g->m->arena, (n->nattr + 1) * sizeof(Attr));
    if (n->nattr)
        memcpy(na, n->attrs, n->nattr * sizeof(Attr));
    n->attrs = na;
    Attr *a = &n->attrs[n->nattr++];
    a->name = name;
    return a;
}

void
ir_set_attr(Graph *g, NodeId n, const Attr *src)
{
    Attr *a = attr_slot(g, n, src->name);
    *a = *src;
    Arena *ar = &g->m->arena;
    if (a->kind == ATTR_INTS)
        a->ints.v = arena_dup(ar, src->ints.v, src->ints.n * sizeof(int64_t));
    else if (a->kind == ATTR_FLOATS)
        a->floats.v = arena_dup(ar, src->floats.v, src->floats.n * sizeof(float));
}

void
ir_set_attr_int(Graph *g, NodeId n, const char *name, int64_t v)
{
    Attr *a = attr_slot(g, n, intern(&g->m->strs, name));
    a->kind = ATTR_INT;
    a->i = v;
}

void
ir_set_attr_float(Graph *g, NodeId n, const char *name, float v)
{
    Attr *a = attr_slot(g, n, intern(&g->m->strs, name));
    a->kind = ATTR_FLOAT;
    a->f = v;
}

void
ir_set_attr_ints(Graph *g, NodeId n, const char *name, const int64_t *v, uint32_t k)
{
    Attr *a = attr_slot(g, n, intern(&g->m->strs, name));
    a->kind = ATTR_INTS;
    a->ints.v = arena_dup(&g->m->arena, v, k * sizeof(int64_t));
    a->ints.n = k;
}

void
ir_set_attr_floats(Graph *g, NodeId n, const char *name, const float *v, uint32_t k)
{
    Attr *a = attr_slot(g, n, intern(&g->m->strs, name));
    a->kind = ATTR_FLOATS;
    a->floats.v = arena_dup(&g->m->arena, v, k * sizeof(float));
    a->floats.n = k;
}

void
ir_set_attr_string(Graph *g, NodeId n, const char *name, const char *s)
{
    uint32_t sid = intern(&g->m->strs, s);
    Attr *a = attr_slot(g, n, intern(&g->m->strs, name));
    a->kind = ATTR_STRING;
    a->s = sid;
}

void
ir_set_attr_tensor(Graph *g, NodeId n, const char *name, Tensor *t)
{
    Attr *a = attr_slot(g, n, intern(&g->m->strs, name));
    a->kind = ATTR_TENSOR;
    a->t = t;
}

const Attr *
ir_attr(const Graph *g, const Node *n, const char *name)
{
    uint32_t id = intern_lookup(&g->m->strs, name);
    if (!id)
        return NULL;
    for (uint32_t i = 0; i < n->nattr; i++)
        if (n->attrs[i].name == id)
            return &n->attrs[i];
    return NULL;
}

int64_t
ir_attr_int(const Graph *g, const Node *n, const char *name, int64_t dflt)
{
    const Attr *a = ir_attr(g, n, name);
    if (!a)
        return dflt;
    if (a->kind == ATTR_INT)
        return a->i;
    if (a->kind == ATTR_FLOAT)
        return (int64_t)a->f;
    return dflt;
}

float
ir_attr_float(const Graph *g, const Node *n, const char *name, float dflt)
{
    const Attr *a = ir_attr(g, n, name);
    if (!a)
        return dflt;
    if (a->kind == ATTR_FLOAT)
        return a->f;
    if (a->kind == ATTR_INT)
        return (float)a->i;
    return dflt;
}

int
ir_attr_ints(const Graph *g, const Node *n, const char *name, int64_t *out, int max)
{
    const Attr *a = ir_attr(g, n, name);
    if (!a)
        return -1;
    if (a->kind == ATTR_INT) {
        if (max > 0)
            out[0] = a->i;
        return 1;
    }
    if (a->kind != ATTR_INTS)
        return -1;
    for (uint32_t i = 0; i < a->ints.n && (int)i < max; i++)
        out[i] = a->ints.v[i];
    return (int)a->ints.n;
}

void
ir_clamp_range(const Graph *g, const Node *n, const QParams *q, int32_t *lo, int32_t *hi)
{
    *lo = q->qmin;
    *hi = q->qmax;
    int64_t cl[4];
    if (ir_attr_ints(g, n, "clamp", cl, 4) == 2) {
        *lo = (int32_t)(cl[0] > *lo ? cl[0] : *lo);
        *hi = (int32_t)(cl[1] < *hi ? cl[1] : *hi);
    }
}

const char *
ir_attr_string(const Graph *g, const Node *n, const char *name, const char *dflt)
{
    const Attr *a = ir_attr(g, n, name);
    if (!a || a->kind != ATTR_STRING)
        return dflt;
    return ir_str(g, a->s);
}

const Tensor *
ir_const_of(Graph *g, ValueId v)
{
    Node *d = ir_def(g, v);
    if (!d || d->op != OP_CONST)
        return NULL;
    const Attr *a = ir_attr(g, d, "value");
    return a && a->kind == ATTR_TENSOR ? a->t : NULL;
}

ValueId
ir_add_const(Graph *g, const char *name, Tensor *t, Loc loc)
{
    NodeId n = ir_add_node(g, OP_CONST, 0, NULL, 1, loc);
    ir_set_attr_tensor(g, n, "value", t);
    return ir_add_result(g, n, 0, name, &t->type);
}

/* ---- uses ---- */
void
ir_fill_uses(Graph *g)
{
    uint32_t nv = g->values.len;
    free(g->use_start);
    free(g->uses);
    g->use_start = NULL; /* an allocation failure below leaves the graph without uses, */
    g->uses = NULL;      /* not with pointers to freed arrays (unit.test_nomem) */
    g->uses_valid = false;
    uint32_t *cnt = xcalloc(nv + 1, sizeof(uint32_t));
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t k = 0; k < n->nin; k++)
            if (n->in[k].id)
                cnt[n->in[k].id]++;
    }
    for (uint32_t k = 0; k < g->outputs.len; k++)
        cnt[g->outputs.data[k].id]++;
    uint32_t *start = xcalloc(nv + 1, sizeof(uint32_t));
    uint32_t total = 0;
    for (uint32_t v = 0; v < nv; v++) {
        start[v] = total;
        total += cnt[v];
    }
    start[nv] = total;
    Use *uses = xcalloc(total ? total : 1, sizeof(Use));
    memset(cnt, 0, (nv + 1) * sizeof(uint32_t));
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t k = 0; k < n->nin; k++) {
            uint32_t v = n->in[k].id;
            if (v)
                uses[start[v] + cnt[v]++] = (Use){(NodeId){i}, k};
        }
    }
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        uint32_t v = g->outputs.data[k].id;
        uses[start[v] + cnt[v]++] = (Use){NNONE, k};
    }
    free(cnt);
    g->use_start = start;
    g->uses = uses;
    g->uses_valid = true;
}

uint32_t
ir_num_uses(Graph *g, ValueId v)
{
    QDQC_ASSERT(g->uses_valid);
    return g->use_start[v.id + 1] - g->use_start[v.id];
}

const Use *
ir_uses(Graph *g, ValueId v)
{
    QDQC_ASSERT(g->uses_valid);
    return g->uses + g->use_start[v.id];
}

void
ir_replace_all_uses(Graph *g, ValueId from, ValueId to)
{
    /* Graph outputs keep their names (they are the model's ABI): when `from` is an output and
     * `to` is an internal value, `to` takes over the name. */
    bool from_out = false, to_ext = ir_value(g, to)->is_input;
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        from_out |= g->outputs.data[k].id == from.id;
        to_ext |= g->outputs.data[k].id == to.id;
    }
    if (from_out && !to_ext) {
        uint32_t t = ir_value(g, from)->name;
        ir_value(g, from)->name = ir_value(g, to)->name;
        ir_value(g, to)->name = t;
    }
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t k = 0; k < n->nin; k++)
            if (n->in[k].id == from.id)
                n->in[k] = to;
    }
    for (uint32_t k = 0; k < g->outputs.len; k++)
        if (g->outputs.data[k].id == from.id)
            g->outputs.data[k] = to;
    g->uses_valid = false;
}

/* ---- compaction and topological order ---- */
/* ir_compact step 1: the nodes reachable backwards from the outputs are live. */
static void
compact_liveness(Graph *g, bool *nlive)
{
    bool *vlive = xcalloc(g->values.len, sizeof(bool));
    uint32_t *stack = xmalloc((g->values.len + 1) * sizeof(uint32_t));
    uint32_t sp = 0;
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        uint32_t v = g->outputs.data[k].id;
        if (v && !vlive[v]) {
            vlive[v] = true;
            stack[sp++] = v;
        }
    }
    while (sp) {
        uint32_t v = stack[--sp];
        uint32_t d = g->values.data[v].def.id;
        if (!d || nlive[d])
            continue;
        if (g->nodes.data[d].dead)
            qdqc_fatal(__FILE__, __LINE__, "a live value is defined by a node marked dead");
        nlive[d] = true;
        Node *n = &g->nodes.data[d];
        for (uint32_t k = 0; k < n->nin; k++) {
            uint32_t u = n->in[k].id;
            if (u && !vlive[u]) {
                vlive[u] = true;
                stack[sp++] = u;
            }
        }
        for (uint32_t k = 0; k < n->nout; k++)
            vlive[n->out[k].id] = true;
    }
    free(vlive);
    free(stack);
}

/* the live node defining operand u of a live node, or 0 */
static uint32_t
live_def(const Graph *g, const bool *nlive, uint32_t u)
{
    uint32_t d = u ? g->values.data[u].def.id : 0;
    return d && nlive[d] ? d : 0;
}

/* ir_compact step 2: the live nodes in stable topological order (ir_topo_order over the
 * operand edges between live nodes); false with a diagnostic at the first node left on a
 * cycle. */
static bool
compact_order(Graph *g, const bool *nlive, uint32_t *order, uint32_t *no)
{
    uint32_t nn = g->nodes.len;
    uint32_t *indeg = xcalloc(nn, sizeof(uint32_t));
    uint32_t *sstart = xcalloc(nn + 1, sizeof(uint32_t));
    for (uint32_t i = 1; i < nn; i++) {
        if (!nlive[i])
            continue;
        Node *n = &g->nodes.data[i];
        for (uint32_t k = 0; k < n->nin; k++) {
            uint32_t d = live_def(g, nlive, n->in[k].id);
            if (d) {
                indeg[i]++;
                sstart[d + 1]++;
            }
        }
    }
    for (uint32_t i = 0; i < nn; i++)
        sstart[i + 1] += sstart[i];
    uint32_t *succ = xmalloc((sstart[nn] + 1) * sizeof(uint32_t));
    uint32_t *fill = xcalloc(nn, sizeof(uint32_t));
    for (uint32_t i = 1; i < nn; i++) {
        if (!nlive[i])
            continue;
        Node *n = &g->nodes.data[i];
        for (uint32_t k = 0; k < n->nin; k++) {
            uint32_t d = live_def(g, nlive, n->in[k].id);
            if (d)
                succ[sstart[d] + fill[d]++] = i;
        }
    }
    *no = ir_topo_order(nn, nlive, indeg, sstart, succ, order);
    uint32_t nlive_count = 0;
    for (uint32_t i = 1; i < nn; i++)
        nlive_count += nlive[i];
    bool ok = *no == nlive_count;
    if (!ok) {
        /* report the first node left on a cycle */
        for (uint32_t i = 1; i < nn; i++)
            if (nlive[i] && indeg[i]) {
                node_error(g, &g->nodes.data[i], "graph has a cycle through this node");
                break;
            }
    }
    free(indeg);
    free(sstart);
    free(succ);
    free(fill);
    return ok;
}

/* ir_compact step 3: a new graph of the ordered nodes; values renumbered, inputs first in
 * input order, then results in node order. Replaces g. */
static void
compact_renumber(Graph *g, const uint32_t *order, uint32_t no)
{
    uint32_t *vmap = xcalloc(g->values.len, sizeof(uint32_t));
    Graph ng = {0};
    ng.m = g->m;
    ng.name = g->name;
    ng.name_counter = g->name_counter;
    ng.name_taken = g->name_taken;
    ng.name_taken_cap = g->name_taken_cap;
    g->name_taken = NULL;
    g->name_taken_cap = 0;
    ng.dimx = g->dimx; /* the symbolic dimensions stay (values refer to them by index) */
    g->dimx.data = NULL;
    g->dimx.len = g->dimx.cap = 0;
    Node n0 = {0};
    Value v0 = {0};
    vec_push(&ng.nodes, n0);
    vec_push(&ng.values, v0);
    for (uint32_t k = 0; k < g->inputs.len; k++) {
        uint32_t v = g->inputs.data[k].id;
        Value val = g->values.data[v];
        val.def_index = k;
        vec_push(&ng.values, val);
        vmap[v] = ng.values.len - 1;
        ValueId nid = {ng.values.len - 1};
        vec_push(&ng.inputs, nid);
    }
    for (uint32_t oi = 0; oi < no; oi++) {
        Node n = g->nodes.data[order[oi]];
        uint32_t newid = ng.nodes.len;
        for (uint32_t k = 0; k < n.nout; k++) {
            uint32_t v = n.out[k].id;
            Value val = g->values.data[v];
            val.def = (NodeId){newid};
            vec_push(&ng.values, val);
            vmap[v] = ng.values.len - 1;
        }
        vec_push(&ng.nodes, n);
    }
    for (uint32_t i = 1; i < ng.nodes.len; i++) {
        Node *n = &ng.nodes.data[i];
        for (uint32_t k = 0; k < n->nin; k++)
            n->in[k].id = vmap[n->in[k].id];
        for (uint32_t k = 0; k < n->nout; k++)
            n->out[k].id = vmap[n->out[k].id];
    }
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        ValueId o = {vmap[g->outputs.data[k].id]};
        vec_push(&ng.outputs, o);
    }
    free(vmap);
    graph_free(g);
    *g = ng;
}

bool
ir_compact(Graph *g)
{
    bool *nlive = xcalloc(g->nodes.len, sizeof(bool));
    uint32_t *order = xmalloc(g->nodes.len * sizeof(uint32_t));
    uint32_t no = 0;
    compact_liveness(g, nlive);
    bool ok = compact_order(g, nlive, order, &no);
    if (ok)
        compact_renumber(g, order, no);
    free(nlive);
    free(order);
    return ok;
}

/* ---- node diagnostics ---- */
static void
node_diag(Graph *g, const Node *n, qdqc_severity sev, const char *fmt, va_list ap)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%s: ", op_info(n->op)->name);
    sb_vprintf(&b, fmt, ap);
    char *s = sb_take(&b);
    Loc l = n->loc;
    if (!l.file)
        l.file = g->m->filename;
    /* ONNX locations already name the op type; text locations get the op name prefix. */
    diag_emit(g->m->ctx, sev, &l, "%s", l.line || !l.optype ? s : s + strlen(op_info(n->op)->name) + 2);
    free(s);
}

void
node_error(Graph *g, const Node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    node_diag(g, n, QDQC_SEV_ERROR, fmt, ap);
    va_end(ap);
}

void
node_remark(Graph *g, const Node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    node_diag(g, n, QDQC_SEV_REMARK, fmt, ap);
    va_end(ap);
}

void
node_warning(Graph *g, const Node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    node_diag(g, n, QDQC_SEV_WARNING, fmt, ap);
    va_end(ap);
}
