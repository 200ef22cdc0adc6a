/* isa.c: the table of kernel-path records (CgIsaDesc, isa.h), one per path and architecture,
 * and the questions answered from it: a path's record, name, support and width, its dot and
 * multiply-add intrinsics, the best path of a target. */
#include "codegen/target/isa.h"

#include <stddef.h>
#include <string.h>

static bool
generic_ok(const CgTarget *t)
{
    return t->x86 || t->aarch64;
}

static bool
avx2_ok(const CgTarget *t)
{
    return t->x86 && t->avx2;
}

/* llvm.x86.avx512.vpdpbusd.256 selects {vex} vpdpbusd with avxvnni, or the EVEX form with
 * avx512vnni + avx512vl: either runs this path. */
static bool
avxvnni_ok(const CgTarget *t)
{
    return t->x86 && (t->avxvnni || (t->avx512vnni && t->avx512vl));
}

static bool
avx512vnni_ok(const CgTarget *t)
{
    return t->x86 && t->avx512vnni && t->avx512bw;
}

/* the ymm forms of the EVEX instructions */
static bool
has_avx512vl(const CgTarget *t)
{
    return t->avx512vl;
}

static bool
neon_ok(const CgTarget *t)
{
    return t->aarch64 && t->neon;
}

static bool
dotprod_ok(const CgTarget *t)
{
    return t->aarch64 && t->dotprod;
}

static bool
i8mm_ok(const CgTarget *t)
{
    return t->aarch64 && t->i8mm;
}

/* Every register tile of today's microkernels has at most 32 accumulator vectors (x86 has 16
 * or 32 vector registers, AArch64 32; spills beyond that). */
#define MAX_ACC 32

static const CgIsaDesc x86_generic = {
    .isa = CG_GEMM_GENERIC, .name = "generic", .x86 = true, .supported = generic_ok,
    .needs = "nothing", .base_cpu = "x86-64", .base_mattr = "",
    .i32_lanes = 4, .lanes_follow_target = true, .vregs = 16, .gemm_max_acc = MAX_ACC,
};

static const CgIsaDesc x86_avx2 = {
    .isa = CG_GEMM_X86_AVX2, .name = "avx2", .x86 = true, .supported = avx2_ok,
    .needs = "avx2", .base_cpu = "x86-64-v3", .base_mattr = "",
    .i32_lanes = 8, .vregs = 16,
    .mac16 = {{8, "llvm.x86.avx2.pmadd.wd", NULL}},
    .gemm_max_acc = MAX_ACC,
};

static const CgIsaDesc x86_avxvnni = {
    .isa = CG_GEMM_X86_AVXVNNI, .name = "avxvnni", .x86 = true, .supported = avxvnni_ok,
    .needs = "avxvnni, or avx512vnni and avx512vl", .base_cpu = "x86-64-v3",
    .base_mattr = "+avxvnni",
    .i32_lanes = 8, .vregs = 16,
    .dot8_us = {{8, "llvm.x86.avx512.vpdpbusd.256", NULL}}, .a8_xor_offset = 128,
    .mac16 = {{8, "llvm.x86.avx512.vpdpwssd.256", NULL}}, .mac16_adds_acc = true,
    .mac16_tune = "+fast-dpwssd", .gemm_max_acc = MAX_ACC,
};

static const CgIsaDesc x86_avx512vnni = {
    .isa = CG_GEMM_X86_AVX512VNNI, .name = "avx512vnni", .x86 = true,
    .supported = avx512vnni_ok, .needs = "avx512vnni and avx512bw", .base_cpu = "x86-64-v4",
    .base_mattr = "+avx512vnni",
    .vector_bits = 512, .i32_lanes = 16, .vregs = 32,
    .dot8_us = {{16, "llvm.x86.avx512.vpdpbusd.512", NULL},
                {8, "llvm.x86.avx512.vpdpbusd.256", has_avx512vl}},
    .a8_xor_offset = 128,
    .mac16 = {{16, "llvm.x86.avx512.vpdpwssd.512", NULL},
              {8, "llvm.x86.avx512.vpdpwssd.256", has_avx512vl}},
    .mac16_adds_acc = true, .mac16_tune = "+fast-dpwssd",
    .lut16_f32 = "llvm.x86.avx512.permvar.sf.512", .gemm_max_acc = MAX_ACC,
};

static const CgIsaDesc a64_generic = {
    .isa = CG_GEMM_GENERIC, .name = "generic", .supported = generic_ok, .needs = "nothing",
    .base_cpu = "generic", .base_mattr = "",
    .i32_lanes = 4, .lanes_follow_target = true, .vregs = 32, .gemm_max_acc = MAX_ACC,
};

static const CgIsaDesc a64_neon = {
    .isa = CG_GEMM_A64_NEON, .name = "neon", .supported = neon_ok, .needs = "neon",
    .base_cpu = "generic", .base_mattr = "",
    .i32_lanes = 4, .vregs = 32, .gemm_max_acc = MAX_ACC,
};

static const CgIsaDesc a64_dotprod = {
    .isa = CG_GEMM_A64_DOTPROD, .name = "dotprod", .supported = dotprod_ok, .needs = "dotprod",
    .base_cpu = "generic", .base_mattr = "+dotprod",
    .i32_lanes = 4, .vregs = 32,
    .dot8_ss = {{4, "llvm.aarch64.neon.sdot", dotprod_ok}}, .a8_xor_offset = -128,
    .gemm_max_acc = MAX_ACC,
};

static const CgIsaDesc a64_i8mm = {
    .isa = CG_GEMM_A64_I8MM, .name = "i8mm", .supported = i8mm_ok, .needs = "i8mm",
    .base_cpu = "generic", .base_mattr = "+dotprod,+i8mm",
    .i32_lanes = 4, .vregs = 32,
    .dot8_ss = {{4, "llvm.aarch64.neon.sdot", dotprod_ok}},
    .gemm_max_acc = MAX_ACC,
};

/* Slowest first per architecture (the order of messages); cg_gemm_isa_best reads backwards. */
static const CgIsaDesc *const x86_table[] = {&x86_generic, &x86_avx2, &x86_avxvnni,
                                             &x86_avx512vnni};
static const CgIsaDesc *const a64_table[] = {&a64_generic, &a64_neon, &a64_dotprod, &a64_i8mm};

const CgIsaDesc *const *
cg_isa_descs(bool x86, size_t *n)
{
    *n = x86 ? sizeof x86_table / sizeof x86_table[0] : sizeof a64_table / sizeof a64_table[0];
    return x86 ? x86_table : a64_table;
}

const CgIsaDesc *
cg_isa_desc(const CgTarget *t, CgGemmIsa isa)
{
    size_t n;
    const CgIsaDesc *const *d = cg_isa_descs(t->x86, &n);
    for (size_t i = 0; i < n; i++)
        if (d[i]->isa == isa)
            return d[i];
    /* a path of the other architecture (asked for its name, or refused as unsupported) */
    d = cg_isa_descs(!t->x86, &n);
    for (size_t i = 0; i < n; i++)
        if (d[i]->isa == isa)
            return d[i];
    return NULL;
}

const CgIsaDesc *
cg_isa_desc_named(bool x86, const char *name)
{
    size_t n;
    const CgIsaDesc *const *d = cg_isa_descs(x86, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i]->name, name) == 0)
            return d[i];
    return NULL;
}

const char *
cg_gemm_isa_name(CgGemmIsa isa)
{
    const CgTarget any = {.x86 = true};
    const CgIsaDesc *d = cg_isa_desc(&any, isa);
    return d ? d->name : "?";
}

bool
cg_gemm_isa_supported(const CgTarget *t, CgGemmIsa isa)
{
    const CgIsaDesc *d = cg_isa_desc(t, isa);
    return d && d->supported(t);
}

CgGemmIsa
cg_gemm_isa_best(const CgTarget *t)
{
    size_t n;
    const CgIsaDesc *const *d = cg_isa_descs(t->x86, &n);
    for (size_t i = n; i-- > 0;)
        if (d[i]->supported(t))
            return d[i]->isa;
    return CG_GEMM_GENERIC;
}

unsigned
cg_isa_i32_lanes(const CgTarget *t, CgGemmIsa isa)
{
    const CgIsaDesc *d = cg_isa_desc(t, isa);
    if (!d || d->lanes_follow_target)
        return t->x86 && t->avx2 ? 8 : 4;
    return d->i32_lanes;
}

/* The intrinsic of the form of ops[] with n lanes that t has, NULL if none. */
static const char *
form(const CgTarget *t, const CgIsaOp *ops, unsigned n)
{
    for (int i = 0; i < CG_ISA_FORMS && ops[i].lanes; i++)
        if (ops[i].lanes == n && (!ops[i].when || ops[i].when(t)))
            return ops[i].intr;
    return NULL;
}

const char *
cg_isa_mac16(const CgTarget *t, CgGemmIsa isa, unsigned n)
{
    const CgIsaDesc *d = cg_isa_desc(t, isa);
    return d ? form(t, d->mac16, n) : NULL;
}

const char *
cg_isa_dot8(const CgTarget *t, CgGemmIsa isa, unsigned n)
{
    const CgIsaDesc *d = cg_isa_desc(t, isa);
    return d ? form(t, d->dot8_us, n) : NULL;
}

const char *
cg_isa_sdot8(const CgTarget *t, CgGemmIsa isa, unsigned n)
{
    const CgIsaDesc *d = cg_isa_desc(t, isa);
    return d ? form(t, d->dot8_ss, n) : NULL;
}
