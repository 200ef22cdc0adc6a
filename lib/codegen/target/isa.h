/* isa.h: the vector questions kernel emitters outside the GEMM ask of (target, kernel path):
 * how many i32 lanes a vector has, and which instruction does an int16 multiply-add into int32
 * lanes. One answer for every emitter (isa.c), so the depthwise and element-wise kernels cannot
 * disagree about the vector width of a path. The GEMM's own per-ISA facts are its microkernel
 * table (gemm/isa.c). */
#ifndef QDQC_CODEGEN_TARGET_ISA_H
#define QDQC_CODEGEN_TARGET_ISA_H

#include "codegen/target/target.h"

/* The kernel paths (one per instruction family the GEMM table and the other emitters know).
 * Which one a target takes is gemm/isa.c's choice (cg_gemm_isa_best, cg_gemm_isa_supported). */
typedef enum CgGemmIsa {
    CG_GEMM_GENERIC = 0,    /* plain LLVM IR (i16 products widened to i32), any target */
    CG_GEMM_X86_AVX2,       /* vpmaddwd on sign/zero-extended i16: exact, no saturation */
    CG_GEMM_X86_AVXVNNI,    /* vpdpbusd ymm ({vex} with avxvnni, EVEX with avx512vnni+vl) */
    CG_GEMM_X86_AVX512VNNI, /* vpdpbusd zmm */
    CG_GEMM_A64_NEON,       /* same IR as generic, tuned for 128-bit smull/smlal */
    CG_GEMM_A64_DOTPROD,    /* sdot (usdot when the target also has i8mm and A is unsigned) */
    CG_GEMM_A64_I8MM,       /* smmla / usmmla on 2x8 x 8x2 blocks */
    CG_GEMM_ISA_COUNT
} CgGemmIsa;

/* i32 lanes of the vectors kernels use on (t, isa): 16 on the avx512vnni path (the only one
 * that makes 512-bit vectors legal, cg_function_set_target), 8 on x86 with AVX2, else 4
 * (SSE2, NEON). */
unsigned
cg_isa_i32_lanes(const CgTarget *t, CgGemmIsa isa);

/* The intrinsic computing acc + sum of pairs of int16 products into n int32 lanes on (t, isa)
 * (vpdpwssd zmm/ymm, or vpmaddwd whose result the caller adds), NULL when plain IR is the way
 * (no such instruction for n lanes). */
const char *
cg_isa_mac16(const CgTarget *t, CgGemmIsa isa, unsigned n);

/* The intrinsic computing acc + sum of 4 products of unsigned by signed bytes into n int32
 * lanes on (t, isa) (vpdpbusd zmm/ymm; {vex} ymm with avxvnni), NULL when the path has none. */
const char *
cg_isa_dot8(const CgTarget *t, CgGemmIsa isa, unsigned n);

/* The overloaded intrinsic computing acc + sum of 4 products of signed by signed bytes into n
 * int32 lanes on (t, isa) (AArch64 sdot .4s: n == 4 on the dotprod and i8mm paths of a target
 * with dotprod; called with the types <4 x i32>, <16 x i8>), NULL when the path has none. */
const char *
cg_isa_sdot8(const CgTarget *t, CgGemmIsa isa, unsigned n);

/* Whether cg_isa_mac16 can answer vpdpwssd on isa: such functions then need the
 * "+fast-dpwssd" tuning feature (else LLVM splits it into vpmaddwd + vpaddd). */
bool
cg_isa_has_dpwssd(CgGemmIsa isa);

#endif
