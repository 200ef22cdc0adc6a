/* isa.c: the table of GEMM microkernels (GemmUk rows, one per CgGemmIsa), fastest first, and the
 * questions answered from it: a path's name, whether a target can run it, the best one. */
#include "codegen/gemm/gemm_impl.h"

#include <stddef.h>

/* Fastest first: cg_gemm_isa_best takes the first row the target supports. */
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

const char *
cg_gemm_isa_name(CgGemmIsa isa)
{
    const GemmUk *u = gemm_uk(isa);
    return u ? u->name : "?";
}

bool
cg_gemm_isa_supported(const CgTarget *t, CgGemmIsa isa)
{
    const GemmUk *u = gemm_uk(isa);
    return u && u->supported(t);
}

CgGemmIsa
cg_gemm_isa_best(const CgTarget *t)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->supported(t))
            return table[i]->isa;
    return CG_GEMM_GENERIC;
}
