/* pending.c: placeholders for readers still being written; each reports a clear error.
 * Removed as the real readers land (mlir_import.c); the ONNX reader is onnx.c. */
#include "import.h"

#ifndef QDQC_HAVE_MLIR
Module *
imp_mlir(qdqc_context *ctx, const char *text, size_t len, const char *path)
{
    (void)text;
    (void)len;
    Loc l = {.file = path};
    diag_error(ctx, &l, "MLIR import is not available in this build (QDQC_ENABLE_MLIR=OFF)");
    return NULL;
}
#endif
