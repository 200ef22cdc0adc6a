/* elementwise.c: qadd, qsub, qmul, qavgpool/qreduce_mean and requantize arithmetic, float
 * mode (f32, ONNX Runtime's / the float QDQ graph's order) and fixed mode (integers only, one
 * qn_rescale per rescaling, multipliers derived here at compile time). See elementwise.h for
 * the exact definitions and docs/numerics.md for the choices and error bounds. */
#include "numerics/elementwise.h"

#include "numerics/numerics.h"

#include <float.h>
#include <math.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "elementwise.c needs FLT_EVAL_METHOD == 0"
#endif

static int32_t
finish(float v, int32_t zy, int32_t lo, int32_t hi)
{
    /* rounding first, in int64, so that a huge v saturates instead of wrapping; then bounded
     * to +-2^40 so that adding the zero point cannot overflow (qdqc-fuzz --mutate, mutant 542:
     * an output scale of 1.2e-21 gave INT64_MAX + 255 -> 0 instead of 255) */
    int64_t r = qn_round_half_even_f32_i64(v);
    const int64_t bound = (int64_t)1 << 40;
    r = r > bound ? bound : r < -bound ? -bound : r;
    return qn_saturate(r + zy, lo, hi);
}

int32_t
qn_requantize(int32_t x, float sx, int32_t zx, float sy, int32_t zy, int32_t lo, int32_t hi)
{
    float v = sx * (float)((int64_t)x - zx);
    return finish(v / sy, zy, lo, hi);
}

int32_t
qn_qadd(int32_t a, float sa, int32_t za, int32_t b, float sb, int32_t zb, float sy, int32_t zy,
        int32_t lo, int32_t hi)
{
    float va = sa * (float)((int64_t)a - za);
    float vb = sb * (float)((int64_t)b - zb);
    return finish((va + vb) / sy, zy, lo, hi);
}

int32_t
qn_qsub(int32_t a, float sa, int32_t za, int32_t b, float sb, int32_t zb, float sy, int32_t zy,
        int32_t lo, int32_t hi)
{
    float va = sa * (float)((int64_t)a - za);
    float vb = sb * (float)((int64_t)b - zb);
    return finish((va - vb) / sy, zy, lo, hi);
}

int32_t
qn_qmul(int32_t a, float sa, int32_t za, int32_t b, float sb, int32_t zb, float sy, int32_t zy,
        int32_t lo, int32_t hi)
{
    float va = sa * (float)((int64_t)a - za);
    float vb = sb * (float)((int64_t)b - zb);
    return finish((va * vb) / sy, zy, lo, hi);
}

bool
qn_div_as_recip(QnElemOp op, float sa, int32_t za, int32_t amin, int32_t amax, float sb,
                int32_t zb, int32_t bmin, int32_t bmax, float sy, int32_t zy, int32_t lo,
                int32_t hi, float *inv)
{
    if (!(sy > 0) || !isfinite(sy) || amax < amin || amax - amin > 255 ||
        (op != QN_REQUANTIZE && (bmax < bmin || bmax - bmin > 255)))
        return false;
    float r = 1.0f / sy;
    if (!isfinite(r))
        return false;
    if (op == QN_REQUANTIZE)
        bmin = bmax = 0;
    for (int32_t a = amin; a <= amax; a++) {
        float va = sa * (float)((int64_t)a - za);
        for (int32_t b = bmin; b <= bmax; b++) {
            float vb = sb * (float)((int64_t)b - zb);
            float v = op == QN_QADD ? va + vb : op == QN_QSUB ? va - vb : op == QN_QMUL ? va * vb : va;
            if (finish(v / sy, zy, lo, hi) != finish(v * r, zy, lo, hi))
                return false;
        }
    }
    *inv = r;
    return true;
}

int32_t
qn_qavg(int64_t sum, int64_t count, float sx, float sy, int32_t zy, int32_t lo, int32_t hi)
{
    if (count <= 0)
        return qn_saturate(zy, lo, hi);
    float v = ((float)sum * sx) / (float)count;
    return finish(v / sy, zy, lo, hi);
}

/* ---- fixed mode ---- */

static const char *const bad_scale = "scales must be positive and finite";
static const char *const bad_mult =
    "multiplier outside the fixed-point range [2^-32, 2^29] (docs/numerics.md)";

static bool
scale_ok(float s)
{
    return s > 0.0f && isfinite(s);
}

int
qn_range_bits(int64_t lo, int64_t hi)
{
    uint64_t w = hi > lo ? (uint64_t)hi - (uint64_t)lo : 0;
    int b = 0;
    while (w) {
        b++;
        w >>= 1;
    }
    return b;
}

static int32_t
sat_zy(int64_t v, int32_t zy, int32_t lo, int32_t hi)
{
    /* |v| <= 2^62 from qn_rescale: the sum cannot overflow */
    return qn_saturate(v + zy, lo, hi);
}

const char *
qn_requantize_fixed_params(float sx, float sy, QnFixed *m)
{
    if (!scale_ok(sx) || !scale_ok(sy))
        return bad_scale;
    return qn_fixed_from_real((double)sx / (double)sy, m) ? NULL : bad_mult;
}

int32_t
qn_requantize_fixed(int32_t x, int32_t zx, QnFixed m, int32_t zy, int32_t lo, int32_t hi)
{
    return sat_zy(qn_rescale((int64_t)x - zx, m), zy, lo, hi);
}

const char *
qn_qadd_fixed_params(float sa, float sb, float sy, int bits, QnAddFixed *p)
{
    if (bits < 1 || bits > 16)
        return "operands wider than 16 bits";
    if (!scale_ok(sa) || !scale_ok(sb) || !scale_ok(sy))
        return bad_scale;
    int L = 28 - bits;
    double mx = sa > sb ? (double)sa : (double)sb;
    /* ldexp scales by a power of two exactly: the f64 division is the only rounding before
     * qn_fixed_from_real's. */
    QnAddFixed r = {.lshift = L};
    if (!qn_fixed_from_real(ldexp((double)sa / mx, L), &r.a) ||
        !qn_fixed_from_real(ldexp((double)sb / mx, L), &r.b) ||
        !qn_fixed_from_real(ldexp(mx / (double)sy, -L), &r.y))
        return bad_mult;
    *p = r;
    return NULL;
}

int32_t
qn_qadd_fixed(int32_t a, int32_t za, int32_t b, int32_t zb, const QnAddFixed *p, int32_t zy,
              int32_t lo, int32_t hi)
{
    int64_t A = qn_rescale((int64_t)a - za, p->a), B = qn_rescale((int64_t)b - zb, p->b);
    return sat_zy(qn_rescale(A + B, p->y), zy, lo, hi);
}

int32_t
qn_qsub_fixed(int32_t a, int32_t za, int32_t b, int32_t zb, const QnAddFixed *p, int32_t zy,
              int32_t lo, int32_t hi)
{
    int64_t A = qn_rescale((int64_t)a - za, p->a), B = qn_rescale((int64_t)b - zb, p->b);
    return sat_zy(qn_rescale(A - B, p->y), zy, lo, hi);
}

const char *
qn_qmul_fixed_params(float sa, float sb, float sy, int bits, QnFixed *m)
{
    if (bits < 1 || bits > 16)
        return "operands wider than 16 bits";
    if (!scale_ok(sa) || !scale_ok(sb) || !scale_ok(sy))
        return bad_scale;
    return qn_fixed_from_real((double)sa * (double)sb / (double)sy, m) ? NULL : bad_mult;
}

int32_t
qn_qmul_fixed(int32_t a, int32_t za, int32_t b, int32_t zb, QnFixed m, int32_t zy, int32_t lo,
              int32_t hi)
{
    int64_t v = ((int64_t)a - za) * ((int64_t)b - zb);
    return sat_zy(qn_rescale(v, m), zy, lo, hi);
}

const char *
qn_qavg_fixed_params(float sx, float sy, int64_t count, int bits, QnFixed *m)
{
    if (bits < 1 || bits > 32 || count < 1 ||
        count > QN_RESCALE_VMAX / (int64_t)((UINT64_C(1) << bits) - 1))
        return "the sum of the averaged values may exceed 2^32 - 1";
    if (!scale_ok(sx) || !scale_ok(sy))
        return bad_scale;
    return qn_fixed_from_real((double)sx / ((double)sy * (double)count), m) ? NULL : bad_mult;
}

int32_t
qn_qavg_fixed(int64_t sum, QnFixed m, int32_t zy, int32_t lo, int32_t hi)
{
    return sat_zy(qn_rescale(sum, m), zy, lo, hi);
}
