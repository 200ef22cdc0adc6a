/* test_numerics.c: unit tests for lib/numerics against exact references.
 *
 * Every function is checked against an independent formulation: rint() in double or ORT's
 * 1.5*2^23 magic-number add for round-half-even, __int128 rational arithmetic for fixed-point
 * requantization, bias quantization and integer rounding division. Random inputs come from a
 * fixed-seed LCG, so runs are reproducible.
 *
 * Fixed-mode element-wise ops, pooling and requantize (elementwise.h) are checked against the
 * int128 evaluation of their definitions, against the exact rational value of the op (with
 * explicit ties of both signs) and against float mode.
 *
 * Usage: test_numerics                run the tests (prints "N passed, 0 failed")
 *        test_numerics --sweep N      also print fixed-vs-float statistics over N random pairs
 *                                     (conv requantization) and N/10 cases per element-wise
 *                                     op and scale kind (tables in docs/numerics.md) */
#include "numerics/elementwise.h"
#include "numerics/numerics.h"

#include <fenv.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __int128 i128;

/* The sweep classifies ties with an exact acc * mult (31 + 24 significant bits). */
_Static_assert(LDBL_MANT_DIG >= 55, "long double must hold a 55-bit product exactly");

typedef struct Tally {
    long passed;
    long failed;
} Tally;

#define CHECK(t, cond, ...)                                                                        \
    do {                                                                                           \
        if (cond) {                                                                                \
            (t)->passed++;                                                                         \
        } else {                                                                                   \
            (t)->failed++;                                                                         \
            if ((t)->failed <= 50) {                                                               \
                fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Random checks are counted as one check per loop, so that the total stays readable. */
#define CHECK_LOOP(t, bad, what)                                                                   \
    CHECK(t, (bad) == 0, "%s: %ld mismatches", what, (long)(bad))

/* ---- deterministic random numbers (64-bit LCG, high bits) ---- */

typedef struct Rng {
    uint64_t s;
} Rng;

static uint32_t
rng_u32(Rng *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 32);
}

static uint64_t
rng_u64(Rng *r)
{
    uint64_t hi = rng_u32(r);
    return (hi << 32) | rng_u32(r);
}

/* int32 with log-uniform magnitude in [0, 2^31] and random sign (reaches INT32_MIN). */
static int32_t
rng_acc(Rng *r)
{
    uint32_t k = rng_u32(r) % 32;
    int64_t mag = (int64_t)(rng_u32(r) >> 1) >> k;
    if (rng_u32(r) & 1)
        return (int32_t)(-mag - (rng_u32(r) % 64 == 0 ? 1 : 0));
    return (int32_t)mag;
}

/* Positive f32 in [2^lo, 2^hi), log-uniform exponent, random 23-bit mantissa. */
static float
rng_f32_pos(Rng *r, int lo, int hi)
{
    int e = lo + (int)(rng_u32(r) % (uint32_t)(hi - lo));
    uint32_t mant = 0x800000u | (rng_u32(r) & 0x7fffffu);
    return ldexpf((float)mant, e - 23);
}

/* ---- references ---- */

/* round half even by rint() in double (the default rounding mode); (double)x is exact. */
static int64_t
ref_rint_f32(float x)
{
    return (int64_t)rint((double)x);
}

/* ONNX Runtime's scalar MlasRequantizeOutput rounding: add 1.5*2^23, read the mantissa bits.
 * Valid for |x| <= 2^22, default rounding mode. */
static int32_t
ref_magic_round(float x)
{
    volatile float biased = x + 12582912.0f;
    float b = biased;
    uint32_t bits;
    memcpy(&bits, &b, sizeof bits);
    return (int32_t)bits - 0x4B400000;
}

/* The requant_float reference from the design brief, literally. */
static int32_t
ref_requant_float(int32_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    float f = (float)acc * mult;
    f = fminf(fmaxf(f, (float)(qmin - zp)), (float)(qmax - zp));
    return (int32_t)ref_rint_f32(f) + zp;
}

/* ORT's scalar MlasRequantizeOutput (generalised to any [qmin, qmax]). */
static int32_t
ref_requant_ort(int32_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    float f = (float)acc * mult;
    float lo = (float)(qmin - zp), hi = (float)(qmax - zp);
    f = f < lo ? lo : f; /* std::max(f, lo) */
    f = hi < f ? hi : f; /* std::min(f, hi) */
    return ref_magic_round(f) + zp;
}

static int64_t
sat64(i128 v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : (int64_t)v;
}

/* floor(num / den) and remainder in [0, den), den > 0, in int128. */
static i128
floor_div128(i128 num, i128 den, i128 *rem)
{
    i128 q = num / den, r = num % den;
    if (r < 0) {
        r += den;
        q -= 1;
    }
    *rem = r;
    return q;
}

/* Exact rational acc * mult / 2^shift rounded to nearest, ties toward +inf, + zp, saturated. */
static int32_t
ref_requant_fixed(int32_t acc, QnFixed f, int32_t zp, int32_t qmin, int32_t qmax)
{
    i128 num = (i128)acc * f.mult;
    i128 den = (i128)1 << f.shift;
    i128 rem;
    i128 q = floor_div128(num, den, &rem);
    if (2 * rem >= den) /* fraction >= 1/2 rounds up: ties go toward +inf */
        q += 1;
    return (int32_t)sat64(q + zp, qmin, qmax);
}

/* Exact rational num/den rounded half to even in int128, den > 0. */
static i128
ref_round_div128(i128 num, i128 den)
{
    i128 rem;
    i128 q = floor_div128(num, den, &rem);
    if (2 * rem > den || (2 * rem == den && (q & 1) != 0))
        q += 1;
    return q;
}

/* f32 x = M * 2^e with integer M (|M| < 2^24); returns false for 0 / non-finite. */
static int
f32_parts(float x, int64_t *m, int *e)
{
    if (x == 0.0f || !isfinite(x))
        return 0;
    int ex;
    float fr = frexpf(x, &ex);
    *m = (int64_t)ldexpf(fr, 24);
    *e = ex - 24;
    return 1;
}

/* Exact round_half_even(b / s) for f32 b, s (s the already-rounded f32 scale product),
 * saturated to int32. Returns 0 and sets *ok = 0 if the exponents are too far apart for int128. */
static int32_t
ref_quantize_bias(float b, float s, int *ok)
{
    int64_t mb, ms;
    int eb, es;
    *ok = 1;
    if (b == 0.0f)
        return 0;
    if (!f32_parts(b, &mb, &eb) || !f32_parts(s, &ms, &es)) {
        *ok = 0;
        return 0;
    }
    int d = eb - es;
    if (d > 90 || d < -90) {
        *ok = 0;
        return 0;
    }
    i128 num = mb, den = ms;
    if (den < 0) {
        den = -den;
        num = -num;
    }
    if (d >= 0)
        num *= (i128)1 << d;
    else
        den *= (i128)1 << -d;
    return (int32_t)sat64(ref_round_div128(num, den), INT32_MIN, INT32_MAX);
}

/* ---- tests ---- */

static void
test_round_half_even(Tally *t)
{
    static const struct {
        float x;
        int32_t y;
    } cases[] = {
        {0.5f, 0},
        {1.5f, 2},
        {2.5f, 2},
        {3.5f, 4},
        {-0.5f, 0},
        {-1.5f, -2},
        {-2.5f, -2},
        {-3.5f, -4},
        {0.49999997f, 0},             /* largest f32 below 0.5 */
        {0.50000006f, 1},             /* smallest f32 above 0.5 */
        {-0.50000006f, -1},
        {1.0f, 1},
        {-1.0f, -1},
        {0.0f, 0},
        {-0.0f, 0},
        {8388607.5f, 8388608},        /* last f32 with a fraction bit */
        {-8388606.5f, -8388606},
        {8388609.0f, 8388609},
        {2147483520.0f, 2147483520},  /* largest f32 below 2^31 */
        {-2147483648.0f, INT32_MIN},
        {4e9f, INT32_MAX},            /* outside the domain: saturates */
        {-4e9f, INT32_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t y = qn_round_half_even_f32(cases[i].x);
        CHECK(t, y == cases[i].y, "round(%.9g) = %d, want %d", (double)cases[i].x, y, cases[i].y);
    }
    CHECK(t, qn_round_half_even_f32(NAN) == 0, "NaN");
    CHECK(t, qn_round_half_even_f32(INFINITY) == INT32_MAX, "+inf");
    CHECK(t, qn_round_half_even_f32(-INFINITY) == INT32_MIN, "-inf");
    CHECK(t, qn_round_half_even_f32_i64(0x1p40f + 0x1p17f) == (INT64_C(1) << 40) + (1 << 17),
          "2^40");
    CHECK(t, qn_round_half_even_f64(4503599627370495.5) == 4503599627370496LL, "f64 2^52 tie");
    CHECK(t, qn_round_half_even_f64(-2.5) == -2 && qn_round_half_even_f64(2.5000000000000004) == 3,
          "f64 ties");

    /* Every f32 in [-2^22, 2^22] whose low 8 mantissa bits follow a stride, plus all halves
     * k + 0.5 for |k| < 2^22: against rint() and against ORT's magic-number add. */
    long bad_rint = 0, bad_magic = 0;
    for (uint32_t bits = 0; bits < 0x4A800000u; bits += 97) { /* 0 .. 2^22 */
        float x;
        memcpy(&x, &bits, sizeof x);
        for (int sgn = 0; sgn < 2; sgn++) {
            float v = sgn ? -x : x;
            int32_t y = qn_round_half_even_f32(v);
            bad_rint += y != ref_rint_f32(v);
            bad_magic += y != ref_magic_round(v);
        }
    }
    for (int32_t k = -(1 << 22); k < (1 << 22); k += 7) {
        float v = (float)k + 0.5f;
        int32_t y = qn_round_half_even_f32(v);
        bad_rint += y != ref_rint_f32(v);
        bad_magic += y != ref_magic_round(v);
    }
    CHECK_LOOP(t, bad_rint, "round_half_even_f32 vs rint");
    CHECK_LOOP(t, bad_magic, "round_half_even_f32 vs ORT magic-number rounding");

    /* Larger magnitudes, up to 2^31: against rint. */
    Rng r = {1};
    long bad = 0;
    for (int i = 0; i < 200000; i++) {
        float v = rng_f32_pos(&r, -3, 31) * ((rng_u32(&r) & 1) ? -1.0f : 1.0f);
        bad += qn_round_half_even_f32(v) != ref_rint_f32(v);
        double d = ldexp((double)(rng_u64(&r) >> 11), -(int)(rng_u32(&r) % 60)) *
                   ((rng_u32(&r) & 1) ? -1.0 : 1.0);
        bad += qn_round_half_even_f64(d) != (int64_t)rint(d);
    }
    CHECK_LOOP(t, bad, "round_half_even f32/f64 vs rint, random");

    /* Independent of the FP rounding mode. */
    static const int modes[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    bad = 0;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        volatile float halves[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.7f, -0.7f, 1e7f + 1.5f};
        static const int32_t want[] = {0, 2, 2, 0, -2, -2, 1, -1, 10000002};
        fesetround(modes[m]);
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            bad += qn_round_half_even_f32(halves[i]) != want[i];
        fesetround(FE_TONEAREST);
    }
    CHECK_LOOP(t, bad, "round_half_even_f32 under non-default rounding modes");
}

static void
test_round_div(Tally *t)
{
    static const struct {
        int64_t n, d, y;
    } cases[] = {
        {5, 2, 2},
        {7, 2, 4},
        {-5, 2, -2},
        {-7, 2, -4},
        {1, 3, 0},
        {2, 3, 1},
        {-2, 3, -1},
        {-1, 3, 0},
        {0, 9, 0},
        {9, 18, 0},
        {27, 18, 2},
        {-27, 18, -2},
        {45, 18, 2},
        {INT64_MIN, 1, INT64_MIN},
        {INT64_MAX, 1, INT64_MAX},
        {INT64_MAX, INT64_MAX, 1},
        {INT64_MIN, INT64_MAX, -1},
        {INT64_MAX, 2, INT64_C(4611686018427387904)},
        {INT64_MIN + 1, 2, INT64_C(-4611686018427387904)},
        {INT64_MIN, 2, INT64_C(-4611686018427387904)},
        {5, 0, 0},
        {5, -2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t y = qn_round_div_half_even(cases[i].n, cases[i].d);
        CHECK(t, y == cases[i].y,
              "round_div(%" PRId64 ", %" PRId64 ") = %" PRId64 ", want %" PRId64, cases[i].n,
              cases[i].d, y, cases[i].y);
    }
    Rng r = {2};
    long bad = 0;
    for (int i = 0; i < 500000; i++) {
        int64_t n = (int64_t)rng_u64(&r) >> (rng_u32(&r) % 64);
        int64_t d = (int64_t)(rng_u64(&r) >> 1) >> (rng_u32(&r) % 63);
        if (i % 4 == 0) /* pool windows: small den, exact ties frequent */
            d = 1 + rng_u32(&r) % 64, n = (int64_t)(rng_u32(&r) % 20000) - 10000;
        if (d <= 0)
            d = 1;
        bad += qn_round_div_half_even(n, d) != (int64_t)ref_round_div128(n, d);
    }
    CHECK_LOOP(t, bad, "round_div_half_even vs int128");
}

static void
test_quantize(Tally *t)
{
    /* Ties with scale 0.5: x / scale is exactly k + 0.5. */
    static const struct {
        float x, scale;
        int32_t zp, qmin, qmax, y;
    } cases[] = {
        {0.25f, 0.5f, 0, -128, 127, 0},      /* 0.5 -> 0 */
        {0.75f, 0.5f, 0, -128, 127, 2},      /* 1.5 -> 2 */
        {1.25f, 0.5f, 0, -128, 127, 2},      /* 2.5 -> 2 */
        {-0.25f, 0.5f, 0, -128, 127, 0},     /* -0.5 -> 0 */
        {-0.75f, 0.5f, 0, -128, 127, -2},    /* -1.5 -> -2 */
        {-1.25f, 0.5f, 0, -128, 127, -2},    /* -2.5 -> -2 */
        {1.25f, 0.5f, 128, 0, 255, 130},     /* u8: 2.5 -> 2, + 128 */
        {0.25f, 0.5f, 3, -128, 127, 3},      /* tie then zp: even decided before adding zp */
        {0.75f, 0.5f, 3, -128, 127, 5},
        {0.0f, 0.1f, 0, -128, 127, 0},
        {-0.0f, 0.1f, 5, -128, 127, 5},
        {1000.0f, 1.0f, 0, -128, 127, 127},  /* saturate high */
        {-1000.0f, 1.0f, 0, -128, 127, -128},
        {-1000.0f, 1.0f, 0, -127, 127, -127}, /* narrow */
        {1000.0f, 0.01f, 0, -127, 127, 127},
        {-5.0f, 0.1f, 10, 0, 255, 0},         /* u8 saturate low */
        {30.0f, 0.1f, 10, 0, 255, 255},
        {12.7f, 0.1f, 0, -128, 127, 127},
        {-12.8f, 0.1f, 0, -128, 127, -128},
        {1e38f, 1e-38f, 0, -128, 127, 127},   /* quotient overflows to +inf */
        {-1e38f, 1e-38f, 0, -128, 127, -128},
        {3e9f, 1.0f, -5, INT32_MIN, INT32_MAX, INT32_MAX},
        {-3e9f, 1.0f, 5, INT32_MIN, INT32_MAX, INT32_MIN},
        {32767.5f, 1.0f, 0, -32768, 32767, 32767},
        {-32768.5f, 1.0f, 0, -32768, 32767, -32768},
        {4.5f, 1.0f, 0, -8, 7, 4},           /* int4 */
        {7.5f, 1.0f, 0, -8, 7, 7},
        {-8.5f, 1.0f, 0, -8, 7, -8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t y = qn_quantize_f32(cases[i].x, cases[i].scale, cases[i].zp, cases[i].qmin,
                                    cases[i].qmax);
        CHECK(t, y == cases[i].y, "quantize(%.9g, %.9g, zp %d, [%d, %d]) = %d, want %d",
              (double)cases[i].x, (double)cases[i].scale, cases[i].zp, cases[i].qmin,
              cases[i].qmax, y, cases[i].y);
    }
    /* NaN -> zp; inf saturates. */
    CHECK(t, qn_quantize_f32(NAN, 0.1f, 7, -128, 127) == 7, "NaN -> zp");
    CHECK(t, qn_quantize_f32(NAN, 0.1f, 128, 0, 255) == 128, "NaN -> zp (u8)");
    CHECK(t, qn_quantize_f32(NAN, 0.1f, 300, 0, 255) == 255, "NaN -> zp clamped");
    CHECK(t, qn_quantize_f32(INFINITY, 0.1f, 0, -128, 127) == 127, "+inf");
    CHECK(t, qn_quantize_f32(-INFINITY, 0.1f, 0, -128, 127) == -128, "-inf");
    CHECK(t, qn_quantize_f32(INFINITY, 0.1f, 0, -127, 127) == 127, "+inf narrow");
    CHECK(t, qn_quantize_f32(-INFINITY, 0.1f, 0, -127, 127) == -127, "-inf narrow");
    CHECK(t, qn_quantize_f32(-INFINITY, 0.1f, 128, 0, 255) == 0, "-inf u8");

    /* True division: find x where x * (1/scale) and x / scale round to different integers and
     * check that the division wins. */
    {
        const float scale = 0.1f;
        const float inv = 1.0f / scale;
        int found = 0, bad = 0;
        for (int k = -1000; k < 1000 && found < 20; k++) {
            for (int j = -40; j <= 40; j++) {
                float x = nextafterf(((float)k + 0.5f) * scale, 0.0f);
                for (int s = 0; s < (j < 0 ? -j : j); s++)
                    x = nextafterf(x, j < 0 ? -INFINITY : INFINITY);
                volatile float qd = x / scale, qm = x * inv;
                if (ref_rint_f32(qd) != ref_rint_f32(qm)) {
                    found++;
                    bad += qn_quantize_f32(x, scale, 0, -32768, 32767) != ref_rint_f32(qd);
                }
            }
        }
        CHECK(t, found > 0, "no division/multiplication disagreement found for scale 0.1");
        CHECK(t, bad == 0, "%d cases use x * (1/scale) instead of x / scale", bad);
    }

    /* Random: against saturate(rint(x / scale) + zp). */
    Rng r = {3};
    long bad = 0;
    for (int i = 0; i < 300000; i++) {
        float scale = rng_f32_pos(&r, -12, 2);
        int u8 = rng_u32(&r) & 1;
        int32_t qmin = u8 ? 0 : (rng_u32(&r) & 2) ? -127 : -128, qmax = u8 ? 255 : 127;
        int32_t zp = qmin + (int32_t)(rng_u32(&r) % (uint32_t)(qmax - qmin + 1));
        float x = (float)((int32_t)(rng_u32(&r) % 600) - 300) * scale;
        if (rng_u32(&r) & 1) { /* exact ties: x / scale = k + 0.5 with a power-of-two scale */
            scale = ldexpf(1.0f, -(int)(rng_u32(&r) % 10));
            x = ((float)((int32_t)(rng_u32(&r) % 600) - 300) + 0.5f) * scale;
        } else if (rng_u32(&r) & 1)
            x = ldexpf((float)(int32_t)rng_u32(&r), -(int)(rng_u32(&r) % 40));
        volatile float q = x / scale;
        int64_t want = ref_rint_f32(q) + zp;
        want = want < qmin ? qmin : want > qmax ? qmax : want;
        bad += qn_quantize_f32(x, scale, zp, qmin, qmax) != want;
    }
    CHECK_LOOP(t, bad, "quantize vs saturate(rint(x / scale) + zp)");
}

static void
test_dequantize(Tally *t)
{
    CHECK(t, qn_dequantize(130, 0.5f, 128) == 1.0f, "dequantize u8");
    CHECK(t, qn_dequantize(-128, 0.25f, 0) == -32.0f, "dequantize i8");
    CHECK(t, qn_dequantize(0, 0.1f, 0) == 0.0f, "dequantize zero");
    CHECK(t, qn_dequantize(3, 0.1f, 1) == 2.0f * 0.1f, "dequantize f32 product");
    CHECK(t, qn_dequantize(INT32_MAX, 1.0f, INT32_MIN) == 0x1p32f, "dequantize int64 difference");
}

static void
test_requant_float(Tally *t)
{
    /* mult order: (sx * sw) / sy in f32. */
    {
        volatile float sx = 0.0123f, sw = 0.00457f, sy = 0.0321f;
        volatile float p = sx * sw;
        volatile float m = p / sy;
        CHECK(t, qn_requant_mult_f32(sx, sw, sy) == m, "mult order");
        CHECK(t, qn_requant_mult_f32(0.5f, 0.25f, 0.125f) == 1.0f, "mult exact");
    }
    /* Ties: half to even, in both directions. */
    static const struct {
        int32_t acc;
        float mult;
        int32_t zp, qmin, qmax, y;
    } cases[] = {
        {5, 0.5f, 0, -128, 127, 2},     /* 2.5 -> 2 */
        {7, 0.5f, 0, -128, 127, 4},     /* 3.5 -> 4 */
        {-5, 0.5f, 0, -128, 127, -2},   /* -2.5 -> -2 */
        {-3, 0.5f, 0, -128, 127, -2},   /* -1.5 -> -2 */
        {-1, 0.5f, 0, -128, 127, 0},    /* -0.5 -> 0 */
        {1, 0.5f, 0, -128, 127, 0},
        {5, 0.5f, 128, 0, 255, 130},
        {1000, 1.0f, 0, -128, 127, 127},
        {-1000, 1.0f, 0, -128, 127, -128},
        {-1000, 1.0f, 0, -127, 127, -127},
        {-1000, 1.0f, 100, 100, 255, 100}, /* fused Relu: clamp at zp */
        {-1, 0.25f, 100, 100, 255, 100},
        {253, 1.0f, 10, 0, 255, 255},
        {INT32_MAX, 1.0f, 0, -128, 127, 127},
        {INT32_MIN, 1.0f, 0, -128, 127, -128},
        {INT32_MIN, -1.0f, 0, -128, 127, 127},
        /* |acc| > 2^24: (float)acc rounds before the multiply (ORT's behaviour). */
        {16777217, 1.0f, 0, INT32_MIN, INT32_MAX, 16777216},
        {16777219, 1.0f, 0, INT32_MIN, INT32_MAX, 16777220},
        {33554435, 0.25f, 0, INT32_MIN, INT32_MAX, 8388609}, /* 8388608.75 exact, f32 -> 8388609 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t y = qn_requant_float(cases[i].acc, cases[i].mult, cases[i].zp, cases[i].qmin,
                                     cases[i].qmax);
        CHECK(t, y == cases[i].y, "requant_float(%d, %.9g, zp %d, [%d, %d]) = %d, want %d",
              cases[i].acc, (double)cases[i].mult, cases[i].zp, cases[i].qmin, cases[i].qmax, y,
              cases[i].y);
    }
    CHECK(t, qn_requant_float(0, INFINITY, 5, -128, 127) == 5, "NaN product -> zp");
    CHECK(t, qn_requant_float(3, INFINITY, 5, -128, 127) == 127, "+inf product saturates");

    /* Random: against the brief's fminf/fmaxf reference and ORT's scalar kernel. */
    Rng r = {4};
    long bad_ref = 0, bad_ort = 0;
    for (int i = 0; i < 1000000; i++) {
        int32_t acc = rng_acc(&r);
        float mult = rng_f32_pos(&r, -30, 1);
        if (i % 8 == 0) /* exact ties: mult a power of two, acc odd */
            mult = ldexpf(1.0f, -1 - (int)(rng_u32(&r) % 12)), acc = (acc % 100000) | 1;
        int32_t qmin, qmax, zp;
        switch (rng_u32(&r) % 5) {
        case 0: qmin = -128, qmax = 127; break;
        case 1: qmin = -127, qmax = 127; break;
        case 2: qmin = 0, qmax = 255; break;
        case 3: qmin = -32768, qmax = 32767; break;
        default: qmin = -8, qmax = 7; break;
        }
        zp = qmin + (int32_t)(rng_u32(&r) % (uint32_t)(qmax - qmin + 1));
        if (rng_u32(&r) % 4 == 0) /* fused Relu */
            qmin = zp;
        int32_t y = qn_requant_float(acc, mult, zp, qmin, qmax);
        bad_ref += y != ref_requant_float(acc, mult, zp, qmin, qmax);
        bad_ort += y != ref_requant_ort(acc, mult, zp, qmin, qmax);
    }
    CHECK_LOOP(t, bad_ref, "requant_float vs fminf/fmaxf/rint reference");
    CHECK_LOOP(t, bad_ort, "requant_float vs ORT MlasRequantizeOutput (magic-number) reference");
}

static void
test_fixed_from_real(Tally *t, int print)
{
    QnFixed f;
    CHECK(t, qn_fixed_from_real(0.5, &f) && f.mult == (1 << 30) && f.shift == 31, "0.5");
    CHECK(t, qn_fixed_from_real(1.0, &f) && f.mult == (1 << 30) && f.shift == 30, "1.0");
    CHECK(t, qn_fixed_from_real(0.75, &f) && f.mult == 3 << 29 && f.shift == 31, "0.75");
    CHECK(t, qn_fixed_from_real(0x1p-32, &f) && f.mult == (1 << 30) && f.shift == 62, "2^-32");
    CHECK(t, qn_fixed_from_real(0x1.fffffffffp-33, &f) && f.mult == (1 << 30) && f.shift == 62,
          "just below 2^-32 rounds up into range");
    CHECK(t, !qn_fixed_from_real(0x1.fffffp-33, &f), "2^-33 * 1.99... out of range");
    CHECK(t, !qn_fixed_from_real(0x1p-33, &f), "2^-33");
    CHECK(t, qn_fixed_from_real(0x1.fffffffcp28, &f) && f.mult == INT32_MAX && f.shift == 2,
          "(2^31 - 1) * 2^-2");
    CHECK(t, !qn_fixed_from_real(0x1p29, &f), "2^29 needs shift 1");
    CHECK(t, !qn_fixed_from_real(0.0, &f), "0");
    CHECK(t, !qn_fixed_from_real(-0.5, &f), "negative");
    CHECK(t, !qn_fixed_from_real(INFINITY, &f), "inf");
    CHECK(t, !qn_fixed_from_real(NAN, &f), "NaN");
    CHECK(t, !qn_fixed_from_real(DBL_TRUE_MIN, &f), "subnormal");
    /* Ties in the multiplier itself round to even: 2^30 + 0.5 -> 2^30, 2^30 + 1.5 -> 2^30 + 2. */
    CHECK(t, qn_fixed_from_real(ldexp(0x1p30 + 0.5, -31), &f) && f.mult == (1 << 30), "tie even");
    CHECK(t, qn_fixed_from_real(ldexp(0x1p30 + 1.5, -31), &f) && f.mult == (1 << 30) + 2,
          "tie even 2");

    /* Random m: normalised, |mult * 2^-shift - m| <= 2^-(shift+1) (checked exactly: the two
     * doubles are within a factor 2, so their difference is exact), no neighbour closer, and the
     * relative error <= 2^-31. f32 multipliers are represented exactly. */
    Rng r = {5};
    long bad_norm = 0, bad_bound = 0, bad_best = 0, bad_f32 = 0;
    double max_rel = 0.0;
    for (int i = 0; i < 1000000; i++) {
        double m = ldexp((double)(rng_u64(&r) >> 11) + 0x1p53, -53 - 31 + (int)(rng_u32(&r) % 60));
        if (!qn_fixed_from_real(m, &f)) {
            bad_norm += m >= 0x1p-32 && m < 0x1p28; /* comfortably inside the range */
            continue;
        }
        bad_norm += f.mult < (1 << 30) || f.shift < 2 || f.shift > 62;
        double approx = qn_fixed_to_real(f);
        double err = fabs(approx - m);
        bad_bound += err > ldexp(1.0, -f.shift - 1);
        double lo = ldexp((double)f.mult - 1, -f.shift), hi = ldexp((double)f.mult + 1, -f.shift);
        bad_best += fabs(lo - m) < err || fabs(hi - m) < err;
        if (err / m > max_rel)
            max_rel = err / m;
        float mf = rng_f32_pos(&r, -32, 28);
        QnFixed g;
        bad_f32 += !qn_fixed_from_real(mf, &g) || qn_fixed_to_real(g) != (double)mf;
    }
    CHECK_LOOP(t, bad_norm, "fixed_from_real normalisation/range");
    CHECK_LOOP(t, bad_bound, "fixed_from_real error > 2^-(shift+1)");
    CHECK_LOOP(t, bad_best, "fixed_from_real not the closest");
    CHECK(t, max_rel <= 0x1p-31, "max relative error %.3g > 2^-31", max_rel);
    if (print)
        printf("fixed_from_real: max relative error %.6g (2^-31 = %.6g) over 10^6 random m\n",
               max_rel, 0x1p-31);
    CHECK_LOOP(t, bad_f32, "fixed_from_real of an f32 multiplier not exact");
}

static void
test_requant_fixed(Tally *t)
{
    QnFixed half = {1 << 30, 31}; /* 0.5 */
    static const struct {
        int32_t acc, y;
    } ties[] = {
        {5, 3},   {7, 4},   {3, 2}, {1, 1}, {-1, 0}, {-3, -1},
        {-5, -2}, {-7, -3}, {0, 0}, {4, 2}, {-4, -2},
    };
    for (size_t i = 0; i < sizeof ties / sizeof ties[0]; i++) {
        int32_t y = qn_requant_fixed(ties[i].acc, half, 0, INT32_MIN, INT32_MAX);
        CHECK(t, y == ties[i].y, "fixed(%d * 0.5) = %d, want %d (ties toward +inf)", ties[i].acc, y,
              ties[i].y);
    }
    QnFixed quarter = {1 << 30, 32}; /* 0.25: -10 * 0.25 = -2.5 -> -2; -6 * 0.25 = -1.5 -> -1 */
    CHECK(t, qn_requant_fixed(-10, quarter, 0, -128, 127) == -2, "-2.5 -> -2");
    CHECK(t, qn_requant_fixed(-6, quarter, 0, -128, 127) == -1, "-1.5 -> -1");
    CHECK(t, qn_requant_fixed(-7, quarter, 0, -128, 127) == -2, "-1.75 -> -2");
    CHECK(t, qn_requant_fixed(-5, quarter, 0, -128, 127) == -1, "-1.25 -> -1");
    CHECK(t, qn_requant_fixed(10, quarter, 3, -128, 127) == 6, "2.5 -> 3, + zp");
    CHECK(t, qn_requant_fixed(1000, half, 0, -128, 127) == 127, "saturate high");
    CHECK(t, qn_requant_fixed(-1000, half, 0, -127, 127) == -127, "saturate narrow");
    CHECK(t, qn_requant_fixed(-1000, half, 100, 100, 255) == 100, "fused Relu");
    CHECK(t, qn_requant_fixed(-300, half, 0, -128, 127) == -128, "saturate low");
    CHECK(t, qn_requant_fixed(-257, half, 0, -128, 127) == -128, "-128.5 -> -128");
    CHECK(t, qn_requant_fixed(-259, half, 0, -128, 127) == -128, "-129.5 -> -129 -> -128");
    CHECK(t, qn_requant_fixed(255, half, 0, -128, 127) == 127, "127.5 -> 128 -> 127");
    {
        QnFixed big = {INT32_MAX, 2};
        CHECK(t, qn_requant_fixed(INT32_MIN, big, 0, INT32_MIN, INT32_MAX) == INT32_MIN,
              "extreme low");
        CHECK(t, qn_requant_fixed(INT32_MIN, big, INT32_MAX, INT32_MIN, INT32_MAX) == INT32_MIN,
              "extreme low + zp");
        CHECK(t, qn_requant_fixed(INT32_MAX, big, INT32_MIN, INT32_MIN, INT32_MAX) == INT32_MAX,
              "extreme high + zp");
        QnFixed neg = {INT32_MIN, 62};
        CHECK(t, qn_requant_fixed(INT32_MIN, neg, 0, INT32_MIN, INT32_MAX) == 1, "2^62 / 2^62");
    }

    /* Random, against the int128 rational reference; and against the real m it came from:
     * |y - acc * m| <= 1/2 + |acc| * 2^-(shift+1) when not saturated. */
    Rng r = {6};
    long bad = 0, bad_real = 0;
    for (int i = 0; i < 1000000; i++) {
        int32_t acc = rng_acc(&r);
        double m = ldexp((double)(rng_u64(&r) >> 11) + 0x1p53, -53 - 32 + (int)(rng_u32(&r) % 40));
        QnFixed f;
        if (i % 8 == 0) { /* exact ties at every scale */
            f.mult = (int32_t)((1u << 30) | (rng_u32(&r) & 0x3fffffffu) | 1u);
            f.shift = 2 + (int32_t)(rng_u32(&r) % 61);
            int s = f.shift - 1 < 31 ? f.shift - 1 : 30;
            /* acc * mult / 2^shift = odd / 2 when s == shift - 1 */
            acc = (int32_t)((rng_u32(&r) % 2 ? -1 : 1) * (int64_t)(1 << s));
            m = qn_fixed_to_real(f);
        } else if (!qn_fixed_from_real(m, &f)) {
            continue;
        }
        int32_t zp = (int32_t)(rng_u32(&r) % 256) - 128;
        int wide = rng_u32(&r) & 1;
        int32_t qmin = wide ? INT32_MIN : -128, qmax = wide ? INT32_MAX : 127;
        if (!wide && rng_u32(&r) % 4 == 0)
            qmin = zp;
        int32_t y = qn_requant_fixed(acc, f, zp, qmin, qmax);
        bad += y != ref_requant_fixed(acc, f, zp, qmin, qmax);
        if (y > qmin && y < qmax) {
            long double exact = (long double)acc * (long double)m + zp;
            long double tol = 0.5L + fabsl((long double)acc) * ldexpl(1.0L, -f.shift - 1) + 1e-9L;
            bad_real += fabsl((long double)y - exact) > tol * (1 + 1e-15L);
        }
    }
    CHECK_LOOP(t, bad, "requant_fixed vs int128 rational reference");
    CHECK_LOOP(t, bad_real, "requant_fixed vs real multiplier bound");
}

static void
test_bias(Tally *t)
{
    static const struct {
        float b, sx, sw;
        int32_t y;
    } cases[] = {
        {0.5f, 1.0f, 1.0f, 0},
        {1.5f, 1.0f, 1.0f, 2},
        {2.5f, 1.0f, 1.0f, 2},
        {-2.5f, 1.0f, 1.0f, -2},
        {-3.5f, 1.0f, 1.0f, -4},
        {0.3125f, 0.5f, 0.25f, 2},          /* 2.5 -> 2 */
        {0.4375f, 0.5f, 0.25f, 4},          /* 3.5 -> 4 */
        {0.0f, 0.1f, 0.2f, 0},
        {1e30f, 1e-3f, 1e-3f, INT32_MAX},
        {-1e30f, 1e-3f, 1e-3f, INT32_MIN},
        {2147483520.0f, 1.0f, 1.0f, 2147483520},
        {1.0f, 0.0f, 1.0f, INT32_MAX},      /* scale 0: +inf saturates */
        {0.0f, 0.0f, 1.0f, 0},              /* 0 / 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t y = qn_quantize_bias(cases[i].b, cases[i].sx, cases[i].sw);
        CHECK(t, y == cases[i].y, "bias(%.9g, %.9g, %.9g) = %d, want %d", (double)cases[i].b,
              (double)cases[i].sx, (double)cases[i].sw, y, cases[i].y);
    }
    CHECK(t, qn_quantize_bias(NAN, 0.1f, 0.1f) == 0, "NaN bias");

    /* The scale product is an f32 multiply (as in ORT's numpy code): find cases where the
     * double product would give another integer, and check that the f32 product is used. */
    Rng r = {7};
    long found = 0, bad_prod = 0;
    for (int i = 0; i < 200000 && found < 50; i++) {
        float sx = rng_f32_pos(&r, -10, -2), sw = rng_f32_pos(&r, -10, -2);
        volatile float s = sx * sw;
        float b = (float)(((double)(rng_u32(&r) % 4000000) + 0.5) * (double)s);
        double q32 = (double)b / (double)s, q64 = (double)b / ((double)sx * (double)sw);
        if (rint(q32) != rint(q64)) {
            found++;
            bad_prod += qn_quantize_bias(b, sx, sw) != (int32_t)rint(q32);
        }
    }
    CHECK(t, found > 0, "no f32/f64 scale product disagreement found");
    CHECK_LOOP(t, bad_prod, "bias uses the f32 scale product");

    /* Random, against the exact rational rounding of b / fl32(sx * sw); exact ties included. */
    long bad = 0, bad_tie = 0, skipped = 0;
    for (int i = 0; i < 1000000; i++) {
        float sx = rng_f32_pos(&r, -12, 0), sw = rng_f32_pos(&r, -12, 0);
        volatile float sv = sx * sw;
        float s = sv;
        float b;
        if (i % 4 == 0) { /* b / s = k + 1/2 exactly: s * (2k+1) / 2 is exact when it fits */
            int32_t k = (int32_t)(rng_u32(&r) % 4096) - 2048;
            volatile float bv = s * (float)(2 * k + 1) * 0.5f;
            b = bv;
            if ((double)b != (double)s * (2.0 * k + 1) * 0.5)
                continue;
            int32_t want = (int32_t)ref_round_div128(2 * k + 1, 2);
            bad_tie += qn_quantize_bias(b, sx, sw) != want;
        } else {
            b = rng_f32_pos(&r, -30, 5) * ((rng_u32(&r) & 1) ? -1.0f : 1.0f);
        }
        int ok;
        int32_t want = ref_quantize_bias(b, s, &ok);
        if (!ok) {
            skipped++;
            continue;
        }
        double q = fabs((double)b / (double)s);
        if (q >= 0x1p28 && q < 0x1p32) /* beyond 2^28 we follow ORT's f64 division, not exact */
            continue;
        bad += qn_quantize_bias(b, sx, sw) != want;
    }
    CHECK_LOOP(t, bad, "bias vs exact rational rounding (|b/s| < 2^28 or saturated)");
    CHECK_LOOP(t, bad_tie, "bias exact ties");
    CHECK(t, skipped < 1000, "too many skipped bias cases: %ld", skipped);
}

#define CHECK_MSG(t, m, want)                                                                  \
    CHECK(t, (m) && strcmp((m), (want)) == 0, "got '%s', want '%s'", (m) ? (m) : "(null)", (want))

static void
test_qparams(Tally *t)
{
    const char *m;
    m = qn_check_qparams(0.0f, 0, -128, 127);
    CHECK_MSG(t, m, "scale must be positive and finite, got 0");
    m = qn_check_qparams(0.1f, 300, -128, 127);
    CHECK_MSG(t, m, "zero point 300 outside [-128, 127]");
    m = qn_check_qparams(-0.1f, 0, -128, 127);
    CHECK_MSG(t, m, "scale must be positive and finite, got -0.1");
    m = qn_check_qparams(INFINITY, 0, -128, 127);
    CHECK_MSG(t, m, "scale must be positive and finite, got inf");
    m = qn_check_qparams(NAN, 0, -128, 127);
    CHECK_MSG(t, m, "scale must be positive and finite, got nan");
    m = qn_check_qparams(0.1f, -1, 0, 255);
    CHECK_MSG(t, m, "zero point -1 outside [0, 255]");
    m = qn_check_qparams(0.1f, 0, 5, 3);
    CHECK_MSG(t, m, "empty quantization range [5, 3]");
    CHECK(t, qn_check_qparams(0.1f, 0, -128, 127) == NULL, "valid i8");
    CHECK(t, qn_check_qparams(1e-30f, 255, 0, 255) == NULL, "valid u8 edge");
    CHECK(t, qn_check_qparams(0x1p-149f, 0, -127, 127) == NULL, "subnormal scale is positive");
    char small[12];
    m = qn_check_qparams_r(0.0f, 0, -128, 127, small, sizeof small);
    CHECK(t, m == small && strcmp(small, "scale must ") == 0, "truncation: '%s'", small);
    m = qn_check_qparams_r(0.0f, 0, -128, 127, NULL, 0);
    CHECK(t, m && strcmp(m, "invalid quantization parameters") == 0, "no buffer");
    CHECK(t, qn_check_qparams_r(1.0f, 0, -128, 127, NULL, 0) == NULL, "no buffer, valid");
}

static void
test_qrange(Tally *t)
{
    int32_t lo = 0, hi = 0;
    CHECK(t, qn_qrange(8, true, false, &lo, &hi) && lo == -128 && hi == 127, "i8");
    CHECK(t, qn_qrange(8, true, true, &lo, &hi) && lo == -127 && hi == 127, "i8 narrow");
    CHECK(t, qn_qrange(8, false, false, &lo, &hi) && lo == 0 && hi == 255, "u8");
    CHECK(t, qn_qrange(8, false, true, &lo, &hi) && lo == 1 && hi == 255, "u8 narrow");
    CHECK(t, qn_qrange(4, true, false, &lo, &hi) && lo == -8 && hi == 7, "i4");
    CHECK(t, qn_qrange(16, false, false, &lo, &hi) && lo == 0 && hi == 65535, "u16");
    CHECK(t, qn_qrange(32, true, false, &lo, &hi) && lo == INT32_MIN && hi == INT32_MAX, "i32");
    CHECK(t, !qn_qrange(32, false, false, &lo, &hi), "u32 unsupported");
    CHECK(t, !qn_qrange(1, true, false, &lo, &hi) && !qn_qrange(0, false, false, &lo, &hi),
          "bad bits");
    CHECK(t, qn_saturate(INT64_MIN, -3, 3) == -3 && qn_saturate(INT64_MAX, -3, 3) == 3 &&
             qn_saturate(2, -3, 3) == 2, "saturate");
}

/* ---- fixed mode: the rescale, the conv multiplier, element-wise ops and averages ---- */

/* qn_rescale's definition in int128: floor((v * mult + 2^(shift-1)) / 2^shift). */
static int64_t
ref_rescale(int64_t v, QnFixed f)
{
    i128 rem;
    return (int64_t)floor_div128((i128)v * f.mult + ((i128)1 << (f.shift - 1)),
                                 (i128)1 << f.shift, &rem);
}

/* Exact rationals num / den (den > 0) in int128. */
typedef struct Rat {
    i128 n, d;
} Rat;

/* c * 2^e / den as a Rat (den > 0, |e| small enough for int128: callers keep it under 60). */
static Rat
rat_pow2(i128 c, int e, i128 den)
{
    Rat r = {c, den};
    if (e >= 0)
        r.n *= (i128)1 << e;
    else
        r.d *= (i128)1 << -e;
    return r;
}

/* round half toward +inf, round half to even, and "is exactly k + 1/2" */
static int64_t
rat_rhu(Rat r)
{
    i128 rem;
    return (int64_t)floor_div128(2 * r.n + r.d, 2 * r.d, &rem);
}

static int64_t
rat_rne(Rat r)
{
    return (int64_t)ref_round_div128(r.n, r.d);
}

static int
rat_tie(Rat r)
{
    i128 rem;
    floor_div128(2 * r.n, 2 * r.d, &rem);
    return rem == r.d;
}

static long double
rat_ld(Rat r)
{
    return (long double)r.n / (long double)r.d;
}

/* The bound on the relative error of every fixed multiplier vs its exact ratio: one f64
 * rounding (2^-53) then qn_fixed_from_real's (2^-31). */
static const long double ETA = 0x1p-31L + 0x1p-53L + 0x1p-84L;

/* |mult * 2^-shift - r| <= ETA * r (r exact, given as a Rat) */
static int
mult_ok(QnFixed f, Rat r)
{
    long double m = ldexpl((long double)f.mult, -f.shift), x = rat_ld(r);
    return fabsl(m - x) <= (ETA + 0x1p-60L) * x;
}

/* sx / sy as a Rat of the f32 scales, times k/den: exact (exponents of the tests' scales keep
 * the powers of two below 2^60). */
static Rat
ratio(float sx, float sy, i128 k, i128 den)
{
    int64_t mx = 0, my = 1;
    int ex = 0, ey = 0;
    f32_parts(sx, &mx, &ex);
    f32_parts(sy, &my, &ey);
    return rat_pow2(k * mx, ex - ey, den * my);
}

static void
test_rescale(Tally *t)
{
    QnFixed half = {1 << 30, 31}, quarter = {1 << 30, 32};
    /* explicit ties: k + 1/2 goes to k + 1 for either sign */
    static const struct {
        int64_t v, y;
    } ht[] = {{1, 1}, {3, 2}, {5, 3}, {-1, 0}, {-3, -1}, {-5, -2}, {0, 0}, {-2, -1}, {2, 1}};
    for (size_t i = 0; i < sizeof ht / sizeof ht[0]; i++)
        CHECK(t, qn_rescale(ht[i].v, half) == ht[i].y, "rescale(%lld * 0.5) = %lld, want %lld",
              (long long)ht[i].v, (long long)qn_rescale(ht[i].v, half), (long long)ht[i].y);
    CHECK(t, qn_rescale(-10, quarter) == -2 && qn_rescale(-6, quarter) == -1 &&
             qn_rescale(10, quarter) == 3 && qn_rescale(-7, quarter) == -2 &&
             qn_rescale(-5, quarter) == -1, "rescale by 0.25: -2.5 -2, -1.5 -1, 2.5 3");
    /* the extremes of the domain: |v * mult| just below 2^63 */
    QnFixed big = {INT32_MAX, 2}, tiny = {1 << 30, 62};
    CHECK(t, qn_rescale(QN_RESCALE_VMAX, big) == ref_rescale(QN_RESCALE_VMAX, big) &&
             qn_rescale(-QN_RESCALE_VMAX, big) == ref_rescale(-QN_RESCALE_VMAX, big),
          "rescale extremes");
    CHECK(t, qn_rescale(QN_RESCALE_VMAX, tiny) == 1 && qn_rescale(-QN_RESCALE_VMAX, tiny) == -1 &&
             qn_rescale(INT64_C(1) << 31, tiny) == 1 && qn_rescale(-(INT64_C(1) << 31), tiny) == 0 &&
             qn_rescale(INT64_C(1) << 30, tiny) == 0,
          "rescale by 2^-32: +-(2^32 - 1) -> +-1, 2^31 -> 1, -2^31 -> 0 (ties at +-1/2)");
    Rng r = {11};
    long bad = 0, bad_req = 0;
    for (int i = 0; i < 1000000; i++) {
        QnFixed f = {(int32_t)((1u << 30) | (rng_u32(&r) & 0x3fffffffu)),
                     2 + (int32_t)(rng_u32(&r) % 61)};
        int64_t v = (int64_t)(rng_u64(&r) >> (31 + rng_u32(&r) % 33));
        if (v > QN_RESCALE_VMAX)
            v = QN_RESCALE_VMAX;
        if (rng_u32(&r) & 1)
            v = -v;
        if (i % 4 == 0) { /* v * 2^30 / 2^s = odd / 2 exactly: v = odd * 2^(s - 31) */
            f.mult = 1 << 30;
            f.shift = 31 + (int32_t)(rng_u32(&r) % 32);
            int e = f.shift - 31;
            int64_t odd = 2 * (int64_t)(rng_u64(&r) % ((uint64_t)1 << (31 - e))) + 1;
            v = odd << e; /* < 2^32 */
            if (rng_u32(&r) & 1)
                v = -v;
        }
        bad += qn_rescale(v, f) != ref_rescale(v, f);
        if (v >= INT32_MIN && v <= INT32_MAX)
            bad_req += qn_requant_fixed((int32_t)v, f, 0, INT32_MIN, INT32_MAX) !=
                       (int32_t)sat64(ref_rescale(v, f), INT32_MIN, INT32_MAX);
    }
    CHECK_LOOP(t, bad, "qn_rescale vs int128 floor((v * mult + 2^(shift-1)) / 2^shift)");
    CHECK_LOOP(t, bad_req, "qn_rescale == qn_requant_fixed on int32");
    CHECK(t, qn_range_bits(-128, 127) == 8 && qn_range_bits(0, 255) == 8 &&
             qn_range_bits(-8, 7) == 4 && qn_range_bits(0, 65535) == 16 &&
             qn_range_bits(INT32_MIN, INT32_MAX) == 32 && qn_range_bits(0, 0) == 0,
          "qn_range_bits");
}

/* The conv multiplier (qconv/qmatmul --requant=fixed) is qn_fixed_from_real of the f64 ratio
 * (double)sx * sw / sy, not of float mode's f32 multiplier: pinned on a case where the two
 * differ (and the f64 one rounds the exact value correctly), and checked against the exact
 * ratio on random scales. */
static void
test_requant_fixed_mult(Tally *t)
{
    /* sx = 0.01, sw = 0.002, sy = 0.027 (f32), acc = 675: the exact acc*sx*sw/sy is
     * 0.49999999960..., so 0. The f32 multiplier is 2^-25 relative too large and gives 1
     * (float mode gives 1 as well); test/lit/ref/qconv-requant-fixed-mult.qir runs this case
     * through the reference interpreter and the JIT. */
    float sx = 0.01f, sw = 0.002f, sy = 0.027f;
    QnFixed a = {0, 0}, b = {0, 0}, c = {0, 0};
    CHECK(t, qn_requant_fixed_mult(sx, sw, sy, &a) && a.mult == 1628906114 && a.shift == 41,
          "conv multiplier (0.01, 0.002, 0.027) = (%d, %d), want (1628906114, 41)", (int)a.mult,
          (int)a.shift);
    CHECK(t, qn_fixed_from_real((double)sx * (double)sw / (double)sy, &b) && a.mult == b.mult &&
             a.shift == b.shift, "conv multiplier = qn_fixed_from_real((double)sx * sw / sy)");
    CHECK(t, qn_fixed_from_real(qn_requant_mult_f32(sx, sw, sy), &c) && c.mult == 1628906240 &&
             c.shift == 41, "the f32 multiplier's fixed form is (%d, %d)", (int)c.mult, (int)c.shift);
    int64_t msx = 0, msw = 0, msy = 1;
    int esx = 0, esw = 0, esy = 0;
    f32_parts(sx, &msx, &esx);
    f32_parts(sw, &msw, &esw);
    f32_parts(sy, &msy, &esy);
    Rat ex = rat_pow2((i128)675 * msx * msw, esx + esw - esy, msy);
    CHECK(t, rat_rhu(ex) == 0 && rat_ld(ex) > 0.4999999995L &&
             qn_requant_fixed(675, a, 0, -128, 127) == 0 &&
             qn_requant_fixed(675, c, 0, -128, 127) == 1 &&
             qn_requant_float(675, qn_requant_mult_f32(sx, sw, sy), 0, -128, 127) == 1,
          "acc 675: exact 0.4999999996 -> 0 (f64 ratio), 1 (f32 multiplier, float mode)");

    Rng r = {12};
    long bad = 0, notnearest = 0, n = 0;
    for (int i = 0; i < 1000000; i++) {
        float x = rng_f32_pos(&r, -12, -2), w = rng_f32_pos(&r, -12, -4), y = rng_f32_pos(&r, -10, 0);
        QnFixed f;
        if (!qn_requant_fixed_mult(x, w, y, &f))
            continue;
        n++;
        int64_t mw = 0;
        int ew = 0;
        f32_parts(w, &mw, &ew);
        Rat q = ratio(x, y, mw, 1);
        q = rat_pow2(q.n, ew, q.d);
        bad += !mult_ok(f, q);
        /* the nearest 31-bit multiplier to the exact ratio unless the f64 division moved it
         * across a half-way point (probability ~2^-22) */
        long double err = fabsl(ldexpl((long double)f.mult, -f.shift) - rat_ld(q));
        notnearest += err > ldexpl(1.0L, -f.shift - 1) * (1 + 0x1p-40L);
    }
    CHECK(t, n > 900000, "conv multipliers: only %ld representable", n);
    CHECK_LOOP(t, bad, "conv multiplier vs exact sx*sw/sy (relative 2^-31 + 2^-53)");
    CHECK(t, notnearest < 10, "conv multiplier not the nearest 31-bit value %ld times", notnearest);
}

/* Exact values (output units, before + zy) of the element-wise ops, from the f32 scales. The
 * test scales keep exponent differences below 2^60 so everything fits int128. */
static Rat
exact_add(float sa, float sb, float sy, int64_t da, int64_t db)
{
    int64_t ma = 0, mb = 0, my = 1;
    int ea = 0, eb = 0, ey = 0;
    f32_parts(sa, &ma, &ea);
    f32_parts(sb, &mb, &eb);
    f32_parts(sy, &my, &ey);
    int e0 = ea < eb ? ea : eb;
    i128 num = (i128)da * ma * ((i128)1 << (ea - e0)) + (i128)db * mb * ((i128)1 << (eb - e0));
    return rat_pow2(num, e0 - ey, my);
}

static Rat
exact_mul(float sa, float sb, float sy, int64_t da, int64_t db)
{
    int64_t ma = 0, mb = 0, my = 1;
    int ea = 0, eb = 0, ey = 0;
    f32_parts(sa, &ma, &ea);
    f32_parts(sb, &mb, &eb);
    f32_parts(sy, &my, &ey);
    return rat_pow2((i128)da * db * ma * mb, ea + eb - ey, my);
}

enum { EOP_REQ, EOP_ADD, EOP_SUB, EOP_MUL, EOP_AVG, EOP_N };
static const char *const eop_name[EOP_N] = {"requantize", "qadd", "qsub", "qmul", "qavg"};

/* One random case of an element-wise op: operands, parameters, the fixed and float results,
 * the exact value and fixed mode's error bound E (|y - zy - t| <= 1/2 + E unsaturated). */
typedef struct ElemCase {
    int op;
    float sa, sb, sy;
    int32_t a, za, b, zb, zy, lo, hi;
    int64_t sum, count; /* qavg */
    int bits;
    int32_t yfix, yflt;
    Rat t;
    long double E;
    int bad_impl, bad_mult; /* implementation vs the int128 definition; multipliers vs exact */
} ElemCase;

/* f32 in [2^lo, 2^hi): random mantissa (pow2 = 0) or a power of two. */
static float
rng_scale(Rng *r, int lo, int hi, int pow2)
{
    float s = rng_f32_pos(r, lo, hi);
    if (pow2) {
        int ex;
        frexpf(s, &ex);
        s = ldexpf(1.0f, ex - 1);
    }
    return s;
}

static void
rng_operand(Rng *r, int bits, int32_t *x, int32_t *z)
{
    int64_t lo, hi;
    int u = rng_u32(r) & 1;
    lo = u ? 0 : -((int64_t)1 << (bits - 1));
    hi = u ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
    uint32_t w = (uint32_t)(hi - lo + 1);
    *x = (int32_t)(lo + rng_u32(r) % w);
    *z = (int32_t)(lo + rng_u32(r) % w);
}

/* Fill c with a random case of op (8- or 16-bit operands; power-of-two scales if pow2) and
 * evaluate it. Returns 0 if the parameters are not representable (not expected here). */
static int
elem_case(Rng *r, int op, int pow2, int bits, ElemCase *c)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->bits = bits;
    int u = rng_u32(r) & 1; /* output i8 or u8 */
    c->lo = u ? 0 : -128;
    c->hi = u ? 255 : 127;
    c->zy = c->lo + (int32_t)(rng_u32(r) % 256);
    if (rng_u32(r) % 8 == 0) /* a fused Relu */
        c->lo = c->zy;
    int sh = bits - 8; /* 16-bit operands: scales 2^-8 finer for the same real range */
    rng_operand(r, bits, &c->a, &c->za);
    rng_operand(r, bits, &c->b, &c->zb);
    c->sa = rng_scale(r, -8 - sh, -2 - sh, pow2);
    float mant = pow2 ? 1.0f : rng_f32_pos(r, 0, 1); /* [1, 2) */
    int e = (int)(rng_u32(r) % 6);
    switch (op) {
    case EOP_REQ: /* sx / sy in [2^-3, 2^3) (x 2^-8 for 16-bit x) */
        c->sy = ldexpf(c->sa * mant, e - 3 + sh);
        break;
    case EOP_ADD: case EOP_SUB: /* sb / sa in [2^-3, 2^3), max(sa, sb) / sy in [1/4, 2) */
        c->sb = ldexpf(c->sa * mant, e - 3);
        mant = pow2 ? 1.0f : rng_f32_pos(r, 0, 1);
        c->sy = ldexpf((c->sa > c->sb ? c->sa : c->sb) * mant, e % 3 - 1 + sh);
        break;
    case EOP_MUL: /* sa * sb / sy in [2^-9, 2^-5) */
        c->sb = rng_scale(r, -8 - sh, -2 - sh, pow2);
        c->sy = ldexpf(c->sa * c->sb * mant, 5 + e % 4 + 2 * sh);
        break;
    default: { /* sx / sy in [2^-2, 2^2) */
        static const int64_t counts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 25, 49, 64, 196, 3136};
        c->count = counts[rng_u32(r) % (sizeof counts / sizeof counts[0])];
        int64_t D = ((int64_t)1 << bits) - 1;
        c->sum = (int64_t)(rng_u64(r) % (uint64_t)(2 * c->count * D + 1)) - c->count * D;
        if (rng_u32(r) & 1)
            c->sum /= 2;
        c->sy = ldexpf(c->sa * mant, e % 4 - 2 + sh);
        break;
    }
    }
    int64_t da = (int64_t)c->a - c->za, db = (int64_t)c->b - c->zb;
    QnFixed m;
    QnAddFixed p;
    const char *why;
    int lo = c->lo, hi = c->hi;
    switch (op) {
    case EOP_REQ:
        if ((why = qn_requantize_fixed_params(c->sa, c->sy, &m)) != NULL)
            return 0;
        c->yfix = qn_requantize_fixed(c->a, c->za, m, c->zy, lo, hi);
        c->yflt = qn_requantize(c->a, c->sa, c->za, c->sy, c->zy, lo, hi);
        c->t = ratio(c->sa, c->sy, da, 1);
        c->bad_impl = c->yfix != sat64(ref_rescale(da, m) + c->zy, lo, hi);
        c->bad_mult = !mult_ok(m, ratio(c->sa, c->sy, 1, 1));
        c->E = fabsl(rat_ld(c->t)) * ETA;
        break;
    case EOP_ADD: case EOP_SUB: {
        if ((why = qn_qadd_fixed_params(c->sa, c->sb, c->sy, bits, &p)) != NULL)
            return 0;
        int sg = op == EOP_ADD ? 1 : -1;
        c->yfix = op == EOP_ADD ? qn_qadd_fixed(c->a, c->za, c->b, c->zb, &p, c->zy, lo, hi)
                                : qn_qsub_fixed(c->a, c->za, c->b, c->zb, &p, c->zy, lo, hi);
        c->yflt = op == EOP_ADD ? qn_qadd(c->a, c->sa, c->za, c->b, c->sb, c->zb, c->sy, c->zy, lo, hi)
                                : qn_qsub(c->a, c->sa, c->za, c->b, c->sb, c->zb, c->sy, c->zy, lo, hi);
        c->t = exact_add(c->sa, c->sb, c->sy, da, sg * db);
        int64_t A = ref_rescale(da, p.a), B = ref_rescale(db, p.b);
        c->bad_impl = c->yfix != sat64(ref_rescale(A + sg * B, p.y) + c->zy, lo, hi) ||
                      p.lshift != 28 - bits;
        float mx = c->sa > c->sb ? c->sa : c->sb;
        Rat ra = ratio(c->sa, mx, (i128)1 << p.lshift, 1), rb = ratio(c->sb, mx, (i128)1 << p.lshift, 1);
        Rat ry = ratio(mx, c->sy, 1, (i128)1 << p.lshift);
        c->bad_mult = !mult_ok(p.a, ra) || !mult_ok(p.b, rb) || !mult_ok(p.y, ry);
        /* E = |t| eta + rho_y (1 + eta) (1 + eta (|da| rho_a + |db| rho_b)) */
        long double X = fabsl((long double)da) * rat_ld(ra) + fabsl((long double)db) * rat_ld(rb);
        c->E = fabsl(rat_ld(c->t)) * ETA + rat_ld(ry) * (1 + ETA) * (1 + ETA * X);
        break;
    }
    case EOP_MUL:
        if ((why = qn_qmul_fixed_params(c->sa, c->sb, c->sy, bits, &m)) != NULL)
            return 0;
        c->yfix = qn_qmul_fixed(c->a, c->za, c->b, c->zb, m, c->zy, lo, hi);
        c->yflt = qn_qmul(c->a, c->sa, c->za, c->b, c->sb, c->zb, c->sy, c->zy, lo, hi);
        c->t = exact_mul(c->sa, c->sb, c->sy, da, db);
        c->bad_impl = c->yfix != sat64(ref_rescale(da * db, m) + c->zy, lo, hi);
        c->bad_mult = !mult_ok(m, exact_mul(c->sa, c->sb, c->sy, 1, 1));
        c->E = fabsl(rat_ld(c->t)) * ETA;
        break;
    default:
        if ((why = qn_qavg_fixed_params(c->sa, c->sy, c->count, bits, &m)) != NULL)
            return 0;
        c->yfix = qn_qavg_fixed(c->sum, m, c->zy, lo, hi);
        c->yflt = qn_qavg(c->sum, c->count, c->sa, c->sy, c->zy, lo, hi);
        c->t = ratio(c->sa, c->sy, c->sum, c->count);
        c->bad_impl = c->yfix != sat64(ref_rescale(c->sum, m) + c->zy, lo, hi);
        c->bad_mult = !mult_ok(m, ratio(c->sa, c->sy, 1, c->count));
        c->E = fabsl(rat_ld(c->t)) * ETA;
        break;
    }
    return 1;
}

/* Explicit ties k + 1/2 of each op with exact (power-of-two) multipliers: fixed mode rounds
 * toward +inf (2.5 -> 3, -2.5 -> -2, -0.5 -> 0), float mode to even (2.5 -> 2). */
static void
test_elem_fixed_ties(Tally *t)
{
    QnFixed m;
    QnAddFixed p;
    /* requantize by 0.5 */
    CHECK(t, !qn_requantize_fixed_params(0.5f, 1.0f, &m), "requantize params");
    static const struct {
        int32_t x, zx, zy, fix, flt;
    } rq[] = {{5, 0, 0, 3, 2}, {-5, 0, 0, -2, -2}, {3, 0, 0, 2, 2}, {-3, 0, 0, -1, -2},
              {-1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, {8, 3, -4, -1, -2}, {-2, 3, 10, 8, 8}};
    for (size_t i = 0; i < sizeof rq / sizeof rq[0]; i++) {
        CHECK(t, qn_requantize_fixed(rq[i].x, rq[i].zx, m, rq[i].zy, -128, 127) == rq[i].fix,
              "requantize fixed (%d - %d) * 0.5 + %d", rq[i].x, rq[i].zx, rq[i].zy);
        CHECK(t, qn_requantize(rq[i].x, 0.5f, rq[i].zx, 1.0f, rq[i].zy, -128, 127) == rq[i].flt,
              "requantize float (%d - %d) * 0.5 + %d", rq[i].x, rq[i].zx, rq[i].zy);
    }
    /* qadd / qsub: sa = 0.5, sb = 0.25, sy = 1 (multipliers 2^20, 2^19, 2^-21: exact) */
    CHECK(t, !qn_qadd_fixed_params(0.5f, 0.25f, 1.0f, 8, &p) && p.lshift == 20 &&
             qn_fixed_to_real(p.a) == 0x1p20 && qn_fixed_to_real(p.b) == 0x1p19 &&
             qn_fixed_to_real(p.y) == 0x1p-21, "qadd params");
    static const struct {
        int32_t a, b, add, sub, addf, subf;
    } ad[] = {
        {1, 0, 1, 1, 0, 0},      /* 0.5 */
        {-1, 0, 0, 0, 0, 0},     /* -0.5 */
        {3, 4, 3, 1, 2, 0},      /* 1.5 + 1 = 2.5; 1.5 - 1 = 0.5 */
        {-3, -4, -2, 0, -2, 0},  /* -2.5; -0.5 */
        {3, -4, 1, 3, 0, 2},     /* 0.5; 2.5 */
        {-3, 4, 0, -2, 0, -2},   /* -0.5; -2.5 */
        {0, 2, 1, 0, 0, 0},      /* 0.5 from b alone; -0.5 */
        {0, -6, -1, 2, -2, 2},   /* -1.5; 1.5 */
        {127, 127, 95, 32, 95, 32},   /* 63.5 + 31.75 = 95.25; 31.75 */
        {-128, -128, -96, -32, -96, -32},
    };
    for (size_t i = 0; i < sizeof ad / sizeof ad[0]; i++) {
        CHECK(t, qn_qadd_fixed(ad[i].a, 0, ad[i].b, 0, &p, 0, -128, 127) == ad[i].add,
              "qadd fixed %d*0.5 + %d*0.25", ad[i].a, ad[i].b);
        CHECK(t, qn_qsub_fixed(ad[i].a, 0, ad[i].b, 0, &p, 0, -128, 127) == ad[i].sub,
              "qsub fixed %d*0.5 - %d*0.25", ad[i].a, ad[i].b);
        CHECK(t, qn_qadd(ad[i].a, 0.5f, 0, ad[i].b, 0.25f, 0, 1.0f, 0, -128, 127) == ad[i].addf,
              "qadd float %d*0.5 + %d*0.25", ad[i].a, ad[i].b);
        CHECK(t, qn_qsub(ad[i].a, 0.5f, 0, ad[i].b, 0.25f, 0, 1.0f, 0, -128, 127) == ad[i].subf,
              "qsub float %d*0.5 - %d*0.25", ad[i].a, ad[i].b);
    }
    /* zero points, clamp, u8: (131 - 128) * 0.5 + (128 - 128) * 0.25 = 1.5 -> 2, + 10 */
    CHECK(t, qn_qadd_fixed(131, 128, 128, 128, &p, 10, 0, 255) == 12, "qadd u8 zp");
    CHECK(t, qn_qadd_fixed(-5, 0, 0, 0, &p, 3, 3, 127) == 3, "qadd relu clamp at zy");
    CHECK(t, qn_qadd_fixed(127, -128, 127, -128, &p, 0, -128, 127) == 127, "qadd saturates");
    /* qmul: sa = sb = 0.5, sy = 0.5 -> m = 0.5 */
    CHECK(t, !qn_qmul_fixed_params(0.5f, 0.5f, 0.5f, 8, &m) && qn_fixed_to_real(m) == 0.5,
          "qmul params");
    static const struct {
        int32_t a, b, fix, flt;
    } mu[] = {{5, 1, 3, 2}, {-5, 1, -2, -2}, {-1, 1, 0, 0}, {3, -1, -1, -2}, {1, 1, 1, 0},
              {3, 3, 5, 4}, {-3, 3, -4, -4}, {100, 100, 127, 127}, {-100, 100, -128, -128}};
    for (size_t i = 0; i < sizeof mu / sizeof mu[0]; i++) {
        CHECK(t, qn_qmul_fixed(mu[i].a, 0, mu[i].b, 0, m, 0, -128, 127) == mu[i].fix,
              "qmul fixed %d * %d * 0.5", mu[i].a, mu[i].b);
        CHECK(t, qn_qmul(mu[i].a, 0.5f, 0, mu[i].b, 0.5f, 0, 0.5f, 0, -128, 127) == mu[i].flt,
              "qmul float %d * %d * 0.5", mu[i].a, mu[i].b);
    }
    CHECK(t, qn_qmul_fixed(7, 2, 3, 4, m, 1, -128, 127) == -1, "qmul zp: (5)(-1)/2 = -2.5 -> -2, +1");
    /* averages: sx = sy -> m = 1/count */
    static const struct {
        int64_t sum, count;
        int32_t fix, flt;
    } av[] = {{5, 2, 3, 2}, {-5, 2, -2, -2}, {7, 2, 4, 4}, {-7, 2, -3, -4}, {-2, 4, 0, 0},
              {2, 4, 1, 0}, {6, 4, 2, 2}, {-6, 4, -1, -2}, {10, 4, 3, 2}, {-1, 2, 0, 0},
              {3, 2, 2, 2}, {1000, 2, 127, 127}, {-1000, 2, -128, -128}};
    for (size_t i = 0; i < sizeof av / sizeof av[0]; i++) {
        CHECK(t, !qn_qavg_fixed_params(0.25f, 0.25f, av[i].count, 8, &m), "qavg params");
        CHECK(t, qn_qavg_fixed(av[i].sum, m, 0, -128, 127) == av[i].fix, "qavg fixed %lld / %lld",
              (long long)av[i].sum, (long long)av[i].count);
        CHECK(t, qn_qavg(av[i].sum, av[i].count, 0.25f, 0.25f, 0, -128, 127) == av[i].flt,
              "qavg float %lld / %lld", (long long)av[i].sum, (long long)av[i].count);
    }
    /* count 3 (multiplier 1/3, not exact): 5/3 = 1.67 -> 2, -5/3 -> -2, 4/3 -> 1 */
    CHECK(t, !qn_qavg_fixed_params(0.5f, 0.5f, 3, 8, &m), "qavg params 3");
    CHECK(t, qn_qavg_fixed(5, m, 0, -128, 127) == 2 && qn_qavg_fixed(-5, m, 0, -128, 127) == -2 &&
             qn_qavg_fixed(4, m, 0, -128, 127) == 1 && qn_qavg_fixed(-4, m, 0, -128, 127) == -1,
          "qavg / 3");

    /* refusals */
    CHECK(t, qn_qadd_fixed_params(0.5f, 0.25f, 1.0f, 17, &p) != NULL, "qadd: 17-bit operands");
    CHECK(t, qn_qmul_fixed_params(0.5f, 0.25f, 1.0f, 32, &m) != NULL, "qmul: 32-bit operands");
    CHECK(t, qn_qadd_fixed_params(0.5f, 0x1p-60f, 1.0f, 8, &p) != NULL, "qadd: ratio below 2^-32");
    CHECK(t, qn_qadd_fixed_params(1.0f, 1.0f, 0x1p-20f, 8, &p) == NULL &&
             qn_qadd_fixed_params(1.0f, 1.0f, 0x1p-50f, 8, &p) != NULL, "qadd: output multiplier");
    CHECK(t, qn_requantize_fixed_params(1.0f, 0x1p-30f, &m) != NULL, "requantize: 2^30 too big");
    CHECK(t, qn_requantize_fixed_params(0.0f, 1.0f, &m) != NULL &&
             qn_requantize_fixed_params(1.0f, NAN, &m) != NULL, "requantize: bad scales");
    CHECK(t, qn_qavg_fixed_params(1.0f, 1.0f, 16843009, 8, &m) == NULL &&
             qn_qavg_fixed_params(1.0f, 1.0f, 16843010, 8, &m) != NULL,
          "qavg: count * 255 <= 2^32 - 1");
    CHECK(t, qn_qavg_fixed_params(1.0f, 1.0f, 0, 8, &m) != NULL, "qavg: count 0");
    /* 32-bit requantize input: x - zx up to 2^32 - 1 */
    CHECK(t, !qn_requantize_fixed_params(0x1p-24f, 1.0f, &m) &&
             qn_requantize_fixed(INT32_MAX, INT32_MIN, m, 0, INT32_MIN, INT32_MAX) == 256 &&
             qn_requantize_fixed(INT32_MIN, INT32_MAX, m, 0, INT32_MIN, INT32_MAX) == -256,
          "requantize i32: (2^32 - 1) / 2^24 = 255.99 -> 256");
}

/* Random cases of every op against the exact rational value: the implementation equals the
 * int128 evaluation of its definition, every multiplier is within ETA of its exact ratio,
 * |y - zy - t| <= 1/2 + E when unsaturated, y is sat(rhu(t)) unless t is within E of a tie,
 * and fixed and float mode differ by at most 1. */
static void
test_elem_fixed_random(Tally *t)
{
    Rng r = {13};
    long bad_impl = 0, bad_mult = 0, bad_bound = 0, bad_round = 0, bad_ff = 0, n = 0, skip = 0;
    for (int i = 0; i < 400000; i++) {
        int op = i % EOP_N, pow2 = (i / EOP_N) % 4 == 0;
        int bits = (i / EOP_N) % 8 == 1 ? 16 : 8;
        ElemCase c;
        if (!elem_case(&r, op, pow2, bits, &c)) {
            skip++;
            continue;
        }
        n++;
        bad_impl += c.bad_impl;
        bad_mult += c.bad_mult;
        long double tv = rat_ld(c.t);
        int64_t yf = (int64_t)c.yfix - c.zy;
        if (c.yfix > c.lo && c.yfix < c.hi)
            bad_bound += fabsl((long double)yf - tv) > 0.5L + c.E + 0x1p-50L;
        if (c.yfix != sat64((i128)rat_rhu(c.t) + c.zy, c.lo, c.hi)) {
            long double fr = tv - floorl(tv);
            bad_round += fabsl(fr - 0.5L) > c.E + 0x1p-50L;
        }
        bad_ff += c.yfix - c.yflt > 1 || c.yflt - c.yfix > 1;
    }
    CHECK(t, skip == 0, "unrepresentable random element-wise cases: %ld", skip);
    CHECK_LOOP(t, bad_impl, "element-wise fixed vs int128 definition");
    CHECK_LOOP(t, bad_mult, "element-wise fixed multipliers vs exact ratios");
    CHECK_LOOP(t, bad_bound, "element-wise fixed |y - t| <= 1/2 + E");
    CHECK_LOOP(t, bad_round, "element-wise fixed != round(t) away from ties");
    CHECK_LOOP(t, bad_ff, "element-wise fixed vs float > 1");
    (void)n;
}

/* --sweep: per op and scale kind, fixed and float mode vs the exact value and vs each other. */
typedef struct ElemStat {
    long n, fix_off, flt_off, ff_diff, ff_tie, ties;
    long double fix_err, flt_err, fix_slack; /* max |y - t| (unsaturated); max (|y-t| - 1/2) / E */
    int32_t ff_max;
} ElemStat;

static void
elem_sweep(long n, int print, Tally *t)
{
    static const char *const kind[3] = {"random", "powers of two", "random, 16-bit operands"};
    if (print)
        printf("| op | scales | cases | exact ties | fixed != rhu(t) | fixed max \\|y - t\\| | "
               "float != rne(t) | float max \\|y - t\\| | fixed != float | max \\|diff\\| |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int op = 0; op < EOP_N; op++) {
        for (int k = 0; k < 3; k++) {
            Rng r = {(unsigned long long)(100 + 3 * op + k)};
            ElemStat s;
            memset(&s, 0, sizeof s);
            for (long i = 0; i < n; i++) {
                ElemCase c;
                if (!elem_case(&r, op, k == 1, k == 2 ? 16 : 8, &c))
                    continue;
                s.n++;
                long double tv = rat_ld(c.t);
                int tie = rat_tie(c.t);
                s.ties += tie;
                s.fix_off += c.yfix != sat64((i128)rat_rhu(c.t) + c.zy, c.lo, c.hi);
                s.flt_off += c.yflt != sat64((i128)rat_rne(c.t) + c.zy, c.lo, c.hi);
                int32_t d = c.yfix > c.yflt ? c.yfix - c.yflt : c.yflt - c.yfix;
                s.ff_diff += d != 0;
                s.ff_tie += d != 0 && tie;
                if (d > s.ff_max)
                    s.ff_max = d;
                if (c.yfix > c.lo && c.yfix < c.hi) {
                    long double e = fabsl((long double)(c.yfix - c.zy) - tv);
                    if (e > s.fix_err)
                        s.fix_err = e;
                }
                if (c.yflt > c.lo && c.yflt < c.hi) {
                    long double e = fabsl((long double)(c.yflt - c.zy) - tv);
                    if (e > s.flt_err)
                        s.flt_err = e;
                }
            }
            if (print)
                printf("| %s | %s | %ld | %ld | %ld | %.9Lf | %ld | %.9Lf | %ld (%ld at ties) | %d |\n",
                       eop_name[op], kind[k], s.n, s.ties, s.fix_off, s.fix_err, s.flt_off,
                       s.flt_err, s.ff_diff, s.ff_tie, (int)s.ff_max);
            CHECK(t, s.ff_max <= 1, "%s %s: fixed vs float max diff %d", eop_name[op], kind[k],
                  (int)s.ff_max);
        }
    }
}

/* ---- fixed vs float sweep ---- */

typedef struct SweepStat {
    long n, diff, diff_tie, diff_big_acc;
    int32_t max_abs;
} SweepStat;

/* yf from float mode, yx from fixed mode. A difference is a "tie" difference when the exact
 * product acc * mf (exact in long double: 31 + 24 bits) is k + 1/2, i.e. only the tie rule
 * (half-even vs half-up) differs; otherwise it comes from the f32 rounding of (float)acc or of
 * the product (or, for source B, from the multiplier itself). */
static void
sweep_one(SweepStat *st, int32_t yf, int32_t yx, int32_t acc, float mf)
{
    int32_t d = yf > yx ? yf - yx : yx - yf;
    long double exact = (long double)acc * (long double)mf;
    st->n++;
    if (d) {
        st->diff++;
        st->diff_tie += exact - floorl(exact) == 0.5L;
        st->diff_big_acc += acc > (1 << 24) || acc < -(1 << 24);
    }
    if (d > st->max_abs)
        st->max_abs = d;
}

/* An accumulator whose real output acc * m lands uniformly in [lo, hi] widened by 5% on each
 * side (so saturation is exercised too), clamped to int32. */
static int32_t
acc_for_range(Rng *r, double m, int32_t lo, int32_t hi)
{
    double w = (double)hi - (double)lo;
    double tgt = (double)lo - 0.05 * w + 1.1 * w * ((double)rng_u32(r) / 4294967296.0);
    double a = rint(tgt / m) + (double)((int32_t)(rng_u32(r) % 5) - 2);
    if (a > INT32_MAX)
        a = INT32_MAX;
    if (a < INT32_MIN)
        a = INT32_MIN;
    return (int32_t)a;
}

enum { SW_I8, SW_U8, SW_I16, SW_WIDE, SW_N };

/* n random multipliers m = (sx * sw) / sy with sx in [2^-12, 2^-2), sw in [2^-12, 2^-4),
 * sy in [2^-10, 1) (m in [2^-24, 2^4)). Float mode uses the f32 multiplier mf. Fixed mode:
 * source A builds (mult, shift) from mf (exact); source B from the f64 m = (double)sx*sw/sy.
 * For i8, u8 and i16 outputs (random zp) the accumulator targets the output range; "wide" uses a
 * log-uniform int32 accumulator and an unsaturated int32 output (zp 0). */
static void
sweep(long n, SweepStat st[2][SW_N], unsigned long long seed)
{
    static const int32_t lo[3] = {-128, 0, -32768}, hi[3] = {127, 255, 32767};
    Rng r = {seed};
    memset(st, 0, sizeof(SweepStat) * 2 * SW_N);
    for (long i = 0; i < n; i++) {
        float sx = rng_f32_pos(&r, -12, -2), sw = rng_f32_pos(&r, -12, -4);
        float sy = rng_f32_pos(&r, -10, 0);
        float mf = qn_requant_mult_f32(sx, sw, sy);
        double md = (double)sx * (double)sw / (double)sy;
        QnFixed f[2];
        if (!qn_fixed_from_real(mf, &f[0]) || !qn_fixed_from_real(md, &f[1]))
            continue;
        for (int k = 0; k < SW_N; k++) {
            int32_t acc, zp, qmin, qmax;
            if (k == SW_WIDE) {
                acc = rng_acc(&r), zp = 0, qmin = INT32_MIN, qmax = INT32_MAX;
            } else {
                qmin = lo[k], qmax = hi[k];
                zp = qmin + (int32_t)(rng_u32(&r) % (uint32_t)(qmax - qmin + 1));
                acc = acc_for_range(&r, mf, qmin - zp, qmax - zp);
            }
            int32_t yf = qn_requant_float(acc, mf, zp, qmin, qmax);
            for (int a = 0; a < 2; a++)
                sweep_one(&st[a][k], yf, qn_requant_fixed(acc, f[a], zp, qmin, qmax), acc, mf);
        }
    }
}

static void
test_sweep(Tally *t, long n, int print)
{
    SweepStat st[2][SW_N];
    sweep(n, st, 8);
    static const char *const src[2] = {"A (fixed from f32 mult)", "B (fixed from f64 mult)"};
    static const char *const rng[SW_N] = {"i8", "u8", "i16", "wide i32"};
    for (int a = 0; a < 2; a++) {
        for (int k = 0; k < SW_N; k++) {
            SweepStat *s = &st[a][k];
            if (print)
                printf("sweep %s, %-8s: %ld pairs, %ld differ (%ld at exact ties, %ld with "
                       "|acc| > 2^24), max |diff| %d\n",
                       src[a], rng[k], s->n, s->diff, s->diff_tie, s->diff_big_acc,
                       (int)s->max_abs);
            if (k != SW_WIDE)
                CHECK(t, s->max_abs <= 1, "fixed vs float %s %s: max diff %d > 1", src[a], rng[k],
                      (int)s->max_abs);
        }
    }
}

int
main(int argc, char **argv)
{
    Tally t = {0, 0};
    long sweep_n = 1000000;
    int print = 0;
    if (argc == 3 && strcmp(argv[1], "--sweep") == 0) {
        sweep_n = strtol(argv[2], NULL, 10);
        print = 1;
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--sweep N]\n", argv[0]);
        return 2;
    }
    test_round_half_even(&t);
    test_round_div(&t);
    test_quantize(&t);
    test_dequantize(&t);
    test_requant_float(&t);
    test_fixed_from_real(&t, print);
    test_requant_fixed(&t);
    test_bias(&t);
    test_qparams(&t);
    test_qrange(&t);
    test_rescale(&t);
    test_requant_fixed_mult(&t);
    test_elem_fixed_ties(&t);
    test_elem_fixed_random(&t);
    test_sweep(&t, sweep_n, print);
    elem_sweep(sweep_n / 10, print, &t);
    printf("%ld passed, %ld failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
