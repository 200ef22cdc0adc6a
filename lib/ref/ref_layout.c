/* ref_layout.c: reference layout and selection ops, byte copies valid on every element type
 * (quantized integers pass unchanged): concat, split, slice, pad (constant, reflect, edge;
 * negative pads crop), reshape, transpose, squeeze, unsqueeze, flatten, identity, gather. */
#include "ref/ref_impl.h"

#include <string.h>

bool
ref_op_concat(RefCtx *c, Node *n)
{
    RefTensor *y = ref_out(c, n, 0);
    int64_t a = ir_attr_int(c->g, n, "axis", 0);
    if (a < 0)
        a += y->type.rank;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; d++)
        outer *= y->type.dims[d];
    for (int d = (int)a + 1; d < y->type.rank; d++)
        inner *= y->type.dims[d];
    size_t es = elem_size(y->type.elem);
    size_t yrow = (size_t)(y->type.dims[a] * inner) * es, off = 0;
    for (uint32_t k = 0; k < n->nin; k++) {
        const RefTensor *x = ref_in(c, n, k);
        size_t row = (size_t)(x->type.dims[a] * inner) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)y->data + (size_t)o * yrow + off,
                   (const char *)x->data + (size_t)o * row, row);
        off += row;
    }
    return true;
}

bool
ref_op_split(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    int64_t a = ir_attr_int(c->g, n, "axis", 0);
    if (a < 0)
        a += x->type.rank;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; d++)
        outer *= x->type.dims[d];
    for (int d = (int)a + 1; d < x->type.rank; d++)
        inner *= x->type.dims[d];
    size_t es = elem_size(x->type.elem);
    size_t xrow = (size_t)(x->type.dims[a] * inner) * es, off = 0;
    for (uint32_t k = 0; k < n->nout; k++) {
        RefTensor *y = ref_out(c, n, k);
        size_t row = (size_t)(y->type.dims[a] * inner) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)y->data + (size_t)o * row,
                   (const char *)x->data + (size_t)o * xrow + off, row);
        off += row;
    }
    return true;
}

/* y[idx] = x[sum_a (start[a] + idx[a] * step[a]) * stride[a]] */
static void
strided_copy(const RefTensor *x, RefTensor *y, const int64_t *start, const int64_t *step)
{
    int64_t xs[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_strides(&x->type, xs);
    size_t es = elem_size(x->type.elem), ny = ref_numel(y);
    for (size_t i = 0; i < ny; i++) {
        int64_t src = 0;
        for (int a = 0; a < y->type.rank; a++)
            src += (start[a] + idx[a] * step[a]) * xs[a];
        memcpy((char *)y->data + i * es, (const char *)x->data + (size_t)src * es, es);
        type_next_index(&y->type, idx);
    }
}

bool
ref_op_slice(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK];
    ir_slice_starts(c->g, n, &x->type, start, step);
    strided_copy(x, y, start, step);
    return true;
}

bool
ref_op_pad(RefCtx *c, Node *n)
{
    Graph *g = c->g;
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    int r = x->type.rank;
    int64_t pads[2 * IR_MAX_RANK];
    ir_attr_ints(g, n, "pads", pads, 2 * IR_MAX_RANK);
    const char *mode = ir_attr_string(g, n, "mode", "constant");
    int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : 2;
    const Attr *va = ir_attr(g, n, "value");
    size_t es = elem_size(x->type.elem), ny = ref_numel(y);
    /* the constant in the element type */
    unsigned char cst[8] = {0};
    if (va) {
        RefTensor one = {.type = type_make(x->type.elem, 0, NULL), .data = cst, .nbytes = es};
        double v = va->kind == ATTR_INT ? (double)va->i : va->kind == ATTR_FLOAT ? va->f : 0.0;
        if (elem_is_float(x->type.elem))
            ref_set_f(&one, 0, v);
        else
            ref_set_i(&one, 0, (int64_t)v);
    }
    int64_t xs[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_strides(&x->type, xs);
    for (int a = 0; a < r; a++)
        if (m != 0 && x->type.dims[a] == 0 && y->type.dims[a] > 0) {
            node_error(g, n, "cannot pad an empty dimension in %s mode", mode);
            return false;
        }
    for (size_t i = 0; i < ny; i++) {
        int64_t src = 0;
        bool outside = false;
        for (int a = 0; a < r; a++) {
            int64_t len = x->type.dims[a], p = idx[a] - pads[a];
            if (p < 0 || p >= len) {
                if (m == 0) {
                    outside = true;
                    break;
                }
                if (m == 2) {
                    p = p < 0 ? 0 : len - 1;
                } else if (len == 1) {
                    p = 0;
                } else {
                    int64_t period = 2 * (len - 1);
                    p %= period;
                    if (p < 0)
                        p += period;
                    if (p >= len)
                        p = period - p;
                }
            }
            src += p * xs[a];
        }
        memcpy((char *)y->data + i * es, outside ? cst : (const unsigned char *)x->data + src * es,
               es);
        type_next_index(&y->type, idx);
    }
    return true;
}

bool
ref_op_transpose(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    int r = x->type.rank;
    int64_t perm[IR_MAX_RANK], xs[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    if (ir_attr_ints(c->g, n, "perm", perm, IR_MAX_RANK) < 0)
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    type_strides(&x->type, xs);
    size_t es = elem_size(x->type.elem), ny = ref_numel(y);
    for (size_t i = 0; i < ny; i++) {
        int64_t src = 0;
        for (int a = 0; a < r; a++)
            src += idx[a] * xs[perm[a]];
        memcpy((char *)y->data + i * es, (const char *)x->data + (size_t)src * es, es);
        type_next_index(&y->type, idx);
    }
    return true;
}

bool
ref_op_gather(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0), *ix = ref_in(c, n, 1);
    RefTensor *y = ref_out(c, n, 0);
    int64_t a = ir_attr_int(c->g, n, "axis", 0);
    if (a < 0)
        a += x->type.rank;
    int64_t outer = 1, inner = 1, len = x->type.dims[a];
    for (int d = 0; d < a; d++)
        outer *= x->type.dims[d];
    for (int d = (int)a + 1; d < x->type.rank; d++)
        inner *= x->type.dims[d];
    size_t es = elem_size(x->type.elem), ni = ref_numel(ix);
    size_t blk = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++)
        for (size_t j = 0; j < ni; j++) {
            int64_t k = ref_get_i(ix, j);
            if (k < 0)
                k += len;
            if (k < 0 || k >= len) {
                node_error(c->g, n, "gather index %lld out of range [%lld, %lld)",
                           (long long)ref_get_i(ix, j), (long long)-len, (long long)len);
                return false;
            }
            memcpy((char *)y->data + ((size_t)o * ni + j) * blk,
                   (const char *)x->data + ((size_t)o * (size_t)len + (size_t)k) * blk, blk);
        }
    return true;
}

/* reshape, squeeze, unsqueeze, flatten, identity: the bytes unchanged */
bool
ref_op_copy(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    if (x->nbytes != y->nbytes) {
        node_error(c->g, n, "reference interpreter: size mismatch");
        return false;
    }
    memcpy(y->data, x->data, x->nbytes);
    return true;
}
