/* dynamic.h: compiling a module whose symbol has a run-time range (dynamic.c). */
#ifndef QDQC_API_DYNAMIC_H
#define QDQC_API_DYNAMIC_H

#include "codegen/codegen.h"

/* If m has a symbol with a run-time range (--dim NAME=LO..HI): specialise m at 1, 2 and 3, run
 * its deferred passes on each, check that the symbol is a batch dimension (ir_batch_check) and
 * return 1 with *unit = the module at 1 (owned by the caller) and d filled (free with
 * api_dyn_free). 0: m has no such symbol (nothing held). -1: an error was reported. */
int api_dyn_prepare(Module *m, Module **unit, CgDyn *d);
void api_dyn_free(CgDyn *d);

#endif
