/* irb/rq.c: the requantize epilogue of --requant=float|fixed as the two rows of CgRqMode
 * (irb.h), one picked per module (cg_rq_mode, Kb.rq): each entry is implemented once per mode
 * here, so the kernel emitters call k->rq->...(...) instead of branching on the mode.
 *
 * As the rest of irb/, every sequence mirrors lib/numerics step by step (the float mode's f32
 * operations in numerics' order, no fast-math flags, no FMA; the fixed mode's integer
 * qn_rescale), so the emitted code equals the reference interpreter bit for bit. */
#include "codegen/irb/irb.h"
#include "codegen/target/module.h"
#include "numerics/elementwise.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- accumulator requantization (CgRq) ---- */
static LLVMValueRef
rq_float_acc(Kb *k, const CgRq *rq, LLVMValueRef acc, LLVMValueRef m)
{
    return cg_requant_float(k, acc, cg_load_raw(k, ET_F32, rq->mult, m), rq->zp, rq->lo, rq->hi);
}

static LLVMValueRef
rq_fixed_acc(Kb *k, const CgRq *rq, LLVMValueRef acc, LLVMValueRef m)
{
    return cg_requant_fixed(k, acc, cg_load_i64(k, ET_I64, rq->fmult, m),
                            cg_load_i64(k, ET_I64, rq->fshift, m), rq->zp, rq->lo, rq->hi);
}

/* qn_requant_float_wide: as cg_requant_float after the product */
static LLVMValueRef
rq_float_acc_wide(Kb *k, const CgRq *rq, LLVMValueRef acc, LLVMValueRef m)
{
    LLVMBuilderRef b = k->b;
    LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, acc, k->f32, ""),
                                   cg_load_raw(k, ET_F32, rq->mult, m), "");
    LLVMValueRef flo = cg_f32(k, (float)((int64_t)rq->lo - rq->zp)), fhi = cg_f32(k, (float)((int64_t)rq->hi - rq->zp));
    f = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, f, flo, ""), flo, f, "");
    f = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, f, fhi, ""), fhi, f, "");
    return cg_finish_f32(k, f, cg_i64(k, rq->zp), rq->lo, rq->hi);
}

/* qn_requant_fixed_wide */
static LLVMValueRef
rq_fixed_acc_wide(Kb *k, const CgRq *rq, LLVMValueRef acc, LLVMValueRef m)
{
    LLVMValueRef v = cg_build_rescale_wide(k->b, acc, cg_load_i64(k, ET_I64, rq->fmult, m),
                                           cg_load_i64(k, ET_I64, rq->fshift, m));
    return cg_add_sat(k, v, rq->zp, rq->lo, rq->hi);
}

static void
rq_float_store(Kb *k, const CgRq *rq, ElemType ye, LLVMValueRef y, LLVMValueRef yi,
               LLVMValueRef a32, LLVMValueRef a64)
{
    (void)a64;
    LLVMValueRef v32 = cg_requant_float_i32(k, a32, rq->mult, rq->zp, rq->lo, rq->hi);
    cg_store_raw(k, ye, y, yi, LLVMBuildTrunc(k->b, v32, elem_size(ye) == 2 ? k->i16 : k->i8, ""));
}

static void
rq_fixed_store(Kb *k, const CgRq *rq, ElemType ye, LLVMValueRef y, LLVMValueRef yi,
               LLVMValueRef a32, LLVMValueRef a64)
{
    (void)a32;
    cg_store_i64(k, ye, y, yi, cg_requant_fixed(k, a64, rq->fmult, rq->fshift, rq->zp, rq->lo, rq->hi));
}

/* qn_qavg: v = ((f32)sum * sx) / (f32)count; finish(v / sy) */
static LLVMValueRef
rq_float_avg(Kb *k, const CgRq *rq, LLVMValueRef sum, LLVMValueRef cnt)
{
    LLVMValueRef v = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, sum, k->f32, ""), cg_f32(k, rq->sx), "");
    v = LLVMBuildFDiv(k->b, v, LLVMBuildSIToFP(k->b, cnt, k->f32, ""), "");
    v = LLVMBuildFDiv(k->b, v, cg_f32(k, rq->sy), "");
    return cg_finish_f32(k, v, cg_i64(k, rq->zp), rq->lo, rq->hi);
}

/* qn_qavg_fixed: sat(qn_rescale(sum, m) + zy), m the multiplier of the divisor */
static LLVMValueRef
rq_fixed_avg(Kb *k, const CgRq *rq, LLVMValueRef sum, LLVMValueRef cnt)
{
    LLVMValueRef v;
    if (rq->by_count) {
        LLVMValueRef ci = cg_smax(k, cnt, cg_i64(k, 0));
        v = cg_rescale(k, sum, cg_load_raw(k, ET_I64, rq->fmult, ci), cg_load_raw(k, ET_I64, rq->fshift, ci));
    } else {
        v = cg_rescale(k, sum, rq->fmult, rq->fshift);
    }
    return cg_add_sat(k, v, rq->zp, rq->lo, rq->hi);
}

/* ---- compile-time constants ---- */
static int64_t
rq_float_channels(float sx, const float *sw, int64_t nsw, float sy, int64_t nch, float *mult,
                  QnFixed *fix)
{
    (void)fix;
    return qn_requant_channels(sx, sw, nsw, sy, nch, mult, NULL);
}

static int64_t
rq_fixed_channels(float sx, const float *sw, int64_t nsw, float sy, int64_t nch, float *mult,
                  QnFixed *fix)
{
    return qn_requant_channels(sx, sw, nsw, sy, nch, mult, fix);
}

static bool
rq_float_mult_ok(float sx, float sw, float sy)
{
    (void)sx;
    (void)sw;
    (void)sy;
    return true;
}

static bool
rq_fixed_mult_ok(float sx, float sw, float sy)
{
    QnFixed f;
    return qn_requant_fixed_mult(sx, sw, sy, &f);
}

static bool
rq_float_avg_init(Kb *k, Node *n, CgRq *rq, int64_t cnt, int bits)
{
    (void)k;
    (void)n;
    (void)rq;
    (void)cnt;
    (void)bits;
    return true;
}

/* qn_qavg_fixed_params of one divisor, or tables over every divisor 1..cnt (as lib/ref) */
static bool
rq_fixed_avg_init(Kb *k, Node *n, CgRq *rq, int64_t cnt, int bits)
{
    if (!rq->by_count) {
        QnFixed f = {0, 0};
        if (!cg_fixed_ok(k, n, qn_qavg_fixed_params(rq->sx, rq->sy, cnt, bits, &f)))
            return false;
        rq->fmult = cg_i64(k, f.mult);
        rq->fshift = cg_i64(k, f.shift);
        return true;
    }
    int64_t *fm = xcalloc((size_t)cnt + 1, sizeof *fm);
    int64_t *fs = xcalloc((size_t)cnt + 1, sizeof *fs);
    bool ok = true;
    fs[0] = 31; /* divisor 0 (a window of padding only): the emitter stores sat(zy) instead */
    for (int64_t d = 1; d <= cnt && ok; d++) {
        QnFixed f = {0, 31};
        ok = cg_fixed_ok(k, n, qn_qavg_fixed_params(rq->sx, rq->sy, d, bits, &f));
        fm[d] = f.mult;
        fs[d] = f.shift;
    }
    if (ok) {
        rq->fmult = cg_const_bytes(k, fm, (size_t)(cnt + 1) * sizeof *fm, "avgm");
        rq->fshift = cg_const_bytes(k, fs, (size_t)(cnt + 1) * sizeof *fs, "avgs");
    }
    free(fm);
    free(fs);
    return ok;
}

static bool
rq_float_elem_fixed(Kb *k, Node *n, CgElemFixed *f)
{
    (void)k;
    (void)n;
    (void)f;
    return true;
}

/* ---- element-wise ops (CgRqElem) ---- */
enum { EV_ZA0, EV_SA0, EV_ZA1, EV_SA1, EV_SY, EV_ZY, EV_FLO, EV_FHI, EV_RSY, EV_NQ };

/* Whether the division by sy may be a multiplication (elementwise.h qn_div_as_recip, over the
 * operands' whole 8-bit storage ranges: a graph input may hold any byte). */
static void
ev_recip(CgRqElem *e)
{
    static const QnElemOp ops[] = {[OP_REQUANTIZE] = QN_REQUANTIZE, [OP_QADD] = QN_QADD,
                                   [OP_QSUB] = QN_QSUB, [OP_QMUL] = QN_QMUL};
    int32_t lo[2] = {0, 0}, hi[2] = {0, 0};
    float s[2] = {0, 0};
    int32_t z[2] = {0, 0};
    for (uint32_t j = 0; j < e->nop; j++) {
        bool sgn = e->t[j]->elem == ET_I8;
        lo[j] = sgn ? -128 : 0;
        hi[j] = sgn ? 127 : 255;
        s[j] = e->t[j]->q->scale[0];
        z[j] = e->t[j]->q->zp[0];
    }
    e->recip = qn_div_as_recip(ops[e->n->op], s[0], z[0], lo[0], hi[0], s[1], z[1], lo[1], hi[1],
                               e->y->q->scale[0], e->y->q->zp[0], e->lo, e->hi, &e->inv);
}

static void
ev_table(Kb *k, CgRqElem *e)
{
    uint32_t v[EV_NQ] = {0};
    float f;
    for (uint32_t j = 0; j < e->nop; j++) {
        v[EV_ZA0 + 2 * j] = (uint32_t)e->t[j]->q->zp[0];
        memcpy(&v[EV_SA0 + 2 * j], &e->t[j]->q->scale[0], 4);
    }
    int32_t zy = e->y->q->zp[0];
    memcpy(&v[EV_SY], &e->y->q->scale[0], 4);
    v[EV_ZY] = (uint32_t)zy;
    f = (float)((int64_t)e->lo - zy);
    memcpy(&v[EV_FLO], &f, 4);
    f = (float)((int64_t)e->hi - zy);
    memcpy(&v[EV_FHI], &f, 4);
    memcpy(&v[EV_RSY], &e->inv, 4);
    e->gq = cg_const_bytes(k, v, sizeof v, "evq");
}

static bool
rq_float_elem_init(Kb *k, CgRqElem *e, bool vec)
{
    if (vec) {
        ev_recip(e);
        ev_table(k, e);
    }
    return true;
}

static bool
rq_fixed_elem_init(Kb *k, CgRqElem *e, bool vec)
{
    (void)vec;
    return cg_elem_fixed(k, e->n, &e->fx);
}

/* qn_requantize / qn_qadd / qn_qsub / qn_qmul: sa * (float)d per operand, the op, / sy, finish */
static LLVMValueRef
rq_float_elem(Kb *k, const CgRqElem *e, LLVMValueRef *d)
{
    LLVMValueRef v[2], r;
    for (uint32_t i = 0; i < e->nop; i++)
        v[i] = LLVMBuildFMul(k->b, cg_f32(k, e->t[i]->q->scale[0]), LLVMBuildSIToFP(k->b, d[i], k->f32, ""), "");
    switch (e->n->op) {
    case OP_QADD: r = LLVMBuildFAdd(k->b, v[0], v[1], ""); break;
    case OP_QSUB: r = LLVMBuildFSub(k->b, v[0], v[1], ""); break;
    case OP_QMUL: r = LLVMBuildFMul(k->b, v[0], v[1], ""); break;
    default: r = v[0]; break;
    }
    r = LLVMBuildFDiv(k->b, r, cg_f32(k, e->y->q->scale[0]), "");
    return cg_finish_f32(k, r, cg_i64(k, e->y->q->zp[0]), e->lo, e->hi);
}

static LLVMValueRef
rq_fixed_elem(Kb *k, const CgRqElem *e, LLVMValueRef *d)
{
    return cg_add_sat(k, cg_elem_fixed_value(k, e->n, &e->fx, d), e->y->q->zp[0], e->lo, e->hi);
}

static void
rq_float_elem_vec_load(Kb *k, CgRqElem *e)
{
    if (!e->gq)
        return;
    LLVMValueRef *dst[EV_NQ] = {&e->za[0], &e->sa[0], &e->za[1], &e->sa[1], &e->sy,
                                &e->zy,    &e->flo,   &e->fhi,   &e->rsy};
    for (int i = 0; i < EV_NQ; i++) {
        bool is_int = i == EV_ZA0 || i == EV_ZA1 || i == EV_ZY;
        LLVMTypeRef t = is_int ? k->i32 : k->f32;
        LLVMValueRef idx = cg_i64(k, i);
        *dst[i] = LLVMBuildLoad2(k->b, t, LLVMBuildGEP2(k->b, t, e->gq, &idx, 1, ""), "");
    }
}

static void
rq_fixed_elem_vec_load(Kb *k, CgRqElem *e)
{
    (void)k;
    (void)e;
}

static LLVMValueRef
rq_float_elem_vec_operand(Kb *k, const CgRqElem *e, uint32_t j, LLVMValueRef x, unsigned lanes)
{
    LLVMTypeRef w = k->i32, f = k->f32;
    if (lanes) {
        w = LLVMVectorType(w, lanes);
        f = LLVMVectorType(f, lanes);
    }
    x = e->t[j]->elem == ET_I8 ? LLVMBuildSExt(k->b, x, w, "") : LLVMBuildZExt(k->b, x, w, "");
    LLVMValueRef za = e->za[j];
    x = LLVMBuildSub(k->b, x, lanes ? cg_vsplat(k, za, lanes) : za, "");
    return LLVMBuildFMul(k->b, lanes ? cg_vsplat(k, e->sa[j], lanes) : e->sa[j],
                         LLVMBuildSIToFP(k->b, x, f, ""), "");
}

static LLVMValueRef
rq_fixed_elem_vec_operand(Kb *k, const CgRqElem *e, uint32_t j, LLVMValueRef x, unsigned lanes)
{
    LLVMTypeRef w = k->i64;
    if (lanes)
        w = LLVMVectorType(w, lanes);
    x = e->t[j]->elem == ET_I8 ? LLVMBuildSExt(k->b, x, w, "") : LLVMBuildZExt(k->b, x, w, "");
    LLVMValueRef za = LLVMConstInt(k->i64, (unsigned long long)e->t[j]->q->zp[0], 1);
    return LLVMBuildSub(k->b, x, lanes ? cg_vsplat(k, za, lanes) : za, "");
}

/* The f32 sequence of elementwise.h (sa * (float)(a - za), op, / sy, one operation each, in
 * that order, no FMA), then clamp to [lo - zy, hi - zy] (exact in f32 for 8-bit results; NaN
 * -> 0), round half to even, + zy: qn_saturate(rne(v) + zy, lo, hi), since rounding is
 * monotone and leaves those integer bounds alone. */
static LLVMValueRef
rq_float_elem_vec(Kb *k, const CgRqElem *e, LLVMValueRef *v, unsigned lanes)
{
    LLVMTypeRef vi = LLVMVectorType(k->i32, lanes), vf = LLVMVectorType(k->f32, lanes);
    LLVMValueRef r = v[0];
    switch (e->n->op) {
    case OP_QADD: r = LLVMBuildFAdd(k->b, v[0], v[1], ""); break;
    case OP_QSUB: r = LLVMBuildFSub(k->b, v[0], v[1], ""); break;
    case OP_QMUL: r = LLVMBuildFMul(k->b, v[0], v[1], ""); break;
    default: break;
    }
    r = e->recip ? LLVMBuildFMul(k->b, r, cg_vsplat(k, e->rsy, lanes), "")
                 : LLVMBuildFDiv(k->b, r, cg_vsplat(k, e->sy, lanes), "");
    LLVMValueRef flo = cg_vsplat(k, e->flo, lanes);
    LLVMValueRef fhi = cg_vsplat(k, e->fhi, lanes);
    r = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealUNO, r, r, ""), LLVMConstNull(vf), r, "");
    r = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOLT, r, flo, ""), flo, r, "");
    r = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, r, fhi, ""), fhi, r, "");
    const char *rn = "llvm.roundeven";
    unsigned id = LLVMLookupIntrinsicID(rn, strlen(rn));
    LLVMValueRef rf = LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, &vf, 1),
                                     LLVMGetIntrinsicDeclaration(k->mod, id, &vf, 1), &r, 1, "");
    return LLVMBuildAdd(k->b, LLVMBuildFPToSI(k->b, rf, vi, ""), cg_vsplat(k, e->zy, lanes), "");
}

/* cg_elem_fixed_value lane by lane (the scalar kernel's integers), then cg_add_sat */
static LLVMValueRef
rq_fixed_elem_vec(Kb *k, const CgRqElem *e, LLVMValueRef *v, unsigned lanes)
{
    (void)lanes;
    return cg_add_sat(k, cg_elem_fixed_value(k, e->n, &e->fx, v), e->y->q->zp[0], e->lo, e->hi);
}

/* ---- vector epilogue over per-channel tables ---- */
static void
rq_float_vec_tables(Kb *k, const float *mult, const int32_t *fmult, const int32_t *fshift,
                    int64_t M, const char *tag, CgRqTables *tb)
{
    (void)fmult;
    (void)fshift;
    char name[32];
    snprintf(name, sizeof name, "%sm", tag);
    tb->gm = cg_const_bytes(k, mult, (size_t)(M > 0 ? M : 1) * sizeof(float), name);
}

static void
rq_fixed_vec_tables(Kb *k, const float *mult, const int32_t *fmult, const int32_t *fshift,
                    int64_t M, const char *tag, CgRqTables *tb)
{
    (void)mult;
    size_t nm = (size_t)(M > 0 ? M : 1);
    int64_t *fm = xcalloc(nm, sizeof *fm), *fr = xcalloc(nm, sizeof *fr), *fs = xcalloc(nm, sizeof *fs);
    for (int64_t m = 0; m < M; m++) {
        fm[m] = fmult[m];
        fs[m] = fshift[m];
        fr[m] = (int64_t)1 << (fshift[m] - 1);
    }
    char name[32];
    snprintf(name, sizeof name, "%sfm", tag);
    tb->gfm = cg_const_bytes(k, fm, nm * sizeof *fm, name);
    snprintf(name, sizeof name, "%sfr", tag);
    tb->gfr = cg_const_bytes(k, fr, nm * sizeof *fr, name);
    snprintf(name, sizeof name, "%sfs", tag);
    tb->gfs = cg_const_bytes(k, fs, nm * sizeof *fs, name);
    free(fm);
    free(fr);
    free(fs);
}

static LLVMValueRef
rq_float_vec_clamp_table(Kb *k, int32_t zo, int32_t lo, int32_t hi, const char *tag)
{
    float f[2] = {(float)((int64_t)lo - zo), (float)((int64_t)hi - zo)};
    int32_t v[5];
    memcpy(&v[0], &f[0], 4);
    memcpy(&v[1], &f[1], 4);
    v[2] = zo;
    v[3] = lo;
    v[4] = hi;
    return cg_const_bytes(k, v, sizeof v, tag);
}

static LLVMValueRef
rq_fixed_vec_clamp_table(Kb *k, int32_t zo, int32_t lo, int32_t hi, const char *tag)
{
    int64_t v[3] = {zo, lo, hi};
    return cg_const_bytes(k, v, sizeof v, tag);
}

static void
clamp_load(Kb *k, LLVMValueRef gq, LLVMValueRef *q, const LLVMTypeRef *t, int nq)
{
    for (int i = 0; i < nq; i++) {
        LLVMValueRef idx = cg_i64(k, i);
        q[i] = LLVMBuildLoad2(k->b, t[i], LLVMBuildGEP2(k->b, t[i], gq, &idx, 1, ""), "");
    }
}

static void
rq_float_vec_clamp_load(Kb *k, LLVMValueRef gq, LLVMValueRef *q)
{
    LLVMTypeRef t[5] = {k->f32, k->f32, k->i32, k->i32, k->i32};
    clamp_load(k, gq, q, t, 5);
}

static void
rq_fixed_vec_clamp_load(Kb *k, LLVMValueRef gq, LLVMValueRef *q)
{
    LLVMTypeRef t[3] = {k->i64, k->i64, k->i64};
    clamp_load(k, gq, q, t, 3);
}

/* qn_requant_float: f32 product, clamp to [lo - zo, hi - zo] (8-bit results: exact in f32, so
 * rne(f) + zo is already within [lo, hi]), rne */
static LLVMValueRef
rq_float_vec(Kb *k, const CgRqLanes *l, LLVMValueRef acc, unsigned n)
{
    LLVMTypeRef vf = LLVMVectorType(k->f32, n);
    LLVMValueRef f = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, acc, vf, ""), l->lanes(l->ctx, l->tb->gm, k->f32), "");
    LLVMValueRef flo = cg_vsplat(k, l->q[0], n);
    LLVMValueRef fhi = cg_vsplat(k, l->q[1], n);
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOLT, f, flo, ""), flo, f, "");
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, f, fhi, ""), fhi, f, "");
    f = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealUNO, f, f, ""), LLVMConstNull(vf), f, "");
    const char *rn = "llvm.roundeven";
    unsigned id = LLVMLookupIntrinsicID(rn, strlen(rn));
    LLVMValueRef rf = LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, &vf, 1),
                                     LLVMGetIntrinsicDeclaration(k->mod, id, &vf, 1), &f, 1, "");
    LLVMValueRef out = LLVMBuildFPToSI(k->b, rf, LLVMTypeOf(acc), "");
    return LLVMBuildAdd(k->b, out, cg_vsplat(k, l->q[2], n), "");
}

static LLVMValueRef
vselect_lt(Kb *k, LLVMValueRef v, LLVMValueRef bound, bool less_than)
{
    LLVMValueRef c = LLVMBuildICmp(k->b, less_than ? LLVMIntSLT : LLVMIntSGT, v, bound, "");
    return LLVMBuildSelect(k->b, c, bound, v, "");
}

/* qn_requant_fixed: ((int64)acc * M + 2^(s-1)) >> s (floor), + zo, saturate */
static LLVMValueRef
rq_fixed_vec(Kb *k, const CgRqLanes *l, LLVMValueRef acc, unsigned n)
{
    LLVMTypeRef vi64 = LLVMVectorType(k->i64, n);
    LLVMValueRef w = LLVMBuildMul(k->b, LLVMBuildSExt(k->b, acc, vi64, ""), l->lanes(l->ctx, l->tb->gfm, k->i64), "");
    w = LLVMBuildAShr(k->b, LLVMBuildAdd(k->b, w, l->lanes(l->ctx, l->tb->gfr, k->i64), ""),
                      l->lanes(l->ctx, l->tb->gfs, k->i64), "");
    w = LLVMBuildAdd(k->b, w, cg_vsplat(k, l->q[0], n), "");
    w = vselect_lt(k, w, cg_vsplat(k, l->q[1], n), true);
    w = vselect_lt(k, w, cg_vsplat(k, l->q[2], n), false);
    return LLVMBuildTrunc(k->b, w, LLVMTypeOf(acc), "");
}

static bool
rq_float_vec_short_ok(const float *mult, const double *amax, int64_t M)
{
    for (int64_t m = 0; m < M; m++) {
        double f = mult[m];
        if (!(f >= 0 && f * amax[m] < 1073741824.0))
            return false;
    }
    return true;
}

static bool
rq_fixed_vec_short_ok(const float *mult, const double *amax, int64_t M)
{
    (void)mult;
    (void)amax;
    (void)M;
    return false;
}

const CgRqMode *
cg_rq_mode(bool fixed)
{
    static const CgRqMode rows[2] = {
        {IRB_EPI_REQUANT_FLOAT, rq_float_acc, rq_float_acc_wide, rq_float_store, rq_float_avg,
         rq_float_channels, rq_float_mult_ok, rq_float_avg_init, rq_float_elem_fixed,
         rq_float_elem_init, rq_float_elem, rq_float_elem_vec_load, rq_float_elem_vec_operand,
         rq_float_elem_vec, rq_float_vec_tables, rq_float_vec_clamp_table, rq_float_vec_clamp_load,
         rq_float_vec, rq_float_vec_short_ok},
        {IRB_EPI_REQUANT_FIXED, rq_fixed_acc, rq_fixed_acc_wide, rq_fixed_store, rq_fixed_avg,
         rq_fixed_channels, rq_fixed_mult_ok, rq_fixed_avg_init, cg_elem_fixed,
         rq_fixed_elem_init, rq_fixed_elem, rq_fixed_elem_vec_load, rq_fixed_elem_vec_operand,
         rq_fixed_elem_vec, rq_fixed_vec_tables, rq_fixed_vec_clamp_table, rq_fixed_vec_clamp_load,
         rq_fixed_vec, rq_fixed_vec_short_ok},
    };
    return &rows[fixed ? 1 : 0];
}
