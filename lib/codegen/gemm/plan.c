/* plan.c: the compile-time half of the int8 GEMM generator.
 *
 * Validates a CgGemmSpec against the chosen ISA variant, picks the tile sizes, packs the weights
 * into the microkernel's panel layout (gemm_impl.h) and folds every zero-point term that does
 * not depend on A into one per-channel int32 constant:
 *     sum_k (a - za)(b - zb[n]) + bias[n]
 *       = Sx[m,n] - zb[n] * R[m] + cb[n],   R[m] = sum_k a[m,k]  (only needed if some zb != 0)
 *     cb[n] = bias[n] - (off + za) * colsum[n] + K * za * zb[n],  colsum[n] = sum_k b[n,k],
 * where Sx = sum_k a'b is what the dot instruction computes on a' = a + off: off = +128 when
 * signed A is fed to the u8 x s8 vpdpbusd as a ^ 0x80, -128 when unsigned A is fed to the
 * s8 x s8 sdot as a ^ 0x80, else 0. All of it is int32 arithmetic modulo 2^32 (done in uint32
 * here), so the result is exact whenever the true accumulator fits in int32.
 */
#include "codegen/gemm/gemm_impl.h"

#include "support/support.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t
round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

static int
b_at(const CgGemmSpec *s, int64_t n, int64_t k)
{
    return s->b_layout == CG_GEMM_B_NK ? s->b[n * s->k + k] : s->b[k * s->n + n];
}

static bool
check_spec(const GemmPlan *p, const CgGemmSpec *s, char *err, size_t errlen)
{
    if (s->m < 1 || s->n < 1 || s->k < 1)
        return errbuf_fail(err, errlen, "gemm: empty shape M=%lld N=%lld K=%lld", (long long)s->m,
                    (long long)s->n, (long long)s->k);
    if (s->lda < s->k || s->ldc < s->n)
        return errbuf_fail(err, errlen, "gemm: strides lda=%lld ldc=%lld below K=%lld / N=%lld",
                    (long long)s->lda, (long long)s->ldc, (long long)s->k, (long long)s->n);
    if (s->k > (1 << 24) || s->n > (1 << 24))
        return errbuf_fail(err, errlen, "gemm: K or N above 2^24");
    if (!s->b && !s->b_runtime)
        return errbuf_fail(err, errlen, "gemm: no weights");
    if (s->b_runtime && s->residual)
        return errbuf_fail(err, errlen, "gemm: a run-time B cannot fuse a residual add");
    if ((s->act_zp || s->act_scale || s->act_row_scale) &&
        (s->residual || s->b_runtime || (s->act_zp && s->za != 0) ||
         ((s->act_scale || s->act_row_scale) && s->epilogue != CG_GEMM_EPI_DEQUANT) ||
         (s->act_scale && s->act_row_scale)))
        return errbuf_fail(err, errlen, "gemm: run-time quantization of A needs a compile-time "
                           "B, no residual, za = 0 (act_zp) and the dequantize epilogue with one "
                           "kind of scale (act_scale, act_row_scale)");
    if ((s->act_zp || s->act_scale || s->act_row_scale) && s->a_bits == 16)
        return errbuf_fail(err, errlen, "gemm: run-time quantization of A is for 8-bit A only");
    if (s->a_bits != 0 && s->a_bits != 8 && s->a_bits != 16)
        return errbuf_fail(err, errlen, "gemm: activations of %d bits (8 or 16)", s->a_bits);
    if (p->a16) {
        if (s->a_signed ? (s->za < -32768 || s->za > 32767) : (s->za < 0 || s->za > 65535))
            return errbuf_fail(err, errlen, "gemm: activation zero point %d outside the %s range",
                               s->za, s->a_signed ? "int16" : "uint16");
        if (s->b_runtime || s->residual)
            return errbuf_fail(err, errlen, "gemm: 16-bit activations take a constant B and no residual add");
    } else if (s->a_signed ? (s->za < -128 || s->za > 127) : (s->za < 0 || s->za > 255))
        return errbuf_fail(err, errlen, "gemm: activation zero point %d outside the %s range", s->za,
                    s->a_signed ? "int8" : "uint8");
    for (int64_t n = 0; s->zb && n < s->n; n++)
        if (s->zb[n] < -128 || s->zb[n] > 127)
            return errbuf_fail(err, errlen, "gemm: weight zero point %d (channel %lld) outside int8",
                        s->zb[n], (long long)n);
    int32_t lo = INT32_MIN, hi = INT32_MAX;
    switch (s->out) {
    case CG_GEMM_I8: lo = -128, hi = 127; break;
    case CG_GEMM_U8: lo = 0, hi = 255; break;
    case CG_GEMM_I16: lo = -32768, hi = 32767; break;
    case CG_GEMM_U16: lo = 0, hi = 65535; break;
    default: break;
    }
    switch (s->epilogue) {
    case CG_GEMM_EPI_I32:
        if (s->out != CG_GEMM_I32)
            return errbuf_fail(err, errlen, "gemm: the raw int32 epilogue needs an int32 output");
        break;
    case CG_GEMM_EPI_DEQUANT:
        if (s->out != CG_GEMM_F32 || !s->scale)
            return errbuf_fail(err, errlen, "gemm: dequantize needs an f32 output and scales");
        break;
    case CG_GEMM_EPI_REQUANT_FLOAT:
    case CG_GEMM_EPI_REQUANT_FIXED:
        if (s->out == CG_GEMM_F32)
            return errbuf_fail(err, errlen, "gemm: requantize needs an integer output");
        if (p->a16 && s->out == CG_GEMM_I32) /* qn_requant_fixed_wide's result range */
            return errbuf_fail(err, errlen, "gemm: 16-bit activations requantize to 8 or 16 bits");
        if (s->residual) { /* q is an 8-bit intermediate; the residual add's range is C's */
            if (s->out != CG_GEMM_I8 && s->out != CG_GEMM_U8)
                return errbuf_fail(err, errlen, "gemm: the fused residual add needs requantization to 8 bits");
            if (s->epilogue == CG_GEMM_EPI_REQUANT_FIXED) {
                const QnFixed *f[3] = {&s->res_fixed.a, &s->res_fixed.b, &s->res_fixed.y};
                for (int i = 0; i < 3; i++)
                    if (f[i]->shift < 1 || f[i]->shift > 62)
                        return errbuf_fail(err, errlen, "gemm: residual add shift %d outside [1, 62]", f[i]->shift);
            }
            if (s->res_lo > s->res_hi || s->res_lo < lo || s->res_hi > hi || s->ldr < s->n)
                return errbuf_fail(err, errlen, "gemm: residual clamp [%d, %d] outside [%d, %d]",
                            s->res_lo, s->res_hi, lo, hi);
            lo = -128, hi = 255;
        }
        if (s->qmin > s->qmax || s->qmin < lo || s->qmax > hi)
            return errbuf_fail(err, errlen, "gemm: clamp [%d, %d] outside the output range [%d, %d]",
                        s->qmin, s->qmax, lo, hi);
        if (s->epilogue == CG_GEMM_EPI_REQUANT_FLOAT) {
            if (!s->mult)
                return errbuf_fail(err, errlen, "gemm: float requantize needs multipliers");
            for (int64_t n = 0; n < s->n; n++)
                if (!isfinite(s->mult[n]))
                    return errbuf_fail(err, errlen, "gemm: multiplier of channel %lld not finite",
                                (long long)n);
        } else {
            if (!s->fixed_mult || !s->fixed_shift)
                return errbuf_fail(err, errlen, "gemm: fixed requantize needs multipliers and shifts");
            for (int64_t n = 0; n < s->n; n++)
                if (s->fixed_shift[n] < 1 || s->fixed_shift[n] > 62)
                    return errbuf_fail(err, errlen, "gemm: shift %d (channel %lld) outside [1, 62]",
                                s->fixed_shift[n], (long long)n);
        }
        break;
    }
    if (p->mr < 1 || p->mr > 16 || p->nv < 1 || p->nv > 8 || p->kunroll < 1 || p->kunroll > 64)
        return errbuf_fail(err, errlen, "gemm: tile mr=%d nv=%d kunroll=%d out of range", p->mr, p->nv,
                    p->kunroll);
    if (p->apack == APACK_PAIRS && (p->mr & (p->mr - 1)) != 0) /* row pairs */
        return errbuf_fail(err, errlen, "gemm: %s needs a power-of-two row tile, got %d",
                    p->uk->name, p->mr);
    if (p->mr * p->nv > (int)p->desc->gemm_max_acc)
        return errbuf_fail(err, errlen, "gemm: tile %dx%d has more than %u accumulators", p->mr,
                           p->nv, p->desc->gemm_max_acc);
    return true;
}

/* B packed into panels (into the zeroed bpack: values past N and K stay 0): for each panel, k
 * group and column of the panel, kg consecutive k values. With B as NK, 8-bit packing and a
 * whole group, one column's run is kg contiguous bytes of its row (a fixed-size copy when kg
 * is 4 or 8); otherwise the run is read value by value (stride N for KN). */
static void
pack_b(GemmPlan *p, const CgGemmSpec *s)
{
    int64_t npan = p->npanels_full + (p->nr_tail ? 1 : 0);
    bool nk = s->b_layout == CG_GEMM_B_NK;
    for (int64_t pi = 0; pi < npan; pi++) {
        int64_t nrp = pi < p->npanels_full ? p->nr : p->nr_tail;
        int64_t first = pi * p->nr;
        uint8_t *base = p->bpack + first * p->kp * p->belem;
        for (int64_t g = 0; g < p->groups; g++) {
            int64_t k0 = g * p->kg;
            bool whole = k0 + p->kg <= s->k;
            for (int64_t c = 0; c < nrp; c++) {
                int64_t n = first + c;
                uint8_t *dst = base + (g * nrp + c) * p->kg * p->belem;
                if (n >= s->n)
                    continue;
                int64_t kv = whole ? p->kg : k0 < s->k ? s->k - k0 : 0; /* the run's values in K */
                if (kv == 0)
                    continue;
                const int8_t *src = nk ? s->b + n * s->k + k0 : s->b + k0 * s->n + n;
                int64_t step = nk ? 1 : s->n;
                if (nk && whole && p->belem == 1) {
                    if (p->kg == 4)
                        memcpy(dst, src, 4);
                    else if (p->kg == 8)
                        memcpy(dst, src, 8);
                    else
                        memcpy(dst, src, (size_t)p->kg);
                } else if (p->belem == 1) {
                    for (int64_t j = 0; j < kv; j++)
                        dst[j] = (uint8_t)src[j * step];
                } else {
                    for (int64_t j = 0; j < kv; j++) {
                        int16_t w = src[j * step];
                        memcpy(dst + 2 * j, &w, sizeof w);
                    }
                }
            }
        }
    }
}

/* 16-bit activations: whether some channel's accumulator can leave int32 for some A in its
 * storage range (max|a - za| * sum_k |b - zb| + |bias|), then `wide`, with the k groups of
 * one int32 chunk: the dot instruction sees a' = a ^ 0x8000 (|a'| <= 32768) or a itself (the
 * generic row widens uint16 as it is: |a'| <= 65535), so a chunk of k values whose
 * max|a'| * max|b| * k stays below 2^31 cannot overflow int32 (gemm_impl.h). */
static void
plan_wide(GemmPlan *p, const CgGemmSpec *s)
{
    int64_t alo = s->a_signed ? -32768 : 0, ahi = s->a_signed ? 32767 : 65535;
    int64_t xmax = ahi - s->za > s->za - alo ? ahi - s->za : s->za - alo;
    int64_t bmax = 1;
    p->wide = false;
    for (int64_t n = 0; n < s->n; n++) {
        int64_t zbn = s->zb ? s->zb[n] : 0, sum = 0;
        for (int64_t k = 0; k < s->k; k++) {
            int64_t b = b_at(s, n, k);
            sum += b - zbn < 0 ? zbn - b : b - zbn;
            bmax = b < 0 && -b > bmax ? -b : b > bmax ? b : bmax;
        }
        int64_t bias = s->bias ? s->bias[n] : 0;
        p->wide |= xmax * sum + (bias < 0 ? -bias : bias) > INT32_MAX;
    }
    if (!p->wide)
        return;
    int64_t afed = p->a_xor || s->a_signed ? 32768 : 65535;
    int64_t kmax = INT32_MAX / afed / bmax; /* >= 255 */
    int64_t u = p->uk->step_n ? (p->kunroll + p->uk->step_groups - 1) / p->uk->step_groups *
                                    p->uk->step_groups
                              : p->kunroll;
    p->wgroups = kmax / p->kg / u * u;
    if (p->wgroups < 1)
        p->wgroups = 1;
}

/* 16-bit activations, wide: cb's corrections exact in int64 (|each term| < 2^48), and the
 * fixed multipliers qn_requant_fixed_wide needs (normalised). */
static bool
wide_corrections(GemmPlan *p, const CgGemmSpec *s, int32_t off, char *err, size_t errlen)
{
    for (int64_t n = 0; n < s->n; n++) {
        int64_t cs = 0;
        for (int64_t k = 0; k < s->k; k++)
            cs += b_at(s, n, k);
        int64_t zb64 = s->zb ? s->zb[n] : 0;
        p->cb64[n] = (s->bias ? s->bias[n] : 0) - ((int64_t)off + s->za) * cs +
                     s->k * (int64_t)s->za * zb64;
        p->cb_nonzero |= p->cb64[n] != 0;
    }
    for (int64_t n = 0; s->epilogue == CG_GEMM_EPI_REQUANT_FIXED && n < s->n; n++)
        if (s->fixed_mult[n] < (1 << 30))
            return errbuf_fail(err, errlen, "gemm: fixed multiplier %d of channel %lld not "
                               "normalised to [2^30, 2^31) (an int64 accumulator needs it)",
                               s->fixed_mult[n], (long long)n);
    return true;
}

static bool
plan_epilogue(GemmPlan *p, const CgGemmSpec *s);

bool
gemm_plan_init(GemmPlan *p, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s, char *err,
               size_t errlen)
{
    memset(p, 0, sizeof *p);
    if ((unsigned)isa >= CG_GEMM_ISA_COUNT)
        return errbuf_fail(err, errlen, "gemm: bad ISA variant %d", (int)isa);
    if (!cg_gemm_isa_supported(t, isa))
        return errbuf_fail(err, errlen, "gemm: target %s (%s) cannot run the %s kernel", t->triple,
                    t->cpu, cg_gemm_isa_name(isa));
    p->isa = isa;
    p->t = t;
    p->desc = cg_isa_desc(t, isa);
    p->uk = gemm_uk_for(isa, s);
    if (!p->uk)
        return errbuf_fail(err, errlen, "gemm: no %s kernel for %d-bit activations",
                           cg_gemm_isa_name(isa), s->a_bits);
    p->a16 = s->a_bits == 16;
    p->a_es = p->a16 ? 2 : 1;
    p->xor_off = p->a16 ? p->uk->xor_off16 : p->desc->a8_xor_offset;
    p->uk->shape(p, t, s);
    if (s->tile.mr > 0)
        p->mr = s->tile.mr;
    if (s->tile.nv > 0)
        p->nv = s->tile.nv;
    if (s->tile.kunroll > 0)
        p->kunroll = s->tile.kunroll;
    if (!check_spec(p, s, err, errlen))
        return false;

    /* e.g. vpdpbusd on unsigned A whose rows hold whole k groups: the packed block would be a plain
     * copy of the rows (libc memmove, 5-6% of ResNet-18), so the microkernel reads A in place */
    if (p->uk->a_in_place && (p->apack == APACK_BYTES || (p->a16 && p->apack == APACK_I16)) &&
        !p->a_xor && s->k % p->kg == 0)
        p->apack = APACK_NONE;
    p->kp = round_up(s->k, p->kg);
    p->groups = p->kp / p->kg;
    p->nr = (int64_t)p->nv * p->vl;
    p->npanels_full = s->n / p->nr;
    int64_t rem = s->n - p->npanels_full * p->nr;
    p->nv_tail = (rem + p->vl - 1) / p->vl;
    p->nr_tail = p->nv_tail * p->vl;
    p->tail_last_lanes = rem ? rem - (p->nv_tail - 1) * p->vl : p->vl;
    p->npad = p->npanels_full * p->nr + p->nr_tail;

    /* Packed A rows and the cache block: keep the packed block within ~192 KiB (L2). */
    switch (p->apack) {
    case APACK_BYTES: p->a_row_bytes = p->kp; break;
    case APACK_I16: p->a_row_bytes = p->kp * 2; break;
    case APACK_PAIRS: p->a_row_bytes = p->groups * 16; break;
    case APACK_NONE: p->a_row_bytes = 0; break;
    }
    int64_t per_row = p->apack == APACK_PAIRS ? p->a_row_bytes / 2 : p->a_row_bytes;
    int64_t mc = per_row ? (192 * 1024) / per_row : 256;
    mc = mc / p->mr * p->mr;
    if (mc < p->mr)
        mc = p->mr;
    if (mc > round_up(s->m, p->mr))
        mc = round_up(s->m, p->mr);
    if (s->tile.mc > 0)
        mc = round_up(s->tile.mc, p->mr);
    if (mc > (1 << 20))
        return errbuf_fail(err, errlen, "gemm: cache block of %lld rows too large", (long long)mc);
    p->mc = (int)mc;
    p->apack_bytes = p->apack == APACK_NONE   ? 0
                     : p->apack == APACK_PAIRS ? (mc + 1) / 2 * p->a_row_bytes
                                               : mc * p->a_row_bytes;

    if (p->a16)
        plan_wide(p, s);
    /* K chunks. Measured on AVX512-VNNI (bench/gemm_bench.c): chunks that keep the B chunk
     * in L1 (16 KiB) lose to whole-K tiles with B streaming from L2 plus a software prefetch,
     * because every chunk boundary saves and reloads the accumulators. So chunk only when a
     * panel outgrows a good part of L2 (64 KiB), e.g. K >= 1366 for 48-channel panels. */
    int64_t per_group = p->nr * p->kg * p->belem;
    int64_t kcmax = s->tile.kc > 0 ? (s->tile.kc + p->kg - 1) / p->kg : 65536 / per_group;
    if (kcmax < 1)
        kcmax = 1;
    if (p->wide) /* the int64 partial sums live in the tile (gemm_impl.h) */
        kcmax = p->groups;
    p->nkc = (p->groups + kcmax - 1) / kcmax;
    p->kcg = (p->groups + p->nkc - 1) / p->nkc;
    /* a chunk that does not stay in L1: each step prefetches, into L2, the B lines the next
     * chunk (or panel) reads at the same group, one chunk ahead. The row tiles of a panel read
     * it from L1/L2 once the first has; what a cold B (weights read once per run from DRAM, a
     * whole BERT-base) stalls on is the first tile of the next panel (-2% CPU time on BERT-base
     * quantize_dynamic; neutral on hot GEMMs: bench/gemm_bench.c) */
    if (p->uk->b_prefetch && p->kcg * per_group > 24 * 1024)
        p->b_prefetch = p->kcg;
    p->scratch_bytes = p->nkc > 1 ? ((int64_t)mc + p->mr) * p->nr * 4 : 0;

    p->need_rowsum = false;
    for (int64_t n = 0; s->zb && n < s->n; n++)
        p->need_rowsum |= s->zb[n] != 0;
    p->stack_bytes = p->apack_bytes + p->scratch_bytes + (p->need_rowsum ? mc * 4 : 0) +
                     2 * (int64_t)p->mr * p->nv * p->vl * 4; /* accumulators, row vectors */
    if (p->wide) /* int64 row sums, accumulators and row vectors */
        p->stack_bytes += (p->need_rowsum ? mc * 4 : 0) + 3 * (int64_t)p->mr * p->nv * p->vl * 4;

    /* Constants. */
    p->bpack_bytes = p->npad * p->kp * p->belem;
    p->bpack = calloc((size_t)p->bpack_bytes, 1);
    p->cb = calloc((size_t)p->npad, sizeof *p->cb);
    p->zb = calloc((size_t)p->npad, sizeof *p->zb);
    p->csum = s->act_zp ? calloc((size_t)p->npad, sizeof *p->csum) : NULL;
    p->cb64 = p->wide ? calloc((size_t)p->npad, sizeof *p->cb64) : NULL;
    p->nacc = (p->apack == APACK_PAIRS ? (p->mr + 1) / 2 * 2 : p->mr) * p->nv;
    p->acc_slots = calloc(4 * (size_t)p->nacc, sizeof *p->acc_slots);
    if (!p->bpack || !p->cb || !p->zb || (s->act_zp && !p->csum) || (p->wide && !p->cb64) ||
        !p->acc_slots) {
        gemm_plan_free(p);
        return errbuf_fail(err, errlen, "gemm: out of memory");
    }
    if (!s->b_runtime) /* else packed at run time (pack_rt.c) */
        pack_b(p, s);

    int32_t off = 0;
    if (p->a_xor)
        off = p->xor_off;
    p->cb_nonzero = false;
    for (int64_t n = 0; n < s->n; n++) {
        uint32_t colsum = 0;
        for (int64_t k = 0; !s->b_runtime && k < s->k; k++) /* run-time B: pack_rt.c */
            colsum += (uint32_t)b_at(s, n, k);
        uint32_t zbn = s->zb ? (uint32_t)s->zb[n] : 0;
        uint32_t v = s->bias ? (uint32_t)s->bias[n] : 0;
        v -= ((uint32_t)off + (uint32_t)s->za) * colsum;
        v += (uint32_t)s->k * (uint32_t)s->za * zbn;
        p->cb[n] = (int32_t)v;
        p->zb[n] = (int32_t)zbn;
        p->cb_nonzero |= v != 0 || s->b_runtime;
        if (p->csum) /* act_zp: sum_k (b - zb[n]), the run-time zero point's factor */
            p->csum[n] = (int32_t)(colsum - (uint32_t)s->k * zbn);
    }
    if (p->wide && !wide_corrections(p, s, off, err, errlen)) {
        gemm_plan_free(p);
        return false;
    }
    if (!plan_epilogue(p, s)) {
        gemm_plan_free(p);
        return errbuf_fail(err, errlen, "gemm: out of memory");
    }
    return true;
}

/* The epilogue's per-channel constants (npad entries, the padding channels zero). */
static bool
plan_epilogue(GemmPlan *p, const CgGemmSpec *s)
{
    if (s->epilogue == CG_GEMM_EPI_REQUANT_FLOAT) {
        p->mult = calloc((size_t)p->npad, sizeof *p->mult);
        if (!p->mult)
            return false;
        memcpy(p->mult, s->mult, (size_t)s->n * sizeof *p->mult);
        int64_t lo = (int64_t)s->qmin - s->zo, hi = (int64_t)s->qmax - s->zo;
        p->requant_i64 = lo < -(1 << 24) || lo > (1 << 24) || hi < -(1 << 24) || hi > (1 << 24);
    } else if (s->epilogue == CG_GEMM_EPI_REQUANT_FIXED) {
        p->fx_mult = calloc((size_t)p->npad, sizeof(int64_t));
        p->fx_round = calloc((size_t)p->npad, sizeof(int64_t));
        p->fx_shift = calloc((size_t)p->npad, sizeof(int64_t));
        if (!p->fx_mult || !p->fx_round || !p->fx_shift)
            return false;
        for (int64_t n = 0; n < p->npad; n++) {
            int32_t sh = n < s->n ? s->fixed_shift[n] : 1;
            p->fx_mult[n] = n < s->n ? s->fixed_mult[n] : 0;
            p->fx_shift[n] = sh;
            p->fx_round[n] = (int64_t)1 << (sh - 1);
        }
    } else if (s->epilogue == CG_GEMM_EPI_DEQUANT) {
        p->scale = calloc((size_t)p->npad, sizeof *p->scale);
        p->fbias = s->fbias ? calloc((size_t)p->npad, sizeof *p->fbias) : NULL;
        if (!p->scale || (s->fbias && !p->fbias))
            return false;
        memcpy(p->scale, s->scale, (size_t)s->n * sizeof *p->scale);
        if (s->fbias)
            memcpy(p->fbias, s->fbias, (size_t)s->n * sizeof *p->fbias);
    }
    return true;
}

void
gemm_plan_free(GemmPlan *p)
{
    free(p->bpack);
    free(p->cb);
    free(p->zb);
    free(p->mult);
    free(p->scale);
    free(p->fbias);
    free(p->fx_mult);
    free(p->fx_round);
    free(p->fx_shift);
    free(p->csum);
    free(p->cb64);
    free(p->acc_slots);
    memset(p, 0, sizeof *p);
}

int
cg_gemm_row_block(const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s)
{
    GemmPlan p;
    memset(&p, 0, sizeof p);
    p.isa = isa;
    p.uk = gemm_uk_for(isa, s) ? gemm_uk_for(isa, s) : &gemm_uk_generic; /* as gemm_plan_init would refuse */
    p.a16 = s->a_bits == 16;
    p.a_es = p.a16 ? 2 : 1;
    p.uk->shape(&p, t, s);
    return s->tile.mr > 0 ? s->tile.mr : p.mr;
}

int64_t
cg_gemm_stack_bytes(const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s)
{
    GemmPlan p;
    char err[8];
    if (!gemm_plan_init(&p, t, isa, s, err, sizeof err))
        return -1;
    int64_t n = p.stack_bytes;
    gemm_plan_free(&p);
    return n;
}
