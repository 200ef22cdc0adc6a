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
 * This header is the face lib/api uses: options, target resolution, compile, the C header
 * text, the JIT session and cg_build. Inside lib/codegen (docs/architecture.md has the tree):
 *   build.c, abi.c     target -> plan -> one function per step -> run_ex/run/workspace_size
 *   options.c, target/ the machine, TargetMachine, module create / optimise / emit
 *   plan/              value homes, steps, NHWC layout plan, workspace offsets
 *   lower/             one file per op family (lower.h); conv/matmul through gemm/ (gemm.h)
 *   irb/               the IR builder the emitters share (irb.h, core.h)
 *   emit_obj.c, jit.c  outputs.
 * No LLVM type leaves lib/codegen. */
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
    const struct CgDyn *dyn; /* a run-time batch dimension: also emit PREFIX_run_shapes */
} CgOptions;

/* A run-time batch dimension (lib/api/dynamic.c): the graph is compiled at sym = 1 and, when
 * the range reaches far enough, also at sym = chunk; PREFIX_run_shapes runs the chunk graph on
 * each full chunk of indices and the size-1 graph on each index left (docs/abi.md, "Run-time
 * dimensions"). */
typedef struct CgDyn {
    char sym[128];
    int64_t lo, hi;
    IrBatchIO *in, *out; /* per graph input / output of the graph compiled at sym = 1 */
    int64_t chunk;       /* 0, or the size of the second graph */
    Module *chunk_unit;  /* the graph at sym = chunk (owned by dynamic.c) */
} CgDyn;

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

/* PREFIX_run_shapes of a session built with a run-time dimension (CgOptions.dyn): 0, or
 * QDQC_ERR_INVALID_ARG (shapes; diagnostic), QDQC_ERR_RUNTIME (run-time check; diagnostic);
 * out == NULL only checks the shapes and writes out_shapes. */
int
cg_jit_model_run_shapes(CgJitModel *j, const int64_t *const *in_shapes, const void *const *in,
                        int64_t *const *out_shapes, void *const *out, CgParallelFor pf,
                        void *pf_ctx);

/* The steps of the session's run function (lent, valid while it lives). */
const CgStep *
cg_jit_model_steps(const CgJitModel *j, size_t *n);

bool
cg_jit_model_profiled(const CgJitModel *j);

size_t
cg_jit_model_workspace_size(const CgJitModel *j);

void
cg_jit_model_destroy(CgJitModel *j);

/* A built module (build.c): the LLVM module for m, its TargetMachine and workspace size.
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

#endif
