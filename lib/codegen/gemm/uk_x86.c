/* uk_x86.c: the x86-64 GEMM microkernels: broadcast dot products of kg bytes of A per i32 lane.
 *   avx512vnni: vpdpbusd zmm (u8 x s8, 16 lanes; signed A is fed as a ^ 0x80, +128 folded);
 *   avxvnni:    vpdpbusd ymm ({vex} with avxvnni, EVEX with avx512vnni + avx512vl);
 *   avx2:       vpmaddwd on A and B widened to int16 at pack time (kg = 2): exact, no
 *               saturation, then an add into the accumulator.
 * 16-bit activations (int16 A x int8 B, B sign-extended to int16 at pack time, kg = 2; uint16
 * A is fed with its sign bit flipped, a ^ 0x8000 = a - 32768, the -32768 folded like the +128
 * of vpdpbusd):
 *   avx512vnni_a16: vpdpwssd zmm (a0*b0 + a1*b1 added to each i32 lane, no saturation; with
 *                   |b| <= 128 no pair sum overflows);
 *   avxvnni_a16:    vpdpwssd ymm ({vex} with avxvnni, EVEX with avx512vnni + avx512vl);
 *   avx2_a16:       vpmaddwd + vpaddd.
 * Tiles were measured with bench/gemm_bench.c. */
#include "codegen/gemm/gemm_ir.h"

static LLVMValueRef
dot_vpdpbusd(Gen *g, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, LLVMTypeRef opty)
{
    (void)opty;
    const char *name = cg_isa_dot8(g->p->t, g->p->isa, (unsigned)g->p->vl); /* vpdpbusd */
    LLVMValueRef args[3] = {acc, a, b}; /* (acc, u8/s8 A, s8 B) */
    return intr(g, name, NULL, 0, args, 3);
}

static LLVMValueRef
dot_pmaddwd(Gen *g, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, LLVMTypeRef opty)
{
    (void)opty;
    LLVMValueRef args[2] = {a, b};
    const char *name = cg_isa_mac16(g->p->t, g->p->isa, (unsigned)g->p->vl); /* vpmaddwd */
    return LLVMBuildAdd(g->b, acc, intr(g, name, NULL, 0, args, 2), "");
}

static LLVMValueRef
dot_vpdpwssd(Gen *g, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, LLVMTypeRef opty)
{
    (void)opty;
    const char *name = cg_isa_mac16(g->p->t, g->p->isa, (unsigned)g->p->vl); /* vpdpwssd */
    LLVMValueRef args[3] = {acc, a, b}; /* (acc, s16 A pairs, s16 B pairs) */
    return intr(g, name, NULL, 0, args, 3);
}

static void
vpdpwssd_step(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    gemm_step_bcast(g, pn, rows, rowp, gi, dot_vpdpwssd);
}

static void
vpdpbusd_step(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    gemm_step_bcast(g, pn, rows, rowp, gi, dot_vpdpbusd);
}

static void
pmaddwd_step(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi)
{
    gemm_step_bcast(g, pn, rows, rowp, gi, dot_pmaddwd);
}

static void
avx512vnni_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    (void)t;
    p->vl = 16, p->kg = 4, p->belem = 1, p->mr = 8, p->nv = 3, p->kunroll = 1;
    /* N a multiple of 32 but not of 48 (64, 128, 256, 512 channels): 12 x 2 tiles cover N
     * with full panels, where 8 x 3 would add a narrow tail panel (slower, and a second
     * copy of the microkernel to compile) */
    if (s->n % 32 == 0 && s->n % 48 != 0)
        p->mr = 12, p->nv = 2;
    p->apack = APACK_BYTES;
    p->a_xor = s->a_signed ? 0x80 : 0;
}

static void
avxvnni_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    (void)t;
    /* 16 ymm registers: 12 accumulators + 2 B + 1 A */
    p->vl = 8, p->kg = 4, p->belem = 1, p->mr = 6, p->nv = 2, p->kunroll = 1;
    p->apack = APACK_BYTES;
    p->a_xor = s->a_signed ? 0x80 : 0;
}

static void
avx2_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    (void)t, (void)s;
    p->vl = 8, p->kg = 2, p->belem = 2, p->mr = 6, p->nv = 2, p->kunroll = 1;
    p->apack = APACK_I16;
}

/* 16-bit activations: the 8-bit rows' tiles (the same accumulator and B register budget; a
 * broadcast of A is one int16 pair instead of four bytes), A read in place when signed. */
static void
avx512vnni_a16_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    avx512vnni_shape(p, t, s);
    p->kg = 2, p->belem = 2;
    p->apack = APACK_I16;
    p->a_xor = s->a_signed ? 0 : 0x80; /* the sign bit of each int16 */
}

static void
avxvnni_a16_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    avxvnni_shape(p, t, s);
    p->kg = 2, p->belem = 2;
    p->apack = APACK_I16;
    p->a_xor = s->a_signed ? 0 : 0x80;
}

static void
avx2_a16_shape(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s)
{
    avx2_shape(p, t, s);
    p->a_xor = s->a_signed ? 0 : 0x80;
}

const GemmUk gemm_uk_avx512vnni = {
    .isa = CG_GEMM_X86_AVX512VNNI, .name = "avx512vnni",
    .shape = avx512vnni_shape, .a_in_place = true, .b_prefetch = true, .step = vpdpbusd_step,
    .f32_vl = 16, .f32_mr = 6, .f32_nv = 4, /* vfmadd231ps zmm, {1to16} broadcast of A */
};

const GemmUk gemm_uk_avxvnni = {
    .isa = CG_GEMM_X86_AVXVNNI, .name = "avxvnni",
    .shape = avxvnni_shape, .a_in_place = true, .b_prefetch = true,
    .step = vpdpbusd_step,
    .f32_vl = 8, .f32_mr = 6, .f32_nv = 2, /* vfmadd231ps ymm: 12 accumulators of 16 */
};

const GemmUk gemm_uk_avx2 = {
    .isa = CG_GEMM_X86_AVX2, .name = "avx2",
    .shape = avx2_shape, .step = pmaddwd_step,
    .f32_vl = 8, .f32_mr = 6, .f32_nv = 2,
};

const GemmUk gemm_uk_avx512vnni_a16 = {
    .isa = CG_GEMM_X86_AVX512VNNI, .name = "avx512vnni-a16",
    .shape = avx512vnni_a16_shape, .xor_off16 = -32768, .a_in_place = true, .b_prefetch = true,
    .step = vpdpwssd_step,
};

const GemmUk gemm_uk_avxvnni_a16 = {
    .isa = CG_GEMM_X86_AVXVNNI, .name = "avxvnni-a16",
    .shape = avxvnni_a16_shape, .xor_off16 = -32768, .a_in_place = true, .b_prefetch = true,
    .step = vpdpwssd_step,
};

const GemmUk gemm_uk_avx2_a16 = {
    .isa = CG_GEMM_X86_AVX2, .name = "avx2-a16",
    .shape = avx2_a16_shape, .xor_off16 = -32768, .a_in_place = true, .step = pmaddwd_step,
};
