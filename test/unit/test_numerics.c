/* test_numerics.c: unit tests for lib/numerics' rounding, quantize/dequantize, bias
 * quantization and quantization parameters, against exact references (numerics_test.h).
 * Requantization is in test_numerics_requant.c, the fixed-mode rescale, element-wise ops and
 * averages in test_numerics_fixed.c.
 *
 * Usage: test_numerics                run the tests (prints "N passed, 0 failed") */
#include "numerics_test.h"

#include "numerics/dynamic.h"

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

/* lib/numerics/dynamic.h: DynamicQuantizeLinear's parameters (test_dynamicquantizelinear's,
 * ONNX Runtime's scale 1 for an all-zero input, no scale from an infinite range), the
 * matmul_integer epilogue (two f32 products in the graph's order, the int32 -> f32 rounding
 * beyond 2^24), and the per-row int8 activations (NaN -> 0, saturation at +-127, scale 0). */
static void
test_dynamic(Tally *t)
{
    float s;
    int32_t zp;
    /* test_dynamicquantizelinear: x = [0, 2, -3, -2.5, 1.34, 0.5] */
    CHECK(t, qn_dynamic_qparams(-3.0f, 2.0f, &s, &zp) && s == 5.0f / 255.0f && zp == 153,
          "dql: s %g zp %d", (double)s, zp);
    /* every x <= 0 (max widened to 0: zp 255), every x >= 0 (min widened to 0: zp 0) */
    CHECK(t, qn_dynamic_qparams(-1.0f, 0.0f, &s, &zp) && s == 1.0f / 255.0f && zp == 255,
          "max adjusted: s %g zp %d", (double)s, zp);
    CHECK(t, qn_dynamic_qparams(0.0f, 2.5f, &s, &zp) && s == 2.5f / 255.0f && zp == 0,
          "min adjusted: s %g zp %d", (double)s, zp);
    CHECK(t, qn_dynamic_qparams(0.0f, 0.0f, &s, &zp) && s == 1.0f && zp == 0, "all zero");
    CHECK(t, !qn_dynamic_qparams(-INFINITY, 1.0f, &s, &zp) && !qn_dynamic_qparams(0.0f, INFINITY, &s, &zp),
          "infinite range");
    CHECK(t, !qn_dynamic_qparams(-3e38f, 3e38f, &s, &zp), "range overflows to inf");
    /* zp = rne(0 - mn / s): a tie at 127.5 rounds to 128 */
    float mn = -127.5f, mx = 127.5f;
    CHECK(t, qn_dynamic_qparams(mn, mx, &s, &zp) && s == 1.0f && zp == 128, "zp tie: %d", zp);

    /* (float)acc * (sa * sb): not (float)acc * sa * sb */
    float sa = 0.1f, sb = 0.3f;
    float want = (float)12345 * (float)(sa * sb);
    CHECK(t, qn_scale_acc(12345, sa, sb) == want, "epilogue order");
    CHECK(t, qn_scale_acc((1 << 24) + 1, 1.0f, 1.0f) == 16777216.0f, "int -> f32 rounds (even)");
    CHECK(t, qn_scale_acc((1 << 24) + 3, 1.0f, 1.0f) == 16777220.0f, "int -> f32 rounds (even, up)");
    CHECK(t, qn_scale_acc(INT32_MIN, 1.0f, -1.0f) == 2147483648.0f, "INT32_MIN");

    CHECK(t, qn_row_scale_i8(127.0f) == 1.0f && qn_row_scale_i8(0.0f) == 0.0f, "row scale");
    CHECK(t, qn_quantize_row_i8(2.5f, 1.0f) == 2 && qn_quantize_row_i8(-3.5f, 1.0f) == -4,
          "row ties to even");
    CHECK(t, qn_quantize_row_i8(NAN, 0.5f) == 0 && qn_quantize_row_i8(1e30f, 1.0f) == 127 &&
             qn_quantize_row_i8(-INFINITY, 1.0f) == -127, "row NaN / saturation");
    CHECK(t, qn_quantize_row_i8(0.0f, 0.0f) == 0 && qn_quantize_row_i8(3.0f, 0.0f) == 3,
          "scale 0 divides by 1");
}

int
main(int argc, char **argv)
{
    Tally t = {0, 0};
    int print;
    if (!numerics_test_args(argc, argv, NULL, &print))
        return 2;
    test_round_half_even(&t);
    test_round_div(&t);
    test_quantize(&t);
    test_dequantize(&t);
    test_bias(&t);
    test_qparams(&t);
    test_qrange(&t);
    test_dynamic(&t);
    return numerics_test_done(&t);
}
