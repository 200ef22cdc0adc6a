/* export_logic.c: MLIR form of the ops around masks and lookups: cast between element types,
 * gather, comparisons (equal, less, less_equal, greater, greater_equal), logic (and, or, xor,
 * not), where and expand. Each is one linalg.generic over arith ops with numpy broadcasting
 * (exp_bcast_map), computing what lib/ir/eval.c (ir_cast_elem, the comparisons, logic and
 * selection the reference interpreter runs) and lib/ref/ref_layout.c (gather) compute; bool
 * travels as i1. Gather reads the table with tensor.extract at a run-time index: an index out
 * of [-len, len) is an error in the reference, the export clamps it into [0, len) (no
 * out-of-bounds read, no error; docs/mlir.md). */
#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
iters_dup(int nd)
{
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < nd; i++)
        sb_printf(&b, "%s\"parallel\"", i ? ", " : "");
    return b.data ? b.data : xstrdup("");
}

static char *
ident_map(int rank)
{
    int res[IR_MAX_RANK];
    for (int i = 0; i < rank; i++)
        res[i] = i;
    StrBuf b;
    sb_init(&b);
    exp_map(&b, rank, res, rank);
    return b.data;
}

/* Element types the ops here take: bool, the signed integers and f32 (no quantization
 * parameters on operands whose value the op computes with, no shifted unsigned storage). */
static bool
plain(const Type *t)
{
    return !t->q && (t->elem == ET_BOOL || t->elem == ET_I8 || t->elem == ET_I16 ||
                     t->elem == ET_I32 || t->elem == ET_I64 || t->elem == ET_F32);
}

/* One linalg.generic over n's operands (numpy-broadcast to the result y), body on %a<i>. */
static bool
elementwise(Exp *x, Node *n, const char *out_et, const char *body)
{
    const Type *yt = exp_vtype(x, n->out[0]);
    ExpIn in[3];
    StrBuf mp[3];
    char *tt[3];
    uint32_t k = n->nin;
    bool ok = k <= 3;
    for (uint32_t i = 0; i < k && ok; i++) {
        const Type *t = exp_vtype(x, n->in[i]);
        in[i].v = exp_operand(x, n->in[i]);
        ok = in[i].v != 0;
        sb_init(&mp[i]);
        exp_bcast_map(&mp[i], t, yt);
        tt[i] = exp_ttype_dup(t, exp_et(t->elem));
        in[i] = (ExpIn){in[i].v, tt[i], mp[i].data, exp_et(t->elem)};
        if (!ok)
            k = i + 1;
    }
    if (ok) {
        char *tty = exp_ttype_dup(yt, out_et), *my = ident_map(yt->rank), *it = iters_dup(yt->rank);
        exp_bind(x, n, exp_generic(x, in, (int)k, 0, tty, my, out_et, it, body));
        free(tty), free(my), free(it);
    }
    for (uint32_t i = 0; i < k && k <= 3; i++) {
        sb_free(&mp[i]);
        free(tt[i]);
    }
    return ok;
}

/* cast (ir_cast_elem): to bool x != 0 (a NaN is true); integer to integer wraps (extsi or
 * trunci; bool extends as 0/1); integer to f32 rounds once to nearest (sitofp, uitofp for bool);
 * f32 to f32 is the value; f32 to integer truncates toward zero with NaN -> 0 and saturation
 * to the i64 range, then wraps to the result's width; f32 <-> f16 by arith.truncf (nearest even)
 * and arith.extf. Otherwise only the element types `plain` takes. */
bool
exp_op_cast(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    if (xt->elem == yt->elem && !elem_is_float(yt->elem)) {
        /* integers to their own element type: the passes' reinterpretation for a dequantize
         * with its own parameters (docs/passes.md); the same values */
        uint32_t v = exp_operand(x, n->in[0]);
        if (!v)
            return false;
        exp_bind(x, n, v);
        return true;
    }
    if (!xt->q && !yt->q && ((xt->elem == ET_F32 && yt->elem == ET_F16) ||
                             (xt->elem == ET_F16 && yt->elem == ET_F32))) {
        /* f32 -> f16 rounds to nearest even once (arith.truncf; overflow to inf), f16 -> f32
         * is exact (arith.extf) */
        bool down = yt->elem == ET_F16;
        char body[160];
        snprintf(body, sizeof body, "      %%r = arith.%s %%a0 : %s to %s\n"
                 "      linalg.yield %%r : %s\n", down ? "truncf" : "extf",
                 down ? "f32" : "f16", down ? "f16" : "f32", down ? "f16" : "f32");
        return elementwise(x, n, down ? "f16" : "f32", body);
    }
    if (!plain(xt) || !plain(yt))
        return exp_fail(x, n, "cast: only between bool, i8, i16, i32, i64 and f32 without "
                        "quantization parameters, or f32 <-> f16 (%s -> %s)",
                        elem_name(xt->elem), elem_name(yt->elem));
    const char *ie = exp_et(xt->elem), *oe = exp_et(yt->elem);
    int iw = xt->elem == ET_BOOL ? 1 : (int)elem_size(xt->elem) * 8,
        ow = yt->elem == ET_BOOL ? 1 : (int)elem_size(yt->elem) * 8;
    bool fi = xt->elem == ET_F32, fo = yt->elem == ET_F32, bi = xt->elem == ET_BOOL;
    StrBuf b;
    sb_init(&b);
    if (xt->elem == yt->elem) {
        sb_printf(&b, "      linalg.yield %%a0 : %s\n", oe);
    } else if (yt->elem == ET_BOOL) {
        if (fi)
            sb_printf(&b, "      %%z = arith.constant 0.0 : f32\n"
                          "      %%r = arith.cmpf une, %%a0, %%z : f32\n");
        else
            sb_printf(&b, "      %%z = arith.constant 0 : %s\n"
                          "      %%r = arith.cmpi ne, %%a0, %%z : %s\n", ie, ie);
        sb_puts(&b, "      linalg.yield %r : i1\n");
    } else if (fo) {
        sb_printf(&b, "      %%r = arith.%s %%a0 : %s to f32\n      linalg.yield %%r : f32\n",
                  bi ? "uitofp" : "sitofp", ie);
    } else if (!fi) {
        if (iw == ow)
            sb_printf(&b, "      linalg.yield %%a0 : %s\n", oe);
        else
            sb_printf(&b, "      %%r = arith.%s %%a0 : %s to %s\n      linalg.yield %%r : %s\n",
                      iw > ow ? "trunci" : bi ? "extui" : "extsi", ie, oe, oe);
    } else {
        /* f32 -> integer: NaN 0, >= 2^63 INT64_MAX, < -2^63 INT64_MIN, else fptosi (exact
         * truncation in range), then the i64 wraps to the width of the result */
        sb_puts(&b, "      %hi = arith.constant 0x5F000000 : f32\n"
                    "      %lo = arith.constant 0xDF000000 : f32\n"
                    "      %imax = arith.constant 9223372036854775807 : i64\n"
                    "      %imin = arith.constant -9223372036854775808 : i64\n"
                    "      %z = arith.constant 0 : i64\n"
                    "      %big = arith.cmpf oge, %a0, %hi : f32\n"
                    "      %small = arith.cmpf olt, %a0, %lo : f32\n"
                    "      %nan = arith.cmpf uno, %a0, %a0 : f32\n"
                    "      %inr = arith.cmpf olt, %a0, %hi : f32\n"
                    "      %inr2 = arith.cmpf oge, %a0, %lo : f32\n"
                    "      %ok = arith.andi %inr, %inr2 : i1\n"
                    "      %c = arith.select %ok, %a0, %hi : f32\n"
                    "      %t = arith.fptosi %c : f32 to i64\n"
                    "      %t1 = arith.select %big, %imax, %t : i64\n"
                    "      %t2 = arith.select %small, %imin, %t1 : i64\n"
                    "      %t3 = arith.select %nan, %z, %t2 : i64\n");
        if (ow == 64)
            sb_puts(&b, "      linalg.yield %t3 : i64\n");
        else
            sb_printf(&b, "      %%r = arith.trunci %%t3 : i64 to %s\n"
                          "      linalg.yield %%r : %s\n", oe, oe);
    }
    bool ok = elementwise(x, n, oe, b.data);
    sb_free(&b);
    return ok;
}

/* comparisons: signed integers (cmpi slt ...; bool as unsigned 0/1), f32 ordered (a NaN
 * operand gives false, as the reference's "unordered") */
bool
exp_op_compare(Exp *x, Node *n)
{
    const Type *at = exp_vtype(x, n->in[0]), *bt = exp_vtype(x, n->in[1]);
    const char *name = op_info(n->op)->name;
    if (!plain(at) || at->elem != bt->elem || !plain(bt))
        return exp_fail(x, n, "%s: only operands of one type among bool, i8, i16, i32, i64 and "
                        "f32, without quantization parameters", name);
    bool f = at->elem == ET_F32, u = at->elem == ET_BOOL;
    const char *p;
    switch (n->op) {
    case OP_EQUAL: p = f ? "oeq" : "eq"; break;
    case OP_LESS: p = f ? "olt" : u ? "ult" : "slt"; break;
    case OP_LESS_EQUAL: p = f ? "ole" : u ? "ule" : "sle"; break;
    case OP_GREATER: p = f ? "ogt" : u ? "ugt" : "sgt"; break;
    default: p = f ? "oge" : u ? "uge" : "sge"; break;
    }
    char body[256];
    snprintf(body, sizeof body, "      %%r = arith.%s %s, %%a0, %%a1 : %s\n"
             "      linalg.yield %%r : i1\n", f ? "cmpf" : "cmpi", p, exp_et(at->elem));
    return elementwise(x, n, "i1", body);
}

bool
exp_op_logic(Exp *x, Node *n)
{
    for (uint32_t i = 0; i < n->nin; i++)
        if (exp_vtype(x, n->in[i])->elem != ET_BOOL)
            return exp_fail(x, n, "%s: only bool operands", op_info(n->op)->name);
    if (n->op == OP_NOT)
        return elementwise(x, n, "i1", "      %t = arith.constant true\n"
                                       "      %r = arith.xori %a0, %t : i1\n"
                                       "      linalg.yield %r : i1\n");
    char body[128];
    snprintf(body, sizeof body, "      %%r = arith.%s %%a0, %%a1 : i1\n"
             "      linalg.yield %%r : i1\n",
             n->op == OP_AND ? "andi" : n->op == OP_OR ? "ori" : "xori");
    return elementwise(x, n, "i1", body);
}

/* where and expand move values: any element type, quantization parameters equal to the
 * result's (so the exported integers, u8 shifted included, are the result's) */
static bool
same_values(const Type *t, const Type *y)
{
    return t->elem == y->elem && qparams_equal(t->q, y->q) && exp_et(y->elem);
}

bool
exp_op_where(Exp *x, Node *n)
{
    const Type *ct = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    if (ct->elem != ET_BOOL || !same_values(exp_vtype(x, n->in[1]), yt) ||
        !same_values(exp_vtype(x, n->in[2]), yt))
        return exp_fail(x, n, "where: only a bool condition and values of the result's type");
    char body[160];
    snprintf(body, sizeof body, "      %%r = arith.select %%a0, %%a1, %%a2 : %s\n"
             "      linalg.yield %%r : %s\n", exp_et(yt->elem), exp_et(yt->elem));
    return elementwise(x, n, exp_et(yt->elem), body);
}

bool
exp_op_expand(Exp *x, Node *n)
{
    const Type *yt = exp_vtype(x, n->out[0]);
    if (!same_values(exp_vtype(x, n->in[0]), yt))
        return exp_fail(x, n, "expand: operand and result types differ");
    if (n->nin > 1 && n->in[1].id && !ir_const_of(x->g, n->in[1]))
        return exp_fail(x, n, "expand: only a constant shape");
    Node m = *n; /* the shape operand (if any) is not read: the result type has the shape */
    m.nin = 1;
    char body[64];
    snprintf(body, sizeof body, "      linalg.yield %%a0 : %s\n", exp_et(yt->elem));
    if (!elementwise(x, &m, exp_et(yt->elem), body))
        return false;
    return true;
}

/* gather along `axis`: y[o..., j..., i...] = x[o..., k, i...], k = idx[j...] (+ len if
 * negative), clamped into [0, len). Any table type (the values move); i32/i64 indices. */
bool
exp_op_gather(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *it = exp_vtype(x, n->in[1]),
               *yt = exp_vtype(x, n->out[0]);
    if (!same_values(xt, yt) || (it->elem != ET_I64 && it->elem != ET_I32) || it->q)
        return exp_fail(x, n, "gather: only i32/i64 indices and a result of the table's type");
    int64_t a = ir_attr_int(x->g, n, "axis", 0);
    if (a < 0)
        a += xt->rank;
    if (a < 0 || a >= xt->rank || yt->rank != xt->rank - 1 + it->rank)
        return exp_fail(x, n, "gather: axis %lld out of range", (long long)a);
    uint32_t tv = exp_operand(x, n->in[0]), iv = exp_operand(x, n->in[1]);
    if (!tv || !iv)
        return false;
    int res[IR_MAX_RANK];
    for (int i = 0; i < it->rank; i++)
        res[i] = (int)a + i;
    StrBuf mi, b;
    sb_init(&mi);
    sb_init(&b);
    exp_map(&mi, yt->rank, res, it->rank);
    const char *ie = exp_et(it->elem), *oe = exp_et(yt->elem);
    char *tti = exp_ttype_dup(it, ie), *ttx = exp_ttype_dup(xt, oe);
    sb_printf(&b, "      %%len = arith.constant %lld : %s\n"
                  "      %%z = arith.constant 0 : %s\n"
                  "      %%m = arith.constant %lld : %s\n"
                  "      %%neg = arith.cmpi slt, %%a0, %%z : %s\n"
                  "      %%w = arith.addi %%a0, %%len : %s\n"
                  "      %%k0 = arith.select %%neg, %%w, %%a0 : %s\n"
                  "      %%k1 = arith.maxsi %%k0, %%z : %s\n"
                  "      %%k2 = arith.minsi %%k1, %%m : %s\n"
                  "      %%k = arith.index_cast %%k2 : %s to index\n",
              (long long)xt->dims[a], ie, ie, (long long)xt->dims[a] - 1, ie, ie, ie, ie, ie,
              ie, ie);
    for (int d = 0; d < yt->rank; d++)
        if (d < a || d >= a + it->rank)
            sb_printf(&b, "      %%i%d = linalg.index %d : index\n", d, d);
    sb_printf(&b, "      %%r = tensor.extract %%v%u[", tv);
    for (int d = 0; d < xt->rank; d++) {
        if (d)
            sb_puts(&b, ", ");
        if (d < a)
            sb_printf(&b, "%%i%d", d);
        else if (d == a)
            sb_puts(&b, "%k");
        else
            sb_printf(&b, "%%i%d", d - 1 + it->rank);
    }
    sb_printf(&b, "] : %s\n      linalg.yield %%r : %s\n", ttx, oe);
    char *tty = exp_ttype_dup(yt, oe), *my = ident_map(yt->rank), *its = iters_dup(yt->rank);
    ExpIn in = {iv, tti, mi.data, ie};
    exp_bind(x, n, exp_generic(x, &in, 1, 0, tty, my, oe, its, b.data));
    free(tty), free(my), free(its), free(tti), free(ttx);
    sb_free(&mi);
    sb_free(&b);
    return true;
}
