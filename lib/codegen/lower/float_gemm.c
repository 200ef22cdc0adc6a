/* float_gemm.c: f32 matmul and gemm on the f32 GEMM kernels (gemm/sgemm.h).
 *
 * matmul: numpy batch broadcasting (rank-1 operands promoted); one kernel per node, called per
 * (batch index, block of rows) across the parallel-for hook. A constant B whose batch is one
 * matrix is packed at compile time (the operand is then not materialised); a B with one matrix
 * (constant or not) makes the batch of A part of M (one [batch*M, K] x [K, N]); otherwise the kernel
 * packs B at run time from its [K, N] layout (attention's Q x K^T and P x V).
 * gemm: transA / transB as strides of A and B (a constant B packed at compile time in either
 * form); alpha in the kernel's epilogue; a constant C of one value or one per column is folded
 * to bias[n] = beta * C[n] (one f32 product, as the reference) and added by the kernel; any other
 * C is added after the kernel, row by row in the same units: y = y + beta * C[i, j].
 * The order of every element is the one of sgemm.h and of lib/ref (docs/numerics.md, "Float
 * matrix products"), so the results are bit-identical to the reference. */
#include "codegen/lower/lower.h"

#include "codegen/gemm/sgemm.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct FgGeo {
    int64_t M, K, N;
    Type batch;
    int64_t st[3][IR_MAX_RANK]; /* element offsets per batch index of A, B, C */
    int64_t nb;
    const Tensor *bconst;       /* constant B packed at compile time, or NULL */
    /* gemm */
    bool ta, tb;
    float alpha, beta;
    const Tensor *cconst;       /* C folded into the kernel's bias, or NULL */
    bool c_post;                /* C added after the kernel */
    int64_t cst[2];
} FgGeo;

static bool
f32_operands(Graph *g, Node *n)
{
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->in[i].id && ir_value(g, n->in[i])->type.elem != ET_F32)
            return false;
    return ir_value(g, n->out[0])->type.elem == ET_F32;
}

static bool
geo(Graph *g, Node *n, FgGeo *r)
{
    memset(r, 0, sizeof *r);
    if ((n->op != OP_MATMUL && n->op != OP_GEMM) || !f32_operands(g, n))
        return false;
    const Type *at = &ir_value(g, n->in[0])->type, *bt = &ir_value(g, n->in[1])->type;
    const Type *yt = &ir_value(g, n->out[0])->type;
    const Tensor *bc = ir_const_of(g, n->in[1]);
    r->alpha = 1.0f;
    if (n->op == OP_GEMM) {
        if (at->rank != 2 || bt->rank != 2 || yt->rank != 2)
            return false;
        r->ta = ir_attr_int(g, n, "transA", 0) != 0;
        r->tb = ir_attr_int(g, n, "transB", 0) != 0;
        r->alpha = ir_attr_float(g, n, "alpha", 1.0f);
        r->beta = ir_attr_float(g, n, "beta", 1.0f);
        r->M = yt->dims[0];
        r->N = yt->dims[1];
        r->K = r->ta ? at->dims[0] : at->dims[1];
        r->nb = 1;
        r->bconst = bc;
        if (n->nin > 2 && n->in[2].id) {
            const Type *ct = &ir_value(g, n->in[2])->type;
            if (ct->rank > 2)
                return false;
            const Tensor *cc = ir_const_of(g, n->in[2]);
            int64_t cn = (int64_t)type_numel_unchecked(ct);
            bool row = cn == 1 || (cn == r->N && (ct->rank == 1 || ct->dims[0] == 1));
            if (cc && row)
                r->cconst = cc;
            else {
                r->c_post = true;
                int64_t cst[IR_MAX_RANK] = {0, 0};
                type_bcast_strides(ct, yt, cst);
                r->cst[0] = cst[0];
                r->cst[1] = cst[1];
            }
        }
        return true;
    }
    Type a2, b2;
    ir_matmul_promote(at, bt, &a2, &b2);
    r->M = a2.dims[a2.rank - 2];
    r->K = a2.dims[a2.rank - 1];
    r->N = b2.dims[b2.rank - 1];
    if (b2.dims[b2.rank - 2] != r->K)
        return false;
    Type ba = a2, bb = b2;
    ba.rank -= 2;
    bb.rank -= 2;
    if (!shape_broadcast(&ba, &bb, &r->batch))
        return false;
    type_bcast_strides(&ba, &r->batch, r->st[0]);
    type_bcast_strides(&bb, &r->batch, r->st[1]);
    type_strides(&r->batch, r->st[2]);
    for (int d = 0; d < r->batch.rank; d++) {
        r->st[0][d] *= r->M * r->K;
        r->st[1][d] *= r->K * r->N;
        r->st[2][d] *= r->M * r->N;
    }
    r->nb = (int64_t)type_numel_unchecked(&r->batch);
    if (type_numel_unchecked(&bb) == 1) {
        r->bconst = bc;
        /* B is one matrix for every batch index: A [batch.., M, K] and C [batch.., M, N] are
         * contiguous over the batch, so the product is one [nb*M, K] x [K, N] (torch's Linear on
         * a [L, 1, E] sequence-first activation: L batches of one row otherwise). Each element
         * keeps its chain over K: the same bits */
        if (r->nb > 1) {
            r->M *= r->nb;
            r->nb = 1;
            r->batch.rank = 0;
            memset(r->st, 0, sizeof r->st);
        }
    }
    return true;
}

bool
cg_float_gemm_ok(Kb *k, Node *n)
{
    FgGeo r;
    return geo(k->g, n, &r);
}

bool
cg_float_gemm_static(Kb *k, Node *n, uint32_t i)
{
    FgGeo r;
    if (!geo(k->g, n, &r) || r.M < 1 || r.N < 1 || r.K < 1 || r.nb < 1)
        return false;
    return (i == 1 && r.bconst) || (i == 2 && r.cconst);
}

/* Element offsets (i64) of A, B, C for the flat result batch index bi. */
static void
batch_offsets(Kb *k, const FgGeo *r, LLVMValueRef bi, LLVMValueRef *off)
{
    for (int j = 0; j < 3; j++)
        off[j] = cg_i64(k, 0);
    for (int d = r->batch.rank - 1; d >= 0; d--) {
        int64_t dim = r->batch.dims[d];
        if (dim == 1)
            continue;
        LLVMValueRef id = LLVMBuildSRem(k->b, bi, cg_i64(k, dim), "");
        bi = LLVMBuildSDiv(k->b, bi, cg_i64(k, dim), "");
        for (int j = 0; j < 3; j++)
            if (r->st[j][d])
                off[j] = cg_add(k, off[j], cg_mul(k, id, cg_i64(k, r->st[j][d])));
    }
}

/* gf(A, C, m0, m1, B) on the matrices of batch index bi (B NULL: packed in the kernel) */
static void
call_kernel(Kb *k, LLVMValueRef gf, const FgGeo *r, LLVMValueRef A, LLVMValueRef C, LLVMValueRef B,
            LLVMValueRef bi, LLVMValueRef m0, LLVMValueRef m1)
{
    LLVMValueRef off[3];
    batch_offsets(k, r, bi, off);
    LLVMTypeRef pt[5] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr};
    LLVMValueRef args[5] = {cg_gep(k, A, cg_mul(k, off[0], cg_i64(k, 4))),
                            cg_gep(k, C, cg_mul(k, off[2], cg_i64(k, 4))), m0, m1,
                            B ? cg_gep(k, B, cg_mul(k, off[1], cg_i64(k, 4))) : LLVMConstPointerNull(k->ptr)};
    LLVMBuildCall2(k->b, LLVMFunctionType(k->vd, pt, 5, 0), gf, args, 5, "");
}

static float *
tensor_f32(const Tensor *t)
{
    size_t n = type_numel_unchecked(&t->type);
    float *f = xmalloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)tensor_get_f(t, i);
    return f;
}

bool
cg_emit_float_gemm(Kb *k, Node *n, const CgNodeArgs *a)
{
    FgGeo r;
    if (!geo(k->g, n, &r))
        return cg_fail(k, n, "operands not supported by the f32 GEMM");
    if (r.M < 1 || r.N < 1 || r.nb < 1)
        return true; /* an empty result */
    bool empty_k = r.K < 1; /* no products: acc = +0.0f */
    CgSgemmSpec s;
    memset(&s, 0, sizeof s);
    s.m = r.M, s.n = r.N, s.k = r.K;
    s.lda = r.ta ? 1 : r.K;
    s.sak = r.ta ? r.M : 1;
    s.ldc = r.N;
    s.sbk = r.tb ? 1 : r.N;
    s.sbn = r.tb ? r.K : 1;
    s.alpha = r.alpha;
    float *bdata = r.bconst && !empty_k ? tensor_f32(r.bconst) : NULL;
    float *bias = NULL;
    if (r.cconst) {
        float *cv = tensor_f32(r.cconst);
        bool one = type_numel_unchecked(&r.cconst->type) == 1;
        bias = xmalloc((size_t)r.N * sizeof *bias);
        for (int64_t j = 0; j < r.N; j++) {
            float p = r.beta * cv[one ? 0 : j]; /* one f32 product, as the reference */
            bias[j] = p;
        }
        free(cv);
    }
    s.b = bdata;
    s.bias = bias;
    LLVMValueRef gf = NULL;
    int rb = 1;
    if (!empty_k) {
        char name[96], err[512];
        snprintf(name, sizeof name, "%s.sgemm%u", k->prefix, k->counter++);
        gf = cg_sgemm_emit(k->mod, k->t, k->isa, &s, name, err, sizeof err);
        rb = gf ? cg_sgemm_row_block(k->t, k->isa, &s) : 1;
        if (!gf) {
            free(bdata);
            free(bias);
            return cg_fail(k, n, "f32 GEMM: %s", err);
        }
        LLVMSetLinkage(gf, LLVMInternalLinkage);
        LLVMAddAttributeAtIndex(gf, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    }
    /* one thread (no parallel-for hook): the kernel over all rows of each matrix, so that its
     * own row blocks (mc) set how often a constant B is read, not the units below */
    CgIf whole;
    bool seq_whole = gf && !r.c_post;
    if (seq_whole) {
        cg_if_begin(k, &whole, LLVMBuildIsNull(k->b, a->pf, ""));
        CgLoop lb;
        LLVMValueRef b0 = cg_loop_begin(k, &lb, cg_i64(k, r.nb));
        call_kernel(k, gf, &r, a->in[0], a->out[0], r.bconst ? NULL : a->in[1], b0, cg_i64(k, 0),
                    cg_i64(k, r.M));
        cg_loop_end(k, &lb);
        cg_if_else(k, &whole);
    }
    /* units: (batch index, block of whole row tiles), about 16 in all when M allows */
    int64_t ntiles = (r.M + rb - 1) / rb;
    int64_t want = (16 + r.nb - 1) / r.nb;
    int64_t nblk = want < ntiles ? want : ntiles;
    int64_t rows = (ntiles + nblk - 1) / nblk * rb;
    nblk = (r.M + rows - 1) / rows;
    LLVMValueRef nul = LLVMConstPointerNull(k->ptr);
    LLVMValueRef io[4] = {a->in[0] ? a->in[0] : nul, a->out[0], a->in[1] ? a->in[1] : nul,
                          r.c_post ? a->in[2] : nul};
    Par par;
    LLVMValueRef u = cg_par_begin(k, &par, r.nb * nblk, io, 4);
    LLVMValueRef bi = LLVMBuildSDiv(k->b, u, cg_i64(k, nblk), "");
    LLVMValueRef m0 = cg_mul(k, LLVMBuildSRem(k->b, u, cg_i64(k, nblk), ""), cg_i64(k, rows));
    LLVMValueRef m1 = cg_smin(k, cg_add(k, m0, cg_i64(k, rows)), cg_i64(k, r.M));
    LLVMValueRef off[3];
    batch_offsets(k, &r, bi, off);
    LLVMValueRef cbase = cg_gep(k, io[1], cg_mul(k, off[2], cg_i64(k, 4)));
    if (gf)
        call_kernel(k, gf, &r, io[0], io[1], r.bconst ? NULL : io[2], bi, m0, m1);
    if (empty_k || r.c_post) {
        /* y = alpha * 0 (K = 0) [+ bias[j]], then y = y + beta * C[i, j], row by row */
        CgLoop li, lj;
        LLVMValueRef vi = cg_loop_begin(k, &li, LLVMBuildSub(k->b, m1, m0, ""));
        LLVMValueRef i = cg_add(k, vi, m0);
        LLVMValueRef vj = cg_loop_begin(k, &lj, cg_i64(k, r.N));
        LLVMValueRef yi = cg_add(k, cg_mul(k, i, cg_i64(k, r.N)), vj);
        LLVMValueRef v;
        if (empty_k) {
            v = cg_f32(k, 0.0f);
            if (r.alpha != 1.0f)
                v = LLVMBuildFMul(k->b, cg_f32(k, r.alpha), v, "");
            if (bias)
                v = LLVMBuildFAdd(k->b, v, cg_load_raw(k, ET_F32, cg_const_bytes(k, bias, (size_t)r.N * 4, "bias"), vj), "");
        } else {
            v = cg_load_raw(k, ET_F32, cbase, yi);
        }
        if (r.c_post) {
            LLVMValueRef ci = cg_add(k, cg_mul(k, i, cg_i64(k, r.cst[0])), cg_mul(k, vj, cg_i64(k, r.cst[1])));
            LLVMValueRef cv = cg_load_raw(k, ET_F32, io[3], ci);
            v = LLVMBuildFAdd(k->b, v, LLVMBuildFMul(k->b, cg_f32(k, r.beta), cv, ""), "");
        }
        cg_store_raw(k, ET_F32, cbase, yi, v);
        cg_loop_end(k, &lj);
        cg_loop_end(k, &li);
    }
    cg_par_end(k, &par, a);
    if (seq_whole)
        cg_if_end(k, &whole);
    free(bdata);
    free(bias);
    return true;
}
