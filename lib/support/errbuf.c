/* errbuf.c: errbuf_fail, the one helper that writes a message into a caller's error buffer
 * (support.h). A file of its own, with no other dependency, so the GEMM generator's standalone
 * builds (test/unit/run_aarch64_gemm.sh, bench/peak/run.sh: lib/codegen/target, irb/core.c,
 * gemm) link it without the rest of lib/support. */
#include "support/support.h"

#include <stdarg.h>
#include <stdio.h>

bool
errbuf_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return false;
}
