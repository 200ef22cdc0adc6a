/* emit.c: LLVM IR emission for the int8 GEMM kernels (plan and packing: plan.c,
 * layouts: gemm_impl.h).
 *
 * Emitted structure of `void f(const void *A, void *C, int64_t m_begin, int64_t m_end)`:
 *
 *   for m0 in [m_begin, m_end) step mc:              cache block of rows
 *     R[i] = sum_k A[m0+i, k]                        only if some zb != 0
 *     pack A rows [m0, m0+mc) into the stack buffer  (xor 0x80 / widen / pair-interleave)
 *     for each panel of nr channels (+ the tail panel with fewer vectors, masked store):
 *       for row tiles of mr rows, then mr/2, ..., 1 for the rest:
 *         acc[r][v] = 0; for each k group: acc = dot(acc, bcast(A[r, group]), Bpanel[group, v])
 *         epilogue(acc - zb*R + cb) -> C
 *
 * Every trip count except the row range is a compile-time constant, so LLVM sees constant-bound
 * K loops over constant-address panels. Accumulators live in allocas that SROA turns into
 * registers; the microkernel body is explicit intrinsic calls (no reliance on the vectorizer),
 * except the generic/NEON path, which is plain vector IR with i16 products widened to i32
 * (exact: |a*b| <= 255*128 fits int16).
 */
#include "codegen/gemm/gemm_ir.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/target/module.h"

/* ---- microkernel steps ---- */

/* Row (or row-pair) pointers of a tile into packed A (or A itself). Rows past the block's end
 * (a partial tile) are clamped to its last row: computed, never stored, never read out of A. */
static void
tile_rows(Gen *g, int rows, LLVMValueRef mloc, LLVMValueRef *rowp)
{
    const GemmPlan *p = g->p;
    LLVMValueRef last = LLVMBuildSub(g->b, g->mcn, ci64(g, 1), "");
    if (p->apack == APACK_PAIRS) {
        LLVMValueRef q0 = LLVMBuildLShr(g->b, mloc, ci64(g, 1), "");
        LLVMValueRef qlast = LLVMBuildLShr(g->b, last, ci64(g, 1), "");
        for (int q = 0; q < (rows + 1) / 2; q++) {
            LLVMValueRef qi = q ? intr2(g, "llvm.smin", add(g, q0, ci64(g, q)), qlast) : q0;
            rowp[q] = gep8(g, g->apack, mul(g, qi, p->a_row_bytes));
        }
        return;
    }
    for (int i = 0; i < rows; i++) {
        LLVMValueRef li = i ? intr2(g, "llvm.smin", add(g, mloc, ci64(g, i)), last) : mloc;
        if (p->apack == APACK_NONE)
            rowp[i] = gep8(g, g->arg_a, mul(g, add(g, g->m0, li), g->s->lda * p->a_es));
        else
            rowp[i] = gep8(g, g->apack, mul(g, li, p->a_row_bytes));
    }
}

static int
tile_nacc(const GemmPlan *p, int rows, int nv)
{
    return p->apack == APACK_PAIRS ? (rows + 1) / 2 * 2 * nv : rows * nv;
}



/* Row vectors (vl lanes of consecutive channels) of the finished tile. */
static void
tile_rowvecs(Gen *g, int rows, int nv, LLVMValueRef *out /* [rows * nv] */)
{
    if (g->p->wide) { /* 16-bit activations: the int64 accumulators */
        for (int i = 0; i < rows * nv; i++)
            out[i] = load(g, g->acc64ty, g->wacc[i], 8);
        return;
    }
    if (g->p->uk->rowvecs) {
        g->p->uk->rowvecs(g, rows, nv, out);
        return;
    }
    for (int i = 0; i < rows * nv; i++)
        out[i] = load(g, g->accty, g->acc[i], 4);
}

/* ---- epilogue ---- */

/* Whether the kernel takes the run-time quantization of A (CgGemmSpec.act_*). */
static bool
gemm_act(const CgGemmSpec *s)
{
    return s->act_zp || s->act_scale || s->act_row_scale;
}

typedef struct EpiConsts {
    LLVMValueRef cb, zb, mult, fxm, fxr, fxs, fb, csum;
} EpiConsts;

/* ---- the output zero point and clamp: immediates, or a shared body's loaded values ---- */

enum { EPI_ZO, EPI_QMIN, EPI_QMAX };

/* zo, qmin or qmax (which) of the spec as a vector of elt (i32 or i64) */
static LLVMValueRef
epi_int(Gen *g, LLVMTypeRef elt, int which)
{
    const CgGemmSpec *s = g->s;
    LLVMValueRef e = which == EPI_ZO ? g->e_zo : which == EPI_QMIN ? g->e_qmin : g->e_qmax;
    if (!e)
        return vsplat_i(g, elt, which == EPI_ZO ? s->zo : which == EPI_QMIN ? s->qmin : s->qmax);
    if (elt != g->i64)
        e = LLVMBuildTrunc(g->b, e, elt, "");
    return splat(g, e, (unsigned)g->p->vl);
}

/* the f32 clamp bounds qmin - zo (hi: qmax - zo) as vectors */
static LLVMValueRef
epi_bound(Gen *g, bool hi)
{
    const CgGemmSpec *s = g->s;
    LLVMValueRef e = hi ? g->e_hi : g->e_lo;
    if (!e)
        e = LLVMConstReal(g->f32, (float)((int64_t)(hi ? s->qmax : s->qmin) - s->zo));
    return splat(g, e, (unsigned)g->p->vl);
}

/* maxnum / minnum of the f32 product f with the bounds. Loaded bounds carry nnan: f (a finite
 * accumulator times a finite multiplier, check_spec) and the bounds are never NaN, and without
 * the flag a bound LLVM cannot see costs a NaN fix-up per vector on x86, which constant bounds
 * never needed. */
static LLVMValueRef
epi_clamp(Gen *g, LLVMValueRef f)
{
    LLVMValueRef lo = intr2(g, "llvm.maxnum", f, epi_bound(g, false));
    if (g->e_lo)
        LLVMSetFastMathFlags(lo, LLVMFastMathNoNaNs);
    LLVMValueRef hi = intr2(g, "llvm.minnum", lo, epi_bound(g, true));
    if (g->e_hi)
        LLVMSetFastMathFlags(hi, LLVMFastMathNoNaNs);
    return hi;
}

/* The fused residual add (CgGemmSpec.residual): qn_qadd of the requantized q (i32 lanes) and
 * r (the residual's values as i32 lanes). Float requantization: f32 operations in qn_qadd's
 * order; the rounding as in requantization: clamp to [lo - zy, hi - zy] (exact in f32 for
 * 8-bit results, NaN -> 0), rne, + zy. Fixed: qn_qadd_fixed on i64 lanes (target/module.h). */
static LLVMValueRef
residual_add(Gen *g, LLVMValueRef q, LLVMValueRef r)
{
    const CgGemmSpec *s = g->s;
    const unsigned vl = (unsigned)g->p->vl;
    LLVMTypeRef vf32 = LLVMVectorType(g->f32, vl), vi32 = LLVMVectorType(g->i32, vl);
    if (s->epilogue == CG_GEMM_EPI_REQUANT_FIXED) {
        LLVMTypeRef vi64 = LLVMVectorType(g->i64, vl);
        LLVMValueRef da = LLVMBuildSub(g->b, LLVMBuildSExt(g->b, q, vi64, ""), epi_int(g, g->i64, EPI_ZO), "");
        LLVMValueRef db = LLVMBuildSub(g->b, LLVMBuildSExt(g->b, r, vi64, ""), vsplat_i(g, g->i64, s->res_zb), "");
        LLVMValueRef v = cg_build_add_sat(g->b, cg_build_addsub_fixed(g->b, da, db, &s->res_fixed, false),
                                          s->res_zy, s->res_lo, s->res_hi);
        return LLVMBuildTrunc(g->b, v, vi32, "");
    }
    LLVMValueRef va = LLVMBuildFMul(g->b, splat(g, LLVMConstReal(g->f32, s->res_sa), vl),
                                    LLVMBuildSIToFP(g->b, LLVMBuildSub(g->b, q, epi_int(g, g->i32, EPI_ZO), ""), vf32, ""), "");
    LLVMValueRef vb = LLVMBuildFMul(g->b, splat(g, LLVMConstReal(g->f32, s->res_sb), vl),
                                    LLVMBuildSIToFP(g->b, LLVMBuildSub(g->b, r, vsplat_i(g, g->i32, s->res_zb), ""), vf32, ""), "");
    LLVMValueRef v = LLVMBuildFDiv(g->b, LLVMBuildFAdd(g->b, va, vb, ""),
                                   splat(g, LLVMConstReal(g->f32, s->res_sy), vl), "");
    LLVMValueRef flo = splat(g, LLVMConstReal(g->f32, (float)((int64_t)s->res_lo - s->res_zy)), vl);
    LLVMValueRef fhi = splat(g, LLVMConstReal(g->f32, (float)((int64_t)s->res_hi - s->res_zy)), vl);
    v = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealUNO, v, v, ""), LLVMConstNull(vf32), v, "");
    v = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOLT, v, flo, ""), flo, v, "");
    v = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOGT, v, fhi, ""), fhi, v, "");
    v = intr1(g, "llvm.roundeven", v);
    return LLVMBuildAdd(g->b, LLVMBuildFPToSI(g->b, v, vi32, ""), vsplat_i(g, g->i32, s->res_zy), "");
}

/* ---- 16-bit activations: the epilogue of an int64 accumulator (p->wide) ---- */

/* epilogue_vec of an int64 accumulator row vector: the int32 lanes of the result. */
static LLVMValueRef
epilogue_vec_wide(Gen *g, LLVMValueRef acc, const EpiConsts *k)
{
    const CgGemmSpec *s = g->s;
    const unsigned vl = (unsigned)g->p->vl;
    LLVMTypeRef vi32 = LLVMVectorType(g->i32, vl), vf32 = LLVMVectorType(g->f32, vl);
    switch (s->epilogue) {
    case CG_GEMM_EPI_I32: return LLVMBuildTrunc(g->b, acc, vi32, ""); /* wraps, as lib/ref */
    case CG_GEMM_EPI_DEQUANT: {
        LLVMValueRef out = LLVMBuildFMul(g->b, LLVMBuildSIToFP(g->b, acc, vf32, ""), k->mult, "");
        return k->fb ? LLVMBuildFAdd(g->b, out, k->fb, "") : out;
    }
    case CG_GEMM_EPI_REQUANT_FLOAT: {
        /* qn_requant_float_wide: one int64 -> f32 rounding, then as the int32 accumulator */
        LLVMValueRef f = LLVMBuildFMul(g->b, LLVMBuildSIToFP(g->b, acc, vf32, ""), k->mult, "");
        f = epi_clamp(g, f);
        f = intr1(g, "llvm.roundeven", f);
        return LLVMBuildAdd(g->b, LLVMBuildFPToSI(g->b, f, vi32, ""), epi_int(g, g->i32, EPI_ZO), "");
    }
    case CG_GEMM_EPI_REQUANT_FIXED: {
        /* qn_requant_fixed_wide (irb/core.c) */
        LLVMValueRef w = LLVMBuildAdd(g->b, cg_build_rescale_wide(g->b, acc, k->fxm, k->fxs),
                                      epi_int(g, g->i64, EPI_ZO), "");
        w = intr2(g, "llvm.smax", w, epi_int(g, g->i64, EPI_QMIN));
        w = intr2(g, "llvm.smin", w, epi_int(g, g->i64, EPI_QMAX));
        return LLVMBuildTrunc(g->b, w, vi32, "");
    }
    }
    return acc;
}

/* Requantize / convert one accumulator row vector (zero-point terms already applied); r: the
 * residual's lanes (i32) when the spec fuses a residual add, else NULL. */
static LLVMValueRef
epilogue_vec(Gen *g, LLVMValueRef acc, const EpiConsts *k, LLVMValueRef r)
{
    const GemmPlan *p = g->p;
    const CgGemmSpec *s = g->s;
    const unsigned vl = (unsigned)p->vl;
    LLVMTypeRef vi32 = LLVMVectorType(g->i32, vl), vi64 = LLVMVectorType(g->i64, vl);
    LLVMTypeRef vf32 = LLVMVectorType(g->f32, vl);
    LLVMValueRef out = acc;
    if (p->wide) {
        out = epilogue_vec_wide(g, acc, k);
        if (s->out == CG_GEMM_I16 || s->out == CG_GEMM_U16)
            out = LLVMBuildTrunc(g->b, out, LLVMVectorType(g->i16, vl), "");
        else if (s->out == CG_GEMM_I8 || s->out == CG_GEMM_U8)
            out = LLVMBuildTrunc(g->b, out, LLVMVectorType(g->i8, vl), "");
        return out;
    }
    switch (s->epilogue) {
    case CG_GEMM_EPI_I32: break;
    case CG_GEMM_EPI_DEQUANT:
        out = LLVMBuildFMul(g->b, LLVMBuildSIToFP(g->b, acc, vf32, ""), k->mult, "");
        if (k->fb)
            out = LLVMBuildFAdd(g->b, out, k->fb, ""); /* no contract flag: never an fma */
        break;
    case CG_GEMM_EPI_REQUANT_FLOAT: {
        /* qn_requant_float: f32 product, clamp to [qmin-zo, qmax-zo], rne, + zo */
        LLVMValueRef f = LLVMBuildFMul(g->b, LLVMBuildSIToFP(g->b, acc, vf32, ""), k->mult, "");
        f = epi_clamp(g, f);
        f = intr1(g, "llvm.roundeven", f);
        if (!p->requant_i64) { /* |f| <= 2^24: exact in i32, and the sum is in [qmin, qmax] */
            out = LLVMBuildAdd(g->b, LLVMBuildFPToSI(g->b, f, vi32, ""), epi_int(g, g->i32, EPI_ZO),
                               "");
        } else {
            LLVMValueRef w = LLVMBuildAdd(g->b, LLVMBuildFPToSI(g->b, f, vi64, ""),
                                          epi_int(g, g->i64, EPI_ZO), "");
            w = intr2(g, "llvm.smax", w, epi_int(g, g->i64, EPI_QMIN));
            w = intr2(g, "llvm.smin", w, epi_int(g, g->i64, EPI_QMAX));
            out = LLVMBuildTrunc(g->b, w, vi32, "");
        }
        break;
    }
    case CG_GEMM_EPI_REQUANT_FIXED: {
        /* qn_requant_fixed: ((int64)acc * M + 2^(s-1)) >> s (floor), + zo, saturate */
        LLVMValueRef w = LLVMBuildMul(g->b, LLVMBuildSExt(g->b, acc, vi64, ""), k->fxm, "");
        w = LLVMBuildAShr(g->b, LLVMBuildAdd(g->b, w, k->fxr, ""), k->fxs, "");
        w = LLVMBuildAdd(g->b, w, epi_int(g, g->i64, EPI_ZO), "");
        w = intr2(g, "llvm.smax", w, epi_int(g, g->i64, EPI_QMIN));
        w = intr2(g, "llvm.smin", w, epi_int(g, g->i64, EPI_QMAX));
        out = LLVMBuildTrunc(g->b, w, vi32, "");
        break;
    }
    }
    if (r)
        out = residual_add(g, out, r);
    if (s->out == CG_GEMM_I8 || s->out == CG_GEMM_U8)
        out = LLVMBuildTrunc(g->b, out, LLVMVectorType(g->i8, vl), "");
    else if (s->out == CG_GEMM_I16 || s->out == CG_GEMM_U16)
        out = LLVMBuildTrunc(g->b, out, LLVMVectorType(g->i16, vl), "");
    return out;
}

/* The residual's lanes [n, n + lanes) of row `row` as i32 (lanes < vl: element by element, so
 * nothing past the row is read; the other lanes are 0 and never stored). */
static LLVMValueRef
residual_load(Gen *g, LLVMValueRef row, LLVMValueRef n, int64_t lanes)
{
    const unsigned vl = (unsigned)g->p->vl;
    LLVMTypeRef vi32 = LLVMVectorType(g->i32, vl), v8 = LLVMVectorType(g->i8, vl);
    LLVMValueRef p = gep8(g, g->arg_r, add(g, mul(g, row, g->s->ldr), n));
    LLVMValueRef r;
    if (lanes == (int64_t)vl) {
        r = load(g, v8, p, 1);
    } else {
        r = LLVMConstNull(v8);
        for (int64_t l = 0; l < lanes; l++)
            r = LLVMBuildInsertElement(g->b, r, load(g, g->i8, gep8(g, p, ci64(g, l)), 1), ci32(g, l), "");
    }
    return g->s->res_signed ? LLVMBuildSExt(g->b, r, vi32, "") : LLVMBuildZExt(g->b, r, vi32, "");
}

/* Epilogue of one row (block row lr) of the tile: zero-point terms, requantization, store. */
static void
epilogue_row(Gen *g, const Panel *pn, const EpiConsts *k, const LLVMValueRef *n, LLVMValueRef lr,
             const LLVMValueRef *vecs /* [nv] */)
{
    const GemmPlan *p = g->p;
    const CgGemmSpec *s = g->s;
    const unsigned vl = (unsigned)p->vl;
    LLVMValueRef rsv = NULL;
    if (p->need_rowsum && p->wide) /* int64 row sums */
        rsv = splat(g, load(g, g->i64, gep8(g, g->rs, mul(g, lr, 8)), 8), vl);
    else if (p->need_rowsum)
        rsv = splat(g, load(g, g->i32, gep8(g, g->rs, mul(g, lr, 4)), 4), vl);
    LLVMValueRef mrow = add(g, g->m0, lr);
    LLVMValueRef row = mul(g, mrow, s->ldc);
    LLVMValueRef rowscale = NULL; /* act_row_scale: this row's scale of A */
    if (s->act_row_scale)
        rowscale = splat(g, load(g, g->f32, gep8(g, g->aq_rows, mul(g, mrow, 4)), 4), vl);
    for (int v = 0; v < pn->nv; v++) {
        LLVMValueRef acc = vecs[v];
        EpiConsts kv = k[v];
        if (kv.zb && p->wide)
            acc = LLVMBuildSub(g->b, acc, LLVMBuildMul(g->b, LLVMBuildSExt(g->b, kv.zb, g->acc64ty, ""),
                                                       rsv, ""), "");
        else if (kv.zb)
            acc = LLVMBuildSub(g->b, acc, LLVMBuildMul(g->b, kv.zb, rsv, ""), "");
        if (kv.cb)
            acc = LLVMBuildAdd(g->b, acc, kv.cb, "");
        if (kv.csum) /* act_zp: - za * sum_k (b - zb) */
            acc = LLVMBuildSub(g->b, acc, LLVMBuildMul(g->b, splat(g, g->aq_za, vl), kv.csum, ""), "");
        if (rowscale)
            kv.mult = LLVMBuildFMul(g->b, rowscale, kv.mult, "");
        bool full = v < pn->nv - 1 || pn->last_lanes == (int64_t)vl;
        LLVMValueRef res = s->residual ? residual_load(g, mrow, n[v], full ? (int64_t)vl : pn->last_lanes)
                                       : NULL;
        LLVMValueRef out = epilogue_vec(g, acc, &kv, res);
        LLVMValueRef cptr = gep8(g, g->arg_c, mul(g, add(g, row, n[v]), g->esize));
        if (full) {
            store(g, out, cptr, (unsigned)g->esize);
        } else {
            /* Lane-by-lane stores. Not llvm.masked.store: LLVM 22's x86 lowering of a
             * one-lane masked store of <N x i8> (promoted to i32 lanes) writes 4 bytes. */
            for (int64_t l = 0; l < pn->last_lanes; l++)
                store(g, LLVMBuildExtractElement(g->b, out, ci32(g, l), ""),
                      gep8(g, cptr, ci64(g, l * g->esize)), (unsigned)g->esize);
        }
    }
}

/* The tile's epilogue. A multi-row tile parks its row vectors in a stack buffer and runs one
 * copy of the row epilogue in a loop over its valid rows (a partial tile's clamped rows are
 * computed but never stored): one copy instead of `rows`, a third of a conv GEMM's IR and of
 * its compile time, for 2 x nv vector moves through L1 per row. */
static void
tile_epilogue(Gen *g, const Panel *pn, int rows, LLVMValueRef mloc, LLVMValueRef *vecs)
{
    const GemmPlan *p = g->p;
    const CgGemmSpec *s = g->s;
    const unsigned vl = (unsigned)p->vl;
    EpiConsts k[8];
    LLVMValueRef n[8];
    memset(k, 0, sizeof k);
    for (int v = 0; v < pn->nv; v++) {
        n[v] = add(g, pn->n0, ci64(g, (int64_t)v * vl));
        k[v].cb = !p->cb_nonzero ? NULL
                  : p->wide      ? const_vec(g, g->g_cb, g->i64, 8, n[v]) /* cb64 */
                                 : const_vec(g, g->g_cb, g->i32, 4, n[v]);
        k[v].zb = p->need_rowsum ? const_vec(g, g->g_zb, g->i32, 4, n[v]) : NULL;
        if (s->epilogue == CG_GEMM_EPI_REQUANT_FLOAT)
            k[v].mult = const_vec(g, g->g_mult, g->f32, 4, n[v]);
        if (s->epilogue == CG_GEMM_EPI_DEQUANT) {
            k[v].mult = const_vec(g, g->g_scale, g->f32, 4, n[v]);
            if (s->act_scale) /* A's run-time scale times B's: one f32 product */
                k[v].mult = LLVMBuildFMul(g->b, splat(g, g->aq_sa, vl), k[v].mult, "");
            k[v].fb = g->g_fbias ? const_vec(g, g->g_fbias, g->f32, 4, n[v]) : NULL;
        }
        k[v].csum = g->g_csum ? const_vec(g, g->g_csum, g->i32, 4, n[v]) : NULL;
        if (s->epilogue == CG_GEMM_EPI_REQUANT_FIXED) {
            k[v].fxm = const_vec(g, g->g_fxm, g->i64, 8, n[v]);
            k[v].fxr = const_vec(g, g->g_fxr, g->i64, 8, n[v]);
            k[v].fxs = const_vec(g, g->g_fxs, g->i64, 8, n[v]);
        }
    }
    if (rows == 1) {
        epilogue_row(g, pn, k, n, mloc, vecs);
        return;
    }
    int64_t vbytes = (int64_t)vl * (p->wide ? 8 : 4);
    for (int i = 0; i < rows * pn->nv; i++)
        store(g, vecs[i], gep8(g, g->tbuf, ci64(g, i * vbytes)), 64);
    LLVMValueRef nrows = intr2(g, "llvm.smin", LLVMBuildSub(g->b, g->mcn, mloc, ""), ci64(g, rows));
    Loop lr;
    LLVMValueRef r = loop_begin(g, &lr, ci64(g, 0), nrows, ci64(g, 1), "er");
    LLVMValueRef rv[8];
    for (int v = 0; v < pn->nv; v++)
        rv[v] = load(g, p->wide ? g->acc64ty : g->accty,
                     gep8(g, g->tbuf, add(g, mul(g, r, pn->nv * vbytes), ci64(g, v * vbytes))), 64);
    epilogue_row(g, pn, k, n, add(g, mloc, r), rv);
    loop_end(g, &lr);
}

/* ---- tiles, panels, blocks ---- */

/* Scratch address of accumulator slot i of a tile at block row mloc (nkc > 1). */
static LLVMValueRef
scratch_slot(Gen *g, int nv, LLVMValueRef mloc, int i)
{
    const GemmPlan *p = g->p;
    LLVMValueRef off;
    if (p->apack == APACK_PAIRS) { /* mmla: accumulator (pair q, channel pair j) */
        int npair = 2 * nv, q = i / npair, j = i % npair;
        LLVMValueRef pr = add(g, LLVMBuildLShr(g->b, mloc, ci64(g, 1), ""), ci64(g, q));
        off = add(g, mul(g, pr, 2 * p->nr), ci64(g, 4 * j));
    } else {
        int r = i / nv, v = i % nv;
        off = add(g, mul(g, add(g, mloc, ci64(g, r)), p->nr), ci64(g, (int64_t)v * p->vl));
    }
    return gep8(g, g->scratch, mul(g, off, 4));
}

/* The K loop of a tile over groups [kb, ke): unrolled by the microkernel's step, then the
 * groups left over. */
static void
emit_k_loop(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef kb, LLVMValueRef ke)
{
    const GemmPlan *p = g->p;
    const GemmUk *uk = p->uk;
    int64_t gn = uk->step_n ? uk->step_groups : 1; /* groups per step of the unrolled loop */
    int64_t u = (p->kunroll + gn - 1) / gn * gn;
    Loop lk;
    LLVMValueRef k = loop_begin(g, &lk, kb, u > 1 ? LLVMBuildSub(g->b, ke, ci64(g, u - 1), "") : ke,
                                ci64(g, u), "k");
    for (int64_t j = 0; j < u; j += gn)
        (gn > 1 ? uk->step_n : uk->step)(g, pn, rows, rowp, j ? add(g, k, ci64(g, j)) : k);
    loop_end(g, &lk);
    if (u > 1) { /* groups left over by the unrolled loop */
        Loop lr;
        k = loop_begin(g, &lr, lk.iv, ke, ci64(g, 1), "kr");
        uk->step(g, pn, rows, rowp, k);
        loop_end(g, &lr);
    }
}

/* 16-bit activations, wide: K in chunks of wgroups groups, each summed in the int32
 * accumulators from 0 (exact: plan_wide's bound) and added into the int64 ones. */
static void
emit_k_wide(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, int nacc)
{
    const GemmPlan *p = g->p;
    for (int i = 0; i < nacc; i++)
        store(g, LLVMConstNull(g->acc64ty), g->wacc[i], 64);
    Loop lw;
    LLVMValueRef kw = loop_begin(g, &lw, ci64(g, 0), ci64(g, p->groups), ci64(g, p->wgroups), "kw");
    for (int i = 0; i < nacc; i++)
        store(g, LLVMConstNull(g->accty), g->acc[i], 16);
    emit_k_loop(g, pn, rows, rowp, kw, intr2(g, "llvm.smin", add(g, kw, ci64(g, p->wgroups)), ci64(g, p->groups)));
    for (int i = 0; i < nacc; i++) {
        LLVMValueRef w = LLVMBuildSExt(g->b, load(g, g->accty, g->acc[i], 16), g->acc64ty, "");
        store(g, LLVMBuildAdd(g->b, load(g, g->acc64ty, g->wacc[i], 64), w, ""), g->wacc[i], 64);
    }
    loop_end(g, &lw);
}

static void
emit_tile(Gen *g, const Panel *pn, int rows, LLVMValueRef mloc)
{
    const GemmPlan *p = g->p;
    int nacc = tile_nacc(p, rows, pn->nv);
    bool chunked = p->nkc > 1;
    LLVMValueRef *sp = p->acc_slots + 2 * p->nacc;
    for (int i = 0; i < nacc; i++) {
        LLVMValueRef init = LLVMConstNull(g->accty);
        if (chunked) { /* first chunk starts from 0, later ones from the partial sums */
            sp[i] = scratch_slot(g, pn->nv, mloc, i);
            init = LLVMBuildSelect(g->b, g->kfirst, init, load(g, g->accty, sp[i], 4), "");
        }
        store(g, init, g->acc[i], 16);
    }
    LLVMValueRef rowp[16];
    tile_rows(g, rows, mloc, rowp);
    LLVMValueRef kb = chunked ? g->kc0 : ci64(g, 0);
    LLVMValueRef ke = chunked ? g->kend : ci64(g, p->groups);
    if (p->wide)
        emit_k_wide(g, pn, rows, rowp, nacc);
    else
        emit_k_loop(g, pn, rows, rowp, kb, ke);
    LLVMBasicBlockRef done = NULL;
    if (chunked) {
        LLVMBasicBlockRef save = block(g, "save"), fin = block(g, "epilogue");
        done = block(g, "tile_done");
        LLVMBuildCondBr(g->b, g->klast, fin, save);
        LLVMPositionBuilderAtEnd(g->b, save);
        for (int i = 0; i < nacc; i++)
            store(g, load(g, g->accty, g->acc[i], 16), sp[i], 4);
        LLVMBuildBr(g->b, done);
        LLVMPositionBuilderAtEnd(g->b, fin);
    }
    LLVMValueRef *vecs = p->acc_slots + 3 * p->nacc;
    tile_rowvecs(g, rows, pn->nv, vecs);
    tile_epilogue(g, pn, rows, mloc, vecs);
    if (done) {
        LLVMBuildBr(g->b, done);
        LLVMPositionBuilderAtEnd(g->b, done);
    }
}

/* Row tiles over the block: mr-row tiles while more than mr/2 rows are left (the last one may be
 * partial: clamped reads, guarded stores), then single rows (row pairs for mmla), which only
 * load B once per row and so beat a mostly empty mr tile. */
static void
emit_row_tiles_chunk(Gen *g, const Panel *pn)
{
    const GemmPlan *p = g->p;
    int small = p->apack == APACK_PAIRS ? 2 : 1; /* row pairs for mmla */
    Loop lm;
    LLVMValueRef end = LLVMBuildSub(g->b, g->mcn, ci64(g, p->mr > small ? p->mr / 2 : 0), "");
    LLVMValueRef m = loop_begin(g, &lm, ci64(g, 0), end, ci64(g, p->mr), "m");
    emit_tile(g, pn, p->mr, m);
    loop_end(g, &lm);
    if (p->mr > small) {
        Loop ls;
        m = loop_begin(g, &ls, lm.iv, g->mcn, ci64(g, small), "m1");
        emit_tile(g, pn, small, m);
        loop_end(g, &ls);
    }
}

/* All K chunks of one panel over the block's rows. */
static void
emit_row_tiles(Gen *g, const Panel *pn)
{
    const GemmPlan *p = g->p;
    if (p->nkc == 1) {
        emit_row_tiles_chunk(g, pn);
        return;
    }
    Loop lc;
    LLVMValueRef kc = loop_begin(g, &lc, ci64(g, 0), ci64(g, p->nkc), ci64(g, 1), "kc");
    g->kc0 = mul(g, kc, p->kcg);
    g->kend = intr2(g, "llvm.smin", add(g, g->kc0, ci64(g, p->kcg)), ci64(g, p->groups));
    g->kfirst = LLVMBuildICmp(g->b, LLVMIntEQ, kc, ci64(g, 0), "");
    g->klast = LLVMBuildICmp(g->b, LLVMIntEQ, kc, ci64(g, p->nkc - 1), "");
    emit_row_tiles_chunk(g, pn);
    loop_end(g, &lc);
}

static void
add_param_attr(Gen *g, unsigned idx, const char *name, uint64_t val)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    if (kind) /* e.g. nocapture no longer exists in LLVM 22 (now captures(...)) */
        LLVMAddAttributeAtIndex(g->fn, idx, LLVMCreateEnumAttribute(g->c, kind, val));
}

/* The Gen of one GEMM instance (types, spec, plan). */
static void
gen_init(Gen *g, LLVMModuleRef mod, const CgGemmSpec *s, const GemmPlan *plan)
{
    memset(g, 0, sizeof *g);
    irb_init(&g->ir, mod, NULL);
    g->s = s;
    g->p = plan;
    g->acc = plan->acc_slots;
    g->wacc = plan->acc_slots + plan->nacc;
    g->accty = LLVMVectorType(g->i32, (unsigned)plan->vl);
    g->acc64ty = LLVMVectorType(g->i64, (unsigned)plan->vl);
    switch (s->out) {
    case CG_GEMM_I8:
    case CG_GEMM_U8: g->esize = 1; break;
    case CG_GEMM_I16:
    case CG_GEMM_U16: g->esize = 2; break;
    default: g->esize = 4; break;
    }
}

/* Add the function `name` with the GEMM's signature (plus, when `shared`, a last parameter: the
 * instance's constants, GEMM_NCONST pointers) and its attributes; g->fn and g->arg_*. */
static void
add_gemm_function(Gen *g, const CgTarget *t, const char *name, bool shared)
{
    const CgGemmSpec *s = g->s;
    /* b_runtime: packed B, cb; act_*: the CgGemmActQ */
    unsigned np = s->b_runtime ? 6 : s->residual || gemm_act(s) ? 5 : 4;
    LLVMTypeRef params[7] = {g->ptr, g->ptr, g->i64, g->i64, g->ptr, g->ptr, g->ptr};
    if (shared)
        params[np++] = g->ptr;
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(g->c), params, np, 0);
    g->fn = LLVMAddFunction(g->mod, name, fty);
    cg_function_set_target(g->fn, t, g->p->desc->vector_bits);
    add_param_attr(g, LLVMAttributeFunctionIndex, "nounwind", 0);
    add_param_attr(g, 1, "noalias", 0);
    add_param_attr(g, 1, "readonly", 0);
    add_param_attr(g, 2, "noalias", 0);
    g->arg_a = LLVMGetParam(g->fn, 0);
    g->arg_c = LLVMGetParam(g->fn, 1);
    g->arg_mb = LLVMGetParam(g->fn, 2);
    g->arg_me = LLVMGetParam(g->fn, 3);
    g->arg_r = s->residual ? LLVMGetParam(g->fn, 4) : NULL;
    if (gemm_act(s)) {
        add_param_attr(g, 5, "noalias", 0);
        add_param_attr(g, 5, "readonly", 0);
    }
}

/* The instance's constants: packed B and the per-channel epilogue arrays, as private globals
 * named after `name`. */
static void
add_gemm_constants(Gen *g, const char *name)
{
    const GemmPlan *plan = g->p;
    g->g_b = g->s->b_runtime ? LLVMGetParam(g->fn, 4) /* packed at run time: pack_rt.c */
                             : const_bytes(g, name, "bpack", plan->bpack, plan->bpack_bytes);
    if (g->s->b_runtime)
        g->g_cb = LLVMGetParam(g->fn, 5);
    else if (plan->cb_nonzero && plan->wide) /* int64 corrections */
        g->g_cb = const_bytes(g, name, "cb", plan->cb64, plan->npad * 8);
    else if (plan->cb_nonzero)
        g->g_cb = const_bytes(g, name, "cb", plan->cb, plan->npad * 4);
    if (plan->need_rowsum)
        g->g_zb = const_bytes(g, name, "zb", plan->zb, plan->npad * 4);
    if (plan->mult)
        g->g_mult = const_bytes(g, name, "mult", plan->mult, plan->npad * 4);
    if (plan->scale)
        g->g_scale = const_bytes(g, name, "scale", plan->scale, plan->npad * 4);
    if (plan->fbias)
        g->g_fbias = const_bytes(g, name, "fbias", plan->fbias, plan->npad * 4);
    if (plan->csum)
        g->g_csum = const_bytes(g, name, "csum", plan->csum, plan->npad * 4);
    if (plan->fx_mult) {
        g->g_fxm = const_bytes(g, name, "fxm", plan->fx_mult, plan->npad * 8);
        g->g_fxr = const_bytes(g, name, "fxr", plan->fx_round, plan->npad * 8);
        g->g_fxs = const_bytes(g, name, "fxs", plan->fx_shift, plan->npad * 8);
    }
}

enum { GEMM_NCONST = 11 };

static LLVMValueRef *
const_slot(Gen *g, int i)
{
    LLVMValueRef *slots[GEMM_NCONST] = {&g->g_b,    &g->g_cb,    &g->g_zb,  &g->g_mult, &g->g_scale,
                                        &g->g_fbias, &g->g_fxm, &g->g_fxr, &g->g_fxs, &g->g_csum,
                                        &g->g_epi};
    return slots[i];
}

/* The body of the GEMM in g->fn (its constants in g->g_*, or loaded from the last parameter
 * when `shared`). */
static void
emit_gemm_body(Gen *g, bool shared)
{
    const GemmPlan *pl = g->p;
    g->b = LLVMCreateBuilderInContext(g->c);
    LLVMBasicBlockRef entry = block(g, "entry");
    LLVMPositionBuilderAtEnd(g->b, entry);
    if (shared) {
        LLVMValueRef pc = LLVMGetParam(g->fn, LLVMCountParams(g->fn) - 1);
        for (int i = 0; i < GEMM_NCONST; i++) {
            LLVMValueRef *slot = const_slot(g, i);
            if (!*slot)
                continue;
            LLVMValueRef idx = ci64(g, i);
            LLVMValueRef v = irb_load(&g->ir, g->ptr, LLVMBuildGEP2(g->b, g->ptr, pc, &idx, 1, ""), 8);
            *slot = v;
        }
        if (g->g_epi) { /* the instance's zero point and clamp (epi_global) */
            g->e_zo = load(g, g->i64, g->g_epi, 8);
            g->e_qmin = load(g, g->i64, gep8(g, g->g_epi, ci64(g, 8)), 8);
            g->e_qmax = load(g, g->i64, gep8(g, g->g_epi, ci64(g, 16)), 8);
            g->e_lo = load(g, g->f32, gep8(g, g->g_epi, ci64(g, 24)), 4);
            g->e_hi = load(g, g->f32, gep8(g, g->g_epi, ci64(g, 28)), 4);
        }
    }
    if (gemm_act(g->s)) { /* the CgGemmActQ argument: za, sa, row_scale (gemm.h) */
        LLVMValueRef aq = LLVMGetParam(g->fn, 4);
        g->aq_za = load(g, g->i32, aq, 4);
        g->aq_sa = load(g, g->f32, gep8(g, aq, ci64(g, 4)), 4);
        g->aq_rows = load(g, g->ptr, gep8(g, aq, ci64(g, 8)), 8);
    }
    for (int i = 0; i < pl->mr * pl->nv; i++) {
        g->acc[i] = LLVMBuildAlloca(g->b, g->accty, "acc");
        LLVMSetAlignment(g->acc[i], 64);
    }
    for (int i = 0; pl->wide && i < pl->mr * pl->nv; i++) {
        g->wacc[i] = LLVMBuildAlloca(g->b, g->acc64ty, "acc64");
        LLVMSetAlignment(g->wacc[i], 64);
    }
    if (pl->apack_bytes) {
        g->apack = LLVMBuildAlloca(g->b, LLVMArrayType2(g->i8, (uint64_t)pl->apack_bytes), "apack");
        LLVMSetAlignment(g->apack, 64);
    }
    if (pl->need_rowsum)
        g->rs = LLVMBuildAlloca(g->b, LLVMArrayType2(pl->wide ? g->i64 : g->i32, (uint64_t)pl->mc),
                                "rowsum");
    if (pl->scratch_bytes) {
        g->scratch = LLVMBuildAlloca(g->b, LLVMArrayType2(g->i8, (uint64_t)pl->scratch_bytes),
                                     "partial");
        LLVMSetAlignment(g->scratch, 64);
    }
    g->sumslot = LLVMBuildAlloca(g->b, pl->wide ? g->i64 : g->i32, "sum");
    g->tbuf = LLVMBuildAlloca(g->b, LLVMArrayType2(pl->wide ? g->acc64ty : g->accty, (uint64_t)(pl->mr * pl->nv)),
                              "tile");
    LLVMSetAlignment(g->tbuf, 64);

    Loop lb;
    g->m0 = loop_begin(g, &lb, g->arg_mb, g->arg_me, ci64(g, pl->mc), "mb");
    LLVMValueRef left = LLVMBuildSub(g->b, g->arg_me, g->m0, "");
    g->mcn = intr2(g, "llvm.smin", left, ci64(g, pl->mc));
    if (pl->need_rowsum)
        gemm_emit_rowsums(g);
    if (pl->apack != APACK_NONE)
        gemm_emit_pack_a(g);
    if (pl->npanels_full > 0) {
        Loop lp;
        LLVMValueRef pi = loop_begin(g, &lp, ci64(g, 0), ci64(g, pl->npanels_full), ci64(g, 1), "p");
        Panel pn = {gep8(g, g->g_b, mul(g, pi, pl->nr * pl->kp * pl->belem)),
                    mul(g, pi, pl->nr), pl->nv, pl->nr, pl->vl};
        emit_row_tiles(g, &pn);
        loop_end(g, &lp);
    }
    if (pl->nr_tail) {
        int64_t first = pl->npanels_full * pl->nr;
        Panel pn = {gep8(g, g->g_b, ci64(g, first * pl->kp * pl->belem)), ci64(g, first),
                    (int)pl->nv_tail, pl->nr_tail, pl->tail_last_lanes};
        emit_row_tiles(g, &pn);
    }
    loop_end(g, &lb);
    LLVMBuildRetVoid(g->b);
    LLVMDisposeBuilder(g->b);
    g->b = NULL;
}

LLVMValueRef
cg_gemm_emit(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s,
             const char *name, char *err, size_t errlen)
{
    return cg_gemm_emit_shared(mod, t, isa, s, name, NULL, err, errlen);
}

/* ---- sharing one body between GEMMs that differ only in their constants ---- */

typedef struct GemmShare {
    char *key;
    LLVMValueRef first;                 /* the first instance's function */
    LLVMValueRef consts[GEMM_NCONST];   /* and its constants (NULL: not used) */
    LLVMValueRef body;                  /* the shared body, once a second instance came */
    int64_t zo, qmin, qmax;             /* the first instance's (epi_global) */
} GemmShare;

struct CgGemmCache {
    GemmShare *e;
    size_t n, cap;
};

CgGemmCache *
cg_gemm_cache_create(void)
{
    return calloc(1, sizeof(CgGemmCache));
}

void
cg_gemm_cache_destroy(CgGemmCache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->e[i].key);
    free(c->e);
    free(c);
}

size_t
cg_gemm_cache_shared(const CgGemmCache *c)
{
    size_t n = 0;
    for (size_t i = 0; c && i < c->n; i++)
        n += c->e[i].body != NULL;
    return n;
}

/* Everything the emitted body depends on besides the constants' values: the spec's scalars
 * (not za, which only enters the constants cb), the plan's scalars and which constants exist.
 * Two GEMMs with equal keys emit the same body up to the addresses of their constants. */
static char *
gemm_key(CgGemmIsa isa, const CgGemmSpec *s, const GemmPlan *p)
{
    char buf[1536];
    const QnAddFixed *f = &s->res_fixed;
    int n = snprintf(buf, sizeof buf,
                     "%d|%lld,%lld,%lld,%lld,%lld|%d,%d,%d,%d|%d,%d,%lld,%a,%a,%a,"
                     "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d|%d,%d,%d,%d,%d|",
                     (int)isa, (long long)s->m, (long long)s->n, (long long)s->k,
                     (long long)s->lda, (long long)s->ldc, s->a_signed, (int)s->b_layout,
                     (int)s->epilogue, (int)s->out, s->residual,
                     s->res_signed, (long long)s->ldr, s->res_sa, s->res_sb, s->res_sy,
                     f->lshift, f->a.mult, f->a.shift, f->b.mult, f->b.shift, f->y.mult,
                     f->y.shift, s->res_zb, s->res_zy, s->res_lo, s->res_hi, s->tile.mr,
                     s->tile.nv, s->tile.mc, s->tile.kc, s->tile.kunroll);
    n += snprintf(buf + n, sizeof buf - (size_t)n,
                  "%d,%d,%d,%d,%d,%d,%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,"
                  "%lld,%d,%d,%d,%d,%d,%d,%lld,%lld,%lld|%d%d%d%d%d%d",
                  (int)p->isa, p->vl, p->kg, p->belem, p->mr, p->nv, p->mc, (long long)p->kunroll,
                  (long long)p->kp, (long long)p->groups, (long long)p->kcg, (long long)p->nkc,
                  (long long)p->b_prefetch, (long long)p->scratch_bytes, (long long)p->nr,
                  (long long)p->npanels_full, (long long)p->nv_tail, (long long)p->nr_tail,
                  (long long)p->tail_last_lanes, (int)p->apack, p->a_xor, p->use_usdot,
                  p->need_rowsum, p->cb_nonzero, p->requant_i64, (long long)p->a_row_bytes,
                  (long long)p->apack_bytes, (long long)p->stack_bytes, p->cb_nonzero,
                  p->need_rowsum, p->mult != NULL, p->scale != NULL, p->fbias != NULL,
                  p->fx_mult != NULL);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "|%d%d%d", s->act_zp, s->act_scale,
                  s->act_row_scale);
    if (n > 0 && (size_t)n < sizeof buf && p->a16) /* 16-bit activations */
        n += snprintf(buf + n, sizeof buf - (size_t)n, "|a16,%d,%d,%lld", s->a_signed, p->wide,
                      (long long)p->wgroups);
    if (n <= 0 || (size_t)n >= sizeof buf)
        return NULL;
    char *k = malloc((size_t)n + 1);
    if (k)
        memcpy(k, buf, (size_t)n + 1);
    return k;
}

/* The output zero point and clamp of an instance of a shared body, as the private constant
 * `name.epi` the body loads them from (emit_gemm_body): i64 zo, qmin, qmax, then f32 qmin - zo
 * and qmax - zo (the values the unshared epilogue has as immediates). GEMMs that differ only in
 * them (a fused ReLU, another output zero point) share one body. */
static LLVMValueRef
epi_global(Gen *g, const char *name, int64_t zo, int64_t qmin, int64_t qmax)
{
    unsigned char d[32];
    int64_t v[3] = {zo, qmin, qmax};
    float f[2] = {(float)(qmin - zo), (float)(qmax - zo)};
    memcpy(d, v, sizeof v);
    memcpy(d + 24, f, sizeof f);
    return const_bytes(g, name, "epi", d, (int64_t)sizeof d);
}

/* A private constant array of the instance's GEMM_NCONST constant pointers (null for unused). */
static LLVMValueRef
const_table(Gen *g, const char *name, LLVMValueRef *consts)
{
    LLVMValueRef el[GEMM_NCONST];
    unsigned n = GEMM_NCONST;
    for (unsigned i = 0; i < n; i++)
        el[i] = consts[i] ? consts[i] : LLVMConstPointerNull(g->ptr);
    LLVMValueRef init = LLVMConstArray2(g->ptr, el, n);
    char gname[256];
    snprintf(gname, sizeof gname, "%s.consts", name);
    LLVMValueRef gv = LLVMAddGlobal(g->mod, LLVMTypeOf(init), gname);
    LLVMSetInitializer(gv, init);
    LLVMSetGlobalConstant(gv, 1);
    LLVMSetLinkage(gv, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(gv, 8);
    return gv;
}

/* g->fn's body becomes one call of `body` with its own arguments and the table of `consts`. */
static void
emit_wrapper(Gen *g, LLVMValueRef body, LLVMValueRef *consts, const char *name)
{
    LLVMValueRef table = const_table(g, name, consts);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(g->c);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->c, g->fn, "entry"));
    unsigned n = LLVMCountParams(g->fn);
    LLVMValueRef args[6];
    for (unsigned i = 0; i < n; i++)
        args[i] = LLVMGetParam(g->fn, i);
    args[n] = table;
    LLVMValueRef call = LLVMBuildCall2(b, LLVMGlobalGetValueType(body), body, args, n + 1, "");
    LLVMSetTailCall(call, 1);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
}

/* Remove every instruction and block of fn (its uses by callers stay). */
static void
clear_body(LLVMValueRef fn)
{
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
            if (LLVMGetTypeKind(LLVMTypeOf(i)) != LLVMVoidTypeKind)
                LLVMReplaceAllUsesWith(i, LLVMGetPoison(LLVMTypeOf(i)));
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetLastInstruction(bb); i;) {
            LLVMValueRef prev = LLVMGetPreviousInstruction(i);
            LLVMInstructionEraseFromParent(i);
            i = prev;
        }
    while (LLVMGetFirstBasicBlock(fn))
        LLVMDeleteBasicBlock(LLVMGetFirstBasicBlock(fn));
}

LLVMValueRef
cg_gemm_emit_shared(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s,
                    const char *name, CgGemmCache *cache, char *err, size_t errlen)
{
    GemmPlan plan;
    if (!gemm_plan_init(&plan, t, isa, s, err, errlen))
        return NULL;
    if (LLVMGetNamedFunction(mod, name)) {
        snprintf(err, errlen, "gemm: function '%s' already exists", name);
        gemm_plan_free(&plan);
        return NULL;
    }
    Gen gg;
    Gen *g = &gg;
    gen_init(g, mod, s, &plan);
    /* a run-time B is an argument, not a constant: never shared */
    char *key = cache && !s->b_runtime ? gemm_key(isa, s, &plan) : NULL;
    GemmShare *sh = NULL;
    for (size_t i = 0; key && i < cache->n && !sh; i++)
        if (strcmp(cache->e[i].key, key) == 0)
            sh = &cache->e[i];
    if (!sh) {
        /* the first GEMM of its kind: its own body, as without a cache */
        add_gemm_function(g, t, name, false);
        add_gemm_constants(g, name);
        emit_gemm_body(g, false);
        if (key && cache->n == cache->cap) {
            size_t cap = cache->cap ? 2 * cache->cap : 16;
            GemmShare *ne = realloc(cache->e, cap * sizeof *ne);
            if (ne) {
                cache->e = ne;
                cache->cap = cap;
            }
        }
        if (key && cache->n < cache->cap) {
            GemmShare *e = &cache->e[cache->n++];
            memset(e, 0, sizeof *e);
            e->key = key;
            key = NULL;
            e->first = g->fn;
            for (int i = 0; i < GEMM_NCONST; i++)
                e->consts[i] = *const_slot(g, i);
            e->zo = s->zo;
            e->qmin = s->qmin;
            e->qmax = s->qmax;
        }
        free(key);
        gemm_plan_free(&plan);
        return g->fn;
    }
    free(key);
    if (!sh->body) {
        /* the second: one shared body taking the constants as a parameter, and the first
         * instance's function becomes a call of it */
        char bname[256];
        size_t flen;
        const char *fname = LLVMGetValueName2(sh->first, &flen);
        snprintf(bname, sizeof bname, "%.*s.shared", (int)flen, fname);
        char first_name[256];
        snprintf(first_name, sizeof first_name, "%.*s", (int)flen, fname);
        sh->consts[GEMM_NCONST - 1] = epi_global(g, first_name, sh->zo, sh->qmin, sh->qmax);
        add_gemm_function(g, t, bname, true);
        LLVMSetLinkage(g->fn, LLVMInternalLinkage);
        LLVMAddAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(g->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
        for (int i = 0; i < GEMM_NCONST; i++) /* which ones the body loads */
            *const_slot(g, i) = sh->consts[i];
        emit_gemm_body(g, true);
        sh->body = g->fn;
        clear_body(sh->first);
        Gen fg = *g;
        fg.fn = sh->first;
        emit_wrapper(&fg, sh->body, sh->consts, first_name);
    }
    /* this instance: its constants and a function that calls the shared body with them */
    add_gemm_function(g, t, name, false);
    add_gemm_constants(g, name);
    g->g_epi = epi_global(g, name, s->zo, s->qmin, s->qmax);
    LLVMValueRef consts[GEMM_NCONST];
    for (int i = 0; i < GEMM_NCONST; i++)
        consts[i] = *const_slot(g, i);
    emit_wrapper(g, sh->body, consts, name);
    gemm_plan_free(&plan);
    return g->fn;
}
