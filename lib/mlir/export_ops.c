/* export_ops.c: the MLIR form of each qdqc op (see export.c for the conventions:
 * logical NCHW layout, u8 as shifted i8). Integer requantization is tosa.rescale with
 * the multipliers and shifts of --requant=fixed (lib/numerics), i.e. its arithmetic exactly,
 * except windowed average pooling (tosa.avg_pool2d rounds once more; docs/mlir.md). quantize and
 * dequantize, which tosa has no exact form for, are linalg.generic over arith/math ops with
 * qdqc's exact definition (f32 division, round half to even, saturation). */
#include "export.h"

#include "numerics/elementwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int64_t k_to_nhwc[4] = {0, 2, 3, 1};
static const int64_t k_to_nchw[4] = {0, 3, 1, 2};

static void
maps(StrBuf *b, int rank)
{
    sb_puts(b, "affine_map<(");
    for (int i = 0; i < rank; i++)
        sb_printf(b, i ? ", d%d" : "d%d", i);
    sb_puts(b, ") -> (");
    for (int i = 0; i < rank; i++)
        sb_printf(b, i ? ", d%d" : "d%d", i);
    sb_puts(b, ")>");
}

/* linalg.generic over one operand; `body` uses %in and yields a value of out_et. */
static uint32_t
generic(Exp *x, uint32_t v, const Type *t, const char *in_et, const char *out_et,
        const char *body)
{
    uint32_t e = exp_line(x, "tensor.empty() : %s", exp_tt(x, 0, t->rank, t->dims, out_et));
    StrBuf m, it;
    sb_init(&m);
    sb_init(&it);
    maps(&m, t->rank);
    for (int i = 0; i < t->rank; i++)
        sb_puts(&it, i ? ", \"parallel\"" : "\"parallel\"");
    uint32_t id = exp_line(x, "linalg.generic {indexing_maps = [%s, %s], iterator_types = [%s]} "
                           "ins(%%v%u : %s) outs(%%v%u : %s) {\n    ^bb0(%%in: %s, %%out: %s):\n"
                           "%s    } -> %s", m.data, m.data, it.data ? it.data : "", v,
                           exp_tt(x, 1, t->rank, t->dims, in_et), e,
                           exp_tt(x, 2, t->rank, t->dims, out_et), in_et, out_et, body,
                           exp_tt(x, 3, t->rank, t->dims, out_et));
    sb_free(&m);
    sb_free(&it);
    return id;
}

/* quantize per axis: the per-tensor body below with the scale and zero point of the channel
 * (constants read through a map onto the axis), the clamp bounds qmin/qmax - zp[c] computed in
 * i32 and converted exactly. */
static bool
quantize_axis(Exp *x, Node *n, uint32_t v, const Type *xt, const Type *yt)
{
    const QParams *q = yt->q;
    int64_t c = q->n, sh = exp_shift(yt->elem);
    float *sc = xcalloc((size_t)c, sizeof *sc);
    int64_t *z = xcalloc((size_t)c, sizeof *z);
    for (int64_t i = 0; i < c; i++) {
        sc[i] = q->scale[i];
        z[i] = q->zp[i] + sh;
    }
    uint32_t sv = exp_const_f(x, 1, &c, sc, (size_t)c), zv = exp_const_i(x, "i32", 1, &c, z, (size_t)c);
    free(sc);
    free(z);
    StrBuf mi, ma, it, tx, ts, tz, ty, body;
    sb_init(&mi), sb_init(&ma), sb_init(&it), sb_init(&tx), sb_init(&ts), sb_init(&tz);
    sb_init(&ty), sb_init(&body);
    int res[IR_MAX_RANK], ax = q->axis;
    for (int i = 0; i < xt->rank; i++) {
        res[i] = i;
        sb_puts(&it, i ? ", \"parallel\"" : "\"parallel\"");
    }
    exp_map(&mi, xt->rank, res, xt->rank);
    exp_map(&ma, xt->rank, &ax, 1);
    exp_ttype(&tx, xt->rank, xt->dims, "f32");
    exp_ttype(&ts, 1, &c, "f32");
    exp_ttype(&tz, 1, &c, "i32");
    const char *et = exp_et(yt->elem);
    exp_ttype(&ty, xt->rank, xt->dims, et);
    sb_printf(&body,
              "      %%qmin = arith.constant %lld : i32\n"
              "      %%qmax = arith.constant %lld : i32\n"
              "      %%zero = arith.constant 0.0 : f32\n"
              "      %%loi = arith.subi %%qmin, %%a2 : i32\n"
              "      %%hii = arith.subi %%qmax, %%a2 : i32\n"
              "      %%lo = arith.sitofp %%loi : i32 to f32\n"
              "      %%hi = arith.sitofp %%hii : i32 to f32\n"
              "      %%q = arith.divf %%a0, %%a1 : f32\n"
              "      %%r = math.roundeven %%q : f32\n"
              "      %%c0 = arith.maxnumf %%r, %%lo : f32\n"
              "      %%c1 = arith.minnumf %%c0, %%hi : f32\n"
              "      %%nan = arith.cmpf uno, %%r, %%r : f32\n"
              "      %%c2 = arith.select %%nan, %%zero, %%c1 : f32\n"
              "      %%i = arith.fptosi %%c2 : f32 to i32\n"
              "      %%y = arith.addi %%i, %%a2 : i32\n"
              "      %%t = arith.trunci %%y : i32 to %s\n"
              "      linalg.yield %%t : %s\n",
              (long long)(q->qmin + sh), (long long)(q->qmax + sh), et, et);
    ExpIn in[3] = {{v, tx.data, mi.data, "f32"}, {sv, ts.data, ma.data, "f32"},
                   {zv, tz.data, ma.data, "i32"}};
    exp_bind(x, n, exp_generic(x, in, 3, 0, ty.data, mi.data, et, it.data, body.data));
    sb_free(&mi), sb_free(&ma), sb_free(&it), sb_free(&tx), sb_free(&ts), sb_free(&tz);
    sb_free(&ty), sb_free(&body);
    return true;
}

/* Blocked quantize / dequantize (ONNX 21 block_size) with constant scale and zero point
 * operands: the per-axis bodies with the parameters read from constants of the scale's shape
 * through a map that divides the blocked index by the block size (d_axis floordiv B). Run-time
 * parameters are refused. */
static bool
qdq_blocked(Exp *x, Node *n)
{
    bool isq = n->op == OP_QUANTIZE;
    const char *name = op_info(n->op)->name;
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    const Type *it = isq ? yt : xt; /* the integer side */
    const Type *st = exp_vtype(x, n->in[1]);
    bool has_zp = n->nin > 2 && n->in[2].id;
    const Type *zt = has_zp ? exp_vtype(x, n->in[2]) : NULL;
    int64_t block = ir_attr_int(x->g, n, "block_size", 0);
    const Tensor *sc = ir_const_of(x->g, n->in[1]);
    const Tensor *zc = has_zp ? ir_const_of(x->g, n->in[2]) : NULL;
    QdqLayout l;
    char err[200];
    if (block <= 0 || !sc || (has_zp && !zc))
        return exp_fail(x, n, "%s: scale and zero point operands (run-time parameters) are "
                        "not exported: only the node's own constant ones or constant blocked "
                        "ones", name);
    if (!ir_qdq_layout(xt, st, zt, ir_attr_int(x->g, n, "axis", 1), block, &l, err, sizeof err))
        return exp_fail(x, n, "%s: %s", name, err);
    const char *et = exp_et(it->elem);
    if ((isq && xt->elem != ET_F32) || (!isq && yt->elem != ET_F32) || !et ||
        !elem_is_quant_storage(it->elem) || it->elem == ET_I32)
        return exp_fail(x, n, "%s: blocked: only f32 <-> i8/u8/i16/u16/i4/u4", name);
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    int64_t sh = exp_shift(it->elem), lo, hi;
    elem_range(it->elem, &lo, &hi);
    size_t np = l.nparams ? l.nparams : 1;
    float *sv = xcalloc(np, sizeof *sv);
    int64_t *zv = xcalloc(np, sizeof *zv);
    for (size_t i = 0; i < l.nparams; i++) {
        sv[i] = (float)tensor_get_f(sc, i);
        zv[i] = (zc ? tensor_get_i(zc, i) : 0) + sh;
    }
    const char *zet = isq ? "i32" : "i64";
    uint32_t svid = exp_const_f(x, st->rank, st->dims, sv, l.nparams);
    uint32_t zvid = exp_const_i(x, zet, st->rank, st->dims, zv, l.nparams);
    free(sv);
    free(zv);
    StrBuf mi, mp, its, tx, ts, tz, ty, body;
    sb_init(&mi), sb_init(&mp), sb_init(&its), sb_init(&tx), sb_init(&ts), sb_init(&tz);
    sb_init(&ty), sb_init(&body);
    int res[IR_MAX_RANK];
    for (int i = 0; i < xt->rank; i++) {
        res[i] = i;
        sb_puts(&its, i ? ", \"parallel\"" : "\"parallel\"");
    }
    exp_map(&mi, xt->rank, res, xt->rank);
    sb_puts(&mp, "affine_map<(");
    for (int i = 0; i < xt->rank; i++)
        sb_printf(&mp, i ? ", d%d" : "d%d", i);
    sb_puts(&mp, ") -> (");
    for (int i = 0; i < xt->rank; i++) {
        sb_printf(&mp, i ? ", d%d" : "d%d", i);
        if (i == l.axis)
            sb_printf(&mp, " floordiv %lld", (long long)block);
    }
    sb_puts(&mp, ")>");
    exp_ttype(&tx, xt->rank, xt->dims, isq ? "f32" : et);
    exp_ttype(&ts, st->rank, st->dims, "f32");
    exp_ttype(&tz, st->rank, st->dims, zet);
    exp_ttype(&ty, yt->rank, yt->dims, isq ? et : "f32");
    if (isq)
        sb_printf(&body,
                  "      %%qmin = arith.constant %lld : i32\n"
                  "      %%qmax = arith.constant %lld : i32\n"
                  "      %%zero = arith.constant 0.0 : f32\n"
                  "      %%loi = arith.subi %%qmin, %%a2 : i32\n"
                  "      %%hii = arith.subi %%qmax, %%a2 : i32\n"
                  "      %%lo = arith.sitofp %%loi : i32 to f32\n"
                  "      %%hi = arith.sitofp %%hii : i32 to f32\n"
                  "      %%q = arith.divf %%a0, %%a1 : f32\n"
                  "      %%r = math.roundeven %%q : f32\n"
                  "      %%c0 = arith.maxnumf %%r, %%lo : f32\n"
                  "      %%c1 = arith.minnumf %%c0, %%hi : f32\n"
                  "      %%nan = arith.cmpf uno, %%r, %%r : f32\n"
                  "      %%c2 = arith.select %%nan, %%zero, %%c1 : f32\n"
                  "      %%i = arith.fptosi %%c2 : f32 to i32\n"
                  "      %%y = arith.addi %%i, %%a2 : i32\n"
                  "      %%t = arith.trunci %%y : i32 to %s\n"
                  "      linalg.yield %%t : %s\n",
                  (long long)(lo + sh), (long long)(hi + sh), et, et);
    else
        sb_printf(&body,
                  "      %%w = arith.extsi %%a0 : %s to i64\n"
                  "      %%b = arith.subi %%w, %%a2 : i64\n"
                  "      %%c = arith.sitofp %%b : i64 to f32\n"
                  "      %%m = arith.mulf %%c, %%a1 : f32\n"
                  "      linalg.yield %%m : f32\n", et);
    ExpIn in[3] = {{v, tx.data, mi.data, isq ? "f32" : et}, {svid, ts.data, mp.data, "f32"},
                   {zvid, tz.data, mp.data, zet}};
    exp_bind(x, n, exp_generic(x, in, 3, 0, ty.data, mi.data, isq ? et : "f32", its.data,
                               body.data));
    sb_free(&mi), sb_free(&mp), sb_free(&its), sb_free(&tx), sb_free(&ts), sb_free(&tz);
    sb_free(&ty), sb_free(&body);
    return true;
}

/* quantize (f32 -> i8/u8/i16/u16/i4/u4, per tensor): sat(rne(x / s) + zp); NaN -> zp. Unsigned
 * storage is computed shifted into its signless type (exp_shift). */
bool
exp_op_quantize(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    bool storage = yt->elem == ET_I8 || yt->elem == ET_U8 || yt->elem == ET_I16 ||
                   yt->elem == ET_U16 || yt->elem == ET_I4 || yt->elem == ET_U4;
    bool axis = yt->q && yt->q->n > 1 && yt->q->axis >= 0 && yt->q->axis < yt->rank && storage;
    if (n->nin > 1 && n->in[1].id)
        return qdq_blocked(x, n);
    if (xt->elem != ET_F32 || !yt->q || (!axis && !(storage && yt->q->n == 1)))
        return exp_fail(x, n, "quantize: only f32 -> i8/u8/i16/u16/i4/u4 with static "
                        "parameters");
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    if (axis)
        return quantize_axis(x, n, v, xt, yt);
    int64_t zp = zp_of(yt), lo = yt->q->qmin + exp_shift(yt->elem) - zp,
            hi = yt->q->qmax + exp_shift(yt->elem) - zp;
    char body[1024];
    snprintf(body, sizeof body,
             "      %%s = arith.constant %.9e : f32\n"
             "      %%lo = arith.constant %lld.0 : f32\n"
             "      %%hi = arith.constant %lld.0 : f32\n"
             "      %%zero = arith.constant 0.0 : f32\n"
             "      %%zp = arith.constant %lld : i32\n"
             "      %%q = arith.divf %%in, %%s : f32\n"
             "      %%r = math.roundeven %%q : f32\n"
             "      %%c0 = arith.maxnumf %%r, %%lo : f32\n"
             "      %%c1 = arith.minnumf %%c0, %%hi : f32\n"
             "      %%nan = arith.cmpf uno, %%r, %%r : f32\n"
             "      %%c2 = arith.select %%nan, %%zero, %%c1 : f32\n"
             "      %%i = arith.fptosi %%c2 : f32 to i32\n"
             "      %%y = arith.addi %%i, %%zp : i32\n"
             "      %%t = arith.trunci %%y : i32 to %s\n"
             "      linalg.yield %%t : %s\n",
             (double)yt->q->scale[0], (long long)lo, (long long)hi, (long long)zp,
             exp_et(yt->elem), exp_et(yt->elem));
    exp_bind(x, n, generic(x, v, xt, "f32", exp_et(yt->elem), body));
    return true;
}

/* dequantize per axis: (f32)(q - zp[c]) * s[c], c the index on q's axis; the scales and zero
 * points are constants read through a map onto that axis. */
static bool
dequantize_axis(Exp *x, Node *n, uint32_t v, const Type *xt, const char *et, const QParams *q)
{
    int64_t c = q->n;
    float *s = xcalloc((size_t)c, sizeof *s);
    int64_t *z = xcalloc((size_t)c, sizeof *z);
    for (int64_t i = 0; i < c; i++) {
        s[i] = q->scale[i];
        z[i] = q->zp[i] + exp_shift(xt->elem);
    }
    uint32_t sv = exp_const_f(x, 1, &c, s, (size_t)c), zv = exp_const_i(x, "i64", 1, &c, z, (size_t)c);
    free(s);
    free(z);
    StrBuf mi, ma, it, tq, ts, tz, ty;
    sb_init(&mi), sb_init(&ma), sb_init(&it), sb_init(&tq), sb_init(&ts), sb_init(&tz), sb_init(&ty);
    int res[IR_MAX_RANK], ax = q->axis;
    for (int i = 0; i < xt->rank; i++) {
        res[i] = i;
        sb_puts(&it, i ? ", \"parallel\"" : "\"parallel\"");
    }
    exp_map(&mi, xt->rank, res, xt->rank);
    exp_map(&ma, xt->rank, &ax, 1);
    exp_ttype(&tq, xt->rank, xt->dims, et);
    exp_ttype(&ts, 1, &c, "f32");
    exp_ttype(&tz, 1, &c, "i64");
    exp_ttype(&ty, xt->rank, xt->dims, "f32");
    ExpIn in[3] = {{v, tq.data, mi.data, et}, {sv, ts.data, ma.data, "f32"}, {zv, tz.data, ma.data, "i64"}};
    StrBuf bb; /* q widened to i64 (as the per-tensor form), minus zp, times the scale */
    sb_init(&bb);
    if (strcmp(et, "i64"))
        sb_printf(&bb, "      %%w = arith.extsi %%a0 : %s to i64\n", et);
    sb_printf(&bb, "      %%b = arith.subi %s, %%a2 : i64\n"
                   "      %%c = arith.sitofp %%b : i64 to f32\n"
                   "      %%m = arith.mulf %%c, %%a1 : f32\n"
                   "      linalg.yield %%m : f32\n", strcmp(et, "i64") ? "%w" : "%a0");
    exp_bind(x, n, exp_generic(x, in, 3, 0, ty.data, mi.data, "f32", it.data, bb.data));
    sb_free(&bb);
    sb_free(&mi), sb_free(&ma), sb_free(&it), sb_free(&tq), sb_free(&ts), sb_free(&tz), sb_free(&ty);
    return true;
}

/* dequantize (integer -> f32, per tensor): (f32)(q - zp) * s, the subtraction in i64. */
bool
exp_op_dequantize(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    const char *et = exp_et(xt->elem);
    const QParams *q = n->q ? n->q : xt->q; /* the node's own parameters first */
    if (n->nin > 1 && n->in[1].id)
        return qdq_blocked(x, n);
    if (yt->elem != ET_F32 || !q || !et || !strcmp(et, "i1") ||
        elem_is_float(xt->elem) || (q->n != 1 && (q->axis < 0 || q->axis >= xt->rank)))
        return exp_fail(x, n, "dequantize: only integer -> f32 with static parameters");
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    if (q->n != 1)
        return dequantize_axis(x, n, v, xt, et, q);
    char ext[64] = "";
    if (strcmp(et, "i64"))
        snprintf(ext, sizeof ext, "arith.extsi %%in : %s to i64", et);
    char body[1024];
    snprintf(body, sizeof body,
             "      %%s = arith.constant %.9e : f32\n"
             "      %%zp = arith.constant %lld : i64\n"
             "      %%a = %s\n"
             "      %%b = arith.subi %%a, %%zp : i64\n"
             "      %%c = arith.sitofp %%b : i64 to f32\n"
             "      %%m = arith.mulf %%c, %%s : f32\n"
             "      linalg.yield %%m : f32\n",
             (double)q->scale[0], (long long)(q->zp[0] + exp_shift(xt->elem)),
             *ext ? ext : "arith.addi %in, %zp : i64");
    if (!*ext) /* i64 input: %a = in + 0 would be wrong; subtract directly */
        snprintf(body, sizeof body,
                 "      %%s = arith.constant %.9e : f32\n"
                 "      %%zp = arith.constant %lld : i64\n"
                 "      %%b = arith.subi %%in, %%zp : i64\n"
                 "      %%c = arith.sitofp %%b : i64 to f32\n"
                 "      %%m = arith.mulf %%c, %%s : f32\n"
                 "      linalg.yield %%m : f32\n",
                 (double)q->scale[0], (long long)(q->zp[0] + exp_shift(xt->elem)));
    exp_bind(x, n, generic(x, v, xt, et, "f32", body));
    return true;
}

/* Window attributes of conv/pool nodes, with the bottom/right padding reduced so that tosa's
 * "wholly divisible by stride" rule holds (the removed rows are never read); when the padding
 * is too small for that, *crop says how many trailing input rows/columns to slice away. */
typedef struct Win {
    int64_t k[2], s[2], d[2], pb[2], pe[2], crop[2];
} Win;

static bool
window(Exp *x, Node *n, const Type *xt, const int64_t *k, const Type *yt, Win *w)
{
    int64_t p[4] = {0, 0, 0, 0};
    w->s[0] = w->s[1] = w->d[0] = w->d[1] = 1;
    ir_attr_ints(x->g, n, "strides", w->s, 2);
    ir_attr_ints(x->g, n, "dilations", w->d, 2);
    ir_attr_ints(x->g, n, "pads", p, 4);
    if (ir_attr_int(x->g, n, "ceil_mode", 0))
        return exp_fail(x, n, "%s: ceil_mode=1 has no tosa form", op_info(n->op)->name);
    for (int i = 0; i < 2; i++) {
        w->k[i] = k[i];
        w->pb[i] = p[i];
        w->pe[i] = p[i + 2];
        w->crop[i] = 0;
        int64_t num = xt->dims[2 + i] - 1 + w->pb[i] + w->pe[i] - (k[i] - 1) * w->d[i];
        int64_t rem = num % w->s[i];
        if (w->pe[i] >= rem) {
            w->pe[i] -= rem;
        } else {
            w->crop[i] = rem - w->pe[i];
            w->pe[i] = 0;
        }
        if ((num - rem) / w->s[i] + 1 != yt->dims[2 + i])
            return exp_fail(x, n, "%s: output size does not follow the window attributes",
                            op_info(n->op)->name);
    }
    return true;
}

/* NCHW value -> NHWC (cropped as the window asks); *t becomes the NHWC type. */
static uint32_t
to_nhwc(Exp *x, uint32_t v, const Type *xt, const Win *w, Type *t)
{
    uint32_t id = exp_transpose(x, v, xt, k_to_nhwc, t);
    t->elem = xt->elem;
    if (w->crop[0] || w->crop[1]) {
        Type c = *t;
        c.dims[1] -= w->crop[0];
        c.dims[2] -= w->crop[1];
        uint32_t s0 = exp_line(x, "tosa.const_shape {values = dense<[0, 0, 0, 0]> : "
                               "tensor<4xindex>} : () -> !tosa.shape<4>");
        uint32_t s1 = exp_line(x, "tosa.const_shape {values = dense<[%lld, %lld, %lld, %lld]> "
                               ": tensor<4xindex>} : () -> !tosa.shape<4>", (long long)c.dims[0],
                               (long long)c.dims[1], (long long)c.dims[2], (long long)c.dims[3]);
        id = exp_line(x, "tosa.slice %%v%u, %%v%u, %%v%u : (%s, !tosa.shape<4>, "
                      "!tosa.shape<4>) -> %s", id, s0, s1, EXP_TT(x, 0, t), EXP_TT(x, 1, &c));
        *t = c;
    }
    return id;
}

static const char *
win_attrs(char *buf, size_t cap, const Win *w, bool kernel, bool dil)
{
    int k = 0;
    if (kernel)
        k += snprintf(buf + k, cap - (size_t)k, "kernel = array<i64: %lld, %lld>, ",
                      (long long)w->k[0], (long long)w->k[1]);
    k += snprintf(buf + k, cap - (size_t)k, "pad = array<i64: %lld, %lld, %lld, %lld>, "
                  "stride = array<i64: %lld, %lld>", (long long)w->pb[0], (long long)w->pe[0],
                  (long long)w->pb[1], (long long)w->pe[1], (long long)w->s[0],
                  (long long)w->s[1]);
    if (dil)
        snprintf(buf + k, cap - (size_t)k, ", dilation = array<i64: %lld, %lld>",
                 (long long)w->d[0], (long long)w->d[1]);
    return buf;
}

/* Requantize the i32 accumulator acc (type at, channels on the last axis) into n's result:
 * quantized -> rescale + clamp; i32 -> as is; f32 -> (f32)acc * (sx * sw[c]). */
static uint32_t
epilogue(Exp *x, Node *n, uint32_t acc, const Type *at, const Type *xt, const QParams *wq,
         int64_t nch)
{
    const Type *yt = exp_vtype(x, n->out[0]);
    Type t = *at;
    if (yt->elem == ET_I32 && !yt->q)
        return acc;
    if (yt->elem == ET_F32 && !yt->q) {
        t.elem = ET_F32;
        uint32_t c = exp_line(x, "tosa.cast %%v%u : (%s) -> %s", acc, EXP_TT(x, 0, at),
                              EXP_TT(x, 1, &t));
        float *sc = xcalloc((size_t)nch, sizeof *sc);
        for (int64_t m = 0; m < nch; m++)
            sc[m] = xt->q->scale[0] * wq->scale[wq->n == 1 ? 0 : m % wq->n];
        int64_t dims[IR_MAX_RANK];
        for (int i = 0; i < at->rank; i++)
            dims[i] = i == at->rank - 1 ? nch : 1;
        uint32_t s = exp_const_f(x, at->rank, dims, sc, (size_t)nch);
        free(sc);
        uint32_t sh = exp_zp(x, "i8", 0);
        return exp_line(x, "tosa.mul %%v%u, %%v%u, %%v%u : (%s, %s, tensor<1xi8>) -> %s", c, s,
                        sh, EXP_TT(x, 0, &t), exp_tt(x, 1, at->rank, dims, "f32"),
                        EXP_TT(x, 2, &t));
    }
    if (!per_tensor(yt)) {
        exp_fail(x, n, "%s: the result must be i32, f32 or per-tensor i8/u8",
                 op_info(n->op)->name);
        return 0;
    }
    bool per_ch = wq->n > 1;
    int64_t k = per_ch ? nch : 1;
    QnFixed *f = xcalloc((size_t)k, sizeof *f);
    float sx = xt->q->scale[0], sy = yt->q->scale[0];
    int64_t bad = qn_requant_channels(sx, wq->scale, wq->n, sy, k, NULL, f);
    bool ok = true;
    if (bad >= 0) {
        float sw = wq->scale[bad % wq->n];
        ok = exp_fixed(x, n, (double)sx * (double)sw / (double)sy, &f[bad]); /* the message */
    }
    uint32_t id = 0;
    if (ok) {
        id = exp_rescale(x, acc, at, "i32", "i8", k, f, 0, zp_of(yt), false, false);
        t.elem = yt->elem;
        int64_t lo, hi;
        out_range(x, n, yt, &lo, &hi);
        id = exp_clamp(x, id, &t, lo, hi);
    }
    free(f);
    return id;
}

/* The common weight zero point of w (tosa has one); false if the channels differ. */
static bool
weight_zp(Exp *x, Node *n, const Type *wt, int64_t *zp)
{
    for (uint32_t i = 1; i < wt->q->n; i++)
        if (wt->q->zp[i] != wt->q->zp[0])
            return exp_fail(x, n, "%s: per-channel weight zero points that differ have no tosa "
                            "form", op_info(n->op)->name);
    *zp = wt->q->zp[0] + exp_shift(wt->elem);
    return true;
}

/* Per-channel weight zero points zw[m] that differ (tosa.conv2d takes one): the convolution
 * ran with weight zero point 0, so acc[m] = sum (x - zx) * w[m] + b[m]; subtract zw[m] * S,
 * S = sum (x - zx) over the window (all input channels; the channel itself for depthwise),
 * from a second convolution with all-one weights. Integer arithmetic: exact. */
static uint32_t
weight_zp_correction(Exp *x, uint32_t acc, const Type *at, uint32_t xh, const Type *xn,
                     int64_t xzp, const Win *win, const Type *wt, int64_t m0, bool dw)
{
    int64_t M = at->dims[3], C = xn->dims[3], one = 1, zero = 0;
    int64_t sc = dw ? C : 1; /* channels of S */
    int64_t od[4] = {dw ? win->k[0] : 1, dw ? win->k[1] : win->k[0], dw ? C : win->k[1],
                     dw ? 1 : C};
    uint32_t ones = exp_const_i(x, "i8", 4, od, &one, 1), bias = exp_const_i(x, "i32", 1, &sc, &zero, 1);
    uint32_t xz = exp_zp(x, "i8", xzp), wz = exp_zp(x, "i8", 0);
    Type st = *at;
    st.dims[3] = sc;
    char wa[256];
    uint32_t s = exp_line(x, "tosa.%s %%v%u, %%v%u, %%v%u, %%v%u, %%v%u {acc_type = i32, %s} : "
                          "(%s, %s, tensor<%lldxi32>, tensor<1xi8>, tensor<1xi8>) -> %s",
                          dw ? "depthwise_conv2d" : "conv2d", xh, ones, bias, xz, wz,
                          win_attrs(wa, sizeof wa, win, false, true), EXP_TT(x, 0, xn),
                          exp_tt(x, 1, 4, od, "i8"), (long long)sc, EXP_TT(x, 2, &st));
    int64_t *zv = xcalloc((size_t)M, sizeof *zv), zd[4] = {1, 1, 1, M};
    for (int64_t m = 0; m < M; m++)
        zv[m] = wt->q->zp[(m0 + m) % wt->q->n] + exp_shift(wt->elem);
    uint32_t z = exp_const_i(x, "i32", 4, zd, zv, (size_t)M);
    free(zv);
    uint32_t sh = exp_zp(x, "i8", 0);
    uint32_t corr = exp_line(x, "tosa.mul %%v%u, %%v%u, %%v%u : (%s, %s, tensor<1xi8>) -> %s", s, z,
                             sh, EXP_TT(x, 0, &st), exp_tt(x, 1, 4, zd, "i32"), EXP_TT(x, 2, at));
    return exp_line(x, "tosa.sub %%v%u, %%v%u : (%s, %s) -> %s", acc, corr, EXP_TT(x, 0, at),
                    EXP_TT(x, 1, at), EXP_TT(x, 2, at));
}

/* The i32 accumulator [N, OH, OW, Mg] of output channels m0 .. m0 + Mg - 1 (one group) of a
 * qconv over the NHWC input xh (type xn: the group's input channels): weights OIHW -> OHWI
 * (conv2d) or [KH, KW, C, M/C] (depthwise), bias, zero points, and the weight zero-point
 * correction when they differ per channel. */
static uint32_t
conv_acc(Exp *x, uint32_t xh, const Type *xn, const Win *win, const Tensor *w, const Type *wt,
         const Tensor *b, int64_t m0, int64_t M, bool dw, bool zp_each, int64_t wzp, int64_t xzp)
{
    int64_t Cg = wt->dims[1], KH = wt->dims[2], KW = wt->dims[3], C = xn->dims[3];
    size_t nw = (size_t)(M * Cg * KH * KW);
    int64_t *wv = xcalloc(nw, sizeof *wv);
    int64_t wd[4] = {M, KH, KW, Cg}, mult = M / C;
    if (dw) {
        wd[0] = KH, wd[1] = KW, wd[2] = C, wd[3] = mult;
    }
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < Cg; c++)
            for (int64_t i = 0; i < KH; i++)
                for (int64_t j = 0; j < KW; j++) {
                    size_t src = (size_t)((((m0 + m) * Cg + c) * KH + i) * KW + j);
                    size_t dst = dw ? (size_t)(((i * KW + j) * C + m / mult) * mult + m % mult)
                                    : (size_t)(((m * KH + i) * KW + j) * Cg + c);
                    wv[dst] = tensor_get_i(w, src) + exp_shift(wt->elem);
                }
    uint32_t wid = exp_const_i(x, "i8", 4, wd, wv, nw);
    free(wv);
    int64_t *bv = xcalloc((size_t)M, sizeof *bv);
    for (int64_t m = 0; b && m < M; m++)
        bv[m] = tensor_get_i(b, (size_t)(m0 + m));
    uint32_t bid = exp_const_i(x, "i32", 1, &M, bv, (size_t)M);
    free(bv);
    uint32_t xz = exp_zp(x, "i8", xzp), wz = exp_zp(x, "i8", wzp);
    Type at = {.elem = ET_I32, .rank = 4, .dims = {xn->dims[0], 0, 0, M}};
    /* output rows/columns from the window */
    for (int a = 0; a < 2; a++)
        at.dims[1 + a] = (xn->dims[1 + a] - 1 + win->pb[a] + win->pe[a] -
                          (win->k[a] - 1) * win->d[a]) / win->s[a] + 1;
    char wa[256];
    uint32_t acc = exp_line(x, "tosa.%s %%v%u, %%v%u, %%v%u, %%v%u, %%v%u {acc_type = i32, %s} : "
                            "(%s, %s, tensor<%lldxi32>, tensor<1xi8>, tensor<1xi8>) -> %s",
                            dw ? "depthwise_conv2d" : "conv2d", xh, wid, bid, xz, wz,
                            win_attrs(wa, sizeof wa, win, false, true), EXP_TT(x, 0, xn),
                            exp_tt(x, 1, 4, wd, "i8"), (long long)M, EXP_TT(x, 2, &at));
    if (zp_each)
        acc = weight_zp_correction(x, acc, &at, xh, xn, xzp, win, wt, m0, dw);
    return acc;
}

bool
exp_op_qconv(Exp *x, Node *n)
{
    Graph *g = x->g;
    const Type *xt = exp_vtype(x, n->in[0]), *wt = exp_vtype(x, n->in[1]), *yt = exp_vtype(x, n->out[0]);
    const Tensor *w = ir_const_of(g, n->in[1]);
    const Tensor *b = n->nin > 2 && n->in[2].id ? ir_const_of(g, n->in[2]) : NULL;
    int64_t group = ir_attr_int(g, n, "group", 1);
    if (xt->rank != 4 || !per_tensor(xt) || !w || !wt->q || (wt->elem != ET_I8 && wt->elem != ET_U8))
        return exp_fail(x, n, "qconv: only 2-D convolutions of i8/u8 activations by constant "
                        "i8/u8 weights");
    if (n->nin > 2 && n->in[2].id && !b)
        return exp_fail(x, n, "qconv: the bias must be a constant");
    int64_t M = wt->dims[0], Cg = wt->dims[1], KH = wt->dims[2], KW = wt->dims[3];
    int64_t C = xt->dims[1];
    bool dw = group > 1 && group == C && Cg == 1;
    if (group < 1 || C % group || M % group || C / group != Cg)
        return exp_fail(x, n, "qconv: group %lld does not divide %lld input and %lld output "
                        "channels", (long long)group, (long long)C, (long long)M);
    int64_t wzp = 0;
    bool zp_each = false; /* per-channel weight zero points that differ: corrected below */
    for (uint32_t i = 1; i < wt->q->n; i++)
        zp_each |= wt->q->zp[i] != wt->q->zp[0];
    if (zp_each && dw && M != C)
        return exp_fail(x, n, "qconv: per-channel weight zero points that differ with a "
                        "depthwise multiplier > 1 have no tosa form");
    Win win;
    if ((!zp_each && !weight_zp(x, n, wt, &wzp)) || !window(x, n, xt, (int64_t[2]){KH, KW}, yt, &win))
        return false;
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    Type xn;
    uint32_t xh = to_nhwc(x, v, xt, &win, &xn);
    Type at = {.elem = ET_I32, .rank = 4, .dims = {yt->dims[0], yt->dims[2], yt->dims[3], M}};
    uint32_t acc;
    if (group == 1 || dw) {
        acc = conv_acc(x, xh, &xn, &win, w, wt, b, 0, M, dw, zp_each, wzp, zp_of(xt));
    } else {
        /* grouped: one conv2d per group on its slice of the input channels, concatenated */
        int64_t Mg = M / group;
        StrBuf ops, tys;
        sb_init(&ops);
        sb_init(&tys);
        Type xg = xn, ag = at;
        xg.dims[3] = Cg;
        ag.dims[3] = Mg;
        for (int64_t gi = 0; gi < group; gi++) {
            uint32_t s0 = exp_line(x, "tosa.const_shape {values = dense<[0, 0, 0, %lld]> : "
                                   "tensor<4xindex>} : () -> !tosa.shape<4>", (long long)(gi * Cg));
            uint32_t s1 = exp_line(x, "tosa.const_shape {values = dense<[%lld, %lld, %lld, %lld]> "
                                   ": tensor<4xindex>} : () -> !tosa.shape<4>", (long long)xg.dims[0],
                                   (long long)xg.dims[1], (long long)xg.dims[2], (long long)Cg);
            uint32_t sl = exp_line(x, "tosa.slice %%v%u, %%v%u, %%v%u : (%s, !tosa.shape<4>, "
                                   "!tosa.shape<4>) -> %s", xh, s0, s1, EXP_TT(x, 0, &xn),
                                   EXP_TT(x, 1, &xg));
            uint32_t ag_id = conv_acc(x, sl, &xg, &win, w, wt, b, gi * Mg, Mg, false, zp_each, wzp,
                                      zp_of(xt));
            sb_printf(&ops, "%s%%v%u", gi ? ", " : "", ag_id);
            sb_printf(&tys, "%s%s", gi ? ", " : "", EXP_TT(x, 0, &ag));
        }
        acc = exp_line(x, "tosa.concat %s {axis = 3 : i32} : (%s) -> %s", ops.data, tys.data,
                       EXP_TT(x, 0, &at));
        sb_free(&ops);
        sb_free(&tys);
    }
    uint32_t y = epilogue(x, n, acc, &at, xt, wt->q, M);
    if (!y)
        return false;
    Type yn = at, tmp;
    yn.elem = yt->elem;
    exp_bind(x, n, exp_transpose(x, y, &yn, k_to_nchw, &tmp));
    return true;
}

/* Reshape an operand of rank >= 2 to rank 3: [B, R, C], B the product of the leading
 * dimensions (1 for rank 2). */
static uint32_t
rank3(Exp *x, uint32_t v, const Type *t, Type *out)
{
    *out = *t;
    if (t->rank == 3)
        return v;
    int64_t b = 1;
    for (int i = 0; i + 2 < t->rank; i++)
        b *= t->dims[i];
    out->rank = 3;
    out->dims[0] = b;
    out->dims[1] = t->dims[t->rank - 2];
    out->dims[2] = t->dims[t->rank - 1];
    return exp_reshape(x, v, t, 3, out->dims);
}

/* The batch dimensions of b (rank > 2) are a's. */
static bool
same_batch(const Type *a, const Type *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i + 2 < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

bool
exp_op_qmatmul(Exp *x, Node *n)
{
    Graph *g = x->g;
    const Type *at = exp_vtype(x, n->in[0]), *bt = exp_vtype(x, n->in[1]), *yt = exp_vtype(x, n->out[0]);
    const Tensor *bias = n->nin > 2 && n->in[2].id ? ir_const_of(g, n->in[2]) : NULL;
    if (at->rank < 2 || bt->rank < 2 || !per_tensor(at) ||
        !bt->q || (bt->elem != ET_I8 && bt->elem != ET_U8) ||
        (bt->rank > 2 && !same_batch(at, bt)) ||
        (bt->q->n > 1 && bt->q->axis != bt->rank - 1))
        return exp_fail(x, n, "qmatmul: only [B,]M,K x [B,]K,N of i8/u8 (B equal or absent), "
                        "right operand per tensor or per its last axis");
    if (n->nin > 2 && n->in[2].id && !bias)
        return exp_fail(x, n, "qmatmul: the bias must be a constant");
    int64_t bzp = 0, N = bt->dims[bt->rank - 1];
    if (!weight_zp(x, n, bt, &bzp))
        return false;
    uint32_t a = exp_operand(x, n->in[0]), b = exp_operand(x, n->in[1]);
    if (!a || !b)
        return false;
    Type a3, b3;
    a = rank3(x, a, at, &a3);
    b = rank3(x, b, bt, &b3);
    if (b3.dims[0] != a3.dims[0]) {
        /* [K, N] shared by a batch: tile it (tosa.matmul has no broadcasting) */
        uint32_t mul = exp_line(x, "tosa.const_shape {values = dense<[%lld, 1, 1]> : "
                                "tensor<3xindex>} : () -> !tosa.shape<3>", (long long)a3.dims[0]);
        Type bb = b3;
        bb.dims[0] = a3.dims[0];
        b = exp_line(x, "tosa.tile %%v%u, %%v%u : (%s, !tosa.shape<3>) -> %s", b, mul,
                     EXP_TT(x, 0, &b3), EXP_TT(x, 1, &bb));
        b3 = bb;
    }
    uint32_t az = exp_zp(x, "i8", zp_of(at)), bz = exp_zp(x, "i8", bzp);
    Type acc = {.elem = ET_I32, .rank = 3, .dims = {a3.dims[0], a3.dims[1], N}};
    uint32_t id = exp_line(x, "tosa.matmul %%v%u, %%v%u, %%v%u, %%v%u : (%s, %s, tensor<1xi8>, "
                           "tensor<1xi8>) -> %s", a, b, az, bz, EXP_TT(x, 0, &a3),
                           EXP_TT(x, 1, &b3), EXP_TT(x, 2, &acc));
    if (bias) {
        int64_t *bv = xcalloc((size_t)N, sizeof *bv);
        for (int64_t i = 0; i < N; i++)
            bv[i] = tensor_get_i(bias, (size_t)i);
        int64_t bd[3] = {1, 1, N};
        uint32_t bid = exp_const_i(x, "i32", 3, bd, bv, (size_t)N);
        free(bv);
        id = exp_line(x, "tosa.add %%v%u, %%v%u : (%s, %s) -> %s", id, bid, EXP_TT(x, 0, &acc),
                      exp_tt(x, 1, 3, bd, "i32"), EXP_TT(x, 2, &acc));
    }
    id = epilogue(x, n, id, &acc, at, bt->q, N);
    if (!id)
        return false;
    Type r = acc;
    r.elem = yt->elem;
    if (yt->rank != 3)
        id = exp_reshape(x, id, &r, yt->rank, yt->dims);
    exp_bind(x, n, id);
    return true;
}


/* Sum of (x - zx) over `axes` in i32 (tosa.reduce_sum per axis), then one rescale by
 * sx / (sy * count): qavgpool global=1 and qreduce_mean. */
static bool
ex_qmean(Exp *x, Node *n, const int64_t *axes, int naxes)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    if (!per_tensor(xt) || !per_tensor(yt))
        return exp_fail(x, n, "%s: only per-tensor i8/u8", op_info(n->op)->name);
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    static const QnFixed one = {1 << 30, 30};
    Type t = *xt;
    t.q = NULL;
    uint32_t id = exp_rescale(x, v, &t, "i8", "i32", 1, &one, zp_of(xt), 0, false, false);
    t.elem = ET_I32;
    int64_t count = 1;
    for (int i = 0; i < naxes; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + t.rank : axes[i];
        if (a < 0 || a >= t.rank)
            return exp_fail(x, n, "axis out of range");
        Type r = t;
        count *= t.dims[a];
        r.dims[a] = 1;
        id = exp_line(x, "tosa.reduce_sum %%v%u {axis = %lld : i32} : (%s) -> %s", id,
                      (long long)a, EXP_TT(x, 0, &t), EXP_TT(x, 1, &r));
        t = r;
    }
    QnFixed f;
    const char *why = qn_qavg_fixed_params(xt->q->scale[0], yt->q->scale[0], count, 8, &f);
    if (why)
        return exp_fail(x, n, "%s: %s", op_info(n->op)->name, why);
    id = exp_rescale(x, id, &t, "i32", "i8", 1, &f, 0, zp_of(yt), false, false);
    t.elem = yt->elem;
    int64_t lo, hi;
    out_range(x, n, yt, &lo, &hi);
    id = exp_clamp(x, id, &t, lo, hi);
    if (!type_shape_equal(&t, yt))
        id = exp_reshape(x, id, &t, yt->rank, yt->dims);
    exp_bind(x, n, id);
    return true;
}

/* Windowed qavgpool with --requant=fixed arithmetic exactly: the window sums of x - zx by a
 * tosa.depthwise_conv2d with all-one weights (input zero point zx: padding adds 0), then one
 * tosa.rescale per output position by qn_qavg_fixed_params(sx, sy, count) -- the count depends
 * on the position (taps inside the input, or inside the padded input for count_include_pad=1)
 * -- applied as a per-channel rescale of the sums laid out as [N*C, OH*OW]. xh is the NHWC
 * input (type xn) of window w; returns the NCHW result, 0 after a diagnostic. */
static uint32_t
qavg_window(Exp *x, Node *n, uint32_t xh, const Type *xn, const Win *w, const Type *xt,
            const Type *yt)
{
    Graph *g = x->g;
    int64_t C = xt->dims[1], OH = yt->dims[2], OW = yt->dims[3], p[4] = {0, 0, 0, 0};
    ir_attr_ints(g, n, "pads", p, 4);
    bool incl = ir_attr_int(g, n, "count_include_pad", 0) != 0;
    int64_t npos = OH * OW, *taps[2] = {xcalloc((size_t)OH, sizeof(int64_t)),
                                        xcalloc((size_t)OW, sizeof(int64_t))};
    for (int a = 0; a < 2; a++) { /* taps per output row / column */
        int64_t in = xt->dims[2 + a], pb = p[a], pe = p[a + 2];
        for (int64_t o = 0; o < (a ? OW : OH); o++)
            for (int64_t k = 0; k < w->k[a]; k++) {
                int64_t i = o * w->s[a] - pb + k;
                taps[a][o] += incl ? i >= -pb && i < in + pe : i >= 0 && i < in;
            }
    }
    QnFixed *f = xcalloc((size_t)npos, sizeof *f);
    const char *why = NULL;
    for (int64_t i = 0; i < npos && !why; i++) {
        int64_t cnt = taps[0][i / OW] * taps[1][i % OW]; /* 0: the sum is 0, any multiplier */
        why = qn_qavg_fixed_params(xt->q->scale[0], yt->q->scale[0], cnt > 0 ? cnt : 1, 8, &f[i]);
    }
    free(taps[0]);
    free(taps[1]);
    if (why) {
        free(f);
        exp_fail(x, n, "qavgpool: %s", why);
        return 0;
    }
    int64_t wd[4] = {w->k[0], w->k[1], C, 1}, one = 1, zero = 0;
    uint32_t wt = exp_const_i(x, "i8", 4, wd, &one, 1), bias = exp_const_i(x, "i32", 1, &C, &zero, 1);
    uint32_t zx = exp_zp(x, "i8", zp_of(xt)), zw = exp_zp(x, "i8", 0);
    Type sn = *xn, tmp; /* the sums, NHWC */
    sn.elem = ET_I32;
    sn.dims[1] = OH;
    sn.dims[2] = OW;
    char wa[256];
    uint32_t id = exp_line(x, "tosa.depthwise_conv2d %%v%u, %%v%u, %%v%u, %%v%u, %%v%u {acc_type = "
                           "i32, %s} : (%s, %s, tensor<%lldxi32>, tensor<1xi8>, tensor<1xi8>) -> %s",
                           xh, wt, bias, zx, zw, win_attrs(wa, sizeof wa, w, false, true),
                           EXP_TT(x, 0, xn), exp_tt(x, 1, 4, wd, "i8"), (long long)C,
                           EXP_TT(x, 2, &sn));
    id = exp_transpose(x, id, &sn, k_to_nchw, &tmp); /* [N, C, OH, OW] */
    int64_t flat[2] = {tmp.dims[0] * C, npos};
    Type ft = tmp;
    id = exp_reshape(x, id, &tmp, 2, flat);
    ft.rank = 2;
    ft.dims[0] = flat[0];
    ft.dims[1] = flat[1];
    id = exp_rescale(x, id, &ft, "i32", "i8", npos, f, 0, zp_of(yt), false, false);
    free(f);
    ft.elem = yt->elem;
    id = exp_reshape(x, id, &ft, 4, yt->dims);
    int64_t lo, hi;
    out_range(x, n, yt, &lo, &hi);
    return exp_clamp(x, id, yt, lo, hi);
}

/* maxpool (i8/u8/f32) and qavgpool (tosa.avg_pool2d in the input's parameters, then a
 * rescale to the result's when they differ), between NCHW <-> NHWC transposes. */
bool
exp_op_pool(Exp *x, Node *n)
{
    Graph *g = x->g;
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    bool avg = n->op == OP_QAVGPOOL;
    if (n->nout > 1)
        return exp_fail(x, n, "maxpool: the indices result has no tosa form (tosa.max_pool2d "
                        "returns only the maxima)");
    if (avg && ir_attr_int(g, n, "global", 0)) {
        static const int64_t hw[2] = {2, 3};
        return ex_qmean(x, n, hw, 2);
    }
    int64_t k[2], d[2] = {1, 1}, p[4] = {0, 0, 0, 0};
    ir_attr_ints(g, n, "dilations", d, 2);
    ir_attr_ints(g, n, "pads", p, 4);
    if (xt->rank != 4 || ir_attr_ints(g, n, "kernel_shape", k, 2) != 2 || d[0] != 1 || d[1] != 1 ||
        (avg ? !per_tensor(xt) || !per_tensor(yt)
             : xt->elem != ET_F32 && xt->elem != ET_I8 && xt->elem != ET_U8))
        return exp_fail(x, n, "%s: only 2-D windows without dilation over %s",
                        op_info(n->op)->name, avg ? "per-tensor i8/u8" : "f32/i8/u8");
    Win w;
    if (!window(x, n, xt, k, yt, &w))
        return false;
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    Type xn, yn, tmp;
    uint32_t xh = to_nhwc(x, v, xt, &w, &xn);
    yn = xn;
    yn.dims[1] = yt->dims[2];
    yn.dims[2] = yt->dims[3];
    char wa[256];
    uint32_t id;
    if (!avg) {
        id = exp_line(x, "tosa.max_pool2d %%v%u {%s} : (%s) -> %s", xh,
                      win_attrs(wa, sizeof wa, &w, true, false), EXP_TT(x, 0, &xn),
                      EXP_TT(x, 1, &yn));
    } else {
        id = qavg_window(x, n, xh, &xn, &w, xt, yt);
        if (!id)
            return false;
        exp_bind(x, n, id);
        return true;
    }
    yn.elem = yt->elem;
    exp_bind(x, n, exp_transpose(x, id, &yn, k_to_nchw, &tmp));
    return true;
}

/* qreduce_mean: over the listed axes, all of them without the attribute */
static bool
exp_op_qreduce_mean(Exp *x, Node *n)
{
    int64_t axes[IR_MAX_RANK];
    int k = ir_attr_ints(x->g, n, "axes", axes, IR_MAX_RANK);
    if (k < 0) {
        k = exp_vtype(x, n->in[0])->rank;
        for (int i = 0; i < k; i++)
            axes[i] = i;
    }
    return ex_qmean(x, n, axes, k);
}

/* each op's exporter: ops.def's MLIR column, F32(f) when exp_op_f takes f32 operands and
 * results only, ANY(f) when it takes what the op allows, NONE when the op has no mapping */
typedef struct ExpRow {
    bool (*fn)(Exp *x, Node *n);
    bool f32;
} ExpRow;
#define F32(f) {exp_op_##f, true}
#define ANY(f) {exp_op_##f, false}
#define NONE {NULL, false}
static const ExpRow exp_tab[OP_COUNT] = {
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, REF, LOWER, SCRATCH, STATIC, MLIR, \
           ...)                                                                                    \
    [OP_##E] = MLIR,
#include "ir/ops.def"
#undef OP
};
#undef F32
#undef ANY
#undef NONE

bool
exp_node(Exp *x, Node *n)
{
    const ExpRow *r = n->op > OP_INVALID && n->op < OP_COUNT ? &exp_tab[n->op] : NULL;
    if (!r || !r->fn)
        return exp_fail(x, n, "`%s` has no tosa/linalg mapping", op_info(n->op)->name);
    return (!r->f32 || exp_all_f32(x, n)) && r->fn(x, n);
}
