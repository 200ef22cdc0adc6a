/* compare_cmd.h: `qdqc compare FLOAT.onnx QDQ.onnx`: where the accuracy goes. Runs the float
 * model and the QDQ graph as written on the reference interpreter and the compiled code on
 * the JIT, over the same inputs, matches the quantized tensors to the float ones by name and
 * reports per tensor the quantizer's error (float -> QDQ) and qdqc's own (QDQ -> compiled),
 * the quantization parameters against the observed ranges, as text, JSON or an SVG plot. */
#ifndef QDQC_TOOL_COMPARE_CMD_H
#define QDQC_TOOL_COMPARE_CMD_H

#include <qdqc/qdqc.h>

/* argv: the arguments after "compare". Returns an exit code: 0 ok, 1 bad input (diagnostics
 * printed) or a failed write, 2 usage error. */
int qdqc_cli_compare(qdqc_context *ctx, qdqc_compile_options *copts, int argc, char **argv);

#endif
