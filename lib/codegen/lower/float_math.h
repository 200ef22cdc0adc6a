/* float_math.h: the f32 approximations of lib/numerics/fmath.c as LLVM IR (float_math.c), on
 * a scalar f32 or a vector of f32 alike (a kernel's vector body and its scalar tail run the
 * same sequence), and the vector kernels of the float islands built on them: element-wise
 * math (float_math.c) and softmax / layernorm / reduce_mean (float_norm.c). Internal to
 * lib/codegen/lower. */
#ifndef QDQC_CODEGEN_LOWER_FLOAT_MATH_H
#define QDQC_CODEGEN_LOWER_FLOAT_MATH_H

#include "codegen/lower/lower.h"

/* c (or every lane of it) in t, a float / double type or a vector of one */
LLVMValueRef fm_const(Kb *k, LLVMTypeRef t, double c);
/* qn_expf, qn_logf, qn_tanhf, qn_sigmoidf, qn_erff, qn_gelu_erf, qn_gelu_tanh of x */
LLVMValueRef fm_exp(Kb *k, LLVMValueRef x);
LLVMValueRef fm_log(Kb *k, LLVMValueRef x);
LLVMValueRef fm_tanh(Kb *k, LLVMValueRef x);
LLVMValueRef fm_sigmoid(Kb *k, LLVMValueRef x);
LLVMValueRef fm_erf(Kb *k, LLVMValueRef x);
LLVMValueRef fm_gelu_erf(Kb *k, LLVMValueRef x);
LLVMValueRef fm_gelu_tanh(Kb *k, LLVMValueRef x);
/* qn_powf(x, y) (y of x's type) */
LLVMValueRef fm_pow(Kb *k, LLVMValueRef x, LLVMValueRef y);
/* n's function (an f32 element-wise op of the float islands, or add/sub/mul/div) of its
 * operand values v[0..n->nin) (scalars or vectors of one width) */
LLVMValueRef fm_apply(Kb *k, Node *n, LLVMValueRef *v);
/* the 16 partial sums acc[0..16/lanes) (lanes 4, 8 or 16) reduced by fmath.h's tree */
LLVMValueRef fm_sum_tree(Kb *k, LLVMValueRef *acc, unsigned lanes);

/* Whether float_math.c / float_norm.c lower n (the ops of cg_emit_float_math /
 * cg_emit_float_norm) */
bool cg_float_math_op(Kb *k, Node *n);
bool cg_emit_float_math(Kb *k, Node *n, const CgNodeArgs *a);
bool cg_emit_float_norm(Kb *k, Node *n, const CgNodeArgs *a);
/* i32 lanes of the float-island vector kernels; a parallel body with 16 lanes needs
 * 512-bit vectors enabled (cg_function_set_target) */
unsigned fm_lanes(Kb *k);

#endif
