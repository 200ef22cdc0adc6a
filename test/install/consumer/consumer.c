/* consumer.c: an out-of-tree program using the installed qdqc (test/install/run-install-test.sh).
 * Parses a small text-IR graph, runs the default pipeline, prints the IR and checks that the
 * library it runs against has the version of the header it was compiled with. Exit 0 on
 * success; any failure prints the diagnostics and exits 1. */
#include <qdqc/qdqc.h>

#include <stdio.h>
#include <string.h>

static const char k_graph[] =
    "graph @relu_qdq(%x: u8[1,4]{scale=0.5, zp=128}) -> u8[1,4]{scale=0.5, zp=128} {\n"
    "  %d = dequantize %x, scale=0.5, zp=128 : f32[1,4]\n"
    "  %r = relu %d : f32[1,4]\n"
    "  %q = quantize %r, scale=0.5, zp=128 : u8[1,4]{scale=0.5, zp=128}\n"
    "  return %q\n"
    "}\n";

static int
fail(qdqc_context *ctx, const char *what, qdqc_status st)
{
    fprintf(stderr, "consumer: %s: %s\n%s", what, qdqc_status_name(st),
            ctx ? qdqc_context_get_diagnostics(ctx) : "");
    qdqc_context_destroy(ctx);
    return 1;
}

int
main(void)
{
    if (qdqc_version() != QDQC_VERSION_HEX) {
        fprintf(stderr, "consumer: library version %#x, header %#x\n", qdqc_version(),
                (unsigned)QDQC_VERSION_HEX);
        return 1;
    }
    qdqc_context *ctx = qdqc_context_create();
    if (!ctx)
        return fail(NULL, "qdqc_context_create", QDQC_ERR_INVALID_ARG);
    qdqc_module *m = NULL;
    qdqc_status st = qdqc_module_parse(ctx, k_graph, strlen(k_graph), "consumer.qir", &m);
    if (st != QDQC_OK)
        return fail(ctx, "parse", st);
    st = qdqc_module_run_passes(m, NULL);
    if (st != QDQC_OK) {
        qdqc_module_destroy(m);
        return fail(ctx, "passes", st);
    }
    char *text = qdqc_module_print(m);
    if (!text) {
        qdqc_module_destroy(m);
        return fail(ctx, "print", QDQC_ERR_INVALID_ARG);
    }
    printf("qdqc %s\n%s", qdqc_version_string(), text);
    qdqc_string_free(text);
    qdqc_module_destroy(m);
    qdqc_context_destroy(ctx);
    return 0;
}
