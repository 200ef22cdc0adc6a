/* ref_impl.h: internals shared by the reference interpreter's per-op-family files.
 * Each family entry point computes one node whose result tensors the driver (ref.c) has
 * already allocated with the declared result types; it returns false after a node_error. */
#ifndef QDQC_REF_IMPL_H
#define QDQC_REF_IMPL_H

#include "ref/ref.h"

typedef struct RefCtx {
    Graph *g;
    RefTensor *vals; /* per ValueId */
    bool requant_fixed;
} RefCtx;

static inline const RefTensor *
ref_in(RefCtx *c, const Node *n, uint32_t i)
{
    return i < n->nin && n->in[i].id ? &c->vals[n->in[i].id] : NULL;
}

static inline RefTensor *
ref_out(RefCtx *c, const Node *n, uint32_t i)
{
    return &c->vals[n->out[i].id];
}

/* ---- kernels: one per row of ops.def's REF column (ref.c's table calls them) ---- */
bool ref_op_quantize(RefCtx *c, Node *n);          /* ref.c */
bool ref_op_dequantize(RefCtx *c, Node *n);
bool ref_op_dynamic_quantize(RefCtx *c, Node *n);
bool ref_op_shape(RefCtx *c, Node *n);
bool ref_op_constant_of_shape(RefCtx *c, Node *n);
/* ref_linear.c: conv, conv_transpose, matmul, gemm, qconv, qconv_transpose, qmatmul */
bool ref_op_linear(RefCtx *c, Node *n);
/* ref_elem.c: float elementwise binary (add, sub, mul, div, prelu) and unary activations,
 * batchnorm, softmax, layernorm, reduce_mean and qreduce_mean */
bool ref_op_binary(RefCtx *c, Node *n);
bool ref_op_unary(RefCtx *c, Node *n);
bool ref_op_batchnorm(RefCtx *c, Node *n);
bool ref_op_softmax(RefCtx *c, Node *n);
bool ref_op_layernorm(RefCtx *c, Node *n);
bool ref_op_reduce_mean(RefCtx *c, Node *n);
/* ref_pool.c: avgpool, global_avgpool, maxpool, qavgpool; resize */
bool ref_op_pool(RefCtx *c, Node *n);
bool ref_op_resize(RefCtx *c, Node *n);
/* ref_layout.c; ref_op_copy: reshape, squeeze, unsqueeze, flatten, identity */
bool ref_op_concat(RefCtx *c, Node *n);
bool ref_op_split(RefCtx *c, Node *n);
bool ref_op_slice(RefCtx *c, Node *n);
bool ref_op_pad(RefCtx *c, Node *n);
bool ref_op_transpose(RefCtx *c, Node *n);
bool ref_op_gather(RefCtx *c, Node *n);
bool ref_op_copy(RefCtx *c, Node *n);
/* ref_int.c: lut, requantize, qadd / qsub / qmul */
bool ref_op_lut(RefCtx *c, Node *n);
bool ref_op_requantize(RefCtx *c, Node *n);
bool ref_op_qbinary(RefCtx *c, Node *n);
bool ref_op_wmatmul(RefCtx *c, Node *n); /* ref_wonly.c: wmatmul (weight-only matmul) */
/* ref_math.c: exp, log, sqrt, reciprocal, neg, abs, round; pow, min, max */
bool ref_op_math_unary(RefCtx *c, Node *n);
bool ref_op_math_binary(RefCtx *c, Node *n);
/* min / max of two f32 (a NaN operand gives NaN); x^e in int64 (ref_math.c) */
float ref_minmax_f32(OpKind op, float a, float b);
int64_t ref_ipow(int64_t x, int64_t e);
bool ref_op_select(RefCtx *c, Node *n); /* ref_select.c: equal ... greater_equal, not, and,
                                           or, xor, where, expand, tile, range, reduce_sum,
                                           reduce_max, reduce_min, argmax, cast (ir/eval.c) */
bool ref_op_matmul_integer(RefCtx *c, Node *n); /* ref_minteger.c: matmul_integer */
bool ref_op_wconv(RefCtx *c, Node *n);   /* ref_wonly.c: wconv (weight-only conv) */

/* Result range [lo, hi] of an integer op: its 'clamp' attribute intersected with the result
 * type's [qmin, qmax]. False after an error if the result is not per-tensor quantized. */
bool ref_int_range(RefCtx *c, Node *n, int32_t *zy, float *sy, int32_t *lo, int32_t *hi);
/* Per-tensor scale and zero point of quantized operand i (false after an error). */
bool ref_int_operand(RefCtx *c, Node *n, uint32_t i, float *s, int32_t *z);
/* Width of operand i's storage range (qn_range_bits): 8 for i8/u8. */
int ref_int_bits(RefCtx *c, Node *n, uint32_t i);
/* True if why (a fixed-mode *_params result) is NULL; else an error at n and false. */
bool ref_fixed_ok(RefCtx *c, Node *n, const char *why);

/* ---- helpers (ref.c) ---- */
size_t ref_numel(const RefTensor *t);
double ref_get_f(const RefTensor *t, size_t i);
int64_t ref_get_i(const RefTensor *t, size_t i);
void ref_set_f(RefTensor *t, size_t i, double v);
void ref_set_i(RefTensor *t, size_t i, int64_t v);
/* The f32 data of operand i, or NULL after an error if it is not f32. */
const float *ref_f32_in(RefCtx *c, Node *n, uint32_t i);
/* The f32 data of result i, or NULL after an error if it is not f32. */
float *ref_f32_out(RefCtx *c, Node *n, uint32_t i);

/* Window geometry of conv, qconv and pools (ir_window), or false after an error. */
bool ref_window(RefCtx *c, Node *n, const Type *x, const Type *y, const int64_t *kernel,
                IrWindow *w);

/* Per-channel scale / zero point of quantization parameters (per-tensor: index ignored). */
static inline float
ref_qscale(const QParams *q, int64_t ch)
{
    return q->axis >= 0 ? q->scale[ch] : q->scale[0];
}

static inline int32_t
ref_qzp(const QParams *q, int64_t ch)
{
    return q->axis >= 0 ? q->zp[ch] : q->zp[0];
}

#endif
