/* qconv.h: geometry and epilogue of a qconv, shared by the qconv lowerings (qconv.c,
 * qconv_nhwc.c, qconv_dw.c) and the NHWC-aware element-wise ones. Internal to lib/codegen. */
#ifndef QDQC_CODEGEN_LOWER_QCONV_H
#define QDQC_CODEGEN_LOWER_QCONV_H

#include "codegen/gemm/gemm.h"
#include "codegen/lower/lower.h"
#include "codegen/plan/plan.h"

typedef struct ConvGeo {
    int64_t N, C, H, W, M, G, KH, KW, OH, OW, sh, sw, dh, dw, ph, pw;
    int64_t Cg, Mg, K;
    bool in_nhwc, out_nhwc; /* layout of the input / result (cg_layout_plan, plan/layout.c) */
    int64_t xes;            /* bytes per input element: 1, or 2 for 16-bit activations */
} ConvGeo;

/* Epilogue constants of channel m (qconv/qmatmul), as lib/ref computes them. */
typedef struct Epi {
    CgGemmEpilogue kind;
    CgGemmElem out;
    float *mult, *scale;
    int32_t *fmult, *fshift;
    int32_t zo, lo, hi;
} Epi;

/* epi_init / epi_free / a_of / epi_gemm of qconv.c (epilogue of n with nch channels, weight
 * scales per tensor or along axis wq_axis_ok; the GEMM's A operand of n, false (reported) when
 * not 8/16-bit; e as a GEMM epilogue from channel off): shared with the run-time qmatmul of
 * qmatmul_rt.c. */
bool cg_epi_init(Kb *k, Node *n, int64_t nch, int wq_axis_ok, Epi *e);
void cg_epi_free(Epi *e);
bool cg_gemm_a_of(Kb *k, Node *n, CgGemmElem *ae, int32_t *za);
CgGemmEpi cg_epi_gemm(const Epi *e, int64_t off);

/* ---- non-grouped convolution through an NHWC copy of the input ----
 * The input (NCHW) is transposed once into X = NHWC; for a 1x1 stride-1 unpadded conv X is the
 * GEMM's A directly, otherwise each row of A is gathered from X: one copy of KW * C contiguous
 * elements per kernel row when the pixel's taps lie inside the input's width (dilation 1), else
 * one copy of C elements per tap (K ordered (kh, kw, c), weights reordered to match at compile
 * time). The GEMM writes a staging buffer [N, OH*OW, M] that a blocked transpose turns into the
 * NCHW result. Elements are c->xes bytes (8- or 16-bit activations); lda and K count elements. */
bool cg_nhwc_direct_a(const ConvGeo *c);
/* Row stride (and GEMM K) of A: C when direct, else K rounded up to a multiple of 4 (the
 * padding holds the input zero point, so it adds 0; the VNNI GEMM then reads A in place). */
int64_t cg_nhwc_lda(const ConvGeo *c);
/* Scratch bytes: X, A (unless direct or gathered per block), staging. */
int64_t cg_nhwc_scratch(const ConvGeo *c, int64_t out_es);
/* OIHW -> OHWI, in place (G == 1). */
void cg_nhwc_reorder_weights(const ConvGeo *c, int8_t *w);
/* Emits the transpose and (gather) the whole gather; returns A (row stride cg_nhwc_lda), or
 * X when !gather (the caller gathers per block: cg_nhwc_gather). */
LLVMValueRef cg_nhwc_pack(Kb *k, const ConvGeo *c, ElemType xe, int32_t zx, LLVMValueRef in,
                          LLVMValueRef scratch, const CgNodeArgs *a, bool gather);
/* Gather fused per block of GEMM rows: when the whole A would exceed 256 KiB (so the GEMM
 * would read it back from L3 or memory), the rows of one block (a multiple of 24 rows, at most
 * about 128 KiB, and at least 12 blocks when the rows allow) are gathered into a stack
 * buffer right before the GEMM of that block, which then reads them from L1/L2; the blocks
 * are the parallel-for tasks. Returns the rows per block, or 0 to gather all of A first
 * (small A, or direct). */
int64_t cg_nhwc_block_rows(const ConvGeo *c);
/* Emits, in the current function, the gather of A rows [m0, m1) (output pixels) from X into
 * dst (row i - m0 at dst + (i - m0) * lda). */
void cg_nhwc_gather(Kb *k, const ConvGeo *c, int32_t zx, LLVMValueRef X, LLVMValueRef dst,
                    LLVMValueRef m0, LLVMValueRef m1);
LLVMValueRef cg_nhwc_staging(Kb *k, const ConvGeo *c, LLVMValueRef scratch);
/* staging [N, OH*OW, M] -> out NCHW [N, M, OH*OW] */
void cg_nhwc_unstage(Kb *k, const ConvGeo *c, ElemType ye, LLVMValueRef st, LLVMValueRef out,
                     const CgNodeArgs *a);

/* ---- depthwise (C == G), NCHW (qconv_dw.c): register-blocked output columns over a padded
 * plane per channel on the task's stack (stride 1 or 2), else padded plane + vectorisable row
 * loops (scratch: cg_dw_scratch) ---- */
int64_t cg_dw_scratch(const ConvGeo *c);
bool cg_emit_dw_conv(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e,
                     const int8_t *w, const int32_t *zw, const int32_t *bias);
/* NHWC in and out (c->in_nhwc), qconv_dw.c: register-blocked pixels x channel vectors;
 * scratch: one row of zero points (cg_dw_nhwc_scratch). */
int64_t cg_dw_nhwc_scratch(const ConvGeo *c);
bool cg_emit_dw_conv_nhwc(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e,
                          const int8_t *w, const int32_t *zw, const int32_t *bias);

/* The requantizing epilogue of qconv_dw.c, for the direct conv kernels of qconv_first.c:
 * per-channel tables made at compile time (cg_dw_epi_init), the clamp constants loaded in the
 * row function (cg_dw_epi_load), the epilogue of an n-lane int32 accumulator whose lanes all
 * belong to channel m (cg_dw_epi_apply: n results of type ye, lane for lane lib/ref's). fast:
 * the short float form, when cg_dw_fast_ok says every accumulator allows it (8-bit results,
 * |(bias + sum (x - zx) w') * mult| < 2^30 for the weights w [M][T] with zero points zw). */
typedef struct CgDwEpi {
    const Epi *e;
    ElemType ye;
    bool fast;
    LLVMValueRef gm, gfm, gfr, gfs, gq;
    LLVMValueRef q[5];
} CgDwEpi;
bool cg_dw_fast_ok(Kb *k, const Epi *e, ElemType ye, int64_t M, int64_t T, const int8_t *w,
                   const int32_t *zw, const int32_t *bias);
void cg_dw_epi_init(Kb *k, const Epi *e, ElemType ye, int64_t M, bool fast, CgDwEpi *t);
void cg_dw_epi_load(Kb *k, CgDwEpi *t);
LLVMValueRef cg_dw_epi_apply(Kb *k, const CgDwEpi *t, LLVMValueRef acc, LLVMValueRef m, unsigned n);
/* The short form (t->fast) up to rne(f) + zo, before the clamp to [lo, hi] (|value| < 2^30 +
 * |zo|: the caller saturates and clamps). */
LLVMValueRef cg_dw_epi_fast_i32(Kb *k, const CgDwEpi *t, LLVMValueRef acc, LLVMValueRef m, unsigned n);

/* ---- direct convolutions of few input channels (qconv_first.c) ----
 * The first conv of a CNN (3 input channels, 3x3 or 4x4 patches, stride 2 or 4) on the quad
 * dot product: pixels as lanes, output channels in registers. cg_first_ok: n takes it (same
 * answer for the scratch query and the emitter; it needs no scratch). */
/* Lanes [l0, l0 + cnt) of out (n lanes of es bytes) stored at p, in power-of-two pieces (no
 * masked store). qconv_dw.c. */
void cg_dw_store_lanes(Kb *k, LLVMValueRef out, unsigned n, int64_t l0, int64_t cnt, LLVMValueRef p, int64_t es);
/* acc + the 8-bit dot-product intrinsic `intr` (cg_isa_dot8: vpdpbusd of some width) of the
 * byte vectors xq (unsigned) and wv (signed), bitcast to its operand types. qconv_dw.c. */
LLVMValueRef cg_dot8_call(Kb *k, const char *intr, LLVMValueRef acc, LLVMValueRef xq, LLVMValueRef wv);
bool cg_first_ok(Kb *k, Node *n, const ConvGeo *c);
bool cg_emit_conv_first(Kb *k, Node *n, const CgNodeArgs *a, const ConvGeo *c, const Epi *e,
                        const int8_t *w, const int32_t *zw, const int32_t *bias);

/* ---- element-wise ops as flat vector loops (qelem_vec.c) ----
 * requantize / qadd / qsub / qmul, float mode, 8-bit per-tensor operands of the result's shape
 * (or single elements), any layout. */
bool cg_elemwise_vec_ok(Kb *k, Node *n);
bool cg_emit_elemwise_vec(Kb *k, Node *n, const CgNodeArgs *a);

#endif
