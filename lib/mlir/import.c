/* import.c: MLIR (func + tosa + quant dialects) -> qdqc IR, through the MLIR C API.
 *
 * The first func.func of the module becomes the graph. QDQ is written with quant.qcast /
 * quant.dcast and !quant.uniform types (per tensor and per axis); the compute ops are tosa ops
 * on f32 tensors. TOSA's NHWC (activations) and OHWI (weights) layouts become the IR's NCHW /
 * OIHW through explicit transposes around conv and pooling, which the pipeline then moves and
 * folds (docs/mlir.md lists every mapping). Ops without a mapping are listed in one diagnostic,
 * as the ONNX reader does. MLIR's own diagnostics (parse errors, verifier) go to the qdqc
 * context through a context handler; nothing here prints or exits. */
#include "import/import.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/Quant.h>
#include <mlir-c/Dialect/Tosa.h>
#include <mlir-c/IR.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct MapEntry {
    const void *key;
    ValueId v;
} MapEntry;

typedef struct MlirImp {
    qdqc_context *ctx;
    const char *path;
    Module *m;
    Graph *g;
    MapEntry *map;   /* open addressing, MlirValue.ptr -> ValueId */
    size_t map_cap;
    StrBuf unsupported;
    uint32_t n_unsupported;
    bool failed;
} MlirImp;

/* ---- diagnostics ---- */

static void
str_cb(MlirStringRef s, void *user)
{
    sb_putn((StrBuf *)user, s.data, s.length);
}

static Loc
loc_of(MlirImp *I, MlirLocation l)
{
    Loc loc = {.file = I->path};
    if (mlirLocationIsAFileLineColRange(l)) {
        loc.line = (uint32_t)mlirLocationFileLineColRangeGetStartLine(l);
        loc.col = (uint32_t)mlirLocationFileLineColRangeGetStartColumn(l);
    }
    return loc;
}

static MlirLogicalResult
diag_handler(MlirDiagnostic d, void *user)
{
    MlirImp *I = user;
    StrBuf b;
    sb_init(&b);
    mlirDiagnosticPrint(d, str_cb, &b);
    qdqc_severity sev = QDQC_SEV_ERROR;
    switch (mlirDiagnosticGetSeverity(d)) {
    case MlirDiagnosticWarning: sev = QDQC_SEV_WARNING; break;
    case MlirDiagnosticNote: sev = QDQC_SEV_NOTE; break;
    case MlirDiagnosticRemark: sev = QDQC_SEV_REMARK; break;
    default: I->failed = true; break;
    }
    Loc loc = loc_of(I, mlirDiagnosticGetLocation(d));
    diag_emit(I->ctx, sev, &loc, "%s", b.data ? b.data : "");
    sb_free(&b);
    return mlirLogicalResultSuccess();
}

static void
op_error(MlirImp *I, MlirOperation op, const char *fmt, const char *arg)
{
    Loc loc = loc_of(I, mlirOperationGetLocation(op));
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    diag_error(I->ctx, &loc, "%.*s: %s", (int)n.length, n.data, msg);
    I->failed = true;
}

/* ---- values ---- */

static size_t
map_slot(MlirImp *I, const void *key)
{
    size_t h = ((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull;
    size_t i = h & (I->map_cap - 1);
    while (I->map[i].key && I->map[i].key != key)
        i = (i + 1) & (I->map_cap - 1);
    return i;
}

static void
bind(MlirImp *I, MlirValue mv, ValueId v)
{
    if (I->map_cap < 16 || 2 * (I->g->values.len + 1) > I->map_cap) {
        MapEntry *old = I->map;
        size_t oldcap = I->map_cap;
        I->map_cap = I->map_cap ? 2 * I->map_cap : 64;
        while (I->map_cap < 4 * (size_t)(I->g->values.len + 1))
            I->map_cap *= 2;
        I->map = xcalloc(I->map_cap, sizeof *I->map);
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].key)
                I->map[map_slot(I, old[i].key)] = old[i];
        free(old);
    }
    size_t s = map_slot(I, mv.ptr);
    I->map[s].key = mv.ptr;
    I->map[s].v = v;
}

static ValueId
lookup(MlirImp *I, MlirValue mv)
{
    if (!I->map_cap)
        return VNONE;
    size_t s = map_slot(I, mv.ptr);
    return I->map[s].key ? I->map[s].v : VNONE;
}

static ValueId
operand(MlirImp *I, MlirOperation op, intptr_t k)
{
    if (k >= mlirOperationGetNumOperands(op)) {
        op_error(I, op, "missing operand %s", "");
        return VNONE;
    }
    ValueId v = lookup(I, mlirOperationGetOperand(op, k));
    if (!v.id)
        op_error(I, op, "operand %s is not a tensor value qdqc imported", "");
    return v;
}

/* ---- types ---- */

static ElemType
elem_of(MlirType t)
{
    if (mlirTypeIsAF32(t))
        return ET_F32;
    if (mlirTypeIsAF16(t))
        return ET_F16;
    if (mlirTypeIsAF64(t))
        return ET_F64;
    if (mlirTypeIsAInteger(t)) {
        unsigned w = mlirIntegerTypeGetWidth(t);
        bool u = mlirIntegerTypeIsUnsigned(t);
        switch (w) {
        case 1: return ET_BOOL;
        case 4: return u ? ET_U4 : ET_I4;
        case 8: return u ? ET_U8 : ET_I8;
        case 16: return u ? ET_U16 : ET_I16;
        case 32: return u ? ET_U32 : ET_I32;
        case 64: return ET_I64;
        default: return ET_NONE;
        }
    }
    return ET_NONE;
}

/* A !quant zero point as int32: MLIR keeps an int64, which a plain cast would wrap
 * (4294967301 -> 5). Outside int32 it is an error (the verifier checks the storage range). */
static bool
zp32(MlirImp *I, int64_t zp, int32_t *out)
{
    if (zp < INT32_MIN || zp > INT32_MAX) {
        Loc loc = {.file = I->path};
        diag_error(I->ctx, &loc, "!quant.uniform zero point %lld does not fit 32 bits",
                   (long long)zp);
        I->failed = true;
        return false;
    }
    *out = (int32_t)zp;
    return true;
}

/* The qdqc type of a ranked static tensor type (quantized element types included). */
static bool
type_of(MlirImp *I, MlirType t, Type *out)
{
    if (!mlirTypeIsARankedTensor(t))
        return false;
    intptr_t rank = mlirShapedTypeGetRank(t);
    if (rank > IR_MAX_RANK || !mlirShapedTypeHasStaticShape(t))
        return false;
    int64_t dims[IR_MAX_RANK];
    for (intptr_t i = 0; i < rank; i++)
        dims[i] = mlirShapedTypeGetDimSize(t, i);
    MlirType et = mlirShapedTypeGetElementType(t);
    if (mlirTypeIsAUniformQuantizedType(et) || mlirTypeIsAUniformQuantizedPerAxisType(et)) {
        ElemType st = elem_of(mlirQuantizedTypeGetStorageType(et));
        if (st == ET_NONE)
            return false;
        if (st == ET_U8 || st == ET_U16 || st == ET_U4)
            ; /* explicit unsigned storage */
        else if (!mlirQuantizedTypeIsSigned(et))
            st = st == ET_I8 ? ET_U8 : st == ET_I16 ? ET_U16 : st == ET_I4 ? ET_U4 : st;
        QParams *q;
        if (mlirTypeIsAUniformQuantizedType(et)) {
            int32_t zp;
            if (!zp32(I, mlirUniformQuantizedTypeGetZeroPoint(et), &zp))
                return false;
            q = ir_qparams_per_tensor(I->m, st, (float)mlirUniformQuantizedTypeGetScale(et), zp);
        } else {
            intptr_t n = mlirUniformQuantizedPerAxisTypeGetNumDims(et);
            q = ir_qparams_new(I->m, st, mlirUniformQuantizedPerAxisTypeGetQuantizedDimension(et),
                               (uint32_t)n);
            for (intptr_t i = 0; i < n; i++) {
                q->scale[i] = (float)mlirUniformQuantizedPerAxisTypeGetScale(et, i);
                if (!zp32(I, mlirUniformQuantizedPerAxisTypeGetZeroPoint(et, i), &q->zp[i]))
                    return false;
            }
        }
        q->qmin = (int32_t)mlirQuantizedTypeGetStorageTypeMin(et);
        q->qmax = (int32_t)mlirQuantizedTypeGetStorageTypeMax(et);
        *out = type_make(st, (int)rank, dims);
        out->q = q;
        return true;
    }
    ElemType e = elem_of(et);
    if (e == ET_NONE)
        return false;
    *out = type_make(e, (int)rank, dims);
    return true;
}

/* ---- node construction ---- */

static NodeId
new_node(MlirImp *I, MlirOperation op, OpKind k, uint32_t nin, const ValueId *in)
{
    for (uint32_t i = 0; i < nin; i++)
        if (!in[i].id)
            return NNONE;
    return ir_add_node(I->g, k, nin, in, 1, loc_of(I, mlirOperationGetLocation(op)));
}

/* Infer n's result type and create its result. */
static ValueId
finish(MlirImp *I, MlirOperation op, NodeId n)
{
    if (!n.id)
        return VNONE;
    Type t[1];
    if (!ir_infer_types(I->g, ir_node(I->g, n), t)) {
        I->failed = true;
        return VNONE;
    }
    return ir_add_result(I->g, n, 0, NULL, &t[0]);
}

static ValueId
transpose(MlirImp *I, MlirOperation op, ValueId x, const int64_t *perm, int rank)
{
    NodeId n = new_node(I, op, OP_TRANSPOSE, 1, &x);
    if (!n.id)
        return VNONE;
    ir_set_attr_ints(I->g, n, "perm", perm, (uint32_t)rank);
    return finish(I, op, n);
}

static const int64_t k_nhwc_to_nchw[4] = {0, 3, 1, 2};
static const int64_t k_nchw_to_nhwc[4] = {0, 2, 3, 1};

static int
attr_i64s(MlirOperation op, const char *name, int64_t *out, int max)
{
    MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name));
    if (mlirAttributeIsNull(a))
        return -1;
    intptr_t n = mlirDenseArrayGetNumElements(a);
    if (n > max)
        return -1;
    for (intptr_t i = 0; i < n; i++)
        out[i] = mlirAttributeIsADenseI64Array(a)   ? mlirDenseI64ArrayGetElement(a, i)
                 : mlirAttributeIsADenseI32Array(a) ? mlirDenseI32ArrayGetElement(a, i)
                                                    : 0;
    return (int)n;
}

static double
attr_f(MlirOperation op, const char *name, double dflt)
{
    MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name));
    if (mlirAttributeIsNull(a))
        return dflt;
    if (mlirAttributeIsAFloat(a))
        return mlirFloatAttrGetValueDouble(a);
    if (mlirAttributeIsAInteger(a))
        return (double)mlirIntegerAttrGetValueInt(a);
    return dflt;
}


/* ---- ops ---- */

static ValueId
imp_const(MlirImp *I, MlirOperation op)
{
    MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("values"));
    Type t;
    if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseElements(a) ||
        !type_of(I, mlirAttributeGetType(a), &t) || t.q) {
        op_error(I, op, "expected a dense `values` attribute of a static tensor type%s", "");
        return VNONE;
    }
    Tensor *tn = ir_tensor_new(I->m, &t);
    if (!tn) {
        op_error(I, op, "constant too large%s", "");
        return VNONE;
    }
    size_t n = type_numel_unchecked(&t);
    for (size_t i = 0; i < n; i++) {
        if (elem_is_float(t.elem))
            tensor_set_f(tn, i, mlirDenseElementsAttrGetFloatValue(a, (intptr_t)i));
        else if (t.elem == ET_I64)
            tensor_set_i(tn, i, mlirDenseElementsAttrGetInt64Value(a, (intptr_t)i));
        else if (elem_size(t.elem) == 4)
            tensor_set_i(tn, i, mlirDenseElementsAttrGetInt32Value(a, (intptr_t)i));
        else if (elem_size(t.elem) == 2)
            tensor_set_i(tn, i, mlirDenseElementsAttrGetInt16Value(a, (intptr_t)i));
        else
            tensor_set_i(tn, i, mlirDenseElementsAttrGetInt8Value(a, (intptr_t)i));
    }
    return ir_add_const(I->g, NULL, tn, loc_of(I, mlirOperationGetLocation(op)));
}

/* quant.qcast / quant.dcast: parameters from the quantized side's type. */
static ValueId
imp_qdq(MlirImp *I, MlirOperation op, bool quantize)
{
    ValueId x = operand(I, op, 0);
    MlirType qt = quantize ? mlirValueGetType(mlirOperationGetResult(op, 0))
                           : mlirValueGetType(mlirOperationGetOperand(op, 0));
    Type t;
    if (!x.id || !type_of(I, qt, &t) || !t.q) {
        if (x.id)
            op_error(I, op, "expected a static tensor of !quant.uniform%s", "");
        return VNONE;
    }
    NodeId n = new_node(I, op, quantize ? OP_QUANTIZE : OP_DEQUANTIZE, 1, &x);
    ir_node(I->g, n)->q = (QParams *)t.q;
    return finish(I, op, n);
}

static ValueId
imp_simple(MlirImp *I, MlirOperation op, OpKind k, uint32_t nin)
{
    ValueId in[2];
    for (uint32_t i = 0; i < nin; i++)
        in[i] = operand(I, op, i);
    return finish(I, op, new_node(I, op, k, nin, in));
}

/* If x is the NCHW -> NHWC transpose import put after a conv or pooling, its input. */
static ValueId
nchw_source(MlirImp *I, ValueId x)
{
    Node *d = ir_def(I->g, x);
    int64_t perm[4];
    if (!d || d->op != OP_TRANSPOSE || ir_attr_ints(I->g, d, "perm", perm, 4) != 4 ||
        memcmp(perm, k_nchw_to_nhwc, sizeof perm) != 0)
        return VNONE;
    return d->in[0];
}

/* clamp on the NHWC result of a conv/pooling is applied before the layout transpose (which
 * moves after it), so that conv -> clip -> quantize is adjacent for qdq-fold. */
static ValueId
imp_clamp(MlirImp *I, MlirOperation op)
{
    ValueId x = operand(I, op, 0);
    ValueId inner = x.id ? nchw_source(I, x) : VNONE;
    NodeId n = new_node(I, op, OP_CLIP, 1, inner.id ? &inner : &x);
    if (!n.id)
        return VNONE;
    ir_set_attr_float(I->g, n, "min", (float)attr_f(op, "min_val", -3.4e38));
    ir_set_attr_float(I->g, n, "max", (float)attr_f(op, "max_val", 3.4e38));
    ValueId y = finish(I, op, n);
    return inner.id ? transpose(I, op, y, k_nchw_to_nhwc, 4) : y;
}

static ValueId
imp_reshape(MlirImp *I, MlirOperation op)
{
    ValueId x = operand(I, op, 0);
    Type t;
    if (!type_of(I, mlirValueGetType(mlirOperationGetResult(op, 0)), &t)) {
        op_error(I, op, "result is not a static tensor%s", "");
        return VNONE;
    }
    NodeId n = new_node(I, op, OP_RESHAPE, 1, &x);
    if (!n.id)
        return VNONE;
    ir_set_attr_ints(I->g, n, "shape", t.dims, t.rank);
    return finish(I, op, n);
}

static ValueId
imp_transpose(MlirImp *I, MlirOperation op)
{
    int64_t perm[IR_MAX_RANK];
    int k = attr_i64s(op, "perms", perm, IR_MAX_RANK);
    if (k < 0) {
        op_error(I, op, "expected a `perms` array%s", "");
        return VNONE;
    }
    return transpose(I, op, operand(I, op, 0), perm, k);
}

static ValueId
imp_concat(MlirImp *I, MlirOperation op)
{
    intptr_t nin = mlirOperationGetNumOperands(op);
    ValueId *in = xcalloc((size_t)nin + 1, sizeof *in);
    for (intptr_t i = 0; i < nin; i++)
        in[i] = operand(I, op, i);
    NodeId n = new_node(I, op, OP_CONCAT, (uint32_t)nin, in);
    free(in);
    if (!n.id)
        return VNONE;
    ir_set_attr_int(I->g, n, "axis", (int64_t)attr_f(op, "axis", 0));
    return finish(I, op, n);
}

static bool
attr_bool(MlirOperation op, const char *name)
{
    MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name));
    return !mlirAttributeIsNull(a) && mlirAttributeIsABool(a) && mlirBoolAttrGetValue(a);
}

/* Element 0 of a constant operand holding one value (tosa.rescale's multiplier, shift, zero
 * points); false with a diagnostic otherwise. */
static bool
scalar_operand(MlirImp *I, MlirOperation op, intptr_t k, const char *what, int64_t *out)
{
    ValueId v = operand(I, op, k);
    const Tensor *t = v.id ? ir_const_of(I->g, v) : NULL;
    if (!t || type_numel_unchecked(&t->type) != 1) {
        if (v.id)
            op_error(I, op, "the %s must be a tosa.const of one element", what);
        return false;
    }
    *out = tensor_get_i(t, 0);
    return true;
}

/* tosa.rescale -> requantize: the input's scale sx comes from its !quant.uniform type; the
 * result's parameters are sy = sx / (multiplier * 2^-shift) and output_zp (a quantized result
 * type must agree with them). Per-channel rescales are not mapped. */
static ValueId
imp_rescale(MlirImp *I, MlirOperation op)
{
    ValueId x = operand(I, op, 0);
    int64_t mult, shift, izp, ozp;
    if (!x.id || !scalar_operand(I, op, 1, "multiplier", &mult) ||
        !scalar_operand(I, op, 2, "shift", &shift) ||
        !scalar_operand(I, op, 3, "input zero point", &izp) ||
        !scalar_operand(I, op, 4, "output zero point", &ozp))
        return VNONE;
    const QParams *xq = ir_value(I->g, x)->type.q;
    Node *xd = ir_def(I->g, x);
    if (!xq && xd && xd->op == OP_QUANTIZE) /* quant.qcast: the parameters are on the node; */
        xq = ir_value(I->g, x)->type.q = xd->q; /* requantize wants them on the type */
    if (!xq || xq->axis >= 0) {
        op_error(I, op, "the input must be a per-tensor !quant.uniform tensor (its scale gives "
                 "the result's)%s", "");
        return VNONE;
    }
    if (attr_bool(op, "input_unsigned"))
        izp &= 0xff;
    if (izp != xq->zp[0] || mult <= 0 || shift < 2 || shift > 62) {
        op_error(I, op, "%s", izp != xq->zp[0] ? "input_zp differs from the input type's zero "
                 "point" : "multiplier must be positive and shift in [2, 62]");
        return VNONE;
    }
    Type rt;
    MlirType mrt = mlirValueGetType(mlirOperationGetResult(op, 0));
    if (!type_of(I, mrt, &rt) || (rt.elem != ET_I8 && rt.elem != ET_U8 && rt.elem != ET_I16)) {
        op_error(I, op, "the result must be a static i8, u8 or i16 tensor%s", "");
        return VNONE;
    }
    if (attr_bool(op, "output_unsigned") && rt.elem == ET_I8) {
        rt.elem = ET_U8;
        ozp &= 0xff;
    }
    double sy = xq->scale[0] / ((double)mult * ldexp(1.0, -(int)shift));
    if (rt.q) {
        if (rt.q->axis >= 0 || rt.q->zp[0] != ozp || fabs(rt.q->scale[0] - sy) > 1e-5 * sy) {
            op_error(I, op, "the result type's scale and zero point disagree with the multiplier, "
                     "shift and output_zp%s", "");
            return VNONE;
        }
    } else {
        rt.q = ir_qparams_per_tensor(I->m, rt.elem, (float)sy, (int32_t)ozp);
    }
    NodeId n = new_node(I, op, OP_REQUANTIZE, 1, &x);
    return n.id ? ir_add_result(I->g, n, 0, NULL, &rt) : VNONE;
}

/* tosa pad [top, bottom, left, right] -> ONNX pads [top, left, bottom, right] */
static void
set_window(MlirImp *I, MlirOperation op, NodeId n, bool kernel)
{
    int64_t p[4] = {0}, s[2] = {1, 1}, d[2] = {1, 1}, k[2];
    attr_i64s(op, "pad", p, 4);
    attr_i64s(op, "stride", s, 2);
    attr_i64s(op, "dilation", d, 2);
    int64_t pads[4] = {p[0], p[2], p[1], p[3]};
    ir_set_attr_ints(I->g, n, "pads", pads, 4);
    ir_set_attr_ints(I->g, n, "strides", s, 2);
    if (kernel && attr_i64s(op, "kernel", k, 2) == 2)
        ir_set_attr_ints(I->g, n, "kernel_shape", k, 2);
    else if (!kernel)
        ir_set_attr_ints(I->g, n, "dilations", d, 2);
}

/* A copy of constant c (rank 4) with its dimensions permuted (out dim i = c's dim perm[i]) and
 * type quantization q. */
static ValueId
permuted_const(MlirImp *I, MlirOperation op, const Tensor *c, const int64_t *perm,
               const QParams *q)
{
    Type t = c->type;
    int64_t stride[4], idx[4] = {0};
    for (int i = 3, s = 1; i >= 0; s *= (int)c->type.dims[i], i--)
        stride[i] = s;
    for (int i = 0; i < 4; i++)
        t.dims[i] = c->type.dims[perm[i]];
    t.q = q;
    Tensor *o = ir_tensor_new(I->m, &t);
    if (!o)
        return VNONE;
    size_t es = elem_size(t.elem), n = type_numel_unchecked(&t);
    for (size_t k = 0; k < n; k++) {
        size_t src = 0;
        for (int i = 0; i < 4; i++)
            src += (size_t)(idx[i] * stride[perm[i]]);
        memcpy((char *)o->data + k * es, (const char *)c->data + src * es, es);
        for (int i = 3; i >= 0 && ++idx[i] == t.dims[i]; i--)
            idx[i] = 0;
    }
    return ir_add_const(I->g, NULL, o, loc_of(I, mlirOperationGetLocation(op)));
}

/* q with its axis renumbered for a permutation of the dimensions (NULL stays NULL). */
static const QParams *
permuted_qparams(MlirImp *I, const QParams *q, const int64_t *perm)
{
    if (!q || q->axis < 0)
        return q;
    int32_t axis = 0;
    for (int i = 0; i < 4; i++)
        if (perm[i] == q->axis)
            axis = i;
    QParams *r = ir_qparams_new(I->m, q->storage, axis, q->n);
    memcpy(r->scale, q->scale, q->n * sizeof *r->scale);
    memcpy(r->zp, q->zp, q->n * sizeof *r->zp);
    r->qmin = q->qmin;
    r->qmax = q->qmax;
    return r;
}

/* A static quantize/dequantize node over x with parameters q. */
static ValueId
qdq_node(MlirImp *I, MlirOperation op, OpKind k, ValueId x, const QParams *q)
{
    NodeId n = new_node(I, op, k, 1, &x);
    if (!n.id)
        return VNONE;
    ir_node(I->g, n)->q = (QParams *)q;
    return finish(I, op, n);
}

/* A constant weight w = const, DQ(const) or DQ(Q(const)), rebuilt with the constant itself
 * permuted and the per-axis quantization axis renumbered, so that the conv sees DQ(const) and
 * qdq-fold turns it into qconv. VNONE if w has another form (the caller transposes then). */
static ValueId
permute_const_weight(MlirImp *I, MlirOperation op, ValueId w, const int64_t *perm)
{
    Graph *g = I->g;
    const Tensor *c = ir_const_of(g, w);
    if (c)
        return c->type.rank == 4 ? permuted_const(I, op, c, perm,
                                                  permuted_qparams(I, c->type.q, perm))
                                 : VNONE;
    Node *dq = ir_def(g, w);
    if (!dq || dq->op != OP_DEQUANTIZE || dq->nin != 1 || !dq->q)
        return VNONE;
    const QParams *dqq = permuted_qparams(I, dq->q, perm);
    ValueId qv = dq->in[0];
    Node *qn = ir_def(g, qv);
    if ((c = ir_const_of(g, qv)) != NULL) { /* DQ(quantized const) */
        if (c->type.rank != 4)
            return VNONE;
        return qdq_node(I, op, OP_DEQUANTIZE,
                        permuted_const(I, op, c, perm, permuted_qparams(I, c->type.q, perm)),
                        dqq);
    }
    if (!qn || qn->op != OP_QUANTIZE || qn->nin != 1 || !qn->q)
        return VNONE;
    const QParams *qq = permuted_qparams(I, qn->q, perm);
    c = ir_const_of(g, qn->in[0]);
    if (!c || c->type.rank != 4)
        return VNONE;
    ValueId cp = permuted_const(I, op, c, perm, NULL);
    return qdq_node(I, op, OP_DEQUANTIZE, qdq_node(I, op, OP_QUANTIZE, cp, qq), dqq);
}

/* conv2d: x NHWC, w OHWI; depthwise_conv2d: w [KH, KW, C, M] -> grouped conv OIHW [C*M,1,KH,KW].
 * Constant weights are permuted at import (permute_const_weight); others get a transpose. */
static ValueId
imp_conv(MlirImp *I, MlirOperation op, bool depthwise)
{
    ValueId x = operand(I, op, 0), w = operand(I, op, 1), b = operand(I, op, 2);
    if (!x.id || !w.id || !b.id)
        return VNONE;
    ValueId xt = transpose(I, op, x, k_nhwc_to_nchw, 4);
    ValueId wt;
    int64_t group = 1;
    static const int64_t dw_perm[4] = {2, 3, 0, 1}; /* [KH, KW, C, M] -> [C, M, KH, KW] */
    if (depthwise && ir_value(I->g, w)->type.dims[3] == 1 &&
        (wt = permute_const_weight(I, op, w, dw_perm)).id) {
        group = ir_value(I->g, w)->type.dims[2];
    } else if (!depthwise && (wt = permute_const_weight(I, op, w, k_nhwc_to_nchw)).id) {
        ;
    } else if (depthwise) {
        const Type *wty = &ir_value(I->g, w)->type;
        int64_t kh = wty->dims[0], kw = wty->dims[1], c = wty->dims[2], mult = wty->dims[3];
        ValueId t = transpose(I, op, w, dw_perm, 4);
        NodeId r = new_node(I, op, OP_RESHAPE, 1, &t);
        if (!r.id)
            return VNONE;
        int64_t shape[4] = {c * mult, 1, kh, kw};
        ir_set_attr_ints(I->g, r, "shape", shape, 4);
        wt = finish(I, op, r);
        group = c;
    } else {
        wt = transpose(I, op, w, k_nhwc_to_nchw, 4);
    }
    ValueId in[3] = {xt, wt, b};
    NodeId n = new_node(I, op, OP_CONV, 3, in);
    if (!n.id)
        return VNONE;
    set_window(I, op, n, false);
    ir_set_attr_int(I->g, n, "group", group);
    return transpose(I, op, finish(I, op, n), k_nchw_to_nhwc, 4);
}

static ValueId
imp_pool(MlirImp *I, MlirOperation op, OpKind k)
{
    ValueId x = operand(I, op, 0);
    if (!x.id)
        return VNONE;
    ValueId xt = transpose(I, op, x, k_nhwc_to_nchw, 4);
    NodeId n = new_node(I, op, k, 1, &xt);
    if (!n.id)
        return VNONE;
    set_window(I, op, n, true);
    if (k == OP_AVGPOOL)
        ir_set_attr_int(I->g, n, "count_include_pad", 0);
    return transpose(I, op, finish(I, op, n), k_nchw_to_nhwc, 4);
}

/* One op of the function body; false (with unsupported ops noted) if it has no mapping. */
static void
imp_op(MlirImp *I, MlirOperation op)
{
    MlirStringRef nm = mlirIdentifierStr(mlirOperationGetName(op));
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)nm.length, nm.data);
    ValueId v = VNONE;
    bool known = true;
    if (!strcmp(name, "tosa.const_shape") || !strcmp(name, "func.return"))
        return; /* shapes are read from result types; return is handled by the caller */
    if (!strcmp(name, "tosa.const"))
        v = imp_const(I, op);
    else if (!strcmp(name, "quant.qcast"))
        v = imp_qdq(I, op, true);
    else if (!strcmp(name, "quant.dcast"))
        v = imp_qdq(I, op, false);
    else if (!strcmp(name, "tosa.add"))
        v = imp_simple(I, op, OP_ADD, 2);
    else if (!strcmp(name, "tosa.mul"))
        v = imp_simple(I, op, OP_MUL, 2);
    else if (!strcmp(name, "tosa.matmul"))
        v = imp_simple(I, op, OP_MATMUL, 2);
    else if (!strcmp(name, "tosa.clamp"))
        v = imp_clamp(I, op);
    else if (!strcmp(name, "tosa.rescale"))
        v = imp_rescale(I, op);
    else if (!strcmp(name, "tosa.reshape"))
        v = imp_reshape(I, op);
    else if (!strcmp(name, "tosa.transpose"))
        v = imp_transpose(I, op);
    else if (!strcmp(name, "tosa.concat"))
        v = imp_concat(I, op);
    else if (!strcmp(name, "tosa.conv2d"))
        v = imp_conv(I, op, false);
    else if (!strcmp(name, "tosa.depthwise_conv2d"))
        v = imp_conv(I, op, true);
    else if (!strcmp(name, "tosa.max_pool2d"))
        v = imp_pool(I, op, OP_MAXPOOL);
    else if (!strcmp(name, "tosa.avg_pool2d"))
        v = imp_pool(I, op, OP_AVGPOOL);
    else
        known = false;
    if (!known) {
        if (!strstr(I->unsupported.data ? I->unsupported.data : "", name)) {
            sb_printf(&I->unsupported, "%s%s", I->n_unsupported ? ", " : "", name);
            I->n_unsupported++;
        }
        return;
    }
    if (v.id && mlirOperationGetNumResults(op) == 1)
        bind(I, mlirOperationGetResult(op, 0), v);
    else if (!I->failed)
        op_error(I, op, "could not be imported%s", "");
}

static bool
imp_func(MlirImp *I, MlirOperation fn)
{
    MlirRegion r = mlirOperationGetRegion(fn, 0);
    MlirBlock blk = mlirRegionGetFirstBlock(r);
    if (mlirBlockIsNull(blk)) {
        op_error(I, fn, "has no body%s", "");
        return false;
    }
    for (intptr_t i = 0; i < mlirBlockGetNumArguments(blk); i++) {
        MlirValue a = mlirBlockGetArgument(blk, i);
        Type t;
        if (!type_of(I, mlirValueGetType(a), &t)) {
            op_error(I, fn, "argument %s is not a static tensor of a supported type", "");
            return false;
        }
        char nm[32];
        snprintf(nm, sizeof nm, "arg%ld", (long)i);
        bind(I, a, ir_add_input(I->g, nm, &t));
    }
    MlirOperation ret = {0};
    for (MlirOperation op = mlirBlockGetFirstOperation(blk); !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op)) {
        imp_op(I, op);
        MlirStringRef nm = mlirIdentifierStr(mlirOperationGetName(op));
        if (nm.length == 11 && !memcmp(nm.data, "func.return", 11))
            ret = op;
        if (I->failed)
            return false;
    }
    if (I->n_unsupported) {
        Loc loc = {.file = I->path};
        diag_error(I->ctx, &loc, "unsupported ops: %s", I->unsupported.data);
        return false;
    }
    if (mlirOperationIsNull(ret)) {
        op_error(I, fn, "has no func.return%s", "");
        return false;
    }
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(ret); i++) {
        ValueId v = operand(I, ret, i);
        if (!v.id)
            return false;
        vec_push(&I->g->outputs, v);
    }
    return true;
}

Module *
imp_mlir(qdqc_context *ctx, const char *text, size_t len, const char *path)
{
    MlirImp I = {.ctx = ctx, .path = path ? path : "<mlir>"};
    sb_init(&I.unsupported);
    MlirContext mc = mlirContextCreateWithThreading(false);
    MlirDialectHandle hs[3] = {mlirGetDialectHandle__func__(), mlirGetDialectHandle__tosa__(),
                               mlirGetDialectHandle__quant__()};
    for (int i = 0; i < 3; i++)
        mlirDialectHandleLoadDialect(hs[i], mc);
    mlirContextAttachDiagnosticHandler(mc, diag_handler, &I, NULL);
    MlirModule mod = mlirModuleCreateParse(mc, (MlirStringRef){text, len});
    Module *m = NULL;
    if (mlirModuleIsNull(mod)) {
        if (!I.failed)
            diag_error(ctx, &(Loc){.file = I.path}, "cannot parse the MLIR module");
        goto done;
    }
    MlirOperation fn = {0};
    for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(mod));
         !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
        MlirStringRef nm = mlirIdentifierStr(mlirOperationGetName(op));
        if (nm.length == 9 && !memcmp(nm.data, "func.func", 9)) {
            fn = op;
            break;
        }
    }
    if (mlirOperationIsNull(fn)) {
        diag_error(ctx, &(Loc){.file = I.path}, "the module has no func.func");
        goto done;
    }
    I.m = m = ir_module_create(ctx, I.path);
    I.g = &m->g;
    MlirAttribute sym = mlirOperationGetAttributeByName(fn, mlirStringRefCreateFromCString("sym_name"));
    if (!mlirAttributeIsNull(sym) && mlirAttributeIsAString(sym)) {
        MlirStringRef s = mlirStringAttrGetValue(sym);
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)s.length, s.data);
        I.g->name = intern(&m->strs, buf);
    }
    if (!imp_func(&I, fn) || !ir_compact(I.g)) {
        ir_module_destroy(m);
        m = NULL;
    }
done:
    if (!mlirModuleIsNull(mod))
        mlirModuleDestroy(mod);
    mlirContextDestroy(mc);
    free(I.map);
    sb_free(&I.unsupported);
    return m;
}
