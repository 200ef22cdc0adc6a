/* gemm_impl.h: internals shared by plan.c (host-side planning, weight packing,
 * zero-point folding) and emit.c (LLVM IR emission). Not for other users.
 *
 * Packed B (constant global, 64-byte aligned). Channels are grouped into panels of
 * nr = nv * vl channels (the last panel, if N % nr != 0, has nr_tail = nv_tail * vl channels, the
 * missing ones zero). Within a panel the K axis is split into groups of kg consecutive k (K padded
 * with zeros to kp, a multiple of kg), and the element for (group g, channel c of the panel,
 * j in [0, kg)) sits at
 *     panel_base + ((g * nr_panel + c) * kg + j) * belem   bytes,
 *     value B[n = panel_first + c][k = g * kg + j]           (0 past N or K),
 * panel_base = p * nr * kp * belem for full panel p, npanels_full * nr * kp * belem for the tail.
 * One accumulator vector (vl channels) then reads vl * kg contiguous elements per group:
 *   vpdpbusd / sdot: kg = 4, lane i <- 4 consecutive k of channel i;
 *   AVX2 pmaddwd:    kg = 2, int16 elements (belem 2, sign-extended at compile time);
 *   generic / NEON:  kg = 1, the vl channels of one k;
 *   smmla/usmmla:    kg = 8, channel pairs (2c, 2c+1) -> the 2x8 right operand of one mmla.
 *
 * Packed A (stack, per block of up to mc rows, built at run time from the rows the call owns):
 *   APACK_BYTES: row i at i * a_row_bytes, bytes a ^ a_xor, zero padded to kp;
 *   APACK_I16:   row i at i * a_row_bytes, int16 (8-bit A sign- or zero-extended; 16-bit A
 *                copied, uint16 with its sign bit flipped when a_xor is set), zero padded to kp;
 *   APACK_PAIRS: row pair q at q * a_row_bytes, group g at +16 g: 8 bytes of row 2q then 8 of
 *                row 2q+1 (zero for a missing odd row), each ^ a_xor;
 *   APACK_NONE:  A read in place (generic/NEON, kg = 1: no tail problem; and the VNNI paths
 *                when A is unsigned (no xor) and K is a multiple of kg = 4).
 *
 * K blocking: when a panel's packed B is larger than ~64 KiB the K groups are cut into nkc
 * chunks of kcg groups; for each panel and chunk all row tiles of the block run, so the chunk
 * stays in L1 while A streams from L2. Partial sums live in a stack scratch of (mc + mr) rows
 * x nr int32 (raw mmla accumulators for i8mm: per row pair, 2 nr int32); the last chunk applies
 * the epilogue.
 *
 * 16-bit activations (CgGemmSpec.a_bits == 16, the rows of gemm_uk_a16): A elements are 2 bytes
 * (a_es), the dot products take int16 pairs (vpdpwssd, vpmaddwd: kg = 2, B as int16) or
 * widen one k at a time (generic, NEON smlal: kg = 1). When the int32 accumulator could
 * overflow (`wide`), each tile runs K in chunks of wgroups groups, whose int32 sums cannot
 * overflow (max|a'| * sum over the chunk of |b| < 2^31 for every channel, a' the value the dot
 * instruction sees), and adds each chunk into int64 accumulators; the zero-point terms (cb64,
 * int64 row sums) and the epilogue are then int64. A wide GEMM has no K cache chunks (nkc 1).
 */
#ifndef QDQC_CODEGEN_KERN_GEMM_IMPL_H
#define QDQC_CODEGEN_KERN_GEMM_IMPL_H

#include "codegen/gemm/gemm.h"

typedef enum GemmApack { APACK_NONE, APACK_BYTES, APACK_I16, APACK_PAIRS } GemmApack;

typedef struct GemmPlan GemmPlan;
typedef struct Gen Gen;     /* IR-building state (gemm_ir.h) */
typedef struct Panel Panel; /* one panel of packed B (gemm_ir.h) */
typedef struct LLVMOpaqueType *LLVMTypeRef;

/* One microkernel family member (a CgGemmIsa): how the GEMM runs on a path. The facts of the
 * path itself (support, width, intrinsics, the offset of a flipped A byte, accumulator bound)
 * are its CgIsaDesc (target/isa.h, GemmPlan.desc). The driver (emit.c, pack.c) and the plan
 * (plan.c) never name an instruction set; each ISA family has one file (uk_generic.c,
 * uk_x86.c, uk_a64.c) defining its rows, and isa.c lists them. Adding an ISA = a CgGemmIsa
 * value and its record (target/isa.c), its GemmUk in a family file and one row in isa.c. */
typedef struct GemmUk {
    CgGemmIsa isa;
    const char *name;              /* the row's name in messages ("avx2", "avx2-a16") */
    /* vl, kg, belem, default tiles (mr, nv, kunroll), apack, a_xor, use_usdot for (t, s) */
    void (*shape)(GemmPlan *p, const CgTarget *t, const CgGemmSpec *s);
    int32_t xor_off16;             /* 16-bit rows: what a ^ 0x8000 adds to A (8-bit rows: the
                                    * record's a8_xor_offset) */
    bool a_in_place;               /* unsigned A, whole k groups per row: read A unpacked */
    bool b_prefetch;               /* software prefetch of B when a panel chunk leaves L1 */
    /* One k group gi for a tile of `rows` rows (row pointers rowp): the accumulators
     * g->acc[] updated in place. */
    void (*step)(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi);
    /* Optional: step_groups consecutive groups at once (the K loop unrolls by a multiple of it;
     * step covers the remainder). */
    void (*step_n)(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi);
    int step_groups;
    /* Optional: the tile's row vectors from accumulators that are not row vectors (mmla's
     * 2x2 blocks); NULL = accumulator slot r * nv + v is row r's vector v. */
    void (*rowvecs)(Gen *g, int rows, int nv, LLVMValueRef *out);
    /* The f32 GEMM of this path (gemm/sgemm.c): f32 lanes per vector and the register tile
     * (mr rows x nv vectors of accumulators); f32_vl 0 = no f32 kernel on this row. */
    int f32_vl, f32_mr, f32_nv;
} GemmUk;

/* The row of isa (isa.c), NULL if none. */
const GemmUk *
gemm_uk(CgGemmIsa isa);

/* The row that runs spec s on path isa: gemm_uk(isa), or for 16-bit activations the path's
 * 16-bit row (isa.c's second table); NULL if none. */
const GemmUk *
gemm_uk_for(CgGemmIsa isa, const CgGemmSpec *s);

extern const GemmUk gemm_uk_generic, gemm_uk_neon;                        /* uk_generic.c */
extern const GemmUk gemm_uk_avx2, gemm_uk_avxvnni, gemm_uk_avx512vnni;    /* uk_x86.c */
extern const GemmUk gemm_uk_dotprod, gemm_uk_i8mm;                         /* uk_a64.c */
/* 16-bit activations */
extern const GemmUk gemm_uk_generic_a16, gemm_uk_neon_a16;                 /* uk_generic.c */
extern const GemmUk gemm_uk_avx2_a16, gemm_uk_avxvnni_a16, gemm_uk_avx512vnni_a16; /* uk_x86.c */

struct GemmPlan {
    CgGemmIsa isa;
    const CgTarget *t;
    const CgIsaDesc *desc;         /* the path's record */
    const GemmUk *uk;
    int32_t xor_off;               /* what A's a_xor adds to an element (desc or uk row) */
    int vl;     /* i32 lanes of one accumulator row vector */
    int kg;     /* k per group */
    int belem;  /* bytes per packed B element */
    int mr, nv, mc, kunroll;
    int64_t kp, groups;
    int64_t kcg, nkc;              /* k groups per cache chunk, number of chunks */
    int64_t b_prefetch;            /* prefetch B this many groups ahead (0 = off) */
    int64_t scratch_bytes;         /* partial sums between chunks (nkc > 1) */
    int64_t nr, npanels_full;      /* channels per full panel, number of full panels */
    int64_t nv_tail, nr_tail;      /* tail panel vectors / channels (0 if none) */
    int64_t tail_last_lanes;       /* valid lanes of the tail panel's last vector (vl if full) */
    int64_t npad;                  /* npanels_full * nr + nr_tail */
    GemmApack apack;
    uint8_t a_xor;                 /* 0x80 when A's sign is flipped for the dot instruction */
    bool use_usdot;                /* dotprod path with i8mm: usdot for unsigned A */
    bool need_rowsum;              /* some zb != 0 */
    bool cb_nonzero;
    bool requant_i64;              /* float requant bounds beyond 2^24: finish in int64 */
    int64_t a_row_bytes;           /* packed A bytes per row (per row pair for APACK_PAIRS) */
    int64_t apack_bytes, stack_bytes;
    /* 16-bit activations */
    bool a16;                      /* CgGemmSpec.a_bits == 16 */
    int a_es;                      /* bytes per element of A: 1, or 2 for a16 */
    bool wide;                     /* int64 accumulation (K chunks of wgroups groups) */
    int64_t wgroups;
    int64_t *cb64;                 /* wide: the corrections of cb in int64 */
    /* host-side constants (malloc'd, npad entries unless noted) */
    uint8_t *bpack;
    int64_t bpack_bytes;
    int32_t *cb;    /* bias + zero-point and sign corrections */
    int32_t *zb;
    float *mult, *scale, *fbias;
    int64_t *fx_mult, *fx_round, *fx_shift;
    int32_t *csum;  /* act_zp: sum_k (B[n,k] - zb[n]) (mod 2^32); else NULL */
    /* The emitter's accumulator slots (emit.c), sized by the tile: nacc accumulators of a full
     * tile (mr x nv, row pairs rounded up for APACK_PAIRS; at most the path record's
     * gemm_max_acc), and acc_slots, 4 x nacc handles (int32 slots, int64 slots, chunk scratch
     * slots, the finished tile's row vectors) */
    int nacc;
    LLVMValueRef *acc_slots;
};

/* Validate s for (t, isa), choose tiles, pack B, fold the corrections. */
bool
gemm_plan_init(GemmPlan *p, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s, char *err,
               size_t errlen);

void
gemm_plan_free(GemmPlan *p);

#endif
