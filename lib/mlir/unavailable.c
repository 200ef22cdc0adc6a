/* unavailable.c: stand-ins for the MLIR reader and writer in builds without MLIR
 * (QDQC_ENABLE_MLIR=OFF); each reports a clear error. */
#include "import/import.h"
#include "mlir/export.h"

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

char *
exp_mlir(Module *m)
{
    diag_error(m->ctx, &(Loc){.file = m->filename},
               "MLIR export is not available in this build (QDQC_ENABLE_MLIR=OFF)");
    return NULL;
}
#endif
