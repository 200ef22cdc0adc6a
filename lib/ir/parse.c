/* parse.c: parser for the textual IR (grammar in docs/ir.md).
 * Recursive descent over a hand-written lexer. Every error is reported as
 * "file:line:col: error: ..." at the offending token and stops the parse; the parser must
 * never crash, loop or allocate without bound on any input (it is fuzzed). After parsing,
 * result types are checked by the verifier, not here. */
#include "lex.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values ---- */
static ValueId
lookup_def(Parser *P, uint32_t name)
{
    return name < P->ndefs ? (ValueId){P->defs[name]} : VNONE;
}

static void
record_def(Parser *P, uint32_t name, ValueId v)
{
    if (name >= P->ndefs) {
        uint32_t n = P->ndefs ? P->ndefs : 64;
        while (n <= name)
            n *= 2;
        P->defs = xrealloc(P->defs, n * sizeof(uint32_t));
        memset(P->defs + P->ndefs, 0, (n - P->ndefs) * sizeof(uint32_t));
        P->ndefs = n;
    }
    P->defs[name] = v.id;
}

/* ---- numbers and lists ---- */
typedef struct NumList {
    VEC(double) v;
    VEC(int64_t) iv; /* the exact values when !any_float (i64 literals beyond 2^53) */
    bool any_float, any_sym;
} NumList;

/* The current T_SYM token's dimension value (a tag, or a constant under a --dim binding). */
static bool
sym_value(Parser *P, int64_t *out)
{
    const char *err = NULL;
    if (!ir_dim_parse(&P->m->g, P->tstart + 1, P->tlen - 1, out, &err)) {
        ERR("symbolic dimension '%.*s': %s", (int)P->tlen, P->tstart, err);
        return false;
    }
    return true;
}

static void
numlist_free(NumList *l)
{
    vec_free(&l->v);
    vec_free(&l->iv);
}

/* After a list element: step over its last token; then ']' ends the list (*end) or ',' goes on
 * to the next element. False (an error reported) on anything else. */
static bool
list_next(Parser *P, bool *end)
{
    lex_next(P);
    *end = lex_accept(P, T_RBRACK);
    return *end || lex_expect(P, T_COMMA, "',' or ']'");
}

/* One element of a number list: an int, a float or a symbolic dimension (not both of the last
 * two in one list); the current token stays for list_next. */
static bool
num_list_elem(Parser *P, NumList *out, size_t max)
{
    if (P->tok == T_SYM) {
        int64_t v;
        if (out->any_float || out->iv.len >= max || !sym_value(P, &v)) {
            if (!P->failed)
                ERR(out->any_float ? "a symbolic dimension in a float list"
                                   : "list has too many elements");
            return false;
        }
        out->any_sym = true;
        vec_push(&out->v, ir_dim_is_tag(v) ? 0.0 : (double)v);
        vec_push(&out->iv, v);
        return true;
    }
    if (P->tok != T_INT && P->tok != T_FLOAT) {
        ERR("expected a number, got %s", lex_tok_desc(P->tok));
        return false;
    }
    if (out->v.len >= max) {
        ERR("list has more than %zu elements", max);
        return false;
    }
    if (P->tok == T_FLOAT && out->any_sym) {
        ERR("a float in a list of symbolic dimensions");
        return false;
    }
    if (P->tok == T_FLOAT)
        out->any_float = true;
    double d = P->tok == T_INT ? (double)P->ival : P->fval;
    vec_push(&out->v, d);
    vec_push(&out->iv, P->tok == T_INT ? P->ival : 0);
    return true;
}

/* '[' [num (',' num)*] ']' ; at most `max` elements */
static bool
parse_num_list(Parser *P, NumList *out, size_t max)
{
    out->v.len = 0;
    out->iv.len = 0;
    out->any_float = out->any_sym = false;
    if (!lex_expect(P, T_LBRACK, NULL))
        return false;
    if (lex_accept(P, T_RBRACK))
        return true;
    for (bool end = false; !end;)
        if (!num_list_elem(P, out, max) || !list_next(P, &end))
            return false;
    return true;
}

static bool
parse_int(Parser *P, int64_t *out, const char *what)
{
    if (P->tok != T_INT) {
        ERR("expected %s, got %s", what, lex_tok_desc(P->tok));
        return false;
    }
    *out = P->ival;
    lex_next(P);
    return true;
}

/* ---- types ---- */
typedef struct QSpec {
    bool has_scale, has_zp, has_axis, has_range;
    bool scale_list, zp_list;
    NumList scale, zp;
    int64_t axis;
    int64_t range[2];
    uint32_t line, col; /* where the spec starts */
} QSpec;

static void
qspec_free(QSpec *q)
{
    numlist_free(&q->scale);
    numlist_free(&q->zp);
}

/* Parse one key=value of a quantization spec if the current identifier is one of
 * scale, zp, axis, range. Returns 1 if consumed, 0 if not a q key, -1 on error. */
static int
parse_qkey(Parser *P, QSpec *q)
{
    static const char *keys[] = {"scale", "zp", "axis", "range"};
    int which = -1;
    for (int i = 0; i < 4; i++)
        if (lex_tok_is(P, keys[i]))
            which = i;
    if (which < 0)
        return 0;
    uint32_t kl = P->tline, kc = P->tcol;
    if (!q->has_scale && !q->has_zp && !q->has_axis && !q->has_range) {
        q->line = kl;
        q->col = kc;
    }
    lex_next(P);
    if (!lex_expect(P, T_EQ, "'='"))
        return -1;
    bool *seen[] = {&q->has_scale, &q->has_zp, &q->has_axis, &q->has_range};
    if (*seen[which]) {
        lex_error(P, kl, kc, "duplicate '%s'", keys[which]);
        return -1;
    }
    *seen[which] = true;
    switch (which) {
    case 0:
    case 1: {
        NumList *l = which == 0 ? &q->scale : &q->zp;
        if (P->tok == T_LBRACK) {
            if (!parse_num_list(P, l, 1u << 20))
                return -1;
            if (which == 0)
                q->scale_list = true;
            else
                q->zp_list = true;
        } else if (P->tok == T_INT || P->tok == T_FLOAT) {
            l->v.len = 0;
            l->any_float = P->tok == T_FLOAT;
            double d = P->tok == T_INT ? (double)P->ival : P->fval;
            vec_push(&l->v, d);
            lex_next(P);
        } else {
            ERR("expected a number or a list for '%s'", keys[which]);
            return -1;
        }
        if (which == 1) {
            for (uint32_t i = 0; i < l->v.len; i++)
                if (l->v.data[i] != floor(l->v.data[i]) || fabs(l->v.data[i]) > 2147483647.0) {
                    lex_error(P, kl, kc, "zero point must be a 32-bit integer");
                    return -1;
                }
        }
        return 1;
    }
    case 2:
        if (!parse_int(P, &q->axis, "an integer axis"))
            return -1;
        return 1;
    case 3: {
        NumList l = {0};
        if (!parse_num_list(P, &l, 2)) {
            numlist_free(&l);
            return -1;
        }
        if (l.v.len != 2 || l.any_float || l.v.data[0] < -2147483648.0 ||
            l.v.data[1] > 2147483647.0) {
            numlist_free(&l);
            lex_error(P, kl, kc, "range must be [min, max] integers");
            return -1;
        }
        q->range[0] = (int64_t)l.v.data[0];
        q->range[1] = (int64_t)l.v.data[1];
        numlist_free(&l);
        return 1;
    }
    }
    return 0;
}

/* Build QParams from a spec; storage gives the integer type. Structural errors only:
 * value checks (scale > 0, zp in range) belong to the verifier. */
static QParams *
qspec_build(Parser *P, const QSpec *q, ElemType storage)
{
    if (!q->has_scale || !q->has_zp) {
        lex_error(P, q->line, q->col, "quantization needs both 'scale' and 'zp'");
        return NULL;
    }
    bool per_axis = q->has_axis;
    uint32_t n = q->scale.v.len;
    if (per_axis) {
        if (!q->scale_list || !q->zp_list) {
            lex_error(P, q->line, q->col, "per-axis quantization needs 'scale' and 'zp' lists");
            return NULL;
        }
        if (q->zp.v.len != n) {
            lex_error(P, q->line, q->col, "per-axis quantization has %u scales but %u zero points", n,
                 q->zp.v.len);
            return NULL;
        }
        if (q->axis < 0 || q->axis >= IR_MAX_RANK) {
            lex_error(P, q->line, q->col, "axis %lld out of range", (long long)q->axis);
            return NULL;
        }
    } else if (q->scale_list || q->zp_list) {
        lex_error(P, q->line, q->col, "a scale or zp list needs 'axis' (per-tensor values are scalars)");
        return NULL;
    }
    QParams *qp = ir_qparams_new(P->m, storage, per_axis ? (int32_t)q->axis : -1, n);
    for (uint32_t i = 0; i < n; i++) {
        qp->scale[i] = (float)q->scale.v.data[i];
        qp->zp[i] = (int32_t)q->zp.v.data[i];
    }
    if (q->has_range) {
        qp->qmin = (int32_t)q->range[0];
        qp->qmax = (int32_t)q->range[1];
    }
    return qp;
}

/* At a '{': does a quantization spec follow ("{scale=", "{zp=", "{axis=", "{range=")? A '{'
 * after a graph's single result type opens the body instead. Peeks without consuming. */
static bool
brace_starts_quant(Parser *P)
{
    const char *p = P->p;
    while (p < P->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    static const char *keys[] = {"scale", "zp", "axis", "range"};
    for (int i = 0; i < 4; i++) {
        size_t n = strlen(keys[i]);
        if ((size_t)(P->end - p) > n && strncmp(p, keys[i], n) == 0 && !lex_is_ident_char(p[n]))
            return true;
    }
    return false;
}

/* One dimension of a type: a constant >= 0 or a symbolic dimension, appended to t; the current
 * token stays for list_next. */
static bool
type_dim(Parser *P, Type *t)
{
    bool sym = P->tok == T_SYM;
    int64_t d;
    if (sym) {
        if (t->rank == IR_MAX_RANK) {
            ERR("more than %d dimensions", IR_MAX_RANK);
            return false;
        }
        if (!sym_value(P, &d))
            return false;
    } else if (P->tok == T_INT) {
        d = P->ival;
    } else {
        ERR("expected a dimension, got %s", lex_tok_desc(P->tok));
        return false;
    }
    if (!(sym && ir_dim_is_tag(d)) && d < 0) {
        ERR("dimension must not be negative, got %lld", (long long)d);
        return false;
    }
    if (t->rank == IR_MAX_RANK) {
        ERR("more than %d dimensions", IR_MAX_RANK);
        return false;
    }
    t->dims[t->rank++] = d;
    return true;
}

static bool
parse_type(Parser *P, Type *t)
{
    memset(t, 0, sizeof *t);
    uint32_t tl = P->tline, tc = P->tcol;
    if (P->tok != T_IDENT) {
        ERR("expected a type, got %s", lex_tok_desc(P->tok));
        return false;
    }
    ElemType e = elem_from_name(P->tstart, P->tlen);
    if (e == ET_NONE) {
        ERR("unknown element type '%.*s'", (int)P->tlen, P->tstart);
        return false;
    }
    t->elem = e;
    lex_next(P);
    if (!lex_expect(P, T_LBRACK, "'[' after the element type"))
        return false;
    if (!lex_accept(P, T_RBRACK)) {
        for (bool end = false; !end;)
            if (!type_dim(P, t) || !list_next(P, &end))
                return false;
    }
    size_t n;
    if (ir_type_is_static(t) && (!type_numel(t, &n) || n > ((size_t)1 << 40))) {
        lex_error(P, tl, tc, "type has too many elements");
        return false;
    }
    if (P->tok == T_LBRACE && brace_starts_quant(P)) {
        uint32_t bl = P->tline, bc = P->tcol;
        lex_next(P);
        QSpec q = {0};
        bool ok = true;
        for (;;) {
            int r = parse_qkey(P, &q);
            if (r < 0) {
                ok = false;
                break;
            }
            if (r == 0) {
                ERR("expected scale, zp, axis or range");
                ok = false;
                break;
            }
            if (lex_accept(P, T_RBRACE))
                break;
            if (!lex_expect(P, T_COMMA, "',' or '}'")) {
                ok = false;
                break;
            }
        }
        if (ok && !elem_is_quant_storage(e)) {
            lex_error(P, bl, bc, "quantization on non-integer type %s", elem_name(e));
            ok = false;
        }
        if (ok)
            t->q = qspec_build(P, &q, e);
        qspec_free(&q);
        if (!ok || !t->q)
            return false;
    }
    return true;
}

/* ---- tensor literals: dense<TYPE, [values] | 0xHEX> ---- */
static Tensor *
parse_tensor(Parser *P)
{
    uint32_t tl = P->tline, tc = P->tcol;
    lex_next(P); /* 'dense' */
    if (!lex_expect(P, T_LT, "'<' after dense"))
        return NULL;
    Type t;
    if (!parse_type(P, &t))
        return NULL;
    if (!lex_expect(P, T_COMMA, "',' after the tensor type"))
        return NULL;
    if (!ir_type_is_static(&t)) {
        lex_error(P, tl, tc, "a tensor literal must have a static shape");
        return NULL;
    }
    size_t n;
    type_numel(&t, &n);
    size_t esz = elem_size(t.elem);
    if (n > ((size_t)1 << 32) / (esz ? esz : 1)) {
        lex_error(P, tl, tc, "tensor literal is too large");
        return NULL;
    }
    /* the tensor is allocated only once the literal has shown it holds that much data, so
     * its size is bounded by the input's (a short file may not claim gigabytes) */
    Tensor *ts = NULL;
    if (P->tok == T_HEX) {
        size_t ndig = P->tlen - 2;
        if (ndig != 2 * n * esz) {
            ERR("hex data has %zu bytes, type %s needs %zu", ndig / 2, elem_name(t.elem),
                n * esz);
            return NULL;
        }
        if (!(ts = ir_tensor_new(P->m, &t))) {
            lex_error(P, tl, tc, "tensor literal is too large");
            return NULL;
        }
        unsigned char *d = ts->data;
        for (size_t i = 0; i < ts->nbytes; i++)
            d[i] = (unsigned char)(lex_hexval(P->tstart[2 + 2 * i]) * 16 +
                                   lex_hexval(P->tstart[3 + 2 * i]));
        lex_next(P);
    } else if (P->tok == T_LBRACK) {
        uint32_t ll = P->tline, lc = P->tcol;
        NumList l = {0};
        if (!parse_num_list(P, &l, n)) {
            numlist_free(&l);
            return NULL;
        }
        if (l.v.len != n) {
            uint32_t got = l.v.len;
            numlist_free(&l);
            lex_error(P, ll, lc, "tensor literal has %u values, type needs %zu", got, n);
            return NULL;
        }
        if (!(ts = ir_tensor_new(P->m, &t))) {
            numlist_free(&l);
            lex_error(P, tl, tc, "tensor literal is too large");
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            double d = l.v.data[i];
            if (elem_is_float(t.elem)) {
                tensor_set_f(ts, i, d);
            } else {
                /* integer literals exactly (through double, i64 values beyond 2^53 would
                 * change: regress/parse-i64-literal.test) */
                int64_t lo, hi, v = l.any_float ? 0 : l.iv.data[i];
                elem_range(t.elem, &lo, &hi);
                if (l.any_float ? d != floor(d) || d < (double)lo || d > (double)hi
                                : v < lo || v > hi) {
                    numlist_free(&l);
                    lex_error(P, ll, lc, "value %g does not fit %s", d, elem_name(t.elem));
                    return NULL;
                }
                tensor_set_i(ts, i, l.any_float ? (int64_t)d : v);
            }
        }
        numlist_free(&l);
    } else {
        ERR("expected a value list or hex data, got %s", lex_tok_desc(P->tok));
        return NULL;
    }
    if (!lex_expect(P, T_GT, "'>' closing the tensor literal"))
        return NULL;
    return ts;
}

/* ---- attributes ---- */
static bool
parse_attr_value(Parser *P, Attr *a)
{
    switch (P->tok) {
    case T_INT:
        a->kind = ATTR_INT;
        a->i = P->ival;
        lex_next(P);
        return true;
    case T_FLOAT:
        a->kind = ATTR_FLOAT;
        a->f = (float)P->fval;
        lex_next(P);
        return true;
    case T_STRING:
        a->kind = ATTR_STRING;
        a->s = intern(&P->m->strs, P->sval);
        lex_next(P);
        return true;
    case T_LBRACK: {
        NumList l = {0};
        if (!parse_num_list(P, &l, 1u << 20)) {
            numlist_free(&l);
            return false;
        }
        if (l.any_float) {
            a->kind = ATTR_FLOATS;
            a->floats.n = l.v.len;
            a->floats.v = arena_alloc(&P->m->arena, (l.v.len + 1) * sizeof(float));
            for (uint32_t i = 0; i < l.v.len; i++)
                a->floats.v[i] = (float)l.v.data[i];
        } else {
            a->kind = ATTR_INTS;
            a->ints.n = l.v.len;
            a->ints.v = arena_alloc(&P->m->arena, (l.v.len + 1) * sizeof(int64_t));
            for (uint32_t i = 0; i < l.v.len; i++) {
                if (ir_dim_is_tag(l.iv.data[i])) {
                    a->ints.v[i] = l.iv.data[i];
                    continue;
                }
                if (fabs(l.v.data[i]) > 9.0e15) {
                    numlist_free(&l);
                    ERR("integer list element out of range");
                    return false;
                }
                a->ints.v[i] = (int64_t)l.v.data[i];
            }
        }
        numlist_free(&l);
        return true;
    }
    case T_IDENT:
        if (lex_tok_is(P, "dense")) {
            Tensor *t = parse_tensor(P);
            if (!t)
                return false;
            a->kind = ATTR_TENSOR;
            a->t = t;
            return true;
        }
        /* fallthrough */
    default:
        ERR("expected an attribute value, got %s", lex_tok_desc(P->tok));
        return false;
    }
}

/* ---- statements ---- */
static bool
parse_loc(Parser *P, Loc *loc)
{
    lex_next(P); /* 'loc' */
    if (!lex_expect(P, T_LPAREN, "'(' after loc"))
        return false;
    if (P->tok != T_STRING) {
        ERR("expected a node name string in loc");
        return false;
    }
    loc->node = *P->sval ? intern_str(&P->m->strs, intern(&P->m->strs, P->sval)) : NULL;
    lex_next(P);
    if (lex_accept(P, T_COMMA)) {
        if (P->tok != T_STRING) {
            ERR("expected an op type string in loc");
            return false;
        }
        loc->optype = intern_str(&P->m->strs, intern(&P->m->strs, P->sval));
        lex_next(P);
    }
    return lex_expect(P, T_RPAREN, "')' closing loc");
}

typedef struct PendingName {
    uint32_t name;
    uint32_t line, col;
} PendingName;

/* one node's text as parsed, before it is built */
typedef struct NodeText {
    VEC(PendingName) results;
    VEC(ValueId) operands;
    VEC(Attr) attrs;
    VEC(Type) types;
    QSpec qs;
    OpKind op;
    const OpInfo *info;
    Tensor *cval;
    Loc loc;
    uint32_t sline, scol;
} NodeText;

/* '%name' (',' '%name')* '=' */
static bool
parse_results(Parser *P, NodeText *nt)
{
    for (;;) {
        if (P->tok != T_VALUE) {
            ERR("expected a value name, got %s", lex_tok_desc(P->tok));
            return false;
        }
        PendingName pn = {intern(&P->m->strs, P->sval), P->tline, P->tcol};
        if (lookup_def(P, pn.name).id) {
            ERR("value '%%%s' is defined twice", P->sval);
            return false;
        }
        for (uint32_t i = 0; i < nt->results.len; i++)
            if (nt->results.data[i].name == pn.name) {
                ERR("value '%%%s' is defined twice", P->sval);
                return false;
            }
        if (nt->results.len >= 4096) {
            ERR("too many results");
            return false;
        }
        vec_push(&nt->results, pn);
        lex_next(P);
        if (lex_accept(P, T_EQ))
            return true;
        if (!lex_expect(P, T_COMMA, "',' or '='"))
            return false;
    }
}

/* one operand ('%name' or '_'), quantization key or attribute 'name = value'.
 * Returns -1 on error, 0 at 'loc' (the end of the list), 1 after an item. */
static int
parse_operand_or_attr(Parser *P, NodeText *nt)
{
    QSpec *qs = &nt->qs;
    if (P->tok == T_VALUE) {
        if (nt->attrs.len || qs->has_scale || qs->has_zp || qs->has_axis || qs->has_range) {
            ERR("operands must come before attributes");
            return -1;
        }
        ValueId v = lookup_def(P, intern(&P->m->strs, P->sval));
        if (!v.id) {
            ERR("use of undefined value '%%%s'", P->sval);
            return -1;
        }
        if (nt->operands.len >= 4096) {
            ERR("too many operands");
            return -1;
        }
        vec_push(&nt->operands, v);
        lex_next(P);
        return 1;
    }
    if (lex_tok_is(P, "_")) {
        vec_push(&nt->operands, VNONE);
        lex_next(P);
        return 1;
    }
    if (P->tok != T_IDENT) {
        ERR("expected an operand or attribute, got %s", lex_tok_desc(P->tok));
        return -1;
    }
    if (lex_tok_is(P, "loc"))
        return 0;
    if (nt->info->flags & OPF_QDQ) {
        int r = parse_qkey(P, qs);
        if (r < 0)
            return -1;
        if (r > 0)
            return 1;
    }
    uint32_t al = P->tline, ac = P->tcol;
    Attr a = {0};
    a.name = intern_n(&P->m->strs, P->tstart, P->tlen);
    for (uint32_t i = 0; i < nt->attrs.len; i++)
        if (nt->attrs.data[i].name == a.name) {
            ERR("duplicate attribute '%.*s'", (int)P->tlen, P->tstart);
            return -1;
        }
    lex_next(P);
    if (!lex_expect(P, T_EQ, "'=' after the attribute name"))
        return -1;
    if (!parse_attr_value(P, &a))
        return -1;
    if (nt->attrs.len >= 256) {
        lex_error(P, al, ac, "too many attributes");
        return -1;
    }
    vec_push(&nt->attrs, a);
    return 1;
}

/* what follows the op name: a const's dense<...> literal, or operands and attributes,
 * ':' and the result types */
static bool
parse_node_body(Parser *P, NodeText *nt)
{
    if (nt->op == OP_CONST) {
        if (!lex_tok_is(P, "dense")) {
            ERR("const needs a dense<...> literal");
            return false;
        }
        nt->cval = parse_tensor(P);
        if (!nt->cval)
            return false;
        vec_push(&nt->types, nt->cval->type);
        return true;
    }
    bool any = P->tok == T_VALUE || P->tok == T_IDENT;
    while (any) {
        int r = parse_operand_or_attr(P, nt);
        if (r < 0)
            return false;
        if (r == 0 || !lex_accept(P, T_COMMA))
            break;
        if (P->tok != T_VALUE && P->tok != T_IDENT) {
            ERR("expected an operand or attribute, got %s", lex_tok_desc(P->tok));
            return false;
        }
    }
    if (!lex_expect(P, T_COLON, "':' and the result types"))
        return false;
    for (;;) {
        Type t;
        if (!parse_type(P, &t))
            return false;
        vec_push(&nt->types, t);
        if (!lex_accept(P, T_COMMA))
            return true;
    }
}

/* numbers of results, result types and operands against the op's registry entry */
static bool
check_arity(Parser *P, const NodeText *nt)
{
    const OpInfo *info = nt->info;
    uint32_t nops = nt->operands.len, nres = nt->results.len;
    uint32_t sline = nt->sline, scol = nt->scol;
    if (nt->types.len != nres) {
        lex_error(P, sline, scol, "%s: %u results but %u result types", info->name, nres,
             nt->types.len);
        return false;
    }
    if ((int)nops < info->min_in || (info->max_in >= 0 && (int)nops > info->max_in)) {
        if (info->max_in < 0)
            lex_error(P, sline, scol, "%s: expected at least %d operands, got %u", info->name,
                 info->min_in, nops);
        else if (info->min_in == info->max_in)
            lex_error(P, sline, scol, "%s: expected %d operands, got %u", info->name, info->min_in,
                 nops);
        else
            lex_error(P, sline, scol, "%s: expected %d to %d operands, got %u", info->name,
                 info->min_in, info->max_in, nops);
        return false;
    }
    if ((int)nres < info->min_out || (info->max_out >= 0 && (int)nres > info->max_out)) {
        lex_error(P, sline, scol, "%s: wrong number of results (%u)", info->name, nres);
        return false;
    }
    for (uint32_t k = 0; k < nops; k++)
        if (!nt->operands.data[k].id && k < (uint32_t)info->min_in) {
            lex_error(P, sline, scol, "%s: operand %u is required", info->name, k);
            return false;
        }
    return true;
}

/* a quantize/dequantize node's parameters: static (scale/zp keys) or dynamic (operands) */
static bool
build_qdq(Parser *P, Graph *g, const NodeText *nt, NodeId nid)
{
    const QSpec *qs = &nt->qs;
    const OpInfo *info = nt->info;
    bool any_q = qs->has_scale || qs->has_zp || qs->has_axis || qs->has_range;
    if (any_q && nt->operands.len > 1 && qs->has_axis && !qs->has_scale && !qs->has_zp &&
        !qs->has_range) {
        /* dynamic per-axis form: scale/zp operands, `axis` a plain attribute */
        ir_set_attr_int(g, nid, "axis", qs->axis);
        any_q = false;
    }
    if (any_q) {
        if (nt->operands.len > 1) {
            lex_error(P, qs->line, qs->col,
                 "%s: static scale/zp and scale/zp operands are exclusive", info->name);
            return false;
        }
        if (nt->op == OP_DYNAMIC_QUANTIZE) {
            lex_error(P, qs->line, qs->col, "dynamic_quantize takes no scale or zp");
            return false;
        }
        ElemType st = nt->op == OP_QUANTIZE ? nt->types.data[0].elem
                                            : ir_value(g, nt->operands.data[0])->type.elem;
        if (!elem_is_quant_storage(st)) {
            lex_error(P, qs->line, qs->col, "%s: quantized side has non-integer type %s",
                 info->name, elem_name(st));
            return false;
        }
        QParams *qp = qspec_build(P, qs, st);
        if (!qp)
            return false;
        ir_node(g, nid)->q = qp;
    } else if (nt->op != OP_DYNAMIC_QUANTIZE && nt->operands.len == 1) {
        lex_error(P, nt->sline, nt->scol, "%s: needs scale and zp (attributes or operands)",
             info->name);
        return false;
    }
    return true;
}

static bool
build_node(Parser *P, Graph *g, const NodeText *nt)
{
    NodeId nid = ir_add_node(g, nt->op, nt->operands.len, nt->operands.data, nt->results.len,
                             nt->loc);
    for (uint32_t k = 0; k < nt->results.len; k++) {
        ValueId v = ir_add_value(g, intern_str(&P->m->strs, nt->results.data[k].name),
                                 &nt->types.data[k]);
        ir_set_result(g, nid, k, v);
        record_def(P, nt->results.data[k].name, v);
    }
    if (nt->cval)
        ir_set_attr_tensor(g, nid, "value", nt->cval);
    for (uint32_t i = 0; i < nt->attrs.len; i++)
        ir_set_attr(g, nid, &nt->attrs.data[i]);
    if (nt->info->flags & OPF_QDQ)
        return build_qdq(P, g, nt, nid);
    return true;
}

static bool
parse_node(Parser *P, Graph *g)
{
    NodeText nt = {.sline = P->tline, .scol = P->tcol};
    bool ok = false;
    if (!parse_results(P, &nt))
        goto out;
    /* op */
    if (P->tok != T_IDENT) {
        ERR("expected an op name, got %s", lex_tok_desc(P->tok));
        goto out;
    }
    nt.op = op_from_name(P->tstart, P->tlen);
    if (nt.op == OP_INVALID) {
        ERR("unknown op '%.*s'", (int)P->tlen, P->tstart);
        goto out;
    }
    nt.info = op_info(nt.op);
    lex_next(P);
    nt.loc = (Loc){.file = P->file, .line = nt.sline, .col = nt.scol};
    if (!parse_node_body(P, &nt))
        goto out;
    if (lex_tok_is(P, "loc") && !parse_loc(P, &nt.loc))
        goto out;
    ok = check_arity(P, &nt) && build_node(P, g, &nt);
out:
    qspec_free(&nt.qs);
    vec_free(&nt.results);
    vec_free(&nt.operands);
    vec_free(&nt.attrs);
    vec_free(&nt.types);
    return ok;
}

static bool
parse_graph(Parser *P, Graph *g)
{
    if (!lex_tok_is(P, "graph")) {
        ERR("expected 'graph', got %s", lex_tok_desc(P->tok));
        return false;
    }
    lex_next(P);
    if (P->tok != T_GLOBAL) {
        ERR("expected a graph name '@...', got %s", lex_tok_desc(P->tok));
        return false;
    }
    g->name = intern(&P->m->strs, P->sval);
    lex_next(P);
    if (!lex_expect(P, T_LPAREN, "'(' starting the graph inputs"))
        return false;
    if (!lex_accept(P, T_RPAREN)) {
        for (;;) {
            if (P->tok != T_VALUE) {
                ERR("expected an input name, got %s", lex_tok_desc(P->tok));
                return false;
            }
            uint32_t name = intern(&P->m->strs, P->sval);
            if (lookup_def(P, name).id) {
                ERR("input '%%%s' is defined twice", P->sval);
                return false;
            }
            lex_next(P);
            if (!lex_expect(P, T_COLON, "':' and the input type"))
                return false;
            Type t;
            if (!parse_type(P, &t))
                return false;
            ValueId v = ir_add_input(g, intern_str(&P->m->strs, name), &t);
            record_def(P, name, v);
            if (lex_accept(P, T_RPAREN))
                break;
            if (!lex_expect(P, T_COMMA, "',' or ')'"))
                return false;
        }
    }
    if (!lex_expect(P, T_ARROW, "'->' and the result types"))
        return false;
    VEC(Type) rtypes = {0};
    uint32_t rl = P->tline, rc = P->tcol;
    bool ok = false;
    if (lex_accept(P, T_LPAREN)) {
        if (!lex_accept(P, T_RPAREN)) {
            for (;;) {
                Type t;
                if (!parse_type(P, &t))
                    goto out;
                vec_push(&rtypes, t);
                if (lex_accept(P, T_RPAREN))
                    break;
                if (!lex_expect(P, T_COMMA, "',' or ')'"))
                    goto out;
            }
        }
    } else {
        Type t;
        if (!parse_type(P, &t))
            goto out;
        vec_push(&rtypes, t);
    }
    if (!lex_expect(P, T_LBRACE, "'{' starting the graph body"))
        goto out;
    for (;;) {
        if (lex_tok_is(P, "return")) {
            uint32_t retl = P->tline, retc = P->tcol;
            lex_next(P);
            if (P->tok == T_VALUE) {
                for (;;) {
                    if (P->tok != T_VALUE) {
                        ERR("expected a value name, got %s", lex_tok_desc(P->tok));
                        goto out;
                    }
                    ValueId v = lookup_def(P, intern(&P->m->strs, P->sval));
                    if (!v.id) {
                        ERR("use of undefined value '%%%s'", P->sval);
                        goto out;
                    }
                    vec_push(&g->outputs, v);
                    lex_next(P);
                    if (!lex_accept(P, T_COMMA))
                        break;
                }
            }
            if (g->outputs.len != rtypes.len) {
                lex_error(P, retl, retc, "return has %u values but the graph declares %u results",
                     g->outputs.len, rtypes.len);
                goto out;
            }
            for (uint32_t k = 0; k < rtypes.len; k++) {
                if (!type_equal(&rtypes.data[k], &ir_value(g, g->outputs.data[k])->type)) {
                    StrBuf a, b;
                    sb_init(&a);
                    sb_init(&b);
                    ir_print_type(&a, g, &rtypes.data[k]);
                    ir_print_type(&b, g, &ir_value(g, g->outputs.data[k])->type);
                    lex_error(P, rl, rc, "result %u is declared %s but returns %s", k, a.data, b.data);
                    sb_free(&a);
                    sb_free(&b);
                    goto out;
                }
            }
            if (!lex_expect(P, T_RBRACE, "'}' after return"))
                goto out;
            break;
        }
        if (P->tok == T_RBRACE) {
            ERR("graph body must end with 'return'");
            goto out;
        }
        if (P->tok == T_EOF) {
            ERR("unexpected end of input in graph body");
            goto out;
        }
        if (!parse_node(P, g))
            goto out;
    }
    ok = true;
out:
    vec_free(&rtypes);
    return ok;
}

static void
destroy_module(void *m)
{
    ir_module_destroy(m);
}

Module *
ir_parse(qdqc_context *ctx, const char *text, size_t len, const char *filename)
{
    Parser P_ = {0}, *P = &P_;
    P->ctx = ctx;
    P->m = ir_module_create(ctx, filename);
    oom_defer(destroy_module, P->m); /* an allocation failure below frees it */
    P->file = P->m->filename;
    P->src = P->p = text;
    P->end = text + len;
    P->line = P->col = 1;
    lex_next(P);
    bool ok = !P->failed && parse_graph(P, &P->m->g);
    if (ok && P->tok != T_EOF)
        ERR("expected end of input after the graph, got %s", lex_tok_desc(P->tok));
    ok = ok && !P->failed;
    oom_undefer(P->m);
    free(P->sval);
    free(P->defs);
    if (!ok) {
        ir_module_destroy(P->m);
        return NULL;
    }
    return P->m;
}
