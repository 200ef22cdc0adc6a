/* float_chain.c: a float element-wise chain (plan.h) in one pass over memory: for each element,
 * the optional dequantize (qn_dequantize: (f32)(q - zp) * s), every op of the chain in order
 * (float_math.c's fm_apply, each result an f32 value exactly as the op's own kernel and the
 * reference compute it), then the optional quantize (qn_quantize_f32: x / s, NaN -> 0, clamped
 * to [qmin - zp, qmax - zp], rounded half to even, + zp); nothing in between is stored. Vectors
 * of fm_lanes() in blocks of CH_BLOCK elements split across the parallel-for hook, then a
 * scalar tail (whose quantize is cg_finish_f32, the same rounding). In a squeeze-excitation
 * step (plan.h CgSe) one binary op's other operand is a run-time factor per (n, c) plane: the
 * chain then runs plane by plane with that factor splatted. The reference interpreter runs the
 * nodes one by one; the results are the same bit for bit. */
#include "codegen/lower/float_math.h"

#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <string.h>

#define CH_BLOCK 4096

bool
cg_chain_member(Kb *k, Node *n, ValueId from)
{
    Graph *g = k->g;
    if (n->dead || n->nout != 1 || ir_value(g, n->out[0])->type.elem != ET_F32)
        return false;
    bool binop = n->op == OP_ADD || n->op == OP_SUB || n->op == OP_MUL || n->op == OP_DIV;
    if (!binop && !cg_float_math_op(k, n))
        return false;
    if (n->op == OP_GELU) {
        const char *ap = ir_attr_string(g, n, "approximate", "none");
        if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
            return false;
    }
    const Type *y = &ir_value(g, n->out[0])->type;
    bool seen = false;
    for (uint32_t i = 0; i < n->nin; i++) {
        const Type *t = &ir_value(g, n->in[i])->type;
        if (t->elem != ET_F32)
            return false;
        if (n->in[i].id == from.id && !seen) {
            seen = true;
            if (!type_shape_equal(t, y))
                return false;
            continue;
        }
        if (!ir_const_of(g, n->in[i]) ||
            !(type_numel_unchecked(t) == 1 || type_shape_equal(t, y)))
            return false;
    }
    return seen;
}

bool
cg_chain_qdq(Graph *g, const Node *n, OpKind op)
{
    ElemType s = n->q ? n->q->storage : ET_NONE;
    return n->op == op && n->q && n->q->axis < 0 && n->nin == 1 && n->nout == 1 && !n->dead &&
           (s == ET_I8 || s == ET_U8 || s == ET_I16 || s == ET_U16) &&
           ir_value(g, n->op == OP_QUANTIZE ? n->in[0] : n->out[0])->type.elem == ET_F32;
}

typedef struct Ch {
    Kb *k;
    Node *ops[CG_CHAIN_MAX + 1];
    uint32_t nops;
    ValueId from[CG_CHAIN_MAX + 1];   /* each op's chained operand */
    LLVMValueRef cst[CG_CHAIN_MAX + 1][2]; /* constant operands: global (full) or scalar */
    bool full[CG_CHAIN_MAX + 1][2];
    const QParams *dq, *q;
    ElemType in_e, out_e;
    int32_t chan_o, chan_j; /* op and operand index of the run-time plane factor, -1: none */
    LLVMValueRef chan_s;    /* the current plane's factor (f32) */
} Ch;

static LLVMValueRef
ld(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef i, unsigned w)
{
    if (w == 1)
        return e == ET_F32 ? cg_load_raw(k, e, base, i) : cg_load_i64(k, e, base, i);
    LLVMTypeRef et = cg_elem_type(k, e);
    LLVMValueRef p = LLVMBuildGEP2(k->b, et, base, &i, 1, "");
    return irb_load(&k->ir, LLVMVectorType(et, w), p, 1);
}

static void
st(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef i, LLVMValueRef v, unsigned w)
{
    if (w == 1) {
        if (e == ET_F32)
            cg_store_raw(k, e, base, i, v);
        else
            cg_store_i64(k, e, base, i, v);
        return;
    }
    LLVMTypeRef et = cg_elem_type(k, e);
    if (e != ET_F32)
        v = LLVMBuildTrunc(k->b, v, LLVMVectorType(et, w), "");
    irb_store(&k->ir, v, LLVMBuildGEP2(k->b, et, base, &i, 1, ""), 1);
}

static bool
is_signed(ElemType e)
{
    return e == ET_I8 || e == ET_I16;
}

/* the chain at element i, w lanes (w == 1: scalars) */
static void
ch_elem(Ch *c, LLVMValueRef in, LLVMValueRef out, LLVMValueRef i, unsigned w)
{
    Kb *k = c->k;
    LLVMBuilderRef b = k->b;
    LLVMValueRef v;
    if (c->dq) {
        LLVMValueRef q = ld(k, c->in_e, in, i, w);
        LLVMTypeRef it = w == 1 ? k->i64 : LLVMVectorType(k->i32, w);
        if (w > 1)
            q = is_signed(c->in_e) ? LLVMBuildSExt(b, q, it, "") : LLVMBuildZExt(b, q, it, "");
        LLVMValueRef zp = LLVMConstInt(w == 1 ? k->i64 : k->i32, (unsigned long long)(int64_t)c->dq->zp[0], 1);
        LLVMValueRef d = LLVMBuildSub(b, q, w == 1 ? zp : cg_vsplat(k, zp, w), "");
        v = LLVMBuildFMul(b, LLVMBuildSIToFP(b, d, w == 1 ? k->f32 : LLVMVectorType(k->f32, w), ""),
                          fm_const(k, w == 1 ? k->f32 : LLVMVectorType(k->f32, w), c->dq->scale[0]), "");
    } else {
        v = ld(k, ET_F32, in, i, w);
    }
    for (uint32_t o = 0; o < c->nops; o++) {
        Node *n = c->ops[o];
        LLVMValueRef args[2];
        for (uint32_t j = 0; j < n->nin; j++) {
            if (n->in[j].id == c->from[o].id) /* (the other operand is a constant) */
                args[j] = v;
            else if ((int32_t)o == c->chan_o && (int32_t)j == c->chan_j)
                args[j] = w == 1 ? c->chan_s : cg_vsplat(k, c->chan_s, w);
            else if (c->full[o][j])
                args[j] = ld(k, ET_F32, c->cst[o][j], i, w);
            else
                args[j] = w == 1 ? c->cst[o][j] : cg_vsplat(k, c->cst[o][j], w);
        }
        v = fm_apply(k, n, args);
    }
    if (!c->q) {
        st(k, ET_F32, out, i, v, w);
        return;
    }
    LLVMValueRef r = LLVMBuildFDiv(b, v, fm_const(k, LLVMTypeOf(v), c->q->scale[0]), "");
    int32_t zy = c->q->zp[0];
    if (w == 1) {
        st(k, c->out_e, out, i, cg_finish_f32(k, r, cg_i64(k, zy), c->q->qmin, c->q->qmax), 1);
        return;
    }
    LLVMTypeRef vf = LLVMTypeOf(r), vi = LLVMVectorType(k->i32, w);
    LLVMValueRef flo = fm_const(k, vf, (float)((int64_t)c->q->qmin - zy));
    LLVMValueRef fhi = fm_const(k, vf, (float)((int64_t)c->q->qmax - zy));
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, r, r, ""), LLVMConstNull(vf), r, "");
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, r, flo, ""), flo, r, "");
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, r, fhi, ""), fhi, r, "");
    r = irb_intr(b, k->c, k->mod, "llvm.roundeven", &vf, 1, &r, 1);
    LLVMValueRef iv = LLVMBuildAdd(b, LLVMBuildFPToSI(b, r, vi, ""), cg_vsplat(k, cg_i32(k, zy), w), "");
    st(k, c->out_e, out, i, iv, w);
}

/* elements [from, from + count): vectors of vl, then one at a time */
static void
ch_range(Ch *c, LLVMValueRef in, LLVMValueRef out, LLVMValueRef from, int64_t count, unsigned vl)
{
    Kb *k = c->k;
    for (int pass = 0; pass < 2; pass++) {
        unsigned w = pass ? 1 : vl;
        int64_t start = pass ? count / vl * vl : 0, cnt = pass ? count - start : count / vl;
        if (cnt <= 0)
            continue;
        CgLoop l;
        LLVMValueRef j = cg_loop_begin(k, &l, cg_i64(k, cnt));
        ch_elem(c, in, out, cg_add(k, from, cg_add(k, cg_i64(k, start), cg_mul(k, j, cg_i64(k, w)))), w);
        if (pass)
            cg_loop_end_novec(k, &l);
        else
            cg_loop_end(k, &l);
    }
}

/* planes [first, first + count) of inner elements each, with their factors from io[2] */
static void
ch_planes(Ch *c, LLVMValueRef *io, LLVMValueRef first, int64_t count, int64_t inner, unsigned vl)
{
    Kb *k = c->k;
    CgLoop l;
    LLVMValueRef pl = cg_add(k, first, cg_loop_begin(k, &l, cg_i64(k, count)));
    c->chan_s = cg_load_raw(k, ET_F32, io[2], pl);
    ch_range(c, io[0], io[1], cg_mul(k, pl, cg_i64(k, inner)), inner, vl);
    cg_loop_end(k, &l);
}

/* A chain with a run-time factor per (n, c) plane of its [N, C, ...] result: blocks of whole
 * planes (about CH_BLOCK elements) across the parallel-for hook. */
static void
ch_by_planes(Ch *c, const CgNodeArgs *a, const Type *y, unsigned vl)
{
    Kb *k = c->k;
    int64_t planes = y->dims[0] * y->dims[1];
    int64_t inner = planes ? (int64_t)type_numel_unchecked(y) / planes : 0;
    int64_t pb = inner >= CH_BLOCK || inner == 0 ? 1 : CH_BLOCK / inner;
    int64_t nb = planes / pb;
    if (nb > 0) {
        Par par;
        LLVMValueRef io[3] = {a->in[0], a->out[0], a->chan};
        LLVMValueRef b = cg_par_begin(k, &par, nb, io, 3);
        if (vl == 16)
            cg_function_set_target(par.fn, k->t, 512);
        ch_planes(c, io, cg_mul(k, b, cg_i64(k, pb)), pb, inner, vl);
        cg_par_end(k, &par, a);
    }
    if (planes - nb * pb > 0) {
        LLVMValueRef io[3] = {a->in[0], a->out[0], a->chan};
        ch_planes(c, io, cg_i64(k, nb * pb), planes - nb * pb, inner, vl);
    }
}

bool
cg_emit_float_chain(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    Ch c;
    memset(&c, 0, sizeof c);
    c.k = k;
    c.chan_o = c.chan_j = -1;
    Node *last = a->chain[a->nchain - 1];
    c.dq = n->op == OP_DEQUANTIZE ? n->q : NULL;
    c.q = last->op == OP_QUANTIZE ? last->q : NULL;
    c.in_e = ir_value(g, n->in[0])->type.elem;
    c.out_e = ir_value(g, last->out[0])->type.elem;
    Node *seq[CG_CHAIN_MAX + 1];
    seq[0] = n;
    memcpy(seq + 1, a->chain, a->nchain * sizeof *seq);
    ValueId prev = n->in[0];
    for (uint32_t i = 0; i <= a->nchain; i++) {
        Node *m = seq[i];
        if (m->op == OP_DEQUANTIZE || m->op == OP_QUANTIZE) { /* the head / the tail */
            prev = m->out[0];
            continue;
        }
        uint32_t o = c.nops++;
        c.ops[o] = m;
        c.from[o] = prev;
        for (uint32_t j = 0; j < m->nin; j++) {
            const Tensor *t = m->in[j].id == prev.id ? NULL : ir_const_of(g, m->in[j]);
            if (!t && m->in[j].id != prev.id && a->chan) { /* the run-time plane factor */
                c.chan_o = (int32_t)o;
                c.chan_j = (int32_t)j;
            }
            if (!t)
                continue;
            c.full[o][j] = type_numel_unchecked(&t->type) != 1;
            c.cst[o][j] = c.full[o][j] ? cg_const_bytes(k, t->data, t->nbytes, "chain")
                                       : cg_f32(k, (float)tensor_get_f(t, 0));
        }
        prev = m->out[0];
    }
    unsigned vl = fm_lanes(k);
    if (a->chan) {
        if (c.chan_o < 0)
            return cg_fail(k, n, "a float chain with a plane factor but no operand for it");
        ch_by_planes(&c, a, &ir_value(g, last->out[0])->type, vl);
        return true;
    }
    int64_t total = (int64_t)type_numel_unchecked(&ir_value(g, last->out[0])->type);
    int64_t nb = total / CH_BLOCK;
    if (nb > 0) {
        Par par;
        LLVMValueRef io[2] = {a->in[0], a->out[0]};
        LLVMValueRef b = cg_par_begin(k, &par, nb, io, 2);
        if (vl == 16)
            cg_function_set_target(par.fn, k->t, 512);
        ch_range(&c, io[0], io[1], cg_mul(k, b, cg_i64(k, CH_BLOCK)), CH_BLOCK, vl);
        cg_par_end(k, &par, a);
    }
    if (total - nb * CH_BLOCK > 0)
        ch_range(&c, a->in[0], a->out[0], cg_i64(k, nb * CH_BLOCK), total - nb * CH_BLOCK, vl);
    return true;
}
