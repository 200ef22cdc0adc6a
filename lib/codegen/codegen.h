/* codegen.h: graph-level code generation (internal API of lib/codegen).
 *
 * From a compiled integer graph (after the passes) to one LLVM module holding
 *     void PREFIX_run_ex(const void *const *in, void *const *out, void *ws,
 *                        qdqc_parallel_for_fn pf, void *pf_ctx);
 *     void PREFIX_run(const void *const *in, void *const *out, void *ws);
 *     size_t PREFIX_workspace_size(void);
 * (and with CgOptions.profile PREFIX_run_profile, PREFIX_run_ex with a step hook), which is then written as an object / assembly / LLVM IR (emit_obj.c) or run in process through
 * ORC LLJIT (jit.c). The ABI is described in docs/abi.md.
 *
 * Layers:
 *   llvm_graph.c      plan (buffer of every value, memory plan), emit one internal function per
 *                     node and the run function that calls them in order;
 *   memplan.c         liveness-based workspace offsets (64-byte aligned);
 *   llvm_kernels*.c   per-op-family emitters (loops in LLVM IR; conv/matmul through the GEMM
 *                     generator of kern_gemm.h);
 *   jit.c, emit_obj.c outputs.
 * The second half of this header (Kb, loops, element access) is shared by the kernel emitters
 * only; no LLVM type leaves lib/codegen. */
#ifndef QDQC_CODEGEN_CODEGEN_H
#define QDQC_CODEGEN_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/gemm/gemm.h"
#include "codegen/target/target.h"
#include "ir/ir.h"
#include "numerics/elementwise.h"
#include "numerics/numerics.h"

/* ---- options and outputs ---- */

typedef struct CgOptions {
    char triple[128];  /* "" = host */
    char cpu[64];      /* "" = see cg_options_target: host, --isa's baseline, or generic */
    char mattr[512];   /* "+avx512vnni,-avx2,..." added after the CPU's features */
    char prefix[64];   /* symbol prefix, default "model" */
    char isa[32];      /* "" = best for the target, else a cg_gemm_isa_name() */
    bool requant_fixed;
    bool profile;      /* also emit PREFIX_run_profile: a step hook around every step */
} CgOptions;

typedef enum CgEmitKind {
    CG_EMIT_OBJ,
    CG_EMIT_ASM,
    CG_EMIT_LLVM,
    CG_EMIT_HEADER,
    CG_EMIT_BITCODE,
} CgEmitKind;

typedef void (*CgParallelFor)(void *ctx, void (*fn)(void *, int64_t, int64_t), void *arg,
                              int64_t n);
/* qdqc_profile_fn: called before (end 0) and after (end 1) each step of PREFIX_run_profile */
typedef void (*CgStepHook)(void *ctx, int32_t step, int32_t end);

/* One step of the run function: the node it runs (and the residual add fused into it, or 0),
 * in run order. */
typedef struct CgStep {
    uint32_t node, fused;
} CgStep;

/* Fill o with defaults (host target, prefix "model"). */
void
cg_options_init(CgOptions *o);

/* Resolve o's target: the host fills in only what the options leave open (the rule is at the
 * definition and in docs/targets.md). False with a message in err. */
bool
cg_options_target(const CgOptions *o, CgTarget *t, char *err, size_t errlen);

/* The kernel path named `name` (--isa) on target t; false with a message that lists the valid
 * names, or the paths t supports when t lacks the named one's features. */
bool
cg_isa_lookup(const CgTarget *t, const char *name, CgGemmIsa *out, char *err, size_t errlen);

/* Compile m's graph and return the requested artefact in a malloc'd buffer (NUL-terminated for
 * text kinds). Errors go to m's context as diagnostics (false). */
bool
cg_compile_to_memory(Module *m, const CgOptions *o, CgEmitKind kind, char **out, size_t *len);

/* The same for n kinds from one build (one graph lowering and optimisation): outs[i], lens[i]
 * for kinds[i]. On failure every outs[i] is NULL. */
bool
cg_compile_kinds(Module *m, const CgOptions *o, size_t n, const CgEmitKind *kinds, char **outs,
                 size_t *lens);

/* The C header text for m (docs/abi.md); with o->profile, steps names the run's steps. */
char *
cg_header_text(Module *m, const CgOptions *o, size_t workspace, const CgStep *steps,
               uint32_t nsteps);

/* JIT session. */
typedef struct CgJitModel CgJitModel;

CgJitModel *
cg_jit_model_create(Module *m, const CgOptions *o);

/* hook != NULL needs a model compiled with o->profile (cg_jit_model_profiled). */
bool
cg_jit_model_run(CgJitModel *j, const void *const *in, void *const *out, CgParallelFor pf,
                 void *pf_ctx, CgStepHook hook, void *hook_ctx);

/* The steps of the session's run function (lent, valid while it lives). */
const CgStep *
cg_jit_model_steps(const CgJitModel *j, size_t *n);

bool
cg_jit_model_profiled(const CgJitModel *j);

size_t
cg_jit_model_workspace_size(const CgJitModel *j);

void
cg_jit_model_destroy(CgJitModel *j);

/* A built module (llvm_graph.c): the LLVM module for m, its TargetMachine and workspace size.
 * Errors: diagnostics in m's context (false). */
typedef struct CgBuilt {
    CgTarget t;
    LLVMTargetMachineRef tm;
    struct LLVMOpaqueContext *ctx;
    LLVMModuleRef mod;
    int64_t workspace;
    CgGemmIsa isa;
    CgStep *steps;     /* malloc'd, nsteps of them */
    uint32_t nsteps;
} CgBuilt;

bool
cg_build(Module *m, const CgOptions *o, CgBuilt *out);

void
cg_built_free(CgBuilt *b);

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

/* ---- LLVM emission (shared by llvm_graph.c and llvm_kernels*.c) ---- */

typedef struct LLVMOpaqueContext *LLVMContextRef;
typedef struct LLVMOpaqueBuilder *LLVMBuilderRef;
typedef struct LLVMOpaqueType *LLVMTypeRef;
typedef struct LLVMOpaqueBasicBlock *LLVMBasicBlockRef;

typedef struct Kb {
    LLVMContextRef c;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn; /* function being emitted */
    const CgTarget *t;
    CgGemmIsa isa;
    bool requant_fixed;
    Graph *g;
    const char *prefix;
    unsigned counter;
    char *err;
    size_t errlen;
    LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, ptr, vd;
    const uint8_t *nhwc; /* per ValueId: stored NHWC (cg_layout_plan, llvm_conv_nhwc.c) */
    CgGemmCache *gemm_cache; /* GEMMs of the module that share a body (cg_gemm_emit_shared) */
} Kb;

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
} CgNodeArgs;

/* Whether n's node function can fail at run time (a quantize / dequantize whose scale and zero
 * point are run-time operands, checked like the reference interpreter): it then returns i32,
 * 0 or a qdqc_status, which PREFIX_run_ex returns at once (docs/abi.md); other node functions
 * return void. */
bool
cg_node_may_fail(Graph *g, const Node *n);

typedef struct CgLoop {
    LLVMBasicBlockRef hdr, exit;
    LLVMValueRef iv;
} CgLoop;

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
/* qn_requant_float(acc (i64 holding an int32), mult, zp, lo, hi) as i64 */
LLVMValueRef cg_requant_float(Kb *k, LLVMValueRef acc, LLVMValueRef mult, int32_t zp,
                              int32_t lo, int32_t hi);
/* qn_requant_fixed(acc, (mult, shift) as i64 values, zp, lo, hi) as i64 */
LLVMValueRef cg_requant_fixed(Kb *k, LLVMValueRef acc, LLVMValueRef mult, LLVMValueRef shift,
                              int32_t zp, int32_t lo, int32_t hi);
/* qn_rescale(v, (mult, shift)) (numerics.h: floor(v * mult / 2^shift + 1/2), exact for
 * |v| <= 2^32 - 1): v, mult and shift i64, or all vectors of i64 (same lanes). */
LLVMValueRef cg_rescale(Kb *k, LLVMValueRef v, LLVMValueRef mult, LLVMValueRef shift);
/* The same with a compile-time multiplier (splatted for a vector v). */
LLVMValueRef cg_rescale_c(Kb *k, LLVMValueRef v, QnFixed f);
/* qn_saturate(v + zy, lo, hi) for an i64 (or vector of i64) v with |v| <= 2^62. */
LLVMValueRef cg_add_sat(Kb *k, LLVMValueRef v, int32_t zy, int32_t lo, int32_t hi);
/* Width of the storage range of value v's element type (qn_range_bits): 8 for i8/u8. */
int cg_range_bits(Kb *k, ValueId v);
/* True if why (a fixed-mode *_params result of lib/numerics) is NULL, else cg_fail at n. */
bool cg_fixed_ok(Kb *k, Node *n, const char *why);
/* Fixed-mode constants of requantize / qadd / qsub / qmul node n, whose operands and result
 * the caller has checked to be per-tensor quantized (the *_params functions of
 * lib/numerics/elementwise.h; llvm_kernels_int.c). False after cg_fail if not representable. */
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
/* Call a function declared with `ret name(args...)` (declared on first use). */
LLVMValueRef cg_call(Kb *k, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt,
                     LLVMValueRef *args, unsigned n);
bool cg_fail(Kb *k, Node *n, const char *fmt, ...) QDQC_PRINTF(3, 4);
/* The attributes of every function of the graph: the target's CPU and features, nounwind. */
void cg_fn_attrs(Kb *k, LLVMValueRef fn);

/* ---- the C ABI (abi.c) ---- */
struct CgPlan;
/* PREFIX_run_ex (calling fns[s] for step s of plan p), PREFIX_run, PREFIX_workspace_size; with
 * profile also PREFIX_run_profile (the step hook around every step). */
void cg_emit_abi(Kb *k, struct CgPlan *p, const LLVMValueRef *fns, bool profile);

/* ---- per-family emitters (return false after cg_fail) ---- */
/* Scratch bytes node n needs (0 if none); -1 if the node is not supported. */
int64_t cg_node_scratch(Kb *k, Node *n);
/* Whether operand i of n is consumed at compile time (weights and bias of qconv/qmatmul). */
bool cg_operand_static(Kb *k, Node *n, uint32_t i);
bool cg_emit_node(Kb *k, Node *n, const CgNodeArgs *a);

bool cg_emit_layout(Kb *k, Node *n, const CgNodeArgs *a);   /* llvm_kernels_layout.c */
bool cg_emit_int(Kb *k, Node *n, const CgNodeArgs *a);      /* llvm_kernels_int.c */
bool cg_emit_linear(Kb *k, Node *n, const CgNodeArgs *a);   /* llvm_kernels_conv.c */
int64_t cg_linear_scratch(Kb *k, Node *n);
bool cg_linear_static(Kb *k, Node *n, uint32_t i);
bool cg_emit_float(Kb *k, Node *n, const CgNodeArgs *a);    /* llvm_kernels_float.c */
/* float conv, conv_transpose, matmul, gemm, avgpool, global_avgpool, resize
 * (llvm_kernels_float_linear.c) */
bool cg_emit_float_linear(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_float_linear_scratch(Kb *k, Node *n);
/* qconv_transpose, qmatmul with a run-time right operand, qreduce_mean
 * (llvm_kernels_qdirect.c) */
bool cg_emit_qdirect(Kb *k, Node *n, const CgNodeArgs *a);
int64_t cg_qdirect_scratch(Kb *k, Node *n);
/* wmatmul: float activations x constant 8-bit weights dequantized in registers
 * (lower/float_wonly.c) */
bool cg_emit_wonly(Kb *k, Node *n, const CgNodeArgs *a);
/* Whether qmatmul n reads its right operand at run time (not a constant 2-D matrix). */
bool cg_qmatmul_dynamic(Kb *k, Node *n);

/* Nested loops over dims[0..r) (row-major); idx[j] = sum_d iv[d] * st[j][d] for nops stride
 * sets (elements). Close with cg_nest_end. */
typedef struct CgNest {
    int n;
    CgLoop l[IR_MAX_RANK];
} CgNest;
void cg_nest_begin(Kb *k, CgNest *ns, const int64_t *dims, int r, int nops,
                   const int64_t (*st)[IR_MAX_RANK], LLVMValueRef *idx);
void cg_nest_end(Kb *k, CgNest *ns);

/* Window geometry of conv / pools over 1..3 spatial dims (missing dims padded to 1), as
 * lib/ref's ref_window. */
typedef struct CgWin {
    int ns;
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} CgWin;
bool cg_window(Kb *k, Node *n, const Type *x, const Type *y, const int64_t *kernel, CgWin *w);
/* Call libm's double function name(x) (exp, tanh, erf): the JIT resolves it in the process,
 * objects link with -lm. */
LLVMValueRef cg_libm(Kb *k, const char *name, LLVMValueRef x);

#endif
