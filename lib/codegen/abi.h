/* abi.h: the public functions of a compiled model (abi.c; docs/abi.md), emitted after the
 * steps: cg_build (build.c) calls it, and nothing below lib/codegen's top files does. */
#ifndef QDQC_CODEGEN_ABI_H
#define QDQC_CODEGEN_ABI_H

#include "codegen/plan/plan.h"

struct CgDyn;

/* The C ABI (abi.c): PREFIX_run_ex (calling fns[s] for step s of p), PREFIX_run,
 * PREFIX_workspace_size; with profile also PREFIX_run_profile (the step hook around every step);
 * with dyn also PREFIX_run_shapes (a run-time batch dimension, codegen.h). */
void
cg_emit_abi(Kb *k, CgPlan *p, const LLVMValueRef *fns, bool profile, const struct CgDyn *dyn);

/* The prefix of the graph compiled at dyn's chunk size, whose run_ex PREFIX_run_shapes calls
 * (internal to the module): PREFIX_b<chunk>, or qdqc_b<chunk> when PREFIX is too long. */
void
cg_dyn_chunk_prefix(const char *prefix, const struct CgDyn *dyn, char *out, size_t n);

#endif
