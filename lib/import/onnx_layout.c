/* onnx_layout.c: the ONNX ops that move data or compute shapes: Concat, Split, Slice, Pad,
 * Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Resize, Shape, Gather, Constant,
 * ConstantOfShape, Expand, Tile and Range. Their parameters given as inputs (Reshape's shape, Slice's starts/ends/
 * axes/steps, Pad's pads, Split's split, Squeeze/Unsqueeze axes, Resize scales/sizes) must be
 * constants after import-time folding and become attributes (docs/ir.md conventions). */
#include "onnx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    if (!onnx_attr(I, "axis")) {
        free(ins);
        onnx_node_error(I, "attribute 'axis' is required");
        return false;
    }
    NodeId n = onnx_mk(I, OP_CONCAT, (uint32_t)nin, ins, 1);
    free(ins);
    ir_set_attr_int(I->g, n, "axis", onnx_attr_i(I, "axis", 0));
    return onnx_emit(I, n, ET_NONE);
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
    if (!onnx_norm_axis(I, onnx_attr_i(I, "axis", 0), xt->rank, &a))
        return false;
    int64_t sp[64];
    int k = -1;
    if (I->opset < 13) {
        k = onnx_attr_ints(I, "split", sp, 64);
        if (k == -2)
            return false;
    } else if (IN(I, 1).id) {
        if (!onnx_const_ints(I, 1, "split", sp, 64, &k))
            return false;
    }
    if (k < 0) {
        int64_t d = xt->dims[a], parts = (int64_t)nout;
        if (I->opset >= 18 && onnx_attr(I, "num_outputs")) {
            parts = onnx_attr_i(I, "num_outputs", 0);
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
    NodeId n = onnx_mk(I, OP_SPLIT, 1, &x, (uint32_t)nout);
    ir_set_attr_int(I->g, n, "axis", a);
    ir_set_attr_ints(I->g, n, "split", sp, (uint32_t)k);
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_slice(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK];
    int ks, ke, ka = -1, kp = -1;
    if (!onnx_const_ints(I, 1, "starts", st, IR_MAX_RANK, &ks) ||
        !onnx_const_ints(I, 2, "ends", en, IR_MAX_RANK, &ke))
        return false;
    if (IN(I, 3).id && !onnx_const_ints(I, 3, "axes", ax, IR_MAX_RANK, &ka))
        return false;
    if (IN(I, 4).id && !onnx_const_ints(I, 4, "steps", sp, IR_MAX_RANK, &kp))
        return false;
    if (ks != ke || (ka >= 0 && ka != ks) || (kp >= 0 && kp != ks)) {
        onnx_node_error(I, "starts, ends, axes and steps must have equal lengths");
        return false;
    }
    NodeId n = onnx_mk(I, OP_SLICE, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "starts", st, (uint32_t)ks);
    ir_set_attr_ints(I->g, n, "ends", en, (uint32_t)ke);
    if (ka >= 0)
        ir_set_attr_ints(I->g, n, "axes", ax, (uint32_t)ka);
    if (kp >= 0)
        ir_set_attr_ints(I->g, n, "steps", sp, (uint32_t)kp);
    return onnx_emit(I, n, ET_NONE);
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
        k = onnx_attr_ints(I, "pads", p, 2 * IR_MAX_RANK);
        if (k == -2)
            return false;
        value = onnx_attr_f(I, "value", 0.0f);
    } else {
        if (!onnx_const_ints(I, 1, "pads", p, 2 * IR_MAX_RANK, &k))
            return false;
        if (IN(I, 2).id && !onnx_const_scalar_f(I, 2, "constant_value", &value))
            return false;
        if (IN(I, 3).id && !onnx_const_ints(I, 3, "axes", axes, IR_MAX_RANK, &ka))
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
            if (!onnx_norm_axis(I, axes[i], r, &a))
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
    const char *mode = onnx_attr_s(I, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge")) {
        onnx_node_error(I, "pad mode '%s' is not supported (constant, reflect, edge)", mode);
        return false;
    }
    NodeId n = onnx_mk(I, OP_PAD, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "pads", pads, (uint32_t)(2 * r));
    ir_set_attr_string(I->g, n, "mode", mode);
    ir_set_attr_float(I->g, n, "value", (float)value);
    return onnx_emit(I, n, ET_NONE);
}

/* Reshape: the shape input becomes an attribute; 0 copies the input's dimension (unless
 * allowzero), -1 is the element count divided exactly by the others' product. Dimension
 * arithmetic (dims.c), so static and symbolic shapes take one path. */
static bool
op_reshape(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    const Type *xt = TY(I, x);
    Graph *g = I->g;
    int64_t sh[IR_MAX_RANK];
    int k;
    if (!onnx_const_ints(I, 1, "shape", sh, IR_MAX_RANK, &k))
        return false;
    bool allowzero = onnx_attr_i(I, "allowzero", 0) != 0;
    int neg = -1;
    int64_t total, known = 1;
    char a[96], b[96];
    if (!ir_type_numel_dim(g, xt, &total)) {
        onnx_node_error(I, "the input's element count is too complex a symbolic expression");
        return false;
    }
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
        if ((sh[i] < 0 && !ir_dim_is_tag(sh[i])) || !ir_dim_valid(g, sh[i])) {
            onnx_node_error(I, "shape[%d] is %lld", i, (long long)sh[i]);
            return false;
        }
        if (!ir_dim_mul(g, known, sh[i], &known)) {
            onnx_node_error(I, "shape overflows (or is too complex a symbolic expression)");
            return false;
        }
    }
    if (neg >= 0 && !ir_dim_div_exact(g, total, known, &sh[neg])) {
        onnx_node_error(I, "cannot infer the -1 dimension: %s elements into blocks of %s",
                        ir_dim_str(g, total, a, sizeof a), ir_dim_str(g, known, b, sizeof b));
        return false;
    }
    NodeId n = onnx_mk(I, OP_RESHAPE, 1, &x, 1);
    ir_set_attr_ints(g, n, "shape", sh, (uint32_t)k);
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_flatten(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = onnx_mk(I, OP_FLATTEN, 1, &x, 1);
    ir_set_attr_int(I->g, n, "axis", onnx_attr_i(I, "axis", 1));
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_transpose(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t perm[IR_MAX_RANK];
    int k = onnx_attr_ints(I, "perm", perm, IR_MAX_RANK);
    if (k == -2)
        return false;
    NodeId n = onnx_mk(I, OP_TRANSPOSE, 1, &x, 1);
    if (k >= 0)
        ir_set_attr_ints(I->g, n, "perm", perm, (uint32_t)k);
    return onnx_emit(I, n, ET_NONE);
}

static bool
squeeze_like(OnnxImp *I, OpKind op)
{
    ValueId x = IN(I, 0);
    int64_t axes[IR_MAX_RANK];
    int k = -1;
    if (I->opset < 13) {
        k = onnx_attr_ints(I, "axes", axes, IR_MAX_RANK);
        if (k == -2)
            return false;
    } else if (IN(I, 1).id) {
        if (!onnx_const_ints(I, 1, "axes", axes, IR_MAX_RANK, &k))
            return false;
    }
    if (op == OP_UNSQUEEZE && k < 0) {
        onnx_node_error(I, "'axes' is required");
        return false;
    }
    NodeId n = onnx_mk(I, op, 1, &x, 1);
    if (k >= 0)
        ir_set_attr_ints(I->g, n, "axes", axes, (uint32_t)k);
    return onnx_emit(I, n, ET_NONE);
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
    const char *mode = onnx_attr_s(I, "mode", "nearest");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear")) {
        onnx_node_error(I, "mode '%s' is not supported (nearest, linear)", mode);
        return false;
    }
    if (onnx_attr_i(I, "antialias", 0)) {
        onnx_node_error(I, "antialias is not supported");
        return false;
    }
    if (onnx_attr(I, "axes")) {
        onnx_node_error(I, "the 'axes' attribute is not supported");
        return false;
    }
    const char *kar = onnx_attr_s(I, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(kar, "stretch")) {
        onnx_node_error(I, "keep_aspect_ratio_policy '%s' is not supported", kar);
        return false;
    }
    const char *ctm =
        I->opset < 11 ? "asymmetric"
                      : onnx_attr_s(I, "coordinate_transformation_mode", "half_pixel");
    bool crop = strcmp(ctm, "tf_crop_and_resize") == 0;
    /* tf_crop_and_resize: the region of interest, normalized [starts..., ends...] */
    float roi[2 * IR_MAX_RANK];
    for (int i = 0; i < r; i++) {
        roi[i] = 0;
        roi[r + i] = 1;
    }
    if (crop) {
        const Tensor *rt = CIN(I, 1);
        if (!rt) {
            if (IN(I, 1).id)
                onnx_not_const_error(I, 1, "roi");
            else
                onnx_node_error(I, "tf_crop_and_resize needs 'roi'");
            return false;
        }
        if (type_numel_unchecked(&rt->type) != 2 * (size_t)r || !elem_is_float(rt->type.elem)) {
            onnx_node_error(I, "'roi' must have %d float values", 2 * r);
            return false;
        }
        for (int i = 0; i < 2 * r; i++) {
            roi[i] = (float)tensor_get_f(rt, (size_t)i);
            if (!isfinite(roi[i])) {
                onnx_node_error(I, "'roi' must be finite");
                return false;
            }
        }
    }
    size_t scales_in = I->opset < 11 ? 1 : 2, sizes_in = 3;
    int64_t sizes[IR_MAX_RANK];
    float scales[IR_MAX_RANK];
    bool keep_scales = false; /* the map needs the given scales (not output / input size) */
    ValueId sv = I->opset >= 11 ? IN(I, sizes_in) : VNONE;
    if (sv.id && type_numel_unchecked(TY(I, sv)) > 0) {
        int k;
        if (!onnx_const_ints(I, sizes_in, "sizes", sizes, IR_MAX_RANK, &k))
            return false;
        if (k != r) {
            onnx_node_error(I, "'sizes' has %d values, the input has rank %d", k, r);
            return false;
        }
    } else {
        const Tensor *st = CIN(I, scales_in);
        if (!st) {
            if (IN(I, scales_in).id)
                onnx_not_const_error(I, scales_in, "scales");
            else
                onnx_node_error(I, "'scales' or 'sizes' is required");
            return false;
        }
        if (type_numel_unchecked(&st->type) != (size_t)r || !elem_is_float(st->type.elem)) {
            onnx_node_error(I, "'scales' must have %d float values", r);
            return false;
        }
        /* ONNX: output size floor(input size x roi extent x scale); the coordinate map uses
         * the scale itself, which differs from output / input size when that is not whole */
        for (int i = 0; i < r; i++) {
            float sf = (float)tensor_get_f(st, (size_t)i);
            double s = sf, ext = crop ? (double)roi[r + i] - (double)roi[i] : 1.0;
            double full = (double)xt->dims[i] * ext * s, o = floor(full);
            if (!(s > 0) || !(o >= 1) || o > 1e12) {
                onnx_node_error(I, "scale %g for dimension %d gives no valid size", s, i);
                return false;
            }
            if (crop && o != full) {
                onnx_node_error(I, "tf_crop_and_resize: scale %g does not give a whole size "
                                "for dimension %d; give 'sizes' instead", s, i);
                return false;
            }
            scales[i] = sf;
            keep_scales |= o != full;
            sizes[i] = (int64_t)o;
        }
    }
    NodeId n = onnx_mk(I, OP_RESIZE, 1, &x, 1);
    ir_set_attr_ints(g, n, "sizes", sizes, (uint32_t)r);
    ir_set_attr_string(g, n, "mode", mode);
    ir_set_attr_string(g, n, "coordinate_transformation_mode", ctm);
    if (keep_scales)
        ir_set_attr_floats(g, n, "scales", scales, (uint32_t)r);
    if (crop) {
        ir_set_attr_floats(g, n, "roi", roi, 2 * (uint32_t)r);
        ir_set_attr_float(g, n, "extrapolation_value",
                          onnx_attr_f(I, "extrapolation_value", 10.0f));
    }
    if (strcmp(mode, "nearest") == 0)
        ir_set_attr_string(g, n, "nearest_mode",
                           I->opset < 11 ? "floor"
                                         : onnx_attr_s(I, "nearest_mode", "round_prefer_floor"));
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_shape(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    NodeId n = onnx_mk(I, OP_SHAPE, 1, &x, 1);
    if (onnx_attr(I, "start"))
        ir_set_attr_int(I->g, n, "start", onnx_attr_i(I, "start", 0));
    if (onnx_attr(I, "end"))
        ir_set_attr_int(I->g, n, "end", onnx_attr_i(I, "end", 0));
    return onnx_emit(I, n, ET_NONE);
}

/* Constant indices are checked here (a run-time index outside [-d, d) is an error of the run:
 * QDQC_ERR_RUNTIME from compiled code, docs/abi.md). */
static bool
op_gather(OnnxImp *I)
{
    ValueId ins[2] = {IN(I, 0), IN(I, 1)};
    const Type *xt = TY(I, ins[0]);
    int64_t a;
    if (!onnx_norm_axis(I, onnx_attr_i(I, "axis", 0), xt->rank, &a))
        return false;
    const Tensor *it = CIN(I, 1);
    if (it && (it->type.elem == ET_I64 || it->type.elem == ET_I32) &&
        !ir_dim_is_tag(xt->dims[a])) {
        int64_t d = xt->dims[a];
        for (size_t i = 0; i < type_numel_unchecked(&it->type); i++) {
            int64_t v = tensor_get_i(it, i);
            if (v < -d || v >= d) {
                onnx_node_error(I, "index %lld (element %zu of 'indices') is outside [%lld, "
                                "%lld) for axis %lld", (long long)v, i, (long long)-d,
                                (long long)d, (long long)a);
                return false;
            }
        }
    }
    NodeId n = onnx_mk(I, OP_GATHER, 2, ins, 1);
    ir_set_attr_int(I->g, n, "axis", onnx_attr_i(I, "axis", 0));
    return onnx_emit(I, n, ET_NONE);
}

/* Expand: 'shape' (a constant input) becomes an attribute; the result is the numpy broadcast
 * of the input and it (so a 1 keeps the input's dimension). */
static bool
op_expand(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t sh[IR_MAX_RANK];
    int k;
    if (!onnx_const_ints(I, 1, "shape", sh, IR_MAX_RANK, &k))
        return false;
    NodeId n = onnx_mk(I, OP_EXPAND, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "shape", sh, (uint32_t)k);
    return onnx_emit(I, n, ET_NONE);
}

static bool
op_tile(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    int64_t rep[IR_MAX_RANK];
    int k;
    if (!onnx_const_ints(I, 1, "repeats", rep, IR_MAX_RANK, &k))
        return false;
    if (k != TY(I, x)->rank) {
        onnx_node_error(I, "'repeats' has %d values, the input has rank %d", k, TY(I, x)->rank);
        return false;
    }
    NodeId n = onnx_mk(I, OP_TILE, 1, &x, 1);
    ir_set_attr_ints(I->g, n, "repeats", rep, (uint32_t)k);
    return onnx_emit(I, n, ET_NONE);
}

/* Range: its length depends on the operands' values, so all three must be constants; the node
 * folds to a constant as it is built (eval.c). */
static bool
op_range(OnnxImp *I)
{
    static const char *what[3] = {"start", "limit", "delta"};
    ValueId ins[3];
    for (size_t k = 0; k < 3; k++) {
        ins[k] = IN(I, k);
        if (!CIN(I, k)) {
            onnx_not_const_error(I, k, what[k]);
            return false;
        }
    }
    return onnx_emit(I, onnx_mk(I, OP_RANGE, 3, ins, 1), ET_NONE);
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
    ValueId v = ir_add_const(I->g, onnx_out_name(I, 0), t, I->loc);
    return onnx_bind(I, onnx_out_name(I, 0), v);
}

static bool
op_constant_of_shape(OnnxImp *I)
{
    ValueId x = IN(I, 0);
    if (!CIN(I, 0)) {
        onnx_not_const_error(I, 0, "shape");
        return false;
    }
    const Onnx__AttributeProto *a = onnx_attr(I, "value");
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
    NodeId n = onnx_mk(I, OP_CONSTANT_OF_SHAPE, 1, &x, 1);
    ir_set_attr_tensor(I->g, n, "value", v);
    return onnx_emit(I, n, ET_NONE);
}

const OnnxOpEntry onnx_layout_table[] = {
    {"Concat", op_concat, 1, 4096, 1, SYM_ANY},
    {"Split", op_split, 1, 2, 64, SYM_NONE},
    {"Slice", op_slice, 3, 5, 1, SYM_ANY},
    {"Pad", op_pad, 1, 4, 1, SYM_NONE},
    {"Reshape", op_reshape, 2, 2, 1, SYM_ANY},
    {"Flatten", op_flatten, 1, 1, 1, SYM_ANY},
    {"Transpose", op_transpose, 1, 1, 1, SYM_ANY},
    {"Squeeze", op_squeeze, 1, 2, 1, SYM_ANY},
    {"Unsqueeze", op_unsqueeze, 1, 2, 1, SYM_ANY},
    {"Resize", op_resize, 1, 4, 1, SYM_NONE},
    {"Shape", op_shape, 1, 1, 1, SYM_ANY},
    {"Gather", op_gather, 2, 2, 1, SYM_ANY},
    {"Constant", op_constant, 0, 0, 1, SYM_NONE},
    {"ConstantOfShape", op_constant_of_shape, 1, 1, 1, SYM_ANY},
    /* broadcasting, tiling, ranges */
    {"Expand", op_expand, 2, 2, 1, SYM_ANY},
    {"Tile", op_tile, 2, 2, 1, SYM_NONE},
    {"Range", op_range, 3, 3, 1, SYM_ANY},
};
const size_t onnx_layout_table_len = ARRAY_LEN(onnx_layout_table);
