/* api.c: the public C API over the internal modules (include/qdqc/qdqc.h).
 * Entry points check their arguments, translate results into status codes and leave
 * diagnostics in the context; nothing here prints or exits. Entry points that allocate arm an
 * out-of-memory trap (OOM_TRAP_ENTER, lib/support/support.h): an allocation failure below
 * returns QDQC_ERR_NOMEM (NULL for the char * results) with "out of memory" in the context. */
#include "import/import.h"
#include "ir/ir.h"
#include "runtime/npy.h"
#include "transforms/pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODEL_BYTES ((size_t)4 << 30) /* 4 GiB */

static void
destroy_module(void *m)
{
    ir_module_destroy(m);
}

static qdqc_status
finish_load(qdqc_context *ctx, Module *m, qdqc_status fail, qdqc_module **out, double t0)
{
    if (!m)
        return fail;
    oom_defer(destroy_module, m);
    bool ok = ir_verify(&m->g);
    oom_undefer(m);
    if (!ok) {
        ir_module_destroy(m);
        return QDQC_ERR_VERIFY;
    }
    *out = m;
    ctx_phase_end(ctx, m->filename, "import", t0);
    return QDQC_OK;
}

/* ---- const inputs (--const-input): applied by the ONNX importer ---- */
static qdqc_status
add_const_input(qdqc_context *ctx, const char *name, size_t name_len, const char *origin,
                ElemType e, int rank, const int64_t *dims, const void *data, size_t nbytes)
{
    for (uint32_t i = 0; i < ctx->const_inputs.len; i++) {
        const ConstInput *c = &ctx->const_inputs.data[i];
        if (strlen(c->name) == name_len && memcmp(c->name, name, name_len) == 0) {
            diag_error(ctx, NULL, "const input '%.*s' is given twice (%s and %s)",
                       (int)name_len, name, c->origin, origin);
            return QDQC_ERR_INVALID_ARG;
        }
    }
    ConstInput c = {0};
    c.name = xstrndup(name, name_len);
    c.origin = xstrdup(origin);
    snprintf(c.elem, sizeof c.elem, "%s", elem_name(e));
    c.rank = rank;
    if (rank)
        memcpy(c.dims, dims, (size_t)rank * sizeof(int64_t));
    c.data = xmalloc(nbytes ? nbytes : 1);
    if (nbytes)
        memcpy(c.data, data, nbytes);
    c.nbytes = nbytes;
    vec_push(&ctx->const_inputs, c);
    return QDQC_OK;
}

qdqc_status
qdqc_context_add_const_input(qdqc_context *ctx, const char *spec)
{
    if (!ctx || !spec)
        return QDQC_ERR_INVALID_ARG;
    OOM_TRAP_ENTER(trap, ctx, NULL, QDQC_ERR_NOMEM);
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
        diag_error(ctx, NULL, "const input '%s': expected NAME=FILE.npy", spec);
        OOM_TRAP_LEAVE(trap);
        return QDQC_ERR_INVALID_ARG;
    }
    const char *path = eq + 1;
    NpyArray a;
    char err[512];
    if (!npy_read_file(path, &a, err, sizeof err)) {
        diag_error(ctx, NULL, "const input '%.*s': %s", (int)(eq - spec), spec, err);
        OOM_TRAP_LEAVE(trap);
        return QDQC_ERR_IO;
    }
    ElemType e = elem_from_name(npy_type_name(a.type), strlen(npy_type_name(a.type)));
    QDQC_ASSERT(e != ET_NONE);
    oom_defer(free, a.data);
    qdqc_status st = add_const_input(ctx, spec, (size_t)(eq - spec), path, e, a.rank, a.dims,
                                     a.data, a.nbytes);
    oom_undefer(a.data);
    npy_free(&a);
    OOM_TRAP_LEAVE(trap);
    return st;
}

qdqc_status
qdqc_context_add_const_input_data(qdqc_context *ctx, const char *name, const char *elem_type,
                                  int rank, const int64_t *dims, const void *data,
                                  size_t nbytes)
{
    if (!ctx || !name || !*name || !elem_type || rank < 0 || rank > 8 || (rank && !dims) ||
        (nbytes && !data))
        return QDQC_ERR_INVALID_ARG;
    ElemType e = elem_from_name(elem_type, strlen(elem_type));
    if (e == ET_NONE) {
        diag_error(ctx, NULL, "const input '%s': unknown element type '%s'", name, elem_type);
        return QDQC_ERR_INVALID_ARG;
    }
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0 || !size_mul(n, (size_t)dims[i], &n)) {
            diag_error(ctx, NULL, "const input '%s': invalid dimensions", name);
            return QDQC_ERR_INVALID_ARG;
        }
    size_t want;
    if (!size_mul(n, elem_size(e), &want) || want != nbytes) {
        diag_error(ctx, NULL, "const input '%s': %zu bytes of data for %zu %s elements", name,
                   nbytes, n, elem_type);
        return QDQC_ERR_INVALID_ARG;
    }
    OOM_TRAP_ENTER(trap, ctx, NULL, QDQC_ERR_NOMEM);
    qdqc_status st = add_const_input(ctx, name, strlen(name), "<memory>", e, rank, dims, data,
                                     nbytes);
    OOM_TRAP_LEAVE(trap);
    return st;
}

/* Const inputs are an ONNX import option: other loaders refuse them rather than ignore them. */
static bool
no_const_inputs(qdqc_context *ctx, const char *what)
{
    if (!ctx->const_inputs.len)
        return true;
    diag_error(ctx, NULL, "const inputs ('%s') apply to ONNX models only, not to %s",
               ctx->const_inputs.data[0].name, what);
    return false;
}

qdqc_status
qdqc_module_parse(qdqc_context *ctx, const char *text, size_t len, const char *filename,
                  qdqc_module **out)
{
    if (!ctx || !out || (!text && len))
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    if (!no_const_inputs(ctx, "text IR"))
        return QDQC_ERR_INVALID_ARG;
    double t0 = clock_ms();
    OOM_TRAP_ENTER(trap, ctx, filename, QDQC_ERR_NOMEM);
    Module *m = ir_parse(ctx, text ? text : "", len, filename);
    qdqc_status st = finish_load(ctx, m, QDQC_ERR_PARSE, out, t0);
    OOM_TRAP_LEAVE(trap);
    return st;
}

qdqc_status
qdqc_module_import_onnx_bytes(qdqc_context *ctx, const void *data, size_t len,
                              const char *filename, qdqc_module **out)
{
    if (!ctx || !out || (!data && len))
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    double t0 = clock_ms();
    OOM_TRAP_ENTER(trap, ctx, filename ? filename : "<memory>", QDQC_ERR_NOMEM);
    Module *m = imp_onnx(ctx, data, len, oom_trap_file(&trap));
    qdqc_status st = finish_load(ctx, m, QDQC_ERR_IMPORT, out, t0);
    OOM_TRAP_LEAVE(trap);
    return st;
}

qdqc_status
qdqc_module_import_onnx_file(qdqc_context *ctx, const char *path, qdqc_module **out)
{
    if (!ctx || !out || !path)
        return QDQC_ERR_INVALID_ARG;
    *out = NULL;
    double t0 = clock_ms();
    OOM_TRAP_ENTER(trap, ctx, path, QDQC_ERR_NOMEM);
    size_t len;
    char *buf = read_file_all(ctx, path, MAX_MODEL_BYTES, &len);
    if (!buf) {
        OOM_TRAP_LEAVE(trap);
        return QDQC_ERR_IO;
    }
    oom_defer(free, buf);
    Module *m = imp_onnx(ctx, buf, len, path);
    oom_undefer(buf);
    free(buf);
    qdqc_status st = finish_load(ctx, m, QDQC_ERR_IMPORT, out, t0);
    OOM_TRAP_LEAVE(trap);
    return st;
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
    if (!no_const_inputs(ctx, ends_with(path, ".mlir") ? "MLIR" : "text IR"))
        return QDQC_ERR_INVALID_ARG;
    double t0 = clock_ms();
    size_t len;
    char *buf;
    {
        OOM_TRAP_ENTER(trap, ctx, path, QDQC_ERR_NOMEM);
        buf = read_file_all(ctx, path, MAX_MODEL_BYTES, &len);
        OOM_TRAP_LEAVE(trap);
    }
    if (!buf)
        return QDQC_ERR_IO;
    qdqc_status st;
    if (ends_with(path, ".mlir")) {
        /* MLIR calls back into the library (diagnostics): no trap across its C++ frames */
        OomTrap none;
        oom_trap_push_abort(&none);
        Module *m = imp_mlir(ctx, buf, len, path);
        st = finish_load(ctx, m, QDQC_ERR_IMPORT, out, t0);
        oom_trap_pop(&none);
    } else {
        st = qdqc_module_parse(ctx, buf, len, path, out); /* traps itself, returns here */
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
    OOM_TRAP_ENTER(trap, m->ctx, NULL, NULL);
    char *s = ir_print((Graph *)&m->g);
    OOM_TRAP_LEAVE(trap);
    return s;
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
    /* after QDQC_ERR_NOMEM the module is half transformed: destroy it (docs/api.md) */
    double t0 = clock_ms();
    OOM_TRAP_ENTER(trap, m->ctx, m->filename, QDQC_ERR_NOMEM);
    qdqc_status st = pass_run_pipeline(m, pipeline) ? QDQC_OK : QDQC_ERR_PASS;
    OOM_TRAP_LEAVE(trap);
    if (st == QDQC_OK)
        ctx_phase_end(m->ctx, m->filename, "passes", t0);
    return st;
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
