/* fmath.c: the f32 approximations and the fixed summation order of the float islands
 * (fmath.h has the sequences in words; lib/codegen/lower/float_math.c emits them on vectors).
 * Every line below is the operation sequence itself: do not reorder, fuse or "simplify" an
 * expression (the code generator and the unit test's error sweep depend on it). Coefficients:
 * exp, log and tanh are Cephes' single-precision minimax polynomials (S. Moshier, expf.c,
 * logf.c, tanhf.c); the erf ones were fitted for qdqc (least squares on Chebyshev nodes
 * against mpmath, docs/numerics.md). */
#include "numerics/fmath.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "fmath.c needs FLT_EVAL_METHOD == 0"
#endif

const float qn_exp_p[QN_EXP_NP] = {
    1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
    4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f,
};

const float qn_log_p[QN_LOG_NP] = {
    7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
    -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
    2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f,
};

const float qn_tanh_p[QN_TANH_NP] = {
    -5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
    1.33314422036e-1f,  -3.33332819422e-1f,
};

/* erf(a) = a + a * P(a^2) on [0, 1) */
const float qn_erf_s[QN_ERF_NS] = {
    7.933398592285812e-05f, -0.0008034821948967874f, 0.005191216245293617f,
    -0.02685539796948433f,  0.11283625662326813f,    -0.3761262893676758f,
    0.12837916612625122f,
};

/* log(erfc(a)) = L(a) on [1, 3.92) */
const float qn_erf_l[QN_ERF_NL] = {
    -5.306706896135438e-08f, 2.819852852553595e-06f, -5.748716648668051e-05f,
    0.0006595522281713784f,  -0.004974906332790852f, 0.026899250224232674f,
    -0.11076617985963821f,   -0.6312131881713867f,   -1.130542516708374f,
    0.00038716159178875387f,
};

static uint32_t
fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float
bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float
copysign_bits(float r, float x)
{
    return bitsf((fbits(r) & 0x7fffffffu) | (fbits(x) & 0x80000000u));
}

static float
horner(const float *c, int n, float t)
{
    float p = c[0];
    for (int i = 1; i < n; i++)
        p = p * t + c[i];
    return p;
}

float
qn_expf(float x)
{
    x = x < QN_EXP_LO ? QN_EXP_LO : x;
    x = x > QN_EXP_HI ? QN_EXP_HI : x;
    float t = x * QN_LOG2E + QN_RNE_MAGIC;
    float n = t - QN_RNE_MAGIC;
    /* the integer n from t's bits (t = 1.5 * 2^23 + n exactly); a NaN x gives n = 0 */
    int32_t ni = (int32_t)(fbits(t) - fbits(QN_RNE_MAGIC));
    ni = x != x ? 0 : ni;
    float r = x - n * QN_LN2_HI;
    r = r - n * QN_LN2_LO;
    float p = horner(qn_exp_p, QN_EXP_NP, r);
    float e = p * r * r + r + 1.0f;
    int32_t h = ni >= 0 ? ni / 2 : -((1 - ni) / 2); /* floor(ni / 2) */
    float s1 = bitsf((uint32_t)(h + 127) << 23), s2 = bitsf((uint32_t)(ni - h + 127) << 23);
    return e * s1 * s2;
}

float
qn_logf(float x)
{
    if (x != x || x < 0)
        return NAN;
    if (x == 0)
        return -INFINITY;
    if (x == INFINITY)
        return INFINITY;
    int32_t adj = 0;
    if (x < FLT_MIN) {
        x = x * 8388608.0f; /* 2^23, exact */
        adj = -23;
    }
    uint32_t b = fbits(x);
    int32_t e = (int32_t)(b >> 23) - 127 + adj;
    float m = bitsf((b & 0x007fffffu) | 0x3f800000u);
    float f;
    if (m > QN_SQRT2) {
        f = m * 0.5f - 1.0f;
        e = e + 1;
    } else {
        f = m - 1.0f;
    }
    float fe = (float)e;
    float z = f * f;
    float p = horner(qn_log_p, QN_LOG_NP, f);
    float y = p * f * z;
    y = y + fe * QN_LN2_LO;
    y = y + -0.5f * z;
    float r = f + y;
    return r + fe * QN_LN2_HI;
}

float
qn_tanhf(float x)
{
    float a = fabsf(x);
    float t;
    if (a < QN_TANH_SMALL) {
        float z = a * a;
        float p = horner(qn_tanh_p, QN_TANH_NP, z);
        t = p * z * a + a;
    } else {
        float e = qn_expf(a + a);
        t = 1.0f - 2.0f / (e + 1.0f);
    }
    return copysign_bits(t, x);
}

float
qn_sigmoidf(float x)
{
    float e = qn_expf(-fabsf(x));
    return (x < 0 ? e : 1.0f) / (1.0f + e);
}

/* erf(a) (a < 1) minus a: a * P(a^2) */
static float
erf_small_p(float a)
{
    return a * horner(qn_erf_s, QN_ERF_NS, a * a);
}

float
qn_erff(float x)
{
    float a = fabsf(x);
    float t;
    if (a < 1.0f)
        t = a + erf_small_p(a);
    else if (a < QN_ERF_BIG)
        t = 1.0f - qn_expf(horner(qn_erf_l, QN_ERF_NL, a));
    else
        t = x != x ? x : 1.0f;
    return copysign_bits(t, x);
}

float
qn_gelu_erf(float x)
{
    float z = x * QN_SQRT1_2;
    float a = fabsf(z);
    float w;
    if (a < 1.0f) {
        w = 1.0f + (z + z * horner(qn_erf_s, QN_ERF_NS, z * z));
    } else if (a < QN_ERF_BIG) {
        float c = qn_expf(horner(qn_erf_l, QN_ERF_NL, a));
        w = z < 0 ? c : 2.0f - c;
    } else {
        w = z != z ? z : z < 0 ? 0.0f : 2.0f;
    }
    return 0.5f * x * w;
}

float
qn_gelu_tanh(float x)
{
    float u = x + QN_GELU_K * (x * x * x);
    return x * qn_sigmoidf(QN_GELU_2C * u);
}

/* ---- pow ---- */

static const double pexp_c[QN_PEXP_N] = {
    1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
    1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,
};

double
qn_pow_f64(double a, double y)
{
    uint64_t b;
    memcpy(&b, &a, sizeof b);
    int64_t e = (int64_t)(b >> 52) - 1023;
    uint64_t mb = (b & UINT64_C(0x000fffffffffffff)) | UINT64_C(0x3ff0000000000000);
    double m;
    memcpy(&m, &mb, sizeof m);
    if (m > QN_D_SQRT2) {
        m = m * 0.5;
        e = e + 1;
    }
    double s = (m - 1.0) / (m + 1.0);
    double s2 = s * s;
    double q = 1.0 / (2 * (QN_PLOG_N - 1) + 1);
    for (int k = QN_PLOG_N - 2; k >= 0; k--)
        q = q * s2 + 1.0 / (2 * k + 1);
    double l = (s + s) * q + (double)e * QN_D_LN2;
    double t = y * l;
    t = t < -110.0 ? -110.0 : t;
    t = t > 100.0 ? 100.0 : t;
    double tt = t * QN_D_LOG2E + QN_D_RNE_MAGIC;
    double n = tt - QN_D_RNE_MAGIC;
    uint64_t tb, kb;
    double magic = QN_D_RNE_MAGIC;
    memcpy(&tb, &tt, sizeof tb);
    memcpy(&kb, &magic, sizeof kb);
    int64_t ni = (int64_t)(tb - kb);
    double r = t - n * QN_D_LN2_HI;
    r = r - n * QN_D_LN2_LO;
    double p = pexp_c[QN_PEXP_N - 1];
    for (int k = QN_PEXP_N - 2; k >= 0; k--)
        p = p * r + pexp_c[k];
    uint64_t sb = (uint64_t)(ni + 1023) << 52;
    double sc;
    memcpy(&sc, &sb, sizeof sc);
    return p * sc;
}

const double *
qn_pexp_coeffs(void)
{
    return pexp_c;
}

float
qn_powf(float x, float y)
{
    if (y == 0)
        return 1.0f;
    if (x == 1.0f)
        return 1.0f;
    if (x != x || y != y)
        return x + y;
    if (y == 1.0f)
        return x;
    if (y == 2.0f)
        return x * x;
    if (y == 3.0f)
        return x * x * x;
    if (y == 0.5f)
        return x == -INFINITY ? INFINITY : sqrtf(x) + 0.0f;
    float ax = fabsf(x), ay = fabsf(y);
    bool yint = ay >= 8388608.0f || (float)(int32_t)y == y;
    bool yodd = yint && ay < 16777216.0f && ((int32_t)y & 1);
    bool neg = (fbits(x) >> 31) && yodd;
    if (x < 0 && !yint)
        return NAN;
    if (ay == INFINITY) {
        if (ax == 1.0f)
            return 1.0f;
        return (ax < 1.0f) == (y > 0) ? 0.0f : INFINITY;
    }
    float r;
    if (ax == 0)
        r = y > 0 ? 0.0f : INFINITY;
    else if (ax == INFINITY)
        r = y > 0 ? INFINITY : 0.0f;
    else
        r = (float)qn_pow_f64((double)ax, (double)y);
    return neg ? -r : r;
}

/* ---- summation ---- */

float
qn_sum16_tree(float *p)
{
    for (int w = QN_SUM_LANES / 2; w >= 2; w /= 2)
        for (int i = 0; i < w; i++)
            p[i] = p[i] + p[i + w];
    return p[0] + p[1];
}

float
qn_sum16(const float *x, int64_t n, int64_t stride)
{
    float p[QN_SUM_LANES] = {0};
    for (int64_t j = 0; j < n; j++)
        p[j % QN_SUM_LANES] = p[j % QN_SUM_LANES] + x[j * stride];
    return qn_sum16_tree(p);
}

float
qn_sqrtf(float x)
{
    return sqrtf(x);
}

float
qn_reciprocalf(float x)
{
    return 1.0f / x;
}

float
qn_negf(float x)
{
    return -x;
}

float
qn_absf(float x)
{
    return fabsf(x);
}

float
qn_roundf(float x)
{
    return rintf(x); /* ties to even in the default rounding mode */
}
