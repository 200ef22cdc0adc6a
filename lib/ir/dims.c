/* dims.c: symbolic dimensions. A dimension (and an i64 shape value computed from dimensions)
 * is either a constant or a reference to an entry of the graph's table of symbolic
 * expressions: a named symbol (an ONNX dim_param such as "batch"), the floor division of an
 * expression by a constant, or a polynomial over those atoms with integer coefficients
 * (batch*seq, seq + 1). Entries are interned, so two dimensions are equal exactly when their
 * int64 values are equal, and every shape computation that only compares, copies or permutes
 * dimensions works on symbolic ones unchanged. A reference is encoded as
 * DIM_TAG0 - index, far below any value a model writes (ir_dim_is_tag), so i64 tensors that
 * hold shapes (the result of Shape and what is computed from it) carry symbols too.
 * Polynomials are kept in one canonical form (sorted atoms per term, sorted terms, like terms
 * combined), which makes exact division by a monomial (Reshape's -1) a multiset difference. */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIM_MAX_ENTRIES 4096
#define WORK_TERMS 32

typedef struct Poly {
    int n;
    DimTerm t[WORK_TERMS];
} Poly;

static bool
entry_ref(const Graph *g, int64_t v, const DimEntry **e)
{
    if (!ir_dim_is_tag(v))
        return false;
    uint64_t id = (uint64_t)(DIM_TAG0 - v);
    if (id >= g->dimx.len)
        return false;
    *e = &g->dimx.data[id];
    return true;
}

bool
ir_dim_valid(const Graph *g, int64_t v)
{
    const DimEntry *e;
    return !ir_dim_is_tag(v) || entry_ref(g, v, &e);
}

static int64_t
tag_of(uint32_t id)
{
    return DIM_TAG0 - (int64_t)id;
}

static bool
entry_equal(const DimEntry *a, const DimEntry *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case DIMX_SYM:
        return a->name == b->name;
    case DIMX_DIV:
        return a->arg == b->arg && a->div == b->div;
    default:
        if (a->nt != b->nt)
            return false;
        for (int i = 0; i < a->nt; i++) {
            const DimTerm *x = &a->t[i], *y = &b->t[i];
            if (x->c != y->c || x->na != y->na ||
                memcmp(x->a, y->a, (size_t)x->na * sizeof x->a[0]))
                return false;
        }
        return true;
    }
}

/* The tag of an entry equal to e, added if new; false when the table is full. */
static bool
intern_entry(Graph *g, const DimEntry *e, int64_t *out)
{
    for (uint32_t i = 0; i < g->dimx.len; i++)
        if (entry_equal(&g->dimx.data[i], e)) {
            *out = tag_of(i);
            return true;
        }
    if (g->dimx.len >= DIM_MAX_ENTRIES)
        return false;
    vec_push(&g->dimx, *e);
    *out = tag_of(g->dimx.len - 1);
    return true;
}

static const int64_t *
find_binding(const Graph *g, const char *name)
{
    const qdqc_context *ctx = g->m->ctx;
    for (uint32_t i = 0; ctx && i < ctx->dim_binds.len; i++)
        if (strcmp(ctx->dim_binds.data[i].name, name) == 0)
            return &ctx->dim_binds.data[i].value;
    return NULL;
}

bool
ir_dim_sym(Graph *g, const char *name, int64_t *out)
{
    const int64_t *b = find_binding(g, name);
    if (b) {
        *out = *b;
        return true;
    }
    DimEntry e = {.kind = DIMX_SYM, .name = intern(&g->m->strs, name)};
    return intern_entry(g, &e, out);
}

bool
ir_dim_sym_name(const Graph *g, int64_t v, const char **name)
{
    const DimEntry *e;
    if (!entry_ref(g, v, &e) || e->kind != DIMX_SYM)
        return false;
    *name = ir_str(g, e->name);
    return true;
}

/* ---- polynomials ---- */
static bool
to_poly(const Graph *g, int64_t v, Poly *p)
{
    const DimEntry *e;
    p->n = 0;
    if (!ir_dim_is_tag(v)) {
        if (v)
            p->t[p->n++] = (DimTerm){.c = v};
        return true;
    }
    if (!entry_ref(g, v, &e))
        return false;
    if (e->kind != DIMX_POLY) {
        p->t[p->n++] = (DimTerm){.c = 1, .na = 1, .a = {(uint32_t)(DIM_TAG0 - v)}};
        return true;
    }
    p->n = e->nt;
    memcpy(p->t, e->t, (size_t)e->nt * sizeof e->t[0]);
    return true;
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* order of monomials: by degree, then atoms (the constant term first) */
static int
cmp_mono(const DimTerm *x, const DimTerm *y)
{
    if (x->na != y->na)
        return x->na < y->na ? -1 : 1;
    for (int i = 0; i < x->na; i++)
        if (x->a[i] != y->a[i])
            return x->a[i] < y->a[i] ? -1 : 1;
    return 0;
}

/* Canonical form (sorted, like terms combined, no zero coefficients) into a dimension value. */
static bool
from_poly(Graph *g, Poly *p, int64_t *out)
{
    for (int i = 0; i < p->n; i++)
        qsort(p->t[i].a, p->t[i].na, sizeof p->t[i].a[0], cmp_u32);
    for (int i = 1; i < p->n; i++) /* insertion sort: few terms */
        for (int j = i; j > 0 && cmp_mono(&p->t[j - 1], &p->t[j]) > 0; j--) {
            DimTerm tmp = p->t[j];
            p->t[j] = p->t[j - 1];
            p->t[j - 1] = tmp;
        }
    int m = 0;
    for (int i = 0; i < p->n; i++) {
        if (m && cmp_mono(&p->t[m - 1], &p->t[i]) == 0) {
            if (__builtin_add_overflow(p->t[m - 1].c, p->t[i].c, &p->t[m - 1].c))
                return false;
        } else {
            p->t[m++] = p->t[i];
        }
        if (p->t[m - 1].c == 0)
            m--;
    }
    p->n = m;
    if (m == 0) {
        *out = 0;
        return true;
    }
    if (m == 1 && p->t[0].na == 0) {
        *out = p->t[0].c;
        return !ir_dim_is_tag(*out);
    }
    if (m == 1 && p->t[0].na == 1 && p->t[0].c == 1) {
        *out = tag_of(p->t[0].a[0]);
        return true;
    }
    if (m > DIM_MAX_TERMS)
        return false;
    DimEntry e = {.kind = DIMX_POLY, .nt = (uint8_t)m};
    memcpy(e.t, p->t, (size_t)m * sizeof p->t[0]);
    return intern_entry(g, &e, out);
}

bool
ir_dim_add(Graph *g, int64_t a, int64_t b, int64_t *out)
{
    Poly p, q;
    if (!to_poly(g, a, &p) || !to_poly(g, b, &q) || p.n + q.n > WORK_TERMS)
        return false;
    memcpy(p.t + p.n, q.t, (size_t)q.n * sizeof q.t[0]);
    p.n += q.n;
    return from_poly(g, &p, out);
}

bool
ir_dim_mul(Graph *g, int64_t a, int64_t b, int64_t *out)
{
    Poly p, q, r = {0};
    if (!to_poly(g, a, &p) || !to_poly(g, b, &q) || p.n * q.n > WORK_TERMS)
        return false;
    for (int i = 0; i < p.n; i++)
        for (int j = 0; j < q.n; j++) {
            DimTerm *t = &r.t[r.n++];
            if (p.t[i].na + q.t[j].na > DIM_MAX_ATOMS ||
                __builtin_mul_overflow(p.t[i].c, q.t[j].c, &t->c))
                return false;
            t->na = (uint8_t)(p.t[i].na + q.t[j].na);
            memcpy(t->a, p.t[i].a, p.t[i].na * sizeof t->a[0]);
            memcpy(t->a + p.t[i].na, q.t[j].a, q.t[j].na * sizeof t->a[0]);
        }
    return from_poly(g, &r, out);
}

bool
ir_dim_sub(Graph *g, int64_t a, int64_t b, int64_t *out)
{
    int64_t nb;
    return ir_dim_mul(g, b, -1, &nb) && ir_dim_add(g, a, nb, out);
}

/* Divide one term by the monomial d (sorted atoms): false unless it divides exactly. */
static bool
term_div(DimTerm t0, const DimTerm *d, DimTerm *q)
{
    const DimTerm *t = &t0; /* by value: q may be where it came from */
    if (d->c == 0 || t->c % d->c)
        return false;
    q->c = t->c / d->c;
    q->na = 0;
    int j = 0;
    for (int i = 0; i < t->na; i++) {
        if (j < d->na && t->a[i] == d->a[j])
            j++;
        else
            q->a[q->na++] = t->a[i];
    }
    return j == d->na;
}

bool
ir_dim_div_exact(Graph *g, int64_t a, int64_t b, int64_t *out)
{
    Poly p, d;
    if (!to_poly(g, a, &p) || !to_poly(g, b, &d) || d.n != 1)
        return false;
    qsort(d.t[0].a, d.t[0].na, sizeof d.t[0].a[0], cmp_u32);
    for (int i = 0; i < p.n; i++)
        if (!term_div(p.t[i], &d.t[0], &p.t[i]))
            return false;
    return from_poly(g, &p, out);
}

bool
ir_dim_floordiv(Graph *g, int64_t a, int64_t c, int64_t *out)
{
    if (c <= 0)
        return false;
    if (!ir_dim_is_tag(a)) {
        *out = a >= 0 ? a / c : -((-a + c - 1) / c);
        return true;
    }
    if (c == 1 || ir_dim_div_exact(g, a, c, out)) {
        if (c == 1)
            *out = a;
        return true;
    }
    if (!ir_dim_valid(g, a))
        return false;
    DimEntry e = {.kind = DIMX_DIV, .arg = a, .div = c};
    return intern_entry(g, &e, out);
}

/* ---- text form ---- */
static void
fmt_atom(StrBuf *b, const Graph *g, uint32_t id)
{
    const DimEntry *e = &g->dimx.data[id];
    if (e->kind == DIMX_SYM) {
        sb_puts(b, ir_str(g, e->name));
        return;
    }
    sb_putc(b, '(');
    ir_dim_format_expr(b, g, e->arg);
    sb_printf(b, ")/%lld", (long long)e->div);
}

/* The expression of v without the leading '?': 12*batch*seq + 1, (h + 1)/2 */
void
ir_dim_format_expr(StrBuf *b, const Graph *g, int64_t v)
{
    Poly p;
    if (!to_poly(g, v, &p)) {
        sb_puts(b, "<invalid>");
        return;
    }
    if (p.n == 0)
        sb_putc(b, '0');
    for (int i = p.n - 1; i >= 0; i--) { /* highest degree first */
        const DimTerm *t = &p.t[i];
        int64_t c = t->c;
        if (i != p.n - 1) {
            sb_puts(b, c < 0 ? " - " : " + ");
            c = c < 0 ? -c : c;
        }
        bool lead = true;
        if (t->na == 0 || (c != 1 && c != -1)) {
            sb_printf(b, "%lld", (long long)c);
            lead = false;
        } else if (c == -1) {
            sb_putc(b, '-');
        }
        for (int k = 0; k < t->na; k++) {
            if (!lead)
                sb_putc(b, '*');
            lead = false;
            fmt_atom(b, g, t->a[k]);
        }
    }
}

void
ir_dim_print(StrBuf *b, const Graph *g, int64_t v)
{
    if (!ir_dim_is_tag(v)) {
        sb_printf(b, "%lld", (long long)v);
        return;
    }
    const DimEntry *e;
    if (entry_ref(g, v, &e) && e->kind == DIMX_SYM) {
        sb_putc(b, '?');
        sb_puts(b, ir_str(g, e->name));
        return;
    }
    sb_puts(b, "?(");
    ir_dim_format_expr(b, g, v);
    sb_putc(b, ')');
}

const char *
ir_dim_str(const Graph *g, int64_t v, char *buf, size_t len)
{
    StrBuf b;
    sb_init(&b);
    ir_dim_print(&b, g, v);
    char *s = sb_take(&b);
    snprintf(buf, len, "%s", s);
    free(s);
    return buf;
}

/* ---- parsing an expression: sum := prod (('+'|'-') prod)*; prod := atom ('*' atom |
 * '/' INT)*; atom := INT | NAME | '(' sum ')' ---- */
typedef struct DimParser {
    Graph *g;
    const char *p, *end;
    int depth;
    const char *err;
} DimParser;

static void
skip_ws(DimParser *D)
{
    while (D->p < D->end && (*D->p == ' ' || *D->p == '\t'))
        D->p++;
}

static bool parse_sum(DimParser *D, int64_t *out);

static bool
parse_atom(DimParser *D, int64_t *out)
{
    skip_ws(D);
    if (D->p >= D->end)
        return D->err = "expected a number, a name or '('", false;
    char c = *D->p;
    if (c == '(') {
        if (++D->depth > 16)
            return D->err = "expression nested too deeply", false;
        D->p++;
        if (!parse_sum(D, out))
            return false;
        skip_ws(D);
        if (D->p >= D->end || *D->p != ')')
            return D->err = "expected ')'", false;
        D->p++;
        D->depth--;
        return true;
    }
    if (c >= '0' && c <= '9') {
        int64_t v = 0;
        while (D->p < D->end && *D->p >= '0' && *D->p <= '9') {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *D->p - '0', &v) ||
                v > ((int64_t)1 << 40))
                return D->err = "number too large", false;
            D->p++;
        }
        *out = v;
        return true;
    }
    if (!ir_dim_name_char(c, true))
        return D->err = "expected a number, a name or '('", false;
    const char *s = D->p;
    while (D->p < D->end && ir_dim_name_char(*D->p, false))
        D->p++;
    char name[128];
    if ((size_t)(D->p - s) >= sizeof name)
        return D->err = "symbol name too long", false;
    memcpy(name, s, (size_t)(D->p - s));
    name[D->p - s] = 0;
    if (!ir_dim_sym(D->g, name, out))
        return D->err = "too many symbolic expressions", false;
    return true;
}

static bool
parse_prod(DimParser *D, int64_t *out)
{
    if (!parse_atom(D, out))
        return false;
    for (;;) {
        skip_ws(D);
        if (D->p >= D->end || (*D->p != '*' && *D->p != '/'))
            return true;
        char op = *D->p++;
        int64_t r;
        if (!parse_atom(D, &r))
            return false;
        bool ok = op == '*' ? ir_dim_mul(D->g, *out, r, out)
                            : !ir_dim_is_tag(r) && r > 0 && ir_dim_floordiv(D->g, *out, r, out);
        if (!ok)
            return D->err = op == '*' ? "product too large or too complex"
                                      : "division must be by a positive constant",
                   false;
    }
}

static bool
parse_sum(DimParser *D, int64_t *out)
{
    if (!parse_prod(D, out))
        return false;
    for (;;) {
        skip_ws(D);
        if (D->p >= D->end || (*D->p != '+' && *D->p != '-'))
            return true;
        char op = *D->p++;
        int64_t r;
        if (!parse_prod(D, &r))
            return false;
        if (!(op == '+' ? ir_dim_add(D->g, *out, r, out) : ir_dim_sub(D->g, *out, r, out)))
            return D->err = "sum too large or too complex", false;
    }
}

bool
ir_dim_parse(Graph *g, const char *s, size_t len, int64_t *out, const char **err)
{
    DimParser D = {.g = g, .p = s, .end = s + len};
    if (!parse_sum(&D, out)) {
        *err = D.err;
        return false;
    }
    skip_ws(&D);
    if (D.p != D.end) {
        *err = "unexpected character in the expression";
        return false;
    }
    return true;
}

bool
ir_dim_name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && ((c >= '0' && c <= '9') || c == '.'));
}

/* ---- types ---- */
bool
ir_type_is_static(const Type *t)
{
    for (int i = 0; i < t->rank; i++)
        if (ir_dim_is_tag(t->dims[i]))
            return false;
    return true;
}

bool
ir_type_numel_dim(Graph *g, const Type *t, int64_t *out)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        if (!ir_dim_mul(g, n, t->dims[i], &n))
            return false;
    *out = n;
    return true;
}

int
ir_type_first_sym(const Type *t)
{
    return ir_type_first_sym_from(t, 0);
}

int
ir_type_first_sym_from(const Type *t, int from)
{
    for (int i = from; i < t->rank; i++)
        if (ir_dim_is_tag(t->dims[i]))
            return i;
    return -1;
}

bool
ir_tensor_has_sym(const Tensor *t)
{
    if (t->type.elem != ET_I64)
        return false;
    size_t n = t->nbytes / 8;
    for (size_t i = 0; i < n; i++)
        if (ir_dim_is_tag(tensor_get_i(t, i)))
            return true;
    return false;
}

bool
ir_require_static(Graph *g, const char *what)
{
    if (!g->dimx.len)
        return true;
    for (uint32_t i = 1; i < g->values.len; i++) {
        const Value *v = &g->values.data[i];
        int d = ir_type_first_sym(&v->type);
        if (d < 0)
            continue;
        char ds[96];
        const char *name = NULL;
        Loc l = {.file = g->m->filename};
        if (!v->is_input && v->def.id)
            l = ir_node(g, v->def)->loc;
        ir_dim_str(g, v->type.dims[d], ds, sizeof ds);
        bool plain = ir_dim_sym_name(g, v->type.dims[d], &name);
        diag_error(g->m->ctx, &l, "%s '%s' has the symbolic dimension %s (axis %d): %s need "
                   "static shapes; bind %s with --dim %s=<size> (or give --input-shape)",
                   v->is_input ? "graph input" : "value", ir_str(g, v->name), ds, d, what,
                   plain ? "it" : "its symbols", plain ? name : "NAME");
        return false;
    }
    /* a shape value holding a symbol (an i64 constant, an ints attribute) */
    for (uint32_t i = 1; i < g->nodes.len; i++) {
        Node *n = &g->nodes.data[i];
        for (uint32_t k = 0; !n->dead && k < n->nattr; k++) {
            const Attr *a = &n->attrs[k];
            int64_t sym = 0;
            for (uint32_t j = 0; a->kind == ATTR_INTS && j < a->ints.n && !sym; j++)
                if (ir_dim_is_tag(a->ints.v[j]) && ir_dim_valid(g, a->ints.v[j]))
                    sym = a->ints.v[j];
            if (a->kind == ATTR_TENSOR && a->t->type.elem == ET_I64)
                for (size_t j = 0; j < a->t->nbytes / 8 && !sym; j++) {
                    int64_t v = tensor_get_i(a->t, j);
                    if (ir_dim_is_tag(v) && ir_dim_valid(g, v))
                        sym = v;
                }
            if (!sym)
                continue;
            char ds[96];
            node_error(g, n, "'%s' holds the symbolic dimension %s: %s need static shapes; "
                       "bind its symbols with --dim NAME=<size>", ir_str(g, a->name),
                       ir_dim_str(g, sym, ds, sizeof ds), what);
            return false;
        }
    }
    return true;
}
