/* float_math.c: lib/numerics/fmath.c's f32 sequences as LLVM IR, and the element-wise
 * float-island kernel built on them (sigmoid, tanh, erf, gelu, exp, log, sqrt, reciprocal,
 * neg, abs, pow, min, max, and the piecewise-linear relu, leaky_relu, hard_sigmoid,
 * hard_swish).
 *
 * Every fm_* function emits, operation for operation, the C function it names (fmath.h gives
 * the sequences): plain fadd/fsub/fmul/fdiv without fast-math flags (LLVM never contracts
 * those into an FMA), comparisons and selects where the C has branches (both sides are
 * computed, the C's branch chooses), integer operations on the bits. They work on a scalar or
 * on a vector of any width, so a kernel's vector body and scalar tail agree, and the reference
 * interpreter equals every ISA path bit for bit.
 *
 * The kernel: element-wise over contiguous memory when every operand is the full tensor or one
 * element (the common case of a float island), in blocks of FM_BLOCK elements split across the
 * parallel-for hook, fm_lanes() lanes per vector and a scalar tail; f32 operands broadcast along
 * leading axes (a bias, a mask, a per-row scale) as rows of the same vectors (fe_rows); other
 * broadcasts (a row under fm_lanes() elements), or integer operands, a scalar loop nest with the
 * same sequences. Also add/sub/mul/div/prelu on f32 (float_elem.c), one f32 operation each. */
#include "codegen/lower/float_math.h"

#include "codegen/target/isa.h"
#include "codegen/target/module.h"
#include "numerics/fmath.h"

#include <llvm-c/Core.h>

#include <float.h>
#include <math.h>
#include <string.h>

#define FM_BLOCK 4096

unsigned
fm_lanes(Kb *k)
{
    return cg_isa_i32_lanes(k->t, k->isa);
}

/* ---- types and constants ---- */

static unsigned
nlanes(LLVMTypeRef t)
{
    return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 0;
}

static LLVMTypeRef
like(LLVMTypeRef t, LLVMTypeRef elem)
{
    unsigned n = nlanes(t);
    return n ? LLVMVectorType(elem, n) : elem;
}

static LLVMValueRef
splat_const(LLVMTypeRef t, LLVMValueRef c)
{
    unsigned n = nlanes(t);
    if (!n)
        return c;
    LLVMValueRef v[64];
    for (unsigned i = 0; i < n; i++)
        v[i] = c;
    return LLVMConstVector(v, n);
}

LLVMValueRef
fm_const(Kb *k, LLVMTypeRef t, double c)
{
    (void)k;
    LLVMTypeRef e = nlanes(t) ? LLVMGetElementType(t) : t;
    return splat_const(t, LLVMConstReal(e, c));
}

static LLVMValueRef
iconst(LLVMTypeRef t, long long c)
{
    LLVMTypeRef e = nlanes(t) ? LLVMGetElementType(t) : t;
    return splat_const(t, LLVMConstInt(e, (unsigned long long)c, 1));
}

/* ---- operation shorthands (one IR instruction each) ---- */

#define T(v) LLVMTypeOf(v)
static LLVMValueRef fadd(Kb *k, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(k->b, a, b, ""); }
static LLVMValueRef fsub(Kb *k, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(k->b, a, b, ""); }
static LLVMValueRef fmul(Kb *k, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(k->b, a, b, ""); }
static LLVMValueRef fdiv(Kb *k, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(k->b, a, b, ""); }
static LLVMValueRef fcmp(Kb *k, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFCmp(k->b, p, a, b, ""); }
static LLVMValueRef sel(Kb *k, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildSelect(k->b, c, a, b, ""); }
static LLVMValueRef bc(Kb *k, LLVMValueRef v, LLVMTypeRef t) { return LLVMBuildBitCast(k->b, v, t, ""); }
static LLVMValueRef fc(Kb *k, LLVMValueRef like_v, double c) { return fm_const(k, T(like_v), c); }

static LLVMValueRef
intr1(Kb *k, const char *name, LLVMValueRef x)
{
    LLVMTypeRef t = T(x);
    return irb_intr(k->b, k->c, k->mod, name, &t, 1, &x, 1);
}

static LLVMValueRef
horner(Kb *k, const float *c, int n, LLVMValueRef t)
{
    LLVMValueRef p = fc(k, t, c[0]);
    for (int i = 1; i < n; i++)
        p = fadd(k, fmul(k, p, t), fc(k, t, c[i]));
    return p;
}

/* fmath.c copysign_bits(r, x): r's magnitude with x's sign bit */
static LLVMValueRef
copysign_bits(Kb *k, LLVMValueRef r, LLVMValueRef x)
{
    LLVMTypeRef it = like(T(x), k->i32);
    LLVMValueRef m = LLVMBuildAnd(k->b, bc(k, r, it), iconst(it, 0x7fffffff), "");
    LLVMValueRef s = LLVMBuildAnd(k->b, bc(k, x, it), iconst(it, (long long)0x80000000u), "");
    return bc(k, LLVMBuildOr(k->b, m, s, ""), T(x));
}

/* 2^e for an i32 exponent e in [-126, 127], as f32 bits */
static LLVMValueRef
pow2(Kb *k, LLVMValueRef e, LLVMTypeRef ft)
{
    LLVMValueRef b = LLVMBuildShl(k->b, LLVMBuildAdd(k->b, e, iconst(T(e), 127), ""),
                                  iconst(T(e), 23), "");
    return bc(k, b, ft);
}

/* ---- the sequences of fmath.c ---- */

LLVMValueRef
fm_exp(Kb *k, LLVMValueRef x)
{
    LLVMTypeRef ft = T(x), it = like(ft, k->i32);
    x = sel(k, fcmp(k, LLVMRealOLT, x, fc(k, x, QN_EXP_LO)), fc(k, x, QN_EXP_LO), x);
    x = sel(k, fcmp(k, LLVMRealOGT, x, fc(k, x, QN_EXP_HI)), fc(k, x, QN_EXP_HI), x);
    LLVMValueRef t = fadd(k, fmul(k, x, fc(k, x, QN_LOG2E)), fc(k, x, QN_RNE_MAGIC));
    LLVMValueRef n = fsub(k, t, fc(k, x, QN_RNE_MAGIC));
    uint32_t mb;
    float magic = QN_RNE_MAGIC;
    memcpy(&mb, &magic, sizeof mb);
    LLVMValueRef ni = LLVMBuildSub(k->b, bc(k, t, it), iconst(it, mb), "");
    ni = sel(k, fcmp(k, LLVMRealUNO, x, x), iconst(it, 0), ni);
    LLVMValueRef r = fsub(k, x, fmul(k, n, fc(k, x, QN_LN2_HI)));
    r = fsub(k, r, fmul(k, n, fc(k, x, QN_LN2_LO)));
    LLVMValueRef p = horner(k, qn_exp_p, QN_EXP_NP, r);
    LLVMValueRef e = fadd(k, fadd(k, fmul(k, fmul(k, p, r), r), r), fc(k, x, 1.0));
    LLVMValueRef h = LLVMBuildAShr(k->b, ni, iconst(it, 1), "");
    LLVMValueRef s1 = pow2(k, h, ft), s2 = pow2(k, LLVMBuildSub(k->b, ni, h, ""), ft);
    return fmul(k, fmul(k, e, s1), s2);
}

LLVMValueRef
fm_log(Kb *k, LLVMValueRef x0)
{
    LLVMTypeRef ft = T(x0), it = like(ft, k->i32);
    LLVMValueRef sub = fcmp(k, LLVMRealOLT, x0, fc(k, x0, FLT_MIN));
    LLVMValueRef x = sel(k, sub, fmul(k, x0, fc(k, x0, 8388608.0)), x0);
    LLVMValueRef adj = sel(k, sub, iconst(it, -23), iconst(it, 0));
    LLVMValueRef b = bc(k, x, it);
    LLVMValueRef e = LLVMBuildAdd(k->b, LLVMBuildSub(k->b, LLVMBuildLShr(k->b, b, iconst(it, 23), ""),
                                                     iconst(it, 127), ""), adj, "");
    LLVMValueRef m = bc(k, LLVMBuildOr(k->b, LLVMBuildAnd(k->b, b, iconst(it, 0x007fffff), ""),
                                       iconst(it, 0x3f800000), ""), ft);
    LLVMValueRef big = fcmp(k, LLVMRealOGT, m, fc(k, x, QN_SQRT2));
    LLVMValueRef f = sel(k, big, fsub(k, fmul(k, m, fc(k, x, 0.5)), fc(k, x, 1.0)),
                         fsub(k, m, fc(k, x, 1.0)));
    e = LLVMBuildAdd(k->b, e, LLVMBuildZExt(k->b, big, it, ""), "");
    LLVMValueRef fe = LLVMBuildSIToFP(k->b, e, ft, "");
    LLVMValueRef z = fmul(k, f, f);
    LLVMValueRef p = horner(k, qn_log_p, QN_LOG_NP, f);
    LLVMValueRef y = fmul(k, fmul(k, p, f), z);
    y = fadd(k, y, fmul(k, fe, fc(k, x, QN_LN2_LO)));
    y = fadd(k, y, fmul(k, fc(k, x, -0.5), z));
    LLVMValueRef r = fadd(k, fadd(k, f, y), fmul(k, fe, fc(k, x, QN_LN2_HI)));
    r = sel(k, fcmp(k, LLVMRealOEQ, x0, fc(k, x0, INFINITY)), fc(k, x0, INFINITY), r);
    r = sel(k, fcmp(k, LLVMRealOEQ, x0, fc(k, x0, 0.0)), fc(k, x0, -INFINITY), r);
    LLVMValueRef bad = fcmp(k, LLVMRealULT, x0, fc(k, x0, 0.0)); /* NaN or < 0 */
    return sel(k, bad, fc(k, x0, NAN), r);
}

LLVMValueRef
fm_tanh(Kb *k, LLVMValueRef x)
{
    LLVMValueRef a = intr1(k, "llvm.fabs", x);
    LLVMValueRef z = fmul(k, a, a);
    LLVMValueRef p = horner(k, qn_tanh_p, QN_TANH_NP, z);
    LLVMValueRef ts = fadd(k, fmul(k, fmul(k, p, z), a), a);
    LLVMValueRef e = fm_exp(k, fadd(k, a, a));
    LLVMValueRef tl = fsub(k, fc(k, x, 1.0), fdiv(k, fc(k, x, 2.0), fadd(k, e, fc(k, x, 1.0))));
    LLVMValueRef t = sel(k, fcmp(k, LLVMRealOLT, a, fc(k, x, QN_TANH_SMALL)), ts, tl);
    return copysign_bits(k, t, x);
}

LLVMValueRef
fm_sigmoid(Kb *k, LLVMValueRef x)
{
    LLVMValueRef e = fm_exp(k, LLVMBuildFNeg(k->b, intr1(k, "llvm.fabs", x), ""));
    LLVMValueRef num = sel(k, fcmp(k, LLVMRealOLT, x, fc(k, x, 0.0)), e, fc(k, x, 1.0));
    return fdiv(k, num, fadd(k, fc(k, x, 1.0), e));
}

/* erfc(a) = exp(L(a)) of the range [1, QN_ERF_BIG) */
static LLVMValueRef
erfc_large(Kb *k, LLVMValueRef a)
{
    return fm_exp(k, horner(k, qn_erf_l, QN_ERF_NL, a));
}

LLVMValueRef
fm_erf(Kb *k, LLVMValueRef x)
{
    LLVMValueRef a = intr1(k, "llvm.fabs", x);
    LLVMValueRef ts = fadd(k, a, fmul(k, a, horner(k, qn_erf_s, QN_ERF_NS, fmul(k, a, a))));
    LLVMValueRef tl = fsub(k, fc(k, x, 1.0), erfc_large(k, a));
    LLVMValueRef tb = sel(k, fcmp(k, LLVMRealUNO, x, x), x, fc(k, x, 1.0));
    LLVMValueRef t = sel(k, fcmp(k, LLVMRealOLT, a, fc(k, x, QN_ERF_BIG)), tl, tb);
    t = sel(k, fcmp(k, LLVMRealOLT, a, fc(k, x, 1.0)), ts, t);
    return copysign_bits(k, t, x);
}

LLVMValueRef
fm_gelu_erf(Kb *k, LLVMValueRef x)
{
    LLVMValueRef z = fmul(k, x, fc(k, x, QN_SQRT1_2));
    LLVMValueRef a = intr1(k, "llvm.fabs", z);
    LLVMValueRef neg = fcmp(k, LLVMRealOLT, z, fc(k, x, 0.0));
    LLVMValueRef ps = horner(k, qn_erf_s, QN_ERF_NS, fmul(k, z, z));
    LLVMValueRef ws = fadd(k, fc(k, x, 1.0), fadd(k, z, fmul(k, z, ps)));
    LLVMValueRef c = erfc_large(k, a);
    LLVMValueRef wl = sel(k, neg, c, fsub(k, fc(k, x, 2.0), c));
    LLVMValueRef wb = sel(k, fcmp(k, LLVMRealUNO, z, z), z,
                          sel(k, neg, fc(k, x, 0.0), fc(k, x, 2.0)));
    LLVMValueRef w = sel(k, fcmp(k, LLVMRealOLT, a, fc(k, x, QN_ERF_BIG)), wl, wb);
    w = sel(k, fcmp(k, LLVMRealOLT, a, fc(k, x, 1.0)), ws, w);
    return fmul(k, fmul(k, fc(k, x, 0.5), x), w);
}

LLVMValueRef
fm_gelu_tanh(Kb *k, LLVMValueRef x)
{
    LLVMValueRef x3 = fmul(k, fmul(k, x, x), x);
    LLVMValueRef u = fadd(k, x, fmul(k, fc(k, x, QN_GELU_K), x3));
    return fmul(k, x, fm_sigmoid(k, fmul(k, fc(k, x, QN_GELU_2C), u)));
}

/* qn_pow_f64(a, y) on f64 values (or vectors) */
static LLVMValueRef
pow_f64(Kb *k, LLVMValueRef a, LLVMValueRef y)
{
    LLVMTypeRef dt = T(a), it = like(dt, k->i64);
    LLVMValueRef b = bc(k, a, it);
    LLVMValueRef e = LLVMBuildSub(k->b, LLVMBuildLShr(k->b, b, iconst(it, 52), ""), iconst(it, 1023), "");
    LLVMValueRef mb = LLVMBuildOr(k->b, LLVMBuildAnd(k->b, b, iconst(it, 0x000fffffffffffffLL), ""),
                                  iconst(it, 0x3ff0000000000000LL), "");
    LLVMValueRef m = bc(k, mb, dt);
    LLVMValueRef big = fcmp(k, LLVMRealOGT, m, fc(k, a, QN_D_SQRT2));
    m = sel(k, big, fmul(k, m, fc(k, a, 0.5)), m);
    e = LLVMBuildAdd(k->b, e, LLVMBuildZExt(k->b, big, it, ""), "");
    LLVMValueRef s = fdiv(k, fsub(k, m, fc(k, a, 1.0)), fadd(k, m, fc(k, a, 1.0)));
    LLVMValueRef s2 = fmul(k, s, s);
    LLVMValueRef q = fc(k, a, 1.0 / (2 * (QN_PLOG_N - 1) + 1));
    for (int i = QN_PLOG_N - 2; i >= 0; i--)
        q = fadd(k, fmul(k, q, s2), fc(k, a, 1.0 / (2 * i + 1)));
    LLVMValueRef l = fadd(k, fmul(k, fadd(k, s, s), q),
                          fmul(k, LLVMBuildSIToFP(k->b, e, dt, ""), fc(k, a, QN_D_LN2)));
    LLVMValueRef t = fmul(k, y, l);
    t = sel(k, fcmp(k, LLVMRealOLT, t, fc(k, a, -110.0)), fc(k, a, -110.0), t);
    t = sel(k, fcmp(k, LLVMRealOGT, t, fc(k, a, 100.0)), fc(k, a, 100.0), t);
    LLVMValueRef tt = fadd(k, fmul(k, t, fc(k, a, QN_D_LOG2E)), fc(k, a, QN_D_RNE_MAGIC));
    LLVMValueRef n = fsub(k, tt, fc(k, a, QN_D_RNE_MAGIC));
    double magic = QN_D_RNE_MAGIC;
    uint64_t kb;
    memcpy(&kb, &magic, sizeof kb);
    LLVMValueRef ni = LLVMBuildSub(k->b, bc(k, tt, it), iconst(it, (long long)kb), "");
    LLVMValueRef r = fsub(k, t, fmul(k, n, fc(k, a, QN_D_LN2_HI)));
    r = fsub(k, r, fmul(k, n, fc(k, a, QN_D_LN2_LO)));
    const double *c = qn_pexp_coeffs();
    LLVMValueRef p = fc(k, a, c[QN_PEXP_N - 1]);
    for (int i = QN_PEXP_N - 2; i >= 0; i--)
        p = fadd(k, fmul(k, p, r), fc(k, a, c[i]));
    LLVMValueRef sc = bc(k, LLVMBuildShl(k->b, LLVMBuildAdd(k->b, ni, iconst(it, 1023), ""),
                                         iconst(it, 52), ""), dt);
    return fmul(k, p, sc);
}

/* fmath.c qn_powf: the C's checks become selects applied in reverse order (the first check
 * wins). With a constant y LLVM folds all but one case. */
LLVMValueRef
fm_pow(Kb *k, LLVMValueRef x, LLVMValueRef y)
{
    LLVMTypeRef ft = T(x), it = like(ft, k->i32), dt = like(ft, k->f64);
    LLVMValueRef ax = intr1(k, "llvm.fabs", x), ay = intr1(k, "llvm.fabs", y);
    LLVMValueRef big23 = fcmp(k, LLVMRealOGE, ay, fc(k, x, 8388608.0));
    LLVMValueRef yi = LLVMBuildFPToSI(k->b, sel(k, fcmp(k, LLVMRealOLT, ay, fc(k, x, 8388608.0)), y, fc(k, x, 0)), it, "");
    LLVMValueRef yint = LLVMBuildOr(k->b, big23, fcmp(k, LLVMRealOEQ, LLVMBuildSIToFP(k->b, yi, ft, ""), y), "");
    LLVMValueRef small24 = fcmp(k, LLVMRealOLT, ay, fc(k, x, 16777216.0));
    LLVMValueRef yo = LLVMBuildFPToSI(k->b, sel(k, small24, y, fc(k, x, 0)), it, "");
    LLVMValueRef odd = LLVMBuildICmp(k->b, LLVMIntNE, LLVMBuildAnd(k->b, yo, iconst(it, 1), ""), iconst(it, 0), "");
    LLVMValueRef yodd = LLVMBuildAnd(k->b, yint, LLVMBuildAnd(k->b, small24, odd, ""), "");
    LLVMValueRef sgn = LLVMBuildICmp(k->b, LLVMIntSLT, bc(k, x, it), iconst(it, 0), "");
    LLVMValueRef neg = LLVMBuildAnd(k->b, sgn, yodd, "");
    LLVMValueRef ypos = fcmp(k, LLVMRealOGT, y, fc(k, x, 0.0));
    LLVMValueRef inf = fc(k, x, INFINITY), zero = fc(k, x, 0.0), one = fc(k, x, 1.0);
    LLVMValueRef r = LLVMBuildFPTrunc(k->b, pow_f64(k, LLVMBuildFPExt(k->b, ax, dt, ""),
                                                    LLVMBuildFPExt(k->b, y, dt, "")), ft, "");
    r = sel(k, fcmp(k, LLVMRealOEQ, ax, inf), sel(k, ypos, inf, zero), r);
    r = sel(k, fcmp(k, LLVMRealOEQ, ax, zero), sel(k, ypos, zero, inf), r);
    r = sel(k, neg, LLVMBuildFNeg(k->b, r, ""), r);
    LLVMValueRef lt1 = fcmp(k, LLVMRealOLT, ax, one);
    LLVMValueRef infy = sel(k, fcmp(k, LLVMRealOEQ, ax, one), one,
                            sel(k, LLVMBuildICmp(k->b, LLVMIntEQ, lt1, ypos, ""), zero, inf));
    r = sel(k, fcmp(k, LLVMRealOEQ, ay, inf), infy, r);
    LLVMValueRef negx = fcmp(k, LLVMRealOLT, x, zero);
    r = sel(k, LLVMBuildAnd(k->b, negx, LLVMBuildNot(k->b, yint, ""), ""), fc(k, x, NAN), r);
    LLVMValueRef sq = fadd(k, intr1(k, "llvm.sqrt", x), zero);
    sq = sel(k, fcmp(k, LLVMRealOEQ, x, fc(k, x, -INFINITY)), inf, sq);
    r = sel(k, fcmp(k, LLVMRealOEQ, y, fc(k, x, 0.5)), sq, r);
    LLVMValueRef xx = fmul(k, x, x);
    r = sel(k, fcmp(k, LLVMRealOEQ, y, fc(k, x, 3.0)), fmul(k, xx, x), r);
    r = sel(k, fcmp(k, LLVMRealOEQ, y, fc(k, x, 2.0)), xx, r);
    r = sel(k, fcmp(k, LLVMRealOEQ, y, one), x, r);
    r = sel(k, LLVMBuildOr(k->b, fcmp(k, LLVMRealUNO, x, x), fcmp(k, LLVMRealUNO, y, y), ""),
            fadd(k, x, y), r);
    r = sel(k, fcmp(k, LLVMRealOEQ, x, one), one, r);
    return sel(k, fcmp(k, LLVMRealOEQ, y, zero), one, r);
}

/* ---- the fixed summation tree (fmath.h) ---- */

static LLVMValueRef
half(Kb *k, LLVMValueRef v, unsigned from, unsigned n)
{
    LLVMValueRef m[16];
    for (unsigned i = 0; i < n; i++)
        m[i] = LLVMConstInt(k->i32, from + i, 0);
    return LLVMBuildShuffleVector(k->b, v, LLVMGetPoison(T(v)), LLVMConstVector(m, n), "");
}

LLVMValueRef
fm_sum_tree(Kb *k, LLVMValueRef *acc, unsigned lanes)
{
    /* acc[i] holds partial sums i*lanes .. i*lanes + lanes - 1 */
    unsigned nv = QN_SUM_LANES / lanes;
    LLVMValueRef v[4];
    for (unsigned i = 0; i < nv; i++)
        v[i] = acc[i];
    unsigned w = lanes; /* current vector width; p[i] += p[i + width/2] over the 16 */
    while (nv > 1) { /* vectors i and i + nv/2 hold p[j] and p[j + 16/2^s] */
        for (unsigned i = 0; i < nv / 2; i++)
            v[i] = fadd(k, v[i], v[i + nv / 2]);
        nv /= 2;
    }
    while (w > 2) {
        v[0] = fadd(k, half(k, v[0], 0, w / 2), half(k, v[0], w / 2, w / 2));
        w /= 2;
    }
    LLVMValueRef a = LLVMBuildExtractElement(k->b, v[0], LLVMConstInt(k->i32, 0, 0), "");
    LLVMValueRef b = LLVMBuildExtractElement(k->b, v[0], LLVMConstInt(k->i32, 1, 0), "");
    return fadd(k, a, b);
}

/* ---- the element-wise kernel ---- */

typedef struct Fe {
    Kb *k;
    Node *n;
    bool tanh_gelu;
    uint32_t nin;
    bool bcast[2]; /* operand i is one element (splatted) */
} Fe;

/* v < lo ? lo : v > hi ? hi : v (NaN stays) */
static LLVMValueRef
clamp(Kb *k, LLVMValueRef v, double lo, double hi)
{
    v = sel(k, fcmp(k, LLVMRealOLT, v, fc(k, v, lo)), fc(k, v, lo), v);
    return sel(k, fcmp(k, LLVMRealOGT, v, fc(k, v, hi)), fc(k, v, hi), v);
}

/* The piecewise-linear activations as ref_elem.c's unary_f computes them: in double, from
 * the f32 operand, rounded to f32 once at the end (two 8-lane double vectors per 16 f32). relu and leaky_relu give the same bits in
 * f32 (a product of two f32 values is exact in double, so rounding it once is an f32 fmul). */
static LLVMValueRef
fe_piecewise(Fe *e, LLVMValueRef x)
{
    Kb *k = e->k;
    Graph *g = k->g;
    LLVMValueRef zero = fc(k, x, 0.0);
    switch (e->n->op) {
    case OP_RELU: /* x > 0 ? x : 0 */
        return sel(k, fcmp(k, LLVMRealOGT, x, zero), x, zero);
    case OP_LEAKY_RELU: /* x < 0 ? alpha * x : x */
        return sel(k, fcmp(k, LLVMRealOLT, x, zero),
                   fmul(k, fc(k, x, (double)ir_attr_float(g, e->n, "alpha", 0.01f)), x), x);
    default:
        break;
    }
    LLVMTypeRef ft = T(x), dt = like(ft, k->f64);
    LLVMValueRef d = LLVMBuildFPExt(k->b, x, dt, ""), r;
    if (e->n->op == OP_HARD_SIGMOID) { /* clamp(alpha * x + beta, 0, 1) */
        r = fadd(k, fmul(k, fc(k, d, (double)ir_attr_float(g, e->n, "alpha", 0.2f)), d),
                 fc(k, d, (double)ir_attr_float(g, e->n, "beta", 0.5f)));
        r = clamp(k, r, 0.0, 1.0);
    } else {
        /* hard_swish: x * clamp(x / 6 + 0.5, 0, 1), x / 6 as x * (1/6): the quotient can
         * differ in its last bit, the f32 result never does (every f32 x: test_hswish_div.c) */
        r = fmul(k, d, clamp(k, fadd(k, fmul(k, d, fc(k, d, 1.0 / 6.0)), fc(k, d, 0.5)), 0.0, 1.0));
    }
    return LLVMBuildFPTrunc(k->b, r, ft, "");
}

/* n's function of the f32 operand values v[0..nin) (scalars or vectors) */
static LLVMValueRef
fe_apply(Fe *e, LLVMValueRef *v)
{
    Kb *k = e->k;
    LLVMValueRef x = v[0];
    switch (e->n->op) {
    case OP_RELU: case OP_LEAKY_RELU: case OP_HARD_SIGMOID: case OP_HARD_SWISH:
        return fe_piecewise(e, x);
    case OP_SIGMOID: return fm_sigmoid(k, x);
    case OP_TANH: return fm_tanh(k, x);
    case OP_ERF: return fm_erf(k, x);
    case OP_GELU: return e->tanh_gelu ? fm_gelu_tanh(k, x) : fm_gelu_erf(k, x);
    case OP_EXP: return fm_exp(k, x);
    case OP_LOG: return fm_log(k, x);
    case OP_SQRT: return intr1(k, "llvm.sqrt", x);
    case OP_RECIPROCAL: return fdiv(k, fc(k, x, 1.0), x);
    case OP_NEG: return LLVMBuildFNeg(k->b, x, "");
    case OP_ABS: return intr1(k, "llvm.fabs", x);
    case OP_ROUND: return intr1(k, "llvm.roundeven", x);
    case OP_POW: return fm_pow(k, x, v[1]);
    case OP_ADD: return fadd(k, x, v[1]);
    case OP_SUB: return fsub(k, x, v[1]);
    case OP_MUL: return fmul(k, x, v[1]);
    case OP_DIV: return fdiv(k, x, v[1]);
    case OP_PRELU: /* ref: x < 0 ? slope * x : x */
        return sel(k, fcmp(k, LLVMRealOLT, x, fc(k, x, 0.0)), fmul(k, v[1], x), x);
    case OP_MIN: case OP_MAX: {
        /* ref_minmax_f32: a > b (a < b) or a is NaN ? a : b */
        LLVMValueRef c = fcmp(k, e->n->op == OP_MAX ? LLVMRealOGT : LLVMRealOLT, x, v[1]);
        return sel(k, LLVMBuildOr(k->b, c, fcmp(k, LLVMRealUNO, x, x), ""), x, v[1]);
    }
    default: return x;
    }
}

/* the same on int64 values (neg, abs, min, max, pow of plain integers): ref_math.c */
static LLVMValueRef
fe_apply_int(Fe *e, LLVMValueRef x, LLVMValueRef z)
{
    Kb *k = e->k;
    LLVMBuilderRef b = k->b;
    LLVMValueRef zero = cg_i64(k, 0);
    switch (e->n->op) {
    case OP_NEG: return LLVMBuildSub(b, zero, x, "");
    case OP_ABS: return sel(k, LLVMBuildICmp(b, LLVMIntSLT, x, zero, ""), LLVMBuildSub(b, zero, x, ""), x);
    case OP_MIN: return cg_smin(k, x, z);
    case OP_MAX: return cg_smax(k, x, z);
    default: break;
    }
    /* ref_ipow: square and multiply over the 63 low bits of the exponent */
    LLVMValueRef rp = cg_entry_alloca(k, k->i64), bp = cg_entry_alloca(k, k->i64);
    LLVMBuildStore(b, cg_i64(k, 1), rp);
    LLVMBuildStore(b, x, bp);
    CgLoop l;
    LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, 63));
    LLVMValueRef r = LLVMBuildLoad2(b, k->i64, rp, ""), bb = LLVMBuildLoad2(b, k->i64, bp, "");
    LLVMValueRef bit = LLVMBuildTrunc(b, LLVMBuildLShr(b, z, i, ""), k->i1, "");
    LLVMBuildStore(b, sel(k, bit, LLVMBuildMul(b, r, bb, ""), r), rp);
    LLVMBuildStore(b, LLVMBuildMul(b, bb, bb, ""), bp);
    cg_loop_end(k, &l);
    LLVMValueRef odd = LLVMBuildTrunc(b, z, k->i1, "");
    LLVMValueRef negr = sel(k, LLVMBuildICmp(b, LLVMIntEQ, x, cg_i64(k, 1), ""), cg_i64(k, 1),
                            sel(k, LLVMBuildICmp(b, LLVMIntEQ, x, cg_i64(k, -1), ""),
                                sel(k, odd, cg_i64(k, -1), cg_i64(k, 1)), zero));
    return sel(k, LLVMBuildICmp(b, LLVMIntSLT, z, zero, ""), negr, LLVMBuildLoad2(b, k->i64, rp, ""));
}

/* Scalar loop nest with numpy broadcasting (any operand shapes, integer operands). */
static void
fe_nest(Fe *e, const CgNodeArgs *a)
{
    Kb *k = e->k;
    Node *n = e->n;
    const Type *y = &ir_value(k->g, n->out[0])->type;
    int64_t st[3][IR_MAX_RANK];
    type_strides(y, st[0]);
    for (uint32_t i = 0; i < e->nin; i++)
        type_bcast_strides(&ir_value(k->g, n->in[i])->type, y, st[1 + i]);
    CgNest ns;
    LLVMValueRef idx[3];
    cg_nest_begin(k, &ns, y->dims, y->rank, 1 + (int)e->nin, (const int64_t (*)[IR_MAX_RANK])st, idx);
    ElemType e0 = ir_value(k->g, n->in[0])->type.elem;
    ElemType e1 = e->nin > 1 ? ir_value(k->g, n->in[1])->type.elem : ET_NONE;
    if (e0 == ET_F32) {
        LLVMValueRef v[2] = {cg_load_raw(k, ET_F32, a->in[0], idx[1]), NULL};
        if (e->nin > 1)
            v[1] = e1 == ET_F32 ? cg_load_raw(k, ET_F32, a->in[1], idx[2])
                                : LLVMBuildSIToFP(k->b, cg_load_i64(k, e1, a->in[1], idx[2]), k->f32, "");
        cg_store_raw(k, ET_F32, a->out[0], idx[0], fe_apply(e, v));
    } else {
        LLVMValueRef x = cg_load_i64(k, e0, a->in[0], idx[1]);
        LLVMValueRef z = e->nin > 1 ? cg_load_i64(k, e1, a->in[1], idx[2]) : NULL;
        cg_store_i64(k, y->elem, a->out[0], idx[0], fe_apply_int(e, x, z));
    }
    cg_nest_end(k, &ns);
}

static LLVMValueRef
fe_load(Fe *e, LLVMValueRef base, bool one, LLVMValueRef i, unsigned w)
{
    Kb *k = e->k;
    if (one || w == 1) {
        LLVMValueRef s = cg_load_raw(k, ET_F32, base, one ? cg_i64(k, 0) : i);
        return w == 1 ? s : cg_vsplat(k, s, w);
    }
    LLVMValueRef p = LLVMBuildGEP2(k->b, k->f32, base, &i, 1, "");
    return irb_load(&k->ir, LLVMVectorType(k->f32, w), p, 4);
}

static void
fe_store(Fe *e, LLVMValueRef base, LLVMValueRef i, LLVMValueRef v, unsigned w)
{
    Kb *k = e->k;
    if (w == 1) {
        cg_store_raw(k, ET_F32, base, i, v);
        return;
    }
    LLVMValueRef p = LLVMBuildGEP2(k->b, k->f32, base, &i, 1, "");
    irb_store(&k->ir, v, p, 4);
}

/* elements [from, from + count): vectors of vl, then one at a time */
static void
fe_range(Fe *e, LLVMValueRef *p, LLVMValueRef from, int64_t count, unsigned vl)
{
    Kb *k = e->k;
    for (int pass = 0; pass < 2; pass++) {
        unsigned w = pass ? 1 : vl;
        int64_t start = pass ? count / vl * vl : 0, cnt = pass ? count - start : count / vl;
        if (cnt <= 0)
            continue;
        CgLoop l;
        LLVMValueRef j = cg_loop_begin(k, &l, cg_i64(k, cnt));
        LLVMValueRef i = cg_add(k, from, cg_add(k, cg_i64(k, start), cg_mul(k, j, cg_i64(k, w))));
        LLVMValueRef v[2];
        for (uint32_t o = 0; o < e->nin; o++)
            v[o] = fe_load(e, p[o], e->bcast[o], i, w);
        fe_store(e, p[2], i, fe_apply(e, v), w);
        if (pass)
            cg_loop_end_novec(k, &l);
        else
            cg_loop_end(k, &l);
    }
}

/* Broadcasting f32 operands as rows: the result's trailing dims [s, rank) form a row in which
 * every operand is contiguous or one repeated element (a bias over the last axis, an attention
 * mask, a per-row scale); the leading dims index rows, each operand's row start through its
 * broadcast strides. Rows split across the parallel-for hook (from 2 * FM_BLOCK elements),
 * each row fe_range's vectors and tail. False (nothing emitted) when no suffix of at least fm_lanes() elements has that form. */
static bool
fe_rows(Fe *e, const CgNodeArgs *a)
{
    Kb *k = e->k;
    const Type *y = &ir_value(k->g, e->n->out[0])->type;
    int64_t st[3][IR_MAX_RANK];
    type_strides(y, st[0]);
    for (uint32_t i = 0; i < e->nin; i++) {
        const Type *t = &ir_value(k->g, e->n->in[i])->type;
        if (t->elem != ET_F32)
            return false;
        type_bcast_strides(t, y, st[1 + i]);
    }
    /* operand i over the suffix: can_full[i] (strides of the result), can_one[i] (all 0);
     * dims of size 1 fit either */
    int s = y->rank;
    int64_t inner = 1;
    bool can_full[2] = {true, true}, can_one[2] = {true, true};
    for (int d = y->rank - 1; d >= 0; d--) {
        bool ok = true, f2[2], o2[2];
        for (uint32_t i = 0; i < e->nin; i++) {
            bool any = y->dims[d] == 1;
            f2[i] = can_full[i] && (any || st[1 + i][d] == st[0][d]);
            o2[i] = can_one[i] && (any || st[1 + i][d] == 0);
            ok = ok && (f2[i] || o2[i]);
        }
        if (!ok)
            break;
        for (uint32_t i = 0; i < e->nin; i++) {
            can_full[i] = f2[i];
            can_one[i] = o2[i];
        }
        s = d;
        inner *= y->dims[d];
    }
    bool one[2] = {!can_full[0], !can_full[1]};
    unsigned vl = fm_lanes(k);
    if (inner < vl)
        return false;
    int64_t rows = 1;
    for (int d = 0; d < s; d++)
        rows *= y->dims[d];
    if (rows * inner == 0)
        return true;
    Par par;
    CgLoop l;
    LLVMValueRef io[3] = {a->in[0], e->nin > 1 ? a->in[1] : a->in[0], a->out[0]};
    bool pr = rows > 1 && rows * inner >= 2 * FM_BLOCK;
    LLVMValueRef r = pr ? cg_par_begin(k, &par, rows, io, 3) : cg_loop_begin(k, &l, cg_i64(k, rows));
    if (pr && vl == 16)
        cg_function_set_target(par.fn, k->t, 512);
    LLVMValueRef off[2] = {cg_i64(k, 0), cg_i64(k, 0)}, rem = r;
    for (int d = s - 1; d >= 0; d--) {
        LLVMValueRef iv = LLVMBuildURem(k->b, rem, cg_i64(k, y->dims[d]), "");
        rem = LLVMBuildUDiv(k->b, rem, cg_i64(k, y->dims[d]), "");
        for (uint32_t i = 0; i < e->nin; i++)
            off[i] = cg_add(k, off[i], cg_mul(k, iv, cg_i64(k, st[1 + i][d])));
    }
    LLVMValueRef p[3];
    for (uint32_t i = 0; i < e->nin; i++) {
        p[i] = LLVMBuildGEP2(k->b, k->f32, io[i], &off[i], 1, "");
        e->bcast[i] = one[i];
    }
    p[1] = e->nin > 1 ? p[1] : p[0];
    LLVMValueRef yo = cg_mul(k, r, cg_i64(k, inner));
    p[2] = LLVMBuildGEP2(k->b, k->f32, io[2], &yo, 1, "");
    fe_range(e, p, cg_i64(k, 0), inner, vl);
    if (pr)
        cg_par_end(k, &par, a);
    else
        cg_loop_end_hint(k, &l, IRB_NO_UNROLL);
    return true;
}

bool
cg_emit_float_math(Kb *k, Node *n, const CgNodeArgs *a)
{
    Fe e;
    memset(&e, 0, sizeof e);
    e.k = k;
    e.n = n;
    e.nin = n->nin;
    const Type *y = &ir_value(k->g, n->out[0])->type;
    if (n->op == OP_GELU) {
        const char *ap = ir_attr_string(k->g, n, "approximate", "none");
        e.tanh_gelu = strcmp(ap, "tanh") == 0;
        if (!e.tanh_gelu && strcmp(ap, "none") != 0)
            return cg_fail(k, n, "gelu approximate='%s' is not supported (none, tanh)", ap);
    }
    bool flat = y->elem == ET_F32;
    for (uint32_t i = 0; i < e.nin; i++) {
        const Type *t = &ir_value(k->g, n->in[i])->type;
        if (t->elem != ET_F32 && !elem_is_int(t->elem))
            return cg_fail(k, n, "%s on %s is not supported", op_info(n->op)->name, elem_name(t->elem));
        e.bcast[i] = type_numel_unchecked(t) == 1 && type_numel_unchecked(y) != 1;
        flat = flat && t->elem == ET_F32 && (e.bcast[i] || type_shape_equal(t, y));
    }
    if (!flat) {
        if (y->elem != ET_F32 || !fe_rows(&e, a))
            fe_nest(&e, a);
        return true;
    }
    unsigned vl = fm_lanes(k);
    int64_t total = (int64_t)type_numel_unchecked(y), nb = total / FM_BLOCK;
    LLVMValueRef p[3] = {a->in[0], e.nin > 1 ? a->in[1] : a->in[0], a->out[0]};
    if (nb > 0) {
        Par par;
        LLVMValueRef io[3] = {p[0], p[1], p[2]};
        LLVMValueRef b = cg_par_begin(k, &par, nb, io, 3);
        if (vl == 16)
            cg_function_set_target(par.fn, k->t, 512);
        fe_range(&e, io, cg_mul(k, b, cg_i64(k, FM_BLOCK)), FM_BLOCK, vl);
        cg_par_end(k, &par, a);
    }
    if (total - nb * FM_BLOCK > 0)
        fe_range(&e, p, cg_i64(k, nb * FM_BLOCK), total - nb * FM_BLOCK, vl);
    return true;
}

LLVMValueRef
fm_apply(Kb *k, Node *n, LLVMValueRef *v)
{
    switch (n->op) {
    case OP_ADD: return fadd(k, v[0], v[1]);
    case OP_SUB: return fsub(k, v[0], v[1]);
    case OP_MUL: return fmul(k, v[0], v[1]);
    case OP_DIV: return fdiv(k, v[0], v[1]);
    default: break;
    }
    Fe e;
    memset(&e, 0, sizeof e);
    e.k = k;
    e.n = n;
    e.nin = n->nin;
    e.tanh_gelu = n->op == OP_GELU && strcmp(ir_attr_string(k->g, n, "approximate", "none"), "tanh") == 0;
    return fe_apply(&e, v);
}

bool
cg_float_math_op(Kb *k, Node *n)
{
    (void)k;
    switch (n->op) {
    case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU: case OP_EXP: case OP_LOG:
    case OP_SQRT: case OP_RECIPROCAL: case OP_NEG: case OP_ABS: case OP_POW: case OP_MIN:
    case OP_MAX: case OP_ROUND: case OP_RELU: case OP_LEAKY_RELU: case OP_HARD_SIGMOID:
    case OP_HARD_SWISH:
        return ir_value(k->g, n->in[0])->type.elem == ET_F32 || n->op == OP_NEG ||
               n->op == OP_ABS || n->op == OP_POW || n->op == OP_MIN || n->op == OP_MAX;
    default:
        return false;
    }
}
