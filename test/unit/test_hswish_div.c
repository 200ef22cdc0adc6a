/* test_hswish_div.c: the identity behind the JIT's hard_swish (lib/codegen/lower/float_math.c,
 * fe_piecewise). The reference computes hard_swish of an f32 x in double as
 *     (float)(x * clamp(x / 6.0 + 0.5, 0, 1))
 * and the JIT multiplies by the double nearest 1/6 instead of dividing by 6 (a vector division
 * costs several times a multiplication). The two quotients differ in the last bit for some x,
 * but the result rounded to f32 is the same for every f32 x: this sweeps the f32 bit patterns
 * (default every 7th, 614 million; `--stride 1` all 2^32, a few seconds optimised) and fails on
 * the first that differs. NaN inputs give NaN on both sides (comparisons false, the product
 * propagates x). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double
clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

int
main(int argc, char **argv)
{
    uint64_t stride = 7;
    if (argc == 3 && strcmp(argv[1], "--stride") == 0)
        stride = strtoull(argv[2], NULL, 10);
    else if (argc != 1) {
        fprintf(stderr, "usage: test_hswish_div [--stride N]\n");
        return 2;
    }
    if (stride == 0)
        stride = 1;
    const double sixth = 1.0 / 6.0;
    uint64_t n = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += stride) {
        uint32_t b = (uint32_t)u;
        float x;
        memcpy(&x, &b, 4);
        double d = x;
        float ref = (float)(d * clamp01(d / 6.0 + 0.5));
        float jit = (float)(d * clamp01(d * sixth + 0.5));
        uint32_t rb, jb;
        memcpy(&rb, &ref, 4);
        memcpy(&jb, &jit, 4);
        if (rb != jb && !(isnan(ref) && isnan(jit))) {
            fprintf(stderr, "FAIL: x = %a (0x%08x): x / 6 gives %a, x * (1/6) gives %a\n",
                    (double)x, b, (double)ref, (double)jit);
            return 1;
        }
        n++;
    }
    printf("hard_swish: x * (1/6) == x / 6 after rounding to f32 on %llu inputs\n",
           (unsigned long long)n);
    return 0;
}
