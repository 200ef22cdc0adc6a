/* canonicalize.c: local clean-ups every later pass may rely on.
 *  - identity(x) -> x (also a quantized x: identity never rescales);
 * Shape computations and constant subgraphs are folded by the importers as they build the
 * graph (ir_fold), so what reaches here is already static.
 * needs: nothing.  keeps: types.  leaves stale: uses.
 */
#include "pass.h"

bool
pass_canonicalize(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || n->op != OP_IDENTITY)
            continue;
        ValueId from = n->out[0], to = n->in[0];
        n->dead = true;
        ir_replace_all_uses(g, from, to);
        changed = true;
    }
    return changed;
}
