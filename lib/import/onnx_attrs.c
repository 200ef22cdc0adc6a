/* onnx_attrs.c: the attributes each imported ONNX op defines, per opset range, and the one
 * check of a node's attributes against them (called by onnx_translate before the handler).
 *
 * Handlers read the attributes they know and ignore the rest, so without this check an
 * attribute the op does not define (QuantizeLinear `group`, a typo), or one its opset does not
 * define yet (DequantizeLinear `axis` at opset 10, Resize `antialias` before 18), would be
 * dropped without a word. Such an attribute is a warning naming the node and the attribute;
 * under the `strict` option (`qdqc --strict`) an error. A node given the same attribute twice
 * (handlers read the first), an attribute without its type, or one whose value is in another
 * field than its type names (or in several), is treated the same way.
 *
 * The table covers the default domain at opsets 10 to 21 (those the reader accepts). Rows for
 * opsets 10 to 17 were taken from python3-onnx 1.12's schemas (onnx.defs.get_schema); the
 * changes of opsets 18 to 21 from the ONNX operator changelog: ReduceMean-18
 * (noop_with_empty_axes, axes become an input), Split-18 (num_outputs), Resize-18 (antialias,
 * axes, keep_aspect_ratio_policy), AveragePool-19 (dilations), Cast-19 and QuantizeLinear-19
 * (saturate), Gelu-20, QuantizeLinear-21 (block_size, output_dtype), DequantizeLinear-21
 * (block_size). com.microsoft QuantizeLinear/DequantizeLinear take `axis`. */
#include "onnx_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct AttrRow {
    const char *op;
    int from, to;       /* opset range, inclusive */
    const char *attrs;  /* space-separated names, "" for none */
} AttrRow;

#define CONV_ATTRS "auto_pad dilations group kernel_shape pads strides"

static const AttrRow attr_rows[] = {
    {"QuantizeLinear", 10, 12, ""},
    {"QuantizeLinear", 13, 18, "axis"},
    {"QuantizeLinear", 19, 20, "axis saturate"},
    {"QuantizeLinear", 21, 21, "axis block_size output_dtype saturate"},
    {"DequantizeLinear", 10, 12, ""},
    {"DequantizeLinear", 13, 20, "axis"},
    {"DequantizeLinear", 21, 21, "axis block_size"},
    {"DynamicQuantizeLinear", 11, 21, ""},
    {"QLinearConv", 10, 21, CONV_ATTRS},
    {"QLinearMatMul", 10, 21, ""},
    {"ConvInteger", 10, 21, CONV_ATTRS},
    {"MatMulInteger", 10, 21, ""},
    {"Conv", 10, 21, CONV_ATTRS},
    {"ConvTranspose", 10, 21, CONV_ATTRS " output_padding output_shape"},
    {"MatMul", 10, 21, ""},
    {"Gemm", 10, 21, "alpha beta transA transB"},
    {"BatchNormalization", 10, 13, "epsilon momentum"},
    {"BatchNormalization", 14, 21, "epsilon momentum training_mode"},
    {"Add", 10, 21, ""},
    {"Sub", 10, 21, ""},
    {"Mul", 10, 21, ""},
    {"Div", 10, 21, ""},
    {"Relu", 10, 21, ""},
    {"Clip", 10, 10, "max min"},
    {"Clip", 11, 21, ""},
    {"LeakyRelu", 10, 21, "alpha"},
    {"PRelu", 10, 21, ""},
    {"Sigmoid", 10, 21, ""},
    {"HardSigmoid", 10, 21, "alpha beta"},
    {"HardSwish", 14, 21, ""},
    {"Tanh", 10, 21, ""},
    {"Erf", 10, 21, ""},
    {"Gelu", 20, 21, "approximate"},
    /* float-island math (onnx_ops.c) */
    {"Exp", 10, 21, ""},
    {"Log", 10, 21, ""},
    {"Sqrt", 10, 21, ""},
    {"Reciprocal", 10, 21, ""},
    {"Neg", 10, 21, ""},
    {"Abs", 10, 21, ""},
    {"Round", 11, 21, ""},
    {"Pow", 10, 21, ""},
    {"Min", 10, 21, ""},
    {"Max", 10, 21, ""},
    {"Softmax", 10, 21, "axis"},
    {"LayerNormalization", 17, 21, "axis epsilon stash_type"},
    {"ReduceMean", 10, 17, "axes keepdims"},
    {"ReduceMean", 18, 21, "keepdims noop_with_empty_axes"},
    {"MaxPool", 10, 21, "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"},
    {"AveragePool", 10, 18, "auto_pad ceil_mode count_include_pad kernel_shape pads strides"},
    {"AveragePool", 19, 21,
     "auto_pad ceil_mode count_include_pad dilations kernel_shape pads strides"},
    {"GlobalAveragePool", 10, 21, ""},
    {"Identity", 10, 21, ""},
    {"Dropout", 10, 11, "ratio"},
    {"Dropout", 12, 21, "seed"},
    {"Cast", 10, 18, "to"},
    {"Cast", 19, 21, "saturate to"},
    {"Concat", 10, 21, "axis"},
    {"Split", 10, 12, "axis split"},
    {"Split", 13, 17, "axis"},
    {"Split", 18, 21, "axis num_outputs"},
    {"Slice", 10, 21, ""},
    {"Pad", 10, 10, "mode pads value"},
    {"Pad", 11, 21, "mode"},
    {"Reshape", 10, 13, ""},
    {"Reshape", 14, 21, "allowzero"},
    {"Flatten", 10, 21, "axis"},
    {"Transpose", 10, 21, "perm"},
    {"Squeeze", 10, 12, "axes"},
    {"Squeeze", 13, 21, ""},
    {"Unsqueeze", 10, 12, "axes"},
    {"Unsqueeze", 13, 21, ""},
    {"Resize", 10, 10, "mode"},
    {"Resize", 11, 17,
     "coordinate_transformation_mode cubic_coeff_a exclude_outside extrapolation_value mode "
     "nearest_mode"},
    {"Resize", 18, 21,
     "antialias axes coordinate_transformation_mode cubic_coeff_a exclude_outside "
     "extrapolation_value keep_aspect_ratio_policy mode nearest_mode"},
    {"Shape", 10, 14, ""},
    {"Shape", 15, 21, "end start"},
    {"Gather", 10, 21, "axis"},
    {"Constant", 10, 10, "value"},
    {"Constant", 11, 11, "sparse_value value"},
    {"Constant", 12, 21,
     "sparse_value value value_float value_floats value_int value_ints value_string "
     "value_strings"},
    {"ConstantOfShape", 10, 21, "value"},
    /* comparisons, logic, selection, reductions (opsets 10-17 from onnx 1.12's schemas;
     * ReduceMax/Min-18 axes input, ReduceMax/Min-20 bool, from the changelog) */
    {"Equal", 10, 21, ""},
    {"Less", 10, 21, ""},
    {"LessOrEqual", 12, 21, ""},
    {"Greater", 10, 21, ""},
    {"GreaterOrEqual", 12, 21, ""},
    {"Not", 10, 21, ""},
    {"And", 10, 21, ""},
    {"Or", 10, 21, ""},
    {"Xor", 10, 21, ""},
    {"Where", 10, 21, ""},
    {"Expand", 10, 21, ""},
    {"Tile", 10, 21, ""},
    {"Range", 11, 21, ""},
    {"ReduceSum", 10, 12, "axes keepdims"},
    {"ReduceSum", 13, 21, "keepdims noop_with_empty_axes"},
    {"ReduceMax", 10, 17, "axes keepdims"},
    {"ReduceMax", 18, 21, "keepdims noop_with_empty_axes"},
    {"ReduceMin", 10, 17, "axes keepdims"},
    {"ReduceMin", 18, 21, "keepdims noop_with_empty_axes"},
    {"ArgMax", 10, 11, "axis keepdims"},
    {"ArgMax", 12, 21, "axis keepdims select_last_index"},
    {"Einsum", 12, 21, "equation"},
    {"Mod", 10, 21, "fmod"},
    {"ScatterND", 11, 15, ""},
    {"ScatterND", 16, 21, "reduction"},
    {"Trilu", 14, 21, "upper"},
};

/* Is `name` one of the space-separated words of `list`? */
static bool
in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return true;
        p += len;
        while (*p == ' ')
            p++;
    }
    return false;
}

bool
onnx_node_lint(OnnxImp *I, const char *fmt, ...)
{
    bool strict = I->ctx->opt.strict != 0;
    va_list ap;
    va_start(ap, fmt);
    diag_vemit(I->ctx, strict ? QDQC_SEV_ERROR : QDQC_SEV_WARNING, &I->loc, fmt, ap);
    va_end(ap);
    return !strict;
}

/* The attributes of `op` at the current opset; NULL if the table has no row for it. `first`
 * is the first opset with a row (to tell "not yet defined" from "not defined"). */
static const char *
attrs_of(const OnnxImp *I, const char *op, bool ms, int *first, int *last)
{
    if (ms)
        return strcmp(op, "MatMulNBits") == 0 ? "K N accuracy_level bits block_size" : "axis";
    *first = 0;
    *last = 0;
    const char *found = NULL;
    for (size_t i = 0; i < ARRAY_LEN(attr_rows); i++) {
        const AttrRow *r = &attr_rows[i];
        if (strcmp(r->op, op) != 0)
            continue;
        if (!*first)
            *first = r->from;
        *last = r->to;
        if (I->opset >= r->from && I->opset <= r->to)
            found = r->attrs;
    }
    return found;
}

/* The first opset after the current one whose row for `op` lists `name` (0 if none). */
static int
defined_from(const OnnxImp *I, const char *op, const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(attr_rows); i++) {
        const AttrRow *r = &attr_rows[i];
        if (strcmp(r->op, op) == 0 && r->from > I->opset && in_list(r->attrs, name))
            return r->from;
    }
    return 0;
}

/* The last opset before the current one whose row for `op` lists `name` (0 if none). */
static int
defined_until(const OnnxImp *I, const char *op, const char *name)
{
    int until = 0;
    for (size_t i = 0; i < ARRAY_LEN(attr_rows); i++) {
        const AttrRow *r = &attr_rows[i];
        if (strcmp(r->op, op) == 0 && r->to < I->opset && in_list(r->attrs, name))
            until = r->to;
    }
    return until;
}

/* The value fields of an attribute, with the type that names each. ONNX requires the one
 * holding the value to be the one its type names (onnx.checker: "type field and data field
 * mismatch"), and at most one to be set; the handlers read the field of the type they
 * expect, so a value in another field would be ignored. */
typedef struct AttrField {
    const char *field, *type;
    Onnx__AttributeProto__AttributeType t;
} AttrField;

#define AT(x) ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__##x
static const AttrField attr_fields[] = {
    {"f", "FLOAT", AT(FLOAT)},       {"i", "INT", AT(INT)},
    {"s", "STRING", AT(STRING)},     {"t", "TENSOR", AT(TENSOR)},
    {"g", "GRAPH", AT(GRAPH)},       {"sparse_tensor", "SPARSE_TENSOR", AT(SPARSE_TENSOR)},
    {"tp", "TYPE_PROTO", AT(TYPE_PROTO)}, {"floats", "FLOATS", AT(FLOATS)},
    {"ints", "INTS", AT(INTS)},      {"strings", "STRINGS", AT(STRINGS)},
    {"tensors", "TENSORS", AT(TENSORS)}, {"graphs", "GRAPHS", AT(GRAPHS)},
    {"sparse_tensors", "SPARSE_TENSORS", AT(SPARSE_TENSORS)},
    {"type_protos", "TYPE_PROTOS", AT(TYPE_PROTOS)},
};
#undef AT

/* Is value field k (index in attr_fields) of `a` set? */
static bool
attr_field_set(const Onnx__AttributeProto *a, size_t k)
{
    switch (k) {
    case 0: return a->has_f;
    case 1: return a->has_i;
    case 2: return a->has_s;
    case 3: return a->t != NULL;
    case 4: return a->g != NULL;
    case 5: return a->sparse_tensor != NULL;
    case 6: return a->tp != NULL;
    case 7: return a->n_floats > 0;
    case 8: return a->n_ints > 0;
    case 9: return a->n_strings > 0;
    case 10: return a->n_tensors > 0;
    case 11: return a->n_graphs > 0;
    case 12: return a->n_sparse_tensors > 0;
    default: return a->n_type_protos > 0;
    }
}

/* The value fields of a typed attribute against its type: a warning (an error under
 * --strict) when a set field is not the one the type names, or more than one is set. False
 * when it was an error. (No field set is allowed: proto3 writers omit default values.) */
static bool
check_attr_fields(OnnxImp *I, const Onnx__AttributeProto *a, const char *name)
{
    const AttrField *set[2] = {NULL, NULL};
    const AttrField *own = NULL;
    size_t nset = 0;
    for (size_t k = 0; k < ARRAY_LEN(attr_fields); k++) {
        if (attr_fields[k].t == a->type)
            own = &attr_fields[k];
        if (!attr_field_set(a, k))
            continue;
        if (nset < 2)
            set[nset] = &attr_fields[k];
        nset++;
    }
    if (nset > 1)
        return onnx_node_lint(I, "attribute '%s' holds values in more than one field ('%s' "
                              "and '%s'; ONNX allows one)", name, set[0]->field, set[1]->field);
    if (nset == 1 && set[0]->t != a->type) {
        char tn[32];
        snprintf(tn, sizeof tn, "%d", (int)a->type);
        return onnx_node_lint(I, "attribute '%s' has type %s but its value is in field '%s' "
                              "(of type %s), which is not read", name, own ? own->type : tn,
                              set[0]->field, set[0]->type);
    }
    return true;
}

bool
onnx_check_attrs(OnnxImp *I)
{
    const Onnx__NodeProto *np = I->node;
    const char *op = np->op_type ? np->op_type : "";
    bool ms = np->domain && strcmp(np->domain, "com.microsoft") == 0;
    int first, last;
    const char *allowed = attrs_of(I, op, ms, &first, &last);
    if (!allowed) {
        QDQC_ASSERT(first); /* every op of the handler tables has a row */
        if (!onnx_node_lint(I, "%s is not defined at opset %lld (it is from opset %d): its "
                            "semantics are taken from opset %d", op, (long long)I->opset,
                            first, I->opset < first ? first : last))
            return false;
        return true; /* one warning for the node; its attributes are not checked further */
    }
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        const char *name = a && a->name ? a->name : "";
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = np->attribute[k] && np->attribute[k]->name &&
                  strcmp(np->attribute[k]->name, name) == 0;
        if (dup) {
            if (!onnx_node_lint(I, "attribute '%s' is given twice (the first is used)", name))
                return false;
            continue;
        }
        if (in_list(allowed, name)) {
            /* ONNX requires the type (the handlers read the field they expect) */
            if (!a->has_type || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
                if (!onnx_node_lint(I, "attribute '%s' has no type", name))
                    return false;
            } else if (!check_attr_fields(I, a, name)) {
                return false;
            }
            continue;
        }
        int from = ms ? 0 : defined_from(I, op, name);
        int until = ms ? 0 : defined_until(I, op, name);
        bool ok;
        if (from)
            ok = onnx_node_lint(I, "attribute '%s' is not defined for %s at opset %lld (it is "
                                "from opset %d)", name, op, (long long)I->opset, from);
        else if (until)
            ok = onnx_node_lint(I, "attribute '%s' is not defined for %s at opset %lld (it was "
                                "removed after opset %d)", name, op,
                                (long long)I->opset, until);
        else
            ok = onnx_node_lint(I, "attribute '%s' is not defined for %s%s", name,
                                ms ? "com.microsoft." : "", op);
        if (!ok)
            return false;
    }
    return true;
}
