/* fmath.h: the f32 transcendental functions and the fixed summation order of qdqc's float
 * islands. Each function is one fixed sequence of IEEE-754 binary32 operations (+, -, *, /,
 * sqrt, comparisons, selections and bit manipulation), every operation correctly rounded, no
 * FMA and no libm call; the reference interpreter calls these functions and the code generator
 * (lib/codegen/lower/float_math.c) emits the same sequence on vectors, so compiled code equals
 * the reference bit for bit on every ISA. The coefficient tables below are the only copy of the
 * constants: both sides read them. fmath.c is compiled with -ffp-contract=off (CMakeLists.txt),
 * so the C compiler cannot fuse a multiply and an add. Maximum errors (ulp against the
 * correctly rounded result, measured by test/unit/test_fmath.c): docs/numerics.md, "Float
 * islands". */
#ifndef QDQC_NUMERICS_FMATH_H
#define QDQC_NUMERICS_FMATH_H

#include <stdint.h>

/* ---- the operation sequences (x, y: f32) ----
 *
 * exp(x): x clamped to [-104, 89] (NaN stays NaN); n = rne(x * log2e) by the add and subtract
 * of 1.5 * 2^23; r = (x - n * LN2_HI) - n * LN2_LO (LN2_HI has 9 significant bits, so n * LN2_HI
 * is exact); p = EXP_P[0], p = p * r + EXP_P[i] (i = 1..5); e = ((p * r) * r + r) + 1;
 * result = (e * 2^(n >> 1)) * 2^(n - (n >> 1)) (two exact powers of two, so subnormal results
 * are rounded once and 89 overflows to +inf).
 *
 * log(x): NaN and x < 0 -> NaN, 0 -> -inf, +inf -> +inf; a subnormal x is scaled by 2^23 first;
 * x = m * 2^e with m in [1, 2) (bits); if m > sqrt(2) then f = m * 0.5 - 1, e + 1, else
 * f = m - 1 (both exact); z = f * f; p = LOG_P[0], p = p * f + LOG_P[i] (i = 1..8);
 * y = ((p * f) * z + e * LOG_LN2_LO) + (-0.5 * z); result = (f + y) + e * LOG_LN2_HI.
 *
 * tanh(x): a = |x|; small (a < 0.625): z = a * a, p = TANH_P[0], p = p * z + TANH_P[i]
 * (i = 1..4), t = ((p * z) * a) + a; large: t = 1 - 2 / (exp(a + a) + 1); result: t with
 * the sign of x (NaN -> NaN).
 *
 * sigmoid(x): e = exp(-|x|); result = (x < 0 ? e : 1) / (1 + e).
 *
 * erf(x): a = |x|; a < 1: z = a * a, p = ERF_S[0], p = p * z + ERF_S[i] (i = 1..6),
 * t = a + a * p; 1 <= a < ERF_BIG: g = ERF_L[0], g = g * a + ERF_L[i] (i = 1..9), c = exp(g)
 * (= erfc(a)), t = 1 - c; a >= ERF_BIG (or +inf): t = 1; result: t with the sign of x.
 *
 * gelu (approximate="none"): z = x * SQRT1_2; a = |z|; w = 1 + erf(z) computed without
 * cancellation: a < 1: w = 1 + (z + z * p) (p as in erf); 1 <= a < ERF_BIG: c = exp(g),
 * w = z < 0 ? c : 2 - c; a >= ERF_BIG: w = z < 0 ? 0 : 2; result = (0.5 * x) * w.
 *
 * gelu (approximate="tanh"): u = x + (GELU_K * ((x * x) * x)); v = GELU_2C * u
 * (2 * sqrt(2 / pi)); result = x * sigmoid(v), i.e. 0.5 x (1 + tanh(v / 2)) without
 * cancellation.
 *
 * pow(x, y): see qn_powf.
 *
 * Summation (softmax, layernorm, reduce_mean): element j of the sequence (j = 0, 1, ...) is
 * added to partial sum p[j mod 16], in order, each p starting at +0; then
 * p[i] += p[i + 8] (i < 8), p[i] += p[i + 4] (i < 4), p[i] += p[i + 2] (i < 2), p[0] + p[1].
 * The order does not depend on any vector width: a 4-, 8- or 16-lane kernel holds the 16
 * partial sums in 4, 2 or 1 vectors. */

#define QN_SUM_LANES 16

#define QN_EXP_LO (-104.0f)
#define QN_EXP_HI 89.0f
#define QN_LOG2E 1.44269502f
#define QN_RNE_MAGIC 12582912.0f /* 1.5 * 2^23 */
#define QN_LN2_HI 0.693359375f
#define QN_LN2_LO (-2.12194440e-4f)
#define QN_EXP_NP 6
extern const float qn_exp_p[QN_EXP_NP];

#define QN_SQRT2 1.41421356f
#define QN_LOG_NP 9
extern const float qn_log_p[QN_LOG_NP];

#define QN_TANH_SMALL 0.625f
#define QN_TANH_NP 5
extern const float qn_tanh_p[QN_TANH_NP];

#define QN_ERF_BIG 3.92f
#define QN_ERF_NS 7
extern const float qn_erf_s[QN_ERF_NS];
#define QN_ERF_NL 10
extern const float qn_erf_l[QN_ERF_NL];

#define QN_SQRT1_2 0.707106781f
#define QN_GELU_K 0.044715f
#define QN_GELU_2C 1.59576912f /* 2 * sqrt(2 / pi) */

float qn_expf(float x);
float qn_logf(float x);
float qn_tanhf(float x);
float qn_sigmoidf(float x);
float qn_erff(float x);
float qn_gelu_erf(float x);
float qn_gelu_tanh(float x);

/* pow(x, y), numpy's float32 power: y == 0 -> 1 (also for NaN x); x == 1 -> 1; NaN -> NaN;
 * y = 1, 2, 3: x, x * x, (x * x) * x exactly as written; y = 0.5: sqrt(x) + 0 (so
 * pow(-0, 0.5) = +0), except x = -inf -> +inf; otherwise the double sequence qn_pow_f64 of
 * |x| rounded once to f32, with the sign and the special cases of C's pow (x < 0 and
 * non-integer y -> NaN; x = +-0 or +-inf by the sign of y). */
float qn_powf(float x, float y);
/* The one-instruction f32 functions, named so the op registry can point at them (ops.def's
 * SCALAR column): the correctly rounded square root, 1 / x, -x, |x|, and round half to even
 * (ONNX Round; rintf in the default rounding mode). */
float qn_sqrtf(float x);
float qn_reciprocalf(float x);
float qn_negf(float x);
float qn_absf(float x);
float qn_roundf(float x);

/* exp(y * log(a)) for finite a > 0 in f64 (docs/numerics.md): log by the atanh series of
 * s = (m - 1) / (m + 1) (QN_PLOG_N terms of 1 / (2k + 1)), t = y * (e * LN2 + log m) with
 * t clamped to [-110, 100], exp by 2^n * e^r with the Taylor polynomial of QN_PEXP_N terms. */
#define QN_PLOG_N 11
#define QN_PEXP_N 14
double qn_pow_f64(double a, double y);
/* The QN_PEXP_N Taylor coefficients 1/k! of qn_pow_f64's exp (k = 0 ..). */
const double *qn_pexp_coeffs(void);

/* qn_pow_f64's f64 constants, shared with the code generator. */
#define QN_D_SQRT2 1.4142135623730951
#define QN_D_LN2 0.6931471805599453
#define QN_D_LN2_HI 6.93147180369123816490e-01
#define QN_D_LN2_LO 1.90821492927058770002e-10
#define QN_D_LOG2E 1.4426950408889634
#define QN_D_RNE_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */

/* The 16-lane fixed-order sum of n elements x[0], x[s], x[2s], ... (see above). */
float qn_sum16(const float *x, int64_t n, int64_t stride);
/* The final tree of the 16 partial sums p (p is overwritten). */
float qn_sum16_tree(float *p);

#endif
