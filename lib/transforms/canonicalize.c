/* canonicalize.c: local clean-ups every later pass may rely on.
 *  - identity(x) -> x (also a quantized x: identity never rescales), except where both
 *    x and the result are graph inputs/outputs, whose names are the model's ABI;
 *  - nodes whose operands are constants (shape math, layout of constants, integer
 *    arithmetic) and `shape` of static shapes fold into constants (ir_try_fold, fold.c);
 *  - a maxpool whose indices result (result 1) is unused becomes a one-result maxpool, so
 *    the Q/DQ passes see a plain layout op (they must not reorder quantize and a maxpool
 *    whose indices are used).
 * The importers already fold as they build the graph; this catches what later passes expose.
 * needs: nothing.  keeps: types.  leaves stale: uses.
 */
#include "pass.h"

/* maxpool with an unused result 1 -> maxpool with one result (same operand and attributes) */
static bool
drop_unused_indices(Graph *g)
{
    VEC(uint32_t) todo = {0};
    ir_fill_uses(g);
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (!n->dead && n->op == OP_MAXPOOL && n->nout > 1 && !ir_num_uses(g, n->out[1]))
            vec_push(&todo, i);
    }
    static const char *const skip[] = {"storage_order", NULL};
    for (uint32_t k = 0; k < todo.len; k++) {
        NodeId old = {todo.data[k]};
        NodeId r = ir_add_node(g, OP_MAXPOOL, 1, ir_node(g, old)->in, 1, ir_node(g, old)->loc);
        qm_copy_attrs(g, r, old, skip);
        ir_set_result(g, r, 0, ir_node(g, old)->out[0]);
        ir_node(g, old)->dead = true;
    }
    bool changed = todo.len > 0;
    vec_free(&todo);
    return changed;
}

bool
pass_canonicalize(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = drop_unused_indices(g);
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        /* constant operands (or a static shape): replace by constants (fold.c) */
        if (ir_try_fold(g, (NodeId){i})) {
            changed = true;
            continue;
        }
        Node *n = &g->nodes.data[i];
        if (n->dead || n->op != OP_IDENTITY)
            continue;
        ValueId from = n->out[0], to = n->in[0];
        /* A graph output that is an identity of a graph input (or of another output) keeps
         * its node: both names are ABI and one value cannot carry two. */
        bool from_out = false, to_out = false;
        for (uint32_t k = 0; k < g->outputs.len; k++) {
            from_out |= g->outputs.data[k].id == from.id;
            to_out |= g->outputs.data[k].id == to.id;
        }
        if (from_out && (ir_value(g, to)->is_input || to_out))
            continue;
        n->dead = true;
        ir_replace_all_uses(g, from, to);
        changed = true;
    }
    return changed;
}
