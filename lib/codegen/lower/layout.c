/* layout.c: layout ops as copies in the logical (C-order) layout: reshape family
 * (memcpy), transpose, slice, concat, split, pad (constant: fill and copy; edge/reflect, or
 * negative pads: an element loop), gather (one memcpy
 * per index, run-time indices checked). Each is a loop nest over the result with compile-time
 * strides, collapsed to the fewest dims, whose innermost contiguous run is one memcpy (register
 * tiles or an element loop where a transpose makes it strided), rows split across the
 * parallel-for hook, as are the chunks of a large single copy (reshape, a one-index gather);
 * any element type (quantized values pass unchanged). Semantics follow lib/ref/ref_layout.c. */
#include "codegen/lower/lower.h"
#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <math.h>
#include <string.h>


/* Drops dims of size 1 and merges dim d into d + 1 where both stride sets run on contiguously;
 * returns the new rank (0: one element). */
static int
collapse(int rank, int64_t *dims, int64_t *as, int64_t *bs)
{
    int r = 0;
    for (int d = 0; d < rank; d++) {
        if (dims[d] == 1)
            continue;
        if (r > 0 && as[r - 1] == as[d] * dims[d] && bs[r - 1] == bs[d] * dims[d]) {
            dims[r - 1] *= dims[d];
            as[r - 1] = as[d];
            bs[r - 1] = bs[d];
            continue;
        }
        dims[r] = dims[d];
        as[r] = as[d];
        bs[r] = bs[d];
        r++;
    }
    return r;
}

/* The W x W transpose of r[0..W) (W a power of two): log2(W) rounds of two-input shuffles, round
 * h swapping the off-diagonal h x h blocks ([[A, B], [C, D]] -> [[A, C], [B, D]] in every 2h-block),
 * so that afterwards r[i][j] is the old r[j][i]. */
static void
vtranspose(Kb *k, LLVMValueRef *r, unsigned W)
{
    for (unsigned h = W / 2; h >= 1; h /= 2)
        for (unsigned i = 0; i < W; i++) {
            if (i & h)
                continue;
            LLVMValueRef lo[16], hi[16];
            for (unsigned j = 0; j < W; j++) {
                lo[j] = LLVMConstInt(k->i32, (j & h) ? W + j - h : j, 0);
                hi[j] = LLVMConstInt(k->i32, (j & h) ? W + j : j + h, 0);
            }
            LLVMValueRef x = r[i], y = r[i + h];
            r[i] = LLVMBuildShuffleVector(k->b, x, y, LLVMConstVector(lo, W), "");
            r[i + h] = LLVMBuildShuffleVector(k->b, x, y, LLVMConstVector(hi, W), "");
        }
}

/* Element-wise copy of the lc x lj block at (c0, j0) of a plane: dim c (strides dc, sc) by dim j
 * (dj, sj); c0 and lc are values. */
static void
plane_scalar(Kb *k, ElemType e, LLVMValueRef *io, LLVMValueRef di, LLVMValueRef si, LLVMValueRef c0,
             LLVMValueRef lc, int64_t dc, int64_t sc, int64_t j0, int64_t lj, int64_t dj, int64_t sj)
{
    if (lj <= 0)
        return;
    CgLoop l1, l2;
    LLVMValueRef ic = cg_add(k, cg_loop_begin(k, &l1, lc), c0);
    LLVMValueRef ij = cg_add(k, cg_loop_begin(k, &l2, cg_i64(k, lj)), cg_i64(k, j0));
    LLVMValueRef s = cg_add(k, si, cg_add(k, cg_mul(k, ic, cg_i64(k, sc)), cg_mul(k, ij, cg_i64(k, sj))));
    LLVMValueRef d = cg_add(k, di, cg_add(k, cg_mul(k, ic, cg_i64(k, dc)), cg_mul(k, ij, cg_i64(k, dj))));
    cg_store_raw(k, e, io[0], d, cg_load_raw(k, e, io[1], s));
    cg_loop_end_novec(k, &l2);
    cg_loop_end_novec(k, &l1);
}

/* A transposed plane: lc (a value) along dim c, contiguous in the source (destination stride D),
 * by lj along dim j, contiguous in the destination (source stride S). W x W tiles: W vector loads
 * along c, the register transpose, W vector stores along j; the edges element by element. */
static void
plane_tiles(Kb *k, ElemType e, LLVMValueRef *io, LLVMValueRef di, LLVMValueRef si, LLVMValueRef lc,
            int64_t D, int64_t lj, int64_t S, unsigned W)
{
    LLVMTypeRef it = LLVMIntTypeInContext(k->c, 8 * (unsigned)elem_size(e)), vt = LLVMVectorType(it, W);
    LLVMValueRef tc = LLVMBuildUDiv(k->b, lc, cg_i64(k, W), ""), cw = cg_mul(k, tc, cg_i64(k, W));
    int64_t tj = lj / W;
    CgLoop l1, l2;
    LLVMValueRef c0 = cg_mul(k, cg_loop_begin(k, &l1, tc), cg_i64(k, W));
    LLVMValueRef j0 = cg_mul(k, cg_loop_begin(k, &l2, cg_i64(k, tj)), cg_i64(k, W));
    LLVMValueRef r[16];
    for (unsigned t = 0; t < W; t++) {
        LLVMValueRef o = cg_add(k, si, cg_add(k, c0, cg_mul(k, cg_add(k, j0, cg_i64(k, t)), cg_i64(k, S))));
        r[t] = irb_load(&k->ir, vt, LLVMBuildGEP2(k->b, it, io[1], &o, 1, ""), 1);
    }
    vtranspose(k, r, W);
    for (unsigned t = 0; t < W; t++) {
        LLVMValueRef o = cg_add(k, di, cg_add(k, j0, cg_mul(k, cg_add(k, c0, cg_i64(k, t)), cg_i64(k, D))));
        irb_store(&k->ir, r[t], LLVMBuildGEP2(k->b, it, io[0], &o, 1, ""), 1);
    }
    cg_loop_end_hint(k, &l2, IRB_NO_UNROLL);
    cg_loop_end_hint(k, &l1, IRB_NO_UNROLL);
    plane_scalar(k, e, io, di, si, cg_i64(k, 0), cw, D, 1, tj * W, lj - tj * W, 1, S);
    plane_scalar(k, e, io, di, si, cw, LLVMBuildSub(k->b, lc, cw, ""), D, 1, 0, lj, 1, S);
}

/* dst[doff + sum i_d*dst_st[d]] = src[soff + sum i_d*src_st[d]] over dims. Dims are collapsed
 * first; the last one is a row: one memcpy when it is contiguous on both sides; else, when
 * another dim is contiguous in the source, a transposed plane of W x W register tiles (W = the
 * ISA's vector bytes / element size, at most 16), else an element loop. Rows (the other dims)
 * are split across the parallel-for hook when there are at least 2^15 elements. */
static void
copy_nd(Kb *k, const CgNodeArgs *a, ElemType e, int rank, const int64_t *dims0,
        LLVMValueRef dst, int64_t doff, const int64_t *dst_st, LLVMValueRef src, int64_t soff,
        const int64_t *src_st)
{
    int64_t dims[IR_MAX_RANK], ds[IR_MAX_RANK], ss[IR_MAX_RANK], total = 1;
    for (int d = 0; d < rank; d++) {
        dims[d] = dims0[d];
        ds[d] = dst_st[d];
        ss[d] = src_st[d];
        total *= dims[d];
    }
    if (total == 0)
        return;
    int r = collapse(rank, dims, ds, ss), c = -1;
    int64_t len = r ? dims[r - 1] : 1, rdst = r ? ds[r - 1] : 0, rsrc = r ? ss[r - 1] : 0;
    int64_t es = (int64_t)elem_size(e);
    unsigned W = cg_isa_i32_lanes(k->t, k->isa) * 4 / (unsigned)es;
    W = W > 16 ? 16 : W;
    for (int d = 0; d + 1 < r && rdst == 1 && rsrc != 1; d++)
        if (ss[d] == 1 && dims[d] >= W && len >= W)
            c = d;
    /* the row dims: all but the last; the plane's c as chunks of CW (the last one shorter) */
    int64_t odims[IR_MAX_RANK], st[2][IR_MAX_RANK], rows = 1, CW = 4 * (int64_t)W;
    int no = 0;
    for (int d = 0; d + 1 < r; d++) {
        odims[no] = d == c ? (dims[d] + CW - 1) / CW : dims[d];
        st[0][no] = d == c ? CW * ds[d] : ds[d];
        st[1][no++] = d == c ? CW * ss[d] : ss[d];
        rows *= odims[no - 1];
    }
    int cq = c; /* c's position in odims (every dim but the last has one) */
    /* parallel over the first np row dims (at least 64 rows, or all of them), a nest over the
     * rest: the division of a row index into dims happens once per parallel row */
    bool par = rows > 1 && total >= ((int64_t)1 << 15);
    int np = 0;
    for (int64_t pr = 1; par && np < no && pr < 64; np++)
        pr *= odims[np];
    int64_t prows = 1;
    for (int d = 0; d < np; d++)
        prows *= odims[d];
    LLVMValueRef io[2] = {dst, src}, di = cg_i64(k, doff), si = cg_i64(k, soff), ivc = NULL;
    Par pp;
    CgNest ns;
    if (par) {
        LLVMValueRef rem = cg_par_begin(k, &pp, prows, io, 2);
        if (W * es == 64)
            cg_function_set_target(pp.fn, k->t, 512);
        for (int d = np - 1; d >= 0; d--) {
            LLVMValueRef iv = LLVMBuildURem(k->b, rem, cg_i64(k, odims[d]), "");
            rem = LLVMBuildUDiv(k->b, rem, cg_i64(k, odims[d]), "");
            di = cg_add(k, di, cg_mul(k, iv, cg_i64(k, st[0][d])));
            si = cg_add(k, si, cg_mul(k, iv, cg_i64(k, st[1][d])));
            ivc = d == cq ? iv : ivc;
        }
    }
    int64_t nst[2][IR_MAX_RANK];
    for (int d = np; d < no; d++) {
        nst[0][d - np] = st[0][d];
        nst[1][d - np] = st[1][d];
    }
    LLVMValueRef idx[2];
    cg_nest_begin(k, &ns, odims + np, no - np, 2, (const int64_t (*)[IR_MAX_RANK])nst, idx);
    di = cg_add(k, di, idx[0]);
    si = cg_add(k, si, idx[1]);
    ivc = cq >= np ? ns.l[cq - np].iv : ivc;
    if (c >= 0) { /* this chunk: min(CW, dims[c] - chunk * CW) */
        LLVMValueRef lc = cg_smin(k, cg_i64(k, CW), LLVMBuildSub(k->b, cg_i64(k, dims[c]),
                                                               cg_mul(k, ivc, cg_i64(k, CW)), ""));
        plane_tiles(k, e, io, di, si, lc, ds[c], len, rsrc, W);
    } else if (len == 1 || (rdst == 1 && rsrc == 1)) {
        LLVMBuildMemCpy(k->b, cg_gep(k, io[0], cg_mul(k, di, cg_i64(k, es))), 1,
                        cg_gep(k, io[1], cg_mul(k, si, cg_i64(k, es))), 1, cg_i64(k, len * es));
    } else {
        CgLoop l;
        LLVMValueRef iv = cg_loop_begin(k, &l, cg_i64(k, len));
        LLVMValueRef v = cg_load_raw(k, e, io[1], cg_add(k, si, cg_mul(k, iv, cg_i64(k, rsrc))));
        cg_store_raw(k, e, io[0], cg_add(k, di, cg_mul(k, iv, cg_i64(k, rdst))), v);
        cg_loop_end(k, &l);
    }
    cg_nest_end(k, &ns);
    if (par)
        cg_par_end(k, &pp, a);
}

/* memcpy of n bytes; from 2^17 bytes in 64 KiB chunks split across the parallel-for hook (a
 * reshape's copy, a gather of one large slice) */
#define COPY_CHUNK ((int64_t)1 << 16)
static void
big_copy(Kb *k, const CgNodeArgs *a, LLVMValueRef dst, LLVMValueRef src, int64_t n)
{
    if (n < 2 * COPY_CHUNK) {
        LLVMBuildMemCpy(k->b, dst, 1, src, 1, cg_i64(k, n));
        return;
    }
    LLVMValueRef io[2] = {dst, src};
    Par pp;
    LLVMValueRef off = cg_mul(k, cg_par_begin(k, &pp, (n + COPY_CHUNK - 1) / COPY_CHUNK, io, 2),
                              cg_i64(k, COPY_CHUNK));
    LLVMValueRef len = cg_smin(k, cg_i64(k, COPY_CHUNK), LLVMBuildSub(k->b, cg_i64(k, n), off, ""));
    LLVMBuildMemCpy(k->b, cg_gep(k, io[0], off), 1, cg_gep(k, io[1], off), 1, len);
    cg_par_end(k, &pp, a);
}

static int64_t
norm_axis(int64_t a, int rank)
{
    return a < 0 ? a + rank : a;
}

/* Pad (constant mode, no negative pads): the result filled with the value (a memset when all its
 * bytes are equal), then the input copied into the interior by copy_nd. */
static bool
pad_fill_copy(Kb *k, Node *n, const CgNodeArgs *a, const Type *x, const Type *y,
              const int64_t *pads, double v, LLVMValueRef cst)
{
    (void)n;
    int r = x->rank;
    int64_t es = (int64_t)elem_size(x->elem), ny = (int64_t)type_numel_unchecked(y);
    int64_t iv = (int64_t)v;
    bool zero = v == 0.0 && !signbit(v);
    bool same = elem_is_float(x->elem) ? zero : (es == 1 || iv == 0 || iv == -1);
    if (same)
        LLVMBuildMemSet(k->b, a->out[0], LLVMConstInt(k->i8, (unsigned long long)iv & 0xff, 0),
                        cg_i64(k, ny * es), 1);
    else {
        CgLoop l;
        LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, ny));
        LLVMBuildStore(k->b, cst, LLVMBuildGEP2(k->b, cg_elem_type(k, x->elem), a->out[0], &i, 1, ""));
        cg_loop_end(k, &l);
    }
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK], off = 0;
    type_strides(x, xs);
    type_strides(y, ys);
    for (int d = 0; d < r; d++)
        off += pads[d] * ys[d];
    copy_nd(k, a, x->elem, r, x->dims, a->out[0], off, ys, a->in[0], 0, xs);
    return true;
}

static bool
emit_pad(Kb *k, Node *n, const CgNodeArgs *a, const Type *x, const Type *y)
{
    Graph *g = k->g;
    int r = x->rank;
    int64_t pads[2 * IR_MAX_RANK] = {0};
    ir_attr_ints(g, n, "pads", pads, 2 * IR_MAX_RANK);
    const char *mode = ir_attr_string(g, n, "mode", "constant");
    int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : -1;
    if (m < 0)
        return cg_fail(k, n, "pad mode '%s' is not supported", mode);
    for (int d = 0; d < r; d++)
        if (m != 0 && x->dims[d] == 0 && y->dims[d] > 0)
            return cg_fail(k, n, "cannot pad an empty dimension in %s mode", mode);
    const Attr *va = ir_attr(g, n, "value");
    double v = va ? (va->kind == ATTR_INT ? (double)va->i : va->kind == ATTR_FLOAT ? va->f : 0.0) : 0.0;
    LLVMTypeRef et = cg_elem_type(k, x->elem);
    LLVMValueRef cst = elem_is_float(x->elem) ? LLVMConstReal(et, v)
                                              : LLVMConstInt(et, (unsigned long long)(int64_t)v, 1);
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
    type_strides(x, xs);
    type_strides(y, ys);
    bool grow = m == 0;
    for (int d = 0; d < 2 * r; d++)
        grow = grow && pads[d] >= 0;
    if (grow) /* constant padding around the whole input: fill, then copy the input in rows */
        return pad_fill_copy(k, n, a, x, y, pads, v, cst);
    CgLoop l[IR_MAX_RANK];
    LLVMValueRef di = cg_i64(k, 0), si = cg_i64(k, 0), outside = LLVMConstInt(k->i1, 0, 0);
    for (int d = 0; d < r; d++) {
        LLVMValueRef iv = cg_loop_begin(k, &l[d], cg_i64(k, y->dims[d]));
        di = cg_add(k, di, cg_mul(k, iv, cg_i64(k, ys[d])));
        int64_t len = x->dims[d];
        LLVMValueRef p = LLVMBuildSub(k->b, iv, cg_i64(k, pads[d]), "");
        LLVMValueRef lt = LLVMBuildICmp(k->b, LLVMIntSLT, p, cg_i64(k, 0), "");
        LLVMValueRef ge = LLVMBuildICmp(k->b, LLVMIntSGE, p, cg_i64(k, len), "");
        LLVMValueRef out = LLVMBuildOr(k->b, lt, ge, "");
        if (m == 0) {
            outside = LLVMBuildOr(k->b, outside, out, "");
            p = LLVMBuildSelect(k->b, out, cg_i64(k, 0), p, "");
        } else if (m == 2) {
            p = cg_smin(k, cg_smax(k, p, cg_i64(k, 0)), cg_i64(k, len - 1));
        } else if (len == 1) {
            p = cg_i64(k, 0);
        } else {
            int64_t period = 2 * (len - 1);
            LLVMValueRef q = LLVMBuildSRem(k->b, p, cg_i64(k, period), "");
            q = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSLT, q, cg_i64(k, 0), ""),
                                cg_add(k, q, cg_i64(k, period)), q, "");
            q = LLVMBuildSelect(k->b, LLVMBuildICmp(k->b, LLVMIntSGE, q, cg_i64(k, len), ""),
                                LLVMBuildSub(k->b, cg_i64(k, period), q, ""), q, "");
            p = q;
        }
        si = cg_add(k, si, cg_mul(k, p, cg_i64(k, xs[d])));
    }
    LLVMValueRef val = cg_load_raw(k, x->elem, a->in[0], si);
    if (m == 0)
        val = LLVMBuildSelect(k->b, outside, cst, val, "");
    cg_store_raw(k, x->elem, a->out[0], di, val);
    for (int d = r - 1; d >= 0; d--)
        cg_loop_end(k, &l[d]);
    return true;
}

/* gather: y[outer, idx..., inner] = x[outer, indices[idx...], inner], one memcpy of `inner`
 * elements per index (an embedding row). Run-time indices are checked first, all of them: one
 * outside [-dim, dim) makes the node function return QDQC_ERR_RUNTIME, as the reference
 * interpreter fails (cg_node_may_fail); constant ones are checked here. Rows are split across
 * the parallel-for hook when the result has at least 2^15 elements. */
static bool
emit_gather(Kb *k, Node *n, const CgNodeArgs *a, const Type *x, const Type *y)
{
    const Type *it = &ir_value(k->g, n->in[1])->type;
    int axis = (int)norm_axis(ir_attr_int(k->g, n, "axis", 0), x->rank);
    if (it->elem != ET_I64 && it->elem != ET_I32)
        return cg_fail(k, n, "gather indices must be i32 or i64");
    int64_t outer = 1, inner = 1, ni = (int64_t)type_numel_unchecked(it), dim = x->dims[axis];
    for (int d = 0; d < axis; d++)
        outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++)
        inner *= x->dims[d];
    LLVMBuilderRef b = k->b;
    const Tensor *ci = ir_const_of(k->g, n->in[1]);
    for (size_t i = 0; ci && i < (size_t)ni; i++)
        if (tensor_get_i(ci, i) < -dim || tensor_get_i(ci, i) >= dim)
            return cg_fail(k, n, "gather index %lld out of range [%lld, %lld)",
                           (long long)tensor_get_i(ci, i), (long long)-dim, (long long)dim);
    if (!ci && ni > 0) {
        CgLoop lc;
        LLVMValueRef vj = cg_loop_begin(k, &lc, cg_i64(k, ni));
        LLVMValueRef ix = cg_load_i64(k, it->elem, a->in[1], vj);
        LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, ix, cg_i64(k, -dim), ""),
                                       LLVMBuildICmp(b, LLVMIntSLT, ix, cg_i64(k, dim), ""), "");
        cg_ret_unless(k, ok, cg_i32(k, QDQC_ERR_RUNTIME), "bad_index");
        cg_loop_end(k, &lc);
    }
    if (outer * ni == 0 || inner == 0)
        return true;
    int64_t es = (int64_t)elem_size(x->elem), rows = outer * ni;
    if (rows == 1 && ci) { /* one constant index: one slice, copied in parallel chunks */
        int64_t ix = tensor_get_i(ci, 0);
        ix = ix < 0 ? ix + dim : ix;
        big_copy(k, a, a->out[0], cg_gep(k, a->in[0], cg_i64(k, ix * inner * es)), inner * es);
        return true;
    }
    LLVMValueRef io[3] = {a->in[0], a->in[1], a->out[0]};
    bool par = rows > 1 && rows * inner >= ((int64_t)1 << 15);
    Par pp;
    CgLoop lr;
    LLVMValueRef r = par ? cg_par_begin(k, &pp, rows, io, 3) : cg_loop_begin(k, &lr, cg_i64(k, rows));
    LLVMValueRef vo = LLVMBuildSDiv(b, r, cg_i64(k, ni), ""), vj = LLVMBuildSRem(b, r, cg_i64(k, ni), "");
    LLVMValueRef ix = cg_load_i64(k, it->elem, io[1], vj);
    ix = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, ix, cg_i64(k, 0), ""),
                         cg_add(k, ix, cg_i64(k, dim)), ix, "");
    LLVMValueRef src = cg_mul(k, cg_add(k, cg_mul(k, vo, cg_i64(k, dim)), ix), cg_i64(k, inner * es));
    LLVMBuildMemCpy(b, cg_gep(k, io[2], cg_mul(k, r, cg_i64(k, inner * es))), 1,
                    cg_gep(k, io[0], src), 1, cg_i64(k, inner * es));
    if (par)
        cg_par_end(k, &pp, a);
    else
        cg_loop_end(k, &lr);
    (void)y;
    return true;
}

/* ---- the emitters ops.def's LOWER column names ---- */

/* n's first operand and result types and their row-major strides */
typedef struct {
    const Type *x, *y;
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
} LayTypes;

static LayTypes
lay_types(Kb *k, const Node *n)
{
    LayTypes t;
    t.x = &ir_value(k->g, n->in[0])->type;
    t.y = &ir_value(k->g, n->out[0])->type;
    type_strides(t.x, t.xs);
    type_strides(t.y, t.ys);
    return t;
}

/* identity, reshape, flatten, squeeze, unsqueeze: the bytes unchanged */
bool
cg_emit_layout_copy(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *x = &ir_value(k->g, n->in[0])->type;
    big_copy(k, a, a->out[0], a->in[0], (int64_t)(type_numel_unchecked(x) * elem_size(x->elem)));
    return true;
}

bool
cg_emit_transpose(Kb *k, Node *n, const CgNodeArgs *a)
{
    LayTypes t = lay_types(k, n);
    const Type *x = t.x, *y = t.y;
    int64_t perm[IR_MAX_RANK], st[IR_MAX_RANK];
    if (ir_attr_ints(k->g, n, "perm", perm, IR_MAX_RANK) != x->rank)
        for (int d = 0; d < x->rank; d++)
            perm[d] = x->rank - 1 - d;
    for (int d = 0; d < x->rank; d++)
        st[d] = t.xs[perm[d]];
    copy_nd(k, a, x->elem, y->rank, y->dims, a->out[0], 0, t.ys, a->in[0], 0, st);
    return true;
}

bool
cg_emit_slice(Kb *k, Node *n, const CgNodeArgs *a)
{
    LayTypes t = lay_types(k, n);
    const Type *x = t.x, *y = t.y;
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK], off = 0, st[IR_MAX_RANK];
    ir_slice_starts(k->g, n, x, start, step);
    for (int d = 0; d < x->rank; d++) {
        off += start[d] * t.xs[d];
        st[d] = t.xs[d] * step[d];
    }
    copy_nd(k, a, x->elem, y->rank, y->dims, a->out[0], 0, t.ys, a->in[0], off, st);
    return true;
}

bool
cg_emit_concat(Kb *k, Node *n, const CgNodeArgs *a)
{
    LayTypes lt = lay_types(k, n);
    int64_t axis = norm_axis(ir_attr_int(k->g, n, "axis", 0), lt.y->rank), pos = 0;
    for (uint32_t i = 0; i < n->nin; i++) {
        const Type *t = &ir_value(k->g, n->in[i])->type;
        int64_t ts[IR_MAX_RANK];
        type_strides(t, ts);
        copy_nd(k, a, t->elem, t->rank, t->dims, a->out[0], pos * lt.ys[axis], lt.ys, a->in[i], 0, ts);
        pos += t->dims[axis];
    }
    return true;
}

bool
cg_emit_split(Kb *k, Node *n, const CgNodeArgs *a)
{
    LayTypes lt = lay_types(k, n);
    int64_t axis = norm_axis(ir_attr_int(k->g, n, "axis", 0), lt.x->rank), pos = 0;
    for (uint32_t i = 0; i < n->nout; i++) {
        const Type *t = &ir_value(k->g, n->out[i])->type;
        int64_t ts[IR_MAX_RANK];
        type_strides(t, ts);
        copy_nd(k, a, t->elem, t->rank, t->dims, a->out[i], 0, ts, a->in[0], pos * lt.xs[axis], lt.xs);
        pos += t->dims[axis];
    }
    return true;
}

bool
cg_emit_pad(Kb *k, Node *n, const CgNodeArgs *a)
{
    LayTypes t = lay_types(k, n);
    return emit_pad(k, n, a, t.x, t.y);
}

bool
cg_emit_gather(Kb *k, Node *n, const CgNodeArgs *a)
{
    LayTypes t = lay_types(k, n);
    return emit_gather(k, n, a, t.x, t.y);
}
