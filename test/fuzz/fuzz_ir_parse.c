/* fuzz_ir_parse.c: libFuzzer harness for the text IR parser and verifier.
 * Any input must give a module or diagnostics: no crash, hang, leak or unbounded allocation.
 * A module that parses must print text that parses again to the same text. */
#include "ir/ir.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    qdqc_context *ctx = qdqc_context_create();
    Module *m = ir_parse(ctx, (const char *)data, size, "fuzz.qir");
    if (m) {
        if (ir_verify(&m->g)) {
            char *s = ir_print(&m->g);
            Module *m2 = ir_parse(ctx, s, strlen(s), "fuzz2.qir");
            if (!m2)
                __builtin_trap(); /* printed text must parse */
            char *s2 = ir_print(&m2->g);
            if (strcmp(s, s2) != 0)
                __builtin_trap(); /* and print identically */
            free(s2);
            ir_module_destroy(m2);
            free(s);
        }
        ir_module_destroy(m);
    }
    qdqc_context_destroy(ctx);
    return 0;
}
