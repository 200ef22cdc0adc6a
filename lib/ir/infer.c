/* infer.c: result types of every op from its operands and attributes.
 * Shared by the verifier (which compares them with the declared types) and by the readers
 * (which use them to type what they build). Only element type and shape are inferred here;
 * quantization annotations are checked by the verifier (verify.c). Attribute conventions of
 * every op are in docs/ir.md. */
#include "ir.h"
#include "eval.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...)                        \
    do {                                 \
        node_error(g, n, __VA_ARGS__);   \
        return false;                    \
    } while (0)

static const Type *
in_type(Graph *g, Node *n, uint32_t i)
{
    if (i >= n->nin || !n->in[i].id)
        return NULL;
    return &ir_value(g, n->in[i])->type;
}

bool
shape_broadcast(const Type *a, const Type *b, Type *out)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    Type t = *a;
    t.q = NULL;
    t.rank = (uint8_t)r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1)
            t.dims[i] = da;
        else if (da == 1)
            t.dims[i] = db;
        else
            return false;
    }
    *out = t;
    return true;
}

static void
fmt_shape(const Graph *g, char *buf, size_t len, const Type *t)
{
    StrBuf b;
    sb_init(&b);
    sb_putc(&b, '[');
    for (int i = 0; i < t->rank; i++) {
        if (i)
            sb_putc(&b, ',');
        ir_dim_print(&b, g, t->dims[i]);
    }
    sb_putc(&b, ']');
    snprintf(buf, len, "%s", b.data);
    sb_free(&b);
}

/* A dimension for a message: 7, ?batch, ?(2*seq) */
#define DSTR(d) ir_dim_str(g, (d), (char[96]){0}, 96)

/* Read an ints attribute of exactly `want` values (or `dflt_val` repeated if absent). */
static bool
ints_attr(Graph *g, Node *n, const char *name, int64_t *out, int want, int64_t dflt_val)
{
    int64_t tmp[2 * IR_MAX_RANK];
    int k = ir_attr_ints(g, n, name, tmp, 2 * IR_MAX_RANK);
    if (k < 0) {
        for (int i = 0; i < want; i++)
            out[i] = dflt_val;
        return true;
    }
    if (k != want) {
        node_error(g, n, "'%s' has %d values, expected %d", name, k, want);
        return false;
    }
    memcpy(out, tmp, (size_t)want * sizeof(int64_t));
    return true;
}

static bool
norm_axis(Graph *g, Node *n, int64_t axis, int rank, int64_t *out, const char *what)
{
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
        node_error(g, n, "%s %lld out of range for rank %d", what, (long long)axis, rank);
        return false;
    }
    *out = a;
    return true;
}

/* quantize/dequantize: operand scale (and zero point) shapes against x, per tensor, per axis
 * or blocked (ir_qdq_layout); static parameters cannot be blocked. */
static bool
qdq_layout_ok(Graph *g, Node *n, const Type *x)
{
    int64_t block = ir_attr_int(g, n, "block_size", 0);
    char err[200];
    QdqLayout l;
    if (n->q) {
        if (block == 0)
            return true;
        node_error(g, n, "block_size needs the scale and zero point as operands");
        return false;
    }
    const Type *s = in_type(g, n, 1), *z = in_type(g, n, 2);
    if (!ir_type_is_static(x)) {
        /* per tensor only: a one-element scale (and zero point) */
        if (block == 0 && type_numel_unchecked(s) == 1 && (!z || type_numel_unchecked(z) == 1))
            return true;
        char ts[256];
        fmt_shape(g, ts, sizeof ts, x);
        node_error(g, n, "per-axis or blocked parameters on %s, which has symbolic dimensions "
                   "(bind them with --dim NAME=<size>)", ts);
        return false;
    }
    if (ir_qdq_layout(x, s, z, ir_attr_int(g, n, "axis", 1), block, &l, err, sizeof err))
        return true;
    node_error(g, n, "%s", err);
    return false;
}

/* Spatial output size of a window op along one axis. */
static bool
window_out(Graph *g, Node *n, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb,
           int64_t pe, bool ceil_mode, int64_t *out)
{
    if (k <= 0 || s <= 0 || d <= 0)
        FAIL("kernel, stride and dilation must be positive");
    if (pb < 0 || pe < 0)
        FAIL("pads must not be negative");
    if (k > (1 << 20) || s > (1 << 20) || d > (1 << 20) || pb > (1 << 20) || pe > (1 << 20))
        FAIL("kernel, stride, dilation or pad is too large");
    int64_t ek = (k - 1) * d + 1;
    int64_t span = in + pb + pe - ek;
    if (span < 0)
        FAIL("window of %lld does not fit input extent %lld with pads %lld+%lld",
             (long long)ek, (long long)in, (long long)pb, (long long)pe);
    int64_t o = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
    /* ONNX: with ceil_mode the last window must start inside the input or left pad */
    if (ceil_mode && (o - 1) * s >= in + pb)
        o--;
    *out = o;
    return true;
}

/* conv / qconv / pools: attributes strides, pads, dilations over `ns` spatial dims */
static bool
conv_like(Graph *g, Node *n, const Type *x, const int64_t *kernel, int ns, Type *o,
          bool allow_ceil)
{
    int64_t strides[IR_MAX_RANK], dil[IR_MAX_RANK], pads[2 * IR_MAX_RANK];
    if (!ints_attr(g, n, "strides", strides, ns, 1) || !ints_attr(g, n, "dilations", dil, ns, 1) ||
        !ints_attr(g, n, "pads", pads, 2 * ns, 0))
        return false;
    bool ceil_mode = allow_ceil && ir_attr_int(g, n, "ceil_mode", 0) != 0;
    for (int i = 0; i < ns; i++)
        if (!window_out(g, n, x->dims[2 + i], kernel[i], strides[i], dil[i], pads[i],
                        pads[ns + i], ceil_mode, &o->dims[2 + i]))
            return false;
    return true;
}

static bool
conv_type(Graph *g, Node *n, Type *out, bool transpose)
{
    const Type *x = in_type(g, n, 0), *w = in_type(g, n, 1), *b = in_type(g, n, 2);
    if (x->rank < 3 || x->rank > 5)
        FAIL("input must have rank 3 to 5, got %d", x->rank);
    if (w->rank != x->rank)
        FAIL("weight rank %d differs from input rank %d", w->rank, x->rank);
    int64_t group = ir_attr_int(g, n, "group", 1);
    if (group <= 0)
        FAIL("group must be positive, got %lld", (long long)group);
    int ns = x->rank - 2;
    Type o = *x;
    o.q = NULL;
    int64_t cin = x->dims[1], m;
    if (!transpose) {
        m = w->dims[0];
        if (cin % group || m % group)
            FAIL("channels %lld and %lld are not divisible by group %lld", (long long)cin,
                 (long long)m, (long long)group);
        if (w->dims[1] * group != cin)
            FAIL("weight has %lld input channels per group, input has %lld channels in %lld groups",
                 (long long)w->dims[1], (long long)cin, (long long)group);
        int64_t ks[IR_MAX_RANK];
        for (int i = 0; i < ns; i++)
            ks[i] = w->dims[2 + i];
        int64_t kattr[IR_MAX_RANK];
        int kk = ir_attr_ints(g, n, "kernel_shape", kattr, IR_MAX_RANK);
        if (kk >= 0) {
            if (kk != ns)
                FAIL("kernel_shape has %d values, expected %d", kk, ns);
            for (int i = 0; i < ns; i++)
                if (kattr[i] != ks[i])
                    FAIL("kernel_shape does not match the weight shape");
        }
        o.dims[1] = m;
        if (!conv_like(g, n, x, ks, ns, &o, false))
            return false;
    } else {
        if (w->dims[0] != cin)
            FAIL("weight has %lld input channels, input has %lld", (long long)w->dims[0],
                 (long long)cin);
        if (cin % group)
            FAIL("channels %lld not divisible by group %lld", (long long)cin, (long long)group);
        m = w->dims[1] * group;
        o.dims[1] = m;
        int64_t strides[IR_MAX_RANK], dil[IR_MAX_RANK], pads[2 * IR_MAX_RANK], opad[IR_MAX_RANK];
        if (!ints_attr(g, n, "strides", strides, ns, 1) ||
            !ints_attr(g, n, "dilations", dil, ns, 1) || !ints_attr(g, n, "pads", pads, 2 * ns, 0) ||
            !ints_attr(g, n, "output_padding", opad, ns, 0))
            return false;
        for (int i = 0; i < ns; i++) {
            if (strides[i] <= 0 || dil[i] <= 0 || pads[i] < 0 || pads[ns + i] < 0 || opad[i] < 0)
                FAIL("strides and dilations must be positive, pads non-negative");
            if (strides[i] > (1 << 20) || dil[i] > (1 << 20) || pads[i] > (1 << 20) ||
                pads[ns + i] > (1 << 20) || opad[i] > (1 << 20))
                FAIL("stride, dilation or pad is too large");
            int64_t v = strides[i] * (x->dims[2 + i] - 1) + opad[i] +
                        (w->dims[2 + i] - 1) * dil[i] + 1 - pads[i] - pads[ns + i];
            if (v <= 0)
                FAIL("output extent %lld is not positive", (long long)v);
            o.dims[2 + i] = v;
        }
    }
    if (b && (b->rank != 1 || b->dims[0] != m))
        FAIL("bias must have shape [%lld]", (long long)m);
    *out = o;
    return true;
}

static bool
matmul_type(Graph *g, Node *n, const Type *a, const Type *b, Type *out)
{
    if (a->rank < 1 || b->rank < 1)
        FAIL("operands must have rank >= 1");
    Type a2, b2;
    bool va = a->rank == 1, vb = b->rank == 1;
    ir_matmul_promote(a, b, &a2, &b2);
    int64_t k1 = a2.dims[a2.rank - 1], k2 = b2.dims[b2.rank - 2];
    if (k1 != k2)
        FAIL("inner dimensions differ: %s vs %s", DSTR(k1), DSTR(k2));
    Type ba = a2, bb = b2;
    ba.rank -= 2;
    bb.rank -= 2;
    Type bt;
    if (!shape_broadcast(&ba, &bb, &bt))
        FAIL("batch dimensions do not broadcast");
    Type o = bt;
    o.elem = a->elem;
    if (!va)
        o.dims[o.rank++] = a2.dims[a2.rank - 2];
    if (!vb)
        o.dims[o.rank++] = b2.dims[b2.rank - 1];
    if (o.rank > IR_MAX_RANK)
        FAIL("result rank too large");
    *out = o;
    return true;
}

static bool
pool_type(Graph *g, Node *n, const Type *x, Type *out)
{
    if (x->rank < 3)
        FAIL("input must have rank >= 3, got %d", x->rank);
    int ns = x->rank - 2;
    int64_t ks[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "kernel_shape", ks, IR_MAX_RANK);
    if (k != ns)
        FAIL("kernel_shape must have %d values", ns);
    Type o = *x;
    o.q = NULL;
    if (!conv_like(g, n, x, ks, ns, &o, true))
        return false;
    *out = o;
    return true;
}

static bool
reduce_type(Graph *g, Node *n, const Type *x, Type *out)
{
    int64_t axes[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "axes", axes, IR_MAX_RANK);
    bool keep = ir_attr_int(g, n, "keepdims", 1) != 0;
    bool red[IR_MAX_RANK] = {0};
    if (k < 0) {
        for (int i = 0; i < x->rank; i++)
            red[i] = true;
    } else {
        if (k > x->rank)
            FAIL("too many axes");
        for (int i = 0; i < k; i++) {
            int64_t a;
            if (!norm_axis(g, n, axes[i], x->rank, &a, "axis"))
                return false;
            if (red[a])
                FAIL("axis %lld repeated", (long long)axes[i]);
            red[a] = true;
        }
    }
    Type o = *x;
    o.q = NULL;
    o.rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!red[i])
            o.dims[o.rank++] = x->dims[i];
        else if (keep)
            o.dims[o.rank++] = 1;
    }
    *out = o;
    return true;
}

static ElemType
attr_elem(Graph *g, Node *n, const char *name, ElemType dflt)
{
    const char *s = ir_attr_string(g, n, name, NULL);
    if (!s)
        return dflt;
    return elem_from_name(s, strlen(s));
}

/* ---- one infer function per op family (ops.def's INFER column names it) ----
 * Each gets the node, its operand 0 (`x`, NULL when absent) and `o`, the result type
 * preset to x's element type and shape without quantization; it adjusts `o` (result 0) and
 * writes any further results to out[1..]. */
#define INFER_FN(F) \
    static bool infer_##F(Graph *g, Node *n, const Type *x, Type *o, Type *out)

INFER_FN(const)
{
    const Attr *a = ir_attr(g, n, "value");
    if (!a || a->kind != ATTR_TENSOR)
        FAIL("missing tensor 'value'");
    *o = a->t->type;
    o->q = NULL;
    return true;
}

INFER_FN(quantize)
{
    if (!elem_is_float(x->elem) && x->elem != ET_I32)
        FAIL("input must be float or i32, got %s", elem_name(x->elem));
    if (n->q) {
        o->elem = n->q->storage;
    } else {
        const Type *s = in_type(g, n, 1), *z = in_type(g, n, 2);
        if (!s)
            FAIL("needs a scale");
        if (!elem_is_float(s->elem))
            FAIL("scale must be float");
        o->elem = z ? z->elem : ET_U8;
    }
    return qdq_layout_ok(g, n, x);
}

INFER_FN(dequantize)
{
    if (!elem_is_quant_storage(x->elem))
        FAIL("input must be an integer type, got %s", elem_name(x->elem));
    if (!n->q) {
        const Type *s = in_type(g, n, 1);
        if (!s)
            FAIL("needs a scale");
        if (!elem_is_float(s->elem))
            FAIL("scale must be float");
    }
    if (!qdq_layout_ok(g, n, x))
        return false;
    o->elem = attr_elem(g, n, "to", ET_F32);
    if (!elem_is_float(o->elem))
        FAIL("result must be float");
    return true;
}

INFER_FN(dynamic_quantize)
{
    if (x->elem != ET_F32)
        FAIL("input must be f32");
    o->elem = ET_U8;
    out[1] = type_make(ET_F32, 0, NULL);
    out[2] = type_make(ET_U8, 0, NULL);
    return true;
}

/* conv, qconv; conv_transpose, qconv_transpose: the integer forms leave the element type to
 * the verifier (any of i8/u8/i32/f32) */
INFER_FN(conv)
{
    if (!conv_type(g, n, o, false))
        return false;
    if (n->op == OP_QCONV)
        o->elem = ET_NONE;
    return true;
}

INFER_FN(conv_transpose)
{
    if (!conv_type(g, n, o, true))
        return false;
    if (n->op == OP_QCONV_TRANSPOSE)
        o->elem = ET_NONE;
    return true;
}

INFER_FN(matmul)
{
    if (n->op == OP_MATMUL && x->elem != in_type(g, n, 1)->elem)
        FAIL("operand types differ: %s vs %s", elem_name(x->elem),
             elem_name(in_type(g, n, 1)->elem));
    if (!matmul_type(g, n, x, in_type(g, n, 1), o))
        return false;
    if (n->op == OP_QMATMUL) {
        const Type *b = in_type(g, n, 2);
        int64_t nn = o->dims[o->rank - 1];
        if (b && (b->rank != 1 || b->dims[0] != nn))
            FAIL("bias must have shape [%lld]", (long long)nn);
        o->elem = ET_NONE;
    }
    return true;
}

INFER_FN(wmatmul)
{
    /* x f32[..., K] times w i8/u8/i4/u4[K, N]: scale f32[G, N], zero point (w's type)[G, N],
     * bias f32[N]; G = ceil(K / block_size), 1 without block_size (docs/ir.md) */
    const Type *w = in_type(g, n, 1), *s = in_type(g, n, 2), *z = in_type(g, n, 3),
               *b = in_type(g, n, 4);
    if (x->elem != ET_F32 || x->rank < 1)
        FAIL("input must be f32 of rank >= 1, got %s of rank %d", elem_name(x->elem), x->rank);
    if ((w->elem != ET_I8 && w->elem != ET_U8 && w->elem != ET_I4 && w->elem != ET_U4) ||
        w->rank != 2)
        FAIL("weight must be an i8, u8, i4 or u4 matrix [K, N], got %s of rank %d",
             elem_name(w->elem), w->rank);
    int64_t kk = w->dims[0], nn = w->dims[1];
    if (x->dims[x->rank - 1] != kk)
        FAIL("inner dimensions differ: %lld vs %lld", (long long)x->dims[x->rank - 1],
             (long long)kk);
    int64_t bs = ir_attr_int(g, n, "block_size", 0);
    if (bs < 0 || (bs > 0 && bs > kk))
        FAIL("block_size %lld must be in [1, %lld]", (long long)bs, (long long)kk);
    int64_t ng = bs ? (kk + bs - 1) / bs : 1;
    if (s->elem != ET_F32 || s->rank != 2 || s->dims[0] != ng || s->dims[1] != nn)
        FAIL("scale must be f32[%lld,%lld]", (long long)ng, (long long)nn);
    if (z && (z->elem != w->elem || z->rank != 2 || z->dims[0] != ng || z->dims[1] != nn))
        FAIL("zero point must be %s[%lld,%lld]", elem_name(w->elem), (long long)ng,
             (long long)nn);
    if (b && (b->elem != ET_F32 || b->rank != 1 || b->dims[0] != nn))
        FAIL("bias must be f32[%lld]", (long long)nn);
    const char *acts = ir_attr_string(g, n, "acts", "f32");
    if (strcmp(acts, "f32") != 0 && strcmp(acts, "i8") != 0)
        FAIL("acts must be \"f32\" or \"i8\", got \"%s\"", acts);
    if (strcmp(acts, "i8") == 0 && ng != 1)
        FAIL("int8 activations (acts=\"i8\") need one scale per column, not %lld blocks",
             (long long)ng);
    o->dims[o->rank - 1] = nn;
    return true;
}

INFER_FN(matmul_integer)
{
    /* a i8/u8[..., M, K] x b i8/u8[..., K, N] (numpy matmul), za (a's type, one value), zb (b's
     * type, one value or [N]); with sa (f32, one value), sb (f32, one value or [N]) and bias
     * (f32 [N]) the result is f32, else i32 (docs/ir.md) */
    const Type *b = in_type(g, n, 1), *za = in_type(g, n, 2), *zb = in_type(g, n, 3),
               *sa = in_type(g, n, 4), *sb = in_type(g, n, 5), *bias = in_type(g, n, 6);
    if ((x->elem != ET_I8 && x->elem != ET_U8) || (b->elem != ET_I8 && b->elem != ET_U8))
        FAIL("operands must be i8 or u8, got %s and %s", elem_name(x->elem), elem_name(b->elem));
    if (n->nin == 5 || (n->nin > 5 && (!sa || !sb)))
        FAIL("the scales sa and sb come together (operands 4 and 5)");
    if (!matmul_type(g, n, x, b, o))
        return false;
    int64_t nn = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    if (za && (za->elem != x->elem || type_numel_unchecked(za) != 1))
        FAIL("a's zero point must be one %s value", elem_name(x->elem));
    if (zb && (zb->elem != b->elem ||
               (type_numel_unchecked(zb) != 1 && (zb->rank != 1 || zb->dims[0] != nn))))
        FAIL("b's zero point must be one %s value or %lld (one per column)", elem_name(b->elem),
             (long long)nn);
    if (sa && (sa->elem != ET_F32 || type_numel_unchecked(sa) != 1))
        FAIL("a's scale must be one f32 value");
    if (sb && (sb->elem != ET_F32 ||
               (type_numel_unchecked(sb) != 1 && (sb->rank != 1 || sb->dims[0] != nn))))
        FAIL("b's scale must be one f32 value or %lld (one per column)", (long long)nn);
    if (bias && (bias->elem != ET_F32 || bias->rank != 1 || bias->dims[0] != nn))
        FAIL("bias must be f32[%lld]", (long long)nn);
    o->elem = sa ? ET_F32 : ET_I32;
    return true;
}

INFER_FN(wconv)
{
    /* x f32[N, C, ...] convolved with w i8/u8/i4/u4[M, C / group, ...] (conv's attributes):
     * scale f32[M], zero point (w's type)[M], bias f32[M] (docs/ir.md) */
    const Type *w = in_type(g, n, 1), *s = in_type(g, n, 2), *z = in_type(g, n, 3),
               *b = in_type(g, n, 4);
    if (x->elem != ET_F32 || x->rank < 3 || x->rank > 4)
        FAIL("input must be f32 of rank 3 or 4 (1-D or 2-D), got %s of rank %d",
             elem_name(x->elem), x->rank);
    if (w->elem != ET_I8 && w->elem != ET_U8 && w->elem != ET_I4 && w->elem != ET_U4)
        FAIL("weight must be i8, u8, i4 or u4, got %s", elem_name(w->elem));
    if (w->rank != x->rank)
        FAIL("weight rank %d differs from input rank %d", w->rank, x->rank);
    int64_t m = w->dims[0];
    if (s->elem != ET_F32 || s->rank != 1 || s->dims[0] != m)
        FAIL("scale must be f32[%lld]", (long long)m);
    if (!conv_type(g, n, o, false)) /* reads operand 2 (the scales) as a bias: [M] */
        return false;
    if (z && (z->elem != w->elem || z->rank != 1 || z->dims[0] != m))
        FAIL("zero point must be %s[%lld]", elem_name(w->elem), (long long)m);
    if (b && (b->elem != ET_F32 || b->rank != 1 || b->dims[0] != m))
        FAIL("bias must be f32[%lld]", (long long)m);
    o->elem = ET_F32;
    return true;
}

INFER_FN(gemm)
{
    const Type *b = in_type(g, n, 1), *c = in_type(g, n, 2);
    if (x->rank != 2 || b->rank != 2)
        FAIL("operands must be rank 2");
    bool ta = ir_attr_int(g, n, "transA", 0), tb = ir_attr_int(g, n, "transB", 0);
    int64_t m = ta ? x->dims[1] : x->dims[0], k = ta ? x->dims[0] : x->dims[1];
    int64_t k2 = tb ? b->dims[1] : b->dims[0], nn = tb ? b->dims[0] : b->dims[1];
    if (k != k2)
        FAIL("inner dimensions differ: %lld vs %lld", (long long)k, (long long)k2);
    o->rank = 2;
    o->dims[0] = m;
    o->dims[1] = nn;
    if (c) {
        Type bt;
        if (!shape_broadcast(o, c, &bt) || !type_shape_equal(&bt, o))
            FAIL("C does not broadcast to [%lld,%lld]", (long long)m, (long long)nn);
    }
    return true;
}

INFER_FN(batchnorm)
{
    if (x->rank < 2)
        FAIL("input must have rank >= 2");
    for (uint32_t i = 1; i < 5; i++) {
        const Type *p = in_type(g, n, i);
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            FAIL("operand %u must have shape [%lld]", i, (long long)x->dims[1]);
    }
    return true;
}

/* add, sub, mul, div, prelu and their integer forms */
INFER_FN(binary)
{
    bool integer = (op_info(n->op)->flags & OPF_INT) != 0;
    const Type *b = in_type(g, n, 1);
    if (!integer && x->elem != b->elem)
        FAIL("operand types differ: %s vs %s", elem_name(x->elem), elem_name(b->elem));
    if (!shape_broadcast(x, b, o)) {
        char sa[128], sb[128];
        fmt_shape(g, sa, sizeof sa, x);
        fmt_shape(g, sb, sizeof sb, b);
        FAIL("shapes %s and %s do not broadcast", sa, sb);
    }
    if (n->op == OP_PRELU && !type_shape_equal(o, x))
        FAIL("slope must broadcast to the input shape");
    if (integer)
        o->elem = ET_NONE;
    return true;
}

/* pow: base f32 or integer, exponent of any number type (numpy broadcasting); the result has
 * the base's type */
INFER_FN(pow)
{
    const Type *b = in_type(g, n, 1);
    if (!elem_is_int(b->elem) && b->elem != ET_F32)
        FAIL("exponent must be f32 or an integer, got %s", elem_name(b->elem));
    if (!shape_broadcast(x, b, o)) {
        char sa[128], sb[128];
        fmt_shape(g, sa, sizeof sa, x);
        fmt_shape(g, sb, sizeof sb, b);
        FAIL("shapes %s and %s do not broadcast", sa, sb);
    }
    o->elem = x->elem;
    return true;
}

/* element-wise ops of one tensor operand; further operands are scalars (clip's bounds) */
INFER_FN(unary)
{
    for (uint32_t i = 1; i < n->nin; i++) {
        const Type *t = in_type(g, n, i);
        if (t && (t->rank != 0 || t->elem != x->elem))
            FAIL("operand %u must be a scalar %s", i, elem_name(x->elem));
    }
    return true;
}

INFER_FN(softmax)
{
    int64_t a;
    return norm_axis(g, n, ir_attr_int(g, n, "axis", -1), x->rank, &a, "axis");
}

INFER_FN(layernorm)
{
    int64_t a;
    if (!norm_axis(g, n, ir_attr_int(g, n, "axis", -1), x->rank, &a, "axis"))
        return false;
    for (uint32_t i = 1; i < n->nin; i++) {
        const Type *t = in_type(g, n, i);
        if (!t)
            continue;
        Type tail = *x;
        tail.rank = (uint8_t)(x->rank - a);
        memmove(tail.dims, x->dims + a, (size_t)tail.rank * sizeof(int64_t));
        Type bt;
        if (!shape_broadcast(&tail, t, &bt) || !type_shape_equal(&bt, &tail))
            FAIL("operand %u does not broadcast to the normalized shape", i);
    }
    /* optional results 1 and 2: mean and 1/sqrt(variance + epsilon), f32, the input's
     * shape with the normalized axes kept as 1 */
    for (uint32_t k = 1; k < n->nout; k++) {
        out[k] = type_make(ET_F32, x->rank, x->dims);
        for (int i = (int)a; i < x->rank; i++)
            out[k].dims[i] = 1;
    }
    return true;
}

/* reduce_mean, qreduce_mean; reduce_sum (numbers), reduce_max, reduce_min (numbers, bool) */
INFER_FN(reduce)
{
    if (!reduce_type(g, n, x, o))
        return false;
    if (n->op == OP_QREDUCE_MEAN)
        o->elem = ET_NONE;
    if ((n->op == OP_REDUCE_SUM || n->op == OP_REDUCE_MAX || n->op == OP_REDUCE_MIN) &&
        (x->elem == ET_I4 || x->elem == ET_U4 || x->elem == ET_NONE ||
         (n->op == OP_REDUCE_SUM && x->elem == ET_BOOL)))
        FAIL("%s of %s is not defined", op_info(n->op)->name, elem_name(x->elem));
    return true;
}

/* avgpool, maxpool */
INFER_FN(pool)
{
    if (!pool_type(g, n, x, o))
        return false;
    /* maxpool's optional result 1: ONNX's Indices, the flat index (i64) of each maximum
     * in the input, row-major (storage_order=0) or column-major over the spatial axes */
    if (n->op == OP_MAXPOOL) {
        int64_t so = ir_attr_int(g, n, "storage_order", 0);
        if (so != 0 && so != 1)
            FAIL("storage_order must be 0 or 1, got %lld", (long long)so);
        if (n->nout > 1)
            out[1] = type_make(ET_I64, o->rank, o->dims);
    }
    return true;
}

INFER_FN(qavgpool)
{
    if (ir_attr_int(g, n, "global", 0)) {
        if (x->rank < 3)
            FAIL("input must have rank >= 3");
        for (int i = 2; i < x->rank; i++)
            o->dims[i] = 1;
    } else if (!pool_type(g, n, x, o)) {
        return false;
    }
    o->elem = ET_NONE;
    return true;
}

INFER_FN(global_pool)
{
    if (x->rank < 3)
        FAIL("input must have rank >= 3");
    for (int i = 2; i < x->rank; i++)
        o->dims[i] = 1;
    return true;
}

INFER_FN(resize)
{
    int64_t sizes[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "sizes", sizes, IR_MAX_RANK);
    if (k != x->rank)
        FAIL("'sizes' must have %d values", x->rank);
    for (int i = 0; i < k; i++) {
        if (sizes[i] <= 0)
            FAIL("sizes must be positive");
        o->dims[i] = sizes[i];
    }
    const char *mode = ir_attr_string(g, n, "mode", "nearest");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear"))
        FAIL("mode '%s' is not supported (nearest, linear)", mode);
    return true;
}

INFER_FN(cast)
{
    o->elem = attr_elem(g, n, "to", ET_NONE);
    if (o->elem == ET_NONE)
        FAIL("'to' must name an element type");
    return true;
}

INFER_FN(concat)
{
    int64_t a;
    if (x->rank == 0)
        FAIL("operands must have rank >= 1");
    if (!norm_axis(g, n, ir_attr_int(g, n, "axis", 0), x->rank, &a, "axis"))
        return false;
    int64_t sum = 0;
    for (uint32_t i = 0; i < n->nin; i++) {
        const Type *t = in_type(g, n, i);
        if (!t)
            FAIL("operand %u is missing", i);
        if (t->rank != x->rank || t->elem != x->elem)
            FAIL("operand %u has a different rank or element type", i);
        for (int d = 0; d < x->rank; d++)
            if (d != a && t->dims[d] != x->dims[d])
                FAIL("operand %u differs in dimension %d: %s vs %s", i, d, DSTR(t->dims[d]),
                     DSTR(x->dims[d]));
        if (!ir_dim_add(g, sum, t->dims[a], &sum))
            FAIL("the concatenated dimension is too large or too complex");
    }
    o->dims[a] = sum;
    return true;
}

INFER_FN(split)
{
    int64_t a;
    if (!norm_axis(g, n, ir_attr_int(g, n, "axis", 0), x->rank, &a, "axis"))
        return false;
    int64_t sp[64];
    int k = ir_attr_ints(g, n, "split", sp, 64);
    if (k < 0) {
        if (x->dims[a] % n->nout)
            FAIL("dimension %lld does not split evenly into %u", (long long)x->dims[a],
                 n->nout);
        for (uint32_t i = 0; i < n->nout && i < 64; i++)
            sp[i] = x->dims[a] / n->nout;
        k = (int)n->nout;
    }
    if ((uint32_t)k != n->nout)
        FAIL("'split' has %d values for %u results", k, n->nout);
    if (k > 64)
        FAIL("too many results");
    int64_t sum = 0;
    for (int i = 0; i < k; i++) {
        if (sp[i] < 0)
            FAIL("split sizes must not be negative");
        sum += sp[i];
    }
    if (sum != x->dims[a])
        FAIL("split sizes sum to %lld, dimension is %lld", (long long)sum,
             (long long)x->dims[a]);
    for (int i = 1; i < k; i++) {
        out[i] = *o;
        out[i].dims[a] = sp[i];
    }
    o->dims[a] = sp[0];
    return true;
}

/* one axis of a slice: the number of elements from start s to end e by step (not 0) */
static int64_t
slice_extent(int64_t d, int64_t s, int64_t e, int64_t step)
{
    if (s < 0)
        s += d;
    if (e < 0)
        e += d;
    if (step > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        return e > s ? (e - s + step - 1) / step : 0;
    }
    s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    return s > e ? (s - e + (-step) - 1) / (-step) : 0;
}

/* A slice with symbolic operands: step 1 from a constant start s >= 0, to the end of the
 * axis (an end past every dimension) or to a symbolic end e: e - s elements (e within the
 * axis and >= s when bound: the bound graph is typed exactly, with ONNX's clamping). */
static bool
slice_symbolic(Graph *g, int64_t d, int64_t s, int64_t e, int64_t step, int64_t *out)
{
    if (step != 1 || ir_dim_is_tag(s) || s < 0)
        return false;
    if (!ir_dim_is_tag(e) && e >= ((int64_t)1 << 40))
        return ir_dim_sub(g, d, s, out);
    return ir_dim_is_tag(e) && ir_dim_valid(g, e) && ir_dim_sub(g, e, s, out);
}

INFER_FN(slice)
{
    int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], ax[IR_MAX_RANK], stp[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "starts", st, IR_MAX_RANK);
    if (k < 0 || ir_attr_ints(g, n, "ends", en, IR_MAX_RANK) != k)
        FAIL("'starts' and 'ends' must be given with equal lengths");
    if (k > x->rank)
        FAIL("too many slice axes");
    if (ir_attr_ints(g, n, "axes", ax, IR_MAX_RANK) < 0)
        for (int i = 0; i < k; i++)
            ax[i] = i;
    else if (ir_attr_ints(g, n, "axes", ax, IR_MAX_RANK) != k)
        FAIL("'axes' must have %d values", k);
    if (ir_attr_ints(g, n, "steps", stp, IR_MAX_RANK) < 0)
        for (int i = 0; i < k; i++)
            stp[i] = 1;
    else if (ir_attr_ints(g, n, "steps", stp, IR_MAX_RANK) != k)
        FAIL("'steps' must have %d values", k);
    bool seen[IR_MAX_RANK] = {0};
    for (int i = 0; i < k; i++) {
        int64_t a;
        if (!norm_axis(g, n, ax[i], x->rank, &a, "axis"))
            return false;
        if (seen[a])
            FAIL("axis %lld repeated", (long long)ax[i]);
        seen[a] = true;
        if (stp[i] == 0)
            FAIL("slice step must not be 0");
        if (ir_dim_is_tag(x->dims[a]) || ir_dim_is_tag(st[i]) || ir_dim_is_tag(en[i])) {
            if (!slice_symbolic(g, x->dims[a], st[i], en[i], stp[i], &o->dims[a]))
                FAIL("slice of axis %lld from %s to %s by %lld: only step 1 from a constant "
                     "start >= 0 to the end or to a symbolic end is taken symbolically",
                     (long long)a, DSTR(st[i]), DSTR(en[i]), (long long)stp[i]);
            continue;
        }
        o->dims[a] = slice_extent(x->dims[a], st[i], en[i], stp[i]);
    }
    return true;
}

INFER_FN(pad)
{
    int64_t pads[2 * IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "pads", pads, 2 * IR_MAX_RANK);
    if (k != 2 * x->rank)
        FAIL("'pads' must have %d values", 2 * x->rank);
    const char *mode = ir_attr_string(g, n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
        FAIL("pad mode '%s' is not supported", mode);
    for (int i = 0; i < x->rank; i++) {
        int64_t d = x->dims[i] + pads[i] + pads[x->rank + i];
        if (pads[i] > (1 << 24) || pads[x->rank + i] > (1 << 24) || d < 0)
            FAIL("pads make dimension %d invalid", i);
        o->dims[i] = d;
    }
    return true;
}

INFER_FN(reshape)
{
    int64_t sh[IR_MAX_RANK + 1];
    int k = ir_attr_ints(g, n, "shape", sh, IR_MAX_RANK + 1);
    if (k < 0 || k > IR_MAX_RANK)
        FAIL("'shape' must have at most %d values", IR_MAX_RANK);
    o->rank = (uint8_t)k;
    for (int i = 0; i < k; i++) {
        if (sh[i] < 0 && !(ir_dim_is_tag(sh[i]) && ir_dim_valid(g, sh[i])))
            FAIL("reshape dimensions must be resolved (non-negative), got %lld",
                 (long long)sh[i]);
        o->dims[i] = sh[i];
    }
    if (!ir_type_is_static(x) || !ir_type_is_static(o)) {
        int64_t a = 0, b = 0;
        if (!ir_type_numel_dim(g, x, &a) || !ir_type_numel_dim(g, o, &b) || a != b)
            FAIL("reshape %s -> %s may change the number of elements", DSTR(a), DSTR(b));
        return true;
    }
    size_t a, b;
    if (!type_numel(x, &a) || !type_numel(o, &b) || a != b)
        FAIL("reshape changes the number of elements");
    return true;
}

INFER_FN(transpose)
{
    int64_t perm[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "perm", perm, IR_MAX_RANK);
    if (k < 0) {
        k = x->rank;
        for (int i = 0; i < k; i++)
            perm[i] = k - 1 - i;
    }
    if (k != x->rank)
        FAIL("'perm' must have %d values", x->rank);
    bool seen[IR_MAX_RANK] = {0};
    for (int i = 0; i < k; i++) {
        if (perm[i] < 0 || perm[i] >= k || seen[perm[i]])
            FAIL("'perm' is not a permutation");
        seen[perm[i]] = true;
        o->dims[i] = x->dims[perm[i]];
    }
    return true;
}

INFER_FN(squeeze)
{
    int64_t axes[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "axes", axes, IR_MAX_RANK);
    bool rm[IR_MAX_RANK] = {0};
    if (k < 0) {
        for (int i = 0; i < x->rank; i++)
            rm[i] = x->dims[i] == 1;
    } else {
        for (int i = 0; i < k; i++) {
            int64_t a;
            if (!norm_axis(g, n, axes[i], x->rank, &a, "axis"))
                return false;
            if (x->dims[a] != 1)
                FAIL("cannot squeeze dimension %lld of size %s", (long long)a,
                     DSTR(x->dims[a]));
            rm[a] = true;
        }
    }
    o->rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (!rm[i])
            o->dims[o->rank++] = x->dims[i];
    return true;
}

INFER_FN(unsqueeze)
{
    int64_t axes[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "axes", axes, IR_MAX_RANK);
    if (k < 0)
        FAIL("'axes' is required");
    int r = x->rank + k;
    if (r > IR_MAX_RANK)
        FAIL("result rank %d exceeds %d", r, IR_MAX_RANK);
    bool ins[IR_MAX_RANK] = {0};
    for (int i = 0; i < k; i++) {
        int64_t a;
        if (!norm_axis(g, n, axes[i], r, &a, "axis"))
            return false;
        if (ins[a])
            FAIL("axis repeated");
        ins[a] = true;
    }
    o->rank = (uint8_t)r;
    for (int i = 0, j = 0; i < r; i++)
        o->dims[i] = ins[i] ? 1 : x->dims[j++];
    return true;
}

INFER_FN(flatten)
{
    int64_t a = ir_attr_int(g, n, "axis", 1);
    if (a < 0)
        a += x->rank;
    if (a < 0 || a > x->rank)
        FAIL("axis out of range");
    int64_t d0 = 1, d1 = 1;
    for (int i = 0; i < x->rank; i++)
        if (!ir_dim_mul(g, i < a ? d0 : d1, x->dims[i], i < a ? &d0 : &d1))
            FAIL("the flattened dimensions are too large or too complex");
    o->rank = 2;
    o->dims[0] = d0;
    o->dims[1] = d1;
    return true;
}

/* identity: the operand's type; requantize: its element type is checked by the verifier */
INFER_FN(identity)
{
    if (n->op == OP_REQUANTIZE)
        o->elem = ET_NONE;
    return true;
}

INFER_FN(gather)
{
    const Type *idx = in_type(g, n, 1);
    if (idx->elem != ET_I64 && idx->elem != ET_I32)
        FAIL("indices must be i32 or i64");
    int64_t a;
    if (!norm_axis(g, n, ir_attr_int(g, n, "axis", 0), x->rank, &a, "axis"))
        return false;
    int r = x->rank - 1 + idx->rank;
    if (r > IR_MAX_RANK)
        FAIL("result rank too large");
    o->rank = 0;
    for (int i = 0; i < a; i++)
        o->dims[o->rank++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++)
        o->dims[o->rank++] = idx->dims[i];
    for (int i = (int)a + 1; i < x->rank; i++)
        o->dims[o->rank++] = x->dims[i];
    return true;
}

INFER_FN(shape)
{
    int64_t s = ir_attr_int(g, n, "start", 0), e = ir_attr_int(g, n, "end", x->rank);
    if (s < 0) s += x->rank;
    if (e < 0) e += x->rank;
    s = s < 0 ? 0 : s > x->rank ? x->rank : s;
    e = e < 0 ? 0 : e > x->rank ? x->rank : e;
    *o = type_make(ET_I64, 1, (int64_t[]){e > s ? e - s : 0});
    return true;
}

INFER_FN(constant_of_shape)
{
    const Tensor *t = ir_const_of(g, n->in[0]);
    if (!t || x->elem != ET_I64 || x->rank != 1)
        FAIL("shape operand must be a constant i64 vector");
    if (x->dims[0] > IR_MAX_RANK)
        FAIL("shape has more than %d dimensions", IR_MAX_RANK);
    const Attr *v = ir_attr(g, n, "value");
    o->elem = v && v->kind == ATTR_TENSOR ? v->t->type.elem : ET_F32;
    o->rank = (uint8_t)x->dims[0];
    for (int i = 0; i < o->rank; i++) {
        o->dims[i] = tensor_get_i(t, (size_t)i);
        if (ir_dim_is_tag(o->dims[i]) && ir_dim_valid(g, o->dims[i]))
            continue; /* a symbolic shape: the node stays until the symbol is bound */
        if (o->dims[i] < 0)
            FAIL("negative dimension");
    }
    return true;
}

INFER_FN(lut)
{
    const Attr *t = ir_attr(g, n, "table");
    if (x->elem != ET_I8 && x->elem != ET_U8)
        FAIL("input must be i8 or u8");
    if (!t || t->kind != ATTR_TENSOR || t->t->type.rank != 1 || t->t->type.dims[0] != 256)
        FAIL("'table' must be a tensor of 256 entries");
    o->elem = t->t->type.elem;
    return true;
}

/* ---- comparisons, logic, selection, broadcasting copies, range, argmax (eval.c) ---- */

/* The numpy broadcast of operands [first, n->nin) into o (element type unchanged). */
static bool
bcast_operands(Graph *g, Node *n, uint32_t first, Type *o)
{
    Type acc = *in_type(g, n, first);
    acc.q = NULL;
    for (uint32_t i = first + 1; i < n->nin; i++) {
        const Type *t = in_type(g, n, i);
        if (!shape_broadcast(&acc, t, &acc)) {
            char sa[128], sb[128];
            fmt_shape(g, sa, sizeof sa, &acc);
            fmt_shape(g, sb, sizeof sb, t);
            FAIL("shapes %s and %s do not broadcast", sa, sb);
        }
    }
    for (int d = 0; d < acc.rank; d++)
        o->dims[d] = acc.dims[d];
    o->rank = acc.rank;
    return true;
}

static bool
plain_elem(ElemType e)
{
    return e != ET_NONE && e != ET_I4 && e != ET_U4;
}

/* equal, less, less_equal, greater, greater_equal: operands of one type, bool result */
INFER_FN(compare)
{
    const Type *b = in_type(g, n, 1);
    if (x->elem != b->elem)
        FAIL("operand types differ: %s vs %s", elem_name(x->elem), elem_name(b->elem));
    if (!plain_elem(x->elem))
        FAIL("operands must be numbers or bool, got %s", elem_name(x->elem));
    if (!bcast_operands(g, n, 0, o))
        return false;
    o->elem = ET_BOOL;
    return true;
}

/* not, and, or, xor: bool operands and result */
INFER_FN(logical)
{
    for (uint32_t i = 0; i < n->nin; i++)
        if (in_type(g, n, i)->elem != ET_BOOL)
            FAIL("operand %u must be bool, got %s", i, elem_name(in_type(g, n, i)->elem));
    return bcast_operands(g, n, 0, o);
}

/* where cond, x, y: bool condition, x and y of one type */
INFER_FN(where)
{
    const Type *a = in_type(g, n, 1), *b = in_type(g, n, 2);
    if (x->elem != ET_BOOL)
        FAIL("condition must be bool, got %s", elem_name(x->elem));
    if (a->elem != b->elem || !plain_elem(a->elem))
        FAIL("operands 1 and 2 must have one type, got %s and %s", elem_name(a->elem),
             elem_name(b->elem));
    if (!bcast_operands(g, n, 0, o))
        return false;
    o->elem = a->elem;
    return true;
}

/* expand: numpy broadcast of x and 'shape' (ONNX Expand) */
INFER_FN(expand)
{
    int64_t sh[IR_MAX_RANK + 1];
    int k = ir_attr_ints(g, n, "shape", sh, IR_MAX_RANK + 1);
    if (k < 0 || k > IR_MAX_RANK)
        FAIL("'shape' must have at most %d values", IR_MAX_RANK);
    for (int i = 0; i < k; i++)
        if (sh[i] < 0 && !(ir_dim_is_tag(sh[i]) && ir_dim_valid(g, sh[i])))
            FAIL("'shape' has a negative dimension %lld", (long long)sh[i]);
    Type s = type_make(x->elem, k, sh), r;
    if (!shape_broadcast(x, &s, &r)) {
        char sa[128], sb[128];
        fmt_shape(g, sa, sizeof sa, x);
        fmt_shape(g, sb, sizeof sb, &s);
        FAIL("shape %s does not broadcast to %s", sa, sb);
    }
    size_t cnt;
    if (ir_type_is_static(&r) && (!type_numel(&r, &cnt) || cnt > ((size_t)1 << 40)))
        FAIL("result is too large");
    o->rank = r.rank;
    memcpy(o->dims, r.dims, sizeof o->dims);
    return true;
}

/* tile: dims[i] * repeats[i] */
INFER_FN(tile)
{
    int64_t rep[IR_MAX_RANK + 1];
    int k = ir_attr_ints(g, n, "repeats", rep, IR_MAX_RANK + 1);
    if (k != x->rank)
        FAIL("'repeats' must have %d values", x->rank);
    for (int i = 0; i < k; i++) {
        if (rep[i] < 0 || rep[i] > ((int64_t)1 << 30))
            FAIL("repeats[%d] = %lld is negative or too large", i, (long long)rep[i]);
        o->dims[i] = x->dims[i] * rep[i];
    }
    size_t cnt;
    if (!type_numel(o, &cnt) || cnt > ((size_t)1 << 40))
        FAIL("result is too large");
    return true;
}

/* range start, limit, delta: constant scalars of one type; a vector of the count (eval.c) */
INFER_FN(range)
{
    const Tensor *t[3];
    for (uint32_t i = 0; i < 3; i++) {
        const Type *ti = in_type(g, n, i);
        t[i] = ir_const_of(g, n->in[i]);
        if (ti->elem != x->elem)
            FAIL("operands must have one type, got %s and %s", elem_name(x->elem),
                 elem_name(ti->elem));
        if (type_numel_unchecked(ti) != 1 || ti->rank > 1)
            FAIL("operand %u must be a scalar", i);
        if (!t[i])
            FAIL("operand %u must be a constant (the result's length depends on it)", i);
    }
    if (x->elem != ET_F32 && x->elem != ET_F64 && x->elem != ET_I16 && x->elem != ET_I32 &&
        x->elem != ET_I64)
        FAIL("operands must be f32, f64, i16, i32 or i64, got %s", elem_name(x->elem));
    int64_t cnt;
    char err[160];
    if (g->dimx.len && elem_is_int(x->elem) && ir_tensor_has_sym(t[1])) {
        /* range(start, symbolic limit, 1): limit - start elements, the limit a dimension
         * (>= start when the symbol is bound; the bound graph is typed exactly) */
        if (ir_tensor_has_sym(t[0]) || tensor_get_i(t[2], 0) != 1 ||
            !ir_dim_sub(g, tensor_get_i(t[1], 0), tensor_get_i(t[0], 0), &cnt))
            FAIL("a symbolic limit needs a constant start and delta 1");
        *o = type_make(x->elem, 1, &cnt);
        return true;
    }
    if (!ir_range_count(t[0], t[1], t[2], &cnt, err, sizeof err))
        FAIL("%s", err);
    *o = type_make(x->elem, 1, &cnt);
    return true;
}

/* argmax: i64 positions along 'axis' (kept as 1 with keepdims, the default) */
INFER_FN(argmax)
{
    int64_t a;
    if (x->rank == 0)
        FAIL("operand must have rank >= 1");
    if (!plain_elem(x->elem))
        FAIL("operand must be numbers or bool, got %s", elem_name(x->elem));
    if (!norm_axis(g, n, ir_attr_int(g, n, "axis", 0), x->rank, &a, "axis"))
        return false;
    if (x->dims[a] == 0)
        FAIL("argmax along an empty axis");
    int64_t last = ir_attr_int(g, n, "select_last_index", 0);
    if (last != 0 && last != 1)
        FAIL("select_last_index must be 0 or 1, got %lld", (long long)last);
    o->elem = ET_I64;
    if (ir_attr_int(g, n, "keepdims", 1)) {
        o->dims[a] = 1;
    } else {
        memmove(o->dims + a, o->dims + a + 1, (size_t)(x->rank - a - 1) * sizeof(int64_t));
        o->rank--;
    }
    return true;
}

/* An op without OPF_SYMDIM types only static operands and attributes: a symbolic dimension
 * there is an error naming it. */
static bool
symbolic_operands_ok(Graph *g, Node *n)
{
    bool symn = op_info(n->op)->flags & OPF_SYMN;
    for (uint32_t i = 0; i < n->nin; i++) {
        const Type *t = in_type(g, n, i);
        /* OPF_SYMN: operand 0's batch axis is carried, never computed on */
        int d = t ? ir_type_first_sym_from(t, i == 0 && symn ? 1 : 0) : -1;
        if (d >= 0) {
            char ts[256];
            fmt_shape(g, ts, sizeof ts, t);
            FAIL("the op does not take symbolic dimensions (operand %u is %s %s); bind the "
                 "symbol with --dim NAME=<size>", i, elem_name(t->elem), ts);
        }
    }
    for (uint32_t i = 0; i < n->nattr; i++) {
        const Attr *a = &n->attrs[i];
        for (uint32_t k = 0; a->kind == ATTR_INTS && k < a->ints.n; k++)
            if (ir_dim_is_tag(a->ints.v[k]) && ir_dim_valid(g, a->ints.v[k]))
                FAIL("the op does not take symbolic dimensions ('%s' holds %s); bind the "
                     "symbol with --dim NAME=<size>", ir_str(g, a->name), DSTR(a->ints.v[k]));
    }
    return true;
}

typedef bool (*InferFn)(Graph *g, Node *n, const Type *x, Type *o, Type *out);
static const InferFn infer_tab[OP_COUNT] = {
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, ...) [OP_##E] = infer_##INFER,
#include "ops.def"
#undef OP
};

bool
ir_infer_types(Graph *g, Node *n, Type *out)
{
    const OpInfo *info = op_info(n->op);
    /* operand presence */
    for (int i = 0; i < info->min_in; i++)
        if ((uint32_t)i >= n->nin || !n->in[i].id)
            FAIL("operand %d is required", i);
    if (n->op <= OP_INVALID || n->op >= OP_COUNT)
        FAIL("invalid op");
    if (g->dimx.len && !(info->flags & OPF_SYMDIM) && !symbolic_operands_ok(g, n))
        return false;
    const Type *x = in_type(g, n, 0);
    Type o = {0};
    if (x) {
        o = *x;
        o.q = NULL;
    }
    if (!infer_tab[n->op](g, n, x, &o, out))
        return false;
    out[0] = o;
    return true;
}
