/* test_kern_gemm.c: bit-exact tests of the int8 GEMM kernel generator (lib/codegen/gemm/).
 *
 * Default mode: for every ISA variant this host can run, emit kernels for edge shapes
 * (M in {1,5,17,64}, N in {1,3,16,17,64,100}, K in {1,3,4,27,64,300}), signed and unsigned A,
 * zero and unequal weight zero points, all four epilogues and narrowed clamps, run-time
 * quantization of A (zero point, per-tensor or per-row scale: CgGemmSpec.act_*), JIT them (ORC
 * LLJIT with a TargetMachine of exactly that variant's features) and compare every output byte
 * with a scalar reference of the same definition (the formulas of lib/numerics: requant float =
 * ORT order, fixed = one rounding ties up). A sits at the end of a page followed by a PROT_NONE
 * page, so a read past A's last valid byte crashes; C is pre-filled with a sentinel, so a write
 * outside C[m, 0..N) is a mismatch. M is split into uneven thread ranges. Compile-only checks:
 * the AVX-VNNI kernel selects {vex} vpdpbusd without AVX-512, the AArch64 kernels use
 * sdot/usdot/smmla/usmmla.
 *
 * --cross TRIPLE CPU MATTR ISAS DIR [asm]: emit the same cases for another target into
 * DIR/kernels.o (DIR/kernels.s with `asm`), DIR/cases.bin (inputs + expected outputs computed
 * here) and DIR/driver.c, which test/unit/run_aarch64_gemm.sh links statically and runs under
 * qemu, and test/unit/run_avxvnni_gemm.sh assembles (VEX dot products re-encoded as EVEX when the
 * host lacks AVX-VNNI) and runs natively.
 *
 * Output ends with "N passed, M failed"; exit status non-zero on any failure.
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen/target/module.h"
#include "codegen/gemm/gemm.h"
#include "codegen/target/target.h"

/* The dequantize reference multiplies and adds in separate statements: no compiler contracts
 * them into an fma (clang's default fp-contract=on works within one expression only, gcc's
 * -std=c11 default is off). */

/* ---- deterministic random numbers ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

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
    /* in 64 bits: the span of [INT32_MIN, INT32_MAX] does not fit an int (UBSan) */
    uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo + 1);
    return (int32_t)((int64_t)lo + (int64_t)((uint64_t)rnd() % span));
}

/* ---- the reference (same definitions as lib/numerics, written out here) ---- */

static int32_t
sat(int64_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

static int64_t
floor_shift(int64_t v, int s)
{
    return v >= 0 ? v >> s : ~((~v) >> s);
}

static int32_t
ref_requant_float(int32_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    float f = (float)acc * mult;
    float lo = (float)((int64_t)qmin - zp);
    float hi = (float)((int64_t)qmax - zp);
    if (f < lo)
        f = lo;
    if (f > hi)
        f = hi;
    int64_t r = (int64_t)nearbyintf(f); /* default rounding mode: half to even */
    return sat(r + zp, qmin, qmax);
}

static int32_t
ref_requant_fixed(int32_t acc, int32_t mult, int32_t shift, int32_t zp, int32_t qmin,
                  int32_t qmax)
{
    int64_t p = (int64_t)acc * mult;
    int64_t v = floor_shift(p + ((int64_t)1 << (shift - 1)), shift);
    return sat(v + zp, qmin, qmax);
}

/* qn_fixed_from_real: mult in [2^30, 2^31), shift = 31 - e. */
static void
fixed_from_real(double m, int32_t *mult, int32_t *shift)
{
    int e;
    double fr = frexp(m, &e);
    int64_t q = (int64_t)nearbyint(ldexp(fr, 31));
    int64_t s = 31 - e;
    if (q == ((int64_t)1 << 31)) {
        q >>= 1;
        s -= 1;
    }
    *mult = (int32_t)q;
    *shift = (int32_t)s;
}

static int
esize_of(CgGemmElem e)
{
    return e == CG_GEMM_I8 || e == CG_GEMM_U8 ? 1 : e == CG_GEMM_I16 || e == CG_GEMM_U16 ? 2 : 4;
}

/* 16-bit activations: the int64 accumulator's requantization (qn_requant_*_wide), written
 * out with int128 and long double (exact for |acc| < 2^60). */
static int32_t
ref_requant_float_wide(int64_t acc, float mult, int32_t zp, int32_t qmin, int32_t qmax)
{
    float f = (float)(long double)acc * mult; /* one rounding of the int64 to f32 */
    float lo = (float)((int64_t)qmin - zp);
    float hi = (float)((int64_t)qmax - zp);
    if (f < lo)
        f = lo;
    if (f > hi)
        f = hi;
    return sat((int64_t)nearbyintf(f) + zp, qmin, qmax);
}

static int32_t
ref_requant_fixed_wide(int64_t acc, int32_t mult, int32_t shift, int32_t zp, int32_t qmin,
                       int32_t qmax)
{
    __int128 p = (__int128)acc * mult + ((__int128)1 << (shift - 1));
    __int128 v = p >= 0 ? p >> shift : -((-p + (((__int128)1 << shift) - 1)) >> shift);
    if (v < INT32_MIN)
        v = INT32_MIN;
    if (v > INT32_MAX)
        v = INT32_MAX;
    return sat((int64_t)v + zp, qmin, qmax);
}

/* ---- cases ---- */

typedef struct Case {
    CgGemmIsa isa;
    CgGemmSpec s;
    int8_t *b;
    int32_t *zb, *bias, *fxm, *fxs;
    float *mult, *scale, *fbias;
    uint8_t *a;           /* (M-1)*lda + K bytes */
    CgGemmActQ aq;        /* run-time quantization of A (s.act_*): the kernel's fifth argument */
    float *rows;          /* aq.row_scale: M row scales */
    uint8_t *want;        /* M*ldc*esize bytes, sentinel outside the written area */
    int64_t splits[5];    /* row ranges [splits[i], splits[i+1]) */
    int nsplits;
    char name[48];
    char desc[160];
} Case;

static void
case_free(Case *c)
{
    free(c->b);
    free(c->zb);
    free(c->bias);
    free(c->fxm);
    free(c->fxs);
    free(c->mult);
    free(c->scale);
    free(c->fbias);
    free(c->a);
    free(c->rows);
    free(c->want);
}

#define SENTINEL 0xA5

static int64_t
a_bytes(const CgGemmSpec *s)
{
    return ((s->m - 1) * s->lda + s->k) * (s->a_bits == 16 ? 2 : 1);
}

static const struct {
    CgGemmEpilogue epi;
    CgGemmElem out;
} variants[9] = {
    {CG_GEMM_EPI_I32, CG_GEMM_I32},           {CG_GEMM_EPI_REQUANT_FLOAT, CG_GEMM_I8},
    {CG_GEMM_EPI_REQUANT_FLOAT, CG_GEMM_U8},  {CG_GEMM_EPI_REQUANT_FLOAT, CG_GEMM_I32},
    {CG_GEMM_EPI_REQUANT_FIXED, CG_GEMM_I8},  {CG_GEMM_EPI_REQUANT_FIXED, CG_GEMM_U8},
    {CG_GEMM_EPI_REQUANT_FIXED, CG_GEMM_I32}, {CG_GEMM_EPI_DEQUANT, CG_GEMM_F32},
    {CG_GEMM_EPI_DEQUANT, CG_GEMM_F32},
};

/* Run-time quantization of A on the epilogues that take it (int32 and dequantize): the zero
 * point moves to the kernel's argument (s->za = 0) on half of them, and a dequantize gets A's
 * per-tensor scale or per-row scales on two thirds. `act`: 0 none, else 1 + a random draw. */
static void
pick_act(Case *c, int variant, uint32_t act)
{
    CgGemmSpec *s = &c->s;
    CgGemmEpilogue epi = variants[variant].epi;
    if (!act || (epi != CG_GEMM_EPI_I32 && epi != CG_GEMM_EPI_DEQUANT))
        return;
    act--;
    if (act & 1) {
        s->act_zp = true;
        c->aq.za = s->za;
        s->za = 0;
    }
    if (epi == CG_GEMM_EPI_DEQUANT && (act >> 1) % 3 == 1) {
        s->act_scale = true;
        c->aq.sa = (float)rnd_range(1, 1 << 20) / (float)(1 << 14);
    } else if (epi == CG_GEMM_EPI_DEQUANT && (act >> 1) % 3 == 2) {
        s->act_row_scale = true;
        c->rows = malloc((size_t)s->m * sizeof *c->rows);
        for (int64_t m = 0; m < s->m; m++)
            c->rows[m] = (float)rnd_range(0, 1 << 20) / (float)(1 << 16);
        c->aq.row_scale = c->rows;
    }
}

/* variant: epilogue/output combination index 0..8; act: pick_act */
static void
make_case(Case *c, CgGemmIsa isa, int64_t M, int64_t N, int64_t K, bool a_signed, bool zb_nz,
          int variant, bool narrow, int idx, uint32_t act)
{
    memset(c, 0, sizeof *c);
    c->isa = isa;
    CgGemmSpec *s = &c->s;
    s->m = M, s->n = N, s->k = K;
    s->lda = K + (rnd() % 3 == 0 ? rnd_range(1, 9) : 0);
    s->ldc = N + (rnd() % 3 == 0 ? rnd_range(1, 5) : 0);
    s->a_signed = a_signed;
    s->za = a_signed ? rnd_range(-128, 127) : rnd_range(0, 255);
    if (rnd() % 4 == 0)
        s->za = 0;
    s->b_layout = rnd() % 2 ? CG_GEMM_B_NK : CG_GEMM_B_KN;
    c->b = malloc((size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++)
        c->b[i] = (int8_t)rnd_range(-128, 127);
    s->b = c->b;
    if (zb_nz) {
        c->zb = malloc((size_t)N * sizeof *c->zb);
        for (int64_t n = 0; n < N; n++)
            c->zb[n] = rnd_range(-128, 127);
        s->zb = c->zb;
    }
    if (rnd() % 3 != 0) {
        c->bias = malloc((size_t)N * sizeof *c->bias);
        for (int64_t n = 0; n < N; n++)
            c->bias[n] = rnd_range(-(1 << 20), 1 << 20);
        s->bias = c->bias;
    }
    /* Tiling overrides on a third of the cases: K chunks (partial sums across chunks), small
     * cache blocks (several blocks per call), K-loop unrolling with a remainder, other tiles. */
    if (rnd() % 3 == 0) {
        static const int kcs[] = {4, 8, 20, 64};
        s->tile.kc = kcs[rnd() % 4];
        s->tile.kunroll = 1 + (int)(rnd() % 3);
        s->tile.mc = rnd() % 2 ? 1 : 0; /* rounded up to one row tile */
        if (rnd() % 2) {
            s->tile.mr = rnd() % 2 ? 2 : 4;
            s->tile.nv = 1 + (int)(rnd() % 2);
        }
    }
    c->a = malloc((size_t)a_bytes(s));
    for (int64_t i = 0; i < a_bytes(s); i++)
        c->a[i] = (uint8_t)rnd();
    pick_act(c, variant, act);
    int32_t za = s->act_zp ? c->aq.za : s->za;

    /* exact accumulators, to size the multipliers */
    int32_t *acc = malloc((size_t)(M * N) * sizeof *acc);
    int64_t *maxabs = calloc((size_t)N, sizeof *maxabs);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t sum = s->bias ? s->bias[n] : 0;
            for (int64_t k = 0; k < K; k++) {
                int32_t a = a_signed ? (int8_t)c->a[m * s->lda + k] : c->a[m * s->lda + k];
                int32_t b = s->b_layout == CG_GEMM_B_NK ? c->b[n * K + k] : c->b[k * N + n];
                sum += (int64_t)(a - za) * (b - (s->zb ? s->zb[n] : 0));
            }
            if (sum != (int32_t)sum) {
                fprintf(stderr, "test bug: accumulator overflow\n");
                exit(2);
            }
            acc[m * N + n] = (int32_t)sum;
            int64_t ab = sum < 0 ? -sum : sum;
            if (ab > maxabs[n])
                maxabs[n] = ab;
        }

    s->epilogue = variants[variant].epi;
    s->out = variants[variant].out;
    int32_t lo = s->out == CG_GEMM_I8 ? -128 : s->out == CG_GEMM_U8 ? 0 : INT32_MIN;
    int32_t hi = s->out == CG_GEMM_I8 ? 127 : s->out == CG_GEMM_U8 ? 255 : INT32_MAX;
    if (s->out == CG_GEMM_I32 && s->epilogue != CG_GEMM_EPI_I32) {
        lo = -40000, hi = 40000; /* an int16-ish range stored as int32 */
        if (rnd() % 2) {
            lo = INT32_MIN + 5, hi = INT32_MAX - 7; /* bounds past 2^24: the int64 finish */
        }
    }
    s->qmin = lo, s->qmax = hi;
    if (narrow && s->out != CG_GEMM_I32) { /* fused Relu / Relu6-like clamp */
        s->qmin = rnd_range(lo, (lo + hi) / 2);
        s->qmax = rnd_range(s->qmin, hi);
    }
    s->zo = s->out == CG_GEMM_U8 ? rnd_range(0, 255) : s->out == CG_GEMM_I8 ? rnd_range(-128, 127)
                                                                         : rnd_range(-300, 300);
    double span = s->out == CG_GEMM_I32 ? 60000.0 : 255.0;
    if (s->epilogue == CG_GEMM_EPI_REQUANT_FLOAT || s->epilogue == CG_GEMM_EPI_REQUANT_FIXED ||
        s->epilogue == CG_GEMM_EPI_DEQUANT) {
        c->mult = malloc((size_t)N * sizeof *c->mult);
        for (int64_t n = 0; n < N; n++) {
            double m = span / (2.0 * (double)(maxabs[n] + 1)) * (0.6 + 0.9 * (rnd() % 1000) / 1000.0);
            if (rnd() % 4 == 0) /* exact powers of two: many exact .5 ties */
                m = ldexp(1.0, (int)floor(log2(m)));
            c->mult[n] = (float)m;
        }
    }
    if (s->epilogue == CG_GEMM_EPI_REQUANT_FLOAT) {
        s->mult = c->mult;
    } else if (s->epilogue == CG_GEMM_EPI_REQUANT_FIXED) {
        c->fxm = malloc((size_t)N * sizeof *c->fxm);
        c->fxs = malloc((size_t)N * sizeof *c->fxs);
        for (int64_t n = 0; n < N; n++)
            fixed_from_real(c->mult[n], &c->fxm[n], &c->fxs[n]);
        s->fixed_mult = c->fxm;
        s->fixed_shift = c->fxs;
    } else if (s->epilogue == CG_GEMM_EPI_DEQUANT) {
        c->scale = c->mult;
        c->mult = NULL;
        s->scale = c->scale;
        if (variant == 8) {
            c->fbias = malloc((size_t)N * sizeof *c->fbias);
            for (int64_t n = 0; n < N; n++)
                c->fbias[n] = (float)rnd_range(-1000, 1000) / 7.0f;
            s->fbias = c->fbias;
        }
    }

    /* expected output */
    int es = esize_of(s->out);
    size_t cbytes = (size_t)(M * s->ldc * es);
    c->want = malloc(cbytes);
    memset(c->want, SENTINEL, cbytes);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int32_t a = acc[m * N + n];
            uint8_t *dst = c->want + (m * s->ldc + n) * es;
            int32_t q = 0;
            float f = 0;
            switch (s->epilogue) {
            case CG_GEMM_EPI_I32: q = a; break;
            case CG_GEMM_EPI_REQUANT_FLOAT:
                q = ref_requant_float(a, s->mult[n], s->zo, s->qmin, s->qmax);
                break;
            case CG_GEMM_EPI_REQUANT_FIXED:
                q = ref_requant_fixed(a, s->fixed_mult[n], s->fixed_shift[n], s->zo, s->qmin,
                                      s->qmax);
                break;
            case CG_GEMM_EPI_DEQUANT: {
                float sc = s->scale[n];
                if (s->act_scale)
                    sc = c->aq.sa * sc;
                else if (s->act_row_scale)
                    sc = c->aq.row_scale[m] * sc;
                f = (float)a * sc;
                if (s->fbias)
                    f = f + s->fbias[n];
                break;
            }
            }
            if (s->out == CG_GEMM_F32) {
                memcpy(dst, &f, 4);
            } else if (es == 1) {
                dst[0] = (uint8_t)q;
            } else {
                memcpy(dst, &q, 4);
            }
        }
    free(acc);
    free(maxabs);

    /* row ranges: whole, or uneven pieces as a thread pool might cut them */
    c->splits[0] = 0;
    c->nsplits = 1;
    if (M > 2 && rnd() % 2) {
        int64_t cut1 = rnd_range(1, (int32_t)M - 1);
        int64_t cut2 = rnd_range((int32_t)cut1, (int32_t)M);
        c->splits[c->nsplits++] = cut1;
        c->splits[c->nsplits++] = cut2;
    }
    c->splits[c->nsplits] = M;
    snprintf(c->name, sizeof c->name, "gemm_%s_%d", cg_gemm_isa_name(isa), idx);
    snprintf(c->desc, sizeof c->desc,
             "%s M=%lld N=%lld K=%lld lda=%lld ldc=%lld %s za=%d zb=%s b=%s epi=%d out=%d "
             "q=[%d,%d] zo=%d tile=%d/%d/%d/%d/%d act=%d%d%d",
             cg_gemm_isa_name(isa), (long long)M, (long long)N, (long long)K, (long long)s->lda,
             (long long)s->ldc, a_signed ? "s8" : "u8", s->za, zb_nz ? "var" : "0",
             s->b_layout == CG_GEMM_B_NK ? "NK" : "KN", (int)s->epilogue, (int)s->out, s->qmin,
             s->qmax, s->zo, s->tile.mr, s->tile.nv, s->tile.mc, s->tile.kc, s->tile.kunroll,
             s->act_zp, s->act_scale, s->act_row_scale);
}

/* 16-bit activations (CgGemmSpec.a_bits = 16): int16 or uint16 A, int8 B. `extreme`: a third of
 * the rows hold A's far end from za and a third of the channels B's far end from zb, so that
 * those accumulators leave int32 when K is long (the wide path, gemm_impl.h). variant: 0 raw
 * i32 (wraps), 1-4 float requant to i16/u16/i8/u8, 5-8 fixed to the same, 9 dequant, 10
 * dequant + f32 bias. */
static void
make_case16(Case *c, CgGemmIsa isa, int64_t M, int64_t N, int64_t K, bool a_signed, bool zb_nz,
            int variant, bool narrow, bool extreme, int idx)
{
    memset(c, 0, sizeof *c);
    c->isa = isa;
    CgGemmSpec *s = &c->s;
    s->a_bits = 16;
    s->m = M, s->n = N, s->k = K;
    s->lda = K + (rnd() % 3 == 0 ? rnd_range(1, 9) : 0);
    s->ldc = N + (rnd() % 3 == 0 ? rnd_range(1, 5) : 0);
    s->a_signed = a_signed;
    int32_t alo = a_signed ? -32768 : 0, ahi = a_signed ? 32767 : 65535;
    s->za = rnd() % 4 == 0 ? 0 : rnd_range(alo, ahi);
    s->b_layout = rnd() % 2 ? CG_GEMM_B_NK : CG_GEMM_B_KN;
    c->b = malloc((size_t)(N * K));
    if (zb_nz) {
        c->zb = malloc((size_t)N * sizeof *c->zb);
        for (int64_t n = 0; n < N; n++)
            c->zb[n] = rnd_range(-128, 127);
        s->zb = c->zb;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            int32_t zb = s->zb ? s->zb[n] : 0;
            int32_t b = extreme && n % 3 == 0 ? (zb >= 0 ? -128 : 127) : rnd_range(-128, 127);
            c->b[s->b_layout == CG_GEMM_B_NK ? n * K + k : k * N + n] = (int8_t)b;
        }
    s->b = c->b;
    if (rnd() % 3 != 0) {
        c->bias = malloc((size_t)N * sizeof *c->bias);
        for (int64_t n = 0; n < N; n++)
            c->bias[n] = rnd_range(INT32_MIN / 2, INT32_MAX / 2);
        s->bias = c->bias;
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
    int64_t na = (M - 1) * s->lda + K;
    uint16_t *a16 = malloc((size_t)na * 2);
    for (int64_t i = 0; i < na; i++) {
        int64_t m = i / s->lda;
        int32_t v = rnd_range(alo, ahi);
        if (extreme && m % 3 == 0)
            v = ahi - s->za > s->za - alo ? ahi : alo;
        a16[i] = (uint16_t)v;
    }
    c->a = (uint8_t *)a16;

    int64_t *acc = malloc((size_t)(M * N) * sizeof *acc);
    int64_t *maxabs = calloc((size_t)N, sizeof *maxabs);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t sum = s->bias ? s->bias[n] : 0;
            for (int64_t k = 0; k < K; k++) {
                uint16_t u = a16[m * s->lda + k];
                int64_t a = a_signed ? (int16_t)u : u;
                int32_t b = s->b_layout == CG_GEMM_B_NK ? c->b[n * K + k] : c->b[k * N + n];
                sum += (a - s->za) * (b - (s->zb ? s->zb[n] : 0));
            }
            acc[m * N + n] = sum;
            int64_t ab = sum < 0 ? -sum : sum;
            if (ab > maxabs[n])
                maxabs[n] = ab;
        }
    static const struct {
        CgGemmEpilogue epi;
        CgGemmElem out;
    } variants[11] = {
        {CG_GEMM_EPI_I32, CG_GEMM_I32},           {CG_GEMM_EPI_REQUANT_FLOAT, CG_GEMM_I16},
        {CG_GEMM_EPI_REQUANT_FLOAT, CG_GEMM_U16}, {CG_GEMM_EPI_REQUANT_FLOAT, CG_GEMM_I8},
        {CG_GEMM_EPI_REQUANT_FLOAT, CG_GEMM_U8},  {CG_GEMM_EPI_REQUANT_FIXED, CG_GEMM_I16},
        {CG_GEMM_EPI_REQUANT_FIXED, CG_GEMM_U16}, {CG_GEMM_EPI_REQUANT_FIXED, CG_GEMM_I8},
        {CG_GEMM_EPI_REQUANT_FIXED, CG_GEMM_U8},  {CG_GEMM_EPI_DEQUANT, CG_GEMM_F32},
        {CG_GEMM_EPI_DEQUANT, CG_GEMM_F32},
    };
    s->epilogue = variants[variant].epi;
    s->out = variants[variant].out;
    int32_t lo = INT32_MIN, hi = INT32_MAX;
    switch (s->out) {
    case CG_GEMM_I8: lo = -128, hi = 127; break;
    case CG_GEMM_U8: lo = 0, hi = 255; break;
    case CG_GEMM_I16: lo = -32768, hi = 32767; break;
    case CG_GEMM_U16: lo = 0, hi = 65535; break;
    default: break;
    }
    s->qmin = lo, s->qmax = hi;
    if (narrow && s->out != CG_GEMM_I32 && s->out != CG_GEMM_F32) {
        s->qmin = rnd_range(lo, lo / 2 + hi / 2);
        s->qmax = rnd_range(s->qmin, hi);
    }
    s->zo = s->out == CG_GEMM_I32 || s->out == CG_GEMM_F32 ? 0 : rnd_range(lo, hi);
    double span = hi == INT32_MAX ? 60000.0 : (double)hi - lo;
    if (s->epilogue != CG_GEMM_EPI_I32) {
        c->mult = malloc((size_t)N * sizeof *c->mult);
        for (int64_t n = 0; n < N; n++) {
            double m = span / (2.0 * (double)(maxabs[n] + 1)) * (0.6 + 0.9 * (rnd() % 1000) / 1000.0);
            if (rnd() % 4 == 0)
                m = ldexp(1.0, (int)floor(log2(m)));
            c->mult[n] = (float)m;
        }
    }
    if (s->epilogue == CG_GEMM_EPI_REQUANT_FLOAT) {
        s->mult = c->mult;
    } else if (s->epilogue == CG_GEMM_EPI_REQUANT_FIXED) {
        c->fxm = malloc((size_t)N * sizeof *c->fxm);
        c->fxs = malloc((size_t)N * sizeof *c->fxs);
        for (int64_t n = 0; n < N; n++)
            fixed_from_real(c->mult[n], &c->fxm[n], &c->fxs[n]);
        s->fixed_mult = c->fxm;
        s->fixed_shift = c->fxs;
    } else if (s->epilogue == CG_GEMM_EPI_DEQUANT) {
        c->scale = c->mult;
        c->mult = NULL;
        s->scale = c->scale;
        if (variant == 10) {
            c->fbias = malloc((size_t)N * sizeof *c->fbias);
            for (int64_t n = 0; n < N; n++)
                c->fbias[n] = (float)rnd_range(-1000, 1000) / 7.0f;
            s->fbias = c->fbias;
        }
    }
    int es = esize_of(s->out);
    size_t cbytes = (size_t)(M * s->ldc * es);
    c->want = malloc(cbytes);
    memset(c->want, SENTINEL, cbytes);
    bool beyond = false;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t a = acc[m * N + n];
            beyond |= a != (int32_t)a;
            uint8_t *dst = c->want + (m * s->ldc + n) * es;
            int32_t q = 0;
            float f = 0;
            switch (s->epilogue) {
            case CG_GEMM_EPI_I32: q = (int32_t)(uint32_t)(uint64_t)a; break; /* wraps */
            case CG_GEMM_EPI_REQUANT_FLOAT:
                q = ref_requant_float_wide(a, s->mult[n], s->zo, s->qmin, s->qmax);
                break;
            case CG_GEMM_EPI_REQUANT_FIXED:
                q = ref_requant_fixed_wide(a, s->fixed_mult[n], s->fixed_shift[n], s->zo, s->qmin,
                                           s->qmax);
                break;
            case CG_GEMM_EPI_DEQUANT:
                f = (float)(long double)a * s->scale[n];
                if (s->fbias)
                    f = f + s->fbias[n];
                break;
            }
            if (s->out == CG_GEMM_F32) {
                memcpy(dst, &f, 4);
            } else if (es == 1) {
                dst[0] = (uint8_t)q;
            } else if (es == 2) {
                uint16_t h = (uint16_t)q;
                memcpy(dst, &h, 2);
            } else {
                memcpy(dst, &q, 4);
            }
        }
    free(acc);
    free(maxabs);
    c->splits[0] = 0;
    c->nsplits = 1;
    if (M > 2 && rnd() % 2) {
        int64_t cut1 = rnd_range(1, (int32_t)M - 1);
        int64_t cut2 = rnd_range((int32_t)cut1, (int32_t)M);
        c->splits[c->nsplits++] = cut1;
        c->splits[c->nsplits++] = cut2;
    }
    c->splits[c->nsplits] = M;
    snprintf(c->name, sizeof c->name, "gemm16_%s_%d", cg_gemm_isa_name(isa), idx);
    snprintf(c->desc, sizeof c->desc,
             "%s a16 M=%lld N=%lld K=%lld lda=%lld ldc=%lld %s za=%d zb=%s b=%s epi=%d out=%d "
             "q=[%d,%d] zo=%d tile=%d/%d/%d/%d/%d%s%s",
             cg_gemm_isa_name(isa), (long long)M, (long long)N, (long long)K, (long long)s->lda,
             (long long)s->ldc, a_signed ? "s16" : "u16", s->za, zb_nz ? "var" : "0",
             s->b_layout == CG_GEMM_B_NK ? "NK" : "KN", (int)s->epilogue, (int)s->out, s->qmin,
             s->qmax, s->zo, s->tile.mr, s->tile.nv, s->tile.mc, s->tile.kc, s->tile.kunroll,
             extreme ? " extreme" : "", beyond ? " acc>int32" : "");
}

static const int64_t Ms[] = {1, 5, 17, 64};
static const int64_t Ns[] = {1, 3, 16, 17, 64, 100};
static const int64_t Ks[] = {1, 3, 4, 27, 64, 300};

/* All cases for one ISA: every shape with rotating options (sign, zero points, epilogue,
 * output type, clamp, B layout, strides, thread split), plus the full option cross product on
 * awkward shapes (one by default, three with QDQC_TEST_FULL=1). */
static int
make_cases(CgGemmIsa isa, Case **out)
{
    static const int64_t hard[3][3] = {{17, 100, 27}, {5, 17, 3}, {64, 64, 300}};
    /* 16-bit activations: K past the int32 bound (wide), several int32 chunks */
    static const int64_t wide[4][3] = {{17, 40, 700}, {5, 17, 2500}, {64, 48, 1100}, {3, 3, 5000}};
    int nhard = getenv("QDQC_TEST_FULL") ? 3 : 1;
    int n16 = 4 * 6 * 3 + 4 * 11 + 11 * 2;
    int cap = 4 * 6 * 6 + nhard * 2 * 2 * 9 * 2 + nhard * 2 * 2 * 6 + n16, n = 0;
    Case *cs = calloc((size_t)cap, sizeof *cs);
    int idx = 0;
    for (int mi = 0; mi < 4; mi++)
        for (int ni = 0; ni < 6; ni++)
            for (int ki = 0; ki < 6; ki++, idx++) {
                uint32_t h = rnd();
                make_case(&cs[n++], isa, Ms[mi], Ns[ni], Ks[ki], h & 1, (h >> 1) & 1,
                          (int)((h >> 2) % 9), (h >> 6) % 3 == 0, idx, (h >> 8) % 7);
            }
    for (int hi = 0; hi < nhard; hi++)
        for (int sg = 0; sg < 2; sg++)
            for (int z = 0; z < 2; z++)
                for (int v = 0; v < 9; v++)
                    for (int nar = 0; nar < 2; nar++, idx++) {
                        if (nar && (v == 0 || v >= 7))
                            continue; /* no clamp to narrow */
                        make_case(&cs[n++], isa, hard[hi][0], hard[hi][1], hard[hi][2], sg, z, v,
                                  nar, idx, 0);
                    }
    /* run-time quantization of A: every kind on the awkward shapes */
    for (int hi = 0; hi < nhard; hi++)
        for (int sg = 0; sg < 2; sg++)
            for (int z = 0; z < 2; z++)
                for (int act = 1; act <= 6; act++, idx++)
                    make_case(&cs[n++], isa, hard[hi][0], hard[hi][1], hard[hi][2], sg, z,
                              act % 3 == 0 ? 0 : 7 + (act & 1), false, idx, (uint32_t)act);
    /* 16-bit activations, after the 8-bit cases (whose random draws stay as they were) */
    static const int64_t Ks16[] = {1, 27, 300};
    for (int mi = 0; mi < 4; mi++)
        for (int ni = 0; ni < 6; ni++)
            for (int ki = 0; ki < 3; ki++, idx++) {
                uint32_t h = rnd();
                make_case16(&cs[n++], isa, Ms[mi], Ns[ni], Ks16[ki], h & 1, (h >> 1) & 1,
                            (int)((h >> 2) % 11), (h >> 6) % 3 == 0, (h >> 8) % 2 == 0, idx);
            }
    for (int wi = 0; wi < 4; wi++)
        for (int v = 0; v < 11; v++, idx++) {
            uint32_t h = rnd();
            make_case16(&cs[n++], isa, wide[wi][0], wide[wi][1], wide[wi][2], h & 1, (h >> 1) & 1,
                        v, (h >> 6) % 3 == 0, true, idx);
        }
    for (int v = 0; v < 11; v++) /* both signs on one awkward shape, no extremes */
        for (int sg = 0; sg < 2; sg++, idx++)
            make_case16(&cs[n++], isa, 17, 100, 27, sg, v % 2, v, v % 3 == 0, false, idx);
    *out = cs;
    return n;
}

/* A copy of A that ends exactly at a PROT_NONE page. */
typedef struct Guarded {
    uint8_t *map, *a;
    size_t maplen;
} Guarded;

static bool
guard_a(Guarded *g, const uint8_t *a, size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (n + pg - 1) / pg;
    g->maplen = (data_pages + 1) * pg;
    g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED)
        return false;
    if (mprotect(g->map + data_pages * pg, pg, PROT_NONE) != 0)
        return false;
    g->a = g->map + data_pages * pg - n;
    memcpy(g->a, a, n);
    return true;
}

typedef void (*GemmFn)(const void *, void *, int64_t, int64_t);
typedef void (*GemmActFn)(const void *, void *, int64_t, int64_t, const CgGemmActQ *);

static bool
case_act(const Case *c)
{
    return c->s.act_zp || c->s.act_scale || c->s.act_row_scale;
}

/* Runs one case; prints the first mismatch. */
static bool
run_case(const Case *c, GemmFn fn)
{
    const CgGemmSpec *s = &c->s;
    int es = esize_of(s->out);
    size_t cbytes = (size_t)(s->m * s->ldc * es);
    Guarded ga;
    if (!guard_a(&ga, c->a, (size_t)a_bytes(s))) {
        printf("FAIL %s: mmap\n", c->name);
        return false;
    }
    uint8_t *cbuf = malloc(cbytes);
    memset(cbuf, SENTINEL, cbytes);
    for (int i = 0; i < c->nsplits; i++) {
        if (case_act(c))
            ((GemmActFn)(void (*)(void))fn)(ga.a, cbuf, c->splits[i], c->splits[i + 1], &c->aq);
        else
            fn(ga.a, cbuf, c->splits[i], c->splits[i + 1]);
    }
    bool ok = true;
    for (size_t i = 0; i < cbytes; i += (size_t)es)
        if (memcmp(cbuf + i, c->want + i, (size_t)es) != 0) {
            int64_t e = (int64_t)i / es;
            int32_t got = 0, want = 0;
            if (es == 1) {
                got = s->out == CG_GEMM_I8 ? (int8_t)cbuf[i] : cbuf[i];
                want = s->out == CG_GEMM_I8 ? (int8_t)c->want[i] : c->want[i];
            } else if (es == 2) {
                uint16_t g16, w16;
                memcpy(&g16, cbuf + i, 2);
                memcpy(&w16, c->want + i, 2);
                got = s->out == CG_GEMM_I16 ? (int16_t)g16 : g16;
                want = s->out == CG_GEMM_I16 ? (int16_t)w16 : w16;
            } else {
                memcpy(&got, cbuf + i, 4);
                memcpy(&want, c->want + i, 4);
            }
            printf("FAIL %s [%s]: first mismatch at C[%lld][%lld] (element %lld): got %d "
                   "(0x%08x) want %d (0x%08x)\n",
                   c->name, c->desc, (long long)(e / s->ldc), (long long)(e % s->ldc),
                   (long long)e, got, (unsigned)got, want, (unsigned)want);
            ok = false;
            break;
        }
    free(cbuf);
    munmap(ga.map, ga.maplen);
    return ok;
}

/* Shared bodies (cg_gemm_emit_shared) in the last build_module with `shared` */
static int nshared_bodies;

/* Emit case c through `cache` together with a decoy: the same spec with other weights (reversed),
 * bias (+7), output zero point and clamp, so the same body (if the plan's flags agree) with other constants. `decoy_first`:
 * the decoy is the first instance and c a later one; else c is the first, turned into a call of
 * the shared body when the decoy comes. Either way c must still compute its own result. */
static bool
emit_with_decoy(LLVMModuleRef mod, const CgTarget *t, const Case *c, CgGemmCache *cache,
                bool decoy_first, char *err, size_t errlen)
{
    size_t nb = (size_t)(c->s.n * c->s.k);
    int8_t *db = malloc(nb ? nb : 1);
    int32_t *dbias = c->s.bias ? malloc((size_t)c->s.n * sizeof *dbias) : NULL;
    for (size_t i = 0; i < nb; i++)
        db[i] = c->s.b[nb - 1 - i];
    for (int64_t i = 0; dbias && i < c->s.n; i++)
        dbias[i] = c->s.bias[i] + 7;
    CgGemmSpec d = c->s;
    d.b = db;
    d.bias = dbias;
    /* another output zero point and a narrower clamp: still the same body (they are loaded from
     * the instance's table, gemm/emit.c epi_global), so c must compute with its own */
    if (d.epilogue == CG_GEMM_EPI_REQUANT_FLOAT || d.epilogue == CG_GEMM_EPI_REQUANT_FIXED) {
        if ((int64_t)d.qmax - d.qmin >= 4) { /* int64: the i32-range cases span 2^32 */
            d.qmin += 1;
            d.qmax -= 1;
        }
        d.zo = d.zo > d.qmin ? d.zo - 1 : d.zo + 1;
    }
    char dname[64];
    snprintf(dname, sizeof dname, "%s_decoy", c->name);
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) {
        bool decoy = (pass == 0) == decoy_first;
        ok = cg_gemm_emit_shared(mod, t, c->isa, decoy ? &d : &c->s, decoy ? dname : c->name,
                                 cache, err, errlen) != NULL;
    }
    free(db);
    free(dbias);
    return ok;
}

/* Emit + optimise all cases into one module for target t (tm made from t); `shared`: through
 * one GEMM cache, each case with a decoy (emit_with_decoy). */
static bool
build_module(const CgTarget *t, LLVMTargetMachineRef tm, Case *cs, int n, bool shared,
             LLVMContextRef *ctx, LLVMModuleRef *mod, char *err, size_t errlen)
{
    if (!cg_module_create("gemm_test", tm, ctx, mod, err, errlen))
        return false;
    CgGemmCache *cache = shared ? cg_gemm_cache_create() : NULL;
    bool ok = true;
    for (int i = 0; i < n && ok; i++)
        ok = shared ? emit_with_decoy(*mod, t, &cs[i], cache, i % 2, err, errlen)
                    : cg_gemm_emit(*mod, t, cs[i].isa, &cs[i].s, cs[i].name, err, errlen) != NULL;
    if (shared)
        __atomic_add_fetch(&nshared_bodies, (int)cg_gemm_cache_shared(cache), __ATOMIC_RELAXED);
    cg_gemm_cache_destroy(cache);
    return ok && cg_module_optimize(*mod, tm, NULL, err, errlen);
}

static int npass, nfail;

static void
check(bool ok, const char *what)
{
    if (ok) {
        npass++;
    } else {
        nfail++;
        printf("FAIL %s\n", what);
    }
}

/* One compile job: emit, optimise and JIT a slice of the cases in its own context and LLJIT,
 * so two jobs can run on two threads. */
typedef struct Job {
    const CgTarget *t;
    Case *cs;
    int n;
    GemmFn *fns;
    CgJit *jit;
    char err[1024];
    bool ok;
    bool shared;
} Job;

static void *
job_run(void *arg)
{
    Job *jb = arg;
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    LLVMTargetMachineRef tm = NULL;
    jb->ok = false;
    if (!cg_target_machine_create(jb->t, &tm, jb->err, sizeof jb->err))
        return NULL;
    if (!build_module(jb->t, tm, jb->cs, jb->n, jb->shared, &ctx, &mod, jb->err, sizeof jb->err)) {
        cg_module_destroy(ctx, mod);
        cg_target_machine_destroy(tm);
        return NULL;
    }
    cg_target_machine_destroy(tm);
    jb->jit = cg_jit_create(jb->t, jb->err, sizeof jb->err);
    if (!jb->jit) {
        cg_module_destroy(ctx, mod);
        return NULL;
    }
    if (!cg_jit_add(jb->jit, ctx, mod, jb->err, sizeof jb->err))
        return NULL;
    for (int i = 0; i < jb->n; i++) {
        jb->fns[i] = (GemmFn)cg_jit_lookup(jb->jit, jb->cs[i].name, jb->err, sizeof jb->err);
        if (!jb->fns[i])
            return NULL;
    }
    jb->ok = true;
    return NULL;
}

/* JIT and run all cases of isa with target t (shared: through cg_gemm_emit_shared, each with a
 * decoy that shares its body; at least half of them must). */
static void
test_isa_jit(const CgTarget *t, CgGemmIsa isa, const char *label, bool shared)
{
    Case *cs;
    int n = make_cases(isa, &cs);
    GemmFn *fns = calloc((size_t)n, sizeof *fns);
    Job jobs[2] = {{t, cs, n / 2, fns, NULL, "", false, shared},
                   {t, cs + n / 2, n - n / 2, fns + n / 2, NULL, "", false, shared}};
    nshared_bodies = 0;
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, job_run, &jobs[1]) == 0;
    job_run(&jobs[0]);
    if (threaded)
        pthread_join(th, NULL);
    else
        job_run(&jobs[1]);
    int before = nfail;
    for (int j = 0; j < 2; j++)
        if (!jobs[j].ok) {
            printf("FAIL %s: %s\n", label, jobs[j].err);
            nfail++;
        }
    if (nfail == before)
        for (int i = 0; i < n; i++) {
            if (run_case(&cs[i], fns[i]))
                npass++;
            else
                nfail++;
        }
    for (int j = 0; j < 2; j++)
        cg_jit_destroy(jobs[j].jit);
    if (shared && 2 * nshared_bodies < n) {
        printf("FAIL %s: only %d shared bodies for %d cases with decoys\n", label,
               nshared_bodies, n);
        nfail++;
    }
    printf("%-34s %3d cases, %s", label, n, nfail == before ? "ok" : "FAILED");
    if (shared)
        printf(" (%d shared bodies)", nshared_bodies);
    printf("\n");
    for (int i = 0; i < n; i++)
        case_free(&cs[i]);
    free(cs);
    free(fns);
}

/* ---- compile-only checks: the instructions each variant selects ---- */

static char *
kernel_asm(const char *triple, const char *cpu, const char *mattr, CgGemmIsa isa, bool a_signed,
           bool a16, char *err, size_t errlen)
{
    CgTarget t;
    if (!cg_target_parse(&t, triple, cpu, mattr, err, errlen))
        return NULL;
    LLVMTargetMachineRef tm;
    if (!cg_target_machine_create(&t, &tm, err, errlen))
        return NULL;
    Case c;
    if (a16)
        make_case16(&c, isa, 17, 40, 28, a_signed, true, 1, false, false, 0);
    else
        make_case(&c, isa, 17, 40, 27, a_signed, true, 1, false, 0, 0);
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    char *text = NULL;
    if (build_module(&t, tm, &c, 1, false, &ctx, &mod, err, errlen))
        text = cg_module_emit_asm(mod, tm, err, errlen);
    cg_module_destroy(ctx, mod);
    cg_target_machine_destroy(tm);
    case_free(&c);
    return text;
}

static void
check_asm2(const char *label, const char *triple, const char *cpu, const char *mattr,
           CgGemmIsa isa, bool a_signed, bool a16, const char *must, const char *must_not)
{
    char err[1024];
    char *text = kernel_asm(triple, cpu, mattr, isa, a_signed, a16, err, sizeof err);
    bool ok = text && strstr(text, must) && !(must_not && strstr(text, must_not));
    if (!ok)
        printf("FAIL asm %s: want '%s'%s%s: %s\n", label, must, must_not ? " and no " : "",
               must_not ? must_not : "", text ? "not so" : err);
    check(ok, label);
    free(text);
}

static void
check_asm(const char *label, const char *triple, const char *cpu, const char *mattr,
          CgGemmIsa isa, bool a_signed, const char *must, const char *must_not)
{
    check_asm2(label, triple, cpu, mattr, isa, a_signed, false, must, must_not);
}

static void
test_asm(void)
{
    /* 16-bit activations: int16 dot products */
    check_asm2("a16 avx512vnni: vpdpwssd zmm", "x86_64-linux-gnu", "cascadelake", "",
               CG_GEMM_X86_AVX512VNNI, true, true, "vpdpwssd\t%zmm", "vpdpbusd");
    check_asm2("a16 avx512vnni u16: vpdpwssd zmm", "x86_64-linux-gnu", "cascadelake", "",
               CG_GEMM_X86_AVX512VNNI, false, true, "vpdpwssd\t%zmm", "vpdpbusd");
    check_asm2("a16 avxvnni: {vex} vpdpwssd", "x86_64-linux-gnu", "alderlake", "",
               CG_GEMM_X86_AVXVNNI, true, true, "{vex}\tvpdpwssd", "zmm");
    check_asm2("a16 avx2: vpmaddwd", "x86_64-linux-gnu", "haswell", "", CG_GEMM_X86_AVX2, false,
               true, "vpmaddwd", "vpmaddubsw");
    check_asm2("a16 neon: smlal", "aarch64-linux-gnu", "generic", "", CG_GEMM_A64_NEON, true,
               true, "smlal", "sdot");
    check_asm2("a16 dotprod target: smlal", "aarch64-linux-gnu", "neoverse-n2", "",
               CG_GEMM_A64_I8MM, false, true, "smlal", "smmla");

    /* AVX-VNNI without AVX-512: the 256-bit intrinsic must select the VEX encoding. */
    check_asm("avxvnni selects {vex} vpdpbusd", "x86_64-linux-gnu", "alderlake", "",
              CG_GEMM_X86_AVXVNNI, false, "{vex}\tvpdpbusd", "zmm");
    check_asm("avx512vnni uses zmm vpdpbusd", "x86_64-linux-gnu", "cascadelake", "",
              CG_GEMM_X86_AVX512VNNI, true, "vpdpbusd", NULL);
    check_asm("avx2 exact path: vpmaddwd", "x86_64-linux-gnu", "haswell", "", CG_GEMM_X86_AVX2,
              true, "vpmaddwd", "vpmaddubsw");
    check_asm("dotprod signed: sdot", "aarch64-linux-gnu", "cortex-a76", "", CG_GEMM_A64_DOTPROD,
              true, "sdot", "usdot");
    check_asm("dotprod unsigned, no i8mm: sdot", "aarch64-linux-gnu", "cortex-a76", "",
              CG_GEMM_A64_DOTPROD, false, "sdot", "usdot");
    check_asm("dotprod unsigned with i8mm: usdot", "aarch64-linux-gnu", "generic",
              "+dotprod,+i8mm", CG_GEMM_A64_DOTPROD, false, "usdot", NULL);
    check_asm("i8mm signed: smmla", "aarch64-linux-gnu", "neoverse-n2", "", CG_GEMM_A64_I8MM,
              true, "smmla", NULL);
    check_asm("i8mm unsigned: usmmla", "aarch64-linux-gnu", "neoverse-n2", "", CG_GEMM_A64_I8MM,
              false, "usmmla", NULL);
    check_asm("neon baseline: widening multiply", "aarch64-linux-gnu", "generic", "",
              CG_GEMM_A64_NEON, true, "mull", "sdot");

    /* A variant the target lacks is refused, not handed to LLVM (which would abort). */
    CgTarget t;
    char err[512];
    bool ok = cg_target_parse(&t, "x86_64-linux-gnu", "haswell", "", err, sizeof err);
    Case c;
    make_case(&c, CG_GEMM_X86_AVX512VNNI, 5, 3, 4, true, false, 0, false, 0, 0);
    LLVMTargetMachineRef tm = NULL;
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    if (ok && cg_target_machine_create(&t, &tm, err, sizeof err) &&
        cg_module_create("refuse", tm, &ctx, &mod, err, sizeof err))
        ok = !cg_gemm_emit(mod, &t, CG_GEMM_X86_AVX512VNNI, &c.s, "f", err, sizeof err) &&
             strstr(err, "cannot run");
    check(ok, "avx512vnni kernel refused for haswell");
    cg_module_destroy(ctx, mod);
    cg_target_machine_destroy(tm);
    case_free(&c);
    ok = !cg_target_parse(&t, "x86_64-linux-gnu", "nosuchcpu", "", err, sizeof err) &&
         !cg_target_parse(&t, "x86_64-linux-gnu", "generic", "+nosuchfeature", err, sizeof err) &&
         cg_target_parse(&t, "x86_64-linux-gnu", "generic", "+avx512vnni,-avx512bw", err,
                         sizeof err) &&
         t.avx512vnni && t.avx512f && t.avx2 && !t.avx512bw &&
         cg_target_parse(&t, "x86_64-linux-gnu", "sapphirerapids", "-avx2", err, sizeof err) &&
         !t.avx2 && !t.avx512vnni && !t.avxvnni &&
         cg_target_parse(&t, "aarch64-linux-gnu", "generic", "+v8.6a", err, sizeof err) &&
         t.neon && t.dotprod && t.i8mm;
    check(ok, "target parsing and feature implications");
}

/* ---- cross mode: object + data + driver for another target ---- */

static const char driver_body[] =
    "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include <sys/mman.h>\n#include <unistd.h>\n"
    "static int64_t rd(FILE *f) { int64_t v = 0; if (fread(&v, 8, 1, f) != 1) exit(3); return v; }\n"
    "int main(int argc, char **argv) {\n"
    "    FILE *f = fopen(argc > 1 ? argv[1] : \"cases.bin\", \"rb\");\n"
    "    if (!f) { perror(\"cases.bin\"); return 3; }\n"
    "    int64_t n = rd(f); int pass = 0, fail = 0;\n"
    "    size_t pg = (size_t)sysconf(_SC_PAGESIZE);\n"
    "    for (int64_t i = 0; i < n; i++) {\n"
    "        int64_t ldc = rd(f), es = rd(f), ab = rd(f), cb = rd(f), ns = rd(f), sp[8];\n"
    "        for (int64_t j = 0; j <= ns; j++) sp[j] = rd(f);\n"
    "        char name[64] = {0}; if (fread(name, 48, 1, f) != 1) return 3;\n"
    "        struct { int32_t za; float sa; const float *rows; } aq = {0};\n"
    "        int64_t za = rd(f), sab = rd(f), nrows = rd(f); float *rows = NULL;\n"
    "        aq.za = (int32_t)za; memcpy(&aq.sa, &sab, 4);\n"
    "        if (nrows) { rows = malloc((size_t)nrows * 4);\n"
    "            if (fread(rows, 4, (size_t)nrows, f) != (size_t)nrows) return 3; aq.rows = rows; }\n"
    "        size_t dp = ((size_t)ab + pg - 1) / pg;\n"
    "        uint8_t *map = mmap(NULL, (dp + 1) * pg, PROT_READ | PROT_WRITE,\n"
    "                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n"
    "        if (map == MAP_FAILED || mprotect(map + dp * pg, pg, PROT_NONE)) return 3;\n"
    "        uint8_t *a = map + dp * pg - ab, *want = malloc((size_t)cb), *c = malloc((size_t)cb);\n"
    "        if (fread(a, 1, (size_t)ab, f) != (size_t)ab) return 3;\n"
    "        if (fread(want, 1, (size_t)cb, f) != (size_t)cb) return 3;\n"
    "        memset(c, 0xA5, (size_t)cb);\n"
    "        for (int64_t j = 0; j < ns; j++) fns[i](a, c, sp[j], sp[j + 1], &aq);\n"
    "        int64_t bad = -1;\n"
    "        for (int64_t e = 0; e * es < cb; e++)\n"
    "            if (memcmp(c + e * es, want + e * es, (size_t)es)) { bad = e; break; }\n"
    "        if (bad < 0) pass++;\n"
    "        else { fail++; printf(\"FAIL %s: first mismatch at C[%lld][%lld] (element %lld)\\n\",\n"
    "                name, (long long)(bad / ldc), (long long)(bad % ldc), (long long)bad); }\n"
    "        munmap(map, (dp + 1) * pg); free(want); free(c); free(rows);\n"
    "    }\n"
    "    fclose(f);\n"
    "    printf(\"%d passed, %d failed\\n\", pass, fail);\n"
    "    return fail != 0;\n"
    "}\n";

static void
wr64(FILE *f, int64_t v)
{
    fwrite(&v, 8, 1, f);
}

static int
cross_main(const char *triple, const char *cpu, const char *mattr, const char *isas,
           const char *dir, bool as_asm, bool shared)
{
    char err[1024], path[1024];
    CgTarget t;
    if (!cg_target_parse(&t, triple, cpu, mattr, err, sizeof err)) {
        fprintf(stderr, "test_kern_gemm: %s\n", err);
        return 2;
    }
    Case *all = NULL;
    int nall = 0;
    for (int isa = 0; isa < CG_GEMM_ISA_COUNT; isa++) {
        const char *nm = cg_gemm_isa_name((CgGemmIsa)isa);
        const char *hit = strstr(isas, nm);
        size_t len = strlen(nm);
        if (!hit || (hit[len] != 0 && hit[len] != ','))
            continue;
        if (!cg_gemm_isa_supported(&t, (CgGemmIsa)isa)) {
            fprintf(stderr, "test_kern_gemm: %s not supported by %s %s %s\n", nm, triple, cpu,
                    mattr);
            return 2;
        }
        Case *cs;
        int n = make_cases((CgGemmIsa)isa, &cs);
        all = realloc(all, (size_t)(nall + n) * sizeof *all);
        memcpy(all + nall, cs, (size_t)n * sizeof *cs);
        nall += n;
        free(cs);
    }
    LLVMTargetMachineRef tm;
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    snprintf(path, sizeof path, "%s/kernels.%s", dir, as_asm ? "s" : "o");
    if (!cg_target_machine_create(&t, &tm, err, sizeof err) ||
        !build_module(&t, tm, all, nall, shared, &ctx, &mod, err, sizeof err) ||
        !cg_module_emit_file(mod, tm, as_asm, path, err, sizeof err)) {
        fprintf(stderr, "test_kern_gemm: %s\n", err);
        return 2;
    }
    cg_module_destroy(ctx, mod);
    cg_target_machine_destroy(tm);

    snprintf(path, sizeof path, "%s/cases.bin", dir);
    FILE *f = fopen(path, "wb");
    snprintf(path, sizeof path, "%s/driver.c", dir);
    FILE *d = fopen(path, "w");
    if (!f || !d) {
        fprintf(stderr, "test_kern_gemm: cannot write into %s\n", dir);
        return 2;
    }
    fprintf(d, "/* generated by test_kern_gemm --cross %s %s %s %s */\n#define _DEFAULT_SOURCE\n#include <stdint.h>\n",
            triple, cpu, mattr, isas);
    /* every kernel behind a wrapper of one type; those with run-time quantization of A
     * (case_act) take the fifth argument */
    for (int i = 0; i < nall; i++) {
        bool act = case_act(&all[i]);
        fprintf(d, "void %s(const void *, void *, int64_t, int64_t%s);\n", all[i].name,
                act ? ", const void *" : "");
        fprintf(d, "static void w%d(const void *a, void *c, int64_t b, int64_t e, const void *q) "
                "{ %s%s(a, c, b, e%s); }\n", i, act ? "" : "(void)q; ", all[i].name,
                act ? ", q" : "");
    }
    fprintf(d, "static void (*const fns[])(const void *, void *, int64_t, int64_t, const void *) = {\n");
    for (int i = 0; i < nall; i++)
        fprintf(d, "    w%d,\n", i);
    fprintf(d, "};\n%s", driver_body);
    fclose(d);
    wr64(f, nall);
    for (int i = 0; i < nall; i++) {
        const Case *c = &all[i];
        int es = esize_of(c->s.out);
        wr64(f, c->s.ldc);
        wr64(f, es);
        wr64(f, a_bytes(&c->s));
        wr64(f, c->s.m * c->s.ldc * es);
        wr64(f, c->nsplits);
        for (int j = 0; j <= c->nsplits; j++)
            wr64(f, c->splits[j]);
        char name[48] = {0};
        snprintf(name, sizeof name, "%s", c->name);
        fwrite(name, 48, 1, f);
        int32_t sab;
        memcpy(&sab, &c->aq.sa, 4);
        wr64(f, c->aq.za);
        wr64(f, (int64_t)(uint32_t)sab);
        wr64(f, c->rows ? c->s.m : 0);
        if (c->rows)
            fwrite(c->rows, 4, (size_t)c->s.m, f);
        fwrite(c->a, 1, (size_t)a_bytes(&c->s), f);
        fwrite(c->want, 1, (size_t)(c->s.m * c->s.ldc * es), f);
    }
    fclose(f);
    printf("wrote %d kernels for %s (%s %s) into %s\n", nall, t.triple, t.cpu, mattr, dir);
    for (int i = 0; i < nall; i++)
        case_free(&all[i]);
    free(all);
    return 0;
}

int
main(int argc, char **argv)
{
    bool opt_asm = argc == 8 && strcmp(argv[7], "asm") == 0;
    bool opt_shared = argc == 8 && strcmp(argv[7], "shared") == 0;
    if ((argc == 7 || opt_asm || opt_shared) && strcmp(argv[1], "--cross") == 0)
        return cross_main(argv[2], argv[3], argv[4], argv[5], argv[6], opt_asm, opt_shared);
    if (argc != 1) {
        fprintf(stderr, "usage: test_kern_gemm [--cross TRIPLE CPU MATTR ISA,... DIR [asm|shared]]\n");
        return 2;
    }
    char err[512];
    CgTarget host;
    if (!cg_target_host(&host, err, sizeof err)) {
        printf("FAIL host target: %s\n", err);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    printf("host: %s cpu=%s avx2=%d avx512vnni=%d avxvnni=%d\n", host.triple, host.cpu,
           host.avx2, host.avx512vnni, host.avxvnni);
    test_asm();
    if (host.x86) {
        test_isa_jit(&host, CG_GEMM_GENERIC, "generic (host features)", false);
        test_isa_jit(&host, CG_GEMM_GENERIC, "generic, shared bodies", true);
        CgTarget t;
        if (host.avx2 && cg_target_parse(&t, host.triple, "haswell", "", err, sizeof err))
            test_isa_jit(&t, CG_GEMM_X86_AVX2, "avx2 (haswell features)", false);
        if (cg_gemm_isa_supported(&host, CG_GEMM_X86_AVXVNNI))
            test_isa_jit(&host, CG_GEMM_X86_AVXVNNI,
                         host.avxvnni ? "avxvnni ({vex} ymm)" : "avxvnni IR (EVEX ymm encoding)",
                         false);
        else
            printf("avxvnni: host cannot run it (skipped)\n");
        if (cg_gemm_isa_supported(&host, CG_GEMM_X86_AVX512VNNI)) {
            test_isa_jit(&host, CG_GEMM_X86_AVX512VNNI, "avx512vnni (zmm)", false);
            test_isa_jit(&host, CG_GEMM_X86_AVX512VNNI, "avx512vnni, shared bodies", true);
        } else
            printf("avx512vnni: host cannot run it (skipped)\n");
    } else if (host.aarch64) {
        test_isa_jit(&host, CG_GEMM_GENERIC, "generic (host features)", false);
        test_isa_jit(&host, CG_GEMM_GENERIC, "generic, shared bodies", true);
        for (int isa = CG_GEMM_A64_NEON; isa <= CG_GEMM_A64_I8MM; isa++)
            if (cg_gemm_isa_supported(&host, (CgGemmIsa)isa))
                test_isa_jit(&host, (CgGemmIsa)isa, cg_gemm_isa_name((CgGemmIsa)isa), false);
    }
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail != 0;
}
