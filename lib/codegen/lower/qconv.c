/* qconv.c: qconv and qmatmul.
 *
 * Non-grouped qconv goes through the NHWC lowering of qconv_nhwc.c (input transposed once,
 * no im2col for 1x1 stride 1, per-tap row copies otherwise), depthwise through its padded-plane
 * kernel. Grouped qconv (1-D/2-D, strided, padded, dilated) goes through the GEMM generator
 * (gemm.h) with the activations in NCHW:
 *   1. im2col, per group, into scratch: A[(n*OH*OW + p) * K + (c*KH + kh)*KW + kw] with
 *      K = C/G * KH * KW; padded taps hold the input zero point (real 0);
 *   2. one GEMM per group (M = N*OH*OW rows, N = M/G channels, weights OIHW = "NK" layout,
 *      packed at compile time), writing C[row, g*Mg + j] (ldc = total channels) into a staging
 *      buffer with the fused epilogue (bias, requantize float|fixed, clamp; or i32, or f32);
 *   3. a transpose of the staging buffer [N, OH*OW, M] into NCHW [N, M, OH, OW].
 * The GEMM rows are split across the parallel-for hook when the host provides one.
 * Depthwise convolutions (C == G, one input channel per group) have their own kernels
 * (qconv_dw.c: NHWC register-blocked, or a padded NCHW plane per channel).
 * qmatmul with a constant right operand maps onto the GEMM directly (B in "KN" layout). */
#include "codegen/lower/lower.h"
#include "codegen/lower/qconv.h"

#include "numerics/numerics.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
conv_geo(Kb *k, Node *n, ConvGeo *c)
{
    Graph *g = k->g;
    const Type *x = &ir_value(g, n->in[0])->type, *w = &ir_value(g, n->in[1])->type;
    const Type *y = &ir_value(g, n->out[0])->type;
    if (x->rank != 4 && x->rank != 3)
        return cg_fail(k, n, "only 1-D and 2-D convolutions are supported (rank %d)", x->rank);
    bool d1 = x->rank == 3;
    CgWin win;
    char buf[128];
    if (ir_window(g, n, x, y, w->dims + 2, &win, buf, sizeof buf))
        return cg_fail(k, n, "unsupported conv attributes");
    int h = cg_win_h(&win), wd = cg_win_w(&win);
    c->N = x->dims[0];
    c->C = x->dims[1];
    c->H = d1 ? 1 : x->dims[2];
    c->W = x->dims[x->rank - 1];
    c->M = w->dims[0];
    c->KH = d1 ? 1 : w->dims[2];
    c->KW = w->dims[w->rank - 1];
    c->OH = d1 ? 1 : y->dims[2];
    c->OW = y->dims[y->rank - 1];
    c->G = ir_attr_int(g, n, "group", 1);
    c->sh = win.s[h];
    c->sw = win.s[wd];
    c->dh = win.d[h];
    c->dw = win.d[wd];
    c->ph = win.pb[h];
    c->pw = win.pb[wd];
    if (c->G <= 0 || c->C % c->G || c->M % c->G)
        return cg_fail(k, n, "invalid group count");
    c->Cg = c->C / c->G;
    c->Mg = c->M / c->G;
    c->K = c->Cg * c->KH * c->KW;
    c->in_nhwc = cg_value_nhwc(k, n->in[0]);
    c->out_nhwc = cg_value_nhwc(k, n->out[0]);
    c->xes = (int64_t)elem_size(x->elem);
    return true;
}

/* Depthwise convs with 8-bit activations have their own kernels (qconv_dw.c); with 16-bit
 * activations they are grouped convs of the GEMM path. */
static bool
is_depthwise(const ConvGeo *c)
{
    return c->Cg == 1 && c->G > 1 && c->xes == 1;
}

static void
epi_free(Epi *e)
{
    free(e->mult);
    free(e->scale);
    free(e->fmult);
    free(e->fshift);
}

static bool
epi_init(Kb *k, Node *n, int64_t nch, int wq_axis_ok, Epi *e)
{
    Graph *g = k->g;
    memset(e, 0, sizeof *e);
    const Type *xt = &ir_value(g, n->in[0])->type, *wt = &ir_value(g, n->in[1])->type;
    const Type *yt = &ir_value(g, n->out[0])->type;
    const QParams *xq = xt->q, *wq = wt->q;
    if (!xq || xq->axis >= 0 || !wq || (wq->axis >= 0 && wq->axis != wq_axis_ok))
        return cg_fail(k, n, "unsupported quantization of the operands");
    float sx = xq->scale[0];
    size_t cnt = (size_t)(nch ? nch : 1);
    e->mult = xcalloc(cnt, sizeof(float));
    e->scale = xcalloc(cnt, sizeof(float));
    e->fmult = xcalloc(cnt, sizeof(int32_t));
    e->fshift = xcalloc(cnt, sizeof(int32_t));
    if (yt->elem == ET_I32 && !yt->q) {
        e->kind = CG_GEMM_EPI_I32;
        e->out = CG_GEMM_I32;
        return true;
    }
    if (yt->elem == ET_F32 && !yt->q) {
        e->kind = CG_GEMM_EPI_DEQUANT;
        e->out = CG_GEMM_F32;
        for (int64_t m = 0; m < nch; m++)
            e->scale[m] = sx * wq->scale[wq->axis >= 0 ? m : 0];
        return true;
    }
    if (!yt->q || yt->q->axis >= 0 ||
        (yt->elem != ET_I8 && yt->elem != ET_U8 && yt->elem != ET_I16 && yt->elem != ET_U16)) {
        epi_free(e);
        return cg_fail(k, n, "result must be per-tensor i8/u8/i16/u16, i32 or f32");
    }
    e->out = yt->elem == ET_I8    ? CG_GEMM_I8
             : yt->elem == ET_U8  ? CG_GEMM_U8
             : yt->elem == ET_I16 ? CG_GEMM_I16
                                  : CG_GEMM_U16;
    e->kind = (CgGemmEpilogue)k->rq->gemm_epi;
    e->zo = yt->q->zp[0];
    ir_clamp_range(k->g, n, yt->q, &e->lo, &e->hi);
    QnFixed *fix = xcalloc((size_t)nch, sizeof *fix); /* float mode: left 0 */
    int64_t bad = k->rq->channels(sx, wq->scale, wq->axis >= 0 ? nch : 1, yt->q->scale[0], nch,
                                  e->mult, fix);
    for (int64_t m = 0; m < (bad < 0 ? nch : bad); m++) {
        e->fmult[m] = fix[m].mult;
        e->fshift[m] = fix[m].shift;
    }
    free(fix);
    if (bad >= 0) {
        epi_free(e);
        return cg_fail(k, n, "requantization multiplier of channel %lld is not representable in "
                       "fixed point", (long long)bad);
    }
    return true;
}

/* Weights as int8 (u8 weights shifted by -128 together with their zero points), zero points. */
static bool
load_weights(Kb *k, Node *n, int64_t nch, int8_t **wout, int32_t **zout, int32_t **bout)
{
    Graph *g = k->g;
    const Tensor *w = ir_const_of(g, n->in[1]);
    if (!w)
        return cg_fail(k, n, "the weight operand must be a constant");
    if (w->type.elem != ET_I8 && w->type.elem != ET_U8)
        return cg_fail(k, n, "weights must be i8 or u8, got %s", elem_name(w->type.elem));
    const QParams *q = w->type.q;
    size_t cnt = type_numel_unchecked(&w->type);
    int8_t *wb = xmalloc(cnt ? cnt : 1);
    int32_t *zb = xmalloc((size_t)(nch ? nch : 1) * sizeof(int32_t));
    int32_t *bb = NULL;
    int shift = w->type.elem == ET_U8 ? 128 : 0;
    const unsigned char *wd = w->data; /* i8 or u8 (checked above): the bytes, u8 shifted */
    if (shift)
        for (size_t i = 0; i < cnt; i++)
            wb[i] = (int8_t)(wd[i] - 128);
    else if (cnt)
        memcpy(wb, wd, cnt);
    for (int64_t m = 0; m < nch; m++)
        zb[m] = q->zp[q->axis >= 0 ? m : 0] - shift;
    if (n->nin > 2 && n->in[2].id) {
        const Tensor *b = ir_const_of(g, n->in[2]);
        if (!b || type_numel_unchecked(&b->type) != (size_t)nch) {
            free(wb);
            free(zb);
            return cg_fail(k, n, "the bias must be a constant of %lld elements", (long long)nch);
        }
        bb = xmalloc((size_t)nch * sizeof(int32_t));
        for (int64_t m = 0; m < nch; m++)
            bb[m] = (int32_t)tensor_get_i(b, (size_t)m);
    }
    *wout = wb;
    *zout = zb;
    *bout = bb;
    return true;
}

bool
cg_linear_static(Kb *k, Node *n, uint32_t i)
{
    return i >= 1;
}

static int64_t
align64(int64_t v)
{
    return (v + 63) / 64 * 64;
}

static int64_t
out_es(Kb *k, Node *n)
{
    return (int64_t)elem_size(ir_value(k->g, n->out[0])->type.elem);
}

int64_t
cg_linear_scratch(Kb *k, Node *n)
{
    if (n->op != OP_QCONV)
        return 0;
    ConvGeo c;
    if (!conv_geo(k, n, &c))
        return -1;
    if (is_depthwise(&c))
        return c.in_nhwc ? cg_dw_nhwc_scratch(&c) : cg_dw_scratch(&c);
    if (c.G == 1 && cg_first_ok(k, n, &c))
        return 0;
    if (c.G == 1)
        return cg_nhwc_scratch(&c, out_es(k, n));
    int64_t rows = c.N * c.OH * c.OW;
    return align64(rows * c.K * c.xes) + rows * c.M * out_es(k, n);
}

/* Emit the calls of P GEMMs over rows [0, M), gemm[p] writing C + coff[p] bytes (column slices
 * of one result; P == 1: one GEMM): directly, or through pf when the host supplied one, as
 * P * ceil(M / rb) units (slice-major, rb rows each). R: the residual operand of a GEMM with a
 * fused residual add (fifth argument), else NULL. */
static void
call_gemms(Kb *k, const LLVMValueRef *gemm, const int64_t *coff, int P, int64_t M, int rb,
           LLVMValueRef A, LLVMValueRef C, LLVMValueRef R, const CgNodeArgs *a)
{
    unsigned ng = R ? 5 : 4;
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr};
    LLVMTypeRef gt = LLVMFunctionType(k->vd, pt, ng, 0);
    int64_t nrb = (M + rb - 1) / rb;
    /* trampoline(arg, b, e): P == 1: gemm(arg[0], arg[1], b*rb, min(e*rb, M)[, arg[2]]);
     * else per unit u in [b, e): gemm[u / nrb](arg[0], arg[1] + coff, rows of block u % nrb) */
    char name[128];
    snprintf(name, sizeof name, "%s.tramp%u", k->prefix, k->counter++);
    LLVMTypeRef tpt[3] = {k->ptr, k->i64, k->i64};
    LLVMValueRef tr = LLVMAddFunction(k->mod, name, LLVMFunctionType(k->vd, tpt, 3, 0));
    LLVMSetLinkage(tr, LLVMInternalLinkage);
    LLVMBasicBlockRef saved = LLVMGetInsertBlock(k->b);
    LLVMValueRef saved_fn = k->fn;
    k->fn = tr;
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, tr, "entry"));
    {
        LLVMValueRef arg = LLVMGetParam(tr, 0);
        LLVMValueRef one = cg_i64(k, 1), two = cg_i64(k, 2);
        LLVMValueRef pa = LLVMBuildLoad2(k->b, k->ptr, arg, "");
        LLVMValueRef pc = LLVMBuildLoad2(k->b, k->ptr, LLVMBuildGEP2(k->b, k->ptr, arg, &one, 1, ""), "");
        LLVMValueRef args[5] = {pa, pc, NULL, NULL, NULL};
        if (R)
            args[4] = LLVMBuildLoad2(k->b, k->ptr, LLVMBuildGEP2(k->b, k->ptr, arg, &two, 1, ""), "");
        LLVMValueRef b = LLVMGetParam(tr, 1), e = LLVMGetParam(tr, 2);
        if (P == 1) {
            args[2] = cg_mul(k, b, cg_i64(k, rb));
            args[3] = cg_smin(k, cg_mul(k, e, cg_i64(k, rb)), cg_i64(k, M));
            LLVMBuildCall2(k->b, gt, gemm[0], args, ng, "");
        } else {
            CgLoop l;
            LLVMValueRef u = cg_add(k, b, cg_loop_begin(k, &l, LLVMBuildSub(k->b, e, b, "")));
            LLVMValueRef sl = LLVMBuildSDiv(k->b, u, cg_i64(k, nrb), "");
            args[2] = cg_mul(k, LLVMBuildSRem(k->b, u, cg_i64(k, nrb), ""), cg_i64(k, rb));
            args[3] = cg_smin(k, cg_add(k, args[2], cg_i64(k, rb)), cg_i64(k, M));
            LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(k->c, tr, "slice.next");
            LLVMValueRef sw = LLVMBuildSwitch(k->b, sl, next, (unsigned)P);
            for (int p = 0; p < P; p++) {
                LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(k->c, tr, "slice");
                LLVMAddCase(sw, LLVMConstInt(k->i64, (unsigned long long)p, 0), bb);
                LLVMPositionBuilderAtEnd(k->b, bb);
                args[1] = cg_gep(k, pc, cg_i64(k, coff[p]));
                LLVMBuildCall2(k->b, gt, gemm[p], args, ng, "");
                LLVMBuildBr(k->b, next);
            }
            LLVMPositionBuilderAtEnd(k->b, next);
            cg_loop_end(k, &l);
        }
        LLVMBuildRetVoid(k->b);
    }
    k->fn = saved_fn;
    LLVMPositionBuilderAtEnd(k->b, saved);
    LLVMBasicBlockRef par = LLVMAppendBasicBlockInContext(k->c, k->fn, "par");
    LLVMBasicBlockRef seq = LLVMAppendBasicBlockInContext(k->c, k->fn, "seq");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(k->c, k->fn, "join");
    LLVMValueRef isnull = LLVMBuildIsNull(k->b, a->pf, "");
    LLVMBuildCondBr(k->b, isnull, seq, par);
    LLVMPositionBuilderAtEnd(k->b, seq);
    for (int p = 0; p < P; p++) {
        LLVMValueRef args[5] = {A, cg_gep(k, C, cg_i64(k, coff[p])), cg_i64(k, 0), cg_i64(k, M), R};
        LLVMBuildCall2(k->b, gt, gemm[p], args, ng, "");
    }
    LLVMBuildBr(k->b, join);
    LLVMPositionBuilderAtEnd(k->b, par);
    LLVMValueRef slot = cg_entry_alloca(k, LLVMArrayType2(k->ptr, 3));
    LLVMBuildStore(k->b, A, slot);
    LLVMValueRef one = cg_i64(k, 1), two = cg_i64(k, 2);
    LLVMBuildStore(k->b, C, LLVMBuildGEP2(k->b, k->ptr, slot, &one, 1, ""));
    if (R)
        LLVMBuildStore(k->b, R, LLVMBuildGEP2(k->b, k->ptr, slot, &two, 1, ""));
    LLVMTypeRef pft[4] = {k->ptr, k->ptr, k->ptr, k->i64};
    LLVMValueRef pargs[4] = {a->pf_ctx, tr, slot, cg_i64(k, P * nrb)};
    LLVMBuildCall2(k->b, LLVMFunctionType(k->vd, pft, 4, 0), a->pf, pargs, 4, "");
    LLVMBuildBr(k->b, join);
    LLVMPositionBuilderAtEnd(k->b, join);
}

/* one GEMM over rows [0, M) writing C (call_gemms with P == 1) */
static void
call_gemm(Kb *k, LLVMValueRef gemm, int64_t M, int rb, LLVMValueRef A, LLVMValueRef C,
          LLVMValueRef R, const CgNodeArgs *a)
{
    int64_t zero = 0;
    call_gemms(k, &gemm, &zero, 1, M, rb, A, C, R, a);
}

/* The GEMM operand A of n (its input 0): element type and zero point; false (reported) when
 * it is not i8, u8, i16 or u16. */
static bool
a_of(Kb *k, Node *n, CgGemmElem *ae, int32_t *za)
{
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    switch (xt->elem) {
    case ET_I8: *ae = CG_GEMM_I8; break;
    case ET_U8: *ae = CG_GEMM_U8; break;
    case ET_I16: *ae = CG_GEMM_I16; break; /* A16W8: int16/uint16 x int8 (gemm.h) */
    case ET_U16: *ae = CG_GEMM_U16; break;
    default: return cg_fail(k, n, "activations must be i8, u8, i16 or u16");
    }
    *za = xt->q->zp[0];
    return true;
}

/* The GEMM epilogue of e for the channels from off on. */
static CgGemmEpi
epi_gemm(const Epi *e, int64_t off)
{
    return (CgGemmEpi){.kind = e->kind, .out = e->out, .mult = e->mult + off,
                       .fixed_mult = e->fmult + off, .fixed_shift = e->fshift + off,
                       .scale = e->scale + off, .fbias = NULL, .zo = e->zo, .qmin = e->lo,
                       .qmax = e->hi};
}

static LLVMValueRef
gemm_emit(Kb *k, Node *n, const CgGemmSpec *s)
{
    char name[96], err[512];
    snprintf(name, sizeof name, "%s.gemm%u", k->prefix, k->counter++);
    LLVMValueRef f = cg_gemm_emit_shared(k->mod, k->t, k->isa, s, name, k->gemm_cache, err,
                                         sizeof err);
    if (!f)
        cg_fail(k, n, "GEMM: %s", err);
    else {
        LLVMSetLinkage(f, LLVMInternalLinkage);
        /* one symbol per GEMM in profiles, and the caller's loops stay small for LSR */
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    }
    return f;
}

/* The qadd fused into this conv (CgNodeArgs.res_add, planned by cg_residual_add): q = the
 * conv's requantized result (its own scale, zero point and clamp stay those of the spec), the
 * GEMM writes qadd(q, other operand) with the qadd's result type and clamp. */
static bool
residual_fill(Kb *k, Node *n, const CgNodeArgs *a, CgGemmSpec *s)
{
    Graph *g = k->g;
    Node *q = a->res_add;
    ValueId v = n->out[0];
    uint32_t o = q->in[0].id == v.id ? 1 : 0;
    const Type *vt = &ir_value(g, v)->type, *ut = &ir_value(g, q->in[o])->type;
    const Type *yt = &ir_value(g, q->out[0])->type;
    s->residual = true;
    s->res_signed = ut->elem == ET_I8;
    s->ldr = s->ldc;
    s->res_sa = vt->q->scale[0];
    s->res_sb = ut->q->scale[0];
    s->res_zb = ut->q->zp[0];
    s->res_sy = yt->q->scale[0];
    s->res_zy = yt->q->zp[0];
    ir_clamp_range(k->g, q, yt->q, &s->res_lo, &s->res_hi);
    if (yt->elem != ET_I8 && yt->elem != ET_U8)
        return cg_fail(k, q, "fused residual add: 8-bit result expected");
    /* fixed mode: the unfused kernel's constants, operands in the qadd's order (float: 0) */
    CgElemFixed fx = {.add = s->res_fixed};
    if (!k->rq->elem_fixed(k, q, &fx))
        return false;
    s->res_fixed = fx.add;
    if (o == 0) { /* the conv's result is the qadd's second operand */
        s->res_fixed.a = fx.add.b;
        s->res_fixed.b = fx.add.a;
    }
    s->out = yt->elem == ET_I8 ? CG_GEMM_I8 : CG_GEMM_U8;
    return true;
}

/* The GEMM over blocks of br rows, each gathered from X into a stack buffer right before
 * (cg_nhwc_block_rows): one parallel-for task per block; within it the GEMM runs on rows
 * [0, m1 - m0) of the buffer with C (and R) advanced to row m0. */
static void
gemm_blocks(Kb *k, LLVMValueRef gemm, const ConvGeo *c, int64_t br, int32_t zx, LLVMValueRef X,
            LLVMValueRef C, LLVMValueRef R, int64_t oes, const CgNodeArgs *a)
{
    int64_t M = c->N * c->OH * c->OW, lda = cg_nhwc_lda(c);
    Par par;
    LLVMValueRef ptrs[3] = {X, C, R};
    LLVMValueRef blk = cg_par_begin(k, &par, (M + br - 1) / br, ptrs, R ? 3 : 2);
    LLVMValueRef buf = cg_entry_alloca(k, LLVMArrayType2(k->i8, (uint64_t)(br * lda * c->xes)));
    LLVMSetAlignment(buf, 64);
    LLVMValueRef m0 = cg_mul(k, blk, cg_i64(k, br));
    LLVMValueRef m1 = cg_smin(k, cg_add(k, m0, cg_i64(k, br)), cg_i64(k, M));
    cg_nhwc_gather(k, c, zx, ptrs[0], buf, m0, m1);
    unsigned ng = R ? 5 : 4;
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr};
    LLVMValueRef args[5] = {buf, cg_gep(k, ptrs[1], cg_mul(k, m0, cg_i64(k, c->M * oes))), cg_i64(k, 0),
                            LLVMBuildSub(k->b, m1, m0, ""),
                            R ? cg_gep(k, ptrs[2], cg_mul(k, m0, cg_i64(k, c->M))) : NULL};
    LLVMBuildCall2(k->b, LLVMFunctionType(k->vd, pt, ng, 0), gemm, args, ng, "");
    cg_par_end(k, &par, a);
}

/* A convolution whose A is packed whole and whose rows make only a few row blocks (ResNet's
 * 7x7 layers: 49 rows, 5 blocks of the AVX-512 tile) would give the parallel-for hook a few
 * coarse units, each reading all of B: its columns are split into CONV_SLICES GEMMs of about
 * equal width (multiples of 64 channels; same shape, so they share one body), and the hook
 * shares out slices x row blocks, each unit reading its slice of B. Not with a fused residual
 * add (its operand is read at the GEMM's own offsets). */
enum { CONV_SLICES = 2, CONV_SLICE_MAX_BLOCKS = 6, CONV_SLICE_MIN_CHANNELS = 256 };

static int
conv_slices(const ConvGeo *c, int64_t br, int64_t rows, int rb, bool residual)
{
    bool few = (rows + rb - 1) / rb <= CONV_SLICE_MAX_BLOCKS;
    return br == 0 && !residual && few && c->M >= CONV_SLICE_MIN_CHANNELS ? CONV_SLICES : 1;
}

/* Non-grouped convolution through the NHWC lowering of qconv_nhwc.c. */
static bool
emit_conv_nhwc(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e, int8_t *w,
               const int32_t *zw, const int32_t *bias)
{
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    int64_t rows = c->N * c->OH * c->OW, lda = cg_nhwc_lda(c);
    cg_nhwc_reorder_weights(c, w);
    int8_t *wp = w;
    if (lda != c->K) { /* K padded (cg_nhwc_lda): zero weights against zero-point bytes of A */
        wp = xcalloc((size_t)(c->M * lda), 1);
        for (int64_t m = 0; m < c->M; m++)
            memcpy(wp + m * lda, w + m * c->K, (size_t)c->K);
    }
    int64_t br = cg_nhwc_block_rows(c);
    LLVMValueRef A = cg_nhwc_pack(k, c, xt->elem, xt->q->zp[0], a->in[0], a->scratch, a, br == 0);
    LLVMValueRef st = c->out_nhwc ? a->out[0] : cg_nhwc_staging(k, c, a->scratch);
    CgGemmElem ae = CG_GEMM_I8;
    int32_t za = 0;
    bool ok = a_of(k, n, &ae, &za);
    CgGemmSpec s = cg_gemm_spec(rows, c->M, lda, c->M, ae, za, wp, CG_GEMM_B_NK, zw, bias,
                                epi_gemm(e, 0));
    int rb = ok ? cg_gemm_row_block(k->t, k->isa, &s) : 1;
    rb = rb > 0 ? rb : 1;
    int P = conv_slices(c, br, rows, rb, a->res_add != NULL);
    ok = ok && (!a->res_add || residual_fill(k, n, a, &s));
    LLVMValueRef gf[CONV_SLICES];
    int64_t coff[CONV_SLICES], ns = (c->M / P + 63) / 64 * 64;
    for (int p = 0; p < P && ok; p++) {
        int64_t n0 = p * ns, nw = p == P - 1 ? c->M - n0 : ns;
        CgGemmSpec sp = P == 1 ? s
                               : cg_gemm_spec(rows, nw, lda, c->M, ae, za, wp + n0 * lda,
                                              CG_GEMM_B_NK, zw ? zw + n0 : NULL,
                                              bias ? bias + n0 : NULL, epi_gemm(e, n0));
        gf[p] = gemm_emit(k, n, &sp);
        coff[p] = n0 * out_es(k, n);
        ok = gf[p] != NULL;
    }
    if (wp != w)
        free(wp);
    if (!ok)
        return false;
    if (br)
        gemm_blocks(k, gf[0], c, br, xt->q->zp[0], A, st, a->res_add ? a->res : NULL, out_es(k, n), a);
    else
        call_gemms(k, gf, coff, P, rows, rb, A, st, a->res_add ? a->res : NULL, a);
    if (!c->out_nhwc)
        cg_nhwc_unstage(k, c, ir_value(k->g, n->out[0])->type.elem, st, a->out[0], a);
    return true;
}

static bool
emit_conv(Kb *k, Node *n, const CgNodeArgs *a)
{
    ConvGeo c;
    if (!conv_geo(k, n, &c))
        return false;
    Epi e;
    if (!epi_init(k, n, c.M, 0, &e))
        return false;
    int8_t *w;
    int32_t *zw, *bias;
    if (!load_weights(k, n, c.M, &w, &zw, &bias)) {
        epi_free(&e);
        return false;
    }
    bool ok = true;
    if (is_depthwise(&c)) {
        ok = c.in_nhwc ? cg_emit_dw_conv_nhwc(k, n, a, &c, &e, w, zw, bias)
                       : cg_emit_dw_conv(k, n, a, &c, &e, w, zw, bias);
        goto out;
    }
    if (c.G == 1 && cg_first_ok(k, n, &c)) {
        ok = cg_emit_conv_first(k, n, a, &c, &e, w, zw, bias);
        goto out;
    }
    if (c.G == 1) {
        ok = emit_conv_nhwc(k, n, a, &c, &e, w, zw, bias);
        goto out;
    }
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    ElemType xe = xt->elem;
    int64_t rows = c.N * c.OH * c.OW, OHW = c.OH * c.OW;
    LLVMValueRef A = a->scratch, Cst = cg_gep(k, a->scratch, cg_i64(k, align64(rows * c.K * c.xes)));
    int64_t oes = out_es(k, n);
    for (int64_t gi = 0; gi < c.G && ok; gi++) {
        /* im2col of group gi */
        CgLoop ln, lo, lc, lkh, lkw;
        LLVMValueRef vn = cg_loop_begin(k, &ln, cg_i64(k, c.N));
        LLVMValueRef vo = cg_loop_begin(k, &lo, cg_i64(k, OHW));
        LLVMValueRef oh = LLVMBuildSDiv(k->b, vo, cg_i64(k, c.OW), "");
        LLVMValueRef ow = LLVMBuildSRem(k->b, vo, cg_i64(k, c.OW), "");
        LLVMValueRef row = cg_add(k, cg_mul(k, vn, cg_i64(k, OHW)), vo);
        LLVMValueRef vc = cg_loop_begin(k, &lc, cg_i64(k, c.Cg));
        LLVMValueRef xb = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c.C)),
                                           cg_add(k, vc, cg_i64(k, gi * c.Cg))),
                                 cg_i64(k, c.H * c.W));
        LLVMValueRef vkh = cg_loop_begin(k, &lkh, cg_i64(k, c.KH));
        LLVMValueRef ih = cg_add(k, LLVMBuildSub(k->b, cg_mul(k, oh, cg_i64(k, c.sh)), cg_i64(k, c.ph), ""),
                                 cg_mul(k, vkh, cg_i64(k, c.dh)));
        LLVMValueRef vkw = cg_loop_begin(k, &lkw, cg_i64(k, c.KW));
        LLVMValueRef iw = cg_add(k, LLVMBuildSub(k->b, cg_mul(k, ow, cg_i64(k, c.sw)), cg_i64(k, c.pw), ""),
                                 cg_mul(k, vkw, cg_i64(k, c.dw)));
        LLVMValueRef inb = LLVMBuildAnd(
            k->b,
            LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, ih, cg_i64(k, 0), ""),
                         LLVMBuildICmp(k->b, LLVMIntSLT, ih, cg_i64(k, c.H), ""), ""),
            LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, iw, cg_i64(k, 0), ""),
                         LLVMBuildICmp(k->b, LLVMIntSLT, iw, cg_i64(k, c.W), ""), ""), "");
        LLVMValueRef xi = cg_add(k, xb, cg_add(k, cg_mul(k, ih, cg_i64(k, c.W)), iw));
        xi = LLVMBuildSelect(k->b, inb, xi, cg_i64(k, 0), "");
        LLVMValueRef xv = cg_load_raw(k, xe, a->in[0], xi);
        xv = LLVMBuildSelect(k->b, inb, xv, LLVMConstInt(LLVMTypeOf(xv), (unsigned long long)xt->q->zp[0], 1), "");
        LLVMValueRef kk = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vc, cg_i64(k, c.KH)), vkh), cg_i64(k, c.KW)), vkw);
        cg_store_raw(k, xe, A, cg_add(k, cg_mul(k, row, cg_i64(k, c.K)), kk), xv);
        cg_loop_end(k, &lkw);
        cg_loop_end(k, &lkh);
        cg_loop_end(k, &lc);
        cg_loop_end(k, &lo);
        cg_loop_end(k, &ln);
        /* GEMM of group gi */
        CgGemmElem ae = CG_GEMM_I8;
        int32_t za = 0;
        if (!a_of(k, n, &ae, &za)) {
            ok = false;
            break;
        }
        CgGemmSpec s = cg_gemm_spec(rows, c.Mg, c.K, c.M, ae, za, w + gi * c.Mg * c.K,
                                    CG_GEMM_B_NK, zw + gi * c.Mg,
                                    bias ? bias + gi * c.Mg : NULL, epi_gemm(&e, gi * c.Mg));
        LLVMValueRef gf = gemm_emit(k, n, &s);
        if (!gf) {
            ok = false;
            break;
        }
        int rb = cg_gemm_row_block(k->t, k->isa, &s);
        call_gemm(k, gf, rows, rb > 0 ? rb : 1, A, cg_gep(k, Cst, cg_i64(k, gi * c.Mg * oes)), NULL, a);
    }
    if (ok) {
        /* staging [N, OHW, M] -> NCHW [N, M, OHW] */
        ElemType ye = ir_value(k->g, n->out[0])->type.elem;
        CgLoop ln, lm, lp;
        LLVMValueRef vn = cg_loop_begin(k, &ln, cg_i64(k, c.N));
        LLVMValueRef vm = cg_loop_begin(k, &lm, cg_i64(k, c.M));
        LLVMValueRef vp = cg_loop_begin(k, &lp, cg_i64(k, OHW));
        LLVMValueRef si = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, OHW)), vp), cg_i64(k, c.M)), vm);
        LLVMValueRef di = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c.M)), vm), cg_i64(k, OHW)), vp);
        cg_store_raw(k, ye, a->out[0], di, cg_load_raw(k, ye, Cst, si));
        cg_loop_end(k, &lp);
        cg_loop_end(k, &lm);
        cg_loop_end(k, &ln);
    }
out:
    free(w);
    free(zw);
    free(bias);
    epi_free(&e);
    return ok;
}

static bool
emit_matmul(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *at = &ir_value(g, n->in[0])->type, *bt = &ir_value(g, n->in[1])->type;
    if (bt->rank != 2 || at->rank < 1)
        return cg_fail(k, n, "qmatmul needs a constant 2-D right operand");
    int64_t K = bt->dims[0], N = bt->dims[1];
    int64_t M = (int64_t)type_numel_unchecked(at) / (K ? K : 1);
    Epi e;
    if (!epi_init(k, n, N, 1, &e))
        return false;
    int8_t *w;
    int32_t *zw, *bias;
    if (!load_weights(k, n, N, &w, &zw, &bias)) {
        epi_free(&e);
        return false;
    }
    CgGemmElem ae = CG_GEMM_I8;
    int32_t za = 0;
    bool ok = a_of(k, n, &ae, &za);
    CgGemmSpec s = cg_gemm_spec(M, N, K, N, ae, za, w, CG_GEMM_B_KN, zw, bias, epi_gemm(&e, 0));
    int rb = ok ? cg_gemm_row_block(k->t, k->isa, &s) : 1;
    rb = rb > 0 ? rb : 1;
    /* A GEMM of one row block (a classifier: M = 1) would be one unit of parallel work, the
     * whole op on one thread: split its columns into MATMUL_SLICES GEMMs of about equal width
     * (multiples of 64 channels), each over its slice of the weights and epilogue constants,
     * whose row blocks the parallel-for hook then shares out. */
    enum { MATMUL_SLICES = 2 };
    int P = (M + rb - 1) / rb == 1 && N >= 128 * MATMUL_SLICES ? MATMUL_SLICES : 1;
    int64_t ns = (N / P + 63) / 64 * 64;
    LLVMValueRef gf[MATMUL_SLICES];
    int64_t coff[MATMUL_SLICES];
    int8_t *wsl = P > 1 ? xmalloc((size_t)(K * ns)) : NULL;
    for (int p = 0; p < P && ok; p++) {
        int64_t n0 = p * ns, nw = p == P - 1 ? N - n0 : ns;
        CgGemmSpec sp = s;
        if (P > 1) {
            for (int64_t kk = 0; kk < K; kk++)
                memcpy(wsl + kk * nw, w + kk * N + n0, (size_t)nw);
            sp = cg_gemm_spec(M, nw, K, N, ae, za, wsl, CG_GEMM_B_KN, zw ? zw + n0 : NULL,
                              bias ? bias + n0 : NULL, epi_gemm(&e, n0));
        }
        gf[p] = ok ? gemm_emit(k, n, &sp) : NULL;
        coff[p] = n0 * out_es(k, n);
        ok = ok && gf[p];
    }
    if (ok)
        call_gemms(k, gf, coff, P, M, rb, a->in[0], a->out[0], NULL, a);
    free(wsl);
    free(w);
    free(zw);
    free(bias);
    epi_free(&e);
    return ok;
}

bool
cg_emit_linear(Kb *k, Node *n, const CgNodeArgs *a)
{
    return n->op == OP_QCONV ? emit_conv(k, n, a) : emit_matmul(k, n, a);
}

/* Exposed for qmatmul_rt.c (qconv.h). */
bool
cg_epi_init(Kb *k, Node *n, int64_t nch, int wq_axis_ok, Epi *e)
{
    return epi_init(k, n, nch, wq_axis_ok, e);
}

void
cg_epi_free(Epi *e)
{
    epi_free(e);
}

bool
cg_gemm_a_of(Kb *k, Node *n, CgGemmElem *ae, int32_t *za)
{
    return a_of(k, n, ae, za);
}

CgGemmEpi
cg_epi_gemm(const Epi *e, int64_t off)
{
    return epi_gemm(e, off);
}
