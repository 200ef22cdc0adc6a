/* emit_obj.c: the AOT outputs of a compiled graph: object file, assembly (through the
 * TargetMachine of cg_build), LLVM IR as text or bitcode and the C header of the ABI
 * (docs/abi.md, text from abi.c); several of them from one build. */
#include "codegen/codegen.h"

#include "support/support.h"

#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* malloc'd, NUL-terminated copy of a memory buffer (disposed) */
static char *
take_buffer(LLVMMemoryBufferRef buf, size_t *len)
{
    *len = LLVMGetBufferSize(buf);
    char *s = try_malloc(*len + 1);
    if (s) {
        memcpy(s, LLVMGetBufferStart(buf), *len);
        s[*len] = 0;
    }
    LLVMDisposeMemoryBuffer(buf);
    return s;
}

bool
cg_compile_kinds(Module *m, const CgOptions *o, size_t n, const CgEmitKind *kinds, char **outs,
                 size_t *lens)
{
    for (size_t i = 0; i < n; i++) {
        outs[i] = NULL;
        lens[i] = 0;
    }
    CgBuilt b;
    if (!cg_build(m, o, &b))
        return false;
    /* The machine-code pipeline rewrites the module it runs on, so the IR kinds go first and
     * every object/assembly emission but the last runs on a clone. */
    size_t nmachine = 0;
    for (size_t i = 0; i < n; i++)
        nmachine += kinds[i] == CG_EMIT_OBJ || kinds[i] == CG_EMIT_ASM;
    bool ok = true;
    size_t oom_bytes = 0; /* an output buffer that could not be allocated */
    for (int pass = 0; pass < 2 && ok; pass++) {
        for (size_t i = 0; i < n && ok; i++) {
            CgEmitKind kind = kinds[i];
            bool machine = kind == CG_EMIT_OBJ || kind == CG_EMIT_ASM;
            if (machine != (pass == 1))
                continue;
            if (kind == CG_EMIT_HEADER) {
                outs[i] = cg_header_text(m, o, (size_t)b.workspace, b.steps, b.nsteps);
                lens[i] = outs[i] ? strlen(outs[i]) : 0;
            } else if (kind == CG_EMIT_LLVM) {
                char *s = LLVMPrintModuleToString(b.mod);
                lens[i] = strlen(s);
                outs[i] = try_malloc(lens[i] + 1);
                if (outs[i])
                    memcpy(outs[i], s, lens[i] + 1);
                LLVMDisposeMessage(s);
            } else if (kind == CG_EMIT_BITCODE) {
                outs[i] = take_buffer(LLVMWriteBitcodeToMemoryBuffer(b.mod), &lens[i]);
            } else {
                double t0 = clock_ms();
                LLVMModuleRef mod = --nmachine ? LLVMCloneModule(b.mod) : b.mod;
                char *msg = NULL;
                LLVMMemoryBufferRef buf = NULL;
                if (LLVMTargetMachineEmitToMemoryBuffer(
                        b.tm, mod, kind == CG_EMIT_ASM ? LLVMAssemblyFile : LLVMObjectFile, &msg,
                        &buf)) {
                    diag_error(m->ctx, NULL, "codegen: cannot emit: %s", msg ? msg : "?");
                    LLVMDisposeMessage(msg);
                    ok = false;
                } else {
                    outs[i] = take_buffer(buf, &lens[i]);
                    ctx_phase_end(m->ctx, m->filename, kind == CG_EMIT_ASM ? "emit-asm" : "emit-obj",
                                  t0);
                }
                if (mod != b.mod)
                    LLVMDisposeModule(mod);
            }
            if (ok && !outs[i]) {
                oom_bytes = lens[i] + 1;
                ok = false;
            }
        }
    }
    cg_built_free(&b);
    if (!ok)
        for (size_t i = 0; i < n; i++) {
            free(outs[i]);
            outs[i] = NULL;
            lens[i] = 0;
        }
    if (oom_bytes)
        oom_raise("the compiled output of %zu bytes", oom_bytes);
    return ok;
}

bool
cg_compile_to_memory(Module *m, const CgOptions *o, CgEmitKind kind, char **out, size_t *len)
{
    return cg_compile_kinds(m, o, 1, &kind, out, len);
}
