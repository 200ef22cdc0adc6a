/* weight_only.c: a float matmul / gemm whose weight is the dequantize of a constant 8-bit or
 * 4-bit matrix becomes `wmatmul`, which keeps the weight as its packed integers (4-bit: two
 * per byte in the kernel's constant) and dequantizes it in registers (docs/passes.md,
 * docs/ir.md).
 * Why: when the activations stay float (weight-only quantization, or a float island such as
 * a classifier whose input has no quantizer), qdq-fold cannot make an integer op, and
 * dq-const-fold would turn the weight into an f32 constant four times its size: the kernel
 * then reads 4 bytes per weight instead of 1, and a batch-1 matmul is bound by exactly that
 * read. wmatmul reads the 8-bit (or packed 4-bit) weights and applies the scale once per
 * column (or per block).
 * Rewrites
 *   matmul(x f32[..., K], dequantize(const w i8/u8/i4/u4[K, N], per tensor or axis 1))
 *   gemm(x f32[M, K], dequantize(const w), C) with transA = 0, transB 0 or 1 (w [N, K] per
 *        tensor or axis 0: transposed at compile time), any alpha (folded into the scales)
 *        and a constant f32 C that varies only along N (beta * C becomes the bias) or none
 * into wmatmul(x, w', scale[1, N], zero point[1, N] (only if one is nonzero), bias[N]). A
 * block-quantized weight (DequantizeLinear-21 block_size, blocks along K) gives a blocked
 * wmatmul: scale and zero point [ceil(K / block_size), N] and its block_size. An
 * `add` of a constant f32 [N] (or [1, ..., N]) that is the matmul's only user becomes the
 * bias: y = total + bias[n] is the same one f32 addition. Weights quantized along K (one
 * scale per row) cannot be scaled once per column and are left alone (remark), as are
 * dequantizes with run-time parameters or a result type other than f32. With
 * --weight-only=int8-acts the wmatmul gets acts="i8" (its activations quantized to int8 per
 * row at run time; docs/numerics.md) where the weights allow it (int8_acts).
 * Convolutions likewise:
 *   conv(x f32[N, C, (H,) W], dequantize(const w i8/u8/i4/u4[M, C / group, (kh,) kw], per
 *        tensor or axis 0), b) with b absent, a constant f32 [M] or the dequantize of a
 *        constant with static parameters (evaluated here with qn_dequantize, as dq-const-fold
 *        would)
 * becomes wconv(x, w, scale[M], zero point[M] (only if one is nonzero), bias[M]) with the
 * conv's attributes (1-D and 2-D, any strides, pads, dilations and groups, depthwise
 * included); without b, an `add` of a constant f32 [1, M, 1, ...] (or [M, 1, ...]) that is
 * the conv's only user becomes the bias. Blocked dequantizes and 3-D convs are left to
 * dq-const-fold (remark). A 1x1 conv of one pixel (group 1, no padding: [N, C, 1(, 1)] ->
 * [N, M, 1(, 1)], the fully connected layers of a squeeze-excitation block) becomes
 * reshape [N, C] -> wmatmul(x, w' [C, M], ...) -> reshape instead (one_pixel): the same
 * result bits on wmatmul's kernel, whose lanes are output channels (wconv's are output pixels,
 * one of them here).
 * needs: nothing.  keeps: the result value (and name) of the matmul / gemm / conv / fused add.
 * leaves stale: uses (the dequantize dies if nothing else reads it; dce removes it).
 */
#include "pass.h"

#include "numerics/numerics.h"

#include <stdio.h>
#include <string.h>

static const Tensor *
const_f32(Graph *g, ValueId v)
{
    const Tensor *t = v.id ? ir_const_of(g, v) : NULL;
    return t && t->type.elem == ET_F32 && !t->type.q ? t : NULL;
}

/* c broadcast against [.., N] varies only along the last axis: its N values (or one) */
static bool
row_vector(const Tensor *c, int64_t nn, int64_t *len)
{
    if (!c)
        return false;
    for (int d = 0; d + 1 < c->type.rank; d++)
        if (c->type.dims[d] != 1)
            return false;
    int64_t last = c->type.rank ? c->type.dims[c->type.rank - 1] : 1;
    if (last != nn && last != 1)
        return false;
    *len = last;
    return true;
}

/* An add of a constant f32 bias [N] after the wmatmul's result y (its only user, y not a
 * graph output), whose result has y's shape: the add node, *bi = the bias operand. */
static Node *
bias_add(Graph *g, ValueId y, int64_t nn, uint32_t *bi)
{
    uint32_t idx;
    Node *add = qm_only_user(g, y, &idx);
    if (!add || add->op != OP_ADD || ir_is_graph_output(g, y))
        return NULL;
    const Tensor *c = const_f32(g, add->in[1 - idx]);
    int64_t len;
    if (!row_vector(c, nn, &len) || len != nn || c->type.rank > ir_value(g, y)->type.rank ||
        !type_shape_equal(&ir_value(g, add->out[0])->type, &ir_value(g, y)->type) ||
        ir_value(g, add->out[0])->type.elem != ET_F32)
        return NULL;
    *bi = 1 - idx;
    return add;
}

/* --weight-only=int8-acts (docs/numerics.md, "int8 activations"): wmatmul r quantizes its
 * activations to int8 per row at run time (acts="i8") when its weights have one scale per
 * column (no blocks) and no int32 accumulator can overflow: 127 * sum_k |w - zp| per column
 * within int32. Otherwise it keeps f32 activations, with a remark saying why. */
static void
int8_acts(Graph *g, NodeId r)
{
    Node *n = ir_node(g, r);
    const Tensor *w = ir_const_of(g, n->in[1]), *z = n->nin > 3 && n->in[3].id ? ir_const_of(g, n->in[3]) : NULL;
    int64_t K = w->type.dims[0], N = w->type.dims[1];
    if (ir_attr_int(g, n, "block_size", 0) > 0) {
        node_remark(g, n, "weight-only: int8 activations need one weight scale per column, not "
                    "blocks along K: f32 activations kept");
        return;
    }
    for (int64_t j = 0; j < N; j++) {
        int64_t zp = z ? tensor_get_i(z, (size_t)j) : 0, sum = 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t d = tensor_get_i(w, (size_t)(k * N + j)) - zp;
            sum += d < 0 ? -d : d;
        }
        if (127 * sum > INT32_MAX) {
            node_remark(g, n, "weight-only: int8 activations could overflow the int32 "
                        "accumulator of column %lld (127 x %lld): f32 activations kept",
                        (long long)j, (long long)sum);
            return;
        }
    }
    ir_set_attr_string(g, r, "acts", "i8");
}

/* The [cols, rows] transpose of the 8- or 4-bit constant w read as [rows, cols] (both hold one
 * value per byte). */
static Tensor *
transposed(Module *m, const Tensor *w, int64_t rows, int64_t cols)
{
    Type t = type_make(w->type.elem, 2, (int64_t[]){cols, rows});
    Tensor *r = ir_tensor_new(m, &t);
    if (!r)
        return NULL;
    const int8_t *src = w->data;
    int8_t *dst = r->data;
    for (int64_t j = 0; j < rows; j++)
        for (int64_t k = 0; k < cols; k++)
            dst[k * rows + j] = src[j * cols + k];
    return r;
}

static bool
rewrite(Graph *g, NodeId nid, bool i8acts)
{
    Node *n = ir_node(g, nid);
    const Type *xt = &ir_value(g, n->in[0])->type, *yt = &ir_value(g, n->out[0])->type;
    if (xt->elem != ET_F32 || xt->q || yt->elem != ET_F32)
        return false;
    Node *d = qm_def_op(g, n->in[1], OP_DEQUANTIZE);
    if (!d || ir_value(g, d->out[0])->type.elem != ET_F32 || ir_attr(g, d, "to"))
        return false;
    /* static parameters, or blocks (block_size, constant scale / zero point operands) */
    int64_t bs = d->q ? 0 : ir_attr_int(g, d, "block_size", 0);
    const Tensor *bsc = bs > 0 ? ir_const_of(g, d->in[1]) : NULL;
    const Tensor *bzp = bs > 0 && d->nin > 2 && d->in[2].id ? ir_const_of(g, d->in[2]) : NULL;
    if (d->q ? d->nin > 1 && d->in[1].id
             : !bsc || bsc->type.elem != ET_F32 || bsc->type.rank != 2 ||
                   (d->nin > 2 && d->in[2].id && !bzp))
        return false;
    const Tensor *w = ir_const_of(g, d->in[0]);
    ElemType we = w ? w->type.elem : ET_NONE;
    if (!w || (we != ET_I8 && we != ET_U8 && we != ET_I4 && we != ET_U4) || w->type.rank != 2)
        return false;
    const QParams *q = d->q;
    bool tb = false;
    float alpha = 1.0f, beta = 1.0f;
    const Tensor *c = NULL;
    if (n->op == OP_GEMM) {
        if (ir_attr_int(g, n, "transA", 0))
            return false;
        tb = ir_attr_int(g, n, "transB", 0) != 0;
        alpha = ir_attr_float(g, n, "alpha", 1.0f);
        beta = ir_attr_float(g, n, "beta", 1.0f);
        if (n->nin > 2 && n->in[2].id && beta != 0.0f) {
            int64_t len;
            c = const_f32(g, n->in[2]);
            if (!row_vector(c, yt->dims[1], &len)) {
                node_remark(g, n, "weight-only: C is not a constant f32 row of %lld values: "
                            "the weight is dequantized to f32 instead",
                            (long long)yt->dims[1]);
                return false;
            }
        }
    }
    int64_t K = w->type.dims[tb ? 1 : 0], N = w->type.dims[tb ? 0 : 1];
    int col_axis = tb ? 0 : 1;
    if (bs > 0 && ir_attr_int(g, d, "axis", 1) != 1 - col_axis) {
        node_remark(g, n, "weight-only: the weight's blocks run along N (axis %lld), not K: "
                    "dequantized to f32 instead", (long long)ir_attr_int(g, d, "axis", 1));
        return false;
    }
    if (q && q->axis >= 0 && q->axis != col_axis) {
        node_remark(g, n, "weight-only: the weight is quantized along K (axis %d): one scale "
                    "per column is needed; dequantized to f32 instead", q->axis);
        return false;
    }
    if (xt->dims[xt->rank - 1] != K)
        return false;
    Module *m = g->m;
    /* w' [K, N], plain integers */
    Tensor *w2;
    if (!tb) {
        w2 = qm_tensor_retype(m, w, NULL);
    } else {
        w2 = transposed(m, w, N, K);
        if (!w2)
            return false;
    }
    /* scale and zero point [G, N]: G = 1 (per tensor / per column) or one row per block */
    int64_t G = bs > 0 ? (K + bs - 1) / bs : 1;
    Type st = type_make(ET_F32, 2, (int64_t[]){G, N});
    Tensor *s = ir_tensor_new(m, &st), *z = NULL;
    if (!s)
        return false;
    bool zp = false;
    for (int64_t b = 0; b < G; b++)
        for (int64_t j = 0; j < N; j++) {
            /* the block operand is [G, N] (matmul) or [N, G] (gemm transB) */
            size_t bi = (size_t)(tb ? j * G + b : b * N + j);
            float sv = q ? qm_scale_at(q, j) : ((const float *)bsc->data)[bi];
            ((float *)s->data)[b * N + j] = alpha * sv;
            zp |= (q ? qm_zp_at(q, j) : bzp ? tensor_get_i(bzp, bi) : 0) != 0;
        }
    if (zp) {
        Type zt = type_make(w->type.elem, 2, (int64_t[]){G, N});
        z = ir_tensor_new(m, &zt);
        if (!z)
            return false;
        for (int64_t b = 0; b < G; b++)
            for (int64_t j = 0; j < N; j++)
                tensor_set_i(z, (size_t)(b * N + j),
                             q ? qm_zp_at(q, j) : tensor_get_i(bzp, (size_t)(tb ? j * G + b : b * N + j)));
    }
    ValueId y = n->out[0];
    uint32_t bi = 0;
    Node *add = c ? NULL : bias_add(g, y, N, &bi);
    const Tensor *bsrc = c ? c : add ? ir_const_of(g, add->in[bi]) : NULL;
    Tensor *bias = NULL;
    if (bsrc) {
        Type bt = type_make(ET_F32, 1, (int64_t[]){N});
        bias = ir_tensor_new(m, &bt);
        if (!bias)
            return false;
        size_t nb = type_numel_unchecked(&bsrc->type);
        for (int64_t j = 0; j < N; j++) {
            float v = ((const float *)bsrc->data)[nb == 1 ? 0 : j];
            ((float *)bias->data)[j] = c ? beta * v : v;
        }
    }
    NodeId addid = add ? qm_id(g, add) : NNONE;
    ValueId res = add ? add->out[0] : y;
    Loc loc = n->loc;
    char name[256];
    const char *wn = ir_value_name(g, d->in[0]);
    snprintf(name, sizeof name, "%s_wonly", wn);
    ValueId in[5] = {n->in[0], ir_add_const(g, name, w2, loc), VNONE, VNONE, VNONE};
    snprintf(name, sizeof name, "%s_scale", wn);
    in[2] = ir_add_const(g, name, s, loc);
    if (z) {
        snprintf(name, sizeof name, "%s_zp", wn);
        in[3] = ir_add_const(g, name, z, loc);
    }
    if (bias) {
        snprintf(name, sizeof name, "%s_bias", wn);
        in[4] = ir_add_const(g, name, bias, loc);
    }
    NodeId r = ir_add_node(g, OP_WMATMUL, bias ? 5 : z ? 4 : 3, in, 1, loc);
    if (bs > 0 && G > 1)
        ir_set_attr_int(g, r, "block_size", bs);
    ir_node(g, nid)->dead = true;
    if (addid.id)
        ir_node(g, addid)->dead = true;
    ir_set_result(g, r, 0, res);
    if (i8acts)
        int8_acts(g, r);
    return true;
}

/* ---- conv -> wconv ---- */

/* The M values of a conv bias: a constant f32 [M] or the dequantize of a constant [M] with
 * static parameters (qn_dequantize per element, dq-const-fold's arithmetic). */
static bool
conv_bias_values(Graph *g, ValueId v, int64_t mm, float *out)
{
    const Tensor *c = const_f32(g, v);
    if (c) {
        if (type_numel_unchecked(&c->type) != (size_t)mm)
            return false;
        memcpy(out, c->data, (size_t)mm * sizeof *out);
        return true;
    }
    Node *d = qm_def_op(g, v, OP_DEQUANTIZE);
    const Tensor *q = d && d->q && !(d->nin > 1 && d->in[1].id) ? ir_const_of(g, d->in[0]) : NULL;
    if (!q || ir_value(g, d->out[0])->type.elem != ET_F32 || ir_attr(g, d, "to") ||
        q->type.rank != 1 || q->type.dims[0] != mm)
        return false;
    for (int64_t j = 0; j < mm; j++)
        out[j] = qn_dequantize((int32_t)tensor_get_i(q, (size_t)j), qm_scale_at(d->q, j), qm_zp_at(d->q, j));
    return true;
}

/* An add of a constant f32 that varies only along the channel axis ([1, M, 1, ...] or
 * [M, 1, ...]) after the conv's result y (its only user, y not a graph output), with y's
 * shape and f32 result: the add; *bi = the bias operand. */
static Node *
conv_bias_add(Graph *g, ValueId y, int64_t mm, uint32_t *bi)
{
    uint32_t idx;
    Node *add = qm_only_user(g, y, &idx);
    if (!add || add->op != OP_ADD || ir_is_graph_output(g, y))
        return NULL;
    const Tensor *c = const_f32(g, add->in[1 - idx]);
    const Type *yt = &ir_value(g, y)->type;
    if (!c || c->type.rank > yt->rank || c->type.rank < yt->rank - 1 ||
        type_numel_unchecked(&c->type) != (size_t)mm ||
        !type_shape_equal(&ir_value(g, add->out[0])->type, yt) ||
        ir_value(g, add->out[0])->type.elem != ET_F32)
        return NULL;
    /* the channel axis of y (1) is axis 1 - (yt->rank - c->rank) of c; every other is 1 */
    int ch = 1 - (yt->rank - c->type.rank);
    for (int d = 0; d < c->type.rank; d++)
        if (d != ch && c->type.dims[d] != 1)
            return NULL;
    *bi = 1 - idx;
    return add;
}

/* The dequantized conv weight of n: the dequantize node if it qualifies (static parameters,
 * per tensor or axis 0, a constant 8- or 4-bit weight of the conv's rank), else NULL with a
 * remark where the reason is not obvious. */
static Node *
conv_weight_dq(Graph *g, Node *n, const Tensor **w)
{
    Node *d = qm_def_op(g, n->in[1], OP_DEQUANTIZE);
    if (!d || ir_value(g, d->out[0])->type.elem != ET_F32 || ir_attr(g, d, "to"))
        return NULL;
    *w = ir_const_of(g, d->in[0]);
    ElemType we = *w ? (*w)->type.elem : ET_NONE;
    if (!*w || (we != ET_I8 && we != ET_U8 && we != ET_I4 && we != ET_U4))
        return NULL;
    if (!d->q || (d->nin > 1 && d->in[1].id)) {
        node_remark(g, n, "weight-only: the weight's dequantize %s: dequantized to f32 instead",
                    ir_attr_int(g, d, "block_size", 0) > 0
                        ? "is block-wise (wconv takes a scale per tensor or per output channel)"
                        : "has run-time parameters");
        return NULL;
    }
    if (d->q->axis > 0) {
        node_remark(g, n, "weight-only: the weight is quantized along axis %d, not the output "
                    "channels: dequantized to f32 instead", d->q->axis);
        return NULL;
    }
    if (ir_value(g, n->in[0])->type.rank > 4) {
        node_remark(g, n, "weight-only: %d spatial dimensions (wconv is 1-D and 2-D): the weight "
                    "is dequantized to f32 instead", ir_value(g, n->in[0])->type.rank - 2);
        return NULL;
    }
    return d;
}

/* n (a conv of x [N, C, ...] -> y [N, M, ...]) is a 1x1 convolution of a single pixel: group 1,
 * no padding, every spatial extent of x, y and the kernel 1. Then y[i, m] is wconv's
 *     acc = 0; acc = fmaf(x[i, c], (float)(w[m, c] - zp[m]), acc) for c = 0 .. C-1; acc * scale[m]
 * (+ bias[m]), which is wmatmul's definition with K = C and one block: its final
 * fmaf(acc, scale, +0) rounds acc * scale once, as the product does, and has the same sign
 * (acc starts at +0 and never becomes -0; a nonzero product keeps its sign when it rounds to
 * zero), so the two ops agree bit for bit. */
static bool
one_pixel(Graph *g, Node *n, const Type *xt, const Type *yt, const Tensor *w)
{
    if (ir_attr_int(g, n, "group", 1) != 1)
        return false;
    int64_t pads[2 * IR_MAX_RANK];
    int np = ir_attr_ints(g, n, "pads", pads, 2 * IR_MAX_RANK);
    for (int i = 0; i < np; i++)
        if (pads[i] != 0)
            return false;
    for (int d = 2; d < xt->rank; d++)
        if (xt->dims[d] != 1 || yt->dims[d] != 1 || w->type.dims[d] != 1)
            return false;
    return xt->rank >= 3 && yt->rank == xt->rank && w->type.rank == xt->rank;
}

/* reshape(x [N, C, 1...]) -> wmatmul(in[0..nin)) -> reshape to res (one_pixel; in[1] the
 * transposed weight [C, M]). */
static void
pixel_wmatmul(Graph *g, NodeId nid, ValueId *in, uint32_t nin, ValueId res)
{
    /* nodes and values are re-read here: adding the constants may have moved them */
    const Node *n = ir_node(g, nid);
    const Type *xt = &ir_value(g, n->in[0])->type, *wt = &ir_value(g, in[1])->type;
    Type x2 = type_make(ET_F32, 2, (int64_t[]){xt->dims[0], wt->dims[0]});
    Type y2 = type_make(ET_F32, 2, (int64_t[]){xt->dims[0], wt->dims[1]});
    Type yt = ir_value(g, res)->type;
    Loc loc = n->loc;
    char name[256], yn[200];
    snprintf(yn, sizeof yn, "%s", ir_value_name(g, res));
    snprintf(name, sizeof name, "%s_pixels", yn);
    NodeId r0 = ir_add_node(g, OP_RESHAPE, 1, &in[0], 1, loc);
    ir_set_attr_ints(g, r0, "shape", x2.dims, 2);
    in[0] = ir_add_result(g, r0, 0, name, &x2);
    NodeId mm = ir_add_node(g, OP_WMATMUL, nin, in, 1, loc);
    snprintf(name, sizeof name, "%s_channels", yn);
    ValueId t = ir_add_result(g, mm, 0, name, &y2);
    NodeId r1 = ir_add_node(g, OP_RESHAPE, 1, &t, 1, loc);
    ir_set_attr_ints(g, r1, "shape", yt.dims, (uint32_t)yt.rank);
    ir_set_result(g, r1, 0, res);
}

static bool
rewrite_conv(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    const Type *xt = &ir_value(g, n->in[0])->type, *yt = &ir_value(g, n->out[0])->type;
    if (xt->elem != ET_F32 || xt->q || yt->elem != ET_F32 || n->nout != 1)
        return false;
    const Tensor *w;
    Node *d = conv_weight_dq(g, n, &w);
    if (!d)
        return false;
    const QParams *q = d->q;
    int64_t mm = w->type.dims[0];
    Module *m = g->m;
    bool px = one_pixel(g, n, xt, yt, w); /* wmatmul's scale and zero point are [1, M] */
    Type vt = type_make(ET_F32, 1, (int64_t[]){mm}), st = type_make(ET_F32, px ? 2 : 1, (int64_t[]){px ? 1 : mm, mm});
    Tensor *s = ir_tensor_new(m, &st), *bias = NULL, *z = NULL;
    if (!s)
        return false;
    bool zp = false;
    for (int64_t j = 0; j < mm; j++) {
        ((float *)s->data)[j] = qm_scale_at(q, j);
        zp |= qm_zp_at(q, j) != 0;
    }
    if (zp) {
        Type zt = type_make(w->type.elem, px ? 2 : 1, (int64_t[]){px ? 1 : mm, mm});
        z = ir_tensor_new(m, &zt);
        if (!z)
            return false;
        for (int64_t j = 0; j < mm; j++)
            tensor_set_i(z, (size_t)j, qm_zp_at(q, j));
    }
    bool has_b = n->nin > 2 && n->in[2].id;
    uint32_t bi = 0;
    Node *add = has_b ? NULL : conv_bias_add(g, n->out[0], mm, &bi);
    if (has_b || add) {
        bias = ir_tensor_new(m, &vt);
        if (!bias)
            return false;
        if (!conv_bias_values(g, has_b ? n->in[2] : add->in[bi], mm, bias->data)) {
            node_remark(g, n, "weight-only: the bias is not a constant: the weight is "
                        "dequantized to f32 instead");
            return false;
        }
    }
    NodeId addid = add ? qm_id(g, add) : NNONE;
    ValueId res = add ? add->out[0] : n->out[0];
    Loc loc = n->loc;
    char name[256];
    const char *wn = ir_value_name(g, d->in[0]);
    snprintf(name, sizeof name, "%s_wonly", wn);
    Tensor *wk = px ? transposed(m, w, mm, w->type.dims[1]) : qm_tensor_retype(m, w, NULL);
    if (!wk)
        return false;
    ValueId in[5] = {n->in[0], ir_add_const(g, name, wk, loc), VNONE, VNONE, VNONE};
    snprintf(name, sizeof name, "%s_scale", wn);
    in[2] = ir_add_const(g, name, s, loc);
    if (z) {
        snprintf(name, sizeof name, "%s_zp", wn);
        in[3] = ir_add_const(g, name, z, loc);
    }
    if (bias) {
        snprintf(name, sizeof name, "%s_bias", wn);
        in[4] = ir_add_const(g, name, bias, loc);
    }
    uint32_t nin = bias ? 5 : z ? 4 : 3;
    if (px) {
        pixel_wmatmul(g, nid, in, nin, res);
    } else {
        NodeId r = ir_add_node(g, OP_WCONV, nin, in, 1, loc);
        qm_copy_attrs(g, r, nid, NULL);
        ir_set_result(g, r, 0, res);
    }
    ir_node(g, nid)->dead = true;
    if (addid.id)
        ir_node(g, addid)->dead = true;
    return true;
}

bool
pass_weight_only(PassCtx *pc, Graph *g)
{
    bool changed = false;
    qm_uses(g);
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || (n->op != OP_MATMUL && n->op != OP_GEMM && n->op != OP_CONV) || n->nin < 2 ||
            pass_keep_float(pc, n))
            continue;
        if (n->op == OP_CONV ? rewrite_conv(g, (NodeId){i})
                             : rewrite(g, (NodeId){i}, pc->opt->wonly_i8_acts != 0)) {
            changed = true;
            ir_fill_uses(g);
        }
    }
    return changed;
}
