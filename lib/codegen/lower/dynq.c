/* dynq.c: run-time quantization of activations, as explicit vector code split across the
 * parallel-for hook: `dynamic_quantize` (ONNX DynamicQuantizeLinear) here, and the per-row int8
 * quantization that wmatmul's int8-activation mode runs before its GEMM (cg_emit_row_quant_i8).
 *
 * dynamic_quantize (the arithmetic of lib/numerics/dynamic.h, step for step):
 *   1. min and max: each block of DQ_BLOCK elements (a parallel-for unit; the rest in the node
 *      function) keeps vl-lane accumulators mx = (x > mx ? x : mx), mn = (x < mn ? x : mn)
 *      from 0, and whether some x is NaN; its lanes are folded the same way and the block's
 *      result goes to the scratch. Max and min do not depend on the order (no NaN gets in:
 *      a NaN block fails the node), so every split gives the reference's values;
 *   2. the parameters (node function, scalar): NaN anywhere, or a scale that is not positive
 *      and finite, returns QDQC_ERR_RUNTIME as the reference fails; else
 *      scale = mx == mn ? 1 : (mx - mn) / 255, zp = rne(clamp(0 - mn / scale, 0, 255));
 *   3. quantize: per element q = clamp(rne(x / scale) + zp, 0, 255), one f32 division (no
 *      reciprocal), which is qn_quantize_f32 here: no NaN is left and |x / scale| <= 256, so
 *      neither NaN nor the 2^40 bound of its saturation can occur.
 * Per-row int8 activations (qn_row_scale_i8, qn_quantize_row_i8), one parallel-for unit per
 * row: amax = max |x| over the row with the same selects (NaN is never greater, so it is
 * ignored, as in the reference), s = amax / 127 stored as the row's scale, then
 * q = rne(clamp(x / (s > 0 ? s : 1), -127, 127)) with NaN -> 0.
 * Lengths that are not a multiple of vl end with exact-size vectors (qelem_vec.c's pattern),
 * so nothing past the tensor is read or written. */
#include "codegen/lower/lower.h"

#include "codegen/target/isa.h"
#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <math.h>

enum { DQ_BLOCK = 16384 };

static LLVMValueRef
intr1(Kb *k, const char *name, LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    return irb_intr(k->b, k->c, k->mod, name, &t, 1, &v, 1);
}

static LLVMValueRef
fsel(Kb *k, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b, LLVMValueRef t, LLVMValueRef f)
{
    return LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, p, a, b, ""), t, f, "");
}

static LLVMValueRef
vload(Kb *k, LLVMValueRef base, LLVMValueRef i, unsigned lanes, ElemType e)
{
    LLVMTypeRef t = LLVMVectorType(cg_elem_type(k, e), lanes);
    LLVMValueRef p = cg_gep(k, base, cg_mul(k, i, cg_i64(k, (int64_t)elem_size(e))));
    return irb_load(&k->ir, t, p, (unsigned)elem_size(e));
}

/* Running max / min / NaN flag of `lanes` floats (accumulators in allocas of that width). */
typedef struct MinMax {
    LLVMValueRef mx, mn, nan; /* allocas: <lanes x f32>, <lanes x f32>, <lanes x i1> */
    unsigned lanes;
} MinMax;

static void
mm_init(Kb *k, MinMax *m, unsigned lanes)
{
    LLVMTypeRef vf = LLVMVectorType(k->f32, lanes), vb = LLVMVectorType(k->i1, lanes);
    m->lanes = lanes;
    m->mx = cg_entry_alloca(k, vf);
    m->mn = cg_entry_alloca(k, vf);
    m->nan = cg_entry_alloca(k, vb);
    LLVMBuildStore(k->b, LLVMConstNull(vf), m->mx);
    LLVMBuildStore(k->b, LLVMConstNull(vf), m->mn);
    LLVMBuildStore(k->b, LLVMConstNull(vb), m->nan);
}

/* Fold v (<lanes x f32>) into the accumulators: the reference's x > mx / x < mn selects. */
static void
mm_step(Kb *k, MinMax *m, LLVMValueRef v)
{
    LLVMTypeRef vf = LLVMVectorType(k->f32, m->lanes), vb = LLVMVectorType(k->i1, m->lanes);
    LLVMValueRef mx = LLVMBuildLoad2(k->b, vf, m->mx, ""), mn = LLVMBuildLoad2(k->b, vf, m->mn, "");
    LLVMBuildStore(k->b, fsel(k, LLVMRealOGT, v, mx, v, mx), m->mx);
    LLVMBuildStore(k->b, fsel(k, LLVMRealOLT, v, mn, v, mn), m->mn);
    LLVMValueRef nan = LLVMBuildLoad2(k->b, vb, m->nan, "");
    LLVMBuildStore(k->b, LLVMBuildOr(k->b, nan, LLVMBuildFCmp(k->b, LLVMRealUNO, v, v, ""), ""), m->nan);
}

/* The accumulators' lanes folded to scalars, combined into (*mx, *mn, *nan). */
static void
mm_fold(Kb *k, const MinMax *m, LLVMValueRef *mx, LLVMValueRef *mn, LLVMValueRef *nan)
{
    LLVMTypeRef vf = LLVMVectorType(k->f32, m->lanes), vb = LLVMVectorType(k->i1, m->lanes);
    LLVMValueRef vmx = LLVMBuildLoad2(k->b, vf, m->mx, ""), vmn = LLVMBuildLoad2(k->b, vf, m->mn, "");
    LLVMValueRef vn = LLVMBuildLoad2(k->b, vb, m->nan, "");
    for (unsigned l = 0; l < m->lanes; l++) {
        LLVMValueRef i = cg_i32(k, l);
        LLVMValueRef a = LLVMBuildExtractElement(k->b, vmx, i, "");
        LLVMValueRef b = LLVMBuildExtractElement(k->b, vmn, i, "");
        *mx = fsel(k, LLVMRealOGT, a, *mx, a, *mx);
        *mn = fsel(k, LLVMRealOLT, b, *mn, b, *mn);
        *nan = LLVMBuildOr(k->b, *nan, LLVMBuildExtractElement(k->b, vn, i, ""), "");
    }
}

/* Max, min and NaN flag of x[from, from + count) (count known) into *mx, *mn, *nan (scalars,
 * combined with what they hold). */
static void
minmax_range(Kb *k, LLVMValueRef x, LLVMValueRef from, int64_t count, unsigned vl,
             LLVMValueRef *mx, LLVMValueRef *mn, LLVMValueRef *nan)
{
    int64_t nv = count / vl, c = nv * vl;
    if (nv > 0) {
        MinMax m;
        mm_init(k, &m, vl);
        CgLoop l;
        LLVMValueRef j = cg_loop_begin(k, &l, cg_i64(k, nv));
        mm_step(k, &m, vload(k, x, cg_add(k, from, cg_mul(k, j, cg_i64(k, vl))), vl, ET_F32));
        cg_loop_end(k, &l);
        mm_fold(k, &m, mx, mn, nan);
    }
    for (unsigned w = vl / 2; w >= 1; w /= 2)
        if (count - c >= (int64_t)w) {
            MinMax m;
            mm_init(k, &m, w);
            mm_step(k, &m, vload(k, x, cg_add(k, from, cg_i64(k, c)), w, ET_F32));
            mm_fold(k, &m, mx, mn, nan);
            c += w;
        }
}

/* y[i, i + w) = clamp(rne(x / scale) + zp, 0, 255) as u8 (scale f32, zp i32 scalars). */
static void
quant_vec(Kb *k, LLVMValueRef x, LLVMValueRef y, LLVMValueRef i, unsigned w, LLVMValueRef scale,
          LLVMValueRef zp)
{
    LLVMTypeRef vi = LLVMVectorType(k->i32, w);
    LLVMValueRef v = LLVMBuildFDiv(k->b, vload(k, x, i, w, ET_F32), cg_vsplat(k, scale, w), "");
    v = LLVMBuildFPToSI(k->b, intr1(k, "llvm.roundeven", v), vi, "");
    v = LLVMBuildAdd(k->b, v, cg_vsplat(k, zp, w), "");
    LLVMValueRef lo = LLVMConstNull(vi), hi = cg_vsplat(k, cg_i32(k, 255), w);
    v = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLT, v, lo, ""), lo, v, "");
    v = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSGT, v, hi, ""), hi, v, "");
    irb_store(&k->ir, LLVMBuildTrunc(k->b, v, LLVMVectorType(k->i8, w), ""), cg_gep(k, y, i), 1);
}

/* quant_vec over [from, from + count) (count known): full vectors in a loop, then pieces. */
static void
quant_range(Kb *k, LLVMValueRef x, LLVMValueRef y, LLVMValueRef from, int64_t count, unsigned vl,
            LLVMValueRef scale, LLVMValueRef zp)
{
    int64_t nv = count / vl, c = nv * vl;
    if (nv > 0) {
        CgLoop l;
        LLVMValueRef j = cg_loop_begin(k, &l, cg_i64(k, nv));
        quant_vec(k, x, y, cg_add(k, from, cg_mul(k, j, cg_i64(k, vl))), vl, scale, zp);
        cg_loop_end(k, &l);
    }
    for (unsigned w = vl / 2; w >= 1; w /= 2)
        if (count - c >= (int64_t)w) {
            quant_vec(k, x, y, cg_add(k, from, cg_i64(k, c)), w, scale, zp);
            c += w;
        }
}

int64_t
cg_dynq_scratch(Kb *k, Node *n)
{
    int64_t nb = (int64_t)type_numel_unchecked(&ir_value(k->g, n->in[0])->type) / DQ_BLOCK;
    return nb * 16;
}

/* Return QDQC_ERR_RUNTIME from the node function when `bad` holds. */
static void
fail_if(Kb *k, LLVMValueRef bad)
{
    cg_ret_if(k, bad, cg_i32(k, QDQC_ERR_RUNTIME), "dynq_fail");
}

bool
cg_emit_dynamic_quantize(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *xt = &ir_value(k->g, n->in[0])->type;
    if (xt->elem != ET_F32)
        return cg_fail(k, n, "dynamic_quantize: the input must be f32");
    unsigned vl = cg_isa_i32_lanes(k->t, k->isa);
    int64_t total = (int64_t)type_numel_unchecked(xt), nb = total / DQ_BLOCK;
    LLVMValueRef zero = cg_f32(k, 0.0f), no = LLVMConstInt(k->i1, 0, 0);
    /* 1. max, min, NaN: whole blocks in parallel into the scratch (16 bytes each), then the
     * rest here, then the blocks' results folded in */
    if (nb > 0) {
        Par par;
        LLVMValueRef io[2] = {a->in[0], a->scratch};
        LLVMValueRef blk = cg_par_begin(k, &par, nb, io, 2);
        if (vl == 16)
            cg_function_set_target(par.fn, k->t, 512);
        LLVMValueRef mx = zero, mn = zero, nan = no;
        minmax_range(k, io[0], cg_mul(k, blk, cg_i64(k, DQ_BLOCK)), DQ_BLOCK, vl, &mx, &mn, &nan);
        LLVMValueRef slot = cg_gep(k, io[1], cg_mul(k, blk, cg_i64(k, 16)));
        LLVMBuildStore(k->b, mx, slot);
        LLVMBuildStore(k->b, mn, cg_gep(k, slot, cg_i64(k, 4)));
        LLVMBuildStore(k->b, LLVMBuildZExt(k->b, nan, k->i32, ""), cg_gep(k, slot, cg_i64(k, 8)));
        cg_par_end(k, &par, a);
    }
    LLVMValueRef mx = zero, mn = zero, nan = no;
    minmax_range(k, a->in[0], cg_i64(k, nb * DQ_BLOCK), total - nb * DQ_BLOCK, vl, &mx, &mn, &nan);
    if (nb > 0) {
        LLVMValueRef pmx = cg_entry_alloca(k, k->f32), pmn = cg_entry_alloca(k, k->f32);
        LLVMValueRef pnan = cg_entry_alloca(k, k->i1);
        LLVMBuildStore(k->b, mx, pmx);
        LLVMBuildStore(k->b, mn, pmn);
        LLVMBuildStore(k->b, nan, pnan);
        CgLoop l;
        LLVMValueRef slot = cg_gep(k, a->scratch, cg_mul(k, cg_loop_begin(k, &l, cg_i64(k, nb)), cg_i64(k, 16)));
        LLVMValueRef bmx = LLVMBuildLoad2(k->b, k->f32, slot, "");
        LLVMValueRef bmn = LLVMBuildLoad2(k->b, k->f32, cg_gep(k, slot, cg_i64(k, 4)), "");
        LLVMValueRef bnan = LLVMBuildLoad2(k->b, k->i32, cg_gep(k, slot, cg_i64(k, 8)), "");
        LLVMValueRef cmx = LLVMBuildLoad2(k->b, k->f32, pmx, ""), cmn = LLVMBuildLoad2(k->b, k->f32, pmn, "");
        LLVMBuildStore(k->b, fsel(k, LLVMRealOGT, bmx, cmx, bmx, cmx), pmx);
        LLVMBuildStore(k->b, fsel(k, LLVMRealOLT, bmn, cmn, bmn, cmn), pmn);
        LLVMBuildStore(k->b, LLVMBuildOr(k->b, LLVMBuildLoad2(k->b, k->i1, pnan, ""),
                                         LLVMBuildICmp(k->b, LLVMIntNE, bnan, cg_i32(k, 0), ""), ""),
                       pnan);
        cg_loop_end(k, &l);
        mx = LLVMBuildLoad2(k->b, k->f32, pmx, "");
        mn = LLVMBuildLoad2(k->b, k->f32, pmn, "");
        nan = LLVMBuildLoad2(k->b, k->i1, pnan, "");
    }
    /* 2. the parameters (qn_dynamic_qparams) */
    fail_if(k, nan);
    LLVMValueRef scale = fsel(k, LLVMRealOEQ, mx, mn, cg_f32(k, 1.0f),
                              LLVMBuildFDiv(k->b, LLVMBuildFSub(k->b, mx, mn, ""), cg_f32(k, 255.0f), ""));
    fail_if(k, LLVMBuildNot(k->b, LLVMBuildAnd(k->b, LLVMBuildFCmp(k->b, LLVMRealOGT, scale, zero, ""),
                                               LLVMBuildFCmp(k->b, LLVMRealOLT, scale, cg_f32(k, INFINITY), ""), ""), ""));
    LLVMValueRef izp = LLVMBuildFSub(k->b, zero, LLVMBuildFDiv(k->b, mn, scale, ""), "");
    izp = fsel(k, LLVMRealOLT, izp, zero, zero, izp);
    izp = fsel(k, LLVMRealOGT, izp, cg_f32(k, 255.0f), cg_f32(k, 255.0f), izp);
    LLVMValueRef zp = LLVMBuildFPToSI(k->b, intr1(k, "llvm.roundeven", izp), k->i32, "");
    LLVMBuildStore(k->b, scale, a->out[1]);
    LLVMBuildStore(k->b, LLVMBuildTrunc(k->b, zp, k->i8, ""), a->out[2]);
    /* 3. quantize: blocks in parallel, then the rest */
    if (nb > 0) {
        Par par;
        LLVMValueRef sp = cg_entry_alloca(k, k->f32), zpp = cg_entry_alloca(k, k->i32);
        LLVMBuildStore(k->b, scale, sp);
        LLVMBuildStore(k->b, zp, zpp);
        LLVMValueRef io[4] = {a->in[0], a->out[0], sp, zpp};
        LLVMValueRef blk = cg_par_begin(k, &par, nb, io, 4);
        if (vl == 16)
            cg_function_set_target(par.fn, k->t, 512);
        quant_range(k, io[0], io[1], cg_mul(k, blk, cg_i64(k, DQ_BLOCK)), DQ_BLOCK, vl,
                    LLVMBuildLoad2(k->b, k->f32, io[2], ""), LLVMBuildLoad2(k->b, k->i32, io[3], ""));
        cg_par_end(k, &par, a);
    }
    quant_range(k, a->in[0], a->out[0], cg_i64(k, nb * DQ_BLOCK), total - nb * DQ_BLOCK, vl, scale, zp);
    return true;
}

/* ---- per-row int8 activations (wmatmul acts="i8") ---- */

/* The row's |x| maximum (NaN ignored: x > m is false) over K elements at x (count known). */
static LLVMValueRef
row_amax(Kb *k, LLVMValueRef x, int64_t K, unsigned vl)
{
    LLVMValueRef amax = cg_f32(k, 0.0f);
    int64_t nv = K / vl, c = nv * vl;
    for (unsigned w = vl; w >= 1; w /= 2) {
        int64_t cnt = w == vl ? nv : (K - c >= (int64_t)w ? 1 : 0);
        if (!cnt)
            continue;
        LLVMTypeRef vf = LLVMVectorType(k->f32, w);
        LLVMValueRef acc = cg_entry_alloca(k, vf);
        LLVMBuildStore(k->b, LLVMConstNull(vf), acc);
        CgLoop l;
        LLVMValueRef i = w == vl ? cg_mul(k, cg_loop_begin(k, &l, cg_i64(k, cnt)), cg_i64(k, vl))
                                 : cg_i64(k, c);
        LLVMValueRef v = intr1(k, "llvm.fabs", vload(k, x, i, w, ET_F32));
        LLVMValueRef m = LLVMBuildLoad2(k->b, vf, acc, "");
        LLVMBuildStore(k->b, fsel(k, LLVMRealOGT, v, m, v, m), acc);
        if (w == vl)
            cg_loop_end(k, &l);
        else
            c += w;
        LLVMValueRef m2 = LLVMBuildLoad2(k->b, vf, acc, "");
        for (unsigned l2 = 0; l2 < w; l2++) {
            LLVMValueRef e = LLVMBuildExtractElement(k->b, m2, cg_i32(k, l2), "");
            amax = fsel(k, LLVMRealOGT, e, amax, e, amax);
        }
    }
    return amax;
}

/* q[i, i + w) = qn_quantize_row_i8(x, s) with d = (s > 0 ? s : 1): x / d, NaN -> 0, clamped to
 * [-127, 127] (integers, so clamping before the rounding is the same), rne. */
static void
rowq_vec(Kb *k, LLVMValueRef x, LLVMValueRef q, LLVMValueRef i, unsigned w, LLVMValueRef d)
{
    LLVMTypeRef vf = LLVMVectorType(k->f32, w);
    LLVMValueRef v = LLVMBuildFDiv(k->b, vload(k, x, i, w, ET_F32), cg_vsplat(k, d, w), "");
    LLVMValueRef lo = cg_vsplat(k, cg_f32(k, -127.0f), w), hi = cg_vsplat(k, cg_f32(k, 127.0f), w);
    v = LLVMBuildSelect(k->b, LLVMBuildFCmp(k->b, LLVMRealUNO, v, v, ""), LLVMConstNull(vf), v, "");
    v = fsel(k, LLVMRealOLT, v, lo, lo, v);
    v = fsel(k, LLVMRealOGT, v, hi, hi, v);
    v = LLVMBuildFPToSI(k->b, intr1(k, "llvm.roundeven", v), LLVMVectorType(k->i8, w), "");
    irb_store(&k->ir, v, cg_gep(k, q, i), 1);
}

void
cg_emit_row_quant_i8(Kb *k, LLVMValueRef x, LLVMValueRef q, LLVMValueRef scales, int64_t M,
                     int64_t K, const CgNodeArgs *a)
{
    unsigned vl = cg_isa_i32_lanes(k->t, k->isa);
    Par par;
    LLVMValueRef io[3] = {x, q, scales};
    LLVMValueRef m = cg_par_begin(k, &par, M, io, 3);
    if (vl == 16)
        cg_function_set_target(par.fn, k->t, 512);
    LLVMValueRef xr = cg_gep(k, io[0], cg_mul(k, m, cg_i64(k, K * 4)));
    LLVMValueRef qr = cg_gep(k, io[1], cg_mul(k, m, cg_i64(k, K)));
    LLVMValueRef s = LLVMBuildFDiv(k->b, row_amax(k, xr, K, vl), cg_f32(k, 127.0f), "");
    LLVMBuildStore(k->b, s, cg_gep(k, io[2], cg_mul(k, m, cg_i64(k, 4))));
    LLVMValueRef d = fsel(k, LLVMRealOGT, s, cg_f32(k, 0.0f), s, cg_f32(k, 1.0f));
    int64_t nv = K / vl, c = nv * vl;
    if (nv > 0) {
        CgLoop l;
        LLVMValueRef j = cg_loop_begin(k, &l, cg_i64(k, nv));
        rowq_vec(k, xr, qr, cg_mul(k, j, cg_i64(k, vl)), vl, d);
        cg_loop_end(k, &l);
    }
    for (unsigned w = vl / 2; w >= 1; w /= 2)
        if (K - c >= (int64_t)w) {
            rowq_vec(k, xr, qr, cg_i64(k, c), w, d);
            c += w;
        }
    cg_par_end(k, &par, a);
}
