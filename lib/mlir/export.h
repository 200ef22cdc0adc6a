/* export.h: qdqc IR (after the pipeline) -> MLIR text (tosa, linalg, arith, tensor),
 * internal interface. docs/mlir.md lists what maps to what.
 *
 * The exporter writes text; export.c then parses and verifies it with the MLIR C API, so a
 * module that comes back from exp_mlir is one mlir-opt accepts. Nodes without a mapping get a
 * diagnostic at their location and the export fails; nothing is silently dropped. */
#ifndef QDQC_MLIR_EXPORT_H
#define QDQC_MLIR_EXPORT_H

#include "ir/ir.h"
#include "numerics/numerics.h"

/* The MLIR module for m's graph, or NULL with diagnostics in m's context. Caller frees. */
char *exp_mlir(Module *m);

/* ---- shared by the exporter's files (defined in export_util.c) ---- */
typedef struct Exp {
    Graph *g;
    StrBuf b;       /* function body */
    uint32_t next;  /* last SSA number used (%vN) */
    uint32_t *ssa;  /* per ValueId: SSA number of the value's exported form; 0 = not yet */
    bool failed;
    uint32_t nfailed_nodes; /* nodes without a mapping (each reported) */
    char tbuf[6][256]; /* exp_tt results */
} Exp;

/* Element type of the exported form of e: u8 travels as i8 shifted by -128 (so do its zero
 * point and clamp bounds: exp_shift). NULL if the type has no export. */
const char *exp_et(ElemType e);
int32_t exp_shift(ElemType e);
/* The signless type an unsigned storage type travels as (u8 -> i8, u16 -> i16, u4 -> i4),
 * its values shifted by exp_shift. */
ElemType exp_signless(ElemType e);
void exp_ttype(StrBuf *b, int rank, const int64_t *dims, const char *et);
/* exp_ttype of t's shape with element type et, as a new string (the caller frees it) */
char *exp_ttype_dup(const Type *t, const char *et);
const char *exp_tt(Exp *x, int slot, int rank, const int64_t *dims, const char *et);
#define EXP_TT(x, slot, t) exp_tt((x), (slot), (t)->rank, (t)->dims, exp_et((t)->elem))

uint32_t exp_operand(Exp *x, ValueId v); /* emits a constant on first use; 0 with an error */
bool exp_fail(Exp *x, const Node *n, const char *fmt, ...) QDQC_PRINTF(3, 4);
uint32_t exp_line(Exp *x, const char *fmt, ...) QDQC_PRINTF(2, 3); /* "%vN = " + text */

/* Constants: integers (values[i], or one value broadcast when n == 1 and numel > 1). */
uint32_t exp_const_i(Exp *x, const char *et, int rank, const int64_t *dims, const int64_t *v,
                     size_t n);
uint32_t exp_const_f(Exp *x, int rank, const int64_t *dims, const float *v, size_t n);
uint32_t exp_zp(Exp *x, const char *et, int64_t zp);
uint32_t exp_transpose(Exp *x, uint32_t v, const Type *t, const int64_t *perm, Type *out);
uint32_t exp_reshape(Exp *x, uint32_t v, const Type *t, int rank, const int64_t *dims);
/* tosa.rescale of v (type t, element in_et) to out_et; nch multipliers (per channel over the
 * last axis when nch > 1). */
uint32_t exp_rescale(Exp *x, uint32_t v, const Type *t, const char *in_et, const char *out_et,
                     int64_t nch, const QnFixed *f, int64_t in_zp, int64_t out_zp,
                     bool in_unsigned, bool out_unsigned);
bool exp_fixed(Exp *x, const Node *n, double m, QnFixed *f);
/* tosa.clamp to [lo, hi] (exported units) when narrower than the element type's range. */
uint32_t exp_clamp(Exp *x, uint32_t v, const Type *t, int64_t lo, int64_t hi);

/* linalg.generic: operand i is %a<i> in the body (element type et), the init %out; `body`
 * ends with linalg.yield. init 0: a tensor.empty of out_tt. */
typedef struct ExpIn {
    uint32_t v;
    const char *tt, *map, *et;
} ExpIn;
uint32_t exp_generic(Exp *x, const ExpIn *in, int nin, uint32_t init, const char *out_tt,
                     const char *out_map, const char *out_et, const char *iters,
                     const char *body);
/* affine_map over nd dims with results res[] (dim index, or -1 for the constant 0) */
void exp_map(StrBuf *b, int nd, const int *res, int nres);
/* the map that reads t (numpy-broadcast to y) at y's indices */
void exp_bcast_map(StrBuf *b, const Type *t, const Type *y);

const Type *exp_vtype(Exp *x, ValueId v);
void exp_bind(Exp *x, Node *n, uint32_t id); /* n's (first) result is SSA value id */

static inline bool
per_tensor(const Type *t)
{
    return t->q && t->q->n == 1 && (t->elem == ET_I8 || t->elem == ET_U8);
}

static inline int64_t
zp_of(const Type *t)
{
    return t->q->zp[0] + exp_shift(t->elem);
}

/* The result range [lo, hi] of an integer op in exported units: qmin/qmax narrowed by `clamp`. */
static inline void
out_range(Exp *x, const Node *n, const Type *y, int64_t *lo, int64_t *hi)
{
    int32_t l, h;
    ir_clamp_range(x->g, n, y->q, &l, &h);
    *lo = l + exp_shift(y->elem);
    *hi = h + exp_shift(y->elem);
}

/* export_ops.c: one node, through ops.def's MLIR column; false (diagnostic emitted) if it has
 * no mapping. */
bool exp_node(Exp *x, Node *n);
/* export_float.c: whether every operand and result of n is f32 (else a diagnostic) */
bool exp_all_f32(Exp *x, Node *n);

/* ---- per-op exporters (ops.def's MLIR column) ---- */
/* export_ops.c: quantize / dequantize (per-tensor, per-channel, block-wise), qconv, qmatmul,
 * maxpool and qavgpool */
bool exp_op_quantize(Exp *x, Node *n);
bool exp_op_dequantize(Exp *x, Node *n);
bool exp_op_qconv(Exp *x, Node *n);
bool exp_op_qmatmul(Exp *x, Node *n);
bool exp_op_pool(Exp *x, Node *n);
/* export_elem.c: qadd / qsub / qmul, requantize, lut, layout ops, concat, and add, sub, mul,
 * relu, clip on float values */
bool exp_op_qbinary(Exp *x, Node *n);
bool exp_op_requantize(Exp *x, Node *n);
bool exp_op_lut(Exp *x, Node *n);
bool exp_op_layout(Exp *x, Node *n);
bool exp_op_concat(Exp *x, Node *n);
bool exp_op_float_elem(Exp *x, Node *n);
/* export_float.c: f32 ops of float islands as linalg.generic with qdqc's own arithmetic (f64
 * accumulation, its order) */
bool exp_op_div(Exp *x, Node *n);
bool exp_op_batchnorm(Exp *x, Node *n);
bool exp_op_gemm(Exp *x, Node *n);
bool exp_op_matmul(Exp *x, Node *n);
bool exp_op_global_avgpool(Exp *x, Node *n);
bool exp_op_layernorm(Exp *x, Node *n);
bool exp_op_softmax(Exp *x, Node *n);
bool exp_op_exp(Exp *x, Node *n);
bool exp_op_reduce_mean(Exp *x, Node *n);
bool exp_op_conv(Exp *x, Node *n);
bool exp_op_wmatmul(Exp *x, Node *n);
bool exp_op_unary(Exp *x, Node *n); /* hard_sigmoid, hard_swish, leaky_relu */
/* export_logic.c: cast, comparisons, and / or / xor / not, where, expand, gather */
bool exp_op_cast(Exp *x, Node *n);
bool exp_op_compare(Exp *x, Node *n);
bool exp_op_logic(Exp *x, Node *n);
bool exp_op_where(Exp *x, Node *n);
bool exp_op_expand(Exp *x, Node *n);
bool exp_op_gather(Exp *x, Node *n);

/* lib/numerics/fmath.c's f32 functions as arith ops (export_fmath.c) */
void exp_f32_const(StrBuf *b, const char *name, float f);  /* "%name = arith.constant <bits>" */
void exp_f64_const(StrBuf *b, const char *name, double d);
/* qn_expf of the f32 value %<in> into %<pre>e (every name it defines starts with pre) */
void exp_expf_body(StrBuf *b, const char *in, const char *pre);
bool exp_op_fmath_unary(Exp *x, Node *n); /* sigmoid, tanh, erf, gelu, log */
bool exp_op_fmath_pow(Exp *x, Node *n);
bool exp_op_fmath_simple(Exp *x, Node *n); /* sqrt, reciprocal, neg, abs, round, max, min, prelu */

#endif
