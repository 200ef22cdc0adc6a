/* fold.c: constant folding of shape and layout computations (ir_try_fold).
 * A node whose operands are all constants (or, for `shape`, whose result depends only on a
 * static shape) is replaced by const nodes that define the SAME result values, so names and
 * uses are untouched and the folded node is only marked dead. Folded ops: shape,
 * constant_of_shape, identity, reshape, flatten, squeeze, unsqueeze, transpose, concat, slice,
 * gather, add/sub/mul/div on integer tensors (the shape arithmetic PyTorch exports as
 * Shape->Gather->Unsqueeze->Concat->Reshape chains), and through eval.c (the definition the
 * reference interpreter runs too) cast, the comparisons, not/and/or/xor, where, expand, tile,
 * range, reduce_max, reduce_min, argmax and integer reduce_sum (the Range/Expand/Equal/Where
 * shape subgraphs of transformer exports; a transpose or reshape of a per-channel quantized
 * constant when its result carries the parameters on the axis the channel moves to), clip of
 * integers (QCDQ weights), and add/sub/mul/div on f32 and f64 constants: one IEEE operation per
 * element, rounded once in the element type, the result the kernels and the reference compute
 * at run time (the attention masks of Swin exports subtract constant float tensors). Other
 * float arithmetic is not folded (float reduce_sum keeps its place); range's operands are
 * always constants and its arithmetic is eval.c's; quantize/dequantize are never folded (the
 * passes need to see them).
 * Which rule folds an op is ops.def's FOLD column (fold_tab below); the rule's flags say what
 * its operands may be. Results larger than FOLD_MAX_BYTES are left alone. */
#include "ir.h"
#include "eval.h"

#include <math.h>
#include <string.h>

#define FOLD_MAX_BYTES ((size_t)64 << 20)

static const Tensor *
operand_const(Graph *g, Node *n, uint32_t k)
{
    return k < n->nin && n->in[k].id ? ir_const_of(g, n->in[k]) : NULL;
}


/* index into operand `a` (broadcast to `o`) of the output multi-index idx */
static size_t
bcast_index(const Type *a, const Type *o, const int64_t *idx)
{
    int64_t st[IR_MAX_RANK];
    type_bcast_strides(a, o, st);
    size_t off = 0;
    for (int i = 0; i < o->rank; i++)
        off += (size_t)(idx[i] * st[i]);
    return off;
}


/* i64 shape arithmetic on a symbolic dimension (dims.c): exact, or not folded */
static bool
sym_arith(Graph *g, OpKind op, int64_t x, int64_t y, int64_t *v)
{
    switch (op) {
    case OP_ADD: return ir_dim_add(g, x, y, v);
    case OP_SUB: return ir_dim_sub(g, x, y, v);
    case OP_MUL: return ir_dim_mul(g, x, y, v);
    case OP_DIV: return !ir_dim_is_tag(y) && y > 0 && ir_dim_floordiv(g, x, y, v);
    default: return false;
    }
}

static bool
fold_arith(Graph *g, Node *n, const Tensor *a, const Tensor *b, Tensor *r)
{
    size_t cnt = type_numel_unchecked(&r->type);
    int64_t idx[IR_MAX_RANK] = {0};
    bool sym = g->dimx.len && (ir_tensor_has_sym(a) || ir_tensor_has_sym(b));
    for (size_t i = 0; i < cnt; i++) {
        int64_t x = tensor_get_i(a, bcast_index(&a->type, &r->type, idx));
        int64_t y = tensor_get_i(b, bcast_index(&b->type, &r->type, idx));
        uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
        int64_t v;
        if (sym && (ir_dim_is_tag(x) || ir_dim_is_tag(y))) {
            if (!sym_arith(g, n->op, x, y, &v))
                return false;
            tensor_set_i(r, i, v);
            type_next_index(&r->type, idx);
            continue;
        }
        switch (n->op) {
        case OP_ADD: v = (int64_t)(ux + uy); break;
        case OP_SUB: v = (int64_t)(ux - uy); break;
        case OP_MUL: v = (int64_t)(ux * uy); break;
        case OP_DIV:
            if (y == 0 || (x == INT64_MIN && y == -1))
                return false;
            v = x / y;
            break;
        default: return false;
        }
        tensor_set_i(r, i, v);
        type_next_index(&r->type, idx);
    }
    return true;
}

/* add/sub/mul/div of f32 (in float) or f64 tensors with broadcasting */
static void
fold_farith(Node *n, const Tensor *a, const Tensor *b, Tensor *r)
{
    size_t cnt = type_numel_unchecked(&r->type);
    int64_t idx[IR_MAX_RANK] = {0};
    bool f32 = r->type.elem == ET_F32;
    for (size_t i = 0; i < cnt; i++) {
        double x = tensor_get_f(a, bcast_index(&a->type, &r->type, idx));
        double y = tensor_get_f(b, bcast_index(&b->type, &r->type, idx)), v;
        float fx = (float)x, fy = (float)y;
        switch (n->op) {
        case OP_ADD: v = f32 ? (double)(fx + fy) : x + y; break;
        case OP_SUB: v = f32 ? (double)(fx - fy) : x - y; break;
        case OP_MUL: v = f32 ? (double)(fx * fy) : x * y; break;
        default: v = f32 ? (double)(fx / fy) : x / y; break;
        }
        tensor_set_f(r, i, v);
        type_next_index(&r->type, idx);
    }
}

/* clip of integers (QCDQ weights: const(int8) -> Clip(-8, 7) -> DequantizeLinear, Brevitas'
 * export of sub-8-bit weights): min(max(x, lo), hi) per element, the bounds from the attributes
 * or the constant operands 1 and 2, as the reference interpreter computes it */
static bool
fold_clip(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    if (x->type.elem != r->type.elem)
        return false;
    double lo = -INFINITY, hi = INFINITY;
    const Tensor *tl = operand_const(g, n, 1), *th = operand_const(g, n, 2);
    const Attr *al = ir_attr(g, n, "min"), *ah = ir_attr(g, n, "max");
    if (tl)
        lo = tensor_get_f(tl, 0);
    else if (al)
        lo = al->kind == ATTR_INT ? (double)al->i : (double)al->f;
    if (th)
        hi = tensor_get_f(th, 0);
    else if (ah)
        hi = ah->kind == ATTR_INT ? (double)ah->i : (double)ah->f;
    size_t cnt = type_numel_unchecked(&r->type);
    for (size_t i = 0; i < cnt; i++) {
        int64_t v = tensor_get_i(x, i);
        if ((double)v < lo)
            v = (int64_t)lo;
        if ((double)v > hi)
            v = (int64_t)hi;
        tensor_set_i(r, i, v);
    }
    return true;
}

static bool
fold_transpose(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    int rank = x->type.rank;
    int64_t perm[IR_MAX_RANK];
    int k = ir_attr_ints(g, n, "perm", perm, IR_MAX_RANK);
    if (k < 0) {
        k = rank;
        for (int i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
    }
    if (k != rank)
        return false;
    int64_t st[IR_MAX_RANK];
    size_t es = elem_size(x->type.elem);
    type_strides(&x->type, st);
    size_t cnt = type_numel_unchecked(&r->type);
    int64_t idx[IR_MAX_RANK] = {0};
    for (size_t i = 0; i < cnt; i++) {
        size_t off = 0;
        for (int d = 0; d < rank; d++)
            off += (size_t)(idx[d] * st[perm[d]]);
        memcpy((char *)r->data + i * es, (const char *)x->data + off * es, es);
        type_next_index(&r->type, idx);
    }
    return true;
}

static bool
fold_concat(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    (void)x; /* every operand is read below */
    int rank = r->type.rank;
    int64_t axis = ir_attr_int(g, n, "axis", 0);
    if (axis < 0)
        axis += rank;
    size_t es = elem_size(r->type.elem), outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= (size_t)r->type.dims[i];
    for (int i = (int)axis + 1; i < rank; i++)
        inner *= (size_t)r->type.dims[i];
    size_t row = (size_t)r->type.dims[axis] * inner * es, off = 0;
    for (uint32_t k = 0; k < n->nin; k++) {
        const Tensor *t = operand_const(g, n, k);
        size_t part = (size_t)t->type.dims[axis] * inner * es;
        for (size_t o = 0; o < outer; o++)
            memcpy((char *)r->data + o * row + off, (const char *)t->data + o * part, part);
        off += part;
    }
    return true;
}

static bool
fold_slice(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    int rank = x->type.rank;
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK];
    if (!ir_slice_starts(g, n, &x->type, start, step))
        return false;
    int64_t xs[IR_MAX_RANK];
    size_t es = elem_size(x->type.elem);
    type_strides(&x->type, xs);
    size_t cnt = type_numel_unchecked(&r->type);
    int64_t idx[IR_MAX_RANK] = {0};
    for (size_t i = 0; i < cnt; i++) {
        size_t off = 0;
        for (int d = 0; d < rank; d++)
            off += (size_t)((start[d] + idx[d] * step[d]) * xs[d]);
        memcpy((char *)r->data + i * es, (const char *)x->data + off * es, es);
        type_next_index(&r->type, idx);
    }
    return true;
}

static bool
fold_gather(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    const Tensor *ind = operand_const(g, n, 1);
    int64_t axis = ir_attr_int(g, n, "axis", 0);
    if (axis < 0)
        axis += x->type.rank;
    size_t es = elem_size(x->type.elem), outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= (size_t)x->type.dims[i];
    for (int i = (int)axis + 1; i < x->type.rank; i++)
        inner *= (size_t)x->type.dims[i];
    int64_t d = x->type.dims[axis];
    size_t ni = type_numel_unchecked(&ind->type), blk = inner * es;
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < ni; j++) {
            int64_t k = tensor_get_i(ind, j);
            if (k < 0)
                k += d;
            if (k < 0 || k >= d)
                return false;
            memcpy((char *)r->data + (o * ni + j) * blk,
                   (const char *)x->data + (o * (size_t)d + (size_t)k) * blk, blk);
        }
    return true;
}

/* A transpose or reshape (flatten, squeeze, unsqueeze) of a per-axis quantized operand whose
 * result type rt has the same parameters on the axis the op moves the operand's axis to
 * (ir_moved_axis). */
static bool
moved_q(Graph *g, Node *n, const Type *rt)
{
    const Type *xt = &ir_value(g, n->in[0])->type;
    const QParams *q = xt->q, *r = rt->q;
    if (!q || q->axis < 0 || !r || r->axis < 0 || q->n != r->n || q->storage != r->storage ||
        memcmp(q->scale, r->scale, q->n * sizeof(float)) ||
        memcmp(q->zp, r->zp, q->n * sizeof(int32_t)))
        return false;
    return ir_moved_axis(g, n, xt, rt) == r->axis;
}

/* ---- the fold rules: ops.def's FOLD column names one per op ---- */

typedef bool (*FoldFn)(Graph *g, Node *n, const Tensor *x, Tensor *r);

enum {
    FR_LAYOUT = 1,   /* moves or selects values: quantized values keep their meaning */
    FR_INT = 2,      /* folded only on integer (non-bool) operands */
    FR_SHAPE = 4,    /* reads only its operand's static shape, not its values */
    FR_ARITH = 8,    /* add/sub/mul/div: integer, or f32/f64 with all types equal */
    FR_OPTIONAL = 16 /* operands after the first may be absent */
};

typedef struct {
    FoldFn fn; /* NULL: the op is never folded */
    unsigned flags;
} FoldRule;

static bool
fold_copy(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    (void)g, (void)n;
    if (x->nbytes != r->nbytes)
        return false;
    memcpy(r->data, x->data, r->nbytes);
    return true;
}

/* eval.c's ops: the definition the reference interpreter runs too */
static bool
fold_eval(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    (void)x;
    const Tensor *ins[3] = {NULL, NULL, NULL};
    for (uint32_t k = 0; k < n->nin && k < 3; k++)
        ins[k] = operand_const(g, n, k);
    char err[160];
    return ir_eval(g, n, ins, &r, err, sizeof err);
}

static bool
fold_shape(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    (void)x;
    const Type *xt = &ir_value(g, n->in[0])->type;
    size_t cnt = type_numel_unchecked(&r->type);
    int64_t s = ir_attr_int(g, n, "start", 0);
    if (s < 0) s += xt->rank;
    s = s < 0 ? 0 : s > xt->rank ? xt->rank : s;
    for (size_t i = 0; i < cnt; i++)
        tensor_set_i(r, i, xt->dims[s + (int64_t)i]);
    return true;
}

static bool
fold_fill(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    (void)x;
    const Attr *v = ir_attr(g, n, "value");
    if (v && (v->kind != ATTR_TENSOR || v->t->type.elem != r->type.elem || !v->t->nbytes))
        return false;
    size_t es = elem_size(r->type.elem), cnt = type_numel_unchecked(&r->type);
    for (size_t i = 0; i < cnt && v; i++)
        memcpy((char *)r->data + i * es, v->t->data, es);
    return true;
}

static bool
fold_arith_rule(Graph *g, Node *n, const Tensor *x, Tensor *r)
{
    if (r->type.elem == ET_F32 || r->type.elem == ET_F64) {
        fold_farith(n, x, operand_const(g, n, 1), r);
        return true;
    }
    return fold_arith(g, n, x, operand_const(g, n, 1), r);
}

static const FoldRule rule_none = {NULL, 0};
static const FoldRule rule_copy = {fold_copy, FR_LAYOUT};
static const FoldRule rule_transpose = {fold_transpose, FR_LAYOUT};
static const FoldRule rule_concat = {fold_concat, FR_LAYOUT};
static const FoldRule rule_slice = {fold_slice, FR_LAYOUT};
static const FoldRule rule_gather = {fold_gather, FR_LAYOUT};
static const FoldRule rule_move = {fold_eval, FR_LAYOUT}; /* expand, tile, where, max, min */
static const FoldRule rule_eval = {fold_eval, 0};
static const FoldRule rule_isum = {fold_eval, FR_INT}; /* float sums keep their order */
static const FoldRule rule_shape = {fold_shape, FR_SHAPE};
static const FoldRule rule_fill = {fold_fill, 0};
static const FoldRule rule_clip = {fold_clip, FR_INT | FR_OPTIONAL};
static const FoldRule rule_arith = {fold_arith_rule, FR_ARITH};

static const FoldRule *const fold_tab[OP_COUNT] = {
    [OP_INVALID] = &rule_none,
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, REF, LOWER, SCRATCH, STATIC, MLIR, \
           VERIFY, LUT, FOLD, ...)                                                                 \
    [OP_##E] = &rule_##FOLD,
#include "ops.def"
#undef OP
};

/* An equal of i64 shape values holding symbols, decidable element by element: equal tags
 * (true), or a symbol (a dimension, >= 0 once bound) against a negative constant (false: the
 * -1 of a reshape target that exports compare with). eval.c's raw comparison gives exactly
 * these answers (an ordering would not: a tag is a large negative number). */
static bool
sym_compare_decidable(Graph *g, Node *n)
{
    if (n->nin != 2 || n->op != OP_EQUAL)
        return false;
    const Tensor *a = operand_const(g, n, 0), *b = operand_const(g, n, 1);
    if (!a || !b || a->type.elem != ET_I64 || b->type.elem != ET_I64)
        return false;
    const Type *rt = &ir_value(g, n->out[0])->type;
    size_t cnt = type_numel_unchecked(rt);
    int64_t idx[IR_MAX_RANK] = {0};
    for (size_t i = 0; i < cnt; i++, type_next_index(rt, idx)) {
        int64_t x = tensor_get_i(a, bcast_index(&a->type, rt, idx));
        int64_t y = tensor_get_i(b, bcast_index(&b->type, rt, idx));
        bool tx = ir_dim_is_tag(x), ty = ir_dim_is_tag(y);
        if ((tx && ty && x != y) || (tx && !ty && y >= 0) || (ty && !tx && x >= 0))
            return false;
    }
    return true;
}

/* whether the operands and the result let rule fr fold n: constants (or a static shape),
 * quantization parameters only through layout moves, arithmetic on one element type */
static bool
fold_operands_ok(Graph *g, Node *n, const FoldRule *fr, const Type *rt)
{
    if (fr->flags & FR_INT) {
        ElemType x0 = ir_value(g, n->in[0])->type.elem;
        if (!elem_is_int(x0) || x0 == ET_BOOL)
            return false;
    }
    bool shape = fr->flags & FR_SHAPE, layout = fr->flags & FR_LAYOUT;
    for (uint32_t k = 0; k < n->nin && !shape; k++)
        if (!operand_const(g, n, k) && !((fr->flags & FR_OPTIONAL) && k > 0 && !n->in[k].id))
            return false;
    /* quantized values: only layout moves keep their meaning, and per-axis parameters only
     * survive an identity, or a transpose whose result carries them on the permuted axis */
    bool qtrans = moved_q(g, n, rt);
    for (uint32_t k = 0; k < n->nin && !shape; k++) {
        const QParams *q = ir_value(g, n->in[k])->type.q;
        if (q && (!layout || (q->axis >= 0 && n->op != OP_IDENTITY && !qtrans)))
            return false;
    }
    if (rt->q && (!layout || rt->q->axis >= 0) && n->op != OP_IDENTITY && !qtrans)
        return false;
    /* i64 shapes holding symbolic dimensions: only moves and the shape arithmetic see them
     * (eval.c would compute with the tags' raw values) */
    for (uint32_t k = 0; k < n->nin && g->dimx.len && !shape; k++) {
        const Tensor *t = operand_const(g, n, k);
        if (!t || !ir_tensor_has_sym(t) || (n->op == OP_CAST && rt->elem == ET_I64))
            continue; /* a cast to i64 keeps the values */
        if (!(fr->flags & (FR_LAYOUT | FR_ARITH)) && !sym_compare_decidable(g, n))
            return false;
        if (fr->fn == fold_eval && n->op != OP_EXPAND && n->op != OP_TILE && n->op != OP_WHERE &&
            !sym_compare_decidable(g, n))
            return false;
    }
    if (fr->flags & FR_ARITH) {
        bool farith = rt->elem == ET_F32 || rt->elem == ET_F64;
        if (!farith && (!elem_is_int(rt->elem) || rt->elem == ET_BOOL))
            return false;
        for (uint32_t k = 0; k < n->nin; k++)
            if (ir_value(g, n->in[k])->type.elem != rt->elem)
                return false;
    }
    return true;
}

bool
ir_try_fold(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    const FoldRule *fr = fold_tab[n->op];
    if (n->dead || !fr->fn)
        return false;
    if (n->nout != 1 || !n->out[0].id)
        return false;
    const Type *rt = &ir_value(g, n->out[0])->type;
    if (!fold_operands_ok(g, n, fr, rt))
        return false;
    size_t cnt, bytes;
    if (!type_numel(rt, &cnt) || !size_mul(cnt, elem_size(rt->elem), &bytes) ||
        bytes > FOLD_MAX_BYTES)
        return false;
    const Tensor *x = operand_const(g, n, 0);
    if (x && x->type.elem != ir_value(g, n->in[0])->type.elem)
        return false;
    Tensor *r = ir_tensor_new(g->m, rt);
    if (!r || !fr->fn(g, n, x, r))
        return false;
    Loc loc = ir_node(g, nid)->loc;
    ValueId out = ir_node(g, nid)->out[0];
    NodeId c = ir_add_node(g, OP_CONST, 0, NULL, 1, loc);
    ir_set_attr_tensor(g, c, "value", r);
    ir_set_result(g, c, 0, out);
    ir_node(g, nid)->dead = true;
    return true;
}

int
ir_moved_axis(Graph *g, const Node *n, const Type *x, const Type *y)
{
    const QParams *q = x->q;
    if (!q || q->axis < 0 || q->axis >= x->rank)
        return -1;
    int a = q->axis;
    if (n->op == OP_TRANSPOSE) {
        int64_t perm[IR_MAX_RANK];
        int k = ir_attr_ints(g, n, "perm", perm, IR_MAX_RANK);
        for (int i = 0; i < y->rank; i++)
            if ((k == y->rank ? perm[i] : y->rank - 1 - i) == a)
                return i;
        return -1;
    }
    if (n->op != OP_RESHAPE && n->op != OP_FLATTEN && n->op != OP_SQUEEZE &&
        n->op != OP_UNSQUEEZE && n->op != OP_IDENTITY)
        return -1;
    /* the channel stays one whole dimension: the same size, the same number of elements
     * before it (so its elements keep their flat positions and channel); a channel of size 1
     * is ambiguous among unit dimensions and refused */
    int64_t before = 1;
    for (int d = 0; d < a; d++)
        before *= x->dims[d];
    int64_t acc = 1;
    for (int b = 0; b < y->rank; b++) {
        if (acc == before && y->dims[b] == x->dims[a] && x->dims[a] != 1)
            return b;
        acc *= y->dims[b];
    }
    return -1;
}
