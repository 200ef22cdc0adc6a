/* ref_tensor.c: the reference interpreter's tensor storage and the helpers every op family
 * shares (element access as double/int64, the f32 view of an operand, window geometry). Apart
 * from the driver (ref.c) so the op files depend on these helpers and the driver on the op files,
 * with no loop. */
#include "ref/ref_impl.h"

#include "numerics/numerics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- tensors ---- */

bool
ref_tensor_alloc(RefTensor *t, const Type *type)
{
    memset(t, 0, sizeof *t);
    size_t n, bytes;
    if (type->elem == ET_NONE || !type_numel(type, &n) ||
        !size_mul(n, elem_size(type->elem), &bytes) || bytes > REF_MAX_TENSOR_BYTES)
        return false;
    void *d = try_calloc(bytes, 1);
    if (!d) /* under the size cap: out of memory */
        oom_raise("reference interpreter: a tensor of %zu bytes", bytes);
    t->type = *type;
    t->data = d;
    t->nbytes = bytes;
    return true;
}

void
ref_tensor_free(RefTensor *t)
{
    if (!t)
        return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

size_t
ref_numel(const RefTensor *t)
{
    size_t es = elem_size(t->type.elem);
    return es ? t->nbytes / es : 0;
}

static Tensor
view(const RefTensor *t)
{
    Tensor v = {.type = t->type, .data = t->data, .nbytes = t->nbytes};
    return v;
}

double
ref_get_f(const RefTensor *t, size_t i)
{
    Tensor v = view(t);
    return tensor_get_f(&v, i);
}

int64_t
ref_get_i(const RefTensor *t, size_t i)
{
    Tensor v = view(t);
    return tensor_get_i(&v, i);
}

void
ref_set_f(RefTensor *t, size_t i, double x)
{
    Tensor v = view(t);
    tensor_set_f(&v, i, x);
}

void
ref_set_i(RefTensor *t, size_t i, int64_t x)
{
    Tensor v = view(t);
    tensor_set_i(&v, i, x);
}

const float *
ref_f32_in(RefCtx *c, Node *n, uint32_t i)
{
    const RefTensor *t = ref_in(c, n, i);
    if (!t || t->type.elem != ET_F32) {
        node_error(c->g, n, "reference interpreter: operand %u must be f32, got %s", i,
                   t ? elem_name(t->type.elem) : "nothing");
        return NULL;
    }
    return t->data;
}

float *
ref_f32_out(RefCtx *c, Node *n, uint32_t i)
{
    RefTensor *t = ref_out(c, n, i);
    if (t->type.elem != ET_F32) {
        node_error(c->g, n, "reference interpreter: result %u must be f32, got %s", i,
                   elem_name(t->type.elem));
        return NULL;
    }
    return t->data;
}




bool
ref_window(RefCtx *c, Node *n, const Type *x, const Type *y, const int64_t *kernel, IrWindow *w)
{
    char buf[160];
    const char *why = ir_window(c->g, n, x, y, kernel, w, buf, sizeof buf);
    if (why)
        node_error(c->g, n, "reference interpreter: %s", why);
    return !why;
}
