/* float_norm.c: the row kernels of the float islands: softmax, layernorm and reduce_mean (f32),
 * exactly lib/ref/ref_elem.c's definitions: qn_expf of x - max, every sum in fmath.h's fixed
 * order (element j into partial sum j mod 16, then the fixed tree), one f32 division by the sum
 * or the count. A contiguous row runs 16 elements per step in 16 / lanes vectors (so the 16
 * partial sums are the same on 4-, 8- and 16-lane ISAs), its tail as masked vectors on x86
 * (element j still into partial sum j mod 16), elsewhere one element at a time into the partial
 * sum array; a strided row (softmax over an inner axis, reduce_mean over leading
 * axes) runs element by element into the same array. Rows split across the parallel-for hook
 * (cg_par_begin), each with its own partial sums. */
#include "codegen/lower/float_math.h"

#include "codegen/target/module.h"
#include "ir/eval.h"
#include "numerics/fmath.h"

#include <llvm-c/Core.h>

#include <math.h>
#include <string.h>

/* a row: element j at base + j * stride of ptr (f32) */
typedef struct Row {
    LLVMValueRef in, out; /* out NULL: no store */
    LLVMValueRef base;
    int64_t len, stride;
} Row;

/* what the summed value of element x is, and what (if anything) is stored at out */
typedef enum { SUM_X, SUM_SQDIFF, SUM_EXP } SumKind;

static LLVMValueRef
vptr(Kb *k, LLVMValueRef base, LLVMValueRef i)
{
    return LLVMBuildGEP2(k->b, k->f32, base, &i, 1, "");
}

static LLVMValueRef
vload(Kb *k, LLVMValueRef base, LLVMValueRef i, unsigned w)
{
    if (w == 1)
        return cg_load_raw(k, ET_F32, base, i);
    return irb_load(&k->ir, LLVMVectorType(k->f32, w), vptr(k, base, i), 4);
}

static void
vstore(Kb *k, LLVMValueRef base, LLVMValueRef i, LLVMValueRef v, unsigned w)
{
    if (w == 1) {
        cg_store_raw(k, ET_F32, base, i, v);
        return;
    }
    irb_store(&k->ir, v, vptr(k, base, i), 4);
}

/* Masked vectors for a contiguous row's tail on x86 (AVX2 vmaskmovps, AVX-512 k-masks): the
 * first `lanes` lanes of a w-lane vector at base + i; other lanes read `pass`, are not stored.
 * Elsewhere (NEON, generic) the tail stays one element at a time. */
static bool
masked_tail(Kb *k, const Row *r, unsigned vl)
{
    return r->stride == 1 && k->t->x86 && vl >= 8;
}

static LLVMValueRef
lanes_mask(Kb *k, unsigned w, int64_t lanes)
{
    LLVMValueRef e[16];
    for (unsigned l = 0; l < w; l++)
        e[l] = LLVMConstInt(LLVMInt1TypeInContext(k->c), (int64_t)l < lanes, 0);
    return LLVMConstVector(e, w);
}

static LLVMValueRef
mload(Kb *k, LLVMValueRef base, LLVMValueRef i, unsigned w, int64_t lanes, float pass)
{
    return irb_masked_load(k->b, k->c, k->mod, LLVMVectorType(k->f32, w), vptr(k, base, i),
                           lanes_mask(k, w, lanes), cg_vsplat(k, cg_f32(k, pass), w), 4);
}

static void
mstore(Kb *k, LLVMValueRef base, LLVMValueRef i, LLVMValueRef v, unsigned w, int64_t lanes)
{
    irb_masked_store(k->b, k->c, k->mod, v, vptr(k, base, i), lanes_mask(k, w, lanes), 4);
}

static LLVMValueRef
term(Kb *k, SumKind kind, LLVMValueRef x, LLVMValueRef c)
{
    if (kind == SUM_X)
        return x;
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef cc = LLVMGetTypeKind(t) == LLVMVectorTypeKind
                          ? cg_vsplat(k, c, LLVMGetVectorSize(t)) : c;
    LLVMValueRef d = LLVMBuildFSub(k->b, x, cc, "");
    return kind == SUM_EXP ? fm_exp(k, d) : LLVMBuildFMul(k->b, d, d, "");
}

/* The 16-lane sum (fmath.h) of term(x_j) over the row; SUM_EXP also stores each term at
 * r->out. c: the max (SUM_EXP) or the mean (SUM_SQDIFF). */
static LLVMValueRef
row_sum(Kb *k, const Row *r, SumKind kind, LLVMValueRef c, unsigned vl)
{
    LLVMBuilderRef b = k->b;
    LLVMTypeRef pt = LLVMArrayType2(k->f32, QN_SUM_LANES);
    LLVMValueRef p = cg_entry_alloca(k, pt);
    LLVMBuildStore(b, LLVMConstNull(pt), p);
    unsigned nv = QN_SUM_LANES / vl;
    int64_t chunks = r->stride == 1 ? r->len / QN_SUM_LANES : 0;
    int64_t rest = r->len - chunks * QN_SUM_LANES;
    bool mtail = rest > 0 && masked_tail(k, r, vl);
    if (chunks > 0 || mtail) {
        LLVMTypeRef vt = LLVMVectorType(k->f32, vl);
        LLVMValueRef acc[4];
        for (unsigned a = 0; a < nv; a++) {
            acc[a] = cg_entry_alloca(k, vt);
            LLVMBuildStore(b, LLVMConstNull(vt), acc[a]);
        }
        if (chunks > 0) {
            CgLoop l;
            LLVMValueRef c16 = cg_loop_begin(k, &l, cg_i64(k, chunks));
            for (unsigned a = 0; a < nv; a++) {
                LLVMValueRef i = cg_add(k, r->base, cg_add(k, cg_mul(k, c16, cg_i64(k, QN_SUM_LANES)),
                                                           cg_i64(k, (int64_t)(a * vl))));
                LLVMValueRef t = term(k, kind, vload(k, r->in, i, vl), c);
                if (kind == SUM_EXP)
                    vstore(k, r->out, i, t, vl);
                LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, vt, acc[a], ""), t, ""), acc[a]);
            }
            cg_loop_end(k, &l);
        }
        /* the tail's element j into partial sum j mod 16 as in the loop: lanes past the row
         * keep their partial sum (a select, not + 0: a -0 partial stays -0) */
        for (unsigned a = 0; mtail && a < nv; a++) {
            int64_t lanes = rest - (int64_t)(a * vl);
            if (lanes <= 0)
                break;
            LLVMValueRef i = cg_add(k, r->base, cg_i64(k, chunks * QN_SUM_LANES + (int64_t)(a * vl)));
            LLVMValueRef t = term(k, kind, mload(k, r->in, i, vl, lanes, 0.0f), c);
            if (kind == SUM_EXP)
                mstore(k, r->out, i, t, vl, lanes);
            LLVMValueRef old = LLVMBuildLoad2(b, vt, acc[a], "");
            LLVMBuildStore(b, LLVMBuildSelect(b, lanes_mask(k, vl, lanes), LLVMBuildFAdd(b, old, t, ""), old, ""), acc[a]);
        }
        for (unsigned a = 0; a < nv; a++) {
            LLVMValueRef off = cg_i64(k, (int64_t)(a * vl));
            irb_store(&k->ir, LLVMBuildLoad2(b, vt, acc[a], ""), vptr(k, p, off), 4);
        }
    }
    if (rest > 0 && !mtail) {
        CgLoop l;
        LLVMValueRef j = cg_add(k, cg_loop_begin(k, &l, cg_i64(k, rest)), cg_i64(k, chunks * QN_SUM_LANES));
        LLVMValueRef i = cg_add(k, r->base, cg_mul(k, j, cg_i64(k, r->stride)));
        LLVMValueRef t = term(k, kind, cg_load_raw(k, ET_F32, r->in, i), c);
        if (kind == SUM_EXP)
            cg_store_raw(k, ET_F32, r->out, i, t);
        LLVMValueRef slot = vptr(k, p, LLVMBuildAnd(b, j, cg_i64(k, QN_SUM_LANES - 1), ""));
        LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, k->f32, slot, ""), t, ""), slot);
        cg_loop_end_novec(k, &l);
    }
    LLVMValueRef acc[4];
    for (unsigned a = 0; a < nv; a++)
        acc[a] = vload(k, p, cg_i64(k, (int64_t)(a * vl)), vl);
    return fm_sum_tree(k, acc, vl);
}

/* for each element of the row: out = in / s (vectors over a contiguous row) */
static void
row_div(Kb *k, const Row *r, LLVMValueRef s, unsigned vl)
{
    int64_t nvec = r->stride == 1 ? r->len / vl : 0;
    int64_t rest = r->len - nvec * vl;
    bool mtail = rest > 0 && masked_tail(k, r, vl);
    for (int pass = 0; pass < 2; pass++) {
        unsigned w = pass ? 1 : vl;
        int64_t start = pass ? nvec * vl : 0, cnt = pass ? r->len - start : nvec;
        if (cnt <= 0 || (pass && mtail))
            continue;
        CgLoop l;
        LLVMValueRef j = cg_add(k, cg_mul(k, cg_loop_begin(k, &l, cg_i64(k, cnt)), cg_i64(k, w)), cg_i64(k, start));
        LLVMValueRef i = cg_add(k, r->base, cg_mul(k, j, cg_i64(k, r->stride)));
        LLVMValueRef sv = w == 1 ? s : cg_vsplat(k, s, w);
        vstore(k, r->out, i, LLVMBuildFDiv(k->b, vload(k, r->out, i, w), sv, ""), w);
        if (pass)
            cg_loop_end_novec(k, &l);
        else
            cg_loop_end(k, &l);
    }
    if (mtail) {
        LLVMValueRef i = cg_add(k, r->base, cg_i64(k, nvec * vl));
        LLVMValueRef q = LLVMBuildFDiv(k->b, mload(k, r->out, i, vl, rest, 1.0f), cg_vsplat(k, s, vl), "");
        mstore(k, r->out, i, q, vl, rest);
    }
}

/* the largest element, NaNs skipped (x > m ? x : m from -inf; the order does not matter) */
static LLVMValueRef
row_max(Kb *k, const Row *r, unsigned vl)
{
    LLVMBuilderRef b = k->b;
    LLVMValueRef mp = cg_entry_alloca(k, k->f32);
    LLVMBuildStore(b, cg_f32(k, -INFINITY), mp);
    int64_t nvec = r->stride == 1 ? r->len / vl : 0;
    int64_t rest = r->len - nvec * vl;
    bool mtail = rest > 0 && masked_tail(k, r, vl);
    if (nvec > 0 || mtail) {
        LLVMTypeRef vt = LLVMVectorType(k->f32, vl);
        LLVMValueRef vp = cg_entry_alloca(k, vt);
        LLVMBuildStore(b, cg_vsplat(k, cg_f32(k, -INFINITY), vl), vp);
        if (nvec > 0) {
            CgLoop l;
            LLVMValueRef i = cg_add(k, r->base, cg_mul(k, cg_loop_begin(k, &l, cg_i64(k, nvec)), cg_i64(k, vl)));
            LLVMValueRef x = vload(k, r->in, i, vl), m = LLVMBuildLoad2(b, vt, vp, "");
            LLVMBuildStore(b, LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, m, ""), x, m, ""), vp);
            cg_loop_end(k, &l);
        }
        if (mtail) { /* lanes past the row read -inf */
            LLVMValueRef x = mload(k, r->in, cg_add(k, r->base, cg_i64(k, nvec * vl)), vl, rest, -INFINITY);
            LLVMValueRef m = LLVMBuildLoad2(b, vt, vp, "");
            LLVMBuildStore(b, LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, m, ""), x, m, ""), vp);
        }
        /* the lanes' largest by halving (no lane holds a NaN; which of +0 and -0 wins does not
         * change x - max) */
        LLVMValueRef mv = LLVMBuildLoad2(b, vt, vp, "");
        for (unsigned w = vl / 2; w >= 1; w /= 2) {
            LLVMValueRef ilo[8], ihi[8];
            for (unsigned l = 0; l < w; l++) {
                ilo[l] = LLVMConstInt(k->i32, l, 0);
                ihi[l] = LLVMConstInt(k->i32, w + l, 0);
            }
            LLVMValueRef lo = LLVMBuildShuffleVector(b, mv, mv, LLVMConstVector(ilo, w), "");
            LLVMValueRef hi = LLVMBuildShuffleVector(b, mv, mv, LLVMConstVector(ihi, w), "");
            mv = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, hi, lo, ""), hi, lo, "");
        }
        LLVMBuildStore(b, LLVMBuildExtractElement(b, mv, LLVMConstInt(k->i32, 0, 0), ""), mp);
    }
    if (rest > 0 && !mtail) {
        CgLoop l;
        LLVMValueRef j = cg_add(k, cg_loop_begin(k, &l, cg_i64(k, rest)), cg_i64(k, nvec * vl));
        LLVMValueRef x = cg_load_raw(k, ET_F32, r->in, cg_add(k, r->base, cg_mul(k, j, cg_i64(k, r->stride))));
        LLVMValueRef m = LLVMBuildLoad2(b, k->f32, mp, "");
        LLVMBuildStore(b, LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, m, ""), x, m, ""), mp);
        cg_loop_end_novec(k, &l);
    }
    return LLVMBuildLoad2(b, k->f32, mp, "");
}

static void
split_axis(const Type *t, int ax, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < ax; d++)
        *outer *= t->dims[d];
    *len = t->dims[ax];
    for (int d = ax + 1; d < t->rank; d++)
        *inner *= t->dims[d];
}

/* parallel rows: body(row) for row in [0, rows); ptrs[] are the operand pointers */
static LLVMValueRef
par_rows(Kb *k, Par *par, int64_t rows, LLVMValueRef *ptrs, int np)
{
    LLVMValueRef r = cg_par_begin(k, par, rows, ptrs, np);
    if (fm_lanes(k) == 16)
        cg_function_set_target(par->fn, k->t, 512);
    return r;
}

static bool
emit_softmax(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *t = &ir_value(k->g, n->in[0])->type;
    if (t->elem != ET_F32)
        return cg_fail(k, n, "operand 0 must be f32, got %s", elem_name(t->elem));
    int64_t ax = ir_attr_int(k->g, n, "axis", -1);
    if (ax < 0)
        ax += t->rank;
    if (ax < 0 || ax >= t->rank)
        return cg_fail(k, n, "axis out of range");
    int64_t outer, len, inner;
    split_axis(t, (int)ax, &outer, &len, &inner);
    if (outer * inner == 0 || len == 0)
        return true;
    unsigned vl = fm_lanes(k);
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef row = par_rows(k, &par, outer * inner, io, 2);
    LLVMValueRef o = LLVMBuildUDiv(k->b, row, cg_i64(k, inner), "");
    LLVMValueRef i = LLVMBuildURem(k->b, row, cg_i64(k, inner), "");
    Row r = {io[0], io[1], cg_add(k, cg_mul(k, o, cg_i64(k, len * inner)), i), len, inner};
    LLVMValueRef mx = row_max(k, &r, vl);
    LLVMValueRef s = row_sum(k, &r, SUM_EXP, mx, vl);
    row_div(k, &r, s, vl);
    cg_par_end(k, &par, a);
    return true;
}

/* y = ((x - mean) * inv) * scale (+ bias) over one row, scale and bias read through the
 * broadcast strides st[1], st[2] of the normalized shape `tail` */
static void
ln_out(Kb *k, LLVMValueRef *io, LLVMValueRef base, const Type *tail, const int64_t (*st)[IR_MAX_RANK],
       bool has_b, bool flat, LLVMValueRef mean, LLVMValueRef inv, unsigned vl)
{
    int64_t len = (int64_t)type_numel_unchecked(tail);
    if (flat) {
        int64_t nvec = len / vl;
        for (int pass = 0; pass < 2; pass++) {
            unsigned w = pass ? 1 : vl;
            int64_t start = pass ? nvec * vl : 0, cnt = pass ? len - start : nvec;
            if (cnt <= 0)
                continue;
            CgLoop l;
            LLVMValueRef j = cg_add(k, cg_mul(k, cg_loop_begin(k, &l, cg_i64(k, cnt)), cg_i64(k, w)), cg_i64(k, start));
            LLVMValueRef mv = w == 1 ? mean : cg_vsplat(k, mean, w), iv = w == 1 ? inv : cg_vsplat(k, inv, w);
            LLVMValueRef v = LLVMBuildFMul(k->b, LLVMBuildFSub(k->b, vload(k, io[0], cg_add(k, base, j), w), mv, ""), iv, "");
            v = LLVMBuildFMul(k->b, v, vload(k, io[1], j, w), "");
            if (has_b)
                v = LLVMBuildFAdd(k->b, v, vload(k, io[2], j, w), "");
            vstore(k, io[3], cg_add(k, base, j), v, w);
            if (pass)
                cg_loop_end_novec(k, &l);
            else
                cg_loop_end(k, &l);
        }
        return;
    }
    CgNest ns;
    LLVMValueRef idx[3];
    cg_nest_begin(k, &ns, tail->dims, tail->rank, 3, st, idx);
    LLVMValueRef xi = cg_add(k, base, idx[0]);
    LLVMValueRef v = LLVMBuildFMul(k->b, LLVMBuildFSub(k->b, cg_load_raw(k, ET_F32, io[0], xi), mean, ""), inv, "");
    v = LLVMBuildFMul(k->b, v, cg_load_raw(k, ET_F32, io[1], idx[1]), "");
    if (has_b)
        v = LLVMBuildFAdd(k->b, v, cg_load_raw(k, ET_F32, io[2], idx[2]), "");
    cg_store_raw(k, ET_F32, io[3], xi, v);
    cg_nest_end(k, &ns);
}

static bool
emit_layernorm(Kb *k, Node *n, const CgNodeArgs *a)
{
    bool has_b = n->nin > 2 && n->in[2].id;
    for (uint32_t i = 0; i < (has_b ? 3u : 2u); i++)
        if (ir_value(k->g, n->in[i])->type.elem != ET_F32)
            return cg_fail(k, n, "operand %u must be f32", i);
    const Type *t = &ir_value(k->g, n->in[0])->type;
    int64_t ax = ir_attr_int(k->g, n, "axis", -1);
    if (ax < 0)
        ax += t->rank;
    if (ax < 0 || ax >= t->rank)
        return cg_fail(k, n, "axis out of range");
    float eps = ir_attr_float(k->g, n, "epsilon", 1e-5f);
    Type tail = *t;
    tail.rank = (uint8_t)(t->rank - ax);
    memmove(tail.dims, t->dims + ax, (size_t)tail.rank * sizeof(int64_t));
    int64_t st[3][IR_MAX_RANK];
    type_strides(&tail, st[0]);
    type_bcast_strides(&ir_value(k->g, n->in[1])->type, &tail, st[1]);
    const Type *tb = has_b ? &ir_value(k->g, n->in[2])->type : NULL;
    if (has_b)
        type_bcast_strides(tb, &tail, st[2]);
    else
        memset(st[2], 0, sizeof st[2]);
    int64_t len = (int64_t)type_numel_unchecked(&tail);
    int64_t outer = len ? (int64_t)type_numel_unchecked(t) / len : 0;
    if (outer == 0)
        return true;
    bool flat = type_numel_unchecked(&ir_value(k->g, n->in[1])->type) == (size_t)len &&
                (!has_b || type_numel_unchecked(tb) == (size_t)len);
    unsigned vl = fm_lanes(k);
    Par par;
    LLVMValueRef io[6] = {a->in[0], a->in[1], has_b ? a->in[2] : a->in[1], a->out[0],
                          n->nout > 1 ? a->out[1] : a->out[0], n->nout > 2 ? a->out[2] : a->out[0]};
    LLVMValueRef o = par_rows(k, &par, outer, io, 6);
    LLVMValueRef base = cg_mul(k, o, cg_i64(k, len));
    Row r = {io[0], NULL, base, len, 1};
    LLVMValueRef fl = cg_f32(k, (float)len);
    LLVMValueRef mean = LLVMBuildFDiv(k->b, row_sum(k, &r, SUM_X, NULL, vl), fl, "");
    LLVMValueRef var = LLVMBuildFDiv(k->b, row_sum(k, &r, SUM_SQDIFF, mean, vl), fl, "");
    LLVMValueRef s = LLVMBuildFAdd(k->b, var, cg_f32(k, eps), "");
    LLVMTypeRef f32 = k->f32;
    s = cg_call(k, "llvm.sqrt.f32", f32, &f32, &s, 1);
    LLVMValueRef inv = LLVMBuildFDiv(k->b, cg_f32(k, 1.0f), s, "");
    if (n->nout > 1)
        cg_store_raw(k, ET_F32, io[4], o, mean);
    if (n->nout > 2)
        cg_store_raw(k, ET_F32, io[5], o, inv);
    ln_out(k, io, base, &tail, (const int64_t (*)[IR_MAX_RANK])st, has_b, flat, mean, inv, vl);
    cg_par_end(k, &par, a);
    return true;
}

/* reduce_mean (f32): kept axes outside, reduced inside, each output's elements in input order
 * into the 16 partial sums; contiguous rows when the reduced axes are the trailing ones */
static bool
emit_reduce_mean(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *t = &ir_value(k->g, n->in[0])->type;
    if (t->elem != ET_F32)
        return cg_fail(k, n, "operand 0 must be f32, got %s", elem_name(t->elem));
    IrReduceSplit rs;
    if (!ir_reduce_split(k->g, n, t, &rs))
        return cg_fail(k, n, "axis out of range");
    int64_t cnt = rs.cnt, nkept = rs.nkept;
    if (nkept == 0)
        return true;
    unsigned vl = fm_lanes(k);
    Par par;
    LLVMValueRef io[2] = {a->in[0], a->out[0]};
    LLVMValueRef o = par_rows(k, &par, nkept, io, 2);
    LLVMValueRef sum;
    if (rs.trailing) {
        Row r = {io[0], NULL, cg_mul(k, o, cg_i64(k, cnt)), cnt, 1};
        sum = row_sum(k, &r, SUM_X, NULL, vl);
    } else {
        /* input offset of kept index o, then the reduced nest with a running count */
        LLVMValueRef off = cg_i64(k, 0), rem = o;
        for (int d = rs.nk - 1; d >= 0; d--) {
            off = cg_add(k, off, cg_mul(k, LLVMBuildURem(k->b, rem, cg_i64(k, rs.kd[d]), ""),
                                        cg_i64(k, rs.kst[0][d])));
            rem = LLVMBuildUDiv(k->b, rem, cg_i64(k, rs.kd[d]), "");
        }
        LLVMTypeRef pt = LLVMArrayType2(k->f32, QN_SUM_LANES);
        LLVMValueRef p = cg_entry_alloca(k, pt), cp = cg_entry_alloca(k, k->i64);
        LLVMBuildStore(k->b, LLVMConstNull(pt), p);
        LLVMBuildStore(k->b, cg_i64(k, 0), cp);
        CgNest ns;
        LLVMValueRef ri[1];
        cg_nest_begin(k, &ns, rs.rd, rs.nr, 1, (const int64_t (*)[IR_MAX_RANK])rs.rst, ri);
        LLVMValueRef c = LLVMBuildLoad2(k->b, k->i64, cp, "");
        LLVMValueRef slot = vptr(k, p, LLVMBuildAnd(k->b, c, cg_i64(k, QN_SUM_LANES - 1), ""));
        LLVMValueRef x = cg_load_raw(k, ET_F32, io[0], cg_add(k, off, ri[0]));
        LLVMBuildStore(k->b, LLVMBuildFAdd(k->b, LLVMBuildLoad2(k->b, k->f32, slot, ""), x, ""), slot);
        LLVMBuildStore(k->b, cg_add(k, c, cg_i64(k, 1)), cp);
        cg_nest_end(k, &ns);
        LLVMValueRef acc[4];
        for (unsigned i = 0; i < QN_SUM_LANES / vl; i++)
            acc[i] = vload(k, p, cg_i64(k, (int64_t)(i * vl)), vl);
        sum = fm_sum_tree(k, acc, vl);
    }
    cg_store_raw(k, ET_F32, io[1], o, LLVMBuildFDiv(k->b, sum, cg_f32(k, (float)cnt), ""));
    cg_par_end(k, &par, a);
    return true;
}

bool
cg_emit_float_norm(Kb *k, Node *n, const CgNodeArgs *a)
{
    switch (n->op) {
    case OP_SOFTMAX: return emit_softmax(k, n, a);
    case OP_LAYERNORM: return emit_layernorm(k, n, a);
    case OP_REDUCE_MEAN: return emit_reduce_mean(k, n, a);
    default: break;
    }
    return cg_fail(k, n, "%s is not a row kernel", op_info(n->op)->name);
}
