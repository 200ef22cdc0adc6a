/* qconv_first.c: the direct kernel of convolutions with few input channels (the first conv of
 * a CNN: 3 channels, 3x3 / 4x4 patches, stride 2 or 4), on the u8 x s8 quad dot product.
 *
 * Through the GEMM such a conv has a short reduction (K = 27 or 48) and most of its time goes
 * into moving the input (NCHW -> NHWC transpose, im2col gather of K bytes per pixel) and the
 * result. Here the pixels are the lanes and the output channels are registers: one task per
 * output row copies the C x KH input rows it needs into zero-point padded rows on its stack;
 * then per vector of 16 output columns, each (input channel, kernel row, group of up to 4
 * kernel columns) is one byte permute of a 64-byte window of its row (vpermb: lane l gets the
 * bytes s * l + i * d, i < 4) shared by every output channel, and each output channel m adds
 * one vpdpbusd of it with the 4 weights of m broadcast from memory. 16 output channels at a
 * time keep their accumulators in registers; the epilogue is the depthwise kernels'
 * (cg_dw_epi_apply, lane for lane lib/ref's). An NCHW result is stored as rows of 16 columns;
 * an NHWC one (the next conv reads NHWC) goes through an in-register byte transpose of the 16
 * (or 8) channels x 16 pixels, two rounds of two-source permutes, into each pixel's channels.
 *
 * Zero points fold as in the depthwise kernels: sum (x - zx) w' = sum x w' - zx sum w', padding
 * reads zx; int8 activations are copied as x ^ 0x80 (unsigned for vpdpbusd) with zx + 128.
 * Every w' = w - zw must fit int8 (cg_first_ok), the AVX-512 path must have VBMI (the byte
 * permutes); other targets keep the GEMM lowering. */
#include "codegen/lower/qconv.h"

#include "codegen/target/isa.h"
#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

enum { FC_LANES = 16, FC_MAXSTEP = 32, FC_MB = 16, FC_MB2 = 8, FC_PVMAX = 3 };

/* One step: up to 4 consecutive taps of the (row, kernel column) list, rows r = ci * KH + kh:
 * n[0] taps of row r[0] from column a[0], then n[1] of row r[1] from a[1] (the next row, when
 * the quad continues there: 27 taps of a 3x3x3 patch are 7 steps, not 9). */
typedef struct FcStep {
    int64_t r[2], a[2];
    int n[2];
} FcStep;

static int64_t
fc_steps(const ConvGeo *c, FcStep *st)
{
    int64_t S = 0, rows = c->C * c->KH, taps = rows * c->KW;
    /* across rows only when a quad spans at most two (KW >= 3) */
    bool pack = c->KW >= 3;
    for (int64_t t = 0; t < taps;) {
        FcStep f;
        memset(&f, 0, sizeof f);
        int part = 0, got = 0;
        while (got < 4 && t < taps && part < 2) {
            int64_t r = t / c->KW, kw = t % c->KW;
            if (part == 1 && !pack)
                break;
            int take = (int)(c->KW - kw < 4 - got ? c->KW - kw : 4 - got);
            f.r[part] = r;
            f.a[part] = kw;
            f.n[part] = take;
            got += take;
            t += take;
            part++;
        }
        if (st && S < FC_MAXSTEP)
            st[S] = f;
        S++;
    }
    return S;
}

bool
cg_first_ok(Kb *k, Node *n, const ConvGeo *c)
{
    Graph *g = k->g;
    const Type *xt = &ir_value(g, n->in[0])->type;
    const Type *yt = &ir_value(g, n->out[0])->type;
    const Tensor *wt = ir_const_of(g, n->in[1]);
    if (c->G != 1 || c->xes != 1 || c->in_nhwc || c->C > 4 || c->OW < FC_LANES || !xt->q ||
        (xt->elem != ET_U8 && xt->elem != ET_I8) || !wt || !wt->type.q ||
        (wt->type.elem != ET_I8 && wt->type.elem != ET_U8))
        return false;
    if (!cg_isa_dot8(k->t, k->isa, FC_LANES) || !cg_target_has_feature(k->t, "avx512vbmi") ||
        c->sw * (FC_LANES - 1) + 3 * c->dw >= 64 || fc_steps(c, NULL) > FC_MAXSTEP)
        return false;
    if (c->out_nhwc && (elem_size(yt->elem) != 1 || c->M % 8 != 0))
        return false;
    const QParams *q = wt->type.q;
    for (int64_t m = 0; m < c->M; m++)
        for (int64_t t = 0; t < c->K; t++) {
            int64_t v = tensor_get_i(wt, (size_t)(m * c->K + t)) - q->zp[q->axis >= 0 ? m : 0];
            if (v < -128 || v > 127)
                return false;
        }
    return true;
}

static LLVMValueRef
vload(Kb *k, unsigned n, LLVMValueRef p)
{
    return irb_load(&k->ir, LLVMVectorType(k->i8, n), p, 1);
}

static void
vstore(Kb *k, LLVMValueRef v, LLVMValueRef p)
{
    irb_store(&k->ir, v, p, 1);
}

static LLVMValueRef
shuffle(Kb *k, LLVMValueRef a, LLVMValueRef b, const unsigned *ix, unsigned n)
{
    LLVMValueRef c[64];
    for (unsigned i = 0; i < n; i++)
        c[i] = LLVMConstInt(k->i32, ix[i], 0);
    return LLVMBuildShuffleVector(k->b, a, b, LLVMConstVector(c, n), "");
}

/* Byte of channel v (of 4) and pixel px in a group vector: concatenated, or as the packs of
 * fc_pack4 leave it (per 128-bit lane L: 4 bytes of each channel, pixels 4L .. 4L + 3). */
static unsigned
grp_pos(bool packed, unsigned v, unsigned px)
{
    return packed ? 16 * (px / 4) + 4 * v + px % 4 : 16 * v + px;
}

/* Groups z[g] (channels 4g .. 4g + 3 x 16 pixels, grp_pos order) of mb (16 or 8) channels as
 * each pixel's mb channel bytes: pix[p] receives pixels 4p .. 4p + 3 (mb 16: 4 x 16 bytes) or
 * 8p .. 8p + 7 (mb 8: 8 x 8 bytes). Two rounds of two-source byte permutes. */
static int
nhwc_transpose(Kb *k, const LLVMValueRef *z, int mb, bool packed, LLVMValueRef *pix)
{
    unsigned ix[64];
    LLVMValueRef h[4];
    /* round 1: (z[2i], z[2i + 1]) -> h[2i + half] = pixels 8 half .. 8 half + 7 x channels
     * 8i .. 8i + 7 */
    for (int i = 0; i < mb / 8; i++)
        for (int half = 0; half < 2; half++) {
            for (unsigned p = 0; p < 8; p++)
                for (unsigned ch = 0; ch < 8; ch++)
                    ix[p * 8 + ch] = (ch < 4 ? 0 : 64) + grp_pos(packed, ch % 4, 8 * (unsigned)half + p);
            h[2 * i + half] = shuffle(k, z[2 * i], z[2 * i + 1], ix, 64);
        }
    if (mb == 8) {
        pix[0] = h[0];
        pix[1] = h[1];
        return 2;
    }
    /* round 2: (h[half], h[2 + half]) -> 4 pixels x 16 channels, twice per half */
    for (int half = 0; half < 2; half++)
        for (int qq = 0; qq < 2; qq++) {
            for (unsigned p = 0; p < 4; p++)
                for (unsigned ch = 0; ch < 16; ch++)
                    ix[p * 16 + ch] = (ch < 8 ? 0 : 64) + (4 * (unsigned)qq + p) * 8 + ch % 8;
            pix[2 * half + qq] = shuffle(k, h[half], h[2 + half], ix, 64);
        }
    return 4;
}

static LLVMValueRef
x86_call(Kb *k, const char *name, LLVMValueRef a, LLVMValueRef b)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef args[2] = {a, b};
    return LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, NULL, 0), LLVMGetIntrinsicDeclaration(k->mod, id, NULL, 0),
                          args, 2, "");
}

/* Four int32 vectors of the short epilogue (rne(f) + zo, unclamped) as 64 result bytes in
 * grp_pos's packed order: vpackssdw then vpackuswb / vpacksswb saturate to the 8-bit type,
 * which with a byte min / max is the clamp to [lo, hi]: saturating first does not change a
 * value that then clamps into a narrower range. */
static LLVMValueRef
fc_pack4(Kb *k, const Epi *e, ElemType ye, LLVMValueRef *r)
{
    LLVMValueRef ab = x86_call(k, "llvm.x86.avx512.packssdw.512", r[0], r[1]);
    LLVMValueRef cd = x86_call(k, "llvm.x86.avx512.packssdw.512", r[2], r[3]);
    bool u = ye == ET_U8;
    LLVMValueRef v = x86_call(k, u ? "llvm.x86.avx512.packuswb.512" : "llvm.x86.avx512.packsswb.512", ab, cd);
    int32_t tmin = u ? 0 : -128, tmax = u ? 255 : 127;
    LLVMTypeRef t = LLVMTypeOf(v);
    unsigned id;
    if (e->lo > tmin) {
        const char *nm = u ? "llvm.umax" : "llvm.smax";
        id = LLVMLookupIntrinsicID(nm, strlen(nm));
        LLVMValueRef args[2] = {v, cg_vsplat(k, LLVMConstInt(k->i8, (unsigned long long)(int64_t)e->lo, 1), 64)};
        v = LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, &t, 1), LLVMGetIntrinsicDeclaration(k->mod, id, &t, 1), args, 2, "");
    }
    if (e->hi < tmax) {
        const char *nm = u ? "llvm.umin" : "llvm.smin";
        id = LLVMLookupIntrinsicID(nm, strlen(nm));
        LLVMValueRef args[2] = {v, cg_vsplat(k, LLVMConstInt(k->i8, (unsigned long long)(int64_t)e->hi, 1), 64)};
        v = LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, &t, 1), LLVMGetIntrinsicDeclaration(k->mod, id, &t, 1), args, 2, "");
    }
    return v;
}

/* The per-task rows: row (ci, kh) of output row voh of image vn into buf + (ci * KH + kh) * RB
 * + pw (flip: bytes ^ 0x80), a row above or below the input all zb; the bytes around the
 * copied ones hold zb from the first task of the range on. */
static void
copy_rows(Kb *k, const ConvGeo *c, LLVMValueRef x, LLVMValueRef vn, LLVMValueRef voh, LLVMValueRef buf,
          int64_t RB, bool flip, LLVMValueRef zb)
{
    for (int64_t ci = 0; ci < c->C; ci++)
        for (int64_t kh = 0; kh < c->KH; kh++) {
            LLVMValueRef ih = cg_add(k, LLVMBuildSub(k->b, cg_mul(k, voh, cg_i64(k, c->sh)), cg_i64(k, c->ph), ""),
                                     cg_i64(k, kh * c->dh));
            CgIf f;
            cg_if_begin(k, &f, cg_in_range(k, ih, c->H));
            LLVMValueRef src = cg_gep(k, x, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->C)), cg_i64(k, ci)), cg_i64(k, c->H * c->W)),
                                                   cg_mul(k, ih, cg_i64(k, c->W))));
            LLVMValueRef dst = cg_gep(k, buf, cg_i64(k, (ci * c->KH + kh) * RB + c->pw));
            for (int64_t i = 0, piece = 64; i < c->W; piece /= 2)
                for (; c->W - i >= piece; i += piece) {
                    LLVMValueRef v = vload(k, (unsigned)piece, cg_gep(k, src, cg_i64(k, i)));
                    if (flip)
                        v = LLVMBuildXor(k->b, v, cg_vsplat(k, LLVMConstInt(k->i8, 0x80, 0), (unsigned)piece), "");
                    vstore(k, v, cg_gep(k, dst, cg_i64(k, i)));
                }
            cg_if_else(k, &f); /* a padding row: all zero point */
            LLVMBuildMemSet(k->b, cg_gep(k, buf, cg_i64(k, (ci * c->KH + kh) * RB)), zb, cg_i64(k, RB), 64);
            cg_if_end(k, &f);
        }
}

typedef struct Fc {
    Kb *k;
    const ConvGeo *c;
    CgDwEpi ep;
    FcStep st[FC_MAXSTEP];
    int64_t S, RB, es;
    LLVMValueRef gb, gw, buf, y, vn, voh;
    const char *dot;
} Fc;

/* acc + vpdpbusd(xq, wv) (16 lanes). */
static LLVMValueRef
dot16(Fc *f, LLVMValueRef acc, LLVMValueRef xq, LLVMValueRef wv)
{
    return cg_dot8_call(f->k, f->dot, acc, xq, wv);
}

/* Element i of the int32 table g (bias or weight quads) in every lane. */
static LLVMValueRef
fc_splat(Fc *f, LLVMValueRef g, int64_t i)
{
    Kb *k = f->k;
    LLVMValueRef ix = cg_i64(k, i);
    return cg_vsplat(k, LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, g, &ix, 1, ""), ""), FC_LANES);
}

/* Channels m .. m + 3 (accumulators acc[0..3]) through the short epilogue, packed to 64 bytes
 * in grp_pos's packed order (fc_pack4 saturates and clamps). */
static LLVMValueRef
fc_pack_group(Fc *f, const LLVMValueRef *acc, int64_t m)
{
    LLVMValueRef r[4];
    for (int i = 0; i < 4; i++)
        r[i] = cg_dw_epi_fast_i32(f->k, &f->ep, acc[i], cg_i64(f->k, m + i), FC_LANES);
    return fc_pack4(f->k, f->ep.e, f->ep.ye, r);
}

/* Element index of channel m, column ow0 of the task's output row in an NCHW result. */
static LLVMValueRef
fc_nchw_at(Fc *f, int64_t m, LLVMValueRef ow0)
{
    Kb *k = f->k;
    const ConvGeo *c = f->c;
    LLVMValueRef plane = cg_add(k, cg_mul(k, f->vn, cg_i64(k, c->M)), cg_i64(k, m));
    return cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, plane, cg_i64(k, c->OH)), f->voh), cg_i64(k, c->OW)), ow0);
}

/* The quads of step s for the 16 columns from ow0: lane l holds the step's taps of column
 * ow0 + l, one byte permute of (up to) two 64-byte windows of the padded rows. */
static LLVMValueRef
fc_quad(Fc *f, LLVMValueRef ow0, int64_t s)
{
    Kb *k = f->k;
    const ConvGeo *c = f->c;
    const FcStep *st = &f->st[s];
    LLVMValueRef win[2];
    unsigned ix[64];
    for (int part = 0; part < 2; part++) {
        win[part] = NULL;
        if (!st->n[part])
            continue;
        LLVMValueRef p = cg_gep(k, f->buf, cg_add(k, cg_mul(k, ow0, cg_i64(k, c->sw)),
                                                  cg_i64(k, st->r[part] * f->RB + st->a[part] * c->dw)));
        win[part] = vload(k, 64, p);
    }
    for (unsigned l = 0; l < FC_LANES; l++)
        for (unsigned i = 0; i < 4; i++) {
            /* byte i: tap i of part 0, then of part 1; past the taps, tap 0 (weight 0) */
            unsigned part = i < (unsigned)st->n[0] ? 0 : i < (unsigned)(st->n[0] + st->n[1]) ? 1 : 0;
            unsigned j = part == 0 ? (i < (unsigned)st->n[0] ? i : 0) : i - (unsigned)st->n[0];
            ix[4 * l + i] = 64 * part + (unsigned)(c->sw * l + j * c->dw);
        }
    return shuffle(k, win[0], win[1] ? win[1] : LLVMGetPoison(LLVMTypeOf(win[0])), ix, 64);
}

/* NCHW 8-bit result of 16 full columns, short epilogue: per 4 channels, two rounds of packs
 * saturate the int32 results to bytes (fc_pack4 clamps), one byte permute puts each channel's
 * 16 pixels together and 4 16-byte stores write the 4 planes' rows (instead of a clamp and a
 * narrowing store per channel). */
static void
fc_store_nchw_packed(Fc *f, LLVMValueRef *acc, int64_t m0, int mb, LLVMValueRef ow0)
{
    Kb *k = f->k;
    unsigned ix[64];
    for (unsigned v = 0; v < 4; v++)
        for (unsigned px = 0; px < FC_LANES; px++)
            ix[16 * v + px] = grp_pos(true, v, px);
    for (int g = 0; g < mb / 4; g++) {
        LLVMValueRef z = fc_pack_group(f, acc + 4 * g, m0 + 4 * g);
        z = shuffle(k, z, z, ix, 64);
        for (int i = 0; i < 4; i++) {
            unsigned q[16];
            for (unsigned px = 0; px < 16; px++)
                q[px] = 16 * (unsigned)i + px;
            vstore(k, shuffle(k, z, z, q, 16), cg_gep(k, f->y, fc_nchw_at(f, m0 + 4 * g + i, ow0)));
        }
    }
}

/* NHWC result of the groups z (channels m0 + 4g .. m0 + 4g + 3 x 16 pixels, grp_pos order,
 * g < mb / 4) of the columns ow0 .. ow0 + cnt - 1: each pixel's mb channel bytes at
 * ((vn * OH + voh) * OW + ow) * M + m0; mb is 16 or 8 (cg_first_ok: M % 8 == 0). */
static void
fc_store_nhwc(Fc *f, const LLVMValueRef *z, int mb, bool packed, int64_t m0, LLVMValueRef ow0, int64_t cnt)
{
    Kb *k = f->k;
    const ConvGeo *c = f->c;
    LLVMValueRef pix[4];
    unsigned ix[64];
    int np = nhwc_transpose(k, z, mb, packed, pix), ppv = FC_LANES / np;
    LLVMValueRef row = cg_mul(k, cg_add(k, cg_mul(k, f->vn, cg_i64(k, c->OH)), f->voh), cg_i64(k, c->OW));
    for (int g = 0; g < np; g++)
        for (int p = 0; p < ppv; p++) {
            int64_t pi = (int64_t)g * ppv + p;
            if (pi >= cnt)
                continue;
            if (mb == c->M && p == 0 && (int64_t)g * ppv + ppv <= cnt) { /* the pixels' bytes are contiguous */
                LLVMValueRef at = cg_mul(k, cg_add(k, cg_add(k, row, ow0), cg_i64(k, pi)), cg_i64(k, c->M));
                vstore(k, pix[g], cg_gep(k, f->y, at));
                break;
            }
            for (int i = 0; i < mb; i++)
                ix[i] = (unsigned)(p * mb + i);
            LLVMValueRef v = shuffle(k, pix[g], pix[g], ix, (unsigned)mb);
            LLVMValueRef at = cg_add(k, cg_mul(k, cg_add(k, cg_add(k, row, ow0), cg_i64(k, pi)), cg_i64(k, c->M)), cg_i64(k, m0));
            vstore(k, v, cg_gep(k, f->y, at));
        }
}

/* pv full vectors of columns from ow0, short epilogue, M <= 16: the channels in blocks of
 * FC_MB2, each block's pv x FC_MB2 accumulators in registers, so a weight broadcast serves pv
 * dot products (fc_vector issues one per dot product; the quads are permuted again for each
 * channel block). Each block's results are packed to bytes at once (fc_pack4); an NCHW result
 * is stored then, an NHWC one once every channel of a vector is packed. */
static void
fc_block(Fc *f, LLVMValueRef ow0, int pv)
{
    Kb *k = f->k;
    const ConvGeo *c = f->c;
    LLVMTypeRef v64 = LLVMVectorType(k->i8, 64);
    LLVMValueRef ow[FC_PVMAX], z[FC_PVMAX][4];
    for (int p = 0; p < pv; p++)
        ow[p] = cg_add(k, ow0, cg_i64(k, FC_LANES * p));
    for (int64_t m0 = 0; m0 < c->M; m0 += FC_MB2) {
        LLVMValueRef acc[FC_PVMAX][FC_MB2];
        for (int j = 0; j < FC_MB2; j++) {
            LLVMValueRef b = fc_splat(f, f->gb, m0 + j);
            for (int p = 0; p < pv; p++)
                acc[p][j] = b;
        }
        for (int64_t s = 0; s < f->S; s++) {
            LLVMValueRef xq[FC_PVMAX];
            for (int p = 0; p < pv; p++)
                xq[p] = fc_quad(f, ow[p], s);
            for (int j = 0; j < FC_MB2; j++) {
                LLVMValueRef wv = LLVMBuildBitCast(k->b, fc_splat(f, f->gw, (m0 + j) * f->S + s), v64, "");
                for (int p = 0; p < pv; p++)
                    acc[p][j] = dot16(f, acc[p][j], xq[p], wv);
            }
        }
        for (int p = 0; p < pv; p++) {
            if (!c->out_nhwc) {
                fc_store_nchw_packed(f, acc[p], m0, FC_MB2, ow[p]);
                continue;
            }
            for (int g = 0; g < FC_MB2 / 4; g++)
                z[p][m0 / 4 + g] = fc_pack_group(f, acc[p] + 4 * g, m0 + 4 * g);
        }
    }
    for (int p = 0; c->out_nhwc && p < pv; p++)
        fc_store_nhwc(f, z[p], (int)c->M, true, 0, ow[p], FC_LANES);
}

/* The output vector of columns ow0 .. ow0 + cnt - 1 of the task's row, every channel. */
static void
fc_vector(Fc *f, LLVMValueRef ow0, int64_t cnt)
{
    Kb *k = f->k;
    const ConvGeo *c = f->c;
    LLVMValueRef xq[FC_MAXSTEP];
    for (int64_t s = 0; s < f->S; s++)
        xq[s] = fc_quad(f, ow0, s);
    LLVMTypeRef v64 = LLVMVectorType(k->i8, 64);
    for (int64_t m0 = 0; m0 < c->M; m0 += FC_MB) {
        int mb = (int)(c->M - m0 < FC_MB ? c->M - m0 : FC_MB);
        LLVMValueRef acc[FC_MB], out[FC_MB];
        for (int j = 0; j < mb; j++)
            acc[j] = fc_splat(f, f->gb, m0 + j);
        for (int64_t s = 0; s < f->S; s++)
            for (int j = 0; j < mb; j++) {
                LLVMValueRef wv = fc_splat(f, f->gw, (m0 + j) * f->S + s);
                acc[j] = dot16(f, acc[j], xq[s], LLVMBuildBitCast(k->b, wv, v64, ""));
            }
        if (!c->out_nhwc && f->ep.fast && f->es == 1 && cnt == FC_LANES && mb % 4 == 0) {
            fc_store_nchw_packed(f, acc, m0, mb, ow0);
            continue;
        }
        if (!c->out_nhwc) {
            for (int j = 0; j < mb; j++)
                out[j] = cg_dw_epi_apply(k, &f->ep, acc[j], cg_i64(k, m0 + j), FC_LANES);
            for (int j = 0; j < mb; j++)
                cg_dw_store_lanes(k, out[j], FC_LANES, 0, cnt,
                                  cg_gep(k, f->y, cg_mul(k, fc_nchw_at(f, m0 + j, ow0), cg_i64(k, f->es))), f->es);
            continue;
        }
        /* NHWC: each pixel's mb channel bytes at ((vn * OH + voh) * OW + ow) * M + m0; mb is 16
         * or 8 (cg_first_ok: M % 8 == 0) */
        LLVMValueRef z[4];
        bool packed = f->ep.fast;
        unsigned ix[64];
        for (int g = 0; g < mb / 4; g++) {
            if (packed) {
                z[g] = fc_pack_group(f, acc + 4 * g, m0 + 4 * g);
                continue;
            }
            for (int i = 0; i < 4; i++)
                out[4 * g + i] = cg_dw_epi_apply(k, &f->ep, acc[4 * g + i], cg_i64(k, m0 + 4 * g + i), FC_LANES);
            for (unsigned i = 0; i < 32; i++)
                ix[i] = i;
            LLVMValueRef lo = shuffle(k, out[4 * g], out[4 * g + 1], ix, 32);
            LLVMValueRef hi = shuffle(k, out[4 * g + 2], out[4 * g + 3], ix, 32);
            for (unsigned i = 0; i < 64; i++)
                ix[i] = i;
            z[g] = shuffle(k, lo, hi, ix, 64);
        }
        fc_store_nhwc(f, z, mb, packed, m0, ow0, cnt);
    }
}

/* bias - zx * sum_t w'_t (int32, wrapping) per channel, and the weights of every step as 4
 * int8 bytes, [channel][step]. */
static void
fc_tables(Fc *f, const int8_t *w, const int32_t *zw, const int32_t *bias, int32_t zx)
{
    const ConvGeo *c = f->c;
    int32_t *bz = xmalloc((size_t)c->M * sizeof *bz);
    uint32_t *tw = xcalloc((size_t)(c->M * f->S), sizeof *tw);
    for (int64_t m = 0; m < c->M; m++) {
        uint32_t sum = 0;
        for (int64_t s = 0; s < f->S; s++) {
            const FcStep *st = &f->st[s];
            for (int i = 0; i < st->n[0] + st->n[1]; i++) {
                int part = i < st->n[0] ? 0 : 1, j = part ? i - st->n[0] : i;
                int64_t r = st->r[part], ci = r / c->KH, kh = r % c->KH;
                int32_t v = w[((m * c->C + ci) * c->KH + kh) * c->KW + st->a[part] + j] - zw[m];
                tw[m * f->S + s] |= (uint32_t)(uint8_t)(int8_t)v << (8 * i);
                sum += (uint32_t)v;
            }
        }
        bz[m] = (int32_t)((uint32_t)(bias ? bias[m] : 0) - (uint32_t)zx * sum);
    }
    f->gb = cg_const_bytes(f->k, bz, (size_t)c->M * sizeof *bz, "fcb");
    f->gw = cg_const_bytes(f->k, tw, (size_t)(c->M * f->S) * sizeof *tw, "fcw");
    free(bz);
    free(tw);
}

bool
cg_emit_conv_first(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e,
                   const int8_t *w, const int32_t *zw, const int32_t *bias)
{
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    ElemType ye = ir_value(k->g, n->out[0])->type.elem;
    Fc f;
    memset(&f, 0, sizeof f);
    f.k = k;
    f.c = c;
    f.es = (int64_t)elem_size(ye);
    f.S = fc_steps(c, f.st);
    f.dot = cg_isa_dot8(k->t, k->isa, FC_LANES);
    bool flip = xt->elem == ET_I8;
    int32_t zxu = flip ? xt->q->zp[0] + 128 : xt->q->zp[0];
    fc_tables(&f, w, zw, bias, zxu);
    cg_dw_epi_init(k, e, ye, c->M, cg_dw_fast_ok(k, e, ye, c->M, c->K, w, zw, bias), &f.ep);
    /* row bytes: the padded input row, and every 64-byte window a vector reads */
    int64_t nvec = (c->OW + FC_LANES - 1) / FC_LANES;
    int64_t need = c->sw * FC_LANES * (nvec - 1) + ((c->KW - 1) / 4) * 4 * c->dw + 64;
    int64_t RB = c->pw + c->W > need ? c->pw + c->W : need;
    f.RB = RB = (RB + 63) / 64 * 64;
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef v = cg_par_begin(k, &par, c->N * c->OH, io, 2);
    cg_function_set_target(par.fn, k->t, 512);
    cg_dw_epi_load(k, &f.ep);
    f.y = io[1];
    f.vn = LLVMBuildSDiv(k->b, v, cg_i64(k, c->OH), "");
    f.voh = LLVMBuildSRem(k->b, v, cg_i64(k, c->OH), "");
    f.buf = cg_entry_alloca(k, LLVMArrayType2(k->i8, (uint64_t)(c->C * c->KH * RB)));
    LLVMSetAlignment(f.buf, 64);
    LLVMValueRef zb = LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zxu, 0);
    CgIf f0;
    cg_if_begin(k, &f0, LLVMBuildICmp(k->b, LLVMIntEQ, v, LLVMGetParam(par.fn, 1), ""));
    LLVMBuildMemSet(k->b, f.buf, zb, cg_i64(k, c->C * c->KH * RB), 64);
    cg_if_else(k, &f0);
    cg_if_end(k, &f0);
    copy_rows(k, c, io[0], f.vn, f.voh, f.buf, RB, flip, zb);
    int64_t full = c->OW / FC_LANES, done = 0;
    /* measured on Zen 5 (3 -> 16, 3x3 / 2): NCHW best at 3 vectors, NHWC (more registers in
     * its transpose) at 2 */
    int pv = c->out_nhwc ? 2 : 3;
    if (f.ep.fast && f.es == 1 && c->M <= 16 && c->M % FC_MB2 == 0 && full >= pv) {
        CgLoop l;
        LLVMValueRef iv = cg_loop_begin(k, &l, cg_i64(k, full / pv));
        fc_block(&f, cg_mul(k, iv, cg_i64(k, FC_LANES * pv)), pv);
        cg_loop_end_novec(k, &l);
        done = full / pv * pv;
    }
    if (full > done) {
        CgLoop l;
        LLVMValueRef iv = cg_loop_begin(k, &l, cg_i64(k, full - done));
        LLVMValueRef ow0 = cg_mul(k, iv, cg_i64(k, FC_LANES));
        fc_vector(&f, done ? cg_add(k, ow0, cg_i64(k, done * FC_LANES)) : ow0, FC_LANES);
        cg_loop_end_novec(k, &l);
    }
    if (c->OW % FC_LANES)
        fc_vector(&f, cg_i64(k, full * FC_LANES), c->OW % FC_LANES);
    cg_par_end(k, &par, a);
    return true;
}
