/* float_islands.c: say what still computes in float after the pipeline, and why.
 * Every float compute op left (not const, not quantize/dequantize, not an integer op) gets a
 * remark with its reason ("no integer rule", "input 1 not quantized", "result not quantized",
 * ...; an add of a constant bias after an integer op's f32 result says why the bias is not in
 * the op's int32 bias, with the checks of weight-fold and qdq-fold) and the number of its float
 * island: float ops joined by float values (directly or through layout ops) share an island.
 * A last remark gives the totals.
 * Nothing is inserted: integer ops are only ever made from dequantized integers and produce
 * quantized (or f32) results, so a float op is always bounded by the model's own dequantize
 * and quantize (or by graph inputs/outputs); the island boundaries are exactly those nodes.
 * pass_float_reason() is shared with the report (lib/api/report.c).
 * needs: nothing.  keeps: everything (changes nothing).  leaves stale: uses.
 */
#include "pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
is_float_compute(Graph *g, const Node *n)
{
    unsigned fl = op_info(n->op)->flags;
    if (n->op == OP_CONST || (fl & (OPF_INT | OPF_QDQ)) || n->op == OP_SHAPE ||
        n->op == OP_CONSTANT_OF_SHAPE)
        return false;
    if (fl & OPF_LAYOUT)
        return false;
    for (uint32_t k = 0; k < n->nout; k++)
        if (elem_is_float(ir_value(g, n->out[k])->type.elem))
            return true;
    return false;
}

/* add(integer op's f32 result, constant bias): why the bias is not in the op's int32 bias.
 * NULL if n is not such an add. The checks mirror weight-fold and qdq-fold. */
static const char *
bias_add_reason(Graph *g, Node *n, char *buf, size_t len)
{
    if (n->op != OP_ADD || n->nin != 2)
        return NULL;
    uint32_t k = 2;
    for (uint32_t i = 0; i < 2 && k == 2; i++) {
        Node *d = ir_def(g, n->in[i]);
        if (d && !d->dead && (d->op == OP_QCONV || d->op == OP_QCONV_TRANSPOSE ||
                              d->op == OP_QMATMUL) &&
            ir_value(g, n->in[i])->type.elem == ET_F32)
            k = i;
    }
    if (k == 2)
        return NULL;
    ValueId bv = n->in[1 - k];
    const Tensor *b = ir_const_of(g, bv);
    Node *bd = b ? NULL : qm_def_op(g, bv, OP_DEQUANTIZE);
    if (!b && !(bd && bd->nin == 1 && ir_const_of(g, bd->in[0])))
        return NULL;
    Node *op = ir_def(g, n->in[k]);
    const char *name = op_info(op->op)->name;
    const Type *yt = &ir_value(g, n->in[k])->type, *bt = &ir_value(g, bv)->type;
    int ca = op->op == OP_QMATMUL ? yt->rank - 1 : 1; /* output channel axis */
    int64_t m = yt->dims[ca];
    if (ir_num_uses(g, n->in[k]) != 1) {
        snprintf(buf, len, "bias add after %s: the %s result has other consumers", name, name);
        return buf;
    }
    bool per_channel = bt->rank <= yt->rank;
    for (int d = 0; d < bt->rank && per_channel; d++) {
        int yd = d + yt->rank - bt->rank;
        per_channel = bt->dims[d] == 1 || (yd == ca && bt->dims[d] == m);
    }
    if (!per_channel) {
        snprintf(buf, len, "bias add after %s: the bias varies along another axis than the "
                 "output channels", name);
        return buf;
    }
    if (bd || b->type.elem != ET_F32) {
        snprintf(buf, len, "bias add after %s: the bias is not an f32 constant or an int32 at "
                 "input scale * weight scale", name);
        return buf;
    }
    const QParams *qx = ir_value(g, op->in[0])->type.q, *qw = ir_value(g, op->in[1])->type.q;
    float sy = qm_out_scale(g, n->out[0]);
    size_t nb = type_numel_unchecked(bt);
    double steps = 0;
    if (qx && qw && sy > 0 && (m == (int64_t)nb || nb == 1)) {
        float *bf = xmalloc((size_t)m * 2 * sizeof(float) + (size_t)m * sizeof(int32_t));
        float *sw = bf + m;
        int32_t *bq = (int32_t *)(sw + m);
        for (int64_t c = 0; c < m; c++) {
            bf[c] = (float)tensor_get_f(b, nb == 1 ? 0 : (size_t)c);
            sw[c] = qm_scale_at(qw, qw->n == 1 ? 0 : c % (int64_t)qw->n);
        }
        steps = qm_quantize_bias(bf, qx->scale[0], sw, m, sy, bq);
        free(bf);
    }
    if (steps > QM_BIAS_MAX_STEPS)
        snprintf(buf, len, "float bias kept exact: as int32 at input scale * weight scale it "
                 "would move the result by up to %.3g output steps", steps);
    else
        snprintf(buf, len, "bias add after %s: %s", name,
                 op->nin > 2 && op->in[2].id ? "the op has a bias of its own"
                                             : "not folded (remark on the add)");
    return buf;
}

const char *
pass_float_reason(Graph *g, Node *n, char *buf, size_t len)
{
    if (n->dead || !is_float_compute(g, n))
        return NULL;
    if (n->op == OP_WMATMUL) {
        const Type *w = &ir_value(g, n->in[1])->type;
        if (strcmp(ir_attr_string(g, n, "acts", "f32"), "i8") == 0)
            snprintf(buf, len, "weight-only: activations quantized to int8 per row at run time "
                     "(--weight-only=int8-acts), %s weights [%lld, %lld], int8 GEMM",
                     elem_name(w->elem), (long long)w->dims[0], (long long)w->dims[1]);
        else
            snprintf(buf, len, "weight-only: f32 activations, %s weights [%lld, %lld] dequantized "
                     "in registers", elem_name(w->elem), (long long)w->dims[0],
                     (long long)w->dims[1]);
        return buf;
    }
    if (n->op == OP_WCONV) {
        snprintf(buf, len, "weight-only: f32 activations, %s conv weights [%lld, %lld, ...] "
                 "converted in registers", elem_name(ir_value(g, n->in[1])->type.elem),
                 (long long)ir_value(g, n->in[1])->type.dims[0],
                 (long long)ir_value(g, n->in[1])->type.dims[1]);
        return buf;
    }
    if (!(op_info(n->op)->flags & OPF_QRULE)) {
        snprintf(buf, len, "no integer rule");
        return buf;
    }
    if (n->op == OP_BATCHNORM) {
        snprintf(buf, len, "not folded into a conv (no conv before it, or non-constant statistics)");
        return buf;
    }
    /* qdq-fold / qdq-elementwise leave 3-D convs and pools float (1-D and 2-D integer kernels) */
    if ((n->op == OP_CONV || n->op == OP_AVGPOOL || n->op == OP_GLOBAL_AVGPOOL) &&
        ir_value(g, n->in[0])->type.rank > 4) {
        snprintf(buf, len, "%d spatial dimensions (the integer %s are 1-D and 2-D)",
                 ir_value(g, n->in[0])->type.rank - 2, n->op == OP_CONV ? "convs" : "pools");
        return buf;
    }
    qm_uses(g);
    const char *why = bias_add_reason(g, n, buf, len);
    if (why)
        return why;
    uint32_t ndata = n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE || n->op == OP_MATMUL ||
                     n->op == OP_GEMM || n->op == OP_ADD || n->op == OP_SUB || n->op == OP_MUL
                     ? 2 : 1;
    for (uint32_t k = 0; k < ndata && k < n->nin; k++) {
        Node *d = qm_def_op(g, n->in[k], OP_DEQUANTIZE);
        if (!d || !d->q) {
            snprintf(buf, len, "input %u not quantized", k);
            return buf;
        }
        /* 16-bit: activations of conv, matmul, gemm and any operand of add/sub/mul */
        bool lin = n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE || n->op == OP_MATMUL ||
                   n->op == OP_GEMM;
        bool ok16 = lin ? k == 0 && n->op != OP_CONV_TRANSPOSE : true;
        if (!qm_is_8bit(d->q->storage) && !(ok16 && qm_is_16bit(d->q->storage))) {
            snprintf(buf, len, "input %u is %s, not %s", k, elem_name(d->q->storage),
                     ok16 ? "8- or 16-bit" : "8-bit");
            return buf;
        }
        if (d->q->axis >= 0 && k == 0) {
            snprintf(buf, len, "input %u is quantized per channel", k);
            return buf;
        }
    }
    if (n->op == OP_CONV || n->op == OP_CONV_TRANSPOSE || n->op == OP_MATMUL || n->op == OP_GEMM) {
        if (n->op == OP_GEMM && (ir_attr_int(g, n, "transA", 0) || ir_attr_int(g, n, "transB", 0) ||
                                 ir_attr_float(g, n, "alpha", 1) != 1.0f)) {
            snprintf(buf, len, "transA=%d, transB=%d, alpha=%g not normalised (weight-fold's "
                     "remark says why)", (int)ir_attr_int(g, n, "transA", 0),
                     (int)ir_attr_int(g, n, "transB", 0), (double)ir_attr_float(g, n, "alpha", 1));
            return buf;
        }
        if (n->nin > 2 && n->in[2].id) {
            Node *d = qm_def_op(g, n->in[2], OP_DEQUANTIZE);
            if (!d || !d->q || d->q->storage != ET_I32) {
                snprintf(buf, len, "bias not quantized to int32");
                return buf;
            }
        }
        snprintf(buf, len, "weight quantization not supported here (axis or parameters)");
        return buf;
    }
    snprintf(buf, len, "result not quantized");
    return buf;
}

/* union-find over node ids */
static uint32_t
find(uint32_t *p, uint32_t x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

bool
pass_float_islands(PassCtx *pc, Graph *g)
{
    (void)pc;
    uint32_t nn = g->nodes.len;
    uint32_t *parent = xmalloc(nn * sizeof(uint32_t));
    for (uint32_t i = 0; i < nn; i++)
        parent[i] = i;
    /* join float compute ops through float values; layout ops on float values join too */
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        bool fc = is_float_compute(g, n);
        bool fl = (op_info(n->op)->flags & OPF_LAYOUT) && n->nout &&
                  elem_is_float(ir_value(g, n->out[0])->type.elem);
        if (n->dead || (!fc && !fl))
            continue;
        for (uint32_t k = 0; k < n->nin; k++) {
            Node *d = ir_def(g, n->in[k]);
            if (!d || d->dead || !elem_is_float(ir_value(g, n->in[k])->type.elem))
                continue;
            bool dfc = is_float_compute(g, d);
            bool dfl = (op_info(d->op)->flags & OPF_LAYOUT) != 0;
            if (dfc || dfl) {
                uint32_t a = find(parent, i), b = find(parent, (uint32_t)(d - g->nodes.data));
                parent[a] = b;
            }
        }
    }
    uint32_t *island = xcalloc(nn, sizeof(uint32_t));
    uint32_t nisl = 0, nfloat = 0;
    char buf[160];
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        const char *why = pass_float_reason(g, n, buf, sizeof buf);
        if (!why)
            continue;
        uint32_t r = find(parent, i);
        if (!island[r])
            island[r] = ++nisl;
        nfloat++;
        node_remark(g, n, "%s (float island %u)", why, island[r]);
    }
    if (nfloat) {
        Loc l = {.file = g->m->filename};
        diag_emit(g->m->ctx, QDQC_SEV_REMARK, &l, "%u op%s float in %u island%s", nfloat,
                  nfloat == 1 ? " stays" : "s stay", nisl, nisl == 1 ? "" : "s");
    }
    free(parent);
    free(island);
    return false;
}
