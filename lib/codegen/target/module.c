/* target/module.c: module setup, pass pipeline, object/assembly emission and the LLJIT wrapper used
 * by the kernel emitters and their tests (see target/module.h). No global state. */
#include "codegen/target/module.h"

#include "support/support.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Consumes e; copies its message into err. */
static void
take_error(LLVMErrorRef e, const char *what, char *err, size_t errlen)
{
    char *msg = LLVMGetErrorMessage(e);
    errbuf_fail(err, errlen, "%s: %s", what, msg ? msg : "?");
    LLVMDisposeErrorMessage(msg);
}

bool
cg_module_create(const char *name, LLVMTargetMachineRef tm, LLVMContextRef *ctx,
                 LLVMModuleRef *mod, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    LLVMContextRef c = LLVMContextCreate();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext(name, c);
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(m, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(m, dl);
    LLVMDisposeTargetData(dl);
    *ctx = c;
    *mod = m;
    return true;
}

void
cg_module_destroy(LLVMContextRef ctx, LLVMModuleRef mod)
{
    if (mod)
        LLVMDisposeModule(mod);
    if (ctx)
        LLVMContextDispose(ctx);
}

bool
cg_module_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *passes, char *err,
                   size_t errlen)
{
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        errbuf_fail(err, errlen, "invalid IR: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMDisposeMessage(msg);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    /* LLVM 22's default<O2> runs the SLP vectoriser whatever LLVMPassBuilderOptionsSet-
     * SLPVectorization says (the IR is the same with 0 and 1), and it pays: without it
     * (-vectorize-slp=false) MobileNetV3-small ran 3.1 -> 5.1 ms, ShuffleNetV2 2.23 -> 2.38 ms
     * (docs/performance.md, "Compile time"). */
    LLVMErrorRef e = LLVMRunPasses(mod, passes ? passes : "default<O3>", tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (e) {
        take_error(e, "pass pipeline", err, errlen);
        return false;
    }
    return true;
}

bool
cg_module_emit_file(LLVMModuleRef mod, LLVMTargetMachineRef tm, bool as_asm, const char *path,
                    char *err, size_t errlen)
{
    char *msg = NULL;
    if (LLVMTargetMachineEmitToFile(tm, mod, path, as_asm ? LLVMAssemblyFile : LLVMObjectFile,
                                    &msg)) {
        errbuf_fail(err, errlen, "cannot write '%s': %s", path, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    return true;
}

char *
cg_module_emit_asm(LLVMModuleRef mod, LLVMTargetMachineRef tm, char *err, size_t errlen)
{
    char *msg = NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &buf)) {
        errbuf_fail(err, errlen, "cannot emit assembly: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    size_t n = LLVMGetBufferSize(buf);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, LLVMGetBufferStart(buf), n);
        s[n] = 0;
    } else {
        errbuf_fail(err, errlen, "out of memory");
    }
    LLVMDisposeMemoryBuffer(buf);
    return s;
}

void
cg_function_set_target(LLVMValueRef fn, const CgTarget *t, unsigned vector_bits)
{
    LLVMContextRef c = LLVMGetTypeContext(LLVMTypeOf(fn));
    const char *cpu = t->cpu[0] ? t->cpu : "generic";
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(c, "target-cpu", 10, cpu,
                                                      (unsigned)strlen(cpu)));
    if (t->features[0])
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(c, "target-features", 15, t->features,
                                                          (unsigned)strlen(t->features)));
    if (vector_bits) {
        char num[16];
        snprintf(num, sizeof num, "%u", vector_bits);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(c, "min-legal-vector-width", 22, num,
                                                          (unsigned)strlen(num)));
    }
}

struct CgJit {
    LLVMOrcLLJITRef jit;
};

CgJit *
cg_jit_create(const CgTarget *t, char *err, size_t errlen)
{
    LLVMTargetMachineRef tm;
    if (!cg_target_machine_create(t, &tm, err, errlen))
        return NULL;
    CgJit *j = calloc(1, sizeof *j);
    if (!j) {
        LLVMDisposeTargetMachine(tm);
        errbuf_fail(err, errlen, "out of memory");
        return NULL;
    }
    /* The builder takes the JTMB, which took the TargetMachine. */
    LLVMOrcJITTargetMachineBuilderRef jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm);
    LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b, jtmb);
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, b);
    if (e) {
        take_error(e, "cannot create LLJIT", err, errlen);
        free(j);
        return NULL;
    }
    return j;
}

bool
cg_jit_add(CgJit *j, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t errlen)
{
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContextFromLLVMContext(ctx);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc);
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(j->jit, jd, tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        take_error(e, "cannot add module to the JIT", err, errlen);
        return false;
    }
    return true;
}

void *
cg_jit_lookup(CgJit *j, const char *name, char *err, size_t errlen)
{
    LLVMOrcExecutorAddress addr = 0;
    LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, &addr, name);
    if (e) {
        take_error(e, "JIT lookup", err, errlen);
        return NULL;
    }
    return (void *)(uintptr_t)addr;
}

void
cg_jit_destroy(CgJit *j)
{
    if (!j)
        return;
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
    if (e)
        LLVMConsumeError(e);
    free(j);
}
