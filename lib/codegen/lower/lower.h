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

/* ---- per-op emitters (return false after cg_fail), named by ops.def's LOWER column ---- */
/* Scratch bytes node n needs (0 if none); -1 if the node is not supported. */
int64_t cg_node_scratch(Kb *k, Node *n);
/* Whether operand i of n is consumed at compile time (weights and bias of qconv/qmatmul). */
bool cg_operand_static(Kb *k, Node *n, uint32_t i);
bool cg_emit_node(Kb *k, Node *n, const CgNodeArgs *a);

/* layout.c: the byte moves of identity / reshape / flatten / squeeze / unsqueeze (layout_copy),
 * transpose, slice, concat, split, pad and gather */
bool cg_emit_layout_copy(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_transpose(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_slice(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_concat(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_split(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_pad(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_gather(Kb *k, Node *n, const CgNodeArgs *a);
/* qelem.c: quantize / dequantize with constant parameters, lut, and requantize / qadd / qsub /
 * qmul */
bool cg_emit_qdq_int(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_lut(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_qelem(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_pool(Kb *k, Node *n, const CgNodeArgs *a);     /* qpool.c */
bool cg_emit_linear(Kb *k, Node *n, const CgNodeArgs *a);   /* qconv.c */
int64_t cg_linear_scratch(Kb *k, Node *n);
bool cg_linear_static(Kb *k, Node *n, uint32_t i);
/* float_elem.c: add / sub / mul / div / prelu; the activations (f32 through float_math.c);
 * exp ... max (float_math.c, other types refused); batchnorm; qreduce_mean; cast; quantize /
 * dequantize with run-time scale / zero point; cg_emit_none refuses an op with no emitter */
bool cg_emit_float_binary(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_float_unary(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_float_math_op(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_batchnorm(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_qreduce_mean(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_cast(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_qdq_dynamic(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_none(Kb *k, Node *n, const CgNodeArgs *a);
/* a float element-wise chain headed by n (a->chain; plan.h) in one pass (float_chain.c) */
bool cg_emit_float_chain(Kb *k, Node *n, const CgNodeArgs *a);
/* Whether n may continue a float chain whose value so far is `from` (one of n's operands): an
 * f32 element-wise op of float_math.c or add/sub/mul/div, any other operand a constant of one
 * element or of the result's shape (float_chain.c). */
bool cg_chain_member(Kb *k, Node *n, ValueId from);
/* Whether n is an op (OP_QUANTIZE / OP_DEQUANTIZE) that can end / head a float chain: static,
 * per-tensor, 8- or 16-bit storage, its float side f32 (float_chain.c reads its q). */
bool cg_chain_qdq(Graph *g, const Node *n, OpKind op);
/* float_linear.c: plain loops in the reference's order for conv and conv_transpose (the
 * cases float_conv.c leaves), f64 matmul, avgpool and global_avgpool, 3-D or indexed maxpool,
 * resize */
bool cg_emit_conv_loops(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_convt_loops(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_matmul_loops(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_favgpool(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_maxpool3(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_resize(Kb *k, Node *n, const CgNodeArgs *a);
/* f32 matmul and gemm on the f32 GEMM kernels (float_gemm.c); _static: B (and gemm's C folded
 * into the bias) consumed at compile time */
bool cg_float_gemm_ok(Kb *k, Node *n);
bool cg_float_gemm_static(Kb *k, Node *n, uint32_t i);
bool cg_emit_float_gemm(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_float_linear_scratch(Kb *k, Node *n);
/* f32 conv / conv_transpose with constant weights on the f32 GEMM and depthwise vector kernels
 * (float_conv.c); _static: the weights are packed at compile time */
bool cg_float_conv_ok(Kb *k, Node *n);
bool cg_float_conv_static(Kb *k, Node *n, uint32_t i);
int64_t cg_float_conv_scratch(Kb *k, Node *n);
bool cg_emit_float_conv(Kb *k, Node *n, const CgNodeArgs *a);
/* qconv_transpose, qmatmul with a run-time right operand (qdirect.c) */
bool cg_emit_qdirect(Kb *k, Node *n, const CgNodeArgs *a);
/* wmatmul: float activations x constant 4- or 8-bit weights dequantized in registers
 * (lower/float_wonly.c) */
bool cg_emit_wonly(Kb *k, Node *n, const CgNodeArgs *a);
/* wconv: float activations convolved with constant 4- or 8-bit weights converted in registers
 * (lower/float_wconv.c); its scratch (an im2col of one group), -1 if unsupported */
bool cg_emit_wconv(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_wconv_scratch(Kb *k, Node *n);
/* The f32 im2col of wconv and float conv (float_wconv.c): col[(c, kh, kw)][oh, ow] of one
 * image's group (xg: its first input channel; K = Cg*KH*KW rows of P = OH*OW floats), zeros
 * where a tap falls in the padding; a parallel-for over the K rows. */
typedef struct CgIm2col {
    int64_t K, P, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
} CgIm2col;
void cg_f32_im2col(Kb *k, const CgIm2col *g, const CgNodeArgs *a, LLVMValueRef xg,
                   LLVMValueRef col);
/* The depthwise kernels' input lanes (float_wconv.c): vector j (V f32 lanes) of the output tile
 * at ow0 for the tap at kwd = kw*dw of a zero-padded row buffer rb, stride sw (1: one load; 2:
 * one load of 2V floats and the even lanes; else lane by lane). */
LLVMValueRef cg_dw_lanes(Kb *k, int64_t V, int64_t sw, LLVMValueRef rb, LLVMValueRef ow0,
                         LLVMValueRef kwd, int j);
int64_t cg_qdirect_scratch(Kb *k, Node *n);
/* dynamic_quantize, and the per-row int8 activations of wmatmul's int8-activation mode
 * (lower/dynq.c) */
bool cg_emit_dynamic_quantize(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_dynq_scratch(Kb *k, Node *n);
/* rows [0, M) of x (f32 [M, K]) to q (i8 [M, K]) and their scales (f32 [M]) */
void cg_emit_row_quant_i8(Kb *k, LLVMValueRef x, LLVMValueRef q, LLVMValueRef scales, int64_t M,
                          int64_t K, const CgNodeArgs *a);
/* wmatmul with acts="i8": per-row int8 activations and the int8 GEMM (lower/wonly_i8.c) */
bool cg_wonly_i8(Kb *k, Node *n);
bool cg_emit_wonly_i8(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_wonly_i8_scratch(Kb *k, Node *n);
/* matmul_integer: the GEMM with run-time zero point and scale of A when b is a constant
 * matrix, else exact int32 loops (lower/minteger.c) */
bool cg_emit_minteger(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_minteger_scratch(Kb *k, Node *n);
bool cg_minteger_static(Kb *k, Node *n, uint32_t i);
/* Whether qmatmul n reads its right operand at run time (not a constant 2-D matrix). */
bool cg_qmatmul_dynamic(Kb *k, Node *n);
/* equal, less, less_equal, greater, greater_equal, not, and, or, xor, where, expand, tile,
 * range (select.c) */
bool cg_emit_select(Kb *k, Node *n, const CgNodeArgs *a);
/* reduce_sum, reduce_max, reduce_min, argmax (reduce.c) */
bool cg_emit_reduce(Kb *k, Node *n, const CgNodeArgs *a);

#endif
