/* pack_rt.h: run-time packing of the GEMM's right operand (B), for matrix products whose both
 * operands are computed at run time (attention: Q x K^T, softmax(..) x V).
 *
 * A GEMM spec with b_runtime set (gemm.h) emits a kernel that reads B from a buffer packed
 * exactly as the compile-time packer (plan.c) lays it out (gemm_impl.h: panels of nr channels,
 * k groups of kg, int16 elements on the AVX2 path, zero padding), plus an int32 correction per
 * channel:
 *     cb[n] = bias[n] + K * za * zb'[n] - (off + za) * colsum'[n]
 * (plan.c's folding, with colsum' the column sum of the packed values, computed here at run time;
 * off = +-128 when A's sign is flipped for the dot instruction). An unsigned B is stored as
 * b ^ 0x80 = b - 128 (int8) and its zero points as zb' = zb - 128: sum (a - za)(b - zb) is
 * unchanged, every product fits the kernels' int16 / dot-product exactness argument, and the
 * zb' x rowsum(A) term the kernel computes when zb' != 0 is the row-sum correction.
 *
 * The packer:
 *     void name(const void *B, void *Bpacked, int32_t *cb, const int32_t *bias);
 * reads B's element (n, k) (int8 or uint8) at B + n * sn + k * sk bytes (any two strides: a
 * transposed B is sn = 1, sk = N), writes Bpacked (cg_gemm_rt_sizes bytes, 64-byte aligned) and
 * cb; bias: a run-time int32 bias [N] added to cb, or NULL (argument unused) when the packer was
 * emitted without one. The kernel of the same (t, isa, spec) then runs on (Bpacked, cb). */
#ifndef QDQC_CODEGEN_GEMM_PACK_RT_H
#define QDQC_CODEGEN_GEMM_PACK_RT_H

#include "codegen/gemm/gemm.h"

typedef struct CgGemmRtB {
    bool b_signed;  /* B holds int8 (else uint8, stored flipped; spec zb must be zb - 128) */
    int64_t sn, sk; /* byte strides of B's channel (n) and reduction (k) axes */
    bool rt_bias;   /* the packer adds the run-time bias argument */
} CgGemmRtB;

/* Bytes of the packed B and of cb for (t, isa, s) (s->b_runtime), each a multiple of 64. */
bool
cg_gemm_rt_sizes(const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s, int64_t *bpack_bytes,
                 int64_t *cb_bytes, char *err, size_t errlen);

/* Emit the packer for the kernel cg_gemm_emit(t, isa, s) emits (s->b_runtime). NULL with a
 * message in err on an invalid spec. */
LLVMValueRef
cg_gemm_rt_emit_pack(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s,
                     const CgGemmRtB *rb, const char *name, char *err, size_t errlen);

#endif
