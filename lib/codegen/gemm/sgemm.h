/* sgemm.h: the f32 GEMM kernel generator (the float rows of the GEMM table, gemm/isa.c).
 *
 * Emits one LLVM function per float matrix product
 *     C[m, n] = epi( acc[m, n] ),   acc[m, n] = fma(A[m, K-1], B[K-1, n], ... fma(A[m, 0], B[0, n], +0.0f))
 * for rows m in [m_begin, m_end): each output element is ONE chain of f32 fused multiply-adds
 * over k = 0 .. K-1 in increasing order, starting from +0.0f (docs/numerics.md, "Float matrix
 * products"). The kernel vectorises over N (a vector of B's columns) and M (a tile of rows),
 * never over K; cutting K into cache chunks stores the f32 accumulator into C and reloads it,
 * which does not change the chain. Every ISA path (AVX-512 zmm, AVX2/AVX-VNNI ymm, NEON and the
 * generic path) computes the same bits: llvm.fma is a correctly rounded fused multiply-add
 * whatever the instruction (a target without FMA hardware calls libm's fmaf).
 * The epilogue, in this order and in f32: v = acc; v = alpha * v (when alpha != 1);
 * v = v + bias[n] (when bias is given).
 *
 * Emitted signature (C calling convention, external linkage):
 *     void name(const float *A, float *C, int64_t m_begin, int64_t m_end, const float *B);
 * A[m, k] at A[m*lda + k*sak], C[m, n] at C[m*ldc + n]. B: with a constant B (spec.b) the
 * argument is ignored (B is packed here, at compile time, into panels of nr = nv * vl columns,
 * k-major within a panel, zero padded past N); with a run-time B (spec.b NULL) B[k, n] is at
 * B[k*sbk + n*sbn] and the kernel packs the K chunk of each panel into a stack buffer, once per
 * block of mc rows, before the row tiles read it. The function reads only A's rows it owns and
 * writes exactly C[m, 0..N) of them. Rows are independent: split [0, M) at multiples of
 * cg_sgemm_row_block() across threads. */
#ifndef QDQC_CODEGEN_GEMM_SGEMM_H
#define QDQC_CODEGEN_GEMM_SGEMM_H

#include "codegen/gemm/gemm.h"

typedef struct CgSgemmSpec {
    int64_t m, n, k;
    int64_t lda, sak; /* A[m, k] at A[m*lda + k*sak] (row-major: lda = K, sak = 1) */
    int64_t ldc;      /* >= N */
    const float *b;   /* constant B (copied and packed at emit time), or NULL: run-time B */
    int64_t sbk, sbn; /* B[k, n] at b[k*sbk + n*sbn] (MatMul: sbk = N, sbn = 1) */
    float alpha;      /* 1: no multiply */
    const float *bias; /* [N] added after alpha, or NULL */
    CgGemmTile tile;  /* mr, nv, mc, kc; 0 = the path's default (kunroll: k per loop step) */
} CgSgemmSpec;

/* Rows per register tile of (t, isa, s). */
int
cg_sgemm_row_block(const CgTarget *t, CgGemmIsa isa, const CgSgemmSpec *s);

/* Stack bytes the kernel allocates (the run-time B chunk; 0 with a constant B). */
int64_t
cg_sgemm_stack_bytes(const CgTarget *t, CgGemmIsa isa, const CgSgemmSpec *s);

/* Emit the kernel into mod; NULL with a message in err (invalid spec, isa not supported by t). */
LLVMValueRef
cg_sgemm_emit(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgSgemmSpec *s,
              const char *name, char *err, size_t errlen);

#endif
