/* export_float.c: the f32 ops that float islands leave between quantized regions (a real
 * PyTorch QAT export keeps conv -> div -> add -> batchnorm, the global average pool and the
 * final Gemm in float; attention blocks keep softmax) as linalg.generic over arith/math. Each computes what qdqc's compiled
 * code computes (lib/codegen/llvm_kernels_float*.c), so the exported module agrees bit for
 * bit: operands widened to f64, the same operation order, sums accumulated in f64 in the
 * loop order of the code generator (linalg's iteration order, reduction dimensions innermost),
 * one rounding to f32 at the end. */
#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
all_f32(Exp *x, Node *n)
{
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->in[i].id && exp_vtype(x, n->in[i])->elem != ET_F32)
            return exp_fail(x, n, "%s: only f32 operands", op_info(n->op)->name);
    if (exp_vtype(x, n->out[0])->elem != ET_F32)
        return exp_fail(x, n, "%s: only f32 results", op_info(n->op)->name);
    return true;
}

static char *
tt_dup(const Type *t, const char *et)
{
    StrBuf b;
    sb_init(&b);
    exp_ttype(&b, t->rank, t->dims, et);
    return b.data;
}

static char *
map_dup(int nd, const int *res, int nres)
{
    StrBuf b;
    sb_init(&b);
    exp_map(&b, nd, res, nres);
    return b.data;
}

static char *
iters_dup(int nd, int nred)
{
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < nd; i++)
        sb_printf(&b, "%s\"%s\"", i ? ", " : "", i < nd - nred ? "parallel" : "reduction");
    return b.data;
}

static char *
ident_map(int rank)
{
    int res[IR_MAX_RANK];
    for (int i = 0; i < rank; i++)
        res[i] = i;
    return map_dup(rank, res, rank);
}

/* "%name = arith.constant <bits> : f64" for the double d, bit-exact */
static void
f64_const(StrBuf *b, const char *name, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    sb_printf(b, "      %%%s = arith.constant 0x%016llX : f64\n", name, (unsigned long long)bits);
}

static void
f32_const(StrBuf *b, const char *name, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    sb_printf(b, "      %%%s = arith.constant 0x%08X : f32\n", name, bits);
}

/* f32 div with numpy broadcasting: the code generator's fdiv in f32. */
static bool
ex_div(Exp *x, Node *n)
{
    const Type *at = exp_vtype(x, n->in[0]), *bt = exp_vtype(x, n->in[1]),
               *yt = exp_vtype(x, n->out[0]);
    uint32_t a = exp_operand(x, n->in[0]), b = exp_operand(x, n->in[1]);
    if (!a || !b)
        return false;
    StrBuf ma, mb;
    sb_init(&ma);
    sb_init(&mb);
    exp_bcast_map(&ma, at, yt);
    exp_bcast_map(&mb, bt, yt);
    char *tta = tt_dup(at, "f32"), *ttb = tt_dup(bt, "f32"), *tty = tt_dup(yt, "f32");
    char *my = ident_map(yt->rank), *it = iters_dup(yt->rank, 0);
    ExpIn in[2] = {{a, tta, ma.data, "f32"}, {b, ttb, mb.data, "f32"}};
    exp_bind(x, n, exp_generic(x, in, 2, 0, tty, my, "f32", it,
                               "      %q = arith.divf %a0, %a1 : f32\n"
                               "      linalg.yield %q : f32\n"));
    sb_free(&ma);
    sb_free(&mb);
    free(tta), free(ttb), free(tty), free(my), free(it);
    return true;
}

/* batchnorm (inference): ((x - mean) / sqrt(var + eps)) * scale + bias in f64, per channel
 * (axis 1), rounded to f32 once. */
static bool
ex_batchnorm(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]);
    if (n->nin < 5 || xt->rank < 2)
        return exp_fail(x, n, "batchnorm: needs x of rank >= 2 and its four parameters");
    ExpIn in[5];
    uint32_t v[5];
    char *tts[5];
    char *mx = ident_map(xt->rank), *it = iters_dup(xt->rank, 0);
    int ch = 1;
    char *mc = map_dup(xt->rank, &ch, 1);
    for (int i = 0; i < 5; i++) {
        v[i] = exp_operand(x, n->in[i]);
        if (!v[i]) {
            for (int j = 0; j < i; j++)
                free(tts[j]);
            free(mx), free(it), free(mc);
            return false;
        }
        tts[i] = tt_dup(exp_vtype(x, n->in[i]), "f32");
        in[i] = (ExpIn){v[i], tts[i], i ? mc : mx, "f32"};
    }
    StrBuf body;
    sb_init(&body);
    f64_const(&body, "eps", (double)ir_attr_float(x->g, n, "epsilon", 1e-5f));
    sb_puts(&body, "      %x = arith.extf %a0 : f32 to f64\n"
                   "      %w = arith.extf %a1 : f32 to f64\n"
                   "      %b = arith.extf %a2 : f32 to f64\n"
                   "      %m = arith.extf %a3 : f32 to f64\n"
                   "      %var = arith.extf %a4 : f32 to f64\n"
                   "      %ve = arith.addf %var, %eps : f64\n"
                   "      %den = math.sqrt %ve : f64\n"
                   "      %d = arith.subf %x, %m : f64\n"
                   "      %q = arith.divf %d, %den : f64\n"
                   "      %s = arith.mulf %q, %w : f64\n"
                   "      %r = arith.addf %s, %b : f64\n"
                   "      %y = arith.truncf %r : f64 to f32\n"
                   "      linalg.yield %y : f32\n");
    exp_bind(x, n, exp_generic(x, in, 5, 0, tts[0], mx, "f32", it, body.data));
    sb_free(&body);
    for (int i = 0; i < 5; i++)
        free(tts[i]);
    free(mx), free(it), free(mc);
    return true;
}

/* A zero-filled f64 accumulator of t's shape. */
static uint32_t
zero_f64(Exp *x, const char *tt)
{
    uint32_t e = exp_line(x, "tensor.empty() : %s", tt);
    uint32_t z = exp_line(x, "arith.constant 0.0 : f64");
    return exp_line(x, "linalg.fill ins(%%v%u : f64) outs(%%v%u : %s) -> %s", z, e, tt, tt);
}

/* gemm: acc = sum_k a[i,k] * b[k,j] in f64 (k ascending), y = alpha * (f32)acc + beta * c. */
static bool
ex_gemm(Exp *x, Node *n)
{
    const Type *at = exp_vtype(x, n->in[0]), *bt = exp_vtype(x, n->in[1]),
               *yt = exp_vtype(x, n->out[0]);
    if (at->rank != 2 || bt->rank != 2 || yt->rank != 2)
        return exp_fail(x, n, "gemm: only 2-D operands");
    bool ta = ir_attr_int(x->g, n, "transA", 0), tb = ir_attr_int(x->g, n, "transB", 0);
    float alpha = ir_attr_float(x->g, n, "alpha", 1.0f), beta = ir_attr_float(x->g, n, "beta", 1.0f);
    bool has_c = n->nin > 2 && n->in[2].id;
    const Type *ct = has_c ? exp_vtype(x, n->in[2]) : NULL;
    if (ct && ct->rank > 2)
        return exp_fail(x, n, "gemm: C must have rank <= 2");
    uint32_t a = exp_operand(x, n->in[0]), b = exp_operand(x, n->in[1]);
    uint32_t c = has_c ? exp_operand(x, n->in[2]) : 1;
    if (!a || !b || !c)
        return false;
    int ra[2] = {ta ? 2 : 0, ta ? 0 : 2}, rb[2] = {tb ? 1 : 2, tb ? 2 : 1}, ry[2] = {0, 1};
    char *ma = map_dup(3, ra, 2), *mb = map_dup(3, rb, 2), *macc = map_dup(3, ry, 2);
    char *tta = tt_dup(at, "f32"), *ttb = tt_dup(bt, "f32"), *tacc = tt_dup(yt, "f64");
    char *it = iters_dup(3, 1);
    ExpIn in[2] = {{a, tta, ma, "f32"}, {b, ttb, mb, "f32"}};
    uint32_t acc = exp_generic(x, in, 2, zero_f64(x, tacc), tacc, macc, "f64", it,
                               "      %x = arith.extf %a0 : f32 to f64\n"
                               "      %w = arith.extf %a1 : f32 to f64\n"
                               "      %p = arith.mulf %x, %w : f64\n"
                               "      %s = arith.addf %out, %p : f64\n"
                               "      linalg.yield %s : f64\n");
    char *my = ident_map(2), *it2 = iters_dup(2, 0), *tty = tt_dup(yt, "f32"), *ttc = NULL;
    StrBuf mc, body;
    sb_init(&mc);
    sb_init(&body);
    ExpIn ein[2] = {{acc, tacc, my, "f64"}, {0}};
    f32_const(&body, "alpha", alpha);
    sb_puts(&body, "      %t = arith.truncf %a0 : f64 to f32\n"
                   "      %v = arith.mulf %alpha, %t : f32\n");
    if (has_c) {
        exp_bcast_map(&mc, ct, yt);
        ttc = tt_dup(ct, "f32");
        ein[1] = (ExpIn){c, ttc, mc.data, "f32"};
        f32_const(&body, "beta", beta);
        sb_puts(&body, "      %bc = arith.mulf %beta, %a1 : f32\n"
                       "      %r = arith.addf %v, %bc : f32\n"
                       "      linalg.yield %r : f32\n");
    } else {
        sb_puts(&body, "      linalg.yield %v : f32\n");
    }
    exp_bind(x, n, exp_generic(x, ein, has_c ? 2 : 1, 0, tty, my, "f32", it2, body.data));
    sb_free(&mc);
    sb_free(&body);
    free(ma), free(mb), free(macc), free(tta), free(ttb), free(tacc), free(it);
    free(my), free(it2), free(tty), free(ttc);
    return true;
}

/* global average pooling: the spatial sum in f64 (row-major), divided by the count in f64,
 * rounded to f32. */
static bool
ex_global_avgpool(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    if (xt->rank < 3 || xt->rank > 5)
        return exp_fail(x, n, "global_avgpool: only rank 3 to 5");
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    int64_t cnt = 1;
    for (int d = 2; d < xt->rank; d++)
        cnt *= xt->dims[d];
    Type st = *xt; /* the sums: [N, C] */
    st.rank = 2;
    int ry[2] = {0, 1};
    char *mx = ident_map(xt->rank), *ms = map_dup(xt->rank, ry, 2), *it = iters_dup(xt->rank, xt->rank - 2);
    char *ttx = tt_dup(xt, "f32"), *tts = tt_dup(&st, "f64"), *ttm = tt_dup(&st, "f32");
    ExpIn in = {v, ttx, mx, "f32"};
    uint32_t sum = exp_generic(x, &in, 1, zero_f64(x, tts), tts, ms, "f64", it,
                               "      %e = arith.extf %a0 : f32 to f64\n"
                               "      %s = arith.addf %out, %e : f64\n"
                               "      linalg.yield %s : f64\n");
    char *m2 = ident_map(2), *it2 = iters_dup(2, 0);
    StrBuf body;
    sb_init(&body);
    f64_const(&body, "n", (double)cnt);
    sb_puts(&body, "      %q = arith.divf %a0, %n : f64\n"
                   "      %y = arith.truncf %q : f64 to f32\n"
                   "      linalg.yield %y : f32\n");
    ExpIn in2 = {sum, tts, m2, "f64"};
    uint32_t mean = exp_generic(x, &in2, 1, 0, ttm, m2, "f32", it2, body.data);
    exp_bind(x, n, exp_reshape(x, mean, &(Type){.elem = ET_F32, .rank = 2, .dims = {st.dims[0], st.dims[1]}},
                               yt->rank, yt->dims));
    sb_free(&body);
    free(mx), free(ms), free(it), free(ttx), free(tts), free(ttm), free(m2), free(it2);
    return true;
}

/* softmax along one axis, as the code generator: in f64, m = the running maximum (x > m ? x :
 * m, from -inf), s = sum of exp(x - m) in axis order, y = (f32)(exp(x - m) / s); exp is libm's
 * (math.exp lowers to the same call). */
static bool
ex_softmax(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]);
    int64_t ax = ir_attr_int(x->g, n, "axis", -1);
    if (ax < 0)
        ax += xt->rank;
    if (ax < 0 || ax >= xt->rank)
        return exp_fail(x, n, "softmax: axis out of range");
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    int r = xt->rank, res[IR_MAX_RANK], nr = 0;
    Type rt = *xt; /* x without the axis */
    for (int i = 0; i < r; i++)
        if (i != ax) {
            rt.dims[nr] = xt->dims[i];
            res[nr++] = i;
        }
    rt.rank = (uint8_t)nr;
    char *mx = ident_map(r), *mr = map_dup(r, res, nr), *tx = tt_dup(xt, "f32"),
         *tr = tt_dup(&rt, "f64");
    StrBuf it;
    sb_init(&it);
    for (int i = 0; i < r; i++)
        sb_printf(&it, "%s\"%s\"", i ? ", " : "", i == ax ? "reduction" : "parallel");
    uint32_t e = exp_line(x, "tensor.empty() : %s", tr);
    uint32_t ninf = exp_line(x, "arith.constant 0xFFF0000000000000 : f64");
    uint32_t init = exp_line(x, "linalg.fill ins(%%v%u : f64) outs(%%v%u : %s) -> %s", ninf, e, tr, tr);
    ExpIn in1 = {v, tx, mx, "f32"};
    uint32_t m = exp_generic(x, &in1, 1, init, tr, mr, "f64", it.data,
                             "      %e = arith.extf %a0 : f32 to f64\n"
                             "      %c = arith.cmpf ogt, %e, %out : f64\n"
                             "      %r = arith.select %c, %e, %out : f64\n"
                             "      linalg.yield %r : f64\n");
    ExpIn in2[2] = {{v, tx, mx, "f32"}, {m, tr, mr, "f64"}};
    uint32_t sum = exp_generic(x, in2, 2, zero_f64(x, tr), tr, mr, "f64", it.data,
                               "      %e = arith.extf %a0 : f32 to f64\n"
                               "      %d = arith.subf %e, %a1 : f64\n"
                               "      %p = math.exp %d : f64\n"
                               "      %s = arith.addf %out, %p : f64\n"
                               "      linalg.yield %s : f64\n");
    char *itp = iters_dup(r, 0);
    ExpIn in3[3] = {{v, tx, mx, "f32"}, {m, tr, mr, "f64"}, {sum, tr, mr, "f64"}};
    exp_bind(x, n, exp_generic(x, in3, 3, 0, tx, mx, "f32", itp,
                               "      %e = arith.extf %a0 : f32 to f64\n"
                               "      %d = arith.subf %e, %a1 : f64\n"
                               "      %p = math.exp %d : f64\n"
                               "      %q = arith.divf %p, %a2 : f64\n"
                               "      %y = arith.truncf %q : f64 to f32\n"
                               "      linalg.yield %y : f32\n"));
    sb_free(&it);
    free(mx), free(mr), free(tx), free(tr), free(itp);
    return true;
}

bool
exp_node_float(Exp *x, Node *n, bool *known)
{
    *known = true;
    switch (n->op) {
    case OP_DIV: return all_f32(x, n) && ex_div(x, n);
    case OP_BATCHNORM: return all_f32(x, n) && ex_batchnorm(x, n);
    case OP_GEMM: return all_f32(x, n) && ex_gemm(x, n);
    case OP_GLOBAL_AVGPOOL: return all_f32(x, n) && ex_global_avgpool(x, n);
    case OP_SOFTMAX: return all_f32(x, n) && ex_softmax(x, n);
    default: *known = false; return false;
    }
}
