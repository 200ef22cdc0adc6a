/* peak.c: int8 and int16 dot-product peak probe for this machine.
 *
 * Runs long chains of independent vpdpbusd (u8 x s8 -> i32, 4 MACs per lane) with 8, 12 and 16
 * zmm accumulators and with 12 {vex} ymm accumulators (AVX-VNNI, only if the CPU has it), and
 * the same for vpdpwssd (s16 x s16 -> i32, 2 MACs per lane: the A16W8 kernels), and
 * reports GMAC/s and MACs per cycle. Time is this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), so other load on the machine does not count against us; cycles are
 * that time at the nominal TSC rate (so "-ish" under turbo). The GEMM benchmark (bench/gemm_bench.c) divides its
 * throughput by the 12-accumulator zmm figure to report efficiency.
 *
 * Build: bench/peak/run.sh (clang-22 -O2 -mavx512vnni -mavx512vl -mavxvnni).
 */
#define _POSIX_C_SOURCE 200809L
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#define ITERS 20000000L

static double
now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* robust to other load */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* N independent accumulators, each iteration = N vpdpbusd zmm = N * 64 MACs. */
#define ZMM_CHAIN(NAME, N, BODY)                                                        \
    static void NAME(long iters)                                                        \
    {                                                                                   \
        __asm__ volatile("vpxord %%zmm0, %%zmm0, %%zmm0\n\t"                            \
                         "vpternlogd $0xff, %%zmm30, %%zmm30, %%zmm30\n\t"              \
                         "vpabsb %%zmm30, %%zmm31\n\t"                                  \
                         "1:\n\t" BODY "dec %0\n\t"                                     \
                         "jnz 1b\n\t"                                                   \
                         : "+r"(iters)                                                  \
                         :                                                              \
                         : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", \
                           "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",  \
                           "xmm14", "xmm15", "xmm30", "xmm31");                         \
    }

#define Z(i) "vpdpbusd %%zmm31, %%zmm30, %%zmm" #i "\n\t"
#define Y(i) "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm" #i "\n\t"

#define W(i) "vpdpwssd %%zmm31, %%zmm30, %%zmm" #i "\n\t"
#define YW(i) "%{vex%} vpdpwssd %%ymm15, %%ymm14, %%ymm" #i "\n\t"

ZMM_CHAIN(zmm8, 8, Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7))
/* vpdpwssd: 16 lanes x 2 int16 MACs per instruction */
ZMM_CHAIN(wzmm8, 8, W(0) W(1) W(2) W(3) W(4) W(5) W(6) W(7))
ZMM_CHAIN(wzmm12, 12, W(0) W(1) W(2) W(3) W(4) W(5) W(6) W(7) W(8) W(9) W(10) W(11))
ZMM_CHAIN(wzmm16, 16,
          W(0) W(1) W(2) W(3) W(4) W(5) W(6) W(7) W(8) W(9) W(10) W(11) W(12) W(13) W(14) W(15))
ZMM_CHAIN(zmm12, 12, Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7) Z(8) Z(9) Z(10) Z(11))
ZMM_CHAIN(zmm16, 16,
          Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7) Z(8) Z(9) Z(10) Z(11) Z(12) Z(13) Z(14) Z(15))

static void
ymm12(long iters)
{
    __asm__ volatile("vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
                     "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t"
                     "vpabsb %%ymm14, %%ymm15\n\t"
                     "1:\n\t" Y(0) Y(1) Y(2) Y(3) Y(4) Y(5) Y(6) Y(7) Y(8) Y(9) Y(10) Y(11)
                     "dec %0\n\t"
                     "jnz 1b\n\t"
                     : "+r"(iters)
                     :
                     : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15");
}

static void
wymm12(long iters)
{
    __asm__ volatile("vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
                     "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t"
                     "vpabsw %%ymm14, %%ymm15\n\t"
                     "1:\n\t" YW(0) YW(1) YW(2) YW(3) YW(4) YW(5) YW(6) YW(7) YW(8) YW(9) YW(10) YW(11)
                     "dec %0\n\t"
                     "jnz 1b\n\t"
                     : "+r"(iters)
                     :
                     : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15");
}

static double
wall_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double
tsc_ghz(void)
{
    double t0 = wall_sec();
    uint64_t c0 = __rdtsc();
    while (wall_sec() - t0 < 0.2) {
    }
    return (double)(__rdtsc() - c0) / (wall_sec() - t0) * 1e-9;
}

/* Returns GMAC/s; prints MACs per TSC cycle. */
static double
run(const char *name, void (*fn)(long), int nacc, int lanes_bytes)
{
    fn(ITERS / 20); /* warm up (AVX-512 license, frequency) */
    double best = 0;
    double ghz = tsc_ghz();
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_sec();
        fn(ITERS);
        double dt = now_sec() - t0;
        double gmacs = (double)ITERS * nacc * lanes_bytes / dt * 1e-9;
        if (gmacs > best)
            best = gmacs;
    }
    printf("%-28s %7.1f GMAC/s  %6.1f MAC/cycle (TSC %.2f GHz)\n", name, best, best / ghz, ghz);
    return best;
}

int
main(int argc, char **argv)
{
    unsigned a, b, c, d;
    __cpuid_count(7, 0, a, b, c, d);
    int vnni512 = (c >> 11) & 1;
    __cpuid_count(7, 1, a, b, c, d);
    int avxvnni = (a >> 4) & 1;
    (void)b;
    (void)c;
    (void)d;
    int quiet = argc > 1 && strcmp(argv[1], "--peak12") == 0;
    int quietw = argc > 1 && strcmp(argv[1], "--peak12w") == 0; /* vpdpwssd */
    if (!vnni512) {
        fprintf(stderr, "peak: no AVX512-VNNI on this CPU\n");
        return 1;
    }
    if (quiet || quietw) {
        /* machine-readable: the 12-accumulator zmm GMAC/s (int8 MACs, or int16 MACs) */
        void (*fn)(long) = quietw ? wzmm12 : zmm12;
        double per = quietw ? 32 : 64;
        fn(ITERS / 20);
        double best = 0;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = now_sec();
            fn(ITERS);
            double g = (double)ITERS * 12 * per / (now_sec() - t0) * 1e-9;
            if (g > best)
                best = g;
        }
        printf("%.1f\n", best);
        return 0;
    }
    run("vpdpbusd zmm x8 acc", zmm8, 8, 64);
    run("vpdpbusd zmm x12 acc", zmm12, 12, 64);
    run("vpdpbusd zmm x16 acc", zmm16, 16, 64);
    if (avxvnni)
        run("{vex} vpdpbusd ymm x12 acc", ymm12, 12, 32);
    else
        printf("{vex} vpdpbusd ymm: no AVX-VNNI on this CPU (skipped)\n");
    run("vpdpwssd zmm x8 acc", wzmm8, 8, 32);
    run("vpdpwssd zmm x12 acc", wzmm12, 12, 32);
    run("vpdpwssd zmm x16 acc", wzmm16, 16, 32);
    if (avxvnni)
        run("{vex} vpdpwssd ymm x12 acc", wymm12, 12, 16);
    else
        printf("{vex} vpdpwssd ymm: no AVX-VNNI on this CPU (skipped)\n");
    return 0;
}
