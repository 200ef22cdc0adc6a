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
    switch (f->op) {
    case OP_RELU: return x > 0 ? x : 0;
    case OP_CLIP: return x < f->lo ? f->lo : x > f->hi ? f->hi : x;
    case OP_LEAKY_RELU: return x < 0 ? f->alpha * x : x;
    case OP_SIGMOID: return qn_sigmoidf((float)x);
    case OP_HARD_SIGMOID: {
        double v = f->alpha * x + f->beta;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case OP_HARD_SWISH: {
        double v = x / 6.0 + 0.5;
        return x * (v < 0 ? 0 : v > 1 ? 1 : v);
    }
    case OP_TANH: return qn_tanhf((float)x);
    case OP_ERF: return qn_erff((float)x);
    case OP_GELU: return f->tanh_approx ? qn_gelu_tanh((float)x) : qn_gelu_erf((float)x);
    /* float-island math: as lib/ref/ref_math.c */
    case OP_EXP: return qn_expf((float)x);
    case OP_LOG: return qn_logf((float)x);
    case OP_SQRT: return sqrtf((float)x);
    case OP_RECIPROCAL: return 1.0f / (float)x;
    case OP_NEG: return -x;
    case OP_ABS: return fabs(x);
    default: return NAN;
    }
}

static bool
describe(Graph *g, Node *n, Fn *f)
{
    memset(f, 0, sizeof *f);
    f->op = n->op;
    switch (n->op) {
    case OP_RELU: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_HARD_SWISH:
    case OP_EXP: case OP_LOG: case OP_SQRT: case OP_RECIPROCAL: case OP_NEG: case OP_ABS:
        return true;
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
        return false;
    }
}

static bool
fold_one(Graph *g, NodeId nid)
{
    Node *n = ir_node(g, nid);
    Fn f;
    if (!describe(g, n, &f))
        return false;
    Node *d = qm_dq8(g, n->in[0]);
    if (!d || d->q->axis >= 0)
        return false;
    Node *q = qm_only_user(g, n->out[0], NULL);
    if (!q || q->op != OP_QUANTIZE || !q->q || q->q->axis >= 0 || !qm_is_8bit(q->q->storage))
        return false;
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
        float r = (float)eval(&f, (double)v);
        tensor_set_i(t, (size_t)i, qn_quantize_f32(r, yq->scale[0], yq->zp[0], yq->qmin, yq->qmax));
    }
    qm_annotate(g, x, xq); /* informative only: the table is indexed by the stored integer */
    NodeId r = ir_add_node(g, OP_LUT, 1, &x, 1, ir_node(g, nid)->loc);
    ir_set_attr_tensor(g, r, "table", t);
    ir_node(g, nid)->dead = true;
    ir_node(g, qid)->dead = true;
    qm_take_quantized(g, r, y, yq, ir_node(g, qid)->loc);
    return true;
}

bool
pass_lut(PassCtx *pc, Graph *g)
{
    (void)pc;
    bool changed = false;
    uint32_t nn = g->nodes.len;
    for (uint32_t i = 1; i < nn; i++) {
        Node *n = &g->nodes.data[i];
        if (!n->dead && (op_info(n->op)->flags & OPF_ELEMWISE) && n->op != OP_ADD &&
            n->op != OP_SUB && n->op != OP_MUL && n->op != OP_DIV && n->op != OP_PRELU &&
            n->op != OP_POW && n->op != OP_MIN && n->op != OP_MAX)
            changed |= fold_one(g, (NodeId){i});
    }
    return changed;
}
