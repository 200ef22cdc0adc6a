/* elementwise.h: arithmetic of qdqc's integer element-wise, pooling and requantize ops
 * (qadd, qsub, qmul, qavgpool, qreduce_mean, requantize), float mode.
 * Each function is the exact order of f32 operations the op is defined by; the code generator
 * and the reference interpreter must match them bit for bit. docs/numerics-elementwise.md
 * explains the choices (ONNX Runtime's reference QLinearAdd order; the others equal the float
 * QDQ graph whenever its f32 products are exact). All roundings are round half to even; [lo, hi]
 * is the result range (storage range, or a folded Relu/Clip clamp). */
#ifndef QDQC_NUMERICS_ELEMENTWISE_H
#define QDQC_NUMERICS_ELEMENTWISE_H

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

/* qavgpool / qreduce_mean: sum = sum of (x - zx) over the window's counted elements (exact
 * int64; padded positions contribute 0, i.e. they hold zx), count = the divisor
 * (count_include_pad decides whether padded positions count).
 * y = sat(rne((((float)sum * sx) / (float)count) / sy) + zy, lo, hi). */
int32_t qn_qavg(int64_t sum, int64_t count, float sx, float sy, int32_t zy, int32_t lo,
                int32_t hi);

#endif
