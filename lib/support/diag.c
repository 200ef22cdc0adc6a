/* diag.c: the diagnostics engine and the context object.
 * Diagnostics are either delivered to the user's handler or collected in the context; the
 * library never prints. Locations render as "file:line:col" (text IR) or
 * "file: node 'name' (OpType)" (ONNX). */
#define _POSIX_C_SOURCE 200809L
#include "support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

qdqc_status
oom_trap_catch(OomTrap *t, qdqc_context *ctx)
{
    char what[OOM_WHAT_LEN];
    const char *file;
    oom_trap_unwind(t, what, sizeof what, &file);
    if (ctx) {
        /* the report allocates: if that fails too, the status alone says it */
        OomTrap r;
        oom_trap_push(&r, NULL);
        if (!setjmp(r.jb))
            diag_error(ctx, file ? &(Loc){.file = file} : NULL, "out of memory%s%s",
                       what[0] ? ": " : "", what);
        oom_trap_pop(&r);
    }
    return QDQC_ERR_NOMEM;
}

const char *
severity_name(qdqc_severity s)
{
    switch (s) {
    case QDQC_SEV_NOTE: return "note";
    case QDQC_SEV_REMARK: return "remark";
    case QDQC_SEV_WARNING: return "warning";
    case QDQC_SEV_ERROR: return "error";
    }
    return "error";
}

void
loc_format(StrBuf *b, const Loc *l)
{
    if (!l)
        return;
    const char *file = l->file && *l->file ? l->file : "<input>";
    if (l->line) {
        sb_printf(b, "%s:%u:%u", file, l->line, l->col);
    } else if (l->node || l->optype) {
        sb_printf(b, "%s: node '%s' (%s)", file, l->node ? l->node : "",
                  l->optype ? l->optype : "?");
    } else {
        sb_puts(b, file);
    }
}

void
diag_vemit(qdqc_context *ctx, qdqc_severity sev, const Loc *loc, const char *fmt, va_list ap)
{
    StrBuf lb, mb;
    sb_init(&lb);
    sb_init(&mb);
    loc_format(&lb, loc);
    sb_vprintf(&mb, fmt, ap);
    char *ls = sb_take(&lb), *ms = sb_take(&mb);
    if (sev == QDQC_SEV_ERROR)
        ctx->nerrors++;
    if (ctx->handler) {
        ctx->handler(ctx->handler_user, sev, ls, ms);
        free(ls);
        free(ms);
        return;
    }
    Diag d = {sev, ls, ms};
    vec_push(&ctx->diags, d);
}

void
diag_emit(qdqc_context *ctx, qdqc_severity sev, const Loc *loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vemit(ctx, sev, loc, fmt, ap);
    va_end(ap);
}

char *
read_file_all(qdqc_context *ctx, const char *path, size_t max, size_t *len)
{
    Loc l = {.file = path};
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_error(ctx, &l, "cannot open file: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    bool have_st = fstat(fileno(f), &st) == 0;
    if (have_st && S_ISDIR(st.st_mode)) {
        fclose(f);
        diag_error(ctx, &l, "cannot read file: is a directory");
        return NULL;
    }
    /* the buffer grows by doubling (from the file's size when it is known); a failed
     * allocation closes the file and frees the buffer before it is reported (oom_raise) */
    if (have_st && st.st_size > 0 && (uintmax_t)st.st_size > max) {
        fclose(f);
        diag_error(ctx, &l, "file is larger than the limit of %zu bytes", max);
        return NULL;
    }
    size_t cap = have_st && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
    size_t used = 0;
    char *buf = try_malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            oom_raise("reading '%s' needs %zu bytes", path, cap);
        }
        if (used == cap) {
            size_t ncap = cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX;
            char *nb = try_realloc(buf, ncap);
            if (!nb) {
                free(buf);
                buf = NULL;
                cap = ncap;
                continue;
            }
            buf = nb;
            cap = ncap;
        }
        size_t n = fread(buf + used, 1, cap - used, f);
        if (n == 0)
            break;
        used += n;
        if (used > max) {
            fclose(f);
            free(buf);
            diag_error(ctx, &l, "file is larger than the limit of %zu bytes", max);
            return NULL;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        diag_error(ctx, &l, "read error");
        return NULL;
    }
    if (used == cap) { /* room for the terminating NUL */
        char *nb = try_realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            oom_raise("reading '%s' needs %zu bytes", path, cap + 1);
        }
        buf = nb;
    }
    buf[used] = 0;
    *len = used;
    return buf;
}

/* ---- public context API ---- */
qdqc_context *
qdqc_context_create(void)
{
    return try_calloc(1, sizeof(qdqc_context)); /* NULL: no memory */
}

void
qdqc_context_clear_diagnostics(qdqc_context *ctx)
{
    for (uint32_t i = 0; i < ctx->diags.len; i++) {
        free(ctx->diags.data[i].loc);
        free(ctx->diags.data[i].msg);
    }
    ctx->diags.len = 0;
    ctx->nerrors = 0;
    free(ctx->rendered);
    ctx->rendered = NULL;
}

void
qdqc_context_destroy(qdqc_context *ctx)
{
    if (!ctx)
        return;
    qdqc_context_clear_diagnostics(ctx);
    vec_free(&ctx->diags);
    for (uint32_t i = 0; i < ctx->input_shapes.len; i++)
        free(ctx->input_shapes.data[i].name);
    vec_free(&ctx->input_shapes);
    for (uint32_t i = 0; i < ctx->dim_binds.len; i++)
        free(ctx->dim_binds.data[i].name);
    vec_free(&ctx->dim_binds);
    for (uint32_t i = 0; i < ctx->dim_ranges.len; i++)
        free(ctx->dim_ranges.data[i].name);
    vec_free(&ctx->dim_ranges);
    for (uint32_t i = 0; i < ctx->const_inputs.len; i++) {
        free(ctx->const_inputs.data[i].name);
        free(ctx->const_inputs.data[i].origin);
        free(ctx->const_inputs.data[i].data);
    }
    vec_free(&ctx->const_inputs);
    free(ctx->opt.print_after);
    free(ctx->opt.keep_float);
    free(ctx);
}

void
qdqc_context_set_diag_handler(qdqc_context *ctx, qdqc_diag_handler fn, void *user)
{
    ctx->handler = fn;
    ctx->handler_user = user;
}

void
qdqc_context_set_print_handler(qdqc_context *ctx, qdqc_print_handler fn, void *user)
{
    ctx->print_sink = fn;
    ctx->print_user = user;
}

void
qdqc_context_set_phase_handler(qdqc_context *ctx, qdqc_phase_handler fn, void *user)
{
    if (!ctx)
        return;
    ctx->phase_fn = fn;
    ctx->phase_user = user;
}

double
clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void
ctx_phase_end(qdqc_context *ctx, const char *file, const char *phase, double t0)
{
    if (!ctx || (!ctx->phase_fn && !ctx->opt.time_passes))
        return;
    double ms = clock_ms() - t0;
    if (ctx->phase_fn)
        ctx->phase_fn(ctx->phase_user, phase, ms);
    if (ctx->opt.time_passes) {
        Loc l = {.file = file};
        diag_emit(ctx, QDQC_SEV_REMARK, file ? &l : NULL, "phase %s: %.3f ms", phase, ms);
    }
}

const char *
qdqc_context_get_diagnostics(qdqc_context *ctx)
{
    StrBuf b;
    sb_init(&b);
    for (uint32_t i = 0; i < ctx->diags.len; i++) {
        Diag *d = &ctx->diags.data[i];
        if (*d->loc)
            sb_printf(&b, "%s: ", d->loc);
        sb_printf(&b, "%s: %s\n", severity_name(d->sev), d->msg);
    }
    free(ctx->rendered);
    ctx->rendered = sb_take(&b);
    return ctx->rendered;
}

size_t
qdqc_context_get_error_count(const qdqc_context *ctx)
{
    return ctx->nerrors;
}

static int
parse_bool(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "on") == 0);
}

qdqc_status
qdqc_context_set_option(qdqc_context *ctx, const char *name, const char *value)
{
    if (!ctx || !name || !value)
        return QDQC_ERR_INVALID_ARG;
    if (strcmp(name, "requant") == 0) {
        if (strcmp(value, "float") == 0)
            ctx->opt.requant_fixed = 0;
        else if (strcmp(value, "fixed") == 0)
            ctx->opt.requant_fixed = 1;
        else {
            diag_error(ctx, NULL, "unknown requant mode '%s' (expected float or fixed)", value);
            return QDQC_ERR_INVALID_ARG;
        }
    } else if (strcmp(name, "weight-only") == 0) {
        if (strcmp(value, "float") == 0)
            ctx->opt.wonly_i8_acts = 0;
        else if (strcmp(value, "int8-acts") == 0)
            ctx->opt.wonly_i8_acts = 1;
        else {
            diag_error(ctx, NULL, "unknown weight-only mode '%s' (expected float or int8-acts)",
                       value);
            return QDQC_ERR_INVALID_ARG;
        }
    } else if (strcmp(name, "remarks") == 0) {
        ctx->opt.remarks = parse_bool(value);
    } else if (strcmp(name, "strict") == 0) {
        ctx->opt.strict = parse_bool(value);
    } else if (strcmp(name, "verify-each") == 0) {
        ctx->opt.verify_each = parse_bool(value);
    } else if (strcmp(name, "print-after-all") == 0) {
        ctx->opt.print_after_all = parse_bool(value);
    } else if (strcmp(name, "time-passes") == 0) {
        ctx->opt.time_passes = parse_bool(value);
    } else if (strcmp(name, "print-after") == 0) {
        free(ctx->opt.print_after);
        ctx->opt.print_after = xstrdup(value);
    } else if (strcmp(name, "keep-float") == 0) {
        free(ctx->opt.keep_float);
        ctx->opt.keep_float = *value ? xstrdup(value) : NULL;
    } else {
        diag_error(ctx, NULL, "unknown option '%s'", name);
        return QDQC_ERR_INVALID_ARG;
    }
    return QDQC_OK;
}

qdqc_status
qdqc_context_add_input_shape(qdqc_context *ctx, const char *spec)
{
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec) {
        diag_error(ctx, NULL, "input shape '%s': expected NAME=D0xD1x..., e.g. x=1x3x224x224",
                   spec);
        return QDQC_ERR_INVALID_ARG;
    }
    InputShape is = {0};
    const char *p = eq + 1;
    while (1) {
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || d <= 0 || errno || d > (1LL << 40)) {
            diag_error(ctx, NULL, "input shape '%s': dimensions must be positive integers", spec);
            return QDQC_ERR_INVALID_ARG;
        }
        if (is.rank == 8) {
            diag_error(ctx, NULL, "input shape '%s': more than 8 dimensions", spec);
            return QDQC_ERR_INVALID_ARG;
        }
        is.dims[is.rank++] = d;
        if (*end == 0)
            break;
        if (*end != 'x' && *end != ',') {
            diag_error(ctx, NULL, "input shape '%s': dimensions must be separated by 'x'", spec);
            return QDQC_ERR_INVALID_ARG;
        }
        p = end + 1;
    }
    is.name = xstrndup(spec, (size_t)(eq - spec));
    vec_push(&ctx->input_shapes, is);
    return QDQC_OK;
}

static bool
dim_name_ok(qdqc_context *ctx, const char *name)
{
    bool ok = *name && strlen(name) < 128;
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
             (p != name && ((*p >= '0' && *p <= '9') || *p == '.'));
    if (!ok)
        diag_error(ctx, NULL, "--dim: '%s' is not a dimension name (letters, digits, '_' and "
                   "'.', not starting with a digit or '.')", name);
    return ok;
}

static bool
dim_value_ok(qdqc_context *ctx, const char *name, int64_t value)
{
    if (value > 0 && value <= ((int64_t)1 << 40))
        return true;
    diag_error(ctx, NULL, "--dim %s: the value must be a positive integer up to 2^40, got %lld",
               name, (long long)value);
    return false;
}

qdqc_status
qdqc_context_set_dim(qdqc_context *ctx, const char *name, int64_t value)
{
    if (!ctx || !name)
        return QDQC_ERR_INVALID_ARG;
    if (!dim_name_ok(ctx, name) || !dim_value_ok(ctx, name, value))
        return QDQC_ERR_INVALID_ARG;
    for (uint32_t i = 0; i < ctx->dim_binds.len; i++)
        if (strcmp(ctx->dim_binds.data[i].name, name) == 0) {
            ctx->dim_binds.data[i].value = value;
            return QDQC_OK;
        }
    DimBind b = {xstrdup(name), value};
    vec_push(&ctx->dim_binds, b);
    return QDQC_OK;
}

qdqc_status
qdqc_context_set_dim_range(qdqc_context *ctx, const char *name, int64_t lo, int64_t hi)
{
    if (!ctx || !name)
        return QDQC_ERR_INVALID_ARG;
    if (!dim_name_ok(ctx, name) || !dim_value_ok(ctx, name, lo) || !dim_value_ok(ctx, name, hi))
        return QDQC_ERR_INVALID_ARG;
    if (lo > hi) {
        diag_error(ctx, NULL, "--dim %s=%lld..%lld: the lower bound is above the upper bound",
                   name, (long long)lo, (long long)hi);
        return QDQC_ERR_INVALID_ARG;
    }
    for (uint32_t i = 0; i < ctx->dim_ranges.len; i++)
        if (strcmp(ctx->dim_ranges.data[i].name, name) == 0) {
            ctx->dim_ranges.data[i].lo = lo;
            ctx->dim_ranges.data[i].hi = hi;
            return QDQC_OK;
        }
    DimRange r = {xstrdup(name), lo, hi};
    vec_push(&ctx->dim_ranges, r);
    return QDQC_OK;
}

static bool
parse_dim_int(const char *s, const char **end, long long *v)
{
    errno = 0;
    char *e;
    *v = strtoll(s, &e, 10);
    *end = e;
    return e != s && !errno && *s >= '0' && *s <= '9';
}

qdqc_status
qdqc_context_add_dim(qdqc_context *ctx, const char *spec)
{
    const char *eq = spec ? strrchr(spec, '=') : NULL;
    const char *end;
    if (!eq || eq == spec || !eq[1]) {
        diag_error(ctx, NULL, "--dim '%s': expected NAME=N or NAME=LO..HI, e.g. batch=1",
                   spec ? spec : "");
        return QDQC_ERR_INVALID_ARG;
    }
    long long lo, hi;
    char name[128];
    bool ok = (size_t)(eq - spec) < sizeof name && parse_dim_int(eq + 1, &end, &lo);
    bool range = ok && end[0] == '.' && end[1] == '.';
    if (range)
        ok = parse_dim_int(end + 2, &end, &hi);
    if (!ok || *end) {
        diag_error(ctx, NULL, "--dim '%s': expected NAME=N or NAME=LO..HI with positive "
                   "integers", spec);
        return QDQC_ERR_INVALID_ARG;
    }
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = 0;
    return range ? qdqc_context_set_dim_range(ctx, name, lo, hi)
                 : qdqc_context_set_dim(ctx, name, lo);
}

unsigned
qdqc_version(void)
{
    return QDQC_VERSION_HEX;
}

#define STR2(x) #x
#define STR(x) STR2(x)
const char *
qdqc_version_string(void)
{
    return STR(QDQC_VERSION_MAJOR) "." STR(QDQC_VERSION_MINOR) "." STR(QDQC_VERSION_PATCH);
}

const char *
qdqc_status_name(qdqc_status s)
{
    switch (s) {
#define QDQC_STATUS(NAME, VALUE, TEXT) \
    case QDQC_##NAME: return "QDQC_" #NAME;
#include "qdqc/status.def"
#undef QDQC_STATUS
    }
    return "QDQC_UNKNOWN";
}

void
qdqc_string_free(char *s)
{
    free(s);
}
