/* f16_widen.c: f16 arithmetic is computed in f32.
 * Graphs whose float parts are f16 (NVIDIA ModelOpt's default output, `high_precision_dtype`
 * fp16: a Cast to f16 after each f32 graph input, f16 weights, biases, scales and float ops,
 * a Cast back to f32 before each output) are read as the same graph in f32: every f16 value
 * becomes f32 holding the same number (f16 -> f32 is exact), so the Q/DQ passes and the code
 * generator see the f32 graph they support, and float ops compute in f32. What rounds to f16
 * stays rounded: a Cast to f16 of an f32, f64 or integer value keeps its rounding (cast to f16,
 * then exactly back to f32). The graph's interface does not change: an f16 graph input is
 * widened by a cast after it, an f16 graph output narrowed by a cast before it.
 * This is more precise than evaluating the graph in f16, which rounds every op's result to f16
 * (ONNX Runtime's CPU kernels: f32 arithmetic per op, the result cast to f16): results differ
 * from such an evaluation by that rounding (docs/numerics.md, "f16 graphs").
 * Rewrites: const f16 -> const f32; dequantize to=f16 -> to=f32; constant_of_shape with an f16
 * value -> f32; cast to f16 of a widened value -> identity (exact), of anything else -> cast
 * to f16 -> cast to f32; cast to f32 of a widened value -> identity; every other node retyped by
 * ir_infer_types from its (widened) operands.
 * needs: nothing.  keeps: names (inputs and outputs keep name and type).  leaves stale: uses.
 */
#include "pass.h"

#include <stdio.h>
#include <stdlib.h>

static bool
has_f16(Graph *g)
{
    for (uint32_t v = 1; v < g->values.len; v++)
        if (g->values.data[v].type.elem == ET_F16)
            return true;
    return false;
}

/* Every operand use of the f16 value `from` (not graph outputs, not node `skip`) becomes its
 * f32 widening `to`, except by casts to integers or bool, which read the f16 value as they
 * did (the same numbers). */
static void
replace_operands(Graph *g, ValueId from, ValueId to, NodeId skip)
{
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || i == skip.id ||
            (n->op == OP_CAST && !elem_is_float(ir_value(g, n->out[0])->type.elem)))
            continue;
        for (uint32_t k = 0; k < n->nin; k++)
            if (n->in[k].id == from.id)
                n->in[k] = to;
    }
    g->uses_valid = false;
}

/* A new `cast x to=elem`; its result, named x's name + suffix, is returned. */
static ValueId
add_cast(Graph *g, ValueId x, ElemType elem, const char *suffix, Loc loc)
{
    Type t = ir_value(g, x)->type;
    t.elem = elem;
    t.q = NULL;
    char name[256];
    snprintf(name, sizeof name, "%s_%s", ir_value_name(g, x), suffix);
    NodeId c = ir_add_node(g, OP_CAST, 1, &x, 1, loc);
    ir_set_attr_string(g, c, "to", elem_name(elem));
    return ir_add_result(g, c, 0, name, &t);
}

/* An f16 constant tensor as f32 (the same numbers). */
static Tensor *
widen_tensor(Module *m, const Tensor *t)
{
    Type ft = t->type;
    ft.elem = ET_F32;
    Tensor *r = ir_tensor_new(m, &ft);
    if (!r)
        return NULL;
    size_t cnt = type_numel_unchecked(&t->type);
    for (size_t i = 0; i < cnt; i++)
        ((float *)r->data)[i] = (float)tensor_get_f(t, i);
    return r;
}

/* cast node i: identity when the rounding it asks for is exact, else the round trip.
 * wide[v]: value v holds an f16 number as f32 (sized for every value the pass creates). */
static void
widen_cast(Graph *g, uint32_t i, bool *wide)
{
    Node *n = &g->nodes.data[i];
    ElemType to = ir_value(g, n->out[0])->type.elem;
    bool from_wide = wide[n->in[0].id];
    if (from_wide && (to == ET_F32 || (to == ET_F16 && !ir_is_graph_output(g, n->out[0])))) {
        n->op = OP_IDENTITY; /* f32 -> f32, or an f16 number -> f16: exact */
        n->nattr = 0;
        ir_value(g, n->out[0])->type.elem = ET_F32;
        return;
    }
    if (to != ET_F16)
        return;
    /* the rounding stays; its users read it back as f32 (an output keeps the f16 value) */
    ValueId h = n->out[0];
    ValueId w = add_cast(g, h, ET_F32, "f32", n->loc);
    replace_operands(g, h, w, ir_value(g, w)->def);
    wide[w.id] = true;
}

static void
drop_attr(Graph *g, Node *n, const char *name)
{
    uint32_t id = intern_lookup(&g->m->strs, name), k = 0;
    for (uint32_t i = 0; i < n->nattr; i++)
        if (n->attrs[i].name != id)
            n->attrs[k++] = n->attrs[i];
    n->nattr = k;
}

/* Retype node i's f16 results from its operands and attributes; false on a type error. */
static bool
widen_node(Graph *g, uint32_t i, bool *wide)
{
    Node *n = &g->nodes.data[i];
    if (n->op == OP_CONST) {
        const Attr *a = ir_attr(g, n, "value");
        if (!a || a->kind != ATTR_TENSOR || a->t->type.elem != ET_F16)
            return true;
        Tensor *t = widen_tensor(g->m, a->t);
        if (!t)
            return false;
        qm_const_set(g, n->out[0], t);
        wide[n->out[0].id] = true;
        return true;
    }
    if (n->op == OP_CAST) {
        widen_cast(g, i, wide);
        n = &g->nodes.data[i];
        if (n->op == OP_IDENTITY)
            wide[n->out[0].id] = true;
        return true;
    }
    if (n->op == OP_DEQUANTIZE && ir_value(g, n->out[0])->type.elem == ET_F16)
        drop_attr(g, n, "to"); /* the default, f32 */
    if (n->op == OP_CONSTANT_OF_SHAPE) {
        const Attr *a = ir_attr(g, n, "value");
        if (a && a->kind == ATTR_TENSOR && a->t->type.elem == ET_F16) {
            Tensor *t = widen_tensor(g->m, a->t);
            if (!t)
                return false;
            ir_set_attr_tensor(g, (NodeId){i}, "value", t);
        }
    }
    n = &g->nodes.data[i];
    Type inf[64];
    if (n->nout > 64 || !ir_infer_types(g, n, inf))
        return false;
    for (uint32_t k = 0; k < n->nout; k++) {
        Value *v = ir_value(g, n->out[k]);
        if (v->type.elem == ET_F16 && inf[k].elem == ET_F32) {
            v->type.elem = ET_F32;
            wide[n->out[k].id] = true;
        }
    }
    return true;
}

bool
pass_f16_widen(PassCtx *pc, Graph *g)
{
    if (!has_f16(g))
        return false;
    uint32_t nn = g->nodes.len, nv = g->values.len;
    /* at most one new value per input, node and output */
    bool *wide = calloc(nv + g->inputs.len + nn + g->outputs.len, sizeof *wide);
    bool *was16 = calloc(nv, sizeof *was16); /* the values that were f16 before the pass */
    if (!wide || !was16) {
        free(wide);
        free(was16);
        diag_error(pc->ctx, NULL, "out of memory");
        pc->failed = true;
        return false;
    }
    for (uint32_t v = 1; v < nv; v++)
        was16[v] = g->values.data[v].type.elem == ET_F16;
    /* f16 graph inputs: read through a cast to f32 */
    for (uint32_t k = 0; k < g->inputs.len; k++) {
        ValueId x = g->inputs.data[k];
        if (ir_value(g, x)->type.elem != ET_F16)
            continue;
        ValueId w = add_cast(g, x, ET_F32, "f32", (Loc){0});
        replace_operands(g, x, w, ir_value(g, w)->def);
        wide[w.id] = true;
    }
    for (uint32_t i = 1; i < nn; i++) {
        if (g->nodes.data[i].dead)
            continue;
        if (!widen_node(g, i, wide)) {
            pc->failed = true;
            free(wide);
            free(was16);
            return false;
        }
    }
    /* widened graph outputs: narrowed by a cast, which takes over the output's name (an
     * output listed twice is narrowed once) */
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        ValueId v = g->outputs.data[k];
        if (v.id >= nv || !was16[v.id] || ir_value(g, v)->type.elem != ET_F32)
            continue;
        Loc loc = ir_def(g, v) ? ir_def(g, v)->loc : (Loc){0};
        ValueId h = add_cast(g, v, ET_F16, "f32", loc); /* the name goes to v (f32) below */
        for (uint32_t j = k; j < g->outputs.len; j++)
            if (g->outputs.data[j].id == v.id)
                g->outputs.data[j] = h;
        uint32_t t = ir_value(g, v)->name;
        ir_value(g, v)->name = ir_value(g, h)->name;
        ir_value(g, h)->name = t;
    }
    free(wide);
    free(was16);
    g->uses_valid = false;
    return true;
}
