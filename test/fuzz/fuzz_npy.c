/* fuzz_npy.c: libFuzzer harness for the .npy reader (lib/runtime/npy.c).
 * Any input must be accepted or rejected with a message: no crash, hang, leak or unbounded
 * allocation. An accepted array must serialize and parse back to the same type, shape and
 * bytes. Seed corpus: test/fuzz/corpus/npy. */
#include "runtime/npy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    NpyArray a;
    char err[256];
    if (!npy_parse(data, size, &a, err, sizeof err)) {
        if (!err[0] || strlen(err) >= sizeof err)
            __builtin_trap(); /* a rejection always says why */
        return 0;
    }
    void *buf;
    size_t len;
    if (!npy_serialize(a.type, a.rank, a.dims, a.data, &buf, &len, err, sizeof err))
        __builtin_trap(); /* what we read we can write */
    NpyArray b;
    if (!npy_parse(buf, len, &b, err, sizeof err))
        __builtin_trap();
    if (b.type != a.type || b.rank != a.rank || b.nbytes != a.nbytes ||
        memcmp(b.dims, a.dims, (size_t)a.rank * sizeof(int64_t)) != 0 ||
        (a.nbytes && memcmp(a.data, b.data, a.nbytes) != 0))
        __builtin_trap();
    npy_free(&b);
    free(buf);
    npy_free(&a);
    return 0;
}
