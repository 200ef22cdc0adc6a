/* llvm_kernels_int.c: quantize / dequantize at island boundaries, lut, requantize, qadd, qsub,
 * qmul (numpy broadcasting), qavgpool (and global), maxpool (any element type).
 * Each arithmetic sequence is the one of lib/numerics (numerics.h, elementwise.h), emitted as
 * scalar loops in the logical layout; see llvm_kernels.c for the rounding helpers. Under
 * --requant=fixed the element-wise ops and qavgpool are integer only (the *_fixed functions of
 * elementwise.h, constants from their *_params at compile time). */
#include "codegen/lower/lower.h"
#include "codegen/target/module.h"
#include "codegen/lower/qconv.h"
#include "numerics/elementwise.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

/* Per-axis split of a type: [outer, dim, inner] around q->axis (per-tensor: dim = 1). */
static void
axis_split(const Type *t, const QParams *q, int64_t *outer, int64_t *dim, int64_t *inner)
{
    int64_t n = (int64_t)type_numel_unchecked(t);
    if (!q || q->axis < 0) {
        *outer = 1;
        *dim = 1;
        *inner = n;
        return;
    }
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < q->axis; d++)
        *outer *= t->dims[d];
    *dim = t->dims[q->axis];
    for (int d = q->axis + 1; d < t->rank; d++)
        *inner *= t->dims[d];
}

/* quantize: qn_quantize_f32 = sat(rne(x / s) + zp, qmin, qmax), NaN -> sat(zp). */
static bool
emit_qdq(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    bool isq = n->op == OP_QUANTIZE;
    if (n->nin > 1 && n->in[1].id)
        return cg_fail(k, n, "dynamic %s is not supported", op_info(n->op)->name);
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    /* the node's own parameters (ONNX: a DequantizeLinear reads its integers with its own
     * scale and zero point); the integer type's only for a node without them */
    const QParams *q = n->q ? n->q : isq ? y->q : x->q;
    if (!q)
        return cg_fail(k, n, "missing quantization parameters");
    if ((isq && x->elem != ET_F32) || (!isq && y->elem != ET_F32))
        return cg_fail(k, n, "only f32 %s is supported", isq ? "input" : "output");
    int64_t outer, dim, inner;
    axis_split(isq ? y : x, q, &outer, &dim, &inner);
    LLVMValueRef gs = cg_const_bytes(k, q->scale, q->n * sizeof(float), "scale");
    LLVMValueRef gz = cg_const_bytes(k, q->zp, q->n * sizeof(int32_t), "zp");
    /* units of (row = (o, c), block of QDQ_BLOCK elements of the row) split across the
     * parallel-for hook (a graph input's quantize is otherwise serial work of every run) */
    const int64_t QDQ_BLOCK = 8192;
    int64_t nb = (inner + QDQ_BLOCK - 1) / QDQ_BLOCK;
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef vu = cg_par_begin(k, &par, outer * dim * nb, io, 2);
    LLVMValueRef row = LLVMBuildSDiv(k->b, vu, cg_i64(k, nb), "");
    LLVMValueRef vc = LLVMBuildSRem(k->b, row, cg_i64(k, dim), "");
    LLVMValueRef i0 = cg_mul(k, LLVMBuildSRem(k->b, vu, cg_i64(k, nb), ""), cg_i64(k, QDQ_BLOCK));
    LLVMValueRef s = cg_load_raw(k, ET_F32, gs, vc), zp = cg_load_i64(k, ET_I32, gz, vc);
    CgLoop li;
    LLVMValueRef cnt = cg_smin(k, cg_i64(k, QDQ_BLOCK), LLVMBuildSub(k->b, cg_i64(k, inner), i0, ""));
    LLVMValueRef vi = cg_add(k, i0, cg_loop_begin(k, &li, cnt));
    LLVMValueRef idx = cg_add(k, cg_mul(k, row, cg_i64(k, inner)), vi);
    if (isq) {
        LLVMValueRef v = LLVMBuildFDiv(k->b, cg_load_raw(k, ET_F32, io[0], idx), s, "");
        cg_store_i64(k, y->elem, io[1], idx, cg_finish_f32(k, v, zp, q->qmin, q->qmax));
    } else {
        LLVMValueRef d = LLVMBuildSub(k->b, cg_load_i64(k, x->elem, io[0], idx), zp, "");
        LLVMValueRef f = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, d, k->f32, ""), s, "");
        cg_store_raw(k, ET_F32, io[1], idx, f);
    }
    cg_loop_end(k, &li);
    cg_par_end(k, &par, a);
    return true;
}

static bool
emit_lut(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    const Attr *ta = ir_attr(g, n, "table");
    if (!ta || ta->kind != ATTR_TENSOR || type_numel_unchecked(&ta->t->type) != 256 ||
        ta->t->type.elem != y->elem || elem_size(x->elem) != 1)
        return cg_fail(k, n, "'table' must be a tensor of 256 %s entries over 8-bit input",
                       elem_name(y->elem));
    int64_t lo, hi;
    elem_range(x->elem, &lo, &hi);
    LLVMValueRef gt = cg_const_bytes(k, ta->t->data, ta->t->nbytes, "lut");
    CgLoop l;
    LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, (int64_t)type_numel_unchecked(x)));
    LLVMValueRef v = LLVMBuildSub(k->b, cg_load_i64(k, x->elem, a->in[0], i), cg_i64(k, lo), "");
    cg_store_raw(k, y->elem, a->out[0], i, cg_load_raw(k, y->elem, gt, v));
    cg_loop_end(k, &l);
    return true;
}

static bool
per_tensor(const QParams *q)
{
    return q && q->axis < 0;
}

/* requantize, qadd, qsub, qmul over broadcast operands. */
static bool
emit_elemwise(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *y = &ir_value(g, n->out[0])->type;
    uint32_t nop = n->op == OP_REQUANTIZE ? 1 : 2;
    const Type *t[2];
    for (uint32_t i = 0; i < nop; i++) {
        t[i] = &ir_value(g, n->in[i])->type;
        if (!per_tensor(t[i]->q))
            return cg_fail(k, n, "operand %u must be per-tensor quantized", i);
    }
    if (!per_tensor(y->q))
        return cg_fail(k, n, "the result must be per-tensor quantized");
    int32_t lo, hi;
    cg_clamp(k, n, y->q, &lo, &hi);
    CgElemFixed fx;
    if (k->requant_fixed && !cg_elem_fixed(k, n, &fx))
        return false;
    int64_t ys[IR_MAX_RANK], st[2][IR_MAX_RANK];
    type_strides(y, ys);
    for (uint32_t i = 0; i < nop; i++)
        type_bcast_strides(t[i], y, st[i]);
    CgLoop l[IR_MAX_RANK];
    LLVMValueRef yi = cg_i64(k, 0), xi[2] = {cg_i64(k, 0), cg_i64(k, 0)};
    for (int d = 0; d < y->rank; d++) {
        LLVMValueRef iv = cg_loop_begin(k, &l[d], cg_i64(k, y->dims[d]));
        yi = cg_add(k, yi, cg_mul(k, iv, cg_i64(k, ys[d])));
        for (uint32_t i = 0; i < nop; i++)
            xi[i] = cg_add(k, xi[i], cg_mul(k, iv, cg_i64(k, st[i][d])));
    }
    LLVMValueRef dz[2];
    for (uint32_t i = 0; i < nop; i++)
        dz[i] = LLVMBuildSub(k->b, cg_load_i64(k, t[i]->elem, a->in[i], xi[i]),
                             cg_i64(k, t[i]->q->zp[0]), "");
    LLVMValueRef r;
    if (k->requant_fixed) {
        r = cg_add_sat(k, cg_elem_fixed_value(k, n, &fx, dz), y->q->zp[0], lo, hi);
    } else {
        LLVMValueRef v[2];
        for (uint32_t i = 0; i < nop; i++)
            v[i] = LLVMBuildFMul(k->b, cg_f32(k, t[i]->q->scale[0]), LLVMBuildSIToFP(k->b, dz[i], k->f32, ""), "");
        switch (n->op) {
        case OP_QADD: r = LLVMBuildFAdd(k->b, v[0], v[1], ""); break;
        case OP_QSUB: r = LLVMBuildFSub(k->b, v[0], v[1], ""); break;
        case OP_QMUL: r = LLVMBuildFMul(k->b, v[0], v[1], ""); break;
        default: r = v[0]; break;
        }
        r = LLVMBuildFDiv(k->b, r, cg_f32(k, y->q->scale[0]), "");
        r = cg_finish_f32(k, r, cg_i64(k, y->q->zp[0]), lo, hi);
    }
    cg_store_i64(k, y->elem, a->out[0], yi, r);
    for (int d = y->rank - 1; d >= 0; d--)
        cg_loop_end(k, &l[d]);
    return true;
}

typedef struct PoolGeo {
    int64_t NC, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw, peh, pew;
} PoolGeo;

static bool
pool_geo(Kb *k, Node *n, PoolGeo *p, bool global)
{
    Graph *g = k->g;
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    if (x->rank != 4 && x->rank != 3)
        return cg_fail(k, n, "only 1-D and 2-D pooling is supported");
    bool d1 = x->rank == 3;
    int ns = d1 ? 1 : 2;
    memset(p, 0, sizeof *p);
    p->NC = x->dims[0] * x->dims[1];
    p->H = d1 ? 1 : x->dims[2];
    p->W = x->dims[x->rank - 1];
    p->OH = d1 ? 1 : y->dims[2];
    p->OW = y->dims[y->rank - 1];
    p->sh = p->sw = p->dh = p->dw = 1;
    if (global) {
        p->KH = p->H;
        p->KW = p->W;
        return true;
    }
    int64_t ks[2] = {1, 1};
    if (ir_attr_ints(g, n, "kernel_shape", ks, 2) != ns)
        return cg_fail(k, n, "kernel_shape must have %d entries", ns);
    CgWin w;
    if (!cg_window(k, n, x, y, ks, &w))
        return false;
    int h = cg_win_h(&w), wd = cg_win_w(&w);
    p->KH = w.k[h];
    p->KW = w.k[wd];
    p->sh = w.s[h];
    p->sw = w.s[wd];
    p->dh = w.d[h];
    p->dw = w.d[wd];
    p->ph = w.pb[h];
    p->pw = w.pb[wd];
    p->peh = w.pe[h];
    p->pew = w.pe[wd];
    return true;
}

/* maxpool (first maximum; NaN wins, as the reference) and qavgpool (qn_qavg). */
static bool
emit_pool(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    bool is_max = n->op == OP_MAXPOOL;
    bool global = !is_max && ir_attr_int(g, n, "global", 0) != 0;
    PoolGeo p;
    if (!pool_geo(k, n, &p, global))
        return false;
    bool fl = elem_is_float(x->elem);
    if (is_max && fl && x->elem != ET_F32)
        return cg_fail(k, n, "maxpool on %s is not supported", elem_name(x->elem));
    int32_t lo = 0, hi = 0;
    bool incl = ir_attr_int(g, n, "count_include_pad", 0) != 0;
    if (!is_max) {
        if (!per_tensor(x->q) || !per_tensor(y->q))
            return cg_fail(k, n, "qavgpool needs per-tensor quantized operands");
        cg_clamp(k, n, y->q, &lo, &hi);
    }
    /* --requant=fixed: qn_qavg_fixed with the multiplier of the window's divisor, from a
     * table over every divisor 1..KH*KW (a global pool: its one divisor), as lib/ref */
    LLVMValueRef gfm = NULL, gfs = NULL;
    QnFixed gf = {0, 0};
    bool fixed = !is_max && k->requant_fixed;
    if (fixed) {
        int64_t kmax = p.KH * p.KW;
        int bits = cg_range_bits(k, n->in[0]);
        float sx = x->q->scale[0], sy = y->q->scale[0];
        if (global && !cg_fixed_ok(k, n, qn_qavg_fixed_params(sx, sy, kmax, bits, &gf)))
            return false;
        if (!global) {
            int64_t *fm = xcalloc((size_t)kmax + 1, sizeof *fm);
            int64_t *fs = xcalloc((size_t)kmax + 1, sizeof *fs);
            bool ok = true;
            fs[0] = 31; /* divisor 0 (a window of padding only): replaced by sat(zy) below */
            for (int64_t d = 1; d <= kmax && ok; d++) {
                QnFixed f = {0, 31};
                ok = cg_fixed_ok(k, n, qn_qavg_fixed_params(sx, sy, d, bits, &f));
                fm[d] = f.mult;
                fs[d] = f.shift;
            }
            if (ok) {
                gfm = cg_const_bytes(k, fm, (size_t)(kmax + 1) * sizeof *fm, "avgm");
                gfs = cg_const_bytes(k, fs, (size_t)(kmax + 1) * sizeof *fs, "avgs");
            }
            free(fm);
            free(fs);
            if (!ok)
                return false;
        }
    }
    /* blocks of pb planes (about 4096 window taps each) split across the parallel-for hook */
    int64_t taps = p.OH * p.OW * p.KH * p.KW;
    int64_t pb = taps > 0 && 4096 / taps > 1 ? 4096 / taps : 1;
    pb = pb < p.NC ? pb : p.NC > 0 ? p.NC : 1;
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef p0 = cg_mul(k, cg_par_begin(k, &par, (p.NC + pb - 1) / pb, io, 2), cg_i64(k, pb));
    LLVMValueRef bestp = cg_entry_alloca(k, fl ? k->f32 : k->i64);
    LLVMValueRef cntp = cg_entry_alloca(k, k->i64), padp = cg_entry_alloca(k, k->i64);
    CgLoop lp, loh, low, lkh, lkw;
    LLVMValueRef vp = cg_add(k, p0, cg_loop_begin(k, &lp, cg_smin(k, cg_i64(k, pb),
                                                                LLVMBuildSub(k->b, cg_i64(k, p.NC), p0, ""))));
    LLVMValueRef voh = cg_loop_begin(k, &loh, cg_i64(k, p.OH));
    LLVMValueRef vow = cg_loop_begin(k, &low, cg_i64(k, p.OW));
    int64_t xlo, xhi;
    elem_range(x->elem, &xlo, &xhi);
    LLVMValueRef init = fl ? cg_f32(k, -__builtin_inff()) : cg_i64(k, is_max ? INT64_MIN : 0);
    LLVMBuildStore(k->b, init, bestp);
    LLVMBuildStore(k->b, cg_i64(k, 0), cntp);
    LLVMBuildStore(k->b, cg_i64(k, 0), padp);
    LLVMValueRef vkh = cg_loop_begin(k, &lkh, cg_i64(k, p.KH));
    LLVMValueRef ih = cg_add(k, LLVMBuildSub(k->b, cg_mul(k, voh, cg_i64(k, p.sh)), cg_i64(k, p.ph), ""),
                             cg_mul(k, vkh, cg_i64(k, p.dh)));
    LLVMValueRef vkw = cg_loop_begin(k, &lkw, cg_i64(k, p.KW));
    LLVMValueRef iw = cg_add(k, LLVMBuildSub(k->b, cg_mul(k, vow, cg_i64(k, p.sw)), cg_i64(k, p.pw), ""),
                             cg_mul(k, vkw, cg_i64(k, p.dw)));
#define RANGE(v, a_, b_) LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, v, cg_i64(k, a_), ""), \
                                      LLVMBuildICmp(k->b, LLVMIntSLT, v, cg_i64(k, b_), ""), "")
    LLVMValueRef inb = LLVMBuildAnd(k->b, RANGE(ih, 0, p.H), RANGE(iw, 0, p.W), "");
    LLVMValueRef inpad = LLVMBuildAnd(k->b, RANGE(ih, -p.ph, p.H + p.peh), RANGE(iw, -p.pw, p.W + p.pew), "");
#undef RANGE
    LLVMValueRef xi = cg_add(k, cg_mul(k, vp, cg_i64(k, p.H * p.W)), cg_add(k, cg_mul(k, ih, cg_i64(k, p.W)), iw));
    xi = LLVMBuildSelect(k->b, inb, xi, cg_i64(k, 0), "");
    LLVMValueRef xv = cg_load_i64(k, x->elem, io[0], xi);
    LLVMValueRef best = LLVMBuildLoad2(k->b, fl ? k->f32 : k->i64, bestp, "");
    LLVMValueRef nb;
    if (is_max && fl) {
        LLVMValueRef take = LLVMBuildOr(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, xv, best, ""),
                                        LLVMBuildFCmp(k->b, LLVMRealUNO, xv, xv, ""), "");
        nb = LLVMBuildSelect(k->b, LLVMBuildAnd(k->b, inb, take, ""), xv, best, "");
    } else if (is_max) {
        nb = LLVMBuildSelect(k->b, LLVMBuildAnd(k->b, inb, LLVMBuildICmp(k->b, LLVMIntSGT, xv, best, ""), ""), xv, best, "");
    } else {
        LLVMValueRef d = LLVMBuildSub(k->b, xv, cg_i64(k, x->q->zp[0]), "");
        nb = cg_add(k, best, LLVMBuildSelect(k->b, inb, d, cg_i64(k, 0), ""));
    }
    LLVMBuildStore(k->b, nb, bestp);
    LLVMBuildStore(k->b, cg_add(k, LLVMBuildLoad2(k->b, k->i64, cntp, ""), LLVMBuildZExt(k->b, inb, k->i64, "")), cntp);
    LLVMBuildStore(k->b, cg_add(k, LLVMBuildLoad2(k->b, k->i64, padp, ""), LLVMBuildZExt(k->b, inpad, k->i64, "")), padp);
    cg_loop_end(k, &lkw);
    cg_loop_end(k, &lkh);
    LLVMValueRef yi = cg_add(k, cg_mul(k, vp, cg_i64(k, p.OH * p.OW)), cg_add(k, cg_mul(k, voh, cg_i64(k, p.OW)), vow));
    best = LLVMBuildLoad2(k->b, fl ? k->f32 : k->i64, bestp, "");
    if (is_max) {
        if (fl)
            cg_store_raw(k, ET_F32, io[1], yi, best);
        else
            cg_store_i64(k, y->elem, io[1], yi, best);
    } else if (fixed) {
        /* qn_qavg_fixed: count <= 0 -> sat(zy); sat(qn_rescale(sum, m[count]) + zy) */
        LLVMValueRef cnt = LLVMBuildLoad2(k->b, k->i64, incl ? padp : cntp, "");
        LLVMValueRef v;
        if (global) {
            v = cg_rescale_c(k, best, gf);
        } else {
            LLVMValueRef ci = cg_smax(k, cnt, cg_i64(k, 0));
            v = cg_rescale(k, best, cg_load_raw(k, ET_I64, gfm, ci), cg_load_raw(k, ET_I64, gfs, ci));
        }
        int32_t zy = y->q->zp[0];
        LLVMValueRef r = cg_add_sat(k, v, zy, lo, hi);
        LLVMValueRef z = cg_i64(k, zy < lo ? lo : zy > hi ? hi : zy);
        r = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLE, cnt, cg_i64(k, 0), ""), z, r, "");
        cg_store_i64(k, y->elem, io[1], yi, r);
    } else {
        /* qn_qavg: count <= 0 -> sat(zy); v = ((f32)sum * sx) / (f32)count; finish(v / sy) */
        LLVMValueRef cnt = LLVMBuildLoad2(k->b, k->i64, incl ? padp : cntp, "");
        LLVMValueRef v = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, best, k->f32, ""), cg_f32(k, x->q->scale[0]), "");
        v = LLVMBuildFDiv(k->b, v, LLVMBuildSIToFP(k->b, cnt, k->f32, ""), "");
        v = LLVMBuildFDiv(k->b, v, cg_f32(k, y->q->scale[0]), "");
        LLVMValueRef zy = cg_i64(k, y->q->zp[0]);
        LLVMValueRef r = cg_finish_f32(k, v, zy, lo, hi);
        LLVMValueRef z = cg_smin(k, cg_smax(k, zy, cg_i64(k, lo)), cg_i64(k, hi));
        r = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLE, cnt, cg_i64(k, 0), ""), z, r, "");
        cg_store_i64(k, y->elem, io[1], yi, r);
    }
    cg_loop_end(k, &low);
    cg_loop_end(k, &loh);
    cg_loop_end(k, &lp);
    cg_par_end(k, &par, a);
    return true;
}

bool
cg_emit_int(Kb *k, Node *n, const CgNodeArgs *a)
{
    switch (n->op) {
    case OP_QUANTIZE: case OP_DEQUANTIZE:
        return emit_qdq(k, n, a);
    case OP_LUT:
        return emit_lut(k, n, a);
    case OP_REQUANTIZE: case OP_QADD: case OP_QSUB: case OP_QMUL:
        if (cg_elemwise_vec_ok(k, n))
            return cg_emit_elemwise_vec(k, n, a); /* llvm_elem_vec.c */
        return emit_elemwise(k, n, a);
    case OP_QAVGPOOL: case OP_MAXPOOL:
        if (n->op == OP_MAXPOOL && cg_value_nhwc(k, n->in[0]))
            return cg_emit_maxpool_nhwc(k, n, a); /* llvm_conv_nhwc.c */
        return emit_pool(k, n, a);
    default:
        return cg_fail(k, n, "%s is not supported", op_info(n->op)->name);
    }
}
