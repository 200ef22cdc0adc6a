/* batchsep.c: may a symbol be a run-time batch dimension of a graph?
 *
 * A graph with a symbol ?b left free (--dim b=LO..HI) compiles to one object for every value of
 * ?b by compiling the graph at ?b = 1 and running that code once per index of ?b, each time on
 * the next slice of every input and output (lib/codegen/abi.c, PREFIX_run_shapes). That is exact
 * only when every node computes each index along ?b on its own. ir_batch_check decides it from
 * the graph specialised at ?b = 1, 2 and 3 (after the passes, so the check sees the ops that
 * are compiled):
 *   - the three graphs have the same nodes, operands and attributes (the passes made the same
 *     decisions at every size), except a view's or an expand's target shape; a constant is the
 *     same, or repeated per index (a value folded per batch), or integer indices growing by a
 *     fixed step per index that only a gather along the symbol's axis reads, each index
 *     within its own slice (the batch * seq offsets torch exports build attention masks with);
 *   - every value either does not change with ?b, or has ?b in one axis as c * ?b with only
 *     1-sized axes before it, so index i of ?b is the contiguous slice [i*u, (i+1)*u) of its
 *     buffer (u = its size at ?b = 1);
 *   - a node that reads a value carrying ?b writes only such values, and computes along ?b
 *     independently: an element-wise op (the symbol in the same broadcast position in every
 *     operand that has it), a view (OPF_VIEW), or an OPF_BATCH op with ?b in axis 0 of its
 *     operands and results with one coefficient, no axis/axes/perm attribute on that axis, and
 *     the per-op conditions below (a rank-2 matmul B carries no ?b; Gemm's A not transposed).
 * Anything else (softmax over ?b, a reduction across it, a per-tensor dynamic quantization
 * whose scale spans the whole batch, a sequence length that attention mixes) is an error
 * naming the node. */
#include "ir/ir.h"
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The position of the symbol in value v: axis -1 when v does not change with it. */
typedef struct BAxis {
    int axis;
    int64_t coef;
} BAxis;

static bool
type_axis(const Type *t1, const Type *t2, const Type *t3, BAxis *out)
{
    out->axis = -1;
    out->coef = 0;
    if (t1->rank != t2->rank || t1->rank != t3->rank || t1->elem != t2->elem)
        return false;
    int a = -1;
    for (int i = 0; i < t1->rank; i++)
        if (t1->dims[i] != t2->dims[i] || t1->dims[i] != t3->dims[i]) {
            if (a >= 0)
                return false;
            a = i;
        }
    if (a < 0)
        return true;
    int64_t c = t1->dims[a];
    if (c < 1 || t2->dims[a] != 2 * c || t3->dims[a] != 3 * c)
        return false;
    for (int i = 0; i < a; i++)
        if (t1->dims[i] != 1)
            return false;
    out->axis = a;
    out->coef = c;
    return true;
}

static bool
attr_equal(const Graph *ga, const Attr *a, const Graph *gb, const Attr *b)
{
    if (a->kind != b->kind || strcmp(ir_str(ga, a->name), ir_str(gb, b->name)))
        return false;
    switch (a->kind) {
    case ATTR_INT: return a->i == b->i;
    case ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case ATTR_INTS:
        return a->ints.n == b->ints.n && !memcmp(a->ints.v, b->ints.v, a->ints.n * sizeof(int64_t));
    case ATTR_FLOATS:
        return a->floats.n == b->floats.n &&
               !memcmp(a->floats.v, b->floats.v, a->floats.n * sizeof(float));
    case ATTR_STRING: return strcmp(ir_str(ga, a->s), ir_str(gb, b->s)) == 0;
    case ATTR_TENSOR:
        return a->t->nbytes == b->t->nbytes && a->t->type.elem == b->t->type.elem &&
               !memcmp(a->t->data, b->t->data, a->t->nbytes);
    }
    return false;
}

/* Whether node n of g1 and its twin in g2 have the same op, operands and attributes (a view's
 * or an expand's "shape" may differ: it follows the result's type). */
static bool
same_node(Graph *g1, const Node *n1, Graph *g2, const Node *n2)
{
    if (n1->op != n2->op || n1->dead != n2->dead || n1->nin != n2->nin || n1->nout != n2->nout ||
        n1->nattr != n2->nattr)
        return false;
    for (uint32_t i = 0; i < n1->nin; i++)
        if (n1->in[i].id != n2->in[i].id)
            return false;
    for (uint32_t i = 0; i < n1->nout; i++)
        if (n1->out[i].id != n2->out[i].id)
            return false;
    bool shape_free = (op_info(n1->op)->flags & OPF_VIEW) || n1->op == OP_EXPAND;
    for (uint32_t i = 0; i < n1->nattr; i++) {
        const Attr *a = &n1->attrs[i], *b = &n2->attrs[i];
        if (n1->op == OP_CONST && a->kind == ATTR_TENSOR && b->kind == ATTR_TENSOR)
            continue; /* its value: const_kind */
        if (shape_free && a->kind == ATTR_INTS && !strcmp(ir_str(g1, a->name), "shape") &&
            !strcmp(ir_str(g2, b->name), "shape"))
            continue;
        if (!attr_equal(g1, a, g2, b))
            return false;
    }
    if (!n1->q != !n2->q || (n1->q && (n1->q->axis != n2->q->axis || n1->q->n != n2->q->n)))
        return false;
    return true;
}

/* How a constant changes with the symbol: not at all, tiled (index i of the symbol is the
 * value at 1: token-type embeddings of zeros folded per batch), or affine (integer indices,
 * index i of the symbol is the value at 1 plus i * K: the flattened batch * seq offsets of a
 * torch export's attention mask, read by a gather along the flattened axis). */
enum { CONST_SAME, CONST_TILE, CONST_AFFINE, CONST_OTHER };

static int64_t
ival(const Tensor *t, size_t i)
{
    if (t->type.elem == ET_I64) {
        int64_t v;
        memcpy(&v, (const char *)t->data + 8 * i, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, (const char *)t->data + 4 * i, 4);
    return v;
}

static int
const_kind(const Tensor *t1, const Tensor *t2, const Tensor *t3, const BAxis *ax, int64_t *k)
{
    *k = 0;
    if (ax->axis < 0)
        return t1->nbytes == t2->nbytes && t1->nbytes == t3->nbytes &&
               !memcmp(t1->data, t2->data, t1->nbytes) && !memcmp(t1->data, t3->data, t1->nbytes)
                   ? CONST_SAME : CONST_OTHER;
    size_t u = t1->nbytes;
    if (t2->nbytes != 2 * u || t3->nbytes != 3 * u)
        return CONST_OTHER;
    bool tile = true;
    for (size_t r = 0; r < 3 && tile; r++)
        tile = (r == 2 || !memcmp((const char *)t2->data + r * u, t1->data, u)) &&
               !memcmp((const char *)t3->data + r * u, t1->data, u);
    if (tile)
        return CONST_TILE;
    if (t1->type.elem != ET_I64 && t1->type.elem != ET_I32)
        return CONST_OTHER;
    size_t n = u / elem_size(t1->type.elem);
    if (!n)
        return CONST_OTHER;
    int64_t d = ival(t2, n) - ival(t1, 0);
    if (d <= 0)
        return CONST_OTHER;
    for (size_t j = 0; j < n; j++)
        if (ival(t2, j) != ival(t1, j) || ival(t3, j) != ival(t1, j) ||
            ival(t2, n + j) != ival(t1, j) + d || ival(t3, n + j) != ival(t1, j) + d ||
            ival(t3, 2 * n + j) != ival(t1, j) + 2 * d || ival(t1, j) < 0 || ival(t1, j) >= d)
            return CONST_OTHER;
    *k = d;
    return CONST_AFFINE;
}

/* Whether an axis/axes/perm attribute of n (relative to an operand of rank r carrying the
 * symbol at axis 0) touches axis 0. */
static bool
attrs_touch_axis0(Graph *g, const Node *n, int r)
{
    for (uint32_t i = 0; i < n->nattr; i++) {
        const Attr *a = &n->attrs[i];
        const char *name = ir_str(g, a->name);
        if (a->kind == ATTR_INT && !strcmp(name, "axis") && (a->i == 0 || a->i == -r))
            return true;
        if (a->kind == ATTR_INTS && !strcmp(name, "axes"))
            for (uint32_t k = 0; k < a->ints.n; k++)
                if (a->ints.v[k] == 0 || a->ints.v[k] == -r)
                    return true;
        if (a->kind == ATTR_INTS && !strcmp(name, "perm") && a->ints.n && a->ints.v[0] != 0)
            return true;
    }
    /* slice without axes: its starts name the leading axes */
    return n->op == OP_SLICE && !ir_attr(g, n, "axes");
}

static bool
elementwise_ok(Graph *g, const Node *n, const BAxis *ax)
{
    int pos = -1;
    for (uint32_t i = 0; i < n->nin + n->nout; i++) {
        ValueId v = i < n->nin ? n->in[i] : n->out[i - n->nin];
        if (!v.id || ax[v.id].axis < 0)
            continue;
        int p = ir_value(g, v)->type.rank - ax[v.id].axis;
        if (pos >= 0 && p != pos)
            return false;
        pos = p;
    }
    return true;
}

static bool
batch_op_ok(Graph *g, const Node *n, const BAxis *ax, const int64_t *aff, const char **why)
{
    /* a gather along the symbol's axis by affine indices that stay in their own slice */
    if (n->op == OP_GATHER && n->in[1].id && aff[n->in[1].id] && ax[n->in[0].id].axis == 0 &&
        aff[n->in[1].id] == ax[n->in[0].id].coef) {
        const Attr *a = ir_attr(g, n, "axis");
        if (!a || (a->kind == ATTR_INT && a->i == 0))
            return true;
    }
    int64_t coef = 0;
    for (uint32_t i = 0; i < n->nin + n->nout; i++) {
        ValueId v = i < n->nin ? n->in[i] : n->out[i - n->nin];
        if (!v.id || ax[v.id].axis < 0)
            continue;
        if (ax[v.id].axis != 0) {
            *why = "the symbol is not in axis 0 of every operand and result";
            return false;
        }
        if (coef && ax[v.id].coef != coef) {
            *why = "the symbol's multiple differs between its operands and results";
            return false;
        }
        coef = ax[v.id].coef;
        int rank = ir_value(g, v)->type.rank;
        bool mm = n->op == OP_MATMUL || n->op == OP_QMATMUL || n->op == OP_MATMUL_INTEGER ||
                  n->op == OP_WMATMUL || n->op == OP_GEMM;
        if (mm && i >= 1 && i < n->nin && (rank < 3 || n->op == OP_GEMM)) {
            *why = "the symbol is in the contracted axis of the matrix product";
            return false;
        }
    }
    const Attr *ta = ir_attr(g, n, "transA");
    if (n->op == OP_GEMM && ta && ta->kind == ATTR_INT && ta->i) {
        *why = "Gemm's A is transposed: the symbol is in the contracted axis";
        return false;
    }
    ValueId x = n->nin ? n->in[0] : VNONE;
    if (x.id && ax[x.id].axis == 0 && attrs_touch_axis0(g, n, ir_value(g, x)->type.rank)) {
        *why = "the op works along the symbol's axis";
        return false;
    }
    return true;
}

static bool
node_ok(Graph *g, const Node *n, const BAxis *ax, const int64_t *aff, const char **why)
{
    bool any = false;
    for (uint32_t i = 0; i < n->nin + n->nout; i++) {
        ValueId v = i < n->nin ? n->in[i] : n->out[i - n->nin];
        any |= v.id && ax[v.id].axis >= 0;
    }
    if (!any)
        return true;
    for (uint32_t i = 1; i < n->nin; i++)
        if (n->in[i].id && aff[n->in[i].id] && n->op != OP_GATHER) {
            *why = "an operand holds indices that grow with the symbol";
            return false;
        }
    if (n->nin && n->in[0].id && aff[n->in[0].id]) {
        *why = "an operand holds indices that grow with the symbol";
        return false;
    }
    for (uint32_t i = 0; i < n->nout; i++)
        if (n->out[i].id && ax[n->out[i].id].axis < 0) {
            *why = "a result does not have the symbol: the op combines the values along it";
            return false;
        }
    unsigned f = op_info(n->op)->flags;
    for (uint32_t i = 0; i < n->nin + n->nout; i++) {
        ValueId v = i < n->nin ? n->in[i] : n->out[i - n->nin];
        const QParams *q = v.id ? ir_value(g, v)->type.q : NULL;
        if (q && q->axis >= 0 && q->axis == ax[v.id].axis) {
            *why = "a quantization axis is the symbol's axis";
            return false;
        }
    }
    if (n->q && n->q->axis >= 0 && n->nin && n->in[0].id && n->q->axis == ax[n->in[0].id].axis) {
        *why = "the quantization axis is the symbol's axis";
        return false;
    }
    if (f & OPF_VIEW)
        return true;
    if (f & OPF_ELEMWISE) {
        if (elementwise_ok(g, n, ax))
            return true;
        *why = "the symbol is in a different broadcast position in its operands";
        return false;
    }
    if (!(f & OPF_BATCH)) {
        *why = "the op does not compute each index along the symbol independently";
        return false;
    }
    return batch_op_ok(g, n, ax, aff, why);
}

static bool
value_report(Graph *g, ValueId v, Graph *g2, const char *sym)
{
    StrBuf s1, s2;
    sb_init(&s1);
    sb_init(&s2);
    ir_print_type(&s1, g, &ir_value(g, v)->type);
    ir_print_type(&s2, g2, &ir_value(g2, v)->type);
    const Value *val = ir_value(g, v);
    Loc l = {.file = g->m->filename};
    if (val->def.id)
        l = ir_node(g, val->def)->loc;
    diag_error(g->m->ctx, &l, "value %%%s is %s at ?%s = 1 and %s at ?%s = 2: a run-time "
               "dimension must be one axis, a multiple of ?%s, with only 1-sized axes before it; "
               "bind it with --dim %s=<size>", ir_value_name(g, v), s1.data ? s1.data : "",
               sym, s2.data ? s2.data : "", sym, sym, sym);
    sb_free(&s1);
    sb_free(&s2);
    return false;
}

bool
ir_batch_check(Module *const ms[3], const char *sym, IrBatchIO *in, IrBatchIO *out)
{
    Graph *g1 = &ms[0]->g, *g2 = &ms[1]->g, *g3 = &ms[2]->g;
    qdqc_context *ctx = ms[0]->ctx;
    if (g1->nodes.len != g2->nodes.len || g1->nodes.len != g3->nodes.len ||
        g1->values.len != g2->values.len || g1->values.len != g3->values.len ||
        g1->inputs.len != g2->inputs.len || g1->outputs.len != g2->outputs.len) {
        diag_error(ctx, NULL, "the graph compiled at ?%s = 1, 2 and 3 is not the same graph (the "
                   "passes rewrote it differently by size); bind ?%s with --dim %s=<size>", sym,
                   sym, sym);
        return false;
    }
    for (uint32_t i = 1; i < g1->nodes.len; i++) {
        Node *a = &g1->nodes.data[i];
        if (!same_node(g1, a, g2, &g2->nodes.data[i]) ||
            !same_node(g1, a, g3, &g3->nodes.data[i])) {
            node_error(g1, a, "the node differs between ?%s = 1, 2 and 3 (an attribute or a "
                       "constant depends on ?%s); bind it with --dim %s=<size>", sym, sym, sym);
            return false;
        }
    }
    BAxis *ax = calloc(g1->values.len, sizeof *ax);
    if (!ax) {
        diag_error(ctx, NULL, "out of memory");
        return false;
    }
    bool ok = true;
    for (uint32_t v = 1; ok && v < g1->values.len; v++)
        if (!type_axis(&g1->values.data[v].type, &g2->values.data[v].type,
                       &g3->values.data[v].type, &ax[v]))
            ok = value_report(g1, (ValueId){v}, g2, sym);
    int64_t *aff = ok ? calloc(g1->values.len, sizeof *aff) : NULL;
    ok = ok && aff;
    for (uint32_t i = 1; ok && i < g1->nodes.len; i++) {
        Node *n = &g1->nodes.data[i];
        if (n->dead || n->op != OP_CONST || !n->nout)
            continue;
        ValueId v = n->out[0];
        const Tensor *t1 = ir_const_of(g1, v), *t2 = ir_const_of(g2, v), *t3 = ir_const_of(g3, v);
        int kind = t1 && t2 && t3 ? const_kind(t1, t2, t3, &ax[v.id], &aff[v.id]) : CONST_OTHER;
        if (kind != CONST_OTHER)
            continue;
        node_error(g1, n, "constant %%%s depends on ?%s in a way a run-time dimension cannot "
                   "follow (neither repeated nor growing by a fixed step per index); bind it "
                   "with --dim %s=<size>", ir_value_name(g1, v), sym, sym);
        ok = false;
    }
    for (uint32_t i = 1; ok && i < g1->nodes.len; i++) {
        Node *n = &g1->nodes.data[i];
        const char *why = NULL;
        if (n->dead || n->op == OP_CONST || node_ok(g2, &g2->nodes.data[i], ax, aff, &why))
            continue; /* a constant: const_kind above */
        node_error(g1, n, "?%s cannot be a run-time dimension: %s; bind it with --dim %s=<size>",
                   sym, why, sym);
        ok = false;
    }
    for (uint32_t i = 0; ok && i < g1->inputs.len; i++)
        in[i] = (IrBatchIO){ax[g1->inputs.data[i].id].axis, ax[g1->inputs.data[i].id].coef};
    for (uint32_t i = 0; ok && i < g1->outputs.len; i++)
        out[i] = (IrBatchIO){ax[g1->outputs.data[i].id].axis, ax[g1->outputs.data[i].id].coef};
    free(ax);
    free(aff);
    return ok;
}

Module *
ir_module_specialise(Module *m, const char *sym, int64_t value)
{
    qdqc_context *ctx = m->ctx;
    char *text = ir_print(&m->g);
    if (!text) {
        diag_error(ctx, NULL, "out of memory");
        return NULL;
    }
    DimBind b = {xstrdup(sym), value};
    vec_push(&ctx->dim_binds, b);
    /* an error of the parse itself (a size the graph cannot take, such as a negative
     * dimension) is in the text printed here: the file name says which text */
    char name[512];
    snprintf(name, sizeof name, "%s (specialised at ?%s = %lld)", m->filename, sym,
             (long long)value);
    Module *r = ir_parse(ctx, text, strlen(text), name);
    ctx->dim_binds.len--;
    free(b.name);
    free(text);
    /* diagnostics point at the source, not at the text printed here: the printer writes the
     * nodes in order, so node i is the same node (text IR sources keep a line:column) */
    if (r && r->g.nodes.len == m->g.nodes.len)
        for (uint32_t i = 1; i < m->g.nodes.len; i++)
            if (r->g.nodes.data[i].op == m->g.nodes.data[i].op)
                r->g.nodes.data[i].loc = m->g.nodes.data[i].loc;
    return r;
}

const char *
ir_runtime_symbol(Graph *g, int64_t *lo, int64_t *hi, uint32_t *count)
{
    const char *first = NULL;
    *count = 0;
    const qdqc_context *ctx = g->m->ctx;
    for (uint32_t i = 0; i < g->dimx.len; i++) {
        const char *name;
        if (!ir_dim_sym_name(g, DIM_TAG0 - (int64_t)i, &name))
            continue;
        for (uint32_t k = 0; ctx && k < ctx->dim_ranges.len; k++)
            if (!strcmp(ctx->dim_ranges.data[k].name, name)) {
                if (!first) {
                    first = name;
                    *lo = ctx->dim_ranges.data[k].lo;
                    *hi = ctx->dim_ranges.data[k].hi;
                }
                (*count)++;
            }
    }
    return first;
}
