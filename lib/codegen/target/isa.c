/* isa.c: vector width and int16 multiply-add of a (target, kernel path) (isa.h). */
#include "codegen/target/isa.h"

#include <stddef.h>

unsigned
cg_isa_i32_lanes(const CgTarget *t, CgGemmIsa isa)
{
    return isa == CG_GEMM_X86_AVX512VNNI ? 16 : t->x86 && t->avx2 ? 8 : 4;
}

const char *
cg_isa_mac16(const CgTarget *t, CgGemmIsa isa, unsigned n)
{
    if (n == 16 && isa == CG_GEMM_X86_AVX512VNNI)
        return "llvm.x86.avx512.vpdpwssd.512";
    if (n == 8 && (isa == CG_GEMM_X86_AVXVNNI || (isa == CG_GEMM_X86_AVX512VNNI && t->avx512vl)))
        return "llvm.x86.avx512.vpdpwssd.256";
    if (n == 8 && isa == CG_GEMM_X86_AVX2)
        return "llvm.x86.avx2.pmadd.wd";
    return NULL;
}

const char *
cg_isa_dot8(const CgTarget *t, CgGemmIsa isa, unsigned n)
{
    if (n == 16 && isa == CG_GEMM_X86_AVX512VNNI)
        return "llvm.x86.avx512.vpdpbusd.512";
    if (n == 8 && (isa == CG_GEMM_X86_AVXVNNI || (isa == CG_GEMM_X86_AVX512VNNI && t->avx512vl)))
        return "llvm.x86.avx512.vpdpbusd.256";
    return NULL;
}

const char *
cg_isa_sdot8(const CgTarget *t, CgGemmIsa isa, unsigned n)
{
    if (n == 4 && t->aarch64 && t->dotprod && (isa == CG_GEMM_A64_DOTPROD || isa == CG_GEMM_A64_I8MM))
        return "llvm.aarch64.neon.sdot";
    return NULL;
}

bool
cg_isa_has_dpwssd(CgGemmIsa isa)
{
    return isa == CG_GEMM_X86_AVX512VNNI || isa == CG_GEMM_X86_AVXVNNI;
}
