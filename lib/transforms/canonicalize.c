/* canonicalize.c: local clean-ups every later pass may rely on.
 *  - identity(x) -> x (also a quantized x: identity never rescales), except where both
 *    x and the result are graph inputs/outputs, whose names are the model's ABI;
 *  - nodes whose operands are constants (shape math, layout of constants, integer
 *    arithmetic) and `shape` of static shapes fold into constants (ir_try_fold, fold.c).
 * The importers already fold as they build the graph; this catches what later passes expose.
 * needs: nothing.  keeps: types.  leaves stale: uses.
 */
#include "pass.h"

bool
pass_canonicalize(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
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
