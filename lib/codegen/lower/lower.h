/* lower.h: the lowering of one node to LLVM IR: the op -> emitter dispatch (lower.c) and one
 * emitter per op family (one file each in lower/). Internal to lib/codegen. */
#ifndef QDQC_CODEGEN_LOWER_LOWER_H
#define QDQC_CODEGEN_LOWER_LOWER_H

#include "codegen/irb/irb.h"

/* Whether n's node function can fail at run time (a quantize / dequantize whose scale and zero
 * point are run-time operands, checked like the reference interpreter): it then returns i32,
 * 0 or a qdqc_status, which PREFIX_run_ex returns at once (docs/abi.md); other node functions
 * return void. */
bool
cg_node_may_fail(Graph *g, const Node *n);

/* ---- per-family emitters (return false after cg_fail) ---- */
/* Scratch bytes node n needs (0 if none); -1 if the node is not supported. */
int64_t cg_node_scratch(Kb *k, Node *n);
/* Whether operand i of n is consumed at compile time (weights and bias of qconv/qmatmul). */
bool cg_operand_static(Kb *k, Node *n, uint32_t i);
bool cg_emit_node(Kb *k, Node *n, const CgNodeArgs *a);

bool cg_emit_layout(Kb *k, Node *n, const CgNodeArgs *a);   /* layout.c */
bool cg_emit_int(Kb *k, Node *n, const CgNodeArgs *a);      /* qelem.c */
bool cg_emit_pool(Kb *k, Node *n, const CgNodeArgs *a);     /* qpool.c */
bool cg_emit_linear(Kb *k, Node *n, const CgNodeArgs *a);   /* qconv.c */
int64_t cg_linear_scratch(Kb *k, Node *n);
bool cg_linear_static(Kb *k, Node *n, uint32_t i);
bool cg_emit_float(Kb *k, Node *n, const CgNodeArgs *a);    /* float_elem.c */
/* float conv, conv_transpose, matmul, gemm, avgpool, global_avgpool, resize
 * (float_linear.c) */
bool cg_emit_float_linear(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_float_linear_scratch(Kb *k, Node *n);
/* qconv_transpose, qmatmul with a run-time right operand, qreduce_mean
 * (qdirect.c) */
bool cg_emit_qdirect(Kb *k, Node *n, const CgNodeArgs *a);
/* wmatmul: float activations x constant 4- or 8-bit weights dequantized in registers
 * (lower/float_wonly.c) */
bool cg_emit_wonly(Kb *k, Node *n, const CgNodeArgs *a);
/* wconv: float activations convolved with constant 4- or 8-bit weights converted in registers
 * (lower/float_wconv.c); its scratch (an im2col of one group), -1 if unsupported */
bool cg_emit_wconv(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_wconv_scratch(Kb *k, Node *n);
int64_t cg_qdirect_scratch(Kb *k, Node *n);
/* Whether qmatmul n reads its right operand at run time (not a constant 2-D matrix). */
bool cg_qmatmul_dynamic(Kb *k, Node *n);

#endif
