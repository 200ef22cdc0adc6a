/* qdq_fold.c: fold dequantize -> {Conv, ConvTranspose, MatMul, Gemm} [-> Relu/Clip] [-> quantize]
 * into one integer op (qconv, qconv_transpose, qmatmul).
 *  - Operands: the input and the weight must come from static dequantizes: the input i8/u8 or
 *    i16/u16 (16-bit activations: Conv, MatMul and Gemm with a constant weight; their
 *    accumulator is int64, docs/numerics.md), per tensor; the weight i8/u8 per tensor or per
 *    axis on its output-channel axis (Conv 0,
 *    ConvTranspose 1, MatMul/Gemm last). The integer operands take the dequantizes' parameters
 *    (qm_annotate); the dequantizes stay for any other consumer and die otherwise.
 *  - Bias: absent, or dequantize(const i32, zp 0) (weight-fold makes it so; a Gemm C may be
 *    [1,N] or one value, broadcast). A bias scale that differs from the f32 product sx*sw[c]
 *    is rescaled now: round_half_even(b*sb/(sx*sw)) in f64, saturated, with a remark; when
 *    that moves some channel's bias by more than QM_BIAS_MAX_STEPS steps of the quantize after
 *    the op (qm_out_scale; possible only when sx*sw > sy), the bias stays exact instead:
 *    op(x, w, b) becomes add(op(x, w), f32 b) (qm_bias_to_add, as weight-fold does for a coarse
 *    float bias) and the op folds without it (f32 epilogue), with a remark.
 *  - op -> Add(constant bias), the op without a bias of its own: MatMul (nn.Linear on rank > 2
 *    inputs), Gemm, and the TensorFlow-style Conv / ConvTranspose whose bias is added after
 *    it. The add folds into the integer op's int32 bias when the op's result has no other
 *    consumer, the bias varies along the output channel axis only (MatMul/Gemm: the last;
 *    Conv: 1), and its int32 form is exact: dequantize(const i32, zp 0) with scale exactly
 *    sx*sw[c] (no rescaling), or an f32 constant quantized by qn_quantize_bias with a rounding
 *    error of at most QM_BIAS_MAX_STEPS steps of the quantize after it. The chain below then
 *    starts after the add. Otherwise the add stays float (remark why).
 *  - Result: with a following per-tensor quantize (the op's only consumer, possibly through one
 *    Relu/Clip that is the only consumer) the integer op produces the quantized value itself:
 *    requantization per docs/numerics.md. A Relu/Clip in between becomes clamp=[q(lo), q(hi)]
 *    (exact: quantize is monotone, so quantize(clip(v)) == clamp(quantize(v))); a Relu whose
 *    bound the quantize already clips leaves no clamp. Without such a quantize (TensorRT style,
 *    or the float result has other consumers) the integer op has an f32 result: the
 *    dequantizing epilogue (float)acc * (sx*sw[c]) replaces the float op, and what follows
 *    stays as it was.
 *  - Gemm folds when transA=0, transB=0, alpha=1, beta=1 (weight-fold normalises constants).
 * Not folded (left for float-islands to report): weights other than 8-bit, activations other
 * than 8/16-bit, 16-bit activations of a ConvTranspose or a run-time weight, per-axis activations,
 * a float (unquantized) bias, values whose integers already carry other parameters.
 * needs: weight-fold for float biases.  keeps: value names of the results.  leaves stale: uses.
 */
#include "pass.h"

#include "numerics/numerics.h"

#include <math.h>
#include <stdio.h>

static OpKind
int_op(OpKind op)
{
    switch (op) {
    case OP_CONV: return OP_QCONV;
    case OP_CONV_TRANSPOSE: return OP_QCONV_TRANSPOSE;
    case OP_MATMUL: case OP_GEMM: return OP_QMATMUL;
    default: return OP_INVALID;
    }
}

/* Weight scale index of output channel c (ConvTranspose: per-axis on axis 1, M/group scales). */
static int64_t
wchan(const QParams *qw, int64_t c)
{
    return qw->n == 1 ? 0 : c % (int64_t)qw->n;
}

/* Whether a bias of type bt added to a result of type yt (numpy broadcasting) varies along
 * the result's channel axis ca only: rank <= yt's, every dimension 1 except the one aligned
 * with ca, which is 1 or m. */
static bool
channel_only(const Type *bt, const Type *yt, int ca, int64_t m)
{
    if (bt->rank > yt->rank)
        return false;
    for (int d = 0; d < bt->rank; d++)
        if (bt->dims[d] != 1 && (d + yt->rank - bt->rank != ca || bt->dims[d] != m))
            return false;
    return true;
}

/* bias b (i32, scale sb) at the accumulator scale want: round_half_even(b*sb/want) in f64,
 * saturated to int32. */
static int64_t
rescale_bias(int64_t v, float sb, float want)
{
    return qn_saturate(qn_round_half_even_f64((double)v * sb / want), INT32_MIN, INT32_MAX);
}

/* Plain i32 bias [m] for the integer op from bias value bv = dequantize(const i32, zp 0), or
 * VNONE with *ok false. The constant may be [m], or [1, m] / a single value (Gemm C, a
 * MatMul's bias add; broadcast). A bias scale other than sx*sw[c] is rescaled (with a remark)
 * unless `exact` is set; then it is refused (*why says so). */
static ValueId
int_bias(Graph *g, NodeId nid, ValueId bv, const QParams *qx, const QParams *qw, int64_t m,
         bool exact, bool *ok, const char **why)
{
    *ok = true;
    *why = NULL;
    if (!bv.id)
        return VNONE;
    *ok = false;
    *why = "bias is not an int32 dequantize";
    Node *db = qm_def_op(g, bv, OP_DEQUANTIZE);
    if (!db || !db->q || db->q->storage != ET_I32 || db->nin != 1)
        return VNONE;
    const Tensor *b = ir_const_of(g, db->in[0]);
    if (!b)
        return VNONE;
    size_t nb = type_numel_unchecked(&b->type);
    OpKind op = ir_node(g, nid)->op;
    if (exact ? nb != 1 && (int64_t)nb != m /* an add's bias: shape checked by bias_add */
              : op == OP_CONV || op == OP_CONV_TRANSPOSE
                    ? b->type.rank != 1 || b->type.dims[0] != m
                    : !channel_only(&b->type, &b->type, b->type.rank - 1, m))
        return VNONE;
    if (db->q->axis >= 0 && (b->type.dims[db->q->axis] != m || (int64_t)db->q->n != m))
        return VNONE;
    for (uint32_t i = 0; i < db->q->n; i++)
        if (db->q->zp[i] != 0)
            return VNONE;
    Type bt = type_make(ET_I32, 1, &m);
    Tensor *nt = ir_tensor_new(g->m, &bt);
    bool rescaled = false;
    for (int64_t c = 0; c < m; c++) {
        int64_t i = nb == 1 ? 0 : c;
        float want = qx->scale[0] * qm_scale_at(qw, wchan(qw, c));
        float sb = qm_scale_at(db->q, i);
        int64_t v = tensor_get_i(b, (size_t)i);
        if (sb != want) {
            if (exact) {
                *why = "bias scale differs from input scale * weight scale";
                return VNONE;
            }
            v = rescale_bias(v, sb, want);
            rescaled = true;
        }
        tensor_set_i(nt, (size_t)c, v);
    }
    if (rescaled)
        node_remark(g, ir_node(g, nid),
                    "bias scale differs from input scale * weight scale: bias rescaled");
    *ok = true;
    *why = NULL;
    if (!rescaled && !ir_value(g, db->in[0])->type.q && b->type.rank == 1 && (int64_t)nb == m)
        return db->in[0]; /* already a plain i32 constant */
    return ir_add_const(g, ir_value_name(g, db->in[0]), nt, ir_node(g, nid)->loc);
}

/* Whether v is a bias-like constant: an f32 constant or the dequantize of a constant. */
static bool
const_bias(Graph *g, ValueId v)
{
    const Tensor *t = ir_const_of(g, v);
    if (t)
        return elem_is_float(t->type.elem);
    Node *d = qm_def_op(g, v, OP_DEQUANTIZE);
    return d && d->nin == 1 && ir_const_of(g, d->in[0]);
}

/* op -> Add(constant bias): the nn.Linear export of MatMul, and the TensorFlow-style Conv /
 * ConvTranspose / Gemm whose bias is added after the op. The add folds into the integer op's
 * int32 bias when the op has no bias of its own, its result has no other consumer, the bias
 * varies along the output channel axis ca only (MatMul, Gemm: the last, N; Conv: 1), and its
 * int32 form is exact: dequantize(const i32, zp 0) with scale sx*sw[c], or an f32 constant
 * quantized as weight-fold does (qn_quantize_bias) with a rounding error of at most
 * QM_BIAS_MAX_STEPS steps of the quantize after it. Returns the add (its operand index of the
 * bias in *bk), or NULL; each refusal of a constant bias add says why. */
static Node *
bias_add(Graph *g, Node *n, int ca, int64_t m, uint32_t *bk)
{
    ValueId y = n->out[0];
    qm_uses(g);
    uint32_t nu = ir_num_uses(g, y);
    const Use *us = ir_uses(g, y);
    Node *add = NULL;
    uint32_t idx = 0;
    for (uint32_t i = 0; i < nu && !add; i++) {
        if (!us[i].node.id)
            continue;
        Node *u = ir_node(g, us[i].node);
        if (!u->dead && u->op == OP_ADD && u->nin == 2 && const_bias(g, u->in[1 - us[i].index])) {
            add = u;
            idx = us[i].index;
        }
    }
    if (!add)
        return NULL;
    const char *iname = op_info(int_op(n->op))->name, *fname = op_info(n->op)->name;
    if (n->nin > 2 && n->in[2].id) {
        node_remark(g, add, "bias add not folded into the %s: the %s has a bias of its own",
                    iname, fname);
        return NULL;
    }
    if (nu != 1) {
        node_remark(g, add, "bias add not folded into the %s: the %s result has other "
                    "consumers", iname, fname);
        return NULL;
    }
    *bk = 1 - idx;
    ValueId bv = add->in[*bk];
    const Type *bt = &ir_value(g, bv)->type, *yt = &ir_value(g, y)->type;
    if (!channel_only(bt, yt, ca, m)) {
        node_remark(g, add, "bias add not folded into the %s: the bias varies along another "
                    "axis than %s", iname, n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE
                                          ? "the output channels (1)" : "the last (N)");
        return NULL;
    }
    if (qm_def_op(g, bv, OP_DEQUANTIZE))
        return add; /* int_bias checks it (exact scales only) */
    const Tensor *b = ir_const_of(g, bv);
    if (b->type.elem != ET_F32) {
        node_remark(g, add, "bias add not folded into the %s: the bias is %s, not f32 "
                    "or a dequantized int32", iname, elem_name(b->type.elem));
        return NULL;
    }
    return add;
}

/* An int32 bias (dequantize(const i32, zp 0), [m] or one value) at a scale other than sx*sw[c]
 * is rescaled by int_bias; that moves it by up to half an accumulator step sx*sw[c], i.e. up
 * to (sx*sw[c]/sy)/2 output steps. When some channel's actual error |b - b'*sx*sw[c]| (b the
 * dequantized f32 bias, what the literal graph adds) exceeds QM_BIAS_MAX_STEPS output steps
 * (qm_out_scale), the bias stays exact: op(x, w, b) becomes add(op(x, w), b) with b in f32
 * (qm_bias_to_add, as weight-fold does for a coarse float bias). True if it split the node. */
static bool
coarse_int_bias(Graph *g, NodeId nid, const QParams *qx, const QParams *qw, int64_t m)
{
    Node *n = ir_node(g, nid);
    if (n->nin < 3 || !n->in[2].id)
        return false;
    Node *db = qm_def_op(g, n->in[2], OP_DEQUANTIZE);
    if (!db || !db->q || db->q->storage != ET_I32 || db->nin != 1)
        return false;
    const Tensor *b = ir_const_of(g, db->in[0]);
    size_t nb = b ? type_numel_unchecked(&b->type) : 0;
    if (!b || (nb != 1 && (int64_t)nb != m) || (db->q->n != 1 && (int64_t)db->q->n != m))
        return false; /* int_bias refuses it */
    float sy = qm_out_scale(g, n->out[0]);
    if (!(sy > 0))
        return false;
    float *bf = xmalloc((size_t)m * sizeof *bf);
    double worst = 0;
    for (int64_t c = 0; c < m; c++) {
        int64_t i = nb == 1 ? 0 : c;
        float want = qx->scale[0] * qm_scale_at(qw, wchan(qw, c));
        float sb = qm_scale_at(db->q, i);
        int64_t v = tensor_get_i(b, (size_t)i);
        bf[c] = qn_dequantize((int32_t)v, sb, qm_zp_at(db->q, i));
        if (sb == want)
            continue;
        double err = fabs((double)bf[c] - (double)rescale_bias(v, sb, want) * (double)want) / sy;
        if (!(err <= INFINITY))
            err = INFINITY;
        worst = err > worst ? err : worst;
    }
    bool split = worst > QM_BIAS_MAX_STEPS;
    if (split) {
        node_remark(g, n, "int32 bias kept exact (a float add after the integer op): rescaled "
                    "to input scale * weight scale it would move the result by up to %.3g "
                    "output steps (scale %g), more than %g", worst, (double)sy,
                    QM_BIAS_MAX_STEPS);
        qm_bias_to_add(g, nid, bf, m);
    }
    free(bf);
    return split;
}

/* The int32 [m] bias of a float bias constant bv (broadcast along the last axis) with its
 * rounding check; VNONE (with a remark on the add) when the rounding is too coarse. */
static ValueId
float_bias(Graph *g, Node *add, ValueId bv, const QParams *qx, const QParams *qw, int64_t m)
{
    const Tensor *b = ir_const_of(g, bv);
    size_t nb = type_numel_unchecked(&b->type);
    float *bf = xmalloc((size_t)m * 2 * sizeof(float) + (size_t)m * sizeof(int32_t));
    float *sw = bf + m;
    int32_t *bq = (int32_t *)(sw + m);
    for (int64_t c = 0; c < m; c++) {
        bf[c] = (float)tensor_get_f(b, nb == 1 ? 0 : (size_t)c);
        sw[c] = qm_scale_at(qw, wchan(qw, c));
    }
    float sy = qm_out_scale(g, add->out[0]);
    double steps = qm_quantize_bias(bf, qx->scale[0], sw, m, sy, bq);
    ValueId r = VNONE;
    if (steps > QM_BIAS_MAX_STEPS) {
        node_remark(g, add, "bias add stays float: rounded to int32 at scale input scale * "
                    "weight scale the bias would move the result by up to %.3g output steps "
                    "(scale %g), more than %g", steps, (double)sy, QM_BIAS_MAX_STEPS);
    } else {
        Type t = type_make(ET_I32, 1, &m);
        Tensor *bt = ir_tensor_new(g->m, &t);
        for (int64_t c = 0; c < m; c++)
            tensor_set_i(bt, (size_t)c, bq[c]);
        char name[256];
        snprintf(name, sizeof name, "%s_q", ir_value_name(g, bv));
        r = ir_add_const(g, name, bt, add->loc);
    }
    free(bf);
    return r;
}

/* The int32 accumulator (docs/numerics.md): the worst case of the products
 * (qm_acc_bound) plus the int32 bias b must stay within int32, or the reference interpreter
 * (exact) and compiled code (two's complement) would part. */
enum { ACC_FITS, ACC_PRODUCTS, ACC_BIAS_ADD, ACC_OWN_BIAS };

static int
acc_overflow(Graph *g, NodeId nid, ValueId w, const QParams *qx, const QParams *qw, int64_t m,
             ValueId b, bool from_add)
{
    double *bnd = xmalloc((size_t)(m > 0 ? m : 1) * sizeof *bnd);
    qm_acc_bound(g, ir_node(g, nid), w, qx, qw, m, bnd);
    const Tensor *bt = b.id ? ir_const_of(g, b) : NULL;
    int r = ACC_FITS;
    int64_t bad = -1;
    double worst = 0;
    for (int64_t c = 0; c < m && r != ACC_PRODUCTS; c++) {
        if (bnd[c] > INT32_MAX) {
            r = ACC_PRODUCTS;
            bad = c;
            worst = bnd[c];
        } else if (bt && bad < 0 &&
                   ((double)tensor_get_i(bt, (size_t)c) + bnd[c] > INT32_MAX ||
                    (double)tensor_get_i(bt, (size_t)c) - bnd[c] < INT32_MIN)) {
            r = from_add ? ACC_BIAS_ADD : ACC_OWN_BIAS;
            bad = c;
            worst = bnd[c];
        }
    }
    free(bnd);
    Node *n = ir_node(g, nid);
    const char *name = op_info(int_op(n->op))->name;
    if (r == ACC_PRODUCTS) {
        node_warning(g, n, "int32 accumulator may overflow: the products of output channel "
                     "%lld can reach %.0f, beyond 2^31 - 1; not folded into a %s (stays float)",
                     (long long)bad, worst, name);
    } else if (r != ACC_FITS) {
        int64_t bv = tensor_get_i(bt, (size_t)bad);
        node_warning(g, n, "int32 accumulator may overflow: output channel %lld's bias %lld "
                     "plus or minus products of up to %.0f leaves the int32 range; the bias is "
                     "added in float after the integer %s", (long long)bad, (long long)bv, worst, name);
    }
    if (r == ACC_OWN_BIAS) {
        /* keep what the literal graph adds: the dequantized int32 bias */
        Node *db = qm_def_op(g, n->in[2], OP_DEQUANTIZE);
        const Tensor *bo = ir_const_of(g, db->in[0]);
        size_t nb = type_numel_unchecked(&bo->type);
        float *bf = xmalloc((size_t)m * sizeof *bf);
        for (int64_t c = 0; c < m; c++) {
            size_t i = nb == 1 ? 0 : (size_t)c;
            bf[c] = qn_dequantize((int32_t)tensor_get_i(bo, i), qm_scale_at(db->q, (int64_t)i),
                                  qm_zp_at(db->q, (int64_t)i));
        }
        qm_bias_to_add(g, nid, bf, m);
        free(bf);
    }
    return r;
}

/* 16-bit activations fold into qconv and qmatmul with a constant weight only (remark why). */
static bool
a16_foldable(Graph *g, Node *n, Node *dw)
{
    if (n->op == OP_CONV_TRANSPOSE) {
        node_remark(g, n, "not folded: 16-bit activations fold into qconv and qmatmul only, "
                    "not qconv_transpose");
        return false;
    }
    if (!ir_const_of(g, dw->in[0])) {
        node_remark(g, n, "not folded: 16-bit activations need a constant 8-bit weight (no "
                    "run-time 16-bit qmatmul)");
        return false;
    }
    return true;
}

static bool
fold_one(PassCtx *pc, Graph *g, NodeId nid)
{
    (void)pc;
    Node *n = ir_node(g, nid);
    OpKind qop = int_op(n->op);
    Node *dx = qm_dq_act(g, n->in[0]), *dw = qm_dq8(g, n->in[1]);
    if (!dx || !dw)
        return false;
    bool a16 = qm_is_16bit(dx->q->storage); /* 16-bit activations, 8-bit weights */
    if (a16 && !a16_foldable(g, n, dw))
        return false;
    if (dx->q->axis >= 0) {
        node_remark(g, n, "input is quantized per channel: not folded");
        return false;
    }
    /* the integer conv kernels are 1-D and 2-D (lib/codegen/llvm_kernels_conv.c); a 3-D conv
     * stays a float island, which the float kernels compute (up to 3 spatial dimensions) */
    if (n->op == OP_CONV && ir_value(g, n->in[0])->type.rank > 4) {
        node_remark(g, n, "not folded into a qconv: %d spatial dimensions (the integer convs "
                    "are 1-D and 2-D)", ir_value(g, n->in[0])->type.rank - 2);
        return false;
    }
    const Type *wt = &ir_value(g, dw->in[0])->type;
    int want_axis = n->op == OP_CONV ? 0 : n->op == OP_CONV_TRANSPOSE ? 1 : wt->rank - 1;
    if (dw->q->axis >= 0 && dw->q->axis != want_axis) {
        node_remark(g, n, "weight is quantized on axis %d, expected %d: not folded",
                    dw->q->axis, want_axis);
        return false;
    }
    if (n->op == OP_GEMM && (ir_attr_int(g, n, "transA", 0) || ir_attr_int(g, n, "transB", 0) ||
                             ir_attr_float(g, n, "alpha", 1) != 1.0f ||
                             ir_attr_float(g, n, "beta", 1) != 1.0f))
        return false;
    const Type *yt = &ir_value(g, n->out[0])->type;
    int64_t m = n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE ? yt->dims[1]
                                                                : yt->dims[yt->rank - 1];
    ValueId x = dx->in[0], w = dw->in[0];
    const QParams *qx = dx->q, *qw = dw->q;
    int ca = n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE ? 1 : yt->rank - 1;
    bool w2 = wt->rank >= 2;
    bool split = coarse_int_bias(g, nid, qx, qw, m);
    n = ir_node(g, nid); /* after a split the node and value arrays may have moved: wt, yt */
    /* op -> Add(bias): the add's result is the one the integer op replaces */
    uint32_t bk = 0;
    Node *badd = !split && (n->op != OP_MATMUL || w2) ? bias_add(g, n, ca, m, &bk) : NULL;
    ValueId fbias = VNONE; /* the bias operand: the node's own, or the add's */
    if (badd)
        fbias = badd->in[bk];
    else if (n->nin > 2)
        fbias = n->in[2];
    NodeId addid = qm_id(g, badd);
    ValueId res = badd ? badd->out[0] : n->out[0];
    /* the consumer chain: [act] quantize */
    Node *act = NULL, *q = NULL;
    Node *u = qm_only_user(g, res, NULL);
    float lo = -INFINITY, hi = INFINITY;
    if (u && (u->op == OP_RELU || u->op == OP_CLIP) && qm_act_bounds(g, u, &lo, &hi)) {
        Node *u2 = qm_only_user(g, u->out[0], NULL);
        if (u2 && u2->op == OP_QUANTIZE)
            act = u, u = u2;
    }
    if (u && u->op == OP_QUANTIZE && u->q && u->q->axis < 0 && u->nin == 1 &&
        u->q->storage != ET_I4 && u->q->storage != ET_U4 && u->q->storage != ET_I32)
        q = u;
    else
        act = NULL;
    NodeId qid = qm_id(g, q), aid = qm_id(g, act);
    if (!qm_annotate(g, x, qx) || !qm_annotate(g, w, qw)) {
        node_remark(g, ir_node(g, nid),
                    "an operand's integers already carry other parameters: not folded");
        return false;
    }
    bool bias_ok = true;
    const char *why = NULL;
    ValueId b = VNONE;
    if (badd && !qm_def_op(g, fbias, OP_DEQUANTIZE)) {
        b = float_bias(g, qm_node(g, addid), fbias, qx, qw, m);
        if (!b.id) { /* the add stays float; the op folds alone */
            addid = NNONE;
            res = ir_node(g, nid)->out[0];
            qid = aid = NNONE;
        }
    } else {
        b = int_bias(g, nid, fbias, qx, qw, m, badd != NULL, &bias_ok, &why);
        if (!bias_ok && badd) {
            node_remark(g, qm_node(g, addid), "bias add not folded into the %s: %s",
                        op_info(qop)->name, why);
            addid = NNONE;
            res = ir_node(g, nid)->out[0];
            qid = aid = NNONE;
            bias_ok = true;
        }
    }
    if (!bias_ok) {
        node_remark(g, ir_node(g, nid), "%s: not folded", why);
        return false;
    }
    /* 16-bit activations accumulate in int64 (docs/numerics.md, "The accumulator of 16-bit activations"): with an
     * int32 bias and at most 2^24 products of at most 65535 * 255, nothing can overflow */
    switch (a16 ? ACC_FITS : acc_overflow(g, nid, w, qx, qw, m, b, addid.id != 0)) {
    case ACC_FITS:
        break;
    case ACC_PRODUCTS:
        return false;
    case ACC_BIAS_ADD: /* the add stays float; the op folds alone */
        b = VNONE;
        addid = NNONE;
        res = ir_node(g, nid)->out[0];
        qid = aid = NNONE;
        break;
    case ACC_OWN_BIAS: /* split: the op has no bias now, an f32 result and an add after it */
        b = VNONE;
        res = ir_node(g, nid)->out[0];
        qid = aid = NNONE;
        break;
    }
    n = ir_node(g, nid);
    ValueId ins[3] = {x, w, b};
    Loc loc = n->loc;
    NodeId r = ir_add_node(g, qop, b.id ? 3 : 2, ins, 1, loc);
    n = ir_node(g, nid); /* ir_add_node may move the node array */
    static const char *const gemm_skip[] = {"transA", "transB", "alpha", "beta", NULL};
    qm_copy_attrs(g, r, nid, n->op == OP_GEMM ? gemm_skip : NULL);
    n = ir_node(g, nid);
    n->dead = true;
    if (addid.id)
        ir_node(g, addid)->dead = true;
    q = qm_node(g, qid);
    act = qm_node(g, aid);
    if (q) {
        ValueId yv = q->out[0];
        const QParams *yq = q->q;
        if (act) {
            int32_t qlo, qhi;
            qm_act_clamp(yq, lo, hi, &qlo, &qhi);
            qm_set_clamp(g, r, yq, qlo, qhi);
            act->dead = true;
        }
        q->dead = true;
        qm_take_quantized(g, r, yv, yq, q->loc);
    } else {
        ir_set_result(g, r, 0, res);
    }
    return true;
}

/* An integer op this pass did not make (text IR, MLIR, ONNX ConvInteger / MatMulInteger): the
 * same bound, a warning only (docs/numerics.md: the reference then reports an overflow and
 * compiled code wraps). */
static void
check_int_op(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    const QParams *qx = ir_value(g, n->in[0])->type.q, *qw = ir_value(g, n->in[1])->type.q;
    const Type *yt = &ir_value(g, n->out[0])->type;
    if (!qx || !qw || qx->axis >= 0 || yt->rank < 1 || qm_is_16bit(qx->storage))
        return; /* 16-bit activations: int64 accumulator */
    int64_t m = n->op == OP_QMATMUL ? yt->dims[yt->rank - 1] : yt->rank > 1 ? yt->dims[1] : 0;
    const Tensor *bt = n->nin > 2 && n->in[2].id ? ir_const_of(g, n->in[2]) : NULL;
    if (m <= 0 || (bt && type_numel_unchecked(&bt->type) != (size_t)m))
        return;
    double *bnd = xmalloc((size_t)m * sizeof *bnd);
    qm_acc_bound(g, n, n->in[1], qx, qw, m, bnd);
    for (int64_t c = 0; c < m; c++) {
        double b = bt ? (double)tensor_get_i(bt, (size_t)c) : 0;
        if (b + bnd[c] > INT32_MAX || b - bnd[c] < INT32_MIN) {
            node_warning(g, n, "int32 accumulator may overflow: output channel %lld's bias "
                         "%.0f plus or minus products of up to %.0f leaves the int32 range "
                         "(both engines wrap it to int32, as ONNX Runtime does)",
                         (long long)c, b, bnd[c]);
            break;
        }
    }
    free(bnd);
}

bool
pass_qdq_fold(PassCtx *pc, Graph *g)
{
    bool changed = false;
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (!n->dead && (n->op == OP_QCONV || n->op == OP_QCONV_TRANSPOSE || n->op == OP_QMATMUL))
            check_int_op(g, (NodeId){i});
        n = &g->nodes.data[i];
        if (n->dead || int_op(n->op) == OP_INVALID || pass_keep_float(pc, n))
            continue;
        changed |= fold_one(pc, g, (NodeId){i});
    }
    return changed;
}
