/* float_conv.c: f32 Conv and ConvTranspose (input, weights and result f32; the weights a
 * constant) on the f32 GEMM kernels (gemm/sgemm.h) and, for depthwise convolutions, on vector
 * kernels.
 *
 * Every result element is computed as the reference defines it (lib/ref/ref_linear.c,
 * run_float_conv / run_float_convt; docs/numerics.md "Float convolution"): one chain of f32 fused
 * multiply-adds acc = fma(x[tap], w[m, k], acc) over k = (c, kh, kw) of the group in increasing
 * order from +0.0f, a tap in the padding (transposed: a tap no input position reaches) reading
 * x = 0, then y = acc + b[m] when there is a bias. So JIT and reference agree bit for bit on
 * every ISA path (llvm.fma is correctly rounded everywhere). A ConvTranspose is the conv over its
 * input with zeros inserted: its own im2col (col[(c, kh, kw)][oh, ow] = x[c, ih, iw] with
 * oh = ih*sh - ph + kh*dh, else 0) and its weights [C][Mg][kh][kw] rearranged to [M][K] at
 * compile time, then the same GEMM forms.
 *
 * GEMM forms (1-D and 2-D, any group count), per image and group over col[k][p] (k the K =
 * Cg*KH*KW taps, p the P = OH*OW output pixels): the input plane itself for a 1x1 stride-1
 * unpadded conv, else an im2col of copies and zeros into scratch (a parallel-for over the K rows).
 *  - channels as rows (the default): y[m][p] = sum_k w[m][k] col[k][p] written in place, A the
 *    group's weights (a constant array), B = col read at run time and packed by the kernel; the
 *    parallel units are blocks of NB pixels (a kernel for NB columns and one for the last block),
 *    each adding the bias to its columns after the kernel;
 *  - pixels as rows (deep reductions, K >= 8 Mg, where packing col per block costs more than a
 *    transpose): C[p][m] = sum_k col[k][p] w[m][k] with the weights packed at compile time by the
 *    kernel (one group), or read from a constant array (several groups); C goes to scratch and
 *    each unit (a block of whole row tiles of pixels) stores its rows transposed into y with the
 *    bias.
 * Both keep each element's chain over k: only where operands are read differs.
 *
 * Depthwise form (one input channel per group): a parallel-for over (image, channel, output row);
 * each task copies the KH input rows it reads into zero-padded row buffers on its stack (rows
 * outside the input are all zeros) and slides vectors of output pixels over the taps (stride 1:
 * one load per tap; stride 2: one load of 2V floats and a shuffle; larger: lane by lane).
 *
 * Anything else (3-D convs, run-time weights) is float_linear.c's scalar loop, which computes the
 * same chain element by element. */
#include "codegen/lower/lower.h"
#include "codegen/gemm/sgemm.h"
#include "codegen/target/isa.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FC_MAXV 4
#define FC_MAX_ROWBUF (64 << 10)

typedef struct FcPlan {
    int64_t N, C, M, G, Cg, Mg, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
    int64_t K, P;
    int V, NV, NR;        /* depthwise: lanes, vectors per tile, pixels per tile */
    int64_t Pt, tail, RB; /* depthwise: tiles per row, pixels of the last, floats per row buffer */
    bool direct, dwise, bias, tr; /* tr: conv_transpose */
    bool rows_px;         /* GEMM form with pixels as rows (else channels as rows) */
} FcPlan;

static bool
fc_plan(Kb *k, Node *n, FcPlan *p)
{
    Graph *g = k->g;
    memset(p, 0, sizeof *p);
    if ((n->op != OP_CONV && n->op != OP_CONV_TRANSPOSE) || n->nin < 2)
        return false;
    p->tr = n->op == OP_CONV_TRANSPOSE;
    if (p->tr && ir_attr(g, n, "output_shape"))
        return false;
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->in[i].id && ir_value(g, n->in[i])->type.elem != ET_F32)
            return false;
    const Type *xt = &ir_value(g, n->in[0])->type, *yt = &ir_value(g, n->out[0])->type;
    const Tensor *w = ir_const_of(g, n->in[1]);
    if (yt->elem != ET_F32 || (xt->rank != 3 && xt->rank != 4) || !w || w->type.rank != xt->rank)
        return false;
    CgWin win;
    int64_t ks[3] = {1, 1, 1};
    for (int i = 0; i < xt->rank - 2; i++)
        ks[i] = w->type.dims[2 + i];
    if (!cg_window(k, n, xt, yt, ks, &win))
        return false;
    int h = cg_win_h(&win), wd = cg_win_w(&win);
    p->N = xt->dims[0];
    p->C = xt->dims[1];
    p->G = ir_attr_int(g, n, "group", 1);
    p->M = p->tr ? w->type.dims[1] * p->G : w->type.dims[0];
    if (p->G <= 0 || p->C % p->G || p->M % p->G || yt->dims[1] != p->M ||
        (p->tr ? w->type.dims[0] != p->C : w->type.dims[1] * p->G != p->C))
        return false;
    p->Cg = p->C / p->G;
    p->Mg = p->M / p->G;
    p->H = win.in[h], p->W = win.in[wd], p->OH = win.out[h], p->OW = win.out[wd];
    p->KH = win.k[h], p->KW = win.k[wd], p->sh = win.s[h], p->sw = win.s[wd];
    p->dh = win.d[h], p->dw = win.d[wd], p->ph = win.pb[h], p->pw = win.pb[wd];
    p->K = p->Cg * p->KH * p->KW;
    p->P = p->OH * p->OW;
    p->bias = n->nin > 2 && n->in[2].id;
    p->direct = p->KH == 1 && p->KW == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 &&
                p->pw == 0 && p->OH == p->H && p->OW == p->W;
    p->rows_px = p->K >= 8 * p->Mg;
    p->V = (int)cg_isa_i32_lanes(k->t, k->isa);
    if (p->Cg == 1 && !p->tr) {
        bool regs16 = k->t->x86 && p->V < 16;
        int64_t nv = (p->OW + p->V - 1) / p->V;
        int maxv = regs16 ? 2 : FC_MAXV;
        p->NV = (int)(nv < maxv ? (nv > 0 ? nv : 1) : maxv);
        p->NR = p->NV * p->V;
        p->Pt = (p->OW + p->NR - 1) / p->NR;
        p->tail = p->OW - (p->Pt - 1) * p->NR;
        int64_t reach = p->Pt * p->NR * p->sw + (p->KW - 1) * p->dw + p->V;
        p->RB = reach > p->pw + p->W ? reach : p->pw + p->W;
        p->dwise = p->KH <= 64 && p->RB * p->KH * 4 <= FC_MAX_ROWBUF;
    }
    return true;
}

bool
cg_float_conv_ok(Kb *k, Node *n)
{
    FcPlan p;
    return fc_plan(k, n, &p);
}

bool
cg_float_conv_static(Kb *k, Node *n, uint32_t i)
{
    return i == 1 && cg_float_conv_ok(k, n);
}

int64_t
cg_float_conv_scratch(Kb *k, Node *n)
{
    FcPlan p;
    if (!fc_plan(k, n, &p))
        return 0;
    if (p.dwise)
        return 0;
    return (p.direct ? 0 : p.K * p.P * 4) + (p.rows_px ? p.P * p.Mg * 4 : 0);
}

static LLVMValueRef
off4(Kb *k, LLVMValueRef elems)
{
    return cg_mul(k, elems, cg_i64(k, 4));
}

/* the weights as [M][K], K = (c, kh, kw) of the group (conv_transpose's [C][Mg][kh][kw]
 * rearranged) */
static float *
weights_f32(Kb *k, Node *n, const FcPlan *p)
{
    const Tensor *t = ir_const_of(k->g, n->in[1]);
    size_t cnt = type_numel_unchecked(&t->type);
    float *f = xmalloc((cnt ? cnt : 1) * sizeof *f);
    int64_t ksp = p->KH * p->KW;
    for (size_t i = 0; i < cnt; i++) {
        size_t j = i;
        if (p->tr) { /* i = ((g*Cg + c)*Mg + mm)*ksp + t  ->  j = (g*Mg + mm)*K + c*ksp + t */
            int64_t tt = (int64_t)i % ksp, r = (int64_t)i / ksp, mm = r % p->Mg, gc = r / p->Mg;
            j = (size_t)(((gc / p->Cg) * p->Mg + mm) * p->K + (gc % p->Cg) * ksp + tt);
        }
        f[j] = (float)tensor_get_f(t, i);
    }
    return f;
}

/* ---- GEMM form ---- */

/* im2col of one image's group (xg: its first input channel) into col [K][P] (float_wconv.c's) */
static void
fc_im2col(Kb *k, const FcPlan *p, const CgNodeArgs *a, LLVMValueRef xg, LLVMValueRef col)
{
    CgIm2col g = {p->K, p->P, p->H, p->W, p->OH, p->OW, p->KH, p->KW, p->sh, p->sw, p->dh, p->dw, p->ph, p->pw};
    cg_f32_im2col(k, &g, a, xg, col);
}

/* conv_transpose's im2col into col [K][P]: col[(c, kh, kw)][oh, ow] = x[c, ih, iw] where
 * oh = ih*sh - ph + kh*dh and ow likewise, 0 where no input position reaches (a parallel-for over
 * the K rows; per element, since the reached columns are every sw-th) */
static LLVMValueRef
fc_tap_src(Kb *k, LLVMValueRef o, int64_t pad, LLVMValueRef kd, int64_t s, int64_t in,
           LLVMValueRef *ok)
{
    LLVMBuilderRef B = k->b;
    LLVMValueRef t = LLVMBuildSub(B, cg_add(k, o, cg_i64(k, pad)), kd, "");
    LLVMValueRef in_r = cg_in_range(k, t, in * s);
    LLVMValueRef tc = LLVMBuildSelect(B, in_r, t, cg_i64(k, 0), "");
    *ok = LLVMBuildAnd(B, in_r, LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildURem(B, tc, cg_i64(k, s), ""), cg_i64(k, 0), ""), "");
    return LLVMBuildUDiv(B, tc, cg_i64(k, s), "");
}

static void
fc_im2col_t(Kb *k, const FcPlan *p, const CgNodeArgs *a, LLVMValueRef xg, LLVMValueRef col)
{
    LLVMBuilderRef B = k->b;
    LLVMValueRef ptrs[2] = {xg, col};
    Par par;
    LLVMValueRef kk = cg_par_begin(k, &par, p->K, ptrs, 2);
    xg = ptrs[0], col = ptrs[1];
    LLVMValueRef ci = LLVMBuildUDiv(B, kk, cg_i64(k, p->KH * p->KW), "");
    LLVMValueRef kh = LLVMBuildURem(B, LLVMBuildUDiv(B, kk, cg_i64(k, p->KW), ""), cg_i64(k, p->KH), "");
    LLVMValueRef kw = LLVMBuildURem(B, kk, cg_i64(k, p->KW), "");
    LLVMValueRef xc = cg_gep(k, xg, off4(k, cg_mul(k, ci, cg_i64(k, p->H * p->W))));
    CgLoop lh, lw;
    LLVMValueRef oh = cg_loop_begin(k, &lh, cg_i64(k, p->OH));
    LLVMValueRef okh, okw;
    LLVMValueRef ih = fc_tap_src(k, oh, p->ph, cg_mul(k, kh, cg_i64(k, p->dh)), p->sh, p->H, &okh);
    LLVMValueRef dst = cg_gep(k, col, off4(k, cg_add(k, cg_mul(k, kk, cg_i64(k, p->P)), cg_mul(k, oh, cg_i64(k, p->OW)))));
    LLVMValueRef xrow = cg_gep(k, xc, off4(k, cg_mul(k, ih, cg_i64(k, p->W))));
    LLVMValueRef ow = cg_loop_begin(k, &lw, cg_i64(k, p->OW));
    LLVMValueRef iw = fc_tap_src(k, ow, p->pw, cg_mul(k, kw, cg_i64(k, p->dw)), p->sw, p->W, &okw);
    LLVMValueRef ok = LLVMBuildAnd(B, okh, okw, "");
    LLVMValueRef v = cg_load_raw(k, ET_F32, xrow, LLVMBuildSelect(B, ok, iw, cg_i64(k, 0), ""));
    cg_store_raw(k, ET_F32, dst, ow, LLVMBuildSelect(B, ok, v, cg_f32(k, 0.0f), ""));
    cg_loop_end(k, &lw);
    cg_loop_end(k, &lh);
    cg_par_end(k, &par, a);
}

/* The kernel of the GEMM form: C[p, m] for p in [begin, end) */
static LLVMValueRef
fc_kernel(Kb *k, Node *n, const FcPlan *p, int *rb)
{
    CgSgemmSpec s;
    memset(&s, 0, sizeof s);
    s.m = p->P, s.n = p->Mg, s.k = p->K;
    s.lda = 1, s.sak = p->P;
    s.ldc = p->Mg;
    s.sbk = 1, s.sbn = p->K;
    s.alpha = 1.0f;
    float *w = p->G == 1 ? weights_f32(k, n, p) : NULL;
    s.b = w; /* several groups: the kernel reads B from the group's weights at run time */
    char name[96], err[512];
    snprintf(name, sizeof name, "%s.sconv%u", k->prefix, k->counter++);
    LLVMValueRef gf = cg_sgemm_emit(k->mod, k->t, k->isa, &s, name, err, sizeof err);
    free(w);
    if (!gf) {
        cg_fail(k, n, "f32 GEMM: %s", err);
        return NULL;
    }
    *rb = cg_sgemm_row_block(k->t, k->isa, &s);
    LLVMSetLinkage(gf, LLVMInternalLinkage);
    LLVMAddAttributeAtIndex(gf, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    return gf;
}

/* units over blocks of whole row tiles of pixels: the kernel, then the rows transposed into the
 * group's result planes yg[m][p] with the bias */
static void
fc_gemm(Kb *k, const FcPlan *p, const CgNodeArgs *a, LLVMValueRef gf, int rb, LLVMValueRef asrc,
        LLVMValueRef cbuf, LLVMValueRef yg, LLVMValueRef wg, LLVMValueRef bg)
{
    LLVMBuilderRef B = k->b;
    int64_t ntiles = (p->P + rb - 1) / rb;
    int64_t nblk = ntiles < 16 ? ntiles : 16;
    int64_t rows = (ntiles + nblk - 1) / nblk * rb;
    nblk = (p->P + rows - 1) / rows;
    LLVMValueRef nul = LLVMConstPointerNull(k->ptr);
    LLVMValueRef ptrs[5] = {asrc, cbuf, yg, wg ? wg : nul, bg ? bg : nul};
    Par par;
    LLVMValueRef u = cg_par_begin(k, &par, nblk, ptrs, 5);
    LLVMValueRef m0 = cg_mul(k, u, cg_i64(k, rows));
    LLVMValueRef m1 = cg_smin(k, cg_add(k, m0, cg_i64(k, rows)), cg_i64(k, p->P));
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr};
    LLVMValueRef args[5] = {ptrs[0], ptrs[1], m0, m1, ptrs[3]};
    LLVMBuildCall2(B, LLVMFunctionType(k->vd, pt, 5, 0), gf, args, 5, "");
    CgLoop lj, lp;
    LLVMValueRef j = cg_loop_begin(k, &lj, cg_i64(k, p->Mg));
    LLVMValueRef bj = bg ? cg_load_raw(k, ET_F32, ptrs[4], j) : NULL;
    LLVMValueRef yrow = cg_gep(k, ptrs[2], off4(k, cg_mul(k, j, cg_i64(k, p->P))));
    LLVMValueRef pi = cg_add(k, m0, cg_loop_begin(k, &lp, LLVMBuildSub(B, m1, m0, "")));
    LLVMValueRef v = cg_load_raw(k, ET_F32, ptrs[1], cg_add(k, cg_mul(k, pi, cg_i64(k, p->Mg)), j));
    if (bj)
        v = LLVMBuildFAdd(B, v, bj, "");
    cg_store_raw(k, ET_F32, yrow, pi, v);
    cg_loop_end(k, &lp);
    cg_loop_end(k, &lj);
    cg_par_end(k, &par, a);
}

/* Column-block form: C = y[m][p] of the group directly (rows: the Mg channels, A: the group's
 * weights [Mg][K] from a constant array, B: col [K][P] at run time, packed by the kernel per
 * block of NB pixels); units are blocks of NB pixels; the bias is added after, row by row. */
static LLVMValueRef
fc_kernel_t(Kb *k, Node *n, const FcPlan *p, int64_t nb)
{
    CgSgemmSpec s;
    memset(&s, 0, sizeof s);
    s.m = p->Mg, s.n = nb, s.k = p->K;
    s.lda = p->K, s.sak = 1;
    s.ldc = p->P;
    s.sbk = p->P, s.sbn = 1;
    s.alpha = 1.0f;
    char name[96], err[512];
    snprintf(name, sizeof name, "%s.sconv%u", k->prefix, k->counter++);
    LLVMValueRef gf = cg_sgemm_emit(k->mod, k->t, k->isa, &s, name, err, sizeof err);
    if (!gf) {
        cg_fail(k, n, "f32 GEMM: %s", err);
        return NULL;
    }
    LLVMSetLinkage(gf, LLVMInternalLinkage);
    LLVMAddAttributeAtIndex(gf, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    return gf;
}

static bool
fc_emit_gemm_t(Kb *k, Node *n, const FcPlan *p, const CgNodeArgs *a)
{
    LLVMBuilderRef B = k->b;
    int64_t NB = (p->P + 15) / 16;
    NB = NB < 64 ? 64 : (NB + 63) / 64 * 64;
    NB = NB < p->P ? NB : p->P;
    int64_t nblk = (p->P + NB - 1) / NB, tail = p->P - (nblk - 1) * NB;
    LLVMValueRef gf = fc_kernel_t(k, n, p, NB), gt = gf;
    if (gf && tail != NB)
        gt = fc_kernel_t(k, n, p, tail);
    if (!gf || !gt)
        return false;
    float *w = weights_f32(k, n, p);
    LLVMValueRef wc = cg_const_bytes(k, w, (size_t)(p->M * p->K) * 4, "sconv.w");
    free(w);
    CgLoop ln, lg;
    LLVMValueRef nb = cg_loop_begin(k, &ln, cg_i64(k, p->N));
    LLVMValueRef gi = cg_loop_begin(k, &lg, cg_i64(k, p->G));
    LLVMValueRef xg = cg_gep(k, a->in[0], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nb, cg_i64(k, p->C)), cg_mul(k, gi, cg_i64(k, p->Cg))), cg_i64(k, p->H * p->W))));
    LLVMValueRef yg = cg_gep(k, a->out[0], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nb, cg_i64(k, p->M)), cg_mul(k, gi, cg_i64(k, p->Mg))), cg_i64(k, p->P))));
    LLVMValueRef wg = cg_gep(k, wc, off4(k, cg_mul(k, gi, cg_i64(k, p->Mg * p->K))));
    LLVMValueRef nul = LLVMConstPointerNull(k->ptr);
    LLVMValueRef bg = p->bias ? cg_gep(k, a->in[2], off4(k, cg_mul(k, gi, cg_i64(k, p->Mg)))) : nul;
    if (!p->direct)
        (p->tr ? fc_im2col_t : fc_im2col)(k, p, a, xg, a->scratch);
    LLVMValueRef ptrs[4] = {p->direct ? xg : a->scratch, yg, wg, bg};
    Par par;
    LLVMValueRef u = cg_par_begin(k, &par, nblk, ptrs, 4);
    LLVMValueRef p0 = cg_mul(k, u, cg_i64(k, NB));
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr};
    LLVMValueRef args[5] = {ptrs[2], cg_gep(k, ptrs[1], off4(k, p0)), cg_i64(k, 0), cg_i64(k, p->Mg),
                            cg_gep(k, ptrs[0], off4(k, p0))};
    LLVMTypeRef ft = LLVMFunctionType(k->vd, pt, 5, 0);
    LLVMValueRef last = LLVMBuildICmp(B, LLVMIntEQ, u, cg_i64(k, nblk - 1), "");
    if (gt == gf) {
        LLVMBuildCall2(B, ft, gf, args, 5, "");
    } else {
        CgIf ci;
        cg_if_begin(k, &ci, last);
        LLVMBuildCall2(B, ft, gt, args, 5, "");
        cg_if_else(k, &ci);
        LLVMBuildCall2(B, ft, gf, args, 5, "");
        cg_if_end(k, &ci);
    }
    if (p->bias) {
        LLVMValueRef cnt = LLVMBuildSelect(B, last, cg_i64(k, tail), cg_i64(k, NB), "");
        CgLoop lj, lp;
        LLVMValueRef j = cg_loop_begin(k, &lj, cg_i64(k, p->Mg));
        LLVMValueRef bj = cg_load_raw(k, ET_F32, ptrs[3], j);
        LLVMValueRef yrow = cg_gep(k, ptrs[1], off4(k, cg_add(k, cg_mul(k, j, cg_i64(k, p->P)), p0)));
        LLVMValueRef pi = cg_loop_begin(k, &lp, cnt);
        cg_store_raw(k, ET_F32, yrow, pi, LLVMBuildFAdd(B, cg_load_raw(k, ET_F32, yrow, pi), bj, ""));
        cg_loop_end(k, &lp);
        cg_loop_end(k, &lj);
    }
    cg_par_end(k, &par, a);
    cg_loop_end(k, &lg);
    cg_loop_end(k, &ln);
    return true;
}

static bool
fc_emit_gemm(Kb *k, Node *n, const FcPlan *p, const CgNodeArgs *a)
{
    int rb = 1;
    LLVMValueRef gf = fc_kernel(k, n, p, &rb);
    if (!gf)
        return false;
    LLVMValueRef wc = NULL;
    if (p->G > 1) {
        float *w = weights_f32(k, n, p);
        wc = cg_const_bytes(k, w, (size_t)(p->M * p->K) * 4, "sconv.w");
        free(w);
    }
    LLVMValueRef col = a->scratch;
    LLVMValueRef cbuf = p->direct ? a->scratch : cg_gep(k, a->scratch, cg_i64(k, p->K * p->P * 4));
    CgLoop ln, lg;
    LLVMValueRef nb = cg_loop_begin(k, &ln, cg_i64(k, p->N));
    LLVMValueRef gi = cg_loop_begin(k, &lg, cg_i64(k, p->G));
    LLVMValueRef xg = cg_gep(k, a->in[0], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nb, cg_i64(k, p->C)), cg_mul(k, gi, cg_i64(k, p->Cg))), cg_i64(k, p->H * p->W))));
    LLVMValueRef yg = cg_gep(k, a->out[0], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nb, cg_i64(k, p->M)), cg_mul(k, gi, cg_i64(k, p->Mg))), cg_i64(k, p->P))));
    LLVMValueRef wg = wc ? cg_gep(k, wc, off4(k, cg_mul(k, gi, cg_i64(k, p->Mg * p->K)))) : NULL;
    LLVMValueRef bg = p->bias ? cg_gep(k, a->in[2], off4(k, cg_mul(k, gi, cg_i64(k, p->Mg)))) : NULL;
    if (!p->direct)
        (p->tr ? fc_im2col_t : fc_im2col)(k, p, a, xg, col);
    fc_gemm(k, p, a, gf, rb, p->direct ? xg : col, cbuf, yg, wg, bg);
    cg_loop_end(k, &lg);
    cg_loop_end(k, &ln);
    return true;
}

/* ---- depthwise form ---- */

typedef struct DwTask {
    LLVMValueRef buf;          /* row buffers [KH][RB] */
    LLVMValueRef wrow;         /* the channel's KH*KW weights */
    LLVMValueRef acc[FC_MAXV]; /* allocas */
} DwTask;

static void
dw_tile(Kb *k, const FcPlan *p, DwTask *t, LLVMValueRef ow0, LLVMValueRef yrow, LLVMValueRef bi,
        int64_t pix)
{
    LLVMBuilderRef B = k->b;
    LLVMTypeRef vf = LLVMVectorType(k->f32, (unsigned)p->V);
    int jn = (int)((pix + p->V - 1) / p->V);
    for (int j = 0; j < jn; j++)
        LLVMBuildStore(B, LLVMConstNull(vf), t->acc[j]);
    for (int64_t kh = 0; kh < p->KH; kh++) {
        LLVMValueRef rb = cg_gep(k, t->buf, cg_i64(k, kh * p->RB * 4));
        CgLoop lw;
        LLVMValueRef kw = cg_loop_begin(k, &lw, cg_i64(k, p->KW));
        LLVMValueRef wf = cg_vsplat(k, cg_load_raw(k, ET_F32, t->wrow, cg_add(k, cg_i64(k, kh * p->KW), kw)), (unsigned)p->V);
        LLVMValueRef kwd = cg_mul(k, kw, cg_i64(k, p->dw));
        for (int j = 0; j < jn; j++)
            LLVMBuildStore(B, cg_fma(k, cg_dw_lanes(k, p->V, p->sw, rb, ow0, kwd, j), wf, LLVMBuildLoad2(B, vf, t->acc[j], "")), t->acc[j]);
        cg_loop_end(k, &lw);
    }
    for (int j = 0; j < jn; j++) {
        LLVMValueRef v = LLVMBuildLoad2(B, vf, t->acc[j], "");
        if (bi)
            v = LLVMBuildFAdd(B, v, bi, "");
        LLVMValueRef e = cg_add(k, ow0, cg_i64(k, j * p->V));
        int64_t lanes = pix - j * p->V;
        if (lanes >= p->V) {
            irb_store(&k->ir, v, cg_gep(k, yrow, off4(k, e)), 4);
            continue;
        }
        for (int64_t l = 0; l < lanes; l++)
            cg_store_raw(k, ET_F32, yrow, cg_add(k, e, cg_i64(k, l)), LLVMBuildExtractElement(B, v, cg_i32(k, l), ""));
    }
}

/* the KH zero-padded input rows of output row oh (all zeros for rows outside the input) */
static void
dw_rows(Kb *k, const FcPlan *p, LLVMValueRef buf, LLVMValueRef xp, LLVMValueRef oh)
{
    LLVMBuilderRef B = k->b;
    LLVMValueRef zero8 = LLVMConstInt(k->i8, 0, 0);
    for (int64_t kh = 0; kh < p->KH; kh++) {
        LLVMValueRef ih = cg_add(k, LLVMBuildSub(B, cg_mul(k, oh, cg_i64(k, p->sh)), cg_i64(k, p->ph), ""), cg_i64(k, kh * p->dh));
        LLVMValueRef rb = cg_gep(k, buf, cg_i64(k, kh * p->RB * 4));
        CgIf in;
        cg_if_begin(k, &in, cg_in_range(k, ih, p->H));
        if (p->pw)
            LLVMBuildMemSet(B, rb, zero8, cg_i64(k, p->pw * 4), 4);
        LLVMBuildMemSet(B, cg_gep(k, rb, cg_i64(k, (p->pw + p->W) * 4)), zero8, cg_i64(k, (p->RB - p->pw - p->W) * 4), 4);
        LLVMBuildMemCpy(B, cg_gep(k, rb, cg_i64(k, p->pw * 4)), 4, cg_gep(k, xp, off4(k, cg_mul(k, ih, cg_i64(k, p->W)))), 4,
                        cg_i64(k, p->W * 4));
        cg_if_else(k, &in);
        LLVMBuildMemSet(B, rb, zero8, cg_i64(k, p->RB * 4), 4);
        cg_if_end(k, &in);
    }
}

static void
fc_depthwise(Kb *k, Node *n, const FcPlan *p, const CgNodeArgs *a)
{
    LLVMBuilderRef B = k->b;
    float *w = weights_f32(k, n, p);
    LLVMValueRef wc = cg_const_bytes(k, w, (size_t)(p->M * p->KH * p->KW) * 4, "sconv.dw");
    free(w);
    LLVMValueRef nul = LLVMConstPointerNull(k->ptr);
    LLVMValueRef ptrs[3] = {a->in[0], a->out[0], p->bias ? a->in[2] : nul};
    Par par;
    LLVMValueRef t = cg_par_begin(k, &par, p->N * p->M * p->OH, ptrs, 3);
    LLVMValueRef oh = LLVMBuildURem(B, t, cg_i64(k, p->OH), "");
    LLVMValueRef nm = LLVMBuildUDiv(B, t, cg_i64(k, p->OH), ""); /* image * M + channel */
    LLVMValueRef m = LLVMBuildURem(B, nm, cg_i64(k, p->M), ""), nb = LLVMBuildUDiv(B, nm, cg_i64(k, p->M), "");
    LLVMValueRef c = cg_add(k, cg_mul(k, nb, cg_i64(k, p->C)), LLVMBuildUDiv(B, m, cg_i64(k, p->Mg), ""));
    LLVMValueRef xp = cg_gep(k, ptrs[0], off4(k, cg_mul(k, c, cg_i64(k, p->H * p->W))));
    DwTask tk;
    tk.buf = cg_entry_alloca(k, LLVMArrayType2(k->f32, (uint64_t)(p->KH * p->RB)));
    LLVMSetAlignment(tk.buf, 64);
    dw_rows(k, p, tk.buf, xp, oh);
    tk.wrow = cg_gep(k, wc, off4(k, cg_mul(k, m, cg_i64(k, p->KH * p->KW))));
    for (int j = 0; j < p->NV; j++)
        tk.acc[j] = cg_entry_alloca(k, LLVMVectorType(k->f32, (unsigned)p->V));
    LLVMValueRef bi = p->bias ? cg_vsplat(k, cg_load_raw(k, ET_F32, ptrs[2], m), (unsigned)p->V) : NULL;
    LLVMValueRef yrow = cg_gep(k, ptrs[1], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nm, cg_i64(k, p->OH)), oh), cg_i64(k, p->OW))));
    CgLoop lt;
    LLVMValueRef ti = cg_loop_begin(k, &lt, cg_i64(k, p->Pt));
    LLVMValueRef ow0 = cg_mul(k, ti, cg_i64(k, p->NR));
    if (p->tail == p->NR || p->Pt == 1) {
        dw_tile(k, p, &tk, ow0, yrow, bi, p->tail);
    } else {
        CgIf last;
        cg_if_begin(k, &last, LLVMBuildICmp(B, LLVMIntEQ, ti, cg_i64(k, p->Pt - 1), ""));
        dw_tile(k, p, &tk, ow0, yrow, bi, p->tail);
        cg_if_else(k, &last);
        dw_tile(k, p, &tk, ow0, yrow, bi, p->NR);
        cg_if_end(k, &last);
    }
    cg_loop_end(k, &lt);
    cg_par_end(k, &par, a);
}

bool
cg_emit_float_conv(Kb *k, Node *n, const CgNodeArgs *a)
{
    FcPlan p;
    if (!fc_plan(k, n, &p))
        return cg_fail(k, n, "operands not supported by the f32 convolution");
    if (p.N == 0 || p.M == 0 || p.P == 0)
        return true;
    if (p.dwise) {
        fc_depthwise(k, n, &p, a);
        return true;
    }
    return p.rows_px ? fc_emit_gemm(k, n, &p, a) : fc_emit_gemm_t(k, n, &p, a);
}
