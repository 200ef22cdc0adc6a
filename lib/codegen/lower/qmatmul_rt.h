/* qmatmul_rt.h: qmatmul whose right operand is computed at run time (attention's Q x K^T and
 * P x V), lowered onto the GEMM kernels with B packed at run time (gemm/pack_rt.h). Internal to
 * lib/codegen. */
#ifndef QDQC_CODEGEN_LOWER_QMATMUL_RT_H
#define QDQC_CODEGEN_LOWER_QMATMUL_RT_H

#include "codegen/lower/lower.h"

/* Whether the dynamic qmatmul n (cg_qmatmul_dynamic) takes this lowering: i8/u8 operands, A per
 * tensor, B per tensor or per column, an i8/u8 per-tensor, i32 or f32 result, an i32 bias, and
 * an epilogue and shape the GEMM accepts. Never reports an error: the others stay on the direct
 * loops of qdirect.c. */
bool cg_qmatmul_rt_ok(Kb *k, Node *n);
/* Scratch bytes (the packed B and corrections of every distinct B matrix). */
int64_t cg_qmatmul_rt_scratch(Kb *k, Node *n);
bool cg_emit_qmatmul_rt(Kb *k, Node *n, const CgNodeArgs *a);

#endif
