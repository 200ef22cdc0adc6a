/* onnx.c: the ONNX reader's entry point, imp_onnx().
 * Steps: decode the protobuf with protobuf-c under an allocator that caps the total memory
 * (so declared sizes cannot make huge allocations); check the IR version (3..10) and the
 * default-domain opset (10..21); turn initializers into constants and the remaining graph
 * inputs into typed inputs (dynamic dimensions must be fixed with --input-shape); order the
 * nodes topologically (reporting undefined inputs, values defined twice and cycles); report
 * every unsupported op in one diagnostic; translate node by node (onnx_ops.c), folding
 * constant subgraphs as they are built; finally attach quantization parameters to integer
 * values that quantize/dequantize nodes and integer ops agree on. */
#define _XOPEN_SOURCE 700
#include "onnx_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bounded protobuf-c allocator ---- */
/* The decoder's allocator: `cap` bounds what the declared sizes of a model may make it
 * allocate (exceeded: the model is refused as invalid); a real allocation failure below the
 * cap is out of memory (nomem) and is reported as such. */
typedef struct CapAlloc {
    size_t used, cap, failed; /* failed: the size of the allocation that failed */
    bool exceeded, nomem;
} CapAlloc;

#define CAP_HDR 16

static void *
cap_alloc(void *ud, size_t n)
{
    CapAlloc *c = ud;
    if (n > c->cap - c->used || n > SIZE_MAX - CAP_HDR) {
        c->exceeded = true;
        return NULL;
    }
    unsigned char *p = try_malloc(n + CAP_HDR);
    if (!p) {
        c->nomem = true;
        c->failed = n;
        return NULL;
    }
    memcpy(p, &n, sizeof n);
    c->used += n;
    return p + CAP_HDR;
}

static void
cap_free(void *ud, void *ptr)
{
    if (!ptr)
        return;
    CapAlloc *c = ud;
    unsigned char *p = (unsigned char *)ptr - CAP_HDR;
    size_t n;
    memcpy(&n, p, sizeof n);
    c->used -= n;
    free(p);
}

typedef struct Decoded {
    CapAlloc ca;
    ProtobufCAllocator alloc;
    Onnx__ModelProto *mp;
} Decoded;

static void
free_decoded(void *p)
{
    Decoded *d = p;
    if (d->mp)
        onnx__model_proto__free_unpacked(d->mp, &d->alloc);
    free(d);
}

static void
destroy_module(void *m)
{
    ir_module_destroy(m);
}

/* ---- pre-check of the wire format ----
 * protobuf-c decodes nested messages recursively and copies strings as C strings. Before
 * handing it the bytes, walk the message tree with the generated descriptors (not a decoder:
 * nothing is extracted) to bound the nesting depth, and to refuse strings with NUL bytes
 * (which C strings would silently truncate, aliasing names) or invalid UTF-8. Malformed wire
 * data stops the walk; protobuf-c then reports it. */
#define ONNX_MAX_DEPTH 64

typedef enum { WIRE_OK, WIRE_MALFORMED, WIRE_TOO_DEEP, WIRE_BAD_STRING, WIRE_TWICE } WireStatus;

/* A singular message field given twice (ValueInfoProto.type, TypeProto.Tensor.shape):
 * protobuf merges the two (the repeated fields inside them concatenate: a shape of 4
 * dimensions given twice has 8), protobuf-c keeps one. Readers disagree on what such a file
 * means, so it is refused; the first one found is named. */
typedef struct WireTwice {
    const char *msg, *field;
} WireTwice;

static bool
wire_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *i < len; shift += 7) {
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool
valid_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t k;
        if (c == 0)
            return false;
        if (c < 0x80)
            k = 0;
        else if (c >= 0xc2 && c <= 0xdf)
            k = 1;
        else if ((c & 0xf0) == 0xe0)
            k = 2;
        else if (c >= 0xf0 && c <= 0xf4)
            k = 3;
        else
            return false;
        if (k > n - i - 1)
            return false;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

static WireStatus
wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, int depth,
           WireTwice *twice)
{
    if (depth > ONNX_MAX_DEPTH)
        return WIRE_TOO_DEEP;
    uint64_t seen = 0; /* singular message fields met, by index in d->fields (the first 64) */
    size_t i = 0;
    while (i < len) {
        uint64_t tag, v;
        if (!wire_varint(p, len, &i, &tag))
            return WIRE_MALFORMED;
        switch (tag & 7) {
        case 0:
            if (!wire_varint(p, len, &i, &v))
                return WIRE_MALFORMED;
            break;
        case 1:
            if (len - i < 8)
                return WIRE_MALFORMED;
            i += 8;
            break;
        case 5:
            if (len - i < 4)
                return WIRE_MALFORMED;
            i += 4;
            break;
        case 2: {
            if (!wire_varint(p, len, &i, &v) || v > len - i)
                return WIRE_MALFORMED;
            const ProtobufCFieldDescriptor *f =
                tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
                                       : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                size_t fi = (size_t)(f - d->fields);
                if (f->label != PROTOBUF_C_LABEL_REPEATED && fi < 64) {
                    if (seen & (UINT64_C(1) << fi)) {
                        twice->msg = d->short_name;
                        twice->field = f->name;
                        return WIRE_TWICE;
                    }
                    seen |= UINT64_C(1) << fi;
                }
                WireStatus st = wire_check(f->descriptor, p + i, (size_t)v, depth + 1, twice);
                if (st != WIRE_OK)
                    return st;
            } else if (f && f->type == PROTOBUF_C_TYPE_STRING && !valid_utf8(p + i, (size_t)v)) {
                return WIRE_BAD_STRING;
            }
            i += (size_t)v;
            break;
        }
        default:
            return WIRE_MALFORMED;
        }
    }
    return WIRE_OK;
}

static Loc
file_loc(OnnxImp *I)
{
    return (Loc){.file = I->path};
}

static Loc
node_loc(OnnxImp *I, const Onnx__NodeProto *np, size_t index)
{
    Loc l = file_loc(I);
    char buf[64];
    const char *name = np->name;
    if (!name || !*name) {
        if (np->n_output && np->output[0] && *np->output[0]) {
            name = np->output[0];
        } else {
            snprintf(buf, sizeof buf, "#%zu", index);
            name = buf;
        }
    }
    l.node = intern_str(&I->m->strs, intern(&I->m->strs, name));
    l.optype = intern_str(&I->m->strs, intern(&I->m->strs, np->op_type ? np->op_type : "?"));
    return l;
}

/* ---- model-level checks ---- */
static bool
check_model(OnnxImp *I, const Onnx__ModelProto *mp)
{
    Loc l = file_loc(I);
    if (!mp->has_ir_version) {
        diag_error(I->ctx, &l, "model has no IR version (not an ONNX model?)");
        return false;
    }
    if (mp->ir_version < 3 || mp->ir_version > 10) {
        diag_error(I->ctx, &l, "ONNX IR version %lld is not supported (supported: 3 to 10)",
                   (long long)mp->ir_version);
        return false;
    }
    bool have_default = false;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        if (!o)
            continue;
        const char *d = o->domain ? o->domain : "";
        int64_t v = o->has_version ? o->version : 0;
        if (!*d || strcmp(d, "ai.onnx") == 0) {
            have_default = true;
            I->opset = v;
        } else if (strcmp(d, "com.microsoft") == 0) {
            I->ms_opset = v ? v : 1;
        }
    }
    if (!have_default) {
        diag_error(I->ctx, &l, "model imports no default-domain (ai.onnx) opset");
        return false;
    }
    if (I->opset < 10 || I->opset > 21) {
        diag_error(I->ctx, &l, "default-domain opset %lld is not supported (supported: 10 to 21)",
                   (long long)I->opset);
        return false;
    }
    if (!mp->graph) {
        diag_error(I->ctx, &l, "model has no graph");
        return false;
    }
    return true;
}

/* ---- initializers and inputs ---- */
/* Is input k of an op of this type a zero point? */
static bool
is_zero_point_input(const char *op, size_t k)
{
    if (strcmp(op, "QuantizeLinear") == 0 || strcmp(op, "DequantizeLinear") == 0)
        return k == 2;
    if (strcmp(op, "QLinearConv") == 0 || strcmp(op, "QLinearMatMul") == 0)
        return k == 2 || k == 5 || k == 7;
    if (strcmp(op, "ConvInteger") == 0 || strcmp(op, "MatMulInteger") == 0)
        return k == 2 || k == 3;
    return false;
}

/* An initializer holding a value its type cannot hold: the error names the first node that
 * reads it (and says when that is a zero point), else the initializer alone. */
static void
bad_initializer_error(OnnxImp *I, const Onnx__GraphProto *gp, const Onnx__TensorProto *tp,
                      const OnnxBadValue *bad)
{
    char text[200];
    onnx_bad_value_text(bad, text, sizeof text);
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t k = 0; k < np->n_input; k++) {
            if (!np->input[k] || strcmp(np->input[k], tp->name) != 0)
                continue;
            I->loc = node_loc(I, np, i);
            const char *op = np->op_type ? np->op_type : "";
            bool dflt = !np->domain || !*np->domain || strcmp(np->domain, "ai.onnx") == 0 ||
                        strcmp(np->domain, "com.microsoft") == 0;
            if (dflt && is_zero_point_input(op, k))
                onnx_node_error(I, "zero point '%s' (input %zu, an initializer) %s", tp->name, k,
                                text);
            else
                onnx_node_error(I, "input %zu '%s' (an initializer) %s", k, tp->name, text);
            return;
        }
    }
    Loc l = file_loc(I);
    diag_error(I->ctx, &l, "initializer '%s' %s", tp->name, text);
}

static bool
add_initializers(OnnxImp *I, const Onnx__GraphProto *gp)
{
    Graph *g = I->g;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        Loc l = file_loc(I);
        if (!tp || !tp->name || !*tp->name) {
            diag_error(I->ctx, &l, "initializer %zu has no name", i);
            return false;
        }
        char what[300];
        snprintf(what, sizeof what, "initializer '%.256s'", tp->name);
        if (onnx_lookup(I, tp->name).id) {
            diag_error(I->ctx, &l, "%s: value '%s' is defined twice", what, tp->name);
            return false;
        }
        OnnxBadValue bad;
        if (onnx_tensor_bad_value(tp, &bad)) {
            bad_initializer_error(I, gp, tp, &bad);
            return false;
        }
        Tensor *t = onnx_tensor(I, tp, what, &l);
        if (!t)
            return false;
        ValueId v = ir_add_const(g, tp->name, t, (Loc){0});
        onnx_bind_quiet(I, tp->name, v);
    }
    if (gp->n_sparse_initializer) {
        Loc l = file_loc(I);
        diag_error(I->ctx, &l, "sparse initializers are not supported");
        return false;
    }
    return true;
}

static const InputShape *
find_input_shape(OnnxImp *I, const char *name)
{
    for (uint32_t i = 0; i < I->ctx->input_shapes.len; i++)
        if (strcmp(I->ctx->input_shapes.data[i].name, name) == 0)
            return &I->ctx->input_shapes.data[i];
    return NULL;
}

static const ConstInput *
find_const_input(OnnxImp *I, const char *name)
{
    for (uint32_t i = 0; i < I->ctx->const_inputs.len; i++)
        if (strcmp(I->ctx->const_inputs.data[i].name, name) == 0)
            return &I->ctx->const_inputs.data[i];
    return NULL;
}

static void
fmt_dims(char *buf, size_t len, const int64_t *d, int rank)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < rank && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, i ? "x%lld" : "%lld", (long long)d[i]);
}

/* A shape as in the IR, "[2,3]" ("[]" for a scalar); `decl` (may be NULL) gives the declared
 * dimensions instead, '?' for a dynamic one. */
static void
fmt_shape(const Graph *g, char *buf, size_t len, const int64_t *d, int rank,
          const Onnx__TensorShapeProto *decl)
{
    size_t o = (size_t)snprintf(buf, len, "[");
    size_t n = decl ? decl->n_dim : (size_t)rank;
    for (size_t i = 0; i < n && o < len; i++) {
        const Onnx__TensorShapeProto__Dimension *dim = decl ? decl->dim[i] : NULL;
        if (decl && !(dim && dim->value_case ==
                                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE))
            o += (size_t)snprintf(buf + o, len - o, i ? ",?" : "?");
        else if (!decl && ir_dim_is_tag(d[i])) {
            char ds[96];
            o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "",
                                  ir_dim_str(g, d[i], ds, sizeof ds));
        } else
            o += (size_t)snprintf(buf + o, len - o, i ? ",%lld" : "%lld",
                                  (long long)(decl ? dim->dim_value : d[i]));
    }
    if (o < len)
        snprintf(buf + o, len - o, "]");
}

/* A graph output's declared type (element type, rank, fixed dimensions; symbolic or missing
 * ones match anything) against the type the importer inferred for value v: a model whose
 * declaration contradicts its own graph is refused rather than compiled to a header that
 * declares one shape and writes another. */
static bool
check_output_decl(OnnxImp *I, const Onnx__ValueInfoProto *vi, ValueId v)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return true;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    const Type *t = &ir_value(I->g, v)->type;
    Loc l = file_loc(I);
    if (tt->has_elem_type && tt->elem_type != 0) {
        ElemType et = onnx_elem(tt->elem_type);
        if (et != t->elem) {
            diag_error(I->ctx, &l, "graph output '%s' is declared %s but computes %s", vi->name,
                       et != ET_NONE ? elem_name(et) : onnx_dtype_name(tt->elem_type),
                       elem_name(t->elem));
            return false;
        }
    }
    const Onnx__TensorShapeProto *sp = tt->shape;
    if (!sp)
        return true;
    bool ok = sp->n_dim == (size_t)t->rank;
    for (size_t d = 0; ok && d < sp->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = sp->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            dim->dim_value != t->dims[d])
            ok = false;
    }
    if (!ok) {
        char have[256], want[256];
        fmt_shape(I->g, have, sizeof have, t->dims, t->rank, NULL);
        fmt_shape(I->g, want, sizeof want, NULL, 0, sp);
        diag_error(I->ctx, &l, "graph output '%s' is declared with shape %s but computes %s",
                   vi->name, want, have);
        return false;
    }
    return true;
}

/* ONNX requires a graph output's declaration to be complete: a tensor type with an element
 * type and a shape (whose dimensions may be symbolic). qdqc computes the output's type, so an
 * incomplete declaration is a warning (an error under --strict): one per kind of omission,
 * naming the first output and counting the others (outputs added by hand to expose
 * intermediate values often all lack their shape). */
static bool
check_outputs_complete(OnnxImp *I, const Onnx__GraphProto *gp)
{
    static const char *const what[4] = {
        "has no type", "is not declared as a tensor", "declares no element type",
        "declares no shape"};
    size_t count[4] = {0}, first[4] = {0};
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__TypeProto *tp = gp->output[i]->type;
        int k = -1;
        if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
            k = 0;
        else if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
            k = 1;
        else if (!tp->tensor_type->has_elem_type)
            k = 2;
        else if (!tp->tensor_type->shape)
            k = 3;
        if (k >= 0 && !count[k]++)
            first[k] = i;
    }
    for (int k = 0; k < 4; k++) {
        if (!count[k])
            continue;
        const Onnx__ValueInfoProto *vi = gp->output[first[k]];
        const Type *t = &ir_value(I->g, onnx_lookup(I, vi->name))->type;
        char have[256], more[64] = "";
        fmt_shape(I->g, have, sizeof have, t->dims, t->rank, NULL);
        if (count[k] > 1)
            snprintf(more, sizeof more, "; %zu other output%s too", count[k] - 1,
                     count[k] > 2 ? "s" : "");
        I->loc = file_loc(I);
        if (!onnx_node_lint(I, "graph output '%s' %s%s (it computes %s%s%s)", vi->name,
                            what[k], k == 1 ? "" : ", which ONNX requires", elem_name(t->elem),
                            have, more))
            return false;
    }
    return true;
}

/* value_info entries (declared types of intermediate values) are not needed, but one that
 * contradicts what the graph computes means the file is not what its producer thinks: a
 * warning naming the value (an error under --strict), like an attribute ONNX does not
 * define. Dimensions that are symbolic or absent match anything. */
static bool
check_value_info(OnnxImp *I, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        if (!vi || !vi->name || !*vi->name)
            continue;
        ValueId v = onnx_lookup(I, vi->name);
        const Onnx__TypeProto *tp = vi->type;
        if (!v.id || !tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !tp->tensor_type)
            continue;
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        Type t = ir_value(I->g, v)->type;
        I->loc = file_loc(I);
        if (tt->has_elem_type && tt->elem_type != 0 && onnx_elem(tt->elem_type) != t.elem) {
            ElemType et = onnx_elem(tt->elem_type);
            if (!onnx_node_lint(I, "value_info declares '%s' %s, the graph computes %s",
                                vi->name, et != ET_NONE ? elem_name(et)
                                                        : onnx_dtype_name(tt->elem_type),
                                elem_name(t.elem)))
                return false;
            continue;
        }
        const Onnx__TensorShapeProto *sp = tt->shape;
        if (!sp)
            continue;
        bool ok = sp->n_dim == (size_t)t.rank;
        for (size_t d = 0; ok && d < sp->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = sp->dim[d];
            if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                dim->dim_value != t.dims[d])
                ok = false;
        }
        if (!ok) {
            char have[256], want[256];
            fmt_shape(I->g, have, sizeof have, t.dims, t.rank, NULL);
            fmt_shape(I->g, want, sizeof want, NULL, 0, sp);
            if (!onnx_node_lint(I, "value_info declares '%s' with shape %s, the graph computes "
                                "%s", vi->name, want, have))
                return false;
        }
    }
    return true;
}

/* Graph input `name` frozen by --const-input to c: a constant of c's value, checked against
 * the declared element type et and shape sp (NULL: any). */
static bool
add_const_input(OnnxImp *I, const char *name, const ConstInput *c, ElemType et,
                const Onnx__TensorShapeProto *sp)
{
    Loc l = file_loc(I);
    if (find_input_shape(I, name)) {
        diag_error(I->ctx, &l, "graph input '%s' is given both --input-shape and --const-input",
                   name);
        return false;
    }
    ElemType ce = elem_from_name(c->elem, strlen(c->elem));
    if (ce != et) {
        diag_error(I->ctx, &l, "--const-input %s: %s has element type %s, the input is "
                   "declared %s", name, c->origin, c->elem, elem_name(et));
        return false;
    }
    bool ok = !sp || (c->rank <= IR_MAX_RANK && sp->n_dim == (size_t)c->rank);
    for (size_t d = 0; ok && sp && d < sp->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = sp->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            dim->dim_value != c->dims[d])
            ok = false;
    }
    if (ok && c->rank > IR_MAX_RANK)
        ok = false;
    if (!ok) {
        char have[256], want[256];
        fmt_shape(I->g, have, sizeof have, c->dims, c->rank, NULL);
        if (sp)
            fmt_shape(I->g, want, sizeof want, NULL, 0, sp);
        else
            snprintf(want, sizeof want, "of rank at most %d", IR_MAX_RANK);
        diag_error(I->ctx, &l, "--const-input %s: %s has shape %s, the input is declared %s",
                   name, c->origin, have, want);
        return false;
    }
    Type t = type_make(et, c->rank, c->dims);
    size_t n, bytes;
    if (!type_numel(&t, &n) || !size_mul(n, elem_size(et), &bytes) || bytes != c->nbytes ||
        bytes > ONNX_MAX_TENSOR_BYTES) {
        diag_error(I->ctx, &l, "--const-input %s: %s is too large", name, c->origin);
        return false;
    }
    Tensor *ts = ir_tensor_new(I->m, &t);
    if (bytes)
        memcpy(ts->data, c->data, bytes);
    ValueId v = ir_add_const(I->g, name, ts, (Loc){0});
    onnx_bind_quiet(I, name, v);
    return true;
}

/* A dynamic dimension of graph input `name`: the symbol of its dim_param (characters other
 * than letters, digits, '_' and '.' become '_'), or "NAME_dD" when it has none; bound by
 * --dim when the context has the name. */
static bool
symbolic_dim(OnnxImp *I, const Loc *l, const char *name, size_t d, const char *param,
             int64_t *out)
{
    char sym[128];
    if (param && *param)
        snprintf(sym, sizeof sym, "%s", param);
    else
        snprintf(sym, sizeof sym, "%s_d%zu", name, d);
    for (char *p = sym; *p; p++)
        if (!ir_dim_name_char(*p, p == sym))
            *p = p == sym && *p >= '0' && *p <= '9' ? 'd' : '_';
    if (!ir_dim_sym(I->g, sym, out)) {
        diag_error(I->ctx, l, "graph input '%s': too many symbolic dimensions", name);
        return false;
    }
    return true;
}

static bool
add_input(OnnxImp *I, const Onnx__ValueInfoProto *vi, size_t index)
{
    Loc l = file_loc(I);
    const char *name = vi->name;
    if (!name || !*name) {
        diag_error(I->ctx, &l, "graph input %zu has no name", index);
        return false;
    }
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        diag_error(I->ctx, &l, "graph input '%s' is not a tensor (sequences, maps and optionals "
                   "are not supported)", name);
        return false;
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int32_t dt = tt->has_elem_type ? tt->elem_type : 0;
    ElemType et = onnx_elem(dt);
    if (et == ET_NONE) {
        diag_error(I->ctx, &l, "graph input '%s' has element type %s (%d), which is not supported",
                   name, onnx_dtype_name(dt), (int)dt);
        return false;
    }
    const ConstInput *ci = find_const_input(I, name);
    if (ci)
        return add_const_input(I, name, ci, et, tt->shape);
    const InputShape *is = find_input_shape(I, name);
    Type t = {0};
    t.elem = et;
    if (!tt->shape) {
        if (!is) {
            diag_error(I->ctx, &l, "graph input '%s' has no shape; give it with --input-shape "
                       "%s=D0xD1x...", name, name);
            return false;
        }
        t.rank = (uint8_t)is->rank;
        memcpy(t.dims, is->dims, (size_t)is->rank * sizeof(int64_t));
    } else {
        const Onnx__TensorShapeProto *sp = tt->shape;
        if (sp->n_dim > IR_MAX_RANK) {
            diag_error(I->ctx, &l, "graph input '%s' has rank %zu, more than the maximum of %d",
                       name, sp->n_dim, IR_MAX_RANK);
            return false;
        }
        if (is && is->rank != (int)sp->n_dim) {
            diag_error(I->ctx, &l, "--input-shape %s gives %d dimensions, the input has rank %zu",
                       name, is->rank, sp->n_dim);
            return false;
        }
        t.rank = (uint8_t)sp->n_dim;
        for (size_t d = 0; d < sp->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = sp->dim[d];
            bool fixed = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            if (fixed && dim->dim_value < 0) {
                diag_error(I->ctx, &l, "graph input '%s': dimension %zu is negative (%lld)", name,
                           d, (long long)dim->dim_value);
                return false;
            }
            if (is) {
                if (fixed && dim->dim_value != is->dims[d]) {
                    diag_error(I->ctx, &l, "--input-shape %s: dimension %zu is %lld, the model "
                               "fixes it to %lld", name, d, (long long)is->dims[d],
                               (long long)dim->dim_value);
                    return false;
                }
                t.dims[d] = is->dims[d];
            } else if (fixed) {
                t.dims[d] = dim->dim_value;
            } else {
                const char *sym = dim && dim->value_case ==
                                  ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                                  dim->dim_param ? dim->dim_param : NULL;
                if (!symbolic_dim(I, &l, name, d, sym, &t.dims[d]))
                    return false;
            }
        }
    }
    size_t n, bytes;
    if (ir_type_is_static(&t) && (!type_numel(&t, &n) || !size_mul(n, elem_size(et), &bytes) ||
                                  bytes > ONNX_MAX_TENSOR_BYTES)) {
        char ds[256];
        fmt_dims(ds, sizeof ds, t.dims, t.rank);
        diag_error(I->ctx, &l, "graph input '%s': shape %s is too large", name, ds);
        return false;
    }
    ValueId v = ir_add_input(I->g, name, &t);
    onnx_bind_quiet(I, name, v);
    return true;
}

/* A graph input that is also an initializer is the initializer's constant; a declaration of
 * it that contradicts the initializer's element type or shape (symbolic or absent dimensions
 * match anything) is a warning (an error under --strict), like a contradicting value_info. */
static bool
check_input_init_decl(OnnxImp *I, const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return true;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    const Type *t = &ir_value(I->g, onnx_lookup(I, vi->name))->type;
    bool ok = !tt->has_elem_type || tt->elem_type == 0 || onnx_elem(tt->elem_type) == t->elem;
    const Onnx__TensorShapeProto *sp = tt->shape;
    if (ok && sp) {
        ok = sp->n_dim == (size_t)t->rank;
        for (size_t d = 0; ok && d < sp->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = sp->dim[d];
            if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                dim->dim_value != t->dims[d])
                ok = false;
        }
    }
    if (ok)
        return true;
    char have[256], want[256] = "";
    fmt_shape(I->g, have, sizeof have, t->dims, t->rank, NULL);
    if (sp)
        fmt_shape(I->g, want, sizeof want, NULL, 0, sp);
    I->loc = file_loc(I);
    const char *dt = "";
    if (tt->has_elem_type && tt->elem_type) {
        ElemType et = onnx_elem(tt->elem_type);
        dt = et != ET_NONE ? elem_name(et) : onnx_dtype_name(tt->elem_type);
    }
    return onnx_node_lint(I, "graph input '%s' is declared %s%s, but it is an initializer of "
                          "type %s%s", vi->name, dt, want, elem_name(t->elem), have);
}

static bool
add_inputs(OnnxImp *I, const Onnx__GraphProto *gp)
{
    uint32_t nci = I->ctx->const_inputs.len;
    bool *frozen = xcalloc(nci ? nci : 1, sizeof(bool)); /* const input k was applied */
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi)
            continue;
        if (vi->name && onnx_lookup(I, vi->name).id) {
            /* an input that is also an initializer is a constant (IR < 4 lists them both) */
            Node *d = ir_def(I->g, onnx_lookup(I, vi->name));
            if (d && d->op == OP_CONST) {
                if (!check_input_init_decl(I, vi)) {
                    free(frozen);
                    return false;
                }
                continue;
            }
            Loc l = file_loc(I);
            diag_error(I->ctx, &l, "graph input '%s' is listed twice", vi->name);
            free(frozen);
            return false;
        }
        if (!add_input(I, vi, i)) {
            free(frozen);
            return false;
        }
        for (uint32_t k = 0; k < nci && vi->name; k++)
            if (strcmp(I->ctx->const_inputs.data[k].name, vi->name) == 0)
                frozen[k] = true;
    }
    for (uint32_t k = 0; k < I->ctx->input_shapes.len; k++) {
        const char *name = I->ctx->input_shapes.data[k].name;
        ValueId v = onnx_lookup(I, name);
        if (!v.id || !ir_value(I->g, v)->is_input) {
            Loc l = file_loc(I);
            diag_error(I->ctx, &l, "--input-shape names '%s', which is not a graph input%s",
                       name, v.id ? " (it is an initializer)" : "");
            free(frozen);
            return false;
        }
    }
    /* every --const-input must have frozen a graph input */
    for (uint32_t k = 0; k < I->ctx->const_inputs.len; k++) {
        if (frozen[k])
            continue;
        const char *name = I->ctx->const_inputs.data[k].name;
        StrBuf b;
        sb_init(&b);
        uint32_t shown = 0;
        for (uint32_t i = 0; i < I->g->inputs.len; i++) {
            const char *in = ir_value_name(I->g, I->g->inputs.data[i]);
            if (shown++ < 16)
                sb_printf(&b, "%s'%s'", shown > 1 ? ", " : "", in);
        }
        if (shown > 16)
            sb_printf(&b, ", ... (%u in all)", shown);
        char *list = sb_take(&b);
        Loc l = file_loc(I);
        diag_error(I->ctx, &l, "--const-input names '%s', which is not a graph input%s%s%s", name,
                   onnx_lookup(I, name).id ? " (it is an initializer)" : "",
                   shown ? "; the graph inputs are " : "", list);
        free(list);
        free(frozen);
        return false;
    }
    free(frozen);
    return true;
}

/* ---- unsupported ops: one report ---- */
static bool
report_unsupported(OnnxImp *I, const Onnx__GraphProto *gp)
{
    typedef struct { char *op; size_t count; const char *first; } Entry;
    VEC(Entry) ents = {0};
    size_t total = 0;
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        const char *dom = np->domain ? np->domain : "";
        const char *op = np->op_type ? np->op_type : "";
        if (onnx_op_supported(I, dom, op))
            continue;
        char full[512];
        bool dflt = !*dom || strcmp(dom, "ai.onnx") == 0;
        snprintf(full, sizeof full, "%s%s%.300s", dflt ? "" : dom, dflt ? "" : ".",
                 *op ? op : "<no op_type>");
        total++;
        uint32_t k;
        for (k = 0; k < ents.len; k++)
            if (strcmp(ents.data[k].op, full) == 0)
                break;
        if (k == ents.len) {
            Loc l = node_loc(I, np, i);
            Entry e = {xstrdup(full), 0, l.node};
            vec_push(&ents, e);
        }
        ents.data[k].count++;
    }
    if (!total)
        return true;
    /* most frequent first; ties keep the order of first appearance */
    for (uint32_t i = 1; i < ents.len; i++)
        for (uint32_t j = i; j > 0 && ents.data[j].count > ents.data[j - 1].count; j--) {
            Entry t = ents.data[j];
            ents.data[j] = ents.data[j - 1];
            ents.data[j - 1] = t;
        }
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%zu node%s use%s ops qdqc does not support: ", total, total == 1 ? "" : "s",
              total == 1 ? "s" : "");
    for (uint32_t k = 0; k < ents.len; k++) {
        Entry *e = &ents.data[k];
        sb_printf(&b, "%s%s x%zu (%s'%s')", k ? ", " : "", e->op, e->count,
                  e->count > 1 ? "first: " : "", e->first);
        free(e->op);
    }
    vec_free(&ents);
    char *msg = sb_take(&b);
    Loc l = file_loc(I);
    diag_error(I->ctx, &l, "%s", msg);
    free(msg);
    return false;
}

/* ---- topological order of the ONNX nodes ---- */
static bool
order_nodes(OnnxImp *I, const Onnx__GraphProto *gp, uint32_t *order)
{
    size_t nn = gp->n_node;
    /* producer of each interned name: node index + 1 */
    uint32_t cap = I->m->strs.nstrs + 16;
    for (size_t i = 0; i < nn; i++)
        for (size_t k = 0; k < gp->node[i]->n_output; k++)
            if (gp->node[i]->output[k])
                cap++;
    uint32_t *prod = NULL;
    uint32_t *indeg = xcalloc(nn ? nn : 1, sizeof(uint32_t));
    bool ok = true;
    /* intern every output name */
    for (size_t i = 0; i < nn && ok; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t k = 0; k < np->n_output; k++)
            if (np->output[k] && *np->output[k])
                intern(&I->m->strs, np->output[k]);
    }
    cap = I->m->strs.nstrs + 1;
    prod = xcalloc(cap, sizeof(uint32_t));
    for (size_t i = 0; i < nn && ok; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t k = 0; k < np->n_output; k++) {
            const char *o = np->output[k];
            if (!o || !*o)
                continue;
            uint32_t id = intern_lookup(&I->m->strs, o);
            if (prod[id] || onnx_lookup(I, o).id) {
                I->loc = node_loc(I, np, i);
                onnx_node_error(I, "value '%s' is defined twice", o);
                ok = false;
                break;
            }
            prod[id] = (uint32_t)i + 1;
        }
    }
    /* consumer lists */
    uint32_t *cstart = NULL, *cons = NULL;
    size_t nedges = 0;
    if (ok) {
        for (size_t i = 0; i < nn && ok; i++) {
            const Onnx__NodeProto *np = gp->node[i];
            for (size_t k = 0; k < np->n_input; k++) {
                const char *in = np->input[k];
                if (!in || !*in || onnx_lookup(I, in).id)
                    continue;
                uint32_t id = intern_lookup(&I->m->strs, in);
                if (!id || !prod[id]) {
                    I->loc = node_loc(I, np, i);
                    onnx_node_error(I, "input '%s' is not defined by any node, graph input or "
                                    "initializer", in);
                    ok = false;
                    break;
                }
                indeg[i]++;
                nedges++;
            }
        }
    }
    if (ok) {
        cstart = xcalloc(nn + 1, sizeof(uint32_t));
        cons = xmalloc((nedges ? nedges : 1) * sizeof(uint32_t));
        for (size_t i = 0; i < nn; i++) {
            const Onnx__NodeProto *np = gp->node[i];
            for (size_t k = 0; k < np->n_input; k++) {
                const char *in = np->input[k];
                if (!in || !*in || onnx_lookup(I, in).id)
                    continue;
                cstart[prod[intern_lookup(&I->m->strs, in)] - 1 + 1]++;
            }
        }
        for (size_t i = 0; i < nn; i++)
            cstart[i + 1] += cstart[i];
        uint32_t *fill = xcalloc(nn + 1, sizeof(uint32_t));
        for (size_t i = 0; i < nn; i++) {
            const Onnx__NodeProto *np = gp->node[i];
            for (size_t k = 0; k < np->n_input; k++) {
                const char *in = np->input[k];
                if (!in || !*in || onnx_lookup(I, in).id)
                    continue;
                uint32_t p = prod[intern_lookup(&I->m->strs, in)] - 1;
                cons[cstart[p] + fill[p]++] = (uint32_t)i;
            }
        }
        free(fill);
        /* keeps the file's order where it is already valid */
        size_t no = ir_topo_order((uint32_t)nn, NULL, indeg, cstart, cons, order);
        if (no != nn) {
            for (size_t i = 0; i < nn; i++)
                if (indeg[i]) {
                    I->loc = node_loc(I, gp->node[i], i);
                    onnx_node_error(I, "graph has a cycle through this node");
                    break;
                }
            ok = false;
        }
    }
    free(prod);
    free(indeg);
    free(cstart);
    free(cons);
    return ok;
}

/* ONNX requires the nodes of a graph in topological order; order_nodes sorts them, so a file
 * out of order still compiles, but it is not a valid ONNX model: a warning (an error under
 * --strict) naming the first node (in the file) that comes before the producer of one of its
 * inputs. Runs after order_nodes succeeded (no cycle, every input defined, every output
 * interned) and does not depend on the order it chose. */
static bool
check_topo_order(OnnxImp *I, const Onnx__GraphProto *gp)
{
    uint32_t cap = I->m->strs.nstrs + 1;
    uint32_t *prod = xcalloc(cap, sizeof(uint32_t)); /* producer node index + 1, by name id */
    for (size_t i = 0; i < gp->n_node; i++)
        for (size_t k = 0; k < gp->node[i]->n_output; k++) {
            const char *o = gp->node[i]->output[k];
            uint32_t id = o && *o ? intern_lookup(&I->m->strs, o) : 0;
            if (id && id < cap)
                prod[id] = (uint32_t)i + 1;
        }
    bool ok = true, found = false; /* one diagnostic for the graph */
    for (size_t i = 0; i < gp->n_node && !found; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t k = 0; k < np->n_input && !found; k++) {
            const char *in = np->input[k];
            if (!in || !*in || onnx_lookup(I, in).id)
                continue;
            uint32_t id = intern_lookup(&I->m->strs, in);
            if (!id || id >= cap || prod[id] <= i + 1)
                continue;
            size_t j = prod[id] - 1;
            Loc pl = node_loc(I, gp->node[j], j);
            I->loc = node_loc(I, np, i);
            ok = onnx_node_lint(I, "nodes are not in topological order, which ONNX requires: "
                                "input '%s' is produced by node '%s' (%s), which comes later "
                                "(qdqc sorts them)", in, pl.node, pl.optype);
            found = true;
        }
    }
    free(prod);
    return ok;
}

/* ---- quantization annotation of integer values ---- */
static uint32_t
uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

static void
annotate(Graph *g, ValueId v, const QParams *q)
{
    Value *val = ir_value(g, v);
    if (val->type.elem != q->storage || val->type.q)
        return;
    if (q->axis >= 0 && (q->axis >= val->type.rank || (int64_t)q->n != val->type.dims[q->axis]))
        return;
    val->type.q = q;
    Node *d = ir_def(g, v);
    if (d && d->op == OP_CONST) {
        const Tensor *t = ir_const_of(g, v);
        Tensor *nt = arena_alloc(&g->m->arena, sizeof *nt);
        *nt = *t;
        nt->type.q = q;
        ir_set_attr_tensor(g, val->def, "value", nt);
    }
}

static bool
annotate_quant(OnnxImp *I)
{
    Graph *g = I->g;
    uint32_t nv = g->values.len;
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || !n->q)
            continue;
        QConstraint c = {n->op == OP_QUANTIZE ? n->out[0] : n->in[0], n->q, false, {i}};
        vec_push(&I->qc, c);
    }
    if (!I->qc.len)
        return true;
    uint32_t *parent = xmalloc(nv * sizeof(uint32_t));
    for (uint32_t v = 0; v < nv; v++)
        parent[v] = v;
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || !(op_info(n->op)->flags & OPF_LAYOUT))
            continue;
        uint32_t nin = n->op == OP_CONCAT ? n->nin : 1;
        uint32_t a = uf_find(parent, n->in[0].id);
        for (uint32_t k = 0; k < nin + ir_layout_nout(n); k++) {
            uint32_t v = k < nin ? n->in[k].id : n->out[k - nin].id;
            if (!v)
                continue;
            uint32_t b = uf_find(parent, v);
            if (a != b)
                parent[b] = a;
        }
    }
    const QParams **rq = xcalloc(nv, sizeof *rq);
    bool *conflict = xcalloc(nv, sizeof(bool));
    for (uint32_t k = 0; k < I->qc.len; k++) {
        QConstraint *c = &I->qc.data[k];
        uint32_t r = uf_find(parent, c->v.id);
        if (!rq[r])
            rq[r] = c->q;
        else if (!qparams_equal(rq[r], c->q))
            conflict[r] = true;
    }
    bool ok = true;
    for (uint32_t k = 0; k < I->qc.len && ok; k++) {
        QConstraint *c = &I->qc.data[k];
        if (c->hard && conflict[uf_find(parent, c->v.id)]) {
            node_error(g, ir_node(g, c->who), "operand '%s' is quantized with different "
                       "parameters elsewhere; an integer op needs one quantization",
                       ir_value_name(g, c->v));
            ok = false;
        }
    }
    if (ok) {
        for (uint32_t v = 1; v < nv; v++) {
            uint32_t r = uf_find(parent, v);
            if (rq[r] && !conflict[r] && rq[r]->axis < 0)
                annotate(g, (ValueId){v}, rq[r]);
        }
        for (uint32_t k = 0; k < I->qc.len; k++) {
            QConstraint *c = &I->qc.data[k];
            uint32_t r = uf_find(parent, c->v.id);
            if (!conflict[r] && c->q->axis >= 0)
                annotate(g, c->v, c->q);
        }
    }
    free(parent);
    free(rq);
    free(conflict);
    return ok;
}

/* ---- entry ---- */
static char *
model_dir(Module *m, const char *path)
{
    if (!path || !*path || path[0] == '<')
        return NULL;
    const char *slash = strrchr(path, '/');
    char *d = slash ? xstrndup(path, (size_t)(slash - path) + (slash == path)) : xstrdup(".");
    char *real = realpath(d, NULL);
    free(d);
    if (!real)
        return NULL;
    char *r = arena_strdup(&m->arena, real);
    free(real);
    return r;
}

static bool
import_graph(OnnxImp *I, const Onnx__GraphProto *gp)
{
    Graph *g = I->g;
    if (gp->name && *gp->name) {
        g->name = intern(&I->m->strs, gp->name);
    } else {
        /* ONNX requires the name; qdqc names the graph after the file */
        I->loc = file_loc(I);
        if (!onnx_node_lint(I, "the graph has no name, which ONNX requires"))
            return false;
    }
    if (gp->n_node > ONNX_MAX_NODES) {
        Loc l = file_loc(I);
        diag_error(I->ctx, &l, "graph has %zu nodes, more than the limit of %u", gp->n_node,
                   ONNX_MAX_NODES);
        return false;
    }
    if (!add_initializers(I, gp) || !add_inputs(I, gp) || !report_unsupported(I, gp))
        return false;
    uint32_t *order = xmalloc((gp->n_node ? gp->n_node : 1) * sizeof(uint32_t));
    bool ok = order_nodes(I, gp, order) && check_topo_order(I, gp);
    for (size_t k = 0; k < gp->n_node && ok; k++) {
        I->node = gp->node[order[k]];
        I->loc = node_loc(I, I->node, order[k]);
        ok = onnx_translate(I);
    }
    free(order);
    if (!ok)
        return false;
    if (!gp->n_output) {
        Loc l = file_loc(I);
        diag_error(I->ctx, &l, "graph has no outputs");
        return false;
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = gp->output[i] ? gp->output[i]->name : NULL;
        ValueId v = onnx_lookup(I, name);
        if (!v.id) {
            Loc l = file_loc(I);
            diag_error(I->ctx, &l, "graph output '%s' is not defined", name ? name : "");
            return false;
        }
        if (!check_output_decl(I, gp->output[i], v))
            return false;
        vec_push(&g->outputs, v);
    }
    if (!check_outputs_complete(I, gp))
        return false;
    if (!check_value_info(I, gp))
        return false;
    if (!annotate_quant(I))
        return false;
    return ir_compact(g);
}

Module *
imp_onnx(qdqc_context *ctx, const void *data, size_t len, const char *path)
{
    Loc l = {.file = path ? path : "<memory>"};
    if (!len) {
        diag_error(ctx, &l, "empty file (not an ONNX model)");
        return NULL;
    }
    WireTwice twice = {0};
    WireStatus ws = wire_check(&onnx__model_proto__descriptor, data, len, 0, &twice);
    if (ws == WIRE_TOO_DEEP) {
        diag_error(ctx, &l, "not a valid ONNX model: messages nest deeper than %d levels",
                   ONNX_MAX_DEPTH);
        return NULL;
    }
    if (ws == WIRE_BAD_STRING) {
        diag_error(ctx, &l, "not a valid ONNX model: a string field holds a NUL byte or invalid "
                   "UTF-8");
        return NULL;
    }
    if (ws == WIRE_TWICE) {
        diag_error(ctx, &l, "not a valid ONNX model: field '%s' of a %s is given twice "
                   "(protobuf merges the two, which qdqc does not do; re-save the model)",
                   twice.field, twice.msg);
        return NULL;
    }
    /* heap, not stack: an allocation failure during the import frees the decoded model
     * through free_decoded from the API's entry point (oom_defer) */
    Decoded *dec = try_calloc(1, sizeof *dec);
    if (!dec)
        oom_raise("decoding '%s'", l.file);
    dec->ca.cap = len > (SIZE_MAX - ((size_t)256 << 20)) / 2 ? SIZE_MAX
                                                              : 2 * len + ((size_t)256 << 20);
    dec->alloc = (ProtobufCAllocator){cap_alloc, cap_free, &dec->ca};
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&dec->alloc, len, data);
    if (!mp) {
        CapAlloc ca = dec->ca;
        free(dec);
        if (ca.nomem)
            oom_raise("decoding '%s' (%zu bytes): an allocation of %zu bytes failed", l.file,
                      len, ca.failed);
        if (ca.exceeded)
            diag_error(ctx, &l, "not a valid ONNX model: decoding needs more than %zu bytes "
                       "(declared sizes are too large)", ca.cap);
        else
            diag_error(ctx, &l, "not a valid ONNX model: protobuf decoding failed (truncated "
                       "file, wrong wire type or bad length)");
        return NULL;
    }
    dec->mp = mp;
    oom_defer(free_decoded, dec);
    Module *m = ir_module_create(ctx, path ? path : "<memory>");
    oom_defer(destroy_module, m);
    OnnxImp I = {0};
    I.ctx = ctx;
    I.m = m;
    I.g = &m->g;
    I.path = m->filename;
    I.dir = model_dir(m, path);
    size_t errs = ctx->nerrors;
    bool ok = check_model(&I, mp) && import_graph(&I, mp->graph);
    if (ok && ctx->nerrors != errs)
        ok = false;
    oom_undefer(m);
    oom_undefer(dec);
    free_decoded(dec);
    free(I.byname);
    vec_free(&I.qc);
    if (!ok) {
        ir_module_destroy(m);
        return NULL;
    }
    return m;
}
