/* export_fmath.c: the f32 functions of float islands (lib/numerics/fmath.c: exp, sigmoid, tanh,
 * erf, gelu in its erf and tanh forms, log, pow) as `linalg.generic` bodies of arith ops that
 * perform fmath.c's operations one for one: the same f32 (pow: f64) additions, products and
 * divisions in the same order, the branches computed both and chosen with arith.select (the
 * unchosen value never reaches the result), the bit manipulations as bitcasts and integer ops.
 * No fast-math flag and no math dialect op but math.sqrt (correctly rounded, as sqrtf) is
 * used, so a lowering cannot substitute its own approximation or contract a product into an
 * fma: the exported function computes the bits `qdqc run` computes. */
#include "export.h"
#include "numerics/fmath.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
exp_f32_const(StrBuf *b, const char *name, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    sb_printf(b, "      %%%s = arith.constant 0x%08X : f32\n", name, bits);
}

void
exp_f64_const(StrBuf *b, const char *name, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    sb_printf(b, "      %%%s = arith.constant 0x%016llX : f64\n", name, (unsigned long long)bits);
}

/* "%<P><out> = arith.<op> %<a>, %<c> : <t>" where a name starting with '.' is one of P's */
static void
op2(StrBuf *b, const char *P, const char *out, const char *op, const char *a, const char *c,
    const char *t)
{
    sb_printf(b, "      %%%s%s = arith.%s%s %%%s%s, %%%s%s : %s\n", P, out, op,
              strchr(op, ' ') ? "," : "", /* a predicate: "cmpf olt," */
              a[0] == '.' ? P : "", a + (a[0] == '.'), c[0] == '.' ? P : "", c + (c[0] == '.'), t);
}

/* "%<P><out> = arith.select %<c>, %<a>, %<e> : <t>" (names as op2's) */
static void
sel(StrBuf *b, const char *P, const char *out, const char *c, const char *a, const char *e,
    const char *t)
{
    sb_printf(b, "      %%%s%s = arith.select %%%s%s, %%%s%s, %%%s%s : %s\n", P, out,
              c[0] == '.' ? P : "", c + (c[0] == '.'), a[0] == '.' ? P : "", a + (a[0] == '.'),
              e[0] == '.' ? P : "", e + (e[0] == '.'), t);
}

static void
cst(StrBuf *b, const char *P, const char *name, float f)
{
    char nm[192];
    snprintf(nm, sizeof nm, "%s%s", P, name);
    exp_f32_const(b, nm, f);
}

/* Horner's rule as fmath.c's horner(): p = c[0]; p = p * t + c[i], into %<P><tag>p<n-1>
 * (constants %<P><tag>c<i>) */
static void
horner(StrBuf *b, const char *P, const char *tag, const float *c, int n, const char *t)
{
    char nm[64], a[80], r[64], cc[64];
    for (int i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, "%sc%d", tag, i);
        cst(b, P, nm, c[i]);
    }
    for (int i = 1; i < n; i++) {
        snprintf(a, sizeof a, i == 1 ? ".%sc0" : ".%sp%d", tag, i - 1);
        snprintf(nm, sizeof nm, "%sm%d", tag, i);
        op2(b, P, nm, "mulf", a, t, "f32");
        snprintf(r, sizeof r, "%sp%d", tag, i);
        snprintf(cc, sizeof cc, ".%sc%d", tag, i);
        snprintf(a, sizeof a, ".%s", nm);
        op2(b, P, r, "addf", a, cc, "f32");
    }
}

/* |x| and copysign by bits (fabsf / copysign_bits of fmath.c) */
static void
absf(StrBuf *b, const char *P, const char *out, const char *x)
{
    sb_printf(b, "      %%%s%s_b = arith.bitcast %%%s%s : f32 to i32\n", P, out,
              x[0] == '.' ? P : "", x + (x[0] == '.'));
    sb_printf(b, "      %%%s%s_m = arith.constant 2147483647 : i32\n", P, out);
    sb_printf(b, "      %%%s%s_a = arith.andi %%%s%s_b, %%%s%s_m : i32\n", P, out, P, out, P, out);
    sb_printf(b, "      %%%s%s = arith.bitcast %%%s%s_a : i32 to f32\n", P, out, P, out);
}

static void
copysign_bits(StrBuf *b, const char *P, const char *out, const char *r, const char *x)
{
    sb_printf(b, "      %%%s%s_r = arith.bitcast %%%s%s : f32 to i32\n", P, out,
              r[0] == '.' ? P : "", r + (r[0] == '.'));
    sb_printf(b, "      %%%s%s_x = arith.bitcast %%%s%s : f32 to i32\n", P, out,
              x[0] == '.' ? P : "", x + (x[0] == '.'));
    sb_printf(b, "      %%%s%s_m = arith.constant 2147483647 : i32\n", P, out);
    sb_printf(b, "      %%%s%s_s = arith.constant -2147483648 : i32\n", P, out);
    sb_printf(b, "      %%%s%s_ra = arith.andi %%%s%s_r, %%%s%s_m : i32\n", P, out, P, out, P, out);
    sb_printf(b, "      %%%s%s_xs = arith.andi %%%s%s_x, %%%s%s_s : i32\n", P, out, P, out, P, out);
    sb_printf(b, "      %%%s%s_o = arith.ori %%%s%s_ra, %%%s%s_xs : i32\n", P, out, P, out, P, out);
    sb_printf(b, "      %%%s%s = arith.bitcast %%%s%s_o : i32 to f32\n", P, out, P, out);
}

/* qn_expf of the f32 value %<in> into %<pre>e: clamp to [QN_EXP_LO, QN_EXP_HI] (a NaN passes),
 * n = round(x * log2 e) by the 1.5 * 2^23 trick (its integer from t's bits, 0 for a NaN),
 * r = x - n * ln2_hi - n * ln2_lo, the Horner polynomial p, e = p * r * r + r + 1, times
 * 2^floor(n/2) and 2^(n - floor(n/2)). */
void
exp_expf_body(StrBuf *b, const char *in, const char *pre)
{
    const char *P = pre;
    cst(b, P, "lo", QN_EXP_LO);
    cst(b, P, "hi", QN_EXP_HI);
    cst(b, P, "l2e", QN_LOG2E);
    cst(b, P, "mg", QN_RNE_MAGIC);
    cst(b, P, "ln2h", QN_LN2_HI);
    cst(b, P, "ln2l", QN_LN2_LO);
    op2(b, P, "clo", "cmpf olt", in, ".lo", "f32");
    sel(b, P, "x0", ".clo", ".lo", in, "f32");
    op2(b, P, "chi", "cmpf ogt", ".x0", ".hi", "f32");
    sel(b, P, "x", ".chi", ".hi", ".x0", "f32");
    op2(b, P, "m", "mulf", ".x", ".l2e", "f32");
    op2(b, P, "t", "addf", ".m", ".mg", "f32");
    op2(b, P, "n", "subf", ".t", ".mg", "f32");
    sb_printf(b, "      %%%stb = arith.bitcast %%%st : f32 to i32\n", P, P);
    sb_printf(b, "      %%%smb = arith.constant %d : i32\n", P, 0x4b400000);
    op2(b, P, "ni0", "subi", ".tb", ".mb", "i32");
    op2(b, P, "nan", "cmpf uno", ".x", ".x", "f32");
    sb_printf(b, "      %%%si0 = arith.constant 0 : i32\n", P);
    sel(b, P, "ni", ".nan", ".i0", ".ni0", "i32");
    op2(b, P, "h1", "mulf", ".n", ".ln2h", "f32");
    op2(b, P, "r0", "subf", ".x", ".h1", "f32");
    op2(b, P, "h2", "mulf", ".n", ".ln2l", "f32");
    op2(b, P, "r", "subf", ".r0", ".h2", "f32");
    horner(b, P, "", qn_exp_p, QN_EXP_NP, ".r");
    char pl[16];
    snprintf(pl, sizeof pl, ".p%d", QN_EXP_NP - 1);
    op2(b, P, "e0", "mulf", pl, ".r", "f32");
    op2(b, P, "e1", "mulf", ".e0", ".r", "f32");
    op2(b, P, "e2", "addf", ".e1", ".r", "f32");
    cst(b, P, "one", 1.0f);
    op2(b, P, "e3", "addf", ".e2", ".one", "f32");
    sb_printf(b, "      %%%stwo = arith.constant 2 : i32\n", P);
    op2(b, P, "h", "floordivsi", ".ni", ".two", "i32");
    sb_printf(b, "      %%%sbias = arith.constant 127 : i32\n", P);
    sb_printf(b, "      %%%ssh = arith.constant 23 : i32\n", P);
    op2(b, P, "a1", "addi", ".h", ".bias", "i32");
    op2(b, P, "b1", "shli", ".a1", ".sh", "i32");
    sb_printf(b, "      %%%ss1 = arith.bitcast %%%sb1 : i32 to f32\n", P, P);
    op2(b, P, "d2", "subi", ".ni", ".h", "i32");
    op2(b, P, "a2", "addi", ".d2", ".bias", "i32");
    op2(b, P, "b2", "shli", ".a2", ".sh", "i32");
    sb_printf(b, "      %%%ss2 = arith.bitcast %%%sb2 : i32 to f32\n", P, P);
    op2(b, P, "f1", "mulf", ".e3", ".s1", "f32");
    op2(b, P, "e", "mulf", ".f1", ".s2", "f32");
}

/* qn_sigmoidf: e = qn_expf(-|x|); (x < 0 ? e : 1) / (1 + e), into %<P>y */
static void
sigmoid_body(StrBuf *b, const char *P, const char *x)
{
    char pe[48], e[48];
    absf(b, P, "ax", x);
    sb_printf(b, "      %%%snx = arith.negf %%%sax : f32\n", P, P);
    snprintf(pe, sizeof pe, "%se_", P);
    snprintf(e, sizeof e, "%snx", P);
    exp_expf_body(b, e, pe);
    snprintf(e, sizeof e, "%se_e", P);
    cst(b, P, "z", 0.0f);
    cst(b, P, "one", 1.0f);
    op2(b, P, "neg", "cmpf olt", x, ".z", "f32");
    sel(b, P, "num", ".neg", e, ".one", "f32");
    op2(b, P, "den", "addf", ".one", e, "f32");
    op2(b, P, "y", "divf", ".num", ".den", "f32");
}

/* qn_tanhf into %<P>y */
static void
tanh_body(StrBuf *b, const char *P, const char *x)
{
    char pe[48], e[48];
    absf(b, P, "a", x);
    /* |x| < QN_TANH_SMALL: z = a * a; t = p(z) * z * a + a */
    op2(b, P, "z", "mulf", ".a", ".a", "f32");
    horner(b, P, "t", qn_tanh_p, QN_TANH_NP, ".z");
    char pl[16];
    snprintf(pl, sizeof pl, ".tp%d", QN_TANH_NP - 1);
    op2(b, P, "s0", "mulf", pl, ".z", "f32");
    op2(b, P, "s1", "mulf", ".s0", ".a", "f32");
    op2(b, P, "ts", "addf", ".s1", ".a", "f32");
    /* else e = qn_expf(a + a); t = 1 - 2 / (e + 1) */
    op2(b, P, "aa", "addf", ".a", ".a", "f32");
    snprintf(pe, sizeof pe, "%se_", P);
    snprintf(e, sizeof e, "%saa", P);
    exp_expf_body(b, e, pe);
    snprintf(e, sizeof e, "%se_e", P);
    cst(b, P, "one", 1.0f);
    cst(b, P, "two", 2.0f);
    op2(b, P, "e1", "addf", e, ".one", "f32");
    op2(b, P, "q", "divf", ".two", ".e1", "f32");
    op2(b, P, "tb", "subf", ".one", ".q", "f32");
    cst(b, P, "small", QN_TANH_SMALL);
    op2(b, P, "isl", "cmpf olt", ".a", ".small", "f32");
    sel(b, P, "t", ".isl", ".ts", ".tb", "f32");
    copysign_bits(b, P, "y", ".t", x);
}

/* qn_erff into %<P>y */
static void
erf_body(StrBuf *b, const char *P, const char *x)
{
    char pe[48], e[48], pl[16];
    absf(b, P, "a", x);
    /* a < 1: t = a + a * P(a^2) */
    op2(b, P, "a2", "mulf", ".a", ".a", "f32");
    horner(b, P, "s", qn_erf_s, QN_ERF_NS, ".a2");
    snprintf(pl, sizeof pl, ".sp%d", QN_ERF_NS - 1);
    op2(b, P, "ap", "mulf", ".a", pl, "f32");
    op2(b, P, "t1", "addf", ".a", ".ap", "f32");
    /* a < QN_ERF_BIG: t = 1 - qn_expf(L(a)) */
    horner(b, P, "l", qn_erf_l, QN_ERF_NL, ".a");
    snprintf(pe, sizeof pe, "%se_", P);
    snprintf(e, sizeof e, "%slp%d", P, QN_ERF_NL - 1);
    exp_expf_body(b, e, pe);
    snprintf(e, sizeof e, "%se_e", P);
    cst(b, P, "one", 1.0f);
    op2(b, P, "t2", "subf", ".one", e, "f32");
    /* else x != x ? x : 1 */
    op2(b, P, "nan", "cmpf uno", x, x, "f32");
    sel(b, P, "t3", ".nan", x, ".one", "f32");
    cst(b, P, "big", QN_ERF_BIG);
    op2(b, P, "c1", "cmpf olt", ".a", ".one", "f32");
    op2(b, P, "c2", "cmpf olt", ".a", ".big", "f32");
    sel(b, P, "t23", ".c2", ".t2", ".t3", "f32");
    sel(b, P, "t", ".c1", ".t1", ".t23", "f32");
    copysign_bits(b, P, "y", ".t", x);
}

/* qn_gelu_erf into %<P>y */
static void
gelu_erf_body(StrBuf *b, const char *P, const char *x)
{
    char pe[48], e[48], pl[16];
    cst(b, P, "r2", QN_SQRT1_2);
    op2(b, P, "z", "mulf", x, ".r2", "f32");
    absf(b, P, "a", ".z");
    /* a < 1: w = 1 + (z + z * P(z^2)) */
    op2(b, P, "z2", "mulf", ".z", ".z", "f32");
    horner(b, P, "s", qn_erf_s, QN_ERF_NS, ".z2");
    snprintf(pl, sizeof pl, ".sp%d", QN_ERF_NS - 1);
    op2(b, P, "zp", "mulf", ".z", pl, "f32");
    op2(b, P, "zs", "addf", ".z", ".zp", "f32");
    cst(b, P, "one", 1.0f);
    op2(b, P, "w1", "addf", ".one", ".zs", "f32");
    /* a < QN_ERF_BIG: c = qn_expf(L(a)); w = z < 0 ? c : 2 - c */
    horner(b, P, "l", qn_erf_l, QN_ERF_NL, ".a");
    snprintf(pe, sizeof pe, "%se_", P);
    snprintf(e, sizeof e, "%slp%d", P, QN_ERF_NL - 1);
    exp_expf_body(b, e, pe);
    snprintf(e, sizeof e, "%se_e", P);
    cst(b, P, "zero", 0.0f);
    cst(b, P, "two", 2.0f);
    op2(b, P, "neg", "cmpf olt", ".z", ".zero", "f32");
    op2(b, P, "tc", "subf", ".two", e, "f32");
    sel(b, P, "w2", ".neg", e, ".tc", "f32");
    /* else w = z != z ? z : z < 0 ? 0 : 2 */
    op2(b, P, "nan", "cmpf uno", ".z", ".z", "f32");
    sel(b, P, "w02", ".neg", ".zero", ".two", "f32");
    sel(b, P, "w3", ".nan", ".z", ".w02", "f32");
    cst(b, P, "big", QN_ERF_BIG);
    op2(b, P, "c1", "cmpf olt", ".a", ".one", "f32");
    op2(b, P, "c2", "cmpf olt", ".a", ".big", "f32");
    sel(b, P, "w23", ".c2", ".w2", ".w3", "f32");
    sel(b, P, "w", ".c1", ".w1", ".w23", "f32");
    /* 0.5 * x * w */
    cst(b, P, "half", 0.5f);
    op2(b, P, "hx", "mulf", ".half", x, "f32");
    op2(b, P, "y", "mulf", ".hx", ".w", "f32");
}

/* qn_gelu_tanh: u = x + K * (x * x * x); x * qn_sigmoidf(2C * u), into %<P>y */
static void
gelu_tanh_body(StrBuf *b, const char *P, const char *x)
{
    char ps[48], s[48];
    cst(b, P, "k", QN_GELU_K);
    cst(b, P, "c2", QN_GELU_2C);
    op2(b, P, "x2", "mulf", x, x, "f32");
    op2(b, P, "x3", "mulf", ".x2", x, "f32");
    op2(b, P, "kx3", "mulf", ".k", ".x3", "f32");
    op2(b, P, "u", "addf", x, ".kx3", "f32");
    op2(b, P, "v", "mulf", ".c2", ".u", "f32");
    snprintf(ps, sizeof ps, "%ss_", P);
    snprintf(s, sizeof s, "%sv", P);
    sigmoid_body(b, ps, s);
    snprintf(s, sizeof s, "%ss_y", P);
    op2(b, P, "y", "mulf", x, s, "f32");
}

/* qn_logf into %<P>y */
static void
log_body(StrBuf *b, const char *P, const char *x)
{
    char pl[16];
    cst(b, P, "fmin", FLT_MIN);
    cst(b, P, "p23", 8388608.0f);
    cst(b, P, "zero", 0.0f);
    op2(b, P, "sub", "cmpf olt", x, ".fmin", "f32");
    op2(b, P, "xs", "mulf", x, ".p23", "f32");
    sel(b, P, "xx", ".sub", ".xs", x, "f32");
    sb_printf(b, "      %%%sadj0 = arith.constant 0 : i32\n"
                 "      %%%sadjm = arith.constant -23 : i32\n", P, P);
    sel(b, P, "adj", ".sub", ".adjm", ".adj0", "i32");
    sb_printf(b, "      %%%sbits = arith.bitcast %%%sxx : f32 to i32\n"
                 "      %%%s23 = arith.constant 23 : i32\n"
                 "      %%%s127 = arith.constant 127 : i32\n", P, P, P, P);
    op2(b, P, "sh", "shrui", ".bits", ".23", "i32");
    op2(b, P, "e0", "subi", ".sh", ".127", "i32");
    op2(b, P, "e1", "addi", ".e0", ".adj", "i32");
    sb_printf(b, "      %%%smm = arith.constant 8388607 : i32\n"
                 "      %%%sone_b = arith.constant 1065353216 : i32\n", P, P);
    op2(b, P, "mb0", "andi", ".bits", ".mm", "i32");
    op2(b, P, "mb", "ori", ".mb0", ".one_b", "i32");
    sb_printf(b, "      %%%sm = arith.bitcast %%%smb : i32 to f32\n", P, P);
    cst(b, P, "sq2", QN_SQRT2);
    cst(b, P, "half", 0.5f);
    cst(b, P, "one", 1.0f);
    op2(b, P, "big", "cmpf ogt", ".m", ".sq2", "f32");
    op2(b, P, "mh", "mulf", ".m", ".half", "f32");
    op2(b, P, "fb", "subf", ".mh", ".one", "f32");
    op2(b, P, "fs", "subf", ".m", ".one", "f32");
    sel(b, P, "f", ".big", ".fb", ".fs", "f32");
    sb_printf(b, "      %%%si1 = arith.constant 1 : i32\n", P);
    op2(b, P, "e2", "addi", ".e1", ".i1", "i32");
    sel(b, P, "e", ".big", ".e2", ".e1", "i32");
    sb_printf(b, "      %%%sfe = arith.sitofp %%%se : i32 to f32\n", P, P);
    op2(b, P, "z", "mulf", ".f", ".f", "f32");
    horner(b, P, "l", qn_log_p, QN_LOG_NP, ".f");
    snprintf(pl, sizeof pl, ".lp%d", QN_LOG_NP - 1);
    op2(b, P, "y0", "mulf", pl, ".f", "f32");
    op2(b, P, "y1", "mulf", ".y0", ".z", "f32");
    cst(b, P, "ln2l", QN_LN2_LO);
    cst(b, P, "ln2h", QN_LN2_HI);
    cst(b, P, "mhalf", -0.5f);
    op2(b, P, "fl", "mulf", ".fe", ".ln2l", "f32");
    op2(b, P, "y2", "addf", ".y1", ".fl", "f32");
    op2(b, P, "hz", "mulf", ".mhalf", ".z", "f32");
    op2(b, P, "y3", "addf", ".y2", ".hz", "f32");
    op2(b, P, "r", "addf", ".f", ".y3", "f32");
    op2(b, P, "fh", "mulf", ".fe", ".ln2h", "f32");
    op2(b, P, "res", "addf", ".r", ".fh", "f32");
    /* x != x or x < 0: NaN; x == 0: -inf; x == inf: inf */
    cst(b, P, "qnan", NAN);
    cst(b, P, "ninf", -INFINITY);
    cst(b, P, "pinf", INFINITY);
    op2(b, P, "isn", "cmpf uno", x, x, "f32");
    op2(b, P, "isneg", "cmpf olt", x, ".zero", "f32");
    op2(b, P, "bad", "ori", ".isn", ".isneg", "i1");
    op2(b, P, "isz", "cmpf oeq", x, ".zero", "f32");
    op2(b, P, "isi", "cmpf oeq", x, ".pinf", "f32");
    sel(b, P, "r1", ".isi", ".pinf", ".res", "f32");
    sel(b, P, "r2", ".isz", ".ninf", ".r1", "f32");
    sel(b, P, "y", ".bad", ".qnan", ".r2", "f32");
}

/* The body of a one-operand fmath op (result %fy, yielded); false for another op. */
static bool
unary_body(StrBuf *b, OpKind op, bool tanh_gelu)
{
    switch (op) {
    case OP_SIGMOID: sigmoid_body(b, "f", "a0"); break;
    case OP_TANH: tanh_body(b, "f", "a0"); break;
    case OP_ERF: erf_body(b, "f", "a0"); break;
    case OP_GELU: (tanh_gelu ? gelu_tanh_body : gelu_erf_body)(b, "f", "a0"); break;
    case OP_LOG: log_body(b, "f", "a0"); break;
    default: return false;
    }
    sb_puts(b, "      linalg.yield %fy : f32\n");
    return true;
}

static char *
ident(int rank, char **iters)
{
    StrBuf m, it;
    sb_init(&m);
    sb_init(&it);
    int res[IR_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        res[i] = i;
        sb_printf(&it, "%s\"parallel\"", i ? ", " : "");
    }
    exp_map(&m, rank, res, rank);
    *iters = it.data;
    return m.data;
}

/* sigmoid, tanh, erf, gelu (approximate none | tanh), log: one element-wise generic */
bool
exp_op_fmath_unary(Exp *x, Node *n)
{
    const Type *yt = exp_vtype(x, n->out[0]);
    const char *ap = n->op == OP_GELU ? ir_attr_string(x->g, n, "approximate", "none") : "none";
    if (strcmp(ap, "none") && strcmp(ap, "tanh"))
        return exp_fail(x, n, "gelu: approximate='%s' has no export", ap);
    uint32_t v = exp_operand(x, n->in[0]);
    if (!v)
        return false;
    StrBuf body, tt;
    sb_init(&body);
    sb_init(&tt);
    unary_body(&body, n->op, !strcmp(ap, "tanh"));
    exp_ttype(&tt, yt->rank, yt->dims, "f32");
    char *it, *mi = ident(yt->rank, &it);
    ExpIn in = {v, tt.data, mi, "f32"};
    exp_bind(x, n, exp_generic(x, &in, 1, 0, tt.data, mi, "f32", it, body.data));
    sb_free(&body), sb_free(&tt);
    free(mi), free(it);
    return true;
}

/* qn_pow_f64(a, y) (a > 0 finite, f64) of %<P>ad and %<P>yd into %<P>pw (f64): log by
 * s = (m - 1) / (m + 1) and its odd series, t = y * l clamped to [-110, 100], exp as
 * 2^n * the Taylor polynomial of r */
static void
pow_f64_body(StrBuf *b, const char *P)
{
    char nm[48], a[48], c[48];
    sb_printf(b, "      %%%sab = arith.bitcast %%%sad : f64 to i64\n"
                 "      %%%s52 = arith.constant 52 : i64\n"
                 "      %%%s1023 = arith.constant 1023 : i64\n"
                 "      %%%smm = arith.constant 4503599627370495 : i64\n"
                 "      %%%sone_b = arith.constant 4607182418800017408 : i64\n",
              P, P, P, P, P, P);
    op2(b, P, "esh", "shrui", ".ab", ".52", "i64");
    op2(b, P, "e0", "subi", ".esh", ".1023", "i64");
    op2(b, P, "mb0", "andi", ".ab", ".mm", "i64");
    op2(b, P, "mb", "ori", ".mb0", ".one_b", "i64");
    sb_printf(b, "      %%%sm0 = arith.bitcast %%%smb : i64 to f64\n", P, P);
    snprintf(nm, sizeof nm, "%ssq2", P), exp_f64_const(b, nm, QN_D_SQRT2);
    snprintf(nm, sizeof nm, "%sdh", P), exp_f64_const(b, nm, 0.5);
    snprintf(nm, sizeof nm, "%sd1", P), exp_f64_const(b, nm, 1.0);
    op2(b, P, "big", "cmpf ogt", ".m0", ".sq2", "f64");
    op2(b, P, "mh", "mulf", ".m0", ".dh", "f64");
    sel(b, P, "m", ".big", ".mh", ".m0", "f64");
    sb_printf(b, "      %%%si1 = arith.constant 1 : i64\n", P);
    op2(b, P, "e1", "addi", ".e0", ".i1", "i64");
    sel(b, P, "e", ".big", ".e1", ".e0", "i64");
    op2(b, P, "mn", "subf", ".m", ".d1", "f64");
    op2(b, P, "mp", "addf", ".m", ".d1", "f64");
    op2(b, P, "s", "divf", ".mn", ".mp", "f64");
    op2(b, P, "s2", "mulf", ".s", ".s", "f64");
    /* q = 1/(2(N-1)+1); q = q * s2 + 1/(2k+1) for k = N-2 .. 0 */
    snprintf(nm, sizeof nm, "%sq%d", P, QN_PLOG_N - 1);
    exp_f64_const(b, nm, 1.0 / (2 * (QN_PLOG_N - 1) + 1));
    for (int k = QN_PLOG_N - 2; k >= 0; k--) {
        snprintf(nm, sizeof nm, "%sk%d", P, k), exp_f64_const(b, nm, 1.0 / (2 * k + 1));
        snprintf(a, sizeof a, ".q%d", k + 1);
        snprintf(nm, sizeof nm, "qm%d", k);
        op2(b, P, nm, "mulf", a, ".s2", "f64");
        snprintf(a, sizeof a, ".qm%d", k);
        snprintf(c, sizeof c, ".k%d", k);
        snprintf(nm, sizeof nm, "q%d", k);
        op2(b, P, nm, "addf", a, c, "f64");
    }
    op2(b, P, "ss", "addf", ".s", ".s", "f64");
    op2(b, P, "l0", "mulf", ".ss", ".q0", "f64");
    sb_printf(b, "      %%%sef = arith.sitofp %%%se : i64 to f64\n", P, P);
    snprintf(nm, sizeof nm, "%sln2", P), exp_f64_const(b, nm, QN_D_LN2);
    op2(b, P, "el", "mulf", ".ef", ".ln2", "f64");
    op2(b, P, "l", "addf", ".l0", ".el", "f64");
    op2(b, P, "t0", "mulf", ".yd", ".l", "f64");
    snprintf(nm, sizeof nm, "%stlo", P), exp_f64_const(b, nm, -110.0);
    snprintf(nm, sizeof nm, "%sthi", P), exp_f64_const(b, nm, 100.0);
    op2(b, P, "clo", "cmpf olt", ".t0", ".tlo", "f64");
    sel(b, P, "t1", ".clo", ".tlo", ".t0", "f64");
    op2(b, P, "chi", "cmpf ogt", ".t1", ".thi", "f64");
    sel(b, P, "t", ".chi", ".thi", ".t1", "f64");
    snprintf(nm, sizeof nm, "%sl2e", P), exp_f64_const(b, nm, QN_D_LOG2E);
    snprintf(nm, sizeof nm, "%smg", P), exp_f64_const(b, nm, QN_D_RNE_MAGIC);
    op2(b, P, "tm", "mulf", ".t", ".l2e", "f64");
    op2(b, P, "tt", "addf", ".tm", ".mg", "f64");
    op2(b, P, "n", "subf", ".tt", ".mg", "f64");
    sb_printf(b, "      %%%stb = arith.bitcast %%%stt : f64 to i64\n"
                 "      %%%skb = arith.bitcast %%%smg : f64 to i64\n", P, P, P, P);
    op2(b, P, "ni", "subi", ".tb", ".kb", "i64");
    snprintf(nm, sizeof nm, "%sl2h", P), exp_f64_const(b, nm, QN_D_LN2_HI);
    snprintf(nm, sizeof nm, "%sl2l", P), exp_f64_const(b, nm, QN_D_LN2_LO);
    op2(b, P, "nh", "mulf", ".n", ".l2h", "f64");
    op2(b, P, "r0", "subf", ".t", ".nh", "f64");
    op2(b, P, "nl", "mulf", ".n", ".l2l", "f64");
    op2(b, P, "r", "subf", ".r0", ".nl", "f64");
    const double *pc = qn_pexp_coeffs();
    snprintf(nm, sizeof nm, "%sx%d", P, QN_PEXP_N - 1);
    exp_f64_const(b, nm, pc[QN_PEXP_N - 1]);
    for (int k = QN_PEXP_N - 2; k >= 0; k--) {
        snprintf(nm, sizeof nm, "%sc%d", P, k), exp_f64_const(b, nm, pc[k]);
        snprintf(a, sizeof a, ".x%d", k + 1);
        snprintf(nm, sizeof nm, "xm%d", k);
        op2(b, P, nm, "mulf", a, ".r", "f64");
        snprintf(a, sizeof a, ".xm%d", k);
        snprintf(c, sizeof c, ".c%d", k);
        snprintf(nm, sizeof nm, "x%d", k);
        op2(b, P, nm, "addf", a, c, "f64");
    }
    op2(b, P, "sb0", "addi", ".ni", ".1023", "i64");
    op2(b, P, "sb", "shli", ".sb0", ".52", "i64");
    sb_printf(b, "      %%%ssc = arith.bitcast %%%ssb : i64 to f64\n", P, P);
    op2(b, P, "pw", "mulf", ".x0", ".sc", "f64");
}

/* qn_powf(%a0, %a1) into %py: the general case through qn_pow_f64, then fmath.c's special
 * cases as selects, the last test applied first */
static void
pow_body(StrBuf *b)
{
    const char *P = "p";
    absf(b, P, "ax", "a0");
    absf(b, P, "ay", "a1");
    sb_printf(b, "      %%pfad = arith.extf %%pax : f32 to f64\n"
                 "      %%pfyd = arith.extf %%a1 : f32 to f64\n");
    pow_f64_body(b, "pf"); /* its names all start with "pf": none of this body's does */
    sb_puts(b, "      %pgen = arith.truncf %pfpw : f64 to f32\n");
    cst(b, P, "zero", 0.0f);
    cst(b, P, "one", 1.0f);
    cst(b, P, "two", 2.0f);
    cst(b, P, "three", 3.0f);
    cst(b, P, "half", 0.5f);
    cst(b, P, "inf", INFINITY);
    cst(b, P, "ninf", -INFINITY);
    cst(b, P, "qnan", NAN);
    cst(b, P, "p23", 8388608.0f);
    cst(b, P, "p24", 16777216.0f);
    /* r: ax == 0 ? (y > 0 ? 0 : inf) : ax == inf ? (y > 0 ? inf : 0) : general */
    op2(b, P, "ypos", "cmpf ogt", "a1", ".zero", "f32");
    op2(b, P, "ax0", "cmpf oeq", ".ax", ".zero", "f32");
    op2(b, P, "axi", "cmpf oeq", ".ax", ".inf", "f32");
    sel(b, P, "rz", ".ypos", ".zero", ".inf", "f32");
    sel(b, P, "ri", ".ypos", ".inf", ".zero", "f32");
    sel(b, P, "r1", ".axi", ".ri", ".gen", "f32");
    sel(b, P, "res", ".ax0", ".rz", ".r1", "f32");
    /* neg = sign(x) && yodd; yint = ay >= 2^23 || (float)(int)y == y; yodd = yint && ay < 2^24
     * && (int)y & 1 (the conversions of a y that is not used are harmless: arith.fptosi of an
     * out-of-range value is poison only in the unselected branch, so y is clamped first) */
    op2(b, P, "ybig", "cmpf oge", ".ay", ".p23", "f32");
    sel(b, P, "yc", ".ybig", ".zero", "a1", "f32");
    sb_printf(b, "      %%pyi = arith.fptosi %%pyc : f32 to i32\n"
                 "      %%pyf = arith.sitofp %%pyi : i32 to f32\n");
    op2(b, P, "yeq", "cmpf oeq", ".yf", "a1", "f32");
    op2(b, P, "yint", "ori", ".ybig", ".yeq", "i1");
    op2(b, P, "ylt24", "cmpf olt", ".ay", ".p24", "f32");
    sb_printf(b, "      %%pj1 = arith.constant 1 : i32\n"
                 "      %%pj0 = arith.constant 0 : i32\n");
    op2(b, P, "ylow", "andi", ".yi", ".j1", "i32");
    op2(b, P, "ylb", "cmpi ne", ".ylow", ".j0", "i32");
    op2(b, P, "yo1", "andi", ".yint", ".ylt24", "i1");
    op2(b, P, "yodd", "andi", ".yo1", ".ylb", "i1");
    sb_printf(b, "      %%pxb = arith.bitcast %%a0 : f32 to i32\n");
    op2(b, P, "xs", "cmpi slt", ".xb", ".j0", "i32");
    op2(b, P, "neg", "andi", ".xs", ".yodd", "i1");
    sb_puts(b, "      %pnr = arith.negf %pres : f32\n");
    sel(b, P, "v0", ".neg", ".nr", ".res", "f32");
    /* ay == inf: ax == 1 ? 1 : (ax < 1) == (y > 0) ? 0 : inf */
    op2(b, P, "ayi", "cmpf oeq", ".ay", ".inf", "f32");
    op2(b, P, "ax1", "cmpf oeq", ".ax", ".one", "f32");
    op2(b, P, "axl", "cmpf olt", ".ax", ".one", "f32");
    op2(b, P, "same", "cmpi eq", ".axl", ".ypos", "i1");
    sel(b, P, "iv0", ".same", ".zero", ".inf", "f32");
    sel(b, P, "iv", ".ax1", ".one", ".iv0", "f32");
    sel(b, P, "v1", ".ayi", ".iv", ".v0", "f32");
    /* x < 0 && !yint: NaN */
    op2(b, P, "xneg", "cmpf olt", "a0", ".zero", "f32");
    sb_printf(b, "      %%ptrue = arith.constant true\n");
    op2(b, P, "nyint", "xori", ".yint", ".true", "i1");
    op2(b, P, "nanv", "andi", ".xneg", ".nyint", "i1");
    sel(b, P, "v2", ".nanv", ".qnan", ".v1", "f32");
    /* y == 0.5: x == -inf ? inf : sqrtf(x) + 0 (math.sqrt: correctly rounded, as sqrtf) */
    sb_puts(b, "      %psq = math.sqrt %a0 : f32\n");
    op2(b, P, "sq0", "addf", ".sq", ".zero", "f32");
    op2(b, P, "xmi", "cmpf oeq", "a0", ".ninf", "f32");
    sel(b, P, "sqv", ".xmi", ".inf", ".sq0", "f32");
    op2(b, P, "yh", "cmpf oeq", "a1", ".half", "f32");
    sel(b, P, "vh", ".yh", ".sqv", ".v2", "f32");
    /* y == 3, y == 2, y == 1 */
    op2(b, P, "xx", "mulf", "a0", "a0", "f32");
    op2(b, P, "xxx", "mulf", ".xx", "a0", "f32");
    op2(b, P, "y3", "cmpf oeq", "a1", ".three", "f32");
    sel(b, P, "v3", ".y3", ".xxx", ".vh", "f32");
    op2(b, P, "y2", "cmpf oeq", "a1", ".two", "f32");
    sel(b, P, "v4", ".y2", ".xx", ".v3", "f32");
    op2(b, P, "y1", "cmpf oeq", "a1", ".one", "f32");
    sel(b, P, "v5", ".y1", "a0", ".v4", "f32");
    /* x != x || y != y: x + y */
    op2(b, P, "un", "cmpf uno", "a0", "a1", "f32");
    op2(b, P, "xy", "addf", "a0", "a1", "f32");
    sel(b, P, "v6", ".un", ".xy", ".v5", "f32");
    /* x == 1: 1; y == 0: 1 */
    op2(b, P, "x1", "cmpf oeq", "a0", ".one", "f32");
    sel(b, P, "v7", ".x1", ".one", ".v6", "f32");
    op2(b, P, "y0", "cmpf oeq", "a1", ".zero", "f32");
    sel(b, P, "y", ".y0", ".one", ".v7", "f32");
    sb_puts(b, "      linalg.yield %py : f32\n");
}

/* f32 pow with numpy broadcasting (an integer exponent is refused) */
bool
exp_op_fmath_pow(Exp *x, Node *n)
{
    const Type *at = exp_vtype(x, n->in[0]), *bt = exp_vtype(x, n->in[1]),
               *yt = exp_vtype(x, n->out[0]);
    if (at->elem != ET_F32 || bt->elem != ET_F32 || yt->elem != ET_F32)
        return exp_fail(x, n, "pow: only f32 operands and result");
    uint32_t a = exp_operand(x, n->in[0]), b = exp_operand(x, n->in[1]);
    if (!a || !b)
        return false;
    StrBuf ma, mb, ta, tb, ty, body;
    sb_init(&ma), sb_init(&mb), sb_init(&ta), sb_init(&tb), sb_init(&ty), sb_init(&body);
    exp_bcast_map(&ma, at, yt);
    exp_bcast_map(&mb, bt, yt);
    exp_ttype(&ta, at->rank, at->dims, "f32");
    exp_ttype(&tb, bt->rank, bt->dims, "f32");
    exp_ttype(&ty, yt->rank, yt->dims, "f32");
    pow_body(&body);
    char *it, *my = ident(yt->rank, &it);
    ExpIn in[2] = {{a, ta.data, ma.data, "f32"}, {b, tb.data, mb.data, "f32"}};
    exp_bind(x, n, exp_generic(x, in, 2, 0, ty.data, my, "f32", it, body.data));
    sb_free(&ma), sb_free(&mb), sb_free(&ta), sb_free(&tb), sb_free(&ty), sb_free(&body);
    free(my), free(it);
    return true;
}

/* The one-operation f32 ops, as the reference computes them (lib/ref/ref_math.c,
 * ref_elem.c): sqrt (math.sqrt, correctly rounded as sqrtf), reciprocal 1 / x, neg, abs (the
 * sign bit cleared), round (math.roundeven: rintf's ties to even), and with numpy broadcasting
 * max `a > b || a != a ? a : b`, min `a < b || a != a ? a : b`, prelu `x < 0 ? slope * x : x`. */
bool
exp_op_fmath_simple(Exp *x, Node *n)
{
    static const struct { OpKind op; const char *body; } ops[] = {
        {OP_SQRT, "      %y = math.sqrt %a0 : f32\n"},
        {OP_RECIPROCAL, "      %one = arith.constant 1.0 : f32\n"
                        "      %y = arith.divf %one, %a0 : f32\n"},
        {OP_NEG, "      %y = arith.negf %a0 : f32\n"},
        {OP_ABS, "      %b = arith.bitcast %a0 : f32 to i32\n"
                 "      %m = arith.constant 2147483647 : i32\n"
                 "      %c = arith.andi %b, %m : i32\n"
                 "      %y = arith.bitcast %c : i32 to f32\n"},
        {OP_ROUND, "      %y = math.roundeven %a0 : f32\n"},
        {OP_MAX, "      %g = arith.cmpf ogt, %a0, %a1 : f32\n"
                 "      %u = arith.cmpf uno, %a0, %a0 : f32\n"
                 "      %c = arith.ori %g, %u : i1\n"
                 "      %y = arith.select %c, %a0, %a1 : f32\n"},
        {OP_MIN, "      %l = arith.cmpf olt, %a0, %a1 : f32\n"
                 "      %u = arith.cmpf uno, %a0, %a0 : f32\n"
                 "      %c = arith.ori %l, %u : i1\n"
                 "      %y = arith.select %c, %a0, %a1 : f32\n"},
        {OP_PRELU, "      %z = arith.constant 0.0 : f32\n"
                   "      %l = arith.cmpf olt, %a0, %z : f32\n"
                   "      %m = arith.mulf %a1, %a0 : f32\n"
                   "      %y = arith.select %l, %m, %a0 : f32\n"},
    };
    const char *body = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].op == n->op)
            body = ops[i].body;
    const Type *yt = exp_vtype(x, n->out[0]);
    int nin = n->nin < 2 ? (int)n->nin : 2;
    if (!body || n->nin < 1 || n->nin > 2)
        return exp_fail(x, n, "`%s` has no tosa/linalg mapping", op_info(n->op)->name);
    ExpIn in[2];
    StrBuf maps[2], tts[2], ty, b;
    sb_init(&ty), sb_init(&b);
    for (int i = 0; i < nin; i++) {
        const Type *t = exp_vtype(x, n->in[i]);
        sb_init(&maps[i]), sb_init(&tts[i]);
        exp_bcast_map(&maps[i], t, yt);
        exp_ttype(&tts[i], t->rank, t->dims, "f32");
        in[i] = (ExpIn){exp_operand(x, n->in[i]), tts[i].data, maps[i].data, "f32"};
    }
    bool ok = in[0].v && (nin < 2 || in[1].v);
    if (ok) {
        exp_ttype(&ty, yt->rank, yt->dims, "f32");
        sb_printf(&b, "%s      linalg.yield %%y : f32\n", body);
        char *it, *my = ident(yt->rank, &it);
        exp_bind(x, n, exp_generic(x, in, nin, 0, ty.data, my, "f32", it, b.data));
        free(my), free(it);
    }
    for (int i = 0; i < nin; i++)
        sb_free(&maps[i]), sb_free(&tts[i]);
    sb_free(&ty), sb_free(&b);
    return ok;
}
