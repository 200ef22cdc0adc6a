/* minteger.c: `matmul_integer` (docs/ir.md: ONNX MatMulInteger with zero points as operands,
 * optionally with dynamic quantization's f32 epilogue), bit-identical to lib/ref/ref_minteger.c.
 *
 * GEMM path: b a constant matrix [K, N] (its zero points, and with the epilogue its scales and
 * bias, constants too), which is ONNX Runtime's quantize_dynamic graph after the
 * matmul-integer-fold pass. b is packed at compile time (a u8 b shifted by -128 with its zero
 * points, as qconv.c does) and the GEMM generator (gemm.h) runs with run-time quantization of
 * A: a's zero point za and scale sa are read from their operands when the node runs and passed
 * to the kernel (CgGemmActQ); the kernel subtracts za * sum_k (b - zb[n]) (a compile-time
 * column constant) and, with the epilogue, computes (float)acc * (sa * sb[n]) (+ bias[n]), the
 * f32 operations of qn_scale_acc in that order. Every integer step is exact modulo 2^32, so the
 * accumulator is the reference's. The rows of a (all its batch dims) are split into about 16
 * units across the parallel-for hook; without one (one thread) the kernel runs once over all
 * rows (its own row blocks then decide how often the packed B is read).
 *
 * Direct path (everything else: a run-time or batched b, run-time zero points or scales of b):
 * per row of the result (a parallel-for unit), the result row itself holds int32 accumulators
 * acc[n] += (a[k] - za) * (b[k, n] - zb[n]) over k (a loop over n that LLVM vectorises), then,
 * with the epilogue, is overwritten in place by its f32 values. */
#include "codegen/gemm/gemm.h"
#include "codegen/lower/lower.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const Tensor *
opnd_const(Kb *k, Node *n, uint32_t i)
{
    return i < n->nin && n->in[i].id ? ir_const_of(k->g, n->in[i]) : NULL;
}

static bool
has(Node *n, uint32_t i)
{
    return i < n->nin && n->in[i].id;
}

/* Whether n takes the GEMM path (see the file comment). */
static bool
gemm_path(Kb *k, Node *n)
{
    const Tensor *b = opnd_const(k, n, 1);
    const Type *at = &ir_value(k->g, n->in[0])->type;
    if (!b || b->type.rank != 2 || at->rank < 1 || b->type.dims[0] < 1 || b->type.dims[1] < 1 ||
        b->type.dims[0] > (1 << 24) || b->type.dims[1] > (1 << 24) || type_numel_unchecked(at) == 0)
        return false; /* empty shapes: the direct loops (an empty sum is 0) */
    for (uint32_t i = 3; i < n->nin; i++)
        if (i != 4 && has(n, i) && !opnd_const(k, n, i))
            return false;
    return true;
}

bool
cg_minteger_static(Kb *k, Node *n, uint32_t i)
{
    return gemm_path(k, n) && i != 0 && i != 2 && i != 4; /* b, zb, sb, bias: compile time */
}

int64_t
cg_minteger_scratch(Kb *k, Node *n)
{
    (void)k;
    (void)n;
    return 0;
}

/* Element j of a constant holding one value or one per column. */
static int64_t
col_i(const Tensor *t, int64_t j)
{
    return t ? tensor_get_i(t, type_numel_unchecked(&t->type) == 1 ? 0 : (size_t)j) : 0;
}

/* operand i's single value (element e) as i32, 0 when absent */
static LLVMValueRef
load_i32(Kb *k, Node *n, const CgNodeArgs *a, uint32_t i, LLVMValueRef base)
{
    if (!has(n, i))
        return cg_i32(k, 0);
    ElemType e = ir_value(k->g, n->in[i])->type.elem;
    return LLVMBuildTrunc(k->b, cg_load_i64(k, e, base ? base : a->in[i], cg_i64(k, 0)), k->i32, "");
}

static bool
emit_gemm(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Tensor *b = opnd_const(k, n, 1), *zb = opnd_const(k, n, 3), *sb = opnd_const(k, n, 5);
    const Tensor *bias = opnd_const(k, n, 6);
    const Type *at = &ir_value(g, n->in[0])->type;
    bool scaled = has(n, 4);
    int64_t K = b->type.dims[0], N = b->type.dims[1];
    int64_t M = (int64_t)type_numel_unchecked(at) / K;
    int shift = b->type.elem == ET_U8 ? 128 : 0; /* u8 weights as int8, zero points alike */
    int8_t *wb = xmalloc((size_t)(K * N));
    int32_t *zbv = xmalloc((size_t)N * sizeof *zbv);
    float *scale = scaled ? xmalloc((size_t)N * sizeof *scale) : NULL;
    float *fbias = bias ? xmalloc((size_t)N * sizeof *fbias) : NULL;
    for (int64_t i = 0; i < K * N; i++)
        wb[i] = (int8_t)(tensor_get_i(b, (size_t)i) - shift);
    for (int64_t j = 0; j < N; j++) {
        zbv[j] = (int32_t)col_i(zb, j) - shift;
        if (scale)
            scale[j] = (float)tensor_get_f(sb, type_numel_unchecked(&sb->type) == 1 ? 0 : (size_t)j);
        if (fbias)
            fbias[j] = (float)tensor_get_f(bias, (size_t)j);
    }
    CgGemmSpec s = cg_gemm_spec(M, N, K, N, at->elem == ET_I8 ? CG_GEMM_I8 : CG_GEMM_U8, 0, wb,
                                CG_GEMM_B_KN, zbv, NULL,
                                scaled ? cg_gemm_epi_dequant(scale, fbias) : cg_gemm_epi_i32());
    s.act_zp = has(n, 2);
    s.act_scale = scaled;
    char name[96], err[512];
    snprintf(name, sizeof name, "%s.gemm%u", k->prefix, k->counter++);
    LLVMValueRef gf = cg_gemm_emit_shared(k->mod, k->t, k->isa, &s, name, k->gemm_cache, err,
                                          sizeof err);
    int rbk = gf ? cg_gemm_row_block(k->t, k->isa, &s) : 1;
    free(wb);
    free(zbv);
    free(scale);
    free(fbias);
    if (!gf)
        return cg_fail(k, n, "GEMM: %s", err);
    LLVMSetLinkage(gf, LLVMInternalLinkage);
    LLVMAddAttributeAtIndex(gf, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    /* the kernel's CgGemmActQ (gemm.h): za at byte 0, sa at 4, row_scale (unused) at 8 */
    LLVMValueRef aq = cg_entry_alloca(k, LLVMArrayType2(k->i64, 2));
    LLVMBuildStore(k->b, load_i32(k, n, a, 2, NULL), aq);
    LLVMBuildStore(k->b, scaled ? LLVMBuildLoad2(k->b, k->f32, a->in[4], "") : cg_f32(k, 0.0f),
                   cg_gep(k, aq, cg_i64(k, 4)));
    LLVMBuildStore(k->b, LLVMConstPointerNull(k->ptr), cg_gep(k, aq, cg_i64(k, 8)));
    bool act = s.act_zp || s.act_scale;
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr};
    LLVMTypeRef gt = LLVMFunctionType(k->vd, pt, act ? 5 : 4, 0);
    /* one thread (no parallel-for hook): one call over all rows, so that the kernel's row blocks
     * (mc) set how often B is read (once for M = 128), not the units below */
    CgIf whole;
    cg_if_begin(k, &whole, LLVMBuildIsNull(k->b, a->pf, ""));
    LLVMValueRef wargs[5] = {a->in[0], a->out[0], cg_i64(k, 0), cg_i64(k, M), aq};
    LLVMBuildCall2(k->b, gt, gf, wargs, act ? 5 : 4, "");
    cg_if_else(k, &whole);
    /* about 16 units of whole row tiles */
    int64_t rb = rbk > 0 ? rbk : 1, ntiles = (M + rb - 1) / rb;
    int64_t nblk = ntiles < 16 ? ntiles : 16;
    int64_t rows = (ntiles + nblk - 1) / nblk * rb;
    nblk = (M + rows - 1) / rows;
    Par par;
    LLVMValueRef io[3] = {a->in[0], a->out[0], aq};
    LLVMValueRef u = cg_par_begin(k, &par, nblk, io, 3);
    LLVMValueRef m0 = cg_mul(k, u, cg_i64(k, rows));
    LLVMValueRef m1 = cg_smin(k, cg_add(k, m0, cg_i64(k, rows)), cg_i64(k, M));
    LLVMValueRef args[5] = {io[0], io[1], m0, m1, io[2]};
    LLVMBuildCall2(k->b, gt, gf, args, act ? 5 : 4, "");
    cg_par_end(k, &par, a);
    cg_if_end(k, &whole);
    return true;
}

/* Element offsets of a's and b's matrices for the flat batch index bi (strides sta/stb in
 * matrices over batch). */
static void
batch_offsets(Kb *k, const Type *batch, const int64_t *sta, const int64_t *stb, LLVMValueRef bi,
              LLVMValueRef *oa, LLVMValueRef *ob)
{
    *oa = cg_i64(k, 0);
    *ob = cg_i64(k, 0);
    for (int d = batch->rank - 1; d >= 0; d--) {
        int64_t dim = batch->dims[d];
        if (dim == 1)
            continue;
        LLVMValueRef id = LLVMBuildSRem(k->b, bi, cg_i64(k, dim), "");
        bi = LLVMBuildSDiv(k->b, bi, cg_i64(k, dim), "");
        *oa = cg_add(k, *oa, cg_mul(k, id, cg_i64(k, sta[d])));
        *ob = cg_add(k, *ob, cg_mul(k, id, cg_i64(k, stb[d])));
    }
}

static LLVMValueRef
ld32(Kb *k, ElemType e, LLVMValueRef base, LLVMValueRef idx)
{
    return LLVMBuildTrunc(k->b, cg_load_i64(k, e, base, idx), k->i32, "");
}

static bool
emit_direct(Kb *k, Node *n, const CgNodeArgs *a)
{
    Graph *g = k->g;
    const Type *at = &ir_value(g, n->in[0])->type, *bt = &ir_value(g, n->in[1])->type;
    Type a2, b2, batch;
    ir_matmul_promote(at, bt, &a2, &b2);
    int64_t M = a2.dims[a2.rank - 2], K = a2.dims[a2.rank - 1], N = b2.dims[b2.rank - 1];
    Type ba = a2, bb = b2;
    ba.rank -= 2;
    bb.rank -= 2;
    if (!shape_broadcast(&ba, &bb, &batch))
        return cg_fail(k, n, "batch dimensions do not broadcast");
    int64_t sta[IR_MAX_RANK], stb[IR_MAX_RANK];
    type_bcast_strides(&ba, &batch, sta);
    type_bcast_strides(&bb, &batch, stb);
    for (int d = 0; d < batch.rank; d++) {
        sta[d] *= M * K;
        stb[d] *= K * N;
    }
    int64_t nb = (int64_t)type_numel_unchecked(&batch);
    bool scaled = has(n, 4);
    bool zb_col = has(n, 3) && type_numel_unchecked(&ir_value(g, n->in[3])->type) != 1;
    bool sb_col = scaled && type_numel_unchecked(&ir_value(g, n->in[5])->type) != 1;
    LLVMValueRef null = LLVMConstPointerNull(k->ptr);
    LLVMValueRef io[8];
    for (uint32_t i = 0; i < 7; i++)
        io[i] = has(n, i) ? a->in[i] : null;
    io[7] = a->out[0];
    Par par;
    LLVMValueRef r = cg_par_begin(k, &par, nb * M, io, 8);
    LLVMValueRef t = LLVMBuildSDiv(k->b, r, cg_i64(k, M), ""), i = LLVMBuildSRem(k->b, r, cg_i64(k, M), "");
    LLVMValueRef oa, ob;
    batch_offsets(k, &batch, sta, stb, t, &oa, &ob);
    LLVMValueRef arow = cg_add(k, oa, cg_mul(k, i, cg_i64(k, K)));
    LLVMValueRef y = cg_gep(k, io[7], cg_mul(k, r, cg_i64(k, N * 4))); /* this row: int32 first */
    LLVMValueRef za = has(n, 2) ? ld32(k, ir_value(g, n->in[2])->type.elem, io[2], cg_i64(k, 0)) : cg_i32(k, 0);
    LLVMValueRef zb0 = has(n, 3) && !zb_col ? ld32(k, ir_value(g, n->in[3])->type.elem, io[3], cg_i64(k, 0))
                                            : cg_i32(k, 0);
    CgLoop lj, lk;
    LLVMValueRef j = cg_loop_begin(k, &lj, cg_i64(k, N));
    cg_store_raw(k, ET_I32, y, j, cg_i32(k, 0));
    cg_loop_end(k, &lj);
    LLVMValueRef kk = cg_loop_begin(k, &lk, cg_i64(k, K));
    LLVMValueRef av = LLVMBuildSub(k->b, ld32(k, at->elem, io[0], cg_add(k, arow, kk)), za, "");
    LLVMValueRef brow = cg_add(k, ob, cg_mul(k, kk, cg_i64(k, N)));
    j = cg_loop_begin(k, &lj, cg_i64(k, N));
    LLVMValueRef zb = zb_col ? ld32(k, bt->elem, io[3], j) : zb0;
    LLVMValueRef bv = LLVMBuildSub(k->b, ld32(k, bt->elem, io[1], cg_add(k, brow, j)), zb, "");
    LLVMValueRef acc = cg_load_raw(k, ET_I32, y, j);
    cg_store_raw(k, ET_I32, y, j, LLVMBuildAdd(k->b, acc, LLVMBuildMul(k->b, av, bv, ""), ""));
    cg_loop_end(k, &lj);
    cg_loop_end(k, &lk);
    if (scaled) { /* qn_scale_acc, + bias: in place over the row */
        LLVMValueRef sa = LLVMBuildLoad2(k->b, k->f32, io[4], "");
        j = cg_loop_begin(k, &lj, cg_i64(k, N));
        LLVMValueRef sb = cg_load_raw(k, ET_F32, io[5], sb_col ? j : cg_i64(k, 0));
        LLVMValueRef f = LLVMBuildSIToFP(k->b, cg_load_raw(k, ET_I32, y, j), k->f32, "");
        f = LLVMBuildFMul(k->b, f, LLVMBuildFMul(k->b, sa, sb, ""), "");
        if (has(n, 6))
            f = LLVMBuildFAdd(k->b, f, cg_load_raw(k, ET_F32, io[6], j), "");
        cg_store_raw(k, ET_F32, y, j, f);
        cg_loop_end(k, &lj);
    }
    cg_par_end(k, &par, a);
    return true;
}

bool
cg_emit_minteger(Kb *k, Node *n, const CgNodeArgs *a)
{
    return gemm_path(k, n) ? emit_gemm(k, n, a) : emit_direct(k, n, a);
}
