/* minteger_fold.c: ONNX Runtime's dynamic quantization of a MatMul (quantize_dynamic) becomes
 * one `matmul_integer` with its f32 epilogue (docs/passes.md, docs/ir.md).
 * Why: quantize_dynamic writes
 *     DynamicQuantizeLinear(x) -> (xq, sa, za)
 *     MatMulInteger(xq, W, za, zw) -> Cast(to float) -> Mul(., Mul(sa, sw)) [-> Add(., bias)]
 * and imported as it is, the int32 result of the integer matmul goes to memory, is read back,
 * converted, scaled and biased by three more kernels. The epilogue belongs in the GEMM: the
 * kernel converts and scales each accumulator while it is in a register. Every step is exact
 * or one f32 operation, and the op performs the same ones in the same order (qn_scale_acc,
 * then the bias addition), so the result is bit-identical to the literal graph.
 * Rewrites
 *     %acc = matmul_integer %a, %b [, %za [, %zb]] : i32     (only used by the cast)
 *     %f   = cast %acc, to="f32"                             (only used by the mul)
 *     %s   = mul %sa, %sb      (either order; sa one f32 value, sb one or [N])
 *     %y   = mul %f, %s        (either order; y has f's shape)
 *   [ %z   = add %y, %c        (either order; c a constant f32 [N] or [1, ..., N]; y used only
 *                               here and not a graph output; z has y's shape) ]
 * into %y (or %z) = matmul_integer %a, %b, %za, %zb, %sa, %sb [, %c as f32 [N]]. When sa and sb
 * are both one value, either may be called sa (an f32 product does not depend on the order).
 * Anything else stays as it is (e.g. a Mul by a scale that is not such a product, whose
 * rounding the op could not reproduce). Every matmul_integer whose int32 accumulator could
 * leave int32 gets a warning (both engines wrap, as ONNX Runtime does).
 * needs: nothing.  keeps: the result value (and name) of the mul or add.
 * leaves stale: uses (the cast and the old matmul_integer die; dce removes the scale product
 * when nothing else reads it).
 */
#include "pass.h"

#include <stdio.h>
#include <string.h>

static const Type *
vt(Graph *g, ValueId v)
{
    return &ir_value(g, v)->type;
}

static bool
f32_of(Graph *g, ValueId v, int64_t nn, bool per_column_ok)
{
    const Type *t = vt(g, v);
    if (t->elem != ET_F32 || t->q)
        return false;
    size_t k = type_numel_unchecked(t);
    return k == 1 || (per_column_ok && t->rank == 1 && t->dims[0] == nn);
}

/* s = mul(sa, sb) with sa one f32 value and sb one value or [N]: the operands, sa first. */
static bool
scale_product(Graph *g, ValueId s, int64_t nn, ValueId *sa, ValueId *sb)
{
    Node *m = qm_def_op(g, s, OP_MUL);
    if (!m || m->nin != 2)
        return false;
    for (int i = 0; i < 2; i++)
        if (f32_of(g, m->in[i], nn, false) && f32_of(g, m->in[1 - i], nn, true)) {
            *sa = m->in[i];
            *sb = m->in[1 - i];
            return true;
        }
    return false;
}

/* An add of a constant f32 bias varying along the last axis only ([N] or [1, ..., N]) that
 * is y's only user (y not a graph output), with y's shape: the add, *bi = the bias operand. */
static Node *
bias_add(Graph *g, ValueId y, int64_t nn, uint32_t *bi)
{
    uint32_t idx;
    Node *add = qm_only_user(g, y, &idx);
    if (!add || add->op != OP_ADD || add->nin != 2)
        return NULL;
    const Tensor *c = ir_const_of(g, add->in[1 - idx]);
    const Type *yt = vt(g, y);
    if (!c || c->type.elem != ET_F32 || c->type.q || c->type.rank < 1 || c->type.rank > yt->rank ||
        c->type.dims[c->type.rank - 1] != nn || (int64_t)type_numel_unchecked(&c->type) != nn ||
        !type_shape_equal(vt(g, add->out[0]), yt))
        return NULL;
    *bi = 1 - idx;
    return add;
}

static bool
rewrite(Graph *g, NodeId nid)
{
    Node *mi = ir_node(g, nid);
    if (mi->nin > 4 || vt(g, mi->out[0])->elem != ET_I32)
        return false;
    uint32_t idx;
    Node *cast = qm_only_user(g, mi->out[0], &idx);
    if (!cast || cast->op != OP_CAST || strcmp(ir_attr_string(g, cast, "to", ""), "f32") != 0)
        return false;
    Node *mul = qm_only_user(g, cast->out[0], &idx);
    if (!mul || mul->op != OP_MUL || mul->nin != 2 ||
        !type_shape_equal(vt(g, mul->out[0]), vt(g, cast->out[0])))
        return false;
    const Type *yt = vt(g, mi->out[0]);
    int64_t nn = yt->rank ? yt->dims[yt->rank - 1] : 1;
    ValueId sa, sb;
    if (!scale_product(g, mul->in[1 - idx], nn, &sa, &sb))
        return false;
    uint32_t bi = 0;
    Node *add = bias_add(g, mul->out[0], nn, &bi);
    Tensor *bias = NULL;
    if (add) {
        const Tensor *c = ir_const_of(g, add->in[bi]);
        Type bt = type_make(ET_F32, 1, (int64_t[]){nn});
        bias = ir_tensor_new(g->m, &bt);
        if (!bias)
            return false;
        memcpy(bias->data, c->data, (size_t)nn * sizeof(float));
    }
    NodeId castid = qm_id(g, cast), mulid = qm_id(g, mul), addid = qm_id(g, add);
    ValueId res = add ? add->out[0] : mul->out[0];
    Loc loc = mi->loc;
    ValueId in[7] = {mi->in[0], mi->in[1], mi->nin > 2 ? mi->in[2] : VNONE,
                     mi->nin > 3 ? mi->in[3] : VNONE, sa, sb, VNONE};
    if (bias) {
        char name[256];
        snprintf(name, sizeof name, "%s_bias", ir_value_name(g, res));
        in[6] = ir_add_const(g, name, bias, loc);
    }
    NodeId r = ir_add_node(g, OP_MATMUL_INTEGER, bias ? 7 : 6, in, 1, loc);
    ir_node(g, nid)->dead = true;
    ir_node(g, castid)->dead = true;
    ir_node(g, mulid)->dead = true;
    if (addid.id)
        ir_node(g, addid)->dead = true;
    ir_set_result(g, r, 0, res);
    return true;
}

/* Largest |x - z| over the storage range of elem, z the constant zero point (or, when z is
 * not a constant, any value of that range). */
static int64_t
max_dist(Graph *g, ElemType elem, ValueId z)
{
    int64_t lo, hi;
    elem_range(elem, &lo, &hi);
    const Tensor *zt = z.id ? ir_const_of(g, z) : NULL;
    if (z.id && !zt)
        return hi - lo;
    int64_t zv = zt ? tensor_get_i(zt, 0) : 0;
    return hi - zv > zv - lo ? hi - zv : zv - lo;
}

/* The int32 accumulator of a matmul_integer (docs/numerics.md, "The int32 accumulator"):
 * per column, max|a - za| times the sum over k of |b - zb[n]| (a constant b), or K times the
 * two largest distances; beyond int32 a warning, as for the integer ops qdq-fold did not
 * make: both engines wrap, as ONNX Runtime's MatMulInteger does. */
static void
check_acc(Graph *g, Node *n)
{
    const Type *at = &ir_value(g, n->in[0])->type, *bt = &ir_value(g, n->in[1])->type;
    ValueId za = n->nin > 2 ? n->in[2] : VNONE, zb = n->nin > 3 ? n->in[3] : VNONE;
    int64_t K = at->dims[at->rank - 1], N = bt->rank >= 2 ? bt->dims[bt->rank - 1] : 1;
    double da = (double)max_dist(g, at->elem, za);
    const Tensor *b = ir_const_of(g, n->in[1]), *zt = zb.id ? ir_const_of(g, zb) : NULL;
    for (int64_t c = 0; c < N; c++) {
        double sum = 0;
        if (b && bt->rank == 2 && (!zb.id || zt)) {
            int64_t z = zt ? tensor_get_i(zt, type_numel_unchecked(&zt->type) == 1 ? 0 : (size_t)c) : 0;
            for (int64_t k = 0; k < K; k++) {
                int64_t d = tensor_get_i(b, (size_t)(k * N + c)) - z;
                sum += (double)(d < 0 ? -d : d);
            }
        } else {
            sum = (double)K * (double)max_dist(g, bt->elem, zb);
        }
        if (da * sum > INT32_MAX) {
            node_warning(g, n, "int32 accumulator may overflow: the products of output column "
                         "%lld can reach %.0f, beyond the int32 range (both engines wrap it to "
                         "int32, as ONNX Runtime does)", (long long)c, da * sum);
            return;
        }
    }
}

bool
pass_minteger_fold(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
    qm_uses(g);
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (n->dead || n->op != OP_MATMUL_INTEGER)
            continue;
        check_acc(g, n);
        if (rewrite(g, (NodeId){i})) {
            changed = true;
            ir_fill_uses(g);
        }
    }
    return changed;
}
