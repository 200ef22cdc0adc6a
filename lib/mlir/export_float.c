/* export_float.c: the f32 ops that float islands leave between quantized regions (a real
 * PyTorch QAT export keeps conv -> div -> add -> batchnorm, the global average pool and the
 * final Gemm in float) as linalg.generic over arith/math. layernorm, softmax and reduce_mean
 * are f32 sequences in the reference's order (16-lane sums); exp, sigmoid, tanh, erf, gelu, log
 * and pow are fmath.c's operations (export_fmath.c). Each computes what qdqc's compiled
 * code computes (lib/codegen/llvm_kernels_float*.c), so the exported module agrees bit for
 * bit: operands widened to f64, the same operation order, sums accumulated in f64 in the
 * loop order of the code generator (linalg's iteration order, reduction dimensions innermost),
 * one rounding to f32 at the end. */
#include "export.h"
#include "numerics/fmath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
exp_all_f32(Exp *x, Node *n)
{
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->in[i].id && exp_vtype(x, n->in[i])->elem != ET_F32)
            return exp_fail(x, n, "%s: only f32 operands", op_info(n->op)->name);
    if (exp_vtype(x, n->out[0])->elem != ET_F32)
        return exp_fail(x, n, "%s: only f32 results", op_info(n->op)->name);
    return true;
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

/* f32 div with numpy broadcasting: the code generator's fdiv in f32. */
bool
exp_op_div(Exp *x, Node *n)
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
    char *tta = exp_ttype_dup(at, "f32"), *ttb = exp_ttype_dup(bt, "f32"), *tty = exp_ttype_dup(yt, "f32");
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
bool
exp_op_batchnorm(Exp *x, Node *n)
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
        tts[i] = exp_ttype_dup(exp_vtype(x, n->in[i]), "f32");
        in[i] = (ExpIn){v[i], tts[i], i ? mc : mx, "f32"};
    }
    StrBuf body;
    sb_init(&body);
    exp_f64_const(&body, "eps", (double)ir_attr_float(x->g, n, "epsilon", 1e-5f));
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

/* gemm: acc = fma(a[i,k], b[k,j], acc) in f32 from 0 (k ascending), y = alpha * acc + beta * c:
 * the order of docs/numerics.md, "Float matrix products". */
bool
exp_op_gemm(Exp *x, Node *n)
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
    char *tta = exp_ttype_dup(at, "f32"), *ttb = exp_ttype_dup(bt, "f32"), *tacc = exp_ttype_dup(yt, "f32");
    char *it = iters_dup(3, 1);
    ExpIn in[2] = {{a, tta, ma, "f32"}, {b, ttb, mb, "f32"}};
    uint32_t e0 = exp_line(x, "tensor.empty() : %s", tacc);
    uint32_t c0 = exp_line(x, "arith.constant 0.0 : f32");
    uint32_t init = exp_line(x, "linalg.fill ins(%%v%u : f32) outs(%%v%u : %s) -> %s", c0, e0, tacc, tacc);
    uint32_t acc = exp_generic(x, in, 2, init, tacc, macc, "f32", it,
                               "      %s = math.fma %a0, %a1, %out : f32\n"
                               "      linalg.yield %s : f32\n");
    char *my = ident_map(2), *it2 = iters_dup(2, 0), *tty = exp_ttype_dup(yt, "f32"), *ttc = NULL;
    StrBuf mc, body;
    sb_init(&mc);
    sb_init(&body);
    ExpIn ein[2] = {{acc, tacc, my, "f32"}, {0}};
    exp_f32_const(&body, "alpha", alpha);
    sb_puts(&body, "      %v = arith.mulf %alpha, %a0 : f32\n");
    if (has_c) {
        exp_bcast_map(&mc, ct, yt);
        ttc = exp_ttype_dup(ct, "f32");
        ein[1] = (ExpIn){c, ttc, mc.data, "f32"};
        exp_f32_const(&body, "beta", beta);
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
bool
exp_op_global_avgpool(Exp *x, Node *n)
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
    char *ttx = exp_ttype_dup(xt, "f32"), *tts = exp_ttype_dup(&st, "f64"), *ttm = exp_ttype_dup(&st, "f32");
    ExpIn in = {v, ttx, mx, "f32"};
    uint32_t sum = exp_generic(x, &in, 1, zero_f64(x, tts), tts, ms, "f64", it,
                               "      %e = arith.extf %a0 : f32 to f64\n"
                               "      %s = arith.addf %out, %e : f64\n"
                               "      linalg.yield %s : f64\n");
    char *m2 = ident_map(2), *it2 = iters_dup(2, 0);
    StrBuf body;
    sb_init(&body);
    exp_f64_const(&body, "n", (double)cnt);
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



/* Element-wise f32 activations in f64, as the code generator: hard_sigmoid clamp01(alpha x +
 * beta), hard_swish x clamp01(x / 6 + 0.5), leaky_relu x < 0 ?
 * alpha x : x; clamp01 passes NaN (ordered compares). */
bool
exp_op_unary(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]);
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "      %v = arith.extf %a0 : f32 to f64\n"
                "      %c0 = arith.constant 0.0 : f64\n"
                "      %c1 = arith.constant 1.0 : f64\n");
    static const char clamp01[] = "      %l = arith.cmpf olt, %t, %c0 : f64\n"
                                  "      %t1 = arith.select %l, %c0, %t : f64\n"
                                  "      %g = arith.cmpf ogt, %t1, %c1 : f64\n"
                                  "      %t2 = arith.select %g, %c1, %t1 : f64\n";
    switch (n->op) {
    case OP_HARD_SIGMOID:
        exp_f64_const(&b, "al", (double)ir_attr_float(x->g, n, "alpha", 0.2f));
        exp_f64_const(&b, "be", (double)ir_attr_float(x->g, n, "beta", 0.5f));
        sb_printf(&b, "      %%m = arith.mulf %%al, %%v : f64\n"
                      "      %%t = arith.addf %%m, %%be : f64\n%s"
                      "      %%r = arith.addf %%t2, %%c0 : f64\n", clamp01);
        break;
    case OP_HARD_SWISH:
        sb_printf(&b, "      %%six = arith.constant 6.0 : f64\n"
                      "      %%half = arith.constant 0.5 : f64\n"
                      "      %%d = arith.divf %%v, %%six : f64\n"
                      "      %%t = arith.addf %%d, %%half : f64\n%s"
                      "      %%r = arith.mulf %%v, %%t2 : f64\n", clamp01);
        break;
    default: /* leaky_relu */
        exp_f64_const(&b, "al", (double)ir_attr_float(x->g, n, "alpha", 0.01f));
        sb_puts(&b, "      %l = arith.cmpf olt, %v, %c0 : f64\n"
                    "      %m = arith.mulf %al, %v : f64\n"
                    "      %r = arith.select %l, %m, %v : f64\n");
        break;
    }
    sb_puts(&b, "      %y = arith.truncf %r : f64 to f32\n"
                "      linalg.yield %y : f32\n");
    char *mx = ident_map(xt->rank), *tx = exp_ttype_dup(xt, "f32"), *it = iters_dup(xt->rank, 0);
    ExpIn in = {v, tx, mx, "f32"};
    exp_bind(x, n, exp_generic(x, &in, 1, 0, tx, mx, "f32", it, b.data));
    sb_free(&b);
    free(mx), free(tx), free(it);
    return true;
}

/* 2-D float conv in the order of docs/numerics.md, "Float convolution": acc = +0.0f, then for
 * c, kh, kw in order (the reduction dimensions innermost, in that order) acc = fma(x, w, acc)
 * in f32 with x = 0 at a tap in the padding, then y = acc + bias[m]. The input is read with
 * tensor.extract at computed indices (clamped into the input for a padding tap, whose value is
 * then replaced by 0). */
bool
exp_op_conv(Exp *x, Node *n)
{
    Graph *g = x->g;
    const Type *xt = exp_vtype(x, n->in[0]), *wt = exp_vtype(x, n->in[1]), *yt = exp_vtype(x, n->out[0]);
    if (xt->rank != 4 || wt->rank != 4)
        return exp_fail(x, n, "conv: only 2-D float convolutions");
    int64_t s[2] = {1, 1}, d[2] = {1, 1}, p[4] = {0, 0, 0, 0}, group = ir_attr_int(g, n, "group", 1);
    ir_attr_ints(g, n, "strides", s, 2);
    ir_attr_ints(g, n, "dilations", d, 2);
    ir_attr_ints(g, n, "pads", p, 4);
    int64_t M = wt->dims[0], Cg = wt->dims[1];
    if (group < 1 || M % group || xt->dims[1] != Cg * group)
        return exp_fail(x, n, "conv: channels do not match the group");
    if (ir_attr_string(g, n, "auto_pad", NULL) && strcmp(ir_attr_string(g, n, "auto_pad", ""), "NOTSET"))
        return exp_fail(x, n, "conv: only explicit pads");
    bool has_b = n->nin > 2 && n->in[2].id;
    uint32_t xv = exp_operand(x, n->in[0]), wv = exp_operand(x, n->in[1]);
    uint32_t bv = has_b ? exp_operand(x, n->in[2]) : 1;
    if (!xv || !wv || !bv)
        return false;
    char *tx = exp_ttype_dup(xt, "f32"), *tw = exp_ttype_dup(wt, "f32"), *ty = exp_ttype_dup(yt, "f32"),
         *m4 = ident_map(4), *it4 = iters_dup(4, 0);
    uint32_t e0 = exp_line(x, "tensor.empty() : %s", ty);
    uint32_t c0 = exp_line(x, "arith.constant 0.0 : f32");
    uint32_t init = exp_line(x, "linalg.fill ins(%%v%u : f32) outs(%%v%u : %s) -> %s", c0, e0, ty, ty);
    int rw[4] = {1, 4, 5, 6}, ry[4] = {0, 1, 2, 3};
    char *mw = map_dup(7, rw, 4), *my = map_dup(7, ry, 4), *it7 = iters_dup(7, 3);
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < 7; i++)
        sb_printf(&b, "      %%i%d = linalg.index %d : index\n", i, i);
    sb_printf(&b,
              "      %%s0 = arith.constant %lld : index\n      %%s1 = arith.constant %lld : index\n"
              "      %%d0 = arith.constant %lld : index\n      %%d1 = arith.constant %lld : index\n"
              "      %%p0 = arith.constant %lld : index\n      %%p1 = arith.constant %lld : index\n"
              "      %%h = arith.constant %lld : index\n      %%w = arith.constant %lld : index\n"
              "      %%mg = arith.constant %lld : index\n      %%cg = arith.constant %lld : index\n"
              "      %%z = arith.constant 0 : index\n",
              (long long)s[0], (long long)s[1], (long long)d[0], (long long)d[1], (long long)p[0],
              (long long)p[1], (long long)xt->dims[2], (long long)xt->dims[3],
              (long long)(M / group), (long long)Cg);
    sb_printf(&b,
              "      %%ya = arith.muli %%i2, %%s0 : index\n      %%yb = arith.muli %%i5, %%d0 : index\n"
              "      %%yc = arith.addi %%ya, %%yb : index\n      %%iy = arith.subi %%yc, %%p0 : index\n"
              "      %%xa = arith.muli %%i3, %%s1 : index\n      %%xb = arith.muli %%i6, %%d1 : index\n"
              "      %%xc = arith.addi %%xa, %%xb : index\n      %%ix = arith.subi %%xc, %%p1 : index\n"
              "      %%b0 = arith.cmpi sge, %%iy, %%z : index\n      %%b1 = arith.cmpi slt, %%iy, %%h : index\n"
              "      %%b2 = arith.cmpi sge, %%ix, %%z : index\n      %%b3 = arith.cmpi slt, %%ix, %%w : index\n"
              "      %%b01 = arith.andi %%b0, %%b1 : i1\n      %%b23 = arith.andi %%b2, %%b3 : i1\n"
              "      %%in = arith.andi %%b01, %%b23 : i1\n"
              "      %%ys = arith.select %%in, %%iy, %%z : index\n      %%xs = arith.select %%in, %%ix, %%z : index\n"
              "      %%gi = arith.divui %%i1, %%mg : index\n      %%gc = arith.muli %%gi, %%cg : index\n"
              "      %%ic = arith.addi %%gc, %%i4 : index\n"
              "      %%xv = tensor.extract %%v%u[%%i0, %%ic, %%ys, %%xs] : %s\n"
              "      %%f0 = arith.constant 0.0 : f32\n"
              "      %%xz = arith.select %%in, %%xv, %%f0 : f32\n"
              "      %%r = math.fma %%xz, %%a0, %%out : f32\n      linalg.yield %%r : f32\n",
              xv, tx);
    ExpIn in = {wv, tw, mw, "f32"};
    uint32_t acc = exp_generic(x, &in, 1, init, ty, my, "f32", it7, b.data);
    if (has_b) {
        int ch = 1;
        char *mb = map_dup(4, &ch, 1), *tb = exp_ttype_dup(exp_vtype(x, n->in[2]), "f32");
        ExpIn in2[2] = {{acc, ty, m4, "f32"}, {bv, tb, mb, "f32"}};
        acc = exp_generic(x, in2, 2, 0, ty, m4, "f32", it4,
                          "      %y = arith.addf %a0, %a1 : f32\n"
                          "      linalg.yield %y : f32\n");
        free(mb), free(tb);
    }
    exp_bind(x, n, acc);
    sb_free(&b);
    free(tx), free(tw), free(ty), free(m4), free(it4), free(mw), free(my), free(it7);
    return true;
}

/* f32 matmul [B...,]M,K x [B...,]K,N (b's batch dimensions equal to a's, or b 2-D): per
 * element one f32 fma chain over k ascending from +0.0, acc = fma(a, b, acc): the reference's
 * and the compiled kernels' operations (docs/numerics.md, "Float matrix products"). The chain is
 * an scf.for inside a parallel linalg.generic (operands read by tensor.extract), not a reduction
 * dimension, which a consumer such as IREE may take for a contraction and tile or reorder; a
 * loop-carried fma chain it has to keep. */
bool
exp_op_matmul(Exp *x, Node *n)
{
    const Type *at = exp_vtype(x, n->in[0]), *bt = exp_vtype(x, n->in[1]),
               *yt = exp_vtype(x, n->out[0]);
    int r = at->rank;
    bool ok = r >= 2 && yt->rank == r && (bt->rank == 2 || bt->rank == r);
    for (int i = 0; ok && bt->rank == r && i + 2 < r; i++)
        ok = at->dims[i] == bt->dims[i];
    if (!ok)
        return exp_fail(x, n, "matmul: only [B...,]M,K x [B...,]K,N (B equal, or b 2-D)");
    uint32_t a = exp_operand(x, n->in[0]), b = exp_operand(x, n->in[1]);
    if (!a || !b)
        return false;
    char *tta = exp_ttype_dup(at, "f32"), *ttb = exp_ttype_dup(bt, "f32"), *tty = exp_ttype_dup(yt, "f32");
    char *my = ident_map(r), *it = iters_dup(r, 0);
    StrBuf body;
    sb_init(&body);
    for (int i = 0; i < r; i++)
        sb_printf(&body, "      %%i%d = linalg.index %d : index\n", i, i);
    sb_printf(&body, "      %%c0 = arith.constant 0 : index\n"
                     "      %%c1 = arith.constant 1 : index\n"
                     "      %%ck = arith.constant %lld : index\n"
                     "      %%f0 = arith.constant 0.0 : f32\n"
                     "      %%s = scf.for %%k = %%c0 to %%ck step %%c1 iter_args(%%acc = %%f0) -> (f32) {\n"
                     "        %%x = tensor.extract %%v%u[",
              (long long)at->dims[r - 1], a);
    for (int i = 0; i < r - 1; i++)
        sb_printf(&body, "%%i%d, ", i);
    sb_printf(&body, "%%k] : %s\n        %%w = tensor.extract %%v%u[", tta, b);
    for (int i = bt->rank == r ? 0 : r - 2; i < r - 2; i++)
        sb_printf(&body, "%%i%d, ", i);
    sb_printf(&body, "%%k, %%i%d] : %s\n"
                     "        %%f = math.fma %%x, %%w, %%acc : f32\n"
                     "        scf.yield %%f : f32\n"
                     "      }\n"
                     "      linalg.yield %%s : f32\n", r - 1, ttb);
    exp_bind(x, n, exp_generic(x, NULL, 0, 0, tty, my, "f32", it, body.data));
    sb_free(&body);
    free(tta), free(ttb), free(tty), free(my), free(it);
    return true;
}

/* wmatmul (docs/ir.md) without blocks: w - zp widened to i32 and converted to f32 (exact), then
 * acc = fma(x, w', acc) over k ascending (the reduction dimension innermost, as the op's
 * definition orders it), y = fma(acc, scale, 0) (+ bias): the compiled kernel's operations.
 * u8 weights travel as i8 shifted by -128 (exp_shift), and so does their zero point, so the
 * difference is unchanged; without a zero point the shift is added back. */
bool
exp_op_wmatmul(Exp *x, Node *n)
{
    const Type *xt0 = exp_vtype(x, n->in[0]), *wt = exp_vtype(x, n->in[1]),
               *yt0 = exp_vtype(x, n->out[0]), *st = exp_vtype(x, n->in[2]);
    bool has_z = n->nin > 3 && n->in[3].id, has_b = n->nin > 4 && n->in[4].id;
    if (xt0->rank < 2 || yt0->rank != xt0->rank || xt0->elem != ET_F32)
        return exp_fail(x, n, "wmatmul: only an f32 input of rank >= 2");
    /* [..., M, K]: the leading dimensions collapse into the rows (and back after) */
    Type x2 = *xt0, y2 = *yt0;
    x2.rank = y2.rank = 2;
    x2.dims[0] = y2.dims[0] = type_numel_unchecked(xt0) / xt0->dims[xt0->rank - 1];
    x2.dims[1] = xt0->dims[xt0->rank - 1];
    y2.dims[1] = yt0->dims[yt0->rank - 1];
    const Type *xt = &x2, *yt = &y2;
    if (st->dims[0] != 1)
        return exp_fail(x, n, "wmatmul: block-wise scales are not mapped");
    if (strcmp(ir_attr_string(x->g, n, "acts", "f32"), "f32") != 0)
        return exp_fail(x, n, "wmatmul: int8 activations (acts=\"i8\", --weight-only=int8-acts) "
                        "are not mapped");
    const char *wet = exp_et(wt->elem);
    if (!wet)
        return exp_fail(x, n, "wmatmul: %s weights have no export", elem_name(wt->elem));
    uint32_t a = exp_operand(x, n->in[0]), w = exp_operand(x, n->in[1]), s = exp_operand(x, n->in[2]);
    uint32_t z = has_z ? exp_operand(x, n->in[3]) : 1, b = has_b ? exp_operand(x, n->in[4]) : 1;
    if (!a || !w || !s || !z || !b)
        return false;
    if (xt0->rank != 2)
        a = exp_reshape(x, a, xt0, 2, x2.dims);
    int rx[2] = {0, 2}, rw[2] = {2, 1}, rz[2] = {-1, 1}, ry[2] = {0, 1}, rs[2] = {-1, 1}, rb[1] = {1};
    char *mx = map_dup(3, rx, 2), *mw = map_dup(3, rw, 2), *mz = map_dup(3, rz, 2);
    char *macc = map_dup(3, ry, 2), *ms = map_dup(2, rs, 2), *mb = map_dup(2, rb, 1);
    char *ttx = exp_ttype_dup(xt, "f32"), *ttw = exp_ttype_dup(wt, wet), *ttz = exp_ttype_dup(st, wet);
    char *tts = exp_ttype_dup(st, "f32"), *tty = exp_ttype_dup(yt, "f32"), *it = iters_dup(3, 1);
    char *my = ident_map(2), *it2 = iters_dup(2, 0), *ttb = NULL;
    uint32_t e = exp_line(x, "tensor.empty() : %s", tty);
    uint32_t c0 = exp_line(x, "arith.constant 0.0 : f32");
    uint32_t init = exp_line(x, "linalg.fill ins(%%v%u : f32) outs(%%v%u : %s) -> %s", c0, e, tty, tty);
    StrBuf body;
    sb_init(&body);
    sb_printf(&body, "      %%wi = arith.extsi %%a1 : %s to i32\n", wet);
    if (has_z)
        sb_printf(&body, "      %%zi = arith.extsi %%a2 : %s to i32\n", wet);
    else
        sb_printf(&body, "      %%zi = arith.constant %d : i32\n", (int)exp_shift(wt->elem));
    sb_puts(&body, "      %d = arith.subi %wi, %zi : i32\n"
                   "      %wf = arith.sitofp %d : i32 to f32\n"
                   "      %r = math.fma %a0, %wf, %out : f32\n"
                   "      linalg.yield %r : f32\n");
    ExpIn in[3] = {{a, ttx, mx, "f32"}, {w, ttw, mw, wet}, {z, ttz, mz, wet}};
    uint32_t acc = exp_generic(x, in, has_z ? 3 : 2, init, tty, macc, "f32", it, body.data);
    ExpIn in2[3] = {{acc, tty, my, "f32"}, {s, tts, ms, "f32"}, {0}};
    if (has_b) {
        ttb = exp_ttype_dup(exp_vtype(x, n->in[4]), "f32");
        in2[2] = (ExpIn){b, ttb, mb, "f32"};
    }
    uint32_t id = exp_generic(x, in2, has_b ? 3 : 2, 0, tty, my, "f32", it2,
                              has_b ? "      %z = arith.constant 0.0 : f32\n"
                                      "      %t = math.fma %a0, %a1, %z : f32\n"
                                      "      %r = arith.addf %t, %a2 : f32\n"
                                      "      linalg.yield %r : f32\n"
                                    : "      %z = arith.constant 0.0 : f32\n"
                                      "      %t = math.fma %a0, %a1, %z : f32\n"
                                      "      linalg.yield %t : f32\n");
    if (yt0->rank != 2)
        id = exp_reshape(x, id, &y2, yt0->rank, yt0->dims);
    exp_bind(x, n, id);
    sb_free(&body);
    free(mx), free(mw), free(mz), free(macc), free(ms), free(mb), free(ttx), free(ttw);
    free(ttz), free(tts), free(tty), free(it), free(my), free(it2), free(ttb);
    return true;
}

/* The 16-lane sum (lib/numerics/fmath.c qn_sum16) of each row of v [O, L] (f32): the rows
 * padded with +0.0 to a multiple of 16 (adding +0.0 to a partial sum that starts at +0.0
 * changes nothing), viewed as [O, M, 16]; partial l accumulates elements l, l + 16, ... in that
 * order (the reduction dimension innermost); then the tree: p[i] + p[i + w] for w = 8, 4, 2,
 * and p[0] + p[1]. The result is [O, 1]. */
static uint32_t
sum16_rows(Exp *x, uint32_t v, int64_t O, int64_t L)
{
    int64_t M = (L + 15) / 16, P = M * 16 - L;
    char tv[96], tp[96], t3[96], t16[96];
    snprintf(tv, sizeof tv, "tensor<%lldx%lldxf32>", (long long)O, (long long)L);
    snprintf(tp, sizeof tp, "tensor<%lldx%lldxf32>", (long long)O, (long long)(M * 16));
    snprintf(t3, sizeof t3, "tensor<%lldx%lldx16xf32>", (long long)O, (long long)M);
    snprintf(t16, sizeof t16, "tensor<%lldx16xf32>", (long long)O);
    uint32_t zero = exp_line(x, "arith.constant 0.0 : f32");
    if (P)
        v = exp_line(x, "tensor.pad %%v%u low[0, 0] high[0, %lld] {\n    ^bb0(%%i: index, %%j: "
                     "index):\n      tensor.yield %%v%u : f32\n    } : %s to %s", v,
                     (long long)P, zero, tv, tp);
    v = exp_line(x, "tensor.expand_shape %%v%u [[0], [1, 2]] output_shape [%lld, %lld, 16] : %s "
                 "into %s", v, (long long)O, (long long)M, tp, t3);
    uint32_t e = exp_line(x, "tensor.empty() : %s", t16);
    uint32_t init = exp_line(x, "linalg.fill ins(%%v%u : f32) outs(%%v%u : %s) -> %s", zero, e,
                             t16, t16);
    int r3[3] = {0, 2, 1}, r2[2] = {0, 1};
    char *m3 = map_dup(3, r3, 3), *m2 = map_dup(3, r2, 2), *it = iters_dup(3, 1);
    ExpIn in = {v, t3, m3, "f32"};
    uint32_t p = exp_generic(x, &in, 1, init, t16, m2, "f32", it,
                             "      %s = arith.addf %out, %a0 : f32\n"
                             "      linalg.yield %s : f32\n");
    free(m3), free(m2), free(it);
    char *mi = ident_map(2), *it2 = iters_dup(2, 0);
    for (int w = 8; w >= 1; w /= 2) {
        char tw[96], tin[96];
        snprintf(tw, sizeof tw, "tensor<%lldx%dxf32>", (long long)O, w);
        snprintf(tin, sizeof tin, "tensor<%lldx%dxf32>", (long long)O, 2 * w);
        uint32_t lo = exp_line(x, "tensor.extract_slice %%v%u[0, 0] [%lld, %d] [1, 1] : %s to %s",
                               p, (long long)O, w, tin, tw);
        uint32_t hi = exp_line(x, "tensor.extract_slice %%v%u[0, %d] [%lld, %d] [1, 1] : %s to %s",
                               p, w, (long long)O, w, tin, tw);
        ExpIn ins[2] = {{lo, tw, mi, "f32"}, {hi, tw, mi, "f32"}};
        p = exp_generic(x, ins, 2, 0, tw, mi, "f32", it2,
                        "      %s = arith.addf %a0, %a1 : f32\n"
                        "      linalg.yield %s : f32\n");
    }
    free(mi), free(it2);
    return p;
}

/* layernorm over the trailing axes from `axis` (the reference's order, lib/ref/ref_elem.c):
 * mean = sum16(x) / len; var = sum16((x - mean)^2) / len; inv = 1 / sqrt(var + eps);
 * y = ((x - mean) * inv) * scale [+ bias], all f32. */
bool
exp_op_layernorm(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    for (uint32_t k = 1; k < n->nout; k++)
        if (n->out[k].id)
            return exp_fail(x, n, "layernorm: the mean and inverse standard deviation results "
                                  "are not exported");
    int64_t a = ir_attr_int(x->g, n, "axis", -1);
    if (a < 0)
        a += xt->rank;
    int64_t O = 1, L = 1;
    for (int d = 0; d < xt->rank; d++)
        *(d < a ? &O : &L) *= xt->dims[d];
    if (O == 0 || L == 0)
        return exp_fail(x, n, "layernorm: empty tensors are not exported");
    bool has_b = n->nin > 2 && n->in[2].id;
    uint32_t v = exp_operand(x, n->in[0]), sc = exp_operand(x, n->in[1]);
    uint32_t bi = has_b ? exp_operand(x, n->in[2]) : 1;
    if (!v || !sc || !bi)
        return false;
    int64_t d2[2] = {O, L}, d1[2] = {O, 1};
    uint32_t x2 = exp_reshape(x, v, xt, 2, d2);
    char t2[96], t1[96];
    snprintf(t2, sizeof t2, "tensor<%lldx%lldxf32>", (long long)O, (long long)L);
    snprintf(t1, sizeof t1, "tensor<%lldx1xf32>", (long long)O);
    int rrow[2] = {0, -1};
    char *mi = ident_map(2), *mrow = map_dup(2, rrow, 2), *it = iters_dup(2, 0);
    StrBuf body;
    sb_init(&body);
    /* mean */
    uint32_t s = sum16_rows(x, x2, O, L);
    exp_f32_const(&body, "len", (float)L);
    sb_puts(&body, "      %m = arith.divf %a0, %len : f32\n      linalg.yield %m : f32\n");
    ExpIn in1 = {s, t1, mi, "f32"};
    uint32_t mean = exp_generic(x, &in1, 1, 0, t1, mi, "f32", it, body.data);
    /* (x - mean)^2 */
    ExpIn in2[2] = {{x2, t2, mi, "f32"}, {mean, t1, mrow, "f32"}};
    uint32_t sq = exp_generic(x, in2, 2, 0, t2, mi, "f32", it,
                              "      %d = arith.subf %a0, %a1 : f32\n"
                              "      %q = arith.mulf %d, %d : f32\n"
                              "      linalg.yield %q : f32\n");
    uint32_t vs = sum16_rows(x, sq, O, L);
    sb_free(&body);
    sb_init(&body);
    exp_f32_const(&body, "len", (float)L);
    exp_f32_const(&body, "eps", ir_attr_float(x->g, n, "epsilon", 1e-5f));
    sb_puts(&body, "      %one = arith.constant 1.0 : f32\n"
                   "      %var = arith.divf %a0, %len : f32\n"
                   "      %ve = arith.addf %var, %eps : f32\n"
                   "      %sd = math.sqrt %ve : f32\n"
                   "      %inv = arith.divf %one, %sd : f32\n"
                   "      linalg.yield %inv : f32\n");
    ExpIn in3 = {vs, t1, mi, "f32"};
    uint32_t inv = exp_generic(x, &in3, 1, 0, t1, mi, "f32", it, body.data);
    sb_free(&body);
    /* y on x's shape: mean and inv as [outer dims, 1, ...] */
    Type rt = *xt;
    rt.q = NULL;
    for (int d = (int)a; d < rt.rank; d++)
        rt.dims[d] = 1;
    Type t1t = type_make(ET_F32, 2, d1);
    uint32_t mr = exp_reshape(x, mean, &t1t, rt.rank, rt.dims);
    uint32_t ir = exp_reshape(x, inv, &t1t, rt.rank, rt.dims);
    StrBuf mx, mm, ms, mb;
    sb_init(&mx), sb_init(&mm), sb_init(&ms), sb_init(&mb);
    exp_bcast_map(&mx, xt, yt);
    exp_bcast_map(&mm, &rt, yt);
    exp_bcast_map(&ms, exp_vtype(x, n->in[1]), yt);
    if (has_b)
        exp_bcast_map(&mb, exp_vtype(x, n->in[2]), yt);
    char *ttx = exp_ttype_dup(xt, "f32"), *ttr = exp_ttype_dup(&rt, "f32"), *tty = exp_ttype_dup(yt, "f32");
    char *tts = exp_ttype_dup(exp_vtype(x, n->in[1]), "f32");
    char *ttb = has_b ? exp_ttype_dup(exp_vtype(x, n->in[2]), "f32") : NULL;
    char *ity = iters_dup(yt->rank, 0);
    ExpIn in4[5] = {{v, ttx, mx.data, "f32"}, {mr, ttr, mm.data, "f32"},
                    {ir, ttr, mm.data, "f32"}, {sc, tts, ms.data, "f32"},
                    {bi, ttb, mb.data, "f32"}};
    exp_bind(x, n, exp_generic(x, in4, has_b ? 5 : 4, 0, tty, mx.data, "f32", ity,
                               has_b ? "      %d = arith.subf %a0, %a1 : f32\n"
                                       "      %t = arith.mulf %d, %a2 : f32\n"
                                       "      %u = arith.mulf %t, %a3 : f32\n"
                                       "      %r = arith.addf %u, %a4 : f32\n"
                                       "      linalg.yield %r : f32\n"
                                     : "      %d = arith.subf %a0, %a1 : f32\n"
                                       "      %t = arith.mulf %d, %a2 : f32\n"
                                       "      %u = arith.mulf %t, %a3 : f32\n"
                                       "      linalg.yield %u : f32\n"));
    sb_free(&mx), sb_free(&mm), sb_free(&ms), sb_free(&mb);
    free(ttx), free(ttr), free(tty), free(tts), free(ttb), free(ity);
    free(mi), free(mrow), free(it);
    return true;
}

/* f32 exp: qn_expf per element */
bool
exp_op_exp(Exp *x, Node *n)
{
    const Type *yt = exp_vtype(x, n->out[0]);
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    char *tt = exp_ttype_dup(yt, "f32"), *mi = ident_map(yt->rank), *it = iters_dup(yt->rank, 0);
    StrBuf body;
    sb_init(&body);
    exp_expf_body(&body, "a0", "x");
    sb_puts(&body, "      linalg.yield %xe : f32\n");
    ExpIn in = {v, tt, mi, "f32"};
    exp_bind(x, n, exp_generic(x, &in, 1, 0, tt, mi, "f32", it, body.data));
    sb_free(&body);
    free(tt), free(mi), free(it);
    return true;
}

/* f32 softmax (the reference's order): along the axis, mx = the largest element (NaNs
 * skipped: `x > mx ? x : mx` from -inf), e = qn_expf(x - mx), s = the 16-lane sum, y = e / s.
 * An axis with trailing dimensions other than 1 is transposed to the end and back (the rows
 * keep their element order). */
bool
exp_op_softmax(Exp *x, Node *n)
{
    const Type *xt0 = exp_vtype(x, n->in[0]);
    int64_t a = ir_attr_int(x->g, n, "axis", -1);
    if (a < 0)
        a += xt0->rank;
    int64_t O = 1, L = xt0->dims[a];
    bool inner = false;
    for (int d = 0; d < xt0->rank; d++) {
        if (d != a)
            O *= xt0->dims[d];
        inner |= d > a && xt0->dims[d] != 1;
    }
    if (O == 0 || L == 0)
        return exp_fail(x, n, "softmax: empty tensors are not exported");
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    int64_t perm[IR_MAX_RANK], inv_perm[IR_MAX_RANK];
    Type tp = *xt0;
    if (inner) {
        int k = 0;
        for (int d = 0; d < xt0->rank; d++)
            if (d != a)
                perm[k++] = d;
        perm[k] = a;
        for (int d = 0; d < xt0->rank; d++)
            inv_perm[perm[d]] = d;
        v = exp_transpose(x, v, xt0, perm, &tp);
    }
    const Type *xt = &tp;
    int64_t d2[2] = {O, L};
    uint32_t x2 = exp_reshape(x, v, xt, 2, d2);
    char t2[96], t1[96];
    snprintf(t2, sizeof t2, "tensor<%lldx%lldxf32>", (long long)O, (long long)L);
    snprintf(t1, sizeof t1, "tensor<%lldx1xf32>", (long long)O);
    int rrow[2] = {0, -1};
    char *mi = ident_map(2), *mrow = map_dup(2, rrow, 2), *it = iters_dup(2, 0);
    char *itr = iters_dup(2, 1);
    uint32_t e0 = exp_line(x, "tensor.empty() : %s", t1);
    uint32_t ninf = exp_line(x, "arith.constant 0xFF800000 : f32");
    uint32_t init = exp_line(x, "linalg.fill ins(%%v%u : f32) outs(%%v%u : %s) -> %s", ninf, e0,
                             t1, t1);
    ExpIn in1 = {x2, t2, mi, "f32"};
    uint32_t mx = exp_generic(x, &in1, 1, init, t1, mrow, "f32", itr,
                              "      %c = arith.cmpf ogt, %a0, %out : f32\n"
                              "      %m = arith.select %c, %a0, %out : f32\n"
                              "      linalg.yield %m : f32\n");
    StrBuf body;
    sb_init(&body);
    sb_puts(&body, "      %d = arith.subf %a0, %a1 : f32\n");
    exp_expf_body(&body, "d", "x");
    sb_puts(&body, "      linalg.yield %xe : f32\n");
    ExpIn in2[2] = {{x2, t2, mi, "f32"}, {mx, t1, mrow, "f32"}};
    uint32_t e = exp_generic(x, in2, 2, 0, t2, mi, "f32", it, body.data);
    sb_free(&body);
    uint32_t s = sum16_rows(x, e, O, L);
    ExpIn in3[2] = {{e, t2, mi, "f32"}, {s, t1, mrow, "f32"}};
    uint32_t y2 = exp_generic(x, in3, 2, 0, t2, mi, "f32", it,
                              "      %q = arith.divf %a0, %a1 : f32\n"
                              "      linalg.yield %q : f32\n");
    Type t2t = type_make(ET_F32, 2, d2);
    uint32_t y = exp_reshape(x, y2, &t2t, xt->rank, xt->dims);
    if (inner) {
        Type back;
        y = exp_transpose(x, y, xt, inv_perm, &back);
    }
    exp_bind(x, n, y);
    free(mi), free(mrow), free(it), free(itr);
    return true;
}

/* f32 reduce_mean (the reference's order): the reduced axes moved last (the kept ones keep
 * their order, so each output's elements stay in input order), the 16-lane sum of each row,
 * then / (float)count in f32. */
bool
exp_op_reduce_mean(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    int64_t axes[IR_MAX_RANK];
    int k = ir_attr_ints(x->g, n, "axes", axes, IR_MAX_RANK);
    bool red[IR_MAX_RANK] = {0};
    for (int d = 0; d < xt->rank; d++)
        red[d] = k < 0;
    for (int i = 0; i < k; i++)
        red[axes[i] < 0 ? axes[i] + xt->rank : axes[i]] = true;
    int64_t perm[IR_MAX_RANK], O = 1, L = 1;
    int np = 0;
    bool moved = false;
    for (int d = 0; d < xt->rank; d++)
        if (!red[d])
            perm[np++] = d, O *= xt->dims[d];
    for (int d = 0; d < xt->rank; d++)
        if (red[d])
            moved |= np != d, perm[np++] = d, L *= xt->dims[d];
    if (O == 0 || L == 0)
        return exp_fail(x, n, "reduce_mean: empty tensors are not exported");
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    Type tp = *xt;
    if (moved)
        v = exp_transpose(x, v, xt, perm, &tp);
    int64_t d2[2] = {O, L};
    uint32_t s = sum16_rows(x, exp_reshape(x, v, &tp, 2, d2), O, L);
    char t1[96];
    snprintf(t1, sizeof t1, "tensor<%lldx1xf32>", (long long)O);
    char *mi = ident_map(2), *it = iters_dup(2, 0);
    StrBuf body;
    sb_init(&body);
    exp_f32_const(&body, "cnt", (float)L);
    sb_puts(&body, "      %m = arith.divf %a0, %cnt : f32\n      linalg.yield %m : f32\n");
    ExpIn in = {s, t1, mi, "f32"};
    uint32_t mean = exp_generic(x, &in, 1, 0, t1, mi, "f32", it, body.data);
    int64_t d1[2] = {O, 1};
    Type t1t = type_make(ET_F32, 2, d1);
    exp_bind(x, n, exp_reshape(x, mean, &t1t, yt->rank, yt->dims));
    sb_free(&body);
    free(mi), free(it);
    return true;
}
