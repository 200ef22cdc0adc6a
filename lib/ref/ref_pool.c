/* ref_pool.c: reference pools (maxpool on any element type, with ONNX's Indices as an optional
 * second result; avgpool with ceil_mode and count_include_pad, global_avgpool), qavgpool (sum
 * of x - zx over the counted window, then qn_qavg, or qn_qavg_fixed under --requant=fixed, of
 * lib/numerics/elementwise.h) and resize
 * (nearest and linear; coordinate transformation modes half_pixel, asymmetric, align_corners,
 * pytorch_half_pixel; nearest modes round_prefer_floor, round_prefer_ceil, floor, ceil),
 * following the ONNX reference implementation (coordinates in double, linear interpolation with
 * edge clamping). */
#include "ref/ref_impl.h"

#include "numerics/elementwise.h"
#include "numerics/numerics.h"

#include <math.h>
#include <string.h>

bool
ref_op_pool(RefCtx *c, Node *n)
{
    Graph *g = c->g;
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    bool qavg = n->op == OP_QAVGPOOL;
    bool global = n->op == OP_GLOBAL_AVGPOOL || (qavg && ir_attr_int(g, n, "global", 0) != 0);
    float sx = 0, sy = 0;
    int32_t zx = 0, zy = 0, lo = 0, hi = 0;
    if (qavg && (!ref_int_operand(c, n, 0, &sx, &zx) || !ref_int_range(c, n, &zy, &sy, &lo, &hi)))
        return false;
    int64_t ks[IR_MAX_RANK] = {1, 1, 1};
    IrWindow w;
    if (global) {
        if (x->type.rank < 3 || x->type.rank > 5) {
            node_error(g, n, "reference interpreter: rank %d is not supported", x->type.rank);
            return false;
        }
        memset(&w, 0, sizeof w);
        w.ns = x->type.rank - 2;
        for (int i = 0; i < 3; i++) {
            w.in[i] = w.k[i] = i < w.ns ? x->type.dims[2 + i] : 1;
            w.out[i] = w.s[i] = w.d[i] = 1;
        }
    } else {
        if (ir_attr_ints(g, n, "kernel_shape", ks, IR_MAX_RANK) < 0)
            return false;
        if (!ref_window(c, n, &x->type, &y->type, ks, &w))
            return false;
    }
    bool is_max = n->op == OP_MAXPOOL;
    if (!is_max && !qavg && x->type.elem != ET_F32)
        return ref_f32_in(c, n, 0) != NULL;
    /* maxpool's result 1: the index of each maximum in x, row-major or (storage_order=1)
     * column-major over the spatial axes, plus the batch/channel offset p * isp (ONNX) */
    RefTensor *yi_t = is_max && n->nout > 1 ? ref_out(c, n, 1) : NULL;
    bool colmajor = ir_attr_int(g, n, "storage_order", 0) != 0;
    bool incl = ir_attr_int(g, n, "count_include_pad", 0) != 0;
    /* --requant=fixed: the multiplier of every divisor a window can have, 1..kernel size (a
     * global pool: only the full size), derived up front as the code generator's table, so
     * both refuse the same nodes */
    QnFixed *fix = NULL;
    if (qavg && c->requant_fixed) {
        int64_t kmax = w.k[0] * w.k[1] * w.k[2];
        fix = xcalloc((size_t)kmax + 1, sizeof *fix);
        int bits = ref_int_bits(c, n, 0);
        for (int64_t d = global ? kmax : 1; d <= kmax; d++)
            if (!ref_fixed_ok(c, n, qn_qavg_fixed_params(sx, sy, d, bits, &fix[d]))) {
                free(fix);
                return false;
            }
    }
    int64_t NC = x->type.dims[0] * x->type.dims[1];
    int64_t isp = w.in[0] * w.in[1] * w.in[2], osp = w.out[0] * w.out[1] * w.out[2];
    size_t es = elem_size(x->type.elem);
    bool fl = elem_is_float(x->type.elem);
    /* the compared and summed values: x, or x - zx for an integer type */
    size_t nx = ref_numel(x);
    double *xv = xmalloc((nx ? nx : 1) * sizeof(double));
    for (size_t i = 0; i < nx; i++)
        xv[i] = fl ? ref_get_f(x, i) : (double)(ref_get_i(x, i) - zx);
    for (int64_t p = 0; p < NC; p++)
        for (int64_t o0 = 0; o0 < w.out[0]; o0++)
            for (int64_t o1 = 0; o1 < w.out[1]; o1++)
                for (int64_t o2 = 0; o2 < w.out[2]; o2++) {
                    int64_t o[3] = {o0, o1, o2};
                    double sum = 0, best = -INFINITY;
                    int64_t besti = -1, cnt = 0, padcnt = 1;
                    /* count_include_pad: taps inside [-pb, in + pe) on each axis */
                    for (int a = 0; a < 3; a++) {
                        int64_t taps = 0;
                        for (int64_t k = 0; k < w.k[a]; k++) {
                            int64_t i = o[a] * w.s[a] - w.pb[a] + k * w.d[a];
                            taps += i >= -w.pb[a] && i < w.in[a] + w.pe[a];
                        }
                        padcnt *= taps;
                    }
                    for (int64_t k0 = 0; k0 < w.k[0]; k0++) {
                        int64_t i0 = o0 * w.s[0] - w.pb[0] + k0 * w.d[0];
                        if (i0 < 0 || i0 >= w.in[0])
                            continue;
                        for (int64_t k1 = 0; k1 < w.k[1]; k1++) {
                            int64_t i1 = o1 * w.s[1] - w.pb[1] + k1 * w.d[1];
                            if (i1 < 0 || i1 >= w.in[1])
                                continue;
                            for (int64_t k2 = 0; k2 < w.k[2]; k2++) {
                                int64_t i2 = o2 * w.s[2] - w.pb[2] + k2 * w.d[2];
                                if (i2 < 0 || i2 >= w.in[2])
                                    continue;
                                int64_t xi = p * isp + (i0 * w.in[1] + i1) * w.in[2] + i2;
                                double v = xv[xi];
                                sum += v;
                                cnt++;
                                if (besti < 0 || v > best || v != v) {
                                    best = v;
                                    besti = xi;
                                }
                            }
                        }
                    }
                    int64_t yi = p * osp + (o0 * w.out[1] + o1) * w.out[2] + o2;
                    if (is_max) {
                        if (besti < 0) {
                            node_error(g, n, "pooling window %lld covers only padding",
                                       (long long)yi);
                            free(xv);
                            free(fix);
                            return false;
                        }
                        memcpy((char *)y->data + (size_t)yi * es,
                               (const char *)x->data + (size_t)besti * es, es);
                        if (yi_t) {
                            int64_t s = besti - p * isp, idx = besti;
                            if (colmajor)
                                idx = p * isp + s / (w.in[1] * w.in[2]) +
                                      (s / w.in[2] % w.in[1]) * w.in[0] +
                                      s % w.in[2] * w.in[0] * w.in[1];
                            ((int64_t *)yi_t->data)[yi] = idx;
                        }
                    } else if (qavg) {
                        /* integer sums below 2^53 are exact in the double accumulator */
                        int64_t div = incl ? padcnt : cnt;
                        int32_t r = !fix ? qn_qavg((int64_t)sum, div, sx, sy, zy, lo, hi)
                                    : div <= 0 ? qn_saturate(zy, lo, hi)
                                               : qn_qavg_fixed((int64_t)sum, fix[div], zy, lo, hi);
                        ref_set_i(y, (size_t)yi, r);
                    } else {
                        int64_t div = incl ? padcnt : cnt;
                        ((float *)y->data)[yi] = div ? (float)(sum / (double)div) : 0.0f;
                    }
                }
    free(xv);
    free(fix);
    return true;
}

bool
ref_op_resize(RefCtx *c, Node *n)
{
    Graph *g = c->g;
    const RefTensor *x = ref_in(c, n, 0);
    RefTensor *y = ref_out(c, n, 0);
    const Type *xt = &x->type, *yt = &y->type;
    ResizeSpec rs;
    char why[160];
    const char *bad = ir_resize_spec(g, n, &rs, why, sizeof why);
    if (bad) {
        node_error(g, n, "reference interpreter: %s", bad);
        return false;
    }
    bool linear = rs.linear;
    size_t ny = ref_numel(y);
    int r = xt->rank;
    if (!linear) {
        /* per-axis source index tables, then a gather */
        int64_t *tab[IR_MAX_RANK] = {0};
        for (int a = 0; a < r; a++) {
            tab[a] = xmalloc((size_t)yt->dims[a] * sizeof(int64_t));
            for (int64_t o = 0; o < yt->dims[a]; o++)
                tab[a][o] = ir_resize_inside(&rs, a, o, xt->dims[a], yt->dims[a])
                                ? ir_resize_nearest_src(&rs, a, o, xt->dims[a], yt->dims[a])
                                : -1;
        }
        int64_t xs[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
        type_strides(xt, xs);
        size_t es = elem_size(xt->elem);
        for (size_t i = 0; i < ny; i++) {
            int64_t src = 0;
            bool inside = true;
            for (int a = 0; a < r; a++) {
                src += tab[a][idx[a]] * xs[a];
                inside = inside && tab[a][idx[a]] >= 0;
            }
            if (inside)
                memcpy((char *)y->data + i * es, (const char *)x->data + (size_t)src * es,
                       es);
            else if (elem_is_float(yt->elem))
                ref_set_f(y, i, rs.extrapolation);
            else
                ref_set_i(y, i, (int64_t)rs.extrapolation);
            type_next_index(yt, idx);
        }
        for (int a = 0; a < r; a++)
            free(tab[a]);
        return true;
    }
    if (xt->elem != ET_F32)
        return ref_f32_in(c, n, 0) != NULL;
    /* linear: separable, one axis at a time in double */
    size_t nx = ref_numel(x);
    Type cur = *xt;
    double *buf = xmalloc((nx ? nx : 1) * sizeof(double));
    for (size_t i = 0; i < nx; i++)
        buf[i] = ((const float *)x->data)[i];
    for (int a = 0; a < r; a++) {
        if (ir_resize_identity(&rs, a, cur.dims[a], yt->dims[a]))
            continue;
        Type nt = cur;
        nt.dims[a] = yt->dims[a];
        size_t nn = type_numel_unchecked(&nt);
        double *nb = xmalloc((nn ? nn : 1) * sizeof(double));
        int64_t outer = 1, inner = 1, lin = cur.dims[a], lout = nt.dims[a];
        for (int d = 0; d < a; d++)
            outer *= cur.dims[d];
        for (int d = a + 1; d < r; d++)
            inner *= cur.dims[d];
        for (int64_t o = 0; o < lout; o++) {
            int64_t i0, i1;
            double t;
            ir_resize_linear_src(&rs, a, o, lin, lout, &i0, &i1, &t);
            for (int64_t p = 0; p < outer; p++)
                for (int64_t q = 0; q < inner; q++)
                    nb[(p * lout + o) * inner + q] = buf[(p * lin + i0) * inner + q] * (1 - t) +
                                                     buf[(p * lin + i1) * inner + q] * t;
        }
        free(buf);
        buf = nb;
        cur = nt;
    }
    /* tf_crop_and_resize: samples outside the input on any axis take the extrapolation value */
    int64_t idx[IR_MAX_RANK] = {0};
    for (size_t i = 0; i < ny; i++) {
        bool inside = true;
        for (int a = 0; a < r && inside; a++)
            inside = ir_resize_inside(&rs, a, idx[a], xt->dims[a], yt->dims[a]);
        ((float *)y->data)[i] = inside ? (float)buf[i] : rs.extrapolation;
        type_next_index(yt, idx);
    }
    free(buf);
    return true;
}
