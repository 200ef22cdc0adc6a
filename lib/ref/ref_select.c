/* ref_select.c: the reference comparison, logic, selection, broadcasting, range, reduction
 * (reduce_sum, reduce_max, reduce_min), argmax and cast ops: lib/ir/eval.c computes them, the
 * definition constant folding uses too (docs/ir.md, "Comparisons, selection and
 * reductions"); the code generator reproduces it operation for operation. */
#include "ref/ref_impl.h"

#include "ir/eval.h"

static Tensor
view(const RefTensor *t)
{
    Tensor v = {.type = t->type, .data = t->data, .nbytes = t->nbytes};
    return v;
}

bool
ref_op_select(RefCtx *c, Node *n)
{
    Tensor in[3], out;
    const Tensor *ins[3] = {NULL, NULL, NULL};
    for (uint32_t k = 0; k < n->nin && k < 3; k++) {
        const RefTensor *t = ref_in(c, n, k);
        if (t) {
            in[k] = view(t);
            ins[k] = &in[k];
        }
    }
    out = view(ref_out(c, n, 0));
    Tensor *outs[1] = {&out};
    char err[200];
    if (!ir_eval(c->g, n, ins, outs, err, sizeof err)) {
        node_error(c->g, n, "%s", err);
        return false;
    }
    return true;
}
