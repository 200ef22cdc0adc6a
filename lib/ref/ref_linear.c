/* ref_linear.c: reference conv, conv_transpose, matmul and gemm (float, ONNX semantics) and
 * their integer forms qconv, qconv_transpose and qmatmul.
 *
 * f32 matmul and gemm compute one f32 fma chain per element (run_float_product: the order of
 * docs/numerics.md, "Float matrix products", which the compiled kernels share). The other cores
 * compute in double over (x - zx) and (w - zw[c]): for float conv (and the f64 matmul) that is
 * an f64 accumulation rounded once to f32 at the end, each element's sum starting from its bias
 * and adding the products in one fixed order (conv: input channel, then kernel taps row-major;
 * matmul: k ascending). The products of f32 values are exact in f64 but the sums are not, so
 * that order is part of the result: the loops may run in any order that keeps it per element
 * (tools/ref-identity.py checks a change byte for byte). For the integer ops every
 * product and partial sum is an integer far below 2^53, so the double sum is the exact
 * integer accumulator, which is then reduced to the documented accumulator (int32, wrapping,
 * for 8-bit activations; int64, exact, for 16-bit activations) and requantized with
 * lib/numerics (docs/numerics.md, "The accumulator of 16-bit activations"). */
#include "ref/ref_impl.h"

#include "numerics/numerics.h"

#include <assert.h>
#include <math.h>
#include <string.h>


/* ---- operand loading ---- */

static double *
load_f(RefCtx *c, Node *n, uint32_t i)
{
    const RefTensor *t = ref_in(c, n, i);
    if (!t)
        return NULL;
    /* f64: matmul only (an f64 Einsum's matmul, onnx_einsum.c) */
    if (t->type.elem != ET_F32 && !(t->type.elem == ET_F64 && n->op == OP_MATMUL)) {
        node_error(c->g, n, "reference interpreter: operand %u must be f32, got %s", i,
                   elem_name(t->type.elem));
        return NULL;
    }
    size_t k = ref_numel(t);
    double *d = xmalloc((k ? k : 1) * sizeof(double));
    for (size_t j = 0; j < k; j++)
        d[j] = ref_get_f(t, j);
    return d;
}

/* (q - zp[ch]) of a quantized integer operand; ch along q->axis. */
static double *
load_q(RefCtx *c, Node *n, uint32_t i)
{
    const RefTensor *t = ref_in(c, n, i);
    const QParams *q = t->type.q;
    if (!q || !elem_is_quant_storage(t->type.elem) || t->type.elem == ET_I32) {
        node_error(c->g, n, "reference interpreter: operand %u must be quantized, got %s", i,
                   elem_name(t->type.elem));
        return NULL;
    }
    size_t k = ref_numel(t);
    double *d = xmalloc((k ? k : 1) * sizeof(double));
    int64_t inner = 1, dim = 1;
    if (q->axis >= 0) {
        for (int a = q->axis + 1; a < t->type.rank; a++)
            inner *= t->type.dims[a];
        dim = t->type.dims[q->axis];
    }
    /* runs of `inner` elements share a channel (per tensor: one run) */
    size_t run = q->axis >= 0 ? (size_t)inner : k;
    for (size_t j0 = 0; j0 < k; j0 += run) {
        int32_t zp = ref_qzp(q, q->axis >= 0 ? ((int64_t)j0 / inner) % dim : 0);
        for (size_t j = j0; j < j0 + run; j++)
            d[j] = (double)(ref_get_i(t, j) - zp);
    }
    return d;
}

static double *
load_bias_i32(RefCtx *c, Node *n, uint32_t i)
{
    const RefTensor *t = ref_in(c, n, i);
    if (!t)
        return NULL;
    size_t k = ref_numel(t);
    double *d = xmalloc((k ? k : 1) * sizeof(double));
    for (size_t j = 0; j < k; j++)
        d[j] = (double)ref_get_i(t, j);
    return d;
}

/* ---- integer epilogue ---- */

typedef struct Epi {
    ElemType kind; /* ET_I32 (acc), ET_F32 (dequant), else requantize */
    bool wide;     /* 16-bit activations: int64 accumulator */
    int32_t zy, lo, hi;
    float *mult;   /* per channel: float-mode multiplier, or sx*sw for the f32 epilogue */
    QnFixed *fix;  /* per channel, fixed mode */
} Epi;

static void
epi_free(Epi *e)
{
    free(e->mult);
    free(e->fix);
}

/* Per-output-channel parameters; output channel m uses the weight scale of channel
 * m % wmod. */
static bool
epi_init(RefCtx *c, Node *n, const QParams *xq, const QParams *wq, int64_t nch, int64_t wmod,
         Epi *e)
{
    Graph *g = c->g;
    const Type *yt = &ref_out(c, n, 0)->type;
    memset(e, 0, sizeof *e);
    e->mult = xmalloc((size_t)(nch ? nch : 1) * sizeof(float));
    e->fix = xmalloc((size_t)(nch ? nch : 1) * sizeof(QnFixed));
    float sx = xq->scale[0];
    ElemType xe = ref_in(c, n, 0)->type.elem;
    e->wide = xe == ET_I16 || xe == ET_U16;
    if (yt->elem == ET_I32 && !yt->q) {
        e->kind = ET_I32;
        return true;
    }
    if (yt->elem == ET_F32 && !yt->q) {
        e->kind = ET_F32;
        for (int64_t m = 0; m < nch; m++)
            e->mult[m] = sx * ref_qscale(wq, m % wmod);
        return true;
    }
    if (!yt->q || yt->q->axis >= 0) {
        epi_free(e);
        node_error(g, n, "reference interpreter: result must be per-tensor quantized, i32 or f32");
        return false;
    }
    e->kind = yt->elem;
    e->zy = yt->q->zp[0];
    ir_clamp_range(g, n, yt->q, &e->lo, &e->hi);
    float sy = yt->q->scale[0];
    int64_t bad = qn_requant_channels(sx, wq->scale, wq->axis >= 0 ? wmod : 1, sy, nch, e->mult,
                                      c->requant_fixed ? e->fix : NULL);
    if (bad >= 0) {
        float sw = ref_qscale(wq, bad % wmod);
        epi_free(e);
        node_error(g, n, "requantization multiplier %g of channel %lld is not representable "
                   "in fixed point", (double)sx * (double)sw / (double)sy, (long long)bad);
        return false;
    }
    return true;
}

static bool
epi_store(RefCtx *c, Node *n, const Epi *e, RefTensor *y, size_t i, double acc, int64_t m)
{
    /* acc is the exact sum (|acc| < 2^53). An int32 accumulator that leaves the int32 range
     * wraps, as compiled code's two's-complement adds and ONNX Runtime's integer kernels do:
     * qdq-fold never makes such an op (docs/numerics.md, "The int32 accumulator"), and a
     * hand-written one gets a compile-time warning. */
    if (!(acc > -0x1p53 && acc < 0x1p53)) {
        node_error(c->g, n, "integer accumulator %.17g at output element %zu is beyond 2^53", acc,
                   i);
        return false;
    }
    int32_t a = (int32_t)(uint32_t)(uint64_t)(int64_t)acc; /* modulo 2^32 */
    if (e->wide) { /* 16-bit activations: the exact int64 accumulator (|acc| < 2^48) */
        int64_t w = (int64_t)acc;
        switch (e->kind) {
        case ET_I32: ref_set_i(y, i, a); break; /* an int32 result wraps */
        case ET_F32: ((float *)y->data)[i] = (float)w * e->mult[m]; break;
        default:
            ref_set_i(y, i, c->requant_fixed ? qn_requant_fixed_wide(w, e->fix[m], e->zy, e->lo, e->hi)
                                             : qn_requant_float_wide(w, e->mult[m], e->zy, e->lo, e->hi));
            break;
        }
        return true;
    }
    switch (e->kind) {
    case ET_I32:
        ref_set_i(y, i, a);
        break;
    case ET_F32:
        ((float *)y->data)[i] = (float)a * e->mult[m];
        break;
    default:
        ref_set_i(y, i, c->requant_fixed ? qn_requant_fixed(a, e->fix[m], e->zy, e->lo, e->hi)
                                         : qn_requant_float(a, e->mult[m], e->zy, e->lo, e->hi));
        break;
    }
    return true;
}

/* ---- conv ---- */

typedef struct ConvDims {
    int64_t N, C, M, G;
    IrWindow w;
} ConvDims;

/* One kernel tap along one axis: the output positions [lo, hi) whose input position
 * o*s + off (off = k*d - pb) lies inside [0, in), i.e. the outputs for which the tap is not
 * padding. */
typedef struct Tap {
    int64_t lo, hi, off;
} Tap;

static Tap
tap_of(const IrWindow *W, int a, int64_t k)
{
    int64_t s = W->s[a], off = k * W->d[a] - W->pb[a];
    assert(s >= 1);
    int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t hi = W->in[a] - off <= 0 ? 0 : (W->in[a] - off + s - 1) / s;
    hi = hi < W->out[a] ? hi : W->out[a];
    return (Tap){.lo = lo < hi ? lo : hi, .hi = hi, .off = off};
}

/* y[N, M, out...] = b[m] + the sum over c in the group and the kernel taps of x * w; each
 * output element's terms are added in the order c, k0, k1, k2, padding taps skipped. The
 * loops keep that order per element but, for one (c, tap), run over the rectangle of outputs
 * the tap reaches inside x, a row of it innermost. */
static void
conv_core(const ConvDims *d, const double *x, const double *w, const double *b, double *y)
{
    IrWindow W = d->w;
    int64_t Cg = d->C / d->G, Mg = d->M / d->G;
    /* a 1x1 stride-1 unpadded conv reads its input plane as one row */
    if (W.k[0] * W.k[1] * W.k[2] == 1 && W.s[0] * W.s[1] * W.s[2] == 1 && W.pb[0] == 0 &&
        W.pb[1] == 0 && W.pb[2] == 0 && W.in[0] == W.out[0] && W.in[1] == W.out[1] &&
        W.in[2] == W.out[2]) {
        W.in[2] = W.out[2] = W.in[0] * W.in[1] * W.in[2];
        W.in[0] = W.in[1] = W.out[0] = W.out[1] = 1;
    }
    int64_t isp = W.in[0] * W.in[1] * W.in[2], osp = W.out[0] * W.out[1] * W.out[2];
    int64_t ksp = W.k[0] * W.k[1] * W.k[2];
    Tap *taps[3];
    for (int a = 0; a < 3; a++) {
        taps[a] = xmalloc((size_t)W.k[a] * sizeof(Tap));
        for (int64_t k = 0; k < W.k[a]; k++)
            taps[a][k] = tap_of(&W, a, k);
    }
    for (int64_t nm = 0; nm < d->N * d->M; nm++) {
        int64_t nb = nm / d->M, m = nm % d->M, grp = m / Mg;
        double *ym = y + nm * osp;
        for (int64_t o = 0; o < osp; o++)
            ym[o] = b ? b[m] : 0.0;
        for (int64_t ci = 0; ci < Cg; ci++) {
            const double *xc = x + (nb * d->C + grp * Cg + ci) * isp;
            for (int64_t t = 0; t < ksp; t++) {
                double wv = w[(m * Cg + ci) * ksp + t];
                Tap t0 = taps[0][t / (W.k[1] * W.k[2])], t1 = taps[1][t / W.k[2] % W.k[1]];
                Tap t2 = taps[2][t % W.k[2]];
                int64_t s2 = W.s[2];
                for (int64_t o0 = t0.lo; o0 < t0.hi; o0++)
                    for (int64_t o1 = t1.lo; o1 < t1.hi; o1++) {
                        const double *xr = xc + ((o0 * W.s[0] + t0.off) * W.in[1] + o1 * W.s[1] +
                                                 t1.off) * W.in[2];
                        double *yr = ym + (o0 * W.out[1] + o1) * W.out[2];
                        for (int64_t o2 = t2.lo; o2 < t2.hi; o2++)
                            yr[o2] += xr[o2 * s2 + t2.off] * wv;
                    }
            }
        }
    }
    for (int a = 0; a < 3; a++)
        free(taps[a]);
}

/* ConvTranspose: y[n, g*Mg + mm, i*s - pb + k*d] += x[n, g*Cg + c, i] * w[g*Cg + c, mm, k]. */
static void
convt_core(const ConvDims *d, const double *x, const double *w, const double *b, double *y)
{
    const IrWindow *W = &d->w;
    int64_t Cg = d->C / d->G, Mg = d->M / d->G;
    int64_t isp = W->in[0] * W->in[1] * W->in[2], osp = W->out[0] * W->out[1] * W->out[2];
    int64_t ksp = W->k[0] * W->k[1] * W->k[2];
    for (int64_t nb = 0; nb < d->N; nb++)
        for (int64_t m = 0; m < d->M; m++) {
            double *ym = y + (nb * d->M + m) * osp;
            for (int64_t o = 0; o < osp; o++)
                ym[o] = b ? b[m] : 0.0;
            int64_t grp = m / Mg, mm = m % Mg;
            for (int64_t ci = 0; ci < Cg; ci++) {
                int64_t cc = grp * Cg + ci;
                const double *xc = x + (nb * d->C + cc) * isp;
                const double *wc = w + (cc * Mg + mm) * ksp;
                for (int64_t i0 = 0; i0 < W->in[0]; i0++)
                    for (int64_t i1 = 0; i1 < W->in[1]; i1++)
                        for (int64_t i2 = 0; i2 < W->in[2]; i2++) {
                            double xv = xc[(i0 * W->in[1] + i1) * W->in[2] + i2];
                            for (int64_t k0 = 0; k0 < W->k[0]; k0++) {
                                int64_t o0 = i0 * W->s[0] - W->pb[0] + k0 * W->d[0];
                                if (o0 < 0 || o0 >= W->out[0])
                                    continue;
                                for (int64_t k1 = 0; k1 < W->k[1]; k1++) {
                                    int64_t o1 = i1 * W->s[1] - W->pb[1] + k1 * W->d[1];
                                    if (o1 < 0 || o1 >= W->out[1])
                                        continue;
                                    for (int64_t k2 = 0; k2 < W->k[2]; k2++) {
                                        int64_t o2 = i2 * W->s[2] - W->pb[2] + k2 * W->d[2];
                                        if (o2 < 0 || o2 >= W->out[2])
                                            continue;
                                        ym[(o0 * W->out[1] + o1) * W->out[2] + o2] +=
                                            xv * wc[(k0 * W->k[1] + k1) * W->k[2] + k2];
                                    }
                                }
                            }
                        }
            }
        }
}

static bool
conv_dims(RefCtx *c, Node *n, bool transpose, ConvDims *d)
{
    const Type *x = &ref_in(c, n, 0)->type, *w = &ref_in(c, n, 1)->type;
    const Type *y = &ref_out(c, n, 0)->type;
    if (transpose && ir_attr(c->g, n, "output_shape")) {
        node_error(c->g, n, "reference interpreter: 'output_shape' is not supported (use pads)");
        return false;
    }
    d->N = x->dims[0];
    d->C = x->dims[1];
    d->M = y->dims[1];
    d->G = ir_attr_int(c->g, n, "group", 1);
    int64_t ks[3] = {1, 1, 1};
    for (int i = 0; i < x->rank - 2 && i < 3; i++)
        ks[i] = w->dims[2 + i];
    return ref_window(c, n, x, y, ks, &d->w);
}

/* ---- matmul ---- */

typedef struct MmDims {
    Type batch;           /* broadcast batch shape */
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK]; /* batch strides in matrices */
    int64_t M, K, N;
} MmDims;

static void
mm_dims(const Type *a, const Type *b, MmDims *d)
{
    Type a2, b2;
    ir_matmul_promote(a, b, &a2, &b2);
    d->M = a2.dims[a2.rank - 2];
    d->K = a2.dims[a2.rank - 1];
    d->N = b2.dims[b2.rank - 1];
    Type ba = a2, bb = b2;
    ba.rank -= 2;
    bb.rank -= 2;
    shape_broadcast(&ba, &bb, &d->batch);
    type_bcast_strides(&ba, &d->batch, d->sa);
    type_bcast_strides(&bb, &d->batch, d->sb);
}

/* y[batch, M, N] = bias[N] + a[batch, M, K] @ b[batch, K, N], each element's sum taken in
 * the order k = 0, 1, ...; the loops run along a row of y (and b) innermost. */
static void
mm_core(const MmDims *d, const double *a, const double *b, const double *bias, double *y)
{
    int64_t idx[IR_MAX_RANK] = {0};
    size_t nb = type_numel_unchecked(&d->batch);
    for (size_t t = 0; t < nb; t++) {
        int64_t oa = 0, ob = 0;
        for (int i = 0; i < d->batch.rank; i++) {
            oa += idx[i] * d->sa[i];
            ob += idx[i] * d->sb[i];
        }
        const double *am = a + oa * d->M * d->K, *bm = b + ob * d->K * d->N;
        double *ym = y + (int64_t)t * d->M * d->N;
        for (int64_t i = 0; i < d->M; i++) {
            double *yr = ym + i * d->N;
            for (int64_t j = 0; j < d->N; j++)
                yr[j] = bias ? bias[j] : 0.0;
            for (int64_t k = 0; k < d->K; k++) {
                double av = am[i * d->K + k];
                const double *br = bm + k * d->N;
                for (int64_t j = 0; j < d->N; j++)
                    yr[j] += av * br[j];
            }
        }
        type_next_index(&d->batch, idx);
    }
}

/* ---- entry ---- */

static bool
store_float(RefCtx *c, Node *n, const double *acc)
{
    RefTensor *yt = ref_out(c, n, 0);
    if (yt->type.elem == ET_F64 && n->op == OP_MATMUL) {
        memcpy(yt->data, acc, ref_numel(yt) * sizeof(double));
        return true;
    }
    float *y = ref_f32_out(c, n, 0);
    if (!y)
        return false;
    size_t k = ref_numel(ref_out(c, n, 0));
    for (size_t i = 0; i < k; i++)
        y[i] = (float)acc[i];
    return true;
}

/* ---- f32 matmul and gemm (docs/numerics.md, "Float matrix products") ----
 * Every element is one chain of f32 fused multiply-adds over k in increasing order from +0.0f,
 * acc = fmaf(a[m, k], b[k, n], acc), which is what every compiled path computes (gemm/sgemm.h);
 * gemm then computes v = alpha * acc and v = v + (beta * c), each one f32 operation (separate
 * statements, and -ffp-contract=off: no fma is formed from them). */

static float *
load_f32(RefCtx *c, Node *n, uint32_t i)
{
    const RefTensor *t = ref_in(c, n, i);
    size_t k = ref_numel(t);
    float *d = xmalloc((k ? k : 1) * sizeof(float));
    for (size_t j = 0; j < k; j++)
        d[j] = (float)ref_get_f(t, j); /* f32 values: exact */
    return d;
}

static bool
f32_product(RefCtx *c, Node *n)
{
    for (uint32_t i = 0; i < n->nin; i++) {
        const RefTensor *t = ref_in(c, n, i);
        if (t && t->type.elem != ET_F32)
            return false;
    }
    return ref_out(c, n, 0)->type.elem == ET_F32;
}

static bool
run_float_product(RefCtx *c, Node *n)
{
    Graph *g = c->g;
    float *y = ref_f32_out(c, n, 0);
    if (!y)
        return false;
    float *a = load_f32(c, n, 0), *b = load_f32(c, n, 1);
    float *cc = ref_in(c, n, 2) ? load_f32(c, n, 2) : NULL;
    if (n->op == OP_MATMUL) {
        MmDims d;
        mm_dims(&ref_in(c, n, 0)->type, &ref_in(c, n, 1)->type, &d);
        int64_t idx[IR_MAX_RANK] = {0};
        size_t nb = type_numel_unchecked(&d.batch);
        for (size_t t = 0; t < nb; t++) {
            int64_t oa = 0, ob = 0;
            for (int i = 0; i < d.batch.rank; i++) {
                oa += idx[i] * d.sa[i];
                ob += idx[i] * d.sb[i];
            }
            const float *am = a + oa * d.M * d.K, *bm = b + ob * d.K * d.N;
            float *ym = y + (int64_t)t * d.M * d.N;
            for (int64_t i = 0; i < d.M; i++)
                for (int64_t j = 0; j < d.N; j++) {
                    float acc = 0.0f;
                    for (int64_t k = 0; k < d.K; k++)
                        acc = fmaf(am[i * d.K + k], bm[k * d.N + j], acc);
                    ym[i * d.N + j] = acc;
                }
            type_next_index(&d.batch, idx);
        }
    } else {
        const Type *at = &ref_in(c, n, 0)->type, *yt = &ref_out(c, n, 0)->type;
        bool ta = ir_attr_int(g, n, "transA", 0), tb = ir_attr_int(g, n, "transB", 0);
        float alpha = ir_attr_float(g, n, "alpha", 1.0f), beta = ir_attr_float(g, n, "beta", 1.0f);
        int64_t M = yt->dims[0], N = yt->dims[1], K = ta ? at->dims[0] : at->dims[1];
        int64_t cst[IR_MAX_RANK];
        if (cc)
            type_bcast_strides(&ref_in(c, n, 2)->type, yt, cst);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float acc = 0.0f;
                for (int64_t k = 0; k < K; k++)
                    acc = fmaf(ta ? a[k * M + i] : a[i * K + k], tb ? b[j * K + k] : b[k * N + j], acc);
                float v = alpha * acc;
                if (cc) {
                    float p = beta * cc[i * cst[0] + j * cst[1]];
                    v = v + p;
                }
                y[i * N + j] = v;
            }
    }
    free(a);
    free(b);
    free(cc);
    return true;
}

/* ---- f32 conv (docs/numerics.md, "Float convolution") ----
 * Every element is one chain of f32 fused multiply-adds over k = (c, k0, k1, k2) of its group in
 * increasing order from +0.0f; a tap in the padding reads x = 0 (acc = fmaf(0, w, acc), as an
 * im2col of zeros), then y = acc + b[m] (one f32 add) when a bias is given. This is what every
 * compiled path computes (lower/float_conv.c). */
static bool
run_float_conv(RefCtx *c, Node *n)
{
    ConvDims d;
    if (!conv_dims(c, n, false, &d))
        return false;
    float *y = ref_f32_out(c, n, 0);
    if (!y)
        return false;
    float *x = load_f32(c, n, 0), *w = load_f32(c, n, 1);
    float *b = ref_in(c, n, 2) ? load_f32(c, n, 2) : NULL;
    const IrWindow *W = &d.w;
    int64_t Cg = d.C / d.G, Mg = d.M / d.G;
    int64_t isp = W->in[0] * W->in[1] * W->in[2], osp = W->out[0] * W->out[1] * W->out[2];
    int64_t ksp = W->k[0] * W->k[1] * W->k[2];
    for (int64_t nm = 0; nm < d.N * d.M; nm++) {
        int64_t nb = nm / d.M, m = nm % d.M, grp = m / Mg;
        const float *xg = x + (nb * d.C + grp * Cg) * isp, *wm = w + m * Cg * ksp;
        for (int64_t o = 0; o < osp; o++) {
            int64_t o0 = o / (W->out[1] * W->out[2]), o1 = o / W->out[2] % W->out[1], o2 = o % W->out[2];
            float acc = 0.0f;
            const float *wp = wm;
            for (int64_t ci = 0; ci < Cg; ci++)
                for (int64_t k0 = 0; k0 < W->k[0]; k0++) {
                    int64_t i0 = o0 * W->s[0] - W->pb[0] + k0 * W->d[0];
                    for (int64_t k1 = 0; k1 < W->k[1]; k1++) {
                        int64_t i1 = o1 * W->s[1] - W->pb[1] + k1 * W->d[1];
                        bool in01 = i0 >= 0 && i0 < W->in[0] && i1 >= 0 && i1 < W->in[1];
                        const float *xr = xg + ci * isp + (i0 * W->in[1] + i1) * W->in[2];
                        for (int64_t k2 = 0; k2 < W->k[2]; k2++) {
                            int64_t i2 = o2 * W->s[2] - W->pb[2] + k2 * W->d[2];
                            float xv = in01 && i2 >= 0 && i2 < W->in[2] ? xr[i2] : 0.0f;
                            acc = fmaf(xv, *wp++, acc);
                        }
                    }
                }
            float v = acc;
            if (b)
                v = v + b[m];
            y[nm * osp + o] = v;
        }
    }
    free(x);
    free(w);
    free(b);
    return true;
}

/* Tap a of a transposed conv for output position o: the input position i with
 * o = i*s - pb + k*d, or -1 when there is none (not a multiple of the stride, or outside). */
static int64_t
convt_src(const IrWindow *W, int a, int64_t o, int64_t k)
{
    int64_t t = o + W->pb[a] - k * W->d[a];
    if (t < 0 || t % W->s[a])
        return -1;
    return t / W->s[a] < W->in[a] ? t / W->s[a] : -1;
}

/* f32 conv_transpose (docs/numerics.md, "Float convolution"): per output element one chain of
 * f32 fmas over k = (c, k0, k1, k2) of its group in increasing order from +0.0f, a tap that no
 * input position reaches reading x = 0, then + b[m]; the same chain as a conv over the input
 * with zeros inserted between its elements (lower/float_conv.c). */
static bool
run_float_convt(RefCtx *c, Node *n)
{
    ConvDims d;
    if (!conv_dims(c, n, true, &d))
        return false;
    float *y = ref_f32_out(c, n, 0);
    if (!y)
        return false;
    float *x = load_f32(c, n, 0), *w = load_f32(c, n, 1);
    float *b = ref_in(c, n, 2) ? load_f32(c, n, 2) : NULL;
    const IrWindow *W = &d.w;
    int64_t Cg = d.C / d.G, Mg = d.M / d.G;
    int64_t isp = W->in[0] * W->in[1] * W->in[2], osp = W->out[0] * W->out[1] * W->out[2];
    int64_t ksp = W->k[0] * W->k[1] * W->k[2];
    for (int64_t nm = 0; nm < d.N * d.M; nm++) {
        int64_t nb = nm / d.M, m = nm % d.M, grp = m / Mg, mm = m % Mg;
        for (int64_t o = 0; o < osp; o++) {
            int64_t o0 = o / (W->out[1] * W->out[2]), o1 = o / W->out[2] % W->out[1], o2 = o % W->out[2];
            float acc = 0.0f;
            for (int64_t ci = 0; ci < Cg; ci++) {
                const float *xc = x + (nb * d.C + grp * Cg + ci) * isp;
                const float *wc = w + ((grp * Cg + ci) * Mg + mm) * ksp;
                for (int64_t t = 0; t < ksp; t++) {
                    int64_t i0 = convt_src(W, 0, o0, t / (W->k[1] * W->k[2]));
                    int64_t i1 = convt_src(W, 1, o1, t / W->k[2] % W->k[1]);
                    int64_t i2 = convt_src(W, 2, o2, t % W->k[2]);
                    float xv = i0 >= 0 && i1 >= 0 && i2 >= 0 ? xc[(i0 * W->in[1] + i1) * W->in[2] + i2] : 0.0f;
                    acc = fmaf(xv, wc[t], acc);
                }
            }
            float v = acc;
            if (b)
                v = v + b[m];
            y[nm * osp + o] = v;
        }
    }
    free(x);
    free(w);
    free(b);
    return true;
}

bool
ref_op_linear(RefCtx *c, Node *n)
{
    Graph *g = c->g;
    if ((n->op == OP_MATMUL || n->op == OP_GEMM) && f32_product(c, n))
        return run_float_product(c, n);
    if (n->op == OP_CONV && f32_product(c, n))
        return run_float_conv(c, n);
    if (n->op == OP_CONV_TRANSPOSE && f32_product(c, n))
        return run_float_convt(c, n);
    bool integer = op_info(n->op)->flags & OPF_INT;
    double *x = NULL, *w = NULL, *b = NULL, *y = NULL;
    bool ok = false;
    Epi e = {0};
    RefTensor *yt = ref_out(c, n, 0);
    size_t ny = ref_numel(yt);
    if (integer) {
        x = load_q(c, n, 0);
        w = x ? load_q(c, n, 1) : NULL;
        if (!w)
            goto out;
        if (ref_in(c, n, 2))
            b = load_bias_i32(c, n, 2);
    } else {
        x = load_f(c, n, 0);
        w = x ? load_f(c, n, 1) : NULL;
        if (!w)
            goto out;
        if (ref_in(c, n, 2) && !(b = load_f(c, n, 2)))
            goto out;
    }
    y = xmalloc((ny ? ny : 1) * sizeof(double));
    int64_t nch = 1, inner = 1; /* output channel of element i: (i / inner) % nch */
    switch (n->op) {
    case OP_CONV: case OP_QCONV: case OP_CONV_TRANSPOSE: case OP_QCONV_TRANSPOSE: {
        bool tr = n->op == OP_CONV_TRANSPOSE || n->op == OP_QCONV_TRANSPOSE;
        ConvDims d;
        if (!conv_dims(c, n, tr, &d))
            goto out;
        (tr ? convt_core : conv_core)(&d, x, w, b, y);
        nch = d.M;
        inner = d.w.out[0] * d.w.out[1] * d.w.out[2];
        break;
    }
    case OP_MATMUL: case OP_QMATMUL: {
        MmDims d;
        mm_dims(&ref_in(c, n, 0)->type, &ref_in(c, n, 1)->type, &d);
        mm_core(&d, x, w, b, y);
        nch = d.N;
        break;
    }
    default:
        node_error(g, n, "not implemented in the reference interpreter");
        goto out;
    }
    if (!integer) {
        ok = store_float(c, n, y);
        goto out;
    }
    const QParams *xq = ref_in(c, n, 0)->type.q, *wq = ref_in(c, n, 1)->type.q;
    if (xq->axis >= 0) {
        node_error(g, n, "reference interpreter: operand 0 must be quantized per tensor");
        goto out;
    }
    /* the weight's channel: conv axis 0 = output channel, conv_transpose axis 1 = output
     * channel within its group, matmul last axis = column */
    int64_t wmod = nch;
    if (n->op == OP_QCONV_TRANSPOSE)
        wmod = nch / ir_attr_int(g, n, "group", 1);
    if (wq->axis >= 0 && wq->n != (uint32_t)wmod) {
        node_error(g, n, "weight has %u scales, expected %lld", wq->n, (long long)wmod);
        goto out;
    }
    if (!epi_init(c, n, xq, wq, nch, wmod, &e))
        goto out;
    for (size_t i = 0; i < ny; i++)
        if (!epi_store(c, n, &e, yt, i, y[i], ((int64_t)i / inner) % nch))
            goto out;
    ok = true;
out:
    epi_free(&e);
    free(x);
    free(w);
    free(b);
    free(y);
    return ok;
}
