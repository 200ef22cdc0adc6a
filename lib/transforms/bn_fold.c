/* bn_fold.c: fold BatchNormalization into the Conv that feeds it.
 *   conv(x, w, b) -> batchnorm(g, beta, mean, var, eps)  =>  conv(x, w', b')
 * with f[c] = g[c] / sqrt(var[c] + eps) (in double) and b'[c] = f[c] * (b[c] - mean[c]) + beta[c]
 * (b = 0 when absent; a dequantized int32 bias is dequantized first), rounded once to f32.
 * The weight:
 *  - dequantize(const int w) (QDQ graph): the integers stay; the factor goes into the scale,
 *    s'[c] = (float)(s[c] * |f[c]|), per channel on axis 0. A negative factor negates the channel
 *    in the integers: i8 w' = -w, zp' = -zp, or when the channel holds -128 (or zp is -128)
 *    w' = ~w = -w - 1, zp' = -zp - 1 (same differences w - zp, negated, no overflow); u8
 *    w' = 255 - w, zp' = 255 - zp. Exact up to the f32 rounding of the new scales. Per-tensor
 *    weights become per-channel this way (remark). A zero factor cannot be a scale: not folded.
 *  - a float constant: w'[c] = w[c] * f[c] in double, rounded to f32.
 * The new bias is float; weight-fold (run after this pass) quantizes it with the new scales.
 * conv -> div(per-channel constant d) -> batchnorm (PyTorch QAT export) folds too, with
 * f[c] = g[c] / (d[c] sqrt(var[c] + eps)) and b'[c] = f[c] * (b[c] - mean[c] d[c]) + beta[c].
 * The conv (and div) result must have the next op as its only consumer.
 * needs: constants for the batchnorm operands.  keeps: the batchnorm's result name.
 * leaves stale: uses.
 */
#include "pass.h"

#include "numerics/numerics.h"

#include <math.h>

static bool
const_vec(Graph *g, ValueId v, int64_t m, double *out)
{
    const Tensor *t = ir_const_of(g, v);
    if (!t || !elem_is_float(t->type.elem) || (int64_t)type_numel_unchecked(&t->type) != m)
        return false;
    for (int64_t c = 0; c < m; c++)
        out[c] = tensor_get_f(t, (size_t)c);
    return true;
}

/* Float values of the conv bias (absent: zeros). */
static bool
bias_values(Graph *g, Node *conv, int64_t m, double *b)
{
    for (int64_t c = 0; c < m; c++)
        b[c] = 0;
    if (conv->nin < 3 || !conv->in[2].id)
        return true;
    if (const_vec(g, conv->in[2], m, b))
        return true;
    Node *d = qm_def_op(g, conv->in[2], OP_DEQUANTIZE);
    const Tensor *t = d && d->q ? ir_const_of(g, d->in[0]) : NULL;
    if (!t || (int64_t)type_numel_unchecked(&t->type) != m || (d->q->axis > 0))
        return false;
    for (int64_t c = 0; c < m; c++)
        b[c] = qn_dequantize((int32_t)tensor_get_i(t, (size_t)c), qm_scale_at(d->q, c),
                             qm_zp_at(d->q, c));
    return true;
}

/* New weight operand, or VNONE if the weight cannot absorb f. */
static ValueId
fold_weight(Graph *g, NodeId cid, const double *f, int64_t m)
{
    Node *conv = ir_node(g, cid);
    ValueId wv = conv->in[1];
    Loc loc = conv->loc;
    const Tensor *w = ir_const_of(g, wv);
    if (w && elem_is_float(w->type.elem)) {
        Tensor *nw = ir_tensor_new(g->m, &w->type);
        size_t n = type_numel_unchecked(&w->type), per = n / (size_t)m;
        for (size_t i = 0; i < n; i++)
            tensor_set_f(nw, i, (float)(tensor_get_f(w, i) * f[i / per]));
        return ir_add_const(g, ir_value_name(g, wv), nw, loc);
    }
    Node *d = qm_def_op(g, wv, OP_DEQUANTIZE);
    w = d && d->q ? ir_const_of(g, d->in[0]) : NULL;
    if (!w || !qm_is_8bit(w->type.elem) || (d->q->axis >= 0 && d->q->axis != 0))
        return VNONE;
    const QParams *q = d->q;
    for (int64_t c = 0; c < m; c++)
        if (!(f[c] != 0) || !isfinite(f[c]))
            return VNONE;
    bool was_tensor = q->axis < 0;
    QParams *nq = ir_qparams_new(g->m, q->storage, 0, (uint32_t)m);
    nq->qmin = q->qmin;
    nq->qmax = q->qmax;
    Type wt = w->type;
    wt.q = NULL;
    Tensor *nw = ir_tensor_new(g->m, &wt);
    size_t n = type_numel_unchecked(&wt), per = n / (size_t)m;
    for (int64_t c = 0; c < m; c++) {
        double s = (double)qm_scale_at(q, c) * fabs(f[c]);
        nq->scale[c] = (float)s;
        int32_t zp = qm_zp_at(q, c);
        bool neg = f[c] < 0, use_not = false;
        if (neg && q->storage == ET_I8) {
            use_not = zp == -128;
            for (size_t i = 0; i < per && !use_not; i++)
                use_not = tensor_get_i(w, (size_t)c * per + i) == -128;
        }
        for (size_t i = 0; i < per; i++) {
            int64_t v = tensor_get_i(w, (size_t)c * per + i);
            if (neg)
                v = q->storage == ET_U8 ? 255 - v : use_not ? -v - 1 : -v;
            tensor_set_i(nw, (size_t)c * per + i, v);
        }
        nq->zp[c] = !neg ? zp : q->storage == ET_U8 ? 255 - zp : use_not ? -zp - 1 : -zp;
        if (!(nq->scale[c] > 0) || !isfinite(nq->scale[c]))
            return VNONE;
    }
    if (was_tensor)
        node_remark(g, ir_node(g, cid),
                    "per-tensor weight quantization becomes per-channel to absorb batchnorm");
    nw = qm_tensor_retype(g->m, nw, nq);
    ValueId c = ir_add_const(g, ir_value_name(g, d->in[0]), nw, loc);
    return qm_add_dq(g, c, nq, ir_value_name(g, wv), loc);
}

static bool
fold_one(Graph *g, NodeId bid)
{
    Node *bn = ir_node(g, bid);
    Node *conv = qm_def_op(g, bn->in[0], OP_CONV);
    /* PyTorch QAT exports conv -> div(per-channel constant) -> batchnorm */
    Node *div = conv ? NULL : qm_def_op(g, bn->in[0], OP_DIV);
    if (div && qm_only_user(g, div->out[0], NULL))
        conv = qm_def_op(g, div->in[0], OP_CONV);
    if (!conv || !qm_only_user(g, conv->out[0], NULL))
        return false;
    NodeId cid = qm_id(g, conv);
    int64_t m = ir_value(g, conv->out[0])->type.dims[1];
    double *gm = xmalloc(6 * (size_t)m * sizeof(double));
    double *beta = gm + m, *mu = beta + m, *var = mu + m, *b = var + m, *dv = b + m;
    bool ok = const_vec(g, bn->in[1], m, gm) && const_vec(g, bn->in[2], m, beta) &&
              const_vec(g, bn->in[3], m, mu) && const_vec(g, bn->in[4], m, var) &&
              bias_values(g, conv, m, b);
    for (int64_t c = 0; c < m; c++)
        dv[c] = 1.0;
    if (ok && div) {
        /* the divisor must be per channel: shape [1, m, 1, ...] or [m, 1, ...] */
        const Tensor *t = ir_const_of(g, div->in[1]);
        const Type *ct = t ? &t->type : NULL;
        int rank = ir_value(g, conv->out[0])->type.rank;
        bool per_channel = ct && (int64_t)type_numel_unchecked(ct) == m &&
                           ((ct->rank == rank && ct->dims[1] == m) ||
                            (ct->rank == rank - 1 && ct->dims[0] == m));
        ok = per_channel && const_vec(g, div->in[1], m, dv);
        for (int64_t c = 0; ok && c < m; c++)
            ok = dv[c] != 0 && isfinite(dv[c]);
    }
    ValueId nw = VNONE;
    if (ok) {
        double eps = ir_attr_float(g, bn, "epsilon", 1e-5f);
        for (int64_t c = 0; c < m; c++) {
            /* batchnorm(conv / d) = f * (conv - mean * d) + beta with f = g / (d sqrt(var + eps)) */
            double f = gm[c] / sqrt(var[c] + eps) / dv[c];
            b[c] = f * (b[c] - mu[c] * dv[c]) + beta[c];
            gm[c] = f; /* gm now holds the factors */
        }
        nw = fold_weight(g, cid, gm, m);
        ok = nw.id != 0;
        if (!ok)
            node_remark(g, ir_node(g, bid), "not folded: the weight cannot absorb the factor");
    }
    if (ok) {
        Type bt = type_make(ET_F32, 1, &m);
        Tensor *t = ir_tensor_new(g->m, &bt);
        for (int64_t c = 0; c < m; c++)
            tensor_set_f(t, (size_t)c, (float)b[c]);
        ValueId bv = ir_add_const(g, "bn_bias", t, ir_node(g, bid)->loc);
        ValueId ins[3] = {ir_node(g, cid)->in[0], nw, bv};
        NodeId r = ir_add_node(g, OP_CONV, 3, ins, 1, ir_node(g, cid)->loc);
        qm_copy_attrs(g, r, cid, NULL);
        ir_node(g, cid)->dead = true;
        ir_node(g, bid)->dead = true; /* a div in between dies with it (unused) */
        ir_set_result(g, r, 0, ir_node(g, bid)->out[0]);
        g->uses_valid = false;
    }
    free(gm);
    return ok;
}

bool
pass_bn_fold(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (!n->dead && n->op == OP_BATCHNORM)
            changed |= fold_one(g, (NodeId){i});
    }
    return changed;
}
