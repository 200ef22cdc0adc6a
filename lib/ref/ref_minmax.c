/* ref_minmax.c: reference reduce_min, reduce_max (ONNX ReduceMin / ReduceMax) and round (ONNX
 * Round), f32: the ops of DynamicQuantizeLinear's expanded (function-body) form.
 *   reduce_min / reduce_max: each result is the least (greatest) of its window, visited in
 *   row-major order, a value replacing the running one only when strictly less (greater), from
 *   +inf (-inf: an empty window's result); any NaN in the window makes the result NaN (a quiet
 *   NaN, as numpy's minimum.reduce propagates it).
 *   round: half to even; NaN, infinities and |x| >= 2^23 (already integers) unchanged; a value
 *   that rounds to zero keeps its sign (roundeven). */
#include "ref_impl.h"

#include <math.h>

#include "numerics/numerics.h"

static bool
reduce_minmax(RefCtx *c, Node *n)
{
    const float *x = ref_f32_in(c, n, 0);
    float *y = x ? ref_f32_out(c, n, 0) : NULL;
    if (!y)
        return false;
    const Type *t = &ref_in(c, n, 0)->type;
    bool is_min = n->op == OP_REDUCE_MIN;
    int64_t axes[IR_MAX_RANK];
    int na = ir_attr_ints(c->g, n, "axes", axes, IR_MAX_RANK);
    bool red[IR_MAX_RANK] = {0};
    for (int d = 0; d < t->rank; d++)
        red[d] = na < 0;
    for (int i = 0; i < na; i++)
        red[axes[i] < 0 ? axes[i] + t->rank : axes[i]] = true;
    /* the result's strides over x's dims (0 along the reduced ones) */
    int64_t ost[IR_MAX_RANK], s = 1, idx[IR_MAX_RANK] = {0};
    for (int d = t->rank - 1; d >= 0; d--) {
        ost[d] = red[d] ? 0 : s;
        s *= red[d] ? 1 : t->dims[d];
    }
    size_t ny = ref_numel(ref_out(c, n, 0)), nx = ref_numel(ref_in(c, n, 0));
    for (size_t i = 0; i < ny; i++)
        y[i] = is_min ? INFINITY : -INFINITY;
    uint8_t *nan = xcalloc(ny ? ny : 1, 1);
    for (size_t i = 0; i < nx; i++) {
        int64_t o = 0;
        for (int d = 0; d < t->rank; d++)
            o += idx[d] * ost[d];
        float v = x[i];
        if (isnan(v))
            nan[o] = 1;
        else if (is_min ? v < y[o] : v > y[o])
            y[o] = v;
        type_next_index(t, idx);
    }
    for (size_t i = 0; i < ny; i++)
        if (nan[i])
            y[i] = NAN;
    free(nan);
    return true;
}

static bool
round_op(RefCtx *c, Node *n)
{
    const float *x = ref_f32_in(c, n, 0);
    float *y = x ? ref_f32_out(c, n, 0) : NULL;
    if (!y)
        return false;
    size_t k = ref_numel(ref_in(c, n, 0));
    for (size_t i = 0; i < k; i++)
        y[i] = fabsf(x[i]) < 8388608.0f ? copysignf((float)qn_round_half_even_f32(x[i]), x[i]) : x[i];
    return true;
}

bool
ref_op_minmax(RefCtx *c, Node *n)
{
    return n->op == OP_ROUND ? round_op(c, n) : reduce_minmax(c, n);
}
