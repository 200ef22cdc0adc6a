/* onnx_internal.h: state shared by the ONNX reader's files (internal to lib/import).
 *  - onnx.c        the entry point: bounded protobuf decoding, model checks, graph inputs,
 *                  initializers, node ordering, the unsupported-op report, quantization
 *                  annotation of integer values;
 *  - onnx_ops.c    per-op translation (one handler per ONNX op);
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

/* ---- onnx.c ---- */
ValueId onnx_lookup(OnnxImp *I, const char *name);
bool onnx_bind(OnnxImp *I, const char *name, ValueId v); /* false (with error) if taken */
/* An error at the current node (file: node 'name' (Op): error: ...). */
void onnx_node_error(OnnxImp *I, const char *fmt, ...) QDQC_PRINTF(2, 3);

/* ---- onnx_tensor.c ---- */
/* ONNX TensorProto.DataType -> ElemType; ET_NONE if unsupported. */
ElemType onnx_elem(int32_t dt);
const char *onnx_dtype_name(int32_t dt);
/* Convert a TensorProto (initializer, Constant value, attribute). `what` names it in errors,
 * `loc` locates them. NULL with a diagnostic on failure. */
Tensor *onnx_tensor(OnnxImp *I, const Onnx__TensorProto *tp, const char *what, const Loc *loc);

/* ---- onnx_ops.c ---- */
/* Is the op (domain, type) translated? */
bool onnx_op_supported(const OnnxImp *I, const char *domain, const char *op_type);
/* Translate I->node; false after a diagnostic. */
bool onnx_translate(OnnxImp *I);

#endif
