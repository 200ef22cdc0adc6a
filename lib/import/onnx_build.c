/* onnx_build.c: the helpers every ONNX op handler uses: value names (lookup, bind), the node
 * error, attributes, constant operands, building nodes and naming their results, and the Conv
 * attribute and geometry checks shared by Conv, ConvTranspose and the QDQ/QLinear conv forms.
 * Apart from the driver (onnx.c) and the dispatch (onnx_ops.c), so the handler files depend on
 * these helpers and the dispatch on the handler files, with no loop. */
#include "onnx_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- value names ---- */
ValueId
onnx_lookup(OnnxImp *I, const char *name)
{
    if (!name || !*name)
        return VNONE;
    uint32_t id = intern_lookup(&I->m->strs, name);
    if (!id || id >= I->byname_cap)
        return VNONE;
    return I->byname[id];
}

bool
onnx_bind_quiet(OnnxImp *I, const char *name, ValueId v)
{
    uint32_t id = intern(&I->m->strs, name);
    if (id >= I->byname_cap) {
        uint32_t nc = I->byname_cap ? I->byname_cap : 64;
        while (nc <= id)
            nc *= 2;
        I->byname = xrealloc(I->byname, nc * sizeof(ValueId));
        memset(I->byname + I->byname_cap, 0, (nc - I->byname_cap) * sizeof(ValueId));
        I->byname_cap = nc;
    }
    if (I->byname[id].id)
        return false;
    I->byname[id] = v;
    return true;
}

bool
onnx_bind(OnnxImp *I, const char *name, ValueId v)
{
    if (!name || !*name)
        return true;
    if (!onnx_bind_quiet(I, name, v)) {
        onnx_node_error(I, "value '%s' is defined twice", name);
        return false;
    }
    return true;
}

void
onnx_node_error(OnnxImp *I, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vemit(I->ctx, QDQC_SEV_ERROR, &I->loc, fmt, ap);
    va_end(ap);
}

/* ---- attributes ---- */
const Onnx__AttributeProto *
onnx_attr(OnnxImp *I, const char *name)
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
    const Onnx__AttributeProto *a = onnx_attr(I, name);
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

int64_t
onnx_attr_i(OnnxImp *I, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a =
        attr_typed(I, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, "an INT");
    return a && a->has_i ? a->i : dflt;
}

float
onnx_attr_f(OnnxImp *I, const char *name, float dflt)
{
    const Onnx__AttributeProto *a =
        attr_typed(I, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, "a FLOAT");
    return a && a->has_f ? a->f : dflt;
}

/* ints attribute into out[max]: count, -1 if absent, -2 (after an error) if too long */
int
onnx_attr_ints(OnnxImp *I, const char *name, int64_t *out, int max)
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
const char *
onnx_attr_s(OnnxImp *I, const char *name, const char *dflt)
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
NodeId
onnx_mk(OnnxImp *I, OpKind op, uint32_t nin, const ValueId *in, uint32_t nout)
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
        if (ir_type_is_static(&inf[k]) && (!type_numel(&inf[k], &ne) || !size_mul(ne, elem_size(inf[k].elem), &bytes) ||
            bytes > ONNX_MAX_TENSOR_BYTES)) {
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
bool
onnx_emit(OnnxImp *I, NodeId nid, ElemType force)
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

ValueId
onnx_emit1(OnnxImp *I, NodeId nid, const char *name, ElemType force)
{
    ValueId v = VNONE;
    const char *names[1] = {name};
    if (!fin(I, nid, names, &v, force))
        return VNONE;
    return v;
}

const char *
onnx_out_name(OnnxImp *I, size_t k)
{
    return k < I->node->n_output ? I->node->output[k] : "";
}

/* a derived name for an intermediate value: "<output 0>.<suffix>" */
const char *
onnx_tmp_name(OnnxImp *I, const char *suffix)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%.400s.%s", onnx_out_name(I, 0), suffix);
    return intern_str(&I->m->strs, intern(&I->m->strs, buf));
}

ValueId
onnx_const_f32(OnnxImp *I, const char *name, const float *v, int rank, const int64_t *dims)
{
    Type t = type_make(ET_F32, rank, dims);
    Tensor *ts = ir_tensor_new(I->m, &t);
    memcpy(ts->data, v, ts->nbytes);
    return ir_add_const(I->g, name, ts, I->loc);
}

void
onnx_not_const_error(OnnxImp *I, size_t k, const char *what)
{
    ValueId v = IN(I, k);
    if (v.id && ir_value(I->g, v)->is_input) {
        const char *name = ir_value_name(I->g, v);
        onnx_node_error(I, "'%s' (input %zu) is the graph input '%s', but qdqc compiles ahead of "
                        "time and needs it as a constant: freeze it with --const-input "
                        "%s=FILE.npy", what, k, name, name);
        return;
    }
    onnx_node_error(I, "'%s' (input %zu) must be a constant (it is computed at run time)", what,
                    k);
}

/* A constant integer vector input (rank 0 or 1, i32/i64) into out[max]. */
bool
onnx_const_ints(OnnxImp *I, size_t k, const char *what, int64_t *out, int max, int *count)
{
    const Tensor *t = CIN(I, k);
    if (!t) {
        onnx_not_const_error(I, k, what);
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

bool
onnx_const_scalar_f(OnnxImp *I, size_t k, const char *what, double *out)
{
    const Tensor *t = CIN(I, k);
    if (!t) {
        onnx_not_const_error(I, k, what);
        return false;
    }
    if (type_numel_unchecked(&t->type) != 1) {
        onnx_node_error(I, "'%s' must have one element", what);
        return false;
    }
    *out = tensor_get_f(t, 0);
    return true;
}

bool
onnx_norm_axis(OnnxImp *I, int64_t axis, int rank, int64_t *out)
{
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
        onnx_node_error(I, "axis %lld is out of range for rank %d", (long long)axis, rank);
        return false;
    }
    *out = a;
    return true;
}

/* ---- convolution-like attributes ---- */
/* Copy strides/dilations/pads/group (+ pool attrs) onto n, resolving auto_pad against the
 * input x and kernel sizes k[ns]. */
bool
onnx_conv_attrs(OnnxImp *I, NodeId n, const Type *x, const int64_t *k, int ns, bool pool)
{
    Graph *g = I->g;
    int64_t strides[IR_MAX_RANK], dil[IR_MAX_RANK], pads[2 * IR_MAX_RANK];
    int cs = onnx_attr_ints(I, "strides", strides, IR_MAX_RANK);
    int cd = onnx_attr_ints(I, "dilations", dil, IR_MAX_RANK);
    int cp = onnx_attr_ints(I, "pads", pads, 2 * IR_MAX_RANK);
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
    const char *ap = onnx_attr_s(I, "auto_pad", "NOTSET");
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
    if (!pool && onnx_attr(I, "group"))
        ir_set_attr_int(g, n, "group", onnx_attr_i(I, "group", 1));
    int64_t ka[IR_MAX_RANK];
    int ck = pool ? -1 : onnx_attr_ints(I, "kernel_shape", ka, IR_MAX_RANK);
    if (ck == -2)
        return false;
    if (pool)
        ir_set_attr_ints(g, n, "kernel_shape", k, (uint32_t)ns);
    else if (ck >= 0)
        ir_set_attr_ints(g, n, "kernel_shape", ka, (uint32_t)ck);
    if (pool && onnx_attr_i(I, "ceil_mode", 0))
        ir_set_attr_int(g, n, "ceil_mode", 1);
    return true;
}

bool
onnx_conv_spatial(OnnxImp *I, const Type *x, const Type *w, int64_t *k, int *ns)
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
        int c = onnx_attr_ints(I, "kernel_shape", k, IR_MAX_RANK);
        if (c != *ns) {
            if (c != -2)
                onnx_node_error(I, "'kernel_shape' must have %d values", *ns);
            return false;
        }
    }
    return true;
}

NodeId
onnx_build_conv(OnnxImp *I, OpKind op, ValueId x, ValueId w, ValueId b)
{
    int64_t k[IR_MAX_RANK];
    int ns;
    if (!onnx_conv_spatial(I, TY(I, x), TY(I, w), k, &ns))
        return NNONE;
    ValueId ins[3] = {x, w, b};
    NodeId n = onnx_mk(I, op, b.id ? 3 : 2, ins, 1);
    if (!onnx_conv_attrs(I, n, TY(I, x), k, ns, false))
        return NNONE;
    return n;
}
