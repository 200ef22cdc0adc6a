/* pass.h: the pass manager's interface (internal).
 * A pass is a function that rewrites one graph into a better one and returns whether it
 * changed anything. Errors are reported as diagnostics and set pc->failed. After every pass
 * the manager compacts the graph (drops dead nodes, restores topological order) and, with
 * --verify-each, runs the verifier. Each pass lives in its own file with a header comment
 * saying what it rewrites and why; passes.def lists them. */
#ifndef QDQC_PASS_H
#define QDQC_PASS_H

#include "ir/ir.h"

typedef struct PassCtx {
    qdqc_context *ctx;
    Module *m;
    const QdqcOptions *opt;
    bool failed;
} PassCtx;

typedef bool (*PassFn)(PassCtx *pc, Graph *g);

typedef struct PassInfo {
    const char *name;
    PassFn fn;
    const char *description;
} PassInfo;

#define PASS(NAME, FN, DESC) bool FN(PassCtx *pc, Graph *g);
#include "passes.def"
#undef PASS

const PassInfo *pass_lookup(const char *name);
size_t pass_count(void);
const PassInfo *pass_at(size_t i);
/* The default pipeline: a comma-separated list of pass names. */
const char *pass_default_pipeline(void);
/* Run a comma-separated pipeline ("default" expands). False on error (diagnostics in ctx). */
bool pass_run_pipeline(Module *m, const char *pipeline);

/* Whether node n is one the user keeps in float (context option "keep-float", a comma list
 * of ONNX node names): the passes that turn float ops into integer ones (qdq-fold,
 * qdq-elementwise, lut, weight-only) leave such a node as written, its dequantizes and
 * quantizes explicit. */
bool pass_keep_float(const PassCtx *pc, const Node *n);
/* Warn for every keep-float name that names no node of m (a typo the user should hear about). */
void pass_check_keep_float(Module *m);
/* Whether name is one of the comma-separated list's entries (list may be NULL). */
bool pass_in_list(const char *list, const char *name);

/* ---- pattern helpers for the QDQ passes (qdq_match.c) ---- */
void qm_uses(Graph *g);
/* The id of a node pointer (pointers move when nodes are added; ids do not). */
static inline NodeId qm_id(Graph *g, const Node *n) { return (NodeId){n ? (uint32_t)(n - g->nodes.data) : 0}; }
static inline Node *qm_node(Graph *g, NodeId id) { return id.id ? ir_node(g, id) : NULL; }                       /* refill use lists if stale */
Node *qm_def_op(Graph *g, ValueId v, OpKind op); /* live def of v if it is `op` */
bool qm_is_8bit(ElemType e);
Node *qm_dq8(Graph *g, ValueId v);            /* static dequantize of an i8/u8 value defining v */
bool qm_is_16bit(ElemType e);
/* Static dequantize of an activation the integer ops take: i8/u8, or i16/u16 (16-bit
 * activations: qconv/qmatmul with 8-bit weights and an int64 accumulator, element-wise ops). */
Node *qm_dq_act(Graph *g, ValueId v);
/* The one node using v (NULL: several uses, none, or a graph output); *index = operand. */
Node *qm_only_user(Graph *g, ValueId v, uint32_t *index);
float qm_scale_at(const QParams *q, int64_t c);
int32_t qm_zp_at(const QParams *q, int64_t c);
bool qm_zp_uniform(const QParams *q);
Tensor *qm_tensor_retype(Module *m, const Tensor *t, const QParams *q); /* shares the data */
/* Give the integer value v the quantization q (and every value joined to it by layout ops);
 * false, changing nothing, if some value already means something else. */
bool qm_annotate(Graph *g, ValueId v, const QParams *q);
/* A rewrite drops the quantize (parameters q) that defines y and gives y's place to integers
 * carrying q: result 0 of node r (qm_take_quantized, which returns the value carrying q) or
 * the value x (qm_replace_quantized). When y's integers are read with other parameters (a
 * dequantize with its own scale, zero point or axis, directly or through layout ops: ONNX
 * lets the Q and the DQ after it differ), y cannot carry q: y becomes `cast x` to its own
 * element type instead, the same integers as plain values, which each reader reads with its
 * own parameters. Never reuse q for such a reader. */
ValueId qm_take_quantized(Graph *g, NodeId r, ValueId y, const QParams *q, Loc loc);
void qm_replace_quantized(Graph *g, ValueId y, ValueId x, const QParams *q, Loc loc);
bool qm_const_scalar(Graph *g, ValueId v, double *out);
/* Float bounds of a relu / clip (attributes or constant operands); false otherwise. */
bool qm_act_bounds(Graph *g, Node *act, float *lo, float *hi);
/* The bounds in the quantized units of yq (per tensor). */
void qm_act_clamp(const QParams *yq, float lo, float hi, int32_t *qlo, int32_t *qhi);
/* Set clamp=[lo, hi] on n unless it is the whole range of yq. */
void qm_set_clamp(Graph *g, NodeId n, const QParams *yq, int32_t lo, int32_t hi);
/* New dequantize / quantize nodes with static parameters q. */
ValueId qm_add_dq(Graph *g, ValueId in, const QParams *q, const char *name, Loc loc);
ValueId qm_add_q(Graph *g, ValueId in, const QParams *q, const char *name, Loc loc);
void qm_const_set(Graph *g, ValueId v, Tensor *t); /* new tensor (and type) of a const */
void qm_copy_attrs(Graph *g, NodeId to, NodeId from, const char *const *skip);
/* Float biases. qm_out_scale: the smallest scale of the quantizes (per-axis: their smallest
 * scale) that receive v directly or through ops that pass an additive error of v on unchanged
 * or smaller (relu, clip, add, sub, layout ops); 0 if no quantize is reached.
 * qm_quantize_bias: bq[c] = qn_quantize_bias(b[c], sx, sw[c]); returns the largest rounding
 * error |b[c] - bq[c] * (sx*sw[c])| in units of sy (0 when sy is 0). */
float qm_out_scale(Graph *g, ValueId v);
/* The int32 accumulator of n (qconv, qconv_transpose, qmatmul, or the integer form of a conv,
 * conv_transpose, matmul, gemm) with
 * input x (parameters qx, per tensor) and weight w (qw): bnd[c] >= |sum of the products| of
 * every result of output channel c, for any input. With a constant w, max|x - zx| * sum over
 * the channel's weights of |w - zw[c]| (padding reads the zero point); otherwise
 * K * max|x - zx| * max|w - zw|. The bias comes on top (docs/numerics.md, int32 accumulator). */
void qm_acc_bound(Graph *g, const Node *n, ValueId w, const QParams *qx, const QParams *qw,
                  int64_t m, double *bnd);
double qm_quantize_bias(const float *b, float sx, const float *sw, int64_t m, float sy, int32_t *bq);
/* The largest rounding error, in output steps, that a bias folded into an integer op may have:
 * beyond it the bias stays float (weight-fold, qdq-fold; docs/passes.md). */
#define QM_BIAS_MAX_STEPS 0.5
/* Keep a bias exact in float: op(x, w, b) becomes add(op(x, w), b') with bf[m] the f32 bias
 * values (Gemm: times beta), shaped [1, m, 1, ...] (Conv, ConvTranspose) or [m] (Gemm); the
 * add keeps the op's result value. The caller says why (remark). */
void qm_bias_to_add(Graph *g, NodeId nid, const float *bf, int64_t m);
/* Why a node still computes in float after the pipeline ("no integer rule", "input 1 not
 * quantized"); NULL for nodes that are not float compute (float_islands.c). */
const char *pass_float_reason(Graph *g, Node *n, char *buf, size_t len);

#endif
