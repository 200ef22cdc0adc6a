/* keep_float.c: the user's keep-float list (context option "keep-float", a comma list of ONNX
 * node names): which nodes the folding passes (qdq-fold, qdq-elementwise, lut, weight-only)
 * leave float, and the warning for a name that matches no node. Kept apart from the pass
 * manager so the passes that ask do not call back into pipeline.c. */
#include "pass.h"

#include <string.h>

bool
pass_in_list(const char *list, const char *name)
{
    if (!list)
        return false;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

bool
pass_keep_float(const PassCtx *pc, const Node *n)
{
    return pc && pc->opt && pc->opt->keep_float && n->loc.node &&
           pass_in_list(pc->opt->keep_float, n->loc.node);
}

/* a keep-float name that names no node is a typo the user should hear about */
void
pass_check_keep_float(Module *m)
{
    const char *list = m->ctx->opt.keep_float;
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool found = false;
        for (uint32_t i = 1; i < m->g.nodes.len && !found && len; i++) {
            const char *nm = m->g.nodes.data[i].loc.node;
            found = nm && strlen(nm) == len && strncmp(nm, p, len) == 0;
        }
        if (!found && len)
            diag_warning(m->ctx, NULL, "%s: keep-float: no node named '%.*s'",
                         m->filename ? m->filename : "model", (int)len, p);
        if (!e)
            break;
        p = e + 1;
    }
}
