/* numerics.h: quantization arithmetic for qdqc (quantize, dequantize, requantize, bias rounding).
 *
 * This is the one place that defines how qdqc rounds and saturates. The folding passes, the
 * reference interpreter and the code generator all call these functions (or emit code that is
 * tested bit-exact against them), so a model gives the same integers whichever path computes it.
 * Exact definitions, with the order of every f32 operation, are in docs/numerics.md.
 *
 * Floating-point assumptions: IEEE-754 binary32/binary64, FLT_EVAL_METHOD == 0, default rounding
 * mode (round to nearest even) for the f32 products/quotients/conversions, no -ffast-math. The
 * rounding to integer itself is explicit and does not depend on the rounding mode.
 * No dependency on other qdqc code; no global state. */
#ifndef QDQC_NUMERICS_H
#define QDQC_NUMERICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- quantize / dequantize (ONNX QuantizeLinear / DequantizeLinear) ---- */

/* saturate(round_half_even(x / scale) + zp) to [qmin, qmax]; x / scale is one f32 division.
 * NaN -> zp (clamped to [qmin, qmax]); +inf -> qmax, -inf -> qmin (also for huge quotients). */
static inline int32_t qn_quantize_f32(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax);

/* (float)(q - zp) * scale: integer subtraction (exact, in int64), conversion to f32, one f32
 * multiply. Exact conversion while |q - zp| <= 2^24. */
float qn_dequantize(int32_t q, float scale, int32_t zp);

/* ---- requantize, float mode (--requant=float, default; ONNX Runtime's fused kernels) ---- */

/* mult = (sx * sw) / sy, two f32 operations in that order. */
float qn_requant_mult_f32(float sx, float sw, float sy);

/* f = (float)acc * mult; f = clamp(f, (float)(qmin - zp), (float)(qmax - zp)) in f32;
 * y = round_half_even(f) + zp (then saturated to [qmin, qmax], which only matters when the clamp
 * bounds are not exactly representable in f32, i.e. |qmin - zp| or |qmax - zp| > 2^24).
 * This is MlasRequantizeOutput's order. qmin/qmax may be a narrowed clamp (fused Relu, Clip).
 * A NaN product (only from a non-finite mult) gives zp clamped to [qmin, qmax]. */
int32_t qn_requant_float(int32_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax);

/* The same for the int64 accumulator of an op with 16-bit activations (docs/numerics.md, "The
 * accumulator"): f = (f32)acc * mult with one correctly rounded int64 -> f32 conversion, then as
 * above. Equal to qn_requant_float whenever acc fits int32. */
int32_t qn_requant_float_wide(int64_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax);

/* ---- requantize, fixed mode (--requant=fixed: integer only) ---- */

/* Real multiplier m ~= mult * 2^-shift, mult in [2^30, 2^31) (normalised), shift in [2, 62]. */
typedef struct QnFixed {
    int32_t mult;
    int32_t shift;
} QnFixed;

/* Closest (mult, shift) to m: mult = round_half_even(frac * 2^31) with m = frac * 2^e,
 * frac in [0.5, 1), shift = 31 - e (renormalised if the rounding carries to 2^31).
 * |mult * 2^-shift - m| <= 2^-(shift+1), hence relative error <= 2^-31.
 * Representable m: [2^-32, (2^31 - 1) * 2^-2] (rounded). Returns false (and leaves *out
 * untouched) if m <= 0, m is not finite, or m rounds outside that range. A multiplier that is
 * an f32 value (qn_requant_mult_f32) is always represented exactly when in range. */
bool qn_fixed_from_real(double m, QnFixed *out);

/* The exact value mult * 2^-shift (exact in double). */
double qn_fixed_to_real(QnFixed f);

/* The fixed multiplier of qconv / qconv_transpose / qmatmul requantization (--requant=fixed):
 * qn_fixed_from_real((double)sx * (double)sw / (double)sy). The product is exact in f64
 * (24 + 24 significant bits), the quotient is one correctly rounded f64 division, then
 * qn_fixed_from_real rounds it to 31 bits: relative error vs the exact sx*sw/sy at most
 * 2^-31 + 2^-53 (+ their product). Not the f32 multiplier of float mode (qn_requant_mult_f32),
 * which carries an extra f32 rounding (relative 2^-24); docs/numerics.md compares the two.
 * False (out untouched) where qn_fixed_from_real is. */
bool qn_requant_fixed_mult(float sx, float sw, float sy, QnFixed *out);

/* The per-output-channel epilogue constants of qconv / qconv_transpose / qmatmul: channel m
 * (0 <= m < nch) has the weight scale sw[m % nsw] (per-tensor weights: nsw = 1) and gets
 * mult[m] = qn_requant_mult_f32(sx, sw, sy) when mult is not NULL and
 * fix[m] = qn_requant_fixed_mult(sx, sw, sy) when fix is not NULL. Returns -1, or the first
 * channel whose fixed multiplier is not representable (channels before it are filled). */
int64_t qn_requant_channels(float sx, const float *sw, int64_t nsw, float sy, int64_t nch,
                            float *mult, QnFixed *fix);

/* Largest |v| qn_rescale accepts: 2^32 - 1 (|v * mult| < 2^63). */
#define QN_RESCALE_VMAX INT64_C(0xffffffff)

/* The rescale of every fixed-mode op: floor(v * mult / 2^shift + 1/2), exactly: one rounding,
 * ties toward +infinity. Needs |v| <= QN_RESCALE_VMAX and shift in [1, 62] (anything from
 * qn_fixed_from_real). Computed as floor((floor(v * mult / 2^(shift-1)) + 1) / 2), which equals
 * ((v * mult + 2^(shift-1)) >> shift) but never adds the rounding constant to a 63-bit
 * product. */
int64_t qn_rescale(int64_t v, QnFixed f);

/* One rounding, ties toward +infinity (TOSA tosa.rescale with double_round = false, TFLite
 * single-rounding):
 *   v = ((int64)acc * mult + 2^(shift-1)) >> shift     (arithmetic shift = floor division)
 *   y = saturate(v + zp, qmin, qmax)                   (in int64; no intermediate int32 clamp)
 * Never overflows for any int32 acc and valid f (|acc * mult| <= 2^62). */
int32_t qn_requant_fixed(int32_t acc, QnFixed f, int32_t zp, int32_t qmin, int32_t qmax);

/* qn_requant_fixed for the int64 accumulator of an op with 16-bit activations:
 *   v = floor((acc * mult + 2^(shift-1)) / 2^shift)   exactly (no int64 overflow)
 *   y = saturate(v + zp, qmin, qmax)
 * for |acc| <= QN_WIDE_ACC_MAX (an A16W8 accumulator stays below 2^49), a normalised mult in [2^30, 2^31) (qn_fixed_from_real), shift
 * in [1, 62] and a result range within [-2^31 + 2^17, 2^31 - 2^17]. Equal to qn_requant_fixed
 * whenever acc fits int32. Computed in int64 as the code generator does it (gemm/emit.c):
 *   shift >= 31: h = floor(acc / 2^31) (|h| <= 2^29), l = acc - h * 2^31 (in [0, 2^31)),
 *                v = floor((h * mult + floor((l * mult + 2^(shift-1)) / 2^31)) / 2^(shift-31));
 *   shift <= 30: acc clamped to [-(2^32 - 1), 2^32 - 1] (the multiplier is >= 1 there, so a
 *                clamped acc still gives |v| >= 2^32 - 1, which saturates the same way), then
 *                qn_rescale. */
#define QN_WIDE_ACC_MAX ((INT64_C(1) << 60) - 1)
int32_t qn_requant_fixed_wide(int64_t acc, QnFixed f, int32_t zp, int32_t qmin, int32_t qmax);

/* ---- bias ---- */

/* int32 bias for QLinearConv/QGemm-style folding, as ONNX Runtime's quantizer computes it:
 * s = sx * sw (f32 multiply); q = (double)b / (double)s (f64 divide, as ORT's base_quantizer);
 * round_half_even(q), saturated to [INT32_MIN, INT32_MAX]. NaN -> 0. */
int32_t qn_quantize_bias(float b, float sx, float sw);

/* ---- rounding helpers (qadd/qsub/qmul/requantize/avgpool) ---- */

/* Round half to even, exact, independent of the FP rounding mode. Defined for |x| < 2^31;
 * outside that, saturates to INT32_MIN/INT32_MAX, and NaN -> 0. */
int32_t qn_round_half_even_f32(float x);

/* The same for |x| < 2^63 returning int64 (saturating outside, NaN -> 0). */
static inline int64_t qn_round_half_even_f32_i64(float x);

/* Round half to even of x (double), for |x| < 2^63 (saturating outside, NaN -> 0). */
int64_t qn_round_half_even_f64(double x);

/* round_half_even(num / den) exactly, den > 0 (den <= 0 returns 0). Any int64 num. */
int64_t qn_round_div_half_even(int64_t num, int64_t den);

/* min(max(v, qmin), qmax). */
static inline int32_t qn_saturate(int64_t v, int32_t qmin, int32_t qmax);

/* Storage range of an integer type of `bits` bits: signed (bits 2..32) [-2^(b-1), 2^(b-1)-1],
 * unsigned (bits 1..31; ranges are int32) [0, 2^b-1]. `narrow` drops the lowest value:
 * [-127, 127] for signed 8 bits, [1, 255] for unsigned 8 bits (TensorFlow's narrow_range).
 * Returns false (outputs untouched) for unsupported bit widths. */
bool qn_qrange(int bits, bool is_signed, bool narrow, int32_t *qmin, int32_t *qmax);

/* ---- parameter checks (verifier) ---- */

/* NULL if (scale, zp, [qmin, qmax]) is valid, else a lowercase message, e.g.
 * "scale must be positive and finite, got 0", "zero point 300 outside [-128, 127]",
 * "empty quantization range [5, 3]". The message lives in a per-thread buffer that the next call
 * on the same thread overwrites; use qn_check_qparams_r to supply your own. */
const char *qn_check_qparams(float scale, int32_t zp, int32_t qmin, int32_t qmax);

/* Reentrant form: returns NULL if valid, else writes the message into buf (truncated to size,
 * always terminated) and returns buf. With buf == NULL or size == 0 it returns the constant
 * "invalid quantization parameters" instead. */
const char *qn_check_qparams_r(float scale, int32_t zp, int32_t qmin, int32_t qmax, char *buf,
                               size_t size);


/* ---- definitions of the inline functions above (called per element by the folding passes
 * and the reference interpreter) ---- */

static inline int32_t
qn_saturate(int64_t v, int32_t qmin, int32_t qmax)
{
    if (v < qmin)
        return qmin;
    if (v > qmax)
        return qmax;
    return (int32_t)v;
}

static inline int64_t
qn_round_half_even_f32_i64(float x)
{
    if (x != x)
        return 0;
    if (x >= 0x1p63f)
        return INT64_MAX;
    if (x < -0x1p63f)
        return INT64_MIN;
    /* From 2^23 on every f32 is an integer: the conversion is exact. */
    if (x >= 0x1p23f || x <= -0x1p23f)
        return (int64_t)x;
    /* |x| < 2^23: t = trunc(x) is exact in f32, and x - t is exact (t == 0, or t and x in the
     * same binade / within a factor 2: Sterbenz), so the comparisons below see the true
     * fractional part. No operation here is inexact, so the rounding mode is irrelevant. */
    int32_t t = (int32_t)x;
    float frac = x - (float)t;
    if (frac > 0.5f)
        return (int64_t)t + 1;
    if (frac < -0.5f)
        return (int64_t)t - 1;
    if (frac == 0.5f)
        return (int64_t)t + (t % 2 != 0 ? 1 : 0); /* x > 0: tie between t and t + 1 */
    if (frac == -0.5f)
        return (int64_t)t - (t % 2 != 0 ? 1 : 0); /* x < 0: tie between t - 1 and t */
    return t;
}

static inline int32_t
qn_quantize_f32(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax)
{
    float v = x / scale; /* ONNX: a true f32 division, not a multiply by 1/scale */
    if (v != v)
        return qn_saturate(zp, qmin, qmax);
    /* Beyond 2^40 the result saturates for any int32 zp and range: clamp so the int64 sum below
     * cannot overflow (covers +-inf too). Rounding then saturating equals ORT's clamp-then-round
     * because the bounds are integers and rounding is monotone. */
    int64_t r;
    if (v >= 0x1p40f)
        r = (int64_t)1 << 40;
    else if (v <= -0x1p40f)
        r = -((int64_t)1 << 40);
    else
        r = qn_round_half_even_f32_i64(v);
    return qn_saturate(r + zp, qmin, qmax);
}

#endif
