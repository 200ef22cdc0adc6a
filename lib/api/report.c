/* report.c: what the pipeline made of each node, for people (qdqc_module_report) and for
 * Graphviz (qdqc_module_print_dot). Integer ops are described by kernel, stride and types
 * ("qconv 3x3 s1 int8xint8->int8, relu folded"); float ops give the reason they stayed float
 * (pass_float_reason, shared with the float-islands pass). Totals count int8 multiply-adds of
 * qconv/qconv_transpose/qmatmul and float FLOPs (2 per multiply-add, 1 per element otherwise).
 */
#include "api/report.h"
#include "ir/ir.h"
#include "transforms/pass.h"

#include <stdio.h>
#include <string.h>

static const char *
tname(ElemType e)
{
    switch (e) {
    case ET_I8: return "int8";
    case ET_U8: return "uint8";
    case ET_I16: return "int16";
    case ET_U16: return "uint16";
    case ET_I32: return "int32";
    case ET_F32: return "f32";
    default: return elem_name(e);
    }
}

static const Type *
vtype(Graph *g, ValueId v)
{
    return &ir_value(g, v)->type;
}

static uint64_t
numel(const Type *t)
{
    return (uint64_t)type_numel_unchecked(t);
}

/* multiply-adds of a linear op (integer or float) */
static uint64_t
macs(Graph *g, Node *n)
{
    const Type *x = vtype(g, n->in[0]), *w = vtype(g, n->in[1]), *y = vtype(g, n->out[0]);
    uint64_t k = 1;
    switch (n->op) {
    case OP_CONV: case OP_QCONV: case OP_WCONV:
        for (int i = 1; i < w->rank; i++)
            k *= (uint64_t)w->dims[i];
        return numel(y) * k;
    case OP_CONV_TRANSPOSE: case OP_QCONV_TRANSPOSE:
        for (int i = 1; i < w->rank; i++)
            k *= (uint64_t)w->dims[i];
        return numel(x) * k;
    case OP_MATMUL: case OP_QMATMUL: case OP_WMATMUL: case OP_MATMUL_INTEGER:
        return numel(y) * (uint64_t)x->dims[x->rank - 1];
    case OP_GEMM:
        return numel(y) * (uint64_t)(ir_attr_int(g, n, "transA", 0) ? x->dims[0] : x->dims[1]);
    default:
        return 0;
    }
}

uint64_t
report_node_macs(Graph *g, Node *n)
{
    switch (n->op) {
    case OP_CONV: case OP_QCONV: case OP_CONV_TRANSPOSE: case OP_QCONV_TRANSPOSE:
    case OP_MATMUL: case OP_QMATMUL: case OP_GEMM: case OP_MATMUL_INTEGER: case OP_WMATMUL:
    case OP_WCONV:
        return n->nin >= 2 ? macs(g, n) : 0;
    default:
        return 0;
    }
}

static void
describe_clamp(Graph *g, Node *n, StrBuf *b)
{
    int64_t c[2];
    const QParams *q = vtype(g, n->out[0])->q;
    if (ir_attr_ints(g, n, "clamp", c, 2) != 2 || !q)
        return;
    if (c[0] == q->zp[0] && c[1] == q->qmax)
        sb_printf(b, ", relu folded");
    else
        sb_printf(b, ", clip [%lld, %lld] folded", (long long)c[0], (long long)c[1]);
}

static void
describe_int(Graph *g, Node *n, StrBuf *b)
{
    const char *name = op_info(n->op)->name;
    const Type *y = vtype(g, n->out[0]);
    const char *yt = y->q ? tname(y->elem) : y->elem == ET_F32 ? "f32 (dequantizing epilogue)"
                                                                : tname(y->elem);
    if (n->op == OP_QCONV || n->op == OP_QCONV_TRANSPOSE) {
        const Type *w = vtype(g, n->in[1]);
        int64_t s[IR_MAX_RANK], d[IR_MAX_RANK];
        int ns = w->rank - 2;
        int ks = ir_attr_ints(g, n, "strides", s, IR_MAX_RANK);
        int kd = ir_attr_ints(g, n, "dilations", d, IR_MAX_RANK);
        sb_printf(b, "%s ", name);
        for (int i = 0; i < ns; i++)
            sb_printf(b, i ? "x%lld" : "%lld", (long long)w->dims[2 + i]);
        sb_printf(b, " s%lld", (long long)(ks > 0 ? s[0] : 1));
        if (kd > 0 && d[0] != 1)
            sb_printf(b, " d%lld", (long long)d[0]);
        int64_t grp = ir_attr_int(g, n, "group", 1);
        if (grp > 1)
            sb_printf(b, grp == vtype(g, n->in[0])->dims[1] ? " depthwise" : " g%lld",
                      (long long)grp);
        sb_printf(b, " %sx%s->%s", tname(vtype(g, n->in[0])->elem), tname(w->elem), yt);
    } else if (n->op == OP_QMATMUL) {
        const Type *a = vtype(g, n->in[0]), *w = vtype(g, n->in[1]);
        sb_printf(b, "qmatmul %lldx%lldx%lld %sx%s->%s",
                  (long long)(a->rank > 1 ? a->dims[a->rank - 2] : 1),
                  (long long)a->dims[a->rank - 1], (long long)w->dims[w->rank - 1],
                  tname(a->elem), tname(w->elem), yt);
    } else if (n->op == OP_MATMUL_INTEGER) {
        /* ONNX MatMulInteger, with dynamic quantization's f32 epilogue when it has scales */
        const Type *a = vtype(g, n->in[0]), *w = vtype(g, n->in[1]);
        bool scaled = n->nin > 4 && n->in[4].id;
        sb_printf(b, "matmul_integer %lldx%lldx%lld %sx%s->%s, %s",
                  (long long)(a->rank > 1 ? a->dims[a->rank - 2] : 1),
                  (long long)a->dims[a->rank - 1], (long long)(w->rank > 1 ? w->dims[w->rank - 1] : 1),
                  tname(a->elem), tname(w->elem), scaled ? "f32" : tname(y->elem),
                  scaled ? "run-time scales (dynamic quantization)" : "exact int32");
        if (n->nin > 6 && n->in[6].id)
            sb_printf(b, ", f32 bias");
        return;
    } else if (n->op == OP_LUT) {
        sb_printf(b, "lut (256-entry table) %s->%s", tname(vtype(g, n->in[0])->elem), yt);
    } else if (n->nin == 2) {
        sb_printf(b, "%s %s,%s->%s", name, tname(vtype(g, n->in[0])->elem),
                  tname(vtype(g, n->in[1])->elem), yt);
    } else {
        sb_printf(b, "%s %s->%s", name, tname(vtype(g, n->in[0])->elem), yt);
    }
    if (n->nin > 2 && n->in[2].id)
        sb_printf(b, ", int32 bias");
    describe_clamp(g, n, b);
}

typedef enum Kind { K_SKIP, K_INT, K_MOVE_INT, K_QDQ, K_FLOAT, K_MOVE_FLOAT } Kind;

/* What node n is, with its description in b. */
static Kind
classify(Graph *g, Node *n, StrBuf *b)
{
    unsigned fl = op_info(n->op)->flags;
    if (n->op == OP_CONST || n->op == OP_SHAPE || n->op == OP_CONSTANT_OF_SHAPE)
        return K_SKIP;
    if (fl & OPF_INT) {
        describe_int(g, n, b);
        return K_INT;
    }
    if (fl & OPF_QDQ) {
        const Type *in = vtype(g, n->in[0]), *out = vtype(g, n->out[0]);
        sb_printf(b, "%s %s->%s (boundary)", op_info(n->op)->name, tname(in->elem),
                  tname(out->elem));
        return K_QDQ;
    }
    if (n->op == OP_CAST && vtype(g, n->in[0])->elem == vtype(g, n->out[0])->elem &&
        !elem_is_float(vtype(g, n->out[0])->elem)) {
        /* the passes' reinterpretation: the same integers, read by a dequantize with other
         * parameters (docs/passes.md, "Each dequantize's own parameters") */
        sb_printf(b, "cast on %s (the same integers for a dequantize with its own parameters)",
                  tname(vtype(g, n->in[0])->elem));
        return K_MOVE_INT;
    }
    if (fl & OPF_LAYOUT) {
        const Type *t = vtype(g, n->in[0]);
        sb_printf(b, "%s on %s (moves values)", op_info(n->op)->name, tname(t->elem));
        return elem_is_float(t->elem) ? K_MOVE_FLOAT : K_MOVE_INT;
    }
    char buf[160];
    const char *why = pass_float_reason(g, n, buf, sizeof buf);
    sb_printf(b, "float %s: %s", op_info(n->op)->name, why ? why : "float op");
    return K_FLOAT;
}

static void
node_label(Graph *g, Node *n, StrBuf *b)
{
    if (n->loc.node)
        sb_printf(b, "%s (%s)", n->loc.node, n->loc.optype ? n->loc.optype : "?");
    else
        sb_printf(b, "%%%s", ir_value_name(g, n->out[0]));
}

static char *
report_text(const qdqc_module *cm)
{
    if (!cm)
        return NULL;
    Graph *g = (Graph *)&cm->g;
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "qdqc report for @%s\n", ir_str(g, g->name));
    uint64_t imacs = 0, imacs16 = 0, fflops = 0; /* 8-bit / 16-bit activations */
    unsigned nint = 0, nfloat = 0, nmove = 0, nqdq = 0;
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        StrBuf d;
        sb_init(&d);
        Kind k = classify(g, n, &d);
        if (k != K_SKIP) {
            sb_printf(&b, "  ");
            node_label(g, n, &b);
            sb_printf(&b, ": %s\n", d.data ? d.data : "");
        }
        sb_free(&d);
        switch (k) {
        case K_INT: {
            nint++;
            ElemType xe = n->nin ? vtype(g, n->in[0])->elem : ET_I8;
            *(xe == ET_I16 || xe == ET_U16 ? &imacs16 : &imacs) += macs(g, n);
            break;
        }
        case K_FLOAT: {
            nfloat++;
            uint64_t m = macs(g, n);
            fflops += m ? 2 * m : numel(vtype(g, n->out[0]));
            break;
        }
        case K_MOVE_INT: case K_MOVE_FLOAT: nmove++; break;
        case K_QDQ: nqdq++; break;
        default: break;
        }
    }
    sb_printf(&b, "totals: %u integer ops, %u float ops, %u data-movement ops, %u quantize/"
                  "dequantize\n", nint, nfloat, nmove, nqdq);
    sb_printf(&b, "        %llu int8 MACs, ", (unsigned long long)imacs);
    if (imacs16)
        sb_printf(&b, "%llu int16xint8 MACs, ", (unsigned long long)imacs16);
    sb_printf(&b, "%llu float FLOPs\n", (unsigned long long)fflops);
    return sb_take(&b);
}

size_t
qdqc_module_op_count(const qdqc_module *cm, const char *kind)
{
    if (!cm || !kind)
        return 0;
    Kind want = !strcmp(kind, "integer") ? K_INT
                : !strcmp(kind, "float") ? K_FLOAT
                : !strcmp(kind, "qdq")   ? K_QDQ
                : !strcmp(kind, "move")  ? K_MOVE_INT
                                         : K_SKIP;
    Graph *g = (Graph *)&cm->g;
    size_t count = 0;
    if (!strcmp(kind, "weight-only")) {
        for (uint32_t i = 1; i < g->nodes.len; i++)
            count += !g->nodes.data[i].dead && (g->nodes.data[i].op == OP_WMATMUL ||
                                                g->nodes.data[i].op == OP_WCONV);
        return count;
    }
    if (want == K_SKIP)
        return 0;
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        StrBuf d;
        sb_init(&d);
        Kind k = classify(g, n, &d);
        sb_free(&d);
        count += k == want || (want == K_MOVE_INT && k == K_MOVE_FLOAT);
    }
    return count;
}

double
qdqc_module_output_scale(const qdqc_module *cm, size_t i)
{
    if (!cm || i >= cm->g.outputs.len)
        return 0;
    Graph *g = (Graph *)&cm->g;
    Value *v = ir_value(g, g->outputs.data[i]);
    if (!v->def.id)
        return 0;
    Node *n = ir_node(g, v->def);
    if (n->dead || n->op != OP_DEQUANTIZE || !elem_is_float(v->type.elem))
        return 0;
    const QParams *q = n->q ? n->q : vtype(g, n->in[0])->q;
    return q && q->n == 1 && q->scale[0] > 0 ? (double)q->scale[0] : 0;
}

static void
dot_escape(StrBuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_putc(b, '\\');
        sb_putc(b, *s);
    }
}

static char *
dot_text(const qdqc_module *cm)
{
    if (!cm)
        return NULL;
    Graph *g = (Graph *)&cm->g;
    static const char *const fill[] = {
        [K_INT] = "#a6dba0", [K_MOVE_INT] = "#c6dbef", [K_QDQ] = "#dddddd",
        [K_FLOAT] = "#f4a582", [K_MOVE_FLOAT] = "#fddbc7",
    };
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "digraph \"");
    dot_escape(&b, ir_str(g, g->name));
    sb_printf(&b, "\" {\n  rankdir=TB;\n  node [shape=box, style=\"filled,rounded\", "
                  "fontname=\"monospace\", fontsize=10];\n");
    sb_printf(&b, "  // green: integer ops; blue: integer data movement; grey: quantize/"
                  "dequantize; orange: float islands\n");
    for (uint32_t k = 0; k < g->inputs.len; k++) {
        sb_printf(&b, "  v%u [shape=ellipse, style=\"\", label=\"%%", g->inputs.data[k].id);
        dot_escape(&b, ir_value_name(g, g->inputs.data[k]));
        sb_printf(&b, "\"];\n");
    }
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        StrBuf d;
        sb_init(&d);
        Kind k = classify(g, n, &d);
        if (k != K_SKIP) {
            sb_printf(&b, "  n%u [label=\"", i);
            dot_escape(&b, d.data ? d.data : "");
            sb_printf(&b, "\\n%%");
            dot_escape(&b, ir_value_name(g, n->out[0]));
            sb_printf(&b, "\", fillcolor=\"%s\"];\n", fill[k]);
            for (uint32_t j = 0; j < n->nin; j++) {
                Node *p = ir_def(g, n->in[j]);
                if (!n->in[j].id || (p && (p->op == OP_CONST || p->dead)))
                    continue;
                StrBuf tb;
                sb_init(&tb);
                ir_print_type(&tb, g, vtype(g, n->in[j]));
                if (p)
                    sb_printf(&b, "  n%u -> n%u [label=\"", (uint32_t)(p - g->nodes.data), i);
                else
                    sb_printf(&b, "  v%u -> n%u [label=\"", n->in[j].id, i);
                dot_escape(&b, tb.data ? tb.data : "");
                sb_printf(&b, "\", fontsize=8];\n");
                sb_free(&tb);
            }
        }
        sb_free(&d);
    }
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        Node *p = ir_def(g, g->outputs.data[k]);
        sb_printf(&b, "  out%u [shape=ellipse, style=\"\", label=\"return %%", k);
        dot_escape(&b, ir_value_name(g, g->outputs.data[k]));
        sb_printf(&b, "\"];\n");
        if (p)
            sb_printf(&b, "  n%u -> out%u;\n", (uint32_t)(p - g->nodes.data), k);
        else
            sb_printf(&b, "  v%u -> out%u;\n", g->outputs.data[k].id, k);
    }
    sb_printf(&b, "}\n");
    return sb_take(&b);
}

/* The public entry points: an allocation failure returns NULL with "out of memory" in the
 * module's context (OOM_TRAP_ENTER, lib/support/support.h). */
char *
qdqc_module_report(const qdqc_module *cm)
{
    if (!cm)
        return NULL;
    OOM_TRAP_ENTER(trap, cm->ctx, NULL, NULL);
    char *s = report_text(cm);
    OOM_TRAP_LEAVE(trap);
    return s;
}

char *
qdqc_module_print_dot(const qdqc_module *cm)
{
    if (!cm)
        return NULL;
    OOM_TRAP_ENTER(trap, cm->ctx, NULL, NULL);
    char *s = dot_text(cm);
    OOM_TRAP_LEAVE(trap);
    return s;
}
