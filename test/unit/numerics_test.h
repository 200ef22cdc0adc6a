/* numerics_test.h: what the numerics unit tests share (a header, not a test).
 * The tally and CHECK macros, a fixed-seed LCG (runs are reproducible) and the independent
 * references: rint() in double and ORT's 1.5*2^23 magic-number add for round-half-even,
 * __int128 rational arithmetic for fixed-point requantization, bias quantization and integer
 * rounding division. Used by test_numerics.c (rounding, quantize, bias, parameters),
 * test_numerics_requant.c (conv requantization, float and fixed) and test_numerics_fixed.c
 * (fixed-mode rescale, element-wise ops and averages). */
#ifndef QDQC_TEST_NUMERICS_TEST_H
#define QDQC_TEST_NUMERICS_TEST_H

#include "numerics/elementwise.h"
#include "numerics/numerics.h"

#include <fenv.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __int128 i128;

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

static inline uint32_t
rng_u32(Rng *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 32);
}

static inline uint64_t
rng_u64(Rng *r)
{
    uint64_t hi = rng_u32(r);
    return (hi << 32) | rng_u32(r);
}

/* int32 with log-uniform magnitude in [0, 2^31] and random sign (reaches INT32_MIN). */
static inline int32_t
rng_acc(Rng *r)
{
    uint32_t k = rng_u32(r) % 32;
    int64_t mag = (int64_t)(rng_u32(r) >> 1) >> k;
    if (rng_u32(r) & 1)
        return (int32_t)(-mag - (rng_u32(r) % 64 == 0 ? 1 : 0));
    return (int32_t)mag;
}

/* Positive f32 in [2^lo, 2^hi), log-uniform exponent, random 23-bit mantissa. */
static inline float
rng_f32_pos(Rng *r, int lo, int hi)
{
    int e = lo + (int)(rng_u32(r) % (uint32_t)(hi - lo));
    uint32_t mant = 0x800000u | (rng_u32(r) & 0x7fffffu);
    return ldexpf((float)mant, e - 23);
}

/* ---- references ---- */

/* round half even by rint() in double (the default rounding mode); (double)x is exact. */
static inline int64_t
ref_rint_f32(float x)
{
    return (int64_t)rint((double)x);
}

/* ONNX Runtime's scalar MlasRequantizeOutput rounding: add 1.5*2^23, read the mantissa bits.
 * Valid for |x| <= 2^22, default rounding mode. */
static inline int32_t
ref_magic_round(float x)
{
    volatile float biased = x + 12582912.0f;
    float b = biased;
    uint32_t bits;
    memcpy(&bits, &b, sizeof bits);
    return (int32_t)bits - 0x4B400000;
}

/* The requant_float reference from the design brief, literally. */
static inline int32_t
ref_requant_float(int32_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    float f = (float)acc * mult;
    f = fminf(fmaxf(f, (float)(qmin - zp)), (float)(qmax - zp));
    return (int32_t)ref_rint_f32(f) + zp;
}

/* ORT's scalar MlasRequantizeOutput (generalised to any [qmin, qmax]). */
static inline int32_t
ref_requant_ort(int32_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    float f = (float)acc * mult;
    float lo = (float)(qmin - zp), hi = (float)(qmax - zp);
    f = f < lo ? lo : f; /* std::max(f, lo) */
    f = hi < f ? hi : f; /* std::min(f, hi) */
    return ref_magic_round(f) + zp;
}

static inline int64_t
sat64(i128 v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : (int64_t)v;
}

/* floor(num / den) and remainder in [0, den), den > 0, in int128. */
static inline i128
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
static inline int32_t
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
static inline i128
ref_round_div128(i128 num, i128 den)
{
    i128 rem;
    i128 q = floor_div128(num, den, &rem);
    if (2 * rem > den || (2 * rem == den && (q & 1) != 0))
        q += 1;
    return q;
}

/* f32 x = M * 2^e with integer M (|M| < 2^24); returns false for 0 / non-finite. */
static inline int
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
static inline int32_t
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

/* The command line of the numerics tests: none, or --sweep N (*print set) where sweep_n is not
 * NULL. Returns false, with a usage line, on anything else. */
static inline bool
numerics_test_args(int argc, char **argv, long *sweep_n, int *print)
{
    *print = 0;
    if (sweep_n && argc == 3 && strcmp(argv[1], "--sweep") == 0) {
        *sweep_n = strtol(argv[2], NULL, 10);
        *print = 1;
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s%s\n", argv[0], sweep_n ? " [--sweep N]" : "");
        return false;
    }
    return true;
}

/* Prints the tally ("N passed, 0 failed"); the exit status. */
static inline int
numerics_test_done(const Tally *t)
{
    printf("%ld passed, %ld failed\n", t->passed, t->failed);
    return t->failed ? 1 : 0;
}

#endif
