/* se_step.h: the function of a squeeze-excitation step (se_step.c); internal to lib/codegen. */
#ifndef QDQC_CODEGEN_SE_STEP_H
#define QDQC_CODEGEN_SE_STEP_H

#include "codegen/plan/plan.h"

/* Emit step s of p, a squeeze-excitation group (p->se_of[p->steps[s]] != 0), as one internal
 * function; *ok false (message in k's err) if a member cannot be lowered. */
LLVMValueRef
cg_emit_se_step(Kb *k, const CgPlan *p, uint32_t s, bool *ok);

#endif
