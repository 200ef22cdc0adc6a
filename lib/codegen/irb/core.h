/* core.h: the IR-building sequences every emitter shares, on plain LLVM handles (irb/core.c).
 *
 * One IR-building state, Irb (below), is embedded by every builder of lib/codegen: Kb (irb.h:
 * node kernels), Gen (gemm/gemm_ir.h: the GEMM generator, which also builds standalone without
 * the graph), Pk (gemm/pack_rt.c: run-time packing of B) and SG (gemm/sgemm.c: the f32 GEMM).
 * Their small helpers are thin views over these functions, so a loop, a splat, a constant
 * global, an intrinsic call, an aligned load or store or a fixed-point rescale is built by
 * exactly one piece of code. No llvm-c include needed (handles are declared with llvm-c's own
 * spelling). */
#ifndef QDQC_CODEGEN_IRB_CORE_H
#define QDQC_CODEGEN_IRB_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numerics/elementwise.h"

/* The GEMM epilogues of the two requantize modes (CgRqMode.gemm_epi), numbered as
 * gemm/gemm.h's CgGemmEpilogue, which takes its values from here. */
enum { IRB_EPI_REQUANT_FLOAT = 1, IRB_EPI_REQUANT_FIXED = 2 };

typedef struct LLVMOpaqueContext *LLVMContextRef;
typedef struct LLVMOpaqueModule *LLVMModuleRef;
typedef struct LLVMOpaqueValue *LLVMValueRef;
typedef struct LLVMOpaqueBuilder *LLVMBuilderRef;
typedef struct LLVMOpaqueType *LLVMTypeRef;
typedef struct LLVMOpaqueBasicBlock *LLVMBasicBlockRef;

/* The state every builder shares: the module, the builder, the function being emitted and the
 * common types (irb_init). A builder embeds it with IRB_EMBED, an anonymous union that names
 * the members both directly (k->b, g->i32) and as one Irb (&k->ir), which every irb_* function
 * below that takes an Irb accepts: the same layout, by the same member list. */
#define IRB_FIELDS                                                                              \
    LLVMContextRef c;                                                                           \
    LLVMModuleRef mod;                                                                          \
    LLVMBuilderRef b;                                                                           \
    LLVMValueRef fn; /* the function being emitted */                                           \
    LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, ptr, vd

typedef struct Irb {
    IRB_FIELDS;
} Irb;

#define IRB_EMBED                                                                               \
    union {                                                                                     \
        Irb ir;                                                                                 \
        struct {                                                                                \
            IRB_FIELDS;                                                                         \
        };                                                                                      \
    }

/* ir for module mod and builder b (NULL: none yet): its context, no function, the types. */
void
irb_init(Irb *ir, LLVMModuleRef mod, LLVMBuilderRef b);

/* Integer constants (sign-extended) and an i8 in-bounds GEP base + off. */
LLVMValueRef
irb_i64(const Irb *ir, int64_t v);
LLVMValueRef
irb_i32(const Irb *ir, int64_t v);
LLVMValueRef
irb_gep8(const Irb *ir, LLVMValueRef base, LLVMValueRef off);

/* A load of type t from ptr and a store of v to ptr, with the given alignment. */
LLVMValueRef
irb_load(const Irb *ir, LLVMTypeRef t, LLVMValueRef ptr, unsigned align);
void
irb_store(const Irb *ir, LLVMValueRef v, LLVMValueRef ptr, unsigned align);

/* llvm.fma(a, b, c) on a's type (scalar or vector). */
LLVMValueRef
irb_fma(const Irb *ir, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c);

/* A basic block appended to the function being emitted. */
LLVMBasicBlockRef
irb_block(const Irb *ir, const char *name);

/* do { body } while (++iv < n): iv an i64 phi from 0, for a trip count known to be at least
 * 1 (no test before the first pass). irb_do_begin leaves the builder in the body (blocks
 * `name` and `name` for the body and the exit, the phi `name`); irb_do_end closes it with the
 * count n (an i64) and leaves the builder in the exit block. */
typedef struct IrbDoLoop {
    LLVMBasicBlockRef head, exit;
    LLVMValueRef iv;
} IrbDoLoop;
LLVMValueRef
irb_do_begin(const Irb *ir, IrbDoLoop *l, const char *name);
void
irb_do_end(const Irb *ir, IrbDoLoop *l, LLVMValueRef n);

/* for (iv = start; iv < end; iv += step), iv an i64 phi. */
typedef struct IrbLoop {
    LLVMBasicBlockRef hdr, exit;
    LLVMValueRef iv, step;
} IrbLoop;

/* Opens l in function fn at b's position: blocks named hdr, body, exit (appended in that
 * order), the phi named iv; leaves b in the body and returns iv. */
LLVMValueRef
irb_loop_begin(LLVMBuilderRef b, LLVMContextRef c, LLVMValueRef fn, IrbLoop *l,
               LLVMValueRef start, LLVMValueRef end, LLVMValueRef step, const char *hdr,
               const char *body, const char *exit, const char *iv);

/* The latch at b's position: iv + step (nsw), the branch back (returned, for loop metadata);
 * b stays in the latch block. */
/* Loop hints on the latch branch br (!llvm.loop !{self, hints...}): IRB_NO_VECTORIZE
 * (llvm.loop.vectorize.enable false: a body of explicit vectors, or one the vectoriser must
 * leave alone), IRB_NO_UNROLL (llvm.loop.unroll.disable: a body that is unrolled enough;
 * LLVM's unroller would only multiply the code and the compile time). */
enum { IRB_NO_VECTORIZE = 1, IRB_NO_UNROLL = 2 };
void
irb_loop_hint(LLVMContextRef c, LLVMValueRef br, unsigned hints);
LLVMValueRef
irb_loop_latch(LLVMBuilderRef b, IrbLoop *l);

/* s (a scalar) in all n lanes: insertelement into poison, shufflevector with a zero mask. */
LLVMValueRef
irb_splat(LLVMBuilderRef b, LLVMContextRef c, LLVMValueRef s, unsigned n);

/* Call intrinsic `name`, overloaded on ov[0..nov); its type comes from LLVM itself
 * (LLVMIntrinsicGetType), never hand-written: LLVM 22 changed several signatures. */
LLVMValueRef
irb_intr(LLVMBuilderRef b, LLVMContextRef c, LLVMModuleRef mod, const char *name, LLVMTypeRef *ov,
         size_t nov, LLVMValueRef *args, unsigned nargs);

/* llvm.masked.load of a vt vector at ptr (lanes where mask is false read pass) and
 * llvm.masked.store of v at ptr, both with the element alignment `align` (in LLVM 22 an align
 * attribute of the pointer argument, no longer an i32 operand). */
LLVMValueRef
irb_masked_load(LLVMBuilderRef b, LLVMContextRef c, LLVMModuleRef mod, LLVMTypeRef vt,
                LLVMValueRef ptr, LLVMValueRef mask, LLVMValueRef pass, unsigned align);
void
irb_masked_store(LLVMBuilderRef b, LLVMContextRef c, LLVMModuleRef mod, LLVMValueRef v,
                 LLVMValueRef ptr, LLVMValueRef mask, unsigned align);

/* A private, unnamed_addr constant global `name` holding n raw bytes, aligned to 64. Multi-byte
 * constants are copied in host byte order, which is the target's: x86-64 and AArch64 (as
 * configured) are little-endian. */
LLVMValueRef
irb_const_global(LLVMContextRef c, LLVMModuleRef mod, const char *name, const void *data,
                 size_t n);

/* ---- fixed-mode integer arithmetic (lib/numerics), shared by the Kb emitters and the GEMM
 * epilogue; v is an integer or a vector of integers, i64 lanes for the rescales ---- */

/* c in v's type (every lane of a vector). */
LLVMValueRef
cg_const_like(LLVMValueRef v, int64_t c);

/* qn_rescale(v, (mult, shift)) = floor((floor(v * mult / 2^(shift-1)) + 1) / 2) with
 * arithmetic shifts, exact for |v| <= 2^32 - 1; mult and shift of v's type. */
LLVMValueRef
cg_build_rescale(LLVMBuilderRef b, LLVMValueRef v, LLVMValueRef mult, LLVMValueRef shift);

/* The v of qn_requant_fixed_wide (the int64 accumulator of 16-bit activations),
 * floor((acc * mult + 2^(shift-1)) / 2^shift), step for step: shift >= 31:
 * h = acc >> 31, l = acc & (2^31 - 1), v = (h * mult + ((l * mult + 2^(shift-1)) >> 31)) >>
 * (shift - 31); shift <= 30: acc clamped to +-(2^32 - 1), v = (acc * mult + 2^(shift-1)) >>
 * shift. Both are computed and shift >= 31 selects, lane by lane. acc, mult, shift: i64 or
 * vectors of i64. */
LLVMValueRef
cg_build_rescale_wide(LLVMBuilderRef b, LLVMValueRef acc, LLVMValueRef mult, LLVMValueRef shift);

/* qn_saturate(v + zy, lo, hi) for |v| <= 2^62. */
LLVMValueRef
cg_build_add_sat(LLVMBuilderRef b, LLVMValueRef v, int32_t zy, int32_t lo, int32_t hi);

/* qn_qadd_fixed (sub: qn_qsub_fixed) before + zy and saturation, from da = a - za and
 * db = b - zb: qn_rescale(qn_rescale(da, f->a) +- qn_rescale(db, f->b), f->y). */
LLVMValueRef
cg_build_addsub_fixed(LLVMBuilderRef b, LLVMValueRef da, LLVMValueRef db, const QnAddFixed *f,
                      bool sub);

#endif
