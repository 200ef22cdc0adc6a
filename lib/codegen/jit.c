/* jit.c: in-process execution of a compiled graph through ORC LLJIT.
 *
 * The module comes from cg_build (the same plan as the object writer). The LLJIT uses a
 * JITTargetMachineBuilder made from the build's TargetMachine, so the JIT'd code has exactly the
 * selected target's features; libm symbols (expf, erff, tanhf) resolve in the host process
 * through a dynamic-library search generator. The session owns a 64-byte aligned workspace, so
 * a run allocates nothing; one session must not run concurrently with itself. */
#include "codegen/codegen.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/TargetMachine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*RunExFn)(const void *const *, void *const *, void *, CgParallelFor, void *);
typedef int (*RunProfileFn)(const void *const *, void *const *, void *, CgParallelFor, void *,
                            CgStepHook, void *);
typedef int (*RunShapesFn)(const int64_t *const *, const void *const *, int64_t *const *,
                           void *const *, void *, CgParallelFor, void *);

struct CgJitModel {
    LLVMOrcLLJITRef jit;
    RunExFn run;
    RunProfileFn run_profile; /* with CgOptions.profile; else NULL */
    RunShapesFn run_shapes;   /* with CgOptions.dyn (a run-time dimension); else NULL */
    CgStep *steps;            /* from the build, in run order */
    size_t nsteps;
    void *ws;
    size_t ws_size;
    qdqc_context *ctx;
};

/* The workspace is followed by JIT_CANARY bytes of a known pattern, checked after every run: a
 * kernel that writes past the end of the workspace (a code generator bug, e.g. a vector tail
 * store wider than its lanes) is reported instead of corrupting the heap silently. */
enum { JIT_CANARY = 64 };

static uint8_t
canary_byte(size_t i)
{
    return (uint8_t)(0xA5 ^ (i * 29));
}

static void
jit_error(Module *m, LLVMErrorRef e, const char *what)
{
    char *msg = LLVMGetErrorMessage(e);
    diag_error(m->ctx, NULL, "codegen: %s: %s", what, msg ? msg : "?");
    LLVMDisposeErrorMessage(msg);
}

/* The JIT runs the code in this process: refuse a target of another architecture or with an
 * ISA extension the host lacks (running it would crash with SIGSEGV/SIGILL). */
static bool
jit_runs_on_host(Module *m, const CgTarget *t)
{
    CgTarget h;
    char err[256];
    if (!cg_target_host(&h, err, sizeof err)) {
        diag_error(m->ctx, NULL, "codegen: cannot JIT: %s", err);
        return false;
    }
    if (h.x86 != t->x86 || h.aarch64 != t->aarch64) {
        diag_error(m->ctx, NULL, "codegen: cannot JIT for target '%s' on this host (%s); "
                   "compile it to an object instead", t->triple, h.triple);
        return false;
    }
    const char *missing = cg_target_missing_flag(t, &h);
    if (missing) {
        diag_error(m->ctx, NULL, "codegen: cannot JIT: target feature '%s' is not "
                   "available on this host", missing);
        return false;
    }
    return true;
}

/* The address of the public function PREFIX_<what>; false with a diagnostic. */
static bool
jit_lookup(CgJitModel *j, Module *m, const char *prefix, const char *what,
           LLVMOrcExecutorAddress *addr)
{
    char name[128];
    snprintf(name, sizeof name, "%s_%s", prefix, what);
    LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, addr, name);
    if (e)
        jit_error(m, e, "JIT lookup");
    return !e;
}

CgJitModel *
cg_jit_model_create(Module *m, const CgOptions *o)
{
    CgBuilt b;
    if (!cg_build(m, o, &b))
        return NULL;
    if (!jit_runs_on_host(m, &b.t)) {
        cg_built_free(&b);
        return NULL;
    }
    CgJitModel *j = try_calloc(1, sizeof *j);
    if (!j) {
        cg_built_free(&b);
        oom_raise("JIT session");
    }
    /* The JTMB takes the TargetMachine over. */
    LLVMOrcJITTargetMachineBuilderRef jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(b.tm);
    oom_undefer(b.tm);
    b.tm = NULL;
    LLVMOrcLLJITBuilderRef lb = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(lb, jtmb);
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, lb);
    if (e) {
        jit_error(m, e, "cannot create LLJIT");
        cg_built_free(&b);
        free(j);
        return NULL;
    }
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
    LLVMOrcDefinitionGeneratorRef gen = NULL;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->jit),
                                                             NULL, NULL);
    if (e) {
        jit_error(m, e, "cannot resolve host symbols");
        goto fail;
    }
    LLVMOrcJITDylibAddGenerator(jd, gen);
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContextFromLLVMContext(b.ctx);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(b.mod, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc);
    oom_undefer(b.ctx);
    b.ctx = NULL;
    b.mod = NULL;
    e = LLVMOrcLLJITAddLLVMIRModule(j->jit, jd, tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        jit_error(m, e, "cannot add the module to the JIT");
        goto fail;
    }
    LLVMOrcExecutorAddress run = 0, prof = 0, shapes = 0;
    double t0 = clock_ms(); /* the first lookup compiles the module to machine code */
    if (!jit_lookup(j, m, o->prefix, "run_ex", &run) ||
        (o->profile && !jit_lookup(j, m, o->prefix, "run_profile", &prof)) ||
        (o->dyn && !jit_lookup(j, m, o->prefix, "run_shapes", &shapes)))
        goto fail;
    j->run = (RunExFn)(uintptr_t)run;
    j->run_profile = (RunProfileFn)(uintptr_t)prof;
    j->run_shapes = (RunShapesFn)(uintptr_t)shapes;
    ctx_phase_end(m->ctx, m->filename, "jit", t0);
    j->steps = b.steps; /* the session takes the step table over */
    j->nsteps = b.nsteps;
    b.steps = NULL;
    b.nsteps = 0;
    j->ws_size = (size_t)b.workspace;
    j->ctx = m->ctx;
    /* aligned_alloc wants a multiple of the alignment: the planner's size is one (or 0) */
    j->ws = j->ws_size <= SIZE_MAX - 64 - JIT_CANARY && !qdqc_alloc_fails()
                ? aligned_alloc(64, (j->ws_size + 63) / 64 * 64 + JIT_CANARY) : NULL;
    if (j->ws)
        for (size_t i = 0; i < JIT_CANARY; i++)
            ((uint8_t *)j->ws)[j->ws_size + i] = canary_byte(i);
    if (!j->ws) {
        size_t ws = j->ws_size;
        cg_built_free(&b);
        cg_jit_model_destroy(j);
        oom_raise("the JIT session's workspace of %zu bytes", ws);
    }
    cg_built_free(&b);
    return j;
fail:
    cg_built_free(&b);
    cg_jit_model_destroy(j);
    return NULL;
}

/* After a run: the workspace canary intact, the status 0; else a diagnostic. */
static bool
run_finished(CgJitModel *j, int st)
{
    for (size_t i = 0; i < JIT_CANARY; i++)
        if (((const uint8_t *)j->ws)[j->ws_size + i] != canary_byte(i)) {
            diag_error(j->ctx, NULL, "codegen: the compiled model wrote past the end of its "
                       "%zu-byte workspace (byte %zu after it; a code generator bug)",
                       j->ws_size, i);
            for (size_t r = 0; r < JIT_CANARY; r++)
                ((uint8_t *)j->ws)[j->ws_size + r] = canary_byte(r);
            return false;
        }
    if (st != QDQC_OK) {
        diag_error(j->ctx, NULL, "compiled model: a run-time check failed (a quantize or "
                   "dequantize scale input that is not positive and finite, a dynamic_quantize "
                   "of NaN or infinity, or a gather index outside its axis; status %d)", st);
        return false;
    }
    return true;
}

bool
cg_jit_model_run(CgJitModel *j, const void *const *in, void *const *out, CgParallelFor pf,
                 void *pf_ctx, CgStepHook hook, void *hook_ctx)
{
    if (!j || !j->run || (hook && !j->run_profile))
        return false;
    int st = hook ? j->run_profile(in, out, j->ws, pf, pf_ctx, hook, hook_ctx)
                  : j->run(in, out, j->ws, pf, pf_ctx);
    return run_finished(j, st);
}

int
cg_jit_model_run_shapes(CgJitModel *j, const int64_t *const *in_shapes, const void *const *in,
                        int64_t *const *out_shapes, void *const *out, CgParallelFor pf,
                        void *pf_ctx)
{
    if (!j || !j->run_shapes)
        return QDQC_ERR_INVALID_ARG;
    int st = j->run_shapes(in_shapes, in, out_shapes, out, j->ws, pf, pf_ctx);
    if (st == QDQC_ERR_INVALID_ARG) {
        diag_error(j->ctx, NULL, "the input shapes do not conform to the model's (a fixed "
                   "dimension differs, the inputs disagree on the run-time dimension, or it "
                   "is outside its range)");
        return st;
    }
    return run_finished(j, st) ? QDQC_OK : QDQC_ERR_RUNTIME;
}

const CgStep *
cg_jit_model_steps(const CgJitModel *j, size_t *n)
{
    *n = j ? j->nsteps : 0;
    return j ? j->steps : NULL;
}

bool
cg_jit_model_profiled(const CgJitModel *j)
{
    return j && j->run_profile;
}

size_t
cg_jit_model_workspace_size(const CgJitModel *j)
{
    return j ? j->ws_size : 0;
}

void
cg_jit_model_destroy(CgJitModel *j)
{
    if (!j)
        return;
    if (j->jit) {
        LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
        if (e)
            LLVMConsumeError(e);
    }
    free(j->ws);
    free(j->steps);
    free(j);
}
