/* ref_math.c: reference element-wise math of the float islands that transformer exports bring:
 * exp, log, sqrt, reciprocal, neg, abs (one operand) and pow, min, max (two, numpy
 * broadcasting). f32: exp, log and pow are lib/numerics/fmath.c's sequences, sqrt is the
 * correctly rounded square root, reciprocal 1 / x (one f32 division), neg and abs flip and clear
 * the sign bit; min / max select an operand (a NaN operand gives NaN, numpy's minimum/maximum).
 * Integers (abs, neg, min, max, pow with an integer exponent): exact in int64, wrapping to the
 * result type; pow by squaring, a negative exponent gives 1 / x^-y truncated toward zero
 * (1 for x = 1, +-1 for x = -1, else 0). pow with an integer exponent and an f32 base converts
 * the exponent to f32 first. */
#include "ref/ref_impl.h"

#include "numerics/fmath.h"

#include <math.h>
#include <string.h>

bool
ref_op_math_unary(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    size_t k = ref_numel(y);
    float (*f)(float) = op_info(n->op)->f32; /* ops.def's SCALAR column */
    if (x->type.elem == ET_F32 && f) {
        const float *xf = x->data;
        float *yf = y->data;
        for (size_t i = 0; i < k; i++)
            yf[i] = f(xf[i]);
        return true;
    }
    if (elem_is_int(x->type.elem) && (n->op == OP_NEG || n->op == OP_ABS)) {
        for (size_t i = 0; i < k; i++) {
            uint64_t v = (uint64_t)ref_get_i(x, i);
            bool neg = n->op == OP_NEG || (int64_t)v < 0;
            ref_set_i(y, i, (int64_t)(neg ? 0 - v : v));
        }
        return true;
    }
    node_error(c->g, n, "reference interpreter: %s on %s is not supported",
               op_info(n->op)->name, elem_name(x->type.elem));
    return false;
}

float
ref_minmax_f32(OpKind op, float a, float b)
{
    if (op == OP_MAX)
        return a > b || a != a ? a : b;
    return a < b || a != a ? a : b;
}

int64_t
ref_ipow(int64_t x, int64_t e)
{
    if (e < 0)
        return x == 1 ? 1 : x == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)x;
    for (int i = 0; i < 63; i++) {
        if (((uint64_t)e >> i) & 1)
            r *= b;
        b *= b;
    }
    return (int64_t)r;
}

bool
ref_op_math_binary(RefCtx *c, Node *n)
{
    const RefTensor *a = ref_in(c, n, 0), *b = ref_in(c, n, 1);
    RefTensor *y = ref_out(c, n, 0);
    ElemType ea = a->type.elem, eb = b->type.elem;
    bool fl = ea == ET_F32;
    bool ok = n->op == OP_POW ? (fl && (eb == ET_F32 || elem_is_int(eb))) ||
                                    (elem_is_int(ea) && elem_is_int(eb))
                              : (fl && eb == ET_F32) || (elem_is_int(ea) && ea == eb);
    if (!ok || y->type.elem != ea) {
        node_error(c->g, n, "reference interpreter: %s of %s and %s is not supported",
                   op_info(n->op)->name, elem_name(ea), elem_name(eb));
        return false;
    }
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_bcast_strides(&a->type, &y->type, sa);
    type_bcast_strides(&b->type, &y->type, sb);
    size_t k = ref_numel(y);
    for (size_t i = 0; i < k; i++) {
        int64_t ia = 0, ib = 0;
        for (int d = 0; d < y->type.rank; d++) {
            ia += idx[d] * sa[d];
            ib += idx[d] * sb[d];
        }
        if (fl) {
            float x = ((const float *)a->data)[ia];
            float z = eb == ET_F32 ? ((const float *)b->data)[ib]
                                   : (float)ref_get_i(b, (size_t)ib);
            ((float *)y->data)[i] =
                n->op == OP_POW ? qn_powf(x, z) : ref_minmax_f32(n->op, x, z);
        } else {
            int64_t x = ref_get_i(a, (size_t)ia), z = ref_get_i(b, (size_t)ib);
            int64_t r = n->op == OP_POW ? ref_ipow(x, z)
                      : n->op == OP_MAX ? (x > z ? x : z)
                                        : (x < z ? x : z);
            ref_set_i(y, i, r);
        }
        type_next_index(&y->type, idx);
    }
    return true;
}
