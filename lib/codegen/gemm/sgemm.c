/* sgemm.c: the f32 GEMM kernel generator (sgemm.h): packing of a constant B, the loop structure
 * (row blocks of mc rows, K chunks of kc, panels of nr = nv * vl columns, register tiles of mr
 * rows) and the register-blocked FMA microkernel. The path's tile (vl, mr, nv) comes from its
 * row of the GEMM table (GemmUk.f32_*, gemm/isa.c); the IR is the same on every path (vectors of
 * vl floats, llvm.fma), so every path computes the same chain (sgemm.h). */
#include "codegen/gemm/sgemm.h"

#include "codegen/gemm/gemm_impl.h"
#include "codegen/irb/core.h"
#include "codegen/target/module.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct SPlan {
    const CgIsaDesc *desc; /* the path's record */
    const GemmUk *uk;
    int vl, mr, nv, ku;
    int64_t nr, npf;            /* columns per full panel, full panels */
    int nv_tail;                /* vectors of the tail panel (0: none) */
    int tail_lanes;             /* valid lanes of the tail panel's last vector */
    int64_t kc, nkc, mc;        /* K chunk, chunks, rows per block */
} SPlan;

static bool
splan(SPlan *p, const CgTarget *t, CgGemmIsa isa, const CgSgemmSpec *s, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->uk = gemm_uk(isa);
    p->desc = cg_isa_desc(t, isa);
    if (!p->uk || !cg_gemm_isa_supported(t, isa) || !p->uk->f32_vl) {
        snprintf(err, errlen, "f32 GEMM: path '%s' is not supported by the target",
                 cg_gemm_isa_name(isa));
        return false;
    }
    if (s->m < 1 || s->n < 1 || s->k < 1 || s->ldc < s->n || s->lda < 0 || s->sak < 0) {
        snprintf(err, errlen, "f32 GEMM: invalid shape %lldx%lldx%lld", (long long)s->m,
                 (long long)s->n, (long long)s->k);
        return false;
    }
    p->vl = p->uk->f32_vl;
    p->mr = s->tile.mr > 0 ? s->tile.mr : p->uk->f32_mr;
    p->nv = s->tile.nv > 0 ? s->tile.nv : p->uk->f32_nv;
    if (p->mr < 1 || p->nv < 1 || p->nv > 8 || p->mr * p->nv > (int)p->desc->gemm_max_acc) {
        snprintf(err, errlen, "f32 GEMM: tile %dx%d: at most 8 vectors and %u accumulators", p->mr,
                 p->nv, p->desc->gemm_max_acc);
        return false;
    }
    p->ku = s->tile.kunroll > 0 ? s->tile.kunroll : 4;
    p->nr = (int64_t)p->nv * p->vl;
    p->npf = s->n / p->nr;
    int64_t rem = s->n - p->npf * p->nr;
    p->nv_tail = (int)((rem + p->vl - 1) / p->vl);
    p->tail_lanes = rem ? (int)(rem - (int64_t)(p->nv_tail - 1) * p->vl) : p->vl;
    /* a K chunk of one panel: about 128 KiB (L2), so the A block and the chunk stay in L2 */
    p->kc = s->tile.kc > 0 ? s->tile.kc : (32768 / p->nr > 64 ? 32768 / p->nr : 64);
    if (p->kc > s->k)
        p->kc = s->k;
    p->nkc = (s->k + p->kc - 1) / p->kc;
    /* row blocks of about 192 rows (the A block beside the chunk in L2), balanced: M = 197 is
     * one block of 198, not 192 + 5 (a second pass over all of B for 5 rows) */
    int64_t mc = s->tile.mc;
    if (mc <= 0) {
        int64_t nblk = (s->m + 96) / 192;
        nblk = nblk < 1 ? 1 : nblk;
        mc = (s->m + nblk - 1) / nblk;
    }
    p->mc = (mc + p->mr - 1) / p->mr * p->mr;
    return true;
}

int
cg_sgemm_row_block(const CgTarget *t, CgGemmIsa isa, const CgSgemmSpec *s)
{
    SPlan p;
    char err[128];
    return splan(&p, t, isa, s, err, sizeof err) ? p.mr : 1;
}

int64_t
cg_sgemm_stack_bytes(const CgTarget *t, CgGemmIsa isa, const CgSgemmSpec *s)
{
    SPlan p;
    char err[128];
    if (!splan(&p, t, isa, s, err, sizeof err) || s->b)
        return 0;
    return p.kc * p.nr * 4;
}

/* ---- emission state ---- */

typedef struct SG {
    IRB_EMBED; /* c, mod, b, fn, the types (irb/core.h) */
    const CgSgemmSpec *s;
    const SPlan *p;
    LLVMTypeRef vty;
    LLVMValueRef A, C, mb, me, B;  /* arguments */
    LLVMValueRef gb, gbias, buf;   /* packed constant B, padded bias, run-time B chunk */
    /* sized by the tile (mr x nv accumulators, at most the path record's gemm_max_acc): */
    LLVMValueRef *acc;             /* accumulator slots (allocas, promoted by mem2reg) */
    LLVMValueRef *accv;            /* their values in the K loop */
    LLVMValueRef *rowp, *crow, *valid; /* per row of the tile: A row, C row, row < m_end */
    LLVMValueRef fma;              /* llvm.fma.v<vl>f32 declaration */
    LLVMTypeRef fma_ty;
} SG;

static LLVMValueRef
ci(SG *g, int64_t v)
{
    return LLVMConstInt(g->i64, (unsigned long long)v, 1);
}

static LLVMValueRef
add(SG *g, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildNSWAdd(g->b, a, b, "");
}

static LLVMValueRef
mul(SG *g, LLVMValueRef a, int64_t c)
{
    return c == 1 ? a : LLVMBuildNSWMul(g->b, a, ci(g, c), "");
}

static LLVMValueRef
gepf(SG *g, LLVMValueRef base, LLVMValueRef off)
{
    return LLVMBuildInBoundsGEP2(g->b, g->f32, base, &off, 1, "");
}

static LLVMValueRef
smin(SG *g, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, a, b, ""), a, b, "");
}

static LLVMValueRef
vload(SG *g, LLVMValueRef ptr, unsigned align)
{
    return irb_load(&g->ir, g->vty, ptr, align);
}

static void
vstore(SG *g, LLVMValueRef v, LLVMValueRef ptr)
{
    irb_store(&g->ir, v, ptr, 4);
}

/* The mask of the first `lanes` lanes. */
static LLVMValueRef
lane_mask(SG *g, int lanes)
{
    LLVMValueRef e[64];
    for (int i = 0; i < g->p->vl; i++)
        e[i] = LLVMConstInt(g->i1, i < lanes, 0);
    return LLVMConstVector(e, (unsigned)g->p->vl);
}

static LLVMValueRef
masked_load(SG *g, LLVMValueRef ptr, int lanes)
{
    return irb_masked_load(g->b, g->c, g->mod, g->vty, ptr, lane_mask(g, lanes), LLVMConstNull(g->vty), 4);
}

static void
masked_store(SG *g, LLVMValueRef v, LLVMValueRef ptr, int lanes)
{
    irb_masked_store(g->b, g->c, g->mod, v, ptr, lane_mask(g, lanes), 4);
}

static void
loop_end(SG *g, IrbLoop *l, unsigned hints)
{
    irb_loop_hint(g->c, irb_loop_latch(g->b, l), hints);
    LLVMPositionBuilderAtEnd(g->b, l->exit);
}

static LLVMValueRef
loop_begin(SG *g, IrbLoop *l, LLVMValueRef start, LLVMValueRef end, int64_t step, const char *nm)
{
    return irb_loop_begin(g->b, g->c, g->fn, l, start, end, ci(g, step), nm, nm, nm, nm);
}

/* ---- the microkernel ---- */

/* llvm.prefetch (read, locality 2: L2, data) of base + off floats; a plain GEP, as a prefetch
 * may point past the end of B */
static void
prefetch_l2(SG *g, LLVMValueRef base, int64_t off)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(g->c);
    LLVMValueRef o = ci(g, off);
    LLVMValueRef args[4] = {LLVMBuildGEP2(g->b, g->f32, base, &o, 1, ""), LLVMConstInt(i32, 0, 0),
                            LLVMConstInt(i32, 2, 0), LLVMConstInt(i32, 1, 0)};
    LLVMTypeRef ov = g->ptr;
    irb_intr(g->b, g->c, g->mod, "llvm.prefetch", &ov, 1, args, 4);
}

/* One register tile: rows [r0, r0 + mr) of the block ending at me (rows past me recompute the
 * last row and are not stored), `nv` vectors of columns from n0 (the last with `last` valid
 * lanes), over the K chunk [k0, k0 + kl) of the panel whose packed chunk starts at bp (k-major,
 * stride nrp floats). first/last_chunk: i1 (NULL = true). pf: also prefetch into L2 the lines
 * the next panel reads at each k (a constant B's panels are K * nr floats apart), so that the
 * next panel's first tile does not wait on B from DRAM or L3. */
static void
tile(SG *g, LLVMValueRef r0, LLVMValueRef bp, int64_t nrp, int nv, int last, LLVMValueRef n0,
     LLVMValueRef k0, LLVMValueRef kl, LLVMValueRef first, LLVMValueRef lastc, bool pf)
{
    const SPlan *p = g->p;
    const CgSgemmSpec *s = g->s;
    int mr = p->mr, vl = p->vl;
    LLVMBuilderRef b = g->b;
    LLVMValueRef *rowp = g->rowp, *crow = g->crow, *valid = g->valid;
    LLVMValueRef mlast = LLVMBuildNSWSub(b, g->me, ci(g, 1), "");
    for (int r = 0; r < mr; r++) {
        LLVMValueRef m = add(g, r0, ci(g, r));
        valid[r] = r ? LLVMBuildICmp(b, LLVMIntSLT, m, g->me, "") : NULL;
        LLVMValueRef mc = r ? smin(g, m, mlast) : m;
        rowp[r] = gepf(g, g->A, add(g, mul(g, mc, s->lda), mul(g, k0, s->sak)));
        crow[r] = gepf(g, gepf(g, g->C, mul(g, mc, s->ldc)), n0);
    }
    /* accumulators: zero on the first chunk, else C's partial sums */
    LLVMValueRef zero = LLVMConstNull(g->vty);
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++) {
            LLVMValueRef init = zero;
            if (first) {
                LLVMValueRef cp = gepf(g, crow[r], ci(g, (int64_t)v * vl));
                LLVMValueRef cv = v == nv - 1 && last < vl ? masked_load(g, cp, last) : vload(g, cp, 4);
                init = LLVMBuildSelect(b, first, zero, cv, "");
            }
            LLVMBuildStore(b, init, g->acc[r * nv + v]);
        }
    /* K: ku k per step, then one at a time */
    for (int pass = 0; pass < 2; pass++) {
        int u = pass == 0 ? p->ku : 1;
        if (pass == 1 && p->ku == 1)
            break;
        IrbLoop l;
        LLVMValueRef start, end;
        LLVMValueRef kmain = mul(g, LLVMBuildSDiv(b, kl, ci(g, p->ku), ""), p->ku);
        start = pass == 0 ? ci(g, 0) : kmain;
        end = pass == 0 ? kmain : kl;
        LLVMValueRef kk = loop_begin(g, &l, start, end, u, pass ? "k1" : "k");
        LLVMValueRef *accv = g->accv;
        for (int i = 0; i < mr * nv; i++)
            accv[i] = LLVMBuildLoad2(b, g->vty, g->acc[i], "");
        for (int j = 0; j < u; j++) {
            LLVMValueRef kj = add(g, kk, ci(g, j));
            LLVMValueRef bv[8];
            LLVMValueRef brow = gepf(g, bp, mul(g, kj, nrp));
            for (int v = 0; v < nv; v++)
                bv[v] = vload(g, gepf(g, brow, ci(g, (int64_t)v * vl)), 4);
            for (int v = 0; pf && v < nv; v++)
                prefetch_l2(g, brow, s->k * p->nr + (int64_t)v * vl);
            for (int r = 0; r < mr; r++) {
                LLVMValueRef as = LLVMBuildLoad2(b, g->f32, gepf(g, rowp[r], mul(g, kj, s->sak)), "");
                LLVMValueRef av = irb_splat(b, g->c, as, (unsigned)vl);
                for (int v = 0; v < nv; v++) {
                    LLVMValueRef args[3] = {av, bv[v], accv[r * nv + v]};
                    accv[r * nv + v] = LLVMBuildCall2(b, g->fma_ty, g->fma, args, 3, "");
                }
            }
        }
        for (int i = 0; i < mr * nv; i++)
            LLVMBuildStore(b, accv[i], g->acc[i]);
        loop_end(g, &l, IRB_NO_VECTORIZE | IRB_NO_UNROLL);
    }
    /* epilogue on the last chunk, then the rows inside the block */
    for (int r = 0; r < mr; r++) {
        LLVMValueRef vals[8];
        for (int v = 0; v < nv; v++) {
            LLVMValueRef acc = LLVMBuildLoad2(b, g->vty, g->acc[r * nv + v], "");
            LLVMValueRef e = acc;
            if (s->alpha != 1.0f)
                e = LLVMBuildFMul(b, irb_splat(b, g->c, LLVMConstReal(g->f32, s->alpha), (unsigned)vl), e, "");
            if (g->gbias)
                e = LLVMBuildFAdd(b, e, vload(g, gepf(g, g->gbias, add(g, n0, ci(g, (int64_t)v * vl))), 4), "");
            vals[v] = lastc && e != acc ? LLVMBuildSelect(b, lastc, e, acc, "") : e;
        }
        LLVMBasicBlockRef st = NULL, join = NULL;
        if (valid[r]) {
            st = LLVMAppendBasicBlockInContext(g->c, g->fn, "store");
            join = LLVMAppendBasicBlockInContext(g->c, g->fn, "stored");
            LLVMBuildCondBr(b, valid[r], st, join);
            LLVMPositionBuilderAtEnd(b, st);
        }
        for (int v = 0; v < nv; v++) {
            LLVMValueRef cp = gepf(g, crow[r], ci(g, (int64_t)v * vl));
            if (v == nv - 1 && last < vl)
                masked_store(g, vals[v], cp, last);
            else
                vstore(g, vals[v], cp);
        }
        if (valid[r]) {
            LLVMBuildBr(b, join);
            LLVMPositionBuilderAtEnd(b, join);
        }
    }
}

/* Pack the K chunk [k0, k0 + kl) of the run-time B's columns [n0, n0 + nv*vl) into g->buf
 * (k-major, nv*vl floats per k, zeros past N). */
static void
pack_chunk(SG *g, LLVMValueRef n0, int nv, int last, LLVMValueRef k0, LLVMValueRef kl)
{
    const CgSgemmSpec *s = g->s;
    const SPlan *p = g->p;
    int vl = p->vl;
    int64_t nrp = (int64_t)nv * vl;
    IrbLoop l;
    LLVMValueRef kk = loop_begin(g, &l, ci(g, 0), kl, 1, "pk");
    LLVMValueRef src = gepf(g, g->B, add(g, mul(g, add(g, k0, kk), s->sbk), mul(g, n0, s->sbn)));
    LLVMValueRef dst = gepf(g, g->buf, mul(g, kk, nrp));
    if (s->sbn == 1) {
        for (int v = 0; v < nv; v++) {
            LLVMValueRef sp = gepf(g, src, ci(g, (int64_t)v * vl));
            LLVMValueRef x = v == nv - 1 && last < vl ? masked_load(g, sp, last) : vload(g, sp, 4);
            vstore(g, x, gepf(g, dst, ci(g, (int64_t)v * vl)));
        }
    } else {
        int64_t valid = (int64_t)(nv - 1) * vl + last;
        for (int64_t c = 0; c < nrp; c++) {
            LLVMValueRef x = c < valid ? LLVMBuildLoad2(g->b, g->f32, gepf(g, src, ci(g, c * s->sbn)), "")
                                       : LLVMConstReal(g->f32, 0.0);
            irb_store(&g->ir, x, gepf(g, dst, ci(g, c)), 4);
        }
    }
    loop_end(g, &l, IRB_NO_UNROLL);
}

/* All row tiles of the block [mb, me) for one panel and K chunk. */
static void
panel(SG *g, LLVMValueRef mb, int64_t pidx_c, LLVMValueRef pidx, int nv, int last, LLVMValueRef k0,
      LLVMValueRef kl, LLVMValueRef first, LLVMValueRef lastc)
{
    const SPlan *p = g->p;
    const CgSgemmSpec *s = g->s;
    int64_t nrp = (int64_t)nv * p->vl;
    LLVMValueRef n0 = pidx ? mul(g, pidx, p->nr) : ci(g, pidx_c * p->nr);
    LLVMValueRef bp;
    if (s->b) {
        /* panel base: full panels of K*nr floats, the tail panel after them */
        LLVMValueRef base = pidx ? mul(g, pidx, s->k * p->nr) : ci(g, pidx_c * s->k * p->nr);
        bp = gepf(g, g->gb, add(g, base, mul(g, k0, nrp)));
    } else {
        pack_chunk(g, n0, nv, last, k0, kl);
        bp = g->buf;
    }
    /* a constant B: the block's first row tile (always inside the block) also prefetches the
     * next panel; the others read this panel's chunk from L1/L2 */
    if (s->b) {
        tile(g, mb, bp, nrp, nv, last, n0, k0, kl, first, lastc, true);
        mb = add(g, mb, ci(g, p->mr));
    }
    IrbLoop lt;
    LLVMValueRef r0 = loop_begin(g, &lt, mb, g->me, p->mr, "rt");
    tile(g, r0, bp, nrp, nv, last, n0, k0, kl, first, lastc, false);
    loop_end(g, &lt, IRB_NO_VECTORIZE | IRB_NO_UNROLL);
}

LLVMValueRef
cg_sgemm_emit(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgSgemmSpec *s,
              const char *name, char *err, size_t errlen)
{
    SPlan p;
    if (!splan(&p, t, isa, s, err, errlen))
        return NULL;
    SG g0, *g = &g0;
    memset(g, 0, sizeof *g);
    int nacc = p.mr * p.nv;
    LLVMValueRef *slots = calloc(2 * (size_t)nacc + 3 * (size_t)p.mr, sizeof *slots);
    if (!slots) {
        snprintf(err, errlen, "f32 GEMM: out of memory");
        return NULL;
    }
    g->acc = slots;
    g->accv = slots + nacc;
    g->rowp = slots + 2 * nacc;
    g->crow = g->rowp + p.mr;
    g->valid = g->crow + p.mr;
    irb_init(&g->ir, mod, NULL);
    g->s = s;
    g->p = &p;
    g->vty = LLVMVectorType(g->f32, (unsigned)p.vl);
    LLVMTypeRef params[5] = {g->ptr, g->ptr, g->i64, g->i64, g->ptr};
    g->fn = LLVMAddFunction(mod, name, LLVMFunctionType(g->vd, params, 5, 0));
    cg_function_set_target(g->fn, t, p.desc->vector_bits);
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->c, nounwind, 0));
    g->A = LLVMGetParam(g->fn, 0);
    g->C = LLVMGetParam(g->fn, 1);
    g->mb = LLVMGetParam(g->fn, 2);
    g->me = LLVMGetParam(g->fn, 3);
    g->B = LLVMGetParam(g->fn, 4);
    g->b = LLVMCreateBuilderInContext(g->c);
    LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->c, g->fn, "entry"));
    LLVMTypeRef ov = g->vty;
    g->fma = LLVMGetIntrinsicDeclaration(mod, LLVMLookupIntrinsicID("llvm.fma", 8), &ov, 1);
    g->fma_ty = LLVMIntrinsicGetType(g->c, LLVMLookupIntrinsicID("llvm.fma", 8), &ov, 1);

    /* constants: B packed into panels (k-major within a panel, zero padded), padded bias */
    int64_t npad = p.npf * p.nr + (int64_t)p.nv_tail * p.vl;
    char gname[300];
    if (s->b) {
        size_t nf = (size_t)(npad * s->k);
        float *pk = calloc(nf ? nf : 1, sizeof *pk);
        if (!pk) {
            snprintf(err, errlen, "f32 GEMM: out of memory");
            LLVMDisposeBuilder(g->b);
            LLVMDeleteFunction(g->fn);
            free(slots);
            return NULL;
        }
        for (int64_t n = 0; n < s->n; n++) {
            int64_t pi = n / p.nr, c = n % p.nr;
            int64_t nrp = pi < p.npf ? p.nr : (int64_t)p.nv_tail * p.vl;
            float *panel_base = pk + pi * s->k * p.nr;
            for (int64_t k = 0; k < s->k; k++)
                panel_base[k * nrp + c] = s->b[k * s->sbk + n * s->sbn];
        }
        snprintf(gname, sizeof gname, "%s.b", name);
        g->gb = irb_const_global(g->c, mod, gname, pk, nf * sizeof *pk);
        free(pk);
    }
    if (s->bias) {
        float *bz = calloc((size_t)npad, sizeof *bz);
        memcpy(bz, s->bias, (size_t)s->n * sizeof *bz);
        snprintf(gname, sizeof gname, "%s.bias", name);
        g->gbias = irb_const_global(g->c, mod, gname, bz, (size_t)npad * sizeof *bz);
        free(bz);
    }
    if (!s->b) {
        LLVMValueRef buf = LLVMBuildAlloca(g->b, LLVMArrayType2(g->f32, (uint64_t)(p.kc * p.nr)), "bbuf");
        LLVMSetAlignment(buf, 64);
        g->buf = buf;
    }
    for (int i = 0; i < p.mr * p.nv; i++)
        g->acc[i] = LLVMBuildAlloca(g->b, g->vty, "acc");

    IrbLoop lb, lc, lp;
    LLVMValueRef mb = loop_begin(g, &lb, g->mb, g->me, p.mc, "mb");
    LLVMValueRef me_all = g->me;
    g->me = smin(g, add(g, mb, ci(g, p.mc)), me_all);
    LLVMValueRef kc = NULL, k0 = ci(g, 0), kl = ci(g, p.kc), first = NULL, lastc = NULL;
    if (p.nkc > 1) {
        kc = loop_begin(g, &lc, ci(g, 0), ci(g, p.nkc), 1, "kc");
        k0 = mul(g, kc, p.kc);
        kl = smin(g, ci(g, p.kc), LLVMBuildNSWSub(g->b, ci(g, s->k), k0, ""));
        first = LLVMBuildICmp(g->b, LLVMIntEQ, kc, ci(g, 0), "");
        lastc = LLVMBuildICmp(g->b, LLVMIntEQ, kc, ci(g, p.nkc - 1), "");
    }
    if (p.npf > 1) {
        LLVMValueRef pi = loop_begin(g, &lp, ci(g, 0), ci(g, p.npf), 1, "pn");
        panel(g, mb, 0, pi, p.nv, p.vl, k0, kl, first, lastc);
        loop_end(g, &lp, IRB_NO_VECTORIZE | IRB_NO_UNROLL);
    } else if (p.npf == 1) {
        panel(g, mb, 0, NULL, p.nv, p.vl, k0, kl, first, lastc);
    }
    if (p.nv_tail)
        panel(g, mb, p.npf, NULL, p.nv_tail, p.tail_lanes, k0, kl, first, lastc);
    if (p.nkc > 1)
        loop_end(g, &lc, IRB_NO_VECTORIZE | IRB_NO_UNROLL);
    g->me = me_all;
    loop_end(g, &lb, IRB_NO_VECTORIZE | IRB_NO_UNROLL);
    LLVMBuildRetVoid(g->b);
    LLVMDisposeBuilder(g->b);
    free(slots);
    return g->fn;
}
