/* sgemm_bench.c: throughput of the generated f32 GEMM kernels (lib/codegen/gemm/sgemm.c) against
 * the f32 FMA peak of this machine, measured in the same run, and oneDNN's sgemm.
 *
 * Peak: independent chains of vfmadd231ps (12 zmm accumulators, and 12 ymm), this thread's CPU
 * time. Then per shape (1024^3; BERT-base linear M=128 K=768 N=768 and its 3072-wide FFN; the
 * attention products of 12 heads, 128x64 . 64x128 and 128x128 . 128x64; ViT-B/16 with M=197):
 * the kernel with a constant B (packed at compile time) and with a run-time B (packed by the
 * kernel), best of repetitions, GFLOP/s (2 flops per fma) and share of the peak; --threads=2 splits
 * the rows (or the heads) over 2 threads and reports wall time. Results are checked against the
 * defined fmaf chain on a sample of elements (bit for bit).
 *
 * usage: sgemm_bench [--isa=NAME] [--threads=T] [--m= --n= --k=] [--mr= --nv= --mc= --kc= --ku=]
 * Build: bench/peak/run_sgemm.sh (needs clang-22, libLLVM-22; oneDNN if -DHAVE_DNNL). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/gemm/sgemm.h"
#include "codegen/target/module.h"
#include "codegen/target/target.h"

#ifdef HAVE_DNNL
#include <dnnl.h>
#endif

typedef void (*SgemmFn)(const float *, float *, int64_t, int64_t, const float *);

static double
cpu_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double
wall_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- f32 FMA peak: 12 independent accumulators ---- */

#define FZ(i) "vfmadd231ps %%zmm31, %%zmm30, %%zmm" #i "\n\t"
#define FY(i) "vfmadd231ps %%ymm15, %%ymm14, %%ymm" #i "\n\t"

__attribute__((target("avx512f"))) static void
zmm12(long iters)
{
    __asm__ volatile("vxorps %%xmm30, %%xmm30, %%xmm30\n\tvxorps %%xmm31, %%xmm31, %%xmm31\n\t"
                     "1:\n\t" FZ(0) FZ(1) FZ(2) FZ(3) FZ(4) FZ(5) FZ(6) FZ(7) FZ(8) FZ(9) FZ(10) FZ(11)
                     "dec %0\n\tjnz 1b\n\t"
                     : "+r"(iters)
                     :
                     : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm30", "xmm31");
}

__attribute__((target("avx2,fma"))) static void
ymm12(long iters)
{
    __asm__ volatile("vxorps %%xmm14, %%xmm14, %%xmm14\n\tvxorps %%xmm15, %%xmm15, %%xmm15\n\t"
                     "1:\n\t" FY(0) FY(1) FY(2) FY(3) FY(4) FY(5) FY(6) FY(7) FY(8) FY(9) FY(10) FY(11)
                     "dec %0\n\tjnz 1b\n\t"
                     : "+r"(iters)
                     :
                     : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm14", "xmm15");
}

/* GFLOP/s of fn (12 fmas of `lanes` lanes per iteration), best of 5 */
static double
peak_of(void (*fn)(long), int lanes)
{
    long iters = 20000000;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = cpu_sec();
        fn(iters);
        double dt = cpu_sec() - t0;
        if (dt < best)
            best = dt;
    }
    return 12.0 * lanes * 2.0 * (double)iters / best * 1e-9;
}

/* ---- data ---- */

static uint64_t rng = 88172645463325252ull;

static float
rndf(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((int)((rng >> 16) % 2001) - 1000) / 1000.0f;
}

typedef struct Shape {
    const char *name;
    long batch, m, n, k;
} Shape;

typedef struct Work {
    SgemmFn fn;
    const float *a, *b;
    float *c;
    long batch, m, n, k, b0, b1, m0, m1;
    bool rt;
} Work;

static void *
work_run(void *arg)
{
    Work *w = arg;
    for (long h = w->b0; h < w->b1; h++)
        w->fn(w->a + h * w->m * w->k, w->c + h * w->m * w->n, w->m0, w->m1,
              w->rt ? w->b + h * w->k * w->n : NULL);
    return NULL;
}

/* one run over all heads with `threads` threads (heads split when batch > 1, else rows) */
static void
run_all(SgemmFn fn, const Shape *sh, const float *a, const float *b, float *c, bool rt, int threads,
        int rb)
{
    Work w[2];
    for (int t = 0; t < threads; t++) {
        w[t] = (Work){fn, a, b, c, sh->batch, sh->m, sh->n, sh->k, 0, sh->batch, 0, sh->m, rt};
        if (threads > 1 && sh->batch > 1) {
            w[t].b0 = sh->batch * t / threads;
            w[t].b1 = sh->batch * (t + 1) / threads;
        } else if (threads > 1) {
            long tiles = (sh->m + rb - 1) / rb;
            w[t].m0 = tiles * t / threads * rb;
            w[t].m1 = t == threads - 1 ? sh->m : tiles * (t + 1) / threads * rb;
        }
    }
    if (threads == 1) {
        work_run(&w[0]);
        return;
    }
    pthread_t th;
    pthread_create(&th, NULL, work_run, &w[1]);
    work_run(&w[0]);
    pthread_join(th, NULL);
}

static double
time_best(SgemmFn fn, const Shape *sh, const float *a, const float *b, float *c, bool rt, int threads,
          int rb, double flops)
{
    long batch = (long)(2e8 / flops) + 1;
    double best = 1e30;
    run_all(fn, sh, a, b, c, rt, threads, rb);
    for (int r = 0; r < 15; r++) {
        double t0 = threads > 1 ? wall_sec() : cpu_sec();
        for (long q = 0; q < batch; q++)
            run_all(fn, sh, a, b, c, rt, threads, rb);
        double dt = ((threads > 1 ? wall_sec() : cpu_sec()) - t0) / (double)batch;
        if (dt < best)
            best = dt;
    }
    return best;
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
    long threads = 1, m = 0, n = 0, k = 0, mr = 0, nv = 0, mc = 0, kc = 0, ku = 0;
    const char *isa_name = "avx512vnni";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opt_long(a, "--threads", &threads) || opt_long(a, "--m", &m) || opt_long(a, "--n", &n) ||
            opt_long(a, "--k", &k) || opt_long(a, "--mr", &mr) || opt_long(a, "--nv", &nv) ||
            opt_long(a, "--mc", &mc) || opt_long(a, "--kc", &kc) || opt_long(a, "--ku", &ku))
            continue;
        if (strncmp(a, "--isa=", 6) == 0)
            isa_name = a + 6;
        else {
            fprintf(stderr, "sgemm_bench: unknown option %s\n", a);
            return 2;
        }
    }
    if (threads < 1 || threads > 2)
        threads = 1;
    char err[1024];
    CgTarget t;
    if (!cg_target_host(&t, err, sizeof err)) {
        fprintf(stderr, "sgemm_bench: %s\n", err);
        return 1;
    }
    CgGemmIsa isa = CG_GEMM_ISA_COUNT;
    for (int i = 0; i < CG_GEMM_ISA_COUNT; i++)
        if (strcmp(cg_gemm_isa_name((CgGemmIsa)i), isa_name) == 0)
            isa = (CgGemmIsa)i;
    if (isa == CG_GEMM_ISA_COUNT || !cg_gemm_isa_supported(&t, isa)) {
        fprintf(stderr, "sgemm_bench: ISA '%s' unknown or not supported here\n", isa_name);
        return 1;
    }
    bool zmm = isa == CG_GEMM_X86_AVX512VNNI;
    double pz = t.avx512f ? peak_of(zmm12, 16) : 0, py = t.avx2 ? peak_of(ymm12, 8) : 0;
    double peak = zmm ? pz : py;
    printf("f32 FMA peak (1 thread, CPU time): zmm %.1f GFLOP/s, ymm %.1f GFLOP/s; cpu %s, path %s\n",
           pz, py, t.cpu, isa_name);

    Shape shapes[] = {
        {"1024^3", 1, 1024, 1024, 1024},
        {"BERT linear 128x768x768", 1, 128, 768, 768},
        {"BERT FFN1 128x3072x768", 1, 128, 3072, 768},
        {"BERT FFN2 128x768x3072", 1, 128, 768, 3072},
        {"BERT QK^T 12x128x128x64", 12, 128, 128, 64},
        {"BERT PV 12x128x64x128", 12, 128, 64, 128},
        {"ViT linear 197x768x768", 1, 197, 768, 768},
        {"ViT QK^T 12x197x197x64", 12, 197, 197, 64},
        {"ViT PV 12x197x64x197", 12, 197, 64, 197},
    };
    int nsh = (int)(sizeof shapes / sizeof shapes[0]);
    Shape custom = {"custom", 1, m, n, k};
    if (m > 0 && n > 0 && k > 0) {
        shapes[0] = custom;
        nsh = 1;
    }
    printf("%-26s %9s %16s %16s %16s\n", "shape", "", "const B", "run-time B",
#ifdef HAVE_DNNL
           "oneDNN sgemm"
#else
           ""
#endif
    );
    for (int si = 0; si < nsh; si++) {
        const Shape *sh = &shapes[si];
        long asz = sh->batch * sh->m * sh->k, bsz = sh->batch * sh->k * sh->n, csz = sh->batch * sh->m * sh->n;
        float *a = malloc((size_t)asz * 4), *b = malloc((size_t)bsz * 4), *c = malloc((size_t)csz * 4);
        for (long i = 0; i < asz; i++)
            a[i] = rndf();
        for (long i = 0; i < bsz; i++)
            b[i] = rndf();
        CgSgemmSpec s;
        memset(&s, 0, sizeof s);
        s.m = sh->m, s.n = sh->n, s.k = sh->k, s.lda = sh->k, s.sak = 1, s.ldc = sh->n;
        s.sbk = sh->n, s.sbn = 1, s.alpha = 1.0f;
        s.tile.mr = (int)mr, s.tile.nv = (int)nv, s.tile.mc = (int)mc, s.tile.kc = (int)kc,
        s.tile.kunroll = (int)ku;
        LLVMTargetMachineRef tm;
        LLVMContextRef ctx;
        LLVMModuleRef mod;
        if (!cg_target_machine_create(&t, &tm, err, sizeof err) ||
            !cg_module_create("bench", tm, &ctx, &mod, err, sizeof err))
            goto fail;
        s.b = b; /* const: head 0's B for every head (the timing is the same) */
        if (!cg_sgemm_emit(mod, &t, isa, &s, "sg_const", err, sizeof err))
            goto fail;
        s.b = NULL;
        if (!cg_sgemm_emit(mod, &t, isa, &s, "sg_rt", err, sizeof err))
            goto fail;
        if (!cg_module_optimize(mod, tm, NULL, err, sizeof err))
            goto fail;
        cg_target_machine_destroy(tm);
        CgJit *j = cg_jit_create(&t, err, sizeof err);
        if (!j || !cg_jit_add(j, ctx, mod, err, sizeof err))
            goto fail;
        SgemmFn fc = (SgemmFn)cg_jit_lookup(j, "sg_const", err, sizeof err);
        SgemmFn fr = fc ? (SgemmFn)cg_jit_lookup(j, "sg_rt", err, sizeof err) : NULL;
        if (!fr)
            goto fail;
        int rb = cg_sgemm_row_block(&t, isa, &s);
        /* check the run-time kernel on a sample against the fmaf chain */
        run_all(fr, sh, a, b, c, true, (int)threads, rb);
        for (int q = 0; q < 500; q++) {
            long h = (long)(rng % (uint64_t)sh->batch), i = (long)((rng >> 20) % (uint64_t)sh->m),
                 o = (long)((rng >> 40) % (uint64_t)sh->n);
            rndf();
            float acc = 0.0f;
            for (long kk = 0; kk < sh->k; kk++)
                acc = fmaf(a[(h * sh->m + i) * sh->k + kk], b[(h * sh->k + kk) * sh->n + o], acc);
            float got = c[(h * sh->m + i) * sh->n + o];
            if (memcmp(&got, &acc, 4) != 0) {
                fprintf(stderr, "sgemm_bench: %s: wrong result at [%ld][%ld][%ld]: %a vs %a\n",
                        sh->name, h, i, o, (double)got, (double)acc);
                return 1;
            }
        }
        double flops = 2.0 * (double)sh->batch * (double)sh->m * (double)sh->n * (double)sh->k;
        double tc = time_best(fc, sh, a, b, c, false, (int)threads, rb, flops);
        double tr = time_best(fr, sh, a, b, c, true, (int)threads, rb, flops);
        double gc = flops / tc * 1e-9, gr = flops / tr * 1e-9;
        printf("%-26s %7.3fms %7.1f (%3.0f%%) %7.1f (%3.0f%%)", sh->name, tc * 1e3, gc,
               100 * gc / (peak * (double)threads), gr, 100 * gr / (peak * (double)threads));
#ifdef HAVE_DNNL
        if (threads == 1) {
            double best = 1e30;
            long nb = (long)(2e8 / flops) + 1;
            for (int r = 0; r < 16; r++) {
                double t0 = cpu_sec();
                for (long q = 0; q < nb; q++)
                    for (long h = 0; h < sh->batch; h++)
                        dnnl_sgemm('N', 'N', sh->m, sh->n, sh->k, 1.0f, a + h * sh->m * sh->k, sh->k,
                                   b + h * sh->k * sh->n, sh->n, 0.0f, c + h * sh->m * sh->n, sh->n);
                double dt = (cpu_sec() - t0) / (double)nb;
                if (r && dt < best) /* the first run initialises oneDNN */
                    best = dt;
            }
            double gd = flops / best * 1e-9;
            printf(" %7.1f (%3.0f%%)", gd, 100 * gd / peak);
        }
#endif
        printf("\n");
        cg_jit_destroy(j);
        free(a);
        free(b);
        free(c);
    }
    printf("GFLOP/s (share of the %s peak x threads); threads=%ld (%s time)\n", zmm ? "zmm" : "ymm",
           threads, threads > 1 ? "wall" : "CPU");
    return 0;
fail:
    fprintf(stderr, "sgemm_bench: %s\n", err);
    return 1;
}
