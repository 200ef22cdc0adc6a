/* pack.c: the run-time A side of the GEMM kernels: per cache block, the row sums
 * R[m] = sum_k A[m, k] (only when some weight zero point is non-zero) and the packing of A rows
 * into the stack buffer in the microkernel's layout (xor 0x80 for the sign trick, int16
 * widening for AVX2, row-pair interleaving for smmla; see gemm_impl.h). Reads exactly the
 * K valid bytes of each row and writes the zero padding explicitly. */
#include "codegen/gemm/gemm_ir.h"

/* R[i] = sum_k A[m0 + i, k] for the block's rows (original values, sign per a_signed); int64
 * when the accumulator is (p->wide), else int32 modulo 2^32. */
void
gemm_emit_rowsums(Gen *g)
{
    const GemmPlan *p = g->p;
    LLVMTypeRef st = p->wide ? g->i64 : g->i32, et = p->a16 ? g->i16 : g->i8;
    int ss = p->wide ? 8 : 4, es = p->a_es;
    Loop li, lk;
    LLVMValueRef i = loop_begin(g, &li, ci64(g, 0), g->mcn, ci64(g, 1), "rs");
    LLVMValueRef row = gep8(g, g->arg_a, mul(g, add(g, g->m0, i), g->s->lda * es));
    store(g, LLVMConstInt(st, 0, 0), g->sumslot, (unsigned)ss);
    LLVMValueRef k = loop_begin(g, &lk, ci64(g, 0), ci64(g, g->s->k), ci64(g, 1), "rsk");
    LLVMValueRef a = load(g, et, gep8(g, row, es == 1 ? k : mul(g, k, es)), (unsigned)es);
    a = g->s->a_signed ? LLVMBuildSExt(g->b, a, st, "") : LLVMBuildZExt(g->b, a, st, "");
    store(g, LLVMBuildAdd(g->b, load(g, st, g->sumslot, (unsigned)ss), a, ""), g->sumslot, (unsigned)ss);
    loop_end(g, &lk);
    store(g, load(g, st, g->sumslot, (unsigned)ss), gep8(g, g->rs, mul(g, i, ss)), (unsigned)ss);
    loop_end(g, &li);
}

/* 16-bit A: rows of int16 (uint16 with its sign bit flipped when a_xor is set), zero padded to
 * kp. */
static void
pack_a16(Gen *g)
{
    const GemmPlan *p = g->p;
    const CgGemmSpec *s = g->s;
    Loop li, lk;
    LLVMValueRef i = loop_begin(g, &li, ci64(g, 0), g->mcn, ci64(g, 1), "pa");
    LLVMValueRef src = gep8(g, g->arg_a, mul(g, add(g, g->m0, i), s->lda * 2));
    LLVMValueRef dst = gep8(g, g->apack, mul(g, i, p->a_row_bytes));
    LLVMValueRef k = loop_begin(g, &lk, ci64(g, 0), ci64(g, s->k), ci64(g, 1), "pak");
    LLVMValueRef a = load(g, g->i16, gep8(g, src, mul(g, k, 2)), 2);
    if (p->a_xor)
        a = LLVMBuildXor(g->b, a, LLVMConstInt(g->i16, 0x8000, 0), "");
    store(g, a, gep8(g, dst, mul(g, k, 2)), 2);
    loop_end(g, &lk);
    for (int64_t kk = s->k; kk < p->kp; kk++)
        store(g, LLVMConstInt(g->i16, 0, 0), gep8(g, dst, ci64(g, 2 * kk)), 2);
    loop_end(g, &li);
}

/* Pack the block's rows of A into the stack buffer (layouts: gemm_impl.h). */
void
gemm_emit_pack_a(Gen *g)
{
    const GemmPlan *p = g->p;
    const CgGemmSpec *s = g->s;
    LLVMValueRef x8 = LLVMConstInt(g->i8, p->a_xor, 0);
    if (p->a16) {
        assert(p->apack == APACK_I16);
        pack_a16(g);
        return;
    }
    if (p->apack == APACK_BYTES || p->apack == APACK_I16) {
        Loop li, lk;
        LLVMValueRef i = loop_begin(g, &li, ci64(g, 0), g->mcn, ci64(g, 1), "pa");
        LLVMValueRef src = gep8(g, g->arg_a, mul(g, add(g, g->m0, i), s->lda));
        LLVMValueRef dst = gep8(g, g->apack, mul(g, i, p->a_row_bytes));
        LLVMValueRef k = loop_begin(g, &lk, ci64(g, 0), ci64(g, s->k), ci64(g, 1), "pak");
        LLVMValueRef a = load(g, g->i8, gep8(g, src, k), 1);
        if (p->apack == APACK_BYTES) {
            if (p->a_xor)
                a = LLVMBuildXor(g->b, a, x8, "");
            store(g, a, gep8(g, dst, k), 1);
        } else {
            a = s->a_signed ? LLVMBuildSExt(g->b, a, g->i16, "") : LLVMBuildZExt(g->b, a, g->i16, "");
            store(g, a, gep8(g, dst, mul(g, k, 2)), 2);
        }
        loop_end(g, &lk);
        for (int64_t kk = s->k; kk < p->kp; kk++) { /* zero padding up to the group size */
            if (p->apack == APACK_BYTES)
                store(g, LLVMConstInt(g->i8, 0, 0), gep8(g, dst, ci64(g, kk)), 1);
            else
                store(g, LLVMConstInt(g->i16, 0, 0), gep8(g, dst, ci64(g, 2 * kk)), 2);
        }
        loop_end(g, &li);
        return;
    }
    /* APACK_PAIRS: groups of 8 bytes, row 2q then row 2q+1; a missing odd row is zero. */
    assert(p->apack == APACK_PAIRS);
    int64_t full = s->k / 8;
    LLVMValueRef x64 = LLVMConstInt(g->i64, p->a_xor ? 0x8080808080808080ull : 0, 0);
    Loop lq, lg;
    LLVMValueRef npairs = LLVMBuildAShr(g->b, add(g, g->mcn, ci64(g, 1)), ci64(g, 1), "");
    LLVMValueRef q = loop_begin(g, &lq, ci64(g, 0), npairs, ci64(g, 1), "pp");
    LLVMValueRef pdst = gep8(g, g->apack, mul(g, q, p->a_row_bytes));
    for (int h = 0; h < 2; h++) {
        LLVMValueRef row = add(g, mul(g, q, 2), ci64(g, h));
        LLVMValueRef dst = gep8(g, pdst, ci64(g, 8 * h));
        LLVMBasicBlockRef have = block(g, "pp_row"), none = block(g, "pp_zero"),
                          done = block(g, "pp_done");
        LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, row, g->mcn, ""), have, none);
        LLVMPositionBuilderAtEnd(g->b, have);
        LLVMValueRef src = gep8(g, g->arg_a, mul(g, add(g, g->m0, row), s->lda));
        if (full > 0) {
            LLVMValueRef gi = loop_begin(g, &lg, ci64(g, 0), ci64(g, full), ci64(g, 1), "ppg");
            LLVMValueRef w = load(g, g->i64, gep8(g, src, mul(g, gi, 8)), 1);
            store(g, LLVMBuildXor(g->b, w, x64, ""), gep8(g, dst, mul(g, gi, 16)), 8);
            loop_end(g, &lg);
        }
        for (int64_t kk = full * 8; kk < p->kp; kk++) { /* tail group: valid bytes, then 0 */
            LLVMValueRef d = gep8(g, dst, ci64(g, (kk / 8) * 16 + kk % 8));
            if (kk < s->k)
                store(g, LLVMBuildXor(g->b, load(g, g->i8, gep8(g, src, ci64(g, kk)), 1), x8, ""),
                      d, 1);
            else
                store(g, LLVMConstInt(g->i8, 0, 0), d, 1);
        }
        LLVMBuildBr(g->b, done);
        LLVMPositionBuilderAtEnd(g->b, none);
        LLVMValueRef gz = loop_begin(g, &lg, ci64(g, 0), ci64(g, p->groups), ci64(g, 1), "ppz");
        store(g, ci64(g, 0), gep8(g, dst, mul(g, gz, 16)), 8);
        loop_end(g, &lg);
        LLVMBuildBr(g->b, done);
        LLVMPositionBuilderAtEnd(g->b, done);
    }
    loop_end(g, &lq);
}

