/* select.c: the comparison (equal, less, less_equal, greater, greater_equal), logic (not, and,
 * or, xor), selection (where) and broadcasting-copy (expand, tile) kernels, and range, exactly
 * as lib/ir/eval.c defines them (the reference interpreter runs that code): floats compared
 * with ordered IEEE predicates after an exact extension (f16 to f32), integers as i64 (sign- or
 * zero-extended by type), bool as 0/1 (a nonzero byte is true); where copies the raw element
 * of x or y; range computes start + (T)i * delta with one multiply and one add (no FMA).
 *
 * The broadcasting ops run as rows: the result's last axis is the inner loop, in which every
 * operand's index moves by a constant stride (0 or its own), so LLVM's loop vectoriser turns it
 * into vector loads, compares and selects (an attention mask [1,1,S,S] against scores
 * [B,H,S,S]: one vector select per 8 or 16 scores, codegen/select-vec.test). Results of at
 * least PAR_MIN elements split their first axis of size > 1 (not the last) across the
 * parallel-for hook. */
#include "codegen/lower/lower.h"

#include <llvm-c/Core.h>

#include <string.h>

enum { PAR_MIN = 1 << 15 };

static const Type *
vt(Kb *k, ValueId v)
{
    return &ir_value(k->g, v)->type;
}

/* ---- one element of each op ---- */

static LLVMValueRef
truth(Kb *k, LLVMValueRef base, LLVMValueRef idx)
{
    return LLVMBuildICmp(k->b, LLVMIntNE, cg_load_raw(k, ET_BOOL, base, idx),
                         LLVMConstInt(k->i8, 0, 0), "");
}

static LLVMValueRef
compare(Kb *k, Node *n, ElemType e, LLVMValueRef x, LLVMValueRef z)
{
    if (elem_is_float(e)) {
        LLVMRealPredicate p = n->op == OP_EQUAL ? LLVMRealOEQ : n->op == OP_LESS ? LLVMRealOLT
                              : n->op == OP_LESS_EQUAL ? LLVMRealOLE
                              : n->op == OP_GREATER ? LLVMRealOGT : LLVMRealOGE;
        if (e == ET_F16) { /* exact in f32 */
            x = LLVMBuildFPExt(k->b, x, k->f32, "");
            z = LLVMBuildFPExt(k->b, z, k->f32, "");
        }
        return LLVMBuildFCmp(k->b, p, x, z, "");
    }
    LLVMIntPredicate p = n->op == OP_EQUAL ? LLVMIntEQ : n->op == OP_LESS ? LLVMIntSLT
                         : n->op == OP_LESS_EQUAL ? LLVMIntSLE
                         : n->op == OP_GREATER ? LLVMIntSGT : LLVMIntSGE;
    return LLVMBuildICmp(k->b, p, x, z, "");
}

/* An operand as compare() reads it: raw floats, integers as i64, bool as 0/1. */
static LLVMValueRef
load_cmp(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx)
{
    if (elem_is_float(e))
        return cg_load_raw(k, e, base, idx);
    if (e == ET_BOOL)
        return LLVMBuildZExt(k->b, truth(k, base, idx), k->i64, "");
    return cg_load_i64(k, e, base, idx);
}

/* y[iy] from the operands at ix[] (element indices). */
static void
element(Kb *k, Node *n, LLVMValueRef *in, LLVMValueRef out, LLVMValueRef *ix, LLVMValueRef iy)
{
    LLVMBuilderRef b = k->b;
    const Type *y = vt(k, n->out[0]);
    LLVMValueRef r;
    switch (n->op) {
    case OP_NOT:
        r = LLVMBuildNot(b, truth(k, in[0], ix[0]), "");
        break;
    case OP_AND:
        r = LLVMBuildAnd(b, truth(k, in[0], ix[0]), truth(k, in[1], ix[1]), "");
        break;
    case OP_OR:
        r = LLVMBuildOr(b, truth(k, in[0], ix[0]), truth(k, in[1], ix[1]), "");
        break;
    case OP_XOR:
        r = LLVMBuildXor(b, truth(k, in[0], ix[0]), truth(k, in[1], ix[1]), "");
        break;
    case OP_WHERE:
        cg_store_raw(k, y->elem, out, iy,
                     LLVMBuildSelect(b, truth(k, in[0], ix[0]), cg_load_raw(k, y->elem, in[1], ix[1]),
                                     cg_load_raw(k, y->elem, in[2], ix[2]), ""));
        return;
    case OP_EXPAND: case OP_TILE:
        cg_store_raw(k, y->elem, out, iy, cg_load_raw(k, y->elem, in[0], ix[0]));
        return;
    default: {
        ElemType e = vt(k, n->in[0])->elem;
        r = compare(k, n, e, load_cmp(k, e, in[0], ix[0]), load_cmp(k, e, in[1], ix[1]));
        break;
    }
    }
    cg_store_raw(k, ET_BOOL, out, iy, LLVMBuildZExt(b, r, k->i8, ""));
}

/* ---- the row walk ---- */

/* The loops of the result (dims[r], row-major) with per-operand element strides st[j][d]
 * (j < nop; the result's own are ys). */
typedef struct Rows {
    int r, nop;
    int64_t dims[2 * IR_MAX_RANK], ys[2 * IR_MAX_RANK], st[3][2 * IR_MAX_RANK];
} Rows;

/* Loops over axes [from, r - 1) around an inner loop over the last axis. */
static void
rows_body(Kb *k, Node *n, const Rows *w, int from, LLVMValueRef *in, LLVMValueRef out,
          LLVMValueRef *base, LLVMValueRef ybase)
{
    CgLoop l[2 * IR_MAX_RANK];
    LLVMValueRef ix[3], iy = ybase;
    for (int j = 0; j < w->nop; j++)
        ix[j] = base[j];
    for (int d = from; d < w->r; d++) {
        LLVMValueRef iv = cg_loop_begin(k, &l[d], cg_i64(k, w->dims[d]));
        iy = cg_add(k, iy, cg_mul(k, iv, cg_i64(k, w->ys[d])));
        for (int j = 0; j < w->nop; j++)
            if (w->st[j][d])
                ix[j] = cg_add(k, ix[j], cg_mul(k, iv, cg_i64(k, w->st[j][d])));
    }
    element(k, n, in, out, ix, iy);
    for (int d = w->r - 1; d >= from; d--)
        cg_loop_end(k, &l[d]);
}

static void
emit_rows(Kb *k, Node *n, const CgNodeArgs *a, const Rows *w)
{
    LLVMValueRef zero[3] = {cg_i64(k, 0), cg_i64(k, 0), cg_i64(k, 0)};
    int64_t total = 1;
    int p = -1; /* the parallel axis: the first of size > 1 before the last */
    for (int d = 0; d < w->r; d++) {
        total *= w->dims[d];
        if (p < 0 && d < w->r - 1 && w->dims[d] > 1)
            p = d;
    }
    for (int d = 0; d < p; d++)
        if (w->dims[d] != 1)
            p = -1;
    if (total < PAR_MIN || p < 0) {
        LLVMValueRef in[3] = {a->in[0], a->in[1], a->in[2]};
        rows_body(k, n, w, 0, in, a->out[0], zero, zero[0]);
        return;
    }
    Par par;
    LLVMValueRef io[4] = {a->in[0], w->nop > 1 ? a->in[1] : a->in[0],
                          w->nop > 2 ? a->in[2] : a->in[0], a->out[0]};
    LLVMValueRef iv = cg_par_begin(k, &par, w->dims[p], io, 4);
    LLVMValueRef base[3];
    for (int j = 0; j < w->nop; j++)
        base[j] = cg_mul(k, iv, cg_i64(k, w->st[j][p]));
    rows_body(k, n, w, p + 1, io, io[3], base, cg_mul(k, iv, cg_i64(k, w->ys[p])));
    cg_par_end(k, &par, a);
}

/* tile: each axis of x becomes two loops of the result, repeats (x stride 0) around the
 * axis itself; axes of one repeat or one element keep one loop. */
static void
tile_rows(Kb *k, Node *n, Rows *w)
{
    const Type *x = vt(k, n->in[0]), *y = vt(k, n->out[0]);
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
    type_strides(x, xs);
    type_strides(y, ys);
    w->r = 0;
    for (int d = 0; d < x->rank; d++) {
        int64_t rep = x->dims[d] ? y->dims[d] / x->dims[d] : 1;
        if (rep != 1 || x->dims[d] == 1) {
            w->dims[w->r] = x->dims[d] == 1 ? y->dims[d] : rep;
            w->ys[w->r] = x->dims[d] == 1 ? ys[d] : x->dims[d] * ys[d];
            w->st[0][w->r++] = 0;
        }
        if (x->dims[d] != 1) {
            w->dims[w->r] = x->dims[d];
            w->ys[w->r] = ys[d];
            w->st[0][w->r++] = xs[d];
        }
    }
}

static bool
emit_range(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *y = vt(k, n->out[0]);
    LLVMBuilderRef b = k->b;
    ElemType e = y->elem;
    LLVMValueRef s = cg_load_i64(k, e, a->in[0], cg_i64(k, 0));
    LLVMValueRef d = cg_load_i64(k, e, a->in[2], cg_i64(k, 0));
    CgLoop l;
    LLVMValueRef i = cg_loop_begin(k, &l, cg_i64(k, (int64_t)type_numel_unchecked(y)));
    if (elem_is_float(e)) {
        /* eval.c: s + (T)i * d, two roundings in T */
        LLVMValueRef p = LLVMBuildFMul(b, LLVMBuildSIToFP(b, i, cg_elem_type(k, e), ""), d, "");
        cg_store_raw(k, e, a->out[0], i, LLVMBuildFAdd(b, s, p, ""));
    } else {
        cg_store_i64(k, e, a->out[0], i, cg_add(k, s, cg_mul(k, i, d)));
    }
    cg_loop_end(k, &l);
    return true;
}

bool
cg_emit_select(Kb *k, Node *n, const CgNodeArgs *a)
{
    const Type *y = vt(k, n->out[0]);
    if (n->op == OP_RANGE) {
        if (y->elem != ET_F32 && y->elem != ET_F64 && y->elem != ET_I16 && y->elem != ET_I32 &&
            y->elem != ET_I64)
            return cg_fail(k, n, "range of %s is not supported", elem_name(y->elem));
        return emit_range(k, n, a);
    }
    if (y->elem == ET_I4 || y->elem == ET_U4 || y->elem == ET_NONE)
        return cg_fail(k, n, "%s of %s is not supported", op_info(n->op)->name,
                       elem_name(y->elem));
    Rows w;
    memset(&w, 0, sizeof w);
    w.nop = (int)n->nin;
    if (n->op == OP_TILE) {
        tile_rows(k, n, &w);
    } else {
        w.r = y->rank;
        memcpy(w.dims, y->dims, (size_t)y->rank * sizeof(int64_t));
        type_strides(y, w.ys);
        for (int j = 0; j < w.nop; j++)
            type_bcast_strides(vt(k, n->in[j]), y, w.st[j]);
    }
    if (type_numel_unchecked(y) == 0)
        return true;
    emit_rows(k, n, a, &w);
    return true;
}
