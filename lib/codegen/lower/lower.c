/* lower.c: the per-node dispatch: which emitter lowers a node, its scratch size and
 * which of its operands are compile-time constants, read from ops.def's LOWER, SCRATCH and
 * STATIC columns; the emitters of ops with more than one lowering choose theirs here. The
 * helpers the emitters share (irb/kb.c) live apart, so the emitters depend on them and this
 * file on the emitters, with no loop. */
#include "codegen/lower/float_math.h"
#include "codegen/lower/lower.h"
#include "codegen/lower/qmatmul_rt.h"

/* ---- scratch (SCRATCH column: cg_<S>_scratch) ---- */

static int64_t
cg_none_scratch(Kb *k, Node *n)
{
    (void)k;
    (void)n;
    return 0;
}

static int64_t
cg_qmatmul_scratch(Kb *k, Node *n)
{
    if (cg_qmatmul_rt_ok(k, n)) /* run-time B: qmatmul_rt.c */
        return cg_qmatmul_rt_scratch(k, n);
    return cg_linear_scratch(k, n);
}

static int64_t
cg_fconvt_scratch(Kb *k, Node *n)
{
    if (cg_float_conv_ok(k, n))
        return cg_float_conv_scratch(k, n);
    return cg_float_linear_scratch(k, n);
}

/* ---- compile-time operands (STATIC column: cg_<S>_static) ---- */

static bool
cg_none_static(Kb *k, Node *n, uint32_t i)
{
    (void)k;
    (void)n;
    (void)i;
    return false;
}

static bool
cg_wpacked_static(Kb *k, Node *n, uint32_t i)
{
    (void)k;
    (void)n;
    return i >= 1; /* packed at compile time (float_wonly.c, float_wconv.c) */
}

static bool
cg_qmatmul_static(Kb *k, Node *n, uint32_t i)
{
    if (cg_qmatmul_dynamic(k, n))
        return false;
    return cg_linear_static(k, n, i);
}

/* ---- emitters with a choice (LOWER column: cg_emit_<L>) ---- */

static bool
cg_emit_qmatmul(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_qmatmul_rt_ok(k, n))
        return cg_emit_qmatmul_rt(k, n, a);
    if (cg_qmatmul_dynamic(k, n))
        return cg_emit_qdirect(k, n, a);
    return cg_emit_linear(k, n, a);
}

static bool
cg_emit_wmatmul(Kb *k, Node *n, const CgNodeArgs *a)
{
    return cg_wonly_i8(k, n) ? cg_emit_wonly_i8(k, n, a) : cg_emit_wonly(k, n, a);
}

/* quantize / dequantize: run-time scale / zero point operands in float_elem.c */
static bool
cg_emit_qdq(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_node_may_fail(k->g, n))
        return cg_emit_qdq_dynamic(k, n, a);
    return cg_emit_qdq_int(k, n, a);
}

/* 3 spatial dims or the indices result: float_linear.c */
static bool
cg_emit_maxpool(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (ir_value(k->g, n->in[0])->type.rank == 5 || n->nout > 1)
        return cg_emit_maxpool3(k, n, a);
    return cg_emit_pool(k, n, a);
}

/* f32 matmul / gemm: float_gemm.c; an f64 matmul: float_linear.c's loops */
static bool
cg_emit_fmatmul(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_float_gemm_ok(k, n))
        return cg_emit_float_gemm(k, n, a);
    return cg_emit_matmul_loops(k, n, a);
}

static bool
cg_emit_fgemm(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_float_gemm_ok(k, n))
        return cg_emit_float_gemm(k, n, a);
    return cg_fail(k, n, "%s is not supported by the code generator", op_info(n->op)->name);
}

/* f32 conv / conv_transpose with constant weights: float_conv.c; the others (3-D, run-time
 * weights): float_linear.c's loops */
static bool
cg_emit_fconv(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_float_conv_ok(k, n))
        return cg_emit_float_conv(k, n, a);
    return cg_emit_conv_loops(k, n, a);
}

static bool
cg_emit_fconvt(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (cg_float_conv_ok(k, n))
        return cg_emit_float_conv(k, n, a);
    return cg_emit_convt_loops(k, n, a);
}

/* ---- the tables ---- */

typedef int64_t (*CgScratchFn)(Kb *k, Node *n);
typedef bool (*CgStaticFn)(Kb *k, Node *n, uint32_t i);
typedef bool (*CgEmitFn)(Kb *k, Node *n, const CgNodeArgs *a);
typedef struct CgLowerRow {
    CgEmitFn emit;
    CgScratchFn scratch;
    CgStaticFn stat;
} CgLowerRow;

static const CgLowerRow lower_tab[OP_COUNT] = {
#define OP(E, NAME, MININ, MAXIN, MINOUT, MAXOUT, FLAGS, INFER, REF, LOWER, SCRATCH, STATIC, ...) \
    [OP_##E] = {cg_emit_##LOWER, cg_##SCRATCH##_scratch, cg_##STATIC##_static},
#include "ir/ops.def"
#undef OP
};

static const CgLowerRow *
lower_row(const Node *n)
{
    static const CgLowerRow none = {cg_emit_none, cg_none_scratch, cg_none_static};
    return n->op > OP_INVALID && n->op < OP_COUNT ? &lower_tab[n->op] : &none;
}

int64_t
cg_node_scratch(Kb *k, Node *n)
{
    return lower_row(n)->scratch(k, n);
}

bool
cg_operand_static(Kb *k, Node *n, uint32_t i)
{
    return lower_row(n)->stat(k, n, i);
}

bool
cg_node_may_fail(Graph *g, const Node *n)
{
    /* a gather with run-time indices checks them like the reference (layout.c) */
    if (n->op == OP_GATHER)
        return !ir_const_of(g, n->in[1]);
    return ((n->op == OP_QUANTIZE || n->op == OP_DEQUANTIZE) && !n->q && n->nin > 1 &&
            n->in[1].id) ||
           n->op == OP_DYNAMIC_QUANTIZE; /* NaN or infinity in its input (dynq.c) */
}

bool
cg_emit_node(Kb *k, Node *n, const CgNodeArgs *a)
{
    if (a->nchain) /* a float element-wise chain: float_chain.c */
        return cg_emit_float_chain(k, n, a);
    return lower_row(n)->emit(k, n, a);
}
