/* irb.h: the IR builder of the kernel emitters (irb/kb.c): the Kb state of the function being
 * emitted, loops and loop nests, element access, constants, splats, intrinsic calls,
 * the clamp of a quantized range, window geometry, parallel-for outlining, and the exact
 * rounding/requantization sequences of lib/numerics. Internal to lib/codegen; the GEMM
 * generator has its own state (gemm/gemm_ir.h). The requantize epilogue (CgRqMode, CgRq,
 * CgRqElem) is implemented in irb/rq.c. */
#ifndef QDQC_CODEGEN_IRB_IRB_H
#define QDQC_CODEGEN_IRB_IRB_H

#include "codegen/target/isa.h"
#include "codegen/target/target.h"
#include "ir/ir.h"
#include "numerics/elementwise.h"
#include "codegen/irb/core.h"

typedef struct LLVMOpaqueContext *LLVMContextRef;
typedef struct LLVMOpaqueBuilder *LLVMBuilderRef;
typedef struct LLVMOpaqueType *LLVMTypeRef;
typedef struct LLVMOpaqueBasicBlock *LLVMBasicBlockRef;

typedef struct CgGemmCache CgGemmCache; /* gemm/gemm.h; Kb only carries it */

typedef struct CgRqMode CgRqMode; /* below */

typedef struct Kb {
    IRB_EMBED; /* c, mod, b, fn (the function being emitted), the types (irb/core.h) */
    const CgTarget *t;
    CgGemmIsa isa;
    const CgRqMode *rq; /* the requantize epilogue of --requant (cg_rq_mode), chosen once */
    Graph *g;
    const char *prefix;
    unsigned counter;
    char *err;
    size_t errlen;
    const uint8_t *nhwc; /* per ValueId: stored NHWC (cg_layout_plan, plan/layout.c) */
    CgGemmCache *gemm_cache; /* GEMMs of the module that share a body (cg_gemm_emit_shared) */
} Kb;

#define CG_CHAIN_MAX 32

/* Operand/result pointers of one node kernel: in[i] NULL for an absent operand or one consumed
 * at compile time (weights); scratch: the node's private workspace region (NULL if none). */
typedef struct CgNodeArgs {
    LLVMValueRef in[16];
    LLVMValueRef out[16];
    LLVMValueRef scratch;
    LLVMValueRef pf, pf_ctx;
    /* A qadd fused into this qconv's epilogue (cg_residual_add): out[] are its results and
     * res its other operand; NULL otherwise. */
    Node *res_add;
    LLVMValueRef res;
    /* A float chain (plan.h) headed by this node: the nodes after it, in order; out[] are the
     * last one's results. */
    Node *chain[CG_CHAIN_MAX];
    uint32_t nchain;
    /* A float chain's run-time operand (a squeeze-excitation scale, plan.h CgSe): the f32
     * [N, C, 1, 1] other operand of its binary op, one factor per (n, c) plane; or NULL. */
    LLVMValueRef chan;
} CgNodeArgs;

typedef IrbLoop CgLoop; /* irb/core.h */

/* for (iv = 0; iv < n; iv++): returns iv (i64); close with cg_loop_end. */
LLVMValueRef
cg_loop_begin(Kb *k, CgLoop *l, LLVMValueRef n);
void
cg_loop_end(Kb *k, CgLoop *l);
/* cg_loop_end for a loop LLVM's loop vectoriser must leave alone (llvm.loop.vectorize.enable
 * false): on a short constant trip count it folds the tail into an llvm.masked.store, and
 * LLVM 22 lowers a one-lane masked store of <8 x i8> on x86 to a 4-byte vmovd, writing past
 * the row (regress/dw-nchw-row-tail.test; the predicate.enable=false hint did not prevent it). */
void
cg_loop_end_novec(Kb *k, CgLoop *l);
/* cg_loop_end with loop hints (IRB_NO_VECTORIZE, IRB_NO_UNROLL: irb/core.h). */
void
cg_loop_end_hint(Kb *k, CgLoop *l, unsigned hints);

/* if (cond) { then } else { else }: cg_if_begin positions the builder in the then block,
 * cg_if_else closes it and opens the else block, cg_if_end joins. */
typedef struct CgIf {
    LLVMBasicBlockRef then_bb, else_bb, join;
} CgIf;
void cg_if_begin(Kb *k, CgIf *f, LLVMValueRef cond);
void cg_if_else(Kb *k, CgIf *f);
void cg_if_end(Kb *k, CgIf *f);
/* Return the i32 `status` from the current function (k->fn) when `bad` holds (cg_ret_if) or
 * unless `ok` holds (cg_ret_unless), from a block named `name`; the builder continues on the
 * other branch. A node function's run-time check, a C ABI entry's argument check. */
void cg_ret_if(Kb *k, LLVMValueRef bad, LLVMValueRef status, const char *name);
void cg_ret_unless(Kb *k, LLVMValueRef ok, LLVMValueRef status, const char *name);
/* v (i64) in [0, hi) as an i1 */
LLVMValueRef cg_in_range(Kb *k, LLVMValueRef v, int64_t hi);

/* An alloca in the entry block of the current function (safe inside loops). */
LLVMValueRef cg_entry_alloca(Kb *k, LLVMTypeRef t);
LLVMValueRef cg_i64(Kb *k, int64_t v);
LLVMValueRef cg_i32(Kb *k, int64_t v);
LLVMValueRef cg_f32(Kb *k, float v);
/* p + off bytes */
LLVMValueRef cg_gep(Kb *k, LLVMValueRef p, LLVMValueRef off);
LLVMValueRef cg_add(Kb *k, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_mul(Kb *k, LLVMValueRef a, LLVMValueRef b);
/* The LLVM scalar type of an element type (integers by width, f32, f64). */
LLVMTypeRef cg_elem_type(Kb *k, ElemType e);
/* Element idx (i64) of an array of e: loaded and extended to i64 (integers) or as is (floats). */
LLVMValueRef cg_load_i64(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx);
LLVMValueRef cg_load_raw(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx);
/* A load of type t (a vector, typically) at byte offset off from base, with alignment align. */
LLVMValueRef cg_load_at(Kb *k, LLVMTypeRef t, LLVMValueRef base, LLVMValueRef off, unsigned align);
/* llvm.fma(a, b, c) on a's type (scalar or vector f32): one correctly rounded fused op. */
LLVMValueRef cg_fma(Kb *k, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c);
void cg_store_raw(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v);
/* Store an i64 value truncated to integer type e. */
void cg_store_i64(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v);
/* A private constant global holding bytes; returns its address. */
LLVMValueRef cg_const_bytes(Kb *k, const void *data, size_t n, const char *tag);
/* min/max of i64 values */
LLVMValueRef cg_smin(Kb *k, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_smax(Kb *k, LLVMValueRef a, LLVMValueRef b);
/* qn_saturate(qn_round_half_even_f32_i64(v) + zy, lo, hi) as i64 */
LLVMValueRef cg_finish_f32(Kb *k, LLVMValueRef v, LLVMValueRef zy, int64_t lo, int64_t hi);
LLVMValueRef cg_roundeven_f32(Kb *k, LLVMValueRef v); /* llvm.roundeven, f32 or f64 */
/* qn_requant_float(acc (i64 holding an int32), mult, zp, lo, hi) as i64 */
LLVMValueRef cg_requant_float(Kb *k, LLVMValueRef acc, LLVMValueRef mult, int32_t zp,
                              int32_t lo, int32_t hi);
/* qn_requant_fixed(acc, (mult, shift) as i64 values, zp, lo, hi) as i64 */
LLVMValueRef cg_requant_fixed(Kb *k, LLVMValueRef acc, LLVMValueRef mult, LLVMValueRef shift,
                              int32_t zp, int32_t lo, int32_t hi);
/* True if why (a fixed-mode *_params result of lib/numerics) is NULL, else cg_fail at n. */
bool cg_fixed_ok(Kb *k, Node *n, const char *why);
/* Fixed-mode constants of requantize / qadd / qsub / qmul node n, whose operands and result
 * the caller has checked to be per-tensor quantized (the *_params functions of
 * lib/numerics/elementwise.h; qelem.c). False after cg_fail if not representable. */
typedef struct CgElemFixed {
    QnFixed m;      /* requantize, qmul */
    QnAddFixed add; /* qadd, qsub */
} CgElemFixed;
bool cg_elem_fixed(Kb *k, Node *n, CgElemFixed *f);
/* n's fixed-mode value before + zy and saturation (cg_add_sat), from d[i] = operand i minus
 * its zero point as i64 or vectors of i64: qn_requantize_fixed, qn_qadd_fixed, qn_qsub_fixed,
 * qn_qmul_fixed step for step. Every scalar or vector kernel of these ops in fixed mode must
 * use it (or compute the same integers). */
LLVMValueRef cg_elem_fixed_value(Kb *k, Node *n, const CgElemFixed *f, LLVMValueRef *d);
/* ---- the requantize epilogue (--requant=float|fixed) ----
 * CgRqMode is one mode's row of emitters, picked once per module (cg_rq_mode, Kb.rq); CgRq is
 * one node's requantization: the row plus the node's constants, per channel (tables indexed by
 * the channel, one entry for per-tensor) or already loaded for one channel. Emitters call
 * rq->mode->...(k, rq, ...) instead of branching on the mode. */
typedef struct CgRq {
    const CgRqMode *mode;
    LLVMValueRef mult;          /* float: f32 multipliers (table or loaded value) */
    LLVMValueRef fmult, fshift; /* fixed: i64 multipliers and shifts (table or loaded values) */
    int32_t zp, lo, hi;         /* output zero point and clamp */
    /* qavg (cg_rq_avg): float: the input and output scales; fixed: fmult, fshift the
     * multiplier (i64 constants) or, with by_count, tables indexed by the divisor */
    float sx, sy;
    bool by_count;
} CgRq;
/* One requantize / qadd / qsub / qmul node (per-tensor operands and result) for the element-wise
 * entries of CgRqMode: the emitter sets n, nop, t, y, lo, hi; elem_init adds the mode's
 * constants. */
typedef struct CgRqElem {
    Node *n;
    uint32_t nop;
    const Type *t[2], *y;
    int32_t lo, hi; /* the result's clamp */
    CgElemFixed fx; /* fixed: cg_elem_fixed */
    /* float, vector form: the operands' zero points and scales, the result's scale, zero point
     * and clamp [lo - zy, hi - zy], and 1 / sy, loaded (elem_vec_load) from a constant table
     * where the loop starts, so that same-length ops emit the same function (target/merge.c
     * shares it); alone, LLVM folds the loads back into the constants */
    LLVMValueRef gq;
    LLVMValueRef za[2], sa[2], sy, zy, flo, fhi, rsy;
    bool recip; /* divide by sy as a multiply by rsy (qn_div_as_recip proved it) */
    float inv;
} CgRqElem;
/* A vector requantize epilogue over per-channel tables (the depthwise kernels, qconv_dw.c):
 * the tables (vec_tables), the zero point and clamp as a table too (vec_clamp_table), loaded
 * where the loop starts (vec_clamp_load), so that same-shape kernels emit the same function
 * (target/merge.c shares it); alone, LLVM folds the loads back into constants. */
typedef struct CgRqTables {
    LLVMValueRef gm;            /* float: the f32 multipliers */
    LLVMValueRef gfm, gfr, gfs; /* fixed: the i64 multipliers, 2^(shift - 1) and shifts */
} CgRqTables;
/* vec's view of one vector of channels: lanes(ctx, table, elt) the vector's entries of a table
 * of elt; q the clamp values of vec_clamp_load */
typedef struct CgRqLanes {
    LLVMValueRef (*lanes)(const void *ctx, LLVMValueRef table, LLVMTypeRef elt);
    const void *ctx;
    const CgRqTables *tb;
    const LLVMValueRef *q;
} CgRqLanes;
struct CgRqMode {
    /* the GEMM epilogue of a requantizing conv / matmul (core.h: IRB_EPI_REQUANT_FLOAT or
     * _FIXED, gemm/gemm.h's CG_GEMM_EPI_REQUANT_FLOAT or _FIXED) */
    int gemm_epi;
    /* qn_requant_float / qn_requant_fixed of the i64 acc (an int32 value) with channel m's
     * constants from the tables (m an i64 index): the i64 result in [lo, hi] */
    LLVMValueRef (*acc)(Kb *k, const CgRq *rq, LLVMValueRef acc, LLVMValueRef m);
    /* the same for the exact int64 accumulator of 16-bit activations (qn_requant_*_wide) */
    LLVMValueRef (*acc_wide)(Kb *k, const CgRq *rq, LLVMValueRef acc, LLVMValueRef m);
    /* with the channel's constants loaded (rq->mult, or rq->fmult and rq->fshift): store the
     * requantized a32 (the accumulator as i32; a64 the same sign-extended) at y[yi] as ye */
    void (*store)(Kb *k, const CgRq *rq, ElemType ye, LLVMValueRef y, LLVMValueRef yi,
                  LLVMValueRef a32, LLVMValueRef a64);
    /* qn_qavg / qn_qavg_fixed of the i64 sum (of x - zx) over the i64 count cnt > 0 */
    LLVMValueRef (*avg)(Kb *k, const CgRq *rq, LLVMValueRef sum, LLVMValueRef cnt);
    /* ---- compile-time constants ----
     * qn_requant_channels: the float multipliers mult[nch] and, fixed, fix[nch] (float leaves
     * fix alone); -1, or the first channel whose fixed multiplier is not representable */
    int64_t (*channels)(float sx, const float *sw, int64_t nsw, float sy, int64_t nch,
                        float *mult, QnFixed *fix);
    /* qn_requant_fixed_mult is representable (fixed) or true (float) */
    bool (*mult_ok)(float sx, float sw, float sy);
    /* qavg constants of node n (rq->sx, rq->sy set; bits = cg_range_bits of its input): fixed:
     * rq->fmult, rq->fshift the multiplier of divisor cnt, or with rq->by_count tables over
     * every divisor 0..cnt (0: a window of padding only, never used); float: nothing. False
     * after cg_fail */
    bool (*avg_init)(Kb *k, Node *n, CgRq *rq, int64_t cnt, int bits);
    /* fixed: cg_elem_fixed of requantize / qadd / qsub / qmul node n into *f; float: true,
     * *f untouched */
    bool (*elem_fixed)(Kb *k, Node *n, CgElemFixed *f);
    /* ---- element-wise ops (CgRqElem) ----
     * the node's constants: fixed cg_elem_fixed; float with vec, the vector form's table.
     * False after cg_fail */
    bool (*elem_init)(Kb *k, CgRqElem *e, bool vec);
    /* the scalar result (i64 in [lo, hi]) from d[i] = operand i minus its zero point (i64) */
    LLVMValueRef (*elem)(Kb *k, const CgRqElem *e, LLVMValueRef *d);
    /* vector form: the table's values at the builder's position (once per function) */
    void (*elem_vec_load)(Kb *k, CgRqElem *e);
    /* operand j from its 8-bit elements x (one scalar when lanes == 0, else a vector of
     * lanes): x - za (i32; fixed i64), then in float sa * (float) of it. The same operations
     * on a scalar and on each lane, so a value computed once and splatted has the bits of
     * each lane's */
    LLVMValueRef (*elem_vec_operand)(Kb *k, const CgRqElem *e, uint32_t j, LLVMValueRef x,
                                     unsigned lanes);
    /* the result of operand values v[] (lanes > 0) as integer lanes in [lo, hi] (to truncate) */
    LLVMValueRef (*elem_vec)(Kb *k, const CgRqElem *e, LLVMValueRef *v, unsigned lanes);
    /* ---- vector epilogue over per-channel tables (CgRqTables, CgRqLanes) ----
     * the tables of channels [0, M) (at least one entry each) from the epilogue's float
     * multipliers or fixed multipliers and shifts, named tag + m / fm / fr / fs */
    void (*vec_tables)(Kb *k, const float *mult, const int32_t *fmult, const int32_t *fshift,
                       int64_t M, const char *tag, CgRqTables *tb);
    /* the zero point and clamp as a constant table named tag */
    LLVMValueRef (*vec_clamp_table)(Kb *k, int32_t zo, int32_t lo, int32_t hi, const char *tag);
    /* its values q[5] at the builder's position: float flo, fhi (f32: lo - zo, hi - zo), zo, lo,
     * hi (i32); fixed zo, lo, hi (i64) */
    void (*vec_clamp_load)(Kb *k, LLVMValueRef gq, LLVMValueRef *q);
    /* the requantized int32 accumulator vector acc (n lanes) as n i32 lanes in [lo, hi]:
     * qn_requant_float (f32 product, clamp to [lo - zo, hi - zo], NaN -> 0, rne, + zo) or
     * qn_requant_fixed ((i64)acc * M + 2^(s-1) >> s, + zo, saturated) */
    LLVMValueRef (*vec)(Kb *k, const CgRqLanes *l, LLVMValueRef acc, unsigned n);
    /* whether the float short forms of vec may replace it (qconv_dw.c Dw.fast, 8-bit results):
     * float, every channel's f32 product of an |acc| <= amax[m] stays below 2^30 in magnitude
     * (mult[m] >= 0 and mult[m] * amax[m] < 2^30); fixed, never */
    bool (*vec_short_ok)(const float *mult, const double *amax, int64_t M);
};
/* The row of --requant=fixed (fixed) or =float. */
const CgRqMode *cg_rq_mode(bool fixed);
/* The i32 form of cg_requant_float (same values: the clamp keeps rne(f) within int32), which
 * keeps vectorised loops on full i32 lanes. */
LLVMValueRef cg_requant_float_i32(Kb *k, LLVMValueRef a32, LLVMValueRef mult, int32_t zp,
                                  int32_t lo, int32_t hi);
/* qn_rescale(v, (mult, shift)) (numerics.h: floor(v * mult / 2^shift + 1/2), exact for
 * |v| <= 2^32 - 1): v, mult and shift i64, or all vectors of i64 (same lanes). */
LLVMValueRef cg_rescale(Kb *k, LLVMValueRef v, LLVMValueRef mult, LLVMValueRef shift);
/* The same with a compile-time multiplier (splatted for a vector v). */
LLVMValueRef cg_rescale_c(Kb *k, LLVMValueRef v, QnFixed f);
/* qn_saturate(v + zy, lo, hi) for an i64 (or vector of i64) v with |v| <= 2^62. */
LLVMValueRef cg_add_sat(Kb *k, LLVMValueRef v, int32_t zy, int32_t lo, int32_t hi);
/* Width of the storage range of value v's element type (qn_range_bits): 8 for i8/u8. */
int cg_range_bits(Kb *k, ValueId v);
/* Call a function declared with `ret name(args...)` (declared on first use). */
LLVMValueRef cg_call(Kb *k, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt,
                     LLVMValueRef *args, unsigned n);
bool cg_fail(Kb *k, Node *n, const char *fmt, ...) QDQC_PRINTF(3, 4);
/* The attributes of every function of the graph: the target's CPU and features, nounwind. */
void cg_fn_attrs(Kb *k, LLVMValueRef fn);
/* A step's function: internal, np pointer parameters (np <= 64), returning i32 (a status) when
 * may_fail, else void, cg_fn_attrs and noinline (one symbol per step: readable profiles, and
 * run_ex stays small); it becomes k->fn with the builder at its entry block. */
LLVMValueRef cg_step_fn(Kb *k, const char *name, unsigned np, bool may_fail);

/* s (a scalar) in all n lanes */
LLVMValueRef cg_vsplat(Kb *k, LLVMValueRef s, unsigned n);

/* ---- rows split across the host's parallel-for hook ----
 * cg_par_begin moves emission into a new function body(ptr ctx, i64 begin, i64 end) whose loop
 * variable (returned) runs over rows [begin, end) and where ptrs[] are replaced by their values
 * reloaded from ctx; cg_par_end closes it and, back in the node function, calls
 * body(ctx, 0, rows) directly or through the hook (each thread then has its own allocas). */
typedef struct Par {
    LLVMBasicBlockRef saved_bb;
    LLVMValueRef saved_fn, fn, slot;
    int64_t rows;
    CgLoop l;
} Par;
LLVMValueRef cg_par_begin(Kb *k, Par *p, int64_t rows, LLVMValueRef *ptrs, int np);
void cg_par_end(Kb *k, Par *p, const CgNodeArgs *a);

/* Nested loops over dims[0..r) (row-major); idx[j] = sum_d iv[d] * st[j][d] for nops stride
 * sets (elements). Close with cg_nest_end. */
typedef struct CgNest {
    int n;
    CgLoop l[IR_MAX_RANK];
} CgNest;
void cg_nest_begin(Kb *k, CgNest *ns, const int64_t *dims, int r, int nops,
                   const int64_t (*st)[IR_MAX_RANK], LLVMValueRef *idx);
void cg_nest_end(Kb *k, CgNest *ns);

/* Window geometry of conv / pools over 1..3 spatial dims (missing dims padded to 1): lib/ir's
 * IrWindow (geometry.c), the one shared with lib/ref. cg_window reports why not at n. */
typedef IrWindow CgWin;
bool cg_window(Kb *k, Node *n, const Type *x, const Type *y, const int64_t *kernel, CgWin *w);
/* Index into CgWin's arrays of the height (1-D: the padded dim, all 1 / 0) and width of a 1-D or
 * 2-D window, for the kernels that see every window as H x W. */
static inline int cg_win_h(const CgWin *w) { return w->ns == 2 ? 0 : 1; }
static inline int cg_win_w(const CgWin *w) { return w->ns - 1; }

#endif
