/* qmatmul_rt.c: qmatmul with a run-time right operand (qmatmul_rt.h) through the GEMM kernels.
 *
 * The product of two activations (attention: Q x K^T per head, then softmax(.) x V) has no
 * constant B to pack at compile time, so it runs in two phases, both split across the
 * parallel-for hook:
 *   1. pack: one unit per distinct B matrix (B's own batch index): the packer of
 *      gemm/pack_rt.h writes B's panels (u8 B flipped to s8, zero points shifted by -128) and
 *      the per-channel corrections (bias, zero-point and column-sum terms) into this node's
 *      scratch;
 *   2. GEMM: one unit per (output batch index, block of rows): the kernel cg_gemm_emit emits
 *      for the b_runtime spec (vpdpbusd / pmaddwd / sdot / smmla, whatever the ISA path),
 *      reading A's rows in place and its B matrix from the scratch (numpy batch broadcasting:
 *      a broadcast B is packed once).
 * The result is bit-identical to lib/ref's qmatmul (docs/numerics.md): the same int32
 * accumulator (the kernels' folding is exact modulo 2^32) and the same epilogue constants as the
 * constant-B path (qconv.c's epi_init). Everything this lowering does not take (e.g. a 16-bit
 * operand or a per-row scale) stays on the direct loops of qdirect.c. */
#include "codegen/lower/qmatmul_rt.h"

#include "codegen/gemm/pack_rt.h"
#include "codegen/lower/qconv.h"
#include "numerics/numerics.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct RtGeo {
    int64_t M, K, N;
    Type batch;                   /* the result's batch dims */
    int64_t st[3][IR_MAX_RANK];   /* element offsets per batch index of A, B, C */
    int64_t nb, nbB;              /* batch size of the result, distinct B matrices */
    bool has_bias;
} RtGeo;

static bool
is8(ElemType e)
{
    return e == ET_I8 || e == ET_U8;
}

/* The geometry and every condition of cg_qmatmul_rt_ok, without diagnostics. */
static bool
rt_geo(Kb *k, Node *n, RtGeo *r)
{
    Graph *g = k->g;
    memset(r, 0, sizeof *r);
    if (!cg_qmatmul_dynamic(k, n) || n->nin < 2 || n->nout != 1)
        return false;
    const Type *at = &ir_value(g, n->in[0])->type, *bt = &ir_value(g, n->in[1])->type;
    const Type *yt = &ir_value(g, n->out[0])->type;
    if (!at->q || !bt->q || !is8(at->elem) || !is8(bt->elem) || at->q->axis >= 0)
        return false;
    if (at->rank < 1 || bt->rank < 1 || at->rank > IR_MAX_RANK || bt->rank > IR_MAX_RANK)
        return false;
    if (bt->q->axis >= 0 && (bt->rank < 2 || bt->q->axis != bt->rank - 1))
        return false;
    bool yq8 = yt->q && yt->q->axis < 0 && is8(yt->elem);
    if (!yq8 && !((yt->elem == ET_I32 || yt->elem == ET_F32) && !yt->q))
        return false;
    Type a2, b2;
    ir_matmul_promote(at, bt, &a2, &b2);
    r->M = a2.dims[a2.rank - 2];
    r->K = a2.dims[a2.rank - 1];
    r->N = b2.dims[b2.rank - 1];
    if (b2.dims[b2.rank - 2] != r->K || r->M < 1 || r->K < 1 || r->N < 1 || r->K > (1 << 24) ||
        r->N > (1 << 24))
        return false;
    if (bt->q->axis >= 0 && bt->q->n != (uint32_t)r->N)
        return false;
    r->has_bias = n->nin > 2 && n->in[2].id;
    if (r->has_bias) {
        const Type *ct = &ir_value(g, n->in[2])->type;
        if (ct->elem != ET_I32 || (int64_t)type_numel_unchecked(ct) != r->N)
            return false;
    }
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
    r->nbB = (int64_t)type_numel_unchecked(&bb);
    if (r->nb < 1 || r->nbB < 1)
        return false;
    if (yq8) /* the epilogue must be representable (else qdirect reports) */
        for (int64_t m = 0; m < (bt->q->axis >= 0 ? r->N : 1); m++)
            if (!k->rq->mult_ok(at->q->scale[0], bt->q->scale[m], yt->q->scale[0]))
                return false;
    return true;
}

/* The b_runtime spec of n (zb: caller-owned array of N entries, filled here). */
static bool
rt_spec(Kb *k, Node *n, const RtGeo *r, const Epi *e, int32_t *zb, CgGemmSpec *s, CgGemmRtB *rb)
{
    const Type *bt = &ir_value(k->g, n->in[1])->type;
    int shift = bt->elem == ET_U8 ? 128 : 0;
    for (int64_t j = 0; j < r->N; j++)
        zb[j] = bt->q->zp[bt->q->axis >= 0 ? j : 0] - shift;
    CgGemmElem ae = CG_GEMM_I8;
    int32_t za = 0;
    if (!cg_gemm_a_of(k, n, &ae, &za))
        return false;
    *s = cg_gemm_spec(r->M, r->N, r->K, r->N, ae, za, NULL, CG_GEMM_B_NK, zb, NULL,
                      cg_epi_gemm(e, 0));
    s->b_runtime = true;
    *rb = (CgGemmRtB){.b_signed = bt->elem == ET_I8,
                      .sn = 1, /* B is [.., K, N] row-major */
                      .sk = r->N,
                      .rt_bias = r->has_bias};
    return true;
}

static int64_t
scratch_of(Kb *k, const RtGeo *r, const CgGemmSpec *s, int64_t *bpack, int64_t *cbb)
{
    char err[256];
    if (!cg_gemm_rt_sizes(k->t, k->isa, s, bpack, cbb, err, sizeof err))
        return -1;
    return r->nbB * (*bpack + *cbb);
}

/* Everything needed to size or emit n; false (quietly) when n does not take this path. */
typedef struct Rt {
    RtGeo geo;
    Epi epi;
    int32_t *zb;
    CgGemmSpec spec;
    CgGemmRtB rb;
    int64_t bpack, cbb, scratch;
} Rt;

static void
rt_free(Rt *t)
{
    cg_epi_free(&t->epi);
    free(t->zb);
}

static bool
rt_init(Kb *k, Node *n, Rt *t)
{
    memset(t, 0, sizeof *t);
    if (!rt_geo(k, n, &t->geo))
        return false;
    const Type *bt = &ir_value(k->g, n->in[1])->type;
    if (!cg_epi_init(k, n, t->geo.N, bt->q->axis >= 0 ? bt->q->axis : 0, &t->epi))
        return false; /* not after rt_geo's checks */
    t->zb = xmalloc((size_t)t->geo.N * sizeof *t->zb);
    if (!rt_spec(k, n, &t->geo, &t->epi, t->zb, &t->spec, &t->rb) ||
        (t->scratch = scratch_of(k, &t->geo, &t->spec, &t->bpack, &t->cbb)) < 0) {
        rt_free(t);
        return false;
    }
    return true;
}

bool
cg_qmatmul_rt_ok(Kb *k, Node *n)
{
    RtGeo r;
    return rt_geo(k, n, &r);
}

int64_t
cg_qmatmul_rt_scratch(Kb *k, Node *n)
{
    Rt t;
    if (!rt_init(k, n, &t))
        return 0;
    int64_t s = t.scratch;
    rt_free(&t);
    return s;
}

static void
internal_noinline(Kb *k, LLVMValueRef f)
{
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(k->c, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
}

/* Element offsets (i64) of A, B, C for the flat result batch index bi. */
static void
batch_offsets(Kb *k, const RtGeo *r, LLVMValueRef bi, LLVMValueRef *off)
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

bool
cg_emit_qmatmul_rt(Kb *k, Node *n, const CgNodeArgs *a)
{
    Rt t;
    if (!rt_init(k, n, &t))
        return cg_fail(k, n, "run-time qmatmul: operands not supported by the GEMM path");
    const RtGeo *r = &t.geo;
    char pname[96], gname[96], err[512];
    snprintf(pname, sizeof pname, "%s.packb%u", k->prefix, k->counter++);
    snprintf(gname, sizeof gname, "%s.gemm%u", k->prefix, k->counter++);
    LLVMValueRef pf = cg_gemm_rt_emit_pack(k->mod, k->t, k->isa, &t.spec, &t.rb, pname, err, sizeof err);
    LLVMValueRef gf = pf ? cg_gemm_emit(k->mod, k->t, k->isa, &t.spec, gname, err, sizeof err) : NULL;
    if (!gf) {
        rt_free(&t);
        return cg_fail(k, n, "GEMM: %s", err);
    }
    internal_noinline(k, pf);
    internal_noinline(k, gf);
    int64_t per = t.bpack + t.cbb, oes = (int64_t)elem_size(ir_value(k->g, n->out[0])->type.elem);
    LLVMTypeRef pt4[4] = {k->ptr, k->ptr, k->ptr, k->ptr};
    LLVMTypeRef pt6[6] = {k->ptr, k->ptr, k->i64, k->i64, k->ptr, k->ptr};

    /* 1. pack every distinct B */
    Par par;
    LLVMValueRef pp[3] = {a->in[1], a->scratch, r->has_bias ? a->in[2] : LLVMConstPointerNull(k->ptr)};
    LLVMValueRef jb = cg_par_begin(k, &par, r->nbB, pp, 3);
    LLVMValueRef dst = cg_gep(k, pp[1], cg_mul(k, jb, cg_i64(k, per)));
    LLVMValueRef pargs[4] = {cg_gep(k, pp[0], cg_mul(k, jb, cg_i64(k, r->K * r->N))), dst,
                             cg_gep(k, dst, cg_i64(k, t.bpack)), pp[2]};
    LLVMBuildCall2(k->b, LLVMFunctionType(k->vd, pt4, 4, 0), pf, pargs, 4, "");
    cg_par_end(k, &par, a);

    /* 2. GEMM units: (batch index, block of rows); about 16 units in all when M allows */
    int rbk = cg_gemm_row_block(k->t, k->isa, &t.spec);
    int64_t rb = rbk > 0 ? rbk : 1, ntiles = (r->M + rb - 1) / rb;
    int64_t want = (16 + r->nb - 1) / r->nb;
    int64_t nblk = want < ntiles ? want : ntiles;
    int64_t rows = (ntiles + nblk - 1) / nblk * rb;
    nblk = (r->M + rows - 1) / rows;
    LLVMValueRef gp[3] = {a->in[0], a->out[0], a->scratch};
    LLVMValueRef u = cg_par_begin(k, &par, r->nb * nblk, gp, 3);
    LLVMValueRef bi = LLVMBuildSDiv(k->b, u, cg_i64(k, nblk), "");
    LLVMValueRef m0 = cg_mul(k, LLVMBuildSRem(k->b, u, cg_i64(k, nblk), ""), cg_i64(k, rows));
    LLVMValueRef m1 = cg_smin(k, cg_add(k, m0, cg_i64(k, rows)), cg_i64(k, r->M));
    LLVMValueRef off[3];
    batch_offsets(k, r, bi, off);
    LLVMValueRef jB = r->nbB > 1 ? LLVMBuildSDiv(k->b, off[1], cg_i64(k, r->K * r->N), "") : cg_i64(k, 0);
    LLVMValueRef pb = cg_gep(k, gp[2], cg_mul(k, jB, cg_i64(k, per)));
    LLVMValueRef gargs[6] = {cg_gep(k, gp[0], off[0]), cg_gep(k, gp[1], cg_mul(k, off[2], cg_i64(k, oes))),
                             m0, m1, pb, cg_gep(k, pb, cg_i64(k, t.bpack))};
    LLVMBuildCall2(k->b, LLVMFunctionType(k->vd, pt6, 6, 0), gf, gargs, 6, "");
    cg_par_end(k, &par, a);
    rt_free(&t);
    return true;
}
