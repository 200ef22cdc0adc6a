/* readbw.c: single-thread read bandwidth of this machine, the yardstick of the weight-only
 * GEMV (docs/performance.md). Sums a buffer of SIZE bytes with 8 independent 64-byte vector
 * accumulators (the compiler's vector extension: AVX-512 with -march=native on Zen 4), repeated
 * until ~0.2 s have passed; reports the best pass in GB/s (1e9 bytes / s).
 *     cc -O2 -march=native bench/readbw.c -o readbw && ./readbw 8M 1G
 * A size that fits the L3 (8 MiB: the two 2048x2048 int8 weights of the MLP) measures the L3
 * read rate, 1 GiB the DRAM rate. The argument `fma` instead measures the rate of independent
 * 16-lane f32 fused multiply-adds (12 accumulators, no memory): the weight-only GEMV needs one
 * per 16 int8 weights, so 16 bytes x this rate bounds its weight rate from the compute side. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef float v16 __attribute__((vector_size(64)));
#ifdef __AVX512F__
#include <immintrin.h>
#define FMA16(a, b, c) ((v16)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#else
#define FMA16(a, b, c) ((a) * (b) + (c)) /* fused with -ffp-contract=fast where the ISA has fma */
#endif

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t
parse_size(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    if (*e == 'K' || *e == 'k')
        v *= 1024;
    else if (*e == 'M' || *e == 'm')
        v *= 1024 * 1024;
    else if (*e == 'G' || *e == 'g')
        v *= 1024.0 * 1024 * 1024;
    return (size_t)v & ~(size_t)511;
}

static void
fma_rate(void)
{
    v16 x, y;
    for (int j = 0; j < 16; j++)
        x[j] = 0.999f, y[j] = 0.001f;
    /* twelve named accumulators, so they stay in registers */
    v16 a0 = x * 1, a1 = x * 2, a2 = x * 3, a3 = x * 4, a4 = x * 5, a5 = x * 6, a6 = x * 7,
        a7 = x * 8, a8 = x * 9, a9 = x * 10, a10 = x * 11, a11 = x * 12;
    double best = 1e30, t_end = now() + 0.2;
    const int iters = 20000;
    do {
        double t0 = now();
        for (int i = 0; i < iters; i++) {
            a0 = FMA16(a0, x, y), a1 = FMA16(a1, x, y), a2 = FMA16(a2, x, y);
            a3 = FMA16(a3, x, y), a4 = FMA16(a4, x, y), a5 = FMA16(a5, x, y);
            a6 = FMA16(a6, x, y), a7 = FMA16(a7, x, y), a8 = FMA16(a8, x, y);
            a9 = FMA16(a9, x, y), a10 = FMA16(a10, x, y), a11 = FMA16(a11, x, y);
            __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5));
            __asm__ volatile("" : "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
        }
        double t = now() - t0;
        if (t < best)
            best = t;
    } while (now() < t_end);
    v16 s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
    printf("fma: %.2f G 16-lane f32 fma/s (best pass; checksum %g)\n", 12.0 * iters / best / 1e9,
           (double)s[0]);
}

int
main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "fma")) {
            fma_rate();
            continue;
        }
        size_t n = parse_size(argv[a]);
        if (n < 512) {
            fprintf(stderr, "readbw: size '%s' below 512 bytes\n", argv[a]);
            return 1;
        }
        v16 *buf = aligned_alloc(64, n);
        if (!buf) {
            fprintf(stderr, "readbw: cannot allocate %zu bytes\n", n);
            return 1;
        }
        memset(buf, 1, n);
        size_t nv = n / sizeof(v16);
        double best = 1e30, t_end = now() + 0.2;
        v16 keep = {0};
        do {
            v16 s[8] = {{0}};
            double t0 = now();
            for (size_t i = 0; i < nv; i += 8)
                for (int j = 0; j < 8; j++)
                    s[j] += buf[i + j];
            double t = now() - t0;
            for (int j = 0; j < 8; j++)
                keep += s[j];
            if (t < best)
                best = t;
        } while (now() < t_end);
        float sink = 0;
        for (int j = 0; j < 16; j++)
            sink += keep[j];
        printf("%s: %.1f GB/s (best of repeated passes over %zu bytes; checksum %g)\n", argv[a],
               (double)n / best / 1e9, n, (double)sink);
        free(buf);
    }
    return 0;
}
