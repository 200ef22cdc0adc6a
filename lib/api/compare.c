/* compare.c: the accuracy comparison (docs/accuracy.md). Error metrics of one tensor against
 * a reference, the activation quantizes of a graph with their parameters, intermediate values
 * made graph outputs so that the reference interpreter and the JIT show them, and on these the
 * comparison object (qdqc_compare_*): the float model and the QDQ graph as written on the
 * reference interpreter, the QDQ graph compiled on the JIT, rows matched by name and metrics
 * accumulated over samples. `qdqc compare` (tools/qdqc/compare_cmd.c) prints them. Nothing
 * here prints or exits. */
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

/* The allocation under its trap, apart: no local of the caller lives across the setjmp
   (GCC's -Wclobbered at -O2 otherwise). */
__attribute__((noinline)) static qdqc_status
push_output(qdqc_module *m, ValueId v)
{
    OOM_TRAP_ENTER(trap, m->ctx, m->filename, QDQC_ERR_NOMEM);
    vec_push(&m->g.outputs, v);
    m->g.uses_valid = false;
    OOM_TRAP_LEAVE(trap);
    return QDQC_OK;
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
    if (ir_is_graph_output(g, v))
        return QDQC_OK;
    return push_output(m, v);
}

/* ---- the comparison object: float model, QDQ as written, QDQ compiled ---- */

typedef struct Buffers {
    qdqc_module *m;
    size_t nin, nout;
    void **in, **out;
    size_t *in_n, *out_n; /* element counts */
} Buffers;

typedef struct FVec {
    float *v;
    size_t n, cap;
} FVec;

typedef struct CmpRow {
    qdqc_quant_info q; /* strings owned by the row */
    char *fname;
    bool compiled, is_float;
    FVec f, dl, dc;    /* float model, dequantized QDQ, dequantized compiled */
    double xmin, xmax;
    uint64_t count, clip_lo, clip_hi;
} CmpRow;

struct qdqc_compare {
    qdqc_context *ctx;
    qdqc_module *fm, *lm, *cm; /* float, QDQ as written, QDQ compiled */
    qdqc_jit *jit;
    Buffers fb, lb, cb;
    CmpRow *rows;
    size_t nrows;
};

static size_t
cmp_numel(int rank, const int64_t *dims)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)(dims[i] > 0 ? dims[i] : 0);
    return n;
}

static bool
buffers_alloc(Buffers *b, qdqc_module *m)
{
    b->m = m;
    b->nin = qdqc_module_input_count(m);
    b->nout = qdqc_module_output_count(m);
    b->in = calloc(b->nin + 1, sizeof(void *));
    b->out = calloc(b->nout + 1, sizeof(void *));
    b->in_n = calloc(b->nin + 1, sizeof(size_t));
    b->out_n = calloc(b->nout + 1, sizeof(size_t));
    if (!b->in || !b->out || !b->in_n || !b->out_n)
        return false;
    for (size_t i = 0; i < b->nin; i++) {
        b->in_n[i] = cmp_numel(qdqc_module_input_rank(m, i), qdqc_module_input_dims(m, i));
        b->in[i] = calloc(b->in_n[i] + 1, qdqc_elem_type_size(qdqc_module_input_elem_type(m, i)));
        if (!b->in[i])
            return false;
    }
    for (size_t i = 0; i < b->nout; i++) {
        b->out_n[i] = cmp_numel(qdqc_module_output_rank(m, i), qdqc_module_output_dims(m, i));
        b->out[i] =
            calloc(b->out_n[i] + 1, qdqc_elem_type_size(qdqc_module_output_elem_type(m, i)));
        if (!b->out[i])
            return false;
    }
    return true;
}

static void
buffers_free(Buffers *b)
{
    for (size_t i = 0; b->in && i < b->nin; i++)
        free(b->in[i]);
    for (size_t i = 0; b->out && i < b->nout; i++)
        free(b->out[i]);
    free(b->in);
    free(b->out);
    free(b->in_n);
    free(b->out_n);
}

/* A graph input or output of b's module by name. */
static bool
find_tensor(const Buffers *b, const char *name, const void **data, size_t *n, const char **et)
{
    for (size_t i = 0; i < b->nout; i++)
        if (!strcmp(qdqc_module_output_name(b->m, i), name)) {
            *data = b->out[i];
            *n = b->out_n[i];
            *et = qdqc_module_output_elem_type(b->m, i);
            return true;
        }
    for (size_t i = 0; i < b->nin; i++)
        if (!strcmp(qdqc_module_input_name(b->m, i), name)) {
            *data = b->in[i];
            *n = b->in_n[i];
            *et = qdqc_module_input_elem_type(b->m, i);
            return true;
        }
    return false;
}

static bool
get_f64(const char *et, const void *p, size_t i, double *v)
{
    ElemType e = elem_from_name(et, strlen(et));
    switch (e) {
    case ET_F32: {
        float f;
        memcpy(&f, (const char *)p + 4 * i, 4);
        *v = f;
        return true;
    }
    case ET_I8: case ET_I4: *v = ((const int8_t *)p)[i]; return true;
    case ET_U8: case ET_U4: *v = ((const uint8_t *)p)[i]; return true;
    case ET_I16: {
        int16_t x;
        memcpy(&x, (const char *)p + 2 * i, 2);
        *v = x;
        return true;
    }
    case ET_U16: {
        uint16_t x;
        memcpy(&x, (const char *)p + 2 * i, 2);
        *v = x;
        return true;
    }
    case ET_I32: {
        int32_t x;
        memcpy(&x, (const char *)p + 4 * i, 4);
        *v = x;
        return true;
    }
    default: return false;
    }
}

static bool
fvec_add(FVec *v, float x)
{
    if (v->n == v->cap) {
        size_t c = v->cap ? 2 * v->cap : 256;
        float *p = realloc(v->v, c * sizeof(float));
        if (!p)
            return false;
        v->v = p;
        v->cap = c;
    }
    v->v[v->n++] = x;
    return true;
}

static char *
dup_str(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

static char *
strip_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    if (n <= k || strcmp(s + n - k, suf) != 0)
        return NULL;
    return dup_str(s, n - k);
}

static bool
is_float_value(const qdqc_module *f, const char *name)
{
    const char *et = qdqc_module_value_elem_type(f, name);
    return et && !strcmp(et, "f32");
}

/* The map's float name for q, if a line names q's node, input, output or dequantize output:
 * copied into buf. */
static bool
map_lookup(const char *map, const qdqc_quant_info *q, char *buf, size_t len)
{
    for (const char *p = map; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t ll = e ? (size_t)(e - p) : strlen(p);
        const char *h = memchr(p, '#', ll);
        if (h)
            ll = (size_t)(h - p);
        const char *w[2] = {0};
        size_t wl[2] = {0};
        int k = 0;
        for (size_t i = 0; i < ll && k < 2;) {
            while (i < ll && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
                i++;
            if (i == ll)
                break;
            w[k] = p + i;
            while (i < ll && p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
                i++;
            wl[k] = (size_t)(p + i - w[k]);
            k++;
        }
        if (k == 2 && wl[0] < len) {
            const char *c[4] = {q->node, q->input, q->output, q->dq_output};
            for (int j = 0; j < 4; j++)
                if (*c[j] && strlen(c[j]) == wl[1] && !memcmp(c[j], w[1], wl[1])) {
                    memcpy(buf, w[0], wl[0]);
                    buf[wl[0]] = 0;
                    return true;
                }
        }
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

static char *
match_float(const qdqc_module *f, const qdqc_quant_info *q, const char *map)
{
    char buf[4096];
    if (map && map_lookup(map, q, buf, sizeof buf))
        return dup_str(buf, strlen(buf));
    if (is_float_value(f, q->input))
        return dup_str(q->input, strlen(q->input));
    const char *c[3][2] = {{q->input, "_QuantizeLinear_Input"},
                           {q->output, "_QuantizeLinear_Output"},
                           {q->dq_output, "_DequantizeLinear_Output"}};
    for (int i = 0; i < 3; i++) {
        char *s = strip_suffix(c[i][0], c[i][1]);
        if (s && is_float_value(f, s))
            return s;
        free(s);
    }
    if (*q->dq_output && is_float_value(f, q->dq_output))
        return dup_str(q->dq_output, strlen(q->dq_output));
    return NULL;
}

void
qdqc_compare_destroy(qdqc_compare *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->rows && i < c->nrows; i++) {
        CmpRow *r = &c->rows[i];
        free((char *)r->q.node);
        free((char *)r->q.input);
        free((char *)r->q.output);
        free((char *)r->q.dq_output);
        free(r->fname);
        free(r->f.v);
        free(r->dl.v);
        free(r->dc.v);
    }
    free(c->rows);
    qdqc_jit_destroy(c->jit);
    buffers_free(&c->fb);
    buffers_free(&c->lb);
    buffers_free(&c->cb);
    qdqc_module_destroy(c->fm);
    qdqc_module_destroy(c->lm);
    qdqc_module_destroy(c->cm);
    free(c);
}

static qdqc_status
nomem(qdqc_compare *c)
{
    diag_error(c->ctx, NULL, "out of memory");
    qdqc_compare_destroy(c);
    return QDQC_ERR_NOMEM;
}

qdqc_status
qdqc_compare_create(qdqc_context *ctx, const char *float_path, const char *qdq_path,
                    const qdqc_compile_options *opts, const char *map, qdqc_compare **out)
{
    if (!ctx || !float_path || !qdq_path || !out)
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    qdqc_compare *c = calloc(1, sizeof *c);
    if (!c)
        return QDQC_ERR_NOMEM;
    c->ctx = ctx;
    qdqc_status st;
    if ((st = qdqc_module_load_file(ctx, float_path, &c->fm)) != QDQC_OK ||
        (st = qdqc_module_load_file(ctx, qdq_path, &c->lm)) != QDQC_OK ||
        (st = qdqc_module_load_file(ctx, qdq_path, &c->cm)) != QDQC_OK ||
        (st = qdqc_module_run_passes(c->cm, "default")) != QDQC_OK) {
        qdqc_compare_destroy(c);
        return st;
    }
    size_t n = qdqc_module_quant_count(c->lm);
    c->rows = calloc(n + 1, sizeof(CmpRow));
    if (!c->rows)
        return nomem(c);
    c->nrows = n;
    for (size_t i = 0; i < n; i++) {
        CmpRow *r = &c->rows[i];
        qdqc_quant_info q;
        qdqc_module_quant_get(c->lm, i, &q);
        r->q = q;
        r->q.node = dup_str(q.node, strlen(q.node));
        r->q.input = dup_str(q.input, strlen(q.input));
        r->q.output = dup_str(q.output, strlen(q.output));
        r->q.dq_output = dup_str(q.dq_output, strlen(q.dq_output));
        if (!r->q.node || !r->q.input || !r->q.output || !r->q.dq_output)
            return nomem(c);
        r->fname = match_float(c->fm, &r->q, map);
        const char *ct = qdqc_module_value_elem_type(c->cm, q.output);
        r->compiled = ct && !strcmp(ct, q.storage);
        const char *xt = qdqc_module_value_elem_type(c->cm, q.input);
        bool is_input = false;
        for (size_t k = 0; k < qdqc_module_input_count(c->lm); k++)
            is_input |= !strcmp(qdqc_module_input_name(c->lm, k), q.input);
        r->is_float = !is_input && xt && !strcmp(xt, "f32");
        r->xmin = INFINITY;
        r->xmax = -INFINITY;
    }
    /* every tensor a graph output (the quant info strings above were copied first) */
    for (size_t i = 0; i < n; i++) {
        CmpRow *r = &c->rows[i];
        if ((r->fname && (st = qdqc_module_add_output(c->fm, r->fname)) != QDQC_OK) ||
            (st = qdqc_module_add_output(c->lm, r->q.input)) != QDQC_OK ||
            (st = qdqc_module_add_output(c->lm, r->q.output)) != QDQC_OK ||
            (r->compiled && (st = qdqc_module_add_output(c->cm, r->q.output)) != QDQC_OK)) {
            qdqc_compare_destroy(c);
            return st;
        }
    }
    if (!buffers_alloc(&c->fb, c->fm) || !buffers_alloc(&c->lb, c->lm) ||
        !buffers_alloc(&c->cb, c->cm))
        return nomem(c);
    /* the float model's inputs: those of the QDQ model by name, else by position */
    for (size_t i = 0; i < c->fb.nin; i++) {
        const char *name = qdqc_module_input_name(c->fm, i);
        size_t k = c->lb.nin;
        for (size_t j = 0; j < c->lb.nin; j++)
            if (!strcmp(qdqc_module_input_name(c->lm, j), name))
                k = j;
        if (k == c->lb.nin && i < c->lb.nin)
            k = i;
        if (k == c->lb.nin || c->lb.in_n[k] != c->fb.in_n[i] ||
            strcmp(qdqc_module_input_elem_type(c->lm, k), qdqc_module_input_elem_type(c->fm, i))) {
            diag_error(ctx, NULL, "%s: input '%s' has no counterpart in %s", float_path, name,
                       qdq_path);
            qdqc_compare_destroy(c);
            return QDQC_ERR_INVALID_ARG;
        }
    }
    if ((st = qdqc_jit_create(c->cm, opts, &c->jit)) != QDQC_OK) {
        qdqc_compare_destroy(c);
        return st;
    }
    *out = c;
    return QDQC_OK;
}

const qdqc_module *
qdqc_compare_get_qdq_module(const qdqc_compare *c)
{
    return c ? c->lm : NULL;
}

/* copy the QDQ model's inputs into dst's by name, else by position (checked at creation) */
static void
copy_inputs(const Buffers *src, Buffers *dst)
{
    for (size_t i = 0; i < dst->nin; i++) {
        const char *name = qdqc_module_input_name(dst->m, i);
        size_t k = src->nin;
        for (size_t j = 0; j < src->nin; j++)
            if (!strcmp(qdqc_module_input_name(src->m, j), name))
                k = j;
        if (k == src->nin)
            k = i;
        memcpy(dst->in[i], src->in[k],
               dst->in_n[i] * qdqc_elem_type_size(qdqc_module_input_elem_type(dst->m, i)));
    }
}

static bool
gather(CmpRow *r, const Buffers *fb, const Buffers *lb, const Buffers *cb)
{
    const void *ld, *xd, *fd = NULL, *cd = NULL;
    size_t ln, xn, fn = 0, cn = 0;
    const char *let, *xet, *fet = NULL, *cet = NULL;
    if (!find_tensor(lb, r->q.output, &ld, &ln, &let) ||
        !find_tensor(lb, r->q.input, &xd, &xn, &xet) || xn != ln)
        return true;
    if (r->fname && (!find_tensor(fb, r->fname, &fd, &fn, &fet) || fn != ln))
        fd = NULL;
    if (r->compiled && (!find_tensor(cb, r->q.output, &cd, &cn, &cet) || cn != ln))
        cd = NULL;
    double s = r->q.scale, zp = r->q.zero_point;
    for (size_t i = 0; i < ln; i++) {
        double q = 0, x = 0, v;
        get_f64(let, ld, i, &q);
        get_f64(xet, xd, i, &x);
        if (!fvec_add(&r->dl, (float)((q - zp) * s)))
            return false;
        r->xmin = fmin(r->xmin, x);
        r->xmax = fmax(r->xmax, x);
        double t = nearbyint(x / s) + zp;
        r->clip_lo += t < r->q.qmin;
        r->clip_hi += t > r->q.qmax;
        r->count++;
        if (fd && get_f64(fet, fd, i, &v) && !fvec_add(&r->f, (float)v))
            return false;
        if (cd && get_f64(cet, cd, i, &v) && !fvec_add(&r->dc, (float)((v - zp) * s)))
            return false;
    }
    return true;
}

qdqc_status
qdqc_compare_run(qdqc_compare *c, const void *const *inputs)
{
    if (!c || (c->lb.nin && !inputs))
        return QDQC_ERR_INVALID_ARG;
    for (size_t i = 0; i < c->lb.nin; i++) {
        if (!inputs[i])
            return QDQC_ERR_INVALID_ARG;
        memcpy(c->lb.in[i], inputs[i],
               c->lb.in_n[i] * qdqc_elem_type_size(qdqc_module_input_elem_type(c->lm, i)));
    }
    copy_inputs(&c->lb, &c->fb);
    copy_inputs(&c->lb, &c->cb);
    qdqc_status st;
    if ((st = qdqc_module_run_reference(c->fm, (const void *const *)c->fb.in, c->fb.out)) !=
            QDQC_OK ||
        (st = qdqc_module_run_reference(c->lm, (const void *const *)c->lb.in, c->lb.out)) !=
            QDQC_OK ||
        (st = qdqc_jit_run(c->jit, (const void *const *)c->cb.in, c->cb.out)) != QDQC_OK)
        return st;
    for (size_t i = 0; i < c->nrows; i++)
        if (!gather(&c->rows[i], &c->fb, &c->lb, &c->cb)) {
            diag_error(c->ctx, NULL, "out of memory");
            return QDQC_ERR_NOMEM;
        }
    return QDQC_OK;
}

size_t
qdqc_compare_row_count(const qdqc_compare *c)
{
    return c ? c->nrows : 0;
}

qdqc_status
qdqc_compare_row_get(const qdqc_compare *c, size_t i, qdqc_compare_row *out)
{
    if (!c || !out || i >= c->nrows)
        return QDQC_ERR_INVALID_ARG;
    const CmpRow *r = &c->rows[i];
    memset(out, 0, sizeof *out);
    out->q = r->q;
    out->float_tensor = r->fname;
    out->compiled = r->compiled;
    out->float_in_compiled = r->is_float;
    if (r->f.n && r->f.n == r->dl.n) {
        qdqc_error_stats_compute(r->f.v, r->dl.v, r->dl.n, r->q.scale, &out->float_to_qdq);
        out->has_float_to_qdq = 1;
    }
    if (r->dc.n && r->dc.n == r->dl.n) {
        qdqc_error_stats_compute(r->dl.v, r->dc.v, r->dl.n, r->q.scale, &out->qdq_to_compiled);
        out->has_qdq_to_compiled = 1;
    }
    out->observed_min = r->xmin;
    out->observed_max = r->xmax;
    out->count = r->count;
    out->clipped_below = r->clip_lo;
    out->clipped_above = r->clip_hi;
    return QDQC_OK;
}
