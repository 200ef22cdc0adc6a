/* float_linear.c: float-island conv (the cases float_conv.c leaves: 3-D, run-time weights),
 * conv_transpose, f64 matmul, avgpool, global_avgpool and resize as plain loops, in the exact
 * operation order of lib/ref (ref_linear.c, ref_pool.c): conv and conv_transpose are one f32 fma
 * chain per element over (c, k0, k1, k2) from +0.0f, a padded (or, transposed, unreached) tap
 * reading 0, then + bias; the f64 matmul sums in double; averages sum in double and divide
 * once; (f32 matmul and gemm: float_gemm.c; f32 conv and conv_transpose with constant weights:
 * float_conv.c);
 * resize gathers through index tables computed at compile time with the reference's own
 * formulas (nearest: any element type; linear: the separable double interpolation, axis by
 * axis in the reference's order). Results are therefore bit-identical to the reference.
 * global_avgpool sums 8 planes per vector (one plane per lane); avgpool planes and resize rows
 * split across the parallel-for hook. A global_avgpool of dequantized integers sums each plane
 * with contiguous vectors in any order instead (gap_exact): that double sum is exact, so every
 * order gives the reference's bits. */
#include "codegen/lower/lower.h"

#include <llvm-c/Core.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const Type *
vt(Kb *k, ValueId v)
{
    return &ir_value(k->g, v)->type;
}

static LLVMValueRef
load_d(Kb *k, LLVMValueRef base, LLVMValueRef idx)
{
    return LLVMBuildFPExt(k->b, cg_load_raw(k, ET_F32, base, idx), k->f64, "");
}

static LLVMValueRef
dconst(Kb *k, double v)
{
    return LLVMConstReal(k->f64, v);
}

static bool
all_f32(Kb *k, Node *n)
{
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->in[i].id && vt(k, n->in[i])->elem != ET_F32)
            return cg_fail(k, n, "operand %u must be f32, got %s", i,
                           elem_name(vt(k, n->in[i])->elem));
    if (vt(k, n->out[0])->elem != ET_F32)
        return cg_fail(k, n, "the result must be f32");
    return true;
}

static LLVMValueRef
lin3(Kb *k, LLVMValueRef *v, const int64_t *dims)
{
    return cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, v[0], cg_i64(k, dims[1])), v[1]), cg_i64(k, dims[2])), v[2]);
}

typedef struct FConv {
    int64_t N, C, M, G, Cg, Mg, isp, osp, ksp;
    CgWin w;
} FConv;

static bool
fconv_geo(Kb *k, Node *n, bool tr, FConv *c)
{
    const Type *x = vt(k, n->in[0]), *wt = vt(k, n->in[1]), *y = vt(k, n->out[0]);
    if (tr && ir_attr(k->g, n, "output_shape"))
        return cg_fail(k, n, "'output_shape' is not supported (use pads)");
    if (wt->rank != x->rank)
        return cg_fail(k, n, "weight rank %d does not match input rank %d", wt->rank, x->rank);
    int64_t ks[3] = {1, 1, 1};
    for (int i = 0; i < x->rank - 2 && i < 3; i++)
        ks[i] = wt->dims[2 + i];
    if (!cg_window(k, n, x, y, ks, &c->w))
        return false;
    c->N = x->dims[0];
    c->C = x->dims[1];
    c->M = y->dims[1];
    c->G = ir_attr_int(k->g, n, "group", 1);
    if (c->G <= 0 || c->C % c->G || c->M % c->G)
        return cg_fail(k, n, "invalid group count");
    c->Cg = c->C / c->G;
    c->Mg = c->M / c->G;
    c->isp = c->w.in[0] * c->w.in[1] * c->w.in[2];
    c->osp = c->w.out[0] * c->w.out[1] * c->w.out[2];
    c->ksp = c->w.k[0] * c->w.k[1] * c->w.k[2];
    return true;
}

/* run_float_conv of ref_linear.c */
bool
cg_emit_conv_loops(Kb *k, Node *n, const CgNodeArgs *a)
{
    FConv c;
    if (!all_f32(k, n) || !fconv_geo(k, n, false, &c))
        return false;
    const CgWin *W = &c.w;
    bool has_b = n->nin > 2 && n->in[2].id;
    LLVMBuilderRef b = k->b;
    CgLoop ln, lm, lo[3], lc, lk[3];
    LLVMValueRef vn = cg_loop_begin(k, &ln, cg_i64(k, c.N));
    LLVMValueRef vm = cg_loop_begin(k, &lm, cg_i64(k, c.M));
    LLVMValueRef grp = LLVMBuildSDiv(b, vm, cg_i64(k, c.Mg), "");
    LLVMValueRef ov[3], kv[3], iv[3];
    for (int d = 0; d < 3; d++)
        ov[d] = cg_loop_begin(k, &lo[d], cg_i64(k, W->out[d]));
    LLVMValueRef accp = cg_entry_alloca(k, k->f32);
    LLVMBuildStore(b, cg_f32(k, 0.0f), accp);
    LLVMValueRef vc = cg_loop_begin(k, &lc, cg_i64(k, c.Cg));
    LLVMValueRef xb = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c.C)),
                                       cg_add(k, cg_mul(k, grp, cg_i64(k, c.Cg)), vc)), cg_i64(k, c.isp));
    LLVMValueRef wb = cg_mul(k, cg_add(k, cg_mul(k, vm, cg_i64(k, c.Cg)), vc), cg_i64(k, c.ksp));
    LLVMValueRef inb = LLVMConstInt(k->i1, 1, 0);
    for (int d = 0; d < 3; d++) {
        kv[d] = cg_loop_begin(k, &lk[d], cg_i64(k, W->k[d]));
        iv[d] = cg_add(k, LLVMBuildSub(b, cg_mul(k, ov[d], cg_i64(k, W->s[d])), cg_i64(k, W->pb[d]), ""),
                       cg_mul(k, kv[d], cg_i64(k, W->d[d])));
        inb = LLVMBuildAnd(b, inb, cg_in_range(k, iv[d], W->in[d]), "");
    }
    LLVMValueRef xi = LLVMBuildSelect(b, inb, cg_add(k, xb, lin3(k, iv, W->in)), cg_i64(k, 0), "");
    LLVMValueRef xv = LLVMBuildSelect(b, inb, cg_load_raw(k, ET_F32, a->in[0], xi), cg_f32(k, 0.0f), "");
    LLVMValueRef fa[3] = {xv, cg_load_raw(k, ET_F32, a->in[1], cg_add(k, wb, lin3(k, kv, W->k))),
                          LLVMBuildLoad2(b, k->f32, accp, "")};
    LLVMBuildStore(b, irb_fma(&k->ir, fa[0], fa[1], fa[2]), accp);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lk[d]);
    cg_loop_end(k, &lc);
    LLVMValueRef yi = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c.M)), vm), cg_i64(k, c.osp)),
                             lin3(k, ov, W->out));
    LLVMValueRef v = LLVMBuildLoad2(b, k->f32, accp, "");
    if (has_b)
        v = LLVMBuildFAdd(b, v, cg_load_raw(k, ET_F32, a->in[2], vm), "");
    cg_store_raw(k, ET_F32, a->out[0], yi, v);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lo[d]);
    cg_loop_end(k, &lm);
    cg_loop_end(k, &ln);
    return true;
}

/* run_float_convt of ref_linear.c: per output element one f32 fma chain over (c, k0, k1, k2),
 * a tap that no input position reaches (o + pb - k*d not a multiple of the stride in [0, in*s))
 * reading 0, then + bias. */
bool
cg_emit_convt_loops(Kb *k, Node *n, const CgNodeArgs *a)
{
    FConv c;
    if (!all_f32(k, n) || !fconv_geo(k, n, true, &c))
        return false;
    const CgWin *W = &c.w;
    if (vt(k, n->in[1])->dims[0] != c.C || vt(k, n->in[1])->dims[1] != c.Mg)
        return cg_fail(k, n, "weight shape does not match the channels");
    bool has_b = n->nin > 2 && n->in[2].id;
    LLVMBuilderRef b = k->b;
    CgLoop ln, lm, lo[3], lc, lk[3];
    LLVMValueRef vn = cg_loop_begin(k, &ln, cg_i64(k, c.N));
    LLVMValueRef vm = cg_loop_begin(k, &lm, cg_i64(k, c.M));
    LLVMValueRef grp = LLVMBuildSDiv(b, vm, cg_i64(k, c.Mg), ""), mm = LLVMBuildSRem(b, vm, cg_i64(k, c.Mg), "");
    LLVMValueRef ov[3], kv[3], iv[3];
    for (int d = 0; d < 3; d++)
        ov[d] = cg_loop_begin(k, &lo[d], cg_i64(k, W->out[d]));
    LLVMValueRef accp = cg_entry_alloca(k, k->f32);
    LLVMBuildStore(b, cg_f32(k, 0.0f), accp);
    LLVMValueRef vc = cg_loop_begin(k, &lc, cg_i64(k, c.Cg));
    LLVMValueRef cc = cg_add(k, cg_mul(k, grp, cg_i64(k, c.Cg)), vc);
    LLVMValueRef xb = cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c.C)), cc), cg_i64(k, c.isp));
    LLVMValueRef wb = cg_mul(k, cg_add(k, cg_mul(k, cc, cg_i64(k, c.Mg)), mm), cg_i64(k, c.ksp));
    LLVMValueRef inb = LLVMConstInt(k->i1, 1, 0);
    for (int d = 0; d < 3; d++) {
        kv[d] = cg_loop_begin(k, &lk[d], cg_i64(k, W->k[d]));
        LLVMValueRef t = LLVMBuildSub(b, cg_add(k, ov[d], cg_i64(k, W->pb[d])), cg_mul(k, kv[d], cg_i64(k, W->d[d])), "");
        LLVMValueRef ok = cg_in_range(k, t, W->in[d] * W->s[d]);
        /* t in [0, in*s): t / s and t % s of a non-negative t */
        LLVMValueRef tc = LLVMBuildSelect(b, ok, t, cg_i64(k, 0), "");
        iv[d] = LLVMBuildUDiv(b, tc, cg_i64(k, W->s[d]), "");
        ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildURem(b, tc, cg_i64(k, W->s[d]), ""), cg_i64(k, 0), ""), "");
        inb = LLVMBuildAnd(b, inb, ok, "");
    }
    LLVMValueRef xi = LLVMBuildSelect(b, inb, cg_add(k, xb, lin3(k, iv, W->in)), cg_i64(k, 0), "");
    LLVMValueRef xv = LLVMBuildSelect(b, inb, cg_load_raw(k, ET_F32, a->in[0], xi), cg_f32(k, 0.0f), "");
    LLVMValueRef fa[3] = {xv, cg_load_raw(k, ET_F32, a->in[1], cg_add(k, wb, lin3(k, kv, W->k))),
                          LLVMBuildLoad2(b, k->f32, accp, "")};
    LLVMBuildStore(b, irb_fma(&k->ir, fa[0], fa[1], fa[2]), accp);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lk[d]);
    cg_loop_end(k, &lc);
    LLVMValueRef yi = cg_add(k, cg_mul(k, cg_add(k, cg_mul(k, vn, cg_i64(k, c.M)), vm), cg_i64(k, c.osp)),
                             lin3(k, ov, W->out));
    LLVMValueRef v = LLVMBuildLoad2(b, k->f32, accp, "");
    if (has_b)
        v = LLVMBuildFAdd(b, v, cg_load_raw(k, ET_F32, a->in[2], vm), "");
    cg_store_raw(k, ET_F32, a->out[0], yi, v);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lo[d]);
    cg_loop_end(k, &lm);
    cg_loop_end(k, &ln);
    return true;
}

/* The f64 matmul of ref_linear.c (an f64 Einsum's matmul: numpy batch broadcasting, rank-1
 * operands promoted, a double sum). f32 matmul and gemm: float_gemm.c. */
bool
cg_emit_matmul_loops(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *at = vt(k, n->in[0]), *bt = vt(k, n->in[1]);
    bool f64 = at->elem == ET_F64 && bt->elem == ET_F64 && vt(k, n->out[0])->elem == ET_F64;
    if (!f64)
        return cg_fail(k, n, "matmul on %s is not supported", elem_name(at->elem));
    Type a2, b2, batch;
    ir_matmul_promote(at, bt, &a2, &b2);
    int64_t M = a2.dims[a2.rank - 2], K = a2.dims[a2.rank - 1], N = b2.dims[b2.rank - 1];
    if (b2.dims[b2.rank - 2] != K)
        return cg_fail(k, n, "inner dimensions differ");
    Type ba = a2, bb = b2;
    ba.rank -= 2;
    bb.rank -= 2;
    if (!shape_broadcast(&ba, &bb, &batch))
        return cg_fail(k, n, "batch dimensions do not broadcast");
    int64_t st[3][IR_MAX_RANK];
    type_bcast_strides(&ba, &batch, st[0]);
    type_bcast_strides(&bb, &batch, st[1]);
    type_strides(&batch, st[2]);
    for (int d = 0; d < batch.rank; d++) {
        st[0][d] *= M * K;
        st[1][d] *= K * N;
        st[2][d] *= M * N;
    }
    LLVMBuilderRef b = k->b;
    CgNest nb;
    LLVMValueRef off[3];
    cg_nest_begin(k, &nb, batch.dims, batch.rank, 3, (const int64_t (*)[IR_MAX_RANK])st, off);
    CgLoop li, lj, lk;
    LLVMValueRef vi = cg_loop_begin(k, &li, cg_i64(k, M));
    LLVMValueRef vj = cg_loop_begin(k, &lj, cg_i64(k, N));
    LLVMValueRef accp = cg_entry_alloca(k, k->f64);
    LLVMBuildStore(b, dconst(k, 0), accp);
    LLVMValueRef vk = cg_loop_begin(k, &lk, cg_i64(k, K));
    LLVMValueRef ai = cg_add(k, off[0], cg_add(k, cg_mul(k, vi, cg_i64(k, K)), vk));
    LLVMValueRef av = f64 ? cg_load_raw(k, ET_F64, a->in[0], ai) : load_d(k, a->in[0], ai);
    LLVMValueRef bi = cg_add(k, off[1], cg_add(k, cg_mul(k, vk, cg_i64(k, N)), vj));
    LLVMValueRef bv = f64 ? cg_load_raw(k, ET_F64, a->in[1], bi) : load_d(k, a->in[1], bi);
    LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, k->f64, accp, ""), LLVMBuildFMul(b, av, bv, ""), ""), accp);
    cg_loop_end(k, &lk);
    LLVMValueRef yi = cg_add(k, off[2], cg_add(k, cg_mul(k, vi, cg_i64(k, N)), vj));
    LLVMValueRef acc = LLVMBuildLoad2(b, k->f64, accp, "");
    if (f64)
        cg_store_raw(k, ET_F64, a->out[0], yi, acc);
    else
        cg_store_raw(k, ET_F32, a->out[0], yi, LLVMBuildFPTrunc(b, acc, k->f32, ""));
    cg_loop_end(k, &lj);
    cg_loop_end(k, &li);
    cg_nest_end(k, &nb);
    return true;
}

/* global_avgpool over NC planes of isp > 0 elements, GAP_LANES planes per vector: each lane is
 * one plane's double sum in tap order from +0.0 (the reference's order), divided by isp and
 * rounded once; the lanes make independent add chains. Groups of planes split across the
 * parallel-for hook from 2^15 elements, the last planes one lane at a time. */
#define GAP_LANES 8
static void
gap_planes(Kb *k, LLVMValueRef x, LLVMValueRef y, LLVMValueRef p0, unsigned w, int64_t isp)
{
    LLVMBuilderRef b = k->b;
    LLVMTypeRef dt = LLVMVectorType(k->f64, w), ft = LLVMVectorType(k->f32, w);
    LLVMValueRef accp = cg_entry_alloca(k, dt);
    LLVMBuildStore(b, LLVMConstNull(dt), accp);
    CgLoop l;
    LLVMValueRef t = cg_loop_begin(k, &l, cg_i64(k, isp));
    LLVMValueRef v = LLVMGetUndef(dt);
    for (unsigned i = 0; i < w; i++) {
        LLVMValueRef idx = cg_add(k, cg_mul(k, cg_add(k, p0, cg_i64(k, i)), cg_i64(k, isp)), t);
        v = LLVMBuildInsertElement(b, v, load_d(k, x, idx), LLVMConstInt(k->i32, i, 0), "");
    }
    LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, dt, accp, ""), v, ""), accp);
    cg_loop_end(k, &l);
    LLVMValueRef q = LLVMBuildFDiv(b, LLVMBuildLoad2(b, dt, accp, ""),
                                   cg_vsplat(k, dconst(k, (double)isp), w), "");
    q = LLVMBuildFPTrunc(b, q, ft, "");
    LLVMValueRef ptr = LLVMBuildGEP2(b, k->f32, y, &p0, 1, "");
    irb_store(&k->ir, q, ptr, 4);
}

/* True when x (global_avgpool's input, planes of isp values) is the result of a dequantize of
 * 8- or 16-bit integers with constant parameters, so that its double sum over a plane is exact
 * in any order. Each value is v = fl32((float)(q - zp) * s) with |q - zp| <= R: zero or at least
 * 2^e in magnitude (e = floor(log2 s), s normal), so a multiple of u = 2^(e - 23), and at most
 * s * R (1 + 2^-23) < 2^(e + 1) R (1 + 2^-23). Any partial sum of a plane is then a multiple of u
 * of magnitude below isp * R * 2^24 (1 + 2^-23) u, exact in double (53 bits) when
 * isp * R <= 2^28. With s * R finite in f32 no value is infinite (and none is NaN). */
static bool
gap_exact_input(Kb *k, ValueId x, int64_t isp)
{
    const Value *v = ir_value(k->g, x);
    const Node *d = v->def.id ? ir_node(k->g, v->def) : NULL;
    if (!d || d->op != OP_DEQUANTIZE || !d->q || (d->nin > 1 && d->in[1].id))
        return false;
    if (d->q->axis >= 0 && d->q->axis != 1) /* one scale per plane (channel) or per tensor */
        return false;
    ElemType qe = ir_value(k->g, d->in[0])->type.elem;
    if (!elem_is_quant_storage(qe) || elem_size(qe) > 2)
        return false;
    int64_t lo, hi;
    elem_range(qe, &lo, &hi);
    int nq = d->q->axis >= 0 ? (int)d->q->n : 1;
    for (int i = 0; i < nq; i++) {
        int64_t zp = d->q->zp[i];
        int64_t r = llabs(lo - zp) > llabs(hi - zp) ? llabs(lo - zp) : llabs(hi - zp);
        double sr = (double)d->q->scale[i] * (double)r;
        if (isp * r > ((int64_t)1 << 28) || !(sr < 3.0e38))
            return false;
    }
    return true;
}

/* Plane p (i64) of isp floats at x, summed as doubles in any order (gap_exact_input), / isp,
 * rounded to f32 into y[p]: two accumulators of 8 lanes over 16 values a step, then 8, then
 * the last values one at a time. */
static void
gap_exact_plane(Kb *k, LLVMValueRef x, LLVMValueRef y, LLVMValueRef p, int64_t isp)
{
    LLVMBuilderRef b = k->b;
    LLVMTypeRef f8 = LLVMVectorType(k->f32, 8), d8 = LLVMVectorType(k->f64, 8);
    LLVMValueRef base = cg_mul(k, p, cg_i64(k, isp));
    LLVMValueRef acc[2] = {cg_entry_alloca(k, d8), cg_entry_alloca(k, d8)};
    LLVMValueRef sp = cg_entry_alloca(k, k->f64);
    for (int i = 0; i < 2; i++)
        LLVMBuildStore(b, LLVMConstNull(d8), acc[i]);
    LLVMBuildStore(b, dconst(k, 0.0), sp);
    int64_t n16 = isp / 16, at = n16 * 16;
    for (int step = 0; step < 2; step++) {
        int64_t cnt = step == 0 ? n16 : (isp - at) / 8, w = step == 0 ? 16 : 8;
        if (cnt <= 0)
            continue;
        CgLoop l;
        LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, cnt));
        LLVMValueRef off = cg_add(k, base, cg_add(k, cg_i64(k, step == 0 ? 0 : at), cg_mul(k, i, cg_i64(k, w))));
        for (int h = 0; h < w / 8; h++) {
            LLVMValueRef o = cg_add(k, off, cg_i64(k, 8 * h));
            LLVMValueRef ld = irb_load(&k->ir, f8, LLVMBuildGEP2(b, k->f32, x, &o, 1, ""), 4);
            LLVMValueRef e = LLVMBuildFPExt(b, ld, d8, "");
            LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, d8, acc[h], ""), e, ""), acc[h]);
        }
        cg_loop_end_hint(k, &l, IRB_NO_VECTORIZE | IRB_NO_UNROLL);
        if (step == 1)
            at += cnt * 8;
    }
    if (isp > at) {
        CgLoop l;
        LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, isp - at));
        LLVMValueRef v = load_d(k, x, cg_add(k, base, cg_add(k, cg_i64(k, at), i)));
        LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, k->f64, sp, ""), v, ""), sp);
        cg_loop_end_novec(k, &l);
    }
    LLVMValueRef t = LLVMBuildFAdd(b, LLVMBuildLoad2(b, d8, acc[0], ""), LLVMBuildLoad2(b, d8, acc[1], ""), "");
    LLVMValueRef sum = LLVMBuildLoad2(b, k->f64, sp, "");
    for (unsigned j = 0; j < 8; j++)
        sum = LLVMBuildFAdd(b, sum, LLVMBuildExtractElement(b, t, LLVMConstInt(k->i32, j, 0), ""), "");
    LLVMValueRef q = LLVMBuildFPTrunc(b, LLVMBuildFDiv(b, sum, dconst(k, (double)isp), ""), k->f32, "");
    irb_store(&k->ir, q, LLVMBuildGEP2(b, k->f32, y, &p, 1, ""), 4);
}

static bool
emit_global_avgpool(Kb *k, Node *n, const CgNodeArgs *a, int64_t NC, int64_t isp)
{
    if (gap_exact_input(k, n->in[0], isp)) {
        /* planes across the parallel-for hook from 2^15 values */
        Par pp;
        CgLoop lp;
        LLVMValueRef io[2] = {a->in[0], a->out[0]};
        bool par = NC > 1 && NC * isp >= ((int64_t)1 << 15);
        LLVMValueRef p = par ? cg_par_begin(k, &pp, NC, io, 2) : cg_loop_begin(k, &lp, cg_i64(k, NC));
        gap_exact_plane(k, io[0], io[1], p, isp);
        if (par)
            cg_par_end(k, &pp, a);
        else
            cg_loop_end_hint(k, &lp, IRB_NO_UNROLL);
        return true;
    }
    int64_t groups = NC / GAP_LANES;
    if (groups > 0) {
        Par pp;
        CgLoop lg;
        LLVMValueRef io[2] = {a->in[0], a->out[0]};
        bool par = groups > 1 && NC * isp >= ((int64_t)1 << 15);
        LLVMValueRef g = par ? cg_par_begin(k, &pp, groups, io, 2) : cg_loop_begin(k, &lg, cg_i64(k, groups));
        gap_planes(k, io[0], io[1], cg_mul(k, g, cg_i64(k, GAP_LANES)), GAP_LANES, isp);
        if (par)
            cg_par_end(k, &pp, a);
        else
            cg_loop_end_hint(k, &lg, IRB_NO_UNROLL);
    }
    if (NC > groups * GAP_LANES) {
        CgLoop lt;
        LLVMValueRef p = cg_loop_begin(k, &lt, cg_i64(k, NC - groups * GAP_LANES));
        gap_planes(k, a->in[0], a->out[0], cg_add(k, p, cg_i64(k, groups * GAP_LANES)), 1, isp);
        cg_loop_end_novec(k, &lt);
    }
    return true;
}

/* pool() of ref_pool.c for avgpool / global_avgpool: double sum over the window taps inside
 * the input; divisor = taps inside [-pb, in + pe) (count_include_pad) or the real taps. */
bool
cg_emit_favgpool(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (!all_f32(k, n))
        return false;
    Graph *g = k->g;
    const Type *x = vt(k, n->in[0]), *y = vt(k, n->out[0]);
    CgWin w;
    if (n->op == OP_GLOBAL_AVGPOOL) {
        if (x->rank < 3 || x->rank > 5)
            return cg_fail(k, n, "rank %d is not supported", x->rank);
        memset(&w, 0, sizeof w);
        w.ns = x->rank - 2;
        for (int i = 0; i < 3; i++) {
            w.in[i] = w.k[i] = i < w.ns ? x->dims[2 + i] : 1;
            w.out[i] = w.s[i] = w.d[i] = 1;
        }
    } else {
        int64_t ks[IR_MAX_RANK] = {1, 1, 1};
        if (ir_attr_ints(g, n, "kernel_shape", ks, IR_MAX_RANK) != x->rank - 2)
            return cg_fail(k, n, "kernel_shape must have %d entries", x->rank - 2);
        if (!cg_window(k, n, x, y, ks, &w))
            return false;
    }
    bool incl = ir_attr_int(g, n, "count_include_pad", 0) != 0;
    int64_t NC = x->dims[0] * x->dims[1];
    int64_t isp = w.in[0] * w.in[1] * w.in[2], osp = w.out[0] * w.out[1] * w.out[2];
    if (n->op == OP_GLOBAL_AVGPOOL && isp > 0)
        return emit_global_avgpool(k, n, a, NC, isp);
    LLVMBuilderRef b = k->b;
    CgLoop lp, lo[3], lk[3];
    /* planes (n, c) split across the parallel-for hook from 2^15 taps */
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    Par pp;
    bool par = NC > 1 && NC * osp * w.k[0] * w.k[1] * w.k[2] >= ((int64_t)1 << 15);
    LLVMValueRef vp = par ? cg_par_begin(k, &pp, NC, io, 2) : cg_loop_begin(k, &lp, cg_i64(k, NC));
    LLVMValueRef ov[3], kv[3], iv[3];
    for (int d = 0; d < 3; d++)
        ov[d] = cg_loop_begin(k, &lo[d], cg_i64(k, w.out[d]));
    LLVMValueRef sump = cg_entry_alloca(k, k->f64), cntp = cg_entry_alloca(k, k->i64);
    LLVMBuildStore(b, dconst(k, 0), sump);
    LLVMBuildStore(b, cg_i64(k, 0), cntp);
    /* count_include_pad divisor: product over axes of taps inside [-pb, in + pe) */
    LLVMValueRef padcnt = cg_i64(k, 1);
    for (int d = 0; d < 3; d++) {
        LLVMValueRef taps = cg_i64(k, 0);
        for (int64_t t = 0; t < w.k[d]; t++) {
            LLVMValueRef i = cg_add(k, LLVMBuildSub(b, cg_mul(k, ov[d], cg_i64(k, w.s[d])), cg_i64(k, w.pb[d]), ""),
                                    cg_i64(k, t * w.d[d]));
            LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, i, cg_i64(k, -w.pb[d]), ""),
                                           LLVMBuildICmp(b, LLVMIntSLT, i, cg_i64(k, w.in[d] + w.pe[d]), ""), "");
            taps = cg_add(k, taps, LLVMBuildZExt(b, in, k->i64, ""));
        }
        padcnt = cg_mul(k, padcnt, taps);
    }
    LLVMValueRef inb = LLVMConstInt(k->i1, 1, 0);
    for (int d = 0; d < 3; d++) {
        kv[d] = cg_loop_begin(k, &lk[d], cg_i64(k, w.k[d]));
        iv[d] = cg_add(k, LLVMBuildSub(b, cg_mul(k, ov[d], cg_i64(k, w.s[d])), cg_i64(k, w.pb[d]), ""),
                       cg_mul(k, kv[d], cg_i64(k, w.d[d])));
        inb = LLVMBuildAnd(b, inb, cg_in_range(k, iv[d], w.in[d]), "");
    }
    LLVMValueRef xi = LLVMBuildSelect(b, inb, cg_add(k, cg_mul(k, vp, cg_i64(k, isp)), lin3(k, iv, w.in)), cg_i64(k, 0), "");
    LLVMValueRef s = LLVMBuildLoad2(b, k->f64, sump, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, inb, LLVMBuildFAdd(b, s, load_d(k, io[0], xi), ""), s, ""), sump);
    LLVMBuildStore(b, cg_add(k, LLVMBuildLoad2(b, k->i64, cntp, ""), LLVMBuildZExt(b, inb, k->i64, "")), cntp);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lk[d]);
    LLVMValueRef div = incl ? padcnt : LLVMBuildLoad2(b, k->i64, cntp, "");
    LLVMValueRef q = LLVMBuildFDiv(b, LLVMBuildLoad2(b, k->f64, sump, ""), LLVMBuildSIToFP(b, div, k->f64, ""), "");
    q = LLVMBuildFPTrunc(b, q, k->f32, "");
    q = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, div, cg_i64(k, 0), ""), cg_f32(k, 0.0f), q, "");
    LLVMValueRef yi = cg_add(k, cg_mul(k, vp, cg_i64(k, osp)), lin3(k, ov, w.out));
    cg_store_raw(k, ET_F32, io[1], yi, q);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lo[d]);
    if (par)
        cg_par_end(k, &pp, a);
    else
        cg_loop_end(k, &lp);
    return true;
}

/* maxpool of ref_pool.c over any element type, for 3 spatial dims, and for 1 to 3 with the
 * indices result (otherwise 1-D/2-D: qelem.c): the first maximum of the taps inside
 * the input, a NaN wins (the last NaN, as the reference); raw bytes are copied. The indices are
 * the flat input index of the maximum, row-major or (storage_order=1) column-major over the
 * spatial axes, plus the batch/channel offset. A window that covers only padding is rejected at
 * compile time (shapes are static). */
bool
cg_emit_maxpool3(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *x = vt(k, n->in[0]), *y = vt(k, n->out[0]);
    int64_t ks[IR_MAX_RANK] = {1, 1, 1};
    if (ir_attr_ints(g, n, "kernel_shape", ks, IR_MAX_RANK) != x->rank - 2)
        return cg_fail(k, n, "kernel_shape must have %d entries", x->rank - 2);
    bool colmajor = ir_attr_int(g, n, "storage_order", 0) != 0;
    if (x->elem != y->elem || x->elem == ET_F16 || x->elem == ET_NONE)
        return cg_fail(k, n, "maxpool on %s is not supported", elem_name(x->elem));
    CgWin w;
    if (!cg_window(k, n, x, y, ks, &w))
        return false;
    for (int d = 0; d < 3; d++)
        for (int64_t o = 0; o < w.out[d]; o++) {
            bool any = false;
            for (int64_t t = 0; t < w.k[d] && !any; t++) {
                int64_t i = o * w.s[d] - w.pb[d] + t * w.d[d];
                any = i >= 0 && i < w.in[d];
            }
            if (!any)
                return cg_fail(k, n, "a pooling window covers only padding");
        }
    bool fl = elem_is_float(x->elem);
    int64_t NC = x->dims[0] * x->dims[1];
    int64_t isp = w.in[0] * w.in[1] * w.in[2], osp = w.out[0] * w.out[1] * w.out[2];
    LLVMBuilderRef b = k->b;
    LLVMTypeRef vty = fl ? k->f64 : k->i64;
    CgLoop lp, lo[3], lk[3];
    LLVMValueRef vp = cg_loop_begin(k, &lp, cg_i64(k, NC));
    LLVMValueRef ov[3], kv[3], iv[3];
    for (int d = 0; d < 3; d++)
        ov[d] = cg_loop_begin(k, &lo[d], cg_i64(k, w.out[d]));
    LLVMValueRef bestp = cg_entry_alloca(k, vty), bip = cg_entry_alloca(k, k->i64);
    LLVMBuildStore(b, LLVMConstNull(vty), bestp);
    LLVMBuildStore(b, cg_i64(k, -1), bip);
    LLVMValueRef inb = LLVMConstInt(k->i1, 1, 0);
    for (int d = 0; d < 3; d++) {
        kv[d] = cg_loop_begin(k, &lk[d], cg_i64(k, w.k[d]));
        iv[d] = cg_add(k, LLVMBuildSub(b, cg_mul(k, ov[d], cg_i64(k, w.s[d])), cg_i64(k, w.pb[d]), ""),
                       cg_mul(k, kv[d], cg_i64(k, w.d[d])));
        inb = LLVMBuildAnd(b, inb, cg_in_range(k, iv[d], w.in[d]), "");
    }
    LLVMValueRef xi = LLVMBuildSelect(b, inb, cg_add(k, cg_mul(k, vp, cg_i64(k, isp)), lin3(k, iv, w.in)), cg_i64(k, 0), "");
    LLVMValueRef v = cg_load_i64(k, x->elem, a->in[0], xi);
    if (x->elem == ET_F32)
        v = LLVMBuildFPExt(b, v, k->f64, "");
    LLVMValueRef best = LLVMBuildLoad2(b, vty, bestp, ""), bi = LLVMBuildLoad2(b, k->i64, bip, "");
    LLVMValueRef better = fl ? LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealOGT, v, best, ""),
                                           LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), "")
                             : LLVMBuildICmp(b, LLVMIntSGT, v, best, "");
    better = LLVMBuildOr(b, better, LLVMBuildICmp(b, LLVMIntSLT, bi, cg_i64(k, 0), ""), "");
    better = LLVMBuildAnd(b, inb, better, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, better, v, best, ""), bestp);
    LLVMBuildStore(b, LLVMBuildSelect(b, better, xi, bi, ""), bip);
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lk[d]);
    LLVMValueRef yi = cg_add(k, cg_mul(k, vp, cg_i64(k, osp)), lin3(k, ov, w.out));
    bi = LLVMBuildLoad2(b, k->i64, bip, "");
    cg_store_raw(k, x->elem, a->out[0], yi, cg_load_raw(k, x->elem, a->in[0], bi));
    if (n->nout > 1) {
        if (colmajor) {
            /* s = i0*in1*in2 + i1*in2 + i2  ->  i0 + i1*in0 + i2*in0*in1 */
            LLVMValueRef base = cg_mul(k, vp, cg_i64(k, isp));
            LLVMValueRef s = LLVMBuildSub(b, bi, base, "");
            LLVMValueRef i0 = LLVMBuildSDiv(b, s, cg_i64(k, w.in[1] * w.in[2]), "");
            LLVMValueRef i1 = LLVMBuildSRem(b, LLVMBuildSDiv(b, s, cg_i64(k, w.in[2]), ""), cg_i64(k, w.in[1]), "");
            LLVMValueRef i2 = LLVMBuildSRem(b, s, cg_i64(k, w.in[2]), "");
            bi = cg_add(k, base, cg_add(k, i0, cg_add(k, cg_mul(k, i1, cg_i64(k, w.in[0])),
                                                      cg_mul(k, i2, cg_i64(k, w.in[0] * w.in[1])))));
        }
        cg_store_raw(k, ET_I64, a->out[1], yi, bi);
    }
    for (int d = 2; d >= 0; d--)
        cg_loop_end(k, &lo[d]);
    cg_loop_end(k, &lp);
    return true;
}

/* ---- resize (index maps shared with lib/ref: lib/ir/resize.c) ---- */


typedef struct RzAxis {
    LLVMValueRef i0, i1, t, omt; /* tables over the output coordinate (i64, i64, f64, f64) */
} RzAxis;

/* Value of the linear interpolation after the first m resized axes (ax[0..m)) at the index
 * vector idx (input coordinates on the other axes): the reference's separable order. */
static LLVMValueRef
rz_value(Kb *k, const Type *xt, const int *ax, const RzAxis *rz, int m, LLVMValueRef *idx,
         LLVMValueRef *ov, LLVMValueRef x, const int64_t *xs)
{
    if (m == 0) {
        LLVMValueRef off = cg_i64(k, 0);
        for (int d = 0; d < xt->rank; d++)
            off = cg_add(k, off, cg_mul(k, idx[d], cg_i64(k, xs[d])));
        return load_d(k, x, off);
    }
    int a = ax[m - 1];
    LLVMValueRef save = idx[a];
    idx[a] = cg_load_i64(k, ET_I64, rz[m - 1].i0, ov[a]);
    LLVMValueRef v0 = rz_value(k, xt, ax, rz, m - 1, idx, ov, x, xs);
    idx[a] = cg_load_i64(k, ET_I64, rz[m - 1].i1, ov[a]);
    LLVMValueRef v1 = rz_value(k, xt, ax, rz, m - 1, idx, ov, x, xs);
    idx[a] = save;
    LLVMBuilderRef b = k->b;
    return LLVMBuildFAdd(b, LLVMBuildFMul(b, v0, cg_load_raw(k, ET_F64, rz[m - 1].omt, ov[a]), ""),
                         LLVMBuildFMul(b, v1, cg_load_raw(k, ET_F64, rz[m - 1].t, ov[a]), ""), "");
}

bool
cg_emit_resize(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *xt = vt(k, n->in[0]), *yt = vt(k, n->out[0]);
    ResizeSpec rs;
    char why[160];
    const char *bad = ir_resize_spec(g, n, &rs, why, sizeof why);
    if (bad)
        return cg_fail(k, n, "%s", bad);
    bool linear = rs.linear;
    if (linear && (xt->elem != ET_F32 || yt->elem != ET_F32))
        return cg_fail(k, n, "linear resize needs f32");
    if (xt->elem != yt->elem || xt->rank != yt->rank)
        return cg_fail(k, n, "operand and result types differ");
    int r = xt->rank;
    int64_t xs[IR_MAX_RANK], ys[1][IR_MAX_RANK];
    type_strides(xt, xs);
    type_strides(yt, ys[0]);
    /* loops over the output; per-axis tables */
    int ax[IR_MAX_RANK], nax = 0;
    RzAxis rz[IR_MAX_RANK];
    LLVMValueRef tabs[IR_MAX_RANK] = {0};
    bool ok = true;
    for (int d = 0; d < r && ok; d++) {
        int64_t lin = xt->dims[d], lout = yt->dims[d];
        if (!linear) {
            int64_t *t = xmalloc((size_t)(lout ? lout : 1) * sizeof(int64_t));
            for (int64_t o = 0; o < lout; o++)
                t[o] = ir_resize_nearest_src(&rs, d, o, lin, lout);
            tabs[d] = cg_const_bytes(k, t, (size_t)(lout ? lout : 1) * sizeof(int64_t), "rz");
            free(t);
            continue;
        }
        if (ir_resize_identity(&rs, d, lin, lout))
            continue;
        int64_t *i0 = xmalloc((size_t)lout * sizeof(int64_t)), *i1 = xmalloc((size_t)lout * sizeof(int64_t));
        double *tt = xmalloc((size_t)lout * sizeof(double)), *om = xmalloc((size_t)lout * sizeof(double));
        ok = i0 && i1 && tt && om;
        for (int64_t o = 0; ok && o < lout; o++) {
            ir_resize_linear_src(&rs, d, o, lin, lout, &i0[o], &i1[o], &tt[o]);
            om[o] = 1 - tt[o];
        }
        if (ok) {
            rz[nax].i0 = cg_const_bytes(k, i0, (size_t)lout * 8, "rz0");
            rz[nax].i1 = cg_const_bytes(k, i1, (size_t)lout * 8, "rz1");
            rz[nax].t = cg_const_bytes(k, tt, (size_t)lout * 8, "rzt");
            rz[nax].omt = cg_const_bytes(k, om, (size_t)lout * 8, "rzo");
            ax[nax++] = d;
        }
        free(i0);
        free(i1);
        free(tt);
        free(om);
    }
    if (!ok)
        return cg_fail(k, n, "out of memory");
    if (linear && nax > 4)
        return cg_fail(k, n, "linear resize over more than 4 axes is not supported");
    /* tf_crop_and_resize: per-axis tables of the positions sampling inside the input (only
     * for axes with some outside); outside on any axis gives the extrapolation value */
    LLVMValueRef inside[IR_MAX_RANK] = {0};
    bool extrap = false;
    for (int d = 0; d < r; d++) {
        int64_t lin = xt->dims[d], lout = yt->dims[d];
        bool all = true;
        for (int64_t o = 0; o < lout && all; o++)
            all = ir_resize_inside(&rs, d, o, lin, lout);
        if (all)
            continue;
        uint8_t *m = xmalloc((size_t)lout);
        for (int64_t o = 0; o < lout; o++)
            m[o] = ir_resize_inside(&rs, d, o, lin, lout);
        inside[d] = cg_const_bytes(k, m, (size_t)lout, "rzin");
        free(m);
        extrap = true;
    }
    LLVMValueRef ev = NULL;
    if (extrap) {
        if (yt->elem == ET_F32 || yt->elem == ET_F64)
            ev = LLVMConstReal(cg_elem_type(k, yt->elem), rs.extrapolation);
        else if (elem_is_float(yt->elem))
            return cg_fail(k, n, "extrapolation into %s is not supported", elem_name(yt->elem));
        else
            ev = LLVMConstInt(cg_elem_type(k, yt->elem),
                              (unsigned long long)(int64_t)rs.extrapolation, 1);
    }
    /* the leading output dims (at least 16 rows, not the last) split across the parallel-for
     * hook from 2^15 elements, a nest over the rest */
    int64_t total = (int64_t)type_numel_unchecked(yt), prows = 1;
    int np = 0;
    while (total >= ((int64_t)1 << 15) && np + 1 < r && prows < 16)
        prows *= yt->dims[np++];
    bool par = prows > 1;
    np = par ? np : 0;
    LLVMValueRef io[2] = {a->in[0], a->out[0]}, ov[IR_MAX_RANK], idx[IR_MAX_RANK], yi;
    Par pp;
    if (par) {
        LLVMValueRef rem = cg_par_begin(k, &pp, prows, io, 2);
        for (int d = np - 1; d >= 0; d--) {
            ov[d] = LLVMBuildURem(k->b, rem, cg_i64(k, yt->dims[d]), "");
            rem = LLVMBuildUDiv(k->b, rem, cg_i64(k, yt->dims[d]), "");
        }
    }
    CgNest ns;
    cg_nest_begin(k, &ns, yt->dims + np, r - np, 1, (const int64_t (*)[IR_MAX_RANK])(ys[0] + np), &yi);
    for (int d = np; d < r; d++)
        ov[d] = ns.l[d - np].iv;
    for (int d = 0; d < np; d++)
        yi = cg_add(k, yi, cg_mul(k, ov[d], cg_i64(k, ys[0][d])));
    LLVMValueRef in_all = NULL;
    for (int d = 0; d < r; d++)
        if (inside[d]) {
            LLVMValueRef c = LLVMBuildICmp(k->b, LLVMIntNE, cg_load_i64(k, ET_U8, inside[d], ov[d]),
                                           cg_i64(k, 0), "");
            in_all = in_all ? LLVMBuildAnd(k->b, in_all, c, "") : c;
        }
    if (!linear) {
        LLVMValueRef src = cg_i64(k, 0);
        for (int d = 0; d < r; d++)
            src = cg_add(k, src, cg_mul(k, cg_load_i64(k, ET_I64, tabs[d], ov[d]), cg_i64(k, xs[d])));
        LLVMValueRef v = cg_load_raw(k, xt->elem, io[0], src);
        if (in_all)
            v = LLVMBuildSelect(k->b, in_all, v, ev, "");
        cg_store_raw(k, yt->elem, io[1], yi, v);
    } else {
        for (int d = 0; d < r; d++)
            idx[d] = ov[d];
        LLVMValueRef v = LLVMBuildFPTrunc(k->b, rz_value(k, xt, ax, rz, nax, idx, ov, io[0], xs),
                                          k->f32, "");
        if (in_all)
            v = LLVMBuildSelect(k->b, in_all, v, ev, "");
        cg_store_raw(k, ET_F32, io[1], yi, v);
    }
    cg_nest_end(k, &ns);
    if (par)
        cg_par_end(k, &pp, a);
    return true;
}

int64_t
cg_float_linear_scratch(Kb *k, Node *n)
{
    if (n->op != OP_CONV_TRANSPOSE)
        return 0;
    FConv c;
    return fconv_geo(k, n, true, &c) ? 0 : -1;
}
