/* onnx_internal.h: state shared by the ONNX reader's files (internal to lib/import).
 *  - onnx.c        the entry point: bounded protobuf decoding, model checks, graph inputs,
 *                  initializers, node ordering, the unsupported-op report, quantization
 *                  annotation of integer values;
 *  - onnx_ops.c    per-op translation: the helpers below, the float compute ops and the
 *                  dispatch over the handler tables;
 *  - onnx_qops.c   the quantized ops (Q/DQ, QLinear*, *Integer, DynamicQuantizeLinear);
 *  - onnx_layout.c data movement and shape computation (Reshape, Slice, Pad, Resize, ...);
 *  - onnx_einsum.c Einsum equations as transpose / reshape / matmul;
 *  - onnx_const.c  ops imported on constants only, evaluated at import (Mod, ScatterND, Trilu);
 *  - onnx_tensor.c TensorProto -> Tensor (typed fields, raw_data, external data).
 * Decoding is done by protobuf-c code generated at build time from Debian's onnx.proto
 * (onnx.pb-c.h); nothing here decodes protobuf by hand. */
#ifndef QDQC_ONNX_INTERNAL_H
#define QDQC_ONNX_INTERNAL_H

#include "import.h"
#include "onnx.pb-c.h"

/* Limits that keep hostile files from making huge allocations or deep work. */
#define ONNX_MAX_TENSOR_BYTES ((size_t)1 << 34) /* 16 GiB per value */
#define ONNX_MAX_NODES (1u << 22)
/* The largest result an op evaluated at import on constants may have (onnx_const.c, Dropout's
 * mask); the same bound as constant folding's (fold.c). */
#define ONNX_MAX_EVAL_BYTES ((size_t)64 << 20)

/* A quantization requirement on an integer value, resolved after all nodes are built. */
typedef struct QConstraint {
    ValueId v;
    const QParams *q;
    bool hard;     /* required by an integer op (ConvInteger, MatMulInteger) */
    NodeId who;    /* the node that requires it */
} QConstraint;

typedef struct OnnxImp {
    qdqc_context *ctx;
    Module *m;
    Graph *g;
    const char *path;      /* interned file name for diagnostics */
    const char *dir;       /* folder for external data, NULL if none (arena string) */
    int64_t opset;         /* default-domain opset */
    int64_t ms_opset;      /* com.microsoft opset, 0 if not imported */
    /* ONNX value name (interned id) -> ValueId */
    ValueId *byname;
    uint32_t byname_cap;
    /* the node being translated */
    const Onnx__NodeProto *node;
    Loc loc;
    bool bad_attr;         /* an attribute of the wrong type was seen on this node */
    VEC(QConstraint) qc;
} OnnxImp;

/* ---- onnx_build.c: the helpers of the op handlers ---- */
ValueId onnx_lookup(OnnxImp *I, const char *name);
bool onnx_bind(OnnxImp *I, const char *name, ValueId v); /* false (with error) if taken */
bool onnx_bind_quiet(OnnxImp *I, const char *name, ValueId v); /* false if taken, no diagnostic */
/* An error at the current node (file: node 'name' (Op): error: ...). */
void onnx_node_error(OnnxImp *I, const char *fmt, ...) QDQC_PRINTF(2, 3);

/* ---- onnx_tensor.c ---- */
/* ONNX TensorProto.DataType -> ElemType; ET_NONE if unsupported. */
ElemType onnx_elem(int32_t dt);
const char *onnx_dtype_name(int32_t dt);
/* Convert a TensorProto (initializer, Constant value, attribute). `what` names it in errors,
 * `loc` locates them. NULL with a diagnostic on failure. */
Tensor *onnx_tensor(OnnxImp *I, const Onnx__TensorProto *tp, const char *what, const Loc *loc);
/* A value in a typed field (int32_data, uint64_data) that the tensor's element type cannot
 * hold (an i8 stored as 200): found by onnx_tensor_bad_value, which onnx_tensor refuses. */
typedef struct OnnxBadValue {
    ElemType et;
    const char *field;
    size_t index;
    int64_t value, lo, hi;
} OnnxBadValue;
bool onnx_tensor_bad_value(const Onnx__TensorProto *tp, OnnxBadValue *bad);
/* "holds 200 in int32_data[0], outside the i8 range [-128, 127]" */
void onnx_bad_value_text(const OnnxBadValue *bad, char *buf, size_t len);

/* ---- onnx_ops.c ---- */
/* Is the op (domain, type) translated? */
bool onnx_op_supported(const OnnxImp *I, const char *domain, const char *op_type);
/* Translate I->node; false after a diagnostic. */
bool onnx_translate(OnnxImp *I);

/* One op handler: translates I->node, false after a diagnostic. */
typedef bool (*OpFn)(OnnxImp *I);
/* Which operands of an op may carry symbolic dimensions (a dim_param the import keeps,
 * lib/ir/dims.c): none (an error naming the symbol, unless --dim binds it), any operand (the
 * qdqc ops it becomes type symbols: OPF_SYMDIM), or only axis 0 of input 0, the batch (OPF_SYMN). */
typedef enum { SYM_NONE, SYM_ANY, SYM_BATCH } OnnxSym;
typedef struct OnnxOpEntry {
    const char *name;
    OpFn fn;
    int min_in, max_in, max_out;
    OnnxSym sym;
} OnnxOpEntry;

/* Operand k of the current node (VNONE if absent or empty), its type, its constant value. */
static inline ValueId
IN(OnnxImp *I, size_t k)
{
    if (k >= I->node->n_input)
        return VNONE;
    return onnx_lookup(I, I->node->input[k]);
}

static inline const Type *
TY(OnnxImp *I, ValueId v)
{
    return v.id ? &ir_value(I->g, v)->type : NULL;
}

static inline const Tensor *
CIN(OnnxImp *I, size_t k)
{
    ValueId v = IN(I, k);
    return v.id ? ir_const_of(I->g, v) : NULL;
}

/* ---- onnx_build.c (continued) ---- */
/* Attributes of the current node. A present attribute of the wrong type is an error (reported
 * once, remembered in I->bad_attr so the node fails) and reads as absent. */
const Onnx__AttributeProto *onnx_attr(OnnxImp *I, const char *name);
int64_t onnx_attr_i(OnnxImp *I, const char *name, int64_t dflt);
float onnx_attr_f(OnnxImp *I, const char *name, float dflt);
/* ints attribute into out[max]: count, -1 if absent, -2 (after an error) if too long */
int onnx_attr_ints(OnnxImp *I, const char *name, int64_t *out, int max);
/* string attribute (NUL-terminated copy in the module arena) */
const char *onnx_attr_s(OnnxImp *I, const char *name, const char *dflt);

/* A node of the current ONNX node's location. */
NodeId onnx_mk(OnnxImp *I, OpKind op, uint32_t nin, const ValueId *in, uint32_t nout);
/* Type and create n's results with the ONNX node's output names, try folding, bind them.
 * `force` types results whose element type inference leaves open. */
bool onnx_emit(OnnxImp *I, NodeId nid, ElemType force);
/* The same for a one-result intermediate node named `name`; VNONE after a diagnostic. */
ValueId onnx_emit1(OnnxImp *I, NodeId nid, const char *name, ElemType force);
/* Output k's name ("" if absent); "<output 0>.<suffix>" for an intermediate value. */
const char *onnx_out_name(OnnxImp *I, size_t k);
const char *onnx_tmp_name(OnnxImp *I, const char *suffix);
ValueId onnx_const_f32(OnnxImp *I, const char *name, const float *v, int rank,
                       const int64_t *dims);
/* The error for parameter `what` (input k) that is not a constant: names the graph input and
 * suggests --const-input when it is one. */
void onnx_not_const_error(OnnxImp *I, size_t k, const char *what);
/* Input k as a constant integer vector (rank 0 or 1, i32/i64) into out[max]; false after a
 * diagnostic naming the parameter `what`. */
bool onnx_const_ints(OnnxImp *I, size_t k, const char *what, int64_t *out, int max, int *count);
/* Input k as a constant one-element tensor. */
bool onnx_const_scalar_f(OnnxImp *I, size_t k, const char *what, double *out);
bool onnx_norm_axis(OnnxImp *I, int64_t axis, int rank, int64_t *out);
/* A conv-like node (conv, qconv) with the node's strides/dilations/pads/group/auto_pad. */
NodeId onnx_build_conv(OnnxImp *I, OpKind op, ValueId x, ValueId w, ValueId b);
/* Copy strides/dilations/pads/group (+ pool attrs) onto n, resolving auto_pad against the input
 * x and kernel sizes k[ns]; false after a diagnostic. */
bool onnx_conv_attrs(OnnxImp *I, NodeId n, const Type *x, const int64_t *k, int ns, bool pool);
/* The spatial kernel sizes k[*ns] of a conv with input x and weight w; false after a diagnostic. */
bool onnx_conv_spatial(OnnxImp *I, const Type *x, const Type *w, int64_t *k, int *ns);

/* ---- onnx_ops.c (continued) ---- */
/* op with the node's first nin inputs and one result */
bool onnx_simple(OnnxImp *I, OpKind op, uint32_t nin);

/* ---- onnx_attrs.c ---- */
/* Check the current node's attributes against the table of those its op defines at the
 * imported opset: an unknown one is a warning (an error under the strict option) naming the
 * node and the attribute. False after an error. */
bool onnx_check_attrs(OnnxImp *I);
/* A problem that is a warning, or an error under the strict option (qdqc --strict), at the
 * current node. False when it was an error. */
bool onnx_node_lint(OnnxImp *I, const char *fmt, ...) QDQC_PRINTF(2, 3);

/* ---- onnx_qops.c ---- */
extern const OnnxOpEntry onnx_qop_table[];
extern const size_t onnx_qop_table_len;
/* com.microsoft ops imported as their default-domain namesakes */
bool onnx_qop_ms_alias(const char *op_type);

/* ---- onnx_layout.c ---- */
extern const OnnxOpEntry onnx_layout_table[];
extern const size_t onnx_layout_table_len;

/* ---- onnx_const.c ---- */
/* ops imported on constant inputs only, evaluated at import (Mod, ScatterND, Trilu) */
extern const OnnxOpEntry onnx_const_table[];
extern const size_t onnx_const_table_len;

/* ---- onnx_einsum.c ---- */
/* Einsum as transpose / reshape / slice (diagonals) / reduce_sum / matmul. */
bool onnx_op_einsum(OnnxImp *I);

#endif
