/* run.c: public API of the graph interface (input/output names, shapes, element types), the
 * reference interpreter (qdqc_module_run_reference) and .npy files. Thin wrappers over
 * lib/ref and lib/runtime/npy; nothing here prints or exits. */
#include "ir/ir.h"
#include "ref/ref.h"
#include "runtime/npy.h"

#include <stdio.h>
#include <string.h>

static const Value *
io_value(const qdqc_module *m, size_t i, bool out)
{
    if (!m)
        return NULL;
    const Graph *g = &m->g;
    const VEC(ValueId) *v = out ? (const void *)&g->outputs : (const void *)&g->inputs;
    if (i >= v->len)
        return NULL;
    return &g->values.data[v->data[i].id];
}

size_t
qdqc_module_input_count(const qdqc_module *m)
{
    return m ? m->g.inputs.len : 0;
}

size_t
qdqc_module_output_count(const qdqc_module *m)
{
    return m ? m->g.outputs.len : 0;
}

#define IO_ACCESSORS(kind, out)                                                    \
    const char *qdqc_module_##kind##_name(const qdqc_module *m, size_t i)          \
    {                                                                              \
        const Value *v = io_value(m, i, out);                                      \
        return v ? intern_str(&m->strs, v->name) : NULL;                           \
    }                                                                              \
    int qdqc_module_##kind##_rank(const qdqc_module *m, size_t i)                  \
    {                                                                              \
        const Value *v = io_value(m, i, out);                                      \
        return v ? v->type.rank : 0;                                               \
    }                                                                              \
    const int64_t *qdqc_module_##kind##_dims(const qdqc_module *m, size_t i)       \
    {                                                                              \
        const Value *v = io_value(m, i, out);                                      \
        return v ? v->type.dims : NULL;                                            \
    }                                                                              \
    const char *qdqc_module_##kind##_dim_symbol(const qdqc_module *m, size_t i, int d) \
    {                                                                              \
        const Value *v = io_value(m, i, out);                                      \
        const char *s = NULL;                                                      \
        if (v && d >= 0 && d < v->type.rank)                                       \
            ir_dim_sym_name(&m->g, v->type.dims[d], &s);                           \
        return s;                                                                  \
    }                                                                              \
    const char *qdqc_module_##kind##_elem_type(const qdqc_module *m, size_t i)     \
    {                                                                              \
        const Value *v = io_value(m, i, out);                                      \
        return v ? elem_name(v->type.elem) : NULL;                                 \
    }

IO_ACCESSORS(input, false)
IO_ACCESSORS(output, true)

size_t
qdqc_elem_type_size(const char *elem_type)
{
    if (!elem_type)
        return 0;
    ElemType e = elem_from_name(elem_type, strlen(elem_type));
    return e == ET_NONE ? 0 : elem_size(e);
}

qdqc_status
qdqc_module_run_reference(qdqc_module *m, const void *const *inputs, void *const *outputs)
{
    if (!m || (m->g.inputs.len && !inputs) || (m->g.outputs.len && !outputs))
        return QDQC_ERR_INVALID_ARG;
    if (!ir_require_static(&m->g, "the reference interpreter"))
        return QDQC_ERR_INVALID_ARG;
    OOM_TRAP_ENTER(trap, m->ctx, m->filename, QDQC_ERR_NOMEM);
    Graph *g = &m->g;
    uint32_t nin = g->inputs.len, nout = g->outputs.len;
    RefTensor *in = xcalloc(nin ? nin : 1, sizeof(RefTensor));
    oom_defer(free, in);
    RefTensor *out = xcalloc(nout ? nout : 1, sizeof(RefTensor));
    oom_defer(free, out);
    qdqc_status st = QDQC_OK;
    for (uint32_t i = 0; i < nin; i++) {
        const Type *t = &ir_value(g, g->inputs.data[i])->type;
        size_t n, bytes;
        if (!inputs[i] || !type_numel(t, &n) || !size_mul(n, elem_size(t->elem), &bytes)) {
            st = QDQC_ERR_INVALID_ARG;
            break;
        }
        in[i].type = *t;
        in[i].data = (void *)inputs[i];
        in[i].nbytes = bytes;
    }
    if (st == QDQC_OK) {
        if (!ref_run(m, in, nin, out, nout, m->ctx->opt.requant_fixed != 0)) {
            st = QDQC_ERR_RUNTIME;
        } else {
            for (uint32_t i = 0; i < nout; i++) {
                if (outputs[i])
                    memcpy(outputs[i], out[i].data, out[i].nbytes);
                else
                    st = QDQC_ERR_INVALID_ARG;
                ref_tensor_free(&out[i]);
            }
        }
    }
    oom_undefer(out);
    oom_undefer(in);
    OOM_TRAP_LEAVE(trap);
    free(in);
    free(out);
    return st;
}

qdqc_status
qdqc_npy_read(qdqc_context *ctx, const char *path, qdqc_array *out)
{
    if (!ctx || !path || !out)
        return QDQC_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    NpyArray a;
    char err[512];
    if (!npy_read_file(path, &a, err, sizeof err)) {
        diag_error(ctx, NULL, "%s", err);
        return QDQC_ERR_IO;
    }
    snprintf(out->elem_type, sizeof out->elem_type, "%s", npy_type_name(a.type));
    out->rank = a.rank;
    memcpy(out->dims, a.dims, sizeof out->dims);
    out->data = a.data;
    out->nbytes = a.nbytes;
    return QDQC_OK;
}

qdqc_status
qdqc_npy_write(qdqc_context *ctx, const char *path, const char *elem_type, int rank,
               const int64_t *dims, const void *data)
{
    if (!ctx || !path || !elem_type || (rank && !dims) || rank < 0 || rank > 8)
        return QDQC_ERR_INVALID_ARG;
    const char *name = strcmp(elem_type, "i4") == 0 ? "i8"
                       : strcmp(elem_type, "u4") == 0 ? "u8" : elem_type;
    NpyType t = npy_type_from_name(name);
    if (t == NPY_NONE) {
        diag_error(ctx, NULL, "%s: element type %s cannot be written to .npy", path, elem_type);
        return QDQC_ERR_UNSUPPORTED;
    }
    char err[512];
    if (!npy_write_file(path, t, rank, dims, data, err, sizeof err)) {
        diag_error(ctx, NULL, "%s", err);
        return QDQC_ERR_IO;
    }
    return QDQC_OK;
}

void
qdqc_array_free(qdqc_array *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}
