/* wonly_i8.c: `wmatmul` with acts="i8" (--weight-only=int8-acts; docs/numerics.md, "int8
 * activations"), bit-identical to lib/ref/ref_wonly.c's wmatmul_i8.
 *
 * 1. Each row of x is quantized to int8 with its own scale (cg_emit_row_quant_i8, dynq.c: one
 *    parallel-for unit per row) into the scratch: q [M, K] bytes, then the row scales [M] f32.
 * 2. The int8 GEMM (gemm.h) on q times the weights, packed at compile time (u8 weights and their
 *    zero points shifted by -128, 4-bit ones as they are: the GEMM takes int8), with the
 *    dequantizing epilogue and per-row scales of A (act_row_scale): (float)acc *
 *    (row_scale[m] * scale[n]) (+ bias[n]), the f32 operations of qn_scale_acc in that order.
 *    The rows are split into about 16 units; a GEMM of one row block (M up to one register
 *    tile: a GEMV) is cut into up to WI8_SLICES column slices instead, so that the units still
 *    share the work. */
#include "codegen/gemm/gemm.h"
#include "codegen/lower/lower.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WI8_SLICES = 4 };

bool
cg_wonly_i8(Kb *k, Node *n)
{
    return n->op == OP_WMATMUL && strcmp(ir_attr_string(k->g, n, "acts", "f32"), "i8") == 0;
}

static void
wi8_dims(Kb *k, Node *n, int64_t *M, int64_t *K, int64_t *N)
{
    const Type *wt = &ir_value(k->g, n->in[1])->type;
    *K = wt->dims[0];
    *N = wt->dims[1];
    *M = *K ? (int64_t)(type_numel_unchecked(&ir_value(k->g, n->in[0])->type) / (size_t)*K) : 0;
}

int64_t
cg_wonly_i8_scratch(Kb *k, Node *n)
{
    if (!cg_wonly_i8(k, n))
        return 0;
    int64_t M, K, N;
    wi8_dims(k, n, &M, &K, &N);
    return (M * K + 63) / 64 * 64 + M * 4;
}

static const Tensor *
opnd(Kb *k, Node *n, uint32_t i)
{
    return i < n->nin && n->in[i].id ? ir_const_of(k->g, n->in[i]) : NULL;
}

/* The GEMM of columns [n0, n0 + nw) (all of them: n0 = 0, nw = N). */
static LLVMValueRef
slice_gemm(Kb *k, Node *n, int64_t M, int64_t K, int64_t N, int64_t n0, int64_t nw)
{
    const Tensor *w = opnd(k, n, 1), *s = opnd(k, n, 2), *z = opnd(k, n, 3), *b = opnd(k, n, 4);
    int shift = w->type.elem == ET_U8 ? 128 : 0; /* u8 as int8, zero points alike */
    int8_t *wb = xmalloc((size_t)(K * nw));
    int32_t *zb = xmalloc((size_t)nw * sizeof *zb);
    float *sc = xmalloc((size_t)nw * sizeof *sc), *fb = b ? xmalloc((size_t)nw * sizeof *fb) : NULL;
    for (int64_t kk = 0; kk < K; kk++)
        for (int64_t j = 0; j < nw; j++)
            wb[kk * nw + j] = (int8_t)(tensor_get_i(w, (size_t)(kk * N + n0 + j)) - shift);
    for (int64_t j = 0; j < nw; j++) {
        zb[j] = (int32_t)(z ? tensor_get_i(z, (size_t)(n0 + j)) : 0) - shift;
        sc[j] = ((const float *)s->data)[n0 + j];
        if (fb)
            fb[j] = ((const float *)b->data)[n0 + j];
    }
    CgGemmSpec sp = cg_gemm_spec(M, nw, K, N, CG_GEMM_I8, 0, wb, CG_GEMM_B_KN, zb, NULL,
                                 cg_gemm_epi_dequant(sc, fb));
    sp.act_row_scale = true;
    char name[96], err[512];
    snprintf(name, sizeof name, "%s.gemm%u", k->prefix, k->counter++);
    LLVMValueRef f = cg_gemm_emit_shared(k->mod, k->t, k->isa, &sp, name, k->gemm_cache, err,
                                         sizeof err);
    free(wb);
    free(zb);
    free(sc);
    free(fb);
    if (!f) {
        cg_fail(k, n, "GEMM: %s", err);
        return NULL;
    }
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    return f;
}

bool
cg_emit_wonly_i8(Kb *k, Node *n, const CgNodeArgs *a)
{
    int64_t M, K, N;
    wi8_dims(k, n, &M, &K, &N);
    const Tensor *w = opnd(k, n, 1), *s = opnd(k, n, 2);
    if (!w || !s || w->type.rank != 2 || s->type.elem != ET_F32 ||
        (int64_t)type_numel_unchecked(&s->type) != N)
        return cg_fail(k, n, "int8 activations: the weight must be a constant matrix with one "
                       "f32 scale per column");
    if (M == 0 || N == 0)
        return true;
    LLVMValueRef q = a->scratch, rows = cg_gep(k, a->scratch, cg_i64(k, (M * K + 63) / 64 * 64));
    cg_emit_row_quant_i8(k, a->in[0], q, rows, M, K, a);
    /* the GEMMs: one, or column slices of at least 128 columns for a single row block */
    CgGemmSpec probe = cg_gemm_spec(M, N, K, N, CG_GEMM_I8, 0, NULL, CG_GEMM_B_KN, NULL, NULL,
                                    cg_gemm_epi_dequant(NULL, NULL));
    int rbk = cg_gemm_row_block(k->t, k->isa, &probe);
    int64_t rb = rbk > 0 ? rbk : 1, ntiles = (M + rb - 1) / rb;
    int P = 1;
    int64_t ns = N;
    if (ntiles == 1 && N >= 256) {
        P = N / 128 < WI8_SLICES ? (int)(N / 128) : WI8_SLICES;
        ns = ((N + P - 1) / P + 15) / 16 * 16;
        P = (int)((N + ns - 1) / ns);
    }
    LLVMValueRef gf[WI8_SLICES];
    for (int p = 0; p < P; p++) {
        int64_t n0 = p * ns, nw = p == P - 1 ? N - n0 : ns;
        if (!(gf[p] = slice_gemm(k, n, M, K, N, n0, nw)))
            return false;
    }
    /* the kernel's CgGemmActQ (gemm.h): za 0, sa unused, row_scale at byte 8 */
    LLVMValueRef aq = cg_entry_alloca(k, LLVMArrayType2(k->i64, 2));
    LLVMBuildStore(k->b, LLVMConstNull(k->i64), aq);
    LLVMBuildStore(k->b, rows, cg_gep(k, aq, cg_i64(k, 8)));
    int64_t nblk = ntiles < 16 ? ntiles : 16;
    int64_t rpu = (ntiles + nblk - 1) / nblk * rb;
    nblk = (M + rpu - 1) / rpu;
    Par par;
    LLVMValueRef io[3] = {q, a->out[0], aq};
    LLVMValueRef u = cg_par_begin(k, &par, P * nblk, io, 3);
    LLVMValueRef sl = LLVMBuildSDiv(k->b, u, cg_i64(k, nblk), "");
    LLVMValueRef m0 = cg_mul(k, LLVMBuildSRem(k->b, u, cg_i64(k, nblk), ""), cg_i64(k, rpu));
    LLVMValueRef m1 = cg_smin(k, cg_add(k, m0, cg_i64(k, rpu)), cg_i64(k, M));
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr};
    LLVMTypeRef ft = LLVMFunctionType(k->vd, pt, 5, 0);
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(k->c, k->fn, "wi8.next");
    LLVMValueRef sw = LLVMBuildSwitch(k->b, sl, next, (unsigned)P);
    for (int p = 0; p < P; p++) {
        LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(k->c, k->fn, "wi8.slice");
        LLVMAddCase(sw, LLVMConstInt(k->i64, (unsigned long long)p, 0), bb);
        LLVMPositionBuilderAtEnd(k->b, bb);
        LLVMValueRef args[5] = {io[0], cg_gep(k, io[1], cg_i64(k, p * ns * 4)), m0, m1, io[2]};
        LLVMBuildCall2(k->b, ft, gf[p], args, 5, "");
        LLVMBuildBr(k->b, next);
    }
    LLVMPositionBuilderAtEnd(k->b, next);
    cg_par_end(k, &par, a);
    return true;
}
