/* compare.c: the library side of the accuracy comparison (docs/accuracy.md): error metrics
 * of one tensor against a reference, the activation quantizes of a graph with their
 * parameters, and intermediate values made graph outputs so that the reference interpreter
 * and the JIT show them. `qdqc compare` (tools/qdqc/compare_cmd.c) runs the float model, the
 * QDQ graph as written and the compiled code over these. Nothing here prints or exits. */
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

qdqc_status
qdqc_error_stats_compute(const float *ref, const float *x, size_t n, double step,
                         qdqc_error_stats *out)
{
    if (!out || (n && (!ref || !x)))
        return QDQC_ERR_INVALID_ARG;
    double sig = 0, noise = 0, dot = 0, xx = 0, maxe = 0, sume = 0;
    for (size_t i = 0; i < n; i++) {
        double r = ref[i], v = x[i], e = v - r;
        sig += r * r;
        noise += e * e;
        dot += r * v;
        xx += v * v;
        double a = fabs(e);
        if (a > maxe || a != a)
            maxe = a;
        sume += a;
    }
    memset(out, 0, sizeof *out);
    if (noise == 0)
        out->sqnr_db = INFINITY;
    else if (sig == 0)
        out->sqnr_db = -INFINITY;
    else
        out->sqnr_db = 10.0 * log10(sig / noise);
    if (sig == 0 && xx == 0)
        out->cosine = 1.0;
    else if (sig == 0 || xx == 0)
        out->cosine = 0.0;
    else
        out->cosine = dot / (sqrt(sig) * sqrt(xx));
    out->max_abs = maxe;
    out->mean_abs = n ? sume / (double)n : 0.0;
    if (step > 0) {
        out->max_steps = maxe / step;
        out->mean_steps = out->mean_abs / step;
    }
    return QDQC_OK;
}

/* Static per-tensor quantize of a value that is computed (not a constant). */
static bool
is_act_quant(const Graph *g, const Node *n)
{
    if (n->dead || n->op != OP_QUANTIZE || !n->q || n->q->n != 1 || n->nin < 1 || !n->in[0].id)
        return false;
    return ir_const_of((Graph *)g, n->in[0]) == NULL;
}

size_t
qdqc_module_quant_count(const qdqc_module *m)
{
    if (!m)
        return 0;
    size_t k = 0;
    for (uint32_t i = 1; i < m->g.nodes.len; i++)
        k += is_act_quant(&m->g, &m->g.nodes.data[i]);
    return k;
}

qdqc_status
qdqc_module_quant_get(const qdqc_module *m, size_t idx, qdqc_quant_info *out)
{
    if (!m || !out)
        return QDQC_ERR_INVALID_ARG;
    const Graph *g = &m->g;
    const Node *q = NULL;
    size_t k = 0;
    for (uint32_t i = 1; i < g->nodes.len && !q; i++)
        if (is_act_quant(g, &g->nodes.data[i]) && k++ == idx)
            q = &g->nodes.data[i];
    if (!q)
        return QDQC_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    out->node = q->loc.node ? q->loc.node : "";
    out->input = ir_value_name(g, q->in[0]);
    out->output = ir_value_name(g, q->out[0]);
    out->dq_output = "";
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        const Node *d = &g->nodes.data[i];
        if (!d->dead && d->op == OP_DEQUANTIZE && d->nin >= 1 && d->in[0].id == q->out[0].id &&
            qparams_equal(d->q, q->q)) {
            out->dq_output = ir_value_name(g, d->out[0]);
            break;
        }
    }
    snprintf(out->storage, sizeof out->storage, "%s", elem_name(q->q->storage));
    out->scale = q->q->scale[0];
    out->zero_point = q->q->zp[0];
    out->qmin = q->q->qmin;
    out->qmax = q->q->qmax;
    return QDQC_OK;
}

static ValueId
find_value(const qdqc_module *m, const char *name)
{
    uint32_t id = intern_lookup(&m->strs, name);
    if (!id)
        return VNONE;
    const Graph *g = &m->g;
    for (uint32_t i = 1; i < g->values.len; i++) {
        const Value *v = &g->values.data[i];
        if (v->name != id)
            continue;
        /* a live value: a graph input or the result of a live node */
        if (v->is_input || (v->def.id && !g->nodes.data[v->def.id].dead))
            return (ValueId){i};
    }
    return VNONE;
}

const char *
qdqc_module_value_elem_type(const qdqc_module *m, const char *name)
{
    if (!m || !name)
        return NULL;
    ValueId v = find_value(m, name);
    return v.id ? elem_name(m->g.values.data[v.id].type.elem) : NULL;
}

qdqc_status
qdqc_module_add_output(qdqc_module *m, const char *name)
{
    if (!m || !name)
        return QDQC_ERR_INVALID_ARG;
    ValueId v = find_value(m, name);
    if (!v.id) {
        diag_error(m->ctx, NULL, "%s: no value named '%s'", m->filename ? m->filename : "model",
                   name);
        return QDQC_ERR_INVALID_ARG;
    }
    Graph *g = &m->g;
    for (uint32_t k = 0; k < g->outputs.len; k++)
        if (g->outputs.data[k].id == v.id)
            return QDQC_OK;
    OOM_TRAP_ENTER(trap, m->ctx, m->filename, QDQC_ERR_NOMEM);
    vec_push(&g->outputs, v);
    g->uses_valid = false;
    OOM_TRAP_LEAVE(trap);
    return QDQC_OK;
}
