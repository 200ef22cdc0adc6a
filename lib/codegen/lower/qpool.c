/* qpool.c: the integer pools: qavgpool (and global; qn_qavg, --requant=fixed integer only) and
 * maxpool (any element type; first maximum, NaN wins, as the reference) as scalar loops over
 * NCHW 1-D/2-D windows, and maxpool over NHWC values (planned by plan/layout.c) with the
 * channels innermost. 3-D pools and maxpool's indices result are float_linear.c's. */
#include "codegen/lower/qconv.h"
#include "codegen/plan/plan.h"
#include "numerics/elementwise.h"

#include <llvm-c/Core.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* What the pools store per output: maxpool its maximum; qavgpool (sum of x - zx over `cnt`
 * counted taps) qn_qavg or qn_qavg_fixed, a count <= 0 giving sat(zy). */
typedef struct PoolEpi {
    const Type *x, *y;
    bool is_max, fl;
    CgRq rq; /* qavgpool: qn_qavg (scales) or qn_qavg_fixed (the multiplier of a global
              * pool's one divisor, else tables per divisor) */
} PoolEpi;

static void
pool_store(Kb *k, const PoolEpi *e, LLVMValueRef out, LLVMValueRef yi, LLVMValueRef best, LLVMValueRef cnt)
{
    const Type *y = e->y;
    int32_t lo = e->rq.lo, hi = e->rq.hi;
    if (e->is_max) {
        if (e->fl)
            cg_store_raw(k, ET_F32, out, yi, best);
        else
            cg_store_i64(k, y->elem, out, yi, best);
    } else {
        /* qn_qavg / qn_qavg_fixed; count <= 0 -> sat(zy) */
        LLVMValueRef r = e->rq.mode->avg(k, &e->rq, best, cnt);
        int32_t zy = y->q->zp[0];
        LLVMValueRef z = cg_i64(k, zy < lo ? lo : zy > hi ? hi : zy);
        r = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLE, cnt, cg_i64(k, 0), ""), z, r, "");
        cg_store_i64(k, y->elem, out, yi, r);
    }
}

/* Global qavgpool: per plane (blocks of planes across the parallel-for hook) the sum of its
 * isp integers in i32 (isp * 2^16 < 2^31: no overflow for 8- and 16-bit values; a plain
 * contiguous reduction, which LLVM vectorises), minus isp * zx, then pool_store. The sum is an
 * integer, so its order does not matter: the reference's window loop gives the same value. */
static void
emit_global_qavg(Kb *k, const PoolEpi *e, const CgNodeArgs *a, int64_t NC, int64_t isp)
{
    int64_t pb = 8192 / isp > 1 ? 8192 / isp : 1;
    pb = pb < NC ? pb : NC;
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef p0 = cg_mul(k, cg_par_begin(k, &par, (NC + pb - 1) / pb, io, 2), cg_i64(k, pb));
    LLVMValueRef sump = cg_entry_alloca(k, k->i32);
    CgLoop lp, lt;
    LLVMValueRef vp = cg_add(k, p0, cg_loop_begin(k, &lp, cg_smin(k, cg_i64(k, pb),
                                                                LLVMBuildSub(k->b, cg_i64(k, NC), p0, ""))));
    LLVMBuildStore(k->b, cg_i32(k, 0), sump);
    LLVMValueRef base = cg_mul(k, vp, cg_i64(k, isp));
    LLVMValueRef t = cg_loop_begin(k, &lt, cg_i64(k, isp));
    LLVMValueRef xv = LLVMBuildTrunc(k->b, cg_load_i64(k, e->x->elem, io[0], cg_add(k, base, t)), k->i32, "");
    LLVMBuildStore(k->b, LLVMBuildAdd(k->b, LLVMBuildLoad2(k->b, k->i32, sump, ""), xv, ""), sump);
    cg_loop_end(k, &lt);
    LLVMValueRef sum = LLVMBuildSExt(k->b, LLVMBuildLoad2(k->b, k->i32, sump, ""), k->i64, "");
    LLVMValueRef best = LLVMBuildSub(k->b, sum, cg_i64(k, isp * (int64_t)e->x->q->zp[0]), "");
    pool_store(k, e, io[1], vp, best, cg_i64(k, isp));
    cg_loop_end(k, &lp);
    cg_par_end(k, &par, a);
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
        if (!(x->q && x->q->axis < 0) || !(y->q && y->q->axis < 0)) /* per-tensor */
            return cg_fail(k, n, "qavgpool needs per-tensor quantized operands");
        ir_clamp_range(k->g, n, y->q, &lo, &hi);
    }
    PoolEpi pe = {x, y, is_max, fl, {0}};
    if (!is_max) { /* qn_qavg, or qn_qavg_fixed with the multiplier of the window's divisor
                    * (rq.avg_init: from a table over every divisor 1..KH*KW; a global pool:
                    * its one divisor), as lib/ref */
        pe.rq = (CgRq){.mode = k->rq, .mult = NULL, .fmult = NULL, .fshift = NULL,
                       .zp = y->q->zp[0], .lo = lo, .hi = hi, .sx = x->q->scale[0],
                       .sy = y->q->scale[0], .by_count = !global};
        if (!k->rq->avg_init(k, n, &pe.rq, p.KH * p.KW, cg_range_bits(k, n->in[0])))
            return false;
    }
    if (global && p.H * p.W > 0 && p.H * p.W < ((int64_t)1 << 15)) {
        emit_global_qavg(k, &pe, a, p.NC, p.H * p.W);
        return true;
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
    pool_store(k, &pe, io[1], yi, best, is_max ? NULL : LLVMBuildLoad2(k->b, k->i64, incl ? padp : cntp, ""));
    cg_loop_end(k, &low);
    cg_loop_end(k, &loh);
    cg_loop_end(k, &lp);
    cg_par_end(k, &par, a);
    return true;
}

/* maxpool, NHWC (8- or 16-bit integers; max over the taps inside the input, as lib/ref). */
static bool
emit_maxpool_nhwc(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *x = &ir_value(g, n->in[0])->type, *y = &ir_value(g, n->out[0])->type;
    int64_t kern[2] = {1, 1};
    ir_attr_ints(g, n, "kernel_shape", kern, 2);
    CgWin w; /* 2-D: NHWC values have rank 4 */
    if (!cg_window(k, n, x, y, kern, &w))
        return false;
    const int64_t ks[2] = {w.k[0], w.k[1]}, st[2] = {w.s[0], w.s[1]}, dl[2] = {w.d[0], w.d[1]};
    const int64_t pd[2] = {w.pb[0], w.pb[1]};
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    int64_t OH = y->dims[2], OW = y->dims[3];
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef vr = cg_par_begin(k, &par, N * OH, io, 2);
    LLVMValueRef vn = LLVMBuildSDiv(k->b, vr, cg_i64(k, OH), "");
    LLVMValueRef voh = LLVMBuildSRem(k->b, vr, cg_i64(k, OH), "");
    LLVMValueRef acc = cg_entry_alloca(k, LLVMArrayType2(k->i32, (uint64_t)C));
    LLVMSetAlignment(acc, 64);
    bool sg = x->elem == ET_I8 || x->elem == ET_I16;
    int64_t es = (int64_t)elem_size(x->elem);
    ElemType me = es == 2 ? ET_U16 : ET_U8; /* moved as raw 1- or 2-byte integers */
    CgLoop low, lkh, lkw, l0, l1, l2;
    LLVMValueRef ih0 = LLVMBuildSub(k->b, cg_mul(k, voh, cg_i64(k, st[0])), cg_i64(k, pd[0]), "");
    LLVMValueRef vow = cg_loop_begin(k, &low, cg_i64(k, OW));
    LLVMValueRef iw0 = LLVMBuildSub(k->b, cg_mul(k, vow, cg_i64(k, st[1])), cg_i64(k, pd[1]), "");
    {
        LLVMValueRef vc = cg_loop_begin(k, &l0, cg_i64(k, C));
        LLVMBuildStore(k->b, cg_i32(k, INT32_MIN), LLVMBuildGEP2(k->b, k->i32, acc, &vc, 1, ""));
        cg_loop_end(k, &l0);
    }
    LLVMValueRef vkh = cg_loop_begin(k, &lkh, cg_i64(k, ks[0]));
    LLVMValueRef ih = cg_add(k, ih0, cg_mul(k, vkh, cg_i64(k, dl[0])));
    LLVMValueRef vkw = cg_loop_begin(k, &lkw, cg_i64(k, ks[1]));
    LLVMValueRef iw = cg_add(k, iw0, cg_mul(k, vkw, cg_i64(k, dl[1])));
    CgIf f;
    cg_if_begin(k, &f, LLVMBuildAnd(k->b, cg_in_range(k, ih, H), cg_in_range(k, iw, W), ""));
    {
        LLVMValueRef xb = cg_gep(k, io[0], cg_mul(k, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, H)), ih),
                                                                      cg_i64(k, W)), iw), cg_i64(k, C * es)));
        LLVMValueRef vc = cg_loop_begin(k, &l1, cg_i64(k, C));
        LLVMValueRef xv = cg_load_raw(k, me, xb, vc);
        xv = sg ? LLVMBuildSExt(k->b, xv, k->i32, "") : LLVMBuildZExt(k->b, xv, k->i32, "");
        LLVMValueRef ap = LLVMBuildGEP2(k->b, k->i32, acc, &vc, 1, "");
        LLVMValueRef cur = LLVMBuildLoad2(k->b, k->i32, ap, "");
        LLVMBuildStore(k->b, LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSGT, xv, cur, ""), xv, cur, ""), ap);
        cg_loop_end(k, &l1);
    }
    cg_if_else(k, &f);
    cg_if_end(k, &f);
    cg_loop_end(k, &lkw);
    cg_loop_end(k, &lkh);
    {
        LLVMValueRef yb = cg_mul(k, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, OH)), voh), cg_i64(k, OW)), vow),
                                 cg_i64(k, C));
        LLVMValueRef vc = cg_loop_begin(k, &l2, cg_i64(k, C));
        LLVMValueRef v = LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, acc, &vc, 1, ""), "");
        cg_store_raw(k, me, io[1], cg_add(k, yb, vc), LLVMBuildTrunc(k->b, v, es == 2 ? k->i16 : k->i8, ""));
        cg_loop_end(k, &l2);
    }
    cg_loop_end(k, &low);
    cg_par_end(k, &par, a);
    return true;
}

bool
cg_emit_pool(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (n->op == OP_MAXPOOL && cg_value_nhwc(k, n->in[0]))
        return emit_maxpool_nhwc(k, n, a);
    return emit_pool(k, n, a);
}
