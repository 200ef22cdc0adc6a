/* uk_generic.c: the GEMM microkernel in plain LLVM IR (no intrinsics), for any target, and the
 * AArch64 NEON path, which is the same IR with tiles tuned for 128-bit smull/smlal.
 *
 * One k group is one k (kg = 1, B packed as the vl channels of one k): the products of the
 * broadcast A byte and the B bytes are formed in i16 lanes (exact: |a*b| <= 255*128 fits
 * int16) and widened into the i32 accumulators; LLVM selects the widening multiplies.
 *
 * 16-bit activations (generic_a16, neon_a16): one k per group as well, the products in i32
 * lanes (|a * b| <= 65535 * 128 needs 24 bits). generic_a16 reads A in place (int16 sign-,
 * uint16 zero-extended) against int8 B; neon_a16 packs B as int16 and feeds uint16 A with its
 * sign bit flipped, so that every product is int16 x int16 -> int32 and LLVM selects
 * smlal / smlal2 (the AArch64 dot products take 8-bit operands only). */
#include "codegen/gemm/gemm_ir.h"

/* One k group for the whole tile: acc slots updated in place. */
static void
generic_step(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    const GemmPlan *p = g->p;
    const int vl = p->vl, nv = pn->nv;
    LLVMValueRef bgp = gep8(g, pn->bbase, mul(g, gi, pn->nrp * p->kg * p->belem));
    LLVMValueRef bv[16];
    LLVMTypeRef vb = LLVMVectorType(g->i8, (unsigned)vl);
    LLVMTypeRef vw = LLVMVectorType(g->i16, (unsigned)vl);
    for (int v = 0; v < nv; v++)
        bv[v] = LLVMBuildSExt(g->b, load(g, vb, gep8(g, bgp, ci64(g, (int64_t)v * vl)), 1),
                              vw, "");
    for (int r = 0; r < rows; r++) {
        LLVMValueRef a = load(g, g->i8, gep8(g, rowp[r], gi), 1);
        a = g->s->a_signed ? LLVMBuildSExt(g->b, a, g->i16, "") : LLVMBuildZExt(g->b, a, g->i16, "");
        LLVMValueRef as = splat(g, a, (unsigned)vl);
        for (int v = 0; v < nv; v++) {
            LLVMValueRef prod = LLVMBuildNSWMul(g->b, as, bv[v], "");
            LLVMValueRef slot = g->acc[r * nv + v];
            LLVMValueRef sum = LLVMBuildAdd(g->b, load(g, g->accty, slot, 4),
                                            LLVMBuildSExt(g->b, prod, g->accty, ""), "");
            store(g, sum, slot, 4);
        }
    }
}

/* 16-bit activations: one k group (one k) for the whole tile, products in i32 lanes. */
static void
widen16_step(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    const GemmPlan *p = g->p;
    const int vl = p->vl, nv = pn->nv;
    LLVMValueRef bgp = gep8(g, pn->bbase, mul(g, gi, pn->nrp * p->kg * p->belem));
    LLVMValueRef bv[16];
    LLVMTypeRef vb = LLVMVectorType(p->belem == 2 ? g->i16 : g->i8, (unsigned)vl);
    for (int v = 0; v < nv; v++)
        bv[v] = LLVMBuildSExt(g->b, load(g, vb, gep8(g, bgp, ci64(g, (int64_t)v * vl * p->belem)),
                                         (unsigned)p->belem),
                              g->accty, "");
    bool sx = g->s->a_signed || p->a_xor; /* a flipped uint16 is an int16 */
    for (int r = 0; r < rows; r++) {
        LLVMValueRef a = load(g, g->i16, gep8(g, rowp[r], mul(g, gi, 2)), 2);
        a = sx ? LLVMBuildSExt(g->b, a, g->i32, "") : LLVMBuildZExt(g->b, a, g->i32, "");
        LLVMValueRef as = splat(g, a, (unsigned)vl);
        for (int v = 0; v < nv; v++) {
            LLVMValueRef slot = g->acc[r * nv + v];
            LLVMValueRef sum = LLVMBuildAdd(g->b, load(g, g->accty, slot, 4),
                                            LLVMBuildNSWMul(g->b, as, bv[v], ""), "");
            store(g, sum, slot, 4);
        }
    }
}

static void
generic_a16_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    (void)t, (void)s;
    p->vl = 8, p->kg = 1, p->belem = 1, p->mr = 4, p->nv = 2, p->kunroll = 1;
    p->apack = APACK_NONE;
}

/* 32 q registers: 6 x 2 accumulators of 8 lanes (24), 2 B, the A broadcasts */
static void
neon_a16_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    (void)t;
    p->vl = 8, p->kg = 1, p->belem = 2, p->mr = 6, p->nv = 2, p->kunroll = 1;
    p->apack = APACK_I16;
    p->a_xor = s->a_signed ? 0 : 0x80; /* the sign bit of each int16 */
}

static void
generic_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    (void)t, (void)s;
    p->vl = 8, p->kg = 1, p->belem = 1, p->mr = 4, p->nv = 2, p->kunroll = 1;
    p->apack = APACK_NONE;
}

const GemmUk gemm_uk_generic = {
    .isa = CG_GEMM_GENERIC, .name = "generic",
    .shape = generic_shape, .step = generic_step,
    /* 128-bit vectors (SSE2 / NEON): 12 accumulators fit x86's 16 registers */
    .f32_vl = 4, .f32_mr = 6, .f32_nv = 2,
};

const GemmUk gemm_uk_neon = {
    .isa = CG_GEMM_A64_NEON, .name = "neon",
    .shape = generic_shape, .step = generic_step,
    .f32_vl = 4, .f32_mr = 6, .f32_nv = 4, /* fmla v.4s: 24 accumulators of 32 registers */
};

const GemmUk gemm_uk_generic_a16 = {
    .isa = CG_GEMM_GENERIC, .name = "generic-a16",
    .shape = generic_a16_shape, .step = widen16_step,
};

const GemmUk gemm_uk_neon_a16 = {
    .isa = CG_GEMM_A64_NEON, .name = "neon-a16",
    .shape = neon_a16_shape, .xor_off16 = -32768, .a_in_place = true, .step = widen16_step,
};
