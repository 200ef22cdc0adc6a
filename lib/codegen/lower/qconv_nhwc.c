/* qconv_nhwc.c: the NHWC path of non-grouped qconvs (see qconv.h; 8- or 16-bit activations,
 * c->xes bytes per element): one NCHW -> NHWC
 * transpose of the input (X, cg_nhwc_pack) unless the layout plan (plan/layout.c) already keeps
 * it NHWC; then either X is the GEMM's A (1x1, stride 1, no padding: no im2col at all) or each A
 * row is gathered from X with one KW*C-byte copy per kernel row (border pixels: one C-byte copy
 * per tap; padded taps and the K padding to a multiple of 4: the input zero point,
 * cg_nhwc_gather), instead of the per-element im2col with bounds selects; a result that is
 * not stored NHWC is staged and transposed back to NCHW blocked over 16 pixels so that both
 * sides stay in L1 (cg_nhwc_unstage). Bit-exact with lib/ref: int32 accumulation wraps like
 * the GEMM's and reordering K only permutes the terms of an integer sum. Depthwise convs are
 * qconv_dw.c's. */
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
    return c->in_nhwc ? 0 : align64(c->N * c->H * c->W * c->C * c->xes);
}

int64_t
cg_nhwc_scratch(const ConvGeo *c, int64_t out_es)
{
    int64_t rows = c->N * c->OH * c->OW;
    int64_t a = cg_nhwc_direct_a(c) || cg_nhwc_block_rows(c) ? 0 : align64(rows * cg_nhwc_lda(c) * c->xes);
    return x_bytes(c) + a + (c->out_nhwc ? 0 : rows * c->M * out_es);
}

void
cg_nhwc_reorder_weights(const ConvGeo *c, int8_t *w)
{
    int64_t K = c->K, HW = c->KH * c->KW;
    int8_t *row = xmalloc((size_t)(K ? K : 1));
    for (int64_t m = 0; m < c->M; m++) {
        int8_t *wm = w + m * K;
        for (int64_t ci = 0; ci < c->C; ci++)
            for (int64_t t = 0; t < HW; t++)
                row[t * c->C + ci] = wm[ci * HW + t];
        memcpy(wm, row, (size_t)K);
    }
    free(row);
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
        LLVMValueRef v = irb_load(&k->ir, vt, cg_gep(k, src, cg_i64(k, 64 * i)), 1);
        irb_store(&k->ir, v, cg_gep(k, dst, cg_i64(k, 64 * i)), 1);
    }
    if (n - 64 * nv > 0)
        LLVMBuildMemCpy(k->b, cg_gep(k, dst, cg_i64(k, 64 * nv)), 1, cg_gep(k, src, cg_i64(k, 64 * nv)), 1,
                        cg_i64(k, n - 64 * nv));
}

/* n elements at dst hold the zero point zx (8-bit: a memset; 16-bit: a memset when both bytes
 * of zx are equal, else a loop of int16 stores). */
static void
fill_zp(Kb *k, const ConvGeo *c, LLVMValueRef dst, int64_t n, int32_t zx)
{
    uint16_t z16 = (uint16_t)zx;
    if (c->xes == 1 || (z16 & 0xff) == z16 >> 8) {
        LLVMBuildMemSet(k->b, dst, LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zx, 0),
                        cg_i64(k, n * c->xes), 1);
        return;
    }
    CgLoop l;
    LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, n));
    cg_store_raw(k, ET_I16, dst, i, LLVMConstInt(k->i16, z16, 0));
    cg_loop_end(k, &l);
}

/* Row of A (lda elements at arow) for output pixel (vn, voh, vow): per kernel row, all KW taps
 * at once when they lie inside the input's width (dilation 1: KW * C contiguous elements of
 * X), else tap by tap (C elements of X or of the zero point); kernel rows above or below the
 * input and the K padding up to lda hold the zero point. */
static void
gather_pixel(Kb *k, const ConvGeo *c, int32_t zx, LLVMValueRef Xp, LLVMValueRef arow,
             LLVMValueRef vn, LLVMValueRef voh, LLVMValueRef vow)
{
    const int64_t es = c->xes;
    LLVMValueRef zb = es == 1 ? LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zx, 0)
                              : LLVMConstInt(k->i16, (unsigned long long)(uint16_t)zx, 0);
    const int64_t lda = cg_nhwc_lda(c), span = c->KW * c->C;
    CgLoop lkh, lkw;
    LLVMValueRef ih0 = LLVMBuildSub(k->b, cg_mul(k, voh, cg_i64(k, c->sh)), cg_i64(k, c->ph), "");
    LLVMValueRef iw0 = LLVMBuildSub(k->b, cg_mul(k, vow, cg_i64(k, c->sw)), cg_i64(k, c->pw), "");
    LLVMValueRef w_in = c->dw == 1 && c->KW > 1
                            ? LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, iw0, cg_i64(k, 0), ""),
                                           LLVMBuildICmp(k->b, LLVMIntSLT, iw0, cg_i64(k, c->W - c->KW + 1), ""), "")
                            : NULL;
    LLVMValueRef vkh = cg_loop_begin(k, &lkh, cg_i64(k, c->KH));
    LLVMValueRef ih = cg_add(k, ih0, cg_mul(k, vkh, cg_i64(k, c->dh)));
    LLVMValueRef dst_kh = cg_gep(k, arow, cg_mul(k, vkh, cg_i64(k, span * es)));
    LLVMValueRef xrow = cg_add(k, cg_mul(k, vn, cg_i64(k, c->H)), ih); /* (n, ih) row of X */
    CgIf fh;
    cg_if_begin(k, &fh, cg_in_range(k, ih, c->H));
    CgIf fw = {0};
    if (w_in) {
        cg_if_begin(k, &fw, w_in);
        copy_bytes(k, dst_kh, cg_gep(k, Xp, cg_mul(k, cg_add(k, cg_mul(k, xrow, cg_i64(k, c->W)), iw0), cg_i64(k, c->C * es))),
                   span * es);
        cg_if_else(k, &fw);
    }
    LLVMValueRef vkw = cg_loop_begin(k, &lkw, cg_i64(k, c->KW));
    LLVMValueRef iw = cg_add(k, iw0, cg_mul(k, vkw, cg_i64(k, c->dw)));
    LLVMValueRef dst = cg_gep(k, dst_kh, cg_mul(k, vkw, cg_i64(k, c->C * es)));
    CgIf f;
    cg_if_begin(k, &f, cg_in_range(k, iw, c->W));
    copy_bytes(k, dst, cg_gep(k, Xp, cg_mul(k, cg_add(k, cg_mul(k, xrow, cg_i64(k, c->W)), iw), cg_i64(k, c->C * es))),
               c->C * es);
    cg_if_else(k, &f);
    fill_zp(k, c, dst, c->C, zx);
    cg_if_end(k, &f);
    cg_loop_end(k, &lkw);
    if (w_in)
        cg_if_end(k, &fw);
    cg_if_else(k, &fh);
    fill_zp(k, c, dst_kh, span, zx);
    cg_if_end(k, &fh);
    cg_loop_end(k, &lkh);
    for (int64_t kk = c->K; kk < lda; kk++) /* (zx - zx) * w adds 0 to every sum */
        LLVMBuildStore(k->b, zb, cg_gep(k, arow, cg_i64(k, kk * es)));
}

void
cg_nhwc_gather(Kb *k, const ConvGeo *c, int32_t zx, LLVMValueRef X, LLVMValueRef dst,
               LLVMValueRef m0, LLVMValueRef m1)
{
    int64_t ohw = c->OH * c->OW;
    CgLoop lm;
    LLVMValueRef i = cg_loop_begin(k, &lm, LLVMBuildSub(k->b, m1, m0, ""));
    LLVMValueRef m = cg_add(k, m0, i);
    LLVMValueRef vn = LLVMBuildUDiv(k->b, m, cg_i64(k, ohw), "");
    LLVMValueRef pix = LLVMBuildURem(k->b, m, cg_i64(k, ohw), "");
    LLVMValueRef voh = LLVMBuildUDiv(k->b, pix, cg_i64(k, c->OW), "");
    LLVMValueRef vow = LLVMBuildURem(k->b, pix, cg_i64(k, c->OW), "");
    gather_pixel(k, c, zx, X, cg_gep(k, dst, cg_mul(k, i, cg_i64(k, cg_nhwc_lda(c) * c->xes))), vn, voh, vow);
    cg_loop_end(k, &lm);
}

int64_t
cg_nhwc_block_rows(const ConvGeo *c)
{
    int64_t rows = c->N * c->OH * c->OW, lda = cg_nhwc_lda(c) * c->xes; /* bytes */
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
    (void)xe; /* elements are moved as they are (c->xes bytes each) */
    ElemType me = c->xes == 2 ? ET_U16 : ET_U8;
    LLVMValueRef X = c->in_nhwc ? in : scratch;
    int64_t HW = c->H * c->W;
    /* X[n, h, w, ci] = in[n, ci, h, w]: per (n, h), contiguous reads along w; blocks of hb
     * rows (about 16 KiB) split across the parallel-for hook */
    if (!c->in_nhwc) {
        int64_t rowb = c->W * c->C * c->xes;
        int64_t hb = 16384 / rowb > 1 ? 16384 / rowb : 1;
        hb = hb < c->H ? hb : c->H;
        int64_t nhb = (c->H + hb - 1) / hb;
        Par par;
        LLVMValueRef io[2] = {in, X};
        LLVMValueRef vu = cg_par_begin(k, &par, c->N * nhb, io, 2);
        LLVMValueRef vn = LLVMBuildSDiv(k->b, vu, cg_i64(k, nhb), "");
        LLVMValueRef h0 = cg_mul(k, LLVMBuildSRem(k->b, vu, cg_i64(k, nhb), ""), cg_i64(k, hb));
        CgLoop lh, lc, lw;
        LLVMValueRef vh = cg_add(k, h0, cg_loop_begin(k, &lh, cg_smin(k, cg_i64(k, hb),
                                                                      LLVMBuildSub(k->b, cg_i64(k, c->H), h0, ""))));
        LLVMValueRef xrow = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->H)), vh), cg_i64(k, c->W * c->C));
        LLVMValueRef vc = cg_loop_begin(k, &lc, cg_i64(k, c->C));
        LLVMValueRef src = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->C)), vc), cg_i64(k, HW)),
                                  cg_mul(k, vh, cg_i64(k, c->W)));
        LLVMValueRef vw = cg_loop_begin(k, &lw, cg_i64(k, c->W));
        LLVMValueRef v = cg_load_raw(k, me, io[0], cg_add(k, src, vw));
        cg_store_raw(k, me, io[1], cg_add(k, xrow, cg_add(k, cg_mul(k, vw, cg_i64(k, c->C)), vc)), v);
        cg_loop_end(k, &lw);
        cg_loop_end(k, &lc);
        cg_loop_end(k, &lh);
        cg_par_end(k, &par, a);
    }
    if (cg_nhwc_direct_a(c) || !gather)
        return X;
    LLVMValueRef A = cg_gep(k, scratch, cg_i64(k, x_bytes(c)));
    /* rows of output pixels split across the parallel-for hook */
    Par par;
    LLVMValueRef xa[2] = {X, A};
    LLVMValueRef vr = cg_par_begin(k, &par, c->N * c->OH, xa, 2);
    LLVMValueRef vn = LLVMBuildSDiv(k->b, vr, cg_i64(k, c->OH), "");
    LLVMValueRef voh = LLVMBuildSRem(k->b, vr, cg_i64(k, c->OH), "");
    CgLoop low;
    LLVMValueRef vow = cg_loop_begin(k, &low, cg_i64(k, c->OW));
    LLVMValueRef row = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->OH)), voh), cg_i64(k, c->OW)), vow);
    gather_pixel(k, c, zx, xa[0], cg_gep(k, xa[1], cg_mul(k, row, cg_i64(k, cg_nhwc_lda(c) * c->xes))), vn, voh, vow);
    cg_loop_end(k, &low);
    cg_par_end(k, &par, a);
    return A;
}

LLVMValueRef
cg_nhwc_staging(Kb *k, const ConvGeo *c, LLVMValueRef scratch)
{
    int64_t rows = c->N * c->OH * c->OW;
    int64_t off = x_bytes(c) + (cg_nhwc_direct_a(c) || cg_nhwc_block_rows(c) ? 0 : align64(rows * cg_nhwc_lda(c) * c->xes));
    return cg_gep(k, scratch, cg_i64(k, off));
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
    LLVMValueRef vn = LLVMBuildSDiv(k->b, vu, cg_i64(k, nb), "");
    LLVMValueRef vb = LLVMBuildSRem(k->b, vu, cg_i64(k, nb), "");
    LLVMValueRef p0 = cg_mul(k, vb, cg_i64(k, B));
    LLVMValueRef cnt = cg_smin(k, cg_i64(k, B), LLVMBuildSub(k->b, cg_i64(k, P), p0, ""));
    LLVMValueRef sbase = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, P)), p0), cg_i64(k, c->M));
    LLVMValueRef vm = cg_loop_begin(k, &lm, cg_i64(k, c->M));
    LLVMValueRef dbase = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->M)), vm), cg_i64(k, P)), p0);
    LLVMValueRef vp = cg_loop_begin(k, &lp, cnt);
    LLVMValueRef v = cg_load_raw(k, ye, st, cg_add(k, sbase, cg_add(k, cg_mul(k, vp, cg_i64(k, c->M)), vm)));
    cg_store_raw(k, ye, out, cg_add(k, dbase, vp), v);
    cg_loop_end(k, &lp);
    cg_loop_end(k, &lm);
    cg_par_end(k, &par, a);
}
