/* qelem_vec.c: requantize / qadd / qsub / qmul over operands of the result's shape (or
 * single elements), both --requant modes, as explicit vector code.
 *
 * The scalar kernel of qelem.c walks numpy broadcasting with i64 index arithmetic
 * and one f32 division per element (LLVM does not vectorise it). When every operand is either
 * the result's shape or one element, the op is the same per element in any layout (NHWC
 * values included), so it runs as one flat loop of vl-lane vectors: 8-bit loads, each operand's
 * value and the result from the requantize mode's element-wise entries (CgRqMode, irb/rq.c):
 * float, the f32 sequence of lib/numerics/elementwise.h (sa * (float)(a - za), op, / sy, no
 * FMA) and its exact rounding in 32-bit lanes, the constants from a table loaded where the loop
 * starts; fixed, the operands minus their zero points in i64 lanes and cg_elem_fixed_value (the
 * scalar kernel's integers lane by lane). Blocks of EV_BLOCK
 * elements are split across the parallel-for hook; the rest (and lengths that are not a
 * multiple of vl) end with exact-size vectors.
 * An operand may also repeat along the leading axes (a bias [N] added to [.., N], as ORT's
 * quantize_static writes a MatMul's bias Add): its shape, leading 1s dropped, is the result's
 * trailing axes, of P elements. The result then runs row by row (rows of P elements, blocks of
 * rows across the parallel-for hook), the repeating operand read at the row's offset.
 * Or an operand may hold one element per row (a channel scale [C, 1, 1] multiplied into
 * [N, C, H, W], the squeeze-excitation Mul): its non-1 axes, after its leading 1s, are axes
 * [a, b) of the result and it is 1 on every axis from b, whose extents make rows of P > 1
 * elements; row r reads its element r mod (its element count), splatted over the row. */
#include "codegen/lower/qconv.h"

#include "codegen/target/isa.h"
#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <stdlib.h>
#include <string.h>

enum { EV_BLOCK = 8192 };

typedef struct Ev {
    Kb *k;
    CgRqElem q;       /* the node, its clamp and the requantize mode's constants */
    bool scalar[2];   /* operand is one element (splatted) */
    bool row[2];      /* operand repeats every `period` elements (trailing-axes broadcast) */
    int64_t col[2];   /* >0: operand has one element per row of `period` (col[j] elements, repeating) */
    int64_t period;
    LLVMValueRef pre[2]; /* a column operand's value for the current row (scalar), or NULL */
} Ev;

static bool
is8(ElemType e)
{
    return e == ET_I8 || e == ET_U8;
}

/* P if t, leading 1s dropped, is y's trailing axes (P elements, more than one, fewer than y's)
 * so that t repeats every P elements of y; else 0 */
static int64_t
row_period(const Type *t, const Type *y)
{
    int lead = 0;
    while (lead < t->rank && t->dims[lead] == 1)
        lead++;
    int r = t->rank - lead;
    if (r == 0 || r > y->rank)
        return 0;
    int64_t p = 1;
    for (int i = 0; i < r; i++) {
        if (t->dims[lead + i] != y->dims[y->rank - r + i])
            return 0;
        p *= t->dims[lead + i];
    }
    return p > 1 && p < (int64_t)type_numel_unchecked(y) ? p : 0;
}

/* The rows of one element each: t, aligned with y's trailing axes (numpy broadcasting), is 1 on
 * axes < a, equals y on axes [a, b) and is 1 on axes >= b, with y's axes from b holding
 * P > 1 elements and t more than one element. Returns P and sets *count to t's element count;
 * else 0. */
static int64_t
col_period(const Type *t, const Type *y, int64_t *count)
{
    if (t->rank > y->rank)
        return 0;
    int off = y->rank - t->rank, b = y->rank;
    while (b > off && t->dims[b - 1 - off] == 1)
        b--;
    int a = b;
    while (a > off && t->dims[a - 1 - off] != 1)
        a--;
    int64_t c = 1, p = 1;
    for (int i = off; i < y->rank; i++) {
        int64_t d = t->dims[i - off];
        if (i >= a && i < b) {
            if (d != y->dims[i])
                return 0;
            c *= d;
        } else if (d != 1) {
            return 0;
        }
    }
    for (int i = b; i < y->rank; i++)
        p *= y->dims[i];
    if (c <= 1 || p <= 1)
        return 0;
    *count = c;
    return p;
}

bool
cg_elemwise_vec_ok(Kb *k, Node *n)
{
    Graph *g = k->g;
    if (n->nout != 1)
        return false;
    switch (n->op) {
    case OP_REQUANTIZE: case OP_QADD: case OP_QSUB: case OP_QMUL: break;
    default: return false;
    }
    const Type *y = &ir_value(g, n->out[0])->type;
    if (!is8(y->elem) || !y->q || y->q->axis >= 0)
        return false;
    uint32_t nop = n->op == OP_REQUANTIZE ? 1 : 2;
    for (uint32_t i = 0; i < nop; i++) {
        const Type *t = &ir_value(g, n->in[i])->type;
        if (!is8(t->elem) || !t->q || t->q->axis >= 0)
            return false;
        int64_t cnt;
        if (type_numel_unchecked(t) != 1 &&
            (t->rank != y->rank || memcmp(t->dims, y->dims, (size_t)y->rank * sizeof(int64_t)) != 0) &&
            !row_period(t, y) && !col_period(t, y, &cnt))
            return false;
    }
    int64_t p[2] = {0, 0}, c[2] = {0, 0};
    for (uint32_t i = 0; n->op != OP_REQUANTIZE && i < nop; i++) {
        const Type *t = &ir_value(g, n->in[i])->type;
        p[i] = row_period(t, y);
        c[i] = p[i] ? 0 : col_period(t, y, &(int64_t){0});
    }
    if (!p[0] && !p[1] && !c[0] && !c[1])
        return true;
    /* row and column repeats use different row lengths: one kind per op (the same length twice) */
    if ((p[0] || p[1]) && (c[0] || c[1]))
        return false;
    if ((p[0] && p[1] && p[0] != p[1]) || (c[0] && c[1] && c[0] != c[1]))
        return false;
    /* rows are the logical layout's: not over values stored NHWC (the layout plan keeps a
     * broadcast qadd's values NCHW; checked, not assumed) */
    for (uint32_t i = 0; i < nop; i++)
        if (cg_value_nhwc(k, n->in[i]))
            return false;
    return !cg_value_nhwc(k, n->out[0]);
}

/* Store `lanes` integer results (any lane width, within the 8-bit result range) at out + i. */
static void
ev_store(Kb *k, LLVMValueRef o, LLVMValueRef out, LLVMValueRef i, unsigned lanes)
{
    irb_store(&k->ir, LLVMBuildTrunc(k->b, o, LLVMVectorType(k->i8, lanes), ""), cg_gep(k, out, i),
              1);
}

/* Result of `lanes` elements starting at element i (i64) of operands p[] into out. */
static void
ev_vec(Ev *e, LLVMValueRef *p, LLVMValueRef out, LLVMValueRef i, unsigned lanes)
{
    Kb *k = e->k;
    LLVMValueRef v[2];
    for (uint32_t j = 0; j < e->q.nop; j++) {
        LLVMValueRef x;
        if (e->pre[j]) { /* computed once per row (ev_row_range) */
            v[j] = cg_vsplat(k, e->pre[j], lanes);
            continue;
        }
        if (e->scalar[j]) {
            x = cg_vsplat(k, LLVMBuildLoad2(k->b, k->i8, p[j], ""), lanes);
        } else {
            x = irb_load(&k->ir, LLVMVectorType(k->i8, lanes), cg_gep(k, p[j], i), 1);
        }
        v[j] = k->rq->elem_vec_operand(k, &e->q, j, x, lanes);
    }
    ev_store(k, k->rq->elem_vec(k, &e->q, v, lanes), out, i, lanes);
}

/* Elements [from, from + count) with count known: full vectors in a loop, then pieces. */
static void
ev_range(Ev *e, LLVMValueRef *p, LLVMValueRef out, LLVMValueRef from, int64_t count, unsigned vl)
{
    Kb *k = e->k;
    int64_t nv = count / vl;
    if (nv > 0) {
        CgLoop l;
        LLVMValueRef j = cg_loop_begin(k, &l, cg_i64(k, nv));
        ev_vec(e, p, out, cg_add(k, from, cg_mul(k, j, cg_i64(k, vl))), vl);
        cg_loop_end_hint(k, &l, IRB_NO_VECTORIZE | IRB_NO_UNROLL); /* vl lanes per iteration */
    }
    int64_t c = nv * vl;
    for (unsigned w = vl / 2; w >= 1; w /= 2)
        if (count - c >= (int64_t)w) {
            ev_vec(e, p, out, cg_add(k, from, cg_i64(k, c)), w);
            c += w;
        }
}

/* Rows [first, first + count) of e->period elements, count rows starting at row index r0 (i64). */
static void
ev_row_range(Ev *e, LLVMValueRef *p, LLVMValueRef out, LLVMValueRef r0, int64_t count, unsigned vl)
{
    Kb *k = e->k;
    CgLoop l;
    LLVMValueRef r = cg_add(k, r0, cg_loop_begin(k, &l, cg_i64(k, count)));
    LLVMValueRef from = cg_mul(k, r, cg_i64(k, e->period));
    LLVMValueRef q[2];
    for (uint32_t j = 0; j < e->q.nop; j++) { /* the repeating operand, read at the row's offset */
        q[j] = e->row[j]   ? cg_gep(k, p[j], LLVMBuildNeg(k->b, from, ""))
               : e->col[j] ? cg_gep(k, p[j], LLVMBuildURem(k->b, r, cg_i64(k, e->col[j]), ""))
                           : p[j];
        e->pre[j] = e->col[j] ? k->rq->elem_vec_operand(k, &e->q, j, LLVMBuildLoad2(k->b, k->i8, q[j], ""), 0)
                              : NULL;
    }
    ev_range(e, q, out, from, e->period, vl);
    e->pre[0] = e->pre[1] = NULL;
    cg_loop_end(k, &l);
}

/* The whole result as rows of e->period elements: blocks of rows (about EV_BLOCK elements)
 * across the parallel-for hook, the rest of the rows in the node function. */
static void
ev_rows(Ev *e, const CgNodeArgs *a, LLVMValueRef *p, int64_t rows, unsigned vl)
{
    Kb *k = e->k;
    int64_t rpb = EV_BLOCK / e->period > 0 ? EV_BLOCK / e->period : 1, nb = rows / rpb;
    if (nb > 1) {
        Par par;
        LLVMValueRef io[3] = {p[0], p[1], p[2]};
        LLVMValueRef b = cg_par_begin(k, &par, nb, io, 3);
        if (vl == 16)
            cg_function_set_target(par.fn, k->t, 512);
        k->rq->elem_vec_load(k, &e->q);
        ev_row_range(e, io, io[2], cg_mul(k, b, cg_i64(k, rpb)), rpb, vl);
        cg_par_end(k, &par, a);
    } else {
        nb = 0;
    }
    if (rows - nb * rpb > 0) {
        k->rq->elem_vec_load(k, &e->q);
        ev_row_range(e, p, p[2], cg_i64(k, nb * rpb), rows - nb * rpb, vl);
    }
}

bool
cg_emit_elemwise_vec(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    Ev e;
    memset(&e, 0, sizeof e);
    e.k = k;
    e.q.n = n;
    e.q.nop = n->op == OP_REQUANTIZE ? 1 : 2;
    e.q.y = &ir_value(g, n->out[0])->type;
    const Type *y = e.q.y;
    for (uint32_t j = 0; j < e.q.nop; j++) {
        const Type *t = e.q.t[j] = &ir_value(g, n->in[j])->type;
        e.scalar[j] = type_numel_unchecked(t) == 1 && type_numel_unchecked(y) != 1;
        int64_t pr = e.scalar[j] ? 0 : row_period(t, y), cnt = 0;
        if (pr) {
            e.row[j] = true;
            e.period = pr;
        } else if (!e.scalar[j] && (pr = col_period(t, y, &cnt)) != 0) {
            e.col[j] = cnt; /* one element per row: splatted, as a one-element operand is */
            e.scalar[j] = true;
            e.period = pr;
        }
    }
    ir_clamp_range(k->g, n, y->q, &e.q.lo, &e.q.hi);
    if (!k->rq->elem_init(k, &e.q, true))
        return false;
    unsigned vl = cg_isa_i32_lanes(k->t, k->isa);
    int64_t total = (int64_t)type_numel_unchecked(y), nb = total / EV_BLOCK;
    LLVMValueRef p[3] = {a->in[0], e.q.nop > 1 ? a->in[1] : a->in[0], a->out[0]};
    if (e.period) {
        ev_rows(&e, a, p, total / e.period, vl);
        return true;
    }
    if (nb > 0) {
        Par par;
        LLVMValueRef io[3] = {p[0], p[1], p[2]};
        LLVMValueRef b = cg_par_begin(k, &par, nb, io, 3);
        if (vl == 16)
            cg_function_set_target(par.fn, k->t, 512);
        k->rq->elem_vec_load(k, &e.q);
        ev_range(&e, io, io[2], cg_mul(k, b, cg_i64(k, EV_BLOCK)), EV_BLOCK, vl);
        cg_par_end(k, &par, a);
    }
    if (total - nb * EV_BLOCK > 0) {
        k->rq->elem_vec_load(k, &e.q);
        ev_range(&e, p, p[2], cg_i64(k, nb * EV_BLOCK), total - nb * EV_BLOCK, vl);
    }
    return true;
}
