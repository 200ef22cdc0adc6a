/* ref_wonly.c: the reference of `wmatmul` (weight-only matmul: float activations times
 * constant 4- or 8-bit weights, dequantized per column or per block of rows; docs/ir.md).
 *
 * Its summation order is part of the op's definition, so that the JIT kernel
 * (lib/codegen/lower/float_wonly.c) and this loop agree bit for bit on every target: for each
 * result element (row m, column n) and each block b of block_size rows of w (one block of K
 * rows without block_size),
 *     acc   = 0;  for k in the block, in increasing order:
 *                 acc = fmaf(x[m, k], (float)(w[k, n] - zp[b, n]), acc)
 *     total = fmaf(acc, scale[b, n], total)        (total starts at 0, blocks in order)
 * and y[m, n] = total + bias[n] (one f32 addition; none without a bias). Every step is one
 * correctly rounded f32 operation (fmaf: a fused multiply-add, rounded once), which the kernel
 * performs with the same fused vector instructions lane by lane. Compared with ONNX's
 * dequantize-then-matmul (each weight rounded to f32 after the scale, products summed in any
 * order) the result differs only by f32 rounding: |y - exact| <= about (K + 2) * 2^-24 *
 * sum_k |x[m,k] * (w[k,n] - zp) * scale| (docs/numerics.md). */
#include "ref_impl.h"

#include <math.h>
#include <string.h>

#include "numerics/dynamic.h"

/* acts="i8" (--weight-only=int8-acts; docs/numerics.md, "int8 activations"): each row m of x
 * is quantized to int8 with its own scale s = qn_row_scale_i8(max |x[m, k]|) (NaN ignored), q
 * = qn_quantize_row_i8(x, s); then, exactly in int32, acc = sum_k q[m, k] * (w[k, n] - zp[n])
 * (the weight-only pass made sure no column can overflow), and
 * y = qn_scale_acc(acc, s, scale[n]) [+ bias[n]]: f32 products in that order, one addition. */
static void
wmatmul_i8(const RefTensor *wt, const RefTensor *zt, const float *x, const float *s,
           const float *bias, int64_t M, int64_t K, int64_t N, float *y)
{
    int32_t *q = xmalloc((size_t)(K ? K : 1) * sizeof *q);
    for (int64_t m = 0; m < M; m++) {
        float amax = 0;
        for (int64_t k = 0; k < K; k++) {
            float a = fabsf(x[m * K + k]);
            amax = a > amax ? a : amax;
        }
        float rs = qn_row_scale_i8(amax);
        for (int64_t k = 0; k < K; k++)
            q[k] = qn_quantize_row_i8(x[m * K + k], rs);
        for (int64_t j = 0; j < N; j++) {
            int32_t zp = zt ? (int32_t)ref_get_i(zt, (size_t)j) : 0;
            int64_t acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (int64_t)q[k] * ((int32_t)ref_get_i(wt, (size_t)(k * N + j)) - zp);
            float v = qn_scale_acc((int32_t)(uint32_t)(uint64_t)acc, rs, s[j]); /* mod 2^32 */
            y[m * N + j] = bias ? v + bias[j] : v;
        }
    }
    free(q);
}

bool
ref_op_wmatmul(RefCtx *c, Node *n)
{
    Graph *g = c->g;
    const float *x = ref_f32_in(c, n, 0);
    const float *s = x ? ref_f32_in(c, n, 2) : NULL;
    const float *bias = ref_in(c, n, 4) ? ref_f32_in(c, n, 4) : NULL;
    float *y = s ? ref_f32_out(c, n, 0) : NULL;
    if (!y || (ref_in(c, n, 4) && !bias))
        return false;
    const RefTensor *wt = ref_in(c, n, 1), *zt = ref_in(c, n, 3);
    ElemType we = wt->type.elem;
    if ((we != ET_I8 && we != ET_U8 && we != ET_I4 && we != ET_U4) || wt->type.rank != 2) {
        node_error(g, n, "reference interpreter: the weight must be an i8, u8, i4 or u4 matrix");
        return false;
    }
    int64_t K = wt->type.dims[0], N = wt->type.dims[1];
    int64_t bs = ir_attr_int(g, n, "block_size", 0);
    if (bs <= 0)
        bs = K;
    int64_t G = K ? (K + bs - 1) / bs : 0;
    const RefTensor *xt = ref_in(c, n, 0);
    int64_t M = K ? (int64_t)(ref_numel(xt) / (size_t)K) : 0;
    if (strcmp(ir_attr_string(g, n, "acts", "f32"), "i8") == 0) {
        wmatmul_i8(wt, zt, x, s, bias, M, K, N, y);
        return true;
    }
    for (int64_t m = 0; m < M; m++)
        for (int64_t j = 0; j < N; j++) {
            float total = 0;
            for (int64_t b = 0; b < G; b++) {
                int64_t k1 = (b + 1) * bs < K ? (b + 1) * bs : K;
                int32_t zp = zt ? (int32_t)ref_get_i(zt, (size_t)(b * N + j)) : 0;
                float acc = 0;
                for (int64_t k = b * bs; k < k1; k++) {
                    int32_t w = (int32_t)ref_get_i(wt, (size_t)(k * N + j));
                    acc = fmaf(x[m * K + k], (float)(w - zp), acc);
                }
                total = fmaf(acc, s[b * N + j], total);
            }
            y[m * N + j] = bias ? total + bias[j] : total;
        }
    return true;
}

/* wconv: for each result element (image, output channel m, output position), with the
 * group's input channels c and the kernel taps in increasing order (c, then each spatial
 * axis), taps outside the input skipped:
 *     acc = 0;  acc = fmaf(x[tap], (float)(w[m, c, tap] - zp[m]), acc)
 *     y   = acc * scale[m]        (one f32 multiplication)
 *     y   = y + bias[m]           (one f32 addition; none without a bias)
 * (docs/ir.md). A skipped tap and a tap that adds fmaf(0, w, acc) give the same bits: acc
 * starts at +0 and round-to-nearest never makes it -0, and acc + (+-0) = acc. */
bool
ref_op_wconv(RefCtx *c, Node *n)
{
    Graph *g = c->g;
    const float *x = ref_f32_in(c, n, 0);
    const float *s = x ? ref_f32_in(c, n, 2) : NULL;
    const float *bias = ref_in(c, n, 4) ? ref_f32_in(c, n, 4) : NULL;
    float *y = s ? ref_f32_out(c, n, 0) : NULL;
    if (!y || (ref_in(c, n, 4) && !bias))
        return false;
    const RefTensor *xt = ref_in(c, n, 0), *wt = ref_in(c, n, 1), *zt = ref_in(c, n, 3);
    const Type *yt = &ref_out(c, n, 0)->type;
    IrWindow W;
    char why[128];
    if (ir_window(g, n, &xt->type, yt, wt->type.dims + 2, &W, why, sizeof why)) {
        node_error(g, n, "reference interpreter: %s", why);
        return false;
    }
    int64_t N = xt->type.dims[0], C = xt->type.dims[1], M = wt->type.dims[0];
    int64_t G = ir_attr_int(g, n, "group", 1), Cg = C / G, Mg = M / G;
    int64_t isp = W.in[0] * W.in[1] * W.in[2], osp = W.out[0] * W.out[1] * W.out[2];
    int64_t ksp = W.k[0] * W.k[1] * W.k[2];
    int64_t o[3], kk[3], i[3];
    for (int64_t nb = 0; nb < N; nb++)
        for (int64_t m = 0; m < M; m++) {
            int32_t zp = zt ? (int32_t)ref_get_i(zt, (size_t)m) : 0;
            const float *xg = x + (nb * C + (m / Mg) * Cg) * isp;
            float *ym = y + (nb * M + m) * osp;
            for (o[0] = 0; o[0] < W.out[0]; o[0]++)
                for (o[1] = 0; o[1] < W.out[1]; o[1]++)
                    for (o[2] = 0; o[2] < W.out[2]; o[2]++) {
                        float acc = 0;
                        for (int64_t ci = 0; ci < Cg; ci++)
                            for (kk[0] = 0; kk[0] < W.k[0]; kk[0]++)
                                for (kk[1] = 0; kk[1] < W.k[1]; kk[1]++)
                                    for (kk[2] = 0; kk[2] < W.k[2]; kk[2]++) {
                                        bool in = true;
                                        for (int d = 0; d < 3; d++) {
                                            i[d] = o[d] * W.s[d] - W.pb[d] + kk[d] * W.d[d];
                                            in = in && i[d] >= 0 && i[d] < W.in[d];
                                        }
                                        if (!in)
                                            continue;
                                        size_t wi = (size_t)((m * Cg + ci) * ksp + (kk[0] * W.k[1] + kk[1]) * W.k[2] + kk[2]);
                                        int32_t wv = (int32_t)ref_get_i(wt, wi) - zp;
                                        acc = fmaf(xg[ci * isp + (i[0] * W.in[1] + i[1]) * W.in[2] + i[2]],
                                                   (float)wv, acc);
                                    }
                        float v = acc * s[m];
                        ym[(o[0] * W.out[1] + o[1]) * W.out[2] + o[2]] = bias ? v + bias[m] : v;
                    }
        }
    return true;
}
