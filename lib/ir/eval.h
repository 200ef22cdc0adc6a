/* eval.h: the arithmetic of the comparison, logic, selection, broadcasting, range, reduction
 * and cast ops (docs/ir.md, "Comparisons, selection and reductions") on whole tensors. One
 * definition, called by constant folding (fold.c) and by the reference interpreter
 * (lib/ref/ref_select.c); the code generator (lib/codegen/lower/select.c, reduce.c and
 * float_elem.c's cast) reproduces it operation for operation, so the three agree bit for bit.
 * Internal to lib/ir, lib/ref and lib/codegen. */
#ifndef QDQC_IR_EVAL_H
#define QDQC_IR_EVAL_H

#include "ir.h"

/* ir_eval computes equal, less, less_equal, greater, greater_equal, not, and, or, xor, where,
 * expand, tile, range, reduce_sum, reduce_max, reduce_min, argmax and cast (the ops whose
 * FOLD column in ops.def is move, eval or isum, and the reference's selections).
 * n's results out[0..nout) (allocated with n's result types) from its operands in[0..nin)
 * (NULL for an absent one), typed as n's operands. False with the reason in err. */
bool ir_eval(Graph *g, const Node *n, const Tensor *const *in, Tensor *const *out, char *err,
             size_t len);

/* reduce_sum / reduce_max / reduce_min: red[d] for every reduced axis of a rank-r operand
 * ('axes', default all; negative counts from the end). False if an axis is out of range. */
bool ir_reduce_mask(const Graph *g, const Node *n, int rank, bool *red);
/* A reduction of operand type t by n's 'axes' (any op with that attribute: reduce_*, the means)
 * split into what every engine's loops need: the mask, the kept and the reduced axes in order
 * with their sizes and the operand's element strides (kst[0], rst[0]) and the dense result's
 * strides over the kept axes (kst[1]), per operand axis the result's stride (ost: 0 on a
 * reduced axis), the elements per result (cnt), the results (nkept), and whether the reduced
 * axes are the trailing ones. False if an axis is out of range. */
typedef struct IrReduceSplit {
    bool red[IR_MAX_RANK];
    int nk, nr;
    int64_t kd[IR_MAX_RANK], rd[IR_MAX_RANK];
    int64_t kst[2][IR_MAX_RANK], rst[1][IR_MAX_RANK];
    int64_t ost[IR_MAX_RANK];
    int64_t cnt, nkept;
    bool trailing;
} IrReduceSplit;
bool ir_reduce_split(const Graph *g, const Node *n, const Type *t, IrReduceSplit *s);
/* The float reduce_sum order: the k-th element of an output's reduced elements (row-major over
 * the reduced axes) is added in double to partial sum k mod IR_SUM_LANES (each starting at
 * -0.0, the neutral element), and the partials combine as ((p0+p4)+(p2+p6))+((p1+p5)+(p3+p7));
 * an empty sum is +0.0. The result is rounded once to the element type; a NaN result is the
 * canonical quiet NaN (as for reduce_max / reduce_min). */
enum { IR_SUM_LANES = 8 };
double ir_sum_combine(const double *p);

/* range: the element count max(ceil((limit - start) / delta), 0) of scalar operands of one
 * type (f32, f64: in that type's arithmetic; i16, i32, i64: exact); false with the reason. */
bool ir_range_count(const Tensor *start, const Tensor *limit, const Tensor *delta,
                    int64_t *count, char *err, size_t len);

/* cast of x[i] into y[j] (docs/ir.md, "cast"): floats to floats rounded once to nearest even;
 * integers to floats likewise (i64 -> f32 directly); floats to integers truncated toward
 * zero, NaN -> 0, beyond the int64 range -> its bounds, then wrapped to the target's width;
 * integers to integers wrapped; anything to bool: != 0 (NaN -> true); bool is 0 or 1. */
void ir_cast_elem(const Tensor *x, size_t i, Tensor *y, size_t j);
/* f64 -> f16 bits, rounded once to nearest even (the direct conversion). */
uint16_t ir_f64_to_f16(double d);

/* The ops the ONNX reader imports only on constant operands and evaluates there (ONNX
 * semantics; results typed and allocated by the caller, y's type fixes the result):
 *  - mod: y = a mod b with numpy broadcasting; fmod false: the remainder takes the divisor's
 *    sign (Python's %, numpy.mod; floats: fmod, then + b in the element type when the signs
 *    differ, a zero result taking b's sign); fmod true: C's fmod / truncated remainder (the
 *    dividend's sign; exact for floats). An integer division by zero is an error.
 *  - scatter_nd: y = data, then for each index tuple of `indices` (its last dimension k,
 *    negative entries counting from the end) the slice data[idx] is replaced by (reduction
 *    "none") or combined with (add, mul, max, min: in the element type, wrapping integers)
 *    the matching slice of updates; an index out of range is an error.
 *  - trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix of the last
 *    two dimensions, zeros elsewhere. */
bool ir_eval_mod(const Tensor *a, const Tensor *b, bool fmod_, Tensor *y, char *err, size_t len);
bool ir_eval_scatter_nd(const Tensor *data, const Tensor *indices, const Tensor *updates,
                        const char *reduction, Tensor *y, char *err, size_t len);
void ir_eval_trilu(const Tensor *x, int64_t k, bool upper, Tensor *y);

#endif
