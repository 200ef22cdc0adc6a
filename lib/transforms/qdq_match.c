/* qdq_match.c: pattern helpers shared by the QDQ passes (not a pass).
 * Finding the dequantize/quantize around an op, single-consumer checks, annotating integer
 * values with their quantization parameters (through layout ops, which never rescale),
 * activation clamps, retyped constants. Declarations are in pass.h.
 */
#include "pass.h"

#include "numerics/numerics.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

void
qm_uses(Graph *g)
{
    if (!g->uses_valid)
        ir_fill_uses(g);
}

Node *
qm_def_op(Graph *g, ValueId v, OpKind op)
{
    Node *d = ir_def(g, v);
    return d && !d->dead && d->op == op ? d : NULL;
}

bool
qm_is_8bit(ElemType e)
{
    return e == ET_I8 || e == ET_U8;
}

Node *
qm_dq8(Graph *g, ValueId v)
{
    Node *d = qm_def_op(g, v, OP_DEQUANTIZE);
    if (!d || !d->q || d->nin != 1 || !qm_is_8bit(d->q->storage))
        return NULL;
    return d;
}

bool
qm_is_16bit(ElemType e)
{
    return e == ET_I16 || e == ET_U16;
}

Node *
qm_dq_act(Graph *g, ValueId v)
{
    Node *d = qm_def_op(g, v, OP_DEQUANTIZE);
    if (!d || !d->q || d->nin != 1 || !(qm_is_8bit(d->q->storage) || qm_is_16bit(d->q->storage)))
        return NULL;
    return d;
}

Node *
qm_only_user(Graph *g, ValueId v, uint32_t *index)
{
    qm_uses(g);
    if (ir_num_uses(g, v) != 1)
        return NULL;
    const Use *u = ir_uses(g, v);
    if (!u->node.id)
        return NULL;
    if (index)
        *index = u->index;
    return ir_node(g, u->node);
}

float
qm_scale_at(const QParams *q, int64_t c)
{
    return q->n == 1 ? q->scale[0] : q->scale[c];
}

int32_t
qm_zp_at(const QParams *q, int64_t c)
{
    return q->n == 1 ? q->zp[0] : q->zp[c];
}

bool
qm_zp_uniform(const QParams *q)
{
    for (uint32_t i = 1; i < q->n; i++)
        if (q->zp[i] != q->zp[0])
            return false;
    return true;
}

Tensor *
qm_tensor_retype(Module *m, const Tensor *t, const QParams *q)
{
    Tensor *n = arena_alloc(&m->arena, sizeof *n);
    *n = *t;
    n->type.q = q;
    return n;
}

/* ---- annotation of integer values with their quantization parameters ---- */

typedef VEC(uint32_t) U32Vec;

static bool
annot(Graph *g, ValueId v, const QParams *q, U32Vec *undo)
{
    Value *val = ir_value(g, v);
    if (val->type.q)
        return qparams_equal(val->type.q, q);
    if (val->type.elem != q->storage)
        return false;
    if (q->axis >= 0 && q->axis >= val->type.rank)
        return false;
    val->type.q = q;
    vec_push(undo, v.id);
    if (q->axis >= 0)
        return true; /* layout ops may move the axis: annotate only this value */
    Node *d = ir_def(g, v);
    if (d && !d->dead) {
        if (d->op == OP_QUANTIZE && !qparams_equal(d->q, q))
            return false;
        if (op_info(d->op)->flags & OPF_LAYOUT) {
            uint32_t nd = d->op == OP_CONCAT ? d->nin : 1;
            for (uint32_t k = 0; k < nd; k++)
                if (!annot(g, d->in[k], q, undo))
                    return false;
        }
    }
    uint32_t nu = ir_num_uses(g, v);
    const Use *u = ir_uses(g, v);
    for (uint32_t i = 0; i < nu; i++) {
        if (!u[i].node.id)
            continue;
        Node *c = ir_node(g, u[i].node);
        if (c->op == OP_DEQUANTIZE && !qparams_equal(c->q, q))
            return false;
        if ((op_info(c->op)->flags & OPF_LAYOUT) && (c->op == OP_CONCAT || u[i].index == 0))
            for (uint32_t k = 0; k < ir_layout_nout(c); k++)
                if (!annot(g, c->out[k], q, undo))
                    return false;
    }
    return true;
}

bool
qm_annotate(Graph *g, ValueId v, const QParams *q)
{
    qm_uses(g);
    U32Vec undo = {0};
    bool ok = annot(g, v, q, &undo);
    for (uint32_t i = 0; i < undo.len; i++) {
        ValueId u = {undo.data[i]};
        if (!ok) {
            ir_value(g, u)->type.q = NULL;
            continue;
        }
        /* a constant prints its tensor's type: keep the two in step */
        const Tensor *t = ir_const_of(g, u);
        if (t && !t->type.q)
            qm_const_set(g, u, qm_tensor_retype(g->m, t, q));
    }
    vec_free(&undo);
    return ok;
}

/* ---- int32 accumulator bound ---- */

static double
farthest(int64_t lo, int64_t hi, int32_t zp)
{
    double a = fabs((double)lo - zp), b = fabs((double)hi - zp);
    return a > b ? a : b;
}

/* sum |w - zw| over n bytes, as i8 (sgn) or u8 */
static int64_t
abs_dev_sum(const unsigned char *w, size_t n, int32_t zw, bool sgn)
{
    int64_t sum = 0;
    if (sgn)
        for (size_t i = 0; i < n; i++) {
            int32_t d = (int32_t)(int8_t)w[i] - zw;
            sum += d < 0 ? -d : d;
        }
    else
        for (size_t i = 0; i < n; i++) {
            int32_t d = (int32_t)w[i] - zw;
            sum += d < 0 ? -d : d;
        }
    return sum;
}

/* qm_acc_bound's sums for 8-bit weights: bnd[c] = sum |w - zw| over output channel c's weights
 * (conv: a contiguous run per channel; matmul: the channel is the last dimension), in int64.
 * The double sums of the general loop are exact as well (every partial sum stays far below
 * 2^53), so both give the same values. False: other weights. */
static bool
bound_8bit(const Tensor *wc, const QParams *qw, int64_t m, size_t nw, bool conv, double *bnd)
{
    ElemType et = wc->type.elem;
    if ((et != ET_I8 && et != ET_U8) || nw % (size_t)m != 0)
        return false;
    size_t per = nw / (size_t)m;
    const unsigned char *p = wc->data;
    bool sgn = et == ET_I8;
    if (conv) {
        for (int64_t c = 0; c < m; c++)
            bnd[c] = (double)abs_dev_sum(p + (size_t)c * per, per,
                                         qm_zp_at(qw, qw->n == 1 ? 0 : c % (int64_t)qw->n), sgn);
        return true;
    }
    int64_t *sum = xcalloc((size_t)m, sizeof *sum);
    int32_t *zw = xmalloc((size_t)m * sizeof *zw);
    for (int64_t c = 0; c < m; c++)
        zw[c] = qm_zp_at(qw, qw->n == 1 ? 0 : c % (int64_t)qw->n);
    for (size_t r = 0; r < per; r++) {
        const unsigned char *row = p + r * (size_t)m;
        for (int64_t c = 0; c < m; c++) {
            int32_t d = (sgn ? (int32_t)(int8_t)row[c] : (int32_t)row[c]) - zw[c];
            sum[c] += d < 0 ? -d : d;
        }
    }
    for (int64_t c = 0; c < m; c++)
        bnd[c] = (double)sum[c];
    free(sum);
    free(zw);
    return true;
}

void
qm_acc_bound(Graph *g, const Node *n, ValueId w, const QParams *qx, const QParams *qw,
             int64_t m, double *bnd)
{
    double xmax = farthest(qx->qmin, qx->qmax, qx->zp[0]);
    const Tensor *wc = ir_const_of(g, w);
    const Type *wt = &ir_value(g, w)->type;
    size_t nw = type_numel_unchecked(wt);
    bool conv = n->op == OP_CONV || n->op == OP_QCONV;
    bool convt = n->op == OP_CONV_TRANSPOSE || n->op == OP_QCONV_TRANSPOSE;
    int64_t G = conv || convt ? ir_attr_int(g, n, "group", 1) : 1;
    bool shaped = wc && m > 0 && G > 0 && wt->rank >= 2;
    if (shaped && conv)
        shaped = wt->dims[0] == m;
    else if (shaped && convt)
        shaped = wt->dims[1] * G == m && wt->dims[0] % G == 0;
    else if (shaped)
        shaped = wt->dims[wt->rank - 1] == m;
    if (!shaped) {
        double wmax = 0;
        for (uint32_t c = 0; c < qw->n; c++) {
            double f = farthest(qw->qmin, qw->qmax, qw->zp[c]);
            wmax = f > wmax ? f : wmax;
        }
        double k = m > 0 ? (double)nw / (double)m : 0;
        for (int64_t c = 0; c < m; c++)
            bnd[c] = k * xmax * wmax;
        return;
    }
    for (int64_t c = 0; c < m; c++)
        bnd[c] = 0;
    int64_t d0 = wt->dims[0], d1 = wt->dims[1];
    size_t inner = nw / (size_t)(d0 * d1); /* conv: kernel taps; matmul: see below */
    if ((conv || !convt) && bound_8bit(wc, qw, m, nw, conv, bnd)) {
        for (int64_t c = 0; c < m; c++)
            bnd[c] *= xmax;
        return;
    }
    for (size_t i = 0; i < nw; i++) {
        int64_t c, wq; /* output channel, weight parameter index */
        if (conv) {
            c = (int64_t)(i / (nw / (size_t)d0));
            wq = c;
        } else if (convt) {
            int64_t ci = (int64_t)(i / ((size_t)d1 * inner)), j = (int64_t)(i / inner) % d1;
            c = ci / (d0 / G) * d1 + j;
            wq = j;
        } else {
            c = (int64_t)(i % (size_t)m);
            wq = c;
        }
        int32_t zw = qm_zp_at(qw, qw->n == 1 ? 0 : wq % (int64_t)qw->n);
        bnd[c] += fabs((double)tensor_get_i(wc, i) - zw);
    }
    for (int64_t c = 0; c < m; c++)
        bnd[c] *= xmax;
}

/* ---- a quantize's result taken over by integers ---- */

/* y (plain integers, its quantize dropped) becomes `cast x`: x's integers, unchanged. */
static void
reinterpret_as(Graph *g, ValueId x, ValueId y, Loc loc)
{
    NodeId c = ir_add_node(g, OP_CAST, 1, &x, 1, loc);
    ir_set_attr_string(g, c, "to", elem_name(ir_value(g, y)->type.elem));
    ir_set_result(g, c, 0, y);
    g->uses_valid = false;
}

ValueId
qm_take_quantized(Graph *g, NodeId r, ValueId y, const QParams *q, Loc loc)
{
    if (qm_annotate(g, y, q)) {
        ir_set_result(g, r, 0, y);
        g->uses_valid = false;
        return y;
    }
    Type t = ir_value(g, y)->type;
    t.elem = q->storage;
    t.q = q;
    ValueId x = ir_add_result(g, r, 0, ir_value_name(g, y), &t);
    reinterpret_as(g, x, y, loc);
    return x;
}

void
qm_replace_quantized(Graph *g, ValueId y, ValueId x, const QParams *q, Loc loc)
{
    if (qm_annotate(g, y, q))
        ir_replace_all_uses(g, y, x);
    else
        reinterpret_as(g, x, y, loc);
}

/* ---- activations ---- */

bool
qm_const_scalar(Graph *g, ValueId v, double *out)
{
    const Tensor *t = ir_const_of(g, v);
    size_t n;
    if (!t || !type_numel(&t->type, &n) || n != 1)
        return false;
    *out = tensor_get_f(t, 0);
    return true;
}

bool
qm_act_bounds(Graph *g, Node *act, float *lo, float *hi)
{
    if (act->op == OP_RELU) {
        *lo = 0.0f;
        *hi = INFINITY;
        return true;
    }
    if (act->op != OP_CLIP)
        return false;
    *lo = -INFINITY;
    *hi = INFINITY;
    double d;
    if (ir_attr(g, act, "min"))
        *lo = ir_attr_float(g, act, "min", 0);
    if (ir_attr(g, act, "max"))
        *hi = ir_attr_float(g, act, "max", 0);
    if (act->nin > 1 && act->in[1].id) {
        if (!qm_const_scalar(g, act->in[1], &d))
            return false;
        *lo = (float)d;
    }
    if (act->nin > 2 && act->in[2].id) {
        if (!qm_const_scalar(g, act->in[2], &d))
            return false;
        *hi = (float)d;
    }
    return !isnan(*lo) && !isnan(*hi) && *lo <= *hi;
}

void
qm_act_clamp(const QParams *yq, float lo, float hi, int32_t *qlo, int32_t *qhi)
{
    /* quantize is monotone, so quantize(clamp(v, lo, hi)) == clamp(quantize(v), q(lo), q(hi)) */
    *qlo = qn_quantize_f32(lo, yq->scale[0], yq->zp[0], yq->qmin, yq->qmax);
    *qhi = qn_quantize_f32(hi, yq->scale[0], yq->zp[0], yq->qmin, yq->qmax);
}

void
qm_set_clamp(Graph *g, NodeId n, const QParams *yq, int32_t lo, int32_t hi)
{
    if (lo <= yq->qmin && hi >= yq->qmax)
        return;
    int64_t c[2] = {lo > yq->qmin ? lo : yq->qmin, hi < yq->qmax ? hi : yq->qmax};
    ir_set_attr_ints(g, n, "clamp", c, 2);
}

/* Copy every attribute of `from` onto node `to`, except names listed in `skip` (NULL-ended). */
void
qm_copy_attrs(Graph *g, NodeId to, NodeId from, const char *const *skip)
{
    uint32_t na = ir_node(g, from)->nattr;
    for (uint32_t i = 0; i < na; i++) {
        Attr a = ir_node(g, from)->attrs[i];
        bool s = false;
        for (const char *const *p = skip; p && *p && !s; p++)
            s = strcmp(ir_str(g, a.name), *p) == 0;
        if (!s)
            ir_set_attr(g, to, &a);
    }
}

ValueId
qm_add_dq(Graph *g, ValueId in, const QParams *q, const char *name, Loc loc)
{
    Type t = ir_value(g, in)->type;
    t.q = NULL;
    t.elem = ET_F32;
    NodeId n = ir_add_node(g, OP_DEQUANTIZE, 1, &in, 1, loc);
    ir_node(g, n)->q = (QParams *)q;
    return ir_add_result(g, n, 0, name, &t);
}

ValueId
qm_add_q(Graph *g, ValueId in, const QParams *q, const char *name, Loc loc)
{
    Type t = ir_value(g, in)->type;
    t.elem = q->storage;
    t.q = q;
    NodeId n = ir_add_node(g, OP_QUANTIZE, 1, &in, 1, loc);
    ir_node(g, n)->q = (QParams *)q;
    return ir_add_result(g, n, 0, name, &t);
}

/* Replace the tensor of a const node and the type of its value. */
void
qm_const_set(Graph *g, ValueId v, Tensor *t)
{
    Node *d = ir_def(g, v);
    QDQC_ASSERT(d && d->op == OP_CONST);
    ir_set_attr_tensor(g, ir_value(g, v)->def, "value", t);
    ir_value(g, v)->type = t->type;
}

/* ---- bias rounding (weight-fold, qdq-fold) ---- */

static float
out_scale(Graph *g, ValueId v, int depth)
{
    if (depth > 16)
        return 0;
    float best = 0;
    uint32_t nu = ir_num_uses(g, v);
    const Use *us = ir_uses(g, v);
    for (uint32_t i = 0; i < nu; i++) {
        if (!us[i].node.id)
            continue; /* a graph output: no step to protect */
        Node *u = ir_node(g, us[i].node);
        uint32_t idx = us[i].index;
        float s = 0;
        if (u->dead || u->nout != 1)
            continue;
        if (u->op == OP_QUANTIZE) {
            if (!u->q || idx != 0)
                continue;
            s = u->q->scale[0];
            for (uint32_t k = 1; k < u->q->n; k++)
                s = u->q->scale[k] < s ? u->q->scale[k] : s;
            if (!(s > 0) || !isfinite(s))
                s = 0;
        } else if (u->op == OP_RELU || (u->op == OP_CLIP && idx == 0) || u->op == OP_ADD ||
                   u->op == OP_SUB ||
                   ((op_info(u->op)->flags & OPF_LAYOUT) && (idx == 0 || u->op == OP_CONCAT))) {
            /* these pass an additive error of v on to their result unchanged (or smaller) */
            s = out_scale(g, u->out[0], depth + 1);
        }
        if (s > 0 && (best == 0 || s < best))
            best = s;
    }
    return best;
}

float
qm_out_scale(Graph *g, ValueId v)
{
    qm_uses(g);
    return out_scale(g, v, 0);
}

double
qm_quantize_bias(const float *b, float sx, const float *sw, int64_t m, float sy, int32_t *bq)
{
    double worst = 0;
    for (int64_t c = 0; c < m; c++) {
        bq[c] = qn_quantize_bias(b[c], sx, sw[c]);
        double s = (double)(sx * sw[c]); /* the f32 product qn_quantize_bias divides by */
        double err = fabs((double)b[c] - (double)bq[c] * s);
        if (!(err <= INFINITY))
            err = INFINITY; /* NaN bias */
        if (sy > 0 && err / sy > worst)
            worst = err / sy;
    }
    return worst;
}

/* The float bias stays exact: op(x, w, b) becomes add(op(x, w), b') with b' the float bias
 * (times beta) shaped to broadcast over the output channel: [1, m, 1, ...] for Conv and
 * ConvTranspose, [m] for Gemm. The add keeps the op's result value (name and consumers). */
void
qm_bias_to_add(Graph *g, NodeId nid, const float *bf, int64_t m)
{
    Node *n = ir_node(g, nid);
    ValueId y = n->out[0];
    Type yt = ir_value(g, y)->type;
    Loc loc = n->loc;
    int64_t dims[IR_MAX_RANK];
    int rank = 1;
    dims[0] = m;
    if (n->op != OP_GEMM) {
        rank = yt.rank;
        for (int d = 0; d < rank; d++)
            dims[d] = d == 1 ? m : 1;
    }
    Type bt = type_make(ET_F32, rank, dims);
    Tensor *t = ir_tensor_new(g->m, &bt);
    for (int64_t c = 0; c < m; c++)
        tensor_set_f(t, (size_t)c, bf[c]);
    ValueId bv = ir_add_const(g, ir_value_name(g, ir_node(g, nid)->in[2]), t, loc);
    char name[256];
    snprintf(name, sizeof name, "%s_nobias", ir_value_name(g, y));
    n = ir_node(g, nid);
    n->nin = 2;
    if (n->op == OP_GEMM)
        ir_set_attr_float(g, nid, "beta", 1.0f);
    ValueId acc = ir_add_result(g, nid, 0, name, &yt);
    ValueId ins[2] = {acc, bv};
    NodeId a = ir_add_node(g, OP_ADD, 2, ins, 1, loc);
    ir_set_result(g, a, 0, y);
    g->uses_valid = false;
}
