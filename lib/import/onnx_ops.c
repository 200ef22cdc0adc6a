/* onnx_ops.c: translation of each supported ONNX op into qdqc IR.
 * Every ONNX parameter passed as a constant input becomes an attribute (docs/ir.md
 * conventions), so inputs such as Reshape's shape or Slice's starts must be constants after
 * import-time folding (ir_try_fold). QLinearConv/QLinearMatMul expand into
 * dequantize -> conv/matmul -> quantize with the same parameters (the passes fold them back);
 * ConvInteger/MatMulInteger with constant zero points map onto qconv/qmatmul with an i32
 * result, their operands typed q{scale=1, zp}; with runtime zero points they expand into
 * dequantize (scale 1) -> float conv/matmul -> cast to i32 (exact while |acc| <= 2^24).
 * Errors name the node through I->loc. */
#include "onnx_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef bool (*OpFn)(OnnxImp *I);

/* ---- operands and attributes ---- */
static ValueId
IN(OnnxImp *I, size_t k)
{
    if (k >= I->node->n_input)
        return VNONE;
    return onnx_lookup(I, I->node->input[k]);
}

static const Type *
TY(OnnxImp *I, ValueId v)
{
    return v.id ? &ir_value(I->g, v)->type : NULL;
}

static const Tensor *
CIN(OnnxImp *I, size_t k)
{
    ValueId v = IN(I, k);
    return v.id ? ir_const_of(I->g, v) : NULL;
}

static const Onnx__AttributeProto *
attr(OnnxImp *I, const char *name)
{
    for (size_t i = 0; i < I->node->n_attribute; i++) {
        const Onnx__AttributeProto *a = I->node->attribute[i];
        if (a && a->name && strcmp(a->name, name) == 0)
            return a;
    }
    return NULL;
}

/* The attribute if present with the expected type; a present attribute of another type is
 * an error (reported once, remembered in I->bad_attr so the node fails). */
static const Onnx__AttributeProto *
attr_typed(OnnxImp *I, const char *name, Onnx__AttributeProto__AttributeType want,
           const char *tname)
{
    const Onnx__AttributeProto *a = attr(I, name);
    if (!a)
        return NULL;
    if (a->has_type && a->type != want) {
        if (!I->bad_attr)
            onnx_node_error(I, "attribute '%s' must be %s", name, tname);
        I->bad_attr = true;
        return NULL;
    }
    return a;
}

static int64_t
attr_i(OnnxImp *I, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a =
        attr_typed(I, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, "an INT");
    return a && a->has_i ? a->i : dflt;
}

static float
attr_f(OnnxImp *I, const char *name, float dflt)
{
    const Onnx__AttributeProto *a =
        attr_typed(I, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, "a FLOAT");
    return a && a->has_f ? a->f : dflt;
}

/* ints attribute into out[max]: count, -1 if absent, -2 (after an error) if too long */
static int
attr_ints(OnnxImp *I, const char *name, int64_t *out, int max)
{
    const Onnx__AttributeProto *a =
        attr_typed(I, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, "INTS");
    if (!a)
        return I->bad_attr ? -2 : -1;
    if (a->n_ints > (size_t)max) {
        onnx_node_error(I, "attribute '%s' has %zu values, at most %d are supported", name,
                        a->n_ints, max);
        return -2;
    }
    if (a->n_ints)
        memcpy(out, a->ints, a->n_ints * sizeof(int64_t));
    return (int)a->n_ints;
}

/* string attribute (NUL-terminated copy in the module arena) */
static const char *
attr_s(OnnxImp *I, const char *name, const char *dflt)
{
    const Onnx__AttributeProto *a =
        attr_typed(I, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, "a STRING");
    if (!a || !a->has_s)
        return dflt;
    char *s = arena_alloc(&I->m->arena, a->s.len + 1);
    if (a->s.len)
        memcpy(s, a->s.data, a->s.len);
    return s;
}

/* ---- building nodes ---- */
static NodeId
mk(OnnxImp *I, OpKind op, uint32_t nin, const ValueId *in, uint32_t nout)
{
    return ir_add_node(I->g, op, nin, in, nout, I->loc);
}

/* Type the results of n, create them (named from names[k], or fresh) and try folding. */
static bool
fin(OnnxImp *I, NodeId nid, const char *const *names, ValueId *outs, ElemType force)
{
    Graph *g = I->g;
    uint32_t nout = ir_node(g, nid)->nout;
    Type inf[64];
    if (nout > 64) {
        onnx_node_error(I, "%u results, at most 64 are supported", nout);
        return false;
    }
    if (!ir_infer_types(g, ir_node(g, nid), inf))
        return false;
    for (uint32_t k = 0; k < nout; k++) {
        if (inf[k].elem == ET_NONE)
            inf[k].elem = force;
        size_t ne, bytes;
        if (!type_numel(&inf[k], &ne) || !size_mul(ne, elem_size(inf[k].elem), &bytes) ||
            bytes > ONNX_MAX_TENSOR_BYTES) {
            onnx_node_error(I, "result %u is too large (its size overflows or exceeds the limit)",
                            k);
            return false;
        }
        const char *nm = names && names[k] && *names[k] ? names[k] : NULL;
        ValueId v = ir_add_result(g, nid, k, nm, &inf[k]);
        if (outs)
            outs[k] = v;
    }
    ir_try_fold(g, nid);
    return true;
}

/* fin() with the ONNX node's output names, then bind them. */
static bool
emit(OnnxImp *I, NodeId nid, ElemType force)
{
    uint32_t nout = ir_node(I->g, nid)->nout;
    const char *names[64] = {0};
    ValueId outs[64];
    for (uint32_t k = 0; k < nout && k < 64 && k < I->node->n_output; k++)
        names[k] = I->node->output[k];
    if (!fin(I, nid, names, outs, force))
        return false;
    for (uint32_t k = 0; k < nout && k < I->node->n_output; k++)
        if (!onnx_bind(I, I->node->output[k], outs[k]))
            return false;
    return true;
}

static ValueId
emit1(OnnxImp *I, NodeId nid, const char *name, ElemType force)
{
    ValueId v = VNONE;
    const char *names[1] = {name};
    if (!fin(I, nid, names, &v, force))
        return VNONE;
    return v;
}

static const char *
out_name(OnnxImp *I, size_t k)
{
    return k < I->node->n_output ? I->node->output[k] : "";
}

/* a derived name for an intermediate value: "<output 0>.<suffix>" */
static const char *
tmp_name(OnnxImp *I, const char *suffix)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%.400s.%s", out_name(I, 0), suffix);
    return intern_str(&I->m->strs, intern(&I->m->strs, buf));
}

static ValueId
const_f32(OnnxImp *I, const char *name, const float *v, int rank, const int64_t *dims)
{
    Type t = type_make(ET_F32, rank, dims);
    Tensor *ts = ir_tensor_new(I->m, &t);
    memcpy(ts->data, v, ts->nbytes);
    return ir_add_const(I->g, name, ts, I->loc);
}

/* A constant integer vector input (rank 0 or 1, i32/i64) into out[max]. */
static bool
const_ints(OnnxImp *I, size_t k, const char *what, int64_t *out, int max, int *count)
{
    const Tensor *t = CIN(I, k);
    if (!t) {
        onnx_node_error(I, "'%s' (input %zu) must be a constant (it is computed at run time)",
                        what, k);
        return false;
    }
    if (t->type.rank > 1 || (t->type.elem != ET_I64 && t->type.elem != ET_I32)) {
        onnx_node_error(I, "'%s' must be a 1-D integer tensor", what);
        return false;
    }
    size_t n = type_numel_unchecked(&t->type);
    if (n > (size_t)max) {
        onnx_node_error(I, "'%s' has %zu values, at most %d are supported", what, n, max);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = tensor_get_i(t, i);
    *count = (int)n;
    return true;
}

static bool
const_scalar_f(OnnxImp *I, size_t k, const char *what, double *out)
{
    const Tensor *t = CIN(I, k);
    if (!t) {
        onnx_node_error(I, "'%s' (input %zu) must be a constant", what, k);
        return false;
    }
    if (type_numel_unchecked(&t->type) != 1) {
        onnx_node_error(I, "'%s' must have one element", what);
        return false;
    }
    *out = tensor_get_f(t, 0);
    return true;
}

static bool
norm_axis(OnnxImp *I, int64_t axis, int rank, int64_t *out)
{
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
        onnx_node_error(I, "axis %lld is out of range for rank %d", (long long)axis, rank);
        return false;
    }
    *out = a;
    return true;
}

/* ---- quantization parameters ---- */
static bool
is_q_storage(ElemType e, bool allow_i32)
{
    return e == ET_U8 || e == ET_I8 || e == ET_U16 || e == ET_I16 || e == ET_U4 || e == ET_I4 ||
           (allow_i32 && e == ET_I32);
}

/* Static parameters from constant scale/zero point (z may be NULL: zero). The integer side has
 * type xt; per-axis parameters apply along `axis` of xt. A 1-element scale, whatever its
 * shape, is per-tensor. */
static QParams *
qparams_of(OnnxImp *I, const Tensor *s, const Tensor *z, ElemType storage, int64_t axis,
           const Type *xt)
{
    size_t n = type_numel_unchecked(&s->type);
    if (!elem_is_float(s->type.elem)) {
        onnx_node_error(I, "scale must be float, got %s", elem_name(s->type.elem));
        return NULL;
    }
    if (n != 1 && s->type.rank != 1) {
        onnx_node_error(I, "scale of rank %d with %zu values: block quantization is not "
                        "supported", s->type.rank, n);
        return NULL;
    }
    if (z && type_numel_unchecked(&z->type) != n) {
        onnx_node_error(I, "zero point has %zu values, scale has %zu",
                        type_numel_unchecked(&z->type), n);
        return NULL;
    }
    if (z && z->type.elem != storage) {
        onnx_node_error(I, "zero point type %s differs from %s", elem_name(z->type.elem),
                        elem_name(storage));
        return NULL;
    }
    int64_t a = -1;
    if (n != 1) {
        if (!norm_axis(I, axis, xt->rank, &a))
            return NULL;
        if (xt->dims[a] != (int64_t)n) {
            onnx_node_error(I, "per-axis scale has %zu values, axis %lld has size %lld", n,
                            (long long)a, (long long)xt->dims[a]);
            return NULL;
        }
    }
    QParams *q = ir_qparams_new(I->m, storage, (int32_t)a, (uint32_t)n);
    int64_t lo, hi;
    elem_range(storage, &lo, &hi);
    for (size_t i = 0; i < n; i++) {
        double sc = tensor_get_f(s, i);
        float f = (float)sc;
        if (!(f >= FLT_MIN) || !isfinite(f)) {
            char buf[48];
            fmt_float(buf, f);
            onnx_node_error(I, "scale%s must be positive, normal and finite, got %s",
                            n == 1 ? "" : "[i]", buf);
            return NULL;
        }
        q->scale[i] = f;
        int64_t zp = z ? tensor_get_i(z, i) : 0;
        if (zp < lo || zp > hi) {
            onnx_node_error(I, "zero point %lld is outside the %s range", (long long)zp,
                            elem_name(storage));
            return NULL;
        }
        q->zp[i] = (int32_t)zp;
    }
    return q;
}

static bool
check_block(OnnxImp *I)
{
    if (attr_i(I, "block_size", 0) != 0) {
        onnx_node_error(I, "block quantization (block_size=%lld) is not supported",
                        (long long)attr_i(I, "block_size", 0));
        return false;
    }
    return true;
}

/* dequantize x with scale s and zero point z (values; z may be VNONE). Static when both are
 * constants, else the dynamic form. */
static ValueId
build_dq(OnnxImp *I, ValueId x, ValueId s, ValueId z, int64_t axis, const char *name)
{
    Graph *g = I->g;
    const Type *xt = TY(I, x), *st = TY(I, s);
    if (!is_q_storage(xt->elem, true)) {
        onnx_node_error(I, "dequantizing %s is not supported", elem_name(xt->elem));
        return VNONE;
    }
    if (!elem_is_float(st->elem)) {
        onnx_node_error(I, "scale must be float, got %s", elem_name(st->elem));
        return VNONE;
    }
    const Tensor *sc = ir_const_of(g, s), *zc = z.id ? ir_const_of(g, z) : NULL;
    ElemType to = st->elem;
    NodeId n;
    if (sc && (!z.id || zc)) {
        QParams *q = qparams_of(I, sc, zc, xt->elem, axis, xt);
        if (!q)
            return VNONE;
        n = mk(I, OP_DEQUANTIZE, 1, &x, 1);
        ir_node(g, n)->q = q;
    } else {
        if (z.id && TY(I, z)->elem != xt->elem) {
            onnx_node_error(I, "zero point type %s differs from %s", elem_name(TY(I, z)->elem),
                            elem_name(xt->elem));
            return VNONE;
        }
        ValueId ins[3] = {x, s, z};
        n = mk(I, OP_DEQUANTIZE, z.id ? 3 : 2, ins, 1);
        size_t ns = type_numel_unchecked(st);
        if (ns != 1) {
            int64_t a;
            if (st->rank != 1) {
                onnx_node_error(I, "scale of rank %d: block quantization is not supported",
                                st->rank);
                return VNONE;
            }
            if (!norm_axis(I, axis, xt->rank, &a))
                return VNONE;
            ir_set_attr_int(g, n, "axis", a);
        }
    }
    if (to != ET_F32)
        ir_set_attr_string(g, n, "to", elem_name(to));
    return emit1(I, n, name, ET_NONE);
}

static ValueId
build_q(OnnxImp *I, ValueId x, ValueId s, ValueId z, ElemType storage, int64_t axis,
        const char *name)
{
    Graph *g = I->g;
    const Type *xt = TY(I, x), *st = TY(I, s);
    if (!is_q_storage(storage, false)) {
        onnx_node_error(I, "quantizing to %s is not supported", elem_name(storage));
        return VNONE;
    }
    if (!elem_is_float(st->elem)) {
        onnx_node_error(I, "scale must be float, got %s", elem_name(st->elem));
        return VNONE;
    }
    const Tensor *sc = ir_const_of(g, s), *zc = z.id ? ir_const_of(g, z) : NULL;
    NodeId n;
    if (sc && (!z.id || zc)) {
        Type rt = *xt;
        rt.elem = storage;
        QParams *q = qparams_of(I, sc, zc, storage, axis, &rt);
        if (!q)
            return VNONE;
        n = mk(I, OP_QUANTIZE, 1, &x, 1);
        ir_node(g, n)->q = q;
    } else {
        ValueId ins[3] = {x, s, z};
        n = mk(I, OP_QUANTIZE, z.id ? 3 : 2, ins, 1);
        size_t ns = type_numel_unchecked(st);
        if (ns != 1) {
            int64_t a;
            if (st->rank != 1) {
                onnx_node_error(I, "scale of rank %d: block quantization is not supported",
                                st->rank);
                return VNONE;
            }
            if (!norm_axis(I, axis, xt->rank, &a))
                return VNONE;
            ir_set_attr_int(g, n, "axis", a);
        }
    }
    return emit1(I, n, name, ET_NONE);
}

static bool
op_quantize(OnnxImp *I)
{
    if (!check_block(I))
        return false;
    ValueId x = IN(I, 0), s = IN(I, 1), z = IN(I, 2);
    ElemType storage = ET_U8;
    if (z.id) {
        storage = TY(I, z)->elem;
    } else if (attr(I, "output_dtype")) {
        int64_t dt = attr_i(I, "output_dtype", 2);
        storage = onnx_elem((int32_t)dt);
        if (storage == ET_NONE) {
            onnx_node_error(I, "output_dtype %s is not supported", onnx_dtype_name((int32_t)dt));
            return false;
        }
    }
    ValueId y = build_q(I, x, s, z, storage, attr_i(I, "axis", 1), out_name(I, 0));
    return y.id && onnx_bind(I, out_name(I, 0), y);
}

static bool
op_dequantize(OnnxImp *I)
{
    if (!check_block(I))
        return false;
    ValueId y = build_dq(I, IN(I, 0), IN(I, 1), IN(I, 2), attr_i(I, "axis", 1),
                         out_name(I, 0));
    return y.id && onnx_bind(I, out_name(I, 0), y);
}

static bool
op_dynamic_quantize(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    return emit(I, mk(I, OP_DYNAMIC_QUANTIZE, 1, &x, 3), ET_NONE);
}

/* ---- convolution-like attributes ---- */
/* Copy strides/dilations/pads/group (+ pool attrs) onto n, resolving auto_pad against the
 * input x and kernel sizes k[ns]. */
static bool
conv_attrs(OnnxImp *I, NodeId n, const Type *x, const int64_t *k, int ns, bool pool)
{
    Graph *g = I->g;
    int64_t strides[IR_MAX_RANK], dil[IR_MAX_RANK], pads[2 * IR_MAX_RANK];
    int cs = attr_ints(I, "strides", strides, IR_MAX_RANK);
    int cd = attr_ints(I, "dilations", dil, IR_MAX_RANK);
    int cp = attr_ints(I, "pads", pads, 2 * IR_MAX_RANK);
    if (cs == -2 || cd == -2 || cp == -2)
        return false;
    if ((cs >= 0 && cs != ns) || (cd >= 0 && cd != ns) || (cp >= 0 && cp != 2 * ns)) {
        onnx_node_error(I, "strides, dilations or pads do not match %d spatial dimensions", ns);
        return false;
    }
    if (cs < 0)
        for (int i = 0; i < ns; i++)
            strides[i] = 1;
    if (cd < 0)
        for (int i = 0; i < ns; i++)
            dil[i] = 1;
    const char *ap = attr_s(I, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") &&
        strcmp(ap, "SAME_LOWER")) {
        onnx_node_error(I, "auto_pad '%s' is not valid", ap);
        return false;
    }
    if (strcmp(ap, "NOTSET") != 0) {
        if (cp >= 0)
            for (int i = 0; i < 2 * ns; i++)
                if (pads[i]) {
                    onnx_node_error(I, "auto_pad '%s' together with explicit pads", ap);
                    return false;
                }
        cp = 2 * ns;
        for (int i = 0; i < ns; i++) {
            pads[i] = pads[ns + i] = 0;
            if (strcmp(ap, "VALID") == 0)
                continue;
            int64_t in = x->dims[2 + i], s = strides[i], d = dil[i], kk = k[i];
            if (s <= 0 || d <= 0 || kk <= 0 || s > (1 << 20) || d > (1 << 20) || kk > (1 << 20)) {
                onnx_node_error(I, "kernel, strides and dilations must be positive and small");
                return false;
            }
            int64_t out = (in + s - 1) / s, ek = (kk - 1) * d + 1;
            int64_t total = (out - 1) * s + ek - in;
            if (total < 0)
                total = 0;
            if (strcmp(ap, "SAME_UPPER") == 0) {
                pads[i] = total / 2;
                pads[ns + i] = total - total / 2;
            } else {
                pads[ns + i] = total / 2;
                pads[i] = total - total / 2;
            }
        }
    }
    if (cs >= 0)
        ir_set_attr_ints(g, n, "strides", strides, (uint32_t)ns);
    if (cp >= 0)
        ir_set_attr_ints(g, n, "pads", pads, (uint32_t)(2 * ns));
    if (cd >= 0)
        ir_set_attr_ints(g, n, "dilations", dil, (uint32_t)ns);
    if (!pool && attr(I, "group"))
        ir_set_attr_int(g, n, "group", attr_i(I, "group", 1));
    int64_t ka[IR_MAX_RANK];
    int ck = pool ? -1 : attr_ints(I, "kernel_shape", ka, IR_MAX_RANK);
    if (ck == -2)
        return false;
    if (pool)
        ir_set_attr_ints(g, n, "kernel_shape", k, (uint32_t)ns);
    else if (ck >= 0)
        ir_set_attr_ints(g, n, "kernel_shape", ka, (uint32_t)ck);
    if (pool && attr_i(I, "ceil_mode", 0))
        ir_set_attr_int(g, n, "ceil_mode", 1);
    return true;
}

static bool
spatial(OnnxImp *I, const Type *x, const Type *w, int64_t *k, int *ns)
{
    if (x->rank < 3 || x->rank > 5) {
        onnx_node_error(I, "input must have rank 3 to 5, got %d", x->rank);
        return false;
    }
    *ns = x->rank - 2;
    if (w) {
        if (w->rank != x->rank) {
            onnx_node_error(I, "weight rank %d differs from input rank %d", w->rank, x->rank);
            return false;
        }
        for (int i = 0; i < *ns; i++)
            k[i] = w->dims[2 + i];
    } else {
        int c = attr_ints(I, "kernel_shape", k, IR_MAX_RANK);
        if (c != *ns) {
            if (c != -2)
                onnx_node_error(I, "'kernel_shape' must have %d values", *ns);
            return false;
        }
    }
    return true;
}

static NodeId
build_conv(OnnxImp *I, OpKind op, ValueId x, ValueId w, ValueId b)
{
    int64_t k[IR_MAX_RANK];
    int ns;
    if (!spatial(I, TY(I, x), TY(I, w), k, &ns))
        return NNONE;
    ValueId ins[3] = {x, w, b};
    NodeId n = mk(I, op, b.id ? 3 : 2, ins, 1);
    if (!conv_attrs(I, n, TY(I, x), k, ns, false))
        return NNONE;
    return n;
}

static bool
op_conv(OnnxImp *I)
{
    NodeId n = build_conv(I, OP_CONV, IN(I, 0), IN(I, 1), IN(I, 2));
    return n.id && emit(I, n, ET_NONE);
}

static bool
op_conv_transpose(OnnxImp *I)
{
    Graph *g = I->g;
    ValueId x = IN(I, 0), w = IN(I, 1), b = IN(I, 2);
    const Type *xt = TY(I, x), *wt = TY(I, w);
    int64_t k[IR_MAX_RANK];
    int ns;
    if (!spatial(I, xt, wt, k, &ns))
        return false;
    int64_t strides[IR_MAX_RANK], dil[IR_MAX_RANK], pads[2 * IR_MAX_RANK], opad[IR_MAX_RANK],
        oshape[IR_MAX_RANK];
    int cs = attr_ints(I, "strides", strides, IR_MAX_RANK);
    int cd = attr_ints(I, "dilations", dil, IR_MAX_RANK);
    int cp = attr_ints(I, "pads", pads, 2 * IR_MAX_RANK);
    int co = attr_ints(I, "output_padding", opad, IR_MAX_RANK);
    int cos = attr_ints(I, "output_shape", oshape, IR_MAX_RANK);
    if (cs == -2 || cd == -2 || cp == -2 || co == -2 || cos == -2)
        return false;
    if ((cs >= 0 && cs != ns) || (cd >= 0 && cd != ns) || (cp >= 0 && cp != 2 * ns) ||
        (co >= 0 && co != ns) || (cos >= 0 && cos != ns && cos != ns + 2)) {
        onnx_node_error(I, "attributes do not match %d spatial dimensions", ns);
        return false;
    }
    for (int i = 0; i < ns; i++) {
        if (cs < 0) strides[i] = 1;
        if (cd < 0) dil[i] = 1;
        if (co < 0) opad[i] = 0;
        if (cp < 0) pads[i] = pads[ns + i] = 0;
    }
    const char *ap = attr_s(I, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    if (cos >= 0 || same) {
        for (int i = 0; i < ns; i++) {
            int64_t in = xt->dims[2 + i];
            if (strides[i] <= 0 || dil[i] <= 0 || strides[i] > (1 << 20) || dil[i] > (1 << 20) ||
                k[i] > (1 << 20) || opad[i] < 0 || opad[i] > (1 << 20)) {
                onnx_node_error(I, "strides, dilations and output_padding must be small and "
                                "positive");
                return false;
            }
            int64_t want = cos >= 0 ? oshape[cos == ns ? i : i + 2] : in * strides[i];
            if (want <= 0 || want > ((int64_t)1 << 40)) {
                onnx_node_error(I, "output_shape must be positive");
                return false;
            }
            int64_t total = strides[i] * (in - 1) + opad[i] + (k[i] - 1) * dil[i] + 1 - want;
            if (total == -1 && !same) {
                /* ONNX's floor division puts the one extra element at the end: that is
                 * output_padding */
                opad[i]++;
                total = 0;
                co = ns;
            }
            if (total < 0) {
                onnx_node_error(I, "output_shape %lld is larger than the transposed convolution "
                                "produces", (long long)want);
                return false;
            }
            bool upper = strcmp(ap, "SAME_UPPER") == 0;
            pads[i] = upper ? total / 2 : total - total / 2;
            pads[ns + i] = total - pads[i];
        }
        cp = 2 * ns;
    } else if (strcmp(ap, "VALID") == 0) {
        for (int i = 0; i < 2 * ns; i++)
            pads[i] = 0;
    }
    ValueId ins[3] = {x, w, b};
    NodeId n = mk(I, OP_CONV_TRANSPOSE, b.id ? 3 : 2, ins, 1);
    if (cs >= 0)
        ir_set_attr_ints(g, n, "strides", strides, (uint32_t)ns);
    ir_set_attr_ints(g, n, "pads", pads, (uint32_t)(2 * ns));
    if (cd >= 0)
        ir_set_attr_ints(g, n, "dilations", dil, (uint32_t)ns);
    if (co >= 0)
        ir_set_attr_ints(g, n, "output_padding", opad, (uint32_t)ns);
    if (attr(I, "group"))
        ir_set_attr_int(g, n, "group", attr_i(I, "group", 1));
    return emit(I, n, ET_NONE);
}

/* ---- QLinear* expansion ---- */
/* bias scale = x_scale * w_scale: a constant when both are, else a mul node */
static ValueId
bias_dq(OnnxImp *I, ValueId b, ValueId xs, ValueId ws)
{
    Graph *g = I->g;
    const Tensor *xc = ir_const_of(g, xs), *wc = ir_const_of(g, ws);
    const Type *bt = TY(I, b);
    if (bt->elem != ET_I32) {
        onnx_node_error(I, "bias must be int32, got %s", elem_name(bt->elem));
        return VNONE;
    }
    if (xc && wc) {
        size_t nx = type_numel_unchecked(&xc->type), nw = type_numel_unchecked(&wc->type);
        if (nx != 1) {
            onnx_node_error(I, "input scale must have one value");
            return VNONE;
        }
        if (nw != 1 && (bt->rank != 1 || (int64_t)nw != bt->dims[0])) {
            onnx_node_error(I, "bias has %lld values, weight scale has %zu",
                            bt->rank ? (long long)bt->dims[0] : 1LL, nw);
            return VNONE;
        }
        QParams *q = ir_qparams_new(I->m, ET_I32, nw == 1 ? -1 : 0, (uint32_t)nw);
        float sx = (float)tensor_get_f(xc, 0);
        for (size_t i = 0; i < nw; i++) {
            q->scale[i] = sx * (float)tensor_get_f(wc, i);
            if (!(q->scale[i] > 0) || !isfinite(q->scale[i])) {
                onnx_node_error(I, "bias scale (input scale x weight scale) must be positive and "
                                "finite");
                return VNONE;
            }
        }
        NodeId n = mk(I, OP_DEQUANTIZE, 1, &b, 1);
        ir_node(g, n)->q = q;
        return emit1(I, n, tmp_name(I, "b_dq"), ET_NONE);
    }
    ValueId ins[2] = {xs, ws};
    ValueId bs = emit1(I, mk(I, OP_MUL, 2, ins, 1), tmp_name(I, "b_scale"), ET_NONE);
    if (!bs.id)
        return VNONE;
    ValueId din[2] = {b, bs};
    NodeId n = mk(I, OP_DEQUANTIZE, 2, din, 1);
    if (type_numel_unchecked(TY(I, bs)) != 1)
        ir_set_attr_int(g, n, "axis", 0);
    return emit1(I, n, tmp_name(I, "b_dq"), ET_NONE);
}

static bool
op_qlinear_conv(OnnxImp *I)
{
    ValueId x = IN(I, 0), w = IN(I, 3), b = IN(I, 8);
    ValueId xd = build_dq(I, x, IN(I, 1), IN(I, 2), 1, tmp_name(I, "x_dq"));
    if (!xd.id)
        return false;
    ValueId wd = build_dq(I, w, IN(I, 4), IN(I, 5), 0, tmp_name(I, "w_dq"));
    if (!wd.id)
        return false;
    ValueId bd = VNONE;
    if (b.id && !(bd = bias_dq(I, b, IN(I, 1), IN(I, 4))).id)
        return false;
    NodeId n = build_conv(I, OP_CONV, xd, wd, bd);
    if (!n.id)
        return false;
    ValueId yf = emit1(I, n, tmp_name(I, "f"), ET_NONE);
    if (!yf.id)
        return false;
    ValueId yz = IN(I, 7);
    ElemType st = yz.id ? TY(I, yz)->elem : ET_U8;
    ValueId y = build_q(I, yf, IN(I, 6), yz, st, 1, out_name(I, 0));
    return y.id && onnx_bind(I, out_name(I, 0), y);
}

static bool
op_qlinear_matmul(OnnxImp *I)
{
    ValueId a = IN(I, 0), b = IN(I, 3);
    int ra = TY(I, a)->rank, rb = TY(I, b)->rank;
    ValueId ad = build_dq(I, a, IN(I, 1), IN(I, 2), ra >= 2 ? ra - 2 : 0, tmp_name(I, "a_dq"));
    if (!ad.id)
        return false;
    ValueId bd = build_dq(I, b, IN(I, 4), IN(I, 5), rb - 1, tmp_name(I, "b_dq"));
    if (!bd.id)
        return false;
    ValueId ins[2] = {ad, bd};
    ValueId yf = emit1(I, mk(I, OP_MATMUL, 2, ins, 1), tmp_name(I, "f"), ET_NONE);
    if (!yf.id)
        return false;
    ValueId yz = IN(I, 7);
    ElemType st = yz.id ? TY(I, yz)->elem : ET_U8;
    ValueId y = build_q(I, yf, IN(I, 6), yz, st, 1, out_name(I, 0));
    return y.id && onnx_bind(I, out_name(I, 0), y);
}

/* ConvInteger / MatMulInteger. `wax` is the weight's per-channel axis. */
static bool
integer_op(OnnxImp *I, bool conv)
{
    Graph *g = I->g;
    ValueId x = IN(I, 0), w = IN(I, 1), xz = IN(I, 2), wz = IN(I, 3);
    /* copies: adding values below moves the value array */
    const Type xt_copy = *TY(I, x), wt_copy = *TY(I, w);
    const Type *xt = &xt_copy, *wt = &wt_copy;
    if ((xt->elem != ET_U8 && xt->elem != ET_I8) || (wt->elem != ET_U8 && wt->elem != ET_I8)) {
        onnx_node_error(I, "operands must be u8 or i8, got %s and %s", elem_name(xt->elem),
                        elem_name(wt->elem));
        return false;
    }
    int wax = conv ? 0 : wt->rank - 1;
    const Tensor *xzc = xz.id ? ir_const_of(g, xz) : NULL, *wzc = wz.id ? ir_const_of(g, wz) : NULL;
    bool static_ok = (!xz.id || (xzc && type_numel_unchecked(&xzc->type) == 1)) &&
                     (!wz.id || wzc);
    if (static_ok) {
        float one = 1.0f;
        Type ot = type_make(ET_F32, 0, NULL);
        Tensor st = {ot, &one, 4};
        QParams *qx = qparams_of(I, &st, xzc, xt->elem, 1, xt);
        if (!qx)
            return false;
        size_t nw = wzc ? type_numel_unchecked(&wzc->type) : 1;
        float *ones = arena_alloc(&I->m->arena, nw * sizeof(float));
        for (size_t i = 0; i < nw; i++)
            ones[i] = 1.0f;
        Tensor sw = {type_make(ET_F32, nw == 1 ? 0 : 1, (int64_t[]){(int64_t)nw}), ones,
                     nw * 4};
        QParams *qw = qparams_of(I, &sw, wzc, wt->elem, wax, wt);
        if (!qw)
            return false;
        NodeId n;
        if (conv) {
            n = build_conv(I, OP_QCONV, x, w, VNONE);
            if (!n.id)
                return false;
        } else {
            ValueId ins[2] = {x, w};
            n = mk(I, OP_QMATMUL, 2, ins, 1);
        }
        QConstraint cx = {x, qx, true, n}, cw = {w, qw, true, n};
        vec_push(&I->qc, cx);
        vec_push(&I->qc, cw);
        return emit(I, n, ET_I32);
    }
    /* runtime zero points: dequantize with scale 1, float compute, cast back to i32 */
    float one = 1.0f;
    ValueId s1 = const_f32(I, tmp_name(I, "one"), &one, 0, NULL);
    ValueId xd = build_dq(I, x, s1, xz, conv ? 1 : (xt->rank >= 2 ? xt->rank - 2 : 0),
                          tmp_name(I, "x_dq"));
    if (!xd.id)
        return false;
    ValueId ws1 = s1;
    if (wz.id && type_numel_unchecked(TY(I, wz)) != 1) {
        size_t nw = type_numel_unchecked(TY(I, wz));
        float *ones = xmalloc(nw * sizeof(float));
        for (size_t i = 0; i < nw; i++)
            ones[i] = 1.0f;
        ws1 = const_f32(I, tmp_name(I, "ones"), ones, 1, (int64_t[]){(int64_t)nw});
        free(ones);
    }
    ValueId wd = build_dq(I, w, ws1, wz, wax, tmp_name(I, "w_dq"));
    if (!wd.id)
        return false;
    NodeId n;
    if (conv) {
        n = build_conv(I, OP_CONV, xd, wd, VNONE);
        if (!n.id)
            return false;
    } else {
        ValueId ins[2] = {xd, wd};
        n = mk(I, OP_MATMUL, 2, ins, 1);
    }
    ValueId f = emit1(I, n, tmp_name(I, "f"), ET_NONE);
    if (!f.id)
        return false;
    NodeId c = mk(I, OP_CAST, 1, &f, 1);
    ir_set_attr_string(g, c, "to", "i32");
    return emit(I, c, ET_NONE);
}

static bool op_conv_integer(OnnxImp *I) { return integer_op(I, true); }
static bool op_matmul_integer(OnnxImp *I) { return integer_op(I, false); }

/* ---- float compute ---- */
static bool
simple(OnnxImp *I, OpKind op, uint32_t nin)
{
    ValueId ins[8];
    for (uint32_t k = 0; k < nin; k++)
        ins[k] = IN(I, k);
    return emit(I, mk(I, op, nin, ins, 1), ET_NONE);
}

static bool op_matmul(OnnxImp *I) { return simple(I, OP_MATMUL, 2); }
static bool op_add(OnnxImp *I) { return simple(I, OP_ADD, 2); }
static bool op_sub(OnnxImp *I) { return simple(I, OP_SUB, 2); }
static bool op_mul(OnnxImp *I) { return simple(I, OP_MUL, 2); }
static bool op_div(OnnxImp *I) { return simple(I, OP_DIV, 2); }
static bool op_relu(OnnxImp *I) { return simple(I, OP_RELU, 1); }
static bool op_prelu(OnnxImp *I) { return simple(I, OP_PRELU, 2); }
static bool op_sigmoid(OnnxImp *I) { return simple(I, OP_SIGMOID, 1); }
static bool op_hard_swish(OnnxImp *I) { return simple(I, OP_HARD_SWISH, 1); }
static bool op_tanh(OnnxImp *I) { return simple(I, OP_TANH, 1); }
static bool op_erf(OnnxImp *I) { return simple(I, OP_ERF, 1); }
static bool op_identity(OnnxImp *I) { return simple(I, OP_IDENTITY, 1); }

/* Dropout at inference is the identity; a training-mode flag or a used mask is refused. */
static bool
op_dropout(OnnxImp *I)
{
    if (IN(I, 2).id) {
        const Tensor *t = CIN(I, 2);
        if (!t || type_numel_unchecked(&t->type) != 1 || tensor_get_i(t, 0) != 0) {
            onnx_node_error(I, "training_mode must be a constant false");
            return false;
        }
    }
    return simple(I, OP_IDENTITY, 1);
}
static bool op_global_avgpool(OnnxImp *I) { return simple(I, OP_GLOBAL_AVGPOOL, 1); }

static bool
op_gemm(OnnxImp *I)
{
    ValueId ins[3] = {IN(I, 0), IN(I, 1), IN(I, 2)};
    NodeId n = mk(I, OP_GEMM, ins[2].id ? 3 : 2, ins, 1);
    if (attr(I, "alpha"))
        ir_set_attr_float(I->g, n, "alpha", attr_f(I, "alpha", 1.0f));
    if (attr(I, "beta"))
        ir_set_attr_float(I->g, n, "beta", attr_f(I, "beta", 1.0f));
    if (attr_i(I, "transA", 0))
        ir_set_attr_int(I->g, n, "transA", 1);
    if (attr_i(I, "transB", 0))
        ir_set_attr_int(I->g, n, "transB", 1);
    return emit(I, n, ET_NONE);
}

static bool
op_batchnorm(OnnxImp *I)
{
    if (attr_i(I, "training_mode", 0)) {
        onnx_node_error(I, "training mode is not supported (inference BatchNormalization only)");
        return false;
    }
    ValueId ins[5];
    for (int k = 0; k < 5; k++)
        ins[k] = IN(I, (size_t)k);
    NodeId n = mk(I, OP_BATCHNORM, 5, ins, 1);
    ir_set_attr_float(I->g, n, "epsilon", attr_f(I, "epsilon", 1e-5f));
    return emit(I, n, ET_NONE);
}

static bool
op_clip(OnnxImp *I)
{
    Graph *g = I->g;
    ValueId x = IN(I, 0);
    NodeId n;
    if (I->opset < 11) {
        n = mk(I, OP_CLIP, 1, &x, 1);
        if (attr(I, "min"))
            ir_set_attr_float(g, n, "min", attr_f(I, "min", 0));
        if (attr(I, "max"))
            ir_set_attr_float(g, n, "max", attr_f(I, "max", 0));
        return emit(I, n, ET_NONE);
    }
    ValueId lo = IN(I, 1), hi = IN(I, 2);
    const Tensor *lc = lo.id ? ir_const_of(g, lo) : NULL, *hc = hi.id ? ir_const_of(g, hi) : NULL;
    bool lo_attr = !lo.id || (lc && type_numel_unchecked(&lc->type) == 1);
    bool hi_attr = !hi.id || (hc && type_numel_unchecked(&hc->type) == 1);
    if (lo_attr && hi_attr) {
        n = mk(I, OP_CLIP, 1, &x, 1);
        if (lc)
            ir_set_attr_float(g, n, "min", (float)tensor_get_f(lc, 0));
        if (hc)
            ir_set_attr_float(g, n, "max", (float)tensor_get_f(hc, 0));
    } else {
        ValueId ins[3] = {x, lo, hi};
        n = mk(I, OP_CLIP, 3, ins, 1);
    }
    return emit(I, n, ET_NONE);
}

static bool
op_leaky_relu(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = mk(I, OP_LEAKY_RELU, 1, &x, 1);
    ir_set_attr_float(I->g, n, "alpha", attr_f(I, "alpha", 0.01f));
    return emit(I, n, ET_NONE);
}

static bool
op_hard_sigmoid(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = mk(I, OP_HARD_SIGMOID, 1, &x, 1);
    ir_set_attr_float(I->g, n, "alpha", attr_f(I, "alpha", 0.2f));
    ir_set_attr_float(I->g, n, "beta", attr_f(I, "beta", 0.5f));
    return emit(I, n, ET_NONE);
}

static bool
op_gelu(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const char *ap = attr_s(I, "approximate", "none");
    if (strcmp(ap, "none") && strcmp(ap, "tanh")) {
        onnx_node_error(I, "approximate '%s' is not valid (none, tanh)", ap);
        return false;
    }
    NodeId n = mk(I, OP_GELU, 1, &x, 1);
    if (strcmp(ap, "tanh") == 0)
        ir_set_attr_string(I->g, n, "approximate", "tanh");
    return emit(I, n, ET_NONE);
}

static ValueId
build_reshape(OnnxImp *I, ValueId x, const int64_t *shape, int rank, const char *name)
{
    NodeId n = mk(I, OP_RESHAPE, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "shape", shape, (uint32_t)rank);
    return emit1(I, n, name, ET_NONE);
}

/* Softmax: opset >= 13 normalizes along one axis; before 13 the input is coerced to 2-D at
 * `axis` (default 1) and normalized over the flattened trailing part, emulated here with
 * reshape -> softmax(axis=1) -> reshape when the axis is not the last. */
static bool
op_softmax(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const Type *xt = TY(I, x);
    int64_t a;
    if (!norm_axis(I, attr_i(I, "axis", I->opset < 13 ? 1 : -1), xt->rank, &a))
        return false;
    if (I->opset >= 13 || a == xt->rank - 1) {
        NodeId n = mk(I, OP_SOFTMAX, 1, &x, 1);
        ir_set_attr_int(I->g, n, "axis", a);
        return emit(I, n, ET_NONE);
    }
    int64_t d0 = 1, d1 = 1;
    for (int i = 0; i < xt->rank; i++)
        *(i < a ? &d0 : &d1) *= xt->dims[i];
    int64_t shape2[2] = {d0, d1}, orig[IR_MAX_RANK];
    int rank = xt->rank;
    memcpy(orig, xt->dims, sizeof orig);
    ValueId r = build_reshape(I, x, shape2, 2, tmp_name(I, "2d"));
    if (!r.id)
        return false;
    NodeId n = mk(I, OP_SOFTMAX, 1, &r, 1);
    ir_set_attr_int(I->g, n, "axis", 1);
    ValueId s = emit1(I, n, tmp_name(I, "softmax2d"), ET_NONE);
    if (!s.id)
        return false;
    ValueId y = build_reshape(I, s, orig, rank, out_name(I, 0));
    return y.id && onnx_bind(I, out_name(I, 0), y);
}

static bool
op_layernorm(OnnxImp *I)
{
    ValueId ins[3] = {IN(I, 0), IN(I, 1), IN(I, 2)};
    NodeId n = mk(I, OP_LAYERNORM, ins[2].id ? 3 : 2, ins, 1);
    ir_set_attr_int(I->g, n, "axis", attr_i(I, "axis", -1));
    ir_set_attr_float(I->g, n, "epsilon", attr_f(I, "epsilon", 1e-5f));
    return emit(I, n, ET_NONE);
}

static bool
op_reduce_mean(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t axes[IR_MAX_RANK];
    int k = -1;
    if (I->opset < 18) {
        k = attr_ints(I, "axes", axes, IR_MAX_RANK);
        if (k == -2)
            return false;
    } else if (IN(I, 1).id) {
        if (!const_ints(I, 1, "axes", axes, IR_MAX_RANK, &k))
            return false;
    }
    if (k <= 0 && attr_i(I, "noop_with_empty_axes", 0))
        return simple(I, OP_IDENTITY, 1);
    NodeId n = mk(I, OP_REDUCE_MEAN, 1, &x, 1);
    if (k > 0)
        ir_set_attr_ints(I->g, n, "axes", axes, (uint32_t)k);
    ir_set_attr_int(I->g, n, "keepdims", attr_i(I, "keepdims", 1) != 0);
    return emit(I, n, ET_NONE);
}

static bool
pool(OnnxImp *I, OpKind op)
{
    ValueId x = IN(I, 0);
    int64_t k[IR_MAX_RANK];
    int ns;
    if (!spatial(I, TY(I, x), NULL, k, &ns))
        return false;
    NodeId n = mk(I, op, 1, &x, 1);
    if (!conv_attrs(I, n, TY(I, x), k, ns, true))
        return false;
    if (op == OP_AVGPOOL && attr_i(I, "count_include_pad", 0))
        ir_set_attr_int(I->g, n, "count_include_pad", 1);
    return emit(I, n, ET_NONE);
}

static bool
op_maxpool(OnnxImp *I)
{
    if (attr_i(I, "storage_order", 0) && I->node->n_output > 1) {
        onnx_node_error(I, "storage_order is not supported");
        return false;
    }
    return pool(I, OP_MAXPOOL);
}

static bool op_avgpool(OnnxImp *I) { return pool(I, OP_AVGPOOL); }

/* ---- layout ---- */
static bool
op_concat(OnnxImp *I)
{
    size_t nin = I->node->n_input;
    if (nin == 0 || nin > 4096) {
        onnx_node_error(I, "needs 1 to 4096 inputs, got %zu", nin);
        return false;
    }
    ValueId *ins = xmalloc(nin * sizeof(ValueId));
    for (size_t k = 0; k < nin; k++) {
        ins[k] = IN(I, k);
        if (!ins[k].id) {
            free(ins);
            onnx_node_error(I, "input %zu is empty", k);
            return false;
        }
    }
    if (!attr(I, "axis")) {
        free(ins);
        onnx_node_error(I, "attribute 'axis' is required");
        return false;
    }
    NodeId n = mk(I, OP_CONCAT, (uint32_t)nin, ins, 1);
    free(ins);
    ir_set_attr_int(I->g, n, "axis", attr_i(I, "axis", 0));
    return emit(I, n, ET_NONE);
}

static bool
op_split(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const Type *xt = TY(I, x);
    size_t nout = I->node->n_output;
    if (nout == 0 || nout > 64) {
        onnx_node_error(I, "needs 1 to 64 outputs, got %zu", nout);
        return false;
    }
    int64_t a;
    if (!norm_axis(I, attr_i(I, "axis", 0), xt->rank, &a))
        return false;
    int64_t sp[64];
    int k = -1;
    if (I->opset < 13) {
        k = attr_ints(I, "split", sp, 64);
        if (k == -2)
            return false;
    } else if (IN(I, 1).id) {
        if (!const_ints(I, 1, "split", sp, 64, &k))
            return false;
    }
    if (k < 0) {
        int64_t d = xt->dims[a], parts = (int64_t)nout;
        if (I->opset >= 18 && attr(I, "num_outputs")) {
            parts = attr_i(I, "num_outputs", 0);
            if (parts != (int64_t)nout) {
                onnx_node_error(I, "num_outputs %lld differs from the %zu outputs",
                                (long long)parts, nout);
                return false;
            }
            int64_t chunk = (d + parts - 1) / parts;
            for (int64_t i = 0; i < parts; i++) {
                int64_t left = d - i * chunk;
                sp[i] = left < 0 ? 0 : left < chunk ? left : chunk;
            }
        } else {
            if (d % parts) {
                onnx_node_error(I, "dimension %lld does not split evenly into %zu outputs",
                                (long long)d, nout);
                return false;
            }
            for (int64_t i = 0; i < parts; i++)
                sp[i] = d / parts;
        }
        k = (int)nout;
    }
    NodeId n = mk(I, OP_SPLIT, 1, &x, (uint32_t)nout);
    ir_set_attr_int(I->g, n, "axis", a);
    ir_set_attr_ints(I->g, n, "split", sp, (uint32_t)k);
    return emit(I, n, ET_NONE);
}

static bool
op_slice(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK];
    int ks, ke, ka = -1, kp = -1;
    if (!const_ints(I, 1, "starts", st, IR_MAX_RANK, &ks) ||
        !const_ints(I, 2, "ends", en, IR_MAX_RANK, &ke))
        return false;
    if (IN(I, 3).id && !const_ints(I, 3, "axes", ax, IR_MAX_RANK, &ka))
        return false;
    if (IN(I, 4).id && !const_ints(I, 4, "steps", sp, IR_MAX_RANK, &kp))
        return false;
    if (ks != ke || (ka >= 0 && ka != ks) || (kp >= 0 && kp != ks)) {
        onnx_node_error(I, "starts, ends, axes and steps must have equal lengths");
        return false;
    }
    NodeId n = mk(I, OP_SLICE, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "starts", st, (uint32_t)ks);
    ir_set_attr_ints(I->g, n, "ends", en, (uint32_t)ke);
    if (ka >= 0)
        ir_set_attr_ints(I->g, n, "axes", ax, (uint32_t)ka);
    if (kp >= 0)
        ir_set_attr_ints(I->g, n, "steps", sp, (uint32_t)kp);
    return emit(I, n, ET_NONE);
}

static bool
op_pad(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const Type *xt = TY(I, x);
    int r = xt->rank;
    int64_t pads[2 * IR_MAX_RANK] = {0}, p[2 * IR_MAX_RANK], axes[IR_MAX_RANK];
    int k, ka = -1;
    double value = 0;
    if (I->opset < 11) {
        k = attr_ints(I, "pads", p, 2 * IR_MAX_RANK);
        if (k == -2)
            return false;
        value = attr_f(I, "value", 0.0f);
    } else {
        if (!const_ints(I, 1, "pads", p, 2 * IR_MAX_RANK, &k))
            return false;
        if (IN(I, 2).id && !const_scalar_f(I, 2, "constant_value", &value))
            return false;
        if (IN(I, 3).id && !const_ints(I, 3, "axes", axes, IR_MAX_RANK, &ka))
            return false;
    }
    if (ka < 0) {
        if (k != 2 * r) {
            onnx_node_error(I, "'pads' has %d values, expected %d", k, 2 * r);
            return false;
        }
        memcpy(pads, p, sizeof(int64_t) * (size_t)k);
    } else {
        if (k != 2 * ka) {
            onnx_node_error(I, "'pads' has %d values for %d axes", k, ka);
            return false;
        }
        for (int i = 0; i < ka; i++) {
            int64_t a;
            if (!norm_axis(I, axes[i], r, &a))
                return false;
            pads[a] = p[i];
            pads[r + a] = p[ka + i];
        }
    }
    for (int i = 0; i < 2 * r; i++)
        if (pads[i] < 0) {
            onnx_node_error(I, "negative pads (cropping) are not supported");
            return false;
        }
    const char *mode = attr_s(I, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge")) {
        onnx_node_error(I, "pad mode '%s' is not supported (constant, reflect, edge)", mode);
        return false;
    }
    NodeId n = mk(I, OP_PAD, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "pads", pads, (uint32_t)(2 * r));
    ir_set_attr_string(I->g, n, "mode", mode);
    ir_set_attr_float(I->g, n, "value", (float)value);
    return emit(I, n, ET_NONE);
}

static bool
op_reshape(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const Type *xt = TY(I, x);
    int64_t sh[IR_MAX_RANK];
    int k;
    if (!const_ints(I, 1, "shape", sh, IR_MAX_RANK, &k))
        return false;
    bool allowzero = attr_i(I, "allowzero", 0) != 0;
    int neg = -1;
    size_t total, known = 1;
    if (!type_numel(xt, &total))
        return false;
    for (int i = 0; i < k; i++) {
        if (sh[i] == 0 && !allowzero) {
            if (i >= xt->rank) {
                onnx_node_error(I, "shape[%d] is 0 (copy) but the input has rank %d", i,
                                xt->rank);
                return false;
            }
            sh[i] = xt->dims[i];
        }
        if (sh[i] == -1) {
            if (neg >= 0) {
                onnx_node_error(I, "shape has more than one -1");
                return false;
            }
            neg = i;
            continue;
        }
        if (sh[i] < 0) {
            onnx_node_error(I, "shape[%d] is %lld", i, (long long)sh[i]);
            return false;
        }
        if (!size_mul(known, (size_t)sh[i], &known)) {
            onnx_node_error(I, "shape overflows");
            return false;
        }
    }
    if (neg >= 0) {
        if (known == 0 || total % known) {
            onnx_node_error(I, "cannot infer the -1 dimension: %zu elements into blocks of %zu",
                            total, known);
            return false;
        }
        sh[neg] = (int64_t)(total / known);
    }
    NodeId n = mk(I, OP_RESHAPE, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "shape", sh, (uint32_t)k);
    return emit(I, n, ET_NONE);
}

static bool
op_flatten(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = mk(I, OP_FLATTEN, 1, &x, 1);
    ir_set_attr_int(I->g, n, "axis", attr_i(I, "axis", 1));
    return emit(I, n, ET_NONE);
}

static bool
op_transpose(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t perm[IR_MAX_RANK];
    int k = attr_ints(I, "perm", perm, IR_MAX_RANK);
    if (k == -2)
        return false;
    NodeId n = mk(I, OP_TRANSPOSE, 1, &x, 1);
    if (k >= 0)
        ir_set_attr_ints(I->g, n, "perm", perm, (uint32_t)k);
    return emit(I, n, ET_NONE);
}

static bool
squeeze_like(OnnxImp *I, OpKind op)
{
    ValueId x = IN(I, 0);
    int64_t axes[IR_MAX_RANK];
    int k = -1;
    if (I->opset < 13) {
        k = attr_ints(I, "axes", axes, IR_MAX_RANK);
        if (k == -2)
            return false;
    } else if (IN(I, 1).id) {
        if (!const_ints(I, 1, "axes", axes, IR_MAX_RANK, &k))
            return false;
    }
    if (op == OP_UNSQUEEZE && k < 0) {
        onnx_node_error(I, "'axes' is required");
        return false;
    }
    NodeId n = mk(I, op, 1, &x, 1);
    if (k >= 0)
        ir_set_attr_ints(I->g, n, "axes", axes, (uint32_t)k);
    return emit(I, n, ET_NONE);
}

static bool op_squeeze(OnnxImp *I) { return squeeze_like(I, OP_SQUEEZE); }
static bool op_unsqueeze(OnnxImp *I) { return squeeze_like(I, OP_UNSQUEEZE); }

static bool
op_resize(OnnxImp *I)
{
    Graph *g = I->g;
    ValueId x = IN(I, 0);
    const Type *xt = TY(I, x);
    int r = xt->rank;
    const char *mode = attr_s(I, "mode", "nearest");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear")) {
        onnx_node_error(I, "mode '%s' is not supported (nearest, linear)", mode);
        return false;
    }
    if (attr_i(I, "antialias", 0)) {
        onnx_node_error(I, "antialias is not supported");
        return false;
    }
    if (attr(I, "axes")) {
        onnx_node_error(I, "the 'axes' attribute is not supported");
        return false;
    }
    const char *kar = attr_s(I, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(kar, "stretch")) {
        onnx_node_error(I, "keep_aspect_ratio_policy '%s' is not supported", kar);
        return false;
    }
    size_t scales_in = I->opset < 11 ? 1 : 2, sizes_in = 3;
    int64_t sizes[IR_MAX_RANK];
    ValueId sv = I->opset >= 11 ? IN(I, sizes_in) : VNONE;
    if (sv.id && type_numel_unchecked(TY(I, sv)) > 0) {
        int k;
        if (!const_ints(I, sizes_in, "sizes", sizes, IR_MAX_RANK, &k))
            return false;
        if (k != r) {
            onnx_node_error(I, "'sizes' has %d values, the input has rank %d", k, r);
            return false;
        }
    } else {
        const Tensor *st = CIN(I, scales_in);
        if (!st) {
            onnx_node_error(I, "'scales' or 'sizes' must be a constant");
            return false;
        }
        if (type_numel_unchecked(&st->type) != (size_t)r || !elem_is_float(st->type.elem)) {
            onnx_node_error(I, "'scales' must have %d float values", r);
            return false;
        }
        for (int i = 0; i < r; i++) {
            double s = (float)tensor_get_f(st, (size_t)i);
            double o = floor((double)xt->dims[i] * s);
            if (!(s > 0) || !(o >= 1) || o > 1e12) {
                onnx_node_error(I, "scale %g for dimension %d gives no valid size", s, i);
                return false;
            }
            if (o != (double)xt->dims[i] * s) {
                onnx_node_error(I, "scale %g does not give a whole size for dimension %d "
                                "(%lld x %g); give 'sizes' instead", s, i,
                                (long long)xt->dims[i], s);
                return false;
            }
            sizes[i] = (int64_t)o;
        }
    }
    const char *ctm = I->opset < 11 ? "asymmetric"
                                    : attr_s(I, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(ctm, "tf_crop_and_resize") == 0) {
        onnx_node_error(I, "coordinate_transformation_mode 'tf_crop_and_resize' is not "
                        "supported");
        return false;
    }
    NodeId n = mk(I, OP_RESIZE, 1, &x, 1);
    ir_set_attr_ints(g, n, "sizes", sizes, (uint32_t)r);
    ir_set_attr_string(g, n, "mode", mode);
    ir_set_attr_string(g, n, "coordinate_transformation_mode", ctm);
    if (strcmp(mode, "nearest") == 0)
        ir_set_attr_string(g, n, "nearest_mode",
                           I->opset < 11 ? "floor" : attr_s(I, "nearest_mode",
                                                            "round_prefer_floor"));
    return emit(I, n, ET_NONE);
}

static bool
op_cast(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t to = attr_i(I, "to", 0);
    ElemType e = onnx_elem((int32_t)to);
    if (e == ET_NONE) {
        onnx_node_error(I, "cast to %s is not supported", onnx_dtype_name((int32_t)to));
        return false;
    }
    NodeId n = mk(I, OP_CAST, 1, &x, 1);
    ir_set_attr_string(I->g, n, "to", elem_name(e));
    return emit(I, n, ET_NONE);
}

static bool
op_shape(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = mk(I, OP_SHAPE, 1, &x, 1);
    if (attr(I, "start"))
        ir_set_attr_int(I->g, n, "start", attr_i(I, "start", 0));
    if (attr(I, "end"))
        ir_set_attr_int(I->g, n, "end", attr_i(I, "end", 0));
    return emit(I, n, ET_NONE);
}

static bool
op_gather(OnnxImp *I)
{
    ValueId ins[2] = {IN(I, 0), IN(I, 1)};
    NodeId n = mk(I, OP_GATHER, 2, ins, 1);
    ir_set_attr_int(I->g, n, "axis", attr_i(I, "axis", 0));
    return emit(I, n, ET_NONE);
}

static bool
op_constant(OnnxImp *I)
{
    const Onnx__AttributeProto *a = I->node->n_attribute == 1 ? I->node->attribute[0] : NULL;
    if (!a || !a->name) {
        onnx_node_error(I, "needs exactly one value attribute");
        return false;
    }
    Tensor *t = NULL;
    if (strcmp(a->name, "value") == 0 && a->t) {
        t = onnx_tensor(I, a->t, "attribute 'value'", &I->loc);
        if (!t)
            return false;
    } else if (strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_int") == 0) {
        bool f = a->name[6] == 'f';
        Type ty = type_make(f ? ET_F32 : ET_I64, 0, NULL);
        t = ir_tensor_new(I->m, &ty);
        if (f)
            tensor_set_f(t, 0, a->f);
        else
            tensor_set_i(t, 0, a->i);
    } else if (strcmp(a->name, "value_floats") == 0 || strcmp(a->name, "value_ints") == 0) {
        bool f = a->name[6] == 'f';
        int64_t n = (int64_t)(f ? a->n_floats : a->n_ints);
        Type ty = type_make(f ? ET_F32 : ET_I64, 1, &n);
        t = ir_tensor_new(I->m, &ty);
        if (!t)
            return false;
        for (int64_t i = 0; i < n; i++) {
            if (f)
                tensor_set_f(t, (size_t)i, a->floats[i]);
            else
                tensor_set_i(t, (size_t)i, a->ints[i]);
        }
    } else {
        onnx_node_error(I, "constant attribute '%s' is not supported", a->name);
        return false;
    }
    ValueId v = ir_add_const(I->g, out_name(I, 0), t, I->loc);
    return onnx_bind(I, out_name(I, 0), v);
}

static bool
op_constant_of_shape(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    if (!CIN(I, 0)) {
        onnx_node_error(I, "the shape input must be a constant");
        return false;
    }
    const Onnx__AttributeProto *a = attr(I, "value");
    Tensor *v;
    if (a && a->t) {
        v = onnx_tensor(I, a->t, "attribute 'value'", &I->loc);
        if (!v)
            return false;
        if (type_numel_unchecked(&v->type) != 1) {
            onnx_node_error(I, "'value' must have one element");
            return false;
        }
    } else if (a) {
        onnx_node_error(I, "attribute 'value' must be a TENSOR");
        return false;
    } else {
        Type ty = type_make(ET_F32, 1, (int64_t[]){1});
        v = ir_tensor_new(I->m, &ty);
    }
    NodeId n = mk(I, OP_CONSTANT_OF_SHAPE, 1, &x, 1);
    ir_set_attr_tensor(I->g, n, "value", v);
    return emit(I, n, ET_NONE);
}

/* ---- dispatch ---- */
typedef struct OpEntry {
    const char *name;
    OpFn fn;
    int min_in, max_in, max_out;
} OpEntry;

static const OpEntry ops[] = {
    {"QuantizeLinear", op_quantize, 2, 3, 1},
    {"DequantizeLinear", op_dequantize, 2, 3, 1},
    {"DynamicQuantizeLinear", op_dynamic_quantize, 1, 1, 3},
    {"QLinearConv", op_qlinear_conv, 8, 9, 1},
    {"QLinearMatMul", op_qlinear_matmul, 8, 8, 1},
    {"ConvInteger", op_conv_integer, 2, 4, 1},
    {"MatMulInteger", op_matmul_integer, 2, 4, 1},
    {"Conv", op_conv, 2, 3, 1},
    {"ConvTranspose", op_conv_transpose, 2, 3, 1},
    {"MatMul", op_matmul, 2, 2, 1},
    {"Gemm", op_gemm, 2, 3, 1},
    {"BatchNormalization", op_batchnorm, 5, 5, 1},
    {"Add", op_add, 2, 2, 1},
    {"Sub", op_sub, 2, 2, 1},
    {"Mul", op_mul, 2, 2, 1},
    {"Div", op_div, 2, 2, 1},
    {"Relu", op_relu, 1, 1, 1},
    {"Clip", op_clip, 1, 3, 1},
    {"LeakyRelu", op_leaky_relu, 1, 1, 1},
    {"PRelu", op_prelu, 2, 2, 1},
    {"Sigmoid", op_sigmoid, 1, 1, 1},
    {"HardSigmoid", op_hard_sigmoid, 1, 1, 1},
    {"HardSwish", op_hard_swish, 1, 1, 1},
    {"Tanh", op_tanh, 1, 1, 1},
    {"Erf", op_erf, 1, 1, 1},
    {"Gelu", op_gelu, 1, 1, 1},
    {"Softmax", op_softmax, 1, 1, 1},
    {"LayerNormalization", op_layernorm, 2, 3, 1},
    {"ReduceMean", op_reduce_mean, 1, 2, 1},
    {"MaxPool", op_maxpool, 1, 1, 1},
    {"AveragePool", op_avgpool, 1, 1, 1},
    {"GlobalAveragePool", op_global_avgpool, 1, 1, 1},
    {"Concat", op_concat, 1, 4096, 1},
    {"Split", op_split, 1, 2, 64},
    {"Slice", op_slice, 3, 5, 1},
    {"Pad", op_pad, 1, 4, 1},
    {"Reshape", op_reshape, 2, 2, 1},
    {"Flatten", op_flatten, 1, 1, 1},
    {"Transpose", op_transpose, 1, 1, 1},
    {"Squeeze", op_squeeze, 1, 2, 1},
    {"Unsqueeze", op_unsqueeze, 1, 2, 1},
    {"Resize", op_resize, 1, 4, 1},
    {"Identity", op_identity, 1, 1, 1},
    {"Dropout", op_dropout, 1, 3, 1},
    {"Cast", op_cast, 1, 1, 1},
    {"Shape", op_shape, 1, 1, 1},
    {"Gather", op_gather, 2, 2, 1},
    {"Constant", op_constant, 0, 0, 1},
    {"ConstantOfShape", op_constant_of_shape, 1, 1, 1},
};

static const OpEntry *
find_op(const OnnxImp *I, const char *domain, const char *op_type)
{
    bool dflt = !*domain || strcmp(domain, "ai.onnx") == 0;
    bool ms = strcmp(domain, "com.microsoft") == 0;
    if (!dflt && !(ms && (strcmp(op_type, "QuantizeLinear") == 0 ||
                          strcmp(op_type, "DequantizeLinear") == 0)))
        return NULL;
    for (size_t i = 0; i < ARRAY_LEN(ops); i++)
        if (strcmp(ops[i].name, op_type) == 0) {
            /* opset-specific availability */
            if (dflt && strcmp(op_type, "Gelu") == 0 && I->opset < 20)
                return NULL;
            if (dflt && strcmp(op_type, "LayerNormalization") == 0 && I->opset < 17)
                return NULL;
            if (dflt && strcmp(op_type, "HardSwish") == 0 && I->opset < 14)
                return NULL;
            return &ops[i];
        }
    return NULL;
}

bool
onnx_op_supported(const OnnxImp *I, const char *domain, const char *op_type)
{
    return find_op(I, domain, op_type) != NULL;
}

bool
onnx_translate(OnnxImp *I)
{
    const Onnx__NodeProto *np = I->node;
    const OpEntry *e = find_op(I, np->domain ? np->domain : "", np->op_type ? np->op_type : "");
    QDQC_ASSERT(e);
    if (np->n_input > (size_t)e->max_in) {
        onnx_node_error(I, "has %zu inputs, at most %d are allowed", np->n_input, e->max_in);
        return false;
    }
    for (int k = 0; k < e->min_in; k++)
        if ((size_t)k >= np->n_input || !np->input[k] || !*np->input[k]) {
            onnx_node_error(I, "input %d is required", k);
            return false;
        }
    if (np->n_output == 0 || !np->output[0] || !*np->output[0]) {
        onnx_node_error(I, "has no output");
        return false;
    }
    I->bad_attr = false;
    for (size_t k = (size_t)e->max_out; k < np->n_output; k++)
        if (np->output[k] && *np->output[k]) {
            onnx_node_error(I, "output %zu ('%s') is not supported: qdqc imports only the "
                            "first %d output%s of %s", k, np->output[k], e->max_out,
                            e->max_out == 1 ? "" : "s", e->name);
            return false;
        }
    bool ok = e->fn(I);
    if (ok && I->bad_attr)
        return false;
    return ok;
}
