/* ref_int.c: reference integer elementwise ops: lut (y = table[x - storage_min]) and qadd,
 * qsub, qmul, requantize with the arithmetic of lib/numerics/elementwise.h (docs/numerics.md):
 * the f32 functions under --requant=float, the integer-only *_fixed functions (multipliers from
 * their *_params) under --requant=fixed. Also the shared integer-op parameter helpers. */
#include "ref/ref_impl.h"

#include "numerics/elementwise.h"
#include "numerics/numerics.h"

#include <string.h>

bool
ref_int_operand(RefCtx *c, Node *n, uint32_t i, float *s, int32_t *z)
{
    const RefTensor *t = ref_in(c, n, i);
    const QParams *q = t ? t->type.q : NULL;
    if (!q || q->axis >= 0) {
        node_error(c->g, n, "reference interpreter: operand %u must be quantized per tensor", i);
        return false;
    }
    *s = q->scale[0];
    *z = q->zp[0];
    return true;
}

bool
ref_int_range(RefCtx *c, Node *n, int32_t *zy, float *sy, int32_t *lo, int32_t *hi)
{
    const Type *t = &ref_out(c, n, 0)->type;
    if (!t->q || t->q->axis >= 0) {
        node_error(c->g, n, "reference interpreter: result must be quantized per tensor");
        return false;
    }
    *zy = t->q->zp[0];
    *sy = t->q->scale[0];
    ir_clamp_range(c->g, n, t->q, lo, hi);
    return true;
}

bool
ref_op_lut(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    const Attr *ta = ir_attr(c->g, n, "table");
    if (!ta || ta->kind != ATTR_TENSOR || type_numel_unchecked(&ta->t->type) != 256 ||
        ta->t->type.elem != y->type.elem) {
        node_error(c->g, n, "'table' must be a tensor of 256 %s entries", elem_name(y->type.elem));
        return false;
    }
    int64_t lo, hi;
    elem_range(x->type.elem, &lo, &hi);
    size_t es = elem_size(y->type.elem), k = ref_numel(x);
    for (size_t i = 0; i < k; i++) {
        int64_t v = ref_get_i(x, i) - lo;
        if (v < 0 || v > 255) {
            node_error(c->g, n, "lut index %lld out of range", (long long)v);
            return false;
        }
        memcpy((char *)y->data + i * es, (const char *)ta->t->data + (size_t)v * es, es);
    }
    return true;
}

int
ref_int_bits(RefCtx *c, Node *n, uint32_t i)
{
    int64_t lo, hi;
    elem_range(ref_in(c, n, i)->type.elem, &lo, &hi);
    return qn_range_bits(lo, hi);
}

bool
ref_fixed_ok(RefCtx *c, Node *n, const char *why)
{
    if (!why)
        return true;
    node_error(c->g, n, "--requant=fixed: %s", why); /* node_error names the op */
    return false;
}

bool
ref_op_requantize(RefCtx *c, Node *n)
{
    float sx, sy;
    int32_t zx, zy, lo, hi;
    if (!ref_int_operand(c, n, 0, &sx, &zx) || !ref_int_range(c, n, &zy, &sy, &lo, &hi))
        return false;
    QnFixed m;
    if (c->requant_fixed && !ref_fixed_ok(c, n, qn_requantize_fixed_params(sx, sy, &m)))
        return false;
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    size_t k = ref_numel(x);
    for (size_t i = 0; i < k; i++) {
        int32_t v = (int32_t)ref_get_i(x, i);
        ref_set_i(y, i, c->requant_fixed ? qn_requantize_fixed(v, zx, m, zy, lo, hi)
                                         : qn_requantize(v, sx, zx, sy, zy, lo, hi));
    }
    return true;
}

bool
ref_op_qbinary(RefCtx *c, Node *n)
{
    float sa, sb, sy;
    int32_t za, zb, zy, lo, hi;
    if (!ref_int_operand(c, n, 0, &sa, &za) || !ref_int_operand(c, n, 1, &sb, &zb) ||
        !ref_int_range(c, n, &zy, &sy, &lo, &hi))
        return false;
    bool fx = c->requant_fixed;
    int bits = ref_int_bits(c, n, 0) > ref_int_bits(c, n, 1) ? ref_int_bits(c, n, 0)
                                                              : ref_int_bits(c, n, 1);
    QnAddFixed pa;
    QnFixed pm;
    if (fx && !ref_fixed_ok(c, n, n->op == OP_QMUL ? qn_qmul_fixed_params(sa, sb, sy, bits, &pm)
                                                   : qn_qadd_fixed_params(sa, sb, sy, bits, &pa)))
        return false;
    const RefTensor *a = ref_in(c, n, 0), *b = ref_in(c, n, 1);
    RefTensor *y = ref_out(c, n, 0);
    int64_t st_a[IR_MAX_RANK], st_b[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_bcast_strides(&a->type, &y->type, st_a);
    type_bcast_strides(&b->type, &y->type, st_b);
    size_t k = ref_numel(y);
    for (size_t i = 0; i < k; i++) {
        int64_t ia = 0, ib = 0;
        for (int d = 0; d < y->type.rank; d++) {
            ia += idx[d] * st_a[d];
            ib += idx[d] * st_b[d];
        }
        int32_t va = (int32_t)ref_get_i(a, (size_t)ia), vb = (int32_t)ref_get_i(b, (size_t)ib);
        int32_t r;
        if (n->op == OP_QADD)
            r = fx ? qn_qadd_fixed(va, za, vb, zb, &pa, zy, lo, hi)
                   : qn_qadd(va, sa, za, vb, sb, zb, sy, zy, lo, hi);
        else if (n->op == OP_QSUB)
            r = fx ? qn_qsub_fixed(va, za, vb, zb, &pa, zy, lo, hi)
                   : qn_qsub(va, sa, za, vb, sb, zb, sy, zy, lo, hi);
        else
            r = fx ? qn_qmul_fixed(va, za, vb, zb, pm, zy, lo, hi)
                   : qn_qmul(va, sa, za, vb, sb, zb, sy, zy, lo, hi);
        ref_set_i(y, i, r);
        type_next_index(&y->type, idx);
    }
    return true;
}
