/* fuzz_onnx.c: libFuzzer harness for the ONNX reader. Every input must either import (and then
 * verify and print) or fail with diagnostics: no crash, leak, hang or huge allocation.
 * Built by test/fuzz/CMakeLists.txt with -DQDQC_FUZZ=ON (clang, -fsanitize=fuzzer,address);
 * test/fuzz/run.sh builds and runs it. External data is disabled (path NULL-like). */
#include "import/import.h"
#include "ir/ir.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    qdqc_context *ctx = qdqc_context_create();
    Module *m = imp_onnx(ctx, data, size, "<fuzz>");
    if (m) {
        if (ir_verify(&m->g)) {
            char *s = ir_print(&m->g);
            free(s);
        }
        ir_module_destroy(m);
    }
    qdqc_context_destroy(ctx);
    return 0;
}
