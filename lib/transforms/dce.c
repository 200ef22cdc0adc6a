/* dce.c: dead code elimination.
 * Marks nodes dead when none of their results is used by a live node or a graph output.
 * ir_compact (run by the pass manager after every pass) already drops nodes unreachable from
 * the outputs; this pass exists so pipelines and tests can ask for it by name, and so that it
 * reports whether anything changed.
 * needs: nothing.  keeps: everything live.  leaves stale: uses.
 */
#include "pass.h"

bool
pass_dce(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false, again = true;
    while (again) {
        again = false;
        ir_fill_uses(g);
        for (uint32_t i = g->nodes.len - 1; i >= 1; i--) {
            Node *n = &g->nodes.data[i];
            if (n->dead)
                continue;
            bool used = false;
            for (uint32_t k = 0; k < n->nout && !used; k++)
                used = ir_num_uses(g, n->out[k]) > 0;
            if (!used) {
                n->dead = true;
                changed = again = true;
            }
        }
    }
    return changed;
}
