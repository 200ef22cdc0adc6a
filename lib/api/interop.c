/* interop.c: public entry points of the MLIR interop (include/qdqc/qdqc.h): import from MLIR
 * text in memory and export of the integer graph as MLIR (lib/mlir/import.c,
 * lib/mlir/export.c; without MLIR both report that they are unavailable). */
#include "mlir/export.h"
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
    /* MLIR calls back into the library (diagnostics): no out-of-memory trap may span its C++
     * frames, so an allocation failure here aborts (docs/api.md, "Out of memory") */
    double t0 = clock_ms();
    OomTrap none;
    oom_trap_push_abort(&none);
    Module *m = imp_mlir(ctx, text ? text : "", len, filename ? filename : "<memory>");
    qdqc_status st = QDQC_OK;
    if (!m) {
        st = QDQC_ERR_IMPORT;
    } else if (!ir_verify(&m->g)) {
        ir_module_destroy(m);
        st = QDQC_ERR_VERIFY;
    } else {
        *out = m;
        ctx_phase_end(ctx, m->filename, "import", t0);
    }
    oom_trap_pop(&none);
    return st;
}

char *
qdqc_module_print_mlir(const qdqc_module *m)
{
    if (!m || !ir_require_static((Graph *)&m->g, "the MLIR export"))
        return NULL;
    OomTrap none; /* as above: MLIR verifies the text with a diagnostic callback */
    oom_trap_push_abort(&none);
    char *s = exp_mlir((Module *)m);
    oom_trap_pop(&none);
    return s;
}
