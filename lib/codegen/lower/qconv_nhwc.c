/* llvm_conv_nhwc.c: faster qconv lowerings (see llvm_conv_nhwc.h).
 *
 * 1. Non-grouped convolutions: one NCHW -> NHWC transpose of the input (X), then either X is the
 *    GEMM's A (1x1, stride 1, no padding: no im2col at all) or each A row is gathered from X
 *    with one KW*C-byte copy per kernel row (border pixels: one C-byte copy per tap; padded
 *    taps and the K padding to a multiple of 4: the input zero point), instead of the
 *    per-element im2col with bounds selects; the staging -> NCHW transpose is blocked over 16
 *    pixels so that both sides stay in L1.
 * 2. Depthwise convolutions: per channel, the input plane is copied into a zero-point padded
 *    plane (border filled once per call), then per output row an int32 accumulator row (an
 *    alloca, so it aliases nothing) gets one multiply-add sweep per tap over all output columns:
 *    loops over contiguous (or stride-2 interleaved) u8/i8 loads with loop-invariant weights that
 *    LLVM's loop vectoriser turns into 16-lane code, then a row of the exact epilogue.
 * Both are bit-exact with lib/ref: int32 accumulation wraps like the GEMM's; reordering K only
 * permutes the terms of an integer sum; the epilogue is the same cg_requant_* sequence. */
#include "codegen/lower/qconv.h"

#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

static int64_t
align64(int64_t v)
{
    return (v + 63) / 64 * 64;
}

bool
cg_nhwc_direct_a(const ConvGeo *c)
{
    return c->KH == 1 && c->KW == 1 && c->sh == 1 && c->sw == 1 && c->ph == 0 && c->pw == 0 &&
           c->OH == c->H && c->OW == c->W;
}

int64_t
cg_nhwc_lda(const ConvGeo *c)
{
    return cg_nhwc_direct_a(c) ? c->C : (c->K + 3) / 4 * 4;
}

static int64_t
x_bytes(const ConvGeo *c)
{
    return c->in_nhwc ? 0 : align64(c->N * c->H * c->W * c->C);
}

int64_t
cg_nhwc_scratch(const ConvGeo *c, int64_t out_es)
{
    int64_t rows = c->N * c->OH * c->OW;
    int64_t a = cg_nhwc_direct_a(c) || cg_nhwc_block_rows(c) ? 0 : align64(rows * cg_nhwc_lda(c));
    return x_bytes(c) + a + (c->out_nhwc ? 0 : rows * c->M * out_es);
}

void
cg_nhwc_reorder_weights(const ConvGeo *c, int8_t *w)
{
    int64_t K = c->K, HW = c->KH * c->KW;
    int8_t *row = malloc((size_t)(K ? K : 1));
    for (int64_t m = 0; m < c->M; m++) {
        int8_t *wm = w + m * K;
        for (int64_t ci = 0; ci < c->C; ci++)
            for (int64_t t = 0; t < HW; t++)
                row[t * c->C + ci] = wm[ci * HW + t];
        memcpy(wm, row, (size_t)K);
    }
    free(row);
}

static LLVMValueRef
i64c(Kb *k, int64_t v)
{
    return cg_i64(k, v);
}

/* if (cond) { then } else { else }: positions the builder in the then block; returns the
 * blocks so the caller can fill else and join. */
typedef struct CgIf {
    LLVMBasicBlockRef then_bb, else_bb, join;
} CgIf;

static void
if_begin(Kb *k, CgIf *f, LLVMValueRef cond)
{
    f->then_bb = LLVMAppendBasicBlockInContext(k->c, k->fn, "then");
    f->else_bb = LLVMAppendBasicBlockInContext(k->c, k->fn, "else");
    f->join = LLVMAppendBasicBlockInContext(k->c, k->fn, "join");
    LLVMBuildCondBr(k->b, cond, f->then_bb, f->else_bb);
    LLVMPositionBuilderAtEnd(k->b, f->then_bb);
}

static void
if_else(Kb *k, CgIf *f)
{
    LLVMBuildBr(k->b, f->join);
    LLVMPositionBuilderAtEnd(k->b, f->else_bb);
}

static void
if_end(Kb *k, CgIf *f)
{
    LLVMBuildBr(k->b, f->join);
    LLVMPositionBuilderAtEnd(k->b, f->join);
}

static LLVMValueRef
in_range(Kb *k, LLVMValueRef v, int64_t hi)
{
    return LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, v, i64c(k, 0), ""),
                        LLVMBuildICmp(k->b, LLVMIntSLT, v, i64c(k, hi), ""), "");
}


/* n bytes from src to dst: straight-line 64-byte vector moves (LLVM would call libc memcpy for
 * a constant size above ~128 bytes, once per tap), the rest as a small memcpy. */
static void
copy_bytes(Kb *k, LLVMValueRef dst, LLVMValueRef src, int64_t n)
{
    int64_t nv = n / 64;
    if (nv > 16)
        nv = 0;
    LLVMTypeRef vt = LLVMVectorType(k->i8, 64);
    for (int64_t i = 0; i < nv; i++) {
        LLVMValueRef v = LLVMBuildLoad2(k->b, vt, cg_gep(k, src, i64c(k, 64 * i)), "");
        LLVMSetAlignment(v, 1);
        LLVMValueRef st = LLVMBuildStore(k->b, v, cg_gep(k, dst, i64c(k, 64 * i)));
        LLVMSetAlignment(st, 1);
    }
    if (n - 64 * nv > 0)
        LLVMBuildMemCpy(k->b, cg_gep(k, dst, i64c(k, 64 * nv)), 1, cg_gep(k, src, i64c(k, 64 * nv)), 1,
                        i64c(k, n - 64 * nv));
}

/* Row of A (lda bytes at arow) for output pixel (vn, voh, vow): per kernel row, all KW taps
 * at once when they lie inside the input's width (dilation 1: KW * C contiguous bytes of X),
 * else tap by tap (C bytes of X or of the zero point); kernel rows above or below the input
 * and the K padding up to lda hold the zero point. */
static void
gather_pixel(Kb *k, const ConvGeo *c, int32_t zx, LLVMValueRef Xp, LLVMValueRef arow,
             LLVMValueRef vn, LLVMValueRef voh, LLVMValueRef vow)
{
    LLVMValueRef zb = LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zx, 0);
    const int64_t lda = cg_nhwc_lda(c), span = c->KW * c->C;
    CgLoop lkh, lkw;
    LLVMValueRef ih0 = LLVMBuildSub(k->b, cg_mul(k, voh, i64c(k, c->sh)), i64c(k, c->ph), "");
    LLVMValueRef iw0 = LLVMBuildSub(k->b, cg_mul(k, vow, i64c(k, c->sw)), i64c(k, c->pw), "");
    LLVMValueRef w_in = c->dw == 1 && c->KW > 1
                            ? LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, iw0, i64c(k, 0), ""),
                                           LLVMBuildICmp(k->b, LLVMIntSLT, iw0, i64c(k, c->W - c->KW + 1), ""), "")
                            : NULL;
    LLVMValueRef vkh = cg_loop_begin(k, &lkh, i64c(k, c->KH));
    LLVMValueRef ih = cg_add(k, ih0, cg_mul(k, vkh, i64c(k, c->dh)));
    LLVMValueRef dst_kh = cg_gep(k, arow, cg_mul(k, vkh, i64c(k, span)));
    LLVMValueRef xrow = cg_add(k, cg_mul(k, vn, i64c(k, c->H)), ih); /* (n, ih) row of X */
    CgIf fh;
    if_begin(k, &fh, in_range(k, ih, c->H));
    CgIf fw = {0};
    if (w_in) {
        if_begin(k, &fw, w_in);
        copy_bytes(k, dst_kh, cg_gep(k, Xp, cg_mul(k, cg_add(k, cg_mul(k, xrow, i64c(k, c->W)), iw0), i64c(k, c->C))),
                   span);
        if_else(k, &fw);
    }
    LLVMValueRef vkw = cg_loop_begin(k, &lkw, i64c(k, c->KW));
    LLVMValueRef iw = cg_add(k, iw0, cg_mul(k, vkw, i64c(k, c->dw)));
    LLVMValueRef dst = cg_gep(k, dst_kh, cg_mul(k, vkw, i64c(k, c->C)));
    CgIf f;
    if_begin(k, &f, in_range(k, iw, c->W));
    copy_bytes(k, dst, cg_gep(k, Xp, cg_mul(k, cg_add(k, cg_mul(k, xrow, i64c(k, c->W)), iw), i64c(k, c->C))), c->C);
    if_else(k, &f);
    LLVMBuildMemSet(k->b, dst, zb, i64c(k, c->C), 1);
    if_end(k, &f);
    cg_loop_end(k, &lkw);
    if (w_in)
        if_end(k, &fw);
    if_else(k, &fh);
    LLVMBuildMemSet(k->b, dst_kh, zb, i64c(k, span), 1);
    if_end(k, &fh);
    cg_loop_end(k, &lkh);
    for (int64_t kk = c->K; kk < lda; kk++) /* (zx - zx) * w adds 0 to every sum */
        LLVMBuildStore(k->b, zb, cg_gep(k, arow, i64c(k, kk)));
}

void
cg_nhwc_gather(Kb *k, const ConvGeo *c, int32_t zx, LLVMValueRef X, LLVMValueRef dst,
               LLVMValueRef m0, LLVMValueRef m1)
{
    int64_t ohw = c->OH * c->OW;
    CgLoop lm;
    LLVMValueRef i = cg_loop_begin(k, &lm, LLVMBuildSub(k->b, m1, m0, ""));
    LLVMValueRef m = cg_add(k, m0, i);
    LLVMValueRef vn = LLVMBuildUDiv(k->b, m, i64c(k, ohw), "");
    LLVMValueRef pix = LLVMBuildURem(k->b, m, i64c(k, ohw), "");
    LLVMValueRef voh = LLVMBuildUDiv(k->b, pix, i64c(k, c->OW), "");
    LLVMValueRef vow = LLVMBuildURem(k->b, pix, i64c(k, c->OW), "");
    gather_pixel(k, c, zx, X, cg_gep(k, dst, cg_mul(k, i, i64c(k, cg_nhwc_lda(c)))), vn, voh, vow);
    cg_loop_end(k, &lm);
}

int64_t
cg_nhwc_block_rows(const ConvGeo *c)
{
    int64_t rows = c->N * c->OH * c->OW, lda = cg_nhwc_lda(c);
    if (cg_nhwc_direct_a(c) || rows * lda <= 256 * 1024)
        return 0;
    int64_t brmax = (128 * 1024 / lda) / 24 * 24;
    if (brmax < 24)
        brmax = 24;
    int64_t nblk = (rows + brmax - 1) / brmax;
    /* the blocks are the parallel-for units: at least min_blocks of them (when there
     * are rows enough), else a conv with a short K (the first conv: K = 27) would be 3 units,
     * and one of two threads would idle for a third of it */
    const int64_t min_blocks = 12;
    if (nblk < min_blocks)
        nblk = (rows + 23) / 24 < min_blocks ? (rows + 23) / 24 : min_blocks;
    return ((rows + nblk - 1) / nblk + 23) / 24 * 24;
}

LLVMValueRef
cg_nhwc_pack(Kb *k, const ConvGeo *c, ElemType xe, int32_t zx, LLVMValueRef in,
             LLVMValueRef scratch, const CgNodeArgs *a, bool gather)
{
    (void)xe; /* bytes are moved as they are */
    LLVMValueRef X = c->in_nhwc ? in : scratch;
    int64_t HW = c->H * c->W;
    /* X[n, h, w, ci] = in[n, ci, h, w]: per (n, h), contiguous reads along w; blocks of hb
     * rows (about 16 KiB) split across the parallel-for hook */
    if (!c->in_nhwc) {
        int64_t hb = 16384 / (c->W * c->C) > 1 ? 16384 / (c->W * c->C) : 1;
        hb = hb < c->H ? hb : c->H;
        int64_t nhb = (c->H + hb - 1) / hb;
        Par par;
        LLVMValueRef io[2] = {in, X};
        LLVMValueRef vu = cg_par_begin(k, &par, c->N * nhb, io, 2);
        LLVMValueRef vn = LLVMBuildSDiv(k->b, vu, i64c(k, nhb), "");
        LLVMValueRef h0 = cg_mul(k, LLVMBuildSRem(k->b, vu, i64c(k, nhb), ""), i64c(k, hb));
        CgLoop lh, lc, lw;
        LLVMValueRef vh = cg_add(k, h0, cg_loop_begin(k, &lh, cg_smin(k, i64c(k, hb),
                                                                      LLVMBuildSub(k->b, i64c(k, c->H), h0, ""))));
        LLVMValueRef xrow = cg_mul(k, cg_add(k, cg_mul(k, vn, i64c(k, c->H)), vh), i64c(k, c->W * c->C));
        LLVMValueRef vc = cg_loop_begin(k, &lc, i64c(k, c->C));
        LLVMValueRef src = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, i64c(k, c->C)), vc), i64c(k, HW)),
                                  cg_mul(k, vh, i64c(k, c->W)));
        LLVMValueRef vw = cg_loop_begin(k, &lw, i64c(k, c->W));
        LLVMValueRef v = cg_load_raw(k, ET_U8, io[0], cg_add(k, src, vw));
        cg_store_raw(k, ET_U8, io[1], cg_add(k, xrow, cg_add(k, cg_mul(k, vw, i64c(k, c->C)), vc)), v);
        cg_loop_end(k, &lw);
        cg_loop_end(k, &lc);
        cg_loop_end(k, &lh);
        cg_par_end(k, &par, a);
    }
    if (cg_nhwc_direct_a(c) || !gather)
        return X;
    LLVMValueRef A = cg_gep(k, scratch, i64c(k, x_bytes(c)));
    /* rows of output pixels split across the parallel-for hook */
    Par par;
    LLVMValueRef xa[2] = {X, A};
    LLVMValueRef vr = cg_par_begin(k, &par, c->N * c->OH, xa, 2);
    LLVMValueRef vn = LLVMBuildSDiv(k->b, vr, i64c(k, c->OH), "");
    LLVMValueRef voh = LLVMBuildSRem(k->b, vr, i64c(k, c->OH), "");
    CgLoop low;
    LLVMValueRef vow = cg_loop_begin(k, &low, i64c(k, c->OW));
    LLVMValueRef row = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, i64c(k, c->OH)), voh), i64c(k, c->OW)), vow);
    gather_pixel(k, c, zx, xa[0], cg_gep(k, xa[1], cg_mul(k, row, i64c(k, cg_nhwc_lda(c)))), vn, voh, vow);
    cg_loop_end(k, &low);
    cg_par_end(k, &par, a);
    return A;
}

LLVMValueRef
cg_nhwc_staging(Kb *k, const ConvGeo *c, LLVMValueRef scratch)
{
    int64_t rows = c->N * c->OH * c->OW;
    int64_t off = x_bytes(c) + (cg_nhwc_direct_a(c) || cg_nhwc_block_rows(c) ? 0 : align64(rows * cg_nhwc_lda(c)));
    return cg_gep(k, scratch, i64c(k, off));
}

void
cg_nhwc_unstage(Kb *k, const ConvGeo *c, ElemType ye, LLVMValueRef st, LLVMValueRef out,
                 const CgNodeArgs *a)
{
    const int64_t B = 16;
    int64_t P = c->OH * c->OW, nb = (P + B - 1) / B;
    /* (n, block of B pixels) units split across the parallel-for hook */
    Par par;
    LLVMValueRef io[2] = {st, out};
    LLVMValueRef vu = cg_par_begin(k, &par, c->N * nb, io, 2);
    st = io[0];
    out = io[1];
    CgLoop lm, lp;
    LLVMValueRef vn = LLVMBuildSDiv(k->b, vu, i64c(k, nb), "");
    LLVMValueRef vb = LLVMBuildSRem(k->b, vu, i64c(k, nb), "");
    LLVMValueRef p0 = cg_mul(k, vb, i64c(k, B));
    LLVMValueRef cnt = cg_smin(k, i64c(k, B), LLVMBuildSub(k->b, i64c(k, P), p0, ""));
    LLVMValueRef sbase = cg_mul(k, cg_add(k, cg_mul(k, vn, i64c(k, P)), p0), i64c(k, c->M));
    LLVMValueRef vm = cg_loop_begin(k, &lm, i64c(k, c->M));
    LLVMValueRef dbase = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, i64c(k, c->M)), vm), i64c(k, P)), p0);
    LLVMValueRef vp = cg_loop_begin(k, &lp, cnt);
    LLVMValueRef v = cg_load_raw(k, ye, st, cg_add(k, sbase, cg_add(k, cg_mul(k, vp, i64c(k, c->M)), vm)));
    cg_store_raw(k, ye, out, cg_add(k, dbase, vp), v);
    cg_loop_end(k, &lp);
    cg_loop_end(k, &lm);
    cg_par_end(k, &par, a);
}

/* ---- rows split across the host's parallel-for hook (llvm_conv_nhwc.h) ---- */

/* ---- layout plan ---- */

static bool
is_rank4(Graph *g, ValueId v)
{
    return ir_value(g, v)->type.rank == 4;
}

/* qconv kinds that accept/produce NHWC: 1 non-grouped, 2 depthwise multiplier 1, 0 none. */
static int
conv_kind(Graph *g, Node *n)
{
    if (n->op != OP_QCONV || !is_rank4(g, n->in[0]) || !is_rank4(g, n->out[0]))
        return 0;
    const Type *x = &ir_value(g, n->in[0])->type, *w = &ir_value(g, n->in[1])->type;
    const Type *y = &ir_value(g, n->out[0])->type;
    if (x->elem != ET_I8 && x->elem != ET_U8)
        return 0;
    int64_t G = ir_attr_int(g, n, "group", 1);
    if (G == 1)
        return 1;
    if (G == x->dims[1] && G == y->dims[1] && w->dims[1] == 1)
        return 2;
    return 0;
}

static bool
per_tensor(const Type *t)
{
    return !t->q || t->q->axis < 0;
}

/* Same-shape integer element-wise op whose operands are all the result's shape (or single
 * elements) and per-tensor quantized: indifferent to the layout. */
static bool
agnostic(Graph *g, Node *n)
{
    switch (n->op) {
    case OP_QADD: case OP_QSUB: case OP_QMUL: case OP_REQUANTIZE: case OP_LUT:
        break;
    default:
        return false;
    }
    if (n->nout != 1 || !is_rank4(g, n->out[0]))
        return false;
    const Type *y = &ir_value(g, n->out[0])->type;
    if (!per_tensor(y))
        return false;
    for (uint32_t i = 0; i < n->nin; i++) {
        if (!n->in[i].id)
            continue;
        const Type *t = &ir_value(g, n->in[i])->type;
        if (!per_tensor(t))
            return false;
        if (type_numel_unchecked(t) == 1)
            continue;
        if (t->rank != 4 || memcmp(t->dims, y->dims, 4 * sizeof(int64_t)) != 0)
            return false;
    }
    return true;
}

/* Integer 2-D maxpool with explicit geometry (NHWC variant below). */
static bool
pool_nhwc_ok(Graph *g, Node *n)
{
    if (n->op != OP_MAXPOOL || n->nout != 1 || !is_rank4(g, n->in[0]) || !is_rank4(g, n->out[0]))
        return false;
    ElemType e = ir_value(g, n->in[0])->type.elem;
    int64_t ks[2];
    return (e == ET_I8 || e == ET_U8) && ir_attr_ints(g, n, "kernel_shape", ks, 2) == 2 &&
           strcmp(ir_attr_string(g, n, "auto_pad", "NOTSET"), "NOTSET") == 0;
}

/* Operand i of n is tied to n's result (must share its layout). */
static bool
tied(Graph *g, Node *n, uint32_t i)
{
    if (conv_kind(g, n) == 2 || pool_nhwc_ok(g, n))
        return i == 0;
    return agnostic(g, n) && type_numel_unchecked(&ir_value(g, n->in[i])->type) != 1;
}

uint8_t *
cg_layout_plan(Kb *k)
{
    Graph *g = k->g;
    uint32_t nval = g->values.len, nn = g->nodes.len;
    uint8_t *f = calloc(nval ? nval : 1, 1);
    if (!f)
        return NULL;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = ir_node(g, (NodeId){i});
        if (!n->dead && (conv_kind(g, n) || agnostic(g, n) || pool_nhwc_ok(g, n)))
            f[n->out[0].id] = 1;
    }
    for (uint32_t j = 0; j < g->outputs.len; j++)
        f[g->outputs.data[j].id] = 0;
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = 1; i < nn; i++) {
            Node *n = ir_node(g, (NodeId){i});
            if (n->dead)
                continue;
            int ck = conv_kind(g, n);
            bool ag = agnostic(g, n) || pool_nhwc_ok(g, n);
            for (uint32_t a = 0; a < n->nin; a++) {
                ValueId v = n->in[a];
                if (!v.id || !f[v.id])
                    continue;
                if (!((ck && a == 0) || (ag && tied(g, n, a)))) {
                    f[v.id] = 0;
                    changed = true;
                }
            }
            if (!ck && !ag)
                continue;
            /* tied values: all NHWC or none */
            bool all = f[n->out[0].id] != 0;
            for (uint32_t a = 0; a < n->nin; a++)
                if (n->in[a].id && tied(g, n, a) && !f[n->in[a].id])
                    all = false;
            if (all)
                continue;
            if (f[n->out[0].id]) {
                f[n->out[0].id] = 0;
                changed = true;
            }
            for (uint32_t a = 0; a < n->nin; a++)
                if (n->in[a].id && tied(g, n, a) && f[n->in[a].id]) {
                    f[n->in[a].id] = 0;
                    changed = true;
                }
        }
    }
    return f;
}

bool
cg_value_nhwc(Kb *k, ValueId v)
{
    return k->nhwc && v.id && k->nhwc[v.id];
}

static bool
q8(const Type *t)
{
    return (t->elem == ET_I8 || t->elem == ET_U8) && t->q && t->q->axis < 0;
}

Node *
cg_residual_add(Kb *k, Node *n, const uint32_t *uses, uint32_t *other)
{
    Graph *g = k->g;
    if (conv_kind(g, n) != 1 || n->nout != 1)
        return NULL;
    ValueId v = n->out[0];
    const Type *vt = &ir_value(g, v)->type;
    if (!cg_value_nhwc(k, v) || !q8(vt) || uses[v.id] != 1)
        return NULL;
    uint32_t nid = (uint32_t)(n - g->nodes.data);
    Node *q = NULL;
    for (uint32_t i = nid + 1; i < g->nodes.len && !q; i++) {
        Node *m = ir_node(g, (NodeId){i});
        for (uint32_t a = 0; !m->dead && a < m->nin; a++)
            if (m->in[a].id == v.id)
                q = m;
    }
    if (!q || q->op != OP_QADD || q->nin != 2 || q->nout != 1 || q->in[0].id == q->in[1].id ||
        !q8(&ir_value(g, q->out[0])->type))
        return NULL;
    uint32_t o = q->in[0].id == v.id ? 1 : 0;
    ValueId u = q->in[o];
    const Type *ut = &ir_value(g, u)->type;
    if (!q8(ut) || ut->rank != vt->rank || memcmp(ut->dims, vt->dims, (size_t)vt->rank * sizeof(int64_t)) != 0 ||
        !cg_value_nhwc(k, u) || !cg_value_nhwc(k, q->out[0]))
        return NULL;
    /* the other operand exists when n runs: a graph input, or the result of an earlier node */
    const Value *uv = ir_value(g, u);
    if (uv->def.id && uv->def.id >= nid)
        return NULL;
    *other = o;
    return q;
}

/* ---- maxpool, NHWC (integer; max over the taps inside the input, as lib/ref) ---- */

bool
cg_emit_maxpool_nhwc(Kb *k, Node *n, const CgNodeArgs *a)
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
    LLVMValueRef vn = LLVMBuildSDiv(k->b, vr, i64c(k, OH), "");
    LLVMValueRef voh = LLVMBuildSRem(k->b, vr, i64c(k, OH), "");
    LLVMValueRef acc = cg_entry_alloca(k, LLVMArrayType2(k->i32, (uint64_t)C));
    LLVMSetAlignment(acc, 64);
    bool sg = x->elem == ET_I8;
    CgLoop low, lkh, lkw, l0, l1, l2;
    LLVMValueRef ih0 = LLVMBuildSub(k->b, cg_mul(k, voh, i64c(k, st[0])), i64c(k, pd[0]), "");
    LLVMValueRef vow = cg_loop_begin(k, &low, i64c(k, OW));
    LLVMValueRef iw0 = LLVMBuildSub(k->b, cg_mul(k, vow, i64c(k, st[1])), i64c(k, pd[1]), "");
    {
        LLVMValueRef vc = cg_loop_begin(k, &l0, i64c(k, C));
        LLVMBuildStore(k->b, cg_i32(k, INT32_MIN), LLVMBuildGEP2(k->b, k->i32, acc, &vc, 1, ""));
        cg_loop_end(k, &l0);
    }
    LLVMValueRef vkh = cg_loop_begin(k, &lkh, i64c(k, ks[0]));
    LLVMValueRef ih = cg_add(k, ih0, cg_mul(k, vkh, i64c(k, dl[0])));
    LLVMValueRef vkw = cg_loop_begin(k, &lkw, i64c(k, ks[1]));
    LLVMValueRef iw = cg_add(k, iw0, cg_mul(k, vkw, i64c(k, dl[1])));
    CgIf f;
    if_begin(k, &f, LLVMBuildAnd(k->b, in_range(k, ih, H), in_range(k, iw, W), ""));
    {
        LLVMValueRef xb = cg_gep(k, io[0], cg_mul(k, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, i64c(k, H)), ih),
                                                                      i64c(k, W)), iw), i64c(k, C)));
        LLVMValueRef vc = cg_loop_begin(k, &l1, i64c(k, C));
        LLVMValueRef xv = cg_load_raw(k, ET_U8, xb, vc);
        xv = sg ? LLVMBuildSExt(k->b, xv, k->i32, "") : LLVMBuildZExt(k->b, xv, k->i32, "");
        LLVMValueRef ap = LLVMBuildGEP2(k->b, k->i32, acc, &vc, 1, "");
        LLVMValueRef cur = LLVMBuildLoad2(k->b, k->i32, ap, "");
        LLVMBuildStore(k->b, LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSGT, xv, cur, ""), xv, cur, ""), ap);
        cg_loop_end(k, &l1);
    }
    if_else(k, &f);
    if_end(k, &f);
    cg_loop_end(k, &lkw);
    cg_loop_end(k, &lkh);
    {
        LLVMValueRef yb = cg_mul(k, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, i64c(k, OH)), voh), i64c(k, OW)), vow),
                                 i64c(k, C));
        LLVMValueRef vc = cg_loop_begin(k, &l2, i64c(k, C));
        LLVMValueRef v = LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, acc, &vc, 1, ""), "");
        cg_store_raw(k, ET_U8, io[1], cg_add(k, yb, vc), LLVMBuildTrunc(k->b, v, k->i8, ""));
        cg_loop_end(k, &l2);
    }
    cg_loop_end(k, &low);
    cg_par_end(k, &par, a);
    return true;
}
