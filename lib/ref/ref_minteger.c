/* ref_minteger.c: the reference of `matmul_integer` (docs/ir.md): ONNX MatMulInteger with its
 * zero points as operands (run-time values or constants), numpy matmul broadcasting, and
 * optionally the f32 epilogue of ONNX Runtime's dynamic quantization (MatMulInteger -> Cast ->
 * Mul by the product of the two scales -> Add of a bias), which the matmul-integer-fold pass
 * puts into the op.
 *     acc[.., m, n] = sum_k (a[.., m, k] - za) * (b[.., k, n] - zb[n])    (int32, modulo 2^32)
 *     y = acc                                       (no scales: an i32 result)
 *     y = qn_scale_acc(acc, sa, sb[n]) [+ bias[n]]  (with scales: f32, lib/numerics/dynamic.h)
 * The sum is taken modulo 2^32, as compiled code's two's-complement adds and ONNX Runtime's
 * int32 accumulators do: exact whenever the true value fits in int32 (docs/numerics.md, "The
 * int32 accumulator"). */
#include "ref_impl.h"

#include "numerics/dynamic.h"

/* Element j of an operand holding one value or one per column (per tensor / per column). */
static int64_t
col_i(const RefTensor *t, int64_t j)
{
    return t ? ref_get_i(t, ref_numel(t) == 1 ? 0 : (size_t)j) : 0;
}

static float
col_f(const RefTensor *t, int64_t j)
{
    return (float)ref_get_f(t, ref_numel(t) == 1 ? 0 : (size_t)j);
}

bool
ref_op_matmul_integer(RefCtx *c, Node *n)
{
    const RefTensor *a = ref_in(c, n, 0), *b = ref_in(c, n, 1), *za = ref_in(c, n, 2);
    const RefTensor *zb = ref_in(c, n, 3), *sa = ref_in(c, n, 4), *sb = ref_in(c, n, 5);
    const RefTensor *bias = ref_in(c, n, 6);
    RefTensor *y = ref_out(c, n, 0);
    Type a2, b2;
    ir_matmul_promote(&a->type, &b->type, &a2, &b2);
    int64_t M = a2.dims[a2.rank - 2], K = a2.dims[a2.rank - 1], N = b2.dims[b2.rank - 1];
    Type ba = a2, bb = b2, batch;
    ba.rank -= 2;
    bb.rank -= 2;
    if (!shape_broadcast(&ba, &bb, &batch)) {
        node_error(c->g, n, "batch dimensions do not broadcast");
        return false;
    }
    int64_t sta[IR_MAX_RANK], stb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    type_bcast_strides(&ba, &batch, sta);
    type_bcast_strides(&bb, &batch, stb);
    int32_t zav = (int32_t)col_i(za, 0);
    size_t nb = type_numel_unchecked(&batch);
    for (size_t t = 0; t < nb; t++) {
        int64_t oa = 0, ob = 0;
        for (int i = 0; i < batch.rank; i++) {
            oa += idx[i] * sta[i];
            ob += idx[i] * stb[i];
        }
        oa *= M * K;
        ob *= K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int32_t zbv = (int32_t)col_i(zb, j);
                uint32_t acc = 0; /* modulo 2^32; each product fits int32 (|.| <= 255 * 255) */
                for (int64_t k = 0; k < K; k++) {
                    int32_t av = (int32_t)ref_get_i(a, (size_t)(oa + i * K + k));
                    int32_t bv = (int32_t)ref_get_i(b, (size_t)(ob + k * N + j));
                    acc += (uint32_t)((av - zav) * (bv - zbv));
                }
                size_t o = (size_t)(((int64_t)t * M + i) * N + j);
                if (!sa) {
                    ref_set_i(y, o, (int32_t)acc);
                    continue;
                }
                float v = qn_scale_acc((int32_t)acc, col_f(sa, 0), col_f(sb, j));
                if (bias)
                    v = v + col_f(bias, j);
                ref_set_f(y, o, v);
            }
        type_next_index(&batch, idx);
    }
    return true;
}
