/* interop.c: public entry points of the MLIR interop (include/qdqc/qdqc.h): import from MLIR
 * text in memory and export of the integer graph as MLIR (lib/import/mlir_import.c,
 * lib/codegen/mlir_export.c; without MLIR both report that they are unavailable). */
#include "codegen/mlir_export.h"
#include "import/import.h"
#include "ir/ir.h"

qdqc_status
qdqc_module_import_mlir(qdqc_context *ctx, const char *text, size_t len, const char *filename,
                        qdqc_module **out)
{
    if (!ctx || !out || (!text && len))
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    if (ctx->const_inputs.len) {
        diag_error(ctx, NULL, "const inputs ('%s') apply to ONNX models only, not to MLIR",
                   ctx->const_inputs.data[0].name);
        return QDQC_ERR_INVALID_ARG;
    }
    Module *m = imp_mlir(ctx, text ? text : "", len, filename ? filename : "<memory>");
    if (!m)
        return QDQC_ERR_IMPORT;
    if (!ir_verify(&m->g)) {
        ir_module_destroy(m);
        return QDQC_ERR_VERIFY;
    }
    *out = m;
    return QDQC_OK;
}

char *
qdqc_module_print_mlir(const qdqc_module *m)
{
    if (!m)
        return NULL;
    return exp_mlir((Module *)m);
}
