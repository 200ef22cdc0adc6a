/* onnx_const.c: the ONNX ops qdqc imports only when every input is a constant, evaluated at
 * import into a constant (eval.c's definitions): Mod, ScatterND (11) and Trilu (14). Real
 * exports use them to build constant masks and index tables (torchvision's Swin builds its
 * shifted-window attention mask with Mod and ScatterND on constants); the IR has no such ops.
 * An input computed at run time is an error naming it. */
#include "onnx_internal.h"
#include "ir/eval.h"

#include <stdio.h>
#include <string.h>

/* Every input of the current node constant (absent optional ones allowed); an error naming
 * the first one computed at run time otherwise. */
static bool
all_const(OnnxImp *I, const char *const *what)
{
    for (size_t k = 0; k < I->node->n_input; k++) {
        if (!IN(I, k).id || CIN(I, k))
            continue;
        if (ir_value(I->g, IN(I, k))->is_input) {
            onnx_not_const_error(I, k, what[k]);
            return false;
        }
        onnx_node_error(I, "qdqc evaluates %s only on constants, but '%s' (input %zu, '%s') "
                        "is computed at run time", I->node->op_type, what[k], k,
                        I->node->input[k]);
        return false;
    }
    return true;
}

/* A new constant tensor of type t for output 0; NULL after a diagnostic if larger than
 * ONNX_MAX_EVAL_BYTES. */
static Tensor *
new_result(OnnxImp *I, const Type *t)
{
    size_t n, bytes;
    if (!type_numel(t, &n) || !size_mul(n, elem_size(t->elem), &bytes) ||
        bytes > ONNX_MAX_EVAL_BYTES) {
        onnx_node_error(I, "result is too large to evaluate at import (more than %zu MiB)",
                        ONNX_MAX_EVAL_BYTES >> 20);
        return NULL;
    }
    Tensor *r = ir_tensor_new(I->m, t);
    QDQC_ASSERT(r);
    return r;
}

static bool
bind_result(OnnxImp *I, Tensor *r)
{
    ValueId v = ir_add_const(I->g, onnx_out_name(I, 0), r, I->loc);
    return onnx_bind(I, onnx_out_name(I, 0), v);
}

static bool
op_mod(OnnxImp *I)
{
    static const char *what[] = {"A", "B"};
    if (!all_const(I, what))
        return false;
    const Tensor *a = CIN(I, 0), *b = CIN(I, 1);
    int64_t fm = onnx_attr_i(I, "fmod", 0);
    if (fm != 0 && fm != 1) {
        onnx_node_error(I, "fmod must be 0 or 1, got %lld", (long long)fm);
        return false;
    }
    if (a->type.elem != b->type.elem || a->type.elem == ET_BOOL) {
        onnx_node_error(I, "operands must be numbers of one type, got %s and %s",
                        elem_name(a->type.elem), elem_name(b->type.elem));
        return false;
    }
    Type t;
    if (!shape_broadcast(&a->type, &b->type, &t)) {
        onnx_node_error(I, "operand shapes do not broadcast");
        return false;
    }
    Tensor *r = new_result(I, &t);
    char err[200];
    if (!r)
        return false;
    if (!ir_eval_mod(a, b, fm != 0, r, err, sizeof err)) {
        onnx_node_error(I, "%s", err);
        return false;
    }
    return bind_result(I, r);
}

static bool
op_scatter_nd(OnnxImp *I)
{
    static const char *what[] = {"data", "indices", "updates"};
    if (!all_const(I, what))
        return false;
    const Tensor *data = CIN(I, 0), *ind = CIN(I, 1), *upd = CIN(I, 2);
    const char *red = onnx_attr_s(I, "reduction", "none");
    if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") &&
        strcmp(red, "max") && strcmp(red, "min")) {
        onnx_node_error(I, "reduction '%s' is not one of none, add, mul, max, min", red);
        return false;
    }
    const Type *dt = &data->type, *it = &ind->type, *ut = &upd->type;
    if (it->elem != ET_I64 || it->rank < 1) {
        onnx_node_error(I, "indices must be an i64 tensor of rank >= 1");
        return false;
    }
    int64_t k = it->dims[it->rank - 1];
    if (dt->rank < 1 || k > dt->rank) {
        onnx_node_error(I, "indices' last dimension %lld exceeds the data's rank %d",
                        (long long)k, dt->rank);
        return false;
    }
    /* updates: indices.shape[:-1] + data.shape[k:] */
    bool shape_ok = ut->elem == dt->elem && ut->rank == it->rank - 1 + dt->rank - (int)k;
    for (int d = 0; shape_ok && d < ut->rank; d++)
        shape_ok = ut->dims[d] == (d < it->rank - 1 ? it->dims[d]
                                                    : dt->dims[k + d - (it->rank - 1)]);
    if (!shape_ok) {
        onnx_node_error(I, "updates must have the data's element type and the shape "
                        "indices.shape[:-1] + data.shape[%lld:]", (long long)k);
        return false;
    }
    Type t = *dt;
    t.q = NULL;
    Tensor *r = new_result(I, &t);
    char err[200];
    if (!r)
        return false;
    if (!ir_eval_scatter_nd(data, ind, upd, red, r, err, sizeof err)) {
        onnx_node_error(I, "%s", err);
        return false;
    }
    return bind_result(I, r);
}

static bool
op_trilu(OnnxImp *I)
{
    static const char *what[] = {"input", "k"};
    if (!all_const(I, what))
        return false;
    const Tensor *x = CIN(I, 0), *kt = IN(I, 1).id ? CIN(I, 1) : NULL;
    if (x->type.rank < 2) {
        onnx_node_error(I, "input must have rank >= 2, got %d", x->type.rank);
        return false;
    }
    if (kt && (type_numel_unchecked(&kt->type) != 1 || kt->type.elem != ET_I64)) {
        onnx_node_error(I, "k must be one i64 value");
        return false;
    }
    Type t = x->type;
    t.q = NULL;
    Tensor *r = new_result(I, &t);
    if (!r)
        return false;
    ir_eval_trilu(x, kt ? tensor_get_i(kt, 0) : 0, onnx_attr_i(I, "upper", 1) != 0, r);
    return bind_result(I, r);
}

const OnnxOpEntry onnx_const_table[] = {
    {"Mod", op_mod, 2, 2, 1, SYM_NONE},
    {"ScatterND", op_scatter_nd, 3, 3, 1, SYM_NONE},
    {"Trilu", op_trilu, 1, 2, 1, SYM_NONE},
};
const size_t onnx_const_table_len = ARRAY_LEN(onnx_const_table);
