/* gemm.h: the int8 GEMM kernel generator.
 *
 * Emits one LLVM function per GEMM instance computing
 *     C[m, n] = epilogue( sum_k (A[m, k] - za) * (B[n, k] - zb[n]) + bias[n] )
 * for rows m in [m_begin, m_end), with M, N, K, strides, weights, zero points and epilogue
 * constants all fixed at compile time. A is the int8/uint8 activation (row stride lda), B the
 * int8 weight, which is packed here, at compile time, into the microkernel's panel order and
 * emitted as a private constant global. Zero points become per-channel constants (the za and
 * +-128 column-sum terms) plus, only when some zb[n] != 0, a per-row sum of A.
 *
 * Emitted signature (C calling convention, external linkage):
 *     void name(const void *A, void *C, int64_t m_begin, int64_t m_end);
 * A points at row 0 (element A[m, k] at A + m*lda + k), C at row 0 (C[m, n] at C + m*ldc + n,
 * in elements of the output type). Rows are independent, so a thread pool may split [0, M)
 * into ranges; splitting at multiples of cg_gemm_row_block() keeps every call on full tiles.
 * The function reads exactly A[m, 0..K) for the rows it owns (never past a row's end) and writes
 * exactly C[m, 0..N) for those rows. It needs cg_gemm_stack_bytes() of stack.
 *
 * A may also be 16-bit (CgGemmSpec.a_bits: int16/uint16 activations x int8 weights, with an
 * int64 accumulator where int32 could overflow); C then is I16/U16/I8/U8 requantized, I32 or
 * F32.
 *
 * The ISA variant is the caller's choice (cg_gemm_isa_best() picks the fastest the target has);
 * cg_gemm_emit refuses a variant the target lacks, because selecting an absent intrinsic aborts
 * LLVM. See docs/targets.md for the intrinsics and the exactness argument of each path.
 */
#ifndef QDQC_CODEGEN_KERN_GEMM_H
#define QDQC_CODEGEN_KERN_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/irb/core.h"
#include "codegen/target/isa.h"
#include "codegen/target/target.h"
#include "numerics/elementwise.h"

typedef struct LLVMOpaqueModule *LLVMModuleRef;
typedef struct LLVMOpaqueValue *LLVMValueRef;

typedef enum CgGemmEpilogue {
    CG_GEMM_EPI_I32,            /* raw int32 accumulator (out must be I32) */
    /* qn_requant_float: clamp((float)acc*mult[n]) rne + zo */
    CG_GEMM_EPI_REQUANT_FLOAT = IRB_EPI_REQUANT_FLOAT,
    /* qn_requant_fixed: ((int64)acc*M[n] + 2^(s-1)) >> s, + zo */
    CG_GEMM_EPI_REQUANT_FIXED = IRB_EPI_REQUANT_FIXED,
    CG_GEMM_EPI_DEQUANT,        /* (float)acc * scale[n] (+ fbias[n]); out must be F32 */
} CgGemmEpilogue;

typedef enum CgGemmElem {
    CG_GEMM_I8, CG_GEMM_U8, CG_GEMM_I32, CG_GEMM_F32,
    CG_GEMM_I16, CG_GEMM_U16, /* requantized 16-bit results */
} CgGemmElem;

typedef enum CgGemmBLayout {
    CG_GEMM_B_NK, /* b[n*K + k]: output-channel major (conv OIHW flattened, Gemm transB=1) */
    CG_GEMM_B_KN, /* b[k*N + n]: MatMul's right operand */
} CgGemmBLayout;

/* Tile sizes; 0 = the ISA's default (what the bench measured best). */
typedef struct CgGemmTile {
    int mr;      /* rows per register tile */
    int nv;      /* accumulator vectors per row (channels per panel = nv * lanes) */
    int mc;      /* rows per cache block (A block packed once, reused over all N panels) */
    int kc;      /* k per cache chunk (the B chunk of a panel stays in L1 over the row tiles) */
    int kunroll; /* k groups per K-loop iteration */
} CgGemmTile;

typedef struct CgGemmSpec {
    int64_t m, n, k;   /* M (rows of A and C), N (output channels), K (reduction) */
    int64_t lda, ldc;  /* row strides in elements; lda >= K, ldc >= N */
    bool a_signed;     /* A is int8 (else uint8) */
    int32_t za;        /* activation zero point */
    const int8_t *b;   /* weights, layout b_layout, copied/packed at emit time */
    CgGemmBLayout b_layout;
    const int32_t *zb;   /* [N] weight zero points, NULL = all 0 (may be unequal) */
    const int32_t *bias; /* [N] int32 bias added to the accumulator, NULL = none */
    CgGemmEpilogue epilogue;
    CgGemmElem out;      /* element type of C */
    const float *mult;   /* REQUANT_FLOAT: [N] f32 multipliers (finite, >= 0) */
    const int32_t *fixed_mult, *fixed_shift; /* REQUANT_FIXED: [N], shift in [1, 62] */
    const float *scale;  /* DEQUANT: [N] */
    const float *fbias;  /* DEQUANT: [N] or NULL, added after the multiply (no fma) */
    int32_t zo;          /* output zero point (requant modes) */
    int32_t qmin, qmax;  /* requant clamp, within the output type's range (fused Relu/Clip) */
    /* Fused residual add: the requantized value q (scale res_sa, zero point zo, range
     * [qmin, qmax] of an 8-bit intermediate) is not stored; instead C[m, n] = qadd(q, R[m, n])
     * with R an 8-bit matrix (row stride ldr) passed as a fifth argument:
     *     void name(const void *A, void *C, int64_t m_begin, int64_t m_end, const void *R);
     * REQUANT_FLOAT: exactly qn_qadd: va = res_sa * (float)(q - zo),
     * vb = res_sb * (float)(r - res_zb), sat(rne((va + vb) / res_sy) + res_zy, res_lo, res_hi).
     * REQUANT_FIXED: exactly qn_qadd_fixed with the multipliers res_fixed (.a for q, .b for
     * R, .y): sat(rescale(rescale(q - zo, a) + rescale(r - res_zb, b), y) + res_zy, res_lo,
     * res_hi); res_sa, res_sb, res_sy unused. */
    bool residual;
    bool res_signed;     /* R is int8 (else uint8) */
    int64_t ldr;
    float res_sa, res_sb, res_sy;
    QnAddFixed res_fixed;
    int32_t res_zb, res_zy, res_lo, res_hi;
    CgGemmTile tile;
    /* Run-time B (gemm/pack_rt.h): b is NULL; B is packed at run time by the function
     * cg_gemm_rt_emit_pack emits, and the kernel takes the packed B and the int32
     * per-channel corrections as two more arguments:
     *     void name(const void *A, void *C, int64_t m_begin, int64_t m_end,
     *               const void *Bpacked, const int32_t *cb);
     * zb then holds B's zero points as the kernel sees them (minus 128 for an unsigned B,
     * whose bytes the packer flips); bias (compile-time) is folded into cb by the packer,
     * which may also add a run-time bias. No residual. */
    bool b_runtime;
    /* Run-time quantization of A (dynamic quantization: matmul_integer, and wmatmul with int8
     * activations; docs/numerics.md). The kernel takes one more argument after the four
     * above, `const CgGemmActQ *aq` (below; read once per call), and
     *   act_zp:        A's zero point is aq->za, known only at run time (za above must be 0):
     *                  the accumulator gets - aq->za * csum[n], csum[n] = sum_k (B[n,k] - zb[n])
     *                  folded at compile time (int32 modulo 2^32: exact whenever the result
     *                  fits, like every other correction);
     *   act_scale:     the DEQUANT epilogue multiplies (float)acc by (aq->sa * scale[n]), one
     *                  f32 product (A's per-tensor scale times B's), instead of by scale[n];
     *   act_row_scale: ... by (aq->row_scale[m] * scale[n]), one scale per row of A (m counts
     *                  from A's row 0, whatever rows the call owns).
     * Not with a residual add or a run-time B. */
    bool act_zp, act_scale, act_row_scale;
    /* 16-bit activations (A16W8): a_bits 16 makes A int16 (a_signed) or uint16, lda in
     * elements, za in A's range; B stays int8. 0 or 8: 8-bit A. The kernels are the paths'
     * 16-bit rows (gemm/isa.c: vpdpwssd, vpmaddwd, smlal, generic). The accumulator is exact:
     * when the worst case of some channel (max|a - za| * sum_k |b - zb| + |bias|) exceeds int32,
     * K runs in chunks whose int32 sums cannot overflow, added into int64, and the epilogue
     * requantizes the int64 value (qn_requant_float_wide / qn_requant_fixed_wide; fixed mode
     * needs normalised multipliers). No residual, no run-time B. */
    int a_bits;
} CgGemmSpec;

/* The epilogue of a spec (cg_gemm_spec): its kind, the type of C and the kind's constants
 * (the CgGemmSpec fields of the same names). */
typedef struct CgGemmEpi {
    CgGemmEpilogue kind;
    CgGemmElem out;
    const float *mult;
    const int32_t *fixed_mult, *fixed_shift;
    const float *scale, *fbias;
    int32_t zo, qmin, qmax;
} CgGemmEpi;

/* The one way to make a CgGemmSpec: every field set from the facts every GEMM has.
 * C[m, n] (row stride ldc) = A[m, k] (row stride k) x B: A of element type a (CG_GEMM_I8, U8,
 * I16 or U16; 16-bit sets a_bits 16) and zero point za; B the weights b in b_layout with zero
 * points zb and bias (either NULL); epilogue epi. Everything else is off: no residual add,
 * compile-time B, compile-time quantization of A, the ISA's default tiles. A caller sets only
 * what is special about its GEMM on the result (lda, b_runtime, act_*, residual). */
static inline CgGemmSpec
cg_gemm_spec(int64_t m, int64_t n, int64_t k, int64_t ldc, CgGemmElem a, int32_t za,
             const int8_t *b, CgGemmBLayout b_layout, const int32_t *zb, const int32_t *bias,
             CgGemmEpi epi)
{
    return (CgGemmSpec){
        .m = m, .n = n, .k = k, .lda = k, .ldc = ldc,
        .a_signed = a == CG_GEMM_I8 || a == CG_GEMM_I16, .za = za,
        .a_bits = a == CG_GEMM_I16 || a == CG_GEMM_U16 ? 16 : 0,
        .b = b, .b_layout = b_layout, .zb = zb, .bias = bias,
        .epilogue = epi.kind, .out = epi.out, .mult = epi.mult, .fixed_mult = epi.fixed_mult,
        .fixed_shift = epi.fixed_shift, .scale = epi.scale, .fbias = epi.fbias, .zo = epi.zo,
        .qmin = epi.qmin, .qmax = epi.qmax,
        .residual = false, .res_signed = false, .ldr = 0, .res_sa = 0, .res_sb = 0, .res_sy = 0,
        .res_fixed = {0}, .res_zb = 0, .res_zy = 0, .res_lo = 0, .res_hi = 0,
        .tile = {.mr = 0, .nv = 0, .mc = 0, .kc = 0, .kunroll = 0},
        .b_runtime = false, .act_zp = false, .act_scale = false, .act_row_scale = false,
    };
}

/* The dequantize epilogue (float)acc * scale[n] (+ fbias[n]) into F32. */
static inline CgGemmEpi
cg_gemm_epi_dequant(const float *scale, const float *fbias)
{
    return (CgGemmEpi){.kind = CG_GEMM_EPI_DEQUANT, .out = CG_GEMM_F32, .mult = NULL,
                       .fixed_mult = NULL, .fixed_shift = NULL, .scale = scale, .fbias = fbias,
                       .zo = 0, .qmin = 0, .qmax = 0};
}

/* The raw int32 accumulator into I32. */
static inline CgGemmEpi
cg_gemm_epi_i32(void)
{
    return (CgGemmEpi){.kind = CG_GEMM_EPI_I32, .out = CG_GEMM_I32, .mult = NULL,
                       .fixed_mult = NULL, .fixed_shift = NULL, .scale = NULL, .fbias = NULL,
                       .zo = 0, .qmin = 0, .qmax = 0};
}

/* What a kernel with run-time quantization of A reads (CgGemmSpec.act_*), in this layout:
 * za at byte 0, sa at byte 4, row_scale at byte 8. */
typedef struct CgGemmActQ {
    int32_t za;
    float sa;
    const float *row_scale;
} CgGemmActQ;

/* cg_gemm_isa_name, cg_gemm_isa_supported, cg_gemm_isa_best: target/isa.h. */

/* Rows per register tile that cg_gemm_emit will use for (t, isa, s): split M at multiples. */
int
cg_gemm_row_block(const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s);

/* Stack bytes the emitted function allocates (packed A block, row sums). */
int64_t
cg_gemm_stack_bytes(const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s);

/* Emit the kernel into mod (whose triple should be t's). Returns the function, or NULL with a
 * message in err (invalid spec, or isa not supported by t). Does not optimise: run the module
 * pipeline (cg_module_optimize) afterwards. */
LLVMValueRef
cg_gemm_emit(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s,
             const char *name, char *err, size_t errlen);

/* Compile-time sharing: GEMMs of one module whose specs differ only in their constant arrays
 * (weights, bias, zero points, multipliers: the same shapes, scalars and tiles) and in their
 * output zero point and clamp (zo, qmin, qmax: a fused ReLU, another output zero point) share
 * one body. The first of a kind is emitted as by cg_gemm_emit (so a module without repeats is
 * unchanged); when a second comes, the body is emitted once more as NAME.shared, taking a
 * table of the instance's constants (zo, qmin, qmax in NAME.epi) as a last parameter, and
 * both functions (and every later one of the kind) become a call of it with their own table. The returned function has
 * cg_gemm_emit's signature either way. cache NULL: cg_gemm_emit. */
typedef struct CgGemmCache CgGemmCache;
CgGemmCache *
cg_gemm_cache_create(void);
void
cg_gemm_cache_destroy(CgGemmCache *c);
/* How many kinds of GEMM in the cache have a shared body (two or more instances). */
size_t
cg_gemm_cache_shared(const CgGemmCache *c);
LLVMValueRef
cg_gemm_emit_shared(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s,
                    const char *name, CgGemmCache *cache, char *err, size_t errlen);

#endif
