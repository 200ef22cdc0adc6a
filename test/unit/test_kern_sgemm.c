/* test_kern_sgemm.c: bit-exact tests of the f32 GEMM kernel generator (lib/codegen/gemm/sgemm.c).
 *
 * For every ISA path this host can run (generic with the host's features, generic on the x86-64
 * baseline without FMA hardware, where llvm.fma is a call of libm's fmaf; AVX2/FMA; AVX-VNNI's
 * ymm row; AVX-512), emit kernels for the edge shapes M, N, K in {1, 2, 3, 7, 15, 16, 17, 31, 33,
 * 64, 65, 100, 128} (every N x K pair, M cycling through the set), with a constant B (packed at
 * compile time) and a run-time B (packed by the kernel), B as [K, N] and as [N, K] (Gemm's
 * transB), A transposed (transA), alpha and a per-column bias, and small K chunks and row blocks
 * (the accumulator stored to C and reloaded), JIT them and compare every output bit with the
 * defined order (sgemm.h, docs/numerics.md "Float matrix products"): acc = +0.0f, then
 * acc = fmaf(A[m, k], B[k, n], acc) for k = 0 .. K-1, then alpha * acc, then + bias[n]. M is
 * split into two uneven ranges; C has padding columns and rows filled with a sentinel, which must
 * survive.
 *
 * --cross TRIPLE CPU MATTR ISAS DIR: emit the same cases for another target (ISAS: a comma list of
 * paths) into DIR/kernels.o, with DIR/cases.bin (inputs and the expected outputs computed here)
 * and DIR/driver.c, which test/unit/run_aarch64_sgemm.sh links statically and runs under qemu.
 *
 * Output ends with "N passed, M failed"; exit status non-zero on any failure. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/gemm/sgemm.h"
#include "codegen/target/module.h"
#include "codegen/target/target.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint32_t
rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* values of mixed magnitude, so that the order of the sum shows in the last bits */
static float
rndf(void)
{
    float v = (float)((int)(rnd() % 20001) - 10000) / 9973.0f;
    return ldexpf(v, (int)(rnd() % 9) - 4);
}

static const int64_t sizes[] = {1, 2, 3, 7, 15, 16, 17, 31, 33, 64, 65, 100, 128};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

typedef struct Case {
    char name[64];
    CgSgemmSpec s;
    bool runtime_b;
    float *a, *b, *bias, *want;
    int64_t asz, bsz;
} Case;

typedef void (*SgemmFn)(const float *, float *, int64_t, int64_t, const float *);

static const float SENTINEL = -1234.5f;

static void
make_case(Case *c, int idx, int64_t M, int64_t N, int64_t K, int variant)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "sg%d_%lldx%lldx%lld_v%d", idx, (long long)M, (long long)N,
             (long long)K, variant);
    CgSgemmSpec *s = &c->s;
    s->m = M, s->n = N, s->k = K;
    s->ldc = N + 3;
    s->alpha = 1.0f;
    bool ta = variant == 4;
    s->lda = ta ? 1 : K;
    s->sak = ta ? M : 1;
    bool nk = variant == 2 || variant == 3;
    s->sbk = nk ? 1 : N;
    s->sbn = nk ? K : 1;
    c->runtime_b = variant == 1 || variant == 3 || variant == 5;
    if (variant == 2 || variant == 5) {
        s->tile.kc = 5 + idx % 11;  /* K chunks: the accumulator through C */
        s->tile.mc = 1 + idx % 13;  /* row blocks (rounded up to the tile) */
    }
    if (variant == 5)
        s->tile.kunroll = 3;
    c->asz = M * K;
    c->bsz = K * N;
    c->a = malloc((size_t)c->asz * sizeof(float));
    c->b = malloc((size_t)c->bsz * sizeof(float));
    for (int64_t i = 0; i < c->asz; i++)
        c->a[i] = rndf();
    for (int64_t i = 0; i < c->bsz; i++)
        c->b[i] = rndf();
    if (variant == 4 || variant == 5) {
        s->alpha = variant == 4 ? 0.7f : 1.0f;
        c->bias = malloc((size_t)N * sizeof(float));
        for (int64_t j = 0; j < N; j++)
            c->bias[j] = rndf();
        s->bias = c->bias;
    }
    s->b = c->runtime_b ? NULL : c->b;
    /* the defined order */
    c->want = malloc((size_t)(M * N) * sizeof(float));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc = fmaf(c->a[m * s->lda + k * s->sak], c->b[k * s->sbk + n * s->sbn], acc);
            float e = acc;
            if (s->alpha != 1.0f)
                e = s->alpha * e;
            if (s->bias) {
                float t = e + s->bias[n];
                e = t;
            }
            c->want[m * N + n] = e;
        }
}

static void
case_free(Case *c)
{
    free(c->a);
    free(c->b);
    free(c->bias);
    free(c->want);
}

static bool
run_case(const Case *c, SgemmFn fn)
{
    const CgSgemmSpec *s = &c->s;
    int64_t rows = s->m + 2, ldc = s->ldc;
    float *cbuf = malloc((size_t)(rows * ldc) * sizeof(float));
    for (int64_t i = 0; i < rows * ldc; i++)
        cbuf[i] = SENTINEL;
    float *C = cbuf + ldc; /* one sentinel row before, one after */
    int64_t split = s->m > 2 ? s->m / 2 + 1 : s->m;
    fn(c->a, C, 0, split, c->runtime_b ? c->b : NULL);
    fn(c->a, C, split, s->m, c->runtime_b ? c->b : NULL);
    bool ok = true;
    for (int64_t r = -1; r <= s->m && ok; r++)
        for (int64_t j = 0; j < ldc && ok; j++) {
            float got = C[r * ldc + j];
            bool inside = r >= 0 && r < s->m && j < s->n;
            float want = inside ? c->want[r * s->n + j] : SENTINEL;
            if (memcmp(&got, &want, sizeof got) != 0) {
                printf("FAIL %s: C[%lld, %lld] = %a, expected %a%s\n", c->name, (long long)r,
                       (long long)j, (double)got, (double)want, inside ? "" : " (outside C)");
                ok = false;
            }
        }
    free(cbuf);
    return ok;
}

static int npass, nfail;

static void
test_isa(const CgTarget *t, CgGemmIsa isa, const char *label)
{
    int n = NSIZES * NSIZES;
    Case *cs = calloc((size_t)n, sizeof *cs);
    for (int i = 0; i < NSIZES; i++)
        for (int j = 0; j < NSIZES; j++) {
            int idx = i * NSIZES + j;
            make_case(&cs[idx], idx, sizes[(i * 5 + j * 3) % NSIZES], sizes[i], sizes[j], idx % 6);
        }
    char err[1024] = "";
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    LLVMTargetMachineRef tm = NULL;
    CgJit *jit = NULL;
    bool ok = cg_target_machine_create(t, &tm, err, sizeof err) &&
              cg_module_create("sgemm_test", tm, &ctx, &mod, err, sizeof err);
    for (int i = 0; i < n && ok; i++)
        ok = cg_sgemm_emit(mod, t, isa, &cs[i].s, cs[i].name, err, sizeof err) != NULL;
    ok = ok && cg_module_optimize(mod, tm, NULL, err, sizeof err);
    cg_target_machine_destroy(tm);
    ok = ok && (jit = cg_jit_create(t, err, sizeof err)) != NULL &&
         cg_jit_add(jit, ctx, mod, err, sizeof err);
    int before = nfail;
    if (!ok) {
        printf("FAIL %s: %s\n", label, err);
        nfail++;
    }
    for (int i = 0; i < n && ok; i++) {
        SgemmFn fn = (SgemmFn)cg_jit_lookup(jit, cs[i].name, err, sizeof err);
        if (!fn) {
            printf("FAIL %s: %s\n", cs[i].name, err);
            nfail++;
            continue;
        }
        if (run_case(&cs[i], fn))
            npass++;
        else
            nfail++;
    }
    cg_jit_destroy(jit);
    printf("%-40s %3d cases, %s\n", label, n, nfail == before ? "ok" : "FAILED");
    for (int i = 0; i < n; i++)
        case_free(&cs[i]);
    free(cs);
}

/* ---- cross targets ---- */

static bool
wr(FILE *f, const float *p, int64_t n)
{
    return fwrite(p, sizeof *p, (size_t)n, f) == (size_t)n;
}

static int
cross_main(const char *triple, const char *cpu, const char *mattr, const char *isas, const char *dir)
{
    char err[1024];
    CgTarget t;
    if (!cg_target_parse(&t, triple, cpu, mattr, err, sizeof err)) {
        fprintf(stderr, "test_kern_sgemm: %s\n", err);
        return 2;
    }
    int per = NSIZES * NSIZES, nall = 0;
    Case *all = NULL;
    CgGemmIsa isal[CG_GEMM_ISA_COUNT];
    int nisa = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", isas);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int i = 0; i < CG_GEMM_ISA_COUNT; i++)
            if (strcmp(cg_gemm_isa_name((CgGemmIsa)i), tok) == 0)
                found = i;
        if (found < 0 || !cg_gemm_isa_supported(&t, (CgGemmIsa)found)) {
            fprintf(stderr, "test_kern_sgemm: path '%s' unknown or not supported by the target\n", tok);
            return 2;
        }
        isal[nisa++] = (CgGemmIsa)found;
    }
    all = calloc((size_t)(per * nisa), sizeof *all);
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    LLVMTargetMachineRef tm = NULL;
    bool ok = cg_target_machine_create(&t, &tm, err, sizeof err) &&
              cg_module_create("sgemm_cross", tm, &ctx, &mod, err, sizeof err);
    for (int q = 0; q < nisa && ok; q++)
        for (int i = 0; i < NSIZES && ok; i++)
            for (int j = 0; j < NSIZES && ok; j++) {
                int idx = i * NSIZES + j;
                Case *c = &all[nall++];
                make_case(c, idx, sizes[(i * 5 + j * 3) % NSIZES], sizes[i], sizes[j], idx % 6);
                char nm[64];
                snprintf(nm, sizeof nm, "%s_%s", cg_gemm_isa_name(isal[q]), c->name);
                memcpy(c->name, nm, sizeof c->name);
                ok = cg_sgemm_emit(mod, &t, isal[q], &c->s, c->name, err, sizeof err) != NULL;
            }
    char path[1024];
    snprintf(path, sizeof path, "%s/kernels.o", dir);
    ok = ok && cg_module_optimize(mod, tm, NULL, err, sizeof err) &&
         cg_module_emit_file(mod, tm, false, path, err, sizeof err);
    cg_target_machine_destroy(tm);
    cg_module_destroy(ctx, mod);
    if (!ok) {
        fprintf(stderr, "test_kern_sgemm: %s\n", err);
        return 2;
    }
    snprintf(path, sizeof path, "%s/cases.bin", dir);
    FILE *fb = fopen(path, "wb");
    snprintf(path, sizeof path, "%s/driver.c", dir);
    FILE *fd = fopen(path, "w");
    if (!fb || !fd)
        return 2;
    fprintf(fd, "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                "typedef void (*F)(const float *, float *, int64_t, int64_t, const float *);\n");
    for (int i = 0; i < nall; i++)
        fprintf(fd, "void %s(const float *, float *, int64_t, int64_t, const float *);\n", all[i].name);
    fprintf(fd, "static const struct { F fn; const char *name; long m, n, k, ldc; int rt; } cs[] = {\n");
    for (int i = 0; i < nall; i++) {
        const Case *c = &all[i];
        ok = ok && wr(fb, c->a, c->asz) && wr(fb, c->b, c->bsz) && wr(fb, c->want, c->s.m * c->s.n);
        fprintf(fd, "  {%s, \"%s\", %lld, %lld, %lld, %lld, %d},\n", c->name, c->name,
                (long long)c->s.m, (long long)c->s.n, (long long)c->s.k, (long long)c->s.ldc,
                c->runtime_b);
    }
    fprintf(fd,
            "};\n"
            "static float *rd(FILE *f, long n) { float *p = malloc((size_t)(n ? n : 1) * 4);\n"
            "  if (fread(p, 4, (size_t)n, f) != (size_t)n) { puts(\"short cases.bin\"); exit(2); } return p; }\n"
            "int main(int argc, char **argv) {\n"
            "  FILE *f = fopen(argc > 1 ? argv[1] : \"cases.bin\", \"rb\"); if (!f) return 2;\n"
            "  int pass = 0, fail = 0; const float sent = -1234.5f;\n"
            "  for (unsigned i = 0; i < sizeof cs / sizeof cs[0]; i++) {\n"
            "    long M = cs[i].m, N = cs[i].n, K = cs[i].k, ldc = cs[i].ldc;\n"
            "    float *a = rd(f, M * K), *b = rd(f, K * N), *w = rd(f, M * N);\n"
            "    float *cb = malloc((size_t)((M + 2) * ldc) * 4); for (long j = 0; j < (M + 2) * ldc; j++) cb[j] = sent;\n"
            "    float *C = cb + ldc; long sp = M > 2 ? M / 2 + 1 : M;\n"
            "    cs[i].fn(a, C, 0, sp, cs[i].rt ? b : 0); cs[i].fn(a, C, sp, M, cs[i].rt ? b : 0);\n"
            "    int ok = 1;\n"
            "    for (long r = -1; r <= M && ok; r++) for (long j = 0; j < ldc && ok; j++) {\n"
            "      int in = r >= 0 && r < M && j < N; float want = in ? w[r * N + j] : sent, got = C[r * ldc + j];\n"
            "      if (memcmp(&got, &want, 4)) { printf(\"FAIL %%s: C[%%ld, %%ld] = %%a, expected %%a\\n\", cs[i].name, r, j, (double)got, (double)want); ok = 0; } }\n"
            "    if (ok) pass++; else fail++;\n"
            "    free(a); free(b); free(w); free(cb);\n"
            "  }\n"
            "  printf(\"%%d passed, %%d failed\\n\", pass, fail); return fail != 0;\n"
            "}\n");
    ok = fclose(fb) == 0 && ok;
    ok = fclose(fd) == 0 && ok;
    for (int i = 0; i < nall; i++)
        case_free(&all[i]);
    free(all);
    printf("emitted %d cases for %s (%s)\n", nall, triple, isas);
    return ok ? 0 : 2;
}

int
main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "--cross") == 0)
        return cross_main(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_kern_sgemm [--cross TRIPLE CPU MATTR ISA,... DIR]\n");
        return 2;
    }
    char err[512];
    CgTarget host, t;
    if (!cg_target_host(&host, err, sizeof err)) {
        printf("FAIL host target: %s\n0 passed, 1 failed\n", err);
        return 1;
    }
    printf("host: %s cpu=%s avx2=%d avx512f=%d fma=%d\n", host.triple, host.cpu, host.avx2,
           host.avx512f, cg_target_has_feature(&host, "fma"));
    test_isa(&host, CG_GEMM_GENERIC, "generic (host features)");
    if (host.x86) {
        if (cg_target_parse(&t, host.triple, "x86-64", "", err, sizeof err))
            test_isa(&t, CG_GEMM_GENERIC, "generic (x86-64 baseline: fmaf calls)");
        if (host.avx2 && cg_target_parse(&t, host.triple, "haswell", "", err, sizeof err))
            test_isa(&t, CG_GEMM_X86_AVX2, "avx2 (haswell features)");
        if (cg_gemm_isa_supported(&host, CG_GEMM_X86_AVXVNNI))
            test_isa(&host, CG_GEMM_X86_AVXVNNI, "avxvnni row (ymm)");
        if (cg_gemm_isa_supported(&host, CG_GEMM_X86_AVX512VNNI))
            test_isa(&host, CG_GEMM_X86_AVX512VNNI, "avx512vnni row (zmm)");
    } else if (host.aarch64) {
        for (int isa = CG_GEMM_A64_NEON; isa <= CG_GEMM_A64_I8MM; isa++)
            if (cg_gemm_isa_supported(&host, (CgGemmIsa)isa))
                test_isa(&host, (CgGemmIsa)isa, cg_gemm_isa_name((CgGemmIsa)isa));
    }
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail != 0;
}
