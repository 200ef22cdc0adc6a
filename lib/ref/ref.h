/* ref.h: the reference interpreter of qdqc (plain C, no LLVM).
 *
 * Executes a module's graph at any point of the pipeline. Before the passes a graph holds
 * quantize/dequantize nodes around float ops and the interpreter computes their literal ONNX
 * semantics (dequantize, float op in f32, quantize with a true f32 division and round half to
 * even); after the passes it computes the integer ops exactly as docs/numerics.md defines them,
 * through the functions of lib/numerics. It is the oracle of the numeric tests: compiled code must
 * reproduce its integer results bit for bit.
 *
 * Anything it does not implement is refused with an error diagnostic at the node (never zeros).
 * Tensors are bounded (REF_MAX_TENSOR_BYTES each); size arithmetic is overflow-checked. */
#ifndef QDQC_REF_H
#define QDQC_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

#define REF_MAX_TENSOR_BYTES ((size_t)1 << 32) /* 4 GiB per tensor */

/* A tensor with owned data (malloc): elem_size(type.elem) bytes per element, little-endian,
 * C order; i4/u4 and bool take one byte per element. type.q is informational. */
typedef struct RefTensor {
    Type type;
    void *data;
    size_t nbytes;
} RefTensor;

/* Allocate zeroed storage for `type`. False (t cleared) if the size overflows or exceeds
 * REF_MAX_TENSOR_BYTES; a failed allocation below that is out of memory (oom_raise). */
bool ref_tensor_alloc(RefTensor *t, const Type *type);
void ref_tensor_free(RefTensor *t); /* NULL-safe; leaves t cleared */

/* Run the graph of m. inputs[i] must match graph input i in element type and shape (nin must
 * equal the number of graph inputs). On success outputs[0..nout) are allocated and filled
 * (free each with ref_tensor_free); nout must equal the number of graph outputs.
 * requant_fixed selects the fixed-point requantization of integer ops (--requant=fixed).
 * On failure returns false with diagnostics in m->ctx and leaves outputs cleared. */
bool ref_run(Module *m, const RefTensor *inputs, uint32_t nin, RefTensor *outputs,
             uint32_t nout, bool requant_fixed);

#endif
