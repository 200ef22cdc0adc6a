/* lut.c: element-wise functions between an 8-bit dequantize and a quantize become a 256-entry
 * lookup table computed now.
 *   dequantize(x) -> f -> quantize  =>  lut x, table=dense<STORAGE[256], ...>
 * for f in Relu, Clip (constant bounds), LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh,
 * Erf, Gelu (approximate "none" or "tanh"), Exp, Log, Sqrt, Reciprocal, Neg, Abs. Entry i is
 * for the input integer x = i + storage_min (i8: -128..127, u8: 0..255):
 *   v = qn_dequantize(x, sx, zx)           (f32, as the model's dequantize computes it)
 *   r = f(v)                               (exactly what the reference interpreter and the
 *                                           float-island kernels compute: fmath.c's f32
 *                                           sequences, or the piecewise-linear ones in double
 *                                           rounded once)
 *   table[i] = qn_quantize_f32(r, sy, zy, qmin, qmax)
 * So the table equals the float graph as qdqc runs it, bit for bit; against another runtime's
 * f32 library functions it can differ right at a quantization tie. The input
 * must be per tensor; the quantize must be per tensor, 8-bit and the function's only consumer.
 *
 * Chains: f may also be a small DAG of these functions and add/sub/mul/div whose operands are
 * x itself, other nodes of the DAG or scalar f32 constants, as exporters write activations
 * (torch's GELU: Div(x, 1.414) -> Erf -> Add(1) -> Mul(x, .) -> Mul(0.5); GPT-2's tanh GELU
 * with x^3 as Mul). Every node of the DAG must be used only inside it (the last one only by
 * the quantize), and all its results have x's shape. Each node is evaluated as the float graph
 * computes it, one f32 result per node: functions as above, add/sub/mul/div in f32.
 * needs: nothing.  keeps: result value names.  leaves stale: uses.
 */
#include "pass.h"

#include "numerics/fmath.h"
#include "numerics/numerics.h"

#include <math.h>
#include <string.h>

typedef struct Fn {
    OpKind op;
    double alpha, beta, lo, hi;
    bool tanh_approx;
} Fn;

static double
eval(const Fn *f, double x)
{
    if (op_info(f->op)->f32) /* ops.def's SCALAR column: the f32 formula (x is an f32 value) */
        return op_info(f->op)->f32((float)x);
    switch (f->op) {
    case OP_RELU: return x > 0 ? x : 0;
    case OP_CLIP: return x < f->lo ? f->lo : x > f->hi ? f->hi : x;
    case OP_LEAKY_RELU: return x < 0 ? f->alpha * x : x;
    case OP_HARD_SIGMOID: {
        double v = f->alpha * x + f->beta;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case OP_HARD_SWISH: {
        double v = x / 6.0 + 0.5;
        return x * (v < 0 ? 0 : v > 1 ? 1 : v);
    }
    case OP_GELU: return f->tanh_approx ? qn_gelu_tanh((float)x) : qn_gelu_erf((float)x);
    default: return NAN;
    }
}

/* which ops may become a table: ops.def's LUT column (eval() computes each of them) */
static const bool lut_ok[OP_COUNT] = {
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, REF, LOWER, SCRATCH, STATIC, MLIR, \
           VERIFY, LUT, ...)                                                                       \
    [OP_##E] = LUT,
#include "ir/ops.def"
#undef OP
};

/* f for node n: its op and the attributes eval() reads; false if n cannot be tabulated */
static bool
describe(Graph *g, Node *n, Fn *f)
{
    memset(f, 0, sizeof *f);
    f->op = n->op;
    if (n->op <= OP_INVALID || n->op >= OP_COUNT || !lut_ok[n->op])
        return false;
    switch (n->op) {
    case OP_CLIP: {
        float lo, hi;
        if (!qm_act_bounds(g, n, &lo, &hi))
            return false;
        f->lo = lo;
        f->hi = hi;
        return true;
    }
    case OP_LEAKY_RELU:
        f->alpha = ir_attr_float(g, n, "alpha", 0.01f);
        return true;
    case OP_HARD_SIGMOID:
        f->alpha = ir_attr_float(g, n, "alpha", 0.2f);
        f->beta = ir_attr_float(g, n, "beta", 0.5f);
        return true;
    case OP_GELU: {
        const char *a = ir_attr_string(g, n, "approximate", "none");
        f->tanh_approx = strcmp(a, "tanh") == 0;
        return f->tanh_approx || strcmp(a, "none") == 0;
    }
    default:
        return true;
    }
}

#define CHAIN_MAX 24

/* The DAG of element-wise nodes ending at `last`, over one 8-bit per-tensor dequantize. */
typedef struct Chain {
    uint32_t n;
    NodeId node[CHAIN_MAX]; /* node[0] = last */
    Fn fn[CHAIN_MAX];
    ValueId src;            /* the dequantize's result */
    Node *dq;
} Chain;

static int
chain_find(const Chain *c, NodeId id)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->node[i].id == id.id)
            return (int)i;
    return -1;
}

static bool
is_binary(OpKind op)
{
    return op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV;
}

static bool
scalar_f32(Graph *g, ValueId v)
{
    const Tensor *t = ir_const_of(g, v);
    size_t k;
    return t && t->type.elem == ET_F32 && type_numel(&t->type, &k) && k == 1;
}

/* Add the producer of v (and, recursively, its operands) to the chain; false if v is not
 * x, a scalar constant or an element-wise node of x's shape. */
static bool
chain_add(Graph *g, Chain *c, ValueId v, const Type *shape)
{
    if (scalar_f32(g, v))
        return true;
    Node *d = qm_dq8(g, v);
    if (d) {
        if (d->q->axis >= 0 || (c->dq && c->dq != d))
            return false;
        c->dq = d;
        c->src = v;
        return type_equal(&ir_value(g, v)->type, shape);
    }
    Node *n = ir_def(g, v);
    if (!n || n->nout != 1 || n->dead || !type_equal(&ir_value(g, v)->type, shape))
        return false;
    NodeId id = qm_id(g, n);
    if (chain_find(c, id) >= 0)
        return true;
    if (c->n == CHAIN_MAX)
        return false;
    Fn f;
    if (is_binary(n->op)) {
        memset(&f, 0, sizeof f);
        f.op = n->op;
    } else if (!describe(g, n, &f)) {
        return false;
    }
    uint32_t k = c->n++;
    c->node[k] = id;
    c->fn[k] = f;
    uint32_t nin = is_binary(n->op) ? 2 : 1; /* clip's bounds are constants (describe) */
    for (uint32_t i = 0; i < nin; i++)
        if (!chain_add(g, c, ir_node(g, id)->in[i], shape))
            return false;
    return true;
}

/* Every node but the last is used only inside the chain. */
static bool
chain_closed(Graph *g, const Chain *c)
{
    for (uint32_t i = 1; i < c->n; i++) {
        ValueId v = ir_node(g, c->node[i])->out[0];
        uint32_t nu = ir_num_uses(g, v);
        const Use *u = ir_uses(g, v);
        for (uint32_t k = 0; k < nu; k++)
            if (!u[k].node.id || chain_find(c, u[k].node) < 0)
                return false;
    }
    return true;
}

/* f32 value of v for the input value x (memo: per chain node, for this x) */
static float
chain_eval(Graph *g, const Chain *c, ValueId v, float x, float *memo, bool *done)
{
    if (v.id == c->src.id)
        return x;
    const Tensor *t = ir_const_of(g, v);
    if (t)
        return (float)tensor_get_f(t, 0);
    NodeId id = ir_value(g, v)->def;
    int k = chain_find(c, id);
    if (done[k])
        return memo[k];
    const Node *n = ir_node(g, id);
    float a = chain_eval(g, c, n->in[0], x, memo, done), r;
    switch (c->fn[k].op) {
    case OP_ADD: r = a + chain_eval(g, c, n->in[1], x, memo, done); break;
    case OP_SUB: r = a - chain_eval(g, c, n->in[1], x, memo, done); break;
    case OP_MUL: r = a * chain_eval(g, c, n->in[1], x, memo, done); break;
    case OP_DIV: r = a / chain_eval(g, c, n->in[1], x, memo, done); break;
    default: r = (float)eval(&c->fn[k], (double)a); break;
    }
    memo[k] = r;
    done[k] = true;
    return r;
}

static bool
fold_one(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    if (n->nout != 1)
        return false;
    Node *q = qm_only_user(g, n->out[0], NULL);
    if (!q || q->op != OP_QUANTIZE || !q->q || q->q->axis >= 0 || !qm_is_8bit(q->q->storage))
        return false;
    Chain c;
    memset(&c, 0, sizeof c);
    Type shape = ir_value(g, n->out[0])->type;
    if (!chain_add(g, &c, n->out[0], &shape) || !c.dq || !chain_closed(g, &c))
        return false;
    Node *d = c.dq;
    const QParams *xq = d->q, *yq = q->q;
    ValueId x = d->in[0], y = q->out[0];
    NodeId qid = qm_id(g, q);
    int64_t smin, smax;
    elem_range(xq->storage, &smin, &smax);
    int64_t k = 256;
    Type tt = type_make(yq->storage, 1, &k);
    Tensor *t = ir_tensor_new(g->m, &tt);
    for (int i = 0; i < 256; i++) {
        float v = qn_dequantize((int32_t)(smin + i), xq->scale[0], xq->zp[0]);
        float memo[CHAIN_MAX];
        bool done[CHAIN_MAX] = {false};
        float r = chain_eval(g, &c, n->out[0], v, memo, done);
        tensor_set_i(t, (size_t)i, qn_quantize_f32(r, yq->scale[0], yq->zp[0], yq->qmin, yq->qmax));
    }
    qm_annotate(g, x, xq); /* informative only: the table is indexed by the stored integer */
    NodeId r = ir_add_node(g, OP_LUT, 1, &x, 1, ir_node(g, nid)->loc);
    ir_set_attr_tensor(g, r, "table", t);
    for (uint32_t i = 0; i < c.n; i++)
        ir_node(g, c.node[i])->dead = true;
    ir_node(g, qid)->dead = true;
    qm_take_quantized(g, r, y, yq, ir_node(g, qid)->loc);
    return true;
}

bool
pass_lut(PassCtx *pc, Graph *g)
{
    bool changed = false;
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (!n->dead && (op_info(n->op)->flags & OPF_ELEMWISE) && n->op != OP_PRELU &&
            !pass_keep_float(pc, n))
            changed |= fold_one(g, (NodeId){i});
    }
    return changed;
}
