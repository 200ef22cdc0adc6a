/* step.c: the broadcast dot-product step shared by the microkernels whose instruction takes kg
 * bytes (or kg int16) of A per i32 lane (vpdpbusd, vpmaddwd, sdot/usdot): the ISA files pass
 * their instruction as a callback (gemm_ir.h). Apart from the driver (emit.c) so that the ISA
 * files depend on it and the driver on them (through the table), without a file loop. */
#include "codegen/gemm/gemm_ir.h"

/* The broadcast dot-product step (gemm_ir.h): kg bytes (or kg int16) of A per row as one i32. */
void
gemm_step_bcast(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi,
                GemmDotFn dot)
{
    const GemmPlan *p = g->p;
    const int vl = p->vl, nv = pn->nv;
    LLVMValueRef bgp = gep8(g, pn->bbase, mul(g, gi, pn->nrp * p->kg * p->belem));
    LLVMValueRef bv[16];
    unsigned vbytes = (unsigned)(vl * p->kg * p->belem);
    LLVMTypeRef opty = p->belem == 2 ? LLVMVectorType(g->i16, (unsigned)(vl * 2))
                                     : LLVMVectorType(g->i8, (unsigned)(vl * 4));
    for (int v = 0; v < nv; v++)
        bv[v] = load(g, opty, gep8(g, bgp, ci64(g, (int64_t)v * vbytes)), vbytes);
    if (p->b_prefetch > 0) {
        /* Software prefetch (into L2: locality 2) of the B lines b_prefetch groups ahead, the
         * same group of the next K chunk or panel (plan.c). A plain (not inbounds) GEP: near
         * the end it points past B, which a prefetch may do. */
        int64_t gbytes = pn->nrp * p->kg * p->belem;
        for (int64_t off = 0; off < gbytes; off += 64) {
            LLVMValueRef o = ci64(g, p->b_prefetch * gbytes + off);
            LLVMValueRef args[4] = {LLVMBuildGEP2(g->b, g->i8, bgp, &o, 1, ""), ci32(g, 0),
                                    ci32(g, 2), ci32(g, 1)};
            LLVMTypeRef ov = g->ptr;
            intr(g, "llvm.prefetch", &ov, 1, args, 4);
        }
    }
    for (int r = 0; r < rows; r++) {
        LLVMValueRef a32 = load(g, g->i32, gep8(g, rowp[r], mul(g, gi, 4)), 4);
        LLVMValueRef a = LLVMBuildBitCast(g->b, splat(g, a32, (unsigned)vl), opty, "");
        for (int v = 0; v < nv; v++) {
            LLVMValueRef slot = g->acc[r * nv + v];
            LLVMValueRef accv = load(g, g->accty, slot, 4);
            store(g, dot(g, accv, a, bv[v], opty), slot, 4);
        }
    }
}
