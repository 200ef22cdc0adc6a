/* test_gemm_rt.c: bit-exact tests of the GEMM with B packed at run time (lib/codegen/gemm/
 * pack_rt.c + the b_runtime kernel of cg_gemm_emit).
 *
 * For every kernel path the host can run (generic, AVX2, AVX-VNNI (EVEX encoding without
 * AVX-VNNI), AVX512-VNNI on x86; generic and the AArch64 paths on AArch64), edge shapes
 * (M in {1,17,40}, N in {1,3,16,17,48,100}, K in {1,3,4,27,64,300,1400}: partial panels, partial
 * k groups, K chunks), signed and unsigned A and B, zero and non-zero A zero points, per-tensor,
 * per-channel and all-128 (u8: zb' = 0) B zero points, B contiguous along n ([K, N], a MatMul
 * operand) or along k (a transposed operand), a run-time bias or none, and tile overrides (small
 * K chunks, other tiles) on a third of the cases: the packer runs on B, then the kernel on the
 * packed B, over uneven row ranges, with the raw int32 accumulator as output, compared with
 * sum_k (a - za)(b - zb[n]) + bias[n] computed here. The packed buffer sits right before a
 * PROT_NONE page, so a write past its size crashes. (The AArch64 paths run under qemu in the
 * e2e tests: test/e2e/graphs/matmul_rt.qir, the attention_* fixtures.)
 *
 * Output ends with "N passed, M failed"; exit status non-zero on any failure. */
#define _DEFAULT_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen/gemm/gemm.h"
#include "codegen/gemm/pack_rt.h"
#include "codegen/target/module.h"
#include "codegen/target/target.h"

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint32_t
rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static int32_t
rnd_range(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
}

typedef struct Case {
    CgGemmSpec s;
    CgGemmRtB rb;
    uint8_t *a, *b;
    int32_t *zb, *zbk, *bias;
    int32_t *want;
    int64_t bpack, cbb;
    char name[64], desc[256];
} Case;

typedef void (*PackFn)(const void *, void *, int32_t *, const int32_t *);
typedef void (*GemmFn)(const void *, void *, int64_t, int64_t, const void *, const int32_t *);

static int npass, nfail;

static void
make_case(Case *c, int64_t M, int64_t N, int64_t K, int idx)
{
    memset(c, 0, sizeof *c);
    CgGemmSpec *s = &c->s;
    s->m = M, s->n = N, s->k = K;
    s->lda = K;
    s->ldc = N;
    s->a_signed = rnd() % 2;
    s->za = rnd() % 3 == 0 ? 0 : s->a_signed ? rnd_range(-128, 127) : rnd_range(0, 255);
    s->b_runtime = true;
    s->epilogue = CG_GEMM_EPI_I32;
    s->out = CG_GEMM_I32;
    c->rb.b_signed = rnd() % 2;
    bool kn = rnd() % 2;
    c->rb.sn = kn ? 1 : K;
    c->rb.sk = kn ? N : 1;
    c->rb.rt_bias = rnd() % 2;
    c->a = malloc((size_t)(M * K));
    c->b = malloc((size_t)(N * K));
    for (int64_t i = 0; i < M * K; i++)
        c->a[i] = (uint8_t)rnd();
    for (int64_t i = 0; i < N * K; i++)
        c->b[i] = (uint8_t)rnd();
    /* B's zero points (true) and as the kernel sees them (zbk = zb - 128 for u8 B) */
    c->zb = malloc((size_t)N * sizeof *c->zb);
    c->zbk = malloc((size_t)N * sizeof *c->zbk);
    int zmode = (int)(rnd() % 3);
    int32_t z0 = c->rb.b_signed ? rnd_range(-128, 127) : rnd_range(0, 255);
    for (int64_t n = 0; n < N; n++) {
        int32_t z = zmode == 0 ? (c->rb.b_signed ? 0 : 128)
                    : zmode == 1 ? z0
                                 : (c->rb.b_signed ? rnd_range(-128, 127) : rnd_range(0, 255));
        c->zb[n] = z;
        c->zbk[n] = c->rb.b_signed ? z : z - 128;
    }
    s->zb = c->zbk;
    if (c->rb.rt_bias) {
        c->bias = malloc((size_t)N * sizeof *c->bias);
        for (int64_t n = 0; n < N; n++)
            c->bias[n] = rnd_range(-(1 << 20), 1 << 20);
    }
    if (rnd() % 3 == 0) {
        static const int kcs[] = {4, 8, 20, 64};
        s->tile.kc = kcs[rnd() % 4];
        s->tile.kunroll = 1 + (int)(rnd() % 3);
        s->tile.mc = rnd() % 2 ? 1 : 0;
        if (rnd() % 2) {
            s->tile.mr = rnd() % 2 ? 2 : 4;
            s->tile.nv = 1 + (int)(rnd() % 2);
        }
    }
    c->want = malloc((size_t)(M * N) * sizeof *c->want);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t sum = c->bias ? c->bias[n] : 0;
            for (int64_t k = 0; k < K; k++) {
                uint8_t ab = c->a[m * K + k], bb = c->b[n * c->rb.sn + k * c->rb.sk];
                int32_t a = s->a_signed ? (int8_t)ab : ab;
                int32_t b = c->rb.b_signed ? (int8_t)bb : bb;
                sum += (int64_t)(a - s->za) * (b - c->zb[n]);
            }
            c->want[m * N + n] = (int32_t)sum; /* |sum| < 2^31 for these K */
        }
    snprintf(c->name, sizeof c->name, "rt%d", idx);
    snprintf(c->desc, sizeof c->desc,
             "M=%lld N=%lld K=%lld A=%s za=%d B=%s %s zb=%s bias=%d tile=%d/%d/%d/%d/%d",
             (long long)M, (long long)N, (long long)K, s->a_signed ? "s8" : "u8", s->za,
             c->rb.b_signed ? "s8" : "u8", kn ? "KN" : "NK",
             zmode == 0 ? "neutral" : zmode == 1 ? "tensor" : "channel", c->rb.rt_bias,
             s->tile.mr, s->tile.nv, s->tile.mc, s->tile.kc, s->tile.kunroll);
}

static void
case_free(Case *c)
{
    free(c->a);
    free(c->b);
    free(c->zb);
    free(c->zbk);
    free(c->bias);
    free(c->want);
}

static const int64_t Ms[] = {1, 17, 40};
static const int64_t Ns[] = {1, 3, 16, 17, 48, 100};
static const int64_t Ks[] = {1, 3, 4, 27, 64, 300, 1400};
enum { NCASES = 3 * 6 * 7 };

static bool
run_case(const Case *c, PackFn pf, GemmFn gf)
{
    const CgGemmSpec *s = &c->s;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t need = (size_t)(c->bpack + c->cbb);
    size_t data_pages = (need + pg - 1) / pg;
    uint8_t *map = mmap(NULL, (data_pages + 1) * pg, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + data_pages * pg, pg, PROT_NONE) != 0) {
        printf("FAIL %s: mmap\n", c->name);
        return false;
    }
    uint8_t *buf = map + data_pages * pg - need; /* 64-aligned: need and pg are multiples of 64 */
    memset(buf, 0xA5, need);                     /* garbage: the packer must write every byte */
    int32_t *cb = (int32_t *)(void *)(buf + c->bpack);
    pf(c->b, buf, cb, c->bias);
    int32_t *out = malloc((size_t)(s->m * s->n) * sizeof *out);
    memset(out, 0xA5, (size_t)(s->m * s->n) * sizeof *out);
    int64_t cut = s->m > 2 ? rnd_range(1, (int32_t)s->m - 1) : s->m;
    gf(c->a, out, 0, cut, buf, cb);
    if (cut < s->m)
        gf(c->a, out, cut, s->m, buf, cb);
    bool ok = true;
    for (int64_t i = 0; i < s->m * s->n; i++)
        if (out[i] != c->want[i]) {
            printf("FAIL %s [%s]: C[%lld][%lld] got %d want %d\n", c->name, c->desc,
                   (long long)(i / s->n), (long long)(i % s->n), out[i], c->want[i]);
            ok = false;
            break;
        }
    free(out);
    munmap(map, (data_pages + 1) * pg);
    return ok;
}

static void
test_isa(const CgTarget *t, CgGemmIsa isa, const char *label)
{
    char err[512];
    Case *cs = calloc(NCASES, sizeof *cs);
    int n = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int ni = 0; ni < 6; ni++)
            for (int ki = 0; ki < 7; ki++, n++)
                make_case(&cs[n], Ms[mi], Ns[ni], Ks[ki], n);
    LLVMTargetMachineRef tm = NULL;
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    CgJit *jit = NULL;
    bool ok = cg_target_machine_create(t, &tm, err, sizeof err) &&
              cg_module_create("gemm_rt_test", tm, &ctx, &mod, err, sizeof err);
    for (int i = 0; ok && i < n; i++) {
        char pname[80];
        snprintf(pname, sizeof pname, "%s.pack", cs[i].name);
        ok = cg_gemm_rt_sizes(t, isa, &cs[i].s, &cs[i].bpack, &cs[i].cbb, err, sizeof err) &&
             cg_gemm_rt_emit_pack(mod, t, isa, &cs[i].s, &cs[i].rb, pname, err, sizeof err) &&
             cg_gemm_emit(mod, t, isa, &cs[i].s, cs[i].name, err, sizeof err);
    }
    ok = ok && cg_module_optimize(mod, tm, NULL, err, sizeof err);
    if (tm)
        cg_target_machine_destroy(tm);
    if (ok) {
        jit = cg_jit_create(t, err, sizeof err);
        ok = jit && cg_jit_add(jit, ctx, mod, err, sizeof err);
        ctx = NULL, mod = NULL;
    }
    int before = nfail;
    if (!ok) {
        printf("FAIL %s: %s\n", label, err);
        nfail++;
    }
    for (int i = 0; ok && i < n; i++) {
        char pname[80];
        snprintf(pname, sizeof pname, "%s.pack", cs[i].name);
        PackFn pf = (PackFn)cg_jit_lookup(jit, pname, err, sizeof err);
        GemmFn gf = (GemmFn)cg_jit_lookup(jit, cs[i].name, err, sizeof err);
        if (pf && gf && run_case(&cs[i], pf, gf)) {
            npass++;
        } else {
            if (!pf || !gf)
                printf("FAIL %s: %s\n", cs[i].name, err);
            nfail++;
        }
    }
    if (mod)
        cg_module_destroy(ctx, mod);
    if (jit)
        cg_jit_destroy(jit);
    printf("%-34s %3d cases, %s\n", label, n, nfail == before ? "ok" : "FAILED");
    for (int i = 0; i < n; i++)
        case_free(&cs[i]);
    free(cs);
}

int
main(void)
{
    char err[512];
    CgTarget host;
    if (!cg_target_host(&host, err, sizeof err)) {
        printf("FAIL host target: %s\n0 passed, 1 failed\n", err);
        return 1;
    }
    test_isa(&host, CG_GEMM_GENERIC, "generic (host features)");
    if (host.x86) {
        CgTarget t;
        if (host.avx2 && cg_target_parse(&t, host.triple, "haswell", "", err, sizeof err))
            test_isa(&t, CG_GEMM_X86_AVX2, "avx2 (haswell features)");
        if (cg_gemm_isa_supported(&host, CG_GEMM_X86_AVXVNNI))
            test_isa(&host, CG_GEMM_X86_AVXVNNI, "avxvnni");
        if (cg_gemm_isa_supported(&host, CG_GEMM_X86_AVX512VNNI))
            test_isa(&host, CG_GEMM_X86_AVX512VNNI, "avx512vnni (zmm)");
    } else if (host.aarch64) {
        for (int isa = CG_GEMM_A64_NEON; isa <= CG_GEMM_A64_I8MM; isa++)
            if (cg_gemm_isa_supported(&host, (CgGemmIsa)isa))
                test_isa(&host, (CgGemmIsa)isa, cg_gemm_isa_name((CgGemmIsa)isa));
    }
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail != 0;
}
