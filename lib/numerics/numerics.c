/* numerics.c: quantization arithmetic for qdqc (quantize, dequantize, requantize, bias rounding).
 *
 * Every rounding to an integer in qdqc goes through this file so that the folding passes, the
 * reference interpreter and the generated code agree bit for bit. Float mode reproduces ONNX
 * Runtime's fused kernels (MlasRequantizeOutput); fixed mode is the integer-only single-rounding
 * rescale of TOSA/TFLite. Definitions and their justification: docs/numerics.md.
 *
 * Rounding to integer is done explicitly (truncate, then compare the exact fractional part with
 * 1/2), never with lrintf/nearbyintf or the 1.5*2^23 "magic number" add, so it does not depend on
 * the current FP rounding mode. The f32 products, quotients and int->f32 conversions do use the
 * default round-to-nearest-even mode, exactly as the ORT kernels we match. */
#include "numerics/numerics.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* f32 expressions must be evaluated in f32: with excess precision (x87, FLT_EVAL_METHOD 2) the
 * product (float)acc * mult would be rounded twice and differ from ORT near ties. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "numerics.c needs FLT_EVAL_METHOD == 0 (SSE2 / NEON float arithmetic)"
#endif

/* ---- rounding ---- */

int32_t
qn_round_half_even_f32(float x)
{
    if (x != x)
        return 0;
    if (x >= 0x1p31f)
        return INT32_MAX;
    if (x <= -0x1p31f)
        return INT32_MIN;
    /* |x| < 2^31 and f32 values >= 2^23 are integers, so the result fits in int32. */
    return (int32_t)qn_round_half_even_f32_i64(x);
}

int64_t
qn_round_half_even_f64(double x)
{
    if (x != x)
        return 0;
    if (x >= 0x1p63)
        return INT64_MAX;
    if (x < -0x1p63)
        return INT64_MIN;
    if (x >= 0x1p52 || x <= -0x1p52)
        return (int64_t)x;
    int64_t t = (int64_t)x; /* exact, see the f32 version */
    double frac = x - (double)t;
    if (frac > 0.5)
        return t + 1;
    if (frac < -0.5)
        return t - 1;
    if (frac == 0.5)
        return t + (t % 2 != 0 ? 1 : 0);
    if (frac == -0.5)
        return t - (t % 2 != 0 ? 1 : 0);
    return t;
}

int64_t
qn_round_div_half_even(int64_t num, int64_t den)
{
    if (den <= 0)
        return 0;
    /* Floor division: num = q * den + r with 0 <= r < den. C division truncates. */
    int64_t q = num / den;
    int64_t r = num % den;
    if (r < 0) {
        r += den;
        q -= 1; /* den >= 2 here, so q >= INT64_MIN / 2 */
    }
    int64_t rest = den - r; /* distance to the next multiple; compare r with den / 2 exactly */
    if (r > rest || (r == rest && q % 2 != 0))
        q += 1; /* r > 0 means den >= 2, so q <= INT64_MAX / 2 */
    return q;
}

/* ---- quantize / dequantize ---- */

float
qn_dequantize(int32_t q, float scale, int32_t zp)
{
    int64_t d = (int64_t)q - zp;
    return (float)d * scale;
}

/* ---- float requantization ---- */

float
qn_requant_mult_f32(float sx, float sw, float sy)
{
    float p = sx * sw;
    return p / sy;
}

/* The part of float requantization after the product f = (f32)acc * mult. */
static int32_t
requant_product(float f, int32_t zp, int32_t qmin, int32_t qmax)
{
    if (f != f)
        return qn_saturate(zp, qmin, qmax);
    float lo = (float)((int64_t)qmin - zp);
    float hi = (float)((int64_t)qmax - zp);
    /* max with the low bound first, then min with the high bound (MlasRequantizeOutput). */
    if (f < lo)
        f = lo;
    if (f > hi)
        f = hi;
    /* |f| <= 2^33 now, so the int64 round and the sum are exact. */
    int64_t r = qn_round_half_even_f32_i64(f);
    return qn_saturate(r + zp, qmin, qmax);
}

int32_t
qn_requant_float(int32_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    return requant_product((float)acc * mult, zp, qmin, qmax);
}

int32_t
qn_requant_float_wide(int64_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    /* one int64 -> f32 conversion, correctly rounded in the default rounding mode */
    return requant_product((float)acc * mult, zp, qmin, qmax);
}

/* ---- fixed-point requantization ---- */

bool
qn_fixed_from_real(double m, QnFixed *out)
{
    if (!(m > 0.0) || !isfinite(m))
        return false;
    int e;
    double fr = frexp(m, &e);        /* m = fr * 2^e, fr in [0.5, 1), exact */
    double s = ldexp(fr, 31);        /* [2^30, 2^31), exact */
    int64_t mult = qn_round_half_even_f64(s);
    int64_t shift = 31 - (int64_t)e;
    if (mult == ((int64_t)1 << 31)) { /* rounding carried into the next binade */
        mult = (int64_t)1 << 30;
        shift -= 1;
    }
    if (shift < 2 || shift > 62)
        return false;
    out->mult = (int32_t)mult;
    out->shift = (int32_t)shift;
    return true;
}

double
qn_fixed_to_real(QnFixed f)
{
    return ldexp((double)f.mult, -f.shift);
}

/* floor(v / 2^s) without relying on the implementation-defined >> of negative values:
 * for v < 0, floor(v / 2^s) == ~floor(~v / 2^s) with ~v = -v - 1 >= 0. */
static int64_t
floor_shift(int64_t v, int s)
{
    return v >= 0 ? v >> s : ~((~v) >> s);
}

bool
qn_requant_fixed_mult(float sx, float sw, float sy, QnFixed *out)
{
    return qn_fixed_from_real((double)sx * (double)sw / (double)sy, out);
}

int64_t
qn_requant_channels(float sx, const float *sw, int64_t nsw, float sy, int64_t nch, float *mult,
                    QnFixed *fix)
{
    for (int64_t m = 0; m < nch; m++) {
        float w = sw[m % nsw];
        if (mult)
            mult[m] = qn_requant_mult_f32(sx, w, sy);
        if (fix && !qn_requant_fixed_mult(sx, w, sy, &fix[m]))
            return m;
    }
    return -1;
}

int64_t
qn_rescale(int64_t v, QnFixed f)
{
    /* Callers guarantee |v| <= 2^32 - 1; then |v * mult| <= (2^32 - 1)(2^31 - 1) < 2^63 - 2^32
     * and the + 1 below cannot overflow either. floor((floor(x) + 1) / 2) == floor((x + 1) / 2)
     * for real x, with x = p / 2^(s-1). */
    int s = f.shift < 1 ? 1 : f.shift > 62 ? 62 : f.shift;
    if (v > QN_RESCALE_VMAX)
        v = QN_RESCALE_VMAX; /* a caller bug; saturate rather than overflow */
    if (v < -QN_RESCALE_VMAX)
        v = -QN_RESCALE_VMAX;
    int64_t p = v * (int64_t)f.mult;
    return floor_shift(floor_shift(p, s - 1) + 1, 1);
}

int32_t
qn_requant_fixed(int32_t acc, QnFixed f, int32_t zp, int32_t qmin, int32_t qmax)
{
    /* Defined for any int32 mult and shift in [1, 62]: |acc * mult| <= 2^62, plus the rounding
     * term 2^61 stays below 2^63. Other shifts are clamped (a caller bug, but no UB). */
    int s = f.shift < 1 ? 1 : f.shift > 62 ? 62 : f.shift;
    int64_t p = (int64_t)acc * f.mult;
    int64_t v = floor_shift(p + ((int64_t)1 << (s - 1)), s);
    return qn_saturate(v + zp, qmin, qmax); /* |v| <= 2^61, no overflow */
}

int32_t
qn_requant_fixed_wide(int64_t acc, QnFixed f, int32_t zp, int32_t qmin, int32_t qmax)
{
    int s = f.shift < 1 ? 1 : f.shift > 62 ? 62 : f.shift;
    if (acc > QN_WIDE_ACC_MAX)
        acc = QN_WIDE_ACC_MAX; /* a caller bug; saturate rather than overflow */
    if (acc < -QN_WIDE_ACC_MAX)
        acc = -QN_WIDE_ACC_MAX;
    int64_t v;
    if (s >= 31) {
        /* acc * mult + 2^(s-1) = h * mult * 2^31 + (l * mult + 2^(s-1)); the first term is a
         * multiple of 2^31, so floor(. / 2^31) splits, then floor(floor(x / a) / b) = floor(x / ab).
         * |h * mult| < 2^29 * 2^31, l * mult + 2^(s-1) < 2^62 + 2^61: no overflow. */
        int64_t h = floor_shift(acc, 31);
        int64_t l = acc - h * (INT64_C(1) << 31);
        int64_t t = floor_shift(l * (int64_t)f.mult + ((int64_t)1 << (s - 1)), 31);
        v = floor_shift(h * (int64_t)f.mult + t, s - 31);
    } else {
        if (acc > QN_RESCALE_VMAX)
            acc = QN_RESCALE_VMAX;
        if (acc < -QN_RESCALE_VMAX)
            acc = -QN_RESCALE_VMAX;
        v = qn_rescale(acc, (QnFixed){f.mult, s});
    }
    return qn_saturate(v + zp, qmin, qmax);
}

/* ---- bias ---- */

int32_t
qn_quantize_bias(float b, float sx, float sw)
{
    /* ORT's quantizer: bias_scale = input_scale * weight_scale with f32 numpy arrays (an f32
     * multiply), then float64(bias) / float64(bias_scale), numpy round (half to even), clip to
     * int32. The f64 quotient rounded to an integer equals the exactly rounded rational
     * b / s whenever |b / s| < 2^28 (see docs/numerics.md). */
    float s = sx * sw;
    double q = (double)b / (double)s;
    if (q != q)
        return 0;
    return qn_saturate(qn_round_half_even_f64(q), INT32_MIN, INT32_MAX);
}

/* ---- ranges and checks ---- */

bool
qn_qrange(int bits, bool is_signed, bool narrow, int32_t *qmin, int32_t *qmax)
{
    int64_t lo, hi;
    if (is_signed) {
        if (bits < 2 || bits > 32)
            return false;
        lo = -((int64_t)1 << (bits - 1));
        hi = ((int64_t)1 << (bits - 1)) - 1;
    } else {
        if (bits < 1 || bits > 31)
            return false;
        lo = 0;
        hi = ((int64_t)1 << bits) - 1;
    }
    if (narrow)
        lo += 1;
    *qmin = (int32_t)lo;
    *qmax = (int32_t)hi;
    return true;
}

/* Shortest %g form that reads back as the same f32 ("0.1", not "0.100000001"). */
static void
format_f32(char *buf, size_t size, float v)
{
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, size, "%.*g", prec, (double)v);
        if (v != v || strtof(buf, NULL) == v)
            return;
    }
}

const char *
qn_check_qparams_r(float scale, int32_t zp, int32_t qmin, int32_t qmax, char *buf, size_t size)
{
    if (!buf || size == 0) {
        bool ok = scale > 0.0f && isfinite(scale) && qmin <= qmax && zp >= qmin && zp <= qmax;
        return ok ? NULL : "invalid quantization parameters";
    }
    if (!(scale > 0.0f) || !isfinite(scale)) {
        char num[32];
        format_f32(num, sizeof num, scale);
        snprintf(buf, size, "scale must be positive and finite, got %s", num);
        return buf;
    }
    if (qmin > qmax) {
        snprintf(buf, size, "empty quantization range [%d, %d]", (int)qmin, (int)qmax);
        return buf;
    }
    if (zp < qmin || zp > qmax) {
        snprintf(buf, size, "zero point %d outside [%d, %d]", (int)zp, (int)qmin, (int)qmax);
        return buf;
    }
    return NULL;
}

const char *
qn_check_qparams(float scale, int32_t zp, int32_t qmin, int32_t qmax)
{
    static _Thread_local char buf[128];
    return qn_check_qparams_r(scale, zp, qmin, qmax, buf, sizeof buf);
}
