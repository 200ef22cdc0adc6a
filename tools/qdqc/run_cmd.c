/* run_cmd.c: `qdqc run MODEL [--engine=jit|ref] --input NAME=FILE.npy ... --output-dir DIR
 * [--random-inputs SEED] [--passes=...]`. Only the public API; no compiler logic.
 * Output files are named after the graph outputs (characters outside [A-Za-z0-9_.-] become
 * '_') and written in each output's own element type. */
#define _POSIX_C_SOURCE 200809L
#include "run_cmd.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

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

static uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Deterministic inputs: floats uniform in [-1, 1), 8/16-bit integers over their full range,
 * wider integers in [0, 3], bool 0/1. */
static bool
fill_random(void *buf, size_t n, const char *et, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&s);
        if (!strcmp(et, "f32")) {
            float v = (float)((double)(r >> 40) / (double)(1 << 24) * 2.0 - 1.0);
            memcpy((char *)buf + 4 * i, &v, 4);
        } else if (!strcmp(et, "f64")) {
            double v = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
            memcpy((char *)buf + 8 * i, &v, 8);
        } else if (!strcmp(et, "i8") || !strcmp(et, "u8")) {
            ((uint8_t *)buf)[i] = (uint8_t)r;
        } else if (!strcmp(et, "i4") || !strcmp(et, "u4")) {
            ((uint8_t *)buf)[i] = !strcmp(et, "u4") ? (uint8_t)(r & 15) : (uint8_t)((int)(r & 15) - 8);
        } else if (!strcmp(et, "i16") || !strcmp(et, "u16")) {
            uint16_t v = (uint16_t)r;
            memcpy((char *)buf + 2 * i, &v, 2);
        } else if (!strcmp(et, "i32") || !strcmp(et, "u32")) {
            uint32_t v = (uint32_t)(r & 3);
            memcpy((char *)buf + 4 * i, &v, 4);
        } else if (!strcmp(et, "i64")) {
            uint64_t v = r & 3;
            memcpy((char *)buf + 8 * i, &v, 8);
        } else if (!strcmp(et, "bool")) {
            ((uint8_t *)buf)[i] = (uint8_t)(r & 1);
        } else {
            return false;
        }
    }
    return true;
}

/* mkdir -p */
static bool
make_dirs(const char *dir)
{
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
            free(p);
            return false;
        }
        p[i] = c;
    }
    free(p);
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *
output_path(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    char *p = malloc(dl + nl + 8);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    p[dl] = '/';
    for (size_t i = 0; i < nl; i++) {
        char ch = name[i];
        bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
        p[dl + 1 + i] = ok ? ch : '_';
    }
    memcpy(p + dl + 1 + nl, ".npy", 5);
    return p;
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

int
qdqc_cli_run(qdqc_context *ctx, const RunOpts *o)
{
    const char *engine = o->engine ? o->engine : "jit";
    bool jit = strcmp(engine, "jit") == 0;
    if (strcmp(engine, "ref") != 0 && !jit)
        return err(RC_USAGE, "unknown engine '%s' (available: ref, jit)%s", engine, "");
    if (!o->output_dir)
        return err(RC_USAGE, "run needs --output-dir DIR%s%s", "", "");
    qdqc_module *m = NULL;
    if (qdqc_module_load_file(ctx, o->model, &m) != QDQC_OK)
        return RC_INPUT;
    int rc = RC_OK;
    const char *passes = o->passes ? o->passes : "default";
    if (*passes && qdqc_module_run_passes(m, passes) != QDQC_OK) {
        qdqc_module_destroy(m);
        return RC_INPUT;
    }
    size_t nin = qdqc_module_input_count(m), nout = qdqc_module_output_count(m);
    qdqc_array *arrs = calloc(nin ? nin : 1, sizeof(qdqc_array));
    const void **inbufs = calloc(nin ? nin : 1, sizeof(void *));
    void **outbufs = calloc(nout ? nout : 1, sizeof(void *));
    size_t *outbytes = calloc(nout ? nout : 1, sizeof(size_t));
    if (!arrs || !inbufs || !outbufs || !outbytes) {
        rc = err(RC_INPUT, "out of memory%s%s", "", "");
        goto done;
    }
    /* every --input must name a graph input */
    for (int k = 0; k < o->ninputs; k++) {
        const char *eq = strchr(o->inputs[k], '=');
        if (!eq || eq == o->inputs[k] || !eq[1]) {
            rc = err(RC_USAGE, "--input needs NAME=FILE.npy, got '%s'%s", o->inputs[k], "");
            goto done;
        }
        size_t nl = (size_t)(eq - o->inputs[k]);
        bool found = false;
        for (size_t i = 0; i < nin; i++) {
            const char *name = qdqc_module_input_name(m, i);
            if (strlen(name) == nl && !strncmp(name, o->inputs[k], nl)) {
                if (arrs[i].data) {
                    rc = err(RC_USAGE, "input '%s' is given twice%s", name, "");
                    goto done;
                }
                if (qdqc_npy_read(ctx, eq + 1, &arrs[i]) != QDQC_OK) {
                    rc = RC_INPUT;
                    goto done;
                }
                found = true;
            }
        }
        if (!found) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(nl < 200 ? nl : 200), o->inputs[k]);
            rc = err(RC_USAGE, "the model has no input named '%s'%s", name, "");
            goto done;
        }
    }
    for (size_t i = 0; i < nin; i++) {
        const char *name = qdqc_module_input_name(m, i);
        const char *et = qdqc_module_input_elem_type(m, i);
        int rank = qdqc_module_input_rank(m, i);
        const int64_t *dims = qdqc_module_input_dims(m, i);
        size_t n, es = qdqc_elem_type_size(et);
        if (!numel_of(rank, dims, &n) || !es) {
            rc = err(RC_INPUT, "input '%s' has an unsupported type or shape%s", name, "");
            goto done;
        }
        if (!arrs[i].data) {
            if (!o->random_inputs) {
                rc = err(RC_USAGE, "missing input '%s' (use --input %s=FILE.npy or "
                                   "--random-inputs SEED)", name, name);
                goto done;
            }
            arrs[i].data = calloc(n ? n : 1, es);
            if (!arrs[i].data) {
                rc = err(RC_INPUT, "out of memory%s%s", "", "");
                goto done;
            }
            if (!fill_random(arrs[i].data, n, et, o->seed * 1000003u + i)) {
                rc = err(RC_INPUT, "cannot generate random inputs of type %s for '%s'", et, name);
                goto done;
            }
        } else {
            bool same = arrs[i].rank == rank && !strcmp(arrs[i].elem_type, et) &&
                        !(strcmp(et, "i4") == 0 || strcmp(et, "u4") == 0);
            for (int d = 0; same && d < rank; d++)
                same = arrs[i].dims[d] == dims[d];
            if (!same) {
                char want[160], got[160];
                int w = snprintf(want, sizeof want, "%s[", et);
                for (int d = 0; d < rank && w < 140; d++)
                    w += snprintf(want + w, sizeof want - (size_t)w, d ? ",%lld" : "%lld",
                                  (long long)dims[d]);
                snprintf(want + w, sizeof want - (size_t)w, "]");
                int g = snprintf(got, sizeof got, "%s[", arrs[i].elem_type);
                for (int d = 0; d < arrs[i].rank && g < 140; d++)
                    g += snprintf(got + g, sizeof got - (size_t)g, d ? ",%lld" : "%lld",
                                  (long long)arrs[i].dims[d]);
                snprintf(got + g, sizeof got - (size_t)g, "]");
                fprintf(stderr, "qdqc: error: input '%s' must be %s, the file holds %s\n", name,
                        want, got);
                rc = RC_INPUT;
                goto done;
            }
        }
        inbufs[i] = arrs[i].data;
    }
    for (size_t i = 0; i < nout; i++) {
        size_t n, es = qdqc_elem_type_size(qdqc_module_output_elem_type(m, i));
        if (!numel_of(qdqc_module_output_rank(m, i), qdqc_module_output_dims(m, i), &n) || !es ||
            n > (SIZE_MAX - OUT_CANARY) / es || !(outbufs[i] = calloc(n * es + OUT_CANARY, 1))) {
            rc = err(RC_INPUT, "cannot allocate output '%s'%s", qdqc_module_output_name(m, i), "");
            goto done;
        }
        outbytes[i] = n * es;
        memset((char *)outbufs[i] + outbytes[i], OUT_CANARY_BYTE, OUT_CANARY);
    }
    if (jit) {
        qdqc_jit *j = NULL;
        qdqc_threadpool *pool = o->threads > 1 ? qdqc_threadpool_create(o->threads) : NULL;
        qdqc_status st = qdqc_jit_create(m, o->copts, &j);
        if (st == QDQC_OK && pool)
            qdqc_jit_set_parallel_for(j, qdqc_threadpool_parallel_for, pool);
        if (st == QDQC_OK)
            st = qdqc_jit_run(j, inbufs, outbufs);
        qdqc_jit_destroy(j);
        qdqc_threadpool_destroy(pool);
        if (st != QDQC_OK) {
            rc = RC_INPUT;
            goto done;
        }
    } else if (qdqc_module_run_reference(m, inbufs, outbufs) != QDQC_OK) {
        rc = RC_INPUT;
        goto done;
    }
    /* every output buffer is followed by OUT_CANARY bytes of a known value: an engine that
     * writes past an output (a code generator bug) fails the run instead of passing silently */
    for (size_t i = 0; i < nout; i++)
        for (size_t b = 0; b < OUT_CANARY; b++)
            if (((const unsigned char *)outbufs[i])[outbytes[i] + b] != OUT_CANARY_BYTE) {
                rc = err(RC_INPUT, "the engine wrote past the end of output '%s'%s",
                         qdqc_module_output_name(m, i), " (a code generator bug)");
                goto done;
            }
    if (!make_dirs(o->output_dir)) {
        rc = err(RC_INPUT, "cannot create directory '%s'%s", o->output_dir, "");
        goto done;
    }
    for (size_t i = 0; i < nout; i++) {
        char *path = output_path(o->output_dir, qdqc_module_output_name(m, i));
        if (!path || qdqc_npy_write(ctx, path, qdqc_module_output_elem_type(m, i),
                                    qdqc_module_output_rank(m, i), qdqc_module_output_dims(m, i),
                                    outbufs[i]) != QDQC_OK)
            rc = RC_INPUT;
        free(path);
    }
done:
    for (size_t i = 0; arrs && i < nin; i++)
        qdqc_array_free(&arrs[i]);
    for (size_t i = 0; outbufs && i < nout; i++)
        free(outbufs[i]);
    free(arrs);
    free(inbufs);
    free(outbufs);
    free(outbytes);
    qdqc_module_destroy(m);
    return rc;
}
