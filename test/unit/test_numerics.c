/* test_numerics.c: unit tests for lib/numerics against exact references.
 *
 * Every function is checked against an independent formulation: rint() in double or ORT's
 * 1.5*2^23 magic-number add for round-half-even, __int128 rational arithmetic for fixed-point
 * requantization, bias quantization and integer rounding division. Random inputs come from a
 * fixed-seed LCG, so runs are reproducible.
 *
 * Usage: test_numerics                run the tests (prints "N passed, 0 failed")
 *        test_numerics --sweep N      also print fixed-vs-float statistics over N random pairs */
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
    test_sweep(&t, sweep_n, print);
    printf("%ld passed, %ld failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
