/* float_wconv.c: `wconv` (a float-activation convolution with constant 4- or 8-bit weights,
 * weight-only quantization; docs/ir.md) as vector kernels that read the integer weights and
 * convert them in registers: the weights are never dequantized into memory.
 *
 * Every kernel computes, lane by lane, the op's definition (lib/ref/ref_wonly.c): per result
 * element, acc = fma(x[tap], (float)(w - zp[m]), acc) over the group's input channels and the
 * kernel taps in increasing order, then acc * scale[m] and + bias[m]. Taps outside the input
 * read zeros from a zero-filled buffer (fma(0, w, acc) = acc: acc starts at +0 and never becomes
 * -0, so a zero tap and a skipped tap give the same bits), so JIT and reference agree bit for bit
 * on every path (llvm.fma is fused everywhere). Lanes are output pixels (V f32 lanes: 16 on
 * avx512vnni, 8 on x86 with AVX2, else 4), so each weight is converted once per tile of pixels.
 *
 * GEMM form (any group size; the depthwise kernel below takes Cg = 1): per image and group,
 * B[k][p] with k = (c, kh, kw) of the group's K = Cg*KH*KW taps and p the P = OH*OW output
 * pixels is x itself for a 1x1 conv with stride 1 and no padding, else an im2col into scratch
 * (a parallel-for over the K rows: per row and output row, zeros outside the input's columns,
 * the inside copied, with memcpy for stride 1). Then a parallel-for over (pixel tile, channel
 * panel) tasks: a tile of MR = 4 output channels x NV vectors of V pixels keeps MR x NV
 * accumulators; per k, NV vectors of B are loaded and the MR weights (packed at compile time as
 * [G][panel][K][MR] bytes, one byte per weight also for 4-bit ones: a conv weight is reused for
 * every pixel, so its conversion, not its size, is what costs) are extended, reduced by their
 * zero points, converted to f32 once and broadcast to the NV fmas of each channel. The last
 * pixel tile loads and stores its valid lanes one by one; channels past the group's end repeat
 * its last channel (same values stored twice).
 *
 * Depthwise form (one input channel per group, KH padded rows of at most DW_MAX_ROWBUF bytes):
 * a parallel-for over (image, output channel, output row); each task copies the KH input rows
 * it reads into zero-padded row buffers (per thread, on its stack) and slides NV vectors of
 * output pixels over the taps (stride 1: one load per tap and vector; stride 2: one load of 2V
 * floats and a shuffle of the even lanes; larger strides: lane by lane); rows outside the input
 * are skipped as the reference skips them. */
#include "codegen/lower/lower.h"
#include "codegen/target/isa.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

#define WC_MR 4
#define WC_MAXV 4
#define DW_MAX_ROWBUF (64 << 10)

typedef struct WcPlan {
    int64_t N, C, M, G, Cg, Mg, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
    int64_t K, P;         /* GEMM form: taps per output channel, output pixels per plane */
    int V, NV, NR;        /* lanes, vectors per tile, pixels per tile */
    int64_t Mp, Pt, tail; /* channel panels per group, pixel tiles, pixels of the last tile */
    int64_t RB;           /* depthwise: floats per padded row buffer */
    bool direct, dwise, uns, zp, bias;
} WcPlan;

static const Tensor *
operand_const(Kb *k, Node *n, uint32_t i)
{
    return i < n->nin && n->in[i].id ? ir_const_of(k->g, n->in[i]) : NULL;
}

static bool
wc_plan(Kb *k, Node *n, WcPlan *p)
{
    Graph *g = k->g;
    const Type *xt = &ir_value(g, n->in[0])->type, *yt = &ir_value(g, n->out[0])->type;
    const Tensor *w = operand_const(k, n, 1), *s = operand_const(k, n, 2);
    for (uint32_t i = 1; i < n->nin; i++)
        if (n->in[i].id && !ir_const_of(g, n->in[i]))
            return cg_fail(k, n, "operand %u must be a constant", i);
    ElemType we = w ? w->type.elem : ET_NONE;
    if (xt->elem != ET_F32 || yt->elem != ET_F32 || (xt->rank != 3 && xt->rank != 4))
        return cg_fail(k, n, "input and result must be f32 of rank 3 or 4");
    if (!w || !s || (we != ET_I8 && we != ET_U8 && we != ET_I4 && we != ET_U4) ||
        w->type.rank != xt->rank || s->type.elem != ET_F32)
        return cg_fail(k, n, "the weight must be an i8, u8, i4 or u4 tensor and the scales f32");
    CgWin win;
    if (!cg_window(k, n, xt, yt, w->type.dims + 2, &win))
        return false;
    memset(p, 0, sizeof *p);
    int h = cg_win_h(&win), wd = cg_win_w(&win);
    p->N = xt->dims[0];
    p->C = xt->dims[1];
    p->M = w->type.dims[0];
    p->G = ir_attr_int(g, n, "group", 1);
    if (p->G <= 0 || p->C % p->G || p->M % p->G || w->type.dims[1] * p->G != p->C)
        return cg_fail(k, n, "invalid group count");
    p->Cg = p->C / p->G;
    p->Mg = p->M / p->G;
    p->H = win.in[h], p->W = win.in[wd], p->OH = win.out[h], p->OW = win.out[wd];
    p->KH = win.k[h], p->KW = win.k[wd], p->sh = win.s[h], p->sw = win.s[wd];
    p->dh = win.d[h], p->dw = win.d[wd], p->ph = win.pb[h], p->pw = win.pb[wd];
    p->K = p->Cg * p->KH * p->KW;
    p->P = p->OH * p->OW;
    p->uns = we == ET_U8 || we == ET_U4;
    p->zp = operand_const(k, n, 3) != NULL;
    p->bias = operand_const(k, n, 4) != NULL;
    p->V = (int)cg_isa_i32_lanes(k->t, k->isa);
    bool regs16 = k->t->x86 && p->V < 16;
    p->direct = p->KH == 1 && p->KW == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 &&
                p->pw == 0 && p->OH == p->H && p->OW == p->W;
    int64_t pix = p->Cg == 1 ? p->OW : p->P; /* pixels a tile runs over */
    int64_t nv = (pix + p->V - 1) / p->V;
    p->NV = (int)(nv < (regs16 ? 2 : WC_MAXV) ? (nv > 0 ? nv : 1) : (regs16 ? 2 : WC_MAXV));
    p->NR = p->NV * p->V;
    p->Mp = (p->Mg + WC_MR - 1) / WC_MR;
    p->Pt = (pix + p->NR - 1) / p->NR;
    p->tail = pix - (p->Pt - 1) * p->NR;
    if (p->Cg == 1) {
        int64_t reach = p->Pt * p->NR * (p->sw < 2 ? 1 : p->sw) + (p->KW - 1) * p->dw + p->V;
        p->RB = reach > p->pw + p->W ? reach : p->pw + p->W;
        p->dwise = p->KH <= 64 && p->RB * p->KH * 4 <= DW_MAX_ROWBUF;
    }
    return true;
}

static LLVMValueRef
off4(Kb *k, LLVMValueRef elems)
{
    return cg_mul(k, elems, cg_i64(k, 4));
}

/* f32 vector of `lanes` floats at base + 4 * e (lanes <= V: the rest 0, loaded one by one) */
static LLVMValueRef
load_f32s(Kb *k, const WcPlan *p, LLVMValueRef base, LLVMValueRef e, int64_t lanes)
{
    LLVMTypeRef vf = LLVMVectorType(k->f32, (unsigned)p->V);
    if (lanes >= p->V)
        return cg_load_at(k, vf, base, off4(k, e), 4);
    LLVMValueRef v = LLVMConstNull(vf);
    for (int64_t l = 0; l < lanes; l++)
        v = LLVMBuildInsertElement(k->b, v, cg_load_raw(k, ET_F32, base, cg_add(k, e, cg_i64(k, l))),
                                   cg_i32(k, l), "");
    return v;
}

/* store the first `lanes` lanes of v at base + 4 * e */
static void
store_f32s(Kb *k, const WcPlan *p, LLVMValueRef base, LLVMValueRef e, LLVMValueRef v, int64_t lanes)
{
    if (lanes >= p->V) {
        irb_store(&k->ir, v, cg_gep(k, base, off4(k, e)), 4);
        return;
    }
    for (int64_t l = 0; l < lanes; l++)
        cg_store_raw(k, ET_F32, base, cg_add(k, e, cg_i64(k, l)),
                     LLVMBuildExtractElement(k->b, v, cg_i32(k, l), ""));
}

/* (float)(w - zp) of integer lanes (any vector width, or a scalar) */
static LLVMValueRef
to_f32(Kb *k, const WcPlan *p, LLVMValueRef w8, LLVMValueRef zp, LLVMTypeRef ti, LLVMTypeRef tf)
{
    LLVMValueRef wi = p->uns ? LLVMBuildZExt(k->b, w8, ti, "") : LLVMBuildSExt(k->b, w8, ti, "");
    if (zp)
        wi = LLVMBuildSub(k->b, wi, zp, "");
    return LLVMBuildSIToFP(k->b, wi, tf, "");
}

/* ---- compile-time packing ---- */

typedef struct WcConsts {
    LLVMValueRef w, s, z, b; /* weights; scales, zero points (i32), bias per packed channel */
} WcConsts;

/* GEMM form: weights [G][Mp][K][MR] bytes, scales / zero points / bias [G][Mp][MR] (channels
 * past a group's end repeat its last). Depthwise: weights [M][KH*KW], the rest [M]. */
static void
wc_pack(Kb *k, Node *n, const WcPlan *p, WcConsts *o)
{
    const Tensor *w = operand_const(k, n, 1), *s = operand_const(k, n, 2);
    const Tensor *z = operand_const(k, n, 3), *b = operand_const(k, n, 4);
    int64_t rows = p->dwise ? p->M : p->G * p->Mp * WC_MR, per = p->dwise ? p->KH * p->KW : p->K;
    size_t nw = (size_t)(rows * per), nr = (size_t)rows;
    uint8_t *pw = xcalloc(nw ? nw : 1, 1);
    float *ps = xcalloc(nr ? nr : 1, sizeof *ps), *pb = xcalloc(nr ? nr : 1, sizeof *pb);
    int32_t *pz = xcalloc(nr ? nr : 1, sizeof *pz);
    for (int64_t r = 0; r < rows; r++) {
        int64_t ch = r;
        if (!p->dwise) {
            int64_t gi = r / (p->Mp * WC_MR), m = r % (p->Mp * WC_MR);
            ch = gi * p->Mg + (m < p->Mg ? m : p->Mg - 1);
        }
        ps[r] = ((const float *)s->data)[ch];
        pz[r] = z ? (int32_t)tensor_get_i(z, (size_t)ch) : 0;
        pb[r] = b ? ((const float *)b->data)[ch] : 0.0f;
        for (int64_t kk = 0; kk < per; kk++) {
            uint8_t v = (uint8_t)tensor_get_i(w, (size_t)(ch * per + kk));
            if (p->dwise)
                pw[r * per + kk] = v;
            else /* [g][panel][k][r % MR] */
                pw[((r / WC_MR) * per + kk) * WC_MR + r % WC_MR] = v;
        }
    }
    o->w = cg_const_bytes(k, pw, nw ? nw : 1, "wconv.w");
    o->s = cg_const_bytes(k, ps, (nr ? nr : 1) * sizeof *ps, "wconv.s");
    o->z = p->zp ? cg_const_bytes(k, pz, (nr ? nr : 1) * sizeof *pz, "wconv.z") : NULL;
    o->b = p->bias ? cg_const_bytes(k, pb, (nr ? nr : 1) * sizeof *pb, "wconv.b") : NULL;
    free(pw), free(ps), free(pb), free(pz);
}

/* ---- GEMM form ---- */

void
cg_f32_im2col(Kb *k, const CgIm2col *p, const CgNodeArgs *a, LLVMValueRef xg, LLVMValueRef col)
{
    LLVMBuilderRef B = k->b;
    LLVMValueRef ptrs[2] = {xg, col};
    Par par;
    LLVMValueRef kk = cg_par_begin(k, &par, p->K, ptrs, 2);
    xg = ptrs[0], col = ptrs[1];
    LLVMValueRef ci = LLVMBuildUDiv(B, kk, cg_i64(k, p->KH * p->KW), "");
    LLVMValueRef kh = LLVMBuildURem(B, LLVMBuildUDiv(B, kk, cg_i64(k, p->KW), ""), cg_i64(k, p->KH), "");
    LLVMValueRef kw = LLVMBuildURem(B, kk, cg_i64(k, p->KW), "");
    /* output columns [lo, hi) read inside the input: ow*sw - pw + kw*dw in [0, W) */
    LLVMValueRef kwd = cg_mul(k, kw, cg_i64(k, p->dw));
    LLVMValueRef a0 = cg_smax(k, LLVMBuildSub(B, cg_i64(k, p->pw), kwd, ""), cg_i64(k, 0));
    LLVMValueRef a1 = cg_smax(k, LLVMBuildSub(B, cg_i64(k, p->W + p->pw), kwd, ""), cg_i64(k, 0));
    LLVMValueRef lo = cg_smin(k, LLVMBuildUDiv(B, cg_add(k, a0, cg_i64(k, p->sw - 1)), cg_i64(k, p->sw), ""), cg_i64(k, p->OW));
    LLVMValueRef hi = cg_smax(k, cg_smin(k, LLVMBuildUDiv(B, cg_add(k, a1, cg_i64(k, p->sw - 1)), cg_i64(k, p->sw), ""), cg_i64(k, p->OW)), lo);
    LLVMValueRef xc = cg_gep(k, xg, off4(k, cg_mul(k, ci, cg_i64(k, p->H * p->W))));
    LLVMValueRef zero8 = LLVMConstInt(k->i8, 0, 0);
    CgLoop lo_h;
    LLVMValueRef oh = cg_loop_begin(k, &lo_h, cg_i64(k, p->OH));
    LLVMValueRef dst = cg_gep(k, col, off4(k, cg_add(k, cg_mul(k, kk, cg_i64(k, p->P)), cg_mul(k, oh, cg_i64(k, p->OW)))));
    LLVMValueRef ih = cg_add(k, LLVMBuildSub(B, cg_mul(k, oh, cg_i64(k, p->sh)), cg_i64(k, p->ph), ""),
                             cg_mul(k, kh, cg_i64(k, p->dh)));
    CgIf in;
    cg_if_begin(k, &in, cg_in_range(k, ih, p->H));
    LLVMBuildMemSet(B, dst, zero8, off4(k, lo), 4);
    LLVMValueRef hi_end = LLVMBuildSub(B, cg_i64(k, p->OW), hi, "");
    LLVMBuildMemSet(B, cg_gep(k, dst, off4(k, hi)), zero8, off4(k, hi_end), 4);
    /* source of column ow: row ih, column ow*sw - pw + kw*dw */
    LLVMValueRef xrow = cg_gep(k, xc, off4(k, LLVMBuildSub(B, cg_add(k, cg_mul(k, ih, cg_i64(k, p->W)), kwd), cg_i64(k, p->pw), "")));
    if (p->sw == 1) {
        LLVMBuildMemCpy(B, cg_gep(k, dst, off4(k, lo)), 4, cg_gep(k, xrow, off4(k, lo)), 4,
                        off4(k, LLVMBuildSub(B, hi, lo, "")));
    } else {
        CgLoop lc;
        LLVMValueRef j = cg_add(k, lo, cg_loop_begin(k, &lc, LLVMBuildSub(B, hi, lo, "")));
        cg_store_raw(k, ET_F32, dst, j, cg_load_raw(k, ET_F32, xrow, cg_mul(k, j, cg_i64(k, p->sw))));
        cg_loop_end(k, &lc);
    }
    cg_if_else(k, &in);
    LLVMBuildMemSet(B, dst, zero8, cg_i64(k, p->OW * 4), 4);
    cg_if_end(k, &in);
    cg_loop_end(k, &lo_h);
    cg_par_end(k, &par, a);
}

typedef struct WcTask {
    LLVMValueRef bsrc, yg, wp, p0;  /* B, the group's result plane, the panel's weights, first pixel */
    LLVMValueRef row[WC_MR];        /* result channel of each tile row within the group */
    LLVMValueRef sc[WC_MR], bi[WC_MR], zv; /* splatted scales / biases, zero points <MR x i32> */
    LLVMValueRef acc[WC_MR][WC_MAXV];      /* allocas */
} WcTask;

/* One tile of `pix` valid pixels (NR, or the last tile's count) */
static void
wc_tile(Kb *k, const WcPlan *p, WcTask *t, int64_t pix)
{
    LLVMBuilderRef B = k->b;
    LLVMTypeRef vf = LLVMVectorType(k->f32, (unsigned)p->V);
    LLVMTypeRef wi = LLVMVectorType(k->i32, WC_MR), wfl = LLVMVectorType(k->f32, WC_MR);
    int jn = (int)((pix + p->V - 1) / p->V);
    for (int r = 0; r < WC_MR; r++)
        for (int j = 0; j < jn; j++)
            LLVMBuildStore(B, LLVMConstNull(vf), t->acc[r][j]);
    CgLoop lk;
    LLVMValueRef kk = cg_loop_begin(k, &lk, cg_i64(k, p->K));
    LLVMValueRef e0 = cg_add(k, cg_mul(k, kk, cg_i64(k, p->P)), t->p0);
    LLVMValueRef xv[WC_MAXV];
    for (int j = 0; j < jn; j++)
        xv[j] = load_f32s(k, p, t->bsrc, cg_add(k, e0, cg_i64(k, j * p->V)), pix - j * p->V);
    LLVMValueRef w8 = cg_load_at(k, LLVMVectorType(k->i8, WC_MR), t->wp, cg_mul(k, kk, cg_i64(k, WC_MR)), 1);
    LLVMValueRef wf = to_f32(k, p, w8, t->zv, wi, wfl);
    for (int r = 0; r < WC_MR; r++) {
        LLVMValueRef mask[16];
        for (int l = 0; l < p->V; l++)
            mask[l] = cg_i32(k, r);
        LLVMValueRef bc = LLVMBuildShuffleVector(B, wf, LLVMGetUndef(wfl), LLVMConstVector(mask, (unsigned)p->V), "");
        for (int j = 0; j < jn; j++)
            LLVMBuildStore(B, cg_fma(k, xv[j], bc, LLVMBuildLoad2(B, vf, t->acc[r][j], "")), t->acc[r][j]);
    }
    cg_loop_end(k, &lk);
    for (int r = 0; r < WC_MR; r++) {
        LLVMValueRef yrow = cg_add(k, cg_mul(k, t->row[r], cg_i64(k, p->P)), t->p0);
        for (int j = 0; j < jn; j++) {
            LLVMValueRef v = LLVMBuildFMul(B, LLVMBuildLoad2(B, vf, t->acc[r][j], ""), t->sc[r], "");
            if (t->bi[r])
                v = LLVMBuildFAdd(B, v, t->bi[r], "");
            store_f32s(k, p, t->yg, cg_add(k, yrow, cg_i64(k, j * p->V)), v, pix - j * p->V);
        }
    }
}

/* The (pixel tile, channel panel) tasks of one image's group */
static void
wc_gemm(Kb *k, const WcPlan *p, const WcConsts *cs, const CgNodeArgs *a, LLVMValueRef bsrc,
        LLVMValueRef yg, LLVMValueRef gi)
{
    LLVMBuilderRef B = k->b;
    /* the group's packed constants */
    LLVMValueRef pan0 = cg_mul(k, gi, cg_i64(k, p->Mp));
    LLVMValueRef ptrs[6] = {bsrc, yg, cg_gep(k, cs->w, cg_mul(k, pan0, cg_i64(k, p->K * WC_MR))),
                            cg_gep(k, cs->s, off4(k, cg_mul(k, pan0, cg_i64(k, WC_MR)))),
                            cs->z ? cg_gep(k, cs->z, off4(k, cg_mul(k, pan0, cg_i64(k, WC_MR)))) : cs->s,
                            cs->b ? cg_gep(k, cs->b, off4(k, cg_mul(k, pan0, cg_i64(k, WC_MR)))) : cs->s};
    Par par;
    LLVMValueRef t = cg_par_begin(k, &par, p->Pt * p->Mp, ptrs, 6);
    LLVMValueRef pt = LLVMBuildUDiv(B, t, cg_i64(k, p->Mp), ""), mp = LLVMBuildURem(B, t, cg_i64(k, p->Mp), "");
    WcTask tk = {.bsrc = ptrs[0], .yg = ptrs[1]};
    tk.wp = cg_gep(k, ptrs[2], cg_mul(k, mp, cg_i64(k, p->K * WC_MR)));
    tk.p0 = cg_mul(k, pt, cg_i64(k, p->NR));
    LLVMValueRef r0 = cg_mul(k, mp, cg_i64(k, WC_MR));
    for (int r = 0; r < WC_MR; r++) {
        LLVMValueRef pr = cg_add(k, r0, cg_i64(k, r));
        tk.row[r] = cg_smin(k, pr, cg_i64(k, p->Mg - 1));
        tk.sc[r] = cg_vsplat(k, cg_load_raw(k, ET_F32, ptrs[3], pr), (unsigned)p->V);
        tk.bi[r] = cs->b ? cg_vsplat(k, cg_load_raw(k, ET_F32, ptrs[5], pr), (unsigned)p->V) : NULL;
        for (int j = 0; j < p->NV; j++)
            tk.acc[r][j] = cg_entry_alloca(k, LLVMVectorType(k->f32, (unsigned)p->V));
    }
    if (cs->z)
        tk.zv = cg_load_at(k, LLVMVectorType(k->i32, WC_MR), ptrs[4], off4(k, r0), 4);
    if (p->tail == p->NR || p->Pt == 1) {
        wc_tile(k, p, &tk, p->tail);
    } else {
        CgIf last;
        cg_if_begin(k, &last, LLVMBuildICmp(B, LLVMIntEQ, pt, cg_i64(k, p->Pt - 1), ""));
        wc_tile(k, p, &tk, p->tail);
        cg_if_else(k, &last);
        wc_tile(k, p, &tk, p->NR);
        cg_if_end(k, &last);
    }
    cg_par_end(k, &par, a);
}

/* ---- depthwise form ---- */

typedef struct DwTask {
    LLVMValueRef buf, ok[64];   /* row buffers [KH][RB]; per kernel row: inside the input */
    LLVMValueRef wrow, zp;      /* the channel's weights (bytes), its zero point (i32) or NULL */
    LLVMValueRef acc[WC_MAXV];  /* allocas */
} DwTask;

LLVMValueRef
cg_dw_lanes(Kb *k, int64_t V, int64_t sw, LLVMValueRef rb, LLVMValueRef ow0, LLVMValueRef kwd, int j)
{
    LLVMTypeRef vf = LLVMVectorType(k->f32, (unsigned)V);
    LLVMValueRef first = cg_add(k, cg_mul(k, cg_add(k, ow0, cg_i64(k, j * V)), cg_i64(k, sw)), kwd);
    if (sw == 1)
        return cg_load_at(k, vf, rb, off4(k, first), 4);
    if (sw == 2) {
        LLVMValueRef two = cg_load_at(k, LLVMVectorType(k->f32, (unsigned)(2 * V)), rb, off4(k, first), 4);
        LLVMValueRef mask[16];
        for (int l = 0; l < V; l++)
            mask[l] = cg_i32(k, 2 * l);
        return LLVMBuildShuffleVector(k->b, two, LLVMGetUndef(LLVMTypeOf(two)), LLVMConstVector(mask, (unsigned)V), "");
    }
    LLVMValueRef v = LLVMConstNull(vf);
    for (int l = 0; l < V; l++)
        v = LLVMBuildInsertElement(k->b, v, cg_load_raw(k, ET_F32, rb, cg_add(k, first, cg_i64(k, l * sw))), cg_i32(k, l), "");
    return v;
}

static void
dw_tile(Kb *k, const WcPlan *p, DwTask *t, LLVMValueRef ow0, LLVMValueRef yrow, LLVMValueRef sc,
        LLVMValueRef bi, int64_t pix)
{
    LLVMBuilderRef B = k->b;
    LLVMTypeRef vf = LLVMVectorType(k->f32, (unsigned)p->V);
    int jn = (int)((pix + p->V - 1) / p->V);
    for (int j = 0; j < jn; j++)
        LLVMBuildStore(B, LLVMConstNull(vf), t->acc[j]);
    for (int64_t kh = 0; kh < p->KH; kh++) {
        CgIf in;
        cg_if_begin(k, &in, t->ok[kh]);
        LLVMValueRef rb = cg_gep(k, t->buf, cg_i64(k, kh * p->RB * 4));
        CgLoop lw;
        LLVMValueRef kw = cg_loop_begin(k, &lw, cg_i64(k, p->KW));
        LLVMValueRef w8 = cg_load_raw(k, ET_I8, t->wrow, cg_add(k, cg_i64(k, kh * p->KW), kw));
        LLVMValueRef wf = cg_vsplat(k, to_f32(k, p, w8, t->zp, k->i32, k->f32), (unsigned)p->V);
        LLVMValueRef kwd = cg_mul(k, kw, cg_i64(k, p->dw));
        for (int j = 0; j < jn; j++)
            LLVMBuildStore(B, cg_fma(k, cg_dw_lanes(k, p->V, p->sw, rb, ow0, kwd, j), wf, LLVMBuildLoad2(B, vf, t->acc[j], "")), t->acc[j]);
        cg_loop_end(k, &lw);
        cg_if_else(k, &in);
        cg_if_end(k, &in);
    }
    for (int j = 0; j < jn; j++) {
        LLVMValueRef v = LLVMBuildFMul(B, LLVMBuildLoad2(B, vf, t->acc[j], ""), sc, "");
        if (bi)
            v = LLVMBuildFAdd(B, v, bi, "");
        store_f32s(k, p, yrow, cg_add(k, ow0, cg_i64(k, j * p->V)), v, pix - j * p->V);
    }
}

static void
wc_depthwise(Kb *k, const WcPlan *p, const WcConsts *cs, const CgNodeArgs *a)
{
    LLVMBuilderRef B = k->b;
    LLVMValueRef ptrs[2] = {a->in[0], a->out[0]};
    Par par;
    LLVMValueRef t = cg_par_begin(k, &par, p->N * p->M * p->OH, ptrs, 2);
    LLVMValueRef oh = LLVMBuildURem(B, t, cg_i64(k, p->OH), "");
    LLVMValueRef nm = LLVMBuildUDiv(B, t, cg_i64(k, p->OH), ""); /* image * M + channel */
    LLVMValueRef m = LLVMBuildURem(B, nm, cg_i64(k, p->M), ""), nb = LLVMBuildUDiv(B, nm, cg_i64(k, p->M), "");
    LLVMValueRef c = cg_add(k, cg_mul(k, nb, cg_i64(k, p->C)), LLVMBuildUDiv(B, m, cg_i64(k, p->Mg), ""));
    LLVMValueRef xp = cg_gep(k, ptrs[0], off4(k, cg_mul(k, c, cg_i64(k, p->H * p->W))));
    DwTask tk;
    LLVMValueRef buf = cg_entry_alloca(k, LLVMArrayType2(k->f32, (uint64_t)(p->KH * p->RB)));
    LLVMSetAlignment(buf, 64);
    tk.buf = buf;
    LLVMValueRef zero8 = LLVMConstInt(k->i8, 0, 0);
    for (int64_t kh = 0; kh < p->KH; kh++) {
        LLVMValueRef ih = cg_add(k, LLVMBuildSub(B, cg_mul(k, oh, cg_i64(k, p->sh)), cg_i64(k, p->ph), ""), cg_i64(k, kh * p->dh));
        tk.ok[kh] = cg_in_range(k, ih, p->H);
        CgIf in;
        cg_if_begin(k, &in, tk.ok[kh]);
        LLVMValueRef rb = cg_gep(k, buf, cg_i64(k, kh * p->RB * 4));
        if (p->pw)
            LLVMBuildMemSet(B, rb, zero8, cg_i64(k, p->pw * 4), 4);
        LLVMBuildMemSet(B, cg_gep(k, rb, cg_i64(k, (p->pw + p->W) * 4)), zero8, cg_i64(k, (p->RB - p->pw - p->W) * 4), 4);
        LLVMBuildMemCpy(B, cg_gep(k, rb, cg_i64(k, p->pw * 4)), 4, cg_gep(k, xp, off4(k, cg_mul(k, ih, cg_i64(k, p->W)))), 4,
                        cg_i64(k, p->W * 4));
        cg_if_else(k, &in);
        cg_if_end(k, &in);
    }
    tk.wrow = cg_gep(k, cs->w, cg_mul(k, m, cg_i64(k, p->KH * p->KW)));
    tk.zp = cs->z ? cg_load_raw(k, ET_I32, cs->z, m) : NULL;
    for (int j = 0; j < p->NV; j++)
        tk.acc[j] = cg_entry_alloca(k, LLVMVectorType(k->f32, (unsigned)p->V));
    LLVMValueRef sc = cg_vsplat(k, cg_load_raw(k, ET_F32, cs->s, m), (unsigned)p->V);
    LLVMValueRef bi = cs->b ? cg_vsplat(k, cg_load_raw(k, ET_F32, cs->b, m), (unsigned)p->V) : NULL;
    LLVMValueRef yrow = cg_gep(k, ptrs[1], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nm, cg_i64(k, p->OH)), oh), cg_i64(k, p->OW))));
    CgLoop lt;
    LLVMValueRef ti = cg_loop_begin(k, &lt, cg_i64(k, p->Pt));
    LLVMValueRef ow0 = cg_mul(k, ti, cg_i64(k, p->NR));
    if (p->tail == p->NR || p->Pt == 1) {
        dw_tile(k, p, &tk, ow0, yrow, sc, bi, p->tail);
    } else {
        CgIf last;
        cg_if_begin(k, &last, LLVMBuildICmp(B, LLVMIntEQ, ti, cg_i64(k, p->Pt - 1), ""));
        dw_tile(k, p, &tk, ow0, yrow, sc, bi, p->tail);
        cg_if_else(k, &last);
        dw_tile(k, p, &tk, ow0, yrow, sc, bi, p->NR);
        cg_if_end(k, &last);
    }
    cg_loop_end(k, &lt);
    cg_par_end(k, &par, a);
}

/* ---- entry points ---- */

int64_t
cg_wconv_scratch(Kb *k, Node *n)
{
    WcPlan p;
    if (!wc_plan(k, n, &p))
        return -1;
    return p.dwise || p.direct ? 0 : p.K * p.P * 4;
}

bool
cg_emit_wconv(Kb *k, Node *n, const CgNodeArgs *a)
{
    WcPlan p;
    if (!wc_plan(k, n, &p))
        return false;
    if (p.N == 0 || p.M == 0 || p.P == 0)
        return true;
    WcConsts cs;
    wc_pack(k, n, &p, &cs);
    if (p.dwise) {
        wc_depthwise(k, &p, &cs, a);
        return true;
    }
    CgLoop ln, lg;
    LLVMValueRef nb = cg_loop_begin(k, &ln, cg_i64(k, p.N));
    LLVMValueRef gi = cg_loop_begin(k, &lg, cg_i64(k, p.G));
    LLVMValueRef xg = cg_gep(k, a->in[0], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nb, cg_i64(k, p.C)), cg_mul(k, gi, cg_i64(k, p.Cg))), cg_i64(k, p.H * p.W))));
    LLVMValueRef yg = cg_gep(k, a->out[0], off4(k, cg_mul(k, cg_add(k, cg_mul(k, nb, cg_i64(k, p.M)), cg_mul(k, gi, cg_i64(k, p.Mg))), cg_i64(k, p.P))));
    if (!p.direct) {
        CgIm2col g = {p.K, p.P, p.H, p.W, p.OH, p.OW, p.KH, p.KW, p.sh, p.sw, p.dh, p.dw, p.ph, p.pw};
        cg_f32_im2col(k, &g, a, xg, a->scratch);
    }
    wc_gemm(k, &p, &cs, a, p.direct ? xg : a->scratch, yg, gi);
    cg_loop_end(k, &lg);
    cg_loop_end(k, &ln);
    return true;
}
