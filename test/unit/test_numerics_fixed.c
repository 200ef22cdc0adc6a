/* test_numerics_fixed.c: unit tests for --requant=fixed beyond the conv requantization: the
 * rescale (qn_rescale), the conv multiplier built from the exact ratio, and the fixed-mode
 * element-wise ops, averages and requantize (numerics/elementwise.h), each against the int128
 * evaluation of its definition, against the exact rational value of the op (with explicit ties
 * of both signs) and against float mode.
 *
 * Usage: test_numerics_fixed            run the tests (prints "N passed, 0 failed")
 *        test_numerics_fixed --sweep N  also print the element-wise tables of docs/numerics.md
 *                                       (N/10 cases per op and scale kind) */
#include "numerics_test.h"

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

int
main(int argc, char **argv)
{
    Tally t = {0, 0};
    long sweep_n = 1000000;
    int print;
    if (!numerics_test_args(argc, argv, &sweep_n, &print))
        return 2;
    test_rescale(&t);
    test_requant_fixed_mult(&t);
    test_elem_fixed_ties(&t);
    test_elem_fixed_random(&t);
    elem_sweep(sweep_n / 10, print, &t);
    return numerics_test_done(&t);
}
