/* test_numerics_requant.c: unit tests for the conv requantization of lib/numerics, float mode
 * (ORT's order; against the literal reference and ORT's magic-number rounding) and fixed mode
 * (multiplier construction, int128 reference), and a fixed-vs-float sweep.
 *
 * Usage: test_numerics_requant            run the tests (prints "N passed, 0 failed")
 *        test_numerics_requant --sweep N  also print fixed-vs-float statistics over N random
 *                                         pairs (conv requantization; docs/numerics.md) */
#include "numerics_test.h"

/* The sweep classifies ties with an exact acc * mult (31 + 24 significant bits). */
_Static_assert(LDBL_MANT_DIG >= 55, "long double must hold a 55-bit product exactly");

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

/* ---- the int64 accumulator of 16-bit activations ---- */

/* ref_requant_fixed over an int64 acc (the int128 reference takes any acc). */
static int32_t
ref_requant_fixed_wide(int64_t acc, QnFixed f, int32_t zp, int32_t qmin, int32_t qmax)
{
    i128 num = (i128)acc * f.mult;
    i128 den = (i128)1 << f.shift;
    i128 rem;
    i128 q = floor_div128(num, den, &rem);
    if (2 * rem >= den)
        q += 1;
    return (int32_t)sat64(q + zp, qmin, qmax);
}

/* int64 with log-uniform magnitude in [0, 2^60) and random sign. */
static int64_t
rng_acc_wide(Rng *r)
{
    uint32_t k = rng_u32(r) % 61;
    int64_t mag = (int64_t)(rng_u64(r) >> 4) >> k;
    return rng_u32(r) & 1 ? -mag : mag;
}

static void
test_requant_wide(Tally *t)
{
    /* equal to the int32 functions on every int32 accumulator */
    Rng r = {11};
    long bad_f = 0, bad_x = 0, bad_ref = 0, bad_conv = 0, n_split = 0, n_clamp = 0;
    for (int i = 0; i < 400000; i++) {
        int32_t acc = rng_acc(&r);
        float m = rng_f32_pos(&r, -24, 4);
        QnFixed f;
        if (!qn_fixed_from_real(m, &f))
            continue;
        int32_t zp = (int32_t)(rng_u32(&r) % 65536) - 32768;
        bad_f += qn_requant_float_wide(acc, m, zp, -32768, 32767) !=
                 qn_requant_float(acc, m, zp, -32768, 32767);
        bad_x += qn_requant_fixed_wide(acc, f, zp, -32768, 32767) !=
                 qn_requant_fixed(acc, f, zp, -32768, 32767);
    }
    CHECK_LOOP(t, bad_f, "requant_float_wide == requant_float on int32 accumulators");
    CHECK_LOOP(t, bad_x, "requant_fixed_wide == requant_fixed on int32 accumulators");

    /* Against the int128 rational reference, every shift (both formulas), 8- and
     * 16-bit output ranges, a narrow clamp, ties planted (acc * mult = odd * 2^(shift-1)),
     * |acc| < 2^60. */
    for (int i = 0; i < 1000000; i++) {
        int64_t acc = rng_acc_wide(&r);
        QnFixed f = {(int32_t)((1u << 30) | (rng_u32(&r) & 0x3fffffffu)),
                     1 + (int32_t)(rng_u32(&r) % 62)};
        if (i % 8 == 0) { /* a tie: acc = odd * 2^(shift-1) / mult when mult is a power of 2 */
            f.mult = 1 << 30;
            int e = f.shift - 1 - 30; /* acc * 2^30 / 2^shift = acc * 2^(30 - shift) */
            if (e >= 0 && e < 49)
                acc = (int64_t)((rng_u32(&r) % 1000) * 2 + 1) * ((int64_t)1 << e) *
                      (rng_u32(&r) & 1 ? -1 : 1);
        }
        int kind = (int)(rng_u32(&r) % 4);
        int32_t qmin = kind == 0 ? -128 : kind == 1 ? 0 : kind == 2 ? -32768 : 0;
        int32_t qmax = kind == 0 ? 127 : kind == 1 ? 255 : kind == 2 ? 32767 : 65535;
        int32_t zp = qmin + (int32_t)(rng_u32(&r) % (uint32_t)(qmax - qmin + 1));
        if (rng_u32(&r) % 4 == 0)
            qmin = zp; /* fused Relu */
        int32_t y = qn_requant_fixed_wide(acc, f, zp, qmin, qmax);
        bad_ref += y != ref_requant_fixed_wide(acc, f, zp, qmin, qmax);
        n_split += f.shift >= 31;
        n_clamp += f.shift < 31 && (acc > QN_RESCALE_VMAX || acc < -QN_RESCALE_VMAX);
        /* float: one correctly rounded int64 -> f32 conversion (long double is exact here) */
        float m = (float)qn_fixed_to_real(f);
        float fc = (float)(long double)acc * m;
        float lo = (float)((int64_t)qmin - zp), hi = (float)((int64_t)qmax - zp);
        fc = fc < lo ? lo : fc > hi ? hi : fc;
        int64_t want = (int64_t)ref_rint_f32(fc) + zp;
        want = want < qmin ? qmin : want > qmax ? qmax : want;
        bad_conv += qn_requant_float_wide(acc, m, zp, qmin, qmax) != (int32_t)want;
    }
    CHECK_LOOP(t, bad_ref, "requant_fixed_wide vs int128 rational reference");
    CHECK_LOOP(t, bad_conv, "requant_float_wide vs f32 of the exact accumulator");
    CHECK(t, n_split > 100000 && n_clamp > 1000, "both formulas and the clamp exercised (%ld, %ld)",
          n_split, n_clamp);
    /* extremes of the documented domain */
    QnFixed big = {INT32_MAX, 1}, tiny = {1 << 30, 62};
    CHECK(t, qn_requant_fixed_wide(QN_WIDE_ACC_MAX, big, 0, -32768, 32767) == 32767, "max acc, big m");
    CHECK(t, qn_requant_fixed_wide(-QN_WIDE_ACC_MAX, big, 0, -32768, 32767) == -32768, "min acc, big m");
    CHECK(t, qn_requant_fixed_wide(QN_WIDE_ACC_MAX, tiny, 0, -32768, 32767) ==
                 ref_requant_fixed_wide(QN_WIDE_ACC_MAX, tiny, 0, -32768, 32767),
          "max acc, tiny m");
    /* 3 * 2^31 * 2^-32 = 1.5 -> 2; -1.5 -> -1 (ties toward +inf), acc beyond 2^32 */
    QnFixed m32 = {1 << 30, 62};
    CHECK(t, qn_requant_fixed_wide(INT64_C(3) << 31, m32, 0, -10, 10) == 2, "1.5 -> 2 (wide)");
    CHECK(t, qn_requant_fixed_wide(-(INT64_C(3) << 31), m32, 0, -10, 10) == -1, "-1.5 -> -1 (wide)");
    /* float: 2^40 + 1 rounds to 2^40 in f32 (one rounding of the int64) */
    CHECK(t, qn_requant_float_wide((INT64_C(1) << 40) + 1, 0x1p-40f, 0, -10, 10) == 1, "f32 of 2^40+1");
    CHECK(t, qn_requant_float_wide((INT64_C(3) << 40), 0x1p-41f, 0, -10, 10) == 2, "1.5 -> 2 (even)");
    CHECK(t, qn_requant_float_wide((INT64_C(5) << 40), 0x1p-41f, 0, -10, 10) == 2, "2.5 -> 2 (even)");
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


/* qn_requant_channels: channel m takes weight scale m % nsw; the first channel whose fixed
 * multiplier is out of range is returned, the ones before it are filled. */
static void
test_requant_channels(Tally *t)
{
    const float sw[2] = {0.5f, 0.25f};
    float mult[4];
    QnFixed fix[4], f;
    int64_t bad = qn_requant_channels(0.1f, sw, 2, 0.2f, 4, mult, fix);
    CHECK(t, bad == -1, "per-axis: channel %lld refused", (long long)bad);
    for (int m = 0; m < 4; m++) {
        float w = sw[m % 2];
        CHECK(t, mult[m] == qn_requant_mult_f32(0.1f, w, 0.2f), "per-axis mult[%d]", m);
        CHECK(t, qn_requant_fixed_mult(0.1f, w, 0.2f, &f) && fix[m].mult == f.mult &&
                 fix[m].shift == f.shift, "per-axis fix[%d]", m);
    }
    bad = qn_requant_channels(0.1f, sw, 1, 0.2f, 3, mult, NULL);
    CHECK(t, bad == -1 && mult[2] == qn_requant_mult_f32(0.1f, 0.5f, 0.2f), "per-tensor");
    const float huge[2] = {1.0f, 1e30f};
    bad = qn_requant_channels(1.0f, huge, 2, 1.0f, 2, mult, fix);
    CHECK(t, bad == 1 && fix[0].mult == 1 << 30 && fix[0].shift == 30,
          "unrepresentable channel 1, got %lld", (long long)bad);
}

int
main(int argc, char **argv)
{
    Tally t = {0, 0};
    long sweep_n = 1000000;
    int print;
    if (!numerics_test_args(argc, argv, &sweep_n, &print))
        return 2;
    test_requant_float(&t);
    test_fixed_from_real(&t, print);
    test_requant_fixed(&t);
    test_requant_channels(&t);
    test_requant_wide(&t);
    test_sweep(&t, sweep_n, print);
    return numerics_test_done(&t);
}
