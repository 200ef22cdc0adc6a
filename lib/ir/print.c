/* print.c: the textual form of the IR (grammar in docs/ir.md).
 * The printer and the parser (parse.c) are exact inverses: parse(print(g)) prints the same
 * text. Floats print as the shortest decimal that reads back to the same f32; tensors with
 * more than 16 elements (or f16 data) print as little-endian hex bytes. */
#include "ir.h"

#include <stdio.h>
#include <string.h>

static bool
is_bare_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '$' || c == '-' || c == '/';
}

static void
print_quoted(StrBuf *b, const char *s)
{
    sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            sb_printf(b, "\\x%02x", *p);
        else
            sb_putc(b, (char)*p);
    }
    sb_putc(b, '"');
}

static void
print_name(StrBuf *b, char sigil, const char *s)
{
    sb_putc(b, sigil);
    bool bare = *s != 0;
    for (const char *p = s; *p; p++)
        if (!is_bare_name_char(*p))
            bare = false;
    if (bare)
        sb_puts(b, s);
    else
        print_quoted(b, s);
}

static void
print_float(StrBuf *b, float f)
{
    char buf[48];
    fmt_float(buf, f);
    sb_puts(b, buf);
}

static void
print_qparams_body(StrBuf *b, const QParams *q)
{
    if (q->axis >= 0) {
        sb_printf(b, "axis=%d, scale=[", q->axis);
        for (uint32_t i = 0; i < q->n; i++) {
            if (i)
                sb_puts(b, ", ");
            print_float(b, q->scale[i]);
        }
        sb_puts(b, "], zp=[");
        for (uint32_t i = 0; i < q->n; i++)
            sb_printf(b, i ? ", %d" : "%d", q->zp[i]);
        sb_puts(b, "]");
    } else {
        sb_puts(b, "scale=");
        print_float(b, q->scale[0]);
        sb_printf(b, ", zp=%d", q->zp[0]);
    }
    if (!qparams_is_full_range(q))
        sb_printf(b, ", range=[%d, %d]", q->qmin, q->qmax);
}

/* An integer that may be a symbolic dimension (a tag of g's table): 7, ?batch, ?(2*seq). */
static void
print_int(StrBuf *b, const Graph *g, int64_t v)
{
    if (g && ir_dim_is_tag(v) && ir_dim_valid(g, v))
        ir_dim_print(b, g, v);
    else
        sb_printf(b, "%lld", (long long)v);
}

void
ir_print_type(StrBuf *b, const Graph *g, const Type *t)
{
    sb_printf(b, "%s[", elem_name(t->elem));
    for (int i = 0; i < t->rank; i++) {
        if (i)
            sb_putc(b, ',');
        print_int(b, g, t->dims[i]);
    }
    sb_putc(b, ']');
    if (t->q) {
        sb_putc(b, '{');
        print_qparams_body(b, t->q);
        sb_putc(b, '}');
    }
}

static void
print_tensor(StrBuf *b, const Graph *g, const Tensor *t)
{
    sb_puts(b, "dense<");
    ir_print_type(b, g, &t->type);
    sb_puts(b, ", ");
    size_t n = type_numel_unchecked(&t->type);
    bool sym = ir_tensor_has_sym(t);
    if ((n <= 16 || sym) && t->type.elem != ET_F16) {
        sb_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_puts(b, ", ");
            if (t->type.elem == ET_F32) {
                print_float(b, (float)tensor_get_f(t, i));
            } else if (t->type.elem == ET_F64) {
                char buf[48];
                fmt_double(buf, tensor_get_f(t, i));
                sb_puts(b, buf);
            } else if (t->type.elem == ET_U32) {
                sb_printf(b, "%llu", (unsigned long long)(uint32_t)tensor_get_i(t, i));
            } else {
                print_int(b, g, tensor_get_i(t, i));
            }
        }
        sb_putc(b, ']');
    } else {
        static const char hex[] = "0123456789ABCDEF";
        sb_puts(b, "0x");
        const unsigned char *p = t->data;
        for (size_t i = 0; i < t->nbytes; i++) {
            char two[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
            sb_putn(b, two, 2);
        }
    }
    sb_putc(b, '>');
}

static void
print_attr_value(StrBuf *b, Graph *g, const Attr *a)
{
    switch (a->kind) {
    case ATTR_INT:
        sb_printf(b, "%lld", (long long)a->i);
        break;
    case ATTR_FLOAT:
        print_float(b, a->f);
        break;
    case ATTR_INTS:
        sb_putc(b, '[');
        for (uint32_t i = 0; i < a->ints.n; i++) {
            if (i)
                sb_puts(b, ", ");
            print_int(b, g, a->ints.v[i]);
        }
        sb_putc(b, ']');
        break;
    case ATTR_FLOATS:
        /* floats always print with '.', 'e', "nan" or "inf", so the list reads back as floats */
        sb_putc(b, '[');
        for (uint32_t i = 0; i < a->floats.n; i++) {
            if (i)
                sb_puts(b, ", ");
            print_float(b, a->floats.v[i]);
        }
        sb_putc(b, ']');
        break;
    case ATTR_STRING:
        print_quoted(b, ir_str(g, a->s));
        break;
    case ATTR_TENSOR:
        print_tensor(b, g, a->t);
        break;
    }
}

static void
print_node(StrBuf *b, Graph *g, Node *n)
{
    sb_puts(b, "  ");
    for (uint32_t k = 0; k < n->nout; k++) {
        if (k)
            sb_puts(b, ", ");
        print_name(b, '%', ir_value_name(g, n->out[k]));
    }
    sb_printf(b, " = %s", op_info(n->op)->name);
    bool first = true;
    if (n->op == OP_CONST) {
        const Attr *a = ir_attr(g, n, "value");
        sb_putc(b, ' ');
        print_tensor(b, g, a->t);
    } else {
        for (uint32_t k = 0; k < n->nin; k++) {
            sb_puts(b, first ? " " : ", ");
            first = false;
            if (n->in[k].id)
                print_name(b, '%', ir_value_name(g, n->in[k]));
            else
                sb_putc(b, '_');
        }
        if (n->q) {
            sb_puts(b, first ? " " : ", ");
            first = false;
            print_qparams_body(b, n->q);
        }
        for (uint32_t i = 0; i < n->nattr; i++) {
            sb_puts(b, first ? " " : ", ");
            first = false;
            sb_printf(b, "%s=", ir_str(g, n->attrs[i].name));
            print_attr_value(b, g, &n->attrs[i]);
        }
        sb_puts(b, " : ");
        for (uint32_t k = 0; k < n->nout; k++) {
            if (k)
                sb_puts(b, ", ");
            ir_print_type(b, g, &ir_value(g, n->out[k])->type);
        }
    }
    if (n->loc.node || n->loc.optype) {
        sb_puts(b, " loc(");
        print_quoted(b, n->loc.node ? n->loc.node : "");
        if (n->loc.optype) {
            sb_puts(b, ", ");
            print_quoted(b, n->loc.optype);
        }
        sb_putc(b, ')');
    }
    sb_putc(b, '\n');
}

char *
ir_print(Graph *g)
{
    StrBuf b;
    sb_init(&b);
    print_name(&b, '@', ir_str(g, g->name));
    /* "graph" keyword before the name */
    char *name = sb_take(&b);
    sb_printf(&b, "graph %s(", name);
    free(name);
    for (uint32_t k = 0; k < g->inputs.len; k++) {
        if (k)
            sb_puts(&b, ", ");
        ValueId v = g->inputs.data[k];
        print_name(&b, '%', ir_value_name(g, v));
        sb_puts(&b, ": ");
        ir_print_type(&b, g, &ir_value(g, v)->type);
    }
    sb_puts(&b, ") -> ");
    if (g->outputs.len != 1)
        sb_putc(&b, '(');
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        if (k)
            sb_puts(&b, ", ");
        ir_print_type(&b, g, &ir_value(g, g->outputs.data[k])->type);
    }
    if (g->outputs.len != 1)
        sb_putc(&b, ')');
    sb_puts(&b, " {\n");
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        if (!n->dead)
            print_node(&b, g, n);
    }
    sb_puts(&b, "  return");
    for (uint32_t k = 0; k < g->outputs.len; k++) {
        sb_puts(&b, k ? ", " : " ");
        print_name(&b, '%', ir_value_name(g, g->outputs.data[k]));
    }
    sb_puts(&b, "\n}\n");
    return sb_take(&b);
}
