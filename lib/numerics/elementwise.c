/* elementwise.c: qadd, qsub, qmul, qavgpool/qreduce_mean and requantize arithmetic (float
 * mode). See elementwise.h for the exact definitions and docs/numerics-elementwise.md. */
#include "numerics/elementwise.h"

#include "numerics/numerics.h"

#include <float.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "elementwise.c needs FLT_EVAL_METHOD == 0"
#endif

static int32_t
finish(float v, int32_t zy, int32_t lo, int32_t hi)
{
    /* rounding first, in int64, so that a huge v saturates instead of wrapping */
    return qn_saturate(qn_round_half_even_f32_i64(v) + zy, lo, hi);
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

int32_t
qn_qavg(int64_t sum, int64_t count, float sx, float sy, int32_t zy, int32_t lo, int32_t hi)
{
    if (count <= 0)
        return qn_saturate(zy, lo, hi);
    float v = ((float)sum * sx) / (float)count;
    return finish(v / sy, zy, lo, hi);
}
