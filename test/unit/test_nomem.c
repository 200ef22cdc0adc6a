/* test_nomem.c: an allocation failure inside a public API call returns QDQC_ERR_NOMEM with
 * "out of memory" in the context, never aborts the process (docs/api.md, "Out of memory").
 *
 * For each entry point that allocates (ONNX import from a file and from bytes, text IR parse,
 * the default pipeline, object and header code generation, JIT session creation, the reference
 * interpreter, the report), the test first counts the allocations a clean call makes through
 * the library's allocator (qdqc_test_alloc_count), then repeats the call with the n-th of them
 * failing (qdqc_test_fail_alloc_after): for every n up to 40 and about 40 more spread over the
 * rest. Every such call must return QDQC_ERR_NOMEM (NULL for the char * results) with
 * "out of memory" in the diagnostics, and the same context must then do the call again
 * successfully. Models: test/models/fixtures/conv3x3relu_pc_u8.onnx and a small text-IR graph.
 *
 * Usage: test_nomem    (prints "N passed, M failed"; exit status 1 on failure) */
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef QDQC_NOMEM_MODEL
#define QDQC_NOMEM_MODEL "test/models/fixtures/conv3x3relu_pc_u8.onnx"
#endif

static long passed, failed;

static void
check(int cond, const char *what, const char *stage, long n, const char *detail)
{
    if (cond) {
        passed++;
        return;
    }
    if (failed++ < 15)
        printf("FAIL: %s: %s (allocation %ld)%s%s\n", stage, what, n, detail ? ": " : "",
               detail ? detail : "");
}

static const char graph[] =
    "graph @g(%x: f32[1,3,8,8]) -> u8[1,4,8,8] {\n"
    "  %xq = quantize %x, scale=0.02, zp=3 : i8[1,3,8,8]\n"
    "  %xd = dequantize %xq, scale=0.02, zp=3 : f32[1,3,8,8]\n"
    "  %w = const dense<f32[4,3,1,1], [0.5, -0.25, 0.125, 1.0, 0.75, -0.5, 0.25, 0.0, -1.0, "
    "0.5, 0.5, 0.25]>\n"
    "  %wq = quantize %w, axis=0, scale=[0.01, 0.01, 0.01, 0.01], zp=[0, 0, 0, 0] : "
    "i8[4,3,1,1]\n"
    "  %wd = dequantize %wq, axis=0, scale=[0.01, 0.01, 0.01, 0.01], zp=[0, 0, 0, 0] : "
    "f32[4,3,1,1]\n"
    "  %c = conv %xd, %wd : f32[1,4,8,8]\n"
    "  %r = relu %c : f32[1,4,8,8]\n"
    "  %y = quantize %r, scale=0.05, zp=0 : u8[1,4,8,8]\n"
    "  return %y\n}\n";

static unsigned char *onnx_bytes;
static size_t onnx_len;

/* What a stage does to a fresh module `m` of context ctx (m is NULL for the loaders). */
typedef enum {
    S_IMPORT_FILE,
    S_IMPORT_BYTES,
    S_PARSE,
    S_PASSES,
    S_OBJ,
    S_HEADER,
    S_JIT,
    S_REF,
    S_REPORT,
    S_COUNT
} Stage;
static const char *const stage_names[] = {
    "import ONNX file", "import ONNX bytes", "parse", "passes", "compile object",
    "compile header", "JIT session", "reference run", "report",
};

/* Runs the stage; *produced: the call made an object (freed here). */
static qdqc_status
run_stage(Stage s, qdqc_context *ctx, qdqc_module *m)
{
    qdqc_module *nm = NULL;
    qdqc_status st = QDQC_OK;
    switch (s) {
    case S_IMPORT_FILE:
        st = qdqc_module_import_onnx_file(ctx, QDQC_NOMEM_MODEL, &nm);
        break;
    case S_IMPORT_BYTES:
        st = qdqc_module_import_onnx_bytes(ctx, onnx_bytes, onnx_len, "model.onnx", &nm);
        break;
    case S_PARSE:
        st = qdqc_module_parse(ctx, graph, strlen(graph), "g.qir", &nm);
        break;
    case S_PASSES:
        st = qdqc_module_run_passes(m, NULL);
        break;
    case S_OBJ:
    case S_HEADER: {
        char *out = NULL;
        size_t len = 0;
        st = qdqc_module_compile_to_memory(m, NULL, s == S_OBJ ? QDQC_EMIT_OBJ : QDQC_EMIT_HEADER,
                                           &out, &len);
        if (st == QDQC_OK && (!out || !len))
            st = QDQC_ERR_CODEGEN;
        qdqc_string_free(out);
        break;
    }
    case S_JIT: {
        qdqc_jit *j = NULL;
        st = qdqc_jit_create(m, NULL, &j);
        qdqc_jit_destroy(j);
        break;
    }
    case S_REF: {
        float x[3 * 8 * 8];
        unsigned char y[4 * 8 * 8];
        for (int i = 0; i < 3 * 8 * 8; i++)
            x[i] = (float)(i % 17 - 8) / 8.0f;
        const void *in[1] = {x};
        void *out[1] = {y};
        st = qdqc_module_run_reference(m, in, out);
        break;
    }
    case S_REPORT: {
        char *r = qdqc_module_report(m);
        st = r ? QDQC_OK : QDQC_ERR_NOMEM;
        qdqc_string_free(r);
        break;
    }
    default:
        break;
    }
    qdqc_module_destroy(nm);
    return st;
}

/* A module for the stage: none for the loaders, as parsed for passes, after the passes for the
 * rest. */
static qdqc_module *
prepare(Stage s, qdqc_context *ctx)
{
    if (s <= S_PARSE)
        return NULL;
    qdqc_module *m = NULL;
    if (qdqc_module_parse(ctx, graph, strlen(graph), "g.qir", &m) != QDQC_OK)
        return NULL;
    if (s > S_PASSES && qdqc_module_run_passes(m, NULL) != QDQC_OK) {
        qdqc_module_destroy(m);
        return NULL;
    }
    return m;
}

static void
test_stage(Stage s)
{
    const char *name = stage_names[s];
    qdqc_context *ctx = qdqc_context_create();
    qdqc_module *m = prepare(s, ctx);
    if (s > S_PARSE && !m) {
        check(0, "prepare the module", name, 0, qdqc_context_get_diagnostics(ctx));
        qdqc_context_destroy(ctx);
        return;
    }
    qdqc_test_fail_alloc_after(0);
    qdqc_status st = run_stage(s, ctx, m);
    long count = qdqc_test_alloc_count();
    check(st == QDQC_OK, "clean call", name, 0, qdqc_context_get_diagnostics(ctx));
    check(count > 0, "the call allocates through the library's allocator", name, count, NULL);
    qdqc_module_destroy(m);
    qdqc_context_destroy(ctx);
    long tried = 0;
    for (long n = 1; n <= count; n += n < 40 ? 1 : (count - 40) / 40 + 1) {
        ctx = qdqc_context_create();
        m = prepare(s, ctx);
        qdqc_test_fail_alloc_after(n);
        st = run_stage(s, ctx, m);
        qdqc_test_fail_alloc_after(0);
        const char *d = qdqc_context_get_diagnostics(ctx);
        check(st == QDQC_ERR_NOMEM, "QDQC_ERR_NOMEM", name, n, d);
        check(strstr(d, "error: out of memory") != NULL, "\"out of memory\" diagnostic", name, n,
              d);
        tried++;
        /* the context still works: the same call again, on a fresh module (the failed
         * call's module, if any, may only be destroyed) */
        qdqc_module_destroy(m);
        qdqc_context_clear_diagnostics(ctx);
        m = prepare(s, ctx);
        st = run_stage(s, ctx, m);
        check(st == QDQC_OK, "the context works after QDQC_ERR_NOMEM", name, n,
              qdqc_context_get_diagnostics(ctx));
        qdqc_module_destroy(m);
        qdqc_context_destroy(ctx);
    }
    printf("%s: %ld allocations, %ld injected failures\n", name, count, tried);
}

int
main(void)
{
    FILE *f = fopen(QDQC_NOMEM_MODEL, "rb");
    if (!f) {
        printf("FAIL: cannot open %s\n", QDQC_NOMEM_MODEL);
        return 1;
    }
    onnx_bytes = malloc(1 << 20);
    onnx_len = onnx_bytes ? fread(onnx_bytes, 1, 1 << 20, f) : 0;
    fclose(f);
    for (int s = 0; s < S_COUNT; s++)
        test_stage((Stage)s);
    /* outside any API call there is no trap: the hook is off again, nothing fails */
    qdqc_context *ctx = qdqc_context_create();
    check(ctx != NULL, "context after the runs", "main", 0, NULL);
    qdqc_context_destroy(ctx);
    /* qdqc_context_create itself: NULL, not an abort */
    qdqc_test_fail_alloc_after(1);
    ctx = qdqc_context_create();
    qdqc_test_fail_alloc_after(0);
    check(ctx == NULL, "qdqc_context_create returns NULL when it cannot allocate", "main", 1,
          NULL);
    qdqc_context_destroy(ctx);
    free(onnx_bytes);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
