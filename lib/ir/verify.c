/* verify.c: the IR verifier. Checks structure (arity, definitions before uses, unique names),
 * result types against ir_infer_types, and quantization parameters (scale positive and finite,
 * zero point inside the storage range, range inside the storage type, axis and per-axis sizes
 * matching the tensor). Every problem is reported with its location; it does not stop at the
 * first. */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void
type_str(char *buf, size_t len, const Graph *g, const Type *t)
{
    StrBuf b;
    sb_init(&b);
    ir_print_type(&b, g, t);
    snprintf(buf, len, "%s", b.data ? b.data : "");
    sb_free(&b);
}

/* Validate quantization parameters against the tensor type they describe. Returns an error
 * message in buf (and false) or true. */
static bool
check_qparams(const QParams *q, const Type *t, char *buf, size_t len)
{
    int64_t lo, hi;
    elem_range(q->storage, &lo, &hi);
    if (!elem_is_quant_storage(q->storage)) {
        snprintf(buf, len, "storage type %s cannot be quantized", elem_name(q->storage));
        return false;
    }
    if (q->qmin < lo || q->qmax > hi || q->qmin > q->qmax) {
        snprintf(buf, len, "range [%d, %d] is not inside %s [%lld, %lld]", q->qmin, q->qmax,
                 elem_name(q->storage), (long long)lo, (long long)hi);
        return false;
    }
    if (q->axis >= 0) {
        if (t && q->axis >= t->rank) {
            snprintf(buf, len, "axis %d out of range for rank %d", q->axis, t->rank);
            return false;
        }
        if (t && (int64_t)q->n != t->dims[q->axis]) {
            snprintf(buf, len, "per-axis quantization has %u scales, axis %d has size %lld",
                     q->n, q->axis, (long long)t->dims[q->axis]);
            return false;
        }
    } else if (q->n != 1) {
        snprintf(buf, len, "per-tensor quantization needs exactly one scale, got %u", q->n);
        return false;
    }
    for (uint32_t i = 0; i < q->n; i++) {
        float s = q->scale[i];
        if (!(s > 0) || !isfinite(s)) {
            char f[48];
            fmt_float(f, s);
            if (q->n == 1)
                snprintf(buf, len, "scale must be positive and finite, got %s", f);
            else
                snprintf(buf, len, "scale[%u] must be positive and finite, got %s", i, f);
            return false;
        }
        if (q->zp[i] < lo || q->zp[i] > hi) {
            if (q->n == 1)
                snprintf(buf, len, "zero point %d outside %s range [%lld, %lld]", q->zp[i],
                         elem_name(q->storage), (long long)lo, (long long)hi);
            else
                snprintf(buf, len, "zero point[%u] = %d outside %s range [%lld, %lld]", i,
                         q->zp[i], elem_name(q->storage), (long long)lo, (long long)hi);
            return false;
        }
    }
    return true;
}

static bool
check_type_q(Graph *g, const Node *n, const Type *t, const char *what)
{
    if (!t->q)
        return true;
    char buf[256];
    if (t->q->storage != t->elem) {
        node_error(g, n, "%s: quantization storage %s differs from element type %s", what,
                   elem_name(t->q->storage), elem_name(t->elem));
        return false;
    }
    if (!check_qparams(t->q, t, buf, sizeof buf)) {
        node_error(g, n, "%s: %s", what, buf);
        return false;
    }
    return true;
}

static bool
is_int_result_elem(ElemType e)
{
    return e == ET_I8 || e == ET_U8 || e == ET_I16 || e == ET_U16 || e == ET_I32 || e == ET_F32;
}

/* Integer ops: operands quantized, result quantized (or i32 / f32 plain). */
static bool
vf_int(Graph *g, Node *n)
{
    bool ok = true;
    const Type *r = &ir_value(g, n->out[0])->type;
    uint32_t nq = n->nin;
    if (n->op == OP_QCONV || n->op == OP_QCONV_TRANSPOSE || n->op == OP_QMATMUL)
        nq = 2;
    if (n->op == OP_LUT)
        nq = 0;
    for (uint32_t i = 0; i < nq; i++) {
        const Type *t = &ir_value(g, n->in[i])->type;
        if (!t->q) {
            node_error(g, n, "operand %u must be quantized, got %s", i,
                       elem_name(t->elem));
            ok = false;
        } else if (t->q->axis >= 0) {
            bool weight = i == 1 && (n->op == OP_QCONV || n->op == OP_QCONV_TRANSPOSE ||
                                     n->op == OP_QMATMUL);
            int want = n->op == OP_QCONV ? 0 : n->op == OP_QCONV_TRANSPOSE ? 1 : t->rank - 1;
            if (!weight || t->q->axis != want) {
                node_error(g, n, "operand %u: per-axis quantization on axis %d is not supported here",
                           i, t->q->axis);
                ok = false;
            }
        }
    }
    if (n->nin > 2 && (n->op == OP_QCONV || n->op == OP_QCONV_TRANSPOSE || n->op == OP_QMATMUL) &&
        n->in[2].id) {
        const Type *b = &ir_value(g, n->in[2])->type;
        if (b->elem != ET_I32 || b->q) {
            node_error(g, n, "bias must be plain i32, got %s", elem_name(b->elem));
            ok = false;
        }
    }
    if (n->op == OP_LUT) {
        const Type *x = &ir_value(g, n->in[0])->type;
        (void)x;
        return ok;
    }
    if (!is_int_result_elem(r->elem)) {
        node_error(g, n, "result must be i8, u8, i16, u16, i32 or f32, got %s", elem_name(r->elem));
        return false;
    }
    bool acc_ok = n->op == OP_QCONV || n->op == OP_QCONV_TRANSPOSE || n->op == OP_QMATMUL;
    if (r->elem == ET_I32 || r->elem == ET_F32) {
        if (!acc_ok) {
            if (!r->q) {
                node_error(g, n, "result must be quantized");
                ok = false;
            }
        } else if (r->q) {
            node_error(g, n, "%s result must not be quantized", elem_name(r->elem));
            ok = false;
        }
    } else if (!r->q) {
        node_error(g, n, "%s result must be quantized", elem_name(r->elem));
        ok = false;
    }
    if (r->q && r->q->axis >= 0) {
        node_error(g, n, "result must be quantized per tensor");
        ok = false;
    }
    int64_t clamp[4];
    int k = ir_attr_ints(g, n, "clamp", clamp, 4);
    if (k >= 0) {
        if (k != 2 || clamp[0] > clamp[1]) {
            node_error(g, n, "'clamp' must be [min, max] with min <= max");
            ok = false;
        } else if (r->q && (clamp[0] < r->q->qmin || clamp[1] > r->q->qmax)) {
            node_error(g, n, "'clamp' [%lld, %lld] is outside the result range [%d, %d]",
                       (long long)clamp[0], (long long)clamp[1], r->q->qmin, r->q->qmax);
            ok = false;
        }
    }
    return ok;
}

/* Layout ops never rescale: each result carries operand k's quantization, for k < ncheck
 * (per-axis parameters may move with the axis and are not compared here). */
static bool
check_passthrough_q(Graph *g, Node *n, uint32_t ncheck)
{
    bool ok = true;
    for (uint32_t k = 0; k < ncheck; k++) {
        const Type *t = &ir_value(g, n->in[k])->type;
        for (uint32_t r = 0; r < ir_layout_nout(n); r++) {
            const Type *o = &ir_value(g, n->out[r])->type;
            bool per_axis = (t->q && t->q->axis >= 0) || (o->q && o->q->axis >= 0);
            if (!per_axis && !qparams_equal(t->q, o->q)) {
                node_error(g, n, "result quantization must equal operand %u's (layout ops do not rescale)", k);
                ok = false;
            }
        }
    }
    return ok;
}

/* float-island math (exp ... max): f32 operands, or plain integers where the op is defined on
 * them (neg, abs, pow, min, max) */
static bool
vf_math(Graph *g, Node *n)
{
    bool ok = true;
    bool int_ok = n->op == OP_NEG || n->op == OP_ABS || n->op == OP_POW || n->op == OP_MIN ||
                  n->op == OP_MAX;
    for (uint32_t k = 0; k < n->nin; k++) {
        const Type *t = &ir_value(g, n->in[k])->type;
        if (t->q || !(t->elem == ET_F32 || (int_ok && elem_is_int(t->elem)))) {
            node_error(g, n, "operand %u must be f32%s, got %s%s", k,
                       int_ok ? " or a plain integer" : "", elem_name(t->elem),
                       t->q ? " (quantized: dequantize it first)" : "");
            ok = false;
        }
    }
    return ok;
}

/* where: x, y and the result mean the same (all plain, or one per-tensor quantization) */
static bool
vf_where(Graph *g, Node *n)
{
    const QParams *qa = ir_value(g, n->in[1])->type.q, *qb = ir_value(g, n->in[2])->type.q;
    const QParams *qy = ir_value(g, n->out[0])->type.q;
    if (!qparams_equal(qa, qb) || !qparams_equal(qa, qy) || (qa && qa->axis >= 0)) {
        node_error(g, n, "operands 1, 2 and the result must carry the same per-tensor "
                   "quantization or none");
        return false;
    }
    return true;
}

/* comparisons, logic, range, reduce_sum, argmax: they read the stored numbers (integers as
 * integers) and give plain results */
static bool
vf_plain_result(Graph *g, Node *n)
{
    if (ir_value(g, n->out[0])->type.q) {
        node_error(g, n, "result must not be quantized");
        return false;
    }
    return true;
}

/* Operands first.. of n are plain numbers (no quantization on their types) and, when
 * `constant`, constants. */
static bool
check_plain(Graph *g, Node *n, uint32_t first, bool constant)
{
    bool ok = true;
    for (uint32_t k = first; k < n->nin; k++) {
        if (!n->in[k].id)
            continue;
        if (constant && !ir_const_of(g, n->in[k])) {
            node_error(g, n, "operand %u must be a constant", k);
            ok = false;
        } else if (ir_value(g, n->in[k])->type.q) {
            node_error(g, n, "operand %u must be plain numbers, not quantized", k);
            ok = false;
        }
    }
    return ok;
}

/* wmatmul: the weight, its scales, zero points and bias are read at compile time */
static bool
vf_wonly(Graph *g, Node *n)
{
    bool ok = check_plain(g, n, 1, true);
    if (ir_value(g, n->in[0])->type.q) {
        node_error(g, n, "operand 0 must be float, got quantized %s",
                   elem_name(ir_value(g, n->in[0])->type.elem));
        ok = false;
    }
    return ok;
}

/* ---- the VERIFY column of ops.def: vf_<V> checks the op-class rules of an op ---- */

static bool
vf_none(Graph *g, Node *n)
{
    (void)g;
    (void)n;
    return true;
}

/* float compute ops: float operands; add, sub, mul, div, relu, clip and resize also take plain
 * integers; a nearest resize of quantized values only selects: a layout op there */
static bool
vf_float(Graph *g, Node *n)
{
    if (n->op == OP_RESIZE && ir_value(g, n->in[0])->type.q &&
        strcmp(ir_attr_string(g, n, "mode", "nearest"), "nearest") == 0)
        return check_passthrough_q(g, n, 1);
    bool ok = true;
    for (uint32_t k = 0; k < n->nin; k++) {
        if (!n->in[k].id)
            continue;
        const Type *t = &ir_value(g, n->in[k])->type;
        bool int_ok = n->op == OP_RESIZE || n->op == OP_ADD || n->op == OP_SUB ||
                      n->op == OP_MUL || n->op == OP_DIV || n->op == OP_RELU || n->op == OP_CLIP;
        if (!elem_is_float(t->elem) && !(int_ok && !t->q)) {
            node_error(g, n, "operand %u must be float, got %s%s", k, elem_name(t->elem),
                       t->q ? " (quantized: dequantize it first)" : "");
            ok = false;
        }
    }
    return ok;
}

/* layout ops (and expand, tile, reduce_max, reduce_min): the results carry operand 0's
 * quantization, every operand's for concat */
static bool
vf_layout(Graph *g, Node *n)
{
    return check_passthrough_q(g, n, n->op == OP_CONCAT ? n->nin : 1);
}

/* matmul_integer: plain integers (the zero points and scales are operands, not types) */
static bool
vf_plain(Graph *g, Node *n)
{
    return check_plain(g, n, 0, false);
}

typedef bool (*VerifyFn)(Graph *g, Node *n);
static const VerifyFn verify_tab[OP_COUNT] = {
    [OP_INVALID] = vf_none,
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, REF, LOWER, SCRATCH, STATIC, MLIR, \
           VERIFY, ...)                                                                            \
    [OP_##E] = vf_##VERIFY,
#include "ops.def"
#undef OP
};

static bool
verify_node(Graph *g, NodeId nid, const uint32_t *def_pos)
{
    Node *n = ir_node(g, nid);
    const OpInfo *info = op_info(n->op);
    bool ok = true;
    if (n->op <= OP_INVALID || n->op >= OP_COUNT) {
        node_error(g, n, "invalid op kind %d", (int)n->op);
        return false;
    }
    if ((int)n->nin < info->min_in || (info->max_in >= 0 && (int)n->nin > info->max_in)) {
        node_error(g, n, "wrong number of operands (%u)", n->nin);
        return false;
    }
    if ((int)n->nout < info->min_out || (info->max_out >= 0 && (int)n->nout > info->max_out)) {
        node_error(g, n, "wrong number of results (%u)", n->nout);
        return false;
    }
    for (uint32_t k = 0; k < n->nin; k++) {
        uint32_t v = n->in[k].id;
        if (!v)
            continue;
        if (v >= g->values.len) {
            node_error(g, n, "operand %u refers to no value", k);
            return false;
        }
        if (def_pos[v] >= nid.id) {
            node_error(g, n, "operand %u ('%%%s') is used before it is defined", k,
                       ir_value_name(g, n->in[k]));
            return false;
        }
    }
    for (uint32_t k = 0; k < n->nout; k++) {
        Value *val = ir_value(g, n->out[k]);
        if (val->def.id != nid.id || val->def_index != k) {
            node_error(g, n, "result %u is not linked to its node", k);
            return false;
        }
    }
    /* quantization parameters on the node (quantize / dequantize) */
    if (n->q) {
        const Type *qt = n->op == OP_QUANTIZE ? &ir_value(g, n->out[0])->type
                                              : &ir_value(g, n->in[0])->type;
        char buf[256];
        if (!check_qparams(n->q, qt, buf, sizeof buf)) {
            node_error(g, n, "%s", buf);
            ok = false;
        } else if (n->q->storage != qt->elem) {
            node_error(g, n, "quantization storage %s differs from %s", elem_name(n->q->storage),
                       elem_name(qt->elem));
            ok = false;
        } else if (qt->q && !qparams_equal(qt->q, n->q)) {
            node_error(g, n, "parameters differ from the quantization of the %s type",
                       n->op == OP_QUANTIZE ? "result" : "operand");
            ok = false;
        }
    }
    if (!ok)
        return false;
    /* op-class rules (before types: they explain type mismatches better): ops.def's VERIFY
     * column */
    ok = verify_tab[n->op](g, n);
    if (!ok)
        return false;
    /* types */
    Type inf[64];
    if (n->nout > 64) {
        node_error(g, n, "too many results");
        return false;
    }
    if (!ir_infer_types(g, n, inf))
        return false;
    for (uint32_t k = 0; k < n->nout; k++) {
        const Type *t = &ir_value(g, n->out[k])->type;
        if ((inf[k].elem != ET_NONE && inf[k].elem != t->elem) ||
            !type_shape_equal(&inf[k], t)) {
            char a[256], b[256];
            Type want = inf[k];
            if (want.elem == ET_NONE)
                want.elem = t->elem;
            type_str(a, sizeof a, g, &want);
            Type got = *t;
            got.q = NULL;
            type_str(b, sizeof b, g, &got);
            node_error(g, n, "result %u has type %s, expected %s", k, b, a);
            ok = false;
        }
        if (!check_type_q(g, n, t, "result"))
            ok = false;
    }
    return ok;
}

bool
ir_verify(Graph *g)
{
    bool ok = true;
    uint32_t nv = g->values.len;
    /* def_pos[v]: node index defining v, 0 for inputs, UINT32_MAX if undefined */
    uint32_t *def_pos = xmalloc((nv ? nv : 1) * sizeof(uint32_t));
    for (uint32_t v = 0; v < nv; v++)
        def_pos[v] = UINT32_MAX;
    Loc gl = {.file = g->m->filename};
    for (uint32_t k = 0; k < g->inputs.len; k++) {
        uint32_t v = g->inputs.data[k].id;
        if (!v || v >= nv || def_pos[v] != UINT32_MAX) {
            diag_error(g->m->ctx, &gl, "graph input %u is invalid or repeated", k);
            ok = false;
            continue;
        }
        def_pos[v] = 0;
        const Type *t = &ir_value(g, g->inputs.data[k])->type;
        if (t->q) {
            char buf[256];
            if (t->q->storage != t->elem || !check_qparams(t->q, t, buf, sizeof buf)) {
                diag_error(g->m->ctx, &gl, "graph input '%%%s': %s",
                           ir_value_name(g, g->inputs.data[k]),
                           t->q->storage != t->elem ? "quantization storage differs from its type" : buf);
                ok = false;
            }
        }
    }
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t k = 0; k < n->nout; k++) {
            uint32_t v = n->out[k].id;
            if (!v || v >= nv) {
                node_error(g, n, "result %u refers to no value", k);
                ok = false;
                continue;
            }
            if (def_pos[v] != UINT32_MAX) {
                node_error(g, n, "value '%%%s' is defined twice", ir_value_name(g, n->out[k]));
                ok = false;
                continue;
            }
            def_pos[v] = i;
        }
    }
    /* unique names */
    {
        uint32_t nstr = g->m->strs.nstrs;
        uint8_t *seen = xcalloc(nstr ? nstr : 1, 1);
        for (uint32_t v = 1; v < nv; v++) {
            if (def_pos[v] == UINT32_MAX)
                continue;
            uint32_t name = g->values.data[v].name;
            if (name < nstr) {
                if (seen[name]) {
                    diag_error(g->m->ctx, &gl, "value name '%%%s' is used twice",
                               ir_str(g, name));
                    ok = false;
                }
                seen[name] = 1;
            }
        }
        free(seen);
    }
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        if (!verify_node(g, (NodeId){i}, def_pos))
            ok = false;
    }
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        uint32_t v = g->outputs.data[k].id;
        if (!v || v >= nv || def_pos[v] == UINT32_MAX) {
            diag_error(g->m->ctx, &gl, "graph output %u is not defined", k);
            ok = false;
        }
    }
    free(def_pos);
    return ok;
}
