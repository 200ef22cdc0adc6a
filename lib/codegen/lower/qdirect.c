/* qdirect.c: integer ops that do not map onto one GEMM, as direct loops:
 *   qconv_transpose: scatter form of lib/ref (y[o*s - pb + k*d] += (x - zx)(w - zw)) into an
 *                    int64 accumulator row in scratch per (batch, output channel), then the
 *                    epilogue of that channel;
 *   qmatmul with a run-time (or batched) right operand: acc = bias[j] + sum_k (a - za)(b - zb[j])
 *                    with numpy batch broadcasting.
 * The accumulator is the int32 of docs/ir.md (wrapped like the GEMM and the reference), or for
 * 16-bit activations the exact int64 (qn_requant_*_wide). Epilogues (requantize float|fixed, clamp, i32, f32) are those of the GEMM, computed
 * with the constants lib/ref computes (qn_requant_mult_f32, qn_requant_fixed_mult). */
#include "codegen/lower/lower.h"

#include "numerics/numerics.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

typedef enum { QE_I32, QE_F32, QE_RQ } QeKind;

typedef struct Qe {
    QeKind kind;
    bool wide; /* 16-bit activations: the int64 accumulator, not wrapped */
    ElemType ye;
    LLVMValueRef mult; /* QE_F32: per channel f32 constant array */
    CgRq rq;           /* QE_RQ: the requantization, its per channel constant arrays */
} Qe;

/* Per-channel epilogue of n with nch output channels; channel m uses weight scale m % wmod. */
static bool
qe_init(Kb *k, Node *n, int64_t nch, int64_t wmod, Qe *e)
{
    Graph *g = k->g;
    const Type *xt = &ir_value(g, n->in[0])->type, *wt = &ir_value(g, n->in[1])->type;
    const Type *yt = &ir_value(g, n->out[0])->type;
    const QParams *xq = xt->q, *wq = wt->q;
    memset(e, 0, sizeof *e);
    if (!xq || xq->axis >= 0 || !wq)
        return cg_fail(k, n, "operand 0 must be per-tensor quantized and operand 1 quantized");
    if (wq->axis >= 0 && wq->n != (uint32_t)wmod)
        return cg_fail(k, n, "weight has %u scales, expected %lld", wq->n, (long long)wmod);
    e->ye = yt->elem;
    e->wide = xt->elem == ET_I16 || xt->elem == ET_U16;
    if (e->wide && yt->q && elem_size(yt->elem) > 2)
        return cg_fail(k, n, "16-bit activations requantize to 8 or 16 bits");
    float sx = xq->scale[0];
    size_t cnt = (size_t)(nch > 0 ? nch : 1);
    float *mult = xcalloc(cnt, sizeof(float));
    int64_t *fm = xcalloc(cnt, sizeof(int64_t)), *fs = xcalloc(cnt, sizeof(int64_t));
    bool ok = true;
    if (yt->elem == ET_I32 && !yt->q) {
        e->kind = QE_I32;
    } else if (yt->elem == ET_F32 && !yt->q) {
        e->kind = QE_F32;
        for (int64_t m = 0; m < nch; m++)
            mult[m] = sx * wq->scale[wq->axis >= 0 ? m % wmod : 0];
    } else if (!yt->q || yt->q->axis >= 0 || !elem_is_int(yt->elem)) {
        ok = cg_fail(k, n, "result must be per-tensor quantized, i32 or f32");
    } else {
        e->kind = QE_RQ;
        e->rq.zp = yt->q->zp[0];
        ir_clamp_range(k->g, n, yt->q, &e->rq.lo, &e->rq.hi);
        QnFixed *fix = xcalloc(cnt, sizeof *fix); /* float mode: left 0 */
        int64_t bad = k->rq->channels(sx, wq->scale, wq->axis >= 0 ? wmod : 1, yt->q->scale[0],
                                      nch, mult, fix);
        for (int64_t m = 0; m < (bad < 0 ? nch : bad); m++) {
            fm[m] = fix[m].mult;
            fs[m] = fix[m].shift;
        }
        free(fix);
        if (bad >= 0)
            ok = cg_fail(k, n, "requantization multiplier of channel %lld is not representable "
                         "in fixed point", (long long)bad);
    }
    if (ok) {
        e->mult = cg_const_bytes(k, mult, cnt * sizeof(float), "mult");
        e->rq.mode = k->rq;
        e->rq.mult = e->mult;
        e->rq.fmult = cg_const_bytes(k, fm, cnt * sizeof(int64_t), "fm");
        e->rq.fshift = cg_const_bytes(k, fs, cnt * sizeof(int64_t), "fs");
    }
    free(mult);
    free(fm);
    free(fs);
    return ok;
}

/* Store the epilogue of accumulator acc (i64, wrapped to int32 here) of channel m at y[yi]. */
static void
qe_store(Kb *k, const Qe *e, LLVMValueRef y, LLVMValueRef yi, LLVMValueRef acc, LLVMValueRef m)
{
    LLVMBuilderRef b = k->b;
    if (e->wide && e->kind == QE_RQ) { /* the exact int64 accumulator */
        cg_store_i64(k, e->ye, y, yi, e->rq.mode->acc_wide(k, &e->rq, acc, m));
        return;
    }
    if (e->wide && e->kind == QE_F32) {
        LLVMValueRef f = LLVMBuildFMul(b, LLVMBuildSIToFP(b, acc, k->f32, ""),
                                       cg_load_raw(k, ET_F32, e->mult, m), "");
        cg_store_raw(k, ET_F32, y, yi, f);
        return;
    }
    acc = LLVMBuildSExt(b, LLVMBuildTrunc(b, acc, k->i32, ""), k->i64, "");
    switch (e->kind) {
    case QE_I32:
        cg_store_i64(k, ET_I32, y, yi, acc);
        break;
    case QE_F32: {
        LLVMValueRef f = LLVMBuildSIToFP(b, LLVMBuildTrunc(b, acc, k->i32, ""), k->f32, "");
        cg_store_raw(k, ET_F32, y, yi, LLVMBuildFMul(b, f, cg_load_raw(k, ET_F32, e->mult, m), ""));
        break;
    }
    case QE_RQ:
        cg_store_i64(k, e->ye, y, yi, e->rq.mode->acc(k, &e->rq, acc, m));
        break;
    }
}

/* Zero points of a quantized operand along its axis as an i32 constant array (per tensor: one
 * entry); *axis = q->axis. */
static LLVMValueRef
zp_table(Kb *k, const QParams *q)
{
    return cg_const_bytes(k, q->zp, (q->axis >= 0 ? q->n : 1) * sizeof(int32_t), "zp");
}

static bool
convt_geo(Kb *k, Node *n, CgWin *w, int64_t *N, int64_t *C, int64_t *M, int64_t *G)
{
    Graph *g = k->g;
    const Type *x = &ir_value(g, n->in[0])->type, *wt = &ir_value(g, n->in[1])->type;
    const Type *y = &ir_value(g, n->out[0])->type;
    if (ir_attr(g, n, "output_shape"))
        return cg_fail(k, n, "'output_shape' is not supported (use pads)");
    if (wt->rank != x->rank)
        return cg_fail(k, n, "weight rank %d does not match input rank %d", wt->rank, x->rank);
    int64_t ks[3] = {1, 1, 1};
    for (int i = 0; i < x->rank - 2 && i < 3; i++)
        ks[i] = wt->dims[2 + i];
    if (!cg_window(k, n, x, y, ks, w))
        return false;
    *N = x->dims[0];
    *C = x->dims[1];
    *M = y->dims[1];
    *G = ir_attr_int(g, n, "group", 1);
    if (*G <= 0 || *C % *G || *M % *G || wt->dims[0] != *C || wt->dims[1] != *M / *G)
        return cg_fail(k, n, "invalid group count or weight shape");
    return true;
}

static int64_t
win_osp(const CgWin *w)
{
    return w->out[0] * w->out[1] * w->out[2];
}

static bool
emit_qconvt(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    CgWin w;
    int64_t N = 0, C = 0, M = 0, G = 0;
    if (!convt_geo(k, n, &w, &N, &C, &M, &G))
        return false;
    const Type *xt = &ir_value(g, n->in[0])->type, *wt = &ir_value(g, n->in[1])->type;
    if (!elem_is_int(xt->elem) || !elem_is_int(wt->elem) || !wt->q || !xt->q ||
        (wt->q->axis >= 0 && wt->q->axis != 1))
        return cg_fail(k, n, "weights must be quantized per tensor or per axis 1");
    bool has_b = n->nin > 2 && n->in[2].id;
    if (has_b && ir_value(g, n->in[2])->type.elem != ET_I32)
        return cg_fail(k, n, "the bias must be i32");
    int64_t Cg = C / G, Mg = M / G;
    Qe e;
    if (!qe_init(k, n, M, Mg, &e))
        return false;
    LLVMValueRef zw = zp_table(k, wt->q);
    bool wpc = wt->q->axis >= 0;
    LLVMBuilderRef b = k->b;
    int64_t isp = w.in[0] * w.in[1] * w.in[2], osp = win_osp(&w);
    int64_t ksp = w.k[0] * w.k[1] * w.k[2];
    LLVMValueRef acc = a->scratch;
    CgLoop ln, lm, lo, lc, li[3], lk[3];
    LLVMValueRef vn = cg_loop_begin(k, &ln, cg_i64(k, N));
    LLVMValueRef vm = cg_loop_begin(k, &lm, cg_i64(k, M));
    LLVMValueRef grp = LLVMBuildSDiv(b, vm, cg_i64(k, Mg), ""), mm = LLVMBuildSRem(b, vm, cg_i64(k, Mg), "");
    LLVMValueRef bias = has_b ? cg_load_i64(k, ET_I32, a->in[2], vm) : cg_i64(k, 0);
    LLVMValueRef vo = cg_loop_begin(k, &lo, cg_i64(k, osp));
    cg_store_i64(k, ET_I64, acc, vo, bias);
    cg_loop_end(k, &lo);
    LLVMValueRef zwm = cg_load_i64(k, ET_I32, zw, wpc ? mm : cg_i64(k, 0));
    LLVMValueRef vc = cg_loop_begin(k, &lc, cg_i64(k, Cg));
    LLVMValueRef cc = cg_add(k, cg_mul(k, grp, cg_i64(k, Cg)), vc);
    LLVMValueRef xb = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, C)), cc), cg_i64(k, isp));
    LLVMValueRef wb = cg_mul(k, cg_add(k, cg_mul(k, cc, cg_i64(k, Mg)), mm), cg_i64(k, ksp));
    LLVMValueRef iv[3], kv[3], ov[3];
    for (int d = 0; d < 3; d++)
        iv[d] = cg_loop_begin(k, &li[d], cg_i64(k, w.in[d]));
    LLVMValueRef xi = cg_add(k, xb, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, iv[0], cg_i64(k, w.in[1])), iv[1]),
                                                      cg_i64(k, w.in[2])), iv[2]));
    LLVMValueRef xv = LLVMBuildSub(b, cg_load_i64(k, xt->elem, a->in[0], xi), cg_i64(k, xt->q->zp[0]), "");
    LLVMValueRef inb = LLVMConstInt(k->i1, 1, 0);
    for (int d = 0; d < 3; d++) {
        kv[d] = cg_loop_begin(k, &lk[d], cg_i64(k, w.k[d]));
        ov[d] = cg_add(k, LLVMBuildSub(b, cg_mul(k, iv[d], cg_i64(k, w.s[d])), cg_i64(k, w.pb[d]), ""),
                       cg_mul(k, kv[d], cg_i64(k, w.d[d])));
        inb = LLVMBuildAnd(b, inb, LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, ov[d], cg_i64(k, 0), ""),
                                                LLVMBuildICmp(b, LLVMIntSLT, ov[d], cg_i64(k, w.out[d]), ""), ""), "");
    }
    LLVMValueRef oi = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, ov[0], cg_i64(k, w.out[1])), ov[1]), cg_i64(k, w.out[2])), ov[2]);
    oi = LLVMBuildSelect(b, inb, oi, cg_i64(k, 0), "");
    LLVMValueRef wi = cg_add(k, wb, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, kv[0], cg_i64(k, w.k[1])), kv[1]),
                                                    cg_i64(k, w.k[2])), kv[2]));
    LLVMValueRef wv = LLVMBuildSub(b, cg_load_i64(k, wt->elem, a->in[1], wi), zwm, "");
    LLVMValueRef prod = LLVMBuildSelect(b, inb, cg_mul(k, xv, wv), cg_i64(k, 0), "");
    cg_store_i64(k, ET_I64, acc, oi, cg_add(k, cg_load_i64(k, ET_I64, acc, oi), prod));
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lk[d]);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &li[d]);
    cg_loop_end(k, &lc);
    vo = cg_loop_begin(k, &lo, cg_i64(k, osp));
    LLVMValueRef yi = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, M)), vm), cg_i64(k, osp)), vo);
    qe_store(k, &e, a->out[0], yi, cg_load_i64(k, ET_I64, acc, vo), vm);
    cg_loop_end(k, &lo);
    cg_loop_end(k, &lm);
    cg_loop_end(k, &ln);
    return true;
}

bool
cg_qmatmul_dynamic(Kb *k, Node *n)
{
    const Type *bt = &ir_value(k->g, n->in[1])->type;
    return n->op == OP_QMATMUL && (bt->rank != 2 || !ir_const_of(k->g, n->in[1]));
}

static bool
emit_qmatmul(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *at = &ir_value(g, n->in[0])->type, *bt = &ir_value(g, n->in[1])->type;
    if (!at->q || !bt->q || !elem_is_int(at->elem) || !elem_is_int(bt->elem))
        return cg_fail(k, n, "operands must be quantized integers");
    Type a2, b2;
    ir_matmul_promote(at, bt, &a2, &b2);
    int64_t M = a2.dims[a2.rank - 2], K = a2.dims[a2.rank - 1], N = b2.dims[b2.rank - 1];
    if (b2.dims[b2.rank - 2] != K)
        return cg_fail(k, n, "inner dimensions %lld and %lld differ", (long long)K,
                       (long long)b2.dims[b2.rank - 2]);
    if (bt->q->axis >= 0 && bt->q->axis != bt->rank - 1)
        return cg_fail(k, n, "the right operand must be quantized per tensor or per column");
    bool has_b = n->nin > 2 && n->in[2].id;
    if (has_b && ir_value(g, n->in[2])->type.elem != ET_I32)
        return cg_fail(k, n, "the bias must be i32");
    Type ba = a2, bb = b2, batch;
    ba.rank -= 2;
    bb.rank -= 2;
    if (!shape_broadcast(&ba, &bb, &batch))
        return cg_fail(k, n, "batch dimensions do not broadcast");
    Qe e;
    if (!qe_init(k, n, N, N, &e))
        return false;
    int64_t st[3][IR_MAX_RANK];
    type_bcast_strides(&ba, &batch, st[0]);
    type_bcast_strides(&bb, &batch, st[1]);
    type_strides(&batch, st[2]);
    for (int d = 0; d < batch.rank; d++) {
        st[0][d] *= M * K;
        st[1][d] *= K * N;
        st[2][d] *= M * N;
    }
    LLVMValueRef zb = zp_table(k, bt->q);
    bool bpc = bt->q->axis >= 0;
    LLVMBuilderRef b = k->b;
    CgNest nb;
    LLVMValueRef off[3];
    cg_nest_begin(k, &nb, batch.dims, batch.rank, 3, (const int64_t (*)[IR_MAX_RANK])st, off);
    CgLoop li, lj, lk;
    LLVMValueRef vi = cg_loop_begin(k, &li, cg_i64(k, M));
    LLVMValueRef vj = cg_loop_begin(k, &lj, cg_i64(k, N));
    LLVMValueRef accp = cg_entry_alloca(k, k->i64);
    LLVMBuildStore(b, has_b ? cg_load_i64(k, ET_I32, a->in[2], vj) : cg_i64(k, 0), accp);
    LLVMValueRef zbj = cg_load_i64(k, ET_I32, zb, bpc ? vj : cg_i64(k, 0));
    LLVMValueRef vk = cg_loop_begin(k, &lk, cg_i64(k, K));
    LLVMValueRef av = cg_load_i64(k, at->elem, a->in[0], cg_add(k, off[0], cg_add(k, cg_mul(k, vi, cg_i64(k, K)), vk)));
    LLVMValueRef bv = cg_load_i64(k, bt->elem, a->in[1], cg_add(k, off[1], cg_add(k, cg_mul(k, vk, cg_i64(k, N)), vj)));
    av = LLVMBuildSub(b, av, cg_i64(k, at->q->zp[0]), "");
    bv = LLVMBuildSub(b, bv, zbj, "");
    LLVMBuildStore(b, cg_add(k, LLVMBuildLoad2(b, k->i64, accp, ""), cg_mul(k, av, bv)), accp);
    cg_loop_end(k, &lk);
    LLVMValueRef yi = cg_add(k, off[2], cg_add(k, cg_mul(k, vi, cg_i64(k, N)), vj));
    qe_store(k, &e, a->out[0], yi, LLVMBuildLoad2(b, k->i64, accp, ""), vj);
    cg_loop_end(k, &lj);
    cg_loop_end(k, &li);
    cg_nest_end(k, &nb);
    return true;
}

int64_t
cg_qdirect_scratch(Kb *k, Node *n)
{
    if (n->op != OP_QCONV_TRANSPOSE)
        return 0;
    CgWin w;
    int64_t N = 0, C = 0, M = 0, G = 0;
    if (!convt_geo(k, n, &w, &N, &C, &M, &G))
        return -1;
    return win_osp(&w) * 8;
}

bool
cg_emit_qdirect(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (n->op == OP_QCONV_TRANSPOSE)
        return emit_qconvt(k, n, a);
    if (n->op == OP_QMATMUL)
        return emit_qmatmul(k, n, a);
    return cg_fail(k, n, "%s is not a direct integer kernel", op_info(n->op)->name);
}
