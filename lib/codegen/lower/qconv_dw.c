/* qconv_dw.c: the depthwise qconv kernels (one input channel per group).
 *
 * NHWC (cg_emit_dw_conv_nhwc; C == G == M, input and result NHWC): one task per output row (n, oh), split across the parallel-for hook. Within a row, blocks of
 * P output pixels x CV channel vectors (vl int32 lanes each) keep their accumulators in
 * registers across all KH x KW taps: per tap, each weight vector is loaded once and used for
 * the P pixels, each input vector is one widening load. Explicit vector IR (no reliance on the
 * loop vectoriser): zext/sext(x) * sext(w16) + acc, which x86 selects as vpmaddwd / vpdpwssd.
 * On AArch64 with dotprod, blocks of 16 channels take the quad form instead: zip1/zip2 of 4
 * pixels put one channel's 4 taps in a lane, sdot / usdot (uint8 without i8mm: sdot on
 * x ^ 0x80). Blocks of several pixels go by kernel columns (emit_block_qc: one input column's
 * quads serve every pixel of the block that reads it; the border pixels too, nq4_border),
 * single pixels by taps in order (emit_block_q4).
 *
 * Zero points are folded at compile time:
 *     sum_t (x_t - zx) * (w_t - zw) + bias = sum_t x_t * w'_t + (bias - zx * sum_t w'_t),
 * w'_t = w_t - zw (fits int16), all modulo 2^32 like the GEMM. A tap outside the input reads
 * zx (so it adds zx * w'_t, cancelled by the folded term): rows outside the input point at a
 * row of zx bytes in scratch; output columns whose window leaves the input (the left and right
 * borders) select that row per tap, the interior columns need no check at all.
 * Channel counts that are not a multiple of vl end with exact-size vectors (8, 4, 2, 1 lanes):
 * no load or store past a row. Kernels above DW_MAXT taps (9x9 and up) keep the same blocks of
 * channel vectors but run one pixel at a time with the taps as a loop (emit_block_tap_loop).
 * The epilogue (requantize float|fixed, clamp, i32, f32) is the
 * GEMM's, lane for lane (emit.c), so the result equals lib/ref bit for bit; its requantization
 * is the module's requantize mode's (CgRqMode.vec, irb/rq.c).
 *
 * NCHW (cg_emit_dw_conv; any channel multiplier): 8-bit activations, horizontal stride 1 or 2
 * and a padded plane up to DWR_MAXPLANE bytes run dw_rows (register-blocked output columns,
 * one parallel-for task per channel; see there: quad form with vpdpbusd on x86 VNNI, sdot on
 * AArch64 with dotprod). Others: per channel, the input plane is
 * copied into a zero-point padded plane (border filled once per call), then per output row an
 * int32 accumulator row gets one multiply-add sweep per tap over all output columns (loops the
 * vectoriser handles), then a row of the exact epilogue. All kernels share the tables below. */
#include "codegen/lower/qconv.h"

#include "codegen/target/isa.h"
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

enum { DW_MAXV = 12, DW_MAXP = 8, DW_MAXT = 64 };

/* Per-channel tables of both depthwise kernels: weights w' = w - zw as int16 [tap][channel],
 * bias' = bias - zx * sum_t w' (int32, wrapping: the kernels read zx wherever a tap leaves the
 * input), and the epilogue's multipliers: the dequantize scales, or the requantize mode's
 * tables (CgRqMode.vec_tables; fixed mode: mult, 2^(shift-1), shift as int64). */
typedef struct DwTables {
    LLVMValueRef gw, gb, gm, gfm, gfr, gfs;
} DwTables;

static bool
epi_rq(const Epi *e)
{
    return e->kind == CG_GEMM_EPI_REQUANT_FLOAT || e->kind == CG_GEMM_EPI_REQUANT_FIXED;
}

/* The epilogue's tables: the dequantize scales, or the requantize mode's (vec_tables). */
static void
dw_epi_tables(Kb *k, const Epi *e, int64_t M, LLVMValueRef *gm, LLVMValueRef *gfm, LLVMValueRef *gfr,
              LLVMValueRef *gfs)
{
    if (e->kind == CG_GEMM_EPI_DEQUANT)
        *gm = cg_const_bytes(k, e->scale, (size_t)(M > 0 ? M : 1) * sizeof(float), "dwm");
    if (!epi_rq(e))
        return;
    CgRqTables t = {NULL, NULL, NULL, NULL};
    k->rq->vec_tables(k, e->mult, e->fmult, e->fshift, M, "dw", &t);
    *gm = t.gm;
    *gfm = t.gfm;
    *gfr = t.gfr;
    *gfs = t.gfs;
}

static void
dw_tables(Kb *k, int64_t M, int64_t T, const Epi *e, const int8_t *w, const int32_t *zw,
          const int32_t *bias, int32_t zx, DwTables *tb)
{
    memset(tb, 0, sizeof *tb);
    size_t nm = (size_t)(M > 0 ? M : 1);
    int16_t *wd = xmalloc((size_t)(T > 0 ? T : 1) * nm * sizeof *wd);
    int32_t *bz = xmalloc(nm * sizeof *bz);
    for (int64_t m = 0; m < M; m++) {
        uint32_t s = 0;
        for (int64_t t = 0; t < T; t++) {
            wd[t * M + m] = (int16_t)(w[m * T + t] - zw[m]);
            s += (uint32_t)(int32_t)wd[t * M + m];
        }
        bz[m] = (int32_t)((uint32_t)(bias ? bias[m] : 0) - (uint32_t)zx * s);
    }
    tb->gw = cg_const_bytes(k, wd, (size_t)(T * M) * sizeof *wd, "dww");
    tb->gb = cg_const_bytes(k, bz, (size_t)M * sizeof *bz, "dwb");
    dw_epi_tables(k, e, M, &tb->gm, &tb->gfm, &tb->gfr, &tb->gfs);
    free(wd);
    free(bz);
}

/* The epilogue's zero point and clamp as a constant table (Dw.qa ... qe), NULL when the
 * epilogue has none. */
static LLVMValueRef
dw_clamp_table(Kb *k, const Epi *e)
{
    return epi_rq(e) ? k->rq->vec_clamp_table(k, e->zo, e->lo, e->hi, "dwq") : NULL;
}

/* A channel vector of a block: first channel (relative to the block) and lanes. */
typedef struct DwVec {
    int64_t off;
    unsigned lanes;
} DwVec;

typedef struct Dw {
    Kb *k;
    const ConvGeo *c;
    const Epi *e;
    ElemType xe, ye;
    int64_t T;     /* taps */
    unsigned vl;   /* int32 lanes of a full vector */
    DwTables tb;
    LLVMValueRef x, y, zrow; /* in the row function */
    /* kernels above DW_MAXT taps: taps as a loop, one pixel (vn, voh, ow) at a time */
    bool tap_loop;
    LLVMValueRef vn, voh, ow;
    /* the epilogue's output zero point and clamp, loaded in the row function from a constant
     * table (dw_clamp_table, CgRqMode.vec_clamp_table): float mode flo, fhi (f32, lo/hi - zo),
     * zo, lo, hi (i32); fixed mode zo, lo, hi (i64). Same-shape depthwise convs then emit the same row function, which
     * target/merge.c shares; alone, LLVM folds the loads back into constants. */
    LLVMValueRef qa, qb, qc, qd, qe;
    /* NCHW rows kernel: every lane of a vector is the same channel, so the epilogue's tables
     * are read once per channel and splat */
    bool splat;
    LLVMValueRef gwr; /* dw_rows_weights */
    /* cg_dw_epi_fast_i32: the short form's int32 before the clamp */
    bool unclamped;
    /* the short requantization (dw_fast_ok): 8-bit results, float mode, |acc * mult| < 2^30 */
    bool fast;
    /* NCHW rows kernel, quad form: 4 taps per int32 lane, vpdpbusd or sdot (dw_q4_ok) */
    bool q4;
    /* NCHW rows kernel: padded plane width, output rows per vector (lane_in), flat rows, the
     * whole plane stored at once (plane_store) and the vectors per vector row */
    int64_t PW;
    int rpv, nvj;
    bool flat, pstore;
    /* quad form with sdot (AArch64), dilation 1: interleaved columns (ilv = 4 / stride vectors
     * per group, lane l of the group's vector r is column G * l + r: every lane's 4 taps are the
     * lane's own 4 bytes of one plain load, no byte permute); magic: the accumulators start at
     * bias + 0x4B400000, so that as f32 bits they are 1.5 * 2^23 + acc exactly (dw_magic_ok) */
    int ilv;
    bool magic;
    /* Dw.ilv: the task's bias' (+ 0x4B400000 for magic) splat to vl lanes in a stack slot,
     * loaded anew for every accumulator of a block (dw_rows_block) */
    LLVMValueRef bslot;
    /* the NHWC quad form with i8mm: bias' (gb or gbq, + 0x4B400000 for magic) per channel,
     * loaded anew for every accumulator of a block (nq4_init) */
    LLVMValueRef gbm;
    /* NHWC kernel on AArch64 with dotprod (dw_nhwc_q4_ok): blocks of 16 channels in quads of
     * 4 taps per lane (zip1/zip2 of 4 tap pixels, sdot / usdot); gwq the weight quads */
    bool nq4;
    LLVMValueRef gwq;
    /* the NHWC quad form's blocks of several pixels by kernel columns (emit_block_qc, where it
     * takes fewer instructions: dw_ncol_weights), gwqc its weight quads */
    bool ncol;
    LLVMValueRef gwqc;
    /* emit_block_qc: the first rc kernel rows go by columns, the taps of the others in order
     * (weight quads gwqr) */
    int64_t rc;
    LLVMValueRef gwqr;
    /* Dw.magic whose results rne(acc * mult) + zo provably fit int16 (dw_magic_ok with 2^15 - 1):
     * the f32 bits' low halves are the int16 results (n16_halves). The NHWC quad form narrows
     * them (uzp1 .8h) with saturation (sqxtun / sqxtn) and clamps 16 bytes at once
     * (nq4_narrow); the NCHW interleaved one puts them in column order (trn1 .8h), clamps them
     * as int16 and keeps the low bytes (trn1 .16b; n16_pack) */
    bool n16;
    /* the NHWC quad form of uint8 activations without i8mm (no usdot): the loaded pixels flipped
     * to int8 (x ^ 0x80 = x - 128) for sdot, the bias table gbq folded with zx - 128 instead of
     * zx (dw_flip_bias) */
    bool nflip;
    LLVMValueRef gbq;
} Dw;

/* The common part of a depthwise kernel's state: the node's types, its geometry and epilogue,
 * the tap count. */
static void
dw_init(Dw *d, Kb *k, Node *n, const ConvGeo *c, const Epi *e)
{
    memset(d, 0, sizeof *d);
    d->k = k;
    d->c = c;
    d->e = e;
    d->xe = ir_value(k->g, n->in[0])->type.elem;
    d->ye = ir_value(k->g, n->out[0])->type.elem;
    d->T = c->KH * c->KW;
}

static int64_t lane_in(const Dw *d, unsigned n, unsigned l);
static LLVMValueRef q4_dot(Dw *d, LLVMValueRef acc, LLVMValueRef xq, LLVMValueRef wv, unsigned n);

/* Dw.qa ... qe loaded from the table gq (in the row function). */
static void
dw_clamp_load(Dw *d, LLVMValueRef gq)
{
    Kb *k = d->k;
    if (!gq)
        return;
    LLVMValueRef q[5] = {NULL, NULL, NULL, NULL, NULL};
    k->rq->vec_clamp_load(k, gq, q);
    d->qa = q[0];
    d->qb = q[1];
    d->qc = q[2];
    d->qd = q[3];
    d->qe = q[4];
}

static LLVMValueRef
vload(Kb *k, LLVMTypeRef elt, unsigned n, LLVMValueRef p)
{
    return irb_load(&k->ir, LLVMVectorType(elt, n), p, 1);
}

static LLVMValueRef
intrin(Kb *k, const char *name, LLVMValueRef a)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(k->mod, id, &t, 1);
    return LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, &t, 1), f, &a, 1, "");
}

/* Element (channel) ch of table g with elements of type elt, as an n-lane vector. */
static LLVMValueRef
table_vec(Kb *k, LLVMValueRef g, LLVMTypeRef elt, LLVMValueRef ch, unsigned n)
{
    return vload(k, elt, n, LLVMBuildGEP2(k->b, elt, g, &ch, 1, ""));
}

/* The epilogue's table g for the n lanes of channels [ch, ch + n), or of channel ch on every
 * lane (d->splat). */
static LLVMValueRef
epi_vec(Dw *d, LLVMValueRef g, LLVMTypeRef elt, LLVMValueRef ch, unsigned n)
{
    if (!d->splat)
        return table_vec(d->k, g, elt, ch, n);
    Kb *k = d->k;
    return cg_vsplat(k, LLVMBuildLoad2(k->b, elt, LLVMBuildGEP2(k->b, elt, g, &ch, 1, ""), ""), n);
}

/* CgRqLanes.lanes of the epilogue's vector of channels [ch, ch + n) */
typedef struct DwLanes {
    Dw *d;
    LLVMValueRef ch;
    unsigned n;
} DwLanes;

static LLVMValueRef
dw_lanes(const void *ctx, LLVMValueRef table, LLVMTypeRef elt)
{
    const DwLanes *l = ctx;
    return epi_vec(l->d, table, elt, l->ch, l->n);
}

/* Call of the (not overloaded) intrinsic name. */
static LLVMValueRef
intrin_call(Kb *k, const char *name, LLVMValueRef *args, unsigned nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(k->mod, id, NULL, 0);
    return LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, NULL, 0), f, args, nargs, "");
}

static LLVMValueRef
intrin2(Kb *k, const char *name, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(k->mod, id, &t, 1);
    LLVMValueRef args[2] = {a, b};
    return LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, &t, 1), f, args, 2, "");
}

/* Whether every channel's requantization can take the short form of epilogue_vec (the float
 * mode's, CgRqMode.vec_short_ok): an 8-bit result, and |acc| <= |bias'| + 255 * sum |w'| (x or
 * x ^ 0x80 in [0, 255]) times the (finite) multiplier stays below 2^30, so f = (f32)acc * mult
 * is never NaN and rne(f) fits int32: clamping f to [lo - zo, hi - zo] and rounding then
 * equals rounding, adding zo and clamping to [lo, hi] in int32 (rne is monotonic and the
 * bounds are integers), which is lib/numerics' requant_product for every accumulator. */
bool
cg_dw_fast_ok(Kb *k, const Epi *e, ElemType ye, int64_t M, int64_t T, const int8_t *w,
              const int32_t *zw, const int32_t *bias)
{
    if (!epi_rq(e) || elem_size(ye) != 1)
        return false;
    double *amax = xmalloc((size_t)(M > 0 ? M : 1) * sizeof *amax);
    for (int64_t m = 0; m < M; m++) {
        /* acc = bias + sum_t (x_t - zx) * w'_t exactly (mod 2^32 on the way), |x - zx| <= 255 */
        double sw = 0;
        for (int64_t t = 0; t < T; t++) {
            int32_t v = w[m * T + t] - zw[m];
            sw += v < 0 ? -v : v;
        }
        double b = bias ? bias[m] : 0;
        amax[m] = (b < 0 ? -b : b) + 255.0 * sw;
    }
    bool ok = k->rq->vec_short_ok(e->mult, amax, M);
    free(amax);
    return ok;
}

/* Whether the f32 bit-pattern epilogue (Dw.magic) is exact: besides dw_fast_ok's conditions,
 * every |acc| < 2^22 (its f32 is then exact, and 0x4B400000 + acc is 1.5 * 2^23 + acc as f32
 * bits) and |acc * mult| + |zo| < 2^21 (the product plus 1.5 * 2^23 + zo stays in [2^23, 2^24),
 * where f32 spacing is 1: the addition rounds the product half to even). With lim = 2^15 - 1
 * instead of 2^21, rne(acc * mult) + zo also fits int16 (Dw.n16). */
static bool
dw_magic_ok(const Epi *e, int64_t M, int64_t T, const int8_t *w, const int32_t *zw, const int32_t *bias,
            double lim)
{
    for (int64_t m = 0; m < M; m++) {
        double sw = 0;
        for (int64_t t = 0; t < T; t++) {
            int32_t v = w[m * T + t] - zw[m];
            sw += v < 0 ? -v : v;
        }
        double b = bias ? bias[m] : 0, a = (b < 0 ? -b : b) + 255.0 * sw, mult = e->mult[m];
        double zo = e->zo < 0 ? -e->zo : e->zo;
        if (!(a < 4194304.0 && mult >= 0 && mult * a * 1.001 + zo < lim))
            return false;
    }
    return true;
}

/* round half to even of f (n f32 lanes) as int32: vcvtps2dq with embedded {rn-sae} on 16
 * lanes of AVX-512 (whatever MXCSR says), else roundeven then fptosi. */
static LLVMValueRef
cvt_rne(Kb *k, LLVMValueRef f, unsigned n)
{
    LLVMTypeRef vi = LLVMVectorType(k->i32, n);
    if (n == 16 && k->t->x86 && k->t->avx512f) {
        LLVMValueRef args[4] = {f, LLVMGetUndef(vi), LLVMConstInt(k->i16, 0xffff, 0), LLVMConstInt(k->i32, 8, 0)};
        return intrin_call(k, "llvm.x86.avx512.mask.cvtps2dq.512", args, 4);
    }
    return LLVMBuildFPToSI(k->b, intrin(k, "llvm.roundeven", f), vi, "");
}

/* The GEMM epilogue (emit.c epilogue_vec) of an n-lane int32 accumulator of channels
 * [ch, ch + n), as n elements of type ye; with wide, 8-bit results stay in int32 lanes (the
 * low byte). */
static LLVMValueRef
epilogue_vec_w(Dw *d, LLVMValueRef acc, LLVMValueRef ch, unsigned n, bool wide)
{
    Kb *k = d->k;
    const Epi *e = d->e;
    LLVMTypeRef vf = LLVMVectorType(k->f32, n);
    LLVMValueRef out = acc;
    if (d->magic) { /* dw_magic_ok: acc holds 0x4B400000 + a, |a| < 2^22; as f32 bits that is
                     * 1.5 * 2^23 + a, minus 1.5 * 2^23 the exact (f32)a; the product p plus
                     * 1.5 * 2^23 + zo rounds p half to even (|p + zo| < 2^22), whose f32 bits
                     * are 0x4B400000 + rne(p) + zo: clamped to [lo, hi] + 0x4B400000 in int32,
                     * the low byte is the result (no int <-> float conversion instructions) */
        LLVMTypeRef vi = LLVMVectorType(k->i32, n);
        LLVMValueRef big = cg_vsplat(k, LLVMConstReal(k->f32, 12582912.0), n);
        LLVMValueRef bias = LLVMConstInt(k->i32, 0x4B400000, 0);
        LLVMValueRef f = LLVMBuildFSub(k->b, LLVMBuildBitCast(k->b, acc, vf, ""), big, "");
        f = LLVMBuildFMul(k->b, f, epi_vec(d, d->tb.gm, k->f32, ch, n), "");
        LLVMValueRef cz = LLVMBuildFAdd(k->b, LLVMBuildSIToFP(k->b, d->qc, k->f32, ""),
                                        LLVMConstReal(k->f32, 12582912.0), "");
        f = LLVMBuildFAdd(k->b, f, cg_vsplat(k, cz, n), "");
        out = LLVMBuildBitCast(k->b, f, vi, "");
        if (d->unclamped)
            return out;
        out = intrin2(k, "llvm.smax", out, cg_vsplat(k, LLVMBuildAdd(k->b, d->qd, bias, ""), n));
        out = intrin2(k, "llvm.smin", out, cg_vsplat(k, LLVMBuildAdd(k->b, d->qe, bias, ""), n));
        return wide ? out : LLVMBuildTrunc(k->b, out, LLVMVectorType(k->i8, n), "");
    }
    if (d->fast) { /* dw_fast_ok: rne((f32)acc * mult) + zo, clamped in int32 */
        LLVMValueRef f = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, acc, vf, ""), epi_vec(d, d->tb.gm, k->f32, ch, n), "");
        out = LLVMBuildAdd(k->b, cvt_rne(k, f, n), cg_vsplat(k, d->qc, n), "");
        if (d->unclamped)
            return out;
        out = intrin2(k, "llvm.smax", out, cg_vsplat(k, d->qd, n));
        out = intrin2(k, "llvm.smin", out, cg_vsplat(k, d->qe, n));
        return wide ? out : LLVMBuildTrunc(k->b, out, LLVMVectorType(k->i8, n), "");
    }
    switch (e->kind) {
    case CG_GEMM_EPI_I32:
        break;
    case CG_GEMM_EPI_DEQUANT:
        out = LLVMBuildFMul(k->b, LLVMBuildSIToFP(k->b, acc, vf, ""), epi_vec(d, d->tb.gm, k->f32, ch, n), "");
        break;
    case CG_GEMM_EPI_REQUANT_FLOAT:
    case CG_GEMM_EPI_REQUANT_FIXED: { /* the requantize mode's (CgRqMode.vec) */
        DwLanes dl = {d, ch, n};
        CgRqTables tb = {d->tb.gm, d->tb.gfm, d->tb.gfr, d->tb.gfs};
        LLVMValueRef q[5] = {d->qa, d->qb, d->qc, d->qd, d->qe};
        CgRqLanes l = {dw_lanes, &dl, &tb, q};
        out = k->rq->vec(k, &l, acc, n);
        break;
    }
    }
    if (wide && elem_size(d->ye) == 1)
        return out;
    if (elem_size(d->ye) == 1)
        out = LLVMBuildTrunc(k->b, out, LLVMVectorType(k->i8, n), "");
    else if (elem_size(d->ye) == 2) /* 16-bit results of 8-bit activations */
        out = LLVMBuildTrunc(k->b, out, LLVMVectorType(k->i16, n), "");
    return out;
}

static LLVMValueRef
epilogue_vec(Dw *d, LLVMValueRef acc, LLVMValueRef ch, unsigned n)
{
    return epilogue_vec_w(d, acc, ch, n, false);
}

/* Dw.n16: the n = 4 lane accumulators acc[0..na) epilogued up to the f32 bits 0x4B400000 + v,
 * v the int16 result, as <8 x i16> (the low halves are the v). */
static void
n16_halves(Dw *d, LLVMValueRef *acc, const LLVMValueRef *ch, int na, LLVMValueRef *o)
{
    Kb *k = d->k;
    d->unclamped = true;
    for (int j = 0; j < na; j++)
        o[j] = LLVMBuildBitCast(k->b, epilogue_vec_w(d, acc[j], ch[j], 4, true), LLVMVectorType(k->i16, 8), "");
    d->unclamped = false;
}

/* Dw.n16: the 16 results of the even halves of a and b (<8 x i16>, shuffled by the 8-lane mask
 * hm: trn1 .8h) clamped to [lo, hi] as int16 (smax, smin .8h) and narrowed to their
 * low bytes (the 16-lane mask bm over the bytes of both: trn1 .16b); without b0, the 8
 * results of a (xtn). */
static LLVMValueRef
n16_pack(Dw *d, LLVMValueRef a0, LLVMValueRef a1, LLVMValueRef b0, LLVMValueRef b1, LLVMValueRef hm, LLVMValueRef bm)
{
    Kb *k = d->k;
    LLVMTypeRef b16 = LLVMVectorType(k->i8, 16);
    LLVMValueRef lo = cg_vsplat(k, LLVMBuildTrunc(k->b, d->qd, k->i16, ""), 8);
    LLVMValueRef hi = cg_vsplat(k, LLVMBuildTrunc(k->b, d->qe, k->i16, ""), 8);
    LLVMValueRef h[2] = {LLVMBuildShuffleVector(k->b, a0, a1, hm, ""), b0 ? LLVMBuildShuffleVector(k->b, b0, b1, hm, "") : NULL};
    for (int i = 0; i < 2 && h[i]; i++)
        h[i] = intrin2(k, "llvm.smin", intrin2(k, "llvm.smax", h[i], lo), hi);
    if (!b0)
        return LLVMBuildTrunc(k->b, h[0], LLVMVectorType(k->i8, 8), "");
    return LLVMBuildShuffleVector(k->b, LLVMBuildBitCast(k->b, h[0], b16, ""), LLVMBuildBitCast(k->b, h[1], b16, ""), bm, "");
}

/* The n = 4 lane accumulators of an interleaved group (Dw.ilv: lane l of vector r is column
 * G * l + r), epilogued, as one vector of 4 G bytes in column order (8-bit results only), from
 * the int32 lanes: G = 4: even halfwords of o0/o2 and of o1/o3 interleaved (trn1 .8h),
 * then the even bytes of both (trn1 .16b); G = 2: trn1 .8h of o0/o1, truncated to bytes. */
static LLVMValueRef
ilv_group(Dw *d, LLVMValueRef *acc, LLVMValueRef m)
{
    Kb *k = d->k;
    int G = d->ilv;
    LLVMValueRef o[4], ix[16];
    LLVMTypeRef h8 = LLVMVectorType(k->i16, 8), b16 = LLVMVectorType(k->i8, 16);
    for (unsigned l = 0; l < 8; l++) /* trn1 .8h */
        ix[l] = LLVMConstInt(k->i32, l / 2 * 2 + (l & 1) * 8, 0);
    LLVMValueRef m8 = LLVMConstVector(ix, 8);
    if (d->n16) { /* the int16 results (trn1 .8h) clamped as int16, then trn1 .16b or xtn */
        LLVMValueRef chs[4] = {m, m, m, m};
        n16_halves(d, acc, chs, G, o);
        for (unsigned l = 0; l < 16; l++)
            ix[l] = LLVMConstInt(k->i32, l / 2 * 2 + (l & 1) * 16, 0);
        return G == 2 ? n16_pack(d, o[0], o[1], NULL, NULL, m8, NULL)
                      : n16_pack(d, o[0], o[2], o[1], o[3], m8, LLVMConstVector(ix, 16));
    }
    for (int q = 0; q < G; q++)
        o[q] = epilogue_vec_w(d, acc[q], m, 4, true);
    if (G == 2) {
        LLVMValueRef t = LLVMBuildShuffleVector(k->b, LLVMBuildBitCast(k->b, o[0], h8, ""),
                                                LLVMBuildBitCast(k->b, o[1], h8, ""), m8, "");
        return LLVMBuildTrunc(k->b, t, LLVMVectorType(k->i8, 8), "");
    }
    LLVMValueRef t02 = LLVMBuildShuffleVector(k->b, LLVMBuildBitCast(k->b, o[0], h8, ""), LLVMBuildBitCast(k->b, o[2], h8, ""), m8, "");
    LLVMValueRef t13 = LLVMBuildShuffleVector(k->b, LLVMBuildBitCast(k->b, o[1], h8, ""), LLVMBuildBitCast(k->b, o[3], h8, ""), m8, "");
    for (unsigned l = 0; l < 16; l++)
        ix[l] = LLVMConstInt(k->i32, l / 2 * 2 + (l & 1) * 16, 0);
    return LLVMBuildShuffleVector(k->b, LLVMBuildBitCast(k->b, t02, b16, ""), LLVMBuildBitCast(k->b, t13, b16, ""),
                                  LLVMConstVector(ix, 16), "");
}

/* epilogue_vec stored at p (element type ye). */
static void
epilogue_store(Dw *d, LLVMValueRef acc, LLVMValueRef ch, unsigned n, LLVMValueRef p)
{
    irb_store(&d->k->ir, epilogue_vec(d, acc, ch, n), p, 1);
}

/* The dot-product intrinsic for an n-lane vector (cg_isa_mac16), NULL for plain IR. Intrinsics
 * keep the accumulation a chain (the machine combiner reassociates plain adds into trees, which
 * breaks vpdpwssd formation and spills the accumulators). */
static const char *
mac_intrinsic(Dw *d, unsigned n)
{
    return cg_isa_mac16(d->k->t, d->k->isa, n);
}

/* acc + x * w on int32 lanes holding x (sign- or zero-extended 8 bits) and w (int16: zero
 * extended for the intrinsics, so that only the low halves multiply; sign extended otherwise). */
static LLVMValueRef
mac(Dw *d, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef w, unsigned n)
{
    Kb *k = d->k;
    const char *name = mac_intrinsic(d, n);
    if (!name)
        return LLVMBuildAdd(k->b, acc, LLVMBuildMul(k->b, x, w, ""), "");
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(k->mod, id, NULL, 0);
    LLVMTypeRef ft = LLVMIntrinsicGetType(k->c, id, NULL, 0);
    LLVMTypeRef pt[3];
    LLVMGetParamTypes(ft, pt);
    bool dot3 = LLVMCountParamTypes(ft) == 3;
    LLVMValueRef xa = LLVMBuildBitCast(k->b, x, pt[dot3 ? 1 : 0], "");
    LLVMValueRef wa = LLVMBuildBitCast(k->b, w, pt[dot3 ? 2 : 1], "");
    if (dot3) {
        LLVMValueRef args[3] = {acc, xa, wa};
        return LLVMBuildCall2(k->b, ft, f, args, 3, "");
    }
    LLVMValueRef args[2] = {xa, wa};
    return LLVMBuildAdd(k->b, acc, LLVMBuildCall2(k->b, ft, f, args, 2, ""), "");
}

/* P pixels x nv channel vectors starting at channel c0: tp[p * T + t] points at channel 0 of
 * tap t's input pixel for output pixel p, yp[p] at channel 0 of output pixel p. */
static void
emit_block(Dw *d, int P, LLVMValueRef *tp, LLVMValueRef *yp, LLVMValueRef c0, const DwVec *v,
           int nv)
{
    Kb *k = d->k;
    int64_t C = d->c->M;
    bool sx = d->xe == ET_I8;
    LLVMValueRef acc[DW_MAXP * DW_MAXV], ch[DW_MAXV];
    for (int j = 0; j < nv; j++) {
        ch[j] = cg_add(k, c0, cg_i64(k, v[j].off));
        LLVMValueRef b = table_vec(k, d->tb.gb, k->i32, ch[j], v[j].lanes);
        if (d->magic) /* the f32 bit-pattern epilogue (Dw.magic) */
            b = LLVMBuildAdd(k->b, b, cg_vsplat(k, LLVMConstInt(k->i32, 0x4B400000, 0), v[j].lanes), "");
        for (int p = 0; p < P; p++)
            acc[p * nv + j] = b;
    }
    for (int64_t t = 0; t < d->T; t++) {
        for (int j = 0; j < nv; j++) {
            unsigned n = v[j].lanes;
            LLVMTypeRef vi = LLVMVectorType(k->i32, n);
            LLVMValueRef wi = cg_add(k, ch[j], cg_i64(k, t * C));
            LLVMValueRef w16 = table_vec(k, d->tb.gw, k->i16, wi, n);
            /* the dot intrinsics multiply the low i16 halves only when w's high half is 0 */
            LLVMValueRef wv = mac_intrinsic(d, n) ? LLVMBuildZExt(k->b, w16, vi, "")
                                                  : LLVMBuildSExt(k->b, w16, vi, "");
            for (int p = 0; p < P; p++) {
                LLVMValueRef xv = vload(k, k->i8, n, cg_gep(k, tp[p * d->T + t], ch[j]));
                xv = sx ? LLVMBuildSExt(k->b, xv, vi, "") : LLVMBuildZExt(k->b, xv, vi, "");
                acc[p * nv + j] = mac(d, acc[p * nv + j], xv, wv, n);
            }
        }
    }
    int64_t es = (int64_t)elem_size(d->ye);
    for (int p = 0; p < P; p++)
        for (int j = 0; j < nv; j++)
            epilogue_store(d, acc[p * nv + j], ch[j], v[j].lanes,
                           cg_gep(k, yp[p], cg_mul(k, ch[j], cg_i64(k, es))));
}

/* <16 x i8> (or, bitcast, <8 x i16>) zip1 (hi = 0) / zip2 (hi = 1) of a and b. */
static LLVMValueRef
zip_v(Kb *k, LLVMValueRef a, LLVMValueRef b, bool half, int hi)
{
    unsigned n = half ? 8 : 16;
    LLVMTypeRef t = LLVMVectorType(half ? k->i16 : k->i8, n);
    LLVMValueRef ix[16];
    for (unsigned i = 0; i < n; i++)
        ix[i] = LLVMConstInt(k->i32, (unsigned)hi * n / 2 + i / 2 + (i & 1) * n, 0);
    LLVMValueRef r = LLVMBuildShuffleVector(k->b, LLVMBuildBitCast(k->b, a, t, ""), LLVMBuildBitCast(k->b, b, t, ""),
                                            LLVMConstVector(ix, n), "");
    return LLVMBuildBitCast(k->b, r, LLVMVectorType(k->i8, 16), "");
}

/* The NHWC quad form's dot product (Dw.nq4): acc + the 4-byte dot products of q and w per
 * lane, sdot (int8 activations) or usdot (uint8); acc NULL: channels ch's bias from Dw.gbm. */
static LLVMValueRef
nq4_dot(Dw *d, LLVMValueRef acc, LLVMValueRef ch, LLVMValueRef q, LLVMValueRef w)
{
    Kb *k = d->k;
    if (!acc) { /* Dw.gbm (nq4_init): the bias, loaded right before the accumulator's first dot */
        acc = table_vec(k, d->gbm, k->i32, ch, 4);
        LLVMSetVolatile(acc, 1);
    }
    const char *name = d->xe == ET_U8 && !d->nflip ? "llvm.aarch64.neon.usdot" : "llvm.aarch64.neon.sdot";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef ov[2] = {LLVMVectorType(k->i32, 4), LLVMVectorType(k->i8, 16)};
    LLVMValueRef args[3] = {acc, q, w};
    return LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, ov, 2), LLVMGetIntrinsicDeclaration(k->mod, id, ov, 2),
                          args, 3, "");
}

/* The 16 channel bytes at p, flipped to int8 for Dw.nflip. */
static LLVMValueRef
nq4_load(Dw *d, LLVMValueRef p)
{
    Kb *k = d->k;
    LLVMValueRef v = vload(k, k->i8, 16, p);
    return d->nflip ? LLVMBuildXor(k->b, v, cg_vsplat(k, LLVMConstInt(k->i8, 0x80, 0), 16), "") : v;
}

/* The 16 channel bytes of 4 pixels a[0..3] as 4 vectors q[0..3] whose lane l holds channel
 * 4 j + l's 4 bytes (zip1/zip2 .16b, then .8h). */
static void
nq4_quads(Kb *k, const LLVMValueRef *a, LLVMValueRef *q)
{
    LLVMValueRef z[4] = {zip_v(k, a[0], a[1], false, 0), zip_v(k, a[0], a[1], false, 1),
                         zip_v(k, a[2], a[3], false, 0), zip_v(k, a[2], a[3], false, 1)};
    q[0] = zip_v(k, z[0], z[2], true, 0);
    q[1] = zip_v(k, z[0], z[2], true, 1);
    q[2] = zip_v(k, z[1], z[3], true, 0);
    q[3] = zip_v(k, z[1], z[3], true, 1);
}

/* The accumulators of P pixels x 16 channels from c0 (4 vectors of 4 lanes each, channels
 * ch[j] = c0 + 4 j): the bias (plus 0x4B400000 for Dw.magic); with Dw.gbm NULL, for nq4_dot
 * to load each accumulator's bias (sdot overwrites its accumulator: a load pipe instead of a
 * vector copy). */
static void
nq4_init(Dw *d, int P, LLVMValueRef c0, LLVMValueRef *ch, LLVMValueRef *acc)
{
    Kb *k = d->k;
    for (int j = 0; j < 4; j++) {
        ch[j] = cg_add(k, c0, cg_i64(k, 4 * j));
        for (int p = 0; p < P && d->gbm; p++) /* loaded by the first nq4_dot */
            acc[p * 4 + j] = NULL;
        if (d->gbm)
            continue;
        LLVMValueRef b = table_vec(k, d->nflip ? d->gbq : d->tb.gb, k->i32, ch[j], 4);
        if (d->magic)
            b = LLVMBuildAdd(k->b, b, cg_vsplat(k, LLVMConstInt(k->i32, 0x4B400000, 0), 4), "");
        for (int p = 0; p < P; p++)
            acc[p * 4 + j] = b;
    }
}

/* Dw.n16: the 4 accumulators of 16 channels epilogued up to the f32 bits 0x4B400000 + v, v
 * the int16 result (n16_halves); their low halves (uzp1 .8h) are v; saturated to the result
 * type (sqxtun / sqxtn) and clamped to [lo, hi] as 16 bytes (here the saturating narrow keeps
 * fewer registers live than n16_pack's int16 clamp, which spills in llvm-mca's blocks). */
static LLVMValueRef
nq4_narrow(Dw *d, LLVMValueRef *acc, LLVMValueRef *ch)
{
    Kb *k = d->k;
    LLVMTypeRef b16 = LLVMVectorType(k->i8, 16);
    LLVMValueRef o[4], ix[16];
    n16_halves(d, acc, ch, 4, o);
    for (unsigned i = 0; i < 16; i++)
        ix[i] = LLVMConstInt(k->i32, 2 * i, 0);
    LLVMValueRef m8 = LLVMConstVector(ix, 8);
    LLVMValueRef lo = LLVMBuildShuffleVector(k->b, o[0], o[1], m8, ""), hi = LLVMBuildShuffleVector(k->b, o[2], o[3], m8, "");
    for (unsigned i = 0; i < 16; i++)
        ix[i] = LLVMConstInt(k->i32, i, 0);
    LLVMValueRef v = LLVMBuildShuffleVector(k->b, lo, hi, LLVMConstVector(ix, 16), "");
    bool u = d->ye == ET_U8;
    v = intrin2(k, "llvm.smax", v, cg_vsplat(k, LLVMConstInt(k->i16, u ? 0 : (uint64_t)-128, 1), 16));
    v = intrin2(k, "llvm.smin", v, cg_vsplat(k, LLVMConstInt(k->i16, u ? 255 : 127, 1), 16));
    v = LLVMBuildTrunc(k->b, v, b16, "");
    LLVMValueRef blo = cg_vsplat(k, LLVMBuildTrunc(k->b, d->qd, k->i8, ""), 16);
    LLVMValueRef bhi = cg_vsplat(k, LLVMBuildTrunc(k->b, d->qe, k->i8, ""), 16);
    v = intrin2(k, u ? "llvm.umax" : "llvm.smax", v, blo);
    return intrin2(k, u ? "llvm.umin" : "llvm.smin", v, bhi);
}

/* The 16 channels of pixel p (acc[4 p .. 4 p + 3]) epilogued and stored at yp[p] + c0. */
static void
nq4_store(Dw *d, int P, LLVMValueRef *acc, LLVMValueRef *ch, LLVMValueRef *yp, LLVMValueRef c0)
{
    Kb *k = d->k;
    LLVMTypeRef v16 = LLVMVectorType(k->i8, 16);
    int64_t es = (int64_t)elem_size(d->ye);
    for (int p = 0; p < P && d->n16; p++)
        irb_store(&k->ir, nq4_narrow(d, acc + 4 * p, ch), cg_gep(k, yp[p], c0), 1);
    for (int p = 0; p < P && es == 1 && !d->n16; p++) { /* 8-bit results: the 16 channels as one vector */
        LLVMTypeRef h8 = LLVMVectorType(k->i16, 8);
        LLVMValueRef o[4], ix[16];
        for (int j = 0; j < 4; j++)
            o[j] = LLVMBuildBitCast(k->b, epilogue_vec_w(d, acc[p * 4 + j], ch[j], 4, true), h8, "");
        for (unsigned i = 0; i < 16; i++) /* uzp1: the even elements of both */
            ix[i] = LLVMConstInt(k->i32, 2 * i, 0);
        LLVMValueRef m8 = LLVMConstVector(ix, 8);
        LLVMValueRef lo = LLVMBuildBitCast(k->b, LLVMBuildShuffleVector(k->b, o[0], o[1], m8, ""), v16, "");
        LLVMValueRef hi = LLVMBuildBitCast(k->b, LLVMBuildShuffleVector(k->b, o[2], o[3], m8, ""), v16, "");
        LLVMValueRef all = LLVMBuildShuffleVector(k->b, lo, hi, LLVMConstVector(ix, 16), "");
        irb_store(&k->ir, all, cg_gep(k, yp[p], c0), 1);
    }
    for (int p = 0; p < P && es != 1; p++)
        for (int j = 0; j < 4; j++)
            epilogue_store(d, acc[p * 4 + j], ch[j], 4, cg_gep(k, yp[p], cg_mul(k, ch[j], cg_i64(k, es))));
}

/* The taps from t0 on, in order, in groups of 4 (the last padded with zero bytes; weight
 * quads wq[(group x C + m) x 4 + i]), added to the P pixels' accumulators: emit_block_q4's
 * taps from 0 (Dw.gwq), the column form's rows from Dw.rc on (Dw.gwqr). */
static void
nq4_taps(Dw *d, int P, LLVMValueRef *tp, LLVMValueRef c0, const LLVMValueRef *ch, LLVMValueRef *acc,
         int64_t t0, LLVMValueRef wtab)
{
    Kb *k = d->k;
    int64_t C = d->c->M, T = d->T, NG = (T - t0 + 3) / 4;
    for (int64_t g = 0; g < NG; g++) {
        LLVMValueRef wq[4];
        for (int j = 0; j < 4; j++)
            wq[j] = vload(k, k->i8, 16, cg_gep(k, wtab, cg_mul(k, cg_add(k, ch[j], cg_i64(k, g * C)), cg_i64(k, 4))));
        for (int p = 0; p < P; p++) {
            LLVMValueRef a[4], q[4];
            for (int i = 0; i < 4; i++)
                a[i] = t0 + 4 * g + i < T ? nq4_load(d, cg_gep(k, tp[p * T + t0 + 4 * g + i], c0))
                                          : LLVMConstNull(LLVMVectorType(k->i8, 16));
            nq4_quads(k, a, q);
            for (int j = 0; j < 4; j++)
                acc[p * 4 + j] = nq4_dot(d, acc[p * 4 + j], ch[j], q[j], wq[j]);
        }
    }
}

/* emit_block of the NHWC quad form (Dw.nq4, tap order): P pixels x 16 channels from c0 (4
 * vectors of 4 lanes). The taps, in order, go in groups of 4 (the last group padded with zero
 * bytes and zero weights): per pixel and group the 16 channel bytes of the 4 tap pixels,
 * interleaved by zip1/zip2 .16b then .8h, are 4 vectors whose lane holds one channel's 4 taps;
 * one sdot (int8 activations) or usdot (uint8) each against the group's weight quads of those
 * channels. */
static void
emit_block_q4(Dw *d, int P, LLVMValueRef *tp, LLVMValueRef *yp, LLVMValueRef c0)
{
    LLVMValueRef acc[DW_MAXP * 4], ch[4];
    nq4_init(d, P, c0, ch, acc);
    nq4_taps(d, P, tp, c0, ch, acc, 0, d->gwq);
    nq4_store(d, P, acc, ch, yp, c0);
}

/* emit_block of the NHWC quad form by kernel columns (Dw.ncol): P pixels x 16 channels from
 * c0. For the first rc kernel rows (Dw.rc: a 3x3's 3, else a multiple of 4) a quad holds one
 * input column's bytes of 4 consecutive kernel rows (a 3x3's padded with a zero byte and zero
 * weight), so one input column's quads, built once (zip1/zip2 of its row pixels), serve every
 * (pixel, kernel column) of the block that reads that column: (P - 1) x stride + (KW - 1) x
 * dilation + 1 columns per block instead of one tap group per pixel. Weight quads:
 * gwqc[((kw x NR + rg) x C + m) x 4 + r] is w'[m] at kernel row 4 rg + r, column kw. The rows
 * from rc on (5x5: 1, 7x7: 3) go in tap order (nq4_taps). */
static void
emit_block_qc(Dw *d, int P, LLVMValueRef *tp, LLVMValueRef *yp, LLVMValueRef c0)
{
    Kb *k = d->k;
    const ConvGeo *c = d->c;
    int64_t C = c->M, T = d->T, KW = c->KW, NR = (d->rc + 3) / 4;
    int64_t ncol = (P - 1) * c->sw + (KW - 1) * c->dw + 1;
    LLVMTypeRef v16 = LLVMVectorType(k->i8, 16);
    LLVMValueRef acc[DW_MAXP * 4], ch[4];
    nq4_init(d, P, c0, ch, acc);
    for (int64_t i = 0; i < ncol; i++) {
        int up[DW_MAXP * DW_MAXT], uk[DW_MAXP * DW_MAXT], nu = 0;
        for (int p = 0; p < P; p++) /* the block's (pixel, kernel column) pairs reading column i */
            for (int64_t kw = 0; kw < KW; kw++)
                if (p * c->sw + kw * c->dw == i) {
                    up[nu] = p;
                    uk[nu++] = (int)kw;
                }
        for (int64_t rg = 0; rg < NR && nu; rg++) {
            LLVMValueRef a[4], q[4];
            for (int r = 0; r < 4; r++)
                a[r] = 4 * rg + r < d->rc ? nq4_load(d, cg_gep(k, tp[up[0] * T + (4 * rg + r) * KW + uk[0]], c0))
                                          : LLVMConstNull(v16);
            nq4_quads(k, a, q);
            for (int u = 0; u < nu; u++)
                for (int j = 0; j < 4; j++) {
                    LLVMValueRef wi = cg_add(k, ch[j], cg_i64(k, (uk[u] * NR + rg) * C));
                    LLVMValueRef wq = vload(k, k->i8, 16, cg_gep(k, d->gwqc, cg_mul(k, wi, cg_i64(k, 4))));
                    acc[up[u] * 4 + j] = nq4_dot(d, acc[up[u] * 4 + j], ch[j], q[j], wq);
                }
        }
    }
    nq4_taps(d, P, tp, c0, ch, acc, d->rc * d->c->KW, d->gwqr);
    nq4_store(d, P, acc, ch, yp, c0);
}

/* emit_block for kernels above DW_MAXT taps (9x9 and up), one output pixel (d->vn, d->voh,
 * d->ow) at a time: the taps are a (kh, kw) loop with a bounds check per tap (taps outside the
 * input read the zero-point row, as in the border path), and the accumulators live in allocas
 * of the row function, which SROA turns back into registers carried across the loop. The
 * arithmetic, tables and epilogue are emit_block's. */
static void
emit_block_tap_loop(Dw *d, LLVMValueRef ypix, LLVMValueRef c0, const DwVec *v, int nv)
{
    Kb *k = d->k;
    const ConvGeo *c = d->c;
    int64_t C = c->M;
    bool sx = d->xe == ET_I8;
    LLVMValueRef acc[DW_MAXV], ch[DW_MAXV];
    for (int j = 0; j < nv; j++) {
        ch[j] = cg_add(k, c0, cg_i64(k, v[j].off));
        acc[j] = cg_entry_alloca(k, LLVMVectorType(k->i32, v[j].lanes));
        LLVMBuildStore(k->b, table_vec(k, d->tb.gb, k->i32, ch[j], v[j].lanes), acc[j]);
    }
    CgLoop lkh, lkw;
    LLVMValueRef kh = cg_loop_begin(k, &lkh, cg_i64(k, c->KH));
    LLVMValueRef ih = cg_add(k, LLVMBuildSub(k->b, cg_mul(k, d->voh, cg_i64(k, c->sh)), cg_i64(k, c->ph), ""),
                             cg_mul(k, kh, cg_i64(k, c->dh)));
    LLVMValueRef okh = LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, ih, cg_i64(k, 0), ""),
                                    LLVMBuildICmp(k->b, LLVMIntSLT, ih, cg_i64(k, c->H), ""), "");
    LLVMValueRef kw = cg_loop_begin(k, &lkw, cg_i64(k, c->KW));
    LLVMValueRef iw = cg_add(k, LLVMBuildSub(k->b, cg_mul(k, d->ow, cg_i64(k, c->sw)), cg_i64(k, c->pw), ""),
                             cg_mul(k, kw, cg_i64(k, c->dw)));
    LLVMValueRef ok = LLVMBuildAnd(k->b, okh,
                                   LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, iw, cg_i64(k, 0), ""),
                                                LLVMBuildICmp(k->b, LLVMIntSLT, iw, cg_i64(k, c->W), ""), ""), "");
    LLVMValueRef off = cg_mul(k, cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, d->vn, cg_i64(k, c->H)), ih), cg_i64(k, c->W)), iw),
                              cg_i64(k, C));
    LLVMValueRef px = cg_gep(k, LLVMBuildSelect(k->b, ok, d->x, d->zrow, ""),
                             LLVMBuildSelect(k->b, ok, off, cg_i64(k, 0), ""));
    LLVMValueRef wrow = cg_mul(k, cg_add(k, cg_mul(k, kh, cg_i64(k, c->KW)), kw), cg_i64(k, C));
    for (int j = 0; j < nv; j++) {
        unsigned n = v[j].lanes;
        LLVMTypeRef vi = LLVMVectorType(k->i32, n);
        LLVMValueRef w16 = table_vec(k, d->tb.gw, k->i16, cg_add(k, ch[j], wrow), n);
        LLVMValueRef wv = mac_intrinsic(d, n) ? LLVMBuildZExt(k->b, w16, vi, "")
                                              : LLVMBuildSExt(k->b, w16, vi, "");
        LLVMValueRef xv = vload(k, k->i8, n, cg_gep(k, px, ch[j]));
        xv = sx ? LLVMBuildSExt(k->b, xv, vi, "") : LLVMBuildZExt(k->b, xv, vi, "");
        LLVMBuildStore(k->b, mac(d, LLVMBuildLoad2(k->b, vi, acc[j], ""), xv, wv, n), acc[j]);
    }
    cg_loop_end(k, &lkw);
    cg_loop_end(k, &lkh);
    int64_t es = (int64_t)elem_size(d->ye);
    for (int j = 0; j < nv; j++)
        epilogue_store(d, LLVMBuildLoad2(k->b, LLVMVectorType(k->i32, v[j].lanes), acc[j], ""), ch[j],
                       v[j].lanes, cg_gep(k, ypix, cg_mul(k, ch[j], cg_i64(k, es))));
}

/* for (iv = lo; iv < hi; iv += step) with i64 bounds. */
typedef IrbLoop DwLoop;

static LLVMValueRef
loop_from(Kb *k, DwLoop *l, LLVMValueRef lo, LLVMValueRef hi, int64_t step)
{
    return irb_loop_begin(k->b, k->c, k->fn, l, lo, hi, cg_i64(k, step), "dwloop", "dwbody",
                          "dwdone", "");
}

static void
loop_to(Kb *k, DwLoop *l)
{
    /* the body is P pixels x CV vectors already: neither vectorised nor unrolled by LLVM */
    irb_loop_hint(k->c, irb_loop_latch(k->b, l), IRB_NO_VECTORIZE | IRB_NO_UNROLL);
    LLVMPositionBuilderAtEnd(k->b, l->exit);
}

/* All channels of P pixels: a loop over full blocks of cv vectors, then the rest (full
 * vectors, then 8/4/2/1-lane pieces, all below vl). */
static void
emit_pixels(Dw *d, int P, int cv, LLVMValueRef *tp, LLVMValueRef *yp)
{
    Kb *k = d->k;
    int64_t C = d->c->M, blk = (int64_t)cv * d->vl, nblk = C / blk;
    DwVec v[DW_MAXV];
    if (nblk > 0) {
        for (int j = 0; j < cv; j++)
            v[j] = (DwVec){(int64_t)j * d->vl, d->vl};
        DwLoop l;
        LLVMValueRef c0 = loop_from(k, &l, cg_i64(k, 0), cg_i64(k, nblk * blk), blk);
        if (d->nq4 && d->ncol && P > 1)
            emit_block_qc(d, P, tp, yp, c0);
        else if (d->nq4)
            emit_block_q4(d, P, tp, yp, c0);
        else if (d->tap_loop)
            emit_block_tap_loop(d, yp[0], c0, v, cv);
        else
            emit_block(d, P, tp, yp, c0, v, cv);
        loop_to(k, &l);
    }
    int64_t c = nblk * blk;
    int nv = 0;
    for (unsigned n = d->vl; n >= 1; n /= 2)
        while (C - c >= (int64_t)n && nv < DW_MAXV) {
            v[nv++] = (DwVec){c - nblk * blk, n};
            c += n;
        }
    if (nv && d->tap_loop)
        emit_block_tap_loop(d, yp[0], cg_i64(k, nblk * blk), v, nv);
    else if (nv)
        emit_block(d, P, tp, yp, cg_i64(k, nblk * blk), v, nv);
}

/* The path's vector width (its record's vector_bits: 512 on avx512vnni) is legal in the row
 * function; and vpdpwssd stays one instruction (the record's mac16_tune, "+fast-dpwssd":
 * without it LLVM splits it into vpmaddwd + vpaddd for generic CPUs, which then get
 * reassociated: twice the uops on the busiest port, and spills). */
static void
row_fn_attrs(Dw *d, LLVMValueRef fn)
{
    Kb *k = d->k;
    const CgIsaDesc *isa = cg_isa_desc(k->t, k->isa);
    if (isa->vector_bits)
        cg_function_set_target(fn, k->t, isa->vector_bits);
    if (!isa->mac16_tune)
        return;
    char feat[sizeof k->t->features + 32];
    snprintf(feat, sizeof feat, "%s%s%s", k->t->features, k->t->features[0] ? "," : "",
             isa->mac16_tune);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(k->c, "target-features", 15, feat,
                                                      (unsigned)strlen(feat)));
}

/* A bias table: bias - zb x sum_t w'_t + add per channel (wrapping), rep times each. Dw.gbq: zb = zx - 128, the
 * bias of sums of (x ^ 0x80) x w' = (x - 128) x w'; Dw.gbm: the NCHW plane's zero point, plus
 * 0x4B400000 for Dw.magic. */
static LLVMValueRef
dw_bias_table(Kb *k, int64_t M, int64_t T, const int8_t *w, const int32_t *zw, const int32_t *bias, int32_t zb,
              uint32_t add, const char *name)
{
    int32_t *bz = xmalloc((size_t)(M > 0 ? M : 1) * sizeof *bz);
    for (int64_t m = 0; m < M; m++) {
        uint32_t s = 0;
        for (int64_t t = 0; t < T; t++)
            s += (uint32_t)(w[m * T + t] - zw[m]);
        bz[m] = (int32_t)((uint32_t)(bias ? bias[m] : 0) - (uint32_t)zb * s + add);
    }
    LLVMValueRef g = cg_const_bytes(k, bz, (size_t)M * sizeof *bz, name);
    free(bz);
    return g;
}

/* Whether the NHWC quad form's interior blocks of P = 4 pixels go by kernel columns
 * (emit_block_qc), and if so Dw.rc, Dw.gwqc and Dw.gwqr: the first rc rows by columns (a 3x3's
 * 3 rows as one padded quad, the same 9 of 12 slots as the tap order's 3 groups; taller
 * kernels 4 rows a quad, no padding: a padded group costs more dots than the shared zips save,
 * llvm-mca on Neoverse V1 gives a 5x5 by padded columns the tap order's cycles), where the
 * block's vector instructions, ncol columns x NR quads x 8 zips plus P x KW x NR x 4 dots
 * plus P x 12 per tap group of the other rows, are below the tap order's P x NG x 12. */
static void
dw_ncol_weights(Dw *d, const int8_t *w, const int32_t *zw)
{
    const ConvGeo *c = d->c;
    int64_t C = c->M, KH = c->KH, KW = c->KW, NG = (d->T + 3) / 4;
    int64_t rc = KH == 3 ? 3 : KH / 4 * 4, NR = (rc + 3) / 4, NGR = ((KH - rc) * KW + 3) / 4;
    int64_t P = 16 / 4, ncol = (P - 1) * c->sw + (KW - 1) * c->dw + 1;
    /* without i8mm (cortex-a76 builds; llvm-mca's Neoverse N1, 2 vector pipes, 3-wide dispatch)
     * the taller kernels' column form spills: there only the 3x3 */
    d->ncol = rc > 0 && (rc == 3 || d->k->t->i8mm) && ncol * NR * 8 + P * KW * NR * 4 + P * NGR * 12 < P * NG * 12;
    if (!d->ncol)
        return;
    d->rc = rc;
    int8_t *wq = xcalloc((size_t)(KW * NR * C * 4), 1), *wr = xcalloc((size_t)((NGR > 0 ? NGR : 1) * C * 4), 1);
    for (int64_t m = 0; m < C; m++)
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                int8_t v = (int8_t)(w[m * d->T + kh * KW + kw] - zw[m]);
                int64_t r = (kh - rc) * KW + kw;
                if (kh < rc)
                    wq[((kw * NR + kh / 4) * C + m) * 4 + kh % 4] = v;
                else
                    wr[((r / 4) * C + m) * 4 + r % 4] = v;
            }
    d->gwqc = cg_const_bytes(d->k, wq, (size_t)(KW * NR * C * 4), "dwqc");
    if (NGR > 0)
        d->gwqr = cg_const_bytes(d->k, wr, (size_t)(NGR * C * 4), "dwqr");
    free(wq);
    free(wr);
}

int64_t
cg_dw_nhwc_scratch(const ConvGeo *c)
{
    return (c->W * c->C + 63) / 64 * 64;
}

/* The output pixels [ow0, ow1) of a row as blocks of up to P pixels (the last one possibly
 * smaller), their taps' pointers known at compile time: row pointer rp[kh] at column iw, or the
 * zero-point row where iw is outside the input (every (pixel, kernel column) reading input
 * column iw then reads that row, so emit_block_qc's shared column quads stay right). The left
 * and right borders and the interior columns a whole block does not fill: on a 7x7 map with a
 * 5x5 kernel that is every pixel, which one-by-one would load each weight vector per pixel. */
static void
dw_border(Dw *d, int64_t ow0, int64_t ow1, int P, int cv, const LLVMValueRef *rp, LLVMValueRef yrow)
{
    Kb *k = d->k;
    const ConvGeo *c = d->c;
    int64_t C = c->M, es = (int64_t)elem_size(d->ye);
    LLVMValueRef tp[DW_MAXP * DW_MAXT], yp[DW_MAXP];
    for (int64_t b = ow0; b < ow1; b += P) {
        int n = (int)(ow1 - b < P ? ow1 - b : P);
        for (int p = 0; p < n; p++) {
            for (int64_t kh = 0; kh < c->KH; kh++)
                for (int64_t kw = 0; kw < c->KW; kw++) {
                    int64_t iw = (b + p) * c->sw - c->pw + kw * c->dw;
                    tp[p * d->T + kh * c->KW + kw] = iw >= 0 && iw < c->W ? cg_gep(k, rp[kh], cg_i64(k, iw * C)) : d->zrow;
                }
            yp[p] = cg_gep(k, yrow, cg_i64(k, (b + p) * C * es));
        }
        emit_pixels(d, n, cv, tp, yp);
    }
}

bool
cg_emit_dw_conv_nhwc(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e,
                     const int8_t *w, const int32_t *zw, const int32_t *bias)
{
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    Dw d;
    dw_init(&d, k, n, c, e);
    d.tap_loop = d.T > DW_MAXT;
    d.vl = cg_isa_i32_lanes(k->t, k->isa);
    int budget = cg_isa_desc(k->t, k->isa)->vregs >= 32 ? 16 : 12;
    int32_t zx = xt->q->zp[0];
    int64_t C = c->M, nvec = C / d.vl;
    dw_tables(k, C, d.T, e, w, zw, bias, zx, &d.tb);
    d.fast = cg_dw_fast_ok(k, e, d.ye, C, d.T, w, zw, bias);
    /* channel vectors per block: 4, or 3 / 2 when that leaves no tail block (96, 144) */
    int cv = nvec >= 4 ? 4 : nvec >= 1 ? (int)nvec : 1;
    if (nvec >= 4 && nvec % 4 != 0)
        cv = nvec % 3 == 0 ? 3 : nvec % 2 == 0 ? 2 : 4;
    /* AArch64 with dotprod: the quad form on blocks of 16 channels (the rest widening) where
     * every w' fits int8 (int8 activations: sdot; uint8: usdot with i8mm, else sdot on
     * x ^ 0x80, Dw.nflip) */
    d.nq4 = !d.tap_loop && cg_isa_sdot8(k->t, k->isa, 4) && nvec >= 4 && (d.xe == ET_I8 || d.xe == ET_U8);
    for (int64_t m = 0; d.nq4 && m < C; m++)
        for (int64_t t = 0; t < d.T; t++)
            if (w[m * d.T + t] - zw[m] < -128 || w[m * d.T + t] - zw[m] > 127)
                d.nq4 = false;
    if (d.nq4) {
        cv = 4;
        d.nflip = d.xe == ET_U8 && !k->t->i8mm;
        int64_t NG = (d.T + 3) / 4;
        int8_t *wq = xcalloc((size_t)(NG * C * 4), 1);
        for (int64_t m = 0; m < C; m++)
            for (int64_t t = 0; t < d.T; t++)
                wq[((t / 4) * C + m) * 4 + t % 4] = (int8_t)(w[m * d.T + t] - zw[m]);
        d.gwq = cg_const_bytes(k, wq, (size_t)(NG * C * 4), "dwq4");
        free(wq);
        dw_ncol_weights(&d, w, zw);
        if (d.nflip)
            d.gbq = dw_bias_table(k, C, d.T, w, zw, bias, zx - 128, 0, "dwbq");
        d.magic = d.fast && dw_magic_ok(e, C, d.T, w, zw, bias, 2097152.0);
        d.n16 = d.magic && dw_magic_ok(e, C, d.T, w, zw, bias, 32767.0);
        if (k->t->i8mm && c->KH > 3) /* as dw_rows; llvm-mca's 3x3 blocks spill these and slow */
            d.gbm = dw_bias_table(k, C, d.T, w, zw, bias, d.nflip ? zx - 128 : zx, d.magic ? 0x4B400000u : 0, "dwbm");
    }
    int P = budget / cv;
    if (P > 8)
        P = 8;
    if (d.nflip) /* llvm-mca, Neoverse N1 (cortex-a76 builds): 2 pixels spill less (3x3 15 -> 17
                  * GOPS, 5x5 s2 22 -> 25) */
        P = 2;

    /* interior output columns: every tap's column inside the input */
    int64_t ow_lo = (c->pw + c->sw - 1) / c->sw;
    int64_t last = c->W - 1 + c->pw - (c->KW - 1) * c->dw;
    int64_t ow_hi = last < 0 ? 0 : last / c->sw + 1;
    if (ow_lo > c->OW)
        ow_lo = c->OW;
    if (ow_hi > c->OW)
        ow_hi = c->OW;
    if (ow_hi < ow_lo)
        ow_hi = ow_lo;

    /* the row of zero points (scratch), filled before the rows run */
    LLVMBuildMemSet(k->b, a->scratch, LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zx, 0),
                    cg_i64(k, c->W * c->C), 64);
    LLVMValueRef gq = dw_clamp_table(k, e);
    Par par;
    LLVMValueRef io[3] = {a->in[0], a->out[0], a->scratch};
    LLVMValueRef vr = cg_par_begin(k, &par, c->N * c->OH, io, 3);
    row_fn_attrs(&d, par.fn);
    dw_clamp_load(&d, gq);
    d.x = io[0];
    d.y = io[1];
    d.zrow = io[2];
    LLVMValueRef vn = LLVMBuildSDiv(k->b, vr, cg_i64(k, c->OH), "");
    LLVMValueRef voh = LLVMBuildSRem(k->b, vr, cg_i64(k, c->OH), "");
    int64_t es = (int64_t)elem_size(d.ye);
    LLVMValueRef yrow = cg_gep(k, d.y, cg_mul(k, vr, cg_i64(k, c->OW * C * es)));
    LLVMValueRef tp[DW_MAXP * DW_MAXT], yp[DW_MAXP];
    if (d.tap_loop) {
        d.vn = vn;
        d.voh = voh;
        DwLoop l;
        d.ow = loop_from(k, &l, cg_i64(k, 0), cg_i64(k, c->OW), 1);
        yp[0] = cg_gep(k, yrow, cg_mul(k, d.ow, cg_i64(k, C * es)));
        emit_pixels(&d, 1, cv, NULL, yp);
        loop_to(k, &l);
        cg_par_end(k, &par, a);
        return true;
    }
    /* row pointers: tap row kh of this output row, or the zero-point row */
    LLVMValueRef rp[DW_MAXT];
    LLVMValueRef ih0 = LLVMBuildSub(k->b, cg_mul(k, voh, cg_i64(k, c->sh)), cg_i64(k, c->ph), "");
    for (int64_t kh = 0; kh < c->KH; kh++) {
        LLVMValueRef ih = cg_add(k, ih0, cg_i64(k, kh * c->dh));
        LLVMValueRef ok = LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, ih, cg_i64(k, 0), ""),
                                       LLVMBuildICmp(k->b, LLVMIntSLT, ih, cg_i64(k, c->H), ""), "");
        LLVMValueRef row = cg_gep(k, d.x, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->H)), ih),
                                                 cg_i64(k, c->W * C)));
        rp[kh] = LLVMBuildSelect(k->b, ok, row, d.zrow, "");
    }

    /* interior blocks of P pixels: no bounds checks */
    int64_t bend = ow_lo + (ow_hi - ow_lo) / P * P;
    if (bend > ow_lo) {
        DwLoop l;
        LLVMValueRef ow = loop_from(k, &l, cg_i64(k, ow_lo), cg_i64(k, bend), P);
        LLVMValueRef iw0 = LLVMBuildSub(k->b, cg_mul(k, ow, cg_i64(k, c->sw)), cg_i64(k, c->pw), "");
        for (int p = 0; p < P; p++) {
            for (int64_t kh = 0; kh < c->KH; kh++)
                for (int64_t kw = 0; kw < c->KW; kw++) {
                    LLVMValueRef iw = cg_add(k, iw0, cg_i64(k, p * c->sw + kw * c->dw));
                    tp[p * d.T + kh * c->KW + kw] = cg_gep(k, rp[kh], cg_mul(k, iw, cg_i64(k, C)));
                }
            yp[p] = cg_gep(k, yrow, cg_mul(k, cg_add(k, ow, cg_i64(k, p)), cg_i64(k, C * es)));
        }
        emit_pixels(&d, P, cv, tp, yp);
        loop_to(k, &l);
    }
    /* the other pixels: the left border [0, ow_lo), then [bend, OW) (the interior rest and the
     * right border); taps outside the input read the zero-point row. Blocks of up to P pixels
     * (dw_border), except the AArch64 quad form by taps, which goes one by one. */
    int64_t nrest = ow_lo + (c->OW - bend);
    if (d.ncol || !d.nq4) {
        dw_border(&d, 0, ow_lo, P, cv, rp, yrow);
        dw_border(&d, bend, c->OW, P, cv, rp, yrow);
        nrest = 0;
    }
    if (nrest > 0) {
        DwLoop l;
        LLVMValueRef j = loop_from(k, &l, cg_i64(k, 0), cg_i64(k, nrest), 1);
        LLVMValueRef ow = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLT, j, cg_i64(k, ow_lo), ""), j,
                                          cg_add(k, j, cg_i64(k, bend - ow_lo)), "");
        LLVMValueRef iw0 = LLVMBuildSub(k->b, cg_mul(k, ow, cg_i64(k, c->sw)), cg_i64(k, c->pw), "");
        for (int64_t kh = 0; kh < c->KH; kh++)
            for (int64_t kw = 0; kw < c->KW; kw++) {
                LLVMValueRef iw = cg_add(k, iw0, cg_i64(k, kw * c->dw));
                LLVMValueRef ok = LLVMBuildAnd(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, iw, cg_i64(k, 0), ""),
                                               LLVMBuildICmp(k->b, LLVMIntSLT, iw, cg_i64(k, c->W), ""), "");
                LLVMValueRef iwc = LLVMBuildSelect(k->b, ok, iw, cg_i64(k, 0), "");
                LLVMValueRef base = LLVMBuildSelect(k->b, ok, rp[kh], d.zrow, "");
                tp[kh * c->KW + kw] = cg_gep(k, base, cg_mul(k, iwc, cg_i64(k, C)));
            }
        yp[0] = cg_gep(k, yrow, cg_mul(k, ow, cg_i64(k, C * es)));
        emit_pixels(&d, 1, cv, tp, yp);
        loop_to(k, &l);
    }
    cg_par_end(k, &par, a);
    return true;
}

/* ---- depthwise, NCHW: a zero-point padded plane per channel ---- */

typedef struct DwPad {
    int64_t PH, PW; /* padded plane */
} DwPad;

static DwPad
dw_pad(const ConvGeo *c)
{
    DwPad d;
    int64_t need_h = (c->OH - 1) * c->sh + (c->KH - 1) * c->dh + 1;
    int64_t need_w = (c->OW - 1) * c->sw + (c->KW - 1) * c->dw + 1;
    d.PH = c->ph + c->H > need_h ? c->ph + c->H : need_h;
    d.PW = c->pw + c->W > need_w ? c->pw + c->W : need_w;
    return d;
}

int64_t
cg_dw_scratch(const ConvGeo *c)
{
    DwPad d = dw_pad(c);
    return align64(d.PH * d.PW);
}

/* ---- depthwise, NCHW, register-blocked rows (dw_rows) ----
 * One parallel-for task per (n, output channel): the input plane is copied into a zero-point
 * padded plane on the task's stack, then each output row is computed in blocks of up to
 * DWR_MAXV vectors of n output columns whose int32 accumulators stay in registers across all
 * taps. Stride 1: per tap, one widening load of n input bytes per vector and one multiply-add
 * with the tap's weight on every lane (emit_block's mac: vpdpwssd / vpmaddwd on the low i16
 * halves). Stride 2: input columns 2j + kw and 2j + kw + 1 are adjacent, so one load of 2n
 * bytes widened to i16 holds, in int32 lane j, the pair of inputs of taps kw and kw + 1
 * (dilation 1; else kw alone), and one vpdpwssd / vpmaddwd against the splat weight pair
 * (w[kw], w[kw + 1]) does both taps. Columns past OW are computed from the plane's slack and
 * dropped before the epilogue; the epilogue is emit_block's, the tables splat per channel. */
enum { DWR_MAXV = 4, DWR_MAXACC = 8, DWR_MAXPLANE = 64 * 1024 };

static bool
dw_rows_ok(const ConvGeo *c, ElemType xe)
{
    DwPad p = dw_pad(c);
    return (xe == ET_U8 || xe == ET_I8) && (c->sw == 1 || c->sw == 2) &&
           c->KH * c->KW <= DW_MAXT && p.PH * p.PW <= DWR_MAXPLANE;
}

/* acc + the i16 pairs of x times the i16 pairs of w (both <2n x i16>), per int32 lane. */
static LLVMValueRef
mac_pair(Dw *d, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef w, unsigned n)
{
    Kb *k = d->k;
    LLVMTypeRef vi = LLVMVectorType(k->i32, n);
    if (mac_intrinsic(d, n))
        return mac(d, acc, LLVMBuildBitCast(k->b, x, vi, ""), LLVMBuildBitCast(k->b, w, vi, ""), n);
    LLVMValueRef ie[16], io[16];
    for (unsigned i = 0; i < n; i++) {
        ie[i] = LLVMConstInt(k->i32, 2 * i, 0);
        io[i] = LLVMConstInt(k->i32, 2 * i + 1, 0);
    }
    LLVMValueRef me = LLVMConstVector(ie, n), mo = LLVMConstVector(io, n);
    LLVMValueRef xe = LLVMBuildSExt(k->b, LLVMBuildShuffleVector(k->b, x, x, me, ""), vi, "");
    LLVMValueRef xo = LLVMBuildSExt(k->b, LLVMBuildShuffleVector(k->b, x, x, mo, ""), vi, "");
    LLVMValueRef we = LLVMBuildSExt(k->b, LLVMBuildShuffleVector(k->b, w, w, me, ""), vi, "");
    LLVMValueRef wo = LLVMBuildSExt(k->b, LLVMBuildShuffleVector(k->b, w, w, mo, ""), vi, "");
    acc = LLVMBuildAdd(k->b, acc, LLVMBuildMul(k->b, xe, we, ""), "");
    return LLVMBuildAdd(k->b, acc, LLVMBuildMul(k->b, xo, wo, ""), "");
}

/* The multiply-add steps of a row block, in order, as (first tap, taps): (kh, kw) taps one by
 * one; at stride 2 with dilation 1 pairs (kw, kw + 1) where kw + 1 < KW; in the quad form
 * (q4) groups of up to 4 taps kw0 .. kw0 + 3 of one kernel row. */
static int64_t
dw_rows_steps(const ConvGeo *c, bool q4, int64_t *tap, int *nt)
{
    int64_t S = 0;
    for (int64_t kh = 0; kh < c->KH; kh++)
        for (int64_t kw = 0; kw < c->KW;) {
            int n = q4 ? (int)(c->KW - kw < 4 ? c->KW - kw : 4) : c->sw == 2 && c->dw == 1 && kw + 1 < c->KW ? 2 : 1;
            if (tap) {
                tap[S] = kh * c->KW + kw;
                nt[S] = n;
            }
            S++;
            kw += n;
        }
    return S;
}

/* The weights of every step as the int32 a step multiplies with, [channel][step]: quad form,
 * the bytes w'[kw0 + i] (int8; 0 past the step's taps); stride 2, the i16 pair (w'[kw],
 * w'[kw + 1] or 0); else w' zero-extended for the dot-product intrinsics (only the low i16
 * halves multiply) or sign extended. Broadcast from memory by the multiply-add. */
static LLVMValueRef
dw_rows_weights(Kb *k, const ConvGeo *c, bool q4, const int8_t *w, const int32_t *zw, bool zext)
{
    int64_t T = c->KH * c->KW, S = dw_rows_steps(c, q4, NULL, NULL);
    int64_t *tap = xmalloc((size_t)S * sizeof *tap);
    int *nt = xmalloc((size_t)S * sizeof *nt);
    dw_rows_steps(c, q4, tap, nt);
    uint32_t *tw = xmalloc((size_t)(S * c->M) * sizeof *tw);
    for (int64_t m = 0; m < c->M; m++)
        for (int64_t st = 0; st < S; st++) {
            uint32_t v = 0;
            for (int i = 0; i < nt[st]; i++) {
                int32_t wi = w[m * T + tap[st] + i] - zw[m];
                if (q4)
                    v |= (uint32_t)(uint8_t)(int8_t)wi << (8 * i);
                else if (c->sw == 2)
                    v |= (uint32_t)(uint16_t)(int16_t)wi << (16 * i);
                else
                    v = zext ? (uint32_t)(uint16_t)(int16_t)wi : (uint32_t)wi;
            }
            tw[m * S + st] = v;
        }
    LLVMValueRef g = cg_const_bytes(k, tw, (size_t)(S * c->M) * sizeof *tw, "dwrw");
    free(tap);
    free(nt);
    free(tw);
    return g;
}

/* Whether the NCHW rows kernel takes the quad form on n-lane vectors: the path has the u8 x s8
 * dot product (cg_isa_dot8) or, on AArch64, the s8 x s8 one (cg_isa_sdot8), every w' fits
 * int8, and the 4n bytes loaded per step hold every lane's taps (lane l reads bytes
 * lane_in(l) + i * dw, i < 4). */
static bool
dw_q4_ok(Kb *k, const Dw *d, unsigned n, const int8_t *w, const int32_t *zw)
{
    const ConvGeo *c = d->c;
    if ((!cg_isa_dot8(k->t, k->isa, n) && !cg_isa_sdot8(k->t, k->isa, n)) ||
        lane_in(d, n, n - 1) + 3 * c->dw >= 4 * (int64_t)n)
        return false;
    int64_t T = c->KH * c->KW;
    for (int64_t m = 0; m < c->M; m++)
        for (int64_t t = 0; t < T; t++) {
            int32_t v = w[m * T + t] - zw[m];
            if (v < -128 || v > 127)
                return false;
        }
    return true;
}

/* acc + 4-tap dot products of a quad step: lane l of the n lanes multiplies the bytes
 * p[s * l + i * dw] (i < nt; the other byte slots repeat tap 0 against a zero weight) by the
 * step's 4 weight bytes wv (<4n x i8>, the same on every lane), one vpdpbusd (x86: one byte
 * permute, vpermb / vpshufb) or sdot (AArch64: one tbl). p holds unsigned bytes for vpdpbusd
 * (the plane is copied as x ^ 0x80 for int8 activations), signed bytes for sdot (x ^ 0x80 for
 * uint8 activations). */
static LLVMValueRef
q4_step(Dw *d, LLVMValueRef acc, LLVMValueRef p, LLVMValueRef wv, int nt, unsigned n)
{
    Kb *k = d->k;
    const ConvGeo *c = d->c;
    LLVMValueRef x = vload(k, k->i8, 4 * n, p);
    if (d->ilv) /* lane l's taps are bytes 4 l .. 4 l + 3 */
        return q4_dot(d, acc, x, wv, n);
    LLVMValueRef ix[64];
    for (unsigned l = 0; l < n; l++)
        for (int i = 0; i < 4; i++)
            ix[4 * l + (unsigned)i] = LLVMConstInt(k->i32, (unsigned long long)(lane_in(d, n, l) + (i < nt ? i : 0) * c->dw), 0);
    LLVMValueRef xq = LLVMBuildShuffleVector(k->b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(ix, 4 * n), "");
    return q4_dot(d, acc, xq, wv, n);
}

/* acc + vpdpbusd(xq, wv) on n lanes (xq: unsigned bytes, wv: signed). */
LLVMValueRef
cg_dot8_call(Kb *k, const char *intr, LLVMValueRef acc, LLVMValueRef xq, LLVMValueRef wv)
{
    unsigned id = LLVMLookupIntrinsicID(intr, strlen(intr));
    LLVMTypeRef ft = LLVMIntrinsicGetType(k->c, id, NULL, 0);
    LLVMTypeRef pt[3];
    LLVMGetParamTypes(ft, pt);
    LLVMValueRef args[3] = {acc, LLVMBuildBitCast(k->b, xq, pt[1], ""), LLVMBuildBitCast(k->b, wv, pt[2], "")};
    return LLVMBuildCall2(k->b, ft, LLVMGetIntrinsicDeclaration(k->mod, id, NULL, 0), args, 3, "");
}

static LLVMValueRef
q4_dot(Dw *d, LLVMValueRef acc, LLVMValueRef xq, LLVMValueRef wv, unsigned n)
{
    Kb *k = d->k;
    const char *sdot = cg_isa_sdot8(k->t, k->isa, n);
    if (!sdot)
        return cg_dot8_call(k, cg_isa_dot8(k->t, k->isa, n), acc, xq, wv);
    LLVMTypeRef v16 = LLVMVectorType(k->i8, 16), ov[2] = {LLVMVectorType(k->i32, 4), v16};
    unsigned id = LLVMLookupIntrinsicID(sdot, strlen(sdot));
    LLVMValueRef args[3] = {acc, LLVMBuildBitCast(k->b, xq, v16, ""), LLVMBuildBitCast(k->b, wv, v16, "")};
    return LLVMBuildCall2(k->b, LLVMIntrinsicGetType(k->c, id, ov, 2), LLVMGetIntrinsicDeclaration(k->mod, id, ov, 2),
                          args, 3, "");
}

/* Lanes [l0, l0 + cnt) of out (n lanes, after epilogue_vec) stored at p, in power-of-two pieces
 * (with the epilogue on a 3-lane vector, the fixed-point requantization gave wrong results on
 * AArch64: conv_dw_mult.qir under test/e2e/cross.py). */
void
cg_dw_store_lanes(Kb *k, LLVMValueRef out, unsigned n, int64_t l0, int64_t cnt, LLVMValueRef p, int64_t es)
{
    if (l0 == 0 && cnt == (int64_t)n) {
        irb_store(&k->ir, out, p, 1);
        return;
    }
    for (int64_t i = 0, piece = n / 2; i < cnt; piece /= 2) {
        if (cnt - i < piece)
            continue;
        LLVMValueRef ix[16];
        for (int64_t q = 0; q < piece; q++)
            ix[q] = LLVMConstInt(k->i32, (unsigned long long)(l0 + i + q), 0);
        LLVMValueRef pv = LLVMBuildShuffleVector(k->b, out, out, LLVMConstVector(ix, (unsigned)piece), "");
        irb_store(&k->ir, pv, cg_gep(k, p, cg_i64(k, i * es)), 1);
        i += piece;
    }
}

/* Where lane l of a vector reads and writes, relative to the vector's first output: rows
 * form, one output row per vector (rpv 1: lane l is column l) or, quad form on small maps, rpv
 * output rows per vector (lane l is row l / (n / rpv), column l % (n / rpv)); flat form,
 * lane l is position q + l of the map's flat rows (q = oh * PW + ow). */
static int64_t
lane_in(const Dw *d, unsigned n, unsigned l)
{
    const ConvGeo *c = d->c;
    unsigned h = n / (unsigned)d->rpv;
    return (int64_t)(l / h) * c->sh * d->PW + c->sw * (int64_t)(l % h);
}

/* Output element (oh * OW + ow, relative to output row oh0 of the block) of lane l of vector
 * (r, j) of a block whose first vector starts at column (flat: position) ow0; -1 when the lane
 * is past the map or its rows (nrows rows from oh0 are valid). */
static int64_t
lane_out(const Dw *d, unsigned n, int r, int j, unsigned l, int64_t ow0, int64_t nrows)
{
    const ConvGeo *c = d->c;
    int64_t oh, ow;
    if (d->flat) {
        int64_t q = ow0 + (int64_t)j * n + l;
        oh = q / d->PW;
        ow = q % d->PW;
    } else if (d->ilv) {
        oh = r;
        ow = ow0 + (int64_t)(j / d->ilv) * d->ilv * n + (int64_t)d->ilv * l + j % d->ilv;
    } else {
        unsigned h = n / (unsigned)d->rpv;
        oh = (int64_t)r * d->rpv + l / h;
        ow = ow0 + (int64_t)j * n + l % h;
    }
    return ow < c->OW && oh < nrows ? oh * c->OW + ow : -1;
}

/* The whole output plane (OH * OW <= 64 bytes) from nacc epilogued vectors of n int8 lanes: one
 * two-source byte permute (vpermt2b) gathers each output's lane, one masked store writes it. */
static void
plane_store(Dw *d, LLVMValueRef *out, int nacc, unsigned n, LLVMValueRef ybase)
{
    Kb *k = d->k;
    const ConvGeo *c = d->c;
    int64_t E = c->OH * c->OW;
    LLVMValueRef half[2];
    for (int hb = 0; hb < 2; hb++) { /* lanes [64 hb, 64 hb + 64) of the concatenation */
        LLVMValueRef ix[64], v[8];
        int nv = 0;
        for (int a = 0; a < nacc; a++)
            if ((unsigned)a * n >= 64u * (unsigned)hb && (unsigned)a * n < 64u * (unsigned)(hb + 1))
                v[nv++] = out[a];
        LLVMValueRef acc = NULL;
        for (int i = 0; i < nv; i++) { /* widen piece by piece to 64 lanes */
            LLVMValueRef w = v[i];
            for (unsigned l = 0; l < 64; l++)
                ix[l] = LLVMConstInt(k->i32, l < n ? l : n, 0);
            w = LLVMBuildShuffleVector(k->b, w, LLVMConstNull(LLVMTypeOf(w)), LLVMConstVector(ix, 64), "");
            if (!acc) {
                acc = w;
                continue;
            }
            for (unsigned l = 0; l < 64; l++)
                ix[l] = LLVMConstInt(k->i32, l >= (unsigned)i * n && l < (unsigned)(i + 1) * n ? 64 + l - (unsigned)i * n : l, 0);
            acc = LLVMBuildShuffleVector(k->b, acc, w, LLVMConstVector(ix, 64), "");
        }
        half[hb] = acc ? acc : LLVMConstNull(LLVMVectorType(k->i8, 64));
    }
    LLVMValueRef ix[64], mk[64];
    int64_t lane_of[64];
    for (int64_t e = 0; e < 64; e++)
        lane_of[e] = 0;
    for (int a = 0; a < nacc; a++)
        for (unsigned l = 0; l < n; l++) {
            int64_t e = lane_out(d, n, a / d->nvj, a % d->nvj, l, 0, c->OH);
            if (e >= 0)
                lane_of[e] = (int64_t)a * n + l;
        }
    for (unsigned e = 0; e < 64; e++) {
        ix[e] = LLVMConstInt(k->i32, (unsigned long long)lane_of[e], 0);
        mk[e] = LLVMConstInt(LLVMInt1TypeInContext(k->c), (int64_t)e < E, 0);
    }
    LLVMValueRef all = LLVMBuildShuffleVector(k->b, half[0], half[1], LLVMConstVector(ix, 64), "");
    LLVMTypeRef ov[2] = {LLVMTypeOf(all), k->ptr};
    unsigned id = LLVMLookupIntrinsicID("llvm.masked.store", 17);
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(k->mod, id, ov, 2);
    LLVMTypeRef ft = LLVMIntrinsicGetType(k->c, id, ov, 2);
    /* (value, pointer, mask), the alignment an attribute of the pointer; before LLVM 22 an
     * i32 argument before the mask */
    bool align_arg = LLVMCountParamTypes(ft) == 4;
    LLVMValueRef args[4] = {all, ybase, align_arg ? LLVMConstInt(k->i32, 1, 0) : LLVMConstVector(mk, 64),
                            LLVMConstVector(mk, 64)};
    LLVMValueRef call = LLVMBuildCall2(k->b, ft, f, args, align_arg ? 4 : 3, "");
    if (!align_arg)
        LLVMAddCallSiteAttribute(call, 2, LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("align", 5), 1));
}

/* R vector rows (rows form: rpv output rows each, from output row voh; flat form: the whole
 * map from position ow0) x nv vectors of n lanes from column ow0, of the task's channel m:
 * plane is the padded plane, ybase the task's output plane, nrows the output rows from voh
 * that exist (the block computes R * rpv). R x nv independent accumulator chains stay in flight
 * (one row of a 7x7 or 14x14 map is one vector: a single chain would wait on the multiply-add
 * latency at every tap). Stores each lane run, or with d->pstore the whole plane at once. */
static void
dw_rows_block(Dw *d, LLVMValueRef plane, LLVMValueRef voh, int R, LLVMValueRef m,
              LLVMValueRef ybase, int64_t ow0, int nv, unsigned n, int64_t nrows)
{
    Kb *k = d->k;
    const ConvGeo *c = d->c;
    int64_t PW = d->PW;
    bool sx = d->xe == ET_I8, pair = c->sw == 2 && !d->q4;
    LLVMTypeRef vi = LLVMVectorType(k->i32, n), vs = LLVMVectorType(k->i16, 2 * n);
    LLVMValueRef acc[DWR_MAXACC];
    LLVMValueRef b = LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, d->tb.gb, &m, 1, ""), "");
    if (d->magic)
        b = LLVMBuildAdd(k->b, b, LLVMConstInt(k->i32, 0x4B400000, 0), "");
    for (int j = 0; j < R * nv; j++) {
        if (d->bslot) { /* sdot overwrites its accumulator: a 16-byte load (ldr q, a load pipe
                         * only; ld1r takes a vector pipe as well) per accumulator instead of a
                         * vector copy of one register (a vector pipe); volatile, so that LLVM
                         * neither merges nor hoists the loads */
            acc[j] = LLVMBuildLoad2(k->b, LLVMVectorType(k->i32, n), d->bslot, "");
            LLVMSetVolatile(acc[j], 1);
            continue;
        }
        acc[j] = cg_vsplat(k, b, n);
    }
    LLVMValueRef row0 = cg_gep(k, plane, cg_mul(k, cg_mul(k, voh, cg_i64(k, c->sh)), cg_i64(k, PW)));
    int64_t S = dw_rows_steps(c, d->q4, NULL, NULL);
    int64_t tap[DW_MAXT];
    int nt[DW_MAXT];
    dw_rows_steps(c, d->q4, tap, nt);
    LLVMValueRef wbase = cg_mul(k, m, cg_i64(k, S));
    for (int64_t st = 0; st < S; st++) {
        int64_t kh = tap[st] / c->KW, kw = tap[st] % c->KW;
        LLVMValueRef wi = cg_add(k, wbase, cg_i64(k, st));
        LLVMValueRef wv = cg_vsplat(k, LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, d->gwr, &wi, 1, ""), ""), n);
        if (pair)
            wv = LLVMBuildBitCast(k->b, wv, vs, "");
        else if (d->q4)
            wv = LLVMBuildBitCast(k->b, wv, LLVMVectorType(k->i8, 4 * n), "");
        for (int r = 0; r < R; r++)
            for (int j = 0; j < nv; j++) {
                int64_t rowoff = ((int64_t)r * d->rpv * c->sh + kh * c->dh) * PW;
                LLVMValueRef *a = &acc[r * nv + j];
                int64_t col = d->ilv ? (int64_t)(j / d->ilv) * d->ilv * n + j % d->ilv : (int64_t)j * n;
                int64_t off = rowoff + c->sw * (ow0 + col) + kw * c->dw;
                LLVMValueRef p = cg_gep(k, row0, cg_i64(k, off));
                if (d->q4) {
                    *a = q4_step(d, *a, p, wv, nt[st], n);
                } else if (!pair) {
                    LLVMValueRef xv = vload(k, k->i8, n, p);
                    xv = sx ? LLVMBuildSExt(k->b, xv, vi, "") : LLVMBuildZExt(k->b, xv, vi, "");
                    *a = mac(d, *a, xv, wv, n);
                } else {
                    LLVMValueRef xv = vload(k, k->i8, 2 * n, p);
                    xv = sx ? LLVMBuildSExt(k->b, xv, vs, "") : LLVMBuildZExt(k->b, xv, vs, "");
                    *a = mac_pair(d, *a, xv, wv, n);
                }
            }
    }
    int64_t es = (int64_t)elem_size(d->ye);
    if (d->pstore) {
        LLVMValueRef out[DWR_MAXACC];
        for (int a = 0; a < R * nv; a++)
            out[a] = epilogue_vec(d, acc[a], m, n);
        plane_store(d, out, R * nv, n, ybase);
        return;
    }
    LLVMValueRef yrow = cg_gep(k, ybase, cg_mul(k, voh, cg_i64(k, c->OW * es)));
    for (int r = 0; d->ilv && r < R; r++)
        for (int g = 0; g < nv / d->ilv; g++) { /* a group's vectors into column order */
            int G = d->ilv;
            LLVMValueRef all = ilv_group(d, &acc[r * nv + g * G], m);
            int64_t c0 = ow0 + (int64_t)g * G * n, cnt = c->OW - c0 < G * (int64_t)n ? c->OW - c0 : G * (int64_t)n;
            if (cnt > 0 && r < nrows)
                cg_dw_store_lanes(k, all, (unsigned)G * n, 0, cnt, cg_gep(k, yrow, cg_i64(k, (r * c->OW + c0) * es)), es);
        }
    for (int r = 0; !d->ilv && r < R; r++)
        for (int j = 0; j < nv; j++) {
            LLVMValueRef out = epilogue_vec(d, acc[r * nv + j], m, n);
            for (unsigned l = 0; l < n;) { /* runs of lanes with consecutive outputs */
                int64_t e0 = lane_out(d, n, r, j, l, ow0, nrows);
                unsigned l1 = l + 1;
                while (e0 >= 0 && l1 < n && lane_out(d, n, r, j, l1, ow0, nrows) == e0 + (l1 - l))
                    l1++;
                if (e0 >= 0)
                    cg_dw_store_lanes(k, out, n, l, l1 - l, cg_gep(k, yrow, cg_i64(k, e0 * es)), es);
                l = l1;
            }
        }
}

/* The input plane of task v (n, output channel) into the interior of plane v & 1 of planes;
 * flip: each byte ^ 0x80 (int8 activations as the unsigned bytes of the quad form). */
static void
dw_rows_copy(Kb *k, const ConvGeo *c, LLVMValueRef x, LLVMValueRef v, LLVMValueRef planes,
             int64_t plane_bytes, int64_t PW, bool flip)
{
    LLVMValueRef vn = LLVMBuildSDiv(k->b, v, cg_i64(k, c->M), "");
    LLVMValueRef ci = LLVMBuildSDiv(k->b, LLVMBuildSRem(k->b, v, cg_i64(k, c->M), ""), cg_i64(k, c->Mg), "");
    LLVMValueRef src = cg_gep(k, x, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->C)), ci), cg_i64(k, c->H * c->W)));
    LLVMValueRef plane = cg_gep(k, planes, cg_mul(k, LLVMBuildAnd(k->b, v, cg_i64(k, 1), ""), cg_i64(k, plane_bytes)));
    CgLoop lh;
    LLVMValueRef vh = cg_loop_begin(k, &lh, cg_i64(k, c->H));
    LLVMValueRef dst = cg_gep(k, plane, cg_add(k, cg_mul(k, cg_add(k, vh, cg_i64(k, c->ph)), cg_i64(k, PW)), cg_i64(k, c->pw)));
    LLVMValueRef from = cg_gep(k, src, cg_mul(k, vh, cg_i64(k, c->W)));
    if (!flip) {
        LLVMBuildMemCpy(k->b, dst, 1, from, 1, cg_i64(k, c->W));
    } else { /* vector pieces of 64, 32, ..., 1 bytes (LLVM does not vectorise the byte loop:
              * the plane might alias the input) */
        for (int64_t i = 0, piece = 64; i < c->W; piece /= 2)
            for (; c->W - i >= piece; i += piece) {
                LLVMValueRef b = vload(k, k->i8, (unsigned)piece, cg_gep(k, from, cg_i64(k, i)));
                b = LLVMBuildXor(k->b, b, cg_vsplat(k, LLVMConstInt(k->i8, 0x80, 0), (unsigned)piece), "");
                irb_store(&k->ir, b, cg_gep(k, dst, cg_i64(k, i)), 1);
            }
    }
    cg_loop_end(k, &lh);
}

static void
dw_rows(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e, const int8_t *w,
        const int32_t *zw, const int32_t *bias)
{
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    Dw d;
    dw_init(&d, k, n, c, e);
    d.splat = true;
    int32_t zx = xt->q->zp[0];
    d.fast = cg_dw_fast_ok(k, e, d.ye, c->M, d.T, w, zw, bias);
    DwPad pd = dw_pad(c);
    int64_t PW = pd.PW;
    d.PW = PW;
    d.rpv = 1;
    /* lanes per vector: the ISA's; stride 1 on small maps (7x7): the whole map as one flat row
     * of positions oh * PW + ow, full vectors across rows, when that takes fewer vectors than
     * row by row; quad form on rows of at most half a vector (7 columns): two output rows per
     * vector when one load still holds both; else halved while a row fills at most half a
     * vector, down to 8 (x86: the 128-bit forms have no dot-product intrinsic here) */
    unsigned vl = cg_isa_i32_lanes(k->t, k->isa);
    int64_t Q = (c->OH - 1) * PW + c->OW, nq = (Q + vl - 1) / vl;
    d.flat = c->sw == 1 && c->sh == 1 && nq <= 2 * DWR_MAXACC && c->OW <= (int64_t)vl / 2 && nq < c->OH;
    if (!d.flat && c->OW <= (int64_t)vl / 2 && c->OH > 1) {
        d.rpv = 2;
        if (!dw_q4_ok(k, &d, vl, w, zw))
            d.rpv = 1;
    }
    while (!d.flat && d.rpv == 1 && vl > 8 && c->OW <= (int64_t)vl / 2)
        vl /= 2;
    d.vl = vl;
    d.q4 = dw_q4_ok(k, &d, vl, w, zw);
    /* quad form with vpdpbusd and int8 activations: the plane holds x ^ 0x80 = x + 128
     * (unsigned), the border zx + 128, and the folded bias subtracts (zx + 128) * sum w'; with
     * sdot (AArch64) and uint8 activations: x ^ 0x80 = x - 128 (signed), zx - 128 */
    bool sdot = d.q4 && cg_isa_sdot8(k->t, k->isa, vl);
    bool flip = d.q4 && d.xe == (sdot ? ET_U8 : ET_I8);
    int32_t zxu = !flip ? zx : sdot ? zx - 128 : zx + 128;
    /* sdot, dilation 1, rows of at least two groups: interleaved columns (Dw.ilv); the f32
     * bit-pattern epilogue where its bounds hold (Dw.magic) */
    int64_t gcols = 4 * (4 / c->sw); /* columns per group; at most 1/8 of them past OW */
    if (sdot && c->dw == 1 && elem_size(d.ye) == 1 && d.rpv == 1 && !d.flat && vl == 4 && (c->OW + gcols - 1) / gcols * gcols * 7 <= c->OW * 8)
        d.ilv = (int)(4 / c->sw);
    d.magic = sdot && d.fast && dw_magic_ok(e, c->M, d.T, w, zw, bias, 2097152.0);
    d.n16 = d.ilv && d.magic && dw_magic_ok(e, c->M, d.T, w, zw, bias, 32767.0);
    dw_tables(k, c->M, d.T, e, w, zw, bias, zxu, &d.tb);
    d.gwr = dw_rows_weights(k, c, d.q4, w, zw, mac_intrinsic(&d, vl) != NULL);
    int64_t plane_bytes = pd.PH * PW + 4 * (int64_t)vl + 64 + (d.rpv - 1) * c->sh * PW + (d.ilv ? 64 : 0);
    /* vectors per vector row, vector rows per block */
    int rpv = d.rpv, cols = (int)vl / rpv;
    int64_t nvec = d.flat ? 0 : (c->OW + cols - 1) / cols, VR = (c->OH + rpv - 1) / rpv;
    if (d.ilv) /* whole groups (a group's columns are spread over all its vectors) */
        nvec = (c->OW + d.ilv * cols - 1) / (d.ilv * cols) * d.ilv;
    int nv = (int)(nvec < DWR_MAXV ? nvec : DWR_MAXV);
    int64_t R = nv ? (DWR_MAXACC / nv < VR ? DWR_MAXACC / nv : VR) : 0;
    d.nvj = d.flat ? (int)nq : nv;
    d.pstore = elem_size(d.ye) == 1 && vl == 16 && c->OH * c->OW <= 64 && cg_target_has_feature(k->t, "avx512vbmi") &&
               (d.flat ? nq <= DWR_MAXACC : nvec == nv && R * rpv >= c->OH);
    LLVMValueRef gq = dw_clamp_table(k, e);
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef v = cg_par_begin(k, &par, c->N * c->M, io, 2);
    row_fn_attrs(&d, par.fn);
    dw_clamp_load(&d, gq);
    /* two padded planes: task v computes from plane v & 1 while the copy of task v + 1's input
     * goes to the other, so the vector loads of a plane do not wait on its just-stored bytes
     * (store-to-load forwarding fails on loads that span several smaller stores); the first
     * task of a range fills both planes' borders and copies its own input */
    LLVMValueRef planes = cg_entry_alloca(k, LLVMArrayType2(k->i8, (uint64_t)(2 * plane_bytes)));
    LLVMSetAlignment(planes, 64);
    LLVMValueRef vbegin = LLVMGetParam(par.fn, 1), vend = LLVMGetParam(par.fn, 2);
    CgIf f0, f1;
    cg_if_begin(k, &f0, LLVMBuildICmp(k->b, LLVMIntEQ, v, vbegin, ""));
    LLVMBuildMemSet(k->b, planes, LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zxu, 0), cg_i64(k, 2 * plane_bytes), 64);
    dw_rows_copy(k, c, io[0], v, planes, plane_bytes, PW, flip);
    cg_if_else(k, &f0);
    cg_if_end(k, &f0);
    LLVMValueRef v1 = cg_add(k, v, cg_i64(k, 1));
    cg_if_begin(k, &f1, LLVMBuildICmp(k->b, LLVMIntSLT, v1, vend, ""));
    dw_rows_copy(k, c, io[0], v1, planes, plane_bytes, PW, flip);
    cg_if_else(k, &f1);
    cg_if_end(k, &f1);
    LLVMValueRef m = LLVMBuildSRem(k->b, v, cg_i64(k, c->M), "");
    LLVMValueRef plane = cg_gep(k, planes, cg_mul(k, LLVMBuildAnd(k->b, v, cg_i64(k, 1), ""), cg_i64(k, plane_bytes)));
    int64_t es = (int64_t)elem_size(d.ye);
    LLVMValueRef ybase = cg_gep(k, io[1], cg_mul(k, v, cg_i64(k, c->OH * c->OW * es)));
    /* (not on the cortex-a76 build: llvm-mca's Neoverse N1 model, 2 vector pipes and 3-wide
     * dispatch, takes ldr q as 2 uops and gets slower; i8mm tells the two apart as in
     * dw_ncol_weights) */
    if (d.ilv && k->t->i8mm) {
        LLVMValueRef b = LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, d.tb.gb, &m, 1, ""), "");
        if (d.magic)
            b = LLVMBuildAdd(k->b, b, LLVMConstInt(k->i32, 0x4B400000, 0), "");
        d.bslot = cg_entry_alloca(k, LLVMVectorType(k->i32, vl));
        irb_store(&k->ir, cg_vsplat(k, b, vl), d.bslot, 16);
    }
    for (int64_t j = 0; d.flat && j < nq; j += DWR_MAXACC) {
        int nb = (int)(nq - j < DWR_MAXACC ? nq - j : DWR_MAXACC);
        dw_rows_block(&d, plane, cg_i64(k, 0), 1, m, ybase, j * vl, nb, vl, c->OH);
    }
    for (int64_t j = 0; j < nvec; j += DWR_MAXV) {
        int nb = (int)(nvec - j < DWR_MAXV ? nvec - j : DWR_MAXV);
        int64_t Rb = DWR_MAXACC / nb < VR ? DWR_MAXACC / nb : VR, rows = Rb * rpv;
        /* blocks of Rb vector rows whose rows all exist, then the rest as one block */
        int64_t nfull = c->OH / rows;
        if (nfull == 1 && c->OH == rows) {
            dw_rows_block(&d, plane, cg_i64(k, 0), (int)Rb, m, ybase, j * cols, nb, vl, rows);
        } else if (nfull > 0) {
            DwLoop l;
            LLVMValueRef voh = loop_from(k, &l, cg_i64(k, 0), cg_i64(k, nfull * rows), rows);
            dw_rows_block(&d, plane, voh, (int)Rb, m, ybase, j * cols, nb, vl, rows);
            loop_to(k, &l);
        }
        int64_t rest = c->OH - nfull * rows;
        if (rest > 0)
            dw_rows_block(&d, plane, cg_i64(k, nfull * rows), (int)((rest + rpv - 1) / rpv), m, ybase, j * cols, nb,
                          vl, rest);
    }
    cg_par_end(k, &par, a);
}

/* ---- depthwise, NCHW, small planes from registers (dw_small) ----
 * For maps of a few hundred bytes (7x7, 14x14 inputs) on AVX-512 with VBMI: no padded copy.
 * One task per (n, output channel); its outputs, in their own order e = oh * OW + ow, are
 * vectors of 16 lanes. Each vector's input taps lie in a window of at most 128 bytes of the
 * input plane (dws_window), loaded as two zmm (masked past the plane's end); each quad step
 * is one two-source byte permute of that window (vpermt2b) into lane e's 4 taps, taps outside
 * the input taking the zero point (a third source: a masked merge, or the second source when
 * the whole plane fits one zmm), then one vpdpbusd. The tables, epilogue and int8 handling
 * (x ^ 0x80) are dw_rows' quad form. */
enum { DWS_MAXPLANE = 256 };

/* Input (ih, iw) of lane e's tap (kh, kw), or -1 outside the input. */
static int64_t
dws_tap(const ConvGeo *c, int64_t e, int64_t kh, int64_t kw)
{
    int64_t oh = e / c->OW, ow = e % c->OW;
    int64_t ih = oh * c->sh - c->ph + kh * c->dh, iw = ow * c->sw - c->pw + kw * c->dw;
    return ih >= 0 && ih < c->H && iw >= 0 && iw < c->W ? ih * c->W + iw : -1;
}

/* The window of output vector j (lanes e = 16 j + l, e < OH * OW): the first byte *base of the
 * 128 (or, for a plane of at most 64 bytes, 64) bytes that hold every tap of its lanes; false
 * when they span more. */
static bool
dws_window(const ConvGeo *c, int64_t j, int64_t *base)
{
    int64_t HW = c->H * c->W, E = c->OH * c->OW, lo = HW, hi = -1;
    for (int64_t e = 16 * j; e < 16 * j + 16 && e < E; e++)
        for (int64_t kh = 0; kh < c->KH; kh++)
            for (int64_t kw = 0; kw < c->KW; kw++) {
                int64_t t = dws_tap(c, e, kh, kw);
                if (t >= 0) {
                    lo = t < lo ? t : lo;
                    hi = t > hi ? t : hi;
                }
            }
    *base = 0;
    if (hi < 0 || HW <= 64)
        return true;
    if (hi - lo >= 128)
        return false;
    *base = lo + 128 > HW ? (HW > 128 ? HW - 128 : 0) : lo;
    return true;
}

static bool
dw_small_ok(Kb *k, const ConvGeo *c, ElemType xe, const int8_t *w, const int32_t *zw)
{
    if ((xe != ET_U8 && xe != ET_I8) || !cg_isa_dot8(k->t, k->isa, 16) || !cg_target_has_feature(k->t, "avx512vbmi") ||
        c->H * c->W > DWS_MAXPLANE || c->KH * c->KW > DW_MAXT)
        return false;
    int64_t T = c->KH * c->KW, base;
    for (int64_t m = 0; m < c->M; m++)
        for (int64_t t = 0; t < T; t++)
            if (w[m * T + t] - zw[m] < -128 || w[m * T + t] - zw[m] > 127)
                return false;
    /* estimated vector operations of both kernels for one channel: here one permute (two when
     * pad bytes need the merge) and one vpdpbusd per quad step and vector, one store per
     * vector; dw_rows (16 lanes) a load-permute and a vpdpbusd per quad step and vector, two
     * per padded row copied and two per piece of a partial row stored */
    int64_t S = dw_rows_steps(c, true, NULL, NULL), tap[DW_MAXT], cost = 0;
    int nt[DW_MAXT];
    dw_rows_steps(c, true, tap, nt);
    for (int64_t j = 0; j * 16 < c->OH * c->OW; j++) {
        if (!dws_window(c, j, &base))
            return false;
        bool two = c->H * c->W - base > 64;
        for (int64_t st = 0; st < S; st++) {
            bool pad = false;
            for (int64_t l = 16 * j; l < 16 * j + 16 && l < c->OH * c->OW; l++)
                for (int i = 0; i < nt[st]; i++)
                    pad |= dws_tap(c, l, tap[st] / c->KW, tap[st] % c->KW + i) < 0;
            cost += 2 + (pad && two);
        }
        cost++;
    }
    if (c->H * c->W <= 64)
        return true;
    int64_t cols = c->OW <= 8 ? 8 : 16, rows = c->OW <= 8 ? (c->OH + 1) / 2 : c->OH;
    int64_t nvec = (c->OW + cols - 1) / cols, part = c->OW % cols, pieces = 0;
    for (int64_t b = part; b; b &= b - 1)
        pieces++;
    int64_t rcost = rows * nvec * S * 2 + 2 * c->H + c->OH * (nvec - (part != 0) + 2 * pieces);
    return cost <= rcost;
}

/* n bytes at p as a <64 x i8> (zero past n: a masked load when n < 64). */
static LLVMValueRef
dws_load(Kb *k, LLVMValueRef p, int64_t n)
{
    LLVMTypeRef vt = LLVMVectorType(k->i8, 64);
    if (n >= 64)
        return vload(k, k->i8, 64, p);
    if (n <= 0)
        return LLVMConstNull(vt);
    LLVMValueRef mk[64];
    for (int i = 0; i < 64; i++)
        mk[i] = LLVMConstInt(LLVMInt1TypeInContext(k->c), i < n, 0);
    LLVMTypeRef ov[2] = {vt, k->ptr};
    unsigned id = LLVMLookupIntrinsicID("llvm.masked.load", 16);
    LLVMTypeRef ft = LLVMIntrinsicGetType(k->c, id, ov, 2);
    bool align_arg = LLVMCountParamTypes(ft) == 4;
    LLVMValueRef args[4] = {p, align_arg ? LLVMConstInt(k->i32, 1, 0) : LLVMConstVector(mk, 64),
                            align_arg ? LLVMConstVector(mk, 64) : LLVMConstNull(vt), LLVMConstNull(vt)};
    LLVMValueRef call = LLVMBuildCall2(k->b, ft, LLVMGetIntrinsicDeclaration(k->mod, id, ov, 2), args, align_arg ? 4 : 3, "");
    if (!align_arg)
        LLVMAddCallSiteAttribute(call, 1, LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("align", 5), 1));
    return call;
}

/* Quad step (kh, kw0, nt taps) of output vector j from its window (w0, w1 at base; w1 NULL
 * when the plane fits w0) and the zero-point vector zv: lane e's 4 bytes. */
static LLVMValueRef
dws_quad(Kb *k, const ConvGeo *c, int64_t j, int64_t base, LLVMValueRef w0, LLVMValueRef w1, LLVMValueRef zv,
         int64_t kh, int64_t kw0, int nt)
{
    LLVMValueRef ix[64], pm[64];
    bool anypad = false;
    for (int64_t l = 0; l < 16; l++)
        for (int i = 0; i < 4; i++) {
            int64_t e = 16 * j + l, t = i < nt && e < c->OH * c->OW ? dws_tap(c, e, kh, kw0 + i) : -1;
            bool pad = t < 0;
            anypad |= pad;
            ix[4 * l + i] = LLVMConstInt(k->i32, (unsigned long long)(pad ? (w1 ? 0 : 64) : t - base), 0);
            pm[4 * l + i] = LLVMConstInt(LLVMInt1TypeInContext(k->c), pad, 0);
        }
    LLVMValueRef q = LLVMBuildShuffleVector(k->b, w0, w1 ? w1 : zv, LLVMConstVector(ix, 64), "");
    if (w1 && anypad)
        q = LLVMBuildSelect(k->b, LLVMConstVector(pm, 64), zv, q, "");
    return q;
}

static void
dw_small(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e, const int8_t *w,
         const int32_t *zw, const int32_t *bias)
{
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    Dw d;
    dw_init(&d, k, n, c, e);
    d.splat = true;
    d.q4 = true;
    d.vl = 16;
    d.fast = cg_dw_fast_ok(k, e, d.ye, c->M, d.T, w, zw, bias);
    bool flip = d.xe == ET_I8;
    int32_t zxu = flip ? xt->q->zp[0] + 128 : xt->q->zp[0];
    dw_tables(k, c->M, d.T, e, w, zw, bias, zxu, &d.tb);
    d.gwr = dw_rows_weights(k, c, true, w, zw, false);
    int64_t S = dw_rows_steps(c, true, NULL, NULL), tap[DW_MAXT];
    int nt[DW_MAXT];
    dw_rows_steps(c, true, tap, nt);
    int64_t HW = c->H * c->W, E = c->OH * c->OW, NV = (E + 15) / 16, es = (int64_t)elem_size(d.ye);
    LLVMValueRef gq = dw_clamp_table(k, e);
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef v = cg_par_begin(k, &par, c->N * c->M, io, 2);
    row_fn_attrs(&d, par.fn);
    dw_clamp_load(&d, gq);
    LLVMValueRef m = LLVMBuildSRem(k->b, v, cg_i64(k, c->M), "");
    LLVMValueRef vn = LLVMBuildSDiv(k->b, v, cg_i64(k, c->M), "");
    LLVMValueRef ci = LLVMBuildSDiv(k->b, m, cg_i64(k, c->Mg), "");
    LLVMValueRef xp = cg_gep(k, io[0], cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->C)), ci), cg_i64(k, HW)));
    LLVMValueRef ybase = cg_gep(k, io[1], cg_mul(k, v, cg_i64(k, E * es)));
    LLVMValueRef f80 = cg_vsplat(k, LLVMConstInt(k->i8, 0x80, 0), 64);
    LLVMValueRef zv = cg_vsplat(k, LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zxu, 0), 64);
    LLVMValueRef b = LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, d.tb.gb, &m, 1, ""), "");
    LLVMValueRef wbase = cg_mul(k, m, cg_i64(k, S));
    for (int64_t j0 = 0; j0 < NV; j0 += DWR_MAXACC) {
        int nb = (int)(NV - j0 < DWR_MAXACC ? NV - j0 : DWR_MAXACC);
        LLVMValueRef acc[DWR_MAXACC], w0[DWR_MAXACC], w1[DWR_MAXACC];
        int64_t base[DWR_MAXACC];
        for (int jj = 0; jj < nb; jj++) {
            dws_window(c, j0 + jj, &base[jj]);
            w0[jj] = dws_load(k, cg_gep(k, xp, cg_i64(k, base[jj])), HW - base[jj]);
            w1[jj] = HW - base[jj] > 64 ? dws_load(k, cg_gep(k, xp, cg_i64(k, base[jj] + 64)), HW - base[jj] - 64) : NULL;
            if (flip) {
                w0[jj] = LLVMBuildXor(k->b, w0[jj], f80, "");
                w1[jj] = w1[jj] ? LLVMBuildXor(k->b, w1[jj], f80, "") : NULL;
            }
            acc[jj] = cg_vsplat(k, b, 16);
        }
        for (int64_t st = 0; st < S; st++) {
            LLVMValueRef wi = cg_add(k, wbase, cg_i64(k, st));
            LLVMValueRef wv = cg_vsplat(k, LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, d.gwr, &wi, 1, ""), ""), 16);
            wv = LLVMBuildBitCast(k->b, wv, LLVMVectorType(k->i8, 64), "");
            for (int jj = 0; jj < nb; jj++) {
                LLVMValueRef q = dws_quad(k, c, j0 + jj, base[jj], w0[jj], w1[jj], zv, tap[st] / c->KW, tap[st] % c->KW, nt[st]);
                acc[jj] = q4_dot(&d, acc[jj], q, wv, 16);
            }
        }
        for (int jj = 0; jj < nb; jj++) {
            int64_t e0 = 16 * (j0 + jj), cnt = E - e0 < 16 ? E - e0 : 16;
            cg_dw_store_lanes(k, epilogue_vec(&d, acc[jj], m, 16), 16, 0, cnt, cg_gep(k, ybase, cg_i64(k, e0 * es)), es);
        }
    }
    cg_par_end(k, &par, a);
}

bool
cg_emit_dw_conv(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e,
                const int8_t *w, const int32_t *zw, const int32_t *bias)
{
    if (dw_small_ok(k, c, ir_value(k->g, n->in[0])->type.elem, w, zw)) {
        dw_small(k, n, a, c, e, w, zw, bias);
        return true;
    }
    if (dw_rows_ok(c, ir_value(k->g, n->in[0])->type.elem)) {
        dw_rows(k, n, a, c, e, w, zw, bias);
        return true;
    }
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    ElemType xe = xt->elem, ye = ir_value(k->g, n->out[0])->type.elem;
    int32_t zx = xt->q->zp[0];
    DwPad d = dw_pad(c);
    DwTables tb;
    dw_tables(k, c->M, c->K, e, w, zw, bias, zx, &tb);
    LLVMValueRef P = a->scratch;
    LLVMTypeRef acc_t = LLVMArrayType2(k->i32, (uint64_t)c->OW);
    LLVMValueRef acc = cg_entry_alloca(k, acc_t);
    LLVMSetAlignment(acc, 64);
    /* the border of the plane holds the zero point; row copies never touch it */
    LLVMBuildMemSet(k->b, P, LLVMConstInt(k->i8, (unsigned long long)(uint8_t)zx, 0),
                    cg_i64(k, d.PH * d.PW), 64);
    CgLoop ln, lm, lh, loh, lkh, lkw, lx, ly, lz;
    LLVMValueRef vn = cg_loop_begin(k, &ln, cg_i64(k, c->N));
    LLVMValueRef vm = cg_loop_begin(k, &lm, cg_i64(k, c->M));
    LLVMValueRef ci = LLVMBuildSDiv(k->b, vm, cg_i64(k, c->Mg), "");
    LLVMValueRef plane = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->C)), ci), cg_i64(k, c->H * c->W));
    LLVMValueRef vh = cg_loop_begin(k, &lh, cg_i64(k, c->H));
    LLVMBuildMemCpy(k->b, cg_gep(k, P, cg_add(k, cg_mul(k, cg_add(k, vh, cg_i64(k, c->ph)), cg_i64(k, d.PW)), cg_i64(k, c->pw))), 1,
                    cg_gep(k, a->in[0], cg_add(k, plane, cg_mul(k, vh, cg_i64(k, c->W)))), 1, cg_i64(k, c->W));
    cg_loop_end(k, &lh);
    LLVMValueRef bias_m = LLVMBuildLoad2(k->b, k->i32, LLVMBuildGEP2(k->b, k->i32, tb.gb, &vm, 1, ""), "");
    LLVMValueRef mult_m = tb.gm ? cg_load_raw(k, ET_F32, tb.gm, vm) : NULL;
    LLVMValueRef fm_m = tb.gfm ? cg_load_i64(k, ET_I64, tb.gfm, vm) : NULL;
    LLVMValueRef fs_m = tb.gfs ? cg_load_i64(k, ET_I64, tb.gfs, vm) : NULL;
    CgRq rq = {.mode = k->rq, .mult = mult_m, .fmult = fm_m, .fshift = fs_m, .zp = e->zo,
               .lo = e->lo, .hi = e->hi, .sx = 0, .sy = 0, .by_count = false};
    LLVMValueRef ybase = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c->M)), vm), cg_i64(k, c->OH * c->OW));
    LLVMValueRef voh = cg_loop_begin(k, &loh, cg_i64(k, c->OH));
    {
        LLVMValueRef vx = cg_loop_begin(k, &lx, cg_i64(k, c->OW));
        LLVMValueRef ap = LLVMBuildGEP2(k->b, k->i32, acc, &vx, 1, "");
        LLVMBuildStore(k->b, bias_m, ap);
        cg_loop_end(k, &lx);
    }
    LLVMValueRef vkh = cg_loop_begin(k, &lkh, cg_i64(k, c->KH));
    LLVMValueRef prow = cg_mul(k, cg_add(k, cg_mul(k, voh, cg_i64(k, c->sh)), cg_mul(k, vkh, cg_i64(k, c->dh))),
                               cg_i64(k, d.PW));
    LLVMValueRef vkw = cg_loop_begin(k, &lkw, cg_i64(k, c->KW));
    LLVMValueRef widx = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vkh, cg_i64(k, c->KW)), vkw), cg_i64(k, c->M)), vm);
    LLVMValueRef wv = LLVMBuildLoad2(k->b, k->i16, LLVMBuildGEP2(k->b, k->i16, tb.gw, &widx, 1, ""), "");
    wv = LLVMBuildSExt(k->b, wv, k->i32, "");
    LLVMValueRef pbase = cg_gep(k, P, cg_add(k, prow, cg_mul(k, vkw, cg_i64(k, c->dw))));
    {
        LLVMValueRef vy = cg_loop_begin(k, &ly, cg_i64(k, c->OW));
        LLVMValueRef xv = cg_load_raw(k, ET_U8, pbase, cg_mul(k, vy, cg_i64(k, c->sw)));
        xv = xe == ET_I8 ? LLVMBuildSExt(k->b, xv, k->i32, "") : LLVMBuildZExt(k->b, xv, k->i32, "");
        LLVMValueRef ap = LLVMBuildGEP2(k->b, k->i32, acc, &vy, 1, "");
        LLVMValueRef s = LLVMBuildAdd(k->b, LLVMBuildLoad2(k->b, k->i32, ap, ""),
                                      LLVMBuildMul(k->b, xv, wv, ""), "");
        LLVMBuildStore(k->b, s, ap);
        cg_loop_end(k, &ly);
    }
    cg_loop_end(k, &lkw);
    cg_loop_end(k, &lkh);
    {
        LLVMValueRef vz = cg_loop_begin(k, &lz, cg_i64(k, c->OW));
        LLVMValueRef ap = LLVMBuildGEP2(k->b, k->i32, acc, &vz, 1, "");
        LLVMValueRef a32 = LLVMBuildLoad2(k->b, k->i32, ap, "");
        LLVMValueRef av = LLVMBuildSExt(k->b, a32, k->i64, "");
        LLVMValueRef yi = cg_add(k, ybase, cg_add(k, cg_mul(k, voh, cg_i64(k, c->OW)), vz));
        switch (e->kind) {
        case CG_GEMM_EPI_I32:
            cg_store_i64(k, ET_I32, a->out[0], yi, av);
            break;
        case CG_GEMM_EPI_DEQUANT: {
            LLVMValueRef f = LLVMBuildSIToFP(k->b, a32, k->f32, "");
            cg_store_raw(k, ET_F32, a->out[0], yi, LLVMBuildFMul(k->b, f, mult_m, ""));
            break;
        }
        case CG_GEMM_EPI_REQUANT_FLOAT:
        case CG_GEMM_EPI_REQUANT_FIXED:
            rq.mode->store(k, &rq, ye, a->out[0], yi, a32, av);
            break;
        }
        cg_loop_end_novec(k, &lz); /* a folded tail's masked store wrote past the row */
    }
    cg_loop_end(k, &loh);
    cg_loop_end(k, &lm);
    cg_loop_end(k, &ln);
    return true;
}

/* ---- the epilogue for qconv_first.c (qconv.h) ---- */

void
cg_dw_epi_init(Kb *k, const Epi *e, ElemType ye, int64_t M, bool fast, CgDwEpi *t)
{
    memset(t, 0, sizeof *t);
    t->e = e;
    t->ye = ye;
    t->fast = fast;
    dw_epi_tables(k, e, M, &t->gm, &t->gfm, &t->gfr, &t->gfs);
    t->gq = dw_clamp_table(k, e);
}

/* A Dw holding t's tables, as the depthwise kernels' epilogue reads them. */
static void
dw_of_epi(Kb *k, const CgDwEpi *t, Dw *d)
{
    memset(d, 0, sizeof *d);
    d->k = k;
    d->e = t->e;
    d->ye = t->ye;
    d->fast = t->fast;
    d->splat = true;
    d->tb.gm = t->gm;
    d->tb.gfm = t->gfm;
    d->tb.gfr = t->gfr;
    d->tb.gfs = t->gfs;
    d->qa = t->q[0];
    d->qb = t->q[1];
    d->qc = t->q[2];
    d->qd = t->q[3];
    d->qe = t->q[4];
}

void
cg_dw_epi_load(Kb *k, CgDwEpi *t)
{
    Dw d;
    dw_of_epi(k, t, &d);
    dw_clamp_load(&d, t->gq);
    t->q[0] = d.qa;
    t->q[1] = d.qb;
    t->q[2] = d.qc;
    t->q[3] = d.qd;
    t->q[4] = d.qe;
}

LLVMValueRef
cg_dw_epi_apply(Kb *k, const CgDwEpi *t, LLVMValueRef acc, LLVMValueRef m, unsigned n)
{
    Dw d;
    dw_of_epi(k, t, &d);
    return epilogue_vec(&d, acc, m, n);
}

LLVMValueRef
cg_dw_epi_fast_i32(Kb *k, const CgDwEpi *t, LLVMValueRef acc, LLVMValueRef m, unsigned n)
{
    Dw d;
    dw_of_epi(k, t, &d);
    d.unclamped = true;
    return epilogue_vec(&d, acc, m, n);
}
