/* target/module.h: small LLVM C API helpers shared by the kernel emitters and their tests: module
 * setup for a TargetMachine, the new-pass-manager pipeline, object/assembly emission and an
 * ORC LLJIT wrapper.
 *
 * The LLVM handle types are declared here with llvm-c's own spelling (a repeated identical
 * typedef is valid C11), so tests and callers can hold them without LLVM's include path; only
 * the .c files include llvm-c. The library never prints: every failure comes back as false/NULL
 * with a message in err.
 */
#ifndef QDQC_CODEGEN_CG_UTIL_H
#define QDQC_CODEGEN_CG_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/target/target.h"

typedef struct LLVMOpaqueContext *LLVMContextRef;
typedef struct LLVMOpaqueModule *LLVMModuleRef;
typedef struct LLVMOpaqueValue *LLVMValueRef;
typedef struct LLVMOpaqueBuilder *LLVMBuilderRef;

/* A fresh context and an empty module in it, with t's triple, data layout (from tm) set. */
bool
cg_module_create(const char *name, LLVMTargetMachineRef tm, LLVMContextRef *ctx,
                 LLVMModuleRef *mod, char *err, size_t errlen);

/* Dispose of a module and its context (either may be NULL). */
void
cg_module_destroy(LLVMContextRef ctx, LLVMModuleRef mod);

/* Verify, then run `passes` (NULL = "default<O3>") with LLVMRunPasses. */
bool
cg_module_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *passes, char *err,
                   size_t errlen);

/* Give the internal functions of mod that differ only in the private constant globals they
 * read one body (merge.c): returns how many functions now call a shared body. */
unsigned
cg_module_merge(LLVMModuleRef mod);

/* Write an object file (as_asm false) or assembly to path. */
bool
cg_module_emit_file(LLVMModuleRef mod, LLVMTargetMachineRef tm, bool as_asm, const char *path,
                    char *err, size_t errlen);

/* Assembly text as a malloc'd string (free()), NULL on failure. */
char *
cg_module_emit_asm(LLVMModuleRef mod, LLVMTargetMachineRef tm, char *err, size_t errlen);

/* Attach target-cpu / target-features (and, when vector_bits > 0, min-legal-vector-width) to
 * a function, as clang does, so the IR is self-describing for inlining and for the JIT. */
void
cg_function_set_target(LLVMValueRef fn, const CgTarget *t, unsigned vector_bits);

/* ORC LLJIT over a TargetMachine made from t (so kernels JIT with exactly t's features). */
typedef struct CgJit CgJit;

CgJit *
cg_jit_create(const CgTarget *t, char *err, size_t errlen);

/* Adds an (optimised) module; takes ownership of both ctx and mod, even on failure. */
bool
cg_jit_add(CgJit *j, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t errlen);

/* Address of a JIT'd symbol, NULL (message in err) if absent. */
void *
cg_jit_lookup(CgJit *j, const char *name, char *err, size_t errlen);

void
cg_jit_destroy(CgJit *j);

#endif
