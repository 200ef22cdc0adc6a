/* elementwise.h: arithmetic of qdqc's integer element-wise, pooling and requantize ops
 * (qadd, qsub, qmul, qavgpool, qreduce_mean, requantize) in both requantization modes.
 *
 * Float mode (--requant=float, default): each function is the exact order of f32 operations the
 * op is defined by (ONNX Runtime's reference QLinearAdd order; the others equal the float QDQ
 * graph whenever its f32 products are exact); roundings are round half to even.
 * Fixed mode (--requant=fixed): integers only at run time. Each op is an exact integer
 * computation followed by qn_rescale (numerics.h: one rounding, ties toward +infinity) with
 * int32 multipliers and shifts derived at compile time, deterministically, by the *_params
 * functions below (f64 ratios of the f32 scales rounded by qn_fixed_from_real).
 * The code generator and the reference interpreter must match these functions bit for bit.
 * docs/numerics.md gives the definitions side by side, the error bounds and measurements.
 * [lo, hi] is the result range (storage range, or a folded Relu/Clip clamp). */
#ifndef QDQC_NUMERICS_ELEMENTWISE_H
#define QDQC_NUMERICS_ELEMENTWISE_H

#include "numerics/numerics.h"

#include <stdbool.h>
#include <stdint.h>

/* requantize: y = sat(rne((sx * (float)(x - zx)) / sy) + zy, lo, hi).
 * Equal to quantize(dequantize(x)) of ONNX: one f32 multiply, one f32 divide. */
int32_t qn_requantize(int32_t x, float sx, int32_t zx, float sy, int32_t zy, int32_t lo,
                      int32_t hi);

/* qadd: va = sa * (float)(a - za); vb = sb * (float)(b - zb);
 * y = sat(rne((va + vb) / sy) + zy, lo, hi)  (MlasQLinearAddKernelRawHelper's order). */
int32_t qn_qadd(int32_t a, float sa, int32_t za, int32_t b, float sb, int32_t zb, float sy,
                int32_t zy, int32_t lo, int32_t hi);

/* qsub: as qadd with (va - vb). */
int32_t qn_qsub(int32_t a, float sa, int32_t za, int32_t b, float sb, int32_t zb, float sy,
                int32_t zy, int32_t lo, int32_t hi);

/* qmul: y = sat(rne((va * vb) / sy) + zy, lo, hi), va and vb as in qadd. */
int32_t qn_qmul(int32_t a, float sa, int32_t za, int32_t b, float sb, int32_t zb, float sy,
                int32_t zy, int32_t lo, int32_t hi);

/* Whether the final division by sy of requantize (b unused), qadd, qsub or qmul can be a
 * multiplication by inv = 1 / sy (f32) with the same results: checked on every operand pair in
 * [amin, amax] x [bmin, bmax] (each range at most 256 values; the comparison is with the
 * functions above, so true means equal for every input the op can see). *inv is set when true.
 * A division costs several multiplications in a vector kernel; x * (1 / sy) can differ from
 * x / sy in the last bit, which changes the rounded integer only next to a tie. */
typedef enum QnElemOp { QN_REQUANTIZE, QN_QADD, QN_QSUB, QN_QMUL } QnElemOp;
bool qn_div_as_recip(QnElemOp op, float sa, int32_t za, int32_t amin, int32_t amax, float sb,
                     int32_t zb, int32_t bmin, int32_t bmax, float sy, int32_t zy, int32_t lo,
                     int32_t hi, float *inv);

/* qavgpool / qreduce_mean: sum = sum of (x - zx) over the window's counted elements (exact
 * int64; padded positions contribute 0, i.e. they hold zx), count = the divisor
 * (count_include_pad decides whether padded positions count).
 * y = sat(rne((((float)sum * sx) / (float)count) / sy) + zy, lo, hi). */
int32_t qn_qavg(int64_t sum, int64_t count, float sx, float sy, int32_t zy, int32_t lo,
                int32_t hi);

/* ---- fixed mode (--requant=fixed) ----
 * The *_params functions return NULL on success, else a constant lowercase reason (the op is
 * then refused in fixed mode, as an unrepresentable qconv multiplier is). `bits` is the width
 * of an operand's storage range: qn_range_bits(storage_min, storage_max), 8 for i8 and u8; every
 * x - zx then lies in [-(2^bits - 1), 2^bits - 1]. Scales must be positive and finite. */

/* Bit length of hi - lo (hi >= lo): 8 for [-128, 127] and [0, 255], 16 for 16-bit types. */
int qn_range_bits(int64_t lo, int64_t hi);

/* requantize: m = qn_fixed_from_real((double)sx / (double)sy);
 * y = sat(qn_rescale(x - zx, m) + zy, lo, hi). Any storage of up to 32 bits. */
const char *qn_requantize_fixed_params(float sx, float sy, QnFixed *m);
int32_t qn_requantize_fixed(int32_t x, int32_t zx, QnFixed m, int32_t zy, int32_t lo,
                            int32_t hi);

/* qadd / qsub: TFLite's / TOSA's formulation with one rounding per rescale. With
 * L = 28 - bits (bits = the wider operand, at most 16; L = 20 for 8-bit operands) the common
 * scale is sc = max(sa, sb) * 2^-L and
 *   a = qn_fixed_from_real(ldexp((double)sa / max, L))       (= sa / sc, at most 2^L)
 *   b = qn_fixed_from_real(ldexp((double)sb / max, L))
 *   y = qn_fixed_from_real(ldexp(max / (double)sy, -L))      (= sc / sy)
 *   A = qn_rescale(a_q - za, a); B = qn_rescale(b_q - zb, b)  (|A|, |B| <= 2^28; exact
 *                                                              d * 2^L for the larger scale)
 *   y_q = sat(qn_rescale(A +- B, y) + zy, lo, hi)             (|A +- B| <= 2^29) */
typedef struct QnAddFixed {
    int32_t lshift; /* L */
    QnFixed a, b, y;
} QnAddFixed;
const char *qn_qadd_fixed_params(float sa, float sb, float sy, int bits, QnAddFixed *p);
int32_t qn_qadd_fixed(int32_t a, int32_t za, int32_t b, int32_t zb, const QnAddFixed *p,
                      int32_t zy, int32_t lo, int32_t hi);
int32_t qn_qsub_fixed(int32_t a, int32_t za, int32_t b, int32_t zb, const QnAddFixed *p,
                      int32_t zy, int32_t lo, int32_t hi);

/* qmul: m = qn_fixed_from_real((double)sa * (double)sb / (double)sy) (exact product, one f64
 * division); y = sat(qn_rescale((a - za) * (b - zb), m) + zy, lo, hi). The product is exact
 * (operands of at most 16 bits: |(a - za)(b - zb)| < 2^32). */
const char *qn_qmul_fixed_params(float sa, float sb, float sy, int bits, QnFixed *m);
int32_t qn_qmul_fixed(int32_t a, int32_t za, int32_t b, int32_t zb, QnFixed m, int32_t zy,
                      int32_t lo, int32_t hi);

/* qavgpool / qreduce_mean: sum as for qn_qavg (exact), count >= 1 the divisor;
 * m = qn_fixed_from_real((double)sx / ((double)sy * (double)count));
 * y = sat(qn_rescale(sum, m) + zy, lo, hi). The params fail unless
 * count * (2^bits - 1) <= 2^32 - 1 (the sum of count operand values fits qn_rescale).
 * A window with count 0 gives sat(zy, lo, hi), as in float mode. */
const char *qn_qavg_fixed_params(float sx, float sy, int64_t count, int bits, QnFixed *m);
int32_t qn_qavg_fixed(int64_t sum, QnFixed m, int32_t zy, int32_t lo, int32_t hi);

#endif
