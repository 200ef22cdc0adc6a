/* ref_elem.c: reference float elementwise ops with numpy broadcasting (add, sub, mul, div,
 * prelu; also plain integers for shape arithmetic), activations (relu, clip, leaky_relu,
 * sigmoid, hard_sigmoid, hard_swish, tanh, erf, gelu exact and tanh approximation), batchnorm,
 * softmax, layernorm, reduce_mean and qreduce_mean (integer sum of x - zx, then qn_qavg, or
 * qn_qavg_fixed under --requant=fixed). Binary arithmetic is one f32 operation, as ONNX defines
 * it; sigmoid, tanh, erf and gelu are lib/numerics/fmath.c's f32 sequences; softmax, layernorm
 * and reduce_mean are f32 with fmath.h's fixed 16-lane summation order (so the vector kernels
 * of any width compute the same sums); the piecewise-linear activations and batchnorm are
 * evaluated in double and rounded once. */
#include "ref/ref_impl.h"

#include "ir/eval.h"

#include "numerics/elementwise.h"
#include "numerics/fmath.h"

#include <math.h>
#include <string.h>

bool
ref_op_binary(RefCtx *c, Node *n)
{
    const RefTensor *a = ref_in(c, n, 0), *b = ref_in(c, n, 1);
    RefTensor *y = ref_out(c, n, 0);
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_bcast_strides(&a->type, &y->type, sa);
    type_bcast_strides(&b->type, &y->type, sb);
    size_t k = ref_numel(y);
    bool fl = y->type.elem == ET_F32;
    if (!fl && (elem_is_float(y->type.elem) || !elem_is_int(a->type.elem) ||
                !elem_is_int(b->type.elem))) {
        node_error(c->g, n, "reference interpreter: %s results are not supported",
                   elem_name(y->type.elem));
        return false;
    }
    if (fl && (a->type.elem != ET_F32 || b->type.elem != ET_F32)) {
        node_error(c->g, n, "reference interpreter: operands must be f32");
        return false;
    }
    for (size_t i = 0; i < k; i++) {
        int64_t ia = 0, ib = 0;
        for (int d = 0; d < y->type.rank; d++) {
            ia += idx[d] * sa[d];
            ib += idx[d] * sb[d];
        }
        if (fl) {
            float x = ((const float *)a->data)[ia], z = ((const float *)b->data)[ib], r = 0;
            switch (n->op) {
            case OP_ADD: r = x + z; break;
            case OP_SUB: r = x - z; break;
            case OP_MUL: r = x * z; break;
            case OP_DIV: r = x / z; break;
            case OP_PRELU: r = x < 0 ? z * x : x; break;
            default: break;
            }
            ((float *)y->data)[i] = r;
        } else {
            int64_t x = ref_get_i(a, (size_t)ia), z = ref_get_i(b, (size_t)ib), r = 0;
            switch (n->op) {
            case OP_ADD: r = (int64_t)((uint64_t)x + (uint64_t)z); break;
            case OP_SUB: r = (int64_t)((uint64_t)x - (uint64_t)z); break;
            case OP_MUL: r = (int64_t)((uint64_t)x * (uint64_t)z); break;
            case OP_DIV:
                if (z == 0 || (x == INT64_MIN && z == -1)) {
                    node_error(c->g, n, "integer division by zero or overflow");
                    return false;
                }
                r = x / z;
                break;
            case OP_PRELU: r = x < 0 ? x * z : x; break;
            default: break;
            }
            ref_set_i(y, i, r);
        }
        type_next_index(&y->type, idx);
    }
    return true;
}

/* the f32 functions of lib/numerics/fmath.c: the op's SCALAR column, or gelu's two forms */
static float
unary_f32(OpKind op, float x, bool tanh_gelu)
{
    if (op == OP_GELU)
        return tanh_gelu ? qn_gelu_tanh(x) : qn_gelu_erf(x);
    return op_info(op)->f32 ? op_info(op)->f32(x) : x;
}

static double
unary_f(const Graph *g, const Node *n, double x)
{
    switch (n->op) {
    case OP_RELU: return x > 0 ? x : 0;
    case OP_LEAKY_RELU: return x < 0 ? (double)ir_attr_float(g, n, "alpha", 0.01f) * x : x;
    case OP_HARD_SIGMOID: {
        double v = (double)ir_attr_float(g, n, "alpha", 0.2f) * x +
                   (double)ir_attr_float(g, n, "beta", 0.5f);
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case OP_HARD_SWISH: {
        double v = x / 6.0 + 0.5;
        return x * (v < 0 ? 0 : v > 1 ? 1 : v);
    }
    default: return x;
    }
}

bool
ref_op_unary(RefCtx *c, Node *n)
{
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    size_t k = ref_numel(y);
    bool tanh_gelu = false;
    if (n->op == OP_GELU) {
        const char *ap = ir_attr_string(c->g, n, "approximate", "none");
        if (strcmp(ap, "tanh") == 0)
            tanh_gelu = true;
        else if (strcmp(ap, "none") != 0) {
            node_error(c->g, n, "gelu approximate='%s' is not supported (none, tanh)", ap);
            return false;
        }
    }
    if (n->op == OP_CLIP) {
        double lo = -INFINITY, hi = INFINITY;
        const RefTensor *tl = ref_in(c, n, 1), *th = ref_in(c, n, 2);
        const Attr *al = ir_attr(c->g, n, "min"), *ah = ir_attr(c->g, n, "max");
        if (tl)
            lo = ref_get_f(tl, 0);
        else if (al)
            lo = al->kind == ATTR_INT ? (double)al->i : (double)al->f;
        if (th)
            hi = ref_get_f(th, 0);
        else if (ah)
            hi = ah->kind == ATTR_INT ? (double)ah->i : (double)ah->f;
        for (size_t i = 0; i < k; i++) {
            if (elem_is_float(x->type.elem)) {
                double v = ref_get_f(x, i);
                v = v < lo ? lo : v;
                v = v > hi ? hi : v; /* ONNX: min(max(x, lo), hi) */
                ref_set_f(y, i, v);
            } else {
                int64_t v = ref_get_i(x, i);
                if ((double)v < lo)
                    v = (int64_t)lo;
                if ((double)v > hi)
                    v = (int64_t)hi;
                ref_set_i(y, i, v);
            }
        }
        return true;
    }
    if (x->type.elem != ET_F32) {
        if (n->op == OP_RELU && elem_is_int(x->type.elem) && !x->type.q) {
            for (size_t i = 0; i < k; i++) {
                int64_t v = ref_get_i(x, i);
                ref_set_i(y, i, v > 0 ? v : 0);
            }
            return true;
        }
        return ref_f32_in(c, n, 0) != NULL;
    }
    const float *xf = x->data;
    float *yf = y->data;
    bool f32 = n->op == OP_SIGMOID || n->op == OP_TANH || n->op == OP_ERF || n->op == OP_GELU;
    for (size_t i = 0; i < k; i++)
        yf[i] = f32 ? unary_f32(n->op, xf[i], tanh_gelu) : (float)unary_f(c->g, n, xf[i]);
    return true;
}

bool
ref_op_batchnorm(RefCtx *c, Node *n)
{
    const float *x = ref_f32_in(c, n, 0), *sc = ref_f32_in(c, n, 1), *bi = ref_f32_in(c, n, 2);
    const float *mean = ref_f32_in(c, n, 3), *var = ref_f32_in(c, n, 4);
    float *y = ref_f32_out(c, n, 0);
    if (!x || !sc || !bi || !mean || !var || !y)
        return false;
    const Type *t = &ref_in(c, n, 0)->type;
    double eps = ir_attr_float(c->g, n, "epsilon", 1e-5f);
    int64_t C = t->dims[1], inner = 1;
    for (int d = 2; d < t->rank; d++)
        inner *= t->dims[d];
    size_t k = ref_numel(ref_in(c, n, 0));
    for (size_t i = 0; i < k; i++) {
        int64_t ch = ((int64_t)i / inner) % C;
        y[i] = (float)(((double)x[i] - mean[ch]) / sqrt((double)var[ch] + eps) * sc[ch] +
                       bi[ch]);
    }
    return true;
}

/* Split t around axis a: outer x len x inner. */
static void
split_axis(const Type *t, int a, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < a; d++)
        *outer *= t->dims[d];
    *len = t->dims[a];
    for (int d = a + 1; d < t->rank; d++)
        *inner *= t->dims[d];
}

/* softmax: mx = the largest element (NaNs skipped); e_j = qn_expf(x_j - mx); s = the 16-lane
 * sum of the e_j (fmath.h); y_j = e_j / s. All f32. */
bool
ref_op_softmax(RefCtx *c, Node *n)
{
    const float *x = ref_f32_in(c, n, 0);
    float *y = ref_f32_out(c, n, 0);
    if (!x || !y)
        return false;
    const Type *t = &ref_in(c, n, 0)->type;
    int64_t a = ir_attr_int(c->g, n, "axis", -1);
    if (a < 0)
        a += t->rank;
    int64_t outer, len, inner;
    split_axis(t, (int)a, &outer, &len, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xp = x + o * len * inner + i;
            float *yp = y + o * len * inner + i;
            float mx = -INFINITY;
            for (int64_t j = 0; j < len; j++)
                mx = xp[j * inner] > mx ? xp[j * inner] : mx;
            for (int64_t j = 0; j < len; j++)
                yp[j * inner] = qn_expf(xp[j * inner] - mx);
            float sum = qn_sum16(yp, len, inner);
            for (int64_t j = 0; j < len; j++)
                yp[j * inner] = yp[j * inner] / sum;
        }
    return true;
}

/* layernorm over the trailing axes from `axis`, f32: mean = sum16(x) / len; var = the 16-lane
 * sum of (x_j - mean)^2, / len; inv = 1 / sqrt(var + eps); y = ((x - mean) * inv) * scale
 * (+ bias). */
bool
ref_op_layernorm(RefCtx *c, Node *n)
{
    const float *x = ref_f32_in(c, n, 0), *sc = ref_f32_in(c, n, 1);
    const float *bi = ref_in(c, n, 2) ? ref_f32_in(c, n, 2) : NULL;
    float *y = ref_f32_out(c, n, 0);
    if (!x || !sc || !y || (ref_in(c, n, 2) && !bi))
        return false;
    /* optional results: mean and inverse standard deviation per normalized block */
    float *ym = n->nout > 1 ? ref_f32_out(c, n, 1) : NULL;
    float *yi = n->nout > 2 ? ref_f32_out(c, n, 2) : NULL;
    if ((n->nout > 1 && !ym) || (n->nout > 2 && !yi))
        return false;
    const Type *t = &ref_in(c, n, 0)->type;
    int64_t a = ir_attr_int(c->g, n, "axis", -1);
    if (a < 0)
        a += t->rank;
    float eps = ir_attr_float(c->g, n, "epsilon", 1e-5f);
    Type tail = *t;
    tail.rank = (uint8_t)(t->rank - a);
    memmove(tail.dims, t->dims + a, (size_t)tail.rank * sizeof(int64_t));
    int64_t ss[IR_MAX_RANK], sbs[IR_MAX_RANK] = {0}; /* sbs stays 0 without a bias */
    type_bcast_strides(&ref_in(c, n, 1)->type, &tail, ss);
    if (bi)
        type_bcast_strides(&ref_in(c, n, 2)->type, &tail, sbs);
    int64_t len = (int64_t)type_numel_unchecked(&tail);
    int64_t outer = len ? (int64_t)ref_numel(ref_in(c, n, 0)) / len : 0;
    for (int64_t o = 0; o < outer; o++) {
        const float *xp = x + o * len;
        float mean = qn_sum16(xp, len, 1) / (float)len;
        float p[QN_SUM_LANES] = {0};
        for (int64_t j = 0; j < len; j++) {
            float d = xp[j] - mean;
            p[j % QN_SUM_LANES] = p[j % QN_SUM_LANES] + d * d;
        }
        float var = qn_sum16_tree(p) / (float)len;
        float inv = 1.0f / sqrtf(var + eps);
        if (ym)
            ym[o] = mean;
        if (yi)
            yi[o] = inv;
        int64_t idx[IR_MAX_RANK] = {0};
        for (int64_t j = 0; j < len; j++) {
            int64_t is = 0, ib = 0;
            for (int d = 0; d < tail.rank; d++) {
                is += idx[d] * ss[d];
                ib += idx[d] * sbs[d];
            }
            float v = (xp[j] - mean) * inv * sc[is];
            y[o * len + j] = bi ? v + bi[ib] : v;
            type_next_index(&tail, idx);
        }
    }
    return true;
}

/* reduce_mean: f32, the 16-lane sum (fmath.h) of each output's elements in input order, then
 * / (float)count. qreduce_mean: the exact integer sum of x - zx, then qn_qavg (qn_qavg_fixed). */
bool
ref_op_reduce_mean(RefCtx *c, Node *n)
{
    bool q = n->op == OP_QREDUCE_MEAN;
    const RefTensor *xt = ref_in(c, n, 0);
    float sx = 0, sy = 0;
    int32_t zx = 0, zy = 0, lo = 0, hi = 0;
    if (q && (!ref_int_operand(c, n, 0, &sx, &zx) || !ref_int_range(c, n, &zy, &sy, &lo, &hi)))
        return false;
    const float *x = q ? NULL : ref_f32_in(c, n, 0);
    float *y = q ? NULL : ref_f32_out(c, n, 0);
    if (!q && (!x || !y))
        return false;
    const Type *t = &xt->type;
    IrReduceSplit rs;
    if (!ir_reduce_split(c->g, n, t, &rs)) {
        node_error(c->g, n, "axis out of range");
        return false;
    }
    /* output index = input index with reduced axes dropped (strides over the kept dims) */
    const int64_t *ost = rs.ost;
    int64_t cnt = rs.cnt;
    QnFixed fix = {0, 0};
    if (q && c->requant_fixed && cnt > 0 &&
        !ref_fixed_ok(c, n, qn_qavg_fixed_params(sx, sy, cnt, ref_int_bits(c, n, 0), &fix)))
        return false;
    size_t ny = ref_numel(ref_out(c, n, 0)), nx = ref_numel(ref_in(c, n, 0));
    double *acc = xcalloc(ny ? ny : 1, sizeof(double));
    /* f32: output o's r-th element (input order) goes to partial sum part[o][r mod 16] */
    float *part = q ? NULL : xcalloc((ny ? ny : 1) * QN_SUM_LANES, sizeof(float));
    int64_t *seen = q ? NULL : xcalloc(ny ? ny : 1, sizeof(int64_t));
    int64_t idx[IR_MAX_RANK] = {0};
    for (size_t i = 0; i < nx; i++) {
        int64_t o = 0;
        for (int d = 0; d < t->rank; d++)
            o += idx[d] * ost[d];
        if (q) {
            acc[o] += (double)(ref_get_i(xt, i) - zx);
        } else {
            float *pp = &part[o * QN_SUM_LANES + seen[o]++ % QN_SUM_LANES];
            *pp = *pp + x[i];
        }
        type_next_index(t, idx);
    }
    for (size_t i = 0; i < ny; i++) {
        if (q && c->requant_fixed) /* integer sums below 2^53 are exact in double */
            ref_set_i(ref_out(c, n, 0), i,
                      cnt > 0 ? qn_qavg_fixed((int64_t)acc[i], fix, zy, lo, hi)
                              : qn_saturate(zy, lo, hi));
        else if (q)
            ref_set_i(ref_out(c, n, 0), i, qn_qavg((int64_t)acc[i], cnt, sx, sy, zy, lo, hi));
        else
            y[i] = qn_sum16_tree(&part[i * QN_SUM_LANES]) / (float)cnt;
    }
    free(acc);
    free(part);
    free(seen);
    return true;
}
