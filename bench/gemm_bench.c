/* gemm_bench.c: single-thread throughput of the generated int8 GEMM kernels.
 *
 * Emits one kernel (default: AVX512-VNNI, 1024x1024x1024, u8 A x s8 B -> raw int32, plus the
 * same with float requantization to int8), JITs it for the host, checks a sample of outputs
 * against a scalar reference, and reports GMAC/s and the fraction of the vpdpbusd peak
 * (--peak=GMACS, as printed by `bench/peak/run.sh --peak12`).
 * --a16: 16-bit activations (A16W8: u16 A, or s16 with --signed, x s8 B; requantized to int16),
 * against the vpdpwssd peak (`--peak12w`); --wmax=W draws the weights in [-W, W] (default 127:
 * full range; real per-channel conv weights average |w| ~ 30, which keeps the int32 accumulator
 * of K = 1024 exact), so the plan is narrow (int32) or wide (K chunks into int64), printed.
 *
 * usage: gemm_bench [--isa=NAME] [--m=M --n=N --k=K] [--mr= --nv= --mc= --kc= --ku=] [--signed]
 *                   [--zb] [--a16] [--wmax=W] [--peak=GMACS] [--reps=R]
 * Build: bench/peak/run.sh builds and runs it (needs the qdqc sources, clang-22, libLLVM-22).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/target/module.h"
#include "codegen/gemm/gemm.h"
#include "codegen/gemm/gemm_impl.h"
#include "codegen/target/target.h"

typedef void (*GemmFn)(const void *, void *, int64_t, int64_t);

static double
now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* robust to other load */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;

static uint32_t
rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static long
opt_long(const char *arg, const char *name, long *out)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
        *out = strtol(arg + n + 1, NULL, 10);
        return 1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    long m = 1024, n = 1024, k = 1024, mr = 0, nv = 0, mc = 0, ku = 0, kc = 0, reps = 0;
    long wmax = 128;
    double peak = 0;
    bool a_signed = false, zb_nz = false, a16 = false;
    const char *isa_name = "avx512vnni";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opt_long(a, "--m", &m) || opt_long(a, "--n", &n) || opt_long(a, "--k", &k) ||
            opt_long(a, "--mr", &mr) || opt_long(a, "--nv", &nv) || opt_long(a, "--mc", &mc) ||
            opt_long(a, "--ku", &ku) || opt_long(a, "--kc", &kc) || opt_long(a, "--reps", &reps) ||
            opt_long(a, "--wmax", &wmax))
            continue;
        if (strncmp(a, "--peak=", 7) == 0)
            peak = atof(a + 7);
        else if (strncmp(a, "--isa=", 6) == 0)
            isa_name = a + 6;
        else if (strcmp(a, "--signed") == 0)
            a_signed = true;
        else if (strcmp(a, "--zb") == 0)
            zb_nz = true;
        else if (strcmp(a, "--a16") == 0)
            a16 = true;
        else {
            fprintf(stderr, "gemm_bench: unknown option %s\n", a);
            return 2;
        }
    }
    char err[1024];
    CgTarget t;
    if (!cg_target_host(&t, err, sizeof err)) {
        fprintf(stderr, "gemm_bench: %s\n", err);
        return 1;
    }
    CgGemmIsa isa = CG_GEMM_ISA_COUNT;
    for (int i = 0; i < CG_GEMM_ISA_COUNT; i++)
        if (strcmp(cg_gemm_isa_name((CgGemmIsa)i), isa_name) == 0)
            isa = (CgGemmIsa)i;
    if (isa == CG_GEMM_ISA_COUNT || !cg_gemm_isa_supported(&t, isa)) {
        fprintf(stderr, "gemm_bench: ISA '%s' unknown or not supported here\n", isa_name);
        return 1;
    }

    int8_t *b = malloc((size_t)(n * k));
    int es = a16 ? 2 : 1;
    uint8_t *a = malloc((size_t)(m * k * es));
    int32_t *zb = malloc((size_t)n * sizeof *zb), *bias = malloc((size_t)n * sizeof *bias);
    float *mult = malloc((size_t)n * sizeof *mult);
    for (long i = 0; i < n * k; i++)
        b[i] = wmax >= 128 ? (int8_t)rnd() : (int8_t)((long)(rnd() % (2 * wmax + 1)) - wmax);
    for (long i = 0; i < m * k * es; i++)
        a[i] = (uint8_t)rnd();
    for (long i = 0; i < n; i++) {
        zb[i] = zb_nz ? (int32_t)(rnd() % 7) - 3 : 0;
        bias[i] = (int32_t)(rnd() % 20001) - 10000;
        mult[i] = 1.0f / (float)(60000 + rnd() % 20000);
    }

    CgGemmSpec s;
    memset(&s, 0, sizeof s);
    s.m = m, s.n = n, s.k = k, s.lda = k, s.ldc = n;
    s.a_signed = a_signed;
    s.za = a_signed ? 3 : 128;
    if (a16)
        s.a_bits = 16, s.za = a_signed ? 3 : 32768;
    s.b = b;
    s.b_layout = CG_GEMM_B_NK;
    s.zb = zb;
    s.bias = bias;
    s.tile.mr = (int)mr, s.tile.nv = (int)nv, s.tile.mc = (int)mc, s.tile.kunroll = (int)ku, s.tile.kc = (int)kc;

    LLVMTargetMachineRef tm;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    if (!cg_target_machine_create(&t, &tm, err, sizeof err) ||
        !cg_module_create("bench", tm, &ctx, &mod, err, sizeof err)) {
        fprintf(stderr, "gemm_bench: %s\n", err);
        return 1;
    }
    s.epilogue = CG_GEMM_EPI_I32, s.out = CG_GEMM_I32;
    if (!cg_gemm_emit(mod, &t, isa, &s, "gemm_i32", err, sizeof err))
        goto fail;
    s.epilogue = CG_GEMM_EPI_REQUANT_FLOAT, s.out = CG_GEMM_I8, s.mult = mult;
    s.zo = -5, s.qmin = -128, s.qmax = 127;
    if (a16) {
        s.out = CG_GEMM_I16, s.qmin = -32768, s.qmax = 32767;
        for (long i = 0; i < n; i++)
            mult[i] *= 64.0f;
    }
    GemmPlan plan;
    if (!gemm_plan_init(&plan, &t, isa, &s, err, sizeof err))
        goto fail;
    bool wide = plan.wide;
    gemm_plan_free(&plan);
    if (!cg_gemm_emit(mod, &t, isa, &s, "gemm_q8", err, sizeof err))
        goto fail;
    double t0 = now_sec();
    if (!cg_module_optimize(mod, tm, NULL, err, sizeof err))
        goto fail;
    cg_target_machine_destroy(tm);
    CgJit *j = cg_jit_create(&t, err, sizeof err);
    if (!j || !cg_jit_add(j, ctx, mod, err, sizeof err))
        goto fail;
    GemmFn f32 = (GemmFn)cg_jit_lookup(j, "gemm_i32", err, sizeof err);
    GemmFn f8 = f32 ? (GemmFn)cg_jit_lookup(j, "gemm_q8", err, sizeof err) : NULL;
    if (!f8)
        goto fail;
    double tcomp = now_sec() - t0;

    int32_t *c = malloc((size_t)(m * n) * sizeof *c);
    int8_t *c8 = malloc((size_t)(m * n) * 2);
    f32(a, c, 0, m);
    f8(a, c8, 0, m);
    /* spot-check against the definition */
    for (int sample = 0; sample < 2000; sample++) {
        long i = rnd() % m, o = rnd() % n;
        int64_t acc = bias[o];
        for (long kk = 0; kk < k; kk++) {
            int32_t av = a_signed ? (int8_t)a[i * k + kk] : a[i * k + kk];
            if (a16) {
                uint16_t u;
                memcpy(&u, a + 2 * (i * k + kk), 2);
                av = a_signed ? (int16_t)u : u;
            }
            acc += (int64_t)(av - s.za) * (b[o * k + kk] - zb[o]);
        }
        if ((int32_t)(uint32_t)(uint64_t)acc != c[i * n + o]) { /* raw int32 output: wraps */
            fprintf(stderr, "gemm_bench: wrong result at [%ld][%ld]: %d vs %lld\n", i, o,
                    c[i * n + o], (long long)acc);
            return 1;
        }
    }
    double macs = (double)m * (double)n * (double)k;
    if (reps <= 0)
        reps = (long)(2e10 / macs) + 3;
    const char *names[2] = {"u8 x s8 -> i32", "u8 x s8 -> requant i8"};
    if (a_signed)
        names[0] = "s8 x s8 -> i32", names[1] = "s8 x s8 -> requant i8";
    if (a16) {
        names[0] = a_signed ? "s16 x s8 -> i32" : "u16 x s8 -> i32";
        names[1] = a_signed ? "s16 x s8 -> requant i16" : "u16 x s8 -> requant i16";
    }
    printf("%s %ldx%ldx%ld (%s, zb %s%s), JIT %.2f s\n", cg_gemm_isa_name(isa), m, n, k, t.cpu,
           zb_nz ? "per-channel" : "0",
           !a16 ? "" : wide ? ", A16W8: int64 accumulation (wide)" : ", A16W8: int32 accumulator", tcomp);
    for (int v = 0; v < 2; v++) {
        double best = 1e30;
        if (v == 0) /* warm up: first touches of C, frequency license */
            for (int w = 0; w < 3; w++)
                f32(a, c, 0, m);
        long batch = (long)(2e8 / macs) + 1; /* calls per timing: clock reads cost ~0.3 us */
        for (long r = 0; r < reps; r++) {
            double s0 = now_sec();
            for (long q = 0; q < batch; q++) {
                if (v == 0)
                    f32(a, c, 0, m);
                else
                    f8(a, c8, 0, m);
            }
            double dt = (now_sec() - s0) / (double)batch;
            if (dt < best)
                best = dt;
        }
        double gmacs = macs / best * 1e-9;
        printf("  %-24s %8.3f ms  %7.1f GMAC/s", names[v], best * 1e3, gmacs);
        if (peak > 0)
            printf("  %5.1f%% of peak (%.1f GMAC/s)", 100.0 * gmacs / peak, peak);
        printf("\n");
    }
    cg_jit_destroy(j);
    free(c);
    free(c8);
    free(a);
    free(b);
    free(zb);
    free(bias);
    free(mult);
    return 0;
fail:
    fprintf(stderr, "gemm_bench: %s\n", err);
    return 1;
}
