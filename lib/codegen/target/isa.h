/* isa.h: the kernel paths (CgGemmIsa) and one record per path (CgIsaDesc) holding every fact
 * an emitter, the option parser or the GEMM planner asks of an instruction set: its --isa name,
 * the features it needs and the baseline CPU that has them, its vector width and register
 * count, its 8-bit dot products and 16-bit multiply-adds (LLVM intrinsic names), the byte
 * offset its dot product needs on A, and the GEMM tile bounds. The table is isa.c; the
 * question functions below read it, so no emitter switches on the path to learn a width or an
 * intrinsic. The GEMM's per-path microkernels (the code that uses these facts) are the GemmUk
 * rows of gemm/ (gemm_impl.h). docs/architecture.md, "Adding an ISA", says what a new path
 * needs. */
#ifndef QDQC_CODEGEN_TARGET_ISA_H
#define QDQC_CODEGEN_TARGET_ISA_H

#include <stdint.h>

#include "codegen/target/target.h"

/* The kernel paths (one per instruction family). Which one a target takes is
 * cg_gemm_isa_best's choice unless --isa names one. */
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

/* One form of an instruction: the LLVM intrinsic producing `lanes` int32 lanes, available on
 * the path when `when` (NULL: always) holds for the target. */
typedef struct CgIsaOp {
    unsigned lanes; /* 0: no form (end of the list) */
    const char *intr;
    bool (*when)(const CgTarget *t);
} CgIsaOp;

#define CG_ISA_FORMS 2 /* forms per instruction (one per vector width) */

typedef struct CgIsaDesc {
    CgGemmIsa isa;
    const char *name;                     /* --isa spelling, used in messages */
    bool x86;                             /* an x86-64 path, else AArch64 (generic has both) */
    bool (*supported)(const CgTarget *t); /* t has the features the instructions need */
    const char *needs;                    /* the same, said in a message */
    const char *base_cpu, *base_mattr;    /* --isa without --mcpu: the oldest CPU with it */
    /* Vectors */
    unsigned vector_bits; /* min-legal-vector-width of the path's wide kernels, 0 = default */
    unsigned i32_lanes;   /* int32 lanes of its vectors (per vscale unit when scalable) */
    bool lanes_follow_target; /* the element-wise emitters use 8 lanes when t has AVX2 */
    bool scalable;        /* lanes are i32_lanes x vscale, known at run time (SVE-like) */
    unsigned vregs;       /* architectural vector registers (accumulator budgets) */
    /* acc + sum of 4 byte products into each int32 lane: unsigned A x signed B (vpdpbusd),
     * and signed x signed (sdot .4s, an overloaded intrinsic: <4 x i32>, <16 x i8>) */
    CgIsaOp dot8_us[CG_ISA_FORMS], dot8_ss[CG_ISA_FORMS];
    /* What a ^ 0x80 adds to an 8-bit A that the GEMM's dot product takes with the other
     * signedness (+128: signed A into vpdpbusd; -128: unsigned A into sdot); 0 = never flipped */
    int32_t a8_xor_offset;
    /* int16 pairs multiplied and added into int32 lanes: acc + sum (vpdpwssd, mac16_adds_acc)
     * or the sum alone, which the caller adds (vpmaddwd) */
    CgIsaOp mac16[CG_ISA_FORMS];
    bool mac16_adds_acc;
    const char *mac16_tune; /* target feature keeping mac16 one instruction, NULL = none */
    /* f32 lanes looked up in a 16-float vector by the low 4 bits of each i32 index of an
     * i32_lanes == 16 vector (vpermps zmm), NULL = none */
    const char *lut16_f32;
    /* GEMM register tiles */
    unsigned gemm_max_acc; /* accumulator vectors a register tile may use */
    bool tile_2d;          /* accumulators are 2-D tile registers (AMX-like) */
} CgIsaDesc;

/* The record of isa on t's architecture (never NULL for isa < CG_GEMM_ISA_COUNT; NULL else). */
const CgIsaDesc *
cg_isa_desc(const CgTarget *t, CgGemmIsa isa);

/* The records of one architecture, slowest first (for messages and cg_gemm_isa_best):
 * *n receives their count. */
const CgIsaDesc *const *
cg_isa_descs(bool x86, size_t *n);

/* The record of the path spelled `name` on x86-64 (x86) or AArch64, NULL if none. */
const CgIsaDesc *
cg_isa_desc_named(bool x86, const char *name);

/* The path's --isa spelling ("?" for a value outside the enum). */
const char *
cg_gemm_isa_name(CgGemmIsa isa);

/* Whether t can run isa (its intrinsics exist for t's features). */
bool
cg_gemm_isa_supported(const CgTarget *t, CgGemmIsa isa);

/* The fastest path t supports: AVX512-VNNI > AVX-VNNI > AVX2 > generic on x86,
 * I8MM > DOTPROD > NEON > generic on AArch64. */
CgGemmIsa
cg_gemm_isa_best(const CgTarget *t);

/* i32 lanes of the vectors kernels use on (t, isa): the record's, or, for a path whose lanes
 * follow the target (generic), 8 on x86 with AVX2, else 4. 16 on the avx512vnni path (the
 * only one that makes 512-bit vectors legal, vector_bits). */
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
 * with dotprod), NULL when the path has none. */
const char *
cg_isa_sdot8(const CgTarget *t, CgGemmIsa isa, unsigned n);

#endif
