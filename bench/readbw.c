/* readbw.c: single-thread read bandwidth of this machine, the yardstick of the weight-only
 * GEMV (docs/performance.md). Sums a buffer of SIZE bytes with 8 independent 64-byte vector
 * accumulators (the compiler's vector extension: AVX-512 with -march=native on Zen 4), repeated
 * until ~0.2 s have passed; reports the best pass in GB/s (1e9 bytes / s).
 *     cc -O2 -march=native bench/readbw.c -o readbw && ./readbw 8M 1G
 * A size that fits the L3 (8 MiB: the two 2048x2048 int8 weights of the MLP) measures the L3
 * read rate, 1 GiB the DRAM rate. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef float v16 __attribute__((vector_size(64)));

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

int
main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
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
