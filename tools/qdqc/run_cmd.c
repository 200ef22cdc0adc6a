/* run_cmd.c: `qdqc run MODEL [--engine=jit|ref] [--input [NAME=]FILE.npy ...]
 * [--random-inputs SEED] [--output-dir DIR] [--expect [NAME=]FILE.npy ...] [--tolerance T[q]]
 * [--passes=...]`. Only the public API; no compiler logic.
 * Prints each output's shape, type, min/max/mean (and the top 5 of a [1,N] output), compares
 * outputs with expected arrays, and writes each output in its own element type to
 * DIR/FILE.npy, FILE being the output's name made a safe, visible, unique file name
 * (output_file_names). */
#define _POSIX_C_SOURCE 200809L
#include "run_cmd.h"

#include "cli_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

enum { RC_OK = 0, RC_INPUT = 1, RC_USAGE = 2 };
enum { OUT_CANARY = 64, OUT_CANARY_BYTE = 0x5A };

static int
err(int rc, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "qdqc: error: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return rc;
}

/* mkdir -p */
static bool
make_dirs(const char *dir)
{
    errno = 0;
    size_t n = strlen(dir);
    char *p = malloc(n + 1);
    if (!p)
        return false;
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0)
            continue;
        char c = p[i];
        p[i] = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "qdqc: error: cannot create directory '%s': %s\n", p,
                    strerror(errno));
            free(p);
            return false;
        }
        p[i] = c;
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "qdqc: error: cannot create directory '%s': %s\n", dir,
                strerror(errno ? errno : ENOTDIR));
        return false;
    }
    return true;
}

enum { FILE_STEM_MAX = 200 }; /* bytes of a file name before "_K.npy" (NAME_MAX is 255) */

static bool
same_name(const char *a, const char *b)
{
    /* case-insensitively: "Y" and "y" are one file on some file systems */
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

/* The file stems of the n outputs (malloc'd; NULL on allocation failure): characters outside
 * [A-Za-z0-9_.-], a leading '.' and a '.' after a '.' become '_' (no hidden file, no "..", no
 * directory part), an empty name "output"; then the second and later outputs whose stem is
 * taken (case-insensitively) get "_2", "_3", ...: the smallest suffix that is no other
 * output's stem. Deterministic: the graph's output order decides. */
static char **
output_file_names(qdqc_module *m, size_t n)
{
    char **base = calloc(n ? n : 1, sizeof(char *)), **out = calloc(n ? n : 1, sizeof(char *));
    bool ok = base && out;
    for (size_t i = 0; ok && i < n; i++) {
        const char *name = qdqc_module_output_name(m, i);
        size_t nl = strlen(name);
        if (nl > FILE_STEM_MAX)
            nl = FILE_STEM_MAX;
        char *b = base[i] = malloc(nl + 8);
        if (!b) {
            ok = false;
            break;
        }
        for (size_t k = 0; k < nl; k++) {
            char ch = name[k];
            bool keep = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                        (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
                        (ch == '.' && k > 0 && name[k - 1] != '.');
            b[k] = keep ? ch : '_';
        }
        b[nl] = 0;
        if (!nl)
            strcpy(b, "output");
    }
    for (size_t i = 0; ok && i < n; i++) {
        bool taken = false;
        for (size_t j = 0; j < i && !taken; j++)
            taken = same_name(out[j], base[i]);
        if (!taken) {
            out[i] = strdup(base[i]);
            ok = out[i] != NULL;
            continue;
        }
        size_t bl = strlen(base[i]);
        out[i] = malloc(bl + 24);
        if (!(ok = out[i] != NULL))
            break;
        for (unsigned k = 2;; k++) {
            snprintf(out[i], bl + 24, "%s_%u", base[i], k);
            bool clash = false;
            for (size_t j = 0; j < n && !clash; j++)
                clash = same_name(out[i], base[j]) || (j < i && same_name(out[i], out[j]));
            if (!clash)
                break;
        }
    }
    for (size_t i = 0; base && i < n; i++)
        free(base[i]);
    free(base);
    if (!ok) {
        for (size_t i = 0; out && i < n; i++)
            free(out[i]);
        free(out);
        return NULL;
    }
    return out;
}

static char *
join_path(const char *dir, const char *stem)
{
    size_t n = strlen(dir) + strlen(stem) + 8;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.npy", dir, stem);
    return p;
}

/* ---- values as doubles, for the summary and --expect ---- */

static double
half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, f = h & 1023;
    double v = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(f + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Element i of a dense buffer of type et; false for a type without numbers. */
static bool
elem_value(const char *et, const void *buf, size_t i, double *v)
{
    const unsigned char *p = buf;
    if (!strcmp(et, "f32")) {
        float x;
        memcpy(&x, p + 4 * i, 4);
        *v = x;
    } else if (!strcmp(et, "f64")) {
        memcpy(v, p + 8 * i, 8);
    } else if (!strcmp(et, "f16")) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        *v = half_to_double(h);
    } else if (!strcmp(et, "i8") || !strcmp(et, "i4")) {
        *v = (int8_t)p[i];
    } else if (!strcmp(et, "u8") || !strcmp(et, "u4") || !strcmp(et, "bool")) {
        *v = p[i];
    } else if (!strcmp(et, "i16") || !strcmp(et, "u16")) {
        uint16_t x;
        memcpy(&x, p + 2 * i, 2);
        *v = et[0] == 'i' ? (double)(int16_t)x : (double)x;
    } else if (!strcmp(et, "i32") || !strcmp(et, "u32")) {
        uint32_t x;
        memcpy(&x, p + 4 * i, 4);
        *v = et[0] == 'i' ? (double)(int32_t)x : (double)x;
    } else if (!strcmp(et, "i64") || !strcmp(et, "u64")) {
        uint64_t x;
        memcpy(&x, p + 8 * i, 8);
        *v = et[0] == 'i' ? (double)(int64_t)x : (double)x;
    } else {
        return false;
    }
    return true;
}

static bool
numeric(const char *et)
{
    uint64_t zero = 0;
    double v;
    return elem_value(et, &zero, 0, &v);
}

static void
format_shape(char *buf, size_t len, const char *et, int rank, const int64_t *dims)
{
    int w = snprintf(buf, len, "%s[", et);
    for (int d = 0; d < rank && w > 0 && (size_t)w < len - 24; d++)
        w += snprintf(buf + w, len - (size_t)w, d ? ",%lld" : "%lld", (long long)dims[d]);
    if (w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, "]");
}

/* "[0,3]": the multi-index of flat index k */
static void
format_index(char *buf, size_t len, int rank, const int64_t *dims, size_t k)
{
    int64_t idx[8] = {0};
    for (int d = rank - 1; d >= 0; d--) {
        idx[d] = dims[d] ? (int64_t)(k % (size_t)dims[d]) : 0;
        k = dims[d] ? k / (size_t)dims[d] : 0;
    }
    int w = snprintf(buf, len, "[");
    for (int d = 0; d < rank && w > 0 && (size_t)w < len - 24; d++)
        w += snprintf(buf + w, len - (size_t)w, d ? ",%lld" : "%lld", (long long)idx[d]);
    if (w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, "]");
}

/* One output's summary lines: shape and type, min/max/mean (NaNs counted apart), the 5
 * largest of a logit-like [1,N] output. */
static void
print_summary(qdqc_module *m, size_t i, const void *buf, size_t n)
{
    const char *et = qdqc_module_output_elem_type(m, i);
    int rank = qdqc_module_output_rank(m, i);
    const int64_t *dims = qdqc_module_output_dims(m, i);
    char shape[200];
    format_shape(shape, sizeof shape, et, rank, dims);
    printf("output '%s': %s", qdqc_module_output_name(m, i), shape);
    double v, lo = INFINITY, hi = -INFINITY, sum = 0;
    size_t nan = 0, counted = 0;
    for (size_t k = 0; k < n && elem_value(et, buf, k, &v); k++) {
        if (isnan(v)) {
            nan++;
            continue;
        }
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
        counted++;
    }
    if (counted)
        printf("  min %.6g  max %.6g  mean %.6g", lo, hi, sum / (double)counted);
    if (nan)
        printf("  NaN %zu", nan);
    if (!n)
        printf("  (empty)");
    printf("\n");
    if (rank == 2 && dims[0] == 1 && dims[1] >= 2 && counted == n) {
        size_t top[5], ntop = 0;
        for (size_t k = 0; k < n; k++) {
            elem_value(et, buf, k, &v);
            size_t pos = ntop;
            double w;
            while (pos > 0 && (elem_value(et, buf, top[pos - 1], &w), w < v))
                pos--;
            if (pos >= 5)
                continue;
            if (ntop < 5)
                ntop++;
            memmove(top + pos + 1, top + pos, (ntop - 1 - pos) * sizeof top[0]);
            top[pos] = k;
        }
        printf("  top-%zu (index: value):", ntop);
        for (size_t k = 0; k < ntop; k++) {
            elem_value(et, buf, top[k], &v);
            printf("%s %zu: %.6g", k ? "," : "", top[k], v);
        }
        printf("\n");
    }
}

/* An --expect array, checked against output i. */
typedef struct Expect {
    qdqc_array a;
    const char *file;
    bool given;
    double scale; /* of the dequantize that produces the output in the imported graph, or 0 */
} Expect;

/* v in quantization steps of `scale`: v / scale, snapped to the nearest integer when it is
 * within 2^-20 (relative) of it. A dequantized value is f32((q - zp) * scale), within 2^-24
 * (relative) of an exact multiple of the scale, so its step count is the integer q - zp
 * exactly, and a difference of N steps counts as N, not N * (1 + rounding). */
static double
in_steps(double v, double scale)
{
    double u = v / scale;
    if (!(fabs(u) < 0x1p52))
        return u;
    double r = (double)(int64_t)(u + (u >= 0 ? 0.5 : -0.5)); /* nearest (ties away: any) */
    return fabs(u - r) <= 0x1p-20 * (fabs(r) > 1 ? fabs(r) : 1) ? r : u;
}

/* Compare output i with its expected array; prints one line; false beyond the tolerance.
 * With a quantized tolerance (Tq) the difference is counted in steps (in_steps), so a
 * difference of exactly T steps passes at T. */
static bool
compare_expect(qdqc_module *m, size_t i, const void *buf, size_t n, const Expect *e,
               const RunOpts *o)
{
    const char *et = qdqc_module_output_elem_type(m, i);
    double scale = e->scale;
    double tol = o->tolerance_quantized ? o->tolerance * scale : o->tolerance;
    double maxd = 0, maxs = 0, got, want;
    size_t at = 0, beyond = 0;
    for (size_t k = 0; k < n; k++) {
        elem_value(et, buf, k, &got);
        elem_value(e->a.elem_type, e->a.data, k, &want);
        bool nan = isnan(got) || isnan(want), both = isnan(got) && isnan(want);
        double d = both ? 0 : nan ? INFINITY : fabs(got - want);
        double st = scale > 0 ? (both ? 0 : nan ? INFINITY
                                                : fabs(in_steps(got, scale) -
                                                       in_steps(want, scale)))
                              : 0;
        if (d > maxd || (k == 0 && d > 0)) {
            maxd = d;
            at = k;
        }
        maxs = st > maxs ? st : maxs;
        beyond += o->tolerance_quantized ? st > o->tolerance : d > tol;
    }
    printf("  expect %s: max |diff| %.6g", e->file, maxd);
    if (scale > 0)
        printf(" = %.4g quantized units (scale %.6g)", maxs, scale);
    if (maxd > 0) {
        char idx[200];
        format_index(idx, sizeof idx, qdqc_module_output_rank(m, i),
                     qdqc_module_output_dims(m, i), at);
        elem_value(et, buf, at, &got);
        elem_value(e->a.elem_type, e->a.data, at, &want);
        printf(" at %s (%.6g, expected %.6g)", idx, got, want);
    }
    printf("; %zu of %zu beyond the tolerance %.6g%s: %s\n", beyond, n,
           o->tolerance_quantized ? o->tolerance : tol, o->tolerance_quantized ? "q" : "",
           beyond ? "FAIL" : "ok");
    return beyond == 0;
}

/* Read every --expect (NAME=FILE.npy, or FILE.npy for a one-output model) into ex[]. */
static int
read_expects(qdqc_context *ctx, qdqc_module *m, const RunOpts *o, Expect *ex)
{
    size_t nout = qdqc_module_output_count(m);
    for (int k = 0; k < o->nexpects; k++) {
        const char *spec = o->expects[k], *eq = strchr(spec, '=');
        size_t slot = nout;
        const char *file = spec;
        for (size_t i = 0; eq && i < nout; i++) {
            const char *name = qdqc_module_output_name(m, i);
            if (strlen(name) == (size_t)(eq - spec) && !strncmp(name, spec, (size_t)(eq - spec))) {
                slot = i;
                file = eq + 1;
            }
        }
        if (slot == nout && nout == 1 && (!eq || access(spec, F_OK) == 0))
            slot = 0;
        if (slot == nout) {
            if (eq)
                fprintf(stderr, "qdqc: error: --expect: the model has no output named '%.*s'\n",
                        (int)((eq - spec) < 200 ? (eq - spec) : 200), spec);
            else
                fprintf(stderr, "qdqc: error: --expect needs NAME=FILE.npy (the model has %zu "
                                "outputs), got '%s'\n", nout, spec);
            return RC_USAGE;
        }
        if (ex[slot].given) {
            fprintf(stderr, "qdqc: error: --expect: output '%s' is given twice\n",
                    qdqc_module_output_name(m, slot));
            return RC_USAGE;
        }
        if (qdqc_npy_read(ctx, file, &ex[slot].a) != QDQC_OK)
            return RC_INPUT;
        ex[slot].file = file;
        ex[slot].given = true;
        const char *et = qdqc_module_output_elem_type(m, slot);
        int rank = qdqc_module_output_rank(m, slot);
        const int64_t *dims = qdqc_module_output_dims(m, slot);
        bool same = ex[slot].a.rank == rank;
        for (int d = 0; same && d < rank; d++)
            same = ex[slot].a.dims[d] == dims[d];
        if (!same || !numeric(ex[slot].a.elem_type) || !numeric(et)) {
            char want[200], got[200];
            format_shape(want, sizeof want, et, rank, dims);
            format_shape(got, sizeof got, ex[slot].a.elem_type, ex[slot].a.rank,
                         ex[slot].a.dims);
            fprintf(stderr, "qdqc: error: --expect: output '%s' is %s, %s holds %s\n",
                    qdqc_module_output_name(m, slot), want, file, got);
            return RC_INPUT;
        }
        if (o->tolerance_quantized && !(ex[slot].scale > 0)) {
            fprintf(stderr, "qdqc: error: --tolerance %gq: output '%s' does not come from a "
                            "per-tensor dequantize, so it has no quantized unit\n",
                    o->tolerance, qdqc_module_output_name(m, slot));
            return RC_USAGE;
        }
    }
    return RC_OK;
}

static bool
numel_of(int rank, const int64_t *dims, size_t *n)
{
    size_t k = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && k > ((size_t)1 << 40) / (size_t)dims[i]))
            return false;
        k *= (size_t)dims[i];
    }
    *n = k;
    return true;
}

/* One `qdqc run`: the module and the buffers of its inputs, outputs and expected arrays. */
typedef struct Run {
    qdqc_context *ctx;
    const RunOpts *o;
    qdqc_module *m;
    size_t nin, nout;
    qdqc_array *arrs;     /* [nin] inputs read or generated */
    const void **inbufs;  /* [nin] */
    void **outbufs;       /* [nout], each followed by OUT_CANARY bytes */
    size_t *outbytes;     /* [nout] */
    Expect *ex;           /* [nout] */
    char **files;         /* [nout] .npy names for --output-dir */
} Run;

/* every --input must name a graph input; a one-input model takes a bare FILE.npy */
static int
bind_inputs(Run *r)
{
    const RunOpts *o = r->o;
    size_t nin = r->nin;
    for (int k = 0; k < o->ninputs; k++) {
        const char *spec = o->inputs[k], *eq = strchr(spec, '='), *file = NULL;
        size_t slot = nin;
        for (size_t i = 0; eq && i < nin; i++) {
            const char *name = qdqc_module_input_name(r->m, i);
            if (strlen(name) == (size_t)(eq - spec) && !strncmp(name, spec, (size_t)(eq - spec))) {
                slot = i;
                file = eq + 1;
            }
        }
        if (slot == nin && nin == 1 && (!eq || access(spec, F_OK) == 0)) {
            slot = 0;
            file = spec;
        }
        if (slot == nin && !eq) {
            fprintf(stderr, "qdqc: error: --input needs NAME=FILE.npy (the model has %zu "
                            "inputs), got '%s'\n", nin, spec);
            return RC_USAGE;
        }
        if (slot == nin) {
            size_t nl = (size_t)(eq - spec);
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(nl < 200 ? nl : 200), o->inputs[k]);
            return err(RC_USAGE, "the model has no input named '%s'%s", name, "");
        }
        if (!*file)
            return err(RC_USAGE, "--input needs NAME=FILE.npy, got '%s'%s", spec, "");
        if (r->arrs[slot].data)
            return err(RC_USAGE, "input '%s' is given twice%s",
                       qdqc_module_input_name(r->m, slot), "");
        if (qdqc_npy_read(r->ctx, file, &r->arrs[slot]) != QDQC_OK)
            return RC_INPUT;
    }
    return RC_OK;
}

/* "et[d0,d1,...]" into buf */
static void
type_text(char *buf, size_t len, const char *et, int rank, const int64_t *dims)
{
    int w = snprintf(buf, len, "%s[", et);
    for (int d = 0; d < rank && w < (int)len - 20; d++)
        w += snprintf(buf + w, len - (size_t)w, d ? ",%lld" : "%lld", (long long)dims[d]);
    snprintf(buf + w, len - (size_t)w, "]");
}

/* input i read from a file: its type and shape must be the model's (numpy has no 4-bit dtype:
 * an i4 (u4) input is read from an i8 (u8) array, one value per byte, each in the 4-bit range) */
static int
check_input_file(Run *r, size_t i, size_t n)
{
    const char *name = qdqc_module_input_name(r->m, i);
    const char *et = qdqc_module_input_elem_type(r->m, i);
    int rank = qdqc_module_input_rank(r->m, i);
    const int64_t *dims = qdqc_module_input_dims(r->m, i);
    const qdqc_array *a = &r->arrs[i];
    bool is4 = strcmp(et, "i4") == 0 || strcmp(et, "u4") == 0;
    const char *file_et = is4 ? (et[0] == 'i' ? "i8" : "u8") : et;
    bool same = a->rank == rank && !strcmp(a->elem_type, file_et);
    for (int d = 0; same && d < rank; d++)
        same = a->dims[d] == dims[d];
    if (!same) {
        char want[160], got[160];
        type_text(want, sizeof want, et, rank, dims);
        type_text(got, sizeof got, a->elem_type, a->rank, a->dims);
        fprintf(stderr, "qdqc: error: input '%s' must be %s, the file holds %s\n", name, want,
                got);
        return RC_INPUT;
    }
    int lo = et[0] == 'i' ? -8 : 0, hi = et[0] == 'i' ? 7 : 15;
    for (size_t k = 0; is4 && k < n; k++) {
        int v = et[0] == 'i' ? ((const int8_t *)a->data)[k] : ((const uint8_t *)a->data)[k];
        if (v < lo || v > hi) {
            fprintf(stderr, "qdqc: error: input '%s' holds %d at flat index %zu, outside the %s "
                            "range [%d, %d]\n", name, v, k, et, lo, hi);
            return RC_INPUT;
        }
    }
    return RC_OK;
}

/* every input read and checked, or generated with --random-inputs */
static int
prepare_inputs(Run *r)
{
    for (size_t i = 0; i < r->nin; i++) {
        const char *name = qdqc_module_input_name(r->m, i);
        const char *et = qdqc_module_input_elem_type(r->m, i);
        size_t n, es = qdqc_elem_type_size(et);
        if (!numel_of(qdqc_module_input_rank(r->m, i), qdqc_module_input_dims(r->m, i), &n) ||
            !es)
            return err(RC_INPUT, "input '%s' has an unsupported type or shape%s", name, "");
        int rc;
        if (r->arrs[i].data) {
            if ((rc = check_input_file(r, i, n)) != RC_OK)
                return rc;
        } else if (!r->o->random_inputs) {
            return err(RC_USAGE, "missing input '%s' (use --input %s=FILE.npy or "
                                 "--random-inputs SEED)", name, name);
        } else {
            if (!(r->arrs[i].data = calloc(n ? n : 1, es)))
                return err(RC_INPUT, "out of memory%s%s", "", "");
            if (!cli_fill_random(r->arrs[i].data, n, et, r->o->seed, i))
                return err(RC_INPUT, "cannot generate random inputs of type %s for '%s'", et,
                           name);
        }
        r->inbufs[i] = r->arrs[i].data;
    }
    return RC_OK;
}

/* output buffers, each followed by OUT_CANARY bytes of a known value */
static int
alloc_outputs(Run *r)
{
    for (size_t i = 0; i < r->nout; i++) {
        size_t n, es = qdqc_elem_type_size(qdqc_module_output_elem_type(r->m, i));
        if (!numel_of(qdqc_module_output_rank(r->m, i), qdqc_module_output_dims(r->m, i), &n) ||
            !es || n > (SIZE_MAX - OUT_CANARY) / es ||
            !(r->outbufs[i] = calloc(n * es + OUT_CANARY, 1)))
            return err(RC_INPUT, "cannot allocate output '%s'%s",
                       qdqc_module_output_name(r->m, i), "");
        r->outbytes[i] = n * es;
        memset((char *)r->outbufs[i] + r->outbytes[i], OUT_CANARY_BYTE, OUT_CANARY);
    }
    return RC_OK;
}

/* run the engine; an engine that writes past an output (a code generator bug) fails the run
 * instead of passing silently */
static int
execute(Run *r, bool jit)
{
    if (jit) {
        qdqc_jit *j = NULL;
        qdqc_threadpool *pool = r->o->threads > 1 ? qdqc_threadpool_create(r->o->threads) : NULL;
        qdqc_status st = qdqc_jit_create(r->m, r->o->copts, &j);
        if (st == QDQC_OK && pool)
            qdqc_jit_set_parallel_for(j, qdqc_threadpool_parallel_for, pool);
        if (st == QDQC_OK)
            st = qdqc_jit_run(j, r->inbufs, r->outbufs);
        qdqc_jit_destroy(j);
        qdqc_threadpool_destroy(pool);
        if (st != QDQC_OK)
            return RC_INPUT;
    } else if (qdqc_module_run_reference(r->m, r->inbufs, r->outbufs) != QDQC_OK) {
        return RC_INPUT;
    }
    for (size_t i = 0; i < r->nout; i++)
        for (size_t b = 0; b < OUT_CANARY; b++)
            if (((const unsigned char *)r->outbufs[i])[r->outbytes[i] + b] != OUT_CANARY_BYTE)
                return err(RC_INPUT, "the engine wrote past the end of output '%s'%s",
                           qdqc_module_output_name(r->m, i), " (a code generator bug)");
    return RC_OK;
}

/* print, write (--output-dir) and compare (--expect) every output */
static int
report_outputs(Run *r)
{
    const RunOpts *o = r->o;
    int rc = RC_OK;
    if (o->output_dir && !make_dirs(o->output_dir))
        return RC_INPUT;
    size_t nfail = 0;
    for (size_t i = 0; i < r->nout; i++) {
        const char *et = qdqc_module_output_elem_type(r->m, i);
        size_t n = r->outbytes[i] / qdqc_elem_type_size(et);
        print_summary(r->m, i, r->outbufs[i], n);
        if (o->output_dir) {
            char *path = join_path(o->output_dir, r->files[i]);
            if (!path || qdqc_npy_write(r->ctx, path, et, qdqc_module_output_rank(r->m, i),
                                        qdqc_module_output_dims(r->m, i),
                                        r->outbufs[i]) != QDQC_OK)
                rc = RC_INPUT;
            else
                printf("  written to %s\n", path);
            free(path);
        }
        if (r->ex[i].given && !compare_expect(r->m, i, r->outbufs[i], n, &r->ex[i], o))
            nfail++;
    }
    if (nfail) {
        fprintf(stderr, "qdqc: error: %zu output%s differ%s from the expected beyond the "
                        "tolerance\n", nfail, nfail == 1 ? "" : "s", nfail == 1 ? "s" : "");
        rc = RC_INPUT;
    }
    return rc;
}

/* the run after the passes: scales[nout0] are the outputs' quantized units before them */
static int
run_module(Run *r, const double *scales, size_t nout0, bool jit)
{
    size_t nin = r->nin, nout = r->nout;
    r->arrs = calloc(nin ? nin : 1, sizeof(qdqc_array));
    r->inbufs = calloc(nin ? nin : 1, sizeof(void *));
    r->outbufs = calloc(nout ? nout : 1, sizeof(void *));
    r->outbytes = calloc(nout ? nout : 1, sizeof(size_t));
    r->ex = calloc(nout ? nout : 1, sizeof(Expect));
    if (!r->arrs || !r->inbufs || !r->outbufs || !r->outbytes || !r->ex)
        return err(RC_INPUT, "out of memory%s%s", "", "");
    int rc;
    if ((rc = bind_inputs(r)) != RC_OK || (rc = prepare_inputs(r)) != RC_OK)
        return rc;
    for (size_t i = 0; i < nout; i++) /* else after the passes (a dequantize moved last) */
        r->ex[i].scale = i < nout0 && scales[i] > 0 ? scales[i]
                                                    : qdqc_module_output_scale(r->m, i);
    if ((rc = read_expects(r->ctx, r->m, r->o, r->ex)) != RC_OK)
        return rc;
    if (!(r->files = output_file_names(r->m, nout)))
        return err(RC_INPUT, "out of memory%s%s", "", "");
    if ((rc = alloc_outputs(r)) != RC_OK || (rc = execute(r, jit)) != RC_OK)
        return rc;
    return report_outputs(r);
}

static void
run_free(Run *r)
{
    for (size_t i = 0; r->arrs && i < r->nin; i++)
        qdqc_array_free(&r->arrs[i]);
    for (size_t i = 0; r->outbufs && i < r->nout; i++)
        free(r->outbufs[i]);
    free(r->arrs);
    free(r->inbufs);
    free(r->outbufs);
    free(r->outbytes);
    for (size_t i = 0; r->ex && i < r->nout; i++)
        qdqc_array_free(&r->ex[i].a);
    free(r->ex);
    for (size_t i = 0; r->files && i < r->nout; i++)
        free(r->files[i]);
    free(r->files);
}

/* A model with symbolic input dimensions runs at the shapes of the given arrays: each symbol
 * of an input is bound (qdqc_context_set_dim) to the array's extent on that axis. Returns how
 * many were bound, or -1 on an error (reported). */
static int
bind_symbols(qdqc_context *ctx, const RunOpts *o, qdqc_module *m)
{
    size_t nin = qdqc_module_input_count(m);
    int bound = 0;
    for (int k = 0; k < o->ninputs; k++) {
        const char *spec = o->inputs[k], *eq = strchr(spec, '='), *file = spec;
        size_t slot = nin;
        for (size_t i = 0; eq && i < nin; i++) {
            const char *name = qdqc_module_input_name(m, i);
            if (strlen(name) == (size_t)(eq - spec) && !strncmp(name, spec, (size_t)(eq - spec)))
                slot = i, file = eq + 1;
        }
        if (slot == nin && nin == 1)
            slot = 0;
        int rank = slot < nin ? qdqc_module_input_rank(m, slot) : 0;
        bool sym = false;
        for (int d = 0; d < rank; d++)
            sym = sym || qdqc_module_input_dim_symbol(m, slot, d);
        if (!sym)
            continue;
        qdqc_array a = {0};
        if (qdqc_npy_read(ctx, file, &a) != QDQC_OK)
            return -1;
        for (int d = 0; d < rank && a.rank == rank; d++) {
            const char *s = qdqc_module_input_dim_symbol(m, slot, d);
            if (s && qdqc_context_set_dim(ctx, s, a.dims[d]) != QDQC_OK) {
                qdqc_array_free(&a);
                return -1;
            }
            bound += s != NULL;
        }
        qdqc_array_free(&a);
    }
    return bound;
}

int
qdqc_cli_run(qdqc_context *ctx, const RunOpts *o)
{
    const char *engine = o->engine ? o->engine : "jit";
    bool jit = strcmp(engine, "jit") == 0;
    if (strcmp(engine, "ref") != 0 && !jit)
        return err(RC_USAGE, "unknown engine '%s' (available: ref, jit)%s", engine, "");
    qdqc_module *m = NULL;
    if (cli_load_module(ctx, o->model, &m) != QDQC_OK)
        return RC_INPUT;
    int nb = bind_symbols(ctx, o, m);
    if (nb != 0) { /* read again with the symbols bound */
        qdqc_module_destroy(m);
        m = NULL;
        if (nb < 0 || cli_load_module(ctx, o->model, &m) != QDQC_OK)
            return RC_INPUT;
    }
    /* the quantized unit of each output, before the passes fold its dequantize into another
     * op (a Gemm with a float result) */
    size_t nout0 = qdqc_module_output_count(m);
    double *scales = calloc(nout0 ? nout0 : 1, sizeof(double));
    for (size_t i = 0; scales && i < nout0; i++)
        scales[i] = qdqc_module_output_scale(m, i);
    const char *passes = o->passes ? o->passes : "default";
    int rc;
    if (!scales) {
        fprintf(stderr, "qdqc: error: out of memory\n");
        rc = RC_INPUT;
    } else if (*passes && qdqc_module_run_passes(m, passes) != QDQC_OK) {
        rc = RC_INPUT;
    } else {
        Run r = {.ctx = ctx, .o = o, .m = m, .nin = qdqc_module_input_count(m),
                 .nout = qdqc_module_output_count(m)};
        rc = run_module(&r, scales, nout0, jit);
        run_free(&r);
    }
    free(scales);
    qdqc_module_destroy(m);
    return rc;
}
