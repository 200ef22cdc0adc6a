/* pack_rt.c: the run-time B packer of pack_rt.h (layout: gemm_impl.h, folding: plan.c).
 *
 * Emitted structure of `void f(const void *B, void *P, int32_t *cb, const int32_t *bias)`:
 *   memset(P, 0)                           only when N or K leaves padding in the panels
 *   cb[n] = cb0[n] (+ bias[n])             cb0: plan.c's constant part (bias, K za zb')
 *   for each full panel (a loop), then the tail panel (its nvalid < nr real channels):
 *     for the k groups (full ones in a loop, the partial last one with its valid j only)
 *       for the panel's valid channels c:
 *         P[panel][g][c][j] = B[n][g kg + j] (^ 0x80 for u8 B; int16 on the AVX2 path)
 *         cb[n] += coef * sum_j of those     coef = -(off + za), skipped when 0
 * The channel loop is innermost when B is contiguous along n (a MatMul's [K, N] operand: stores
 * of kg interleaved rows, which LLVM vectorizes), the group loop when B is contiguous along k
 * (a transposed operand: kg contiguous bytes per (c, g)). All index arithmetic is on constants
 * of the plan; every stored element comes from B inside [0, N) x [0, K). */
#include "codegen/gemm/pack_rt.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <string.h>

#include "codegen/gemm/gemm_impl.h"
#include "codegen/target/module.h"

typedef struct Pk {
    IRB_EMBED; /* c, mod, b, fn, the types (irb/core.h) */
    const GemmPlan *p;
    const CgGemmSpec *s;
    const CgGemmRtB *rb;
    LLVMValueRef B, P, cb;
    int32_t coef; /* -(off + za): colsum' coefficient of cb */
} Pk;

typedef IrbDoLoop PkLoop;

static LLVMValueRef
k64(Pk *k, int64_t v)
{
    return irb_i64(&k->ir, v);
}

static LLVMValueRef
gep(Pk *k, LLVMValueRef base, LLVMValueRef off)
{
    return irb_gep8(&k->ir, base, off);
}

static LLVMValueRef
madd(Pk *k, LLVMValueRef a, int64_t m, LLVMValueRef c)
{
    LLVMValueRef v = LLVMBuildNSWMul(k->b, a, k64(k, m), "");
    return c ? LLVMBuildNSWAdd(k->b, v, c, "") : v;
}

/* do { body } while (++iv < n), for a constant n > 0 (irb_do_begin / irb_do_end) */
static LLVMValueRef
pk_loop(Pk *k, PkLoop *l, const char *name)
{
    return irb_do_begin(&k->ir, l, name);
}

static void
pk_loop_end(Pk *k, PkLoop *l, int64_t n)
{
    irb_do_end(&k->ir, l, k64(k, n));
}

/* The kg (or jn < kg, the last group) elements of channel n0 + c, group g, of the panel at
 * byte offset pb with nrp channels; plus the column-sum update. */
static void
pk_body(Pk *k, LLVMValueRef pb, int64_t nrp, LLVMValueRef n, LLVMValueRef c, LLVMValueRef g,
        int jn)
{
    const GemmPlan *p = k->p;
    LLVMValueRef src = gep(k, k->B, madd(k, n, k->rb->sn, madd(k, g, p->kg * k->rb->sk, NULL)));
    LLVMValueRef dst = gep(k, k->P, madd(k, madd(k, g, nrp, c), p->kg * p->belem, pb));
    LLVMValueRef sum = NULL;
    for (int j = 0; j < jn; j++) {
        LLVMValueRef v = irb_load(&k->ir, k->i8, j ? gep(k, src, k64(k, j * k->rb->sk)) : src, 1);
        if (!k->rb->b_signed)
            v = LLVMBuildXor(k->b, v, LLVMConstInt(k->i8, 0x80, 0), "");
        if (p->belem == 2)
            irb_store(&k->ir, LLVMBuildSExt(k->b, v, k->i16, ""), gep(k, dst, k64(k, 2 * j)), 2);
        else
            irb_store(&k->ir, v, j ? gep(k, dst, k64(k, j)) : dst, (unsigned)p->belem);
        if (k->coef) {
            LLVMValueRef w = LLVMBuildSExt(k->b, v, k->i32, "");
            sum = sum ? LLVMBuildAdd(k->b, sum, w, "") : w;
        }
    }
    if (sum) { /* cb[n] += coef * sum (int32, wrapping like plan.c's uint32 folding) */
        LLVMValueRef cp = gep(k, k->cb, madd(k, n, 4, NULL));
        LLVMValueRef old = irb_load(&k->ir, k->i32, cp, 4);
        LLVMValueRef upd = LLVMBuildMul(k->b, sum, LLVMConstInt(k->i32, (unsigned long long)k->coef, 1), "");
        irb_store(&k->ir, LLVMBuildAdd(k->b, old, upd, ""), cp, 4);
    }
}

/* One panel: first channel n0 (i64 value), nvalid real channels of nrp, at byte offset pb. */
static void
pk_panel(Pk *k, LLVMValueRef pb, LLVMValueRef n0, int64_t nrp, int64_t nvalid)
{
    const GemmPlan *p = k->p;
    const CgGemmSpec *s = k->s;
    int64_t gfull = s->k / p->kg;
    int krem = (int)(s->k % p->kg);
    bool k_inner = (k->rb->sk < 0 ? -k->rb->sk : k->rb->sk) < (k->rb->sn < 0 ? -k->rb->sn : k->rb->sn);
    PkLoop lc, lg;
    if (k_inner) { /* c outer, groups inner: kg contiguous bytes per step */
        LLVMValueRef c = pk_loop(k, &lc, "pc");
        LLVMValueRef n = LLVMBuildNSWAdd(k->b, n0, c, "");
        if (gfull > 0) {
            LLVMValueRef g = pk_loop(k, &lg, "pg");
            pk_body(k, pb, nrp, n, c, g, p->kg);
            pk_loop_end(k, &lg, gfull);
        }
        if (krem)
            pk_body(k, pb, nrp, n, c, k64(k, gfull), krem);
        pk_loop_end(k, &lc, nvalid);
        return;
    }
    if (gfull > 0) { /* groups outer, channels inner: contiguous along n */
        LLVMValueRef g = pk_loop(k, &lg, "pg");
        LLVMValueRef c = pk_loop(k, &lc, "pc");
        pk_body(k, pb, nrp, LLVMBuildNSWAdd(k->b, n0, c, ""), c, g, p->kg);
        pk_loop_end(k, &lc, nvalid);
        pk_loop_end(k, &lg, gfull);
    }
    if (krem) {
        LLVMValueRef c = pk_loop(k, &lc, "pc");
        pk_body(k, pb, nrp, LLVMBuildNSWAdd(k->b, n0, c, ""), c, k64(k, gfull), krem);
        pk_loop_end(k, &lc, nvalid);
    }
}

static int64_t
align64(int64_t v)
{
    return (v + 63) / 64 * 64;
}

bool
cg_gemm_rt_sizes(const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s, int64_t *bpack_bytes,
                 int64_t *cb_bytes, char *err, size_t errlen)
{
    GemmPlan p;
    if (!s->b_runtime) {
        snprintf(err, errlen, "gemm: the spec's B is not a run-time operand");
        return false;
    }
    if (!gemm_plan_init(&p, t, isa, s, err, errlen))
        return false;
    *bpack_bytes = align64(p.bpack_bytes);
    *cb_bytes = align64(p.npad * 4);
    gemm_plan_free(&p);
    return true;
}

LLVMValueRef
cg_gemm_rt_emit_pack(LLVMModuleRef mod, const CgTarget *t, CgGemmIsa isa, const CgGemmSpec *s,
                     const CgGemmRtB *rb, const char *name, char *err, size_t errlen)
{
    GemmPlan plan;
    if (!s->b_runtime) {
        snprintf(err, errlen, "gemm: the spec's B is not a run-time operand");
        return NULL;
    }
    if (!gemm_plan_init(&plan, t, isa, s, err, errlen))
        return NULL;
    if (LLVMGetNamedFunction(mod, name)) {
        snprintf(err, errlen, "gemm: function '%s' already exists", name);
        gemm_plan_free(&plan);
        return NULL;
    }
    Pk kk, *k = &kk;
    memset(k, 0, sizeof *k);
    irb_init(&k->ir, mod, NULL);
    k->p = &plan;
    k->s = s;
    k->rb = rb;
    int32_t off = 0;
    if (plan.a_xor)
        off = plan.xor_off;
    k->coef = (int32_t)(0u - ((uint32_t)off + (uint32_t)s->za));

    LLVMTypeRef pt[4] = {k->ptr, k->ptr, k->ptr, k->ptr};
    k->fn = LLVMAddFunction(mod, name, LLVMFunctionType(LLVMVoidTypeInContext(k->c), pt, 4, 0));
    cg_function_set_target(k->fn, t, 0);
    static const char *const attrs[] = {"nounwind", "noalias"};
    unsigned nw = LLVMGetEnumAttributeKindForName(attrs[0], strlen(attrs[0]));
    unsigned na = LLVMGetEnumAttributeKindForName(attrs[1], strlen(attrs[1]));
    LLVMAddAttributeAtIndex(k->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(k->c, nw, 0));
    for (unsigned i = 1; i <= 3; i++)
        LLVMAddAttributeAtIndex(k->fn, i, LLVMCreateEnumAttribute(k->c, na, 0));
    k->B = LLVMGetParam(k->fn, 0);
    k->P = LLVMGetParam(k->fn, 1);
    k->cb = LLVMGetParam(k->fn, 2);
    LLVMValueRef bias = LLVMGetParam(k->fn, 3);

    k->b = LLVMCreateBuilderInContext(k->c);
    LLVMPositionBuilderAtEnd(k->b, LLVMAppendBasicBlockInContext(k->c, k->fn, "entry"));

    /* cb = the constant part (+ bias) */
    char gname[256];
    snprintf(gname, sizeof gname, "%s.cb0", name);
    LLVMValueRef init = LLVMConstStringInContext2(k->c, (const char *)plan.cb, (size_t)plan.npad * 4, 1);
    LLVMValueRef gv = LLVMAddGlobal(mod, LLVMTypeOf(init), gname);
    LLVMSetInitializer(gv, init);
    LLVMSetGlobalConstant(gv, 1);
    LLVMSetLinkage(gv, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(gv, 64);
    LLVMBuildMemCpy(k->b, k->cb, 4, gv, 64, k64(k, plan.npad * 4));
    if (rb->rt_bias) {
        PkLoop ln;
        LLVMValueRef n = pk_loop(k, &ln, "bias");
        LLVMValueRef cp = gep(k, k->cb, madd(k, n, 4, NULL));
        LLVMValueRef a = irb_load(&k->ir, k->i32, cp, 4);
        LLVMValueRef bv = irb_load(&k->ir, k->i32, gep(k, bias, madd(k, n, 4, NULL)), 4);
        irb_store(&k->ir, LLVMBuildAdd(k->b, a, bv, ""), cp, 4);
        pk_loop_end(k, &ln, s->n);
    }
    if (s->n % plan.nr != 0 || s->k % plan.kg != 0)
        LLVMBuildMemSet(k->b, k->P, LLVMConstInt(k->i8, 0, 0), k64(k, plan.bpack_bytes), 64);

    int64_t pbytes = plan.nr * plan.kp * plan.belem;
    if (plan.npanels_full > 0) {
        PkLoop lp;
        LLVMValueRef pi = pk_loop(k, &lp, "pp");
        pk_panel(k, madd(k, pi, pbytes, NULL), madd(k, pi, plan.nr, NULL), plan.nr, plan.nr);
        pk_loop_end(k, &lp, plan.npanels_full);
    }
    if (plan.nr_tail) {
        int64_t first = plan.npanels_full * plan.nr;
        pk_panel(k, k64(k, plan.npanels_full * pbytes), k64(k, first), plan.nr_tail, s->n - first);
    }
    LLVMBuildRetVoid(k->b);
    LLVMDisposeBuilder(k->b);
    gemm_plan_free(&plan);
    return k->fn;
}
