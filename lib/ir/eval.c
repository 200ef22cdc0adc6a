/* eval.c: the comparison, logic, selection, broadcasting, range, reduction and cast ops on
 * whole tensors (eval.h): the one definition that constant folding and the reference
 * interpreter call, and the evaluators of the ops imported on constants only (mod, scatter_nd,
 * trilu: eval.h). Element access goes through tensor_get_f / tensor_get_i (every element
 * type; f16 and f32 are exact in double), so one loop serves every type:
 *  - comparisons: floats compared as doubles (IEEE: NaN is unordered, -0 == +0), integers as
 *    int64 (unsigned types zero-extended), bool as 0/1 (any nonzero byte is true);
 *  - not/and/or/xor on bool (nonzero is true), results 0 or 1;
 *  - where: the bytes of X or Y, numpy broadcasting over all three operands;
 *  - expand (numpy broadcast to 'shape'), tile ('repeats'): byte copies;
 *  - range: start + (T)i * delta in T's arithmetic (two roundings for floats, no FMA);
 *  - reduce_sum: integers wrap in int64; floats in double by IR_SUM_LANES partial sums, a NaN
 *    result canonical (hardware NaN payloads differ: x86's inf - inf has the sign bit);
 *  - reduce_max / reduce_min: integers exact; floats as IEEE maximum / minimum (-0 < +0, a NaN
 *    makes the result the canonical quiet NaN), so any evaluation order gives the same bits;
 *    the empty set gives -inf / +inf (floats) or the type's minimum / maximum;
 *  - argmax: the first (or with select_last_index the last) position of the maximum, a NaN
 *    counting as larger than any number. */
#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EFAIL(...)                             \
    do {                                       \
        snprintf(err, len, __VA_ARGS__);       \
        return false;                          \
    } while (0)

/* ---- cast ---- */

uint16_t
ir_f64_to_f16(double d)
{
    /* round to odd to f32 (24 bits, more than 11 + 2), then to nearest even to f16: the same
     * as rounding d to f16 once */
    float t = (float)d;
    if (d == d && (double)t != d) {
        uint32_t b;
        memcpy(&b, &t, 4);
        if (fabs((double)t) > fabs(d))
            b -= 1; /* toward zero: the magnitude bits are monotone */
        b |= 1;
        memcpy(&t, &b, 4);
    }
    uint16_t h = 0;
    Tensor v = {.type = type_make(ET_F16, 0, NULL), .data = &h, .nbytes = 2};
    tensor_set_f(&v, 0, t); /* exact to f32, then f32 -> f16 */
    return h;
}

void
ir_cast_elem(const Tensor *x, size_t i, Tensor *y, size_t j)
{
    ElemType from = x->type.elem, to = y->type.elem;
    if (elem_is_float(from)) {
        double d = tensor_get_f(x, i);
        if (to == ET_F16 && from == ET_F64) {
            uint16_t h = ir_f64_to_f16(d);
            memcpy((char *)y->data + 2 * j, &h, 2);
        } else if (elem_is_float(to)) {
            tensor_set_f(y, j, d);
        } else if (to == ET_BOOL) {
            tensor_set_i(y, j, d != 0);
        } else {
            int64_t v = d != d ? 0 : d >= 0x1p63 ? INT64_MAX : d < -0x1p63 ? INT64_MIN : (int64_t)d;
            tensor_set_i(y, j, v); /* wraps to the width of `to` */
        }
        return;
    }
    int64_t v = tensor_get_i(x, i);
    if (from == ET_BOOL)
        v = v != 0;
    if (to == ET_BOOL)
        tensor_set_i(y, j, v != 0);
    else if (to == ET_F32 || to == ET_F16)
        tensor_set_f(y, j, (double)(float)v); /* i64: rounded once, to f32 (then f16: exact) */
    else if (to == ET_F64)
        tensor_set_f(y, j, (double)v);
    else
        tensor_set_i(y, j, v);
}

/* ---- broadcasting element-wise ops ---- */

static bool
truth(const Tensor *t, size_t i)
{
    return tensor_get_i(t, i) != 0;
}

static bool
compare(OpKind op, const Tensor *a, size_t ia, const Tensor *b, size_t ib)
{
    int c; /* -1, 0, 1, or 2 for unordered */
    if (elem_is_float(a->type.elem)) {
        double x = tensor_get_f(a, ia), z = tensor_get_f(b, ib);
        c = x < z ? -1 : x > z ? 1 : x == z ? 0 : 2;
    } else {
        int64_t x = tensor_get_i(a, ia), z = tensor_get_i(b, ib);
        if (a->type.elem == ET_BOOL) {
            x = x != 0;
            z = z != 0;
        }
        c = x < z ? -1 : x > z ? 1 : 0;
    }
    switch (op) {
    case OP_EQUAL: return c == 0;
    case OP_LESS: return c == -1;
    case OP_LESS_EQUAL: return c == -1 || c == 0;
    case OP_GREATER: return c == 1;
    default: return c == 1 || c == 0; /* greater_equal */
    }
}

/* Every element-wise op of up to three operands with numpy broadcasting. */
static void
eval_elementwise(const Node *n, const Tensor *const *in, Tensor *y)
{
    int64_t st[3][IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    for (uint32_t k = 0; k < n->nin && k < 3; k++)
        type_bcast_strides(&in[k]->type, &y->type, st[k]);
    size_t cnt = type_numel_unchecked(&y->type), es = elem_size(y->type.elem);
    for (size_t i = 0; i < cnt; i++) {
        size_t o[3] = {0, 0, 0};
        for (uint32_t k = 0; k < n->nin && k < 3; k++)
            for (int d = 0; d < y->type.rank; d++)
                o[k] += (size_t)(idx[d] * st[k][d]);
        switch (n->op) {
        case OP_NOT: tensor_set_i(y, i, !truth(in[0], o[0])); break;
        case OP_AND: tensor_set_i(y, i, truth(in[0], o[0]) && truth(in[1], o[1])); break;
        case OP_OR: tensor_set_i(y, i, truth(in[0], o[0]) || truth(in[1], o[1])); break;
        case OP_XOR: tensor_set_i(y, i, truth(in[0], o[0]) != truth(in[1], o[1])); break;
        case OP_WHERE: {
            const Tensor *s = truth(in[0], o[0]) ? in[1] : in[2];
            size_t so = truth(in[0], o[0]) ? o[1] : o[2];
            memcpy((char *)y->data + i * es, (const char *)s->data + so * es, es);
            break;
        }
        case OP_EXPAND:
            memcpy((char *)y->data + i * es, (const char *)in[0]->data + o[0] * es, es);
            break;
        default:
            tensor_set_i(y, i, compare(n->op, in[0], o[0], in[1], o[1]));
            break;
        }
        type_next_index(&y->type, idx);
    }
}

static void
eval_tile(const Tensor *x, Tensor *y)
{
    int64_t xs[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_strides(&x->type, xs);
    size_t cnt = type_numel_unchecked(&y->type), es = elem_size(y->type.elem);
    for (size_t i = 0; i < cnt; i++) {
        size_t o = 0;
        for (int d = 0; d < y->type.rank; d++)
            o += (size_t)((idx[d] % x->type.dims[d]) * xs[d]);
        memcpy((char *)y->data + i * es, (const char *)x->data + o * es, es);
        type_next_index(&y->type, idx);
    }
}

/* ---- range ---- */

bool
ir_range_count(const Tensor *start, const Tensor *limit, const Tensor *delta, int64_t *count,
               char *err, size_t len)
{
    ElemType e = start->type.elem;
    if (e == ET_F32 || e == ET_F64) {
        double s = tensor_get_f(start, 0), l = tensor_get_f(limit, 0), d = tensor_get_f(delta, 0);
        double q = e == ET_F32 ? (double)(((float)l - (float)s) / (float)d) : (l - s) / d;
        if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d) || !(q == q))
            EFAIL("start, limit and delta must be finite and delta nonzero");
        q = ceil(q);
        if (q > (double)((int64_t)1 << 40))
            EFAIL("%g elements are too many", q);
        *count = q > 0 ? (int64_t)q : 0;
        return true;
    }
    int64_t s = tensor_get_i(start, 0), l = tensor_get_i(limit, 0), d = tensor_get_i(delta, 0);
    if (d == 0)
        EFAIL("delta must not be 0");
    if ((l > 0 && s < l - INT64_MAX) || (l < 0 && s > l + INT64_MAX))
        EFAIL("limit - start overflows");
    int64_t span = l - s, q = span / d;
    if (span % d != 0 && (span > 0) == (d > 0))
        q++; /* ceil: a positive quotient truncated toward zero is below the exact one */
    if (q > ((int64_t)1 << 40))
        EFAIL("%lld elements are too many", (long long)q);
    *count = q > 0 ? q : 0;
    return true;
}

static void
eval_range(const Tensor *start, const Tensor *delta, Tensor *y)
{
    size_t cnt = type_numel_unchecked(&y->type);
    for (size_t i = 0; i < cnt; i++) {
        if (y->type.elem == ET_F32) {
            float s = (float)tensor_get_f(start, 0), d = (float)tensor_get_f(delta, 0);
            float p = (float)(int64_t)i * d;
            tensor_set_f(y, i, s + p);
        } else if (y->type.elem == ET_F64) {
            double p = (double)(int64_t)i * tensor_get_f(delta, 0);
            tensor_set_f(y, i, tensor_get_f(start, 0) + p);
        } else {
            uint64_t v = (uint64_t)tensor_get_i(start, 0) +
                         (uint64_t)i * (uint64_t)tensor_get_i(delta, 0);
            tensor_set_i(y, i, (int64_t)v);
        }
    }
}

/* ---- reductions ---- */

bool
ir_reduce_mask(const Graph *g, const Node *n, int rank, bool *red)
{
    int64_t axes[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "axes", axes, IR_MAX_RANK);
    for (int d = 0; d < rank; d++)
        red[d] = k < 0;
    for (int i = 0; i < k; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank)
            return false;
        red[a] = true;
    }
    return true;
}

bool
ir_reduce_split(const Graph *g, const Node *n, const Type *t, IrReduceSplit *s)
{
    memset(s, 0, sizeof *s);
    if (!ir_reduce_mask(g, n, t->rank, s->red))
        return false;
    int64_t xs[IR_MAX_RANK], os = 1;
    type_strides(t, xs);
    s->cnt = s->nkept = 1;
    s->trailing = true;
    for (int d = 0; d < t->rank; d++) {
        if (s->red[d]) {
            s->rd[s->nr] = t->dims[d];
            s->rst[0][s->nr++] = xs[d];
            s->cnt *= t->dims[d];
        } else {
            s->trailing = s->trailing && s->nr == 0;
            s->kd[s->nk] = t->dims[d];
            s->kst[0][s->nk++] = xs[d];
            s->nkept *= t->dims[d];
        }
    }
    for (int d = t->rank - 1, j = s->nk - 1; d >= 0; d--) {
        s->ost[d] = s->red[d] ? 0 : os;
        if (!s->red[d]) {
            s->kst[1][j--] = os;
            os *= t->dims[d];
        }
    }
    return true;
}

double
ir_sum_combine(const double *p)
{
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

/* IEEE maximum (max) or minimum: NaN if either is NaN, -0 < +0. */
static double
fextreme(double a, double b, bool max)
{
    if (a != a || b != b)
        return NAN;
    if (a == b)
        return signbit(a) == max ? b : a; /* max: the one without the sign bit */
    return (a > b) == max ? a : b;
}

static bool
eval_reduce(Graph *g, const Node *n, const Tensor *x, Tensor *y, char *err, size_t len)
{
    const Type *t = &x->type;
    IrReduceSplit rs;
    if (!ir_reduce_split(g, n, t, &rs))
        EFAIL("axis out of range");
    const int64_t *ost = rs.ost;
    bool fl = elem_is_float(t->elem), sum = n->op == OP_REDUCE_SUM, max = n->op == OP_REDUCE_MAX;
    size_t ny = type_numel_unchecked(&y->type), nx = type_numel_unchecked(t);
    size_t lanes = sum && fl ? IR_SUM_LANES : 1;
    double *acc = xmalloc((ny ? ny : 1) * lanes * sizeof(double));
    int64_t *iacc = xmalloc((ny ? ny : 1) * sizeof(int64_t));
    size_t *seen = xcalloc(ny ? ny : 1, sizeof(size_t));
    int64_t lo, hi;
    elem_range(t->elem, &lo, &hi);
    for (size_t o = 0; o < ny; o++) {
        for (size_t l = 0; l < lanes; l++)
            acc[o * lanes + l] = sum ? -0.0 : max ? -INFINITY : INFINITY;
        iacc[o] = sum ? 0 : max ? lo : hi;
    }
    int64_t idx[IR_MAX_RANK] = {0};
    for (size_t i = 0; i < nx; i++) {
        size_t o = 0;
        for (int d = 0; d < t->rank; d++)
            o += (size_t)(idx[d] * ost[d]);
        if (fl) {
            double v = tensor_get_f(x, i), *a = &acc[o * lanes + seen[o]++ % lanes];
            *a = sum ? *a + v : fextreme(*a, v, max);
        } else {
            int64_t v = tensor_get_i(x, i);
            if (t->elem == ET_BOOL)
                v = v != 0;
            iacc[o] = sum ? (int64_t)((uint64_t)iacc[o] + (uint64_t)v)
                          : (v > iacc[o]) == max && v != iacc[o] ? v : iacc[o];
        }
        type_next_index(t, idx);
    }
    for (size_t o = 0; o < ny; o++) {
        if (!fl)
            tensor_set_i(y, o, iacc[o]);
        else if (sum) {
            double v = seen[o] ? ir_sum_combine(&acc[o * lanes]) : 0.0;
            tensor_set_f(y, o, v != v ? NAN : v); /* inf - inf: x86 and AArch64 differ */
        } else
            tensor_set_f(y, o, acc[o] != acc[o] ? NAN : acc[o]);
    }
    free(acc);
    free(iacc);
    free(seen);
    return true;
}

static void
eval_argmax(Graph *g, const Node *n, const Tensor *x, Tensor *y)
{
    const Type *t = &x->type;
    int64_t a = ir_attr_int(g, n, "axis", 0);
    if (a < 0)
        a += t->rank;
    bool last = ir_attr_int(g, n, "select_last_index", 0) != 0, fl = elem_is_float(t->elem);
    int64_t outer = 1, dim = t->dims[a], inner = 1;
    for (int d = 0; d < a; d++)
        outer *= t->dims[d];
    for (int d = (int)a + 1; d < t->rank; d++)
        inner *= t->dims[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t r = 0; r < inner; r++) {
            int64_t best = 0;
            size_t b0 = (size_t)(o * dim * inner + r);
            for (int64_t j = 1; j < dim; j++) {
                size_t bi = b0 + (size_t)(best * inner), xi = b0 + (size_t)(j * inner);
                bool take;
                if (fl) {
                    double v = tensor_get_f(x, xi), bv = tensor_get_f(x, bi);
                    /* a NaN is larger than any number; among NaNs the first (last) counts */
                    take = bv != bv ? last && v != v : v != v || v > bv || (last && v == bv);
                } else {
                    int64_t v = tensor_get_i(x, xi), bv = tensor_get_i(x, bi);
                    if (t->elem == ET_BOOL) {
                        v = v != 0;
                        bv = bv != 0;
                    }
                    take = v > bv || (last && v == bv);
                }
                if (take)
                    best = j;
            }
            tensor_set_i(y, (size_t)(o * inner + r), best);
        }
}

bool
ir_eval(Graph *g, const Node *n, const Tensor *const *in, Tensor *const *out, char *err,
        size_t len)
{
    Tensor *y = out[0];
    switch (n->op) {
    case OP_EQUAL: case OP_LESS: case OP_LESS_EQUAL: case OP_GREATER: case OP_GREATER_EQUAL:
    case OP_NOT: case OP_AND: case OP_OR: case OP_XOR: case OP_WHERE: case OP_EXPAND:
        eval_elementwise(n, in, y);
        return true;
    case OP_TILE:
        eval_tile(in[0], y);
        return true;
    case OP_RANGE: {
        int64_t cnt;
        if (!ir_range_count(in[0], in[1], in[2], &cnt, err, len))
            return false;
        if ((size_t)cnt != type_numel_unchecked(&y->type))
            EFAIL("%lld elements, the result has %zu", (long long)cnt,
                  type_numel_unchecked(&y->type));
        eval_range(in[0], in[2], y);
        return true;
    }
    case OP_REDUCE_SUM: case OP_REDUCE_MAX: case OP_REDUCE_MIN:
        return eval_reduce(g, n, in[0], y, err, len);
    case OP_ARGMAX:
        eval_argmax(g, n, in[0], y);
        return true;
    case OP_CAST: {
        size_t cnt = type_numel_unchecked(&y->type);
        for (size_t i = 0; i < cnt; i++)
            ir_cast_elem(in[0], i, y, i);
        return true;
    }
    default:
        EFAIL("%s is not evaluated here", op_info(n->op)->name);
    }
}

/* ---- ops evaluated on constants only: mod, scatter_nd, trilu ---- */

static bool
elem_unsigned(ElemType e)
{
    return e == ET_U8 || e == ET_U16 || e == ET_U32 || e == ET_U4 || e == ET_BOOL;
}

/* numpy's float remainder in the element type's arithmetic (float for f32 and f16, whose
 * sums of two values are exact in float, double for f64) */
static double
mod_float(double x, double d, ElemType e, bool fmod_)
{
    double m = fmod(x, d); /* exact in every precision */
    if (fmod_ || d == 0 || m != m)
        return m;
    if (m == 0)
        return copysign(0.0, d);
    if ((d < 0) != (m < 0))
        m = e == ET_F64 ? m + d : (double)((float)m + (float)d);
    return m;
}

bool
ir_eval_mod(const Tensor *a, const Tensor *b, bool fmod_, Tensor *y, char *err, size_t len)
{
    ElemType e = y->type.elem;
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_bcast_strides(&a->type, &y->type, sa);
    type_bcast_strides(&b->type, &y->type, sb);
    size_t cnt = type_numel_unchecked(&y->type);
    for (size_t i = 0; i < cnt; i++) {
        size_t ia = 0, ib = 0;
        for (int d = 0; d < y->type.rank; d++) {
            ia += (size_t)(idx[d] * sa[d]);
            ib += (size_t)(idx[d] * sb[d]);
        }
        if (elem_is_float(e)) {
            tensor_set_f(y, i, mod_float(tensor_get_f(a, ia), tensor_get_f(b, ib), e, fmod_));
        } else {
            int64_t x = tensor_get_i(a, ia), d = tensor_get_i(b, ib), m;
            if (d == 0)
                EFAIL("integer division by zero (element %zu of the divisor)", ib);
            if (elem_unsigned(e))
                m = (int64_t)((uint64_t)x % (uint64_t)d);
            else if (d == -1)
                m = 0; /* INT64_MIN % -1 overflows in C */
            else {
                m = x % d; /* truncated: the dividend's sign */
                if (!fmod_ && m != 0 && (m < 0) != (d < 0))
                    m += d;
            }
            tensor_set_i(y, i, m);
        }
        type_next_index(&y->type, idx);
    }
    return true;
}

static void
combine(const char *red, const Tensor *u, size_t iu, Tensor *y, size_t iy)
{
    ElemType e = y->type.elem;
    size_t es = elem_size(e);
    if (strcmp(red, "none") == 0) {
        memcpy((char *)y->data + iy * es, (const char *)u->data + iu * es, es);
        return;
    }
    bool add = strcmp(red, "add") == 0, mul = strcmp(red, "mul") == 0;
    bool max = strcmp(red, "max") == 0;
    if (elem_is_float(e)) {
        double a = tensor_get_f(y, iy), b = tensor_get_f(u, iu), r;
        if (add)
            r = e == ET_F64 ? a + b : (double)((float)a + (float)b);
        else if (mul)
            r = e == ET_F64 ? a * b : (double)((float)a * (float)b);
        else /* numpy maximum / minimum: a NaN propagates */
            r = a != a || b != b ? NAN : max ? (a >= b ? a : b) : (a <= b ? a : b);
        tensor_set_f(y, iy, r);
        return;
    }
    int64_t a = tensor_get_i(y, iy), b = tensor_get_i(u, iu);
    if (e == ET_BOOL) {
        a = a != 0;
        b = b != 0;
    }
    int64_t r = add ? (int64_t)((uint64_t)a + (uint64_t)b)
              : mul ? (int64_t)((uint64_t)a * (uint64_t)b)
              : max ? (a >= b ? a : b) : (a <= b ? a : b);
    if (e == ET_BOOL)
        r = r != 0;
    tensor_set_i(y, iy, r);
}

bool
ir_eval_scatter_nd(const Tensor *data, const Tensor *indices, const Tensor *updates,
                   const char *reduction, Tensor *y, char *err, size_t len)
{
    const Type *dt = &data->type, *it = &indices->type;
    memcpy(y->data, data->data, y->nbytes);
    int k = (int)it->dims[it->rank - 1];
    int64_t st[IR_MAX_RANK];
    type_strides(dt, st);
    size_t slice = 1;
    for (int d = k; d < dt->rank; d++)
        slice *= (size_t)dt->dims[d];
    size_t ntup = 1; /* the index tuples: indices' shape without its last dimension */
    for (int d = 0; d < it->rank - 1; d++)
        ntup *= (size_t)it->dims[d];
    for (size_t t = 0; t < ntup; t++) {
        size_t off = 0;
        for (int d = 0; d < k; d++) {
            int64_t v = tensor_get_i(indices, t * (size_t)k + (size_t)d), n = dt->dims[d];
            if (v < -n || v >= n)
                EFAIL("index %lld (indices element %zu) is out of range for dimension %d of "
                      "size %lld", (long long)v, t * (size_t)k + (size_t)d, d, (long long)n);
            off += (size_t)((v < 0 ? v + n : v) * st[d]);
        }
        for (size_t j = 0; j < slice; j++)
            combine(reduction, updates, t * slice + j, y, off + j);
    }
    return true;
}

void
ir_eval_trilu(const Tensor *x, int64_t k, bool upper, Tensor *y)
{
    const Type *t = &x->type;
    int64_t rows = t->dims[t->rank - 2], cols = t->dims[t->rank - 1];
    size_t es = elem_size(t->elem), cnt = type_numel_unchecked(t);
    memset(y->data, 0, y->nbytes);
    for (size_t i = 0; i < cnt; i++) {
        int64_t c = (int64_t)(i % (size_t)cols), r = (int64_t)(i / (size_t)cols % (size_t)rows);
        if (upper ? c - r >= k : c - r <= k)
            memcpy((char *)y->data + i * es, (const char *)x->data + i * es, es);
    }
}
