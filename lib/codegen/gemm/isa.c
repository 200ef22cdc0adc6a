/* isa.c: the table of GEMM microkernels (GemmUk rows, one per CgGemmIsa, and the 16-bit rows)
 * and the row a path runs a spec with. A path's name, support and choice are its record's
 * (target/isa.c). */
#include "codegen/gemm/gemm_impl.h"

#include <stddef.h>

static const GemmUk *const table[] = {
    &gemm_uk_avx512vnni, &gemm_uk_avxvnni, &gemm_uk_avx2,    /* x86-64 */
    &gemm_uk_i8mm,       &gemm_uk_dotprod, &gemm_uk_neon,    /* AArch64 */
    &gemm_uk_generic,
};

const GemmUk *
gemm_uk(CgGemmIsa isa)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->isa == isa)
            return table[i];
    return NULL;
}

/* 16-bit activations (CgGemmSpec.a_bits == 16): the row each path runs them with. The
 * AArch64 dot products take 8-bit operands only, so dotprod and i8mm run the NEON smlal row. */
static const struct {
    CgGemmIsa isa;
    const GemmUk *uk;
} table_a16[] = {
    {CG_GEMM_X86_AVX512VNNI, &gemm_uk_avx512vnni_a16}, /* vpdpwssd zmm */
    {CG_GEMM_X86_AVXVNNI, &gemm_uk_avxvnni_a16},       /* {vex} vpdpwssd ymm */
    {CG_GEMM_X86_AVX2, &gemm_uk_avx2_a16},             /* vpmaddwd */
    {CG_GEMM_A64_I8MM, &gemm_uk_neon_a16},             /* smlal / smlal2 */
    {CG_GEMM_A64_DOTPROD, &gemm_uk_neon_a16},
    {CG_GEMM_A64_NEON, &gemm_uk_neon_a16},
    {CG_GEMM_GENERIC, &gemm_uk_generic_a16},
};

const GemmUk *
gemm_uk_for(CgGemmIsa isa, const CgGemmSpec *s)
{
    if (s->a_bits != 16)
        return gemm_uk(isa);
    for (size_t i = 0; i < sizeof table_a16 / sizeof table_a16[0]; i++)
        if (table_a16[i].isa == isa)
            return table_a16[i].uk;
    return NULL;
}
