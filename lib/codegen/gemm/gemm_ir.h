/* gemm_ir.h: the IR-building state and small helpers shared by the GEMM emitter's files
 * (emit.c: microkernels, epilogue, loop structure; pack.c: A packing and row
 * sums). Internal: only those files include it (it needs the LLVM include path). */
#ifndef QDQC_CODEGEN_KERN_GEMM_IR_H
#define QDQC_CODEGEN_KERN_GEMM_IR_H

#include <llvm-c/Core.h>

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "codegen/gemm/gemm_impl.h"
#include "codegen/irb/core.h"

typedef struct Gen {
    IRB_EMBED; /* c, mod, b, fn, the types (irb/core.h) */
    const CgGemmSpec *s;
    const GemmPlan *p;
    LLVMTypeRef accty, outty;
    int esize;
    LLVMValueRef arg_a, arg_c, arg_mb, arg_me, arg_r;
    LLVMValueRef g_b, g_cb, g_zb, g_mult, g_fxm, g_fxr, g_fxs, g_scale, g_fbias, g_csum;
    /* a shared body: the instance's output zero point and clamp (g_epi: i64 zo, qmin, qmax, then
     * f32 qmin - zo, qmax - zo), loaded in the entry block into e_*; NULL: immediates of the spec */
    LLVMValueRef g_epi, e_zo, e_qmin, e_qmax, e_lo, e_hi;
    LLVMValueRef aq_za, aq_sa, aq_rows; /* run-time quantization of A (spec act_*), or NULL */
    /* acc: the tile's accumulator slots (GemmPlan.acc_slots, p->nacc of them) */
    LLVMValueRef *acc, apack, rs, sumslot, scratch, tbuf; /* tbuf: a tile's row vectors */
    LLVMValueRef m0, mcn; /* current cache block: first row, row count */
    LLVMValueRef kc0, kend, kfirst, klast; /* current K chunk (nkc > 1 only) */
    /* 16-bit activations, wide accumulation (gemm_impl.h): int64 accumulator slots */
    LLVMTypeRef acc64ty;
    LLVMValueRef *wacc; /* p->nacc slots */
} Gen;

typedef struct Panel {
    LLVMValueRef bbase; /* i8* to the panel's packed B */
    LLVMValueRef n0;    /* first channel (i64) */
    int nv;             /* vectors in this panel */
    int64_t nrp;        /* channels in this panel (nv * vl) */
    int64_t last_lanes; /* valid lanes of the last vector */
} Panel;

typedef IrbLoop Loop;

/* ---- small builders ---- */

static inline LLVMValueRef
ci64(Gen *g, int64_t v)
{
    return irb_i64(&g->ir, v);
}

static inline LLVMValueRef
ci32(Gen *g, int64_t v)
{
    return irb_i32(&g->ir, v);
}

static inline LLVMValueRef
gep8(Gen *g, LLVMValueRef base, LLVMValueRef off)
{
    return irb_gep8(&g->ir, base, off);
}

static inline LLVMValueRef
load(Gen *g, LLVMTypeRef ty, LLVMValueRef ptr, unsigned align)
{
    return irb_load(&g->ir, ty, ptr, align);
}

static inline void
store(Gen *g, LLVMValueRef v, LLVMValueRef ptr, unsigned align)
{
    irb_store(&g->ir, v, ptr, align);
}

static inline LLVMValueRef
mul(Gen *g, LLVMValueRef a, int64_t k)
{
    return LLVMBuildNSWMul(g->b, a, ci64(g, k), "");
}

static inline LLVMValueRef
add(Gen *g, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildNSWAdd(g->b, a, b, "");
}

static inline LLVMValueRef
splat(Gen *g, LLVMValueRef scalar, unsigned n)
{
    return irb_splat(g->b, g->c, scalar, n);
}

/* Call intrinsic `name`, overloaded on ov[0..nov) (irb_intr). */
static inline LLVMValueRef
intr(Gen *g, const char *name, LLVMTypeRef *ov, size_t nov, LLVMValueRef *args, unsigned nargs)
{
    return irb_intr(g->b, g->c, g->mod, name, ov, nov, args, nargs);
}

static inline LLVMValueRef
intr1(Gen *g, const char *name, LLVMValueRef a)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    return intr(g, name, &t, 1, &a, 1);
}

static inline LLVMValueRef
intr2(Gen *g, const char *name, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[2] = {a, b};
    return intr(g, name, &t, 1, args, 2);
}

static inline LLVMBasicBlockRef
block(Gen *g, const char *name)
{
    return irb_block(&g->ir, name);
}

/* for (iv = start; iv < end; iv += step): builder left in the body. */
static inline LLVMValueRef
loop_begin(Gen *g, Loop *l, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step,
           const char *name)
{
    return irb_loop_begin(g->b, g->c, g->fn, l, start, end, step, name, name, name, name);
}

static inline void
loop_end(Gen *g, Loop *l)
{
    /* the loops' bodies are already unrolled where it pays (microkernel steps, kunroll): LLVM's
     * unroller only multiplied the code (compile time, docs/performance.md) */
    irb_loop_hint(g->c, irb_loop_latch(g->b, l), IRB_NO_UNROLL);
    LLVMPositionBuilderAtEnd(g->b, l->exit);
}

/* Private constant global `fname.suffix` holding raw bytes (irb_const_global). */
static inline LLVMValueRef
const_bytes(Gen *g, const char *fname, const char *suffix, const void *data, int64_t n)
{
    char name[256];
    /* a longer name is cut (LLVM makes a repeated name unique) */
    if (snprintf(name, sizeof name, "%s.%s", fname, suffix) >= (int)sizeof name)
        name[sizeof name - 1] = 0;
    return irb_const_global(g->c, g->mod, name, data, (size_t)n);
}

static inline LLVMValueRef
const_vec(Gen *g, LLVMValueRef gv, LLVMTypeRef elt, int esz, LLVMValueRef n)
{
    LLVMValueRef ptr = gep8(g, gv, mul(g, n, esz));
    return load(g, LLVMVectorType(elt, (unsigned)g->p->vl), ptr, (unsigned)esz);
}

static inline LLVMValueRef
vsplat_i(Gen *g, LLVMTypeRef elt, int64_t v)
{
    return splat(g, LLVMConstInt(elt, (unsigned long long)v, 1), (unsigned)g->p->vl);
}

/* The broadcast dot-product step of the driver (emit.c), for ISAs whose instruction takes kg
 * bytes (or kg int16) of A per lane as one i32: loads the group's B vectors (with the software
 * prefetch of the plan), broadcasts each row's group of A, and per accumulator slot stores
 * dot(g, acc, a, b, opty) (opty: the vector type of a and b). */
typedef LLVMValueRef (*GemmDotFn)(Gen *g, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b,
                                  LLVMTypeRef opty);
void
gemm_step_bcast(Gen *g, const Panel *pn, int rows, LLVMValueRef *rowp, LLVMValueRef gi,
                GemmDotFn dot);

/* pack.c */
void
gemm_emit_rowsums(Gen *g);

void
gemm_emit_pack_a(Gen *g);

#endif
