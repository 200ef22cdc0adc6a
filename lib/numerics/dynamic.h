/* dynamic.h: the arithmetic of quantizing activations at run time (docs/numerics.md, "Dynamic
 * quantization"): ONNX DynamicQuantizeLinear's parameters, the f32 epilogue of
 * `matmul_integer` (ONNX Runtime's quantize_dynamic graph: MatMulInteger -> Cast -> Mul), and
 * the per-row int8 activations of wmatmul's int8-activation mode. The reference interpreter
 * calls these; the code generator emits the same f32 operations in the same order. */
#ifndef QDQC_NUMERICS_DYNAMIC_H
#define QDQC_NUMERICS_DYNAMIC_H

#include <stdbool.h>
#include <stdint.h>

/* DynamicQuantizeLinear (u8) from mn = min(0, min x) and mx = max(0, max x):
 * scale = (mx - mn) / 255 in f32, or 1 when mx == mn (every input 0: ONNX Runtime's choice;
 * ONNX's formula divides 0 by 0), zp = rne(clamp(0 - mn / scale, 0, 255)) (each an f32
 * operation). False when the scale is not positive and finite (an infinite input). */
bool qn_dynamic_qparams(float mn, float mx, float *scale, int32_t *zp);

/* matmul_integer's f32 result before its bias: (float)acc * (sa * sb), three f32 operations
 * (the int32 -> f32 conversion rounds to nearest even beyond 2^24). */
float qn_scale_acc(int32_t acc, float sa, float sb);

/* The int8-activation mode of wmatmul: row m's scale is s = amax / 127 (one f32 division;
 * amax = max |x[m, k]| over the row, NaN ignored) and x becomes
 * qn_quantize_f32(x, s > 0 ? s : 1, 0, -127, 127): symmetric, [-127, 127], NaN -> 0. */
float qn_row_scale_i8(float amax);
int32_t qn_quantize_row_i8(float x, float s);

#endif
