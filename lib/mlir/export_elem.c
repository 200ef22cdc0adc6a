/* export_elem.c: MLIR form of qdqc's element-wise integer ops (qadd, qsub, qmul,
 * requantize, lut), the layout ops and the few f32 ops that float islands leave (add, sub,
 * mul, relu, clip); requantize also takes an i32 operand (zero point 0, a requantized bias).
 * Integer element-wise ops use TOSA's integer-only formulation: operands rescaled to i32 (qadd/qsub: to a common scale max(sa, sb) / 2^20; qmul: x - zx), one i32
 * tosa op, one rescale to the result. That is qdqc's --requant=fixed arithmetic, with the
 * multipliers of lib/numerics/elementwise.h (docs/numerics.md, docs/mlir.md). */
#include "export.h"

#include "numerics/elementwise.h"

#include <stdio.h>
#include <string.h>

/* v with rank raised to `rank` by leading 1s (tosa element-wise ops need equal ranks). */
static uint32_t
to_rank(Exp *x, uint32_t v, const Type *t, int rank, Type *out)
{
    *out = *t;
    if (t->rank == rank)
        return v;
    int k = rank - t->rank;
    out->rank = (uint8_t)rank;
    for (int i = rank - 1; i >= 0; i--)
        out->dims[i] = i >= k ? t->dims[i - k] : 1;
    return exp_reshape(x, v, t, rank, out->dims);
}

bool
exp_op_qbinary(Exp *x, Node *n)
{
    const Type *at = exp_vtype(x, n->in[0]), *bt = exp_vtype(x, n->in[1]),
               *yt = exp_vtype(x, n->out[0]);
    const char *name = op_info(n->op)->name;
    if (!per_tensor(at) || !per_tensor(bt) || !per_tensor(yt))
        return exp_fail(x, n, "%s: only per-tensor i8/u8", name);
    uint32_t a = exp_operand(x, n->in[0]), b = exp_operand(x, n->in[1]);
    if (!a || !b)
        return false;
    Type a2, b2;
    a = to_rank(x, a, at, yt->rank, &a2);
    b = to_rank(x, b, bt, yt->rank, &b2);
    /* the multipliers of --requant=fixed (lib/numerics/elementwise.h), so the export computes
     * what `qdqc run --requant=fixed` does: 8-bit operands, common scale max(sa, sb) / 2^20 */
    float sa = at->q->scale[0], sb = bt->q->scale[0], sy = yt->q->scale[0];
    QnFixed fa, fb, fy;
    const char *why;
    if (n->op == OP_QMUL) {
        fa = fb = (QnFixed){1 << 30, 30};
        why = qn_qmul_fixed_params(sa, sb, sy, 8, &fy);
    } else {
        QnAddFixed p;
        why = qn_qadd_fixed_params(sa, sb, sy, 8, &p);
        fa = p.a;
        fb = p.b;
        fy = p.y;
    }
    if (why)
        return exp_fail(x, n, "%s: %s", name, why);
    uint32_t ai = exp_rescale(x, a, &a2, "i8", "i32", 1, &fa, zp_of(at), 0, false, false);
    uint32_t bi = exp_rescale(x, b, &b2, "i8", "i32", 1, &fb, zp_of(bt), 0, false, false);
    Type ti = *yt, ta = a2, tb = b2;
    ti.q = ta.q = tb.q = NULL;
    ti.elem = ta.elem = tb.elem = ET_I32;
    uint32_t id;
    if (n->op == OP_QMUL) {
        uint32_t sh = exp_zp(x, "i8", 0);
        id = exp_line(x, "tosa.mul %%v%u, %%v%u, %%v%u : (%s, %s, tensor<1xi8>) -> %s", ai, bi,
                      sh, EXP_TT(x, 0, &ta), EXP_TT(x, 1, &tb), EXP_TT(x, 2, &ti));
    } else {
        id = exp_line(x, "tosa.%s %%v%u, %%v%u : (%s, %s) -> %s",
                      n->op == OP_QADD ? "add" : "sub", ai, bi, EXP_TT(x, 0, &ta),
                      EXP_TT(x, 1, &tb), EXP_TT(x, 2, &ti));
    }
    id = exp_rescale(x, id, &ti, "i32", "i8", 1, &fy, 0, zp_of(yt), false, false);
    int64_t lo, hi;
    out_range(x, n, yt, &lo, &hi);
    exp_bind(x, n, exp_clamp(x, id, yt, lo, hi));
    return true;
}

bool
exp_op_requantize(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    /* an i32 operand (a bias requantized to 8 bits): tosa.rescale from i32, whose zero point
     * must be 0 */
    bool wide = xt->elem == ET_I32 && xt->q && xt->q->n == 1 && xt->q->zp[0] == 0;
    if ((!per_tensor(xt) && !wide) || !per_tensor(yt))
        return exp_fail(x, n, "requantize: only per-tensor i8/u8 (or i32 with zero point 0) "
                        "to per-tensor i8/u8");
    uint32_t v = exp_operand(x, n->in[0]);
    QnFixed f;
    if (!v)
        return false;
    const char *why = qn_requantize_fixed_params(xt->q->scale[0], yt->q->scale[0], &f);
    if (why)
        return exp_fail(x, n, "requantize: %s", why);
    uint32_t id = exp_rescale(x, v, xt, wide ? "i32" : "i8", "i8", 1, &f, wide ? 0 : zp_of(xt),
                              zp_of(yt), false, false);
    int64_t lo, hi;
    out_range(x, n, yt, &lo, &hi);
    exp_bind(x, n, exp_clamp(x, id, yt, lo, hi));
    return true;
}

/* lut: tosa.table indexes with x + 128 for i8, which is x - storage_min for both i8 and
 * shifted u8, i.e. qdqc's table order. */
bool
exp_op_lut(Exp *x, Node *n)
{
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    const Attr *ta = ir_attr(x->g, n, "table");
    if ((xt->elem != ET_I8 && xt->elem != ET_U8) || (yt->elem != ET_I8 && yt->elem != ET_U8) ||
        !ta || ta->kind != ATTR_TENSOR || type_numel_unchecked(&ta->t->type) != 256)
        return exp_fail(x, n, "lut: only i8/u8 -> i8/u8 with a 256-entry table");
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    int64_t tv[256], len = 256;
    for (size_t i = 0; i < 256; i++)
        tv[i] = tensor_get_i(ta->t, i) + exp_shift(yt->elem);
    uint32_t tab = exp_const_i(x, "i8", 1, &len, tv, 256);
    exp_bind(x, n, exp_line(x, "tosa.table %%v%u, %%v%u : (%s, tensor<256xi8>) -> %s", v, tab,
                            EXP_TT(x, 0, xt), EXP_TT(x, 1, yt)));
    return true;
}

bool
exp_op_layout(Exp *x, Node *n)
{
    Graph *g = x->g;
    const Type *xt = exp_vtype(x, n->in[0]), *yt = exp_vtype(x, n->out[0]);
    /* per channel, the result carries the parameters on the axis the op moves the channel
     * to (a transposed per-channel weight): the exported integers are the same */
    bool moved = xt->q && yt->q && xt->q->axis >= 0 && yt->q->axis >= 0 &&
                 xt->q->n == yt->q->n && ir_moved_axis(g, n, xt, yt) == yt->q->axis &&
                 !memcmp(xt->q->scale, yt->q->scale, xt->q->n * sizeof(float)) &&
                 !memcmp(xt->q->zp, yt->q->zp, xt->q->n * sizeof(int32_t));
    if ((!qparams_equal(xt->q, yt->q) && !moved) || xt->elem != yt->elem)
        return exp_fail(x, n, "%s: operand and result types differ", op_info(n->op)->name);
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    switch (n->op) {
    case OP_IDENTITY:
        exp_bind(x, n, v);
        return true;
    case OP_TRANSPOSE: {
        int64_t perm[IR_MAX_RANK];
        if (ir_attr_ints(g, n, "perm", perm, IR_MAX_RANK) != xt->rank)
            for (int i = 0; i < xt->rank; i++)
                perm[i] = xt->rank - 1 - i;
        Type t;
        exp_bind(x, n, exp_transpose(x, v, xt, perm, &t));
        return true;
    }
    case OP_SLICE: {
        int64_t st[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK], start[IR_MAX_RANK] = {0};
        int k = ir_attr_ints(g, n, "starts", st, IR_MAX_RANK);
        bool axes = ir_attr_ints(g, n, "axes", ax, IR_MAX_RANK) == k;
        int ks = ir_attr_ints(g, n, "steps", sp, IR_MAX_RANK);
        for (int i = 0; i < k; i++) {
            int64_t a = axes ? (ax[i] < 0 ? ax[i] + xt->rank : ax[i]) : i;
            if (a < 0 || a >= xt->rank || (ks == k && sp[i] != 1))
                return exp_fail(x, n, "slice: only unit steps");
            int64_t s = st[i] < 0 ? st[i] + xt->dims[a] : st[i];
            start[a] = s < 0 ? 0 : s > xt->dims[a] ? xt->dims[a] : s;
        }
        StrBuf p, q;
        sb_init(&p);
        sb_init(&q);
        for (int i = 0; i < xt->rank; i++) {
            sb_printf(&p, i ? ", %lld" : "%lld", (long long)start[i]);
            sb_printf(&q, i ? ", %lld" : "%lld", (long long)yt->dims[i]);
        }
        uint32_t s0 = exp_line(x, "tosa.const_shape {values = dense<[%s]> : tensor<%dxindex>} : "
                               "() -> !tosa.shape<%d>", p.data, xt->rank, xt->rank);
        uint32_t s1 = exp_line(x, "tosa.const_shape {values = dense<[%s]> : tensor<%dxindex>} : "
                               "() -> !tosa.shape<%d>", q.data, xt->rank, xt->rank);
        sb_free(&p);
        sb_free(&q);
        exp_bind(x, n, exp_line(x, "tosa.slice %%v%u, %%v%u, %%v%u : (%s, !tosa.shape<%d>, "
                                "!tosa.shape<%d>) -> %s", v, s0, s1, EXP_TT(x, 0, xt), xt->rank,
                                xt->rank, EXP_TT(x, 1, yt)));
        return true;
    }
    default: /* reshape, flatten, squeeze, unsqueeze */
        exp_bind(x, n, exp_reshape(x, v, xt, yt->rank, yt->dims));
        return true;
    }
}

bool
exp_op_concat(Exp *x, Node *n)
{
    const Type *yt = exp_vtype(x, n->out[0]);
    int64_t axis = ir_attr_int(x->g, n, "axis", 0);
    axis = axis < 0 ? axis + yt->rank : axis;
    StrBuf ops, tys;
    sb_init(&ops);
    sb_init(&tys);
    bool ok = true;
    for (uint32_t i = 0; i < n->nin && ok; i++) {
        const Type *t = exp_vtype(x, n->in[i]);
        uint32_t v = exp_operand(x, n->in[i]);
        ok = v && qparams_equal(t->q, yt->q) && t->elem == yt->elem;
        sb_printf(&ops, i ? ", %%v%u" : "%%v%u", v);
        sb_printf(&tys, i ? ", %s" : "%s", EXP_TT(x, 0, t));
    }
    if (ok)
        exp_bind(x, n, exp_line(x, "tosa.concat %s {axis = %lld : i32} : (%s) -> %s", ops.data,
                                (long long)axis, tys.data, EXP_TT(x, 0, yt)));
    else if (!x->failed)
        exp_fail(x, n, "concat: operands with different quantization");
    sb_free(&ops);
    sb_free(&tys);
    return ok;
}

static void
f32_attr(char *buf, size_t cap, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    snprintf(buf, cap, "0x%08X : f32", bits);
}

bool
exp_op_float_elem(Exp *x, Node *n)
{
    const Type *yt = exp_vtype(x, n->out[0]);
    const char *name = op_info(n->op)->name;
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->in[i].id && exp_vtype(x, n->in[i])->elem != ET_F32)
            return exp_fail(x, n, "%s: only f32 operands", name);
    if (yt->elem != ET_F32)
        return exp_fail(x, n, "%s: only f32 results", name);
    uint32_t a = exp_operand(x, n->in[0]);
    if (!a)
        return false;
    const Type *at = exp_vtype(x, n->in[0]);
    if (n->op == OP_RELU || n->op == OP_CLIP) {
        float lo = n->op == OP_RELU ? 0.0f : ir_attr_float(x->g, n, "min", -__builtin_inff());
        float hi = n->op == OP_RELU ? __builtin_inff() : ir_attr_float(x->g, n, "max", __builtin_inff());
        if (n->nin > 1 && ((n->in[1].id && !ir_const_of(x->g, n->in[1])) ||
                           (n->nin > 2 && n->in[2].id && !ir_const_of(x->g, n->in[2]))))
            return exp_fail(x, n, "clip: only constant bounds");
        if (n->nin > 1 && n->in[1].id)
            lo = (float)tensor_get_f(ir_const_of(x->g, n->in[1]), 0);
        if (n->nin > 2 && n->in[2].id)
            hi = (float)tensor_get_f(ir_const_of(x->g, n->in[2]), 0);
        char l[32], h[32];
        f32_attr(l, sizeof l, lo);
        f32_attr(h, sizeof h, hi);
        exp_bind(x, n, exp_line(x, "tosa.clamp %%v%u {min_val = %s, max_val = %s} : (%s) -> %s",
                                a, l, h, EXP_TT(x, 0, at), EXP_TT(x, 1, yt)));
        return true;
    }
    uint32_t b = exp_operand(x, n->in[1]);
    if (!b)
        return false;
    Type a2, b2;
    a = to_rank(x, a, at, yt->rank, &a2);
    b = to_rank(x, b, exp_vtype(x, n->in[1]), yt->rank, &b2);
    if (n->op == OP_MUL) {
        uint32_t sh = exp_zp(x, "i8", 0);
        exp_bind(x, n, exp_line(x, "tosa.mul %%v%u, %%v%u, %%v%u : (%s, %s, tensor<1xi8>) -> %s",
                                a, b, sh, EXP_TT(x, 0, &a2), EXP_TT(x, 1, &b2), EXP_TT(x, 2, yt)));
    } else {
        exp_bind(x, n, exp_line(x, "tosa.%s %%v%u, %%v%u : (%s, %s) -> %s",
                                n->op == OP_ADD ? "add" : "sub", a, b, EXP_TT(x, 0, &a2),
                                EXP_TT(x, 1, &b2), EXP_TT(x, 2, yt)));
    }
    return true;
}
