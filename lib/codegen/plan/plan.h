/* plan.h: the build plan of a graph (plan.c): the home of every value, the steps (one per node
 * that emits code, a fused residual add folded into its conv's step), each step's private
 * scratch and the workspace offsets (memplan.c). Internal to lib/codegen: build.c makes the
 * plan, abi.c turns homes into addresses inside PREFIX_run_ex. */
#ifndef QDQC_CODEGEN_PLAN_PLAN_H
#define QDQC_CODEGEN_PLAN_PLAN_H

#include "codegen/irb/irb.h"

/* ---- memory plan (memplan.c) ---- */

typedef struct CgMemReq {
    int64_t size;    /* bytes; 0 = needs no workspace */
    int32_t first;   /* step that writes it */
    int32_t last;    /* last step that reads it (>= first) */
    int64_t offset;  /* out: 64-byte aligned offset in the workspace */
} CgMemReq;

/* Assign offsets so that buffers live at overlapping steps never overlap; returns the peak
 * (workspace size, a multiple of 64). */
int64_t
cg_memplan(CgMemReq *reqs, size_t n);

/* Where a value lives: a graph input buffer, a graph output buffer, a constant global
 * (materialised on first use, CgLoc.global), or a workspace region (CgLoc.index = its
 * CgMemReq). */
typedef enum CgLocKind { CG_LOC_NONE, CG_LOC_IN, CG_LOC_OUT, CG_LOC_WS, CG_LOC_CONST } CgLocKind;

typedef struct CgLoc {
    CgLocKind kind;
    int64_t index;   /* input/output index, or memreq index for CG_LOC_WS */
    LLVMValueRef global;
} CgLoc;

/* A squeeze-excitation block run as one step (se.c): a global average pool of a feature map x,
 * small nodes on its [N, C, 1, 1] result (1x1 qconvs, tables, requantizes, f32 activations;
 * their other operands constants) and the channel-wise scale of x by the last small value:
 * a qmul(s, x), or a dequantize(x) -> mul(s, .) -> quantize float chain. The small values live
 * in the step's scratch; x is read twice (the pool, the scale) and the result written once. */
#define CG_SE_MAX 16
typedef struct CgSe {
    uint32_t node[CG_SE_MAX];   /* members in run order; the last is the scale (qmul or mul) */
    uint32_t n;
    uint32_t dq, q;             /* float scale: x's dequantize and the quantize after the mul */
    int64_t val_off[CG_SE_MAX]; /* scratch offset of each member's result but the last */
    int64_t scr_off[CG_SE_MAX]; /* scratch offset of each member's own scratch, -1: none */
    int64_t scratch;            /* bytes of the step's scratch */
} CgSe;

typedef struct CgPlan {
    CgLoc *loc;             /* per ValueId */
    CgMemReq *reqs;         /* workspace buffers and scratch regions */
    size_t nreq;
    int64_t *scratch_req;   /* per step: 1 + index of its scratch CgMemReq, 0 = none */
    uint32_t *steps;        /* NodeId of each step */
    uint32_t nsteps;
    Node **fuse;            /* per NodeId: the qadd fused into this conv's epilogue, or NULL */
    uint32_t *fuse_other;   /* per NodeId: operand index of the fused qadd's other operand */
    uint8_t *fused_away;    /* per NodeId: a qadd whose step disappeared into its conv, or a
                             * member of a float chain after its head */
    uint32_t *chain_next;   /* per NodeId: the next node of its float chain (fuse[head] is the
                             * chain's last node), 0 at the end or outside chains */
    CgSe *se;               /* the squeeze-excitation steps */
    uint32_t nse;
    uint32_t *se_of;        /* per NodeId: 1 + index in se of the group whose step it is, 0 */
    uint8_t *view;          /* per NodeId: a reshape-like node without a step; its result
                             * lives at its operand's home (plan.c is_view) */
    uint32_t *uses;         /* per ValueId: readers (live nodes and graph outputs) */
    uint8_t *nhwc;          /* per ValueId: stored NHWC (cg_layout_plan) */
    int64_t workspace;      /* bytes (a multiple of 64) */
} CgPlan;

typedef enum CgPlanStatus {
    CG_PLAN_OK,
    CG_PLAN_FAIL,       /* a node is not supported: message in k's err (cg_fail) */
    CG_PLAN_OOM_VALUES, /* the per-value arrays could not be allocated (nothing held) */
    CG_PLAN_OOM_NODES,  /* the per-node arrays could not be allocated (nothing held) */
} CgPlanStatus;

/* Plan k's graph (k->nhwc is set to the layout plan). On any status but CG_PLAN_OK nothing is
 * held; on CG_PLAN_OK free with cg_plan_free. */
CgPlanStatus
cg_plan_build(Kb *k, CgPlan *p);

void
cg_plan_free(CgPlan *p);

/* ---- activation layout plan (layout.c) ----
 * Which values are stored NHWC instead of the graph's logical NCHW: rank-4 results of
 * non-grouped qconv, depthwise qconv (multiplier 1) and same-shape integer element-wise ops
 * (qadd, qsub, qmul, requantize, lut: layout-agnostic), when every consumer accepts NHWC
 * (qconv operand 0, or such an element-wise op with all operands and its result NHWC) and the
 * value is not a graph output. Depthwise input and result are tied. Then a chain of convs runs
 * with no transpose between layers: a 1x1 conv is a GEMM straight over its input, and the GEMM
 * writes the next layer's input in place. Returns a malloc'd flag per ValueId. */
uint8_t *cg_layout_plan(Kb *k);
/* Whether v is stored NHWC under k's plan. */
bool cg_value_nhwc(Kb *k, ValueId v);

/* ---- residual add fused into a conv (layout.c) ----
 * The qadd whose other operand is added in the epilogue of the GEMM of qconv n (the conv's
 * 8-bit result is then never stored), or NULL: n is a non-grouped qconv with an NHWC 8-bit
 * per-tensor result whose only consumer is that qadd (same shape, 8-bit per-tensor operands
 * and result), and the other operand is computed before n (uses[v] = consumers of value v);
 * either --requant mode. *other = the qadd's operand index of the other value. */
Node *cg_residual_add(Kb *k, Node *n, const uint32_t *uses, uint32_t *other);

/* ---- float element-wise chains (plan.c) ----
 * A chain is one step and one pass over memory: an optional static per-tensor dequantize,
 * then single-use f32 element-wise ops of the same shape (float_math.c's ops, add, sub, mul,
 * div; a second operand must be a constant), then an optional static per-tensor quantize; at
 * least one op and two nodes. The head's step computes it (lower/float_chain.c); every
 * intermediate value stays in registers. Which op may join: cg_chain_member (lower.h). */

/* Find the squeeze-excitation groups (se.c; after the residual adds, before the float chains):
 * their members but the step node become fused_away. False if out of memory. */
bool
cg_plan_se(Kb *k, CgPlan *p);

/* The values group e reads from outside (each once, in member order) into v[CG_SE_MAX * 4];
 * stat[i]: every reader in the group packs it at compile time (passed as NULL). Returns the
 * count. The step's parameters are these, then the last node's results, scratch, pf, pf_ctx. */
uint32_t
cg_se_inputs(Kb *k, const CgSe *e, ValueId *v, bool *stat);

/* The node whose results step s writes in a squeeze-excitation group, or NULL. */
static inline Node *
cg_plan_se_out(const CgPlan *p, Graph *g, uint32_t s)
{
    uint32_t i = p->se_of[p->steps[s]];
    if (!i)
        return NULL;
    const CgSe *e = &p->se[i - 1];
    return ir_node(g, (NodeId){e->q ? e->q : e->node[e->n - 1]});
}

/* Bytes of value v (dense, its element type). */
static inline int64_t
cg_value_bytes(Graph *g, ValueId v)
{
    const Type *t = &ir_value(g, v)->type;
    return (int64_t)(type_numel_unchecked(t) * elem_size(t->elem));
}

/* The node whose results step s writes: its own node, the qadd fused into it, or a
 * squeeze-excitation group's last. */
static inline Node *
cg_plan_step_out(const CgPlan *p, Graph *g, uint32_t s)
{
    Node *se = cg_plan_se_out(p, g, s);
    if (se)
        return se;
    Node *n = ir_node(g, (NodeId){p->steps[s]});
    return p->fuse[p->steps[s]] ? p->fuse[p->steps[s]] : n;
}

#endif
