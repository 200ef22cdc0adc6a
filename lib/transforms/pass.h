/* pass.h: the pass manager's interface (internal).
 * A pass is a function that rewrites one graph into a better one and returns whether it
 * changed anything. Errors are reported as diagnostics and set pc->failed. After every pass
 * the manager compacts the graph (drops dead nodes, restores topological order) and, with
 * --verify-each, runs the verifier. Each pass lives in its own file with a header comment
 * saying what it rewrites and why; passes.def lists them. */
#ifndef QDQC_PASS_H
#define QDQC_PASS_H

#include "ir/ir.h"

typedef struct PassCtx {
    qdqc_context *ctx;
    Module *m;
    const QdqcOptions *opt;
    bool failed;
} PassCtx;

typedef bool (*PassFn)(PassCtx *pc, Graph *g);

typedef struct PassInfo {
    const char *name;
    PassFn fn;
    const char *description;
} PassInfo;

#define PASS(NAME, FN, DESC) bool FN(PassCtx *pc, Graph *g);
#include "passes.def"
#undef PASS

const PassInfo *pass_lookup(const char *name);
size_t pass_count(void);
const PassInfo *pass_at(size_t i);
/* The default pipeline: a comma-separated list of pass names. */
const char *pass_default_pipeline(void);
/* Run a comma-separated pipeline ("default" expands). False on error (diagnostics in ctx). */
bool pass_run_pipeline(Module *m, const char *pipeline);

#endif
