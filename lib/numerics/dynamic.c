/* dynamic.c: run-time quantization of activations (dynamic.h, docs/numerics.md). */
#include "numerics/dynamic.h"

#include <math.h>

#include "numerics/numerics.h"

bool
qn_dynamic_qparams(float mn, float mx, float *scale, int32_t *zp)
{
    float s = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    if (!(s > 0) || !isfinite(s))
        return false;
    float izp = 0.0f - mn / s;
    izp = izp < 0 ? 0 : izp > 255 ? 255 : izp;
    *scale = s;
    *zp = qn_round_half_even_f32(izp);
    return true;
}

float
qn_scale_acc(int32_t acc, float sa, float sb)
{
    float s = sa * sb;
    return (float)acc * s;
}

float
qn_row_scale_i8(float amax)
{
    return amax / 127.0f;
}

int32_t
qn_quantize_row_i8(float x, float s)
{
    return qn_quantize_f32(x, s > 0 ? s : 1.0f, 0, -127, 127);
}
