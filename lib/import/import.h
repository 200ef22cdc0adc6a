/* import.h: readers that build qdqc IR from other formats (internal).
 * Each returns a new module, or NULL with diagnostics in ctx. They never print or exit. */
#ifndef QDQC_IMPORT_H
#define QDQC_IMPORT_H

#include "ir/ir.h"

/* ONNX protobuf from memory. `path` names the model in diagnostics and locates external data
 * (resolved relative to its folder; NULL forbids external data). */
Module *imp_onnx(qdqc_context *ctx, const void *data, size_t len, const char *path);
/* MLIR module text using the quant and tosa dialects (through the MLIR C API). */
Module *imp_mlir(qdqc_context *ctx, const char *text, size_t len, const char *path);

#endif
