/* types.c: element types, quantization parameters, tensor types (shapes, strides, broadcast
 * indexing) and constant tensors (element access, f16 conversion). */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- element types ---- */
static const struct {
    const char *name;
    size_t size;
} elem_tab[ET_COUNT] = {
    [ET_NONE] = {"none", 0}, [ET_F32] = {"f32", 4}, [ET_F16] = {"f16", 2},
    [ET_F64] = {"f64", 8},   [ET_I8] = {"i8", 1},   [ET_U8] = {"u8", 1},
    [ET_I16] = {"i16", 2},   [ET_U16] = {"u16", 2}, [ET_I32] = {"i32", 4},
    [ET_U32] = {"u32", 4},   [ET_I64] = {"i64", 8}, [ET_I4] = {"i4", 1},
    [ET_U4] = {"u4", 1},     [ET_BOOL] = {"bool", 1},
};

const char *
elem_name(ElemType t)
{
    return t < ET_COUNT ? elem_tab[t].name : "?";
}

ElemType
elem_from_name(const char *s, size_t n)
{
    for (int i = 1; i < ET_COUNT; i++)
        if (strlen(elem_tab[i].name) == n && memcmp(elem_tab[i].name, s, n) == 0)
            return (ElemType)i;
    return ET_NONE;
}

size_t
elem_size(ElemType t)
{
    return t < ET_COUNT ? elem_tab[t].size : 0;
}

bool
elem_is_float(ElemType t)
{
    return t == ET_F32 || t == ET_F16 || t == ET_F64;
}

bool
elem_is_int(ElemType t)
{
    return t != ET_NONE && !elem_is_float(t) && t < ET_COUNT;
}

bool
elem_is_quant_storage(ElemType t)
{
    switch (t) {
    case ET_I4: case ET_U4: case ET_I8: case ET_U8: case ET_I16: case ET_U16: case ET_I32:
        return true;
    default:
        return false;
    }
}

void
elem_range(ElemType t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case ET_I4: *lo = -8; *hi = 7; break;
    case ET_U4: *lo = 0; *hi = 15; break;
    case ET_I8: *lo = -128; *hi = 127; break;
    case ET_U8: *lo = 0; *hi = 255; break;
    case ET_I16: *lo = -32768; *hi = 32767; break;
    case ET_U16: *lo = 0; *hi = 65535; break;
    case ET_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case ET_U32: *lo = 0; *hi = UINT32_MAX; break;
    case ET_BOOL: *lo = 0; *hi = 1; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

/* ---- quantization parameters ---- */
QParams *
ir_qparams_new(Module *m, ElemType storage, int32_t axis, uint32_t n)
{
    QParams *q = arena_alloc(&m->arena, sizeof *q);
    q->storage = storage;
    q->axis = axis;
    q->n = n;
    q->scale = arena_alloc(&m->arena, (n ? n : 1) * sizeof(float));
    q->zp = arena_alloc(&m->arena, (n ? n : 1) * sizeof(int32_t));
    int64_t lo, hi;
    elem_range(storage, &lo, &hi);
    q->qmin = (int32_t)lo;
    q->qmax = (int32_t)hi;
    return q;
}

QParams *
ir_qparams_per_tensor(Module *m, ElemType storage, float scale, int32_t zp)
{
    QParams *q = ir_qparams_new(m, storage, -1, 1);
    q->scale[0] = scale;
    q->zp[0] = zp;
    return q;
}

bool
qparams_equal(const QParams *a, const QParams *b)
{
    if (!a || !b)
        return a == b;
    if (a->storage != b->storage || a->axis != b->axis || a->n != b->n || a->qmin != b->qmin ||
        a->qmax != b->qmax)
        return false;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->zp[i] != b->zp[i])
            return false;
        if (memcmp(&a->scale[i], &b->scale[i], sizeof(float)) != 0)
            return false;
    }
    return true;
}

bool
qparams_is_full_range(const QParams *q)
{
    int64_t lo, hi;
    elem_range(q->storage, &lo, &hi);
    return q->qmin == lo && q->qmax == hi;
}

/* ---- types and tensors ---- */
Type
type_make(ElemType e, int rank, const int64_t *dims)
{
    Type t = {0};
    t.elem = e;
    t.rank = (uint8_t)rank;
    for (int i = 0; i < rank; i++)
        t.dims[i] = dims[i];
    return t;
}

bool
type_numel(const Type *t, size_t *out)
{
    size_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0)
            return false;
        if (!size_mul(n, (size_t)t->dims[i], &n))
            return false;
    }
    *out = n;
    return true;
}

size_t
type_numel_unchecked(const Type *t)
{
    size_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= (size_t)t->dims[i];
    return n;
}

bool
type_shape_equal(const Type *a, const Type *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

void
type_strides(const Type *t, int64_t *st)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= t->dims[i];
    }
}

void
type_bcast_strides(const Type *t, const Type *o, int64_t *st)
{
    int64_t own[IR_MAX_RANK];
    type_strides(t, own);
    int off = o->rank - t->rank;
    for (int i = 0; i < o->rank; i++) {
        int j = i - off;
        st[i] = (j < 0 || t->dims[j] == 1) ? 0 : own[j];
    }
}

bool
type_next_index(const Type *o, int64_t *idx)
{
    for (int i = o->rank - 1; i >= 0; i--) {
        if (++idx[i] < o->dims[i])
            return true;
        idx[i] = 0;
    }
    return false;
}

bool
type_equal(const Type *a, const Type *b)
{
    return a->elem == b->elem && type_shape_equal(a, b) && qparams_equal(a->q, b->q);
}

Tensor *
ir_tensor_new(Module *m, const Type *t)
{
    size_t n, bytes;
    if (!type_numel(t, &n) || !size_mul(n, elem_size(t->elem), &bytes))
        return NULL;
    Tensor *ts = arena_alloc(&m->arena, sizeof *ts);
    ts->type = *t;
    ts->nbytes = bytes;
    ts->data = arena_alloc(&m->arena, bytes ? bytes : 1);
    return ts;
}

static float
f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t
f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)h;
}

double
tensor_get_f(const Tensor *t, size_t i)
{
    const unsigned char *p = t->data;
    switch (t->type.elem) {
    case ET_F32: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case ET_F64: { double d; memcpy(&d, p + 8 * i, 8); return d; }
    case ET_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return f16_to_f32(h); }
    default: return (double)tensor_get_i(t, i);
    }
}

int64_t
tensor_get_i(const Tensor *t, size_t i)
{
    const unsigned char *p = t->data;
    switch (t->type.elem) {
    case ET_I8: case ET_I4: return (int8_t)p[i];
    case ET_U8: case ET_U4: case ET_BOOL: return p[i];
    case ET_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case ET_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case ET_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case ET_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case ET_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    case ET_F32: case ET_F64: case ET_F16: {
        double d = tensor_get_f(t, i);
        if (!(d > -9.2e18 && d < 9.2e18))
            return 0;
        return (int64_t)d;
    }
    default: return 0;
    }
}

void
tensor_set_f(Tensor *t, size_t i, double v)
{
    unsigned char *p = t->data;
    switch (t->type.elem) {
    case ET_F32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); return; }
    case ET_F64: memcpy(p + 8 * i, &v, 8); return;
    case ET_F16: { uint16_t h = f32_to_f16((float)v); memcpy(p + 2 * i, &h, 2); return; }
    default: tensor_set_i(t, i, (int64_t)v); return;
    }
}

void
tensor_set_i(Tensor *t, size_t i, int64_t v)
{
    unsigned char *p = t->data;
    switch (t->type.elem) {
    case ET_I8: case ET_U8: case ET_I4: case ET_U4: case ET_BOOL: p[i] = (unsigned char)v; return;
    case ET_I16: case ET_U16: { uint16_t x = (uint16_t)v; memcpy(p + 2 * i, &x, 2); return; }
    case ET_I32: case ET_U32: { uint32_t x = (uint32_t)v; memcpy(p + 4 * i, &x, 4); return; }
    case ET_I64: memcpy(p + 8 * i, &v, 8); return;
    case ET_F32: case ET_F64: case ET_F16: tensor_set_f(t, i, (double)v); return;
    default: return;
    }
}

bool
ir_qdq_layout(const Type *x, const Type *s, const Type *z, int64_t axis, int64_t block,
              QdqLayout *l, char *err, size_t len)
{
    size_t n = type_numel_unchecked(s);
    memset(l, 0, sizeof *l);
    l->axis = -1;
    l->outer = l->dim = l->block = 1;
    l->inner = (int64_t)type_numel_unchecked(x);
    l->nparams = n;
    if (z && type_numel_unchecked(z) != n) {
        snprintf(err, len, "scale has %zu values, zero point %zu", n, type_numel_unchecked(z));
        return false;
    }
    if (z && block && !type_shape_equal(s, z)) {
        snprintf(err, len, "blocked quantization: zero point and scale shapes differ");
        return false;
    }
    if (block < 0) {
        snprintf(err, len, "block_size %lld must be positive", (long long)block);
        return false;
    }
    if (!block && n == 1)
        return true;
    int64_t a = axis < 0 ? axis + x->rank : axis;
    if (a < 0 || a >= x->rank) {
        snprintf(err, len, "axis %lld out of range for rank %d", (long long)axis, x->rank);
        return false;
    }
    l->axis = (int)a;
    l->outer = 1;
    l->inner = 1;
    for (int d = 0; d < a; d++)
        l->outer *= x->dims[d];
    for (int d = (int)a + 1; d < x->rank; d++)
        l->inner *= x->dims[d];
    l->dim = x->dims[a];
    if (!block) {
        if (s->rank != 1) {
            snprintf(err, len, "scale of rank %d with %zu values needs block_size (per-axis "
                     "scales are 1-D)", s->rank, n);
            return false;
        }
        if (x->dims[a] != (int64_t)n) {
            snprintf(err, len, "per-axis scale has %zu values, axis %lld has size %lld", n,
                     (long long)a, (long long)x->dims[a]);
            return false;
        }
        l->cstride = 1;
        return true;
    }
    if (s->rank != x->rank) {
        snprintf(err, len, "blocked quantization: scale of rank %d, input of rank %d", s->rank,
                 x->rank);
        return false;
    }
    int64_t pdim = l->dim / block + (l->dim % block != 0);
    for (int d = 0; d < x->rank; d++) {
        int64_t want = d == a ? pdim : x->dims[d];
        if (s->dims[d] != want) {
            snprintf(err, len, "blocked quantization (axis %lld, block_size %lld): scale "
                     "dimension %d is %lld, expected %lld", (long long)a, (long long)block, d,
                     (long long)s->dims[d], (long long)want);
            return false;
        }
    }
    l->block = block;
    l->cstride = l->inner;
    l->ostride = pdim * l->inner;
    l->rstride = 1;
    return true;
}
