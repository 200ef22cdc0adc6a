/* test_fmath.c: the float-island approximations of lib/numerics/fmath.c against correctly
 * rounded values (libm's double functions rounded once to f32; exact below 2^-149 relative
 * error except in astronomically rare double-rounding cases), special values, and the fixed
 * summation order. Default: every 389th f32 bit pattern (11 million inputs per function);
 * `--stride 1` sweeps all 2^32 (the figures of docs/numerics.md, a few minutes per function).
 * Prints the maximum error in ulp of each function and checks it against its documented bound.
 * "ulp" = |approx - exact| / ulp(correctly rounded exact), the ulp of a subnormal being
 * 2^-149. */
#include "numerics/fmath.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long passed, failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static float
bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double
ulp_of(double exact)
{
    float r = (float)exact;
    double a = fabs((double)r);
    if (a < FLT_MIN)
        return ldexp(1.0, -149);
    int e;
    frexp(a, &e);
    /* the ulp of a power of two approached from below is the smaller one */
    double u = ldexp(1.0, e - 24);
    if (a == ldexp(1.0, e - 1) && fabs(exact) < a)
        u = ldexp(1.0, e - 25);
    return u;
}

static double gelu_erf_d(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }
static double
gelu_tanh_d(double x)
{
    double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return x / (1.0 + exp(-2.0 * u));
}
static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static double pow_17_d(double x) { return pow(x, (double)1.7f); }
static float pow_1_7(float x) { return qn_powf(x, 1.7f); }

typedef struct Fn {
    const char *name;
    float (*f)(float);
    double (*d)(double);
    float lo, hi;   /* input range swept */
    double bound;   /* max ulp allowed */
    double tiny;    /* results below this magnitude count in max abs only (0: none) */
} Fn;

typedef struct Res {
    double max_ulp, max_abs;
    float at;
    long n;
} Res;

static Res
sweep(const Fn *fn, uint32_t stride)
{
    Res r = {0, 0, 0, 0};
    for (uint64_t u = 0; u <= 0xffffffffu; u += stride) {
        float x = bitsf((uint32_t)u);
        if (!(x >= fn->lo && x <= fn->hi))
            continue;
        double ex = fn->d((double)x);
        float got = fn->f(x);
        if (isnan(ex) || isinf((float)ex)) {
            if (!(isnan(ex) ? isnan(got) : got == (float)ex))
                r.max_ulp = INFINITY, r.at = x;
            continue;
        }
        double err = fabs((double)got - ex);
        r.n++;
        if (err > r.max_abs)
            r.max_abs = err;
        if (fabs(ex) < fn->tiny)
            continue;
        double ulp = err / ulp_of(ex);
        if (ulp > r.max_ulp) {
            r.max_ulp = ulp;
            r.at = x;
        }
    }
    return r;
}

static void
specials(void)
{
    CHECK(qn_expf(0.0f) == 1.0f && qn_expf(-0.0f) == 1.0f, "exp(0)");
    CHECK(qn_expf(INFINITY) == INFINITY && qn_expf(-INFINITY) == 0.0f, "exp(+-inf)");
    CHECK(qn_expf(88.8f) == INFINITY && isnan(qn_expf(NAN)), "exp overflow, NaN");
    CHECK(qn_expf(-103.0f) > 0.0f && qn_expf(-103.0f) < FLT_MIN, "exp subnormal %g",
          (double)qn_expf(-103.0f));
    CHECK(qn_logf(1.0f) == 0.0f && qn_logf(0.0f) == -INFINITY, "log(1), log(0)");
    CHECK(isnan(qn_logf(-1.0f)) && qn_logf(INFINITY) == INFINITY, "log(-1), log(inf)");
    CHECK(fabsf(qn_logf(1e-45f) - logf(1e-45f)) < 1e-5f, "log(subnormal) %g",
          (double)qn_logf(1e-45f));
    CHECK(qn_tanhf(INFINITY) == 1.0f && qn_tanhf(-INFINITY) == -1.0f, "tanh(+-inf)");
    CHECK(signbit(qn_tanhf(-0.0f)) && qn_tanhf(-0.0f) == 0.0f, "tanh(-0) = -0");
    CHECK(qn_sigmoidf(-INFINITY) == 0.0f && qn_sigmoidf(INFINITY) == 1.0f, "sigmoid(+-inf)");
    CHECK(qn_sigmoidf(0.0f) == 0.5f && isnan(qn_sigmoidf(NAN)), "sigmoid(0), NaN");
    CHECK(qn_erff(INFINITY) == 1.0f && qn_erff(-INFINITY) == -1.0f && isnan(qn_erff(NAN)),
          "erf(+-inf), NaN");
    CHECK(qn_erff(5.0f) == 1.0f && signbit(qn_erff(-0.0f)), "erf(5), erf(-0)");
    CHECK(qn_gelu_erf(0.0f) == 0.0f && qn_gelu_erf(10.0f) == 10.0f, "gelu(0), gelu(10)");
    CHECK(qn_gelu_tanh(10.0f) == 10.0f && isnan(qn_gelu_erf(NAN)), "gelu_tanh(10), NaN");
    /* pow: numpy's float32 power on the special cases */
    CHECK(qn_powf(NAN, 0.0f) == 1.0f && qn_powf(1.0f, NAN) == 1.0f, "pow 1");
    CHECK(qn_powf(3.0f, 2.0f) == 9.0f && qn_powf(-2.0f, 3.0f) == -8.0f, "pow int exponents");
    CHECK(qn_powf(4.0f, 0.5f) == 2.0f && !signbit(qn_powf(-0.0f, 0.5f)), "pow sqrt");
    CHECK(isnan(qn_powf(-2.0f, 0.5f)) && isnan(qn_powf(-2.0f, 1.5f)), "pow negative base");
    CHECK(qn_powf(-2.0f, -3.0f) == -0.125f && qn_powf(-2.0f, 4.0f) == 16.0f, "pow %g",
          (double)qn_powf(-2.0f, -3.0f));
    CHECK(qn_powf(0.0f, -1.0f) == INFINITY && qn_powf(-0.0f, -1.0f) == -INFINITY, "pow 0^-1");
    CHECK(qn_powf(-0.0f, 5.0f) == 0.0f && signbit(qn_powf(-0.0f, 5.0f)), "pow -0^5");
    CHECK(qn_powf(2.0f, INFINITY) == INFINITY && qn_powf(0.5f, INFINITY) == 0.0f &&
          qn_powf(-1.0f, INFINITY) == 1.0f, "pow inf exponents");
    CHECK(qn_powf(2.0f, 10.0f) == 1024.0f && qn_powf(10.0f, -2.0f) == 0.01f &&
          qn_powf(2.0f, 200.0f) == INFINITY && qn_powf(2.0f, -200.0f) == 0.0f,
          "pow exact and range %.9g", (double)qn_powf(10.0f, -2.0f));
}

static void
sums(void)
{
    float x[103];
    for (int i = 0; i < 103; i++)
        x[i] = 1.0f / (float)(i + 1) * (i % 3 ? 1.0f : -1.0f);
    for (int n = 0; n <= 103; n++) {
        float p[16] = {0};
        for (int j = 0; j < n; j++)
            p[j % 16] += x[j];
        float q[8], r[4], s[2];
        for (int i = 0; i < 8; i++)
            q[i] = p[i] + p[i + 8];
        for (int i = 0; i < 4; i++)
            r[i] = q[i] + q[i + 4];
        for (int i = 0; i < 2; i++)
            s[i] = r[i] + r[i + 2];
        float want = s[0] + s[1];
        float got = qn_sum16(x, n, 1);
        CHECK(memcmp(&got, &want, sizeof got) == 0, "sum16 n=%d: %.9g vs %.9g", n, (double)got,
              (double)want);
    }
    float y[8] = {1, 100, 2, 200, 3, 300, 4, 400};
    CHECK(qn_sum16(y + 1, 4, 2) == 1000.0f && qn_sum16(y, 0, 1) == 0.0f, "strided, empty");
}

int
main(int argc, char **argv)
{
    uint32_t stride = 389;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--stride") == 0)
            stride = (uint32_t)strtoul(argv[i + 1], NULL, 10);
    specials();
    sums();
    const Fn fns[] = {
        {"exp", qn_expf, exp, -FLT_MAX, FLT_MAX, 2.0, 0},
        {"log", qn_logf, log, 0.0f, FLT_MAX, 2.0, 0},
        {"tanh", qn_tanhf, tanh, -FLT_MAX, FLT_MAX, 3.0, 0},
        {"sigmoid", qn_sigmoidf, sigmoid_d, -FLT_MAX, FLT_MAX, 3.0, 0},
        {"erf", qn_erff, erf, -FLT_MAX, FLT_MAX, 3.0, 0},
        {"gelu (x >= -1.41)", qn_gelu_erf, gelu_erf_d, -1.41f, FLT_MAX, 8.0, 0},
        {"gelu (|gelu| >= 2^-10)", qn_gelu_erf, gelu_erf_d, -FLT_MAX, FLT_MAX, 32.0, 0x1p-10},
        {"gelu tanh (|gelu| >= 2^-10)", qn_gelu_tanh, gelu_tanh_d, -FLT_MAX, 1e12f, 32.0, 0x1p-10},
        {"pow(x, 1.7)", pow_1_7, pow_17_d, 0.0f, FLT_MAX, 1.0, 0},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        Res r = sweep(&fns[i], stride);
        printf("%-46s inputs %10ld  max %7.3f ulp at %.9g  max abs %.3g\n", fns[i].name, r.n,
               r.max_ulp, (double)r.at, r.max_abs);
        CHECK(r.max_ulp <= fns[i].bound, "%s: %.3f ulp > %.1f", fns[i].name, r.max_ulp,
              fns[i].bound);
    }
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed != 0;
}
