/* test_elementwise.c: unit tests for lib/numerics/elementwise (qadd, qsub, qmul, averages,
 * requantize): explicit ties (half to even, both signs), saturation, clamps, and exhaustive
 * 8-bit comparisons with the float QDQ graph (dequantize, f32 op, quantize). */
#include "numerics/elementwise.h"
#include "numerics/numerics.h"

#include <stdio.h>

static int failed, passed;

#define EXPECT(got, want)                                                                      \
    do {                                                                                       \
        long long g_ = (got), w_ = (want);                                                     \
        if (g_ == w_) {                                                                        \
            passed++;                                                                          \
        } else if (++failed <= 30) {                                                           \
            fprintf(stderr, "FAIL %s:%d: %s = %lld, want %lld\n", __FILE__, __LINE__, #got, g_, \
                    w_);                                                                       \
        }                                                                                      \
    } while (0)

static void
ties(void)
{
    /* qadd: 0.5 * a with b = 0, sy = 1: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2 */
    EXPECT(qn_qadd(1, 0.5f, 0, 0, 1.0f, 0, 1.0f, 0, -128, 127), 0);
    EXPECT(qn_qadd(3, 0.5f, 0, 0, 1.0f, 0, 1.0f, 0, -128, 127), 2);
    EXPECT(qn_qadd(5, 0.5f, 0, 0, 1.0f, 0, 1.0f, 0, -128, 127), 2);
    EXPECT(qn_qadd(-1, 0.5f, 0, 0, 1.0f, 0, 1.0f, 0, -128, 127), 0);
    EXPECT(qn_qadd(-3, 0.5f, 0, 0, 1.0f, 0, 1.0f, 0, -128, 127), -2);
    /* zero points on every side; the tie is on the value before adding zy */
    EXPECT(qn_qadd(131, 0.5f, 128, 128, 0.25f, 128, 1.0f, 10, 0, 255), 12);
    /* saturation and clamp */
    EXPECT(qn_qadd(127, 1.0f, 0, 127, 1.0f, 0, 1.0f, 0, -128, 127), 127);
    EXPECT(qn_qadd(-128, 1.0f, 0, -128, 1.0f, 0, 1.0f, 0, -128, 127), -128);
    EXPECT(qn_qadd(-5, 1.0f, 0, 0, 1.0f, 0, 1.0f, 3, 3, 127), 3); /* relu clamp at zy */
    /* qsub */
    EXPECT(qn_qsub(3, 0.5f, 0, 0, 1.0f, 0, 1.0f, 0, -128, 127), 2);
    EXPECT(qn_qsub(0, 1.0f, 0, 3, 0.5f, 0, 1.0f, 0, -128, 127), -2);
    EXPECT(qn_qsub(0, 1.0f, 0, 1, 0.5f, 0, 1.0f, 0, -128, 127), 0);
    /* qmul: 0.5 * 1 -> 0, 1.5 -> 2, -2.5 -> -2 */
    EXPECT(qn_qmul(1, 0.5f, 0, 1, 1.0f, 0, 1.0f, 0, -128, 127), 0);
    EXPECT(qn_qmul(3, 0.5f, 0, 1, 1.0f, 0, 1.0f, 0, -128, 127), 2);
    EXPECT(qn_qmul(-5, 0.5f, 0, 1, 1.0f, 0, 1.0f, 0, -128, 127), -2);
    EXPECT(qn_qmul(100, 1.0f, 0, 100, 1.0f, 0, 1.0f, 0, -128, 127), 127);
    /* averages: 5/2 -> 2, 7/2 -> 4, -5/2 -> -2, count 0 -> zy */
    EXPECT(qn_qavg(5, 2, 1.0f, 1.0f, 0, -128, 127), 2);
    EXPECT(qn_qavg(7, 2, 1.0f, 1.0f, 0, -128, 127), 4);
    EXPECT(qn_qavg(-5, 2, 1.0f, 1.0f, 0, -128, 127), -2);
    EXPECT(qn_qavg(9, 4, 0.5f, 0.5f, 100, 0, 255), 102); /* 2.25 -> 2 */
    EXPECT(qn_qavg(0, 0, 1.0f, 1.0f, 7, 0, 255), 7);
    /* requantize: 0.25 * 2 / 1 = 0.5 -> 0, 0.25 * 6 = 1.5 -> 2; NaN-free saturation */
    EXPECT(qn_requantize(2, 0.25f, 0, 1.0f, 0, -128, 127), 0);
    EXPECT(qn_requantize(6, 0.25f, 0, 1.0f, 0, -128, 127), 2);
    EXPECT(qn_requantize(-6, 0.25f, 0, 1.0f, 0, -128, 127), -2);
    EXPECT(qn_requantize(127, 1.0f, 0, 0.001f, 0, -128, 127), 127);
    /* a quotient beyond int64 saturates to the right end, with a zero point added
     * (qdqc-fuzz --mutate mutant 542: scale 1.22e-21 gave 0 instead of 255) */
    EXPECT(qn_requantize(200, 0.5f, 0, 1.22e-21f, 255, 0, 255), 255);
    EXPECT(qn_requantize(-200, 0.5f, 0, 1.22e-21f, -128, -128, 127), -128);
    EXPECT(qn_requantize(200, 0.5f, 0, 1.22e-21f, 127, -128, 127), 127);
}

/* The float QDQ graph: dequantize each operand, one f32 op, quantize. */
static void
exhaustive(void)
{
    const float sa = 0.0123f, sb = 0.0457f, sy = 0.031f;
    const int za = -3, zb = 7, zy = 2;
    for (int a = -128; a <= 127; a++) {
        float da = qn_dequantize(a, sa, za);
        EXPECT(qn_requantize(a, sa, za, sy, zy, -128, 127),
               qn_quantize_f32(da, sy, zy, -128, 127));
        for (int b = -128; b <= 127; b++) {
            float db = qn_dequantize(b, sb, zb);
            EXPECT(qn_qadd(a, sa, za, b, sb, zb, sy, zy, -128, 127),
                   qn_quantize_f32(da + db, sy, zy, -128, 127));
            EXPECT(qn_qsub(a, sa, za, b, sb, zb, sy, zy, -128, 127),
                   qn_quantize_f32(da - db, sy, zy, -128, 127));
            EXPECT(qn_qmul(a, sa, za, b, sb, zb, sy * 0.01f, zy, -128, 127),
                   qn_quantize_f32(da * db, sy * 0.01f, zy, -128, 127));
        }
    }
}

int
main(void)
{
    ties();
    exhaustive();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
