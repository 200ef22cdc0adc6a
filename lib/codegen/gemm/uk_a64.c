/* uk_a64.c: the AArch64 GEMM microkernels with dot-product instructions.
 *   dotprod: sdot (s8 x s8; unsigned A is fed as a ^ 0x80, -128 folded), or usdot (u8 x s8)
 *            when the target also has i8mm and A is unsigned; by-element forms four groups at
 *            a time (dotprod_step4), broadcast ones for the remainder;
 *   i8mm:    smmla / usmmla on 2x8 x 8x2 blocks: A packed in row pairs, B in channel pairs,
 *            each accumulator a 2x2 block of (rows, channels) (mmla_rowvecs undoes it).
 * (The NEON path without dot products is uk_generic.c.) */
#include "codegen/gemm/gemm_ir.h"

static LLVMValueRef
dot_sdot(Gen *g, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, LLVMTypeRef opty)
{
    const char *name = g->p->use_usdot ? "llvm.aarch64.neon.usdot" : "llvm.aarch64.neon.sdot";
    LLVMTypeRef ov[2] = {g->accty, opty};
    LLVMValueRef args[3] = {acc, a, b}; /* (acc, u8/s8 A, s8 B) */
    return intr(g, name, ov, 2, args, 3);
}

static void
dotprod_step(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    gemm_step_bcast(g, pn, rows, rowp, gi, dot_sdot);
}

/* dotprod: four k groups [gi, gi+4) at once. A is loaded as 16 bytes per row (its four groups)
 * and each dot product takes its group's 4 bytes by lane index (`sdot`/`sudot` by element), so
 * A needs no broadcast: `ld1r` costs a vector-pipe uop per row and group besides its load
 * (llvm-mca -mcpu=neoverse-v1: 44 instead of 64 MAC/cycle; bench/mca_kernels.py). The B operand
 * comes first for sdot, the duplicated A first for usdot (u8 A): those are the operand orders
 * LLVM selects the by-element forms from. Reads A[4 gi, 4 gi + 16) of each row: inside the
 * packed row while gi + 4 <= groups. */
static void
dotprod_step4(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    const GemmPlan *p = g->p;
    const int nv = pn->nv;
    LLVMTypeRef v16 = LLVMVectorType(g->i8, 16), v4 = LLVMVectorType(g->i32, 4);
    LLVMValueRef bv[4][8];
    for (int j = 0; j < 4; j++) {
        LLVMValueRef bgp = gep8(g, pn->bbase, mul(g, add(g, gi, ci64(g, j)), pn->nrp * p->kg));
        for (int v = 0; v < nv; v++)
            bv[j][v] = load(g, v16, gep8(g, bgp, ci64(g, (int64_t)v * 16)), 16);
    }
    const char *name = p->use_usdot ? "llvm.aarch64.neon.usdot" : "llvm.aarch64.neon.sdot";
    LLVMTypeRef ov[2] = {g->accty, v16};
    for (int r = 0; r < rows; r++) {
        LLVMValueRef a = load(g, v4, gep8(g, rowp[r], mul(g, gi, 4)), 4);
        for (int j = 0; j < 4; j++) {
            LLVMValueRef lane[4] = {ci32(g, j), ci32(g, j), ci32(g, j), ci32(g, j)};
            LLVMValueRef dup =
                LLVMBuildShuffleVector(g->b, a, LLVMGetPoison(v4), LLVMConstVector(lane, 4), "");
            LLVMValueRef aj = LLVMBuildBitCast(g->b, dup, v16, "");
            for (int v = 0; v < nv; v++) {
                LLVMValueRef slot = g->acc[r * nv + v];
                LLVMValueRef accv = load(g, g->accty, slot, 4);
                LLVMValueRef args[3] = {accv, p->use_usdot ? aj : bv[j][v],
                                        p->use_usdot ? bv[j][v] : aj};
                store(g, intr(g, name, ov, 2, args, 3), slot, 4);
            }
        }
    }
}

/* One k group (8 k) of the tile: each row pair's 16 bytes of A against each channel pair's
 * 16 bytes of B. */
static void
mmla_step(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    const GemmPlan *p = g->p;
    const int nv = pn->nv;
    LLVMValueRef bgp = gep8(g, pn->bbase, mul(g, gi, pn->nrp * p->kg * p->belem));
    LLVMValueRef bv[16], av[16];
    LLVMTypeRef v16 = LLVMVectorType(g->i8, 16);
    int npair = 2 * nv, nq = (rows + 1) / 2;
    for (int j = 0; j < npair; j++)
        bv[j] = load(g, v16, gep8(g, bgp, ci64(g, 16 * j)), 16);
    for (int q = 0; q < nq; q++)
        av[q] = load(g, v16, gep8(g, rowp[q], mul(g, gi, 16)), 16);
    const char *name = g->s->a_signed ? "llvm.aarch64.neon.smmla" : "llvm.aarch64.neon.usmmla";
    LLVMTypeRef ov[2] = {g->accty, v16};
    for (int q = 0; q < nq; q++)
        for (int j = 0; j < npair; j++) {
            LLVMValueRef slot = g->acc[q * npair + j];
            LLVMValueRef args[3] = {load(g, g->accty, slot, 16), av[q], bv[j]};
            store(g, intr(g, name, ov, 2, args, 3), slot, 16);
        }
}

/* Row vectors (vl lanes of consecutive channels) of the finished tile. */
static void
mmla_rowvecs(Gen *g, int rows, int nv, LLVMValueRef *out /* [rows * nv] */)
{
    /* mmla accumulator (q, pair j) = [r0c0 r0c1 r1c0 r1c1] for rows 2q, 2q+1, channels 2j, 2j+1 */
    int npair = 2 * nv;
    for (int q = 0; q < (rows + 1) / 2; q++)
        for (int v = 0; v < nv; v++) {
            LLVMValueRef x = load(g, g->accty, g->acc[q * npair + 2 * v], 16);
            LLVMValueRef y = load(g, g->accty, g->acc[q * npair + 2 * v + 1], 16);
            for (int h = 0; h < 2 && 2 * q + h < rows; h++) {
                LLVMValueRef idx[4] = {ci32(g, 2 * h), ci32(g, 2 * h + 1), ci32(g, 4 + 2 * h),
                                       ci32(g, 5 + 2 * h)};
                out[(2 * q + h) * nv + v] =
                    LLVMBuildShuffleVector(g->b, x, y, LLVMConstVector(idx, 4), "");
            }
        }
}

static void
dotprod_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    /* by-element sdot, 4 groups a step: 16 acc + 8 B + A of 32 q */
    p->vl = 4, p->kg = 4, p->belem = 1, p->mr = 8, p->nv = 2, p->kunroll = 1;
    p->apack = APACK_BYTES;
    p->use_usdot = !s->a_signed && t->i8mm;
    p->a_xor = (!s->a_signed && !p->use_usdot) ? 0x80 : 0;
}

static void
i8mm_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    (void)t, (void)s;
    p->vl = 4, p->kg = 8, p->belem = 1, p->mr = 8, p->nv = 2, p->kunroll = 1;
    p->apack = APACK_PAIRS;
}

const GemmUk gemm_uk_dotprod = {
    .isa = CG_GEMM_A64_DOTPROD, .name = "dotprod",
    .shape = dotprod_shape, .step = dotprod_step, .step_n = dotprod_step4,
    .step_groups = 4,
    .f32_vl = 4, .f32_mr = 6, .f32_nv = 4, /* the NEON row's f32 tile */
};

const GemmUk gemm_uk_i8mm = {
    .isa = CG_GEMM_A64_I8MM, .name = "i8mm",
    .shape = i8mm_shape, .step = mmla_step, .rowvecs = mmla_rowvecs,
    .f32_vl = 4, .f32_mr = 6, .f32_nv = 4,
};
