/* llvm_kernels_float.c: float-island kernels (f32, ONNX semantics) for the float ops the reader
 * accepts, matching lib/ref/ref_elem.c. Element-wise ops with numpy broadcasting; transcendental
 * functions call libm (expf, tanhf, erff), which the JIT resolves in the host process and an
 * object links against (-lm). */
#include "codegen/codegen.h"

#include <llvm-c/Core.h>

#include <string.h>

bool
cg_emit_float(Kb *k, Node *n, const CgNodeArgs *a)
{
    (void)a;
    return cg_fail(k, n, "%s is not supported by the code generator yet", op_info(n->op)->name);
}
