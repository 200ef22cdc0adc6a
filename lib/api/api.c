/* api.c: the public C API over the internal modules (include/qdqc/qdqc.h).
 * Entry points check their arguments, translate results into status codes and leave
 * diagnostics in the context; nothing here prints or exits. */
#include "import/import.h"
#include "ir/ir.h"
#include "transforms/pass.h"

#include <string.h>

#define MAX_MODEL_BYTES ((size_t)4 << 30) /* 4 GiB */

static qdqc_status
finish_load(qdqc_context *ctx, Module *m, qdqc_status fail, qdqc_module **out)
{
    if (!m)
        return fail;
    if (!ir_verify(&m->g)) {
        ir_module_destroy(m);
        return QDQC_ERR_VERIFY;
    }
    (void)ctx;
    *out = m;
    return QDQC_OK;
}

qdqc_status
qdqc_module_parse(qdqc_context *ctx, const char *text, size_t len, const char *filename,
                  qdqc_module **out)
{
    if (!ctx || !out || (!text && len))
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    Module *m = ir_parse(ctx, text ? text : "", len, filename);
    return finish_load(ctx, m, QDQC_ERR_PARSE, out);
}

qdqc_status
qdqc_module_import_onnx_bytes(qdqc_context *ctx, const void *data, size_t len,
                              const char *filename, qdqc_module **out)
{
    if (!ctx || !out || (!data && len))
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    Module *m = imp_onnx(ctx, data, len, filename ? filename : "<memory>");
    return finish_load(ctx, m, QDQC_ERR_IMPORT, out);
}

qdqc_status
qdqc_module_import_onnx_file(qdqc_context *ctx, const char *path, qdqc_module **out)
{
    if (!ctx || !out || !path)
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    size_t len;
    char *buf = read_file_all(ctx, path, MAX_MODEL_BYTES, &len);
    if (!buf)
        return QDQC_ERR_IO;
    Module *m = imp_onnx(ctx, buf, len, path);
    free(buf);
    return finish_load(ctx, m, QDQC_ERR_IMPORT, out);
}

static bool
ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

qdqc_status
qdqc_module_load_file(qdqc_context *ctx, const char *path, qdqc_module **out)
{
    if (!ctx || !out || !path)
        return QDQC_ERR_INVALID_ARG;
    if (ends_with(path, ".onnx"))
        return qdqc_module_import_onnx_file(ctx, path, out);
    *out = NULL;
    size_t len;
    char *buf = read_file_all(ctx, path, MAX_MODEL_BYTES, &len);
    if (!buf)
        return QDQC_ERR_IO;
    qdqc_status st;
    if (ends_with(path, ".mlir")) {
        Module *m = imp_mlir(ctx, buf, len, path);
        st = finish_load(ctx, m, QDQC_ERR_IMPORT, out);
    } else {
        st = qdqc_module_parse(ctx, buf, len, path, out);
    }
    free(buf);
    return st;
}

void
qdqc_module_destroy(qdqc_module *m)
{
    ir_module_destroy(m);
}

char *
qdqc_module_print(const qdqc_module *m)
{
    if (!m)
        return NULL;
    return ir_print((Graph *)&m->g);
}

qdqc_status
qdqc_module_verify(qdqc_module *m)
{
    if (!m)
        return QDQC_ERR_INVALID_ARG;
    return ir_verify(&m->g) ? QDQC_OK : QDQC_ERR_VERIFY;
}

qdqc_status
qdqc_module_run_passes(qdqc_module *m, const char *pipeline)
{
    if (!m)
        return QDQC_ERR_INVALID_ARG;
    return pass_run_pipeline(m, pipeline) ? QDQC_OK : QDQC_ERR_PASS;
}

size_t
qdqc_pass_count(void)
{
    return pass_count();
}

const char *
qdqc_pass_name(size_t i)
{
    const PassInfo *p = pass_at(i);
    return p ? p->name : NULL;
}

const char *
qdqc_pass_description(size_t i)
{
    const PassInfo *p = pass_at(i);
    return p ? p->description : NULL;
}
