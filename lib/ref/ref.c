/* ref.c: the reference interpreter's driver (value storage, dispatch, liveness), plus the
 * quantization boundary ops (quantize, dequantize, dynamic_quantize), shape and
 * constant_of_shape (cast: ref_select.c); the shared helpers are in ref_tensor.c. Semantics: docs/ir.md and
 * docs/numerics.md. */
#include "ref/ref_impl.h"

#include "numerics/dynamic.h"
#include "numerics/numerics.h"

#include <math.h>
#include <string.h>

/* ---- quantize / dequantize ---- */

/* Channel of flat element i for per-axis parameters on `axis` of t (0 when per-tensor). */
static inline int64_t
chan_of(const Type *t, int axis, size_t i)
{
    if (axis < 0)
        return 0;
    int64_t inner = 1;
    for (int d = axis + 1; d < t->rank; d++)
        inner *= t->dims[d];
    return ((int64_t)i / inner) % t->dims[axis];
}

typedef struct QArgs {
    int axis; /* -1 per tensor (static form) */
    int64_t n;
    const RefTensor *scale, *zp; /* dynamic form */
    QdqLayout lay;               /* dynamic form: per tensor, per axis or blocked */
    const QParams *q;            /* static form */
    int32_t qmin, qmax;
} QArgs;

static bool
qargs(RefCtx *c, Node *n, const Type *xt, ElemType storage, QArgs *a)
{
    Graph *g = c->g;
    memset(a, 0, sizeof *a);
    int64_t lo, hi;
    elem_range(storage, &lo, &hi);
    if (n->q) {
        a->q = n->q;
        a->axis = n->q->axis;
        a->n = n->q->n;
        a->qmin = n->q->qmin;
        a->qmax = n->q->qmax;
        return true;
    }
    a->scale = ref_in(c, n, 1);
    a->zp = ref_in(c, n, 2);
    a->qmin = (int32_t)lo;
    a->qmax = (int32_t)hi;
    char err[200];
    if (!ir_qdq_layout(xt, &a->scale->type, a->zp ? &a->zp->type : NULL,
                       ir_attr_int(g, n, "axis", 1), ir_attr_int(g, n, "block_size", 0), &a->lay,
                       err, sizeof err)) {
        node_error(g, n, "%s", err);
        return false;
    }
    a->axis = a->lay.axis;
    a->n = (int64_t)a->lay.nparams;
    return true;
}

/* The parameter index of flat element i: its channel (static form), or by the layout. */
static inline int64_t
qa_index(const QArgs *a, const Type *xt, size_t i)
{
    return a->q ? chan_of(xt, a->axis, i) : ir_qdq_param_index(&a->lay, (int64_t)i);
}

static inline float
qa_scale(const QArgs *a, int64_t ch)
{
    return a->q ? ref_qscale(a->q, ch) : (float)ref_get_f(a->scale, (size_t)ch);
}

static inline int32_t
qa_zp(const QArgs *a, int64_t ch)
{
    if (a->q)
        return ref_qzp(a->q, ch);
    return a->zp ? (int32_t)ref_get_i(a->zp, (size_t)ch) : 0;
}

/* Run-time scales (the dynamic form) must be positive and finite, as static ones are (the
 * verifier); compiled code checks the same and returns QDQC_ERR_RUNTIME (docs/abi.md). */
static bool
check_scales(RefCtx *c, Node *n, const QArgs *a)
{
    for (int64_t ch = 0; !a->q && ch < a->n; ch++) {
        float s = qa_scale(a, ch);
        if (!(s > 0) || !isfinite(s)) {
            node_error(c->g, n, "scale must be positive and finite, got %g", (double)s);
            return false;
        }
    }
    return true;
}

bool
ref_op_quantize(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    QArgs a;
    if (!qargs(c, n, &x->type, y->type.elem, &a) || !check_scales(c, n, &a))
        return false;
    size_t k = ref_numel(x);
    for (size_t i = 0; i < k; i++) {
        int64_t ch = qa_index(&a, &x->type, i);
        float s = qa_scale(&a, ch);
        if (!(s > 0) || !isfinite(s)) {
            node_error(c->g, n, "scale must be positive and finite, got %g", (double)s);
            return false;
        }
        float v = (float)ref_get_f(x, i);
        ref_set_i(y, i, qn_quantize_f32(v, s, qa_zp(&a, ch), a.qmin, a.qmax));
    }
    return true;
}

bool
ref_op_dequantize(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    QArgs a;
    if (!qargs(c, n, &x->type, x->type.elem, &a) || !check_scales(c, n, &a))
        return false;
    size_t k = ref_numel(x);
    for (size_t i = 0; i < k; i++) {
        int64_t ch = qa_index(&a, &x->type, i);
        ref_set_f(y, i, qn_dequantize((int32_t)ref_get_i(x, i), qa_scale(&a, ch), qa_zp(&a, ch)));
    }
    return true;
}

/* ONNX DynamicQuantizeLinear (uint8): the range [min(0, min x), max(0, max x)], its parameters
 * by qn_dynamic_qparams (scale 1 for an all-zero input, as ONNX Runtime), then quantize. A NaN
 * input or a scale that is not positive and finite (an infinite input) is an error, as in
 * compiled code (QDQC_ERR_RUNTIME). */
bool
ref_op_dynamic_quantize(RefCtx *c, Node *n)
{
    const float *x = ref_f32_in(c, n, 0);
    if (!x)
        return false;
    const RefTensor *xt = ref_in(c, n, 0);
    size_t k = ref_numel(xt);
    float mx = 0, mn = 0;
    for (size_t i = 0; i < k; i++) {
        if (isnan(x[i])) {
            node_error(c->g, n, "dynamic_quantize: input contains NaN");
            return false;
        }
        mx = x[i] > mx ? x[i] : mx;
        mn = x[i] < mn ? x[i] : mn;
    }
    float scale;
    int32_t zp;
    if (!qn_dynamic_qparams(mn, mx, &scale, &zp)) {
        node_error(c->g, n, "dynamic_quantize: input range [%g, %g] gives no positive finite "
                   "scale", (double)mn, (double)mx);
        return false;
    }
    RefTensor *y = ref_out(c, n, 0), *ys = ref_out(c, n, 1), *yz = ref_out(c, n, 2);
    for (size_t i = 0; i < k; i++)
        ref_set_i(y, i, qn_quantize_f32(x[i], scale, zp, 0, 255));
    ref_set_f(ys, 0, scale);
    ref_set_i(yz, 0, zp);
    return true;
}

/* ---- shape ---- */

bool
ref_op_shape(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    int r = x->type.rank;
    int64_t s = ir_attr_int(c->g, n, "start", 0);
    if (s < 0)
        s += r;
    s = s < 0 ? 0 : s > r ? r : s;
    for (size_t i = 0; i < ref_numel(y); i++)
        ref_set_i(y, i, x->type.dims[s + (int64_t)i]);
    return true;
}

bool
ref_op_constant_of_shape(RefCtx *c, Node *n)
{
    RefTensor *y = ref_out(c, n, 0);
    const Attr *v = ir_attr(c->g, n, "value");
    if (v && v->kind == ATTR_TENSOR && type_numel_unchecked(&v->t->type) != 1) {
        node_error(c->g, n, "'value' must have one element");
        return false;
    }
    size_t es = elem_size(y->type.elem);
    if (v && v->kind == ATTR_TENSOR)
        for (size_t i = 0; i < ref_numel(y); i++)
            memcpy((char *)y->data + i * es, v->t->data, es);
    return true;
}

/* ---- driver ---- */

/* an op the interpreter has no kernel for (const is read before dispatch) */
static bool
ref_op_none(RefCtx *c, Node *n)
{
    node_error(c->g, n, "not implemented in the reference interpreter");
    return false;
}

/* each op's kernel: the REF column of ops.def */
typedef bool (*RefFn)(RefCtx *c, Node *n);
static const RefFn ref_tab[OP_COUNT] = {
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, REF, ...) [OP_##E] = ref_op_##REF,
#include "ir/ops.def"
#undef OP
};

static bool
dispatch(RefCtx *c, Node *n)
{
    if (n->op > OP_INVALID && n->op < OP_COUNT)
        return ref_tab[n->op](c, n);
    return ref_op_none(c, n);
}

static bool
copy_tensor(RefTensor *dst, const RefTensor *src)
{
    if (!ref_tensor_alloc(dst, &src->type))
        return false;
    memcpy(dst->data, src->data, src->nbytes);
    return true;
}

bool
ref_run(Module *m, const RefTensor *inputs, uint32_t nin, RefTensor *outputs, uint32_t nout,
        bool requant_fixed)
{
    Graph *g = &m->g;
    Loc gl = {.file = m->filename};
    for (uint32_t k = 0; k < nout; k++)
        memset(&outputs[k], 0, sizeof outputs[k]);
    if (nin != g->inputs.len || nout != g->outputs.len) {
        diag_error(m->ctx, &gl, "reference interpreter: graph has %u inputs and %u outputs, "
                   "given %u and %u", g->inputs.len, g->outputs.len, nin, nout);
        return false;
    }
    uint32_t nv = g->values.len;
    RefCtx c = {.g = g, .requant_fixed = requant_fixed};
    c.vals = xcalloc(nv ? nv : 1, sizeof(RefTensor));
    /* last node that reads each value; UINT32_MAX for graph outputs */
    uint32_t *last = xcalloc(nv ? nv : 1, sizeof(uint32_t));
    uint8_t *borrowed = xcalloc(nv ? nv : 1, 1);
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t k = 0; k < n->nin; k++)
            if (n->in[k].id)
                last[n->in[k].id] = i;
    }
    for (uint32_t k = 0; k < g->outputs.len; k++)
        last[g->outputs.data[k].id] = UINT32_MAX;
    bool ok = true;
    for (uint32_t k = 0; k < nin && ok; k++) {
        ValueId v = g->inputs.data[k];
        const Type *t = &ir_value(g, v)->type;
        if (inputs[k].type.elem != t->elem || !type_shape_equal(&inputs[k].type, t)) {
            StrBuf a, b;
            sb_init(&a);
            sb_init(&b);
            Type want = *t, got = inputs[k].type;
            want.q = got.q = NULL;
            ir_print_type(&a, g, &want);
            ir_print_type(&b, g, &got);
            diag_error(m->ctx, &gl, "reference interpreter: input '%s' must be %s, got %s",
                       ir_value_name(g, v), a.data, b.data);
            sb_free(&a);
            sb_free(&b);
            ok = false;
            break;
        }
        c.vals[v.id] = inputs[k];
        c.vals[v.id].type = *t;
        borrowed[v.id] = 1;
    }
    for (uint32_t i = 1; i < g->nodes.len && ok; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        if (n->op == OP_CONST) {
            const Attr *a = ir_attr(g, n, "value");
            if (!a || a->kind != ATTR_TENSOR) {
                node_error(g, n, "const has no tensor 'value'");
                ok = false;
                break;
            }
            RefTensor *r = &c.vals[n->out[0].id];
            r->type = ir_value(g, n->out[0])->type;
            r->data = a->t->data;
            r->nbytes = a->t->nbytes;
            borrowed[n->out[0].id] = 1;
            continue;
        }
        for (uint32_t k = 0; k < n->nin; k++)
            if (n->in[k].id && !c.vals[n->in[k].id].data) {
                node_error(g, n, "reference interpreter: operand %u has no value", k);
                ok = false;
            }
        for (uint32_t k = 0; k < n->nout && ok; k++) {
            const Type *t = &ir_value(g, n->out[k])->type;
            if (!ref_tensor_alloc(&c.vals[n->out[k].id], t)) {
                node_error(g, n, "reference interpreter: result %u is too large to allocate", k);
                ok = false;
            }
        }
        if (!ok || !dispatch(&c, n)) {
            ok = false;
            break;
        }
        /* free operands whose last reader this was */
        for (uint32_t k = 0; k < n->nin; k++) {
            uint32_t v = n->in[k].id;
            if (v && last[v] == i && c.vals[v].data) {
                if (!borrowed[v])
                    free(c.vals[v].data);
                memset(&c.vals[v], 0, sizeof c.vals[v]);
            }
        }
    }
    for (uint32_t k = 0; k < nout && ok; k++) {
        uint32_t v = g->outputs.data[k].id;
        if (!c.vals[v].data) {
            diag_error(m->ctx, &gl, "reference interpreter: output %u has no value", k);
            ok = false;
        } else if (!copy_tensor(&outputs[k], &c.vals[v])) {
            diag_error(m->ctx, &gl, "reference interpreter: out of memory");
            ok = false;
        }
    }
    if (!ok)
        for (uint32_t k = 0; k < nout; k++)
            ref_tensor_free(&outputs[k]);
    for (uint32_t v = 0; v < nv; v++)
        if (!borrowed[v])
            free(c.vals[v].data);
    free(c.vals);
    free(last);
    free(borrowed);
    return ok;
}
