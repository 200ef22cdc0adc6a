/* dynamic.c: a module with a run-time dimension becomes the module at size 1 plus the facts
 * PREFIX_run_shapes needs (lib/codegen/abi.c).
 *
 * The passes never see a symbol: a pipeline asked for while a symbol has a run-time range is
 * recorded in the module (lib/transforms/pipeline.c) and runs here on each specialisation, at
 * sizes 1, 2 and 3 of the symbol. The three results must be the same graph with the symbol in
 * one leading axis of the values that carry it, and every node must compute each index along
 * it on its own (lib/ir/batchsep.c); the code is then the graph at size 1, run once per index,
 * so every size gives the bits a static compile at that size gives. A range that reaches 4 also
 * gets the graph at 4 or 8 (chunk_size), run on each full chunk of indices. */
#include "api/dynamic.h"
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
api_dyn_free(CgDyn *d)
{
    free(d->in);
    free(d->out);
    ir_module_destroy(d->chunk_unit);
    d->in = d->out = NULL;
    d->chunk_unit = NULL;
}

/* The size of the second graph: the GEMMs of a graph run once per index have M = one image's
 * pixels (49 on ResNet's 7x7 maps), too few rows for the microkernel's tiles and the threads;
 * eight indices at a time give them eight times the rows. 0 (no second graph) when the range
 * does not reach 4. */
static int64_t
chunk_size(int64_t hi)
{
    if (hi < 4)
        return 0;
    return hi < 8 ? 4 : 8;
}

/* The largest buffer of an input or output at size 1, for the overflow check. */
static int64_t
max_unit_bytes(Graph *g)
{
    int64_t mx = 1;
    for (int out = 0; out < 2; out++) {
        uint32_t n = out ? g->outputs.len : g->inputs.len;
        for (uint32_t i = 0; i < n; i++) {
            const Type *t = &ir_value(g, out ? g->outputs.data[i] : g->inputs.data[i])->type;
            int64_t b = (int64_t)(type_numel_unchecked(t) * elem_size(t->elem));
            mx = b > mx ? b : mx;
        }
    }
    return mx;
}

static bool
check_io(Module *unit, CgDyn *d)
{
    Graph *g = &unit->g;
    bool any = false;
    for (uint32_t i = 0; i < g->inputs.len; i++)
        any |= d->in[i].axis >= 0;
    if (!any) {
        diag_error(unit->ctx, NULL, "no graph input has the run-time dimension ?%s, so a run "
                   "cannot tell its size; bind it with --dim %s=<size>", d->sym, d->sym);
        return false;
    }
    if (max_unit_bytes(g) > ((int64_t)1 << 62) / d->hi) {
        diag_error(unit->ctx, NULL, "--dim %s=%lld..%lld: a buffer of %lld bytes at %s = %lld "
                   "overflows", d->sym, (long long)d->lo, (long long)d->hi,
                   (long long)max_unit_bytes(g), d->sym, (long long)d->hi);
        return false;
    }
    return true;
}

int
api_dyn_prepare(Module *m, Module **unit, CgDyn *d)
{
    int64_t lo, hi;
    uint32_t nsym;
    const char *sym = ir_runtime_symbol(&m->g, &lo, &hi, &nsym);
    *unit = NULL;
    memset(d, 0, sizeof *d);
    if (!sym)
        return 0;
    if (nsym > 1) {
        diag_error(m->ctx, NULL, "%u symbols have a run-time range; a compiled object takes one "
                   "(?%s): bind the others with --dim NAME=<size>", nsym, sym);
        return -1;
    }
    snprintf(d->sym, sizeof d->sym, "%s", sym);
    d->lo = lo;
    d->hi = hi;
    Module *ms[3] = {0};
    bool ok = true;
    for (int i = 0; i < 3 && ok; i++) {
        ms[i] = ir_module_specialise(m, d->sym, i + 1);
        if (!ms[i])
            diag_emit(m->ctx, QDQC_SEV_NOTE, NULL,
                      "a run-time dimension is checked on the model at ?%s = 1, 2 and 3, whatever "
                      "its range: the model must take each of those sizes; bind it with --dim "
                      "%s=<size> otherwise", d->sym, d->sym);
        ok = ms[i] && (!m->deferred_passes ||
                       qdqc_module_run_passes(ms[i], m->deferred_passes) == QDQC_OK);
    }
    if (ok) {
        Graph *g = &ms[0]->g;
        d->in = calloc(g->inputs.len + 1, sizeof *d->in);
        d->out = calloc(g->outputs.len + 1, sizeof *d->out);
        ok = d->in && d->out;
        if (!ok)
            diag_error(m->ctx, NULL, "out of memory");
    }
    ok = ok && ir_require_static(&ms[0]->g, "compiling") && ir_batch_check(ms, d->sym, d->in, d->out) &&
         check_io(ms[0], d);
    ir_module_destroy(ms[1]);
    ir_module_destroy(ms[2]);
    /* the second graph: the same passes at sym = chunk (separable like 1, 2 and 3) */
    d->chunk = ok ? chunk_size(d->hi) : 0;
    if (d->chunk) {
        d->chunk_unit = ir_module_specialise(m, d->sym, d->chunk);
        ok = d->chunk_unit &&
             (!m->deferred_passes || qdqc_module_run_passes(d->chunk_unit, m->deferred_passes) == QDQC_OK) &&
             ir_require_static(&d->chunk_unit->g, "compiling");
    }
    if (!ok) {
        ir_module_destroy(ms[0]);
        api_dyn_free(d);
        return -1;
    }
    *unit = ms[0];
    return 1;
}
